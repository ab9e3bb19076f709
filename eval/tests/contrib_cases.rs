//! onnxruntime's contrib operators (`com.microsoft`) against onnxruntime's CPU kernels: the
//! cases of `tests/fixtures/contrib_ops` (written by `gen_contrib_cases.py`) run by the
//! evaluator, floats within rtol 1e-5 and atol 1e-5 (onnxruntime computes its activations
//! with its own float approximations of tanh and erf). Every case must match.

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
