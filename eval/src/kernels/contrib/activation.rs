//! Element-wise activations with an optional bias added first (FastGelu, BiasGelu,
//! QuickGelu, …), as onnxruntime's CPU kernels compute them.

use super::super::{Kernel, input, one, optional};
use crate::error::{KernelError, bad_input};
use crate::value::Value;

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "FastGelu" => |_, inputs| biased(inputs, fast_gelu),
        _ => return None,
    };
    Some(k)
}

/// GELU's tanh approximation, onnxruntime's FastGelu: `x·½·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
fn fast_gelu(x: f64) -> f64 {
    const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
    0.5 * x * (1.0 + (SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x)).tanh())
}

/// `f` of each element of input 0, plus input 1 when given: a bias of one value per
/// position of the last axis (onnxruntime's kernels take no other broadcast). The result
/// has input 0's type and shape.
fn biased(inputs: &[Option<&Value>], f: impl Fn(f64) -> f64) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let mut values = x.to_f64s()?;
    if let Some(bias) = optional(inputs, 1)? {
        let width = x.shape.last().copied().unwrap_or(1);
        if bias.rank() != 1 || bias.len() != width {
            return Err(bad_input!(
                "the bias (input 1) has shape {:?}; it must be one value per position of input 0's last axis ({width})",
                bias.shape
            ));
        }
        let bias = bias.to_f64s()?;
        for (i, v) in values.iter_mut().enumerate() {
            *v += bias[i % width];
        }
    }
    values.iter_mut().for_each(|v| *v = f(*v));
    one(crate::cast::from_f64_like(x.data_type(), x.shape.clone(), values)?)
}
