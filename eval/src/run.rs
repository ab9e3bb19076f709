//! Executing a plan: the main graph's nodes in order over one slot per value, If and Loop
//! through their subgraphs (which read outer values from the same slots), each value
//! dropped after its last use unless every value is captured.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use onnx_core::ir::{AttributeValue, FunctionId, GraphId, Node, NodeId, Str};
use onnx_core::resolve::{NO_VALUE, ValueId};

use crate::error::{ErrorKind, KernelError, bad_attribute, bad_input, limit, unsupported};
use crate::kernels::Ctx;
use crate::memory::Budget;
use crate::plan::{BodyPlan, Plan, Step};
use crate::value::{Data, Tensor, Value};
use crate::{Limits, RunOptions};

/// Why a run ended early.
///
/// A node that fails says which node and why, with the kind of failure its kernel (or the
/// runner, for control flow and function calls) met: [`EvalError::kind`].
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("input '{0}' is not an input of the model")]
    UnknownInput(String),
    #[error(
        "input '{0}' is an initializer of a model of IR version 3 or older, which lists every initializer among its inputs: it is a constant, not an input (onnxruntime refuses a value for it too)"
    )]
    ConstantInput(String),
    #[error("input '{name}' is missing (the model expects {expected})")]
    MissingInput { name: String, expected: String },
    #[error("input '{name}': the model declares {declared}, the value given is {given} ({why})")]
    InputMismatch { name: String, declared: String, given: String, why: String },
    #[error("node {node} ({op}): {error}")]
    Node { node: String, op: String, error: KernelError },
    #[error("cancelled")]
    Cancelled,
}

impl EvalError {
    /// The kind of failure of the node that failed; `None` when no node did (the inputs
    /// given do not fit the model, or the run was cancelled).
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            EvalError::Node { error, .. } => Some(error.kind()),
            EvalError::UnknownInput(_)
            | EvalError::ConstantInput(_)
            | EvalError::MissingInput { .. }
            | EvalError::InputMismatch { .. }
            | EvalError::Cancelled => None,
        }
    }
}

/// Whether a tensor given for a graph input fits its declared type, as onnxruntime checks
/// before it runs (else the first node to read it fails with a message about its own
/// operands): the element type, the rank and every dimension declared as a number. A
/// declared 0 or less, or a symbol, takes any size; types other than tensors are not looked at.
fn fits(declared: &onnx_core::ir::Type, value: &Value) -> Result<(), String> {
    use onnx_core::ir::{DimValue, TypeValue};
    let (Some(TypeValue::Tensor(ty)), Value::Tensor(t)) = (&declared.value, value) else { return Ok(()) };
    if let Some(elem) = ty.elem_type
        && elem != 0
        && elem != t.data_type().code()
    {
        return Err("another element type".to_owned());
    }
    let Some(shape) = &ty.shape else { return Ok(()) };
    if shape.dims.len() != t.shape.len() {
        return Err(format!("rank {}, not {}", t.shape.len(), shape.dims.len()));
    }
    for (axis, (dim, &size)) in shape.dims.iter().zip(&t.shape).enumerate() {
        if let Some(DimValue::Value(v)) = dim.value
            && v > 0
            && u64::try_from(v).ok() != u64::try_from(size).ok()
        {
            return Err(format!("axis {axis} is {size}, not {v}"));
        }
    }
    Ok(())
}

/// A value a node produced, kept by `capture_all`.
#[derive(Debug, Clone)]
pub struct Captured {
    pub node: NodeId,
    pub name: String,
    pub value: Value,
}

/// What a run gives back.
#[derive(Debug, Default)]
pub struct RunResult {
    /// The main graph's outputs, in order, by name.
    pub outputs: Vec<(String, Value)>,
    /// With `capture_all` (or `capture_names`): every value (or each chosen value) the main
    /// graph's nodes produced, in order (up to `capture_limit`).
    pub values: Vec<Captured>,
    /// Values were left out because `capture_limit` was reached.
    pub capture_full: bool,
    /// With `timing`: each main-graph node's time, in order.
    pub timings: Vec<(NodeId, Duration)>,
    /// With `timing`: the time of each node inside subgraphs (If branches, Loop bodies), summed
    /// over the times it ran; already counted in the time of the node that holds the subgraph.
    pub nested_timings: Vec<(NodeId, Duration)>,
    /// With `capture_all`: what each node inside a subgraph (If branch, Loop/Scan body) last
    /// produced, by node and output position (a loop body's values are those of its last
    /// step), in node order; within `capture_limit` with the main graph's values.
    pub nested_values: Vec<((NodeId, usize), Value)>,
    /// With `timing`: the floating-point operations of each main-graph node's matrix products
    /// (MatMul, Gemm, convolutions; 2·m·k·n each, subgraphs included), in order.
    pub flops: Vec<(NodeId, u64)>,
}

struct Runner<'p, 'm> {
    plan: &'p Plan<'m>,
    options: &'p RunOptions,
    /// The run's memory, shared by the bodies it runs.
    budget: &'p Budget,
    slots: Vec<Option<Value>>,
    /// Time per node inside subgraphs, when timing.
    nested: std::collections::HashMap<NodeId, Duration>,
    /// With `capture_all`: what nodes inside subgraphs last produced, and their bytes.
    nested_values: HashMap<(NodeId, usize), Value>,
    nested_bytes: usize,
    nested_full: bool,
    /// What the nodes of each body being run repeatedly (Loop, Scan, SequenceMap; the
    /// innermost last) computed on the step before (see [`repeated`]). A table lasts as
    /// long as its loop: what an If branch or a finished loop held would otherwise be kept
    /// alive until the run ends.
    repeats: Vec<HashMap<NodeId, Repeat>>,
}

