//! Binary `.onnx` models: decoding (from a memory map, so tensor bytes are not copied) and
//! encoding (canonical protobuf, the bytes onnx itself writes).

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use bytes::Bytes;
use onnx_proto as pb;

use crate::ir::{DataType, Model, Tensor, ValueInfo};
use crate::lower;

/// Why a binary model could not be read. Always names the file.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{path}: cannot read: {source}")]
    Io { path: String, source: io::Error },
    #[error("{path}: not a valid ONNX protobuf: {source}")]
    Decode { path: String, source: pb::DecodeError },
    /// The model's outermost message ends past the end of the file: the usual sign of a
    /// download or copy that stopped early, which protobuf itself calls "buffer underflow".
    #[error(
        "{path}: the file is truncated: its {field} (at byte {at}) needs {needed} bytes, but the file ends \
         after {len} bytes, {missing} short; download or copy it again"
    )]
    Truncated { path: String, field: String, at: usize, needed: u64, len: usize, missing: u64 },
}

/// The bytes of a file: memory-mapped when it is a regular file, read otherwise (pipes,
/// stdin). The map is private and read-only; a program that maps files installs
/// [`crate::signals::install`], so that the file being truncated while it is read ends the
/// process with a message naming it rather than by SIGBUS.
pub fn read_bytes(path: &Path) -> io::Result<Bytes> {
    read_file(path, true)
}

/// The bytes of a file, read into memory: for a process that holds a model and must outlive
/// the file changing under it (the language server, the browser), where a map's fault
/// would end it.
pub fn read_bytes_copied(path: &Path) -> io::Result<Bytes> {
    read_file(path, false)
}

fn read_file(path: &Path, map: bool) -> io::Result<Bytes> {
    use std::os::unix::fs::FileTypeExt;
    // Looked at before opening: opening a device can have effects, and a FIFO blocks.
    let kind = std::fs::metadata(path)?.file_type();
    if kind.is_char_device() || kind.is_block_device() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "a device, not a model file"));
    }
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if map && meta.is_file() && meta.len() >= 64 * 1024 {
        return map_file(&file, &path.display().to_string());
    }
    if meta.is_file() {
        let mut buf = Vec::new();
        (&file).read_to_end(&mut buf)?;
        return Ok(Bytes::from(buf));
    }
    read_stream(file)
}

/// The most read from a stream (stdin, a FIFO): protobuf cannot encode a bigger model, and
/// a model file that big is memory-mapped when given as a regular file.
pub const MAX_STREAM_BYTES: u64 = 2 << 30;

/// Reads a stream to its end, up to [`MAX_STREAM_BYTES`].
fn read_stream(reader: impl Read) -> io::Result<Bytes> {
    let mut buf = Vec::new();
    reader.take(MAX_STREAM_BYTES + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > MAX_STREAM_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("more than {} GiB from a stream; give a model this big as a file", MAX_STREAM_BYTES >> 30),
        ));
    }
    Ok(Bytes::from(buf))
}

/// A map, registered for the SIGBUS handler's message while it lives.
struct Mapped {
    map: memmap2::Mmap,
    _registered: crate::signals::Registered,
}

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        &self.map
    }
}

/// `file` mapped; `label` names it if it changes while mapped.
#[allow(unsafe_code)]
pub(crate) fn map_file(file: &File, label: &str) -> io::Result<Bytes> {
    // SAFETY: the map is read-only and private, and we never write through it. Another
    // process truncating the file while we hold the map faults on access: the SIGBUS handler
    // (crate::signals) then ends the process with a message naming `label`.
    let map = unsafe { memmap2::Mmap::map(file)? };
    let registered = crate::signals::register(map.as_ptr(), map.len(), label);
    Ok(Bytes::from_owner(Mapped { map, _registered: registered }))
}

/// Reads all of standard input.
pub fn read_stdin() -> io::Result<Bytes> {
    read_stream(io::stdin().lock())
}

/// Decodes and lowers a model. `what` names the source in errors (a path, or `<stdin>`).
///
/// Well-formed files take the direct path (`lower::from_wire`); anything it does not take
/// on (every error, and rare but legal encodings) is decoded by prost and lowered, so
/// errors and rare files get prost's answer.
pub fn decode_model(data: Bytes, what: &str) -> Result<Model, ReadError> {
    if let Some(model) = lower::from_wire::model(&data) {
        return Ok(model);
    }
    decode_model_with_prost(data, what)
}

