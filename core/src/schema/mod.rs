//! Operator schemas of every domain onnx 1.23.2 knows, with their full version history, and
//! the contrib operators onnxruntime 1.32.0 adds in its own domains (`com.microsoft`).
//!
//! The data is onnx's own schema table, and onnxruntime's contrib one, exported to JSON (`core/schemas/onnx_schemas.json`,
//! regenerated as CONTRIBUTING.md says) and compiled into the binary with `include_str!`,
//! with an index of where each operator's schemas lie in it that `core/build.rs` makes at
//! build time. At run time the small rest of the export is read on first use and each
//! operator's schemas when that operator is first looked up, so no program looks for
//! files at run time and a small model's check decodes only the few schemas it uses.
//!
//! Lookup follows onnx's rule: the schema of `(domain, op)` for an imported opset version is
//! the one with the largest `since_version` not above it.

pub mod choices;
mod decode;

use foldhash::HashMap;
use std::sync::OnceLock;

use crate::ir::AttributeType;

static EXPORT: &str = include_str!("../../schemas/onnx_schemas.json");

/// Each schema's documentation (`core/schemas/gen_docs.py`), read on first use only.
static DOCS: &str = include_str!("../../schemas/onnx_docs.json");

/// The documentation onnx gives a schema (Markdown), if any.
pub fn doc(domain: &str, op: &str, since_version: i64) -> Option<&'static str> {
    type Docs = HashMap<(String, String, i64), String>;
    static TABLE: OnceLock<Docs> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let rows: Vec<(String, String, i64, String)> = serde_json::from_str(DOCS).unwrap_or_default();
        rows.into_iter().map(|(d, o, v, doc)| ((d, o, v), doc)).collect()
    });
    table.get(&(domain.to_owned(), op.to_owned(), since_version)).map(String::as_str)
}

// `SCHEMA_SPANS`, `TYPESETS` and `EXPORT_HEADER`, made by `core/build.rs` from `EXPORT`.
include!(concat!(env!("OUT_DIR"), "/schema_index.rs"));

/// How a formal input or output may be filled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormalOption {
    Single,
    Optional,
    Variadic,
}

/// One formal input or output of an operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Formal {
    pub name: String,
    /// A type parameter (`T`) or a literal type (`tensor(int64)`).
    pub type_str: String,
    pub option: FormalOption,
    /// All values bound to a variadic formal share one type.
    pub homogeneous: bool,
    /// The fewest values a variadic formal takes.
    pub min_arity: usize,
    /// The index in its schema's `type_constraints` of the constraint `type_str` names;
    /// `None` for a literal type. Resolved once when the table is built, so that checking a
    /// node compares no strings.
    pub constraint: Option<usize>,
    /// The tensor element types the formal allows, a bit per data type code (see
    /// [`TypeConstraint::tensor_elems`]): its constraint's, or its literal type's.
    pub tensor_elems: u64,
}

/// One attribute an operator takes.
#[derive(Clone, Debug, PartialEq)]
pub struct AttributeSchema {
    pub name: String,
    pub ty: AttributeType,
    pub required: bool,
    /// The default as exported (a number, a string or a list of them), if the schema has one.
    pub default: Option<serde_json::Value>,
}

/// A type parameter and the types it may stand for (`tensor(float)`, `seq(tensor(int64))`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeConstraint {
    pub param: String,
    pub allowed: &'static [&'static str],
    /// The tensor element types `allowed` holds, as a bit per data type code (bit 1 for
    /// `tensor(float)`), so checking a tensor input needs no string work.
    pub tensor_elems: u64,
}

/// The tensor element types a list of spelled types allows, one bit per data type code.
pub(crate) fn tensor_elem_bits<'a>(types: impl IntoIterator<Item = &'a str>) -> u64 {
    types
        .into_iter()
        .filter_map(|t| t.strip_prefix("tensor(")?.strip_suffix(')'))
        .filter_map(crate::ir::DataType::from_name)
        .map(|d| d.code())
        .filter(|&c| (0..64).contains(&c))
        .fold(0, |bits, c| bits | 1 << c)
}

