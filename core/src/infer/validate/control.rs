//! If, Loop, Scan and SequenceMap: what onnx's inference functions fail them for
//! (`onnx/defs/controlflow/{utils,old}.cc`, `sequence/defs.cc`), judged on the counts the
//! node and its bodies declare and on the types inference found for the bodies' outputs:
//! how many outputs a body gives against how many the node has, which kinds of value a body
//! may give (tensors; sequences and optionals as a Loop's carried values from versions 13
//! and 16), the two branches of an If giving the same kinds, and Scan's axis lists.

use super::{Judge, Violations, int, ints};
use crate::diagnostic::Anchor;
use crate::infer::control::{graph_attr, without_shapes};
use crate::infer::lattice::contradiction;
use crate::infer::types::tensor;
use crate::infer::types::tensor_parts;
use crate::ir::{DataType, Dimension, GraphId, Model, Node, Type, TypeValue};

/// The control-flow operators' rules, under their keys ([`super::DEFAULT_DOMAIN`]).
pub(super) const VALIDATORS: super::Registrations =
    &[("If", 1, subgraphs), ("Loop", 1, subgraphs), ("Scan", 1, subgraphs), ("SequenceMap", 1, subgraphs)];

fn subgraphs(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    subgraph_rules(judge.model, judge.node, judge.op, judge.since, &judge.lookup, &judge.body, v);
}

/// Checks If, Loop, Scan or SequenceMap node `node` (`op`, whose schema is `since_version`);
/// `body` gives the types of a subgraph's outputs as inferred for this node.
pub(super) fn subgraph_rules<'t>(
    model: &Model,
    node: &Node,
    op: &str,
    since_version: i64,
    lookup: &impl Fn(usize) -> Option<&'t Type>,
    body: &impl Fn(GraphId) -> Vec<Option<Type>>,
    v: &mut Violations<'_, '_>,
) {
    body_inputs(model, node, op, since_version, lookup, v);
    match op {
        "If" => if_branches(model, node, body, v),
        "Loop" => loop_body(model, node, since_version, lookup, body, v),
        "Scan" => {
            let dims = |i: usize| lookup(i).and_then(tensor_parts).and_then(|(_, d)| d);
            scan(node, since_version, &dims, body, v);
        }
        "SequenceMap" => {
            if let Some((g, at)) = graph(node, "body", v) {
                body_output_count(at, body(g).len(), node.outputs.len(), v);
            }
        }
        _ => {}
    }
}

/// The subgraph attribute `name` and its place.
fn graph(node: &Node, name: &str, v: &Violations<'_, '_>) -> Option<(GraphId, Anchor)> {
    Some((graph_attr(node, name)?, v.attribute_anchor(node, name)))
}

/// A body (at `at`) that gives `given` outputs where its node needs `needed`. onnx judges
/// only a body that gives any.
fn body_output_count(at: Anchor, given: usize, needed: usize, v: &mut Violations<'_, '_>) -> bool {
    if given == 0 || given == needed {
        return true;
    }
    let op = v.op;
    let message = format!("the body of {op} gives {}; this node needs {needed}", outputs(given));
    v.error("output-count", at, message);
    false
}

/// "1 output", "2 outputs".
fn outputs(count: usize) -> String {
    format!("{count} output{}", if count == 1 { "" } else { "s" })
}

/// The kind of value a type holds, for messages.
fn kind(t: &Type) -> &'static str {
    match &t.value {
        Some(TypeValue::Tensor(_)) => "a tensor",
        Some(TypeValue::Sequence(_)) => "a sequence",
        Some(TypeValue::Map { .. }) => "a map",
        Some(TypeValue::Optional(_)) => "an optional",
        Some(TypeValue::SparseTensor(_)) => "a sparse tensor",
        Some(TypeValue::Opaque { .. }) => "an opaque value",
        None => "a value of no type",
    }
}