/// A subgraph node's last inputs and outputs, kept while its inputs stay the same.
enum Repeat {
    Held {
        inputs: Vec<Option<Tensor>>,
        outputs: Vec<Value>,
    },
    /// Its inputs changed between two runs of the body: computed every time from then on.
    Varies,
}

/// The outputs node `n` gave last time, if its inputs are the same tensors now; a node
/// whose inputs changed is not held again.
fn repeated(repeats: &mut HashMap<NodeId, Repeat>, n: NodeId, inputs: &[Option<&Value>]) -> Option<Vec<Value>> {
    match repeats.get(&n)? {
        Repeat::Held { inputs: held, outputs }
            if held.len() == inputs.len() && held.iter().zip(inputs).all(|(h, &now)| same_input(h, now)) =>
        {
            Some(outputs.clone())
        }
        Repeat::Held { .. } => {
            repeats.insert(n, Repeat::Varies);
            None
        }
        Repeat::Varies => None,
    }
}

/// Keeps node `n`'s inputs and outputs for [`repeated`] the first time it runs
/// (tensor inputs only).
fn hold(repeats: &mut HashMap<NodeId, Repeat>, n: NodeId, inputs: &[Option<&Value>], outputs: &[Value]) {
    if repeats.contains_key(&n) {
        return;
    }
    let tensors: Option<Vec<Option<Tensor>>> = inputs
        .iter()
        .map(|v| match v {
            None => Some(None),
            Some(Value::Tensor(t)) => Some(Some(t.clone())),
            Some(_) => None,
        })
        .collect();
    let repeat = match tensors {
        Some(inputs) => Repeat::Held { inputs, outputs: outputs.to_vec() },
        None => Repeat::Varies,
    };
    repeats.insert(n, repeat);
}

/// Whether two inputs are the same tensor: the same shared elements (not equal ones: the
/// test must cost nothing) under the same shape and layout.
fn same_input(held: &Option<Tensor>, now: Option<&Value>) -> bool {
    match (held, now) {
        (None, None) => true,
        (Some(h), Some(Value::Tensor(t))) => {
            Arc::ptr_eq(&h.data, &t.data) && h.shape == t.shape && h.layout == t.layout
        }
        _ => false,
    }
}

impl Plan<'_> {
    /// The main graph's inputs that have no initializer: what a run must be given, with
    /// their declared types.
    pub fn inputs(&self) -> Vec<(String, String)> {
        let graph = &self.model.graphs[self.main];
        let initialized: Vec<&Str> =
            graph.initializers.iter().filter_map(|&t| self.model.tensors[t].name.as_ref()).collect();
        graph
            .inputs
            .iter()
            .filter(|v| v.name.as_ref().is_some_and(|n| !initialized.contains(&n)))
            .map(|v| {
                let ty = v.ty.as_ref().map_or_else(|| "a value of any type".to_owned(), ToString::to_string);
                (v.name.as_ref().map(ToString::to_string).unwrap_or_default(), ty)
            })
            .collect()
    }

    /// A runner of the main graph, its constants in place.
    fn runner<'p>(&'p self, options: &'p RunOptions, budget: &'p Budget) -> Runner<'p, 'p> {
        let mut runner = Runner {
            plan: self,
            options,
            budget,
            slots: vec![None; self.numbers.graph_value_bound()],
            nested: std::collections::HashMap::new(),
            nested_values: HashMap::new(),
            nested_bytes: 0,
            nested_full: false,
            repeats: Vec::new(),
        };
        for (value, constant) in &self.constants {
            runner.set(*value, constant.clone());
        }
        runner
    }

    /// Runs the main graph on `inputs` (by name).
    pub fn run(&self, inputs: Vec<(String, Value)>, options: &RunOptions) -> Result<RunResult, EvalError> {
        // Counted from before the inputs are set: what the caller made for this run is the
        // run's (the plan's constants are not).
        let budget = Budget::starting_now(options.limits.max_memory);
        let mut runner = self.runner(options, &budget);
        let graph = &self.model.graphs[self.main];
        let slots = self.numbers.graph_inputs(self.main, graph);
        let mut given = vec![false; graph.inputs.len()];
        for (name, value) in inputs {
            let i = graph
                .inputs
                .iter()
                .position(|v| v.name.as_ref().is_some_and(|n| n.as_bytes() == name.as_bytes()))
                .ok_or_else(|| EvalError::UnknownInput(name.clone()))?;
            if !crate::plan::initializers_are_inputs(self.model)
                && graph
                    .initializers
                    .iter()
                    .any(|&t| self.model.tensors[t].name.as_ref().is_some_and(|n| n.as_bytes() == name.as_bytes()))
            {
                return Err(EvalError::ConstantInput(name));
            }
            if let Some(declared) = graph.inputs[i].ty.as_ref()
                && let Err(why) = fits(declared, &value)
            {
                let (declared, given) = (declared.to_string(), value.describe());
                return Err(EvalError::InputMismatch { name, declared, given, why });
            }
            given[i] = true;
            runner.set(slots.get(i).unwrap_or(NO_VALUE), value);
        }
        for (name, expected) in self.inputs() {
            let i = graph.inputs.iter().position(|v| v.name.as_ref().is_some_and(|n| n.to_string() == name));
            if i.is_some_and(|i| !given[i]) {
                return Err(EvalError::MissingInput { name, expected });
            }
        }
        let mut result = RunResult::default();
        let mut captured = 0usize;
        let chosen: std::collections::HashSet<&[u8]> = options.capture_names.iter().map(|n| n.as_bytes()).collect();
        for (i, &n) in graph.nodes.iter().enumerate() {
            let started = options.timing.then(|| (Instant::now(), crate::gemm::FLOPS.load(Ordering::Relaxed)));
            runner.node(n, 0)?;
            if let Some((started, flops)) = started {
                result.timings.push((n, started.elapsed()));
                result.flops.push((n, crate::gemm::FLOPS.load(Ordering::Relaxed).wrapping_sub(flops)));
            }
            if let Some(progress) = &options.progress {
                progress.store(i + 1, Ordering::Relaxed);
            }
            let node = &self.model.nodes[n];
            if let Some(observe) = &options.observe {
                for (name, value) in node.outputs.iter().zip(self.numbers.node_outputs(n, node)) {
                    if let Some(v) = runner.get(value) {
                        (observe.0)(name, v);
                    }
                }
            }
            if options.capture_all || !chosen.is_empty() {
                for (name, value) in node.outputs.iter().zip(self.numbers.node_outputs(n, node)) {
                    if !options.capture_all && !chosen.contains(name.as_bytes()) {
                        continue;
                    }
                    if let Some(v) = runner.get(value) {
                        let size = v.byte_size();
                        if options.capture_limit.is_some_and(|limit| captured + size > limit) {
                            result.capture_full = true;
                            continue;
                        }
                        captured += size;
                        let value = crate::view::contiguous_value(v.clone());
                        result.values.push(Captured { node: n, name: name.to_string(), value });
                    }
                }
            }
            for &dead in &self.last_uses[i] {
                if let Some(slot) = runner.slots.get_mut(dead as usize) {
                    *slot = None;
                }
            }
        }
        result.nested_timings = runner.nested.drain().collect();
        result.nested_timings.sort_by_key(|(n, _)| n.into_raw());
        result.nested_values = runner.nested_values.drain().collect();
        result.nested_values.sort_by_key(|((n, k), _)| (n.into_raw(), *k));
        result.capture_full |= runner.nested_full;
        for (v, value) in graph.outputs.iter().zip(self.numbers.graph_outputs(self.main, graph)) {
            let name = v.name.as_ref().map(ToString::to_string).unwrap_or_default();
            // No node set it: a kernel that does not compute an optional output the graph
            // returns.
            let out = runner.get(value).cloned().ok_or_else(|| EvalError::Node {
                node: format!("output '{name}'"),
                op: "graph".into(),
                error: unsupported!("no node produced this output"),
            })?;
            result.outputs.push((name, crate::view::contiguous_value(out)));
        }
        Ok(result)
    }
}

