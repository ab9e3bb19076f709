//! Nodes: a statement of the main graph or a function (laid out again by the formatter where
//! the quick layout may not be its own), or a node inside a graph attribute.

use std::fmt::Write as _;

use onnx_syntax::format::Fragment;

use super::escape::{annotation_text, embed, name, slots};
use super::layout::{relayout, too_wide};
use super::notes::Notes;
use super::{OP_PLACEHOLDER, Printer};
use crate::ir::*;
use crate::lower::to_proto::embedded;
use crate::print::is_identifier;

impl Printer<'_, '_> {
    /// A node of the main graph or a function body: printed, then laid out again by the
    /// formatter where the quick layout may not be the formatter's (a line too wide, graphs
    /// inside), so that printed text is formatted text. Nodes inside those graphs are laid
    /// out with the node that holds them.
    pub(super) fn statement(&mut self, id: NodeId) {
        // The digest comments stay out of the relayout, which would move them into the node.
        self.digest_lines(id, 2);
        let start = self.out.len();
        self.capturing += 1;
        self.node_body(id, 2);
        self.capturing -= 1;
        let text = &self.out[start..];
        if holds_graph(&self.m.nodes[id]) || holds_tensor_list(&self.m.nodes[id]) || too_wide(text, 0) {
            let text = text.trim_end_matches('\n').to_owned();
            self.out.truncate(start);
            self.out.push_str(&relayout(Fragment::Node, text, 2));
            self.out.push('\n');
        }
    }

    /// A node inside a graph attribute, after the comments on the tensors it refers to.
    pub(super) fn node(&mut self, id: NodeId, indent: usize) {
        self.digest_lines(id, indent);
        self.node_body(id, indent);
    }

    /// A comment line for each tensor of the node's attributes that the layout has a digest
    /// for (a `Constant` whose value the outline refers to).
    fn digest_lines(&mut self, id: NodeId, indent: usize) {
        if self.layout.digests.is_empty() {
            return;
        }
        for a in &self.m.nodes[id].attributes {
            for t in a.t.iter().chain(&a.tensors) {
                if let Some(digest) = self.layout.digests.get(t) {
                    let _ = writeln!(self.out, "{}# {digest}", " ".repeat(indent));
                }
            }
        }
    }

    fn node_body(&mut self, id: NodeId, indent: usize) {
        let n = &self.m.nodes[id];
        let mut notes = Notes::default();
        notes.text("doc_string", n.doc_string());
        notes.pairs("metadata_props", n.metadata_props());
        for c in n.device_configurations() {
            notes.raw(format!("device_configuration: {}", embed(&embedded::node_device_configuration(c))));
        }
        let op = match n.op_type.as_ref().and_then(|o| o.as_str()) {
            Some(op) if is_identifier(op.as_bytes()) => op,
            Some(_) => {
                notes.text("op_type", n.op_type.as_ref());
                OP_PLACEHOLDER
            }
            None => {
                match &n.op_type {
                    Some(bytes) => notes.text("op_type", Some(bytes)),
                    None => notes.raw("op_type: unset".into()),
                }
                OP_PLACEHOLDER
            }
        };
        let mut head = String::new();
        match &n.domain {
            None if self.domain_unset_default => {}
            None => notes.raw("domain: unset".into()),
            Some(d) if d.is_empty() && !self.domain_unset_default => {}
            Some(d) => match d.as_str() {
                Some(text) if !text.is_empty() && text.split('.').all(|seg| is_identifier(seg.as_bytes())) => {
                    head.push_str(text);
                    head.push('.');
                }
                _ => notes.raw(format!("domain: {}", annotation_text(d))),
            },
        }
        head.push_str(op);
        if let Some(o) = n.overload() {
            match o.as_str() {
                Some(text) if is_identifier(text.as_bytes()) => {
                    head.push(':');
                    head.push_str(text);
                }
                _ => notes.raw(format!("overload: {}", annotation_text(o))),
            }
        }
        self.out.push_str(&notes.lines(indent));
        self.out.push_str(&" ".repeat(indent));
        if let Some(label) = &n.name {
            let _ = write!(self.out, "[{}] ", if label.is_empty() { String::new() } else { name(label) });
        }
        let outputs = slots(&n.outputs);
        let inputs = slots(&n.inputs);
        let _ = write!(self.out, "{outputs}{}= {head}", if outputs.is_empty() { "" } else { " " });
        let holds_graph = holds_graph(n);
        if n.attributes.is_empty() {
            let _ = write!(self.out, " ({inputs})");
        } else if !holds_graph {
            let attrs: Vec<String> = n.attributes.iter().map(|a| self.attribute(a, indent + 2)).collect();
            self.out.push(' ');
            self.list("<", ">", &attrs, indent);
            let _ = write!(self.out, " ({inputs})");
        } else {
            let _ = writeln!(self.out, " ({inputs}) <");
            for (i, a) in n.attributes.iter().enumerate() {
                let text = self.attribute_with_graphs(a, indent + 2);
                if !text.starts_with(' ') {
                    self.out.push_str(&" ".repeat(indent + 2));
                }
                self.out.push_str(&text);
                self.out.push_str(if i + 1 < n.attributes.len() { ",\n" } else { "\n" });
            }
            self.out.push_str(&" ".repeat(indent));
            self.out.push('>');
        }
        self.out.push('\n');
    }
}

/// Whether a node holds a list of tensors, which the printer writes on one line and leaves to
/// the formatter to lay out (each tensor's values start where the formatter puts it).
fn holds_tensor_list(n: &Node) -> bool {
    n.attributes.iter().any(|a| !a.tensors.is_empty())
}

/// Whether a node holds graphs (its text then has statements of its own inside).
fn holds_graph(n: &Node) -> bool {
    n.attributes.iter().any(|a| a.g.is_some() || !a.graphs.is_empty())
}
