//! What inference knows about each value while walking a graph: its type, and for small
//! integer tensors the values themselves (possibly symbolic, as onnx's data propagation
//! keeps them). Values are known by the numbers name resolution gave them.

use foldhash::HashMap;

use super::types::OnnxKnows;
use super::types::{Known, MAX_TRACKED_ELEMENTS, Outputs, tensor_type, tensor_values};
use crate::diagnostic::Diagnostic;
use crate::ir::{DimValue, Function, FunctionId, GraphId, Model, Node, TensorId, Type};
use crate::resolve::{Places, ValueId, ValueNumbers};
use crate::schema::OpSchema;

/// What inference knows about the values of one number space (see [`ValueNumbers`]): the
/// model's graphs, or one function call's body. Values are looked up by number, which
/// name resolution gave every use, so inference hashes no names.
pub struct Env<'m> {
    pub model: &'m Model,
    /// The imported version of the default domain.
    pub opset: i64,
    /// The numbers of `model`'s values.
    pub numbers: &'m ValueNumbers,
    types: Vec<Option<Type>>,
    /// Known values (shape computations), by number like `types`; empty until the first
    /// one is known, so a model without shape computations pays nothing for it.
    values: Vec<Option<Known>>,
    /// Whether to infer as onnx's `check_model(full_check=True)` does, without data
    /// propagation: rules read only the values of initializers and `Constant` outputs, and
    /// go no further than onnx's rule of the same version (see [`super::conflicts`]).
    pub(super) as_onnx: bool,
    /// With `as_onnx`: infer as onnxruntime's loader does instead, which runs onnx's
    /// inference functions too, but infers its contrib operators, and folds shape
    /// computations whose result is fully known (a Shape of a tensor of static shape, and what
    /// is computed from it) into constants first: such values are read, those with a
    /// symbolic or unknown element are not.
    pub(super) as_onnxruntime: bool,
    /// When inferring as onnx does: the types the model declares for node outputs (graph
    /// outputs, `value_info`), which onnx's inference starts from and merges what it infers
    /// into, so that nodes downstream see them.
    declared: HashMap<ValueId, &'m Type>,
    /// The main graph's outputs that declare a type and that its nodes read, by name: a
    /// node output that is one of them keeps what its declaration says beyond what
    /// inference found, for the nodes that read it (as onnx's inference merges it), where
    /// the two do not contradict.
    pub(super) declared_outputs: HashMap<&'m [u8], &'m Type>,
    /// When inferring as onnx does: the node outputs whose inferred type contradicts the
    /// declared one (where onnx's merge fails).
    contradicted: Vec<(ValueId, Type)>,
    /// Values that are a constant tensor of the model (initializers, `Constant` outputs),
    /// for rules that read non-integer constants (Resize's scales).
    constants: HashMap<ValueId, TensorId>,
    /// The graphs inferred so far, in the order they were entered.
    inferred: Vec<GraphId>,
    /// The function whose body this environment infers, if any: its opset imports decide
    /// the operator versions of the body's nodes.
    pub(super) function: Option<&'m Function>,
    /// The functions being expanded, outermost first (see [`Env::for_call`]).
    calls: Vec<*const Function>,
    /// When set, type-constraint findings per graph (see [`Env::collect_violations`]).
    pub(super) violations: Option<HashMap<GraphId, Vec<Diagnostic>>>,
    /// Scratch space of the constraint check, kept between nodes (no allocation per node).
    pub(super) bindings: super::constraints::Bindings,
    /// The model's import of the default domain (the constraint check's opset).
    pub(super) model_opset: Option<i64>,
    /// How far name resolution had got when last asked (see [`Env::wait_for_main`]).
    resolved: usize,
    /// What nodes without attributes and without a known input gave, by operator (see
    /// [`Env::untyped_key`]).
    untyped: HashMap<UntypedKey, Option<Outputs>>,
    /// When collecting violations or inferring as onnx does: the If outputs onnx's
    /// inference infers no type for, with what it knows of them instead and, for a
    /// declaration, the declared type's flaw (see `validate::null_inputs`).
    pub(super) onnx_untyped: HashMap<ValueId, (OnnxKnows, String)>,
}

