//! One memory budget for a whole run (issue 52): values that are each under the per-tensor
//! limit but together too many, a chain of growing Concats, a Loop whose carried sequence
//! or scan output grows each iteration. Each ends with an error naming the node, before the
//! allocation that would pass the budget (which, for real sizes, would abort the process),
//! and a run within the budget is untouched.

use onnx_core::analysis::analyze_text;
use onnx_eval::{Data, ErrorKind, EvalError, Limits, Plan, RunOptions, Tensor, Value};

/// The budget measures from a process-wide count of the bytes values hold: tests run in
/// parallel would count each other's values, so the tests of this file run one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn model(text: &str) -> onnx_core::ir::Model {
    let analysis = analyze_text(text);
    assert!(!analysis.has_errors(), "{text}\n{:?}", analysis.diagnostics);
    analysis.model
}

fn floats(n: usize) -> Value {
    Value::Tensor(Tensor::new(vec![n], Data::F32(vec![1.0; n].into())))
}

fn with_budget(bytes: usize) -> RunOptions {
    RunOptions { limits: Limits { max_memory: bytes, ..Limits::default() }, ..RunOptions::default() }
}

/// Runs `text` on `x` with a budget of `bytes`; the error, or the first output's shape.
fn run(text: &str, x: Value, bytes: usize) -> Result<Vec<usize>, EvalError> {
    let m = model(text);
    let plan = Plan::new(&m).expect("plannable");
    let result = plan.run(vec![("x".into(), x)], &with_budget(bytes))?;
    Ok(result.outputs[0].1.tensor().expect("a tensor").shape.clone())
}

/// Asserts that `error` is a limit passed by a node of one of `ops`: the run's memory budget
/// of `budget` (as the message writes it), not the limit on one tensor's elements.
#[track_caller]
fn over_budget(error: &EvalError, ops: &[&str], budget: &str) {
    assert_eq!(error.kind(), Some(ErrorKind::Limit), "{error}");
    assert!(matches!(error, EvalError::Node { op, .. } if ops.contains(&op.as_str())), "{error}");
    assert!(error.to_string().contains(&format!("memory budget of {budget}")), "{error}");
}

const MIB: usize = 1 << 20;

/// Four Expands of 2^20 floats (4 MiB each), all kept as outputs: each under every
/// per-tensor limit, the four over a budget of 10 MiB.
const FOUR_EXPANDS: &str = r#"<ir_version: 10, opset_import: ["" : 21]>
main (float[1] x) => (float[?] a, float[?] b, float[?] c, float[?] d) <int64[1] n = {1048576}> {
    a = Expand (x, n)
    b = Expand (x, n)
    c = Expand (x, n)
    d = Expand (x, n)
}"#;

#[test]
fn values_each_under_the_tensor_limit_but_together_too_many_are_refused() {
    let _one = one_at_a_time();
    let error = run(FOUR_EXPANDS, floats(1), 10 * MIB).expect_err("refused");
    over_budget(&error, &["Expand"], "10.0 MiB");
    // The first fits; a later one is refused before it is made.
    assert!(matches!(&error, EvalError::Node { node, .. } if node == "#1" || node == "#2"), "{error}");
    assert_eq!(run(FOUR_EXPANDS, floats(1), 64 * MIB).expect("fits"), vec![1 << 20]);
}

/// Each Concat doubles its input: 4 KiB, 8 KiB, … 128 MiB at the fifteenth.
fn doubling_concats(count: usize) -> String {
    let mut body = String::new();
    let mut last = "x".to_owned();
    for k in 0..count {
        body.push_str(&format!("    c{k} = Concat <axis = 0> ({last}, {last})\n"));
        last = format!("c{k}");
    }
    format!("<ir_version: 10, opset_import: [\"\" : 21]>\nmain (float[?] x) => (float[?] {last}) {{\n{body}}}")
}

