//! The operator table: everything known of an operator, under one key, (domain, operator,
//! since-version). Built once from the schema export and the registrations beside each
//! family's rules: its schema versions, its inference rule ([`super::ops`]), its validation
//! rules ([`super::validate`]), its traits (control flow, random) and its cost rule
//! ([`crate::cost::rules`]). Finding what applies
//! to a node at an opset is one lookup, here and in a reader's head. The evaluator
//! registers its kernels under the same key (`onnx_eval::registry`), and its tests check
//! that every key of this table has a kernel or a stated reason for none.
//!
//! Versions: a registration from version `since` serves every schema version from `since`
//! on, until a later registration of the operator takes over. A family's inference rule is
//! registered from version 1 and serves every version whose differences are a line of it
//! (an attribute that became an input: the rule reads the imported version from its
//! context); a rule in [`super::ops::FROM_VERSION`] takes over from its since-version on.

use std::sync::OnceLock;

use foldhash::HashMap;

use super::ops::{self, Rule};
use super::validate::{self, Validate};
use crate::schema::{OpSchema, Versions, registry};

/// What names one version of an operator: its domain (`""` is the default one), its name,
/// and the since-version of its schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpKey {
    pub domain: &'static str,
    pub op: &'static str,
    pub since: i64,
}

impl std::fmt::Display for OpKey {
    /// `Conv-11`, `ai.onnx.ml::ZipMap-1`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.domain.is_empty() {
            write!(f, "{}-{}", self.op, self.since)
        } else {
            write!(f, "{}::{}-{}", self.domain, self.op, self.since)
        }
    }
}

/// What kind of operator it is, beyond its schema: what drivers (inference, the runner,
/// constant folding) must treat apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traits {
    /// It holds subgraphs that run as part of it (If, Loop, Scan, SequenceMap,
    /// FlexAttention's modifiers): inferred and run through them.
    pub control: bool,
    /// Its result is not a function of its inputs alone (the random generators; Dropout,
    /// random in training mode): never folded into a constant.
    pub random: bool,
}

/// The operators holding subgraphs ([`Traits::control`]), as (domain, operator).
const CONTROL: [(&str, &str); 5] =
    [("", "If"), ("", "Loop"), ("", "Scan"), ("", "SequenceMap"), ("ai.onnx.preview", "FlexAttention")];

/// The operators whose result is random ([`Traits::random`]), as (domain, operator).
const RANDOM: [(&str, &str); 7] = [
    ("", "RandomNormal"),
    ("", "RandomUniform"),
    ("", "RandomNormalLike"),
    ("", "RandomUniformLike"),
    ("", "Multinomial"),
    ("", "Bernoulli"),
    ("", "Dropout"),
];

/// How a node of an operator is inferred.
#[derive(Clone, Copy)]
pub(super) enum Handler {
    /// A rule: the outputs from the node and its inputs.
    Rule(Rule),
    /// Control flow: the outputs come from inferring the node's subgraphs.
    Control,
}

/// One operator of the table, every version of it.
pub struct Operator {
    domain: &'static str,
    op: &'static str,
    /// By since-version, oldest first; empty: no rule, its schema's function body or type
    /// constraints serve.
    handlers: Vec<(i64, Handler)>,
    /// By since-version, oldest first; empty: only what every operator is judged for.
    validators: Vec<(i64, Validate)>,
    traits: Traits,
    /// How a node's multiply-accumulates are counted (`onnx cost`).
    cost: Option<crate::cost::rules::Rule>,
    /// How a node crosses each version that changed its meaning or form (`onnx opset`),
    /// by since-version.
    opset_steps: Vec<(i64, crate::opset::Step)>,
    versions: &'static Versions,
}

