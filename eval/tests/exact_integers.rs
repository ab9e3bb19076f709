//! Products of 8-bit operands are exact however long their sums. The kernels take them
//! through the float32 GEMM in runs of at most 258 terms (where every partial sum is an
//! integer below 2^24) and add the runs as integers; onnx's node tests have sums of a few
//! terms only, so these cases have hundreds, with the operands' extremes (whose sums a
//! single float32 run would round) and seeded random values, against sums in i64.

use onnx_eval::{Data, Plan, RunOptions, Tensor, Value};

fn run_text(text: &str, inputs: Vec<(&str, Value)>) -> Vec<Tensor> {
    let analysis = onnx_core::analysis::analyze_text(text);
    assert!(!analysis.has_errors(), "{text}\n{:?}", analysis.diagnostics);
    let plan = Plan::new(&analysis.model).expect("a plan");
    let inputs = inputs.into_iter().map(|(n, v)| (n.to_owned(), v)).collect();
    let result = plan.run(inputs, &RunOptions::default()).expect("the model runs");
    result.outputs.into_iter().map(|(_, v)| v.tensor().expect("a tensor").clone()).collect()
}

/// A seeded generator (64-bit LCG, high bits), so every run checks the same values.
struct Seeded(u64);

impl Seeded {
    fn byte(&mut self) -> u8 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 56) as u8
    }
}

fn u8s(shape: &[usize], v: Vec<u8>) -> Value {
    Value::Tensor(Tensor::new(shape.to_vec(), Data::U8(v.into())))
}

fn i8s(shape: &[usize], v: Vec<i8>) -> Value {
    Value::Tensor(Tensor::new(shape.to_vec(), Data::I8(v.into())))
}

fn i32s_of(t: &Tensor) -> Vec<i32> {
    match &*t.data {
        Data::I32(v) => v.to_vec(),
        other => panic!("int32 expected, got {other:?}"),
    }
}

/// `a` (m×k, uint8, zero `za`) times `b` (k×n, int8, zero `zb`), in i64.
fn reference_product(a: &[u8], za: u8, b: &[i8], zb: i8, (m, k, n): (usize, usize, usize)) -> Vec<i64> {
    let mut out = vec![0i64; m * n];
    for r in 0..m {
        for c in 0..n {
            out[r * n + c] = (0..k)
                .map(|p| (i64::from(a[r * k + p]) - i64::from(za)) * (i64::from(b[p * n + c]) - i64::from(zb)))
                .sum();
        }
    }
    out
}

const MATMUL_INTEGER: &str = r#"<ir_version: 10, opset_import: ["" : 21]>
    g (uint8[] a, int8[] b, uint8[] za, int8[] zb) => (int32[] y) { y = MatMulInteger (a, b, za, zb) }"#;

#[test]
fn matmul_integer_is_exact_past_a_float32_run() {
    // Five rows take the float32 runs; the batch of two below (ten rows) takes the 8-bit
    // dot products where the processor has them (`onnx_eval::int8`).
    let (m, k, n) = (5, 1000, 5);
    // The extremes: every product 255 · 255, a sum of 65,025,000 (past 2^24).
    let (a, b) = (vec![255u8; m * k], vec![-128i8; k * n]);
    let out = run_text(
        MATMUL_INTEGER,
        vec![
            ("a", u8s(&[m, k], a.clone())),
            ("b", i8s(&[k, n], b.clone())),
            ("za", u8s(&[], vec![0])),
            ("zb", i8s(&[], vec![127])),
        ],
    );
    let expected = reference_product(&a, 0, &b, 127, (m, k, n));
    assert_eq!(expected[0], -65_025_000);
    assert_eq!(i32s_of(&out[0]).iter().map(|&v| i64::from(v)).collect::<Vec<_>>(), expected);

    // Seeded values, a batch of two with B shared, and zero points inside the range.
    let mut rng = Seeded(7);
    let a: Vec<u8> = (0..2 * m * k).map(|_| rng.byte()).collect();
    let b: Vec<i8> = (0..k * n).map(|_| rng.byte() as i8).collect();
    let out = run_text(
        MATMUL_INTEGER,
        vec![
            ("a", u8s(&[2, m, k], a.clone())),
            ("b", i8s(&[k, n], b.clone())),
            ("za", u8s(&[], vec![131])),
            ("zb", i8s(&[], vec![-3])),
        ],
    );
    assert_eq!(out[0].shape, [2, m, n]);
    let mut expected = reference_product(&a[..m * k], 131, &b, -3, (m, k, n));
    expected.extend(reference_product(&a[m * k..], 131, &b, -3, (m, k, n)));
    assert_eq!(i32s_of(&out[0]).iter().map(|&v| i64::from(v)).collect::<Vec<_>>(), expected);
}

