//! The text front end in one call: syntax errors, the lowered model, the source map, name
//! resolution, and every diagnostic placed in the text. The checker and inference follow in
//! [`crate::pipeline::check_text`], which the front ends call.

use std::sync::Arc;

use onnx_syntax::ast;
use onnx_syntax::incremental::Edit;
/// How far reading a text has come, for front ends that draw progress without depending on
/// the syntax crate themselves.
pub use onnx_syntax::progress::{Progress, Stage};

use crate::diagnostic::{Anchor, Diagnostic, Severity, Span};
use crate::ir::Model;
use crate::lower::from_ast;
use crate::resolve::{self, Resolution};
use crate::source_map::SourceMap;

#[derive(Debug, Default)]
pub struct TextAnalysis {
    pub tree: Option<ast::Model>,
    pub model: Model,
    pub source_map: SourceMap,
    /// Shared with the earlier version's analysis when the model is the same (see
    /// [`TextAnalysis::same_model`]). Its diagnostics stay in it, on IR anchors; placed
    /// copies are in `diagnostics`.
    pub resolution: Arc<Resolution>,
    /// Every diagnostic, anchored to text (`Anchor::Text`), sorted and de-duplicated.
    pub diagnostics: Vec<Diagnostic>,
    /// No syntax or lowering error: the model is exactly what the text says. Name-resolution
    /// errors (undefined values, …) leave it readable: they are about the model, not the text.
    pub readable: bool,
    /// The parse found no error: the tree can be the start of an incremental reparse.
    pub syntax_clean: bool,
    /// The text lowers to the very model the earlier version's did ([`Stages::earlier`]),
    /// an edit of layout or comments: what was found about that model (name resolution,
    /// the checker's verdict, inference) holds as it is, and is taken instead of found
    /// again.
    pub same_model: bool,
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
    // Without a `stale` question the analysis never stops, so the default is never used.
    analyze_text_staged(source, &Stages { progress, ..Stages::default() }).unwrap_or_default()
}

/// How an analysis runs, for the language server: what it may start from, when to give up,
/// and whom to tell the syntax errors before the rest is done.
#[derive(Default)]
pub struct Stages<'a> {
    pub progress: Option<&'a Progress>,
    /// A tree that an earlier text parsed to without errors, and that text: only the node
    /// the edits since fall inside is parsed again ([`onnx_syntax::incremental`]).
    pub previous: Option<(&'a ast::Model, &'a str)>,
    /// Asked between stages (parse, lowering, name resolution, checking): `true` when the
    /// result is no longer wanted (the text changed again), and the work stops there.
    pub stale: Option<&'a (dyn Fn() -> bool + Sync)>,
    /// Told the syntax diagnostics (placed, sorted) as soon as parsing ends.
    pub on_parsed: Option<&'a OnParsed<'a>>,
    /// An earlier version's analysis: lowering takes the values of number lists the edits
    /// since left alone from its model instead of reading them again.
    pub earlier: Option<&'a TextAnalysis>,
    /// The text `earlier` was made from.
    pub earlier_text: &'a str,
}

/// What [`Stages::on_parsed`] calls.
pub type OnParsed<'a> = dyn Fn(&[Diagnostic]) + 'a;

impl std::fmt::Debug for Stages<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stages")
            .field("progress", &self.progress.is_some())
            .field("previous", &self.previous.is_some())
            .field("stale", &self.stale.is_some())
            .field("on_parsed", &self.on_parsed.is_some())
            .field("earlier", &self.earlier.is_some())
            .finish()
    }
}

impl Stages<'_> {
    /// Whether the result is no longer wanted.
    pub fn is_stale(&self) -> bool {
        self.stale.is_some_and(|stale| stale())
    }
}

/// An analysis given up because its result was no longer wanted. It still gives its tree
/// when the text parsed without errors: the next version's parse can start from it.
#[derive(Debug, Default)]
pub struct Stopped {
    pub clean_tree: Option<Box<ast::Model>>,
}

impl Stopped {
    /// Stopped after parsing: the tree goes with it if it is clean.
    pub fn with_tree(tree: Option<ast::Model>, syntax_clean: bool) -> Stopped {
        Stopped { clean_tree: tree.filter(|_| syntax_clean).map(Box::new) }
    }
}

