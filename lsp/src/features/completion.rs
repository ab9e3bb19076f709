//! Completion. What fits at the cursor is read from the tokens before it (the text is
//! usually incomplete while typing, so the syntax tree cannot be trusted there):
//!
//! * after `=` in a graph or function body: operators of the imported opsets and the
//!   model-local functions (`domain.` narrows to one domain);
//! * inside a node's `<…>`: the operator's attributes with their types;
//! * inside a node's `(…)`: the values in scope at that point;
//! * in a graph signature or value list: element types and type constructors;
//! * inside the model header: header keys, and domains inside `opset_import: […]`.

use std::collections::BTreeSet;

use onnx_core::diagnostic::Span;
use onnx_core::ir::Str;
use onnx_core::resolve::DefSite;
use onnx_core::schema::{OpSchema, registry};
use onnx_syntax::lexer::{PRIM_TYPES, Token, TokenKind, tokens};

use super::cursor::{dotted_domain, open_brackets, tokens_and_enclosing};

use crate::lsp::*;
use crate::ops;
use crate::snapshot::Snapshot;
use onnx_core::facts::ScopeId;

#[derive(Debug, PartialEq)]
enum Context {
    Operator {
        domain: Option<String>,
    },
    /// An attribute's name inside a node's `<…>`, which opens at byte `list`.
    Attribute {
        op: String,
        domain: Option<String>,
        list: u32,
    },
    /// An attribute's value after its `=` (or inside the string begun there).
    AttributeValue {
        op: String,
        domain: Option<String>,
        attribute: String,
    },
    Value,
    Type,
    HeaderKey,
    Domain,
    Nothing,
}

/// The part of a name or string already typed, which an item replaces: `start..end`, and
/// whether it began with a quote.
struct Typed {
    start: u32,
    end: u32,
    quoted: bool,
}

pub fn complete(s: &Snapshot, position: Position) -> Option<CompletionResponse> {
    let offset = s.offset(position);
    let (tokens, enclosing) = tokens_and_enclosing(&s.text, offset);
    let typed = typed_at(&s.text, offset, enclosing);
    let mut found = context(&s.text, &tokens, enclosing);
    if found == Context::Nothing && typed.start < offset {
        // A name typed so far that is not one word: `conv1.we`, `39`, `"conv1.weight`.
        let before: Vec<Token> = tokens.iter().take_while(|t| t.end <= typed.start).copied().collect();
        if context(&s.text, &before, None) == Context::Value {
            found = Context::Value;
        }
    }
    let items = match found {
        Context::Operator { domain } => operators(s, offset, domain.as_deref()),
        Context::Attribute { op, domain, list } => attributes(s, offset, &op, domain.as_deref(), list),
        Context::AttributeValue { op, attribute, .. } => attribute_values(s, &op, &attribute, &typed),
        Context::Value => values(s, offset, &typed),
        Context::Type => types(),
        Context::HeaderKey => header_keys(),
        Context::Domain => domains(s),
        Context::Nothing => return None,
    };
    Some(CompletionResponse::Array(items))
}

/// What is typed before the cursor: the string the cursor is inside, or the name characters
/// (letters, digits, `_`, `.`) right before it.
fn typed_at(text: &str, offset: u32, enclosing: Option<Token>) -> Typed {
    if let Some(t) = enclosing.filter(|t| matches!(t.kind, TokenKind::String | TokenKind::UnterminatedString)) {
        let end = if t.kind == TokenKind::String { t.end } else { offset };
        return Typed { start: t.start, end, quoted: true };
    }
    let bytes = text.as_bytes();
    let mut start = offset as usize;
    while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || matches!(bytes[start - 1], b'_' | b'.')) {
        start -= 1;
    }
    Typed { start: start as u32, end: offset, quoted: false }
}