#[test]
fn a_chain_of_doubling_concats_is_refused_at_the_node_that_passes_the_budget() {
    let _one = one_at_a_time();
    let error = run(&doubling_concats(16), floats(1024), 32 * MIB).expect_err("refused");
    over_budget(&error, &["Concat"], "32.0 MiB");
    assert!(
        matches!(&error, EvalError::Node { node, .. } if node.starts_with("'c1") || node.starts_with("#1")),
        "a late Concat is named: {error}"
    );
    assert_eq!(run(&doubling_concats(8), floats(1024), 32 * MIB).expect("fits"), vec![1024 << 8]);
}

/// A Loop of a million iterations whose carried sequence gains a new 256 KiB tensor each
/// (computed from the iteration number, so no step gives what the one before gave).
const GROWING_SEQUENCE: &str = r#"<ir_version: 10, opset_import: ["" : 21]>
main (float[?] x) => (seq(float) s) <int64 trips = {1000000}, bool go = {1}> {
    empty = SequenceEmpty <dtype = 1> ()
    s = Loop (trips, go, empty) <body: graph = body (int64 i, bool c, seq(float) acc) => (bool c2, seq(float) acc2) {
        c2 = Identity (c)
        step = Cast <to = 1> (i)
        fresh = Add (x, step)
        acc2 = SequenceInsert (acc, fresh)
    }>
}"#;

#[test]
fn a_loop_whose_carried_sequence_grows_stops_at_the_budget_not_after_its_iterations() {
    let _one = one_at_a_time();
    let m = model(GROWING_SEQUENCE);
    let plan = Plan::new(&m).expect("plannable");
    let started = std::time::Instant::now();
    let error = plan.run(vec![("x".into(), floats(1 << 16))], &with_budget(64 * MIB)).expect_err("refused");
    // Named by the body's node that passed it (or the Loop, between iterations).
    over_budget(&error, &["Add", "Loop"], "64.0 MiB");
    // Stopped within a few hundred iterations (256 KiB each), not a million.
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "{:?}", started.elapsed());
}

/// A Loop of a million iterations with a 256 KiB scan output each.
const GROWING_SCAN: &str = r#"<ir_version: 10, opset_import: ["" : 21]>
main (float[?] x) => (float[?, ?] y) <int64 trips = {1000000}, bool go = {1}> {
    y = Loop (trips, go) <body: graph = body (int64 i, bool c) => (bool c2, float[?] out) {
        c2 = Identity (c)
        step = Cast <to = 1> (i)
        out = Add (x, step)
    }>
}"#;

#[test]
fn a_loop_whose_scan_output_grows_stops_at_the_budget_each_iteration() {
    let _one = one_at_a_time();
    let error = run(GROWING_SCAN, floats(1 << 16), 64 * MIB).expect_err("refused");
    over_budget(&error, &["Loop"], "64.0 MiB");
    // Stacking needs the scan outputs once more: refused once half the budget is scanned.
    let error = error.to_string();
    let iterations: usize = error
        .split_whitespace()
        .skip_while(|w| *w != "of")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the iteration count is named: {error}"));
    assert!((100..=256).contains(&iterations), "{error}");
}

#[test]
fn folding_a_huge_constant_allocates_nothing_while_planning() {
    let _one = one_at_a_time();
    // A 10^8-element ConstantOfShape from constants: folding it would make 400 MB while
    // planning; it is left to the run, whose budget then refuses it.
    let m = model(
        r#"<ir_version: 10, opset_import: ["" : 21]>
        main (float[1] x) => (float[?] y) <int64[1] n = {100000000}> {
            big = ConstantOfShape <value = float[1] {1.0}> (n)
            y = Add (big, x)
        }"#,
    );
    let before = onnx_eval::memory::held();
    let plan = Plan::new(&m).expect("plannable");
    assert!(onnx_eval::memory::held() < before + 64 * MIB, "the plan holds no big constant");
    let error = plan.run(vec![("x".into(), floats(1))], &with_budget(64 * MIB)).expect_err("refused");
    over_budget(&error, &["ConstantOfShape"], "64.0 MiB");
}
