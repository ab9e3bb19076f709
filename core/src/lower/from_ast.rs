//! Syntax tree → IR, filling the source map. Problems found here (bad header keys, numbers
//! out of range, attribute values that do not match their annotation, …) are diagnostics
//! anchored to the text; lowering always produces a model.
//!
//! The meaning of each construct is onnx 1.23.2's (docs/syntax.md), with the deliberate
//! divergences of our dialect: an empty op type, a function default that does not match its
//! annotation, and numbers that overflow are errors; lists of tensors, graphs and types
//! keep their elements; quoted names are accepted wherever a name stands.

use onnx_syntax::ast::{self, AttrValue as V, Literal, LiteralKind, LiteralRef, Span};
use onnx_syntax::incremental::Edit;
use onnx_syntax::numbers::{self, ReadFloats};
use onnx_syntax::progress::Progress;

use super::annotations::{self, Reader};
use super::from_proto::embedded;
use crate::diagnostic::Diagnostic;
use crate::ir::tensor_data;
use crate::ir::*;
use crate::source_map::{NodeSpans, SourceMap, ValueSpans};

/// Annotation keys that set fields of a tensor (initializers and tensor values).
const TENSOR_KEYS: &[&str] = &[
    "tensor_doc_string",
    "tensor_metadata_props",
    "segment",
    "raw_data",
    "storage",
    "tensor_name",
    "tensor_proto",
    "data_location",
];

/// A model lowered from text, with where everything came from.
#[derive(Debug, Default)]
pub struct Lowered {
    pub model: Model,
    pub source_map: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
}

/// Lowers a model's tree; `source` is the text it was parsed from (the tree keeps number
/// lists as ranges into it).
pub fn model(tree: &ast::Model, source: &str) -> Lowered {
    model_with_floats(tree, source, ReadFloats::default())
}

/// Lowers a tree, taking the float lists the parser already read (`Parse::floats`)
/// instead of reading them again.
pub fn model_with_floats(tree: &ast::Model, source: &str, floats: ReadFloats) -> Lowered {
    model_with_progress(tree, source, floats, None)
}

/// [`model_with_floats`], recording in `progress` where in the text it has come (the start of
/// each node and initializer lowered).
pub fn model_with_progress(
    tree: &ast::Model,
    source: &str,
    floats: ReadFloats,
    progress: Option<&Progress>,
) -> Lowered {
    model_after(tree, source, floats, progress, None)
}

/// An earlier version's lowering, and the edit from its text to the one being lowered.
#[derive(Clone, Copy, Debug)]
pub struct Earlier<'a> {
    pub model: &'a Model,
    pub source_map: &'a SourceMap,
    pub edit: Edit,
}

/// [`model_with_progress`] of a text that an `earlier` version was lowered from before the
/// edit: the values of number lists the edit left alone are copied from that version's
/// tensors instead of being read from the text again (a model with its weights inline is
/// mostly numbers: 36 MB of them took tens of milliseconds to read on every keystroke).
pub fn model_after(
    tree: &ast::Model,
    source: &str,
    floats: ReadFloats,
    progress: Option<&Progress>,
    earlier: Option<Earlier<'_>>,
) -> Lowered {
    let mut cx = Cx { floats, source, progress, earlier, ..Cx::default() };
    // The node tables sized once: grown node by node, a big graph's were copied as they
    // doubled (a tenth of lowering 100,000 nodes). Subgraphs' nodes are few and not counted.
    let nodes = tree.graph.iter().map(|g| g.nodes.len()).chain(tree.functions.iter().map(|f| f.nodes.len())).sum();
    cx.out.model.nodes = la_arena::Arena::with_capacity(nodes);
    cx.out.source_map.nodes = la_arena::ArenaMap::with_capacity(nodes);
    let mut graph_unset = false;
    let mut annotated_metadata = None;
    let mut opset_unset = OpsetUnset::default();
    for entry in annotations::entries(&tree.annotations) {
        if opset_unset.read(&mut cx.reader(), entry) {
            continue;
        }
        match entry.key.text.as_str() {
            "node_domain" => cx.node_domain_unset = cx.reader().word(&entry.value, "unset").is_some(),
            "graph" => graph_unset = cx.reader().word(&entry.value, "unset").is_some(),
            "metadata_props" => annotated_metadata = cx.reader().pairs(&entry.value),
            "configuration" => {
                if let Some(c) = cx.embedded(entry, embedded::device_configuration) {
                    cx.out.model.configuration.push(c);
                }
            }
            "training_info" => {
                if let Some(bytes) = cx.reader().text(&entry.value) {
                    match embedded::training_info(&mut cx.out.model, bytes.into_bytes()) {
                        Ok(t) => cx.out.model.training_info.push(t),
                        Err(e) => cx.bad_embedded(entry, &e),
                    }
                }
            }
            _ => cx.reader().unknown(
                entry,
                "model",
                &[
                    "node_domain",
                    "graph",
                    "metadata_props",
                    "opset_unset_domain",
                    "opset_unset_version",
                    "configuration",
                    "training_info",
                ],
            ),
        }
    }
    if let Some(header) = &tree.header {
        cx.model_header(header);
        let Lowered { model, diagnostics, .. } = &mut cx.out;
        opset_unset.apply(&mut model.opset_import, &mut Reader { diagnostics }, header.span);
    }
    if let Some(list) = annotated_metadata {
        cx.out.model.metadata_props.extend(list);
    }
    if let Some(graph) = &tree.graph {
        let id = cx.graph(graph);
        // `graph: unset`: the text's graph is a placeholder for a model without one.
        cx.out.model.graph = (!graph_unset).then_some(id);
    }
    for f in &tree.functions {
        let id = cx.function(f);
        cx.out.model.functions.push(id);
    }
    cx.finish_tensors();
    cx.out
}

/// Lowers a text holding a single function into a model whose only content is that function.
pub fn function(tree: &ast::Function, source: &str) -> Lowered {
    let mut cx = Cx { source, ..Cx::default() };
    let id = cx.function(tree);
    cx.out.model.functions.push(id);
    cx.finish_tensors();
    cx.out
}

