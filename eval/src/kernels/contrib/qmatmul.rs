//! onnxruntime's dynamically quantized products: DynamicQuantizeMatMul, MatMulIntegerToFloat
//! and DynamicQuantizeLSTM. The float operand is quantized to uint8 with the range of its
//! values as onnxruntime's `GetQuantizationParameter` finds it (widened to hold 0), the
//! product taken in integers and scaled back by `a_scale·b_scale` (per column where b's
//! scale is), as MLAS's quantized GEMM with its scale-and-bias output step does.

use super::super::{Ctx, Kernel, input, optional};
use super::quant::{bytes, quantize};
use crate::error::{KernelError, bad_attribute, bad_input, unsupported};
use crate::kernels::matmul::{PreparedB, exact_integer_product, prepare_b};
use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "DynamicQuantizeMatMul" => |ctx, i| {
            let (a, b) = (input(i, 0)?, input(i, 1)?);
            let Data::F32(av) = &*a.data else { return Err(bad_input!("A must be float32")) };
            let (scale, zero) = dynamic_parameters(av);
            let qa: Vec<i32> = av.iter().map(|&x| quantize(x, scale, zero, false)).collect();
            let a = QuantizedA { shape: &a.shape, values: &qa, signed: false, zero, scale };
            matmul_to_float(ctx, &a, b, input(i, 2)?, optional(i, 3)?, optional(i, 4)?)
        },
        "MatMulIntegerToFloat" => |ctx, i| {
            let a = input(i, 0)?;
            let (qa, signed) = bytes(a, "A")?;
            let a_scale = scalar_f32(input(i, 2)?, "a_scale")?;
            let za = match optional(i, 4)? {
                Some(z) => bytes(z, "a_zero_point")?.0.first().copied().unwrap_or(0),
                None => 0,
            };
            let a = QuantizedA { shape: &a.shape, values: &qa, signed, zero: za, scale: a_scale };
            matmul_to_float(ctx, &a, input(i, 1)?, input(i, 3)?, optional(i, 5)?, optional(i, 6)?)
        },
        "DynamicQuantizeLSTM" => lstm,
        _ => return None,
    };
    Some(k)
}

fn scalar_f32(t: &Tensor, what: &str) -> Result<f32, KernelError> {
    match &*t.data {
        Data::F32(v) if v.len() == 1 => Ok(v[0]),
        _ => Err(bad_input!("{what} must be one float32 value")),
    }
}

/// onnxruntime's `GetQuantizationParameter` into uint8: the range of the values widened
/// to hold 0, a scale of range/255 (1 for an all-zero range) and the zero point rounded
/// half to even.
pub(super) fn dynamic_parameters(v: &[f32]) -> (f32, i32) {
    let (mut lo, mut hi) = (f32::MAX, f32::MIN);
    for &x in v {
        lo = lo.min(x);
        hi = hi.max(x);
    }
    let (lo, hi) = (lo.min(0.0), hi.max(0.0));
    let scale = if hi == lo { 1.0 } else { (hi - lo) / 255.0 };
    let zero = (0.0 - lo / scale).clamp(0.0, 255.0).round_ties_even();
    (scale, zero as i32)
}

/// The quantized A of a product: its shape, integers (uint8 or int8 values), zero point and
/// scale.
pub(super) struct QuantizedA<'a> {
    pub shape: &'a [usize],
    pub values: &'a [i32],
    pub signed: bool,
    pub zero: i32,
    pub scale: f32,
}

/// The operators whose constant B is prepared once per plan ([`PreparedB`]).
pub fn prepare(op: &str) -> Option<super::super::Prepare> {
    let prepare: super::super::Prepare = match op {
        "DynamicQuantizeMatMul" => |ctx, inputs| prepare_b(ctx, inputs, (1, 3)),
        "MatMulIntegerToFloat" => |ctx, inputs| prepare_b(ctx, inputs, (1, 5)),
        "QAttention" => |ctx, inputs| prepare_b(ctx, inputs, (1, 7)),
        _ => return None,
    };
    Some(prepare)
}

