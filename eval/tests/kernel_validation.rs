//! Kernels refuse what the model gets wrong, never panic on it: each test below is a model
//! (or an input) a kernel once indexed past, overflowed on, allocated without bound for, or
//! looped on nearly forever, and now either runs or ends with the evaluator's error naming
//! what is wrong, of the kind of failure it is (a bad input, a bad attribute, a limit
//! passed). Inputs are given at run time, so shapes the checker would question reach the
//! kernels as a fuzzed model's would; empty tensors may declare any other dimensions
//! (`[0, 2^40]`), as the fuzz target's made-up inputs do.

use onnx_core::analysis::analyze_text;
use onnx_eval::ErrorKind::{BadAttribute, BadInput, Limit};
use onnx_eval::{Data, ErrorKind, EvalError, Limits, Plan, RunOptions, Tensor, Value};

const BIG: usize = 1 << 40;

fn model(text: &str) -> onnx_core::ir::Model {
    let analysis = analyze_text(text);
    assert!(!analysis.has_errors(), "{text}\n{:?}", analysis.diagnostics);
    analysis.model
}

/// The model's outputs on `inputs` (by name), or the run's error.
fn run_with(text: &str, inputs: Vec<(&str, Value)>, limits: Limits) -> Result<Vec<Value>, EvalError> {
    let m = model(text);
    let plan = Plan::new(&m).unwrap_or_else(|e| panic!("not plannable: {e}"));
    let inputs = inputs.into_iter().map(|(n, v)| (n.to_owned(), v)).collect();
    let options = RunOptions { limits, ..RunOptions::default() };
    let result = plan.run(inputs, &options)?;
    Ok(result.outputs.into_iter().map(|(_, v)| v).collect())
}

fn run(text: &str, inputs: Vec<(&str, Value)>) -> Result<Vec<Value>, EvalError> {
    run_with(text, inputs, Limits::default())
}

/// The fuzz target's limits: 2^16 elements a tensor.
fn small() -> Limits {
    Limits { max_tensor_elements: 1 << 16, max_loop_iterations: 64, max_depth: 8, max_memory: 64 << 20 }
}

/// Asserts that the run fails at a node with an error of `kind`, whose message names what
/// is wrong with every one of `words` (when several checks of the operator could fail with
/// that kind).
#[track_caller]
fn refused(result: Result<Vec<Value>, EvalError>, kind: ErrorKind, words: &[&str]) {
    match result {
        Ok(v) => {
            panic!("expected {kind:?}, got {:?}", v.iter().map(Value::describe).collect::<Vec<_>>())
        }
        Err(e) => {
            assert_eq!(e.kind(), Some(kind), "{e}");
            let text = e.to_string();
            assert!(words.iter().all(|w| text.contains(w)), "expected {words:?} in: {text}");
        }
    }
}

/// The shape of the only (or first) output, after checking that its data fits it.
#[track_caller]
fn shape_of(result: Result<Vec<Value>, EvalError>) -> Vec<usize> {
    let outputs = result.unwrap_or_else(|e| panic!("expected a result, got: {e}"));
    let t = outputs[0].tensor().expect("a tensor");
    let want = if t.shape.contains(&0) { 0 } else { t.shape.iter().product::<usize>() };
    assert_eq!(t.len(), want, "data of {} elements for shape {:?}", t.len(), t.shape);
    t.shape.clone()
}

fn elements(shape: &[usize]) -> usize {
    if shape.contains(&0) { 0 } else { shape.iter().product() }
}

fn floats(shape: &[usize]) -> Value {
    Value::Tensor(Tensor::new(shape.to_vec(), Data::F32(vec![1.0; elements(shape)].into())))
}

fn doubles(shape: &[usize]) -> Value {
    Value::Tensor(Tensor::new(shape.to_vec(), Data::F64(vec![1.0; elements(shape)].into())))
}

fn f32s(shape: &[usize], v: Vec<f32>) -> Value {
    Value::Tensor(Tensor::new(shape.to_vec(), Data::F32(v.into())))
}

fn i64s(shape: &[usize], v: Vec<i64>) -> Value {
    Value::Tensor(Tensor::new(shape.to_vec(), Data::I64(v.into())))
}

fn scalar_i64(v: i64) -> Value {
    Value::Tensor(Tensor::scalar(Data::I64(vec![v].into())))
}

// Broadcasting and the shared helpers.

#[test]
fn broadcasting_past_the_limit_is_refused() {
    let add = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] a, float[] b) => (float y) { y = Add (a, b) }"#;
    refused(run_with(add, vec![("a", floats(&[256, 1])), ("b", floats(&[1, 512]))], small()), Limit, &[]);
    // The same shapes fit a larger limit; equal shapes past the limit are no new allocation.
    assert_eq!(shape_of(run(add, vec![("a", floats(&[256, 1])), ("b", floats(&[1, 512]))])), [256, 512]);
    assert_eq!(shape_of(run_with(add, vec![("a", floats(&[1 << 17])), ("b", floats(&[1 << 17]))], small())), [1 << 17]);
    let select = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (bool[] c, float[] a, float[] b) => (float y) { y = Where (c, a, b) }"#;
    let c = Value::Tensor(Tensor::new(vec![256, 1, 1], Data::Bool(vec![true; 256])));
    refused(run_with(select, vec![("c", c), ("a", floats(&[1, 256, 1])), ("b", floats(&[256]))], small()), Limit, &[]);
}

#[test]
fn empty_tensors_with_huge_other_dimensions_move_without_overflow() {
    let transpose = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x) => (float y) { y = Transpose (x) }"#;
    assert_eq!(shape_of(run(transpose, vec![("x", floats(&[0, BIG, BIG]))])), [BIG, BIG, 0]);
    let slice = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] s, int64[] e) => (float y) { y = Slice (x, s, e) }"#;
    let inputs = vec![("x", floats(&[0, BIG, BIG])), ("s", i64s(&[1], vec![1])), ("e", i64s(&[1], vec![5]))];
    assert_eq!(shape_of(run(slice, inputs)), [0, BIG, BIG]);
}

