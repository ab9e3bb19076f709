//! Incremental reparsing: after an edit inside one node (or one declaration of the main
//! graph: an input, output, initializer or value info), only its new text is parsed, and it
//! is spliced into a copy of the previous tree whose later ranges are moved by the edit's
//! length change. The result is the tree a full parse of the new text gives
//! (the property test in `tests/incremental.rs` applies random edits both ways); whenever
//! that cannot be known from the node alone, [`reparse_model`] says so and the caller parses
//! the whole text.
//!
//! Why a node is enough: the grammar's statements are delimited by the tokens around them,
//! a node's first and last tokens (a name or bracket, then `)` or `>`) cannot grow into their
//! neighbours, and an edit strictly inside a node leaves those tokens and everything outside
//! in place. What a node's text means then depends on nothing else, as long as it reads
//! cleanly: error recovery does depend on context (an unclosed bracket swallows what
//! follows), so a previous tree with errors, or a new node text with any, falls back to the
//! full parse.

use crate::ast::*;
use crate::numbers::ReadFloats;
use crate::parser::{Parse, parse_function, parse_node_at_depth, parse_value_decl_at_depth};

/// One edit, in bytes of the previous text: `start..old_end` was replaced by `new_len` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edit {
    pub start: u32,
    pub old_end: u32,
    pub new_len: u32,
}

impl Edit {
    /// The smallest edit that turns `old` into `new`: their common start and common end left
    /// out. Full-document changes (what Helix sends) become the range that really changed.
    pub fn between(old: &str, new: &str) -> Edit {
        let (a, b) = (old.as_bytes(), new.as_bytes());
        let prefix = common_prefix(a, b);
        let limit = a.len().min(b.len()) - prefix;
        let suffix = common_suffix(&a[a.len() - limit..], &b[b.len() - limit..]);
        // Inside a UTF-8 character the bytes agree only partly: widen to whole characters
        // (a `&str` slice must start and end on one).
        let mut start = prefix;
        while start > 0 && !(old.is_char_boundary(start) && new.is_char_boundary(start)) {
            start -= 1;
        }
        let (mut old_end, mut new_end) = (a.len() - suffix, b.len() - suffix);
        while !(old.is_char_boundary(old_end) && new.is_char_boundary(new_end)) {
            old_end += 1;
            new_end += 1;
        }
        Edit { start: start as u32, old_end: old_end as u32, new_len: (new_end - start) as u32 }
    }

    /// The length change (new minus old).
    pub fn delta(self) -> i64 {
        i64::from(self.new_len) - i64::from(self.old_end - self.start)
    }

    /// Where an offset of the previous text is in the new one (offsets at or after the
    /// replaced range move by the length change; those before it stay).
    pub fn moved(self, at: u32) -> u32 {
        if at >= self.old_end { (i64::from(at) + self.delta()) as u32 } else { at }
    }

    /// Where the range `start..end` of the new text was in the previous one, when the edit
    /// left it alone (it lies wholly before or wholly after the inserted text).
    pub fn untouched_before(self, start: u32, end: u32) -> Option<u32> {
        let new_end = self.start + self.new_len;
        if end <= self.start {
            Some(start)
        } else if start >= new_end {
            Some((i64::from(start) - self.delta()) as u32)
        } else {
            None
        }
    }
}

/// Byte length of the common start, compared a block at a time (memcmp) before the last
/// block is searched byte by byte: a 70 MB document costs a few milliseconds.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let n = a.len().min(b.len());
    let mut at = 0;
    while at + BLOCK <= n && a[at..at + BLOCK] == b[at..at + BLOCK] {
        at += BLOCK;
    }
    at + a[at..n].iter().zip(&b[at..n]).take_while(|(x, y)| x == y).count()
}

/// Byte length of the common end of two slices of equal length.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut matched = 0;
    while matched + BLOCK <= n && a[n - matched - BLOCK..n - matched] == b[n - matched - BLOCK..n - matched] {
        matched += BLOCK;
    }
    matched + a[..n - matched].iter().rev().zip(b[..n - matched].iter().rev()).take_while(|(x, y)| x == y).count()
}

