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
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use crate::diagnostic::{Anchor, Diagnostic, Sink};
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
///
/// The tables are sized for the whole model before resolution starts and filled through a
/// shared reference (each place is written once), so that inference can read the main
/// graph's first nodes on one core while resolution numbers the later ones on another
/// ([`resolve_beside`]): [`ValueNumbers::wait_for_main`] says how far resolution has got.
/// Atomics without ordering cost a plain load or store; the ordering comes from `ready`.
#[derive(Debug)]
pub struct ValueNumbers {
    /// The numbers, place by place: a node's inputs then outputs; a graph's inputs,
    /// initializers, then outputs; a function's inputs then outputs.
    slots: Vec<AtomicU32>,
    /// Where each node's, graph's and function's places start in `slots`, by arena index
    /// (`NO_VALUE` for one resolution never reached).
    node_start: Vec<AtomicU32>,
    graph_start: Vec<AtomicU32>,
    function_start: Vec<AtomicU32>,
    /// How many values the graphs' space has, and each function body's.
    graph_values: AtomicU32,
    function_values: Vec<AtomicU32>,
    /// How many places the graphs take: the graphs are numbered first, so a node whose
    /// places start below this belongs to a graph, not to a function body.
    graph_slots: AtomicU32,
    /// At most how many values the graphs' space can have (known before resolution: a
    /// value per definition), what inference sizes its tables by.
    graph_value_bound: usize,
    /// How far resolution has got: 0 = nothing yet, 1 = the main graph's inputs and
    /// initializers, 1 + i = its first i nodes (with their subgraphs), `usize::MAX` = all.
    ready: AtomicUsize,
}

impl Default for ValueNumbers {
    fn default() -> Self {
        ValueNumbers {
            slots: Vec::new(),
            node_start: Vec::new(),
            graph_start: Vec::new(),
            function_start: Vec::new(),
            graph_values: AtomicU32::new(0),
            function_values: Vec::new(),
            graph_slots: AtomicU32::new(0),
            graph_value_bound: 0,
            ready: AtomicUsize::new(ALL_READY),
        }
    }
}

impl Clone for ValueNumbers {
    fn clone(&self) -> Self {
        let copy = |v: &[AtomicU32]| v.iter().map(|a| AtomicU32::new(a.load(Ordering::Relaxed))).collect();
        ValueNumbers {
            slots: copy(&self.slots),
            node_start: copy(&self.node_start),
            graph_start: copy(&self.graph_start),
            function_start: copy(&self.function_start),
            graph_values: AtomicU32::new(self.graph_values.load(Ordering::Relaxed)),
            function_values: copy(&self.function_values),
            graph_slots: AtomicU32::new(self.graph_slots.load(Ordering::Relaxed)),
            graph_value_bound: self.graph_value_bound,
            ready: AtomicUsize::new(self.ready.load(Ordering::Acquire)),
        }
    }
}

/// `ValueNumbers::ready` once resolution is over.
const ALL_READY: usize = usize::MAX;

/// The numbers of consecutive places (a node's inputs, a graph's outputs, …), read one by
/// one.
#[derive(Clone, Copy, Debug, Default)]
pub struct Places<'a>(&'a [AtomicU32]);

impl<'a> Places<'a> {
    pub fn len(self) -> usize {
        self.0.len()
    }

    pub fn is_empty(self) -> bool {
        self.0.is_empty()
    }

    /// The number of place `i`.
    pub fn get(self, i: usize) -> Option<ValueId> {
        self.0.get(i).map(|a| a.load(Ordering::Relaxed))
    }

    pub fn first(self) -> Option<ValueId> {
        self.get(0)
    }

    /// The places from `from` on (`None` when there are fewer).
    pub fn from(self, from: usize) -> Option<Places<'a>> {
        self.0.get(from..).map(Places)
    }

    /// The first `count` places (all of them when there are fewer).
    pub fn first_n(self, count: usize) -> Places<'a> {
        Places(&self.0[..count.min(self.0.len())])
    }

    pub fn iter(self) -> PlacesIter<'a> {
        self.0.iter().map(|a| a.load(Ordering::Relaxed))
    }
}

/// The numbers of [`Places`], in order.
pub type PlacesIter<'a> = std::iter::Map<std::slice::Iter<'a, AtomicU32>, fn(&AtomicU32) -> ValueId>;

