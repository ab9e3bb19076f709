//! Shape and type inference (semantics spec §2): for every node, the types and shapes of
//! its outputs from those of its inputs, its attributes and, where a shape is computed
//! inside the graph (`Shape → Gather → Concat → Reshape`), the values that computation
//! carries (data propagation, [`Known`]).
//!
//! Layout, leaves first: `types` is the shared vocabulary (known values, a rule's
//! outputs, type constructors); `lattice` how two types of one value combine (contradict,
//! refine, union); `env` is the store of what is known about each value; `ops` has the
//! rules, one family of operators per module, each naming its operators' rules, and
//! `validate` the validation rules, by the same families; `registry` is the operator table
//! built once from both, keyed by (domain, operator, since-version), with each operator's
//! schema versions and traits. The driver: `node` infers one node through that table,
//! falling back to the schema's function body and then its type constraints; `judge`
//! judges each node once inferred (constraints, validation rules); `call` infers through
//! function bodies (model-local functions, and schema bodies), `control` through
//! subgraphs (If, Loop, Scan); `conflicts` reports declarations that contradict inference.
//! `node`, `call` and `control` call each other because a function body's and a subgraph's
//! nodes are nodes; the rules call none of them.
//!
//! Status: the rules cover the operators the corpus uses most; `tests/tests/infer_corpus.rs`
//! measures agreement with onnx 1.23.2 value by value.

mod broadcast;
mod call;
mod conflicts;
mod constraints;
mod control;
mod env;
mod judge;
mod lattice;
mod node;
mod ops;
mod registry;
mod runtime_body;
mod shapeless;
#[cfg(test)]
mod tests;
mod types;
mod validate;

pub use call::{SchemaBody, bound_for_call, schema_function_body};
pub use conflicts::{Contradicted, conflicts, contradicted};
pub use constraints::constraint_spelling;
pub use env::Env;
pub use lattice::contradiction;
pub use registry::{ByOperator, OpKey, Operator, Table, Traits, table as operator_table};
pub(crate) use runtime_body::built_body;
pub use types::{Known, tensor_type};

use crate::diagnostic::{Diagnostic, Severity};
use crate::ir::{GraphId, Model, NodeId, Str, Type, ValueInfo};
use crate::resolve::{DefSite, ValueId, ValueNumbers};

/// What inference found for one graph: the type of every value it could type, by name.
#[derive(Debug, Default)]
pub struct GraphTypes {
    pub types: foldhash::HashMap<Str, Type>,
}

/// Infers the main graph from its declared inputs and its initializers. Declared output
/// types and value_info are not used: the result is what the graph itself implies.
pub fn infer_main_graph(model: &Model) -> GraphTypes {
    infer_model(model).main_graph_types(model)
}

/// The main graph's types as onnx's `infer_shapes` finds them: starting from what the model
/// declares (graph outputs and `value_info`), so that a value an operator without a schema
/// computes has its declared type, and the nodes after it are inferred from that; inferred
/// and declared types merged. What `onnx extract` describes its cut with, as onnx's
/// extractor does.
pub fn infer_main_graph_as_onnx(model: &Model) -> GraphTypes {
    let plain = infer_model(model);
    let Some(g) = model.graph else {
        return GraphTypes::default();
    };
    let mut env = Env::new(model, &plain.numbers, model.opset_version("").unwrap_or(1));
    env.infer_as_onnx(declared_node_outputs(model, &plain));
    infer_graph(model, g, &mut env);
    let found = env.into_found();
    let as_onnx = ModelTypes {
        main: Some(g),
        numbers: plain.numbers,
        types: found.types,
        inferred: found.inferred,
        violations: Vec::new(),
    };
    as_onnx.main_graph_types(model)
}

/// A value of the main graph some of whose elements inference knows as plain integers: a
/// shape computation (`Shape → Gather → Concat`), whose sizes are fixed even where the
/// model's other sizes are symbolic (those elements are `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownInts {
    /// Its element type (an integer type).
    pub elem_type: i32,
    /// A 0-D tensor, else a vector.
    pub scalar: bool,
    pub values: Vec<Option<i64>>,
}