fn context(text: &str, tokens: &[Token], enclosing: Option<Token>) -> Context {
    let in_string = match enclosing.map(|t| t.kind) {
        // Inside a comment: nothing to offer.
        Some(TokenKind::Comment | TokenKind::DocComment) => return Context::Nothing,
        // Inside a string (the last token): only an attribute's value.
        Some(TokenKind::String | TokenKind::UnterminatedString) => true,
        _ => false,
    };
    let tokens = if in_string { &tokens[..tokens.len().saturating_sub(1)] } else { tokens };
    let kind = |i: usize| tokens.get(i).map(|t| t.kind);
    let word = |i: usize| tokens.get(i).map_or("", |t| t.text(text));
    let stack = open_brackets(tokens);
    let last = tokens.len().checked_sub(1);
    let Some(&open) = stack.last() else {
        // Top level: a header starts with `<`, so there is nothing to complete outside it.
        return Context::Nothing;
    };
    let in_body = stack.iter().any(|&i| kind(i) == Some(TokenKind::LBrace));
    let after_eq = last.filter(|&i| kind(i) == Some(TokenKind::Eq));
    if in_string && !(in_body && kind(open) == Some(TokenKind::LAngle) && after_eq.is_some()) {
        return Context::Nothing;
    }
    match kind(open) {
        Some(TokenKind::LBrace) => {
            // `outputs = [domain.]Op`: after `=`, or after `domain .`.
            match last.map(|i| (kind(i), i)) {
                Some((Some(TokenKind::Eq), _)) => Context::Operator { domain: None },
                Some((Some(TokenKind::Dot), i)) if i >= 1 && kind(i - 1) == Some(TokenKind::Ident) => {
                    Context::Operator { domain: Some(dotted_domain(tokens, text, i)) }
                }
                _ => Context::Nothing,
            }
        }
        Some(TokenKind::LAngle) if in_body && open >= 1 && kind(open - 1) == Some(TokenKind::Ident) => {
            let op = word(open - 1).to_owned();
            let domain =
                (open >= 3 && kind(open - 2) == Some(TokenKind::Dot)).then(|| dotted_domain(tokens, text, open - 2));
            if expecting_name(tokens, open, last) {
                return Context::Attribute { op, domain, list: tokens[open].start };
            }
            // `name = ` or `name: type = `.
            let Some(eq) = after_eq.filter(|&i| i >= open + 2) else { return Context::Nothing };
            let name_at = if kind(eq - 2) == Some(TokenKind::Colon) && eq >= open + 4 { eq - 3 } else { eq - 1 };
            if kind(name_at) != Some(TokenKind::Ident) || !expecting_name(tokens, open, Some(name_at - 1)) {
                return Context::Nothing;
            }
            Context::AttributeValue { op, domain, attribute: word(name_at).to_owned() }
        }
        Some(TokenKind::LParen) if in_body => {
            let after_op = open >= 1 && matches!(kind(open - 1), Some(TokenKind::Ident | TokenKind::RAngle));
            if after_op && expecting_name(tokens, open, last) { Context::Value } else { Context::Nothing }
        }
        // Graph signatures `name (float[N] x, …) => (…)` and value lists `<float[2] w = …>`.
        Some(TokenKind::LParen | TokenKind::LAngle) if !in_body => {
            // A top-level `<` opens a model or function header unless it follows a graph
            // signature (a value list) or a function name (its parameters).
            let header = kind(open) == Some(TokenKind::LAngle)
                && stack.len() == 1
                && !(open >= 1 && matches!(kind(open - 1), Some(TokenKind::RParen | TokenKind::Ident)));
            let function_params =
                kind(open) == Some(TokenKind::LAngle) && open >= 1 && kind(open - 1) == Some(TokenKind::Ident);
            if !expecting_name(tokens, open, last) || function_params {
                Context::Nothing
            } else if header {
                Context::HeaderKey
            } else {
                Context::Type
            }
        }
        Some(TokenKind::LBracket) if !in_body => {
            let in_opsets = open >= 2 && word(open - 2) == "opset_import";
            let at_entry = last.is_some_and(|i| matches!(kind(i), Some(TokenKind::LBracket | TokenKind::Comma)));
            if in_opsets && at_entry { Context::Domain } else { Context::Nothing }
        }
        _ => Context::Nothing,
    }
}

/// Whether the cursor starts a list element: right after the bracket or a comma.
fn expecting_name(tokens: &[Token], open: usize, last: Option<usize>) -> bool {
    last.is_some_and(|i| i == open || tokens[i].kind == TokenKind::Comma)
}