// Convolution, pooling, normalization.

#[test]
fn conv_with_a_group_that_overflows_the_channels_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w) => (float y) { y = Conv <group = 1099511627776> (x, w) }"#;
    refused(run(text, vec![("x", floats(&[1, 5, 3])), ("w", floats(&[0, BIG, 1]))]), BadInput, &["groups"]);
}

#[test]
fn conv_with_a_dilation_past_2_63_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w) => (float y) { y = Conv <dilations = [9223372036854775807]> (x, w) }"#;
    refused(run(text, vec![("x", floats(&[1, 1, 4])), ("w", floats(&[1, 1, 4]))]), Limit, &["2^63"]);
    let pooled = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (double[] x) => (double y) { y = MaxPool <kernel_shape = [3], pads = [9223372036854775807, 9223372036854775807]> (x) }"#;
    refused(run(pooled, vec![("x", doubles(&[1, 1, 4]))]), Limit, &["2^63"]);
}

#[test]
fn conv_and_pooling_with_huge_pads_are_refused_by_the_limit() {
    let conv = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w) => (float y) { y = Conv <pads = [1099511627776, 1099511627776]> (x, w) }"#;
    refused(run(conv, vec![("x", floats(&[1, 1, 4])), ("w", floats(&[1, 1, 3]))]), Limit, &[]);
    let pool = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x) => (float y) { y = AveragePool <kernel_shape = [1048576, 1048576], pads = [524288, 524288, 524288, 524288]> (x) }"#;
    refused(run(pool, vec![("x", floats(&[1, 1, 2, 2]))]), Limit, &["window taps"]);
}

#[test]
fn conv_with_a_bias_of_the_wrong_length_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w, float[] b) => (float y) { y = Conv (x, w, b) }"#;
    let inputs = vec![("x", floats(&[1, 1, 4])), ("w", floats(&[2, 1, 3])), ("b", floats(&[1]))];
    refused(run(text, inputs), BadInput, &["B holds 1 values"]);
    let transposed = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w, float[] b) => (float y) { y = ConvTranspose (x, w, b) }"#;
    let inputs = vec![("x", floats(&[1, 1, 4])), ("w", floats(&[1, 2, 3])), ("b", floats(&[3]))];
    refused(run(transposed, inputs), BadInput, &["B holds 3 values"]);
}

#[test]
fn conv_over_an_empty_batch_of_any_size_is_empty() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w) => (float y) { y = Conv <auto_pad = "SAME_UPPER"> (x, w) }"#;
    assert_eq!(shape_of(run(text, vec![("x", floats(&[BIG, 1, 0])), ("w", floats(&[1, 1, 1]))])), [BIG, 1, 0]);
}

#[test]
fn conv_and_pooling_over_padding_of_an_empty_plane_with_huge_axes_run() {
    let conv = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w) => (float y) { y = Conv <strides = [1, 1099511627776, 1099511627776], pads = [1, 0, 0, 1, 0, 0]> (x, w) }"#;
    let inputs = vec![("x", floats(&[1, 1, 0, BIG, BIG])), ("w", floats(&[1, 1, 1, 1, 1]))];
    assert_eq!(shape_of(run(conv, inputs)), [1, 1, 2, 1, 1]);
    let pool = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (double[] x) => (double y) { y = MaxPool <kernel_shape = [1, 1, 1], strides = [1, 1099511627776, 1099511627776], pads = [1, 0, 0, 1, 0, 0]> (x) }"#;
    assert_eq!(shape_of(run(pool, vec![("x", doubles(&[1, 1, 0, BIG, BIG]))])), [1, 1, 2, 1, 1]);
}

#[test]
fn global_pooling_of_an_empty_input_with_huge_planes_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x) => (float y) { y = GlobalAveragePool (x) }"#;
    refused(run(text, vec![("x", floats(&[BIG, BIG, 0]))]), Limit, &[]);
    refused(run(text, vec![("x", floats(&[1 << 20, 1 << 20, 0]))]), Limit, &[]);
}

#[test]
fn layer_normalization_of_an_empty_input_with_many_rows_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] s) => (float y) { y = LayerNormalization (x, s) }"#;
    refused(run(text, vec![("x", floats(&[BIG, 0])), ("s", floats(&[0]))]), Limit, &[]);
}

#[test]
fn layer_and_rms_normalization_of_an_empty_input_with_huge_rows_read_no_scale() {
    for op in ["LayerNormalization", "RMSNormalization"] {
        let text = format!(
            r#"<ir_version: 10, opset_import: ["" : 23]>
            g (float[] x, float[] s) => (float y) {{ y = {op} (x, s) }}"#
        );
        assert_eq!(shape_of(run(&text, vec![("x", floats(&[0, BIG])), ("s", floats(&[1]))])), [0, BIG], "{op}");
    }
}

#[test]
fn group_normalization_of_an_empty_input_with_huge_groups_runs() {
    let text = r#"<ir_version: 10, opset_import: ["" : 18]>
        g (float[] x, float[] s, float[] b) => (float y) { y = GroupNormalization <num_groups = 1> (x, s, b) }"#;
    let inputs = vec![("x", floats(&[0, BIG, BIG])), ("s", floats(&[1])), ("b", floats(&[1]))];
    assert_eq!(shape_of(run(text, inputs)), [0, BIG, BIG]);
}

#[test]
fn normalizations_of_empty_inputs_with_huge_axes_return_at_once() {
    let cases: [(&str, [usize; 4]); 3] = [
        ("LpNormalization <axis = 1>", [BIG, 0, BIG, 1]),
        ("MeanVarianceNormalization", [0, BIG, BIG, BIG]),
        ("LRN <size = 3>", [BIG, BIG, 0, 1]),
    ];
    for (op, shape) in cases {
        let text = format!(
            r#"<ir_version: 10, opset_import: ["" : 21]>
            g (float[] x) => (float y) {{ y = {op} (x) }}"#
        );
        assert_eq!(shape_of(run(&text, vec![("x", floats(&shape))])), shape, "{op}");
    }
}