/// One version of one operator.
#[derive(Clone, Debug)]
pub struct OpSchema {
    pub op: String,
    pub domain: String,
    pub since_version: i64,
    pub inputs: Vec<Formal>,
    pub outputs: Vec<Formal>,
    pub min_inputs: usize,
    /// `None`: unbounded.
    pub max_inputs: Option<usize>,
    pub min_outputs: usize,
    pub max_outputs: Option<usize>,
    /// The only output counts allowed, where the schema lists them (BatchNormalization).
    pub allowed_output_counts: Option<Vec<usize>>,
    pub type_constraints: Vec<TypeConstraint>,
    pub attributes: Vec<AttributeSchema>,
    /// Attributes outside the schema are accepted (LayerNormalization-17).
    pub allows_unchecked_attributes: bool,
    pub deprecated: bool,
    pub experimental: bool,
    pub non_deterministic: bool,
    pub has_inference: bool,
    pub has_data_propagation: bool,
    /// Static function bodies in the ONNX text format, by the opset they were written for.
    pub function_bodies: Vec<(i64, String)>,
    /// Opsets for which onnx builds a body from the node itself.
    pub context_dependent_bodies: Vec<i64>,
    /// One of onnxruntime's contrib schemas (`com.microsoft`): onnx does not know it, so
    /// onnx's checker and inference pass its nodes by, while onnxruntime judges them by it.
    pub from_onnxruntime: bool,
}

impl OpSchema {
    pub fn attribute(&self, name: &str) -> Option<&AttributeSchema> {
        self.attributes.iter().find(|a| a.name == name)
    }

    /// The types a formal's `type_str` allows: its constraint's list, or the literal type.
    pub fn allowed_types<'s>(&'s self, formal: &'s Formal) -> Vec<&'s str> {
        match formal.constraint.and_then(|i| self.type_constraints.get(i)) {
            Some(c) => c.allowed.to_vec(),
            None => vec![formal.type_str.as_str()],
        }
    }

    /// The function body (its version and text) that defines the operator at imported
    /// version `opset`: the body of the largest version not above it.
    pub fn function_body_at(&self, opset: i64) -> Option<&(i64, String)> {
        self.function_bodies.iter().rev().find(|(v, _)| *v <= opset)
    }

    /// The address of the operator's documentation: its page on onnx.ai (`onnx__Add.html`,
    /// `onnx_aionnxml_LabelEncoder.html`), or for onnxruntime's contrib operators their
    /// section of onnxruntime's ContribOperators.md.
    pub fn doc_url(&self) -> String {
        if self.from_onnxruntime {
            return format!(
                "https://github.com/microsoft/onnxruntime/blob/main/docs/ContribOperators.md#{}.{}",
                self.domain, self.op
            );
        }
        let prefix = if self.domain.is_empty() { "_".to_owned() } else { self.domain.replace('.', "") + "_" };
        format!("https://onnx.ai/onnx/operators/onnx_{prefix}{}.html", self.op)
    }
}

/// One domain's operators by name.
pub(crate) type OpTable = HashMap<&'static str, Versions>;

/// Every version of one operator: their JSON, decoded (oldest first) on first use.
#[derive(Debug)]
pub(crate) struct Versions {
    raw: Vec<&'static str>,
    decoded: OnceLock<Vec<OpSchema>>,
}

/// Every schema, indexed by `(domain, op)`.
#[derive(Debug)]
pub struct Registry {
    /// Versions of each default-domain operator, oldest first, by name.
    default_ops: OpTable,
    /// The same for the other domains, by domain then name (two levels so that a lookup
    /// borrows its `&str` keys instead of building an owned pair). The default domain has
    /// its own field so that no lookup compares the empty key (see [`crate::ir::same_bytes`]).
    domain_ops: HashMap<&'static str, OpTable>,
    /// The typesets constraints name by index.
    typesets: &'static [&'static [&'static str]],
    /// What the export says of some schemas apart from their JSON.
    extras: decode::Extras,
    /// The newest opset of each domain.
    pub domain_versions: Vec<(String, i64)>,
    /// The IR version of the onnx release the table comes from.
    pub ir_version: i64,
    /// Default-domain op types onnx's checker treats as experimental (warned, not verified).
    pub experimental_ops: foldhash::HashSet<String>,
    /// Attribute names with this prefix are onnx-internal and never checked.
    pub internal_attribute_prefix: String,
}

impl Registry {
    /// The schema in force for `op` of `domain` under imported `version`: the largest
    /// since-version not above it. `domain` is exact (`""` is the default domain).
    pub fn lookup(&self, domain: &str, op: &str, version: i64) -> Option<&OpSchema> {
        self.versions(domain, op).iter().rev().find(|s| s.since_version <= version)
    }

