//! The editor's "open binary model as text" on every real exported model of the corpus
//! (`tests/corpus/real`): `onnx/binaryToText` answers the model's outline (what `onnx convert`
//! writes beside it), which says the model exactly once its references are read in, and which
//! the server opens as a document with no syntax or lowering error (findings about the model
//! itself, such as inference warnings, may remain); opened beside the model, hover on a
//! tensor given by reference says where its bytes are and what values they hold.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use common::Harness;
use serde_json::json;

/// Codes of diagnostics about the text itself, as opposed to the model it describes.
const TEXT_CODES: &[&str] = &["unexpected-token", "unexpected-end", "unterminated-string", "bad-embedded-proto"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_real_model_opens_as_text() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/real").canonicalize().unwrap();
    let mut models: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "onnx"))
        .collect();
    models.sort();
    assert!(models.len() >= 12, "the real corpus is missing: {} models", models.len());
    let mut referenced = 0;
    for model in &models {
        // A server per model: each document is then version 1 of its own session.
        let mut h = Harness::start(false).await;
        let name = model.file_name().unwrap().to_string_lossy().into_owned();
        let answer = h.request("onnx/binaryToText", json!({ "uri": format!("file://{}", model.display()) })).await;
        assert!(answer.get("error").is_none(), "{name}: {answer}");
        let text = answer["result"]["text"].as_str().unwrap().to_owned();
        // The outline: read back, with the bytes it refers to read in from the model file, it
        // is the model, byte for byte.
        let mut back = onnx_core::analysis::analyze_text(&text).model;
        onnx_core::external::embed_where(&mut back, Some(dir.clone()), onnx_core::external::is_model_file).unwrap();
        assert!(onnx_core::binary::encode_model(&back) == std::fs::read(model).unwrap(), "{name}: not the model");
        h.uri = format!("file://{}", model.with_extension("onnxtxt").display());
        h.open(&text).await;
        let diagnostics = h.diagnostics().await;
        let about_text: Vec<_> = diagnostics
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["severity"] == json!(1) && TEXT_CODES.contains(&d["code"].as_str().unwrap_or("")))
            .collect();
        assert!(about_text.is_empty(), "{name}: the text does not read: {about_text:?}");
        // Hover on the first reference, and on the name of the tensor it holds.
        if let Some(at) = text.find("\"location\": ") {
            let position = h.position(at);
            let answer =
                h.request("textDocument/hover", json!({ "textDocument": h.doc(), "position": position })).await;
            let shown = answer["result"]["contents"]["value"].as_str().unwrap_or_default().to_owned();
            assert!(shown.contains(&format!("external data: `{name}`, offset ")), "{name}: {shown}");
            assert!(shown.contains(" KiB; ") || shown.contains(" MiB; ") || shown.contains(" B; "), "{name}: {shown}");
            assert!(shown.contains("min ") || !shown.contains("float"), "{name}: no statistics: {shown}");
            referenced += 1;
        }
    }
    assert!(referenced >= 10, "only {referenced} models with a tensor by reference");
}