impl KnownInts {
    /// Every element, when all are numbers.
    pub fn all(&self) -> Option<Vec<i64>> {
        self.values.iter().copied().collect()
    }
}

/// The main graph's types, as [`infer_main_graph`] finds them, and its node outputs with
/// elements inference knows as plain integers (at least one), by name: what `onnx simplify`
/// makes constants, or reads a Reshape's target from. One inference gives both.
pub fn main_graph_types_and_values(model: &Model) -> (GraphTypes, foldhash::HashMap<Str, KnownInts>) {
    let mut known = foldhash::HashMap::default();
    let Some(g) = model.graph else { return (GraphTypes::default(), known) };
    let numbers = crate::resolve::resolve_without_tables(model).numbers;
    let mut env = Env::new(model, &numbers, model.opset_version("").unwrap_or(1));
    infer_graph(model, g, &mut env);
    for &n in &model.graphs[g].nodes {
        let node = &model.nodes[n];
        for (name, value) in node.outputs.iter().zip(numbers.node_outputs(n, node)) {
            let Some(k) = env.value(value) else { continue };
            let values: Vec<Option<i64>> = k
                .elements
                .iter()
                .map(|e| match e {
                    Some(crate::ir::DimValue::Value(v)) => Some(*v),
                    _ => None,
                })
                .collect();
            if values.iter().all(Option::is_none) {
                continue;
            }
            let Some(crate::ir::TypeValue::Tensor(t)) = env.ty(value).and_then(|t| t.value.as_ref()) else {
                continue;
            };
            let Some(elem_type) = t.elem_type else { continue };
            // The type agrees: a scalar, or a vector of that many elements.
            let rank_agrees = match t.shape.as_ref().map(|s| s.dims.as_slice()) {
                Some([]) => k.scalar,
                Some([d]) => !k.scalar && d.value == Some(crate::ir::DimValue::Value(values.len() as i64)),
                _ => false,
            };
            if rank_agrees {
                known.insert(name.clone(), KnownInts { elem_type, scalar: k.scalar, values });
            }
        }
    }
    let found = env.into_found();
    let as_model =
        ModelTypes { main: Some(g), numbers, types: found.types, inferred: found.inferred, violations: Vec::new() };
    (as_model.main_graph_types(model), known)
}

/// What inference found in every graph of a model: the main graph and each subgraph.
#[derive(Debug, Default)]
pub struct ModelTypes {
    pub main: Option<GraphId>,
    numbers: ValueNumbers,
    /// A type per value of the graphs' number space.
    types: Vec<Option<Type>>,
    /// The graphs inferred.
    inferred: Vec<GraphId>,
    /// Every graph node input whose inferred type its operator's type constraints reject
    /// (`input-type`), or that disagrees with another input bound to the same type
    /// parameter (`type-parameter-mismatch`): what onnx's strict inference rejects.
    pub violations: Vec<Diagnostic>,
}

impl ModelTypes {
    /// The inferred type of value `value`.
    fn of(&self, value: ValueId) -> Option<&Type> {
        self.types.get(value as usize)?.as_ref()
    }

    /// The inferred type of output `i` of graph node `n`.
    pub fn node_output(&self, model: &Model, n: NodeId, i: usize) -> Option<&Type> {
        if !self.numbers.node_in_graph_space(n) {
            return None;
        }
        self.of(self.numbers.node_outputs(n, &model.nodes[n]).get(i)?)
    }

    /// The inferred type of input `i` of graph node `n` (what inference found for the value
    /// it reads).
    pub fn node_input(&self, model: &Model, n: NodeId, i: usize) -> Option<&Type> {
        if !self.numbers.node_in_graph_space(n) {
            return None;
        }
        let value = self.numbers.node_inputs(n, &model.nodes[n]).get(i)?;
        if value == crate::resolve::NO_VALUE {
            return None;
        }
        self.of(value)
    }

