//! How a node crosses one version of its operator, up and down: one list, keyed by
//! (operator, since-version), which the operator table gathers under each operator's key
//! (`Operator::opset_step`). A step exists where a version changed what a node means or
//! how it is written; where only the types or a defaulted attribute changed, the
//! conversion's judgement against the target schema (`super::judge`) is all that is needed.
//!
//! `up` takes a node written for the version before `since` to `since`; `down` takes it
//! back. Either returns the reason it cannot.

use super::Site;
use crate::ir::{Attribute, AttributeType, DataType, Node, Str, Tensor};

/// A node's rewrite across one version.
pub type Adapt = fn(&mut Site) -> Result<(), String>;

#[derive(Clone, Copy)]
pub struct Step {
    pub up: Adapt,
    pub down: Adapt,
}

impl std::fmt::Debug for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Step")
    }
}

const fn step(up: Adapt, down: Adapt) -> Step {
    Step { up, down }
}

fn nothing(_: &mut Site) -> Result<(), String> {
    Ok(())
}

/// The steps of `op` of the default domain by since-version, for the operator table.
pub fn steps_of(domain: &str, op: &str) -> Vec<(i64, Step)> {
    if !domain.is_empty() {
        return Vec::new();
    }
    STEPS.iter().filter(|(o, _, _)| *o == op).map(|(_, s, step)| (*s, *step)).collect()
}

const LEGACY_BROADCAST: Step = step(broadcast_up, broadcast_down);
const CONSUMED_INPUTS: Step = step(drop_consumed_inputs, nothing);
const NEGATIVE_AXIS: Step = step(nothing, normalize_axis);
const NEGATIVE_AXES: Step = step(nothing, normalize_axes);
const SOFTMAX_13: Step = step(softmax_up, softmax_down);
const REDUCE_AXES: Step = step(reduce_up, reduce_down);

pub const STEPS: &[(&str, i64, Step)] = &[
    // Opset 6 dropped `consumed_inputs` (a legacy optimisation hint) everywhere.
    ("Abs", 6, CONSUMED_INPUTS),
    ("Add", 6, CONSUMED_INPUTS),
    ("BatchNormalization", 6, CONSUMED_INPUTS),
    ("Ceil", 6, CONSUMED_INPUTS),
    ("Clip", 6, CONSUMED_INPUTS),
    ("Div", 6, CONSUMED_INPUTS),
    ("Dropout", 6, CONSUMED_INPUTS),
    ("Elu", 6, CONSUMED_INPUTS),
    ("Exp", 6, CONSUMED_INPUTS),
    ("Floor", 6, CONSUMED_INPUTS),
    ("HardSigmoid", 6, CONSUMED_INPUTS),
    ("InstanceNormalization", 6, CONSUMED_INPUTS),
    ("LeakyRelu", 6, CONSUMED_INPUTS),
    ("Log", 6, CONSUMED_INPUTS),
    ("Max", 6, CONSUMED_INPUTS),
    ("Mean", 6, CONSUMED_INPUTS),
    ("Min", 6, CONSUMED_INPUTS),
    ("Mul", 6, CONSUMED_INPUTS),
    ("Neg", 6, CONSUMED_INPUTS),
    ("PRelu", 6, CONSUMED_INPUTS),
    ("Reciprocal", 6, CONSUMED_INPUTS),
    ("Relu", 6, CONSUMED_INPUTS),
    ("Selu", 6, CONSUMED_INPUTS),
    ("Sigmoid", 6, CONSUMED_INPUTS),
    ("Sqrt", 6, CONSUMED_INPUTS),
    ("Sub", 6, CONSUMED_INPUTS),
    ("Sum", 6, CONSUMED_INPUTS),
    ("Tanh", 6, CONSUMED_INPUTS),
    ("Reshape", 5, step(reshape_up, reshape_down)),
    // Opset 7: numpy broadcasting replaced the `broadcast` and `axis` attributes.
    ("Add", 7, LEGACY_BROADCAST),
    ("Sub", 7, LEGACY_BROADCAST),
    ("Mul", 7, LEGACY_BROADCAST),
    ("Div", 7, LEGACY_BROADCAST),
    ("Pow", 7, LEGACY_BROADCAST),
    ("And", 7, LEGACY_BROADCAST),
    ("Or", 7, LEGACY_BROADCAST),
    ("Xor", 7, LEGACY_BROADCAST),
    ("Equal", 7, LEGACY_BROADCAST),
    ("Greater", 7, LEGACY_BROADCAST),
    ("Less", 7, LEGACY_BROADCAST),
    ("Gemm", 7, step(gemm_up, gemm_down)),
    ("Gemm", 11, step(nothing, gemm_bias_down)),
    ("BatchNormalization", 7, step(drop_is_test, set_is_test)),
    ("Dropout", 7, step(drop_is_test, set_is_test)),
    ("Upsample", 9, step(upsample_scales_up, upsample_scales_down)),
    ("Scan", 9, step(scan_up, scan_down)),
    // Opset 10: Slice and TopK take their bounds as inputs; Upsample became Resize.
    ("Slice", 10, step(slice_up, slice_down)),
    ("TopK", 10, step(topk_up, topk_down)),
    ("Upsample", 10, step(upsample_to_resize, nothing)),
    ("Resize", 10, step(nothing, resize_to_upsample)),
    // Opset 11: negative axes everywhere, Clip and Pad take their bounds as inputs, Resize
    // its coordinate modes, Scatter became ScatterElements.
    ("ArgMax", 11, NEGATIVE_AXIS),
    ("ArgMin", 11, NEGATIVE_AXIS),
    ("Compress", 11, NEGATIVE_AXIS),
    ("Concat", 11, NEGATIVE_AXIS),
    ("Flatten", 11, NEGATIVE_AXIS),
    ("Gather", 11, step(nothing, gather_down)),
    ("Hardmax", 11, NEGATIVE_AXIS),
    ("LogSoftmax", 11, NEGATIVE_AXIS),
    ("OneHot", 11, NEGATIVE_AXIS),
    ("Softmax", 11, NEGATIVE_AXIS),
    ("Split", 11, NEGATIVE_AXIS),
    ("TopK", 11, NEGATIVE_AXIS),
    ("ReduceL1", 11, NEGATIVE_AXES),
    ("ReduceL2", 11, NEGATIVE_AXES),
    ("ReduceLogSum", 11, NEGATIVE_AXES),
    ("ReduceLogSumExp", 11, NEGATIVE_AXES),
    ("ReduceMax", 11, NEGATIVE_AXES),
    ("ReduceMean", 11, NEGATIVE_AXES),
    ("ReduceMin", 11, NEGATIVE_AXES),
    ("ReduceProd", 11, NEGATIVE_AXES),
    ("ReduceSum", 11, NEGATIVE_AXES),
    ("ReduceSumSquare", 11, NEGATIVE_AXES),
    ("Squeeze", 11, NEGATIVE_AXES),
    ("Unsqueeze", 11, step(nothing, unsqueeze_axes_down)),
    ("Slice", 11, step(nothing, slice_axes_down)),
    ("Clip", 11, step(clip_up, clip_down)),
    ("Pad", 11, step(pad_up, pad_down)),
    ("Resize", 11, step(resize_11_up, resize_11_down)),
    ("Scatter", 11, step(scatter_to_elements, nothing)),
    ("ScatterElements", 11, step(nothing, elements_to_scatter)),
    ("Dropout", 12, step(dropout_up, dropout_down)),
    // Opset 13: Softmax's family normalises along one axis; attributes became inputs.
    ("Softmax", 13, SOFTMAX_13),
    ("LogSoftmax", 13, SOFTMAX_13),
    ("Hardmax", 13, SOFTMAX_13),
    ("Split", 13, step(split_up, split_down)),
    ("Squeeze", 13, step(axes_up, axes_down)),
    ("Unsqueeze", 13, step(axes_up, axes_down)),
    ("ReduceSum", 13, REDUCE_AXES),
    ("Resize", 13, step(nothing, resize_13_down)),
    ("Reshape", 14, step(nothing, reshape_allowzero_down)),
    ("Shape", 15, step(nothing, shape_range_down)),
    ("QuantizeLinear", 13, step(nothing, per_tensor_down)),
    ("DequantizeLinear", 13, step(nothing, per_tensor_down)),
    ("RoiAlign", 16, step(roi_align_up, roi_align_down)),
    // Opset 18: the other reductions take their axes as an input.
    ("ReduceL1", 18, REDUCE_AXES),
    ("ReduceL2", 18, REDUCE_AXES),
    ("ReduceLogSum", 18, REDUCE_AXES),
    ("ReduceLogSumExp", 18, REDUCE_AXES),
    ("ReduceMax", 18, REDUCE_AXES),
    ("ReduceMean", 18, REDUCE_AXES),
    ("ReduceMin", 18, REDUCE_AXES),
    ("ReduceProd", 18, REDUCE_AXES),
    ("ReduceSumSquare", 18, REDUCE_AXES),
    ("Split", 18, step(split_18_up, split_18_down)),
    ("ScatterElements", 18, step(nothing, scatter_reduction_down)),
    ("ScatterND", 18, step(nothing, scatter_reduction_down)),
    ("Pad", 19, step(nothing, pad_wrap_down)),
    ("Resize", 19, step(nothing, resize_19_down)),
    ("GridSample", 20, step(grid_sample_up, grid_sample_down)),
    ("DFT", 20, step(dft_up, dft_down)),
    // Operators the target predates, expanded into what they compute (operators with a
    // static function body are expanded from it without a step here).
    ("LayerNormalization", 17, step(nothing, super::expand::layer_normalization)),
    ("Gelu", 20, step(nothing, super::expand::gelu)),
    ("CastLike", 15, step(nothing, super::expand::cast_like)),
    ("Celu", 12, step(nothing, super::expand::celu)),
    ("RMSNormalization", 23, step(nothing, super::expand::rms_normalization)),
    ("GroupNormalization", 21, step(group_norm_up, group_norm_down)),
];