/// `Σ (a − za)(b − zb)` of the quantized A and the 8-bit B, as float32
/// `acc·a_scale·b_scale[j]` plus the bias: B a matrix (b's scale and zero point per column
/// or one), or a stack of matrices matching A's batch.
pub(super) fn matmul_to_float(
    ctx: &Ctx<'_>,
    a: &QuantizedA<'_>,
    b: &Tensor,
    b_scale: &Tensor,
    b_zero: Option<&Tensor>,
    bias: Option<&Tensor>,
) -> Result<Vec<Value>, KernelError> {
    let (ashape, qa, za) = (a.shape, a.values, a.zero);
    let (qb, _) = bytes(b, "B")?;
    if ashape.len() < 2 && ashape.len() != 1 || b.rank() < 2 {
        return Err(bad_input!("A {ashape:?} and B {:?}: B must have rank 2 or more", b.shape));
    }
    let k = *ashape.last().unwrap_or(&0);
    let (kb, n) = (b.shape[b.rank() - 2], b.shape[b.rank() - 1]);
    if k != kb {
        return Err(bad_input!("A {ashape:?} and B {:?} do not multiply", b.shape));
    }
    let rows = qa.len() / k.max(1);
    let b_batches = qb.len() / (k * n).max(1);
    let m = if ashape.len() >= 2 { ashape[ashape.len() - 2] } else { 1 };
    let a_batches = rows / m.max(1);
    if b_batches != 1 && b_batches != a_batches {
        return Err(unsupported!("A {ashape:?} and B {:?}: only B's batch equal to A's is supported", b.shape));
    }
    let Data::F32(bs) = &*b_scale.data else { return Err(bad_input!("b_scale must be float32")) };
    let zb = match b_zero {
        Some(z) => bytes(z, "b_zero_point")?.0,
        None => vec![0],
    };
    let per = |len: usize, what: &str| {
        if len == 1 || len == n { Ok(()) } else { Err(bad_input!("{len} values of {what} for {n} columns")) }
    };
    per(bs.len(), "b_scale")?;
    per(zb.len(), "b_zero_point")?;
    let bias = match bias {
        Some(t) => match &*t.data {
            Data::F32(v) if v.len() == n => Some(&v[..]),
            _ => return Err(bad_input!("bias must be {n} float32 values")),
        },
        None => None,
    };
    let scales: Vec<f32> = (0..n).map(|j| a.scale * bs[if bs.len() == 1 { 0 } else { j }]).collect();
    let prepared = ctx
        .prepared
        .and_then(|p| p.as_any().downcast_ref::<PreparedB>())
        .filter(|p| b_batches == 1 && p.shape() == (k, n));
    // The int32 accumulators, exactly: through the 8-bit dot products where B is packed,
    // else through the float32 GEMM (each operand less its zero point is within ±255); a
    // stack of B matrices pairs with A's batch.
    let acc = match prepared {
        Some(PreparedB::Packed(packed)) => {
            let offset = if a.signed { 128 } else { 0 };
            let lhs = crate::int8::RowsA::from_fn((rows, k), za + offset, |r, dest| {
                for (d, &v) in dest.iter_mut().zip(&qa[r * k..(r + 1) * k]) {
                    *d = (v + offset) as u8;
                }
            });
            crate::gemm::count_flops(2 * rows * k * n);
            crate::int8::multiply(&lhs, packed).ok_or(bad_input!("the packed B does not fit A"))?
        }
        _ => {
            let af: Vec<f32> = qa.iter().map(|&x| (x - za) as f32).collect();
            let bf: std::borrow::Cow<'_, [f32]> = match prepared {
                Some(PreparedB::Floats { values, .. }) => values.into(),
                _ => qb
                    .iter()
                    .enumerate()
                    .map(|(i, &x)| (x - zb[if zb.len() == 1 { 0 } else { i % n }]) as f32)
                    .collect(),
            };
            let (a_dims, b_dims) =
                if b_batches == 1 { ([1, rows, k], [1, k, n]) } else { ([a_batches, m, k], [b_batches, k, n]) };
            exact_integer_product(&af, &a_dims, &bf, &b_dims)?.1
        }
    };
    let mut out = vec![0.0f32; acc.len()];
    for (o, acc) in out.chunks_exact_mut(n.max(1)).zip(acc.chunks_exact(n.max(1))) {
        for ((o, &acc), &scale) in o.iter_mut().zip(acc).zip(&scales) {
            *o = acc as f32 * scale;
        }
        if let Some(bias) = bias {
            o.iter_mut().zip(bias).for_each(|(o, b)| *o += b);
        }
    }
    let mut shape: Vec<usize> = if ashape.len() >= 2 { ashape[..ashape.len() - 2].to_vec() } else { Vec::new() };
    if b_batches > 1 && ashape.len() == 2 {
        shape = b.shape[..b.rank() - 2].to_vec();
    }
    if ashape.len() >= 2 {
        shape.push(m);
    }
    shape.push(n);
    Ok(vec![Value::Tensor(Tensor::new(shape, Data::F32(out.into())))])
}

