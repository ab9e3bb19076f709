//! Inference through function bodies (semantics spec §2.6): a node that calls a model-local
//! function gets the types its body computes from the caller's arguments, with the body's
//! attribute references (`@alpha`) bound to the caller's attributes or the function's
//! defaults, as onnx's shape inference does. Known values (data propagation) cross the call
//! both ways, so a shape computed inside a function still fixes a `Reshape` outside it.
//!
//! The same mechanism infers an operator from its schema's function body when no rule
//! knows the operator ([`schema_body`]); the bodies are parsed from the schema export once.
//!
//! Each call is inferred afresh, since a function is generic in its argument types, in an
//! environment that sees only the body: function bodies have no outer scope. A function
//! that is already being expanded (recursion, direct or not) is not expanded again, and its
//! callers get no types rather than an endless descent.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use super::env::Env;
use super::ops::{Outputs, infer_node_in};
use crate::ir::{Attribute, AttributeType, Function, Model, Node, Str};
use crate::schema::OpSchema;

/// Infers the call of `function` (defined in `callee_model`) by `caller`, whose inputs are
/// typed in `env` (over `caller_model`). `None` when the call cannot be expanded.
pub(super) fn infer_call<'m>(
    callee_model: &'m Model,
    function: &'m Function,
    caller: &Node,
    caller_model: &Model,
    env: &Env<'_>,
) -> Option<Outputs> {
    infer_call_with_defaults(callee_model, function, &[], caller, caller_model, env)
}

/// [`infer_call`], where an attribute reference neither the caller nor the function gives
/// falls back to `defaults` (an operator schema's defaults, for schema bodies).
fn infer_call_with_defaults<'m>(
    callee_model: &'m Model,
    function: &'m Function,
    defaults: &[Attribute],
    caller: &Node,
    caller_model: &Model,
    env: &Env<'_>,
) -> Option<Outputs> {
    let mut body = env.for_call(callee_model, function)?;
    // Tensor and graph ids index the arenas of one model: a body parsed from the schema
    // export cannot take the caller's constants or tensor attributes.
    let same_model = std::ptr::eq(callee_model, caller_model);
    for (formal, actual) in function.inputs.iter().zip(&caller.inputs) {
        if actual.is_empty() {
            continue;
        }
        if let Some(ty) = env.ty(actual) {
            body.set_type(formal.clone(), ty.clone());
        }
        if let Some(known) = env.value(actual) {
            body.set_value(formal.clone(), known.clone());
        }
        if same_model && let Some(constant) = env.constant(actual) {
            body.set_constant(formal.clone(), constant);
        }
    }
    // Parameters the caller leaves out are absent inputs inside the body too (onnx's
    // unbound values): a node there sees an empty input, not an untyped value.
    let omitted: Vec<&Str> = function
        .inputs
        .iter()
        .enumerate()
        .filter(|&(i, _)| caller.inputs.get(i).is_none_or(Str::is_empty))
        .map(|(_, formal)| formal)
        .collect();
    for &n in &function.nodes {
        let node = &callee_model.nodes[n];
        match bind(node, caller, function, defaults, same_model, &omitted) {
            Some(bound) => infer_node_in(callee_model, &bound, &mut body),
            None => infer_node_in(callee_model, node, &mut body),
        }
    }
    let types = function.outputs.iter().map(|o| body.ty(o).cloned()).collect();
    let values = function.outputs.iter().map(|o| body.value(o).cloned()).collect();
    Some(Outputs { types, values })
}

/// A copy of a body node bound to one call: its inputs that name an `omitted` parameter
/// become empty, and its attribute references are replaced by what they refer to: the
/// caller's attribute of that name, else the function's default, else one of `defaults`;
/// a reference to none of them is dropped (the attribute is absent). `None` when the node
/// has neither, and is used as it is.
fn bind(
    node: &Node,
    caller: &Node,
    function: &Function,
    defaults: &[Attribute],
    same_model: bool,
    omitted: &[&Str],
) -> Option<Node> {
    let uses_omitted = node.inputs.iter().any(|i| omitted.contains(&i));
    if !uses_omitted && node.attributes.iter().all(|a| a.ref_attr_name.is_none()) {
        return None;
    }
    let mut bound = node.clone();
    for input in &mut bound.inputs {
        if omitted.contains(&&*input) {
            *input = Str::new();
        }
    }
    bound.attributes = node
        .attributes
        .iter()
        .filter_map(|a| {
            let Some(reference) = &a.ref_attr_name else { return Some(a.clone()) };
            let named = |x: &&Attribute| x.name.as_ref() == Some(reference);
            let source = caller
                .attributes
                .iter()
                .find(named)
                .or_else(|| function.attribute_protos.iter().find(named))
                .or_else(|| defaults.iter().find(named))?;
            if !same_model && refers_to_arena(source) {
                return None;
            }
            Some(Attribute { name: a.name.clone(), ref_attr_name: None, ..source.clone() })
        })
        .collect();
    Some(bound)
}