    /// Every version of an operator, oldest first.
    pub fn versions(&self, domain: &str, op: &str) -> &[OpSchema] {
        self.ops_of(domain).and_then(|ops| ops.get(op)).map_or(&[], |v| self.decoded(v))
    }

    /// Every operator of every domain with its versions (not decoded): what a table keyed by
    /// operator is built from (inference's rules, see `infer::registry`).
    pub(crate) fn operators(&self) -> impl Iterator<Item = (&'static str, &'static str, &Versions)> {
        let default = self.default_ops.iter().map(|(&op, v)| ("", op, v));
        let others = self.domain_ops.iter().flat_map(|(&d, ops)| ops.iter().map(move |(&op, v)| (d, op, v)));
        default.chain(others)
    }

    /// The version of an operator in force at imported `version` (see [`Registry::lookup`]),
    /// from a handle [`Registry::operators`] gave.
    pub(crate) fn version_at<'r>(&'r self, versions: &'r Versions, version: i64) -> Option<&'r OpSchema> {
        self.decoded(versions).iter().rev().find(|s| s.since_version <= version)
    }

    /// Every version of an operator, oldest first, from a handle [`Registry::operators`] gave.
    pub(crate) fn all_versions<'r>(&'r self, versions: &'r Versions) -> &'r [OpSchema] {
        self.decoded(versions)
    }

    fn decoded<'r>(&'r self, versions: &'r Versions) -> &'r [OpSchema] {
        versions.decoded.get_or_init(|| {
            // The export is our own committed data, every schema of it decoded by the
            // tests; a failure here is a build defect, not an input error.
            decode::versions(&versions.raw, self.typesets, &self.extras)
                .unwrap_or_else(|e| panic!("core/schemas/onnx_schemas.json is malformed: {e}"))
        })
    }

    fn ops_of(&self, domain: &str) -> Option<&OpTable> {
        if domain.is_empty() { Some(&self.default_ops) } else { self.domain_ops.get(domain) }
    }

    /// Whether the table holds any operator of this domain.
    pub fn knows_domain(&self, domain: &str) -> bool {
        self.domain_versions.iter().any(|(d, _)| d == domain)
    }

    /// The schemas in force for a domain at an imported version, one per operator, sorted
    /// by name (completion lists, documentation, "did you mean"). In onnx's own domains,
    /// onnx's operators only: not those onnxruntime adds there.
    pub fn operators_at(&self, domain: &str, version: i64) -> Vec<&OpSchema> {
        let onnx_domain = !domain.starts_with("com.microsoft");
        let mut ops: Vec<&OpSchema> = self
            .ops_of(domain)
            .into_iter()
            .flat_map(HashMap::values)
            .filter_map(|versions| self.decoded(versions).iter().rev().find(|s| s.since_version <= version))
            .filter(|s| !(onnx_domain && s.from_onnxruntime))
            .collect();
        ops.sort_by(|a, b| a.op.cmp(&b.op));
        ops
    }

    pub fn is_experimental_op(&self, op: &str) -> bool {
        self.experimental_ops.contains(op)
    }

    pub fn len(&self) -> usize {
        std::iter::once(&self.default_ops)
            .chain(self.domain_ops.values())
            .flat_map(HashMap::values)
            .map(|v| v.raw.len())
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.default_ops.is_empty() && self.domain_ops.is_empty()
    }
}

/// The compiled-in registry.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        // The export is our own committed data, checked by the tests; a failure here is a
        // build defect, not an input error.
        decode::registry(EXPORT, EXPORT_HEADER, SCHEMA_SPANS, TYPESETS)
            .unwrap_or_else(|e| panic!("core/schemas/onnx_schemas.json is malformed: {e}"))
    })
}

#[cfg(test)]
mod tests;