impl<'a> IntoIterator for Places<'a> {
    type Item = ValueId;
    type IntoIter = PlacesIter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl ValueNumbers {
    /// Tables sized for every place and value of `model`, all unset, nothing resolved yet.
    fn for_model(model: &Model) -> Self {
        let unset = |n: usize| (0..n).map(|_| AtomicU32::new(NO_VALUE)).collect::<Vec<_>>();
        let (inputs, outputs) =
            model.nodes.values().fold((0, 0), |(i, o), n| (i + n.inputs.len(), o + n.outputs.len()));
        let (mut graph_places, mut graph_values) = (0, outputs);
        for g in model.graphs.values() {
            graph_places += g.inputs.len() + g.initializers.len() + g.outputs.len();
            graph_values += g.inputs.len() + g.initializers.len() + g.sparse_initializers.len();
        }
        let function_places: usize = model.function_store.values().map(|f| f.inputs.len() + f.outputs.len()).sum();
        ValueNumbers {
            slots: unset(inputs + outputs + graph_places + function_places),
            node_start: unset(model.nodes.len()),
            graph_start: unset(model.graphs.len()),
            function_start: unset(model.function_store.len()),
            graph_values: AtomicU32::new(0),
            function_values: (0..model.function_store.len()).map(|_| AtomicU32::new(0)).collect(),
            graph_slots: AtomicU32::new(0),
            graph_value_bound: graph_values,
            ready: AtomicUsize::new(0),
        }
    }

    fn places(&self, start: &[AtomicU32], index: u32, skip: usize, count: usize) -> Places<'_> {
        match start.get(index as usize).map(|a| a.load(Ordering::Relaxed)) {
            Some(at) if at != NO_VALUE => {
                let at = at as usize + skip;
                Places(self.slots.get(at..at + count).unwrap_or(&[]))
            }
            _ => Places(&[]),
        }
    }

    /// Sets place `at` (a place beyond the tables, which their sizing rules out, is
    /// ignored).
    fn set(&self, at: usize, value: ValueId) {
        if let Some(slot) = self.slots.get(at) {
            slot.store(value, Ordering::Relaxed);
        }
    }

    fn set_start(start: &[AtomicU32], index: u32, at: u32) {
        if let Some(slot) = start.get(index as usize) {
            slot.store(at, Ordering::Relaxed);
        }
    }

