//! Helpers several families of kernels share: building a tensor of a given numeric type
//! from f64 values (defined in the data layer, [`crate::cast`]), reading a data-type
//! attribute, and rounding f64 values as a narrower float type would.

use half::{bf16, f16};
use onnx_core::ir::DataType;

use super::Ctx;
pub use crate::cast::numeric_like;
use crate::error::{KernelError, bad_attribute};

/// Rounds to the precision of `dt`.
pub fn rounding(dt: DataType) -> fn(f64) -> f64 {
    match dt {
        DataType::Float16 => |x| f64::from(f16::from_f64(x)),
        DataType::Bfloat16 => |x| f64::from(bf16::from_f64(x)),
        DataType::Double => |x| x,
        _ => |x| f64::from(x as f32),
    }
}

/// The element type of a tensor attribute named `to`/`dtype`, for kernels that create values.
pub fn dtype_attr(ctx: &Ctx<'_>, name: &str, default: DataType) -> Result<DataType, KernelError> {
    match ctx.int(name) {
        Some(code) => {
            i32::try_from(code).ok().and_then(DataType::from_code).ok_or_else(|| bad_attribute!("unknown type {code}"))
        }
        None => Ok(default),
    }
}