#[test]
fn conv_transpose_with_a_short_output_shape_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w) => (float y) { y = ConvTranspose <output_shape = [5]> (x, w) }"#;
    refused(
        run(text, vec![("x", floats(&[1, 1, 3, 3])), ("w", floats(&[1, 1, 2, 2]))]),
        BadAttribute,
        &["output_shape"],
    );
}

#[test]
fn conv_transpose_with_overflowing_attributes_is_refused() {
    let strides = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w) => (float y) { y = ConvTranspose <strides = [9223372036854775807]> (x, w) }"#;
    refused(run(strides, vec![("x", floats(&[1, 1, 3])), ("w", floats(&[1, 1, 2]))]), Limit, &[]);
    let negative = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w) => (float y) { y = ConvTranspose <pads = [-9223372036854775807, 0]> (x, w) }"#;
    refused(run(negative, vec![("x", floats(&[1, 1, 3])), ("w", floats(&[1, 1, 2]))]), BadAttribute, &["pads"]);
    let group = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w) => (float y) { y = ConvTranspose <group = 1099511627776> (x, w) }"#;
    refused(run(group, vec![("x", floats(&[1, 0, 3])), ("w", floats(&[0, BIG, 1]))]), Limit, &["filters"]);
}

// Matrix products.

#[test]
fn matrix_products_past_the_limit_are_refused() {
    let matmul = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] a, float[] b) => (float y) { y = MatMul (a, b) }"#;
    refused(run_with(matmul, vec![("a", floats(&[1024, 1])), ("b", floats(&[1, 1024]))], small()), Limit, &[]);
    let gemm = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (double[] a, double[] b) => (double y) { y = Gemm (a, b) }"#;
    refused(run_with(gemm, vec![("a", doubles(&[1024, 1])), ("b", doubles(&[1, 1024]))], small()), Limit, &[]);
}

#[test]
fn an_empty_matrix_product_lists_no_batch_pairs() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] a, float[] b) => (float y) { y = MatMul (a, b) }"#;
    assert_eq!(shape_of(run(text, vec![("a", floats(&[BIG, 0, 3])), ("b", floats(&[3, 5]))])), [BIG, 0, 5]);
}

#[test]
fn gemm_with_a_c_of_higher_rank_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (double[] a, double[] b, double[] c) => (double y) { y = Gemm (a, b, c) }"#;
    let inputs = vec![("a", doubles(&[2, 3])), ("b", doubles(&[3, 4])), ("c", doubles(&[1, 2, 4]))];
    refused(run(text, inputs), BadInput, &["C of shape"]);
}

#[test]
fn gemm_transposing_an_empty_matrix_with_many_rows_returns_at_once() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (double[] a, double[] b) => (double y) { y = Gemm <transA = 1> (a, b) }"#;
    assert_eq!(shape_of(run(text, vec![("a", doubles(&[BIG, 0])), ("b", doubles(&[BIG, 0]))])), [0, 0]);
}

#[test]
fn det_of_empty_matrices_is_one_per_matrix_or_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x) => (float y) { y = Det (x) }"#;
    let ones = run(text, vec![("x", floats(&[3, 0, 0]))]).expect("runs");
    assert_eq!(ones[0].tensor().expect("tensor").data.as_ref(), &Data::F32(vec![1.0; 3].into()));
    refused(run(text, vec![("x", floats(&[BIG, 0, 0]))]), Limit, &[]);
    assert_eq!(shape_of(run(text, vec![("x", floats(&[0, 1 << 33, 1 << 33]))])), [0]);
}

// Recurrent layers.

#[test]
fn recurrent_layers_with_an_overflowing_hidden_size_are_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w, float[] r) => (float y) { y = LSTM <hidden_size = 4611686018427387904> (x, w, r) }"#;
    let inputs = vec![("x", floats(&[1, 1, 1])), ("w", floats(&[1, 4, 1])), ("r", floats(&[1, 4, 1]))];
    refused(run(text, inputs), Limit, &["hidden_size"]);
}

#[test]
fn recurrent_layers_with_a_clip_that_is_not_positive_are_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w, float[] r) => (float y) { y = RNN <hidden_size = 1, clip = -1.0> (x, w, r) }"#;
    let inputs = vec![("x", floats(&[1, 1, 1])), ("w", floats(&[1, 1, 1])), ("r", floats(&[1, 1, 1]))];
    refused(run(text, inputs), BadAttribute, &["clip"]);
}

#[test]
fn recurrent_layers_with_sequence_lens_of_the_wrong_length_are_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w, float[] r, int32[] lens) => (float y) { y = RNN <hidden_size = 1> (x, w, r, "", lens) }"#;
    let lens = Value::Tensor(Tensor::new(vec![3], Data::I32(vec![1, 1, 1].into())));
    let inputs = vec![("x", floats(&[1, 2, 1])), ("w", floats(&[1, 1, 1])), ("r", floats(&[1, 1, 1])), ("lens", lens)];
    refused(run(text, inputs), BadInput, &["sequence_lens"]);
}

#[test]
fn recurrent_layers_without_hidden_units_over_a_huge_batch_return_at_once() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w, float[] r) => (float y) { y = RNN <hidden_size = 0> (x, w, r) }"#;
    let inputs = vec![("x", floats(&[1, BIG, 0])), ("w", floats(&[1, 0, 0])), ("r", floats(&[1, 0, 0]))];
    assert_eq!(shape_of(run(text, inputs)), [1, 1, BIG, 0]);
}

#[test]
fn recurrent_layers_over_an_empty_input_of_huge_batch_are_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w, float[] r) => (float y) { y = LSTM <hidden_size = 2> (x, w, r) }"#;
    let inputs = vec![("x", floats(&[BIG, BIG, 0])), ("w", floats(&[1, 8, 0])), ("r", floats(&[1, 8, 2]))];
    refused(run(text, inputs), Limit, &[]);
    let inputs = vec![("x", floats(&[1, 1 << 20, 0])), ("w", floats(&[1, 8, 0])), ("r", floats(&[1, 8, 2]))];
    refused(run_with(text, inputs, small()), Limit, &[]);
}

