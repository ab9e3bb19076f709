//! onnxruntime's QLinear operators on 8-bit tensors (QLinearAdd, QLinearMul, QLinearSigmoid,
//! QLinearLeakyRelu, QLinearConcat, QLinearGlobalAveragePool, QGemm), in onnxruntime's CPU
//! arithmetic: MLAS's float32 steps, rounding half to even, and the 256-entry lookup tables
//! its activations and QLinearConcat build (each 8-bit value dequantized, transformed and
//! quantized again).

use onnx_core::ir::DataType;

use super::super::{Ctx, Kernel, axis, input, one, optional};
use crate::broadcast::{input_strides, offsets, shape as broadcast_shape};
use crate::error::{KernelError, bad_input, unsupported};
use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "QLinearAdd" => |_, i| binary(i, false),
        "QLinearMul" => |_, i| binary(i, true),
        "QLinearSigmoid" => |_, i| lookup(i, |v| v.iter().map(|&x| mlas_logistic(x)).collect()),
        "QLinearLeakyRelu" => |ctx, i| {
            let alpha = ctx.float("alpha").unwrap_or(0.01);
            lookup(i, |v| v.iter().map(|&x| if x >= 0.0 { x } else { alpha * x }).collect())
        },
        "QLinearConcat" => concat,
        "QLinearGlobalAveragePool" => global_average_pool,
        "QGemm" => qgemm,
        "QLinearSoftmax" => softmax,
        // onnxruntime's own Q/DQ (its quantizer writes them for 16-bit activations, and for
        // int4 weights, with `UseQDQContribOps`): onnx's Q/DQ with an axis and no blocks,
        // the results in the zero point's and the scale's types, as onnx's kernels give.
        "QuantizeLinear" | "DequantizeLinear" => return crate::kernels::quant::kernel(op),
        _ => return None,
    };
    Some(k)
}

/// An 8-bit integer tensor's values, and whether they are signed.
pub(super) fn bytes(t: &Tensor, what: &str) -> Result<(Vec<i32>, bool), KernelError> {
    match &*t.data {
        Data::U8(v) => Ok((v.iter().map(|&x| i32::from(x)).collect(), false)),
        Data::I8(v) => Ok((v.iter().map(|&x| i32::from(x)).collect(), true)),
        _ => Err(bad_input!("{what} is {}: uint8 or int8 expected", t.data_type().name())),
    }
}

/// The one float32 value of a scale input (a scalar or a 1-element vector).
pub(super) fn scale_of(t: &Tensor, what: &str) -> Result<f32, KernelError> {
    match &*t.data {
        Data::F32(v) if v.len() == 1 && t.rank() <= 1 => Ok(v[0]),
        _ => Err(bad_input!("{what} must be one float32 value, got {} of shape {:?}", t.data_type().name(), t.shape)),
    }
}

/// The one value of an optional zero point (0 when omitted).
pub(super) fn zero_of(t: Option<&Tensor>, what: &str) -> Result<i32, KernelError> {
    let Some(t) = t else { return Ok(0) };
    let (v, _) = bytes(t, what)?;
    match v.as_slice() {
        [z] if t.rank() <= 1 => Ok(*z),
        _ => Err(bad_input!("{what} must be one value, got shape {:?}", t.shape)),
    }
}

/// The range of an 8-bit type.
pub(super) fn bounds(signed: bool) -> (i32, i32) {
    if signed { (-128, 127) } else { (0, 255) }
}

/// An 8-bit tensor from values already in its range.
pub(super) fn byte_tensor(shape: Vec<usize>, signed: bool, v: impl Iterator<Item = i32>) -> Tensor {
    let data = if signed { Data::I8(v.map(|x| x as i8).collect()) } else { Data::U8(v.map(|x| x as u8).collect()) };
    Tensor::new(shape, data)
}

/// MlasQuantizeLinear: `x / scale` held within the type's range less the zero point,
/// rounded half to even, plus the zero point.
pub(super) fn quantize(x: f32, scale: f32, zero: i32, signed: bool) -> i32 {
    let (lo, hi) = bounds(signed);
    let v = (x / scale).max((lo - zero) as f32).min((hi - zero) as f32);
    if v.is_nan() { zero } else { v.round_ties_even() as i32 + zero }
}

