//! RNN, GRU and LSTM, as the spec writes their equations: every direction, `layout`,
//! `sequence_lens`, initial states, peepholes, `clip`, `linear_before_reset`,
//! `input_forget` and the named activations with their alpha and beta. Computed in f64.

use super::{Ctx, Kernel, count, input, optional};
use crate::broadcast::permute;
use crate::error::{KernelError, bad_attribute, bad_input, limit};
use crate::gemm::View;
use crate::kernels::common::numeric_like;
use crate::value::{Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "RNN" | "GRU" | "LSTM" => recurrent,
        _ => return None,
    };
    Some(k)
}

#[derive(Clone, Copy, PartialEq)]
enum Cell {
    Rnn,
    Gru,
    Lstm,
}

impl Cell {
    fn gates(self) -> usize {
        match self {
            Cell::Rnn => 1,
            Cell::Gru => 3,
            Cell::Lstm => 4,
        }
    }

    /// The activations when the node names none: f, g (and h).
    fn default_activations(self) -> &'static [&'static str] {
        match self {
            Cell::Rnn => &["Tanh"],
            Cell::Gru => &["Sigmoid", "Tanh"],
            Cell::Lstm => &["Sigmoid", "Tanh", "Tanh"],
        }
    }
}

/// A named activation with its parameters.
#[derive(Clone)]
struct Activation {
    name: String,
    /// The name recognised once (matching the lowercased name per value was an allocation
    /// per gate value: an eighth of a GRU's time).
    function: Function,
    alpha: f64,
    beta: f64,
    /// The node computes float32 values (see [`Activation::apply_all`]).
    float32: bool,
}

/// The activations the recurrent operators name (case-insensitively).
#[derive(Clone, Copy)]
enum Function {
    Sigmoid,
    Tanh,
    Relu,
    Affine,
    LeakyRelu,
    ThresholdedRelu,
    ScaledTanh,
    HardSigmoid,
    Elu,
    Softsign,
    Softplus,
    /// Refused when applied (a node that runs no step never applies it).
    Unknown,
}

impl Function {
    fn of(name: &str) -> Function {
        match name.to_ascii_lowercase().as_str() {
            "sigmoid" => Function::Sigmoid,
            "tanh" => Function::Tanh,
            "relu" => Function::Relu,
            "affine" => Function::Affine,
            "leakyrelu" => Function::LeakyRelu,
            "thresholdedrelu" => Function::ThresholdedRelu,
            "scaledtanh" => Function::ScaledTanh,
            "hardsigmoid" => Function::HardSigmoid,
            "elu" => Function::Elu,
            "softsign" => Function::Softsign,
            "softplus" => Function::Softplus,
            _ => Function::Unknown,
        }
    }
}

impl Activation {
    /// The activation of each value in place. Sigmoid and tanh of a float32 node take the
    /// vectorizing float32 functions in a loop compiled for the widest vectors (within two
    /// float32 ulps; libm's f64 functions one value at a time were a quarter of a GRU's
    /// time), as onnxruntime computes its gates in float32.
    fn apply_all(&self, values: &mut [f64]) -> Result<(), KernelError> {
        match self.function {
            Function::Sigmoid if self.float32 => crate::simd::widest(
                #[inline(always)]
                || {
                    for v in values.iter_mut() {
                        *v = f64::from(crate::math::sigmoid(*v as f32));
                    }
                },
            ),
            Function::Tanh if self.float32 => crate::simd::widest(
                #[inline(always)]
                || {
                    for v in values.iter_mut() {
                        *v = f64::from(crate::math::tanh(*v as f32));
                    }
                },
            ),
            _ => {
                for v in values.iter_mut() {
                    *v = self.apply(*v)?;
                }
            }
        }
        Ok(())
    }

    fn apply(&self, x: f64) -> Result<f64, KernelError> {
        let (a, b) = (self.alpha, self.beta);
        Ok(match self.function {
            Function::Sigmoid => 1.0 / (1.0 + (-x).exp()),
            Function::Tanh => x.tanh(),
            Function::Relu => x.max(0.0),
            Function::Affine => a * x + b,
            Function::LeakyRelu => {
                if x < 0.0 {
                    a * x
                } else {
                    x
                }
            }
            Function::ThresholdedRelu => {
                if x > a {
                    x
                } else {
                    0.0
                }
            }
            Function::ScaledTanh => a * (b * x).tanh(),
            Function::HardSigmoid => (a * x + b).clamp(0.0, 1.0),
            Function::Elu => {
                if x < 0.0 {
                    a * (x.exp() - 1.0)
                } else {
                    x
                }
            }
            Function::Softsign => x / (1.0 + x.abs()),
            Function::Softplus => x.exp().ln_1p(),
            Function::Unknown => return Err(bad_attribute!("unknown activation '{}'", self.name)),
        })
    }

