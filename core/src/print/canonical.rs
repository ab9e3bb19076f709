//! The canonical style: our text, written so that it reads back to exactly the same model
//! (the same protobuf bytes). What onnx's text cannot say goes into `#@` annotations, which
//! onnx reads as comments, so a printed file still loads in onnx with the same meaning for
//! everything onnx can express.
//!
//! Layout: two-space indentation; initializers and value infos in the graph's `< … >` list
//! (initializers first, in order), never as input defaults, so their order is kept; lists on
//! one line when they fit in 100 columns and need no annotation, one item per line otherwise;
//! attributes before the inputs unless one holds a graph.
//!
//! The printer is total: every model that decodes prints. Fields left unset where text
//! would write a value (an opset import without domain, a value without a name, a model
//! without a graph) are written as the value onnx's parser would make plus an annotation
//! saying `unset`. A few rare constructs have no readable text form yet (sparse tensors,
//! training info, device configurations, quantization annotations): they are embedded as
//! protobuf bytes in annotations (`#@ training_info: b"…"`), exact but opaque. So is any
//! single type, tensor or attribute whose fields the readable form cannot say (fields that
//! disagree with their type, NaN payloads, unknown element types): the readable part is then
//! a placeholder and the annotation (`type`, `tensor_proto`, `proto`) holds the exact part.
//! Inside the printer, [`Unsupported`] is how a readable form says it cannot hold a part, so
//! that the caller embeds that part instead; it never leaves this module.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::LazyLock;

use onnx_syntax::format::{Fragment, format_fragment};

use super::bulk;
use super::number::{f32_text, push_f32, push_f64, push_int};
use super::{is_identifier, quote};
use crate::ir::tensor_data;
use crate::ir::*;
use crate::lower::to_proto::embedded;

/// Why the readable form cannot hold a part (the caller then embeds the part as protobuf).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Unsupported(String);

type Out<T = ()> = Result<T, Unsupported>;

fn unsupported<T>(what: impl Into<String>) -> Out<T> {
    Err(Unsupported(what.into()))
}

const WIDTH: usize = 100;

/// The operator written for a node whose op_type the text cannot say (absent, not UTF-8,
/// not an identifier); an `op_type` annotation holds the real one.
const OP_PLACEHOLDER: &str = "_";

/// Prints a model in the canonical style. Every model prints, and reads back to the same
/// model (see the module comment for how unusual fields are written).
pub fn model(m: &Model) -> String {
    let mut p = Printer::new(m, super::output_for(m), &INLINE, None);
    p.model();
    p.out
}

/// Where a graph's `< … >` list goes and what is said about tensors kept elsewhere.
#[derive(Debug, Default)]
pub struct Layout {
    /// Every graph's initializers and value infos after its nodes, as `@initializers < … >`
    /// (our extension, which onnx's parser does not read), so that the text of a big model
    /// shows its structure first. Otherwise before the nodes, where onnx writes them.
    pub initializers_after_nodes: bool,
    /// A comment line before a tensor's declaration, for tensors whose numbers the text does
    /// not hold (a size and statistics of the values, see [`super::digest`]).
    pub digests: HashMap<TensorId, String>,
}

/// The layout of [`model`]: onnx's placement, every number in the text.
static INLINE: LazyLock<Layout> = LazyLock::new(Layout::default);

/// One node as its statement in the canonical text (subgraphs included, two spaces of
/// indentation), as it would appear inside its graph: for showing a node on its own.
pub fn node(m: &Model, id: NodeId) -> String {
    let mut p = Printer::new(m, String::new(), &INLINE, None);
    p.statement(id);
    p.out
}

/// [`model`], written to `sink` as it is printed: the text of a big model (hundreds of
/// megabytes of numbers) is never whole in memory, only the text of one tensor at a time.
/// The bytes are exactly those [`model`] returns.
pub fn write_model(m: &Model, sink: &mut dyn std::io::Write) -> std::io::Result<()> {
    write_model_with(m, &INLINE, sink)
}

/// [`write_model`] in a chosen [`Layout`].
pub fn write_model_with(m: &Model, layout: &Layout, sink: &mut dyn std::io::Write) -> std::io::Result<()> {
    let sink = Sink { out: sink, error: None };
    let mut p = Printer::new(m, String::new(), layout, Some(sink));
    p.model();
    let (rest, sink) = (p.out, p.sink);
    match sink {
        Some(mut sink) => {
            sink.write(&rest);
            sink.error.map_or(Ok(()), Err)
        }
        None => Ok(()),
    }
}

/// Where a streaming printer writes; the first error is kept and later writes are skipped.
struct Sink<'w> {
    out: &'w mut dyn std::io::Write,
    error: Option<std::io::Error>,
}

impl Sink<'_> {
    fn write(&mut self, text: &str) {
        if self.error.is_none()
            && let Err(e) = self.out.write_all(text.as_bytes())
        {
            self.error = Some(e);
        }
    }
}

/// Text held back before it is written to the sink (whole lines).
const DRAIN_AT: usize = 1 << 20;

struct Printer<'m, 's> {
    m: &'m Model,
    out: String,
    /// Nodes without a written domain leave it unset (`#@ node_domain: unset`).
    domain_unset_default: bool,
    /// Where finished lines go when streaming ([`write_model`]).
    sink: Option<Sink<'s>>,
    /// While a subgraph is printed into a buffer of its own, nothing may be written out.
    capturing: usize,
    layout: &'m Layout,
}

impl<'m, 's> Printer<'m, 's> {
    fn new(m: &'m Model, out: String, layout: &'m Layout, sink: Option<Sink<'s>>) -> Self {
        Printer { m, out, domain_unset_default: false, sink, capturing: 0, layout }
    }
}

/// A name as text; names that are not UTF-8 have no text form yet.
fn utf8(s: &Str, what: &str) -> Out<String> {
    match s.as_str() {
        Some(t) => Ok(t.to_owned()),
        None => unsupported(format!("a {what} that is not valid UTF-8")),
    }
}

/// A name, bare when it is an identifier, quoted otherwise, and a byte string `b"…"` when
/// it is not UTF-8.
fn name(s: &Str) -> String {
    let Some(text) = s.as_str() else { return onnx_syntax::lexer::escape_bytes(s.as_bytes()) };
    if is_identifier(text.as_bytes()) {
        text.to_owned()
    } else {
        let mut q = String::new();
        quote(&mut q, text);
        q
    }
}

/// A name that must not be read as a keyword where a type or number may start.
fn plain_name(s: &Str) -> String {
    let Some(text) = s.as_str() else { return name(s) };
    let word = onnx_syntax::lexer::classify_word(text);
    if is_identifier(text.as_bytes()) && word == onnx_syntax::lexer::WordClass::Plain {
        text.to_owned()
    } else {
        let mut q = String::new();
        quote(&mut q, text);
        q
    }
}

/// An identifier that reads like `s` (other characters become `_`), for a placeholder where
/// onnx's parser takes only an identifier and an annotation keeps the real name.
fn identifier_like(s: &Str) -> String {
    let mut text: String = String::from_utf8_lossy(s.as_bytes())
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        || onnx_syntax::lexer::classify_word(&text) != onnx_syntax::lexer::WordClass::Plain
    {
        text.insert(0, '_');
    }
    text
}

/// A string value: quoted, or a byte string when it is not UTF-8 or holds control
/// characters other than line breaks and tabs (which editors would not keep intact).
fn string(s: &Str) -> String {
    match s.as_str() {
        Some(t) if !t.chars().any(|c| c.is_control() && c != '\n' && c != '\t') => {
            let mut q = String::new();
            quote(&mut q, t);
            q
        }
        _ => onnx_syntax::lexer::escape_bytes(s.as_bytes()),
    }
}

/// A text inside an annotation: a single-line string, or a byte string when it has line
/// breaks, quotes or backslashes the annotation line cannot hold otherwise.
fn annotation_text(s: &Str) -> String {
    match s.as_str() {
        Some(t) if !t.contains(['\n', '\r']) => {
            let mut q = String::new();
            quote(&mut q, t);
            q
        }
        _ => onnx_syntax::lexer::escape_bytes(s.as_bytes()),
    }
}

/// `["key": "value", …]`; a key or value that is not set is the word `unset`.
fn annotation_pairs(list: &[StringPair]) -> String {
    let side = |s: &Option<Str>| s.as_ref().map_or_else(|| "unset".to_owned(), annotation_text);
    let items: Vec<String> = list.iter().map(|p| format!("{}: {}", side(&p.key), side(&p.value))).collect();
    format!("[{}]", items.join(", "))
}

/// The indices of the opset imports whose domain, and whose version, are not set, as the
/// annotation entries that say so (the header writes `""` and `0` for them, as onnx's
/// parser would read).
fn unset_opset_notes(list: &[OpsetImport], notes: &mut Notes) {
    let indices = |unset: &dyn Fn(&OpsetImport) -> bool| -> Vec<String> {
        list.iter().enumerate().filter(|(_, o)| unset(o)).map(|(i, _)| i.to_string()).collect()
    };
    let domains = indices(&|o| o.domain.is_none());
    if !domains.is_empty() {
        notes.raw(format!("opset_unset_domain: [{}]", domains.join(", ")));
    }
    let versions = indices(&|o| o.version.is_none());
    if !versions.is_empty() {
        notes.raw(format!("opset_unset_version: [{}]", versions.join(", ")));
    }
}

