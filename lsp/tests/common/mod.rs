//! Drives the real server in-process: requests go through the same `LspService` the stdio
//! transport serves, and the notifications it sends the client (published diagnostics,
//! log messages) are collected from its client socket.

#![allow(dead_code, clippy::unwrap_used)]

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tower::{Service, ServiceExt};
use tower_lsp_server::LspService;
use tower_lsp_server::jsonrpc::Request;

pub const URI: &str = "file:///fixture/model.onnxtxt";

pub struct Harness {
    service: LspService<onnx_lsp::server::Backend>,
    notifications: mpsc::UnboundedReceiver<Request>,
    next_id: i64,
    pub version: i32,
    pub text: String,
    pub utf8: bool,
    /// Messages the server logged (its panics land here).
    pub logs: Vec<String>,
    /// The last diagnostics received, with their version.
    published: Option<(i32, Value)>,
    /// The document's URI ([`URI`] unless a test places it beside its files).
    pub uri: String,
}

impl Harness {
    pub async fn start(utf8: bool) -> Harness {
        let (service, socket) = onnx_lsp::service();
        let (tx, notifications) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut socket = socket;
            while let Some(message) = socket.next().await {
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        let mut h = Harness {
            service,
            notifications,
            next_id: 0,
            version: 0,
            text: String::new(),
            utf8,
            logs: Vec::new(),
            uri: URI.to_owned(),
            published: None,
        };
        let encodings = if utf8 { json!(["utf-8", "utf-16"]) } else { json!(["utf-16"]) };
        let init = h
            .request(
                "initialize",
                json!({ "capabilities": { "general": { "positionEncodings": encodings } }, "processId": null, "rootUri": null }),
            )
            .await;
        let negotiated = init["result"]["capabilities"]["positionEncoding"].as_str().unwrap_or("").to_owned();
        assert_eq!(negotiated, if utf8 { "utf-8" } else { "utf-16" });
        h.notify("initialized", json!({})).await;
        h
    }

    pub async fn request(&mut self, method: &'static str, params: Value) -> Value {
        self.next_id += 1;
        let request = Request::build(method).params(params).id(self.next_id).finish();
        let response = self.service.ready().await.unwrap().call(request).await.unwrap();
        serde_json::to_value(response).unwrap()
    }

    /// Sends a request and returns its answer to be awaited later, so that more messages
    /// can be sent meanwhile, as an editor does.
    pub async fn start_request(
        &mut self,
        method: &'static str,
        params: Value,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Value> + Send>> {
        self.next_id += 1;
        let request = Request::build(method).params(params).id(self.next_id).finish();
        let call = self.service.ready().await.unwrap().call(request);
        Box::pin(async move { serde_json::to_value(call.await.unwrap()).unwrap() })
    }

    pub async fn notify(&mut self, method: &'static str, params: Value) {
        let request = Request::build(method).params(params).finish();
        let response = self.service.ready().await.unwrap().call(request).await.unwrap();
        assert!(response.is_none());
    }

    pub async fn open(&mut self, text: &str) {
        self.version = 1;
        self.text = text.to_owned();
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": self.uri, "languageId": "onnx", "version": 1, "text": text } }),
        )
        .await;
    }

    /// Replaces the byte range `start..end` of the text, as an incremental change.
    pub async fn edit(&mut self, start: usize, end: usize, new_text: &str) {
        let range = json!({ "start": self.position(start), "end": self.position(end) });
        self.text.replace_range(start..end, new_text);
        self.version += 1;
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": self.uri, "version": self.version },
                "contentChanges": [{ "range": range, "text": new_text }]
            }),
        )
        .await;
    }

    /// Waits for the diagnostics published for the current version (earlier versions'
    /// diagnostics may arrive first and are skipped). A big document's version is published
    /// twice, syntax first and then complete: this returns the complete list.
    pub async fn diagnostics(&mut self) -> Value {
        let wanted = self.version;
        if let Some((version, diagnostics)) = &self.published
            && *version == wanted
        {
            return diagnostics.clone();
        }
        let publications = self.publications().await;
        let last = publications.last().cloned().unwrap_or(Value::Null);
        self.published = Some((wanted, last.clone()));
        last
    }

    /// Every list published for the current version: one, or for a big document the
    /// syntax-first list and then the complete one.
    pub async fn publications(&mut self) -> Vec<Value> {
        let wanted = self.version;
        let expected = if self.text.len() >= onnx_lsp::server::SYNTAX_FIRST_BYTES { 2 } else { 1 };
        let mut found = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let message = tokio::time::timeout_at(deadline, self.notifications.recv())
                .await
                .expect("no diagnostics for the current version within 30 s")
                .expect("the server closed its client socket");
            let (method, _, params) = message.into_parts();
            let params = params.unwrap_or(Value::Null);
            match method.as_ref() {
                "textDocument/publishDiagnostics" if params["version"] == json!(wanted) => {
                    found.push(params["diagnostics"].clone());
                    if found.len() == expected {
                        return found;
                    }
                }
                "window/logMessage" => self.logs.push(params["message"].as_str().unwrap_or("").to_owned()),
                _ => {}
            }
        }
    }

    /// The protocol position of a byte offset in the current text.
    pub fn position(&self, offset: usize) -> Value {
        let before = &self.text[..offset];
        let line = before.matches('\n').count();
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = &self.text[line_start..offset];
        let character = if self.utf8 { column.len() } else { column.encode_utf16().count() };
        json!({ "line": line, "character": character })
    }

    /// The byte offset of a protocol position in the current text.
    pub fn offset(&self, position: &Value) -> usize {
        let line = position["line"].as_u64().unwrap() as usize;
        let character = position["character"].as_u64().unwrap() as usize;
        let start: usize = self.text.split_inclusive('\n').take(line).map(str::len).sum();
        let line_text = self.text[start..].split('\n').next().unwrap_or("");
        let mut units = 0;
        for (i, c) in line_text.char_indices() {
            if units >= character {
                return start + i;
            }
            units += if self.utf8 { c.len_utf8() } else { c.len_utf16() };
        }
        start + line_text.len()
    }

    pub fn doc(&self) -> Value {
        json!({ "uri": self.uri })
    }
}
