//! The language server's fuzz properties (`fuzz/fuzz_targets/lsp_*.rs`), beside the others in
//! `fuzz.rs`: the message loop fed any sequence of message bodies, and the edit → analysis
//! path fed any document and any sequence of edits.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use onnx_lsp::features;
use onnx_lsp::lsp::{OneOf, Position, Range, TextDocumentContentChangeEvent, Uri};
use onnx_lsp::workspace::Workspace;
use serde_json::{Value, json};

/// Inputs bigger than this are left alone (a fuzz input of a megabyte holds every
/// structure; bigger ones only slow the campaign).
const MAX_INPUT: usize = 1 << 20;

/// Message bodies per run at most: enough for open, edits and every request kind.
const MAX_MESSAGES: usize = 64;

/// The message loop: the input's pieces between zero bytes are message bodies, framed and
/// sent after `initialize` and before `shutdown` + `exit`. Whatever they hold, the server
/// ends with status 0 or 1, writes only well-framed JSON-RPC 2.0 messages, and never
/// reports an internal error (the panic guard's message: a feature or an analysis panicked).
///
/// Bodies calling the custom file requests (`onnx/…`) are dropped: they read and write
/// files at paths the message names, which a fuzzer must not be let loose on (those
/// requests have tests of their own against hostile paths).
pub fn lsp_messages(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let mut input = Vec::new();
    let frame = |body: &[u8], input: &mut Vec<u8>| {
        input.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        input.extend_from_slice(body);
    };
    let initialize =
        json!({"jsonrpc": "2.0", "id": "fuzz-init", "method": "initialize", "params": {"capabilities": {}}});
    frame(initialize.to_string().as_bytes(), &mut input);
    frame(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}).to_string().as_bytes(), &mut input);
    for body in data.split(|&b| b == 0).take(MAX_MESSAGES) {
        if calls_file_request(body) {
            continue;
        }
        frame(body, &mut input);
    }
    frame(json!({"jsonrpc": "2.0", "id": "fuzz-shutdown", "method": "shutdown"}).to_string().as_bytes(), &mut input);
    frame(json!({"jsonrpc": "2.0", "method": "exit"}).to_string().as_bytes(), &mut input);

    let output = SharedOutput::default();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let status = runtime.block_on(async {
        let (service, socket) = onnx_lsp::service();
        onnx_lsp::transport::serve(std::io::Cursor::new(input), output.clone(), service, socket).await
    });
    drop(runtime);
    assert!(status == 0 || status == 1, "exit status {status}");
    let written = output.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
    for message in framed_messages(&written) {
        assert_eq!(message.get("jsonrpc"), Some(&json!("2.0")), "not JSON-RPC 2.0: {message}");
        let text = message.to_string();
        assert!(!text.contains("internal error"), "the server reported an internal error: {text}");
        assert_ne!(message["error"]["code"], json!(-32603), "an internal error response: {text}");
    }
}

/// Whether a body is a call of one of the server's file requests (`onnx/binaryToText`,
/// `onnx/convert`), however its JSON spells the method name.
fn calls_file_request(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("method").and_then(Value::as_str).map(|m| m.starts_with("onnx/")))
        .unwrap_or(false)
}

/// The bodies of the framed messages in `bytes`, each as JSON; panics on bad framing.
fn framed_messages(mut bytes: &[u8]) -> Vec<Value> {
    let mut messages = Vec::new();
    while !bytes.is_empty() {
        let header_end = bytes.windows(4).position(|w| w == b"\r\n\r\n").expect("a header ends with an empty line");
        let header = std::str::from_utf8(&bytes[..header_end]).expect("an ASCII header");
        let length: usize = header
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no Content-Length in {header:?}"));
        let body = &bytes[header_end + 4..];
        assert!(body.len() >= length, "a body shorter than its Content-Length");
        messages.push(serde_json::from_slice(&body[..length]).expect("a body is JSON"));
        bytes = &body[length..];
    }
    messages
}

/// An output the server writes into and the property reads afterwards.
#[derive(Clone, Default)]
struct SharedOutput(Arc<Mutex<Vec<u8>>>);

