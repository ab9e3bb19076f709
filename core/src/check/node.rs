//! Node level (semantics spec §1.4): the node itself, its operator's schema, and the node
//! against that schema (arity, required inputs, attributes).

use std::borrow::Cow;
use std::collections::HashSet;

use super::{Checker, GraphRole, Opsets};
use crate::diagnostic::Anchor;
use crate::ir::{Node, NodeId, Str};
use crate::schema::{Formal, FormalOption, OpSchema};

/// A name as text: borrowed when it is UTF-8 (always, in practice), escaped otherwise, so
/// the per-node checks allocate nothing on well-formed models.
fn text_of(name: Option<&Str>) -> Cow<'_, str> {
    match name {
        None => Cow::Borrowed(""),
        Some(s) => s.as_str().map_or_else(|| Cow::Owned(s.escaped()), Cow::Borrowed),
    }
}

/// Domains whose operators must all be known (onnx's list; `ai.onnx.preview*` is not in it).
const STANDARD_DOMAINS: [&str; 4] = ["", "ai.onnx", "ai.onnx.ml", "ai.onnx.training"];

impl Checker<'_> {
    pub(super) fn node(&mut self, id: NodeId, role: GraphRole, opsets: &Opsets) {
        let n = &self.model.nodes[id];
        let op = text_of(n.op_type.as_ref());
        if op.is_empty() {
            self.error("missing-op-type", Anchor::Node(id), "the node has no operator type");
        }
        if n.inputs.is_empty() && n.outputs.is_empty() {
            self.error("node-without-values", Anchor::Node(id), "the node has neither inputs nor outputs");
        }
        let mut names = HashSet::new();
        for (i, a) in n.attributes.iter().enumerate() {
            if let Some(name) = &a.name
                && !names.insert(name)
            {
                self.error(
                    "duplicate-attribute",
                    Anchor::Attribute(id, i),
                    format!("attribute '{name}' appears twice"),
                );
            }
            self.attribute(id, i, role, opsets);
        }
        if op.is_empty() {
            return;
        }
        let domain = text_of(n.domain.as_ref());
        let Some(version) = opsets.version(&domain) else {
            let shown =
                if domain.is_empty() { "ai.onnx (the default domain)".to_owned() } else { format!("'{domain}'") };
            self.error(
                "missing-opset-import",
                Anchor::Node(id),
                format!("no opset import for domain {shown}, used by '{op}'"),
            );
            return;
        };
        let schema_domain = crate::ir::schema_domain(&domain);
        if schema_domain.is_empty() && self.registry.is_experimental_op(&op) {
            self.warning(
                "experimental-op",
                Anchor::Node(id),
                format!("'{op}' is an experimental operator; it is not checked"),
            );
            return;
        }
        let standard = STANDARD_DOMAINS.contains(&&*domain);
        // onnx's checker knows no schema onnxruntime adds to onnx's own domains
        // (SimplifiedLayerNormalization): such a node fails it as an unknown operator.
        let schema = self.registry.lookup(schema_domain, &op, version);
        let added_by_onnxruntime = standard && schema.is_some_and(|s| s.from_onnxruntime);
        let Some(schema) = schema.filter(|_| !added_by_onnxruntime) else {
            if self.is_local_function(&domain, &op) {
                return;
            }
            if standard || self.options.check_custom_domain {
                let known: Vec<_> =
                    self.registry.versions(schema_domain, &op).iter().filter(|s| !s.from_onnxruntime).collect();
                let message = match known.first() {
                    Some(first) => format!(
                        "'{op}' is not in opset {version} of {}; it first appears in version {}",
                        shown_domain(schema_domain),
                        first.since_version
                    ),
                    None => {
                        let names = self.registry.operators_at(schema_domain, version);
                        match did_you_mean(&op, names.iter().map(|s| s.op.as_str())) {
                            Some(near) => format!(
                                "there is no operator '{op}' in {} (did you mean '{near}'?)",
                                shown_domain(schema_domain)
                            ),
                            None => format!("there is no operator '{op}' in {}", shown_domain(schema_domain)),
                        }
                    }
                };
                let message = if added_by_onnxruntime {
                    format!("{message}; onnxruntime registers its own '{op}' there and runs the model")
                } else {
                    message
                };
                self.error("unknown-op", Anchor::Node(id), message);
            } else if schema_domain.starts_with("com.microsoft") && self.registry.knows_domain(schema_domain) {
                // onnx passes custom domains by; onnxruntime, which owns this one, refuses
                // an operator it does not register unless a custom-op library adds it.
                self.warning(
                    "unknown-op",
                    Anchor::Node(id),
                    format!(
                        "onnxruntime registers no operator '{op}' in {}; it loads the model only with a \
                         custom-op library that adds one",
                        shown_domain(schema_domain)
                    ),
                );
            }
            return;
        };
        if schema.deprecated {
            self.error(
                "deprecated-op",
                Anchor::Node(id),
                format!("'{op}' version {} (in force at opset {version}) is deprecated", schema.since_version),
            );
            return;
        }
        self.verify(id, n, schema);
    }

    fn is_local_function(&self, domain: &str, op: &str) -> bool {
        self.model.functions.iter().any(|&f| {
            let f = &self.model.function_store[f];
            f.name.as_ref().is_some_and(|n| n == op)
                && f.domain.as_ref().map_or("", |d| d.as_str().unwrap_or("")) == domain
        })
    }

    /// The node against its schema (onnx's `OpSchema::Verify`).
    fn verify(&mut self, id: NodeId, n: &Node, schema: &OpSchema) {
        let op = &schema.op;
        let version = schema.since_version;
        // `what` is the singular noun ("input"); "exactly 1 input" keeps it singular.
        let count_error = |what: &str, count: usize, min: usize, max: Option<usize>| {
            let range = match max {
                None => format!("at least {min}"),
                Some(max) if max == min => format!("exactly {min}"),
                Some(max) => format!("{min} to {max}"),
            };
            let noun = if max == Some(1) && min == 1 { what.to_owned() } else { format!("{what}s") };
            format!("'{op}'-{version} takes {range} {noun}, the node has {count}")
        };
        let inputs = n.inputs.len();
        if inputs < schema.min_inputs || schema.max_inputs.is_some_and(|m| inputs > m) {
            let message = count_error("input", inputs, schema.min_inputs, schema.max_inputs);
            self.error("input-count", Anchor::Node(id), message);
        }
        let outputs = n.outputs.len();
        let allowed = schema.allowed_output_counts.as_ref().is_none_or(|c| c.contains(&outputs));
        if outputs < schema.min_outputs || schema.max_outputs.is_some_and(|m| outputs > m) || !allowed {
            let message = match &schema.allowed_output_counts {
                Some(counts) => format!("'{op}'-{version} takes {counts:?} outputs, the node has {outputs}"),
                None => count_error("output", outputs, schema.min_outputs, schema.max_outputs),
            };
            self.error("output-count", Anchor::Node(id), message);
        }
        for (i, formal) in empty_single_slots(&n.inputs, &schema.inputs) {
            let message = format!("input {i} ('{formal}') of '{op}' is required");
            self.error("missing-required-input", Anchor::NodeInput(id, i), message);
        }
        for i in empty_inputs_inference_reads(schema, &n.inputs) {
            let message = format!(
                "input {i} of '{op}'-{version} is empty, but onnx's inference reads its type (it fails on \
                 an empty name here); give it a value"
            );
            self.error("missing-required-input", Anchor::NodeInput(id, i), message);
        }
        for (i, formal) in empty_single_slots(&n.outputs, &schema.outputs) {
            let message = format!("output {i} ('{formal}') of '{op}' is required");
            self.error("missing-required-output", Anchor::NodeOutput(id, i), message);
        }
        self.verify_attributes(id, n, schema);
    }

    fn verify_attributes(&mut self, id: NodeId, n: &Node, schema: &OpSchema) {
        let op = &schema.op;
        for (i, a) in n.attributes.iter().enumerate() {
            // Borrowed when valid UTF-8 (every real name): no string made per attribute.
            let name = text_of(a.name.as_ref());
            let anchor = Anchor::Attribute(id, i);
            let Some(expected) = schema.attribute(&name) else {
                if !schema.allows_unchecked_attributes && !name.starts_with(&self.registry.internal_attribute_prefix) {
                    let message = match did_you_mean(&name, schema.attributes.iter().map(|a| a.name.as_str())) {
                        Some(near) => format!("'{op}' has no attribute '{name}' (did you mean '{near}'?)"),
                        None => format!("'{op}' has no attribute '{name}'"),
                    };
                    self.error("unknown-attribute", anchor, message);
                }
                continue;
            };
            if a.attribute_type() != Some(expected.ty) {
                let found = a.attribute_type().map_or_else(|| format!("{:?}", a.ty), |t| t.name().to_owned());
                self.error(
                    "attribute-type",
                    anchor,
                    format!("attribute '{name}' of '{op}' must be {}, not {found}", expected.ty.name()),
                );
                continue;
            }
            if a.ref_attr_name.is_none() {
                use crate::ir::AttributeType as T;
                let present = match expected.ty {
                    T::Tensor => a.t.is_some(),
                    T::SparseTensor => a.sparse_tensor.is_some(),
                    T::Graph => a.g.is_some(),
                    T::TypeProto => a.tp.is_some(),
                    _ => true,
                };
                if !present {
                    self.error("attribute-value-missing", anchor, format!("attribute '{name}' of '{op}' has no value"));
                }
            }
        }
        for expected in schema.attributes.iter().filter(|a| a.required) {
            if n.attribute(&expected.name).is_none() {
                self.error(
                    "missing-required-attribute",
                    Anchor::Node(id),
                    format!("'{op}' needs attribute '{}' ({})", expected.name, expected.ty.name()),
                );
            }
        }
    }
}

