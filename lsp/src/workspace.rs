//! The open documents: their text as the client sees it, and the snapshot of the last
//! analysed version. Edits are applied in arrival order, in byte offsets converted with the
//! negotiated position encoding.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use onnx_core::check::CheckOptions;

use crate::line_index::{Encoding, LineIndex};
use crate::lsp::{TextDocumentContentChangeEvent, Uri};
use crate::snapshot::{ParseBase, Snapshot};

#[derive(Debug)]
struct Document {
    text: String,
    version: i32,
    /// The analysis of `version`, made once by the diagnostics task and shared with every
    /// request, which waits for it. A change starts a new one.
    analysis: Arc<VersionAnalysis>,
    /// The newest finished analysis of an earlier version: a big document shows its
    /// semantic diagnostics, moved through the edits, until the current version's are
    /// ready, and the next parse starts from its tree unless `parsed` is newer.
    base: Option<Arc<Snapshot>>,
    /// The clean parse of a version newer than `base` whose analysis was given up after
    /// parsing (typing started while a big document was being analysed).
    parsed: Option<Arc<ParseBase>>,
    /// Superseded versions whose analysis had started: the next start looks at what they
    /// left (a snapshot, a parse) to update `base` and `parsed`. Oldest first.
    earlier: Vec<Arc<VersionAnalysis>>,
}

impl Document {
    fn new(text: String, version: i32) -> Document {
        Document { text, version, analysis: Arc::default(), base: None, parsed: None, earlier: Vec::new() }
    }
}

/// One version's analysis: made, being made, or given up.
#[derive(Debug, Default)]
pub struct VersionAnalysis {
    result: OnceLock<Result<Arc<Snapshot>, Missing>>,
    /// The diagnostics task has taken it (only that task analyses).
    started: AtomicBool,
    /// A newer version exists: an analysis under way stops at its next stage.
    stale: AtomicBool,
    /// The clean parse of an analysis given up after parsing.
    parsed: OnceLock<Arc<ParseBase>>,
    /// Told when the version is superseded, for the diagnostics task to go on with the new
    /// one while this analysis runs to its next stage and stops.
    superseded: tokio::sync::Notify,
    /// The diagnostics task is done with this version (published its diagnostics, or
    /// found it superseded): requests start their own work only then, so that on two
    /// cores the diagnostics a person waits for are not slowed by the tokens, symbols and
    /// hints an editor asks for in the same breath.
    published: OnceLock<()>,
}

/// Why a version has no analysis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Missing {
    /// The text changed (or the document closed) before it was done.
    Stale,
    /// The analysis failed (a bug: the message says where).
    Failed(String),
}

impl VersionAnalysis {
    /// Waits until the analysis is made or given up and, when it is made, its diagnostics
    /// are published.
    pub fn wait(&self) -> Result<Arc<Snapshot>, Missing> {
        let result = self.result.wait().clone();
        if result.is_ok() {
            self.published.wait();
        }
        result
    }

    /// Says the diagnostics task is done with this version, whatever became of it.
    pub fn done(&self) {
        let _ = self.published.set(());
    }

    pub fn is_stale(&self) -> bool {
        self.stale.load(Ordering::Relaxed)
    }

    /// Returns once the version is superseded.
    pub async fn superseded(&self) {
        self.superseded.notified().await;
    }

    /// Ends the analysis without a snapshot (it failed), waking whoever waits.
    pub fn fail(&self, message: String) {
        let _ = self.result.set(Err(Missing::Failed(message)));
    }

    /// Makes the analysis (on the caller's thread) unless it is made already.
    pub fn make(&self, make: impl FnOnce() -> Result<Snapshot, Option<ParseBase>>) -> Result<Arc<Snapshot>, Missing> {
        self.result
            .get_or_init(|| {
                make().map(Arc::new).map_err(|parsed| {
                    if let Some(parsed) = parsed {
                        let _ = self.parsed.set(Arc::new(parsed));
                    }
                    Missing::Stale
                })
            })
            .clone()
    }

