//! Quick fixes for diagnostics in the requested range:
//!
//! * `missing-opset-import` on a node: import its domain (the newest version onnx knows, or
//!   1 for a domain of model-local functions), creating the header or list if needed;
//! * `unknown-op`: the operator or local function of the nearest spelling;
//! * `undefined-value`: the value in scope of the nearest spelling;
//! * `unknown-attribute`: the operator's attribute of the nearest spelling.

use std::collections::HashMap;

use onnx_core::analysis::span_of;
use onnx_core::check::did_you_mean;
use onnx_core::diagnostic::Span;
use onnx_core::ir::{NodeId, Str};
use onnx_core::schema::registry;
use onnx_syntax::ast;

use super::completion::scope_at;
use crate::index::Target;
use crate::lsp::*;
use crate::ops;
use crate::snapshot::Snapshot;
use onnx_core::facts::ScopeId;

pub fn code_actions(s: &Snapshot, uri: &Uri, range: Range) -> CodeActionResponse {
    let wanted = s.span(range);
    let mut actions = Vec::new();
    let published = super::diagnostics::to_lsp(s, uri);
    for (d, diagnostic) in s.diagnostics.iter().zip(published) {
        let span = span_of(d.anchor);
        if span.end < wanted.start || span.start > wanted.end {
            continue;
        }
        let fix = match d.code {
            "missing-opset-import" => node_in(s, span).and_then(|n| import_domain(s, n)),
            "unknown-op" => node_in(s, span).and_then(|n| respell_op(s, n)),
            "undefined-value" => respell_value(s, span),
            "unknown-attribute" => respell_attribute(s, span),
            _ => None,
        };
        if let Some((title, edits)) = fix {
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diagnostic]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), edits)])),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: Some(true),
                ..CodeAction::default()
            }));
        }
    }
    actions
}

type Fix = (String, Vec<TextEdit>);

/// The node whose operator name lies inside `span` (node diagnostics cover the node).
fn node_in(s: &Snapshot, span: Span) -> Option<NodeId> {
    s.index().occurrences.iter().find_map(|o| match o.target {
        Target::Op(n) if span.start <= o.span.start && o.span.end <= span.end => Some(n),
        _ => None,
    })
}

fn import_domain(s: &Snapshot, node: NodeId) -> Option<Fix> {
    let domain = String::from_utf8_lossy(s.analysis.model.nodes[node].domain_str()).into_owned();
    let version =
        registry().domain_versions.iter().find(|(d, _)| d == ops::schema_domain(&domain)).map_or(1, |(_, v)| *v);
    let entry = format!("\"{domain}\" : {version}");
    let header = s.analysis.tree.as_ref()?.header.as_ref();
    let edit = match header {
        None => TextEdit {
            range: s.range(Span { start: 0, end: 0 }),
            new_text: format!("<ir_version: 10, opset_import: [{entry}]>\n"),
        },
        Some(h) => {
            let list = h.entries.iter().find_map(|e| match e {
                ast::HeaderEntry::Entry { key, value: ast::HeaderValue::Pairs(pairs, span), .. }
                    if key.text == "opset_import" =>
                {
                    Some((pairs.is_empty(), *span))
                }
                _ => None,
            });
            match list {
                Some((empty, span)) => {
                    let at = Span { start: span.end - 1, end: span.end - 1 };
                    let text = if empty { entry.clone() } else { format!(", {entry}") };
                    TextEdit { range: s.range(at), new_text: text }
                }
                None => {
                    let at = Span { start: h.span.end - 1, end: h.span.end - 1 };
                    let sep = if h.entries.is_empty() { "" } else { ", " };
                    TextEdit { range: s.range(at), new_text: format!("{sep}opset_import: [{entry}]") }
                }
            }
        }
    };
    Some((format!("Import opset {entry}"), vec![edit]))
}

fn replace(s: &Snapshot, span: Span, with: &str, what: &str) -> Fix {
    (format!("Change {what} to '{with}'"), vec![TextEdit { range: s.range(span), new_text: with.to_owned() }])
}

fn respell_op(s: &Snapshot, node: NodeId) -> Option<Fix> {
    let model = &s.analysis.model;
    let n = &model.nodes[node];
    let op = n.op_type.as_ref()?.escaped();
    let domain = String::from_utf8_lossy(n.domain_str()).into_owned();
    let domain = ops::schema_domain(&domain);
    let version = ops::imported_version(model, s.scopes().node_scope.get(&node).copied(), domain)?;
    let schemas = registry().operators_at(domain, version);
    let functions: Vec<String> = model
        .functions
        .iter()
        .filter(|&&f| model.function_store[f].domain.as_ref().map_or_else(String::new, Str::escaped) == domain)
        .filter_map(|&f| model.function_store[f].name.as_ref().map(Str::escaped))
        .collect();
    let candidates = schemas.iter().map(|x| x.op.as_str()).chain(functions.iter().map(String::as_str));
    let better = did_you_mean(&op, candidates)?;
    let at = s.index().occurrences.iter().find(|o| o.target == Target::Op(node))?.span;
    Some(replace(s, at, better, "operator"))
}

fn respell_value(s: &Snapshot, span: Span) -> Option<Fix> {
    let o = s.index().occurrences.iter().find(|o| o.span == span)?;
    let Target::Undefined(name) = &o.target else { return None };
    let scope = scope_at(s, span.start)?;
    let chain = s.scopes().scope_chain(scope);
    let visible: Vec<String> = s
        .index()
        .defs
        .iter()
        .filter(|(site, (_, def))| {
            def.end <= span.start && s.scopes().scope_of(**site).is_some_and(|sc: ScopeId| chain.contains(&sc))
        })
        .map(|(_, (n, _))| n.escaped())
        .collect();
    let better = did_you_mean(&name.escaped(), visible.iter().map(String::as_str))?.to_owned();
    Some(replace(s, span, &better, "value"))
}

fn respell_attribute(s: &Snapshot, span: Span) -> Option<Fix> {
    let o =
        s.index().occurrences.iter().find(|o| {
            span.start <= o.span.start && o.span.end <= span.end && matches!(o.target, Target::Attribute(..))
        })?;
    let Target::Attribute(node, i) = o.target else { return None };
    let (schema, _) = ops::node_schema(&s.analysis.model, s.scopes(), node)?;
    let name = s.analysis.model.nodes[node].attributes.get(i)?.name.as_ref()?.escaped();
    let better = did_you_mean(&name, schema.attributes.iter().map(|a| a.name.as_str()))?;
    Some(replace(s, o.span, better, "attribute"))
}
