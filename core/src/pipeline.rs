//! The one place where the stages are composed: which run, in what order, on which threads,
//! and how their findings are merged, placed and sorted. The CLI, the language server, the
//! tests and the browser call these; `check/` holds only rules, `infer/` only types,
//! `analysis` only the text front end.
//!
//! * [`check_model`]: a decoded model (binary) → diagnostics on IR anchors, and the types
//!   inference found when `full_check` is on;
//! * [`check_text`]: a text → its analysis, every diagnostic placed in the text and sorted,
//!   and the types;
//! * [`facts`](crate::facts): what each value is, for hover and the browser's detail pane.
//!
//! Threads: on a big model, inference starts on the main graph's first nodes as soon as
//! they are numbered, while names are resolved on a second thread that then runs the
//! rules (the new thread takes what allocates least: inference on a fresh thread would
//! start from an empty allocator heap, and be slower). A text's names are resolved by its
//! analysis already; inference and the rules then run side by side.

use crate::analysis::{Stages, Stopped, TextAnalysis, analyze_text_staged, place, sort_placed};
use crate::check::{CheckOptions, Findings, profile_rules, rules};
use crate::diagnostic::Diagnostic;
use crate::infer::{ModelTypes, findings, infer_all, infer_model_numbered};
use crate::ir::Model;
use crate::resolve::{ValueNumbers, resolve_beside, resolve_without_tables, worth_a_second_thread};
use onnx_syntax::progress::Progress;
use std::sync::Arc;

/// What checking a model found.
#[derive(Debug, Default)]
pub struct Checked {
    /// In model order: header, scoping, main graph depth-first, functions, then what
    /// inference found, then the profile's rules.
    pub diagnostics: Vec<Diagnostic>,
    /// What inference found (`None` unless `full_check`).
    pub types: Option<ModelTypes>,
}

/// Checks a decoded model: every rule, name resolution and, with `full_check`, inference
/// (violations of operator constraints and declared types it contradicts).
pub fn check_model(model: &Model, options: &CheckOptions) -> Checked {
    if !options.full_check {
        let found = rules(model, options);
        return merge(model, options, found, resolve_without_tables(model).diagnostics, None);
    }
    let (resolution, inferred, found) =
        resolve_beside(model, |numbers| infer_all(model, numbers), &|_, _| rules(model, options));
    let types = inferred.with_numbers(resolution.numbers);
    merge(model, options, found, resolution.diagnostics, Some(types))
}

/// [`check_model`] of a model whose names were resolved already (a text model: its
/// analysis resolved them with the tables the language server needs), `numbers` being that
/// resolution's: name resolution's own diagnostics are the caller's, and inference reuses
/// the numbers instead of resolving again.
fn check_resolved(model: &Model, options: &CheckOptions, numbers: ValueNumbers) -> Checked {
    if !options.full_check {
        return merge(model, options, rules(model, options), Vec::new(), None);
    }
    let infer = || infer_model_numbered(model, numbers);
    let check = || rules(model, options);
    let (types, found) =
        if worth_a_second_thread(model) { onnx_threads::join(infer, check) } else { (infer(), check()) };
    merge(model, options, found, Vec::new(), Some(types))
}

fn merge(
    model: &Model,
    options: &CheckOptions,
    found: Findings,
    scoping: Vec<Diagnostic>,
    types: Option<ModelTypes>,
) -> Checked {
    let Findings { mut diagnostics, scoping_at } = found;
    diagnostics.splice(scoping_at..scoping_at, scoping);
    if let Some(types) = &types {
        diagnostics.extend(findings(model, types));
    }
    diagnostics.extend(profile_rules(model, options));
    Checked { diagnostics, types }
}