/// The quantized product of onnxruntime's recurrent cells: the float rows `a` (`m×k`)
/// quantized together, times the 8-bit weights less their zero point `w` (`k×n`, as
/// float32, made once per run: each step's product reuses them), scaled by
/// `a_scale·w_scale[j]`, added to `out`.
fn quantized_gemm_into(
    a: &[f32],
    m: usize,
    k: usize,
    w: &[f32],
    w_scale: &[f32],
    out: &mut [f32],
) -> Result<(), KernelError> {
    let n = out.len() / m.max(1);
    let (scale, za) = dynamic_parameters(a);
    let qa: Vec<f32> = a.iter().map(|&x| (quantize(x, scale, za, false) - za) as f32).collect();
    // Exact int32 accumulators through the float32 GEMM (both operands within ±255).
    let (_, acc) = exact_integer_product(&qa, &[m, k], w, &[k, n])?;
    for (i, (o, acc)) in out.iter_mut().zip(acc).enumerate() {
        let j = i % n.max(1);
        *o += acc as f32 * (scale * w_scale[if w_scale.len() == 1 { 0 } else { j }]);
    }
    Ok(())
}

#[inline(always)]
fn sigmoid(x: f32) -> f32 {
    super::quant::mlas_logistic(x)
}

/// Within two float32 ulps of the exact tanh, without a call per value (f64's `tanh` per
/// gate value took a third of a small quantized LSTM's run).
#[inline(always)]
fn tanh(x: f32) -> f32 {
    crate::math::tanh(x)
}

