//! One inference rule per operator family, dispatched by operator name.

mod attention;
mod control;
mod einsum;
mod elementwise;
mod generator;
mod ml;
mod nn;
mod recurrent;
mod select;
mod sequence;
mod shape;
mod signal;
mod text;
mod training;
mod vision;

use super::call;
use super::env::{Env, Known, tensor, tensor_parts};
use crate::ir::{AttributeValue, Dimension, Model, Node, NodeId, Str, TensorId, Type};
use crate::resolve::{NO_VALUE, Places, ValueId};
use crate::schema::{FormalOption, OpSchema, registry};

/// What a rule sees: the node, its inputs' types and known values, the opset.
pub struct Ctx<'a, 'm> {
    pub model: &'m Model,
    /// The node as the rule sees it; inside a function body, a copy whose attribute
    /// references are bound to the caller's attributes.
    pub node: &'a Node,
    /// The numbers of the values the node's inputs refer to.
    inputs: Places<'m>,
    pub env: &'a Env<'m>,
    pub opset: i64,
}

impl<'a, 'm> Ctx<'a, 'm> {
    pub fn new(model: &'m Model, node: &'a Node, inputs: Places<'m>, env: &'a Env<'m>, opset: i64) -> Self {
        Ctx { model, node, inputs, env, opset }
    }

    /// The number of input `i`'s value (`NO_VALUE` when absent or undefined).
    fn input_value(&self, i: usize) -> ValueId {
        self.inputs.get(i).unwrap_or(NO_VALUE)
    }

    pub fn input_type(&self, i: usize) -> Option<&'a Type> {
        self.env.ty(self.input_value(i))
    }

    /// Element type and dims (dims `None` for unknown rank) of a tensor input.
    pub fn input(&self, i: usize) -> Option<(Option<i32>, Option<&[Dimension]>)> {
        self.input_type(i).and_then(tensor_parts)
    }

    pub fn elem(&self, i: usize) -> Option<i32> {
        self.input(i).and_then(|(e, _)| e)
    }

    pub fn dims(&self, i: usize) -> Option<&[Dimension]> {
        self.input(i).and_then(|(_, d)| d)
    }

    pub fn has_input(&self, i: usize) -> bool {
        self.node.inputs.get(i).is_some_and(|n| !n.is_empty())
    }

    pub fn value(&self, i: usize) -> Option<&Known> {
        self.env.value(self.input_value(i))
    }

    pub fn int(&self, name: &str) -> Option<i64> {
        match self.node.attribute(name)?.value()? {
            AttributeValue::Int(v) => Some(v),
            _ => None,
        }
    }

    pub fn ints(&self, name: &str) -> Option<&'a [i64]> {
        match self.node.attribute(name)?.value()? {
            AttributeValue::Ints(v) => Some(v),
            _ => None,
        }
    }

    /// A string attribute (`mode`, `direction`, …) as text.
    pub fn string(&self, name: &str) -> Option<&'a str> {
        self.node.attribute(name)?.s.as_ref()?.as_str()
    }

    /// The first element of a known 0-D or 1-D integer input (a `depth`, a `size`).
    pub fn scalar_value(&self, i: usize) -> Option<i64> {
        self.value(i).and_then(Known::ints).and_then(|v| (v.len() == 1).then(|| v[0]))
    }

    /// The dims of input `i` as a vector, when its rank is known.
    pub fn dims_vec(&self, i: usize) -> Option<Vec<Dimension>> {
        self.dims(i).map(<[_]>::to_vec)
    }

    /// The values of a small float32 constant input (an initializer or a `Constant`).
    pub fn float_values(&self, i: usize) -> Option<Vec<f32>> {
        let t = &self.model.tensors[self.env.constant(self.input_value(i))?];
        if t.element_count()? > 64 {
            return None;
        }
        crate::ir::tensor_data::float_values(t)
    }

    pub fn tensor_attr(&self, name: &str) -> Option<TensorId> {
        match self.node.attribute(name)?.value()? {
            AttributeValue::Tensor(t) => Some(t),
            _ => None,
        }
    }
}

/// What a rule found: a type (and maybe a known value) per output.
#[derive(Default)]
pub struct Outputs {
    pub types: Types,
    pub values: Vec<Option<Known>>,
}

/// The output types of a node, inline for the usual single output (a heap allocation per
/// node was a measurable part of inference).
pub type Types = smallvec::SmallVec<[Option<Type>; 1]>;

impl Outputs {
    pub fn one(ty: Type) -> Outputs {
        Outputs { types: smallvec::smallvec![Some(ty)], values: Vec::new() }
    }

    pub fn with_value(mut self, known: Option<Known>) -> Outputs {
        // Nothing known is no entry at all, and no allocation.
        if known.is_some() {
            self.values = vec![known];
        }
        self
    }
}

/// A tensor type of the given element type and dims.
pub fn tensor_of(elem: Option<i32>, dims: Option<Vec<Dimension>>) -> Type {
    tensor(elem.unwrap_or(0), dims)
}

/// A size computed in `i128` (sizes and attributes come from the model and may be huge,
/// so rules widen before they add or multiply), back in `i64` when it fits.
pub fn narrow(v: i128) -> Option<i64> {
    i64::try_from(v).ok()
}

