//! A float MatMul between two DequantizeLinear outputs (the QDQ form onnxruntime's static
//! quantizer writes: `DequantizeLinear(QuantizeLinear(x)) × DequantizeLinear(int8 weight)`)
//! run as the 8-bit product it stands for, the way onnxruntime fuses the pattern into
//! QLinearMatMul: the weight's bytes packed once when the plan is made, A's bytes recovered
//! from its dequantized values, the int32 sums scaled by `scale_a·scale_b` per column.
//!
//! The result is the exact product of the dequantized operands, rounded once per element
//! (the float path rounds each product and each partial sum), so it differs from the float
//! MatMul only in those roundings. Where the processor has no 8-bit dot product
//! ([`crate::int8`]) nothing is prepared and the float path runs.

use super::{Ctx, Prepared};
use crate::broadcast;
use crate::int8::{Operand, PackedB, RowsA, tensor_bytes as byte};
use crate::value::{Data, Tensor};

/// What the plan makes of the two DequantizeLinear nodes' constants.
#[derive(Debug)]
pub struct DequantizedProduct {
    /// `1 / scale_a`: A's dequantized values back to integers.
    a_inverse_scale: f32,
    /// A's zero point in the unsigned form (`z`, or `z + 128` for int8).
    a_zero: i32,
    b: PackedB,
    /// `scale_a · scale_b` per column of the product.
    column_scales: Vec<f32>,
}

/// A's DequantizeLinear: its scale and zero point (per tensor), constants.
#[derive(Debug)]
pub struct DequantizedA<'a> {
    pub scale: &'a Tensor,
    pub zero: &'a Tensor,
}

/// B's DequantizeLinear: the 8-bit weight `[K, N]`, its scale and zero point (per tensor, or
/// per column with `axis` 1), constants.
#[derive(Debug)]
pub struct DequantizedB<'a> {
    pub weight: &'a Tensor,
    pub scale: &'a Tensor,
    pub zero: Option<&'a Tensor>,
    /// DequantizeLinear's `axis`, not yet normalized (default 1).
    pub axis: i64,
}

/// A's side: `1 / scale`, the zero point in the unsigned form, and the scale; `None` unless
/// there is one scale, finite and normal (its inverse too), and one 8-bit zero point.
pub fn a_parameters(a: &DequantizedA<'_>) -> Option<(f32, i32, f32)> {
    let Data::F32(sa) = &*a.scale.data else { return None };
    let (&[sa], Some((za, signed))) = (&sa[..a.scale.len()], byte(a.zero)) else { return None };
    let &[za] = za else { return None };
    if !sa.is_normal() || !(1.0 / sa).is_normal() {
        return None;
    }
    let zero = crate::int8::byte_value(za, signed) + if signed { 128 } else { 0 };
    Some((1.0 / sa, zero, sa))
}

/// The prepared form and the bytes it holds, or `None` when the pair is not of the form
/// the 8-bit path takes (then the float MatMul runs as before).
pub fn prepare(a: &DequantizedA<'_>, b: &DequantizedB<'_>) -> Option<(Prepared, usize)> {
    let (a_inverse_scale, a_zero, sa) = a_parameters(a)?;
    // B: `[K, N]` bytes, a scale per tensor or per column.
    let (&[k, n], Some((weight, b_signed))) = (&b.weight.shape[..], byte(b.weight)) else { return None };
    let Data::F32(sb) = &*b.scale.data else { return None };
    let sb = &sb[..b.scale.len()];
    let per_column = sb.len() != 1;
    if per_column && (b.scale.rank() != 1 || sb.len() != n || (b.axis != 1 && b.axis != -1)) {
        return None;
    }
    let zb = match b.zero {
        Some(z) => match crate::int8::tensor_integers(z)? {
            (v, s) if s == b_signed && v.len() == sb.len() => v,
            _ => return None,
        },
        None => vec![0],
    };
    let packed = PackedB::new(&Operand { bytes: weight, signed: b_signed, zero: &zb }, (k, n))?;
    let column_scales: Vec<f32> = (0..n).map(|j| sa * sb[if per_column { j } else { 0 }]).collect();
    let bytes = packed.bytes() + 4 * n;
    let form = DequantizedProduct { a_inverse_scale, a_zero, b: packed, column_scales };
    Some((std::sync::Arc::new(form) as Prepared, bytes))
}

/// `a × b` through the prepared 8-bit form, when the node has one and the operands are what
/// it was made for (a row-major float32 A whose last axis is K, B `[K, N]`); `None` sends the
/// caller to the float path.
pub fn run(ctx: &Ctx<'_>, a: &Tensor, b: &Tensor) -> Option<Tensor> {
    let form = ctx.prepared?.as_any().downcast_ref::<DequantizedProduct>()?;
    let (k, n) = form.b.shape();
    let Data::F32(x) = &*a.data else { return None };
    if b.shape != [k, n] || a.shape.last() != Some(&k) || a.placement() != (0, broadcast::strides(&a.shape)) {
        return None;
    }
    let rows = a.len() / k.max(1);
    let lhs = RowsA::dequantized(&x[..a.len()], (rows, k), form.a_inverse_scale, form.a_zero)?;
    let sums = crate::int8::multiply(&lhs, &form.b)?;
    crate::gemm::count_flops(2 * rows * k * n);
    let mut out = vec![0.0f32; sums.len()];
    crate::simd::widest(
        #[inline(always)]
        || {
            for (o, s) in out.chunks_exact_mut(n).zip(sums.chunks_exact(n)) {
                for ((o, &s), &scale) in o.iter_mut().zip(s).zip(&form.column_scales) {
                    *o = s as f32 * scale;
                }
            }
        },
    );
    let mut shape = a.shape.clone();
    *shape.last_mut()? = n;
    Some(Tensor::new(shape, Data::F32(out.into())))
}
