//! Linear quantization: QuantizeLinear and DequantizeLinear, per tensor, per axis or per
//! block, into and out of the 8- and 16-bit integer types (rounding half to even and
//! saturating, as the spec says).

use onnx_core::ir::DataType;

use super::{Ctx, Kernel, axis, input, one, optional};
use crate::broadcast::strides;
use crate::error::{KernelError, bad_input, limit, unsupported};
use crate::kernels::common::dtype_attr;
use crate::kernels::common::numeric_like;
use crate::value::Value;
use crate::value::{Data, Tensor};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "DynamicQuantizeLinear" => dynamic_quantize,
        "QuantizeLinear" => |ctx, i| {
            let (x, scale, zero) = (input(i, 0)?, input(i, 1)?, optional(i, 2)?);
            let default = zero.map_or(DataType::Uint8, Tensor::data_type);
            let dt = match ctx.int("output_dtype") {
                Some(0) | None => default,
                Some(_) => dtype_attr(ctx, "output_dtype", default)?,
            };
            let (lo, hi) = range(dt)?;
            if let Some(out) = quantize_f32_per_tensor(x, scale, zero, dt, lo, hi) {
                return one(out);
            }
            let index = scale_index(ctx, x, scale)?;
            let (s, z) = (scale.to_f64s()?, zero.map(Tensor::to_f64s).transpose()?);
            same_count(&s, z.as_deref())?;
            let v = x.to_f64s()?;
            // The division in the input's precision (float32 inputs divide in f32, as onnx
            // does): halves that f64 would round the other way then round as onnx's.
            let single = x.data_type() != DataType::Double;
            let float_target = crate::coded::is_coded(dt) && !crate::coded::is_integer(dt);
            let out = v
                .iter()
                .enumerate()
                .map(|(i, &x)| {
                    let k = index(i);
                    let q = if single { f64::from(x as f32 / s[k] as f32) } else { x / s[k] };
                    // Integers round half to even; a float8 or float4 target rounds when encoded.
                    let q = if float_target { q } else { q.round_ties_even() };
                    (q + z.as_ref().map_or(0.0, |z| z[k])).clamp(lo, hi)
                })
                .collect();
            one(numeric_like(dt, x.shape.clone(), out)?)
        },
        "DequantizeLinear" => |ctx, i| {
            let (x, scale, zero) = (input(i, 0)?, input(i, 1)?, optional(i, 2)?);
            if ctx.int("output_dtype").is_none_or(|t| t == 0)
                && let Some(out) = dequantize_per_tensor_to_f32(x, scale, zero).or_else(|| {
                    let a = axis(ctx.int("axis").unwrap_or(1), x.rank()).ok()?;
                    (ctx.int("block_size").unwrap_or(0) <= 0).then(|| dequantize_per_axis_to_f32(x, scale, zero, a))?
                })
            {
                return one(out);
            }
            let index = scale_index(ctx, x, scale)?;
            let (s, z) = (scale.to_f64s()?, zero.map(Tensor::to_f64s).transpose()?);
            same_count(&s, z.as_deref())?;
            let v = x.to_f64s()?;
            let out = v.iter().enumerate().map(|(i, &x)| {
                let k = index(i);
                (x - z.as_ref().map_or(0.0, |z| z[k])) * s[k]
            });
            let dt = match ctx.int("output_dtype") {
                Some(0) | None => scale.data_type(),
                Some(_) => dtype_attr(ctx, "output_dtype", scale.data_type())?,
            };
            one(numeric_like(dt, x.shape.clone(), out.collect())?)
        },
        _ => return None,
    };
    Some(k)
}

/// The zero point has the scale's shape (ONNX: "same shape as y_scale"); a mismatch would
/// index past one of them.
fn same_count(scale: &[f64], zero: Option<&[f64]>) -> Result<(), KernelError> {
    match zero {
        Some(z) if z.len() != scale.len() => {
            Err(bad_input!("{} zero points for {} scales: they must match", z.len(), scale.len()))
        }
        _ => Ok(()),
    }
}

