//! Inferring one node: look its operator up in the table ([`super::registry`]), run its
//! handler (a rule, or control flow), fall back to the schema's function body and then to
//! the schema's type constraints, or expand the model-local function it calls; record
//! what was found in the environment.

use super::call;
use super::control;
use super::env::Env;
use super::ops::Ctx;
use super::registry::{Handler, table};
use super::types::{Outputs, tensor, tensor_parts};
use crate::ir::{AttributeValue, Model, Node, NodeId, Str, Type};
use crate::resolve::Places;
use crate::schema::{FormalOption, OpSchema};

/// Infers graph node `id`; returns its operator's schema when it is of the default domain
/// (the type-constraint check that follows needs it too).
pub(super) fn infer_node<'m>(model: &'m Model, id: NodeId, env: &mut Env<'m>) -> Option<&'static OpSchema> {
    infer_node_in(model, id, &model.nodes[id], env)
}

/// Infers one node of `model` (a node of a graph, or of a function body with its attribute
/// references bound) and records its outputs in `env`. An operator's handler comes first,
/// then its schema's function body, then its schema's type constraints; a node that no
/// schema describes may call a model-local function. `node` is node `id` of `model`, or a
/// copy of it bound to a call; the value numbers of `env` are `model`'s.
pub(super) fn infer_node_in<'m>(
    model: &'m Model,
    id: NodeId,
    node: &Node,
    env: &mut Env<'m>,
) -> Option<&'static OpSchema> {
    let domain = node.schema_domain();
    let op = node.op_type.as_ref().and_then(Str::as_str).unwrap_or("");
    let numbers = env.numbers;
    let inputs = numbers.node_inputs(id, node);
    let default_domain = domain == Some("");
    // One hash per node: the table gives both the handler and the schema's versions.
    // onnx knows no onnxruntime contrib operator: inferring as onnx does passes them by.
    let operator = domain
        .and_then(|d| table().get(d, op))
        .filter(|o| !(env.as_onnx() && !env.as_onnxruntime && o.from_onnxruntime()));
    let opset = match domain {
        Some("") => env.opset,
        Some(d) => env.domain_opset(d).unwrap_or(1),
        None => 0,
    };
    let schema = operator.and_then(|o| o.schema(opset));
    let mut outputs = None;
    if let Some(operator) = operator {
        let handler = operator.handler(opset);
        if let Some(Handler::Control) = handler {
            outputs = control::infer(op, model, node, inputs, env);
        }
        if outputs.is_none() {
            let ctx = Ctx::new(model, node, inputs, env, opset);
            if let Some(Handler::Rule(rule)) = handler {
                outputs = rule(&ctx);
            }
            if outputs.is_none()
                && let Some(schema) = schema
            {
                // A node none of whose inputs is known, after a name that is not defined
                // yet (what typing one leaves), gives what the last such node of its
                // operator gave: expanding a function body per node tripled inference.
                let untyped = env.untyped_key(schema, opset, node, inputs);
                outputs = match untyped.and_then(|key| env.untyped_outputs(&key)) {
                    Some(found) => found,
                    None => {
                        let found =
                            call::schema_body(schema, opset, node, inputs, env).or_else(|| from_schema(schema, &ctx));
                        if let Some(key) = untyped {
                            env.remember_untyped(key, &found);
                        }
                        found
                    }
                };
            }
        }
    }
    // A node whose outputs cannot be inferred still gives its schema: its attributes and
    // inputs are judged all the same (a Cast to no type, a Constant without a value).
    let mut outputs = match outputs {
        Some(outputs) => outputs,
        None => match model.local_function(node).and_then(|f| call::infer_call(f, node, inputs, env)) {
            Some(outputs) => outputs,
            None => {
                // onnx's inference keeps the declared types of outputs it cannot infer.
                if env.as_onnx() {
                    for value in numbers.node_outputs(id, node).iter() {
                        if let Some(ty) = env.merged_with_declared(value, None) {
                            env.set_type(value, ty);
                        }
                    }
                }
                return schema.filter(|_| default_domain);
            }
        },
    };
    if env.as_onnx()
        && let Some(schema) = schema
    {
        super::shapeless::drop_shapes_onnx_leaves_out(schema, inputs, env, &mut outputs);
    }
    if !env.as_onnx() && env.function.is_none() && !env.declared_outputs.is_empty() {
        keep_declared_outputs(node, &mut outputs, env);
    }
    let defined = numbers.node_outputs(id, node);
    record(defined, outputs, env);
    if default_domain
        && op == "Constant"
        && let (Some(output), Some(AttributeValue::Tensor(t))) =
            (defined.first(), node.attribute("value").and_then(|a| a.value()))
    {
        env.set_constant(output, t);
    }
    schema.filter(|_| default_domain)
}

