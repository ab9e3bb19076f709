//! What onnxruntime refuses while inferring an operator through its function body.
//!
//! onnxruntime has no kernel for some operators (SoftmaxCrossEntropyLoss and
//! NegativeLogLikelihoodLoss, GroupNormalization, CenterCropPad, Attention-25, and
//! Attention-23 of bfloat16). When it loads a model with one, it inlines the operator's
//! function body and infers each node of the body with onnx's rules, following shape
//! values (not through a Concat). A body node whose rule fails makes the load fail,
//! although onnx's own inference of the operator judged nothing (it reads no shape it does not have, while the
//! body reads every input it is given). The verdict contract counts what onnxruntime
//! refuses at load (docs/diagnostics.md), so `onnx check` expands the same body and judges
//! its nodes with the rules of [`super::validate`]. Measured on the rank sweep
//! (`tests/fixtures/check/gen_rank_sweep.py`): each operator listed in [`expanded`] is one
//! whose refusals name a node of its body.
//!
//! The bodies of these operators depend on the node (its attributes, which inputs it has,
//! its element type), so the schema export has none: [`nll_loss_body`], [`sce_body`],
//! [`group_normalization_body`], [`center_crop_pad_body`] and [`attention_body`] write them
//! as onnx 1.23.2's builders do (`onnx/defs/{math,nn,tensor}/defs.cc`, `nn/utils.cc`), as
//! text our parser reads; each was compared line by line with the body onnx builds for
//! every such node of the rank sweep. Where onnx writes a
//! `Constant` by `value_ints`, ours writes the same values as a `value` tensor, which the
//! rules read as a constant input.

use super::env::Env;
use super::node::infer_node_in;
use crate::diagnostic::{Anchor, Diagnostic, Severity};
use crate::ir::{DataType, Model, NodeId, Str};
use crate::resolve::{Places, ValueNumbers};
use crate::schema::OpSchema;

/// How deep bodies are expanded inside bodies (SoftmaxCrossEntropyLoss calls
/// NegativeLogLikelihoodLoss, whose body onnxruntime expands in turn).
const MAX_DEPTH: usize = 3;

/// The error onnxruntime's load gives default-domain node `n` of `env` (of operator
/// `schema`), when onnxruntime infers it through a function body and a node of the body
/// fails; `None` when it has a kernel for it or the body holds.
pub(super) fn refusal(env: &Env<'_>, n: NodeId, schema: &OpSchema) -> Option<Diagnostic> {
    let (at, message) = first_failure(env, n, schema, 0)?;
    let op = &schema.op;
    let message = format!(
        "onnxruntime has no kernel for {op}-{} and infers it through its function body, where {at} fails: {message} \
         (onnxruntime refuses the model)",
        schema.since_version
    );
    Some(Diagnostic::error("function-body-rule", Anchor::Node(n), message))
}

/// Where in the body of node `n` a rule fails (the body node, described) and what it says.
fn first_failure(env: &Env<'_>, n: NodeId, schema: &OpSchema, depth: usize) -> Option<(String, String)> {
    if depth >= MAX_DEPTH {
        return None;
    }
    let node = &env.model.nodes[n];
    let inputs = env.numbers.node_inputs(n, node);
    let elem = |i: usize| {
        let ty = inputs.get(i).and_then(|v| env.ty(v))?;
        super::types::tensor_parts(ty).and_then(|(e, _)| e).and_then(DataType::from_code)
    };
    if !expanded(schema, elem(0)) {
        return None;
    }
    let text = body_text(node, schema, &elem)?;
    let body = Expansion::new(&text, node, schema)?;
    body.first_failure(env, inputs, depth)
}

/// Whether onnxruntime (1.32, CPU) infers `schema`'s operator through its function body,
/// for a first input of element type `elem`: it has no kernel for the loss functions,
/// GroupNormalization, CenterCropPad and Attention-25, and its Attention-23 kernel takes
/// no bfloat16.
fn expanded(schema: &OpSchema, elem: Option<DataType>) -> bool {
    if !schema.domain.is_empty() {
        return false;
    }
    match schema.op.as_str() {
        "GroupNormalization" | "CenterCropPad" | "SoftmaxCrossEntropyLoss" | "NegativeLogLikelihoodLoss" => true,
        "Attention" => schema.since_version >= 25 || elem == Some(DataType::Bfloat16),
        _ => false,
    }
}

/// The text of the body onnxruntime expands `node` into, given its inputs' element types.
fn body_text(node: &crate::ir::Node, schema: &OpSchema, elem: &impl Fn(usize) -> Option<DataType>) -> Option<String> {
    let version = schema.since_version;
    match schema.op.as_str() {
        "NegativeLogLikelihoodLoss" => nll_loss_body(node, version, elem(0)?),
        "SoftmaxCrossEntropyLoss" => sce_body(node, version),
        "GroupNormalization" => group_normalization_body(node, version, elem(0)?),
        "Attention" => {
            let mask = if node.has_input(3) { Some(elem(3)?.code()) } else { None };
            let call = AttentionCall {
                version,
                elem: elem(0)?.code(),
                mask,
                inputs: std::array::from_fn(|i| node.has_input(i)),
                outputs: std::array::from_fn(|i| node.has_output(i)),
            };
            attention_body(node, &call)
        }
        "CenterCropPad" => Some(center_crop_pad_body(node)),
        _ => None,
    }
}

