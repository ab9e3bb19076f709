//! Kernels of onnxruntime's contrib operators (`com.microsoft`), matching onnxruntime's CPU
//! kernels: what its optimizers, quantizers and genai builder write into shipped models.
//! One module per family, as inference's rules are (`onnx_core::infer::ops::contrib`);
//! [`kernel`] asks each.

pub mod activation;
pub mod attention;
pub mod fused;
mod kv_cache;
mod linear_attention;
mod moe;
pub mod nbits;
pub mod norm;
mod position_bias;
pub mod qmatmul;
pub mod qpool;
pub mod quant;

use super::{Family, Kernel};

/// The families of `com.microsoft`; an operator is claimed by at most one.
const FAMILIES: [Family; 11] = [
    activation::kernel,
    norm::kernel,
    fused::kernel,
    attention::kernel,
    quant::kernel,
    qmatmul::kernel,
    nbits::kernel,
    qpool::kernel,
    position_bias::kernel,
    linear_attention::kernel,
    moe::kernel,
];

pub fn kernel(op: &str) -> Option<Kernel> {
    FAMILIES.iter().find_map(|family| family(op))
}

/// The operators whose kernels take a form of their constant inputs made once per plan.
pub fn prepare(op: &str) -> Option<super::Prepare> {
    let widened = (op == "Attention").then_some(super::prepare_widened as super::Prepare);
    nbits::prepare(op).or_else(|| moe::prepare(op)).or_else(|| qmatmul::prepare(op)).or(widened)
}