/// Where two branch types cannot be one output's type, as onnx's `UnionTypeInfo` judges
/// them: different kinds, or tensors (of sequences, of optionals) of different element
/// types. Only what both types know is compared.
fn branch_mismatch(a: &Type, b: &Type) -> Option<String> {
    let element = |e: Option<i32>| super::type_name(e.unwrap_or_default().into());
    match (&a.value, &b.value) {
        (Some(TypeValue::Tensor(x)), Some(TypeValue::Tensor(y)))
        | (Some(TypeValue::SparseTensor(x)), Some(TypeValue::SparseTensor(y))) => {
            let differ = x.elem_type.is_some() && y.elem_type.is_some() && x.elem_type != y.elem_type;
            differ.then(|| format!("{} elements against {}", element(x.elem_type), element(y.elem_type)))
        }
        (Some(TypeValue::Sequence(x)), Some(TypeValue::Sequence(y)))
        | (Some(TypeValue::Optional(x)), Some(TypeValue::Optional(y))) => match (x, y) {
            (Some(x), Some(y)) => branch_mismatch(x, y),
            _ => None,
        },
        (
            Some(TypeValue::Map { key_type: k1, value_type: v1 }),
            Some(TypeValue::Map { key_type: k2, value_type: v2 }),
        ) => {
            if k1.is_some() && k2.is_some() && k1 != k2 {
                return Some(format!("map keys {} against {}", element(*k1), element(*k2)));
            }
            match (v1, v2) {
                (Some(x), Some(y)) => branch_mismatch(x, y),
                _ => None,
            }
        }
        (Some(TypeValue::Opaque { .. }), Some(TypeValue::Opaque { .. })) => None,
        (Some(_), Some(_)) => Some(format!("{} against {}", kind(a), kind(b))),
        _ => None,
    }
}

/// If: both branches give as many outputs as the node has, and of the same kinds and
/// element types (onnx's `UnionTypeInfo`, which also fails a declared-only output whose
/// sequence, optional or map type lacks its parts).
fn if_branches(model: &Model, node: &Node, body: &impl Fn(GraphId) -> Vec<Option<Type>>, v: &mut Violations<'_, '_>) {
    let (Some((then_g, _)), Some((else_g, else_at))) = (graph(node, "then_branch", v), graph(node, "else_branch", v))
    else {
        return;
    };
    let (then_types, else_types) = (body(then_g), body(else_g));
    if then_types.len() != else_types.len() {
        let message = format!(
            "then_branch gives {} and else_branch {}: both branches of If must give the same number",
            outputs(then_types.len()),
            else_types.len()
        );
        v.error("output-count", else_at, message);
        return;
    }
    if then_types.len() != node.outputs.len() {
        let message = format!("If has {} but its branches give {}", outputs(node.outputs.len()), then_types.len());
        v.error("output-count", Anchor::Node(v.n), message);
        return;
    }
    let (then_seen, else_seen) = (onnx_sees(model, then_g, then_types), onnx_sees(model, else_g, else_types));
    for (i, (t, e)) in then_seen.iter().zip(&else_seen).enumerate() {
        let what = match (t, e) {
            (Seen::Inferred(a) | Seen::Declared(a), Seen::Inferred(b) | Seen::Declared(b)) => {
                let lacking = |seen: &Seen, ty: &Type| {
                    if matches!(seen, Seen::Declared(_)) { parts_missing(ty, false) } else { None }
                };
                branch_mismatch(a, b).or_else(|| lacking(e, b)).or_else(|| lacking(t, a))
            }
            (Seen::Untyped, Seen::Inferred(e) | Seen::Declared(e)) => {
                Some(format!("a value of no type ({UNTYPED}) against {}", kind(e)))
            }
            (Seen::Inferred(t) | Seen::Declared(t), Seen::Untyped) => {
                Some(format!("{} against a value of no type ({UNTYPED})", kind(t)))
            }
            _ => None,
        };
        if let Some(what) = what {
            let message = format!("output {i} of If: then_branch gives {what} from else_branch");
            v.error("subgraph-output-type", Anchor::GraphOutput(else_g, i), message);
        }
    }
}

