//! Neural-network layers: convolution, pooling, normalization. The first version computes
//! directly from the definitions in f64 (the speed pass turns convolution into GEMM).

use smallvec::SmallVec;

use super::{Ctx, Kernel, count, input, one, optional};
use crate::error::{KernelError, bad_attribute, bad_input, limit, unsupported};
use crate::gemm::View;
use crate::kernels::common::numeric_like;
use crate::value::{Data, Tensor, Value};
use onnx_core::ir::DataType;

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
        "RMSNormalization" => rms_norm,
        "GroupNormalization" => group_norm,
        "LpNormalization" => lp_norm,
        "MeanVarianceNormalization" => mean_variance_norm,
        "LRN" => lrn,
        "ConvTranspose" => conv_transpose,
        _ => return None,
    };
    Some(k)
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

fn window(ctx: &Ctx<'_>, spatial: &[usize], kernel: Vec<usize>) -> Result<Window, KernelError> {
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
                if padded < extent {
                    return Err(bad_input!("the window is larger than the padded input"));
                }
                let span = padded - extent;
                out[i] = if ceil { span.div_ceil(strides[i]) + 1 } else { span / strides[i] + 1 };
                // A window that would start in the end padding only is dropped (ceil mode).
                if ceil && (out[i] - 1).checked_mul(strides[i]).is_none_or(|start| start >= spatial[i] + pads[i]) {
                    out[i] -= 1;
                }
            }
        }
        // The last window's last tap, where the taps are computed.
        fits((out[i].max(1) - 1).checked_mul(strides[i]).and_then(|r| r.checked_add(extent)), i)?;
    }
    Ok(Window { kernel, strides, dilations, begin, padded: padded_extent, out })
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

/// `t` minus its zero point, as f64: one zero point, or one per slice of the first axis
/// (per output channel, for weights).
fn shifted(t: &Tensor, zero: Option<&Tensor>) -> Result<Tensor, KernelError> {
    let v = t.to_f64s()?;
    let z = zero.map(Tensor::to_f64s).transpose()?.unwrap_or_else(|| vec![0.0]);
    let per = match z.len() {
        1 => v.len().max(1),
        n if t.shape.first() == Some(&n) => v.len() / n.max(1),
        n => return Err(bad_input!("{n} zero points for a tensor of shape {:?}", t.shape)),
    };
    let out = v.iter().enumerate().map(|(i, x)| x - z[(i / per.max(1)).min(z.len() - 1)]).collect();
    Ok(Tensor::new(t.shape.clone(), Data::F64(out)))
}

/// The convolution of zero-point-shifted integer operands, as f64.
fn integer_conv(ctx: &Ctx<'_>, x: Tensor, w: Tensor) -> Result<Tensor, KernelError> {
    let (x, w) = (Value::Tensor(x), Value::Tensor(w));
    match conv(ctx, &[Some(&x), Some(&w)])?.pop() {
        Some(Value::Tensor(t)) => Ok(t),
        _ => Err(bad_input!("the convolution gave no tensor")),
    }
}

/// ConvInteger: the convolution of `x − x_zero_point` and `w − w_zero_point` in int32.
fn conv_integer(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = shifted(input(inputs, 0)?, optional(inputs, 2)?)?;
    let w = shifted(input(inputs, 1)?, optional(inputs, 3)?)?;
    let y = integer_conv(ctx, x, w)?;
    let out = y.to_f64s()?.into_iter().map(|v| v as i32).collect();
    one(Tensor::new(y.shape.clone(), Data::I32(out)))
}

/// QLinearConv: the integer convolution (plus an int32 bias), rescaled by
/// `x_scale·w_scale / y_scale` (w_scale per output channel or one), rounded half to even,
/// shifted by `y_zero_point` and saturated to its type.
fn qlinear_conv(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = shifted(input(inputs, 0)?, optional(inputs, 2)?)?;
    let w = shifted(input(inputs, 3)?, optional(inputs, 5)?)?;
    let filters = w.shape.first().copied().unwrap_or(0);
    let y = integer_conv(ctx, x, w)?;
    let bias = optional(inputs, 8)?.map(Tensor::to_f64s).transpose()?;
    let (xs, ws, ys) = (input(inputs, 1)?.to_f64s()?, input(inputs, 4)?.to_f64s()?, input(inputs, 6)?.to_f64s()?);
    let zy = input(inputs, 7)?;
    let zero = zy.to_f64s()?.first().copied().unwrap_or(0.0);
    let (lo, hi) = match zy.data_type() {
        DataType::Uint8 => (0.0, 255.0),
        DataType::Int8 => (-128.0, 127.0),
        other => return Err(unsupported!("y_zero_point of type {} is not supported", other.name())),
    };
    let (Some(&xs), Some(&ys)) = (xs.first(), ys.first()) else { return Err(bad_input!("a scale is empty")) };
    let per_filter = y.len() / (y.shape.first().copied().unwrap_or(1).max(1) * filters.max(1)).max(1);
    let out = y
        .to_f64s()?
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let f = (i / per_filter.max(1)) % filters.max(1);
            let scale = ws.get(f).or(ws.first()).copied().unwrap_or(1.0);
            let biased = v + bias.as_ref().and_then(|b| b.get(f)).copied().unwrap_or(0.0);
            // The rescale in float32, as onnx's reference takes it.
            let m = (xs as f32 * scale as f32 / ys as f32) as f64;
            ((biased * m).round_ties_even() + zero).clamp(lo, hi)
        })
        .collect();
    one(numeric_like(zy.data_type(), y.shape.clone(), out)?)
}

fn conv(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, w) = (input(inputs, 0)?, input(inputs, 1)?);
    if x.rank() < 3 || w.rank() != x.rank() {
        return Err(bad_input!("Conv of input {:?} and weights {:?}", x.shape, w.shape));
    }
    let group = usize::try_from(ctx.int("group").unwrap_or(1))
        .ok()
        .filter(|&g| g > 0)
        .ok_or(bad_attribute!("group must be positive"))?;
    let (batch, channels, spatial) = (x.shape[0], x.shape[1], &x.shape[2..]);
    let (filters, per_group) = (w.shape[0], w.shape[1]);
    if per_group.checked_mul(group) != Some(channels) || filters % group != 0 {
        return Err(bad_input!("{channels} input channels, {per_group} per group × {group} groups, {filters} filters"));
    }
    let kernel = w.shape[2..].to_vec();
    if let Some(k) = ctx.ints("kernel_shape")
        && k.iter().map(|&v| v as usize).ne(kernel.iter().copied())
    {
        return Err(bad_attribute!("kernel_shape differs from the weights' shape"));
    }
    let bias = optional(inputs, 2)?.map(Tensor::to_f64s).transpose()?;
    if let Some(b) = &bias
        && b.len() != filters
    {
        return Err(bad_input!("B holds {} values, not one per filter ({filters})", b.len()));
    }
    let win = window(ctx, spatial, kernel)?;
    let mut shape = vec![batch, filters];
    shape.extend_from_slice(&win.out);
    let out_count = count(&shape)?;
    ctx.check_grown(out_count, x.len().max(w.len()))?;
    if out_count == 0 {
        return one(numeric_like(x.data_type(), shape, Vec::new())?);
    }
    let in_size = count(spatial)?;
    if let (Data::F32(xv), Data::F32(wv)) = (&*x.data, &*w.data) {
        // The im2col matrix: a row per channel of a group and kernel tap, a column per
        // output position.
        let columns = count(&[per_group, count(&win.kernel)?, count(&win.out)?])?;
        ctx.check_grown(columns, x.len()).map_err(|e| e.map_message(|m| format!("{m} (the im2col matrix)")))?;
        let geometry = ConvGeometry { batch, channels, filters, group, in_size };
        let out = conv_f32(xv, wv, bias.as_deref(), &win, spatial, &geometry)?;
        return one(Tensor::new(shape, Data::F32(out.into())));
    }
    let taps = taps(ctx, &win, spatial)?;
    let (xv, wv) = (x.to_f64s()?, w.to_f64s()?);
    let out_size = taps.len();
    let kernel_size = count(&win.kernel)?;
    let per_out_group = filters / group;
    let mut out = vec![0.0; out_count];
    for b in 0..batch {
        for f in 0..filters {
            let g = f / per_out_group;
            let base = bias.as_ref().map_or(0.0, |v| v.get(f).copied().unwrap_or(0.0));
            for (o, tap) in taps.iter().enumerate() {
                let mut sum = base;
                for c in 0..per_group {
                    let xc = (b * channels + g * per_group + c) * in_size;
                    let wc = (f * per_group + c) * kernel_size;
                    for (k, at) in tap.iter().enumerate() {
                        if let Some(at) = at {
                            sum += xv[xc + *at as usize] * wv[wc + k];
                        }
                    }
                }
                out[(b * filters + f) * out_size + o] = sum;
            }
        }
    }
    one(numeric_like(x.data_type(), shape, out)?)
}