/// `"domain" : version, …` as the header writes them.
fn opset_list(list: &[OpsetImport]) -> String {
    let items: Vec<String> = list
        .iter()
        .map(|o| {
            format!("{} : {}", o.domain.as_ref().map_or_else(|| "\"\"".to_owned(), string), o.version.unwrap_or(0))
        })
        .collect();
    items.join(", ")
}

/// Collects `key: value` annotation entries for one item.
#[derive(Default)]
struct Notes(Vec<String>);

impl Notes {
    fn text(&mut self, key: &str, value: Option<&Str>) {
        if let Some(v) = value {
            self.0.push(format!("{key}: {}", annotation_text(v)));
        }
    }

    fn pairs(&mut self, key: &str, list: &[StringPair]) {
        if !list.is_empty() {
            self.0.push(format!("{key}: {}", annotation_pairs(list)));
        }
    }

    fn raw(&mut self, entry: String) {
        self.0.push(entry);
    }

    /// The annotation line(s) at `indent`, or nothing.
    fn lines(&self, indent: usize) -> String {
        if self.0.is_empty() { String::new() } else { format!("{}#@ {}\n", " ".repeat(indent), self.0.join(", ")) }
    }
}

impl Printer<'_, '_> {
    fn model(&mut self) {
        let m = self.m;
        // The domain most nodes have decides the default, so few nodes need an annotation.
        let unset = m.nodes.iter().filter(|(_, n)| n.domain.is_none()).count();
        self.domain_unset_default = unset * 2 > m.nodes.len();
        let mut notes = Notes::default();
        if self.domain_unset_default {
            notes.raw("node_domain: unset".into());
        }
        if m.graph.is_none() {
            notes.raw("graph: unset".into());
        }
        unset_opset_notes(&m.opset_import, &mut notes);
        // Metadata the header cannot write (an entry without key or value) goes whole into
        // an annotation, so its order is kept.
        let metadata_in_header = m.metadata_props.iter().all(|p| p.key.is_some() && p.value.is_some());
        if !metadata_in_header {
            notes.pairs("metadata_props", &m.metadata_props);
        }
        self.out.push_str(&notes.lines(0));
        // Rare model parts without a text form of their own yet, embedded as protobuf.
        for c in &m.configuration {
            let _ = writeln!(self.out, "#@ configuration: {}", embed(&embedded::device_configuration(c)));
        }
        for t in &m.training_info {
            let _ = writeln!(self.out, "#@ training_info: {}", embed(&embedded::training_info(m, t)));
        }
        let mut entries = Vec::new();
        if let Some(v) = m.ir_version {
            entries.push(format!("ir_version: {v}"));
        }
        entries.push(format!("opset_import: [{}]", opset_list(&m.opset_import)));
        for (key, value) in
            [("producer_name", &m.producer_name), ("producer_version", &m.producer_version), ("domain", &m.domain)]
        {
            if let Some(v) = value {
                entries.push(format!("{key}: {}", string(v)));
            }
        }
        if let Some(v) = m.model_version {
            entries.push(format!("model_version: {v}"));
        }
        if let Some(v) = &m.doc_string {
            entries.push(format!("doc_string: {}", string(v)));
        }
        if !m.metadata_props.is_empty() && metadata_in_header {
            let items: Vec<String> = m
                .metadata_props
                .iter()
                .filter_map(|p| Some(format!("{}: {}", string(p.key.as_ref()?), string(p.value.as_ref()?))))
                .collect();
            entries.push(format!("metadata_props: [{}]", items.join(", ")));
        }
        let body: Vec<String> = entries.iter().map(|e| format!("  {e}")).collect();
        let header = format!("<\n{}\n>", body.join(",\n"));
        self.out.push_str(&relayout(Fragment::ModelHeader, header, 0));
        self.out.push('\n');
        match m.graph {
            Some(graph) => self.graph(graph, 0, true),
            // The text needs a graph; `graph: unset` above says this one is not the model's.
            None => self.out.push_str("\"\" () => () {\n}"),
        }
        self.out.push('\n');
        for &f in &m.functions {
            self.out.push('\n');
            self.function(f);
        }
    }

    /// A graph at `indent`; `top` graphs may take a quoted name that is a keyword.
    fn graph(&mut self, id: GraphId, indent: usize, top: bool) {
        let g = &self.m.graphs[id];
        let mut notes = Notes::default();
        notes.text("doc_string", g.doc_string.as_ref());
        notes.pairs("metadata_props", &g.metadata_props);
        for t in &g.sparse_initializers {
            notes.raw(format!("sparse_initializer: {}", embed(&embedded::sparse_tensor(self.m, t))));
        }
        for a in &g.quantization_annotation {
            notes.raw(format!("quantization_annotation: {}", embed(&embedded::tensor_annotation(a))));
        }
        let graph_name = match &g.name {
            Some(n) if top => name(n),
            Some(n) if n.as_str().is_some_and(|t| plain_name(n) == t) => plain_name(n),
            // onnx's parser takes only a plain identifier for a subgraph: a name like
            // `p2o.paddle.loop.0` is written as `p2o_paddle_loop_0` and kept in the annotation.
            Some(n) => {
                notes.text("name", Some(n));
                identifier_like(n)
            }
            None => {
                notes.raw("name: unset".into());
                "\"\"".into()
            }
        };
        if !notes.0.is_empty() {
            // Annotations of a subgraph follow the `=` of its attribute on their own line.
            if !top {
                self.out.push('\n');
            }
            self.out.push_str(&notes.lines(indent));
            if !top {
                self.out.push_str(&" ".repeat(indent));
            }
        }
        self.out.push_str(&graph_name);
        self.out.push(' ');
        let inputs: Vec<String> = g.inputs.iter().map(|v| self.value_info(v, indent + 2)).collect();
        let outputs: Vec<String> = g.outputs.iter().map(|v| self.value_info(v, indent + 2)).collect();
        self.list("(", ")", &inputs, indent);
        self.out.push_str(" => ");
        self.list("(", ")", &outputs, indent);
        let locals = g.initializers.len() + g.value_info.len();
        let after_nodes = self.layout.initializers_after_nodes;
        if locals > 0 && !after_nodes {
            self.out.push(' ');
            self.locals(id, indent);
        }
        self.out.push_str(" {\n");
        for &n in &g.nodes {
            if top {
                self.statement(n)
            } else {
                self.node(n, indent + 2)
            }
            self.drain();
        }
        if locals > 0 && after_nodes {
            if !g.nodes.is_empty() {
                self.out.push('\n');
            }
            self.out.push_str(&" ".repeat(indent + 2));
            self.out.push_str("@initializers ");
            self.locals(id, indent + 2);
            self.out.push('\n');
        }
        self.out.push_str(&" ".repeat(indent));
        self.out.push('}');
    }

    /// A graph's `< … >` list (initializers first, then value infos) for a list whose first
    /// line is indented by `indent`.
    fn locals(&mut self, id: GraphId, indent: usize) {
        let g = &self.m.graphs[id];
        let initializers = g.initializers.len();
        self.list_with("<", ">", initializers + g.value_info.len(), indent, |p, i| {
            Cow::Owned(match g.initializers.get(i) {
                Some(&t) => p.initializer_with_digest(t, indent + 2),
                None => p.value_info(&g.value_info[i - initializers], indent + 2),
            })
        });
    }

    /// An initializer, after a comment line with its digest if the layout has one for it.
    fn initializer_with_digest(&self, id: TensorId, indent: usize) -> String {
        let item = self.initializer(&self.m.tensors[id], indent);
        match self.layout.digests.get(&id) {
            Some(digest) => {
                // Laid out here, without the comment, which the formatter would move into the
                // declaration's brackets.
                let first = if item.starts_with(' ') { 0 } else { indent };
                let item = if too_wide(&item, first) { relayout(Fragment::Declaration, item, indent) } else { item };
                let pad = " ".repeat(indent);
                let item = if item.starts_with(' ') { item } else { format!("{pad}{item}") };
                format!("{pad}# {digest}\n{item}")
            }
            None => item,
        }
    }

    /// `open items close` on one line when it fits and no item carries an annotation line,
    /// one item per line otherwise.
    fn list(&mut self, open: &str, close: &str, items: &[String], indent: usize) {
        self.list_with(open, close, items.len(), indent, |_, i| Cow::Borrowed(items[i].as_str()));
    }