/// A text, analysed and checked.
#[derive(Debug, Default)]
pub struct CheckedText {
    pub analysis: TextAnalysis,
    /// The analysis's diagnostics and the checker's, placed in the text, sorted by place
    /// and de-duplicated.
    pub diagnostics: Vec<Diagnostic>,
    /// What inference found (empty while the text has syntax errors or without
    /// `full_check`). Shared with the earlier version's check when the model is the same.
    pub types: Arc<ModelTypes>,
    /// What the checker and inference found about the model, on IR anchors, and with which
    /// options: the next version takes it as it is when its model is the same.
    pub verdict: Arc<Verdict>,
}

/// The checker's and inference's findings about a model, before they are placed in a text
/// (see [`CheckedText::verdict`]).
#[derive(Debug, Default)]
pub struct Verdict {
    options: CheckOptions,
    findings: Vec<Diagnostic>,
}

/// An earlier version's check, for [`check_text_staged`] to take its verdict and types
/// from when the model has not changed ([`TextAnalysis::same_model`]).
#[derive(Clone, Copy, Debug)]
pub struct EarlierCheck<'a> {
    pub types: &'a Arc<ModelTypes>,
    pub verdict: &'a Arc<Verdict>,
}

impl<'a> EarlierCheck<'a> {
    pub fn of(checked: &'a CheckedText) -> Self {
        EarlierCheck { types: &checked.types, verdict: &checked.verdict }
    }
}

/// Analyses a text and, when it reads as a model (no syntax or lowering error), checks it
/// as [`check_model`] does, reusing the analysis's name resolution. While the text has
/// syntax errors, the checker's findings would be about holes the parser left, so only the
/// analysis's are reported.
pub fn check_text(source: &str, options: &CheckOptions) -> CheckedText {
    check_text_with_progress(source, options, None)
}

/// [`check_text`], recording how far reading the text has come in `progress`.
pub fn check_text_with_progress(source: &str, options: &CheckOptions, progress: Option<&Progress>) -> CheckedText {
    let stages = Stages { progress, ..Stages::default() };
    // Without a `stale` question nothing stops, so the default is never used.
    check_text_staged(source, options, &stages, None).unwrap_or_default()
}

/// [`check_text`] in stages, for the language server: from the previous version's
/// analysis where it can, telling the syntax errors first, and stopping between stages
/// once the result is no longer wanted (see [`Stages`]). When the text lowers to the model
/// `earlier` checked (`stages.earlier` being that check's analysis) with the same options,
/// its verdict and types are taken as they are.
pub fn check_text_staged(
    source: &str,
    options: &CheckOptions,
    stages: &Stages,
    earlier: Option<EarlierCheck<'_>>,
) -> Result<CheckedText, Stopped> {
    let mut analysis = analyze_text_staged(source, stages)?;
    let mut diagnostics = analysis.diagnostics.clone();
    let mut types = Arc::default();
    let mut verdict = Arc::default();
    if analysis.readable {
        if stages.is_stale() {
            return Err(Stopped::with_tree(analysis.tree, analysis.syntax_clean));
        }
        match earlier.filter(|e| analysis.same_model && e.verdict.options == *options) {
            Some(earlier) => {
                types = Arc::clone(earlier.types);
                verdict = Arc::clone(earlier.verdict);
            }
            None => {
                // The numbers move into the types, which keep them for lookups by definition
                // site (nothing else reads them after resolution). A resolution shared with
                // the earlier version (the same model, checked with other options) gave its
                // numbers to that version's types: they are found again.
                let numbers = match Arc::get_mut(&mut analysis.resolution) {
                    Some(resolution) => std::mem::take(&mut resolution.numbers),
                    None => resolve_without_tables(&analysis.model).numbers,
                };
                let checked = check_resolved(&analysis.model, options, numbers);
                types = Arc::new(checked.types.unwrap_or_default());
                verdict = Arc::new(Verdict { options: options.clone(), findings: checked.diagnostics });
            }
        }
        for d in &verdict.findings {
            let mut d = d.clone();
            place(&mut d, &analysis.source_map);
            diagnostics.push(d);
        }
    }
    sort_placed(&mut diagnostics);
    Ok(CheckedText { analysis, diagnostics, types, verdict })
}
