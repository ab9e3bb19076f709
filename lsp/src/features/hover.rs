//! Hover: on a value, its declared and inferred types and where it is defined; on an
//! operator, its schema signature at the imported opset with a link to onnx.ai; on an
//! attribute, its type and default; on a function, graph or dimension parameter, what it is.

use onnx_core::facts::declared_type;
use onnx_core::ir::Str;
use onnx_core::resolve::DefSite;
use onnx_core::schema::registry;

use crate::index::Target;
use crate::lsp::*;
use crate::ops;
use crate::snapshot::Snapshot;

pub fn hover(s: &Snapshot, position: Position) -> Option<Hover> {
    let occurrence = s.index().at(s.offset(position))?;
    let markdown = match &occurrence.target {
        Target::Value(site) => value(s, *site),
        Target::Undefined(name) => format!("**{name}**: not defined in this scope"),
        Target::Op(node) => op(s, *node)?,
        Target::Attribute(node, i) => attribute(s, *node, *i)?,
        Target::Function(f) => function(s, *f),
        Target::Graph(g) => graph(s, *g),
        Target::DimParam(name) => {
            let uses = s.index().occurrences_of(&occurrence.target).count();
            format!("**{name}**: dimension parameter (symbolic size), mentioned {uses} time(s)")
        }
    };
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: markdown }),
        range: Some(s.range(occurrence.span)),
    })
}

fn value(s: &Snapshot, site: DefSite) -> String {
    let model = &s.analysis.model;
    let name = s.index().defs.get(&site).map(|(n, _)| n.clone()).unwrap_or_default();
    let mut out = format!("**{name}**: {}", defined_where(s, site));
    let declared = declared_type(model, s.scopes(), site, &name);
    let inferred = s.types.at(model, site);
    match &declared {
        Some(ty) => out.push_str(&format!("\n\ndeclared: `{ty}`")),
        None => out.push_str("\n\ndeclared: none"),
    }
    match (inferred, &declared) {
        (Some(ty), Some(d)) if ty == d => out.push_str(" (inference agrees)"),
        (Some(ty), _) => out.push_str(&format!("\n\ninferred: `{ty}`")),
        (None, _) => out.push_str("\n\ninferred: unknown"),
    }
    out
}

/// Where a value comes from, in words, with the line.
fn defined_where(s: &Snapshot, site: DefSite) -> String {
    let model = &s.analysis.model;
    let line = s.index().defs.get(&site).map_or(0, |(_, span)| s.line_number(span.start));
    let graph_name = |g: onnx_core::ir::GraphId| model.graphs[g].name.as_ref().map_or_else(String::new, Str::escaped);
    match site {
        DefSite::GraphInput(g, i) => format!("input {i} of graph `{}` (line {line})", graph_name(g)),
        DefSite::Initializer(g, _) | DefSite::SparseInitializer(g, _) => {
            format!("initializer of graph `{}` (line {line})", graph_name(g))
        }
        DefSite::FunctionInput(f, i) => {
            let name = model.function_store[f].name.as_ref().map_or_else(String::new, Str::escaped);
            format!("input {i} of function `{name}` (line {line})")
        }
        DefSite::NodeOutput(n, i) => {
            let op = model.nodes[n].op_type.as_ref().map_or_else(String::new, Str::escaped);
            format!("output {i} of `{op}` (line {line})")
        }
    }
}

