//! The syntax tree of the ONNX text language. Every node has its byte range; literals keep
//! their source text (numbers are converted, with range checks, when lowering to the IR).
//! Parts the parser could not read are `Error` nodes with the range they cover, so a tree
//! always exists, however broken the text.

/// A byte range in the source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }

    pub fn len(self) -> u32 {
        self.end - self.start
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}

/// A name as written: `text` is the name itself (a quoted name is unquoted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Name {
    pub text: String,
    pub quoted: bool,
    pub span: Span,
    /// The exact bytes of a name written as a byte string `b"…"` (it may not be UTF-8;
    /// `text` then holds a lossy rendering).
    pub bytes: Option<Vec<u8>>,
}

/// A literal token: kind and source text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Literal {
    pub kind: LiteralKind,
    pub text: String,
    pub span: Span,
}

/// What kind of literal a [`Literal`] is: the lexer's, which the number lists' fast path
/// ([`crate::numbers`]) gives too.
pub use crate::lexer::LiteralKind;

/// `#@ key: value, …`: fields of the next item that onnx's text cannot express.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    pub entries: Vec<AnnotationEntry>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AnnotationEntry {
    pub key: Name,
    pub value: AnnotationValue,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AnnotationValue {
    Literal(Literal),
    /// A bare word such as `unset`.
    Word(Name),
    /// `[a, b]` or `["k": v, …]`.
    List(Vec<AnnotationItem>, Span),
}

#[derive(Clone, Debug, PartialEq)]
pub enum AnnotationItem {
    Value(AnnotationValue),
    /// `key: value`; the key is a string, a byte string or a word such as `unset`.
    Pair(AnnotationValue, AnnotationValue),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// Annotations before the header: fields of the model.
    pub annotations: Vec<Annotation>,
    pub header: Option<Header>,
    pub graph: Option<Graph>,
    pub functions: Vec<Function>,
    pub span: Span,
}

/// `< key: value, … >`: the model header or a function header.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub entries: Vec<HeaderEntry>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum HeaderEntry {
    Entry { key: Name, value: HeaderValue, span: Span },
    Error(Span),
}

#[derive(Clone, Debug, PartialEq)]
pub enum HeaderValue {
    Literal(Literal),
    /// `[ "k": v, … ]`: opset imports (`v` an int) or metadata (`v` a string).
    Pairs(Vec<(Literal, Literal)>, Span),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    pub annotations: Vec<Annotation>,
    pub name: Name,
    /// `None` when the input list is left out (`g => (y) {}`).
    pub inputs: Option<Vec<ValueDecl>>,
    pub outputs: Vec<ValueDecl>,
    /// The `< … >` list of initializers and value infos.
    pub locals: Option<Vec<ValueDecl>>,
    pub nodes: Vec<NodeItem>,
    /// The same kind of list written after the nodes, inside the braces (our extension, so
    /// that a big model's text shows its structure before its weights); its entries come
    /// after those of `locals` in the model. With its span, `@initializers` to `>`.
    pub locals_after_nodes: Option<(Vec<ValueDecl>, Span)>,
    pub span: Span,
}

impl Graph {
    /// Every initializer and value info declaration, in model order: the list before the
    /// nodes, then the one after them.
    pub fn local_decls(&self) -> impl Iterator<Item = &ValueDecl> {
        self.locals.iter().flatten().chain(self.locals_after_nodes.iter().flat_map(|(decls, _)| decls))
    }
}

/// A value declaration: graph input/output, local value info, initializer, function I/O.
// Error items are rare; boxing every declaration to shrink them would cost an allocation each.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum ValueDecl {
    Decl {
        annotations: Vec<Annotation>,
        ty: Option<TypeExpr>,
        name: Name,
        /// `Some` when written with `=`: an initializer; the payload may be absent.
        init: Option<Option<TensorPayload>>,
        span: Span,
    },
    Error(Span),
}

// Error items are rare; boxing every node to shrink them would cost an allocation per node.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum NodeItem {
    Node(Node),
    Error(Span),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub annotations: Vec<Annotation>,
    /// `[label]`; `Some(None)` for `[]`.
    pub label: Option<Option<Name>>,
    pub outputs: Vec<Slot>,
    pub op: OpRef,
    pub attributes: Option<AttrList>,
    pub inputs: Vec<Slot>,
    pub inputs_span: Span,
    pub span: Span,
}

/// An element of a node's input or output list; an empty slot is an omitted optional.
#[derive(Clone, Debug, PartialEq)]
pub enum Slot {
    Name(Name),
    Empty(Span),
}

/// `domain.parts.Op:overload`.
#[derive(Clone, Debug, PartialEq)]
pub struct OpRef {
    /// Every dotted segment; the last one is the op type.
    pub segments: Vec<Name>,
    pub overload: Option<Name>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AttrList {
    pub attributes: Vec<AttrItem>,
    /// Written after the inputs rather than before.
    pub after_inputs: bool,
    pub span: Span,
}

#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum AttrItem {
    Attr(Attribute),
    Error(Span),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    pub annotations: Vec<Annotation>,
    pub name: Name,
    /// The `: type` annotation.
    pub ty: Option<Name>,
    /// `None` only for a function parameter without a default.
    pub value: Option<AttrValue>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    Literal(Literal),
    Ref(Name, Span),
    Type(TypeExpr),
    Tensor(TensorLit),
    Graph(Box<Graph>),
    List(Vec<AttrValue>, Span),
    Error(Span),
}