/// The sizes a convolution works with.
struct ConvGeometry {
    batch: usize,
    channels: usize,
    filters: usize,
    group: usize,
    in_size: usize,
}

/// Convolution of float32 data as GEMMs per image, group and tile of output positions: the
/// input patches laid out as columns (im2col: a row per channel and kernel tap, a column per
/// output position, zeros in the padding) multiplied by the filters.
///
/// The columns are made one tile of output positions at a time, about [`COLUMNS_TILE`]
/// values, so that they are still in the cache when the GEMM reads them. A whole image's
/// columns are the kernel's size times the image: 170 MB for one 3×39 convolution of a
/// real audio model, written to fresh memory and read back, which took 80 % of its time.
fn conv_f32(
    x: &[f32],
    w: &[f32],
    bias: Option<&[f64]>,
    win: &Window,
    spatial: &[usize],
    g: &ConvGeometry,
) -> Result<Vec<f32>, KernelError> {
    let rows = g.channels / g.group * crate::broadcast::elements(&win.kernel);
    let tile = (COLUMNS_TILE / rows.max(1)).max(MIN_TILE);
    let shares = if onnx_threads::pool().is_some() { onnx_threads::cores() } else { 1 };
    conv_f32_in_tiles(x, w, bias, win, spatial, g, tile, shares)
}

/// The buffers one thread makes a convolution's tiles in.
#[derive(Default)]
struct TileScratch {
    columns: Vec<f32>,
    product: Vec<f32>,
}

/// One tile of a convolution: output positions `start..start + width` of every image and
/// filter, each row of `width` values handed to `emit` with its row (image × filters +
/// filter) of the output.
#[allow(clippy::too_many_arguments)] // the convolution's inputs and geometry, and the tile
fn conv_tile(
    x: &[f32],
    w: &[f32],
    win: &Window,
    spatial: &[usize],
    g: &ConvGeometry,
    start: usize,
    width: usize,
    scratch: &mut TileScratch,
    mut emit: impl FnMut(usize, &[f32]),
) -> Result<(), KernelError> {
    let kernel = crate::broadcast::elements(&win.kernel);
    let per_group = g.channels / g.group;
    let filters_per_group = g.filters / g.group;
    let rows = per_group * kernel;
    scratch.columns.resize(rows * width, 0.0);
    scratch.product.resize(filters_per_group * width, 0.0);
    // What each tap reads for this tile, the same for every image, group and channel.
    let taps: Vec<Vec<Run>> = (0..kernel).map(|k| im2col_runs(spatial, win, k, start, width)).collect();
    for b in 0..g.batch {
        for group in 0..g.group {
            let weights = &w[group * filters_per_group * rows..][..filters_per_group * rows];
            let first_filter = b * g.filters + group * filters_per_group;
            let columns = &mut scratch.columns[..rows * width];
            for c in 0..per_group {
                let plane = &x[(b * g.channels + group * per_group + c) * g.in_size..][..g.in_size];
                for (k, runs) in taps.iter().enumerate() {
                    let row = &mut columns[(c * kernel + k) * width..][..width];
                    fill_im2col_row(plane, runs, win.strides[spatial.len() - 1], row);
                }
            }
            let product = &mut scratch.product[..filters_per_group * width];
            if filters_per_group == 1 {
                // One filter (a depthwise convolution's groups): the columns weighted and
                // summed row by row. A GEMM call per group of a few values cost more in
                // its set-up than in its arithmetic.
                product.fill(0.0);
                for (&weight, column) in weights.iter().zip(columns.chunks_exact(width)) {
                    for (p, &c) in product.iter_mut().zip(column) {
                        *p += weight * c;
                    }
                }
                crate::gemm::count_flops(2 * rows * width);
            } else {
                crate::gemm::sgemm(
                    1.0,
                    View::rows(weights, filters_per_group, rows),
                    View::rows(columns, rows, width),
                    0.0,
                    product,
                )?;
            }
            for (f, values) in product.chunks_exact(width).enumerate() {
                emit(first_filter + f, values);
            }
        }
    }
    Ok(())
}

/// [`conv_f32`] with tiles of `tile` output positions, spread over up to `shares` shares
/// (the cores).
#[allow(clippy::too_many_arguments)] // the convolution's inputs and geometry, and how it is cut
fn conv_f32_in_tiles(
    x: &[f32],
    w: &[f32],
    bias: Option<&[f64]>,
    win: &Window,
    spatial: &[usize],
    g: &ConvGeometry,
    tile: usize,
    shares: usize,
) -> Result<Vec<f32>, KernelError> {
    let outputs = crate::broadcast::elements(&win.out);
    let tile = tile.clamp(1, outputs.max(1));
    let starts: Vec<usize> = (0..outputs).step_by(tile).collect();
    let mut out = vec![0.0f32; g.batch * g.filters * outputs];
    // Tiles are independent: with several, each core takes a share of them (its own
    // columns, products made on it alone), and the results are placed in order. Every
    // output is computed the same way whatever the number of shares.
    let shares = shares.min(starts.len());
    if shares <= 1 {
        let mut scratch = TileScratch::default();
        for &start in &starts {
            let width = tile.min(outputs - start);
            conv_tile(x, w, win, spatial, g, start, width, &mut scratch, |row, values| {
                out[row * outputs + start..][..width].copy_from_slice(values);
            })?;
        }
    } else {
        let jobs: Vec<Vec<usize>> =
            (0..shares).map(|s| starts.iter().copied().skip(s).step_by(shares).collect()).collect();
        let made = onnx_threads::map_in_order(jobs, |share| {
            crate::gemm::serial(|| {
                let mut scratch = TileScratch::default();
                let mut blocks = Vec::with_capacity(share.len());
                for start in share {
                    let width = tile.min(outputs - start);
                    let mut block = vec![0.0f32; g.batch * g.filters * width];
                    conv_tile(x, w, win, spatial, g, start, width, &mut scratch, |row, values| {
                        block[row * width..][..width].copy_from_slice(values);
                    })?;
                    blocks.push((start, width, block));
                }
                Ok::<_, KernelError>(blocks)
            })
        });
        for blocks in made {
            for (start, width, block) in blocks? {
                for (row, values) in block.chunks_exact(width).enumerate() {
                    out[row * outputs + start..][..width].copy_from_slice(values);
                }
            }
        }
    }
    if let Some(bias) = bias {
        // One row of outputs per image and filter.
        for (row, values) in out.chunks_mut(outputs.max(1)).enumerate() {
            let b = bias.get(row % g.filters.max(1)).copied().unwrap_or(0.0) as f32;
            values.iter_mut().for_each(|o| *o += b);
        }
    }
    Ok(out)
}

/// About how many im2col values one tile holds (512 KiB, within a core's L2 cache).
const COLUMNS_TILE: usize = 128 << 10;
/// The fewest output positions in a tile, so that each GEMM has some width.
const MIN_TILE: usize = 64;

/// A stretch of one im2col row: `len` values from `at` in the row, read from the input
/// plane from `source` on (every stride-th value along the last axis), or zeros (padding).
#[derive(Clone, Copy, Debug)]
struct Run {
    at: usize,
    len: usize,
    source: Option<usize>,
}

