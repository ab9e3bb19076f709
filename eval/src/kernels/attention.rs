//! Attention (opsets 23–25): scaled dot-product attention over heads, with 3-D or 4-D
//! inputs, grouped key/value heads, a key/value cache, boolean or additive masks, causal
//! (offset-aware) and sliding-window masking, padding by `nonpad_kv_seqlen`, soft capping
//! and the optional QK output. Computed in f64, with intermediate results rounded to the
//! input's precision where the spec's function body materialises them, so that float16
//! and bfloat16 results match onnx's to the element.

use crate::kernels::common::rounding;
use onnx_core::ir::DataType;

use super::{Ctx, Kernel, count, input, optional};
use crate::broadcast::permute;
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::kernels::common::numeric_like;
use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "Attention" => attention,
        _ => return None,
    };
    Some(k)
}

/// A tensor as [batch, heads, sequence, head size], from 4-D, or 3-D with `heads`.
fn heads(t: &Tensor, heads: Option<i64>) -> Result<(Vec<f64>, [usize; 4]), KernelError> {
    let v = t.to_f64s()?;
    match t.rank() {
        4 => Ok((v, [t.shape[0], t.shape[1], t.shape[2], t.shape[3]])),
        3 => {
            let h = usize::try_from(heads.ok_or(bad_attribute!("3-D inputs need q_num_heads and kv_num_heads"))?)
                .map_err(|_| bad_attribute!("negative head count"))?;
            let (b, s, hidden) = (t.shape[0], t.shape[1], t.shape[2]);
            if h == 0 || hidden % h != 0 {
                return Err(bad_input!("hidden size {hidden} does not divide into {h} heads"));
            }
            let d = hidden / h;
            // [b, s, h·d] is [b, s, h, d]: heads before the sequence.
            Ok((permute(&v, &[b, s, h, d], &[0, 2, 1, 3]), [b, h, s, d]))
        }
        r => Err(bad_input!("attention inputs of rank {r}")),
    }
}

/// `a` then `b` along the sequence axis (axis 2) of two [B, H, S, D] tensors.
fn concat_sequence(a: &[f64], ash: [usize; 4], b: &[f64], bsh: [usize; 4]) -> (Vec<f64>, [usize; 4]) {
    let [bn, h, sa, d] = ash;
    let sb = bsh[2];
    let mut out = Vec::with_capacity(a.len() + b.len());
    for bi in 0..bn {
        for hi in 0..h {
            out.extend_from_slice(&a[((bi * h + hi) * sa) * d..((bi * h + hi) * sa + sa) * d]);
            out.extend_from_slice(&b[((bi * h + hi) * sb) * d..((bi * h + hi) * sb + sb) * d]);
        }
    }
    (out, [bn, h, sa + sb, d])
}