/// The body onnx builds for `node` (GroupNormalization, Attention, CenterCropPad, the
/// losses), given its inputs' element types, parsed with its attribute references bound to
/// the node: the model holding it, the function, and the opset it is written for
/// (`onnx opset` inlines it where the target predates the operator).
pub(crate) fn built_body(
    node: &crate::ir::Node,
    schema: &OpSchema,
    elem: &impl Fn(usize) -> Option<DataType>,
) -> Option<(Model, crate::ir::FunctionId, i64)> {
    let text = body_text(node, schema, elem)?;
    let expansion = Expansion::new(&text, node, schema)?;
    let function = *expansion.model.functions.first()?;
    Some((expansion.model, function, expansion.opset))
}

/// A body parsed into a model of its own, its attribute references bound to the caller's.
struct Expansion {
    model: Model,
    numbers: ValueNumbers,
    opset: i64,
}

impl Expansion {
    fn new(text: &str, caller: &crate::ir::Node, schema: &OpSchema) -> Option<Expansion> {
        let mut model = super::call::function_model(text)?;
        let id = *model.functions.first()?;
        let defaults = super::call::schema_defaults(schema);
        let function = model.function_store[id].clone();
        for &b in &function.nodes {
            if let Some(bound) = super::call::bind_to_caller(&model.nodes[b], caller, &function, &defaults) {
                model.nodes[b] = bound;
            }
        }
        let opset = function.opset_version("").unwrap_or(schema.since_version);
        let numbers = crate::resolve::resolve_without_tables(&model).numbers;
        Some(Expansion { model, numbers, opset })
    }

    /// Infers the body from the caller's input types in `env` and judges each node, as
    /// onnxruntime does after inlining it.
    fn first_failure(&self, env: &Env<'_>, inputs: Places<'_>, depth: usize) -> Option<(String, String)> {
        let id = *self.model.functions.first()?;
        let function = &self.model.function_store[id];
        let mut body = Env::for_expansion(&self.model, &self.numbers, id, function, self.opset);
        // Shape values are followed through the body, as onnxruntime follows them (a
        // `Shape` into a `Reshape`, a key length into a `Range`), but not through a Concat:
        // measured on the rank sweep, following Concat refuses Attention-25 models
        // onnxruntime loads (a value of rank 3, whose head size is an empty slice of its
        // shape, fails the final MatMul only through the Concat of the sizes), and not
        // following values at all passes 32 models onnxruntime refuses.
        for (formal, actual) in self.numbers.function_inputs(id, function).iter().zip(inputs) {
            if let Some(ty) = env.ty(actual) {
                body.set_type(formal, ty.clone());
            }
            if let Some(known) = env.value(actual) {
                body.set_value(formal, known.clone());
            }
        }
        for &b in &function.nodes {
            let node = &self.model.nodes[b];
            let Some(schema) = infer_node_in(&self.model, b, node, &mut body) else { continue };
            if schema.op == "Concat" {
                for out in self.numbers.node_outputs(b, node) {
                    body.forget_value(out);
                }
            }
            let mut found = Vec::new();
            body.rule_findings(b, schema, &mut found);
            let described = || {
                let op = node.op_type.as_ref().and_then(Str::as_str).unwrap_or("?");
                let outputs: Vec<&str> = node.outputs.iter().filter_map(Str::as_str).collect();
                format!("{} = {op}(…)", outputs.join(", "))
            };
            if let Some(error) = found.into_iter().find(|d| d.severity == Severity::Error) {
                return Some((described(), error.message));
            }
            if let Some((at, message)) = first_failure(&body, b, schema, depth + 1) {
                return Some((format!("{at}, inside {}", described()), message));
            }
        }
        None
    }
}

/// NegativeLogLikelihoodLoss-13 and later as onnx builds it for `node`, whose input has
/// element type `elem`: the target unsqueezed to `[N, 1, d1, …]` gathers from the input
/// along axis 1; `ignore_index` masks targets; the weights gather by target; the reduction
/// sums or averages.
fn nll_loss_body(node: &crate::ir::Node, version: i64, elem: DataType) -> Option<String> {
    if version < 13 {
        return None;
    }
    let reduction = node.attribute("reduction").and_then(|a| a.s.as_ref()).and_then(Str::as_str).unwrap_or("mean");
    let ignore_index = node.attribute("ignore_index").and_then(|a| a.i);
    let weighted = node.has_input(2);
    let float_input = elem == DataType::Float;
    let to = elem.code();
    let mut lines = vec![
        "const_zero = Constant <value = int64[1] {0}> ()".to_owned(),
        "const_one = Constant <value = int64[1] {1}> ()".to_owned(),
        "axes = Constant <value = int64[1] {1}> ()".to_owned(),
        "expanded_target = Unsqueeze (target, axes)".to_owned(),
    ];
    let mut add = |line: &str| lines.push(line.to_owned());
    let reduce = |add: &mut dyn FnMut(&str), weights: Option<&str>| match (reduction, weights) {
        ("none", _) => {}
        ("mean", Some(w)) => {
            add("loss_sum = ReduceSum <keepdims = 0> (loss_Ndd)");
            add(&format!("weight_gather_sum = ReduceSum <keepdims = 0> ({w})"));
            add("loss = Div (loss_sum, weight_gather_sum)");
        }
        ("mean", None) => add("loss = ReduceMean <keepdims = 0> (loss_Ndd)"),
        _ => add("loss = ReduceSum <keepdims = 0> (loss_Ndd)"),
    };
    let last = if reduction == "none" { "loss" } else { "loss_Ndd" };
    match ignore_index {
        None => {
            add("input_gather_element = GatherElements <axis = 1> (input, expanded_target)");
            add("loss_NCdd = Neg (input_gather_element)");
            add("loss_N1dd = Slice (loss_NCdd, const_zero, const_one, const_one)");
            if weighted {
                add("weight_gather = Gather (weight, target)");
                add("loss_unweighted = Squeeze (loss_N1dd, axes)");
                add(&format!("{last} = Mul (loss_unweighted, weight_gather)"));
                reduce(&mut add, Some("weight_gather"));
            } else {
                add(&format!("{last} = Squeeze (loss_N1dd, axes)"));
                reduce(&mut add, None);
            }
        }
        Some(index) => {
            add(&format!("const_ignore_index = Constant <value = int64[1] {{{index}}}> ()"));
            add("const_zero_target_typed = Sub (expanded_target, expanded_target)");
            add("expanded_target_int64 = Cast <to = 7> (expanded_target)");
            add("mask = Equal (expanded_target_int64, const_ignore_index)");
            add("transform_targets = Where (mask, const_zero_target_typed, expanded_target)");
            add("input_gather_element = GatherElements <axis = 1> (input, transform_targets)");
            // A float constant, cast to the input's type unless that is float.
            let typed = |add: &mut dyn FnMut(&str), name: &str, value: i32| -> String {
                add(&format!("const_{name}_float = Constant <value = float[1] {{{value}}}> ()"));
                if float_input {
                    return format!("const_{name}_float");
                }
                add(&format!("const_{name}_casted = Cast <to = {to}> (const_{name}_float)"));
                format!("const_{name}_casted")
            };
            let zero = typed(&mut add, "zero", 0);
            add(&format!("input_gather_element_transform = Where (mask, {zero}, input_gather_element)"));
            add("loss_NCdd = Neg (input_gather_element_transform)");
            add("loss_N1dd = Slice (loss_NCdd, const_zero, const_one, const_one)");
            if weighted {
                add("weight_gather_temp = Gather (weight, transform_targets)");
                add(&format!("weight_gather_temp_1 = Where (mask, {zero}, weight_gather_temp)"));
                add("weight_gather = Squeeze (weight_gather_temp_1, axes)");
            } else {
                add("squeeze_mask = Squeeze (mask, axes)");
                let one = typed(&mut add, "one", 1);
                add(&format!("weight_gather = Where (squeeze_mask, {zero}, {one})"));
            }
            add("loss_unweighted = Squeeze (loss_N1dd, axes)");
            add(&format!("{last} = Mul (loss_unweighted, weight_gather)"));
            reduce(&mut add, Some("weight_gather"));
        }
    }
    Some(function_text("NegativeLogLikelihoodLoss", version, "input, target, weight", "loss", &lines))
}

