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

/// Small integers read one at a time where they lie.
enum Codes<'a> {
    /// `bits`-bit fields packed low bits first.
    Packed(&'a [u8], usize),
    /// Packed per row of `row` fields, each row starting at a byte (`packed` bytes a row).
    PackedRows { bytes: &'a [u8], bits: usize, row: usize, packed: usize },
    /// One code per byte of an int4/uint4 (int2/uint2) tensor.
    Coded(DataType, &'a [u8]),
    /// Values already read.
    Values(Vec<i32>),
    /// The same value everywhere.
    One(i32),
}

impl Codes<'_> {
    fn at(&self, i: usize) -> i32 {
        match self {
            Codes::Packed(bytes, bits) => unpack(bytes, i, *bits),
            Codes::PackedRows { bytes, bits, row, packed } => unpack(&bytes[(i / row) * packed..], i % row, *bits),
            Codes::Coded(dt, codes) => crate::coded::decode(*dt, codes[if codes.len() == 1 { 0 } else { i }]) as i32,
            Codes::Values(v) => v[if v.len() == 1 { 0 } else { i }],
            Codes::One(v) => *v,
        }
    }

    /// How many values it holds, where that is known and not one per position.
    fn len(&self) -> Option<usize> {
        match self {
            Codes::Coded(_, c) => Some(c.len()),
            Codes::Values(v) => Some(v.len()),
            Codes::PackedRows { bytes, row, packed, .. } => Some(bytes.len() / (*packed).max(1) * row),
            Codes::Packed(..) | Codes::One(_) => None,
        }
    }
}

/// MatMulNBits' attributes, checked.
#[derive(Clone, Copy)]
struct NBitsShape {
    k: usize,
    n: usize,
    bits: usize,
    block: usize,
    /// Whether the products are taken in int8 (see [`int8_products`]).
    int8: bool,
}

fn nbits_shape(ctx: &Ctx<'_>) -> Result<NBitsShape, KernelError> {
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
    // onnxruntime multiplies in int8 at accuracy level 4 where its kernels have that path:
    // 4 and 8 bits, blocks of 16 to 256, a power of 2 (else it falls back to float32), and
    // only for weights it packed when the session began, constant B: with B a graph input
    // it dequantizes and multiplies in float32 (see [`prepare`]).
    let int8 = ctx.int("accuracy_level").unwrap_or(0) == 4 && matches!(bits, 4 | 8) && (16..=256).contains(&block);
    Ok(NBitsShape { k, n, bits, block, int8 })
}

/// MatMulNBits' weights as its products read them, decoded from B, the scales and the zero
/// points: once per plan when those are constants (what genai's models hold), else on
/// each run.
struct NBitsWeights {
    /// The scales' element type, which A's must be.
    scale_type: DataType,
    form: WeightForm,
}

enum WeightForm {
    /// For the int8 products: the integers less their zero points as float32, `[K, N]`
    /// (row k holds every column's k-th weight, so the products run along N in vector
    /// lanes), and the scales `[⌈K/block⌉, N]`.
    Integers { q: Vec<f32>, scales: Vec<f32> },
    /// Dequantized to float32, `[K, N]`: B as the product reads it, row by row. Kept as
    /// `[N, K]` and read transposed, it was packed into panels by the GEMM on every run
    /// (the GEMM's reading of a few rows of A in place needs B's rows contiguous).
    Floats(Vec<f32>),
}

impl NBitsWeights {
    fn bytes(&self) -> usize {
        match &self.form {
            WeightForm::Integers { q, scales } => (q.len() + scales.len()) * 4,
            WeightForm::Floats(w) => w.len() * 4,
        }
    }
}

/// Constant weights whose decoded form did not fit the plan's budget for such forms: they
/// are decoded on each run, for the products onnxruntime takes with constant weights.
struct ConstantWeights;

/// The operators whose kernels take their weights decoded when the plan is made.
pub fn prepare(op: &str) -> Option<super::super::Prepare> {
    match op {
        "MatMulNBits" => Some(|ctx, inputs| {
            let named = |i: usize| ctx.node.inputs.get(i).is_some_and(|n| !n.is_empty());
            // B and the scales, and the zero points where given, constant; no g_idx.
            let constant = |i: usize| inputs.get(i).copied().flatten().is_some();
            if !constant(1) || !constant(2) || named(3) && !constant(3) || named(4) {
                return Ok(None);
            }
            let shape = nbits_shape(ctx)?;
            // Either form holds a float32 per weight.
            let fits = count(&[shape.k, shape.n, 4])
                .is_ok_and(|bytes| ctx.budget.check_more(bytes, "MatMulNBits' decoded weights").is_ok());
            let decoded = if fits { decode_weights(ctx, &shape, inputs).ok() } else { None };
            let Some(weights) = decoded else {
                return Ok(Some((std::sync::Arc::new(ConstantWeights) as super::super::Prepared, 0)));
            };
            let bytes = weights.bytes();
            Ok(Some((std::sync::Arc::new(weights) as super::super::Prepared, bytes)))
        }),
        _ => None,
    }
}

/// Decodes B (input 1) with the scales (2) and zero points (3).
fn decode_weights(ctx: &Ctx<'_>, shape: &NBitsShape, inputs: &[Option<&Value>]) -> Result<NBitsWeights, KernelError> {
    let NBitsShape { k, n, bits, block, int8 } = *shape;
    let blocks = k.div_ceil(block);
    let blob = count(&[block, bits])? / 8;
    let b = input(inputs, 1)?;
    let Data::U8(bv) = &*b.data else { return Err(bad_input!("B must be uint8")) };
    if bv.len() != count(&[n, blocks, blob])? {
        return Err(bad_input!("B holds {} bytes, not N·blocks·blob = {n}·{blocks}·{blob}", bv.len()));
    }
    let scales = input(inputs, 2)?;
    let scale_type = scales.data_type();
    if !matches!(scale_type, DataType::Float | DataType::Float16) {
        return Err(unsupported!("MatMulNBits with scales of {}", scale_type.name()));
    }
    let sv = scales.to_f32s()?;
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
            // Zero points of the scales' type, one per block, not rounded (what HQQ
            // writes): `(q − zero)·scale` in float32, multiplied in float32.
            _ if z.data_type() == scale_type => {
                if z.len() != n * blocks {
                    return Err(bad_input!("{} zero points for {n} rows of {blocks} blocks", z.len()));
                }
                let zf = z.to_f32s()?;
                ctx.check_elements(count(&[k, n])?)?;
                // Written straight into `[K, N]`: row n's K values down column n.
                let mut w = vec![0f32; n * k];
                for row in 0..n {
                    for blk in 0..blocks {
                        let (scale, zero) = (sv[row * blocks + blk], zf[row * blocks + blk]);
                        let bytes = &bv[(row * blocks + blk) * blob..][..blob];
                        for i in 0..block.min(k - blk * block) {
                            let code = unpack(bytes, i, bits) as f32;
                            w[(blk * block + i) * n + row] = (code - zero) * scale;
                        }
                    }
                }
                return Ok(NBitsWeights { scale_type, form: WeightForm::Floats(w) });
            }
            _ => {
                return Err(bad_input!(
                    "zero points of {} beside scales of {}: packed uint8 or the scales' type",
                    z.data_type().name(),
                    scale_type.name()
                ));
            }
        },
    };
    ctx.check_elements(count(&[k, n])?)?;
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
            // Low bits first, 4 and 8 bits without a division per value.
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
    let form = if int8 {
        // Transposed: k-major integers, block-major scales.
        let mut qt = vec![0f32; k * n];
        for (col, q_col) in q.chunks(k.max(1)).enumerate().take(n) {
            for (i, &v) in q_col.iter().enumerate() {
                qt[i * n + col] = f32::from(v);
            }
        }
        let mut st = vec![0f32; blocks * n];
        for col in 0..n {
            for b in 0..blocks {
                st[b * n + col] = sv[col * blocks + b];
            }
        }
        WeightForm::Integers { q: qt, scales: st }
    } else {
        // Dequantized as K×N float32: row n's K values (a block at a time) down column n.
        let mut w = vec![0f32; n * k];
        for (row, q_row) in q.chunks(k.max(1)).enumerate().take(n) {
            for (blk, q_blk) in q_row.chunks(block).enumerate() {
                let scale = sv[row * blocks + blk];
                for (i, &v) in q_blk.iter().enumerate() {
                    w[(blk * block + i) * n + row] = f32::from(v) * scale;
                }
            }
        }
        WeightForm::Floats(w)
    };
    Ok(NBitsWeights { scale_type, form })
}

