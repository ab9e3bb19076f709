//! The kernels under the core's operator keys (`onnx_core::infer::OpKey`): for each
//! operator of the core's table, the kernel in force at each of its versions, built once
//! from the families of [`crate::kernels`]. A family's kernel is registered from version 1
//! and serves every version (it reads the imported version from its context where versions
//! differ); a kernel in [`FROM_VERSION`] takes over from its since-version on.
//!
//! What the table does not give a kernel is run otherwise or not at all: control flow by
//! the runner, an operator with a schema function body through that body, and the rest is
//! listed in [`WITHOUT_KERNEL`] with the reason. The tests below hold the three together:
//! every key of the core's table is covered one way, and no key is claimed twice.

use std::sync::OnceLock;

use onnx_core::infer::{ByOperator, operator_table};

use crate::kernels::{DEFAULT_DOMAIN, Kernel, OTHER_DOMAINS};

/// Kernels that apply from a later version of their operator on, in place of its family's
/// kernel: (domain, operator, since-version, kernel).
pub const FROM_VERSION: &[(&str, &str, i64, Kernel)] = &[];

/// The operators of the default domain whose kernels are handed strided views as they are
/// ([`crate::view`]); every other kernel gets row-major copies.
const READS_VIEWS: [&str; 10] = ["MatMul", "Add", "Sub", "Mul", "Div", "Shape", "Size", "Transpose", "Slice", "Expand"];

/// Operators the schemas know that have no kernel, no schema function body, and are not
/// control flow, with the reason: (domain, operator, reason).
pub const WITHOUT_KERNEL: &[(&str, &str, &str)] = &[
    ("", "MaxRoiPool", "no kernel yet: neither onnx's node tests nor the real models use it"),
    ("ai.onnx.preview.training", "Gradient", "differentiates a graph: training, which the evaluator does not do"),
];

/// onnxruntime's `com.microsoft` operators that have no kernel yet (issue 54 adds them,
/// those its optimizers, quantizers and genai builder write first). An operator leaves this
/// list with the commit that registers its kernel: the coverage test fails on a stale entry.
pub const CONTRIB_WITHOUT_KERNEL: &[&str] = &[
    "AttnLSTM",
    "BeamSearch",
    "BiasDropout",
    "BiasSoftmax",
    "BiasSplitGelu",
    "BifurcationDetector",
    "BitmaskBiasDropout",
    "BitmaskDropout",
    "BranchwiseRMSNorm",
    "CDist",
    "CausalConvWithState",
    "ComplexMul",
    "ComplexMulConj",
    "ConvStateReplay",
    "ConvTransposeWithDynamicPads",
    "CropAndResize",
    "DecoderAttention",
    "DecoderMaskedMultiHeadAttention",
    "DecoderMaskedSelfAttention",
    "DequantizeBFP",
    "DequantizeLinear",
    "DequantizeWithOrder",
    "DynamicSparseAttention",
    "DynamicTimeWarping",
    "EPContext",
    "EngramGate",
    "ExpandDims",
    "FusedMatMulActivation",
    "GatedAdd",
    "GatedDeltaNet",
    "GatedDeltaNetStateReplay",
    "GatedRMSNorm",
    "GatedRelativePositionBias",
    "GatherPacked",
    "GemmFastGelu",
    "GemmFloat8",
    "GemmaRotaryEmbedding",
    "GreedySearch",
    "GridSample",
    "GroupNorm",
    "HyperConnectionLowRankMix",
    "HyperConnectionPostMix",
    "HyperConnectionPreMix",
    "Inverse",
    "Irfft",
    "IsAllFinite",
    "LinearAttention",
    "LinearAttentionGate",
    "LongformerAttention",
    "MRotaryEmbedding",
    "Mamba2Verify",
    "MatMulBlockQuantizedFp4Weight",
    "MatMulBlockQuantizedFp8Weight",
    "MatMulBnb4",
    "MatMulFpQ4",
    "MatMulInteger16",
    "MatMulNBitsMlp",
    "MatMulNBitsQLoRA",
    "MatMulNBitsQkv",
    "MatMulPacked",
    "MaxpoolWithMask",
    "MoE",
    "MoEGroupRouter",
    "MoEPacked",
    "MulInteger",
    "MurmurHash3",
    "NGramHashMapping",
    "NGramRepeatBlock",
    "NhwcConv",
    "NhwcFusedConv",
    "NhwcMaxPool",
    "PackedAttention",
    "PackedMultiHeadAttention",
    "PackedSparseAttentionIndexer",
    "PackedSparseAttentionIndexerMerge",
    "Pad",
    "PagedAttention",
    "QLinearConv",
    "QLinearReduceMean",
    "QLinearWhere",
    "QMoE",
    "QOrderedAttention",
    "QOrderedGelu",
    "QOrderedLayerNormalization",
    "QOrderedLongformerAttention",
    "QOrderedMatMul",
    "QuantizeBFP",
    "QuantizeLinear",
    "QuantizeWithOrder",
    "RMSNormRotary",
    "ReduceSumInteger",
    "RelativePositionBias",
    "RemovePadding",
    "RestorePadding",
    "Rfft",
    "RouterGateUpProj",
    "SampleOp",
    "Sampling",
    "ScaledSiLU",
    "SkipGroupNorm",
    "Snpe",
    "SparseAttention",
    "SparseAttentionIndexer",
    "SparsePagedAttention",
    "SparseToDenseMatMul",
    "SpeculativePrefixCommit",
    "SwiGLU",
    "Tokenizer",
    "TorchEmbedding",
    "TransposeMatMul",
    "UnfoldTensor",
    "Unique",
    "VarlenCausalConvWithState",
    "VarlenNGramHashMapping",
    "WhisperBeamSearch",
    "WordConvEmbedding",
];