/// The stretches of one im2col row: for kernel tap `k` (row-major over the kernel), the
/// input value under that tap at output positions `first..first + width` (row-major), zero
/// in the padding. Along the last axis the tap reads a strided stretch between the first
/// and last positions that land inside the input; the row is then a copy per stretch, not
/// an index computation per value. They depend only on the geometry, so a convolution
/// works them out once per tile and reuses them for every image, group and channel.
fn im2col_runs(spatial: &[usize], win: &Window, k: usize, first: usize, width: usize) -> Vec<Run> {
    let n = spatial.len();
    // The tap's offset along each axis.
    let mut tap: SmallVec<[usize; 4]> = smallvec::smallvec![0usize; n];
    let mut rest = k;
    for i in (0..n).rev() {
        tap[i] = rest % win.kernel[i].max(1) * win.dilations[i];
        rest /= win.kernel[i].max(1);
    }
    let last = n - 1;
    let (len, stride, shift) = (win.out[last], win.strides[last], tap[last] as i64 - win.begin[last] as i64);
    let mut runs = Vec::new();
    if len == 0 {
        return runs;
    }
    // Output positions o along the last axis read input o·stride + shift: inside for o in lo..hi.
    let lo = if shift >= 0 { 0 } else { ((-shift) as usize).div_ceil(stride) };
    let hi = if (spatial[last] as i64 - shift) <= 0 {
        0
    } else {
        (((spatial[last] as i64 - shift - 1) as usize) / stride + 1).min(len)
    };
    let (lo, hi) = (lo.min(len), hi.max(lo.min(len)));
    // The segments (runs of the last axis) that the positions cross, each cut to the range;
    // `outer` is the segment's position along the other axes (an odometer).
    let end = first + width;
    let mut segment = first / len;
    let mut outer: SmallVec<[usize; 4]> = smallvec::smallvec![0usize; last];
    let mut rest = segment;
    for i in (0..last).rev() {
        outer[i] = rest % win.out[i];
        rest /= win.out[i];
    }
    let mut written = 0;
    let mut push = |at: usize, len: usize, source: Option<usize>| {
        if len > 0 {
            runs.push(Run { at, len, source });
        }
    };
    while written < width {
        let segment_start = segment * len;
        let (from, to) = (first.max(segment_start) - segment_start, end.min(segment_start + len) - segment_start);
        // Where this segment's outer output position reads, or nowhere (padding).
        let mut offset = Some(0i64);
        let mut step = spatial[last] as i64;
        for i in (0..last).rev() {
            let at = (outer[i] * win.strides[i] + tap[i]) as i64 - win.begin[i] as i64;
            offset = offset.filter(|_| at >= 0 && (at as usize) < spatial[i]).map(|off| off + at * step);
            // An empty plane's other axes may multiply past i64; no tap lands in it.
            step = step.wrapping_mul(spatial[i] as i64);
        }
        // Inside the input: positions lo..hi of the segment, here from..to.
        let (inside_lo, inside_hi) = (lo.clamp(from, to), hi.clamp(from, to));
        match offset {
            Some(base) if inside_lo < inside_hi => {
                push(written, inside_lo - from, None);
                let source = (base + (inside_lo * stride) as i64 + shift) as usize;
                push(written + inside_lo - from, inside_hi - inside_lo, Some(source));
                push(written + inside_hi - from, to - inside_hi, None);
            }
            _ => push(written, to - from, None),
        }
        written += to - from;
        segment += 1;
        for i in (0..last).rev() {
            outer[i] += 1;
            if outer[i] < win.out[i] {
                break;
            }
            outer[i] = 0;
        }
    }
    runs
}

/// One im2col row from its stretches (see [`im2col_runs`]).
fn fill_im2col_row(plane: &[f32], runs: &[Run], stride: usize, row: &mut [f32]) {
    for run in runs {
        let part = &mut row[run.at..run.at + run.len];
        match run.source {
            None => part.fill(0.0),
            Some(source) if stride == 1 => part.copy_from_slice(&plane[source..source + run.len]),
            Some(source) => {
                for (slot, value) in part.iter_mut().zip(plane[source..].iter().step_by(stride)) {
                    *slot = *value;
                }
            }
        }
    }
}

fn pool(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    if x.rank() < 3 {
        return Err(bad_input!("pooling of a rank-{} input", x.rank()));
    }
    let kernel: Vec<usize> = ctx
        .ints("kernel_shape")
        .ok_or(bad_attribute!("kernel_shape is required"))?
        .iter()
        .map(|&v| v.max(1) as usize)
        .collect();
    let spatial = &x.shape[2..];
    if kernel.len() != spatial.len() {
        return Err(bad_attribute!("kernel_shape does not match the spatial axes"));
    }
    let win = window(ctx, spatial, kernel)?;
    let mut shape = x.shape[..2].to_vec();
    shape.extend_from_slice(&win.out);
    let out_count = count(&shape)?;
    ctx.check_grown(out_count, x.len())?;
    let op = ctx.op();
    if out_count == 0 {
        let mut result = vec![Value::Tensor(numeric_like(x.data_type(), shape.clone(), Vec::new())?)];
        if op == "MaxPool" && ctx.node.outputs.len() > 1 {
            result.push(Value::Tensor(Tensor::new(shape, Data::I64(Vec::new().into()))));
        }
        return Ok(result);
    }
    let planes = x.shape[0] * x.shape[1];
    let in_size = count(spatial)?;
    // The maximum of float32 values is one of them: found in float32, without widening
    // the input and narrowing the result (a third of a GoogLeNet's time went there).
    if let (Data::F32(xv), "MaxPool", 1) = (&*x.data, op, ctx.node.outputs.len())
        && spatial.len() == 2
        && win.dilations.iter().all(|&d| d == 1)
    {
        return one(Tensor::new(shape, Data::F32(max_pool_2d(xv, planes, spatial, &win).into())));
    }
    let taps = taps(ctx, &win, spatial)?;
    if let (Data::F32(xv), "MaxPool", 1) = (&*x.data, op, ctx.node.outputs.len()) {
        let mut out = Vec::with_capacity(planes * taps.len());
        for plane in xv.chunks(in_size.max(1)).take(planes) {
            out.extend(taps.iter().map(|tap| {
                tap.iter().flatten().fold(f32::NEG_INFINITY, |best, &at| {
                    let v = plane[at as usize];
                    if v > best { v } else { best }
                })
            }));
        }
        return one(Tensor::new(shape, Data::F32(out.into())));
    }
    let xv = x.to_f64s()?;
    let include_pad = ctx.int("count_include_pad").unwrap_or(0) != 0;
    let p = ctx.int("p").unwrap_or(2) as f64;
    let mut out = Vec::with_capacity(planes * taps.len());
    let divisors = if include_pad { taps_within_padding(&win) } else { Vec::new() };
    let mut indices = Vec::new();
    // MaxPool's indices count within a plane in row-major order, or with storage_order 1 in
    // column-major order (the first spatial axis fastest).
    let column_major = ctx.int("storage_order").unwrap_or(0) == 1;
    let row_strides = crate::broadcast::strides(spatial);
    let index_in = |at: usize| -> usize {
        if !column_major {
            return at;
        }
        let mut stride = 1;
        let mut flat = 0;
        for (d, &len) in spatial.iter().enumerate() {
            flat += (at / row_strides[d]) % len.max(1) * stride;
            stride *= len;
        }
        flat
    };
    for plane in 0..planes {
        let base = plane * in_size;
        for (o, tap) in taps.iter().enumerate() {
            let present = tap.iter().flatten().map(|&at| (at as usize, xv[base + at as usize]));
            out.push(match op {
                "MaxPool" => {
                    let (mut best, mut best_at) = (f64::NEG_INFINITY, 0);
                    for (at, v) in present {
                        if v > best {
                            (best, best_at) = (v, at);
                        }
                    }
                    indices.push((base + index_in(best_at)) as i64);
                    best
                }
                "LpPool" => present.map(|(_, v)| v.abs().powf(p)).sum::<f64>().powf(1.0 / p),
                _ => {
                    let (sum, n) = present.fold((0.0, 0usize), |(s, n), (_, v)| (s + v, n + 1));
                    let n = if include_pad { divisors[o] } else { n };
                    if n == 0 { 0.0 } else { sum / n as f64 }
                }
            });
        }
    }
    let mut result = vec![Value::Tensor(numeric_like(x.data_type(), shape.clone(), out)?)];
    if op == "MaxPool" && ctx.node.outputs.len() > 1 {
        result.push(Value::Tensor(Tensor::new(shape, Data::I64(indices.into()))));
    }
    Ok(result)
}