/// MlasRequantizeOutput: an int32 accumulator times a float32 scale, rounded half to even,
/// plus the zero point, saturated.
pub(super) fn requantize(acc: i32, scale: f32, zero: i32, signed: bool) -> i32 {
    let (lo, hi) = bounds(signed);
    let v = (acc as f32 * scale).max((lo - zero) as f32).min((hi - zero) as f32);
    if v.is_nan() { zero } else { v.round_ties_even() as i32 + zero }
}

/// onnxruntime's lookup table (QlinearBuildLookupTable): entry `b` is `f` of the value the
/// byte `b` dequantizes to (in float32, `scale·(x − zero)`), quantized again.
fn table(
    (x_scale, x_zero): (f32, i32),
    (y_scale, y_zero): (f32, i32),
    signed: bool,
    f: impl Fn(&[f32]) -> Vec<f32>,
) -> [i32; 256] {
    let inputs: Vec<f32> = (0..256u32)
        .map(|b| {
            let x = if signed { i32::from(b as u8 as i8) } else { b as i32 };
            x_scale * (x - x_zero) as f32
        })
        .collect();
    let mut out = [0; 256];
    for (o, y) in out.iter_mut().zip(f(&inputs)) {
        *o = quantize(y, y_scale, y_zero, signed);
    }
    out
}

/// The byte index of an 8-bit value (two's complement for int8).
fn index(x: i32) -> usize {
    usize::from(x as u8)
}

/// MLAS's logistic (Eigen's rational approximation, clamped to ±18), with the fused
/// multiply-adds of its x86-64 kernel. Inlined, so that a caller compiled with FMA
/// ([`crate::simd::widest`]) makes them instructions.
#[inline(always)]
pub(super) fn mlas_logistic(x: f32) -> f32 {
    // MLAS's constants as its source writes them.
    #[allow(clippy::excessive_precision)]
    const A: [f32; 5] =
        [4.37031012579801e-11, 1.15627324459942e-07, 6.08574864600143e-05, 8.51377133304701e-03, 2.48287947061529e-01];
    #[allow(clippy::excessive_precision)]
    const B: [f32; 6] = [
        6.10247389755681e-13,
        5.76102136993427e-09,
        6.29106785017040e-06,
        1.70198817374094e-03,
        1.16817656904453e-01,
        9.93151921023180e-01,
    ];
    if x.is_nan() {
        return x;
    }
    let v = x.clamp(-18.0, 18.0);
    let v2 = v * v;
    let mut p = v2.mul_add(A[0], A[1]);
    for &a in &A[2..] {
        p = p.mul_add(v2, a);
    }
    p *= v;
    let mut q = v2.mul_add(B[0], B[1]);
    for &b in &B[2..] {
        q = q.mul_add(v2, b);
    }
    (p / q + 0.5).clamp(0.0, 1.0)
}

/// QLinearSigmoid and QLinearLeakyRelu: X, X_scale, X_zero_point, Y_scale, Y_zero_point,
/// through the lookup table of `f`.
fn lookup(inputs: &[Option<&Value>], f: impl Fn(&[f32]) -> Vec<f32>) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let (v, signed) = bytes(x, "X")?;
    let xq = (scale_of(input(inputs, 1)?, "X_scale")?, zero_of(optional(inputs, 2)?, "X_zero_point")?);
    let yq = (scale_of(input(inputs, 3)?, "Y_scale")?, zero_of(optional(inputs, 4)?, "Y_zero_point")?);
    let t = table(xq, yq, signed, f);
    one(byte_tensor(x.shape.clone(), signed, v.iter().map(|&b| t[index(b)])))
}

