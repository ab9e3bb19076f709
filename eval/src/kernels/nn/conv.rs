//! Convolution: Conv (in f32 through im2col and GEMM, in tiles), ConvInteger, QLinearConv
//! and ConvTranspose.

use smallvec::SmallVec;

use onnx_core::ir::DataType;

use super::{Window, taps, window};
use crate::error::{KernelError, bad_attribute, bad_input, limit, unsupported};
use crate::gemm::View;
use crate::kernels::common::numeric_like;
use crate::kernels::matmul::{EXACT_F32_TERMS, add_exact_run, exact_to_i32};
use crate::kernels::{Ctx, count, input, one, optional};
use crate::value::{Data, Tensor, Value};

/// `t` minus its zero point, as f64: one zero point, or one per slice of the first axis
/// (per output channel, for weights).
fn shifted(t: &Tensor, zero: Option<&Tensor>, single: bool) -> Result<Tensor, KernelError> {
    // 8-bit values with one zero point, or one per slice of the first axis (a weight's
    // filters), in float32: straight from the bytes (the f64 copy was much of a small
    // quantized convolution's time).
    if single {
        let zeros = zero.map(Tensor::to_f64s).transpose()?.unwrap_or_else(|| vec![0.0]);
        let per = match zeros.len() {
            1 => Some(t.len().max(1)),
            n if t.shape.first() == Some(&n) => Some(t.len() / n.max(1)),
            _ => None,
        };
        fn less_zero<T: Copy + Into<f32>>(v: &[T], zeros: &[f64], per: usize) -> Vec<f32> {
            let mut out = Vec::with_capacity(v.len());
            for (run, z) in v.chunks(per.max(1)).zip(zeros.iter().cycle()) {
                let z = *z as f32;
                out.extend(run.iter().map(|&x| x.into() - z));
            }
            out
        }
        let data = match (&*t.data, per) {
            (Data::U8(v), Some(per)) => Some(less_zero(v, &zeros, per)),
            (Data::I8(v), Some(per)) => Some(less_zero(v, &zeros, per)),
            _ => None,
        };
        if let Some(data) = data {
            return Ok(Tensor::new(t.shape.clone(), Data::F32(data.into())));
        }
    }
    let v = t.to_f64s()?;
    let z = zero.map(Tensor::to_f64s).transpose()?.unwrap_or_else(|| vec![0.0]);
    let per = match z.len() {
        1 => v.len().max(1),
        n if t.shape.first() == Some(&n) => v.len() / n.max(1),
        n => return Err(bad_input!("{n} zero points for a tensor of shape {:?}", t.shape)),
    };
    let at = |i: usize| z[(i / per.max(1)).min(z.len() - 1)];
    let data = if single {
        Data::F32(v.iter().enumerate().map(|(i, x)| (x - at(i)) as f32).collect())
    } else {
        Data::F64(v.iter().enumerate().map(|(i, x)| x - at(i)).collect())
    };
    Ok(Tensor::new(t.shape.clone(), data))
}

/// The convolution of zero-point-shifted integer operands (float32 where exact, else
/// float64).
fn integer_conv(ctx: &Ctx<'_>, x: Tensor, w: Tensor) -> Result<Tensor, KernelError> {
    let (x, w) = (Value::Tensor(x), Value::Tensor(w));
    match conv(ctx, &[Some(&x), Some(&w)])?.pop() {
        Some(Value::Tensor(t)) => Ok(t),
        _ => Err(bad_input!("the convolution gave no tensor")),
    }
}

/// The convolution of 8-bit `x` and `w` less their zero points, exact through the float32
/// convolution: in runs of input channels whose filter taps number at most
/// [`EXACT_F32_TERMS`], the runs' exact results added as int32; where all fit in one run,
/// the float32 result itself (every value an exact integer). The f64 convolution this
/// spares a model with wide layers (a pointwise convolution over 512 channels) ran at a
/// tenth of the float one's speed. `None` where it does not apply (other types, groups
/// with more taps than a run holds): those take the f64 convolution.
fn exact_integer_conv(
    ctx: &Ctx<'_>,
    (x, x_zero): (&Tensor, Option<&Tensor>),
    (w, w_zero): (&Tensor, Option<&Tensor>),
) -> Result<Option<Tensor>, KernelError> {
    let byte = |t: &Tensor| matches!(t.data_type(), DataType::Uint8 | DataType::Int8);
    if !byte(x) || !byte(w) || x.rank() < 3 || w.rank() != x.rank() {
        return Ok(None);
    }
    let taps = w.shape[2..].iter().try_fold(1usize, |a, &d| a.checked_mul(d)).unwrap_or(usize::MAX);
    let per_group = w.shape[1];
    let fits = per_group.saturating_mul(taps) <= EXACT_F32_TERMS;
    if !fits && (groups(ctx)? != 1 || taps > EXACT_F32_TERMS) {
        return Ok(None);
    }
    let (x, w) = (shifted(x, x_zero, true)?, shifted(w, w_zero, true)?);
    let (Data::F32(xv), Data::F32(wv)) = (&*x.data, &*w.data) else { return Ok(None) };
    let (batch, channels, filters) = (x.shape[0], x.shape[1], w.shape[0]);
    let in_size = x.len() / (batch * channels).max(1);
    let run = if fits { channels.max(1) } else { (EXACT_F32_TERMS / taps.max(1)).max(1) };
    let mut total: Option<(Vec<usize>, Vec<i32>)> = None;
    for start in (0..channels.max(1)).step_by(run) {
        let end = (start + run).min(channels);
        let part = |t: &Tensor, v: &[f32], outer: usize, inner: usize| -> Tensor {
            if start == 0 && end == channels {
                return t.clone();
            }
            let mut shape = t.shape.clone();
            shape[1] = end - start;
            let whole = t.shape[1] * inner;
            let data: Vec<f32> = (0..outer)
                .flat_map(|o| v[o * whole + start * inner..o * whole + end * inner].iter().copied())
                .collect();
            Tensor::new(shape, Data::F32(data.into()))
        };
        let xs = part(&x, xv, batch, in_size);
        let ws = part(&w, wv, filters, taps);
        let y = integer_conv(ctx, xs, ws)?;
        if fits {
            return Ok(Some(y));
        }
        let Data::F32(yv) = &*y.data else { return Ok(None) };
        match &mut total {
            None => total = Some((y.shape.clone(), exact_to_i32(yv))),
            Some((_, sums)) => add_exact_run(sums, yv),
        }
    }
    Ok(total.map(|(shape, sums)| Tensor::new(shape, Data::I32(sums.into()))))
}

