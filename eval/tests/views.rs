//! Strided views: a Transpose, Slice or Expand whose result only view-reading kernels read
//! (MatMul, Shape, Size, and other views) is planned as a view of its input, not a copy;
//! one that anything else reads (an elementwise kernel, a graph output, control flow) copies
//! as before. What must hold: the plan makes exactly those views, and every result is what
//! the copies would give.

use onnx_core::analysis::analyze_text;
use onnx_eval::{Data, Plan, RunOptions, Tensor, Value};

fn model(text: &str) -> onnx_core::ir::Model {
    let analysis = analyze_text(text);
    assert!(!analysis.has_errors(), "{text}\n{:?}", analysis.diagnostics);
    analysis.model
}

fn floats(outputs: &[(String, Value)], name: &str) -> (Vec<usize>, Vec<f32>) {
    match outputs.iter().find(|(n, _)| n == name).map(|(_, v)| v) {
        Some(Value::Tensor(t)) => {
            assert!(!t.is_strided(), "{name}: a graph output leaves the run row-major");
            match t.data.as_ref() {
                Data::F32(v) => (t.shape.clone(), v.to_vec()),
                other => panic!("{name}: {other:?}"),
            }
        }
        other => panic!("{name}: {other:?}"),
    }
}

fn ints(outputs: &[(String, Value)], name: &str) -> Vec<i64> {
    match outputs.iter().find(|(n, _)| n == name).map(|(_, v)| v) {
        Some(Value::Tensor(t)) => t.to_i64s().expect("integers"),
        other => panic!("{name}: {other:?}"),
    }
}

/// The names of the outputs of the nodes planned as views.
fn views(plan: &Plan<'_>) -> Vec<String> {
    plan.views.iter().map(|&n| plan.model.nodes[n].outputs[0].to_string()).collect()
}

const ATTENTION_LIKE: &str = r#"<ir_version: 10, opset_import: ["" : 18]>
main (float[2,3] x, float[4,3] w, float[1,3] b) => (float[2,4] y, float[2,2] z, float[2,1] z2,
    int64[2] size, float[3,2] relu, float[3,2] xt, float[2,2] chain, float[2,3] shifted,
    float[3,2] squares, float[2,3] less)
  <int64[1] zero = {0}, int64[1] two = {2}, int64[1] one = {1}, int64[2] wide = {2, 3}> {
    wt = Transpose <perm = [1, 0]> (w)
    y = MatMul (x, wt)
    cols = Slice (x, one, two, one)
    rows = Slice (w, zero, two, zero)
    rows_t = Transpose (rows)
    wide_x = Slice (x, zero, two, one)
    wide_x_t = Transpose (wide_x)
    z = MatMul (wide_x, wide_x_t)
    z2 = MatMul (wide_x, cols)
    wide_b = Expand (b, wide)
    size = Shape (wide_b)
    x_t = Transpose (x)
    relu = Relu (x_t)
    xt = Transpose (x)
    sliced_t = Slice (wt, zero, two, one)
    chain = MatMul (x, sliced_t)
    b_rows = Expand (b, wide)
    shifted = Add (x, b_rows)
    x_t2 = Transpose (x)
    squares = Mul (x_t2, x_t2)
    b_rows2 = Expand (b, wide)
    less = Sub (b_rows2, x)
}
"#;

