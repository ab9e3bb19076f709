//! Training losses that the node tests exercise: NegativeLogLikelihoodLoss and
//! SoftmaxCrossEntropyLoss (which is log-softmax then the same loss).

use super::{Ctx, Kernel, count, input, optional};
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::kernels::common::numeric_like;
use crate::value::{Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "NegativeLogLikelihoodLoss" => |ctx, i| {
            let (x, target) = (input(i, 0)?, input(i, 1)?);
            let weight = optional(i, 2)?.map(Tensor::to_f64s).transpose()?;
            let loss = nll(ctx, &x.to_f64s()?, &x.shape, target, weight.as_deref())?;
            Ok(vec![Value::Tensor(numeric_like(x.data_type(), loss.0, loss.1)?)])
        },
        "SoftmaxCrossEntropyLoss" => |ctx, i| {
            let (scores, labels) = (input(i, 0)?, input(i, 1)?);
            let weight = optional(i, 2)?.map(Tensor::to_f64s).transpose()?;
            let shape = &scores.shape;
            if shape.len() < 2 {
                return Err(bad_input!("scores need [N, C, …]"));
            }
            let (n, c, inner) = (shape[0], shape[1], count(&shape[2..])?);
            let mut log_prob = scores.to_f64s()?;
            // Empty scores (no classes, say) may declare any batch: nothing to normalize.
            let n = if log_prob.is_empty() { 0 } else { n };
            for b in 0..n {
                for d in 0..inner {
                    let at = |k: usize| (b * c + k) * inner + d;
                    let max = (0..c).map(|k| log_prob[at(k)]).fold(f64::NEG_INFINITY, f64::max);
                    let sum: f64 = (0..c).map(|k| (log_prob[at(k)] - max).exp()).sum();
                    for k in 0..c {
                        log_prob[at(k)] = log_prob[at(k)] - max - sum.ln();
                    }
                }
            }
            let loss = nll(ctx, &log_prob, shape, labels, weight.as_deref())?;
            let mut out = vec![Value::Tensor(numeric_like(scores.data_type(), loss.0, loss.1)?)];
            if ctx.node.outputs.len() > 1 {
                out.push(Value::Tensor(numeric_like(scores.data_type(), shape.clone(), log_prob)?));
            }
            Ok(out)
        },
        _ => return None,
    };
    Some(k)
}

/// The loss `-x[n, target[n, d], d] · weight[target]`, reduced as `reduction` says (mean
/// divides by the weights of the targets not ignored).
fn nll(
    ctx: &Ctx<'_>,
    x: &[f64],
    shape: &[usize],
    target: &Tensor,
    weight: Option<&[f64]>,
) -> Result<(Vec<usize>, Vec<f64>), KernelError> {
    if shape.len() < 2 {
        return Err(bad_input!("the input needs [N, C, …]"));
    }
    let (n, c, inner) = (shape[0], shape[1], count(&shape[2..])?);
    let targets = target.to_i64s()?;
    let positions = count(&[n, inner])?;
    if targets.len() != positions {
        return Err(bad_input!("{} targets for {positions} positions", targets.len()));
    }
    let ignore = ctx.int("ignore_index");
    let mut loss = Vec::with_capacity(targets.len());
    let mut weights = Vec::with_capacity(targets.len());
    for (p, &t) in targets.iter().enumerate() {
        if Some(t) == ignore {
            loss.push(0.0);
            weights.push(0.0);
            continue;
        }
        let k =
            usize::try_from(t).ok().filter(|&k| k < c).ok_or_else(|| bad_input!("target {t} is not a class of {c}"))?;
        let w = weight.map_or(Ok(1.0), |w| w.get(k).copied().ok_or(bad_input!("fewer weights than classes")))?;
        let (b, d) = (p / inner.max(1), p % inner.max(1));
        loss.push(-x[(b * c + k) * inner + d] * w);
        weights.push(w);
    }
    let mut out_shape = vec![n];
    out_shape.extend_from_slice(&shape[2..]);
    Ok(match ctx.string("reduction").unwrap_or("mean") {
        "none" => (out_shape, loss),
        "sum" => (Vec::new(), vec![loss.iter().sum()]),
        "mean" => {
            let total: f64 = weights.iter().sum();
            (Vec::new(), vec![if total == 0.0 { 0.0 } else { loss.iter().sum::<f64>() / total }])
        }
        other => return Err(bad_attribute!("unknown reduction '{other}'")),
    })
}
