//! A float MatMul between two DequantizeLinear outputs (the QDQ form of onnxruntime's
//! static quantizer) runs as the 8-bit product it stands for where the processor has 8-bit
//! dot products: the plan prepares the weight, and the result is the exact product of the
//! dequantized operands rounded once, which these cases check against sums in f64 (the
//! float path, rounding every product and partial sum, misses that bound on them). Every
//! form the plan takes: uint8 and int8 activations, per-tensor and per-column weight
//! scales, an omitted weight zero point, a batched A; and one it must leave alone.

use onnx_eval::{Data, Plan, RunOptions, Tensor, Value};

struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn byte(&mut self) -> u8 {
        (self.next() >> 23) as u8
    }
    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f32 {
        (self.next() % 2_000_000) as f32 / 1_000_000.0 - 1.0
    }
}

/// One case: activations `[batch…, m, k]` quantized with `a_type`, a weight `[k, n]` of
/// `b_type` with one scale or one per column, with or without its zero point.
struct Case {
    a_type: &'static str,
    b_type: &'static str,
    per_column: bool,
    b_zero: bool,
    batch: Option<usize>,
}

fn list<T: ToString>(v: &[T]) -> String {
    v.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// The model's text, the weight bytes as integers, its scales and zero points.
fn model(case: &Case, (k, n): (usize, usize), rng: &mut Seeded) -> (String, Vec<i32>, Vec<f32>, Vec<i32>) {
    let byte = |t: &str, rng: &mut Seeded| {
        let v = rng.byte();
        if t == "int8" { i32::from(v as i8) } else { i32::from(v) }
    };
    let weight: Vec<i32> = (0..k * n).map(|_| byte(case.b_type, rng)).collect();
    let scales: Vec<f32> =
        (0..if case.per_column { n } else { 1 }).map(|_| 0.001 + 0.01 * (rng.unit() + 1.0)).collect();
    let zeros: Vec<i32> = if case.b_zero { scales.iter().map(|_| byte(case.b_type, rng)).collect() } else { vec![0] };
    let scale_shape = if case.per_column { format!("[{n}]") } else { String::new() };
    let a_zero = if case.a_type == "int8" { -3 } else { 131 };
    let (b_zero_decl, b_zero_use) = if case.b_zero {
        (format!(", {}{scale_shape} zb = {{{}}}", case.b_type, list(&zeros)), ", zb")
    } else {
        (String::new(), "")
    };
    let shape = match case.batch {
        Some(b) => format!("[{b}, M, {k}]"),
        None => format!("[M, {k}]"),
    };
    let text = format!(
        r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float{shape} x) => (float[] y)
        <float sa = {{0.0173}}, {a} za = {{{a_zero}}}, {b}[{k}, {n}] w = {{{w}}}, float{scale_shape} sb = {{{s}}}{b_zero_decl}> {{
            q = QuantizeLinear (x, sa, za)
            d = DequantizeLinear (q, sa, za)
            wd = DequantizeLinear <axis: int = 1> (w, sb{b_zero_use})
            y = MatMul (d, wd)
        }}"#,
        a = case.a_type,
        b = case.b_type,
        w = list(&weight),
        s = list(&scales),
    );
    (text, weight, scales, zeros)
}

fn floats(t: &Tensor) -> Vec<f32> {
    match &*t.data {
        Data::F32(v) => v[..t.len()].to_vec(),
        other => panic!("float32 expected, got {other:?}"),
    }
}

#[test]
fn dequantized_operands_multiply_as_their_integers() {
    let vnni = onnx_eval::int8::available();
    if !vnni {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED the 8-bit path of dequantized products: no AVX-512 VNNI here (the float path is checked)"
        );
    }
    products_within_their_bounds(vnni);
    // The float path every processor without VNNI takes, checked here too.
    onnx_eval::int8::without_vnni(|| products_within_their_bounds(false));
}

