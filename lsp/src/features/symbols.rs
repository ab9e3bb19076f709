//! The outline (document symbols: the model, and in it the main graph with its values and
//! nodes, subgraphs under the node that holds them, functions), the same symbols searched for
//! across documents (`workspace/symbol`), selection ranges (the syntax around a position) and
//! folding ranges (headers, graph and function bodies, multi-line nodes and value lists, runs
//! of comment lines).

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
    let written = if outputs.is_empty() { op.clone() } else { format!("{} = {op}", outputs.join(", ")) };
    // A node is named by its name where it has one (what the exporter and onnxruntime's
    // messages call it), its outputs and operator then the detail.
    let label = n.label.as_ref().and_then(Option::as_ref).filter(|l| !l.text.is_empty());
    let (name, detail, selection) = match label {
        Some(l) => (l.text.clone(), written, l.span),
        None => (written, "node".to_owned(), n.op.span),
    };
    let mut children = Vec::new();
    for item in n.attributes.iter().flat_map(|a| &a.attributes) {
        if let ast::AttrItem::Attr(a) = item {
            collect_graphs(s, a.value.as_ref(), &mut children);
        }
    }
    symbol(s, name, Some(detail), SymbolKind::OPERATOR, n.span, selection, children)
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

/// `workspace/symbol` over one document: the symbols of its outline whose name holds the
/// query's characters in order, ignoring case (`cv1w` finds `conv1.weight`), each with the
/// symbol it is in, until `out` holds `limit`.
pub fn workspace_symbols(s: &Snapshot, uri: &Uri, query: &str, limit: usize, out: &mut Vec<WorkspaceSymbol>) {
    let DocumentSymbolResponse::Nested(roots) = document_symbols(s) else { return };
    let query: Vec<char> = query.chars().flat_map(char::to_lowercase).collect();
    // The model itself is not a symbol to look for; what it holds is.
    let mut stack: Vec<(&DocumentSymbol, Option<&str>)> =
        roots.iter().flat_map(|m| m.children.iter().flatten()).map(|c| (c, None)).collect();
    stack.reverse();
    while let Some((symbol, container)) = stack.pop() {
        if out.len() >= limit {
            return;
        }
        if holds_in_order(&symbol.name, &query) {
            out.push(WorkspaceSymbol {
                name: symbol.name.clone(),
                kind: symbol.kind,
                tags: None,
                container_name: container.map(str::to_owned),
                location: OneOf::Left(Location { uri: uri.clone(), range: symbol.selection_range }),
                data: None,
            });
        }
        for child in symbol.children.iter().flatten().rev() {
            stack.push((child, Some(&symbol.name)));
        }
    }
}

/// Whether `name` holds the characters of `query` (lower case) in order.
fn holds_in_order(name: &str, query: &[char]) -> bool {
    let mut wanted = query.iter().peekable();
    for c in name.chars().flat_map(char::to_lowercase) {
        if wanted.peek() == Some(&&c) {
            wanted.next();
        }
    }
    wanted.peek().is_none()
}

/// `textDocument/selectionRange`: for each position, the ranges an editor's "expand
/// selection" steps through, innermost first: the name or token, the node's input or
/// attribute list, the attribute, the node, a declaration, the graph or function, the model.
pub fn selection_ranges(s: &Snapshot, positions: &[Position]) -> Vec<SelectionRange> {
    positions.iter().map(|&p| selection_range(s, s.offset(p))).collect()
}

fn selection_range(s: &Snapshot, offset: u32) -> SelectionRange {
    let mut spans: Vec<Span> = Vec::new();
    let contains = |span: &Span| span.start <= offset && offset <= span.end;
    if let Some(o) = s.index().at(offset) {
        spans.push(o.span);
    } else {
        // The token at the position (a number, a string), lexed from its line's start.
        let line = s.lines.line_start(s.lines.line_of(offset));
        let rest = s.text.get(line as usize..).unwrap_or("");
        let token = onnx_syntax::lexer::tokens(rest)
            .take_while(|t| line + t.start <= offset)
            .find(|t| offset < line + t.end && !t.kind.is_trivia());
        if let Some(t) = token {
            spans.push(Span { start: line + t.start, end: line + t.end });
        }
    }
    if let Some(tree) = &s.analysis.tree {
        spans.push(tree.span);
        let mut graphs: Vec<&ast::Graph> = tree.graph.iter().collect();
        for f in tree.functions.iter().filter(|f| contains(&f.span)) {
            spans.push(f.span);
            nodes_around(&f.nodes, offset, &mut spans, &mut graphs);
        }
        while let Some(g) = graphs.pop() {
            if !contains(&g.span) {
                continue;
            }
            spans.push(g.span);
            for decl in g.inputs.iter().flatten().chain(&g.outputs).chain(g.local_decls()) {
                if let ast::ValueDecl::Decl { span, .. } = decl
                    && contains(span)
                {
                    spans.push(*span);
                }
            }
            nodes_around(&g.nodes, offset, &mut spans, &mut graphs);
        }
    }
    spans.sort_by_key(|span| (span.len(), std::cmp::Reverse(span.start)));
    spans.dedup();
    // Outermost first, each the parent of the next.
    let mut chain: Option<SelectionRange> = None;
    for span in spans.into_iter().rev() {
        chain = Some(SelectionRange { range: s.range(span), parent: chain.map(Box::new) });
    }
    chain.unwrap_or(SelectionRange { range: s.range(Span { start: offset, end: offset }), parent: None })
}

/// The spans around `offset` of the node that holds it (the node, its input list, its
/// attribute list and the attribute), and the subgraphs of its attributes for the caller.
fn nodes_around<'a>(items: &'a [ast::NodeItem], offset: u32, spans: &mut Vec<Span>, graphs: &mut Vec<&'a ast::Graph>) {
    let contains = |span: &Span| span.start <= offset && offset <= span.end;
    for item in items {
        let ast::NodeItem::Node(n) = item else { continue };
        if !contains(&n.span) {
            continue;
        }
        spans.push(n.span);
        if contains(&n.inputs_span) {
            spans.push(n.inputs_span);
        }
        if let Some(list) = &n.attributes {
            if contains(&list.span) {
                spans.push(list.span);
            }
            for a in &list.attributes {
                if let ast::AttrItem::Attr(a) = a
                    && contains(&a.span)
                {
                    spans.push(a.span);
                    let mut inner = Vec::new();
                    attr_graphs(a.value.as_ref(), &mut inner);
                    graphs.extend(inner);
                }
            }
        }
    }
}

fn attr_graphs<'a>(value: Option<&'a ast::AttrValue>, out: &mut Vec<&'a ast::Graph>) {
    match value {
        Some(ast::AttrValue::Graph(g)) => out.push(g),
        Some(ast::AttrValue::List(items, _)) => items.iter().for_each(|i| attr_graphs(Some(i), out)),
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