/// ConvInteger over 64 channels and 3×3 taps (576 terms per output), against sums in i64.
#[test]
fn conv_integer_is_exact_past_a_float32_run() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (uint8[] x, uint8[] w, uint8[] zx, uint8[] zw) => (int32[] y) {
            y = ConvInteger <pads: ints = [1, 1, 1, 1]> (x, w, zx, zw)
        }"#;
    let (c, h, wd, f) = (64, 5, 4, 3);
    for (seed, zx, zw) in [(None, 0u8, 255u8), (Some(11), 100, 17)] {
        let mut rng = Seeded(seed.unwrap_or(0));
        let mut value = |extreme: u8| if seed.is_some() { rng.byte() } else { extreme };
        let x: Vec<u8> = (0..c * h * wd).map(|_| value(255)).collect();
        let w: Vec<u8> = (0..f * c * 9).map(|_| value(0)).collect();
        let out = run_text(
            text,
            vec![
                ("x", u8s(&[1, c, h, wd], x.clone())),
                ("w", u8s(&[f, c, 3, 3], w.clone())),
                ("zx", u8s(&[], vec![zx])),
                ("zw", u8s(&[], vec![zw])),
            ],
        );
        assert_eq!(out[0].shape, [1, f, h, wd]);
        let mut expected = Vec::new();
        for filter in 0..f {
            for i in 0..h as i64 {
                for j in 0..wd as i64 {
                    let mut sum = 0i64;
                    for ch in 0..c {
                        for (di, dj) in (-1..=1).flat_map(|di| (-1..=1).map(move |dj| (di, dj))) {
                            let (y, xx) = (i + di, j + dj);
                            if y < 0 || xx < 0 || y >= h as i64 || xx >= wd as i64 {
                                continue;
                            }
                            let xv = i64::from(x[(ch * h + y as usize) * wd + xx as usize]) - i64::from(zx);
                            let tap = ((di + 1) * 3 + dj + 1) as usize;
                            let wv = i64::from(w[(filter * c + ch) * 9 + tap]) - i64::from(zw);
                            sum += xv * wv;
                        }
                    }
                    expected.push(sum);
                }
            }
        }
        if seed.is_none() {
            // The centre's 576 products of 255 · (−255): past 2^24 in magnitude.
            assert_eq!(expected[(h / 2) * wd + 1], -576 * 65_025);
        }
        assert_eq!(i32s_of(&out[0]).iter().map(|&v| i64::from(v)).collect::<Vec<_>>(), expected, "seed {seed:?}");
    }
}