impl tokio::io::AsyncWrite for SharedOutput {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// The edit → analysis path: the input up to its first zero byte is a document, the rest a
/// script of edits (each: a 2-byte place, a byte of characters to delete, a byte of how many
/// bytes to insert, then those bytes). The edits go through the workspace as an editor sends
/// them (ranges in UTF-16 positions) and, independently, onto a plain list of characters; the
/// two texts must agree after every edit. The last version is then analysed and every
/// feature asked at the places edited: no panic, and every range, position and semantic
/// token the server answers lies inside the document.
pub fn lsp_edits(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let (text, mut script) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let mut reference: Vec<char> = String::from_utf8_lossy(text).chars().collect();
    let uri: Uri = "untitled:fuzz.onnxtxt".parse().expect("a URI");
    let workspace = Mutex::new(Workspace::default());
    workspace.lock().expect("unpoisoned").open(uri.clone(), reference.iter().collect(), 0);
    let mut places = Vec::new();
    let mut version = 0;
    while script.len() >= 4 {
        let at = usize::from(u16::from_le_bytes([script[0], script[1]])) % (reference.len() + 1);
        let at = outside_line_break(&reference, at);
        let end = outside_line_break(&reference, (at + usize::from(script[2] % 32)).min(reference.len()));
        let inserted_len = usize::from(script[3] % 32).min(script.len() - 4);
        let inserted = String::from_utf8_lossy(&script[4..4 + inserted_len]).into_owned();
        script = &script[4 + inserted_len..];
        let range = Range { start: position_of(&reference, at), end: position_of(&reference, end) };
        reference.splice(at..end, inserted.chars());
        version += 1;
        let change = TextDocumentContentChangeEvent { range: Some(range), range_length: None, text: inserted };
        {
            let mut ws = workspace.lock().expect("unpoisoned");
            ws.change(&uri, version, vec![change]).expect("the document is open");
            let expected: String = reference.iter().collect();
            assert!(ws.text(&uri) == Some(expected.as_str()), "the edited text differs from the reference");
        }
        // Each version is analysed, as the server does while someone types: the next one
        // starts from it (the incremental reparse).
        let analysed = Workspace::analyse_now(&workspace, &uri).expect("the document is open");
        assert!(analysed.is_ok(), "{analysed:?}");
        places.push(position_of(&reference, at));
    }
    let snapshot =
        Workspace::analyse_now(&workspace, &uri).expect("the document is open").expect("the current version analysed");
    // Made from the previous versions' trees, it finds what a fresh analysis finds.
    let options = onnx_core::check::CheckOptions { full_check: true, ..Default::default() };
    let fresh = onnx_core::pipeline::check_text(&snapshot.text, &options);
    assert!(fresh.diagnostics == snapshot.diagnostics, "the incremental analysis differs from a fresh one");
    let lines = Lines::of(&reference);
    for diagnostic in features::diagnostics::to_lsp(&snapshot, &uri) {
        lines.check_range(diagnostic.range, "diagnostic");
        for related in diagnostic.related_information.into_iter().flatten() {
            lines.check_range(related.location.range, "related information");
        }
    }
    let whole = Range { start: Position::new(0, 0), end: lines.end() };
    for hint in features::inlay::inlay_hints(&snapshot, whole) {
        lines.check_position(hint.position, "inlay hint");
    }
    lines.check_tokens(&features::semantic_tokens::full(&snapshot).data);
    for range in features::symbols::folding_ranges(&snapshot) {
        assert!(range.start_line <= range.end_line && range.end_line < lines.count(), "folding range {range:?}");
    }
    let _ = features::symbols::document_symbols(&snapshot);
    let mut symbols = Vec::new();
    features::symbols::workspace_symbols(&snapshot, &uri, "a", 100, &mut symbols);
    for symbol in &symbols {
        if let OneOf::Left(location) = &symbol.location {
            lines.check_range(location.range, "workspace symbol");
        }
    }
    let _ = features::actions::code_actions(&snapshot, &uri, whole);
    let middle = Range { start: Position::new(lines.count() / 3, 0), end: Position::new(lines.count() / 2, 0) };
    for edits in [features::formatting::format(&snapshot), features::formatting::format_range(&snapshot, middle)] {
        for edit in edits.into_iter().flatten() {
            lines.check_range(edit.range, "formatting edit");
        }
    }
    places.extend([Position::new(0, 0), lines.end()]);
    for place in places.into_iter().rev().take(4) {
        // No directory: a fuzzed reference to external data must not read files.
        if let Some(hover) = features::hover::hover(&snapshot, place, None)
            && let Some(range) = hover.range
        {
            lines.check_range(range, "hover");
        }
        let _ = features::navigation::definition(&snapshot, &uri, place);
        for location in features::navigation::references(&snapshot, &uri, place, true).into_iter().flatten() {
            lines.check_range(location.range, "reference");
        }
        for highlight in features::navigation::highlights(&snapshot, place).into_iter().flatten() {
            lines.check_range(highlight.range, "highlight");
        }
        let _ = features::completion::complete(&snapshot, place);
        for selection in features::symbols::selection_ranges(&snapshot, &[place]) {
            let mut step = Some(&selection);
            while let Some(s) = step {
                lines.check_range(s.range, "selection range");
                step = s.parent.as_deref();
            }
        }
        let _ = features::signature::signature_help(&snapshot, place);
        let _ = features::rename::prepare(&snapshot, place);
        let _ = features::rename::rename(&snapshot, &uri, place, "renamed_by_fuzz");
    }
}

/// `at`, moved back off the middle of a `\r\n` pair (a place the protocol cannot name).
fn outside_line_break(text: &[char], at: usize) -> usize {
    if at > 0 && at < text.len() && text[at - 1] == '\r' && text[at] == '\n' { at - 1 } else { at }
}

/// The protocol's position of the character index `at`: lines end at `\n`, `\r\n` or a lone
/// `\r` (LSP 3.17, "Text Documents"), columns count UTF-16 code units.
fn position_of(text: &[char], at: usize) -> Position {
    let (mut line, mut column) = (0, 0);
    let mut i = 0;
    while i < at {
        match text[i] {
            '\r' if text.get(i + 1) == Some(&'\n') && i + 1 < at => {
                line += 1;
                column = 0;
                i += 1;
            }
            '\r' | '\n' => {
                line += 1;
                column = 0;
            }
            c => column += c.len_utf16() as u32,
        }
        i += 1;
    }
    Position::new(line, column)
}

/// Each line's length in UTF-16 code units, by the protocol's line breaks, and the text (for
/// the failure messages).
struct Lines(Vec<u32>, String);

impl Lines {
    fn of(text: &[char]) -> Lines {
        let mut lengths = vec![0];
        let mut i = 0;
        while i < text.len() {
            match text[i] {
                '\r' | '\n' => {
                    if text[i] == '\r' && text.get(i + 1) == Some(&'\n') {
                        i += 1;
                    }
                    lengths.push(0);
                }
                c => *lengths.last_mut().expect("one line at least") += c.len_utf16() as u32,
            }
            i += 1;
        }
        Lines(lengths, text.iter().take(4000).collect())
    }

