//! Declared types against inferred ones. A value's type written in the model (a graph
//! output or a `value_info` entry) that contradicts what inference derives from the graph
//! is a `type-conflict`: onnx's strict shape inference (and so `check_model(full_check=True)`)
//! rejects such models. Reported on the declaration, with the node output that produces
//! the value as related place. Where only inference that goes further than onnx's finds the
//! contradiction (a shape read from a shape computation, which onnx's full check does not
//! follow), onnx accepts the model: that is a `type-conflict-beyond-onnx` warning. Which is
//! which is decided by inferring a second time as onnx does ([`super::Env::infer_as_onnx`]),
//! only for models with a shape contradiction.
//! [`contradicted`] lists the declarations for `onnx infer --overwrite-declared` too.
//!
//! Only contradictions count, as in onnx's merge: different element types, different ranks,
//! two different concrete sizes of one dimension, different kinds of type. A symbolic or
//! unknown dimension on either side agrees with anything.

use crate::diagnostic::{Anchor, Diagnostic};
use crate::ir::{Model, Str, TensorType, Type, TypeValue};

use super::ModelTypes;
use super::lattice::contradiction;
use crate::resolve::{NO_VALUE, ValueId};

/// A declaration (a graph output, a `value_info` entry, or a graph input an initializer
/// feeds) whose type contradicts the type inference found, or the initializer holds.
#[derive(Debug)]
pub struct Contradicted {
    /// The declaration.
    pub at: Anchor,
    /// What contradicts it: the node output that produces the value, or the initializer.
    pub source: Anchor,
    pub name: Str,
    pub declared: Type,
    /// The type inference found, or the initializer's.
    pub found: Type,
    /// Why the two cannot describe one value.
    pub why: String,
    /// Whether onnx's own inference would not find it: only the shape is contradicted, and
    /// the type onnx's inference finds (see [`super::Env::infer_as_onnx`]) does not
    /// contradict the declaration.
    pub beyond_onnx: bool,
}

/// Every declared type in every inferred graph that contradicts inference: a
/// `type-conflict` error where onnx's full check finds it too, a
/// `type-conflict-beyond-onnx` warning where only inference that goes further than onnx's
/// does (onnx and onnxruntime accept such a model). Each names the fix.
pub fn conflicts(model: &Model, types: &ModelTypes) -> Vec<Diagnostic> {
    contradicted(model, types).into_iter().map(diagnostic).collect()
}

/// The diagnostic of one contradicted declaration.
fn diagnostic(c: Contradicted) -> Diagnostic {
    let Contradicted { at, source, name, declared, found, why, beyond_onnx } = c;
    let fix = "`onnx infer --overwrite-declared` rewrites the declaration from inference";
    if matches!(source, Anchor::Initializer(..)) {
        let message = format!("'{name}' is declared {declared} but its initializer is {found}: {why} ({fix})");
        return Diagnostic::error("type-conflict", at, message)
            .with_related(source, format!("the initializer, {found}"));
    }
    let related = format!("inferred here as {found}");
    if beyond_onnx {
        let message = format!(
            "'{name}' is declared {declared} but inferred {found}: {why} (onnx's own inference stops short of \
             this, so onnx and onnxruntime accept the model; {fix})"
        );
        return Diagnostic::warning("type-conflict-beyond-onnx", at, message).with_related(source, related);
    }
    let message = format!("'{name}' is declared {declared} but inferred {found}: {why} ({fix})");
    Diagnostic::error("type-conflict", at, message).with_related(source, related)
}

/// Every declaration in every inferred graph that contradicts inference, in model order,
/// each judged against onnx's own inference (see [`Contradicted::beyond_onnx`]).
pub fn contradicted(model: &Model, types: &ModelTypes) -> Vec<Contradicted> {
    let mut found = candidates(model, types, &[]);
    let otherwise = onnx_infers_otherwise(model);
    if otherwise || found.iter().any(|c| c.beyond_onnx) {
        let as_onnx = super::contradicted_as_onnx(model, types);
        if otherwise {
            found = candidates(model, types, &as_onnx);
        }
        judge(model, types, &as_onnx, &mut found);
    }
    found
}