pub(super) fn scope_at(s: &Snapshot, offset: u32) -> Option<ScopeId> {
    let map = &s.analysis.source_map;
    let graphs = map.graphs.iter().map(|(g, span)| (ScopeId::Graph(g), *span));
    let functions = map.functions.iter().map(|(f, span)| (ScopeId::Function(f), *span));
    graphs
        .chain(functions)
        .filter(|(_, span)| span.start <= offset && offset <= span.end)
        .min_by_key(|(_, span)| span.len())
        .map(|(scope, _)| scope)
}

fn operators(s: &Snapshot, offset: u32, domain: Option<&str>) -> Vec<CompletionItem> {
    let model = &s.analysis.model;
    let scope = scope_at(s, offset);
    let mut items = Vec::new();
    let mut domains: BTreeSet<String> =
        model.opset_import.iter().map(|o| o.domain.as_ref().map_or_else(String::new, Str::escaped)).collect();
    if let Some(ScopeId::Function(f)) = scope {
        domains.extend(
            model.function_store[f]
                .opset_import
                .iter()
                .map(|o| o.domain.as_ref().map_or_else(String::new, Str::escaped)),
        );
    }
    for d in domains {
        let canonical = ops::schema_domain(&d);
        if domain.is_some_and(|wanted| wanted != d && wanted != canonical) {
            continue;
        }
        let Some(version) = ops::imported_version(model, scope, canonical) else { continue };
        for schema in registry().operators_at(canonical, version) {
            items.push(operator_item(schema, domain.is_none() && !canonical.is_empty()));
        }
    }
    for &f in &model.functions {
        let function = &model.function_store[f];
        let Some(name) = function.name.as_ref().map(Str::escaped) else { continue };
        let fdomain = function.domain.as_ref().map_or_else(String::new, Str::escaped);
        if domain.is_some_and(|wanted| wanted != fdomain) {
            continue;
        }
        let insert = if domain.is_none() && !fdomain.is_empty() { format!("{fdomain}.{name}") } else { name.clone() };
        items.push(CompletionItem {
            label: name,
            kind: Some(CompletionItemKind::FUNCTION),
            detail: Some(format!("model-local function of {fdomain}")),
            insert_text: Some(insert),
            ..CompletionItem::default()
        });
    }
    items
}

fn operator_item(schema: &OpSchema, qualify: bool) -> CompletionItem {
    CompletionItem {
        label: schema.op.clone(),
        kind: Some(CompletionItemKind::OPERATOR),
        detail: Some(format!(
            "{} · {} {}",
            ops::signature(schema),
            ops::domain_label(&schema.domain),
            schema.since_version
        )),
        documentation: Some(Documentation::MarkupContent(MarkupContent {
            kind: MarkupKind::Markdown,
            value: format!("[{} on onnx.ai]({})", schema.op, schema.doc_url()),
        })),
        insert_text: qualify.then(|| format!("{}.{}", schema.domain, schema.op)),
        tags: schema.deprecated.then(|| vec![CompletionItemTag::DEPRECATED]),
        ..CompletionItem::default()
    }
}

fn attributes(s: &Snapshot, offset: u32, op: &str, domain: Option<&str>, list: u32) -> Vec<CompletionItem> {
    let model = &s.analysis.model;
    let domain = domain.map_or("", ops::schema_domain);
    let Some(version) = ops::imported_version(model, scope_at(s, offset), domain) else { return Vec::new() };
    let Some(schema) = registry().lookup(domain, op, version) else { return Vec::new() };
    let written = written_attributes(&s.text, list, offset);
    schema
        .attributes
        .iter()
        .filter(|a| !written.contains(a.name.as_str()))
        .map(|a| CompletionItem {
            label: a.name.clone(),
            kind: Some(CompletionItemKind::PROPERTY),
            detail: Some(ops::attribute_line(a)),
            insert_text: Some(format!("{} = ", a.name)),
            ..CompletionItem::default()
        })
        .collect()
}

