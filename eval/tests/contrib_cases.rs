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

/// Zero-sized heads and channels, sizes near `usize`'s end in empty tensors, and attributes
/// that would make a kernel loop or allocate without end: each is a clear error or an empty
/// result, never a panic (found by a review of the new kernels; each panicked or hung before).
#[test]
fn contrib_kernels_survive_degenerate_and_hostile_shapes() {
    let ms = |body: &str, signature: &str| {
        format!("<ir_version: 10, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\ng {signature} {{ {body} }}")
    };
    let empty = |shape: &[usize]| f32s(shape, Vec::new());
    // BiasSplitGelu over no channels.
    let text = ms("y = com.microsoft.BiasSplitGelu (x, b)", "(float[] x, float[] b) => (float[] y)");
    let out = run_text(&text, vec![("x", empty(&[1, 1, 0])), ("b", empty(&[0]))]).expect("an empty result");
    assert_eq!(out[0].tensor().expect("a tensor").shape, [1, 1, 0]);
    // MultiHeadAttention with Q, K and V packed in heads of size 0, and with another head count.
    let text = ms("y = com.microsoft.MultiHeadAttention <num_heads: int = 2> (q)", "(float[] q) => (float[] y)");
    assert!(run_text(&text, vec![("q", empty(&[1, 1, 2, 3, 0]))]).is_ok());
    let e = run_text(&text, vec![("q", f32s(&[1, 1, 4, 3, 1], vec![0.5; 12]))]);
    assert!(e.is_err_and(|e| e.contains("[B, S, 2, 3, H]")));
    // PackedMultiHeadAttention with packed heads of size 0.
    let text = ms(
        "y = com.microsoft.PackedMultiHeadAttention <num_heads: int = 2> (q, , , , t, c)",
        "(float[] q, int32[] t, int32[] c) => (float[] y)",
    );
    let inputs = vec![("q", empty(&[1, 2, 3, 0])), ("t", i32s(&[1, 1], vec![0])), ("c", i32s(&[2], vec![0, 1]))];
    assert!(run_text(&text, inputs).is_ok());
    // RemovePadding of 2^40 positions of no width: refused by the memory budget, not allocated.
    let text = ms(
        "y, t, c, m = com.microsoft.RemovePadding (x, n)",
        "(float[] x, int32[] n) => (float[] y, int32[] t, int32[] c, int32[] m)",
    );
    let e = run_text(&text, vec![("x", empty(&[1, 1 << 40, 0])), ("n", i32s(&[1], vec![0]))]);
    assert!(e.is_err());
    // PackedAttention's cumulative lengths that overflow when subtracted (int64).
    let text = ms(
        "y = com.microsoft.PackedAttention <num_heads: int = 1> (x, w, b, t, c)",
        "(float[] x, float[] w, float[] b, int32[] t, int64[] c) => (float[] y)",
    );
    let inputs = vec![
        ("x", f32s(&[1, 1], vec![1.0])),
        ("w", f32s(&[1, 3], vec![1.0; 3])),
        ("b", f32s(&[3], vec![0.0; 3])),
        ("t", i32s(&[1, 1], vec![0])),
        ("c", Value::Tensor(Tensor::new(vec![3], Data::I64(vec![0, i64::MIN, 1].into())))),
    ];
    assert!(run_text(&text, inputs).is_err());
    // GroupNorm over no channels with a vast group count: an empty result at once.
    let text = ms(
        "y = com.microsoft.GroupNorm <groups: int = 9000000000000000000, activation: int = 0> (x, g, b)",
        "(float[] x, float[] g, float[] b) => (float[] y)",
    );
    let out = run_text(&text, vec![("x", empty(&[1, 4, 4, 0])), ("g", empty(&[0])), ("b", empty(&[0]))]);
    assert_eq!(out.expect("an empty result")[0].tensor().expect("a tensor").shape, [1, 4, 4, 0]);
    // MatMulNBits with blocks that are not whole bytes of values (onnxruntime takes powers of
    // 2 from 16 on).
    let text = ms(
        "y = com.microsoft.MatMulNBits <K: int = 2, N: int = 1, bits: int = 2, block_size: int = 2> (a, q, s)",
        "(float[] a, uint8[] q, float[] s) => (float[] y)",
    );
    let q = Value::Tensor(Tensor::new(vec![0], Data::U8(Vec::new().into())));
    let e = run_text(&text, vec![("a", f32s(&[1, 2], vec![1.0, 2.0])), ("q", q), ("s", f32s(&[1], vec![1.0]))]);
    assert!(e.is_err_and(|e| e.contains("block_size")));
}

/// A skip normalization over an empty hidden axis still gives one mean and one inverse
/// deviation per row (0 and 1/√ε: nothing to normalize), never statistics shorter than
/// their shape (found by a review: both paths made [2, 1] tensors of no values).
#[test]
fn skip_normalization_of_an_empty_hidden_axis_gives_one_statistic_per_row() {
    let text = r#"<ir_version: 10, opset_import: ["" : 17, "com.microsoft" : 1]>
        g (float[] x, float[] s, float[] g) => (float[] y, float[] mean, float[] inv) {
            y, mean, inv = com.microsoft.SkipLayerNormalization <epsilon: float = 0.25> (x, s, g)
        }"#;
    let out =
        run_text(text, vec![("x", f32s(&[2, 0], vec![])), ("s", f32s(&[2, 0], vec![])), ("g", f32s(&[0], vec![]))])
            .expect("runs");
    let stats = |i: usize| {
        let t = out[i].tensor().expect("a tensor");
        (t.shape.clone(), t.to_f64s().expect("floats"))
    };
    assert_eq!(out[0].tensor().expect("a tensor").shape, [2, 0]);
    assert_eq!(stats(1), (vec![2, 1], vec![0.0, 0.0]));
    assert_eq!(stats(2), (vec![2, 1], vec![2.0, 2.0]));
}