    /// The default alpha and beta of each activation that has them.
    fn defaults(name: &str) -> (Option<f64>, Option<f64>) {
        match name.to_ascii_lowercase().as_str() {
            "affine" => (Some(1.0), Some(0.0)),
            "leakyrelu" => (Some(0.01), None),
            "thresholdedrelu" | "elu" => (Some(1.0), None),
            "scaledtanh" => (Some(1.0), Some(1.0)),
            "hardsigmoid" => (Some(0.2), Some(0.5)),
            _ => (None, None),
        }
    }
}

fn activations(ctx: &Ctx<'_>, cell: Cell, directions: usize, float32: bool) -> Vec<Activation> {
    let names: Vec<String> = match ctx.node.attribute("activations").and_then(|a| a.value()) {
        Some(onnx_core::ir::AttributeValue::Strings(s)) if !s.is_empty() => s.iter().map(ToString::to_string).collect(),
        _ => (0..directions).flat_map(|_| cell.default_activations().iter().map(|s| (*s).to_owned())).collect(),
    };
    let floats = |name: &str| -> Vec<f64> {
        match ctx.node.attribute(name).and_then(|a| a.value()) {
            Some(onnx_core::ir::AttributeValue::Floats(f)) => f.iter().map(|&v| f64::from(v)).collect(),
            _ => Vec::new(),
        }
    };
    let (alphas, betas) = (floats("activation_alpha"), floats("activation_beta"));
    let (mut ai, mut bi) = (0, 0);
    names
        .into_iter()
        .map(|name| {
            let (da, db) = Activation::defaults(&name);
            let alpha = da.map(|d| {
                let v = alphas.get(ai).copied().unwrap_or(d);
                ai += 1;
                v
            });
            let beta = db.map(|d| {
                let v = betas.get(bi).copied().unwrap_or(d);
                bi += 1;
                v
            });
            let (alpha, beta) = (alpha.unwrap_or(0.0), beta.unwrap_or(0.0));
            Activation { function: Function::of(&name), name, alpha, beta, float32 }
        })
        .collect()
}