/// The part a sequence, optional or map type (or one inside it) lacks, which onnx's
/// `UnionTypeInfo` fails for; with `tensor_elements`, also a tensor's element type and an
/// element of no kind, which onnx's inference and type-constraint check fail for (a type
/// declared without them: see `null_inputs.rs`).
pub(super) fn parts_missing(t: &Type, tensor_elements: bool) -> Option<String> {
    let inner = |e: &Type| parts_missing(e, tensor_elements);
    match &t.value {
        Some(TypeValue::Tensor(e) | TypeValue::SparseTensor(e))
            if tensor_elements && e.elem_type.is_none_or(|e| e == 0) =>
        {
            Some(format!("{} of unknown element type", kind(t)))
        }
        Some(TypeValue::Sequence(e) | TypeValue::Optional(e)) => match e {
            None => Some(format!("{} of unknown element type", kind(t))),
            Some(e) if tensor_elements && e.value.is_none() => Some(format!("{} of an element of no kind", kind(t))),
            Some(e) => inner(e).map(|why| format!("{} of {why}", kind(t))),
        },
        Some(TypeValue::Map { key_type, value_type }) => match value_type {
            _ if key_type.is_none_or(|k| k == 0) => Some("a map of unknown key type".to_owned()),
            None => Some("a map of unknown value type".to_owned()),
            Some(value) if tensor_elements && value.value.is_none() => Some("a map of values of no kind".to_owned()),
            Some(value) => inner(value).map(|why| format!("a map of {why}")),
        },
        _ => None,
    }
}

/// Loop: the body gives the condition, then one value per output of the node; carried
/// values are tensors (version 13 on also sequences, version 16 on also optionals), scan
/// outputs tensors; each of a known element type, a carried value's that of the value it
/// carries (onnx's `propagateElemTypeWithValidation`). onnx sees a body output that no node
/// of the body makes (a body input handed straight back) only as it is declared.
fn loop_body<'t>(
    model: &Model,
    node: &Node,
    since_version: i64,
    lookup: &impl Fn(usize) -> Option<&'t Type>,
    body: &impl Fn(GraphId) -> Vec<Option<Type>>,
    v: &mut Violations<'_, '_>,
) {
    let Some((g, at)) = graph(node, "body", v) else { return };
    let types = body(g);
    if !body_output_count(at, types.len(), node.outputs.len() + 1, v) || types.is_empty() {
        return;
    }
    let carried = node.inputs.len().saturating_sub(2);
    for (i, seen) in onnx_sees(model, g, types).iter().enumerate().skip(1) {
        let (t, declared) = match seen {
            Seen::Inferred(t) => (t, false),
            Seen::Declared(t) => (t, true),
            Seen::Unknown => continue,
            Seen::Untyped => {
                let message = format!("body output {i} has no type: {UNTYPED}");
                v.error("subgraph-output-type", Anchor::GraphOutput(g, i), message);
                continue;
            }
        };
        let (is_tensor, is_sequence, is_optional) = (
            matches!(t.value, Some(TypeValue::Tensor(_))),
            matches!(t.value, Some(TypeValue::Sequence(_))),
            matches!(t.value, Some(TypeValue::Optional(_))),
        );
        let output = i - 1;
        let wanted = if output >= carried {
            (!is_tensor).then_some("a scan output of Loop must be a tensor")
        } else if since_version >= 16 {
            (!(is_tensor || is_sequence || is_optional))
                .then_some("a carried value of Loop must be a tensor, a sequence or an optional")
        } else if since_version >= 13 {
            (!(is_tensor || is_sequence)).then_some("a carried value of Loop must be a tensor or a sequence")
        } else {
            (!is_tensor).then_some("a carried value of Loop must be a tensor before version 13")
        };
        if let Some(wanted) = wanted {
            let message = format!("body output {i} is {}: {wanted}", kind(t));
            v.error("subgraph-output-type", Anchor::GraphOutput(g, i), message);
            continue;
        }
        let carries = if output < carried { lookup(output + 2) } else { None };
        if let Some(why) = element_types_disagree(t, carries, declared) {
            let message = format!("body output {i} is {why}");
            v.error("subgraph-output-type", Anchor::GraphOutput(g, i), message);
        }
    }
}