/// The input positions `lo..hi` along one axis under window `o` (empty in padding only).
fn window_span(o: usize, stride: usize, begin: usize, kernel: usize, len: usize) -> std::ops::Range<usize> {
    let start = (o * stride) as i64 - begin as i64;
    let lo = start.clamp(0, len as i64) as usize;
    let hi = (start + kernel as i64).clamp(0, len as i64) as usize;
    lo..hi.max(lo)
}

/// 2-D max pooling of float32 planes without dilation, in two passes: the maximum along
/// each row under every horizontal window, then the maximum of those rows under every
/// vertical window. Both read contiguous runs, where the tap list reads one offset per
/// kernel position. NaN never wins, as in the general path.
fn max_pool_2d(xv: &[f32], planes: usize, spatial: &[usize], win: &Window) -> Vec<f32> {
    crate::simd::widest(
        #[inline(always)]
        || max_pool_2d_passes(xv, planes, spatial, win),
    )
}

#[inline(always)]
fn max_pool_2d_passes(xv: &[f32], planes: usize, spatial: &[usize], win: &Window) -> Vec<f32> {
    let larger = |best: f32, v: f32| if v > best { v } else { best };
    let (h, w) = (spatial[0], spatial[1]);
    let (oh, ow) = (win.out[0], win.out[1]);
    if win.strides == [1, 1] && (oh, ow) == (h, w) {
        return same_size_max_pool(xv, planes, (h, w), win);
    }
    let columns: Vec<std::ops::Range<usize>> =
        (0..ow).map(|o| window_span(o, win.strides[1], win.begin[1], win.kernel[1], w)).collect();
    // The windows wholly inside the row: there the pass is one strided sweep per tap.
    let (stride, begin, kernel) = (win.strides[1], win.begin[1], win.kernel[1]);
    let inside = |o: &usize| o * stride >= begin && o * stride - begin + kernel <= w;
    let first = (0..ow).find(inside).unwrap_or(ow);
    let last = (first..ow).take_while(inside).last().map_or(first, |o| o + 1);
    let mut rows = vec![f32::NEG_INFINITY; h * ow];
    let mut out = Vec::with_capacity(planes * oh * ow);
    for plane in xv.chunks(h * w).take(planes) {
        for (row, maxima) in plane.chunks(w.max(1)).zip(rows.chunks_mut(ow.max(1))) {
            for o in (0..first).chain(last..ow) {
                maxima[o] = row[columns[o].clone()].iter().copied().fold(f32::NEG_INFINITY, larger);
            }
            let middle = &mut maxima[first..last];
            middle.fill(f32::NEG_INFINITY);
            for k in (0..kernel).take_while(|_| first < last) {
                let from = first * stride + k - begin;
                if stride == 1 {
                    let taps = &row[from..from + middle.len()];
                    middle.iter_mut().zip(taps).for_each(|(m, &v)| *m = larger(*m, v));
                } else {
                    let taps = row[from..].iter().step_by(stride);
                    middle.iter_mut().zip(taps).for_each(|(m, &v)| *m = larger(*m, v));
                }
            }
        }
        for o in 0..oh {
            let start = out.len();
            out.resize(start + ow, f32::NEG_INFINITY);
            for r in window_span(o, win.strides[0], win.begin[0], win.kernel[0], h) {
                let line = &rows[r * ow..(r + 1) * ow];
                out[start..].iter_mut().zip(line).for_each(|(best, &v)| *best = larger(*best, v));
            }
        }
    }
    out
}

/// Max pooling with stride 1 whose output is the input's size (an inception block's 3×3
/// pool): each pass is a sweep over the whole plane per kernel tap, the plane shifted by
/// the tap (small planes no longer pay a loop per row); the horizontal sweep also reads
/// across row ends, so the few columns within the kernel of a row's ends are done again
/// window by window.
#[inline(always)]
fn same_size_max_pool(xv: &[f32], planes: usize, (h, w): (usize, usize), win: &Window) -> Vec<f32> {
    let larger = |best: f32, v: f32| if v > best { v } else { best };
    let len = h * w;
    // `target[i] = max(target[i], source[i + shift])` wherever `i + shift` is in the plane.
    let sweep = |target: &mut [f32], source: &[f32], shift: isize| {
        let (from, to) = if shift < 0 { (shift.unsigned_abs(), len) } else { (0, len - (shift as usize).min(len)) };
        if from < to {
            let shifted = &source[(from as isize + shift) as usize..(to as isize + shift) as usize];
            target[from..to].iter_mut().zip(shifted).for_each(|(t, &v)| *t = larger(*t, v));
        }
    };
    let (kh, kw) = (win.kernel[0], win.kernel[1]);
    let (bh, bw) = (win.begin[0] as isize, win.begin[1] as isize);
    let edges: Vec<usize> =
        (0..w).filter(|&c| (c as isize) < bw || c as isize + kw as isize - bw > w as isize).collect();
    let mut rows = vec![f32::NEG_INFINITY; len];
    let mut out = vec![f32::NEG_INFINITY; planes * len];
    for (plane, result) in xv.chunks(len.max(1)).zip(out.chunks_mut(len.max(1))).take(planes) {
        rows.fill(f32::NEG_INFINITY);
        for t in 0..kw as isize {
            sweep(&mut rows, plane, t - bw);
        }
        for (row, maxima) in plane.chunks(w.max(1)).zip(rows.chunks_mut(w.max(1))) {
            for &c in &edges {
                let span = window_span(c, 1, win.begin[1], kw, w);
                maxima[c] = row[span].iter().copied().fold(f32::NEG_INFINITY, larger);
            }
        }
        for t in 0..kh as isize {
            sweep(result, &rows, (t - bh) * w as isize);
        }
    }
    out
}

fn global_pool(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    if x.rank() < 2 {
        return Err(bad_input!("global pooling needs batch and channel axes"));
    }
    // An empty input may declare any batch and channels: one output each.
    let planes = count(&x.shape[..2])?;
    ctx.check_grown(planes, x.len())?;
    let size = count(&x.shape[2..])?;
    let xv = x.to_f64s()?;
    // GlobalLpPool's norm order: an int from version 2 on, a float in version 1.
    let order = ctx.int("p").map(|p| p as f64).or_else(|| ctx.float("p").map(f64::from)).unwrap_or(2.0);
    if ctx.op() == "GlobalLpPool" && !(order > 0.0 && order.is_finite()) {
        return Err(bad_attribute!("p = {order}: the norm order of GlobalLpPool must be positive"));
    }
    let out = (0..planes)
        .map(|p| {
            let plane = &xv[p * size..(p + 1) * size];
            match ctx.op() {
                "GlobalMaxPool" => plane.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                "GlobalLpPool" => plane.iter().map(|v| v.abs().powf(order)).sum::<f64>().powf(1.0 / order),
                _ => plane.iter().sum::<f64>() / size as f64,
            }
        })
        .collect();
    let mut shape = x.shape[..2].to_vec();
    shape.extend(std::iter::repeat_n(1, x.rank() - 2));
    one(numeric_like(x.data_type(), shape, out)?)
}

