//! Every name in the text and what it stands for: the table behind go to definition, find
//! references, rename, highlights and hover. Built once per analysed version from the
//! lowered model (definitions and uses from `core::resolve`, placed by the source map) and
//! the syntax tree (operator names, attribute names, graph and function names, dimension
//! parameters, which the IR does not place).

use std::collections::HashMap;

use onnx_core::analysis::TextAnalysis;
use onnx_core::diagnostic::{Anchor, Span};
use onnx_core::facts::{ScopeId, Scopes};
use onnx_core::ir::{FunctionId, GraphId, Model, NodeId, Str};
use onnx_core::resolve::DefSite;
use onnx_syntax::ast;

/// What a name in the text refers to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// A value, by the place that defines it.
    Value(DefSite),
    /// A value name with no definition in scope.
    Undefined(Str),
    /// A model-local function (its name, or a node calling it).
    Function(FunctionId),
    /// A graph's name.
    Graph(GraphId),
    /// A symbolic dimension (`N` in `float[N, 3]`); one name across the document.
    DimParam(String),
    /// The operator of a node that is not a model-local function.
    Op(NodeId),
    /// An attribute's name, by node and index.
    Attribute(NodeId, usize),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occurrence {
    pub span: Span,
    pub target: Target,
    /// The defining occurrence (a definition, a function's or graph's own name, the first
    /// mention of a dimension parameter).
    pub is_def: bool,
}

#[derive(Debug, Default)]
pub struct Index {
    /// Sorted by start offset; they never overlap.
    pub occurrences: Vec<Occurrence>,
    /// Where each definition is, with its name.
    pub defs: HashMap<DefSite, (Str, Span)>,
}

impl Index {
    pub fn build(analysis: &TextAnalysis, scopes: &Scopes) -> Index {
        let model = &analysis.model;
        let map = &analysis.source_map;
        let mut index = Index::default();
        let place = |a: Anchor| map.resolve(a);

        // Definitions. An initializer that gives a graph input its value shares the input's
        // name: both spans are the input's definition.
        let mut by_scope_name: HashMap<(ScopeId, Str), DefSite> = HashMap::new();
        for (name, site) in &analysis.resolution.defs {
            let Some(scope) = scopes.scope_of(*site) else { continue };
            let canonical = *by_scope_name.entry((scope, name.clone())).or_insert(*site);
            if let Some(span) = place(site.anchor()) {
                index.defs.entry(canonical).or_insert((name.clone(), span));
                index.push(span, Target::Value(canonical), true);
            }
        }
        for u in &analysis.resolution.uses {
            let Some(span) = place(u.at) else { continue };
            let target = match u.def {
                Some(def) => Target::Value(by_scope_name_canonical(&index, scopes, &by_scope_name, def)),
                None => Target::Undefined(use_name(model, u.at)),
            };
            index.push(span, target, false);
        }
        // value_info entries describe values of their own graph.
        for (g, spans) in map.graph_values.iter() {
            for (i, info) in model.graphs[g].value_info.iter().enumerate() {
                let (Some(name), Some(&span)) = (&info.name, spans.value_info.get(i)) else { continue };
                let target = match lookup(scopes, &by_scope_name, ScopeId::Graph(g), name) {
                    Some(def) => Target::Value(def),
                    None => Target::Undefined(name.clone()),
                };
                index.push(span, target, false);
            }
        }
        if let Some(tree) = &analysis.tree {
            let graphs = map.graphs.iter().map(|(id, span)| (span.start, id)).collect();
            SyntaxWalk {
                index: &mut index,
                analysis,
                nodes: node_ids(analysis),
                graphs,
                seen_dims: Default::default(),
            }
            .model(tree);
        }
        index.occurrences.sort_by_key(|o| (o.span.start, o.span.end));
        index.occurrences.dedup_by(|a, b| a.span == b.span);
        index
    }

    fn push(&mut self, span: Span, target: Target, is_def: bool) {
        self.occurrences.push(Occurrence { span, target, is_def });
    }

    /// The occurrence under `offset`: one that contains it, or one that ends exactly there
    /// (the cursor just after a name).
    pub fn at(&self, offset: u32) -> Option<&Occurrence> {
        let i = self.occurrences.partition_point(|o| o.span.end < offset);
        let candidates = self.occurrences[i..].iter().take_while(|o| o.span.start <= offset);
        let mut best = None;
        for o in candidates {
            if o.span.start <= offset && offset <= o.span.end {
                // Prefer the one that starts at the offset over the one that ends there.
                if best.is_none() || o.span.start == offset {
                    best = Some(o);
                }
            }
        }
        best
    }

    /// Every occurrence of a target, in text order.
    pub fn occurrences_of<'a>(&'a self, target: &'a Target) -> impl Iterator<Item = &'a Occurrence> + 'a {
        self.occurrences.iter().filter(move |o| &o.target == target)
    }

    /// The defining occurrence of a target.
    pub fn definition(&self, target: &Target) -> Option<Span> {
        match target {
            Target::Value(site) => self.defs.get(site).map(|(_, span)| *span),
            Target::Undefined(_) | Target::Op(_) | Target::Attribute(..) => None,
            _ => self.occurrences_of(target).find(|o| o.is_def).map(|o| o.span),
        }
    }
}

