//! Hover: on a value, its declared and inferred types and where it is defined; on an
//! initializer, its name or its values alike, also its size and statistics and, for external
//! data, where its bytes are; on an operator, its schema signature at the imported opset with
//! a link to onnx.ai and the node's multiply-accumulates; on an attribute, its type and default; on a function, graph or
//! dimension parameter, what it is.

use std::path::PathBuf;

use onnx_core::diagnostic::Span;
use onnx_core::facts::declared_type;
use onnx_core::ir::{Str, Tensor, TensorId};
use onnx_core::resolve::DefSite;
use onnx_core::schema::registry;

use crate::index::Target;
use crate::lsp::*;
use crate::ops;
use crate::snapshot::Snapshot;

/// `model_dir`: the document's directory, where external data is read from.
pub fn hover(s: &Snapshot, position: Position, model_dir: Option<PathBuf>) -> Option<Hover> {
    let offset = s.offset(position);
    let Some(occurrence) = s.index().at(offset) else {
        // Inside a tensor's values (numbers, or a reference to its bytes elsewhere): an
        // initializer's or an attribute's (a Constant's value).
        let (tensor, span, what) = initializer_at(s, offset)
            .map(|(t, span)| (t, span, "initializer"))
            .or_else(|| attribute_tensor_at(s, offset).map(|(t, span)| (t, span, "attribute value")))?;
        let t = &s.analysis.model.tensors[tensor];
        // A Constant's tensor is usually unnamed: the attribute's text then names it.
        let name = t
            .name
            .as_ref()
            .filter(|n| !n.as_bytes().is_empty())
            .map_or_else(|| s.slice(span).split([' ', ':', '=']).next().unwrap_or("").to_owned(), Str::escaped);
        let markdown = format!("**{name}**: {what}{}", tensor_summary(t, model_dir));
        return Some(Hover {
            contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: markdown }),
            range: Some(s.range(span)),
        });
    };
    let markdown = match &occurrence.target {
        Target::Value(site @ DefSite::Initializer(g, i)) => {
            let tensor = s.analysis.model.graphs[*g].initializers.get(*i).map(|&t| &s.analysis.model.tensors[t]);
            value(s, *site) + &tensor.map(|t| tensor_summary(t, model_dir)).unwrap_or_default()
        }
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

/// Tensors of more bytes than this are not read from their external file on hover.
const READ_ON_HOVER: u64 = 256 << 20;

/// The initializer whose declaration (`type name = values`) holds `offset`, and that span.
fn initializer_at(s: &Snapshot, offset: u32) -> Option<(TensorId, Span)> {
    fn find(g: &onnx_syntax::ast::Graph, offset: u32) -> Option<(Span, Span)> {
        if offset < g.span.start || offset > g.span.end {
            return None;
        }
        for decl in g.local_decls() {
            if let onnx_syntax::ast::ValueDecl::Decl { name, init: Some(_), span, .. } = decl
                && span.start <= offset
                && offset <= span.end
            {
                return Some((name.span, *span));
            }
        }
        let items = g.nodes.iter().filter_map(|n| match n {
            onnx_syntax::ast::NodeItem::Node(n) if n.span.start <= offset && offset <= n.span.end => Some(n),
            _ => None,
        });
        let attrs = items.flat_map(|n| n.attributes.iter().flat_map(|a| &a.attributes));
        let mut graphs = Vec::new();
        for a in attrs {
            if let onnx_syntax::ast::AttrItem::Attr(a) = a {
                subgraphs(a.value.as_ref(), &mut graphs);
            }
        }
        graphs.into_iter().find_map(|g| find(g, offset))
    }
    fn subgraphs<'a>(value: Option<&'a onnx_syntax::ast::AttrValue>, out: &mut Vec<&'a onnx_syntax::ast::Graph>) {
        match value {
            Some(onnx_syntax::ast::AttrValue::Graph(g)) => out.push(g),
            Some(onnx_syntax::ast::AttrValue::List(items, _)) => items.iter().for_each(|i| subgraphs(Some(i), out)),
            _ => {}
        }
    }
    let (name, decl) = find(s.analysis.tree.as_ref()?.graph.as_ref()?, offset)?;
    let model = &s.analysis.model;
    s.analysis.source_map.graph_values.iter().find_map(|(g, spans)| {
        let i = spans.initializers.iter().position(|span| *span == name)?;
        Some((*model.graphs[g].initializers.get(i)?, decl))
    })
}