    fn count(&self) -> u32 {
        self.0.len() as u32
    }

    fn end(&self) -> Position {
        Position::new(self.count() - 1, self.0[self.0.len() - 1])
    }

    fn check_position(&self, p: Position, what: &str) {
        let text = &self.1;
        let length =
            self.0.get(p.line as usize).unwrap_or_else(|| panic!("{what} at {p:?}: past the last line of {text:?}"));
        assert!(p.character <= *length, "{what} at {p:?}: past the end of a line of {length} units in {text:?}");
    }

    fn check_range(&self, r: Range, what: &str) {
        self.check_position(r.start, what);
        self.check_position(r.end, what);
        assert!(
            (r.start.line, r.start.character) <= (r.end.line, r.end.character),
            "{what}: {r:?} ends before it starts"
        );
    }

    /// Semantic tokens come as (line delta, start delta, length, type, modifiers); each must
    /// lie within its line and come after the one before.
    fn check_tokens(&self, tokens: &[onnx_lsp::lsp::SemanticToken]) {
        let (mut line, mut start) = (0u32, 0u32);
        for token in tokens {
            line += token.delta_line;
            start = if token.delta_line == 0 { start + token.delta_start } else { token.delta_start };
            let end = Position::new(line, start + token.length);
            self.check_position(Position::new(line, start), "semantic token");
            self.check_position(end, "semantic token end");
        }
    }
}
