//! The attention operators (the family of [`crate::infer::ops`]'s `attention` module): what
//! onnx's inference functions fail them for (`onnx/defs/nn/{defs,old,utils}.cc`): for
//! Attention and LinearAttention, the ranks of query, key, value and the past cache, the head
//! counts a 3-D (packed) input needs, and which optional inputs and outputs go together; the
//! sizes CausalConvWithState, RotaryEmbedding, TensorScatter and SwiGLU share among their
//! inputs; FlexAttention's (ai.onnx.preview) inputs and modifier graphs. Only what is known
//! is judged.

use super::overflow;
use super::unify::{self, SharedSize};
use super::{Judge, Violations, int, shown};
use crate::diagnostic::Anchor;
use crate::infer::types::{known_dim, tensor_parts};
use crate::ir::{AttributeValue, DataType, Dimension, Model, Node, Type};

/// The attention operators' rules, under their keys ([`super::DEFAULT_DOMAIN`]).
pub(super) const VALIDATORS: super::Registrations = &[
    ("Attention", 1, attention),
    ("LinearAttention", 1, linear_attention),
    ("CausalConvWithState", 1, causal_conv_with_state),
    ("RotaryEmbedding", 1, rotary_embedding),
    ("TensorScatter", 1, tensor_scatter),
    ("SwiGLU", 1, swiglu),
];

/// FlexAttention's rule, under its key of ai.onnx.preview ([`super::OTHER_DOMAINS`]).
pub(super) const PREVIEW_VALIDATORS: super::Registrations = &[("FlexAttention", 1, flex_attention)];

/// Attention (versions 23 to 25).
fn attention(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, since: since_version, .. } = *judge;
    let dims = &|i: usize| judge.dims(i);
    if since_version >= 25 {
        attention_25(node, dims, v);
    }
    if dims(0).is_some() && !query_key_value(node, since_version, dims, v) {
        return;
    }
    // onnx judges the past cache's rank whatever the query's shape, once both halves of it
    // have one. onnxruntime (1.32) has no kernel for version 25 and infers through its
    // function body instead, which judges each half that has a shape (its Concat with the
    // new keys or values).
    let each_half = since_version >= 25;
    if node.has_output(1)
        && node.has_output(2)
        && node.has_input(4)
        && node.has_input(5)
        && (each_half || (dims(4).is_some() && dims(5).is_some()))
    {
        for (i, what) in [(4, "past_key"), (5, "past_value")] {
            if let Some(d) = dims(i)
                && d.len() != 4
            {
                let message = format!("the {what} of Attention (input {i}) must have rank 4, it has rank {}", d.len());
                v.error("input-rank", Anchor::NodeInput(v.n, i), message);
                return;
            }
        }
    }
    attention_sizes(node, dims, v);
}

/// What onnx judges once the query's shape is known: the ranks of query, key and value, and
/// the head counts a 3-D query needs. False when it reported an error.
fn query_key_value<'d>(
    node: &Node,
    since_version: i64,
    dims: &impl Fn(usize) -> Option<&'d [Dimension]>,
    v: &mut Violations<'_, '_>,
) -> bool {
    for (i, what) in [(0, "query"), (1, "key"), (2, "value")] {
        if let Some(d) = dims(i)
            && d.len() != 3
            && d.len() != 4
        {
            let message = format!("the {what} of Attention (input {i}) must have rank 3 or 4, it has rank {}", d.len());
            v.error("input-rank", Anchor::NodeInput(v.n, i), message);
            return false;
        }
    }
    if dims(0).is_some_and(|q| q.len() == 3) {
        for name in ["q_num_heads", "kv_num_heads"] {
            if node.attribute(name).is_none() {
                let message = format!("Attention of a 3-D query (heads packed in its last axis) needs {name}");
                v.error("missing-required-attribute", Anchor::Node(v.n), message);
                return false;
            }
        }
        if dims(2).is_some_and(|d| d.len() == 3) && since_version < 25 {
            return positive_heads(node, v);
        }
    }
    true
}