/// Inference mode: `(x - mean) / sqrt(var + epsilon) * scale + bias` per channel.
fn batch_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let [scale, bias, mean, var] = [1, 2, 3, 4].map(|i| input(inputs, i).and_then(Tensor::to_f64s));
    let (scale, bias, mut mean, mut var) = (scale?, bias?, mean?, var?);
    let eps = f64::from(ctx.float("epsilon").unwrap_or(1e-5));
    let channels = *x.shape.get(1).unwrap_or(&1);
    if [&scale, &bias, &mean, &var].iter().any(|v| v.len() != channels) {
        return Err(bad_input!("per-channel inputs do not have {channels} values"));
    }
    let inner = count(&x.shape[2.min(x.rank())..])?;
    let mut v = x.to_f64s()?;
    // Training mode normalizes with the batch's own mean and (biased) variance per channel,
    // and also returns the running statistics moved towards them by `1 − momentum`.
    let training = ctx.int("training_mode").unwrap_or(0) != 0;
    let mut running = None;
    if training {
        let momentum = f64::from(ctx.float("momentum").unwrap_or(0.9));
        let per_channel = (v.len() / channels.max(1)).max(1) as f64;
        let (mut sums, mut squares) = (vec![0.0; channels], vec![0.0; channels]);
        for (i, e) in v.iter().enumerate() {
            sums[(i / inner.max(1)) % channels] += e;
        }
        let batch_mean: Vec<f64> = sums.iter().map(|s| s / per_channel).collect();
        for (i, e) in v.iter().enumerate() {
            let c = (i / inner.max(1)) % channels;
            squares[c] += (e - batch_mean[c]).powi(2);
        }
        let batch_var: Vec<f64> = squares.iter().map(|s| s / per_channel).collect();
        let moved = |old: &[f64], new: &[f64]| {
            old.iter().zip(new).map(|(o, n)| o * momentum + n * (1.0 - momentum)).collect::<Vec<_>>()
        };
        running = Some((moved(&mean, &batch_mean), moved(&var, &batch_var)));
        (mean, var) = (batch_mean, batch_var);
    }
    for (i, e) in v.iter_mut().enumerate() {
        let c = (i / inner) % channels;
        *e = (*e - mean[c]) / (var[c] + eps).sqrt() * scale[c] + bias[c];
    }
    let y = Value::Tensor(numeric_like(x.data_type(), x.shape.clone(), v)?);
    match running {
        Some((m, r)) => Ok(vec![
            y,
            Value::Tensor(numeric_like(x.data_type(), vec![channels], m)?),
            Value::Tensor(numeric_like(x.data_type(), vec![channels], r)?),
        ]),
        None => Ok(vec![y]),
    }
}

fn layer_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let a = super::axis(ctx.int("axis").unwrap_or(-1), x.rank())?;
    let eps = f64::from(ctx.float("epsilon").unwrap_or(1e-5));
    let (outer, inner) = (count(&x.shape[..a])?, count(&x.shape[a..])?);
    // One mean and one deviation per row: an empty input may still have many rows.
    ctx.check_grown(outer, x.len())?;
    let scale = input(inputs, 1)?;
    let bias = optional(inputs, 2)?;
    let norm_shape = &x.shape[a..];
    let s = broadcast_to(scale, norm_shape, x)?;
    let b = match bias {
        Some(b) => broadcast_to(b, norm_shape, x)?,
        None => vec![0.0; s.len()],
    };
    let mut v = x.to_f64s()?;
    let (mut means, mut inv_stds) = (Vec::with_capacity(outer), Vec::with_capacity(outer));
    for o in 0..outer {
        let row = &mut v[o * inner..(o + 1) * inner];
        let mean = row.iter().sum::<f64>() / inner as f64;
        let var = row.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / inner as f64;
        let inv = 1.0 / (var + eps).sqrt();
        for (k, e) in row.iter_mut().enumerate() {
            *e = (*e - mean) * inv * s[k] + b[k];
        }
        means.push(mean);
        inv_stds.push(inv);
    }
    let mut out = vec![Value::Tensor(numeric_like(x.data_type(), x.shape.clone(), v)?)];
    let mut reduced = x.shape[..a].to_vec();
    reduced.extend(std::iter::repeat_n(1, x.rank() - a));
    let stash = if ctx.int("stash_type").unwrap_or(1) == 1 { onnx_core::ir::DataType::Float } else { x.data_type() };
    if ctx.node.outputs.len() > 1 {
        out.push(Value::Tensor(numeric_like(stash, reduced.clone(), means)?));
    }
    if ctx.node.outputs.len() > 2 {
        out.push(Value::Tensor(numeric_like(stash, reduced, inv_stds)?));
    }
    Ok(out)
}

/// `t`'s values broadcast to `shape`, the shape of each row of `x`: none when `x` is empty
/// (no row reads them, and its rows may declare any size).
fn broadcast_to(t: &Tensor, shape: &[usize], x: &Tensor) -> Result<Vec<f64>, KernelError> {
    let v = t.to_f64s()?;
    if crate::broadcast::shape(&[&t.shape, shape])? != shape {
        return Err(bad_input!("shape {:?} does not broadcast to {shape:?}", t.shape));
    }
    if x.is_empty() {
        return Ok(Vec::new());
    }
    Ok(crate::broadcast::offsets(shape, &crate::broadcast::input_strides(&t.shape, shape)).map(|i| v[i]).collect())
}

fn instance_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let (scale, bias) = (input(inputs, 1)?.to_f64s()?, input(inputs, 2)?.to_f64s()?);
    let eps = f64::from(ctx.float("epsilon").unwrap_or(1e-5));
    let channels = *x.shape.get(1).ok_or(bad_input!("InstanceNormalization needs a channel axis"))?;
    if scale.len() != channels || bias.len() != channels {
        return Err(bad_input!("scale and bias need one value per channel"));
    }
    let size = count(&x.shape[2..])?;
    let mut v = x.to_f64s()?;
    for (p, plane) in v.chunks_mut(size.max(1)).enumerate() {
        let c = p % channels;
        let mean = plane.iter().sum::<f64>() / size as f64;
        let var = plane.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / size as f64;
        for e in plane.iter_mut() {
            *e = (*e - mean) / (var + eps).sqrt() * scale[c] + bias[c];
        }
    }
    one(numeric_like(x.data_type(), x.shape.clone(), v)?)
}

fn rms_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let a = super::axis(ctx.int("axis").unwrap_or(-1), x.rank())?;
    let eps = f64::from(ctx.float("epsilon").unwrap_or(1e-5));
    let inner = count(&x.shape[a..])?;
    let s = broadcast_to(input(inputs, 1)?, &x.shape[a..], x)?;
    let mut v = x.to_f64s()?;
    for row in v.chunks_mut(inner.max(1)) {
        let mean_square = row.iter().map(|x| x * x).sum::<f64>() / inner as f64;
        let inv = 1.0 / (mean_square + eps).sqrt();
        for (k, e) in row.iter_mut().enumerate() {
            *e = *e * inv * s[k];
        }
    }
    one(numeric_like(x.data_type(), x.shape.clone(), v)?)
}

/// Channels in `num_groups` groups, each normalized over its channels and spatial axes;
/// scale and bias per channel (opset 21) or per group (opset 18).
fn group_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let (scale, bias) = (input(inputs, 1)?.to_f64s()?, input(inputs, 2)?.to_f64s()?);
    let groups = usize::try_from(ctx.int("num_groups").ok_or(bad_attribute!("num_groups is required"))?)
        .ok()
        .filter(|&g| g > 0)
        .ok_or(bad_attribute!("num_groups must be positive"))?;
    let eps = f64::from(ctx.float("epsilon").unwrap_or(1e-5));
    let channels = *x.shape.get(1).ok_or(bad_input!("GroupNormalization needs a channel axis"))?;
    if channels % groups != 0 {
        return Err(bad_input!("{channels} channels do not divide into {groups} groups"));
    }
    let per_group = channels / groups;
    // Scale and bias come per channel (opset 21) or per group (opset 18).
    for (name, values) in [("scale", &scale), ("bias", &bias)] {
        if values.len() != channels && values.len() != groups {
            return Err(bad_input!(
                "{name} holds {} values, not {channels} (channels) or {groups} (groups)",
                values.len()
            ));
        }
    }
    if scale.len() != bias.len() {
        return Err(bad_input!("scale holds {} values and bias {}", scale.len(), bias.len()));
    }
    let size = count(&x.shape[2..])?;
    let mut v = x.to_f64s()?;
    for (gi, group) in v.chunks_mut(per_group.saturating_mul(size).max(1)).enumerate() {
        let g = gi % groups;
        let n = group.len() as f64;
        let mean = group.iter().sum::<f64>() / n;
        let var = group.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        for (k, e) in group.iter_mut().enumerate() {
            let c = g * per_group + k / size.max(1);
            let (s, b) = if scale.len() == channels { (scale[c], bias[c]) } else { (scale[g], bias[g]) };
            *e = (*e - mean) / (var + eps).sqrt() * s + b;
        }
    }
    one(numeric_like(x.data_type(), x.shape.clone(), v)?)
}