/// The parse of `new_source`, made from `previous` (the error-free tree of the text before
/// `edit`) by reparsing the one statement the edit falls strictly inside: the innermost
/// node, else a function, else a declaration of the main graph (a subgraph's declarations
/// are inside the node that holds it); `None` when the edit is inside none, or
/// the statement's new text does not read cleanly as one statement: the caller then parses
/// the whole text.
///
/// The float lists read while scanning ([`Parse::floats`]) hold only the new statement's:
/// the rest of the tree's lists are read again from the text when lowering.
pub fn reparse_model(previous: &Model, new_source: &str, edit: Edit) -> Option<Parse<Model>> {
    if edit.old_end < edit.start {
        return None;
    }
    if edit.old_end == edit.start && edit.new_len == 0 {
        // Nothing changed (a client may send the same text again).
        return Some(Parse { tree: Some(previous.clone()), errors: Vec::new(), floats: ReadFloats::default() });
    }
    if let Some((path, depth)) = innermost_node(previous, edit) {
        let old = node_at(previous, &path)?;
        let parse = |text: &str| parse_node_at_depth(text, depth);
        return splice(previous, old, new_source, edit, parse, |tree| node_at_mut(tree, &path));
    }
    let inside = |span: Span| span.start < edit.start && edit.old_end < span.end;
    if let Some(k) = previous.functions.iter().position(|f| inside(f.span)) {
        return splice(previous, &previous.functions[k], new_source, edit, parse_function, |tree| {
            tree.functions.get_mut(k)
        });
    }
    // A declaration of the main graph: an input, an output, an initializer or value info.
    let (list, index, depth) = innermost_declaration(previous, edit)?;
    let old = declarations(previous.graph.as_ref()?, list)?.get(index)?;
    let parse = |text: &str| parse_value_decl_at_depth(text, depth);
    splice(previous, old, new_source, edit, parse, |tree| declarations_mut(tree.graph.as_mut()?, list)?.get_mut(index))
}

/// A statement that can be read again alone: a node, a function, a value declaration.
trait Statement: Shift {
    /// Its range, without its annotations (`None` for an error item).
    fn span(&self) -> Option<Span>;
    /// Its annotations (`None` for an error item).
    fn annotations_mut(&mut self) -> Option<&mut Vec<Annotation>>;
}

impl Statement for Node {
    fn span(&self) -> Option<Span> {
        Some(self.span)
    }

    fn annotations_mut(&mut self) -> Option<&mut Vec<Annotation>> {
        Some(&mut self.annotations)
    }
}

impl Statement for Function {
    fn span(&self) -> Option<Span> {
        Some(self.span)
    }

    fn annotations_mut(&mut self) -> Option<&mut Vec<Annotation>> {
        Some(&mut self.annotations)
    }
}

impl Statement for ValueDecl {
    fn span(&self) -> Option<Span> {
        match self {
            ValueDecl::Decl { span, .. } => Some(*span),
            ValueDecl::Error(_) => None,
        }
    }

    fn annotations_mut(&mut self) -> Option<&mut Vec<Annotation>> {
        match self {
            ValueDecl::Decl { annotations, .. } => Some(annotations),
            ValueDecl::Error(_) => None,
        }
    }
}

/// The tree of `new_source`: a copy of `previous` moved by `edit`, with statement `old` (which
/// the edit falls strictly inside, and which `slot` finds in the copy) replaced by its new
/// text read with `parse`. `None` unless that text reads cleanly as exactly one statement.
fn splice<T: Statement>(
    previous: &Model,
    old: &T,
    new_source: &str,
    edit: Edit,
    parse: impl FnOnce(&str) -> Parse<T>,
    slot: impl FnOnce(&mut Model) -> Option<&mut T>,
) -> Option<Parse<Model>> {
    let (text, start) = new_text(old.span()?, new_source, edit)?;
    let parse = parse(text);
    let mut new = parse.tree?;
    // A clean parse that read the statement's whole text, and nothing before its first token.
    if !parse.errors.is_empty()
        || new.annotations_mut().is_none_or(|a| !a.is_empty())
        || new.span() != Some(Span::new(0, text.len()))
    {
        return None;
    }
    new.shift(&|at| at + start);
    let mut tree = moved_copy(previous, edit);
    let slot = slot(&mut tree)?;
    // The annotations were moved with the copy; the statement itself is replaced whole.
    if let (Some(new), Some(moved)) = (new.annotations_mut(), slot.annotations_mut()) {
        *new = std::mem::take(moved);
    }
    *slot = new;
    Some(Parse { tree: Some(tree), errors: Vec::new(), floats: moved_floats(parse.floats, start) })
}

