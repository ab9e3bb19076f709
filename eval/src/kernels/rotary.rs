//! RotaryEmbedding (opset 23): rotates pairs of each head's first `rotary_embedding_dim`
//! features by position-dependent angles given as cosine and sine caches, the pairs being
//! the two halves or (interleaved) neighbouring features.

use super::{Ctx, Kernel, input, one, optional};
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::kernels::common::numeric_like;
use crate::value::Value;

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "RotaryEmbedding" => rotary_embedding,
        _ => return None,
    };
    Some(k)
}

fn rotary_embedding(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, cos, sin) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    let positions = optional(inputs, 3)?.map(|p| p.to_i64s()).transpose()?;
    // Dimensions as [batch, sequence, heads, head size], and where element (b, s, h, d) is.
    let (b, s, h, d, four) = match x.shape[..] {
        [b, h, s, d] => (b, s, h, d, true),
        [b, s, hidden] => {
            let h =
                ctx.int("num_heads").filter(|&h| h > 0).ok_or(bad_attribute!("3-D input needs num_heads"))? as usize;
            if hidden % h != 0 {
                return Err(bad_input!("hidden size {hidden} is not a multiple of num_heads {h}"));
            }
            (b, s, h, hidden / h, false)
        }
        _ => return Err(bad_input!("input of shape {:?} is neither 3-D nor 4-D", x.shape)),
    };
    let at = |bi: usize, si: usize, hi: usize, di: usize| {
        if four { ((bi * h + hi) * s + si) * d + di } else { ((bi * s + si) * h + hi) * d + di }
    };
    let rotary = match ctx.int("rotary_embedding_dim").unwrap_or(0) {
        0 => d,
        r => usize::try_from(r)
            .ok()
            .filter(|&r| r <= d && r % 2 == 0)
            .ok_or(bad_attribute!("rotary_embedding_dim {r} does not fit head size {d}"))?,
    };
    let half = rotary / 2;
    let interleaved = ctx.int("interleaved").unwrap_or(0) != 0;
    let (cos, sin) = (cos.to_f64s()?, sin.to_f64s()?);
    let width = *input(inputs, 1)?.shape.last().ok_or(bad_input!("cos_cache is a scalar"))?;
    if width < half {
        return Err(bad_input!("the caches hold {width} angles per position, {half} are needed"));
    }
    // The row of the caches for (batch, sequence) position.
    let row = |bi: usize, si: usize| -> Result<usize, KernelError> {
        let r = match &positions {
            Some(p) => {
                let pos = *p.get(bi * s + si).ok_or(bad_input!("position_ids is too short"))?;
                usize::try_from(pos).map_err(|_| bad_input!("position {pos} is negative"))?
            }
            None => bi * s + si,
        };
        if r.checked_add(1).and_then(|rows| rows.checked_mul(width)).is_none_or(|end| end > cos.len().min(sin.len())) {
            return Err(bad_input!("position {r} is past the caches"));
        }
        Ok(r * width)
    };
    let values = x.to_f64s()?;
    let mut out = values.clone();
    // An empty input may declare any batch, length and heads: nothing to rotate.
    let b = if values.is_empty() { 0 } else { b };
    for bi in 0..b {
        for si in 0..s {
            let r = row(bi, si)?;
            for hi in 0..h {
                for i in 0..half {
                    let (j1, j2) = if interleaved { (2 * i, 2 * i + 1) } else { (i, i + half) };
                    let (x1, x2) = (values[at(bi, si, hi, j1)], values[at(bi, si, hi, j2)]);
                    let (c, sn) = (cos[r + i], sin[r + i]);
                    out[at(bi, si, hi, j1)] = c * x1 - sn * x2;
                    out[at(bi, si, hi, j2)] = sn * x1 + c * x2;
                }
            }
        }
    }
    one(numeric_like(x.data_type(), x.shape.clone(), out)?)
}