/// QLinearMatMul requantizes the exact accumulator: seeded bytes, 600 terms per sum, each
/// output against the exact sum rescaled as onnx's reference does (the scale product in
/// float32, the rest in f64, half to even, saturated).
#[test]
fn qlinear_matmul_requantizes_the_exact_sum() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (uint8[] a, float[] sa, uint8[] za, int8[] b, float[] sb, int8[] zb, float[] sy, uint8[] zy)
            => (uint8[] y) { y = QLinearMatMul (a, sa, za, b, sb, zb, sy, zy) }"#;
    // Nine rows: the 8-bit dot products where the processor has them, else float32 runs.
    let (m, k, n) = (9, 600, 6);
    let mut rng = Seeded(3);
    let a: Vec<u8> = (0..m * k).map(|_| rng.byte()).collect();
    let b: Vec<i8> = (0..k * n).map(|_| rng.byte() as i8).collect();
    let scalar = |v: f32| Value::Tensor(Tensor::new(vec![], Data::F32(vec![v].into())));
    let (sa, sb, sy, za, zb, zy) = (0.02f32, 0.01f32, 0.5f32, 120u8, -5i8, 128u8);
    let out = run_text(
        text,
        vec![
            ("a", u8s(&[m, k], a.clone())),
            ("sa", scalar(sa)),
            ("za", u8s(&[], vec![za])),
            ("b", i8s(&[k, n], b.clone())),
            ("sb", scalar(sb)),
            ("zb", i8s(&[], vec![zb])),
            ("sy", scalar(sy)),
            ("zy", u8s(&[], vec![zy])),
        ],
    );
    let multiplier = f64::from(sa * sb / sy);
    let expected: Vec<u8> = reference_product(&a, za, &b, zb, (m, k, n))
        .into_iter()
        .map(|sum| ((sum as f64 * multiplier).round_ties_even() + f64::from(zy)).clamp(0.0, 255.0) as u8)
        .collect();
    assert!(expected.iter().any(|&v| v != 0 && v != 255), "the case saturates everywhere: {expected:?}");
    match &*out[0].data {
        Data::U8(v) => assert_eq!(v.to_vec(), expected),
        other => panic!("uint8 expected, got {other:?}"),
    }
}

/// QLinearConv's output step: halves round to even, values past the type saturate at both
/// ends, the int32 bias is added before the rescale (a 1×1 convolution by 1 with a rescale
/// of exactly ½, so each output is (x − zx + bias)/2 rounded, plus the zero point).
#[test]
fn qlinear_conv_rounds_halves_to_even_and_saturates() {
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        g (uint8[] x, float[] sx, uint8[] zx, int8[] w, float[] sw, int8[] zw, float[] sy, int8[] zy, int32[] b)
            => (int8[] y) { y = QLinearConv (x, sx, zx, w, sw, zw, sy, zy, b) }"#;
    let x: Vec<u8> = vec![0, 1, 2, 3, 4, 5, 6, 7, 250, 255, 9, 11];
    let scalar = |v: f32| Value::Tensor(Tensor::new(vec![], Data::F32(vec![v].into())));
    let out = run_text(
        text,
        vec![
            ("x", u8s(&[1, 1, 3, 4], x.clone())),
            ("sx", scalar(1.0)),
            ("zx", u8s(&[], vec![5])),
            ("w", i8s(&[1, 1, 1, 1], vec![1])),
            ("sw", scalar(1.0)),
            ("zw", i8s(&[], vec![0])),
            ("sy", scalar(2.0)),
            ("zy", i8s(&[], vec![-10])),
            ("b", Value::Tensor(Tensor::new(vec![1], Data::I32(vec![-1].into())))),
        ],
    );
    // Halves among them: (1 − 6)/2 = −2.5 → −2 and (3 − 6)/2 = −1.5 → −2 (both even),
    // (7 − 6)/2 = 0.5 → 0, (255 − 6)/2 = 124.5 → 124.
    let expected: Vec<i8> = x
        .iter()
        .map(|&v| ((f64::from(v) - 5.0 - 1.0) * 0.5).round_ties_even() - 10.0)
        .map(|v| v.clamp(-128.0, 127.0) as i8)
        .collect();
    assert_eq!(expected[..8], [-13, -12, -12, -12, -11, -10, -10, -10]);
    match &*out[0].data {
        Data::I8(v) => assert_eq!(v.to_vec(), expected),
        other => panic!("int8 expected, got {other:?}"),
    }
    // Saturation: a rescale of 4 takes the ends past both bounds.
    let out = run_text(
        text,
        vec![
            ("x", u8s(&[1, 1, 1, 3], vec![0, 128, 255])),
            ("sx", scalar(1.0)),
            ("zx", u8s(&[], vec![128])),
            ("w", i8s(&[1, 1, 1, 1], vec![1])),
            ("sw", scalar(4.0)),
            ("zw", i8s(&[], vec![0])),
            ("sy", scalar(1.0)),
            ("zy", i8s(&[], vec![3])),
            ("b", Value::Tensor(Tensor::new(vec![1], Data::I32(vec![0].into())))),
        ],
    );
    match &*out[0].data {
        Data::I8(v) => assert_eq!(v.to_vec(), [-128, 3, 127]),
        other => panic!("int8 expected, got {other:?}"),
    }
}

