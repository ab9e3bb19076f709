//! Binary → canonical text → binary gives back the same bytes for every corpus model. Models
//! the printer refuses would be listed in `NOT_YET` with the construct it cannot write; the
//! list is empty.

use bytes::Bytes;
use onnx_core::analysis::analyze_text;
use onnx_core::{binary, print};
use onnx_tests::{corpus_dir, corpus_models};

/// Models the canonical printer refuses, and why. The aim is none; each entry names the
/// construct still missing from the text format.
const NOT_YET: &[(&str, &str)] = &[];

#[test]
fn every_corpus_model_survives_canonical_text() {
    let mut printed = 0;
    let mut refused = Vec::new();
    let mut failures = Vec::new();
    for path in corpus_models() {
        let rel = path.strip_prefix(corpus_dir()).expect("in corpus").to_string_lossy().into_owned();
        let original = std::fs::read(&path).expect("readable");
        let model = binary::decode_model(Bytes::from(original.clone()), &rel).expect("decodes");
        let text = match print::canonical::model(&model) {
            Ok(text) => text,
            Err(why) => {
                refused.push((rel, why.to_string()));
                continue;
            }
        };
        printed += 1;
        let analysis = analyze_text(&text);
        // Name-resolution findings are about the model (the corpus has deliberately odd ones);
        // the text itself must read without an error.
        if !analysis.readable
            && let Some(d) = analysis.diagnostics.first()
        {
            failures.push(format!(
                "{rel}: the text has {} diagnostics, first: {} {}",
                analysis.diagnostics.len(),
                d.code,
                d.message
            ));
            continue;
        }
        if binary::encode_model(&analysis.model) != original {
            failures.push(format!("{rel}: reads back to a different model"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {printed} differ:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
    let unexpected: Vec<String> = refused
        .iter()
        .filter(|(rel, why)| !NOT_YET.iter().any(|(m, reason)| m == rel && why.contains(reason)))
        .map(|(rel, why)| format!("{rel}: {why}"))
        .collect();
    assert!(
        unexpected.is_empty(),
        "{} refused:\n{}",
        unexpected.len(),
        unexpected[..unexpected.len().min(20)].join("\n")
    );
    assert_eq!(refused.len(), NOT_YET.len(), "a listed exception now prints: remove it from NOT_YET");
    assert!(printed >= 1884);
}
