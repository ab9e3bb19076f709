//! The shape operators (the family of [`crate::infer::ops`]'s `shape` module): what onnx's
//! inference functions fail them for (`onnx/defs/tensor/{defs,old}.cc`): axes out of range
//! or named twice, a permutation that is not one, inputs of one rank to concatenate,
//! Reshape's target shape, the lists of Slice, Split's sizes, Tile's repeats, the shape
//! inputs of Expand and ConstantOfShape, and a Constant with one value.

use super::{Judge, Violations, int, ints, overflow};
use crate::diagnostic::Anchor;
use crate::infer::types::known_dim;
use crate::infer::types::normalize_axis;
use crate::ir::{AttributeValue, Dimension, Model, Node};

/// The shape operators' rules, under their keys ([`super::DEFAULT_DOMAIN`]).
pub(super) const VALIDATORS: super::Registrations = &[
    ("Constant", 1, constant),
    ("Cast", 1, cast),
    ("Reshape", 5, reshape),
    ("Concat", 4, concat),
    ("Unsqueeze", 1, unsqueeze),
    ("Squeeze", 1, squeeze),
    ("Transpose", 1, transpose),
    ("Flatten", 1, flatten),
    ("Expand", 8, expand_8),
    ("Expand", 13, expand),
    ("ConstantOfShape", 1, constant_of_shape),
    ("Gather", 1, gather),
    ("Slice", 1, slice_1),
    ("Slice", 10, slice),
    ("Split", 1, split),
    ("Split", 18, split_from_18),
    ("Range", 1, range),
    ("Tile", 6, tile),
    ("CenterCropPad", 1, center_crop_pad),
];

/// Constant: exactly one of `value`, `value_*` and `sparse_value`.
fn constant(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    const VALUES: [&str; 8] = [
        "value",
        "value_float",
        "value_floats",
        "value_int",
        "value_ints",
        "value_string",
        "value_strings",
        "sparse_value",
    ];
    let node = judge.node;
    let given =
        node.attributes.iter().filter(|a| a.name.as_ref().is_some_and(|n| VALUES.iter().any(|k| *n == *k))).count();
    if given != 1 {
        let message = format!("a Constant has exactly one of {}; this one has {given}", VALUES.join(", "));
        v.error("constant-value", Anchor::Node(v.n), message);
    }
}

fn cast(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    v.element_type(judge.node, "to", false);
}

/// Reshape from version 5 (version 1 has the shape as an attribute): the shape input, and
/// its constant target ([`reshape_target`]).
fn reshape(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    let (constant_input, constant_tensor) = (judge.constant, judge.tensor);
    let dims = |i: usize| judge.dims(i);
    v.shape_input(1, constant_tensor(1).is_some(), dims(1));
    if let Some(shape) = constant_input(1) {
        reshape_target(node, &shape, dims(0), v);
    }
}

