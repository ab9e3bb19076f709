//! The LSP glue: the only module that names the framework (tower-lsp-server). It turns
//! protocol messages into calls on the [`Workspace`] and the feature functions, runs every
//! feature behind a panic guard, and publishes diagnostics from one background task so they
//! reach the client in version order.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Error as RpcError, Result as RpcResult};
pub use tower_lsp_server::ls_types as lsp;
use tower_lsp_server::{Client, LanguageServer, LspService};

use crate::delivery::Delivery;
use crate::features;
use crate::line_index::{Encoding, LineIndex};
use crate::lsp::*;
use crate::snapshot::Snapshot;
use crate::workspace::{Job, Missing, Workspace};

/// The custom request that returns a binary model as text.
pub const BINARY_TO_TEXT: &str = "onnx/binaryToText";
/// The custom request that converts a model file between text and binary.
pub const CONVERT: &str = "onnx/convert";
/// The custom request that writes a document's text as a binary model file.
pub const SAVE_BINARY: &str = "onnx/saveBinary";

#[derive(Debug)]
pub struct Backend {
    client: Client,
    workspace: Arc<Mutex<Workspace>>,
    /// Documents whose text changed, for the diagnostics task.
    dirty: mpsc::UnboundedSender<Uri>,
    /// The semantic tokens last sent for each document, with their result id, which a
    /// `semanticTokens/full/delta` request names to get only what changed since.
    tokens_sent: Mutex<std::collections::HashMap<Uri, (String, Vec<SemanticToken>)>>,
    /// Numbers the result ids.
    results: std::sync::atomic::AtomicU64,
    /// Which diagnostics the transport has written (see [`crate::delivery`]).
    pub delivery: Arc<Delivery>,
}

/// The service a transport serves: stdio in `main`, in-process in the tests.
pub fn service() -> (LspService<Backend>, tower_lsp_server::ClientSocket) {
    LspService::build(|client| {
        let workspace = Arc::new(Mutex::new(Workspace::default()));
        let (dirty, queue) = mpsc::unbounded_channel();
        let delivery = Arc::new(Delivery::default());
        tokio::spawn(publish_diagnostics(client.clone(), workspace.clone(), queue, delivery.clone()));
        Backend { client, workspace, dirty, tokens_sent: Mutex::default(), results: Default::default(), delivery }
    })
    .custom_method(BINARY_TO_TEXT, Backend::binary_to_text)
    .custom_method(CONVERT, Backend::convert)
    .custom_method(SAVE_BINARY, Backend::save_binary)
    .finish()
}

/// Documents at least this big get their syntax errors published as soon as parsing ends,
/// with the previous version's semantic diagnostics moved through the edit, before the
/// rest of the analysis is done (below it the whole analysis takes a few milliseconds).
pub const SYNTAX_FIRST_BYTES: usize = 256 * 1024;