// Attention.

#[test]
fn attention_with_a_mask_of_more_than_four_axes_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 23]>
        g (float[] q, float[] k, float[] v, float[] m) => (float y) { y = Attention (q, k, v, m) }"#;
    let inputs = vec![
        ("q", floats(&[1, 1, 2, 4])),
        ("k", floats(&[1, 1, 3, 4])),
        ("v", floats(&[1, 1, 3, 4])),
        ("m", floats(&[1, 1, 1, 2, 3])),
    ];
    refused(run(text, inputs), BadInput, &["attn_mask"]);
    let inputs = vec![
        ("q", floats(&[1, 1, 2, 4])),
        ("k", floats(&[1, 1, 3, 4])),
        ("v", floats(&[1, 1, 3, 4])),
        ("m", floats(&[7, 2, 3])),
    ];
    refused(run(text, inputs), BadInput, &["attn_mask"]);
}

#[test]
fn attention_with_nonpad_lengths_past_the_keys_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 24]>
        g (float[] q, float[] k, float[] v, int64[] n) => (float y) { y = Attention <is_causal = 1> (q, k, v, "", "", "", n) }"#;
    let inputs = vec![
        ("q", floats(&[1, 1, 2, 4])),
        ("k", floats(&[1, 1, 3, 4])),
        ("v", floats(&[1, 1, 3, 4])),
        ("n", i64s(&[1], vec![i64::MIN])),
    ];
    refused(run(text, inputs), BadInput, &["nonpad_kv_seqlen"]);
}

#[test]
fn attention_without_queries_over_huge_keys_returns_at_once() {
    let text = r#"<ir_version: 10, opset_import: ["" : 23]>
        g (float[] q, float[] k, float[] v) => (float y) { y = Attention (q, k, v) }"#;
    let inputs = vec![("q", floats(&[1, 1, 0, 0])), ("k", floats(&[1, 1, BIG, 0])), ("v", floats(&[1, 1, BIG, 0]))];
    assert_eq!(shape_of(run(text, inputs)), [1, 1, 0, 0]);
}

#[test]
fn attention_of_empty_queries_with_huge_heads_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 23]>
        g (float[] q, float[] k, float[] v) => (float y) { y = Attention (q, k, v) }"#;
    let inputs =
        vec![("q", floats(&[1, 1 << 30, 1 << 30, 0])), ("k", floats(&[1, 1, 1, 0])), ("v", floats(&[1, 1, 1, 4]))];
    refused(run(text, inputs), Limit, &[]);
    let flex = r#"<ir_version: 10, opset_import: ["" : 23, "ai.onnx.preview" : 1]>
        g (float[] q, float[] k, float[] v) => (float y) { y = ai.onnx.preview.FlexAttention (q, k, v) }"#;
    let inputs =
        vec![("q", floats(&[1, 1 << 30, 1 << 30, 0])), ("k", floats(&[1, 1, 1, 0])), ("v", floats(&[1, 1, 1, 4]))];
    refused(run(flex, inputs), Limit, &[]);
}

// Einsum, reductions, softmax.

#[test]
fn einsum_with_more_than_208_axes_under_the_ellipsis_runs() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x) => (float y) { y = Einsum <equation = "...->..."> (x) }"#;
    assert_eq!(shape_of(run(text, vec![("x", floats(&[1; 220]))])), vec![1; 220]);
}

#[test]
fn einsum_with_axes_not_named_by_letters_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x) => (float y) { y = Einsum <equation = "0i->i"> (x) }"#;
    refused(run(text, vec![("x", floats(&[2, 2]))]), BadAttribute, &["equation"]);
}

#[test]
fn reductions_of_empty_axes_with_huge_results_are_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] a) => (float y) { y = ReduceSum (x, a) }"#;
    refused(run(text, vec![("x", floats(&[BIG, 0])), ("a", i64s(&[1], vec![1]))]), Limit, &[]);
}

#[test]
fn arg_max_and_softmax_of_empty_inputs_with_huge_rows_return_at_once() {
    let arg = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x) => (int64 y) { y = ArgMax <axis = 1> (x) }"#;
    assert_eq!(shape_of(run(arg, vec![("x", floats(&[BIG, 1, 0]))])), [BIG, 1, 0]);
    let softmax = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x) => (float y) { y = Softmax <axis = 1> (x) }"#;
    assert_eq!(shape_of(run(softmax, vec![("x", floats(&[BIG, 0, 1 << 20]))])), [BIG, 0, 1 << 20]);
}

// Resize.

#[test]
fn resize_antialiasing_with_a_vanishing_scale_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] roi, float[] s) => (float y) { y = Resize <mode = "linear", antialias = 1, coordinate_transformation_mode = "tf_crop_and_resize"> (x, roi, s) }"#;
    let roi = f32s(&[4], vec![0.0, 0.0, 1.0, 1e30]);
    let scales = f32s(&[2], vec![1.0, 1e-30]);
    refused(run(text, vec![("x", floats(&[4, 4])), ("roi", roi), ("s", scales)]), BadInput, &["scale"]);
}

#[test]
fn resize_with_a_scale_that_is_not_a_number_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] s) => (float y) { y = Resize (x, "", s) }"#;
    refused(run(text, vec![("x", floats(&[4, 4])), ("s", f32s(&[2], vec![1.0, f32::NAN]))]), BadInput, &["scale"]);
}

#[test]
fn resize_to_an_empty_result_with_a_huge_axis_returns_at_once() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] s) => (float y) { y = Resize (x, "", s) }"#;
    let out = shape_of(run(text, vec![("x", floats(&[5, 5])), ("s", f32s(&[2], vec![1e12, 1e-9]))]));
    assert_eq!(out[1], 0);
}

// Moving elements.

