//! The in-memory model every stage shares: checker, inference, evaluator, printer, language
//! server and browser.
//!
//! Shape: it mirrors ONNX's ModelProto field for field, so that binary → IR → binary is
//! lossless, but with the things a tool needs and protobuf lacks:
//! * graphs, nodes, tensors and functions live in typed arenas (`GraphId`, `NodeId`, …), so
//!   diagnostics, source maps and views can point at any of them, and a pass over every
//!   tensor (external data, size checks) is one loop over `Model::tensors`;
//! * field presence is kept as `Option` (an unset `domain` is not `""`);
//! * names are `Str`, exact bytes with UTF-8 views;
//! * raw tensor bytes are `Bytes`, shared with the memory map they were decoded from.
//!
//! The IR holds no text positions; the source map of the text front end does.

mod byte_string;
mod data_type;
pub mod tensor_data;
mod types;

pub use byte_string::{Str, same_bytes};
pub use data_type::{DataType, TypedField, code_name};
pub use types::{DimValue, Dimension, Shape, TensorType, Type, TypeValue};

use bytes::Bytes;
use la_arena::{Arena, Idx};

pub type GraphId = Idx<Graph>;
pub type NodeId = Idx<Node>;
pub type TensorId = Idx<Tensor>;
pub type FunctionId = Idx<Function>;

/// A whole model: the header fields of ModelProto plus the arenas that own every graph,
/// node, tensor and function in it (the main graph, subgraphs, training graphs and function
/// bodies alike).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Model {
    pub ir_version: Option<i64>,
    pub opset_import: Vec<OpsetImport>,
    pub producer_name: Option<Str>,
    pub producer_version: Option<Str>,
    pub domain: Option<Str>,
    pub model_version: Option<i64>,
    pub doc_string: Option<Str>,
    pub graph: Option<GraphId>,
    pub metadata_props: Vec<StringPair>,
    pub training_info: Vec<TrainingInfo>,
    /// Model-local functions, in file order.
    pub functions: Vec<FunctionId>,
    pub configuration: Vec<DeviceConfiguration>,

    pub graphs: Arena<Graph>,
    pub nodes: Arena<Node>,
    pub tensors: Arena<Tensor>,
    pub function_store: Arena<Function>,
}