/// SoftmaxCrossEntropyLoss-13 and later as onnx builds it for `node`: a LogSoftmax over
/// the class axis of the scores viewed as `[N, C, D]`, then NegativeLogLikelihoodLoss with
/// the node's reduction and ignore_index.
fn sce_body(node: &crate::ir::Node, version: i64) -> Option<String> {
    if version < 13 {
        return None;
    }
    let mut lines: Vec<String> = [
        "Shape3D = Constant <value = int64[3] {0, 0, -1}> ()",
        "X_NCD = Reshape (scores, Shape3D)",
        "X_NDC = Transpose <perm = [0, 2, 1]> (X_NCD)",
        "X_LogSM = LogSoftmax <axis = 2> (X_NDC)",
        "X_LogSM_NCD = Transpose <perm = [0, 2, 1]> (X_LogSM)",
        "X_shape = Shape (scores)",
        "X_Log = Reshape (X_LogSM_NCD, X_shape)",
    ]
    .map(str::to_owned)
    .to_vec();
    if node.has_output(1) {
        lines.push("log_prob = Identity (X_Log)".to_owned());
    }
    let weights = if node.has_input(2) { ", weights" } else { "" };
    lines.push(format!(
        "output = NegativeLogLikelihoodLoss <reduction: string = @reduction, ignore_index: int = @ignore_index> \
         (X_Log, labels{weights})"
    ));
    Some(function_text("SoftmaxCrossEntropyLoss", version, "scores, labels, weights", "output, log_prob", &lines))
}

/// GroupNormalization-21 as onnx builds it for `node`, whose input has element type `elem`:
/// the input viewed as `[N, groups, C / groups, …]` and flattened to 3-D for the statistics
/// (in `stash_type`), scale and bias reshaped to `[1, C, 1]`.
fn group_normalization_body(node: &crate::ir::Node, version: i64, elem: DataType) -> Option<String> {
    if version < 21 {
        return None;
    }
    let groups = node.attribute("num_groups").and_then(|a| a.i)?;
    let epsilon = node.attribute("epsilon").and_then(|a| a.f).unwrap_or(1e-5);
    let stash = node.attribute("stash_type").and_then(|a| a.i).unwrap_or(1);
    // Float, bfloat16, float16, double: onnx builds no body for another stash type.
    if ![1, 16, 10, 11].contains(&stash) {
        return None;
    }
    let to = elem.code();
    let lines = [
        format!("FloatEpsilon = Constant <value = float[1] {{{epsilon:e}}}> ()"),
        format!("Epsilon = Cast <to = {stash}> (FloatEpsilon)"),
        format!("XU = Cast <to = {stash}> (X)"),
        "XShape = Shape (XU)".to_owned(),
        "C = Shape <start = 1, end = 2> (X)".to_owned(),
        format!("NumGroups = Constant <value = int64[1] {{{groups}}}> ()"),
        "GroupSize = Div (C, NumGroups)".to_owned(),
        "N = Shape <start = 0, end = 1> (X)".to_owned(),
        "InstanceShape = Shape <start = 2> (X)".to_owned(),
        "NewShape = Concat <axis = 0> (N, NumGroups, GroupSize, InstanceShape)".to_owned(),
        "XReshaped = Reshape (XU, NewShape)".to_owned(),
        "Shape3D = Constant <value = int64[3] {0, 0, -1}> ()".to_owned(),
        "X3D = Reshape (XReshaped, Shape3D)".to_owned(),
        "Axes2 = Constant <value = int64[1] {2}> ()".to_owned(),
        "Mean = ReduceMean (X3D, Axes2)".to_owned(),
        "Square = Mul (X3D, X3D)".to_owned(),
        "MeanOfSquare = ReduceMean (Square, Axes2)".to_owned(),
        "SquareOfMean = Mul (Mean, Mean)".to_owned(),
        "Var = Sub (MeanOfSquare, SquareOfMean)".to_owned(),
        "VarPlusEpsilon = Add (Var, Epsilon)".to_owned(),
        "StdDev = Sqrt (VarPlusEpsilon)".to_owned(),
        "Deviation = Sub (X3D, Mean)".to_owned(),
        "NormalizedU = Div (Deviation, StdDev)".to_owned(),
        "NormalizedOriginalShape = Reshape (NormalizedU, XShape)".to_owned(),
        "NormalizedNC = Reshape (NormalizedOriginalShape, Shape3D)".to_owned(),
        format!("NormalizedT = Cast <to = {to}> (NormalizedNC)"),
        "ScaleShape = Constant <value = int64[3] {1, -1, 1}> ()".to_owned(),
        format!("ScaleT = Cast <to = {to}> (scale)"),
        format!("BiasT = Cast <to = {to}> (bias)"),
        "ScaleReshaped = Reshape (ScaleT, ScaleShape)".to_owned(),
        "BiasReshaped = Reshape (BiasT, ScaleShape)".to_owned(),
        "Scaled = Mul (ScaleReshaped, NormalizedT)".to_owned(),
        "Biased = Add (Scaled, BiasReshaped)".to_owned(),
        "Y = Reshape (Biased, XShape)".to_owned(),
    ];
    Some(function_text("GroupNormalization", version, "X, scale, bias", "Y", &lines))
}

