//! What one node of an operator costs in multiply-accumulates (MACs), from its attributes
//! and the (possibly symbolic) shapes of its inputs and outputs. The operator table
//! (`infer::operator_table`) holds each operator's rule under its key, beside its schema,
//! inference rule and kernels; this module is where the rules are written, one list.
//!
//! The convention is onnx-tool's, so that totals compare: a matrix product or convolution
//! counts one MAC per multiply-add (plus one per output for an added bias); an elementwise
//! operation counts per output element what it costs in simple instructions, with onnx-tool's
//! weights: add, multiply, compare 1; divide 4; exp 32; log 43; sqrt 24; sin, cos 39; tanh
//! 38. Data movement (Reshape, Transpose, Gather, Concat, Cast, …) costs nothing. Where
//! onnx-tool's formula miscounts we count what the operator computes, and
//! `docs/cost.md` lists each such difference.

use super::count::Count;
use crate::ir::{AttributeValue, Node};

/// What the rule of a node sees.
#[derive(Debug)]
pub struct Ctx<'a> {
    pub node: &'a Node,
    /// Each input's shape, `None` where inference found none (or the input is omitted).
    pub inputs: Vec<Option<Vec<Count>>>,
    /// Each output's shape, as for the inputs.
    pub outputs: Vec<Option<Vec<Count>>>,
}

impl Ctx<'_> {
    fn input(&self, i: usize) -> Option<&[Count]> {
        self.inputs.get(i)?.as_deref()
    }

    fn output(&self, i: usize) -> Option<&[Count]> {
        self.outputs.get(i)?.as_deref()
    }

    fn has_input(&self, i: usize) -> bool {
        self.node.has_input(i)
    }

    fn int(&self, name: &str, default: i64) -> i64 {
        match self.node.attribute(name).and_then(|a| a.value()) {
            Some(AttributeValue::Int(v)) => v,
            _ => default,
        }
    }

    fn ints(&self, name: &str) -> Option<&[i64]> {
        match self.node.attribute(name)?.value()? {
            AttributeValue::Ints(v) => Some(v),
            _ => None,
        }
    }

    fn string(&self, name: &str) -> Option<&str> {
        match self.node.attribute(name)?.value()? {
            AttributeValue::String(s) => s.as_str(),
            _ => None,
        }
    }

    /// Elements of output `i`.
    fn output_elements(&self, i: usize) -> Option<Count> {
        Count::product(self.output(i)?)
    }

    /// Elements of input `i`.
    fn input_elements(&self, i: usize) -> Option<Count> {
        Count::product(self.input(i)?)
    }
}

/// How an operator's MACs are counted.
#[derive(Clone, Copy, Debug)]
pub enum Rule {
    /// Nothing computed: data movement, shapes, constants.
    Free,
    /// So many operations per element of the first output.
    PerOutput(i128),
    /// So many per element of the first output for each input after the first (Sum, Max).
    PerOutputPerExtraInput(i128),
    /// So many per element of the first input (reductions).
    PerInput(i128),
    /// A formula of its own.
    Formula(fn(&Ctx) -> Option<Count>),
}

impl Rule {
    /// The MACs of the node `ctx` describes; `None` when a shape it needs is unknown.
    pub fn macs(self, ctx: &Ctx) -> Option<Count> {
        match self {
            Rule::Free => Some(Count::zero()),
            Rule::PerOutput(w) => ctx.output_elements(0)?.scaled(w),
            Rule::PerOutputPerExtraInput(w) => {
                let extra = ctx.node.inputs.len().saturating_sub(1).max(1) as i128;
                ctx.output_elements(0)?.scaled(w * extra)
            }
            Rule::PerInput(w) => ctx.input_elements(0)?.scaled(w),
            Rule::Formula(f) => f(ctx),
        }
    }
}