#[derive(Default)]
struct Cx<'s> {
    out: Lowered,
    /// The text the tree was parsed from.
    source: &'s str,
    /// `#@ node_domain: unset`: nodes without a domain prefix leave `domain` unset (onnx's
    /// parser always sets it to "").
    node_domain_unset: bool,
    /// Float lists read by the parser, taken by the tensors that hold them.
    floats: ReadFloats,
    progress: Option<&'s Progress>,
    earlier: Option<Earlier<'s>>,
    /// Where the number list of the tensor being lowered starts, when its values were read
    /// in one go (recorded in `lists` once the tensor has its id).
    bulk_list: Option<u32>,
    /// The earlier version's raw bytes of the tensor being lowered, taken instead of its
    /// values (that version stored them raw, `#@ storage: raw`), and its number list.
    earlier_raw: Option<(bytes::Bytes, ast::NumberRun)>,
    /// Where each tensor's number list starts, for those read (or taken) in one go and not
    /// replaced by an annotation since; the source map's `number_lists` at the end.
    lists: std::collections::HashMap<TensorId, u32>,
    /// Tensors holding an earlier version's raw bytes, with their number list: they stay raw
    /// if their own annotations say `storage: raw`, and their list is read at the end
    /// otherwise.
    raw_from_earlier: std::collections::HashMap<TensorId, ast::NumberRun>,
}

fn s(text: &str) -> Str {
    Str::from(text)
}

/// Indices of opset imports whose domain or version the text says are unset.
#[derive(Default)]
struct OpsetUnset {
    domain: Vec<i64>,
    version: Vec<i64>,
}

impl OpsetUnset {
    /// Reads `opset_unset_domain` / `opset_unset_version`; false for other keys.
    fn read(&mut self, r: &mut Reader<'_>, entry: &ast::AnnotationEntry) -> bool {
        let list = match entry.key.text.as_str() {
            "opset_unset_domain" => &mut self.domain,
            "opset_unset_version" => &mut self.version,
            _ => return false,
        };
        list.extend(r.ints(&entry.value).unwrap_or_default());
        true
    }

    /// Clears the fields the annotations named; reports indices past the list.
    fn apply(self, imports: &mut [OpsetImport], r: &mut Reader<'_>, span: Span) {
        for (indices, clear) in [
            (self.domain, (|o: &mut OpsetImport| o.domain = None) as fn(&mut OpsetImport)),
            (self.version, |o: &mut OpsetImport| o.version = None),
        ] {
            for i in indices {
                match usize::try_from(i).ok().and_then(|i| imports.get_mut(i)) {
                    Some(o) => clear(o),
                    None => r.diagnostics.push(Diagnostic::error(
                        "annotation-type-mismatch",
                        span,
                        format!("opset import {i} does not exist (there are {})", imports.len()),
                    )),
                }
            }
        }
    }
}

/// `["A", unset, …]`: one optional text per dimension.
fn dim_denotation_list(r: &mut Reader<'_>, value: &ast::AnnotationValue) -> Option<Vec<Option<Str>>> {
    let ast::AnnotationValue::List(items, _) = value else {
        r.text(value);
        return None;
    };
    let mut out = Vec::new();
    for item in items {
        match item {
            ast::AnnotationItem::Value(v @ ast::AnnotationValue::Word(_)) => {
                r.word(v, "unset");
                out.push(None);
            }
            ast::AnnotationItem::Value(v) => out.push(r.text(v)),
            ast::AnnotationItem::Pair(k, _) => out.push(r.text(k)),
        }
    }
    Some(out)
}

/// A name's exact bytes: those of a `b"…"` name, or its text.
fn name_str(n: &ast::Name) -> Str {
    n.bytes.as_ref().map_or_else(|| s(&n.text), |b| Str::from(&b[..]))
}

