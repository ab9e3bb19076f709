//! Signal processing: DFT, STFT and the window functions (Hann, Hamming, Blackman).
//!
//! Transforms run on rustfft's plans in f64 (any length: mixed radix, Bluestein for
//! primes), and results are rounded once to the input's type, as onnx's reference does
//! with numpy's FFT.

use rustfft::num_complex::Complex;
use rustfft::num_traits::Float;
use rustfft::{FftNum, FftPlanner};

use super::{Ctx, Kernel, axis, count, input, input_axis, one, optional};
use crate::error::{KernelError, bad_input};
use crate::kernels::common::dtype_attr;
use crate::kernels::common::numeric_like;
use crate::value::Value;
use onnx_core::ir::DataType;

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "DFT" => dft,
        "STFT" => stft,
        "HannWindow" | "HammingWindow" | "BlackmanWindow" => window,
        "MelWeightMatrix" => mel_weight_matrix,
        _ => return None,
    };
    Some(k)
}

/// A scalar integer input (a one-element tensor).
fn scalar(inputs: &[Option<&Value>], i: usize, what: &str) -> Result<Option<i64>, KernelError> {
    match optional(inputs, i)? {
        Some(t) => t.to_i64s()?.first().copied().map(Some).ok_or_else(|| bad_input!("{what} is empty")),
        None => Ok(None),
    }
}

/// The transform of `values` (length n) in place: forward, or inverse scaled by 1/n.
fn transform<T: FftNum + Float>(planner: &mut FftPlanner<T>, values: &mut [Complex<T>], inverse: bool) {
    let n = values.len();
    if n == 0 {
        return;
    }
    if inverse {
        planner.plan_fft_inverse(n).process(values);
        let scale = T::one() / T::from_usize(n).unwrap_or_else(T::one);
        values.iter_mut().for_each(|v| *v = *v * scale);
    } else {
        planner.plan_fft_forward(n).process(values);
    }
}

/// One line's shape: `m` values read, `n` transformed, `kept` written.
#[derive(Clone, Copy)]
struct Line {
    m: usize,
    n: usize,
    kept: usize,
    inverse: bool,
    onesided: bool,
    parts: usize,
    out_parts: usize,
}

/// Transforms every line along the axis in precision `T`.
fn dft_lines<T: FftNum + Float>(values: &[f64], outer: usize, inner: usize, l: Line) -> Vec<f64> {
    let zero = Complex::new(T::zero(), T::zero());
    let cast = |v: f64| T::from_f64(v).unwrap_or_else(T::zero);
    let mut out = vec![0.0; outer * l.kept * inner * l.out_parts];
    let mut planner = FftPlanner::new();
    let mut line = vec![zero; l.n];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| ((o * l.m + k) * inner + i) * l.parts;
            let read = |k: usize| {
                let im = if l.parts == 2 { values[at(k) + 1] } else { 0.0 };
                Complex::new(cast(values[at(k)]), cast(im))
            };
            for (k, slot) in line.iter_mut().enumerate() {
                *slot = if l.inverse && l.onesided {
                    // Hermitian symmetry: X[n-k] is the conjugate of X[k].
                    if k < l.m {
                        read(k)
                    } else if l.n - k < l.m {
                        read(l.n - k).conj()
                    } else {
                        zero
                    }
                } else if k < l.m {
                    read(k)
                } else {
                    zero
                };
            }
            transform(&mut planner, &mut line, l.inverse);
            for (k, v) in line.iter().take(l.kept).enumerate() {
                let to = ((o * l.kept + k) * inner + i) * l.out_parts;
                out[to] = v.re.to_f64().unwrap_or(f64::NAN);
                if l.out_parts == 2 {
                    out[to + 1] = v.im.to_f64().unwrap_or(f64::NAN);
                }
            }
        }
    }
    out
}