/// Concat from version 4 (version 1 infers nothing); negative axes from version 11.
fn concat(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, since: since_version, .. } = *judge;
    let dims = &|i: usize| judge.dims(i);
    // As onnx: judged only when every input's shape is known.
    let shapes: Option<Vec<&[Dimension]>> = (0..node.inputs.len()).map(dims).collect();
    let Some(shapes) = shapes.filter(|s| !s.is_empty()) else {
        // onnxruntime judges a negative axis against the first input's rank as soon as that
        // has a shape, whatever the others have (measured: the rank sweep's Concat models
        // with a later input of no shape), and refuses the model when it is out of range.
        if let (true, Some(first), Some(axis)) = (since_version >= 11, dims(0), int(node, "axis"))
            && axis < -(first.len() as i64)
        {
            let rank = first.len();
            let at = v.attribute_anchor(node, "axis");
            let range = match rank {
                0 => "a scalar has no axis".to_owned(),
                _ => format!("it must be in [-{rank}, {}]", rank - 1),
            };
            let message = format!(
                "axis = {axis} is out of range for Concat on a first input of rank {rank}: {range} \
                 (onnxruntime judges it against the first input's rank and refuses the model)"
            );
            v.error("invalid-axis", at, message);
        }
        return;
    };
    let rank = shapes[0].len();
    let Some(written) = int(node, "axis") else {
        return; // a missing required attribute is the checker's finding
    };
    // Before version 11 a negative axis is not judged (onnx only required axis < rank).
    if since_version < 11 {
        if written < 0 {
            return;
        }
        v.axis_at_most(node, "axis", 0, rank, false);
    } else {
        v.axis(node, "axis", 0, rank, false);
    }
    let Some(axis) = int(node, "axis").filter(|&a| a >= -(rank as i64) && a < rank as i64) else { return };
    let axis = if axis < 0 { axis + rank as i64 } else { axis } as usize;
    for (i, shape) in shapes.iter().enumerate().skip(1) {
        if shape.len() != rank {
            let message = format!(
                "all inputs of Concat must have the same rank: input {i} has rank {}, input 0 has rank {rank}",
                shape.len()
            );
            v.error("input-rank", Anchor::NodeInput(v.n, i), message);
            continue;
        }
        for (j, (a, b)) in shapes[0].iter().zip(shape.iter()).enumerate() {
            if j == axis {
                continue;
            }
            if let (Some(x), Some(y)) = (known_dim(a), known_dim(b))
                && x != y
            {
                let message = format!(
                    "input {i} of Concat has {y} in dimension {j} where input 0 has {x}; only the concatenated axis {axis} may differ"
                );
                v.error("incompatible-shapes", Anchor::NodeInput(v.n, i), message);
            }
        }
    }
    // The concatenated axis's length, as onnx sums it over the inputs whose length there
    // is known.
    if shapes.iter().any(|shape| shape.len() != rank) {
        return;
    }
    let mut total = 0i64;
    for (i, shape) in shapes.iter().enumerate() {
        let Some(length) = known_dim(&shape[axis]) else { continue };
        if length < 0 {
            let message =
                format!("input {i} of Concat has the negative length {length} on the concatenated axis {axis}");
            return v.error("negative-dimension", Anchor::NodeInput(v.n, i), message);
        }
        let Some(sum) = total.checked_add(length) else {
            let message = format!("the lengths of Concat's inputs on the concatenated axis {axis} add up past 2^63");
            return v.error("dimension-overflow", Anchor::NodeInput(v.n, i), message);
        };
        total = sum;
    }
}

/// The axes index the output, which has one more dimension per axis.
fn unsqueeze(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, since: since_version, .. } = *judge;
    let constant_input = judge.constant;
    let dims = |i: usize| judge.dims(i);
    let (axes, at) = axes_of(node, since_version >= 13, &constant_input, v);
    if let (Some(d), Some(axes)) = (dims(0), axes) {
        v.axes_once(at, "axes", &axes, d.len() + axes.len(), true);
    }
}

fn squeeze(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, since: since_version, .. } = *judge;
    let constant_input = judge.constant;
    let dims = |i: usize| judge.dims(i);
    let (axes, at) = axes_of(node, since_version >= 13, &constant_input, v);
    if let (Some(d), Some(axes)) = (dims(0), axes)
        && v.axes_once(at, "axes", &axes, d.len(), false)
    {
        squeeze_sizes(&axes, d, v);
    }
}

fn transpose(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    let dims = &|i: usize| judge.dims(i);
    let Some(perm) = ints(node, "perm") else { return };
    // onnxruntime, creating the kernel, refuses a value outside [0, perm's length) (it
    // takes a shorter perm otherwise, and so does onnx's inference) and a value twice,
    // whatever the input's shape.
    if let Some(&p) = perm.iter().find(|&&p| p < 0 || p >= perm.len() as i64) {
        let at = v.attribute_anchor(node, "perm");
        let message = format!("perm {perm:?} holds {p}: a perm of {} values holds 0..{}", perm.len(), perm.len());
        v.error("invalid-attribute-value", at, message);
        return;
    }
    if let Some((i, &p)) = perm.iter().enumerate().find(|&(i, p)| perm[..i].contains(p)) {
        let at = v.attribute_anchor(node, "perm");
        let message = format!("perm {perm:?} holds {p} twice (at {i}): it must be a permutation");
        v.error("invalid-attribute-value", at, message);
        return;
    }
    let Some(d) = dims(0) else { return };
    let rank = d.len() as i64;
    if let Some(&p) = perm.iter().find(|&&p| p >= rank) {
        let at = v.attribute_anchor(node, "perm");
        let message = format!("perm {perm:?} holds {p}, outside [0, {}] for an input of rank {rank}", rank - 1);
        v.error("invalid-attribute-value", at, message);
    }
}

