//! The ai.onnx.ml operators against onnxruntime: the cases of `tests/fixtures/ml` (written by
//! `gen_ml_cases.py`: classifiers and regressors in the layouts skl2onnx and onnxmltools
//! write, maps in and out) run by the evaluator and compared with onnxruntime's outputs,
//! floats within rtol 1e-4 and atol 1e-5 (onnxruntime's logistic and softmax are
//! polynomial approximations). Which cases match is a snapshot; a panic fails. Every
//! operator of the domain must have a kernel and a case here or in onnx's node tests.

use std::collections::BTreeSet;
use std::path::PathBuf;

use onnx_core::binary::read_model;
use onnx_tests::fixture_dir;

mod common;

fn case_dirs() -> Vec<PathBuf> {
    common::case_dirs(&fixture_dir("ml"))
}

#[test]
fn ml_operators_match_onnxruntime() {
    let dirs = case_dirs();
    assert!(dirs.len() >= 60, "only {} ai.onnx.ml cases", dirs.len());
    let mut lines = Vec::new();
    let mut matched = 0;
    for dir in &dirs {
        let name = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        match std::panic::catch_unwind(|| common::run_case(dir, 1e-4, 1e-5)) {
            Ok(Ok(())) => {
                matched += 1;
                lines.push(format!("{name}: matches"));
            }
            Ok(Err(e)) => lines.push(format!("{name}: {}", e.chars().take(240).collect::<String>())),
            Err(_) => panic!("the evaluator panicked on {name}"),
        }
    }
    insta::assert_snapshot!("results", format!("{matched} of {} match\n\n{}", dirs.len(), lines.join("\n")));
}

/// Every ai.onnx.ml operator onnx 1.23.2 defines has a kernel, and a case here or a node
/// test of onnx's (the four the backend tests exercise).
#[test]
fn every_ml_operator_has_a_kernel_and_a_case() {
    let node_tested = ["LabelEncoder", "Binarizer", "ArrayFeatureExtractor", "TreeEnsemble"];
    let mut covered: BTreeSet<String> = node_tested.iter().map(|s| s.to_string()).collect();
    for dir in case_dirs() {
        let model = read_model(&dir.join("model.onnx")).expect("a case's model");
        covered.extend(model.nodes.iter().filter_map(|(_, n)| n.op_type.as_ref().map(ToString::to_string)));
    }
    let (family, kernel) = onnx_eval::kernels::OTHER_DOMAINS
        .iter()
        .find(|(d, _)| *d == "ai.onnx.ml")
        .map(|(d, f)| (*d, *f))
        .expect("an ai.onnx.ml family");
    let mut missing = Vec::new();
    for schema in onnx_core::schema::registry().operators_at(family, i64::MAX) {
        if kernel(&schema.op).is_none() {
            missing.push(format!("{}: no kernel", schema.op));
        } else if !covered.contains(&schema.op) {
            missing.push(format!("{}: no case", schema.op));
        }
    }
    assert!(missing.is_empty(), "ai.onnx.ml operators not covered: {missing:?}");
}