/// ConvInteger: the convolution of `x − x_zero_point` and `w − w_zero_point` in int32.
pub(super) fn conv_integer(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, w) = (input(inputs, 0)?, input(inputs, 1)?);
    if let Some(y) = exact_integer_conv(ctx, (x, optional(inputs, 2)?), (w, optional(inputs, 3)?))? {
        return one(match &*y.data {
            Data::F32(v) => Tensor::new(y.shape.clone(), Data::I32(exact_to_i32(v).into())),
            _ => y,
        });
    }
    let x = shifted(x, optional(inputs, 2)?, false)?;
    let w = shifted(w, optional(inputs, 3)?, false)?;
    let y = integer_conv(ctx, x, w)?;
    let out = y.to_f64s()?.into_iter().map(|v| v as i32).collect();
    one(Tensor::new(y.shape.clone(), Data::I32(out)))
}

/// QLinearConv: the integer convolution (plus an int32 bias), rescaled by
/// `x_scale·w_scale / y_scale` (w_scale per output channel or one), rounded half to even,
/// shifted by `y_zero_point` and saturated to its type.
pub(super) fn qlinear_conv(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (xq, wq) = (input(inputs, 0)?, input(inputs, 3)?);
    let filters = wq.shape.first().copied().unwrap_or(0);
    let y = match exact_integer_conv(ctx, (xq, optional(inputs, 2)?), (wq, optional(inputs, 5)?))? {
        Some(y) => y,
        None => {
            let x = shifted(xq, optional(inputs, 2)?, false)?;
            let w = shifted(wq, optional(inputs, 5)?, false)?;
            integer_conv(ctx, x, w)?
        }
    };
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
    // Per filter: the rescale, in float32 as onnx's reference takes it, and the bias.
    let rescale: Vec<(f64, f64)> = (0..filters.max(1))
        .map(|f| {
            let scale = ws.get(f).or(ws.first()).copied().unwrap_or(1.0);
            let m = (xs as f32 * scale as f32 / ys as f32) as f64;
            (m, bias.as_ref().and_then(|b| b.get(f)).copied().unwrap_or(0.0))
        })
        .collect();
    // Each filter's plane with its own rescale and bias: a loop of the same few f64
    // operations per element, compiled for the widest vectors.
    let mut bytes = vec![0u8; y.len()];
    let step = OutputStep { per_filter, rescale: &rescale, zero, lo, hi };
    match &*y.data {
        Data::F32(v) => step.apply(v, &mut bytes),
        Data::I32(v) => step.apply(v, &mut bytes),
        _ => step.apply(&y.to_f64s()?, &mut bytes),
    }
    let data = match zy.data_type() {
        DataType::Uint8 => Data::U8(bytes.into()),
        _ => Data::I8(bytes.into_iter().map(|b| b as i8).collect()),
    };
    one(Tensor::new(y.shape.clone(), data))
}

/// QLinearConv's output step: per filter a rescale `m` and an int32 bias `b`, the output's
/// zero point and its type's bounds.
struct OutputStep<'r> {
    per_filter: usize,
    rescale: &'r [(f64, f64)],
    zero: f64,
    lo: f64,
    hi: f64,
}

impl OutputStep<'_> {
    /// One filter's plane at a time: `(acc + b)·m` in f64, rounded half to even, plus the
    /// zero point, saturated; each element's low byte goes to `out`. Written as steps the
    /// compiler vectorizes: clamped before it is rounded (the same result, the bounds being
    /// integers), rounded by adding 1.5·2^52 (whose ulp is 1; the FPU rounds half to even),
    /// the integer read from the sum's low bits. NaN gives 0, as the saturating casts this
    /// replaces did (they were a third of a quantized MobileNet's run).
    fn apply<T: Copy + Into<f64>>(&self, acc: &[T], out: &mut [u8]) {
        const SHIFT: f64 = 6_755_399_441_055_744.0;
        let shift_bits = SHIFT.to_bits() as i64;
        let zero_int = self.zero as i64;
        let (low, high) = (self.lo - self.zero, self.hi - self.zero);
        let per = self.per_filter.max(1);
        // One wide region for all planes: a small map's plane is a few vectors, and entering
        // the region per plane cost as much as the plane (a fifth of a quantized MobileNet
        // at 32²). The closure takes its numbers by value: read through references, each
        // was loaded again after every byte stored, and the loop stayed scalar.
        let rescale = self.rescale;
        crate::simd::widest(
            #[inline(always)]
            move || {
                for (plane, (out, acc)) in out.chunks_mut(per).zip(acc.chunks(per)).enumerate() {
                    let (m, b) = rescale[plane % rescale.len().max(1)];
                    for (o, &v) in out.iter_mut().zip(acc) {
                        let q = (v.into() + b) * m;
                        let rounded = (q.clamp(low, high) + SHIFT).to_bits() as i64 - shift_bits;
                        *o = if q.is_nan() { 0 } else { (rounded + zero_int) as u8 };
                    }
                }
            },
        );
    }
}