    /// [`Self::list`] of `count` items made by `make` one at a time, as they are written: an
    /// initializer's text can be a hundred megabytes, and only one is held at once. Items are
    /// made ahead only while the list might still fit on one line.
    fn list_with<'i>(
        &mut self,
        open: &str,
        close: &str,
        count: usize,
        indent: usize,
        make: impl Fn(&Self, usize) -> Cow<'i, str>,
    ) {
        let line_start = self.out.rfind('\n').map_or(0, |i| i + 1);
        let current = width(&self.out[line_start..]);
        let mut made = Vec::new();
        let mut flat_len = 2 * count.saturating_sub(1);
        let mut fits = true;
        while made.len() < count {
            let item = make(self, made.len());
            // Columns, as the formatter counts them (a character takes at most four bytes: a
            // longer item is wider than any line).
            flat_len += if item.len() > 4 * WIDTH { item.len() } else { width(&item) };
            // A streamed tensor's values are many lines, whatever its placeholder's length.
            fits = current + flat_len + 2 <= WIDTH && !item.contains('\n') && !item.contains(STREAM_MARK);
            made.push(item);
            if !fits {
                break;
            }
        }
        if fits {
            let flat = made.join(", ");
            // `w =` (an initializer without data) before `>` would read as `=>`.
            let space = if flat.ends_with('=') { " " } else { "" };
            let _ = write!(self.out, "{open}{flat}{space}{close}");
            return;
        }
        self.out.push_str(open);
        self.out.push('\n');
        let ahead = made.len();
        for (i, item) in made.into_iter().enumerate() {
            self.list_item(&item, indent, i + 1 < count);
        }
        for i in ahead..count {
            let item = make(self, i);
            self.list_item(&item, indent, i + 1 < count);
        }
        self.out.push_str(&" ".repeat(indent));
        self.out.push_str(close);
    }

    /// One item of a list written one item per line.
    fn list_item(&mut self, item: &str, indent: usize, comma: bool) {
        // A declaration too wide for its line (a long name with its value) is laid out by
        // the formatter.
        let relaid;
        // An item with annotation lines starts with its indentation; others get it here.
        let first = if item.starts_with(' ') { 0 } else { indent + 2 };
        let item = if too_wide(item, first) {
            relaid = relayout(Fragment::Declaration, item.to_owned(), indent + 2);
            relaid.as_str()
        } else {
            item
        };
        if !item.starts_with(' ') {
            self.out.push_str(&" ".repeat(indent + 2));
        }
        let m = self.m;
        match self.sink.as_mut() {
            // A big item goes straight out, after what is before it on its line; a tensor
            // left to stream is printed a chunk at a time where its marker stands.
            Some(sink) if self.capturing == 0 && (item.len() >= DRAIN_AT || item.contains(STREAM_MARK)) => {
                sink.write(&self.out);
                self.out.clear();
                let mut parts = item.split(STREAM_MARK);
                sink.write(parts.next().unwrap_or_default());
                while let (Some(marker), Some(after)) = (parts.next(), parts.next()) {
                    stream_values(m, marker, sink);
                    sink.write(after);
                }
            }
            _ => self.out.push_str(item),
        }
        if comma {
            self.out.push(',');
        }
        self.out.push('\n');
        self.drain();
    }

    /// Whether a tensor's values are left to [`stream_values`]: when streaming at the top
    /// level, for a big tensor whose every value reads back exactly.
    fn streams(&self, t: &Tensor, dt: DataType) -> bool {
        self.sink.is_some()
            && self.capturing == 0
            && stream_source(t, dt).is_some_and(|(_, count)| count >= STREAM_FROM)
    }

    /// When streaming, writes the finished lines held once there are enough of them; the
    /// current line stays, so that layout can still measure it.
    fn drain(&mut self) {
        if self.capturing > 0 || self.out.len() < DRAIN_AT {
            return;
        }
        let Some(sink) = self.sink.as_mut() else { return };
        let Some(last_break) = self.out.rfind('\n') else { return };
        sink.write(&self.out[..=last_break]);
        self.out.drain(..=last_break);
    }

    /// `type name`, with any annotation line before it (then the item starts with the
    /// indentation and holds a line break).
    fn value_info(&self, v: &ValueInfo, indent: usize) -> String {
        let mut notes = Notes::default();
        let n = match &v.name {
            Some(n) => n.clone(),
            None => {
                notes.raw("name: unset".into());
                Str::default()
            }
        };
        notes.text("doc_string", v.doc_string.as_ref());
        notes.pairs("metadata_props", &v.metadata_props);
        let decl = match &v.ty {
            Some(ty) => {
                let mut type_notes = Notes::default();
                type_notes.text("denotation", ty.denotation.as_deref());
                let plain = dim_denotations(ty, &mut type_notes);
                match self.ty(&plain) {
                    Ok(text) => {
                        notes.0.extend(type_notes.0);
                        format!("{text} {}", name(&n))
                    }
                    // A type the text cannot write goes whole into the annotation; the
                    // declaration itself is then untyped.
                    Err(_) => {
                        notes.raw(format!("type: {}", embed(&embedded::ty(ty))));
                        plain_name(&n)
                    }
                }
            }
            None => plain_name(&n),
        };
        with_notes(&notes, decl, indent)
    }

    fn ty(&self, t: &Type) -> Out<String> {
        Ok(match &t.value {
            None => return unsupported("a type with no case set"),
            Some(TypeValue::Tensor(t)) => self.tensor_type(t)?,
            Some(TypeValue::SparseTensor(t)) => format!("sparse_tensor({})", self.tensor_type(t)?),
            Some(TypeValue::Sequence(Some(e))) => format!("seq({})", self.nested(e)?),
            Some(TypeValue::Optional(Some(e))) => format!("optional({})", self.nested(e)?),
            Some(TypeValue::Map { key_type: Some(k), value_type: Some(v) }) => {
                format!("map({}, {})", elem(*k)?, self.nested(v)?)
            }
            Some(TypeValue::Sequence(None) | TypeValue::Optional(None) | TypeValue::Map { .. }) => {
                return unsupported("a sequence, optional or map type without its element type");
            }
            Some(TypeValue::Opaque { domain, name: n }) => match (domain, n) {
                (None, None) => "opaque()".into(),
                (None, Some(n)) => format!("opaque({})", dotted(n)?),
                (Some(d), Some(n)) if is_identifier(n.as_bytes()) => {
                    format!("opaque({}, {})", dotted(d)?, utf8(n, "name")?)
                }
                _ => return unsupported("this opaque type"),
            },
        })
    }

    fn nested(&self, t: &Type) -> Out<String> {
        if t.denotation.is_some() {
            return unsupported("a denotation on a nested type");
        }
        self.ty(t)
    }

    fn tensor_type(&self, t: &TensorType) -> Out<String> {
        let mut s = elem(t.elem_type.ok_or_else(|| Unsupported("a tensor type without element type".into()))?)?;
        match &t.shape {
            None => s.push_str("[]"),
            Some(shape) if shape.dims.is_empty() => {}
            Some(shape) => {
                let mut dims = Vec::new();
                for d in &shape.dims {
                    if d.denotation.is_some() {
                        return unsupported("a dimension denotation");
                    }
                    dims.push(match &d.value {
                        Some(DimValue::Value(v)) => v.to_string(),
                        Some(DimValue::Param(p)) => name(p),
                        None => "?".into(),
                    });
                }
                let _ = write!(s, "[{}]", dims.join(", "));
            }
        }
        Ok(s)
    }

    fn initializer(&self, t: &Tensor, indent: usize) -> String {
        let mut notes = Notes::default();
        let n = match &t.name {
            Some(n) => n.clone(),
            None => {
                notes.raw("tensor_name: unset".into());
                Str::default()
            }
        };
        let (ty, payload) = self.tensor_or_embedded(t, &mut notes, indent);
        let head = format!("{ty} {} =", name(&n));
        // The payload can be a hundred megabytes: put the head in front of it in place
        // rather than copying it into a new string.
        let item = match payload {
            Some(payload) => {
                // The declaration starts at `indent`, after its annotation lines if any.
                let mut values = payload.at(indent + width(&head) + 1, indent);
                values.insert_str(0, &format!("{head} "));
                values
            }
            None => head,
        };
        with_notes(&notes, item, indent)
    }

    /// A tensor's type and payload text, or, when the text cannot say all of its fields, a
    /// `tensor_proto` annotation holding it whole and a placeholder type (its element type
    /// where that is known) without payload.
    fn tensor_or_embedded(&self, t: &Tensor, notes: &mut Notes, indent: usize) -> (String, Option<Payload>) {
        let mut own = Notes::default();
        match self.tensor_parts(t, &mut own, indent) {
            Ok(parts) => {
                notes.0.extend(own.0);
                parts
            }
            Err(_) => {
                notes.0.retain(|n| n != "tensor_name: unset");
                notes.raw(format!("tensor_proto: {}", embed(&embedded::tensor(t))));
                let placeholder = t
                    .data_type
                    .and_then(DataType::from_code)
                    .filter(|&dt| dt != DataType::Undefined)
                    .map_or("float", DataType::name);
                (placeholder.to_owned(), None)
            }
        }
    }

    /// A tensor's type and payload, with its extra fields as annotations.
    fn tensor_parts(&self, t: &Tensor, notes: &mut Notes, indent: usize) -> Out<(String, Option<Payload>)> {
        let code = t.data_type.ok_or_else(|| Unsupported("a tensor without data type".into()))?;
        let dt = DataType::from_code(code).ok_or_else(|| Unsupported(format!("data type {code}")))?;
        if dt == DataType::Undefined {
            return unsupported("a tensor of undefined type");
        }
        let ty = if t.dims.is_empty() {
            dt.name().to_owned()
        } else {
            format!("{}[{}]", dt.name(), t.dims.iter().map(i64::to_string).collect::<Vec<_>>().join(", "))
        };
        notes.text("tensor_doc_string", t.doc_string.as_ref());
        notes.pairs("tensor_metadata_props", &t.metadata_props);
        match &t.segment {
            None => {}
            Some(Segment { begin: Some(b), end: Some(e) }) => notes.raw(format!("segment: [{b}, {e}]")),
            Some(_) => return unsupported("a tensor segment without begin or end"),
        }
        let typed_fields = [
            !t.float_data.is_empty(),
            !t.int32_data.is_empty(),
            !t.string_data.is_empty(),
            !t.int64_data.is_empty(),
            !t.double_data.is_empty(),
            !t.uint64_data.is_empty(),
        ]
        .iter()
        .filter(|&&b| b)
        .count();
        if t.is_external() || !t.external_data.is_empty() {
            if !t.is_external() || typed_fields > 0 || t.raw_data.is_some() {
                return unsupported("external data references mixed with other data");
            }
            // On a reference, where the values go once its bytes are read in.
            if t.typed_once_embedded {
                notes.raw("storage: typed".into());
            }
            // On a reference, the data_location the tensor gets back once its bytes are read in.
            match t.data_location_once_embedded {
                None => {}
                Some(0) => notes.raw("data_location: default".into()),
                Some(other) => notes.raw(format!("data_location: {other}")),
            }
            return Ok((ty, Some(Payload::Text(format!("[{}]", external_pairs(&t.external_data)?)))));
        }
        // Set but not external: PyTorch's dynamo exporter writes DEFAULT (0) explicitly.
        match t.data_location {
            None => {}
            Some(0) => notes.raw("data_location: default".into()),
            Some(other) => notes.raw(format!("data_location: {other}")),
        }
        if let Some(raw) = &t.raw_data {
            if typed_fields > 0 {
                return unsupported("a tensor with both raw_data and typed values");
            }
            if self.streams(t, dt) {
                notes.raw("storage: raw".into());
                return Ok((ty, Some(Payload::Text(stream_marker(t, indent)))));
            }
            if let Some(typed) = tensor_data::raw_to_typed(t)
                && let Some(values) = typed_values(&typed, dt, indent)
            {
                notes.raw("storage: raw".into());
                return Ok((ty, Some(values)));
            }
            notes.raw(format!("raw_data: {}", onnx_syntax::lexer::escape_bytes(raw)));
            return Ok((ty, None));
        }
        if typed_fields == 0 {
            return Ok((ty, None));
        }
        if self.streams(t, dt) {
            return Ok((ty, Some(Payload::Text(stream_marker(t, indent)))));
        }
        match typed_values(t, dt, indent) {
            Some(values) => Ok((ty, Some(values))),
            None => {
                unsupported("tensor values that do not read back exactly (wrong field, NaN payloads, packed types)")
            }
        }
    }

    /// A node of the main graph or a function body: printed, then laid out again by the
    /// formatter where the quick layout may not be the formatter's (a line too wide, graphs
    /// inside), so that printed text is formatted text. Nodes inside those graphs are laid
    /// out with the node that holds them.
    fn statement(&mut self, id: NodeId) {
        // The digest comments stay out of the relayout, which would move them into the node.
        self.digest_lines(id, 2);
        let start = self.out.len();
        self.capturing += 1;
        self.node_body(id, 2);
        self.capturing -= 1;
        let text = &self.out[start..];
        if holds_graph(&self.m.nodes[id]) || holds_tensor_list(&self.m.nodes[id]) || too_wide(text, 0) {
            let text = text.trim_end_matches('\n').to_owned();
            self.out.truncate(start);
            self.out.push_str(&relayout(Fragment::Node, text, 2));
            self.out.push('\n');
        }
    }

    /// A node inside a graph attribute, after the comments on the tensors it refers to.
    fn node(&mut self, id: NodeId, indent: usize) {
        self.digest_lines(id, indent);
        self.node_body(id, indent);
    }

    /// A comment line for each tensor of the node's attributes that the layout has a digest
    /// for (a `Constant` whose value the outline refers to).
    fn digest_lines(&mut self, id: NodeId, indent: usize) {
        if self.layout.digests.is_empty() {
            return;
        }
        for a in &self.m.nodes[id].attributes {
            for t in a.t.iter().chain(&a.tensors) {
                if let Some(digest) = self.layout.digests.get(t) {
                    let _ = writeln!(self.out, "{}# {digest}", " ".repeat(indent));
                }
            }
        }
    }

    fn node_body(&mut self, id: NodeId, indent: usize) {
        let n = &self.m.nodes[id];
        let mut notes = Notes::default();
        notes.text("doc_string", n.doc_string());
        notes.pairs("metadata_props", n.metadata_props());
        for c in n.device_configurations() {
            notes.raw(format!("device_configuration: {}", embed(&embedded::node_device_configuration(c))));
        }
        let op = match n.op_type.as_ref().and_then(|o| o.as_str()) {
            Some(op) if is_identifier(op.as_bytes()) => op,
            Some(_) => {
                notes.text("op_type", n.op_type.as_ref());
                OP_PLACEHOLDER
            }
            None => {
                match &n.op_type {
                    Some(bytes) => notes.text("op_type", Some(bytes)),
                    None => notes.raw("op_type: unset".into()),
                }
                OP_PLACEHOLDER
            }
        };
        let mut head = String::new();
        match &n.domain {
            None if self.domain_unset_default => {}
            None => notes.raw("domain: unset".into()),
            Some(d) if d.is_empty() && !self.domain_unset_default => {}
            Some(d) => match d.as_str() {
                Some(text) if !text.is_empty() && text.split('.').all(|seg| is_identifier(seg.as_bytes())) => {
                    head.push_str(text);
                    head.push('.');
                }
                _ => notes.raw(format!("domain: {}", annotation_text(d))),
            },
        }
        head.push_str(op);
        if let Some(o) = n.overload() {
            match o.as_str() {
                Some(text) if is_identifier(text.as_bytes()) => {
                    head.push(':');
                    head.push_str(text);
                }
                _ => notes.raw(format!("overload: {}", annotation_text(o))),
            }
        }
        self.out.push_str(&notes.lines(indent));
        self.out.push_str(&" ".repeat(indent));
        if let Some(label) = &n.name {
            let _ = write!(self.out, "[{}] ", if label.is_empty() { String::new() } else { name(label) });
        }
        let outputs = slots(&n.outputs);
        let inputs = slots(&n.inputs);
        let _ = write!(self.out, "{outputs}{}= {head}", if outputs.is_empty() { "" } else { " " });
        let holds_graph = holds_graph(n);
        if n.attributes.is_empty() {
            let _ = write!(self.out, " ({inputs})");
        } else if !holds_graph {
            let attrs: Vec<String> = n.attributes.iter().map(|a| self.attribute(a, indent + 2)).collect();
            self.out.push(' ');
            self.list("<", ">", &attrs, indent);
            let _ = write!(self.out, " ({inputs})");
        } else {
            let _ = writeln!(self.out, " ({inputs}) <");
            for (i, a) in n.attributes.iter().enumerate() {
                let text = self.attribute_with_graphs(a, indent + 2);
                if !text.starts_with(' ') {
                    self.out.push_str(&" ".repeat(indent + 2));
                }
                self.out.push_str(&text);
                self.out.push_str(if i + 1 < n.attributes.len() { ",\n" } else { "\n" });
            }
            self.out.push_str(&" ".repeat(indent));
            self.out.push('>');
        }
        self.out.push('\n');
    }

    fn attribute_with_graphs(&mut self, a: &Attribute, indent: usize) -> String {
        if a.g.is_none() && a.graphs.is_empty() {
            return self.attribute(a, indent);
        }
        // Print the graph(s) into a fresh buffer at this indentation.
        let saved = std::mem::take(&mut self.out);
        self.capturing += 1;
        let result = self.attribute_graph_value(a, indent);
        self.capturing -= 1;
        let text = std::mem::replace(&mut self.out, saved);
        match result {
            Ok(()) => text,
            Err(_) => self.embedded_attribute(a, indent),
        }
    }

    /// An attribute the text cannot write naturally (sparse values, fields that disagree with
    /// the type, no name), embedded whole as protobuf; the value after `=` is only a
    /// placeholder, and so is the name when it has none.
    fn embedded_attribute(&self, a: &Attribute, indent: usize) -> String {
        let placeholder = Str::from(OP_PLACEHOLDER);
        let n = a.name.as_ref().unwrap_or(&placeholder);
        let mut notes = Notes::default();
        notes.raw(format!("proto: {}", embed(&embedded::attribute(self.m, a))));
        with_notes(&notes, format!("{} = \"<embedded>\"", name(n)), indent)
    }

    fn attribute_graph_value(&mut self, a: &Attribute, indent: usize) -> Out {
        let (head, notes) = self.attribute_head(a)?;
        self.out.push_str(&notes.lines(indent));
        if !notes.0.is_empty() {
            self.out.push_str(&" ".repeat(indent));
        }
        self.out.push_str(&head);
        self.out.push_str(" = ");
        match a.attribute_type() {
            Some(AttributeType::Graph) if a.graphs.is_empty() && a.ref_attr_name.is_none() => {
                let g = a.g.ok_or_else(|| Unsupported("a graph attribute without its graph".into()))?;
                self.graph(g, indent, false);
                Ok(())
            }
            Some(AttributeType::Graphs) if a.g.is_none() && a.ref_attr_name.is_none() => {
                self.out.push('[');
                for (i, &g) in a.graphs.iter().enumerate() {
                    self.out.push('\n');
                    self.out.push_str(&" ".repeat(indent + 2));
                    self.graph(g, indent + 2, false);
                    if i + 1 < a.graphs.len() {
                        self.out.push(',');
                    }
                }
                self.out.push('\n');
                self.out.push_str(&" ".repeat(indent));
                self.out.push(']');
                Ok(())
            }
            _ => unsupported("an attribute whose fields disagree with its type"),
        }
    }

    /// `name: type` and the attribute's annotations.
    fn attribute_head(&self, a: &Attribute) -> Out<(String, Notes)> {
        let n = a.name.as_ref().ok_or_else(|| Unsupported("an attribute without a name".into()))?;
        let mut notes = Notes::default();
        notes.text("doc_string", a.doc_string.as_ref());
        let ty = a.attribute_type().ok_or_else(|| Unsupported("an attribute without a known type".into()))?;
        let head = if ty == AttributeType::Undefined {
            if a.ref_attr_name.is_none() {
                return unsupported("an attribute of undefined type");
            }
            name(n)
        } else {
            format!("{}: {}", name(n), ty.name())
        };
        Ok((head, notes))
    }

    fn attribute(&self, a: &Attribute, indent: usize) -> String {
        self.natural_attribute(a, indent).unwrap_or_else(|_| self.embedded_attribute(a, indent))
    }

    fn natural_attribute(&self, a: &Attribute, indent: usize) -> Out<String> {
        let (head, notes) = self.attribute_head(a)?;
        let ty = a.attribute_type().unwrap_or(AttributeType::Undefined);
        // Exactly the fields the type selects must be set, or the text would lose some.
        let set = [
            ("f", a.f.is_some()),
            ("i", a.i.is_some()),
            ("s", a.s.is_some()),
            ("t", a.t.is_some()),
            ("g", a.g.is_some()),
            ("sparse_tensor", a.sparse_tensor.is_some()),
            ("tp", a.tp.is_some()),
            ("floats", !a.floats.is_empty()),
            ("ints", !a.ints.is_empty()),
            ("strings", !a.strings.is_empty()),
            ("tensors", !a.tensors.is_empty()),
            ("graphs", !a.graphs.is_empty()),
            ("sparse_tensors", !a.sparse_tensors.is_empty()),
            ("type_protos", !a.type_protos.is_empty()),
        ];
        let own = match ty {
            AttributeType::Float => "f",
            AttributeType::Int => "i",
            AttributeType::String => "s",
            AttributeType::Tensor => "t",
            AttributeType::Graph => "g",
            AttributeType::SparseTensor => "sparse_tensor",
            AttributeType::TypeProto => "tp",
            AttributeType::Floats => "floats",
            AttributeType::Ints => "ints",
            AttributeType::Strings => "strings",
            AttributeType::Tensors => "tensors",
            AttributeType::Graphs => "graphs",
            AttributeType::SparseTensors => "sparse_tensors",
            AttributeType::TypeProtos => "type_protos",
            AttributeType::Undefined => "",
        };
        if set.iter().any(|(field, on)| *on && *field != own) {
            return unsupported("an attribute whose fields disagree with its type");
        }
        let value = if let Some(r) = &a.ref_attr_name {
            if set.iter().any(|(_, on)| *on) {
                return unsupported("an attribute with both a reference and a value");
            }
            format!("@{}", name(r))
        } else {
            match ty {
                AttributeType::Float => {
                    f32_exact(a.f.ok_or_else(|| Unsupported("a float attribute without value".into()))?)?
                }
                AttributeType::Int => {
                    a.i.ok_or_else(|| Unsupported("an int attribute without value".into()))?.to_string()
                }
                AttributeType::String => {
                    string(a.s.as_ref().ok_or_else(|| Unsupported("a string attribute without value".into()))?)
                }
                AttributeType::Tensor => {
                    let t = a.t.ok_or_else(|| Unsupported("a tensor attribute without value".into()))?;
                    // `name: tensor = ` before it on the attribute's line.
                    self.tensor_value(&self.m.tensors[t], indent, width(&head) + 3)?
                }
                AttributeType::TypeProto => {
                    self.ty(a.tp.as_ref().ok_or_else(|| Unsupported("a type attribute without value".into()))?)?
                }
                AttributeType::Floats => {
                    format!("[{}]", a.floats.iter().map(|&f| f32_exact(f)).collect::<Out<Vec<_>>>()?.join(", "))
                }
                AttributeType::Ints => {
                    format!("[{}]", a.ints.iter().map(i64::to_string).collect::<Vec<_>>().join(", "))
                }
                AttributeType::Strings => format!("[{}]", a.strings.iter().map(string).collect::<Vec<_>>().join(", ")),
                AttributeType::Tensors => format!(
                    "[{}]",
                    a.tensors
                        .iter()
                        // Where in the list each starts is the formatter's to say (a node
                        // holding a tensor list is laid out by it).
                        .map(|&t| self.tensor_value(&self.m.tensors[t], indent, 0))
                        .collect::<Out<Vec<_>>>()?
                        .join(", ")
                ),
                AttributeType::TypeProtos => {
                    format!("[{}]", a.type_protos.iter().map(|t| self.ty(t)).collect::<Out<Vec<_>>>()?.join(", "))
                }
                AttributeType::SparseTensor | AttributeType::SparseTensors => {
                    return unsupported("sparse tensor attributes");
                }
                AttributeType::Graph | AttributeType::Graphs | AttributeType::Undefined => {
                    return unsupported("this attribute");
                }
            }
        };
        let separator = if value.starts_with('\n') { " =" } else { " = " };
        Ok(with_notes(&notes, format!("{head}{separator}{value}"), indent))
    }

    /// A tensor attribute value: `float[2] name {1, 2}`, annotations on a line before it.
    /// `before`: the columns taken before it on its line after `indent` when it has no
    /// annotation (then it starts a line of its own at `indent`).
    fn tensor_value(&self, t: &Tensor, indent: usize, before: usize) -> Out<String> {
        let mut notes = Notes::default();
        let (ty, payload) = self.tensor_parts(t, &mut notes, indent)?;
        let mut text = ty;
        let mut named = false;
        match &t.name {
            None => notes.raw("tensor_name: unset".into()),
            Some(n) if n.is_empty() => {}
            Some(n) if n.as_str().is_some_and(|text| is_identifier(text.as_bytes())) => {
                text.push(' ');
                text.push_str(&name(n));
                named = true;
            }
            // onnx's parser takes only an identifier here: any other name goes into the
            // annotation, so that onnx still reads the file.
            Some(n) => notes.text("tensor_name", Some(n)),
        }
        match payload {
            // `float[2] […]` would read as a type followed by a list: `=` makes it a tensor
            // whose data is external (a `Constant`'s value in an outline).
            Some(Payload::Text(p)) if !named && p.starts_with('[') => {
                text.push_str(" = ");
                text.push_str(&p);
            }
            Some(p) => {
                let before = if notes.0.is_empty() { before } else { 0 };
                text.push(' ');
                let p = p.at(indent + before + width(&text), indent);
                text.push_str(&p);
            }
            // A bare `float[2]` would read as a type; empty braces keep it a tensor.
            None if !named => text.push_str(" {}"),
            None => {}
        }
        if notes.0.is_empty() {
            return Ok(text);
        }
        // The annotation lines and the tensor start at the attribute's indentation, where the
        // tensor's closing brace is (the formatter's layout).
        Ok(format!("\n{}{}{text}", notes.lines(indent), " ".repeat(indent)))
    }

    fn function(&mut self, id: FunctionId) {
        let f = &self.m.function_store[id];
        let mut notes = Notes::default();
        notes.pairs("metadata_props", &f.metadata_props);
        if f.name.is_none() {
            notes.raw("name: unset".into());
        }
        unset_opset_notes(&f.opset_import, &mut notes);
        self.out.push_str(&notes.lines(0));
        let mut header = Vec::new();
        if let Some(d) = &f.domain {
            header.push(format!("domain: {}", string(d)));
        }
        if let Some(o) = &f.overload {
            header.push(format!("overload: {}", string(o)));
        }
        if let Some(d) = &f.doc_string {
            header.push(format!("doc_string: {}", string(d)));
        }
        if !f.opset_import.is_empty() {
            header.push(format!("opset_import: [{}]", opset_list(&f.opset_import)));
        }
        if !header.is_empty() {
            let header = format!("<{}>", header.join(", "));
            self.out.push_str(&relayout(Fragment::FunctionHeader, header, 0));
            self.out.push('\n');
        }
        let fname = f.name.as_ref().map_or_else(|| OP_PLACEHOLDER.to_owned(), name);
        self.out.push_str(&fname);
        self.out.push(' ');
        // Parameters: names first, then those with defaults; the parser sorts them into
        // `attribute` and `attribute_proto` again.
        let mut params: Vec<String> = f.attributes.iter().map(name).collect();
        // A default that holds a graph is embedded whole (`proto`), like any attribute the
        // one-line form cannot hold.
        params.extend(f.attribute_protos.iter().map(|a| {
            if a.g.is_some() || !a.graphs.is_empty() { self.embedded_attribute(a, 2) } else { self.attribute(a, 2) }
        }));
        if !params.is_empty() {
            self.list("<", ">", &params, 0);
            self.out.push(' ');
        }
        // Inputs and outputs by name only; every value_info goes to the locals list, which
        // keeps their order exactly.
        let io = |names: &[Str]| names.iter().map(plain_name).collect::<Vec<_>>();
        let (inputs, outputs) = (io(&f.inputs), io(&f.outputs));
        self.list("(", ")", &inputs, 0);
        self.out.push_str(" => ");
        self.list("(", ")", &outputs, 0);
        let locals: Vec<String> = f.value_info.iter().map(|v| self.value_info(v, 2)).collect();
        if !locals.is_empty() {
            self.out.push(' ');
            self.list("<", ">", &locals, 0);
        }
        self.out.push_str(" {\n");
        for &n in &f.nodes {
            self.statement(n);
        }
        self.out.push_str("}\n");
    }
}