fn recurrent(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let cell = match ctx.op() {
        "RNN" => Cell::Rnn,
        "GRU" => Cell::Gru,
        _ => Cell::Lstm,
    };
    let (x, w, r) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    let hidden = usize::try_from(ctx.int("hidden_size").ok_or(bad_attribute!("hidden_size is required"))?)
        .map_err(|_| bad_attribute!("hidden_size is negative"))?;
    let directions = match ctx.string("direction").unwrap_or("forward") {
        "bidirectional" => 2,
        "forward" | "reverse" => 1,
        other => return Err(bad_attribute!("unknown direction '{other}'")),
    };
    let reverse_only = ctx.string("direction") == Some("reverse");
    let batch_first = ctx.int("layout").unwrap_or(0) != 0;
    if x.rank() != 3 {
        return Err(bad_input!("X must have rank 3"));
    }
    let (seq, batch, width) =
        if batch_first { (x.shape[1], x.shape[0], x.shape[2]) } else { (x.shape[0], x.shape[1], x.shape[2]) };
    let g = cell.gates();
    let gates = g.checked_mul(hidden).ok_or_else(|| limit!("hidden_size {hidden} is too large"))?;
    if w.shape != [directions, gates, width] || r.shape != [directions, gates, hidden] {
        return Err(bad_input!(
            "W {:?} and R {:?} do not match {directions} direction(s), hidden size {hidden}, input size {width}",
            w.shape,
            r.shape
        ));
    }
    let xv = x.to_f64s()?;
    // The input row of step t of sequence b (contiguous in either layout).
    // The row of X holding step t of sequence b (either layout).
    let row_of = |t: usize, b: usize| if batch_first { b * seq + t } else { t * batch + b };
    let x_row = |t: usize, b: usize| {
        let row = row_of(t, b);
        &xv[row * width..(row + 1) * width]
    };
    let (wv, rv) = (Rows::of(w)?, Rows::of(r)?);
    let projected = project_inputs(x, &wv, (directions, gates, width))?;
    let bias = optional(inputs, 3)?.map(Tensor::to_f64s).transpose()?;
    if let Some(b) = &bias
        && b.len() != directions * 2 * g * hidden
    {
        return Err(bad_input!("B holds {} values, not {directions}×{}", b.len(), 2 * g * hidden));
    }
    // Y's elements (and the steps run): an empty X may declare any sequence and batch.
    let outputs = count(&[seq, directions, batch, hidden])?;
    ctx.check_grown(outputs, x.len())?;
    let per_state = count(&[directions, batch, hidden])?;
    ctx.check_grown(per_state, x.len())?;
    let lens: Vec<usize> = match optional(inputs, 4)? {
        Some(l) if l.len() != batch => {
            return Err(bad_input!("sequence_lens holds {} values for a batch of {batch}", l.len()));
        }
        Some(l) => l.to_i64s()?.into_iter().map(|v| (v.max(0) as usize).min(seq)).collect(),
        // Every batch entry runs the whole sequence (the lookup below defaults to it).
        None => Vec::new(),
    };
    let state = |i: usize| -> Result<Option<Vec<f64>>, KernelError> {
        let Some(t) = optional(inputs, i)? else { return Ok(None) };
        let v = t.to_f64s()?;
        if v.len() != per_state {
            return Err(bad_input!("initial state {i} holds {} values, not {directions}×{batch}×{hidden}", v.len()));
        }
        // Batch-first states are [batch, directions, hidden]: bring them to [directions, batch, hidden].
        Ok(Some(if batch_first { permute(&v, &[batch, directions, hidden], &[1, 0, 2]) } else { v }))
    };
    let initial_h = state(5)?;
    let initial_c = if cell == Cell::Lstm { state(6)? } else { None };
    let peepholes = if cell == Cell::Lstm { optional(inputs, 7)?.map(Tensor::to_f64s).transpose()? } else { None };
    if let Some(p) = &peepholes
        && p.len() != directions * 3 * hidden
    {
        return Err(bad_input!("P holds {} values, not {directions}×{}", p.len(), 3 * hidden));
    }
    let acts = activations(ctx, cell, directions, x.data_type() == onnx_core::ir::DataType::Float);
    let per_direction = acts.len() / directions.max(1);
    let clip = ctx.float("clip").map(f64::from);
    if let Some(c) = clip
        && c.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
    {
        return Err(bad_attribute!("clip {c} is not a positive threshold"));
    }
    let linear_before_reset = ctx.int("linear_before_reset").unwrap_or(0) != 0;
    let couple = ctx.int("input_forget").unwrap_or(0) != 0;
    let mut y = vec![0.0; outputs];
    let mut y_h = vec![0.0; per_state];
    let mut y_c = vec![0.0; per_state];
    // With no hidden units every output is empty: no steps to run (however long the batch).
    let runs = if hidden == 0 { 0 } else { batch };
    for d in 0..directions {
        let f = acts.get(d * per_direction).ok_or(bad_attribute!("too few activations"))?;
        let gact = acts.get(d * per_direction + 1).unwrap_or(f);
        let hact = acts.get(d * per_direction + 2).unwrap_or(gact);
        let backward = reverse_only || d == 1;
        let (w_start, r_start) = (d * g * hidden * width, d * g * hidden * hidden);
        let bias_w = |k: usize| bias.as_ref().map_or(0.0, |b| b[d * 2 * g * hidden + k]);
        let bias_r = |k: usize| bias.as_ref().map_or(0.0, |b| b[d * 2 * g * hidden + g * hidden + k]);
        let peep = |gate: usize, h: usize| peepholes.as_ref().map_or(0.0, |p| p[d * 3 * hidden + gate * hidden + h]);
        for b in 0..runs {
            let mut h_prev: Vec<f64> = initial_h
                .as_ref()
                .map_or(vec![0.0; hidden], |v| v[(d * batch + b) * hidden..(d * batch + b + 1) * hidden].to_vec());
            let mut c_prev: Vec<f64> = initial_c
                .as_ref()
                .map_or(vec![0.0; hidden], |v| v[(d * batch + b) * hidden..(d * batch + b + 1) * hidden].to_vec());
            let len = lens.get(b).copied().unwrap_or(seq);
            // The steps' products, for the profile's rate (the projected inputs count theirs).
            let per_step = gates * hidden + if projected.is_some() { 0 } else { gates * width };
            crate::gemm::count_flops(2 * len * per_step);
            for step in 0..len {
                let t = if backward { len - 1 - step } else { step };
                // Gate pre-activations: x·Wᵀ + Wb (+ h·Rᵀ + Rb, except GRU's candidate).
                let x_row = x_row(t, b);
                let row = row_of(t, b);
                let xw = |k: usize| -> f64 {
                    let product = match &projected {
                        Some(p) => f64::from(p[(d * seq * batch + row) * gates + k]),
                        None => wv.dot(w_start + k * width, x_row),
                    };
                    product + bias_w(k)
                };
                let hr = |k: usize, h: &[f64]| -> f64 { rv.dot(r_start + k * hidden, h) + bias_r(k) };
                let clipped = |v: f64| clip.map_or(v, |c| v.clamp(-c, c));
                let mut h_new = vec![0.0; hidden];
                // Each gate's pre-activations first, then its activation over all of them
                // at once (a loop that vectorizes for sigmoid and tanh of float32).
                match cell {
                    Cell::Rnn => {
                        for (k, h) in h_new.iter_mut().enumerate() {
                            *h = clipped(xw(k) + hr(k, &h_prev));
                        }
                        f.apply_all(&mut h_new)?;
                    }
                    Cell::Gru => {
                        let mut z: Vec<f64> = (0..hidden).map(|k| clipped(xw(k) + hr(k, &h_prev))).collect();
                        let mut rg: Vec<f64> =
                            (0..hidden).map(|k| clipped(xw(hidden + k) + hr(hidden + k, &h_prev))).collect();
                        f.apply_all(&mut z)?;
                        f.apply_all(&mut rg)?;
                        let reset: Vec<f64> = (0..hidden).map(|j| rg[j] * h_prev[j]).collect();
                        let mut hh: Vec<f64> = (0..hidden)
                            .map(|k| {
                                clipped(if linear_before_reset {
                                    xw(2 * hidden + k) + rg[k] * hr(2 * hidden + k, &h_prev)
                                } else {
                                    xw(2 * hidden + k) + hr(2 * hidden + k, &reset)
                                })
                            })
                            .collect();
                        gact.apply_all(&mut hh)?;
                        for k in 0..hidden {
                            h_new[k] = (1.0 - z[k]) * hh[k] + z[k] * h_prev[k];
                        }
                    }
                    Cell::Lstm => {
                        // Gate order in W, R and B: input, output, forget, cell.
                        let pre = |gate: usize, k: usize| xw(gate * hidden + k) + hr(gate * hidden + k, &h_prev);
                        let mut i_gate: Vec<f64> =
                            (0..hidden).map(|k| clipped(pre(0, k) + peep(0, k) * c_prev[k])).collect();
                        f.apply_all(&mut i_gate)?;
                        let f_gate = if couple {
                            i_gate.iter().map(|i| 1.0 - i).collect()
                        } else {
                            let mut f_gate: Vec<f64> =
                                (0..hidden).map(|k| clipped(pre(2, k) + peep(2, k) * c_prev[k])).collect();
                            f.apply_all(&mut f_gate)?;
                            f_gate
                        };
                        let mut candidate: Vec<f64> = (0..hidden).map(|k| clipped(pre(3, k))).collect();
                        gact.apply_all(&mut candidate)?;
                        let c_new: Vec<f64> =
                            (0..hidden).map(|k| f_gate[k] * c_prev[k] + i_gate[k] * candidate[k]).collect();
                        let mut o_gate: Vec<f64> =
                            (0..hidden).map(|k| clipped(pre(1, k) + peep(1, k) * c_new[k])).collect();
                        f.apply_all(&mut o_gate)?;
                        h_new.copy_from_slice(&c_new);
                        hact.apply_all(&mut h_new)?;
                        for (h, o) in h_new.iter_mut().zip(&o_gate) {
                            *h *= o;
                        }
                        c_prev = c_new;
                    }
                }
                h_prev = h_new;
                for k in 0..hidden {
                    y[((t * directions + d) * batch + b) * hidden + k] = h_prev[k];
                }
            }
            y_h[(d * batch + b) * hidden..(d * batch + b + 1) * hidden].copy_from_slice(&h_prev);
            y_c[(d * batch + b) * hidden..(d * batch + b + 1) * hidden].copy_from_slice(&c_prev);
        }
    }
    let dt = x.data_type();
    let (y, y_shape) = if batch_first {
        // [seq, directions, batch, hidden] → [batch, seq, directions, hidden].
        (permute(&y, &[seq, directions, batch, hidden], &[2, 0, 1, 3]), vec![batch, seq, directions, hidden])
    } else {
        (y, vec![seq, directions, batch, hidden])
    };
    let states = |v: Vec<f64>| -> (Vec<f64>, Vec<usize>) {
        if !batch_first {
            return (v, vec![directions, batch, hidden]);
        }
        (permute(&v, &[directions, batch, hidden], &[1, 0, 2]), vec![batch, directions, hidden])
    };
    let mut out = vec![Value::Tensor(numeric_like(dt, y_shape, y)?)];
    let (h, hs) = states(y_h);
    out.push(Value::Tensor(numeric_like(dt, hs, h)?));
    if cell == Cell::Lstm {
        let (c, cs) = states(y_c);
        out.push(Value::Tensor(numeric_like(dt, cs, c)?));
    }
    out.truncate(ctx.node.outputs.len().max(1));
    Ok(out)
}

