//! Matrix products: MatMul (numpy semantics: batched, broadcast batch axes, 1-D operands
//! promoted), Gemm, MatMulInteger. The first version: a plain i-k-j loop accumulating in
//! f64; a GEMM crate replaces it in the speed pass (issue 24, "Speed").

use super::{Ctx, Kernel, count, input, one, optional};
use crate::broadcast;
use crate::kernels::elementwise::numeric_like;
use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "MatMul" => |_, i| {
            let (a, b) = (input(i, 0)?, input(i, 1)?);
            let (shape, out) = matmul(&a.to_f64s()?, &a.shape, &b.to_f64s()?, &b.shape)?;
            one(numeric_like(a.data_type(), shape, out)?)
        },
        "MatMulInteger" => |_, i| {
            let (a, b) = (input(i, 0)?, input(i, 1)?);
            let za = zero_point(optional(i, 2)?)?;
            let zb = zero_point(optional(i, 3)?)?;
            let av: Vec<f64> = a.to_f64s()?.into_iter().map(|x| x - za).collect();
            let bv: Vec<f64> = b.to_f64s()?.into_iter().map(|x| x - zb).collect();
            let (shape, out) = matmul(&av, &a.shape, &bv, &b.shape)?;
            one(Tensor::new(shape, Data::I32(out.into_iter().map(|x| x as i32).collect())))
        },
        "Gemm" => gemm,
        _ => return None,
    };
    Some(k)
}

/// A scalar zero point (per-tensor); per-axis zero points are not read yet.
fn zero_point(t: Option<&Tensor>) -> Result<f64, String> {
    match t {
        None => Ok(0.0),
        Some(t) if t.len() == 1 => Ok(t.to_f64s()?[0]),
        Some(_) => Err("per-axis zero points are not supported yet".into()),
    }
}

/// `a × b` with numpy's matmul rules, in f64.
pub fn matmul(a: &[f64], ash: &[usize], b: &[f64], bsh: &[usize]) -> Result<(Vec<usize>, Vec<f64>), String> {
    if ash.is_empty() || bsh.is_empty() {
        return Err("MatMul operands must have at least one axis".into());
    }
    // 1-D operands: a row vector on the left, a column vector on the right.
    let a_shape: Vec<usize> = if ash.len() == 1 { vec![1, ash[0]] } else { ash.to_vec() };
    let b_shape: Vec<usize> = if bsh.len() == 1 { vec![bsh[0], 1] } else { bsh.to_vec() };
    let (m, k) = (a_shape[a_shape.len() - 2], a_shape[a_shape.len() - 1]);
    let (k2, n) = (b_shape[b_shape.len() - 2], b_shape[b_shape.len() - 1]);
    if k != k2 {
        return Err(format!("shapes {ash:?} and {bsh:?} do not multiply ({k} ≠ {k2})"));
    }
    let a_batch = &a_shape[..a_shape.len() - 2];
    let b_batch = &b_shape[..b_shape.len() - 2];
    let batch = broadcast::shape(&[a_batch, b_batch])?;
    let batches = count(&batch)?;
    let ia: Vec<usize> = broadcast::offsets(&batch, &broadcast::input_strides(a_batch, &batch)).collect();
    let ib: Vec<usize> = broadcast::offsets(&batch, &broadcast::input_strides(b_batch, &batch)).collect();
    let mut out = vec![0.0; batches * m * n];
    for p in 0..batches {
        let (ao, bo, oo) = (ia[p] * m * k, ib[p] * k * n, p * m * n);
        for i in 0..m {
            let row = &mut out[oo + i * n..oo + (i + 1) * n];
            for kk in 0..k {
                let x = a[ao + i * k + kk];
                let b_row = &b[bo + kk * n..bo + (kk + 1) * n];
                for (o, &y) in row.iter_mut().zip(b_row) {
                    *o += x * y;
                }
            }
        }
    }
    let mut shape = batch;
    if ash.len() > 1 {
        shape.push(m);
    }
    if bsh.len() > 1 {
        shape.push(n);
    }
    Ok((shape, out))
}

fn transposed(v: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    let mut out = vec![0.0; v.len()];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = v[r * cols + c];
        }
    }
    out
}

fn gemm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, String> {
    let (a, b) = (input(inputs, 0)?, input(inputs, 1)?);
    if a.rank() != 2 || b.rank() != 2 {
        return Err("Gemm takes matrices".into());
    }
    let (ta, tb) = (ctx.int("transA").unwrap_or(0) != 0, ctx.int("transB").unwrap_or(0) != 0);
    let alpha = f64::from(ctx.float("alpha").unwrap_or(1.0));
    let beta = f64::from(ctx.float("beta").unwrap_or(1.0));
    let (mut av, mut ash) = (a.to_f64s()?, a.shape.clone());
    if ta {
        av = transposed(&av, ash[0], ash[1]);
        ash.reverse();
    }
    let (mut bv, mut bsh) = (b.to_f64s()?, b.shape.clone());
    if tb {
        bv = transposed(&bv, bsh[0], bsh[1]);
        bsh.reverse();
    }
    let (shape, mut out) = matmul(&av, &ash, &bv, &bsh)?;
    for o in &mut out {
        *o *= alpha;
    }
    if let Some(c) = optional(inputs, 2)? {
        let cv = c.to_f64s()?;
        let offsets = broadcast::offsets(&shape, &broadcast::input_strides(&c.shape, &shape));
        if broadcast::shape(&[&c.shape, &shape])? != shape {
            return Err(format!("C of shape {:?} does not broadcast to {shape:?}", c.shape));
        }
        for (o, i) in out.iter_mut().zip(offsets) {
            *o += beta * cv[i];
        }
    }
    one(numeric_like(a.data_type(), shape, out)?)
}
