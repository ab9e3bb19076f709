//! Model-local functions run: a call runs the function's body in a value space of its own,
//! with the body's attribute references bound to the call (the caller's attribute, else the
//! function's default), calls inside bodies and control flow inside bodies. The expected
//! values were worked out by hand and agree with onnxruntime on the same model (onnx's
//! ReferenceEvaluator refuses it: its `Constant` does not take an attribute reference).

use onnx_core::analysis::analyze_text;
use onnx_eval::{Data, Plan, RunOptions, Tensor, Value};

fn model(text: &str) -> onnx_core::ir::Model {
    let analysis = analyze_text(text);
    assert!(!analysis.has_errors(), "{text}\n{:?}", analysis.diagnostics);
    analysis.model
}

fn floats(shape: Vec<usize>, values: &[f32]) -> Value {
    Value::Tensor(Tensor::new(shape, Data::F32(values.to_vec().into())))
}

fn output_floats(outputs: &[(String, Value)], name: &str) -> Vec<f32> {
    let (_, value) = outputs.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no output {name}"));
    match value {
        Value::Tensor(t) => match t.data.as_ref() {
            Data::F32(v) => v.to_vec(),
            other => panic!("{name}: not float: {other:?}"),
        },
        other => panic!("{name}: not a tensor: {other:?}"),
    }
}

const CALLS: &str = r#"<ir_version: 10, opset_import: ["" : 21, "local" : 1]>
main (float[2,3] x, float[3] b, bool c) => (float[2,3] tripled, float[2,3] doubled, float[2,3] blocked,
                                            float[2,3] sum, float[2,3] first, float[2,3] chosen, float[1,6] flat) {
    tripled = local.Scale <alpha: float = 3> (x)
    doubled = local.Scale (x)
    blocked = local.Block <gain: float = 0.5> (x)
    sum, first = local.Pair (x, b)
    chosen = local.Choose (c, x)
    flat = local.Flatten2 <axis: int = 0> (x)
}

<domain: "local", opset_import: ["" : 21, "local" : 1]>
Scale <alpha: float = 2> (x) => (y) {
    a = Constant <value_float: float = @alpha> ()
    y = Mul (x, a)
}

<domain: "local", opset_import: ["" : 21, "local" : 1]>
Block <gain> (x) => (y) {
    t = local.Scale <alpha: float = @gain> (x)
    y = Relu (t)
}

<domain: "local", opset_import: ["" : 21, "local" : 1]>
Pair (x, bias) => (sum, first) {
    sum = Add (x, bias)
    first = Identity (x)
}

<domain: "local", opset_import: ["" : 21, "local" : 1]>
Choose (c, x) => (y) {
    y = If (c) <
        then_branch: graph = then () => (float[2,3] kept) {
            kept = Identity (x)
        },
        else_branch: graph = else () => (float[2,3] negated) {
            negated = Neg (x)
        }
    >
}

<domain: "local", opset_import: ["" : 21, "local" : 1]>
Flatten2 <axis> (x) => (y) {
    y = Flatten <axis: int = @axis> (x)
}
"#;

#[test]
fn calls_of_model_local_functions_run_with_their_attributes_bound() {
    let m = model(CALLS);
    let plan = Plan::new(&m).expect("every function body can run");
    let x = [-1.0, 2.0, -3.0, 4.0, -5.0, 6.0];
    let inputs = vec![
        ("x".to_owned(), floats(vec![2, 3], &x)),
        ("b".to_owned(), floats(vec![3], &[1.0, 1.0, 1.0])),
        ("c".to_owned(), Value::Tensor(Tensor::new(vec![], Data::Bool(vec![false])))),
    ];
    let result = plan.run(inputs, &RunOptions::default()).expect("runs");
    let outputs = &result.outputs;
    // The caller's attribute…
    assert_eq!(output_floats(outputs, "tripled"), [-3.0, 6.0, -9.0, 12.0, -15.0, 18.0]);
    // … else the function's default.
    assert_eq!(output_floats(outputs, "doubled"), [-2.0, 4.0, -6.0, 8.0, -10.0, 12.0]);
    // A call inside a body, its attribute a reference to the outer call's.
    assert_eq!(output_floats(outputs, "blocked"), [0.0, 1.0, 0.0, 2.0, 0.0, 3.0]);
    // Several outputs.
    assert_eq!(output_floats(outputs, "sum"), [0.0, 3.0, -2.0, 5.0, -4.0, 7.0]);
    assert_eq!(output_floats(outputs, "first"), x);
    // An If inside a body reads the body's values.
    assert_eq!(output_floats(outputs, "chosen"), [1.0, -2.0, 3.0, -4.0, 5.0, -6.0]);
    // An attribute reference on a kernel's own attribute.
    assert_eq!(output_floats(outputs, "flat"), x);
    let Some((_, Value::Tensor(flat))) = outputs.iter().find(|(n, _)| n == "flat") else { panic!("flat") };
    assert_eq!(flat.shape, [1, 6]);
}

#[test]
fn a_function_that_calls_itself_ends_with_an_error_at_the_depth_limit() {
    let m = model(
        r#"<ir_version: 10, opset_import: ["" : 21, "local" : 1]>
        main (float[2] x) => (float[2] y) {
            y = local.Again (x)
        }

        <domain: "local", opset_import: ["" : 21, "local" : 1]>
        Again (x) => (y) {
            y = local.Again (x)
        }
        "#,
    );
    let plan = Plan::new(&m).expect("plannable");
    let error = plan.run(vec![("x".into(), floats(vec![2], &[1.0, 2.0]))], &RunOptions::default()).expect_err("ends");
    assert_eq!(error.kind(), Some(onnx_eval::ErrorKind::Limit), "{error}");
    // The depth limit of calls, not that of subgraphs or function bodies.
    assert!(error.to_string().contains("function calls nest deeper than"), "{error}");
}

#[test]
fn an_operator_without_kernel_inside_a_called_function_is_reported_before_the_run() {
    let m = model(
        r#"<ir_version: 10, opset_import: ["" : 21, "local" : 1, "elsewhere" : 1]>
        main (float[2] x) => (float[2] y) {
            y = local.Wrap (x)
        }

        <domain: "local", opset_import: ["" : 21, "elsewhere" : 1]>
        Wrap (x) => (y) {
            y = elsewhere.Mystery (x)
        }
        "#,
    );
    let error = Plan::new(&m).expect_err("refused before running");
    assert!(error.to_string().contains("elsewhere::Mystery"), "{error}");
}