/// Decodes with prost, then lowers: the reference the direct path is tested against.
pub fn decode_model_with_prost(data: Bytes, what: &str) -> Result<Model, ReadError> {
    let proto = decode_with_room(data.clone()).map_err(|source| match truncation(&data) {
        Some(t) => ReadError::Truncated {
            path: what.to_owned(),
            field: t.field,
            at: t.at,
            needed: t.needed,
            len: data.len(),
            missing: t.needed.saturating_sub((data.len() - t.at) as u64),
        },
        None => ReadError::Decode { path: what.to_owned(), source },
    })?;
    Ok(lower::from_proto::model(proto))
}

/// Where a model's top-level field runs past the end of the data.
struct Truncation {
    /// The field, by name (`ModelProto.graph`) or number.
    field: String,
    /// Where its encoding (tag included) starts.
    at: usize,
    /// The bytes it needs from `at` on: tag, length and payload.
    needed: u64,
}

/// Walks the top-level fields of a `ModelProto` (tags and lengths only) and finds the one
/// that runs past the end, if the data is cut short there. `None` for any other damage.
fn truncation(data: &[u8]) -> Option<Truncation> {
    use onnx_proto::fields::model as f;
    let mut rest = data;
    while !rest.is_empty() {
        let at = data.len() - rest.len();
        let Some(key) = varint(&mut rest) else {
            return Some(Truncation { field: "last field's tag".into(), at, needed: 10 });
        };
        let number = (key >> 3) as u32;
        let name = match number {
            f::IR_VERSION => "ir_version",
            f::PRODUCER_NAME => "producer_name",
            f::PRODUCER_VERSION => "producer_version",
            f::DOMAIN => "domain",
            f::MODEL_VERSION => "model_version",
            f::DOC_STRING => "doc_string",
            f::GRAPH => "graph",
            f::OPSET_IMPORT => "opset_import",
            f::METADATA_PROPS => "metadata_props",
            f::TRAINING_INFO => "training_info",
            f::FUNCTIONS => "functions",
            f::CONFIGURATION => "configuration",
            _ => "",
        };
        let field = if name.is_empty() { format!("ModelProto field {number}") } else { format!("ModelProto.{name}") };
        // Bytes read so far of this field (its key, then its length for length-delimited ones).
        let read = |rest: &[u8]| (data.len() - rest.len() - at) as u64;
        let needed = match key & 7 {
            0 => match varint(&mut rest) {
                Some(_) => continue,
                None => read(rest) + 1,
            },
            1 => read(rest) + 8,
            2 => {
                let Some(len) = varint(&mut rest) else {
                    return Some(Truncation { field, at, needed: read(rest) + 1 });
                };
                // A length past protobuf's 2 GiB limit is damage, not a file cut short.
                if len > i32::MAX as u64 {
                    return None;
                }
                read(rest) + len
            }
            5 => read(rest) + 4,
            _ => return None,
        };
        if needed > (data.len() - at) as u64 {
            return Some(Truncation { field, at, needed });
        }
        rest = &data[at + needed as usize..];
    }
    None
}

/// Decodes a model with room made for the main graph's nodes first. Decoded one by one into
/// a vector that doubles as it grows, a big graph's nodes were copied about twice over and
/// their memory faulted in twice: a fifth of `onnx check` on a 20,000-node model.
fn decode_with_room(data: Bytes) -> Result<pb::ModelProto, pb::DecodeError> {
    use pb::Message as _;
    let mut model = pb::ModelProto::default();
    let nodes = main_graph_nodes(&data);
    if nodes > 0 {
        // Merging into a present graph is what decoding its first occurrence does.
        let mut graph = pb::GraphProto::default();
        if graph.node.try_reserve_exact(nodes).is_ok() {
            model.graph = Some(graph);
        }
    }
    model.merge(data)?;
    Ok(model)
}

/// How many nodes the main graph has (`ModelProto.graph` is field 7, `GraphProto.node` field
/// 1), found by walking field keys and lengths without decoding anything; 0 when the bytes
/// are not well-formed, which the decoder then reports.
fn main_graph_nodes(data: &[u8]) -> usize {
    let mut nodes = 0;
    let complete = each_field(data, |number, payload| {
        if let (7, Some(graph)) = (number, payload) {
            let mut in_graph = 0;
            if each_field(graph, |number, payload| in_graph += usize::from(number == 1 && payload.is_some())) {
                nodes += in_graph;
            }
        }
    });
    if complete { nodes } else { 0 }
}