/// Whether an attribute's value lives in a model's arenas (tensors, graphs).
fn refers_to_arena(a: &Attribute) -> bool {
    matches!(
        a.attribute_type(),
        Some(
            AttributeType::Tensor
                | AttributeType::Tensors
                | AttributeType::Graph
                | AttributeType::Graphs
                | AttributeType::SparseTensor
                | AttributeType::SparseTensors
        )
    )
}

/// A schema's function body, parsed and lowered into a model of its own; `None` when it
/// does not parse (the schema tests say all do).
type ParsedBody = Option<&'static Model>;

/// Which body: domain, operator and body version.
type BodyKey = (String, String, i64);

/// Bodies parsed so far. A body is parsed on first use and kept for the life of the
/// process (there are 43 of them), so inference can borrow it like any model.
fn parsed_bodies() -> &'static Mutex<HashMap<BodyKey, ParsedBody>> {
    static BODIES: OnceLock<Mutex<HashMap<BodyKey, ParsedBody>>> = OnceLock::new();
    BODIES.get_or_init(Mutex::default)
}

fn parse_body(text: &str) -> ParsedBody {
    let parsed = onnx_syntax::parse_function(text);
    if !parsed.errors.is_empty() {
        return None;
    }
    let lowered = crate::lower::from_ast::function(&parsed.tree?, text);
    if !lowered.diagnostics.is_empty() {
        return None;
    }
    Some(Box::leak(Box::new(lowered.model)))
}

/// Infers `node` (an operator without a rule of its own, whose schema at the imported
/// version `opset` is `schema`) through the schema's function body, when it has one: the
/// body of the largest version not above `opset`.
pub(super) fn schema_body(schema: &OpSchema, opset: i64, node: &Node, model: &Model, env: &Env<'_>) -> Option<Outputs> {
    let (version, text) = schema.function_bodies.iter().rev().find(|(v, _)| *v <= opset)?;
    let key = (schema.domain.clone(), schema.op.clone(), *version);
    let body = {
        let mut cache = parsed_bodies().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *cache.entry(key).or_insert_with(|| parse_body(text))
    }?;
    let function = &body.function_store[*body.functions.first()?];
    infer_call_with_defaults(body, function, &schema_defaults(schema), node, model, env)
}

/// The attributes a schema gives defaults for, as attributes (numbers, strings and lists of
/// them: the kinds of default the schemas have).
fn schema_defaults(schema: &OpSchema) -> Vec<Attribute> {
    let floats = |v: &serde_json::Value| -> Option<Vec<f32>> {
        v.as_array()?.iter().map(|x| x.as_f64().map(|f| f as f32)).collect()
    };
    schema
        .attributes
        .iter()
        .filter_map(|a| {
            let v = a.default.as_ref()?;
            let mut out =
                Attribute { name: Some(Str::from(a.name.as_str())), ty: Some(a.ty as i32), ..Attribute::default() };
            match a.ty {
                AttributeType::Float => out.f = Some(v.as_f64()? as f32),
                AttributeType::Int => out.i = Some(v.as_i64()?),
                AttributeType::String => out.s = Some(Str::from(v.as_str()?)),
                AttributeType::Floats => out.floats = floats(v)?,
                AttributeType::Ints => {
                    out.ints = v.as_array()?.iter().map(serde_json::Value::as_i64).collect::<Option<_>>()?
                }
                AttributeType::Strings => {
                    out.strings = v.as_array()?.iter().map(|x| x.as_str().map(Str::from)).collect::<Option<_>>()?
                }
                _ => return None,
            }
            Some(out)
        })
        .collect()
}