/// What onnx's Attention inference computes with checked arithmetic: for 3-D inputs the
/// output's hidden size (q_num_heads × the value's head size), and the present cache's
/// sequence length (the past one plus the new one).
fn attention_sizes<'d>(node: &Node, dims: &impl Fn(usize) -> Option<&'d [Dimension]>, v: &mut Violations<'_, '_>) {
    let (Some(q), Some(value)) = (dims(0), dims(2)) else { return };
    let at = Anchor::Node(v.n);
    // onnx reads an unknown dimension as 0 here.
    let value_dim = |i: usize| value.get(i).and_then(known_dim).unwrap_or(0);
    let new_sequence = match (q.len(), value.len()) {
        (4, 4) => value_dim(2),
        (3, 3) => {
            let (Some(q_heads), Some(kv_heads)) = (int(node, "q_num_heads"), int(node, "kv_num_heads")) else { return };
            if q_heads <= 0 || kv_heads <= 0 {
                return;
            }
            let what = "the output's hidden size (q_num_heads × the value's head size)";
            if overflow::times(v, at, what, value_dim(2) / kv_heads, q_heads).is_none() {
                return;
            }
            value_dim(1)
        }
        _ => return,
    };
    if node.has_output(1)
        && node.has_output(2)
        && node.has_input(5)
        && new_sequence > 0
        && let Some(past) = dims(4).filter(|d| d.len() == 4).and_then(|d| known_dim(&d[2]))
    {
        overflow::plus(v, at, "the present cache's sequence length (past + new)", new_sequence, past);
    }
}

/// `q_num_heads` and `kv_num_heads` positive.
fn positive_heads(node: &Node, v: &mut Violations<'_, '_>) -> bool {
    for name in ["q_num_heads", "kv_num_heads"] {
        if let Some(heads) = int(node, name).filter(|&h| h <= 0) {
            let at = v.attribute_anchor(node, name);
            v.error("invalid-attribute-value", at, format!("{name} = {heads}: Attention needs a positive head count"));
            return false;
        }
    }
    true
}

/// What Attention 25 adds: window sizes of -1 (none) or more, head counts positive for a 3-D
/// query and absent for a 4-D one, the past cache given whole, the present cache asked for
/// whole, and no nonpad_kv_seqlen beside a cache.
fn attention_25<'d>(node: &Node, dims: &impl Fn(usize) -> Option<&'d [Dimension]>, v: &mut Violations<'_, '_>) {
    for name in ["left_window_size", "right_window_size"] {
        if let Some(size) = int(node, name).filter(|&s| s < -1) {
            let at = v.attribute_anchor(node, name);
            v.error("invalid-attribute-value", at, format!("{name} = {size}: it must be -1 (no window) or 0 or more"));
        }
    }
    let rank = dims(0).map(<[Dimension]>::len);
    let heads_given = ["q_num_heads", "kv_num_heads"].map(|name| node.attribute(name).is_some());
    if rank == Some(3) && heads_given == [true, true] {
        positive_heads(node, v);
    }
    if rank == Some(4) && heads_given.contains(&true) {
        let message = "Attention of a 4-D query takes its heads from the query's axis 1: q_num_heads and kv_num_heads must not be given";
        v.error("invalid-attribute-value", Anchor::Node(v.n), message);
    }
    let (past_key, past_value) = (node.has_input(4), node.has_input(5));
    if past_key != past_value {
        let message = "past_key and past_value of Attention go together: give both or neither";
        v.error("missing-required-input", Anchor::Node(v.n), message);
    }
    let (present_key, present_value) = (node.has_output(1), node.has_output(2));
    if present_key != present_value {
        let message = "present_key and present_value of Attention go together: ask for both or neither";
        v.error("missing-required-output", Anchor::Node(v.n), message);
    }
    if node.has_input(6) && (past_key || present_key) {
        let message = "nonpad_kv_seqlen of Attention cannot be combined with a past or present cache";
        v.error("input-count", Anchor::NodeInput(v.n, 6), message);
    }
}

