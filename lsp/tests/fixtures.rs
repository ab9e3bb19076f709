//! Fixture tests: each file in `tests/fixtures/` is a text model, then a `#### requests`
//! line and one request per line; its snapshot (insta, `tests/snapshots/`) is what the
//! server answered, rendered readably (ranges as `line:col-line:col "text"`, 1-based).
//! `INSTA_UPDATE=always cargo test -p onnx-lsp --test fixtures` (or `cargo insta review`)
//! rewrites the answers; review the diff before committing.
//!
//! Requests (a position is `at "needle"`: the first occurrence of the needle, at its `|` if
//! it has one, else at its start; `at "needle" #2` takes the second occurrence):
//!
//! ```text
//! diagnostics                hover at "…"                definition at "…"
//! references at "…"          highlight at "…"            prepareRename at "…"
//! rename at "…" to NAME      symbols                     folding
//! semanticTokens             completion at "…"           signatureHelp at "…"
//! inlayHints                 formatting                  codeActions at "…"
//! change "old" to "new"      (an incremental edit; later requests see the new text)
//! binaryToText PATH          (PATH relative to the repository root)
//! rangeFormatting lines A-B  (lines counted from 0, B included)
//! workspaceSymbols QUERY     selectionRange at "…"
//! ```
//!
//! `#### requests utf-8` makes the client offer UTF-8 positions.

#![allow(clippy::unwrap_used)]

mod common;

use std::fmt::Write;
use std::path::{Path, PathBuf};

use common::{Harness, URI};
use serde_json::{Value, json};

const REQUESTS: &str = "#### requests";

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixtures() {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "onnxtxt"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 14, "expected a fixture per feature, found {}", paths.len());
    for path in &paths {
        let source = std::fs::read_to_string(path).unwrap();
        let (document, request_block) = source
            .split_once(&format!("\n{REQUESTS}"))
            .unwrap_or_else(|| panic!("{}: no {REQUESTS} line", path.display()));
        let (options, requests) = request_block.split_once('\n').unwrap_or((request_block, ""));
        let document = format!("{document}\n");
        let actual = run(&document, options.trim() == "utf-8", requests).await;
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        insta::with_settings!({ input_file => path }, {
            insta::assert_snapshot!(name, actual);
        });
    }
}

async fn run(document: &str, utf8: bool, requests: &str) -> String {
    let mut h = Harness::start(utf8).await;
    h.open(document).await;
    let mut out = String::new();
    for line in requests.lines().map(str::trim).filter(|l| !l.is_empty()) {
        writeln!(out, ">>> {line}").unwrap();
        let answer = request(&mut h, line).await;
        out.push_str(&answer);
        if !answer.ends_with('\n') {
            out.push('\n');
        }
    }
    // Whatever was asked, the server must not have logged an internal error.
    h.diagnostics().await;
    assert!(h.logs.iter().all(|l| !l.contains("internal error")), "server errors: {:?}", h.logs);
    out
}

