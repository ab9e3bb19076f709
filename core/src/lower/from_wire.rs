//! Protobuf bytes → IR, directly, for the files that make up nearly all real models.
//!
//! Decoding with prost and then lowering builds every node, value and dimension twice (a
//! prost message, then the IR) and moves each from one to the other. This reader walks the
//! wire format once and builds the IR as [`from_proto`](super::from_proto) would, strings
//! and raw bytes as zero-copy slices of the input.
//!
//! It is a fast path, not a second decoder: it accepts only what it can prove prost
//! accepts and decodes the same way, and gives up (`None`) on anything else — any malformed
//! byte, unknown fields, groups, a singular message field given twice (protobuf merges
//! those), several cases of a oneof, nesting deeper than [`MAX_DEPTH`]. The caller then
//! decodes with prost, which either reports the error or handles the rare case. So errors
//! and rare files behave exactly as before, and the tests check, over the corpus and over
//! thousands of truncated and bit-flipped variants, that whenever this path answers it
//! answers what prost and `from_proto` give.
//!
//! Arena ids are allocated in the order `from_proto` allocates them (a graph's nodes, then
//! its initializers, then its sparse initializers; an attribute's tensor, graph and sparse
//! tensor before its lists; a function's attributes before its nodes), whatever order the
//! fields come in, so the two models are equal, ids included.

use std::ops::Range;

use bytes::Bytes;
use onnx_proto::fields::{
    attribute, device_configuration, function, graph, int_int_list_entry, model, node, node_device_configuration,
    operator_set_id, sharded_dim, sharding_spec, simple_sharded_dim, sparse_tensor, string_string_entry, tensor,
    tensor_annotation, tensor_shape, training_info, type_proto, value_info,
};

use crate::ir::*;

/// Deeper nesting is left to prost, whose own limit (100) decides.
const MAX_DEPTH: u32 = 64;

/// Decodes a model, or `None` when the bytes need prost (see the module documentation).
pub fn model(buf: &Bytes) -> Option<Model> {
    let mut d = Decoder { buf, model: Model::default(), depth: 0 };
    d.model_fields(0..buf.len()).ok()?;
    Some(d.model)
}

/// How many nodes a graph needs before it is decoded in two halves at once (see
/// `Decoder::nodes`): below it, starting a thread costs more than it saves.
const SPLIT_NODES: usize = 4096;
/// Below this average size a graph's nodes are decoded on one thread (see `nodes`); a real
/// node (operator type, input and output names) takes tens of bytes.
const MIN_SPLIT_NODE_BYTES: usize = 8;

/// How far the ids of a model decoded apart move when its arenas are appended to another's.
#[derive(Clone, Copy)]
struct Shift {
    nodes: u32,
    graphs: u32,
    tensors: u32,
}

impl Shift {
    fn node(self, id: NodeId) -> NodeId {
        NodeId::from_raw(la_arena::RawIdx::from_u32(id.into_raw().into_u32() + self.nodes))
    }

    fn graph(self, id: GraphId) -> GraphId {
        GraphId::from_raw(la_arena::RawIdx::from_u32(id.into_raw().into_u32() + self.graphs))
    }

    fn tensor(self, id: TensorId) -> TensorId {
        TensorId::from_raw(la_arena::RawIdx::from_u32(id.into_raw().into_u32() + self.tensors))
    }

    fn sparse(self, t: &mut SparseTensor) {
        t.values = t.values.map(|id| self.tensor(id));
        t.indices = t.indices.map(|id| self.tensor(id));
    }

    fn attribute(self, a: &mut Attribute) {
        a.t = a.t.map(|id| self.tensor(id));
        a.g = a.g.map(|id| self.graph(id));
        a.sparse_tensor.iter_mut().chain(&mut a.sparse_tensors).for_each(|t| self.sparse(t));
        a.tensors.iter_mut().for_each(|t| *t = self.tensor(*t));
        a.graphs.iter_mut().for_each(|g| *g = self.graph(*g));
    }
}

/// Why the fast path stopped; the caller decodes with prost instead.
struct GiveUp;

type Result<T> = std::result::Result<T, GiveUp>;

/// One field's value as the wire carries it.
#[derive(Clone, Copy)]
enum Wire {
    Varint(u64),
    Fixed32(u32),
    Fixed64(u64),
    /// A length-delimited payload: its byte range in the buffer.
    Len(usize, usize),
}

/// Reads a varint at `*pos`, as prost does: at most ten bytes, the tenth at most 1.
#[inline]
fn varint(data: &[u8], pos: &mut usize) -> Result<u64> {
    // Keys and the lengths of names are one byte: read those without the loop.
    if let Some(&byte) = data.get(*pos)
        && byte < 0x80
    {
        *pos += 1;
        return Ok(u64::from(byte));
    }
    varint_long(data, pos)
}

