//! One analysed version of a document: everything the features read, computed once per
//! version and shared (behind an `Arc`) by the requests that arrive for it.

use onnx_core::analysis::{TextAnalysis, analyze_text, place};
use onnx_core::check::{CheckOptions, check_resolved_model};
use onnx_core::diagnostic::Diagnostic;
use onnx_core::infer::{ModelTypes, conflicts, infer_model_numbered};

use crate::index::Index;
use crate::line_index::{Encoding, LineIndex};
use crate::lsp::{Position, Range};
use onnx_core::diagnostic::Span;

/// How many analyses this process has made (each document version should cost one, however
/// many requests ask for it: the tests count them).
pub static ANALYSES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

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
    pub types: ModelTypes,
    /// Every name occurrence, for hover, definition, references, rename and tokens: built
    /// on the first request that needs it, not before diagnostics are published (it costs
    /// more than inference on big documents, and diagnostics do not need it).
    index: std::sync::OnceLock<Index>,
}

impl Snapshot {
    pub fn analyse(text: String, version: i32, encoding: Encoding, options: &CheckOptions) -> Snapshot {
        ANALYSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let lines = LineIndex::new(&text);
        let mut analysis = analyze_text(&text);
        let mut diagnostics = analysis.diagnostics.clone();
        // The checker and inference read the model as the text says it; while the text has
        // syntax errors, their findings would be about holes the parser left.
        let types = if analysis.readable {
            // Both reuse the value numbers of the analysis's name resolution: no second pass.
            let numbers = analysis.resolution.numbers.clone();
            for mut d in check_resolved_model(&analysis.model, options, numbers) {
                place(&mut d, &analysis.source_map);
                diagnostics.push(d);
            }
            // The numbers move into `types`, which keeps them for lookups by definition site.
            let types = infer_model_numbered(&analysis.model, std::mem::take(&mut analysis.resolution.numbers));
            for mut d in types.violations.iter().cloned().chain(conflicts(&analysis.model, &types)) {
                place(&mut d, &analysis.source_map);
                diagnostics.push(d);
            }
            types
        } else {
            ModelTypes::default()
        };
        Snapshot { text, version, lines, encoding, analysis, diagnostics, types, index: std::sync::OnceLock::new() }
    }

    /// The name index, built on first use.
    pub fn index(&self) -> &Index {
        self.index.get_or_init(|| Index::build(&self.analysis))
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
