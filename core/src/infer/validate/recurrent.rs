//! The recurrent operators (the family of [`crate::infer::ops`]'s `recurrent` module), RNN,
//! GRU and LSTM: what onnx's inference functions fail them for (`onnx/defs/rnn/defs.cc`)
//! and what onnxruntime refuses at load: the direction's spelling, a positive hidden size,
//! an input of rank 3, and the batch-first layout onnxruntime does not implement.

use super::{Judge, Violations, int};
use crate::diagnostic::Anchor;

/// The recurrent operators' rules, under their keys ([`super::DEFAULT_DOMAIN`]).
pub(super) const VALIDATORS: super::Registrations =
    &[("RNN", 1, recurrent), ("GRU", 1, recurrent), ("LSTM", 1, recurrent)];

fn recurrent(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { n, node, op, .. } = *judge;
    let dims = |i: usize| judge.dims(i);
    v.one_of(node, "direction");
    if int(node, "layout").is_some_and(|l| l != 0) {
        let at = v.attribute_anchor(node, "layout");
        v.unsupported(at, format!("{op} with layout = 1 (batch first)"));
    }
    v.positive_int(node, "hidden_size");
    if let Some(x) = dims(0)
        && x.len() != 3
    {
        let message =
            format!("the input of {op} must have rank 3 (sequence, batch, features), it has rank {}", x.len());
        v.error("input-rank", Anchor::NodeInput(n, 0), message);
    }
}
