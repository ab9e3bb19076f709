//! `semanticTokens/range` and `semanticTokens/full/delta` through the server: a range gives
//! the tokens of its lines, placed as the full answer places them; a delta after an edit,
//! applied to the tokens sent before, gives exactly the new full tokens.

#![allow(clippy::unwrap_used)]

mod common;

use common::Harness;
use onnx_lsp::features::semantic_tokens::LONG_LIST;
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

/// A model whose initializers are a list just over [`LONG_LIST`] numbers (a comment in its
/// middle), one of exactly [`LONG_LIST`], and a short one; and the lines each list spans.
fn document_with_lists() -> (String, [std::ops::RangeInclusive<u64>; 2]) {
    let mut text = String::from("<ir_version: 10, opset_import: [\"\" : 21]>\nmain (float[3] x) => (float[3] y)\n");
    let mut lines = Vec::new();
    for (name, count) in [("long", LONG_LIST + 1), ("edge", LONG_LIST)] {
        let first = text.matches('\n').count() as u64;
        text.push_str(&format!("  <float[{count}] {name} = {{\n"));
        // Two values a line, so that a screen of lines lies inside each list.
        for row in (0..count).collect::<Vec<_>>().chunks(2) {
            let values: Vec<String> = row.iter().map(|i| format!("{}.5", i % 97)).collect();
            text.push_str(&format!("    {},\n", values.join(", ")));
            if row[0] == 4 {
                text.push_str("    # the middle\n");
            }
        }
        text.pop();
        text.pop();
        text.push_str("\n  }>\n");
        lines.push(first..=text.matches('\n').count() as u64 - 1);
    }
    text.push_str("  <float[3] short = {1, 2, 3}>\n{\n  y = Add(x, short)\n}\n");
    (text, [lines[0].clone(), lines[1].clone()])
}

const NUMBER: u64 = 5;
const COMMENT: u64 = 7;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_numbers_of_a_long_list_are_not_tokens_one_by_one() {
    let (text, [long, edge]) = document_with_lists();
    let mut h = Harness::start(false).await;
    h.open(&text).await;
    let full = h.request("textDocument/semanticTokens/full", json!({ "textDocument": h.doc() })).await;
    let full = absolute(&numbers(&full["result"]["data"]));
    let in_lines = |lines: &std::ops::RangeInclusive<u64>, kind: u64| {
        full.iter().filter(|t| lines.contains(&t[0]) && t[3] == kind).count()
    };
    // The long list's numbers are left to the editor's grammar; its comment is a token.
    assert_eq!(in_lines(&long, NUMBER), 1, "only its shape's `{}`", LONG_LIST + 1);
    assert_eq!(in_lines(&long, COMMENT), 1);
    // A list of exactly the limit is coloured number by number, as is a short one.
    assert_eq!(in_lines(&edge, NUMBER), LONG_LIST + 1, "its values and its shape");
    let short = text.matches('\n').count() as u64 - 4;
    assert_eq!(in_lines(&(short..=short), NUMBER), 4, "`{{1, 2, 3}}` and its shape");
    assert!(full.len() < LONG_LIST + 100, "{} tokens", full.len());

    // A range that starts inside a list agrees with the full answer.
    for lines in [&long, &edge] {
        let middle = (lines.start() + lines.end()) / 2;
        let range =
            json!({ "start": { "line": middle - 5, "character": 0 }, "end": { "line": middle + 5, "character": 0 } });
        let part =
            h.request("textDocument/semanticTokens/range", json!({ "textDocument": h.doc(), "range": range })).await;
        let part = absolute(&numbers(&part["result"]["data"]));
        let expected: Vec<_> = full.iter().filter(|t| (middle - 5..=middle + 5).contains(&t[0])).copied().collect();
        assert_eq!(part, expected, "lines {lines:?}");
    }
}