/// CenterCropPad-18 as onnx builds it for `node`: pad each axis (all, or `axes`) up to the
/// target size, then slice the centre out.
fn center_crop_pad_body(node: &crate::ir::Node) -> String {
    let axes = node.attribute("axes").map(|a| a.ints.iter().map(i64::to_string).collect::<Vec<_>>().join(", "));
    let mut lines = vec!["k2 = Constant <value = int64[1] {2}> ()".to_owned()];
    let mut add = |line: &str| lines.push(line.to_owned());
    let shape_of = |add: &mut dyn FnMut(&str), of: &str, name: &str, all: &str| match &axes {
        Some(_) => {
            add(&format!("{all} = Shape ({of})"));
            add(&format!("{name} = Gather ({all}, axes_input)"));
        }
        None => add(&format!("{name} = Shape ({of})")),
    };
    if let Some(axes) = &axes {
        let count = axes.split(", ").count();
        add(&format!("axes_input = Constant <value = int64[{count}] {{{axes}}}> ()"));
    }
    shape_of(&mut add, "input_data", "x_shape", "x_shape_alldims");
    add("padded_sh = Max (x_shape, shape)");
    add("pad_amount = Sub (padded_sh, x_shape)");
    add("pad_amount_left = Div (pad_amount, k2)");
    add("pad_amount_right = Sub (pad_amount, pad_amount_left)");
    add("pads = Concat <axis = 0> (pad_amount_left, pad_amount_right)");
    let on_axes = if axes.is_some() { ", axes_input" } else { "" };
    let pad_axes = if axes.is_some() { ", \"\", axes_input" } else { "" };
    add(&format!("padded_input = Pad (input_data, pads{pad_axes})"));
    shape_of(&mut add, "padded_input", "x_shape2", "x_shape_alldims2");
    add("sh_diff = Sub (x_shape2, shape)");
    add("start_dims = Div (sh_diff, k2)");
    add("end_dims = Add (start_dims, shape)");
    add(&format!("output_data = Slice (padded_input, start_dims, end_dims{on_axes})"));
    function_text("CenterCropPad", 18, "input_data, shape", "output_data", &lines)
}

/// A function of the default domain at `version`, in the text format.
/// SoftmaxCrossEntropyLoss's body refers to the caller's `reduction` and `ignore_index`,
/// so every body declares them (the others refer to none).
fn function_text(op: &str, version: i64, inputs: &str, outputs: &str, lines: &[String]) -> String {
    let body: String = lines.iter().map(|l| format!("  {l}\n")).collect();
    format!(
        "<domain: \"\", opset_import: [\"\" : {version}]>\n{op} <reduction, ignore_index> ({inputs}) => ({outputs})\n{{\n{body}}}\n"
    )
}

/// What Attention's body depends on besides its version.
struct AttentionCall {
    version: i64,
    /// The query's element type (T1).
    elem: i32,
    /// attn_mask's element type, when it is given.
    mask: Option<i32>,
    /// Which inputs and outputs the node has.
    inputs: [bool; 7],
    outputs: [bool; 4],
}

