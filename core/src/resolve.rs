//! Name resolution: which definition each value use refers to, following the IR's scoping
//! rules (the checker's rules of onnx, semantics spec §1.3):
//!
//! * a graph defines its inputs, initializers and node outputs, in that order; a node may use
//!   only names defined before it, in its graph or in an enclosing graph before the node
//!   that holds the subgraph;
//! * a name is defined once in its scope and its ancestors (SSA; a subgraph cannot shadow an
//!   outer name), except that an initializer may share its name with a graph input;
//! * a graph's outputs must be defined in that graph itself;
//! * a function body sees only its inputs and its own node outputs.
//!
//! The result is a def/use table (for go-to-definition and references), diagnostics
//! anchored to IR places, and [`ValueNumbers`]: every value numbered densely and every name
//! in the model mapped to the number it refers to, so that inference indexes vectors instead
//! of hashing names again (each name is hashed once, here).

use foldhash::HashMap;
use std::collections::hash_map::Entry;

use crate::diagnostic::{Anchor, Diagnostic};
use crate::ir::*;

/// Where a value is defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DefSite {
    GraphInput(GraphId, usize),
    Initializer(GraphId, usize),
    SparseInitializer(GraphId, usize),
    NodeOutput(NodeId, usize),
    FunctionInput(FunctionId, usize),
}

impl DefSite {
    pub fn anchor(self) -> Anchor {
        match self {
            DefSite::GraphInput(g, i) => Anchor::GraphInput(g, i),
            DefSite::Initializer(g, i) => Anchor::Initializer(g, i),
            DefSite::SparseInitializer(g, i) => Anchor::SparseInitializer(g, i),
            DefSite::NodeOutput(n, i) => Anchor::NodeOutput(n, i),
            DefSite::FunctionInput(f, i) => Anchor::FunctionInput(f, i),
        }
    }
}

/// A use of a value name, and the definition it resolves to (if any).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Use {
    pub at: Anchor,
    pub def: Option<DefSite>,
}

/// A value's number in its space (see [`ValueNumbers`]).
pub type ValueId = u32;

/// The number of an omitted input, or of a name that refers to no definition.
pub const NO_VALUE: ValueId = u32::MAX;

/// Every value of a model numbered densely, and every place that names a value (node inputs
/// and outputs, graph and function signatures, initializers) with the number it refers to.
///
/// There are two kinds of number space: the model's graphs (the main graph, its subgraphs,
/// the training graphs) share one, since a subgraph sees outer values; each function body
/// has its own, since a call is inferred in an environment of its own, and a table sized for
/// the whole model per call would make many calls quadratic.
#[derive(Clone, Debug, Default)]
pub struct ValueNumbers {
    /// The numbers, place by place: a node's inputs then outputs; a graph's inputs,
    /// initializers, then outputs; a function's inputs then outputs.
    slots: Vec<ValueId>,
    /// Where each node's, graph's and function's places start in `slots`, by arena index
    /// (`NO_VALUE` for one resolution never reached).
    node_start: Vec<u32>,
    graph_start: Vec<u32>,
    function_start: Vec<u32>,
    /// How many values the graphs' space has, and each function body's.
    graph_values: u32,
    function_values: Vec<u32>,
    /// How many places the graphs take: the graphs are numbered first, so a node whose
    /// places start below this belongs to a graph, not to a function body.
    graph_slots: u32,
}

impl ValueNumbers {
    fn places(&self, start: &[u32], index: u32, skip: usize, count: usize) -> &[ValueId] {
        match start.get(index as usize) {
            Some(&at) if at != NO_VALUE => {
                let at = at as usize + skip;
                self.slots.get(at..at + count).unwrap_or(&[])
            }
            _ => &[],
        }
    }

    /// The values node `id`'s inputs refer to, one per input.
    pub fn node_inputs(&self, id: NodeId, node: &Node) -> &[ValueId] {
        self.places(&self.node_start, id.into_raw().into_u32(), 0, node.inputs.len())
    }

    /// Whether node `id` belongs to a graph (its numbers are in the graphs' space) rather
    /// than to a function body or to nothing resolution reached.
    pub fn node_in_graph_space(&self, id: NodeId) -> bool {
        self.node_start.get(id.into_raw().into_u32() as usize).is_some_and(|&at| at < self.graph_slots)
    }

    /// Whether graph `id` is numbered in the graphs' space (it is not inside a function
    /// body).
    pub fn graph_in_graph_space(&self, id: GraphId) -> bool {
        self.graph_start.get(id.into_raw().into_u32() as usize).is_some_and(|&at| at < self.graph_slots)
    }