/// Negative axes from version 11; before, only an axis past the rank fails.
fn flatten(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, since: since_version, .. } = *judge;
    let dims = |i: usize| judge.dims(i);
    if let Some(d) = dims(0) {
        if since_version >= 11 {
            v.axis(node, "axis", 1, d.len(), true);
        } else {
            v.axis_at_most(node, "axis", 1, d.len(), true);
        }
    }
}

/// Expand-8: a shape input of rank 1. Both versions judge the shape input once both inputs
/// have shapes.
fn expand_8(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let dims = |i: usize| judge.dims(i);
    if dims(0).is_none() {
        return;
    }
    v.rank_within(1, dims(1), 1, 1, "the shape");
}

/// Expand from version 13: the shape input as onnx's getShapeInput reads it.
fn expand(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let constant_tensor = judge.tensor;
    let dims = |i: usize| judge.dims(i);
    if dims(0).is_none() {
        return;
    }
    v.shape_input(1, constant_tensor(1).is_some(), dims(1));
}

/// onnx's getShapeInput, told to refuse negative sizes; and the `value` attribute.
fn constant_of_shape(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { model, n, node, .. } = *judge;
    let (constant_input, constant_tensor) = (judge.constant, judge.tensor);
    let dims = |i: usize| judge.dims(i);
    constant_of_shape_value(model, node, v);
    v.shape_input(0, constant_tensor(0).is_some(), dims(0));
    if let Some(shape) = constant_input(0) {
        v.signs_at(Anchor::NodeInput(n, 0), "the shape of ConstantOfShape", &shape, false);
    }
}

fn gather(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { n, node, .. } = *judge;
    let dims = |i: usize| judge.dims(i);
    if let (Some(data), Some(_)) = (dims(0), dims(1)) {
        if data.is_empty() {
            v.error("input-rank", Anchor::NodeInput(n, 0), "the data of Gather must have rank 1 or more");
        } else {
            v.axis(node, "axis", 0, data.len(), false);
        }
    }
}

/// Slice version 1: starts, ends and axes are attributes of one length, judged once the
/// input has a shape.
fn slice_1(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    if judge.dims(0).is_none() {
        return;
    }
    if let (Some(starts), Some(ends)) = (ints(node, "starts"), ints(node, "ends")) {
        let axes = ints(node, "axes").filter(|a| a.len() != starts.len());
        if starts.len() != ends.len() {
            let at = v.attribute_anchor(node, "ends");
            let message =
                format!("Slice has {} starts and {} ends: one of each per sliced axis", starts.len(), ends.len());
            v.error("attribute-size", at, message);
        } else if let Some(axes) = axes {
            let at = v.attribute_anchor(node, "axes");
            let message = format!("Slice has {} axes for {} starts: one per sliced axis", axes.len(), starts.len());
            v.error("attribute-size", at, message);
        }
    }
}

/// Slice from version 10, whose lists are inputs ([`slice_lists`]).
fn slice(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    let constant_input = judge.constant;
    let dims = |i: usize| judge.dims(i);
    // onnx judges the lists only when every axes or steps input given is a constant.
    let lists = [1, 2, 3, 4].map(&constant_input);
    if (3..5).all(|i| !node.has_input(i) || lists[i - 1].is_some()) {
        slice_lists(lists, dims(0).map(<[_]>::len), v);
    }
}

