//! The formatter: source text → the same model laid out in our style, every comment kept.
//!
//! It works on the syntax tree, not on the IR, so it keeps what the IR would lose: comments,
//! the way names and numbers are written, blank lines between statements (at most one), the
//! place of attributes before or after the inputs. Literals and names are copied from the
//! source as written; only the spacing and line breaks between tokens change.
//!
//! Comments are handed out by position: before each list element or statement the formatter
//! prints every comment that starts before it, so each is printed exactly once and in order.
//! A comment inside a construct that has no element boundary (inside a type, between `=` and a
//! value) moves to the next boundary. A comment ends its line, so the groups around it break.
//!
//! Text with syntax errors is not formatted: the errors are returned instead.

mod comments;
mod doc;

use crate::progress::{Progress, Stage};
use comments::{Comments, blank_line_before};
use doc::Doc;

use crate::ast::*;
use crate::lexer::{self, TokenKind};
use crate::parser::{SyntaxError, parse_model, parse_model_with_progress};

pub use doc::WIDTH;

/// Formats a model's text. Fails with the syntax errors when the text does not parse cleanly.
pub fn format_model(source: &str) -> Result<String, Vec<SyntaxError>> {
    format_model_with_progress(source, &Progress::default())
}

/// [`format_model`], recording in `progress` how far parsing has come, then
/// [`Stage::Formatting`].
pub fn format_model_with_progress(source: &str, progress: &Progress) -> Result<String, Vec<SyntaxError>> {
    let parse = parse_model_with_progress(source, progress);
    progress.enter(Stage::Formatting);
    let tree = match parse.tree {
        Some(tree) if parse.errors.is_empty() => tree,
        _ => return Err(parse.errors),
    };
    let doc = Formatter::new(source).model(&tree);
    let mut out = String::new();
    // About the source's length; if that much cannot be had, the text grows as it goes.
    let _ = out.try_reserve(source.len() + source.len() / 8 + 64);
    let mut text = doc::render_into(&doc, source, out);
    text.truncate(text.trim_end_matches('\n').len());
    text.push('\n');
    Ok(text)
}

/// A part of a model's text that [`format_fragment`] lays out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fragment {
    /// The model header, `<` to `>`.
    ModelHeader,
    /// A function's header, `<` to `>`.
    FunctionHeader,
    /// One node statement.
    Node,
    /// One value declaration of a signature or locals list (an initializer, say).
    Declaration,
}

impl Fragment {
    /// A model around the fragment, so that the parser reads it where it belongs.
    fn wrapper(self) -> (&'static str, &'static str) {
        match self {
            Fragment::ModelHeader => ("", "\ng () => () {\n}\n"),
            Fragment::FunctionHeader => ("g () => () {\n}\n", "\nf () => () {\n}\n"),
            Fragment::Node => ("g () => () {\n", "\n}\n"),
            Fragment::Declaration => ("g () => () <\n", "\n> {\n}\n"),
        }
    }
}

/// Lays out one part of a model's text exactly as [`format_model`] lays it out inside a
/// whole model, the part starting on a line of its own at `indent` columns (a multiple of
/// two); the result starts with that indentation and has no final line break. The
/// canonical printer writes most of its text itself, fast, and hands the formatter the
/// parts whose layout needs its rules (a line too long, a node holding graphs), so that
/// printed text is already formatted. `None` when the text does not parse as that part.
pub fn format_fragment(fragment: Fragment, text: &str, indent: usize) -> Option<String> {
    let (before, after) = fragment.wrapper();
    let source = format!("{before}{text}{after}");
    let parse = parse_model(&source);
    if !parse.errors.is_empty() {
        return None;
    }
    let tree = parse.tree?;
    let mut f = Formatter::new(&source);
    let doc = match fragment {
        Fragment::ModelHeader => f.header(tree.header.as_ref()?, &MODEL_HEADER),
        Fragment::FunctionHeader => f.header(tree.functions.first()?.header.as_ref()?, &FUNCTION_HEADER),
        Fragment::Node => match tree.graph?.nodes.first()? {
            NodeItem::Node(n) => f.node(n),
            NodeItem::Error(_) => return None,
        },
        Fragment::Declaration => f.decl(tree.graph?.locals.as_ref()?.first()?),
    };
    let doc = (0..indent / 2).fold(doc, |d, _| Doc::Nest(vec![d]));
    let text = doc::render_into(&Doc::Concat(vec![Doc::Hard, doc]), &source, String::new());
    Some(text.trim_end_matches('\n').to_owned())
}