fn products_within_their_bounds(vnni: bool) {
    let mut rng = Seeded(3);
    let (m, k, n) = (9, 300, 37);
    let cases = [
        Case { a_type: "uint8", b_type: "int8", per_column: false, b_zero: true, batch: None },
        Case { a_type: "uint8", b_type: "int8", per_column: true, b_zero: true, batch: None },
        Case { a_type: "int8", b_type: "int8", per_column: true, b_zero: false, batch: Some(2) },
        Case { a_type: "int8", b_type: "uint8", per_column: false, b_zero: true, batch: None },
        Case { a_type: "uint8", b_type: "uint8", per_column: true, b_zero: false, batch: Some(3) },
    ];
    for case in &cases {
        let (text, weight, scales, zeros) = model(case, (k, n), &mut rng);
        let analysis = onnx_core::analysis::analyze_text(&text);
        assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
        let plan = Plan::new(&analysis.model).expect("a plan");
        assert_eq!(plan.prepared.values().count(), usize::from(vnni), "the MatMul prepared where VNNI runs");
        let rows = m * case.batch.unwrap_or(1);
        let x: Vec<f32> = (0..rows * k).map(|_| 2.0 * rng.unit()).collect();
        let mut shape = vec![m, k];
        if let Some(b) = case.batch {
            shape.insert(0, b);
        }
        let input = Value::Tensor(Tensor::new(shape, Data::F32(x.clone().into())));
        let result = plan.run(vec![("x".to_owned(), input)], &RunOptions::default()).expect("runs");
        let y = floats(result.outputs[0].1.tensor().expect("a tensor"));
        assert_eq!(y.len(), rows * n);
        // The reference: the quantized activations as QuantizeLinear makes them (x / sa in
        // float32, half to even, saturated), then the sums in f64.
        let (sa, za, lo, hi) =
            if case.a_type == "int8" { (0.0173f32, -3.0, -128.0, 127.0) } else { (0.0173, 131.0, 0.0, 255.0) };
        let qa: Vec<f64> = x.iter().map(|&v| (f64::from(v / sa).round_ties_even() + za).clamp(lo, hi) - za).collect();
        for r in 0..rows {
            for j in 0..n {
                let column = if case.per_column { j } else { 0 };
                let zb = f64::from(zeros[if case.b_zero { column } else { 0 }]);
                let sum: f64 = (0..k).map(|p| qa[r * k + p] * (f64::from(weight[p * n + j]) - zb)).sum();
                let exact = sum * f64::from(sa) * f64::from(scales[column]);
                let got = f64::from(y[r * n + j]);
                // Rounded once from the exact integer sum (two float32 roundings: the
                // scales' product and the result) where the 8-bit path runs.
                let bound = if vnni { 3.0 * f64::from(f32::EPSILON) * exact.abs() } else { 1e-4 * (1.0 + exact.abs()) };
                assert!(
                    (got - exact).abs() <= bound,
                    "{}×{}, per column {}: y[{r}, {j}] = {got}, exact {exact}",
                    case.a_type,
                    case.b_type,
                    case.per_column
                );
            }
        }
    }
}