/// Split before version 18 ([`split_before_18`]). Every version judges the axis, negative
/// ones included (onnx takes them in Split-2 too, as exporters wrote them).
fn split(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, since: since_version, untyped, .. } = *judge;
    let constant_input = judge.constant;
    let dims = |i: usize| judge.dims(i);
    if let Some(d) = dims(0) {
        v.axis(node, "axis", 0, d.len(), false);
    }
    split_before_18(node, since_version, &dims, &constant_input, &untyped, v);
}

/// Split from version 18 ([`split_18`]), its axis judged as [`split`]'s.
fn split_from_18(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    let constant_input = judge.constant;
    let dims = |i: usize| judge.dims(i);
    if let Some(d) = dims(0) {
        v.axis(node, "axis", 0, d.len(), false);
    }
    split_18(node, dims(0), constant_input(1), v);
}

/// Judged once all three are constants, as onnx does.
fn range(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { model, n, .. } = *judge;
    let constant_tensor = judge.tensor;
    let tensors = [0, 1, 2].map(&constant_tensor);
    if tensors.iter().all(Option::is_some)
        && let Some(i) = tensors.iter().flatten().position(|&t| !model.tensors[t].dims.is_empty())
    {
        let message = format!("input {i} of Range is not a scalar: start, limit and delta are scalars");
        v.error("input-rank", Anchor::NodeInput(n, i), message);
    }
}

/// Tile from version 6: its constant repeats, one per axis.
fn tile(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let n = judge.n;
    let constant_input = judge.constant;
    let constant_rank = |i: usize| judge.constant_rank(i);
    let dims = |i: usize| judge.dims(i);
    if dims(0).is_some()
        && let Some(rank) = constant_rank(1).filter(|&r| r != 1)
    {
        let message = format!("the repeats of Tile must be a 1-D constant, one per axis; it has rank {rank}");
        v.error("input-rank", Anchor::NodeInput(n, 1), message);
    } else if let Some(repeats) = constant_input(1) {
        let before = v.found.len();
        tile_repeats(&repeats, dims(0).map(<[_]>::len), v);
        if let Some(x) = dims(0).filter(|_| v.found.len() == before) {
            overflow::tile(x, &repeats, v);
        }
    }
}

fn center_crop_pad(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { n, node, .. } = *judge;
    let constant_count = |i: usize| judge.constant_count(i);
    let dims = |i: usize| judge.dims(i);
    if let Some(d) = dims(0) {
        let axes = ints(node, "axes");
        let at = v.attribute_anchor(node, "axes");
        if axes.is_none_or(|axes| v.axes_once(at, "axes", axes, d.len(), true))
            && let Some(count) = constant_count(1)
            && count != axes.map_or(d.len(), <[_]>::len) as i64
        {
            let message = format!(
                "CenterCropPad has {count} values in its shape for {} axes: one per axis",
                axes.map_or(d.len(), <[_]>::len)
            );
            v.error("incompatible-shapes", Anchor::NodeInput(n, 1), message);
        }
    }
}

/// ConstantOfShape's `value`: a 1-D tensor (onnx's inference refuses other ranks) of one
/// element (onnxruntime's kernel refuses more).
fn constant_of_shape_value(model: &Model, node: &Node, v: &mut Violations<'_, '_>) {
    let Some(AttributeValue::Tensor(t)) = node.attribute("value").and_then(|a| a.value()) else { return };
    let dims = &model.tensors[t].dims;
    if dims.len() != 1 || dims[0] != 1 {
        let at = v.attribute_anchor(node, "value");
        let message =
            format!("the value of ConstantOfShape has dims {dims:?}; it must be a 1-D tensor of one element, dims [1]");
        v.error("invalid-attribute-value", at, message);
    }
}

