//! `onnx diff A B`: what changed between two models, as one report per change.
//!
//! The header (IR version, producer, metadata, opset imports) and the functions are compared
//! by key; each graph or function body is aligned node for node (`align`: by what each node
//! computes from and what is computed from it, then through neighbours), and each pair is
//! compared: operator, attributes (subgraphs are diffed in turn), where each input comes
//! from, output names. Nodes left unpaired are added or removed, and the rewiring their
//! coming or going causes is theirs, not reported again at their neighbours. Initializers
//! are compared by type, shape, bytes and then by how much their values differ.
//!
//! With `ignore_names`, names carry no meaning: inputs and outputs pair by position,
//! initializers through the nodes that read them, and renaming is no change; a reordering
//! of nodes is never a change.

mod align;
mod body;
pub mod locate;
mod tensors;

use std::collections::HashMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::diagnostic::Anchor;
use crate::external::ExternalReader;
use crate::ir::{Attribute, AttributeValue, FunctionId, GraphId, Model, NodeId, Str, StringPair};

use align::{Alignment, align, attribute_key};
use body::{Body, Holder, Source};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Added,
    Removed,
    Changed,
}

/// What a change is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Subject {
    Model,
    Opset,
    Function,
    Input,
    Output,
    Initializer,
    Node,
    ValueInfo,
}

impl Subject {
    pub fn word(self) -> &'static str {
        match self {
            Subject::Model => "model",
            Subject::Opset => "opset",
            Subject::Function => "function",
            Subject::Input => "input",
            Subject::Output => "output",
            Subject::Initializer => "initializer",
            Subject::Node => "node",
            Subject::ValueInfo => "value info",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Change {
    pub kind: Kind,
    pub subject: Subject,
    /// Which body: empty for the main graph, else the path to it (`node "If_3" then_branch`,
    /// `function "local::f"`).
    pub scope: String,
    /// The thing's name: a value's, a node's (or its operator and first output when it has
    /// none), a function's, an opset's domain.
    pub name: String,
    /// The node's operator, for changes to nodes.
    pub op: Option<String>,
    pub detail: String,
    /// Where it is in the first model and in the second.
    pub a: Option<Anchor>,
    pub b: Option<Anchor>,
}

impl Change {
    /// The change in one line: `~ node "conv" (Conv): attribute strides: [1, 1] → [2, 2]`,
    /// `+ initializer "b2": float[4]`, with the path to its body first when not the main graph.
    pub fn text(&self) -> String {
        let sign = match self.kind {
            Kind::Added => '+',
            Kind::Removed => '-',
            Kind::Changed => '~',
        };
        let scope = if self.scope.is_empty() { String::new() } else { format!("{} › ", self.scope) };
        let op = self.op.as_ref().map(|op| format!(" ({op})")).unwrap_or_default();
        let name = if self.name.is_empty() { String::new() } else { format!(" \"{}\"", self.name) };
        let detail = match (self.kind, self.detail.is_empty()) {
            (_, false) => format!(": {}", self.detail),
            (Kind::Added, true) => ": added".to_owned(),
            (Kind::Removed, true) => ": removed".to_owned(),
            (Kind::Changed, true) => String::new(),
        };
        format!("{sign} {scope}{}{name}{op}{detail}", self.subject.word())
    }
}

#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Names carry no meaning: a consistent renaming is no change.
    pub ignore_names: bool,
    /// The directories external data is read from, for each model.
    pub dir_a: Option<PathBuf>,
    pub dir_b: Option<PathBuf>,
}

/// Every change from `a` to `b`: the header's, then each body's in `b`'s order of nodes, a
/// removed node where it stood in `a`.
pub fn diff(a: &Model, b: &Model, options: &Options) -> Vec<Change> {
    let mut d = Differ {
        a,
        b,
        ignore_names: options.ignore_names,
        outer: Vec::new(),
        reader_a: ExternalReader::new(options.dir_a.clone()),
        reader_b: ExternalReader::new(options.dir_b.clone()),
        changes: Vec::new(),
    };
    d.header();
    d.opsets();
    match (a.graph, b.graph) {
        (Some(ga), Some(gb)) => {
            if !d.ignore_names && a.graphs[ga].name != b.graphs[gb].name {
                let detail = format!("graph renamed {} → {}", quoted(&a.graphs[ga].name), quoted(&b.graphs[gb].name));
                d.model_change(String::new(), detail);
            }
            d.body(String::new(), &Body::graph(a, ga), &Body::graph(b, gb));
        }
        (None, None) => {}
        (ga, _) => d.model_change(String::new(), format!("graph {}", if ga.is_some() { "removed" } else { "added" })),
    }
    d.functions();
    d.changes
}

/// A value of each main graph that stand for each other: output `j` of two paired nodes.
#[derive(Clone, Debug)]
pub struct PairedValue {
    pub node_a: NodeId,
    pub node_b: NodeId,
    pub a: Str,
    pub b: Str,
}

/// What `onnx diff --run` compares: the paired graph inputs (which get the same values), and
/// in the first model's node order its values of a name the second also makes (unless names
/// are ignored), then the other outputs of paired nodes.
#[derive(Clone, Debug, Default)]
pub struct PairedValues {
    pub inputs: Vec<(Str, Str)>,
    pub values: Vec<PairedValue>,
}

pub fn paired_values(a: &Model, b: &Model, ignore_names: bool) -> PairedValues {
    let (Some(ga), Some(gb)) = (a.graph, b.graph) else { return PairedValues::default() };
    let (body_a, body_b) = (Body::graph(a, ga), Body::graph(b, gb));
    let al = align(&body_a, &body_b, ignore_names);
    let mut inputs: Vec<(usize, Str, Str)> =
        al.inputs.iter().map(|(&i, &j)| (i, body_a.inputs[i].clone(), body_b.inputs[j].clone())).collect();
    inputs.sort_by_key(|(i, _, _)| *i);
    let inputs = inputs.into_iter().map(|(_, x, y)| (x, y)).collect();
    // With names, a value of one name in both models is the same value, whichever nodes make
    // it: a fusion gives the fused node the name of the value it ends with, and comparing
    // that node's output with its unfused namesake's would report the fusion, not an error.
    let made = |m: &Model, body: &Body| -> HashMap<Str, NodeId> {
        let mut map = HashMap::new();
        for &n in body.nodes {
            for out in m.nodes[n].outputs.iter().filter(|o| !o.is_empty()) {
                map.entry(out.clone()).or_insert(n);
            }
        }
        map
    };
    let (made_a, made_b) = if ignore_names { Default::default() } else { (made(a, &body_a), made(b, &body_b)) };
    let mut values = Vec::new();
    for &na in body_a.nodes {
        let paired = al.nodes.get(&na).copied();
        for (j, x) in a.nodes[na].outputs.iter().enumerate().filter(|(_, x)| !x.is_empty()) {
            if let Some(&nb) = made_b.get(x) {
                values.push(PairedValue { node_a: na, node_b: nb, a: x.clone(), b: x.clone() });
                continue;
            }
            let Some(nb) = paired else { continue };
            let Some(y) = b.nodes[nb].outputs.get(j).filter(|y| !y.is_empty()) else { continue };
            // A name the first model makes too is paired by name, above.
            if !made_a.contains_key(y) {
                values.push(PairedValue { node_a: na, node_b: nb, a: x.clone(), b: y.clone() });
            }
        }
    }
    PairedValues { inputs, values }
}

struct Differ<'m> {
    a: &'m Model,
    b: &'m Model,
    ignore_names: bool,
    /// For each subgraph being compared, innermost last: how what it reads from around it
    /// corresponds.
    outer: Vec<OuterFrame>,
    reader_a: ExternalReader,
    reader_b: ExternalReader,
    changes: Vec<Change>,
}

