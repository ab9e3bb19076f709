//! The outline (document symbols: the model, and in it the main graph with its values and
//! nodes, subgraphs under the node that holds them, functions) and folding ranges (headers, graph and function
//! bodies, multi-line nodes and value lists, runs of comment lines).

use onnx_syntax::ast;
use onnx_syntax::lexer::{TokenKind, lex};

use crate::lsp::*;
use crate::snapshot::Snapshot;
use onnx_core::diagnostic::Span;

pub fn document_symbols(s: &Snapshot) -> DocumentSymbolResponse {
    let Some(tree) = &s.analysis.tree else {
        return DocumentSymbolResponse::Nested(Vec::new());
    };
    let mut children = Vec::new();
    if let Some(g) = &tree.graph {
        children.push(graph_symbol(s, g, "graph"));
    }
    for f in &tree.functions {
        let mut body = decl_symbols(s, f.inputs.iter().chain(&f.outputs), SymbolKind::VARIABLE);
        body.extend(node_symbols(s, &f.nodes));
        let name = f.name.text.clone();
        children.push(symbol(s, name, Some("function".into()), SymbolKind::FUNCTION, f.span, f.name.span, body));
    }
    // The model itself, holding the rest; its header (IR version, opsets) is the detail.
    let start = Span { start: tree.span.start, end: tree.span.start };
    let selection = tree.header.as_ref().map_or(start, |h| h.span);
    let model = symbol(s, "model".into(), Some(model_detail(s)), SymbolKind::FILE, tree.span, selection, children);
    DocumentSymbolResponse::Nested(vec![model])
}

/// `ir_version 10 · opsets "" 21, "local" 1`.
fn model_detail(s: &Snapshot) -> String {
    let model = &s.analysis.model;
    let opsets: Vec<String> = model
        .opset_import
        .iter()
        .map(|o| {
            let domain = o.domain.as_ref().map_or_else(String::new, onnx_core::ir::Str::escaped);
            format!("{domain:?} {}", o.version.map_or_else(|| "?".to_owned(), |v| v.to_string()))
        })
        .collect();
    let ir = model.ir_version.map_or_else(|| "?".to_owned(), |v| v.to_string());
    format!("ir_version {ir} · opsets {}", opsets.join(", "))
}

#[allow(deprecated)] // `deprecated` is a required field of the protocol type.
fn symbol(
    s: &Snapshot,
    name: String,
    detail: Option<String>,
    kind: SymbolKind,
    span: Span,
    selection: Span,
    children: Vec<DocumentSymbol>,
) -> DocumentSymbol {
    DocumentSymbol {
        // Clients reject empty names.
        name: if name.is_empty() { "_".into() } else { name },
        detail,
        kind,
        tags: None,
        deprecated: None,
        range: s.range(span),
        selection_range: s.range(selection),
        children: (!children.is_empty()).then_some(children),
    }
}

fn graph_symbol(s: &Snapshot, g: &ast::Graph, what: &str) -> DocumentSymbol {
    let mut children = decl_symbols(s, g.inputs.iter().flatten().chain(&g.outputs), SymbolKind::VARIABLE);
    // In the order of the text: a `< … >` list after the nodes is listed after them.
    children.extend(decl_symbols(s, g.locals.iter().flatten(), SymbolKind::CONSTANT));
    children.extend(node_symbols(s, &g.nodes));
    children.extend(decl_symbols(s, g.locals_after_nodes.iter().flat_map(|(d, _)| d), SymbolKind::CONSTANT));
    symbol(s, g.name.text.clone(), Some(what.into()), SymbolKind::MODULE, g.span, g.name.span, children)
}

fn decl_symbols<'a>(
    s: &Snapshot,
    decls: impl Iterator<Item = &'a ast::ValueDecl>,
    kind: SymbolKind,
) -> Vec<DocumentSymbol> {
    decls
        .filter_map(|d| match d {
            ast::ValueDecl::Decl { ty, name, span, init, .. } => {
                let detail = ty.as_ref().map(|t| s.slice(t.span).to_owned());
                let kind = if init.is_some() { SymbolKind::CONSTANT } else { kind };
                Some(symbol(s, name.text.clone(), detail, kind, *span, name.span, Vec::new()))
            }
            ast::ValueDecl::Error(_) => None,
        })
        .collect()
}