impl Runner<'_, '_> {
    fn set(&mut self, value: ValueId, v: Value) {
        if let Some(slot) = self.slots.get_mut(value as usize) {
            *slot = Some(v);
        }
    }

    fn get(&self, value: ValueId) -> Option<&Value> {
        self.slots.get(value as usize)?.as_ref()
    }

    fn limits(&self) -> &Limits {
        &self.options.limits
    }

    fn cancelled(&self) -> bool {
        self.options.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Runs node `n`, storing its outputs.
    fn node(&mut self, n: NodeId, depth: usize) -> Result<(), EvalError> {
        let plan = self.plan;
        self.node_as(n, &plan.model.nodes[n], depth)
    }

    /// Runs node `n` as `node` says (the node itself, or a copy of a function body's node
    /// bound to a call), storing its outputs.
    fn node_as(&mut self, n: NodeId, node: &Node, depth: usize) -> Result<(), EvalError> {
        if self.cancelled() {
            return Err(EvalError::Cancelled);
        }
        let plan = self.plan;
        let fail = |error: KernelError| EvalError::Node {
            node: node.name.as_ref().map_or_else(|| format!("#{}", n.into_raw()), |s| format!("'{s}'")),
            op: node.op_type.as_ref().map(ToString::to_string).unwrap_or_default(),
            error,
        };
        let lift = |e: ControlError| match e {
            ControlError::Kernel(e) => fail(e),
            ControlError::Eval(e) => e,
        };
        let step = *plan.steps.get(n).ok_or_else(|| fail(unsupported!("no kernel (not planned)")))?;
        let places = plan.numbers.node_inputs(n, node);
        let outputs = match step {
            Step::Kernel(kernel) => {
                let slots = &self.slots;
                let inputs: smallvec::SmallVec<[Option<&Value>; 6]> = (0..node.inputs.len())
                    .map(|i| {
                        if node.inputs[i].is_empty() {
                            None
                        } else {
                            places.get(i).and_then(|v| slots.get(v as usize)?.as_ref())
                        }
                    })
                    .collect();
                for (i, input) in inputs.iter().enumerate() {
                    if input.is_none() && !node.inputs[i].is_empty() {
                        // An earlier node left it unset (an optional output not computed).
                        return Err(fail(unsupported!("input '{}' has no value", node.inputs[i])));
                    }
                }
                // A loop body's node whose inputs are what they were last time (weights a
                // Loop carries unchanged, and what is computed from them) gives what it
                // gave: onnxruntime fuses the Transposes of such weights into MatMul; here
                // they are made once (a real PaddleOCR table model transposed two weight
                // matrices in each of its 501 steps, 60 % of its run).
                let repeatable = !self.repeats.is_empty()
                    && std::ptr::eq(node, &plan.model.nodes[n])
                    && !crate::registry::is_random(
                        node.schema_domain().unwrap_or(""),
                        node.op_type.as_ref().and_then(Str::as_str).unwrap_or(""),
                    );
                let held = match self.repeats.last_mut() {
                    Some(table) if repeatable => repeated(table, n, &inputs),
                    _ => None,
                };
                match held {
                    Some(outputs) => outputs,
                    None => {
                        let ctx = Ctx {
                            model: plan.model,
                            node,
                            opset: plan.opset,
                            limits: &self.options.limits,
                            budget: self.budget,
                            // Only the node itself, not a function body's copy of it.
                            prepared: plan.prepared.get(n).filter(|_| std::ptr::eq(node, &plan.model.nodes[n])),
                        };
                        let outputs = crate::invoke::call(kernel, &ctx, &inputs).map_err(fail)?;
                        if let Some(table) = self.repeats.last_mut().filter(|_| repeatable) {
                            hold(table, n, &inputs, &outputs);
                        }
                        outputs
                    }
                }
            }
            Step::Constant(i) => plan.constant_nodes.get(i).cloned().unwrap_or_default(),
            Step::Control => self.control(n, depth).map_err(lift)?,
            Step::Call(f) => self.call(n, node, f, depth).map_err(lift)?,
            Step::Body(i) => self.schema_call(n, node, &plan.bodies[i], depth).map_err(lift)?,
        };
        for (value, v) in plan.numbers.node_outputs(n, node).iter().zip(outputs) {
            self.set(value, v);
        }
        // What a kernel made from sizes was checked before it was made; this catches what
        // grows otherwise (results the size of their inputs, accumulating bodies).
        self.budget.check_held().map_err(fail)
    }

    /// The values node `n` (as `caller`) passes: `None` for an omitted input.
    fn arguments(&self, n: NodeId, caller: &Node) -> Vec<Option<Value>> {
        let places = self.plan.numbers.node_inputs(n, caller);
        (0..caller.inputs.len())
            .map(|i| if caller.inputs[i].is_empty() { None } else { places.get(i).and_then(|v| self.get(v)).cloned() })
            .collect()
    }

    /// The values of function `f`'s outputs once its body has run.
    fn function_results(&self, f: FunctionId) -> Result<Vec<Value>, KernelError> {
        let function = &self.plan.model.function_store[f];
        let outputs = self.plan.numbers.function_outputs(f, function);
        outputs
            .iter()
            .zip(&function.outputs)
            .map(|(v, name)| {
                self.get(v)
                    .cloned()
                    .ok_or_else(|| unsupported!("function output '{name}' has no value: no body node produced it"))
            })
            .collect()
    }

    /// Runs node `n` (`caller`) through its schema's function body, planned in `body`: the
    /// body's nodes in a value space of their own, attribute references bound to the call.
    fn schema_call(
        &mut self,
        n: NodeId,
        caller: &Node,
        body: &BodyPlan,
        depth: usize,
    ) -> Result<Vec<Value>, ControlError> {
        if depth >= self.limits().max_depth {
            return Err(limit!("function bodies nest deeper than {}", self.limits().max_depth).into());
        }
        let arguments = self.arguments(n, caller);
        let (plan, f) = (&body.plan, body.body.function);
        let function = &plan.model.function_store[f];
        let mut inner = Runner {
            plan,
            options: self.options,
            budget: self.budget,
            slots: vec![None; plan.numbers.function_value_count(f)],
            nested: std::collections::HashMap::new(),
            nested_values: HashMap::new(),
            nested_bytes: 0,
            nested_full: false,
            repeats: Vec::new(),
        };
        for (formal, argument) in plan.numbers.function_inputs(f, function).iter().zip(arguments) {
            if let Some(argument) = argument {
                inner.set(formal, argument);
            }
        }
        for &m in &function.nodes {
            let node = &plan.model.nodes[m];
            match body.body.bound(node, caller) {
                Some(bound) => inner.node_as(m, &bound, depth + 1),
                None => inner.node_as(m, node, depth + 1),
            }
            .map_err(|e| match e.kind() {
                // The body node's kind of failure is the call's; a cancelled run stays
                // cancelled.
                Some(kind) => ControlError::Kernel(KernelError::new(kind, format!("in its function body: {e}"))),
                None => ControlError::Eval(e),
            })?;
        }
        Ok(inner.function_results(f)?)
    }

    /// Runs the call `caller` (node `n`) makes of model-local function `f`: its body in the
    /// function's own value space (functions see no outer scope), each body node with its
    /// attribute references bound to the call, as inference binds them.
    fn call(&mut self, n: NodeId, caller: &Node, f: FunctionId, depth: usize) -> Result<Vec<Value>, ControlError> {
        if depth >= self.limits().max_depth {
            return Err(limit!("function calls nest deeper than {}", self.limits().max_depth).into());
        }
        let plan = self.plan;
        let function = &plan.model.function_store[f];
        let arguments = self.arguments(n, caller);
        // The caller's values wait here while the body runs in slots of its own.
        let caller_slots = std::mem::replace(&mut self.slots, vec![None; plan.numbers.function_value_count(f)]);
        for (formal, argument) in plan.numbers.function_inputs(f, function).iter().zip(arguments) {
            if let Some(argument) = argument {
                self.set(formal, argument);
            }
        }
        let ran = function.nodes.iter().try_for_each(|&m| {
            let body_node = &plan.model.nodes[m];
            let started = self.options.timing.then(Instant::now);
            match onnx_core::infer::bound_for_call(body_node, caller, function) {
                Some(bound) => self.node_as(m, &bound, depth + 1),
                None => self.node_as(m, body_node, depth + 1),
            }?;
            if let Some(started) = started {
                *self.nested.entry(m).or_default() += started.elapsed();
            }
            Ok(())
        });
        let results = ran.map_err(ControlError::Eval).and_then(|()| Ok(self.function_results(f)?));
        self.slots = caller_slots;
        results
    }

    fn run_graph(&mut self, g: GraphId, depth: usize) -> Result<Vec<Value>, ControlError> {
        if depth >= self.limits().max_depth {
            return Err(limit!("subgraphs nest deeper than {}", self.limits().max_depth).into());
        }
        let plan = self.plan;
        let graph = &plan.model.graphs[g];
        for &m in &graph.nodes {
            let started = self.options.timing.then(Instant::now);
            self.node(m, depth + 1).map_err(ControlError::Eval)?;
            if let Some(started) = started {
                *self.nested.entry(m).or_default() += started.elapsed();
            }
            if self.options.capture_all {
                self.capture_nested(m);
            }
        }
        plan.numbers
            .graph_outputs(g, graph)
            .iter()
            .map(|v| self.get(v).cloned().ok_or_else(|| unsupported!("a subgraph output has no value").into()))
            .collect()
    }

    /// Keeps what subgraph node `m` produced (replacing what it produced on an earlier
    /// step), while all kept values stay within the run's `capture_limit`.
    fn capture_nested(&mut self, m: NodeId) {
        let plan = self.plan;
        let node = &plan.model.nodes[m];
        for (k, value) in plan.numbers.node_outputs(m, node).iter().enumerate() {
            let Some(v) = self.get(value) else { continue };
            let size = v.byte_size();
            let copy = v.clone();
            if let Some(old) = self.nested_values.remove(&(m, k)) {
                self.nested_bytes -= old.byte_size();
            }
            if self.options.capture_limit.is_some_and(|limit| self.nested_bytes + size > limit) {
                self.nested_full = true;
                continue;
            }
            self.nested_bytes += size;
            self.nested_values.insert((m, k), crate::view::contiguous_value(copy));
        }
    }

    fn control(&mut self, n: NodeId, depth: usize) -> Result<Vec<Value>, ControlError> {
        let op = self.plan.model.nodes[n].op_type.as_ref().and_then(Str::as_str);
        if !matches!(op, Some("Loop" | "Scan" | "SequenceMap")) {
            return self.control_once(n, depth);
        }
        // A body run step after step: its nodes may give what they gave on the step before,
        // for as long as this node runs.
        self.repeats.push(HashMap::new());
        let result = self.control_once(n, depth);
        self.repeats.pop();
        result
    }

    /// Runs control-flow node `n`.
    fn control_once(&mut self, n: NodeId, depth: usize) -> Result<Vec<Value>, ControlError> {
        let plan = self.plan;
        let node = &plan.model.nodes[n];
        let graph_attr = |name: &str| match node.attribute(name).and_then(|a| a.value()) {
            Some(AttributeValue::Graph(g)) => Ok(g),
            _ => Err(ControlError::from(bad_attribute!("attribute '{name}' is missing"))),
        };
        let places = plan.numbers.node_inputs(n, node);
        let input = |runner: &Self, i: usize| -> Option<Value> {
            if node.inputs.get(i).is_none_or(|s| s.is_empty()) {
                return None;
            }
            places.get(i).and_then(|v| runner.get(v)).cloned()
        };
        match node.op_type.as_ref().and_then(Str::as_str) {
            Some("If") => {
                let cond = input(self, 0).ok_or_else(|| bad_input!("the condition is missing"))?;
                let taken = truth(&cond)?;
                self.run_graph(graph_attr(if taken { "then_branch" } else { "else_branch" })?, depth)
            }
            Some("Loop") => {
                let body = graph_attr("body")?;
                let trip = input(self, 0).map(|v| scalar_i64(&v)).transpose()?;
                let mut keep_going = match input(self, 1) {
                    Some(v) => truth(&v)?,
                    None => true,
                };
                let mut carried: Vec<Value> = (2..node.inputs.len())
                    .map(|i| input(self, i).ok_or_else(|| bad_input!("loop input {i} is missing")))
                    .collect::<Result<_, _>>()?;
                let body_graph = &plan.model.graphs[body];
                let body_inputs: Vec<ValueId> = plan.numbers.graph_inputs(body, body_graph).iter().collect();
                let mut scans: Vec<Vec<Tensor>> = Vec::new();
                // The scan outputs so far: their elements per output, their bytes together.
                let mut scanned: (Vec<usize>, usize) = (Vec::new(), 0);
                let mut i: i64 = 0;
                while keep_going && trip.is_none_or(|t| i < t) {
                    if self.cancelled() {
                        return Err(ControlError::Eval(EvalError::Cancelled));
                    }
                    // Before each iteration, not after the last: a growing carried value or
                    // scan output ends the loop as soon as it passes the budget.
                    self.budget.check_held().map_err(|e| e.map_message(|m| format!("{m} (after {i} iterations)")))?;
                    if i as u64 >= self.limits().max_loop_iterations {
                        return Err(limit!("more than {} iterations", self.limits().max_loop_iterations).into());
                    }
                    let mut feed = vec![
                        Value::Tensor(Tensor::scalar(Data::I64(vec![i].into()))),
                        Value::Tensor(Tensor::scalar(Data::Bool(vec![keep_going]))),
                    ];
                    feed.extend(carried.iter().cloned());
                    for (slot, v) in body_inputs.iter().zip(feed) {
                        self.set(*slot, v);
                    }
                    let outs = self.run_graph(body, depth)?;
                    let mut outs = outs.into_iter();
                    keep_going = truth(&outs.next().ok_or_else(|| bad_attribute!("the body has no outputs"))?)?;
                    carried = outs.by_ref().take(carried.len()).collect();
                    for (k, v) in outs.enumerate() {
                        if scans.len() <= k {
                            scans.push(Vec::new());
                            scanned.0.push(0);
                        }
                        let t = v.tensor()?;
                        scanned.0[k] = scanned.0[k].saturating_add(t.len());
                        scanned.1 = scanned.1.saturating_add(t.data.byte_size());
                        if scanned.0[k] > self.limits().max_tensor_elements {
                            return Err(limit!(
                                "scan output {k} would hold {} elements after {} iterations, more than the limit of {}",
                                scanned.0[k],
                                i + 1,
                                self.limits().max_tensor_elements
                            )
                            .into());
                        }
                        scans[k].push(t.clone());
                    }
                    // Stacking the scan outputs at the end copies them once more.
                    self.budget.check_more(scanned.1, &format!("stacking the scan outputs of {} iterations", i + 1))?;
                    i += 1;
                }
                let mut result = carried;
                let scan_count = body_graph.outputs.len().saturating_sub(1 + result.len());
                scans.resize(scan_count, Vec::new());
                for items in scans {
                    result.push(Value::Tensor(stack(&items, self.limits(), self.budget)?));
                }
                Ok(result)
            }
            Some("SequenceMap") => {
                let body = graph_attr("body")?;
                let given: Vec<Value> = (0..node.inputs.len())
                    .map(|i| input(self, i).ok_or_else(|| bad_input!("input {i} is missing")))
                    .collect::<Result<_, _>>()?;
                let Some(Value::Sequence(first)) = given.first() else {
                    return Err(bad_input!("input 0 must be a sequence").into());
                };
                let count = first.len();
                let body_graph = &plan.model.graphs[body];
                let body_inputs: Vec<ValueId> = plan.numbers.graph_inputs(body, body_graph).iter().collect();
                let mut collected: Vec<Vec<Tensor>> = vec![Vec::new(); body_graph.outputs.len()];
                for k in 0..count {
                    if self.cancelled() {
                        return Err(ControlError::Eval(EvalError::Cancelled));
                    }
                    for (slot, value) in body_inputs.iter().zip(&given) {
                        let item = match value {
                            Value::Sequence(items) => Value::Tensor(
                                items.get(k).cloned().ok_or_else(|| bad_input!("the sequences differ in length"))?,
                            ),
                            other => other.clone(),
                        };
                        self.set(*slot, item);
                    }
                    for (out, v) in collected.iter_mut().zip(self.run_graph(body, depth)?) {
                        out.push(v.tensor()?.clone());
                    }
                }
                Ok(collected.into_iter().map(Value::Sequence).collect())
            }
            Some("Scan") => self.scan(n, depth),
            Some("FlexAttention") => {
                let given: Vec<Option<Value>> = (0..3).map(|i| input(self, i)).collect();
                let given: Vec<Option<&Value>> = given.iter().map(Option::as_ref).collect();
                let ctx = Ctx {
                    model: plan.model,
                    node,
                    opset: plan.opset,
                    limits: self.limits(),
                    budget: self.budget,
                    prepared: None,
                };
                let mut scores = crate::kernels::flex::scores(&ctx, &given)?;
                if node.attribute("score_mod").is_some() {
                    scores = self.modify(graph_attr("score_mod")?, scores, depth)?;
                }
                let mut probs = crate::kernels::flex::softmax(&scores)?;
                if node.attribute("prob_mod").is_some() {
                    probs = self.modify(graph_attr("prob_mod")?, probs, depth)?;
                }
                Ok(vec![Value::Tensor(crate::kernels::flex::output(&given, &probs)?)])
            }
            other => Err(unsupported!("{} is not control flow", other.unwrap_or("?")).into()),
        }
    }
}

impl Runner<'_, '_> {
    /// Runs a one-input, one-output modifier subgraph (FlexAttention's score_mod and
    /// prob_mod) on `t`.
    fn modify(&mut self, g: GraphId, t: Tensor, depth: usize) -> Result<Tensor, ControlError> {
        let graph = &self.plan.model.graphs[g];
        let slot = self.plan.numbers.graph_inputs(g, graph).iter().next();
        let slot = slot.ok_or_else(|| bad_attribute!("a modifier subgraph has no input"))?;
        self.set(slot, Value::Tensor(t));
        let out = self.run_graph(g, depth)?.into_iter().next();
        let out = out.ok_or_else(|| bad_attribute!("a modifier subgraph has no output"))?;
        Ok(out.tensor()?.clone())
    }

