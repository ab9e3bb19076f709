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
//!
//! The printer's parts, one job each: `escape` writes names and strings, `notes` the `#@`
//! annotations; the walk over the model is `walk` (header, graphs, functions), `nodes`,
//! `attributes`, `tensors` and `types`; `layout` lays lists out and hands the formatter what
//! it must lay out itself; `values` writes value lists, with `nan` telling which floats read
//! back exactly; `stream` writes the text to a file as it is printed.

mod attributes;
mod escape;
mod layout;
mod nan;
mod nodes;
mod notes;
mod stream;
mod tensors;
mod types;
mod values;
mod walk;

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::ir::*;
use stream::Sink;

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
