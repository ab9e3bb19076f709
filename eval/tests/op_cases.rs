//! Default-domain operators onnx's backend node tests leave out, against onnxruntime: the
//! cases of `tests/fixtures/ops` (written by `gen_op_cases.py`; where onnxruntime has no
//! kernel for a version or an element type, the operator's definition computed with numpy
//! or onnx's reference evaluator) run by the evaluator, floats within rtol 1e-5 and atol
//! 1e-6, integers exactly. Among them the integer cases (`int64_*`, `uint64_*`, `int8_*`,
//! `int_casts`): values past 2^53 and the ends of the types through reductions, ArgMax and
//! TopK, Clip, the sign operators, arithmetic, CumSum, Pow, MatMul, Range and Cast, where a
//! detour through f64 would round. Every case must match.

use onnx_tests::fixture_dir;

mod common;

#[test]
fn operators_without_node_tests_match_onnxruntime() {
    let dirs = common::case_dirs(&fixture_dir("ops"));
    assert!(dirs.len() >= 5, "only {} cases in tests/fixtures/ops", dirs.len());
    let mut failed = Vec::new();
    for dir in &dirs {
        if let Err(e) = common::run_case(dir, 1e-5, 1e-6) {
            failed.push(format!("{}: {e}", dir.display()));
        }
    }
    assert!(failed.is_empty(), "{} of {} cases differ:\n{}", failed.len(), dirs.len(), failed.join("\n"));
}
