//! Inlay hints: the inferred type after each node output that the text does not declare.

use std::collections::{HashMap, HashSet};

use onnx_core::ir::{GraphId, Str};
use onnx_core::resolve::DefSite;

use crate::index::Target;
use crate::lsp::*;
use crate::snapshot::Snapshot;
use onnx_core::facts::ScopeId;

pub fn inlay_hints(s: &Snapshot, range: Range) -> Vec<InlayHint> {
    let wanted = s.span(range);
    let model = &s.analysis.model;
    // Names with a written type, per graph, gathered once (graphs can have thousands).
    let mut declared: HashMap<GraphId, HashSet<&Str>> = HashMap::new();
    let mut hints = Vec::new();
    for o in &s.index().occurrences {
        if o.span.end < wanted.start || o.span.start > wanted.end || !o.is_def {
            continue;
        }
        let Target::Value(site @ DefSite::NodeOutput(..)) = o.target else { continue };
        let Some(ScopeId::Graph(g)) = s.scopes().scope_of(site) else { continue };
        let Some((name, _)) = s.index().defs.get(&site) else { continue };
        let written = declared.entry(g).or_insert_with(|| {
            let graph = &model.graphs[g];
            let described = graph.outputs.iter().chain(&graph.value_info).filter(|v| v.ty.is_some());
            described.filter_map(|v| v.name.as_ref()).collect()
        });
        if written.contains(name) {
            continue;
        }
        let Some(ty) = s.types.at(model, site) else { continue };
        hints.push(InlayHint {
            position: s.range(o.span).end,
            label: InlayHintLabel::String(format!(": {ty}")),
            kind: Some(InlayHintKind::TYPE),
            text_edits: None,
            tooltip: None,
            padding_left: None,
            padding_right: None,
            data: None,
        });
    }
    hints
}
