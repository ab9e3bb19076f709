//! Normalizations fused with what comes before them (SkipLayerNormalization,
//! SkipSimplifiedLayerNormalization, EmbedLayerNormalization), and GroupNorm and
//! SkipGroupNorm, with the shapes onnxruntime's inference gives them.

use super::super::{Ctx, Outputs, Rule};
use crate::infer::types::tensor_of;
use crate::infer::types::{dim, known_dim};
use crate::ir::{DataType, Dimension};

pub fn rule(op: &str) -> Option<Rule> {
    let rule: Rule = match op {
        "SkipLayerNormalization" | "SkipSimplifiedLayerNormalization" => skip_layer_norm,
        "EmbedLayerNormalization" => |ctx| embed_layer_norm(ctx, ctx.elem(2), 3),
        // Dequantized to float32; no embedding sum output.
        "QEmbedLayerNormalization" => |ctx| embed_layer_norm(ctx, Some(DataType::Float as i32), 2),
        // The result and (SkipGroupNorm) the sum: X's type and shape.
        "GroupNorm" | "SkipGroupNorm" => |ctx| {
            let x = ctx.input_type(0)?;
            Some(Outputs { types: vec![Some(x.clone()); ctx.node.outputs.len().max(1)].into(), values: Vec::new() })
        },
        _ => return None,
    };
    Some(rule)
}

/// Outputs 0 (the normalized sum) and 3 (the sum of input, skip and bias) have input 0's
/// type and the shape of the sum ([`sum_dims`]); 1 and 2 (mean and inverse standard
/// deviation) are float32 of those dims, the last one 1.
fn skip_layer_norm(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let elem = ctx.elem(0).or_else(|| ctx.elem(1));
    let dims = sum_dims(ctx);
    let sum = tensor_of(elem, dims.clone());
    let mut out = Outputs::one(sum.clone());
    let stats = dims.filter(|d| !d.is_empty()).map(|mut d| {
        let last = d.len() - 1;
        d[last] = dim(1);
        d
    });
    for i in 1..ctx.node.outputs.len().min(4) {
        out.types.push(Some(if i == 3 { sum.clone() } else { tensor_of(Some(DataType::Float as i32), stats.clone()) }));
    }
    Some(out)
}

/// The dims of `input + skip`: input's, each unknown one read from skip where skip has it
/// (aligned from the last axis; a skip of one size per axis is input's shape or that of its
/// last axes, a leading 1 repeated over input's batch, so a 1 says nothing), the hidden
/// size from gamma. A 3-D skip makes a 3-D input (onnxruntime takes no other), so without
/// input's rank it gives the dims.
fn sum_dims(ctx: &Ctx<'_, '_>) -> Option<Vec<Dimension>> {
    let skip = ctx.dims(1);
    let mut dims = match ctx.dims(0) {
        Some(x) => x.to_vec(),
        None if skip.is_some_and(|s| s.len() == 3) => vec![Dimension::default(); 3],
        None => return None,
    };
    let says = |d: &Dimension| d.value.is_some() && known_dim(d) != Some(1);
    if let Some(s) = skip.filter(|s| s.len() <= dims.len()) {
        let offset = dims.len() - s.len();
        for (d, s) in dims[offset..].iter_mut().zip(s) {
            if d.value.is_none() && says(s) {
                *d = s.clone();
            }
        }
    }
    if let (Some(last), Some([hidden])) = (dims.last_mut(), ctx.dims(2))
        && last.value.is_none()
    {
        *last = hidden.clone();
    }
    Some(dims)
}

/// `[batch, sequence, hidden]` of the word embedding's element type (output 0 and the
/// embedding sum, output 2), hidden read from the word embedding's second dim; the mask
/// index (output 1) is int32 `[batch]`. QEmbedLayerNormalization alike, float32, of two
/// outputs (`most`).
fn embed_layer_norm(ctx: &Ctx<'_, '_>, elem: Option<i32>, most: usize) -> Option<Outputs> {
    let ids = ctx.dims(0).filter(|d| d.len() == 2);
    let hidden = ctx.dims(2).filter(|d| d.len() == 2).map(|d| d[1].clone());
    let dims = ids.map(|ids| vec![ids[0].clone(), ids[1].clone(), hidden.unwrap_or_default()]);
    let mut out = Outputs::one(tensor_of(elem, dims.clone()));
    if ctx.node.outputs.len() > 1 {
        out.types.push(Some(tensor_of(Some(DataType::Int32 as i32), ids.map(|d| vec![d[0].clone()]))));
    }
    if ctx.node.outputs.len() > 2 && most > 2 {
        out.types.push(Some(tensor_of(elem, dims)));
    }
    Some(out)
}