// Simple-instruction weights (onnx-tool's): what one element of an operation costs.
const ADD: i128 = 1;
const MUL: i128 = 1;
const CMP: i128 = 1;
const DIV: i128 = 4;
const EXP: i128 = 32;
const LOG: i128 = 43;
const SQRT: i128 = 24;
const SIN: i128 = 39;
const TANH: i128 = EXP + 2 * ADD + DIV;
/// A normalization's per-element work (subtract the mean, square, accumulate, scale, shift)
/// and per-row work (a square root and a division).
const NORM_ELEMENT: i128 = 3 * MUL + 4 * ADD;
const NORM_ROW: i128 = ADD + SQRT + DIV;
/// Root-mean-square normalization: square, accumulate, scale twice.
const RMS_ELEMENT: i128 = 3 * MUL + ADD;
/// The softmax of one element: an exponential and a division.
const SOFTMAX: i128 = EXP + DIV;

use Rule::*;

/// Every operator with a cost rule, as (domain, operator, rule); one entry each (the
/// table's test checks it).
pub const RULES: &[(&str, &str, Rule)] = &[
    // Matrix products and convolutions.
    ("", "Conv", Formula(conv)),
    ("", "ConvInteger", Formula(conv_integer)),
    ("", "QLinearConv", Formula(qlinear_conv)),
    ("", "ConvTranspose", Formula(conv_transpose)),
    ("", "Gemm", Formula(gemm)),
    ("", "MatMul", Formula(matmul)),
    ("", "MatMulInteger", Formula(matmul)),
    ("", "QLinearMatMul", Formula(matmul)),
    ("", "Einsum", Formula(einsum)),
    ("", "LSTM", Formula(lstm)),
    ("", "GRU", Formula(gru)),
    ("", "RNN", Formula(rnn)),
    ("", "Attention", Formula(attention)),
    // Pooling and normalization.
    ("", "MaxPool", Formula(pool)),
    ("", "AveragePool", Formula(pool)),
    ("", "LpPool", Formula(pool)),
    ("", "GlobalAveragePool", Formula(global_average_pool)),
    ("", "GlobalMaxPool", PerInput(CMP)),
    ("", "GlobalLpPool", PerInput(MUL + ADD)),
    ("", "BatchNormalization", PerOutput(NORM_ROW + ADD + MUL)),
    ("", "InstanceNormalization", PerOutput(2 * ADD + MUL + DIV)),
    ("", "LayerNormalization", Formula(layer_normalization)),
    ("", "GroupNormalization", PerOutput(NORM_ELEMENT)),
    ("", "RMSNormalization", Formula(rms_normalization)),
    ("", "LpNormalization", PerOutput(EXP + ADD)),
    ("", "LRN", Formula(lrn)),
    ("", "Softmax", PerOutput(SOFTMAX)),
    ("", "LogSoftmax", PerOutput(EXP + DIV + ADD + LOG)),
    ("", "Hardmax", PerOutput(CMP)),
    // Reductions.
    ("", "ReduceMean", PerInput(ADD)),
    ("", "ReduceSum", PerInput(ADD)),
    ("", "ReduceProd", PerInput(MUL)),
    ("", "ReduceMin", PerInput(CMP)),
    ("", "ReduceMax", PerInput(CMP)),
    ("", "ReduceL1", PerInput(ADD + CMP)),
    ("", "ReduceL2", PerInput(ADD + SQRT)),
    ("", "ReduceSumSquare", PerInput(MUL + ADD)),
    ("", "ReduceLogSum", PerInput(ADD)),
    ("", "ReduceLogSumExp", PerInput(EXP + ADD)),
    ("", "ArgMax", PerInput(CMP)),
    ("", "ArgMin", PerInput(CMP)),
    ("", "TopK", PerInput(CMP)),
    ("", "CumSum", PerOutput(ADD)),
    ("", "NonZero", PerInput(CMP)),
    // Elementwise arithmetic.
    ("", "Add", PerOutput(ADD)),
    ("", "Sub", PerOutput(ADD)),
    ("", "Mul", PerOutput(MUL)),
    ("", "Div", PerOutput(DIV)),
    ("", "Mod", PerOutput(ADD)),
    ("", "Pow", PerOutput(EXP)),
    ("", "Neg", PerOutput(CMP)),
    ("", "Abs", PerOutput(CMP)),
    ("", "Sign", PerOutput(CMP)),
    ("", "Ceil", PerOutput(ADD)),
    ("", "Floor", PerOutput(CMP)),
    ("", "Round", PerOutput(CMP)),
    ("", "Reciprocal", PerOutput(DIV)),
    ("", "Sqrt", PerOutput(SQRT)),
    ("", "Exp", PerOutput(EXP)),
    ("", "Log", PerOutput(LOG)),
    ("", "Sin", PerOutput(SIN)),
    ("", "Cos", PerOutput(SIN)),
    ("", "Tan", PerOutput(2 * SIN + DIV)),
    ("", "Atan", PerOutput(SQRT + 4 * MUL + DIV)),
    ("", "Asin", PerOutput(SQRT + 4 * MUL + DIV)),
    ("", "Acos", PerOutput(SQRT + 4 * MUL + DIV)),
    ("", "Sinh", PerOutput(EXP + 2 * ADD + DIV)),
    ("", "Cosh", PerOutput(EXP + 2 * ADD + DIV)),
    ("", "Tanh", PerOutput(TANH)),
    ("", "Erf", PerOutput(EXP + 4 * MUL)),
    ("", "Sum", PerOutputPerExtraInput(ADD)),
    ("", "Mean", PerOutputPerExtraInput(ADD)),
    ("", "Max", PerOutputPerExtraInput(CMP)),
    ("", "Min", PerOutputPerExtraInput(CMP)),
    ("", "Clip", PerOutput(2 * CMP)),
    // Activations.
    ("", "Relu", PerOutput(CMP)),
    ("", "LeakyRelu", PerOutput(MUL + CMP)),
    ("", "PRelu", PerOutput(MUL + CMP)),
    ("", "ThresholdedRelu", PerOutput(CMP)),
    ("", "Sigmoid", PerOutput(EXP)),
    ("", "HardSigmoid", PerOutput(MUL + ADD + 2 * CMP)),
    ("", "HardSwish", PerOutput(2 * MUL + ADD + 2 * CMP)),
    ("", "Softplus", PerOutput(EXP + ADD + LOG)),
    ("", "Softsign", PerOutput(CMP + ADD + DIV)),
    ("", "Elu", PerOutput(CMP + EXP + ADD + MUL)),
    ("", "Selu", PerOutput(CMP + EXP + ADD + 2 * MUL)),
    ("", "Celu", PerOutput(CMP + EXP + ADD + MUL + DIV)),
    ("", "Gelu", PerOutput(EXP + 2 * MUL)),
    ("", "Mish", PerOutput(EXP + ADD + LOG + TANH + MUL)),
    ("", "Swish", PerOutput(EXP + MUL)),
    ("", "Shrink", PerOutput(2 * CMP + ADD)),
    // Comparisons and logic.
    ("", "Equal", PerOutput(CMP)),
    ("", "Less", PerOutput(CMP)),
    ("", "LessOrEqual", PerOutput(CMP)),
    ("", "Greater", PerOutput(CMP)),
    ("", "GreaterOrEqual", PerOutput(CMP)),
    ("", "Not", PerOutput(CMP)),
    ("", "And", PerOutput(CMP)),
    ("", "Or", PerOutput(CMP)),
    ("", "Xor", PerOutput(CMP)),
    ("", "IsNaN", PerOutput(CMP)),
    ("", "IsInf", PerOutput(CMP)),
    ("", "BitShift", PerOutput(CMP)),
    ("", "BitwiseAnd", PerOutput(CMP)),
    ("", "BitwiseOr", PerOutput(CMP)),
    ("", "BitwiseXor", PerOutput(CMP)),
    ("", "BitwiseNot", PerOutput(CMP)),
    // Quantization.
    ("", "QuantizeLinear", PerOutput(MUL + ADD)),
    ("", "DequantizeLinear", PerOutput(MUL + ADD)),
    ("", "DynamicQuantizeLinear", PerInput(2 * CMP + MUL + ADD)),
    // Resampling.
    ("", "Resize", Formula(resize)),
    ("", "Upsample", Formula(resize)),
    ("", "GridSample", Formula(resize)),
    // Data movement, shapes and constants: nothing computed.
    ("", "Identity", Free),
    ("", "Where", Free),
    ("", "Reshape", Free),
    ("", "Flatten", Free),
    ("", "Squeeze", Free),
    ("", "Unsqueeze", Free),
    ("", "Transpose", Free),
    ("", "Concat", Free),
    ("", "Split", Free),
    ("", "Slice", Free),
    ("", "Gather", Free),
    ("", "GatherElements", Free),
    ("", "GatherND", Free),
    ("", "Scatter", Free),
    ("", "ScatterND", Free),
    ("", "ScatterElements", Free),
    ("", "Expand", Free),
    ("", "Tile", Free),
    ("", "Pad", Free),
    ("", "Shape", Free),
    ("", "Size", Free),
    ("", "Constant", Free),
    ("", "ConstantOfShape", Free),
    ("", "Cast", Free),
    ("", "CastLike", Free),
    ("", "DepthToSpace", Free),
    ("", "SpaceToDepth", Free),
    ("", "Dropout", Free),
    ("", "OneHot", Free),
    ("", "Range", Free),
    ("", "EyeLike", Free),
    ("", "Trilu", Free),
    ("", "Compress", Free),
    ("", "ReverseSequence", Free),
    ("", "SplitToSequence", Free),
    ("", "ConcatFromSequence", Free),
    ("", "SequenceAt", Free),
    ("", "SequenceConstruct", Free),
    ("", "SequenceEmpty", Free),
    ("", "SequenceInsert", Free),
    ("", "SequenceLength", Free),
    ("", "Optional", Free),
    ("", "OptionalGetElement", Free),
    ("", "OptionalHasElement", Free),
    // onnxruntime's com.microsoft operators.
    ("com.microsoft", "FusedConv", Formula(conv)),
    ("com.microsoft", "NhwcConv", Formula(conv)),
    ("com.microsoft", "FusedGemm", Formula(gemm)),
    ("com.microsoft", "FusedMatMul", Formula(matmul)),
    ("com.microsoft", "MatMulIntegerToFloat", Formula(matmul)),
    ("com.microsoft", "DynamicQuantizeMatMul", Formula(matmul)),
    ("com.microsoft", "MatMulNBits", Formula(matmul_nbits)),
    ("com.microsoft", "Attention", Formula(contrib_attention)),
    ("com.microsoft", "QAttention", Formula(contrib_attention)),
    ("com.microsoft", "QGemm", Formula(qgemm)),
    ("com.microsoft", "DynamicQuantizeLSTM", Formula(lstm)),
    ("com.microsoft", "QEmbedLayerNormalization", Formula(embed_layer_normalization)),
    ("com.microsoft", "MRotaryEmbedding", PerOutput(2 * MUL + ADD)),
    ("com.microsoft", "MultiHeadAttention", Formula(multi_head_attention)),
    ("com.microsoft", "GroupQueryAttention", Formula(group_query_attention)),
    ("com.microsoft", "SkipLayerNormalization", Formula(skip_layer_normalization)),
    ("com.microsoft", "SkipSimplifiedLayerNormalization", Formula(skip_layer_normalization)),
    ("", "SimplifiedLayerNormalization", Formula(rms_normalization)),
    ("com.microsoft", "EmbedLayerNormalization", Formula(embed_layer_normalization)),
    ("com.microsoft", "BiasGelu", PerOutput(ADD + EXP + 2 * MUL)),
    ("com.microsoft", "FastGelu", PerOutput(TANH + 4 * MUL + ADD)),
    ("com.microsoft", "Gelu", PerOutput(EXP + 2 * MUL)),
    ("com.microsoft", "QuickGelu", PerOutput(EXP + 2 * MUL)),
    ("com.microsoft", "BiasAdd", PerOutput(2 * ADD)),
    ("com.microsoft", "RotaryEmbedding", PerOutput(2 * MUL + ADD)),
    ("com.microsoft", "GatherBlockQuantized", PerOutput(MUL + ADD)),
    ("com.microsoft", "QLinearAdd", PerOutput(ADD)),
    ("com.microsoft", "QLinearMul", PerOutput(MUL)),
    ("com.microsoft", "QLinearSigmoid", PerOutput(EXP)),
    ("com.microsoft", "QLinearLeakyRelu", PerOutput(MUL + CMP)),
    ("com.microsoft", "QLinearGlobalAveragePool", Formula(global_average_pool)),
    ("com.microsoft", "QLinearAveragePool", Formula(pool)),
    ("com.microsoft", "QLinearConcat", Free),
    ("com.microsoft", "QuantizeLinear", PerOutput(MUL + ADD)),
    ("com.microsoft", "DequantizeLinear", PerOutput(MUL + ADD)),
];

