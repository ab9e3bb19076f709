//! What inference knows about each value while walking a graph: its type, and for small
//! integer tensors the values themselves (possibly symbolic, as onnx's data propagation
//! keeps them).

use foldhash::HashMap;

use crate::diagnostic::Diagnostic;
use crate::ir::{
    DimValue, Dimension, Function, GraphId, Model, NodeId, Shape, Str, Tensor, TensorId, TensorType, Type, TypeValue,
};

/// The value of a 0-D or 1-D integer tensor, element by element; an element may be a
/// symbolic dimension (from `Shape` of a symbolic input) or unknown.
#[derive(Clone, Debug, PartialEq)]
pub struct Known {
    pub elements: Vec<Option<DimValue>>,
    /// A 0-D tensor (one element, no axis).
    pub scalar: bool,
}

impl Known {
    pub fn vector(elements: Vec<Option<DimValue>>) -> Known {
        Known { elements, scalar: false }
    }

    /// All elements as plain integers, when none is symbolic or unknown.
    pub fn ints(&self) -> Option<Vec<i64>> {
        self.elements.iter().map(|e| if let Some(DimValue::Value(v)) = e { Some(*v) } else { None }).collect()
    }

    /// The elements as dimensions of a shape (what Reshape, Expand, … read).
    pub fn as_dims(&self) -> Vec<Dimension> {
        self.elements.iter().map(|e| Dimension { value: e.clone(), denotation: None }).collect()
    }
}

/// Larger constant tensors are not tracked: data propagation is for shape computations.
const MAX_TRACKED_ELEMENTS: usize = 64;

/// The values one graph defines.
#[derive(Default)]
struct Scope {
    types: HashMap<Str, Type>,
    values: HashMap<Str, Known>,
    /// Values that are a constant tensor of the model (initializers, `Constant` outputs),
    /// for rules that read non-integer constants (Resize's scales).
    constants: HashMap<Str, TensorId>,
}

/// Scopes from the main graph (first) to the subgraph being inferred (last); lookups see
/// outer values, as subgraphs do.
pub struct Env<'m> {
    pub model: &'m Model,
    /// The imported version of the default domain.
    pub opset: i64,
    scopes: Vec<Scope>,
    /// When set, the types of each subgraph are kept as it is left (the language server
    /// shows them); otherwise they are forgotten, which is all `onnx infer` needs.
    subgraph_types: Option<HashMap<GraphId, HashMap<Str, Type>>>,
    /// The function whose body this environment infers, if any: its opset imports decide
    /// the operator versions of the body's nodes.
    function: Option<&'m Function>,
    /// The functions being expanded, outermost first (see [`Env::for_call`]).
    calls: Vec<*const Function>,
    /// When set, type-constraint findings per graph (see [`Env::collect_violations`]).
    violations: Option<HashMap<GraphId, Vec<Diagnostic>>>,
}

/// Calls nested deeper than this are not expanded (their callers get no types): a bound on
/// work and stack for chains of distinct functions, cycles are caught before.
const MAX_CALL_DEPTH: usize = 32;

impl std::fmt::Debug for Env<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Env").field("opset", &self.opset).field("depth", &self.scopes.len()).finish()
    }
}

impl<'m> Env<'m> {
    pub fn new(model: &'m Model, opset: i64) -> Self {
        Env {
            model,
            opset,
            scopes: vec![Scope::default()],
            subgraph_types: None,
            function: None,
            calls: Vec::new(),
            violations: None,
        }
    }