fn op(s: &Snapshot, node: onnx_core::ir::NodeId) -> Option<String> {
    let model = &s.analysis.model;
    let n = &model.nodes[node];
    let op_name = n.op_type.as_ref().map_or_else(String::new, Str::escaped);
    let domain = String::from_utf8_lossy(n.domain_str()).into_owned();
    let Some((schema, imported)) = ops::node_schema(model, s.scopes(), node) else {
        let scope = s.scopes().node_scope.get(&node).copied();
        return Some(match ops::imported_version(model, scope, &domain) {
            None => format!("**{op_name}**: the domain `{}` is not imported", ops::domain_label(&domain)),
            Some(v) if registry().knows_domain(&domain) => {
                format!("**{op_name}**: no such operator in `{}` at opset {v}", ops::domain_label(&domain))
            }
            Some(_) => format!("**{op_name}**: custom operator of domain `{domain}` (no schema)"),
        });
    };
    let mut out = format!(
        "```onnx\n{}\n```\n**{}** · `{}` since version {} (imported opset {imported})",
        ops::signature(schema),
        schema.op,
        ops::domain_label(&schema.domain),
        schema.since_version
    );
    if schema.deprecated {
        out.push_str(" · **deprecated**");
    }
    if !schema.type_constraints.is_empty() {
        out.push_str("\n\nType constraints:");
        for c in &schema.type_constraints {
            out.push_str(&format!("\n- `{}` ∈ {}", c.param, abbreviated(c.allowed)));
        }
    }
    if !schema.attributes.is_empty() {
        out.push_str("\n\nAttributes:");
        for a in &schema.attributes {
            out.push_str(&format!("\n- `{}`", ops::attribute_line(a)));
        }
    }
    out.push_str(&format!("\n\n[{} on onnx.ai]({})", schema.op, schema.doc_url()));
    Some(out)
}

fn attribute(s: &Snapshot, node: onnx_core::ir::NodeId, i: usize) -> Option<String> {
    let model = &s.analysis.model;
    let attr = model.nodes[node].attributes.get(i)?;
    let name = attr.name.as_ref().map_or_else(String::new, Str::escaped);
    let given = attr.attribute_type().map_or("unknown", |t| t.name());
    let mut out = format!("**{name}**: {given}");
    match ops::node_schema(model, s.scopes(), node) {
        Some((schema, _)) => match schema.attribute(&name) {
            Some(a) => {
                out.push_str(&format!("\n\nschema: `{}` of `{}`", ops::attribute_line(a), schema.op));
            }
            None => out.push_str(&format!("\n\n`{}` has no attribute `{name}`", schema.op)),
        },
        None => out.push_str("\n\n(no schema for this operator)"),
    }
    Some(out)
}

fn function(s: &Snapshot, f: onnx_core::ir::FunctionId) -> String {
    let function = &s.analysis.model.function_store[f];
    let list = |names: &[Str]| names.iter().map(Str::escaped).collect::<Vec<_>>().join(", ");
    let name = function.name.as_ref().map_or_else(String::new, Str::escaped);
    let domain = function.domain.as_ref().map_or_else(String::new, Str::escaped);
    let mut out = format!(
        "```onnx\n{domain}.{name}({}) => ({})\n```\nmodel-local function",
        list(&function.inputs),
        list(&function.outputs)
    );
    let params: Vec<String> = function
        .attributes
        .iter()
        .map(Str::escaped)
        .chain(function.attribute_protos.iter().filter_map(|a| a.name.as_ref().map(|n| format!("{n} (has a default)"))))
        .collect();
    if !params.is_empty() {
        out.push_str(&format!("\n\nattributes: {}", params.join(", ")));
    }
    let calls = s.index().occurrences_of(&Target::Function(f)).filter(|o| !o.is_def).count();
    out.push_str(&format!("\n\ncalled {calls} time(s)"));
    out
}

fn graph(s: &Snapshot, g: onnx_core::ir::GraphId) -> String {
    let graph = &s.analysis.model.graphs[g];
    let name = graph.name.as_ref().map_or_else(String::new, Str::escaped);
    let kind = if s.analysis.model.graph == Some(g) { "main graph" } else { "subgraph" };
    format!(
        "**{name}**: {kind} with {} input(s), {} output(s), {} node(s), {} initializer(s)",
        graph.inputs.len(),
        graph.outputs.len(),
        graph.nodes.len(),
        graph.initializers.len()
    )
}

/// A long list of types cut to its first few: control-flow operators allow over eighty.
fn abbreviated(types: &[&str]) -> String {
    const SHOWN: usize = 12;
    if types.len() <= SHOWN {
        return types.join(", ");
    }
    format!("{}, … ({} more)", types[..SHOWN].join(", "), types.len() - SHOWN)
}