/// Of two dims that describe one axis, the first that says something (a size or a name).
pub fn first_known(a: &Dimension, b: &Dimension) -> Dimension {
    if a.value.is_some() { a.clone() } else { b.clone() }
}

pub fn normalize_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    (0..r).contains(&a).then_some(a as usize)
}

/// Infers graph node `id`; returns its operator's schema when it is of the default domain
/// (the type-constraint check that follows needs it too).
pub(super) fn infer_node<'m>(model: &'m Model, id: NodeId, env: &mut Env<'m>) -> Option<&'static OpSchema> {
    infer_node_in(model, id, &model.nodes[id], env)
}

/// Infers one node of `model` (a node of a graph, or of a function body with its attribute
/// references bound) and records its outputs in `env`. An operator's own rule comes first,
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
    let mut default_schema = None;
    let outputs = match domain {
        Some("") => {
            let known = env.ops.get(op).copied();
            let mut memo = known.unwrap_or_else(|| OpMemo {
                family: None,
                schema: registry().lookup("", op, env.opset),
                control: control::is_control(op),
            });
            default_schema = memo.schema;
            let controlled = if memo.control { control::infer(op, model, node, inputs, env) } else { None };
            let found = match controlled {
                Some(outputs) => Some(outputs),
                None => {
                    let ctx = Ctx::new(model, node, inputs, env, env.opset);
                    rule(op, &ctx, &mut memo.family).or_else(|| {
                        let schema = memo.schema?;
                        call::schema_body(schema, ctx.opset, node, inputs, env).or_else(|| from_schema(schema, &ctx))
                    })
                }
            };
            if known.is_none_or(|k| k.family != memo.family) {
                env.ops.insert(op.to_owned(), memo);
            }
            found
        }
        Some(domain @ ("ai.onnx.ml" | "ai.onnx.preview.training" | "ai.onnx.preview")) => {
            let opset = env.domain_opset(domain).unwrap_or(1);
            let ctx = Ctx::new(model, node, inputs, env, opset);
            let found = match domain {
                "ai.onnx.ml" => ml::infer(op, &ctx),
                "ai.onnx.preview" if op == "FlexAttention" => Some(attention::flex_attention(&ctx)),
                _ => training::infer(op, &ctx),
            };
            found.or_else(|| from_schema(registry().lookup(domain, op, opset)?, &ctx))
        }
        _ => None,
    };
    let outputs = match outputs {
        Some(outputs) => outputs,
        None => {
            let function = model.local_function(node)?;
            call::infer_call(function, node, inputs, env)?
        }
    };
    let defined = numbers.node_outputs(id, node);
    record(defined, outputs, env);
    if domain == Some("")
        && op == "Constant"
        && let (Some(output), Some(AttributeValue::Tensor(t))) =
            (defined.first(), node.attribute("value").and_then(|a| a.value()))
    {
        env.set_constant(output, t);
    }
    default_schema
}

/// The rule families of the default domain, in the order they are asked.
const FAMILIES: [fn(&str, &Ctx<'_, '_>) -> Option<Outputs>; 12] = [
    elementwise::infer,
    shape::infer,
    nn::infer,
    select::infer,
    generator::infer,
    vision::infer,
    recurrent::infer,
    sequence::infer,
    text::infer,
    einsum::infer,
    signal::infer,
    attention::infer,
];

/// What inference keeps about an operator of the default domain, found when it is first
/// met (one environment has one opset): its schema, and which rule family answered for it.
/// One hash of the operator's name per node then serves the rule and the constraint check.
#[derive(Clone, Copy)]
pub(super) struct OpMemo {
    /// An index into [`FAMILIES`].
    family: Option<u8>,
    schema: Option<&'static OpSchema>,
    /// A control-flow operator (its subgraphs are inferred by `control`), so that other
    /// operators are not matched against those names on every node.
    control: bool,
}

pub(super) type OpMemos = foldhash::HashMap<String, OpMemo>;

/// The first family's answer for `op`. Each family matches operator names one by one, so
/// asking them all in turn cost more than most rules; the family that answered before
/// (`family`, updated here) is asked first. When it has no answer now (unknown inputs), the
/// others are asked as before, so the result is the same as asking them in order.
fn rule(op: &str, ctx: &Ctx<'_, '_>, family: &mut Option<u8>) -> Option<Outputs> {
    let known = *family;
    if let Some(found) = known.and_then(|i| FAMILIES.get(usize::from(i))).and_then(|rules| rules(op, ctx)) {
        return Some(found);
    }
    for (i, rules) in FAMILIES.iter().enumerate() {
        if known == Some(i as u8) {
            continue;
        }
        if let Some(found) = rules(op, ctx) {
            *family = Some(i as u8);
            return Some(found);
        }
    }
    None
}

/// Moves what a rule found into `env`, under the numbers of the node's outputs.
fn record(defined: Places<'_>, outputs: Outputs, env: &mut Env<'_>) {
    // A type whose element type is unknown says nothing useful: leave the value untyped.
    let typed = |t: &Type| !matches!(tensor_parts(t), Some((None | Some(0), _)));
    for (value, ty) in defined.iter().zip(outputs.types) {
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
