//! ai.onnx.preview.training optimizers: Adagrad, Momentum and Adam take a learning rate
//! `R` and a step count `T`, then groups of n tensors each (X, G, and their state), and
//! return new X and new state: each output group has the type of its input group, the
//! gradients (group 1) having no output.

use super::{Ctx, Outputs, Rule};

pub fn rule(op: &str) -> Option<Rule> {
    matches!(op, "Adagrad" | "Momentum" | "Adam").then_some(optimizer)
}

/// The updated tensors, of the types of the tensors they update.
fn optimizer(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let groups = if ctx.op() == "Adam" { 4 } else { 3 };
    let tensors = ctx.node.inputs.len().checked_sub(2)?;
    if tensors == 0 || tensors % groups != 0 {
        return None;
    }
    let n = tensors / groups;
    let types = (0..ctx.node.outputs.len())
        .map(|k| {
            let (group, i) = (k / n, k % n);
            let input_group = if group == 0 { 0 } else { group + 1 };
            ctx.input_type(2 + input_group * n + i).cloned()
        })
        .collect();
    Some(Outputs { types, values: Vec::new() })
}