// ---------------------------------------------------------------------------------------
// Constants: attributes that became inputs, and back.

/// How an attribute's value is written as an input.
#[derive(Clone, Copy)]
enum Operand {
    /// A 1-D int64 tensor of the attribute's integers.
    Ints,
    /// A 1-D int64 tensor of one integer (TopK's `k`).
    IntAsList,
    /// A scalar int64 (DFT's `axis`).
    Int,
    /// A scalar of the node's first input's type (Clip's bounds, Pad's value).
    ScalarLikeInput,
    /// A scalar float (Dropout's ratio).
    Float,
    /// A 1-D float tensor (Upsample's scales).
    Floats,
}

pub(super) fn tensor_of(dt: DataType, dims: Vec<i64>, values: &[f64]) -> Option<Tensor> {
    let raw: Vec<u8> = match dt {
        DataType::Float => values.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect(),
        DataType::Double => values.iter().flat_map(|&v| v.to_le_bytes()).collect(),
        DataType::Float16 => values.iter().flat_map(|&v| half::f16::from_f64(v).to_le_bytes()).collect(),
        DataType::Bfloat16 => values.iter().flat_map(|&v| half::bf16::from_f64(v).to_le_bytes()).collect(),
        DataType::Int64 => values.iter().flat_map(|&v| (v as i64).to_le_bytes()).collect(),
        DataType::Int32 => values.iter().flat_map(|&v| (v as i32).to_le_bytes()).collect(),
        DataType::Int16 => values.iter().flat_map(|&v| (v as i16).to_le_bytes()).collect(),
        DataType::Int8 => values.iter().flat_map(|&v| (v as i8).to_le_bytes()).collect(),
        DataType::Uint8 => values.iter().flat_map(|&v| (v as u8).to_le_bytes()).collect(),
        DataType::Uint16 => values.iter().flat_map(|&v| (v as u16).to_le_bytes()).collect(),
        DataType::Uint32 => values.iter().flat_map(|&v| (v as u32).to_le_bytes()).collect(),
        DataType::Uint64 => values.iter().flat_map(|&v| (v as u64).to_le_bytes()).collect(),
        _ => return None,
    };
    Some(Tensor { dims, data_type: Some(dt.code()), raw_data: Some(raw.into()), ..Tensor::default() })
}

fn int64s(values: &[i64]) -> Tensor {
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let dims = vec![values.len() as i64];
    Tensor { dims, data_type: Some(DataType::Int64.code()), raw_data: Some(raw.into()), ..Tensor::default() }
}