    /// Scan (opset 9 on): the body runs once per slice of the scan inputs along their axes
    /// (forwards or backwards), carrying the state variables; each iteration's scan outputs
    /// are stacked along their axes.
    fn scan(&mut self, n: NodeId, depth: usize) -> Result<Vec<Value>, ControlError> {
        let plan = self.plan;
        let node = &plan.model.nodes[n];
        let Some(AttributeValue::Graph(body)) = node.attribute("body").and_then(|a| a.value()) else {
            return Err(bad_attribute!("attribute 'body' is missing").into());
        };
        let scans = usize::try_from(node.attribute("num_scan_inputs").and_then(|a| a.i).unwrap_or(0))
            .map_err(|_| bad_attribute!("num_scan_inputs"))?;
        let places = plan.numbers.node_inputs(n, node);
        // Scan-8 starts with an optional sequence_lens input.
        let first = if plan.opset < 9 { 1 } else { 0 };
        if first == 1 && !node.inputs.first().is_none_or(|s| s.is_empty()) {
            return Err(unsupported!("Scan-8 with sequence_lens is not supported yet").into());
        }
        let given: Vec<Tensor> = (first..node.inputs.len())
            .map(|i| {
                places
                    .get(i)
                    .and_then(|v| self.get(v))
                    .and_then(|v| v.tensor().ok())
                    .cloned()
                    .ok_or_else(|| bad_input!("a Scan input is missing"))
            })
            .collect::<Result<_, _>>()?;
        let states = given.len().checked_sub(scans).ok_or_else(|| bad_attribute!("more scan inputs than inputs"))?;
        let ints = |name: &str, len: usize| -> Vec<i64> {
            match node.attribute(name).and_then(|a| a.value()) {
                Some(AttributeValue::Ints(v)) => v.to_vec(),
                _ => vec![0; len],
            }
        };
        let body_graph = &plan.model.graphs[body];
        let scan_outputs = body_graph.outputs.len().saturating_sub(states);
        if plan.opset < 9 {
            // Scan-8: every input has a batch axis first; each batch runs on its own, its
            // scan inputs sliced along the axis after the batch, and the results are
            // stacked over the batch again.
            let directions = ints("directions", scans);
            let batch = given.first().and_then(|t| t.shape.first()).copied().unwrap_or(0);
            // Every input is sliced along its batch axis, and every scan input then along
            // the axis after it.
            for (k, t) in given.iter().enumerate() {
                let needed = if k < states { 1 } else { 2 };
                if t.rank() < needed || t.shape[0] != batch {
                    return Err(bad_input!(
                        "Scan input {k} of shape {:?} does not have the batch axis of {batch}{}",
                        t.shape,
                        if k < states { "" } else { " and a scan axis" }
                    )
                    .into());
                }
            }
            // The body runs once per batch entry and step.
            let length = given.get(states).map_or(0, |t| t.shape[1]);
            let runs = batch.saturating_mul(length.max(1));
            if runs as u64 > self.limits().max_loop_iterations {
                return Err(limit!(
                    "{batch} batch entries of {length} steps: more than {} iterations",
                    self.limits().max_loop_iterations
                )
                .into());
            }
            let mut per_batch: Vec<Vec<Value>> = Vec::with_capacity(batch);
            for b in 0..batch {
                let sliced: Vec<Tensor> = given.iter().map(|t| slice_axis(t, 0, b)).collect();
                let axes = vec![0; scans];
                let out_axes = vec![0; scan_outputs];
                let shape = ScanShape { states, in_dirs: &directions, axes: &axes, out_dirs: &[], out_axes: &out_axes };
                per_batch.push(self.scan_loop(body, &sliced, &shape, depth)?);
            }
            let outputs = states + scan_outputs;
            return (0..outputs)
                .map(|k| {
                    let items: Vec<Tensor> = per_batch
                        .iter()
                        .map(|outs| {
                            outs.get(k)
                                .and_then(|v| v.tensor().ok())
                                .cloned()
                                .ok_or_else(|| bad_attribute!("a Scan output is missing"))
                        })
                        .collect::<Result<_, _>>()?;
                    Ok(Value::Tensor(stack(&items, self.limits(), self.budget)?))
                })
                .collect();
        }
        let (in_axes, in_dirs) = (ints("scan_input_axes", scans), ints("scan_input_directions", scans));
        let (out_axes, out_dirs) =
            (ints("scan_output_axes", scan_outputs), ints("scan_output_directions", scan_outputs));
        let mut axes = Vec::with_capacity(scans);
        for k in 0..scans {
            let t = &given[states + k];
            axes.push(crate::kernels::axis(in_axes.get(k).copied().unwrap_or(0), t.rank())?);
        }
        let shape = ScanShape { states, in_dirs: &in_dirs, axes: &axes, out_dirs: &out_dirs, out_axes: &out_axes };
        self.scan_loop(body, &given, &shape, depth)
    }