/// onnxruntime's `com.microsoft.nchwc` operators: blocked-layout variants its own optimizer
/// inserts while running and writes only into a saved optimized model; no kernel.
pub const NCHWC_WITHOUT_KERNEL: &[&str] = &[
    "AveragePool",
    "Conv",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "MaxPool",
    "ReorderInput",
    "ReorderOutput",
    "Upsample",
];

/// One operator's kernels.
#[derive(Debug)]
pub struct Kernels {
    /// By since-version, oldest first.
    by_version: Vec<(i64, Kernel)>,
    /// Whether its kernels read strided views (see [`READS_VIEWS`]).
    pub reads_views: bool,
}

impl Kernels {
    /// The kernel in force at imported version `opset`: the newest registered at or before
    /// it (an opset older than every registration still gets the oldest).
    pub fn at(&self, opset: i64) -> Option<Kernel> {
        let newest = self.by_version.iter().rev().find(|(since, _)| *since <= opset);
        newest.or(self.by_version.first()).map(|(_, k)| *k)
    }
}

/// The kernels by domain and operator.
#[derive(Debug)]
pub struct KernelTable(ByOperator<Kernels>);

impl KernelTable {
    /// The kernels of `op` of `domain` (`""` is the default domain).
    pub fn get(&self, domain: &str, op: &str) -> Option<&Kernels> {
        self.0.get(domain, op)
    }

    /// The kernel of `op` of `domain` at imported version `opset`.
    pub fn kernel(&self, domain: &str, op: &str, opset: i64) -> Option<Kernel> {
        self.get(domain, op)?.at(opset)
    }

    fn build() -> KernelTable {
        let mut table = ByOperator::default();
        for operator in operator_table().operators() {
            let (domain, op) = (operator.domain(), operator.op());
            let mut by_version: Vec<(i64, Kernel)> = family_kernel(domain, op).map(|k| (1, k)).into_iter().collect();
            by_version.extend(FROM_VERSION.iter().filter(|(d, o, _, _)| *d == domain && *o == op).map(|r| (r.2, r.3)));
            if by_version.is_empty() {
                continue;
            }
            by_version.sort_by_key(|(since, _)| *since);
            let reads_views = domain.is_empty() && READS_VIEWS.contains(&op);
            table.insert(domain, op, Kernels { by_version, reads_views });
        }
        KernelTable(table)
    }
}

/// The table, built on first use.
pub fn kernels() -> &'static KernelTable {
    static TABLE: OnceLock<KernelTable> = OnceLock::new();
    TABLE.get_or_init(KernelTable::build)
}

/// The kernel of `op` of `domain` from the family that claims it.
fn family_kernel(domain: &str, op: &str) -> Option<Kernel> {
    if domain.is_empty() {
        return DEFAULT_DOMAIN.iter().find_map(|family| family(op));
    }
    let (_, family) = OTHER_DOMAINS.iter().find(|(d, _)| *d == domain)?;
    family(op)
}