    /// The values node `id`'s inputs refer to, one per input.
    pub fn node_inputs(&self, id: NodeId, node: &Node) -> Places<'_> {
        self.places(&self.node_start, id.into_raw().into_u32(), 0, node.inputs.len())
    }

    /// Whether node `id` belongs to a graph (its numbers are in the graphs' space) rather
    /// than to a function body or to nothing resolution reached.
    pub fn node_in_graph_space(&self, id: NodeId) -> bool {
        let end = self.graph_slots.load(Ordering::Relaxed);
        self.node_start.get(id.into_raw().into_u32() as usize).is_some_and(|at| at.load(Ordering::Relaxed) < end)
    }

    /// Whether graph `id` is numbered in the graphs' space (it is not inside a function
    /// body).
    pub fn graph_in_graph_space(&self, id: GraphId) -> bool {
        let end = self.graph_slots.load(Ordering::Relaxed);
        self.graph_start.get(id.into_raw().into_u32() as usize).is_some_and(|at| at.load(Ordering::Relaxed) < end)
    }

    /// The values node `id`'s outputs define, one per output.
    pub fn node_outputs(&self, id: NodeId, node: &Node) -> Places<'_> {
        self.places(&self.node_start, id.into_raw().into_u32(), node.inputs.len(), node.outputs.len())
    }

    pub fn graph_inputs(&self, id: GraphId, g: &Graph) -> Places<'_> {
        self.places(&self.graph_start, id.into_raw().into_u32(), 0, g.inputs.len())
    }

    pub fn graph_initializers(&self, id: GraphId, g: &Graph) -> Places<'_> {
        self.places(&self.graph_start, id.into_raw().into_u32(), g.inputs.len(), g.initializers.len())
    }

    /// The values graph `id`'s outputs refer to (`NO_VALUE` for one the graph does not
    /// define itself).
    pub fn graph_outputs(&self, id: GraphId, g: &Graph) -> Places<'_> {
        let skip = g.inputs.len() + g.initializers.len();
        self.places(&self.graph_start, id.into_raw().into_u32(), skip, g.outputs.len())
    }

    pub fn function_inputs(&self, id: FunctionId, f: &Function) -> Places<'_> {
        self.places(&self.function_start, id.into_raw().into_u32(), 0, f.inputs.len())
    }

    pub fn function_outputs(&self, id: FunctionId, f: &Function) -> Places<'_> {
        self.places(&self.function_start, id.into_raw().into_u32(), f.inputs.len(), f.outputs.len())
    }

    /// How many values the model's graphs define.
    pub fn graph_value_count(&self) -> usize {
        self.graph_values.load(Ordering::Relaxed) as usize
    }

    /// At most how many values the model's graphs define, known before resolution ends.
    pub fn graph_value_bound(&self) -> usize {
        self.graph_value_bound.max(self.graph_value_count())
    }

    /// How many values function `id`'s body defines (its inputs included).
    pub fn function_value_count(&self, id: FunctionId) -> usize {
        self.function_values.get(id.into_raw().into_u32() as usize).map_or(0, |n| n.load(Ordering::Relaxed) as usize)
    }

    /// Waits until resolution has numbered the main graph's inputs and initializers and its
    /// first `nodes` nodes; returns how far it has got (at least that), which the caller
    /// keeps so as not to ask again before it needs more. Immediate once resolution is
    /// over, which it always is but under [`resolve_beside`].
    pub fn wait_for_main(&self, nodes: usize) -> usize {
        let wanted = nodes.saturating_add(1);
        let mut spins = 0u32;
        loop {
            let ready = self.ready.load(Ordering::Acquire);
            if ready >= wanted {
                return ready;
            }
            // Resolution runs ahead of inference on another core: the wait is short, and
            // yielding after a while keeps a descheduled resolver from being starved.
            spins += 1;
            if spins < 1 << 10 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// Waits until resolution is over (every graph and function numbered).
    pub fn wait_for_all(&self) {
        self.wait_for_main(ALL_READY - 1);
    }

    fn publish(&self, ready: usize) {
        self.ready.store(ready, Ordering::Release);
    }
}

/// Marks resolution over when dropped, also when it ends by a panic, so that inference
/// waiting on it is never left waiting.
struct ReadyWhenDropped<'a>(&'a ValueNumbers);

impl Drop for ReadyWhenDropped<'_> {
    fn drop(&mut self) {
        self.0.publish(ALL_READY);
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
    let numbers = ValueNumbers::for_model(model);
    let mut r = resolve_into(model, &numbers, tables);
    r.numbers = numbers;
    r
}

/// Name resolution (without the def/use tables) on a thread of its own, beside `infer`
/// run here: inference reads the value numbers of the main graph's nodes as resolution
/// gives them (see [`ValueNumbers::wait_for_main`]), and `after` runs on that thread once
/// resolution is done, with what it found and the numbers. Returns the resolution (its
/// numbers included), `infer`'s result and `after`'s. Without a second thread, the three
/// run here in turn.
pub fn resolve_beside<T, U: Send>(
    model: &Model,
    infer: impl FnOnce(&ValueNumbers) -> T,
    after: &(impl Fn(&Resolution, &ValueNumbers) -> U + Sync),
) -> (Resolution, T, U) {
    let numbers = ValueNumbers::for_model(model);
    // Resolution, then what follows it: on the second thread, or here.
    let resolve_then = |numbers: &ValueNumbers| {
        let resolution = resolve_into(model, numbers, false);
        let later = after(&resolution, numbers);
        (resolution, later)
    };
    let ((mut resolution, later), inferred) = if worth_a_second_thread(model) {
        std::thread::scope(|scope| {
            let numbers = &numbers;
            match onnx_threads::dedicated().spawn_scoped(scope, move || resolve_then(numbers)) {
                Ok(resolver) => {
                    let inferred = infer(numbers);
                    // A resolver that panicked (none should) is run again here: resolution
                    // writes each place the same way every time.
                    (resolver.join().unwrap_or_else(|_| resolve_then(numbers)), inferred)
                }
                Err(_) => (resolve_then(numbers), infer(numbers)),
            }
        })
    } else {
        (resolve_then(&numbers), infer(&numbers))
    };
    resolution.numbers = numbers;
    (resolution, inferred, later)
}