    /// Marks it superseded. One that nobody has started is ended now (its waiters get
    /// `Stale`); one under way stops at its next stage. Called under the workspace lock,
    /// which the diagnostics task holds when it starts one, so the two cannot cross.
    fn supersede(&self) {
        self.stale.store(true, Ordering::Relaxed);
        // A permit is kept if nobody waits yet.
        self.superseded.notify_one();
        if !self.started.load(Ordering::Relaxed) {
            let _ = self.result.set(Err(Missing::Stale));
        }
    }

    fn snapshot(&self) -> Option<Arc<Snapshot>> {
        self.result.get().and_then(|r| r.as_ref().ok()).cloned()
    }
}

/// What the diagnostics task needs to analyse a document's current version.
#[derive(Debug)]
pub struct Job {
    pub analysis: Arc<VersionAnalysis>,
    pub text: String,
    pub version: i32,
    pub encoding: Encoding,
    pub base: Option<Arc<Snapshot>>,
    pub parsed: Option<Arc<ParseBase>>,
}

impl Job {
    /// Makes the analysis on the caller's thread, telling `on_parsed` the syntax
    /// diagnostics as soon as the text is parsed.
    pub fn run(self, uri: &Uri, on_parsed: &OnParsed) -> Result<Arc<Snapshot>, Missing> {
        let Job { analysis, text, version, encoding, base, parsed } = self;
        let options = CheckOptions { model_dir: model_dir(uri), ..CheckOptions::default() };
        let stale = || {
            crate::trace::event("stage", version);
            analysis.is_stale()
        };
        // The newest clean parse: a given-up version's, else the base's.
        let parse_from = match (&parsed, &base) {
            (Some(p), _) => Some((&*p.tree, p.text.as_str())),
            (None, Some(b)) => b.clean_tree().map(|tree| (tree, b.text.as_str())),
            (None, None) => None,
        };
        // The base's lowering gives the values of the number lists the edits left alone, and
        // its check the verdict on a model the edits left as it was.
        let earlier = base.as_deref();
        let from = crate::snapshot::StartFrom { parse: parse_from, earlier };
        analysis.make(|| Snapshot::analyse(text, version, encoding, &options, from, &stale, on_parsed))
    }
}

/// What [`Job::run`] tells the syntax diagnostics: with the new text and its lines.
pub type OnParsed<'a> = dyn Fn(&str, &LineIndex, &[onnx_core::diagnostic::Diagnostic]) + 'a;

/// Something the workspace no longer needs, to be freed later (see [`crate::reaper`]).
type Retired = crate::reaper::Garbage;

#[derive(Debug, Default)]
pub struct Workspace {
    documents: HashMap<Uri, Document>,
    pub encoding: Encoding,
    /// Replaced analyses, freed by the diagnostics task once it has published (see
    /// [`Workspace::take_retired`]): freeing a big document's analysis takes tens of
    /// milliseconds, which neither an edit under the lock nor the next analysis should wait
    /// for or share the cores with.
    retired: Vec<Retired>,
}

