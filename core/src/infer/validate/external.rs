//! Constant inputs stored in external data that onnx's inference reads. Where an inference
//! function needs the values of a constant input (an initializer or a `Constant`'s output:
//! Reshape's shape, Slice's starts…), it parses them with `ParseData`, which fails for a
//! tensor whose bytes are in external data ("Cannot parse data from external tensors").
//! `check_model(path, full_check=True)` checks the model as stored, without loading its
//! external data, and onnxruntime's loader infers before it loads it: both refuse such a
//! model. Which inputs each operator parses, and on what condition, was probed against
//! onnx 1.23.2 and onnxruntime (invalid models `external-constant-input--*`): most parse
//! only once the data input's rank is known, some only when other inputs are constant too.

use super::Violations;
use crate::diagnostic::Anchor;
use crate::ir::Node;

/// The inputs of `node` (operator `op` at schema version `since`) whose values onnx's
/// inference parses: `has_rank` says whether the rank of input 0 is known, `constant(i)`
/// whether input `i` is an initializer or a `Constant`'s output.
fn parsed_inputs(op: &str, since: i64, node: &Node, has_rank: bool, constant: &impl Fn(usize) -> bool) -> Vec<usize> {
    let absent_or_constant = |i: usize| !node.has_input(i) || constant(i);
    match op {
        // Parsed whatever is known of the other inputs.
        "Reshape" if since >= 5 => vec![1],
        "ConstantOfShape" | "BlackmanWindow" | "HammingWindow" | "HannWindow" => vec![0],
        "OneHot" if since < 11 => vec![0, 1],
        "OneHot" => vec![1],
        "Range" if constant(0) && constant(1) && constant(2) => vec![0, 1, 2],
        "MelWeightMatrix" if constant(0) && constant(1) => vec![0, 1],
        // The rest parse only once the data's rank is known.
        _ if !has_rank => Vec::new(),
        "Expand" | "SplitToSequence" | "CenterCropPad" | "AffineGrid" => vec![1],
        "Tile" if since >= 6 => vec![1],
        "TopK" if since >= 10 => vec![1],
        "Squeeze" | "Unsqueeze" | "Split" | "ReduceSum" if since >= 13 => vec![1],
        "ReduceMax" | "ReduceMin" | "ReduceMean" | "ReduceProd" | "ReduceL1" | "ReduceL2" | "ReduceLogSum"
        | "ReduceLogSumExp" | "ReduceSumSquare"
            if since >= 18 =>
        {
            vec![1]
        }
        // Version 18 on: the axes first; the pads only once the axes are known (or absent).
        "Pad" if since >= 18 && absent_or_constant(3) => vec![3, 1],
        "Pad" if (11..18).contains(&since) => vec![1],
        "Col2Im" => vec![1, 2],
        "Resize" if since >= 11 => vec![2, 3],
        "Resize" | "Upsample" if since >= 9 => vec![1],
        "Slice" if since >= 10 && constant(1) && constant(2) && absent_or_constant(3) && absent_or_constant(4) => {
            vec![1, 2, 3, 4]
        }
        // Version 20 takes the axis as an input: the length is parsed once it is known.
        "DFT" if since >= 20 && absent_or_constant(2) => vec![2, 1],
        "DFT" if since < 20 => vec![1],
        // The frame length only once the step is known.
        "STFT" if constant(1) => vec![1, 3],
        _ => Vec::new(),
    }
}

/// Reports each input of `node` that onnx's inference parses ([`parsed_inputs`]) and whose
/// tensor, `external(i)`, is stored in external data.
pub(super) fn external_constant_inputs(
    node: &Node,
    since: i64,
    has_rank: bool,
    constant: &impl Fn(usize) -> bool,
    external: &impl Fn(usize) -> Option<String>,
    v: &mut Violations<'_, '_>,
) {
    let op = v.op;
    for i in parsed_inputs(op, since, node, has_rank, constant) {
        let Some(name) = node.has_input(i).then(|| external(i)).flatten() else { continue };
        let message = format!(
            "input {i} of {op} is '{name}', stored in external data, but onnx's inference reads its values and \
             cannot read external data (onnxruntime refuses to load the model too): keep it in the model \
             (`onnx convert --embed-external`, or a size threshold above it when saving)"
        );
        v.error("external-constant-input", Anchor::NodeInput(v.n, i), message);
    }
}
