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
                1 => m.ir_version = Some(int64(value)?),
                2 => m.producer_name = Some(self.str(value)?),
                3 => m.producer_version = Some(self.str(value)?),
                4 => m.domain = Some(self.str(value)?),
                5 => m.model_version = Some(int64(value)?),
                6 => m.doc_string = Some(self.str(value)?),
                7 => once(&mut graph, value)?,
                8 => m.opset_import.push(self.nested(|d| d.opset(payload(value)?))?),
                14 => m.metadata_props.push(self.nested(|d| d.pair(payload(value)?))?),
                20 => training.push(payload(value)?),
                25 => functions.push(payload(value)?),
                26 => m.configuration.push(self.nested(|d| d.device_configuration(payload(value)?))?),
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
                1 => o.domain = Some(self.str(value)?),
                2 => o.version = Some(int64(value)?),
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
                1 => p.key = Some(self.str(value)?),
                2 => p.value = Some(self.str(value)?),
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
                1 => c.name = Some(self.str(value)?),
                2 => c.num_devices = Some(int32(value)?),
                3 => c.device.push(self.str(value)?),
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
                1 => once(&mut initialization, value)?,
                2 => once(&mut algorithm, value)?,
                3 => t.initialization_binding.push(self.nested(|d| d.pair(payload(value)?))?),
                4 => t.update_binding.push(self.nested(|d| d.pair(payload(value)?))?),
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
                1 => nodes.push(payload(value)?),
                2 => g.name = Some(self.str(value)?),
                5 => initializers.push(payload(value)?),
                10 => g.doc_string = Some(self.str(value)?),
                11 => g.inputs.push(self.nested(|d| d.value_info(payload(value)?))?),
                12 => g.outputs.push(self.nested(|d| d.value_info(payload(value)?))?),
                13 => g.value_info.push(self.nested(|d| d.value_info(payload(value)?))?),
                14 => g.quantization_annotation.push(self.nested(|d| d.tensor_annotation(payload(value)?))?),
                15 => sparse.push(payload(value)?),
                16 => g.metadata_props.push(self.nested(|d| d.pair(payload(value)?))?),
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
        let pool = onnx_threads::pool().filter(|_| ranges.len() >= SPLIT_NODES);
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
                1 => v.name = Some(self.str(value)?),
                2 if v.ty.is_none() => v.ty = Some(self.nested(|d| d.ty(payload(value)?))?),
                3 => v.doc_string = Some(self.str(value)?),
                4 => v.metadata_props.push(self.nested(|d| d.pair(payload(value)?))?),
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
                1 => a.tensor_name = Some(self.str(value)?),
                2 => a.quant_parameter_tensor_names.push(self.nested(|d| d.pair(payload(value)?))?),
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
                1 => n.inputs.push(self.str(value)?),
                2 => n.outputs.push(self.str(value)?),
                3 => n.name = Some(self.str(value)?),
                4 => n.op_type = Some(self.str(value)?),
                5 => n.attributes.push(self.nested(|d| d.attribute(payload(value)?))?),
                6 => n.rare.get_mut().doc_string = Some(self.str(value)?),
                7 => n.domain = Some(self.str(value)?),
                8 => n.rare.get_mut().overload = Some(self.str(value)?),
                9 => n.rare.get_mut().metadata_props.push(self.nested(|d| d.pair(payload(value)?))?),
                10 => n.rare.get_mut().device_configurations.push(self.nested(|d| d.node_device(payload(value)?))?),
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
                1 => a.name = Some(self.str(value)?),
                2 => match value {
                    Wire::Fixed32(bits) => a.f = Some(f32::from_bits(bits)),
                    _ => return Err(GiveUp),
                },
                3 => a.i = Some(int64(value)?),
                4 => a.s = Some(self.str(value)?),
                5 => once(&mut t, value)?,
                6 => once(&mut g, value)?,
                7 => self.fixed::<4>(value, |b| a.floats.push(f32::from_le_bytes(b)))?,
                8 => self.int64s(value, &mut a.ints)?,
                9 => a.strings.push(self.str(value)?),
                10 => tensors.push(payload(value)?),
                11 => graphs.push(payload(value)?),
                13 => a.doc_string = Some(self.str(value)?),
                14 if a.tp.is_none() => a.tp = Some(self.nested(|d| d.ty(payload(value)?))?),
                15 => a.type_protos.push(self.nested(|d| d.ty(payload(value)?))?),
                20 => a.ty = Some(int32(value)?),
                21 => a.ref_attr_name = Some(self.str(value)?),
                22 => once(&mut sparse, value)?,
                23 => sparse_tensors.push(payload(value)?),
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
                1 => self.int64s(value, &mut t.dims)?,
                2 => t.data_type = Some(int32(value)?),
                3 if t.segment.is_none() => t.segment = Some(self.nested(|d| d.segment(payload(value)?))?),
                4 => self.fixed::<4>(value, |b| t.float_data.push(f32::from_le_bytes(b)))?,
                5 => self.varints(value, |v| t.int32_data.push(v as i32))?,
                6 => t.string_data.push(self.str(value)?),
                7 => self.int64s(value, &mut t.int64_data)?,
                8 => t.name = Some(self.str(value)?),
                9 => t.raw_data = Some(self.bytes(value)?),
                10 => self.fixed::<8>(value, |b| t.double_data.push(f64::from_le_bytes(b)))?,
                11 => self.varints(value, |v| t.uint64_data.push(v))?,
                12 => t.doc_string = Some(self.str(value)?),
                13 => t.external_data.push(self.nested(|d| d.pair(payload(value)?))?),
                14 => t.data_location = Some(int32(value)?),
                16 => t.metadata_props.push(self.nested(|d| d.pair(payload(value)?))?),
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
                1 => s.begin = Some(int64(value)?),
                2 => s.end = Some(int64(value)?),
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
                1 => once(&mut values, value)?,
                2 => once(&mut indices, value)?,
                3 => self.int64s(value, &mut s.dims)?,
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
            if number == 6 {
                t.denotation = Some(Box::new(self.str(value)?));
                continue;
            }
            if t.value.is_some() {
                return Err(GiveUp);
            }
            let range = payload(value)?;
            t.value = Some(match number {
                1 => TypeValue::Tensor(self.nested(|d| d.tensor_type(range))?),
                4 => TypeValue::Sequence(self.nested(|d| d.element_type(range))?),
                5 => self.nested(|d| d.map_type(range))?,
                7 => self.nested(|d| d.opaque(range))?,
                8 => TypeValue::SparseTensor(self.nested(|d| d.tensor_type(range))?),
                9 => TypeValue::Optional(self.nested(|d| d.element_type(range))?),
                _ => return Err(GiveUp),
            });
        }
        Ok(t)
    }

    fn tensor_type(&mut self, range: Range<usize>) -> Result<TensorType> {
        let mut t = TensorType::default();
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                1 => t.elem_type = Some(int32(value)?),
                2 if t.shape.is_none() => t.shape = Some(self.nested(|d| d.shape(payload(value)?))?),
                _ => return Err(GiveUp),
            }
        }
        Ok(t)
    }

    /// `Sequence` and `Optional`: an element type (field 1) at most once.
    fn element_type(&mut self, range: Range<usize>) -> Result<Option<Box<Type>>> {
        let mut element = None;
        let mut fields = self.fields(range);
        while let Some((number, value)) = fields.next()? {
            match number {
                1 if element.is_none() => element = Some(Box::new(self.nested(|d| d.ty(payload(value)?))?)),
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
                1 => key_type = Some(int32(value)?),
                2 if value_type.is_none() => value_type = Some(Box::new(self.nested(|d| d.ty(payload(value)?))?)),
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
                1 => domain = Some(self.str(value)?),
                2 => name = Some(self.str(value)?),
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
                1 => shape.dims.push(self.nested(|d| d.dimension(payload(value)?))?),
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
                1 => size = Some(int64(value)?),
                2 => param = Some(self.str(value)?),
                3 => d.denotation = Some(Box::new(self.str(value)?)),
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
                1 => f.name = Some(self.str(value)?),
                4 => f.inputs.push(self.str(value)?),
                5 => f.outputs.push(self.str(value)?),
                6 => f.attributes.push(self.str(value)?),
                7 => nodes.push(payload(value)?),
                8 => f.doc_string = Some(self.str(value)?),
                9 => f.opset_import.push(self.nested(|d| d.opset(payload(value)?))?),
                10 => f.domain = Some(self.str(value)?),
                11 => attribute_protos.push(payload(value)?),
                12 => f.value_info.push(self.nested(|d| d.value_info(payload(value)?))?),
                13 => f.overload = Some(self.str(value)?),
                14 => f.metadata_props.push(self.nested(|d| d.pair(payload(value)?))?),
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
                1 => c.configuration_id = Some(self.str(value)?),
                2 => c.sharding_spec.push(self.nested(|d| d.sharding_spec(payload(value)?))?),
                3 => c.pipeline_stage = Some(int32(value)?),
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
                1 => s.tensor_name = Some(self.str(value)?),
                2 => self.int64s(value, &mut s.device)?,
                3 => s.index_to_device_group_map.push(self.nested(|d| d.int_int_list(payload(value)?))?),
                4 => s.sharded_dim.push(self.nested(|d| d.sharded_dim(payload(value)?))?),
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
                1 => e.key = Some(int64(value)?),
                2 => self.int64s(value, &mut e.value)?,
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
                1 => s.axis = Some(int64(value)?),
                2 => s.simple_sharding.push(self.nested(|d| d.simple_sharded_dim(payload(value)?))?),
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
                1 => size = Some(int64(value)?),
                2 => param = Some(self.str(value)?),
                3 => num_shards = Some(int64(value)?),
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