/// The edit from `old` to `new`, found once for the parse and the lowering when both start
/// from the same earlier text.
fn edit_from(old: &str, new: &str, known: Option<(&str, Edit)>) -> Edit {
    match known {
        Some((text, edit)) if std::ptr::eq(text, old) => edit,
        _ => Edit::between(old, new),
    }
}

/// The text's parse: incremental from `previous` when that can be done, whole otherwise.
/// Returns the edit it found, with the text it is from.
fn parse<'a>(source: &str, stages: &Stages<'a>) -> (onnx_syntax::Parse<ast::Model>, Option<(&'a str, Edit)>) {
    if let Some((tree, old_source)) = stages.previous {
        let edit = Edit::between(old_source, source);
        if let Some(parse) = onnx_syntax::incremental::reparse_model(tree, source, edit) {
            return (parse, Some((old_source, edit)));
        }
    }
    let parse = match stages.progress {
        Some(p) => onnx_syntax::parse_model_with_progress(source, p),
        None => onnx_syntax::parse_model(source),
    };
    (parse, None)
}

/// [`analyze_text`] in stages (see [`Stages`]).
pub fn analyze_text_staged(source: &str, stages: &Stages) -> Result<TextAnalysis, Stopped> {
    let progress = stages.progress;
    let (mut parse, parse_edit) = parse(source, stages);
    let syntax_clean = parse.tree.is_some() && parse.errors.is_empty();
    let mut diagnostics: Vec<Diagnostic> = parse
        .errors
        .iter()
        .map(|e| {
            let mut d = Diagnostic::error(e.code, e.span, e.message.clone());
            d.related.extend(e.related.iter().map(|(span, what)| (Anchor::Text(*span), what.clone())));
            d
        })
        .collect();
    if let Some(tell) = stages.on_parsed {
        tell(&diagnostics);
    }
    if stages.is_stale() {
        return Err(Stopped::with_tree(parse.tree, syntax_clean));
    }
    if let Some(p) = progress {
        p.enter(Stage::Lowering);
    }
    let earlier = stages.earlier.map(|e| from_ast::Earlier {
        model: &e.model,
        source_map: &e.source_map,
        edit: edit_from(stages.earlier_text, source, parse_edit),
    });
    let lowered = match &parse.tree {
        Some(tree) => from_ast::model_after(tree, source, std::mem::take(&mut parse.floats), progress, earlier),
        None => from_ast::Lowered::default(),
    };
    diagnostics.extend(lowered.diagnostics);
    let readable = parse.tree.is_some() && !diagnostics.iter().any(|d| d.severity == Severity::Error);
    if stages.is_stale() {
        return Err(Stopped::with_tree(parse.tree, syntax_clean));
    }
    if let Some(p) = progress {
        p.enter(Stage::Checking);
    }
    let same_model = syntax_clean && readable && stages.earlier.is_some_and(|e| same_model(e, &lowered.model));
    let resolution = match stages.earlier {
        Some(earlier) if same_model => Arc::clone(&earlier.resolution),
        _ => Arc::new(resolve::resolve(&lowered.model)),
    };
    // Names the parser could not read leave holes that resolution would report again;
    // those follow-on errors only add noise while the text has syntax errors.
    if parse.errors.is_empty() {
        diagnostics.extend(resolution.diagnostics.iter().cloned());
    }
    let source_map = lowered.source_map;
    for d in &mut diagnostics {
        place(d, &source_map);
    }
    sort_placed(&mut diagnostics);
    Ok(TextAnalysis {
        tree: parse.tree,
        model: lowered.model,
        source_map,
        resolution,
        diagnostics,
        readable,
        syntax_clean,
        same_model,
    })
}

/// Whether `model`, just lowered without errors from a text that parsed cleanly, is the
/// model of `earlier`, which was too. A model with external data never is: the checker
/// reads the files it names, which may have changed since.
fn same_model(earlier: &TextAnalysis, model: &Model) -> bool {
    earlier.syntax_clean
        && earlier.readable
        && !model.tensors.iter().any(|(_, t)| t.is_external())
        && earlier.model == *model
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