impl Operator {
    pub fn domain(&self) -> &'static str {
        self.domain
    }

    pub fn op(&self) -> &'static str {
        self.op
    }

    pub fn traits(&self) -> Traits {
        self.traits
    }

    /// Its cost rule: how `onnx cost` counts a node's multiply-accumulates.
    pub fn cost(&self) -> Option<crate::cost::rules::Rule> {
        self.cost
    }

    /// How a node crosses version `since` of the operator, up and down, where that version
    /// changed more than its types (`onnx opset`, `crate::opset::steps`).
    pub fn opset_step(&self, since: i64) -> Option<crate::opset::Step> {
        self.opset_steps.iter().find(|(s, _)| *s == since).map(|(_, step)| *step)
    }

    /// Whether its schemas are onnxruntime's contrib ones, which onnx does not know.
    pub fn from_onnxruntime(&self) -> bool {
        self.schemas().first().is_some_and(|s| s.from_onnxruntime)
    }

    /// The schema in force at imported version `opset`.
    pub fn schema(&self, opset: i64) -> Option<&'static OpSchema> {
        registry().version_at(self.versions, opset)
    }

    /// Every version's schema, oldest first.
    pub fn schemas(&self) -> &'static [OpSchema] {
        registry().all_versions(self.versions)
    }

    /// The key of the version in force at imported version `opset`.
    pub fn key_at(&self, opset: i64) -> Option<OpKey> {
        self.schema(opset).map(|s| self.key(s.since_version))
    }

    /// The key of every version, oldest first.
    pub fn keys(&self) -> impl Iterator<Item = OpKey> + '_ {
        self.schemas().iter().map(|s| self.key(s.since_version))
    }

    fn key(&self, since: i64) -> OpKey {
        OpKey { domain: self.domain, op: self.op, since }
    }

    /// The handler in force at imported version `opset`: the newest registered at or before
    /// it (an opset older than every registration still gets the oldest).
    pub(super) fn handler(&self, opset: i64) -> Option<Handler> {
        in_force(&self.handlers, opset).or(self.handlers.first().map(|(_, h)| *h))
    }

    /// The validation rule in force for the schema version `since`.
    pub(super) fn validator(&self, since: i64) -> Option<Validate> {
        in_force(&self.validators, since)
    }
}

impl std::fmt::Debug for Operator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operator")
            .field("domain", &self.domain)
            .field("op", &self.op)
            .field("rules_from", &self.handlers.iter().map(|(since, _)| since).collect::<Vec<_>>())
            .field("validators_from", &self.validators.iter().map(|(since, _)| since).collect::<Vec<_>>())
            .field("traits", &self.traits)
            .finish()
    }
}

/// Of registrations by since-version (oldest first), the newest at or before `version`.
fn in_force<T: Copy>(registered: &[(i64, T)], version: i64) -> Option<T> {
    registered.iter().rev().find(|(since, _)| *since <= version).map(|(_, t)| *t)
}

/// Entries keyed by domain and operator name: the shape of the operator table and of the
/// tables keyed like it (the evaluator's kernels).
#[derive(Debug)]
pub struct ByOperator<T> {
    /// The default domain apart, so that nearly every lookup is a single hash of the name.
    default: HashMap<&'static str, T>,
    others: HashMap<&'static str, HashMap<&'static str, T>>,
}

impl<T> Default for ByOperator<T> {
    fn default() -> Self {
        ByOperator { default: HashMap::default(), others: HashMap::default() }
    }
}

impl<T> ByOperator<T> {
    /// The entry of `op` of `domain` (`""` is the default domain).
    pub fn get(&self, domain: &str, op: &str) -> Option<&T> {
        if domain.is_empty() { self.default.get(op) } else { self.others.get(domain)?.get(op) }
    }

    pub fn insert(&mut self, domain: &'static str, op: &'static str, entry: T) {
        let ops = if domain.is_empty() { &mut self.default } else { self.others.entry(domain).or_default() };
        ops.insert(op, entry);
    }

    /// Every entry, in no particular order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.default.values().chain(self.others.values().flat_map(HashMap::values))
    }
}

/// Operators by domain and name.
#[derive(Debug)]
pub struct Table(ByOperator<Operator>);

impl Table {
    /// The operator `op` of `domain` (`""` is the default domain).
    pub fn get(&self, domain: &str, op: &str) -> Option<&Operator> {
        self.0.get(domain, op)
    }

    /// Every operator, in no particular order.
    pub fn operators(&self) -> impl Iterator<Item = &Operator> {
        self.0.values()
    }

    fn build() -> Table {
        let mut table = ByOperator::default();
        for (domain, op, versions) in registry().operators() {
            let traits = Traits { control: CONTROL.contains(&(domain, op)), random: RANDOM.contains(&(domain, op)) };
            let mut handlers: Vec<(i64, Handler)> =
                rule_of(domain, op).map(|r| (1, Handler::Rule(r))).into_iter().collect();
            if handlers.is_empty() && traits.control {
                handlers.push((1, Handler::Control));
            }
            for &(d, o, since, rule) in ops::FROM_VERSION {
                if d == domain && o == op {
                    handlers.push((since, Handler::Rule(rule)));
                }
            }
            handlers.sort_by_key(|(since, _)| *since);
            let mut validators: Vec<(i64, Validate)> =
                validators_of(domain).filter(|(o, _, _)| *o == op).map(|&(_, since, rule)| (since, rule)).collect();
            validators.sort_by_key(|(since, _)| *since);
            let cost = crate::cost::rules::rule_of(domain, op);
            let opset_steps = crate::opset::steps_of(domain, op);
            let operator = Operator { domain, op, handlers, validators, traits, cost, opset_steps, versions };
            table.insert(domain, op, operator);
        }
        Table(table)
    }
}