    /// The values node `id`'s outputs define, one per output.
    pub fn node_outputs(&self, id: NodeId, node: &Node) -> &[ValueId] {
        self.places(&self.node_start, id.into_raw().into_u32(), node.inputs.len(), node.outputs.len())
    }

    pub fn graph_inputs(&self, id: GraphId, g: &Graph) -> &[ValueId] {
        self.places(&self.graph_start, id.into_raw().into_u32(), 0, g.inputs.len())
    }

    pub fn graph_initializers(&self, id: GraphId, g: &Graph) -> &[ValueId] {
        self.places(&self.graph_start, id.into_raw().into_u32(), g.inputs.len(), g.initializers.len())
    }

    /// The values graph `id`'s outputs refer to (`NO_VALUE` for one the graph does not
    /// define itself).
    pub fn graph_outputs(&self, id: GraphId, g: &Graph) -> &[ValueId] {
        let skip = g.inputs.len() + g.initializers.len();
        self.places(&self.graph_start, id.into_raw().into_u32(), skip, g.outputs.len())
    }

    pub fn function_inputs(&self, id: FunctionId, f: &Function) -> &[ValueId] {
        self.places(&self.function_start, id.into_raw().into_u32(), 0, f.inputs.len())
    }

    pub fn function_outputs(&self, id: FunctionId, f: &Function) -> &[ValueId] {
        self.places(&self.function_start, id.into_raw().into_u32(), f.inputs.len(), f.outputs.len())
    }

    /// How many values the model's graphs define.
    pub fn graph_value_count(&self) -> usize {
        self.graph_values as usize
    }

    /// How many values function `id`'s body defines (its inputs included).
    pub fn function_value_count(&self, id: FunctionId) -> usize {
        self.function_values.get(id.into_raw().into_u32() as usize).map_or(0, |&n| n as usize)
    }

    /// Reserves `count` places starting now; returns where they start.
    fn reserve(&mut self, count: usize) -> u32 {
        let at = self.slots.len() as u32;
        self.slots.resize(self.slots.len() + count, NO_VALUE);
        at
    }
}

#[derive(Debug, Default)]
pub struct Resolution {
    pub uses: Vec<Use>,
    /// Every definition, with its name.
    pub defs: Vec<(Str, DefSite)>,
    pub diagnostics: Vec<Diagnostic>,
    pub numbers: ValueNumbers,
    /// Where each value of the space being numbered is defined, by number (kept apart
    /// from the scope tables so that their entries stay small: a big graph's table is
    /// probed at random, and half the bytes is half the cache misses).
    sites: Vec<DefSite>,
    /// Whether `uses` and `defs` are recorded (the language server's tables) or only the
    /// diagnostics are wanted (the checker).
    tables: bool,
}

impl Resolution {
    fn define(&mut self, name: &Str, site: DefSite) {
        if self.tables {
            self.defs.push((name.clone(), site));
        }
    }

    fn use_of(&mut self, at: Anchor, def: Option<DefSite>) {
        if self.tables {
            self.uses.push(Use { at, def });
        }
    }

    fn new_value(&mut self, site: DefSite) -> ValueId {
        let value = self.sites.len() as ValueId;
        self.sites.push(site);
        value
    }

    fn site(&self, value: ValueId) -> DefSite {
        self.sites[value as usize]
    }
}