#[test]
fn nodes_read_only_by_view_readers_are_views_and_give_what_copies_give() {
    let m = model(ATTENTION_LIKE);
    let plan = Plan::new(&m).expect("plan");
    let mut made = views(&plan);
    made.sort();
    // rows is read by a Transpose (a view of a view); rows_t by nothing, so it is no view
    // (a view needs readers that take views); x_t feeds Relu and xt is a graph output: both
    // copy.
    assert_eq!(made, ["b_rows", "b_rows2", "cols", "rows", "sliced_t", "wide_b", "wide_x", "wide_x_t", "wt", "x_t2"]);

    let x: Vec<f32> = (1..=6).map(|v| v as f32).collect();
    let w: Vec<f32> = (0..12).map(|v| v as f32 - 3.0).collect();
    let inputs = vec![
        ("x".to_owned(), Value::Tensor(Tensor::new(vec![2, 3], Data::F32(x.clone().into())))),
        ("w".to_owned(), Value::Tensor(Tensor::new(vec![4, 3], Data::F32(w.clone().into())))),
        ("b".to_owned(), Value::Tensor(Tensor::new(vec![1, 3], Data::F32(vec![1.0, 2.0, 3.0].into())))),
    ];
    let result = plan.run(inputs, &RunOptions::default()).expect("run");
    let out = &result.outputs;

    // y = x · wᵀ, written out.
    let mut y = vec![0.0f32; 8];
    for i in 0..2 {
        for j in 0..4 {
            y[i * 4 + j] = (0..3).map(|k| x[i * 3 + k] * w[j * 3 + k]).sum();
        }
    }
    assert_eq!(floats(out, "y"), (vec![2, 4], y.clone()));
    // wide_x = x[:, 0:2] and cols = x[:, 1:2], both views of x.
    let wide = [[x[0], x[1]], [x[3], x[4]]];
    let col = [x[1], x[4]];
    let z: Vec<f32> =
        (0..2).flat_map(|i| (0..2).map(move |j| wide[i][0] * wide[j][0] + wide[i][1] * wide[j][1])).collect();
    assert_eq!(floats(out, "z"), (vec![2, 2], z));
    let z2: Vec<f32> = (0..2).map(|i| wide[i][0] * col[0] + wide[i][1] * col[1]).collect();
    assert_eq!(floats(out, "z2"), (vec![2, 1], z2));
    assert_eq!(ints(out, "size"), [2, 3]);
    let transposed = vec![x[0], x[3], x[1], x[4], x[2], x[5]];
    assert_eq!(floats(out, "relu"), (vec![3, 2], transposed.clone()));
    assert_eq!(floats(out, "xt"), (vec![3, 2], transposed));
    // chain = x · wᵀ[:, 0:2] (a slice of a transpose): y's first two columns.
    let (chain_shape, chain) = floats(out, "chain");
    assert_eq!(chain_shape, [2, 2]);
    assert_eq!(chain, [y[0], y[1], y[4], y[5]]);
    // Elementwise arithmetic reads an expanded view as a broadcast and a transposed one
    // through its strides.
    let b = [1.0f32, 2.0, 3.0];
    let shifted: Vec<f32> = (0..6).map(|i| x[i] + b[i % 3]).collect();
    assert_eq!(floats(out, "shifted"), (vec![2, 3], shifted));
    let less: Vec<f32> = (0..6).map(|i| b[i % 3] - x[i]).collect();
    assert_eq!(floats(out, "less"), (vec![2, 3], less));
    let squares: Vec<f32> = [0, 3, 1, 4, 2, 5].iter().map(|&i| x[i] * x[i]).collect();
    assert_eq!(floats(out, "squares"), (vec![3, 2], squares));
}

const READ_IN_A_BRANCH: &str = r#"<ir_version: 10, opset_import: ["" : 18]>
main (float[2,3] x, bool c) => (float[2,2] r) {
    xt = Transpose (x)
    r = If (c) <
        then_branch = yes () => (float[2,2] p) { p = MatMul (x, xt) },
        else_branch = no () => (float[2,2] q) { q = MatMul (x, xt) }
    >
}
"#;

