//! What onnx's shape inference fails a node for, where the failure comes from the node's own
//! attributes and input shapes rather than from types: an axis out of range, attribute
//! lists of the wrong length for the spatial rank, a permutation that is not one, operands
//! whose shapes cannot broadcast or multiply. onnx's `check_model(full_check=True)` rejects
//! such a model and onnxruntime refuses to load it; inference rules alone would only answer
//! "unknown" there. Checked, like the type constraints, right after each graph node is
//! inferred, from the types just found; only what is known is judged (an unknown rank or
//! dimension never makes an error). The conditions follow onnx 1.23.2's inference
//! functions (`onnx/defs/tensor/defs.cc`, `nn/defs.cc`, `math/defs.cc`,
//! `shape_inference.h`); `docs/diagnostics.md` lists each with its code.
//!
//! The rules live by family, in modules named as [`super::ops`]'s, each registering its
//! operators' rules under their keys ([`DEFAULT_DOMAIN`], [`OTHER_DOMAINS`]); this module
//! holds what they share: what is known of a node ([`Judge`]), the checks and messages
//! they report through ([`Violations`]), and the entry points the driver calls.

mod attention;
mod control;
mod einsum;
mod elementwise;
mod external;
mod generator;
mod ml;
mod nn;
mod null_inputs;
mod overflow;
mod recurrent;
mod select;
mod sequence;
mod shape;
mod signal;
mod text;
mod training;
mod unify;
mod vision;

use super::types::{known_dim, tensor_parts};
use crate::diagnostic::{Anchor, Diagnostic};
use crate::ir::{AttributeValue, Dimension, GraphId, Model, Node, NodeId, Type};

/// What is known of a node when it is judged: the node, its operator's version, and its
/// inputs. `lookup` gives input `i`'s type, `constant` its values when it is a small integer
/// constant (an initializer or a `Constant` output, what onnx's inference reads).
pub(super) struct Judge<'a> {
    pub model: &'a Model,
    pub n: NodeId,
    pub node: &'a Node,
    pub op: &'a str,
    /// The since-version of the operator's schema in force (the default domain's
    /// operators), or the version of the domain the model imports (ai.onnx.ml's, whose
    /// rules follow the import).
    pub since: i64,
    pub lookup: &'a dyn Fn(usize) -> Option<&'a Type>,
    pub constant: &'a dyn Fn(usize) -> Option<Vec<i64>>,
    /// The tensor behind input `i` when it is an initializer or a `Constant` output, of any
    /// size or element type (`constant` gives small integer values only).
    pub tensor: &'a dyn Fn(usize) -> Option<crate::ir::TensorId>,
    /// The types of a subgraph attribute's outputs, as inferred for this node (If, Loop,
    /// Scan and SequenceMap are judged on what their bodies give).
    pub body: &'a dyn Fn(GraphId) -> Vec<Option<Type>>,
    /// Whether onnx's inference knows no type at all for input `i` (an If output, see
    /// `Env::onnx_leaves_untyped`): operators that ask an optional input's type to tell
    /// whether it is given hold such an input absent (Split-13's `split`).
    pub untyped: &'a dyn Fn(usize) -> bool,
}

impl<'a> Judge<'a> {
    /// The dims of input `i` when its rank is known.
    pub fn dims(&self, i: usize) -> Option<&'a [Dimension]> {
        (self.lookup)(i).and_then(tensor_parts).and_then(|(_, d)| d)
    }

    /// The element type of input `i` when known.
    pub fn elem(&self, i: usize) -> Option<i32> {
        (self.lookup)(i).and_then(tensor_parts).and_then(|(e, _)| e)
    }

    /// The rank of the constant tensor behind input `i`.
    pub fn constant_rank(&self, i: usize) -> Option<usize> {
        (self.tensor)(i).map(|t| self.model.tensors[t].dims.len())
    }

    /// How many elements the constant tensor behind input `i` holds.
    pub fn constant_count(&self, i: usize) -> Option<i64> {
        let t = &self.model.tensors[(self.tensor)(i)?];
        t.dims.iter().try_fold(1i64, |a, &d| a.checked_mul(d))
    }
}

/// A validation rule: what onnx's inference (or onnxruntime's loader) fails a node of one
/// operator for, registered beside the operator's inference rule under its key
/// ([`super::registry`]).
pub(super) type Validate = for<'a, 'f, 'o> fn(&Judge<'a>, &mut Violations<'f, 'o>);

/// A family's validation rules: (operator, since-version, rule).
pub(super) type Registrations = &'static [(&'static str, i64, Validate)];

