//! Node inputs against their operator's type constraints, with the types inference found:
//! each input's type must be one its formal allows, and the inputs bound to one type
//! parameter must agree (`Add(float, int64)`). onnx's strict inference (and so
//! `check_model(full_check=True)`) rejects both.

use crate::diagnostic::{Anchor, Diagnostic};
use crate::ir::{Model, NodeId, Str, Type, TypeValue, code_name};
use crate::schema::{FormalOption, OpSchema, registry};

/// How onnx's schemas spell a type: `tensor(float)`, `seq(tensor(int64))`,
/// `map(string, float)`, …; `None` while part of it is unknown.
pub fn constraint_spelling(t: &Type) -> Option<String> {
    match t.value.as_ref()? {
        TypeValue::Tensor(x) => Some(format!("tensor({})", code_name(x.elem_type.filter(|&e| e != 0)?))),
        TypeValue::SparseTensor(x) => Some(format!("sparse_tensor({})", code_name(x.elem_type.filter(|&e| e != 0)?))),
        TypeValue::Sequence(e) => Some(format!("seq({})", constraint_spelling(e.as_deref()?)?)),
        TypeValue::Optional(e) => Some(format!("optional({})", constraint_spelling(e.as_deref()?)?)),
        TypeValue::Map { key_type, value_type } => {
            let value = match value_type.as_deref()?.value.as_ref()? {
                TypeValue::Tensor(x) => code_name(x.elem_type?),
                _ => constraint_spelling(value_type.as_deref()?)?,
            };
            Some(format!("map({}, {value})", code_name((*key_type)?)))
        }
        TypeValue::Opaque { .. } => None,
    }
}

/// A fully known type as type constraints see it (no shape): a tensor's element type code
/// without any string work, anything else spelled as the schemas spell it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    Tensor(i32),
    Other(String),
}

impl Kind {
    fn of(t: &Type) -> Option<Kind> {
        match t.value.as_ref()? {
            TypeValue::Tensor(x) => x.elem_type.filter(|&e| e != 0).map(Kind::Tensor),
            _ => constraint_spelling(t).map(Kind::Other),
        }
    }

    fn spelled(&self) -> String {
        match self {
            Kind::Tensor(code) => format!("tensor({})", code_name(*code)),
            Kind::Other(s) => s.clone(),
        }
    }
}

/// Per type constraint (by index) the kind its first input bound it to, and that input.
/// Kept by the caller between nodes so that checking a node allocates nothing.
#[derive(Default)]
pub(super) struct Bindings(Vec<(usize, Kind, usize)>);