/// A value a subgraph reads is no view, even when the readers there would take one (a
/// loop body reads it on every step: a row-major copy made once serves better).
#[test]
fn values_read_inside_subgraphs_are_copies() {
    let m = model(READ_IN_A_BRANCH);
    let plan = Plan::new(&m).expect("plan");
    assert!(views(&plan).is_empty(), "{:?}", views(&plan));
    let x: Vec<f32> = (1..=6).map(|v| v as f32).collect();
    let inputs = vec![
        ("x".to_owned(), Value::Tensor(Tensor::new(vec![2, 3], Data::F32(x.clone().into())))),
        ("c".to_owned(), Value::Tensor(Tensor::scalar(Data::Bool(vec![true])))),
    ];
    let result = plan.run(inputs, &RunOptions::default()).expect("run");
    let x = &x;
    let gram: Vec<f32> =
        (0..2).flat_map(|i| (0..2).map(move |j| (0..3).map(|k| x[i * 3 + k] * x[j * 3 + k]).sum())).collect();
    assert_eq!(floats(&result.outputs, "r"), (vec![2, 2], gram));
}

/// A float16 tensor of `v` (bfloat16 where `brain`), each value rounded to the type.
fn half_tensor(brain: bool, shape: &[usize], v: &[f32]) -> Value {
    let data = if brain {
        Data::Bf16(v.iter().map(|&x| half::bf16::from_f32(x)).collect())
    } else {
        Data::F16(v.iter().map(|&x| half::f16::from_f32(x)).collect())
    };
    Value::Tensor(Tensor::new(shape.to_vec(), data))
}

/// MatMul of float16 and bfloat16 (operands widened to float32, one float32 product,
/// rounded once) gives the exact product rounded to the type, also where an operand is a
/// transposed view. The values are multiples of 1/8 below 4, so every product and sum is
/// exact in float32 and the only rounding is the last.
#[test]
fn half_precision_products_round_once() {
    use half::{bf16, f16};
    for (ty, widen) in [("float16", 0), ("bfloat16", 1)] {
        let text = format!(
            r#"<ir_version: 10, opset_import: ["" : 17]>
            g ({ty}[3, 5] a, {ty}[3, 4] b) => ({ty}[5, 4] y) {{
                at = Transpose <perm = [1, 0]> (a)
                y = MatMul (at, b)
            }}"#
        );
        let model = model(&text);
        let plan = Plan::new(&model).expect("plans");
        assert_eq!(views(&plan), ["at"], "the transposed A is a view");
        let a: Vec<f32> = (0..15).map(|i| ((i * 7) % 29) as f32 / 8.0 - 1.5).collect();
        let b: Vec<f32> = (0..12).map(|i| ((i * 5) % 23) as f32 / 8.0 - 1.25).collect();
        let tensor = |shape: &[usize], v: &[f32]| half_tensor(widen == 1, shape, v);
        let inputs = vec![("a".to_owned(), tensor(&[3, 5], &a)), ("b".to_owned(), tensor(&[3, 4], &b))];
        let result = plan.run(inputs, &RunOptions::default()).expect("runs");
        let Value::Tensor(y) = &result.outputs[0].1 else { panic!("a tensor") };
        assert_eq!(y.shape, [5, 4]);
        let got = y.to_f64s().expect("floats");
        for r in 0..5 {
            for c in 0..4 {
                let exact: f64 = (0..3).map(|k| f64::from(a[k * 5 + r]) * f64::from(b[k * 4 + c])).sum();
                let want = if widen == 0 { f64::from(f16::from_f64(exact)) } else { f64::from(bf16::from_f64(exact)) };
                assert_eq!(got[r * 4 + c], want, "{ty} y[{r}][{c}]");
            }
        }
    }
}

