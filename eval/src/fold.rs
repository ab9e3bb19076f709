//! Constant folding for `onnx simplify` (`onnx_core::simplify::Fold`): every main-graph node
//! whose inputs are all constants (initializers no graph input can replace, `Constant`
//! nodes, nodes folded before it) run once by its kernel, in graph order.
//!
//! Unlike the plan's folding (`Plan::fold_constants`, which keeps results in memory for the
//! runs of one process), these results are written into a model: a node whose results are
//! bigger than its constant inputs plus [`GROWTH_SLACK`] is left as it is unless growth is
//! allowed (an 8-bit weight's DequantizeLinear would make the file four times its bytes),
//! and a model with nodes that have no kernel is still folded around them.

use std::collections::HashMap;

use onnx_core::ir::{Model, Str};
use onnx_core::simplify::{Fold, Folded};

use crate::kernels::Ctx;
use crate::value::{Tensor, Value};

/// Results may exceed their constant inputs by this many bytes (a Range, a small
/// ConstantOfShape, a shape turned into a mask).
const GROWTH_SLACK: usize = 256;

/// Folding with this crate's kernels.
#[derive(Debug, Default, Clone, Copy)]
pub struct Kernels;

impl Fold for Kernels {
    fn fold(&self, model: &Model, allow_growth: bool) -> Folded {
        let Some(g) = model.graph else { return Vec::new() };
        let graph = &model.graphs[g];
        let opset = model.opset_version("").unwrap_or(1);
        // An initializer that is also a graph input is only a default (IR 4 on): not constant.
        let inputs: std::collections::HashSet<&Str> = if crate::plan::initializers_are_inputs(model) {
            graph.inputs.iter().filter_map(|v| v.name.as_ref()).collect()
        } else {
            Default::default()
        };
        let mut initializers: HashMap<&Str, onnx_core::ir::TensorId> = graph
            .initializers
            .iter()
            .filter_map(|&t| Some((model.tensors[t].name.as_ref()?, t)))
            .filter(|(name, _)| !inputs.contains(name))
            .collect();
        let limits = crate::Limits::default();
        let mut known: HashMap<Str, Value> = HashMap::new();
        // How many times each value is read: by a node input, a subgraph, a graph output.
        let mut readers: HashMap<&Str, usize> = HashMap::new();
        for &n in &graph.nodes {
            for name in model.nodes[n].inputs.iter().filter(|i| !i.is_empty()) {
                *readers.entry(name).or_insert(0) += 1;
            }
        }
        for name in graph.outputs.iter().filter_map(|v| v.name.as_ref()) {
            *readers.entry(name).or_insert(0) += 1;
        }
        let inner = onnx_core::simplify::subgraph_reads(model, g);
        for name in &inner {
            *readers.entry(name).or_insert(0) += 1;
        }
        let mut folded = Vec::new();
        for &n in &graph.nodes {
            let node = &model.nodes[n];
            let domain = node.schema_domain().unwrap_or("");
            let op = node.op_type.as_ref().and_then(Str::as_str).unwrap_or("");
            let opset = if domain.is_empty() { opset } else { model.opset_version(domain).unwrap_or(1) };
            // A Constant becomes an initializer too, as onnxsim makes it: one node fewer.
            if (domain.is_empty() && op == "Constant") && node.outputs.len() == 1 {
                // A tensor `value` is taken as it is, its bytes not read: it may be a view
                // of a side file, which the written model then refers to again; nodes
                // folded after it read it as an initializer, on first use.
                let value_tensor = match node.attributes.as_slice() {
                    [a] if a.name.as_ref().is_some_and(|name| *name == "value") && a.ref_attr_name.is_none() => a.t,
                    _ => None,
                };
                if let Some(t) = value_tensor {
                    let mut tensor = model.tensors[t].clone();
                    // Typed values as raw bytes, as every folded value is written.
                    let _ = onnx_core::ir::tensor_data::typed_to_raw(&mut tensor);
                    folded.push((n, vec![tensor]));
                    initializers.insert(&node.outputs[0], t);
                } else if let Ok(v) = crate::invoke::constant_value(model, node)
                    && let Some(t) = raw_tensor(&v)
                {
                    folded.push((n, vec![t]));
                    known.insert(node.outputs[0].clone(), v);
                }
                continue;
            }
            let holds_graphs = node.attributes.iter().any(|a| a.subgraphs().next().is_some());
            if node.inputs.iter().all(|i| i.is_empty())
                || holds_graphs
                || crate::registry::is_random(domain, op)
                || node.attributes.iter().any(|a| a.ref_attr_name.is_some())
            {
                continue;
            }
            let Some(kernels) = crate::registry::dispatch(domain, op, opset) else { continue };
            // Every input constant before any is read: a weight (maybe gigabytes in a side
            // file) is not converted for a node that reads a graph input too.
            let constant = |name: &Str| name.is_empty() || known.contains_key(name) || initializers.contains_key(name);
            if !node.inputs.iter().all(constant) {
                continue;
            }
            // Every given input constant, read from its initializer on first use.
            let mut given: Vec<Option<Value>> = Vec::with_capacity(node.inputs.len());
            let mut all_constant = true;
            for name in &node.inputs {
                if name.is_empty() {
                    given.push(None);
                } else if let Some(v) = known.get(name) {
                    given.push(Some(v.clone()));
                } else if let Some(v) =
                    initializers.get(name).and_then(|&t| Tensor::from_ir(&model.tensors[t]).ok()).map(Value::Tensor)
                {
                    known.insert(name.clone(), v.clone());
                    given.push(Some(v));
                } else {
                    all_constant = false;
                    break;
                }
            }
            if !all_constant {
                continue;
            }
            // What folding frees: the constant inputs nothing else reads. A Reshape of a weight
            // another node still reads (an embedding tied to the output layer) would write
            // the weight twice.
            let taken: usize = given
                .iter()
                .zip(&node.inputs)
                .filter(|(_, name)| readers.get(*name).copied().unwrap_or(0) <= 1)
                .filter_map(|(v, _)| v.as_ref())
                .map(Value::byte_size)
                .sum();
            let allowed = if allow_growth { limits.max_memory } else { taken + GROWTH_SLACK };
            let budget = crate::memory::Budget::starting_now(allowed.min(limits.max_memory));
            let ctx = Ctx { model, node, opset, limits: &limits, budget: &budget, prepared: None };
            let refs: Vec<Option<&Value>> = given.iter().map(Option::as_ref).collect();
            let Ok(values) = crate::invoke::call(kernels, &ctx, &refs) else { continue };
            let made: usize = values.iter().map(Value::byte_size).sum();
            if !allow_growth && made > taken + GROWTH_SLACK {
                continue;
            }
            // Only tensors become initializers (a sequence or an optional cannot).
            let Some(tensors) = values.iter().map(raw_tensor).collect::<Option<Vec<_>>>() else {
                continue;
            };
            for (name, v) in node.outputs.iter().zip(values) {
                if !name.is_empty() {
                    known.insert(name.clone(), v);
                }
            }
            folded.push((n, tensors));
        }
        folded
    }
}

/// A value as an initializer, its elements as raw bytes as exporters write them (typed
/// fields hold 8- and 16-bit values as varints of int32: up to four times the bytes); `None`
/// for what is not a tensor (a sequence, an optional).
fn raw_tensor(value: &Value) -> Option<onnx_core::ir::Tensor> {
    let mut t = value.tensor().ok()?.to_ir(None);
    // Strings and sub-byte types have no element-by-element raw form: they stay typed.
    let _ = onnx_core::ir::tensor_data::typed_to_raw(&mut t);
    Some(t)
}