fn lp_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let a = super::axis(ctx.int("axis").unwrap_or(-1), x.rank())?;
    let p = ctx.int("p").unwrap_or(2);
    if x.is_empty() {
        // Nothing to normalize (and the other axes may be of any size).
        return one(x.clone());
    }
    let (outer, n, inner) = (count(&x.shape[..a])?, x.shape[a], count(&x.shape[a + 1..])?);
    let mut v = x.to_f64s()?;
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * n + k) * inner + i;
            let norm = if p == 1 {
                (0..n).map(|k| v[at(k)].abs()).sum::<f64>()
            } else {
                (0..n).map(|k| v[at(k)] * v[at(k)]).sum::<f64>().sqrt()
            };
            for k in 0..n {
                v[at(k)] = if norm == 0.0 { 0.0 } else { v[at(k)] / norm };
            }
        }
    }
    one(numeric_like(x.data_type(), x.shape.clone(), v)?)
}

fn mean_variance_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let axes: Vec<usize> = match ctx.ints("axes") {
        Some(a) => a.iter().map(|&v| super::axis(v, x.rank())).collect::<Result<_, _>>()?,
        None => vec![0, 2, 3].into_iter().filter(|&a| a < x.rank()).collect(),
    };
    if x.is_empty() {
        // No groups to normalize (and the kept axes may be of any size).
        return one(x.clone());
    }
    let strides = crate::broadcast::strides(&x.shape);
    let kept: Vec<usize> = (0..x.rank()).filter(|a| !axes.contains(a)).collect();
    let key = |i: usize| -> usize { kept.iter().fold(0, |k, &a| k * x.shape[a] + (i / strides[a]) % x.shape[a]) };
    let groups = kept.iter().map(|&a| x.shape[a]).product::<usize>().max(1);
    let v = x.to_f64s()?;
    let (mut sum, mut square, mut n) = (vec![0.0; groups], vec![0.0; groups], vec![0usize; groups]);
    for (i, &e) in v.iter().enumerate() {
        let k = key(i);
        sum[k] += e;
        square[k] += e * e;
        n[k] += 1;
    }
    let out = v
        .iter()
        .enumerate()
        .map(|(i, &e)| {
            let k = key(i);
            let mean = sum[k] / n[k] as f64;
            let var = square[k] / n[k] as f64 - mean * mean;
            (e - mean) / (var.max(0.0).sqrt() + 1e-9)
        })
        .collect();
    one(numeric_like(x.data_type(), x.shape.clone(), out)?)
}

fn lrn(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let size = usize::try_from(ctx.int("size").ok_or(bad_attribute!("size is required"))?)
        .ok()
        .filter(|&s| s > 0)
        .ok_or(bad_attribute!("size must be positive"))?;
    let (alpha, beta, bias) = (
        f64::from(ctx.float("alpha").unwrap_or(1e-4)),
        f64::from(ctx.float("beta").unwrap_or(0.75)),
        f64::from(ctx.float("bias").unwrap_or(1.0)),
    );
    if x.rank() < 2 {
        return Err(bad_input!("LRN needs [N, C, …]"));
    }
    if x.is_empty() {
        // Nothing to normalize (and the other axes may be of any size).
        return one(x.clone());
    }
    let dims = (x.shape[0], x.shape[1], count(&x.shape[2..])?);
    let params = LrnParams { size, alpha, beta, bias };
    // Float32 is read and written as it is: widened copies of the input, its squares and
    // the output were most of the time (fresh pages for each).
    if let Data::F32(v) = &*x.data {
        return one(Tensor::new(x.shape.clone(), Data::F32(lrn_values(v, dims, &params, |y| y as f32).into())));
    }
    let out = lrn_values(&x.to_f64s()?, dims, &params, |y| y);
    one(numeric_like(x.data_type(), x.shape.clone(), out)?)
}

struct LrnParams {
    size: usize,
    alpha: f64,
    beta: f64,
    bias: f64,
}

/// LRN over `[n, c, inner]` values, computed in f64 and narrowed once by `narrow`:
/// `x / (bias + alpha/size · Σ x²)^beta`, the sum over the channels around each one.
fn lrn_values<T: Copy + Into<f64>, O: Copy + Default>(
    v: &[T],
    (n, c, inner): (usize, usize, usize),
    p: &LrnParams,
    narrow: impl Fn(f64) -> O,
) -> Vec<O> {
    let (before, after) = ((p.size - 1) / 2, (p.size - 1).div_ceil(2));
    let scale = p.alpha / p.size as f64;
    let mut out = vec![O::default(); v.len()];
    let mut window = vec![0.0f64; inner];
    // Compiled for the widest vectors: square roots and divisions are most of the work.
    crate::simd::widest(
        #[inline(always)]
        || {
            for b in 0..n {
                for ch in 0..c {
                    let (lo, hi) = (ch.saturating_sub(before), ch.saturating_add(after).min(c - 1));
                    // The squares of the channels around `ch`, summed plane by plane in
                    // channel order.
                    window.fill(0.0);
                    for k in lo..=hi {
                        let plane = &v[(b * c + k) * inner..(b * c + k + 1) * inner];
                        window.iter_mut().zip(plane).for_each(|(sum, &x)| {
                            let x: f64 = x.into();
                            *sum += x * x;
                        });
                    }
                    let at = (b * c + ch) * inner;
                    let values = out[at..at + inner].iter_mut().zip(&v[at..at + inner]).zip(&window);
                    // `b^0.75` (every LRN of AlexNet and GoogLeNet) as `√b·√√b`: two square
                    // roots, which vectorize, for a `powf` per element (within an ulp of it).
                    if p.beta == 0.75 {
                        for ((o, &x), &square) in values {
                            let base = p.bias + scale * square;
                            *o = narrow(x.into() / (base.sqrt() * base.sqrt().sqrt()));
                        }
                    } else {
                        for ((o, &x), &square) in values {
                            *o = narrow(x.into() / (p.bias + scale * square).powf(p.beta));
                        }
                    }
                }
            }
        },
    );
    out
}