    /// The iterations of a Scan over `given` (states, then scan inputs): the final states,
    /// then each scan output stacked along its axis.
    fn scan_loop(
        &mut self,
        body: GraphId,
        given: &[Tensor],
        shape: &ScanShape<'_>,
        depth: usize,
    ) -> Result<Vec<Value>, ControlError> {
        let states = shape.states;
        let scans = given.len() - states;
        let mut length = None;
        for k in 0..scans {
            let t = &given[states + k];
            let len = t.shape[shape.axes[k]];
            if length.is_some_and(|l| l != len) {
                return Err(bad_input!("scan inputs differ in length").into());
            }
            length = Some(len);
        }
        let length = length.unwrap_or(0);
        if length as u64 > self.limits().max_loop_iterations {
            return Err(limit!("{length} steps: more than {} iterations", self.limits().max_loop_iterations).into());
        }
        let body_graph = &self.plan.model.graphs[body];
        let scan_outputs = body_graph.outputs.len().saturating_sub(states);
        let body_inputs: Vec<ValueId> = self.plan.numbers.graph_inputs(body, body_graph).iter().collect();
        let mut carried: Vec<Value> = given[..states].iter().cloned().map(Value::Tensor).collect();
        let mut stacked: Vec<Vec<Tensor>> = vec![Vec::new(); scan_outputs];
        for step in 0..length {
            if self.cancelled() {
                return Err(ControlError::Eval(EvalError::Cancelled));
            }
            self.budget.check_held().map_err(|e| e.map_message(|m| format!("{m} (after {step} steps)")))?;
            let mut feed = carried.clone();
            for k in 0..scans {
                let backwards = shape.in_dirs.get(k).copied().unwrap_or(0) != 0;
                let at = if backwards { length - 1 - step } else { step };
                feed.push(Value::Tensor(slice_axis(&given[states + k], shape.axes[k], at)));
            }
            for (slot, v) in body_inputs.iter().zip(feed) {
                self.set(*slot, v);
            }
            let mut outs = self.run_graph(body, depth)?.into_iter();
            carried = outs.by_ref().take(states).collect();
            for (k, v) in outs.enumerate() {
                stacked[k].push(v.tensor()?.clone());
            }
        }
        let mut result = carried;
        for (k, mut items) in stacked.into_iter().enumerate() {
            if shape.out_dirs.get(k).copied().unwrap_or(0) != 0 {
                items.reverse();
            }
            let joined = stack(&items, self.limits(), self.budget)?;
            let a = crate::kernels::axis(shape.out_axes.get(k).copied().unwrap_or(0), joined.rank())?;
            result.push(Value::Tensor(move_axis_from_front(&joined, a)));
        }
        Ok(result)
    }
}

/// How a Scan slices and stacks: the number of state variables, each scan input's
/// direction and axis, each scan output's direction and axis.
struct ScanShape<'a> {
    states: usize,
    in_dirs: &'a [i64],
    axes: &'a [usize],
    out_dirs: &'a [i64],
    out_axes: &'a [i64],
}