/// QLinearAdd (MLAS's AVX2 kernel: `a·(sa/sc) + (b·(sb/sc) + fixed)` in fused multiply-adds,
/// `fixed` being `zc − (sa/sc·za + sb/sc·zb)`; a scalar operand folds into `fixed`) and
/// QLinearMul (`(a − za)·(b − zb)` in integers, times `sa·sb/sc`), both rounded half to even.
fn binary(inputs: &[Option<&Value>], mul: bool) -> Result<Vec<Value>, KernelError> {
    let (a, b) = (input(inputs, 0)?, input(inputs, 3)?);
    let ((av, signed), (bv, b_signed)) = (bytes(a, "A")?, bytes(b, "B")?);
    if signed != b_signed {
        return Err(bad_input!("A is {} but B is {}", a.data_type().name(), b.data_type().name()));
    }
    let (sa, za) = (scale_of(input(inputs, 1)?, "A_scale")?, zero_of(optional(inputs, 2)?, "A_zero_point")?);
    let (sb, zb) = (scale_of(input(inputs, 4)?, "B_scale")?, zero_of(optional(inputs, 5)?, "B_zero_point")?);
    let (sc, zc) = (scale_of(input(inputs, 6)?, "C_scale")?, zero_of(optional(inputs, 7)?, "C_zero_point")?);
    let out = broadcast_shape(&[&a.shape, &b.shape])?;
    let (lo, hi) = bounds(signed);
    if !mul && a.shape == b.shape {
        return one(byte_tensor(
            out,
            signed,
            same_shape_sum(&av, &bv, (sa, za), (sb, zb), (sc, zc), (lo, hi)).into_iter(),
        ));
    }
    let (ia, ib) = (offsets(&out, &input_strides(&a.shape, &out)), offsets(&out, &input_strides(&b.shape, &out)));
    let saturate = |v: f32| -> i32 {
        let r = if v.is_nan() { i32::MIN } else { v.round_ties_even() as i32 };
        r.saturating_add(if mul { zc } else { 0 }).clamp(lo, hi)
    };
    // The fused multiply-adds (onnxruntime's rounding) are one instruction in the copies
    // compiled for AVX2 and AVX-512; in the baseline copy they are a library call each.
    let values: Vec<i32> = crate::simd::widest(
        #[inline(always)]
        || {
            if mul {
                let ratio = sa * sb / sc;
                ia.zip(ib).map(|(i, j)| saturate(((av[i] - za) * (bv[j] - zb)) as f32 * ratio)).collect()
            } else {
                let (rac, rbc) = (sa / sc, sb / sc);
                let fixed = zc as f32 - (rac * za as f32 + rbc * zb as f32);
                if av.len() == 1 {
                    let fixed = fixed + av[0] as f32 * rac;
                    ib.map(|j| saturate((bv[j] as f32).mul_add(rbc, fixed))).collect()
                } else if bv.len() == 1 {
                    let fixed = fixed + bv[0] as f32 * rbc;
                    ia.map(|i| saturate((av[i] as f32).mul_add(rac, fixed))).collect()
                } else {
                    ia.zip(ib)
                        .map(|(i, j)| saturate((av[i] as f32).mul_add(rac, (bv[j] as f32).mul_add(rbc, fixed))))
                        .collect()
                }
            }
        },
    );
    one(byte_tensor(out, signed, values.into_iter()))
}

/// QLinearAdd of two tensors of one shape (a residual connection): the general path's
/// arithmetic element by element, without its broadcast offsets, so that the loop
/// vectorizes (the offsets made one such node a seventh of a quantized MobileNet's run).
fn same_shape_sum(
    av: &[i32],
    bv: &[i32],
    (sa, za): (f32, i32),
    (sb, zb): (f32, i32),
    (sc, zc): (f32, i32),
    (lo, hi): (i32, i32),
) -> Vec<i32> {
    let (rac, rbc) = (sa / sc, sb / sc);
    let fixed = zc as f32 - (rac * za as f32 + rbc * zb as f32);
    let mut out = vec![0i32; av.len()];
    let slots = &mut out[..];
    // By value: numbers read through references are reloaded after each store.
    crate::simd::widest(
        #[inline(always)]
        move || {
            for ((o, &x), &y) in slots.iter_mut().zip(av).zip(bv) {
                let v = (x as f32).mul_add(rac, (y as f32).mul_add(rbc, fixed));
                // Clamping before rounding gives what rounding then clamping gives (the
                // bounds are integers) and keeps the conversion in range; NaN (a zero
                // scale) saturates low, as in the general path.
                let v = if v.is_nan() { lo as f32 } else { v.clamp(lo as f32, hi as f32) };
                *o = v.round_ties_even() as i32;
            }
        },
    );
    out
}