/// The attribute names written in the `<…>` that opens at byte `list`, but for the word at
/// `cursor` (the one being typed or replaced).
fn written_attributes(text: &str, list: u32, cursor: u32) -> BTreeSet<&str> {
    let rest = &text[list as usize..];
    // Lexed lazily and only to the list's end: the rest of a big document is never read.
    let mut significant = tokens(rest).filter(|t| !t.kind.is_trivia()).peekable();
    let mut names = BTreeSet::new();
    let mut depth = 0usize;
    let mut previous: Option<TokenKind> = None;
    while let Some(t) = significant.next() {
        match t.kind {
            TokenKind::LAngle | TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => depth += 1,
            TokenKind::RAngle | TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
            TokenKind::Ident if depth == 1 => {
                let named = matches!(significant.peek().map(|n| n.kind), Some(TokenKind::Colon | TokenKind::Eq));
                let starts_entry = matches!(previous, Some(TokenKind::LAngle | TokenKind::Comma));
                let at_cursor = list + t.start <= cursor && cursor <= list + t.end;
                if named && starts_entry && !at_cursor {
                    names.insert(t.text(rest));
                }
            }
            _ => {}
        }
        previous = Some(t.kind);
    }
    names
}

/// The spellings a string attribute takes ([`onnx_core::schema::choices`]), each as a
/// string literal replacing what is typed.
fn attribute_values(s: &Snapshot, op: &str, attribute: &str, typed: &Typed) -> Vec<CompletionItem> {
    let Some(values) = onnx_core::schema::choices::allowed_strings(op, attribute) else { return Vec::new() };
    let range = s.range(Span { start: typed.start, end: typed.end });
    values
        .iter()
        .map(|v| CompletionItem {
            label: (*v).to_owned(),
            kind: Some(CompletionItemKind::ENUM_MEMBER),
            detail: Some(format!("{op} {attribute}")),
            filter_text: Some(if typed.quoted { format!("\"{v}\"") } else { (*v).to_owned() }),
            text_edit: Some(CompletionTextEdit::Edit(TextEdit { range, new_text: format!("\"{v}\"") })),
            ..CompletionItem::default()
        })
        .collect()
}

/// Values visible at the cursor in its scope and the scopes around it: graph inputs and
/// initializers anywhere in their graph, node outputs defined before the cursor's node.
/// A name that must be quoted (`390`, `conv1.weight`) is inserted quoted.
fn values(s: &Snapshot, offset: u32, typed: &Typed) -> Vec<CompletionItem> {
    let Some(scope) = scope_at(s, offset) else { return Vec::new() };
    let chain = s.scopes().scope_chain(scope);
    // A node sees what is defined before it, not its own outputs.
    let limit = s
        .analysis
        .source_map
        .nodes
        .values()
        .filter(|n| n.node.start <= offset && offset <= n.node.end)
        .map(|n| n.node.start)
        .max()
        .unwrap_or(offset);
    let range = s.range(Span { start: typed.start, end: typed.end });
    let mut seen = BTreeSet::new();
    let mut items = Vec::new();
    let mut defs: Vec<_> = s.index().defs.iter().collect();
    defs.sort_by_key(|(_, (_, span))| span.start);
    for (site, (name, span)) in defs {
        let in_order = !matches!(site, DefSite::NodeOutput(..)) || span.end <= limit;
        let visible = in_order && s.scopes().scope_of(*site).is_some_and(|sc| chain.contains(&sc));
        if !visible || !seen.insert(name.clone()) {
            continue;
        }
        let ty = s.types.at(&s.analysis.model, *site).map(ToString::to_string);
        let spelled = name.as_str().and_then(|n| super::rename::spell(n, false).ok());
        // Typed with a quote, every name matches as a quoted one (`"x` finds `x` too).
        let quoted = name.as_str().filter(|_| typed.quoted).map(|n| {
            let mut q = String::new();
            onnx_core::print::quote(&mut q, n);
            q
        });
        items.push(CompletionItem {
            label: name.escaped(),
            kind: Some(CompletionItemKind::VARIABLE),
            detail: ty,
            filter_text: quoted,
            text_edit: spelled.map(|new_text| CompletionTextEdit::Edit(TextEdit { range, new_text })),
            ..CompletionItem::default()
        });
    }
    items
}

fn types() -> Vec<CompletionItem> {
    let prims = PRIM_TYPES.iter().map(|t| CompletionItem {
        label: (*t).to_owned(),
        kind: Some(CompletionItemKind::TYPE_PARAMETER),
        ..CompletionItem::default()
    });
    let ctors = ["seq", "map", "optional", "sparse_tensor"].into_iter().map(|t| CompletionItem {
        label: t.to_owned(),
        kind: Some(CompletionItemKind::KEYWORD),
        insert_text: Some(format!("{t}(")),
        ..CompletionItem::default()
    });
    prims.chain(ctors).collect()
}