/// LinearAttention: head counts positive with the query's a multiple of the key's, an
/// `update_rule` onnx knows with the inputs it needs (decay for the gated rules, beta for the
/// delta rules, neither otherwise), packed last axes that the head counts divide, and decay
/// and beta last axes of a size the heads allow.
fn linear_attention(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    let dims = &|i: usize| judge.dims(i);
    // onnx unifies query, key and value with [B, T, packed], the state with
    // [B, Hkv, Dk, Dv], decay and beta with [B, T, last]: those ranks first.
    let ranks = [
        (0, 3, "the query"),
        (1, 3, "the key"),
        (2, 3, "the value"),
        (3, 4, "past_state"),
        (4, 3, "decay"),
        (5, 3, "beta"),
    ];
    let before = v.found.len();
    for (i, rank, what) in ranks {
        if node.has_input(i) {
            v.rank_within(i, dims(i), rank, rank, what);
        }
    }
    if v.found.len() > before {
        return;
    }
    let q_heads = int(node, "q_num_heads").unwrap_or(0);
    let kv_heads = int(node, "kv_num_heads").unwrap_or(0);
    for (name, heads) in [("q_num_heads", q_heads), ("kv_num_heads", kv_heads)] {
        if heads <= 0 {
            let at = v.attribute_anchor(node, name);
            v.error(
                "invalid-attribute-value",
                at,
                format!("{name} = {heads}: LinearAttention needs a positive {name}"),
            );
            return;
        }
    }
    if q_heads % kv_heads != 0 {
        let at = v.attribute_anchor(node, "q_num_heads");
        let message = format!("q_num_heads = {q_heads} must be a multiple of kv_num_heads = {kv_heads}");
        v.error("invalid-attribute-value", at, message);
        return;
    }
    let rule = match node.attribute("update_rule").and_then(|a| a.value()) {
        Some(AttributeValue::String(s)) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
        _ => "gated_delta".to_owned(),
    };
    let (needs_decay, needs_beta) = match rule.as_str() {
        "linear" => (false, false),
        "gated" => (true, false),
        "delta" => (false, true),
        "gated_delta" => (true, true),
        _ => {
            let at = v.attribute_anchor(node, "update_rule");
            let message =
                format!("update_rule = \"{rule}\" is not one LinearAttention knows: linear, gated, delta, gated_delta");
            v.error("invalid-attribute-value", at, message);
            return;
        }
    };
    for (i, what, needed) in [(4, "decay", needs_decay), (5, "beta", needs_beta)] {
        if node.has_input(i) != needed {
            let (code, verb) = if needed { ("missing-required-input", "needs") } else { ("input-count", "takes no") };
            v.error(code, Anchor::Node(v.n), format!("update_rule \"{rule}\" of LinearAttention {verb} {what} input"));
            return;
        }
    }
    // The packed last axes: the query's holds q_num_heads heads, the key's and value's
    // kv_num_heads.
    let last = |i: usize| dims(i).filter(|d| d.len() == 3).and_then(|d| known_dim(&d[2]));
    for (i, what, heads) in [(0, "query", q_heads), (1, "key", kv_heads), (2, "value", kv_heads)] {
        if let Some(size) = last(i)
            && size % heads != 0
        {
            let message = format!("the packed {what}'s last axis is {size}, which {heads} heads do not divide");
            v.error("incompatible-shapes", Anchor::NodeInput(v.n, i), message);
            return;
        }
    }
    // The sizes onnx unifies: B across every input, T across all but the state, and the
    // state [B, kv_num_heads, Dk, Dv] whose Dk is the query's and key's head size and Dv the
    // value's.
    let state = dims(3);
    let mut dk = SharedSize::new("the head size Dk");
    let mut dv = SharedSize::new("the value's head size Dv");
    let mut agreed = unify::agree(v, "the batch size B", dims, &[(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (5, 0)])
        && unify::agree(v, "the sequence length T", dims, &[(0, 1), (1, 1), (2, 1), (4, 1), (5, 1)])
        && unify::fixed(v, 3, state, 1, kv_heads, "kv_num_heads")
        && dk.input(v, 3, state, 2)
        && dv.input(v, 3, state, 3);
    for (i, what, heads) in [(0, "query", q_heads), (1, "key", kv_heads), (2, "value", kv_heads)] {
        if agreed && let Some(packed) = last(i) {
            let from = format!("the {what}'s head size (its last axis {packed} over {heads} heads)");
            let size = if i == 2 { &mut dv } else { &mut dk };
            agreed = size.value(v, packed / heads, from, Anchor::NodeInput(v.n, i));
        }
    }
    if !agreed {
        return;
    }
    let head_size = dk.known();
    // onnx multiplies these with checked arithmetic: kv_num_heads × Dk (beside the decay)
    // and the output's q_num_heads × Dv.
    let at = Anchor::Node(v.n);
    if let Some(dk) = head_size
        && node.has_input(4)
        && last(4).is_some()
        && overflow::times(v, at, "kv_num_heads × the head size Dk", kv_heads, dk).is_none()
    {
        return;
    }
    if let Some(size) = dv.known()
        && overflow::times(v, at, "the output's hidden size (q_num_heads × Dv)", q_heads, size).is_none()
    {
        return;
    }
    if node.has_input(4)
        && let Some(decay) = last(4)
    {
        let fits = match head_size {
            Some(dk) => decay == kv_heads || Some(decay) == kv_heads.checked_mul(dk),
            None => decay == kv_heads || decay % kv_heads == 0,
        };
        if !fits {
            let message = format!(
                "the decay's last axis is {decay}; it must be kv_num_heads ({kv_heads}) or kv_num_heads × the head size"
            );
            v.error("incompatible-shapes", Anchor::NodeInput(v.n, 4), message);
        }
    }
    if node.has_input(5)
        && let Some(beta) = last(5)
        && beta != 1
        && beta != kv_heads
    {
        let message = format!("the beta's last axis is {beta}; it must be 1 or kv_num_heads ({kv_heads})");
        v.error("incompatible-shapes", Anchor::NodeInput(v.n, 5), message);
    }
}

/// FlexAttention (ai.onnx.preview 1, `onnx/defs/preview/defs.cc`): rank-4 query, key and
/// value whose heads, lengths and widths agree, a softmax precision that is a float type,
/// and modifier graphs (`score_mod`, `prob_mod`) of one rank-4 input and one output of
/// that precision and shape. The element types of query, key and value are the type
/// constraints' to judge. A node none of these fails is still one onnxruntime has no
/// kernel for (it implements no ai.onnx.preview operator): a warning.
fn flex_attention(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { model, node, .. } = *judge;
    let dims = &|i: usize| judge.dims(i);
    let elem = &|i: usize| judge.elem(i);
    flex_attention_inputs(dims, elem, v);
    // The scores' element type: softmax_precision, else double for double inputs and float
    // for the rest.
    let precision = int(node, "softmax_precision").or_else(|| {
        elem(0).map(|e| if e == DataType::Double.code() { e.into() } else { DataType::Float.code().into() })
    });
    if let Some(p) = int(node, "softmax_precision")
        && !matches!(
            i32::try_from(p).ok().and_then(DataType::from_code),
            Some(DataType::Float | DataType::Float16 | DataType::Bfloat16 | DataType::Double)
        )
    {
        let at = v.attribute_anchor(node, "softmax_precision");
        let message = format!(
            "softmax_precision = {} of FlexAttention: the scores must be float, float16, bfloat16 or double",
            super::type_name(p)
        );
        v.error("invalid-attribute-value", at, message);
    } else {
        for name in ["score_mod", "prob_mod"] {
            modifier_graph(model, node, name, precision, v);
        }
    }
    // Only a node nothing else fails is "valid" (its type constraints were judged before;
    // its input count and attribute types are the schema check's).
    let graphs = ["score_mod", "prob_mod"]
        .iter()
        .all(|name| node.attribute(name).is_none_or(|a| matches!(a.value(), Some(AttributeValue::Graph(_)))));
    if node.inputs.len() == 3 && graphs && !v.found.iter().any(|d| d.severity == crate::diagnostic::Severity::Error) {
        v.unsupported(Anchor::Node(v.n), "FlexAttention (ai.onnx.preview)");
    }
}

/// Query (B, Hq, L, D), key (B, Hkv, S, D) and value (B, Hkv, S, Dv): ranks 4, key and value
/// of one head count and length, query and key of one width, and query heads a multiple of
/// key heads.
/// onnx reads a tensor of unknown rank as rank 0 here, so once the three are typed tensors,
/// one of unknown rank fails the node too.
fn flex_attention_inputs<'d>(
    dims: &impl Fn(usize) -> Option<&'d [Dimension]>,
    elem: &impl Fn(usize) -> Option<i32>,
    v: &mut Violations<'_, '_>,
) {
    let typed = (0..3).all(|i| elem(i).is_some());
    for (i, what) in [(0, "query"), (1, "key"), (2, "value")] {
        let rank = match dims(i) {
            Some(d) if d.len() != 4 => format!("rank {}", d.len()),
            None if typed => "no known rank (onnx's inference reads it as rank 0)".to_owned(),
            _ => continue,
        };
        let message = format!(
            "the {what} of FlexAttention (input {i}) has {rank}: query (B, Hq, L, D), key (B, Hkv, S, D) and value (B, Hkv, S, Dv) have rank 4"
        );
        v.error("input-rank", Anchor::NodeInput(v.n, i), message);
        return;
    }
    let (Some(q), Some(k), Some(val)) = (dims(0), dims(1), dims(2)) else { return };
    let at = |d: &[Dimension], axis: usize| known_dim(&d[axis]);
    let pairs = [
        (2, k, val, 1, "key and value have {} and {} heads: they must have the same"),
        (2, k, val, 2, "key and value have lengths {} and {}: they must be the same"),
        (1, q, k, 3, "query and key have widths {} and {}: they must be the same"),
    ];
    for (input, a, b, axis, text) in pairs {
        if let (Some(x), Some(y)) = (at(a, axis), at(b, axis))
            && x != y
        {
            let message =
                format!("FlexAttention: {}", text.replacen("{}", &x.to_string(), 1).replacen("{}", &y.to_string(), 1));
            v.error("incompatible-shapes", Anchor::NodeInput(v.n, input), message);
            return;
        }
    }
    if let (Some(hq), Some(hkv)) = (at(q, 1), at(k, 1))
        && hq != hkv
        && (hkv <= 0 || hq % hkv != 0)
    {
        let message =
            format!("FlexAttention: the query's {hq} heads are not a multiple of the key's and value's {hkv}");
        v.error("incompatible-shapes", Anchor::NodeInput(v.n, 1), message);
    }
}