/// Whether the model has a node for which onnx's inference gives a shape ours does not,
/// so that onnx may find a contradiction ours does not see at all: Attention's
/// `qk_matmul_output`, to which onnx writes whatever dims it had gathered (rank 0 without
/// the query's shape); and the readers of an If output onnx infers no type for, which
/// onnx's inference holds absent (Split's `split`, Squeeze's `axes`: see
/// [`super::ops::Ctx::given_to_onnx`]). Only then is onnx's inference run for every model,
/// not only for those with a shape-only contradiction to judge.
fn onnx_infers_otherwise(model: &Model) -> bool {
    model.nodes.iter().any(|(_, node)| match node.op_type.as_ref().and_then(Str::as_str) {
        Some("Attention") => node.outputs.get(3).is_some_and(|o| o.as_str().is_some_and(|o| !o.is_empty())),
        Some("If") if node.schema_domain() == Some("") => {
            super::validate::if_outputs_onnx_leaves_untyped(model, node).contains(&true)
        }
        _ => false,
    })
}

/// Every declaration that contradicts inference, in model order; a shape-only one is
/// `beyond_onnx` until [`judge`] finds onnx's inference contradicts it too.
///
/// `as_onnx` (sorted by value) holds the node outputs onnx's inference finds contradicting
/// their declaration, with the type it finds: a declaration only that one contradicts is
/// listed too, as onnx's finding.
fn candidates(model: &Model, types: &ModelTypes, as_onnx: &[(ValueId, Type)]) -> Vec<Contradicted> {
    let mut found = Vec::new();
    // Graphs in model order, so diagnostics come out in a stable order.
    for (g, _) in model.graphs.iter().filter(|&(g, _)| types.inferred(g)) {
        let graph = &model.graphs[g];
        initializer_conflicts(model, g, &mut found);
        let numbers = &types.numbers;
        // A graph output's value is known by number (resolution numbered it); a
        // `value_info` entry only by name. Producers are looked for only for those, and by
        // name only when there are value_info entries: hashing every node output's name to
        // find the one or two declared ones cost more than the comparisons.
        // Sorted and searched, not hashed: a graph has a few outputs, and every node output
        // is looked up.
        let mut output_values: Vec<ValueId> =
            numbers.graph_outputs(g, graph).iter().filter(|&v| v != NO_VALUE).collect();
        output_values.sort_unstable();
        output_values.dedup();
        let described: foldhash::HashSet<&Str> = graph.value_info.iter().filter_map(|v| v.name.as_ref()).collect();
        if output_values.is_empty() && described.is_empty() {
            continue;
        }
        let mut by_value = foldhash::HashMap::default();
        let mut by_name = foldhash::HashMap::default();
        // Each value has one producer. Graph outputs are mostly produced last: from the end,
        // the search stops once every output's producer is found (when no `value_info`
        // entry needs one too).
        for &n in graph.nodes.iter().rev() {
            if described.is_empty() && by_value.len() == output_values.len() {
                break;
            }
            let node = &model.nodes[n];
            for (i, (name, value)) in node.outputs.iter().zip(numbers.node_outputs(n, node)).enumerate() {
                if output_values.binary_search(&value).is_ok() {
                    by_value.insert(value, Anchor::NodeOutput(n, i));
                }
                if !described.is_empty() && described.contains(name) {
                    by_name.entry(name).or_insert(Anchor::NodeOutput(n, i));
                }
            }
        }
        let outputs = graph.outputs.iter().zip(numbers.graph_outputs(g, graph)).enumerate();
        let outputs = outputs.map(|(i, (v, value))| (v, Anchor::GraphOutput(g, i), by_value.get(&value)));
        let described = graph.value_info.iter().enumerate();
        let described =
            described.map(|(i, v)| (v, Anchor::ValueInfo(g, i), v.name.as_ref().and_then(|n| by_name.get(n))));
        for (info, at, producer) in outputs.chain(described) {
            let (Some(name), Some(written)) = (&info.name, &info.ty) else { continue };
            // Graph inputs and initializers have no producer: they are where types come from.
            let Some(&source @ Anchor::NodeOutput(n, i)) = producer else { continue };
            let inferred = types.node_output(model, n, i);
            if !as_onnx.is_empty()
                && inferred.is_none_or(|inferred| contradiction(written, inferred).is_none())
                && let Some(value) = numbers.node_outputs(n, &model.nodes[n]).get(i)
                && let Ok(at_onnx) = as_onnx.binary_search_by_key(&value, |(v, _)| *v)
                && let Some(why) = contradiction(written, &as_onnx[at_onnx].1)
            {
                let found_type = as_onnx[at_onnx].1.clone();
                let (name, declared) = (name.clone(), written.clone());
                found.push(Contradicted { at, source, name, declared, found: found_type, why, beyond_onnx: false });
                continue;
            }
            let Some(inferred) = inferred else { continue };
            if let Some(why) = contradiction(written, inferred) {
                // Element types and kinds of type onnx infers without data propagation; a
                // contradiction in those is onnx's finding whatever the shapes. Shape-only
                // ones are judged again below, against onnx's own inference.
                let beyond_onnx = contradiction(written, &without_shapes(inferred)).is_none();
                found.push(Contradicted {
                    at,
                    source,
                    name: name.clone(),
                    declared: written.clone(),
                    found: inferred.clone(),
                    why,
                    beyond_onnx,
                });
            }
        }
    }
    found
}