/// The tensor of the attribute (`value = float[…] {…}`) that holds `offset`, and the
/// attribute's span.
fn attribute_tensor_at(s: &Snapshot, offset: u32) -> Option<(TensorId, Span)> {
    let model = &s.analysis.model;
    let (node, spans) = s
        .analysis
        .source_map
        .nodes
        .iter()
        .filter(|(_, n)| n.node.start <= offset && offset <= n.node.end)
        .min_by_key(|(_, n)| n.node.len())?;
    let i = spans.attributes.iter().position(|a| a.start <= offset && offset <= a.end)?;
    Some((model.nodes[node].attributes.get(i)?.t?, spans.attributes[i]))
}

/// A tensor's element count and, where its bytes are at hand, their size and statistics;
/// for external data, where the bytes are (read from there when the file is beside the
/// document and the tensor not too big).
fn tensor_summary(t: &Tensor, model_dir: Option<PathBuf>) -> String {
    let ty = t.elem_type().map_or("?", |e| e.name());
    let dims: Vec<String> = t.dims.iter().map(i64::to_string).collect();
    let count = t.element_count().map_or_else(String::new, |n| format!(", {n} values"));
    let mut out = format!("\n\n`{ty}[{}]`{count}", dims.join(","));
    if !t.is_external() {
        if let Some(digest) = onnx_core::print::digest::tensor_digest(t).or_else(|| typed_digest(t)) {
            out.push_str(&format!("; {digest}"));
        }
        return out;
    }
    match onnx_core::external::parse_ref(t) {
        Ok(r) => {
            let length = r.length.map_or_else(|| "to the end".to_owned(), |l| format!("{l} bytes"));
            out.push_str(&format!("\n\nexternal data: `{}`, offset {}, {length}", r.location.escaped(), r.offset));
            if t.expected_raw_size().is_some_and(|size| size > READ_ON_HOVER) {
                return out;
            }
            let mut read = onnx_core::external::ExternalReader::new(model_dir);
            match read.read(t) {
                Ok(bytes) => {
                    let loaded = Tensor { raw_data: Some(bytes), ..t.clone() };
                    if let Some(digest) = onnx_core::print::digest::tensor_digest(&loaded) {
                        out.push_str(&format!("\n\n{digest}"));
                    }
                }
                Err(e) => out.push_str(&format!("\n\nnot readable: {e}")),
            }
        }
        Err(e) => out.push_str(&format!("\n\nexternal data: {e}")),
    }
    out
}

/// The digest of values held in a typed field (as a text's number list is), read as the
/// little-endian bytes raw data would hold: floats, doubles, int32 and int64.
fn typed_digest(t: &Tensor) -> Option<String> {
    use onnx_core::ir::DataType;
    let bytes: Vec<u8> = match t.elem_type()? {
        DataType::Float => t.float_data.iter().flat_map(|v| v.to_le_bytes()).collect(),
        DataType::Double => t.double_data.iter().flat_map(|v| v.to_le_bytes()).collect(),
        DataType::Int32 => t.int32_data.iter().flat_map(|v| v.to_le_bytes()).collect(),
        DataType::Int64 => t.int64_data.iter().flat_map(|v| v.to_le_bytes()).collect(),
        _ => return None,
    };
    let as_raw = Tensor {
        raw_data: Some(bytes.into()),
        ..Tensor { dims: t.dims.clone(), data_type: t.data_type, ..Tensor::default() }
    };
    onnx_core::print::digest::tensor_digest(&as_raw)
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
    out.push_str(&cost(s, node));
    out.push_str(&format!("\n\n[{} on onnx.ai]({})", schema.op, schema.doc_url()));
    Some(out)
}

/// This node's multiply-accumulates (`onnx cost`'s count, from the inferred shapes; a
/// formula in the symbolic dimensions where they are left).
fn cost(s: &Snapshot, node: onnx_core::ir::NodeId) -> String {
    use onnx_core::cost::{Macs, grouped, node_macs};
    let model = &s.analysis.model;
    let macs = node_macs(model, node, |i| s.types.node_input(model, node, i), |i| s.types.node_output(model, node, i));
    match macs {
        Macs::Counted(m) => match m.known() {
            Some(v) => format!("\n\nCost: {} MACs", grouped(v.unsigned_abs())),
            None => format!("\n\nCost: `{m}` MACs"),
        },
        Macs::ShapeUnknown => "\n\nCost: unknown (inference leaves a shape it needs unknown)".to_owned(),
        Macs::NoRule | Macs::Subgraphs => String::new(),
    }
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