fn node_symbols(s: &Snapshot, items: &[ast::NodeItem]) -> Vec<DocumentSymbol> {
    items
        .iter()
        .filter_map(|item| match item {
            ast::NodeItem::Node(n) => Some(node_symbol(s, n)),
            ast::NodeItem::Error(_) => None,
        })
        .collect()
}

fn node_symbol(s: &Snapshot, n: &ast::Node) -> DocumentSymbol {
    let outputs: Vec<&str> = n
        .outputs
        .iter()
        .map(|slot| match slot {
            ast::Slot::Name(name) => name.text.as_str(),
            ast::Slot::Empty(_) => "",
        })
        .collect();
    let op = s.slice(n.op.span).to_owned();
    let name = if outputs.is_empty() { op.clone() } else { format!("{} = {op}", outputs.join(", ")) };
    let mut children = Vec::new();
    for item in n.attributes.iter().flat_map(|a| &a.attributes) {
        if let ast::AttrItem::Attr(a) = item {
            collect_graphs(s, a.value.as_ref(), &mut children);
        }
    }
    symbol(s, name, Some("node".into()), SymbolKind::OPERATOR, n.span, n.op.span, children)
}

fn collect_graphs(s: &Snapshot, value: Option<&ast::AttrValue>, out: &mut Vec<DocumentSymbol>) {
    match value {
        Some(ast::AttrValue::Graph(g)) => out.push(graph_symbol(s, g, "subgraph")),
        Some(ast::AttrValue::List(items, _)) => {
            for item in items {
                collect_graphs(s, Some(item), out);
            }
        }
        _ => {}
    }
}

pub fn folding_ranges(s: &Snapshot) -> Vec<FoldingRange> {
    let mut folds = Vec::new();
    let mut fold = |span: Span, kind: Option<FoldingRangeKind>| {
        let start = s.lines.line_of(span.start);
        let end = s.lines.line_of(span.end.saturating_sub(1).max(span.start));
        if end > start {
            folds.push(FoldingRange { start_line: start, end_line: end, kind, ..FoldingRange::default() });
        }
    };
    if let Some(tree) = &s.analysis.tree {
        if let Some(h) = &tree.header {
            fold(h.span, None);
        }
        let mut spans = Vec::new();
        if let Some(g) = &tree.graph {
            graph_folds(g, &mut spans);
        }
        for f in &tree.functions {
            spans.push(f.span);
            for n in f.nodes.iter() {
                node_folds(n, &mut spans);
            }
        }
        for span in spans {
            fold(span, None);
        }
    }
    // Runs of two or more whole-line comments.
    let mut run: Option<Span> = None;
    for t in lex(&s.text) {
        match t.kind {
            TokenKind::Comment | TokenKind::DocComment | TokenKind::Annotation => {
                let span = Span { start: t.start, end: t.end };
                run = Some(match run {
                    Some(r) if s.lines.line_of(span.start) == s.lines.line_of(r.end) + 1 => {
                        Span { start: r.start, end: span.end }
                    }
                    Some(r) => {
                        fold(r, Some(FoldingRangeKind::Comment));
                        span
                    }
                    None => span,
                });
            }
            TokenKind::Whitespace => {}
            _ => {
                if let Some(r) = run.take() {
                    fold(r, Some(FoldingRangeKind::Comment));
                }
            }
        }
    }
    if let Some(r) = run {
        fold(r, Some(FoldingRangeKind::Comment));
    }
    folds.sort_by_key(|f| (f.start_line, std::cmp::Reverse(f.end_line)));
    folds
}

fn graph_folds(g: &ast::Graph, out: &mut Vec<Span>) {
    out.push(g.span);
    for decl in g.local_decls() {
        if let ast::ValueDecl::Decl { span, .. } = decl {
            out.push(*span);
        }
    }
    for n in &g.nodes {
        node_folds(n, out);
    }
}

fn node_folds(item: &ast::NodeItem, out: &mut Vec<Span>) {
    let ast::NodeItem::Node(n) = item else { return };
    out.push(n.span);
    for item in n.attributes.iter().flat_map(|a| &a.attributes) {
        if let ast::AttrItem::Attr(a) = item {
            attr_folds(a.value.as_ref(), out);
        }
    }
}

fn attr_folds(value: Option<&ast::AttrValue>, out: &mut Vec<Span>) {
    match value {
        Some(ast::AttrValue::Graph(g)) => graph_folds(g, out),
        Some(ast::AttrValue::List(items, _)) => {
            for item in items {
                attr_folds(Some(item), out);
            }
        }
        _ => {}
    }
}