/// A node with no attributes none of whose inputs has a known type or value: its outputs
/// follow from its operator's schema at one version and which of its inputs are given, and
/// nothing else.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct UntypedKey {
    schema: *const OpSchema,
    opset: i64,
    /// Bit `i`: input `i` is given (not omitted).
    given: u64,
    inputs: usize,
    outputs: usize,
}

/// Calls nested deeper than this are not expanded (their callers get no types): a bound on
/// work and stack for chains of distinct functions, cycles are caught before.
const MAX_CALL_DEPTH: usize = 32;

impl std::fmt::Debug for Env<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Env").field("opset", &self.opset).field("values", &self.types.len()).finish()
    }
}

/// What inference found in one number space: a type per value, and the graphs inferred.
#[derive(Debug, Default)]
pub struct Found {
    pub types: Vec<Option<Type>>,
    pub inferred: Vec<GraphId>,
}

impl<'m> Env<'m> {
    /// An environment for the graphs of `model` (all of them share one number space).
    pub fn new(model: &'m Model, numbers: &'m ValueNumbers, opset: i64) -> Self {
        Self::with_values(model, numbers, opset, numbers.graph_value_bound())
    }

    fn with_values(model: &'m Model, numbers: &'m ValueNumbers, opset: i64, count: usize) -> Self {
        Env {
            model,
            opset,
            numbers,
            types: vec![None; count],
            values: Vec::new(),
            as_onnx: false,
            as_onnxruntime: false,
            declared: HashMap::default(),
            declared_outputs: declared_outputs_read(model),
            contradicted: Vec::new(),
            constants: HashMap::default(),
            inferred: Vec::new(),
            function: None,
            calls: Vec::new(),
            violations: None,
            bindings: Default::default(),
            model_opset: model.opset_version(""),
            resolved: 0,
            untyped: HashMap::default(),
            onnx_untyped: HashMap::default(),
        }
    }

    /// Waits until name resolution, which may still be running on another thread (see
    /// [`crate::resolve::resolve_beside`]), has numbered the main graph's inputs and
    /// initializers and its first `nodes` nodes. Asks the resolver only when what it said
    /// last does not cover them, so that its progress is not read at every node.
    pub fn wait_for_main(&mut self, nodes: usize) {
        if self.resolved <= nodes {
            self.resolved = self.numbers.wait_for_main(nodes);
        }
    }

