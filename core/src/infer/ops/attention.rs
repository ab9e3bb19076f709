//! Attention and the sequence-model operators around it (opsets 23 on): Attention,
//! FlexAttention, LinearAttention, CausalConvWithState, RotaryEmbedding, SwiGLU and
//! TensorScatter.
//!
//! 3-D inputs pack the heads into the last axis (`[B, S, heads·head_size]`), 4-D inputs
//! keep them apart (`[B, heads, S, head_size]`).

use super::{Ctx, Outputs, Rule};
use crate::infer::types::{dim, known_dim, unknown_dim};
use crate::infer::types::{first_known, tensor_of};
use crate::ir::Dimension;

pub fn rule(op: &str) -> Option<Rule> {
    let rule: Rule = match op {
        "Attention" => |ctx| Some(attention(ctx)),
        "LinearAttention" => |ctx| Some(linear_attention(ctx)),
        "CausalConvWithState" => |ctx| Some(causal_conv(ctx)),
        // Same shape as the input.
        "RotaryEmbedding" => |ctx| Some(Outputs::one(ctx.input_type(0)?.clone())),
        "TensorScatter" => |ctx| Some(Outputs::one(ctx.input_type(0)?.clone())),
        // The gate and the value have one shape, which the output keeps.
        "SwiGLU" => |ctx| {
            let dims = match (ctx.dims(0), ctx.dims(1)) {
                (Some(a), Some(b)) if a.len() == b.len() => {
                    Some(a.iter().zip(b).map(|(x, y)| first_known(x, y)).collect())
                }
                (Some(a), None) => Some(a.to_vec()),
                (None, b) => b.map(<[_]>::to_vec),
                _ => None,
            };
            Some(Outputs::one(tensor_of(ctx.elem(0), dims)))
        },
        _ => return None,
    };
    Some(rule)
}

/// FlexAttention (ai.onnx.preview): `[B, Hq, L, Dv]` from Q `[B, Hq, L, Dqk]` and V
/// `[B, Hkv, S, Dv]`.
/// The rules of `ai.onnx.preview`.
pub fn preview_rule(op: &str) -> Option<Rule> {
    (op == "FlexAttention").then_some(|ctx| Some(flex_attention(ctx)))
}

fn flex_attention(ctx: &Ctx<'_, '_>) -> Outputs {
    let dims = match (ctx.dims(0), ctx.dims(2)) {
        (Some(q), Some(v)) if q.len() == 4 && v.len() == 4 => {
            Some(vec![first_known(&q[0], &v[0]), q[1].clone(), q[2].clone(), v[3].clone()])
        }
        _ => None,
    };
    Outputs::one(tensor_of(ctx.elem(0), dims))
}

fn divide(d: &Dimension, by: Option<i64>) -> Dimension {
    match (known_dim(d), by) {
        (Some(n), Some(h)) if h > 0 && n % h == 0 => dim(n / h),
        _ => unknown_dim(),
    }
}

fn times(d: &Dimension, by: Option<i64>) -> Dimension {
    match (known_dim(d), by) {
        (Some(n), Some(h)) => n.checked_mul(h).map_or_else(unknown_dim, dim),
        _ => unknown_dim(),
    }
}

fn plus(a: &Dimension, b: &Dimension) -> Dimension {
    match (known_dim(a), known_dim(b)) {
        (Some(x), Some(y)) => x.checked_add(y).map_or_else(unknown_dim, dim),
        _ => unknown_dim(),
    }
}

/// Attention: Y, present key and value (the past cache grown by this step's keys), and
/// the QK product `[B, q_heads, q_seq, total_kv_seq]`.
fn attention(ctx: &Ctx<'_, '_>) -> Outputs {
    let elem = ctx.elem(0);
    let (q_heads, kv_heads) = (ctx.int("q_num_heads"), ctx.int("kv_num_heads"));
    let (q, k, v) = (ctx.dims(0), ctx.dims(1), ctx.dims(2));
    // Per input: batch, heads, sequence, head size.
    let split = |d: Option<&[Dimension]>, heads: Option<i64>| -> Option<[Dimension; 4]> {
        let d = d?;
        match d.len() {
            4 => Some([d[0].clone(), d[1].clone(), d[2].clone(), d[3].clone()]),
            3 => Some([d[0].clone(), heads.map_or_else(unknown_dim, dim), d[1].clone(), divide(&d[2], heads)]),
            _ => None,
        }
    };
    let (q4, k4, v4) = (split(q, q_heads), split(k, kv_heads), split(v, kv_heads));
    let past = |i: usize| ctx.dims(i).filter(|d| d.len() == 4 && ctx.has_input(i));
    let kv_seq = k4.as_ref().map(|k| k[2].clone()).or_else(|| v4.as_ref().map(|v| v[2].clone()));
    let total = match (past(4), &kv_seq) {
        (Some(p), Some(s)) => Some(plus(&p[2], s)),
        (None, s) if !ctx.has_input(4) => s.clone(),
        _ => None,
    };
    // onnx shapes the output only when query and value are both 4-D or both 3-D.
    let onnx_shapes_y = q.zip(v).is_some_and(|(q, v)| q.len() == v.len());
    let y = match (q, &q4, &v4) {
        _ if ctx.as_onnx() && !onnx_shapes_y => None,
        (Some(q), Some(q4), Some(v4)) if q.len() == 4 => {
            Some(vec![q4[0].clone(), q4[1].clone(), q4[2].clone(), v4[3].clone()])
        }
        (Some(q), Some(q4), Some(v4)) if q.len() == 3 => {
            Some(vec![q4[0].clone(), q4[2].clone(), times(&v4[3], q_heads)])
        }
        (Some(q), _, _) => Some(vec![unknown_dim(); q.len()]),
        _ => None,
    };
    let present = |cache: &Option<[Dimension; 4]>, past_at: usize| -> Option<Vec<Dimension>> {
        let c = cache.as_ref()?;
        let p = past(past_at);
        let batch = p.map_or_else(|| c[0].clone(), |p| first_known(&p[0], &c[0]));
        let heads = p.map_or_else(|| c[1].clone(), |p| first_known(&p[1], &c[1]));
        let size = p.map_or_else(|| c[3].clone(), |p| first_known(&p[3], &c[3]));
        Some(vec![batch, heads, total.clone().unwrap_or_default(), size])
    };
    let qk = if ctx.as_onnx() {
        Some(onnx_qk_shape(ctx))
    } else {
        q4.as_ref().map(|q| vec![q[0].clone(), q[1].clone(), q[2].clone(), total.clone().unwrap_or_default()])
    };
    let types = vec![
        Some(tensor_of(elem, y)),
        Some(tensor_of(ctx.elem(4).or(elem), present(&k4, 4))),
        Some(tensor_of(ctx.elem(5).or(elem), present(&v4, 5))),
        Some(tensor_of(elem, qk)),
    ];
    Outputs { types: types.into_iter().take(ctx.node.outputs.len().max(1)).collect(), values: Vec::new() }
}

