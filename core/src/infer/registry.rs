//! The table of operators inference knows, built once: for each operator of the schema
//! export, keyed by (domain, name), its handlers by since-version (a rule of
//! [`super::ops`], or control flow) and its schema versions. Finding the rule for an
//! operator at an opset is one lookup, here and in a reader's head; adding one is an arm in
//! its family's `rule`.
//!
//! Versions: a family's rule is registered from version 1 and serves every version whose
//! differences are a line of it (an attribute that became an input: the rule reads the
//! imported version from its context); a rule in [`super::ops::FROM_VERSION`] takes over
//! from its since-version on. The schema in force comes from the versions kept here.

use std::sync::OnceLock;

use foldhash::HashMap;

use super::control;
use super::ops::{self, Rule};
use crate::schema::{OpSchema, Versions, registry};

/// How a node of an operator is inferred.
#[derive(Clone, Copy)]
pub(super) enum Handler {
    /// A rule: the outputs from the node and its inputs.
    Rule(Rule),
    /// Control flow: the outputs come from inferring the node's subgraphs.
    Control,
}

/// One operator of the table.
pub(super) struct Operator {
    /// By since-version, oldest first; empty: no rule, its schema's function body or type
    /// constraints serve.
    handlers: Vec<(i64, Handler)>,
    versions: &'static Versions,
}

impl Operator {
    /// The handler in force at imported version `opset`: the newest registered at or before
    /// it (an opset older than every registration still gets the oldest).
    pub fn handler(&self, opset: i64) -> Option<Handler> {
        let newest = self.handlers.iter().rev().find(|(since, _)| *since <= opset);
        newest.or(self.handlers.first()).map(|(_, h)| *h)
    }

    /// The schema in force at imported version `opset`.
    pub fn schema(&self, opset: i64) -> Option<&'static OpSchema> {
        registry().version_at(self.versions, opset)
    }
}

/// Operators by domain and name.
pub(super) struct Table {
    /// The default domain apart, so that nearly every lookup is a single hash of the name.
    default: HashMap<&'static str, Operator>,
    others: HashMap<&'static str, HashMap<&'static str, Operator>>,
}

impl Table {
    /// The operator `op` of `domain` (`""` is the default domain).
    pub fn get(&self, domain: &str, op: &str) -> Option<&Operator> {
        if domain.is_empty() { self.default.get(op) } else { self.others.get(domain)?.get(op) }
    }

    fn build() -> Table {
        let mut table = Table { default: HashMap::default(), others: HashMap::default() };
        for (domain, op, versions) in registry().operators() {
            let mut handlers: Vec<(i64, Handler)> = handler_of(domain, op).map(|h| (1, h)).into_iter().collect();
            for &(d, o, since, rule) in ops::FROM_VERSION {
                if d == domain && o == op {
                    handlers.push((since, Handler::Rule(rule)));
                }
            }
            handlers.sort_by_key(|(since, _)| *since);
            let operator = Operator { handlers, versions };
            let ops = if domain.is_empty() { &mut table.default } else { table.others.entry(domain).or_default() };
            ops.insert(op, operator);
        }
        table
    }
}

/// The table, built on first use.
pub(super) fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(Table::build)
}

/// The handler of `op` of `domain`: control flow, or the rule of the family that claims it.
fn handler_of(domain: &str, op: &str) -> Option<Handler> {
    if domain.is_empty() {
        if control::is_control(op) {
            return Some(Handler::Control);
        }
        return ops::DEFAULT_DOMAIN.iter().find_map(|family| family(op)).map(Handler::Rule);
    }
    let (_, family) = ops::OTHER_DOMAINS.iter().find(|(d, _)| *d == domain)?;
    family(op).map(Handler::Rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each operator is claimed by at most one family (or is control flow), so the order
    /// in which the table asks them does not matter.
    #[test]
    fn no_operator_has_two_rules() {
        for (domain, op, _) in registry().operators() {
            let mut claims: Vec<&str> = Vec::new();
            if domain.is_empty() {
                if control::is_control(op) {
                    claims.push("control");
                }
                claims.extend(ops::DEFAULT_DOMAIN.iter().filter(|f| f(op).is_some()).map(|_| "a family"));
            } else {
                claims.extend(
                    ops::OTHER_DOMAINS.iter().filter(|(d, f)| *d == domain && f(op).is_some()).map(|_| "a family"),
                );
            }
            assert!(claims.len() <= 1, "{domain}::{op} is claimed {} times", claims.len());
        }
    }

    /// The table knows the operators real models use, with the handler expected.
    #[test]
    fn lookups_find_the_handler() {
        let t = table();
        assert!(matches!(t.get("", "Conv").and_then(|o| o.handler(13)), Some(Handler::Rule(_))));
        assert!(matches!(t.get("", "Loop").and_then(|o| o.handler(13)), Some(Handler::Control)));
        assert!(matches!(t.get("ai.onnx.ml", "ZipMap").and_then(|o| o.handler(3)), Some(Handler::Rule(_))));
        assert!(matches!(t.get("ai.onnx.preview", "FlexAttention").and_then(|o| o.handler(1)), Some(Handler::Rule(_))));
        // DFT's rule changes at opset 20 (the axis became an input).
        let dft = t.get("", "DFT").expect("DFT");
        assert_eq!(dft.handlers.iter().map(|(since, _)| *since).collect::<Vec<_>>(), [1, 20]);
        assert_eq!(t.get("", "Conv").and_then(|o| o.schema(13)).map(|s| s.since_version), Some(11));
        assert!(t.get("", "NoSuchOp").is_none());
        assert!(t.get("com.microsoft", "FusedConv").is_none());
    }
}
