//! One analysis per document version: the diagnostics task and every request after a change
//! share it (a request that arrives while it is being made waits for it). A test binary of
//! its own, since it counts the analyses of the whole process.

#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::Ordering;

use common::Harness;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_changes_with_requests_analyses_each_version_at_most_once() {
    let mut text = String::from("<ir_version: 10, opset_import: [\"\" : 21]>\nmain (float[N] x) => (float[N] y) {\n");
    for i in 0..2000 {
        text.push_str(&format!("  v{i} = Relu({})\n", if i == 0 { "x".to_owned() } else { format!("v{}", i - 1) }));
    }
    text.push_str("  y = Identity(v1999)\n}\n");
    let mut h = Harness::start(false).await;
    let before = onnx_lsp::snapshot::ANALYSES.load(Ordering::Relaxed);
    h.open(&text).await;
    let versions = 12;
    for _ in 1..versions {
        // Type a comment line into the middle, then ask what an editor asks after each change.
        let at = h.text.find("  v1000 = ").unwrap();
        h.edit(at, at, "  # edited\n").await;
        for method in ["textDocument/documentSymbol", "textDocument/semanticTokens/full", "textDocument/foldingRange"] {
            let answer = h.request(method, json!({ "textDocument": h.doc() })).await;
            assert!(answer.get("error").is_none(), "{method}: {answer}");
        }
        let at = h.text.find("x) => (").unwrap();
        let hover =
            h.request("textDocument/hover", json!({ "textDocument": h.doc(), "position": h.position(at) })).await;
        assert!(hover.get("error").is_none(), "{hover}");
    }
    h.diagnostics().await;
    let made = onnx_lsp::snapshot::ANALYSES.load(Ordering::Relaxed) - before;
    assert!(made <= versions, "{made} analyses for {versions} versions");
    assert!(made >= 1);
}