fn dft(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let rank = x.rank();
    let parts = *x.shape.last().unwrap_or(&0);
    if rank < 2 || !(parts == 1 || parts == 2) {
        return Err(bad_input!("DFT needs a last dimension of 1 (real) or 2 (complex), got shape {:?}", x.shape));
    }
    let length = scalar(inputs, 1, "dft_length")?;
    // Opset 20 moved the axis from an attribute (default 1) to an input (default -2).
    let raw_axis =
        if ctx.opset >= 20 { scalar(inputs, 2, "axis")?.unwrap_or(-2) } else { ctx.int("axis").unwrap_or(1) };
    let ax = if ctx.opset >= 20 { input_axis(raw_axis, rank) } else { axis(raw_axis, rank) }?;
    if ax == rank - 1 {
        return Err(bad_input!("the DFT axis cannot be the last (real/imaginary) dimension"));
    }
    let (inverse, onesided) = (ctx.int("inverse").unwrap_or(0) != 0, ctx.int("onesided").unwrap_or(0) != 0);
    let m = x.shape[ax];
    let n = match length {
        Some(l) => usize::try_from(l).map_err(|_| bad_input!("dft_length {l} is negative"))?,
        None if inverse && onesided => 2 * m.saturating_sub(1),
        None => m,
    };
    // A onesided inverse rebuilds the full spectrum and gives real values; a onesided
    // forward transform keeps the bins up to n/2.
    let (kept, out_parts) = match (inverse, onesided) {
        (true, true) => (n, 1),
        (false, true) => (n / 2 + 1, 2),
        _ => (n, 2),
    };
    let values = x.to_f64s()?;
    let outer = count(&x.shape[..ax])?;
    let inner = count(&x.shape[ax + 1..rank - 1])?;
    let mut out_shape = x.shape.clone();
    out_shape[ax] = kept;
    out_shape[rank - 1] = out_parts;
    let total = count(&out_shape)?;
    ctx.check_elements(total)?;
    if total == 0 {
        // No lines to transform (and the other axes may be of any size).
        return one(numeric_like(x.data_type(), out_shape, Vec::new())?);
    }
    let line = Line { m, n, kept, inverse, onesided, parts, out_parts };
    // onnx's reference takes a float32 input's inverse transform in float32 and its forward
    // transform in double; doing the same keeps the rounding noise near zero (which the
    // backend tests compare at an absolute tolerance of 1e-7) the same size.
    let out = if inverse && x.data_type() == DataType::Float {
        dft_lines::<f32>(&values, outer, inner, line)
    } else {
        dft_lines::<f64>(&values, outer, inner, line)
    };
    one(numeric_like(x.data_type(), out_shape, out)?)
}

fn stft(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let signal = input(inputs, 0)?;
    let [batch, len, parts] = signal.shape[..] else {
        return Err(bad_input!("STFT needs a signal of shape [batch, length, 1 or 2], got {:?}", signal.shape));
    };
    if !(parts == 1 || parts == 2) {
        return Err(bad_input!("the signal's last dimension must be 1 or 2, got {parts}"));
    }
    let step = scalar(inputs, 1, "frame_step")?.ok_or(bad_input!("frame_step is missing"))?;
    let step = usize::try_from(step).ok().filter(|&s| s > 0).ok_or(bad_input!("frame_step {step} is not positive"))?;
    let window = optional(inputs, 2)?.map(|w| w.to_f64s()).transpose()?;
    let frame = match (scalar(inputs, 3, "frame_length")?, &window) {
        (Some(l), _) => usize::try_from(l).map_err(|_| bad_input!("frame_length {l} is negative"))?,
        (None, Some(w)) => w.len(),
        (None, None) => return Err(bad_input!("STFT needs a window or a frame_length")),
    };
    if window.as_ref().is_some_and(|w| w.len() != frame) {
        return Err(bad_input!("the window's length differs from frame_length"));
    }
    if frame == 0 || frame > len {
        return Err(bad_input!("frame_length {frame} does not fit a signal of length {len}"));
    }
    let onesided = ctx.int("onesided").unwrap_or(1) != 0;
    let frames = 1 + (len - frame) / step;
    let bins = if onesided { frame / 2 + 1 } else { frame };
    let out_shape = vec![batch, frames, bins, 2];
    ctx.check_elements(count(&out_shape)?)?;
    let values = signal.to_f64s()?;
    let mut out = Vec::with_capacity(count(&out_shape)?);
    let mut planner = FftPlanner::<f64>::new();
    let mut line = vec![Complex::new(0.0, 0.0); frame];
    for b in 0..batch {
        for f in 0..frames {
            for (k, slot) in line.iter_mut().enumerate() {
                let at = (b * len + f * step + k) * parts;
                let w = window.as_ref().map_or(1.0, |w| w[k]);
                *slot = Complex::new(values[at] * w, if parts == 2 { values[at + 1] * w } else { 0.0 });
            }
            transform(&mut planner, &mut line, false);
            out.extend(line.iter().take(bins).flat_map(|v| [v.re, v.im]));
        }
    }
    one(numeric_like(signal.data_type(), out_shape, out)?)
}