/// The table, built on first use.
pub fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(Table::build)
}

/// The rule of `op` of `domain`, from the family that claims it.
fn rule_of(domain: &str, op: &str) -> Option<Rule> {
    if domain.is_empty() {
        return ops::DEFAULT_DOMAIN.iter().find_map(|family| family(op));
    }
    let (_, family) = ops::OTHER_DOMAINS.iter().find(|(d, _)| *d == domain)?;
    family(op)
}

/// The validation rules registered for `domain`, as (operator, since-version, rule).
fn validators_of(domain: &str) -> impl Iterator<Item = &'static (&'static str, i64, Validate)> {
    let families: &[validate::Registrations] = if domain.is_empty() {
        &validate::DEFAULT_DOMAIN
    } else {
        validate::OTHER_DOMAINS.iter().find(|(d, _)| *d == domain).map_or(&[], |(_, f)| std::slice::from_ref(f))
    };
    families.iter().flat_map(|f| f.iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each operator is claimed by at most one family, so the order in which the table
    /// asks them does not matter; control flow without a rule is inferred through its
    /// subgraphs.
    #[test]
    fn no_operator_has_two_rules() {
        for (domain, op, _) in registry().operators() {
            let claims = if domain.is_empty() {
                ops::DEFAULT_DOMAIN.iter().filter(|f| f(op).is_some()).count()
            } else {
                ops::OTHER_DOMAINS.iter().filter(|(d, f)| *d == domain && f(op).is_some()).count()
            };
            assert!(claims <= 1, "{domain}::{op} is claimed {claims} times");
        }
    }

    /// No (domain, operator, since) is given two validation rules, and every registration
    /// names an operator the schemas know, at a since-version its versions have (or 1):
    /// a misspelt registration would otherwise judge nothing, silently.
    #[test]
    fn every_validation_rule_has_one_known_key() {
        let mut seen = std::collections::HashSet::new();
        let domains = std::iter::once("").chain(validate::OTHER_DOMAINS.iter().map(|(d, _)| *d));
        for domain in domains {
            for &(op, since, _) in validators_of(domain) {
                assert!(seen.insert((domain, op, since)), "{domain}::{op}-{since} has two validation rules");
                let operator = table().get(domain, op).unwrap_or_else(|| panic!("{domain}::{op} has no schema"));
                assert!(
                    since == 1 || operator.keys().any(|k| k.since == since),
                    "{domain}::{op} is registered from version {since}, which none of its schemas has"
                );
            }
        }
    }

    /// Every operator a trait list names exists.
    #[test]
    fn every_trait_names_a_known_operator() {
        for (domain, op) in CONTROL.iter().chain(&RANDOM) {
            assert!(table().get(domain, op).is_some(), "{domain}::{op} has no schema");
        }
    }

    /// The table knows the operators real models use, with the handler expected.
    #[test]
    fn lookups_find_the_handler() {
        let t = table();
        assert!(matches!(t.get("", "Conv").and_then(|o| o.handler(13)), Some(Handler::Rule(_))));
        assert!(matches!(t.get("", "Loop").and_then(|o| o.handler(13)), Some(Handler::Control)));
        assert!(t.get("", "Loop").is_some_and(|o| o.traits().control && o.validator(16).is_some()));
        assert!(t.get("", "RandomNormal").is_some_and(|o| o.traits().random && !o.traits().control));
        assert!(matches!(t.get("ai.onnx.ml", "ZipMap").and_then(|o| o.handler(3)), Some(Handler::Rule(_))));
        assert!(matches!(t.get("ai.onnx.preview", "FlexAttention").and_then(|o| o.handler(1)), Some(Handler::Rule(_))));
        // DFT's rule changes at opset 20 (the axis became an input).
        let dft = t.get("", "DFT").expect("DFT");
        assert_eq!(dft.handlers.iter().map(|(since, _)| *since).collect::<Vec<_>>(), [1, 20]);
        assert_eq!(t.get("", "Conv").and_then(|o| o.schema(13)).map(|s| s.since_version), Some(11));
        assert_eq!(t.get("", "Conv").and_then(|o| o.key_at(13)).map(|k| k.to_string()).as_deref(), Some("Conv-11"));
        assert!(t.get("", "NoSuchOp").is_none());
        assert!(t.get("com.microsoft", "NoSuchOp").is_none());
        assert!(t.get("com.microsoft", "FusedConv").is_some_and(Operator::from_onnxruntime));
        assert!(t.get("", "Conv").is_some_and(|o| !o.from_onnxruntime()));
    }
}
