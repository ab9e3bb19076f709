//! The real `onnx-lsp` binary on stdin/stdout, fed what a broken or hostile client sends:
//! every malformed message gets an error response and the server keeps serving; the exit
//! status follows the protocol (0 after shutdown + exit, 1 otherwise).

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

fn start() -> (Child, BufReader<ChildStdout>) {
    start_with(&[])
}

fn start_with(environment: &[(&str, &str)]) -> (Child, BufReader<ChildStdout>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_onnx-lsp"))
        .envs(environment.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("onnx-lsp starts");
    let stdout = BufReader::new(child.stdout.take().unwrap());
    (child, stdout)
}

fn send_raw(child: &mut Child, body: &str) {
    let stdin = child.stdin.as_mut().unwrap();
    write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    stdin.flush().unwrap();
}

fn send(child: &mut Child, message: Value) {
    send_raw(child, &message.to_string());
}

/// The next message the server writes that is a response (notifications are skipped).
fn next_response(stdout: &mut BufReader<ChildStdout>) -> Value {
    loop {
        let message = next_message(stdout);
        if message.get("method").is_none() {
            return message;
        }
    }
}

/// The next message the server writes.
fn next_message(stdout: &mut BufReader<ChildStdout>) -> Value {
    let mut length = 0;
    loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the server closed its output");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            length = v.parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    stdout.read_exact(&mut body).unwrap();
    serde_json::from_slice(&body).unwrap()
}

fn initialize(child: &mut Child, stdout: &mut BufReader<ChildStdout>) {
    send(child, json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}));
    assert!(next_response(stdout)["result"]["capabilities"].is_object());
    send(child, json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
}

#[test]
fn malformed_messages_get_errors_and_the_server_goes_on() {
    let (mut child, mut stdout) = start();
    initialize(&mut child, &mut stdout);
    for (body, code) in [
        ("{not json", -32700),
        ("{}", -32600),
        ("[]", -32600),
        ("[{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"shutdown\"}]", -32600),
        ("{\"jsonrpc\": \"1.0\", \"id\": 3, \"method\": \"shutdown\"}", -32600),
        ("{\"jsonrpc\": \"2.0\", \"id\": 4}", -32600),
        ("\"just a string\"", -32600),
    ] {
        send_raw(&mut child, body);
        let response = next_response(&mut stdout);
        assert_eq!(response["error"]["code"], json!(code), "{body}: {response}");
    }
    // Still serving: a real request is answered.
    send(&mut child, json!({"jsonrpc": "2.0", "id": 9, "method": "shutdown"}));
    let response = next_response(&mut stdout);
    assert_eq!(response["id"], json!(9), "{response}");
    assert!(response.get("error").is_none(), "{response}");
    send(&mut child, json!({"jsonrpc": "2.0", "method": "exit"}));
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(stderr.contains("not JSON"), "the server did not log the bad message: {stderr}");
}

