//! onnxruntime's fused forms of default-domain operators, as its CPU kernels compute them:
//! FusedMatMul (a batched product with transposes and a scale), FusedGemm and FusedConv
//! (Gemm and Conv, then an activation; FusedConv adds its sum input Z first), NhwcConv
//! (Conv with the channels last), QLinearConv (with the channels last or not), and its own
//! versions of Trilu, Range and GatherND. Each runs the default domain's kernel.

use super::super::{Ctx, Kernel, input, one, optional};
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::kernels::common::numeric_like;
use crate::value::{Data, Tensor, Value};
use crate::view::transpose;

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "FusedMatMul" => fused_matmul,
        "FusedGemm" => |ctx, inputs| {
            let alpha = |name: &str| ctx.float(name).map(f64::from);
            let params = [alpha("activation_alpha"), alpha("activation_beta"), alpha("activation_gamma")];
            activated(ctx, default_kernel("Gemm")?(ctx, inputs)?, &params)
        },
        "FusedConv" => fused_conv,
        "NhwcConv" => nhwc_conv,
        "QLinearConv" => qlinear_conv,
        "Trilu" => |ctx, inputs| default_kernel("Trilu")?(ctx, inputs),
        "GatherND" => |ctx, inputs| default_kernel("GatherND")?(ctx, inputs),
        "Range" => range,
        _ => return None,
    };
    Some(k)
}

/// The default domain's kernel of `op`.
fn default_kernel(op: &str) -> Result<Kernel, KernelError> {
    super::super::DEFAULT_DOMAIN
        .iter()
        .find_map(|family| family(op))
        .ok_or_else(|| bad_input!("no kernel of {op} to fuse with"))
}

/// An element-wise activation.
type Activation = Box<dyn Fn(f64) -> f64>;

/// The activation named by the `activation` attribute, with its parameters in order (alpha,
/// beta, gamma; `None` for one not given, which takes onnx's default).
fn activation(ctx: &Ctx<'_>, params: &[Option<f64>]) -> Result<Option<Activation>, KernelError> {
    let Some(name) = ctx.string("activation") else { return Ok(None) };
    let p = |i: usize, default: f64| params.get(i).copied().flatten().unwrap_or(default);
    let f: Activation = match name {
        "Relu" => Box::new(|x: f64| x.max(0.0)),
        "Tanh" => Box::new(f64::tanh),
        "Sigmoid" => Box::new(|x: f64| 1.0 / (1.0 + (-x).exp())),
        "LeakyRelu" => {
            let alpha = p(0, 0.01);
            Box::new(move |x| if x >= 0.0 { x } else { alpha * x })
        }
        "Clip" => {
            let (lo, hi) = (p(0, f64::NEG_INFINITY), p(1, f64::INFINITY));
            Box::new(move |x| x.max(lo).min(hi))
        }
        "HardSigmoid" => {
            let (alpha, beta) = (p(0, 0.2), p(1, 0.5));
            Box::new(move |x| (alpha * x + beta).clamp(0.0, 1.0))
        }
        "Elu" => {
            let alpha = p(0, 1.0);
            Box::new(move |x| if x >= 0.0 { x } else { alpha * (x.exp() - 1.0) })
        }
        "Selu" => {
            let (alpha, gamma) = (p(0, 1.673_263_192_176_818_8), p(2, 1.050_701_022_148_132_3));
            Box::new(move |x| gamma * if x > 0.0 { x } else { alpha * (x.exp() - 1.0) })
        }
        "ThresholdedRelu" => {
            let alpha = p(0, 1.0);
            Box::new(move |x| if x > alpha { x } else { 0.0 })
        }
        "Softplus" => Box::new(|x: f64| if x > 0.0 { x + (-x).exp().ln_1p() } else { x.exp().ln_1p() }),
        "Softsign" => Box::new(|x: f64| x / (1.0 + x.abs())),
        "ScaledTanh" => {
            let (alpha, beta) = (p(0, 1.0), p(1, 1.0));
            Box::new(move |x| alpha * (beta * x).tanh())
        }
        "ParametricSoftplus" => {
            let (alpha, beta) = (p(0, 1.0), p(1, 1.0));
            Box::new(move |x| {
                let z = beta * x;
                alpha * if z > 0.0 { z + (-z).exp().ln_1p() } else { z.exp().ln_1p() }
            })
        }
        other => return Err(bad_attribute!("activation '{other}' is not one onnxruntime fuses")),
    };
    Ok(Some(f))
}

