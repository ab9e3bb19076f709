//! Comparing a result with an expected tensor the way onnx's backend tests do: floats within
//! `atol + rtol·|expected|` (NaN equal to NaN), everything else exactly. Used by `onnx run
//! --compare` and by the node tests.

use crate::value::{Tensor, Value};

/// onnx's backend-test tolerances.
pub const RTOL: f64 = 1e-3;
pub const ATOL: f64 = 1e-7;

/// How `got` differs from `want` (tensors, sequences of them, optionals); `None` when it
/// does not.
pub fn value_difference(got: &Value, want: &Value, rtol: f64, atol: f64) -> Option<String> {
    match (got, want) {
        (_, Value::Tensor(w)) => difference(got, w, rtol, atol),
        (Value::Sequence(g), Value::Sequence(w)) => {
            if g.len() != w.len() {
                return Some(format!("{} elements instead of {}", g.len(), w.len()));
            }
            g.iter().zip(w).enumerate().find_map(|(i, (a, b))| {
                difference(&Value::Tensor(a.clone()), b, rtol, atol).map(|e| format!("element {i}: {e}"))
            })
        }
        (Value::Optional(g), Value::Optional(w)) => match (g, w) {
            (None, None) => None,
            (Some(a), Some(b)) => value_difference(a, b, rtol, atol),
            _ => Some(format!("{} instead of {}", got.describe(), want.describe())),
        },
        // An optional output compares by its content.
        (Value::Optional(Some(a)), w) => value_difference(a, w, rtol, atol),
        _ => Some(format!("{} instead of {}", got.describe(), want.describe())),
    }
}

/// How `got` differs from `want`; `None` when it does not.
pub fn difference(got: &Value, want: &Tensor, rtol: f64, atol: f64) -> Option<String> {
    let got = match got.tensor() {
        Ok(t) => t,
        Err(e) => return Some(e),
    };
    if got.data_type() != want.data_type() || got.shape != want.shape {
        return Some(format!(
            "{} instead of {}",
            Value::Tensor(got.clone()).describe(),
            Value::Tensor(want.clone()).describe()
        ));
    }
    let float = matches!(want.data_type().name(), "float" | "double" | "float16" | "bfloat16")
        || (crate::coded::is_coded(want.data_type()) && !crate::coded::is_integer(want.data_type()));
    let (Ok(g), Ok(w), true) = (got.to_f64s(), want.to_f64s(), float) else {
        return (got.data != want.data).then(|| "values differ".to_owned());
    };
    let (mut worst_abs, mut worst_rel, mut bad, mut first) = (0f64, 0f64, 0usize, None);
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        if a.is_nan() && b.is_nan() || a == b {
            continue;
        }
        let abs = (a - b).abs();
        if abs.is_nan() || abs > atol + rtol * b.abs() {
            bad += 1;
            first.get_or_insert((i, *a, *b));
        }
        worst_abs = worst_abs.max(abs);
        if *b != 0.0 {
            worst_rel = worst_rel.max(abs / b.abs());
        }
    }
    let (i, a, b) = first?;
    Some(format!(
        "{bad} of {} values differ (first: value {i} is {a}, expected {b}); largest absolute error {worst_abs:e}, relative {worst_rel:e}",
        w.len()
    ))
}
