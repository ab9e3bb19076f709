//! Constant folding when a plan is made: nodes whose inputs are all fixed run once, and a
//! run only hands out their values. What must hold: a folded node gives the value it would
//! give when run; an initializer that a graph input may replace is not fixed; random
//! operators (training-mode Dropout) are not folded, and nodes that would keep a much larger
//! tensor only while such tensors stay within a budget (64 MiB). Inside loop bodies, a node
//! whose inputs are the very tensors of the step before gives its held result.

use onnx_core::analysis::analyze_text;
use onnx_eval::plan::Step;
use onnx_eval::{Data, Plan, RunOptions, Tensor, Value};

fn model(text: &str) -> onnx_core::ir::Model {
    let analysis = analyze_text(text);
    assert!(!analysis.has_errors(), "{text}\n{:?}", analysis.diagnostics);
    analysis.model
}

/// Whether the node that writes `output` was folded.
fn folded(plan: &Plan<'_>, output: &str) -> bool {
    let model = plan.model;
    let node = model.graphs[plan.main]
        .nodes
        .iter()
        .copied()
        .find(|&n| model.nodes[n].outputs.iter().any(|o| o.as_bytes() == output.as_bytes()))
        .unwrap_or_else(|| panic!("no node writes {output}"));
    matches!(plan.steps[node], Step::Constant(_))
}

fn floats(outputs: &[(String, Value)], name: &str) -> Vec<f32> {
    match outputs.iter().find(|(n, _)| n == name).map(|(_, v)| v) {
        Some(Value::Tensor(t)) => match t.data.as_ref() {
            Data::F32(v) => v.to_vec(),
            other => panic!("{name}: {other:?}"),
        },
        other => panic!("{name}: {other:?}"),
    }
}

const QUANTIZED: &str = r#"<ir_version: 10, opset_import: ["" : 21]>
main (float[2] x, float[2] b) => (float[2] y, float[2] shifted, float[2] noise, float[256,256] big,
    float[4100,4096] huge)
  <int8[2] wq = {-3, 100}, float scale = {0.5}, int8 zero = {1}, float[2] b = {10, 20},
   float[1,1] w2 = {7}, int64[2] shape = {256, 256}, int64[2] huge_shape = {4100, 4096},
   float ratio = {0.5}, bool training = {1}> {
    w = DequantizeLinear (wq, scale, zero)
    y = Mul (x, w)
    shifted = Add (x, b)
    noise = Dropout (w, ratio, training)
    big = Expand (w2, shape)
    huge = Expand (w2, huge_shape)
}
"#;

#[test]
fn fixed_nodes_are_folded_and_give_their_value() {
    let m = model(QUANTIZED);
    let plan = Plan::new(&m).expect("plan");
    assert!(folded(&plan, "w"), "DequantizeLinear of an initializer is folded");
    assert!(!folded(&plan, "y"), "a node reading a graph input is not");
    assert!(!folded(&plan, "shifted"), "b is a graph input too: its initializer is only a default");
    assert!(!folded(&plan, "noise"), "training-mode Dropout draws a new mask each run: not folded");
    assert!(folded(&plan, "big"), "an Expand to 65,536 values (256 KiB) is kept: within the budget");
    assert!(!folded(&plan, "huge"), "an Expand to 16.8 million values (64 MiB) is beyond the budget");

    let x = Value::Tensor(Tensor::new(vec![2], Data::F32(vec![1.0, 2.0].into())));
    let run = plan.run(vec![("x".into(), x.clone())], &RunOptions::default()).expect("run");
    // (q - zero) * scale: (-3 - 1) * 0.5 = -2, (100 - 1) * 0.5 = 49.5.
    assert_eq!(floats(&run.outputs, "y"), [-2.0, 99.0]);
    assert_eq!(floats(&run.outputs, "shifted"), [11.0, 22.0]);
    assert_eq!(floats(&run.outputs, "big"), vec![7.0; 256 * 256]);
    let huge = floats(&run.outputs, "huge");
    assert!(huge.len() == 4100 * 4096 && huge.iter().all(|&v| v == 7.0));

    // The default replaced: the folding did not bake it in.
    let b = Value::Tensor(Tensor::new(vec![2], Data::F32(vec![100.0, 200.0].into())));
    let run = plan.run(vec![("x".into(), x), ("b".into(), b)], &RunOptions::default()).expect("run");
    assert_eq!(floats(&run.outputs, "shifted"), [101.0, 202.0]);
}