/// Why an untyped subgraph output fails its node.
const UNTYPED: &str = "onnx's inference gives no type to a body input handed straight back, nor to what an \
                       operator it has no schema for makes, and sees only what such an output declares: declare its type";

/// A subgraph output as onnx's inference sees it.
enum Seen {
    /// As inference found it.
    Inferred(Type),
    /// As declared, which is all onnx sees of it: its parts may be missing.
    Declared(Type),
    /// onnx infers no type for it and it declares none.
    Untyped,
    /// Our inference found no type; onnx's may have.
    Unknown,
}

/// The outputs of subgraph `g` as onnx's inference hands them to the node (`inferred`, ours,
/// refined by what they declare). onnx never infers an output that no node of `g` makes (a
/// body input handed straight back) or that an operator onnx has no schema for makes (a
/// custom domain's): it sees only what such an output declares.
fn onnx_sees(model: &Model, g: GraphId, inferred: Vec<Option<Type>>) -> Vec<Seen> {
    let graph = &model.graphs[g];
    let mut made_typed = std::collections::HashSet::new();
    for &n in &graph.nodes {
        let node = &model.nodes[n];
        let onnx_domain =
            matches!(node.schema_domain(), Some("" | "ai.onnx.ml" | "ai.onnx.preview" | "ai.onnx.preview.training"));
        if onnx_domain || model.local_function(node).is_some() {
            made_typed.extend(node.outputs.iter().filter_map(|name| name.as_str()));
        }
    }
    graph
        .outputs
        .iter()
        .zip(inferred.into_iter().chain(std::iter::repeat(None)))
        .map(|(out, inferred)| {
            let inferred_by_onnx = out.name.as_ref().and_then(|n| n.as_str()).is_some_and(|n| made_typed.contains(n));
            match (inferred_by_onnx, inferred) {
                (true, Some(t)) => Seen::Inferred(t),
                (true, None) => Seen::Unknown,
                (false, _) => match out.ty.as_ref().filter(|t| t.value.is_some()) {
                    Some(t) => Seen::Declared(t.clone()),
                    None => Seen::Untyped,
                },
            }
        })
        .collect()
}

/// Which outputs of If `node` onnx's inference gives no type: both branches' outputs are
/// untyped as onnx sees them ([`onnx_sees`]).
pub(super) fn untyped_if_outputs(model: &Model, node: &Node) -> Vec<bool> {
    let (Some(then_g), Some(else_g)) = (graph_attr(node, "then_branch"), graph_attr(node, "else_branch")) else {
        return Vec::new();
    };
    let untyped = |g: GraphId| -> Vec<bool> {
        onnx_sees(model, g, Vec::new()).iter().map(|seen| matches!(seen, Seen::Untyped)).collect()
    };
    untyped(then_g).into_iter().zip(untyped(else_g)).map(|(a, b)| a && b).collect()
}

