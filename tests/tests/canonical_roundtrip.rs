//! Binary → canonical text → binary gives back the same bytes for every corpus model (the
//! generated ones and the real exported ones in `corpus/real`). The printer is total, so
//! every model prints. Where a file's own encoding is not the canonical one (fields out of
//! order, unpacked repeated numbers: some exporters write that), the same bytes cannot come
//! back from any reader that keeps only the model; the text must then read back to the same
//! model, i.e. the same canonical encoding.

use bytes::Bytes;
use onnx_core::analysis::analyze_text;
use onnx_core::{binary, print};
use onnx_tests::{corpus_dir, corpus_models};

#[test]
fn every_corpus_model_survives_canonical_text() {
    let mut printed = 0;
    let mut failures = Vec::new();
    for path in corpus_models() {
        let rel = path.strip_prefix(corpus_dir()).expect("in corpus").to_string_lossy().into_owned();
        let original = std::fs::read(&path).expect("readable");
        let model = binary::decode_model(Bytes::from(original.clone()), &rel).expect("decodes");
        let text = print::canonical::model(&model);
        let mut streamed = Vec::new();
        print::canonical::write_model(&model, &mut streamed).expect("writes to memory");
        if streamed != text.as_bytes() {
            failures.push(format!("{rel}: the streamed text differs from the text"));
        }
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
        let canonical = binary::encode_model(&model);
        let again = binary::encode_model(&analysis.model);
        if canonical == original && again != original {
            failures.push(format!("{rel}: reads back to different bytes"));
        } else if again != canonical {
            failures.push(format!("{rel}: reads back to a different model"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {printed} differ:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
    assert!(printed >= 1884);
}