#[test]
fn folded_values_are_captured_like_any_other() {
    let m = model(QUANTIZED);
    let plan = Plan::new(&m).expect("plan");
    let x = Value::Tensor(Tensor::new(vec![2], Data::F32(vec![1.0, 2.0].into())));
    let options = RunOptions { capture_all: true, ..RunOptions::default() };
    let run = plan.run(vec![("x".into(), x)], &options).expect("run");
    let w = run.values.iter().find(|c| c.name == "w").expect("w captured");
    assert_eq!(w.value.describe(), "float[2]");
}

/// Before IR version 4 every initializer is listed among the inputs; onnxruntime takes them
/// as constants (it refuses a value for one), and so do we: folded, and not replaceable.
#[test]
fn initializers_of_ir_3_models_are_constants() {
    let m = model(
        r#"<ir_version: 3, opset_import: ["" : 9]>
main (float[2] x, float[2] b) => (float[2] y, float[2] doubled) <float[2] b = {10, 20}> {
    doubled = Add (b, b)
    y = Add (x, doubled)
}
"#,
    );
    let plan = Plan::new(&m).expect("plan");
    assert!(folded(&plan, "doubled"), "an IR 3 initializer is fixed, so what it alone feeds is folded");
    assert_eq!(plan.inputs().len(), 1, "only x is an input to give: {:?}", plan.inputs());
    let x = Value::Tensor(Tensor::new(vec![2], Data::F32(vec![1.0, 2.0].into())));
    let run = plan.run(vec![("x".into(), x.clone())], &RunOptions::default()).expect("run");
    assert_eq!(floats(&run.outputs, "y"), [21.0, 42.0]);
    let b = Value::Tensor(Tensor::new(vec![2], Data::F32(vec![0.0, 0.0].into())));
    let refused = plan.run(vec![("x".into(), x), ("b".into(), b)], &RunOptions::default());
    assert!(matches!(refused, Err(onnx_eval::EvalError::ConstantInput(ref name)) if name == "b"), "{refused:?}");
}

/// Inside a loop body, a node whose inputs are the same tensors as on the step before
/// (here the Transpose of a weight the Loop carries unchanged) gives its held result, and a
/// node whose inputs change is computed again: the state after three steps is
/// x·(wᵀ)³ + 1·(wᵀ)² + 1·wᵀ + 1, computed as it should be.
#[test]
fn loop_body_nodes_with_unchanged_inputs_give_the_same_results() {
    let m = model(
        r#"<ir_version: 10, opset_import: ["" : 21]>
        main (float[1, 2] x, float[2, 2] w) => (float[1, 2] y, float[2, 2] w_out) <int64 trips = {3}, bool go = {1}> {
            y, w_out = Loop (trips, go, x, w) <body = step (int64 i, bool c, float[1, 2] s, float[2, 2] weights) => (bool c_out, float[1, 2] s_out, float[2, 2] weights_out) {
                c_out = Identity (c)
                wt = Transpose <perm = [1, 0]> (weights)
                product = MatMul (s, wt)
                one = Constant <value = float {1.0}> ()
                s_out = Add (product, one)
                weights_out = Identity (weights)
            }>
        }"#,
    );
    let plan = Plan::new(&m).expect("plannable");
    let x = Value::Tensor(Tensor::new(vec![1, 2], Data::F32(vec![1.0, 2.0].into())));
    let w = Value::Tensor(Tensor::new(vec![2, 2], Data::F32(vec![1.0, 2.0, 3.0, 4.0].into())));
    let result = plan.run(vec![("x".into(), x), ("w".into(), w)], &RunOptions::default()).expect("runs");
    // wᵀ = [[1, 3], [2, 4]]; s ↦ s·wᵀ + 1, three times from [1, 2].
    let mut s = [1.0f32, 2.0];
    for _ in 0..3 {
        s = [s[0] + 2.0 * s[1] + 1.0, 3.0 * s[0] + 4.0 * s[1] + 1.0];
    }
    assert_eq!(floats(&result.outputs, "y"), s);
    assert_eq!(floats(&result.outputs, "w_out"), [1.0, 2.0, 3.0, 4.0]);
}
