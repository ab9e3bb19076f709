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
use onnx_core::ir::DataType;

use crate::error::{KernelError, unsupported};
use crate::kernels::{ByType, DEFAULT_DOMAIN, DEFAULT_DOMAIN_BY_TYPE, Kernel, OTHER_DOMAINS, OTHER_DOMAINS_BY_TYPE};
use crate::value::Value;

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
    "BifurcationDetector",
    "BitmaskBiasDropout",
    "BitmaskDropout",
    "BranchwiseRMSNorm",
    "CDist",
    "ComplexMul",
    "ComplexMulConj",
    "ConvStateReplay",
    "ConvTransposeWithDynamicPads",
    "CropAndResize",
    "DecoderAttention",
    "DecoderMaskedMultiHeadAttention",
    "DecoderMaskedSelfAttention",
    "DequantizeBFP",
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
    "GatedRelativePositionBias",
    "GatherPacked",
    "GemmFastGelu",
    "GemmFloat8",
    "GemmaRotaryEmbedding",
    "GreedySearch",
    "GridSample",
    "HyperConnectionLowRankMix",
    "HyperConnectionPostMix",
    "HyperConnectionPreMix",
    "Inverse",
    "Irfft",
    "IsAllFinite",
    "LongformerAttention",
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
    "MoEGroupRouter",
    "MoEPacked",
    "MulInteger",
    "MurmurHash3",
    "NGramHashMapping",
    "NGramRepeatBlock",
    "NhwcFusedConv",
    "NhwcMaxPool",
    "PackedSparseAttentionIndexer",
    "PackedSparseAttentionIndexerMerge",
    "Pad",
    "PagedAttention",
    "QLinearReduceMean",
    "QLinearWhere",
    "QOrderedAttention",
    "QOrderedGelu",
    "QOrderedLayerNormalization",
    "QOrderedLongformerAttention",
    "QOrderedMatMul",
    "QuantizeBFP",
    "QuantizeWithOrder",
    "RMSNormRotary",
    "ReduceSumInteger",
    "Rfft",
    "RouterGateUpProj",
    "SampleOp",
    "Sampling",
    "ScaledSiLU",
    "Snpe",
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

/// The kernels of one operator from one since-version on.
#[derive(Debug)]
struct Version {
    since: i64,
    /// The kernel for every element type the more specific ones below do not take.
    any: Option<Kernel>,
    /// Kernels for one element type of the operator's first input.
    by_type: Vec<(DataType, Kernel)>,
}

/// One operator's kernels.
#[derive(Debug)]
pub struct Kernels {
    /// By since-version, oldest first.
    versions: Vec<Version>,
    /// Whether its kernels read strided views (see [`READS_VIEWS`]).
    pub reads_views: bool,
}

impl Kernels {
    /// The kernels in force at imported version `opset`: those of the newest since-version
    /// at or before it (an opset older than every registration still gets the oldest).
    pub fn at(&'static self, opset: i64) -> Option<Dispatch> {
        let newest = self.versions.iter().rev().find(|v| v.since <= opset);
        newest.or(self.versions.first()).map(|v| Dispatch {
            any: v.any,
            by_type: &v.by_type,
            reads_views: self.reads_views,
        })
    }

    /// Builds an operator's versions from its family's kernel (from version 1) and its later
    /// and typed registrations: at each since-version, for each element type, the newest
    /// registration at or before it wins, and a typed one wins over one for every type of
    /// the same since-version.
    fn from_registrations(any: &[(i64, Kernel)], typed: &[(i64, DataType, Kernel)], reads_views: bool) -> Kernels {
        let mut sinces: Vec<i64> = any.iter().map(|r| r.0).chain(typed.iter().map(|r| r.0)).collect();
        sinces.sort_unstable();
        sinces.dedup();
        let versions = sinces
            .into_iter()
            .map(|since| {
                let newest_any = any.iter().filter(|r| r.0 <= since).max_by_key(|r| r.0);
                let any_since = newest_any.map_or(i64::MIN, |r| r.0);
                let mut by_type: Vec<(DataType, Kernel)> = Vec::new();
                for &(typed_since, data_type, kernel) in typed {
                    if typed_since > since || typed_since < any_since {
                        continue;
                    }
                    let newer = typed.iter().any(|r| r.1 == data_type && r.0 > typed_since && r.0 <= since);
                    if !newer {
                        by_type.push((data_type, kernel));
                    }
                }
                Version { since, any: newest_any.map(|r| r.1), by_type }
            })
            .collect();
        Kernels { versions, reads_views }
    }
}