    /// The inferred type of the value defined at `site` (function bodies are not inferred
    /// on their own: their values have no type here).
    pub fn at(&self, model: &Model, site: DefSite) -> Option<&Type> {
        let value = match site {
            DefSite::GraphInput(g, _) | DefSite::Initializer(g, _) if !self.numbers.graph_in_graph_space(g) => {
                return None;
            }
            DefSite::GraphInput(g, i) => self.numbers.graph_inputs(g, &model.graphs[g]).get(i)?,
            DefSite::Initializer(g, i) => self.numbers.graph_initializers(g, &model.graphs[g]).get(i)?,
            DefSite::NodeOutput(n, i) => return self.node_output(model, n, i),
            DefSite::SparseInitializer(..) | DefSite::FunctionInput(..) => return None,
        };
        self.of(value)
    }

    /// The main graph's types by name, as [`infer_main_graph`] gives them (for a caller that
    /// has these types already and wants the by-name view).
    pub fn main_graph_types(&self, model: &Model) -> GraphTypes {
        let mut types = foldhash::HashMap::default();
        if let Some(g) = self.main {
            self.for_each_defined(model, g, |name, value| {
                if let Some(ty) = self.of(value) {
                    types.insert(name.clone(), ty.clone());
                }
            });
        }
        GraphTypes { types }
    }

    /// Whether graph `g` was inferred (the main graph and the subgraphs inference reached).
    pub fn inferred(&self, g: GraphId) -> bool {
        self.inferred.contains(&g)
    }

    /// Every value graph `g` defines, with its name and number.
    fn for_each_defined(&self, model: &Model, g: GraphId, mut each: impl FnMut(&Str, ValueId)) {
        let graph = &model.graphs[g];
        for (v, value) in graph.inputs.iter().zip(self.numbers.graph_inputs(g, graph)) {
            if let Some(name) = &v.name {
                each(name, value);
            }
        }
        for (&t, value) in graph.initializers.iter().zip(self.numbers.graph_initializers(g, graph)) {
            if let Some(name) = &model.tensors[t].name {
                each(name, value);
            }
        }
        for &n in &graph.nodes {
            let node = &model.nodes[n];
            for (name, value) in node.outputs.iter().zip(self.numbers.node_outputs(n, node)) {
                each(name, value);
            }
        }
    }
}

/// Infers the main graph and every subgraph it holds (If branches, Loop bodies), keeping
/// every type found, for tools that show the type of any value (the language server).
pub fn infer_model(model: &Model) -> ModelTypes {
    infer_model_numbered(model, crate::resolve::resolve_without_tables(model).numbers)
}

/// [`infer_model`] with the value numbers name resolution already found for `model`.
pub fn infer_model_numbered(model: &Model, numbers: ValueNumbers) -> ModelTypes {
    let found = infer_all(model, &numbers);
    found.with_numbers(numbers)
}

/// What [`infer_model`] finds, before it is joined to the value numbers it was found with.
pub(crate) struct Inferred {
    main: Option<GraphId>,
    found: env::Found,
    violations: Vec<Diagnostic>,
}

impl Inferred {
    pub(crate) fn with_numbers(self, numbers: ValueNumbers) -> ModelTypes {
        let Inferred { main, found, violations } = self;
        ModelTypes { main, numbers, types: found.types, inferred: found.inferred, violations }
    }
}

/// Infers every graph of `model`, reading `numbers` as name resolution gives them (it may
/// still be running: see [`crate::resolve::resolve_beside`]).
pub(crate) fn infer_all(model: &Model, numbers: &ValueNumbers) -> Inferred {
    let Some(g) = model.graph else {
        return Inferred { main: None, found: env::Found::default(), violations: Vec::new() };
    };
    let mut env = Env::new(model, numbers, model.opset_version("").unwrap_or(1));
    env.collect_violations();
    infer_graph(model, g, &mut env);
    let violations = env.take_violations();
    Inferred { main: Some(g), found: env.into_found(), violations }
}