/// `StringStringEntryProto`: metadata, external-data keys, training bindings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StringPair {
    pub key: Option<Str>,
    pub value: Option<Str>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpsetImport {
    pub domain: Option<Str>,
    pub version: Option<i64>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrainingInfo {
    pub initialization: Option<GraphId>,
    pub algorithm: Option<GraphId>,
    pub initialization_binding: Vec<StringPair>,
    pub update_binding: Vec<StringPair>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceConfiguration {
    pub name: Option<Str>,
    pub num_devices: Option<i32>,
    pub device: Vec<Str>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Graph {
    pub nodes: Vec<NodeId>,
    pub name: Option<Str>,
    pub initializers: Vec<TensorId>,
    pub sparse_initializers: Vec<SparseTensor>,
    pub doc_string: Option<Str>,
    pub inputs: Vec<ValueInfo>,
    pub outputs: Vec<ValueInfo>,
    pub value_info: Vec<ValueInfo>,
    pub quantization_annotation: Vec<TensorAnnotation>,
    pub metadata_props: Vec<StringPair>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ValueInfo {
    pub name: Option<Str>,
    pub ty: Option<Type>,
    pub doc_string: Option<Str>,
    pub metadata_props: Vec<StringPair>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TensorAnnotation {
    pub tensor_name: Option<Str>,
    pub quant_parameter_tensor_names: Vec<StringPair>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Node {
    /// Value names; an empty name is an omitted optional input. Held inline up to the
    /// usual counts (two inputs, one output): most nodes then need no list on the heap,
    /// which is two allocations fewer per node to make, fault in and free.
    pub inputs: NodeInputs,
    pub outputs: NodeOutputs,
    pub name: Option<Str>,
    pub op_type: Option<Str>,
    pub domain: Option<Str>,
    pub attributes: Vec<Attribute>,
    /// The fields few nodes carry, out of line (a pointer instead of 128 bytes): a big
    /// graph's decoding moves, and a process faults in, every node's bytes.
    pub rare: Rare<NodeRareFields>,
}

/// A node's input names: two inline, more on the heap.
pub type NodeInputs = smallvec::SmallVec<[Str; 2]>;
/// A node's output names: one inline, more on the heap.
pub type NodeOutputs = smallvec::SmallVec<[Str; 1]>;

/// `NodeProto` fields that are seldom set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeRareFields {
    pub overload: Option<Str>,
    pub doc_string: Option<Str>,
    pub metadata_props: Vec<StringPair>,
    pub device_configurations: Vec<NodeDeviceConfiguration>,
}

/// A boxed group of fields that is usually absent; absent equals present with every field
/// unset (so equality does not depend on whether the box was made).
#[derive(Clone, Debug, Default)]
pub struct Rare<T>(Option<Box<T>>);

impl<T: Default> Rare<T> {
    /// The fields, when some were ever set.
    pub fn get(&self) -> Option<&T> {
        self.0.as_deref()
    }

    /// The fields, made (all unset) when absent.
    pub fn get_mut(&mut self) -> &mut T {
        self.0.get_or_insert_with(Box::default)
    }
}

impl<T: Default + PartialEq> PartialEq for Rare<T> {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => a == b,
            (Some(set), None) | (None, Some(set)) => **set == T::default(),
            (None, None) => true,
        }
    }
}

/// A domain as the schema table names it: `ai.onnx` is another spelling of the default
/// domain `""`.
pub fn schema_domain(domain: &str) -> &str {
    if domain == "ai.onnx" { "" } else { domain }
}

/// Every name read inside the subgraphs of node `node` (If branches, Loop and Scan bodies),
/// at any depth: each inner node's inputs and each inner graph's outputs (a body may give an
/// outer value out unchanged). Names a subgraph defines itself are included too; callers
/// that ask whether an outer value is read match them against the outer scope's names.
pub fn names_read_inside(model: &Model, node: NodeId) -> Vec<Str> {
    let mut reads = Vec::new();
    let mut graphs: Vec<GraphId> = model.nodes[node].attributes.iter().flat_map(|a| a.subgraphs()).collect();
    while let Some(g) = graphs.pop() {
        for &n in &model.graphs[g].nodes {
            let inner = &model.nodes[n];
            reads.extend(inner.inputs.iter().filter(|i| !i.is_empty()).cloned());
            graphs.extend(inner.attributes.iter().flat_map(|a| a.subgraphs()));
        }
        reads.extend(model.graphs[g].outputs.iter().filter_map(|v| v.name.clone()));
    }
    reads
}

impl Node {
    /// Whether input `i` is given: present and not an empty name (an omitted optional input).
    pub fn has_input(&self, i: usize) -> bool {
        self.inputs.get(i).is_some_and(|n| !n.is_empty())
    }

    /// Whether optional output `i` is asked for (present with a name that is not empty).
    pub fn has_output(&self, i: usize) -> bool {
        self.outputs.get(i).is_some_and(|n| !n.is_empty())
    }

    /// The operator domain as ONNX resolves it: unset and `""` both mean the default domain.
    pub fn domain_str(&self) -> &[u8] {
        self.domain.as_ref().map_or(&[], Str::as_bytes)
    }

    /// The node's domain as the schema table names it (see [`schema_domain`]); `None` when
    /// the domain is not UTF-8, which no schema has.
    /// The operator as reports name it: `Conv`, or `com.microsoft::Attention` outside the
    /// default domain (`?` when the node has none).
    pub fn op_label(&self) -> String {
        let op = self.op_type.as_ref().map_or_else(|| "?".to_owned(), Str::escaped);
        match self.domain_str() {
            [] | b"ai.onnx" => op,
            domain => format!("{}::{op}", String::from_utf8_lossy(domain)),
        }
    }

    pub fn schema_domain(&self) -> Option<&str> {
        // Nearly every node is of the default domain: no UTF-8 validation call for it.
        match self.domain_str() {
            [] => Some(""),
            bytes => std::str::from_utf8(bytes).ok().map(schema_domain),
        }
    }

    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name.as_ref().is_some_and(|n| n == name))
    }

    pub fn overload(&self) -> Option<&Str> {
        self.rare.get().and_then(|r| r.overload.as_ref())
    }

    pub fn doc_string(&self) -> Option<&Str> {
        self.rare.get().and_then(|r| r.doc_string.as_ref())
    }

    pub fn metadata_props(&self) -> &[StringPair] {
        self.rare.get().map_or(&[], |r| &r.metadata_props)
    }

    pub fn device_configurations(&self) -> &[NodeDeviceConfiguration] {
        self.rare.get().map_or(&[], |r| &r.device_configurations)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeDeviceConfiguration {
    pub configuration_id: Option<Str>,
    pub sharding_spec: Vec<ShardingSpec>,
    pub pipeline_stage: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShardingSpec {
    pub tensor_name: Option<Str>,
    pub device: Vec<i64>,
    pub index_to_device_group_map: Vec<IntIntList>,
    pub sharded_dim: Vec<ShardedDim>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IntIntList {
    pub key: Option<i64>,
    pub value: Vec<i64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShardedDim {
    pub axis: Option<i64>,
    pub simple_sharding: Vec<SimpleShardedDim>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimpleShardedDim {
    pub dim: Option<DimValue>,
    pub num_shards: Option<i64>,
}

/// The attribute type discriminator (`AttributeProto.AttributeType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttributeType {
    Undefined = 0,
    Float = 1,
    Int = 2,
    String = 3,
    Tensor = 4,
    Graph = 5,
    Floats = 6,
    Ints = 7,
    Strings = 8,
    Tensors = 9,
    Graphs = 10,
    SparseTensor = 11,
    SparseTensors = 12,
    TypeProto = 13,
    TypeProtos = 14,
}

impl AttributeType {
    pub fn from_code(code: i32) -> Option<Self> {
        use AttributeType::*;
        Some(match code {
            0 => Undefined,
            1 => Float,
            2 => Int,
            3 => String,
            4 => Tensor,
            5 => Graph,
            6 => Floats,
            7 => Ints,
            8 => Strings,
            9 => Tensors,
            10 => Graphs,
            11 => SparseTensor,
            12 => SparseTensors,
            13 => TypeProto,
            14 => TypeProtos,
            _ => return None,
        })
    }

    /// Lower-case name as the text format and onnx's messages spell it.
    pub fn name(self) -> &'static str {
        use AttributeType::*;
        match self {
            Undefined => "undefined",
            Float => "float",
            Int => "int",
            String => "string",
            Tensor => "tensor",
            Graph => "graph",
            Floats => "floats",
            Ints => "ints",
            Strings => "strings",
            Tensors => "tensors",
            Graphs => "graphs",
            SparseTensor => "sparse_tensor",
            SparseTensors => "sparse_tensors",
            TypeProto => "type_proto",
            TypeProtos => "type_protos",
        }
    }
}

/// An attribute exactly as stored: the discriminator plus every value field, because a
/// model may carry fields that disagree with its `type` and must still round-trip. The
/// checker reports such disagreements; consumers read values through `Attribute::value`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attribute {
    pub name: Option<Str>,
    pub ref_attr_name: Option<Str>,
    pub doc_string: Option<Str>,
    pub ty: Option<i32>,
    pub f: Option<f32>,
    pub i: Option<i64>,
    pub s: Option<Str>,
    pub t: Option<TensorId>,
    pub g: Option<GraphId>,
    pub sparse_tensor: Option<SparseTensor>,
    pub tp: Option<Type>,
    pub floats: Vec<f32>,
    pub ints: Vec<i64>,
    pub strings: Vec<Str>,
    pub tensors: Vec<TensorId>,
    pub graphs: Vec<GraphId>,
    pub sparse_tensors: Vec<SparseTensor>,
    pub type_protos: Vec<Type>,
}

/// The value of an attribute as its `type` declares it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AttributeValue<'a> {
    Float(f32),
    Int(i64),
    String(&'a Str),
    Tensor(TensorId),
    Graph(GraphId),
    SparseTensor(&'a SparseTensor),
    TypeProto(&'a Type),
    Floats(&'a [f32]),
    Ints(&'a [i64]),
    Strings(&'a [Str]),
    Tensors(&'a [TensorId]),
    Graphs(&'a [GraphId]),
    SparseTensors(&'a [SparseTensor]),
    TypeProtos(&'a [Type]),
}

impl Attribute {
    pub fn attribute_type(&self) -> Option<AttributeType> {
        self.ty.and_then(AttributeType::from_code)
    }

    /// The value the declared type selects. Scalars absent from the message read as the
    /// protobuf default, as onnx reads them; `None` when the type is unset or unknown, or a
    /// message-valued field it names is missing.
    pub fn value(&self) -> Option<AttributeValue<'_>> {
        use AttributeValue as V;
        static EMPTY: Str = Str::new();
        Some(match self.attribute_type()? {
            AttributeType::Undefined => return None,
            AttributeType::Float => V::Float(self.f.unwrap_or(0.0)),
            AttributeType::Int => V::Int(self.i.unwrap_or(0)),
            AttributeType::String => V::String(self.s.as_ref().unwrap_or(&EMPTY)),
            AttributeType::Tensor => V::Tensor(self.t?),
            AttributeType::Graph => V::Graph(self.g?),
            AttributeType::SparseTensor => V::SparseTensor(self.sparse_tensor.as_ref()?),
            AttributeType::TypeProto => V::TypeProto(self.tp.as_ref()?),
            AttributeType::Floats => V::Floats(&self.floats),
            AttributeType::Ints => V::Ints(&self.ints),
            AttributeType::Strings => V::Strings(&self.strings),
            AttributeType::Tensors => V::Tensors(&self.tensors),
            AttributeType::Graphs => V::Graphs(&self.graphs),
            AttributeType::SparseTensors => V::SparseTensors(&self.sparse_tensors),
            AttributeType::TypeProtos => V::TypeProtos(&self.type_protos),
        })
    }

    /// Every subgraph this attribute holds, whatever its declared type says.
    pub fn subgraphs(&self) -> impl Iterator<Item = GraphId> + '_ {
        self.g.iter().chain(self.graphs.iter()).copied()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    pub begin: Option<i64>,
    pub end: Option<i64>,
}

/// `TensorProto.DataLocation::EXTERNAL`.
pub const DATA_LOCATION_EXTERNAL: i32 = 1;

/// A tensor exactly as stored, every data field kept (a malformed tensor may fill several;
/// the checker says so, and it still round-trips).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tensor {
    pub dims: Vec<i64>,
    pub data_type: Option<i32>,
    pub segment: Option<Segment>,
    pub float_data: Vec<f32>,
    pub int32_data: Vec<i32>,
    pub string_data: Vec<Str>,
    pub int64_data: Vec<i64>,
    pub name: Option<Str>,
    pub doc_string: Option<Str>,
    /// Little-endian element bytes; shares the buffer the model was decoded from.
    pub raw_data: Option<Bytes>,
    pub external_data: Vec<StringPair>,
    pub data_location: Option<i32>,
    /// Not in onnx.proto: for a reference into a model's own file (an outline's), the
    /// `data_location` the tensor had there, which it gets back when its bytes are read in
    /// again (PyTorch's dynamo exporter sets DEFAULT explicitly).
    pub data_location_once_embedded: Option<i32>,
    /// Not in onnx.proto: the bytes of `float_data` or `double_data` as the file holds them
    /// (one packed field, little-endian values), kept from decoding without a copy, so that
    /// an outline can refer to them as it refers to raw data.
    pub packed_source: PackedSource,
    /// Not in onnx.proto: on a reference made from `packed_source`, the values go back into
    /// their typed field once the bytes are read in (`#@ storage: typed`).
    pub typed_once_embedded: bool,
    pub double_data: Vec<f64>,
    pub uint64_data: Vec<u64>,
    pub metadata_props: Vec<StringPair>,
}

/// Where a tensor's typed values lie in the file it was decoded from. Not part of the
/// tensor's value: two tensors are equal, and print alike, whatever their sources.
#[derive(Clone, Default)]
pub struct PackedSource(pub Option<Bytes>);

impl PartialEq for PackedSource {
    fn eq(&self, _: &PackedSource) -> bool {
        true
    }
}

impl std::fmt::Debug for PackedSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PackedSource")
    }
}

impl Tensor {
    pub fn elem_type(&self) -> Option<DataType> {
        DataType::from_code(self.data_type?)
    }

    /// Product of `dims`, or `None` when a dim is negative or the product overflows.
    pub fn element_count(&self) -> Option<u64> {
        self.dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(u64::try_from(d).ok()?))
    }

    /// Bytes the elements take in raw little-endian form (packed for sub-byte types).
    pub fn expected_raw_size(&self) -> Option<u64> {
        self.elem_type()?.raw_byte_size(self.element_count()?)
    }

    pub fn is_external(&self) -> bool {
        self.data_location == Some(DATA_LOCATION_EXTERNAL)
    }

    /// The value stored under an `external_data` key.
    /// The value of an `external_data` key. Given twice, the last one counts, as in onnx's
    /// loader (which sets each entry in turn); the checker looks at every `location`.
    pub fn external_value(&self, key: &str) -> Option<&Str> {
        self.external_data
            .iter()
            .rev()
            .find(|e| e.key.as_ref().is_some_and(|k| k == key))
            .and_then(|e| e.value.as_ref())
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SparseTensor {
    pub values: Option<TensorId>,
    pub indices: Option<TensorId>,
    pub dims: Vec<i64>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Function {
    pub name: Option<Str>,
    pub inputs: Vec<Str>,
    pub outputs: Vec<Str>,
    /// Names of attributes without defaults.
    pub attributes: Vec<Str>,
    /// Attributes with defaults.
    pub attribute_protos: Vec<Attribute>,
    pub nodes: Vec<NodeId>,
    pub doc_string: Option<Str>,
    pub opset_import: Vec<OpsetImport>,
    pub domain: Option<Str>,
    pub overload: Option<Str>,
    pub value_info: Vec<ValueInfo>,
    pub metadata_props: Vec<StringPair>,
}

impl Model {
    pub fn main_graph(&self) -> Option<&Graph> {
        self.graph.map(|id| &self.graphs[id])
    }

    /// The imported version of an operator domain; `""` and `ai.onnx` are the same domain.
    pub fn opset_version(&self, domain: &str) -> Option<i64> {
        imported_version(&self.opset_import, domain)
    }
}

impl Model {
    /// The model-local function a node calls: same domain, name and overload (onnx's
    /// function identifier `domain:name[:overload]`; unset and empty are alike).
    pub fn local_function(&self, node: &Node) -> Option<FunctionId> {
        fn text(s: &Option<Str>) -> &[u8] {
            s.as_ref().map_or(&[], Str::as_bytes)
        }
        let overload = node.overload().map_or(&[][..], Str::as_bytes);
        self.functions.iter().copied().find(|&f| {
            let f = &self.function_store[f];
            text(&f.name) == text(&node.op_type)
                && text(&f.domain) == text(&node.domain)
                && text(&f.overload) == overload
        })
    }
}

impl Function {
    /// The version of `domain` the function's body imports (see [`Model::opset_version`]).
    pub fn opset_version(&self, domain: &str) -> Option<i64> {
        imported_version(&self.opset_import, domain)
    }
}

/// The version an opset import list gives `domain`; `""` and `ai.onnx` are the same domain,
/// and a later duplicate entry wins, as in onnx.
fn imported_version(imports: &[OpsetImport], domain: &str) -> Option<i64> {
    let is_default = |d: &[u8]| d.is_empty() || d == b"ai.onnx";
    let wanted_default = is_default(domain.as_bytes());
    imports.iter().rev().find_map(|o| {
        let d = o.domain.as_ref().map_or(&[][..], Str::as_bytes);
        let hit = if wanted_default { is_default(d) } else { d == domain.as_bytes() };
        if hit { o.version } else { None }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a node's rare fields were ever boxed must not decide equality: the text
    /// lowering makes the box for an annotation that may set nothing, the decoders only
    /// for fields present.
    #[test]
    fn rare_fields_absent_equal_rare_fields_unset() {
        let plain = Node { op_type: Some("Relu".into()), ..Node::default() };
        let mut boxed = plain.clone();
        boxed.rare.get_mut();
        assert!(plain.rare.get().is_none() && boxed.rare.get().is_some());
        assert_eq!(plain, boxed);
        assert_eq!(boxed, plain);
        let mut documented = plain.clone();
        documented.rare.get_mut().doc_string = Some("why".into());
        assert_ne!(plain, documented);
        assert_ne!(documented, plain);
        assert_ne!(boxed, documented);
        assert_eq!(documented.doc_string(), Some(&Str::from("why")));
        assert_eq!((plain.doc_string(), plain.overload(), plain.metadata_props().len()), (None, None, 0));
    }
}