/// The kernels of one operator at one version, as a plan step holds them: chosen among by
/// the element type of the node's first input when it runs ([`Dispatch::select`]).
#[derive(Clone, Copy, Debug)]
pub struct Dispatch {
    any: Option<Kernel>,
    by_type: &'static [(DataType, Kernel)],
    /// Whether the kernels are handed strided views ([`READS_VIEWS`]), known here so that
    /// a call need not look the operator up by name.
    pub reads_views: bool,
}

impl Dispatch {
    /// A single kernel for every element type (what the planner puts in place of a
    /// registered one, as a view-making Transpose).
    pub fn only(kernel: Kernel, reads_views: bool) -> Dispatch {
        Dispatch { any: Some(kernel), by_type: &[], reads_views }
    }

    /// The kernel for these inputs: the one registered for the element type of the first
    /// input when there is one, else the one for every type.
    pub fn select(&self, inputs: &[Option<&Value>]) -> Result<Kernel, KernelError> {
        let first = match inputs.first() {
            Some(Some(Value::Tensor(t))) => Some(t.data_type()),
            _ => None,
        };
        if let Some(data_type) = first
            && let Some((_, kernel)) = self.by_type.iter().find(|(t, _)| *t == data_type)
        {
            return Ok(*kernel);
        }
        self.any.ok_or_else(|| {
            let types: Vec<&str> = self.by_type.iter().map(|(t, _)| t.name()).collect();
            let given = first.map_or("no tensor", DataType::name);
            unsupported!("no kernel for a first input of {given}: it has kernels for {}", types.join(", "))
        })
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

    fn build() -> KernelTable {
        let mut table = ByOperator::default();
        for operator in operator_table().operators() {
            let (domain, op) = (operator.domain(), operator.op());
            let mut any: Vec<(i64, Kernel)> = family_kernel(domain, op).map(|k| (1, k)).into_iter().collect();
            any.extend(FROM_VERSION.iter().filter(|(d, o, _, _)| *d == domain && *o == op).map(|r| (r.2, r.3)));
            let typed: Vec<(i64, DataType, Kernel)> = typed_registrations(domain)
                .filter(|r| r.op == op)
                .flat_map(|r| r.types.iter().map(move |&t| (r.since, t, r.kernel)))
                .collect();
            if any.is_empty() && typed.is_empty() {
                continue;
            }
            let reads_views = domain.is_empty() && READS_VIEWS.contains(&op);
            table.insert(domain, op, Kernels::from_registrations(&any, &typed, reads_views));
        }
        KernelTable(table)
    }
}

/// The kernels of `op` of `domain` at imported version `opset`.
pub fn dispatch(domain: &str, op: &str, opset: i64) -> Option<Dispatch> {
    kernels().get(domain, op)?.at(opset)
}

/// The table, built on first use.
pub fn kernels() -> &'static KernelTable {
    static TABLE: OnceLock<KernelTable> = OnceLock::new();
    TABLE.get_or_init(KernelTable::build)
}