fn matmul_nbits(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let shape = nbits_shape(ctx)?;
    let NBitsShape { k, n, block, .. } = shape;
    let a = input(inputs, 0)?;
    let dt = a.data_type();
    if !matches!(dt, DataType::Float | DataType::Float16) {
        return Err(unsupported!("MatMulNBits on {} inputs", dt.name()));
    }
    if a.shape.last() != Some(&k) {
        return Err(bad_input!("A {:?} does not end in K = {k}", a.shape));
    }
    // g_idx (act-order block indices): onnxruntime's reading of it was not matched yet (a
    // case taking each K index's scale and zero point from block g_idx[k] differed).
    if optional(inputs, 4)?.is_some() {
        return Err(unsupported!("MatMulNBits with g_idx"));
    }
    let decoded;
    let weights = match ctx.prepared.map(|p| p.as_any()) {
        Some(form) if let Some(w) = form.downcast_ref::<NBitsWeights>() => w,
        // Constant weights decoded on each run.
        Some(form) if form.is::<ConstantWeights>() => {
            decoded = decode_weights(ctx, &shape, inputs)?;
            &decoded
        }
        // Weights given as a graph input: onnxruntime multiplies in float32 whatever the
        // accuracy level.
        _ => {
            decoded = decode_weights(ctx, &NBitsShape { int8: false, ..shape }, inputs)?;
            &decoded
        }
    };
    if weights.scale_type != dt {
        return Err(bad_input!("scales of {} beside A of {}", weights.scale_type.name(), dt.name()));
    }
    let bias = match optional(inputs, 5)? {
        None => None,
        Some(t) if t.data_type() == dt && t.len() == n => Some(t.to_f32s()?),
        Some(_) => return Err(bad_input!("bias must be N = {n} values of A's type")),
    };
    let av = a.to_f32s()?;
    let rows = av.len() / k;
    ctx.check_elements(count(&[rows, n])?)?;
    // A's shape with N for K.
    let mut out_shape = a.shape.clone();
    *out_shape.last_mut().unwrap_or(&mut 0) = n;
    let mut out = match &weights.form {
        WeightForm::Integers { q, scales } => int8_products(&av, &Quantized { q, scales, k, n, block }),
        WeightForm::Floats(w) => {
            let mut out = vec![0f32; rows * n];
            sgemm(1.0, View::rows(&av, rows, k), View::rows(w, k, n), 0.0, &mut out)?;
            out
        }
    };
    if let Some(bias) = bias {
        for row in out.chunks_mut(n) {
            row.iter_mut().zip(bias.iter()).for_each(|(v, b)| *v += b);
        }
    }
    match dt {
        DataType::Float => one(Tensor::new(out_shape, Data::F32(out.into()))),
        // Rounded from float32 in whole slices (through f64, one value at a time in
        // software, the rounding was a tenth of a float16 Llama's run).
        DataType::Float16 | DataType::Bfloat16 => one(Tensor::new(out_shape, crate::number::narrowed_half(&out, dt))),
        _ => one(numeric_like(dt, out_shape, out.into_iter().map(f64::from).collect())?),
    }
}

