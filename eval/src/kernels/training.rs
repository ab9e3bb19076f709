//! The optimizers of `ai.onnx.preview.training`: Adagrad, Momentum and Adam, one update step
//! of every tensor they are given, as their specifications write it. Computed in f64.

use super::{Ctx, Kernel, input};
use crate::error::{KernelError, bad_input};
use crate::kernels::common::numeric_like;
use crate::value::{Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "Adagrad" | "Momentum" | "Adam" => optimizer,
        _ => return None,
    };
    Some(k)
}

fn scalar(t: &Tensor) -> Result<f64, KernelError> {
    t.to_f64s()?.first().copied().ok_or_else(|| bad_input!("expected a scalar"))
}

fn optimizer(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let op = ctx.op();
    let groups = if op == "Adam" { 4 } else { 3 };
    let (rate, step) = (scalar(input(inputs, 0)?)?, scalar(input(inputs, 1)?)?);
    let tensors = inputs
        .len()
        .checked_sub(2)
        .filter(|n| n % groups == 0 && *n > 0)
        .ok_or(bad_input!("inputs do not come in whole groups"))?;
    let n = tensors / groups;
    let attr = |name: &str, default: f64| ctx.float(name).map_or(default, f64::from);
    let norm = attr("norm_coefficient", 0.0);
    let mut updated: Vec<Vec<Value>> = vec![Vec::new(); groups - 1];
    for i in 0..n {
        let x_t = input(inputs, 2 + i)?;
        let x = x_t.to_f64s()?;
        let g = input(inputs, 2 + n + i)?.to_f64s()?;
        let states: Vec<Vec<f64>> =
            (2..groups).map(|k| input(inputs, 2 + k * n + i).and_then(Tensor::to_f64s)).collect::<Result<_, _>>()?;
        if g.len() != x.len() || states.iter().any(|s| s.len() != x.len()) {
            return Err(bad_input!("tensors and their gradients and states differ in size"));
        }
        let regularized: Vec<f64> = x.iter().zip(&g).map(|(x, g)| norm * x + g).collect();
        let (new_x, new_states): (Vec<f64>, Vec<Vec<f64>>) = match op {
            "Adagrad" => {
                let r = rate / (1.0 + step * attr("decay_factor", 0.0));
                let eps = attr("epsilon", 1e-6);
                let h: Vec<f64> = states[0].iter().zip(&regularized).map(|(h, g)| h + g * g).collect();
                let x: Vec<f64> =
                    x.iter().zip(&regularized).zip(&h).map(|((x, g), h)| x - r * g / (h.sqrt() + eps)).collect();
                (x, vec![h])
            }
            "Momentum" => {
                let (alpha, beta) = (attr("alpha", 0.0), attr("beta", 0.0));
                let beta = if step > 0.0 { beta } else { 1.0 };
                let nesterov = ctx.string("mode") == Some("nesterov");
                let v: Vec<f64> = states[0].iter().zip(&regularized).map(|(v, g)| alpha * v + beta * g).collect();
                let x: Vec<f64> = x
                    .iter()
                    .zip(&regularized)
                    .zip(&v)
                    .map(|((x, g), v)| if nesterov { x - rate * (g + alpha * v) } else { x - rate * v })
                    .collect();
                (x, vec![v])
            }
            _ => {
                let (alpha, beta, eps) = (attr("alpha", 0.9), attr("beta", 0.999), attr("epsilon", 1e-6));
                let post = attr("norm_coefficient_post", 0.0);
                let v: Vec<f64> =
                    states[0].iter().zip(&regularized).map(|(v, g)| alpha * v + (1.0 - alpha) * g).collect();
                let h: Vec<f64> =
                    states[1].iter().zip(&regularized).map(|(h, g)| beta * h + (1.0 - beta) * g * g).collect();
                let r =
                    if step > 0.0 { rate * (1.0 - beta.powf(step)).sqrt() / (1.0 - alpha.powf(step)) } else { rate };
                let x: Vec<f64> =
                    x.iter().zip(&v).zip(&h).map(|((x, v), h)| (1.0 - post) * (x - r * v / (h.sqrt() + eps))).collect();
                (x, vec![v, h])
            }
        };
        let dt = x_t.data_type();
        updated[0].push(Value::Tensor(numeric_like(dt, x_t.shape.clone(), new_x)?));
        for (k, s) in new_states.into_iter().enumerate() {
            updated[k + 1].push(Value::Tensor(numeric_like(dt, x_t.shape.clone(), s)?));
        }
    }
    Ok(updated.into_iter().flatten().collect())
}
