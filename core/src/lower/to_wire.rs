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

use crate::ir::*;

/// Protobuf wire types.
const VARINT: u32 = 0;
const LEN: u32 = 2;
const FIXED32: u32 = 5;

/// Encodes a whole model.
pub fn model(model: &Model) -> Vec<u8> {
    let mut w = Writer { model, out: Vec::with_capacity(size_hint(model)) };
    w.model();
    w.out
}

/// Encodes a standalone tensor.
pub fn tensor(t: &Tensor) -> Vec<u8> {
    // The tensor is in no model; an empty one (no allocation) stands in, never read.
    let model = Model::default();
    let mut w = Writer { model: &model, out: Vec::new() };
    w.tensor_fields(t);
    w.out
}

/// Encodes value descriptions as the `field` entries of a graph (13 is `value_info`), for
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
    let mut w = Writer { model: &model, out };
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
            let mut w = Writer { model, out: std::mem::take(bytes) };
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
        let mut w = Writer { model: &model, out };
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
    let raw: usize = model.tensors.values().map(|t| t.raw_data.as_ref().map_or(0, |r| r.len())).sum();
    let described: usize = model.graphs.values().map(|g| g.value_info.len() + g.inputs.len() + g.outputs.len()).sum();
    raw.saturating_add(model.nodes.len().saturating_mul(48))
        .saturating_add(described.saturating_mul(DESCRIPTION_BYTES))
        .saturating_add(1024)
}

fn varint_len(value: u64) -> usize {
    // Each byte carries seven bits; zero still takes one byte.
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

struct Writer<'m> {
    model: &'m Model,
    out: Vec<u8>,
}