/// Every step's input products `x·Wᵀ` at once, for float32 `X` and `W`: one product per
/// direction of all the input rows (in `X`'s row order) with the transposed weights, rows
/// of `gates` values, directions one after the other. They do not depend on the state, so
/// the steps need not make them one dot product at a time (two thirds of a GRU's products
/// with inputs twice as wide as its state). In float32, as onnxruntime makes them. `None`
/// for other types: those make them per step in f64.
fn project_inputs(
    x: &Tensor,
    w: &Rows<'_>,
    (directions, gates, width): (usize, usize, usize),
) -> Result<Option<Vec<f32>>, KernelError> {
    let (crate::value::Data::F32(xv), Rows::Single(wv)) = (&*x.data, w) else {
        return Ok(None);
    };
    let rows = xv.len().checked_div(width).unwrap_or(0);
    let mut out = vec![0.0f32; directions * rows * gates];
    if rows == 0 || gates == 0 {
        return Ok(Some(out));
    }
    for (d, block) in out.chunks_exact_mut(rows * gates).enumerate() {
        let weights = View {
            data: &wv[d * gates * width..][..gates * width],
            rows: width,
            cols: gates,
            row_stride: 1,
            col_stride: width,
        };
        crate::gemm::sgemm(1.0, View::rows(&xv[..rows * width], rows, width), weights, 0.0, block)?;
    }
    Ok(Some(out))
}