/// The cost rule of `op` in `domain` (`""` is the default domain).
pub fn rule_of(domain: &str, op: &str) -> Option<Rule> {
    RULES.iter().find(|(d, o, _)| *d == domain && *o == op).map(|&(_, _, rule)| rule)
}

/// `outputs × reduction (+ outputs for a bias)`: a convolution whose weight is input
/// `weight` (`[M, C/group, k…]`) and whose bias, if any, is input `bias`.
fn convolution(ctx: &Ctx, weight: usize, bias: Option<usize>) -> Option<Count> {
    let outputs = ctx.output_elements(0)?;
    let per_output = Count::product(ctx.input(weight)?.get(1..)?)?;
    let macs = outputs.times(&per_output)?;
    match bias {
        Some(b) if ctx.has_input(b) => macs.plus(&outputs),
        _ => Some(macs),
    }
}

fn conv(ctx: &Ctx) -> Option<Count> {
    convolution(ctx, 1, Some(2))
}

fn conv_integer(ctx: &Ctx) -> Option<Count> {
    convolution(ctx, 1, None)
}

fn qlinear_conv(ctx: &Ctx) -> Option<Count> {
    convolution(ctx, 3, Some(8))
}

/// Each input element is multiplied into `Cout/group × k…` outputs (weight `[C, Cout/group,
/// k…]`). onnx-tool multiplies the output's elements instead, which overcounts by the
/// stride's product and the ratio of channels.
fn conv_transpose(ctx: &Ctx) -> Option<Count> {
    let per_input = Count::product(ctx.input(1)?.get(1..)?)?;
    let macs = ctx.input_elements(0)?.times(&per_input)?;
    if ctx.has_input(2) { macs.plus(&ctx.output_elements(0)?) } else { Some(macs) }
}

