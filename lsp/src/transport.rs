//! The stdio transport: the protocol's framing (`Content-Length` headers) and the JSON-RPC
//! envelope, in front of the `LspService`.
//!
//! Ours rather than tower-lsp-server's `Server` because that one stops reading at the first
//! message it cannot decode (its framed reader ends after an error): one stray `{}`, an
//! array, or `"jsonrpc": "1.0"` from a client ended the server silently with status 0.
//! Here a message with a valid header but a body that is not a JSON-RPC 2.0 message gets an
//! error response (`-32700` parse error, `-32600` invalid request) and reading goes on; what
//! went wrong is logged on stderr. The exit status follows the protocol: 0 after `shutdown`
//! then `exit`, 1 for `exit` without `shutdown` and for input that ends without `exit`.
//! A client that leaves answers unread stops the server reading (see [`MAX_UNSENT`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use futures::channel::mpsc as fmpsc;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, mpsc};
use tower::{Service, ServiceExt};
use tower_lsp_server::jsonrpc::{Request, Response};
use tower_lsp_server::{ClientSocket, LspService};

use crate::delivery::Delivery;
use crate::server::Backend;

/// Requests handled at once, as tower-lsp-server's own transport does.
pub const CONCURRENCY: usize = 4;

/// The largest message body read; a bigger one is skipped with an error (a 70 MB text model
/// opened in an editor is well below it).
const MAX_BODY: usize = 1 << 30;

/// Answer bytes that may wait unwritten before the server stops reading and answering
/// requests. The answers go out only as fast as the client reads them; a client that sends
/// requests and does not read (a hung editor, one busy elsewhere) had every answer queued:
/// 300 unread semantic-token answers of 5.4 MB took the server from 0.36 to 1.84 GB (0.55 GB
/// with this limit). Past this much, no message is read and no request starts until the
/// writer has brought the queue back under it: the queue then holds at most this plus the
/// answers of the requests already running.
pub const MAX_UNSENT: usize = 64 << 20;

/// The bytes of answers queued for the client and not yet written, against a limit: what
/// the reader and the request stage wait on, and what the tests read.
#[derive(Debug)]
pub struct Unsent {
    limit: usize,
    bytes: AtomicUsize,
    /// The most bytes ever queued at once.
    peak: AtomicUsize,
    /// How many times reading or starting a request waited for the queue to drain.
    pauses: AtomicUsize,
    /// Set when the writer stops (the client is gone): nothing drains any more, and nobody
    /// must wait for it.
    closed: AtomicBool,
    drained: Notify,
}

impl Unsent {
    pub fn new(limit: usize) -> Unsent {
        Unsent {
            limit,
            bytes: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            pauses: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
            drained: Notify::new(),
        }
    }

    /// Bytes queued now.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }

    /// The most bytes queued at once so far.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Acquire)
    }

    /// How many times the server waited for the client to read.
    pub fn pauses(&self) -> usize {
        self.pauses.load(Ordering::Acquire)
    }

    fn queued(&self, n: usize) {
        let now = self.bytes.fetch_add(n, Ordering::AcqRel) + n;
        self.peak.fetch_max(now, Ordering::AcqRel);
    }

    fn written(&self, n: usize) {
        let now = self.bytes.fetch_sub(n, Ordering::AcqRel).saturating_sub(n);
        if now < self.limit {
            self.drained.notify_waiters();
        }
    }

    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.drained.notify_waiters();
    }

    /// Returns once the queue is under the limit (or the writer has stopped).
    async fn room(&self) {
        let mut paused = false;
        loop {
            let woken = self.drained.notified();
            tokio::pin!(woken);
            // Registered before looking, so a drain in between is not missed.
            woken.as_mut().enable();
            if self.bytes() < self.limit || self.closed.load(Ordering::Acquire) {
                return;
            }
            if !paused {
                paused = true;
                self.pauses.fetch_add(1, Ordering::AcqRel);
            }
            woken.await;
        }
    }
}

/// Where answers go: to the writer, counted until written.
#[derive(Clone)]
struct Answers {
    queue: mpsc::UnboundedSender<String>,
    unsent: Arc<Unsent>,
}

impl Answers {
    fn send(&self, text: String) {
        let n = text.len();
        self.unsent.queued(n);
        if self.queue.send(text).is_err() {
            // The writer is gone: the answer is dropped, and so is its count.
            self.unsent.written(n);
        }
    }
}

/// Serves the language server on stdin/stdout until the client says exit; returns the
/// process exit status.
pub async fn serve_stdio() -> i32 {
    let (service, socket) = crate::server::service();
    serve(tokio::io::stdin(), tokio::io::stdout(), service, socket).await
}

