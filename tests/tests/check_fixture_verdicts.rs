//! The verdict contract (docs/diagnostics.md, "Verdicts") on every node of the checker's
//! rule fixtures. `tests/fixtures/check/gen_fixture_verdicts.py` split each fixture into
//! models of one node and recorded onnx 1.23.2's full check and onnxruntime's loader on
//! each (`fixture_verdicts.tsv`); this test splits them the same way and runs `onnx check`
//! on each model:
//!
//! * a model both accept passes;
//! * a model either refuses fails, unless onnx accepts it and onnxruntime refuses it only
//!   for what its kernels do not implement: then it passes with the
//!   `unsupported-by-onnxruntime` warning.
//!
//! So each rule a fixture line shows is tied to what onnx and onnxruntime do with it, not
//! only to the message we print. A fixture edited without regenerating the table fails.

use std::collections::BTreeMap;

use onnx_core::check::{CheckOptions, is_valid};
use onnx_core::pipeline::check_text;
use onnx_tests::fixture_dir;

/// The first graph input's name: after its type, which ends at the first space outside
/// brackets (as the generator reads it).
fn first_input_name(signature: &str) -> &str {
    let rest = signature.strip_prefix("g (").unwrap_or(signature);
    let mut depth = 0i32;
    for (i, c) in rest.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ' ' if depth == 0 => {
                let name = &rest[i + 1..];
                return name[..name.find([',', ')']).unwrap_or(name.len())].trim();
            }
            _ => {}
        }
    }
    panic!("no input in {signature:?}")
}

/// (node name, model text) for each node line of a fixture, as the generator splits it.
fn split(text: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let header = lines.iter().find(|l| l.starts_with('<')).expect("a header line");
    let signature = lines.iter().find(|l| l.starts_with("g (")).expect("a graph signature");
    let input = first_input_name(signature);
    lines
        .iter()
        .filter(|l| l.starts_with("  ") && !l.starts_with("  y ="))
        .map(|line| {
            let name = line.split('=').next().unwrap_or_default().trim().to_owned();
            (name, format!("{header}\n{signature}\n{line}\n  y = Identity ({input})\n}}\n"))
        })
        .collect()
}

#[test]
fn each_fixture_node_gets_the_verdict_of_onnx_and_onnxruntime() {
    let table =
        std::fs::read_to_string(fixture_dir("check").join("fixture_verdicts.tsv")).expect("fixture_verdicts.tsv");
    let mut recorded: BTreeMap<String, BTreeMap<String, (String, String)>> = BTreeMap::new();
    for line in table.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [fixture, node, onnx, _, ort, ..] = cols[..] else { panic!("bad row: {line}") };
        recorded.entry(fixture.to_owned()).or_default().insert(node.to_owned(), (onnx.to_owned(), ort.to_owned()));
    }
    assert!(recorded.len() >= 6, "{} fixtures recorded", recorded.len());
    let options = CheckOptions { full_check: true, ..CheckOptions::default() };
    let (mut total, mut failures) = (0usize, Vec::new());
    for (fixture, verdicts) in &recorded {
        let text =
            std::fs::read_to_string(fixture_dir("check").join(format!("text/{fixture}.onnxtxt"))).expect("fixture");
        let models = split(&text);
        let names: Vec<&String> = models.iter().map(|(n, _)| n).collect();
        let unrecorded: Vec<&&String> = names.iter().filter(|n| !verdicts.contains_key(**n)).collect();
        assert!(
            unrecorded.is_empty() && names.len() == verdicts.len(),
            "{fixture}: the nodes and the recorded verdicts differ (run gen_fixture_verdicts.py): {unrecorded:?}"
        );
        for (name, model) in &models {
            let (onnx, ort) = &verdicts[name];
            let diagnostics = check_text(model, &options).diagnostics;
            let ours_valid = is_valid(&diagnostics);
            let warned = diagnostics.iter().any(|d| d.code == "unsupported-by-onnxruntime");
            let expected_valid = onnx == "valid" && (ort == "valid" || warned);
            total += 1;
            if ours_valid != expected_valid {
                let codes: Vec<&str> = diagnostics.iter().map(|d| d.code).collect();
                failures.push(format!("{fixture} {name}: onnx {onnx}, onnxruntime {ort}, ours {codes:?}"));
            }
        }
    }
    assert!(total >= 90, "{total} fixture nodes");
    assert!(failures.is_empty(), "{} verdicts differ:\n{}", failures.len(), failures.join("\n"));
}
