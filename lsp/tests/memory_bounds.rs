//! What keeps the server's memory bounded whatever the client sends: the parser's cap on
//! syntax errors reaches the published diagnostics, and answers the client leaves unread
//! stop the server reading (backpressure) instead of piling up. (The third bound, on
//! semantic tokens of long number lists, is tested in `semantic_tokens.rs`.)

#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::Harness;
use onnx_lsp::transport::{CONCURRENCY, Unsent, serve_with};
use onnx_syntax::parser::MAX_ERRORS;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

const HEADER: &str = "<ir_version: 10, opset_import: [\"\" : 21]>\nmain (float[N] x) => (float[N] y) {\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_full_of_errors_publishes_the_first_thousand_and_says_the_rest_were_not_read() {
    // Big enough for the syntax-first list too (each is capped).
    let lines = onnx_lsp::server::SYNTAX_FIRST_BYTES / "  y = = = ,\n".len() + 1;
    assert!(lines > 3 * MAX_ERRORS);
    let text = format!("{HEADER}{}}}\n", "  y = = = ,\n".repeat(lines));
    let mut h = Harness::start(false).await;
    h.open(&text).await;
    let publications = h.publications().await;
    assert_eq!(publications.len(), 2, "syntax first, then complete");
    for diagnostics in publications {
        let diagnostics = diagnostics.as_array().unwrap();
        assert_eq!(diagnostics.len(), MAX_ERRORS + 1);
        let last = diagnostics.last().unwrap();
        assert_eq!(last["code"], json!("too-many-errors"), "{last}");
        assert!(last["message"].as_str().unwrap().contains("the rest of the text is not read"), "{last}");
    }
}

async fn send(to: &mut (impl AsyncWrite + Unpin), message: Value) {
    let body = message.to_string();
    to.write_all(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).await.unwrap();
    to.flush().await.unwrap();
}

/// The next message, and the length of its body.
async fn receive(from: &mut BufReader<impl AsyncRead + Unpin>) -> (Value, usize) {
    let mut length = 0;
    loop {
        let mut line = String::new();
        assert!(from.read_line(&mut line).await.unwrap() > 0, "the server closed its output");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            length = v.parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    from.read_exact(&mut body).await.unwrap();
    (serde_json::from_slice(&body).unwrap(), length)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_does_not_read_stops_the_server_reading_until_it_does() {
    // The stdio transport between in-memory pipes that hold 64 KiB each way, with a limit of
    // 1 MiB of unwritten answers (the server's is 64 MiB; the code is the same).
    const LIMIT: usize = 1 << 20;
    const REQUESTS: usize = 60;
    let (mut to_server, server_in) = tokio::io::duplex(64 << 10);
    let (server_out, from_server) = tokio::io::duplex(64 << 10);
    let mut from_server = BufReader::new(from_server);
    let unsent = Arc::new(Unsent::new(LIMIT));
    let (service, socket) = onnx_lsp::service();
    let server = tokio::spawn(serve_with(server_in, server_out, service, socket, unsent.clone()));

    send(&mut to_server, json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}))
        .await;
    assert!(receive(&mut from_server).await.0["result"]["capabilities"].is_object());
    send(&mut to_server, json!({"jsonrpc": "2.0", "method": "initialized", "params": {}})).await;
    // Semantic tokens of 4,000 nodes: answers of about 100 KB.
    let mut text = String::from(HEADER);
    for i in 0..4000 {
        text.push_str(&format!("  v{} = Relu(v{i})\n", i + 1));
    }
    text.push_str("  y = Identity(v4000)\n}\n");
    let text = text.replacen("Relu(v0)", "Relu(x)", 1);
    let uri = "file:///unread.onnxtxt";
    let doc = json!({ "uri": uri, "languageId": "onnx", "version": 1, "text": text });
    send(
        &mut to_server,
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": doc }}),
    )
    .await;
    loop {
        let (message, _) = receive(&mut from_server).await;
        if message["method"] == json!("textDocument/publishDiagnostics") {
            assert_eq!(message["params"]["diagnostics"], json!([]));
            break;
        }
    }

    // Many requests, small enough to all fit in the pipe at once, and no reading.
    for id in 0..REQUESTS {
        let params = json!({ "textDocument": { "uri": uri } });
        send(
            &mut to_server,
            json!({"jsonrpc": "2.0", "id": 100 + id, "method": "textDocument/semanticTokens/full", "params": params}),
        )
        .await;
    }
    // The server fills the queue up to the limit, and waits.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while unsent.pauses() == 0 || unsent.bytes() < LIMIT {
        assert!(tokio::time::Instant::now() < deadline, "the server never waited: {} bytes queued", unsent.bytes());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    // Reading again, every answer arrives.
    let mut answered = Vec::new();
    let mut largest = 0;
    while answered.len() < REQUESTS {
        let (message, length) = receive(&mut from_server).await;
        if message.get("method").is_some() {
            continue;
        }
        assert!(message["result"]["data"].as_array().is_some_and(|d| d.len() > 5 * 10_000), "{}", message["error"]);
        answered.push(message["id"].as_u64().unwrap());
        largest = largest.max(length);
    }
    answered.sort_unstable();
    assert_eq!(answered, (100..100 + REQUESTS as u64).collect::<Vec<_>>());
    // At most the limit, and the answers of the requests running when it was reached.
    let bound = LIMIT + CONCURRENCY * largest;
    assert!(REQUESTS * largest > 3 * bound, "the test must ask for more than the bound");
    assert!(unsent.peak() <= bound, "{} bytes queued at once, more than {bound}", unsent.peak());

    send(&mut to_server, json!({"jsonrpc": "2.0", "id": 9, "method": "shutdown"})).await;
    loop {
        let (message, _) = receive(&mut from_server).await;
        if message["id"] == json!(9) {
            break;
        }
    }
    send(&mut to_server, json!({"jsonrpc": "2.0", "method": "exit"})).await;
    assert_eq!(server.await.unwrap(), 0);
    assert_eq!(unsent.bytes(), 0);
}