fn gemm(ctx: &Ctx) -> Option<Count> {
    gemm_of(ctx, 2)
}

/// onnxruntime's quantized Gemm: A, its scale and zero point, B, …, C at 6.
fn qgemm(ctx: &Ctx) -> Option<Count> {
    gemm_of(ctx, 6)
}

/// `outputs × K (+ outputs for C, input `c`)`, K from A and transA.
fn gemm_of(ctx: &Ctx, c: usize) -> Option<Count> {
    let a = ctx.input(0)?;
    let k = if ctx.int("transA", 0) != 0 { a.first()? } else { a.get(1)? };
    let outputs = ctx.output_elements(0)?;
    let macs = outputs.times(k)?;
    if ctx.has_input(c) { macs.plus(&outputs) } else { Some(macs) }
}

/// `outputs × K`, K the first input's last dimension (its only one for a vector).
fn matmul(ctx: &Ctx) -> Option<Count> {
    ctx.output_elements(0)?.times(ctx.input(0)?.last()?)
}

/// `outputs × K`, with K an attribute (the weight is packed); plus the bias.
fn matmul_nbits(ctx: &Ctx) -> Option<Count> {
    let outputs = ctx.output_elements(0)?;
    let macs = outputs.times(&Count::of(ctx.int("K", 0).into()))?;
    if ctx.has_input(5) { macs.plus(&outputs) } else { Some(macs) }
}

