//! Linear models and support vector machines of ai.onnx.ml: LinearClassifier,
//! LinearRegressor, SVMClassifier, SVMRegressor. Scores and labels follow onnxruntime,
//! including its binary layouts (see [`super::scores::two_columns`]).

use super::super::{Ctx, count};
use super::scores::{Labels, Rows, SecondClass, first_max, post_transform, rows, transform_rows, two_columns};
use crate::error::{KernelError, bad_attribute};
use crate::value::{Data, Tensor, Value};

fn floats<'a>(ctx: &'a Ctx<'_>, name: &str) -> &'a [f32] {
    ctx.floats(name).unwrap_or_default()
}

/// `X · Wᵀ + b` for `W` of `outputs` rows of `x.features` weights. Extra weights are not
/// read: onnxruntime reads the rows it needs, and real exports (onnxmltools' iris model)
/// carry more than that.
fn affine(x: &Rows, weights: &[f32], bias: impl Fn(usize) -> f32, outputs: usize) -> Result<Vec<f32>, KernelError> {
    if weights.len() < count(&[outputs, x.features])? {
        return Err(bad_attribute!("{} coefficients are not {outputs} rows of {} features", weights.len(), x.features));
    }
    let mut out = Vec::with_capacity(x.rows * outputs);
    for row in x.values.chunks(x.features.max(1)).take(x.rows) {
        for (o, w) in weights.chunks(x.features.max(1)).take(outputs).enumerate() {
            out.push(bias(o) + row.iter().zip(w).map(|(a, b)| a * b).sum::<f32>());
        }
    }
    if x.features == 0 {
        out = (0..x.rows * outputs).map(|i| bias(i % outputs.max(1))).collect();
    }
    Ok(out)
}

fn classified(labels: Tensor, scores: Vec<f32>, rows: usize, columns: usize) -> Result<Vec<Value>, KernelError> {
    Ok(vec![Value::Tensor(labels), Value::Tensor(Tensor::new(vec![rows, columns], Data::F32(scores.into())))])
}

/// LinearClassifier: a score per class (`intercepts` says how many), the label of the
/// largest. One score with two labels is a binary model: label 1 when the score is
/// positive, and the scores shown as `[1 − s, s]`.
pub fn linear_classifier(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = rows(inputs)?;
    let post = post_transform(ctx)?;
    let intercepts = floats(ctx, "intercepts");
    let classes = intercepts.len();
    let mut scores = affine(&x, floats(ctx, "coefficients"), |c| intercepts[c], classes)?;
    let labels = Labels::of(ctx);
    let label = if classes == 1 {
        let positive: Vec<bool> = scores.iter().map(|&s| s > 0.0).collect();
        if labels.len() == 2 {
            labels.pick(&positive.iter().map(|&p| usize::from(p)).collect::<Vec<_>>())?
        } else {
            labels.literal(&positive.iter().map(|&p| i64::from(p)).collect::<Vec<_>>())
        }
    } else {
        labels.pick(&scores.chunks(classes.max(1)).map(first_max).collect::<Vec<_>>())?
    };
    if classes == 1 && labels.len() == 2 {
        return classified(label, two_columns(&scores, SecondClass::Complement, post), x.rows, 2);
    }
    transform_rows(&mut scores, classes, post);
    classified(label, scores, x.rows, classes)
}

/// LinearRegressor: `targets` values per row.
pub fn linear_regressor(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = rows(inputs)?;
    let targets =
        usize::try_from(ctx.int("targets").unwrap_or(1)).map_err(|_| bad_attribute!("targets is negative"))?;
    let intercepts = floats(ctx, "intercepts");
    // Intercepts of another count than the targets are not used (onnxruntime).
    let bias = |t: usize| if intercepts.len() == targets { intercepts[t] } else { 0.0 };
    let mut y = affine(&x, floats(ctx, "coefficients"), bias, targets)?;
    transform_rows(&mut y, targets, post_transform(ctx)?);
    Ok(vec![Value::Tensor(Tensor::new(vec![x.rows, targets], Data::F32(y.into())))])
}

/// An SVM's kernel function of a row and a support vector.
#[derive(Clone, Copy)]
enum KernelFn {
    Linear,
    Poly { gamma: f32, coef0: f32, degree: f32 },
    Rbf { gamma: f32 },
    Sigmoid { gamma: f32, coef0: f32 },
}

impl KernelFn {
    fn of(ctx: &Ctx<'_>) -> Result<KernelFn, KernelError> {
        let params = floats(ctx, "kernel_params");
        let at = |i: usize| params.get(i).copied().unwrap_or(0.0);
        let (gamma, coef0, degree) = (at(0), at(1), at(2));
        Ok(match ctx.string("kernel_type").unwrap_or("LINEAR") {
            "LINEAR" => KernelFn::Linear,
            "POLY" => KernelFn::Poly { gamma, coef0, degree },
            "RBF" => KernelFn::Rbf { gamma },
            "SIGMOID" => KernelFn::Sigmoid { gamma, coef0 },
            other => return Err(bad_attribute!("kernel_type '{other}' is not LINEAR, POLY, RBF or SIGMOID")),
        })
    }

