//! A run ends with a clear error, never a panic, an allocation of the size a model asks for,
//! or a run without end: limits on tensor sizes and loop iterations, the cancellation flag,
//! and every node test model fed inputs it does not expect. Also: the same inputs give
//! bit-identical outputs.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use onnx_core::analysis::analyze_text;
use onnx_eval::{Data, ErrorKind, EvalError, Plan, RunOptions, Tensor, Value};

fn model(text: &str) -> onnx_core::ir::Model {
    let analysis = analyze_text(text);
    assert!(!analysis.has_errors(), "{text}\n{:?}", analysis.diagnostics);
    analysis.model
}

fn floats(shape: Vec<usize>) -> Value {
    let n = shape.iter().product();
    Value::Tensor(Tensor::new(shape, Data::F32(vec![1.0; n].into())))
}

#[test]
fn an_expand_to_two_to_the_forty_elements_is_refused_naming_the_node() {
    let m = model(
        r#"<ir_version: 10, opset_import: ["" : 21]>
        main (float[1] x) => (float[?] y) <int64[1] shape = {1099511627776}> {
            y = Expand (x, shape)
        }"#,
    );
    let plan = Plan::new(&m).expect("plannable");
    let error = plan.run(vec![("x".into(), floats(vec![1]))], &RunOptions::default()).expect_err("refused");
    assert!(matches!(&error, EvalError::Node { op, .. } if op == "Expand"), "{error}");
    assert_eq!(error.kind(), Some(ErrorKind::Limit), "{error}");
}

const ENDLESS_LOOP: &str = r#"<ir_version: 10, opset_import: ["" : 21]>
main (float[1] x) => (float[1] y) <int64 trips = {1000000000000}, bool go = {1}> {
    y = Loop (trips, go, x) <body: graph = body (int64 i, bool c, float[1] acc) => (bool c2, float[1] acc2) {
        c2 = Identity (c)
        acc2 = Identity (acc)
    }>
}"#;

#[test]
fn a_loop_of_a_trillion_iterations_is_cancelled_by_the_flag() {
    let m = model(ENDLESS_LOOP);
    let plan = Plan::new(&m).expect("plannable");
    let cancel = Arc::new(AtomicBool::new(false));
    let options = RunOptions {
        cancel: Some(Arc::clone(&cancel)),
        limits: onnx_eval::Limits { max_loop_iterations: u64::MAX, ..Default::default() },
        ..RunOptions::default()
    };
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        cancel.store(true, Ordering::Relaxed);
    });
    let result = plan.run(vec![("x".into(), floats(vec![1]))], &options);
    setter.join().expect("the setter thread");
    assert!(matches!(result, Err(EvalError::Cancelled)), "{result:?}");
}

#[test]
fn a_loop_beyond_the_iteration_limit_ends_with_an_error() {
    let m = model(ENDLESS_LOOP);
    let plan = Plan::new(&m).expect("plannable");
    let options = RunOptions {
        limits: onnx_eval::Limits { max_loop_iterations: 1000, ..Default::default() },
        ..RunOptions::default()
    };
    let error = plan.run(vec![("x".into(), floats(vec![1]))], &options).expect_err("stopped");
    assert!(matches!(&error, EvalError::Node { op, .. } if op == "Loop"), "{error}");
    assert_eq!(error.kind(), Some(ErrorKind::Limit), "{error}");
    // The iteration limit, not the memory budget.
    assert!(error.to_string().contains("more than 1000 iterations"), "{error}");
}

/// Every node test model, fed each test's inputs in reverse order and as empty tensors of
/// rank 1: errors are fine, panics are not.
#[test]
fn wrong_inputs_never_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/node");
    let mut dirs: Vec<_> =
        std::fs::read_dir(&root).expect("node tests").filter_map(Result::ok).map(|e| e.path()).collect();
    dirs.sort();
    let mut runs = 0;
    let mut panics = Vec::new();
    for dir in dirs {
        let Ok(model) = onnx_core::binary::read_model(&dir.join("model.onnx")) else { continue };
        let Ok(plan) = Plan::new(&model) else { continue };
        let names: Vec<String> = plan.inputs().into_iter().map(|(n, _)| n).collect();
        let mut given: Vec<(String, Value)> = Vec::new();
        for (k, name) in names.iter().enumerate() {
            let path = dir.join(format!("test_data_set_0/input_{k}.pb"));
            let Ok(bytes) = onnx_core::binary::read_bytes(&path) else { continue };
            let Ok(t) = onnx_core::binary::decode_tensor(bytes, "input") else { continue };
            let Ok(t) = Tensor::from_ir(&t) else { continue };
            given.push((name.clone(), Value::Tensor(t)));
        }
        let values: Vec<Value> = given.iter().map(|(_, v)| v.clone()).collect();
        let reversed: Vec<(String, Value)> = names.iter().cloned().zip(values.into_iter().rev()).collect();
        let empty: Vec<(String, Value)> = names.iter().map(|n| (n.clone(), floats(vec![0]))).collect();
        for inputs in [reversed, empty] {
            let name = dir.display().to_string();
            if std::panic::catch_unwind(|| plan.run(inputs, &RunOptions::default())).is_err() {
                panics.push(name);
            }
            runs += 1;
        }
    }
    assert!(panics.is_empty(), "the evaluator panicked on {} run(s): {panics:#?}", panics.len());
    assert!(runs > 2000, "only {runs} runs");
}