/// QLinearConcat: Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input; each
/// input requantized through its lookup table (copied when its scale and zero point are
/// the output's), joined along `axis`.
fn concat(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (y_scale_t, y_zero_t) = (input(inputs, 0)?, input(inputs, 1)?);
    let yq = (scale_of(y_scale_t, "Y_scale")?, zero_of(Some(y_zero_t), "Y_zero_point")?);
    let signed = y_zero_t.data_type() == DataType::Int8;
    if inputs.len() < 5 || !(inputs.len() - 2).is_multiple_of(3) {
        return Err(bad_input!(
            "{} inputs: Y_scale, Y_zero_point and (X, scale, zero point) triples expected",
            inputs.len()
        ));
    }
    let mut parts = Vec::new();
    for k in (2..inputs.len()).step_by(3) {
        let x = input(inputs, k)?;
        let (v, s) = bytes(x, "an input")?;
        if s != signed {
            return Err(bad_input!(
                "input {k} is {}, Y_zero_point {}",
                x.data_type().name(),
                y_zero_t.data_type().name()
            ));
        }
        let xq = (scale_of(input(inputs, k + 1)?, "a scale")?, zero_of(Some(input(inputs, k + 2)?), "a zero point")?);
        let v = if xq == yq {
            v
        } else {
            let t = table(xq, yq, signed, <[f32]>::to_vec);
            v.iter().map(|&b| t[index(b)]).collect()
        };
        parts.push((x.shape.clone(), v));
    }
    let rank = parts[0].0.len();
    let a = axis(ctx.int("axis").ok_or(crate::error::bad_attribute!("QLinearConcat needs an axis"))?, rank)?;
    let mut shape = parts[0].0.clone();
    shape[a] = 0;
    for (s, _) in &parts {
        if s.len() != rank || s.iter().enumerate().any(|(i, &d)| i != a && d != shape[i]) {
            return Err(bad_input!("shapes {:?} and {s:?} cannot join along axis {a}", parts[0].0));
        }
        shape[a] += s[a];
    }
    let outer: usize = shape[..a].iter().product();
    let inner: usize = shape[a + 1..].iter().product();
    let mut out = Vec::with_capacity(outer * shape[a] * inner);
    for o in 0..outer {
        for (s, v) in &parts {
            let run = s[a] * inner;
            out.extend_from_slice(&v[o * run..(o + 1) * run]);
        }
    }
    one(byte_tensor(shape, signed, out.into_iter()))
}

/// What onnxruntime's quantized pools (QLinearAveragePool, QLinearGlobalAveragePool) read:
/// X's elements and signedness, X's and Y's scales and zero points, the layout (NHWC with
/// `channels_last`, else NCHW), the batch and channel counts and X's spatial axes.
pub(super) struct PoolOperands {
    pub values: Vec<i32>,
    pub signed: bool,
    pub x_scale: f32,
    pub x_zero: i32,
    pub y_scale: f32,
    pub y_zero: i32,
    pub last: bool,
    pub n: usize,
    pub c: usize,
    pub spatial: std::ops::Range<usize>,
}