    /// A fresh environment for the body of `function` called from `self`'s graph: it sees
    /// only the body (functions have no outer scope), and the default domain's version is
    /// the body's import, else the caller's. `None` when the function is already being
    /// expanded (a recursive call) or calls nest too deep.
    pub fn for_call(&self, model: &'m Model, function: &'m Function) -> Option<Env<'m>> {
        let id: *const Function = function;
        if self.calls.contains(&id) || self.calls.len() >= MAX_CALL_DEPTH {
            return None;
        }
        let opset = function.opset_version("").unwrap_or(self.opset);
        let mut calls = self.calls.clone();
        calls.push(id);
        Some(Env { function: Some(function), calls, ..Env::new(model, opset) })
    }

    /// The imported version of a non-default domain, for the graph or function body being
    /// inferred: a function's own imports first, then the model's.
    pub fn domain_opset(&self, domain: &str) -> Option<i64> {
        self.function.and_then(|f| f.opset_version(domain)).or_else(|| self.model.opset_version(domain))
    }

    /// Checks each graph node against its operator's type constraints as it is inferred
    /// (function bodies are not: their nodes are checked where the function is checked).
    pub(crate) fn collect_violations(&mut self) {
        self.violations.get_or_insert_with(HashMap::default);
    }

    /// Starts inferring graph `id`: findings of an earlier pass over it (a loop body is
    /// inferred more than once) are dropped, so the last pass counts, as for its types.
    pub(crate) fn enter_graph(&mut self, id: GraphId) {
        if let Some(found) = &mut self.violations {
            found.insert(id, Vec::new());
        }
    }

    /// Checks node `n` of `graph`, just inferred, against its operator's type constraints.
    pub(crate) fn check_constraints(&mut self, graph: GraphId, n: NodeId) {
        if self.violations.is_none() {
            return;
        }
        let mut new = Vec::new();
        super::constraints::node_violations(self.model, n, |name| self.ty(name), &mut new);
        if let Some(found) = &mut self.violations
            && !new.is_empty()
        {
            found.entry(graph).or_default().extend(new);
        }
    }

    /// The type-constraint findings, graph by graph in the model's order.
    pub(crate) fn take_violations(&mut self) -> Vec<Diagnostic> {
        let Some(mut found) = self.violations.take() else { return Vec::new() };
        self.model.graphs.iter().filter_map(|(g, _)| found.remove(&g)).flatten().collect()
    }

    /// Keeps the types of every subgraph inferred from now on (see [`Env::leave_subgraph`]).
    pub fn keep_subgraph_types(&mut self) {
        self.subgraph_types.get_or_insert_with(HashMap::default);
    }

    /// Leaves the subgraph `id`, keeping its types when asked to. A subgraph inferred more
    /// than once (a loop body) keeps its last types.
    pub fn leave_subgraph(&mut self, id: GraphId) {
        if let Some(kept) = &mut self.subgraph_types
            && self.scopes.len() > 1
            && let Some(scope) = self.scopes.last()
        {
            kept.insert(id, scope.types.clone());
        }
        self.pop_scope();
    }

    /// The types of the main graph, and of each subgraph when they were kept.
    pub fn into_all_types(mut self) -> (HashMap<Str, Type>, HashMap<GraphId, HashMap<Str, Type>>) {
        let subgraphs = self.subgraph_types.take().unwrap_or_default();
        (self.into_types(), subgraphs)
    }

    /// The types of the outermost scope (the main graph's values).
    pub fn into_types(mut self) -> HashMap<Str, Type> {
        self.scopes.swap_remove(0).types
    }

    /// Enters a subgraph.
    pub fn push_scope(&mut self) {
        self.scopes.push(Scope::default());
    }

    /// Leaves a subgraph, forgetting its values.
    pub fn pop_scope(&mut self) {
        if self.scopes.len() > 1 {
            self.scopes.pop();
        }
    }

    /// Makes room for `values` more types in the current scope, so that a big graph's
    /// table is allocated once instead of regrown (and moved) a dozen times.
    pub fn reserve(&mut self, values: usize) {
        self.current().types.reserve(values);
    }

    fn current(&mut self) -> &mut Scope {
        if self.scopes.is_empty() {
            self.scopes.push(Scope::default());
        }
        let last = self.scopes.len() - 1;
        &mut self.scopes[last]
    }

    pub fn set_type(&mut self, name: Str, ty: Type) {
        if !name.is_empty() {
            self.current().types.insert(name, ty);
        }
    }

    pub fn ty(&self, name: &Str) -> Option<&Type> {
        if name.is_empty() {
            return None;
        }
        self.scopes.iter().rev().find_map(|s| s.types.get(name))
    }

    pub fn set_value(&mut self, name: Str, known: Known) {
        if !name.is_empty() && known.elements.len() <= MAX_TRACKED_ELEMENTS {
            self.current().values.insert(name, known);
        }
    }

    pub fn value(&self, name: &Str) -> Option<&Known> {
        self.scopes.iter().rev().find_map(|s| s.values.get(name))
    }

    /// Records that `name` is the constant tensor `id`.
    pub fn set_constant(&mut self, name: Str, id: TensorId) {
        if !name.is_empty() {
            self.current().constants.insert(name, id);
        }
    }

    /// The constant tensor `name` is, if it is one.
    pub fn constant(&self, name: &Str) -> Option<TensorId> {
        self.scopes.iter().rev().find_map(|s| s.constants.get(name)).copied()
    }

    /// An initializer: its type from the tensor, and its values when small and integral.
    pub fn add_initializer(&mut self, id: TensorId) {
        let t = &self.model.tensors[id];
        let Some(name) = t.name.clone() else { return };
        self.set_constant(name.clone(), id);
        self.set_type(name.clone(), tensor_type(t));
        if let Some(known) = tensor_values(t) {
            self.set_value(name, known);
        }
    }
}

/// The type a tensor constant has.
pub fn tensor_type(t: &Tensor) -> Type {
    tensor(t.data_type.unwrap_or(0), Some(t.dims.iter().map(|&d| dim(d)).collect()))
}

pub fn dim(v: i64) -> Dimension {
    Dimension { value: Some(DimValue::Value(v)), denotation: None }
}

/// The size of a dimension when it is a number (not symbolic, not unknown).
pub fn known_dim(d: &Dimension) -> Option<i64> {
    match d.value {
        Some(DimValue::Value(v)) => Some(v),
        _ => None,
    }
}

pub fn unknown_dim() -> Dimension {
    Dimension::default()
}

/// A tensor type; `dims: None` is an unknown rank.
pub fn tensor(elem: i32, dims: Option<Vec<Dimension>>) -> Type {
    Type {
        value: Some(TypeValue::Tensor(TensorType { elem_type: Some(elem), shape: dims.map(|dims| Shape { dims }) })),
        denotation: None,
    }
}

/// The element type and dims of a tensor type (dims `None` for unknown rank).
pub fn tensor_parts(ty: &Type) -> Option<(Option<i32>, Option<&[Dimension]>)> {
    match &ty.value {
        Some(TypeValue::Tensor(t)) => Some((t.elem_type, t.shape.as_ref().map(|s| s.dims.as_slice()))),
        _ => None,
    }
}

/// The values of a small 0-D or 1-D int32/int64 tensor held in memory.
pub fn tensor_values(t: &Tensor) -> Option<Known> {
    if t.dims.len() > 1 || t.is_external() {
        return None;
    }
    let count = t.element_count()? as usize;
    if count > MAX_TRACKED_ELEMENTS {
        return None;
    }
    let ints = crate::ir::tensor_data::int_values(t)?;
    (ints.len() == count).then(|| Known {
        elements: ints.into_iter().map(|v| Some(DimValue::Value(v))).collect(),
        scalar: t.dims.is_empty(),
    })
}