/// The transpose of a convolution: every input element spreads over the output through the
/// kernel.
fn conv_transpose(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, w) = (input(inputs, 0)?, input(inputs, 1)?);
    if x.rank() < 3 || w.rank() != x.rank() {
        return Err(bad_input!("ConvTranspose of input {:?} and weights {:?}", x.shape, w.shape));
    }
    let group = usize::try_from(ctx.int("group").unwrap_or(1))
        .ok()
        .filter(|&g| g > 0)
        .ok_or(bad_attribute!("group must be positive"))?;
    let (batch, channels, spatial) = (x.shape[0], x.shape[1], x.shape[2..].to_vec());
    let n = spatial.len();
    if w.shape[0] != channels || channels % group != 0 {
        return Err(bad_input!("weights {:?} for {channels} input channels in {group} groups", w.shape));
    }
    let per_group_out = w.shape[1];
    let filters = per_group_out.checked_mul(group).ok_or(limit!("the number of filters overflows"))?;
    let kernel = w.shape[2..].to_vec();
    let list = |name: &str, default: i64, len: usize| -> Result<Vec<i64>, KernelError> {
        match ctx.ints(name) {
            Some(v) if v.len() == len => Ok(v.to_vec()),
            Some(v) => Err(bad_attribute!("{name} has {} values, expected {len}", v.len())),
            None => Ok(vec![default; len]),
        }
    };
    let strides = list("strides", 1, n)?;
    let dilations = list("dilations", 1, n)?;
    let output_padding = list("output_padding", 0, n)?;
    let mut pads = list("pads", 0, 2 * n)?;
    if strides.iter().chain(&dilations).any(|&v| v < 1) {
        return Err(bad_attribute!("strides {strides:?} and dilations {dilations:?} must be positive"));
    }
    if output_padding.iter().chain(&pads).any(|&v| v < 0) {
        return Err(bad_attribute!("pads {pads:?} and output_padding {output_padding:?} cannot be negative"));
    }
    // The full output extent per axis; every position a tap reaches lies below it, so the
    // arithmetic below cannot overflow once this does not.
    let overflow = |i: usize| limit!("the output extent along spatial axis {i} overflows");
    let full: Vec<i64> = (0..n)
        .map(|i| {
            let (len, k) = (i64::try_from(spatial[i]).ok()?, i64::try_from(kernel[i]).ok()?);
            strides[i]
                .checked_mul(len - 1)?
                .checked_add(output_padding[i])?
                .checked_add((k - 1).checked_mul(dilations[i])?)?
                .checked_add(1)
        })
        .enumerate()
        .map(|(i, f)| f.ok_or_else(|| overflow(i)))
        .collect::<Result<_, _>>()?;
    let auto = ctx.string("auto_pad").unwrap_or("NOTSET");
    let out_shape: Vec<i64> = if let Some(shape) = ctx.ints("output_shape") {
        if shape.len() < n {
            return Err(bad_attribute!("output_shape has {} values for {n} spatial axes", shape.len()));
        }
        let shape = &shape[shape.len() - n..];
        if let Some(d) = shape.iter().find(|&&d| d < 0) {
            return Err(bad_attribute!("output_shape holds {d}"));
        }
        for i in 0..n {
            let total = full[i].checked_sub(shape[i]).ok_or_else(|| overflow(i))?;
            let half = total.div_euclid(2);
            let (a, b) = if auto == "SAME_UPPER" { (half, total - half) } else { (total - half, half) };
            pads[i] = a;
            pads[i + n] = b;
        }
        shape.to_vec()
    } else if auto == "SAME_UPPER" || auto == "SAME_LOWER" {
        let wanted: Vec<i64> = (0..n)
            .map(|i| i64::try_from(spatial[i]).ok().and_then(|s| s.checked_mul(strides[i])).ok_or_else(|| overflow(i)))
            .collect::<Result<_, _>>()?;
        for i in 0..n {
            let total = full[i].checked_sub(wanted[i]).ok_or_else(|| overflow(i))?.max(0);
            let half = total.div_euclid(2);
            let (a, b) = if auto == "SAME_UPPER" { (half, total - half) } else { (total - half, half) };
            pads[i] = a;
            pads[i + n] = b;
        }
        wanted
    } else {
        (0..n)
            .map(|i| full[i].checked_sub(pads[i]).and_then(|f| f.checked_sub(pads[i + n])).ok_or_else(|| overflow(i)))
            .collect::<Result<_, _>>()?
    };
    let out_spatial: Vec<usize> = out_shape
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| bad_input!("output size {d}")))
        .collect::<Result<_, _>>()?;
    let out_size = count(&out_spatial)?;
    let total = count(&[batch, filters, out_size])?;
    ctx.check_elements(total)?;
    let bias = optional(inputs, 2)?.map(Tensor::to_f64s).transpose()?;
    if let Some(b) = &bias
        && b.len() != filters
    {
        return Err(bad_input!("B holds {} values, not one per filter ({filters})", b.len()));
    }
    let in_size = count(&spatial)?;
    let kernel_size = count(&kernel)?;
    let per_group_in = channels / group;
    let (in_strides, k_strides, o_strides) = (
        crate::broadcast::strides(&spatial),
        crate::broadcast::strides(&kernel),
        crate::broadcast::strides(&out_spatial),
    );
    // Where input position p lands in the output under kernel tap k, if inside.
    let landing = |p: usize, k: usize| -> Option<usize> {
        let mut offset = 0usize;
        for d in 0..n {
            let ip = ((p / in_strides[d]) % spatial[d]) as i64;
            let kp = ((k / k_strides[d]) % kernel[d]) as i64;
            // Below `full`: no overflow; a pad from output_shape may be negative.
            let o = (ip * strides[d] + kp * dilations[d]).checked_sub(pads[d]).unwrap_or(i64::MAX);
            if o < 0 || o >= out_spatial[d] as i64 {
                return None;
            }
            offset += o as usize * o_strides[d];
        }
        Some(offset)
    };
    let mut shape = vec![batch, filters];
    shape.extend_from_slice(&out_spatial);
    if let (Data::F32(xv), Data::F32(wv)) = (&*x.data, &*w.data)
        && total > 0
        && !xv.is_empty()
        && per_group_out.checked_mul(kernel_size).and_then(|r| r.checked_mul(in_size)).is_some_and(|c| c <= MAX_SPREAD)
    {
        let landings: Vec<usize> = (0..kernel_size)
            .flat_map(|k| (0..in_size).map(move |p| (p, k)))
            .map(|(p, k)| landing(p, k).unwrap_or(usize::MAX))
            .collect();
        let layout = TransposedLayout { batch, channels, group, per_group_out, in_size, kernel_size, out_size };
        let mut out = conv_transpose_f32(xv, wv, &layout, &landings)?;
        if let Some(bias) = &bias {
            for (row, values) in out.chunks_mut(out_size).enumerate() {
                let b = bias.get(row % filters).copied().unwrap_or(0.0) as f32;
                values.iter_mut().for_each(|o| *o += b);
            }
        }
        return one(Tensor::new(shape, Data::F32(out.into())));
    }
    let (xv, wv) = (x.to_f64s()?, w.to_f64s()?);
    let mut out = vec![0.0; total];
    // An empty input or kernel spreads nothing (and its other axes may be of any size).
    let spread = !(xv.is_empty() || wv.is_empty() || total == 0);
    for b in 0..if spread { batch } else { 0 } {
        for c in 0..channels {
            let g = c / per_group_in;
            for p in 0..in_size {
                let xval = xv[(b * channels + c) * in_size + p];
                for k in 0..kernel_size {
                    let Some(offset) = landing(p, k) else { continue };
                    for m in 0..per_group_out {
                        let f = g * per_group_out + m;
                        out[(b * filters + f) * out_size + offset] +=
                            xval * wv[(c * per_group_out + m) * kernel_size + k];
                    }
                }
            }
        }
    }
    if let Some(bias) = bias {
        for (i, o) in out.iter_mut().enumerate() {
            *o += bias.get((i / out_size.max(1)) % filters).copied().unwrap_or(0.0);
        }
    }
    one(numeric_like(x.data_type(), shape, out)?)
}

/// The most values of the matrix a float32 ConvTranspose spreads from (filters × taps ×
/// input positions of a group); beyond it, the direct loop, which needs no such matrix.
const MAX_SPREAD: usize = 1 << 24;

/// The sizes a float32 ConvTranspose works with.
struct TransposedLayout {
    batch: usize,
    channels: usize,
    group: usize,
    per_group_out: usize,
    in_size: usize,
    kernel_size: usize,
    out_size: usize,
}