/// The text's tokens, without those inside `{…}` lists of plain numbers: the formatter lays
/// such lists out from the tree, and a big tensor's values and commas were tens of millions
/// of tokens (most of the formatter's time and memory on big models). A list is left out
/// only when it holds nothing but number characters, so its comments, strings and nested
/// brackets always keep their tokens.
fn tokens_outside_number_lists(source: &str) -> Vec<lexer::Token> {
    fn numbers_only(text: &[u8]) -> bool {
        text.iter().all(|b| b.is_ascii_digit() || b.is_ascii_whitespace() || b"+-.,eEinfaINFA".contains(b))
    }
    let mut out = Vec::new();
    let mut tokens = lexer::tokens(source);
    while let Some(token) = tokens.next() {
        out.push(token);
        if token.kind == TokenKind::LBrace {
            let from = token.end as usize;
            if let Some(len) = memchr::memchr(b'}', &source.as_bytes()[from..])
                && numbers_only(&source.as_bytes()[from..from + len])
            {
                // The next token is the `}`.
                tokens.skip_to(from + len);
            }
        }
    }
    out
}

/// The number of `#` comments in a text (annotations not counted), for checks that the
/// formatter keeps them all.
pub fn comment_count(source: &str) -> usize {
    lexer::lex(source).iter().filter(|t| matches!(t.kind, TokenKind::Comment | TokenKind::DocComment)).count()
}

/// How a list is laid out.
#[derive(Clone, Copy)]
struct ListStyle {
    open: &'static str,
    close: &'static str,
    /// Written after every element but the last.
    separator: &'static str,
    /// One element per line, always (statement blocks).
    always_break: bool,
    /// Keep up to one empty line between elements, as written.
    blank_lines: bool,
    /// A space before the closing bracket when flat (after `w =`, `>` would read as `=>`).
    space_before_close: bool,
}

/// What stands between a graph's or function's braces.
#[derive(Clone, Copy)]
struct Body<'a> {
    nodes: &'a [NodeItem],
    locals_after: Option<&'a (Vec<ValueDecl>, Span)>,
}

/// One statement of a [`Body`]: a node, or the `< … >` list after the nodes.
enum BodyItem<'a> {
    Node(&'a NodeItem),
    Locals(&'a [ValueDecl], Span),
}

const STATEMENTS: ListStyle = ListStyle {
    open: "{",
    close: "}",
    separator: "",
    always_break: true,
    blank_lines: true,
    space_before_close: false,
};
const DECLS_PAREN: ListStyle = ListStyle {
    open: "(",
    close: ")",
    separator: ",",
    always_break: false,
    blank_lines: true,
    space_before_close: false,
};
const DECLS_ANGLE: ListStyle = ListStyle {
    open: "<",
    close: ">",
    separator: ",",
    always_break: false,
    blank_lines: true,
    space_before_close: false,
};
const VALUES_BRACKET: ListStyle = ListStyle {
    open: "[",
    close: "]",
    separator: ",",
    always_break: false,
    blank_lines: false,
    space_before_close: false,
};
const VALUES_BRACE: ListStyle = ListStyle {
    open: "{",
    close: "}",
    separator: ",",
    always_break: false,
    blank_lines: false,
    space_before_close: false,
};
const MODEL_HEADER: ListStyle = ListStyle {
    open: "<",
    close: ">",
    separator: ",",
    always_break: true,
    blank_lines: true,
    space_before_close: false,
};

struct Formatter<'s> {
    src: &'s str,
    /// The tokens that are not trivia, to find brackets the tree has no range for.
    tokens: Vec<lexer::Token>,
    comments: Comments,
}

/// Where an item starts, annotations included.
fn start_with(annotations: &[Annotation], span: Span) -> u32 {
    annotations.first().map_or(span.start, |a| a.span.start)
}

impl<'s> Formatter<'s> {
    fn new(src: &'s str) -> Self {
        let tokens = tokens_outside_number_lists(src);
        let comments = Comments::collect(src, &tokens);
        let tokens = tokens.into_iter().filter(|t| !t.kind.is_trivia()).collect();
        Formatter { src, tokens, comments }
    }