/// Where a Loop body's output `given` fails onnx's `propagateElemTypeWithValidation` into the
/// Loop's output, which starts as the type of the value it `carries` (none for a scan
/// output): an element type other than the carried one; a tensor where a sequence or an
/// optional is carried; and, in a type only `declared` (inferred ones are complete where
/// onnx's are), an element type (of a tensor, or inside a sequence, an optional or a map's
/// values) or a map's key type missing, or an element of no kind.
fn element_types_disagree(given: &Type, carries: Option<&Type>, declared: bool) -> Option<String> {
    let element = |e: i32| super::type_name(e.into());
    let missing = |what: String| declared.then_some(what);
    let carried = carries.and_then(|c| c.value.as_ref());
    match &given.value {
        Some(TypeValue::Tensor(t) | TypeValue::SparseTensor(t)) => {
            let Some(elem) = t.elem_type.filter(|&e| e != 0) else {
                return missing("a tensor of unknown element type".to_owned());
            };
            match carried {
                None => None,
                Some(TypeValue::Tensor(c) | TypeValue::SparseTensor(c)) => match c.elem_type {
                    Some(c) if c != 0 && c != elem => {
                        Some(format!("a tensor of {} where the Loop carries {}", element(elem), element(c)))
                    }
                    _ => None,
                },
                Some(_) => Some(format!("a tensor where the Loop carries {}", kind(carries?))),
            }
        }
        Some(TypeValue::Sequence(e) | TypeValue::Optional(e)) => {
            let Some(e) = e else { return missing(format!("{} of unknown element type", kind(given))) };
            let inner = match carried {
                Some(TypeValue::Sequence(c)) if matches!(given.value, Some(TypeValue::Sequence(_))) => c.as_deref(),
                Some(TypeValue::Optional(c)) if matches!(given.value, Some(TypeValue::Optional(_))) => c.as_deref(),
                _ => None,
            };
            element_types_disagree(e, inner, declared).map(|why| format!("{} of {why}", kind(given)))
        }
        Some(TypeValue::Map { key_type, value_type }) => {
            if key_type.is_none_or(|k| k == 0) {
                return missing("a map of unknown key type".to_owned());
            }
            let Some(value) = value_type else { return missing("a map of unknown value type".to_owned()) };
            let inner = match carried {
                Some(TypeValue::Map { value_type, .. }) => value_type.as_deref(),
                _ => None,
            };
            element_types_disagree(value, inner, declared).map(|why| format!("a map of {why}"))
        }
        _ => missing(format!("{}: neither a tensor, a sequence, an optional nor a map", kind(given))),
    }
}

/// Scan: `num_scan_inputs` within the inputs (after `sequence_lens` in version 8), no more
/// carried values than outputs, axis lists of one value per scan input or output and in
/// range, and a body giving one tensor per output.
fn scan<'d>(
    node: &Node,
    since_version: i64,
    dims: &impl Fn(usize) -> Option<&'d [Dimension]>,
    body: &impl Fn(GraphId) -> Vec<Option<Type>>,
    v: &mut Violations<'_, '_>,
) {
    let Some(scan_inputs) = int(node, "num_scan_inputs") else { return };
    // Version 8's first input is the sequence lengths.
    let lead = usize::from(since_version < 9);
    let inputs = node.inputs.len();
    let Some(states) = usize::try_from(scan_inputs).ok().and_then(|m| inputs.checked_sub(m + lead)) else {
        let at = v.attribute_anchor(node, "num_scan_inputs");
        let after = if lead == 1 { " after sequence_lens" } else { "" };
        let plural = if inputs - lead == 1 { "" } else { "s" };
        let message =
            format!("num_scan_inputs = {scan_inputs}, but this Scan has {} input{plural}{after}", inputs - lead);
        v.error("invalid-attribute-value", at, message);
        return;
    };
    let count = node.outputs.len();
    if lead == 0 && states > count {
        let message = format!(
            "this Scan carries {states} values (its inputs less num_scan_inputs) but has {}: it needs one per carried value, then its scan outputs",
            outputs(count)
        );
        v.error("output-count", Anchor::Node(v.n), message);
        return;
    }
    let scan_outputs = count.saturating_sub(states);
    let Some((g, at)) = graph(node, "body", v) else { return };
    let types = body(g);
    if lead == 0 {
        let input_axes = ints(node, "scan_input_axes");
        let output_axes = ints(node, "scan_output_axes");
        for (name, list, count) in
            [("scan_input_axes", input_axes, scan_inputs as usize), ("scan_output_axes", output_axes, scan_outputs)]
        {
            if let Some(list) = list.filter(|l| l.len() != count) {
                let at = v.attribute_anchor(node, name);
                let message = format!("{name} has {} values; this Scan has {count}", list.len());
                v.error("attribute-size", at, message);
                return;
            }
        }
        for k in 0..scan_inputs as usize {
            if let Some(d) = dims(states + k) {
                let axis = input_axes.and_then(|a| a.get(k).copied()).unwrap_or(0);
                scan_axis(node, "scan_input_axes", axis, d.len(), v);
            }
        }
    }
    if !body_output_count(at, types.len(), count, v) {
        return;
    }
    for (i, t) in types.iter().enumerate() {
        if let Some(t) = t.as_ref().filter(|t| !matches!(t.value, Some(TypeValue::Tensor(_)))) {
            let message = format!("body output {i} is {}: every output of a Scan body must be a tensor", kind(t));
            v.error("subgraph-output-type", Anchor::GraphOutput(g, i), message);
        }
    }
    if lead == 0 {
        scan_output_axes(node, &types[states.min(types.len())..], v);
    }
}

