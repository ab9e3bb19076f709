//! What a run keeps besides its outputs (`RunOptions::capture_all`): every main-graph value
//! by name, and what each node inside a subgraph last produced, by node, with the time of
//! each such node (what onnx-view shows inside If branches and Loop bodies).

use onnx_core::analysis::analyze_text;
use onnx_eval::{Data, Plan, RunOptions, Tensor, Value};

#[test]
fn nodes_inside_subgraphs_keep_their_last_values_and_times() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (bool cond, float[2] x) => (float[2] y, float[2] z) {
          y = If (cond) <
            then_branch = then_g () => (float[2] t) { t = Neg (x) },
            else_branch = else_g () => (float[2] e) { e = Abs (x) }
          >
          n = Constant <value = int64 {3}> ()
          keep = Constant <value = bool {1}> ()
          z = Loop (n, keep, x) <
            body = body_g (int64 i, bool c, float[2] acc) => (bool c_out, float[2] acc_out) {
              c_out = Identity (c)
              acc_out = Add (acc, x)
            }
          >
        }"#;
    let analysis = analyze_text(text);
    assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
    let model = analysis.model;
    let plan = Plan::new(&model).expect("plannable");
    let x = Value::Tensor(Tensor::new(vec![2], Data::F32(vec![-1.0, 2.0].into())));
    let cond = Value::Tensor(Tensor::new(vec![], Data::Bool(vec![true])));
    let options = RunOptions { capture_all: true, timing: true, ..RunOptions::default() };
    let result = plan.run(vec![("cond".into(), cond), ("x".into(), x)], &options).expect("runs");
    let op = |n: onnx_core::ir::NodeId| model.nodes[n].op_type.as_ref().map(ToString::to_string).unwrap_or_default();
    let kept: Vec<(String, usize, Vec<f64>)> = result
        .nested_values
        .iter()
        .filter_map(|((n, k), v)| Some((op(*n), *k, v.tensor().ok()?.to_f64s().ok()?)))
        .collect();
    // The taken branch only; the loop body's values of its last (third) step.
    assert!(kept.contains(&("Neg".into(), 0, vec![1.0, -2.0])), "{kept:?}");
    assert!(!kept.iter().any(|(o, _, _)| o == "Abs"), "the branch not taken made nothing");
    assert!(kept.contains(&("Add".into(), 0, vec![-4.0, 8.0])), "{kept:?}");
    let timed: Vec<String> = result.nested_timings.iter().map(|(n, _)| op(*n)).collect();
    assert!(timed.contains(&"Neg".into()) && timed.contains(&"Add".into()), "{timed:?}");
    // Without capture_all nothing inside is kept.
    let cond = Value::Tensor(Tensor::new(vec![], Data::Bool(vec![true])));
    let x = Value::Tensor(Tensor::new(vec![2], Data::F32(vec![-1.0, 2.0].into())));
    let plain = plan.run(vec![("cond".into(), cond), ("x".into(), x)], &RunOptions::default()).expect("runs");
    assert!(plain.nested_values.is_empty());
}