fn attention(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (q_t, k_t, v_t) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    let dt = q_t.data_type();
    let round = rounding(dt);
    let three_d = q_t.rank() == 3;
    let (q, [batch, q_heads, q_len, head]) = heads(q_t, ctx.int("q_num_heads"))?;
    let (mut k, mut k_shape) = heads(k_t, ctx.int("kv_num_heads"))?;
    let (mut v, mut v_shape) = heads(v_t, ctx.int("kv_num_heads"))?;
    let (past_key, past_value) = (optional(inputs, 4)?, optional(inputs, 5)?);
    let past_len = past_key.map_or(0, |p| p.shape.get(2).copied().unwrap_or(0));
    if let (Some(pk), Some(pv)) = (past_key, past_value) {
        let (pkv, pks) = heads(pk, None)?;
        let (pvv, pvs) = heads(pv, None)?;
        let agrees = |p: [usize; 4], t: [usize; 4]| p[0] == t[0] && p[1] == t[1] && p[3] == t[3];
        if !agrees(pks, k_shape) || !agrees(pvs, v_shape) {
            return Err(bad_input!("the cache {pks:?}/{pvs:?} does not match keys {k_shape:?} and values {v_shape:?}"));
        }
        (k, k_shape) = concat_sequence(&pkv, pks, &k, k_shape);
        (v, v_shape) = concat_sequence(&pvv, pvs, &v, v_shape);
    }
    let [_, kv_heads, kv_len, _] = k_shape;
    let v_head = v_shape[3];
    if k_shape[0] != batch || v_shape[0] != batch || v_shape[1] != kv_heads || v_shape[2] != kv_len {
        return Err(bad_input!(
            "queries {:?}, keys {k_shape:?} and values {v_shape:?} do not agree",
            [batch, q_heads, q_len, head]
        ));
    }
    if kv_heads == 0 || q_heads % kv_heads != 0 || k_shape[3] != head {
        return Err(bad_input!("{q_heads} query heads of size {head} and {kv_heads} key heads of size {}", k_shape[3]));
    }
    let group = q_heads / kv_heads;
    let scale = match ctx.float("scale") {
        Some(s) => f64::from(s),
        None => 1.0 / (head as f64).sqrt(),
    };
    // Q and K are each scaled by √scale (as the spec says, against overflow), in their type.
    let root = round(scale.sqrt());
    let q: Vec<f64> = q.iter().map(|&x| round(x * root)).collect();
    let k_scaled: Vec<f64> = k.iter().map(|&x| round(x * root)).collect();
    let softcap = f64::from(ctx.float("softcap").unwrap_or(0.0));
    let causal = ctx.int("is_causal").unwrap_or(0) != 0;
    let (left, right) = (ctx.int("left_window_size").unwrap_or(-1), ctx.int("right_window_size").unwrap_or(-1));
    let nonpad = optional(inputs, 6)?.map(Tensor::to_i64s).transpose()?;
    // The valid keys per batch entry: at most every key.
    if let Some(n) = &nonpad {
        if n.len() != batch {
            return Err(bad_input!("nonpad_kv_seqlen holds {} values for a batch of {batch}", n.len()));
        }
        if let Some(bad) = n.iter().find(|&&v| !(0..=kv_len as i64).contains(&v)) {
            return Err(bad_input!("nonpad_kv_seqlen holds {bad}, outside 0 to {kv_len} keys"));
        }
    }
    let mode = ctx.int("qk_matmul_output_mode").unwrap_or(0);
    let softmax_round = match ctx.int("softmax_precision") {
        Some(code) => rounding(i32::try_from(code).ok().and_then(DataType::from_code).unwrap_or(dt)),
        None => round,
    };
    // The mask, right-aligned against [batch, q heads, q_len, kv_len], its last axis padded.
    let mask = optional(inputs, 3)?;
    // The mask broadcasts (right-aligned) to [batch, q heads, q_len, kv_len], its last axis
    // shorter (padding) or longer than the keys.
    if let Some(m) = mask {
        let full = [batch, q_heads, q_len, kv_len];
        if m.rank() > 4 {
            return Err(bad_input!("attn_mask of shape {:?} has more axes than {full:?}", m.shape));
        }
        let leading = m.rank().saturating_sub(1);
        let fits = m.shape[..leading].iter().zip(&full[4 - m.rank().max(1)..3]).all(|(&d, &want)| d == 1 || d == want);
        if !fits {
            return Err(bad_input!("attn_mask of shape {:?} does not broadcast to {full:?}", m.shape));
        }
    }
    let mask_values = mask
        .map(|m| -> Result<Vec<f64>, KernelError> {
            Ok(match &*m.data {
                Data::Bool(b) => b.iter().map(|&x| if x { 0.0 } else { f64::NEG_INFINITY }).collect(),
                _ => m.to_f64s()?,
            })
        })
        .transpose()?;
    let mask_at = |b: usize, h: usize, i: usize, j: usize| -> f64 {
        let (Some(m), Some(values)) = (mask, &mask_values) else { return 0.0 };
        let shape = &m.shape;
        let last = *shape.last().unwrap_or(&1);
        if j >= last && last != 1 {
            return f64::NEG_INFINITY;
        }
        let full = [b, h, i, j];
        let mut offset = 0;
        let mut stride = 1;
        for (axis, &size) in shape.iter().enumerate().rev() {
            let position = full[4 - shape.len() + axis];
            let c = if size == 1 { 0 } else { position };
            offset += c * stride;
            stride *= size;
        }
        values.get(offset).copied().unwrap_or(0.0)
    };
    // Where a query block starts among the keys (for causal and window masks).
    let offset = |b: usize| -> i64 {
        match (&nonpad, past_key) {
            (Some(n), None) => n.get(b).copied().unwrap_or(kv_len as i64) - q_len as i64,
            _ => past_len as i64,
        }
    };
    let bias = |b: usize, h: usize, i: usize, j: usize| -> f64 {
        let mut x = mask_at(b, h, i, j);
        let distance = i as i64 + offset(b) - j as i64;
        if causal && distance < 0 {
            x = f64::NEG_INFINITY;
        }
        if (left >= 0 && distance > left) || (right >= 0 && -distance > right) {
            x = f64::NEG_INFINITY;
        }
        if let Some(n) = &nonpad
            && j as i64 >= n.get(b).copied().unwrap_or(kv_len as i64)
        {
            x = f64::NEG_INFINITY;
        }
        x
    };
    // Outputs and query rows: empty queries may declare any number of heads and rows.
    let y_count = count(&[batch, q_heads, q_len, v_head])?;
    let qk_count = count(&[batch, q_heads, q_len, kv_len])?;
    let existing = q.len().max(k.len()).max(v.len());
    for n in [y_count, qk_count, count(&[batch, q_heads, q_len])?] {
        ctx.check_grown(n, existing)?;
    }
    let mut y = vec![0.0; y_count];
    let mut qk_out = vec![0.0; qk_count];
    // A row of scores, when there are rows (empty queries may declare any number of keys).
    let mut scores = vec![0.0; if qk_count == 0 { 0 } else { kv_len }];
    for b in 0..batch {
        for h in 0..q_heads {
            let kh = h / group;
            for i in 0..q_len {
                let qrow = &q[((b * q_heads + h) * q_len + i) * head..][..head];
                for (j, score) in scores.iter_mut().enumerate() {
                    let krow = &k_scaled[((b * kv_heads + kh) * kv_len + j) * head..][..head];
                    let mut s = round(qrow.iter().zip(krow).map(|(a, c)| a * c).sum::<f64>());
                    if softcap > 0.0 {
                        s = round(round(round(s / softcap).tanh()) * softcap);
                    }
                    let at = ((b * q_heads + h) * q_len + i) * kv_len + j;
                    if mode <= 1 {
                        qk_out[at] = s;
                    }
                    *score = softmax_round(s + bias(b, h, i, j));
                    if mode == 2 {
                        qk_out[at] = round(*score);
                    }
                }
                // A row with every key masked attends nothing: zeros.
                let all_masked = (0..kv_len).all(|j| bias(b, h, i, j) == f64::NEG_INFINITY);
                let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let base = if max == f64::NEG_INFINITY { 0.0 } else { max };
                let exps: Vec<f64> = scores.iter().map(|&s| softmax_round((softmax_round(s - base)).exp())).collect();
                // numpy sums a bfloat16 row one element at a time in bfloat16 (ml_dtypes has
                // no pairwise float32 sum as float16 has): the same rounding at every step.
                let sum = if dt == DataType::Bfloat16 {
                    exps.iter().fold(0.0, |acc, &e| softmax_round(acc + e))
                } else {
                    softmax_round(exps.iter().sum::<f64>())
                };
                let sum = if sum == 0.0 { 1.0 } else { sum };
                let probabilities: Vec<f64> =
                    exps.iter().map(|&e| if all_masked { 0.0 } else { round(softmax_round(e / sum)) }).collect();
                if mode == 3 {
                    qk_out[((b * q_heads + h) * q_len + i) * kv_len..][..kv_len].copy_from_slice(&probabilities);
                }
                let out = &mut y[((b * q_heads + h) * q_len + i) * v_head..][..v_head];
                for (j, &p) in probabilities.iter().enumerate() {
                    if p == 0.0 {
                        continue;
                    }
                    let vrow = &v[((b * kv_heads + kh) * kv_len + j) * v_head..][..v_head];
                    for (o, &x) in out.iter_mut().zip(vrow) {
                        *o += p * x;
                    }
                }
            }
        }
    }
    let (y, y_shape) = if three_d {
        // [b, heads, q, d] back to [b, q, heads·d].
        (permute(&y, &[batch, q_heads, q_len, v_head], &[0, 2, 1, 3]), vec![batch, q_len, q_heads * v_head])
    } else {
        (y, vec![batch, q_heads, q_len, v_head])
    };
    // The cache: the keys (before scaling) and values, with the past ones in front.
    let mut out = vec![Value::Tensor(numeric_like(dt, y_shape, y)?)];
    out.push(Value::Tensor(numeric_like(dt, k_shape.to_vec(), k)?));
    out.push(Value::Tensor(numeric_like(dt, v_shape.to_vec(), v)?));
    out.push(Value::Tensor(numeric_like(dt, vec![batch, q_heads, q_len, kv_len], qk_out)?));
    out.truncate(ctx.node.outputs.len().max(1));
    Ok(out)
}
