//! Judging each graph node once it is inferred: the driver's part of checking, apart from
//! the store of what is known ([`super::env`]). A node is judged against its operator's
//! type constraints ([`super::constraints`]), the validation rules registered under its
//! key ([`super::registry`], [`super::validate`]), what onnxruntime refuses in the function
//! body it infers the node through ([`super::runtime_body`]), and for reading a value onnx's
//! inference leaves untyped.

use super::env::Env;
use super::types::OnnxKnows;
use crate::diagnostic::Diagnostic;
use crate::ir::{GraphId, NodeId};
use crate::schema::OpSchema;

impl Env<'_> {
    /// Checks node `n` of `graph`, just inferred, against its operator's type constraints;
    /// `schema` is the default-domain schema inference found for it, if any.
    pub(crate) fn check_constraints(&mut self, graph: GraphId, n: NodeId, schema: Option<&'static OpSchema>) {
        if self.violations.is_none() {
            // The onnx-like inference reads which If outputs onnx leaves untyped (see
            // [`Env::onnx_leaves_untyped`]).
            if self.as_onnx {
                self.note_untyped_if_outputs(graph, n);
            }
            return;
        }
        // Inference looked the schema up at this env's opset: it is the constraint check's
        // when that is the model's own import (a graph, not a function body).
        let schema = schema.filter(|_| self.function.is_none() && self.model_opset == Some(self.opset));
        let inputs = self.numbers.node_inputs(n, &self.model.nodes[n]);
        let mut new = Vec::new();
        let mut bindings = std::mem::take(&mut self.bindings);
        let lookup = |i: usize| inputs.get(i).and_then(|v| self.ty(v));
        super::constraints::node_violations(self.model, n, schema, lookup, &mut bindings, &mut new);
        if let Some(schema) = schema {
            let node = &self.model.nodes[n];
            // Loop's and Scan's body outputs are judged by kind in `validate/control.rs`.
            if schema.op == "If" {
                let outputs = self.numbers.node_outputs(n, node);
                let output = |i: usize| outputs.get(i).and_then(|v| self.ty(v));
                super::constraints::body_output_violations(n, schema, output, node.outputs.len(), &mut new);
            }
            self.rule_findings(n, schema, &mut new);
            // What onnxruntime finds in the function body it infers the node through, when
            // onnx's own rule finds nothing.
            if !new.iter().any(|d| d.severity == crate::diagnostic::Severity::Error)
                && let Some(refused) = super::runtime_body::refusal(self, n, schema)
            {
                new.push(refused);
            }
            self.untyped_by_onnx(graph, n, schema, &mut new);
        } else if self.function.is_none()
            && let Some(domain @ ("ai.onnx.ml" | "ai.onnx.preview" | "ai.onnx.preview.training")) =
                self.model.nodes[n].schema_domain()
        {
            self.other_domain_findings(domain, n, &mut new);
            self.untyped_by_onnx_in(domain, graph, n, &mut new);
        } else if self.function.is_none()
            && let Some(domain @ ("com.microsoft" | "com.microsoft.nchwc")) = self.model.nodes[n].schema_domain()
        {
            // onnxruntime's contrib operators: their rules, but nothing of onnx's inference,
            // which passes these nodes by.
            self.other_domain_findings(domain, n, &mut new);
        }
        self.bindings = bindings;
        if let Some(found) = &mut self.violations
            && !new.is_empty()
        {
            found.entry(graph).or_default().extend(new);
        }
    }

    /// What onnx's inference rules fail default-domain node `n` (of operator `schema`) for,
    /// judged from what this environment knows of its inputs ([`super::validate`]).
    pub(super) fn rule_findings(&self, n: NodeId, schema: &OpSchema, found: &mut Vec<Diagnostic>) {
        let node = &self.model.nodes[n];
        let Some(op) = node.op_type.as_ref().and_then(|o| o.as_str()) else { return };
        let inputs = self.numbers.node_inputs(n, node);
        let lookup = |i: usize| inputs.get(i).and_then(|v| self.ty(v));
        // Only the values onnx's inference reads (initializers, `Constant` outputs), not
        // those of shape computations: a node judged on them is judged as onnx judges it.
        let constant = |i: usize| {
            let value = inputs.get(i).filter(|&v| self.constant(v).is_some())?;
            self.value(value).and_then(super::types::Known::ints)
        };
        let tensor = |i: usize| inputs.get(i).and_then(|v| self.constant(v));
        let body = |g: GraphId| super::graph_output_types(self.model, g, self);
        let untyped = |i: usize| inputs.get(i).is_some_and(|v| self.onnx_leaves_untyped(v));
        let since = schema.since_version;
        let validate = super::registry::table().get("", op).and_then(|o| o.validator(since));
        let judge = super::validate::Judge {
            model: self.model,
            n,
            node,
            op,
            since,
            lookup: &lookup,
            constant: &constant,
            tensor: &tensor,
            body: &body,
            untyped: &untyped,
        };
        super::validate::node_rule_violations(&judge, validate, found);
    }

    /// What the registered rule of node `n`, of `domain` (not the default one), fails it
    /// for, judged from its input types.
    fn other_domain_findings(&self, domain: &str, n: NodeId, found: &mut Vec<Diagnostic>) {
        let node = &self.model.nodes[n];
        let Some(op) = node.op_type.as_ref().and_then(|o| o.as_str()) else { return };
        let version = self.domain_opset(domain).unwrap_or(1);
        let Some(validate) = super::registry::table().get(domain, op).and_then(|o| o.validator(version)) else {
            return;
        };
        let inputs = self.numbers.node_inputs(n, node);
        let lookup = |i: usize| inputs.get(i).and_then(|v| self.ty(v));
        let judge = super::validate::Judge {
            model: self.model,
            n,
            node,
            op,
            since: version,
            lookup: &lookup,
            constant: &|_| None,
            tensor: &|_| None,
            body: &|_| Vec::new(),
            untyped: &|_| false,
        };
        super::validate::other_domain_violations(&judge, validate, found);
    }

    /// [`Env::untyped_by_onnx`] for node `n` of a domain other than the default one.
    fn untyped_by_onnx_in(&mut self, domain: &str, graph: GraphId, n: NodeId, found: &mut Vec<Diagnostic>) {
        let op = self.model.nodes[n].op_type.as_ref().and_then(|o| o.as_str());
        let version = self.domain_opset(domain).unwrap_or(1);
        if let Some(schema) = op.and_then(|op| crate::schema::registry().lookup(domain, op, version)) {
            self.untyped_by_onnx(graph, n, schema, found);
        }
    }

    /// Node `n` of `graph` (of operator `schema`) reading a value onnx's inference left
    /// untyped, or typed only by a declaration lacking parts, where onnx fails it for that;
    /// and, for an If, which of its outputs onnx leaves so: those `graph` declares no whole
    /// type for, as an output or in `value_info` (onnx starts from the declaration), for
    /// the nodes after it.
    fn untyped_by_onnx(&mut self, graph: GraphId, n: NodeId, schema: &OpSchema, found: &mut Vec<Diagnostic>) {
        let node = &self.model.nodes[n];
        if !self.onnx_untyped.is_empty() {
            for (i, value) in self.numbers.node_inputs(n, node).iter().enumerate() {
                let Some((known, flaw)) = self.onnx_untyped.get(&value) else { continue };
                if !super::validate::fails_without_type(schema, node, i, *known) {
                    continue;
                }
                let (op, name) = (&schema.op, node.inputs[i].escaped());
                let why = "both branches of the If that gives it make it with operators onnx has no schema for, and \
                           declare no type";
                let message = match known {
                    OnnxKnows::Untyped => format!(
                        "input {i} of {op} is '{name}', which onnx's inference has no type for ({why}), but {op}'s \
                         inference needs its type: declare it in the branches' outputs"
                    ),
                    OnnxKnows::Partly | OnnxKnows::NoKind => format!(
                        "input {i} of {op} is '{name}', which onnx's inference knows only as its declaration says, \
                         {flaw} ({why}), and onnx fails {op} on that: declare the whole type"
                    ),
                };
                found.push(Diagnostic::error("untyped-input", crate::diagnostic::Anchor::NodeInput(n, i), message));
            }
        }
        self.note_untyped_if_outputs(graph, n);
    }

    /// For If node `n` of `graph`: which of its outputs onnx's inference leaves untyped or
    /// typed only by a declaration lacking parts (see [`Env::untyped_by_onnx`]).
    fn note_untyped_if_outputs(&mut self, graph: GraphId, n: NodeId) {
        let node = &self.model.nodes[n];
        if node.op_type.as_ref().and_then(|o| o.as_str()) != Some("If") || node.schema_domain() != Some("") {
            return;
        }
        let g = &self.model.graphs[graph];
        let declared = |name: &crate::ir::Str| {
            g.outputs.iter().chain(&g.value_info).find_map(|v| v.ty.as_ref().filter(|_| v.name.as_ref() == Some(name)))
        };
        let outputs = self.numbers.node_outputs(n, node);
        let untyped = super::validate::if_outputs_onnx_leaves_untyped(self.model, node);
        for (k, value) in outputs.iter().enumerate() {
            if untyped.get(k) != Some(&true) {
                continue;
            }
            let known = match declared(&node.outputs[k]) {
                None => (OnnxKnows::Untyped, String::new()),
                Some(ty) if ty.value.is_none() => (OnnxKnows::NoKind, "a type of no kind".to_owned()),
                Some(ty) => match super::validate::parts_missing(ty) {
                    Some(flaw) => (OnnxKnows::Partly, flaw),
                    None => continue,
                },
            };
            self.onnx_untyped.insert(value, known);
        }
    }
}