/// The shape onnx's inference gives Attention's `qk_matmul_output` (output 3), which the
/// inference judging declarations as onnx must give too: the dims it has gathered by the
/// time it writes that output. Nothing without the query's shape (so rank 0), only the
/// batch without the value's or with the value of another rank, the sequence length read
/// as a number (0 where it is symbolic), and past_key's length added only when both are
/// numbers.
fn onnx_qk_shape(ctx: &Ctx<'_, '_>) -> Vec<Dimension> {
    let (Some(q), v) = (ctx.dims(0).filter(|q| matches!(q.len(), 3 | 4)), ctx.dims(2)) else {
        return Vec::new();
    };
    let mut qk = vec![q[0].clone()];
    let number = |d: &Dimension| known_dim(d).unwrap_or(0);
    let kv_seq = match v {
        Some(v) if v.len() == 4 && q.len() == 4 => {
            qk.extend([q[1].clone(), q[2].clone(), dim(number(&v[2]))]);
            number(&v[2])
        }
        Some(v) if v.len() == 3 && q.len() == 3 => {
            qk.extend([dim(ctx.int("q_num_heads").unwrap_or(0)), q[1].clone(), dim(number(&v[1]))]);
            number(&v[1])
        }
        _ => -1,
    };
    let cache = |i: usize| ctx.dims(i).filter(|_| ctx.has_input(i));
    let outputs = ctx.node.outputs.len();
    if outputs > 2
        && let (Some(past_key), Some(past_value)) = (cache(4), cache(5))
        && past_key.len() == 4
        && past_value.len() == 4
        && kv_seq > 0
        && let Some(past) = known_dim(&past_key[2])
        && qk.len() == 4
    {
        qk[3] = dim(kv_seq.saturating_add(past));
    }
    qk
}

/// LinearAttention: output `[B, T, q_heads·d_v]`, state `[B, kv_heads, d_k, d_v]` where
/// d_k and d_v unpack the key and value widths.
fn linear_attention(ctx: &Ctx<'_, '_>) -> Outputs {
    let elem = ctx.elem(0);
    let (q_heads, kv_heads) = (ctx.int("q_num_heads"), ctx.int("kv_num_heads"));
    let (q, k, v) = (ctx.dims(0).filter(|d| d.len() == 3), ctx.dims(1), ctx.dims(2).filter(|d| d.len() == 3));
    let d_v = v.map(|v| divide(&v[2], kv_heads)).unwrap_or_default();
    let d_k = k
        .filter(|k| k.len() == 3)
        .map(|k| divide(&k[2], kv_heads))
        .filter(|d| d.value.is_some())
        .or_else(|| q.map(|q| divide(&q[2], q_heads)))
        .unwrap_or_default();
    let output = q.map(|q| vec![q[0].clone(), q[1].clone(), times(&d_v, q_heads)]);
    let batch = q.map(|q| q[0].clone()).unwrap_or_default();
    let state = vec![batch, kv_heads.map_or_else(unknown_dim, dim), d_k, d_v];
    let state_elem = ctx.elem(3).or(elem);
    Outputs {
        types: smallvec::smallvec![Some(tensor_of(elem, output)), Some(tensor_of(state_elem, Some(state)))],
        values: Vec::new(),
    }
}

/// CausalConvWithState: output like the input `[B, C, L]`; the new state keeps the last
/// `k − 1` steps, `[B, C, k − 1]` for a weight `[C, 1, k]`.
fn causal_conv(ctx: &Ctx<'_, '_>) -> Outputs {
    let elem = ctx.elem(0);
    let x = ctx.dims(0).filter(|d| d.len() == 3);
    let w = ctx.dims(1).filter(|d| d.len() == 3);
    let past = ctx.dims(3).filter(|d| d.len() == 3 && ctx.has_input(3));
    let window = w
        .and_then(|w| known_dim(&w[2]))
        .and_then(|k| k.checked_sub(1))
        .map(dim)
        .or_else(|| past.map(|p| p[2].clone()))
        .unwrap_or_default();
    let batch = x.map(|x| x[0].clone()).or_else(|| past.map(|p| p[0].clone())).unwrap_or_default();
    let channels = x.map(|x| x[1].clone()).or_else(|| w.map(|w| w[0].clone())).unwrap_or_default();
    Outputs {
        types: smallvec::smallvec![
            Some(tensor_of(elem, ctx.dims_vec(0))),
            Some(tensor_of(elem, Some(vec![batch, channels, window])))
        ],
        values: Vec::new(),
    }
}