/// Refines the types found for the node's outputs that are main-graph outputs with what
/// their declarations say (a BERT pooler reads `last_hidden_state`, declared
/// `[batch, sequence, 32]`): what onnx's inference does, so the nodes downstream see it. A
/// declaration that contradicts inference is left to the conflict check.
fn keep_declared_outputs(node: &Node, outputs: &mut Outputs, env: &Env<'_>) {
    for (i, name) in node.outputs.iter().enumerate() {
        let Some(&declared) = env.declared_outputs.get(name.as_bytes()) else { continue };
        if i >= outputs.types.len() {
            outputs.types.resize(i + 1, None);
        }
        let found = &mut outputs.types[i];
        *found = match found.take() {
            None => Some(declared.clone()),
            Some(ty) if super::lattice::contradiction(declared, &ty).is_some() => Some(ty),
            Some(ty) => Some(super::lattice::refine(declared, &ty)),
        };
    }
}

/// Moves what a rule found into `env`, under the numbers of the node's outputs.
fn record(defined: Places<'_>, outputs: Outputs, env: &mut Env<'_>) {
    // A type whose element type is unknown says nothing useful: leave the value untyped.
    let typed = |t: &Type| !matches!(tensor_parts(t), Some((None | Some(0), _)));
    for (value, ty) in defined.iter().zip(outputs.types) {
        let ty = if env.as_onnx() { env.merged_with_declared(value, ty) } else { ty };
        // Checked in place, then moved in whole (not unwrapped and wrapped again).
        if ty.as_ref().is_some_and(typed) {
            env.set_found_type(value, ty);
        }
    }
    for (value, known) in defined.iter().zip(outputs.values) {
        if let Some(known) = known {
            env.set_value(value, known);
        }
    }
}

/// The element type a literal like `tensor(int64)` names.
fn literal_elem(type_str: &str) -> Option<i32> {
    let name = type_str.strip_prefix("tensor(")?.strip_suffix(')')?;
    crate::ir::DataType::from_name(name).map(|d| d.code())
}

/// No rule: element types from the schema's constraints (a literal output type, a type
/// parameter some input binds, or a parameter allowed one type only), shapes unknown.
fn from_schema(schema: &OpSchema, ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let mut types = Vec::new();
    for i in 0..ctx.node.outputs.len() {
        let formal = schema.outputs.get(i).or_else(|| schema.outputs.last())?;
        // A heterogeneous variadic formal (Scan's and Loop's `V`) binds its type parameter
        // value by value, so nothing follows from the other side's types; and a formal after
        // a variadic one has no fixed node input position.
        let heterogeneous = |f: &crate::schema::Formal| f.option == FormalOption::Variadic && !f.homogeneous;
        let elem = literal_elem(&formal.type_str).or_else(|| {
            if heterogeneous(formal) {
                return None;
            }
            let bound = schema
                .inputs
                .iter()
                .position(|f| f.type_str == formal.type_str)
                .filter(|&j| {
                    !heterogeneous(&schema.inputs[j])
                        && schema.inputs[..j].iter().all(|f| f.option != FormalOption::Variadic)
                })
                .and_then(|j| ctx.elem(j));
            bound.or_else(|| match schema.allowed_types(formal).as_slice() {
                [only] => literal_elem(only),
                _ => None,
            })
        });
        types.push(elem.map(|e| tensor(e, None)));
    }
    Some(Outputs { types: types.into(), values: Vec::new() })
}