/// [`varint`] of two bytes or more.
fn varint_long(data: &[u8], pos: &mut usize) -> Result<u64> {
    let mut value = 0u64;
    for i in 0..10 {
        let byte = *data.get(*pos + i).ok_or(GiveUp)?;
        if i == 9 && byte > 1 {
            return Err(GiveUp);
        }
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            *pos += i + 1;
            return Ok(value);
        }
    }
    Err(GiveUp)
}

/// The fields of one message, in wire order.
struct Fields<'a> {
    data: &'a [u8],
    pos: usize,
    end: usize,
}

impl Fields<'_> {
    /// The next field when it is the commonest kind, a short length-delimited one (a
    /// node's names and operator, a graph's nodes: a one-byte key and a one-byte length),
    /// read without the general path; `None` for anything else.
    #[inline]
    fn next_short(&mut self) -> Option<(u32, Wire)> {
        if self.pos + 2 > self.end {
            return None;
        }
        let (key, len) = (*self.data.get(self.pos)?, *self.data.get(self.pos + 1)?);
        if key >= 0x80 || key & 7 != 2 || key < 8 || len >= 0x80 {
            return None;
        }
        let start = self.pos + 2;
        let end = start + usize::from(len);
        if end > self.end {
            return None;
        }
        self.pos = end;
        Some((u32::from(key >> 3), Wire::Len(start, end)))
    }

    /// The next field, or `None` at the end of the message.
    #[inline]
    fn next(&mut self) -> Result<Option<(u32, Wire)>> {
        match self.next_short() {
            Some(field) => Ok(Some(field)),
            None => self.next_general(),
        }
    }

    /// Any field (see [`Fields::next`]).
    fn next_general(&mut self) -> Result<Option<(u32, Wire)>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let data = &self.data[..self.end];
        let key = varint(data, &mut self.pos)?;
        let number = u32::try_from(key >> 3).map_err(|_| GiveUp)?;
        if number == 0 {
            return Err(GiveUp);
        }
        let value = match key & 7 {
            0 => Wire::Varint(varint(data, &mut self.pos)?),
            1 => {
                let bytes = data.get(self.pos..self.pos + 8).ok_or(GiveUp)?;
                self.pos += 8;
                Wire::Fixed64(u64::from_le_bytes(bytes.try_into().map_err(|_| GiveUp)?))
            }
            2 => {
                let len = usize::try_from(varint(data, &mut self.pos)?).map_err(|_| GiveUp)?;
                let start = self.pos;
                let end = start.checked_add(len).filter(|&e| e <= self.end).ok_or(GiveUp)?;
                self.pos = end;
                Wire::Len(start, end)
            }
            5 => {
                let bytes = data.get(self.pos..self.pos + 4).ok_or(GiveUp)?;
                self.pos += 4;
                Wire::Fixed32(u32::from_le_bytes(bytes.try_into().map_err(|_| GiveUp)?))
            }
            // Groups (3, 4) and invalid wire types.
            _ => return Err(GiveUp),
        };
        Ok(Some((number, value)))
    }
}

fn int64(value: Wire) -> Result<i64> {
    match value {
        Wire::Varint(v) => Ok(v as i64),
        _ => Err(GiveUp),
    }
}

/// `int32` and enums: the varint truncated, as prost reads them.
fn int32(value: Wire) -> Result<i32> {
    int64(value).map(|v| v as i32)
}

/// A range that must hold a nested message.
fn payload(value: Wire) -> Result<Range<usize>> {
    match value {
        Wire::Len(start, end) => Ok(start..end),
        _ => Err(GiveUp),
    }
}

/// Sets a singular message field seen for the first time; a second occurrence would be
/// merged by protobuf, which is prost's to do.
fn once(slot: &mut Option<Range<usize>>, value: Wire) -> Result<()> {
    if slot.is_some() {
        return Err(GiveUp);
    }
    *slot = Some(payload(value)?);
    Ok(())
}

struct Decoder<'b> {
    buf: &'b Bytes,
    model: Model,
    depth: u32,
}