/// Tensors of at least this many values are printed a chunk at a time when streaming, so the
/// text of a big model's biggest tensor is never whole in memory either.
const STREAM_FROM: usize = if cfg!(test) { 1000 } else { 1 << 16 };

/// Values formatted at once when a tensor is streamed.
const STREAM_CHUNK: usize = if cfg!(test) { 777 } else { 1 << 16 };

/// Chunks of a streamed tensor formatted but not yet written, at most.
const STREAMS_AHEAD: usize = 8;

/// Brackets a placeholder for a tensor's values in an item (`\u{1}address:indent\u{1}`): a
/// character printed text never holds (control characters are always escaped).
const STREAM_MARK: char = '\u{1}';

/// Tensors [`stream_values`] printed, for the tests to see that streaming happened.
#[cfg(test)]
static STREAMED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn stream_marker(t: &Tensor, indent: usize) -> String {
    format!("{STREAM_MARK}{:x}:{indent}{STREAM_MARK}", std::ptr::from_ref(t) as usize)
}

/// Where a streamed tensor's values are: raw bytes of `width` per value, or its typed field.
#[derive(Clone, Copy)]
enum StreamSource {
    Raw { width: usize },
    Typed(TypedField),
}

/// How a tensor's values would be streamed and how many there are; `None` when they cannot be
/// cut into chunks that print as the whole does (strings, mixed fields, NaN payloads, raw
/// bytes of sub-byte types or not a whole number of values).
fn stream_source(t: &Tensor, dt: DataType) -> Option<(StreamSource, usize)> {
    use DataType as D;
    let no_payloads_f32 = |v: &[f32]| !any_payload_nan_f32(v.iter().map(|x| x.to_bits()));
    let no_payloads_f64 = |v: &[f64]| !v.iter().any(|&x| nan_with_payload_f64(x));
    if let Some(raw) = &t.raw_data {
        let width = match dt {
            D::Complex64 => 4,
            D::Complex128 => 8,
            _ => (dt.bits() / 8) as usize,
        };
        if !tensor_data::has_no_typed_values(t)
            || !tensor_data::converts_raw(dt)
            || width == 0
            || !raw.len().is_multiple_of(width)
        {
            return None;
        }
        let payloads = match width {
            4 if matches!(dt, D::Float | D::Complex64) => any_payload_nan_f32_le(raw),
            8 if matches!(dt, D::Double | D::Complex128) => {
                raw.chunks_exact(8).any(|c| nan_with_payload_f64(f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))))
            }
            _ => false,
        };
        return (!payloads).then_some((StreamSource::Raw { width }, raw.len() / width));
    }
    let field = dt.typed_field();
    let count = match field {
        TypedField::FloatData => no_payloads_f32(&t.float_data).then_some(t.float_data.len())?,
        TypedField::DoubleData => no_payloads_f64(&t.double_data).then_some(t.double_data.len())?,
        TypedField::Int32Data => t.int32_data.len(),
        TypedField::Int64Data => t.int64_data.len(),
        TypedField::Uint64Data => t.uint64_data.len(),
        TypedField::StringData | TypedField::None => return None,
    };
    let lengths = [t.float_data.len(), t.int32_data.len(), t.string_data.len(), t.int64_data.len()];
    let others: usize = lengths.iter().sum::<usize>() + t.double_data.len() + t.uint64_data.len() - count;
    (others == 0).then_some((StreamSource::Typed(field), count))
}