impl Workspace {
    fn retire<T: Send + 'static>(&mut self, old: T) {
        self.retired.push(Box::new(old));
    }

    /// What was replaced since the last call, for the caller to free elsewhere.
    pub fn take_retired(workspace: &Mutex<Workspace>) -> Vec<Retired> {
        std::mem::take(&mut workspace.lock().unwrap_or_else(|p| p.into_inner()).retired)
    }

    pub fn open(&mut self, uri: Uri, text: String, version: i32) {
        if let Some(old) = self.documents.insert(uri, Document::new(text, version)) {
            old.analysis.supersede();
            self.retire(old);
        }
    }

    pub fn close(&mut self, uri: &Uri) {
        if let Some(old) = self.documents.remove(uri) {
            old.analysis.supersede();
            self.retire(old);
        }
    }

    pub fn version(&self, uri: &Uri) -> Option<i32> {
        self.documents.get(uri).map(|d| d.version)
    }

    pub fn text(&self, uri: &Uri) -> Option<&str> {
        self.documents.get(uri).map(|d| d.text.as_str())
    }

    /// Applies one `didChange`: full replacements and ranged edits, in order.
    pub fn change(
        &mut self,
        uri: &Uri,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) -> Result<(), String> {
        let encoding = self.encoding;
        let retired = &mut self.retired;
        let Some(doc) = self.documents.get_mut(uri) else {
            return Err(format!("onnx-lsp: change to a document that is not open: {}", uri.as_str()));
        };
        let mut text = std::mem::take(&mut doc.text);
        for change in changes {
            match change.range {
                None => text = change.text,
                Some(range) => {
                    let lines = LineIndex::new(&text);
                    let span = lines.span(&text, range, encoding);
                    text.replace_range(span.start as usize..span.end as usize, &change.text);
                }
            }
        }
        doc.text = text;
        doc.version = version;
        let old = std::mem::take(&mut doc.analysis);
        old.supersede();
        // What a started analysis leaves (a snapshot, a parse) is looked at when the next
        // one starts; it may still be running now.
        if old.started.load(Ordering::Relaxed) {
            doc.earlier.push(old);
        } else {
            retired.push(Box::new(old));
        }
        Ok(())
    }

    /// The current version's analysis, for a request to wait for.
    pub fn analysis(workspace: &Mutex<Workspace>, uri: &Uri) -> Option<Arc<VersionAnalysis>> {
        let ws = workspace.lock().unwrap_or_else(|p| p.into_inner());
        ws.documents.get(uri).map(|d| d.analysis.clone())
    }

    /// Every open document's current analysis, in no order.
    pub fn analyses(workspace: &Mutex<Workspace>) -> Vec<(Uri, Arc<VersionAnalysis>)> {
        let ws = workspace.lock().unwrap_or_else(|p| p.into_inner());
        ws.documents.iter().map(|(uri, d)| (uri.clone(), d.analysis.clone())).collect()
    }

    /// Analyses the current version on the caller's thread unless that is done or under way,
    /// and returns it (for tests and fuzzing; the server's diagnostics task does the same on
    /// a blocking thread, publishing in between).
    pub fn analyse_now(workspace: &Mutex<Workspace>, uri: &Uri) -> Option<Result<Arc<Snapshot>, Missing>> {
        if let Some(job) = Workspace::start(workspace, uri) {
            let analysis = job.analysis.clone();
            let made = job.run(uri, &|_, _, _| {});
            analysis.done();
            return Some(made);
        }
        Workspace::analysis(workspace, uri).map(|a| a.wait())
    }

    /// Takes the current version's analysis for the diagnostics task to make: `None` when
    /// the document is closed or its analysis was taken already.
    pub fn start(workspace: &Mutex<Workspace>, uri: &Uri) -> Option<Job> {
        let mut guard = workspace.lock().unwrap_or_else(|p| p.into_inner());
        let ws = &mut *guard;
        let doc = ws.documents.get_mut(uri)?;
        if doc.analysis.started.swap(true, Ordering::Relaxed) {
            return None;
        }
        // Oldest first, so that what is left is the newest of each.
        for earlier in std::mem::take(&mut doc.earlier) {
            if earlier.result.get().is_none() {
                // Still stopping (only when analyses are run from more than one place).
                doc.earlier.push(earlier);
                continue;
            }
            if let Some(done) = earlier.snapshot() {
                if let Some(old) = doc.base.replace(done) {
                    ws.retired.push(Box::new(old));
                }
                if let Some(old) = doc.parsed.take() {
                    ws.retired.push(Box::new(old));
                }
            } else if let Some(parsed) = earlier.parsed.get()
                && let Some(old) = doc.parsed.replace(parsed.clone())
            {
                ws.retired.push(Box::new(old));
            }
            ws.retired.push(Box::new(earlier));
        }
        Some(Job {
            analysis: doc.analysis.clone(),
            text: doc.text.clone(),
            version: doc.version,
            encoding: ws.encoding,
            base: doc.base.clone(),
            parsed: doc.parsed.clone(),
        })
    }
}

/// The folder of a `file:` document, where its external data would be.
pub fn model_dir(uri: &Uri) -> Option<PathBuf> {
    let path = file_path(uri)?;
    path.parent().map(PathBuf::from)
}

/// The scheme of a binary model opened as text in VS Code (`onnx-text:/dir/model.onnx.onnxtxt`
/// is the text of `/dir/model.onnx`, served by the extension's file system): its path is a
/// file's path, beside the model, where the outline's references lead.
pub const TEXT_OF_BINARY_SCHEME: &str = "onnx-text";