/// The node outputs (sorted, by the value numbers of `types`) whose type onnx's own
/// inference, run as `check_model(full_check=True)` runs it (without data propagation,
/// from the declared types), finds contradicting their declaration: what tells a declared
/// type onnx rejects from one only our inference contradicts (see [`conflicts`]).
fn contradicted_as_onnx(model: &Model, types: &ModelTypes) -> Vec<(ValueId, Type)> {
    let Some(g) = model.graph else { return Vec::new() };
    let mut env = Env::new(model, &types.numbers, model.opset_version("").unwrap_or(1));
    env.infer_as_onnx(declared_node_outputs(model, types));
    infer_graph(model, g, &mut env);
    let mut contradicted = env.take_contradicted();
    contradicted.sort_unstable_by_key(|&(value, _)| value);
    contradicted
}

/// The type each graph declares (as a graph output or in `value_info`) for a node output
/// of its own, by value number.
fn declared_node_outputs<'m>(model: &'m Model, types: &ModelTypes) -> foldhash::HashMap<ValueId, &'m Type> {
    let mut declared = foldhash::HashMap::default();
    for (_, graph) in model.graphs.iter().filter(|&(g, _)| types.inferred(g)) {
        let written: foldhash::HashMap<&Str, &Type> = graph
            .outputs
            .iter()
            .chain(&graph.value_info)
            .filter_map(|v| Some((v.name.as_ref()?, v.ty.as_ref()?)))
            .collect();
        if written.is_empty() {
            continue;
        }
        for &n in &graph.nodes {
            let node = &model.nodes[n];
            if !types.numbers.node_in_graph_space(n) {
                continue;
            }
            for (name, value) in node.outputs.iter().zip(types.numbers.node_outputs(n, node)) {
                if let Some(&ty) = written.get(name) {
                    declared.entry(value).or_insert(ty);
                }
            }
        }
    }
    declared
}

/// What inference finds wrong in a model, as `onnx check` reports it: node inputs that
/// operators' constraints reject, node rules that cannot hold, declared types inference
/// contradicts. A declared shape that only our inference contradicts, because it follows
/// shape computations onnx's full check does not, is a warning (onnx accepts the model, and
/// onnxruntime falls back to a lenient merge of shapes): the verdict contract of
/// docs/diagnostics.md. Telling them apart takes a second inference, as onnx's, run only
/// when a declared shape is contradicted. A node rule broken only on shapes our inference
/// derives beyond onnx's is a warning too ([`beyond_onnx_rules`]).
pub fn findings(model: &Model, types: &ModelTypes) -> Vec<Diagnostic> {
    let mut found = types.violations.clone();
    beyond_onnx_rules(model, types, &mut found);
    found.extend(conflicts::conflicts(model, types));
    found
}

/// Makes warnings of the node-rule errors in `found` that inferring as onnxruntime's loader
/// does ([`Env::infer_as_onnx`] with `as_onnxruntime`: onnx's inference functions without
/// data propagation, onnxruntime's contrib operators inferred, and shape values read only
/// where every element is a known number, as its constant folding knows them) does not
/// find: a Transpose whose `perm` has the wrong length for a rank only our inference
/// derives, a Concat of a dim only our propagation of a symbolic shape knows. onnx's full
/// check and onnxruntime's loader accept such a model (every mutant of a real model
/// measured, `tests/tests/check_mutants.rs`); by the verdict contract it is valid. The
/// finding stays, with its code, as a warning that says why (`--strict` makes it an error
/// again). onnxruntime also propagates some symbolic shape values itself, so a model can
/// get the warning where onnxruntime refuses it: docs/diagnostics.md gives the case. The
/// second inference runs only for a model with a node-rule error.
fn beyond_onnx_rules(model: &Model, types: &ModelTypes, found: &mut [Diagnostic]) {
    let is_candidate = |d: &Diagnostic| d.severity == Severity::Error && d.anchor.node().is_some();
    if !found.iter().any(is_candidate) {
        return;
    }
    let Some(g) = model.graph else { return };
    let mut env = Env::new(model, &types.numbers, model.opset_version("").unwrap_or(1));
    env.infer_as_onnx(declared_node_outputs(model, types));
    env.as_onnxruntime = true;
    env.collect_violations();
    infer_graph(model, g, &mut env);
    let as_onnx = env.take_violations();
    let onnx_finds = |d: &Diagnostic| {
        as_onnx.iter().any(|o| o.severity == Severity::Error && o.code == d.code && o.anchor.node() == d.anchor.node())
    };
    for d in found.iter_mut().filter(|d| is_candidate(d) && !onnx_finds(d)) {
        d.severity = Severity::Warning;
        d.message.push_str(
            " (found on shapes only our inference derives: onnx's full check and onnxruntime's loader stop short of \
             this and accept the model)",
        );
    }
}

