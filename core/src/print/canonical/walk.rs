//! The walk from the top: the model's header, its graphs (signature, `< … >` list of
//! initializers and value infos, nodes) and its functions.

use std::borrow::Cow;
use std::fmt::Write as _;

use onnx_syntax::format::Fragment;

use super::escape::{embed, identifier_like, name, plain_name, string};
use super::layout::{relayout, too_wide};
use super::notes::{Notes, unset_opset_notes};
use super::{OP_PLACEHOLDER, Printer};
use crate::ir::*;
use crate::lower::to_proto::embedded;

impl Printer<'_, '_> {
    pub(super) fn model(&mut self) {
        let m = self.m;
        // The domain most nodes have decides the default, so few nodes need an annotation.
        let unset = m.nodes.iter().filter(|(_, n)| n.domain.is_none()).count();
        self.domain_unset_default = unset * 2 > m.nodes.len();
        let mut notes = Notes::default();
        if self.domain_unset_default {
            notes.raw("node_domain: unset".into());
        }
        if m.graph.is_none() {
            notes.raw("graph: unset".into());
        }
        unset_opset_notes(&m.opset_import, &mut notes);
        // Metadata the header cannot write (an entry without key or value) goes whole into
        // an annotation, so its order is kept.
        let metadata_in_header = m.metadata_props.iter().all(|p| p.key.is_some() && p.value.is_some());
        if !metadata_in_header {
            notes.pairs("metadata_props", &m.metadata_props);
        }
        self.out.push_str(&notes.lines(0));
        // Rare model parts without a text form of their own yet, embedded as protobuf.
        for c in &m.configuration {
            let _ = writeln!(self.out, "#@ configuration: {}", embed(&embedded::device_configuration(c)));
        }
        for t in &m.training_info {
            let _ = writeln!(self.out, "#@ training_info: {}", embed(&embedded::training_info(m, t)));
        }
        let mut entries = Vec::new();
        if let Some(v) = m.ir_version {
            entries.push(format!("ir_version: {v}"));
        }
        entries.push(format!("opset_import: [{}]", opset_list(&m.opset_import)));
        for (key, value) in
            [("producer_name", &m.producer_name), ("producer_version", &m.producer_version), ("domain", &m.domain)]
        {
            if let Some(v) = value {
                entries.push(format!("{key}: {}", string(v)));
            }
        }
        if let Some(v) = m.model_version {
            entries.push(format!("model_version: {v}"));
        }
        if let Some(v) = &m.doc_string {
            entries.push(format!("doc_string: {}", string(v)));
        }
        if !m.metadata_props.is_empty() && metadata_in_header {
            let items: Vec<String> = m
                .metadata_props
                .iter()
                .filter_map(|p| Some(format!("{}: {}", string(p.key.as_ref()?), string(p.value.as_ref()?))))
                .collect();
            entries.push(format!("metadata_props: [{}]", items.join(", ")));
        }
        let body: Vec<String> = entries.iter().map(|e| format!("  {e}")).collect();
        let header = format!("<\n{}\n>", body.join(",\n"));
        self.out.push_str(&relayout(Fragment::ModelHeader, header, 0));
        self.out.push('\n');
        match m.graph {
            Some(graph) => self.graph(graph, 0, true),
            // The text needs a graph; `graph: unset` above says this one is not the model's.
            None => self.out.push_str("\"\" () => () {\n}"),
        }
        self.out.push('\n');
        for &f in &m.functions {
            self.out.push('\n');
            self.function(f);
        }
    }

    /// A graph at `indent`; `top` graphs may take a quoted name that is a keyword.
    pub(super) fn graph(&mut self, id: GraphId, indent: usize, top: bool) {
        let g = &self.m.graphs[id];
        let mut notes = Notes::default();
        notes.text("doc_string", g.doc_string.as_ref());
        notes.pairs("metadata_props", &g.metadata_props);
        for t in &g.sparse_initializers {
            notes.raw(format!("sparse_initializer: {}", embed(&embedded::sparse_tensor(self.m, t))));
        }
        for a in &g.quantization_annotation {
            notes.raw(format!("quantization_annotation: {}", embed(&embedded::tensor_annotation(a))));
        }
        let graph_name = match &g.name {
            Some(n) if top => name(n),
            Some(n) if n.as_str().is_some_and(|t| plain_name(n) == t) => plain_name(n),
            // onnx's parser takes only a plain identifier for a subgraph: a name like
            // `p2o.paddle.loop.0` is written as `p2o_paddle_loop_0` and kept in the annotation.
            Some(n) => {
                notes.text("name", Some(n));
                identifier_like(n)
            }
            None => {
                notes.raw("name: unset".into());
                "\"\"".into()
            }
        };
        if !notes.0.is_empty() {
            // Annotations of a subgraph follow the `=` of its attribute on their own line.
            if !top {
                self.out.push('\n');
            }
            self.out.push_str(&notes.lines(indent));
            if !top {
                self.out.push_str(&" ".repeat(indent));
            }
        }
        self.out.push_str(&graph_name);
        self.out.push(' ');
        let inputs: Vec<String> = g.inputs.iter().map(|v| self.value_info(v, indent + 2)).collect();
        let outputs: Vec<String> = g.outputs.iter().map(|v| self.value_info(v, indent + 2)).collect();
        self.list("(", ")", &inputs, indent);
        self.out.push_str(" => ");
        self.list("(", ")", &outputs, indent);
        let locals = g.initializers.len() + g.value_info.len();
        let after_nodes = self.layout.initializers_after_nodes;
        if locals > 0 && !after_nodes {
            self.out.push(' ');
            self.locals(id, indent);
        }
        self.out.push_str(" {\n");
        for &n in &g.nodes {
            if top {
                self.statement(n)
            } else {
                self.node(n, indent + 2)
            }
            self.drain();
        }
        if locals > 0 && after_nodes {
            if !g.nodes.is_empty() {
                self.out.push('\n');
            }
            self.out.push_str(&" ".repeat(indent + 2));
            self.out.push_str("@initializers ");
            self.locals(id, indent + 2);
            self.out.push('\n');
        }
        self.out.push_str(&" ".repeat(indent));
        self.out.push('}');
    }