/// The texts of values `range` of a tensor, as [`value_texts`] gives them for the whole.
fn chunk_texts(t: &Tensor, dt: DataType, source: StreamSource, range: std::ops::Range<usize>) -> Option<bulk::Texts> {
    // The common case, raw float32 (`stream_source` has checked it for NaN payloads), is
    // formatted from the bytes where they are: no chunk copied into a tensor of its own.
    if let (StreamSource::Raw { width: 4 }, DataType::Float) = (source, dt) {
        let bytes = t.raw_data.as_ref()?.get(range.start * 4..range.end * 4)?;
        let values: &[[u8; 4]] = bytemuck::try_cast_slice(bytes).ok()?;
        return Some(bulk::texts(values, bulk::Spread::ThisThread, |out, v| push_f32(out, f32::from_le_bytes(*v))));
    }
    let mut chunk = Tensor { data_type: t.data_type, ..Tensor::default() };
    match source {
        StreamSource::Raw { width } => {
            let raw = t.raw_data.as_ref()?;
            chunk.raw_data = Some(raw.slice(range.start * width..range.end * width));
            chunk = tensor_data::raw_to_typed(&chunk)?;
        }
        StreamSource::Typed(TypedField::FloatData) => chunk.float_data = t.float_data[range].to_vec(),
        StreamSource::Typed(TypedField::DoubleData) => chunk.double_data = t.double_data[range].to_vec(),
        StreamSource::Typed(TypedField::Int32Data) => chunk.int32_data = t.int32_data[range].to_vec(),
        StreamSource::Typed(TypedField::Int64Data) => chunk.int64_data = t.int64_data[range].to_vec(),
        StreamSource::Typed(TypedField::Uint64Data) => chunk.uint64_data = t.uint64_data[range].to_vec(),
        StreamSource::Typed(_) => return None,
    }
    value_texts(&chunk, dt, bulk::Spread::ThisThread)
}