/// Reshape's constant target shape: one `-1` at most, no value below it, a `0` (copy the
/// input's dimension, unless `allowzero`) only where the input has a dimension, and not
/// both `0` and `-1` under `allowzero`; and a `-1` that the input's size can fill
/// ([`minus_one_fits`]).
fn reshape_target(node: &Node, shape: &[i64], input: Option<&[Dimension]>, v: &mut Violations<'_, '_>) {
    let at = Anchor::NodeInput(v.n, 1);
    let allow_zero = int(node, "allowzero").unwrap_or(0) != 0;
    let input_rank = input.map(<[_]>::len);
    let message = if shape.iter().filter(|&&d| d == -1).count() > 1 {
        format!("the target shape {shape:?} of Reshape has more than one -1")
    } else if let Some(&bad) = shape.iter().find(|&&d| d < -1) {
        format!("the target shape {shape:?} of Reshape holds {bad}: a dimension is -1 (inferred), 0 or positive")
    } else if let (false, Some(rank), Some(at)) = (allow_zero, input_rank, shape.iter().rposition(|&d| d == 0))
        && at >= rank
    {
        format!(
            "the target shape {shape:?} of Reshape copies dimension {at} (a 0 there), which the input of rank {rank} does not have"
        )
    } else if allow_zero && shape.contains(&0) && shape.contains(&-1) {
        format!("the target shape {shape:?} of Reshape has both 0 and -1 under allowzero: the -1 cannot be inferred")
    } else if reshape_overflows(shape, input, allow_zero) {
        let message = format!(
            "the target shape {shape:?} of Reshape, or the input's dimensions it is measured against, multiply past 2^63"
        );
        return v.error("dimension-overflow", at, message);
    } else if let Some(message) = minus_one_fits(shape, input, allow_zero) {
        message
    } else {
        return;
    };
    v.error("invalid-input-value", at, message);
}

/// Whether onnx's Reshape inference overflows 64 bits: multiplying the target's dimensions
/// ([`target_product`]), and, when the target has a -1, the input's ([`input_size`]).
fn reshape_overflows(shape: &[i64], input: Option<&[Dimension]>, allow_zero: bool) -> bool {
    let Some(product) = target_product(shape, input, allow_zero) else { return true };
    shape.contains(&-1) && product != 0 && input.is_some_and(|d| input_size(shape, d, allow_zero).is_none())
}

/// When the target `shape` has a `-1`: the rest of the target must not hold no elements,
/// and, where the input's size is known (every dimension, apart from those a `0` copies),
/// that size must be a multiple of the rest, as onnx's Reshape inference requires.
fn minus_one_fits(shape: &[i64], input: Option<&[Dimension]>, allow_zero: bool) -> Option<String> {
    if !shape.contains(&-1) {
        return None;
    }
    let rest = target_product(shape, input, allow_zero)?;
    if rest == 0 {
        return Some(format!(
            "the target shape {shape:?} of Reshape leaves no elements beside its -1, which then cannot be inferred"
        ));
    }
    let size = input_size(shape, input?, allow_zero)??;
    (size % rest != 0).then(|| {
        format!(
            "the target shape {shape:?} of Reshape cannot hold the input's {size} elements: they are not a multiple of the {rest} the other dimensions make"
        )
    })
}

/// The product of Reshape's target dimensions but its -1s, as onnx's inference multiplies
/// them: a 0 counts as the input dimension it copies (and is skipped when that is not
/// known), or as 0 under `allowzero`. `None` past 2^63.
fn target_product(shape: &[i64], input: Option<&[Dimension]>, allow_zero: bool) -> Option<i64> {
    let mut product = 1i64;
    for (i, &d) in shape.iter().enumerate() {
        let factor = match d {
            0 if !allow_zero => match input.and_then(|x| x.get(i)).and_then(known_dim) {
                Some(copied) => copied,
                None => continue,
            },
            d if d >= 0 => d,
            _ => continue,
        };
        product = product.checked_mul(factor)?;
    }
    Some(product)
}