/// A float16 or bfloat16 MatMul whose B is a constant: the plan widens B to float32 once
/// (the node has a prepared form), and the product is the same exact product rounded once.
#[test]
fn half_precision_constant_weights_are_widened_once() {
    use half::{bf16, f16};
    let b: Vec<f32> = (0..12).map(|i| ((i * 5) % 23) as f32 / 8.0 - 1.25).collect();
    for (ty, widen) in [("float16", 0), ("bfloat16", 1)] {
        // The text holds 16-bit floats as their bits.
        let bits = |v: f32| if widen == 0 { f16::from_f32(v).to_bits() } else { bf16::from_f32(v).to_bits() };
        let listed = b.iter().map(|&v| bits(v).to_string()).collect::<Vec<_>>().join(", ");
        let text = format!(
            r#"<ir_version: 10, opset_import: ["" : 17]>
            g ({ty}[5, 3] a) => ({ty}[5, 4] y) <{ty}[3, 4] b = {{{listed}}}> {{
                y = MatMul (a, b)
            }}"#
        );
        let model = model(&text);
        let plan = Plan::new(&model).expect("plans");
        assert_eq!(plan.prepared.values().count(), 1, "{ty}: B is widened when the plan is made");
        let a: Vec<f32> = (0..15).map(|i| ((i * 7) % 29) as f32 / 8.0 - 1.5).collect();
        let inputs = vec![("a".to_owned(), half_tensor(widen == 1, &[5, 3], &a))];
        let result = plan.run(inputs, &RunOptions::default()).expect("runs");
        let Value::Tensor(y) = &result.outputs[0].1 else { panic!("a tensor") };
        let got = y.to_f64s().expect("floats");
        for r in 0..5 {
            for c in 0..4 {
                let exact: f64 = (0..3).map(|k| f64::from(a[r * 3 + k]) * f64::from(b[k * 4 + c])).sum();
                let want = if widen == 0 { f64::from(f16::from_f64(exact)) } else { f64::from(bf16::from_f64(exact)) };
                assert_eq!(got[r * 4 + c], want, "{ty} y[{r}][{c}]");
            }
        }
    }
}

/// Mul and Add of float16 and bfloat16 (buffers widened whole, the float32 result rounded
/// once): each element is the float32 operation rounded to the type, also where an operand
/// broadcasts and where one is a transposed view.
#[test]
fn half_precision_elementwise_rounds_each_float32_result_once() {
    use half::{bf16, f16};
    for (ty, widen) in [("float16", 0), ("bfloat16", 1)] {
        let text = format!(
            r#"<ir_version: 10, opset_import: ["" : 17]>
            g ({ty}[4, 3] a, {ty}[1, 4] b) => ({ty}[3, 4] m, {ty}[3, 4] s) {{
                at = Transpose <perm = [1, 0]> (a)
                m = Mul (at, b)
                s = Add (at, at)
            }}"#
        );
        let model = model(&text);
        let plan = Plan::new(&model).expect("plans");
        let a: Vec<f32> = (0..12).map(|i| ((i * 7) % 29) as f32 / 3.0 - 1.5).collect();
        let b: Vec<f32> = (0..4).map(|i| (i as f32 + 0.3) / 7.0).collect();
        let round = |x: f32| if widen == 0 { f16::from_f32(x).to_f32() } else { bf16::from_f32(x).to_f32() };
        let (a, b): (Vec<f32>, Vec<f32>) = (a.into_iter().map(round).collect(), b.into_iter().map(round).collect());
        let tensor = |shape: &[usize], v: &[f32]| half_tensor(widen == 1, shape, v);
        let inputs = vec![("a".to_owned(), tensor(&[4, 3], &a)), ("b".to_owned(), tensor(&[1, 4], &b))];
        let result = plan.run(inputs, &RunOptions::default()).expect("runs");
        let output = |name: &str| match result.outputs.iter().find(|(n, _)| n == name) {
            Some((_, Value::Tensor(t))) => t.to_f64s().expect("floats"),
            _ => panic!("{name}: a tensor"),
        };
        let (m, s) = (output("m"), output("s"));
        for r in 0..3 {
            for c in 0..4 {
                let at = a[c * 3 + r];
                assert_eq!(m[r * 4 + c], f64::from(round(at * b[c])), "{ty} m[{r}][{c}]");
                assert_eq!(s[r * 4 + c], f64::from(round(at + at)), "{ty} s[{r}][{c}]");
            }
        }
    }
}