/// Serves `service` on `input`/`output` until `exit` or the end of the input; returns the
/// process exit status.
pub async fn serve<R, W>(input: R, output: W, service: LspService<Backend>, socket: ClientSocket) -> i32
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_with(input, output, service, socket, Arc::new(Unsent::new(MAX_UNSENT))).await
}

/// [`serve`], with the queue of unwritten answers and its limit given (the tests give a
/// small one, and read what it counted).
pub async fn serve_with<R, W>(
    input: R,
    output: W,
    mut service: LspService<Backend>,
    socket: ClientSocket,
    unsent: Arc<Unsent>,
) -> i32
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, out_rx) = mpsc::unbounded_channel::<String>();
    let out_tx = Answers { queue: out_tx, unsent: unsent.clone() };
    // Requests and notifications the server sends the client go out through the writer.
    let (to_client, mut client_responses) = socket.split();
    let delivery = service.inner().delivery.clone();
    delivery.attach();
    let writer_unsent = unsent.clone();
    let writer = tokio::spawn(async move {
        write_messages(output, out_rx, to_client, &delivery, &writer_unsent).await;
        delivery.detach();
        writer_unsent.close();
    });
    // Handled requests, `CONCURRENCY` at a time, in the order they came.
    let (mut calls_tx, calls_rx) = fmpsc::channel::<Call>(100);
    let respond_tx = out_tx.clone();
    // The next one starts only while the answers already queued are under the limit, in
    // order: the reader stopping is not enough, as up to a hundred messages read before it
    // stopped wait in `calls_tx`.
    // (Boxed: as its own type, the stream trips the compiler's check that the task is `Send`.)
    let gated: futures::stream::BoxStream<'static, Call> =
        futures::stream::unfold((calls_rx, unsent.clone()), |(mut calls, unsent)| async move {
            let call = calls.next().await?;
            unsent.room().await;
            Some((call, (calls, unsent)))
        })
        .boxed();
    let calls = tokio::spawn(async move {
        gated
            .buffer_unordered(CONCURRENCY)
            .for_each(|response: Option<Response>| {
                if let Some(text) = response.and_then(|r| serde_json::to_string(&r).ok()) {
                    respond_tx.send(text);
                }
                futures::future::ready(())
            })
            .await;
    });

    let mut reader = BufReader::new(input);
    let mut shutdown_seen = false;
    let status = loop {
        // Nothing more is read while the client leaves too many answers unread: its
        // messages wait in the pipe (and it, when the pipe is full), not in this process.
        unsent.room().await;
        let body = match read_message(&mut reader).await {
            Ok(Some(body)) => body,
            Ok(None) => {
                eprintln!("onnx-lsp: the input ended without an exit notification");
                break 1;
            }
            Err(Framing::Skipped(why)) => {
                eprintln!("onnx-lsp: {why}");
                out_tx.send(error_response(Value::Null, -32700, &why));
                continue;
            }
            Err(Framing::Io(e)) => {
                eprintln!("onnx-lsp: cannot read the input: {e}");
                break 1;
            }
        };
        match classify(&body) {
            Incoming::Request(request) => {
                let method = request.method().to_owned();
                shutdown_seen |= method == "shutdown";
                let Ok(ready) = service.ready().await else {
                    eprintln!("onnx-lsp: the service stopped");
                    break 1;
                };
                let call = ready.call(request);
                let response: Call = Box::pin(async move { call.await.unwrap_or(None) });
                if calls_tx.send(response).await.is_err() {
                    break 1;
                }
                if method == "exit" {
                    break if shutdown_seen { 0 } else { 1 };
                }
            }
            Incoming::Response(response) => {
                let _ = client_responses.send(response).await;
            }
            Incoming::Invalid { id, code, why } => {
                eprintln!("onnx-lsp: {why}");
                out_tx.send(error_response(id, code, &why));
            }
        }
    };
    // Let the requests under way answer, then flush what is written.
    calls_tx.close_channel();
    let _ = calls.await;
    drop(out_tx);
    let _ = writer.await;
    status
}

type Call = std::pin::Pin<Box<dyn std::future::Future<Output = Option<Response>> + Send>>;

/// What a message body is.
enum Incoming {
    Request(Request),
    Response(Response),
    Invalid { id: Value, code: i64, why: String },
}

