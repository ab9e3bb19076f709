//! Reductions over axes (ReduceSum … ReduceLogSumExp), ArgMax/ArgMin, Softmax and its kin.
//! Maxima, minima and integer sums in the elements' own type (exact); float sums and
//! the rest accumulated in f64 and rounded once to the element type.

use onnx_core::ir::DataType;

use super::{Ctx, Kernel, axis, count, input, input_axis, one, optional};
use crate::error::{KernelError, bad_input};
use crate::kernels::common::numeric_like;
use crate::number::{Number, narrowed_half, widened_half};
use crate::value::{Data, Tensor, Value};
use crate::with_number;

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL1" | "ReduceL2"
        | "ReduceLogSum" | "ReduceLogSumExp" | "ReduceSumSquare" => reduce,
        "ArgMax" | "ArgMin" => arg,
        "Softmax" | "LogSoftmax" | "Hardmax" => softmax,
        _ => return None,
    };
    Some(k)
}

/// The axes a reduction runs over (sorted, deduplicated), `None` for a no-op.
fn reduced_axes(ctx: &Ctx<'_>, inputs: &[Option<&Value>], rank: usize) -> Result<Option<Vec<usize>>, KernelError> {
    // From opset 18 (13 for ReduceSum) the axes are an input.
    let from_input = ctx.opset >= 18 || (ctx.op() == "ReduceSum" && ctx.opset >= 13);
    let axes = if from_input {
        optional(inputs, 1)?.map(Tensor::to_i64s).transpose()?
    } else {
        ctx.ints("axes").map(<[i64]>::to_vec)
    };
    match axes {
        Some(a) if !a.is_empty() => {
            let in_range = |x| if from_input { input_axis(x, rank) } else { axis(x, rank) };
            let mut a = a.iter().map(|&x| in_range(x)).collect::<Result<Vec<_>, _>>()?;
            a.sort_unstable();
            a.dedup();
            Ok(Some(a))
        }
        _ if from_input && ctx.int("noop_with_empty_axes").unwrap_or(0) != 0 => Ok(None),
        _ => Ok(Some((0..rank).collect())),
    }
}

fn reduce(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let Some(axes) = reduced_axes(ctx, inputs, t.rank())? else { return one(t.clone()) };
    let keep = ctx.int("keepdims").unwrap_or(1) != 0;
    let runs = Runs::new(&t.shape, &axes);
    // Reducing an empty axis gives values: the other axes of an empty input may be large.
    ctx.check_grown(runs.out_count, t.len())?;
    let op = Reduction::of(ctx.op()).ok_or_else(|| bad_input!("no reduction {}", ctx.op()))?;
    let empty_reduction = axes.iter().any(|&a| t.shape[a] == 0);
    let shape = if keep {
        t.shape.iter().enumerate().map(|(i, &d)| if axes.contains(&i) { 1 } else { d }).collect()
    } else {
        t.shape.iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, &d)| d).collect()
    };
    if empty_reduction && t.data_type().is_integer() && matches!(op, Reduction::Max | Reduction::Min) {
        return Err(bad_input!("reducing an empty axis of integers has no value"));
    }
    let data = match &*t.data {
        Data::Bool(v) => {
            // Booleans reduce as 0 and 1 (an empty maximum is false, an empty minimum true).
            let bits: Vec<u8> = v.iter().map(|&b| u8::from(b)).collect();
            let out = match op {
                Reduction::Max | Reduction::Min => reduced(op, &bits, &runs),
                _ => reduced_through_f64(op, &bits, &runs).into_iter().map(|x| u8::from(x > 0.5)).collect(),
            };
            Data::Bool(out.into_iter().map(|x| x != 0).collect())
        }
        data => match widened_half(data) {
            Some((v, dt)) => {
                let out = reduced_through_f64(op, &v, &runs);
                narrowed_half(&out.into_iter().map(|x| x as f32).collect::<Vec<f32>>(), dt)
            }
            None => with_number!(data, v => Number::data(reduced(op, v, &runs)),
                other => return Err(bad_input!("cannot reduce {} values", other.data_type().name()))),
        },
    };
    one(Tensor::new(shape, data))
}

/// The reductions, by operator.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Reduction {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
    L1,
    L2,
    LogSum,
    LogSumExp,
    SumSquare,
}

impl Reduction {
    fn of(op: &str) -> Option<Reduction> {
        Some(match op {
            "ReduceSum" => Reduction::Sum,
            "ReduceMean" => Reduction::Mean,
            "ReduceMax" => Reduction::Max,
            "ReduceMin" => Reduction::Min,
            "ReduceProd" => Reduction::Prod,
            "ReduceL1" => Reduction::L1,
            "ReduceL2" => Reduction::L2,
            "ReduceLogSum" => Reduction::LogSum,
            "ReduceLogSumExp" => Reduction::LogSumExp,
            "ReduceSumSquare" => Reduction::SumSquare,
            _ => return None,
        })
    }
}

