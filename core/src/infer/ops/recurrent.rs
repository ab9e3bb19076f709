//! RNN, GRU and LSTM: outputs shaped by the sequence, the batch, the number of directions
//! and `hidden_size`, in the order `layout` names.

use super::{Ctx, Outputs, Rule};
use crate::infer::types::tensor_of;
use crate::infer::types::{dim, unknown_dim};
use crate::ir::Dimension;

pub fn rule(op: &str) -> Option<Rule> {
    matches!(op, "RNN" | "GRU" | "LSTM").then_some(recurrent)
}

fn recurrent(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let directions = match ctx.string("direction").unwrap_or("forward") {
        "forward" | "reverse" => dim(1),
        "bidirectional" => dim(2),
        _ => unknown_dim(),
    };
    let hidden = ctx.int("hidden_size").filter(|&h| h > 0).map_or_else(unknown_dim, dim);
    let batch_major = ctx.int("layout").unwrap_or(0) != 0;
    let x = ctx.dims(0).filter(|d| d.len() == 3);
    let at = |i: usize| x.map_or_else(Dimension::default, |d| d[i].clone());
    let (sequence, batch) = if batch_major { (at(1), at(0)) } else { (at(0), at(1)) };
    let y = if batch_major {
        vec![batch.clone(), sequence, directions.clone(), hidden.clone()]
    } else {
        vec![sequence, directions.clone(), batch.clone(), hidden.clone()]
    };
    let state = if batch_major { vec![batch, directions, hidden] } else { vec![directions, batch, hidden] };
    let elem = ctx.elem(0);
    let mut types = vec![Some(tensor_of(elem, Some(y)))];
    for _ in 1..ctx.node.outputs.len().min(3) {
        types.push(Some(tensor_of(elem, Some(state.clone()))));
    }
    Some(Outputs { types: types.into(), values: Vec::new() })
}