/// The product of every distinct index's size: each combination is one multiply-add.
fn einsum(ctx: &Ctx) -> Option<Count> {
    let equation = ctx.string("equation")?;
    let lhs = equation.split("->").next()?;
    if lhs.contains('.') {
        return None;
    }
    let mut sizes: Vec<(char, Count)> = Vec::new();
    for (i, term) in lhs.split(',').enumerate() {
        let shape = ctx.input(i)?;
        let letters: Vec<char> = term.trim().chars().collect();
        if letters.len() != shape.len() {
            return None;
        }
        for (letter, size) in letters.into_iter().zip(shape) {
            if !sizes.iter().any(|(l, _)| *l == letter) {
                sizes.push((letter, size.clone()));
            }
        }
    }
    Count::product(sizes.iter().map(|(_, s)| s))
}

/// A recurrent layer, step by step: the input and recurrent products of every gate
/// (`W` and `R` hold all gates of all directions), the biases, and per hidden value the
/// gates' activations and the state update.
fn recurrent(ctx: &Ctx, per_hidden: i128) -> Option<Count> {
    let x = ctx.input(0)?;
    let (seq, batch) = (x.first()?, x.get(1)?);
    let steps = seq.times(batch)?;
    let weights = ctx.input_elements(1)?.plus(&ctx.input_elements(2)?)?;
    let mut macs = weights.times(&steps)?;
    if ctx.has_input(3) {
        macs = macs.plus(&ctx.input_elements(3)?.times(&steps)?)?;
    }
    let directions = if ctx.string("direction") == Some("bidirectional") { 2 } else { 1 };
    let hidden = Count::of(ctx.int("hidden_size", 0).into());
    let hidden_values = steps.times(&hidden)?.scaled(directions)?;
    macs.plus(&hidden_values.scaled(per_hidden)?)
}