/// One lexical scope: names defined so far (borrowed from the model), and the enclosing
/// scope.
struct Scope<'m, 'p> {
    names: HashMap<&'m Str, ValueId>,
    /// The last few names defined here, looked at before the table: most inputs use a
    /// value defined a node or two before, and a big graph's table is probed at random
    /// (a cache miss per probe where these few compares hit).
    recent: [Option<(&'m Str, ValueId)>; RECENT],
    /// Where the next definition goes in `recent`.
    next: usize,
    parent: Option<&'p Scope<'m, 'p>>,
}

/// How many recent definitions a scope keeps at hand.
const RECENT: usize = 4;

impl<'m, 'p> Scope<'m, 'p> {
    fn new(names: HashMap<&'m Str, ValueId>, parent: Option<&'p Scope<'m, 'p>>) -> Self {
        Scope { names, recent: [None; RECENT], next: 0, parent }
    }

    fn lookup(&self, name: &Str) -> Option<ValueId> {
        self.here(name).or_else(|| self.parent.and_then(|p| p.lookup(name)))
    }

    /// The value `name` has in this scope, not looking outside.
    fn here(&self, name: &Str) -> Option<ValueId> {
        let recent = self.recent.iter().flatten().find(|(known, _)| *known == name);
        recent.map(|&(_, value)| value).or_else(|| self.names.get(name).copied())
    }

    /// Records a name new to this scope.
    fn remember(&mut self, name: &'m Str, value: ValueId) {
        self.recent[self.next] = Some((name, value));
        self.next = (self.next + 1) % RECENT;
    }
}

/// Resolves every name of the model: the def/use tables and the diagnostics.
pub fn resolve(model: &Model) -> Resolution {
    resolve_with(model, true)
}

/// Name resolution without the def/use tables: the diagnostics (what the checker reports)
/// and the value numbers (what inference reads).
pub fn resolve_without_tables(model: &Model) -> Resolution {
    resolve_with(model, false)
}

fn resolve_with(model: &Model, tables: bool) -> Resolution {
    let mut r = Resolution { tables, ..Resolution::default() };
    r.numbers.node_start = vec![NO_VALUE; model.nodes.len()];
    r.numbers.graph_start = vec![NO_VALUE; model.graphs.len()];
    r.numbers.function_start = vec![NO_VALUE; model.function_store.len()];
    r.numbers.function_values = vec![0; model.function_store.len()];
    // Sized once (a big model's lists are not regrown): a place per node input and output,
    // a value per node output at most, besides the graphs' own values.
    let (inputs, outputs) = model.nodes.values().fold((0, 0), |(i, o), n| (i + n.inputs.len(), o + n.outputs.len()));
    r.numbers.slots.reserve(inputs + outputs);
    r.sites.reserve(outputs);
    if let Some(g) = model.graph {
        graph(model, g, None, &mut r);
    }
    // Training graphs may use the main graph's initializers (ONNX IR spec, TrainingInfoProto).
    let mut main_initializers = Scope::new(HashMap::default(), None);
    if let Some(g) = model.graph {
        let main = &model.graphs[g];
        let numbers = r.numbers.graph_initializers(g, main);
        for (&t, &value) in main.initializers.iter().zip(numbers) {
            if let Some(name) = model.tensors[t].name.as_ref().filter(|_| value != NO_VALUE) {
                main_initializers.names.insert(name, value);
            }
        }
    }
    for t in &model.training_info {
        for g in [t.initialization, t.algorithm].into_iter().flatten() {
            graph(model, g, Some(&main_initializers), &mut r);
        }
    }
    r.numbers.graph_values = r.sites.len() as u32;
    r.numbers.graph_slots = r.numbers.slots.len() as u32;
    for &f in &model.functions {
        r.sites.clear();
        function(model, f, &mut r);
        if let Some(count) = r.numbers.function_values.get_mut(f.into_raw().into_u32() as usize) {
            *count = r.sites.len() as u32;
        }
    }
    r
}

/// Defines `name` at `site` in `scope`; returns the value's number. A name defined twice
/// gets a number of its own that no use refers to, so inference still has a place for what
/// its node computes.
fn define<'m>(scope: &mut Scope<'m, '_>, name: &'m Str, site: DefSite, r: &mut Resolution) -> ValueId {
    if name.is_empty() {
        return NO_VALUE;
    }
    let declared = matches!(site, DefSite::GraphInput(..) | DefSite::Initializer(..) | DefSite::SparseInitializer(..));
    // The common case, a name new to this scope and to every enclosing one, takes one
    // probe of this scope's table.
    let parent = scope.parent;
    let (value, in_this_graph) = match scope.names.entry(name) {
        Entry::Occupied(known) => (*known.get(), true),
        Entry::Vacant(slot) => match parent.and_then(|p| p.lookup(name)) {
            Some(outer) => (outer, false),
            None => {
                let value = r.new_value(site);
                slot.insert(value);
                scope.remember(name, value);
                r.define(name, site);
                return value;
            }
        },
    };
    let previous = r.site(value);
    // An initializer may give a graph input its default value.
    let initializes_input = in_this_graph
        && matches!(previous, DefSite::GraphInput(..))
        && matches!(site, DefSite::Initializer(..) | DefSite::SparseInitializer(..));
    if initializes_input {
        // Keep pointing at the input: it is what users and the graph's signature see.
        // The initializer is the input's default value: one value, one number.
        r.define(name, site);
        return value;
    }
    if !in_this_graph && declared {
        // onnx accepts a subgraph input or initializer that reuses an outer name; uses
        // inside the subgraph then see the inner value. Legal, but easy to misread.
        r.diagnostics.push(
            Diagnostic::warning(
                "shadowed-name",
                site.anchor(),
                format!("'{name}' hides a value of an enclosing graph"),
            )
            .with_related(previous.anchor(), "outer value defined here"),
        );
        let value = r.new_value(site);
        scope.names.insert(name, value);
        scope.remember(name, value);
        r.define(name, site);
        return value;
    }
    r.diagnostics.push(
        Diagnostic::error("duplicate-definition", site.anchor(), format!("'{name}' is already defined"))
            .with_related(previous.anchor(), "first defined here"),
    );
    r.new_value(site)
}

fn graph<'m>(model: &'m Model, id: GraphId, parent: Option<&Scope<'m, '_>>, r: &mut Resolution) {
    let g = &model.graphs[id];
    // Sized once for every name the graph defines (a big graph's table is not regrown).
    let defined = g.inputs.len()
        + g.initializers.len()
        + g.sparse_initializers.len()
        + g.nodes.iter().map(|&n| model.nodes[n].outputs.len()).sum::<usize>();
    let mut names = HashMap::default();
    names.reserve(defined);
    let mut scope = Scope::new(names, parent);
    let start = r.numbers.reserve(g.inputs.len() + g.initializers.len() + g.outputs.len());
    r.numbers.graph_start[id.into_raw().into_u32() as usize] = start;
    let mut place = start as usize;
    for (i, v) in g.inputs.iter().enumerate() {
        if let Some(name) = &v.name {
            r.numbers.slots[place] = define(&mut scope, name, DefSite::GraphInput(id, i), r);
        }
        place += 1;
    }
    for (i, &t) in g.initializers.iter().enumerate() {
        if let Some(name) = &model.tensors[t].name {
            r.numbers.slots[place] = define(&mut scope, name, DefSite::Initializer(id, i), r);
        }
        place += 1;
    }
    for (i, sparse) in g.sparse_initializers.iter().enumerate() {
        if let Some(name) = sparse.values.and_then(|v| model.tensors[v].name.as_ref()) {
            define(&mut scope, name, DefSite::SparseInitializer(id, i), r);
        }
    }
    for &n in &g.nodes {
        node(model, n, &mut scope, r);
    }
    for (i, v) in g.outputs.iter().enumerate() {
        let Some(name) = &v.name else { continue };
        let def = scope.here(name);
        let site = def.or_else(|| scope.lookup(name)).map(|d| r.site(d));
        r.use_of(Anchor::GraphOutput(id, i), site);
        match def {
            Some(def) => r.numbers.slots[place + i] = def,
            None => r.diagnostics.push(Diagnostic::error(
                "output-not-defined",
                Anchor::GraphOutput(id, i),
                format!("graph output '{name}' is not defined in this graph"),
            )),
        }
    }
}

