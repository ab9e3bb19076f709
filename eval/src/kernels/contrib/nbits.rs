//! Block-quantized weights: MatMulNBits (`A × dequantize(B)ᵀ`, B's rows of N quantized in
//! blocks of `block_size` along K, `bits` per value), as onnxruntime's CPU kernel computes
//! it with its default accuracy level (g_idx not yet): the weights dequantized to float32 (`(q − zero)·scale`,
//! the zero point 2^(bits−1) when none is given) and multiplied in float32.

use super::super::{Ctx, Kernel, input, one, optional};
use crate::error::{KernelError, bad_attribute, bad_input, unsupported};
use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "MatMulNBits" => matmul_nbits,
        _ => return None,
    };
    Some(k)
}

/// A positive integer attribute.
fn size(ctx: &Ctx<'_>, name: &str, default: Option<i64>) -> Result<usize, KernelError> {
    let v = ctx.int(name).or(default).ok_or(bad_attribute!("{name} is required"))?;
    usize::try_from(v).ok().filter(|&v| v > 0).ok_or(bad_attribute!("{name} {v} must be positive"))
}

/// Value `i` of `bits` bits packed little end first into `bytes`.
fn unpack(bytes: &[u8], i: usize, bits: usize) -> i32 {
    let bit = i * bits;
    i32::from((bytes[bit / 8] >> (bit % 8)) & ((1u16 << bits) - 1) as u8)
}

fn matmul_nbits(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (k, n) = (size(ctx, "K", None)?, size(ctx, "N", None)?);
    let bits = size(ctx, "bits", Some(4))?;
    if !matches!(bits, 2 | 4 | 8) {
        return Err(unsupported!("MatMulNBits with {bits} bits"));
    }
    let block = size(ctx, "block_size", None)?;
    if ctx.int("accuracy_level").unwrap_or(0) == 4 {
        return Err(unsupported!("MatMulNBits with accuracy_level 4 (onnxruntime's int8 products)"));
    }
    let a = input(inputs, 0)?;
    let Data::F32(av) = &*a.data else {
        return Err(unsupported!("MatMulNBits on {} inputs", a.data_type().name()));
    };
    if a.shape.last() != Some(&k) {
        return Err(bad_input!("A {:?} does not end in K = {k}", a.shape));
    }
    let blocks = k.div_ceil(block);
    let blob = block * bits / 8;
    let b = input(inputs, 1)?;
    let Data::U8(bv) = &*b.data else { return Err(bad_input!("B must be uint8")) };
    if bv.len() != n * blocks * blob {
        return Err(bad_input!("B holds {} bytes, not N·blocks·blob = {n}·{blocks}·{blob}", bv.len()));
    }
    let scales = input(inputs, 2)?;
    let Data::F32(sv) = &*scales.data else { return Err(unsupported!("scales of {}", scales.data_type().name())) };
    if sv.len() != n * blocks {
        return Err(bad_input!("{} scales for {n} rows of {blocks} blocks", sv.len()));
    }
    // Packed zero points: each row's blocks in ⌈blocks·bits / 8⌉ bytes.
    let zero_row = (blocks * bits).div_ceil(8);
    let zeros: Option<&[u8]> = match optional(inputs, 3)? {
        None => None,
        Some(z) => match &*z.data {
            Data::U8(v) if v.len() == n * zero_row => Some(v),
            Data::U8(v) => return Err(bad_input!("{} zero point bytes, not {n}·{zero_row}", v.len())),
            _ => return Err(unsupported!("zero points of {} (not packed uint8)", z.data_type().name())),
        },
    };
    // g_idx (act-order block indices): onnxruntime's reading of it was not matched yet (a
    // case taking each K index's scale and zero point from block g_idx[k] differed).
    if optional(inputs, 4)?.is_some() {
        return Err(unsupported!("MatMulNBits with g_idx"));
    }
    let bias = match optional(inputs, 5)? {
        None => None,
        Some(t) => match &*t.data {
            Data::F32(v) if v.len() == n => Some(v),
            _ => return Err(bad_input!("bias must be N = {n} float32 values")),
        },
    };
    ctx.check_elements(k * n)?;
    let default_zero = 1 << (bits - 1);
    // The weights as K×N float32.
    let mut w = vec![0f32; k * n];
    for row in 0..n {
        for p in 0..k {
            let (blk, qi) = (p / block, p % block);
            let q = unpack(&bv[(row * blocks + blk) * blob..(row * blocks + blk + 1) * blob], qi, bits);
            let z = zeros.map_or(default_zero, |z| unpack(&z[row * zero_row..(row + 1) * zero_row], blk, bits));
            w[p * n + row] = (q - z) as f32 * sv[row * blocks + blk];
        }
    }
    let (shape, mut out) = super::super::matmul::matmul_f32(av, &a.shape, &w, &[k, n])?;
    if let Some(bias) = bias {
        for (i, v) in out.iter_mut().enumerate() {
            *v += bias[i % n];
        }
    }
    one(Tensor::new(shape, Data::F32(out.into())))
}