/// Hann, Hamming and Blackman windows: sums of cosines of 2πk/N (N the size when
/// periodic, size − 1 when symmetric).
fn window(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let size = scalar(inputs, 0, "size")?.ok_or(bad_input!("size is missing"))?;
    let size = usize::try_from(size).map_err(|_| bad_input!("size {size} is negative"))?;
    ctx.check_elements(size)?;
    let periodic = ctx.int("periodic").unwrap_or(1) != 0;
    let dt = dtype_attr(ctx, "output_datatype", DataType::Float)?;
    // Coefficients a0, a1, a2 of a0 − a1·cos(x) + a2·cos(2x), as onnx's function bodies.
    let (a0, a1, a2) = match ctx.op() {
        "HannWindow" => (0.5, 0.5, 0.0),
        "HammingWindow" => (25.0 / 46.0, 21.0 / 46.0, 0.0),
        _ => (0.42, 0.5, 0.08),
    };
    let n = if periodic { size as f64 } else { size as f64 - 1.0 };
    let values = (0..size)
        .map(|k| {
            let x = std::f64::consts::TAU * k as f64 / n;
            a0 - a1 * x.cos() + a2 * (2.0 * x).cos()
        })
        .collect();
    one(numeric_like(dt, vec![size], values)?)
}

/// MelWeightMatrix: triangular filters, evenly spaced on the mel scale between the edge
/// frequencies, over the bins of a onesided spectrum: [dft_length/2 + 1, num_mel_bins].
fn mel_weight_matrix(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let int = |i: usize, what: &str| -> Result<i64, KernelError> {
        scalar(inputs, i, what)?.ok_or(bad_input!("{what} is missing"))
    };
    let float = |i: usize| -> Result<f64, KernelError> {
        input(inputs, i)?.to_f64s()?.first().copied().ok_or_else(|| bad_input!("input {i} is empty"))
    };
    let mels = usize::try_from(int(0, "num_mel_bins")?).map_err(|_| bad_input!("num_mel_bins is negative"))?;
    let dft_length = int(1, "dft_length")?;
    let rate = int(2, "sample_rate")?;
    if dft_length <= 0 || rate <= 0 {
        return Err(bad_input!("dft_length and sample_rate must be positive"));
    }
    let (low, high) = (float(3)?, float(4)?);
    let bins = (dft_length / 2 + 1) as usize;
    ctx.check_elements(bins.saturating_mul(mels))?;
    let ln10 = std::f64::consts::LN_10;
    let to_mel = |hz: f64| 2595.0 * (hz / 700.0).ln_1p() / ln10;
    let (low_mel, high_mel) = (to_mel(low), to_mel(high));
    // onnx spaces the mels + 2 edges by the range over mels + 2 (not mels + 1): the top
    // edge falls short of upper_edge_hertz, as in onnx's reference.
    let step = (high_mel - low_mel) / (mels + 2) as f64;
    // The spectrum bin of each of the mels + 2 filter edges.
    let edges: Vec<i64> = (0..mels + 2)
        .map(|i| {
            let hz = 700.0 * ((i as f64 * step + low_mel) / 2595.0 * ln10).exp_m1();
            (((dft_length as f64 + 1.0) * hz) / rate as f64).floor() as i64
        })
        .collect();
    let mut out = vec![0.0; bins * mels];
    let mut set = |j: i64, i: usize, v: f64| {
        if let Ok(j) = usize::try_from(j)
            && j < bins
        {
            out[j * mels + i] = v;
        }
    };
    // Edges may lie far outside the spectrum (extreme frequencies saturate to ±2^63): only
    // the bins inside it are visited, and the slopes are taken in f64, which cannot overflow.
    let inside = |from: i64, to: i64| from.max(0)..=to.min(bins as i64 - 1);
    for i in 0..mels {
        let (left, centre, right) = (edges[i], edges[i + 1], edges[i + 2]);
        if centre == left {
            set(centre, i, 1.0);
        } else {
            for j in inside(left, centre) {
                set(j, i, (j as f64 - left as f64) / (centre as f64 - left as f64));
            }
        }
        if right > centre {
            for j in inside(centre, right - 1) {
                set(j, i, (right as f64 - j as f64) / (right as f64 - centre as f64));
            }
        }
    }
    let dt = dtype_attr(ctx, "output_datatype", DataType::Float)?;
    one(numeric_like(dt, vec![bins, mels], out)?)
}
