//! onnxruntime's contrib operators (`com.microsoft`) against onnxruntime's CPU kernels: the
//! cases of `tests/fixtures/contrib_ops` (written by `gen_contrib_cases.py`) run by the
//! evaluator, floats within rtol 1e-5 and atol 1e-5 (onnxruntime computes its activations
//! with its own float approximations of tanh and erf). Every case must match.

use onnx_eval::{Data, Plan, RunOptions, Tensor, Value};
use onnx_tests::fixture_dir;

mod common;

#[test]
fn contrib_operators_match_onnxruntime() {
    let dirs = common::case_dirs(&fixture_dir("contrib_ops"));
    assert!(dirs.len() >= 2, "only {} cases in tests/fixtures/contrib_ops", dirs.len());
    let mut failed = Vec::new();
    for dir in &dirs {
        if let Err(e) = common::run_case(dir, 1e-5, 1e-5) {
            failed.push(format!("{}: {e}", dir.display()));
        }
    }
    assert!(failed.is_empty(), "{} of {} cases differ:\n{}", failed.len(), dirs.len(), failed.join("\n"));
}

/// A one-node model in onnx's text syntax, run on `inputs` (by name): its outputs, or the
/// run's error.
fn run_text(text: &str, inputs: Vec<(&str, Value)>) -> Result<Vec<Value>, String> {
    let analysis = onnx_core::analysis::analyze_text(text);
    assert!(!analysis.has_errors(), "{text}\n{:?}", analysis.diagnostics);
    let plan = Plan::new(&analysis.model).map_err(|e| e.to_string())?;
    let inputs = inputs.into_iter().map(|(n, v)| (n.to_owned(), v)).collect();
    let result = plan.run(inputs, &RunOptions::default()).map_err(|e| e.to_string())?;
    Ok(result.outputs.into_iter().map(|(_, v)| v).collect())
}

fn f32s(shape: &[usize], v: Vec<f32>) -> Value {
    Value::Tensor(Tensor::new(shape.to_vec(), Data::F32(v.into())))
}

fn i32s(shape: &[usize], v: Vec<i32>) -> Value {
    Value::Tensor(Tensor::new(shape.to_vec(), Data::I32(v.into())))
}

/// BiasAdd has no kernel in onnxruntime's CPU provider (only CUDA's), so no case above:
/// `X + bias + skip`, the bias per channel.
#[test]
fn bias_add_sums_its_three_inputs() {
    let text = r#"<ir_version: 10, opset_import: ["" : 17, "com.microsoft" : 1]>
        g (float[] x, float[] b, float[] s) => (float[] y) { y = com.microsoft.BiasAdd (x, b, s) }"#;
    let x = f32s(&[1, 2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = f32s(&[3], vec![0.5, -1.0, 10.0]);
    let s = f32s(&[1, 2, 3], vec![0.25; 6]);
    let out = run_text(text, vec![("x", x), ("b", b), ("s", s)]).expect("BiasAdd runs");
    let y = out[0].tensor().expect("a tensor");
    assert_eq!(y.shape, [1, 2, 3]);
    assert_eq!(y.to_f64s().expect("floats"), [1.75, 1.25, 13.25, 4.75, 4.25, 16.25]);
}

/// What onnxruntime's kernels refuse, ours refuse too (never an index past a table).
#[test]
fn fused_normalizations_refuse_what_does_not_fit() {
    let skip = r#"<ir_version: 10, opset_import: ["" : 17, "com.microsoft" : 1]>
        g (float[] x, float[] s, float[] g) => (float[] y) { y = com.microsoft.SkipLayerNormalization (x, s, g) }"#;
    let x = || f32s(&[2, 4], vec![1.0; 8]);
    let e = run_text(skip, vec![("x", x()), ("s", f32s(&[2, 3], vec![1.0; 6])), ("g", f32s(&[4], vec![1.0; 4]))]);
    assert!(e.is_err_and(|e| e.contains("skip")));
    let e = run_text(skip, vec![("x", x()), ("s", x()), ("g", f32s(&[3], vec![1.0; 3]))]);
    assert!(e.is_err_and(|e| e.contains("gamma")));
    let embed = r#"<ir_version: 10, opset_import: ["" : 17, "com.microsoft" : 1]>
        g (int32[] ids, float[] w, float[] p, float[] g, float[] b) => (float[] y) {
            y = com.microsoft.EmbedLayerNormalization (ids, "", w, p, "", g, b)
        }"#;
    let run = |ids: Vec<i32>| {
        let inputs = vec![
            ("ids", i32s(&[1, 2], ids)),
            ("w", f32s(&[3, 2], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])),
            ("p", f32s(&[2, 2], vec![0.0; 4])),
            ("g", f32s(&[2], vec![1.0; 2])),
            ("b", f32s(&[2], vec![0.0; 2])),
        ];
        run_text(embed, inputs)
    };
    assert!(run(vec![0, 3]).is_err_and(|e| e.contains("word id 3")));
    assert!(run(vec![0, -1]).is_err_and(|e| e.contains("word id -1")));
    let y = run(vec![2, 0]).expect("in range");
    let y = y[0].tensor().expect("a tensor").to_f64s().expect("floats");
    assert!(y.iter().zip([-1.0, 1.0, -1.0, 1.0]).all(|(a, b)| (a - b).abs() < 1e-6), "{y:?}");
}

/// onnxruntime moves batch axes only between operands of one rank, 3 or more.
#[test]
fn fused_matmul_refuses_batch_transposes_across_ranks() {
    let text = r#"<ir_version: 10, opset_import: ["" : 17, "com.microsoft" : 1]>
        g (float[] a, float[] b) => (float[] y) { y = com.microsoft.FusedMatMul <transBatchA = 1> (a, b) }"#;
    let e = run_text(text, vec![("a", f32s(&[3, 2, 4], vec![1.0; 24])), ("b", f32s(&[4, 5], vec![1.0; 20]))]);
    assert!(e.is_err_and(|e| e.contains("transBatchA")));
    let y = run_text(text, vec![("a", f32s(&[3, 2, 4], vec![1.0; 24])), ("b", f32s(&[2, 4, 5], vec![1.0; 40]))]);
    assert_eq!(
        y.expect("one rank").first().and_then(|v| v.tensor().ok()).map(|t| t.shape.clone()),
        Some(vec![2, 3, 5])
    );
}
