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
    if crate::registry::reads_views(ctx.node.schema_domain().unwrap_or(""), ctx.op()) {
        return kernel(ctx, inputs);
    }
    match crate::view::contiguous_inputs(inputs) {
        None => kernel(ctx, inputs),
        Some(copies) => kernel(ctx, &copies.iter().map(Option::as_ref).collect::<Vec<_>>()),
    }
}
