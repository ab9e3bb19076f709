//! Attention and LinearAttention: what onnx's inference functions fail them for
//! (`onnx/defs/nn/{defs,old,utils}.cc`): the ranks of query, key, value and the past cache,
//! the head counts a 3-D (packed) input needs, and which optional inputs and outputs go
//! together. Only what is known is judged.

use super::{Violations, int};
use crate::diagnostic::Anchor;
use crate::infer::types::known_dim;
use crate::ir::{AttributeValue, Dimension, Node};

/// Attention (versions 23 to 25).
pub(super) fn attention<'d>(
    node: &Node,
    since_version: i64,
    dims: &impl Fn(usize) -> Option<&'d [Dimension]>,
    v: &mut Violations<'_, '_>,
) {
    if since_version >= 25 {
        attention_25(node, dims, v);
    }
    let Some(q) = dims(0) else { return };
    for (i, what) in [(0, "query"), (1, "key"), (2, "value")] {
        if let Some(d) = dims(i)
            && d.len() != 3
            && d.len() != 4
        {
            let message = format!("the {what} of Attention (input {i}) must have rank 3 or 4, it has rank {}", d.len());
            v.error("input-rank", Anchor::NodeInput(v.n, i), message);
            return;
        }
    }
    if q.len() == 3 {
        for name in ["q_num_heads", "kv_num_heads"] {
            if node.attribute(name).is_none() {
                let message = format!("Attention of a 3-D query (heads packed in its last axis) needs {name}");
                v.error("missing-required-attribute", Anchor::Node(v.n), message);
                return;
            }
        }
        if dims(2).is_some_and(|d| d.len() == 3) && since_version < 25 {
            positive_heads(node, v);
        }
    }
    if node.has_output(1) && node.has_output(2) && node.has_input(4) && node.has_input(5) {
        for (i, what) in [(4, "past_key"), (5, "past_value")] {
            if let Some(d) = dims(i).filter(|d| d.len() != 4) {
                let message = format!("the {what} of Attention (input {i}) must have rank 4, it has rank {}", d.len());
                v.error("input-rank", Anchor::NodeInput(v.n, i), message);
                return;
            }
        }
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
pub(super) fn linear_attention<'d>(
    node: &Node,
    dims: &impl Fn(usize) -> Option<&'d [Dimension]>,
    v: &mut Violations<'_, '_>,
) {
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
    let mut head_size = None;
    for (i, what, heads) in [(0, "query", q_heads), (1, "key", kv_heads), (2, "value", kv_heads)] {
        if let Some(size) = last(i) {
            if size % heads != 0 {
                let message = format!("the packed {what}'s last axis is {size}, which {heads} heads do not divide");
                v.error("incompatible-shapes", Anchor::NodeInput(v.n, i), message);
                return;
            }
            if i < 2 {
                head_size = head_size.or(Some(size / heads));
            }
        }
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