/// Positions left empty (an omitted value) where the formal is not optional, with the
/// formal's name.
fn empty_single_slots<'s>(names: &'s [Str], formals: &'s [Formal]) -> impl Iterator<Item = (usize, &'s str)> {
    names.iter().zip(formals).enumerate().filter_map(|(i, (name, formal))| {
        (name.is_empty() && formal.option == FormalOption::Single).then_some((i, formal.name.as_str()))
    })
}

/// The inputs left empty (`""`) that their schema allows to be empty (a variadic or an
/// optional slot) but whose type onnx's inference function reads all the same, failing the
/// node ("Input 0 expected to have type but instead is null"): the first operand of the
/// variadic operators that take their element type from it, every element of a
/// SequenceConstruct, every carried value of a Loop, every Scan input, SequenceMap's
/// additional inputs, Optional's one input, and the training optimizers' first tensor.
/// Probed against onnx 1.23.2 and onnxruntime, which agree (fixture
/// `node_rules_empty_inputs_18` and its companions).
fn empty_inputs_inference_reads<'n>(schema: &OpSchema, names: &'n [Str]) -> impl Iterator<Item = usize> + 'n {
    let (op, since) = (schema.op.as_str(), schema.since_version);
    let reads: fn(i64, usize) -> bool = match (schema.domain.as_str(), op) {
        ("", "Concat") => |since, i| since >= 4 && i == 0,
        ("", "Sum" | "Max" | "Min" | "Mean") => |since, i| since >= 6 && i == 0,
        ("", "Einsum") => |_, i| i == 0,
        ("", "SequenceConstruct" | "Optional") => |_, _| true,
        ("", "Loop") => |_, i| i >= 2,
        // Version 8's first input, sequence_lens, is an optional tensor.
        ("", "Scan") => |since, i| since >= 9 || i >= 1,
        ("", "SequenceMap") => |_, i| i >= 1,
        ("ai.onnx.preview.training", "Adagrad" | "Adam" | "Momentum") => |_, i| i == 2,
        _ => |_, _| false,
    };
    names.iter().enumerate().filter_map(move |(i, name)| (name.is_empty() && reads(since, i)).then_some(i))
}

fn shown_domain(domain: &str) -> String {
    if domain.is_empty() { "the default domain".to_owned() } else { format!("domain '{domain}'") }
}

/// The closest candidate within a small edit distance, for "did you mean" hints.
pub fn did_you_mean<'c>(word: &str, candidates: impl Iterator<Item = &'c str>) -> Option<&'c str> {
    let limit = (word.len() / 3).max(1);
    candidates
        .map(|c| (strsim::osa_distance(&word.to_ascii_lowercase(), &c.to_ascii_lowercase()), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, c)| (d, c))
        .map(|(_, c)| c)
}