/// The `group` attribute of Conv and ConvTranspose: 1 by default, positive.
fn groups(ctx: &Ctx<'_>) -> Result<usize, KernelError> {
    usize::try_from(ctx.int("group").unwrap_or(1))
        .ok()
        .filter(|&g| g > 0)
        .ok_or(bad_attribute!("group must be positive"))
}

pub(super) fn conv(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, w) = (input(inputs, 0)?, input(inputs, 1)?);
    if x.rank() < 3 || w.rank() != x.rank() {
        return Err(bad_input!("Conv of input {:?} and weights {:?}", x.shape, w.shape));
    }
    let group = groups(ctx)?;
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
    let win = window(ctx, spatial, kernel, false)?;
    let mut shape = vec![batch, filters];
    shape.extend_from_slice(&win.out);
    let out_count = count(&shape)?;
    ctx.check_grown(out_count, x.len().max(w.len()))?;
    if out_count == 0 {
        return one(numeric_like(x.data_type(), shape, Vec::new())?);
    }
    let in_size = count(spatial)?;
    // A dequantized input and weight (the QDQ form), as their 8-bit convolution (prepared
    // with the plan).
    if group == 1
        && let Some(out) = super::dequantized_conv::run(ctx, (x, filters), (&win, spatial), bias.as_deref())
    {
        return one(Tensor::new(shape, Data::F32(out?.into())));
    }
    if let (Data::F32(xv), Data::F32(wv)) = (&*x.data, &*w.data) {
        // The im2col matrix: a row per channel of a group and kernel tap, a column per
        // output position.
        let columns = count(&[per_group, count(&win.kernel)?, count(&win.out)?])?;
        ctx.check_grown(columns, x.len()).map_err(|e| e.map_message(|m| format!("{m} (the im2col matrix)")))?;
        let geometry = ConvGeometry { batch, channels, filters, group, in_size };
        let blocks = super::depthwise::prepared(ctx);
        let out = conv_f32(xv, wv, bias.as_deref(), &win, spatial, &geometry, blocks)?;
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
    blocks: Option<&super::depthwise::BlockWeights>,
) -> Result<Vec<f32>, KernelError> {
    let rows = g.channels / g.group * crate::broadcast::elements(&win.kernel);
    let tile = (COLUMNS_TILE / rows.max(1)).max(MIN_TILE);
    let shares = if onnx_threads::pool().is_some() { onnx_threads::cores() } else { 1 };
    let d = super::depthwise::Depthwise { batch: g.batch, channels: g.channels, spatial, win, bias };
    if super::depthwise::applies(&d, g.channels / g.group, g.filters / g.group) {
        return Ok(super::depthwise::depthwise_2d(x, w, &d, blocks));
    }
    if let Some(grid) = super::grid::GridConv::new((g.batch, g.channels, g.filters, g.group), spatial, win, bias) {
        return Ok(super::grid::grid_conv_2d(x, w, &grid, grid.shares(shares)));
    }
    conv_f32_in_tiles(x, w, bias, win, spatial, g, tile, shares)
}

/// The buffers one thread makes a convolution's tiles in.
#[derive(Default)]
struct TileScratch {
    columns: Vec<f32>,
}

/// Where a tile's products are made: a row of the tile's width per filter.
trait TileRows {
    /// Room for the rows of `filters` filters from output row `first` (image × filters +
    /// filter) on.
    fn rows(&mut self, first: usize, filters: usize) -> &mut [f32];
    /// Those rows hold their final values.
    fn done(&mut self, first: usize, filters: usize);
}

/// A tile that spans every output position: its rows are the output's own rows, written
/// in place.
struct WholeRows<'o> {
    out: &'o mut [f32],
    outputs: usize,
}

impl TileRows for WholeRows<'_> {
    fn rows(&mut self, first: usize, filters: usize) -> &mut [f32] {
        &mut self.out[first * self.outputs..][..filters * self.outputs]
    }

    fn done(&mut self, _: usize, _: usize) {}
}

/// A tile of part of the output positions: its rows are made in a buffer, each handed to
/// `emit` with its output row when done.
struct PartRows<F: FnMut(usize, &[f32])> {
    product: Vec<f32>,
    width: usize,
    emit: F,
}

impl<F: FnMut(usize, &[f32])> TileRows for PartRows<F> {
    fn rows(&mut self, _: usize, filters: usize) -> &mut [f32] {
        self.product.resize(filters * self.width, 0.0);
        &mut self.product[..filters * self.width]
    }

    fn done(&mut self, first: usize, filters: usize) {
        for (f, values) in self.product[..filters * self.width].chunks_exact(self.width).enumerate() {
            (self.emit)(first + f, values);
        }
    }
}