/// Attention as onnx builds it for a node (`onnx/defs/nn/defs.cc` and `utils.cc`): heads
/// unpacked from a 3-D query, the past cache joined to the new keys and values, an additive
/// bias from attn_mask (padded to the keys' length), the causal frontier, version 25's
/// window and the padding of `nonpad_kv_seqlen`, keys and values repeated for grouped
/// heads, then softmax(QKᵀ)·V.
fn attention_body(node: &crate::ir::Node, call: &AttentionCall) -> Option<String> {
    let int = |name: &str| node.attribute(name).and_then(|a| a.i);
    let float = |name: &str| node.attribute(name).and_then(|a| a.f);
    let AttentionCall { version, elem: t1, mask, inputs, outputs } = *call;
    let softmax = int("softmax_precision").unwrap_or(i64::from(t1));
    if ![1, 16, 10, 11].contains(&softmax) {
        return None;
    }
    let (q_heads, kv_heads) = (int("q_num_heads").unwrap_or(0), int("kv_num_heads").unwrap_or(0));
    let is_causal = int("is_causal").unwrap_or(0) == 1;
    let (left, right) = (int("left_window_size").unwrap_or(-1), int("right_window_size").unwrap_or(-1));
    if version >= 25 && (left < -1 || right < -1 || inputs[4] != inputs[5] || outputs[1] != outputs[2]) {
        return None;
    }
    let (past, nonpad) = (inputs[4], inputs[6]);
    let is_3d = q_heads > 0 && kv_heads > 0;
    let mut b = Vec::<String>::new();
    let mut add = |line: String| b.push(line);
    let const_int = |name: &str, v: i64| format!("{name} = Constant <value = int64[1] {{{v}}}> ()");
    add("BatchSize = Shape <start = 0, end = 1> (Q)".into());
    add("QSeqLen = Shape <start = -2, end = -1> (Q)".into());
    add("KVSeqLen = Shape <start = -2, end = -1> (K)".into());
    if is_3d {
        add(const_int("QNumHeadsAttr", q_heads));
        add(const_int("KVNumHeadsAttr", kv_heads));
        add(const_int("NegOne", -1));
        add("QIntermediateShape = Concat <axis = 0> (BatchSize, QSeqLen, QNumHeadsAttr, NegOne)".into());
        add("KVIntermediateShape = Concat <axis = 0> (BatchSize, KVSeqLen, KVNumHeadsAttr, NegOne)".into());
        for x in ["Q", "K", "V"] {
            let shape = if x == "Q" { "QIntermediateShape" } else { "KVIntermediateShape" };
            add(format!("{x}Intermediate = Reshape ({x}, {shape})"));
        }
        for x in ["Q", "K", "V"] {
            add(format!("{x}Reshaped = Transpose <perm = [0, 2, 1, 3]> ({x}Intermediate)"));
        }
    } else {
        for x in ["Q", "K", "V"] {
            add(format!("{x}Reshaped = Identity ({x})"));
        }
    }
    add("QNumHeads = Shape <start = 1, end = 2> (QReshaped)".into());
    add("KVNumHeads = Shape <start = 1, end = 2> (KReshaped)".into());
    add("QKHeadSize = Shape <start = 3, end = 4> (QReshaped)".into());
    add("QKHeadSizeF = Cast <to = 1> (QKHeadSize)".into());
    add("VHeadSize = Shape <start = 3, end = 4> (VReshaped)".into());
    add("SqrtHeadSize = Sqrt (QKHeadSizeF)".into());
    add(const_int("One1D", 1));
    // Version 23 pads no mask, and needs no -1.
    if version >= 24 {
        add(const_int("NegOne1D", -1));
    }
    add("One1DF = Constant <value = float[1] {1}> ()".into());
    add(const_int("Zero1D", 0));
    add("CalculatedScale = Div (One1DF, SqrtHeadSize)".into());
    let scale = float("scale");
    add(format!("ScaleF = Constant <value = float {{{:?}}}> ()", scale.unwrap_or(1.0)));
    add(format!("ScaleFactor = Identity ({})", if scale.is_some() { "ScaleF" } else { "CalculatedScale" }));
    add("ScaleFactorSqrt = Sqrt (ScaleFactor)".into());
    add(format!("ScaleFactorF = Cast <to = {t1}> (ScaleFactorSqrt)"));
    if past {
        add("PresentKey = Concat <axis = 2> (past_key, KReshaped)".into());
        add("PastKVSeqLen = Shape <start = -2, end = -1> (past_key)".into());
    } else {
        add("PresentKey = Identity (KReshaped)".into());
        add(const_int("PastKVSeqLen", 0));
    }
    let external_offset = version >= 24 && is_causal && nonpad && !past;
    if external_offset {
        add("CausalOffsetPerBatch = Sub (nonpad_kv_seqlen, QSeqLen)".into());
    }
    if outputs[1] {
        add("present_key = Identity (PresentKey)".into());
    }
    add(format!(
        "PresentValue = {}",
        if inputs[5] { "Concat <axis = 2> (past_value, VReshaped)" } else { "Identity (VReshaped)" }
    ));
    if outputs[2] {
        add("present_value = Identity (PresentValue)".into());
    }
    // The mask: attn_mask (a boolean one turned into a bias) padded to the keys' length, or
    // zeros; then the causal frontier.
    add("NewKVSeqLen = Shape <start = -2, end = -1> (PresentKey)".into());
    add("AttnBiasShape = Concat <axis = 0> (QSeqLen, NewKVSeqLen)".into());
    add("FloatNegInf = Constant <value = float[1] {-inf}> ()".into());
    add("ScalarZero = Constant <value = float[1] {0}> ()".into());
    if inputs[3] {
        let short = if mask? == DataType::Bool.code() {
            "Where (attn_mask, ScalarZero, FloatNegInf)"
        } else {
            "Identity (attn_mask)"
        };
        add(format!("AttnBiasShort = {short}"));
        if version < 24 {
            add("AttnBias = Identity (AttnBiasShort)".into());
        } else {
            add("MaskKVSeqLen = Shape <start = -1> (attn_mask)".into());
            add("PaddingKVSeqLen = Sub (NewKVSeqLen, MaskKVSeqLen)".into());
            add("Pads = Concat <axis = 0> (Zero1D, PaddingKVSeqLen)".into());
            add("FloatNegInfCast = CastLike (FloatNegInf, AttnBiasShort)".into());
            add("AttnBias = Pad (AttnBiasShort, Pads, FloatNegInfCast, NegOne1D)".into());
        }
    } else {
        add("AttnBias = ConstantOfShape (AttnBiasShape)".into());
    }
    if is_causal {
        add(const_int("Zero", 0));
        add(const_int("One", 1));
        add("ZeroNoDim = Squeeze (Zero, Zero)".into());
        add("OneNoDim = Squeeze (One, Zero)".into());
        add("SequenceLength = Gather (AttnBiasShape, ZeroNoDim)".into());
        add("TotalSequenceLength = Gather (AttnBiasShape, OneNoDim)".into());
        add("RangeRow = Range (ZeroNoDim, SequenceLength, OneNoDim)".into());
        add("RangeRow2D = Unsqueeze (RangeRow, One)".into());
        add("RangeCol = Range (ZeroNoDim, TotalSequenceLength, OneNoDim)".into());
        add("RangeCol2D = Unsqueeze (RangeCol, Zero)".into());
        if external_offset {
            add("Axes01 = Constant <value = int64[2] {0, 1}> ()".into());
            add("Axes123 = Constant <value = int64[3] {1, 2, 3}> ()".into());
            add("RangeRow4D = Unsqueeze (RangeRow2D, Axes01)".into());
            add("RangeCol4D = Unsqueeze (RangeCol2D, Axes01)".into());
            add("OffsetB4D = Unsqueeze (CausalOffsetPerBatch, Axes123)".into());
            add("RowPlusOff = Add (RangeRow4D, OffsetB4D)".into());
            add("BoolMaskTri = Less (RowPlusOff, RangeCol4D)".into());
        } else {
            add("RangeRow2DPast = Add (RangeRow2D, PastKVSeqLen)".into());
            add("BoolMaskTri = Less (RangeRow2DPast, RangeCol2D)".into());
        }
        add("MaskTriFloat = Where (BoolMaskTri, FloatNegInf, ScalarZero)".into());
        add("MaskTri = CastLike (MaskTriFloat, AttnBias)".into());
        add("AttnBiasCausalOrNot = Add (AttnBias, MaskTri)".into());
    } else {
        add("AttnBiasCausalOrNot = Identity (AttnBias)".into());
    }
    let windowed = version >= 25 && (left >= 0 || right >= 0);
    if windowed {
        attention_window(&mut add, left, right, nonpad && !past);
    } else if version >= 25 {
        add("AttnBiasCausalWindow = Identity (AttnBiasCausalOrNot)".into());
    }
    let biased = if version >= 25 { "AttnBiasCausalWindow" } else { "AttnBiasCausalOrNot" };
    if nonpad {
        add("KVSeqLenExpanded = Unsqueeze (nonpad_kv_seqlen, One1D)".into());
        add("KVSeqLen0D = Squeeze (KVSeqLen)".into());
        add("Zero0D = Constant <value = int64 {0}> ()".into());
        add("One0D = Constant <value = int64 {1}> ()".into());
        add("Range = Range (Zero0D, KVSeqLen0D, One0D)".into());
        add("PaddingMaskBool = Less (Range, KVSeqLenExpanded)".into());
        add("PaddingMaskFloat = Where (PaddingMaskBool, ScalarZero, FloatNegInf)".into());
        add("PaddingMask3D = Unsqueeze (PaddingMaskFloat, One1D)".into());
        add("PaddingMask4DFloat = Unsqueeze (PaddingMask3D, One1D)".into());
        add(format!("PaddingMask4D = CastLike (PaddingMask4DFloat, {biased})"));
        add(format!("AttnBiasCausalPad = Add ({biased}, PaddingMask4D)"));
        add(format!("AttnBiasT = Cast <to = {t1}> (AttnBiasCausalPad)"));
    } else if version >= 24 {
        add(format!("AttnBiasCausalPad = Identity ({biased})"));
        add(format!("AttnBiasT = Cast <to = {t1}> (AttnBiasCausalPad)"));
    } else {
        add(format!("AttnBiasT = Cast <to = {t1}> ({biased})"));
    }
    // Grouped heads: keys and values repeated when q_num_heads is a multiple of kv_num_heads.
    add("NGQACond1 = Equal (QNumHeads, KVNumHeads)".into());
    add("GQACond1 = Not (NGQACond1)".into());
    add("DivNumHeads = Div (QNumHeads, KVNumHeads)".into());
    add("IDivNumHeads = Cast <to = 7> (DivNumHeads)".into());
    add("RemainderNumHeads = Mod (QNumHeads, KVNumHeads)".into());
    add("GQACond2 = Equal (RemainderNumHeads, Zero1D)".into());
    add("GQACond = And (GQACond1, GQACond2)".into());
    add("InterleaveDim = Where (GQACond, IDivNumHeads, One1D)".into());
    add(const_int("Two1D", 2));
    add("KUnsqueezed = Unsqueeze (PresentKey, Two1D)".into());
    add("VUnsqueezed = Unsqueeze (PresentValue, Two1D)".into());
    for (x, head) in [("K", "QKHeadSize"), ("V", "VHeadSize")] {
        add(format!("{x}ExpandShape = Concat <axis = 0> (BatchSize, KVNumHeads, InterleaveDim, NewKVSeqLen, {head})"));
        add(format!("{x}Expanded = Expand ({x}Unsqueezed, {x}ExpandShape)"));
    }
    add("KAttentionShape = Concat <axis = 0> (BatchSize, QNumHeads, NewKVSeqLen, QKHeadSize)".into());
    add("VAttentionShape = Concat <axis = 0> (BatchSize, QNumHeads, NewKVSeqLen, VHeadSize)".into());
    add("KAttentionInput = Reshape (KExpanded, KAttentionShape)".into());
    add("VAttentionInput = Reshape (VExpanded, VAttentionShape)".into());
    add("KTranspose = Transpose <perm = [0, 1, 3, 2]> (KAttentionInput)".into());
    add("QScaled = Mul (QReshaped, ScaleFactorF)".into());
    add("KScaled = Mul (KTranspose, ScaleFactorF)".into());
    add("QKAttnWeight = MatMul (QScaled, KScaled)".into());
    add(format!("QKAttnCast = Cast <to = {t1}> (QKAttnWeight)"));
    let softcap = float("softcap").unwrap_or(0.0);
    if softcap != 0.0 {
        add(format!("Softcap = Constant <value = float[1] {{{softcap:?}}}> ()"));
        add(format!("SoftcapF = Cast <to = {t1}> (Softcap)"));
        add("SoftcapDiv = Div (QKAttnCast, SoftcapF)".into());
        add("SoftcapTanh = Tanh (SoftcapDiv)".into());
        add("QKAttnSoftcapped = Mul (SoftcapTanh, SoftcapF)".into());
        add("QKAttnWeightSoftcap = Add (QKAttnSoftcapped, AttnBiasT)".into());
    } else {
        add("QKAttnWeightSoftcap = Add (QKAttnCast, AttnBiasT)".into());
    }
    add(format!("SoftmaxCast = Cast <to = {softmax}> (QKAttnWeightSoftcap)"));
    add("AttnWeightSoftmax = Softmax (SoftmaxCast)".into());
    add(format!("SoftmaxOut = Cast <to = {t1}> (AttnWeightSoftmax)"));
    add("BiasRowMaxAxes = Constant <value = int64[1] {-1}> ()".into());
    add("BiasRowMax = ReduceMax (AttnBiasT, BiasRowMaxAxes)".into());
    add("FloatNegInfT = CastLike (FloatNegInf, AttnBiasT)".into());
    add("RowAllMasked = Equal (BiasRowMax, FloatNegInfT)".into());
    add("ZeroProbT = CastLike (ScalarZero, SoftmaxOut)".into());
    add("SoftmaxOutSafe = Where (RowAllMasked, ZeroProbT, SoftmaxOut)".into());
    if outputs[3] {
        let source = match int("qk_matmul_output_mode").unwrap_or(0) {
            1 if softcap != 0.0 => "QKAttnSoftcapped",
            1 => "QKAttnCast",
            2 => "QKAttnWeightSoftcap",
            3 => "SoftmaxOutSafe",
            _ => "QKAttnWeight",
        };
        add(format!("qk_matmul_output = Identity ({source})"));
    }
    add("YPreReshape = MatMul (SoftmaxOutSafe, VAttentionInput)".into());
    if is_3d {
        add("YTranspose = Transpose <perm = [0, 2, 1, 3]> (YPreReshape)".into());
        add("YNewShape = Concat <axis = 0> (Zero1D, Zero1D, NegOne)".into());
        add("Y = Reshape (YTranspose, YNewShape)".into());
    } else {
        add("Y = Identity (YPreReshape)".into());
    }
    let formals = if version >= 24 {
        "Q, K, V, attn_mask, past_key, past_value, nonpad_kv_seqlen"
    } else {
        "Q, K, V, attn_mask, past_key, past_value"
    };
    Some(function_text("Attention", version, formals, "Y, present_key, present_value, qk_matmul_output", &b))
}

