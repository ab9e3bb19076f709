//! Shapes of the operators of hybrid and mixture-of-experts models (Qwen3.5's linear
//! attention, GPT-OSS's experts), as onnxruntime's kernels give them: the state outputs
//! from the weights and head counts, everything else the shape of its main input.

use super::super::{Ctx, Outputs, Rule};
use crate::infer::types::{dim, known_dim, tensor_of, unknown_dim};
use crate::ir::Dimension;

pub fn rule(op: &str) -> Option<Rule> {
    let rule: Rule = match op {
        // The output is the input's shape (the experts map hidden to hidden; the norm and
        // the rotation keep theirs).
        "MoE" | "QMoE" | "GatedRMSNorm" | "MRotaryEmbedding" => |ctx| Some(Outputs::one(ctx.input_type(0)?.clone())),
        "LinearAttentionGate" => |ctx| {
            let a = ctx.input_type(0)?.clone();
            let count = ctx.node.outputs.len().clamp(1, 2);
            Some(Outputs { types: std::iter::repeat_n(Some(a), count).collect(), values: Vec::new() })
        },
        "CausalConvWithState" => causal_conv_with_state,
        "LinearAttention" => linear_attention,
        _ => return None,
    };
    Some(rule)
}

/// A known count, or `None`.
fn known(d: &Dimension) -> Option<i64> {
    known_dim(d)
}

/// `n · m` as a dim, unknown unless both are known.
fn times(n: Option<i64>, m: Option<i64>) -> Dimension {
    n.zip(m).and_then(|(n, m)| n.checked_mul(m)).map_or_else(unknown_dim, dim)
}

/// CausalConvWithState: the output the input's shape, the state `[B, C, (K − 1)·dilation]`
/// with K the weight's last dim.
fn causal_conv_with_state(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let x = ctx.input_type(0)?.clone();
    let input = ctx.dims(0).filter(|d| d.len() == 3);
    let taps = ctx.dims(1).and_then(|w| w.last()).and_then(known);
    let dilation = ctx.int("dilation").unwrap_or(1);
    let state = input.map(|d| vec![d[0].clone(), d[1].clone(), times(taps.map(|k| k - 1), Some(dilation))]);
    Some(Outputs { types: [Some(x), Some(tensor_of(ctx.elem(0), state))].into_iter().collect(), values: Vec::new() })
}

/// LinearAttention: output `[B, T, max(Hq, Hkv)·dv]`, state `[B, Hkv, dk, dv]`, with dk the
/// query's width over its heads and dv the value's over the key/value heads.
fn linear_attention(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let (q_heads, kv_heads) = (ctx.int("q_num_heads").filter(|&h| h > 0), ctx.int("kv_num_heads").filter(|&h| h > 0));
    let q = ctx.dims(0).filter(|d| d.len() == 3);
    let v = ctx.dims(2).filter(|d| d.len() == 3);
    let per_head =
        |width: Option<i64>, heads: Option<i64>| width.zip(heads).and_then(|(w, h)| (w % h == 0).then_some(w / h));
    let dk = per_head(q.and_then(|q| known(&q[2])), q_heads);
    let dv = per_head(v.and_then(|v| known(&v[2])), kv_heads);
    let out_heads = q_heads.zip(kv_heads).map(|(q, k)| q.max(k));
    let output = q.map(|q| vec![q[0].clone(), q[1].clone(), times(out_heads, dv)]);
    let state = q.map(|q| {
        vec![
            q[0].clone(),
            kv_heads.map_or_else(unknown_dim, dim),
            dk.map_or_else(unknown_dim, dim),
            dv.map_or_else(unknown_dim, dim),
        ]
    });
    let elem = ctx.elem(0);
    Some(Outputs {
        types: [Some(tensor_of(elem, output)), Some(tensor_of(elem, state))].into_iter().collect(),
        values: Vec::new(),
    })
}