/// The new text of a statement whose old range was `span` (the edit being inside it), and
/// where it starts.
fn new_text(span: Span, new_source: &str, edit: Edit) -> Option<(&str, u32)> {
    let new_end = u32::try_from(i64::from(span.end) + edit.delta()).ok()?;
    Some((new_source.get(span.start as usize..new_end as usize)?, span.start))
}

/// The float lists a statement's parse read, keyed by where they start in the whole text.
fn moved_floats(read: ReadFloats, start: u32) -> ReadFloats {
    let mut floats = ReadFloats::default();
    for (at, values) in read.into_entries() {
        floats.insert(at + start, values);
    }
    floats
}

/// The lists of declarations a graph has.
#[derive(Clone, Copy, Debug)]
enum Declarations {
    Inputs,
    Outputs,
    Locals,
    AfterNodes,
}

fn declarations(graph: &Graph, list: Declarations) -> Option<&Vec<ValueDecl>> {
    match list {
        Declarations::Inputs => graph.inputs.as_ref(),
        Declarations::Outputs => Some(&graph.outputs),
        Declarations::Locals => graph.locals.as_ref(),
        Declarations::AfterNodes => graph.locals_after_nodes.as_ref().map(|(decls, _)| decls),
    }
}

fn declarations_mut(graph: &mut Graph, list: Declarations) -> Option<&mut Vec<ValueDecl>> {
    match list {
        Declarations::Inputs => graph.inputs.as_mut(),
        Declarations::Outputs => Some(&mut graph.outputs),
        Declarations::Locals => graph.locals.as_mut(),
        Declarations::AfterNodes => graph.locals_after_nodes.as_mut().map(|(decls, _)| decls),
    }
}

/// The main graph's declaration that holds the edit strictly inside it, with the brackets
/// open where it starts: `(` or `<` around the lists before the body, `{` and `<` around
/// the list after the nodes.
fn innermost_declaration(model: &Model, edit: Edit) -> Option<(Declarations, usize, usize)> {
    let graph = model.graph.as_ref()?;
    let inside =
        |d: &ValueDecl| matches!(d, ValueDecl::Decl { span, .. } if span.start < edit.start && edit.old_end < span.end);
    [(Declarations::Inputs, 1), (Declarations::Outputs, 1), (Declarations::Locals, 1), (Declarations::AfterNodes, 2)]
        .into_iter()
        .find_map(|(list, depth)| Some((list, declarations(graph, list)?.iter().position(inside)?, depth)))
}

/// A copy of the previous tree with every range moved by the edit. The main graph's nodes,
/// most of a big text, are copied on all cores: copying 100,000 nodes (their names are
/// strings) was most of an incremental reparse.
fn moved_copy(previous: &Model, edit: Edit) -> Model {
    let moved = move |at| edit.moved(at);
    let mut tree = Model {
        annotations: previous.annotations.clone(),
        header: previous.header.clone(),
        graph: None,
        functions: previous.functions.clone(),
        span: previous.span,
    };
    tree.shift(&moved);
    tree.graph = previous.graph.as_ref().map(|g| {
        let mut copy = Graph {
            annotations: g.annotations.clone(),
            name: g.name.clone(),
            inputs: g.inputs.clone(),
            outputs: g.outputs.clone(),
            locals: g.locals.clone(),
            nodes: Vec::new(),
            locals_after_nodes: g.locals_after_nodes.clone(),
            span: g.span,
        };
        copy.shift(&moved);
        copy.nodes = moved_nodes(&g.nodes, &moved);
        copy
    });
    tree
}

