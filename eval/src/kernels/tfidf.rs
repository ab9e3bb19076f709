//! TfIdfVectorizer: counts of the pool's n-grams (with up to `max_skip_count` tokens
//! skipped between neighbours) in each row of tokens, as term frequencies, IDF weights
//! or both.

use std::collections::HashMap;

use onnx_core::ir::AttributeValue;

use super::{Ctx, Kernel, input, one};
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "TfIdfVectorizer" => tfidf,
        _ => return None,
    };
    Some(k)
}

/// A token: integers and strings compared exactly.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Token {
    Int(i64),
    Bytes(Vec<u8>),
}

fn tokens(data: &Data) -> Result<Vec<Token>, KernelError> {
    Ok(match data {
        Data::Str(v) => v.iter().map(|s| Token::Bytes(s.clone())).collect(),
        other => Tensor::new(vec![other.len()], other.clone()).to_i64s()?.into_iter().map(Token::Int).collect(),
    })
}

fn tfidf(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let int = |name: &str| ctx.int(name).ok_or(bad_attribute!("attribute {name} is missing"));
    let (min_n, max_n, max_skip) = (int("min_gram_length")?, int("max_gram_length")?, int("max_skip_count")?);
    let (min_n, max_n) = (usize::try_from(min_n).unwrap_or(0).max(1), usize::try_from(max_n).unwrap_or(0));
    let max_skip = usize::try_from(max_skip).map_err(|_| bad_attribute!("max_skip_count is negative"))?;
    let mode = ctx.string("mode").ok_or(bad_attribute!("attribute mode is missing"))?;
    let starts = ctx.ints("ngram_counts").ok_or(bad_attribute!("ngram_counts is missing"))?;
    let columns = ctx.ints("ngram_indexes").ok_or(bad_attribute!("ngram_indexes is missing"))?;
    let pool = match ctx.node.attribute("pool_strings").and_then(|a| a.value()) {
        Some(AttributeValue::Strings(v)) => v.iter().map(|s| Token::Bytes(s.as_bytes().to_vec())).collect(),
        _ => ctx
            .ints("pool_int64s")
            .ok_or(bad_attribute!("the pool is missing"))?
            .iter()
            .map(|&v| Token::Int(v))
            .collect::<Vec<_>>(),
    };
    let weights = ctx.node.attribute("weights").and_then(|a| a.value());
    let weights: Option<&[f32]> = match weights {
        Some(AttributeValue::Floats(w)) => Some(w),
        _ => None,
    };
    // Each pool n-gram (by its tokens) → its output column.
    let mut table: HashMap<Vec<Token>, usize> = HashMap::new();
    let mut ordinal = 0usize;
    for (level, &start) in starts.iter().enumerate() {
        let n = level + 1;
        let start = usize::try_from(start).map_err(|_| bad_attribute!("ngram_counts holds a negative start"))?;
        let end = starts.get(level + 1).map_or(pool.len(), |&e| (e as usize).min(pool.len()));
        for gram in pool.get(start..end).ok_or(bad_attribute!("ngram_counts runs past the pool"))?.chunks_exact(n) {
            let column = *columns.get(ordinal).ok_or(bad_attribute!("fewer ngram_indexes than n-grams in the pool"))?;
            table.insert(gram.to_vec(), usize::try_from(column).map_err(|_| bad_attribute!("a negative ngram index"))?);
            ordinal += 1;
        }
    }
    let width = columns
        .iter()
        .map(|&c| {
            usize::try_from(c).ok().and_then(|c| c.checked_add(1)).ok_or(bad_attribute!("ngram_indexes holds {c}"))
        })
        .try_fold(0usize, |widest, c| c.map(|c| widest.max(c)))?;
    let (rows, row_len) = match x.shape[..] {
        [c] => (1, c),
        [n, c] => (n, c),
        _ => return Err(bad_input!("input of shape {:?} is neither 1-D nor 2-D", x.shape)),
    };
    ctx.check_elements(rows.saturating_mul(width))?;
    let all = tokens(&x.data)?;
    let mut out = vec![0.0f32; rows * width];
    for r in 0..rows {
        let row = &all[r * row_len..(r + 1) * row_len];
        let counts = &mut out[r * width..(r + 1) * width];
        // The pool holds n-grams up to ngram_counts' length; none longer fits the row.
        for n in min_n..=max_n.min(starts.len()).min(row.len()) {
            // Unigrams have no gaps to skip: each token counts once.
            let skips = if n == 1 { 0 } else { max_skip };
            for skip in 0..=skips {
                let step = skip + 1;
                // An n-gram this widely spaced no longer fits the row; wider ones neither.
                let Some(reach) = (n - 1).checked_mul(step).filter(|&r| r < row.len()) else { break };
                for start in 0..row.len() {
                    if start + reach >= row.len() {
                        break;
                    }
                    let gram: Vec<Token> = (0..n).map(|k| row[start + k * step].clone()).collect();
                    if let Some(&c) = table.get(&gram) {
                        counts[c] += 1.0;
                    }
                }
            }
        }
        for (c, v) in counts.iter_mut().enumerate() {
            let w = weights.and_then(|w| w.get(c)).copied().unwrap_or(1.0);
            *v = match mode {
                "TF" => *v,
                "IDF" if *v > 0.0 => w,
                "IDF" => 0.0,
                "TFIDF" => *v * w,
                other => return Err(bad_attribute!("mode '{other}' is not TF, IDF or TFIDF")),
            };
        }
    }
    let shape = if x.rank() == 1 { vec![width] } else { vec![rows, width] };
    one(Tensor::new(shape, Data::F32(out.into())))
}