/// What a pair of subgraphs reads from the bodies around them, and how it corresponds.
#[derive(Default)]
struct OuterFrame {
    /// A name read in the first model → the name of its paired value in the second.
    pairs: HashMap<Str, Str>,
    /// Values whose producer was removed (first model) or added (second).
    gone_a: std::collections::HashSet<Str>,
    new_b: std::collections::HashSet<Str>,
}

fn quoted(name: &Option<Str>) -> String {
    format!("\"{}\"", name.as_ref().map(Str::escaped).unwrap_or_default())
}

fn text(value: &Option<Str>) -> String {
    value.as_ref().map_or_else(|| "(none)".to_owned(), |v| format!("\"{}\"", v.escaped()))
}

/// A node's name, or its operator and first output when it has none: how a change names it.
pub fn node_label(model: &Model, n: NodeId) -> String {
    let node = &model.nodes[n];
    match node.name.as_ref().filter(|s| !s.is_empty()) {
        Some(name) => name.escaped(),
        None => {
            let op = node.op_type.as_ref().map(Str::escaped).unwrap_or_default();
            match node.outputs.iter().find(|o| !o.is_empty()) {
                Some(out) => format!("{op} → {}", out.escaped()),
                None => op,
            }
        }
    }
}

impl Differ<'_> {
    // Every change names these seven things; a builder would only spread them out.
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        kind: Kind,
        subject: Subject,
        scope: &str,
        name: String,
        detail: String,
        a: Option<Anchor>,
        b: Option<Anchor>,
    ) {
        self.changes.push(Change { kind, subject, scope: scope.to_owned(), name, op: None, detail, a, b });
    }

    fn model_change(&mut self, name: String, detail: String) {
        self.push(Kind::Changed, Subject::Model, "", name, detail, Some(Anchor::Model), Some(Anchor::Model));
    }

    fn header(&mut self) {
        let (a, b) = (self.a, self.b);
        if a.ir_version != b.ir_version {
            let v = |v: Option<i64>| v.map_or_else(|| "(none)".to_owned(), |v| v.to_string());
            self.model_change("ir_version".into(), format!("{} → {}", v(a.ir_version), v(b.ir_version)));
        }
        if a.model_version != b.model_version {
            let v = |v: Option<i64>| v.map_or_else(|| "(none)".to_owned(), |v| v.to_string());
            self.model_change("model_version".into(), format!("{} → {}", v(a.model_version), v(b.model_version)));
        }
        for (key, x, y) in [
            ("producer_name", &a.producer_name, &b.producer_name),
            ("producer_version", &a.producer_version, &b.producer_version),
            ("domain", &a.domain, &b.domain),
            ("doc_string", &a.doc_string, &b.doc_string),
        ] {
            if x != y {
                self.model_change(key.into(), format!("{} → {}", text(x), text(y)));
            }
        }
        self.metadata();
        if a.training_info.len() != b.training_info.len() {
            let detail = format!(
                "training info: {} → {} entries (not compared further)",
                a.training_info.len(),
                b.training_info.len()
            );
            self.model_change("training_info".into(), detail);
        }
    }

    /// The model's metadata, by key.
    fn metadata(&mut self) {
        let (x, y, scope, at) = (&self.a.metadata_props, &self.b.metadata_props, "", Some(Anchor::Model));
        let (at_a, at_b) = (at, at);
        let key = |p: &StringPair| p.key.clone().unwrap_or_default();
        let (pairs, paired_y) = pair_by_key_in_order(x.iter().map(key).collect(), y.iter().map(key).collect());
        for (p, pair) in x.iter().zip(pairs) {
            match pair.map(|j| &y[j]) {
                None => self.push(
                    Kind::Removed,
                    Subject::Model,
                    scope,
                    format!("metadata {}", key(p).escaped()),
                    text(&p.value),
                    at_a,
                    None,
                ),
                Some(q) if q.value != p.value => {
                    let detail = format!("{} → {}", text(&p.value), text(&q.value));
                    self.push(
                        Kind::Changed,
                        Subject::Model,
                        scope,
                        format!("metadata {}", key(p).escaped()),
                        detail,
                        at_a,
                        at_b,
                    );
                }
                Some(_) => {}
            }
        }
        for (q, _) in y.iter().zip(paired_y).filter(|(_, paired)| !paired) {
            self.push(
                Kind::Added,
                Subject::Model,
                scope,
                format!("metadata {}", key(q).escaped()),
                text(&q.value),
                None,
                at_b,
            );
        }
    }

    fn opsets(&mut self) {
        let domain = |d: &Option<Str>| match d.as_ref().map(Str::as_bytes) {
            None | Some(b"") | Some(b"ai.onnx") => "ai.onnx".to_owned(),
            Some(other) => String::from_utf8_lossy(other).into_owned(),
        };
        let (a, b) = (self.a, self.b);
        let domains = |list: &[crate::ir::OpsetImport]| list.iter().map(|o| domain(&o.domain)).collect();
        let (pairs, paired_b) = pair_by_key_in_order(domains(&a.opset_import), domains(&b.opset_import));
        for (x, pair) in a.opset_import.iter().zip(pairs) {
            let name = domain(&x.domain);
            match pair.map(|j| &b.opset_import[j]) {
                None => self.push(
                    Kind::Removed,
                    Subject::Opset,
                    "",
                    name,
                    format!("version {}", x.version.unwrap_or(0)),
                    Some(Anchor::Model),
                    None,
                ),
                Some(y) if y.version != x.version => {
                    let detail = format!("version {} → {}", x.version.unwrap_or(0), y.version.unwrap_or(0));
                    self.push(
                        Kind::Changed,
                        Subject::Opset,
                        "",
                        name,
                        detail,
                        Some(Anchor::Model),
                        Some(Anchor::Model),
                    );
                }
                Some(_) => {}
            }
        }
        for (y, _) in b.opset_import.iter().zip(paired_b).filter(|(_, paired)| !paired) {
            let detail = format!("version {}", y.version.unwrap_or(0));
            self.push(Kind::Added, Subject::Opset, "", domain(&y.domain), detail, None, Some(Anchor::Model));
        }
    }

    fn functions(&mut self) {
        let (a, b) = (self.a, self.b);
        let key = |m: &Model, f: FunctionId| {
            let f = &m.function_store[f];
            (
                f.domain.clone().unwrap_or_default(),
                f.name.clone().unwrap_or_default(),
                f.overload.clone().unwrap_or_default(),
            )
        };
        let label = |m: &Model, f: FunctionId| {
            let (domain, name, overload) = key(m, f);
            let overload = if overload.is_empty() { String::new() } else { format!(":{}", overload.escaped()) };
            format!("{}::{}{overload}", domain.escaped(), name.escaped())
        };
        let keys = |m: &Model| m.functions.iter().map(|&f| key(m, f)).collect();
        let (pairs, paired_b) = pair_by_key_in_order(keys(a), keys(b));
        for (&fa, pair) in a.functions.iter().zip(pairs) {
            let found = pair.map(|j| b.functions[j]);
            let Some(fb) = found else {
                self.push(
                    Kind::Removed,
                    Subject::Function,
                    "",
                    label(a, fa),
                    String::new(),
                    Some(Anchor::Function(fa)),
                    None,
                );
                continue;
            };
            let scope = format!("function {}", label(a, fa));
            let (x, y) = (&a.function_store[fa], &b.function_store[fb]);
            let mut details = Vec::new();
            if x.attributes != y.attributes || x.attribute_protos.len() != y.attribute_protos.len() {
                let names = |f: &crate::ir::Function| {
                    let all = f.attributes.iter().chain(f.attribute_protos.iter().filter_map(|p| p.name.as_ref()));
                    all.map(Str::escaped).collect::<Vec<_>>().join(", ")
                };
                details.push(format!("attribute parameters [{}] → [{}]", names(x), names(y)));
            }
            if x.opset_import != y.opset_import {
                let imports = |f: &crate::ir::Function| {
                    let each =
                        f.opset_import.iter().map(|o| format!("{}: {}", text(&o.domain), o.version.unwrap_or(0)));
                    each.collect::<Vec<_>>().join(", ")
                };
                details.push(format!("opset imports [{}] → [{}]", imports(x), imports(y)));
            }
            for detail in details {
                let places = (Some(Anchor::Function(fa)), Some(Anchor::Function(fb)));
                self.push(Kind::Changed, Subject::Function, "", label(a, fa), detail, places.0, places.1);
            }
            self.body(scope, &Body::function(a, fa), &Body::function(b, fb));
        }
        for (&fb, _) in b.functions.iter().zip(paired_b).filter(|(_, paired)| !paired) {
            let place = Some(Anchor::Function(fb));
            self.push(Kind::Added, Subject::Function, "", label(b, fb), String::new(), None, place);
        }
    }

    /// One graph or function body against the other.
    fn body(&mut self, scope: String, a: &Body, b: &Body) {
        let al = align(a, b, self.ignore_names);
        self.signature(&scope, a, b, &al);
        self.initializers(&scope, a, b, &al);
        // In the second model's order, each removed node where it stood in the first.
        let position_a: HashMap<NodeId, usize> = a.nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
        let mut next_a = 0;
        for &nb in b.nodes {
            match al.nodes_back.get(&nb) {
                Some(&na) => {
                    let upto = position_a[&na];
                    while next_a <= upto {
                        self.removed_node(&scope, a, &al, a.nodes[next_a]);
                        next_a += 1;
                    }
                    self.node(&scope, a, b, &al, na, nb);
                }
                None => {
                    let change =
                        self.node_change(Kind::Added, &scope, b.model, nb, String::new(), None, Some(Anchor::Node(nb)));
                    self.changes.push(change);
                }
            }
        }
        for &na in &a.nodes[next_a.min(a.nodes.len())..] {
            self.removed_node(&scope, a, &al, na);
        }
        if let (Holder::Graph(ga), Holder::Graph(gb)) = (a.holder, b.holder) {
            self.value_info(&scope, a, b, &al, ga, gb);
        }
    }

    /// A node of the first body, reported if nothing in the second is paired with it.
    fn removed_node(&mut self, scope: &str, a: &Body, al: &Alignment, na: NodeId) {
        if !al.nodes.contains_key(&na) {
            let change =
                self.node_change(Kind::Removed, scope, a.model, na, String::new(), Some(Anchor::Node(na)), None);
            self.changes.push(change);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn node_change(
        &self,
        kind: Kind,
        scope: &str,
        model: &Model,
        n: NodeId,
        detail: String,
        a: Option<Anchor>,
        b: Option<Anchor>,
    ) -> Change {
        let (name, op) = (node_label(model, n), Some(model.nodes[n].op_label()));
        Change { kind, subject: Subject::Node, scope: scope.to_owned(), name, op, detail, a, b }
    }

    /// A body's inputs and outputs: added, removed, renamed, retyped, rewired.
    fn signature(&mut self, scope: &str, a: &Body, b: &Body, al: &Alignment) {
        let place = |body: &Body, output: bool, i: usize| match (body.holder, output) {
            (Holder::Graph(g), false) => Anchor::GraphInput(g, i),
            (Holder::Graph(g), true) => Anchor::GraphOutput(g, i),
            (Holder::Function(f), false) => Anchor::FunctionInput(f, i),
            (Holder::Function(f), true) => Anchor::FunctionOutput(f, i),
        };
        let ty = |body: &Body, output: bool, i: usize| match body.holder {
            Holder::Graph(g) => {
                let graph = &body.model.graphs[g];
                let list = if output { &graph.outputs } else { &graph.inputs };
                list.get(i).and_then(|v| v.ty.as_ref()).map(ToString::to_string)
            }
            Holder::Function(_) => None,
        };
        for output in [false, true] {
            let subject = if output { Subject::Output } else { Subject::Input };
            let (names_a, names_b) = if output { (&a.outputs, &b.outputs) } else { (&a.inputs, &b.inputs) };
            let (pairs, pairs_back) =
                if output { (&al.outputs, &al.outputs_back) } else { (&al.inputs, &al.inputs_back) };
            for (i, name) in names_a.iter().enumerate() {
                let (at_a, label) = (Some(place(a, output, i)), name.escaped());
                let Some(&j) = pairs.get(&i) else {
                    self.push(Kind::Removed, subject, scope, label, ty(a, output, i).unwrap_or_default(), at_a, None);
                    continue;
                };
                let at_b = Some(place(b, output, j));
                // An output's name is its value's, whose renaming is reported where it is made.
                if !output && !self.ignore_names && *name != names_b[j] {
                    self.push(
                        Kind::Changed,
                        subject,
                        scope,
                        label.clone(),
                        format!("renamed to \"{}\"", names_b[j].escaped()),
                        at_a,
                        at_b,
                    );
                }
                let (tx, ty_b) = (ty(a, output, i), ty(b, output, j));
                if tx != ty_b {
                    let show = |t: Option<String>| t.unwrap_or_else(|| "(no type)".to_owned());
                    self.push(
                        Kind::Changed,
                        subject,
                        scope,
                        label.clone(),
                        format!("type {} → {}", show(tx), show(ty_b)),
                        at_a,
                        at_b,
                    );
                }
                if output {
                    let (from, to) = (a.source(name), b.source(&names_b[j]));
                    if !self.same_source(al, from, to, name, &names_b[j]) && !explained(al, from, to) {
                        let detail = format!("now gives \"{}\" (was \"{}\")", names_b[j].escaped(), name.escaped());
                        self.push(Kind::Changed, subject, scope, label, detail, at_a, at_b);
                    }
                }
            }
            for (j, name) in names_b.iter().enumerate() {
                if !pairs_back.contains_key(&j) {
                    self.push(
                        Kind::Added,
                        subject,
                        scope,
                        name.escaped(),
                        ty(b, output, j).unwrap_or_default(),
                        None,
                        Some(place(b, output, j)),
                    );
                }
            }
        }
    }

    /// Whether two reads name the same value, the one paired with the other.
    fn same_source(&self, al: &Alignment, from: Source, to: Source, name_a: &Str, name_b: &Str) -> bool {
        match (from, to) {
            (Source::Outer, Source::Outer) => {
                if let Some(frame) = self.outer.last() {
                    // A value from around that came or went is that node's change.
                    if frame.gone_a.contains(name_a) || frame.new_b.contains(name_b) {
                        return true;
                    }
                    if let Some(there) = frame.pairs.get(name_a) {
                        return there == name_b;
                    }
                }
                self.ignore_names || name_a == name_b
            }
            _ => al.counterpart(from) == Some(to),
        }
    }

    fn initializers(&mut self, scope: &str, a: &Body, b: &Body, al: &Alignment) {
        let (Holder::Graph(ga), Holder::Graph(gb)) = (a.holder, b.holder) else { return };
        for (k, &ta) in a.initializers.iter().enumerate() {
            let tensor_a = &a.model.tensors[ta];
            let at_a = Some(Anchor::Initializer(ga, k));
            let Some(&l) = al.initializers.get(&k) else {
                let detail = tensors::type_and_shape(tensor_a);
                self.push(
                    Kind::Removed,
                    Subject::Initializer,
                    scope,
                    quoted(&tensor_a.name).trim_matches('"').to_owned(),
                    detail,
                    at_a,
                    None,
                );
                continue;
            };
            let tensor_b = &b.model.tensors[b.initializers[l]];
            let mut details = Vec::new();
            if !self.ignore_names && tensor_a.name != tensor_b.name {
                details.push(format!("renamed to {}", quoted(&tensor_b.name)));
            }
            if let Some(d) = tensors::tensor_difference(tensor_a, tensor_b, &mut self.reader_a, &mut self.reader_b) {
                details.push(d);
            }
            if !details.is_empty() {
                let name = tensor_a.name.as_ref().map(Str::escaped).unwrap_or_default();
                self.push(
                    Kind::Changed,
                    Subject::Initializer,
                    scope,
                    name,
                    details.join("; "),
                    at_a,
                    Some(Anchor::Initializer(gb, l)),
                );
            }
        }
        for (l, &tb) in b.initializers.iter().enumerate() {
            if !al.initializers_back.contains_key(&l) {
                let tensor = &b.model.tensors[tb];
                let name = tensor.name.as_ref().map(Str::escaped).unwrap_or_default();
                self.push(
                    Kind::Added,
                    Subject::Initializer,
                    scope,
                    name,
                    tensors::type_and_shape(tensor),
                    None,
                    Some(Anchor::Initializer(gb, l)),
                );
            }
        }
    }

    /// Two paired nodes.
    fn node(&mut self, scope: &str, a: &Body, b: &Body, al: &Alignment, na: NodeId, nb: NodeId) {
        let (ma, mb) = (a.model, b.model);
        let (x, y) = (&ma.nodes[na], &mb.nodes[nb]);
        let (at_a, at_b) = (Some(Anchor::Node(na)), Some(Anchor::Node(nb)));
        let mut found = Vec::new();
        if !self.ignore_names && x.name != y.name {
            found.push((format!("renamed to {}", quoted(&y.name)), at_a, at_b));
        }
        if x.op_type != y.op_type || x.domain_str() != y.domain_str() {
            found.push((format!("operator {} → {}", ma.nodes[na].op_label(), mb.nodes[nb].op_label()), at_a, at_b));
        }
        if x.inputs.len() != y.inputs.len() {
            let list = |node: &crate::ir::Node| node.inputs.iter().map(Str::escaped).collect::<Vec<_>>().join(", ");
            found.push((format!("inputs ({}) → ({})", list(x), list(y)), at_a, at_b));
        } else {
            for (slot, (ia, ib)) in x.inputs.iter().zip(y.inputs.iter()).enumerate() {
                let (from, to) = (a.source(ia), b.source(ib));
                if !self.same_source(al, from, to, ia, ib) && !explained(al, from, to) {
                    let detail = format!("input {slot} reads \"{}\" (was \"{}\")", ib.escaped(), ia.escaped());
                    found.push((detail, Some(Anchor::NodeInput(na, slot)), Some(Anchor::NodeInput(nb, slot))));
                }
            }
        }
        if x.outputs.len() != y.outputs.len() {
            let list = |node: &crate::ir::Node| node.outputs.iter().map(Str::escaped).collect::<Vec<_>>().join(", ");
            found.push((format!("outputs ({}) → ({})", list(x), list(y)), at_a, at_b));
        } else if !self.ignore_names {
            for (j, (oa, ob)) in x.outputs.iter().zip(y.outputs.iter()).enumerate() {
                if oa != ob {
                    let detail = format!("output {j} renamed \"{}\" → \"{}\"", oa.escaped(), ob.escaped());
                    found.push((detail, Some(Anchor::NodeOutput(na, j)), Some(Anchor::NodeOutput(nb, j))));
                }
            }
        }
        if x.doc_string() != y.doc_string() {
            found.push(("doc string changed".to_owned(), at_a, at_b));
        }
        for (detail, pa, pb) in found {
            let change = self.node_change(Kind::Changed, scope, ma, na, detail, pa, pb);
            self.changes.push(change);
        }
        self.attributes(scope, a, b, al, na, nb);
    }

    /// How the values read inside `na`'s and `nb`'s subgraphs from around them correspond.
    fn outer_frame(&self, a: &Body, b: &Body, al: &Alignment, na: NodeId, nb: NodeId) -> OuterFrame {
        let mut frame = OuterFrame::default();
        let parent = self.outer.last();
        for name in crate::ir::names_read_inside(a.model, na) {
            match a.source(&name) {
                Source::Empty => {}
                Source::Node(n, _) if !al.nodes.contains_key(&n) => {
                    frame.gone_a.insert(name);
                }
                Source::Outer => {
                    if let Some(p) = parent {
                        if let Some(there) = p.pairs.get(&name) {
                            frame.pairs.insert(name.clone(), there.clone());
                        }
                        if p.gone_a.contains(&name) {
                            frame.gone_a.insert(name);
                        }
                    }
                }
                source => {
                    if let Some(there) = al.counterpart(source).and_then(|s| b.name_of(s)) {
                        frame.pairs.insert(name, there);
                    }
                }
            }
        }
        for name in crate::ir::names_read_inside(b.model, nb) {
            let new = match b.source(&name) {
                Source::Node(m, _) => !al.nodes_back.contains_key(&m),
                Source::Outer => parent.is_some_and(|p| p.new_b.contains(&name)),
                _ => false,
            };
            if new {
                frame.new_b.insert(name);
            }
        }
        frame
    }

    fn attributes(&mut self, scope: &str, a: &Body, b: &Body, al: &Alignment, na: NodeId, nb: NodeId) {
        let (ma, mb) = (self.a, self.b);
        let (x, y) = (&ma.nodes[na], &mb.nodes[nb]);
        let name = |at: &Attribute| at.name.as_ref().map(Str::escaped).unwrap_or_default();
        let names = |node: &'_ crate::ir::Node| node.attributes.iter().map(|at| at.name.clone()).collect();
        let (pairs, paired_y) = pair_by_key_in_order(names(x), names(y));
        for (i, (at, pair)) in x.attributes.iter().zip(pairs).enumerate() {
            let at_a = Some(Anchor::Attribute(na, i));
            let Some(j) = pair else {
                let detail = format!("attribute {} removed (was {})", name(at), attribute_text(ma, at));
                let change = self.node_change(Kind::Changed, scope, ma, na, detail, at_a, Some(Anchor::Node(nb)));
                self.changes.push(change);
                continue;
            };
            let other = &y.attributes[j];
            let at_b = Some(Anchor::Attribute(nb, j));
            let graphs_a: Vec<GraphId> = at.subgraphs().collect();
            let graphs_b: Vec<GraphId> = other.subgraphs().collect();
            if !graphs_a.is_empty() && graphs_a.len() == graphs_b.len() && at.ty == other.ty {
                let frame = self.outer_frame(a, b, al, na, nb);
                self.outer.push(frame);
                for (k, (&ga, &gb)) in graphs_a.iter().zip(&graphs_b).enumerate() {
                    let which = if graphs_a.len() > 1 { format!("{}[{k}]", name(at)) } else { name(at) };
                    let inner = format!("{}node \"{}\" {which}", prefix(scope), node_label(ma, na));
                    self.body(inner, &Body::graph(ma, ga), &Body::graph(mb, gb));
                }
                self.outer.pop();
                continue;
            }
            let detail = match (at.value(), other.value()) {
                (Some(AttributeValue::Tensor(ta)), Some(AttributeValue::Tensor(tb))) => {
                    tensors::tensor_difference(&ma.tensors[ta], &mb.tensors[tb], &mut self.reader_a, &mut self.reader_b)
                        .map(|d| format!("attribute {}: {d}", name(at)))
                }
                _ if attribute_key(ma, at) != attribute_key(mb, other) => {
                    Some(format!("attribute {}: {} → {}", name(at), attribute_text(ma, at), attribute_text(mb, other)))
                }
                _ => None,
            };
            if let Some(detail) = detail {
                let change = self.node_change(Kind::Changed, scope, ma, na, detail, at_a, at_b);
                self.changes.push(change);
            }
        }
        for (j, at) in y.attributes.iter().enumerate() {
            if !paired_y[j] {
                let detail = format!("attribute {} added: {}", name(at), attribute_text(mb, at));
                let change = self.node_change(
                    Kind::Changed,
                    scope,
                    ma,
                    na,
                    detail,
                    Some(Anchor::Node(na)),
                    Some(Anchor::Attribute(nb, j)),
                );
                self.changes.push(change);
            }
        }
    }

    /// Declared types of intermediate values, paired through the values' sources. A
    /// description of a value made by a node that came or went is that node's change.
    fn value_info(&mut self, scope: &str, a: &Body, b: &Body, al: &Alignment, ga: GraphId, gb: GraphId) {
        let (list_a, list_b) = (&a.model.graphs[ga].value_info, &b.model.graphs[gb].value_info);
        let mut seen_b = vec![false; list_b.len()];
        let mut where_b: HashMap<&Str, Vec<usize>> = HashMap::with_capacity(list_b.len());
        for (j, w) in list_b.iter().enumerate() {
            if let Some(name) = &w.name {
                where_b.entry(name).or_default().push(j);
            }
        }
        // A name described twice (an invalid model) pairs its descriptions in order.
        let position_b = |name: &Str, seen_b: &[bool]| {
            let all = where_b.get(name)?;
            all.iter().copied().find(|&j| !seen_b[j]).or(all.first().copied())
        };
        // Descriptions of values defined nowhere (left behind by a tool that removed their
        // producer): by name, or in order when names mean nothing.
        let dangling = |body: &Body, list: &[crate::ir::ValueInfo]| -> Vec<usize> {
            let defined = |v: &crate::ir::ValueInfo| {
                !matches!(body.source(v.name.as_ref().unwrap_or(&Str::default())), Source::Outer | Source::Empty)
            };
            (0..list.len()).filter(|&i| !defined(&list[i])).collect()
        };
        let dangling_b = dangling(b, list_b);
        let mut dangling_pairs = dangling(a, list_a).into_iter().zip(dangling_b.iter().copied());
        let mut in_order: HashMap<usize, usize> = HashMap::new();
        if self.ignore_names {
            in_order.extend(&mut dangling_pairs);
        }
        for (i, v) in list_a.iter().enumerate() {
            let name = v.name.clone().unwrap_or_default();
            let there = match a.source(&name) {
                Source::Node(n, _) if !al.nodes.contains_key(&n) => {
                    if let Some(j) = position_b(&name, &seen_b) {
                        seen_b[j] = true;
                    }
                    continue;
                }
                Source::Outer | Source::Empty if self.ignore_names => None,
                Source::Outer | Source::Empty => Some(name.clone()),
                source => al.counterpart(source).and_then(|s| b.name_of(s)),
            };
            let found = there.and_then(|n| position_b(&n, &seen_b)).or_else(|| in_order.get(&i).copied());
            let at_a = Some(Anchor::ValueInfo(ga, i));
            match found {
                None => {
                    self.push(Kind::Removed, Subject::ValueInfo, scope, name.escaped(), type_text(&v.ty), at_a, None)
                }
                Some(j) => {
                    seen_b[j] = true;
                    if v.ty != list_b[j].ty {
                        let detail = format!("type {} → {}", type_text(&v.ty), type_text(&list_b[j].ty));
                        self.push(
                            Kind::Changed,
                            Subject::ValueInfo,
                            scope,
                            name.escaped(),
                            detail,
                            at_a,
                            Some(Anchor::ValueInfo(gb, j)),
                        );
                    }
                }
            }
        }
        for (j, w) in list_b.iter().enumerate().filter(|(j, _)| !seen_b[*j]) {
            let name = w.name.clone().unwrap_or_default();
            if matches!(b.source(&name), Source::Node(n, _) if !al.nodes_back.contains_key(&n)) {
                continue;
            }
            self.push(
                Kind::Added,
                Subject::ValueInfo,
                scope,
                name.escaped(),
                type_text(&w.ty),
                None,
                Some(Anchor::ValueInfo(gb, j)),
            );
        }
    }
}

/// Pairs two lists by key: each item of `a` with the first unpaired item of `b` of its key
/// (so a key given twice, in an invalid model, pairs in order). For each of `a`, its pair;
/// for each of `b`, whether it was paired.
fn pair_by_key_in_order<K: std::hash::Hash + Eq>(a: Vec<K>, b: Vec<K>) -> (Vec<Option<usize>>, Vec<bool>) {
    let mut left: HashMap<K, std::collections::VecDeque<usize>> = HashMap::with_capacity(b.len());
    let count_b = b.len();
    for (j, key) in b.into_iter().enumerate() {
        left.entry(key).or_default().push_back(j);
    }
    let mut paired_b = vec![false; count_b];
    let pairs = a
        .into_iter()
        .map(|key| {
            let j = left.get_mut(&key).and_then(std::collections::VecDeque::pop_front)?;
            paired_b[j] = true;
            Some(j)
        })
        .collect();
    (pairs, paired_b)
}

/// A read that differs because a node it went through was removed, or one was put in its
/// way: that node's own report covers it.
fn explained(al: &Alignment, from: Source, to: Source) -> bool {
    matches!(from, Source::Node(n, _) if !al.nodes.contains_key(&n))
        || matches!(to, Source::Node(n, _) if !al.nodes_back.contains_key(&n))
}

fn prefix(scope: &str) -> String {
    if scope.is_empty() { String::new() } else { format!("{scope} › ") }
}

fn type_text(ty: &Option<crate::ir::Type>) -> String {
    ty.as_ref().map_or_else(|| "(no type)".to_owned(), ToString::to_string)
}

/// An attribute's value in a few words: numbers and short lists in full, longer lists cut.
fn attribute_text(model: &Model, at: &Attribute) -> String {
    fn list<T>(items: &[T], show: impl Fn(&T) -> String) -> String {
        let shown: Vec<String> = items.iter().take(16).map(show).collect();
        let more = if items.len() > 16 { format!(", … ({} in all)", items.len()) } else { String::new() };
        format!("[{}{more}]", shown.join(", "))
    }
    if let Some(reference) = &at.ref_attr_name {
        return format!("@{}", reference.escaped());
    }
    match at.value() {
        None => "(no value)".to_owned(),
        Some(AttributeValue::Float(f)) => crate::print::number::f32_text(f),
        Some(AttributeValue::Int(i)) => i.to_string(),
        Some(AttributeValue::String(s)) => format!("\"{}\"", s.escaped()),
        Some(AttributeValue::Floats(v)) => list(v, |f| crate::print::number::f32_text(*f)),
        Some(AttributeValue::Ints(v)) => list(v, i64::to_string),
        Some(AttributeValue::Strings(v)) => list(v, |s| format!("\"{}\"", s.escaped())),
        Some(AttributeValue::Tensor(t)) => format!("tensor {}", tensors::type_and_shape(&model.tensors[t])),
        Some(AttributeValue::Tensors(v)) => list(v, |&t| tensors::type_and_shape(&model.tensors[t])),
        Some(AttributeValue::Graph(g)) => format!("graph of {} nodes", model.graphs[g].nodes.len()),
        Some(AttributeValue::Graphs(v)) => format!("{} graphs", v.len()),
        Some(AttributeValue::TypeProto(t)) => t.to_string(),
        Some(AttributeValue::TypeProtos(v)) => list(v, ToString::to_string),
        Some(AttributeValue::SparseTensor(_)) => "sparse tensor".to_owned(),
        Some(AttributeValue::SparseTensors(v)) => format!("{} sparse tensors", v.len()),
    }
}
