//! The checker: every rule of `onnx.checker.check_model` (semantics spec §1), the IR rules
//! (SSA, order, scoping, opset imports, functions, external data) and each node against its
//! operator schema, reported as diagnostics instead of a first exception.
//!
//! Layout: one module per level, as onnx's checker is built — [`model`] (header, opsets),
//! [`graph`] (graphs and value infos), [`node`] (a node and its schema), [`attribute`],
//! [`tensor`] (dense and sparse tensors, external data), [`function`] (model-local
//! functions and the call graph). Scoping and SSA come from [`crate::resolve`], shared with
//! the language server.
//!
//! Where onnx's checker is wrong we do what is right and `docs/diagnostics.md` says so; the
//! cases are listed in `tests/fixtures/check/differences.tsv` with their reasons.

mod attribute;
mod function;
mod graph;
mod ir_features;
mod model;
mod node;
mod opsets;
mod sonnx;
mod tensor;

use std::path::PathBuf;

use crate::diagnostic::{Anchor, Diagnostic, Severity};
use crate::external::ExternalReader;
use crate::ir::Model;
use crate::resolve::ValueNumbers;
use crate::schema::{Registry, registry};

pub use node::did_you_mean;
pub use opsets::Opsets;
pub use sonnx::Profile;

/// What the checker is asked to do beyond the rules that always apply.
#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    /// The directory external data is resolved against (the model file's directory). Without
    /// it, external tensors are checked for their path rules only.
    pub model_dir: Option<PathBuf>,
    /// Report nodes of custom domains that have no schema (onnx's `check_custom_domain`).
    pub check_custom_domain: bool,
    /// Also infer types and report declared types inference contradicts (`type-conflict`),
    /// as onnx's `full_check=True` runs strict shape inference after the checker.
    pub full_check: bool,
    /// An opt-in profile whose rules are checked too (`--profile sonnx`).
    pub profile: Profile,
}

/// Checks a whole model. Diagnostics come in model order (header, main graph depth-first,
/// functions); an empty list, or warnings only, means the model is valid.
pub fn check_model(model: &Model, options: &CheckOptions) -> Vec<Diagnostic> {
    run_checks(model, options, None)
}

/// [`check_model`] of a model whose names were resolved already (a text model: its
/// analysis resolved them with the tables the language server needs), `numbers` being that
/// resolution's: name resolution's own diagnostics are the caller's, and inference reuses
/// the numbers instead of resolving again.
pub fn check_resolved_model(model: &Model, options: &CheckOptions, numbers: ValueNumbers) -> Vec<Diagnostic> {
    run_checks(model, options, Some(numbers))
}

fn run_checks(model: &Model, options: &CheckOptions, numbers: Option<ValueNumbers>) -> Vec<Diagnostic> {
    let rules = || {
        let mut checker = Checker {
            model,
            options,
            registry: registry(),
            ir_version: 0,
            external_reader: options.model_dir.clone().map(|dir| ExternalReader::new(Some(dir))),
            diagnostics: Vec::new(),
            scoping_at: 0,
        };
        checker.model();
        checker.ir_features();
        (checker.diagnostics, checker.scoping_at)
    };
    let ((mut diagnostics, scoping_at), resolution_diagnostics, types) = match (numbers, options.full_check) {
        (None, false) => (rules(), crate::resolve::resolve_without_tables(model).diagnostics, None),
        (Some(_), false) => (rules(), Vec::new(), None),
        // Inference needs the value numbers, the structural rules do not: on a big model,
        // inference starts on the main graph's first nodes as soon as they are numbered,
        // while names are resolved on a second thread that then runs the rules (the new
        // thread takes what allocates least: inference on a fresh thread would start from
        // an empty allocator heap, and be slower).
        (None, true) => {
            let (resolution, inferred, found) =
                crate::resolve::resolve_beside(model, |numbers| crate::infer::infer_all(model, numbers), &|_, _| {
                    rules()
                });
            (found, resolution.diagnostics, Some(inferred.with_numbers(resolution.numbers)))
        }
        (Some(numbers), true) => {
            let infer = || crate::infer::infer_model_numbered(model, numbers);
            let (types, found) = if crate::resolve::worth_a_second_thread(model) {
                onnx_syntax::parallel::beside(infer, &rules)
            } else {
                (infer(), rules())
            };
            (found, Vec::new(), Some(types))
        }
    };
    // Scoping is reported where onnx's checker finds it: after the model header.
    diagnostics.splice(scoping_at..scoping_at, resolution_diagnostics);
    if let Some(types) = types {
        diagnostics.extend(types.violations.iter().cloned());
        diagnostics.extend(crate::infer::conflicts(model, &types));
    }
    if options.profile == Profile::Sonnx {
        diagnostics.extend(sonnx::check(model));
    }
    diagnostics
}

/// Whether a list of diagnostics makes the model invalid.
pub fn is_valid(diagnostics: &[Diagnostic]) -> bool {
    !diagnostics.iter().any(|d| d.severity == Severity::Error)
}

/// The state shared by every level: the model, the options, the schema table, and what has
/// been found.
struct Checker<'m> {
    model: &'m Model,
    options: &'m CheckOptions,
    registry: &'static Registry,
    /// The model's IR version (0 when unset, which is itself reported).
    ir_version: i64,
    /// Opens external-data files (each once) when the model directory is known.
    external_reader: Option<ExternalReader>,
    diagnostics: Vec<Diagnostic>,
    /// Where in `diagnostics` name resolution's findings belong (after the model header's),
    /// which are found apart from the rules.
    scoping_at: usize,
}

impl Checker<'_> {
    fn error(&mut self, code: &'static str, anchor: impl Into<Anchor>, message: impl Into<String>) {
        self.diagnostics.push(Diagnostic::error(code, anchor, message));
    }

    fn warning(&mut self, code: &'static str, anchor: impl Into<Anchor>, message: impl Into<String>) {
        self.diagnostics.push(Diagnostic::warning(code, anchor, message));
    }
}

/// Where a graph sits, which decides the rules that apply to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GraphRole {
    /// The model's graph: its inputs and outputs must carry complete types.
    Main,
    /// A body held by an attribute (If, Loop, Scan, …) or a training graph.
    Sub,
}

#[cfg(test)]
mod tests;
