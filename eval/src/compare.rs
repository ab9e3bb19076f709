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

/// The value files of a directory `onnx run --all-values` wrote, by value name (its
/// `values.tsv` index: value names are not safe file names).
pub fn value_files(dir: &std::path::Path) -> Result<std::collections::HashMap<String, std::path::PathBuf>, String> {
    let index = std::fs::read_to_string(dir.join("values.tsv"))
        .map_err(|e| format!("{}: cannot read values.tsv: {e}", dir.display()))?;
    Ok(index.lines().filter_map(|l| l.split_once('\t')).map(|(file, name)| (name.to_owned(), dir.join(file))).collect())
}

/// Compares the values a run kept (`RunOptions::capture_all`), in the order they were made,
/// with the files of `dir`, and stops at the first that differs beyond tolerance.
pub fn first_divergence(
    dir: &std::path::Path,
    values: &[crate::run::Captured],
    rtol: f64,
    atol: f64,
) -> Result<Divergence, String> {
    let files = value_files(dir)?;
    let mut compared = 0;
    for c in values {
        let Some(file) = files.get(c.name.as_str()) else { continue };
        let (_, want) = crate::stored::read_value(file, None)?;
        compared += 1;
        if let Some(message) = value_difference(&c.value, &want, rtol, atol) {
            return Ok(Divergence { compared, first: Some((c.node, c.name.clone(), message)) });
        }
    }
    Ok(Divergence { compared, first: None })
}

/// Where two models' runs on the same inputs first part: the first paired value, in the
/// first model's order, that differs beyond tolerance.
#[derive(Debug, Clone, PartialEq)]
pub struct RunsPart {
    /// Paired values compared.
    pub compared: usize,
    /// The most bytes of values held at once, waiting for their partner.
    pub held_at_most: usize,
    /// The index of the first pair that differs, and how.
    pub first: Option<(usize, String)>,
}

/// Values by name, as a run takes its inputs.
pub type NamedValues = [(String, Value)];

/// Values made by one model and not yet met by their partner from the other.
#[derive(Default)]
struct Waiting {
    values: [std::collections::HashMap<usize, Value>; 2],
    bytes: usize,
    held_at_most: usize,
    compared: usize,
    first: Option<(usize, String)>,
    /// Which model's run has ended, and which is waiting for the other to catch up.
    done: [bool; 2],
    paused: [bool; 2],
}

/// Runs `a` and `b` at once on the same inputs and compares the values `pairs` name (first
/// model's name, second model's name) as they are made: a value waits only until its
/// partner comes, then both are dropped, so no run keeps every intermediate (the anchors'
/// way, marking every value an output, runs out of memory on big models). A run ahead of
/// the other by more than `budget` bytes of waiting values pauses until the other catches
/// up (never both: the one behind always goes on, so neither waits forever). The first
/// difference is the lowest pair index that differs, whatever order the two runs met them.
pub fn first_difference_between(
    a: &crate::Plan<'_>,
    b: &crate::Plan<'_>,
    inputs: (&NamedValues, &NamedValues),
    pairs: &[(String, String)],
    budget: usize,
    tolerance: (f64, f64),
    options: &crate::RunOptions,
) -> Result<RunsPart, crate::EvalError> {
    use std::sync::{Arc, Condvar, Mutex};
    let (rtol, atol) = tolerance;
    let index = |side: usize| -> Arc<std::collections::HashMap<Vec<u8>, usize>> {
        let names = pairs.iter().enumerate().map(|(k, (x, y))| (if side == 0 { x } else { y }.as_bytes().to_vec(), k));
        Arc::new(names.collect())
    };
    let state = Arc::new((Mutex::new(Waiting::default()), Condvar::new()));
    let observer = |side: usize| {
        let (state, index) = (Arc::clone(&state), index(side));
        crate::Observer(Arc::new(move |name: &onnx_core::ir::Str, value: &Value| {
            let Some(&k) = index.get(name.as_bytes()) else { return };
            let (lock, wake) = &*state;
            let mut w = lock.lock().unwrap_or_else(|p| p.into_inner());
            let other = 1 - side;
            match w.values[other].remove(&k) {
                Some(partner) => {
                    w.bytes = w.bytes.saturating_sub(partner.byte_size());
                    w.compared += 1;
                    let (got, want) = if side == 1 { (value, &partner) } else { (&partner, value) };
                    let cast = in_type_of(got, want);
                    if let Some(how) = value_difference(cast.as_ref().unwrap_or(got), want, rtol, atol)
                        && w.first.as_ref().is_none_or(|(first, _)| k < *first)
                    {
                        w.first = Some((k, how));
                    }
                    wake.notify_all();
                }
                None => {
                    w.bytes += value.byte_size();
                    w.held_at_most = w.held_at_most.max(w.bytes);
                    w.values[side].insert(k, crate::view::contiguous_value(value.clone()));
                    // Ahead by more than the budget: wait for the other run, unless it is
                    // waiting itself or has ended.
                    while w.bytes > budget && !w.done[other] && !w.paused[other] && !w.values[side].is_empty() {
                        w.paused[side] = true;
                        w = wake.wait(w).unwrap_or_else(|p| p.into_inner());
                        w.paused[side] = false;
                    }
                }
            }
        }))
    };
    let run = |plan: &crate::Plan<'_>, given: &[(String, Value)], side: usize| {
        let mut own = options.clone();
        own.observe = Some(observer(side));
        let result = plan.run(given.to_vec(), &own).map(|_| ());
        let (lock, wake) = &*state;
        lock.lock().unwrap_or_else(|p| p.into_inner()).done[side] = true;
        wake.notify_all();
        result
    };
    let (ran_a, ran_b) = std::thread::scope(|scope| {
        let second = scope.spawn(|| run(b, inputs.1, 1));
        let first = run(a, inputs.0, 0);
        (first, second.join())
    });
    ran_a?;
    match ran_b {
        Ok(result) => result?,
        // A panic on the second model's thread is what it would be on this one.
        Err(panic) => std::panic::resume_unwind(panic),
    }
    let w = state.0.lock().unwrap_or_else(|p| p.into_inner());
    Ok(RunsPart { compared: w.compared, held_at_most: w.held_at_most, first: w.first.clone() })
}

/// `got` cast to `want`'s element type where both are floating-point tensors of different
/// types (a float16 conversion compared with its float32 original, as polygraphy does).
fn in_type_of(got: &Value, want: &Value) -> Option<Value> {
    let (Value::Tensor(g), Value::Tensor(w)) = (got, want) else { return None };
    let float = |dt: onnx_core::ir::DataType| matches!(dt.name(), "float" | "double" | "float16" | "bfloat16");
    let (from, to) = (g.data_type(), w.data_type());
    (from != to && float(from) && float(to)).then(|| crate::cast::cast_to(g, to).ok().map(Value::Tensor)).flatten()
}
