//! Calling a kernel: what the runner and constant folding do with a node's kernel and
//! input values. Apart from `kernels`, which knows no registry, and from `registry`, which
//! knows the kernels: this module joins the two, so neither imports the other's user.

use crate::error::KernelError;
use crate::kernels::Ctx;
use crate::registry::Dispatch;
use crate::value::Value;

/// Runs the kernel for `inputs`' element type ([`Dispatch::select`]) on them, copying
/// strided views row-major first unless the node's operator reads views
/// ([`crate::registry::reads_views`]).
pub fn call(kernels: Dispatch, ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let kernel = kernels.select(inputs)?;
    if kernels.reads_views {
        return kernel(ctx, inputs);
    }
    match crate::view::contiguous_inputs(inputs) {
        None => kernel(ctx, inputs),
        Some(copies) => kernel(ctx, &copies.iter().map(Option::as_ref).collect::<Vec<_>>()),
    }
}

/// The value of a `Constant` node of the default domain, made from its attribute without
/// planning or running the model (what `onnx-view` shows of a Constant before a run: a
/// model can keep most of its weights in Constant nodes, some inside subgraphs).
pub fn constant_value(model: &onnx_core::ir::Model, node: &onnx_core::ir::Node) -> Result<Value, KernelError> {
    let is_constant =
        node.schema_domain() == Some("") && node.op_type.as_ref().is_some_and(|o| o.as_bytes() == b"Constant");
    if !is_constant {
        return Err(crate::error::unsupported!("not a Constant node"));
    }
    let opset = model.opset_version("").unwrap_or(1);
    let kernels = crate::registry::dispatch("", "Constant", opset)
        .ok_or_else(|| crate::error::unsupported!("no Constant kernel at opset {opset}"))?;
    let limits = crate::Limits::default();
    let budget = crate::memory::Budget::starting_now(limits.max_memory);
    let ctx = Ctx { model, node, opset, limits: &limits, budget: &budget, prepared: None };
    call(kernels, &ctx, &[])?.into_iter().next().ok_or_else(|| crate::error::bad_input!("the Constant made no value"))
}