/// `op` over `x` in its own type where that is exact: the maximum and minimum of every
/// type, and for integers the sums and products, which wrap as numpy's do. Everything else
/// (a float's sum, a mean, the logarithms) is computed in f64 and rounded once.
fn reduced<T: Number>(op: Reduction, x: &[T], runs: &Runs) -> Vec<T> {
    let native = |init: T, step: fn(T, T) -> T| runs.fold(x, init, step);
    match op {
        // NaN wins, as numpy's maximum and minimum.
        Reduction::Max => native(T::LOWEST, |a, v| if v.is_nan() || a < v { v } else { a }),
        Reduction::Min => native(T::HIGHEST, |a, v| if v.is_nan() || a > v { v } else { a }),
        Reduction::Sum if !T::FLOAT => native(T::ZERO, T::add),
        Reduction::Prod if !T::FLOAT => native(T::ONE, T::mul),
        Reduction::L1 if !T::FLOAT => native(T::ZERO, |a, v| a.add(v.abs())),
        Reduction::SumSquare if !T::FLOAT => native(T::ZERO, |a, v| a.add(v.mul(v))),
        _ => reduced_through_f64(op, x, runs).into_iter().map(T::from_f64).collect(),
    }
}

/// `op` over `x` accumulated in f64.
fn reduced_through_f64<T: Number>(op: Reduction, x: &[T], runs: &Runs) -> Vec<f64> {
    let sum = |step: fn(f64, f64) -> f64, init: f64| runs.fold(x, init, move |a, v: T| step(a, v.to_f64()));
    let mut acc = match op {
        Reduction::Max => sum(|a, v| if v.is_nan() || a < v { v } else { a }, f64::NEG_INFINITY),
        Reduction::Min => sum(|a, v| if v.is_nan() || a > v { v } else { a }, f64::INFINITY),
        Reduction::Prod => sum(|a, v| a * v, 1.0),
        Reduction::L1 => sum(|a, v| a + v.abs(), 0.0),
        Reduction::L2 | Reduction::SumSquare => sum(|a, v| a + v * v, 0.0),
        Reduction::LogSumExp => {
            // The maximum of each group first, for a stable sum.
            let max = runs.fold(x, f64::NEG_INFINITY, |a, v: T| a.max(v.to_f64()));
            let mut sums = vec![0.0; runs.out_count];
            runs.each(x, |o, v: T| sums[o] += (v.to_f64() - max[o]).exp());
            return sums.into_iter().zip(max).map(|(s, m)| if m.is_finite() { s.ln() + m } else { m }).collect();
        }
        Reduction::Sum | Reduction::Mean | Reduction::LogSum => sum(|a, v| a + v, 0.0),
    };
    let per_group = x.len().checked_div(runs.out_count).unwrap_or(0) as f64;
    for a in &mut acc {
        *a = match op {
            Reduction::Mean => *a / per_group,
            Reduction::L2 => a.sqrt(),
            Reduction::LogSum => a.ln(),
            _ => *a,
        };
    }
    acc
}

/// A row-major tensor's elements grouped by the output element they reduce into: its axes
/// merged into alternating blocks of kept and reduced axes, so that the innermost block is
/// one contiguous run of the input, reduced into one output element (a reduced block) or
/// into as many consecutive ones (a kept block).
#[derive(Debug)]
struct Runs {
    /// The merged blocks, outermost first: (extent, reduced).
    blocks: Vec<(usize, bool)>,
    out_count: usize,
}

impl Runs {
    fn new(shape: &[usize], axes: &[usize]) -> Runs {
        let mut blocks: Vec<(usize, bool)> = Vec::new();
        for (i, &d) in shape.iter().enumerate() {
            let reduced = axes.contains(&i);
            match blocks.last_mut() {
                Some((extent, r)) if *r == reduced => *extent *= d,
                _ => blocks.push((d, reduced)),
            }
        }
        if blocks.is_empty() {
            blocks.push((1, false));
        }
        let out_count = blocks.iter().filter(|b| !b.1).map(|b| b.0).product();
        Runs { blocks, out_count }
    }

    /// Calls `f(first output, reduced, run)` for each innermost run of `x`.
    fn runs<T>(&self, x: &[T], mut f: impl FnMut(usize, bool, &[T])) {
        let Some(&(len, inner_reduced)) = self.blocks.last() else { return };
        if len == 0 || x.is_empty() {
            return;
        }
        let outer = &self.blocks[..self.blocks.len() - 1];
        // The output stride of each outer block: the kept extents inside it.
        let mut out_strides = vec![0; outer.len()];
        let mut inside = if inner_reduced { 1 } else { len };
        for (k, &(extent, reduced)) in outer.iter().enumerate().rev() {
            if !reduced {
                out_strides[k] = inside;
                inside *= extent;
            }
        }
        let mut index = vec![0; outer.len()];
        let mut out = 0;
        for run in x.chunks_exact(len) {
            f(out, inner_reduced, run);
            // The odometer over the outer blocks, the output position moving with it.
            for k in (0..outer.len()).rev() {
                index[k] += 1;
                out += out_strides[k];
                if index[k] < outer[k].0 {
                    break;
                }
                out -= out_strides[k] * index[k];
                index[k] = 0;
            }
        }
    }