#[test]
fn concat_of_axes_that_overflow_is_refused_and_of_empty_rows_returns_at_once() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] a, float[] b, float[] c) => (float y) { y = Concat <axis = 1> (a, b, c) }"#;
    let huge = usize::MAX / 2;
    let inputs = vec![("a", floats(&[0, huge])), ("b", floats(&[0, huge])), ("c", floats(&[0, huge]))];
    refused(run(text, inputs), Limit, &[]);
    let inputs = vec![("a", floats(&[BIG, 0])), ("b", floats(&[BIG, 0])), ("c", floats(&[BIG, 0]))];
    assert_eq!(shape_of(run(text, inputs)), [BIG, 0]);
}

#[test]
fn slice_with_a_step_of_minus_2_63_runs() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] s, int64[] e, int64[] a, int64[] p) => (float y) { y = Slice (x, s, e, a, p) }"#;
    let inputs = vec![
        ("x", floats(&[5])),
        ("s", i64s(&[1], vec![4])),
        ("e", i64s(&[1], vec![i64::MIN])),
        ("a", i64s(&[1], vec![0])),
        ("p", i64s(&[1], vec![i64::MIN])),
    ];
    assert_eq!(shape_of(run(text, inputs)), [1]);
}

#[test]
fn gather_past_the_limit_is_refused_and_from_empty_rows_returns_at_once() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] i) => (float y) { y = Gather <axis = 1> (x, i) }"#;
    let inputs = vec![("x", floats(&[256, 2])), ("i", i64s(&[1024], vec![1; 1024]))];
    refused(run_with(text, inputs, small()), Limit, &[]);
    assert_eq!(shape_of(run(text, vec![("x", floats(&[BIG, 1, 0])), ("i", i64s(&[1], vec![0]))])), [BIG, 1, 0]);
}

#[test]
fn split_with_a_huge_num_outputs_or_overflowing_sizes_is_refused() {
    let parts = r#"<ir_version: 10, opset_import: ["" : 18]>
        g (float[] x) => (float y, float z) { y, z = Split <num_outputs = 4611686018427387904> (x) }"#;
    refused(run(parts, vec![("x", floats(&[4]))]), BadAttribute, &["num_outputs"]);
    let sizes = r#"<ir_version: 10, opset_import: ["" : 18]>
        g (float[] x, int64[] s) => (float y, float z, float w) { y, z, w = Split (x, s) }"#;
    let huge = i64::MAX;
    refused(run(sizes, vec![("x", floats(&[4])), ("s", i64s(&[3], vec![huge, huge, 6]))]), BadInput, &["split sizes"]);
    let empty = r#"<ir_version: 10, opset_import: ["" : 18]>
        g (float[] x) => (float y, float z) { y, z = Split <axis = 1> (x) }"#;
    assert_eq!(shape_of(run(empty, vec![("x", floats(&[BIG, 2, 0]))])), [BIG, 1, 0]);
}

#[test]
fn pad_with_an_empty_constant_or_overflowing_pads_is_refused() {
    let constant = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] p, float[] c) => (float y) { y = Pad (x, p, c) }"#;
    let inputs = vec![("x", floats(&[2])), ("p", i64s(&[2], vec![1, 1])), ("c", floats(&[0]))];
    refused(run(constant, inputs), BadInput, &["constant_value"]);
    let pads = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] p) => (float y) { y = Pad (x, p) }"#;
    refused(run(pads, vec![("x", floats(&[2])), ("p", i64s(&[2], vec![i64::MAX, i64::MAX]))]), Limit, &["pads"]);
    refused(run(pads, vec![("x", floats(&[2])), ("p", i64s(&[2], vec![i64::MIN, i64::MAX]))]), BadInput, &["pads"]);
}

// Selecting and scattering.

#[test]
fn cumsum_top_k_and_compress_of_empty_inputs_with_huge_rows_return_at_once() {
    let cumsum = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] a) => (float y) { y = CumSum (x, a) }"#;
    assert_eq!(shape_of(run(cumsum, vec![("x", floats(&[BIG, 0, BIG])), ("a", scalar_i64(2))])), [BIG, 0, BIG]);
    let top = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] k) => (float y, int64 i) { y, i = TopK <axis = 1> (x, k) }"#;
    assert_eq!(
        shape_of(run(top, vec![("x", floats(&[BIG, BIG, 0])), ("k", i64s(&[1], vec![BIG as i64]))])),
        [BIG, BIG, 0]
    );
    let compress = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, bool[] c) => (float y) { y = Compress <axis = 1> (x, c) }"#;
    let keep = Value::Tensor(Tensor::new(vec![2], Data::Bool(vec![true, false])));
    assert_eq!(shape_of(run(compress, vec![("x", floats(&[BIG, 2, 0])), ("c", keep)])), [BIG, 1, 0]);
}

#[test]
fn gather_nd_with_batch_axes_that_differ_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] i) => (float y) { y = GatherND <batch_dims = 1> (x, i) }"#;
    refused(run(text, vec![("x", floats(&[2, 5])), ("i", i64s(&[3, 1], vec![0, 0, 0]))]), BadInput, &["batch axes"]);
}

#[test]
fn gather_nd_with_empty_index_tuples_takes_whole_slices() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] i) => (float y) { y = GatherND (x, i) }"#;
    assert_eq!(shape_of(run(text, vec![("x", floats(&[2, 5])), ("i", i64s(&[3, 0], vec![]))])), [3, 2, 5]);
    refused(run(text, vec![("x", floats(&[2, 5])), ("i", i64s(&[BIG, 0], vec![]))]), Limit, &[]);
}

#[test]
fn depth_to_space_with_an_overflowing_blocksize_is_refused() {
    for op in ["DepthToSpace", "SpaceToDepth"] {
        let text = format!(
            r#"<ir_version: 10, opset_import: ["" : 21]>
            g (float[] x) => (float y) {{ y = {op} <blocksize = 8589934592> (x) }}"#
        );
        refused(run(&text, vec![("x", floats(&[1, 4, 2, 2]))]), Limit, &["blocksize"]);
    }
}