/// The registrations by element type of the families of `domain`.
fn typed_registrations(domain: &str) -> impl Iterator<Item = &'static ByType> {
    let families: &[&[ByType]] = if domain.is_empty() {
        &DEFAULT_DOMAIN_BY_TYPE
    } else {
        OTHER_DOMAINS_BY_TYPE.iter().find(|(d, _)| *d == domain).map_or(&[], |(_, f)| std::slice::from_ref(f))
    };
    families.iter().flat_map(|family| family.iter())
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
    use crate::kernels::Ctx;

    /// Each operator is claimed by at most one family, so the order they are asked in does
    /// not matter, and no key gets two kernels: for every type, or for one element type.
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
            let mut typed: Vec<(i64, DataType)> = typed_registrations(domain)
                .filter(|r| r.op == op)
                .flat_map(|r| r.types.iter().map(|&t| (r.since, t)))
                .collect();
            typed.sort_unstable_by_key(|&(since, t)| (since, t.code()));
            for w in typed.windows(2) {
                assert!(w[0] != w[1], "{domain}::{op} has two kernels for {} from version {}", w[0].1.name(), w[0].0);
            }
        }
    }

    /// A kernel registered for an element type names an operator the schemas know, from one
    /// of its since-versions, and a type its first input may have in every version where the
    /// kernel is in force: a kernel no node could ever reach is a mistake.
    #[test]
    fn kernels_by_type_take_types_their_operator_allows() {
        let domains = std::iter::once("").chain(OTHER_DOMAINS_BY_TYPE.iter().map(|(d, _)| *d));
        let mut checked = 0;
        for domain in domains {
            for registration in typed_registrations(domain) {
                let ByType { op, since, types, .. } = *registration;
                let operator = operator_table().get(domain, op).unwrap_or_else(|| panic!("{domain}::{op} is unknown"));
                assert!(operator.keys().any(|k| k.since == since), "{domain}::{op} has no version {since}");
                for schema in operator.schemas().iter().filter(|s| s.since_version >= since) {
                    let first = schema.inputs.first().unwrap_or_else(|| panic!("{domain}::{op} takes no input"));
                    let allowed = schema.allowed_types(first);
                    for t in types {
                        let name = format!("tensor({})", t.name());
                        assert!(
                            allowed.contains(&name.as_str()),
                            "{domain}::{op}-{} does not take {name}: {allowed:?}",
                            schema.since_version
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 0, "no kernel is registered by type");
    }

    fn kernel_a(_: &Ctx<'_>, _: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
        Ok(Vec::new())
    }

    fn kernel_b(_: &Ctx<'_>, _: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
        Ok(vec![Value::Tensor(crate::value::Tensor::new(vec![], crate::value::Data::F32(vec![1.0].into())))])
    }

    /// Which kernel each version holds: a typed kernel wins over one for every type from the
    /// same version on, and a later kernel for every type ends an older typed one.
    #[test]
    fn versions_hold_the_newest_registration_per_type() {
        let (a, b): (Kernel, Kernel) = (kernel_a, kernel_b);
        let kernels =
            Kernels::from_registrations(&[(1, a), (13, a)], &[(1, DataType::Float, b), (7, DataType::Int64, b)], false);
        let summary: Vec<(i64, bool, Vec<&str>)> = kernels
            .versions
            .iter()
            .map(|v| (v.since, v.any.is_some(), v.by_type.iter().map(|(t, _)| t.name()).collect()))
            .collect();
        assert_eq!(summary, vec![(1, true, vec!["float"]), (7, true, vec!["float", "int64"]), (13, true, vec![])],);
        let only_typed = Kernels::from_registrations(&[], &[(1, DataType::Float, b)], false);
        assert_eq!(only_typed.versions.len(), 1);
        assert!(only_typed.versions[0].any.is_none());
    }

    /// A node's kernel is chosen by its first input's element type; without a kernel for
    /// every type, another type is refused with the types there are kernels for.
    #[test]
    fn dispatch_selects_by_the_first_inputs_type() {
        let by_type: &'static [(DataType, Kernel)] = Box::leak(Box::new([(DataType::Float, kernel_b as Kernel)]));
        let float = Value::Tensor(crate::value::Tensor::new(vec![], crate::value::Data::F32(vec![1.0].into())));
        let long = Value::Tensor(crate::value::Tensor::new(vec![], crate::value::Data::I64(vec![1].into())));
        let both = Dispatch { any: Some(kernel_a), by_type, reads_views: false };
        assert!(both.select(&[Some(&float)]).unwrap() as usize == kernel_b as Kernel as usize);
        assert!(both.select(&[Some(&long)]).unwrap() as usize == kernel_a as Kernel as usize);
        assert!(both.select(&[None]).unwrap() as usize == kernel_a as Kernel as usize);
        let typed_only = Dispatch { any: None, by_type, reads_views: false };
        let refused = typed_only.select(&[Some(&long)]).unwrap_err();
        assert_eq!(refused.kind(), crate::error::ErrorKind::Unsupported);
        assert_eq!(refused.message(), "no kernel for a first input of int64: it has kernels for float");
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
                let runs = dispatch(domain, op, key.since).is_some() || operator.traits().control || has_body;
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
        assert!(dispatch("", "Conv", 13).is_some());
        assert!(dispatch("ai.onnx.ml", "ZipMap", 3).is_some());
        assert!(dispatch("", "Loop", 13).is_none() && is_control("", "Loop"));
        let matmul = dispatch("", "MatMul", 13).unwrap();
        assert!(matmul.any.is_some() && matmul.by_type.iter().any(|(t, _)| *t == DataType::Float));
        assert!(is_control("ai.onnx.preview", "FlexAttention"));
        assert!(reads_views("", "MatMul") && !reads_views("", "Conv"));
        assert!(is_random("", "RandomNormal") && !is_random("", "Relu"));
    }
}
