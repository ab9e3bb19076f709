//! Block-quantized weights: MatMulNBits (`A × dequantize(B)ᵀ`, B's rows of N quantized in
//! blocks of `block_size` along K, `bits` per value), as onnxruntime's CPU kernel computes
//! it (g_idx not yet): by default the weights dequantized to float32 (`(q − zero)·scale`,
//! the zero point 2^(bits−1) when none is given) and multiplied in float32 (float16 A,
//! scales and bias widened, the result rounded back); with `accuracy_level` 4, A
//! quantized to int8 per block as well and the blocks multiplied in integers
//! ([`int8_products`]), what genai builds for CPU ship.

use onnx_core::ir::DataType;

use super::super::{Ctx, Kernel, axis, count, input, one, optional};
use crate::cast::numeric_like;
use crate::error::{KernelError, bad_attribute, bad_input, unsupported};
use crate::gemm::{View, sgemm};
use std::borrow::Cow;

use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "MatMulNBits" => matmul_nbits,
        "GatherBlockQuantized" => gather_block_quantized,
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
    // A power of two from 16 on, as onnxruntime requires: a block is whole bytes of values.
    let block = size(ctx, "block_size", None)?;
    if block < 16 || !block.is_power_of_two() {
        return Err(bad_attribute!("block_size {block} is not a power of 2 from 16 on"));
    }
    let a = input(inputs, 0)?;
    let dt = a.data_type();
    if !matches!(dt, DataType::Float | DataType::Float16) {
        return Err(unsupported!("MatMulNBits on {} inputs", dt.name()));
    }
    if a.shape.last() != Some(&k) {
        return Err(bad_input!("A {:?} does not end in K = {k}", a.shape));
    }
    let av = floats(a)?;
    let blocks = k.div_ceil(block);
    let blob = count(&[block, bits])? / 8;
    let b = input(inputs, 1)?;
    let Data::U8(bv) = &*b.data else { return Err(bad_input!("B must be uint8")) };
    if bv.len() != count(&[n, blocks, blob])? {
        return Err(bad_input!("B holds {} bytes, not N·blocks·blob = {n}·{blocks}·{blob}", bv.len()));
    }
    let scales = input(inputs, 2)?;
    if scales.data_type() != dt {
        return Err(bad_input!("scales of {} beside A of {}", scales.data_type().name(), dt.name()));
    }
    let sv = floats(scales)?;
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
        Some(t) if t.data_type() == dt && t.len() == n => Some(t.to_f64s()?),
        Some(_) => return Err(bad_input!("bias must be N = {n} values of A's type")),
    };
    ctx.check_elements(count(&[k, n])?)?;
    ctx.check_elements(count(&[av.len() / k, n])?)?;
    let default_zero = 1 << (bits - 1);
    // The weights' integers less their zero points, row n's K values together: each
    // block's bytes decoded in one pass, its zero point read once.
    let mut q = vec![0i16; k * n];
    let per_byte = 8 / bits;
    let mask = ((1u16 << bits) - 1) as u8;
    for (row, out_row) in q.chunks_mut(k.max(1)).enumerate().take(n) {
        for (blk, out) in out_row.chunks_mut(block).enumerate() {
            let z = zeros.map_or(default_zero, |z| unpack(&z[row * zero_row..(row + 1) * zero_row], blk, bits)) as i16;
            let bytes = &bv[(row * blocks + blk) * blob..][..blob];
            // Low bits first, 4 and 8 bits without a division per value (this loop is much
            // of a small model's time).
            match bits {
                8 => out.iter_mut().zip(bytes).for_each(|(o, &b)| *o = i16::from(b) - z),
                4 => {
                    for (pair, &b) in out.chunks_mut(2).zip(bytes) {
                        pair[0] = i16::from(b & 15) - z;
                        if let Some(high) = pair.get_mut(1) {
                            *high = i16::from(b >> 4) - z;
                        }
                    }
                }
                _ => {
                    for (i, o) in out.iter_mut().enumerate() {
                        *o = i16::from((bytes[i / per_byte] >> ((i % per_byte) * bits)) & mask) - z;
                    }
                }
            }
        }
    }
    let weights = Quantized { q: &q, scales: &sv, k, n, block };
    // onnxruntime multiplies in int8 at accuracy level 4 where its kernels have that path:
    // 4 and 8 bits, blocks of 16 to 256, a power of 2 (else it falls back to float32).
    let int8 = ctx.int("accuracy_level").unwrap_or(0) == 4
        && matches!(bits, 4 | 8)
        && (16..=256).contains(&block)
        && block.is_power_of_two();
    // A's shape with N for K.
    let mut shape = a.shape.clone();
    *shape.last_mut().unwrap_or(&mut 0) = n;
    let out = if int8 {
        int8_products(&av, &weights)
    } else {
        // The weights dequantized as N×K float32 (a row's blocks in turn), read transposed.
        let mut w = vec![0f32; n * k];
        for (row, (w_row, q_row)) in w.chunks_mut(k).zip(q.chunks(k)).enumerate() {
            for (blk, (w_blk, q_blk)) in w_row.chunks_mut(block).zip(q_row.chunks(block)).enumerate() {
                let scale = sv[row * blocks + blk];
                w_blk.iter_mut().zip(q_blk).for_each(|(x, &v)| *x = f32::from(v) * scale);
            }
        }
        let rows = av.len() / k;
        let mut out = vec![0f32; rows * n];
        sgemm(1.0, View::rows(&av, rows, k), View::rows(&w, n, k).t(), 0.0, &mut out)?;
        out
    };
    let mut out: Vec<f64> = out.into_iter().map(f64::from).collect();
    if let Some(bias) = bias {
        for (i, v) in out.iter_mut().enumerate() {
            *v = f64::from((*v + bias[i % n]) as f32);
        }
    }
    one(numeric_like(dt, shape, out)?)
}