/// An activation scale that is a graph input (not a constant) is not the QDQ form: nothing
/// is prepared, and the float path gives the product.
#[test]
fn a_scale_that_is_not_constant_leaves_the_float_path() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[2, 4] x, float sa) => (float[] y)
        <uint8 za = {128}, int8[4, 2] w = {1, -2, 3, -4, 5, -6, 7, -8}, float sb = {0.5}> {
            q = QuantizeLinear (x, sa, za)
            d = DequantizeLinear (q, sa, za)
            wd = DequantizeLinear (w, sb)
            y = MatMul (d, wd)
        }"#;
    let analysis = onnx_core::analysis::analyze_text(text);
    assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
    let plan = Plan::new(&analysis.model).expect("a plan");
    assert!(plan.prepared.values().next().is_none());
    let x = Value::Tensor(Tensor::new(vec![2, 4], Data::F32(vec![1.0, 2.0, 3.0, 4.0, -1.0, 0.0, 0.5, 2.0].into())));
    let sa = Value::Tensor(Tensor::new(vec![], Data::F32(vec![0.5].into())));
    let result = plan.run(vec![("x".to_owned(), x), ("sa".to_owned(), sa)], &RunOptions::default()).expect("runs");
    // x is exact in steps of 0.5, so the products and sums are exact.
    let y = floats(result.outputs[0].1.tensor().expect("a tensor"));
    let w = [1.0f32, -2.0, 3.0, -4.0, 5.0, -6.0, 7.0, -8.0].map(|v| v * 0.5);
    let xs = [1.0f32, 2.0, 3.0, 4.0, -1.0, 0.0, 0.5, 2.0];
    for r in 0..2 {
        for j in 0..2 {
            let expected: f32 = (0..4).map(|p| xs[r * 4 + p] * w[p * 2 + j]).sum();
            assert_eq!(y[r * 2 + j], expected);
        }
    }
}

/// The same for a Conv of a dequantized input by a dequantized 8-bit weight (per-filter
/// scales, a float bias): 1-D with a stride, 2-D with dilation and uneven padding, against
/// sums in f64 (padding stands for zero).
#[test]
fn dequantized_convolutions_sum_as_their_integers() {
    let vnni = onnx_eval::int8::available();
    convolutions_within_their_bounds(vnni);
    onnx_eval::int8::without_vnni(|| convolutions_within_their_bounds(false));
}