/// Analyses each changed document and publishes its diagnostics, one document at a time,
/// so the client always ends with the diagnostics of the newest version. Changes that
/// arrive while a version is being analysed make that analysis stop at its next stage, and
/// are picked up by the next round. This task is the only one that analyses: requests wait
/// for its result.
async fn publish_diagnostics(
    client: Client,
    workspace: Arc<Mutex<Workspace>>,
    mut queue: mpsc::UnboundedReceiver<Uri>,
    delivery: Arc<Delivery>,
) {
    while let Some(first) = queue.recv().await {
        let mut uris = vec![first];
        while let Ok(more) = queue.try_recv() {
            if !uris.contains(&more) {
                uris.push(more);
            }
        }
        for uri in uris {
            // Closed meanwhile, or this version was analysed by an earlier round.
            let Some(job) = Workspace::start(&workspace, &uri) else { continue };
            let version = job.version;
            crate::trace::event("analysis start", version);
            let finished = job.analysis.clone();
            let (early, mut syntax_first) = mpsc::unbounded_channel();
            let target = uri.clone();
            let analysing = crate::analyser::run(move || analyse(job, &target, early));
            tokio::pin!(analysing);
            let outcome = loop {
                tokio::select! {
                    // The syntax-first list, sent before the analysis ends, goes out first.
                    biased;
                    Some(diagnostics) = syntax_first.recv() => {
                        if lock(&workspace).version(&uri) == Some(version) {
                            client.publish_diagnostics(uri.clone(), diagnostics, Some(version)).await;
                            crate::trace::event("syntax-first queued", version);
                        }
                    }
                    outcome = &mut analysing => break Some(outcome),
                    // Superseded: the analysis stops at its next stage on its own, and the
                    // new version's need not wait for that (a stage of a big document
                    // takes tens of milliseconds).
                    () = finished.superseded() => break None,
                }
            };
            // Requests waiting for this version go ahead once its diagnostics are out
            // (written, below, when they are published; at once otherwise).
            let release = Released(finished.clone());
            let Some(outcome) = outcome else { continue };
            let snapshot = match outcome {
                Ok(Ok(snapshot)) => snapshot,
                // A newer version is queued already: its own round publishes.
                Ok(Err(Missing::Stale)) => continue,
                Ok(Err(Missing::Failed(message))) => {
                    report_failure(&client, &workspace, uri, message).await;
                    continue;
                }
                Err(why) => {
                    let message = format!("onnx-lsp: analysis failed: {why}");
                    // Requests waiting for this version are answered with it.
                    finished.fail(message.clone());
                    report_failure(&client, &workspace, uri, message).await;
                    continue;
                }
            };
            if lock(&workspace).version(&uri) != Some(snapshot.version) {
                continue;
            }
            crate::trace::event("analysis end", version);
            let diagnostics = features::diagnostics::to_lsp(&snapshot, &uri);
            client.publish_diagnostics(uri.clone(), diagnostics, Some(version)).await;
            crate::trace::event("diagnostics queued", version);
            // Waited for beside this task, which goes on with the next document or version.
            let delivery = delivery.clone();
            tokio::spawn(async move {
                delivery.written(uri.as_str(), version).await;
                drop(release);
            });
        }
        // Replaced analyses are freed now that the diagnostics are out, at low priority.
        let retired = Workspace::take_retired(&workspace);
        if !retired.is_empty() {
            crate::reaper::free(Box::new(retired));
        }
    }
}

/// Tells a version's waiting requests to go ahead when the diagnostics task is done with
/// it, whichever way the round ends.
struct Released(Arc<crate::workspace::VersionAnalysis>);

impl Drop for Released {
    fn drop(&mut self) {
        self.0.done();
    }
}

/// Makes one version's analysis (on a blocking thread), sending the syntax-first
/// diagnostics of a big document to `early`. A panic ends the analysis as failed, so
/// that requests waiting for it are answered.
fn analyse(job: Job, uri: &Uri, early: mpsc::UnboundedSender<Vec<Diagnostic>>) -> Result<Arc<Snapshot>, Missing> {
    let big = job.text.len() >= SYNTAX_FIRST_BYTES;
    let (analysis, base, encoding) = (job.analysis.clone(), job.base.clone(), job.encoding);
    let on_parsed = |new_text: &str, lines: &LineIndex, found: &[onnx_core::diagnostic::Diagnostic]| {
        if big {
            let place = features::diagnostics::Placing { text: new_text, lines, encoding, uri };
            let _ = early.send(features::diagnostics::syntax_first(&place, found, base.as_deref()));
        }
    };
    guarded("analysis", || job.run(uri, &on_parsed)).unwrap_or_else(|message| {
        analysis.fail(message.clone());
        Err(Missing::Failed(message))
    })
}

/// An analysis that failed still ends with diagnostics for the version: one that says so.
async fn report_failure(client: &Client, workspace: &Mutex<Workspace>, uri: Uri, message: String) {
    let version = lock(workspace).version(&uri);
    client.log_message(MessageType::ERROR, &message).await;
    let diagnostic = Diagnostic {
        message,
        severity: Some(DiagnosticSeverity::ERROR),
        source: Some("onnx-lsp".into()),
        ..Default::default()
    };
    client.publish_diagnostics(uri, vec![diagnostic], version).await;
}

fn invalid_params(message: String) -> RpcError {
    RpcError { code: tower_lsp_server::jsonrpc::ErrorCode::InvalidParams, message: message.into(), data: None }
}

fn lock(workspace: &Mutex<Workspace>) -> std::sync::MutexGuard<'_, Workspace> {
    // A panic while holding the lock cannot leave the documents half-edited (edits are
    // applied to a copy first), so a poisoned lock is still usable.
    workspace.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs a feature; a panic becomes an error message instead of taking the server down.
fn guarded<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let detail = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        format!("onnx-lsp: internal error in {what}: {detail}")
    })
}