/// Copies of `nodes` with their ranges moved, on every core when there are many.
fn moved_nodes(nodes: &[NodeItem], moved: &(dyn Fn(u32) -> u32 + Sync)) -> Vec<NodeItem> {
    onnx_threads::map_slice(nodes, 8192, |n| {
        let mut n = n.clone();
        n.shift(moved);
        n
    })
}

/// How to reach a node from the model: the graph (or function) holding the outermost
/// node, then for each level the node's index and, inside a subgraph attribute, which
/// attribute and which element of a list of graphs.
#[derive(Debug, Default)]
struct Path {
    /// `None`: the main graph; `Some(k)`: function `k`.
    root: Option<usize>,
    /// Node index in the current graph, then the subgraph holding the next level.
    steps: Vec<(usize, Option<Down>)>,
}

/// Which attribute of a node holds a subgraph, and which element of it when it is a list.
type Down = (usize, Option<usize>);

/// The innermost node that holds the edit strictly inside it (neither its first nor its
/// last byte touched), with the number of brackets open where it starts, for the nesting
/// limit to count as in a full parse.
fn innermost_node(model: &Model, edit: Edit) -> Option<(Path, usize)> {
    let inside = |span: Span| span.start < edit.start && edit.old_end < span.end;
    let (root, mut nodes) = if let Some(g) = model.graph.as_ref().filter(|g| inside(g.span)) {
        (None, &g.nodes)
    } else {
        let k = model.functions.iter().position(|f| inside(f.span))?;
        (Some(k), &model.functions[k].nodes)
    };
    let mut path = Path { root, steps: Vec::new() };
    // The graph's or function's `{`.
    let mut depth = 1;
    loop {
        let index = nodes.iter().position(|n| matches!(n, NodeItem::Node(n) if inside(n.span)))?;
        let NodeItem::Node(node) = &nodes[index] else { return None };
        // A subgraph in one of its attributes that holds the edit: go down into it.
        let deeper = node.attributes.as_ref().and_then(|list| {
            list.attributes.iter().enumerate().find_map(|(a, item)| match item {
                AttrItem::Attr(Attribute { value: Some(AttrValue::Graph(g)), .. }) if inside(g.span) => {
                    Some((a, None, &g.nodes, 2))
                }
                AttrItem::Attr(Attribute { value: Some(AttrValue::List(items, _)), .. }) => {
                    items.iter().enumerate().find_map(|(i, v)| match v {
                        AttrValue::Graph(g) if inside(g.span) => Some((a, Some(i), &g.nodes, 3)),
                        _ => None,
                    })
                }
                _ => None,
            })
        });
        match deeper {
            Some((attribute, element, inner, opened))
                if inner.iter().any(|n| matches!(n, NodeItem::Node(n) if inside(n.span))) =>
            {
                path.steps.push((index, Some((attribute, element))));
                nodes = inner;
                depth += opened;
            }
            _ => {
                path.steps.push((index, None));
                return Some((path, depth));
            }
        }
    }
}

fn graph_nodes(model: &Model, root: Option<usize>) -> Option<&Vec<NodeItem>> {
    match root {
        None => model.graph.as_ref().map(|g| &g.nodes),
        Some(k) => model.functions.get(k).map(|f| &f.nodes),
    }
}

fn subgraph(node: &Node, (attribute, element): Down) -> Option<&Graph> {
    let AttrItem::Attr(attr) = node.attributes.as_ref()?.attributes.get(attribute)? else { return None };
    match (attr.value.as_ref()?, element) {
        (AttrValue::Graph(g), None) => Some(g),
        (AttrValue::List(items, _), Some(i)) => match items.get(i)? {
            AttrValue::Graph(g) => Some(g),
            _ => None,
        },
        _ => None,
    }
}

fn node_at<'m>(model: &'m Model, path: &Path) -> Option<&'m Node> {
    let mut nodes = graph_nodes(model, path.root)?;
    for &(index, down) in &path.steps {
        let NodeItem::Node(node) = nodes.get(index)? else { return None };
        match down {
            None => return Some(node),
            Some(step) => nodes = &subgraph(node, step)?.nodes,
        }
    }
    None
}