/// The validation rules of the default domain, by family, as (operator, since-version,
/// rule): a rule registered from a version serves it and the later ones, until another
/// registration of the operator takes over.
pub(super) const DEFAULT_DOMAIN: [Registrations; 13] = [
    elementwise::VALIDATORS,
    shape::VALIDATORS,
    nn::VALIDATORS,
    select::VALIDATORS,
    generator::VALIDATORS,
    vision::VALIDATORS,
    recurrent::VALIDATORS,
    sequence::VALIDATORS,
    text::VALIDATORS,
    einsum::VALIDATORS,
    signal::VALIDATORS,
    attention::VALIDATORS,
    control::VALIDATORS,
];

/// The validation rules of the other domains, as [`DEFAULT_DOMAIN`]'s.
pub(super) const OTHER_DOMAINS: [(&str, Registrations); 3] = [
    ("ai.onnx.ml", ml::VALIDATORS),
    ("ai.onnx.preview", attention::PREVIEW_VALIDATORS),
    ("ai.onnx.preview.training", training::VALIDATORS),
];

/// Which outputs of If node `node` onnx's inference leaves without a type: both branches
/// make them with operators onnx has no schema for and declare none ([`null_inputs`]).
pub(super) fn if_outputs_onnx_leaves_untyped(model: &Model, node: &Node) -> Vec<bool> {
    control::untyped_if_outputs(model, node)
}

/// Whether onnx fails `node` (of the operator of `schema`) reading input `input`, of which
/// its inference knows only `known` ([`null_inputs`]).
pub(super) fn fails_without_type(
    schema: &crate::schema::OpSchema,
    node: &Node,
    input: usize,
    known: null_inputs::Known,
) -> bool {
    let variadic_from = schema
        .inputs
        .last()
        .filter(|f| f.option == crate::schema::FormalOption::Variadic)
        .map(|_| schema.inputs.len() - 1);
    let input = null_inputs::Input {
        domain: &schema.domain,
        op: &schema.op,
        since: schema.since_version,
        index: input,
        variadic_from,
    };
    null_inputs::fails(&input, node, known)
}

/// The part declared type `t` lacks that onnx's inference or type check needs: an element
/// type (of a tensor, a sequence, an optional, a map's values), an element of some kind, or
/// a map's key type.
pub(super) fn parts_missing(t: &Type) -> Option<String> {
    control::parts_missing(t, true)
}

/// Checks default-domain node `judge.n` (whose operator's schema at the imported opset
/// has since-version `judge.since`) from what is known of its inputs: the conditions every
/// operator shares, then the operator's registered rule (`validate`), if it has one.
pub(super) fn node_rule_violations(judge: &Judge<'_>, validate: Option<Validate>, found: &mut Vec<Diagnostic>) {
    let Judge { model, node, op, since: since_version, .. } = *judge;
    let mut v = Violations { n: judge.n, op, found };
    let is_constant = |i: usize| node.has_input(i) && (judge.tensor)(i).is_some();
    let stored_outside = |i: usize| model.tensors[(judge.tensor)(i)?].is_external().then(|| node.inputs[i].escaped());
    let shaped = judge.dims(0).is_some();
    external::external_constant_inputs(node, since_version, shaped, &is_constant, &stored_outside, &mut v);
    if let Some(validate) = validate {
        validate(judge, &mut v);
    }
}

/// Checks node `judge.n` of a domain other than the default one with its operator's
/// registered rule.
pub(super) fn other_domain_violations(judge: &Judge<'_>, validate: Validate, found: &mut Vec<Diagnostic>) {
    validate(judge, &mut Violations { n: judge.n, op: judge.op, found });
}

/// An element type's name for a message, or its number when it names none.
fn type_name(code: i64) -> String {
    i32::try_from(code)
        .ok()
        .and_then(crate::ir::DataType::from_code)
        .map_or_else(|| code.to_string(), |t| t.name().to_owned())
}

pub(super) struct Violations<'f, 'o> {
    n: NodeId,
    op: &'o str,
    found: &'f mut Vec<Diagnostic>,
}

impl Violations<'_, '_> {
    fn error(&mut self, code: &'static str, at: Anchor, message: impl Into<String>) {
        self.found.push(Diagnostic::error(code, at, message));
    }

    /// A defect neither onnx's full check nor onnxruntime's loader refuses the model for
    /// (running it fails): a warning, by the verdict contract (docs/diagnostics.md).
    fn warning(&mut self, code: &'static str, at: Anchor, message: impl Into<String>) {
        self.found.push(Diagnostic::warning(code, at, message));
    }