/// The inputs of graph node `n` whose types (`lookup` finds input `i`'s) its operator's
/// (`known`, when the caller has the schema of a default-domain node at the model's opset)
/// constraints reject (onnx's strict inference, and so `check_model(full_check=True)`,
/// rejects both kinds), added to `found`. Inference calls this for each graph node right
/// after inferring it, while the input types it has just read are still in cache.
pub(super) fn node_violations<'t>(
    model: &Model,
    n: NodeId,
    known: Option<&OpSchema>,
    lookup: impl Fn(usize) -> Option<&'t Type>,
    bindings: &mut Bindings,
    found: &mut Vec<Diagnostic>,
) {
    let node = &model.nodes[n];
    let Some(domain) = node.schema_domain() else { return };
    // The operator's name as text, for the messages (and the lookup when the schema is not
    // known), only when needed: validating it as UTF-8 on every node showed in profiles.
    let op_name = || node.op_type.as_ref().and_then(Str::as_str);
    let schema = match known.filter(|_| domain.is_empty()) {
        Some(schema) => schema,
        None => {
            let Some(op) = op_name() else { return };
            let Some(version) = model.opset_version(domain) else { return };
            let Some(schema) = registry().lookup(domain, op, version) else { return };
            schema
        }
    };
    let bound = &mut bindings.0;
    bound.clear();
    // Absent inputs have no type (`lookup` reads the value numbers, not the names, which
    // would bring the node's input list back into cache).
    for i in 0..node.inputs.len() {
        let Some(formal) =
            schema.inputs.get(i).or_else(|| schema.inputs.last().filter(|f| f.option == FormalOption::Variadic))
        else {
            continue;
        };
        let Some(ty) = lookup(i) else { continue };
        let Some(kind) = Kind::of(ty) else { continue };
        let allowed = match kind {
            Kind::Tensor(code) => (0..64).contains(&code) && formal.tensor_elems & (1 << code) != 0,
            Kind::Other(ref spelled) => schema.allowed_types(formal).contains(&spelled.as_str()),
        };
        if !allowed {
            let op = op_name().unwrap_or_default();
            let allowed = schema.allowed_types(formal);
            found.push(Diagnostic::error(
                "input-type",
                Anchor::NodeInput(n, i),
                format!(
                    "input {i} ('{}') of {op} is {}, which {} does not allow (allowed: {})",
                    formal.name,
                    kind.spelled(),
                    formal.type_str,
                    listed(&allowed)
                ),
            ));
            continue;
        }
        let heterogeneous = formal.option == FormalOption::Variadic && !formal.homogeneous;
        let Some(constraint) = formal.constraint.filter(|_| !heterogeneous) else { continue };
        match bound.iter().find(|(c, _, _)| *c == constraint) {
            Some((_, first, at)) if *first != kind => {
                let op = op_name().unwrap_or_default();
                let (first, spelled) = (first.spelled(), kind.spelled());
                found.push(
                    Diagnostic::error(
                        "type-parameter-mismatch",
                        Anchor::NodeInput(n, i),
                        format!(
                            "input {i} of {op} is {spelled}, but {} is already {first} from input {at}",
                            formal.type_str
                        ),
                    )
                    .with_related(Anchor::NodeInput(n, *at), format!("{} bound to {first} here", formal.type_str)),
                );
            }
            Some(_) => {}
            None => bound.push((constraint, kind, i)),
        }
    }
}

/// The outputs of control-flow node `n` (an If, whose output types come from its
/// branches; `lookup` finds output `i`'s inferred type) that `schema`'s constraints
/// reject: onnx's strict inference checks a node's outputs against its constraints too
/// ("outputs has unsupported type"), which only a body's types can break (an If-13 branch
/// giving an optional, which If allows from version 16).
pub(super) fn body_output_violations<'t>(
    n: NodeId,
    schema: &OpSchema,
    lookup: impl Fn(usize) -> Option<&'t Type>,
    outputs: usize,
    found: &mut Vec<Diagnostic>,
) {
    for i in 0..outputs {
        let Some(formal) =
            schema.outputs.get(i).or_else(|| schema.outputs.last().filter(|f| f.option == FormalOption::Variadic))
        else {
            continue;
        };
        let Some(kind) = lookup(i).and_then(Kind::of) else { continue };
        let allowed = match kind {
            Kind::Tensor(code) => (0..64).contains(&code) && formal.tensor_elems & (1 << code) != 0,
            Kind::Other(ref spelled) => schema.allowed_types(formal).contains(&spelled.as_str()),
        };
        if !allowed {
            let (op, version) = (&schema.op, schema.since_version);
            let message = format!(
                "output {i} ('{}') of {op}-{version} is {}, which its body gives but {} does not allow (allowed: {})",
                formal.name,
                kind.spelled(),
                formal.type_str,
                listed(&schema.allowed_types(formal))
            );
            found.push(Diagnostic::error("subgraph-output-type", Anchor::NodeOutput(n, i), message));
        }
    }
}

/// The first few allowed types, and how many more there are.
fn listed(allowed: &[&str]) -> String {
    const SHOWN: usize = 6;
    let mut out = allowed.iter().take(SHOWN).copied().collect::<Vec<_>>().join(", ");
    if allowed.len() > SHOWN {
        out.push_str(&format!(" and {} more", allowed.len() - SHOWN));
    }
    out
}