/// A modifier graph `name` of FlexAttention: one input and one output, tensors of the
/// scores' element type `precision` where declared, rank 4 where their shapes are
/// declared, of the same dimensions where both are known.
fn modifier_graph(model: &Model, node: &Node, name: &str, precision: Option<i64>, v: &mut Violations<'_, '_>) {
    let Some(Some(AttributeValue::Graph(g))) = node.attribute(name).map(|a| a.value()) else { return };
    let graph = &model.graphs[g];
    let at = v.attribute_anchor(node, name);
    let fail = |v: &mut Violations<'_, '_>, code: &'static str, what: String| {
        v.error(code, at, format!("the {name} graph of FlexAttention {what}"));
    };
    if graph.inputs.len() != 1 {
        return fail(
            v,
            "input-count",
            format!("takes {} inputs: a modifier takes one, the scores", graph.inputs.len()),
        );
    }
    if graph.outputs.len() != 1 {
        return fail(
            v,
            "output-count",
            format!("gives {} outputs: a modifier gives one, the scores", graph.outputs.len()),
        );
    }
    let declared = |vi: &crate::ir::ValueInfo| vi.ty.clone();
    let (input, output) = (declared(&graph.inputs[0]), declared(&graph.outputs[0]));
    let parts = |t: &Option<Type>| t.as_ref().and_then(|t| tensor_parts(t).map(|(e, d)| (e, d.map(<[_]>::to_vec))));
    let wanted = precision.map(super::type_name).unwrap_or_default();
    if let (Some((Some(e), _)), Some(p)) = (parts(&input), precision)
        && i64::from(e) != p
    {
        return fail(v, "type-conflict", format!("takes {}: the scores are {wanted}", super::type_name(e.into())));
    }
    if output.as_ref().is_some_and(|t| t.value.is_some() && tensor_parts(t).is_none()) {
        return fail(v, "subgraph-output-type", "gives no tensor: it must give the scores, a tensor".into());
    }
    if let (Some((e, _)), Some(p)) = (parts(&output), precision)
        && e.map_or(0, i64::from) != p
    {
        let given = e.map_or_else(|| "no element type".to_owned(), |e| super::type_name(e.into()));
        return fail(v, "subgraph-output-type", format!("gives {given}: the scores are {wanted}"));
    }
    for (what, t, code) in [("input", &input, "type-conflict"), ("output", &output, "subgraph-output-type")] {
        if let Some((_, Some(d))) = parts(t)
            && d.len() != 4
        {
            return fail(v, code, format!("declares its {what} of rank {}: the scores have rank 4", d.len()));
        }
    }
    if let (Some((_, Some(a))), Some((_, Some(b)))) = (parts(&input), parts(&output))
        && let Some(axis) = (0..a.len().min(b.len()))
            .find(|&i| matches!((known_dim(&a[i]), known_dim(&b[i])), (Some(x), Some(y)) if x != y))
    {
        let what = format!("gives a shape other than it takes (axis {axis}): a modifier keeps the scores' shape");
        fail(v, "subgraph-output-type", what);
    }
}