/// ConvTranspose of float32 data as one GEMM per image and group and a scatter: the
/// weights transposed times the input give, for every filter, tap and input position, the
/// value it adds to the output (col2im); `landings[k·in_size + p]` is where input position
/// p lands under tap k (`usize::MAX`: outside). The direct loop did a multiply-add per
/// value with index arithmetic on every one, in f64.
fn conv_transpose_f32(x: &[f32], w: &[f32], l: &TransposedLayout, landings: &[usize]) -> Result<Vec<f32>, KernelError> {
    let per_group_in = l.channels / l.group;
    let filters = l.per_group_out * l.group;
    let spread_rows = l.per_group_out * l.kernel_size;
    let mut spread = vec![0.0f32; spread_rows * l.in_size];
    let mut out = vec![0.0f32; l.batch * filters * l.out_size];
    for b in 0..l.batch {
        for g in 0..l.group {
            let xg = &x[(b * l.channels + g * per_group_in) * l.in_size..][..per_group_in * l.in_size];
            let wg = &w[g * per_group_in * spread_rows..][..per_group_in * spread_rows];
            crate::gemm::sgemm(
                1.0,
                View::rows(wg, per_group_in, spread_rows).t(),
                View::rows(xg, per_group_in, l.in_size),
                0.0,
                &mut spread,
            )?;
            for m in 0..l.per_group_out {
                let target = &mut out[(b * filters + g * l.per_group_out + m) * l.out_size..][..l.out_size];
                for k in 0..l.kernel_size {
                    let values = &spread[(m * l.kernel_size + k) * l.in_size..][..l.in_size];
                    for (&v, &at) in values.iter().zip(&landings[k * l.in_size..][..l.in_size]) {
                        if let Some(o) = target.get_mut(at) {
                            *o += v;
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{ConvGeometry, Window, conv_f32_in_tiles, max_pool_2d};

    /// A convolution by its definition, one output value at a time.
    fn by_definition(x: &[f32], w: &[f32], win: &Window, spatial: &[usize], g: &ConvGeometry) -> Vec<f32> {
        let (per_group, filters_per_group) = (g.channels / g.group, g.filters / g.group);
        let (oh, ow, kh, kw) = (win.out[0], win.out[1], win.kernel[0], win.kernel[1]);
        let mut out = Vec::new();
        for b in 0..g.batch {
            for f in 0..g.filters {
                let group = f / filters_per_group;
                for (i, j) in (0..oh).flat_map(|i| (0..ow).map(move |j| (i, j))) {
                    let mut sum = 0.0f64;
                    for c in 0..per_group {
                        for (u, v) in (0..kh).flat_map(|u| (0..kw).map(move |v| (u, v))) {
                            let y = (i * win.strides[0] + u * win.dilations[0]) as i64 - win.begin[0] as i64;
                            let z = (j * win.strides[1] + v * win.dilations[1]) as i64 - win.begin[1] as i64;
                            if y < 0 || z < 0 || y as usize >= spatial[0] || z as usize >= spatial[1] {
                                continue;
                            }
                            let plane = (b * g.channels + group * per_group + c) * g.in_size;
                            let xv = x[plane + y as usize * spatial[1] + z as usize];
                            let wv = w[((f * per_group + c) * kh + u) * kw + v];
                            sum += f64::from(xv) * f64::from(wv);
                        }
                    }
                    out.push(sum as f32);
                }
            }
        }
        out
    }

    /// The two-pass max pooling (and its same-size sweep) gives the maximum under every
    /// window by its definition, for kernels, strides and pads (uneven ones included)
    /// over small and odd planes, with NaN among the values.
    #[test]
    fn two_pass_max_pooling_is_the_definition() {
        let larger = |best: f32, v: f32| if v > best { v } else { best };
        let mut checked = 0;
        for (h, w) in [(1, 1), (2, 5), (5, 7), (7, 3), (13, 13)] {
            let values: Vec<f32> =
                (0..2 * h * w).map(|i| if i % 11 == 7 { f32::NAN } else { ((i * 37 % 23) as f32) - 11.0 }).collect();
            for (kh, kw) in [(1, 1), (2, 2), (3, 3), (2, 3), (5, 5)] {
                for stride in [1, 2, 3] {
                    for (before, after) in [(0, 0), (1, 1), (0, 1), (1, 0), (2, 2)] {
                        if before >= kh.min(kw) || after >= kh.min(kw) {
                            continue;
                        }
                        let size = |len: usize, k: usize| (len + before + after).checked_sub(k).map(|s| s / stride + 1);
                        let (Some(oh), Some(ow)) = (size(h, kh), size(w, kw)) else { continue };
                        let win = Window {
                            kernel: vec![kh, kw],
                            strides: vec![stride, stride],
                            dilations: vec![1, 1],
                            begin: vec![before, before],
                            padded: vec![h + before + after, w + before + after],
                            out: vec![oh, ow],
                        };
                        let got = max_pool_2d(&values, 2, &[h, w], &win);
                        let mut want = Vec::new();
                        for plane in values.chunks(h * w) {
                            for oy in 0..oh {
                                for ox in 0..ow {
                                    let mut best = f32::NEG_INFINITY;
                                    for ky in 0..kh {
                                        for kx in 0..kw {
                                            let (y, x) = (
                                                (oy * stride + ky) as i64 - before as i64,
                                                (ox * stride + kx) as i64 - before as i64,
                                            );
                                            if (0..h as i64).contains(&y) && (0..w as i64).contains(&x) {
                                                best = larger(best, plane[y as usize * w + x as usize]);
                                            }
                                        }
                                    }
                                    want.push(best);
                                }
                            }
                        }
                        let same =
                            got.len() == want.len() && got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
                        assert!(
                            same,
                            "{h}x{w} kernel {kh}x{kw} stride {stride} pads {before},{after}: {got:?} vs {want:?}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 100, "only {checked} geometries");
    }

    /// Tiles of every width, cutting rows of the output anywhere, with padding, strides,
    /// dilations, groups and one-filter groups, give the convolution by its definition.
    #[test]
    fn tiled_convolution_is_the_definition() {
        let cases = [
            // (channels, filters, group, spatial, kernel, strides, dilations, begin)
            (3, 4, 1, [9, 13], [3, 2], [2, 1], [1, 2], [1, 0]),
            (4, 4, 4, [7, 6], [3, 3], [1, 1], [1, 1], [1, 1]),
            (4, 2, 2, [5, 17], [1, 4], [1, 3], [1, 1], [0, 2]),
        ];
        for (channels, filters, group, spatial, kernel, strides, dilations, begin) in cases {
            let out: Vec<usize> = (0..2)
                .map(|i| (spatial[i] + 2 * begin[i] - dilations[i] * (kernel[i] - 1) - 1) / strides[i] + 1)
                .collect();
            let win = Window {
                kernel: kernel.to_vec(),
                strides: strides.to_vec(),
                dilations: dilations.to_vec(),
                begin: begin.to_vec(),
                padded: (0..2).map(|i| spatial[i] + 2 * begin[i]).collect(),
                out,
            };
            let g = ConvGeometry { batch: 2, channels, filters, group, in_size: spatial[0] * spatial[1] };
            let x: Vec<f32> = (0..2 * channels * g.in_size).map(|i| ((i * 7919) % 23) as f32 - 11.0).collect();
            let w: Vec<f32> = (0..filters * channels / group * kernel[0] * kernel[1])
                .map(|i| ((i * 104_729) % 13) as f32 - 6.0)
                .collect();
            let want = by_definition(&x, &w, &win, &spatial, &g);
            let outputs = win.out[0] * win.out[1];
            for tile in [1, 3, 7, outputs - 1, outputs, outputs + 5] {
                for shares in [1, 2, 3] {
                    let got = conv_f32_in_tiles(&x, &w, None, &win, &spatial, &g, tile, shares).expect("conv");
                    // Small integers: every order of summation is exact.
                    assert_eq!(
                        got, want,
                        "tile {tile}, {shares} shares, {channels} channels, {filters} filters, group {group}"
                    );
                }
            }
            // Values that round: the shares give the same bits as one.
            let x: Vec<f32> = x.iter().map(|v| v * 0.37 + 0.011).collect();
            let one = conv_f32_in_tiles(&x, &w, None, &win, &spatial, &g, 5, 1).expect("conv");
            for shares in [2, 3, 8] {
                let got = conv_f32_in_tiles(&x, &w, None, &win, &spatial, &g, 5, shares).expect("conv");
                assert!(got.iter().zip(&one).all(|(a, b)| a.to_bits() == b.to_bits()), "{shares} shares");
            }
        }
    }
}