/// The slice of `t` at `index` along `axis`, without that axis.
fn slice_axis(t: &Tensor, axis: usize, index: usize) -> Tensor {
    // An empty tensor's other axes may multiply past usize: its slices are empty.
    let outer = if t.is_empty() { 0 } else { crate::broadcast::elements(&t.shape[..axis]) };
    let (size, inner) = (t.shape[axis], crate::broadcast::elements(&t.shape[axis + 1..]));
    let picked = (0..outer).flat_map(|o| ((o * size + index) * inner)..((o * size + index + 1) * inner));
    let mut shape = t.shape.clone();
    shape.remove(axis);
    Tensor::new(shape, t.data.pick(picked))
}

/// `t` with its first axis moved to position `axis`.
fn move_axis_from_front(t: &Tensor, axis: usize) -> Tensor {
    if axis == 0 {
        return t.clone();
    }
    let mut perm: Vec<usize> = (1..t.rank()).collect();
    perm.insert(axis, 0);
    let strides = crate::broadcast::strides(&t.shape);
    let shape: Vec<usize> = perm.iter().map(|&p| t.shape[p]).collect();
    let moved: Vec<usize> = perm.iter().map(|&p| strides[p]).collect();
    Tensor::new(shape.clone(), t.data.pick(crate::broadcast::offsets(&shape, &moved)))
}