/// Whether the kernels of `op` (of the default domain) are handed strided views.
pub fn reads_views(domain: &str, op: &str) -> bool {
    kernels().get(domain, op).is_some_and(|k| k.reads_views)
}

/// Whether `op` of `domain` gives random results (never folded, never reused between loop
/// steps): the core's trait.
pub fn is_random(domain: &str, op: &str) -> bool {
    operator_table().get(domain, op).is_some_and(|o| o.traits().random)
}

/// Whether `op` of `domain` is control flow the runner runs through its subgraphs.
pub fn is_control(domain: &str, op: &str) -> bool {
    operator_table().get(domain, op).is_some_and(|o| o.traits().control)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each operator is claimed by at most one family, so the order they are asked in does
    /// not matter, and no key gets two kernels.
    #[test]
    fn no_operator_has_two_kernels() {
        for operator in operator_table().operators() {
            let (domain, op) = (operator.domain(), operator.op());
            let claims = if domain.is_empty() {
                DEFAULT_DOMAIN.iter().filter(|family| family(op).is_some()).count()
            } else {
                OTHER_DOMAINS.iter().filter(|(d, family)| *d == domain && family(op).is_some()).count()
            };
            assert!(claims <= 1, "{domain}::{op} is claimed by {claims} families");
            let mut since: Vec<i64> = FROM_VERSION.iter().filter(|r| r.0 == domain && r.1 == op).map(|r| r.2).collect();
            since.sort_unstable();
            assert!(since.windows(2).all(|w| w[0] != w[1]), "{domain}::{op} has two kernels from one version");
        }
    }

    /// Every version of every operator the schemas know has a kernel, is control flow, runs
    /// through its schema's function body, or is listed in [`WITHOUT_KERNEL`] with the
    /// reason; and every operator listed there has none of the others (a list that went
    /// stale would hide a kernel's loss).
    #[test]
    fn every_operator_version_is_run_or_said_why_not() {
        let listed = |domain: &str, op: &str| {
            WITHOUT_KERNEL.iter().any(|(d, o, _)| *d == domain && *o == op)
                || domain == "com.microsoft" && CONTRIB_WITHOUT_KERNEL.contains(&op)
                || domain == "com.microsoft.nchwc" && NCHWC_WITHOUT_KERNEL.contains(&op)
        };
        let mut uncovered = Vec::new();
        for operator in operator_table().operators() {
            let (domain, op) = (operator.domain(), operator.op());
            for (key, schema) in operator.keys().zip(operator.schemas()) {
                let has_body = schema.function_body_at(key.since).is_some();
                let runs = kernels().kernel(domain, op, key.since).is_some() || operator.traits().control || has_body;
                if runs && listed(domain, op) {
                    panic!("{key} runs, yet WITHOUT_KERNEL lists {domain}::{op}");
                }
                if !runs && !listed(domain, op) {
                    uncovered.push(key.to_string());
                }
            }
        }
        uncovered.sort();
        assert!(uncovered.is_empty(), "no kernel, body or listed reason for {} keys: {uncovered:?}", uncovered.len());
        for (domain, list) in [("com.microsoft", CONTRIB_WITHOUT_KERNEL), ("com.microsoft.nchwc", NCHWC_WITHOUT_KERNEL)]
        {
            for op in list {
                assert!(operator_table().get(domain, op).is_some(), "{domain}::{op} is listed, unknown");
            }
        }
        for (domain, op, reason) in WITHOUT_KERNEL {
            assert!(operator_table().get(domain, op).is_some(), "WITHOUT_KERNEL lists {domain}::{op}, unknown");
            assert!(!reason.is_empty(), "{domain}::{op} is listed without a reason");
        }
    }

    #[test]
    fn lookups_find_the_kernel() {
        assert!(kernels().kernel("", "Conv", 13).is_some());
        assert!(kernels().kernel("ai.onnx.ml", "ZipMap", 3).is_some());
        assert!(kernels().kernel("", "Loop", 13).is_none() && is_control("", "Loop"));
        assert!(is_control("ai.onnx.preview", "FlexAttention"));
        assert!(reads_views("", "MatMul") && !reads_views("", "Conv"));
        assert!(is_random("", "RandomNormal") && !is_random("", "Relu"));
    }
}