impl Cx<'_> {
    fn reader(&mut self) -> Reader<'_> {
        Reader { diagnostics: &mut self.out.diagnostics }
    }

    /// A model part embedded as protobuf bytes (`b"…"`), decoded by `decode`.
    fn embedded<T>(
        &mut self,
        entry: &ast::AnnotationEntry,
        decode: impl FnOnce(bytes::Bytes) -> Result<T, onnx_proto::DecodeError>,
    ) -> Option<T> {
        let bytes = self.reader().text(&entry.value)?;
        match decode(bytes.into_bytes()) {
            Ok(v) => Some(v),
            Err(e) => {
                self.bad_embedded(entry, &e);
                None
            }
        }
    }

    fn bad_embedded(&mut self, entry: &ast::AnnotationEntry, e: &onnx_proto::DecodeError) {
        self.error("bad-embedded-proto", entry.span, format!("'{}' does not hold valid protobuf: {e}", entry.key.text));
    }

    fn error(&mut self, code: &'static str, span: Span, message: impl Into<String>) {
        self.out.diagnostics.push(Diagnostic::error(code, span, message));
    }

    // ------------------------------------------------------------ numbers

    fn int<'l>(&mut self, lit: impl Into<LiteralRef<'l>>) -> Option<i64> {
        let lit = lit.into();
        if lit.kind != LiteralKind::Int {
            self.error("type-mismatch", lit.span, format!("expected an integer, found '{}'", lit.text));
            return None;
        }
        match lit.text.parse::<i64>() {
            Ok(v) => Some(v),
            Err(_) => {
                self.error("number-out-of-range", lit.span, format!("{} does not fit in a 64-bit integer", lit.text));
                None
            }
        }
    }

    fn float64<'l>(&mut self, lit: impl Into<LiteralRef<'l>>) -> Option<f64> {
        float_value(lit.into(), self)
    }

    fn float32<'l>(&mut self, lit: impl Into<LiteralRef<'l>>) -> Option<f32> {
        let lit = lit.into();
        if lit.kind == LiteralKind::FloatWord {
            return Some(numbers::float_word_value(lit.text.as_bytes()) as f32);
        }
        if !matches!(lit.kind, LiteralKind::Int | LiteralKind::Float) {
            self.error("type-mismatch", lit.span, format!("expected a number, found '{}'", lit.text));
            return None;
        }
        match lit.text.parse::<f32>() {
            Ok(v) if v.is_finite() => Some(v),
            _ => {
                self.error("number-out-of-range", lit.span, format!("{} is out of range for a 32-bit float", lit.text));
                None
            }
        }
    }

    fn string(&mut self, lit: &Literal) -> Option<Str> {
        if lit.kind == LiteralKind::Bytes {
            return self.reader().bytes_literal(lit);
        }
        if lit.kind != LiteralKind::String {
            self.error("type-mismatch", lit.span, format!("expected a string, found '{}'", lit.text));
            return None;
        }
        Some(s(&lit.text))
    }

    // ------------------------------------------------------------ header

    fn model_header(&mut self, header: &ast::Header) {
        for entry in &header.entries {
            let ast::HeaderEntry::Entry { key, value, .. } = entry else {
                continue;
            };
            match (key.text.as_str(), value) {
                ("ir_version", ast::HeaderValue::Literal(l)) => {
                    let v = self.int(l);
                    self.out.model.ir_version = v.or(self.out.model.ir_version);
                }
                ("model_version", ast::HeaderValue::Literal(l)) => {
                    let v = self.int(l);
                    self.out.model.model_version = v.or(self.out.model.model_version);
                }
                ("producer_name", ast::HeaderValue::Literal(l)) => {
                    if let Some(v) = self.string(l) {
                        self.out.model.producer_name = Some(v);
                    }
                }
                ("producer_version", ast::HeaderValue::Literal(l)) => {
                    if let Some(v) = self.string(l) {
                        self.out.model.producer_version = Some(v);
                    }
                }
                ("domain", ast::HeaderValue::Literal(l)) => {
                    if let Some(v) = self.string(l) {
                        self.out.model.domain = Some(v);
                    }
                }
                ("doc_string", ast::HeaderValue::Literal(l)) => {
                    if let Some(v) = self.string(l) {
                        self.out.model.doc_string = Some(v);
                    }
                }
                ("opset_import", ast::HeaderValue::Pairs(pairs, _)) => {
                    let imports = self.opsets(pairs);
                    self.out.model.opset_import.extend(imports);
                }
                ("metadata_props", ast::HeaderValue::Pairs(pairs, _)) => {
                    let props = self.string_pairs(pairs);
                    self.out.model.metadata_props.extend(props);
                }
                (
                    "ir_version" | "model_version" | "producer_name" | "producer_version" | "domain" | "doc_string",
                    ast::HeaderValue::Pairs(_, span),
                ) => self.error("type-mismatch", *span, format!("'{}' takes a single value, not a list", key.text)),
                ("opset_import" | "metadata_props", ast::HeaderValue::Literal(l)) => {
                    self.error("type-mismatch", l.span, format!("'{}' takes a list: [\"key\": value, …]", key.text))
                }
                (other, _) => self.error(
                    "unknown-header-key",
                    key.span,
                    format!(
                        "unknown model header key '{other}'; expected ir_version, opset_import, producer_name, \
                         producer_version, domain, model_version, doc_string or metadata_props"
                    ),
                ),
            }
        }
    }

    fn opsets(&mut self, pairs: &[(Literal, Literal)]) -> Vec<OpsetImport> {
        let mut out = Vec::new();
        for (k, v) in pairs {
            let domain = self.string(k);
            let version = self.int(v);
            out.push(OpsetImport { domain, version });
        }
        out
    }

    fn string_pairs(&mut self, pairs: &[(Literal, Literal)]) -> Vec<StringPair> {
        let mut out = Vec::new();
        for (k, v) in pairs {
            let key = self.string(k);
            let value = self.string(v);
            out.push(StringPair { key, value });
        }
        out
    }

    // ------------------------------------------------------------ graphs

    fn graph(&mut self, g: &ast::Graph) -> GraphId {
        let mut graph = Graph { name: Some(name_str(&g.name)), ..Graph::default() };
        for entry in annotations::entries(&g.annotations) {
            let mut r = self.reader();
            match entry.key.text.as_str() {
                "doc_string" => graph.doc_string = r.text(&entry.value),
                "metadata_props" => graph.metadata_props.extend(r.pairs(&entry.value).unwrap_or_default()),
                // `unset`, or a name onnx's parser would not take where the graph's name is.
                "name" => match &entry.value {
                    ast::AnnotationValue::Word(_) => {
                        if r.word(&entry.value, "unset").is_some() {
                            graph.name = None;
                        }
                    }
                    value => graph.name = r.text(value),
                },
                "sparse_initializer" => {
                    if let Some(bytes) = r.text(&entry.value) {
                        match embedded::sparse_tensor(&mut self.out.model, bytes.into_bytes()) {
                            Ok(t) => graph.sparse_initializers.push(t),
                            Err(e) => self.bad_embedded(entry, &e),
                        }
                    }
                }
                "quantization_annotation" => {
                    if let Some(a) = self.embedded(entry, embedded::tensor_annotation) {
                        graph.quantization_annotation.push(a);
                    }
                }
                _ => r.unknown(
                    entry,
                    "graph",
                    &["doc_string", "metadata_props", "name", "sparse_initializer", "quantization_annotation"],
                ),
            }
        }
        let mut spans = ValueSpans::default();
        for decl in g.inputs.iter().flatten() {
            let ast::ValueDecl::Decl { annotations, ty, name, init, span } = decl else { continue };
            let mut info = self.value_info(ty.as_ref(), name);
            let tensor = init.as_ref().map(|payload| self.initializer(ty.as_ref(), name, payload.as_ref(), *span));
            self.decl_annotations(annotations, Some(&mut info), tensor);
            graph.inputs.push(info);
            spans.inputs.push(name.span);
            if let Some(t) = tensor {
                graph.initializers.push(t);
                spans.initializers.push(name.span);
            }
        }
        for decl in &g.outputs {
            if let Some((annotations, ty, name)) =
                self.declaration_without_value(decl, "a graph output cannot have a value")
            {
                let mut info = self.value_info(ty, name);
                self.decl_annotations(annotations, Some(&mut info), None);
                graph.outputs.push(info);
                spans.outputs.push(name.span);
            }
        }
        for decl in g.local_decls() {
            let ast::ValueDecl::Decl { annotations, ty, name, init, span } = decl else { continue };
            if let Some(p) = self.progress {
                p.reached(span.start as usize);
            }
            match init {
                Some(payload) => {
                    let t = self.initializer(ty.as_ref(), name, payload.as_ref(), *span);
                    self.decl_annotations(annotations, None, Some(t));
                    graph.initializers.push(t);
                    spans.initializers.push(name.span);
                }
                None => {
                    let mut info = self.value_info(ty.as_ref(), name);
                    self.decl_annotations(annotations, Some(&mut info), None);
                    graph.value_info.push(info);
                    spans.value_info.push(name.span);
                }
            }
        }
        graph.nodes = self.nodes(&g.nodes);
        let id = self.out.model.graphs.alloc(graph);
        self.out.source_map.graphs.insert(id, g.span);
        self.out.source_map.graph_values.insert(id, spans);
        id
    }

    /// Applies a declaration's annotations to its value info and/or its tensor.
    fn decl_annotations(
        &mut self,
        list: &[ast::Annotation],
        mut info: Option<&mut ValueInfo>,
        tensor: Option<TensorId>,
    ) {
        const INFO_KEYS: &[&str] = &["doc_string", "metadata_props", "denotation", "dim_denotation", "name", "type"];
        for entry in annotations::entries(list) {
            let key = entry.key.text.as_str();
            if TENSOR_KEYS.contains(&key) {
                match tensor {
                    Some(t) => self.tensor_annotation(entry, t),
                    None => self.reader().unknown(entry, "value declaration", INFO_KEYS),
                }
                continue;
            }
            let Some(info) = info.as_deref_mut() else {
                self.reader().unknown(entry, "initializer", TENSOR_KEYS);
                continue;
            };
            let mut r = self.reader();
            match key {
                "doc_string" => info.doc_string = r.text(&entry.value),
                "metadata_props" => info.metadata_props.extend(r.pairs(&entry.value).unwrap_or_default()),
                "name" => {
                    if r.word(&entry.value, "unset").is_some() {
                        info.name = None;
                    }
                }
                // A type the text cannot write, embedded; the declaration is untyped.
                "type" => {
                    if let Some(bytes) = r.text(&entry.value) {
                        match embedded::ty(bytes.into_bytes()) {
                            Ok(ty) => info.ty = Some(ty),
                            Err(e) => self.bad_embedded(entry, &e),
                        }
                    }
                }
                "denotation" => {
                    let text = r.text(&entry.value);
                    match info.ty.as_mut() {
                        Some(ty) => ty.denotation = text.map(Box::new),
                        None => {
                            self.error("annotation-needs-type", entry.span, "a denotation needs a type to annotate")
                        }
                    }
                }
                "dim_denotation" => {
                    let denotations = dim_denotation_list(&mut r, &entry.value);
                    let dims = match info.ty.as_mut().and_then(|t| t.value.as_mut()) {
                        Some(TypeValue::Tensor(t) | TypeValue::SparseTensor(t)) => {
                            t.shape.as_mut().map(|s| &mut s.dims)
                        }
                        _ => None,
                    };
                    match (dims, denotations) {
                        (Some(dims), Some(list)) if dims.len() == list.len() => {
                            for (d, text) in dims.iter_mut().zip(list) {
                                d.denotation = text.map(Box::new);
                            }
                        }
                        (_, None) => {}
                        _ => self.error(
                            "annotation-needs-type",
                            entry.span,
                            "dim_denotation needs a tensor type with one entry per dimension",
                        ),
                    }
                }
                _ => r.unknown(entry, "value declaration", INFO_KEYS),
            }
        }
    }

    fn tensor_annotation(&mut self, entry: &ast::AnnotationEntry, id: TensorId) {
        let Lowered { model, diagnostics, .. } = &mut self.out;
        let mut r = Reader { diagnostics };
        let t = &mut model.tensors[id];
        match entry.key.text.as_str() {
            "tensor_doc_string" => t.doc_string = r.text(&entry.value),
            "tensor_metadata_props" => t.metadata_props.extend(r.pairs(&entry.value).unwrap_or_default()),
            "segment" => match r.ints(&entry.value).as_deref() {
                Some(&[begin, end]) => t.segment = Some(Segment { begin: Some(begin), end: Some(end) }),
                Some(_) => self.error("annotation-type-mismatch", entry.span, "a segment is [begin, end]"),
                None => {}
            },
            "raw_data" => {
                t.raw_data = r.text(&entry.value).map(Str::into_bytes);
                self.lists.remove(&id);
            }
            // `unset`, or a name that onnx's parser would not take where the literal has it.
            "tensor_name" => match &entry.value {
                ast::AnnotationValue::Word(_) => {
                    if r.word(&entry.value, "unset").is_some() {
                        t.name = None;
                    }
                }
                value => t.name = r.text(value),
            },
            // A data_location set although the data is not external: `default` (0) or a number.
            // On a reference: the one the tensor gets back once its bytes are read in.
            "data_location" => {
                let value = match &entry.value {
                    ast::AnnotationValue::Word(_) => r.word(&entry.value, "default").map(|_| 0),
                    value => r.int(value).and_then(|v| i32::try_from(v).ok()),
                };
                if value.is_some() {
                    match t.is_external() {
                        true => t.data_location_once_embedded = value,
                        false => t.data_location = value,
                    }
                }
            }
            // The whole tensor, embedded; what the text wrote is a placeholder.
            "tensor_proto" => {
                if let Some(bytes) = r.text(&entry.value) {
                    match embedded::tensor(bytes.into_bytes()) {
                        Ok(decoded) => {
                            *t = decoded;
                            self.lists.remove(&id);
                            self.raw_from_earlier.remove(&id);
                        }
                        Err(e) => self.bad_embedded(entry, &e),
                    }
                }
            }
            // `raw`: the values are stored as raw bytes; on a reference, `typed`: they go back
            // into their typed field once the bytes are read in.
            "storage" => match &entry.value {
                ast::AnnotationValue::Word(w) if w.text == "typed" && t.is_external() => t.typed_once_embedded = true,
                value => {
                    // Holding the earlier version's bytes already: stored raw as they were.
                    if r.word(value, "raw").is_some()
                        && self.raw_from_earlier.remove(&id).is_none()
                        && let Err(message) = tensor_data::typed_to_raw(t)
                    {
                        self.error("bad-raw-storage", entry.span, message);
                    }
                }
            },
            _ => r.unknown(entry, "tensor", TENSOR_KEYS),
        }
    }

    fn value_info(&mut self, ty: Option<&ast::TypeExpr>, name: &ast::Name) -> ValueInfo {
        ValueInfo { name: Some(name_str(name)), ty: ty.map(|t| self.ty(t)), ..ValueInfo::default() }
    }

    /// A declaration where a value (`= …`) is not allowed; reports one if it is there.
    fn declaration_without_value<'t>(
        &mut self,
        decl: &'t ast::ValueDecl,
        message: &str,
    ) -> Option<(&'t [ast::Annotation], Option<&'t ast::TypeExpr>, &'t ast::Name)> {
        let ast::ValueDecl::Decl { annotations, ty, name, init, span } = decl else {
            return None;
        };
        if init.is_some() {
            self.error("unexpected-initializer", *span, message);
        }
        Some((annotations, ty.as_ref(), name))
    }

    fn nodes(&mut self, items: &[ast::NodeItem]) -> Vec<NodeId> {
        items
            .iter()
            .filter_map(|item| match item {
                ast::NodeItem::Node(n) => Some(self.node(n)),
                ast::NodeItem::Error(_) => None,
            })
            .collect()
    }

    fn node(&mut self, n: &ast::Node) -> NodeId {
        if let Some(p) = self.progress {
            p.reached(n.span.start as usize);
        }
        let slot = |slot: &ast::Slot| match slot {
            ast::Slot::Name(name) => (name_str(name), name.span),
            ast::Slot::Empty(span) => (Str::new(), *span),
        };
        let (outputs, output_spans): (NodeOutputs, Vec<Span>) = n.outputs.iter().map(slot).unzip();
        let (inputs, input_spans): (NodeInputs, Vec<Span>) = n.inputs.iter().map(slot).unzip();
        let (domain, op_type) = match n.op.segments.split_last() {
            Some((op, domain)) => {
                (domain.iter().map(|d| d.text.as_str()).collect::<Vec<_>>().join("."), op.text.clone())
            }
            None => {
                self.error("empty-op-type", n.op.span, "expected an operator name before '('");
                (String::new(), String::new())
            }
        };
        let mut attributes = Vec::new();
        let mut attribute_spans = Vec::new();
        if let Some(list) = &n.attributes {
            for item in &list.attributes {
                if let ast::AttrItem::Attr(a) = item {
                    attributes.push(self.attribute(a));
                    attribute_spans.push(a.span);
                }
            }
        }
        let written_domain = n.op.segments.len() > 1;
        let mut node = Node {
            inputs,
            outputs,
            name: n.label.as_ref().map(|l| l.as_ref().map_or_else(Str::new, name_str)),
            op_type: Some(s(&op_type)),
            domain: (written_domain || !self.node_domain_unset).then(|| s(&domain)),
            attributes,
            ..Node::default()
        };
        if let Some(overload) = &n.op.overload {
            node.rare.get_mut().overload = Some(name_str(overload));
        }
        for entry in annotations::entries(&n.annotations) {
            let mut r = self.reader();
            match entry.key.text.as_str() {
                "doc_string" => node.rare.get_mut().doc_string = r.text(&entry.value),
                "metadata_props" => {
                    node.rare.get_mut().metadata_props.extend(r.pairs(&entry.value).unwrap_or_default())
                }
                "domain" => match &entry.value {
                    ast::AnnotationValue::Word(_) => {
                        if r.word(&entry.value, "unset").is_some() {
                            node.domain = None;
                        }
                    }
                    value => node.domain = r.text(value),
                },
                "overload" => node.rare.get_mut().overload = r.text(&entry.value),
                // An operator name the text cannot write (or none): the op written is a
                // placeholder.
                "op_type" => node.op_type = r.text_or_unset(&entry.value),
                "device_configuration" => {
                    if let Some(c) = self.embedded(entry, embedded::node_device_configuration) {
                        node.rare.get_mut().device_configurations.push(c);
                    }
                }
                _ => r.unknown(
                    entry,
                    "node",
                    &["doc_string", "metadata_props", "domain", "overload", "op_type", "device_configuration"],
                ),
            }
        }
        let id = self.out.model.nodes.alloc(node);
        self.out.source_map.nodes.insert(
            id,
            NodeSpans {
                node: n.span,
                op: n.op.span,
                outputs: output_spans,
                inputs: input_spans,
                attributes: attribute_spans,
            },
        );
        id
    }

    // ------------------------------------------------------------ attributes

    /// Lowers an attribute or a function parameter default. onnx swallows errors in
    /// defaults; we report them like anywhere else.
    fn attribute(&mut self, a: &ast::Attribute) -> Attribute {
        let mut attr = Attribute { name: Some(name_str(&a.name)), ..Attribute::default() };
        for entry in annotations::entries(&a.annotations) {
            let mut r = self.reader();
            match entry.key.text.as_str() {
                "doc_string" => attr.doc_string = r.text(&entry.value),
                // The whole attribute, embedded; the value written after `=` is a placeholder.
                "proto" => {
                    if let Some(bytes) = r.text(&entry.value) {
                        match embedded::attribute(&mut self.out.model, bytes.into_bytes()) {
                            Ok(embedded) => return embedded,
                            Err(e) => self.bad_embedded(entry, &e),
                        }
                    }
                }
                _ => r.unknown(entry, "attribute", &["doc_string", "proto"]),
            }
        }
        let annotation = match &a.ty {
            None => None,
            Some(t) => match attribute_type_named(&t.text) {
                Some(ty) => Some(ty),
                None => {
                    self.error(
                        "unknown-attribute-type",
                        t.span,
                        format!(
                            "unknown attribute type '{}'; expected float, int, string, tensor, graph, sparse_tensor, \
                             type_proto or one of their plurals (floats, ints, …)",
                            t.text
                        ),
                    );
                    None
                }
            },
        };
        let Some(value) = &a.value else {
            attr.ty = annotation.map(|t| t as i32);
            return attr;
        };
        let ty = self.attribute_value(&mut attr, annotation, value);
        attr.ty = Some(ty.map_or(0, |t| t as i32));
        attr
    }

    /// Fills the value fields; returns the attribute type the value gives.
    fn attribute_value(
        &mut self,
        attr: &mut Attribute,
        annotation: Option<AttributeType>,
        value: &V,
    ) -> Option<AttributeType> {
        use AttributeType as T;
        let mismatch = |cx: &mut Cx<'_>, found: T, span: Span| {
            if let Some(expected) = annotation {
                cx.error(
                    "attribute-type-mismatch",
                    span,
                    format!("the annotation says {}, but the value is {}", expected.name(), found.name()),
                );
            }
        };
        match value {
            V::Error(_) => annotation,
            V::Literal(lit) => {
                let found = match (lit.kind, annotation) {
                    (LiteralKind::Int, Some(T::Float)) | (LiteralKind::Float | LiteralKind::FloatWord, _) => {
                        attr.f = self.float32(lit);
                        T::Float
                    }
                    (LiteralKind::Int, _) => {
                        attr.i = self.int(lit);
                        T::Int
                    }
                    (LiteralKind::String, _) => {
                        attr.s = Some(s(&lit.text));
                        T::String
                    }
                    (LiteralKind::Bytes, _) => {
                        attr.s = self.string(lit);
                        T::String
                    }
                };
                if annotation.is_some_and(|a| a != found) {
                    mismatch(self, found, lit.span);
                }
                Some(found)
            }
            V::Ref(name, _) => {
                attr.ref_attr_name = Some(name_str(name));
                annotation.or(Some(T::Undefined))
            }
            V::Type(t) => {
                attr.tp = Some(self.ty(t));
                if annotation.is_some_and(|a| a != T::TypeProto) {
                    mismatch(self, T::TypeProto, t.span);
                }
                Some(T::TypeProto)
            }
            V::Tensor(t) => {
                attr.t = Some(self.tensor_literal(t));
                if annotation.is_some_and(|a| a != T::Tensor) {
                    mismatch(self, T::Tensor, t.span);
                }
                Some(T::Tensor)
            }
            V::Graph(g) => {
                attr.g = Some(self.graph(g));
                if annotation.is_some_and(|a| a != T::Graph) {
                    mismatch(self, T::Graph, g.span);
                }
                Some(T::Graph)
            }
            V::List(items, span) => self.list_value(attr, annotation, items, *span),
        }
    }

    fn list_value(
        &mut self,
        attr: &mut Attribute,
        annotation: Option<AttributeType>,
        items: &[V],
        span: Span,
    ) -> Option<AttributeType> {
        use AttributeType as T;
        if items.is_empty() {
            return match annotation {
                Some(
                    t @ (T::Floats | T::Ints | T::Strings | T::Tensors | T::Graphs | T::SparseTensors | T::TypeProtos),
                ) => Some(t),
                Some(_) => {
                    self.error("attribute-type-mismatch", span, "a single-valued attribute cannot be an empty list");
                    annotation
                }
                None => {
                    self.error(
                        "untyped-empty-list",
                        span,
                        "an empty list needs a type annotation, e.g. `name: ints = []`",
                    );
                    None
                }
            };
        }
        // The list type so far; as in onnx, each element is checked against it, so
        // `[1.5, 2]` is floats but `[1, 2.5]` is an error.
        let mut list_type = annotation.map(|a| match a {
            T::Float => T::Floats,
            T::Int => T::Ints,
            T::String => T::Strings,
            T::Tensor => T::Tensors,
            T::Graph => T::Graphs,
            T::TypeProto => T::TypeProtos,
            T::SparseTensor => T::SparseTensors,
            other => other,
        });
        for item in items {
            let found = match item {
                V::Literal(lit) => match (lit.kind, list_type) {
                    (LiteralKind::Int, Some(T::Floats)) | (LiteralKind::Float | LiteralKind::FloatWord, _) => {
                        attr.floats.push(self.float32(lit).unwrap_or(0.0));
                        T::Floats
                    }
                    (LiteralKind::Int, _) => {
                        attr.ints.push(self.int(lit).unwrap_or(0));
                        T::Ints
                    }
                    (LiteralKind::String | LiteralKind::Bytes, _) => {
                        let text = self.string(lit).unwrap_or_default();
                        attr.strings.push(text);
                        T::Strings
                    }
                },
                V::Tensor(t) => {
                    let id = self.tensor_literal(t);
                    attr.tensors.push(id);
                    T::Tensors
                }
                V::Graph(g) => {
                    let id = self.graph(g);
                    attr.graphs.push(id);
                    T::Graphs
                }
                V::Type(t) => {
                    let ty = self.ty(t);
                    attr.type_protos.push(ty);
                    T::TypeProtos
                }
                V::Ref(_, span) => {
                    self.error("ref-in-list", *span, "an attribute reference (@name) cannot be a list element");
                    continue;
                }
                V::List(_, span) => {
                    self.error("nested-list", *span, "attribute lists cannot be nested");
                    continue;
                }
                V::Error(_) => continue,
            };
            match list_type {
                Some(t) if t != found => {
                    self.error(
                        "attribute-type-mismatch",
                        item.span(),
                        format!("this list holds {}, but this element is of {}", t.name(), found.name()),
                    );
                }
                _ => list_type = Some(found),
            }
        }
        list_type
    }

    // ------------------------------------------------------------ types

    fn elem(&mut self, name: &ast::Name) -> i32 {
        DataType::from_name(&name.text).map_or(0, DataType::code)
    }

    fn ty(&mut self, t: &ast::TypeExpr) -> Type {
        let value = match &t.kind {
            ast::TypeKind::Tensor { elem, shape } => {
                TypeValue::Tensor(TensorType { elem_type: Some(self.elem(elem)), shape: self.shape(shape.as_deref()) })
            }
            ast::TypeKind::SparseTensor { elem, shape } => TypeValue::SparseTensor(TensorType {
                elem_type: Some(self.elem(elem)),
                shape: self.shape(shape.as_deref()),
            }),
            ast::TypeKind::Sequence(inner) => TypeValue::Sequence(Some(Box::new(self.ty(inner)))),
            ast::TypeKind::Optional(inner) => TypeValue::Optional(Some(Box::new(self.ty(inner)))),
            ast::TypeKind::Map(key, value) => {
                TypeValue::Map { key_type: Some(self.elem(key)), value_type: Some(Box::new(self.ty(value))) }
            }
            ast::TypeKind::Opaque { domain_or_name, name } => {
                let dotted = domain_or_name.iter().map(|n| n.text.as_str()).collect::<Vec<_>>().join(".");
                match name {
                    Some(n) => {
                        TypeValue::Opaque { domain: Some(Box::new(s(&dotted))), name: Some(Box::new(name_str(n))) }
                    }
                    None if dotted.is_empty() => TypeValue::Opaque { domain: None, name: None },
                    None => TypeValue::Opaque { domain: None, name: Some(Box::new(s(&dotted))) },
                }
            }
        };
        Type { value: Some(value), denotation: None }
    }

    /// No brackets: a scalar (shape with no dims). `[]`: unknown rank (no shape).
    fn shape(&mut self, dims: Option<&[ast::Dim]>) -> Option<Shape> {
        match dims {
            None => Some(Shape::default()),
            Some([]) => None,
            Some(dims) => Some(Shape {
                dims: dims
                    .iter()
                    .map(|d| Dimension {
                        value: match d {
                            ast::Dim::Unknown(_) => None,
                            ast::Dim::Param(n) => Some(DimValue::Param(name_str(n))),
                            ast::Dim::Value(lit) => self.int(lit).map(DimValue::Value),
                        },
                        denotation: None,
                    })
                    .collect(),
            }),
        }
    }

    // ------------------------------------------------------------ tensors

    fn initializer(
        &mut self,
        ty: Option<&ast::TypeExpr>,
        name: &ast::Name,
        payload: Option<&ast::TensorPayload>,
        span: Span,
    ) -> TensorId {
        let tensor = match ty {
            Some(ty) => self.tensor(ty, Some(name_str(name)), payload),
            None => {
                self.error(
                    "initializer-needs-type",
                    span,
                    format!("the initializer '{}' needs a tensor type", name.text),
                );
                Tensor { name: Some(name_str(name)), ..Tensor::default() }
            }
        };
        self.alloc_tensor(tensor)
    }

    /// Adds a lowered tensor to the model, recording where its number list starts.
    fn alloc_tensor(&mut self, mut tensor: Tensor) -> TensorId {
        let from_earlier = self.earlier_raw.take().map(|(bytes, run)| {
            tensor.raw_data = Some(bytes);
            run
        });
        let id = self.out.model.tensors.alloc(tensor);
        if let Some(run) = from_earlier {
            self.raw_from_earlier.insert(id, run);
        }
        if let Some(start) = self.bulk_list.take() {
            self.lists.insert(id, start);
        }
        id
    }

    /// The end of lowering: the number lists recorded in the source map, and the tensors
    /// that took an earlier version's raw bytes but are not stored raw now given their
    /// values, read from the text (bytes back to values would not give back a value that
    /// did not fit the type).
    fn finish_tensors(&mut self) {
        let earlier = self.earlier.take();
        for (id, run) in std::mem::take(&mut self.raw_from_earlier) {
            let mut tensor = std::mem::take(&mut self.out.model.tensors[id]);
            tensor.raw_data = None;
            if let Some(dt) = tensor.elem_type() {
                self.tensor_values(&mut tensor, dt, &ast::Values::Run(run));
            }
            self.out.model.tensors[id] = tensor;
        }
        self.bulk_list = None;
        self.earlier = earlier;
        for (id, start) in self.lists.drain() {
            self.out.source_map.number_lists.insert(start, id);
        }
    }

    fn tensor_literal(&mut self, t: &ast::TensorLit) -> TensorId {
        // onnx sets the name, to "" when none is written.
        let name = Some(t.name.as_ref().map_or_else(Str::new, name_str));
        let tensor = self.tensor(&t.ty, name, t.payload.as_ref());
        let id = self.alloc_tensor(tensor);
        for entry in annotations::entries(&t.annotations) {
            self.tensor_annotation(entry, id);
        }
        id
    }

    fn tensor(&mut self, ty: &ast::TypeExpr, name: Option<Str>, payload: Option<&ast::TensorPayload>) -> Tensor {
        self.bulk_list = None;
        self.earlier_raw = None;
        let mut tensor = Tensor { name, ..Tensor::default() };
        let ast::TypeKind::Tensor { elem, shape } = &ty.kind else {
            self.error("tensor-needs-tensor-type", ty.span, "a tensor value needs a tensor type such as float[2, 3]");
            return tensor;
        };
        let data_type = DataType::from_name(&elem.text);
        tensor.data_type = data_type.map(DataType::code);
        match shape {
            None => {}
            Some(dims) if dims.is_empty() => {
                self.error("tensor-needs-shape", ty.span, "a tensor value needs a shape; `[]` means an unknown rank");
            }
            Some(dims) => {
                for d in dims {
                    match d {
                        ast::Dim::Value(lit) => tensor.dims.extend(self.int(lit)),
                        ast::Dim::Param(n) => self.error(
                            "tensor-needs-numeric-dims",
                            n.span,
                            format!("a tensor value needs numeric dimensions, found '{}'", n.text),
                        ),
                        ast::Dim::Unknown(span) => self.error(
                            "tensor-needs-numeric-dims",
                            *span,
                            "a tensor value needs numeric dimensions, found '?'",
                        ),
                    }
                }
            }
        }
        match payload {
            None => {}
            Some(ast::TensorPayload::External(pairs, _)) => {
                tensor.external_data = self.string_pairs(pairs);
                tensor.data_location = Some(DATA_LOCATION_EXTERNAL);
            }
            Some(ast::TensorPayload::Values(values, _)) => {
                if let Some(dt) = data_type {
                    self.tensor_values(&mut tensor, dt, values);
                }
            }
        }
        tensor
    }

    fn tensor_values(&mut self, tensor: &mut Tensor, dt: DataType, values: &ast::Values) {
        let count = values.len();
        // Lists of plain numbers convert in bulk; a list with a value to report goes value
        // by value below.
        let run = match values {
            ast::Values::Run(run) => Some(run),
            ast::Values::Listed(_) => None,
        };
        if let Some(run) = run
            && self.values_from_earlier(tensor, dt, run)
        {
            self.bulk_list = Some(run.start);
            return;
        }
        // Read in one go below (the per-value paths return without this).
        self.bulk_list = run.map(|r| r.start);
        match dt.typed_field() {
            TypedField::FloatData => {
                let read = run.and_then(|r| self.floats.take(r.start)).filter(|v| v.len() == count);
                if let Some(all) = read.or_else(|| run.and_then(|r| r.read_all(self.source))) {
                    tensor.float_data = all;
                    return;
                }
                tensor.float_data.reserve_exact(count);
                for v in values.iter(self.source) {
                    let value = self.float32(v).unwrap_or(0.0);
                    tensor.float_data.push(value);
                }
            }
            TypedField::DoubleData => {
                if let Some(all) = run.and_then(|r| r.read_all(self.source)) {
                    tensor.double_data = all;
                    return;
                }
                tensor.double_data.reserve_exact(count);
                for v in values.iter(self.source) {
                    let value = self.float64(v).unwrap_or(0.0);
                    tensor.double_data.push(value);
                }
            }
            TypedField::Int64Data => {
                if let Some(all) = run.and_then(|r| r.read_all(self.source)) {
                    tensor.int64_data = all;
                    return;
                }
                tensor.int64_data.reserve_exact(count);
                for v in values.iter(self.source) {
                    let value = self.int(v).unwrap_or(0);
                    tensor.int64_data.push(value);
                }
            }
            TypedField::Uint64Data => {
                tensor.uint64_data.reserve_exact(count);
                for v in values.iter(self.source) {
                    let value = self.uint64(v).unwrap_or(0);
                    tensor.uint64_data.push(value);
                }
            }
            TypedField::Int32Data => {
                if let Some(all) = run.and_then(|r| r.read_all(self.source)) {
                    tensor.int32_data = all;
                    return;
                }
                tensor.int32_data.reserve_exact(count);
                for v in values.iter(self.source) {
                    let value = self.int(v).and_then(|i| match i32::try_from(i) {
                        Ok(i) => Some(i),
                        Err(_) => {
                            self.error("number-out-of-range", v.span, format!("{} does not fit in 32 bits", v.text));
                            None
                        }
                    });
                    tensor.int32_data.push(value.unwrap_or(0));
                }
            }
            TypedField::StringData => match values {
                ast::Values::Listed(list) => {
                    for v in list {
                        let value = self.string(v).unwrap_or_default();
                        tensor.string_data.push(value);
                    }
                }
                ast::Values::Run(run) => {
                    for v in run.iter(self.source) {
                        self.error("type-mismatch", v.span, format!("expected a string, found '{}'", v.text));
                        tensor.string_data.push(Str::default());
                    }
                }
            },
            TypedField::None => {}
        }
        // Read value by value (or not at all): the list is not one to take from next time.
        self.bulk_list = None;
    }

    /// Takes the values of `run` from the earlier version's tensor that read the same
    /// list, when the edit left the list alone and the element type is the same; `false`
    /// when they must be read.
    fn values_from_earlier(&mut self, tensor: &mut Tensor, dt: DataType, run: &ast::NumberRun) -> bool {
        let Some(earlier) = self.earlier else { return false };
        let Some(old_start) = earlier.edit.untouched_before(run.start, run.end) else { return false };
        let Some(&id) = earlier.source_map.number_lists.get(&old_start) else { return false };
        let old = &earlier.model.tensors[id];
        if old.data_type != tensor.data_type {
            return false;
        }
        let count = run.count as usize;
        // Stored raw there (`#@ storage: raw`): the bytes are shared, not copied.
        if let Some(raw) = &old.raw_data
            && tensor_data::has_no_typed_values(old)
            && tensor_data::converts_raw(dt)
            && raw.len() == count * (dt.bits() as usize / 8)
            && !matches!(dt, DataType::Complex64 | DataType::Complex128)
        {
            self.earlier_raw = Some((raw.clone(), run.clone()));
            return true;
        }
        match dt.typed_field() {
            TypedField::FloatData if old.float_data.len() == count => tensor.float_data = old.float_data.clone(),
            TypedField::DoubleData if old.double_data.len() == count => tensor.double_data = old.double_data.clone(),
            TypedField::Int64Data if old.int64_data.len() == count => tensor.int64_data = old.int64_data.clone(),
            TypedField::Int32Data if old.int32_data.len() == count => tensor.int32_data = old.int32_data.clone(),
            _ => return false,
        }
        true
    }

    /// Unsigned values; a negative literal wraps as onnx's `stoull` does (`-1` → 2^64−1).
    fn uint64(&mut self, lit: LiteralRef<'_>) -> Option<u64> {
        if lit.kind != LiteralKind::Int {
            self.error("type-mismatch", lit.span, format!("expected an integer, found '{}'", lit.text));
            return None;
        }
        let parsed = match lit.text.strip_prefix('-') {
            Some(digits) => digits.parse::<u64>().ok().map(u64::wrapping_neg),
            None => lit.text.parse::<u64>().ok(),
        };
        if parsed.is_none() {
            self.error(
                "number-out-of-range",
                lit.span,
                format!("{} does not fit in a 64-bit unsigned integer", lit.text),
            );
        }
        parsed
    }

    // ------------------------------------------------------------ functions

    fn function(&mut self, f: &ast::Function) -> FunctionId {
        let mut function = Function { name: Some(name_str(&f.name)), ..Function::default() };
        if let Some(header) = &f.header {
            for entry in &header.entries {
                let ast::HeaderEntry::Entry { key, value, .. } = entry else {
                    continue;
                };
                match (key.text.as_str(), value) {
                    ("domain", ast::HeaderValue::Literal(l)) => function.domain = self.string(l),
                    ("doc_string", ast::HeaderValue::Literal(l)) => function.doc_string = self.string(l),
                    ("overload", ast::HeaderValue::Literal(l)) => function.overload = self.string(l),
                    ("opset_import", ast::HeaderValue::Pairs(pairs, _)) => {
                        let imports = self.opsets(pairs);
                        function.opset_import.extend(imports);
                    }
                    (other, _) => self.error(
                        "unknown-header-key",
                        key.span,
                        format!("unknown function header key '{other}'; expected domain, overload, doc_string or opset_import"),
                    ),
                }
            }
        }
        for item in f.params.iter().flatten() {
            let ast::AttrItem::Attr(a) = item else {
                continue;
            };
            if a.value.is_some() {
                let attr = self.attribute(a);
                function.attribute_protos.push(attr);
            } else {
                function.attributes.push(name_str(&a.name));
            }
        }
        let mut io_spans = (Vec::new(), Vec::new());
        let mut typed_io = Vec::new();
        for (decls, names, spans) in
            [(&f.inputs, &mut function.inputs, &mut io_spans.0), (&f.outputs, &mut function.outputs, &mut io_spans.1)]
        {
            for decl in decls {
                let message = "function inputs and outputs cannot have values";
                let Some((annotations, ty, name)) = self.declaration_without_value(decl, message) else {
                    continue;
                };
                names.push(name_str(name));
                spans.push(name.span);
                if ty.is_some() {
                    typed_io.push((annotations, ty, name));
                } else {
                    self.decl_annotations(annotations, None, None);
                }
            }
        }
        // As in onnx: typed inputs, then typed outputs, then the locals become value_info.
        for (annotations, ty, name) in typed_io {
            let mut info = self.value_info(ty, name);
            self.decl_annotations(annotations, Some(&mut info), None);
            function.value_info.push(info);
        }
        for decl in f.locals.iter().flatten() {
            let message = "functions cannot have initializers";
            if let Some((annotations, ty, name)) = self.declaration_without_value(decl, message) {
                let mut info = self.value_info(ty, name);
                self.decl_annotations(annotations, Some(&mut info), None);
                function.value_info.push(info);
            }
        }
        let mut opset_unset = OpsetUnset::default();
        for entry in annotations::entries(&f.annotations) {
            let mut r = self.reader();
            if opset_unset.read(&mut r, entry) {
                continue;
            }
            match entry.key.text.as_str() {
                "metadata_props" => function.metadata_props.extend(r.pairs(&entry.value).unwrap_or_default()),
                "name" => {
                    if r.word(&entry.value, "unset").is_some() {
                        function.name = None;
                    }
                }
                _ => r.unknown(
                    entry,
                    "function",
                    &["metadata_props", "name", "opset_unset_domain", "opset_unset_version"],
                ),
            }
        }
        opset_unset.apply(&mut function.opset_import, &mut self.reader(), f.span);
        function.nodes = self.nodes(&f.nodes);
        let id = self.out.model.function_store.alloc(function);
        self.out.source_map.functions.insert(id, f.span);
        self.out.source_map.function_io.insert(id, io_spans);
        id
    }
}

