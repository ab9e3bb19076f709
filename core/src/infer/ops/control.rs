//! If and Loop: their outputs come from inferring their bodies, which see outer values.

use super::Outputs;
use crate::infer::env::{Env, tensor, tensor_parts};
use crate::infer::infer_subgraph;
use crate::ir::{AttributeValue, DataType, Dimension, GraphId, Model, Node, Shape, Type, TypeValue};

fn graph_attr(node: &Node, name: &str) -> Option<GraphId> {
    match node.attribute(name)?.value()? {
        AttributeValue::Graph(g) => Some(g),
        _ => None,
    }
}

pub fn infer(op: &str, model: &Model, node: &Node, env: &mut Env<'_>) -> Option<Outputs> {
    match op {
        "If" => {
            let then_types = infer_subgraph(model, graph_attr(node, "then_branch")?, env, &[]);
            let else_types = infer_subgraph(model, graph_attr(node, "else_branch")?, env, &[]);
            let types = then_types
                .into_iter()
                .zip(else_types)
                .map(|(a, b)| match (a, b) {
                    (Some(a), Some(b)) => union(&a, &b),
                    _ => None,
                })
                .collect();
            Some(Outputs { types, values: Vec::new() })
        }
        "Loop" => {
            let body = graph_attr(node, "body")?;
            let scalar = |elem: DataType| Some(tensor(elem.code(), Some(Vec::new())));
            let mut inputs = vec![scalar(DataType::Int64), scalar(DataType::Bool)];
            let carried = node.inputs.len().saturating_sub(2);
            inputs.extend(node.inputs.iter().skip(2).map(|n| env.ty(n).cloned()));
            let body_outputs = infer_subgraph(model, body, env, &inputs);
            let mut types: Vec<Option<Type>> = body_outputs.iter().skip(1).take(carried).cloned().collect();
            for scan in body_outputs.iter().skip(1 + carried) {
                types.push(scan.as_ref().and_then(|t| {
                    let (elem, dims) = tensor_parts(t)?;
                    let dims = dims.map(|d| std::iter::once(Dimension::default()).chain(d.iter().cloned()).collect());
                    Some(tensor(elem?, dims))
                }));
            }
            Some(Outputs { types, values: Vec::new() })
        }
        _ => None,
    }
}

/// The type both branches agree on: dims that differ become unknown, ranks that differ an
/// unknown rank; different element types give nothing.
fn union(a: &Type, b: &Type) -> Option<Type> {
    match (&a.value, &b.value) {
        (Some(TypeValue::Tensor(x)), Some(TypeValue::Tensor(y))) => {
            if x.elem_type != y.elem_type {
                return None;
            }
            let shape = match (&x.shape, &y.shape) {
                (Some(p), Some(q)) if p.dims.len() == q.dims.len() => Some(Shape {
                    dims: p
                        .dims
                        .iter()
                        .zip(&q.dims)
                        .map(|(d, e)| if d.value == e.value { d.clone() } else { Dimension::default() })
                        .collect(),
                }),
                _ => None,
            };
            Some(tensor(x.elem_type?, shape.map(|s| s.dims)))
        }
        _ if a == b => Some(a.clone()),
        _ => None,
    }
}
