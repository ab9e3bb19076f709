//! A node that fails says what kind of failure it met (`EvalError::kind`): an input it
//! cannot take, an attribute it refuses, a limit the result would pass, something valid that
//! is not implemented yet. One real node of each kind, then the kind of a node inside a Loop
//! body and inside a model-local function, which the run reports as the failing node's. The
//! message stays what it was: the kind is beside it, not in it.

use onnx_core::analysis::analyze_text;
use onnx_eval::{Data, ErrorKind, EvalError, Plan, RunOptions, Tensor, Value};

fn model(text: &str) -> onnx_core::ir::Model {
    let analysis = analyze_text(text);
    assert!(!analysis.has_errors(), "{text}\n{:?}", analysis.diagnostics);
    analysis.model
}

fn floats(shape: &[usize]) -> Value {
    let n = shape.iter().product();
    Value::Tensor(Tensor::new(shape.to_vec(), Data::F32(vec![1.0; n].into())))
}

fn ints(shape: &[usize], values: Vec<i64>) -> Value {
    Value::Tensor(Tensor::new(shape.to_vec(), Data::I64(values.into())))
}

/// The run's error on `inputs` (by name).
#[track_caller]
fn refusal(text: &str, inputs: Vec<(&str, Value)>) -> EvalError {
    let m = model(text);
    let plan = Plan::new(&m).expect("plannable");
    let inputs = inputs.into_iter().map(|(n, v)| (n.to_owned(), v)).collect();
    plan.run(inputs, &RunOptions::default()).expect_err("refused")
}

/// Asserts that `error` is node `op`'s failure of `kind`.
#[track_caller]
fn failed(error: &EvalError, op: &str, kind: ErrorKind) {
    assert!(matches!(error, EvalError::Node { op: o, .. } if o == op), "not a failure of {op}: {error}");
    assert_eq!(error.kind(), Some(kind), "{error}");
}

#[test]
fn shapes_that_do_not_broadcast_are_a_bad_input() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] a, float[] b) => (float y) { y = Add (a, b) }"#;
    let error = refusal(text, vec![("a", floats(&[2, 3])), ("b", floats(&[4]))]);
    failed(&error, "Add", ErrorKind::BadInput);
    // The message is the one the evaluator always gave.
    assert_eq!(error.to_string(), "node #0 (Add): shapes [2, 3], [4] cannot broadcast (axis 1: 3 and 4)");
}

#[test]
fn an_axis_past_the_rank_is_a_bad_attribute() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] i) => (float y) { y = Gather <axis = 5> (x, i) }"#;
    let error = refusal(text, vec![("x", floats(&[2, 3])), ("i", ints(&[1], vec![0]))]);
    failed(&error, "Gather", ErrorKind::BadAttribute);
}

#[test]
fn an_axis_given_as_an_input_past_the_rank_is_a_bad_input() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] a) => (float y) { y = CumSum (x, a) }"#;
    let error = refusal(text, vec![("x", floats(&[2, 3])), ("a", ints(&[], vec![7]))]);
    failed(&error, "CumSum", ErrorKind::BadInput);
}

#[test]
fn a_result_past_the_element_limit_is_a_limit() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (int64[] n) => (float y) { y = ConstantOfShape (n) }"#;
    let error = refusal(text, vec![("n", ints(&[2], vec![1 << 20, 1 << 20]))]);
    failed(&error, "ConstantOfShape", ErrorKind::Limit);
}

#[test]
fn a_one_dimensional_deform_conv_is_unsupported() {
    // Valid by the standard (any number of spatial axes); the kernel does 2-D images only.
    let text = r#"<ir_version: 10, opset_import: ["" : 22]>
        g (float[] x, float[] w, float[] offset) => (float y) { y = DeformConv (x, w, offset) }"#;
    let inputs = vec![("x", floats(&[1, 1, 4])), ("w", floats(&[1, 1, 2])), ("offset", floats(&[1, 2, 3]))];
    failed(&refusal(text, inputs), "DeformConv", ErrorKind::Unsupported);
}

