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
    let (layout, rotary) = heads_and_rotary(ctx, &x.shape)?;
    let s = layout.sequence;
    let interleaved = ctx.int("interleaved").unwrap_or(0) != 0;
    let (cos_t, sin_t) = (cos, sin);
    let width = *cos_t.shape.last().ok_or(bad_input!("cos_cache is a scalar"))?;
    let (cos, sin) = (cos_t.to_f64s()?, sin_t.to_f64s()?);
    let rows = cos.len().min(sin.len());
    // The row of the caches for (batch, sequence) position.
    let row = |bi: usize, si: usize| -> Result<usize, KernelError> {
        match &positions {
            Some(p) => {
                let pos = *p.get(bi * s + si).ok_or(bad_input!("position_ids is too short"))?;
                usize::try_from(pos).map_err(|_| bad_input!("position {pos} is negative"))
            }
            None => Ok(bi * s + si),
        }
    };
    let values = x.to_f64s()?;
    let rows = rows.checked_div(width).unwrap_or(usize::MAX);
    let caches = Caches { cos: &cos, sin: &sin, width, rows };
    let out = rotate(&values, &layout, rotary, interleaved, &caches, row)?;
    one(numeric_like(x.data_type(), x.shape.clone(), out)?)
}

/// The heads of a rotary embedding's input `shape`: [batch, heads, sequence, head], or
/// [batch, sequence, hidden] split into the `num_heads` attribute's heads; and how many of
/// each head's features rotate (`rotary_embedding_dim`, even and at most the head; the
/// whole head when 0 or absent). RotaryEmbedding's and onnxruntime's MRotaryEmbedding's.
pub fn heads_and_rotary(ctx: &Ctx<'_>, shape: &[usize]) -> Result<(Layout, usize), KernelError> {
    let (batch, sequence, heads, head, heads_first) = match shape[..] {
        [b, h, s, d] => (b, s, h, d, true),
        [b, s, hidden] => {
            let h =
                ctx.int("num_heads").filter(|&h| h > 0).ok_or(bad_attribute!("3-D input needs num_heads"))? as usize;
            if hidden % h != 0 {
                return Err(bad_input!("hidden size {hidden} is not a multiple of num_heads {h}"));
            }
            (b, s, h, hidden / h, false)
        }
        _ => return Err(bad_input!("input of shape {shape:?} is neither 3-D nor 4-D")),
    };
    let rotary = match ctx.int("rotary_embedding_dim").unwrap_or(0) {
        0 => head,
        r => usize::try_from(r)
            .ok()
            .filter(|&r| r <= head && r % 2 == 0)
            .ok_or(bad_attribute!("rotary_embedding_dim {r} does not fit head size {head}"))?,
    };
    Ok((Layout { batch, sequence, heads, head, heads_first }, rotary))
}

/// Where the elements of a tensor of heads lie: [batch, sequence, heads·head] (or, with
/// `heads_first`, [batch, heads, sequence, head]).
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub batch: usize,
    pub sequence: usize,
    pub heads: usize,
    pub head: usize,
    pub heads_first: bool,
}

/// Cosine and sine caches: `rows` rows of `width` angles each.
#[derive(Clone, Copy, Debug)]
pub struct Caches<'a> {
    pub cos: &'a [f64],
    pub sin: &'a [f64],
    pub width: usize,
    pub rows: usize,
}

/// `values` with the first `rotary` features of each head rotated, the pairs being the two
/// halves or (interleaved) neighbouring features, by the angles of the caches' row
/// `row(batch, position)`; the features past `rotary` pass through. RotaryEmbedding's core,
/// shared with onnxruntime's contrib operators.
pub fn rotate(
    values: &[f64],
    layout: &Layout,
    rotary: usize,
    interleaved: bool,
    caches: &Caches<'_>,
    row: impl Fn(usize, usize) -> Result<usize, KernelError>,
) -> Result<Vec<f64>, KernelError> {
    let Layout { batch, sequence: s, heads: h, head: d, heads_first } = *layout;
    let at = |bi: usize, si: usize, hi: usize, di: usize| {
        if heads_first { ((bi * h + hi) * s + si) * d + di } else { ((bi * s + si) * h + hi) * d + di }
    };
    let half = rotary / 2;
    if caches.width < half {
        return Err(bad_input!("the caches hold {} angles per position, {half} are needed", caches.width));
    }
    let mut out = values.to_vec();
    // An empty input may declare any batch, length and heads: nothing to rotate.
    let batch = if values.is_empty() { 0 } else { batch };
    for bi in 0..batch {
        for si in 0..s {
            let r = row(bi, si)?;
            if r >= caches.rows {
                return Err(bad_input!("position {r} is past the caches' {} rows", caches.rows));
            }
            let r = r * caches.width;
            for hi in 0..h {
                for i in 0..half {
                    let (j1, j2) = if interleaved { (2 * i, 2 * i + 1) } else { (i, i + half) };
                    let (x1, x2) = (values[at(bi, si, hi, j1)], values[at(bi, si, hi, j2)]);
                    let (c, sn) = (caches.cos[r + i], caches.sin[r + i]);
                    out[at(bi, si, hi, j1)] = c * x1 - sn * x2;
                    out[at(bi, si, hi, j2)] = sn * x1 + c * x2;
                }
            }
        }
    }
    Ok(out)
}
