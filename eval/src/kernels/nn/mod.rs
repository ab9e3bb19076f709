//! Neural-network layers: convolution, pooling, normalization. The first version computes
//! directly from the definitions in f64 (the speed pass turns convolution into GEMM).

mod conv;
mod depthwise;
pub mod dequantized_conv;
mod grid;
mod norm;
mod pool;

use crate::error::{KernelError, bad_attribute, bad_input, limit};
use crate::kernels::{Ctx, Kernel, count};
use conv::{conv, conv_integer, conv_transpose, qlinear_conv};
use norm::{batch_norm, group_norm, instance_norm, layer_norm, lp_norm, lrn, mean_variance_norm, rms_norm};
use pool::{global_pool, pool};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "Conv" => conv,
        "ConvInteger" => conv_integer,
        "QLinearConv" => qlinear_conv,
        "MaxPool" | "AveragePool" | "LpPool" => pool,
        "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => global_pool,
        "BatchNormalization" => batch_norm,
        "LayerNormalization" => layer_norm,
        "InstanceNormalization" => instance_norm,
        // onnxruntime's RMS norm in onnx's domain, which its optimizer writes.
        "RMSNormalization" | "SimplifiedLayerNormalization" => rms_norm,
        "GroupNormalization" => group_norm,
        "LpNormalization" => lp_norm,
        "MeanVarianceNormalization" => mean_variance_norm,
        "LRN" => lrn,
        "ConvTranspose" => conv_transpose,
        _ => return None,
    };
    Some(k)
}

/// The operators of this family whose constant inputs are prepared once per plan: a
/// depthwise Conv's weights in channel blocks.
pub fn prepare(op: &str) -> Option<crate::kernels::Prepare> {
    match op {
        "Conv" => Some(depthwise::prepare),
        _ => None,
    }
}

/// The geometry of a sliding window over the spatial axes.
struct Window {
    kernel: Vec<usize>,
    strides: Vec<usize>,
    dilations: Vec<usize>,
    /// Padding before each spatial axis.
    begin: Vec<usize>,
    /// Each axis's extent with its padding (what `count_include_pad` counts within).
    padded: Vec<usize>,
    out: Vec<usize>,
}

/// `clip_to_input`: pooling's rule (onnxruntime's), where a window longer than the padded
/// input still gives outputs, each window clipped to the input; a convolution refuses it.
fn window(ctx: &Ctx<'_>, spatial: &[usize], kernel: Vec<usize>, clip_to_input: bool) -> Result<Window, KernelError> {
    let n = spatial.len();
    let list = |name: &str, default: usize| -> Result<Vec<usize>, KernelError> {
        match ctx.ints(name) {
            Some(v) if v.len() == n => {
                v.iter().map(|&x| usize::try_from(x).map_err(|_| bad_attribute!("{name} holds {x}"))).collect()
            }
            Some(v) => Err(bad_attribute!("{name} has {} values for {n} spatial axes", v.len())),
            None => Ok(vec![default; n]),
        }
    };
    let strides = list("strides", 1)?;
    let dilations = list("dilations", 1)?;
    if strides.contains(&0) || dilations.contains(&0) {
        return Err(bad_attribute!("strides and dilations must be positive"));
    }
    let ceil = ctx.int("ceil_mode").unwrap_or(0) != 0;
    let auto = ctx.string("auto_pad").unwrap_or("NOTSET");
    let mut begin = vec![0usize; n];
    let mut out = vec![0usize; n];
    let mut padded_extent = spatial.to_vec();
    let pads = match ctx.ints("pads") {
        Some(p) if p.len() == 2 * n => p
            .iter()
            .map(|&x| usize::try_from(x).map_err(|_| bad_attribute!("pads hold {x}")))
            .collect::<Result<Vec<_>, _>>()?,
        Some(p) => return Err(bad_attribute!("pads has {} values for {n} spatial axes", p.len())),
        None => vec![0; 2 * n],
    };
    // Every position a window reaches (and the padded extent) must fit in an i64, where
    // the taps are placed; kernel sizes, dilations, strides and pads come from the model.
    let too_far = |i: usize| {
        limit!(
            "the window along spatial axis {i} (kernel {}, stride {}, dilation {}) reaches past 2^63 positions",
            kernel[i],
            strides[i],
            dilations[i]
        )
    };
    let fits = |v: Option<usize>, i: usize| v.filter(|&v| i64::try_from(v).is_ok()).ok_or_else(|| too_far(i));
    for i in 0..n {
        let extent = fits(dilations[i].checked_mul(kernel[i].max(1) - 1).and_then(|e| e.checked_add(1)), i)?;
        match auto {
            "SAME_UPPER" | "SAME_LOWER" => {
                out[i] = spatial[i].div_ceil(strides[i]);
                let reach = fits((out[i].max(1) - 1).checked_mul(strides[i]).and_then(|r| r.checked_add(extent)), i)?;
                let total = reach.saturating_sub(spatial[i]);
                begin[i] = if auto == "SAME_UPPER" { total / 2 } else { total - total / 2 };
                padded_extent[i] = fits(spatial[i].checked_add(total), i)?;
            }
            "VALID" => out[i] = (spatial[i].saturating_sub(extent)) / strides[i] + 1,
            _ => {
                begin[i] = pads[i];
                let padded = fits(spatial[i].checked_add(pads[i]).and_then(|p| p.checked_add(pads[i + n])), i)?;
                padded_extent[i] = padded;
                if padded < extent && !clip_to_input {
                    return Err(bad_input!("the window is larger than the padded input"));
                }
                out[i] = pooled_length(padded as i128 - extent as i128, strides[i] as i128, ceil)
                    .ok_or_else(|| {
                        bad_input!(
                            "the window along spatial axis {i} ({extent} positions) is larger than the padded input ({padded}) by a stride or more"
                        )
                    })?;
                // A window that would start in the end padding only is dropped (ceil mode).
                if ceil
                    && out[i] > 0
                    && (out[i] - 1).checked_mul(strides[i]).is_none_or(|start| start >= spatial[i] + pads[i])
                {
                    out[i] -= 1;
                }
            }
        }
        // The last window's last tap, where the taps are computed.
        fits((out[i].max(1) - 1).checked_mul(strides[i]).and_then(|r| r.checked_add(extent)), i)?;
    }
    Ok(Window { kernel, strides, dilations, begin, padded: padded_extent, out })
}