fn node_at_mut<'m>(model: &'m mut Model, path: &Path) -> Option<&'m mut Node> {
    let mut nodes = match path.root {
        None => &mut model.graph.as_mut()?.nodes,
        Some(k) => &mut model.functions.get_mut(k)?.nodes,
    };
    for &(index, down) in &path.steps {
        let NodeItem::Node(node) = nodes.get_mut(index)? else { return None };
        let Some((attribute, element)) = down else { return Some(node) };
        let AttrItem::Attr(attr) = node.attributes.as_mut()?.attributes.get_mut(attribute)? else { return None };
        let graph = match (attr.value.as_mut()?, element) {
            (AttrValue::Graph(g), None) => g,
            (AttrValue::List(items, _), Some(i)) => match items.get_mut(i)? {
                AttrValue::Graph(g) => g,
                _ => return None,
            },
            _ => return None,
        };
        nodes = &mut graph.nodes;
    }
    None
}

/// Moving every byte offset a tree holds.
pub trait Shift {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32);
}

impl Shift for Span {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        self.start = f(self.start);
        self.end = f(self.end);
    }
}

impl<T: Shift> Shift for Vec<T> {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        for item in self {
            item.shift(f);
        }
    }
}

impl<T: Shift> Shift for Option<T> {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        if let Some(item) = self {
            item.shift(f);
        }
    }
}

impl<T: Shift> Shift for Box<T> {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        (**self).shift(f);
    }
}

impl<A: Shift, B: Shift> Shift for (A, B) {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        self.0.shift(f);
        self.1.shift(f);
    }
}

impl Shift for Name {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        self.span.shift(f);
    }
}

impl Shift for Literal {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        self.span.shift(f);
    }
}

impl Shift for Annotation {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        for entry in &mut self.entries {
            entry.key.shift(f);
            entry.value.shift(f);
            entry.span.shift(f);
        }
        self.span.shift(f);
    }
}

impl Shift for AnnotationValue {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        match self {
            AnnotationValue::Literal(l) => l.shift(f),
            AnnotationValue::Word(n) => n.shift(f),
            AnnotationValue::List(items, span) => {
                for item in items {
                    match item {
                        AnnotationItem::Value(v) => v.shift(f),
                        AnnotationItem::Pair(k, v) => {
                            k.shift(f);
                            v.shift(f);
                        }
                    }
                }
                span.shift(f);
            }
        }
    }
}

impl Shift for Model {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        self.annotations.shift(f);
        self.header.shift(f);
        self.graph.shift(f);
        self.functions.shift(f);
        self.span.shift(f);
    }
}

impl Shift for Header {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        for entry in &mut self.entries {
            match entry {
                HeaderEntry::Entry { key, value, span } => {
                    key.shift(f);
                    match value {
                        HeaderValue::Literal(l) => l.shift(f),
                        HeaderValue::Pairs(pairs, span) => {
                            pairs.shift(f);
                            span.shift(f);
                        }
                    }
                    span.shift(f);
                }
                HeaderEntry::Error(span) => span.shift(f),
            }
        }
        self.span.shift(f);
    }
}

impl Shift for Graph {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        self.annotations.shift(f);
        self.name.shift(f);
        self.inputs.shift(f);
        self.outputs.shift(f);
        self.locals.shift(f);
        self.nodes.shift(f);
        self.locals_after_nodes.shift(f);
        self.span.shift(f);
    }
}

impl Shift for ValueDecl {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        match self {
            ValueDecl::Decl { annotations, ty, name, init, span } => {
                annotations.shift(f);
                ty.shift(f);
                name.shift(f);
                if let Some(payload) = init {
                    payload.shift(f);
                }
                span.shift(f);
            }
            ValueDecl::Error(span) => span.shift(f),
        }
    }
}

impl Shift for NodeItem {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        match self {
            NodeItem::Node(node) => node.shift(f),
            NodeItem::Error(span) => span.shift(f),
        }
    }
}