/// The node's activation applied to the one tensor of `out`.
fn activated(ctx: &Ctx<'_>, mut out: Vec<Value>, params: &[Option<f64>]) -> Result<Vec<Value>, KernelError> {
    let Some(f) = activation(ctx, params)? else { return Ok(out) };
    let Some(Value::Tensor(t)) = out.pop() else { return Err(bad_input!("the fused operator gave no tensor")) };
    let values = t.to_f64s()?.into_iter().map(f).collect();
    one(numeric_like(t.data_type(), t.shape.clone(), values)?)
}

/// FusedConv: Conv, plus Z (of the result's shape) when given, then the activation, whose
/// parameters are `activation_params`.
fn fused_conv(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let mut out = default_kernel("Conv")?(ctx, &inputs[..inputs.len().min(3)])?;
    if let Some(z) = optional(inputs, 3)? {
        let Some(Value::Tensor(y)) = out.pop() else { return Err(bad_input!("the convolution gave no tensor")) };
        if z.shape != y.shape {
            return Err(bad_input!("Z has shape {:?}; the convolution's result {:?}", z.shape, y.shape));
        }
        let sum = y.to_f64s()?.into_iter().zip(z.to_f64s()?).map(|(a, b)| a + b).collect();
        out = vec![Value::Tensor(numeric_like(y.data_type(), y.shape.clone(), sum)?)];
    }
    let params: Vec<Option<f64>> =
        ctx.floats("activation_params").unwrap_or_default().iter().map(|&p| Some(f64::from(p))).collect();
    activated(ctx, out, &params)
}

/// The permutations that move a tensor's channels (its last axis) to position 1, and back
/// to the end, for rank `rank` (3 or more).
fn channel_moves(rank: usize) -> (Vec<usize>, Vec<usize>) {
    let first = [0, rank - 1].into_iter().chain(1..rank - 1).collect();
    let last = [0].into_iter().chain(2..rank).chain([1]).collect();
    (first, last)
}

/// NhwcConv (onnxruntime's channels-last Conv, CUDA only there): X `[N, spatial…, C]` and
/// the weights `[M, k…, C/group]` read channels first, Conv, and its result `[N, M, o…]`
/// given back channels last, `[N, o…, M]`.
fn nhwc_conv(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, w) = (input(inputs, 0)?, input(inputs, 1)?);
    let rank = x.rank();
    if rank < 3 || w.rank() != rank {
        return Err(bad_input!(
            "NhwcConv takes X [N, spatial…, C] and weights [M, k…, C/group] of one rank, 3 or more; got {:?} and {:?}",
            x.shape,
            w.shape
        ));
    }
    let (first, last) = channel_moves(rank);
    // Kernels read row-major tensors (views are copied before a kernel is called).
    let moved = |t: &Tensor| Value::Tensor(transpose(t, &first).contiguous().into_owned());
    let (x, w) = (moved(x), moved(w));
    let mut channels_first = vec![Some(&x), Some(&w)];
    channels_first.extend(inputs.get(2).copied());
    let mut out = default_kernel("Conv")?(ctx, &channels_first)?;
    let Some(Value::Tensor(y)) = out.pop() else { return Err(bad_input!("the convolution gave no tensor")) };
    one(transpose(&y, &last).contiguous().into_owned())
}

/// com.microsoft QLinearConv (what onnxruntime's layout optimizer makes of ai.onnx's, and
/// writes into a model it saves at its highest level): ai.onnx's QLinearConv, or with
/// `channels_last` X and Y `[N, spatial…, C]` around it (the weights stay
/// `[M, C/group, k…]`; measured against onnxruntime's ai.onnx kernel on the transposed
/// input: equal).
fn qlinear_conv(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let conv = default_kernel("QLinearConv")?;
    if ctx.int("channels_last").unwrap_or(0) == 0 {
        return conv(ctx, inputs);
    }
    let x = input(inputs, 0)?;
    let rank = x.rank();
    if rank < 3 {
        return Err(bad_input!("X of shape {:?} is not [N, spatial…, C]", x.shape));
    }
    let (first, last) = channel_moves(rank);
    let x = Value::Tensor(transpose(x, &first).contiguous().into_owned());
    let mut channels_first = inputs.to_vec();
    channels_first[0] = Some(&x);
    let mut out = conv(ctx, &channels_first)?;
    let Some(Value::Tensor(y)) = out.pop() else { return Err(bad_input!("the convolution gave no tensor")) };
    one(transpose(&y, &last).contiguous().into_owned())
}