/// The input's size as onnx's Reshape inference multiplies it, skipping the unknown
/// dimensions a 0 of the target copies: `Some(None)` when another dimension is not known
/// (onnx stops there), `None` past 2^63.
fn input_size(shape: &[i64], input: &[Dimension], allow_zero: bool) -> Option<Option<i64>> {
    let mut size = 1i64;
    for (i, d) in input.iter().enumerate() {
        match known_dim(d) {
            Some(x) => size = size.checked_mul(x)?,
            None if !allow_zero && shape.get(i) == Some(&0) => {}
            None => return Some(None),
        }
    }
    Some(Some(size))
}

/// Slice's constant starts, ends, axes and steps (`lists`, in input order): onnx judges
/// them once starts and ends are constants: one length for all, no step of 0; and, once the
/// data's rank is known, axes (given, or `0..` one per start) in range and none twice.
fn slice_lists(lists: [Option<Vec<i64>>; 4], rank: Option<usize>, v: &mut Violations<'_, '_>) {
    let [Some(starts), Some(_), ..] = &lists else { return };
    for (i, what) in [(1, "ends"), (2, "axes"), (3, "steps")] {
        if let Some(other) = &lists[i]
            && other.len() != starts.len()
        {
            let message =
                format!("Slice has {} starts but {} {what}: they go one per sliced axis", starts.len(), other.len());
            v.error("incompatible-shapes", Anchor::NodeInput(v.n, i + 1), message);
            return;
        }
    }
    if let Some(rank) = rank {
        let axes = lists[2].clone().unwrap_or_else(|| (0..starts.len() as i64).collect());
        // The axes input, or the starts when the axes are implied.
        let at = Anchor::NodeInput(v.n, if lists[2].is_some() { 3 } else { 1 });
        if lists[2].is_none() && starts.len() > rank {
            let message = format!(
                "Slice has {} starts, one per axis from 0 when no axes are given, but the data has rank {rank}",
                starts.len()
            );
            v.error("invalid-axis", at, message);
            return;
        }
        if !v.axes_once(at, "axes", &axes, rank, true) {
            return;
        }
    }
    if let Some(steps) = &lists[3]
        && steps.contains(&0)
    {
        v.error("invalid-input-value", Anchor::NodeInput(v.n, 4), format!("Slice's steps {steps:?} hold 0"));
    }
}

/// Split-18 sizes its outputs from the `split` input or the `num_outputs` attribute, one
/// of them; judged, as onnx judges it, once the split dimension's size is known.
fn split_18(node: &Node, input: Option<&[Dimension]>, split: Option<Vec<i64>>, v: &mut Violations<'_, '_>) {
    let Some(d) = input else { return };
    let Some(axis) = normalize_axis(int(node, "axis").unwrap_or(0), d.len()) else { return };
    let Some(size) = known_dim(&d[axis]) else { return };
    let has_split = node.has_input(1);
    let num_outputs = int(node, "num_outputs");
    let outputs = node.outputs.len();
    match (has_split, num_outputs) {
        (true, Some(_)) => {
            let at = v.attribute_anchor(node, "num_outputs");
            v.error("invalid-attribute-value", at, "Split has both the split input and num_outputs: give one");
        }
        (true, None) => {
            let Some(split) = split else { return };
            let at = Anchor::NodeInput(v.n, 1);
            if split.len() != outputs {
                let message = format!("Split's split {split:?} has {} sizes for {outputs} outputs", split.len());
                v.error("incompatible-shapes", at, message);
            } else if split.iter().sum::<i64>() != size {
                let message =
                    format!("Split's split {split:?} sums to {}, the split axis has {size}", split.iter().sum::<i64>());
                v.error("incompatible-shapes", at, message);
            }
        }
        (false, Some(count)) if count < 1 => {
            let at = v.attribute_anchor(node, "num_outputs");
            v.error("invalid-attribute-value", at, format!("num_outputs = {count}: Split makes at least 1 output"));
        }
        (false, Some(_)) => {}
        (false, None) => {
            let message = "Split (version 18 on) needs the split input or the num_outputs attribute";
            v.error("missing-required-attribute", Anchor::Node(v.n), message);
        }
    }
}

