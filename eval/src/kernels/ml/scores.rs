//! What the ai.onnx.ml classifiers and regressors share: the `post_transform` applied to
//! their scores, the rows of their input, and their class labels. Computed in float32, as
//! onnxruntime computes them (it is the runtime these models are made for: skl2onnx and
//! onnxmltools test their exports against it).

use super::super::{Ctx, input};
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::value::{Data, Tensor, Value};

/// The `post_transform` attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PostTransform {
    None,
    Logistic,
    Softmax,
    SoftmaxZero,
    Probit,
}

pub fn post_transform(ctx: &Ctx<'_>) -> Result<PostTransform, KernelError> {
    Ok(match ctx.string("post_transform").unwrap_or("NONE") {
        "NONE" => PostTransform::None,
        "LOGISTIC" => PostTransform::Logistic,
        "SOFTMAX" => PostTransform::Softmax,
        "SOFTMAX_ZERO" => PostTransform::SoftmaxZero,
        "PROBIT" => PostTransform::Probit,
        other => {
            return Err(bad_attribute!(
                "post_transform '{other}' is not NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO or PROBIT"
            ));
        }
    })
}

/// `1 / (1 + e^-x)`, computed from `|x|` so that it never overflows.
pub fn logistic(x: f32) -> f32 {
    let v = 1.0 / (1.0 + (-x.abs()).exp());
    if x < 0.0 { 1.0 - v } else { v }
}

/// The inverse error function by Winitzki's approximation (a = 0.147), the one onnxruntime
/// uses for PROBIT.
fn erf_inv(x: f32) -> f32 {
    let sign = if x < 0.0 { -1.0 } else { 1.0 };
    let ln = ((1.0 - x) * (1.0 + x)).ln();
    let v = 2.0 / (std::f32::consts::PI * 0.147) + 0.5 * ln;
    let v2 = (1.0 / 0.147) * ln;
    sign * (-v + (v * v - v2).sqrt()).sqrt()
}

/// The probit of a probability: `√2 · erfinv(2p − 1)`.
pub fn probit(p: f32) -> f32 {
    std::f32::consts::SQRT_2 * erf_inv(2.0 * p - 1.0)
}

fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::MIN, f32::max);
    let mut sum = 0.0f32;
    for v in row.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    row.iter_mut().for_each(|v| *v /= sum);
}

/// Softmax that leaves zeros (|v| ≤ 1e-7) out of the sum: they stay near zero.
fn softmax_zero(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::MIN, f32::max);
    let scale = (-max).exp();
    let mut sum = 0.0f32;
    for v in row.iter_mut() {
        if *v > 1e-7 || *v < -1e-7 {
            *v = (*v - max).exp();
            sum += *v;
        } else {
            *v *= scale;
        }
    }
    row.iter_mut().for_each(|v| *v /= sum);
}

/// Applies `post` to each row of `columns` scores. One column gets only PROBIT, as in
/// onnxruntime (a single score is not a distribution to normalise).
pub fn transform_rows(scores: &mut [f32], columns: usize, post: PostTransform) {
    if columns == 0 {
        return;
    }
    match post {
        PostTransform::None => {}
        PostTransform::Probit => scores.iter_mut().for_each(|v| *v = probit(*v)),
        _ if columns == 1 => {}
        PostTransform::Logistic => scores.iter_mut().for_each(|v| *v = logistic(*v)),
        PostTransform::Softmax => scores.chunks_mut(columns).for_each(softmax),
        PostTransform::SoftmaxZero => scores.chunks_mut(columns).for_each(softmax_zero),
    }
}

/// How a binary classifier with one score per row shows two columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecondClass {
    /// `[1 − p, p]`, `p` being the score (its logistic under LOGISTIC): the score is a
    /// probability.
    Complement,
    /// `[−s, s]`, or `[σ(−s), σ(s)]` under LOGISTIC: the score is a margin.
    Negated,
}

/// Two columns from one score per row.
pub fn two_columns(scores: &[f32], how: SecondClass, post: PostTransform) -> Vec<f32> {
    scores
        .iter()
        .flat_map(|&s| match (how, post) {
            (_, PostTransform::Probit) => [1.0 - probit(s), probit(s)],
            (SecondClass::Complement, PostTransform::Logistic) => [1.0 - logistic(s), logistic(s)],
            (SecondClass::Complement, _) => [1.0 - s, s],
            (SecondClass::Negated, PostTransform::Logistic) => [logistic(-s), logistic(s)],
            (SecondClass::Negated, _) => [-s, s],
        })
        .collect()
}

