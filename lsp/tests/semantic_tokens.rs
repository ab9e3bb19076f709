//! `semanticTokens/range` and `semanticTokens/full/delta` through the server: a range gives
//! the tokens of its lines, placed as the full answer places them; a delta after an edit,
//! applied to the tokens sent before, gives exactly the new full tokens.

#![allow(clippy::unwrap_used)]

mod common;

use common::Harness;
use serde_json::{Value, json};

/// Absolute (line, character, length, type, modifiers) of each token in the protocol's
/// relative encoding.
fn absolute(data: &[u64]) -> Vec<[u64; 5]> {
    let (mut line, mut character) = (0, 0);
    data.chunks(5)
        .map(|t| {
            line += t[0];
            character = if t[0] == 0 { character + t[1] } else { t[1] };
            [line, character, t[2], t[3], t[4]]
        })
        .collect()
}

fn numbers(value: &Value) -> Vec<u64> {
    value.as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect()
}

fn document() -> String {
    let mut text = String::from("<ir_version: 10, opset_import: [\"\" : 21]>\nmain (float[N] x) => (float[N] y) {\n");
    for i in 0..200 {
        let input = if i == 0 { "x".to_owned() } else { format!("v{}", i - 1) };
        text.push_str(&format!("  v{i} = Relu({input})  # step {i}\n"));
    }
    text.push_str("  y = Identity(v199)\n}\n");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_range_gives_the_tokens_of_its_lines() {
    let mut h = Harness::start(false).await;
    h.open(&document()).await;
    let full = h.request("textDocument/semanticTokens/full", json!({ "textDocument": h.doc() })).await;
    let full = absolute(&numbers(&full["result"]["data"]));
    let range = json!({ "start": { "line": 50, "character": 4 }, "end": { "line": 60, "character": 0 } });
    let part = h.request("textDocument/semanticTokens/range", json!({ "textDocument": h.doc(), "range": range })).await;
    let part = absolute(&numbers(&part["result"]["data"]));
    let expected: Vec<_> = full.iter().filter(|t| (50..=60).contains(&t[0])).copied().collect();
    assert!(!expected.is_empty());
    assert_eq!(part, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delta_after_an_edit_rebuilds_the_new_tokens() {
    let mut h = Harness::start(false).await;
    h.open(&document()).await;
    let first = h.request("textDocument/semanticTokens/full", json!({ "textDocument": h.doc() })).await;
    let mut sent = numbers(&first["result"]["data"]);
    let mut id = first["result"]["resultId"].as_str().unwrap().to_owned();
    for (needle, replacement) in [("  v100 = ", "  w = Relu(x)\n  v100 = "), ("# step 7\n", "\n")] {
        let at = h.text.find(needle).unwrap();
        h.edit(at, at + needle.len(), replacement).await;
        let params = json!({ "textDocument": h.doc(), "previousResultId": id });
        let answer = h.request("textDocument/semanticTokens/full/delta", params).await;
        let edits = answer["result"]["edits"].as_array().expect("a delta, not full tokens");
        assert_eq!(edits.len(), 1);
        let edit = &edits[0];
        let (start, delete) =
            (edit["start"].as_u64().unwrap() as usize, edit["deleteCount"].as_u64().unwrap() as usize);
        let inserted = edit.get("data").map(numbers).unwrap_or_default();
        assert!(delete + inserted.len() < 100, "a small edit sends a small delta: {edit}");
        sent.splice(start..start + delete, inserted);
        let full = h.request("textDocument/semanticTokens/full", json!({ "textDocument": h.doc() })).await;
        assert_eq!(sent, numbers(&full["result"]["data"]));
        id = full["result"]["resultId"].as_str().unwrap().to_owned();
    }
    // An unknown previous result gets the full tokens.
    let params = json!({ "textDocument": h.doc(), "previousResultId": "no such result" });
    let answer = h.request("textDocument/semanticTokens/full/delta", params).await;
    assert_eq!(numbers(&answer["result"]["data"]), sent);
}