/// Infers a subgraph (outer values visible) and returns the types of its outputs: declared
/// types refined by inference (as onnx merges them), inferred types where nothing is
/// declared. A subgraph inferred again (a loop body) starts from nothing.
pub(crate) fn infer_subgraph<'m>(
    model: &'m Model,
    id: GraphId,
    env: &mut Env<'m>,
    inputs: &[Option<Type>],
) -> Vec<Option<Type>> {
    let g = &model.graphs[id];
    let numbers = env.numbers;
    forget_graph(model, id, env);
    let given = inputs.iter().chain(std::iter::repeat(&None));
    for ((v, value), given) in g.inputs.iter().zip(numbers.graph_inputs(id, g)).zip(given) {
        if let Some(ty) = given.as_ref().or(v.ty.as_ref()) {
            env.set_type(value, ty.clone());
        }
    }
    infer_body(model, id, env);
    graph_output_types(model, id, env)
}

/// The types of subgraph `id`'s outputs as last inferred, refined by what they declare:
/// what its node sees of it.
pub(crate) fn graph_output_types(model: &Model, id: GraphId, env: &Env<'_>) -> Vec<Option<Type>> {
    let g = &model.graphs[id];
    g.outputs
        .iter()
        .zip(env.numbers.graph_outputs(id, g).iter().chain(std::iter::repeat(crate::resolve::NO_VALUE)))
        .map(|(v, value)| match (v.ty.as_ref(), env.ty(value)) {
            (Some(declared), Some(inferred)) => Some(lattice::refine(declared, inferred)),
            (declared, inferred) => inferred.or(declared).cloned(),
        })
        .collect()
}

/// Forgets every value graph `id` defines (not those of its own subgraphs: they are
/// forgotten as they are entered).
fn forget_graph(model: &Model, id: GraphId, env: &mut Env<'_>) {
    let g = &model.graphs[id];
    let numbers = env.numbers;
    for value in numbers.graph_inputs(id, g).iter().chain(numbers.graph_initializers(id, g)) {
        env.forget(value);
    }
    for &n in &g.nodes {
        for value in numbers.node_outputs(n, &model.nodes[n]) {
            env.forget(value);
        }
    }
}

fn infer_graph<'m>(model: &'m Model, id: GraphId, env: &mut Env<'m>) {
    let g = &model.graphs[id];
    let numbers = env.numbers;
    env.wait_for_main(0);
    for (v, value) in g.inputs.iter().zip(numbers.graph_inputs(id, g)) {
        if let Some(ty) = &v.ty {
            env.set_type(value, ty.clone());
        }
    }
    infer_body(model, id, env);
}

/// Initializers, then every node in order.
fn infer_body<'m>(model: &'m Model, id: GraphId, env: &mut Env<'m>) {
    let g = &model.graphs[id];
    let numbers = env.numbers;
    // An initializer that gives a graph input its default value (models of IR version 3
    // list every weight as an input): as in onnx's inference, the input's declared type is
    // the value's type, and the initializer's values are still used to follow shape
    // computations.
    let mut inputs: Vec<ValueId> =
        if g.inputs.is_empty() { Vec::new() } else { numbers.graph_inputs(id, g).iter().collect() };
    inputs.sort_unstable();
    for (&t, value) in g.initializers.iter().zip(numbers.graph_initializers(id, g)) {
        let typed_input = inputs.binary_search(&value).is_ok() && env.ty(value).is_some();
        env.add_initializer(value, t, !typed_input);
    }
    env.enter_graph(id);
    // The main graph's nodes may still be being resolved (see `resolve_beside`).
    let main = model.graph == Some(id);
    for (i, &n) in g.nodes.iter().enumerate() {
        if main {
            env.wait_for_main(i + 1);
        }
        let schema = node::infer_node(model, n, env);
        env.check_constraints(id, n, schema);
    }
}