/// A float32 or float16 tensor's values as float32 (float32 ones borrowed).
fn floats(t: &Tensor) -> Result<Cow<'_, [f32]>, KernelError> {
    Ok(match &*t.data {
        Data::F32(v) => Cow::Borrowed(&v[..]),
        _ => Cow::Owned(t.to_f64s()?.into_iter().map(|v| v as f32).collect()),
    })
}

/// MatMulNBits' weights: `q` the integers less their zero points, `[N, K]`, and `scales`
/// `[N, ⌈K/block⌉]`.
struct Quantized<'a> {
    q: &'a [i16],
    scales: &'a [f32],
    k: usize,
    n: usize,
    block: usize,
}

/// `A × Bᵀ` as onnxruntime's MLAS computes MatMulNBits at accuracy level 4: each row of A
/// quantized to int8 per block of K (`scale = max|a| / 127` and `q = a · (127 / max|a|)`
/// rounded half to even, in float32), each block's integer dot product with B's times both
/// scales, summed over the blocks. `a` is `[M, K]` row-major; the result `[M, N]`.
fn int8_products(a: &[f32], w: &Quantized<'_>) -> Vec<f32> {
    let Quantized { q, scales, k, n, block } = *w;
    let blocks = k.div_ceil(block);
    let rows = a.len().checked_div(k).unwrap_or(0);
    let mut out = vec![0f32; rows * n];
    let mut qa = vec![0i16; k];
    let mut a_scales = vec![0f32; blocks];
    for (m, row) in a.chunks_exact(k.max(1)).enumerate().take(rows) {
        for (b, chunk) in row.chunks(block).enumerate() {
            let max = chunk.iter().fold(0f32, |m, v| m.max(v.abs()));
            a_scales[b] = max / 127.0;
            let inverse = if max != 0.0 { 127.0 / max } else { 0.0 };
            for (i, &v) in chunk.iter().enumerate() {
                qa[b * block + i] = (v * inverse).round_ties_even().clamp(-128.0, 127.0) as i16;
            }
        }
        for col in 0..n {
            let weights = &q[col * k..][..k];
            let mut sum = 0f64;
            for b in 0..blocks {
                let span = b * block..((b + 1) * block).min(k);
                let (x, y) = (&qa[span.clone()], &weights[span]);
                let mut dot = 0i32;
                for i in 0..x.len().min(y.len()) {
                    dot += i32::from(x[i]) * i32::from(y[i]);
                }
                sum += f64::from(dot) * f64::from(a_scales[b]) * f64::from(scales[col * blocks + b]);
            }
            out[m * n + col] = sum as f32;
        }
    }
    out
}

