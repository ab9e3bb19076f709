//! The `onnx` printer style equals `onnx.printer.to_text` of onnx 1.23.2 byte for byte on
//! every corpus model onnx can print (golden files in tests/corpus/golden/onnx-text).

use bytes::Bytes;
use onnx_core::{binary, print};
use onnx_tests::{corpus_dir, corpus_models};

#[test]
fn onnx_style_matches_onnx_printer_on_the_corpus() {
    let golden_root = corpus_dir().join("golden/onnx-text");
    let mut compared = 0;
    let mut failures = Vec::new();
    for path in corpus_models() {
        let rel = path.strip_prefix(corpus_dir()).expect("inside corpus");
        if rel.starts_with("golden") {
            continue;
        }
        let golden = golden_root.join(rel).with_extension("onnxtxt");
        let Ok(expected) = std::fs::read_to_string(&golden) else {
            continue;
        };
        let data = Bytes::from(std::fs::read(&path).expect("readable"));
        let model = binary::decode_model(data, &path.display().to_string()).expect("decodes");
        let actual = print::onnx_style::model(&model);
        compared += 1;
        if actual != expected {
            // A window around the first differing byte: lines can be very long.
            let at = expected
                .bytes()
                .zip(actual.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(expected.len().min(actual.len()));
            let window = |s: &str| {
                let start = (0..=at.saturating_sub(60)).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
                let end = ((at + 60).min(s.len())..=s.len()).find(|&i| s.is_char_boundary(i)).unwrap_or(s.len());
                s[start..end].to_owned()
            };
            failures.push(format!(
                "{} at byte {at}:\n expected: …{}…\n   actual: …{}…",
                rel.display(),
                window(&expected),
                window(&actual)
            ));
        }
    }
    assert!(compared >= 1884, "only {compared} golden files");
    assert!(
        failures.is_empty(),
        "{} of {compared} differ; first ones:\n{}",
        failures.len(),
        failures.iter().take(8).cloned().collect::<Vec<_>>().join("\n")
    );
}

/// `onnx convert --style onnx` skips reading its text back when `surely_lossy` says the text
/// loses something; on every corpus model where it says so, reading back must indeed give a
/// different model.
#[test]
fn surely_lossy_models_do_not_read_back_the_same() {
    let mut lossy = 0;
    for path in corpus_models() {
        let data = Bytes::from(std::fs::read(&path).expect("readable"));
        let Ok(model) = binary::decode_model(data, &path.display().to_string()) else {
            continue;
        };
        if !print::onnx_style::surely_lossy(&model) {
            continue;
        }
        lossy += 1;
        let again = onnx_core::analysis::analyze_text(&print::onnx_style::model(&model));
        assert!(
            again.has_errors() || binary::encode_model(&again.model) != binary::encode_model(&model),
            "{}: called lossy, but reads back the same",
            path.display()
        );
    }
    assert!(lossy >= 5, "only {lossy} models with raw tensor data");
}