/// Reads a quantized pool's operands (see [`PoolOperands`]); X must have rank 3 or more.
pub(super) fn pool_operands(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<PoolOperands, KernelError> {
    let x = input(inputs, 0)?;
    let (values, signed) = bytes(x, "X")?;
    let (x_scale, x_zero) = (scale_of(input(inputs, 1)?, "x_scale")?, zero_of(optional(inputs, 2)?, "x_zero_point")?);
    let (y_scale, y_zero) = (scale_of(input(inputs, 3)?, "y_scale")?, zero_of(optional(inputs, 4)?, "y_zero_point")?);
    if x.rank() < 3 {
        return Err(bad_input!("X has rank {}: at least 3 expected", x.rank()));
    }
    let last = ctx.int("channels_last").unwrap_or(0) != 0;
    let (n, c) = (x.shape[0], if last { x.shape[x.rank() - 1] } else { x.shape[1] });
    let spatial = if last { 1..x.rank() - 1 } else { 2..x.rank() };
    Ok(PoolOperands { values, signed, x_scale, x_zero, y_scale, y_zero, last, n, c, spatial })
}

/// QLinearGlobalAveragePool: each channel's integer sum less `image·x_zero`, requantized by
/// `x_scale / (y_scale·image)` (MLAS's arithmetic).
fn global_average_pool(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let PoolOperands { values: v, signed, x_scale: xs, x_zero: xz, y_scale: ys, y_zero: yz, last, n, c, spatial } =
        pool_operands(ctx, inputs)?;
    let image: usize = x.shape[spatial.clone()].iter().product();
    if image >= 0x100_0000 {
        return Err(unsupported!("an image of {image} elements is more than onnxruntime sums"));
    }
    let scale = xs / (ys * image as f32);
    let bias = -xz * image as i32;
    let mut out = Vec::with_capacity(n * c);
    for b in 0..n {
        for ch in 0..c {
            let sum: i32 = if last {
                (0..image).map(|p| v[(b * image + p) * c + ch]).sum()
            } else {
                v[(b * c + ch) * image..(b * c + ch + 1) * image].iter().sum()
            };
            out.push(requantize(sum + bias, scale, yz, signed));
        }
    }
    let shape = x.shape.iter().enumerate().map(|(i, &d)| if spatial.contains(&i) { 1 } else { d }).collect();
    one(byte_tensor(shape, signed, out.into_iter()))
}

/// QGemm: `Σ (a − za)(b − zb)` plus the int32 C, in integers, times
/// `alpha·a_scale·b_scale / y_scale` (b's scale and zero point per column or one), then
/// quantized with y_zero_point, or float32 when no y_scale is given.
fn qgemm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (a, b) = (input(inputs, 0)?, input(inputs, 3)?);
    let ((av, _), (bv, _)) = (bytes(a, "A")?, bytes(b, "B")?);
    if a.rank() != 2 || b.rank() != 2 {
        return Err(bad_input!("A {:?} and B {:?} must be matrices", a.shape, b.shape));
    }
    let (ta, tb) = (ctx.int("transA").unwrap_or(0) != 0, ctx.int("transB").unwrap_or(0) != 0);
    let (m, k) = if ta { (a.shape[1], a.shape[0]) } else { (a.shape[0], a.shape[1]) };
    let (kb, n) = if tb { (b.shape[1], b.shape[0]) } else { (b.shape[0], b.shape[1]) };
    if k != kb {
        return Err(bad_input!("A {:?} and B {:?} do not multiply (transA {ta}, transB {tb})", a.shape, b.shape));
    }
    ctx.check_elements(m * n)?;
    let a_scale = scale_of(input(inputs, 1)?, "a_scale")?;
    let za = zero_of(Some(input(inputs, 2)?), "a_zero_point")?;
    let b_scale = input(inputs, 4)?;
    let Data::F32(bs) = &*b_scale.data else { return Err(bad_input!("b_scale must be float32")) };
    let (zbv, _) = bytes(input(inputs, 5)?, "b_zero_point")?;
    let per_column = |v: usize, what: &str| {
        if v == 1 || v == n {
            Ok(())
        } else {
            Err(bad_input!("{v} values of {what} for {n} columns: 1 or {n} expected"))
        }
    };
    per_column(bs.len(), "b_scale")?;
    per_column(zbv.len(), "b_zero_point")?;
    let mut acc = vec![0i32; m * n];
    if let Some(c) = optional(inputs, 6)? {
        let Data::I32(cv) = &*c.data else { return Err(bad_input!("C must be int32")) };
        let strides = input_strides(&c.shape, &[m, n]);
        if c.rank() > 2 || c.shape.iter().rev().zip([n, m]).any(|(&d, want)| d != 1 && d != want) {
            return Err(bad_input!("C of shape {:?} does not broadcast to [{m}, {n}]", c.shape));
        }
        for (o, i) in acc.iter_mut().zip(offsets(&[m, n], &strides)) {
            *o = cv[i];
        }
    }
    let at = |i: usize, p: usize| if ta { av[p * m + i] } else { av[i * k + p] };
    let bt = |p: usize, j: usize| if tb { bv[j * k + p] } else { bv[p * n + j] };
    for i in 0..m {
        for j in 0..n {
            let zb = zbv[if zbv.len() == 1 { 0 } else { j }];
            let dot: i32 = (0..k).map(|p| (at(i, p) - za) * (bt(p, j) - zb)).fold(0i32, i32::wrapping_add);
            acc[i * n + j] = acc[i * n + j].wrapping_add(dot);
        }
    }
    let alpha = ctx.float("alpha").unwrap_or(1.0);
    let y_scale = optional(inputs, 7)?.map(|t| scale_of(t, "y_scale")).transpose()?;
    let scales: Vec<f32> = bs
        .iter()
        .map(|&s| {
            let v = alpha * a_scale * s;
            y_scale.map_or(v, |y| v / y)
        })
        .collect();
    let scale = |j: usize| scales[if scales.len() == 1 { 0 } else { j }];
    match optional(inputs, 8)? {
        Some(yz_t) => {
            let signed = yz_t.data_type() == DataType::Int8;
            let yz = zero_of(Some(yz_t), "y_zero_point")?;
            let out = acc.iter().enumerate().map(|(i, &v)| requantize(v, scale(i % n), yz, signed));
            one(byte_tensor(vec![m, n], signed, out))
        }
        None => {
            let out = acc.iter().enumerate().map(|(i, &v)| v as f32 * scale(i % n)).collect();
            one(Tensor::new(vec![m, n], Data::F32(out)))
        }
    }
}