fn lstm(ctx: &Ctx) -> Option<Count> {
    // Four gate sums, three sigmoids, two tanh, then c = f*c + i*g and h = o*tanh(c).
    recurrent(ctx, 4 * ADD + 3 * EXP + 2 * TANH + ADD + 3 * MUL)
}

fn gru(ctx: &Ctx) -> Option<Count> {
    // Three gate sums, two sigmoids, one tanh, then h = (1-z)*n + z*h.
    recurrent(ctx, 3 * ADD + 2 * EXP + TANH + 2 * ADD + 3 * MUL)
}

fn rnn(ctx: &Ctx) -> Option<Count> {
    recurrent(ctx, ADD + TANH)
}

/// Scaled dot-product attention: `Q·Kᵀ` (queries × keys × head size), the softmax of every
/// score, and the scores times `V`; from the shapes of Q (`[B, H, S, E]`, or `[B, S, H·E]`),
/// K and the output.
fn attention(ctx: &Ctx) -> Option<Count> {
    let k = ctx.input(1)?;
    let keys = if k.len() == 4 { k.get(2)? } else { k.get(1)? };
    let q = ctx.input(0)?;
    let heads = if q.len() == 4 { q.get(1)?.clone() } else { Count::of(ctx.int("q_num_heads", 1).into()) };
    let queries = if q.len() == 4 { q.get(2)? } else { q.get(1)? };
    scores_and_values(ctx.input_elements(0)?, ctx.output_elements(0)?, &q[0], &heads, queries, keys)
}