impl Backend {
    /// Gives full tokens a result id and keeps them, for the next delta request.
    fn remember_tokens(&self, uri: &Uri, mut tokens: SemanticTokens) -> SemanticTokens {
        let id = self.results.fetch_add(1, std::sync::atomic::Ordering::Relaxed).to_string();
        tokens.result_id = Some(id.clone());
        self.tokens_sent.lock().unwrap_or_else(|p| p.into_inner()).insert(uri.clone(), (id, tokens.data.clone()));
        tokens
    }

    /// Runs a feature on the current version's analysis of a document, behind the panic
    /// guard and on a blocking thread (never on the runtime's, which publish diagnostics
    /// and read messages). It waits for the analysis the diagnostics task is making; a
    /// version that changed before its analysis was done is answered `ContentModified`,
    /// as the protocol asks, and the client asks again.
    async fn with_snapshot<T: Send + 'static>(
        &self,
        uri: &Uri,
        what: &'static str,
        f: impl FnOnce(&Snapshot) -> Option<T> + Send + 'static,
    ) -> RpcResult<Option<T>> {
        let Some(analysis) = Workspace::analysis(&self.workspace, uri) else { return Ok(None) };
        let outcome = tokio::task::spawn_blocking(move || {
            analysis.wait().map(|s| {
                crate::trace::event("request starts", what);
                let answer = guarded(what, || f(&s));
                crate::trace::event("request ends", what);
                answer
            })
        })
        .await
        .unwrap_or_else(|e| Err(Missing::Failed(format!("onnx-lsp: {what}: the request's thread failed: {e}"))));
        let message = match outcome {
            Ok(Ok(value)) => return Ok(value),
            Err(Missing::Stale) => {
                return Err(RpcError {
                    code: tower_lsp_server::jsonrpc::ErrorCode::ContentModified,
                    message: "the document changed".into(),
                    data: None,
                });
            }
            Ok(Err(message)) | Err(Missing::Failed(message)) => message,
        };
        self.client.log_message(MessageType::ERROR, &message).await;
        Err(RpcError { code: tower_lsp_server::jsonrpc::ErrorCode::InternalError, message: message.into(), data: None })
    }

    async fn binary_to_text(
        &self,
        params: features::binary::BinaryToTextParams,
    ) -> RpcResult<features::binary::BinaryToTextResult> {
        self.file_request("binaryToText", move || features::binary::binary_to_text(&params)).await
    }

    async fn convert(&self, params: features::binary::ConvertParams) -> RpcResult<features::binary::ConvertResult> {
        self.file_request("convert", move || features::binary::convert(&params)).await
    }

    async fn save_binary(
        &self,
        params: features::binary::SaveBinaryParams,
    ) -> RpcResult<features::binary::ConvertResult> {
        self.file_request("saveBinary", move || features::binary::save_binary(&params)).await
    }

    /// A request about a file rather than an open document: its own failures (unreadable,
    /// not a model) are the client's to show; a panic is ours. The file is read on a
    /// blocking thread, never on the runtime's, so a slow disk stalls only this request.
    async fn file_request<T: Send + 'static>(
        &self,
        what: &'static str,
        f: impl FnOnce() -> Result<T, String> + Send + 'static,
    ) -> RpcResult<T> {
        let outcome = tokio::task::spawn_blocking(move || guarded(what, f))
            .await
            .unwrap_or_else(|e| Err(format!("{what}: the request's thread failed: {e}")));
        match outcome {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(message)) => Err(invalid_params(message)),
            Err(message) => {
                self.client.log_message(MessageType::ERROR, &message).await;
                Err(RpcError::internal_error())
            }
        }
    }

    fn changed(&self, uri: Uri) {
        let _ = self.dirty.send(uri);
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> RpcResult<InitializeResult> {
        let offered = params.capabilities.general.and_then(|g| g.position_encodings).unwrap_or_default();
        // UTF-8 saves converting columns on every request; UTF-16 is what every client knows.
        let encoding = if offered.contains(&PositionEncodingKind::UTF8) { Encoding::Utf8 } else { Encoding::Utf16 };
        lock(&self.workspace).encoding = encoding;
        Ok(InitializeResult {
            capabilities: features::capabilities(encoding),
            server_info: Some(ServerInfo { name: "onnx-lsp".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
            ..Default::default()
        })
    }

    async fn shutdown(&self) -> RpcResult<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        lock(&self.workspace).open(doc.uri.clone(), doc.text, doc.version);
        self.changed(doc.uri);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let version = params.text_document.version;
        crate::trace::event("change read", version);
        let applied = lock(&self.workspace).change(&uri, version, params.content_changes);
        crate::trace::event("change applied", version);
        match applied {
            Ok(()) => self.changed(uri),
            Err(message) => self.client.log_message(MessageType::WARNING, message).await,
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        lock(&self.workspace).close(&uri);
        self.tokens_sent.lock().unwrap_or_else(|p| p.into_inner()).remove(&uri);
        self.client.publish_diagnostics(uri, Vec::new(), None).await;
    }

    async fn hover(&self, params: HoverParams) -> RpcResult<Option<Hover>> {
        let at = params.text_document_position_params;
        let dir = crate::workspace::model_dir(&at.text_document.uri);
        self.with_snapshot(&at.text_document.uri, "hover", move |s| features::hover::hover(s, at.position, dir)).await
    }

    async fn goto_definition(&self, params: GotoDefinitionParams) -> RpcResult<Option<GotoDefinitionResponse>> {
        let at = params.text_document_position_params;
        let uri = at.text_document.uri;
        self.with_snapshot(&uri.clone(), "definition", move |s| features::navigation::definition(s, &uri, at.position))
            .await
    }

    async fn references(&self, params: ReferenceParams) -> RpcResult<Option<Vec<Location>>> {
        let at = params.text_document_position;
        let uri = at.text_document.uri;
        let include = params.context.include_declaration;
        self.with_snapshot(&uri.clone(), "references", move |s| {
            features::navigation::references(s, &uri, at.position, include)
        })
        .await
    }

    async fn document_highlight(&self, params: DocumentHighlightParams) -> RpcResult<Option<Vec<DocumentHighlight>>> {
        let at = params.text_document_position_params;
        self.with_snapshot(&at.text_document.uri, "highlight", move |s| {
            features::navigation::highlights(s, at.position)
        })
        .await
    }

    async fn prepare_rename(&self, params: TextDocumentPositionParams) -> RpcResult<Option<PrepareRenameResponse>> {
        self.with_snapshot(&params.text_document.uri, "prepareRename", move |s| {
            features::rename::prepare(s, params.position)
        })
        .await
    }

    async fn rename(&self, params: RenameParams) -> RpcResult<Option<WorkspaceEdit>> {
        let at = params.text_document_position;
        let uri = at.text_document.uri;
        let new_name = params.new_name;
        let outcome = self
            .with_snapshot(&uri.clone(), "rename", move |s| {
                Some(features::rename::rename(s, &uri, at.position, &new_name))
            })
            .await?;
        match outcome {
            Some(Err(message)) => Err(RpcError {
                code: tower_lsp_server::jsonrpc::ErrorCode::InvalidParams,
                message: message.into(),
                data: None,
            }),
            Some(Ok(edit)) => Ok(edit),
            None => Ok(None),
        }
    }

    async fn document_symbol(&self, params: DocumentSymbolParams) -> RpcResult<Option<DocumentSymbolResponse>> {
        self.with_snapshot(&params.text_document.uri, "documentSymbol", move |s| {
            Some(features::symbols::document_symbols(s))
        })
        .await
    }

    async fn selection_range(&self, params: SelectionRangeParams) -> RpcResult<Option<Vec<SelectionRange>>> {
        let positions = params.positions;
        self.with_snapshot(&params.text_document.uri, "selectionRange", move |s| {
            Some(features::symbols::selection_ranges(s, &positions))
        })
        .await
    }

    /// Searches every open document's outline, each as analysed for its current version
    /// (waiting for an analysis under way).
    async fn symbol(&self, params: WorkspaceSymbolParams) -> RpcResult<Option<WorkspaceSymbolResponse>> {
        const LIMIT: usize = 1000;
        let mut found = Vec::new();
        for (uri, analysis) in Workspace::analyses(&self.workspace) {
            let query = params.query.clone();
            let searched = tokio::task::spawn_blocking(move || {
                // A document whose analysis failed or went stale has nothing to offer.
                let Ok(s) = analysis.wait() else { return Ok(Vec::new()) };
                guarded("workspace/symbol", || {
                    let mut found = Vec::new();
                    features::symbols::workspace_symbols(&s, &uri, &query, LIMIT, &mut found);
                    found
                })
            })
            .await
            .unwrap_or_else(|e| Err(format!("onnx-lsp: workspace/symbol: the request's thread failed: {e}")));
            match searched {
                Ok(symbols) => found.extend(symbols),
                Err(message) => {
                    self.client.log_message(MessageType::ERROR, &message).await;
                    let code = tower_lsp_server::jsonrpc::ErrorCode::InternalError;
                    return Err(RpcError { code, message: message.into(), data: None });
                }
            }
            if found.len() >= LIMIT {
                found.truncate(LIMIT);
                break;
            }
        }
        Ok(Some(WorkspaceSymbolResponse::Nested(found)))
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> RpcResult<Option<Vec<FoldingRange>>> {
        self.with_snapshot(&params.text_document.uri, "foldingRange", move |s| {
            Some(features::symbols::folding_ranges(s))
        })
        .await
    }

    async fn semantic_tokens_full(&self, params: SemanticTokensParams) -> RpcResult<Option<SemanticTokensResult>> {
        let uri = params.text_document.uri;
        let tokens =
            self.with_snapshot(&uri, "semanticTokens", move |s| Some(features::semantic_tokens::full(s))).await?;
        Ok(tokens.map(|t| self.remember_tokens(&uri, t).into()))
    }

    async fn semantic_tokens_full_delta(
        &self,
        params: SemanticTokensDeltaParams,
    ) -> RpcResult<Option<SemanticTokensFullDeltaResult>> {
        let uri = params.text_document.uri;
        let Some(tokens) =
            self.with_snapshot(&uri, "semanticTokens", move |s| Some(features::semantic_tokens::full(s))).await?
        else {
            return Ok(None);
        };
        // Taken out, not copied: `remember_tokens` puts the new ones in its place.
        let previous = {
            let mut sent = self.tokens_sent.lock().unwrap_or_else(|p| p.into_inner());
            sent.remove(&uri).filter(|(id, _)| *id == params.previous_result_id).map(|(_, data)| data)
        };
        let tokens = self.remember_tokens(&uri, tokens);
        Ok(Some(match previous {
            Some(old) => SemanticTokensFullDeltaResult::TokensDelta(SemanticTokensDelta {
                result_id: tokens.result_id.clone(),
                edits: vec![features::semantic_tokens::delta(&old, &tokens.data)],
            }),
            None => SemanticTokensFullDeltaResult::Tokens(tokens),
        }))
    }

    async fn semantic_tokens_range(
        &self,
        params: SemanticTokensRangeParams,
    ) -> RpcResult<Option<SemanticTokensRangeResult>> {
        self.with_snapshot(&params.text_document.uri, "semanticTokens", move |s| {
            Some(features::semantic_tokens::range(s, params.range).into())
        })
        .await
    }

    async fn completion(&self, params: CompletionParams) -> RpcResult<Option<CompletionResponse>> {
        let at = params.text_document_position;
        self.with_snapshot(&at.text_document.uri, "completion", move |s| features::completion::complete(s, at.position))
            .await
    }

    async fn signature_help(&self, params: SignatureHelpParams) -> RpcResult<Option<SignatureHelp>> {
        let at = params.text_document_position_params;
        self.with_snapshot(&at.text_document.uri, "signatureHelp", move |s| {
            features::signature::signature_help(s, at.position)
        })
        .await
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> RpcResult<Option<Vec<InlayHint>>> {
        self.with_snapshot(&params.text_document.uri, "inlayHint", move |s| {
            Some(features::inlay::inlay_hints(s, params.range))
        })
        .await
    }

    async fn formatting(&self, params: DocumentFormattingParams) -> RpcResult<Option<Vec<TextEdit>>> {
        self.with_snapshot(&params.text_document.uri, "formatting", features::formatting::format).await
    }

    async fn range_formatting(&self, params: DocumentRangeFormattingParams) -> RpcResult<Option<Vec<TextEdit>>> {
        let range = params.range;
        self.with_snapshot(&params.text_document.uri, "rangeFormatting", move |s| {
            features::formatting::format_range(s, range)
        })
        .await
    }

    async fn code_action(&self, params: CodeActionParams) -> RpcResult<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        let range = params.range;
        self.with_snapshot(&uri.clone(), "codeAction", move |s| Some(features::actions::code_actions(s, &uri, range)))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::guarded;

    #[test]
    fn a_panicking_feature_becomes_an_error_message() {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let outcome: Result<(), String> = guarded("hover", || panic!("index out of bounds"));
        std::panic::set_hook(previous);
        assert_eq!(outcome, Err("onnx-lsp: internal error in hover: index out of bounds".to_owned()));
        assert_eq!(guarded("hover", || 7), Ok(7));
    }
}
