//! The training operators of ai.onnx.preview.training (the family of
//! [`crate::infer::ops`]'s `training` module): Momentum, Adam and Adagrad.

use super::{Judge, Violations};
use crate::diagnostic::Anchor;

/// The training operators' rules, under their keys ([`super::OTHER_DOMAINS`]).
pub(super) const VALIDATORS: super::Registrations =
    &[("Momentum", 1, optimizer), ("Adam", 1, optimizer), ("Adagrad", 1, optimizer)];

/// Momentum, Adam and Adagrad (ai.onnx.preview.training): after the rate and the step
/// count, their inputs come in groups, one of each kind per optimized tensor (tensors,
/// gradients, and Momentum's momenta; Adam's momenta and squared-gradient sums), as
/// onnx's inference requires of Momentum and Adam. onnxruntime implements none of them.
fn optimizer(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let (node, op) = (judge.node, judge.op);
    let kinds = match op {
        "Momentum" => 3,
        "Adam" => 4,
        _ => 0,
    };
    let adjusted = node.inputs.len().saturating_sub(2);
    if kinds > 0 && !adjusted.is_multiple_of(kinds) {
        let message = format!(
            "{op} takes, after the rate and the step count, {kinds} inputs per optimized tensor; this node has {adjusted}"
        );
        return v.error("input-count", Anchor::Node(v.n), message);
    }
    v.unsupported(Anchor::Node(v.n), format!("{op} (ai.onnx.preview.training)"));
}
