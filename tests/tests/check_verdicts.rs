//! `onnx check` against onnx 1.23.2's `check_model(full_check=True)`: the same verdict on
//! every corpus model, every model of the invalid set (tests/fixtures/check/invalid) and
//! every node test with one input made shapeless (tests/fixtures/check/shapeless_inputs,
//! core/schemas/gen_shapeless_inputs.py), whose verdicts onnx gave when they were generated
//! (tests/fixtures/check/verdicts.tsv).
//!
//! Where we deliberately differ, differences.tsv says so with the reason, and the test holds
//! us to that listed verdict instead. Each invalid model is named after the diagnostic code
//! it must produce, so every rule is shown to fire.

use std::collections::{BTreeSet, HashMap};

use onnx_core::binary;
use onnx_core::check::{CheckOptions, is_valid};
use onnx_core::pipeline::check_model;
use onnx_tests::tests_dir;

fn table(name: &str) -> Vec<Vec<String>> {
    let path = tests_dir().join("fixtures/check").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect()
}

/// Our diagnostics for one model file, checked as `onnx check FILE` does.
fn check_file(rel: &str) -> Vec<onnx_core::diagnostic::Diagnostic> {
    read_and_check(rel).1
}

/// The model read from `rel` and our diagnostics for it, for tests that describe places too.
fn read_and_check(rel: &str) -> (onnx_core::ir::Model, Vec<onnx_core::diagnostic::Diagnostic>) {
    let path = tests_dir().join(rel);
    let model = binary::read_model(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let options =
        CheckOptions { model_dir: Some(binary::model_dir(&path)), full_check: true, ..CheckOptions::default() };
    let diagnostics = check_model(&model, &options).diagnostics;
    (model, diagnostics)
}

#[test]
fn verdicts_equal_onnx_checker() {
    let verdicts = table("verdicts.tsv");
    let differences: HashMap<String, (String, String)> =
        table("differences.tsv").into_iter().map(|r| (r[0].clone(), (r[1].clone(), r[2].clone()))).collect();
    let invalid_set = verdicts.iter().filter(|r| r[0].starts_with("fixtures/check/invalid/")).count();
    assert!(verdicts.len() >= 1884 + 150, "verdict table incomplete: {} rows", verdicts.len());
    assert!(invalid_set >= 150, "the invalid set has {invalid_set} models, fewer than 150");
    let mut mismatches = Vec::new();
    for row in &verdicts {
        let (rel, onnx_verdict) = (&row[0], &row[1]);
        let diagnostics = check_file(rel);
        let ours = if is_valid(&diagnostics) { "valid" } else { "invalid" };
        let expected = differences.get(rel).map_or(onnx_verdict.as_str(), |(v, _)| v.as_str());
        if ours != expected {
            let codes: Vec<&str> = diagnostics.iter().map(|d| d.code).collect();
            mismatches.push(format!("{rel}: ours {ours}, expected {expected} (onnx: {}); {codes:?}", row[2]));
        }
    }
    for rel in differences.keys() {
        assert!(verdicts.iter().any(|r| &r[0] == rel), "differences.tsv lists {rel}, which has no verdict");
    }
    assert!(mismatches.is_empty(), "{} verdicts differ:\n{}", mismatches.len(), mismatches.join("\n"));
}

#[test]
fn every_invalid_model_reports_the_code_it_is_named_after() {
    let dir = tests_dir().join("fixtures/check/invalid");
    let mut codes = BTreeSet::new();
    let mut missing = Vec::new();
    for path in onnx_tests::files_with_suffix(&dir, ".onnx") {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        let code = name.split("--").next().unwrap_or_default().to_owned();
        let rel = format!("fixtures/check/invalid/{name}");
        let found: Vec<&str> = check_file(&rel).iter().map(|d| d.code).collect();
        if !found.contains(&code.as_str()) {
            missing.push(format!("{name}: got {found:?}"));
        }
        codes.insert(code);
    }
    assert!(codes.len() >= 50, "only {} distinct codes are exercised", codes.len());
    assert!(missing.is_empty(), "{} models miss their code:\n{}", missing.len(), missing.join("\n"));
}

/// What `onnx check` says about each model of the invalid set, as a person reads it (code,
/// severity, place by node name and operator, message, related places): one snapshot, so
/// that the conditions only a binary model can show (a sparse value, an If whose branches
/// make a value of no type, raw data…) have their diagnostic held as the text fixtures'
/// are.
#[test]
fn the_invalid_set_says_what_it_says() {
    let dir = tests_dir().join("fixtures/check/invalid");
    let mut report = String::new();
    for path in onnx_tests::files_with_suffix(&dir, ".onnx") {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        let (model, diagnostics) = read_and_check(&format!("fixtures/check/invalid/{name}"));
        let paths = onnx_core::proto_path::ProtoPaths::new(&model);
        report.push_str(&format!("{name}\n"));
        for d in diagnostics {
            let severity = format!("{:?}", d.severity).to_lowercase();
            let at = paths.described(&model, d.anchor);
            report.push_str(&format!("  {severity}[{}] {at}: {}\n", d.code, d.message));
            for (anchor, what) in &d.related {
                report.push_str(&format!("    note: {}: {what}\n", paths.described(&model, *anchor)));
            }
        }
    }
    insta::assert_snapshot!("invalid_set_diagnostics", report);
}

#[test]
fn every_code_of_the_invalid_set_is_documented() {
    let doc = std::fs::read_to_string(tests_dir().join("../docs/diagnostics.md")).expect("docs/diagnostics.md");
    let dir = tests_dir().join("fixtures/check/invalid");
    let mut undocumented = BTreeSet::new();
    for path in onnx_tests::files_with_suffix(&dir, ".onnx") {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let code = name.split("--").next().unwrap_or_default();
        if !doc.contains(&format!("`{code}`")) {
            undocumented.insert(code.to_owned());
        }
    }
    // And every code the checker's text fixtures show (`error[code]:` annotations).
    for sub in ["fixtures/check/text", "fixtures/check/sonnx"] {
        for path in onnx_tests::files_with_suffix(&tests_dir().join(sub), ".onnxtxt") {
            let text = std::fs::read_to_string(&path).expect("fixture");
            for (at, _) in text.match_indices("error[").chain(text.match_indices("warning[")) {
                let code = text[at..].split_once('[').and_then(|(_, r)| r.split_once(']')).map_or("", |(c, _)| c);
                if !doc.contains(&format!("`{code}`")) {
                    undocumented.insert(code.to_owned());
                }
            }
        }
    }
    assert!(undocumented.is_empty(), "codes missing from docs/diagnostics.md: {undocumented:?}");
}

/// The checklist of onnx's inference conditions (onnx_conditions.tsv, written by
/// gen_checklist.py from onnx's sources): every condition it says we enforce names a
/// documented code and a file of ours that exists (and, where onnx was seen failing a model
/// of ours with its message, that model), and each code of the node rules
/// (`core/src/infer/validate/`) is claimed by some row.
#[test]
fn the_checklist_of_onnx_conditions_names_documented_codes_and_real_places() {
    let doc = std::fs::read_to_string(tests_dir().join("../docs/diagnostics.md")).expect("docs/diagnostics.md");
    let rows = table("onnx_conditions.tsv");
    assert!(rows.len() >= 700, "{} conditions: the checklist covers every call", rows.len());
    let mut claimed = BTreeSet::new();
    for row in &rows {
        let [place, _call, _owner, _message, code, ours, seen] = row.as_slice() else {
            panic!("a checklist row has 7 fields: {row:?}");
        };
        if code.is_empty() {
            continue;
        }
        // Where onnx was seen failing a model of ours with the condition's message: a rule
        // fixture (and its node), an invalid or corpus model, an external-data case, or a
        // mutant of a real model.
        if let Some(file) = seen.split(' ').next().filter(|f| !f.is_empty()) {
            let path = tests_dir().join(if file.starts_with("corpus/") {
                file.to_owned()
            } else {
                format!("fixtures/check/{file}")
            });
            assert!(path.exists(), "{place}: seen in {seen}, which does not exist");
        }
        // A condition no model reaches names the reason instead of a place of ours.
        if code == "(out of reach)" {
            assert!(ours.len() > 20, "{place}: a condition out of reach needs its reason");
            continue;
        }
        assert!(doc.contains(&format!("`{code}`")), "{place}: code {code} is not in docs/diagnostics.md");
        let file = ours.split(' ').next().unwrap_or_default();
        assert!(tests_dir().join("..").join(file).is_file(), "{place}: {file} does not exist");
        claimed.insert(code.clone());
    }
    for code in ["invalid-axis", "attribute-size", "invalid-attribute-value", "input-rank", "output-count"] {
        assert!(claimed.contains(code), "no condition of the checklist is enforced as {code}");
    }
}