fn causal_conv_with_state(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { n, node, .. } = *judge;
    let dims = |i: usize| judge.dims(i);
    // onnx unifies input [B, C, L], weight [C, 1, K], bias [C], state [B, C, K-1].
    for (i, rank, what) in [(0, 3, "the input"), (1, 3, "the weight"), (2, 1, "the bias"), (3, 3, "past_state")] {
        if node.has_input(i) {
            v.rank_within(i, dims(i), rank, rank, what);
        }
    }
    v.one_of(node, "activation");
    causal_conv_sizes(&dims, v);
    if let Some(kernel) = dims(1).filter(|w| w.len() == 3).and_then(|w| known_dim(&w[2]))
        && kernel < 1
    {
        let message = format!("the weight of CausalConvWithState has a kernel of {kernel}: it must be 1 or more");
        v.error("incompatible-shapes", Anchor::NodeInput(n, 1), message);
    }
}

/// CausalConvWithState's shared sizes: input [B, C, L], weight [C, 1, K], bias [C] and
/// past_state [B, C, K-1], judged once every present input has its rank.
fn causal_conv_sizes<'d>(dims: &impl Fn(usize) -> Option<&'d [Dimension]>, v: &mut Violations<'_, '_>) {
    let ranks = [3, 3, 1, 3];
    if (0..4).any(|i| dims(i).is_some_and(|d| d.len() != ranks[i])) {
        return;
    }
    let _ = unify::agree(v, "the batch size B", dims, &[(0, 0), (3, 0)])
        && unify::agree(v, "the channel count C", dims, &[(0, 1), (1, 0), (2, 0), (3, 1)])
        && unify::fixed(v, 1, dims(1), 1, 1, "one filter per channel");
    if let Some(kernel) = dims(1).and_then(|w| known_dim(&w[2])).filter(|&k| k >= 1) {
        let why = format!("one less than the kernel size {kernel} of the weight");
        unify::fixed(v, 3, dims(3), 2, kernel - 1, &why);
    }
}