/// The range of a quantized type.
fn range(dt: DataType) -> Result<(f64, f64), KernelError> {
    Ok(match dt {
        DataType::Uint8 => (0.0, 255.0),
        DataType::Int8 => (-128.0, 127.0),
        DataType::Uint16 => (0.0, 65535.0),
        DataType::Int16 => (-32768.0, 32767.0),
        DataType::Int32 => (f64::from(i32::MIN), f64::from(i32::MAX)),
        DataType::Int4 => (-8.0, 7.0),
        DataType::Uint4 => (0.0, 15.0),
        DataType::Int2 => (-2.0, 1.0),
        DataType::Uint2 => (0.0, 3.0),
        DataType::Float8e4m3fn => (-448.0, 448.0),
        DataType::Float8e4m3fnuz => (-240.0, 240.0),
        DataType::Float8e5m2 => (-57344.0, 57344.0),
        DataType::Float8e5m2fnuz => (-57344.0, 57344.0),
        DataType::Float4e2m1 => (-6.0, 6.0),
        other => return Err(unsupported!("quantizing to {} is not supported yet", other.name())),
    })
}

/// For each element of `x`, the index of its scale (and zero point): one scale for the
/// tensor, one per position along `axis`, or one per block of `block_size` along it.
fn scale_index(ctx: &Ctx<'_>, x: &Tensor, scale: &Tensor) -> Result<Box<dyn Fn(usize) -> usize>, KernelError> {
    if scale.len() == 1 {
        return Ok(Box::new(|_| 0));
    }
    let a = axis(ctx.int("axis").unwrap_or(1), x.rank())?;
    let block = ctx.int("block_size").unwrap_or(0);
    let xs = strides(&x.shape);
    if block <= 0 {
        if scale.rank() != 1 || scale.len() != x.shape[a] {
            return Err(bad_input!("{} scales for an axis of {}", scale.len(), x.shape[a]));
        }
        let (stride, n) = (xs[a], x.shape[a]);
        return Ok(Box::new(move |i| (i / stride) % n));
    }
    let block = usize::try_from(block).map_err(|_| limit!("block_size {block} is too large"))?;
    // Blocked scales: the input's shape, with ⌈size / block_size⌉ blocks along the axis.
    let blocked: Vec<usize> =
        x.shape.iter().enumerate().map(|(ax, &d)| if ax == a { d.div_ceil(block) } else { d }).collect();
    if scale.shape != blocked {
        return Err(bad_input!(
            "scales of shape {:?} for input {:?} in blocks of {block} along axis {a}: {blocked:?} expected",
            scale.shape,
            x.shape
        ));
    }
    let (shape, ss) = (x.shape.clone(), strides(&scale.shape));
    Ok(Box::new(move |i| {
        (0..shape.len())
            .map(|ax| {
                let c = (i / xs[ax]) % shape[ax];
                (if ax == a { c / block } else { c }) * ss[ax]
            })
            .sum()
    }))
}

/// DynamicQuantizeLinear: a float32 tensor into uint8 with a scale and zero point chosen
/// from its range (widened to hold 0), in float32 steps as onnx's function body takes them.
fn dynamic_quantize(_: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let Data::F32(v) = &*x.data else {
        return Err(bad_input!("DynamicQuantizeLinear takes float32, got {}", x.data_type().name()));
    };
    let lo = v.iter().copied().fold(0.0f32, f32::min);
    let hi = v.iter().copied().fold(0.0f32, f32::max);
    let scale = (hi - lo) / 255.0;
    let zero = (0.0 - lo / scale).clamp(0.0, 255.0).round_ties_even();
    let scale_t = Tensor::new(vec![], Data::F32(vec![scale].into()));
    let zero_t = Tensor::new(vec![], Data::U8(vec![zero as u8].into()));
    let y = quantize_f32_per_tensor(x, &scale_t, Some(&zero_t), DataType::Uint8, 0.0, 255.0)
        .ok_or(bad_input!("DynamicQuantizeLinear: quantizing failed"))?;
    Ok(vec![Value::Tensor(y), Value::Tensor(scale_t), Value::Tensor(zero_t)])
}