fn convolutions_within_their_bounds(vnni: bool) {
    let mut rng = Seeded(17);
    // (spatial input, kernel, strides, dilations, pads begin+end)
    // Each over the 2^18 multiply-adds below which the float path runs.
    let cases: [[&[usize]; 5]; 2] =
        [[&[401], &[3], &[2], &[1], &[1, 1]], [&[9, 7], &[3, 3], &[1, 1], &[2, 1], &[2, 1, 0, 1]]];
    let (channels, filters) = (40, 24);
    for [spatial, kernel, strides, dilations, pads] in cases {
        let taps: usize = kernel.iter().product();
        let weight: Vec<i32> = (0..filters * channels * taps).map(|_| i32::from(rng.byte() as i8)).collect();
        let scales: Vec<f32> = (0..filters).map(|_| 0.002 + 0.01 * (rng.unit() + 1.0)).collect();
        let bias: Vec<f32> = (0..filters).map(|_| rng.unit()).collect();
        let ints = |v: &[usize]| list(v);
        let mut w_shape = vec![filters, channels];
        w_shape.extend_from_slice(kernel);
        let mut x_shape = vec![1, channels];
        x_shape.extend_from_slice(spatial);
        let text = format!(
            r#"<ir_version: 10, opset_import: ["" : 21]>
            g (float[{x}] x) => (float[] y)
            <float sa = {{0.021}}, uint8 za = {{119}}, int8[{w}] w = {{{wv}}}, float[{filters}] sw = {{{s}}},
             float[{filters}] bias = {{{b}}}> {{
                q = QuantizeLinear (x, sa, za)
                d = DequantizeLinear (q, sa, za)
                wd = DequantizeLinear <axis: int = 0> (w, sw)
                y = Conv <strides: ints = [{st}], dilations: ints = [{di}], pads: ints = [{pa}]> (d, wd, bias)
            }}"#,
            x = ints(&x_shape),
            w = ints(&w_shape),
            wv = list(&weight),
            s = list(&scales),
            b = list(&bias),
            st = ints(strides),
            di = ints(dilations),
            pa = ints(pads),
        );
        let analysis = onnx_core::analysis::analyze_text(&text);
        assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
        let plan = Plan::new(&analysis.model).expect("a plan");
        assert_eq!(plan.prepared.values().count(), usize::from(vnni), "the Conv prepared where VNNI runs");
        let size: usize = spatial.iter().product();
        let x: Vec<f32> = (0..channels * size).map(|_| 3.0 * rng.unit()).collect();
        let input = Value::Tensor(Tensor::new(x_shape.clone(), Data::F32(x.clone().into())));
        let result = plan.run(vec![("x".to_owned(), input)], &RunOptions::default()).expect("runs");
        let y_tensor = result.outputs[0].1.tensor().expect("a tensor");
        let y = floats(y_tensor);
        // The reference: QuantizeLinear's integers less the zero point, the sums in f64.
        let qa: Vec<f64> =
            x.iter().map(|&v| (f64::from(v / 0.021f32).round_ties_even() + 119.0).clamp(0.0, 255.0) - 119.0).collect();
        let n = spatial.len();
        let out: Vec<usize> = (0..n)
            .map(|i| (spatial[i] + pads[i] + pads[i + n] - dilations[i] * (kernel[i] - 1) - 1) / strides[i] + 1)
            .collect();
        assert_eq!(y_tensor.shape[2..], out[..]);
        let positions: usize = out.iter().product();
        let coords = |mut index: usize, dims: &[usize]| -> Vec<usize> {
            let mut c = vec![0; dims.len()];
            for i in (0..dims.len()).rev() {
                c[i] = index % dims[i];
                index /= dims[i];
            }
            c
        };
        for f in 0..filters {
            for p in 0..positions {
                let o = coords(p, &out);
                let mut sum = 0.0f64;
                for c in 0..channels {
                    for t in 0..taps {
                        let tap = coords(t, kernel);
                        let mut at = 0usize;
                        let mut inside = true;
                        for i in 0..n {
                            let pos = (o[i] * strides[i] + tap[i] * dilations[i]) as i64 - pads[i] as i64;
                            inside &= pos >= 0 && (pos as usize) < spatial[i];
                            at = at * spatial[i] + pos.max(0) as usize;
                        }
                        if inside {
                            sum += qa[c * size + at] * f64::from(weight[(f * channels + c) * taps + t]);
                        }
                    }
                }
                let exact = sum * f64::from(0.021f32) * f64::from(scales[f]) + f64::from(bias[f]);
                let got = f64::from(y[f * positions + p]);
                // The scaled sum rounded twice, then the bias added (one more rounding).
                let scaled = (exact - f64::from(bias[f])).abs();
                let bound =
                    if vnni { 3.0 * f64::from(f32::EPSILON) * (scaled + exact.abs()) } else { 1e-4 * (1.0 + scaled) };
                assert!((got - exact).abs() <= bound, "{spatial:?}: y[{f}, {p}] = {got}, exact {exact}");
            }
        }
    }
}

/// A grouped convolution is not taken (one group only): nothing is prepared for it, and
/// the float convolution gives the result.
#[test]
fn a_grouped_convolution_keeps_the_float_path() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (float[1, 2, 3] x) => (float[] y)
        <float sa = {0.5}, uint8 za = {128}, int8[2, 1, 2] w = {1, -2, 3, 4}, float sw = {0.25}> {
            q = QuantizeLinear (x, sa, za)
            d = DequantizeLinear (q, sa, za)
            wd = DequantizeLinear (w, sw)
            y = Conv <group: int = 2> (d, wd)
        }"#;
    let analysis = onnx_core::analysis::analyze_text(text);
    assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
    let plan = Plan::new(&analysis.model).expect("a plan");
    assert!(plan.prepared.values().next().is_none());
    let x = Value::Tensor(Tensor::new(vec![1, 2, 3], Data::F32(vec![1.0, 2.0, 3.0, -1.0, 0.5, 2.0].into())));
    let result = plan.run(vec![("x".to_owned(), x)], &RunOptions::default()).expect("runs");
    // Channel 0 by (0.25, −0.5), channel 1 by (0.75, 1): exact in float32.
    assert_eq!(floats(result.outputs[0].1.tensor().expect("a tensor")), [-0.75, -1.0, -0.25, 2.375]);
}