/// Version 25's window overlay: keys further than `left` before or `right` after a query
/// (-1: no bound) are masked, with a per-batch offset for an external cache.
fn attention_window(add: &mut impl FnMut(String), left: i64, right: i64, external_cache: bool) {
    for line in [
        "WinZero = Constant <value = int64[1] {0}> ()",
        "WinOne = Constant <value = int64[1] {1}> ()",
        "WinZeroNoDim = Squeeze (WinZero, WinZero)",
        "WinOneNoDim = Squeeze (WinOne, WinZero)",
        "WinSeqLen = Squeeze (QSeqLen, WinZero)",
        "WinTotalSeqLen = Squeeze (NewKVSeqLen, WinZero)",
        "WinRangeRow = Range (WinZeroNoDim, WinSeqLen, WinOneNoDim)",
        "WinRangeCol = Range (WinZeroNoDim, WinTotalSeqLen, WinOneNoDim)",
    ] {
        add(line.into());
    }
    if left >= 0 {
        add(format!("LeftWindowSize = Constant <value = int64[1] {{{left}}}> ()"));
        add("LeftWindowSizeNoDim = Squeeze (LeftWindowSize, WinZero)".into());
    }
    if right >= 0 {
        add(format!("RightWindowSize = Constant <value = int64[1] {{{right}}}> ()"));
        add("RightWindowSizeNoDim = Squeeze (RightWindowSize, WinZero)".into());
    }
    let lines: &[&str] = if external_cache {
        &[
            "WinOffset = Sub (nonpad_kv_seqlen, QSeqLen)",
            "WinAxes123 = Constant <value = int64[3] {1, 2, 3}> ()",
            "WinAxes01 = Constant <value = int64[2] {0, 1}> ()",
            "WinOffset4D = Unsqueeze (WinOffset, WinAxes123)",
            "WinRow2D = Unsqueeze (WinRangeRow, WinOne)",
            "WinRow4D = Unsqueeze (WinRow2D, WinAxes01)",
            "WinCol2D = Unsqueeze (WinRangeCol, WinZero)",
            "WinCol4D = Unsqueeze (WinCol2D, WinAxes01)",
            "WinAbsPos = Add (WinRow4D, WinOffset4D)",
            "WinDiff = Sub (WinAbsPos, WinCol4D)",
        ]
    } else {
        &[
            "WinRow2D = Unsqueeze (WinRangeRow, WinOne)",
            "WinCol2D = Unsqueeze (WinRangeCol, WinZero)",
            "WinAbsPos = Add (WinRow2D, PastKVSeqLen)",
            "WinDiff = Sub (WinAbsPos, WinCol2D)",
        ]
    };
    for line in lines {
        add((*line).into());
    }
    let ok: &[&str] = match (left >= 0, right >= 0) {
        (true, true) => &[
            "WinLeftOk = LessOrEqual (WinDiff, LeftWindowSizeNoDim)",
            "WinRightDiff = Neg (WinDiff)",
            "WinRightOk = LessOrEqual (WinRightDiff, RightWindowSizeNoDim)",
            "WinOk = And (WinLeftOk, WinRightOk)",
        ],
        (true, false) => &["WinOk = LessOrEqual (WinDiff, LeftWindowSizeNoDim)"],
        _ => &["WinRightDiff = Neg (WinDiff)", "WinOk = LessOrEqual (WinRightDiff, RightWindowSizeNoDim)"],
    };
    for line in ok {
        add((*line).into());
    }
    add("WinMaskFloat = Where (WinOk, ScalarZero, FloatNegInf)".into());
    add("WinMask = CastLike (WinMaskFloat, AttnBiasCausalOrNot)".into());
    add("AttnBiasCausalWindow = Add (AttnBiasCausalOrNot, WinMask)".into());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze_text;

    /// The body text of each node of the model `text`, with whether it parses and lowers
    /// (a body that does not is never judged, and would let refusals pass silently).
    fn bodies(text: &str) -> Vec<(String, bool)> {
        let analysis = analyze_text(text);
        assert!(!analysis.has_errors(), "{text}\n{:?}", analysis.diagnostics);
        let model = &analysis.model;
        let graph = &model.graphs[model.graph.expect("a graph")];
        let registry = crate::schema::registry();
        let mut found = Vec::new();
        for &n in &graph.nodes {
            let node = &model.nodes[n];
            let op = node.op_type.as_ref().and_then(Str::as_str).expect("an operator");
            let schema = registry.lookup("", op, model.opset_version("").expect("an opset")).expect("a schema");
            let elem = |i: usize| node.has_input(i).then_some(DataType::Float);
            let text = body_text(node, schema, &elem).unwrap_or_else(|| panic!("no body for {op}"));
            let parses = Expansion::new(&text, node, schema).is_some();
            found.push((text, parses));
        }
        found
    }

    #[test]
    fn every_body_variant_parses() {
        let text = r#"<ir_version: 11, opset_import: ["" : 25]>
g (float[2,3,4] s, int64[2,4] t, float[3] w, float[2,4,8] q3, float[2,3,4,8] q4, float[2,4,8] m, int64[2] p) => (float l) {
  l = NegativeLogLikelihoodLoss (s, t)
  l1 = NegativeLogLikelihoodLoss <reduction: string = "none"> (s, t, w)
  l2 = NegativeLogLikelihoodLoss <ignore_index: int = 1> (s, t)
  l3 = NegativeLogLikelihoodLoss <ignore_index: int = 1, reduction: string = "sum"> (s, t, w)
  l4, lp = SoftmaxCrossEntropyLoss <ignore_index: int = 0> (s, t, w)
  g1 = GroupNormalization <num_groups: int = 1, epsilon: float = 0.001> (s, w, w)
  c1 = CenterCropPad (s, p)
  c2 = CenterCropPad <axes: ints = [0, -1]> (s, p)
  a1 = Attention <q_num_heads: int = 2, kv_num_heads: int = 2, softcap: float = 2.0, qk_matmul_output_mode: int = 1> (q3, q3, q3, m)
  a2, pk, pv, qk = Attention <is_causal: int = 1, left_window_size: int = 1, right_window_size: int = 0, qk_matmul_output_mode: int = 3> (q4, q4, q4, "", q4, q4)
  a3 = Attention <is_causal: int = 1, right_window_size: int = 1, scale: float = 0.5> (q4, q4, q4, m, "", "", p)
}
"#;
        let found = bodies(text);
        assert_eq!(found.len(), 11);
        for (body, parses) in &found {
            assert!(parses, "does not parse:\n{body}");
        }
        // The variants differ where onnx's builders do.
        assert!(found[2].0.contains("const_ignore_index = Constant <value = int64[1] {1}>"));
        assert!(found[7].0.contains("Gather (x_shape_alldims, axes_input)"));
        assert!(found[8].0.contains("QIntermediate = Reshape (Q, QIntermediateShape)"));
        assert!(!found[8].0.contains("qk_matmul_output = "), "a1 does not ask for the scores");
        assert!(found[9].0.contains("WinOk = And (WinLeftOk, WinRightOk)"));
        assert!(found[10].0.contains("CausalOffsetPerBatch = Sub (nonpad_kv_seqlen, QSeqLen)"));
    }

    /// A body node failing one of onnx's rules refuses the node; a body that holds does not.
    #[test]
    fn a_failing_body_node_refuses_the_caller() {
        let text = r#"<ir_version: 11, opset_import: ["" : 25]>
g (float[2,4,3] x, float[4] scale, float s0, int64 t0, float[24] flat, int64[n] run) => (float[2,4,3] y) {
  y = GroupNormalization <num_groups: int = 2> (x, scale, scale)
  u = Reshape (flat, run)
  l = NegativeLogLikelihoodLoss (u, t0)
}
"#;
        let analysis = analyze_text(text);
        let found: Vec<_> = crate::infer::infer_model(&analysis.model)
            .violations
            .into_iter()
            .filter(|d| d.code == "function-body-rule")
            .map(|d| d.message)
            .collect();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("NegativeLogLikelihoodLoss-22") && found[0].contains("expanded_target = Unsqueeze"));
    }
}