/// DynamicQuantizeLSTM: LSTM (gates i, o, f, c; W `[directions, input, 4·hidden]` and R
/// `[directions, hidden, 4·hidden]` quantized, transposed from LSTM's), as onnxruntime's
/// cell computes it: X·W over the whole sequence at once with X quantized as one, then
/// at each step h·R with the hidden state quantized anew, bias added, the gates through
/// MLAS's logistic and tanh.
fn lstm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let Data::F32(xv) = &*x.data else { return Err(bad_input!("X must be float32")) };
    let (w, r) = (input(inputs, 1)?, input(inputs, 2)?);
    let hidden = usize::try_from(ctx.int("hidden_size").ok_or(bad_attribute!("hidden_size is required"))?)
        .map_err(|_| bad_attribute!("hidden_size is negative"))?;
    let dirs = match ctx.string("direction").unwrap_or("forward") {
        "bidirectional" => 2,
        "forward" | "reverse" => 1,
        other => return Err(bad_attribute!("unknown direction '{other}'")),
    };
    let reverse_only = ctx.string("direction") == Some("reverse");
    if let Some(a) = ctx.strings("activations")
        && a.iter().map(|s| s.to_ascii_lowercase()).ne(["sigmoid", "tanh", "tanh"]
            .iter()
            .cycle()
            .take(a.len())
            .map(|s| s.as_bytes().to_vec()))
    {
        return Err(unsupported!("DynamicQuantizeLSTM with activations other than Sigmoid, Tanh, Tanh"));
    }
    if x.rank() != 3 {
        return Err(bad_input!("X must have rank 3"));
    }
    let (seq, batch, width) = (x.shape[0], x.shape[1], x.shape[2]);
    let g4 = 4 * hidden;
    if w.shape != [dirs, width, g4] || r.shape != [dirs, hidden, g4] {
        return Err(bad_input!(
            "W {:?} and R {:?} do not match {dirs} direction(s), hidden size {hidden}",
            w.shape,
            r.shape
        ));
    }
    let ((wq, _), (rq, _)) = (bytes(w, "W")?, bytes(r, "R")?);
    let f32s = |i: usize, len: usize, what: &str| -> Result<Option<Vec<f32>>, KernelError> {
        match optional(inputs, i)? {
            None => Ok(None),
            Some(t) => match &*t.data {
                Data::F32(v) if v.len() == len => Ok(Some(v.to_vec())),
                _ => Err(bad_input!("{what} must hold {len} float32 values")),
            },
        }
    };
    let bias = f32s(3, dirs * 8 * hidden, "B")?;
    if optional(inputs, 4)?.is_some_and(|l| l.to_i64s().is_ok_and(|v| v.iter().any(|&s| s != seq as i64))) {
        return Err(unsupported!("sequence_lens shorter than the sequence"));
    }
    let h0 = f32s(5, dirs * batch * hidden, "initial_h")?;
    let c0 = f32s(6, dirs * batch * hidden, "initial_c")?;
    let peep = f32s(7, dirs * 3 * hidden, "P")?;
    let scales = |i: usize, what: &str| -> Result<Vec<f32>, KernelError> {
        match &*input(inputs, i)?.data {
            Data::F32(v) if v.len() == dirs || v.len() == dirs * g4 => Ok(v.to_vec()),
            _ => Err(bad_input!("{what} must hold {dirs} or {dirs}×{g4} float32 values")),
        }
    };
    let (ws, rs) = (scales(8, "W_scale")?, scales(10, "R_scale")?);
    let (wz, _) = bytes(input(inputs, 9)?, "W_zero_point")?;
    let (rz, _) = bytes(input(inputs, 11)?, "R_zero_point")?;
    let clip = ctx.float("clip").unwrap_or(f32::MAX);
    // As LSTM's: a clip that is not positive (or NaN) is refused, not used as reversed
    // bounds.
    if clip.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return Err(bad_attribute!("clip {clip} is not a positive threshold"));
    }
    let couple = ctx.int("input_forget").unwrap_or(0) != 0;
    let per_dir = |v: &[f32], d: usize| -> Vec<f32> {
        let len = v.len() / dirs;
        v[d * len..(d + 1) * len].to_vec()
    };
    let mut y = vec![0f32; seq * dirs * batch * hidden];
    let mut y_h = vec![0f32; dirs * batch * hidden];
    let mut y_c = vec![0f32; dirs * batch * hidden];
    for d in 0..dirs {
        let backward = reverse_only || d == 1;
        let (wd, rd) = (&wq[d * width * g4..(d + 1) * width * g4], &rq[d * hidden * g4..(d + 1) * hidden * g4]);
        let (wsd, rsd) = (per_dir(&ws, d), per_dir(&rs, d));
        let (wzd, rzd) = (wz[d * (wz.len() / dirs)], rz[d * (rz.len() / dirs)]);
        let less_zero = |w: &[i32], z: i32| -> Vec<f32> { w.iter().map(|&x| (x - z) as f32).collect() };
        let (wd, rd) = (less_zero(wd, wzd), less_zero(rd, rzd));
        // The bias of each gate: Wb + Rb.
        let b: Vec<f32> = match &bias {
            Some(b) => (0..g4).map(|k| b[d * 8 * hidden + k] + b[d * 8 * hidden + g4 + k]).collect(),
            None => vec![0.0; g4],
        };
        // X in the direction's order, then X·W for every step at once.
        let ordered: Vec<f32> = (0..seq)
            .flat_map(|s| {
                let t = if backward { seq - 1 - s } else { s };
                xv[t * batch * width..(t + 1) * batch * width].iter().copied()
            })
            .collect();
        let mut xw = vec![0f32; seq * batch * g4];
        quantized_gemm_into(&ordered, seq * batch, width, &wd, &wsd, &mut xw)?;
        let state = |v: &Option<Vec<f32>>| v.as_ref().map_or(vec![0.0; batch * hidden], |v| per_dir(v, d));
        let (mut h, mut c) = (state(&h0), state(&c0));
        let p = peep.as_ref().map(|p| per_dir(p, d));
        for s in 0..seq {
            let t = if backward { seq - 1 - s } else { s };
            let gates = &mut xw[s * batch * g4..(s + 1) * batch * g4];
            quantized_gemm_into(&h, batch, hidden, &rd, &rsd, gates)?;
            // The gates compiled for the widest vectors, which also makes MLAS's fused
            // multiply-adds instructions rather than calls.
            crate::simd::widest(
                #[inline(always)]
                || {
                    for bi in 0..batch {
                        let row = &mut gates[bi * g4..(bi + 1) * g4];
                        let pre = |row: &[f32], k: usize, extra: f32| (row[k] + extra + b[k]).clamp(-clip, clip);
                        for j in 0..hidden {
                            let cp = c[bi * hidden + j];
                            let pi = p.as_ref().map_or(0.0, |p| p[j] * cp);
                            let i_gate = sigmoid(pre(row, j, pi));
                            let f_gate = if couple {
                                1.0 - i_gate
                            } else {
                                let pf = p.as_ref().map_or(0.0, |p| p[2 * hidden + j] * cp);
                                sigmoid(pre(row, 2 * hidden + j, pf))
                            };
                            let g = tanh(pre(row, 3 * hidden + j, 0.0));
                            let cn = cp * f_gate + i_gate * g;
                            let po = p.as_ref().map_or(0.0, |p| p[hidden + j] * cn);
                            let o_gate = sigmoid(pre(row, hidden + j, po));
                            c[bi * hidden + j] = cn;
                            h[bi * hidden + j] = o_gate * tanh(cn);
                        }
                    }
                },
            );
            for bi in 0..batch {
                let at = ((t * dirs + d) * batch + bi) * hidden;
                y[at..at + hidden].copy_from_slice(&h[bi * hidden..(bi + 1) * hidden]);
            }
        }
        y_h[d * batch * hidden..(d + 1) * batch * hidden].copy_from_slice(&h);
        y_c[d * batch * hidden..(d + 1) * batch * hidden].copy_from_slice(&c);
    }
    let t = |shape: Vec<usize>, v: Vec<f32>| Value::Tensor(Tensor::new(shape, Data::F32(v.into())));
    let mut out = vec![
        t(vec![seq, dirs, batch, hidden], y),
        t(vec![dirs, batch, hidden], y_h),
        t(vec![dirs, batch, hidden], y_c),
    ];
    out.truncate(ctx.node.outputs.len().max(1));
    Ok(out)
}
