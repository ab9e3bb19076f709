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
use super::node::infer_node_in;
use super::types::Outputs;
use crate::ir::{Attribute, AttributeType, Function, FunctionId, Model, Node, Str};
use crate::resolve::{Places, ValueNumbers};
use crate::schema::OpSchema;

/// Infers the call of model-local function `function` by `caller`, whose inputs (numbered
/// `inputs`) are typed in `env`. `None` when the call cannot be expanded.
pub(super) fn infer_call<'m>(
    function: FunctionId,
    caller: &Node,
    inputs: Places<'_>,
    env: &Env<'m>,
) -> Option<Outputs> {
    // Functions are numbered after the graphs: resolution may still be at it.
    env.numbers.wait_for_all();
    let callee = Callee { model: env.model, numbers: env.numbers, id: function, defaults: &[] };
    infer_call_of(&callee, caller, inputs, env)
}

/// A function to expand: function `id` of `model`, numbered by `numbers`, where an
/// attribute reference neither the caller nor the function gives falls back to `defaults`
/// (an operator schema's defaults, for schema bodies).
struct Callee<'m, 'd> {
    model: &'m Model,
    numbers: &'m ValueNumbers,
    id: FunctionId,
    defaults: &'d [Attribute],
}

fn infer_call_of<'m>(callee: &Callee<'m, '_>, caller: &Node, inputs: Places<'_>, env: &Env<'_>) -> Option<Outputs> {
    let function = &callee.model.function_store[callee.id];
    let mut body = env.for_call(callee.model, callee.numbers, callee.id, function)?;
    // Tensor and graph ids index the arenas of one model: a body parsed from the schema
    // export cannot take the caller's constants or tensor attributes.
    let same_model = std::ptr::eq(callee.model, env.model);
    let formals = callee.numbers.function_inputs(callee.id, function);
    for (formal, actual) in formals.iter().zip(inputs) {
        if let Some(ty) = env.ty(actual) {
            body.set_type(formal, ty.clone());
        }
        if let Some(known) = env.value(actual) {
            body.set_value(formal, known.clone());
        }
        if same_model && let Some(constant) = env.constant(actual) {
            body.set_constant(formal, constant);
        }
    }
    // Parameters the caller leaves out are absent inputs inside the body too (onnx's
    // unbound values): a node there sees an empty input, not an untyped value.
    let omitted = omitted_parameters(caller, function);
    for &n in &function.nodes {
        let node = &callee.model.nodes[n];
        match bind(node, caller, function, callee.defaults, same_model, &omitted) {
            Some(bound) => infer_node_in(callee.model, n, &bound, &mut body),
            None => infer_node_in(callee.model, n, node, &mut body),
        };
    }
    let results = callee.numbers.function_outputs(callee.id, function);
    let types = results.iter().map(|o| body.ty(o).cloned()).collect();
    let values = results.iter().map(|o| body.value(o).cloned()).collect();
    Some(Outputs { types, values })
}

/// Body node `node` of model-local function `function` as one call by `caller` runs it
/// (see [`bind`]): `None` when it runs as written. What the evaluator runs a call with, so
/// that inference and evaluation bind attribute references one way.
pub fn bound_for_call(node: &Node, caller: &Node, function: &Function) -> Option<Node> {
    let omitted = omitted_parameters(caller, function);
    bind(node, caller, function, &[], true, &omitted)
}

/// The function's parameters the caller leaves out (absent inputs inside the body too).
fn omitted_parameters<'f>(caller: &Node, function: &'f Function) -> Vec<&'f Str> {
    function
        .inputs
        .iter()
        .enumerate()
        .filter(|&(i, _)| caller.inputs.get(i).is_none_or(Str::is_empty))
        .map(|(_, formal)| formal)
        .collect()
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