/// `Q·Kᵀ` + softmax + `·V` for queries of `q_elements` values, an output of `y_elements`,
/// `batch × heads × queries × keys` scores.
fn scores_and_values(
    q_elements: Count,
    y_elements: Count,
    batch: &Count,
    heads: &Count,
    queries: &Count,
    keys: &Count,
) -> Option<Count> {
    let scores = Count::product([batch, heads, queries, keys])?;
    q_elements.times(keys)?.plus(&y_elements.times(keys)?)?.plus(&scores.scaled(SOFTMAX)?)
}

/// onnxruntime's fused Attention: the Q, K and V projections (input `[B, S, in]` times
/// weights `[in, q+k+v]`, plus bias), then attention over the past and present keys.
fn contrib_attention(ctx: &Ctx) -> Option<Count> {
    let x = ctx.input(0)?;
    let w = ctx.input(1)?;
    let projected = Count::product([x.first()?, x.get(1)?, w.get(1)?])?;
    let mut macs = ctx.input_elements(0)?.times(w.get(1)?)?;
    if ctx.has_input(2) {
        macs = macs.plus(&projected)?;
    }
    let (batch, queries) = (x.first()?, x.get(1)?);
    // The past, `[2, B, N, P, H]`, adds P keys.
    let keys = match ctx.input(4) {
        Some(past) if ctx.has_input(4) && past.len() == 5 => queries.plus(&past[3])?,
        _ => queries.clone(),
    };
    let heads = Count::of(ctx.int("num_heads", 1).into());
    let y = ctx.output_elements(0)?;
    macs.plus(&scores_and_values(y.clone(), y, batch, &heads, queries, &keys)?)
}

/// Keys of an attention input: `[B, L, D]` or `[B, N, L, H]`.
fn key_count(shape: &[Count]) -> Option<&Count> {
    if shape.len() == 4 { shape.get(2) } else { shape.get(1) }
}

fn multi_head_attention(ctx: &Ctx) -> Option<Count> {
    let q = ctx.input(0)?;
    let mut keys = key_count(ctx.input(1)?)?.clone();
    // A past key `[B, N, P, H]` (input 6) adds P keys.
    if ctx.has_input(6) {
        keys = keys.plus(ctx.input(6)?.get(2)?)?;
    }
    let heads = Count::of(ctx.int("num_heads", 1).into());
    let y = ctx.output_elements(0)?;
    scores_and_values(ctx.input_elements(0)?, y, q.first()?, &heads, q.get(1)?, &keys)
}

/// Grouped-query attention: queries `[B, S, N·H]`; the keys attended are the present key's
/// (output 1, `[B, kvN, T, H]`) when its length is known, else the past key's (input 3,
/// `[B, kvN, P, H]`) plus the new ones.
fn group_query_attention(ctx: &Ctx) -> Option<Count> {
    let q = ctx.input(0)?;
    let new_keys = || match ctx.input(1) {
        Some(k) if ctx.has_input(1) => key_count(k).cloned(),
        // Packed: the keys are the queries' positions.
        _ => q.get(1).cloned(),
    };
    let present = ctx.output(1).filter(|_| ctx.node.has_output(1)).and_then(|p| p.get(2).cloned());
    let past = ctx.input(3).filter(|_| ctx.has_input(3)).and_then(|p| p.get(2).cloned());
    let keys = match (present, past) {
        (Some(total), _) => total,
        (None, Some(past)) => past.plus(&new_keys()?)?,
        (None, None) => new_keys()?,
    };
    let heads = Count::of(ctx.int("num_heads", 1).into());
    let y = ctx.output_elements(0)?;
    scores_and_values(y.clone(), y, q.first()?, &heads, q.get(1)?, &keys)
}

