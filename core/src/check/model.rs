//! Model level (semantics spec §1.2): IR version, metadata, opset imports, then the main
//! graph and the model-local functions.

use std::collections::HashSet;

use super::{Checker, GraphRole, Opsets};
use crate::diagnostic::Anchor;
use crate::ir::Str;

impl Checker<'_> {
    pub(super) fn model(&mut self) {
        let model = self.model;
        let ir_version = model.ir_version.unwrap_or(0);
        self.ir_version = ir_version;
        if ir_version <= 0 {
            self.error(
                "missing-ir-version",
                Anchor::Model,
                "the model has no ir_version (it must be set and positive)",
            );
        } else if ir_version > self.registry.ir_version {
            self.error(
                "unsupported-ir-version",
                Anchor::Model,
                format!("ir_version {ir_version} is newer than the newest known, {}", self.registry.ir_version),
            );
        }
        self.metadata_keys(&model.metadata_props, Anchor::Model, "model");
        for import in &model.opset_import {
            let version = import.version.unwrap_or(0);
            if i32::try_from(version).is_err() {
                let domain = import.domain.as_ref().map_or_else(String::new, Str::escaped);
                self.error(
                    "opset-version-out-of-range",
                    Anchor::Model,
                    format!("opset version {version} of domain '{domain}' is out of range (it must fit in 32 bits)"),
                );
            }
        }
        let mut opsets = Opsets::from_imports(&model.opset_import);
        if ir_version >= 3 && model.opset_import.is_empty() {
            self.error(
                "missing-opset-import",
                Anchor::Model,
                "the model imports no opset (IR version 3 and later need one)",
            );
        } else if (1..3).contains(&ir_version) {
            if !model.opset_import.is_empty() {
                self.error(
                    "unexpected-opset-import",
                    Anchor::Model,
                    format!("IR version {ir_version} predates opset imports, but the model has some"),
                );
            }
            opsets = Opsets::default();
            opsets.insert("", 1);
        }
        // Scoping and SSA: resolved apart from the rules (by the caller or by `run_checks`),
        // reported here.
        self.scoping_at = self.diagnostics.len();
        match model.graph {
            Some(g) => self.graph(g, GraphRole::Main, &opsets),
            None => self.error("missing-graph", Anchor::Model, "the model has no graph"),
        }
        if ir_version >= 8 || !model.functions.is_empty() {
            self.functions(&opsets);
        }
    }

    /// Metadata keys must be unique.
    pub(super) fn metadata_keys(&mut self, props: &[crate::ir::StringPair], anchor: Anchor, owner: &str) {
        let mut seen = HashSet::new();
        for p in props {
            let key = p.key.clone().unwrap_or_default();
            if !seen.insert(key.clone()) {
                self.error(
                    "duplicate-metadata-key",
                    anchor,
                    format!("{owner} metadata key '{key}' appears more than once"),
                );
            }
        }
    }
}