async fn request(h: &mut Harness, line: &str) -> String {
    let (verb, args) = line.split_once(' ').unwrap_or((line, ""));
    let doc = h.doc();
    let at = |h: &Harness| position_arg(h, args);
    let result = match verb {
        "diagnostics" => {
            let diagnostics = h.diagnostics().await;
            return render(h, &diagnostics);
        }
        "change" => {
            let (old, new) = two_strings(args);
            let start = h.text.find(&old).unwrap_or_else(|| panic!("change: {old:?} not in the text"));
            h.edit(start, start + old.len(), &new).await;
            return "ok".into();
        }
        "hover" => h.request("textDocument/hover", json!({ "textDocument": doc, "position": at(h) })).await,
        "definition" => h.request("textDocument/definition", json!({ "textDocument": doc, "position": at(h) })).await,
        "references" => {
            let params = json!({ "textDocument": doc, "position": at(h), "context": { "includeDeclaration": true } });
            h.request("textDocument/references", params).await
        }
        "highlight" => {
            h.request("textDocument/documentHighlight", json!({ "textDocument": doc, "position": at(h) })).await
        }
        "prepareRename" => {
            h.request("textDocument/prepareRename", json!({ "textDocument": doc, "position": at(h) })).await
        }
        "rename" => {
            let (_, name) = args.rsplit_once(" to ").unwrap();
            let params = json!({ "textDocument": doc, "position": at(h), "newName": name });
            h.request("textDocument/rename", params).await
        }
        "symbols" => h.request("textDocument/documentSymbol", json!({ "textDocument": doc })).await,
        "workspaceSymbols" => h.request("workspace/symbol", json!({ "query": args })).await,
        "selectionRange" => {
            let params = json!({ "textDocument": doc, "positions": [at(h)] });
            h.request("textDocument/selectionRange", params).await
        }
        "folding" => h.request("textDocument/foldingRange", json!({ "textDocument": doc })).await,
        "semanticTokens" => {
            let answer = h.request("textDocument/semanticTokens/full", json!({ "textDocument": doc })).await;
            return render_tokens(h, &answer["result"]["data"]);
        }
        "completion" => {
            let answer = h.request("textDocument/completion", json!({ "textDocument": doc, "position": at(h) })).await;
            return render_completion(&answer["result"]);
        }
        "signatureHelp" => {
            h.request("textDocument/signatureHelp", json!({ "textDocument": doc, "position": at(h) })).await
        }
        "inlayHints" => {
            let end = h.position(h.text.len());
            let params =
                json!({ "textDocument": doc, "range": { "start": { "line": 0, "character": 0 }, "end": end } });
            h.request("textDocument/inlayHint", params).await
        }
        "formatting" => {
            let params = json!({ "textDocument": doc, "options": { "tabSize": 2, "insertSpaces": true } });
            h.request("textDocument/formatting", params).await
        }
        "rangeFormatting" => {
            // `rangeFormatting lines A-B`: lines counted from 0, B included.
            let (first, last) = args.trim_start_matches("lines ").split_once('-').expect("lines A-B");
            let (first, last): (u32, u32) = (first.parse().unwrap(), last.parse().unwrap());
            let range =
                json!({ "start": { "line": first, "character": 0 }, "end": { "line": last + 1, "character": 0 } });
            let params =
                json!({ "textDocument": doc, "range": range, "options": { "tabSize": 2, "insertSpaces": true } });
            h.request("textDocument/rangeFormatting", params).await
        }
        "codeActions" => {
            let p = at(h);
            let params =
                json!({ "textDocument": doc, "range": { "start": p, "end": p }, "context": { "diagnostics": [] } });
            h.request("textDocument/codeAction", params).await
        }
        "binaryToText" => {
            // A path relative to the repository root; the answer is the model as text.
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(args.trim()).canonicalize().unwrap();
            let uri = format!("file://{}", path.display());
            let answer = h.request("onnx/binaryToText", json!({ "uri": uri })).await;
            return match answer.get("error") {
                Some(error) => format!(
                    "error: {}",
                    error["message"].as_str().unwrap_or("").replace(&path.display().to_string(), "<path>")
                ),
                None => answer["result"]["text"].as_str().unwrap_or("").to_owned(),
            };
        }
        other => panic!("unknown fixture request {other:?}"),
    };
    match result.get("error") {
        Some(error) => format!("error: {}", error["message"].as_str().unwrap_or("")),
        None => render(h, &result["result"]),
    }
}

/// `at "needle"` or `at "needle" #n`, resolved in the current text.
fn position_arg(h: &Harness, args: &str) -> Value {
    let after = args.split_once("at ").unwrap_or_else(|| panic!("no `at \"…\"` in {args:?}")).1;
    let (needle, rest) = quoted(after);
    let nth: usize = rest.rsplit_once('#').and_then(|(_, n)| n.trim().split(' ').next()?.parse().ok()).unwrap_or(1);
    let cursor = needle.find('|').unwrap_or(0);
    let plain = needle.replace('|', "");
    let found =
        h.text.match_indices(&plain).nth(nth - 1).unwrap_or_else(|| panic!("{plain:?} #{nth} not in the text")).0;
    h.position(found + cursor)
}

