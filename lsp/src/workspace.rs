//! The open documents: their text as the client sees it, and the snapshot of the last
//! analysed version. Edits are applied in arrival order, in byte offsets converted with the
//! negotiated position encoding.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use onnx_core::check::CheckOptions;

use crate::line_index::{Encoding, LineIndex};
use crate::lsp::{TextDocumentContentChangeEvent, Uri};
use crate::snapshot::Snapshot;

#[derive(Debug)]
struct Document {
    text: String,
    version: i32,
    /// The analysis of `version`: made once, by whoever asks first (the diagnostics task or
    /// a request), and shared; a caller that asks while it is being made waits for it
    /// instead of analysing the same text again. A change starts a new cell.
    snapshot: Arc<OnceLock<Arc<Snapshot>>>,
}

/// Drops a replaced analysis on another thread: freeing a big document's analysis took
/// tens of milliseconds, which an edit under the workspace lock must not wait for.
fn drop_elsewhere(cell: Arc<OnceLock<Arc<Snapshot>>>) {
    if cell.get().is_some() {
        std::thread::spawn(move || drop(cell));
    }
}

#[derive(Debug, Default)]
pub struct Workspace {
    documents: HashMap<Uri, Document>,
    pub encoding: Encoding,
}

impl Workspace {
    pub fn open(&mut self, uri: Uri, text: String, version: i32) {
        if let Some(old) = self.documents.insert(uri, Document { text, version, snapshot: Arc::default() }) {
            drop_elsewhere(old.snapshot);
        }
    }

    pub fn close(&mut self, uri: &Uri) {
        if let Some(old) = self.documents.remove(uri) {
            drop_elsewhere(old.snapshot);
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
        drop_elsewhere(std::mem::take(&mut doc.snapshot));
        Ok(())
    }

    /// The analysis of the current version of a document, made now if needed, once per
    /// version whoever asks. The lock is not held while analysing, so edits keep arriving;
    /// an analysis of a version that is no longer current is returned to those who asked
    /// for it and then dropped with its cell.
    pub fn snapshot(workspace: &Mutex<Workspace>, uri: &Uri) -> Option<Arc<Snapshot>> {
        let (cell, text, version, encoding) = {
            let ws = workspace.lock().unwrap_or_else(|p| p.into_inner());
            let doc = ws.documents.get(uri)?;
            if let Some(s) = doc.snapshot.get() {
                return Some(s.clone());
            }
            (doc.snapshot.clone(), doc.text.clone(), doc.version, ws.encoding)
        };
        let options = CheckOptions { model_dir: model_dir(uri), ..CheckOptions::default() };
        Some(cell.get_or_init(|| Arc::new(Snapshot::analyse(text, version, encoding, &options))).clone())
    }
}

/// The folder of a `file:` document, where its external data would be.
pub fn model_dir(uri: &Uri) -> Option<PathBuf> {
    let path = file_path(uri)?;
    path.parent().map(PathBuf::from)
}

/// The path of a `file:` URI.
pub fn file_path(uri: &Uri) -> Option<PathBuf> {
    if !uri.scheme().as_str().eq_ignore_ascii_case("file") {
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
