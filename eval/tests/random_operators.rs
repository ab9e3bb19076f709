//! The random generators. With a seed, ours draw what onnx's reference evaluator draws
//! (numpy's legacy RandomState): the cases of `tests/fixtures/random`, written by
//! `gen_random_cases.py`, must match exactly. Without one, the draws are checked for what
//! they must be: in range, of the right type and shape, and with the right frequencies.
//! Multinomial, which onnx's reference evaluator lacks, is checked by its frequencies.

use onnx_core::analysis::analyze_text;
use onnx_eval::{Data, Plan, RunOptions, Tensor, Value};
use onnx_tests::fixture_dir;

mod common;

#[test]
fn seeded_draws_are_the_reference_evaluators() {
    let dirs = common::case_dirs(&fixture_dir("random"));
    assert!(dirs.len() >= 12, "only {} random cases", dirs.len());
    let failures: Vec<String> = dirs
        .iter()
        .filter_map(|dir| common::run_case(dir, 0.0, 0.0).err().map(|e| format!("{}: {e}", dir.display())))
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Runs a one-output model on `inputs` and returns its output.
fn run(text: &str, inputs: Vec<(String, Value)>) -> Tensor {
    let analysis = analyze_text(text);
    assert!(!analysis.has_errors(), "{text}\n{:?}", analysis.diagnostics);
    let plan = Plan::new(&analysis.model).expect("plannable");
    let mut result = plan.run(inputs, &RunOptions::default()).expect("runs");
    match result.outputs.remove(0).1 {
        Value::Tensor(t) => t,
        other => panic!("not a tensor: {other:?}"),
    }
}

fn probabilities(p: f64, n: usize) -> Vec<(String, Value)> {
    vec![("p".into(), Value::Tensor(Tensor::new(vec![n], Data::F64(vec![p; n].into()))))]
}

const UNSEEDED_BERNOULLI: &str = r#"<ir_version: 10, opset_import: ["" : 22]>
main (double[20000] p) => (int64[20000] y) { y = Bernoulli <dtype = 7> (p) }"#;

const SEEDED_BERNOULLI: &str = r#"<ir_version: 10, opset_import: ["" : 22]>
main (double[20000] p) => (int64[20000] y) { y = Bernoulli <dtype = 7, seed = 8.0> (p) }"#;

#[test]
fn unseeded_bernoulli_draws_ones_at_the_given_rate() {
    let y = run(UNSEEDED_BERNOULLI, probabilities(0.3, 20000));
    let Data::I64(v) = &*y.data else { panic!("not int64: {:?}", y.data_type()) };
    assert!(v.iter().all(|&b| b == 0 || b == 1));
    let rate = v.iter().sum::<i64>() as f64 / v.len() as f64;
    // 20,000 draws: the standard deviation of the rate is 0.0032.
    assert!((rate - 0.3).abs() < 0.02, "rate {rate}");
}

#[test]
fn the_same_seed_gives_the_same_draws_and_another_run_without_one_differs() {
    let a = run(SEEDED_BERNOULLI, probabilities(0.5, 20000));
    let b = run(SEEDED_BERNOULLI, probabilities(0.5, 20000));
    assert_eq!(a, b);
    let c = run(UNSEEDED_BERNOULLI, probabilities(0.5, 20000));
    assert_ne!(a, c, "an unseeded run drew the seeded run's 20,000 values");
}

#[test]
fn bernoulli_refuses_a_probability_outside_zero_to_one() {
    let analysis = analyze_text(UNSEEDED_BERNOULLI);
    let plan = Plan::new(&analysis.model).expect("plannable");
    let error = plan.run(probabilities(1.5, 20000), &RunOptions::default()).expect_err("refused");
    assert_eq!(error.kind(), Some(onnx_eval::ErrorKind::BadInput), "{error}");
    assert!(error.to_string().contains("probability 1.5"), "the value is named: {error}");
}

#[test]
fn unseeded_uniform_draws_stay_between_low_and_high() {
    let y = run(
        r#"<ir_version: 10, opset_import: ["" : 22]>
        main () => (float[100, 100] y) { y = RandomUniform <shape = [100, 100], low = -3.0, high = -1.0> () }"#,
        Vec::new(),
    );
    let Data::F32(v) = &*y.data else { panic!("not float: {:?}", y.data_type()) };
    assert!(v.iter().all(|x| (-3.0..=-1.0).contains(x)));
    let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
    assert!((mean + 2.0).abs() < 0.05, "mean {mean}");
}

#[test]
fn multinomial_draws_each_class_at_its_softmax_probability() {
    let logits = [0.2f32.ln(), 0.5f32.ln(), 0.3f32.ln(), 0.1, 0.1, 4.0];
    let y = run(
        r#"<ir_version: 10, opset_import: ["" : 22]>
        main (float[2, 3] x) => (int64[2, 20000] y) { y = Multinomial <sample_size = 20000, dtype = 7, seed = 1.0> (x) }"#,
        vec![("x".into(), Value::Tensor(Tensor::new(vec![2, 3], Data::F32(logits.to_vec().into()))))],
    );
    assert_eq!(y.shape, [2, 20000]);
    let Data::I64(v) = &*y.data else { panic!("not int64: {:?}", y.data_type()) };
    let softmax_second = {
        let e: Vec<f64> = [0.1f64, 0.1, 4.0].iter().map(|x| x.exp()).collect();
        let total: f64 = e.iter().sum();
        [e[0] / total, e[1] / total, e[2] / total]
    };
    for (row, want) in v.chunks(20000).zip([[0.2, 0.5, 0.3], softmax_second]) {
        for (class, p) in want.iter().enumerate() {
            let rate = row.iter().filter(|&&c| c == class as i64).count() as f64 / 20000.0;
            assert!((rate - p).abs() < 0.02, "class {class}: rate {rate}, probability {p}");
        }
    }
}