/// Writes the values a [`stream_marker`] stands for, laid out as [`pack`] lays them out, a
/// chunk of [`STREAM_CHUNK`] values at a time.
fn stream_values(m: &Model, marker: &str, sink: &mut Sink<'_>) {
    // The marker was made from a tensor `stream_source` accepted: none of this fails, but a
    // text missing its values must end in an error, never be written as if whole.
    let broken = |sink: &mut Sink<'_>| {
        sink.error.get_or_insert_with(|| std::io::Error::other("a streamed tensor could not be printed"));
    };
    let parsed = marker.split_once(':').and_then(|(a, i)| Some((usize::from_str_radix(a, 16).ok()?, i.parse().ok()?)));
    let Some((address, indent)) = parsed else { return broken(sink) };
    let Some((_, t)) = m.tensors.iter().find(|(_, t)| std::ptr::from_ref(*t) as usize == address) else {
        return broken(sink);
    };
    let Some((dt, (source, count))) = t.elem_type().and_then(|dt| Some((dt, stream_source(t, dt)?))) else {
        return broken(sink);
    };
    #[cfg(test)]
    STREAMED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut packer = Packer::new(indent, count);
    // Room for a chunk laid out (values, separators, line ends and indentation), so that it
    // is not grown by copying, chunk after chunk into fresh memory.
    let mut out = String::with_capacity(STREAM_CHUNK * 20 + 1024);
    packer.start(&mut out);
    // Chunks are formatted on every core, a few ahead of the one being laid out and written
    // here; each is small enough to still be in the cache when it is copied into lines and
    // then into the file (measured: 1 MiB-value chunks spent a third of the print in the
    // kernel copying cold text, 64 Ki-value ones a fortieth).
    let mut whole = true;
    onnx_threads::pipeline(
        count.div_ceil(STREAM_CHUNK),
        STREAMS_AHEAD,
        |i| chunk_texts(t, dt, source, i * STREAM_CHUNK..((i + 1) * STREAM_CHUNK).min(count)),
        |texts| {
            let Some(texts) = texts else {
                whole = false;
                return false;
            };
            packer.feed(&texts, &mut out);
            sink.write(&out);
            out.clear();
            sink.error.is_none()
        },
    );
    if !whole {
        return broken(sink);
    }
    packer.finish(&mut out);
    sink.write(&out);
}