/// Moves attribute `name` of the node to input `index` as a constant; nothing when the node
/// does not set it (the input stays omitted, which means the same).
fn attribute_to_input(site: &mut Site, name: &str, index: usize, operand: Operand) -> Result<(), String> {
    let Some(attribute) = site.take(name) else { return Ok(()) };
    let ints = || -> Vec<i64> {
        match attribute.value() {
            Some(crate::ir::AttributeValue::Ints(v)) => v.to_vec(),
            Some(crate::ir::AttributeValue::Int(v)) => vec![v],
            _ => Vec::new(),
        }
    };
    let floats = || -> Vec<f64> {
        match attribute.value() {
            Some(crate::ir::AttributeValue::Floats(v)) => v.iter().map(|&f| f64::from(f)).collect(),
            Some(crate::ir::AttributeValue::Float(v)) => vec![f64::from(v)],
            _ => Vec::new(),
        }
    };
    let tensor = match operand {
        Operand::Ints | Operand::IntAsList => int64s(&ints()),
        Operand::Int => {
            let mut t = int64s(&ints());
            t.dims.clear();
            t
        }
        Operand::Float => tensor_of(DataType::Float, Vec::new(), &floats()).ok_or("no float")?,
        Operand::Floats => {
            let values = floats();
            tensor_of(DataType::Float, vec![values.len() as i64], &values).ok_or("no float")?
        }
        Operand::ScalarLikeInput => {
            let dt = site.elem_type(0).ok_or_else(|| {
                format!("its {name} becomes an input of its first input's type, which inference does not know")
            })?;
            tensor_of(dt, Vec::new(), &floats()).ok_or_else(|| format!("its {name} cannot be written as {dt:?}"))?
        }
    };
    let constant = site.constant(name, tensor);
    site.set_input(index, constant);
    Ok(())
}

/// Moves constant input `index` of the node to attribute `name`; nothing when the input is
/// omitted.
fn input_to_attribute(site: &mut Site, name: &str, index: usize, operand: Operand) -> Result<(), String> {
    if site.input(index).is_none() {
        return Ok(());
    }
    let mut a = Attribute { name: Some(Str::from(name)), ..Attribute::default() };
    match operand {
        Operand::Ints => {
            a.ints = site.constant_ints(index, name)?;
            a.ty = Some(AttributeType::Ints as i32);
        }
        Operand::IntAsList | Operand::Int => {
            let values = site.constant_ints(index, name)?;
            let [v] = values[..] else { return Err(format!("its {name} input holds {} values", values.len())) };
            a.i = Some(v);
            a.ty = Some(AttributeType::Int as i32);
        }
        Operand::Float | Operand::ScalarLikeInput => {
            let values = site.constant_floats(index, name)?;
            let [v] = values[..] else { return Err(format!("its {name} input holds {} values", values.len())) };
            a.f = Some(v as f32);
            a.ty = Some(AttributeType::Float as i32);
        }
        Operand::Floats => {
            a.floats = site.constant_floats(index, name)?.into_iter().map(|v| v as f32).collect();
            a.ty = Some(AttributeType::Floats as i32);
        }
    }
    site.detach(index);
    site.set(a);
    Ok(())
}

pub(super) fn int_attribute(name: &str, v: i64) -> Attribute {
    Attribute { name: Some(Str::from(name)), ty: Some(AttributeType::Int as i32), i: Some(v), ..Attribute::default() }
}

pub(super) fn ints_attribute(name: &str, v: Vec<i64>) -> Attribute {
    Attribute { name: Some(Str::from(name)), ty: Some(AttributeType::Ints as i32), ints: v, ..Attribute::default() }
}

fn string_attribute(name: &str, v: &str) -> Attribute {
    Attribute {
        name: Some(Str::from(name)),
        ty: Some(AttributeType::String as i32),
        s: Some(Str::from(v)),
        ..Attribute::default()
    }
}