    /// `step` folded over each output element's inputs, from `init`.
    fn fold<T: Copy, A: Copy>(&self, x: &[T], init: A, step: impl Fn(A, T) -> A) -> Vec<A> {
        let mut acc = vec![init; self.out_count];
        self.runs(x, |o, reduced, run| {
            if reduced {
                acc[o] = run.iter().fold(acc[o], |a, &v| step(a, v));
            } else {
                for (a, &v) in acc[o..o + run.len()].iter_mut().zip(run) {
                    *a = step(*a, v);
                }
            }
        });
        acc
    }

    /// `f(output element, input element)` for each input element.
    fn each<T: Copy>(&self, x: &[T], mut f: impl FnMut(usize, T)) {
        self.runs(x, |o, reduced, run| {
            for (k, &v) in run.iter().enumerate() {
                f(if reduced { o } else { o + k }, v);
            }
        });
    }
}

fn arg(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let a = axis(ctx.int("axis").unwrap_or(0), t.rank())?;
    let keep = ctx.int("keepdims").unwrap_or(1) != 0;
    let last = ctx.int("select_last_index").unwrap_or(0) != 0;
    let max = ctx.op() == "ArgMax";
    let (outer, n, inner) = (count(&t.shape[..a])?, t.shape[a], count(&t.shape[a + 1..])?);
    if n == 0 {
        return Err(bad_input!("the axis is empty"));
    }
    // An empty input (another axis of size 0) may declare any number of rows.
    let outer = if t.is_empty() { 0 } else { outer };
    let out = match widened_half(&t.data) {
        Some((v, _)) => arg_best(&v, (outer, n, inner), max, last),
        None => match &*t.data {
            Data::Bool(v) => {
                arg_best(&v.iter().map(|&b| u8::from(b)).collect::<Vec<_>>(), (outer, n, inner), max, last)
            }
            data => with_number!(data, v => arg_best(v, (outer, n, inner), max, last),
                other => return Err(bad_input!("no order on {} values", other.data_type().name()))),
        },
    };
    let mut shape = t.shape.clone();
    if keep {
        shape[a] = 1;
    } else {
        shape.remove(a);
    }
    one(Tensor::new(shape, Data::I64(out.into())))
}

/// The index along the middle axis of the greatest (or least) element, compared in the
/// elements' own type (int64 exactly); ties go to the first index, or the last with `last`.
fn arg_best<T: PartialOrd + Copy>(
    v: &[T],
    (outer, n, inner): (usize, usize, usize),
    max: bool,
    last: bool,
) -> Vec<i64> {
    let mut out = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let mut best = 0usize;
            for k in 1..n {
                let (v, b) = (v[(o * n + k) * inner + i], v[(o * n + best) * inner + i]);
                let better = if max { v > b || (last && v == b) } else { v < b || (last && v == b) };
                if better {
                    best = k;
                }
            }
            out.push(best as i64);
        }
    }
    out
}

/// Softmax, LogSoftmax, Hardmax: over one axis from opset 13, over the flattened trailing
/// axes (from `axis`, default 1) before.
fn softmax(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let modern = ctx.opset >= 13;
    let a = axis(ctx.int("axis").unwrap_or(if modern { -1 } else { 1 }), t.rank().max(1))?;
    let (outer, n, inner) = if modern {
        (count(&t.shape[..a])?, *t.shape.get(a).unwrap_or(&1), count(&t.shape[(a + 1).min(t.rank())..])?)
    } else {
        (count(&t.shape[..a])?, count(&t.shape[a..])?, 1)
    };
    let op = ctx.op();
    if let Data::F32(x) = &*t.data
        && inner == 1
        && n > 0
        && op != "Hardmax"
    {
        return one(Tensor::new(t.shape.clone(), Data::F32(softmax_rows_f32(x, n, op == "LogSoftmax").into())));
    }
    let mut v = t.to_f64s()?;
    let half = Some(t.data_type()).filter(|d| matches!(d, DataType::Bfloat16 | DataType::Float16));
    // An empty input may declare any number of rows: nothing to compute.
    let outer = if v.is_empty() { 0 } else { outer };
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * n + k) * inner + i;
            let max = (0..n).map(|k| v[at(k)]).fold(f64::NEG_INFINITY, f64::max);
            if op == "Hardmax" {
                let first = (0..n).find(|&k| v[at(k)] == max);
                for k in 0..n {
                    v[at(k)] = if Some(k) == first { 1.0 } else { 0.0 };
                }
                continue;
            }
            // The 16-bit floats as numpy computes them: every step rounded to the type; a
            // bfloat16 row (ml_dtypes) summed one element at a time in bfloat16, a float16
            // row in float32, rounded once. Other types: f64, rounded once at the end.
            let r = match half {
                Some(dt) => crate::kernels::common::rounding(dt),
                None => |x| x,
            };
            let sum = if half == Some(DataType::Float16) {
                r((0..n).fold(0.0f32, |acc, k| acc + r(r(v[at(k)] - max).exp()) as f32).into())
            } else {
                (0..n).fold(0.0, |acc, k| r(acc + r(r(v[at(k)] - max).exp())))
            };
            for k in 0..n {
                let x = r(v[at(k)] - max);
                v[at(k)] = if op == "LogSoftmax" { x - sum.ln() } else { r(x.exp()) / sum };
            }
        }
    }
    one(numeric_like(t.data_type(), t.shape.clone(), v)?)
}