/// What [`annotate`] adds to a model's main graph: the types inference found (by value
/// number), and each node output to describe (its name and number), in node order.
struct Additions<'m> {
    types: Vec<Option<Type>>,
    entries: Vec<(&'m Str, ValueId)>,
}

/// Infers the main graph and lists the node outputs that get a description: those with
/// an inferred type that are neither a graph output nor described already.
fn additions(model: &Model) -> Option<Additions<'_>> {
    let g = model.graph?;
    // On a big model, inference starts on the first nodes while the later ones are being
    // resolved on another core.
    let infer = |numbers: &ValueNumbers| {
        let mut env = Env::new(model, numbers, model.opset_version("").unwrap_or(1));
        infer_graph(model, g, &mut env);
        env.into_found().types
    };
    // The node outputs not described yet are listed beside inference too, once names are
    // resolved; those inference typed are kept.
    let (_, types, mut entries) =
        crate::resolve::resolve_beside(model, infer, &|resolution, numbers| undescribed(model, g, resolution, numbers));
    entries.retain(|&(_, value)| types.get(value as usize).is_some_and(Option::is_some));
    Some(Additions { types, entries })
}

/// The named node outputs of graph `g` that are neither a graph output nor in its
/// `value_info`, each once, with its number.
fn undescribed<'m>(
    model: &'m Model,
    g: GraphId,
    resolution: &crate::resolve::Resolution,
    numbers: &ValueNumbers,
) -> Vec<(&'m Str, ValueId)> {
    // Without a duplicate definition, no two node outputs share a name, and only the names
    // described already need a table.
    let duplicates = resolution.diagnostics.iter().any(|d| d.code == "duplicate-definition");
    let graph = &model.graphs[g];
    let mut described: foldhash::HashSet<&[u8]> =
        graph.outputs.iter().chain(&graph.value_info).filter_map(|v| v.name.as_ref().map(Str::as_bytes)).collect();
    // Sized once: about one entry per node output (the list is not regrown).
    let outputs: usize = graph.nodes.iter().map(|&n| model.nodes[n].outputs.len()).sum();
    let mut entries = Vec::with_capacity(outputs);
    for &n in &graph.nodes {
        let node = &model.nodes[n];
        for (name, value) in node.outputs.iter().zip(numbers.node_outputs(n, node)) {
            let new = if duplicates { described.insert(name.as_bytes()) } else { !described.contains(name.as_bytes()) };
            if !name.is_empty() && new {
                entries.push((name, value));
            }
        }
    }
    entries
}

/// Rewrites every declaration whose type contradicts inference (graph outputs and
/// `value_info` entries of every inferred graph, graph inputs an initializer feeds) with
/// the type inference found, keeping what the declaration adds where the two agree (a
/// symbolic dimension name where inference knows no size); returns how many were
/// rewritten. Repeated while a rewrite reveals another (a subgraph's declared outputs feed
/// its owner's inference), at most a few times.
pub fn overwrite_declared(model: &mut Model) -> usize {
    use crate::diagnostic::Anchor;
    let mut rewritten = 0;
    for _ in 0..4 {
        let found = conflicts::contradicted(model, &infer_model(model));
        if found.is_empty() {
            break;
        }
        for c in found {
            let graphs = &mut model.graphs;
            let slot = match c.at {
                Anchor::GraphOutput(g, i) => graphs[g].outputs.get_mut(i),
                Anchor::ValueInfo(g, i) => graphs[g].value_info.get_mut(i),
                Anchor::GraphInput(g, i) => graphs[g].inputs.get_mut(i),
                _ => None,
            };
            if let Some(slot) = slot {
                let mut ty = lattice::refine(&c.found, &c.declared);
                ty.denotation = c.declared.denotation;
                slot.ty = Some(ty);
                rewritten += 1;
            }
        }
    }
    rewritten
}