#[test]
fn exit_without_shutdown_and_end_of_input_are_failures() {
    let (mut child, mut stdout) = start();
    initialize(&mut child, &mut stdout);
    send(&mut child, json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(child.wait().unwrap().code(), Some(1), "exit without shutdown");

    let (mut child, mut stdout) = start();
    initialize(&mut child, &mut stdout);
    drop(child.stdin.take());
    assert_eq!(child.wait().unwrap().code(), Some(1), "input ended without exit");
}

#[test]
fn help_and_version_answer_without_starting_a_server() {
    for (flag, expected) in [("--help", "Usage: onnx-lsp"), ("--version", "onnx-lsp ")] {
        let out = Command::new(env!("CARGO_BIN_EXE_onnx-lsp")).arg(flag).stdin(Stdio::null()).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{flag}");
        assert!(String::from_utf8_lossy(&out.stdout).contains(expected), "{flag}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_onnx-lsp")).arg("--bogus").stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_versions_diagnostics_are_written_before_the_answers_to_requests_about_it() {
    // The trace says when each request starts its work: only once the diagnostics are
    // written, so that on two cores they do not compete with the writer.
    let (mut child, mut stdout) = start_with(&[("ONNX_LSP_TRACE", "1")]);
    initialize(&mut child, &mut stdout);
    let mut text = String::from("<ir_version: 10, opset_import: [\"\" : 21]>\nmain (float[N] x) => (float[N] y) {\n");
    for i in 0..3000 {
        text.push_str(&format!("  v{} = Relu(v{i})\n", i + 1));
    }
    text.push_str("  y = Identity(v3000)\n}\n");
    let text = text.replacen("Relu(v0)", "Relu(x)", 1);
    let uri = "file:///order.onnxtxt";
    let doc = json!({ "uri": uri, "languageId": "onnx", "version": 1, "text": text });
    send(&mut child, json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": doc }}));
    // Asked with the change, as editors do: symbols, folding and tokens of the new version.
    for (id, method) in
        [(2, "textDocument/documentSymbol"), (3, "textDocument/foldingRange"), (4, "textDocument/semanticTokens/full")]
    {
        send(
            &mut child,
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": { "textDocument": { "uri": uri } }}),
        );
    }
    let mut order = Vec::new();
    while order.len() < 4 {
        let message = next_message(&mut stdout);
        if message["method"] == json!("textDocument/publishDiagnostics") {
            order.push("diagnostics".to_owned());
        } else if message.get("id").is_some() && message.get("method").is_none() {
            assert!(message.get("error").is_none(), "{message}");
            order.push(format!("response {}", message["id"]));
        }
    }
    assert_eq!(order[0], "diagnostics", "{order:?}");
    send(&mut child, json!({"jsonrpc": "2.0", "id": 9, "method": "shutdown"}));
    next_response(&mut stdout);
    send(&mut child, json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let mut trace = String::new();
    child.stderr.take().unwrap().read_to_string(&mut trace).unwrap();
    let events: Vec<&str> = trace.lines().filter(|l| l.starts_with("[trace")).collect();
    let written = events.iter().position(|e| e.contains("] diagnostics written 1 "));
    let first_request = events.iter().position(|e| e.contains("] request starts "));
    assert!(written.is_some() && first_request.is_some(), "{trace}");
    assert!(written < first_request, "a request started before the diagnostics were written:\n{trace}");
}

#[cfg(target_os = "linux")]
#[test]
fn the_server_runs_with_the_allocator_keeping_freed_memory_a_while() {
    let (mut child, mut stdout) = start();
    // Answering means the restart with the option set (an `exec`, same process) is done.
    initialize(&mut child, &mut stdout);
    let environ = std::fs::read(format!("/proc/{}/environ", child.id())).unwrap();
    for option in [&b"MIMALLOC_PURGE_DELAY=10000"[..], b"MIMALLOC_ALLOW_THP=0"] {
        let shown = String::from_utf8_lossy(option);
        assert!(environ.split(|&b| b == 0).any(|v| v == option), "{shown} is not set");
    }
    send(&mut child, json!({"jsonrpc": "2.0", "id": 9, "method": "shutdown"}));
    next_response(&mut stdout);
    send(&mut child, json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// Given 5 MB of `y = = = ,` lines with no graph around them, the server's peak memory stays
/// a small multiple of the document (issue 52: 412 MB, 80 times the text, when the parser
/// kept every token it dropped while looking for a place to go on; 46 MB now).
#[test]
fn a_document_that_never_reads_as_a_model_costs_a_small_multiple_of_its_size() {
    let (mut child, mut stdout) = start();
    send(&mut child, json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}));
    send(&mut child, json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    let text = "y = = = ,\n".repeat(500_000);
    send(
        &mut child,
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": "file:///tmp/errors.onnxtxt", "languageId": "onnx", "version": 1, "text": text}}}),
    );
    // The syntax-first publication, then the complete one.
    let mut published = 0;
    while published < 2 {
        if next_message(&mut stdout)["method"] == "textDocument/publishDiagnostics" {
            published += 1;
        }
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let peak_kib: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(peak_kib < 150 << 10, "peak {} MiB for a 5 MB document", peak_kib >> 10);
}