/// A shape contradiction is onnx's finding too when onnx's own inference finds it:
/// `as_onnx` lists the node outputs (sorted) whose type that inference found contradicting
/// their declaration, with that type.
fn judge(model: &Model, types: &ModelTypes, as_onnx: &[(ValueId, Type)], found: &mut [Contradicted]) {
    for c in found.iter_mut().filter(|c| c.beyond_onnx) {
        let Anchor::NodeOutput(n, i) = c.source else { continue };
        let value = types.numbers.node_outputs(n, &model.nodes[n]).get(i);
        if value.is_some_and(|v| as_onnx.binary_search_by_key(&v, |(v, _)| *v).is_ok()) {
            c.beyond_onnx = false;
        }
    }
}

/// `ty` with every tensor shape unknown.
fn without_shapes(ty: &Type) -> Type {
    let strip = |t: &TensorType| TensorType { elem_type: t.elem_type, shape: None };
    let inner = |t: &Option<Box<Type>>| t.as_deref().map(|t| Box::new(without_shapes(t)));
    let value = ty.value.as_ref().map(|v| match v {
        TypeValue::Tensor(t) => TypeValue::Tensor(strip(t)),
        TypeValue::SparseTensor(t) => TypeValue::SparseTensor(strip(t)),
        TypeValue::Sequence(t) => TypeValue::Sequence(inner(t)),
        TypeValue::Optional(t) => TypeValue::Optional(inner(t)),
        TypeValue::Map { key_type, value_type } => {
            TypeValue::Map { key_type: *key_type, value_type: inner(value_type) }
        }
        other @ TypeValue::Opaque { .. } => other.clone(),
    });
    Type { value, denotation: None }
}

/// An initializer whose tensor contradicts the type a graph input or `value_info` entry of
/// the same name declares for it (onnx merges the two, and fails: "Inferred shape and
/// existing shape differ"; onnxruntime refuses such a model too). Models of IR version 3
/// list every weight as a graph input, exporters often describe weights in `value_info`.
fn initializer_conflicts(model: &Model, g: crate::ir::GraphId, found: &mut Vec<Contradicted>) {
    let graph = &model.graphs[g];
    if graph.initializers.is_empty() || (graph.inputs.is_empty() && graph.value_info.is_empty()) {
        return;
    }
    let inputs = graph.inputs.iter().enumerate().map(|(i, v)| (v, Anchor::GraphInput(g, i)));
    let described = graph.value_info.iter().enumerate().map(|(i, v)| (v, Anchor::ValueInfo(g, i)));
    let declared: foldhash::HashMap<&Str, (&Type, Anchor)> =
        inputs.chain(described).filter_map(|(v, at)| Some((v.name.as_ref()?, (v.ty.as_ref()?, at)))).collect();
    if declared.is_empty() {
        return;
    }
    for (i, &t) in graph.initializers.iter().enumerate() {
        let tensor = &model.tensors[t];
        let Some(name) = tensor.name.as_ref() else { continue };
        let Some(&(written, at)) = declared.get(name) else { continue };
        let held = super::types::tensor_type(tensor);
        if let Some(why) = contradiction(written, &held) {
            found.push(Contradicted {
                at,
                source: Anchor::Initializer(g, i),
                name: name.clone(),
                declared: written.clone(),
                found: held,
                why,
                beyond_onnx: false,
            });
        }
    }
}