    fn apply(self, x: &[f32], sv: &[f32]) -> f32 {
        let dot = || x.iter().zip(sv).map(|(a, b)| a * b).sum::<f32>();
        match self {
            KernelFn::Linear => dot(),
            KernelFn::Poly { gamma, coef0, degree } => {
                let v = gamma * dot() + coef0;
                match degree {
                    2.0 => v * v,
                    3.0 => v * v * v,
                    d => v.powf(d),
                }
            }
            KernelFn::Rbf { gamma } => {
                let squared: f32 = x.iter().zip(sv).map(|(a, b)| (a - b) * (a - b)).sum();
                (-gamma * squared).exp()
            }
            KernelFn::Sigmoid { gamma, coef0 } => (gamma * dot() + coef0).tanh(),
        }
    }
}

/// The support vectors of an SVM: `count` rows of the input's features.
fn support_vectors<'a>(
    ctx: &Ctx<'_>,
    vectors: &'a [f32],
    count: usize,
    features: usize,
) -> Result<Vec<&'a [f32]>, KernelError> {
    if count == 0 || vectors.len() != count * features {
        return Err(bad_attribute!(
            "{}: {} support vector values are not {count} vectors of {features} features",
            ctx.op(),
            vectors.len()
        ));
    }
    Ok(vectors.chunks(features).collect())
}

/// The probability of class `i` over `j` from a decision value, by Platt's sigmoid.
fn platt(d: f32, a: f32, b: f32) -> f32 {
    (1.0 - super::scores::logistic(d * a + b)).clamp(1e-7, 1.0 - 1e-7)
}

/// Class probabilities from pairwise ones (`r[i][j]`: i over j), by the iterative method
/// of Wu, Lin and Weng that libsvm uses.
fn coupled(r: &[Vec<f32>]) -> Vec<f32> {
    let k = r.len();
    let mut p = vec![1.0 / k as f32; k];
    let mut q = vec![vec![0.0f32; k]; k];
    for i in 0..k {
        for j in 0..k {
            if j == i {
                continue;
            }
            q[i][i] += r[j][i] * r[j][i];
            if j > i {
                q[i][j] = -r[j][i] * r[i][j];
            } else {
                q[i][j] = q[j][i];
            }
        }
    }
    let eps = 0.005 / k as f32;
    let mut qp = vec![0.0f32; k];
    for _ in 0..100 {
        let mut pqp = 0.0f32;
        for i in 0..k {
            qp[i] = (0..k).map(|j| q[i][j] * p[j]).sum();
            pqp += p[i] * qp[i];
        }
        if qp.iter().all(|&v| (v - pqp).abs() < eps) {
            break;
        }
        for i in 0..k {
            let diff = (pqp - qp[i]) / q[i][i];
            p[i] += diff;
            pqp = (pqp + diff * (diff * q[i][i] + 2.0 * qp[i])) / (1.0 + diff) / (1.0 + diff);
            for j in 0..k {
                qp[j] = (qp[j] + diff * q[i][j]) / (1.0 + diff);
                p[j] /= 1.0 + diff;
            }
        }
    }
    p
}