    /// What onnxruntime refuses to load because its CPU kernels do not implement it (not a
    /// rule of ONNX): a warning, by the verdict contract, that names the runtime; `--strict`
    /// makes it an error.
    fn unsupported(&mut self, at: Anchor, what: impl std::fmt::Display) {
        let message =
            format!("{what} is valid ONNX, but onnxruntime does not implement it and refuses to load the model");
        self.warning("unsupported-by-onnxruntime", at, message);
    }

    /// The attribute at its index in the node, for the diagnostic's place.
    fn attribute_anchor(&self, node: &Node, name: &str) -> Anchor {
        node.attributes
            .iter()
            .position(|a| a.name.as_ref().is_some_and(|n| n == name))
            .map_or(Anchor::Node(self.n), |i| Anchor::Attribute(self.n, i))
    }

    /// `name` (default `default`) must be in `[-rank, rank-1]`, or `[-rank, rank]` when
    /// `inclusive` (Flatten).
    fn axis(&mut self, node: &Node, name: &str, default: i64, rank: usize, inclusive: bool) {
        let axis = int(node, name).unwrap_or(default);
        let r = rank as i64;
        let top = if inclusive { r } else { r - 1 };
        if axis < -r || axis > top {
            let at = self.attribute_anchor(node, name);
            let op = self.op;
            self.error(
                "invalid-axis",
                at,
                format!(
                    "{name} = {axis} is out of range for {op} on an input of rank {rank}: it must be in [{}, {top}]",
                    -r
                ),
            );
        }
    }
}

impl Violations<'_, '_> {
    /// [`Violations::axis`] for the versions that judge no negative axis (Flatten and
    /// Concat before version 11): only an axis past the rank fails, and the message says so.
    fn axis_at_most(&mut self, node: &Node, name: &str, default: i64, rank: usize, inclusive: bool) {
        let axis = int(node, name).unwrap_or(default);
        let top = if inclusive { rank as i64 } else { rank as i64 - 1 };
        if axis > top {
            let at = self.attribute_anchor(node, name);
            let op = self.op;
            let message = format!(
                "{name} = {axis} is out of range for {op} on an input of rank {rank}: it must be at most {top} \
                 (this version judges no negative axis)"
            );
            self.error("invalid-axis", at, message);
        }
    }

    /// Input `i` (`what`, for the message), when its rank is known, has a rank in
    /// `[least, most]`.
    fn rank_within(&mut self, i: usize, dims: Option<&[Dimension]>, least: usize, most: usize, what: &str) {
        let Some(rank) = dims.map(<[Dimension]>::len) else { return };
        if (least..=most).contains(&rank) {
            return;
        }
        let op = self.op;
        let wanted = match (least, most) {
            (l, m) if l == m => format!("rank {l}"),
            (l, usize::MAX) => format!("rank {l} or more"),
            (l, m) => format!("a rank from {l} to {m}"),
        };
        let message = format!("{what} of {op} (input {i}) must have {wanted}, it has rank {rank}");
        self.error("input-rank", Anchor::NodeInput(self.n, i), message);
    }

    /// Every value of `list` (the attribute `name`) in `[-rank, rank-1]`, none twice.
    fn axes(&mut self, node: &Node, name: &str, list: &[i64], rank: usize) {
        let r = rank as i64;
        if let Some(&bad) = list.iter().find(|&&a| a < -r || a >= r) {
            let at = self.attribute_anchor(node, name);
            let op = self.op;
            let message = format!(
                "{name} {list:?} holds {bad}, out of range for {op} on an input of rank {rank}: each must be in [{}, {}]",
                -r,
                r - 1
            );
            self.error("invalid-axis", at, message);
        }
    }

    /// Each of `axes` (named `what`, placed at `at`) is in `[-rank, rank-1]`, and, when
    /// `once`, none names an axis twice (onnx's `checkAxesRange`, `checkDuplicateAxes`);
    /// says so and returns `false` otherwise.
    fn axes_once(&mut self, at: Anchor, what: &str, axes: &[i64], rank: usize, once: bool) -> bool {
        let op = self.op;
        let r = rank as i64;
        if let Some(&bad) = axes.iter().find(|&&a| a < -r || a >= r) {
            let message = format!(
                "{what} {axes:?} of {op} hold {bad}, out of range for rank {rank}: each must be in [{}, {}]",
                -r,
                r - 1
            );
            self.error("invalid-axis", at, message);
            return false;
        }
        let mut seen = vec![false; rank];
        for &a in axes.iter().filter(|_| once) {
            let axis = if a < 0 { a + r } else { a } as usize;
            if std::mem::replace(&mut seen[axis], true) {
                self.error("invalid-axis", at, format!("{what} {axes:?} of {op} name axis {axis} more than once"));
                return false;
            }
        }
        true
    }