/// Refuses when string attribute `name` holds one of `values`, which the version before
/// does not have.
fn refuse_values(site: &Site, name: &str, values: &[&str]) -> Result<(), String> {
    match site.string(name) {
        Some(v) if values.contains(&v.as_str()) => Err(format!("its {name} '{v}' does not exist at opset {}", site.to)),
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------
// Legacy (before 7).

fn drop_consumed_inputs(site: &mut Site) -> Result<(), String> {
    site.take("consumed_inputs");
    Ok(())
}

fn drop_is_test(site: &mut Site) -> Result<(), String> {
    site.take("is_test");
    Ok(())
}

/// Before 7 a node in inference runs with `is_test` set.
fn set_is_test(site: &mut Site) -> Result<(), String> {
    site.set(int_attribute("is_test", 1));
    Ok(())
}

fn reshape_up(site: &mut Site) -> Result<(), String> {
    site.take("consumed_inputs");
    attribute_to_input(site, "shape", 1, Operand::Ints)
}

fn reshape_down(site: &mut Site) -> Result<(), String> {
    input_to_attribute(site, "shape", 1, Operand::Ints)
}

/// Before 7 a binary operator broadcast only with `broadcast` set, B's shape matching a
/// contiguous run of A's dimensions starting at `axis` (by default A's last ones): the
/// case numpy broadcasting covers is the default axis.
fn broadcast_up(site: &mut Site) -> Result<(), String> {
    let broadcast = site.int("broadcast").unwrap_or(0);
    let axis = site.int("axis");
    if broadcast != 0
        && let Some(axis) = axis
    {
        let (a, b) = (site.rank(0), site.rank(1));
        let suffix = matches!((a, b), (Some(a), Some(b)) if axis == a as i64 - b as i64 || axis == -(b as i64));
        if !suffix {
            return Err(format!("it broadcasts its second input from axis {axis}, which numpy broadcasting does not"));
        }
    }
    site.take("broadcast");
    site.take("axis");
    Ok(())
}

fn broadcast_down(site: &mut Site) -> Result<(), String> {
    let same = |s: &Site| -> Option<bool> {
        let a: Vec<Option<i64>> = (0..s.rank(0)?).map(|k| s.dim(0, k)).collect();
        let b: Vec<Option<i64>> = (0..s.rank(1)?).map(|k| s.dim(1, k)).collect();
        if a == b && a.iter().all(Option::is_some) {
            return Some(true);
        }
        // B's dimensions a suffix of A's: the old broadcast.
        let suffix = b.len() <= a.len() && a[a.len() - b.len()..] == b[..] && b.iter().all(Option::is_some);
        suffix.then_some(false)
    };
    match same(site) {
        Some(true) => Ok(()),
        Some(false) => {
            site.set(int_attribute("broadcast", 1));
            Ok(())
        }
        None => Err(format!(
            "before opset 7 its inputs broadcast only when the second's shape ends the first's, and inference cannot show that here (opset {})",
            site.to
        )),
    }
}

/// `allowzero` (new in 14) only changes what a 0 in the shape means: a size of 0, where
/// before 14 a 0 copies the input's size. With a constant shape holding none, the node means
/// the same without it (PyTorch's dynamo exporter sets it on every Reshape). With a computed
/// shape, each 0 becomes a -1: a shape with one 0 asks for an empty tensor, whose missing
/// size a -1 infers as 0 just the same; one with two (no valid -1 can stand for both) fails
/// at run time instead of silently copying a size.
fn reshape_allowzero_down(site: &mut Site) -> Result<(), String> {
    if site.int("allowzero").unwrap_or(0) == 0 {
        return Ok(());
    }
    match site.constant_ints(1, "shape") {
        Ok(shape) if !shape.contains(&0) => {
            site.take("allowzero");
            Ok(())
        }
        Ok(_) => Err("it sets allowzero with a 0 in its shape, which Reshape before 14 reads as 'copy'".to_owned()),
        Err(_) => {
            let shape = site.input(1).ok_or("it has no shape input")?;
            let zero = site.scalar("zero", DataType::Int64, 0.0)?;
            let minus_one = site.scalar("minus_one", DataType::Int64, -1.0)?;
            let stem = site.stem();
            let is_zero = site.fresh(&format!("{stem}_zero_sizes"));
            let fixed = site.fresh(&format!("{stem}_shape"));
            site.before.push(simple_node("Equal", &[shape.clone(), zero], &is_zero, Vec::new()));
            site.before.push(simple_node("Where", &[is_zero, minus_one, shape], &fixed, Vec::new()));
            site.set_input(1, fixed);
            site.take("allowzero");
            Ok(())
        }
    }
}

/// Shape-15 may keep only part of the shape (`start`, `end`): before, a Slice of the whole
/// shape does it.
fn shape_range_down(site: &mut Site) -> Result<(), String> {
    let start = site.take("start").and_then(|a| a.i).unwrap_or(0);
    let end = site.take("end").and_then(|a| a.i);
    if start == 0 && end.is_none() {
        return Ok(());
    }
    let output = site.node().outputs.first().cloned().ok_or("it has no output")?;
    let whole = site.fresh(&format!("{}_whole", site.stem()));
    site.node_mut().outputs[0] = whole.clone();
    let starts = site.constant("start", int64s(&[start]));
    let ends = site.constant("end", int64s(&[end.unwrap_or(i64::MAX)]));
    site.after.push(simple_node("Slice", &[whole, starts, ends], &output, Vec::new()));
    Ok(())
}

/// QuantizeLinear and DequantizeLinear quantize per tensor before 13: the `axis` that 13
/// added says nothing when the scale is one value.
fn per_tensor_down(site: &mut Site) -> Result<(), String> {
    if site.node().attribute("axis").is_none() {
        return Ok(());
    }
    let one_value = match site.input(1).map(|_| site.constant_floats(1, "scale")) {
        Some(Ok(scale)) => scale.len() == 1,
        _ => site.rank(1) == Some(0) || (site.rank(1) == Some(1) && site.dim(1, 0) == Some(1)),
    };
    if !one_value {
        return Err("it quantizes per axis, and before 13 only per tensor".to_owned());
    }
    site.take("axis");
    Ok(())
}

/// Gemm's C is optional from 11: before, a zero that broadcasts stands for none.
fn gemm_bias_down(site: &mut Site) -> Result<(), String> {
    if site.input(2).is_some() {
        return Ok(());
    }
    let dt = site.elem_type(0).ok_or("it has no C, and the element type of a zero for it is not known")?;
    let zero = site.constant("C", tensor_of(dt, Vec::new(), &[0.0]).ok_or("no zero of its element type")?);
    site.set_input(2, zero);
    Ok(())
}

fn gemm_up(site: &mut Site) -> Result<(), String> {
    site.take("broadcast");
    Ok(())
}

fn gemm_down(site: &mut Site) -> Result<(), String> {
    site.set(int_attribute("broadcast", 1));
    Ok(())
}

/// Scan-8 scans a batch: every input and output has a batch axis first, and a
/// `sequence_lens` input may stop items early; Scan-9 has neither. With no lengths given and
/// a batch of one, the batch axis is squeezed off before and restored after.
fn scan_up(site: &mut Site) -> Result<(), String> {
    if site.input(0).is_some() {
        return Err("it is given sequence_lens, which Scan-9 does not have".to_owned());
    }
    let inputs: Vec<Str> = site.node().inputs.iter().skip(1).cloned().collect();
    for (i, name) in inputs.iter().enumerate() {
        if site.dim(i + 1, 0) != Some(1) {
            return Err(format!("its input '{name}' may hold a batch of more than one, which Scan-9 cannot scan"));
        }
    }
    let (squeezed, items) = around_scan(site, &inputs, ("Squeeze", "item"), ("Unsqueeze", "item"));
    site.node_mut().inputs = squeezed.into_iter().collect();
    site.node_mut().outputs = items.into_iter().collect();
    if let Some(mut directions) = site.take("directions") {
        directions.name = Some(Str::from("scan_input_directions"));
        site.set(directions);
    }
    Ok(())
}

/// Each of `inputs` passed through `before` (Squeeze or Unsqueeze on axis 0) into a fresh
/// value, and each output of the node made fresh and passed through `after` back into its
/// name: the new inputs and outputs.
fn around_scan(site: &mut Site, inputs: &[Str], before: (&str, &str), after: (&str, &str)) -> (Vec<Str>, Vec<Str>) {
    let axis0 = || vec![ints_attribute("axes", vec![0])];
    let mut new_inputs = Vec::new();
    for name in inputs {
        let fresh = site.fresh(&format!("{name}_{}", before.1));
        site.before.push(simple_node(before.0, std::slice::from_ref(name), &fresh, axis0()));
        new_inputs.push(fresh);
    }
    let outputs: Vec<Str> = site.node().outputs.to_vec();
    let mut new_outputs = Vec::new();
    for name in &outputs {
        let fresh = site.fresh(&format!("{name}_{}", after.1));
        site.after.push(simple_node(after.0, std::slice::from_ref(&fresh), name, axis0()));
        new_outputs.push(fresh);
    }
    (new_inputs, new_outputs)
}

fn scan_down(site: &mut Site) -> Result<(), String> {
    for name in ["scan_input_axes", "scan_output_axes", "scan_output_directions"] {
        if site.ints(name).is_some_and(|v| v.iter().any(|&a| a != 0)) {
            return Err(format!("its {name} are not all 0, which Scan-8 cannot express"));
        }
        site.take(name);
    }
    let inputs: Vec<Str> = site.node().inputs.to_vec();
    let (batched, results) = around_scan(site, &inputs, ("Unsqueeze", "batch"), ("Squeeze", "batch"));
    site.node_mut().inputs = std::iter::once(Str::default()).chain(batched).collect();
    site.node_mut().outputs = results.into_iter().collect();
    if let Some(mut directions) = site.take("scan_input_directions") {
        directions.name = Some(Str::from("directions"));
        site.set(directions);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Upsample and Resize.

fn upsample_scales_up(site: &mut Site) -> Result<(), String> {
    attribute_to_input(site, "scales", 1, Operand::Floats)
}

fn upsample_scales_down(site: &mut Site) -> Result<(), String> {
    input_to_attribute(site, "scales", 1, Operand::Floats)
}

/// Resize-10 is Upsample-9 renamed: same inputs, same modes, same (asymmetric) coordinates.
fn upsample_to_resize(site: &mut Site) -> Result<(), String> {
    site.node_mut().op_type = Some(Str::from("Resize"));
    Ok(())
}

fn resize_to_upsample(site: &mut Site) -> Result<(), String> {
    site.node_mut().op_type = Some(Str::from("Upsample"));
    Ok(())
}

/// Resize-10 maps coordinates asymmetrically and rounds nearest neighbours down; from 11
/// those are `coordinate_transformation_mode` and `nearest_mode`, whose defaults differ.
/// Its `roi` input (required at 11) is given empty.
fn resize_11_up(site: &mut Site) -> Result<(), String> {
    let scales = site.input(1).ok_or("Resize-10 needs its scales input")?;
    let roi = site.constant("roi", tensor_of(DataType::Float, vec![0], &[]).ok_or("no float")?);
    site.set_input(1, roi);
    site.set_input(2, scales);
    site.set(string_attribute("coordinate_transformation_mode", "asymmetric"));
    if site.string("mode").as_deref().unwrap_or("nearest") == "nearest" {
        site.set(string_attribute("nearest_mode", "floor"));
    }
    Ok(())
}

fn resize_11_down(site: &mut Site) -> Result<(), String> {
    let mode = site.string("mode").unwrap_or_else(|| "nearest".to_owned());
    let coordinates = site.string("coordinate_transformation_mode").unwrap_or_else(|| "half_pixel".to_owned());
    let mut reasons = Vec::new();
    if coordinates != "asymmetric" {
        reasons.push(format!("its coordinate_transformation_mode is '{coordinates}' and Resize-10 maps coordinates only as 'asymmetric' does"));
    }
    if mode == "cubic" {
        reasons.push("Resize-10 has no cubic mode".to_owned());
    }
    if mode == "nearest" && site.string("nearest_mode").as_deref().unwrap_or("round_prefer_floor") != "floor" {
        reasons.push("its nearest_mode is not 'floor', the only rounding Resize-10 has".to_owned());
    }
    if site.input(3).is_some() {
        reasons.push("it is given output sizes, and Resize-10 takes only scales".to_owned());
    }
    let Some(scales) = site.input(2) else {
        reasons.push("it has no scales input".to_owned());
        return Err(reasons.join("; "));
    };
    if !reasons.is_empty() {
        return Err(reasons.join("; "));
    }
    site.detach(1);
    let x = site.input(0).unwrap_or_default();
    site.node_mut().inputs = [x, scales].into_iter().collect();
    for a in
        ["coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside", "extrapolation_value"]
    {
        site.take(a);
    }
    Ok(())
}

/// From 13 `roi` and `scales` may be omitted; before, both are given (empty when unused).
fn resize_13_down(site: &mut Site) -> Result<(), String> {
    for i in [1, 2] {
        if site.input(i).is_none() {
            let what = if i == 1 { "roi" } else { "scales" };
            let empty = site.constant(what, tensor_of(DataType::Float, vec![0], &[]).ok_or("no float")?);
            site.set_input(i, empty);
        }
    }
    Ok(())
}

fn resize_19_down(site: &mut Site) -> Result<(), String> {
    refuse_values(site, "coordinate_transformation_mode", &["half_pixel_symmetric"])
}

// ---------------------------------------------------------------------------------------
// Bounds and axes as inputs.

fn slice_up(site: &mut Site) -> Result<(), String> {
    attribute_to_input(site, "starts", 1, Operand::Ints)?;
    attribute_to_input(site, "ends", 2, Operand::Ints)?;
    attribute_to_input(site, "axes", 3, Operand::Ints)
}

fn slice_down(site: &mut Site) -> Result<(), String> {
    if site.input(4).is_some() {
        let steps = site.constant_ints(4, "steps")?;
        if steps.iter().any(|&s| s != 1) {
            return Err("it slices with steps other than 1, which Slice-1 does not have".to_owned());
        }
        site.detach(4);
    }
    input_to_attribute(site, "starts", 1, Operand::Ints)?;
    input_to_attribute(site, "ends", 2, Operand::Ints)?;
    input_to_attribute(site, "axes", 3, Operand::Ints)?;
    site.trim_inputs();
    Ok(())
}

/// Slice-10's `axes` input may not be negative: constant negative axes are counted from
/// the front where the rank is known.
fn slice_axes_down(site: &mut Site) -> Result<(), String> {
    if site.input(3).is_none() {
        return Ok(());
    }
    let axes = site.constant_ints(3, "axes")?;
    if axes.iter().all(|&a| a >= 0) {
        return Ok(());
    }
    let rank = site.rank(0).ok_or("its axes count from the back and the rank of its input is not known")? as i64;
    let fixed: Vec<i64> = axes.iter().map(|&a| from_front(a, rank)).collect();
    site.detach(3);
    let constant = site.constant("axes", int64s(&fixed));
    site.set_input(3, constant);
    Ok(())
}

fn topk_up(site: &mut Site) -> Result<(), String> {
    attribute_to_input(site, "k", 1, Operand::IntAsList)
}

fn topk_down(site: &mut Site) -> Result<(), String> {
    input_to_attribute(site, "k", 1, Operand::IntAsList)
}

fn clip_up(site: &mut Site) -> Result<(), String> {
    attribute_to_input(site, "min", 1, Operand::ScalarLikeInput)?;
    attribute_to_input(site, "max", 2, Operand::ScalarLikeInput)
}

fn clip_down(site: &mut Site) -> Result<(), String> {
    input_to_attribute(site, "min", 1, Operand::ScalarLikeInput)?;
    input_to_attribute(site, "max", 2, Operand::ScalarLikeInput)?;
    site.trim_inputs();
    Ok(())
}

fn pad_up(site: &mut Site) -> Result<(), String> {
    attribute_to_input(site, "pads", 1, Operand::Ints)?;
    attribute_to_input(site, "value", 2, Operand::ScalarLikeInput)
}

fn pad_down(site: &mut Site) -> Result<(), String> {
    input_to_attribute(site, "pads", 1, Operand::Ints)?;
    input_to_attribute(site, "value", 2, Operand::ScalarLikeInput)?;
    site.trim_inputs();
    Ok(())
}

fn pad_wrap_down(site: &mut Site) -> Result<(), String> {
    refuse_values(site, "mode", &["wrap"])
}

fn dropout_up(site: &mut Site) -> Result<(), String> {
    attribute_to_input(site, "ratio", 1, Operand::Float)
}

fn dropout_down(site: &mut Site) -> Result<(), String> {
    if site.input(2).is_some() {
        let training = site.constant_floats(2, "training_mode")?;
        if training.iter().any(|&t| t != 0.0) {
            return Err("it runs in training mode, which Dropout before 12 takes from no input".to_owned());
        }
        site.detach(2);
    }
    input_to_attribute(site, "ratio", 1, Operand::Float)?;
    // The seed only shapes a training run's draws, which Dropout-10 leaves to the runtime.
    site.take("seed");
    site.trim_inputs();
    Ok(())
}

fn split_up(site: &mut Site) -> Result<(), String> {
    attribute_to_input(site, "split", 1, Operand::Ints)
}

fn split_down(site: &mut Site) -> Result<(), String> {
    input_to_attribute(site, "split", 1, Operand::Ints)?;
    site.trim_inputs();
    Ok(())
}

/// From 18 a Split given no sizes says how many parts with `num_outputs`.
fn split_18_up(site: &mut Site) -> Result<(), String> {
    if site.input(1).is_none() && site.int("num_outputs").is_none() {
        let parts = site.node().outputs.len() as i64;
        site.set(int_attribute("num_outputs", parts));
    }
    Ok(())
}

/// Before 18 a Split given no sizes makes equal parts, one per output; `num_outputs` makes
/// the last part smaller when the size does not divide, which needs explicit sizes.
fn split_18_down(site: &mut Site) -> Result<(), String> {
    let Some(parts) = site.int("num_outputs") else { return Ok(()) };
    site.take("num_outputs");
    let rank = site.rank(0);
    let axis = site.int("axis").unwrap_or(0);
    let axis = if axis < 0 { rank.map(|r| from_front(axis, r as i64)) } else { Some(axis) };
    let size = axis.and_then(|a| site.dim(0, usize::try_from(a).ok()?));
    // As many parts as outputs (which also bounds the sizes written).
    if usize::try_from(parts).ok() != Some(site.node().outputs.len()) {
        return Err(format!("num_outputs is {parts} and it has {} outputs", site.node().outputs.len()));
    }
    match size {
        Some(size) if size >= 0 && size % parts == 0 => Ok(()),
        Some(size) if size >= 0 => {
            let chunk = size / parts + i64::from(size % parts != 0);
            let mut sizes = vec![chunk; site.node().outputs.len() - 1];
            sizes.push(size.saturating_sub(chunk.saturating_mul(parts - 1)));
            let constant = site.constant("split", int64s(&sizes));
            site.set_input(1, constant);
            Ok(())
        }
        _ => Err("it splits into num_outputs parts of a size inference does not know".to_owned()),
    }
}

fn axes_up(site: &mut Site) -> Result<(), String> {
    attribute_to_input(site, "axes", 1, Operand::Ints)
}

fn axes_down(site: &mut Site) -> Result<(), String> {
    input_to_attribute(site, "axes", 1, Operand::Ints)?;
    site.trim_inputs();
    Ok(())
}

fn reduce_up(site: &mut Site) -> Result<(), String> {
    attribute_to_input(site, "axes", 1, Operand::Ints)
}

/// Before the axes became an input, a reduction given none reduced everything; with axes
/// given, `noop_with_empty_axes` says nothing.
fn reduce_down(site: &mut Site) -> Result<(), String> {
    let noop = site.int("noop_with_empty_axes").unwrap_or(0) != 0;
    if site.input(1).is_some() {
        let axes = site.constant_ints(1, "axes")?;
        if axes.is_empty() && noop {
            return Err("it is given no axes with noop_with_empty_axes set (it passes its input through)".to_owned());
        }
        site.take("noop_with_empty_axes");
    } else if noop {
        return Err("it is given no axes with noop_with_empty_axes set (it passes its input through)".to_owned());
    }
    input_to_attribute(site, "axes", 1, Operand::Ints)?;
    site.trim_inputs();
    Ok(())
}

fn dft_up(site: &mut Site) -> Result<(), String> {
    // DFT-17's axis defaults to 1; DFT-20's omitted axis input means -2.
    if site.int("axis").is_none() {
        site.set(int_attribute("axis", 1));
    }
    attribute_to_input(site, "axis", 2, Operand::Int)
}

fn dft_down(site: &mut Site) -> Result<(), String> {
    if site.input(2).is_none() {
        site.set(int_attribute("axis", -2));
    }
    input_to_attribute(site, "axis", 2, Operand::Int)?;
    site.trim_inputs();
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Negative axes (allowed from 11).

/// An axis or index counted from the front: a negative one plus the size (saturating, so
/// that a hostile value gives a wrong axis the judgement refuses, never an overflow).
fn from_front(value: i64, size: i64) -> i64 {
    if value < 0 { value.saturating_add(size) } else { value }
}

/// Counts a negative `axis` from the front, for versions before 11.
fn normalize_axis(site: &mut Site) -> Result<(), String> {
    let Some(axis) = site.int("axis") else { return Ok(()) };
    if axis >= 0 {
        return Ok(());
    }
    // OneHot's axis counts in its output, one rank more than its indices.
    let extra = usize::from(site.op() == "OneHot");
    let rank = site.rank(0).ok_or("its axis counts from the back and the rank of its input is not known")? + extra;
    site.set(int_attribute("axis", from_front(axis, rank as i64)));
    Ok(())
}

fn normalize_axes(site: &mut Site) -> Result<(), String> {
    let Some(axes) = site.ints("axes") else { return Ok(()) };
    if axes.iter().all(|&a| a >= 0) {
        return Ok(());
    }
    let rank = site.rank(0).ok_or("its axes count from the back and the rank of its input is not known")? as i64;
    site.set(ints_attribute("axes", axes.iter().map(|&a| from_front(a, rank)).collect()));
    Ok(())
}

/// Unsqueeze's axes count in its output, whose rank is the input's plus the axes'.
fn unsqueeze_axes_down(site: &mut Site) -> Result<(), String> {
    let Some(axes) = site.ints("axes") else { return Ok(()) };
    if axes.iter().all(|&a| a >= 0) {
        return Ok(());
    }
    let rank = site.rank(0).ok_or("its axes count from the back and the rank of its input is not known")?;
    let rank = (rank + axes.len()) as i64;
    site.set(ints_attribute("axes", axes.iter().map(|&a| from_front(a, rank)).collect()));
    Ok(())
}

/// Gather before 11 takes no negative indices: constant ones are counted from the front
/// where the size is known; computed ones are noted.
fn gather_down(site: &mut Site) -> Result<(), String> {
    normalize_axis(site)?;
    match site.input(1).map(|_| site.constant_ints(1, "indices")) {
        Some(Ok(indices)) if indices.iter().any(|&i| i < 0) => {
            let axis = usize::try_from(site.int("axis").unwrap_or(0)).unwrap_or(0);
            let size = site.dim(0, axis).ok_or("it has negative indices into a dimension of unknown size")?;
            let fixed: Vec<f64> = indices.iter().map(|&i| from_front(i, size) as f64).collect();
            let dt = site.elem_type(1).unwrap_or(DataType::Int64);
            let rank = site.rank(1).ok_or("the rank of its indices is not known")?;
            let dims: Vec<i64> = (0..rank).map(|k| site.dim(1, k).unwrap_or(1)).collect();
            let tensor = tensor_of(dt, dims, &fixed).ok_or("indices of an unexpected type")?;
            site.detach(1);
            let constant = site.constant("indices", tensor);
            site.set_input(1, constant);
            Ok(())
        }
        Some(Ok(_)) => Ok(()),
        _ => indices_from_front(site, 1),
    }
}

/// Computed indices made non-negative before the node, as versions before 11 require:
/// `Where(i < 0, i + size, i)`, the size read from the data's shape at the node's axis
/// (Gather's indices, Scatter's: negative ones count from the back from 11 on). Below 9,
/// which has no Where, they are left as they are, with a note.
fn indices_from_front(site: &mut Site, index: usize) -> Result<(), String> {
    let (Some(data), Some(indices)) = (site.input(0), site.input(index)) else { return Ok(()) };
    // Where exists from 9: below, the indices are taken as they come, and the user told.
    if site.to < 9 {
        site.notes.push("its indices are computed: before opset 11 they must not be negative".to_owned());
        return Ok(());
    }
    let dt = site.elem_type(index).ok_or("its indices are computed and their element type is not known")?;
    let axis = site.int("axis").unwrap_or(0);
    let stem = site.stem();
    let at = site.scalar("axis", DataType::Int64, axis as f64)?;
    let zero = site.scalar("zero", dt, 0.0)?;
    let [shape, size, negative, shifted, fixed] =
        ["shape", "size", "negative", "shifted", "indices"].map(|what| site.fresh(&format!("{stem}_{what}")));
    site.before.push(simple_node("Shape", std::slice::from_ref(&data), &shape, Vec::new()));
    site.before.push(simple_node("Gather", &[shape, at], &size, vec![int_attribute("axis", 0)]));
    let size = if dt == DataType::Int64 {
        size
    } else {
        let cast = site.fresh(&format!("{stem}_size_cast"));
        site.before.push(simple_node("Cast", &[size], &cast, vec![int_attribute("to", i64::from(dt.code()))]));
        cast
    };
    site.before.push(simple_node("Less", &[indices.clone(), zero], &negative, Vec::new()));
    site.before.push(simple_node("Add", &[indices.clone(), size], &shifted, Vec::new()));
    site.before.push(simple_node("Where", &[negative, shifted, indices], &fixed, Vec::new()));
    site.set_input(index, fixed);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Softmax, LogSoftmax, Hardmax: before 13 the input is flattened to 2-D at `axis` and
// normalised along the second dimension; from 13 along `axis` alone. The two agree when
// `axis` is the last dimension.

fn softmax_up(site: &mut Site) -> Result<(), String> {
    let axis = site.int("axis").unwrap_or(1);
    let rank = site.rank(0);
    let last = axis == -1 || rank.is_some_and(|r| from_front(axis, r as i64) == r as i64 - 1);
    if last {
        return Ok(());
    }
    // Flatten at the axis, normalise the rows, restore the shape.
    let input = site.input(0).ok_or("it has no input")?;
    let output = site.node().outputs.first().cloned().ok_or("it has no output")?;
    let stem = site.stem();
    let flat = site.fresh(&format!("{stem}_flat"));
    let shape = site.fresh(&format!("{stem}_shape"));
    let normalised = site.fresh(&format!("{stem}_rows"));
    site.before.push(simple_node("Flatten", std::slice::from_ref(&input), &flat, vec![int_attribute("axis", axis)]));
    site.before.push(simple_node("Shape", &[input], &shape, Vec::new()));
    site.node_mut().inputs[0] = flat;
    site.node_mut().outputs[0] = normalised.clone();
    site.set(int_attribute("axis", 1));
    site.after.push(simple_node("Reshape", &[normalised, shape], &output, Vec::new()));
    Ok(())
}

fn softmax_down(site: &mut Site) -> Result<(), String> {
    let axis = site.int("axis").unwrap_or(-1);
    let rank = site.rank(0);
    let Some(rank) = rank.map(|r| r as i64) else {
        if axis == -1 {
            return Ok(());
        }
        return Err(
            "it normalises along an axis that may not be the last, and the rank of its input is not known".to_owned()
        );
    };
    let axis = from_front(axis, rank);
    if !(0..rank).contains(&axis) {
        return Err(format!("its axis {axis} is outside its input's {rank} dimensions"));
    }
    if axis == rank - 1 {
        site.set(int_attribute("axis", axis));
        return Ok(());
    }
    // Move the axis last, normalise there, move it back.
    let mut perm: Vec<i64> = (0..rank).collect();
    perm.swap(usize::try_from(axis).unwrap_or(0), usize::try_from(rank - 1).unwrap_or(0));
    let input = site.input(0).ok_or("it has no input")?;
    let output = site.node().outputs.first().cloned().ok_or("it has no output")?;
    let stem = site.stem();
    let moved = site.fresh(&format!("{stem}_moved"));
    let normalised = site.fresh(&format!("{stem}_last"));
    site.before.push(simple_node("Transpose", &[input], &moved, vec![ints_attribute("perm", perm.clone())]));
    site.node_mut().inputs[0] = moved;
    site.node_mut().outputs[0] = normalised.clone();
    site.set(int_attribute("axis", rank - 1));
    site.after.push(simple_node("Transpose", &[normalised], &output, vec![ints_attribute("perm", perm)]));
    Ok(())
}

fn simple_node(op: &str, inputs: &[Str], output: &Str, attributes: Vec<Attribute>) -> Node {
    Node {
        op_type: Some(Str::from(op)),
        inputs: inputs.iter().cloned().collect(),
        outputs: std::iter::once(output.clone()).collect(),
        attributes,
        ..Node::default()
    }
}

// ---------------------------------------------------------------------------------------
// Renamed and re-valued.

/// ScatterElements-11 is Scatter-9 renamed (and Scatter-11 its deprecated alias).
fn scatter_to_elements(site: &mut Site) -> Result<(), String> {
    site.node_mut().op_type = Some(Str::from("ScatterElements"));
    Ok(())
}

fn elements_to_scatter(site: &mut Site) -> Result<(), String> {
    site.node_mut().op_type = Some(Str::from("Scatter"));
    normalize_axis(site)?;
    match site.input(1).map(|_| site.constant_ints(1, "indices")) {
        Some(Ok(indices)) if indices.iter().all(|&i| i >= 0) => Ok(()),
        Some(_) => indices_from_front(site, 1),
        None => Ok(()),
    }
}

fn scatter_reduction_down(site: &mut Site) -> Result<(), String> {
    refuse_values(site, "reduction", &["max", "min"])
}

/// GridSample-20 renamed its modes (`bilinear` is `linear`, `bicubic` is `cubic`) and took
/// any number of spatial dimensions.
fn grid_sample_up(site: &mut Site) -> Result<(), String> {
    let renamed = match site.string("mode").as_deref() {
        Some("bilinear") => "linear",
        Some("bicubic") => "cubic",
        _ => return Ok(()),
    };
    site.set(string_attribute("mode", renamed));
    Ok(())
}

fn grid_sample_down(site: &mut Site) -> Result<(), String> {
    match site.rank(0) {
        Some(4) => {}
        Some(r) => return Err(format!("it samples a rank-{r} input, and GridSample-16 only rank 4")),
        None => return Err("the rank of its input is not known, and GridSample-16 samples only rank 4".to_owned()),
    }
    let renamed = match site.string("mode").as_deref().unwrap_or("linear") {
        "linear" => "bilinear",
        "cubic" => "bicubic",
        other => other,
    }
    .to_owned();
    site.set(string_attribute("mode", &renamed));
    Ok(())
}

/// RoiAlign-10 maps coordinates as `output_half_pixel`, the mode 16 names and whose
/// default is `half_pixel`.
fn roi_align_up(site: &mut Site) -> Result<(), String> {
    site.set(string_attribute("coordinate_transformation_mode", "output_half_pixel"));
    Ok(())
}

fn roi_align_down(site: &mut Site) -> Result<(), String> {
    match site.string("coordinate_transformation_mode").as_deref().unwrap_or("half_pixel") {
        "output_half_pixel" => {
            site.take("coordinate_transformation_mode");
            Ok(())
        }
        other => Err(format!("its coordinate_transformation_mode '{other}' does not exist in RoiAlign-10")),
    }
}

/// GroupNormalization-18 scales and shifts per group, 21 per channel: constant per-group
/// values are repeated over each group's channels, and back where each group's agree.
fn group_norm_up(site: &mut Site) -> Result<(), String> {
    let groups = site.int("num_groups").ok_or("it has no num_groups")?;
    let channels = site.dim(0, 1).ok_or("the channel count of its input is not known")?;
    if groups <= 0 || channels % groups != 0 {
        return Err(format!("{channels} channels do not divide into {groups} groups"));
    }
    // The scale written out holds one value per channel: a size no real model comes near
    // is refused rather than allocated.
    if channels > 1 << 24 {
        return Err(format!("{channels} channels are too many to write its scale out per channel"));
    }
    let per = usize::try_from(channels / groups).unwrap_or(1);
    for (i, what) in [(1, "scale"), (2, "bias")] {
        let values = site.constant_floats(i, what)?;
        let dt = site.elem_type(i).unwrap_or(DataType::Float);
        let repeated: Vec<f64> = values.iter().flat_map(|&v| std::iter::repeat_n(v, per)).collect();
        let tensor = tensor_of(dt, vec![channels], &repeated).ok_or("an unexpected element type")?;
        site.detach(i);
        let constant = site.constant(what, tensor);
        site.set_input(i, constant);
    }
    Ok(())
}

fn group_norm_down(site: &mut Site) -> Result<(), String> {
    let groups = usize::try_from(site.int("num_groups").ok_or("it has no num_groups")?).unwrap_or(0);
    for (i, what) in [(1, "scale"), (2, "bias")] {
        let values = site.constant_floats(i, what)?;
        if groups == 0 || !values.len().is_multiple_of(groups) {
            return Err(format!("its {what} does not divide into {groups} groups"));
        }
        let per = values.len() / groups;
        let grouped: Vec<f64> = values.chunks(per.max(1)).map(|c| c[0]).collect();
        if values.chunks(per.max(1)).any(|c| c.iter().any(|&v| v != c[0])) {
            return Err(format!("its {what} differs within a group, and GroupNormalization-18 takes one per group"));
        }
        let dt = site.elem_type(i).unwrap_or(DataType::Float);
        let tensor = tensor_of(dt, vec![grouped.len() as i64], &grouped).ok_or("an unexpected element type")?;
        site.detach(i);
        let constant = site.constant(what, tensor);
        site.set_input(i, constant);
    }
    Ok(())
}