/// Each scan output's axis within the rank its body output gets with the scan axis.
fn scan_output_axes(node: &Node, scanned: &[Option<Type>], v: &mut Violations<'_, '_>) {
    let axes = ints(node, "scan_output_axes");
    for (k, t) in scanned.iter().enumerate() {
        let Some(rank) = t.as_ref().and_then(tensor_parts).and_then(|(_, d)| d).map(|d| d.len() + 1) else {
            continue;
        };
        let axis = axes.and_then(|a| a.get(k).copied()).unwrap_or(0);
        scan_axis(node, "scan_output_axes", axis, rank, v);
    }
}

/// `axis` of the list `name` in `[-rank, rank-1]`.
fn scan_axis(node: &Node, name: &str, axis: i64, rank: usize, v: &mut Violations<'_, '_>) {
    let r = rank as i64;
    if axis < -r || axis >= r {
        let at = v.attribute_anchor(node, name);
        let message = if rank == 0 {
            format!("{name} holds {axis}, but the value is a scalar: it has no axis to scan")
        } else {
            format!("{name} holds {axis}, out of range for a value of rank {rank}: it must be in [{}, {}]", -r, r - 1)
        };
        v.error("invalid-axis", at, message);
    }
}

/// What a node hands its body: one type per body input (`None` where nothing is known),
/// as onnx's inference functions build it.
fn given_to_body<'t>(
    node: &Node,
    op: &str,
    since_version: i64,
    lookup: &impl Fn(usize) -> Option<&'t Type>,
) -> Vec<Option<Type>> {
    let inputs = node.inputs.len();
    let given = |i: usize| lookup(i).cloned();
    match op {
        // The iteration number (an int64 tensor of no known shape), the condition, then the
        // carried values without their shapes (they may change from one iteration to the next).
        "Loop" => {
            let mut types = vec![Some(tensor(DataType::Int64.code(), None)), given(1)];
            types.extend((2..inputs).map(|i| given(i).map(|t| without_shapes(&t))));
            types
        }
        // Carried values whole; scan inputs less their scan axis.
        "Scan" if since_version >= 9 => {
            let scan_inputs = int(node, "num_scan_inputs").and_then(|m| usize::try_from(m).ok()).unwrap_or(0);
            let states = inputs.saturating_sub(scan_inputs);
            let axes = ints(node, "scan_input_axes");
            (0..inputs)
                .map(|i| {
                    let t = given(i)?;
                    if i < states {
                        return Some(t);
                    }
                    let axis = axes.and_then(|a| a.get(i - states).copied()).unwrap_or(0);
                    Some(without_axis(&t, axis))
                })
                .collect()
        }
        // Version 8: after sequence_lens, carried values less their batch axis, scan inputs
        // less their batch and sequence axes.
        "Scan" => {
            let scan_inputs = int(node, "num_scan_inputs").and_then(|m| usize::try_from(m).ok()).unwrap_or(0);
            let states = inputs.saturating_sub(1 + scan_inputs);
            (1..inputs).map(|i| given(i).map(|t| without_leading(&t, if i - 1 < states { 1 } else { 2 }))).collect()
        }
        // A sequence's elements; other inputs whole.
        "SequenceMap" => (0..inputs)
            .map(|i| {
                let t = given(i)?;
                match t.value {
                    Some(TypeValue::Sequence(e)) => e.map(|e| *e),
                    _ => Some(t),
                }
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A tensor type less axis `axis`, its shape forgotten when the axis is not one of it.
fn without_axis(t: &Type, axis: i64) -> Type {
    let mut t = t.clone();
    if let Some(TypeValue::Tensor(x)) = &mut t.value
        && let Some(shape) = &mut x.shape
    {
        let r = shape.dims.len() as i64;
        let a = if axis < 0 { axis + r } else { axis };
        if (0..r).contains(&a) {
            shape.dims.remove(a as usize);
        } else {
            x.shape = None;
        }
    }
    t
}

/// A tensor type less its first `count` axes: a scalar if it has no more (as onnx's
/// `RemoveDimensionsFromShape` leaves it, so a body that declares more axes contradicts it).
fn without_leading(t: &Type, count: usize) -> Type {
    let mut t = t.clone();
    if let Some(TypeValue::Tensor(x)) = &mut t.value
        && let Some(shape) = &mut x.shape
    {
        shape.dims = shape.dims.get(count..).unwrap_or_default().to_vec();
    }
    t
}

/// The body takes as many inputs as its node hands it (from IR version 4; before, a body
/// may list more, its initializers), each of a type that agrees with what it is handed.
fn body_inputs<'t>(
    model: &Model,
    node: &Node,
    op: &str,
    since_version: i64,
    lookup: &impl Fn(usize) -> Option<&'t Type>,
    v: &mut Violations<'_, '_>,
) {
    let names: &[&str] = if op == "If" { &["then_branch", "else_branch"] } else { &["body"] };
    let given = given_to_body(node, op, since_version, lookup);
    let exact = model.ir_version.is_none_or(|ir| ir >= 4);
    for name in names {
        let Some((g, at)) = graph(node, name, v) else { continue };
        let taken = &model.graphs[g].inputs;
        if taken.len() != given.len() && (exact || given.len() > taken.len()) {
            let plural = if taken.len() == 1 { "" } else { "s" };
            let message = format!(
                "{name} of {} takes {} input{plural}, but this node hands it {}",
                v.op,
                taken.len(),
                given.len()
            );
            v.error("input-count", at, message);
            continue;
        }
        // A Loop without a condition hands its body's condition no type; onnxruntime then
        // refuses a body that declares none either ("Model input (cond) does not have type
        // information"), whether the body reads it or not.
        if v.op == "Loop"
            && node.inputs.get(1).is_none_or(|c| c.is_empty())
            && let Some(cond) = taken.get(1)
            && cond.ty.as_ref().is_none_or(|t| t.value.is_none())
        {
            let called = cond.name.as_ref().map(|n| format!(" ('{n}')")).unwrap_or_default();
            let message = format!(
                "input 1{called} of body has no type, and this Loop's condition is empty, so nothing \
                 gives it one (onnxruntime refuses the model): declare it bool"
            );
            v.error("incomplete-type", Anchor::GraphInput(g, 1), message);
        }
        for (i, (input, handed)) in taken.iter().zip(&given).enumerate() {
            if let (Some(declared), Some(handed)) = (&input.ty, handed)
                && let Some(why) = contradiction(declared, handed)
            {
                let called = input.name.as_ref().map(|n| format!(" ('{n}')")).unwrap_or_default();
                let message = format!(
                    "input {i}{called} of {name} is declared {declared}, but {} hands it {handed}: {why}",
                    v.op
                );
                v.error("type-conflict", Anchor::GraphInput(g, i), message);
            }
        }
    }
}