#[test]
fn unique_along_an_empty_axis_of_huge_length_is_refused_and_many_values_are_quick() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x) => (float y) { y = Unique <axis = 1> (x) }"#;
    refused(run(text, vec![("x", floats(&[0, BIG]))]), Limit, &[]);
    // 2^17 distinct values: quadratic matching took minutes.
    let flat = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x) => (float y) { y = Unique (x) }"#;
    let n = 1 << 17;
    let values = f32s(&[n], (0..n).map(|v| v as f32).rev().collect());
    assert_eq!(shape_of(run(flat, vec![("x", values)])), [n]);
}

#[test]
fn non_max_suppression_without_boxes_returns_at_once() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] b, float[] s) => (int64 y) { y = NonMaxSuppression (b, s) }"#;
    assert_eq!(shape_of(run(text, vec![("b", floats(&[BIG, 0, 4])), ("s", floats(&[BIG, BIG, 0]))])), [0, 3]);
}

// Sampling.

#[test]
fn grid_sample_with_border_padding_over_an_empty_axis_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] grid) => (float y) { y = GridSample <padding_mode = "border"> (x, grid) }"#;
    refused(
        run(text, vec![("x", floats(&[1, 1, 0, 4])), ("grid", floats(&[1, 2, 2, 2]))]),
        BadInput,
        &["empty spatial axis"],
    );
    assert_eq!(
        shape_of(run(text, vec![("x", floats(&[BIG, BIG, 0, 4])), ("grid", floats(&[BIG, 0, 2, 2]))])),
        [BIG, BIG, 0, 2]
    );
}

#[test]
fn grid_sample_at_coordinates_past_2_63_reads_padding() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] grid) => (float y) { y = GridSample <mode = "cubic"> (x, grid) }"#;
    let grid = f32s(&[1, 1, 2, 2], vec![-1e30, 0.0, 1e30, 0.5]);
    let out = run(text, vec![("x", floats(&[1, 1, 4, 4])), ("grid", grid)]).expect("runs");
    assert_eq!(out[0].tensor().expect("tensor").data.as_ref(), &Data::F32(vec![0.0, 0.0].into()));
}

#[test]
fn roi_align_with_a_huge_sampling_grid_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] rois, int64[] b) => (float y) { y = RoiAlign <sampling_ratio = 4611686018427387904> (x, rois, b) }"#;
    let inputs = vec![("x", floats(&[1, 1, 4, 4])), ("rois", floats(&[1, 4])), ("b", i64s(&[1], vec![0]))];
    refused(run(text, inputs), Limit, &["samples"]);
    let adaptive = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] rois, int64[] b) => (float y) { y = RoiAlign (x, rois, b) }"#;
    let rois = f32s(&[1, 4], vec![0.0, 0.0, 1e30, 1e30]);
    let inputs = vec![("x", floats(&[1, 1, 4, 4])), ("rois", rois), ("b", i64s(&[1], vec![0]))];
    refused(run(adaptive, inputs), Limit, &["samples"]);
}

#[test]
fn deform_conv_with_overflowing_attributes_is_refused_or_reads_padding() {
    let groups = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w, float[] o) => (float y) { y = DeformConv <offset_group = 4611686018427387904> (x, w, o) }"#;
    let inputs = vec![("x", floats(&[1, 0, 2, 2])), ("w", floats(&[1, 0, 2, 2])), ("o", floats(&[1, 8, 1, 1]))];
    refused(run(groups, inputs), Limit, &[]);
    let strides = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w, float[] o) => (float y) { y = DeformConv <strides = [9223372036854775807, 9223372036854775807]> (x, w, o) }"#;
    let inputs = vec![("x", floats(&[1, 1, 2, 2])), ("w", floats(&[1, 1, 1, 1])), ("o", floats(&[1, 2, 2, 2]))];
    assert_eq!(shape_of(run(strides, inputs)), [1, 1, 2, 2]);
}

// Signals.

#[test]
fn dft_of_an_empty_input_with_huge_lines_returns_at_once() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x) => (float y) { y = DFT (x) }"#;
    assert_eq!(shape_of(run(text, vec![("x", floats(&[BIG, 0, BIG, 1]))])), [BIG, 0, BIG, 2]);
}

#[test]
fn mel_weight_matrix_with_extreme_edges_runs() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (int64[] n, int64[] l, int64[] r, float[] lo, float[] hi) => (float y) { y = MelWeightMatrix (n, l, r, lo, hi) }"#;
    let inputs = |mels: i64, length: i64, high: f32| {
        vec![
            ("n", scalar_i64(mels)),
            ("l", scalar_i64(length)),
            ("r", scalar_i64(1)),
            ("lo", f32s(&[], vec![0.0])),
            ("hi", f32s(&[], vec![high])),
        ]
    };
    // Filter edges 10^12 bins apart: each filter once took as many steps.
    assert_eq!(shape_of(run(text, inputs(1, 8, 1e30))), [5, 1]);
    // dft_length + 1 overflowed.
    assert_eq!(shape_of(run(text, inputs(0, i64::MAX, 1.0))), [(i64::MAX / 2 + 1) as usize, 0]);
}

// Quantization.

#[test]
fn blocked_scales_of_the_wrong_shape_are_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (int8[] x, float[] s) => (float y) { y = DequantizeLinear <axis = 1, block_size = 2> (x, s) }"#;
    let x = Value::Tensor(Tensor::new(vec![4, 8], Data::I8(vec![1; 32].into())));
    refused(run(text, vec![("x", x), ("s", floats(&[4, 1]))]), BadInput, &["scales"]);
}

#[test]
fn per_axis_dequantization_of_an_empty_input_with_huge_axes_runs() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (uint8[] x, float[] s) => (float y) { y = DequantizeLinear <axis = 1> (x, s) }"#;
    let x = Value::Tensor(Tensor::new(vec![0, 3, BIG, BIG], Data::U8(Vec::new().into())));
    assert_eq!(shape_of(run(text, vec![("x", x), ("s", floats(&[3]))])), [0, 3, BIG, BIG]);
}

// Writing back.

