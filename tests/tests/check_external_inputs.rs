//! Constant inputs stored in external data that onnx's inference parses (Reshape's shape,
//! Slice's starts…): `onnx check` against the verdicts onnx 1.23.2's `check_model(path,
//! full_check=True)` and onnxruntime's loader gave each model of
//! tests/fixtures/check/external_inputs (recorded by gen_external_inputs.py in
//! external_inputs.tsv). By the verdict contract a model either refuses is invalid, and
//! where they refuse it for the external input we say so with `external-constant-input`;
//! the models both load (the input read only once the data's rank is known, or the external
//! tensor one that no inference parses) are valid. Every case's diagnostics are held in one
//! snapshot (`external_inputs_diagnostics`), as the invalid set's are.

use onnx_core::binary;
use onnx_core::check::{CheckOptions, is_valid};
use onnx_core::pipeline::check_model;
use onnx_tests::fixture_dir;

#[test]
fn external_constant_inputs_get_the_verdict_of_onnx_and_onnxruntime() {
    let table = std::fs::read_to_string(fixture_dir("check").join("external_inputs.tsv")).expect("external_inputs.tsv");
    let (mut total, mut refused, mut failures) = (0usize, 0usize, Vec::new());
    let mut report = String::new();
    for line in table.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [case, onnx, onnx_message, ort, ort_message, ..] = cols[..] else { panic!("bad row: {line}") };
        let path = fixture_dir("check").join("external_inputs").join(case).join("model.onnx");
        let model = binary::read_model(&path).unwrap_or_else(|e| panic!("{case}: {e}"));
        let options =
            CheckOptions { model_dir: Some(binary::model_dir(&path)), full_check: true, ..CheckOptions::default() };
        let diagnostics = check_model(&model, &options).diagnostics;
        let codes: Vec<&str> = diagnostics.iter().map(|d| d.code).collect();
        let paths = onnx_core::proto_path::ProtoPaths::new(&model);
        report.push_str(&format!("{case}\n"));
        for d in &diagnostics {
            let severity = format!("{:?}", d.severity).to_lowercase();
            report.push_str(&format!(
                "  {severity}[{}] {}: {}\n",
                d.code,
                paths.described(&model, d.anchor),
                d.message
            ));
        }
        let expected_valid = onnx == "valid" && ort == "valid";
        let for_parsing =
            [onnx_message, ort_message].iter().any(|m| m.contains("Cannot parse data from external tensors"));
        total += 1;
        refused += usize::from(for_parsing);
        if is_valid(&diagnostics) != expected_valid || (for_parsing && !codes.contains(&"external-constant-input")) {
            failures.push(format!("{case}: onnx {onnx}, onnxruntime {ort}, ours {codes:?}"));
        }
    }
    assert!(total >= 60 && refused >= 30, "{total} models, {refused} refused for an external input");
    assert!(total > refused + 20, "too few models that both accept: {total} models, {refused} refused");
    assert!(failures.is_empty(), "{} verdicts differ:\n{}", failures.len(), failures.join("\n"));
    insta::assert_snapshot!("external_inputs_diagnostics", report);
}
