//! Big documents are analysed in stages: the syntax diagnostics of a version are published
//! as soon as it is parsed (with the previous version's semantic ones moved through the
//! edit), the complete ones follow; a version that changes again before its analysis ends
//! is given up, and requests for it are answered `ContentModified`; an analysis that starts
//! from the previous version's tree gives what a fresh one gives.

#![allow(clippy::unwrap_used)]

mod common;

use common::Harness;
use serde_json::{Value, json};

/// A chain of `Relu` nodes past the syntax-first size, whose last node uses a value nothing
/// defines.
fn big_document() -> String {
    let mut text = String::from("<ir_version: 10, opset_import: [\"\" : 21]>\nmain (float[N] x) => (float[N] y) {\n");
    let mut i = 0;
    while text.len() < onnx_lsp::server::SYNTAX_FIRST_BYTES + 10_000 {
        let input = if i == 0 { "x".to_owned() } else { format!("v{}", i - 1) };
        text.push_str(&format!("  v{i} = Relu({input})\n"));
        i += 1;
    }
    text.push_str(&format!("  y = Add(v{}, missing)\n}}\n", i - 1));
    text
}

fn codes(diagnostics: &Value) -> Vec<String> {
    diagnostics.as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap_or("").to_owned()).collect()
}

fn line_of(diagnostics: &Value, code: &str) -> u64 {
    let found = diagnostics.as_array().unwrap().iter().find(|d| d["code"] == json!(code));
    found.unwrap_or_else(|| panic!("no {code} in {diagnostics}"))["range"]["start"]["line"].as_u64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn syntax_errors_are_published_first_with_the_semantic_ones_moved() {
    let mut h = Harness::start(false).await;
    let text = big_document();
    h.open(&text).await;
    let opened = h.publications().await;
    assert_eq!(opened.len(), 2, "{opened:?}");
    assert_eq!(codes(&opened[0]), Vec::<String>::new(), "syntax first: none");
    assert_eq!(codes(&opened[1]), vec!["undefined-value"]);
    let undefined_line = line_of(&opened[1], "undefined-value");

    // A syntax error in the middle, on a new line: the first list has it, and the
    // undefined value one line further down; the complete list follows.
    let at = h.text.find("  v500 = Relu(").unwrap() + "  v500 = Relu(".len();
    h.edit(at, at, "\n(").await;
    let published = h.publications().await;
    assert_eq!(published.len(), 2, "{published:?}");
    let first = codes(&published[0]);
    assert!(first.iter().any(|c| c != "undefined-value"), "a syntax error first: {first:?}");
    assert_eq!(line_of(&published[0], "undefined-value"), undefined_line + 1);
    // While the text has syntax errors, name resolution's findings are left out.
    assert!(!codes(&published[1]).contains(&"undefined-value".to_owned()), "{:?}", published[1]);

    // Mending it: nothing syntactic, and the complete list has the undefined value again.
    h.edit(at, at + 2, "").await;
    let published = h.publications().await;
    assert_eq!(codes(&published[0]), Vec::<String>::new());
    assert_eq!(codes(&published[1]), vec!["undefined-value"]);
    assert_eq!(line_of(&published[1], "undefined-value"), undefined_line);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_edits_gives_up_stale_versions_and_ends_as_a_fresh_analysis() {
    let mut h = Harness::start(false).await;
    h.open(&big_document()).await;
    h.diagnostics().await;
    let mut answers = Vec::new();
    // Type into one node, in the middle: renaming a use breaks it (an undefined value),
    // every other edit mends it again.
    let at = h.text.find("  v700 = Relu(v699").unwrap() + "  v700 = Relu(v69".len();
    for k in 0..8 {
        if k % 2 == 0 {
            h.edit(at, at + 1, "x").await;
        } else {
            h.edit(at, at + 1, "9").await;
        }
        answers.push(h.start_request("textDocument/documentSymbol", json!({ "textDocument": h.doc() })).await);
        let position = h.position(at);
        answers.push(
            h.start_request("textDocument/hover", json!({ "textDocument": h.doc(), "position": position })).await,
        );
    }
    h.edit(0, 0, "# last\n").await;
    let last = h.diagnostics().await;
    let (mut answered, mut modified) = (0, 0);
    for answer in answers {
        let answer = answer.await;
        match answer.get("error") {
            None => answered += 1,
            Some(error) => {
                assert_eq!(error["code"], json!(-32801), "only ContentModified: {error}");
                modified += 1;
            }
        }
    }
    assert_eq!(answered + modified, 16);
    // The edits mended what they broke: only the undefined value at the end remains, as a
    // fresh analysis of the same text finds.
    let mut fresh = Harness::start(false).await;
    fresh.open(&h.text).await;
    assert_eq!(last, fresh.diagnostics().await);
    assert_eq!(codes(&last), vec!["undefined-value"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_analysed_from_the_previous_tree_match_a_fresh_analysis() {
    let base = "<ir_version: 10, opset_import: [\"\" : 21]>\nmain (float[N, 4] x) => (float[N, 4] y) {\n  a = Relu(x)\n  b = Transpose <perm = [1, 0]> (a)\n  y = Add(b, a)\n}\n";
    let mut h = Harness::start(false).await;
    h.open(base).await;
    h.diagnostics().await;
    // Each edit stays inside one node; some break the model's meaning, none its syntax.
    for (from, to) in [
        ("Relu(x)", "Relu(q)"),
        ("perm = [1, 0]", "perm = [1, 0, 2]"),
        ("Relu(q)", "Relu(x)"),
        ("Add(b, a)", "Add(a, a)"),
    ] {
        let at = h.text.find(from).unwrap();
        h.edit(at, at + from.len(), to).await;
        let incremental = h.diagnostics().await;
        let mut fresh = Harness::start(false).await;
        fresh.open(&h.text).await;
        assert_eq!(incremental, fresh.diagnostics().await, "after {from} → {to}");
        let at = h.text.find("y = Add").unwrap();
        let hover =
            h.request("textDocument/hover", json!({ "textDocument": h.doc(), "position": h.position(at) })).await;
        let fresh_hover = fresh
            .request("textDocument/hover", json!({ "textDocument": fresh.doc(), "position": fresh.position(at) }))
            .await;
        assert_eq!(hover["result"], fresh_hover["result"]);
    }
}
