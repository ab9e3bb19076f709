//! Facts about a model at a glance: what `onnx info` prints and the browser's header shows.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::ir::{Model, Str, ValueInfo};

#[derive(Debug, Serialize)]
pub struct Summary {
    pub ir_version: Option<i64>,
    pub opset_import: Vec<Opset>,
    pub producer_name: Option<Str>,
    pub producer_version: Option<Str>,
    pub domain: Option<Str>,
    pub model_version: Option<i64>,
    pub graph_name: Option<Str>,
    pub inputs: Vec<Value>,
    pub outputs: Vec<Value>,
    pub counts: Counts,
    /// Bytes of initializer data (type size × element count), embedded and external.
    pub initializer_bytes: u64,
    pub external_tensor_bytes: u64,
    /// `domain::op_type` (default domain without prefix) → count, over every node of every
    /// graph and function, most frequent first.
    pub op_types: Vec<OpCount>,
    pub metadata: Vec<(Option<Str>, Option<Str>)>,
    pub doc_string: Option<Str>,
    /// Weights held in initializers (of every graph), by element type.
    pub initializer_parameters: Vec<Parameters>,
    /// Weights held in `Constant` nodes' values (some exporters keep every weight there), by
    /// element type.
    pub constant_parameters: Vec<Parameters>,
}

/// Tensor elements of one element type, and their bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Parameters {
    pub elem_type: String,
    pub elements: u64,
    pub bytes: u64,
}

/// Adds a tensor's elements to the tally of its element type.
fn tally(into: &mut BTreeMap<String, (u64, u64)>, tensor: &crate::ir::Tensor) {
    let Some(elements) = tensor.element_count() else { return };
    let name = tensor.elem_type().map_or_else(|| "undefined".to_owned(), |t| t.name().to_owned());
    let entry = into.entry(name).or_default();
    entry.0 = entry.0.saturating_add(elements);
    entry.1 = entry.1.saturating_add(tensor.expected_raw_size().unwrap_or(0));
}

/// The tally, most bytes first.
fn by_bytes(tally: BTreeMap<String, (u64, u64)>) -> Vec<Parameters> {
    let mut list: Vec<Parameters> =
        tally.into_iter().map(|(elem_type, (elements, bytes))| Parameters { elem_type, elements, bytes }).collect();
    list.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.elem_type.cmp(&b.elem_type)));
    list
}

#[derive(Debug, Serialize)]
pub struct Opset {
    pub domain: String,
    pub version: Option<i64>,
}

#[derive(Debug, Serialize)]
pub struct Value {
    pub name: Option<Str>,
    /// The declared type, `None` when absent; its `Display` is the text-format spelling
    /// (`float[N,3,224,224]`), as JSON an object (see `Type`'s serialisation).
    #[serde(rename = "type")]
    pub ty: Option<crate::ir::Type>,
}

#[derive(Debug, Default, Serialize)]
pub struct Counts {
    pub main_graph_nodes: usize,
    pub nodes: usize,
    pub initializers: usize,
    pub sparse_initializers: usize,
    pub external_tensors: usize,
    pub functions: usize,
    pub subgraphs: usize,
    pub training_infos: usize,
}

#[derive(Debug, Serialize)]
pub struct OpCount {
    pub op_type: String,
    pub count: usize,
}

fn value(v: &ValueInfo) -> Value {
    Value { name: v.name.clone(), ty: v.ty.clone() }
}

impl Summary {
    pub fn of(model: &Model) -> Summary {
        let main = model.main_graph();
        let mut counts = Counts {
            main_graph_nodes: main.map_or(0, |g| g.nodes.len()),
            nodes: model.nodes.len(),
            functions: model.functions.len(),
            training_infos: model.training_info.len(),
            ..Counts::default()
        };
        let mut initializer_bytes = 0u64;
        let mut initializer_tally = BTreeMap::new();
        for (_, g) in model.graphs.iter() {
            counts.initializers += g.initializers.len();
            counts.sparse_initializers += g.sparse_initializers.len();
            for &t in &g.initializers {
                initializer_bytes = initializer_bytes.saturating_add(model.tensors[t].expected_raw_size().unwrap_or(0));
                tally(&mut initializer_tally, &model.tensors[t]);
            }
        }
        let mut constant_tally = BTreeMap::new();
        for (_, node) in model.nodes.iter() {
            let is_constant = node.op_type.as_ref().is_some_and(|o| o == "Constant")
                && node.domain.as_ref().is_none_or(|d| d.is_empty() || d == "ai.onnx");
            if let Some(t) = node.attribute("value").and_then(|a| a.t).filter(|_| is_constant) {
                tally(&mut constant_tally, &model.tensors[t]);
            }
        }
        let mut external_tensor_bytes = 0u64;
        for (_, t) in model.tensors.iter().filter(|(_, t)| t.is_external()) {
            counts.external_tensors += 1;
            external_tensor_bytes = external_tensor_bytes.saturating_add(t.expected_raw_size().unwrap_or(0));
        }
        let mut histogram: BTreeMap<String, usize> = BTreeMap::new();
        for (_, node) in model.nodes.iter() {
            let op = node.op_type.as_ref().map_or_else(String::new, Str::escaped);
            let key = match node.domain.as_ref().filter(|d| !d.is_empty()) {
                Some(d) => format!("{}::{op}", d.escaped()),
                None => op,
            };
            *histogram.entry(key).or_default() += 1;
            for a in &node.attributes {
                counts.subgraphs += a.subgraphs().count();
            }
        }
        let mut op_types: Vec<OpCount> =
            histogram.into_iter().map(|(op_type, count)| OpCount { op_type, count }).collect();
        op_types.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.op_type.cmp(&b.op_type)));
        Summary {
            ir_version: model.ir_version,
            opset_import: model
                .opset_import
                .iter()
                .map(|o| Opset { domain: o.domain.as_ref().map_or_else(String::new, Str::escaped), version: o.version })
                .collect(),
            producer_name: model.producer_name.clone(),
            producer_version: model.producer_version.clone(),
            domain: model.domain.clone(),
            model_version: model.model_version,
            graph_name: main.and_then(|g| g.name.clone()),
            inputs: main.map_or_else(Vec::new, |g| g.inputs.iter().map(value).collect()),
            outputs: main.map_or_else(Vec::new, |g| g.outputs.iter().map(value).collect()),
            counts,
            initializer_bytes,
            external_tensor_bytes,
            op_types,
            metadata: model.metadata_props.iter().map(|p| (p.key.clone(), p.value.clone())).collect(),
            doc_string: model.doc_string.clone(),
            initializer_parameters: by_bytes(initializer_tally),
            constant_parameters: by_bytes(constant_tally),
        }
    }
}

/// Bytes in the largest binary unit that keeps the number above one.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{n} B") } else { format!("{value:.1} {}", UNITS[unit]) }
}
