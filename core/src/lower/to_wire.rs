//! IR → protobuf bytes, written directly.
//!
//! [`to_proto`](super::to_proto) builds prost's message tree and prost encodes it; for a
//! big graph that is a second copy of the model (a heap object per node, value and
//! dimension) built only to be walked and freed, and prost asks every nested message for
//! its length again at each level. Here the IR is walked once, in field-number order as
//! protobuf serializers write (so the bytes are the ones onnx writes), and each nested
//! message's length is patched in after its body: one byte is reserved, which is enough for
//! bodies under 128 bytes (nodes, dimensions, value infos); a longer body is moved right to
//! make room for its longer length. The corpus round trip checks the bytes against the
//! files onnx wrote, and against prost's encoding of the same model.

use std::borrow::Borrow;

use onnx_proto::fields::{
    attribute, device_configuration, function, graph, int_int_list_entry, model, node, node_device_configuration,
    operator_set_id, sharded_dim, sharding_spec, simple_sharded_dim, sparse_tensor, string_string_entry, tensor,
    tensor_annotation, tensor_shape, training_info, type_proto, value_info,
};

use crate::ir::*;

/// Protobuf wire types.
const VARINT: u32 = 0;
const LEN: u32 = 2;
const FIXED32: u32 = 5;

/// Encodes a whole model.
pub fn model(model: &Model) -> Vec<u8> {
    let mut w = Writer::new(model, Vec::with_capacity(size_hint(model)));
    w.model();
    w.out
}

/// Encodes a whole model for writing out: the same bytes as [`model`], but runs of tensor
/// values of at least [`SPLICE_FROM`] bytes (raw data, and typed floats on little-endian
/// machines) are not copied into the encoding: it refers to them where they are in the
/// model, and [`Encoded::write_to`] writes them from there. A parsed text's values are then
/// written straight from where the parser put them, without a second buffer the size of
/// the model.
pub fn model_spliced(model: &Model) -> Encoded<'_> {
    let mut w = Writer::new(model, Vec::with_capacity(size_hint(model).min(64 << 20)));
    w.splices = Some(Splices::default());
    w.model();
    Encoded { head: w.out, runs: w.splices.map(|s| s.runs).unwrap_or_default() }
}

/// A model's encoding as bytes of its own with runs of the model's bytes spliced in.
#[derive(Debug)]
pub struct Encoded<'m> {
    head: Vec<u8>,
    /// Where in `head` each run goes (in order), and the run.
    runs: Vec<(usize, &'m [u8])>,
}

impl Encoded<'_> {
    /// The length of the encoding.
    pub fn len(&self) -> usize {
        self.head.len() + self.runs.iter().map(|(_, run)| run.len()).sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the encoding, runs from where they are.
    pub fn write_to(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut written = 0;
        for &(at, run) in &self.runs {
            out.write_all(&self.head[written..at])?;
            out.write_all(run)?;
            written = at;
        }
        out.write_all(&self.head[written..])
    }

    /// The encoding in one buffer.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut all = Vec::with_capacity(self.len());
        // Writing into a vector cannot fail.
        let _infallible = self.write_to(&mut all);
        all
    }
}

/// Runs of tensor bytes at least this long are spliced rather than copied (short in the
/// unit tests, so that every corpus model has runs in messages of every length width).
pub const SPLICE_FROM: usize = if cfg!(test) { 64 } else { 1 << 20 };

/// The runs an encoding refers to instead of copying them.
#[derive(Default)]
struct Splices<'m> {
    runs: Vec<(usize, &'m [u8])>,
    /// Their total length.
    len: usize,
}

/// Encodes a standalone tensor.
pub fn tensor(t: &Tensor) -> Vec<u8> {
    // The tensor is in no model; an empty one (no allocation) stands in, never read.
    let model = Model::default();
    let mut w = Writer::new(&model, Vec::new());
    w.tensor_fields(t);
    w.out
}

/// Encodes value descriptions as the `field` entries of a graph ([`graph::VALUE_INFO`]), for
/// appending to an encoded graph, in consecutive pieces of bytes: a long list (`onnx
/// infer` of a big graph adds one per node output) is encoded a piece per core, and the
/// caller appends the pieces in order where they go (no copy to put them together first).
pub fn value_info_pieces(field: u32, values: &[ValueInfo]) -> Vec<Vec<u8>> {
    in_pieces(values, |w, values| w.value_infos(field, values))
}