    /// A fresh environment for the body of `function` (function `id` of `model`, numbered
    /// by `numbers`) called from `self`'s graph: it sees only the body (functions have no
    /// outer scope), and the default domain's version is the body's import, else the
    /// caller's. `None` when the function is already being expanded (a recursive call) or
    /// calls nest too deep.
    pub fn for_call(
        &self,
        model: &'m Model,
        numbers: &'m ValueNumbers,
        id: FunctionId,
        function: &'m Function,
    ) -> Option<Env<'m>> {
        let pointer: *const Function = function;
        if self.calls.contains(&pointer) || self.calls.len() >= MAX_CALL_DEPTH {
            return None;
        }
        let opset = function.opset_version("").unwrap_or(self.opset);
        let mut calls = self.calls.clone();
        calls.push(pointer);
        let body = Self::with_values(model, numbers, opset, numbers.function_value_count(id));
        Some(Env {
            function: Some(function),
            calls,
            as_onnx: self.as_onnx,
            as_onnxruntime: self.as_onnxruntime,
            ..body
        })
    }

    /// An environment for a function body parsed into a model of its own (one onnxruntime
    /// expands an operator into, see `runtime_body`), at default-domain version `opset`.
    pub(super) fn for_expansion(
        model: &'m Model,
        numbers: &'m ValueNumbers,
        id: FunctionId,
        function: &'m Function,
        opset: i64,
    ) -> Env<'m> {
        let body = Self::with_values(model, numbers, opset, numbers.function_value_count(id));
        Env { function: Some(function), ..body }
    }

    /// The key under which what `node` gives is kept, when it has no attributes and none of
    /// its inputs is known (see [`UntypedKey`]).
    pub(super) fn untyped_key(
        &self,
        schema: &OpSchema,
        opset: i64,
        node: &Node,
        inputs: Places<'_>,
    ) -> Option<UntypedKey> {
        if !node.attributes.is_empty() || node.inputs.len() > 64 {
            return None;
        }
        let mut given = 0u64;
        for (i, name) in node.inputs.iter().enumerate() {
            if name.is_empty() {
                continue;
            }
            let value = inputs.get(i)?;
            if self.ty(value).is_some() || self.value(value).is_some() {
                return None;
            }
            given |= 1 << i;
        }
        Some(UntypedKey { schema, opset, given, inputs: node.inputs.len(), outputs: node.outputs.len() })
    }

    /// What a node of `key` gave before, if one did.
    pub(super) fn untyped_outputs(&self, key: &UntypedKey) -> Option<Option<Outputs>> {
        self.untyped.get(key).cloned()
    }

    /// Keeps what a node of `key` gave.
    pub(super) fn remember_untyped(&mut self, key: UntypedKey, found: &Option<Outputs>) {
        self.untyped.insert(key, found.clone());
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
        if !self.inferred.contains(&id) {
            self.inferred.push(id);
        }
    }

    /// Whether onnx's inference infers no type at all for `value` (an If output, see
    /// [`Env::untyped_by_onnx`]); known while collecting violations or inferring as onnx
    /// does.
    pub(super) fn onnx_leaves_untyped(&self, value: ValueId) -> bool {
        matches!(self.onnx_untyped.get(&value), Some((OnnxKnows::Untyped, _)))
    }

    /// The type-constraint findings, graph by graph in the model's order.
    pub(crate) fn take_violations(&mut self) -> Vec<Diagnostic> {
        let Some(mut found) = self.violations.take() else { return Vec::new() };
        self.model.graphs.iter().filter_map(|(g, _)| found.remove(&g)).flatten().collect()
    }

    /// Every type found, by value number, and the graphs inferred.
    pub fn into_found(self) -> Found {
        Found { types: self.types, inferred: self.inferred }
    }

    /// Forgets what is known of `value`'s elements, keeping its type.
    pub(super) fn forget_value(&mut self, value: ValueId) {
        if let Some(known) = self.values.get_mut(value as usize) {
            *known = None;
        }
    }

    /// Forgets what is known about `value`: a subgraph inferred again (a loop body) starts
    /// from nothing, as on its first pass.
    pub fn forget(&mut self, value: ValueId) {
        if let Some(slot) = self.types.get_mut(value as usize) {
            *slot = None;
            if let Some(known) = self.values.get_mut(value as usize) {
                *known = None;
            }
            if !self.constants.is_empty() {
                self.constants.remove(&value);
            }
        }
    }

    pub fn set_type(&mut self, value: ValueId, ty: Type) {
        self.set_found_type(value, Some(ty));
    }

    /// [`Env::set_type`] of what a rule found, `None` forgetting the value's type.
    pub(super) fn set_found_type(&mut self, value: ValueId, ty: Option<Type>) {
        if let Some(slot) = self.types.get_mut(value as usize) {
            *slot = ty;
        }
    }

    pub fn ty(&self, value: ValueId) -> Option<&Type> {
        self.types.get(value as usize)?.as_ref()
    }

    pub fn set_value(&mut self, value: ValueId, known: Known) {
        if (value as usize) < self.types.len() && known.elements.len() <= MAX_TRACKED_ELEMENTS {
            if self.values.len() < self.types.len() {
                self.values.resize(self.types.len(), None);
            }
            if let Some(slot) = self.values.get_mut(value as usize) {
                *slot = Some(known);
            }
        }
    }

    pub fn value(&self, value: ValueId) -> Option<&Known> {
        self.values.get(value as usize).and_then(Option::as_ref)
    }

    /// Infer as onnx's full check does, without data propagation (see `as_onnx`), from
    /// the declared types of node outputs (see `declared`).
    pub(super) fn infer_as_onnx(&mut self, declared: HashMap<ValueId, &'m Type>) {
        self.as_onnx = true;
        self.declared = declared;
    }

    /// A node output's type as onnx's inference keeps it: what was inferred merged into
    /// what is declared (see `declared`); a contradiction is noted (see `contradicted`).
    pub(super) fn merged_with_declared(&mut self, value: ValueId, inferred: Option<Type>) -> Option<Type> {
        let Some(&declared) = self.declared.get(&value) else { return inferred };
        match inferred {
            Some(inferred) if super::lattice::contradiction(declared, &inferred).is_some() => {
                self.contradicted.push((value, inferred.clone()));
                Some(inferred)
            }
            Some(inferred) => Some(super::lattice::refine(declared, &inferred)),
            None => Some(declared.clone()),
        }
    }

    /// The node outputs whose inferred type contradicted the declared one, with that type.
    pub(super) fn take_contradicted(&mut self) -> Vec<(ValueId, Type)> {
        std::mem::take(&mut self.contradicted)
    }

    /// Whether this environment infers as onnx's full check does.
    pub(super) fn as_onnx(&self) -> bool {
        self.as_onnx
    }

    /// Whether `value` is known only through a shape computation: known, and neither an
    /// initializer nor a `Constant` (the values onnx's inference reads without data
    /// propagation).
    pub(super) fn known_by_propagation(&self, value: ValueId) -> bool {
        self.value(value).is_some() && self.constant(value).is_none()
    }

    /// Whether onnxruntime's loader knows `value` as a constant when inferring as it does
    /// (see `as_onnxruntime`): every element is a known number.
    pub(super) fn folded_by_onnxruntime(&self, value: ValueId) -> bool {
        self.as_onnxruntime
            && self.value(value).is_some_and(|k| k.elements.iter().all(|e| matches!(e, Some(DimValue::Value(_)))))
    }

    /// Records that `value` is the constant tensor `id`.
    pub fn set_constant(&mut self, value: ValueId, id: TensorId) {
        if (value as usize) < self.types.len() {
            self.constants.insert(value, id);
        }
    }

    /// The constant tensor `value` is, if it is one.
    pub fn constant(&self, value: ValueId) -> Option<TensorId> {
        if self.constants.is_empty() { None } else { self.constants.get(&value).copied() }
    }

    /// Initializer `id`, numbered `value`: its type from the tensor, and its values when
    /// small and integral.
    /// An initializer's value; its type too unless `typed` is false (a graph input of the
    /// same name declared it).
    pub fn add_initializer(&mut self, value: ValueId, id: TensorId, typed: bool) {
        let t = &self.model.tensors[id];
        self.set_constant(value, id);
        if typed {
            self.set_type(value, tensor_type(t));
        }
        if let Some(known) = tensor_values(t) {
            self.set_value(value, known);
        }
    }
}

/// The main graph's outputs that declare a type and that a node of the main graph reads,
/// by name (see [`Env::declared_outputs`]). Outputs nothing reads are left to inference
/// alone: what it finds for them is what `onnx infer` reports.
fn declared_outputs_read(model: &Model) -> HashMap<&[u8], &Type> {
    let Some(g) = model.main_graph() else { return HashMap::default() };
    let mut declared: HashMap<&[u8], &Type> =
        g.outputs.iter().filter_map(|v| Some((v.name.as_ref()?.as_bytes(), v.ty.as_ref()?))).collect();
    if declared.is_empty() {
        return declared;
    }
    let read: foldhash::HashSet<&[u8]> =
        g.nodes.iter().flat_map(|&n| model.nodes[n].inputs.iter()).map(|i| i.as_bytes()).collect();
    declared.retain(|name, _| read.contains(name));
    declared
}