/// The largest printed part whose lines are measured for [`relayout`]: bigger ones are the
/// values of big tensors, which the printer packs into lines as the formatter does.
const RELAYOUT_LIMIT: usize = 1 << 16;

/// Whether a printed part (at most [`RELAYOUT_LIMIT`] long) has a line wider than the
/// formatter allows, its first line starting `first` columns after where the text begins.
/// Widths are counted in characters, as the formatter counts them.
fn too_wide(text: &str, first: usize) -> bool {
    text.len() <= RELAYOUT_LIMIT
        && !text.contains(STREAM_MARK)
        && text.lines().enumerate().any(|(i, l)| if i == 0 { first } else { 0 } + l.chars().count() > WIDTH)
}

/// Whether a node holds a list of tensors, which the printer writes on one line and leaves to
/// the formatter to lay out (each tensor's values start where the formatter puts it).
fn holds_tensor_list(n: &Node) -> bool {
    n.attributes.iter().any(|a| !a.tensors.is_empty())
}

/// Whether a node holds graphs (its text then has statements of its own inside).
fn holds_graph(n: &Node) -> bool {
    n.attributes.iter().any(|a| a.g.is_some() || !a.graphs.is_empty())
}

/// `text`, a part written at `indent` whose quick layout may not be the formatter's, laid
/// out by the formatter, starting with its indentation (`text` unchanged if it cannot be,
/// which the corpus tests would show).
fn relayout(fragment: Fragment, text: String, indent: usize) -> String {
    match format_fragment(fragment, text.trim_start(), indent) {
        Some(laid) => laid,
        None => text,
    }
}

/// An item with its annotation line before it: such an item starts with its indentation.
fn with_notes(notes: &Notes, mut item: String, indent: usize) -> String {
    if !notes.0.is_empty() {
        item.insert_str(0, &format!("{}{}", notes.lines(indent), " ".repeat(indent)));
    }
    item
}

/// The type without the denotations of its dimensions, which go into a `dim_denotation`
/// annotation (`unset` for dims without one).
fn dim_denotations(ty: &Type, notes: &mut Notes) -> Type {
    let mut ty = ty.clone();
    if let Some(TypeValue::Tensor(t) | TypeValue::SparseTensor(t)) = &mut ty.value
        && let Some(shape) = &mut t.shape
        && shape.dims.iter().any(|d| d.denotation.is_some())
    {
        let items: Vec<String> = shape
            .dims
            .iter_mut()
            .map(|d| d.denotation.take().map_or_else(|| "unset".to_owned(), |d| annotation_text(&d)))
            .collect();
        notes.raw(format!("dim_denotation: [{}]", items.join(", ")));
    }
    ty
}

/// Protobuf bytes as a byte string.
fn embed(bytes: &[u8]) -> String {
    onnx_syntax::lexer::escape_bytes(bytes)
}

fn elem(code: i32) -> Out<String> {
    match DataType::from_code(code) {
        Some(t) if t != DataType::Undefined => Ok(t.name().to_owned()),
        _ => unsupported(format!("element type {code}")),
    }
}

fn dotted(s: &Str) -> Out<String> {
    let text = utf8(s, "opaque name")?;
    if text.split('.').all(|seg| is_identifier(seg.as_bytes())) {
        Ok(text)
    } else {
        unsupported("this opaque type name")
    }
}

fn slots(names: &[Str]) -> String {
    names.iter().map(|n| if n.is_empty() { "\"\"".to_owned() } else { name(n) }).collect::<Vec<_>>().join(", ")
}

fn external_pairs(list: &[StringPair]) -> Out<String> {
    let mut items = Vec::new();
    for p in list {
        let (Some(k), Some(v)) = (&p.key, &p.value) else {
            return unsupported("an external data entry without key or value");
        };
        items.push(format!("{}: {}", string(k), string(v)));
    }
    if items.is_empty() {
        return unsupported("an external tensor without entries");
    }
    Ok(items.join(", "))
}

/// An f32 in text that reads back to the same bits (NaN payloads cannot).
fn f32_exact(v: f32) -> Out<String> {
    if nan_with_payload_f32(v) {
        return unsupported("a NaN with a payload");
    }
    Ok(f32_text(v))
}

/// A NaN other than the quiet one text writes as `nan` (its payload cannot be written).
fn nan_with_payload_f32(v: f32) -> bool {
    payload_nan_bits(v.to_bits())
}

/// [`nan_with_payload_f32`] of an f32's bits: a NaN (all exponent bits set, a fraction
/// that is not zero) other than the quiet one. Two comparisons and no branch, so that a fold
/// over many values becomes vector code.
#[inline]
fn payload_nan_bits(bits: u32) -> bool {
    let magnitude = bits & 0x7fff_ffff;
    (magnitude > 0x7f80_0000) & (magnitude != 0x7fc0_0000)
}

/// Whether one of these f32s (as bits) is [a NaN with a payload](nan_with_payload_f32): a
/// fold without an early exit, which the compiler turns into vector code (checking a
/// streamed tensor of millions of values took a twentieth of printing it, value by value).
fn any_payload_nan_f32(bits: impl Iterator<Item = u32>) -> bool {
    bits.fold(false, |found, b| found | payload_nan_bits(b))
}