/// Value descriptions of only a name and a type, as the `field` entries of a graph (the
/// same bytes as value infos holding just those two), appended to `out`: a piece of the
/// list as [`value_info_pieces`] gives them.
pub fn described_values<'t>(field: u32, values: impl Iterator<Item = (&'t Str, &'t Type)>, out: Vec<u8>) -> Vec<u8> {
    // Value descriptions hold no ids: an empty model (no allocation) stands in, never read.
    let model = Model::default();
    let mut w = Writer::new(&model, out);
    w.described_values(field, values);
    w.out
}

/// The encodings of the last few distinct types met. A big graph describes a few types
/// over and over (a layer's activations, the shapes its `Shape` nodes give): comparing a
/// type with these costs a fraction of encoding it, nested messages and all, again.
#[derive(Default)]
struct RecentTypes<'t> {
    entries: [(Option<&'t Type>, Vec<u8>); RECENT_TYPES],
    /// The entry the next new type replaces.
    next: usize,
}

const RECENT_TYPES: usize = 4;

impl<'t> RecentTypes<'t> {
    /// `ty` as a TypeProto's bytes.
    fn encoded(&mut self, model: &Model, ty: &'t Type) -> &[u8] {
        let known =
            self.entries.iter().position(|(seen, _)| seen.is_some_and(|seen| std::ptr::eq(seen, ty) || seen == ty));
        let at = known.unwrap_or_else(|| {
            let at = self.next;
            self.next = (at + 1) % RECENT_TYPES;
            let (seen, bytes) = &mut self.entries[at];
            let mut w = Writer::new(model, std::mem::take(bytes));
            w.out.clear();
            w.ty(ty);
            *seen = Some(ty);
            *bytes = w.out;
            at
        });
        &self.entries[at].1
    }
}

/// Encodes `values` with `write`, a piece per core when the list is long.
fn in_pieces<T: Sync>(values: &[T], write: impl Fn(&mut Writer<'_>, &[T]) + Sync) -> Vec<Vec<u8>> {
    let encode = |(values, out): (&[T], Vec<u8>)| {
        // Value descriptions hold no ids: an empty model (no allocation) stands in, never read.
        let model = Model::default();
        let mut w = Writer::new(&model, out);
        write(&mut w, values);
        w.out
    };
    // Each piece's buffer comes from this thread's heap, whose pages are in use already,
    // not from a new thread's empty one (which would fault fresh pages in).
    let room = |values: &[T]| room_for_descriptions(values.len());
    let cores = onnx_threads::cores();
    if values.len() < PARALLEL_VALUE_INFOS || cores < 2 {
        return vec![encode((values, room(values)))];
    }
    let pieces: Vec<_> = values.chunks(values.len().div_ceil(cores)).map(|piece| (piece, room(piece))).collect();
    onnx_threads::map_in_order(pieces, encode)
}

/// How many value descriptions make a list worth encoding on several cores.
pub const PARALLEL_VALUE_INFOS: usize = 4096;

/// Appends `value` as a protobuf varint.
#[inline]
pub fn push_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// About how many bytes a value description takes encoded (a name, an element type, a
/// few dims): what output buffers are sized by.
const DESCRIPTION_BYTES: usize = 40;

/// An empty buffer with room for `count` encoded value descriptions.
pub fn room_for_descriptions(count: usize) -> Vec<u8> {
    Vec::with_capacity(count.saturating_mul(DESCRIPTION_BYTES))
}

/// A first guess at the encoded size, so that the output is rarely regrown: raw tensor
/// bytes plus a few dozen bytes per node and per value description (`onnx infer` adds one
/// per node output; without them in the guess, the megabyte of a big model's output was
/// copied once more).
fn size_hint(model: &Model) -> usize {
    // Values held in typed fields count too (a parsed text holds them there): without them
    // the buffer of a big parsed model grew by doubling, each step copying everything and
    // faulting in fresh pages. An overestimate costs nothing: pages never written are never
    // backed by memory.
    let raw: usize = model
        .tensors
        .values()
        .map(|t| {
            let fixed = t.float_data.len() * 4 + t.double_data.len() * 8;
            let varints = (t.int32_data.len() + t.int64_data.len() + t.uint64_data.len()) * 10;
            let strings: usize = t.string_data.iter().map(|s| s.len() + 5).sum();
            // Keys, lengths, dims and name: a tensor's own bytes beside its values.
            let head = 64 + t.dims.len() * 11 + t.name.as_ref().map_or(0, |n| n.len());
            t.raw_data.as_ref().map_or(0, |r| r.len()) + fixed + varints + strings + head
        })
        .sum();
    let described: usize = model.graphs.values().map(|g| g.value_info.len() + g.inputs.len() + g.outputs.len()).sum();
    raw.saturating_add(model.nodes.len().saturating_mul(48))
        .saturating_add(described.saturating_mul(DESCRIPTION_BYTES))
        .saturating_add(64 * 1024)
}

fn varint_len(value: u64) -> usize {
    // Each byte carries seven bits; zero still takes one byte.
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

struct Writer<'m> {
    model: &'m Model,
    out: Vec<u8>,
    /// When set, long runs of the model's bytes are referred to, not copied.
    splices: Option<Splices<'m>>,
}

impl<'m> Writer<'m> {
    fn new(model: &'m Model, out: Vec<u8>) -> Self {
        Writer { model, out, splices: None }
    }

    /// The length of what is encoded so far, spliced runs included.
    fn len(&self) -> usize {
        self.out.len() + self.splices.as_ref().map_or(0, |s| s.len)
    }

    /// Appends a run of the model's bytes: referred to when splicing and long, else copied.
    fn run(&mut self, bytes: &'m [u8]) {
        match &mut self.splices {
            Some(splices) if bytes.len() >= SPLICE_FROM => {
                splices.runs.push((self.out.len(), bytes));
                splices.len += bytes.len();
            }
            _ => self.out.extend_from_slice(bytes),
        }
    }

    fn varint(&mut self, value: u64) {
        push_varint(&mut self.out, value);
    }

    fn key(&mut self, field: u32, wire_type: u32) {
        self.varint(u64::from(field << 3 | wire_type));
    }

    fn int64(&mut self, field: u32, value: Option<i64>) {
        if let Some(v) = value {
            self.key(field, VARINT);
            self.varint(v as u64);
        }
    }

    /// `int32` and enums: a negative value is sign-extended to ten bytes, as protobuf says.
    fn int32(&mut self, field: u32, value: Option<i32>) {
        self.int64(field, value.map(i64::from));
    }

    fn float(&mut self, field: u32, value: Option<f32>) {
        if let Some(v) = value {
            self.key(field, FIXED32);
            self.out.extend_from_slice(&v.to_le_bytes());
        }
    }

    fn described_values<'t>(&mut self, field: u32, values: impl Iterator<Item = (&'t Str, &'t Type)>) {
        let mut recent = RecentTypes::default();
        for (name, ty) in values {
            let ty = recent.encoded(self.model, ty);
            self.message(field, |w| {
                w.text(value_info::NAME, &Some(name));
                w.bytes(value_info::TYPE, ty);
            });
        }
    }

    fn bytes(&mut self, field: u32, value: &[u8]) {
        self.key(field, LEN);
        self.varint(value.len() as u64);
        self.out.extend_from_slice(value);
    }

    /// An optional text field (`Str`, or `Box<Str>` for the rare ones the IR boxes).
    fn text<S: Borrow<Str>>(&mut self, field: u32, value: &Option<S>) {
        if let Some(s) = value {
            self.bytes(field, s.borrow().as_bytes());
        }
    }

    fn texts(&mut self, field: u32, values: &[Str]) {
        for s in values {
            self.bytes(field, s.as_bytes());
        }
    }

    /// A repeated int64 field that onnx.proto does not declare packed: one key per value.
    fn unpacked_int64s(&mut self, field: u32, values: &[i64]) {
        for &v in values {
            self.int64(field, Some(v));
        }
    }

    /// A packed repeated varint field (`int32` values sign-extended, as for one value).
    fn packed_varints(&mut self, field: u32, values: impl Iterator<Item = u64> + Clone) {
        let len: usize = values.clone().map(varint_len).sum();
        if len == 0 {
            return;
        }
        self.key(field, LEN);
        self.varint(len as u64);
        self.out.reserve(len);
        for v in values {
            self.varint(v);
        }
    }

    /// A packed repeated fixed-width field, given as little-endian bytes per value.
    fn packed_fixed<const N: usize, T: bytemuck::Pod>(
        &mut self,
        field: u32,
        values: &'m [T],
        le: impl Fn(T) -> [u8; N],
    ) {
        if values.is_empty() {
            return;
        }
        self.key(field, LEN);
        self.varint((values.len() * N) as u64);
        if cfg!(target_endian = "little") {
            // In memory the values already are their little-endian bytes: one copy (value
            // by value, each with its capacity check, was the encoding's slowest part for a
            // parsed text, whose floats are in typed fields).
            self.run(bytemuck::cast_slice(values));
        } else {
            self.out.reserve(values.len() * N);
            for &v in values {
                self.out.extend_from_slice(&le(v));
            }
        }
    }

    /// A nested message: its key, then its length, then the body `fill` writes.
    fn message(&mut self, field: u32, fill: impl FnOnce(&mut Self)) {
        self.key(field, LEN);
        let at = self.out.len();
        let start = self.len();
        self.out.push(0);
        fill(self);
        let body = self.len() - start - 1;
        let width = varint_len(body as u64);
        if width > 1 {
            // Move the body right to make room for the longer length (rare: only bodies of
            // 128 bytes and more, and each is moved once per enclosing level), and the runs
            // spliced into it with it.
            let own_bytes = self.out.len() - at - 1;
            self.out.resize(self.out.len() + width - 1, 0);
            self.out.copy_within(at + 1..at + 1 + own_bytes, at + width);
            if let Some(splices) = &mut self.splices {
                for (run_at, _) in splices.runs.iter_mut().rev().take_while(|(run_at, _)| *run_at > at) {
                    *run_at += width - 1;
                }
            }
        }
        let mut value = body as u64;
        for slot in &mut self.out[at..at + width] {
            *slot = (value as u8 & 0x7f) | if value >= 0x80 { 0x80 } else { 0 };
            value >>= 7;
        }
    }

    fn pairs(&mut self, field: u32, pairs: &[StringPair]) {
        for p in pairs {
            self.message(field, |w| {
                w.text(string_string_entry::KEY, &p.key);
                w.text(string_string_entry::VALUE, &p.value);
            });
        }
    }

    fn opsets(&mut self, field: u32, imports: &[OpsetImport]) {
        for o in imports {
            self.message(field, |w| {
                w.text(operator_set_id::DOMAIN, &o.domain);
                w.int64(operator_set_id::VERSION, o.version);
            });
        }
    }

    fn model(&mut self) {
        let m = self.model;
        self.int64(model::IR_VERSION, m.ir_version);
        self.text(model::PRODUCER_NAME, &m.producer_name);
        self.text(model::PRODUCER_VERSION, &m.producer_version);
        self.text(model::DOMAIN, &m.domain);
        self.int64(model::MODEL_VERSION, m.model_version);
        self.text(model::DOC_STRING, &m.doc_string);
        if let Some(g) = m.graph {
            self.message(model::GRAPH, |w| w.graph(g));
        }
        self.opsets(model::OPSET_IMPORT, &m.opset_import);
        self.pairs(model::METADATA_PROPS, &m.metadata_props);
        for t in &m.training_info {
            self.message(model::TRAINING_INFO, |w| {
                if let Some(g) = t.initialization {
                    w.message(training_info::INITIALIZATION, |w| w.graph(g));
                }
                if let Some(g) = t.algorithm {
                    w.message(training_info::ALGORITHM, |w| w.graph(g));
                }
                w.pairs(training_info::INITIALIZATION_BINDING, &t.initialization_binding);
                w.pairs(training_info::UPDATE_BINDING, &t.update_binding);
            });
        }
        for &f in &m.functions {
            self.message(model::FUNCTIONS, |w| w.function(f));
        }
        for c in &m.configuration {
            self.message(model::CONFIGURATION, |w| {
                w.text(device_configuration::NAME, &c.name);
                w.int32(device_configuration::NUM_DEVICES, c.num_devices);
                w.texts(device_configuration::DEVICE, &c.device);
            });
        }
    }

    fn graph(&mut self, id: GraphId) {
        let g = &self.model.graphs[id];
        for &n in &g.nodes {
            self.message(graph::NODE, |w| w.node(n));
        }
        self.text(graph::NAME, &g.name);
        for &t in &g.initializers {
            self.message(graph::INITIALIZER, |w| w.tensor(t));
        }
        self.text(graph::DOC_STRING, &g.doc_string);
        self.value_infos(graph::INPUT, &g.inputs);
        self.value_infos(graph::OUTPUT, &g.outputs);
        self.value_infos(graph::VALUE_INFO, &g.value_info);
        for a in &g.quantization_annotation {
            self.message(graph::QUANTIZATION_ANNOTATION, |w| {
                w.text(tensor_annotation::TENSOR_NAME, &a.tensor_name);
                w.pairs(tensor_annotation::QUANT_PARAMETER_TENSOR_NAMES, &a.quant_parameter_tensor_names);
            });
        }
        for s in &g.sparse_initializers {
            self.message(graph::SPARSE_INITIALIZER, |w| w.sparse(s));
        }
        self.pairs(graph::METADATA_PROPS, &g.metadata_props);
    }

    fn node(&mut self, id: NodeId) {
        let n = &self.model.nodes[id];
        self.texts(node::INPUT, &n.inputs);
        self.texts(node::OUTPUT, &n.outputs);
        self.text(node::NAME, &n.name);
        self.text(node::OP_TYPE, &n.op_type);
        for a in &n.attributes {
            self.message(node::ATTRIBUTE, |w| w.attribute(a));
        }
        self.text(node::DOC_STRING, &n.doc_string());
        self.text(node::DOMAIN, &n.domain);
        self.text(node::OVERLOAD, &n.overload());
        self.pairs(node::METADATA_PROPS, n.metadata_props());
        for c in n.device_configurations() {
            self.message(node::DEVICE_CONFIGURATIONS, |w| w.node_device(c));
        }
    }

    fn attribute(&mut self, a: &Attribute) {
        self.text(attribute::NAME, &a.name);
        self.float(attribute::F, a.f);
        self.int64(attribute::I, a.i);
        self.text(attribute::S, &a.s);
        if let Some(t) = a.t {
            self.message(attribute::T, |w| w.tensor(t));
        }
        if let Some(g) = a.g {
            self.message(attribute::G, |w| w.graph(g));
        }
        for &f in &a.floats {
            self.float(attribute::FLOATS, Some(f));
        }
        self.unpacked_int64s(attribute::INTS, &a.ints);
        self.texts(attribute::STRINGS, &a.strings);
        for &t in &a.tensors {
            self.message(attribute::TENSORS, |w| w.tensor(t));
        }
        for &g in &a.graphs {
            self.message(attribute::GRAPHS, |w| w.graph(g));
        }
        self.text(attribute::DOC_STRING, &a.doc_string);
        if let Some(t) = &a.tp {
            self.message(attribute::TP, |w| w.ty(t));
        }
        for t in &a.type_protos {
            self.message(attribute::TYPE_PROTOS, |w| w.ty(t));
        }
        self.int32(attribute::TYPE, a.ty);
        self.text(attribute::REF_ATTR_NAME, &a.ref_attr_name);
        if let Some(s) = &a.sparse_tensor {
            self.message(attribute::SPARSE_TENSOR, |w| w.sparse(s));
        }
        for s in &a.sparse_tensors {
            self.message(attribute::SPARSE_TENSORS, |w| w.sparse(s));
        }
    }

    fn tensor(&mut self, id: TensorId) {
        self.tensor_fields(&self.model.tensors[id]);
    }

    fn tensor_fields(&mut self, t: &'m Tensor) {
        self.unpacked_int64s(tensor::DIMS, &t.dims);
        self.int32(tensor::DATA_TYPE, t.data_type);
        if let Some(s) = &t.segment {
            self.message(tensor::SEGMENT, |w| {
                w.int64(tensor::segment::BEGIN, s.begin);
                w.int64(tensor::segment::END, s.end);
            });
        }
        self.packed_fixed(tensor::FLOAT_DATA, &t.float_data, f32::to_le_bytes);
        self.packed_varints(tensor::INT32_DATA, t.int32_data.iter().map(|&v| i64::from(v) as u64));
        self.texts(tensor::STRING_DATA, &t.string_data);
        self.packed_varints(tensor::INT64_DATA, t.int64_data.iter().map(|&v| v as u64));
        self.text(tensor::NAME, &t.name);
        if let Some(raw) = &t.raw_data {
            self.key(tensor::RAW_DATA, LEN);
            self.varint(raw.len() as u64);
            self.run(raw);
        }
        self.packed_fixed(tensor::DOUBLE_DATA, &t.double_data, f64::to_le_bytes);
        self.packed_varints(tensor::UINT64_DATA, t.uint64_data.iter().copied());
        self.text(tensor::DOC_STRING, &t.doc_string);
        self.pairs(tensor::EXTERNAL_DATA, &t.external_data);
        self.int32(tensor::DATA_LOCATION, t.data_location);
        self.pairs(tensor::METADATA_PROPS, &t.metadata_props);
    }

    fn sparse(&mut self, s: &SparseTensor) {
        if let Some(t) = s.values {
            self.message(sparse_tensor::VALUES, |w| w.tensor(t));
        }
        if let Some(t) = s.indices {
            self.message(sparse_tensor::INDICES, |w| w.tensor(t));
        }
        self.unpacked_int64s(sparse_tensor::DIMS, &s.dims);
    }

    fn value_infos(&mut self, field: u32, values: &[ValueInfo]) {
        for v in values {
            self.message(field, |w| {
                w.text(value_info::NAME, &v.name);
                if let Some(t) = &v.ty {
                    w.message(value_info::TYPE, |w| w.ty(t));
                }
                w.text(value_info::DOC_STRING, &v.doc_string);
                w.pairs(value_info::METADATA_PROPS, &v.metadata_props);
            });
        }
    }

    fn ty(&mut self, t: &Type) {
        // The oneof's value comes before or after the denotation, by its field number.
        let value_field = match &t.value {
            None => None,
            Some(TypeValue::Tensor(_)) => Some(type_proto::TENSOR_TYPE),
            Some(TypeValue::Sequence(_)) => Some(type_proto::SEQUENCE_TYPE),
            Some(TypeValue::Map { .. }) => Some(type_proto::MAP_TYPE),
            Some(TypeValue::Opaque { .. }) => Some(type_proto::OPAQUE_TYPE),
            Some(TypeValue::SparseTensor(_)) => Some(type_proto::SPARSE_TENSOR_TYPE),
            Some(TypeValue::Optional(_)) => Some(type_proto::OPTIONAL_TYPE),
        };
        if let Some(field) = value_field
            && field < type_proto::DENOTATION
        {
            self.type_value(field, t);
        }
        self.text(type_proto::DENOTATION, &t.denotation);
        if let Some(field) = value_field
            && field > type_proto::DENOTATION
        {
            self.type_value(field, t);
        }
    }

    /// `Tensor` and `SparseTensor` number their fields the same, and so do `Sequence` and
    /// `Optional` (checked at compile time below): each pair is written by one arm.
    fn type_value(&mut self, field: u32, t: &Type) {
        let element = |w: &mut Self, field: u32, e: &Option<Box<Type>>| {
            if let Some(e) = e {
                w.message(field, |w| w.ty(e));
            }
        };
        match &t.value {
            None => {}
            Some(TypeValue::Tensor(x) | TypeValue::SparseTensor(x)) => self.message(field, |w| {
                w.int32(type_proto::tensor::ELEM_TYPE, x.elem_type);
                if let Some(shape) = &x.shape {
                    w.message(type_proto::tensor::SHAPE, |w| w.shape(shape));
                }
            }),
            Some(TypeValue::Sequence(e) | TypeValue::Optional(e)) => {
                self.message(field, |w| element(w, type_proto::sequence::ELEM_TYPE, e))
            }
            Some(TypeValue::Map { key_type, value_type }) => self.message(field, |w| {
                w.int32(type_proto::map::KEY_TYPE, *key_type);
                element(w, type_proto::map::VALUE_TYPE, value_type);
            }),
            Some(TypeValue::Opaque { domain, name }) => self.message(field, |w| {
                w.text(type_proto::opaque::DOMAIN, domain);
                w.text(type_proto::opaque::NAME, name);
            }),
        }
    }

    fn shape(&mut self, shape: &Shape) {
        for d in &shape.dims {
            self.message(tensor_shape::DIM, |w| {
                w.dim_value(&d.value);
                w.text(tensor_shape::dimension::DENOTATION, &d.denotation);
            });
        }
    }

    /// `dim_value` or `dim_param`, which `Dimension` and `SimpleShardedDim` number the same
    /// (checked at compile time below).
    fn dim_value(&mut self, d: &Option<DimValue>) {
        match d {
            None => {}
            Some(DimValue::Value(v)) => self.int64(tensor_shape::dimension::DIM_VALUE, Some(*v)),
            Some(DimValue::Param(p)) => self.bytes(tensor_shape::dimension::DIM_PARAM, p.as_bytes()),
        }
    }

    fn function(&mut self, id: FunctionId) {
        let f = &self.model.function_store[id];
        self.text(function::NAME, &f.name);
        self.texts(function::INPUT, &f.inputs);
        self.texts(function::OUTPUT, &f.outputs);
        self.texts(function::ATTRIBUTE, &f.attributes);
        for &n in &f.nodes {
            self.message(function::NODE, |w| w.node(n));
        }
        self.text(function::DOC_STRING, &f.doc_string);
        self.opsets(function::OPSET_IMPORT, &f.opset_import);
        self.text(function::DOMAIN, &f.domain);
        for a in &f.attribute_protos {
            self.message(function::ATTRIBUTE_PROTO, |w| w.attribute(a));
        }
        self.value_infos(function::VALUE_INFO, &f.value_info);
        self.text(function::OVERLOAD, &f.overload);
        self.pairs(function::METADATA_PROPS, &f.metadata_props);
    }

    fn node_device(&mut self, c: &NodeDeviceConfiguration) {
        self.text(node_device_configuration::CONFIGURATION_ID, &c.configuration_id);
        for s in &c.sharding_spec {
            self.message(node_device_configuration::SHARDING_SPEC, |w| {
                w.text(sharding_spec::TENSOR_NAME, &s.tensor_name);
                w.unpacked_int64s(sharding_spec::DEVICE, &s.device);
                for e in &s.index_to_device_group_map {
                    w.message(sharding_spec::INDEX_TO_DEVICE_GROUP_MAP, |w| {
                        w.int64(int_int_list_entry::KEY, e.key);
                        w.unpacked_int64s(int_int_list_entry::VALUE, &e.value);
                    });
                }
                for d in &s.sharded_dim {
                    w.message(sharding_spec::SHARDED_DIM, |w| {
                        w.int64(sharded_dim::AXIS, d.axis);
                        for s in &d.simple_sharding {
                            w.message(sharded_dim::SIMPLE_SHARDING, |w| {
                                w.dim_value(&s.dim);
                                w.int64(simple_sharded_dim::NUM_SHARDS, s.num_shards);
                            });
                        }
                    });
                }
            });
        }
        self.int32(node_device_configuration::PIPELINE_STAGE, c.pipeline_stage);
    }
}

// Messages that one function writes by the field numbers of the other (`Writer::type_value`,
// `Writer::dim_value`) number those fields the same.
const _: () = {
    assert!(type_proto::tensor::ELEM_TYPE == type_proto::sparse_tensor::ELEM_TYPE);
    assert!(type_proto::tensor::SHAPE == type_proto::sparse_tensor::SHAPE);
    assert!(type_proto::sequence::ELEM_TYPE == type_proto::optional::ELEM_TYPE);
    assert!(tensor_shape::dimension::DIM_VALUE == simple_sharded_dim::DIM_VALUE);
    assert!(tensor_shape::dimension::DIM_PARAM == simple_sharded_dim::DIM_PARAM);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_value_info_list_encodes_as_its_entries_one_by_one() {
        let values: Vec<ValueInfo> = (0..3 * PARALLEL_VALUE_INFOS + 7)
            .map(|i| ValueInfo {
                name: Some(format!("v{i}").into()),
                ty: Some(Type {
                    value: Some(TypeValue::Tensor(TensorType {
                        elem_type: Some(1),
                        // Types that repeat (encoded once, then copied), among others that do
                        // not, enough of them to cycle through what is kept.
                        shape: Some(Shape {
                            dims: vec![Dimension {
                                value: Some(DimValue::Value(if i % 3 == 0 { i as i64 } else { (i % 11) as i64 })),
                                denotation: None,
                            }],
                        }),
                    })),
                    denotation: (i % 5 == 0).then(|| Box::new(Str::from("d"))),
                }),
                ..ValueInfo::default()
            })
            .collect();
        let one_by_one: Vec<u8> = values
            .iter()
            .flat_map(|v| value_info_pieces(graph::VALUE_INFO, std::slice::from_ref(v)).concat())
            .collect();
        assert_eq!(value_info_pieces(graph::VALUE_INFO, &values).concat(), one_by_one);
        // Encoded from names and types only, the same bytes.
        let described: Vec<(&Str, &Type)> =
            values.iter().filter_map(|v| Some((v.name.as_ref()?, v.ty.as_ref()?))).collect();
        assert_eq!(described_values(graph::VALUE_INFO, described.iter().copied(), Vec::new()), one_by_one);
    }

    /// The output buffer is made once at the hint's size: a hint below the encoding made a
    /// big model's buffer grow by copying all of it into fresh memory (a third of `onnx
    /// convert` text → binary). And the encoding written with runs spliced in is the same
    /// bytes. Held against every real exported model, its values both as the file has them
    /// and in typed fields (as a parsed text has them).
    #[test]
    fn the_size_hint_covers_and_splicing_keeps_every_real_model_with_raw_or_typed_values() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus/real");
        let (mut seen, mut with_runs) = (0, 0);
        for entry in std::fs::read_dir(dir).expect("the real corpus") {
            let path = entry.expect("a directory entry").path();
            if path.extension().is_none_or(|e| e != "onnx") {
                continue;
            }
            let bytes = std::fs::read(&path).expect("a corpus model");
            let mut m = crate::binary::decode_model(bytes.into(), &path.display().to_string()).expect("decodes");
            assert!(size_hint(&m) >= model(&m).len(), "{} (raw values)", path.display());
            assert!(model_spliced(&m).to_vec() == model(&m), "{}: spliced (raw values)", path.display());
            for t in m.tensors.values_mut() {
                if let Some(typed) = crate::ir::tensor_data::raw_to_typed(t) {
                    *t = typed;
                }
            }
            assert!(size_hint(&m) >= model(&m).len(), "{} (typed values)", path.display());
            let spliced = model_spliced(&m);
            with_runs += usize::from(!spliced.runs.is_empty());
            assert!(spliced.to_vec() == model(&m), "{}: spliced (typed values)", path.display());
            seen += 1;
        }
        assert!(with_runs >= 8, "only {with_runs} models had runs to splice");
        assert!(seen >= 10, "only {seen} real models");
    }

    #[test]
    fn varint_lengths_match_the_encoding() {
        for value in [0u64, 1, 127, 128, 16_383, 16_384, u32::MAX as u64, u64::MAX - 1, u64::MAX] {
            let empty = Model::default();
            let mut w = Writer::new(&empty, Vec::new());
            w.varint(value);
            assert_eq!(w.out.len(), varint_len(value), "{value}");
        }
    }

    #[test]
    fn long_bodies_get_their_length_in_front() {
        // Bodies around each length-width boundary: the length must be the minimal varint
        // and the body must follow it intact.
        for len in [0usize, 1, 127, 128, 129, 16_383, 16_384, 70_000] {
            let empty = Model::default();
            let mut w = Writer::new(&empty, vec![0xAA]);
            let body: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            w.message(3, |w| w.out.extend_from_slice(&body));
            let mut expected = vec![0xAA, 3 << 3 | LEN as u8];
            let mut n = len as u64;
            loop {
                let byte = (n & 0x7f) as u8;
                n >>= 7;
                expected.push(if n > 0 { byte | 0x80 } else { byte });
                if n == 0 {
                    break;
                }
            }
            expected.extend_from_slice(&body);
            assert_eq!(w.out, expected, "body of {len} bytes");
        }
    }
}