fn classify(body: &[u8]) -> Incoming {
    // The usual case in one pass (a document opened in full can be tens of megabytes); the
    // message is looked at as a JSON value only to say what is wrong with it.
    // (A missing `method` reads as an empty one: that is an invalid request, said below.)
    if let Ok(request) = serde_json::from_slice::<Request>(body)
        && !request.method().is_empty()
    {
        return Incoming::Request(request);
    }
    if let Ok(response) = serde_json::from_slice::<Response>(body) {
        return Incoming::Response(response);
    }
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return Incoming::Invalid { id: Value::Null, code: -32700, why: format!("not JSON: {e}") },
    };
    let Some(object) = value.as_object() else {
        let why = "a message must be a JSON object (batches are not part of the protocol)".to_owned();
        return Incoming::Invalid { id: Value::Null, code: -32600, why };
    };
    // An id of the wrong type cannot be echoed back.
    let id = match object.get("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
        _ => Value::Null,
    };
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return Incoming::Invalid {
            id,
            code: -32600,
            why: "the message is not JSON-RPC 2.0 (\"jsonrpc\": \"2.0\")".into(),
        };
    }
    // Neither read as a request nor as a response: say which it was meant to be.
    let why = if object.contains_key("method") {
        match serde_json::from_value::<Request>(value.clone()) {
            Err(e) => format!("not a valid request: {e}"),
            Ok(_) => "not a valid request".into(),
        }
    } else if object.contains_key("result") || object.contains_key("error") {
        match serde_json::from_value::<Response>(value.clone()) {
            Err(e) => format!("not a valid response: {e}"),
            Ok(_) => "not a valid response".into(),
        }
    } else {
        "neither a request nor a response".into()
    };
    Incoming::Invalid { id, code: -32600, why }
}

fn error_response(id: Value, code: i64, message: &str) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }).to_string()
}

enum Framing {
    /// A message was read past (bad header, oversized body); reading goes on.
    Skipped(String),
    Io(std::io::Error),
}

/// The next message body, or `None` at the end of the input.
async fn read_message<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> Result<Option<Vec<u8>>, Framing> {
    let mut length = None;
    let mut line = Vec::new();
    let mut any_header = false;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).await.map_err(Framing::Io)?;
        if n == 0 {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if any_header {
                break;
            }
            continue;
        }
        any_header = true;
        if line.len() > 8192 {
            return Err(Framing::Skipped("a header line longer than 8 KiB".into()));
        }
        if let Some((name, value)) = text.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let Some(length) = length else {
        return Err(Framing::Skipped("a message header without a valid Content-Length".into()));
    };
    if length > MAX_BODY {
        // Read past it so that the next message is found.
        let mut rest = (&mut *reader).take(length as u64);
        tokio::io::copy(&mut rest, &mut tokio::io::sink()).await.map_err(Framing::Io)?;
        return Err(Framing::Skipped(format!("a message of {length} bytes, more than {MAX_BODY}")));
    }
    let mut body = vec![0; length];
    match reader.read_exact(&mut body).await {
        Ok(_) => Ok(Some(body)),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(Framing::Io(e)),
    }
}

/// Writes responses (`bodies`) and what the server sends on its own (`to_client`: published
/// diagnostics, log messages) until `bodies` closes. The server's own messages go first
/// whenever both wait: the language server lets a version's requests answer only after its
/// diagnostics are published, and the diagnostics must then reach the client first, not
/// behind a megabyte of document symbols.
async fn write_messages<W, S>(
    mut output: W,
    mut bodies: mpsc::UnboundedReceiver<String>,
    mut to_client: S,
    delivery: &Delivery,
    unsent: &Unsent,
) where
    W: AsyncWrite + Unpin,
    S: futures::Stream<Item = Request> + Unpin,
{
    loop {
        // `answer`: the body is an answer, counted in `unsent` until written.
        let (body, published, answer) = tokio::select! {
            biased;
            Some(message) = to_client.next() => match serde_json::to_string(&message) {
                Ok(text) => (text, publication(&message), false),
                Err(_) => continue,
            },
            body = bodies.recv() => match body {
                Some(body) => (body, None, true),
                None => return,
            },
        };
        let header = format!("Content-Length: {}\r\n\r\n", body.len());
        let written = async {
            output.write_all(header.as_bytes()).await?;
            output.write_all(body.as_bytes()).await?;
            output.flush().await
        };
        let written = written.await;
        if answer {
            unsent.written(body.len());
        }
        if written.is_err() {
            // The client is gone: nothing more can be said to it.
            return;
        }
        match published {
            Some((uri, version)) => {
                crate::trace::event("diagnostics written", version);
                delivery.note(&uri, version);
            }
            None => crate::trace::event("written", body.len()),
        }
    }
}

/// The document and version of a `publishDiagnostics` notification that has one.
fn publication(message: &Request) -> Option<(String, i32)> {
    if message.method() != "textDocument/publishDiagnostics" {
        return None;
    }
    let params = message.params()?;
    let uri = params.get("uri")?.as_str()?.to_owned();
    let version = i32::try_from(params.get("version")?.as_i64()?).ok()?;
    Some((uri, version))
}