fn header_keys() -> Vec<CompletionItem> {
    ["ir_version", "opset_import", "producer_name", "producer_version", "domain", "model_version", "doc_string"]
        .into_iter()
        .map(|k| CompletionItem {
            label: k.to_owned(),
            kind: Some(CompletionItemKind::KEYWORD),
            insert_text: Some(format!("{k}: ")),
            ..CompletionItem::default()
        })
        .collect()
}

fn domains(s: &Snapshot) -> Vec<CompletionItem> {
    let mut items: Vec<CompletionItem> = registry()
        .domain_versions
        .iter()
        .map(|(domain, latest)| CompletionItem {
            label: format!("\"{domain}\""),
            kind: Some(CompletionItemKind::MODULE),
            detail: Some(format!("latest opset {latest}")),
            insert_text: Some(format!("\"{domain}\" : {latest}")),
            ..CompletionItem::default()
        })
        .collect();
    let model = &s.analysis.model;
    let local: BTreeSet<String> =
        model.functions.iter().filter_map(|&f| model.function_store[f].domain.as_ref().map(Str::escaped)).collect();
    for domain in local {
        items.push(CompletionItem {
            label: format!("\"{domain}\""),
            kind: Some(CompletionItemKind::MODULE),
            detail: Some("domain of model-local functions".into()),
            insert_text: Some(format!("\"{domain}\" : 1")),
            ..CompletionItem::default()
        });
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_bar(text: &str) -> Context {
        let offset = text.find('|').unwrap_or_default();
        let source = text.replace('|', "");
        let (tokens, enclosing) = tokens_and_enclosing(&source, offset as u32);
        context(&source, &tokens, enclosing)
    }

    #[test]
    fn contexts_follow_the_tokens_before_the_cursor() {
        assert_eq!(at_bar("<ir_version: 8, |"), Context::HeaderKey);
        assert_eq!(at_bar("<opset_import: [|"), Context::Domain);
        assert_eq!(at_bar("<opset_import: [\"\" : 1, |"), Context::Domain);
        assert_eq!(at_bar("<ir_version: 8>\nmain (|"), Context::Type);
        assert_eq!(at_bar("<ir_version: 8>\nmain (float[N] x, flo|"), Context::Type);
        assert_eq!(at_bar("main (float x) => (float y) {\n y = |"), Context::Operator { domain: None });
        assert_eq!(at_bar("main (float x) => (float y) {\n y = Re|"), Context::Operator { domain: None });
        assert_eq!(
            at_bar("main (float x) => (float y) {\n y = ai.onnx.ml.|"),
            Context::Operator { domain: Some("ai.onnx.ml".into()) }
        );
        assert_eq!(at_bar("main (float x) => (float y) {\n y = Relu(|"), Context::Value);
        assert_eq!(at_bar("main (float x) => (float y) {\n y = Add(x, |"), Context::Value);
        assert_eq!(
            at_bar("main (float x) => (float y) {\n y = LeakyRelu<|"),
            Context::Attribute { op: "LeakyRelu".into(), domain: None, list: 44 }
        );
        let value =
            |attribute: &str| Context::AttributeValue { op: "Conv".into(), domain: None, attribute: attribute.into() };
        assert_eq!(at_bar("main (float x) => (float y) {\n y = Conv<auto_pad = |"), value("auto_pad"));
        assert_eq!(at_bar("main (float x) => (float y) {\n y = Conv<auto_pad: string = \"SA|"), value("auto_pad"));
        assert_eq!(at_bar("main (float x) => (float y) {\n y = Conv<group = 1, auto_pad = \"|\">"), value("auto_pad"));
        assert_eq!(at_bar("main (float x) => (float y) {\n y = Conv<group = |"), value("group"));
        assert_eq!(at_bar("main (float x) => (float y) {\n y = Conv(\"|"), Context::Nothing);
        assert_eq!(at_bar("main (float x) => (float y) {\n # y = |"), Context::Nothing);
    }
}
