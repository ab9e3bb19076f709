//! Comparing a result with an expected tensor the way onnx's backend tests do: floats within
//! `atol + rtol·|expected|` (NaN equal to NaN), everything else exactly. Used by `onnx run
//! --compare` and by the node tests.

use crate::value::{Map, Tensor, Value};

/// onnx's backend-test tolerances: what its node tests are judged by.
pub const RTOL: f64 = 1e-3;
pub const ATOL: f64 = 1e-7;

/// `onnx run --compare`'s default tolerances, polygraphy's (`--rtol 1e-5 --atol 1e-5`):
/// onnx's absolute 1e-7 fails outputs near 1e-6 that agree to 1e-7 of the output's scale,
/// and its relative 1e-3 lets large values drift far.
pub const RTOL_DEFAULT: f64 = 1e-5;
pub const ATOL_DEFAULT: f64 = 1e-5;

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
        (Value::Map(g), Value::Map(w)) => map_difference(g, w, rtol, atol),
        (Value::Maps(g), Value::Maps(w)) => {
            if g.len() != w.len() {
                return Some(format!("{} maps instead of {}", g.len(), w.len()));
            }
            g.iter()
                .zip(w)
                .enumerate()
                .find_map(|(i, (a, b))| map_difference(a, b, rtol, atol).map(|e| format!("map {i}: {e}")))
        }
        // An empty sequence reads back without its element type.
        (Value::Maps(g), Value::Sequence(w)) if w.is_empty() => {
            (!g.is_empty()).then(|| format!("{} maps instead of none", g.len()))
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

/// How two maps differ: the same keys (in any order: runtimes keep maps sorted or not),
/// and each key's value within tolerance.
fn map_difference(got: &Map, want: &Map, rtol: f64, atol: f64) -> Option<String> {
    let by_key = |m: &Map| -> Vec<usize> {
        let mut order: Vec<usize> = (0..m.len()).collect();
        match (&*m.keys.data, m.keys.to_i64s()) {
            (crate::value::Data::Str(keys), _) => order.sort_by(|&a, &b| keys[a].cmp(&keys[b])),
            (_, Ok(keys)) => order.sort_by_key(|&i| keys[i]),
            _ => {}
        }
        order
    };
    let (g, w) = (by_key(got), by_key(want));
    let keys_of = |m: &Map, order: &[usize]| m.keys.data.pick(order.iter().copied());
    if got.keys.data_type() != want.keys.data_type() || keys_of(got, &g) != keys_of(want, &w) {
        return Some(format!("keys differ: {} instead of {}", got.describe(), want.describe()));
    }
    let values = |m: &Map, order: &[usize]| Tensor::new(vec![order.len()], m.values.data.pick(order.iter().copied()));
    difference(&Value::Tensor(values(got, &g)), &values(want, &w), rtol, atol)
}

/// How `got` differs from `want`; `None` when it does not.
pub fn difference(got: &Value, want: &Tensor, rtol: f64, atol: f64) -> Option<String> {
    let got = match got.tensor() {
        Ok(t) => t,
        Err(e) => return Some(e.to_string()),
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
    let c = compare_floats(&g, &w, rtol, atol);
    let (i, a, b) = c.first?;
    Some(format!(
        "{} of {} values differ (first: value {i} is {a}, expected {b}); largest absolute error {:e}, relative {:e}",
        c.differing,
        w.len(),
        c.largest_absolute,
        c.largest_relative
    ))
}

/// How two lists of numbers compare element by element.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Errors {
    /// Elements outside `atol + rtol·|expected|` (NaN matches NaN).
    pub differing: usize,
    /// The first of them: position, value, expected value.
    pub first: Option<(usize, f64, f64)>,
    pub largest_absolute: f64,
    pub largest_relative: f64,
}

/// Compares `got` with `want` element by element.
pub fn compare_floats(got: &[f64], want: &[f64], rtol: f64, atol: f64) -> Errors {
    let mut e = Errors::default();
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        if a.is_nan() && b.is_nan() || a == b {
            continue;
        }
        let abs = (a - b).abs();
        if abs.is_nan() || abs > atol + rtol * b.abs() {
            e.differing += 1;
            e.first.get_or_insert((i, *a, *b));
        }
        e.largest_absolute = e.largest_absolute.max(abs);
        if *b != 0.0 {
            e.largest_relative = e.largest_relative.max(abs / b.abs());
        }
    }
    e
}

/// Where a run first differs from the intermediate values a directory holds (as
/// `onnx run --all-values` writes them: `values.tsv` maps each file to a value's name).
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// How many of the run's values had a file and were compared.
    pub compared: usize,
    /// The first value, in the order the run made them, that differs: the node that made
    /// it, its name, and how it differs.
    pub first: Option<(onnx_core::ir::NodeId, String, String)>,
}

/// Compares the values a run kept (`RunOptions::capture_all`), in the order they were made,
/// with the files of `dir`, and stops at the first that differs beyond tolerance.
pub fn first_divergence(
    dir: &std::path::Path,
    values: &[crate::run::Captured],
    rtol: f64,
    atol: f64,
) -> Result<Divergence, String> {
    let index = std::fs::read_to_string(dir.join("values.tsv"))
        .map_err(|e| format!("{}: cannot read values.tsv: {e}", dir.display()))?;
    let files: std::collections::HashMap<&str, &str> =
        index.lines().filter_map(|l| l.split_once('\t')).map(|(file, name)| (name, file)).collect();
    let mut compared = 0;
    for c in values {
        let Some(file) = files.get(c.name.as_str()) else { continue };
        let (_, want) = crate::stored::read_value(&dir.join(file), None)?;
        compared += 1;
        if let Some(message) = value_difference(&c.value, &want, rtol, atol) {
            return Ok(Divergence { compared, first: Some((c.node, c.name.clone(), message)) });
        }
    }
    Ok(Divergence { compared, first: None })
}