    /// The list attribute `name` of a convolution or pool has `per_axis` values per spatial
    /// axis of an input of rank `rank`; says so and returns `false` otherwise.
    fn one_per_axis(&mut self, node: &Node, name: &str, list: &[i64], rank: usize, per_axis: usize) -> bool {
        let spatial = rank.saturating_sub(2);
        if list.len() == spatial * per_axis {
            return true;
        }
        let at = self.attribute_anchor(node, name);
        let op = self.op;
        let plural = if list.len() == 1 { "" } else { "s" };
        let message = format!(
            "{name} has {} value{plural}; {op} on an input of rank {rank} ({spatial} spatial axes) needs {}",
            list.len(),
            spatial * per_axis
        );
        self.error("attribute-size", at, message);
        false
    }

    /// Every value of the list attribute `name` is positive (`strictly`) or zero or more;
    /// says so and returns `false` otherwise.
    fn signs(&mut self, node: &Node, name: &str, list: &[i64], strictly: bool) -> bool {
        let at = self.attribute_anchor(node, name);
        self.signs_at(at, name, list, strictly)
    }

    /// [`Self::signs`] of a list placed at `at` (an attribute or a constant input).
    fn signs_at(&mut self, at: Anchor, name: &str, list: &[i64], strictly: bool) -> bool {
        if !list.iter().any(|&x| if strictly { x <= 0 } else { x < 0 }) {
            return true;
        }
        let rule = if strictly { "positive" } else { "zero or more" };
        let code = if matches!(at, Anchor::NodeInput(..)) { "invalid-input-value" } else { "invalid-attribute-value" };
        self.error(code, at, format!("{name} {list:?}: every value must be {rule}"));
        false
    }

    /// The integer attribute `name`, when written, is 1 or more.
    fn positive_int(&mut self, node: &Node, name: &str) {
        if let Some(value) = int(node, name)
            && value <= 0
        {
            let at = self.attribute_anchor(node, name);
            let op = self.op;
            self.error("invalid-attribute-value", at, format!("{name} = {value}: {op} needs a positive {name}"));
        }
    }

    /// The integer attribute `name`, when written, names an element type (0, undefined, only
    /// where it stands for "unset": `zero_unset`), as onnx's propagateElemTypeFromAttributeToOutput
    /// and its checker of the types found judge it.
    fn element_type(&mut self, node: &Node, name: &str, zero_unset: bool) {
        let Some(code) = int(node, name) else { return };
        let known = i32::try_from(code).ok().and_then(crate::ir::DataType::from_code);
        if known.is_none_or(|t| t == crate::ir::DataType::Undefined && !zero_unset) {
            let at = self.attribute_anchor(node, name);
            self.error("invalid-attribute-value", at, format!("{name} = {code} is not an element type"));
        }
    }

    /// A shape input (onnx's getShapeInput) that is not a constant is 1-D when its rank is
    /// known; a constant one is read as its values.
    fn shape_input(&mut self, i: usize, constant: bool, dims: Option<&[Dimension]>) {
        if !constant {
            self.rank_within(i, dims, 1, 1, "the shape");
        }
    }

    /// The string attribute `name`, when written, is one of the spellings
    /// [`crate::schema::choices`] lists for this operator (exactly: the runtime compares case
    /// and all).
    fn one_of(&mut self, node: &Node, name: &str) {
        let Some(allowed) = crate::schema::choices::allowed_strings(self.op, name) else { return };
        let Some(attribute) = node.attribute(name) else { return };
        let Some(AttributeValue::String(value)) = attribute.value() else { return };
        if allowed.iter().any(|a| *value == *a) {
            return;
        }
        let at = self.attribute_anchor(node, name);
        let op = self.op;
        let shown = String::from_utf8_lossy(value.as_bytes());
        self.error(
            "invalid-attribute-value",
            at,
            format!("{name} = \"{shown}\" is not one {op} knows: it must be one of {}", allowed.join(", ")),
        );
    }
}

fn int(node: &Node, name: &str) -> Option<i64> {
    match node.attribute(name)?.value()? {
        AttributeValue::Int(v) => Some(v),
        _ => None,
    }
}

fn ints<'n>(node: &'n Node, name: &str) -> Option<&'n [i64]> {
    match node.attribute(name)?.value()? {
        AttributeValue::Ints(v) => Some(v),
        _ => None,
    }
}

/// Dimensions as a user reads them: sizes, names, `?` where nothing is known.
fn shown(dims: &[Dimension]) -> String {
    let each = dims.iter().map(|d| match &d.value {
        Some(crate::ir::DimValue::Value(v)) => v.to_string(),
        Some(crate::ir::DimValue::Param(p)) => p.to_string(),
        None => "?".to_owned(),
    });
    each.collect::<Vec<_>>().join(", ")
}