/// How many nodes a model needs before its inference runs beside other work (name
/// resolution, the checker's rules) on a second thread: below it, starting a thread costs
/// more than it saves.
pub const BESIDE_INFERENCE: usize = 2000;

/// Whether `model` is big enough for [`BESIDE_INFERENCE`], and the machine has a second
/// core.
pub fn worth_a_second_thread(model: &Model) -> bool {
    model.nodes.len() >= BESIDE_INFERENCE && onnx_threads::cores() > 1
}

/// Resolves `model` into `numbers` (sized for it by [`ValueNumbers::for_model`]),
/// publishing its progress through the main graph as it goes.
fn resolve_into(model: &Model, numbers: &ValueNumbers, tables: bool) -> Resolution {
    let _ready = ReadyWhenDropped(numbers);
    let mut r =
        Work { out: Resolution { tables, ..Resolution::default() }, found: Sink::default(), numbers, cursor: 0 };
    // Sized once (a big model's list is not regrown): a value per node output at most,
    // besides the graphs' own values.
    r.sites.reserve(numbers.graph_value_bound);
    if let Some(g) = model.graph {
        graph(model, g, None, &mut r);
    }
    // Training graphs may use the main graph's initializers (ONNX IR spec, TrainingInfoProto).
    let mut main_initializers = Scope::new(HashMap::default(), None);
    if let Some(g) = model.graph {
        let main = &model.graphs[g];
        for (&t, value) in main.initializers.iter().zip(numbers.graph_initializers(g, main)) {
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
    numbers.graph_values.store(r.sites.len() as u32, Ordering::Relaxed);
    numbers.graph_slots.store(r.cursor as u32, Ordering::Relaxed);
    for &f in &model.functions {
        r.sites.clear();
        function(model, f, &mut r);
        if let Some(count) = numbers.function_values.get(f.into_raw().into_u32() as usize) {
            count.store(r.sites.len() as u32, Ordering::Relaxed);
        }
    }
    r.out.diagnostics = r.found.into_vec();
    r.out
}

/// A resolution under way: what it has found, the tables it fills, and where the next
/// places go.
struct Work<'n> {
    out: Resolution,
    /// What it has found (bounded per code), moved into `out` at the end.
    found: Sink,
    numbers: &'n ValueNumbers,
    /// The next free place of `numbers`.
    cursor: usize,
}

impl Work<'_> {
    /// Reserves `count` places starting now; returns where they start.
    fn reserve(&mut self, count: usize) -> u32 {
        let at = self.cursor as u32;
        self.cursor += count;
        at
    }
}

impl std::ops::Deref for Work<'_> {
    type Target = Resolution;
    fn deref(&self) -> &Resolution {
        &self.out
    }
}

impl std::ops::DerefMut for Work<'_> {
    fn deref_mut(&mut self) -> &mut Resolution {
        &mut self.out
    }
}

/// Defines `name` at `site` in `scope`; returns the value's number. A name defined twice
/// gets a number of its own that no use refers to, so inference still has a place for what
/// its node computes.
fn define<'m>(scope: &mut Scope<'m, '_>, name: &'m Str, site: DefSite, r: &mut Work<'_>) -> ValueId {
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
        r.found.push(
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
    r.found.push(
        Diagnostic::error("duplicate-definition", site.anchor(), format!("'{name}' is already defined"))
            .with_related(previous.anchor(), "first defined here"),
    );
    r.new_value(site)
}