impl Writer<'_> {
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
                w.text(1, &Some(name));
                w.bytes(2, ty);
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
    fn packed_fixed<const N: usize, T: Copy>(&mut self, field: u32, values: &[T], le: impl Fn(T) -> [u8; N]) {
        if values.is_empty() {
            return;
        }
        self.key(field, LEN);
        self.varint((values.len() * N) as u64);
        self.out.reserve(values.len() * N);
        for &v in values {
            self.out.extend_from_slice(&le(v));
        }
    }

    /// A nested message: its key, then its length, then the body `fill` writes.
    fn message(&mut self, field: u32, fill: impl FnOnce(&mut Self)) {
        self.key(field, LEN);
        let at = self.out.len();
        self.out.push(0);
        fill(self);
        let body = self.out.len() - at - 1;
        let width = varint_len(body as u64);
        if width > 1 {
            // Move the body right to make room for the longer length (rare: only bodies of
            // 128 bytes and more, and each is moved once per enclosing level).
            self.out.resize(self.out.len() + width - 1, 0);
            self.out.copy_within(at + 1..at + 1 + body, at + width);
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
                w.text(1, &p.key);
                w.text(2, &p.value);
            });
        }
    }

    fn opsets(&mut self, field: u32, imports: &[OpsetImport]) {
        for o in imports {
            self.message(field, |w| {
                w.text(1, &o.domain);
                w.int64(2, o.version);
            });
        }
    }

    fn model(&mut self) {
        let m = self.model;
        self.int64(1, m.ir_version);
        self.text(2, &m.producer_name);
        self.text(3, &m.producer_version);
        self.text(4, &m.domain);
        self.int64(5, m.model_version);
        self.text(6, &m.doc_string);
        if let Some(g) = m.graph {
            self.message(7, |w| w.graph(g));
        }
        self.opsets(8, &m.opset_import);
        self.pairs(14, &m.metadata_props);
        for t in &m.training_info {
            self.message(20, |w| {
                if let Some(g) = t.initialization {
                    w.message(1, |w| w.graph(g));
                }
                if let Some(g) = t.algorithm {
                    w.message(2, |w| w.graph(g));
                }
                w.pairs(3, &t.initialization_binding);
                w.pairs(4, &t.update_binding);
            });
        }
        for &f in &m.functions {
            self.message(25, |w| w.function(f));
        }
        for c in &m.configuration {
            self.message(26, |w| {
                w.text(1, &c.name);
                w.int32(2, c.num_devices);
                w.texts(3, &c.device);
            });
        }
    }

    fn graph(&mut self, id: GraphId) {
        let g = &self.model.graphs[id];
        for &n in &g.nodes {
            self.message(1, |w| w.node(n));
        }
        self.text(2, &g.name);
        for &t in &g.initializers {
            self.message(5, |w| w.tensor(t));
        }
        self.text(10, &g.doc_string);
        self.value_infos(11, &g.inputs);
        self.value_infos(12, &g.outputs);
        self.value_infos(13, &g.value_info);
        for a in &g.quantization_annotation {
            self.message(14, |w| {
                w.text(1, &a.tensor_name);
                w.pairs(2, &a.quant_parameter_tensor_names);
            });
        }
        for s in &g.sparse_initializers {
            self.message(15, |w| w.sparse(s));
        }
        self.pairs(16, &g.metadata_props);
    }

    fn node(&mut self, id: NodeId) {
        let n = &self.model.nodes[id];
        self.texts(1, &n.inputs);
        self.texts(2, &n.outputs);
        self.text(3, &n.name);
        self.text(4, &n.op_type);
        for a in &n.attributes {
            self.message(5, |w| w.attribute(a));
        }
        self.text(6, &n.doc_string());
        self.text(7, &n.domain);
        self.text(8, &n.overload());
        self.pairs(9, n.metadata_props());
        for c in n.device_configurations() {
            self.message(10, |w| w.node_device(c));
        }
    }

    fn attribute(&mut self, a: &Attribute) {
        self.text(1, &a.name);
        self.float(2, a.f);
        self.int64(3, a.i);
        self.text(4, &a.s);
        if let Some(t) = a.t {
            self.message(5, |w| w.tensor(t));
        }
        if let Some(g) = a.g {
            self.message(6, |w| w.graph(g));
        }
        for &f in &a.floats {
            self.float(7, Some(f));
        }
        self.unpacked_int64s(8, &a.ints);
        self.texts(9, &a.strings);
        for &t in &a.tensors {
            self.message(10, |w| w.tensor(t));
        }
        for &g in &a.graphs {
            self.message(11, |w| w.graph(g));
        }
        self.text(13, &a.doc_string);
        if let Some(t) = &a.tp {
            self.message(14, |w| w.ty(t));
        }
        for t in &a.type_protos {
            self.message(15, |w| w.ty(t));
        }
        self.int32(20, a.ty);
        self.text(21, &a.ref_attr_name);
        if let Some(s) = &a.sparse_tensor {
            self.message(22, |w| w.sparse(s));
        }
        for s in &a.sparse_tensors {
            self.message(23, |w| w.sparse(s));
        }
    }

    fn tensor(&mut self, id: TensorId) {
        self.tensor_fields(&self.model.tensors[id]);
    }

    fn tensor_fields(&mut self, t: &Tensor) {
        self.unpacked_int64s(1, &t.dims);
        self.int32(2, t.data_type);
        if let Some(s) = &t.segment {
            self.message(3, |w| {
                w.int64(1, s.begin);
                w.int64(2, s.end);
            });
        }
        self.packed_fixed(4, &t.float_data, f32::to_le_bytes);
        self.packed_varints(5, t.int32_data.iter().map(|&v| i64::from(v) as u64));
        self.texts(6, &t.string_data);
        self.packed_varints(7, t.int64_data.iter().map(|&v| v as u64));
        self.text(8, &t.name);
        if let Some(raw) = &t.raw_data {
            self.bytes(9, raw);
        }
        self.packed_fixed(10, &t.double_data, f64::to_le_bytes);
        self.packed_varints(11, t.uint64_data.iter().copied());
        self.text(12, &t.doc_string);
        self.pairs(13, &t.external_data);
        self.int32(14, t.data_location);
        self.pairs(16, &t.metadata_props);
    }

    fn sparse(&mut self, s: &SparseTensor) {
        if let Some(t) = s.values {
            self.message(1, |w| w.tensor(t));
        }
        if let Some(t) = s.indices {
            self.message(2, |w| w.tensor(t));
        }
        self.unpacked_int64s(3, &s.dims);
    }

    fn value_infos(&mut self, field: u32, values: &[ValueInfo]) {
        for v in values {
            self.message(field, |w| {
                w.text(1, &v.name);
                if let Some(t) = &v.ty {
                    w.message(2, |w| w.ty(t));
                }
                w.text(3, &v.doc_string);
                w.pairs(4, &v.metadata_props);
            });
        }
    }

    fn ty(&mut self, t: &Type) {
        // Field numbers: tensor 1, sequence 4, map 5, denotation 6, opaque 7, sparse 8,
        // optional 9; the value comes before or after the denotation by its number.
        let value_field = match &t.value {
            None => 0,
            Some(TypeValue::Tensor(_)) => 1,
            Some(TypeValue::Sequence(_)) => 4,
            Some(TypeValue::Map { .. }) => 5,
            Some(TypeValue::Opaque { .. }) => 7,
            Some(TypeValue::SparseTensor(_)) => 8,
            Some(TypeValue::Optional(_)) => 9,
        };
        if value_field != 0 && value_field < 6 {
            self.type_value(value_field, t);
        }
        self.text(6, &t.denotation);
        if value_field > 6 {
            self.type_value(value_field, t);
        }
    }

    fn type_value(&mut self, field: u32, t: &Type) {
        let element = |w: &mut Self, field: u32, e: &Option<Box<Type>>| {
            if let Some(e) = e {
                w.message(field, |w| w.ty(e));
            }
        };
        match &t.value {
            None => {}
            Some(TypeValue::Tensor(x) | TypeValue::SparseTensor(x)) => self.message(field, |w| {
                w.int32(1, x.elem_type);
                if let Some(shape) = &x.shape {
                    w.message(2, |w| w.shape(shape));
                }
            }),
            Some(TypeValue::Sequence(e) | TypeValue::Optional(e)) => self.message(field, |w| element(w, 1, e)),
            Some(TypeValue::Map { key_type, value_type }) => self.message(field, |w| {
                w.int32(1, *key_type);
                element(w, 2, value_type);
            }),
            Some(TypeValue::Opaque { domain, name }) => self.message(field, |w| {
                w.text(1, domain);
                w.text(2, name);
            }),
        }
    }

    fn shape(&mut self, shape: &Shape) {
        for d in &shape.dims {
            self.message(1, |w| {
                w.dim_value(&d.value);
                w.text(3, &d.denotation);
            });
        }
    }

    /// `dim_value` (1) or `dim_param` (2), as `Dimension` and `SimpleShardedDim` number them.
    fn dim_value(&mut self, d: &Option<DimValue>) {
        match d {
            None => {}
            Some(DimValue::Value(v)) => self.int64(1, Some(*v)),
            Some(DimValue::Param(p)) => self.bytes(2, p.as_bytes()),
        }
    }

    fn function(&mut self, id: FunctionId) {
        let f = &self.model.function_store[id];
        self.text(1, &f.name);
        self.texts(4, &f.inputs);
        self.texts(5, &f.outputs);
        self.texts(6, &f.attributes);
        for &n in &f.nodes {
            self.message(7, |w| w.node(n));
        }
        self.text(8, &f.doc_string);
        self.opsets(9, &f.opset_import);
        self.text(10, &f.domain);
        for a in &f.attribute_protos {
            self.message(11, |w| w.attribute(a));
        }
        self.value_infos(12, &f.value_info);
        self.text(13, &f.overload);
        self.pairs(14, &f.metadata_props);
    }

    fn node_device(&mut self, c: &NodeDeviceConfiguration) {
        self.text(1, &c.configuration_id);
        for s in &c.sharding_spec {
            self.message(2, |w| {
                w.text(1, &s.tensor_name);
                w.unpacked_int64s(2, &s.device);
                for e in &s.index_to_device_group_map {
                    w.message(3, |w| {
                        w.int64(1, e.key);
                        w.unpacked_int64s(2, &e.value);
                    });
                }
                for d in &s.sharded_dim {
                    w.message(4, |w| {
                        w.int64(1, d.axis);
                        for s in &d.simple_sharding {
                            w.message(2, |w| {
                                w.dim_value(&s.dim);
                                w.int64(3, s.num_shards);
                            });
                        }
                    });
                }
            });
        }
        self.int32(3, c.pipeline_stage);
    }
}

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
        let one_by_one: Vec<u8> =
            values.iter().flat_map(|v| value_info_pieces(13, std::slice::from_ref(v)).concat()).collect();
        assert_eq!(value_info_pieces(13, &values).concat(), one_by_one);
        // Encoded from names and types only, the same bytes.
        let described: Vec<(&Str, &Type)> =
            values.iter().filter_map(|v| Some((v.name.as_ref()?, v.ty.as_ref()?))).collect();
        assert_eq!(described_values(13, described.iter().copied(), Vec::new()), one_by_one);
    }

    #[test]
    fn varint_lengths_match_the_encoding() {
        for value in [0u64, 1, 127, 128, 16_383, 16_384, u32::MAX as u64, u64::MAX - 1, u64::MAX] {
            let mut w = Writer { model: &Model::default(), out: Vec::new() };
            w.varint(value);
            assert_eq!(w.out.len(), varint_len(value), "{value}");
        }
    }

    #[test]
    fn long_bodies_get_their_length_in_front() {
        // Bodies around each length-width boundary: the length must be the minimal varint
        // and the body must follow it intact.
        for len in [0usize, 1, 127, 128, 129, 16_383, 16_384, 70_000] {
            let mut w = Writer { model: &Model::default(), out: vec![0xAA] };
            let body: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            w.message(3, |w| w.out.extend_from_slice(&body));
            let mut expected = vec![0xAA, 3 << 3 | 2];
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