impl Shift for Node {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        self.annotations.shift(f);
        if let Some(label) = &mut self.label {
            label.shift(f);
        }
        self.outputs.shift(f);
        self.op.segments.shift(f);
        self.op.overload.shift(f);
        self.op.span.shift(f);
        if let Some(list) = &mut self.attributes {
            list.attributes.shift(f);
            list.span.shift(f);
        }
        self.inputs.shift(f);
        self.inputs_span.shift(f);
        self.span.shift(f);
    }
}

impl Shift for Slot {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        match self {
            Slot::Name(n) => n.shift(f),
            Slot::Empty(span) => span.shift(f),
        }
    }
}

impl Shift for AttrItem {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        match self {
            AttrItem::Attr(a) => {
                a.annotations.shift(f);
                a.name.shift(f);
                a.ty.shift(f);
                a.value.shift(f);
                a.span.shift(f);
            }
            AttrItem::Error(span) => span.shift(f),
        }
    }
}

impl Shift for AttrValue {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        match self {
            AttrValue::Literal(l) => l.shift(f),
            AttrValue::Ref(n, span) => {
                n.shift(f);
                span.shift(f);
            }
            AttrValue::Type(t) => t.shift(f),
            AttrValue::Tensor(t) => {
                t.annotations.shift(f);
                t.ty.shift(f);
                t.name.shift(f);
                t.payload.shift(f);
                t.span.shift(f);
            }
            AttrValue::Graph(g) => g.shift(f),
            AttrValue::List(items, span) => {
                items.shift(f);
                span.shift(f);
            }
            AttrValue::Error(span) => span.shift(f),
        }
    }
}

impl Shift for TensorPayload {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        match self {
            TensorPayload::Values(values, span) => {
                match values {
                    Values::Listed(list) => list.shift(f),
                    Values::Run(run) => {
                        run.start = f(run.start);
                        run.end = f(run.end);
                    }
                }
                span.shift(f);
            }
            TensorPayload::External(pairs, span) => {
                pairs.shift(f);
                span.shift(f);
            }
        }
    }
}

impl Shift for TypeExpr {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        match &mut self.kind {
            TypeKind::Tensor { elem, shape } | TypeKind::SparseTensor { elem, shape } => {
                elem.shift(f);
                shape.shift(f);
            }
            TypeKind::Sequence(t) | TypeKind::Optional(t) => t.shift(f),
            TypeKind::Map(key, value) => {
                key.shift(f);
                value.shift(f);
            }
            TypeKind::Opaque { domain_or_name, name } => {
                domain_or_name.shift(f);
                name.shift(f);
            }
        }
        self.span.shift(f);
    }
}

impl Shift for Dim {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        match self {
            Dim::Unknown(span) => span.shift(f),
            Dim::Param(n) => n.shift(f),
            Dim::Value(l) => l.shift(f),
        }
    }
}

impl Shift for Function {
    fn shift(&mut self, f: &dyn Fn(u32) -> u32) {
        self.annotations.shift(f);
        self.header.shift(f);
        self.name.shift(f);
        self.params.shift(f);
        self.inputs.shift(f);
        self.outputs.shift(f);
        self.locals.shift(f);
        self.nodes.shift(f);
        self.span.shift(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_edit_leaves_out_the_common_start_and_end() {
        assert_eq!(Edit::between("abcdef", "abXdef"), Edit { start: 2, old_end: 3, new_len: 1 });
        assert_eq!(Edit::between("abc", "abc"), Edit { start: 3, old_end: 3, new_len: 0 });
        assert_eq!(Edit::between("aa", "aaa"), Edit { start: 2, old_end: 2, new_len: 1 });
        assert_eq!(Edit::between("abc", ""), Edit { start: 0, old_end: 3, new_len: 0 });
        // 'é' and 'è' share their first byte: the edit covers the whole character.
        assert_eq!(Edit::between("xéy", "xèy"), Edit { start: 1, old_end: 3, new_len: 2 });
        let long = "n".repeat(10_000);
        let edited = format!("{}Q{}", &long[..5000], &long[5000..]);
        let edit = Edit::between(&long, &edited);
        assert_eq!(edit, Edit { start: 5000, old_end: 5000, new_len: 1 });
    }
}