/// The definition `name` refers to in `scope` or a scope around it.
fn lookup(scopes: &Scopes, by_name: &HashMap<(ScopeId, Str), DefSite>, scope: ScopeId, name: &Str) -> Option<DefSite> {
    scopes.scope_chain(scope).into_iter().find_map(|s| by_name.get(&(s, name.clone())).copied())
}

fn by_scope_name_canonical(
    index: &Index,
    scopes: &Scopes,
    by_name: &HashMap<(ScopeId, Str), DefSite>,
    def: DefSite,
) -> DefSite {
    match index.defs.get(&def) {
        Some((name, _)) => {
            scopes.scope_of(def).and_then(|scope| by_name.get(&(scope, name.clone())).copied()).unwrap_or(def)
        }
        None => def,
    }
}

/// The name used at a use anchor.
fn use_name(model: &Model, at: Anchor) -> Str {
    let name = match at {
        Anchor::NodeInput(n, i) => model.nodes[n].inputs.get(i).cloned(),
        Anchor::GraphOutput(g, i) => model.graphs[g].outputs.get(i).and_then(|v| v.name.clone()),
        Anchor::FunctionOutput(f, i) => model.function_store[f].outputs.get(i).cloned(),
        _ => None,
    };
    name.unwrap_or_default()
}

/// Syntax-tree nodes by the start of their range, to find the IR node of each.
fn node_ids(analysis: &TextAnalysis) -> HashMap<u32, NodeId> {
    analysis.source_map.nodes.iter().map(|(id, spans)| (spans.node.start, id)).collect()
}

/// The part of the index only the syntax tree knows.
struct SyntaxWalk<'a> {
    index: &'a mut Index,
    analysis: &'a TextAnalysis,
    nodes: HashMap<u32, NodeId>,
    graphs: HashMap<u32, GraphId>,
    seen_dims: std::collections::HashSet<String>,
}

impl SyntaxWalk<'_> {
    fn model(&mut self, tree: &ast::Model) {
        let model = &self.analysis.model;
        if let (Some(graph), Some(id)) = (&tree.graph, model.graph) {
            self.graph(graph, Some(id));
        }
        for (f, id) in tree.functions.iter().zip(model.functions.iter()) {
            self.index.push(f.name.span, Target::Function(*id), true);
            for decl in f.inputs.iter().chain(&f.outputs).chain(f.locals.iter().flatten()) {
                self.decl(decl);
            }
            self.nodes(&f.nodes);
        }
    }

    fn graph(&mut self, g: &ast::Graph, id: Option<GraphId>) {
        if let Some(id) = id {
            self.index.push(g.name.span, Target::Graph(id), true);
        }
        for decl in g.inputs.iter().flatten().chain(&g.outputs).chain(g.local_decls()) {
            self.decl(decl);
        }
        self.nodes(&g.nodes);
    }

    fn decl(&mut self, decl: &ast::ValueDecl) {
        if let ast::ValueDecl::Decl { ty: Some(ty), .. } = decl {
            self.ty(ty);
        }
    }

    fn ty(&mut self, ty: &ast::TypeExpr) {
        match &ty.kind {
            ast::TypeKind::Tensor { shape, .. } | ast::TypeKind::SparseTensor { shape, .. } => {
                for dim in shape.iter().flatten() {
                    if let ast::Dim::Param(name) = dim {
                        let first = self.seen_dims.insert(name.text.clone());
                        self.index.push(name.span, Target::DimParam(name.text.clone()), first);
                    }
                }
            }
            ast::TypeKind::Sequence(inner) | ast::TypeKind::Optional(inner) | ast::TypeKind::Map(_, inner) => {
                self.ty(inner)
            }
            ast::TypeKind::Opaque { .. } => {}
        }
    }

    fn nodes(&mut self, items: &[ast::NodeItem]) {
        for item in items {
            if let ast::NodeItem::Node(n) = item {
                self.node(n);
            }
        }
    }

    fn node(&mut self, n: &ast::Node) {
        let Some(&id) = self.nodes.get(&n.span.start) else { return };
        let model = &self.analysis.model;
        let node = &model.nodes[id];
        if let Some(last) = n.op.segments.last() {
            let target = match model.local_function(node) {
                Some(f) => Target::Function(f),
                None => Target::Op(id),
            };
            self.index.push(last.span, target, false);
        }
        let Some(attrs) = &n.attributes else { return };
        let spans = &self.analysis.source_map.nodes[id].attributes;
        for item in &attrs.attributes {
            let ast::AttrItem::Attr(a) = item else { continue };
            if let Some(i) = spans.iter().position(|s| *s == a.span) {
                self.index.push(a.name.span, Target::Attribute(id, i), false);
                if let Some(value) = &a.value {
                    self.attr_value(value);
                }
            }
        }
    }

    fn attr_value(&mut self, value: &ast::AttrValue) {
        match value {
            ast::AttrValue::Graph(g) => {
                let id = self.graphs.get(&g.span.start).copied();
                self.graph(g, id);
            }
            ast::AttrValue::List(items, _) => {
                for item in items {
                    self.attr_value(item);
                }
            }
            ast::AttrValue::Type(ty) => self.ty(ty),
            _ => {}
        }
    }
}
