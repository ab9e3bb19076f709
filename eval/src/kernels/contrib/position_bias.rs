//! RelativePositionBias (onnxruntime's T5 fusion; onnxruntime has a CUDA kernel only): the
//! attention bias `[1, heads, query_length, key_length]` looked up in a table of
//! `[buckets, heads]` by the bucket of each key's distance from each query, as T5 buckets
//! it: exact buckets for short distances, logarithmic ones up to `max_distance`, the two
//! directions in halves of the table when `is_bidirectional`, only keys before the query
//! otherwise. The table is declared `[buckets, heads]` but its data is laid out head by
//! head (`[heads, buckets]`), as onnxruntime's operator documentation says and its
//! optimizer writes it: read the other way, the T5 corpus model differs by 0.7.

use super::super::{Ctx, Kernel, count, input};
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::kernels::common::numeric_like;
use crate::value::{Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    match op {
        "RelativePositionBias" => Some(relative_position_bias),
        _ => None,
    }
}

/// A length input: a one-element integer tensor holding a count.
fn length(t: &Tensor, what: &str) -> Result<usize, KernelError> {
    match t.to_i64s()?[..] {
        [n] => usize::try_from(n).map_err(|_| bad_input!("{what} is {n}, not a length")),
        _ => Err(bad_input!("{what} holds {} values, not one", t.len())),
    }
}

/// The bucket of key `key` seen from query `query` (T5's `_relative_position_bucket`): the
/// logarithmic part computed in float32 and truncated, as transformers computes it.
fn bucket(query: usize, key: usize, buckets: usize, bidirectional: bool, max_distance: usize) -> usize {
    let relative = key as i64 - query as i64;
    let (mut buckets, mut base) = (buckets, 0);
    let distance = if bidirectional {
        buckets /= 2;
        if relative > 0 {
            base = buckets;
        }
        relative.unsigned_abs() as usize
    } else {
        (-relative).max(0) as usize
    };
    let exact = buckets / 2;
    if distance < exact {
        return base + distance;
    }
    let ratio = (distance as f32 / exact as f32).ln() / (max_distance as f64 / exact as f64).ln() as f32;
    let large = exact + (ratio * (buckets - exact) as f32) as usize;
    base + large.min(buckets.saturating_sub(1))
}

fn relative_position_bias(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let table = input(inputs, 0)?;
    let (query_len, key_len) = (length(input(inputs, 1)?, "query_length")?, length(input(inputs, 2)?, "key_length")?);
    let [buckets, heads] = table.shape[..] else {
        return Err(bad_input!("the bias table of shape {:?} is not [buckets, heads]", table.shape));
    };
    let max_distance = ctx.int("max_distance").unwrap_or(0);
    let bidirectional = ctx.int("is_bidirectional").unwrap_or(0) != 0;
    let smallest = if bidirectional { 4 } else { 2 };
    if buckets < smallest {
        return Err(bad_input!("a bias table of {buckets} buckets: at least {smallest} are needed"));
    }
    let max_distance = usize::try_from(max_distance)
        .ok()
        .filter(|&m| m > 0)
        .ok_or_else(|| bad_attribute!("max_distance is {max_distance}, not a positive distance"))?;
    let shape = vec![1, heads, query_len, key_len];
    ctx.check_elements(count(&shape)?)?;
    let values = table.to_f64s()?;
    let buckets_of: Vec<usize> = (0..query_len * key_len)
        .map(|at| bucket(at / key_len.max(1), at % key_len.max(1), buckets, bidirectional, max_distance))
        .collect();
    let mut out = Vec::with_capacity(heads * query_len * key_len);
    for head in 0..heads {
        out.extend(buckets_of.iter().map(|&b| values[head * buckets + b]));
    }
    Ok(vec![Value::Tensor(numeric_like(table.data_type(), shape, out)?)])
}