/// The path of a `file:` URI (or of an `onnx-text:` one, the same path).
pub fn file_path(uri: &Uri) -> Option<PathBuf> {
    let scheme = uri.scheme().as_str();
    if scheme.eq_ignore_ascii_case(TEXT_OF_BINARY_SCHEME) {
        let as_file: Uri = format!("file:{}", &uri.as_str()[scheme.len() + 1..]).parse().ok()?;
        return as_file.to_file_path().map(|p| p.into_owned());
    }
    if !scheme.eq_ignore_ascii_case("file") {
        return None;
    }
    uri.to_file_path().map(|p| p.into_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::lsp::{Position, Range};

    fn change(range: Option<((u32, u32), (u32, u32))>, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: range.map(|((l1, c1), (l2, c2))| Range {
                start: Position { line: l1, character: c1 },
                end: Position { line: l2, character: c2 },
            }),
            range_length: None,
            text: text.to_owned(),
        }
    }

    #[test]
    fn a_version_superseded_before_its_analysis_started_answers_stale_at_once() {
        let uri: Uri = "file:///m.onnxtxt".parse().unwrap();
        let ws = Mutex::new(Workspace::default());
        ws.lock().unwrap().open(uri.clone(), "g () => () {}\n".into(), 1);
        let first = Workspace::analysis(&ws, &uri).unwrap();
        ws.lock().unwrap().change(&uri, 2, vec![change(None, "h () => () {}\n")]).unwrap();
        // Nobody started it: a request waiting for it is answered now, not left waiting.
        assert_eq!(first.wait().unwrap_err(), Missing::Stale);
        // The current version is taken once, by the diagnostics task.
        let job = Workspace::start(&ws, &uri).unwrap();
        assert_eq!(job.version, 2);
        assert!(Workspace::start(&ws, &uri).is_none());
        // Superseded while under way: the analysis stops and says so.
        ws.lock().unwrap().change(&uri, 3, vec![change(None, "i () => () {}\n")]).unwrap();
        assert!(job.analysis.is_stale());
        let (text, tree) = ("h () => () {}\n".to_owned(), onnx_syntax::parse_model("h () => () {}\n").tree.unwrap());
        let made = job.analysis.make(|| Err(Some(ParseBase { text, tree: Box::new(tree) })));
        assert_eq!(made.unwrap_err(), Missing::Stale);
        assert_eq!(job.analysis.wait().unwrap_err(), Missing::Stale);
        // Given up after its parse: the next version's parse starts from that one.
        let current = Workspace::start(&ws, &uri).unwrap();
        assert_eq!(current.parsed.as_ref().map(|p| p.text.as_str()), Some("h () => () {}\n"));
        assert!(current.base.is_none());
        // A failure wakes whoever waits, with the message.
        current.analysis.fail("boom".into());
        assert_eq!(current.analysis.wait().unwrap_err(), Missing::Failed("boom".into()));
        assert!(!Workspace::take_retired(&ws).is_empty());
    }

    #[test]
    fn full_and_ranged_changes_apply_in_order() {
        let uri: Uri = "file:///m.onnxtxt".parse().unwrap();
        let mut ws = Workspace::default();
        ws.open(uri.clone(), "a\nb\n".into(), 1);
        // One notification may hold several changes, each against the text the previous left.
        ws.change(&uri, 2, vec![change(Some(((1, 0), (1, 1))), "bee"), change(Some(((0, 1), (1, 0))), " ")]).unwrap();
        assert_eq!(ws.text(&uri), Some("a bee\n"));
        ws.change(&uri, 3, vec![change(None, "whole\n"), change(Some(((0, 5), (0, 5))), "!")]).unwrap();
        assert_eq!(ws.text(&uri), Some("whole!\n"));
        assert_eq!(ws.version(&uri), Some(3));
        // UTF-16 columns by default: '😀' is two units wide.
        ws.change(&uri, 4, vec![change(None, "😀x\n"), change(Some(((0, 2), (0, 3))), "y")]).unwrap();
        assert_eq!(ws.text(&uri), Some("😀y\n"));
        let other: Uri = "file:///other.onnxtxt".parse().unwrap();
        assert!(ws.change(&other, 1, vec![]).is_err());
    }
}