/// The axes of an operand as the product reads them: `transBatch` moves the first axis of
/// a tensor of rank 3 or more to just before the last, then `trans` swaps the last two.
fn order(rank: usize, trans: bool, trans_batch: bool) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..rank).collect();
    if trans_batch && rank >= 3 {
        let first = perm.remove(0);
        perm.insert(rank - 2, first);
    }
    if trans && rank >= 2 {
        perm.swap(rank - 2, rank - 1);
    }
    perm
}

/// FusedMatMul: `alpha ·` numpy's matmul of A and B, each with its axes reordered
/// ([`order`]) first; the product is the GEMM of `kernels::matmul`.
fn fused_matmul(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (a, b) = (input(inputs, 0)?, input(inputs, 1)?);
    let flag = |name: &str| ctx.int(name).unwrap_or(0) != 0;
    // onnxruntime moves batch axes only between operands of one rank, 3 or more.
    if (flag("transBatchA") || flag("transBatchB")) && (a.rank() != b.rank() || a.rank() < 3) {
        return Err(bad_input!(
            "transBatchA and transBatchB need operands of one rank, 3 or more; got shapes {:?} and {:?}",
            a.shape,
            b.shape
        ));
    }
    let pa = order(a.rank(), flag("transA"), flag("transBatchA"));
    let pb = order(b.rank(), flag("transB"), flag("transBatchB"));
    let shape_of = |t: &Tensor, p: &[usize]| p.iter().map(|&i| t.shape[i]).collect::<Vec<_>>();
    let (ash, bsh) = (shape_of(a, &pa), shape_of(b, &pb));
    let alpha = ctx.float("alpha").unwrap_or(1.0);
    ctx.check_grown(product_len(&ash, &bsh)?, a.len().max(b.len()))?;
    if let (Data::F32(x), Data::F32(y)) = (&*a.data, &*b.data) {
        let (x, y) = (crate::broadcast::permute(x, &a.shape, &pa), crate::broadcast::permute(y, &b.shape, &pb));
        let (shape, mut out) = crate::kernels::matmul::matmul_f32(&x, &ash, &y, &bsh)?;
        if alpha != 1.0 {
            out.iter_mut().for_each(|v| *v *= alpha);
        }
        return one(Tensor::new(shape, Data::F32(out.into())));
    }
    let x = crate::broadcast::permute(&a.to_f64s()?, &a.shape, &pa);
    let y = crate::broadcast::permute(&b.to_f64s()?, &b.shape, &pb);
    let (shape, mut out) = crate::kernels::matmul::matmul(&x, &ash, &y, &bsh)?;
    out.iter_mut().for_each(|v| *v *= f64::from(alpha));
    one(numeric_like(a.data_type(), shape, out)?)
}

/// How many elements the product of operands of these shapes holds (numpy's matmul: a
/// vector operand counts as a row on the left, a column on the right).
fn product_len(a: &[usize], b: &[usize]) -> Result<usize, KernelError> {
    let (Some(_), Some(&n)) = (a.last(), b.last()) else { return Err(bad_input!("FusedMatMul takes no scalars")) };
    let m = if a.len() > 1 { a[a.len() - 2] } else { 1 };
    let n = if b.len() > 1 { n } else { 1 };
    let batch = crate::broadcast::shape(&[&a[..a.len().saturating_sub(2)], &b[..b.len().saturating_sub(2)]])?;
    super::super::count(&[super::super::count(&batch)?, m, n])
}

/// Range with its `delta` optional (1 when omitted).
fn range(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let range = default_kernel("Range")?;
    if optional(inputs, 2)?.is_some() {
        return range(ctx, inputs);
    }
    let start = input(inputs, 0)?;
    let delta = Value::Tensor(numeric_like(start.data_type(), vec![], vec![1.0])?);
    range(ctx, &[inputs[0], inputs.get(1).copied().flatten(), Some(&delta)])
}