fn graph<'m>(model: &'m Model, id: GraphId, parent: Option<&Scope<'m, '_>>, r: &mut Work<'_>) {
    let g = &model.graphs[id];
    let main = model.graph == Some(id) && parent.is_none();
    // Sized once for every name the graph defines (a big graph's table is not regrown).
    // The main graph holds nearly all of a model's definitions: it takes the bound the
    // tables were sized by, rather than a pass over its nodes before inference may start.
    let defined = if main {
        r.numbers.graph_value_bound
    } else {
        g.inputs.len()
            + g.initializers.len()
            + g.sparse_initializers.len()
            + g.nodes.iter().map(|&n| model.nodes[n].outputs.len()).sum::<usize>()
    };
    let mut names = HashMap::default();
    names.reserve(defined);
    let mut scope = Scope::new(names, parent);
    let start = r.reserve(g.inputs.len() + g.initializers.len() + g.outputs.len());
    ValueNumbers::set_start(&r.numbers.graph_start, id.into_raw().into_u32(), start);
    let mut place = start as usize;
    for (i, v) in g.inputs.iter().enumerate() {
        if let Some(name) = &v.name {
            let value = define(&mut scope, name, DefSite::GraphInput(id, i), r);
            r.numbers.set(place, value);
        }
        place += 1;
    }
    for (i, &t) in g.initializers.iter().enumerate() {
        if let Some(name) = &model.tensors[t].name {
            let value = define(&mut scope, name, DefSite::Initializer(id, i), r);
            r.numbers.set(place, value);
        }
        place += 1;
    }
    for (i, sparse) in g.sparse_initializers.iter().enumerate() {
        if let Some(name) = sparse.values.and_then(|v| model.tensors[v].name.as_ref()) {
            define(&mut scope, name, DefSite::SparseInitializer(id, i), r);
        }
    }
    // Inference may be waiting for the main graph (see `resolve_beside`): each step is
    // published as it is done.
    if main {
        r.numbers.publish(1);
    }
    let undefined_before = r.found.count_of("undefined-value");
    for (i, &n) in g.nodes.iter().enumerate() {
        node(model, n, &mut scope, r);
        if main {
            r.numbers.publish(i + 2);
        }
    }
    // Values read before their node: when a topological order exists, the graph is only
    // out of order, which onnxruntime mends at load. onnx refuses it (the errors stand).
    if r.found.count_of("undefined-value") > undefined_before
        && matches!(crate::order::sorted_order(model, id), Ok(Some(_)))
    {
        r.found.push(Diagnostic::warning(
            "nodes-out-of-order",
            Anchor::Graph(id),
            "the graph's nodes are not in a topological order: onnx refuses it, onnxruntime sorts the \
             nodes and runs the model (as `onnx run` and onnx-view do)",
        ));
    }
    for (i, v) in g.outputs.iter().enumerate() {
        let Some(name) = &v.name else { continue };
        let def = scope.here(name);
        let site = def.or_else(|| scope.lookup(name)).map(|d| r.site(d));
        r.use_of(Anchor::GraphOutput(id, i), site);
        match def {
            Some(def) => r.numbers.set(place + i, def),
            None => r.found.push(Diagnostic::error(
                "output-not-defined",
                Anchor::GraphOutput(id, i),
                format!("graph output '{name}' is not defined in this graph"),
            )),
        }
    }
}

fn node<'m>(model: &'m Model, id: NodeId, scope: &mut Scope<'m, '_>, r: &mut Work<'_>) {
    let n = &model.nodes[id];
    // The node's places are taken before its subgraphs take theirs.
    let start = r.reserve(n.inputs.len() + n.outputs.len());
    ValueNumbers::set_start(&r.numbers.node_start, id.into_raw().into_u32(), start);
    let start = start as usize;
    for (i, name) in n.inputs.iter().enumerate() {
        if name.is_empty() {
            continue;
        }
        let def = scope.lookup(name);
        let site = def.map(|d| r.site(d));
        r.use_of(Anchor::NodeInput(id, i), site);
        match def {
            Some(def) => r.numbers.set(start + i, def),
            None => r.found.push(Diagnostic::error(
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
        let value = define(scope, name, DefSite::NodeOutput(id, i), r);
        r.numbers.set(outputs + i, value);
    }
}

fn function(model: &Model, id: FunctionId, r: &mut Work<'_>) {
    let f = &model.function_store[id];
    let mut scope = Scope::new(HashMap::default(), None);
    let start = r.reserve(f.inputs.len() + f.outputs.len());
    ValueNumbers::set_start(&r.numbers.function_start, id.into_raw().into_u32(), start);
    let start = start as usize;
    for (i, name) in f.inputs.iter().enumerate() {
        let value = define(&mut scope, name, DefSite::FunctionInput(id, i), r);
        r.numbers.set(start + i, value);
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
            Some(def) => r.numbers.set(outputs + i, def),
            // A warning: onnx's checker accepts such functions (semantics spec §1.8).
            None => r.found.push(Diagnostic::warning(
                "output-not-produced",
                Anchor::FunctionOutput(id, i),
                format!("function output '{name}' is not produced by the body"),
            )),
        }
    }
}