/// SVMClassifier: one-against-one votes over support vectors (or, with no support
/// vectors, a linear score per class), with Platt-scaled probabilities when `prob_a` and
/// `prob_b` are given.
pub fn svm_classifier(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = rows(inputs)?;
    let post = post_transform(ctx)?;
    let labels = Labels::of(ctx);
    let classes = labels.len();
    if classes == 0 {
        return Err(bad_attribute!("SVMClassifier has no class labels"));
    }
    let (coefficients, rho) = (floats(ctx, "coefficients"), floats(ctx, "rho"));
    let (prob_a, prob_b) = (floats(ctx, "prob_a"), floats(ctx, "prob_b"));
    let per_class: Vec<usize> = ctx
        .ints("vectors_per_class")
        .unwrap_or_default()
        .iter()
        .map(|&n| usize::try_from(n).map_err(|_| bad_attribute!("vectors_per_class is negative")))
        .collect::<Result<_, _>>()?;
    let vector_count: usize = per_class.iter().sum();
    let rho_at = |i: usize| rho.get(i).copied().ok_or_else(|| bad_attribute!("rho has no value {i}"));
    if vector_count == 0 {
        // No support vectors: a linear score per class, and only rho[0] added.
        let bias = rho_at(0)?;
        let weights = coefficients;
        let mut scores = affine(&x, weights, |_| bias, classes)?;
        let all_positive = weights.iter().all(|&w| w >= 0.0);
        let picked: Vec<usize> = scores
            .chunks(classes)
            .map(|row| {
                let best = first_max(row);
                let max = row[best];
                match classes {
                    2 if prob_a.is_empty() && all_positive && max >= 0.5 => 1,
                    2 if prob_a.is_empty() && !all_positive && max > 0.0 => 1,
                    _ => best,
                }
            })
            .collect();
        transform_rows(&mut scores, classes, post);
        return classified(labels.pick(&picked)?, scores, x.rows, classes);
    }
    if per_class.len() != classes {
        return Err(bad_attribute!("vectors_per_class has {} counts for {classes} classes", per_class.len()));
    }
    let kernel = KernelFn::of(ctx)?;
    let svs = support_vectors(ctx, floats(ctx, "support_vectors"), vector_count, x.features)?;
    if coefficients.len() != (classes - 1) * vector_count {
        return Err(bad_attribute!(
            "{} coefficients are not {} rows of {vector_count}",
            coefficients.len(),
            classes - 1
        ));
    }
    let starts: Vec<usize> = per_class.iter().scan(0, |at, &n| Some(std::mem::replace(at, *at + n))).collect();
    let pairs = classes * (classes - 1) / 2;
    let probabilities = !prob_a.is_empty() && !prob_b.is_empty();
    if probabilities && (prob_a.len() < pairs || prob_b.len() < pairs) {
        return Err(bad_attribute!("prob_a and prob_b need {pairs} values, one per pair of classes"));
    }
    let columns = if probabilities {
        classes
    } else if classes == 2 {
        2
    } else {
        pairs
    };
    let (mut scores, mut picked) = (Vec::with_capacity(x.rows * columns), Vec::with_capacity(x.rows));
    for row in x.values.chunks(x.features.max(1)).take(x.rows) {
        let k: Vec<f32> = svs.iter().map(|sv| kernel.apply(row, sv)).collect();
        let mut votes = vec![0usize; classes];
        let mut decisions = Vec::with_capacity(pairs);
        let mut pairwise = vec![vec![0.0f32; classes]; classes];
        let mut pair = 0;
        for i in 0..classes {
            for j in i + 1..classes {
                let part = |class: usize, coef_row: usize| -> f64 {
                    let from = starts[class];
                    (from..from + per_class[class])
                        .map(|m| f64::from(coefficients[coef_row * vector_count + m] * k[m]))
                        .sum()
                };
                let d = (part(i, j - 1) + part(j, i) + f64::from(rho_at(pair)?)) as f32;
                votes[if d > 0.0 { i } else { j }] += 1;
                if probabilities {
                    let v = platt(d, prob_a[pair], prob_b[pair]);
                    pairwise[i][j] = v;
                    pairwise[j][i] = 1.0 - v;
                }
                decisions.push(d);
                pair += 1;
            }
        }
        let best = votes.iter().enumerate().fold(0, |best, (c, &v)| if v > votes[best] { c } else { best });
        picked.push(best);
        if probabilities {
            scores.extend(coupled(&pairwise));
        } else if classes == 2 {
            scores.extend(two_columns(&decisions, SecondClass::Negated, post));
        } else {
            scores.extend(decisions);
        }
    }
    if probabilities || classes != 2 {
        transform_rows(&mut scores, columns, post);
    }
    classified(labels.pick(&picked)?, scores, x.rows, columns)
}

/// SVMRegressor: a kernel sum over support vectors (or a linear score without them) plus
/// `rho[0]`; with `one_class`, the sign (1 or −1).
pub fn svm_regressor(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = rows(inputs)?;
    let (coefficients, rho) = (floats(ctx, "coefficients"), floats(ctx, "rho"));
    let bias = rho.first().copied().ok_or(bad_attribute!("SVMRegressor has no rho"))?;
    let supports =
        usize::try_from(ctx.int("n_supports").unwrap_or(0)).map_err(|_| bad_attribute!("n_supports is negative"))?;
    let mut y = if supports == 0 {
        affine(&x, coefficients, |_| bias, 1)?
    } else {
        let kernel = KernelFn::of(ctx)?;
        let svs = support_vectors(ctx, floats(ctx, "support_vectors"), supports, x.features)?;
        if coefficients.len() != supports {
            return Err(bad_attribute!("{} coefficients for {supports} support vectors", coefficients.len()));
        }
        x.values
            .chunks(x.features.max(1))
            .take(x.rows)
            .map(|row| svs.iter().zip(coefficients).map(|(sv, c)| c * kernel.apply(row, sv)).sum::<f32>() + bias)
            .collect()
    };
    if ctx.int("one_class").unwrap_or(0) != 0 {
        y.iter_mut().for_each(|v| *v = if *v > 0.0 { 1.0 } else { -1.0 });
    }
    Ok(vec![Value::Tensor(Tensor::new(vec![x.rows, 1], Data::F32(y.into())))])
}
