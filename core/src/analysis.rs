//! The text front end in one call: syntax errors, the lowered model, the source map, name
//! resolution, and every diagnostic placed in the text. The checker and inference follow in
//! [`crate::pipeline::check_text`], which the front ends call.

use onnx_syntax::ast;
use onnx_syntax::progress::{Progress, Stage};

use crate::diagnostic::{Anchor, Diagnostic, Severity, Span};
use crate::ir::Model;
use crate::lower::from_ast;
use crate::resolve::{self, Resolution};
use crate::source_map::SourceMap;

#[derive(Debug)]
pub struct TextAnalysis {
    pub tree: Option<ast::Model>,
    pub model: Model,
    pub source_map: SourceMap,
    pub resolution: Resolution,
    /// Every diagnostic, anchored to text (`Anchor::Text`), sorted and de-duplicated.
    pub diagnostics: Vec<Diagnostic>,
    /// No syntax or lowering error: the model is exactly what the text says. Name-resolution
    /// errors (undefined values, …) leave it readable: they are about the model, not the text.
    pub readable: bool,
}

impl TextAnalysis {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == Severity::Error)
    }
}

pub fn analyze_text(source: &str) -> TextAnalysis {
    analyze_text_with_progress(source, None)
}

/// [`analyze_text`], recording how far it has come in `progress`, for a progress bar.
pub fn analyze_text_with_progress(source: &str, progress: Option<&Progress>) -> TextAnalysis {
    let mut parse = match progress {
        Some(p) => onnx_syntax::parse_model_with_progress(source, p),
        None => onnx_syntax::parse_model(source),
    };
    if let Some(p) = progress {
        p.enter(Stage::Lowering);
    }
    let mut diagnostics: Vec<Diagnostic> = parse
        .errors
        .iter()
        .map(|e| {
            let mut d = Diagnostic::error(e.code, e.span, e.message.clone());
            d.related.extend(e.related.iter().map(|(span, what)| (Anchor::Text(*span), what.clone())));
            d
        })
        .collect();
    let lowered = match &parse.tree {
        Some(tree) => from_ast::model_with_progress(tree, source, std::mem::take(&mut parse.floats), progress),
        None => from_ast::Lowered::default(),
    };
    diagnostics.extend(lowered.diagnostics);
    let readable = parse.tree.is_some() && !diagnostics.iter().any(|d| d.severity == Severity::Error);
    if let Some(p) = progress {
        p.enter(Stage::Checking);
    }
    let mut resolution = resolve::resolve(&lowered.model);
    // Names the parser could not read leave holes that resolution would report again;
    // those follow-on errors only add noise while the text has syntax errors.
    if parse.errors.is_empty() {
        diagnostics.append(&mut resolution.diagnostics);
    }
    let source_map = lowered.source_map;
    for d in &mut diagnostics {
        place(d, &source_map);
    }
    sort_placed(&mut diagnostics);
    TextAnalysis { tree: parse.tree, model: lowered.model, source_map, resolution, diagnostics, readable }
}

/// Turns IR anchors into text ranges where the source map knows them.
pub fn place(d: &mut Diagnostic, map: &SourceMap) {
    let to_text = |a: Anchor| map.resolve(a).map_or(a, Anchor::Text);
    d.anchor = to_text(d.anchor);
    for (a, _) in &mut d.related {
        *a = to_text(*a);
    }
}

/// Sorts placed diagnostics by where they are (unplaced last), then code and message, and
/// removes repeats (a node reached twice reports once).
pub fn sort_placed(diagnostics: &mut Vec<Diagnostic>) {
    let place = |d: &Diagnostic| match d.anchor {
        Anchor::Text(s) => (s.start, s.end),
        _ => (u32::MAX, u32::MAX),
    };
    diagnostics.sort_by(|a, b| (place(a), a.code, &a.message).cmp(&(place(b), b.code, &b.message)));
    diagnostics.dedup();
}

/// The text range of a placed diagnostic (empty at 0 when it has none).
pub fn span_of(anchor: Anchor) -> Span {
    match anchor {
        Anchor::Text(s) => s,
        _ => Span::default(),
    }
}