/// One tile of a convolution: output positions `start..start + width` of every image and
/// filter, each filter's row of `width` values made in `sink`, starting from the filter's
/// bias (so that no second pass adds it).
#[allow(clippy::too_many_arguments)] // the convolution's inputs and geometry, and the tile
fn conv_tile(
    planes: &Planes<'_>,
    w: &[f32],
    bias: Option<&[f64]>,
    win: &Window,
    spatial: &[usize],
    g: &ConvGeometry,
    start: usize,
    width: usize,
    scratch: &mut TileScratch,
    sink: &mut impl TileRows,
) -> Result<(), KernelError> {
    let kernel = crate::broadcast::elements(&win.kernel);
    let per_group = g.channels / g.group;
    let filters_per_group = g.filters / g.group;
    let rows = per_group * kernel;
    // A pointwise convolution (1×…×1 kernel, stride 1, no padding): the im2col rows are the
    // input's own rows, read in place by the GEMM through its row stride.
    let pointwise = win.kernel.iter().all(|&k| k == 1)
        && win.strides.iter().all(|&s| s == 1)
        && win.begin.iter().all(|&b| b == 0)
        && win.out == spatial;
    // Only products through written im2col rows need room for them.
    if filters_per_group > 1 && !pointwise {
        scratch.columns.resize(rows * width, 0.0);
    }
    // What each tap reads for this tile, the same for every image, group and channel.
    let taps: Vec<Vec<Run>> = (0..kernel).map(|k| im2col_runs(spatial, win, k, start, width)).collect();
    // The products add to the rows' first values: the bias, or zero.
    let beta = if bias.is_some() { 1.0 } else { 0.0 };
    for b in 0..g.batch {
        for group in 0..g.group {
            let weights = &w[group * filters_per_group * rows..][..filters_per_group * rows];
            let first_filter = b * g.filters + group * filters_per_group;
            let first_plane = b * g.channels + group * per_group;
            let product = sink.rows(first_filter, filters_per_group);
            if let Some(bias) = bias {
                for (f, row) in product.chunks_exact_mut(width).enumerate() {
                    row.fill(bias.get(group * filters_per_group + f).copied().unwrap_or(0.0) as f32);
                }
            }
            if filters_per_group == 1 {
                // One filter (a depthwise convolution's groups, a reduction to one map): each
                // tap's weight times what it reads, added up straight from the input in the
                // order of the im2col rows, without writing them. A GEMM call per group of a
                // few values cost more in its set-up than in its arithmetic.
                if bias.is_none() {
                    product.fill(0.0);
                }
                crate::simd::widest(
                    #[inline(always)]
                    || {
                        for c in 0..per_group {
                            let plane = planes.plane(first_plane + c);
                            for (k, runs) in taps.iter().enumerate() {
                                add_weighted_runs(planes, plane, runs, weights[c * kernel + k], product);
                            }
                        }
                    },
                );
                crate::gemm::count_flops(2 * rows * width);
            } else if pointwise {
                let inputs = View {
                    data: &planes.input[first_plane * g.in_size + start..],
                    rows,
                    cols: width,
                    row_stride: g.in_size,
                    col_stride: 1,
                };
                crate::gemm::sgemm(1.0, View::rows(weights, filters_per_group, rows), inputs, beta, product)?;
            } else {
                let columns = &mut scratch.columns[..rows * width];
                for c in 0..per_group {
                    let plane = planes.plane(first_plane + c);
                    for (k, runs) in taps.iter().enumerate() {
                        let row = &mut columns[(c * kernel + k) * width..][..width];
                        fill_im2col_row(planes, plane, runs, row);
                    }
                }
                crate::gemm::sgemm(
                    1.0,
                    View::rows(weights, filters_per_group, rows),
                    View::rows(columns, rows, width),
                    beta,
                    product,
                )?;
            }
            sink.done(first_filter, filters_per_group);
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
    let last_stride = win.strides[spatial.len() - 1];
    let phased = Planes::phases(x, g.in_size, last_stride);
    let planes = Planes::new(x, phased.as_deref(), g.in_size, last_stride);
    let starts: Vec<usize> = (0..outputs).step_by(tile).collect();
    let mut out = vec![0.0f32; g.batch * g.filters * outputs];
    // Tiles are independent: with several, each core takes a share of them (its own
    // columns, products made on it alone), and the results are placed in order. Every
    // output is computed the same way whatever the number of shares.
    let shares = shares.min(starts.len());
    if starts.len() == 1 {
        // One tile of every position: the products are made in the output itself.
        let mut sink = WholeRows { out: &mut out, outputs };
        conv_tile(&planes, w, bias, win, spatial, g, 0, outputs, &mut TileScratch::default(), &mut sink)?;
    } else if shares <= 1 {
        let mut scratch = TileScratch::default();
        let mut product = Vec::new();
        for &start in &starts {
            let width = tile.min(outputs - start);
            let emit = |row: usize, values: &[f32]| out[row * outputs + start..][..width].copy_from_slice(values);
            let mut sink = PartRows { product: std::mem::take(&mut product), width, emit };
            conv_tile(&planes, w, bias, win, spatial, g, start, width, &mut scratch, &mut sink)?;
            product = sink.product;
        }
    } else {
        let jobs: Vec<Vec<usize>> =
            (0..shares).map(|s| starts.iter().copied().skip(s).step_by(shares).collect()).collect();
        let made = onnx_threads::map_in_order(jobs, |share| {
            crate::shares::serial(|| {
                let mut scratch = TileScratch::default();
                let mut product = Vec::new();
                let mut blocks = Vec::with_capacity(share.len());
                for start in share {
                    let width = tile.min(outputs - start);
                    let mut block = vec![0.0f32; g.batch * g.filters * width];
                    let emit = |row: usize, values: &[f32]| block[row * width..][..width].copy_from_slice(values);
                    let mut sink = PartRows { product: std::mem::take(&mut product), width, emit };
                    conv_tile(&planes, w, bias, win, spatial, g, start, width, &mut scratch, &mut sink)?;
                    product = sink.product;
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

/// The input planes as the im2col stretches read them. With a stride along the last axis
/// each plane is kept as its phases: the values at flat positions `≡ p (mod stride)`, in
/// order, one phase after the other. A stretch reads every stride-th value of a plane from
/// some position on, so in its phase it is contiguous: a copy or a vector multiply-add
/// instead of a gather. basic_pitch's one-filter convolutions of 256 taps at stride 2 (a
/// constant-Q transform) read their taps value by value at 4.9 GFLOP/s.
struct Planes<'a> {
    /// The input as given (the pointwise product reads its rows in place).
    input: &'a [f32],
    /// Each plane as [`Planes::plane`] gives it: the input's own, or its phases.
    planes: &'a [f32],
    stride: usize,
    /// Values per phase (a plane's length divided by the stride, rounded up).
    phase_len: usize,
    /// Values a plane takes in `planes`.
    plane_len: usize,
}

impl<'a> Planes<'a> {
    /// Each plane of `x` (`in_size` values) split into its phases for `stride`; `None`
    /// for stride 1.
    fn phases(x: &[f32], in_size: usize, stride: usize) -> Option<Vec<f32>> {
        if stride <= 1 || in_size == 0 {
            return None;
        }
        let phase_len = in_size.div_ceil(stride);
        let mut out = vec![0.0f32; x.len() / in_size * stride * phase_len];
        for (plane, phased) in x.chunks_exact(in_size).zip(out.chunks_exact_mut(stride * phase_len)) {
            for (p, phase) in phased.chunks_exact_mut(phase_len).enumerate() {
                for (slot, &value) in phase.iter_mut().zip(plane.iter().skip(p).step_by(stride)) {
                    *slot = value;
                }
            }
        }
        Some(out)
    }

    fn new(input: &'a [f32], phased: Option<&'a [f32]>, in_size: usize, stride: usize) -> Planes<'a> {
        match phased {
            Some(planes) => {
                let phase_len = in_size.div_ceil(stride);
                Planes { input, planes, stride, phase_len, plane_len: stride * phase_len }
            }
            None => Planes { input, planes: input, stride: 1, phase_len: in_size, plane_len: in_size },
        }
    }

    /// Plane `index` (image × channels + channel).
    fn plane(&self, index: usize) -> &'a [f32] {
        &self.planes[index * self.plane_len..][..self.plane_len]
    }

    /// The `len` values a stretch reads from `source` on (every stride-th value of the
    /// plane), contiguous.
    #[inline(always)]
    fn stretch<'p>(&self, plane: &'p [f32], source: usize, len: usize) -> &'p [f32] {
        let at = source % self.stride * self.phase_len + source / self.stride;
        &plane[at..at + len]
    }
}

/// `product += weight × (one im2col row)`, read from the plane through the row's stretches
/// (see [`im2col_runs`]) instead of from a written row; padding adds nothing.
#[inline(always)]
fn add_weighted_runs(planes: &Planes<'_>, plane: &[f32], runs: &[Run], weight: f32, product: &mut [f32]) {
    for run in runs {
        let Some(source) = run.source else { continue };
        let part = &mut product[run.at..run.at + run.len];
        for (p, &v) in part.iter_mut().zip(planes.stretch(plane, source, run.len)) {
            *p += weight * v;
        }
    }
}

/// One im2col row from its stretches (see [`im2col_runs`]).
fn fill_im2col_row(planes: &Planes<'_>, plane: &[f32], runs: &[Run], row: &mut [f32]) {
    for run in runs {
        let part = &mut row[run.at..run.at + run.len];
        match run.source {
            None => part.fill(0.0),
            Some(source) => part.copy_from_slice(planes.stretch(plane, source, run.len)),
        }
    }
}

/// The transpose of a convolution: every input element spreads over the output through the
/// kernel.
pub(super) fn conv_transpose(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, w) = (input(inputs, 0)?, input(inputs, 1)?);
    if x.rank() < 3 || w.rank() != x.rank() {
        return Err(bad_input!("ConvTranspose of input {:?} and weights {:?}", x.shape, w.shape));
    }
    let group = groups(ctx)?;
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
    // Where input position `ip` along axis `d` lands under kernel position `kp`, if inside.
    let along_axis = |d: usize, ip: usize, kp: usize| -> Option<usize> {
        // Below `full`: no overflow; a pad from output_shape may be negative.
        let o = (ip as i64 * strides[d] + kp as i64 * dilations[d]).checked_sub(pads[d]).unwrap_or(i64::MAX);
        usize::try_from(o).ok().filter(|&o| o < out_spatial[d])
    };
    let landing = |p: usize, k: usize| -> Option<usize> {
        (0..n).try_fold(0usize, |offset, d| {
            let o = along_axis(d, (p / in_strides[d]) % spatial[d], (k / k_strides[d]) % kernel[d])?;
            Some(offset + o * o_strides[d])
        })
    };
    let mut shape = vec![batch, filters];
    shape.extend_from_slice(&out_spatial);
    if let (Data::F32(xv), Data::F32(wv)) = (&*x.data, &*w.data)
        && total > 0
        && !xv.is_empty()
        && per_group_out.checked_mul(kernel_size).and_then(|r| r.checked_mul(in_size)).is_some_and(|c| c <= MAX_SPREAD)
    {
        let landings = landings(&spatial, &kernel, &out_spatial, along_axis);
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

/// Where each input position lands in the output under each kernel tap (`usize::MAX`:
/// outside), tap-major: `at(d, ip, kp)` is the output position along axis `d` of input
/// position `ip` under tap position `kp`, if inside. Worked out per axis and summed over
/// the positions in order (the per-value divisions of a flat index took longer than
/// the GEMM on a 320² map).
fn landings(
    spatial: &[usize],
    kernel: &[usize],
    out_spatial: &[usize],
    at: impl Fn(usize, usize, usize) -> Option<usize>,
) -> Vec<usize> {
    let n = spatial.len();
    let o_strides = crate::broadcast::strides(out_spatial);
    let kernel_size = crate::broadcast::elements(kernel);
    let in_size = crate::broadcast::elements(spatial);
    let mut result = Vec::with_capacity(kernel_size * in_size);
    let mut kpos = vec![0usize; n];
    for _ in 0..kernel_size {
        // Per axis, each input position's contribution to the flat output offset.
        let along: Vec<Vec<Option<usize>>> =
            (0..n).map(|d| (0..spatial[d]).map(|ip| at(d, ip, kpos[d]).map(|o| o * o_strides[d])).collect()).collect();
        result.extend(crate::broadcast::offsets_by_axis(&along).into_iter().map(|o| o.unwrap_or(usize::MAX)));
        for d in (0..n).rev() {
            kpos[d] += 1;
            if kpos[d] < kernel[d] {
                break;
            }
            kpos[d] = 0;
        }
    }
    result
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
            // The weights transposed into rows (small), so that the product reads both
            // operands along rows: a narrow one (few filters × taps) is then not packed.
            let wt = crate::broadcast::permute(wg, &[per_group_in, spread_rows], &[1, 0]);
            crate::gemm::sgemm(
                1.0,
                View::rows(&wt, spread_rows, per_group_in),
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
    use super::{ConvGeometry, conv_f32, conv_f32_in_tiles};
    use crate::kernels::nn::Window;

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

    /// An input of `inputs` and weights of `weights` small integers (every order of
    /// summation is exact).
    fn operands(inputs: usize, weights: usize) -> (Vec<f32>, Vec<f32>) {
        let x = (0..inputs).map(|i| ((i * 7919) % 23) as f32 - 11.0).collect();
        let w = (0..weights).map(|i| ((i * 104_729) % 13) as f32 - 6.0).collect();
        (x, w)
    }

    /// The window of a 2-D convolution padded by `begin` and `end`.
    fn window_2d(
        spatial: [usize; 2],
        kernel: [usize; 2],
        strides: [usize; 2],
        dilations: [usize; 2],
        begin: [usize; 2],
        end: [usize; 2],
    ) -> Window {
        let padded: Vec<usize> = (0..2).map(|i| spatial[i] + begin[i] + end[i]).collect();
        Window {
            out: (0..2).map(|i| (padded[i] - dilations[i] * (kernel[i] - 1) - 1) / strides[i] + 1).collect(),
            kernel: kernel.to_vec(),
            strides: strides.to_vec(),
            dilations: dilations.to_vec(),
            begin: begin.to_vec(),
            padded,
        }
    }

    /// A depthwise convolution of an empty map under padding gives its bias (from a
    /// review: the channel blocks gave zeros; they now leave such input to the other paths),
    /// and one of a single channel whose buffer would be mostly empty lanes is not taken.
    #[test]
    fn depthwise_blocks_refuse_empty_maps_and_buffers_of_empty_lanes() {
        use crate::kernels::nn::depthwise::{Depthwise, applies};
        let win = window_2d([0, 1], [1, 1], [1, 1], [1, 1], [1, 0], [1, 0]);
        assert_eq!(win.out, [2, 1]);
        let d = Depthwise { batch: 1, channels: 1, spatial: &[0, 1], win: &win, bias: None };
        assert!(!applies(&d, 1, 1), "an empty map");
        let g = ConvGeometry { batch: 1, channels: 1, filters: 1, group: 1, in_size: 0 };
        let out = conv_f32(&[], &[1.0], Some(&[5.0]), &win, &[0, 1], &g, None).unwrap();
        assert_eq!(out, [5.0, 5.0]);
        // One channel of 1 × 100,000 at stride 2,000 under a kernel of one tap: 50 outputs
        // read a buffer of 98,001 positions, sixteen lanes each.
        let wide = window_2d([1, 100_000], [1, 1], [1, 2_000], [1, 1], [0, 0], [0, 0]);
        let d = Depthwise { batch: 1, channels: 1, spatial: &[1, 100_000], win: &wide, bias: None };
        assert!(!applies(&d, 1, 1), "a buffer of mostly empty lanes");
        let d = Depthwise { channels: 16, ..d };
        assert!(applies(&d, 1, 1), "the same over sixteen channels");
    }

    /// Depthwise convolutions computed in blocks of sixteen channels give the convolution
    /// by its definition, with strides, dilations, uneven padding, two images, a bias,
    /// partial blocks after full ones, and rows and output maps long enough for the
    /// eight-by-eight transposes as well as their leftovers.
    #[test]
    fn depthwise_in_channel_blocks_is_the_definition() {
        use crate::kernels::nn::depthwise::{BlockWeights, Depthwise, depthwise_2d};
        let cases = [
            // (channels, spatial, kernel, strides, dilations, begin, end)
            (24, [5, 3], [3, 3], [1, 1], [1, 1], [1, 1], [1, 1]),
            (32, [9, 8], [3, 3], [2, 2], [1, 1], [1, 0], [1, 1]),
            (20, [4, 4], [5, 5], [1, 1], [1, 1], [2, 2], [2, 2]),
            (17, [7, 6], [2, 3], [1, 3], [2, 1], [0, 2], [1, 0]),
            (5, [2, 1], [1, 1], [1, 1], [1, 1], [0, 0], [0, 0]),
            (40, [6, 19], [3, 3], [1, 1], [1, 1], [1, 1], [1, 1]),
            (16, [4, 4], [5, 5], [2, 2], [1, 1], [2, 2], [2, 2]),
            // Ten blocks, enough work to be cut into shares of blocks wherever there is a
            // pool (each block costs 16·(14·14 + 64·49/4) element-operations).
            (160, [8, 8], [7, 7], [1, 1], [1, 1], [3, 3], [3, 3]),
        ];
        assert!(onnx_threads::pool().is_none() || crate::shares::count(10, 16 * (14 * 14 + 64 * 49 / 4)) > 1);
        for (channels, spatial, kernel, strides, dilations, begin, end) in cases {
            let win = window_2d(spatial, kernel, strides, dilations, begin, end);
            let g = ConvGeometry {
                batch: 2,
                channels,
                filters: channels,
                group: channels,
                in_size: spatial[0] * spatial[1],
            };
            let (x, w) = operands(2 * channels * g.in_size, channels * kernel[0] * kernel[1]);
            let bias: Vec<f64> = (0..channels).map(|c| c as f64 - 3.0).collect();
            let outputs = win.out[0] * win.out[1];
            let want: Vec<f32> = by_definition(&x, &w, &win, &spatial, &g)
                .iter()
                .enumerate()
                .map(|(i, v)| v + bias[i / outputs % channels] as f32)
                .collect();
            let d = Depthwise { batch: 2, channels, spatial: &spatial, win: &win, bias: Some(&bias) };
            // Small integers: every order of summation is exact.
            assert_eq!(depthwise_2d(&x, &w, &d, None), want, "{channels} channels");
            // With the weights' blocks made once, as the plan makes them.
            let taps = kernel[0] * kernel[1];
            let blocks = BlockWeights::of(&w, channels, taps);
            assert_eq!(depthwise_2d(&x, &w, &d, Some(&blocks)), want, "{channels} channels, prepared");
        }
    }

    /// Stride-1 convolutions on the padded grid give the convolution by its definition:
    /// uneven padding, dilations along either axis, groups of several filters, filter
    /// counts that leave a part tile, maps narrower and wider than a tile's positions,
    /// rows longer than a chunk, two images, a bias, and the output rows cut into shares
    /// (which give the same bits as one share).
    #[test]
    fn grid_convolution_is_the_definition() {
        use crate::kernels::nn::grid::{GridConv, grid_conv_2d, grid_conv_in_tiles_of};
        let cases = [
            // (channels, filters, group, spatial, kernel, dilations, begin, end)
            (8, 16, 1, [14, 14], [5, 5], [1, 1], [2, 2], [2, 2]),
            (3, 5, 1, [4, 4], [3, 3], [1, 1], [1, 1], [1, 1]),
            (4, 6, 2, [9, 40], [3, 2], [2, 1], [1, 0], [0, 3]),
            (2, 7, 1, [6, 5], [2, 3], [1, 2], [0, 2], [1, 1]),
            (1, 2, 1, [3, 700], [1, 3], [1, 1], [0, 1], [0, 1]),
            (6, 9, 3, [11, 3], [4, 1], [1, 1], [2, 0], [1, 0]),
            // One filter over several channels; depthwise: planes wider than a one-filter
            // tile's 128 positions, and dilated.
            (3, 1, 1, [9, 50], [3, 3], [1, 1], [1, 1], [1, 1]),
            (16, 16, 16, [20, 40], [3, 3], [1, 1], [1, 1], [1, 1]),
            (5, 5, 5, [7, 9], [5, 5], [2, 1], [2, 2], [2, 2]),
            // A kernel reaching further than the output is wide: tiles start in a row's
            // dropped columns (their place would lie past the output).
            (1, 2, 1, [2, 34], [1, 33], [1, 1], [0, 0], [0, 0]),
            // No input values under padding: the output is the bias.
            (1, 3, 1, [0, 8], [3, 3], [1, 1], [2, 1], [2, 1]),
        ]
        .map(|(c, f, g, s, k, d, b, e)| (c, f, g, s, k, [1, 1], d, b, e));
        // Strided: MobileNet's depthwise 3×3 at stride 2, odd and even maps, padding
        // whose remainder differs from zero, strides larger than the kernel, a stride
        // along one axis, a dilation with the stride.
        let strided = [
            // (channels, filters, group, spatial, kernel, strides, dilations, begin, end)
            (24, 24, 24, [16, 16], [3, 3], [2, 2], [1, 1], [1, 1], [1, 1]),
            (3, 8, 1, [15, 17], [3, 3], [2, 2], [1, 1], [1, 1], [1, 1]),
            (4, 6, 2, [11, 20], [3, 5], [3, 2], [1, 1], [0, 3], [2, 1]),
            (2, 5, 1, [9, 9], [2, 2], [4, 3], [1, 1], [1, 0], [0, 1]),
            (6, 6, 6, [13, 10], [3, 3], [1, 2], [2, 1], [2, 1], [2, 1]),
            (5, 3, 1, [1, 40], [1, 7], [1, 3], [1, 2], [0, 3], [0, 3]),
            (1, 1, 1, [4, 18], [1, 17], [2, 1], [1, 1], [0, 0], [0, 0]),
            (1, 1, 1, [4, 34], [1, 33], [2, 1], [1, 1], [0, 0], [0, 0]),
        ];
        for (channels, filters, group, spatial, kernel, strides, dilations, begin, end) in
            cases.into_iter().chain(strided)
        {
            let win = window_2d(spatial, kernel, strides, dilations, begin, end);
            let g = ConvGeometry { batch: 2, channels, filters, group, in_size: spatial[0] * spatial[1] };
            let (x, w) = operands(2 * channels * g.in_size, filters * channels / group * kernel[0] * kernel[1]);
            let bias: Vec<f64> = (0..filters).map(|f| f as f64 - 3.0).collect();
            let outputs = win.out[0] * win.out[1];
            let want: Vec<f32> = by_definition(&x, &w, &win, &spatial, &g)
                .iter()
                .enumerate()
                .map(|(i, v)| v + bias[i / outputs % filters] as f32)
                .collect();
            let what = format!(
                "{channels} channels, {filters} filters, group {group}, {spatial:?}, kernel {kernel:?}, strides {strides:?}"
            );
            let Some(grid) = GridConv::new((2, channels, filters, group), &spatial, &win, Some(&bias)) else {
                assert!(!crate::simd::has_fma(), "{what}");
                continue;
            };
            let conv = |x: &[f32], shares: usize| {
                // Both tile widths give the same sums; the machine's is the one run.
                let narrow = grid_conv_in_tiles_of(x, &w, &grid, shares, 16);
                let made = grid_conv_2d(x, &w, &grid, shares);
                assert!(narrow.iter().zip(&made).all(|(a, b)| a.to_bits() == b.to_bits()), "{what}: tile widths");
                made
            };
            for shares in [1, 2, 3] {
                // Small integers: every order of summation is exact.
                assert_eq!(conv(&x, shares), want, "{what}, {shares} shares");
            }
            let x: Vec<f32> = x.iter().map(|v| v * 0.37 + 0.011).collect();
            let one = conv(&x, 1);
            for shares in [2, 5] {
                let got = conv(&x, shares);
                assert!(got.iter().zip(&one).all(|(a, b)| a.to_bits() == b.to_bits()), "{what}, {shares} shares");
            }
        }
    }

    /// A 1-D convolution on the grid (one row) gives the 2-D convolution over one row by
    /// its definition, its output cut into shares within the row.
    #[test]
    fn grid_convolution_of_one_axis_is_the_definition() {
        use crate::kernels::nn::grid::{GridConv, grid_conv_2d};
        // (channels, filters, length, kernel, dilation, begin, end): attacut's and a
        // dilated one's.
        let cases = [(6, 9, 40, 3, 1, 1, 1), (4, 5, 300, 9, 2, 8, 8), (3, 4, 70, 3, 16, 0, 0)];
        for (channels, filters, length, kernel, dilation, begin, end) in cases {
            let flat = window_2d([1, length], [1, kernel], [1, 1], [1, dilation], [0, begin], [0, end]);
            let one_axis = Window {
                kernel: vec![kernel],
                strides: vec![1],
                dilations: vec![dilation],
                begin: vec![begin],
                padded: vec![flat.padded[1]],
                out: vec![flat.out[1]],
            };
            let g = ConvGeometry { batch: 2, channels, filters, group: 1, in_size: length };
            let (x, w) = operands(2 * channels * length, filters * channels * kernel);
            let want = by_definition(&x, &w, &flat, &[1, length], &g);
            let grid = GridConv::new((2, channels, filters, 1), &[length], &one_axis, None);
            let Some(grid) = grid else {
                assert!(!crate::simd::has_fma());
                continue;
            };
            for shares in [1, 2, 7] {
                assert_eq!(grid_conv_2d(&x, &w, &grid, shares), want, "length {length}, {shares} shares");
            }
        }
    }

    /// Where the grid would be mostly zeros (a dilation far wider than the map), or the
    /// convolution is pointwise (strided or not), it is left to the tiles.
    #[test]
    fn the_grid_is_not_used_where_it_does_not_pay() {
        use crate::kernels::nn::grid::GridConv;
        let cases = [
            // (filters, spatial, kernel, strides, dilations, pads)
            (4, [8, 8], [3, 3], [1, 1], [1, 4000], [0, 4000]),
            (4, [8, 8], [1, 1], [1, 1], [1, 1], [0, 0]),
            (4, [8, 8], [1, 1], [2, 2], [1, 1], [0, 0]),
            // Fewer than four output positions; a product big on every side.
            (4, [2, 1], [2, 1], [1, 1], [1, 1], [0, 0]),
            (64, [30, 30], [3, 3], [1, 1], [1, 1], [1, 1]),
        ];
        for (filters, spatial, kernel, strides, dilations, pads) in cases {
            let win = window_2d(spatial, kernel, strides, dilations, pads, pads);
            let grid = GridConv::new((1, 2, filters, 1), &spatial, &win, None);
            assert!(grid.is_none(), "{filters} filters, kernel {kernel:?}, strides {strides:?}");
        }
    }

    /// Tiles of every width, cutting rows of the output anywhere, with padding, strides,
    /// dilations, groups, one-filter groups and pointwise kernels, give the convolution by
    /// its definition.
    #[test]
    fn tiled_convolution_is_the_definition() {
        let cases = [
            // (channels, filters, group, spatial, kernel, strides, dilations, begin)
            (3, 4, 1, [9, 13], [3, 2], [2, 1], [1, 2], [1, 0]),
            (4, 4, 4, [7, 6], [3, 3], [1, 1], [1, 1], [1, 1]),
            (4, 2, 2, [5, 17], [1, 4], [1, 3], [1, 1], [0, 2]),
            // Pointwise (the GEMM reads the input's rows in place), also grouped.
            (5, 3, 1, [4, 6], [1, 1], [1, 1], [1, 1], [0, 0]),
            (4, 4, 2, [3, 5], [1, 1], [1, 1], [1, 1], [0, 0]),
            // 1×1 but strided: through im2col.
            (3, 2, 1, [5, 8], [1, 1], [2, 2], [1, 1], [0, 0]),
            // One filter over several channels, strided and padded (summed from the input).
            (3, 1, 1, [6, 11], [2, 5], [1, 2], [1, 1], [1, 2]),
        ];
        for (channels, filters, group, spatial, kernel, strides, dilations, begin) in cases {
            let win = window_2d(spatial, kernel, strides, dilations, begin, begin);
            let g = ConvGeometry { batch: 2, channels, filters, group, in_size: spatial[0] * spatial[1] };
            let (x, w) = operands(2 * channels * g.in_size, filters * channels / group * kernel[0] * kernel[1]);
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