/// Calls `visit` with the number of each field of a protobuf message and, for
/// length-delimited fields, its payload. False when the bytes end inside a field or use a
/// wire type onnx.proto does not (groups).
fn each_field(data: &[u8], mut visit: impl FnMut(u64, Option<&[u8]>)) -> bool {
    each_field_at(data, |number, payload, _| visit(number, payload))
}

/// [`each_field`], also giving where each field (its key) starts in `data`.
fn each_field_at(mut data: &[u8], mut visit: impl FnMut(u64, Option<&[u8]>, usize)) -> bool {
    let total = data.len();
    while !data.is_empty() {
        let start = total - data.len();
        let Some(key) = varint(&mut data) else { return false };
        let payload = match key & 7 {
            0 => varint(&mut data).map(|_| None),
            1 => skip(&mut data, 8).map(|_| None),
            2 => varint(&mut data).and_then(|len| skip(&mut data, usize::try_from(len).ok()?)).map(Some),
            5 => skip(&mut data, 4).map(|_| None),
            _ => None,
        };
        let Some(payload) = payload else { return false };
        visit(key >> 3, payload, start);
    }
    true
}

/// Reads a varint (at most ten bytes).
fn varint(data: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for (i, &byte) in data.iter().take(10).enumerate() {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            *data = &data[i + 1..];
            return Some(value);
        }
    }
    None
}

/// The next `len` bytes, consumed.
fn skip<'a>(data: &mut &'a [u8], len: usize) -> Option<&'a [u8]> {
    if len > data.len() {
        return None;
    }
    let (head, rest) = data.split_at(len);
    *data = rest;
    Some(head)
}

/// Whether bytes whose format nothing names (standard input, a file without a known
/// extension) look like the ONNX text format rather than protobuf: UTF-8 that starts like
/// a model text. A binary model starts with a field tag, never with one of these bytes.
pub fn looks_like_text(data: &[u8]) -> bool {
    let first = data.iter().find(|b| !b.is_ascii_whitespace());
    let starts_like_text =
        first.is_some_and(|&b| b == b'<' || b == b'#' || b == b'"' || b == b'_' || b.is_ascii_alphabetic());
    starts_like_text && std::str::from_utf8(data).is_ok()
}

/// Why bytes are surely not a model, for files that protobuf would misread: an empty file
/// decodes as an empty model, and a Git LFS pointer (what a clone without `git lfs` leaves
/// in place of the model) as a wire-type error.
pub fn not_a_model(data: &[u8]) -> Option<&'static str> {
    if data.is_empty() {
        return Some("the file is empty");
    }
    if data.starts_with(b"version https://git-lfs.github.com/spec/") {
        return Some(
            "a Git LFS pointer, not the model itself; fetch the model with `git lfs pull` \
             (or download the file rather than its pointer)",
        );
    }
    None
}

/// Reads a model file.
pub fn read_model(path: &Path) -> Result<Model, ReadError> {
    let what = path.display().to_string();
    let data = read_bytes(path).map_err(|source| ReadError::Io { path: what.clone(), source })?;
    decode_model(data, &what)
}

/// Encodes a model as canonical protobuf.
pub fn encode_model(model: &Model) -> Vec<u8> {
    lower::to_wire::model(model)
}

/// The largest message protobuf can hold: 2 GiB less a byte. onnx and onnxruntime refuse a
/// bigger model file (its tensors belong in external data).
pub const MAX_MESSAGE_BYTES: usize = i32::MAX as usize;