#[test]
fn col2im_with_overflowing_or_zero_attributes_is_refused() {
    let dilated = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] i, int64[] b) => (float y) { y = Col2Im <dilations = [9223372036854775807]> (x, i, b) }"#;
    let inputs = vec![("x", floats(&[1, 2, 1])), ("i", i64s(&[1], vec![4])), ("b", i64s(&[1], vec![2]))];
    refused(run(dilated, inputs), BadInput, &["blocks"]);
    let still = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] i, int64[] b) => (float y) { y = Col2Im <strides = [0]> (x, i, b) }"#;
    let inputs = vec![("x", floats(&[1, 2, 1])), ("i", i64s(&[1], vec![4])), ("b", i64s(&[1], vec![2]))];
    refused(run(still, inputs), BadAttribute, &["strides [0]"]);
}

#[test]
fn col2im_of_an_empty_input_with_a_huge_block_returns_at_once() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] i, int64[] b) => (float y) { y = Col2Im (x, i, b) }"#;
    let inputs = vec![("x", floats(&[1, BIG, 0])), ("i", i64s(&[1], vec![1])), ("b", i64s(&[1], vec![BIG as i64]))];
    assert_eq!(shape_of(run(text, inputs)), [1, 1, 1]);
}

#[test]
fn max_unpool_with_overflowing_strides_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] i) => (float y) { y = MaxUnpool <kernel_shape = [2], strides = [9223372036854775807]> (x, i) }"#;
    refused(
        run(text, vec![("x", floats(&[1, 1, 4])), ("i", i64s(&[1, 1, 4], vec![0; 4]))]),
        BadInput,
        &["output dimension"],
    );
}

#[test]
fn tensor_scatter_at_a_write_index_near_2_63_is_refused_or_wraps() {
    let linear = r#"<ir_version: 10, opset_import: ["" : 24]>
        g (float[] c, float[] u, int64[] w) => (float y) { y = TensorScatter <axis = 1> (c, u, w) }"#;
    let inputs = vec![("c", floats(&[1, 4])), ("u", floats(&[1, 2])), ("w", i64s(&[1], vec![i64::MAX]))];
    refused(run(linear, inputs), BadInput, &["write position"]);
    let circular = r#"<ir_version: 10, opset_import: ["" : 24]>
        g (float[] c, float[] u, int64[] w) => (float y) { y = TensorScatter <axis = 1, mode = "circular"> (c, u, w) }"#;
    let inputs = vec![("c", floats(&[1, 4])), ("u", floats(&[1, 2])), ("w", i64s(&[1], vec![i64::MAX]))];
    assert_eq!(shape_of(run(circular, inputs)), [1, 4]);
    let unindexed = r#"<ir_version: 10, opset_import: ["" : 24]>
        g (float[] c, float[] u) => (float y) { y = TensorScatter <axis = 1> (c, u) }"#;
    assert_eq!(shape_of(run(unindexed, vec![("c", floats(&[BIG, 0])), ("u", floats(&[BIG, 0]))])), [BIG, 0]);
}

// State, strings, n-grams, rotations.

#[test]
fn causal_conv_with_overlong_or_channelless_inputs_is_handled() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, float[] w, float[] p) => (float y, float s) { y, s = CausalConvWithState (x, w, "", p) }"#;
    let long = usize::MAX / 2 + 1;
    let inputs = vec![("x", floats(&[0, 2, long])), ("w", floats(&[2, 1, 3])), ("p", floats(&[0, 2, long]))];
    refused(run(text, inputs), Limit, &[]);
    let inputs = vec![("x", floats(&[BIG, 0, 0])), ("w", floats(&[0, 1, 3])), ("p", floats(&[BIG, 0, 5]))];
    assert_eq!(shape_of(run(text, inputs)), [BIG, 0, 3]);
}

#[test]
fn linear_attention_with_a_short_or_empty_decay_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] q, float[] k, float[] v, float[] d) => (float y) { y = LinearAttention <q_num_heads = 1, kv_num_heads = 1, update_rule = "gated"> (q, k, v, "", d) }"#;
    let qkv = || vec![("q", floats(&[2, 3, 4])), ("k", floats(&[2, 3, 4])), ("v", floats(&[2, 3, 4]))];
    let mut inputs = qkv();
    inputs.push(("d", floats(&[1])));
    refused(run(text, inputs), BadInput, &["decay"]);
    let mut inputs = qkv();
    inputs.push(("d", floats(&[2, 3, 0])));
    refused(run(text, inputs), BadInput, &["decay"]);
}

#[test]
fn string_split_past_the_limit_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (string[] x) => (string y, int64 n) { y, n = StringSplit <delimiter = ","> (x) }"#;
    let mut strings = vec![Vec::new(); 1024];
    strings[0] = vec![b','; 1023];
    let x = Value::Tensor(Tensor::new(vec![1024], Data::Str(strings)));
    refused(run_with(text, vec![("x", x)], small()), Limit, &[]);
}

#[test]
fn tfidf_with_negative_indexes_or_huge_lengths_is_refused_or_bounded() {
    let negative = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (int64[] x) => (float y) { y = TfIdfVectorizer <mode = "TF", min_gram_length = 1, max_gram_length = 1, max_skip_count = 0, ngram_counts = [0], ngram_indexes = [0, -1], pool_int64s = [5]> (x) }"#;
    refused(run(negative, vec![("x", i64s(&[3], vec![5, 5, 5]))]), BadAttribute, &["ngram_indexes"]);
    let long = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (int64[] x) => (float y) { y = TfIdfVectorizer <mode = "TF", min_gram_length = 1, max_gram_length = 9223372036854775807, max_skip_count = 9223372036854775807, ngram_counts = [0, 1], ngram_indexes = [0, 1], pool_int64s = [5, 5, 5]> (x) }"#;
    let out = run(long, vec![("x", i64s(&[3], vec![5, 5, 5]))]).expect("runs");
    // Three unigrams; bigrams with no gap (two) and with one skipped (one).
    assert_eq!(out[0].tensor().expect("tensor").data.as_ref(), &Data::F32(vec![3.0, 3.0].into()));
}