#[test]
fn the_same_inputs_give_bit_identical_outputs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let model =
        onnx_core::binary::read_model(&root.join("tests/corpus/real/pt_ts_romanizer_encoder.onnx")).expect("model");
    let plan = Plan::new(&model).expect("plannable");
    let data = root.join("tests/fixtures/run/pt_ts_romanizer_encoder");
    let inputs: Vec<(String, Value)> = (0..2)
        .map(|k| {
            let bytes = onnx_core::binary::read_bytes(&data.join(format!("input_{k}.pb"))).expect("input");
            let t = onnx_core::binary::decode_tensor(bytes, "input").expect("tensor");
            (
                t.name.as_ref().map(ToString::to_string).unwrap_or_default(),
                Value::Tensor(Tensor::from_ir(&t).expect("readable")),
            )
        })
        .collect();
    let first = plan.run(inputs.clone(), &RunOptions::default()).expect("runs");
    let second = plan.run(inputs, &RunOptions::default()).expect("runs");
    assert_eq!(first.outputs, second.outputs);
}

/// The checker's invalid models and the inference bombs (declared sizes of 10^12 elements),
/// run with a small input for every declared input: errors are fine, panics and huge
/// allocations are not.
#[test]
fn invalid_and_hostile_models_never_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    for dir in ["check/invalid", "bombs"] {
        files.extend(std::fs::read_dir(root.join(dir)).expect("fixtures").filter_map(Result::ok).map(|e| e.path()));
    }
    files.sort();
    let mut panics = Vec::new();
    let mut runs = 0;
    for path in files {
        let model = match path.extension().and_then(|e| e.to_str()) {
            Some("onnx") => match onnx_core::binary::read_model(&path) {
                Ok(m) => m,
                Err(_) => continue,
            },
            Some("onnxtxt") => {
                let text = std::fs::read_to_string(&path).expect("text");
                let analysis = analyze_text(&text);
                if analysis.has_errors() {
                    continue;
                }
                analysis.model
            }
            _ => continue,
        };
        let outcome = std::panic::catch_unwind(|| {
            let Ok(plan) = Plan::new(&model) else { return };
            let inputs = plan.inputs().into_iter().map(|(n, _)| (n, floats(vec![1]))).collect();
            let _ = plan.run(inputs, &RunOptions::default());
        });
        if outcome.is_err() {
            panics.push(path.display().to_string());
        }
        runs += 1;
    }
    assert!(panics.is_empty(), "the evaluator panicked on {panics:#?}");
    assert!(runs > 150, "only {runs} models");
}

/// Kept values: only the chosen ones, or every one up to a byte bound (which says it was
/// reached); progress counts every main-graph node.
#[test]
fn captured_values_are_the_chosen_ones_within_the_byte_bound() {
    let m = model(
        "<ir_version: 10, opset_import: [\"\" : 21]>\n\
         g (float[256] x) => (float[256] y) {\n  a = Relu (x)\n  b = Neg (a)\n  c = Abs (b)\n  y = Sqrt (c)\n}\n",
    );
    let plan = Plan::new(&m).expect("plannable");
    let run = |options: &RunOptions| plan.run(vec![("x".into(), floats(vec![256]))], options).expect("runs");
    let chosen = run(&RunOptions { capture_names: vec!["b".into(), "y".into()], ..RunOptions::default() });
    let names: Vec<&str> = chosen.values.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["b", "y"]);
    // Each value is 1 KiB: a 2.5 KiB bound keeps the first two.
    let bounded = run(&RunOptions { capture_all: true, capture_limit: Some(2560), ..RunOptions::default() });
    assert_eq!(bounded.values.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    assert!(bounded.capture_full);
    assert!(!run(&RunOptions { capture_all: true, ..RunOptions::default() }).capture_full);
    let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    run(&RunOptions { progress: Some(Arc::clone(&done)), ..RunOptions::default() });
    assert_eq!(done.load(Ordering::Relaxed), 4);
}