/// Why a model's binary encoding of `encoded_len` bytes would be one no protobuf reader
/// loads: too big, or nested too deep. `None` when it can be written. Asked before writing,
/// so that nothing unreadable (nor 100 GB of it) is written.
pub fn unwritable(model: &Model, encoded_len: usize) -> Option<String> {
    if encoded_len > MAX_MESSAGE_BYTES {
        return Some(format!(
            "its binary encoding would take {encoded_len} bytes, past protobuf's limit of 2 GiB \
             ({MAX_MESSAGE_BYTES} bytes): onnx and onnxruntime could not load it; keep its big tensors in \
             external data (`--external-data FILE`, or `onnx convert` without --embed-external)"
        ));
    }
    let depth = lower::depth::message_depth(model);
    if depth > lower::depth::READABLE_DEPTH {
        let levels = if depth > lower::depth::COUNTED_DEPTH {
            format!("more than {}", lower::depth::COUNTED_DEPTH)
        } else {
            depth.to_string()
        };
        return Some(format!(
            "its messages would nest {levels} levels deep (subgraphs or types nested too far), past the {} \
             levels protobuf readers accept: onnx, onnxruntime and this tool could not load it; keep it as text",
            lower::depth::READABLE_DEPTH
        ));
    }
    None
}

/// [`encode_model`] for writing to a file: the big runs of tensor bytes are written from
/// the model instead of copied into the encoding first ([`lower::to_wire::model_spliced`]).
pub fn encode_model_spliced(model: &Model) -> lower::to_wire::Encoded<'_> {
    lower::to_wire::model_spliced(model)
}

/// The bytes of the model `original` holds with `added` appended to its main graph's
/// `value_info` (what `onnx infer` writes): everything else is kept byte for byte, in the
/// order and encoding it came in, and only the graph's length and the new entries are
/// written. `None` when `original` is not a well-formed message with exactly one graph
/// field (protobuf would merge several): then encode the model whole.
pub fn append_value_info(original: &[u8], added: &[ValueInfo]) -> Option<Vec<u8>> {
    append_to_graph(original, lower::to_wire::value_info_pieces(pb::fields::graph::VALUE_INFO, added))
}

/// `original` with `pieces` (encoded graph fields) appended to its one graph field; see
/// [`append_value_info`].
pub(crate) fn append_to_graph(original: &[u8], pieces: Vec<Vec<u8>>) -> Option<Vec<u8>> {
    let mut graph = None;
    let mut graphs = 0;
    let well_formed = each_field_at(original, |number, payload, start| {
        if let (7, Some(payload)) = (number, payload) {
            graphs += 1;
            let payload_start = payload.as_ptr() as usize - original.as_ptr() as usize;
            graph = Some((start, payload_start, payload_start + payload.len()));
        }
    });
    let (start, payload_start, end) = graph.filter(|_| well_formed && graphs == 1)?;
    let appended: usize = pieces.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(original.len() + appended + 10);
    out.extend_from_slice(&original[..start]);
    out.push(7 << 3 | 2);
    lower::to_wire::push_varint(&mut out, (end - payload_start + appended) as u64);
    out.extend_from_slice(&original[payload_start..end]);
    pieces.iter().for_each(|piece| out.extend_from_slice(piece));
    out.extend_from_slice(&original[end..]);
    Some(out)
}

/// Decodes a standalone TensorProto (backend test `input_N.pb` files).
pub fn decode_tensor(data: Bytes, what: &str) -> Result<Tensor, ReadError> {
    let proto: pb::TensorProto =
        pb::decode(data).map_err(|source| ReadError::Decode { path: what.to_owned(), source })?;
    Ok(lower::from_proto::tensor(proto))
}

/// A value a backend test stores in a `.pb` file besides plain tensors: the elements of a
/// SequenceProto, a MapProto's entries, or an OptionalProto's content.
#[derive(Debug, Clone)]
pub enum StoredValue {
    Tensor(Box<Tensor>),
    Sequence(Vec<StoredValue>),
    Map(StoredMap),
    Optional(Option<Box<StoredValue>>),
}

/// A MapProto: keys of one integer type or strings, and a value per key.
#[derive(Debug, Clone)]
pub struct StoredMap {
    pub keys: MapKeys,
    pub values: Vec<StoredValue>,
}

/// The keys of a map: integers of the element type named, or strings (bytes: ONNX strings
/// need not be UTF-8).
#[derive(Debug, Clone, PartialEq)]
pub enum MapKeys {
    Ints(DataType, Vec<i64>),
    Strings(Vec<Bytes>),
}