#[test]
fn rotary_embedding_past_the_caches_or_of_an_empty_input_is_handled() {
    let text = r#"<ir_version: 10, opset_import: ["" : 23]>
        g (float[] x, float[] c, float[] s, int64[] p) => (float y) { y = RotaryEmbedding (x, c, s, p) }"#;
    let inputs = vec![
        ("x", floats(&[1, 1, 1, 4])),
        ("c", floats(&[4, 2])),
        ("s", floats(&[4, 2])),
        ("p", i64s(&[1, 1], vec![i64::MAX])),
    ];
    refused(run(text, inputs), BadInput, &["position"]);
    let empty = r#"<ir_version: 10, opset_import: ["" : 23]>
        g (float[] x, float[] c, float[] s) => (float y) { y = RotaryEmbedding (x, c, s) }"#;
    let inputs = vec![("x", floats(&[BIG, BIG, BIG, 0])), ("c", floats(&[4, 0])), ("s", floats(&[4, 0]))];
    assert_eq!(shape_of(run(empty, inputs)), [BIG, BIG, BIG, 0]);
}

// ai.onnx.ml and losses.

#[test]
fn label_encoder_with_an_empty_default_tensor_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21, "ai.onnx.ml" : 4]>
        g (int64[] x) => (int64 y) { y = ai.onnx.ml.LabelEncoder <keys_int64s = [1], values_int64s = [2], default_tensor: tensor = int64[0] {}> (x) }"#;
    refused(run(text, vec![("x", i64s(&[2], vec![1, 3]))]), BadAttribute, &["default_tensor"]);
}

#[test]
fn array_feature_extractor_past_the_limit_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21, "ai.onnx.ml" : 3]>
        g (float[] x, int64[] i) => (float y) { y = ai.onnx.ml.ArrayFeatureExtractor (x, i) }"#;
    let inputs = vec![("x", floats(&[1024, 1])), ("i", i64s(&[1024], vec![0; 1024]))];
    refused(run_with(text, inputs, small()), Limit, &[]);
}

#[test]
fn tree_ensemble_with_a_huge_target_count_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21, "ai.onnx.ml" : 5]>
        g (float[] x) => (float y) { y = ai.onnx.ml.TreeEnsemble <n_targets = 4611686018427387904, nodes_featureids = [0], nodes_truenodeids = [0], nodes_falsenodeids = [0], nodes_trueleafs = [1], nodes_falseleafs = [1], leaf_targetids = [0], tree_roots = [0], nodes_splits: tensor = float[1] {0}, nodes_modes: tensor = uint8[1] {0}, leaf_weights: tensor = float[1] {1}> (x) }"#;
    refused(run(text, vec![("x", floats(&[2, 1]))]), Limit, &[]);
}

#[test]
fn losses_over_empty_scores_with_huge_axes_are_handled() {
    let nll = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] t) => (float y) { y = NegativeLogLikelihoodLoss (x, t) }"#;
    refused(run(nll, vec![("x", floats(&[BIG, 0, BIG])), ("t", i64s(&[1], vec![0]))]), Limit, &[]);
    let cross = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] t) => (float y) { y = SoftmaxCrossEntropyLoss <reduction = "none"> (x, t) }"#;
    let targets = i64s(&[1 << 20, 0], vec![]);
    refused(run(cross, vec![("x", floats(&[1 << 20, 0, 1 << 20])), ("t", targets)]), BadInput, &["targets"]);
}

// Sequences.

#[test]
fn split_to_sequence_into_a_huge_number_of_pieces_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x, int64[] s) => (seq(float) y) { y = SplitToSequence (x, s) }"#;
    refused(run(text, vec![("x", floats(&[BIG, 0])), ("s", scalar_i64(1))]), Limit, &["tensors in the sequence"]);
    let each = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] x) => (seq(float) y) { y = SplitToSequence (x) }"#;
    refused(run(each, vec![("x", floats(&[BIG, 0]))]), Limit, &["tensors in the sequence"]);
}

// Control flow.

#[test]
fn loop_scan_outputs_stacked_past_the_limit_are_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (int64[] n, bool[] go, float[] x) => (float y) {
            y = Loop (n, go) <body: graph = body (int64[] i, bool[] c) => (bool c2, float out) {
                c2 = Identity (c)
                out = Identity (x)
            }>
        }"#;
    let go = Value::Tensor(Tensor::scalar(Data::Bool(vec![true])));
    let limits = Limits { max_loop_iterations: 1 << 20, ..small() };
    let inputs = vec![("n", scalar_i64(100)), ("go", go.clone()), ("x", floats(&[1024]))];
    // Refused while it runs, as soon as the outputs so far pass the limit, not after the
    // last iteration.
    refused(run_with(text, inputs, limits.clone()), Limit, &["scan output 0", "after 65 iterations"]);
    let inputs = vec![("n", scalar_i64(50)), ("go", go), ("x", floats(&[1024]))];
    assert_eq!(shape_of(run_with(text, inputs, limits)), [50, 1024]);
}

#[test]
fn scan_8_with_inputs_lacking_the_batch_axis_is_refused() {
    let text = r#"<ir_version: 10, opset_import: ["" : 8]>
        g (float[] s, float[] x) => (float t, float y) {
            t, y = Scan ("", s, x) <num_scan_inputs: int = 1, body: graph = body (float[] a, float[] b) => (float c, float d) {
                c = Identity (a)
                d = Identity (b)
            }>
        }"#;
    // A scan input without the batch axis, and one shorter along it than the first input.
    refused(run(text, vec![("s", floats(&[1])), ("x", floats(&[]))]), BadInput, &["batch axis"]);
    refused(run(text, vec![("s", floats(&[2])), ("x", floats(&[1, 2]))]), BadInput, &["batch axis of 2"]);
}

#[test]
fn scan_over_a_huge_empty_axis_stops_at_the_iteration_limit() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[] s, float[] x) => (float t, float y) {
            t, y = Scan (s, x) <num_scan_inputs: int = 1, body: graph = body (float[] a, float[] b) => (float c, float d) {
                c = Identity (a)
                d = Identity (b)
            }>
        }"#;
    refused(run(text, vec![("s", floats(&[1])), ("x", floats(&[BIG, 0]))]), Limit, &[]);
}