/// Records inferred types in the main graph's `value_info` for every node output that is
/// neither a graph output nor already described there; returns how many were added.
/// Declared types are left as they are.
pub fn annotate(model: &mut Model) -> usize {
    let (Some(g), Some(Additions { mut types, entries })) = (model.graph, additions(model)) else {
        return 0;
    };
    // The types are moved out of the result: nothing is copied but the names.
    let added: Vec<ValueInfo> = entries
        .iter()
        .filter_map(|&(name, value)| {
            let ty = types.get_mut(value as usize).and_then(Option::take)?;
            Some(ValueInfo { name: Some(name.clone()), ty: Some(ty), ..Default::default() })
        })
        .collect();
    let count = added.len();
    let value_info = &mut model.graphs[g].value_info;
    if value_info.is_empty() {
        // Moved in whole: a big model's list is megabytes, not worth copying.
        *value_info = added;
    } else {
        value_info.extend(added);
    }
    count
}

/// `onnx infer` of a binary model, straight to bytes: `original` (the bytes `model` was
/// decoded from) with the descriptions [`annotate`] would add appended to its graph, as
/// [`crate::binary::append_value_info`] of them gives, and how many there are. Each
/// description is encoded from its name and inferred type (a piece of the list per core)
/// without being built first. `None` when they cannot be appended (see
/// [`crate::binary::append_value_info`]): annotate and encode the model whole instead.
pub fn annotated_bytes(model: &Model, original: &[u8]) -> Option<(Vec<u8>, usize)> {
    let Additions { mut types, entries } = additions(model)?;
    let pieces = describe_and_free(&entries, &mut types)?;
    let bytes = crate::binary::append_to_graph(original, pieces)?;
    Some((bytes, entries.len()))
}

/// The descriptions of `entries` (each typed in `types`), as pieces of the graph's
/// `value_info` list, encoded a piece per core on a big graph; each core then frees the
/// types it read (freeing 20,000 types took a tenth of `onnx infer`). The entries' numbers
/// grow in node order, so each piece's types lie in a range of `types` of their own.
/// `None` if a thread failed (the caller then annotates the model and encodes it whole).
fn describe_and_free(entries: &[(&Str, ValueId)], types: &mut [Option<Type>]) -> Option<Vec<Vec<u8>>> {
    use crate::lower::to_wire::{PARALLEL_VALUE_INFOS, described_values, room_for_descriptions};
    // A piece: its entries, the types from number `offset` on, its buffer.
    type Piece<'e, 's, 't> = (&'e [(&'s Str, ValueId)], &'t mut [Option<Type>], usize, Vec<u8>);
    let encode = |(entries, types, offset, out): Piece<'_, '_, '_>| {
        let described = entries.iter().filter_map(|&(name, value)| {
            let ty = types.get((value as usize).checked_sub(offset)?)?.as_ref()?;
            Some((name, ty))
        });
        let piece = described_values(onnx_proto::fields::graph::VALUE_INFO, described, out);
        types.iter_mut().for_each(|ty| drop(ty.take()));
        piece
    };
    // Buffers from this thread's heap, whose pages are in use already.
    let room = |entries: &[_]| room_for_descriptions(entries.len());
    let increasing = entries.windows(2).all(|pair| pair[0].1 < pair[1].1);
    if entries.len() < PARALLEL_VALUE_INFOS || onnx_threads::cores() < 2 || !increasing {
        return Some(vec![encode((entries, types, 0, room(entries)))]);
    }
    let (first, second) = entries.split_at(entries.len() / 2);
    let split = (second[0].1 as usize).min(types.len());
    let (low, high) = types.split_at_mut(split);
    let pieces = vec![(first, low, 0, room(first)), (second, high, split, room(second))];
    Some(onnx_threads::map_in_order(pieces, encode))
}