/// Input 0 as rows of features in float32: `[N, F]`, a 1-D input being one row.
pub struct Rows {
    pub values: Vec<f32>,
    pub rows: usize,
    pub features: usize,
}

pub fn rows(inputs: &[Option<&Value>]) -> Result<Rows, KernelError> {
    let x = input(inputs, 0)?;
    let (rows, features) = match x.shape[..] {
        [f] => (1, f),
        [n, f] => (n, f),
        _ => return Err(bad_input!("X of shape {:?} is neither 1-D nor 2-D", x.shape)),
    };
    let values = match &*x.data {
        Data::F32(v) => v.to_vec(),
        _ => x.to_f64s()?.into_iter().map(|v| v as f32).collect(),
    };
    Ok(Rows { values, rows, features })
}

/// The class labels: `classlabels_strings` when given, else `classlabels_ints` (or
/// `classlabels_int64s`, the tree ensembles' spelling).
#[derive(Clone, Debug)]
pub enum Labels {
    Ints(Vec<i64>),
    Strings(Vec<Vec<u8>>),
}

impl Labels {
    pub fn of(ctx: &Ctx<'_>) -> Labels {
        match ctx.strings("classlabels_strings") {
            Some(s) if !s.is_empty() => Labels::Strings(s),
            _ => Labels::Ints(
                ctx.ints("classlabels_ints").or_else(|| ctx.ints("classlabels_int64s")).unwrap_or_default().to_vec(),
            ),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Labels::Ints(v) => v.len(),
            Labels::Strings(v) => v.len(),
        }
    }

    /// The labels at `picked` (indices below `len`) as a 1-D tensor.
    pub fn pick(&self, picked: &[usize]) -> Result<Tensor, KernelError> {
        let out_of_range = |i: usize| bad_attribute!("class {i} has no label ({} labels)", self.len());
        let data = match self {
            Labels::Ints(v) => Data::I64(
                picked.iter().map(|&i| v.get(i).copied().ok_or_else(|| out_of_range(i))).collect::<Result<_, _>>()?,
            ),
            Labels::Strings(v) => Data::Str(
                picked.iter().map(|&i| v.get(i).cloned().ok_or_else(|| out_of_range(i))).collect::<Result<_, _>>()?,
            ),
        };
        Ok(Tensor::new(vec![picked.len()], data))
    }

    /// A label the model has no list for: the number itself, or its digits as a string.
    pub fn literal(&self, picked: &[i64]) -> Tensor {
        let data = match self {
            Labels::Ints(_) => Data::I64(picked.to_vec().into()),
            Labels::Strings(_) => Data::Str(picked.iter().map(|i| i.to_string().into_bytes()).collect()),
        };
        Tensor::new(vec![picked.len()], data)
    }
}

/// The index of the first largest value (NaN never wins).
pub fn first_max(values: &[f32]) -> usize {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate() {
        if v > values[best] {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probit_inverts_the_normal_distribution_closely() {
        // Φ(1) = 0.8413447, Φ(-2) = 0.0227501; Winitzki's formula is good to about 2e-3.
        assert!((probit(0.8413447) - 1.0).abs() < 2e-3);
        assert!((probit(0.0227501) + 2.0).abs() < 2e-3);
        assert_eq!(probit(0.5), 0.0);
    }

    #[test]
    fn softmax_zero_leaves_zeros_out() {
        let mut row = [0.0, 1.0, 2.0];
        softmax_zero(&mut row);
        let e = 1.0f32.exp();
        assert_eq!(row[0], 0.0);
        assert!((row[1] - 1.0 / (1.0 + e)).abs() < 1e-6);
        assert!((row[2] - e / (1.0 + e)).abs() < 1e-6);
    }

    #[test]
    fn logistic_is_symmetric_and_saturates_without_overflow() {
        assert!((logistic(2.0) + logistic(-2.0) - 1.0).abs() < 1e-7);
        assert_eq!(logistic(1000.0), 1.0);
        assert_eq!(logistic(-1000.0), 0.0);
    }
}