impl<'b> Decoder<'b> {
    fn fields(&self, range: Range<usize>) -> Fields<'b> {
        Fields { data: self.buf, pos: range.start, end: range.end }
    }

    /// Runs `f` one nesting level down, giving up past [`MAX_DEPTH`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.depth >= MAX_DEPTH {
            return Err(GiveUp);
        }
        self.depth += 1;
        let out = f(self);
        self.depth -= 1;
        out
    }

    fn str(&self, value: Wire) -> Result<Str> {
        let range = payload(value)?;
        Ok(Str::from_buffer(self.buf, range))
    }

    fn bytes(&self, value: Wire) -> Result<Bytes> {
        payload(value).map(|range| self.buf.slice(range))
    }

    /// The bytes of a packed fixed-width field (a slice of the source, no copy).
    fn packed(&self, value: Wire) -> Option<Bytes> {
        match value {
            Wire::Len(start, end) => Some(self.buf.slice(start..end)),
            _ => None,
        }
    }

    /// A repeated varint field, unpacked (one value) or packed (a run of them).
    fn varints(&self, value: Wire, mut push: impl FnMut(u64)) -> Result<()> {
        match value {
            Wire::Varint(v) => push(v),
            Wire::Len(start, end) => {
                let data = &self.buf[..end];
                let mut pos = start;
                while pos < end {
                    push(varint(data, &mut pos)?);
                }
            }
            _ => return Err(GiveUp),
        }
        Ok(())
    }

    /// A repeated fixed-width field, unpacked or packed: the little-endian bytes of each
    /// value.
    fn fixed<const N: usize>(&self, value: Wire, mut push: impl FnMut([u8; N])) -> Result<()> {
        match (value, N) {
            (Wire::Fixed32(v), 4) => push(v.to_le_bytes()[..N].try_into().map_err(|_| GiveUp)?),
            (Wire::Fixed64(v), 8) => push(v.to_le_bytes()[..N].try_into().map_err(|_| GiveUp)?),
            (Wire::Len(start, end), _) if (end - start) % N == 0 => {
                for chunk in self.buf[start..end].chunks_exact(N) {
                    push(chunk.try_into().map_err(|_| GiveUp)?);
                }
            }
            _ => return Err(GiveUp),
        }
        Ok(())
    }

    fn int64s(&self, value: Wire, out: &mut Vec<i64>) -> Result<()> {
        self.varints(value, |v| out.push(v as i64))
    }

    fn model_fields(&mut self, range: Range<usize>) -> Result<()> {
        let (mut graph, mut training, mut functions) = (None, Vec::new(), Vec::new());
        let mut fields = self.fields(range);
        let mut m = std::mem::take(&mut self.model);
        while let Some((number, value)) = fields.next()? {
            match number {
                model::IR_VERSION => m.ir_version = Some(int64(value)?),
                model::PRODUCER_NAME => m.producer_name = Some(self.str(value)?),
                model::PRODUCER_VERSION => m.producer_version = Some(self.str(value)?),
                model::DOMAIN => m.domain = Some(self.str(value)?),
                model::MODEL_VERSION => m.model_version = Some(int64(value)?),
                model::DOC_STRING => m.doc_string = Some(self.str(value)?),
                model::GRAPH => once(&mut graph, value)?,
                model::OPSET_IMPORT => m.opset_import.push(self.nested(|d| d.opset(payload(value)?))?),
                model::METADATA_PROPS => m.metadata_props.push(self.nested(|d| d.pair(payload(value)?))?),
                model::TRAINING_INFO => training.push(payload(value)?),
                model::FUNCTIONS => functions.push(payload(value)?),
                model::CONFIGURATION => m.configuration.push(self.nested(|d| d.device_configuration(payload(value)?))?),
                _ => return Err(GiveUp),
            }
        }
        self.model = m;
        if let Some(range) = graph {
            let g = self.nested(|d| d.graph(range))?;
            self.model.graph = Some(g);
        }
        for range in training {
            let t = self.nested(|d| d.training_info(range))?;
            self.model.training_info.push(t);
        }
        for range in functions {
            let f = self.nested(|d| d.function(range))?;
            self.model.functions.push(f);
        }
        Ok(())
    }

    fn opset(&mut self, range: Range<usize>) -> Result<OpsetImport> {
        let mut o = OpsetImport::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                operator_set_id::DOMAIN => o.domain = Some(self.str(value)?),
                operator_set_id::VERSION => o.version = Some(int64(value)?),
                _ => return Err(GiveUp),
            }
        }
        Ok(o)
    }

    fn pair(&mut self, range: Range<usize>) -> Result<StringPair> {
        let mut p = StringPair::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                string_string_entry::KEY => p.key = Some(self.str(value)?),
                string_string_entry::VALUE => p.value = Some(self.str(value)?),
                _ => return Err(GiveUp),
            }
        }
        Ok(p)
    }

    fn device_configuration(&mut self, range: Range<usize>) -> Result<DeviceConfiguration> {
        let mut c = DeviceConfiguration::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                device_configuration::NAME => c.name = Some(self.str(value)?),
                device_configuration::NUM_DEVICES => c.num_devices = Some(int32(value)?),
                device_configuration::DEVICE => c.device.push(self.str(value)?),
                _ => return Err(GiveUp),
            }
        }
        Ok(c)
    }

    fn training_info(&mut self, range: Range<usize>) -> Result<TrainingInfo> {
        let (mut initialization, mut algorithm) = (None, None);
        let mut t = TrainingInfo::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                training_info::INITIALIZATION => once(&mut initialization, value)?,
                training_info::ALGORITHM => once(&mut algorithm, value)?,
                training_info::INITIALIZATION_BINDING => {
                    t.initialization_binding.push(self.nested(|d| d.pair(payload(value)?))?)
                }
                training_info::UPDATE_BINDING => t.update_binding.push(self.nested(|d| d.pair(payload(value)?))?),
                _ => return Err(GiveUp),
            }
        }
        if let Some(range) = initialization {
            t.initialization = Some(self.nested(|d| d.graph(range))?);
        }
        if let Some(range) = algorithm {
            t.algorithm = Some(self.nested(|d| d.graph(range))?);
        }
        Ok(t)
    }

    fn graph(&mut self, range: Range<usize>) -> Result<GraphId> {
        let (mut nodes, mut initializers, mut sparse) = (Vec::new(), Vec::new(), Vec::new());
        let mut g = Graph::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                graph::NODE => nodes.push(payload(value)?),
                graph::NAME => g.name = Some(self.str(value)?),
                graph::INITIALIZER => initializers.push(payload(value)?),
                graph::DOC_STRING => g.doc_string = Some(self.str(value)?),
                graph::INPUT => g.inputs.push(self.nested(|d| d.value_info(payload(value)?))?),
                graph::OUTPUT => g.outputs.push(self.nested(|d| d.value_info(payload(value)?))?),
                graph::VALUE_INFO => g.value_info.push(self.nested(|d| d.value_info(payload(value)?))?),
                graph::QUANTIZATION_ANNOTATION => {
                    g.quantization_annotation.push(self.nested(|d| d.tensor_annotation(payload(value)?))?)
                }
                graph::SPARSE_INITIALIZER => sparse.push(payload(value)?),
                graph::METADATA_PROPS => g.metadata_props.push(self.nested(|d| d.pair(payload(value)?))?),
                _ => return Err(GiveUp),
            }
        }
        g.nodes = self.nodes(nodes)?;
        for range in initializers {
            let t = self.nested(|d| d.tensor(range))?;
            g.initializers.push(t);
        }
        for range in sparse {
            let s = self.nested(|d| d.sparse(range))?;
            g.sparse_initializers.push(s);
        }
        Ok(self.model.graphs.alloc(g))
    }

    /// Decodes a graph's nodes, in order. A big graph is decoded in two halves at once,
    /// each into a model of its own: the first half on a pool thread, into an arena with
    /// room for every node, the second here. Both are then appended to this model, ids
    /// shifted, so that the arenas end up as one thread would have filled them. When this
    /// model holds nothing yet (the main graph), the first half's arenas are taken as they
    /// are instead of moved: only the second half, still in this core's cache, is copied
    /// (moving the other thread's half meant fetching megabytes from the other core).
    fn nodes(&mut self, ranges: Vec<Range<usize>>) -> Result<Vec<NodeId>> {
        // Nodes of a few bytes each (empty or nearly: a hostile file, 2 bytes a node) are not
        // worth a thread, and the split holds both halves' arenas at once while appending:
        // 10 million empty nodes peaked at 4.4 GB split, 3.1 GB not.
        let bytes: usize = ranges.iter().map(|r| r.len()).sum();
        let pool = onnx_threads::pool()
            .filter(|_| ranges.len() >= SPLIT_NODES && bytes >= ranges.len() * MIN_SPLIT_NODE_BYTES);
        let Some(pool) = pool else {
            // Room for the nodes at once, so that a big graph's arena is not regrown: the
            // first graph to get here is the main one, which holds nearly all nodes.
            if self.model.nodes.is_empty() {
                self.model.nodes = la_arena::Arena::with_capacity(ranges.len());
            }
            return ranges.into_iter().map(|range| self.nested(|d| d.node(range))).collect();
        };
        let (first, second) = ranges.split_at(ranges.len() / 2);
        let (buf, depth, count) = (self.buf, self.depth, ranges.len());
        let decode = move |part: &[Range<usize>], room: usize| -> Result<(Model, Vec<NodeId>)> {
            let mut apart = Decoder { buf, model: Model::default(), depth };
            apart.model.nodes = la_arena::Arena::with_capacity(room);
            let ids = part.iter().map(|range| apart.nested(|d| d.node(range.clone()))).collect::<Result<_>>()?;
            Ok((apart.model, ids))
        };
        // The first half is a pool task; the second is decoded here, so that it is still in
        // this core's cache when it is appended (a join would decode both on pool threads).
        let mut theirs = None;
        let mine = pool.in_place_scope(|scope| {
            scope.spawn(|_| theirs = Some(decode(first, count)));
            decode(second, second.len())
        });
        let theirs = theirs.ok_or(GiveUp)??;
        let (mine, mine_ids) = mine?;
        let mut ids: Vec<NodeId> = self.append(theirs.0, theirs.1).collect();
        ids.extend(self.append(mine, mine_ids));
        Ok(ids)
    }

    /// Appends the arenas of a model decoded apart (nodes and what they hold: subgraphs,
    /// tensors) to this one's, shifting every id they hold; returns `ids` shifted. Into a
    /// model that holds nothing yet, the arenas are taken whole (nothing moves or shifts).
    fn append(&mut self, other: Model, ids: Vec<NodeId>) -> impl Iterator<Item = NodeId> {
        let shift = Shift {
            nodes: self.model.nodes.len() as u32,
            graphs: self.model.graphs.len() as u32,
            tensors: self.model.tensors.len() as u32,
        };
        if shift.nodes == 0 && shift.graphs == 0 && shift.tensors == 0 {
            self.model.nodes = other.nodes;
            self.model.graphs = other.graphs;
            self.model.tensors = other.tensors;
        } else {
            self.model.nodes.alloc_many(other.nodes.into_iter().map(|(_, mut n)| {
                n.attributes.iter_mut().for_each(|a| shift.attribute(a));
                n
            }));
            self.model.graphs.alloc_many(other.graphs.into_iter().map(|(_, mut g)| {
                g.nodes.iter_mut().for_each(|n| *n = shift.node(*n));
                g.initializers.iter_mut().for_each(|t| *t = shift.tensor(*t));
                g.sparse_initializers.iter_mut().for_each(|t| shift.sparse(t));
                g
            }));
            self.model.tensors.alloc_many(other.tensors.into_iter().map(|(_, t)| t));
        }
        ids.into_iter().map(move |id| shift.node(id))
    }

    fn value_info(&mut self, range: Range<usize>) -> Result<ValueInfo> {
        let mut v = ValueInfo::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                value_info::NAME => v.name = Some(self.str(value)?),
                value_info::TYPE if v.ty.is_none() => v.ty = Some(self.nested(|d| d.ty(payload(value)?))?),
                value_info::DOC_STRING => v.doc_string = Some(self.str(value)?),
                value_info::METADATA_PROPS => v.metadata_props.push(self.nested(|d| d.pair(payload(value)?))?),
                _ => return Err(GiveUp),
            }
        }
        Ok(v)
    }

    fn tensor_annotation(&mut self, range: Range<usize>) -> Result<TensorAnnotation> {
        let mut a = TensorAnnotation::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                tensor_annotation::TENSOR_NAME => a.tensor_name = Some(self.str(value)?),
                tensor_annotation::QUANT_PARAMETER_TENSOR_NAMES => {
                    a.quant_parameter_tensor_names.push(self.nested(|d| d.pair(payload(value)?))?)
                }
                _ => return Err(GiveUp),
            }
        }
        Ok(a)
    }

    fn node(&mut self, range: Range<usize>) -> Result<NodeId> {
        let mut n = Node::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                node::INPUT => n.inputs.push(self.str(value)?),
                node::OUTPUT => n.outputs.push(self.str(value)?),
                node::NAME => n.name = Some(self.str(value)?),
                node::OP_TYPE => n.op_type = Some(self.str(value)?),
                node::ATTRIBUTE => n.attributes.push(self.nested(|d| d.attribute(payload(value)?))?),
                node::DOC_STRING => n.rare.get_mut().doc_string = Some(self.str(value)?),
                node::DOMAIN => n.domain = Some(self.str(value)?),
                node::OVERLOAD => n.rare.get_mut().overload = Some(self.str(value)?),
                node::METADATA_PROPS => n.rare.get_mut().metadata_props.push(self.nested(|d| d.pair(payload(value)?))?),
                node::DEVICE_CONFIGURATIONS => {
                    n.rare.get_mut().device_configurations.push(self.nested(|d| d.node_device(payload(value)?))?)
                }
                _ => return Err(GiveUp),
            }
        }
        Ok(self.model.nodes.alloc(n))
    }

    fn attribute(&mut self, range: Range<usize>) -> Result<Attribute> {
        let (mut t, mut g, mut sparse) = (None, None, None);
        let (mut tensors, mut graphs, mut sparse_tensors) = (Vec::new(), Vec::new(), Vec::new());
        let mut a = Attribute::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                attribute::NAME => a.name = Some(self.str(value)?),
                attribute::F => match value {
                    Wire::Fixed32(bits) => a.f = Some(f32::from_bits(bits)),
                    _ => return Err(GiveUp),
                },
                attribute::I => a.i = Some(int64(value)?),
                attribute::S => a.s = Some(self.str(value)?),
                attribute::T => once(&mut t, value)?,
                attribute::G => once(&mut g, value)?,
                attribute::FLOATS => self.fixed::<4>(value, |b| a.floats.push(f32::from_le_bytes(b)))?,
                attribute::INTS => self.int64s(value, &mut a.ints)?,
                attribute::STRINGS => a.strings.push(self.str(value)?),
                attribute::TENSORS => tensors.push(payload(value)?),
                attribute::GRAPHS => graphs.push(payload(value)?),
                attribute::DOC_STRING => a.doc_string = Some(self.str(value)?),
                attribute::TP if a.tp.is_none() => a.tp = Some(self.nested(|d| d.ty(payload(value)?))?),
                attribute::TYPE_PROTOS => a.type_protos.push(self.nested(|d| d.ty(payload(value)?))?),
                attribute::TYPE => a.ty = Some(int32(value)?),
                attribute::REF_ATTR_NAME => a.ref_attr_name = Some(self.str(value)?),
                attribute::SPARSE_TENSOR => once(&mut sparse, value)?,
                attribute::SPARSE_TENSORS => sparse_tensors.push(payload(value)?),
                _ => return Err(GiveUp),
            }
        }
        // The order `from_proto` allocates in.
        if let Some(range) = t {
            a.t = Some(self.nested(|d| d.tensor(range))?);
        }
        if let Some(range) = g {
            a.g = Some(self.nested(|d| d.graph(range))?);
        }
        if let Some(range) = sparse {
            a.sparse_tensor = Some(self.nested(|d| d.sparse(range))?);
        }
        for range in tensors {
            let t = self.nested(|d| d.tensor(range))?;
            a.tensors.push(t);
        }
        for range in graphs {
            let g = self.nested(|d| d.graph(range))?;
            a.graphs.push(g);
        }
        for range in sparse_tensors {
            let s = self.nested(|d| d.sparse(range))?;
            a.sparse_tensors.push(s);
        }
        Ok(a)
    }

    fn tensor(&mut self, range: Range<usize>) -> Result<TensorId> {
        let mut t = Tensor::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                tensor::DIMS => self.int64s(value, &mut t.dims)?,
                tensor::DATA_TYPE => t.data_type = Some(int32(value)?),
                tensor::SEGMENT if t.segment.is_none() => {
                    t.segment = Some(self.nested(|d| d.segment(payload(value)?))?)
                }
                tensor::FLOAT_DATA => {
                    let first = t.float_data.is_empty();
                    self.fixed::<4>(value, |b| t.float_data.push(f32::from_le_bytes(b)))?;
                    t.packed_source = PackedSource(if first { self.packed(value) } else { None });
                }
                tensor::INT32_DATA => self.varints(value, |v| t.int32_data.push(v as i32))?,
                tensor::STRING_DATA => t.string_data.push(self.str(value)?),
                tensor::INT64_DATA => self.int64s(value, &mut t.int64_data)?,
                tensor::NAME => t.name = Some(self.str(value)?),
                tensor::RAW_DATA => t.raw_data = Some(self.bytes(value)?),
                tensor::DOUBLE_DATA => {
                    let first = t.double_data.is_empty();
                    self.fixed::<8>(value, |b| t.double_data.push(f64::from_le_bytes(b)))?;
                    t.packed_source = PackedSource(if first { self.packed(value) } else { None });
                }
                tensor::UINT64_DATA => self.varints(value, |v| t.uint64_data.push(v))?,
                tensor::DOC_STRING => t.doc_string = Some(self.str(value)?),
                tensor::EXTERNAL_DATA => t.external_data.push(self.nested(|d| d.pair(payload(value)?))?),
                tensor::DATA_LOCATION => t.data_location = Some(int32(value)?),
                tensor::METADATA_PROPS => t.metadata_props.push(self.nested(|d| d.pair(payload(value)?))?),
                _ => return Err(GiveUp),
            }
        }
        Ok(self.model.tensors.alloc(t))
    }

    fn segment(&mut self, range: Range<usize>) -> Result<Segment> {
        let mut s = Segment::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                tensor::segment::BEGIN => s.begin = Some(int64(value)?),
                tensor::segment::END => s.end = Some(int64(value)?),
                _ => return Err(GiveUp),
            }
        }
        Ok(s)
    }

    fn sparse(&mut self, range: Range<usize>) -> Result<SparseTensor> {
        let (mut values, mut indices) = (None, None);
        let mut s = SparseTensor::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                sparse_tensor::VALUES => once(&mut values, value)?,
                sparse_tensor::INDICES => once(&mut indices, value)?,
                sparse_tensor::DIMS => self.int64s(value, &mut s.dims)?,
                _ => return Err(GiveUp),
            }
        }
        if let Some(range) = values {
            s.values = Some(self.nested(|d| d.tensor(range))?);
        }
        if let Some(range) = indices {
            s.indices = Some(self.nested(|d| d.tensor(range))?);
        }
        Ok(s)
    }

    /// A `TypeProto`: exactly one case of its oneof, or none.
    fn ty(&mut self, range: Range<usize>) -> Result<Type> {
        let mut t = Type::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            if number == type_proto::DENOTATION {
                t.denotation = Some(Box::new(self.str(value)?));
                continue;
            }
            if t.value.is_some() {
                return Err(GiveUp);
            }
            let range = payload(value)?;
            t.value = Some(match number {
                type_proto::TENSOR_TYPE => TypeValue::Tensor(self.nested(|d| d.tensor_type(range))?),
                type_proto::SEQUENCE_TYPE => TypeValue::Sequence(self.nested(|d| d.element_type(range))?),
                type_proto::MAP_TYPE => self.nested(|d| d.map_type(range))?,
                type_proto::OPAQUE_TYPE => self.nested(|d| d.opaque(range))?,
                type_proto::SPARSE_TENSOR_TYPE => TypeValue::SparseTensor(self.nested(|d| d.tensor_type(range))?),
                type_proto::OPTIONAL_TYPE => TypeValue::Optional(self.nested(|d| d.element_type(range))?),
                _ => return Err(GiveUp),
            });
        }
        Ok(t)
    }

    /// `Tensor` and `SparseTensor` (which number their fields the same, as `to_wire` checks).
    fn tensor_type(&mut self, range: Range<usize>) -> Result<TensorType> {
        let mut t = TensorType::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                type_proto::tensor::ELEM_TYPE => t.elem_type = Some(int32(value)?),
                type_proto::tensor::SHAPE if t.shape.is_none() => {
                    t.shape = Some(self.nested(|d| d.shape(payload(value)?))?)
                }
                _ => return Err(GiveUp),
            }
        }
        Ok(t)
    }

    /// `Sequence` and `Optional` (which number their one field the same, as `to_wire` checks):
    /// an element type at most once.
    fn element_type(&mut self, range: Range<usize>) -> Result<Option<Box<Type>>> {
        let mut element = None;
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                type_proto::sequence::ELEM_TYPE if element.is_none() => {
                    element = Some(Box::new(self.nested(|d| d.ty(payload(value)?))?))
                }
                _ => return Err(GiveUp),
            }
        }
        Ok(element)
    }

    fn map_type(&mut self, range: Range<usize>) -> Result<TypeValue> {
        let (mut key_type, mut value_type) = (None, None);
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                type_proto::map::KEY_TYPE => key_type = Some(int32(value)?),
                type_proto::map::VALUE_TYPE if value_type.is_none() => {
                    value_type = Some(Box::new(self.nested(|d| d.ty(payload(value)?))?))
                }
                _ => return Err(GiveUp),
            }
        }
        Ok(TypeValue::Map { key_type, value_type })
    }

    fn opaque(&mut self, range: Range<usize>) -> Result<TypeValue> {
        let (mut domain, mut name) = (None, None);
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                type_proto::opaque::DOMAIN => domain = Some(self.str(value)?),
                type_proto::opaque::NAME => name = Some(self.str(value)?),
                _ => return Err(GiveUp),
            }
        }
        Ok(TypeValue::Opaque { domain: domain.map(Box::new), name: name.map(Box::new) })
    }

    fn shape(&mut self, range: Range<usize>) -> Result<Shape> {
        let mut shape = Shape::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                tensor_shape::DIM => shape.dims.push(self.nested(|d| d.dimension(payload(value)?))?),
                _ => return Err(GiveUp),
            }
        }
        Ok(shape)
    }

    fn dimension(&mut self, range: Range<usize>) -> Result<Dimension> {
        let mut d = Dimension::default();
        let (mut size, mut param) = (None, None);
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                tensor_shape::dimension::DIM_VALUE => size = Some(int64(value)?),
                tensor_shape::dimension::DIM_PARAM => param = Some(self.str(value)?),
                tensor_shape::dimension::DENOTATION => d.denotation = Some(Box::new(self.str(value)?)),
                _ => return Err(GiveUp),
            }
        }
        d.value = dim_value(size, param);
        Ok(d)
    }

    fn function(&mut self, range: Range<usize>) -> Result<FunctionId> {
        let (mut nodes, mut attribute_protos) = (Vec::new(), Vec::new());
        let mut f = Function::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                function::NAME => f.name = Some(self.str(value)?),
                function::INPUT => f.inputs.push(self.str(value)?),
                function::OUTPUT => f.outputs.push(self.str(value)?),
                function::ATTRIBUTE => f.attributes.push(self.str(value)?),
                function::NODE => nodes.push(payload(value)?),
                function::DOC_STRING => f.doc_string = Some(self.str(value)?),
                function::OPSET_IMPORT => f.opset_import.push(self.nested(|d| d.opset(payload(value)?))?),
                function::DOMAIN => f.domain = Some(self.str(value)?),
                function::ATTRIBUTE_PROTO => attribute_protos.push(payload(value)?),
                function::VALUE_INFO => f.value_info.push(self.nested(|d| d.value_info(payload(value)?))?),
                function::OVERLOAD => f.overload = Some(self.str(value)?),
                function::METADATA_PROPS => f.metadata_props.push(self.nested(|d| d.pair(payload(value)?))?),
                _ => return Err(GiveUp),
            }
        }
        // The order `from_proto` allocates in: attributes, then nodes.
        for range in attribute_protos {
            let a = self.nested(|d| d.attribute(range))?;
            f.attribute_protos.push(a);
        }
        for range in nodes {
            let n = self.nested(|d| d.node(range))?;
            f.nodes.push(n);
        }
        Ok(self.model.function_store.alloc(f))
    }

    fn node_device(&mut self, range: Range<usize>) -> Result<NodeDeviceConfiguration> {
        let mut c = NodeDeviceConfiguration::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                node_device_configuration::CONFIGURATION_ID => c.configuration_id = Some(self.str(value)?),
                node_device_configuration::SHARDING_SPEC => {
                    c.sharding_spec.push(self.nested(|d| d.sharding_spec(payload(value)?))?)
                }
                node_device_configuration::PIPELINE_STAGE => c.pipeline_stage = Some(int32(value)?),
                _ => return Err(GiveUp),
            }
        }
        Ok(c)
    }

    fn sharding_spec(&mut self, range: Range<usize>) -> Result<ShardingSpec> {
        let mut s = ShardingSpec::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                sharding_spec::TENSOR_NAME => s.tensor_name = Some(self.str(value)?),
                sharding_spec::DEVICE => self.int64s(value, &mut s.device)?,
                sharding_spec::INDEX_TO_DEVICE_GROUP_MAP => {
                    s.index_to_device_group_map.push(self.nested(|d| d.int_int_list(payload(value)?))?)
                }
                sharding_spec::SHARDED_DIM => s.sharded_dim.push(self.nested(|d| d.sharded_dim(payload(value)?))?),
                _ => return Err(GiveUp),
            }
        }
        Ok(s)
    }

    fn int_int_list(&mut self, range: Range<usize>) -> Result<IntIntList> {
        let mut e = IntIntList::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                int_int_list_entry::KEY => e.key = Some(int64(value)?),
                int_int_list_entry::VALUE => self.int64s(value, &mut e.value)?,
                _ => return Err(GiveUp),
            }
        }
        Ok(e)
    }

    fn sharded_dim(&mut self, range: Range<usize>) -> Result<ShardedDim> {
        let mut s = ShardedDim::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                sharded_dim::AXIS => s.axis = Some(int64(value)?),
                sharded_dim::SIMPLE_SHARDING => {
                    s.simple_sharding.push(self.nested(|d| d.simple_sharded_dim(payload(value)?))?)
                }
                _ => return Err(GiveUp),
            }
        }
        Ok(s)
    }

    fn simple_sharded_dim(&mut self, range: Range<usize>) -> Result<SimpleShardedDim> {
        let (mut size, mut param, mut num_shards) = (None, None, None);
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                simple_sharded_dim::DIM_VALUE => size = Some(int64(value)?),
                simple_sharded_dim::DIM_PARAM => param = Some(self.str(value)?),
                simple_sharded_dim::NUM_SHARDS => num_shards = Some(int64(value)?),
                _ => return Err(GiveUp),
            }
        }
        Ok(SimpleShardedDim { dim: dim_value(size, param), num_shards })
    }
}

/// A dimension's value; when a file sets both (the oneof is flattened), the name wins, as
/// in `from_proto`.
fn dim_value(size: Option<i64>, param: Option<Str>) -> Option<DimValue> {
    match (size, param) {
        (_, Some(p)) => Some(DimValue::Param(p)),
        (Some(v), None) => Some(DimValue::Value(v)),
        (None, None) => None,
    }
}