/// MatMulNBits' weights for the int8 products: `q` the integers less their zero points
/// `[K, N]` (as float32), `scales` `[⌈K/block⌉, N]`.
struct Quantized<'a> {
    q: &'a [f32],
    scales: &'a [f32],
    k: usize,
    n: usize,
    block: usize,
}

/// `A × Bᵀ` as onnxruntime's MLAS computes MatMulNBits at accuracy level 4: each row of A
/// quantized to int8 per block of K (`scale = max|a| / 127` and `q = a · (127 / max|a|)`
/// rounded half to even, in float32), each block's integer dot product with B's times both
/// scales, summed over the blocks. `a` is `[M, K]` row-major; the result `[M, N]`.
///
/// The integer products are taken in float32, exactly: |a| ≤ 127 and |b| ≤ 255 (8 bits
/// less a zero point), so a block of at most 256 sums to under 2^23, and every partial sum
/// is an integer float32 holds. They run along N (a row of B's transposed integers at a
/// time, in the widest vector lanes the processor has), with no sum across lanes.
fn int8_products(a: &[f32], w: &Quantized<'_>) -> Vec<f32> {
    /// Columns per panel: four AVX-512 registers of sums.
    const PANEL: usize = 64;
    let Quantized { q, scales, k, n, block } = *w;
    let blocks = k.div_ceil(block);
    let rows = a.len().checked_div(k).unwrap_or(0);
    let mut out = vec![0f32; rows * n];
    let mut qa = vec![0f32; k];
    let mut a_scales = vec![0f32; blocks];
    let mut dots = vec![0f32; n];
    let mut sums = vec![0f64; n];
    crate::gemm::count_flops(2 * rows * n * k);
    crate::simd::widest(
        #[inline(always)]
        || {
            for (m, row) in a.chunks_exact(k.max(1)).enumerate().take(rows) {
                for (b, chunk) in row.chunks(block).enumerate() {
                    let max = chunk.iter().fold(0f32, |m, v| m.max(v.abs()));
                    a_scales[b] = max / 127.0;
                    let inverse = if max != 0.0 { 127.0 / max } else { 0.0 };
                    for (i, &v) in chunk.iter().enumerate() {
                        qa[b * block + i] = (v * inverse).round_ties_even().clamp(-128.0, 127.0);
                    }
                }
                sums.iter_mut().for_each(|s| *s = 0.0);
                for b in 0..blocks {
                    let span = b * block..((b + 1) * block).min(k);
                    // Columns a panel at a time, its sums held in registers over the block.
                    let mut c0 = 0;
                    while c0 < n {
                        let width = PANEL.min(n - c0);
                        let mut acc = [0f32; PANEL];
                        if width == PANEL {
                            for i in span.clone() {
                                let x = qa[i];
                                let weights: &[f32; PANEL] =
                                    q[i * n + c0..][..PANEL].try_into().unwrap_or(&[0.0; PANEL]);
                                for j in 0..PANEL {
                                    acc[j] += x * weights[j];
                                }
                            }
                        } else {
                            for i in span.clone() {
                                let x = qa[i];
                                let weights = &q[i * n + c0..][..width];
                                acc.iter_mut().zip(weights).for_each(|(d, &w)| *d += x * w);
                            }
                        }
                        dots[c0..c0 + width].copy_from_slice(&acc[..width]);
                        c0 += width;
                    }
                    let sa = f64::from(a_scales[b]);
                    let col_scales = &scales[b * n..][..n];
                    for ((s, &d), &sb) in sums.iter_mut().zip(&dots).zip(col_scales) {
                        *s += f64::from(d) * sa * f64::from(sb);
                    }
                }
                out[m * n..(m + 1) * n].iter_mut().zip(&sums).for_each(|(o, &s)| *o = s as f32);
            }
        },
    );
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
    // The logical values, their shape, and the zero points by scale index, read where they
    // lie: a model's embedding table is mostly rows no id asks for (unpacking all of it on
    // each run took 15 µs of a 70 µs Gemma 3 step, and grows with the vocabulary).
    let (values, shape, zeros): (Codes<'_>, Vec<usize>, Codes<'_>) = match (&*data.data, dt) {
        (Data::U8(bytes), _) => {
            let bits = usize::try_from(bits).ok().filter(|b| matches!(b, 2 | 4 | 8));
            let Some(bits) = bits else { return Err(bad_attribute!("uint8 data takes bits 2, 4 or 8")) };
            if g != 0 || qa + 1 != rank || g == qa {
                return Err(bad_input!("uint8 data needs gather_axis 0 and quantize_axis the last axis"));
            }
            let per = 8 / bits;
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
                    Codes::PackedRows { bytes: zb, bits, row, packed }
                }
                None => Codes::One(1 << (bits - 1)),
            };
            (Codes::Packed(bytes, bits), shape, zeros)
        }
        (Data::Coded(_, codes), DataType::Int4 | DataType::Uint4) => {
            if bits != 4 {
                return Err(bad_attribute!("int4/uint4 data takes bits 4"));
            }
            let zeros = match optional(inputs, 3)? {
                Some(z) => match &*z.data {
                    Data::Coded(zdt, zc) if crate::coded::is_integer(*zdt) => Codes::Coded(*zdt, zc),
                    _ => Codes::Values(z.to_i64s()?.into_iter().map(|x| x as i32).collect()),
                },
                None => Codes::One(0),
            };
            (Codes::Coded(dt, codes), data.shape.clone(), zeros)
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
    if let Some(n) = zeros.len().filter(|&n| n != 1 && n != scales.len()) {
        return Err(bad_input!("{n} zero points for {} scales", scales.len()));
    }
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
    // The scales of the rows asked for only, float32 as onnxruntime takes them.
    let scale_at: Box<dyn Fn(usize) -> f32 + '_> = match &*scales.data {
        Data::F32(v) if scales.layout.is_none() => Box::new(move |i| v[i]),
        Data::F16(v) if scales.layout.is_none() => Box::new(move |i| v[i].to_f32()),
        _ => {
            let all = scales.to_f32s()?.into_owned();
            Box::new(move |i| all[i])
        }
    };
    let mut out = Vec::with_capacity(total);
    for m in 0..gather_m {
        for &id in &ids {
            let id = if id < 0 { id + axis_dim as i64 } else { id };
            let Some(id) = usize::try_from(id).ok().filter(|&i| i < axis_dim) else {
                out.extend(std::iter::repeat_n(0.0, gather_block));
                continue;
            };
            let base = (m * axis_dim + id) * gather_block;
            for at in base..base + gather_block {
                let (x, y, z) = (at / (q_dim * q_n), at % (q_dim * q_n) / q_n, at % q_n);
                let si = x * scale_row + y / block * q_n + z;
                out.push(f64::from((values.at(at) - zeros.at(si)) as f32 * scale_at(si)));
            }
        }
    }
    one(numeric_like(scales.data_type(), out_shape, out)?)
}