fn float_value(lit: LiteralRef<'_>, cx: &mut Cx<'_>) -> Option<f64> {
    match lit.kind {
        LiteralKind::FloatWord => Some(numbers::float_word_value(lit.text.as_bytes())),
        LiteralKind::Int | LiteralKind::Float => match lit.text.parse::<f64>() {
            Ok(v) if v.is_finite() => Some(v),
            _ => {
                cx.error("number-out-of-range", lit.span, format!("{} is out of range for a 64-bit float", lit.text));
                None
            }
        },
        LiteralKind::String | LiteralKind::Bytes => {
            cx.error("type-mismatch", lit.span, format!("expected a number, found {}", lit.text));
            None
        }
    }
}

fn attribute_type_named(name: &str) -> Option<AttributeType> {
    use AttributeType as T;
    Some(match name {
        "float" => T::Float,
        "int" => T::Int,
        "string" => T::String,
        "tensor" => T::Tensor,
        "graph" => T::Graph,
        "sparse_tensor" => T::SparseTensor,
        "type_proto" => T::TypeProto,
        "floats" => T::Floats,
        "ints" => T::Ints,
        "strings" => T::Strings,
        "tensors" => T::Tensors,
        "graphs" => T::Graphs,
        "sparse_tensors" => T::SparseTensors,
        "type_protos" => T::TypeProtos,
        _ => return None,
    })
}