fn node<'m>(model: &'m Model, id: NodeId, scope: &mut Scope<'m, '_>, r: &mut Resolution) {
    let n = &model.nodes[id];
    // The node's places are taken before its subgraphs take theirs.
    let start = r.numbers.reserve(n.inputs.len() + n.outputs.len()) as usize;
    r.numbers.node_start[id.into_raw().into_u32() as usize] = start as u32;
    for (i, name) in n.inputs.iter().enumerate() {
        if name.is_empty() {
            continue;
        }
        let def = scope.lookup(name);
        let site = def.map(|d| r.site(d));
        r.use_of(Anchor::NodeInput(id, i), site);
        match def {
            Some(def) => r.numbers.slots[start + i] = def,
            None => r.diagnostics.push(Diagnostic::error(
                "undefined-value",
                Anchor::NodeInput(id, i),
                format!("'{name}' is not defined before this use"),
            )),
        }
    }
    // Subgraphs see what is defined before this node.
    for a in &n.attributes {
        for sub in a.subgraphs() {
            graph(model, sub, Some(scope), r);
        }
    }
    let outputs = start + n.inputs.len();
    for (i, name) in n.outputs.iter().enumerate() {
        r.numbers.slots[outputs + i] = define(scope, name, DefSite::NodeOutput(id, i), r);
    }
}

fn function(model: &Model, id: FunctionId, r: &mut Resolution) {
    let f = &model.function_store[id];
    let mut scope = Scope::new(HashMap::default(), None);
    let start = r.numbers.reserve(f.inputs.len() + f.outputs.len()) as usize;
    r.numbers.function_start[id.into_raw().into_u32() as usize] = start as u32;
    for (i, name) in f.inputs.iter().enumerate() {
        r.numbers.slots[start + i] = define(&mut scope, name, DefSite::FunctionInput(id, i), r);
    }
    for &n in &f.nodes {
        node(model, n, &mut scope, r);
    }
    let outputs = start + f.inputs.len();
    for (i, name) in f.outputs.iter().enumerate() {
        let def = scope.lookup(name);
        let site = def.map(|d| r.site(d));
        r.use_of(Anchor::FunctionOutput(id, i), site);
        match def {
            Some(def) => r.numbers.slots[outputs + i] = def,
            // A warning: onnx's checker accepts such functions (semantics spec §1.8).
            None => r.diagnostics.push(Diagnostic::warning(
                "output-not-produced",
                Anchor::FunctionOutput(id, i),
                format!("function output '{name}' is not produced by the body"),
            )),
        }
    }
}