/// MatMulInteger, QLinearMatMul and onnxruntime's MatMulIntegerToFloat with a constant
/// weight: the plan prepares it once (packed for the 8-bit dot products, or as float32
/// less its zero point on a processor without them, which `int8::without_vnni` stands in
/// for), for three rows as for nine, and the sums stay exact.
#[test]
fn constant_weights_are_prepared_once_and_stay_exact() {
    let (k, n) = (300, 20);
    let mut rng = Seeded(21);
    let b: Vec<i8> = (0..k * n).map(|_| rng.byte() as i8).collect();
    let zb: Vec<i8> = (0..n).map(|_| rng.byte() as i8).collect();
    let list = |v: &[i8]| v.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
    let weights = format!("int8[{k}, {n}] b = {{{}}}, int8[{n}] zb = {{{}}}", list(&b), list(&zb));
    let integer = format!(
        r#"<ir_version: 10, opset_import: ["" : 21]>
        g (uint8[M, {k}] a) => (int32[] y) <{weights}, uint8 za = {{77}}> {{ y = MatMulInteger (a, b, za, zb) }}"#
    );
    let to_float = format!(
        r#"<ir_version: 10, opset_import: ["" : 21, "com.microsoft" : 1]>
        g (uint8[M, {k}] a) => (float[] y) <{weights}, uint8 za = {{77}}, float sa = {{0.5}}, float sb = {{0.25}}> {{
            y = com.microsoft.MatMulIntegerToFloat (a, b, sa, sb, za, zb)
        }}"#
    );
    // The exact sums with per-column zero points.
    let reference = |a: &[u8], m: usize| -> Vec<i64> {
        (0..m * n)
            .map(|i| {
                let (r, j) = (i / n, i % n);
                (0..k).map(|p| (i64::from(a[r * k + p]) - 77) * (i64::from(b[p * n + j]) - i64::from(zb[j]))).sum()
            })
            .collect()
    };
    let check = |vnni: bool| {
        for m in [3, 9] {
            let mut rng = Seeded(m as u64);
            let a: Vec<u8> = (0..m * k).map(|_| rng.byte()).collect();
            let expected = reference(&a, m);
            for (text, float) in [(&integer, false), (&to_float, true)] {
                let analysis = onnx_core::analysis::analyze_text(text);
                assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
                let plan = Plan::new(&analysis.model).expect("a plan");
                assert_eq!(plan.prepared.values().count(), 1, "the weight prepared (VNNI {vnni})");
                let inputs = vec![("a".to_owned(), u8s(&[m, k], a.clone()))];
                let result = plan.run(inputs, &RunOptions::default()).expect("runs");
                let y = result.outputs[0].1.tensor().expect("a tensor").clone();
                if float {
                    let Data::F32(v) = &*y.data else { panic!("float32 expected") };
                    for (got, &sum) in v.iter().zip(&expected) {
                        // acc · (0.5 · 0.25): exact in float32, these sums being below 2^24.
                        assert!(sum.abs() < 1 << 24);
                        assert_eq!(f64::from(*got), sum as f64 * 0.125, "{m} rows, VNNI {vnni}");
                    }
                } else {
                    let got: Vec<i64> = i32s_of(&y).iter().map(|&v| i64::from(v)).collect();
                    assert_eq!(got, expected, "{m} rows, VNNI {vnni}");
                }
            }
        }
    };
    check(onnx_eval::int8::available());
    onnx_eval::int8::without_vnni(|| check(false));
}