/// Split before version 18: the sizes (the `split` attribute, an input from version 13)
/// one per output and summing to the split axis's known size; without sizes, an axis that
/// the outputs divide evenly.
fn split_before_18<'d>(
    node: &Node,
    since_version: i64,
    dims: &impl Fn(usize) -> Option<&'d [Dimension]>,
    constant_input: &impl Fn(usize) -> Option<Vec<i64>>,
    untyped: &impl Fn(usize) -> bool,
    v: &mut Violations<'_, '_>,
) {
    let Some(x) = dims(0) else { return };
    let Some(axis) = normalize_axis(int(node, "axis").unwrap_or(0), x.len()) else { return };
    let Some(size) = known_dim(&x[axis]) else { return };
    let outputs = node.outputs.len() as i64;
    // Version 13 asks the input's type to tell whether it is given.
    let given_input = since_version >= 13 && node.has_input(1) && !untyped(1);
    let (split, at) = if given_input {
        match constant_input(1) {
            Some(split) => (Some(split), Anchor::NodeInput(v.n, 1)),
            // Sizes that are not a constant are not judged.
            None => return,
        }
    } else {
        (ints(node, "split").filter(|s| !s.is_empty()).map(<[_]>::to_vec), v.attribute_anchor(node, "split"))
    };
    let message = match split {
        Some(split) if split.len() as i64 != outputs => {
            format!("Split has {} sizes in split {split:?} for {outputs} outputs: one per output", split.len())
        }
        Some(split) if split.iter().sum::<i64>() != size => {
            format!("the sizes {split:?} of Split sum to {}, but axis {axis} has {size}", split.iter().sum::<i64>())
        }
        None if outputs > 0 && size % outputs != 0 && since_version >= 13 && node.has_input(1) => format!(
            "Split cannot cut axis {axis} of size {size} into {outputs} equal parts, and onnx's inference holds its \
             split input absent, having no type for it: declare its type in the branches' outputs"
        ),
        None if outputs > 0 && size % outputs != 0 => {
            format!("Split cannot cut axis {axis} of size {size} into {outputs} equal parts; give the sizes")
        }
        _ => return,
    };
    v.error("incompatible-shapes", at, message);
}

/// Squeeze removes only dimensions of size 1.
fn squeeze_sizes(axes: &[i64], dims: &[Dimension], v: &mut Violations<'_, '_>) {
    for &axis in axes {
        let Some(a) = normalize_axis(axis, dims.len()) else { continue };
        if let Some(size) = known_dim(&dims[a])
            && size != 1
        {
            let message = format!("Squeeze removes axis {axis}, whose size is {size}, not 1");
            v.error("incompatible-shapes", Anchor::NodeInput(v.n, 0), message);
            return;
        }
    }
}

/// The axes of Squeeze and Unsqueeze: the constant input from version 13 on, the attribute
/// before; with the place to report them at.
fn axes_of(
    node: &Node,
    from_input: bool,
    constant_input: &impl Fn(usize) -> Option<Vec<i64>>,
    v: &Violations<'_, '_>,
) -> (Option<Vec<i64>>, Anchor) {
    if from_input {
        (constant_input(1), Anchor::NodeInput(v.n, 1))
    } else {
        (ints(node, "axes").map(<[_]>::to_vec), v.attribute_anchor(node, "axes"))
    }
}

/// Tile's constant repeats: one per input dimension, none negative.
fn tile_repeats(repeats: &[i64], rank: Option<usize>, v: &mut Violations<'_, '_>) {
    let at = Anchor::NodeInput(v.n, 1);
    if let Some(rank) = rank
        && repeats.len() != rank
    {
        let message = format!("Tile's repeats {repeats:?} hold {} values for an input of rank {rank}", repeats.len());
        v.error("incompatible-shapes", at, message);
    } else if let Some(&bad) = repeats.iter().find(|&&r| r < 0) {
        v.error("invalid-input-value", at, format!("Tile's repeats {repeats:?} hold {bad}, below 0"));
    }
}