/// Rows of a normalization over the last axes from `axis` on.
fn normalized_rows(shape: &[Count], axis: i64) -> Option<Count> {
    let axis = if axis < 0 { axis + shape.len() as i64 } else { axis };
    let axis = usize::try_from(axis).ok().filter(|&a| a <= shape.len())?;
    Count::product(&shape[..axis])
}

fn layer_normalization(ctx: &Ctx) -> Option<Count> {
    let x = ctx.input(0)?;
    let rows = normalized_rows(x, ctx.int("axis", -1))?;
    ctx.input_elements(0)?.scaled(NORM_ELEMENT)?.plus(&rows.scaled(NORM_ROW)?)
}

fn rms_normalization(ctx: &Ctx) -> Option<Count> {
    let x = ctx.input(0)?;
    let rows = normalized_rows(x, ctx.int("axis", -1))?;
    ctx.input_elements(0)?.scaled(RMS_ELEMENT)?.plus(&rows.scaled(NORM_ROW)?)
}

/// The skip's addition (and the bias's), then the normalization.
fn skip_layer_normalization(ctx: &Ctx) -> Option<Count> {
    let x = ctx.input(0)?;
    let rows = normalized_rows(x, -1)?;
    let simplified = ctx.node.op_type.as_ref().is_some_and(|o| o.as_bytes().starts_with(b"SkipSimplified"));
    let element = if simplified { RMS_ELEMENT } else { NORM_ELEMENT } + ADD;
    let bias = if ctx.has_input(if simplified { 3 } else { 4 }) { ADD } else { 0 };
    ctx.input_elements(0)?.scaled(element + bias)?.plus(&rows.scaled(NORM_ROW)?)
}

/// Word, position (and segment) embeddings added, then normalized: output `[B, S, H]`.
fn embed_layer_normalization(ctx: &Ctx) -> Option<Count> {
    let y = ctx.output(0)?;
    let rows = normalized_rows(y, -1)?;
    ctx.output_elements(0)?.scaled(2 * ADD + NORM_ELEMENT)?.plus(&rows.scaled(NORM_ROW)?)
}

/// Each output compares or adds every position of its window.
fn pool(ctx: &Ctx) -> Option<Count> {
    let window: i128 = ctx.ints("kernel_shape")?.iter().try_fold(1i128, |acc, &k| acc.checked_mul(k.into()))?;
    ctx.output_elements(0)?.scaled(window)
}

/// Every input element added, every output divided.
fn global_average_pool(ctx: &Ctx) -> Option<Count> {
    ctx.input_elements(0)?.plus(&ctx.output_elements(0)?.scaled(DIV)?)
}

/// Per output element, the input elements it is made of: none to interpolate for
/// nearest, 4 for linear, 8 for cubic.
fn resize(ctx: &Ctx) -> Option<Count> {
    let mode = ctx.string("mode").unwrap_or(if ctx.node.op_type.as_ref().is_some_and(|o| o == "GridSample") {
        "linear"
    } else {
        "nearest"
    });
    let per_output = match mode {
        "nearest" => 0,
        "cubic" | "bicubic" => 8,
        _ => 4,
    };
    ctx.output_elements(0)?.scaled(per_output)
}

/// Local response normalization over `size` channels.
fn lrn(ctx: &Ctx) -> Option<Count> {
    let size = i128::from(ctx.int("size", 1));
    ctx.output_elements(0)?.scaled(DIV + EXP + ADD + size * MUL)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each operator has one rule, and each names an operator the schema table knows.
    #[test]
    fn every_rule_has_one_known_operator() {
        let mut seen = std::collections::HashSet::new();
        for &(domain, op, _) in RULES {
            assert!(seen.insert((domain, op)), "{domain}::{op} has two cost rules");
            assert!(crate::infer::operator_table().get(domain, op).is_some(), "{domain}::{op} has no schema");
        }
    }
}