/// QLinearSoftmax as onnxruntime computes it: a float32 table of `exp` over the 256 byte
/// values (shifted so that the largest sums stay finite), indexed by each value's distance
/// from its lane's maximum, the lane's sum in float32, and `nearbyint(e·⌊1/y_scale⌋ / sum)`
/// plus the zero point (held at most 255, or 127 for int8, and wrapping below the range as
/// onnxruntime's cast does). Opset 12 and
/// below flatten from `axis` (default 1), opset 13 on takes one axis (default −1).
fn softmax(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let (v, signed) = bytes(x, "X")?;
    let x_scale = scale_of(input(inputs, 1)?, "X_scale")?;
    let y_scale = scale_of(input(inputs, 3)?, "Y_scale")?;
    let yz = zero_of(optional(inputs, 4)?, "Y_zero_point")?;
    let opset = ctx.int("opset").ok_or(crate::error::bad_attribute!("QLinearSoftmax needs its opset attribute"))?;
    let rank = x.rank();
    if rank == 0 || v.is_empty() {
        return one(byte_tensor(x.shape.clone(), signed, v.into_iter()));
    }
    let a = axis(ctx.int("axis").unwrap_or(if opset < 13 { 1 } else { -1 }), rank)?;
    // Lanes of `len` elements `stride` apart.
    let (len, stride) =
        if opset < 13 { (x.shape[a..].iter().product(), 1) } else { (x.shape[a], x.shape[a + 1..].iter().product()) };
    let mut table = [0f32; 256];
    let shift = (f64::from(f32::MAX / len as f32)).ln();
    let shift = (shift - 5.0).max(0.0) / f64::from(x_scale);
    for i in 0..256i32 {
        let e = ((f64::from(i) - 255.0 + shift) * f64::from(x_scale)).exp() as f32;
        table[usize::from(if signed { (i - 128) as u8 } else { i as u8 })] = e;
    }
    let ys = (1.0 / y_scale).floor();
    let mut out = vec![0i32; v.len()];
    let lanes = v.len() / len.max(1);
    for lane in 0..lanes {
        let (outer, inner) = (lane / stride, lane % stride);
        let idx = |j: usize| (outer * len + j) * stride + inner;
        let max = (0..len).map(|j| v[idx(j)]).max().unwrap_or(0);
        let entry = |x: i32| -> f32 {
            if signed { table[usize::from((127 - max + x) as u8)] } else { table[(255 - max + x) as usize] }
        };
        let sum: f32 = (0..len).fold(0.0, |s, j| s + entry(v[idx(j)]));
        if sum == 0.0 {
            continue;
        }
        for j in 0..len {
            let q = (entry(v[idx(j)]) * ys / sum).round_ties_even() as i32 + yz;
            out[idx(j)] = if signed { if q > 127 { 127 } else { i32::from(q as i8) } } else { q.min(255) };
        }
    }
    one(byte_tensor(x.shape.clone(), signed, out.into_iter()))
}