/// A cell's weights as the model gives them: float32 read where they lie (widened to f64
/// one product at a time, exactly), other types converted once per run. Converting every
/// weight to f64 on each run was half of a GRU's time.
enum Rows<'a> {
    Single(&'a [f32]),
    Double(Vec<f64>),
}

impl Rows<'_> {
    fn of(t: &Tensor) -> Result<Rows<'_>, KernelError> {
        Ok(match &*t.data {
            crate::value::Data::F32(v) => Rows::Single(v),
            _ => Rows::Double(t.to_f64s()?),
        })
    }

    /// The dot product of `x` with the `x.len()` weights from `start` on.
    fn dot(&self, start: usize, x: &[f64]) -> f64 {
        match self {
            Rows::Single(v) => dot(x, &v[start..start + x.len()]),
            Rows::Double(v) => dot(x, &v[start..start + x.len()]),
        }
    }
}

/// The dot product of two rows, summed in eight lanes: one running sum waits on each
/// addition before the next (four cycles each), and the gate products of a cell are
/// nothing but such sums. Compiled for the widest vectors the processor has (one AVX-512
/// register holds the eight lanes); the sums are the same on every path.
fn dot<T: Copy + Into<f64>>(a: &[f64], b: &[T]) -> f64 {
    crate::simd::widest(
        #[inline(always)]
        || {
            let mut lanes = [0.0f64; 8];
            let (a8, b8) = (a.chunks_exact(8), b.chunks_exact(8));
            let tail: f64 = a8.remainder().iter().zip(b8.remainder()).map(|(x, &y)| x * y.into()).sum();
            for (x, y) in a8.zip(b8) {
                for l in 0..8 {
                    lanes[l] += x[l] * y[l].into();
                }
            }
            lanes.iter().sum::<f64>() + tail
        },
    )
}