/// Body node `node` of `function` (parsed apart from the caller's model) bound to the call
/// `caller` makes of it, with `defaults` for references neither gives (see [`bind`]).
pub(super) fn bind_to_caller(node: &Node, caller: &Node, function: &Function, defaults: &[Attribute]) -> Option<Node> {
    let omitted = omitted_parameters(caller, function);
    bind(node, caller, function, defaults, false, &omitted)
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

/// A schema's function body, parsed and lowered into a model of its own, with its value
/// numbers; `None` when it does not parse (the schema tests say all do).
type ParsedBody = Option<&'static (Model, ValueNumbers)>;

/// Which body: domain, operator and body version.
type BodyKey = (String, String, i64);

/// Bodies parsed so far. A body is parsed on first use and kept for the life of the
/// process (there are 43 of them), so inference can borrow it like any model.
fn parsed_bodies() -> &'static Mutex<HashMap<BodyKey, ParsedBody>> {
    static BODIES: OnceLock<Mutex<HashMap<BodyKey, ParsedBody>>> = OnceLock::new();
    BODIES.get_or_init(Mutex::default)
}

fn parse_body(text: &str) -> ParsedBody {
    let model = function_model(text)?;
    let numbers = crate::resolve::resolve_without_tables(&model).numbers;
    Some(Box::leak(Box::new((model, numbers))))
}

/// A function in the text format, parsed and lowered into a model of its own holding it as
/// its one function; `None` when the text has errors.
pub(super) fn function_model(text: &str) -> Option<Model> {
    let parsed = onnx_syntax::parse_function(text);
    if !parsed.errors.is_empty() {
        return None;
    }
    let lowered = crate::lower::from_ast::function(&parsed.tree?, text);
    lowered.diagnostics.is_empty().then_some(lowered.model)
}

/// An operator's schema function body, parsed once: a model of its own holding the body as
/// its one function, with its value numbers and the schema's attribute defaults. What
/// inference infers an operator without a rule through, and what the evaluator runs an
/// operator without a kernel through.
#[derive(Debug)]
pub struct SchemaBody {
    pub model: &'static Model,
    pub numbers: &'static ValueNumbers,
    pub function: FunctionId,
    /// The schema's defaults, for attribute references neither the caller nor the body
    /// gives.
    pub defaults: Vec<Attribute>,
}

impl SchemaBody {
    /// Body node `node` as the call `caller` runs it: its attribute references bound to
    /// the caller's attributes or the defaults (never to attributes that live in the
    /// caller's model's arenas: tensors and graphs), inputs of left-out parameters empty.
    /// `None` when it runs as written.
    pub fn bound(&self, node: &Node, caller: &Node) -> Option<Node> {
        let function = &self.model.function_store[self.function];
        let omitted = omitted_parameters(caller, function);
        bind(node, caller, function, &self.defaults, false, &omitted)
    }
}

/// The function body `schema` gives for imported version `opset` (the body of the largest
/// version not above it), parsed; `None` when it has none.
pub fn schema_function_body(schema: &OpSchema, opset: i64) -> Option<SchemaBody> {
    let (version, text) = schema.function_body_at(opset)?;
    let key = (schema.domain.clone(), schema.op.clone(), *version);
    let body = {
        let mut cache = parsed_bodies().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *cache.entry(key).or_insert_with(|| parse_body(text))
    }?;
    let (model, numbers) = body;
    Some(SchemaBody { model, numbers, function: *model.functions.first()?, defaults: schema_defaults(schema) })
}

/// Infers `node` (an operator without a rule of its own, whose schema at the imported
/// version `opset` is `schema`) through the schema's function body, when it has one.
pub(super) fn schema_body(
    schema: &OpSchema,
    opset: i64,
    node: &Node,
    inputs: Places<'_>,
    env: &Env<'_>,
) -> Option<Outputs> {
    let body = schema_function_body(schema, opset)?;
    let callee = Callee { model: body.model, numbers: body.numbers, id: body.function, defaults: &body.defaults };
    infer_call_of(&callee, node, inputs, env)
}

/// The attributes a schema gives defaults for, as attributes (numbers, strings and lists of
/// them: the kinds of default the schemas have).
pub(super) fn schema_defaults(schema: &OpSchema) -> Vec<Attribute> {
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
