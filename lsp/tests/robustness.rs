//! Random edit sequences over the fixtures (fixed seed) with requests at random places in
//! between: the server never fails a request with an internal error, never logs one, and
//! always ends with diagnostics for the last version.

#![allow(clippy::unwrap_used)]

mod common;

use common::Harness;
use serde_json::json;

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const SNIPPETS: &[&str] = &[
    "(",
    ")",
    "<",
    ">",
    "{",
    "}",
    "[",
    "]",
    ",",
    "=",
    "=>",
    ".",
    ":",
    " ",
    "\n",
    "x",
    "y",
    "Relu",
    "If",
    "float[N]",
    "\"",
    "#",
    "#@ doc_string: \"d\"\n",
    "é",
    "😀",
    "1.5e",
    "-",
    "9999999999999999999999",
    "seq(",
    "a = Add(a, a)\n",
    "g () => (float z) { z = Identity(x) }",
    "local.",
    "@",
    "?",
    "\t",
    "\r\n",
];

/// A character boundary of `text` at or before `at`.
fn boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_edits_never_break_the_server() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut paths: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    let mut rng = Rng(0x5EED_0000_0000_0001);
    let mut edits = 0;
    for path in &paths {
        let source = std::fs::read_to_string(path).unwrap();
        let document = source.split("\n#### requests").next().unwrap().to_owned() + "\n";
        let mut h = Harness::start(rng.below(2) == 0).await;
        h.open(&document).await;
        for step in 0..120 {
            let len = h.text.len();
            let start = boundary(&h.text, rng.below(len + 1));
            let end = match rng.below(3) {
                0 => start,
                _ => boundary(&h.text, start + rng.below(12)),
            };
            let insert = if rng.below(4) == 0 { "" } else { SNIPPETS[rng.below(SNIPPETS.len())] };
            h.edit(start, end.max(start), insert).await;
            edits += 1;
            if step % 3 == 0 {
                let at = h.position(boundary(&h.text, rng.below(h.text.len() + 1)));
                let doc = h.doc();
                let (method, params) = match rng.below(12) {
                    0 => ("textDocument/hover", json!({ "textDocument": doc, "position": at })),
                    1 => ("textDocument/definition", json!({ "textDocument": doc, "position": at })),
                    2 => (
                        "textDocument/references",
                        json!({ "textDocument": doc, "position": at, "context": { "includeDeclaration": true } }),
                    ),
                    3 => ("textDocument/completion", json!({ "textDocument": doc, "position": at })),
                    4 => ("textDocument/signatureHelp", json!({ "textDocument": doc, "position": at })),
                    5 => ("textDocument/semanticTokens/full", json!({ "textDocument": doc })),
                    6 => ("textDocument/documentSymbol", json!({ "textDocument": doc })),
                    7 => ("textDocument/foldingRange", json!({ "textDocument": doc })),
                    8 => (
                        "textDocument/inlayHint",
                        json!({ "textDocument": doc, "range": { "start": { "line": 0, "character": 0 }, "end": at } }),
                    ),
                    9 => (
                        "textDocument/codeAction",
                        json!({ "textDocument": doc, "range": { "start": at, "end": at }, "context": { "diagnostics": [] } }),
                    ),
                    10 => (
                        "textDocument/formatting",
                        json!({ "textDocument": doc, "options": { "tabSize": 2, "insertSpaces": true } }),
                    ),
                    _ => ("textDocument/rename", json!({ "textDocument": doc, "position": at, "newName": "renamed" })),
                };
                let answer = h.request(method, params).await;
                let code = answer["error"]["code"].as_i64();
                assert_ne!(code, Some(-32603), "{method} failed on {}:\n{}\n{answer}", path.display(), h.text);
            }
        }
        h.diagnostics().await;
        assert!(h.logs.iter().all(|l| !l.contains("internal error")), "{}: {:?}\n{}", path.display(), h.logs, h.text);
    }
    assert!(edits >= 1500, "only {edits} edits");
}

/// Nested graphs with stray `)` between them (once a way around the nesting limit that
/// overflowed the server's stack at 1,000 levels): the server reports the limit and answers
/// requests afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stray_closers_do_not_knock_the_server_over() {
    let level = " y = If(c) <then_branch: graph = g () => (float y) {\n ) )\n";
    let text = format!(
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (bool c) => (float y) {{\n{}{}}}\n",
        level.repeat(3000),
        "}>\n".repeat(3000)
    );
    let mut h = Harness::start(false).await;
    h.open(&text).await;
    let diagnostics = h.diagnostics().await;
    assert!(
        diagnostics.as_array().unwrap().iter().any(|d| d["code"] == json!("nesting-too-deep")),
        "the nesting limit did not fire"
    );
    let symbols = h.request("textDocument/documentSymbol", json!({ "textDocument": h.doc() })).await;
    assert!(symbols.get("error").is_none(), "{symbols}");
}

/// `onnx/binaryToText` on a FIFO (which would block until written to) and on a device that
/// never ends: both refused at once, and the server answers the next request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_to_text_refuses_fifos_and_devices() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.onnx");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let zero = dir.path().join("zero.onnx");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let mut h = Harness::start(false).await;
    for path in [&fifo, &zero] {
        let answer = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            h.request("onnx/binaryToText", json!({ "uri": format!("file://{}", path.display()) })),
        )
        .await
        .expect("answered at once");
        let message = answer["error"]["message"].as_str().unwrap_or_default().to_owned();
        assert!(message.contains("not a regular file"), "{}: {answer}", path.display());
    }
    h.open("<ir_version: 8, opset_import: [\"\" : 17]>\ng (float x) => (float y) {\n  y = Relu(x)\n}\n").await;
    let symbols = h.request("textDocument/documentSymbol", json!({ "textDocument": h.doc() })).await;
    assert!(symbols.get("error").is_none(), "{symbols}");
}