/// [`any_payload_nan_f32`] of little-endian f32 bytes (whole values), read a block of
/// sixteen at a time: value by value the compiler does not make vector code of it.
fn any_payload_nan_f32_le(raw: &[u8]) -> bool {
    const BLOCK: usize = 64;
    let blocks = raw.chunks_exact(BLOCK);
    let rest = blocks.remainder();
    let in_blocks = blocks.fold(false, |found, block| {
        let mut words = [0u32; BLOCK / 4];
        for (word, bytes) in words.iter_mut().zip(block.chunks_exact(4)) {
            *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        found | any_payload_nan_f32(words.into_iter())
    });
    in_blocks || any_payload_nan_f32(rest.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
}

fn nan_with_payload_f64(v: f64) -> bool {
    v.is_nan() && v.to_bits() & 0x7fff_ffff_ffff_ffff != 0x7ff8_0000_0000_0000
}

/// `{v, v, …}` from the typed field the data type selects, when the text reads back exactly;
/// long lists are filled into lines of at most 100 columns below the item at `indent`.
fn typed_values(t: &Tensor, dt: DataType, indent: usize) -> Option<Payload> {
    value_texts(t, dt, bulk::Spread::AllCores).map(|texts| {
        // A list too wide even at the item's indentation breaks wherever it starts.
        // (A character takes at most four bytes: a longer text is wider than any line.)
        let short = texts.joined_len() <= 4 * WIDTH && indent + texts.joined_width() + 2 <= WIDTH;
        if short { Payload::Short(texts) } else { Payload::Text(pack(&texts, indent)) }
    })
}

/// A tensor's values, or the text that stands for them.
enum Payload {
    /// Laid out already: values filled into lines, a streamed tensor's marker, external data
    /// entries.
    Text(String),
    /// Values that may fit on one line, laid out by the caller once it knows the column where
    /// they start ([`Payload::at`]).
    Short(bulk::Texts),
}

impl Payload {
    /// The text of the payload when its `{` is at `column`, in an item indented by `indent`:
    /// `{a, b}` when it ends by the width, as the formatter keeps a list that fits where it
    /// starts (whatever follows it on the line), else filled into lines.
    fn at(self, column: usize, indent: usize) -> String {
        match self {
            Payload::Text(text) => text,
            Payload::Short(texts) if column + texts.joined_width() + 2 <= WIDTH => {
                let mut flat = String::with_capacity(texts.joined_len() + 2);
                flat.push('{');
                for (i, (text, _)) in texts.pieces().filter(|(_, ends)| !ends.is_empty()).enumerate() {
                    if i > 0 {
                        flat.push_str(bulk::TEXT_SEPARATOR);
                    }
                    flat.push_str(text);
                }
                flat.push('}');
                flat
            }
            Payload::Short(texts) => pack(&texts, indent),
        }
    }
}

/// A text's width in columns: characters, as the formatter counts them.
fn width(text: &str) -> usize {
    text.chars().count()
}

/// The text of each value of a tensor held in its typed field; `None` when other typed
/// fields hold values too or a float is a NaN with a payload (neither reads back exactly).
fn value_texts(t: &Tensor, dt: DataType, spread: bulk::Spread) -> Option<bulk::Texts> {
    let others_empty = |field: TypedField| {
        (field == TypedField::FloatData || t.float_data.is_empty())
            && (field == TypedField::Int32Data || t.int32_data.is_empty())
            && (field == TypedField::StringData || t.string_data.is_empty())
            && (field == TypedField::Int64Data || t.int64_data.is_empty())
            && (field == TypedField::DoubleData || t.double_data.is_empty())
            && (field == TypedField::Uint64Data || t.uint64_data.is_empty())
    };
    let field = dt.typed_field();
    if !others_empty(field) {
        return None;
    }
    match field {
        TypedField::FloatData => {
            if any_payload_nan_f32(t.float_data.iter().map(|v| v.to_bits())) {
                return None;
            }
            Some(bulk::texts(&t.float_data, spread, |out, v| push_f32(out, *v)))
        }
        TypedField::DoubleData => {
            if t.double_data.iter().any(|v| nan_with_payload_f64(*v)) {
                return None;
            }
            Some(bulk::texts(&t.double_data, spread, |out, v| push_f64(out, *v)))
        }
        TypedField::Int32Data => Some(bulk::texts(&t.int32_data, spread, push_int)),
        TypedField::Int64Data => Some(bulk::texts(&t.int64_data, spread, push_int)),
        // The parser stores uint32 values in uint64_data too; a value above 2^32 still reads back.
        TypedField::Uint64Data => Some(bulk::texts(&t.uint64_data, spread, push_int)),
        TypedField::StringData => {
            Some(bulk::texts(&t.string_data, spread, |out, v| out.extend_from_slice(string(v).as_bytes())))
        }
        TypedField::None => None,
    }
}

/// Spare capacity for what is put in front of a long value list.
const HEAD_ROOM: usize = 4096;

/// The values filled into lines of at most [`WIDTH`] columns below the item at `indent`,
/// `{` to `}`.
fn pack(texts: &bulk::Texts, indent: usize) -> String {
    let joined_len = texts.joined_len();
    // Room in front too: the item's head (`float[…] name =`) and annotations are inserted
    // before the values, which must not make a hundred megabytes move to a new allocation.
    let pad = indent + 2;
    let mut lines = String::with_capacity(joined_len + joined_len / 80 * (pad + 2) + pad + indent + 8 + HEAD_ROOM);
    let mut packer = Packer::new(indent, texts.count());
    packer.start(&mut lines);
    packer.feed(texts, &mut lines);
    packer.finish(&mut lines);
    lines
}

/// Lays a long value list out in lines, `{` to `}`, fed the texts of its values in order, a
/// batch at a time: [`pack`] feeds them all at once; streaming a big tensor feeds a chunk at
/// a time and writes out what each made, so the text is never whole in memory.
struct Packer {
    indent: usize,
    /// Every value of the list, fed or not: the last one has no comma.
    count: usize,
    /// Values laid out so far.
    seen: usize,
    /// Columns taken on the current line after its indentation (0: nothing on it yet).
    line_len: usize,
}

impl Packer {
    fn new(indent: usize, count: usize) -> Packer {
        Packer { indent, count, seen: 0, line_len: 0 }
    }

    fn start(&self, out: &mut String) {
        out.push_str("{\n");
    }

    /// Lays out the next values. The texts come joined by `, `, as they are written inside a
    /// line: each line is one copy of a run of them (a value at a time would be millions of
    /// small copies). What is written is final: later batches only add to it.
    fn feed(&mut self, texts: &bulk::Texts, out: &mut String) {
        let pad = self.indent + 2;
        for (text, ends) in texts.pieces() {
            // Numbers are ASCII; strings may have wider characters, counted as the formatter
            // counts columns.
            let ascii = text.is_ascii();
            // The part of the current line in this piece not written yet.
            let (mut run_start, mut run_end) = (0, 0);
            for (i, &end) in ends.iter().enumerate() {
                let start = bulk::text_start(ends, i);
                self.seen += 1;
                // The text and, but for the last, its comma.
                let text_width = if ascii { end - start } else { width(&text[start..end]) };
                let piece_len = text_width + usize::from(self.seen < self.count);
                if self.line_len > 0 && pad + self.line_len + 1 + piece_len > WIDTH {
                    out.push_str(&text[run_start..run_end]);
                    out.push_str(",\n");
                    self.line_len = 0;
                }
                if self.line_len == 0 {
                    out.extend(std::iter::repeat_n(' ', pad));
                    run_start = start;
                } else {
                    // The line goes on: `, ` is in the run, except between two pieces.
                    if i == 0 {
                        out.push_str(bulk::TEXT_SEPARATOR);
                        run_start = start;
                    }
                    self.line_len += 1;
                }
                run_end = end;
                self.line_len += piece_len;
            }
            out.push_str(&text[run_start..run_end]);
        }
    }

    fn finish(&self, out: &mut String) {
        if self.line_len == 0 {
            out.extend(std::iter::repeat_n(' ', self.indent + 2));
        }
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', self.indent));
        out.push('}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vector_payload_check_agrees_with_the_one_value_check() {
        let specials =
            [0u32, 0x8000_0000, 0x7f80_0000, 0xff80_0000, 0x7fc0_0000, 0xffc0_0000, 0x7fc0_0001, 0x7f80_0001];
        for bits in specials.into_iter().chain([0x7fff_ffff, 0xffa0_0000, 0x3f80_0000, 0x0000_0001]) {
            let one = nan_with_payload_f32(f32::from_bits(bits));
            assert_eq!(any_payload_nan_f32([1.5f32.to_bits(), bits, 2.0f32.to_bits()].into_iter()), one, "{bits:#x}");
        }
        assert!(!any_payload_nan_f32(std::iter::empty()));
        // As bytes: in a block of sixteen and in the values after the last block.
        for at in [0, 5, 15, 16, 17, 20] {
            let mut values = [1.5f32; 21];
            values[at] = f32::from_bits(0x7fc0_0001);
            let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            assert!(any_payload_nan_f32_le(&raw), "at {at}");
            values[at] = f32::NAN;
            let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            assert!(!any_payload_nan_f32_le(&raw), "quiet NaN at {at}");
        }
    }

    /// The layout rule one value at a time, as plainly as it can be said: the oracle for
    /// `pack`, which copies runs of values at once.
    fn pack_value_by_value(texts: &[&str], indent: usize) -> String {
        let pad = " ".repeat(indent + 2);
        let mut out = String::from("{\n");
        let mut line = String::new();
        for (i, text) in texts.iter().enumerate() {
            let item = if i + 1 < texts.len() { format!("{text},") } else { text.to_string() };
            if !line.is_empty() && pad.len() + line.len() + 1 + item.len() > WIDTH {
                out.push_str(&format!("{pad}{line}\n"));
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&item);
        }
        out.push_str(&format!("{pad}{line}\n{}}}", " ".repeat(indent)));
        out
    }

    #[test]
    fn streamed_text_is_the_text() {
        // Big tensors at the top level (written straight out) and in a subgraph (printed into
        // a buffer of its own, which must not leak out early), and enough nodes to drain.
        let big = |n: usize| (0..n).map(|i| (i % 97).to_string()).collect::<Vec<_>>().join(", ");
        // Typed floats, raw floats, raw int64 and typed int64: each streamed a chunk at a
        // time (of 777 values under test), the layout carried across chunks.
        let mut text = format!(
            "<ir_version: 8, opset_import: [\"\" : 17]>\ng (bool c, float[300000] x) => (float[300000] y) <\n  \
             float[300000] w = {{{}}},\n  #@ storage: raw\n  float[5000] r = {{{}}},\n  \
             #@ storage: raw\n  int64[4000] i = {{{}}},\n  int64[3000] j = {{{}}},\n  \
             float[3] small = {{1, 2, 3}}\n> {{\n  t = Add(x, w)\n",
            big(300_000),
            big(5000).replace(", 1,", ", 1.5e-7,"),
            big(4000).replace(", 2,", ", -9223372036854775808,"),
            big(3000)
        );
        for i in 0..20_000 {
            text.push_str(&format!("  t{i} = Relu(t)\n"));
        }
        text.push_str(&format!(
            "  y = If(c) <then_branch: graph = th () => (float[300000] o) {{\n    o = Constant <value: tensor = \
             float[300000] {{{}}}> ()\n  }}, else_branch: graph = el () => (float[300000] o) {{\n    o = Identity(x)\n  \
             }}>\n}}\n",
            big(300_000)
        ));
        let analysis = crate::analysis::analyze_text(&text);
        assert!(analysis.readable, "{:?}", analysis.diagnostics.first());
        let whole = model(&analysis.model);
        assert!(whole.len() > 2 * DRAIN_AT);
        let mut streamed = Vec::new();
        let before = STREAMED.load(std::sync::atomic::Ordering::Relaxed);
        write_model(&analysis.model, &mut streamed).expect("writes to memory");
        assert!(STREAMED.load(std::sync::atomic::Ordering::Relaxed) >= before + 4, "the big tensors were not streamed");
        assert!(streamed == whole.as_bytes(), "the streamed text differs");
    }

    #[test]
    fn packed_lines_match_the_value_by_value_layout() {
        // Texts of varied widths, in one piece and (past 64K values) in several.
        for count in [0usize, 1, 2, 5, 17, 300, 70_001, 100_000] {
            let values: Vec<i64> =
                (0..count as i64).map(|i| (i * 7919) % 100_003 - 5_000 + i * i % 13 * 1_000_000).collect();
            let texts = bulk::texts(&values, bulk::Spread::AllCores, push_int);
            let listed: Vec<&str> = texts.iter().collect();
            assert_eq!(listed.len(), count);
            for indent in [0, 4, 58, 70] {
                let packed = pack(&texts, indent);
                assert!(packed == pack_value_by_value(&listed, indent), "{count} values, indent {indent}");
            }
        }
    }
}