/// The number of windows along an axis whose padded extent is `span` positions longer than
/// one window (negative where the window is longer): onnxruntime's `span / stride + 1` with
/// C's division toward zero, or with `ceil_mode` the quotient rounded up. Measured against
/// onnxruntime over 1,728 one-axis pools: a window longer than the padded input by less than
/// a stride still gives one output (or none), and only a negative count is an error.
fn pooled_length(span: i128, stride: i128, ceil: bool) -> Option<usize> {
    let quotient = if ceil && span > 0 { (span + stride - 1) / stride } else { span / stride };
    usize::try_from(quotient + 1).ok()
}

/// For each output position, how many kernel taps fall inside the padded input (the
/// divisor of AveragePool with `count_include_pad`: a ceil-mode window reaching past the
/// end padding counts only what lies within it).
fn taps_within_padding(w: &Window) -> Vec<usize> {
    let n = w.out.len();
    let outs = crate::broadcast::elements(&w.out);
    (0..outs)
        .map(|o| {
            let mut rest = o;
            let mut total = 1;
            for i in (0..n).rev() {
                let opos = rest % w.out[i];
                rest /= w.out[i];
                let start = opos * w.strides[i];
                total *= (0..w.kernel[i]).filter(|k| start + k * w.dilations[i] < w.padded[i]).count();
            }
            total
        })
        .collect()
}

/// Every window position: for each output position (row-major over the spatial axes), the
/// input positions under each kernel tap (row-major over the kernel), `None` in padding.
/// One flat list (a row per output position), offsets as `u32`: a 3-D pooling window over a
/// 32³ input has four million taps, which as a vector per position of `Option<usize>` took
/// 65 MB and a million allocations.
struct Taps {
    outputs: usize,
    per_output: usize,
    at: Vec<Option<u32>>,
}

impl Taps {
    fn len(&self) -> usize {
        self.outputs
    }

    fn iter(&self) -> impl Iterator<Item = &[Option<u32>]> {
        (0..self.outputs).map(|o| &self.at[o * self.per_output..(o + 1) * self.per_output])
    }
}

fn taps(ctx: &Ctx<'_>, w: &Window, spatial: &[usize]) -> Result<Taps, KernelError> {
    let outputs = count(&w.out)?;
    let per_output = count(&w.kernel)?;
    let n = spatial.len();
    if count(spatial)? > u32::MAX as usize {
        return Err(limit!("a spatial plane of more than 2^32 elements"));
    }
    // One entry per output position and kernel tap: both sizes come from the model.
    let entries = outputs.checked_mul(per_output).ok_or(limit!("the window's taps overflow"))?;
    ctx.check_elements(entries).map_err(|e| e.map_message(|m| format!("{m} (window taps)")))?;
    // Each tap's offset along each axis, once.
    let offsets: Vec<Vec<usize>> = (0..per_output)
        .map(|t| {
            let mut rest = t;
            let mut kpos = vec![0; n];
            for i in (0..n).rev() {
                kpos[i] = rest % w.kernel[i] * w.dilations[i];
                rest /= w.kernel[i];
            }
            kpos
        })
        .collect();
    let mut at = Vec::with_capacity(entries);
    let mut opos = vec![0usize; n];
    for _ in 0..outputs {
        for kpos in &offsets {
            let mut offset = Some(0usize);
            let mut stride = 1;
            for i in (0..n).rev() {
                let p = (opos[i] * w.strides[i] + kpos[i]) as i64 - w.begin[i] as i64;
                offset = offset.filter(|_| p >= 0 && (p as usize) < spatial[i]).map(|off| off + p as usize * stride);
                // An empty plane's other axes may multiply past usize; no tap lands in it.
                stride = stride.wrapping_mul(spatial[i]);
            }
            at.push(offset.map(|v| v as u32));
        }
        for i in (0..n).rev() {
            opos[i] += 1;
            if opos[i] < w.out[i] {
                break;
            }
            opos[i] = 0;
        }
    }
    Ok(Taps { outputs, per_output, at })
}