impl AttrValue {
    pub fn span(&self) -> Span {
        match self {
            AttrValue::Literal(l) => l.span,
            AttrValue::Ref(_, s) | AttrValue::List(_, s) | AttrValue::Error(s) => *s,
            AttrValue::Type(t) => t.span,
            AttrValue::Tensor(t) => t.span,
            AttrValue::Graph(g) => g.span,
        }
    }
}

/// A tensor value in an attribute: `float[2] name {1, 2}`.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorLit {
    pub annotations: Vec<Annotation>,
    pub ty: TypeExpr,
    pub name: Option<Name>,
    pub payload: Option<TensorPayload>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TensorPayload {
    /// `{ v, v, … }`
    Values(Values, Span),
    /// `[ "location": "…", … ]`
    External(Vec<(Literal, Literal)>, Span),
}

#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    /// `float`, `float[N, 3]`; `shape: None` is no bracket (rank 0), `Some(vec![])` is `[]`.
    Tensor {
        elem: Name,
        shape: Option<Vec<Dim>>,
    },
    Sequence(Box<TypeExpr>),
    Map(Name, Box<TypeExpr>),
    Optional(Box<TypeExpr>),
    SparseTensor {
        elem: Name,
        shape: Option<Vec<Dim>>,
    },
    Opaque {
        domain_or_name: Vec<Name>,
        name: Option<Name>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Dim {
    Unknown(Span),
    Param(Name),
    Value(Literal),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub annotations: Vec<Annotation>,
    pub header: Option<Header>,
    pub name: Name,
    /// `<a, b: float = 1.0>`: parameters, with or without defaults.
    pub params: Option<Vec<AttrItem>>,
    pub inputs: Vec<ValueDecl>,
    pub outputs: Vec<ValueDecl>,
    pub locals: Option<Vec<ValueDecl>>,
    pub nodes: Vec<NodeItem>,
    pub span: Span,
}

/// The literals of a `{ … }` tensor payload.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// Parsed one by one (strings, byte strings, an empty list, or a list with errors).
    Listed(Vec<Literal>),
    /// Only numbers: kept as their source text and read on demand, so a tensor of millions
    /// of values is one allocation, not millions.
    Run(NumberRun),
}

impl Values {
    pub fn len(&self) -> usize {
        match self {
            Values::Listed(list) => list.len(),
            Values::Run(run) => run.count as usize,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every value in order (`source` is the text that was parsed).
    pub fn iter<'a>(&'a self, source: &'a str) -> impl Iterator<Item = LiteralRef<'a>> {
        let (listed, run) = match self {
            Values::Listed(list) => (Some(list.iter().map(Literal::as_ref)), None),
            Values::Run(run) => (None, Some(run.iter(source))),
        };
        listed.into_iter().flatten().chain(run.into_iter().flatten())
    }
}

/// Numbers separated by commas, as written (comments and line breaks included). The tree
/// keeps only where they are: a big model's lists are most of its text, and copying them
/// would cost more than reading them.
#[derive(Clone, Debug, PartialEq)]
pub struct NumberRun {
    /// Where the first number starts in the source.
    pub start: u32,
    /// Where the last number ends in the source.
    pub end: u32,
    pub count: u32,
}

impl NumberRun {
    /// The numbers as written, from `source`, the text that was parsed.
    pub fn text<'s>(&self, source: &'s str) -> &'s str {
        source.get(self.start as usize..self.end as usize).unwrap_or("")
    }

    /// The numbers, with their kinds and ranges in the source.
    pub fn iter<'s>(&self, source: &'s str) -> impl Iterator<Item = LiteralRef<'s>> + 's {
        let (start, text) = (self.start as usize, self.text(source));
        crate::numbers::values(text).map(move |(kind, s, e)| LiteralRef {
            kind,
            text: &text[s..e],
            span: Span::new(start + s, start + e),
        })
    }

    /// Every value converted to `T` in one pass (on all cores for big lists); `None` when
    /// some value needs [`NumberRun::iter`] and the per-value path to report an error.
    pub fn read_all<T: crate::numbers::ListValue>(&self, source: &str) -> Option<Vec<T>> {
        crate::numbers::read_all(self.text(source), self.count as usize)
    }
}

/// A literal without owning its text (what [`Values::iter`] yields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiteralRef<'a> {
    pub kind: LiteralKind,
    /// As [`Literal::text`]: a string's unquoted value, other literals as written.
    pub text: &'a str,
    pub span: Span,
}

impl Literal {
    pub fn as_ref(&self) -> LiteralRef<'_> {
        LiteralRef { kind: self.kind, text: &self.text, span: self.span }
    }
}

impl<'a> From<&'a Literal> for LiteralRef<'a> {
    fn from(l: &'a Literal) -> Self {
        l.as_ref()
    }
}