/// Why control flow or a call ended early: its own failure (the runner names the node), or
/// that of a node of its body, which names itself (or a cancelled run).
enum ControlError {
    Kernel(KernelError),
    Eval(EvalError),
}

impl From<KernelError> for ControlError {
    fn from(e: KernelError) -> ControlError {
        ControlError::Kernel(e)
    }
}

fn truth(v: &Value) -> Result<bool, ControlError> {
    let t = v.tensor()?;
    match &*t.data {
        Data::Bool(b) if b.len() == 1 => Ok(b[0]),
        _ => Err(bad_input!("a condition must be one boolean").into()),
    }
}

fn scalar_i64(v: &Value) -> Result<i64, ControlError> {
    let ints = v.tensor()?.to_i64s()?;
    ints.first().copied().filter(|_| ints.len() == 1).ok_or_else(|| bad_input!("expected one integer").into())
}

/// Tensors of one shape stacked along a new first axis (a Loop's scan outputs): as many
/// elements as the limit allows (the iterations share one value until they are stacked).
fn stack(items: &[Tensor], limits: &Limits, budget: &Budget) -> Result<Tensor, KernelError> {
    let Some(first) = items.first() else { return Ok(Tensor::new(vec![0], Data::F32(Vec::new().into()))) };
    let total = first.len().saturating_mul(items.len());
    if items.len() > 1 && total > limits.max_tensor_elements {
        return Err(limit!(
            "{} iterations' outputs of {} elements would hold {total} elements, more than the limit of {}",
            items.len(),
            first.len(),
            limits.max_tensor_elements
        ));
    }
    let width = first.data.byte_size() / first.len().max(1);
    budget.check_more(total.saturating_mul(width.max(1)), &format!("stacking {} iterations' outputs", items.len()))?;
    let mut data = Data::empty(first.data_type(), total)?;
    for t in items {
        if t.shape != first.shape {
            // The body (an attribute) made them.
            return Err(bad_attribute!("scan outputs change shape: {:?} then {:?}", first.shape, t.shape));
        }
        data.extend_from(&t.data)?;
    }
    let mut shape = vec![items.len()];
    shape.extend_from_slice(&first.shape);
    Ok(Tensor::new(shape, data))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An If branch runs once and a finished loop runs no more: neither keeps what its
    /// nodes computed (a branch's Transpose of a big weight would otherwise stay alive to
    /// the end of the run), and the loop's result is still right.
    #[test]
    fn what_a_body_holds_lasts_only_while_its_loop_runs() {
        let text = r#"<ir_version: 10, opset_import: ["" : 21]>
        main (float[2, 2] w, bool flag) => (float[2, 2] y, float[2, 2] z) <int64 trips = {3}, bool go = {1}> {
            y = If (flag) <then_branch = yes () => (float[2, 2] t) { t = Transpose <perm = [1, 0]> (w) },
                           else_branch = no () => (float[2, 2] u) { u = Identity (w) }>
            z = Loop (trips, go, w) <body = step (int64 i, bool c, float[2, 2] s) => (bool c_out, float[2, 2] s_out) {
                c_out = Identity (c)
                wt = Transpose <perm = [1, 0]> (w)
                s_out = Add (s, wt)
            }>
        }"#;
        let analysis = onnx_core::analysis::analyze_text(text);
        assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
        let model = analysis.model;
        let plan = Plan::new(&model).expect("plannable");
        let options = RunOptions::default();
        let budget = Budget::starting_now(usize::MAX);
        let mut runner = plan.runner(&options, &budget);
        let graph = &model.graphs[plan.main];
        let w = Value::Tensor(Tensor::new(vec![2, 2], Data::F32(vec![1.0, 2.0, 3.0, 4.0].into())));
        let flag = Value::Tensor(Tensor::scalar(Data::Bool(vec![true])));
        let slots: Vec<ValueId> = plan.numbers.graph_inputs(plan.main, graph).iter().collect();
        runner.set(slots[0], w);
        runner.set(slots[1], flag);
        for &n in &graph.nodes {
            runner.node(n, 0).expect("runs");
            assert!(runner.repeats.is_empty(), "a table outlives its node: {:?}", runner.repeats.len());
        }
        let z = plan.numbers.graph_outputs(plan.main, graph).get(1).expect("z");
        let Some(Value::Tensor(z)) = runner.get(z) else { panic!("z has no value") };
        // w + 3·wᵀ
        assert_eq!(z.to_f64s().expect("floats"), [4.0, 11.0, 9.0, 16.0]);
    }
}