/// The first `"…"` string in `s` (with `\"`, `\\` and `\n` escapes), and the rest after it.
fn quoted(s: &str) -> (String, &str) {
    let start = s.find('"').unwrap() + 1;
    let mut out = String::new();
    let mut chars = s[start..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return (out, &s[start + i + 1..]),
            '\\' => match chars.next().map(|(_, e)| e) {
                Some('n') => out.push('\n'),
                Some(e) => out.push(e),
                None => break,
            },
            c => out.push(c),
        }
    }
    panic!("unterminated string in {s:?}")
}

fn first_string(s: &str) -> String {
    quoted(s).0
}

fn two_strings(s: &str) -> (String, String) {
    let (first, rest) = quoted(s);
    (first, first_string(rest))
}

/// JSON with every range condensed to `l:c-l:c "text"` and every URI to `<doc>`.
fn render(h: &Harness, value: &Value) -> String {
    fn condense(h: &Harness, v: &Value) -> Value {
        match v {
            Value::Object(map) if map.contains_key("start") && map.contains_key("end") && map.len() == 2 => {
                let (s, e) = (h.offset(&map["start"]), h.offset(&map["end"]));
                let p =
                    |x: &Value| format!("{}:{}", x["line"].as_u64().unwrap() + 1, x["character"].as_u64().unwrap() + 1);
                let text: String = h.text[s..e].chars().take(40).collect();
                Value::String(format!("{}-{} {:?}", p(&map["start"]), p(&map["end"]), text))
            }
            Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), condense(h, v))).collect()),
            Value::Array(items) => Value::Array(items.iter().map(|x| condense(h, x)).collect()),
            Value::String(s) if s == URI => Value::String("<doc>".into()),
            other => other.clone(),
        }
    }
    let condensed = condense(h, value);
    // Keys of `changes` are URIs too.
    let text = serde_json::to_string_pretty(&condensed).unwrap();
    text.replace(URI, "<doc>")
}

fn render_tokens(h: &Harness, data: &Value) -> String {
    let legend = [
        "namespace",
        "function",
        "variable",
        "parameter",
        "type",
        "number",
        "string",
        "comment",
        "method",
        "property",
        "typeParameter",
        "decorator",
    ];
    let data: Vec<u64> = data.as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    let mut out = String::new();
    let (mut line, mut col) = (0u64, 0u64);
    for t in data.chunks(5) {
        if t[0] > 0 {
            line += t[0];
            col = t[1];
        } else {
            col += t[1];
        }
        let start = h.offset(&json!({ "line": line, "character": col }));
        let end = h.offset(&json!({ "line": line, "character": col + t[2] }));
        let mut modifiers = Vec::new();
        if t[4] & 1 != 0 {
            modifiers.push("declaration");
        }
        if t[4] & 2 != 0 {
            modifiers.push("readonly");
        }
        writeln!(
            out,
            "{}:{} {:?} {} {}",
            line + 1,
            col + 1,
            &h.text[start..end],
            legend[t[3] as usize],
            modifiers.join(",")
        )
        .unwrap();
    }
    out
}

/// Completion lists can be long (every operator of an opset): the count, then the first
/// items as `label · detail`.
fn render_completion(result: &Value) -> String {
    let items = result.as_array().cloned().unwrap_or_default();
    let mut out = format!("{} item(s)\n", items.len());
    for item in items.iter().take(12) {
        let insert = match (item["insertText"].as_str(), item["textEdit"]["newText"].as_str()) {
            (_, Some(edit)) => {
                let range = &item["textEdit"]["range"];
                let (from, to) = (&range["start"]["character"], &range["end"]["character"]);
                let filter = item["filterText"].as_str().map(|f| format!(" filter {f:?}")).unwrap_or_default();
                format!(" ⇒ {edit:?} at {from}..{to}{filter}")
            }
            (Some(text), None) => format!(" ⇒ {text:?}"),
            (None, None) => String::new(),
        };
        writeln!(out, "{} · {}{insert}", item["label"].as_str().unwrap_or(""), item["detail"].as_str().unwrap_or(""))
            .unwrap();
    }
    out
}