    /// A graph's `< … >` list (initializers first, then value infos) for a list whose first
    /// line is indented by `indent`.
    fn locals(&mut self, id: GraphId, indent: usize) {
        let g = &self.m.graphs[id];
        let initializers = g.initializers.len();
        self.list_with("<", ">", initializers + g.value_info.len(), indent, |p, i| {
            Cow::Owned(match g.initializers.get(i) {
                Some(&t) => p.initializer_with_digest(t, indent + 2),
                None => p.value_info(&g.value_info[i - initializers], indent + 2),
            })
        });
    }

    /// An initializer, after a comment line with its digest if the layout has one for it.
    fn initializer_with_digest(&self, id: TensorId, indent: usize) -> String {
        let item = self.initializer(&self.m.tensors[id], indent);
        match self.layout.digests.get(&id) {
            Some(digest) => {
                // Laid out here, without the comment, which the formatter would move into the
                // declaration's brackets.
                let first = if item.starts_with(' ') { 0 } else { indent };
                let item = if too_wide(&item, first) { relayout(Fragment::Declaration, item, indent) } else { item };
                let pad = " ".repeat(indent);
                let item = if item.starts_with(' ') { item } else { format!("{pad}{item}") };
                format!("{pad}# {digest}\n{item}")
            }
            None => item,
        }
    }

    pub(super) fn function(&mut self, id: FunctionId) {
        let f = &self.m.function_store[id];
        let mut notes = Notes::default();
        notes.pairs("metadata_props", &f.metadata_props);
        if f.name.is_none() {
            notes.raw("name: unset".into());
        }
        unset_opset_notes(&f.opset_import, &mut notes);
        self.out.push_str(&notes.lines(0));
        let mut header = Vec::new();
        if let Some(d) = &f.domain {
            header.push(format!("domain: {}", string(d)));
        }
        if let Some(o) = &f.overload {
            header.push(format!("overload: {}", string(o)));
        }
        if let Some(d) = &f.doc_string {
            header.push(format!("doc_string: {}", string(d)));
        }
        if !f.opset_import.is_empty() {
            header.push(format!("opset_import: [{}]", opset_list(&f.opset_import)));
        }
        if !header.is_empty() {
            let header = format!("<{}>", header.join(", "));
            self.out.push_str(&relayout(Fragment::FunctionHeader, header, 0));
            self.out.push('\n');
        }
        let fname = f.name.as_ref().map_or_else(|| OP_PLACEHOLDER.to_owned(), name);
        self.out.push_str(&fname);
        self.out.push(' ');
        // Parameters: names first, then those with defaults; the parser sorts them into
        // `attribute` and `attribute_proto` again.
        let mut params: Vec<String> = f.attributes.iter().map(name).collect();
        // A default that holds a graph is embedded whole (`proto`), like any attribute the
        // one-line form cannot hold.
        params.extend(f.attribute_protos.iter().map(|a| {
            if a.g.is_some() || !a.graphs.is_empty() { self.embedded_attribute(a, 2) } else { self.attribute(a, 2) }
        }));
        if !params.is_empty() {
            self.list("<", ">", &params, 0);
            self.out.push(' ');
        }
        // Inputs and outputs by name only; every value_info goes to the locals list, which
        // keeps their order exactly.
        let io = |names: &[Str]| names.iter().map(plain_name).collect::<Vec<_>>();
        let (inputs, outputs) = (io(&f.inputs), io(&f.outputs));
        self.list("(", ")", &inputs, 0);
        self.out.push_str(" => ");
        self.list("(", ")", &outputs, 0);
        let locals: Vec<String> = f.value_info.iter().map(|v| self.value_info(v, 2)).collect();
        if !locals.is_empty() {
            self.out.push(' ');
            self.list("<", ">", &locals, 0);
        }
        self.out.push_str(" {\n");
        for &n in &f.nodes {
            self.statement(n);
        }
        self.out.push_str("}\n");
    }
}

/// `"domain" : version, …` as the header writes them.
fn opset_list(list: &[OpsetImport]) -> String {
    let items: Vec<String> = list
        .iter()
        .map(|o| {
            format!("{} : {}", o.domain.as_ref().map_or_else(|| "\"\"".to_owned(), string), o.version.unwrap_or(0))
        })
        .collect();
    items.join(", ")
}
