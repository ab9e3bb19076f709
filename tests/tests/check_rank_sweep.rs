//! One input of no shape beside another of a wrong rank (tests/fixtures/check/rank_sweep,
//! written with the verdicts of onnx 1.23.2's full check and onnxruntime's loader by
//! gen_rank_sweep.py): `onnx check` holds to the verdict contract on each, invalid exactly
//! when onnx or onnxruntime refuses the model (docs/diagnostics.md, "Verdicts"), not
//! counting what onnxruntime merely does not implement (`NOT_IMPLEMENTED`). These are
//! the cases of the sweep on which it once did not: onnx judges some ranks only once other
//! inputs have shapes, and some whatever the others have. And the cases onnx accepts and
//! onnxruntime refuses where `onnx check` does not yet: onnxruntime infers through the
//! function bodies of operators it has no kernel for (SoftmaxCrossEntropyLoss,
//! NegativeLogLikelihoodLoss, GroupNormalization, Attention) and fails there. Those are
//! listed in rank_sweep_gaps.tsv (`UPDATE_EXPECT=1` rewrites it); the test fails when one
//! is closed without being removed, or a new one opens.

use std::collections::BTreeSet;

use onnx_core::binary;
use onnx_core::check::{CheckOptions, is_valid};
use onnx_core::pipeline::check_model;
use onnx_tests::fixture_dir;

#[test]
fn a_shapeless_input_beside_one_of_a_wrong_rank_gets_the_contracts_verdict() {
    let table = std::fs::read_to_string(fixture_dir("check").join("rank_sweep.tsv")).expect("rank_sweep.tsv");
    let (mut total, mut refused, mut failures, mut gaps) = (0usize, 0usize, Vec::new(), Vec::new());
    for line in table.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [case, onnx, onnx_message, ort, ort_message, ..] = cols[..] else { panic!("bad row: {line}") };
        assert_ne!(ort, "crash", "{case}: onnxruntime crashed; the sweep leaves such models out");
        let path = fixture_dir("check").join("rank_sweep").join(format!("{case}.onnx"));
        let model = binary::read_model(&path).unwrap_or_else(|e| panic!("{case}: {e}"));
        let options =
            CheckOptions { model_dir: Some(binary::model_dir(&path)), full_check: true, ..CheckOptions::default() };
        let diagnostics = check_model(&model, &options).diagnostics;
        // The contract does not count a kernel onnxruntime lacks (bfloat16 Attention here),
        // nor what its kernels do not implement when we warn of it (recurrent layout = 1).
        let unimplemented = ort == "invalid"
            && (ort_message.contains("NOT_IMPLEMENTED")
                || diagnostics.iter().any(|d| d.code == "unsupported-by-onnxruntime"));
        let expected_valid = onnx == "valid" && (ort == "valid" || unimplemented);
        total += 1;
        refused += usize::from(!expected_valid);
        let ours_valid = is_valid(&diagnostics);
        if ours_valid && onnx == "valid" && ort == "invalid" && !unimplemented {
            gaps.push(format!("{case}\t{}", ort_message.chars().take(120).collect::<String>()));
        } else if ours_valid != expected_valid {
            let codes: Vec<&str> = diagnostics.iter().map(|d| d.code).collect();
            failures.push(format!(
                "{case}: onnx {onnx} ({onnx_message}), onnxruntime {ort} ({ort_message}), ours {codes:?}"
            ));
        }
    }
    assert!(total >= 600, "{total} models: rank_sweep.tsv is incomplete");
    assert!(refused >= 200 && total - refused >= 200, "{refused} of {total} refused: both kinds must be held");
    assert!(failures.is_empty(), "{} verdicts differ:\n{}", failures.len(), failures.join("\n"));
    let gaps_path = fixture_dir("check").join("rank_sweep_gaps.tsv");
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        let header = "# cases onnxruntime refuses and `onnx check` accepts (see check_rank_sweep.rs)\n\
                      # case\tonnxruntime's message\n";
        std::fs::write(&gaps_path, format!("{header}{}\n", gaps.join("\n"))).expect("writable");
        return;
    }
    let listed = onnx_tests::first_column(&gaps_path);
    let found: BTreeSet<String> = gaps.iter().filter_map(|g| g.split('\t').next().map(str::to_owned)).collect();
    let new: Vec<&String> = found.difference(&listed).collect();
    let closed: Vec<&String> = listed.difference(&found).collect();
    assert!(new.is_empty(), "{} cases onnxruntime refuses now pass our checks: {new:?}", new.len());
    assert!(closed.is_empty(), "{} listed gaps are closed: remove them (UPDATE_EXPECT=1): {closed:?}", closed.len());
}