/// Softmax (or LogSoftmax) of each run of `n` float32 values, in float32 as numpy computes
/// onnx's reference (`exp(x - max) / sum`), with the vectorized exp and the sum kept in
/// eight lanes (which vectorizes too; a single running sum cannot be reordered).
/// The rows are cut into shares for the cores.
fn softmax_rows_f32(x: &[f32], n: usize, log: bool) -> Vec<f32> {
    let mut out = vec![0.0f32; x.len()];
    // A value costs an exponential and a few passes.
    crate::shares::over_units(&mut out, n, 8 * n, |first, part| {
        let rows = &x[(first * n).min(x.len())..];
        crate::simd::widest(
            #[inline(always)]
            || softmax_rows_f32_into(rows, part, n, log),
        )
    });
    out
}

/// See [`softmax_rows_f32`]: the rows of `x` into `out`, as many as `out` holds.
#[inline(always)]
fn softmax_rows_f32_into(x: &[f32], out: &mut [f32], n: usize, log: bool) {
    for (row, y) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
        // The maximum in eight lanes too: one running maximum waits on each comparison
        // (on 64-wide attention rows it took most of the time).
        let mut highs = [f32::NEG_INFINITY; 8];
        let mut chunks = row.chunks_exact(8);
        for c in &mut chunks {
            for (h, &v) in highs.iter_mut().zip(c) {
                *h = h.max(v);
            }
        }
        let max = highs.iter().chain(chunks.remainder()).copied().fold(f32::NEG_INFINITY, f32::max);
        for (&v, e) in row.iter().zip(y.iter_mut()) {
            *e = crate::math::exp(v - max);
        }
        let mut lanes = [0.0f32; 8];
        let mut chunks = y.chunks_exact(8);
        for c in &mut chunks {
            for (l, &e) in lanes.iter_mut().zip(c) {
                *l += e;
            }
        }
        let sum = lanes.iter().chain(chunks.remainder()).map(|&e| f64::from(e)).sum::<f64>();
        if log {
            let log_sum = sum.ln() as f32;
            for (&v, e) in row.iter().zip(y.iter_mut()) {
                *e = v - max - log_sum;
            }
        } else {
            let sum = sum as f32;
            for e in y.iter_mut() {
                *e /= sum;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Runs;

    /// Each element lands in the output element its kept coordinates name, for every set
    /// of reduced axes of a few shapes (ones and an empty axis among them).
    #[test]
    fn runs_send_each_element_to_its_output() {
        for shape in [vec![2, 3, 4], vec![3, 1, 2, 5], vec![4], vec![2, 0, 3], vec![]] {
            let rank = shape.len();
            for mask in 0..1usize << rank {
                let axes: Vec<usize> = (0..rank).filter(|a| mask >> a & 1 == 1).collect();
                let total: usize = shape.iter().product();
                let x: Vec<usize> = (0..total).collect();
                let runs = Runs::new(&shape, &axes);
                let mut got = vec![Vec::new(); runs.out_count];
                runs.each(&x, |o, v| got[o].push(v));
                let mut want = vec![Vec::new(); runs.out_count];
                for i in 0..total {
                    // The kept coordinates of element i, row-major over the kept axes.
                    let (mut rest, mut o, mut scale) = (i, 0, 1);
                    for a in (0..rank).rev() {
                        let c = rest % shape[a];
                        rest /= shape[a];
                        if !axes.contains(&a) {
                            o += c * scale;
                            scale *= shape[a];
                        }
                    }
                    want[o].push(i);
                }
                assert_eq!(got, want, "shape {shape:?}, axes {axes:?}");
            }
        }
    }
}