#[test]
fn a_node_of_a_loop_body_fails_with_its_own_kind() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        main (float[] x, int64[] i) => (float y) <int64 trips = {2}, bool go = {1}> {
            y = Loop (trips, go, x) <body: graph = body (int64[] k, bool[] c, float[] acc) => (bool c2, float acc2) {
                c2 = Identity (c)
                acc2 = Gather <axis = 3> (acc, i)
            }>
        }"#;
    let error = refusal(text, vec![("x", floats(&[2, 3])), ("i", ints(&[1], vec![0]))]);
    failed(&error, "Gather", ErrorKind::BadAttribute);
}

#[test]
fn a_node_of_a_model_local_function_fails_with_its_own_kind() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21, "local" : 1]>
        main (float[] x, float[] z) => (float y) {
            y = local.Plus (x, z)
        }

        <domain: "local", opset_import: ["" : 21]>
        Plus (a, b) => (c) {
            c = Add (a, b)
        }
        "#;
    let error = refusal(text, vec![("x", floats(&[2, 3])), ("z", floats(&[5]))]);
    failed(&error, "Add", ErrorKind::BadInput);
}

#[test]
fn a_run_that_ends_at_no_node_has_no_kind() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] a) => (float y) { y = Identity (a) }"#;
    let error = refusal(text, vec![("b", floats(&[1]))]);
    assert!(matches!(error, EvalError::UnknownInput(_)), "{error}");
    assert_eq!(error.kind(), None);
}

#[test]
fn a_node_of_a_schema_function_body_gives_the_kind_to_the_node_it_expands() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] a, float[] b) => (bool y) { y = GreaterOrEqual (a, b) }"#;
    let m = model(text);
    let options = onnx_eval::PlanOptions { expand_function_bodies: true, ..Default::default() };
    let plan = Plan::with_options(&m, &options).expect("plannable");
    let inputs = vec![("a".to_owned(), floats(&[2, 3])), ("b".to_owned(), floats(&[4]))];
    let error = plan.run(inputs, &RunOptions::default()).expect_err("refused");
    failed(&error, "GreaterOrEqual", ErrorKind::BadInput);
    assert!(error.to_string().contains("in its function body: node"), "{error}");
}

/// A value that does not fit its graph input's declared type is refused before any node
/// runs, naming the input, as onnxruntime does (issue 56, defect 9: wrong test data used to
/// fail in the first Conv with "Conv of input [1, 2048] and weights [24, 1, 3, 3]").
#[test]
fn an_input_that_does_not_fit_its_declaration_is_refused_by_name() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[1,3,N] x, int64[] k) => (float y) { y = Relu (x) }"#;
    let said = |x: Value| refusal(text, vec![("x", x), ("k", ints(&[1], vec![0]))]).to_string();
    assert_eq!(
        said(floats(&[1, 2048])),
        "input 'x': the model declares float[1,3,N], the value given is float[1,2048] (rank 2, not 3)"
    );
    assert_eq!(
        said(floats(&[1, 4, 5])),
        "input 'x': the model declares float[1,3,N], the value given is float[1,4,5] (axis 1 is 4, not 3)"
    );
    let doubles = Value::Tensor(Tensor::new(vec![1, 3, 2], Data::F64(vec![0.0; 6].into())));
    assert_eq!(
        said(doubles),
        "input 'x': the model declares float[1,3,N], the value given is double[1,3,2] (another element type)"
    );
    let error = refusal(text, vec![("x", floats(&[1, 3, 2])), ("k", floats(&[1]))]);
    assert!(matches!(&error, EvalError::InputMismatch { name, .. } if name == "k"), "{error}");
    assert_eq!(error.kind(), None, "no node failed");
    // A symbol takes any size, an unknown rank any rank.
    let m = model(text);
    let plan = Plan::new(&m).expect("plannable");
    let fits = vec![("x".to_owned(), floats(&[1, 3, 7])), ("k".to_owned(), ints(&[2, 2], vec![0; 4]))];
    assert!(plan.run(fits, &RunOptions::default()).is_ok());
}