fn rotary_embedding(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { n, node, .. } = *judge;
    let dims = |i: usize| judge.dims(i);
    v.rank_within(0, dims(0), 3, 4, "the input");
    if dims(0).is_some_and(|d| d.len() == 3) && node.attribute("num_heads").is_none() {
        let message = "RotaryEmbedding of a 3-D input needs num_heads, to split the hidden axis into heads";
        v.error("missing-required-attribute", Anchor::Node(n), message);
    }
}

fn tensor_scatter(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { n, node, .. } = *judge;
    let dims = |i: usize| judge.dims(i);
    v.rank_within(2, dims(2), 1, 1, "write_indices");
    if let (Some(cache), Some(update)) = (dims(0), dims(1)) {
        let r = cache.len() as i64;
        let axis = int(node, "axis").unwrap_or(-2);
        let normalized = if axis < 0 { axis + r } else { axis };
        if cache.len() != update.len() {
            let message = format!(
                "the update of TensorScatter has rank {}, its past_cache rank {r}: they must be the same",
                update.len()
            );
            v.error("input-rank", Anchor::NodeInput(n, 1), message);
        } else if normalized <= 0 || normalized >= r {
            let at = v.attribute_anchor(node, "axis");
            let message = format!(
                "axis = {axis} of TensorScatter on a cache of rank {r}: it must name an axis after the first (the batch)"
            );
            v.error("invalid-axis", at, message);
        } else {
            // Every axis but the sequence axis is the cache's.
            for i in (0..cache.len()).filter(|&i| i as i64 != normalized) {
                if !unify::agree(
                    v,
                    format!("axis {i}, which the update shares with the cache (all but the sequence axis)"),
                    &dims,
                    &[(0, i), (1, i)],
                ) {
                    break;
                }
            }
        }
    }
    if dims(2).is_some_and(|d| d.len() == 1) {
        // onnx asks the cache's first axis (the batch) whatever the update's shape,
        // so a scalar cache fails here even when the checks above did not run.
        v.rank_within(0, dims(0), 1, usize::MAX, "past_cache");
        unify::agree(v, "the batch size", &dims, &[(0, 0), (2, 0)]);
    }
}

/// The gate and the value have one shape: onnx merges B's into A's, no broadcasting.
fn swiglu(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let n = judge.n;
    let dims = |i: usize| judge.dims(i);
    if let (Some(a), Some(b)) = (dims(0), dims(1)) {
        let differ = a.iter().zip(b).any(|(x, y)| matches!((known_dim(x), known_dim(y)), (Some(x), Some(y)) if x != y));
        if a.len() != b.len() || differ {
            let message = format!(
                "SwiGLU's gate A is [{}] and its value B [{}]: they must have one shape (no broadcasting)",
                shown(a),
                shown(b)
            );
            v.error("incompatible-shapes", Anchor::NodeInput(n, 1), message);
        }
    }
}