impl MapKeys {
    pub fn len(&self) -> usize {
        match self {
            MapKeys::Ints(_, keys) => keys.len(),
            MapKeys::Strings(keys) => keys.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Decodes a standalone SequenceProto into its elements (tensors, sequences, maps,
/// optionals; sparse tensors are refused).
pub fn decode_sequence(data: Bytes, what: &str) -> Result<Vec<StoredValue>, ReadError> {
    let proto: pb::SequenceProto =
        pb::decode(data).map_err(|source| ReadError::Decode { path: what.to_owned(), source })?;
    sequence_of(proto).map_err(|why| unsupported(what, why))
}

/// Decodes a standalone OptionalProto into its content, if it holds one.
pub fn decode_optional(data: Bytes, what: &str) -> Result<Option<StoredValue>, ReadError> {
    let proto: pb::OptionalProto =
        pb::decode(data).map_err(|source| ReadError::Decode { path: what.to_owned(), source })?;
    optional_of(proto).map_err(|why| unsupported(what, why))
}

/// Decodes a standalone MapProto.
pub fn decode_map(data: Bytes, what: &str) -> Result<StoredMap, ReadError> {
    let proto: pb::MapProto = pb::decode(data).map_err(|source| ReadError::Decode { path: what.to_owned(), source })?;
    map_of(proto).map_err(|why| unsupported(what, why))
}

fn unsupported(what: &str, why: String) -> ReadError {
    ReadError::Io { path: what.to_owned(), source: std::io::Error::other(why) }
}

fn sequence_of(proto: pb::SequenceProto) -> Result<Vec<StoredValue>, String> {
    if !proto.sparse_tensor_values.is_empty() {
        return Err("sparse tensors in stored values are not read yet".into());
    }
    let mut out: Vec<StoredValue> =
        proto.tensor_values.into_iter().map(|t| StoredValue::Tensor(Box::new(lower::from_proto::tensor(t)))).collect();
    for s in proto.sequence_values {
        out.push(StoredValue::Sequence(sequence_of(s)?));
    }
    for m in proto.map_values {
        out.push(StoredValue::Map(map_of(m)?));
    }
    for o in proto.optional_values {
        out.push(StoredValue::Optional(optional_of(o)?.map(Box::new)));
    }
    Ok(out)
}

fn map_of(proto: pb::MapProto) -> Result<StoredMap, String> {
    let code = proto.key_type.unwrap_or(0);
    let Some(key_type) = DataType::from_code(code) else {
        return Err(format!("a map's key type {code} is not an element type"));
    };
    let keys = match key_type {
        DataType::String => MapKeys::Strings(proto.string_keys),
        integer if integer.is_integer() => MapKeys::Ints(integer, proto.keys),
        other => return Err(format!("a map's keys are {}, not an integer type or string", other.name())),
    };
    let values = proto.values.map(sequence_of).transpose()?.unwrap_or_default();
    if values.len() != keys.len() {
        return Err(format!("a map has {} keys and {} values", keys.len(), values.len()));
    }
    Ok(StoredMap { keys, values })
}

fn optional_of(proto: pb::OptionalProto) -> Result<Option<StoredValue>, String> {
    if proto.sparse_tensor_value.is_some() {
        return Err("sparse tensors in stored values are not read yet".into());
    }
    if let Some(t) = proto.tensor_value {
        return Ok(Some(StoredValue::Tensor(Box::new(lower::from_proto::tensor(t)))));
    }
    if let Some(s) = proto.sequence_value {
        return Ok(Some(StoredValue::Sequence(sequence_of(s)?)));
    }
    if let Some(m) = proto.map_value {
        return Ok(Some(StoredValue::Map(map_of(m)?)));
    }
    if let Some(o) = proto.optional_value {
        return Ok(Some(StoredValue::Optional(optional_of(*o)?.map(Box::new))));
    }
    Ok(None)
}

/// A stored value as the message onnx's backend tests write for it: a TensorProto, a
/// SequenceProto, a MapProto or an OptionalProto, named `name`.
pub fn encode_stored(value: &StoredValue, name: Option<&str>) -> Vec<u8> {
    let name = name.map(|n| Bytes::copy_from_slice(n.as_bytes()));
    match value {
        StoredValue::Tensor(t) => {
            let mut proto = lower::to_proto::tensor(t);
            proto.name = name;
            pb::encode(&proto)
        }
        StoredValue::Sequence(items) => pb::encode(&pb::SequenceProto { name, ..sequence_proto(items) }),
        StoredValue::Map(map) => pb::encode(&pb::MapProto { name, ..map_proto(map) }),
        StoredValue::Optional(content) => pb::encode(&pb::OptionalProto { name, ..optional_proto(content.as_deref()) }),
    }
}

/// The codes of SequenceProto's and OptionalProto's `elem_type`.
fn element_kind(value: &StoredValue) -> i32 {
    match value {
        StoredValue::Tensor(_) => 1,
        StoredValue::Sequence(_) => 3,
        StoredValue::Map(_) => 4,
        StoredValue::Optional(_) => 5,
    }
}

fn sequence_proto(items: &[StoredValue]) -> pb::SequenceProto {
    let mut proto = pb::SequenceProto { elem_type: Some(items.first().map_or(1, element_kind)), ..Default::default() };
    for item in items {
        match item {
            StoredValue::Tensor(t) => proto.tensor_values.push(lower::to_proto::tensor(t)),
            StoredValue::Sequence(s) => proto.sequence_values.push(sequence_proto(s)),
            StoredValue::Map(m) => proto.map_values.push(map_proto(m)),
            StoredValue::Optional(o) => proto.optional_values.push(optional_proto(o.as_deref())),
        }
    }
    proto
}

fn map_proto(map: &StoredMap) -> pb::MapProto {
    let (key_type, keys, string_keys) = match &map.keys {
        MapKeys::Ints(dt, keys) => (*dt, keys.clone(), Vec::new()),
        MapKeys::Strings(keys) => (DataType::String, Vec::new(), keys.clone()),
    };
    pb::MapProto {
        name: None,
        key_type: Some(key_type as i32),
        keys,
        string_keys,
        values: Some(sequence_proto(&map.values)),
    }
}

fn optional_proto(content: Option<&StoredValue>) -> pb::OptionalProto {
    let mut proto = pb::OptionalProto { elem_type: Some(content.map_or(0, element_kind)), ..Default::default() };
    match content {
        None => {}
        Some(StoredValue::Tensor(t)) => proto.tensor_value = Some(lower::to_proto::tensor(t)),
        Some(StoredValue::Sequence(s)) => proto.sequence_value = Some(sequence_proto(s)),
        Some(StoredValue::Map(m)) => proto.map_value = Some(map_proto(m)),
        Some(StoredValue::Optional(o)) => proto.optional_value = Some(Box::new(optional_proto(o.as_deref()))),
    }
    proto
}

pub fn encode_tensor(tensor: &Tensor) -> Vec<u8> {
    lower::to_wire::tensor(tensor)
}

/// Whether two directories are the same place (a model's relative external-data references
/// stay valid when it is written from one to the other).
pub fn same_directory(a: &Path, b: &Path) -> bool {
    a == b || matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

/// The directory external data of a model file is resolved against.
pub fn model_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model_with_nodes(count: usize) -> Vec<u8> {
        let node = pb::NodeProto { op_type: Some(Bytes::from_static(b"Relu")), ..Default::default() };
        let graph =
            pb::GraphProto { node: vec![node; count], name: Some(Bytes::from_static(b"g")), ..Default::default() };
        pb::encode(&pb::ModelProto { ir_version: Some(10), graph: Some(graph), ..Default::default() })
    }

    #[test]
    fn main_graph_nodes_are_counted_without_decoding() {
        assert_eq!(main_graph_nodes(&model_with_nodes(0)), 0);
        assert_eq!(main_graph_nodes(&model_with_nodes(3)), 3);
        assert_eq!(main_graph_nodes(&model_with_nodes(1000)), 1000);
        // Cut anywhere, the bytes are not counted (the decoder reports them).
        let bytes = model_with_nodes(5);
        for cut in 1..bytes.len() {
            assert!(main_graph_nodes(&bytes[..cut]) <= 5);
        }
        assert_eq!(main_graph_nodes(&[0xff; 12]), 0);
        assert_eq!(main_graph_nodes(&[]), 0);
    }

    #[test]
    fn making_room_first_decodes_the_same_model() {
        for count in [0, 1, 70] {
            let bytes = Bytes::from(model_with_nodes(count));
            let plain: pb::ModelProto = pb::decode(bytes.clone()).unwrap();
            assert_eq!(decode_with_room(bytes).unwrap(), plain);
        }
        // No graph field: the graph stays absent.
        let bytes = Bytes::from(pb::encode(&pb::ModelProto { ir_version: Some(7), ..Default::default() }));
        assert_eq!(decode_with_room(bytes).unwrap().graph, None);
    }
}
