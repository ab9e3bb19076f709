//! One analysed version of a document: everything the features read, computed once per
//! version and shared (behind an `Arc`) by the requests that arrive for it.

use onnx_core::analysis::{Stages, Stopped, TextAnalysis};
use onnx_core::check::CheckOptions;
use onnx_core::diagnostic::Diagnostic;
use onnx_core::facts::Scopes;
use onnx_core::infer::ModelTypes;
use onnx_core::pipeline::{CheckedText, EarlierCheck, Verdict, check_text_staged};
use std::sync::Arc;

use crate::index::Index;
use crate::line_index::{Encoding, LineIndex};
use crate::lsp::{Position, Range};
use onnx_core::diagnostic::Span;

/// How many analyses this process has made (each document version should cost one, however
/// many requests ask for it: the tests count them).
pub static ANALYSES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// What an analysis may start from: an earlier version's clean tree and its text, where the
/// parse starts; an earlier version's analysis, whose number lists lowering takes where the
/// edits left them alone, and whose resolution, verdict and types are taken whole when the
/// model is the same (an edit of layout or comments).
#[derive(Clone, Copy, Debug, Default)]
pub struct StartFrom<'a> {
    pub parse: Option<(&'a onnx_syntax::ast::Model, &'a str)>,
    pub earlier: Option<&'a Snapshot>,
}

/// A text and the tree it parsed to without errors: what an analysis stopped after parsing
/// gives back, and where a later version's parse starts.
#[derive(Debug)]
pub struct ParseBase {
    pub text: String,
    pub tree: Box<onnx_syntax::ast::Model>,
}

#[derive(Debug)]
pub struct Snapshot {
    pub text: String,
    pub version: i32,
    pub lines: LineIndex,
    pub encoding: Encoding,
    pub analysis: TextAnalysis,
    /// Syntax, lowering, name resolution, checker and inference (declared types that
    /// contradict inferred ones) diagnostics, placed.
    pub diagnostics: Vec<Diagnostic>,
    /// Those of `diagnostics` that the parse found (the rest are semantic), for the next
    /// version's syntax-first publication to tell apart.
    pub syntax_diagnostics: Vec<Diagnostic>,
    pub types: Arc<ModelTypes>,
    /// What the checker and inference found about the model before it was placed in the
    /// text, for the next version to take when its model is the same.
    pub verdict: Arc<Verdict>,
    /// Every name occurrence, for hover, definition, references, rename and tokens: built
    /// on the first request that needs it, not before diagnostics are published (it costs
    /// more than inference on big documents, and diagnostics do not need it).
    index: std::sync::OnceLock<Index>,
    scopes: std::sync::OnceLock<Scopes>,
}

impl Snapshot {
    /// Analyses one version of a text. `from.parse`, an earlier version's clean tree and
    /// text, lets the parse redo only the node the edits fall inside; `from.earlier` lets
    /// lowering take the number lists the edits left alone; `stale` is asked
    /// between stages, and the analysis stops once it says yes, giving back its text and
    /// clean tree if it got that far (the next version's parse starts from them);
    /// `on_parsed` is told the syntax diagnostics as soon as parsing ends.
    pub fn analyse(
        text: String,
        version: i32,
        encoding: Encoding,
        options: &CheckOptions,
        from: StartFrom<'_>,
        stale: &(dyn Fn() -> bool + Sync),
        on_parsed: &dyn Fn(&str, &LineIndex, &[Diagnostic]),
    ) -> Result<Snapshot, Option<ParseBase>> {
        ANALYSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let lines = LineIndex::new(&text);
        // The server's checker always infers: hover shows the types, and declared types
        // that inference contradicts are diagnostics.
        let options = CheckOptions { full_check: true, ..options.clone() };
        let syntax = std::sync::OnceLock::new();
        let parsed = |found: &[Diagnostic]| {
            crate::trace::event("parsed", version);
            let _ = syntax.set(found.to_vec());
            on_parsed(&text, &lines, found);
        };
        let stages = Stages {
            previous: from.parse,
            earlier: from.earlier.map(|e| &e.analysis),
            earlier_text: from.earlier.map_or("", |e| e.text.as_str()),
            stale: Some(stale),
            on_parsed: Some(&parsed),
            ..Stages::default()
        };
        let earlier = from.earlier.map(|e| EarlierCheck { types: &e.types, verdict: &e.verdict });
        let checked = check_text_staged(&text, &options, &stages, earlier);
        let CheckedText { analysis, diagnostics, types, verdict } = match checked {
            Ok(checked) => checked,
            Err(Stopped { clean_tree }) => return Err(clean_tree.map(|tree| ParseBase { text, tree })),
        };
        Ok(Snapshot {
            text,
            version,
            lines,
            encoding,
            analysis,
            diagnostics,
            syntax_diagnostics: syntax.into_inner().unwrap_or_default(),
            types,
            verdict,
            scopes: std::sync::OnceLock::new(),
            index: std::sync::OnceLock::new(),
        })
    }

    /// The tree, when the text parsed without errors (a start for the next version's parse).
    pub fn clean_tree(&self) -> Option<&onnx_syntax::ast::Model> {
        self.analysis.tree.as_ref().filter(|_| self.analysis.syntax_clean)
    }

    /// Which graph or function each node and subgraph belongs to, built on first use.
    pub fn scopes(&self) -> &Scopes {
        self.scopes.get_or_init(|| Scopes::of_model(&self.analysis.model))
    }

    /// The name index, built on first use.
    pub fn index(&self) -> &Index {
        self.index.get_or_init(|| Index::build(&self.analysis, self.scopes()))
    }

    pub fn range(&self, span: Span) -> Range {
        self.lines.range(&self.text, span, self.encoding)
    }

    pub fn offset(&self, position: Position) -> u32 {
        self.lines.offset(&self.text, position, self.encoding)
    }

    pub fn span(&self, range: Range) -> Span {
        self.lines.span(&self.text, range, self.encoding)
    }

    pub fn slice(&self, span: Span) -> &str {
        self.text.get(span.start as usize..span.end as usize).unwrap_or("")
    }

    /// 1-based line of an offset, for messages.
    pub fn line_number(&self, offset: u32) -> u32 {
        self.lines.line_of(offset) + 1
    }
}