    /// The source text of a range, as written.
    fn verbatim(&self, span: Span) -> &'s str {
        &self.src[span.start as usize..span.end as usize]
    }

    fn name(&self, n: &Name) -> Doc {
        Doc::text(self.verbatim(n.span))
    }

    /// Prints the comments that start before `position`. `keep_blank` keeps an empty line
    /// before an own-line comment that had one.
    fn comments_before(&mut self, out: &mut Vec<Doc>, position: u32, keep_blank: bool) {
        for c in self.comments.before(position) {
            if c.trailing {
                out.push(Doc::text(format!(" {}", c.text)));
            } else {
                out.push(if keep_blank && c.blank_before { Doc::Blank } else { Doc::Hard });
                out.push(Doc::text(c.text.clone()));
            }
            out.push(Doc::Hard);
        }
    }

    /// A bracketed list: flat when it fits, else one element per line.
    fn list<T>(
        &mut self,
        style: &ListStyle,
        items: &[T],
        start_of: impl Fn(&T) -> u32,
        mut build: impl FnMut(&mut Self, &T) -> Doc,
        end: u32,
    ) -> Doc {
        let mut inner = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let start = start_of(item);
            if i > 0 {
                inner.push(Doc::text(style.separator));
            }
            self.comments_before(&mut inner, start, style.blank_lines && i > 0);
            inner.push(match (style.always_break, i) {
                (true, _) => Doc::Hard,
                (false, 0) => Doc::SoftLine,
                (false, _) => Doc::Line,
            });
            if style.blank_lines && i > 0 && blank_line_before(self.src, start) {
                inner.push(Doc::Blank);
            }
            inner.push(build(self, item));
        }
        self.comments_before(&mut inner, end, style.blank_lines && !items.is_empty());
        let close_break = match (style.always_break, style.space_before_close) {
            (true, _) => Doc::Hard,
            (false, true) => Doc::Line,
            (false, false) => Doc::SoftLine,
        };
        Doc::group(vec![Doc::text(style.open), Doc::Nest(inner), close_break, Doc::text(style.close)])
    }

    /// Annotation lines, each followed by a line break, with the comments between them.
    fn annotations(&mut self, out: &mut Vec<Doc>, annotations: &[Annotation]) {
        for a in annotations {
            self.comments_before(out, a.span.start, false);
            // An annotation runs to the end of its line, so it starts one of its own.
            out.push(Doc::Hard);
            out.push(Doc::text(self.verbatim(a.span).trim_end()));
            out.push(Doc::Hard);
        }
    }

    // ------------------------------------------------------------------ model

    fn model(&mut self, m: &Model) -> Doc {
        let mut parts = Vec::new();
        self.annotations(&mut parts, &m.annotations);
        if let Some(h) = &m.header {
            self.comments_before(&mut parts, h.span.start, true);
            parts.push(self.header(h, &MODEL_HEADER));
            parts.push(Doc::Hard);
        }
        if let Some(g) = &m.graph {
            self.comments_before(&mut parts, start_with(&g.annotations, g.span), true);
            if blank_line_before(self.src, start_with(&g.annotations, g.span)) && m.header.is_some() {
                parts.push(Doc::Blank);
            }
            parts.push(self.graph(g));
        }
        for function in &m.functions {
            // One empty line before each function, as the canonical printer writes.
            let start = start_with(&function.annotations, function.span);
            parts.push(Doc::Blank);
            self.comments_before(&mut parts, start, false);
            parts.push(Doc::Hard);
            parts.push(self.function(function));
        }
        self.comments_before(&mut parts, u32::MAX, true);
        Doc::Concat(parts)
    }

    fn header(&mut self, h: &Header, style: &ListStyle) -> Doc {
        let end = h.span.end.saturating_sub(1);
        self.list(
            style,
            &h.entries,
            |e| match e {
                HeaderEntry::Entry { key, .. } => key.span.start,
                HeaderEntry::Error(s) => s.start,
            },
            |f, e| match e {
                HeaderEntry::Entry { key, value, .. } => {
                    let value = match value {
                        HeaderValue::Literal(l) => Doc::text(f.verbatim(l.span)),
                        // Opset imports are written `"" : 21`, as onnx and our printers do.
                        HeaderValue::Pairs(pairs, span) => {
                            let colon = if key.text == "opset_import" { " : " } else { ": " };
                            f.pairs(pairs, *span, colon)
                        }
                    };
                    Doc::Concat(vec![f.name(key), Doc::text(": "), value])
                }
                HeaderEntry::Error(s) => Doc::text(f.verbatim(*s)),
            },
            end,
        )
    }

    fn pairs(&mut self, pairs: &[(Literal, Literal)], span: Span, colon: &'static str) -> Doc {
        self.list(
            &VALUES_BRACKET,
            pairs,
            |(k, _)| k.span.start,
            |f, (k, v)| Doc::text(format!("{}{colon}{}", f.verbatim(k.span), f.verbatim(v.span))),
            span.end.saturating_sub(1),
        )
    }

    // ------------------------------------------------------------------ graphs

    fn graph(&mut self, g: &Graph) -> Doc {
        let mut parts = Vec::new();
        self.annotations(&mut parts, &g.annotations);
        self.comments_before(&mut parts, g.span.start, false);
        parts.push(self.name(&g.name));
        parts.push(Doc::text(" "));
        let body = Body { nodes: &g.nodes, locals_after: g.locals_after_nodes.as_ref() };
        self.signature_and_body(&mut parts, g.span, g.inputs.as_deref(), &g.outputs, g.locals.as_deref(), body);
        Doc::Concat(parts)
    }

    /// `(inputs) => (outputs) <locals> { nodes }` of a graph or function spanning `span`.
    fn signature_and_body(
        &mut self,
        parts: &mut Vec<Doc>,
        span: Span,
        inputs: Option<&[ValueDecl]>,
        outputs: &[ValueDecl],
        locals: Option<&[ValueDecl]>,
        body: Body,
    ) {
        // The lists end where the next part begins; find each closing bracket from there.
        if let Some(inputs) = inputs {
            let end = self.close_before(span, &[TokenKind::Arrow]);
            parts.push(self.decls(&DECLS_PAREN, inputs, end));
            parts.push(Doc::text(" "));
        }
        parts.push(Doc::text("=> "));
        let outputs_end = self.outputs_close(span, locals.is_some());
        parts.push(self.decls(&DECLS_PAREN, outputs, outputs_end));
        if let Some(locals) = locals {
            let end = self.close_before(span, &[TokenKind::LBrace]);
            parts.push(Doc::text(" "));
            parts.push(self.decls(&DECLS_ANGLE, locals, end));
        }
        parts.push(Doc::text(" "));
        parts.push(self.body(body, span.end.saturating_sub(1)));
    }

    fn function(&mut self, f: &Function) -> Doc {
        let mut parts = Vec::new();
        self.annotations(&mut parts, &f.annotations);
        if let Some(h) = &f.header {
            self.comments_before(&mut parts, h.span.start, false);
            parts.push(self.header(h, &FUNCTION_HEADER));
            parts.push(Doc::Hard);
        }
        self.comments_before(&mut parts, f.name.span.start, false);
        parts.push(self.name(&f.name));
        parts.push(Doc::text(" "));
        if let Some(params) = &f.params {
            let end = self.first_token_after(f.name.span.end, f.span, TokenKind::LParen).saturating_sub(1);
            let style = ListStyle { blank_lines: false, ..DECLS_ANGLE };
            parts.push(self.list(&style, params, attr_item_start, |fm, p| fm.attr_item(p), end));
            parts.push(Doc::text(" "));
        }
        let body = Body { nodes: &f.nodes, locals_after: None };
        self.signature_and_body(&mut parts, f.span, Some(&f.inputs), &f.outputs, f.locals.as_deref(), body);
        Doc::Concat(parts)
    }

    /// The start of the closing bracket of the output list: the token before the `<` of the
    /// locals or the `{` of the body.
    fn outputs_close(&self, span: Span, has_locals: bool) -> u32 {
        let arrow = self.first_token_after(span.start, span, TokenKind::Arrow);
        let next = if has_locals { TokenKind::LAngle } else { TokenKind::LBrace };
        self.first_token_after(arrow, span, next).saturating_sub(1)
    }

    /// The start of the first token of `kind` at or after `from` within `span`, at the
    /// top level (brackets opened after `from` are skipped); `span.end` if there is none.
    fn first_token_after(&self, from: u32, span: Span, kind: TokenKind) -> u32 {
        let first = self.tokens.partition_point(|t| t.start < from);
        let mut depth = 0i32;
        for token in self.tokens[first..].iter().take_while(|t| t.start < span.end) {
            if depth == 0 && token.kind == kind {
                return token.start;
            }
            match token.kind {
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace | TokenKind::LAngle => depth += 1,
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace | TokenKind::RAngle => depth -= 1,
                _ => {}
            }
        }
        span.end
    }

    /// The position just before the first top-level token of one of `kinds` in `span` (the
    /// closing bracket of the list that precedes it).
    fn close_before(&self, span: Span, kinds: &[TokenKind]) -> u32 {
        kinds.iter().map(|&k| self.first_token_after(span.start, span, k)).min().unwrap_or(span.end).saturating_sub(1)
    }

    fn decls(&mut self, style: &ListStyle, decls: &[ValueDecl], end: u32) -> Doc {
        let ends_with_eq = matches!(decls.last(), Some(ValueDecl::Decl { init: Some(None), .. }));
        let style = ListStyle { space_before_close: ends_with_eq, ..*style };
        self.list(&style, decls, decl_start, |f, d| f.decl(d), end)
    }

    fn decl(&mut self, d: &ValueDecl) -> Doc {
        match d {
            ValueDecl::Decl { annotations, ty, name, init, .. } => {
                let mut parts = Vec::new();
                self.annotations(&mut parts, annotations);
                if let Some(ty) = ty {
                    parts.push(Doc::text(format!("{} ", self.ty(ty))));
                }
                parts.push(self.name(name));
                if let Some(payload) = init {
                    parts.push(Doc::text(" ="));
                    if let Some(payload) = payload {
                        parts.push(Doc::text(" "));
                        parts.push(self.payload(payload));
                    }
                }
                Doc::Concat(parts)
            }
            ValueDecl::Error(s) => Doc::text(self.verbatim(*s)),
        }
    }

    /// The braces of a graph or function: its nodes, then a `< … >` list written after them.
    fn body(&mut self, body: Body, end: u32) -> Doc {
        let items: Vec<BodyItem> = body
            .nodes
            .iter()
            .map(BodyItem::Node)
            .chain(body.locals_after.map(|(decls, span)| BodyItem::Locals(decls, *span)))
            .collect();
        self.list(
            &STATEMENTS,
            &items,
            |item| match item {
                BodyItem::Node(NodeItem::Node(n)) => start_with(&n.annotations, n.span),
                BodyItem::Node(NodeItem::Error(s)) => s.start,
                BodyItem::Locals(_, span) => span.start,
            },
            |f, item| match item {
                BodyItem::Node(NodeItem::Node(n)) => f.node(n),
                BodyItem::Node(NodeItem::Error(s)) => Doc::text(f.verbatim(*s)),
                BodyItem::Locals(decls, span) => Doc::Concat(vec![
                    Doc::text("@initializers "),
                    f.decls(&DECLS_ANGLE, decls, span.end.saturating_sub(1)),
                ]),
            },
            end,
        )
    }

    fn node(&mut self, n: &Node) -> Doc {
        let mut head = Vec::new();
        self.annotations(&mut head, &n.annotations);
        let mut line = Vec::new();
        if let Some(label) = &n.label {
            let label = label.as_ref().map_or("", |l| self.verbatim(l.span));
            line.push(Doc::text(format!("[{label}] ")));
        }
        let outputs = self.slots(&n.outputs);
        if !outputs.is_empty() {
            line.push(Doc::text(format!("{outputs} ")));
        }
        let op: Vec<&str> = n.op.segments.iter().map(|s| self.verbatim(s.span)).collect();
        let overload = n.op.overload.as_ref().map_or(String::new(), |o| format!(":{}", self.verbatim(o.span)));
        line.push(Doc::text(format!("= {}{overload}", op.join("."))));
        let attributes = |f: &mut Self, line: &mut Vec<Doc>| {
            if let Some(a) = &n.attributes {
                line.push(Doc::text(" "));
                line.push(f.attr_list(a));
            }
        };
        let after = n.attributes.as_ref().is_some_and(|a| a.after_inputs);
        if !after {
            attributes(self, &mut line);
        }
        line.push(Doc::text(" "));
        line.push(self.inputs(n));
        if after {
            attributes(self, &mut line);
        }
        head.push(Doc::group(line));
        Doc::Concat(head)
    }

    /// A node's inputs: a list that breaks like the others, its elements plain names.
    fn inputs(&mut self, n: &Node) -> Doc {
        let count = n.inputs.len();
        let last_empty = matches!(n.inputs.last(), Some(Slot::Empty(_)));
        let mut index = 0usize;
        self.list(
            &VALUES_BRACE_PAREN,
            &n.inputs,
            |s| slot_span(s).start,
            |f, s| {
                index += 1;
                let text = match s {
                    Slot::Name(name) => f.verbatim(name.span).to_owned(),
                    Slot::Empty(_) => String::new(),
                };
                // A trailing empty slot needs its comma to be read back.
                if index == count && last_empty { Doc::text(format!("{text},")) } else { Doc::text(text) }
            },
            n.inputs_span.end.saturating_sub(1),
        )
    }

    /// Output names as written, empty slots kept (a trailing one keeps its comma).
    fn slots(&self, slots: &[Slot]) -> String {
        let texts: Vec<&str> = slots
            .iter()
            .map(|s| match s {
                Slot::Name(n) => self.verbatim(n.span),
                Slot::Empty(_) => "",
            })
            .collect();
        let mut text = texts.join(", ");
        if matches!(slots.last(), Some(Slot::Empty(_))) {
            text.push(',');
        }
        text
    }

    // ------------------------------------------------------------------ attributes

    fn attr_list(&mut self, a: &AttrList) -> Doc {
        let style = ListStyle { blank_lines: true, ..DECLS_ANGLE };
        self.list(&style, &a.attributes, attr_item_start, |f, item| f.attr_item(item), a.span.end.saturating_sub(1))
    }

    fn attr_item(&mut self, item: &AttrItem) -> Doc {
        match item {
            AttrItem::Attr(a) => {
                let mut parts = Vec::new();
                self.annotations(&mut parts, &a.annotations);
                parts.push(self.name(&a.name));
                if let Some(ty) = &a.ty {
                    parts.push(Doc::text(format!(": {}", self.verbatim(ty.span))));
                }
                if let Some(value) = &a.value {
                    parts.push(Doc::text(" = "));
                    let doc = self.attr_value(value);
                    // A graph whose annotation lines start after the `=` continues the
                    // attribute: it goes one level deeper, body and all. (An annotated
                    // tensor stays at the attribute's level, where its closing brace is.)
                    let annotated = matches!(value, AttrValue::Graph(g) if !g.annotations.is_empty());
                    parts.push(if annotated { Doc::Nest(vec![doc]) } else { doc });
                }
                Doc::Concat(parts)
            }
            AttrItem::Error(s) => Doc::text(self.verbatim(*s)),
        }
    }

    fn attr_value(&mut self, v: &AttrValue) -> Doc {
        match v {
            AttrValue::Literal(l) => Doc::text(self.verbatim(l.span)),
            AttrValue::Ref(n, _) => Doc::text(format!("@{}", self.verbatim(n.span))),
            AttrValue::Type(t) => Doc::text(self.ty(t)),
            AttrValue::Tensor(t) => self.tensor(t),
            AttrValue::Graph(g) => self.graph(g),
            AttrValue::List(values, span) => self.list(
                &VALUES_BRACKET,
                values,
                |v| v.span().start,
                |f, v| f.attr_value(v),
                span.end.saturating_sub(1),
            ),
            AttrValue::Error(s) => Doc::text(self.verbatim(*s)),
        }
    }

    fn tensor(&mut self, t: &TensorLit) -> Doc {
        let mut parts = Vec::new();
        self.annotations(&mut parts, &t.annotations);
        parts.push(Doc::text(self.ty(&t.ty)));
        if let Some(n) = &t.name {
            parts.push(Doc::text(" "));
            parts.push(self.name(n));
        }
        // `=` is optional before the payload; keep it where it was written.
        let after_head = t.name.as_ref().map_or(t.ty.span.end, |n| n.span.end);
        let payload_start = t.payload.as_ref().map_or(t.span.end, |p| payload_span(p).start);
        let text = &self.src[after_head as usize..payload_start as usize];
        if lexer::lex(text).iter().any(|tok| tok.kind == TokenKind::Eq) {
            parts.push(Doc::text(" ="));
        }
        if let Some(p) = &t.payload {
            parts.push(Doc::text(" "));
            parts.push(self.payload(p));
        }
        Doc::Concat(parts)
    }

    fn payload(&mut self, p: &TensorPayload) -> Doc {
        match p {
            TensorPayload::Values(values, span) => {
                let end = span.end.saturating_sub(1);
                if self.comments.any_before(end) {
                    let items: Vec<LiteralRef> = values.iter(self.src).collect();
                    return self.list(
                        &VALUES_BRACE,
                        &items,
                        |l| l.span.start,
                        |f, l| Doc::text(f.verbatim(l.span)),
                        end,
                    );
                }
                // Many values: packed into as few lines as fit.
                let items = match values {
                    Values::Run(run) => doc::FillItems::run(run, self.src),
                    Values::Listed(_) => {
                        let count = values.len();
                        let mut items = doc::FillItems::default();
                        for (i, l) in values.iter(self.src).enumerate() {
                            let text = self.verbatim(l.span);
                            items.push(&[text, if i + 1 < count { "," } else { "" }]);
                        }
                        items
                    }
                };
                Doc::group(vec![
                    Doc::text("{"),
                    Doc::Nest(vec![Doc::SoftLine, Doc::Fill(items)]),
                    Doc::SoftLine,
                    Doc::text("}"),
                ])
            }
            TensorPayload::External(pairs, span) => self.pairs(pairs, *span, ": "),
        }
    }

    // ------------------------------------------------------------------ types

    fn ty(&self, t: &TypeExpr) -> String {
        match &t.kind {
            TypeKind::Tensor { elem, shape } => format!("{}{}", self.verbatim(elem.span), self.shape(shape)),
            TypeKind::Sequence(inner) => format!("seq({})", self.ty(inner)),
            TypeKind::Map(key, value) => format!("map({}, {})", self.verbatim(key.span), self.ty(value)),
            TypeKind::Optional(inner) => format!("optional({})", self.ty(inner)),
            TypeKind::SparseTensor { elem, shape } => {
                format!("sparse_tensor({}{})", self.verbatim(elem.span), self.shape(shape))
            }
            TypeKind::Opaque { domain_or_name, name } => {
                let dotted: Vec<&str> = domain_or_name.iter().map(|n| self.verbatim(n.span)).collect();
                let name = name.as_ref().map_or(String::new(), |n| format!(", {}", self.verbatim(n.span)));
                format!("opaque({}{name})", dotted.join("."))
            }
        }
    }

    fn shape(&self, shape: &Option<Vec<Dim>>) -> String {
        let Some(dims) = shape else { return String::new() };
        let dims: Vec<&str> = dims
            .iter()
            .map(|d| match d {
                Dim::Unknown(_) => "?",
                Dim::Param(n) => self.verbatim(n.span),
                Dim::Value(l) => self.verbatim(l.span),
            })
            .collect();
        format!("[{}]", dims.join(", "))
    }
}

/// A function's header: flat when it fits.
const FUNCTION_HEADER: ListStyle = ListStyle { always_break: false, blank_lines: false, ..MODEL_HEADER };

/// A node's input list: parentheses, no empty lines kept.
const VALUES_BRACE_PAREN: ListStyle = ListStyle {
    open: "(",
    close: ")",
    separator: ",",
    always_break: false,
    blank_lines: false,
    space_before_close: false,
};

fn decl_start(d: &ValueDecl) -> u32 {
    match d {
        ValueDecl::Decl { annotations, span, .. } => start_with(annotations, *span),
        ValueDecl::Error(s) => s.start,
    }
}

fn attr_item_start(item: &AttrItem) -> u32 {
    match item {
        AttrItem::Attr(a) => start_with(&a.annotations, a.span),
        AttrItem::Error(s) => s.start,
    }
}

fn slot_span(s: &Slot) -> Span {
    match s {
        Slot::Name(n) => n.span,
        Slot::Empty(s) => *s,
    }
}

fn payload_span(p: &TensorPayload) -> Span {
    match p {
        TensorPayload::Values(_, s) | TensorPayload::External(_, s) => *s,
    }
}

#[cfg(test)]
mod tests;