/// The common case without detours: a float32 tensor quantized per tensor into 8 or 16 bits.
fn quantize_f32_per_tensor(
    x: &Tensor,
    scale: &Tensor,
    zero: Option<&Tensor>,
    dt: DataType,
    lo: f64,
    hi: f64,
) -> Option<Tensor> {
    let (Data::F32(v), Data::F32(s)) = (&*x.data, &*scale.data) else { return None };
    if s.len() != 1 || !matches!(dt, DataType::Uint8 | DataType::Int8 | DataType::Uint16 | DataType::Int16) {
        return None;
    }
    let z = match zero {
        Some(z) if z.len() == 1 => z.to_f64s().ok()?[0] as f32,
        Some(_) => return None,
        None => 0.0,
    };
    let quantize = Quantizer::new(s[0], z, lo as f32, hi as f32);
    // The integer's low byte (or two) is the element, two's complement for the signed types.
    let data = match dt {
        DataType::Uint8 => Data::U8(crate::simd::low_bytes(v, |x| quantize.bits(x)).into()),
        DataType::Int8 => Data::I8(crate::simd::low_parts(v, |x| quantize.bits(x), |w| w as i8).into()),
        DataType::Uint16 => Data::U16(crate::simd::low_parts(v, |x| quantize.bits(x), |w| w as u16).into()),
        DataType::Int16 => Data::I16(crate::simd::low_parts(v, |x| quantize.bits(x), |w| w as i16).into()),
        _ => return None,
    };
    Some(Tensor::new(x.shape.clone(), data))
}

/// Quantizing float32 values to integers of at most 16 bits: `x / scale` rounded half to
/// even, plus the zero point, saturated to the type's range, in float32 as onnx computes it.
///
/// Every step is a float32 addition, comparison or bit operation, so the loop vectorizes:
/// `round_ties_even` is a call to `rintf` per element unless the target has SSE4.1, and
/// the saturating `as` casts need fix-ups; those took a third of a quantized transformer's
/// run. Adding 1.5·2²³ rounds a value below 2²² in magnitude to an integer (the FPU's
/// default mode rounds half to even) held in the sum's low bits; the zero point and both
/// bounds are added to the same offset, so the rest of the arithmetic is exact.
#[derive(Clone, Copy)]
struct Quantizer {
    scale: f32,
    zero: f32,
    lo: f32,
    hi: f32,
}

const SHIFT: f32 = 12_582_912.0; // 1.5 * 2^23: its ulp is 1
const SHIFT_LIMIT: f32 = 4_194_304.0; // 2^22

impl Quantizer {
    fn new(scale: f32, zero: f32, lo: f32, hi: f32) -> Quantizer {
        Quantizer { scale, zero, lo: lo + SHIFT, hi: hi + SHIFT }
    }

    /// The quantized value of `x` in the low bits (NaN gives 0, as a cast would).
    #[inline(always)]
    fn bits(&self, x: f32) -> u32 {
        let Quantizer { scale, zero, lo, hi } = *self;
        // Beyond ±2²² the result saturates anyway.
        let q = (x / scale).clamp(-SHIFT_LIMIT, SHIFT_LIMIT) + SHIFT;
        let q = (q + zero).clamp(lo, hi);
        let q = if q.is_nan() { SHIFT } else { q };
        q.to_bits().wrapping_sub(SHIFT.to_bits())
    }
}

/// The other common case: weights dequantized per output channel (one float32 scale per
/// position along `axis`), 8-, 16- or 32-bit integers (biases) into float32. Each run of
/// elements sharing a scale is one loop; the arithmetic is the general path's (in f64,
/// rounded once), so the results are the same.
fn dequantize_per_axis_to_f32(x: &Tensor, scale: &Tensor, zero: Option<&Tensor>, axis: usize) -> Option<Tensor> {
    let Data::F32(s) = &*scale.data else { return None };
    let n = *x.shape.get(axis)?;
    if scale.rank() != 1 || s.len() != n || zero.is_some_and(|z| z.len() != n) {
        return None;
    }
    let z = match zero {
        Some(z) => z.to_f64s().ok()?,
        None => vec![0.0; n],
    };
    let inner = super::count(&x.shape[axis + 1..]).ok()?;
    fn run<T: Copy>(v: &[T], inner: usize, s: &[f32], z: &[f64], to: impl Fn(T) -> f64) -> Vec<f32> {
        let mut out = Vec::with_capacity(v.len());
        for (block, values) in v.chunks(inner.max(1)).enumerate() {
            let k = block % s.len();
            let (scale, zero) = (f64::from(s[k]), z[k]);
            out.extend(values.iter().map(|&q| ((to(q) - zero) * scale) as f32));
        }
        out
    }
    let out = match &*x.data {
        Data::U8(v) => run(v, inner, s, &z, f64::from),
        Data::I8(v) => run(v, inner, s, &z, f64::from),
        Data::U16(v) => run(v, inner, s, &z, f64::from),
        Data::I16(v) => run(v, inner, s, &z, f64::from),
        Data::I32(v) => run(v, inner, s, &z, f64::from),
        _ => return None,
    };
    Some(Tensor::new(x.shape.clone(), Data::F32(out.into())))
}

