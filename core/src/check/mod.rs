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

use crate::diagnostic::{Anchor, Diagnostic, Severity, Sink};
use crate::external::ExternalReader;
use crate::ir::Model;
use crate::schema::{Registry, registry};

pub use node::did_you_mean;
pub use opsets::Opsets;
pub use sonnx::Profile;

/// What the checker is asked to do beyond the rules that always apply.
#[derive(Clone, Debug, Default, PartialEq)]
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

/// What the rules found, in model order (header, main graph depth-first, functions).
#[derive(Debug)]
pub struct Findings {
    pub diagnostics: Vec<Diagnostic>,
    /// Where name resolution's findings belong in `diagnostics` (after the model header's,
    /// where onnx's checker reports scoping): they are found apart from the rules.
    pub scoping_at: usize,
}

/// Runs every rule of the checker on `model` (not a profile's: [`profile_rules`]). Name
/// resolution and inference are not rules: [`crate::pipeline`] runs them and merges their
/// findings.
pub fn rules(model: &Model, options: &CheckOptions) -> Findings {
    let mut checker = Checker {
        model,
        options,
        registry: registry(),
        ir_version: 0,
        external_reader: options.model_dir.clone().map(|dir| ExternalReader::new(Some(dir))),
        diagnostics: Sink::default(),
        scoping_at: 0,
        read_names: std::cell::OnceCell::new(),
    };
    checker.model();
    checker.ir_features();
    Findings { diagnostics: checker.diagnostics.into_vec(), scoping_at: checker.scoping_at }
}
/// The rules of the profile `options` opts into (none by default); reported after every
/// other finding.
pub fn profile_rules(model: &Model, options: &CheckOptions) -> Vec<Diagnostic> {
    match options.profile {
        Profile::Sonnx => sonnx::check(model),
        Profile::None => Vec::new(),
    }
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
    diagnostics: Sink,
    /// Where in `diagnostics` name resolution's findings belong (after the model header's),
    /// which are found apart from the rules.
    scoping_at: usize,
    /// Every name some node reads or some graph outputs, gathered once when a rule first
    /// asks (only for a tensor that holds too much data).
    read_names: std::cell::OnceCell<std::collections::HashSet<crate::ir::Str>>,
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