/// GatherBlockQuantized: Gather of block-quantized `data` (input 0) along `gather_axis`
/// (default 0) by `indices` (input 1), dequantized with `scales` (input 2, one per block of
/// `block_size`, default 128, along `quantize_axis`, default 1) and `zero_points` (input
/// 3), in float32 `(q − zero)·scale`, as onnxruntime's CPU kernel does: uint8 data packs
/// `8/bits` values per byte along its last axis (gather_axis 0, quantize_axis last; the
/// zero points packed alike, 2^(bits−1) when absent), int4/uint4 data one value per element
/// (zero 0 when absent). An index out of range gives zeros. Float8/float4 data is refused.
fn gather_block_quantized(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (data, indices, scales) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    let rank = data.rank();
    let g = axis(ctx.int("gather_axis").unwrap_or(0), rank)?;
    let qa = axis(ctx.int("quantize_axis").unwrap_or(1), rank)?;
    let block = usize::try_from(ctx.int("block_size").unwrap_or(128))
        .ok()
        .filter(|&b| b >= 16 && b.is_power_of_two())
        .ok_or(bad_attribute!("block_size must be a power of 2 and at least 16"))?;
    let bits = ctx.int("bits").unwrap_or(4);
    let dt = data.data_type();
    // The logical values, their shape, and the zero points' values by scale index.
    let (values, shape, zeros): (Vec<i32>, Vec<usize>, Option<Vec<i32>>) = match (&*data.data, dt) {
        (Data::U8(bytes), _) => {
            let bits = usize::try_from(bits).ok().filter(|b| matches!(b, 2 | 4 | 8));
            let Some(bits) = bits else { return Err(bad_attribute!("uint8 data takes bits 2, 4 or 8")) };
            if g != 0 || qa + 1 != rank || g == qa {
                return Err(bad_input!("uint8 data needs gather_axis 0 and quantize_axis the last axis"));
            }
            let per = 8 / bits;
            let values = (0..bytes.len() * per).map(|i| unpack(bytes, i, bits)).collect();
            let mut shape = data.shape.clone();
            shape[rank - 1] *= per;
            let zeros = match optional(inputs, 3)? {
                Some(z) => {
                    let Data::U8(zb) = &*z.data else { return Err(bad_input!("zero_points must be uint8 as data is")) };
                    // Packed per row of the scales' last axis.
                    let row = *scales.shape.last().unwrap_or(&1);
                    let packed = row.div_ceil(per);
                    let rows = scales.len() / row.max(1);
                    if zb.len() != rows * packed {
                        return Err(bad_input!(
                            "zero_points of shape {:?} do not fit scales {:?}",
                            z.shape,
                            scales.shape
                        ));
                    }
                    Some((0..rows * row).map(|i| unpack(&zb[(i / row) * packed..], i % row, bits)).collect())
                }
                None => Some(vec![1 << (bits - 1)]),
            };
            (values, shape, zeros)
        }
        (_, DataType::Int4 | DataType::Uint4) => {
            if bits != 4 {
                return Err(bad_attribute!("int4/uint4 data takes bits 4"));
            }
            let values = data.to_i64s()?.into_iter().map(|v| v as i32).collect();
            let zeros = optional(inputs, 3)?
                .map(|z| z.to_i64s().map(|v| v.into_iter().map(|x| x as i32).collect()))
                .transpose()?;
            (values, data.shape.clone(), Some(zeros.unwrap_or_else(|| vec![0])))
        }
        _ => return Err(unsupported!("GatherBlockQuantized of {} data", dt.name())),
    };
    // Scales: data's shape with the quantize axis in blocks.
    let mut want = shape.clone();
    want[qa] = shape[qa].div_ceil(block);
    if scales.shape != want {
        return Err(bad_input!(
            "scales of shape {:?} do not fit data {:?} in blocks of {block}: {want:?}",
            scales.shape,
            shape
        ));
    }
    let zeros = zeros.unwrap_or_default();
    if zeros.len() != 1 && zeros.len() != scales.len() {
        return Err(bad_input!("{} zero points for {} scales", zeros.len(), scales.len()));
    }
    let sv: Vec<f32> = scales.to_f64s()?.into_iter().map(|v| v as f32).collect();
    let ids = indices.to_i64s()?;
    let gather_block = count(&shape[g + 1..])?;
    let axis_dim = shape[g];
    let gather_m = count(&shape[..g])?;
    let (q_dim, q_n) = (shape[qa], count(&shape[qa + 1..])?);
    let scale_row = q_dim.div_ceil(block) * q_n;
    let mut out_shape = shape[..g].to_vec();
    out_shape.extend_from_slice(&indices.shape);
    out_shape.extend_from_slice(&shape[g + 1..]);
    let total = count(&out_shape)?;
    ctx.check_grown(total, data.len())?;
    let mut out = Vec::with_capacity(total);
    for m in 0..gather_m {
        for &id in &ids {
            let id = if id < 0 { id + axis_dim as i64 } else { id };
            let Some(id) = usize::try_from(id).ok().filter(|&i| i < axis_dim) else {
                out.extend(std::iter::repeat_n(0.0, gather_block));
                continue;
            };
            let base = (m * axis_dim + id) * gather_block;
            for (at, &q) in values.iter().enumerate().skip(base).take(gather_block) {
                let (x, y, z) = (at / (q_dim * q_n), at % (q_dim * q_n) / q_n, at % q_n);
                let si = x * scale_row + y / block * q_n + z;
                let zero = zeros[if zeros.len() == 1 { 0 } else { si }];
                out.push(f64::from((q - zero) as f32 * sv[si]));
            }
        }
    }
    one(numeric_like(scales.data_type(), out_shape, out)?)
}