/// The common case without detours: 8- and 16-bit integers dequantized per tensor into
/// float32 (`q − z` is exact in float32, so the product is rounded once, as in f64).
fn dequantize_per_tensor_to_f32(x: &Tensor, scale: &Tensor, zero: Option<&Tensor>) -> Option<Tensor> {
    let Data::F32(s) = &*scale.data else { return None };
    if s.len() != 1 || zero.is_some_and(|z| z.len() != 1) {
        return None;
    }
    let z = zero.map_or(Some(0.0), |z| z.to_f64s().ok().map(|v| v[0] as f32))?;
    let s = s[0];
    // Loops compiled for the widest vectors (the baseline's four lanes took 1.8 ms of a
    // quantized transformer's 56).
    fn dequantized<T: Copy + Sync>(v: &[T], z: f32, s: f32, wide: impl Fn(T) -> f32 + Sync) -> Vec<f32> {
        // `z` and `s` by value: numbers read through references are reloaded after each store.
        crate::shares::map(v, 1, move |q| (wide(q) - z) * s)
    }
    let out: Vec<f32> = match &*x.data {
        Data::U8(v) => dequantized(v, z, s, f32::from),
        Data::I8(v) => dequantized(v, z, s, f32::from),
        Data::U16(v) => dequantized(v, z, s, f32::from),
        Data::I16(v) => dequantized(v, z, s, f32::from),
        _ => return None,
    };
    Some(Tensor::new(x.shape.clone(), Data::F32(out.into())))
}

#[cfg(test)]
mod tests {
    use super::Quantizer;

    /// The shifted arithmetic against the plain one: half to even, the zero point,
    /// saturation, signed results, huge values, infinities and NaN.
    #[test]
    fn quantizing_by_shift_is_the_plain_formula() {
        let plain = |x: f32, scale: f32, zero: f32, lo: f32, hi: f32| -> i64 {
            let q = ((x / scale).round_ties_even() + zero).clamp(lo, hi);
            if q.is_nan() { 0 } else { q as i64 }
        };
        let halves = (-700..700).map(|k| k as f32 * 0.5);
        let steps = (-3000..3000).map(|k| k as f32 * 0.0137);
        let edges = [
            0.0,
            -0.0,
            0.49999997,
            -0.49999997,
            8_388_607.5,
            4_194_303.5,
            1e30,
            -1e30,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        for (scale, zero, lo, hi) in
            [(1.0, 0.0, 0.0, 255.0), (0.5, 128.0, 0.0, 255.0), (0.02, -3.0, -128.0, 127.0), (3.0, 0.0, -128.0, 127.0)]
        {
            let q = Quantizer::new(scale, zero, lo, hi);
            for x in halves.clone().chain(steps.clone()).chain(edges) {
                let want = plain(x, scale, zero, lo, hi);
                let got = if lo < 0.0 { i64::from(q.bits(x) as u8 as i8) } else { i64::from(q.bits(x) as u8) };
                assert_eq!(got, want, "{x} / {scale} + {zero}");
            }
        }
        // The 16-bit types, read from the low two bytes as QuantizeLinear stores them.
        let wide = (-40000..40000).step_by(7).map(|k| k as f32 * 0.75);
        for (scale, zero, lo, hi) in [
            (1.0, 0.0, 0.0, 65535.0),
            (0.001, 30000.0, 0.0, 65535.0),
            (0.5, -7.0, -32768.0, 32767.0),
            (0.0003, 0.0, -32768.0, 32767.0),
        ] {
            let q = Quantizer::new(scale, zero, lo, hi);
            for x in wide.clone().chain(steps.clone()).chain(edges) {
                let want = plain(x, scale, zero, lo, hi);
                let got = if lo < 0.0 { i64::from(q.bits(x) as u16 as i16) } else { i64::from(q.bits(x) as u16) };
                assert_eq!(got, want, "{x} / {scale} + {zero}");
            }
        }
    }
}
