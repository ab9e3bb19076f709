//! Checking a model once before it runs: every node of every graph gets its kernel (or is
//! control flow the runner handles), and when some have none, all of them are listed in one
//! error, never discovered one at a time mid-run. The plan also numbers the model's values
//! (name resolution's numbers: one slot per value, subgraphs' uses of outer values already
//! pointing at the outer slot), converts the initializers once, and finds each main-graph
//! value's last use so that the runner can drop it there.

use std::collections::{HashMap, HashSet};

use la_arena::ArenaMap;
use onnx_core::ir::{AttributeValue, FunctionId, GraphId, Model, Node, NodeId, Str};
use onnx_core::resolve::{ValueId, ValueNumbers, resolve_without_tables};

use crate::registry::{Dispatch, dispatch, is_control, is_random};
use crate::value::{Tensor, Value};

/// How a node is run.
#[derive(Clone, Copy, Debug)]
pub enum Step {
    /// The operator's kernels at the imported version, chosen among by element type.
    Kernel(Dispatch),
    /// If, Loop: run by the runner through their subgraphs.
    Control,
    /// A `Constant` node, its value made once (index into [`Plan::constant_nodes`]): in a loop
    /// body it would otherwise be converted again on every iteration.
    Constant(usize),
    /// A call of a model-local function: the runner runs its body, in the function's own
    /// value space, with the body's attribute references bound to the call.
    Call(FunctionId),
    /// An operator run through its schema's function body (index into [`Plan::bodies`]):
    /// one without a kernel, or any that has a body when [`PlanOptions`] asks for it.
    Body(usize),
}

/// How a plan is made.
#[derive(Clone, Debug, Default)]
pub struct PlanOptions {
    /// Run every operator whose schema has a function body through that body, even when it
    /// has a kernel: a check of the kernels against onnx's own definitions.
    pub expand_function_bodies: bool,
    /// The bytes nodes' prepared forms may hold together ([`Plan::prepared`]); `None` for
    /// the default, [`PREPARED_BUDGET`]. Past it, constant weights are decoded on each run.
    pub prepared_budget: Option<usize>,
}

/// An operator's schema function body, planned: `plan` runs the body's function (its
/// `main` names no graph: a body plan is entered through [`BodyPlan::body`]'s function).
#[derive(Debug)]
pub struct BodyPlan {
    pub body: onnx_core::infer::SchemaBody,
    pub plan: Plan<'static>,
}

/// What cannot be run, found before running.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("the model has no main graph")]
    NoGraph,
    #[error("{} node(s) cannot be run yet:\n{}", .0.iter().map(|u| u.nodes.len()).sum::<usize>(), .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Unsupported(Vec<Unsupported>),
    #[error("initializer '{name}': {error}")]
    Initializer { name: String, error: crate::KernelError },
}

/// The nodes of one operator that cannot run, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unsupported {
    /// `Op` or `domain::Op`.
    pub op: String,
    pub reason: String,
    /// The nodes' names (empty for unnamed nodes), in model order.
    pub nodes: Vec<String>,
}

impl std::fmt::Display for Unsupported {
    /// `Resize (6 nodes: 'Resize.0', 'Resize.1', 'Resize.2', …): no kernel yet`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let named: Vec<String> =
            self.nodes.iter().filter(|n| !n.is_empty()).take(3).map(|n| format!("'{n}'")).collect();
        let more = if self.nodes.iter().filter(|n| !n.is_empty()).count() > 3 { ", …" } else { "" };
        let count = self.nodes.len();
        let nodes = if count == 1 { "1 node".to_owned() } else { format!("{count} nodes") };
        if named.is_empty() {
            write!(f, "{} ({nodes}): {}", self.op, self.reason)
        } else {
            write!(f, "{} ({nodes}: {}{more}): {}", self.op, named.join(", "), self.reason)
        }
    }
}

/// A model ready to run.
#[derive(Debug)]
pub struct Plan<'m> {
    pub model: &'m Model,
    pub main: GraphId,
    pub numbers: ValueNumbers,
    /// By node id, dense: the runner looks a node's step up on every run.
    pub steps: ArenaMap<NodeId, Step>,
    /// The initializers of every graph, converted, by value number.
    pub constants: Vec<(ValueId, Value)>,
    /// For each main-graph node, the values whose last use it is.
    pub last_uses: Vec<Vec<ValueId>>,
    /// The imported version of the default domain.
    pub opset: i64,
    /// The values of the `Constant` nodes (see [`Step::Constant`]).
    pub constant_nodes: Vec<Vec<Value>>,
    /// The schema function bodies operators run through (see [`Step::Body`]).
    pub bodies: Vec<BodyPlan>,
    /// The Transpose, Slice and Expand nodes whose result is a strided view of their input
    /// rather than a copy ([`crate::view`]), in model order.
    pub views: Vec<NodeId>,
    /// What main-graph nodes' kernels made of their constant inputs when the plan was made
    /// ([`crate::kernels::Prepare`]: MatMulNBits' weights decoded once, not on every run).
    pub prepared: ArenaMap<NodeId, crate::kernels::Prepared>,
}

/// How a plan holds its initializers' elements (see [`crate::buf`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InitializerBytes {
    /// Bytes used where they lie in the model (or its external-data files).
    pub in_place: usize,
    /// Bytes copied: values stored in typed fields, misaligned bytes, strings and bools.
    pub copied: usize,
}

impl<'m> Plan<'m> {
    /// The initializers' bytes, used in place and copied.
    pub fn initializer_bytes(&self) -> InitializerBytes {
        let mut bytes = InitializerBytes::default();
        for (_, value) in &self.constants {
            if let Value::Tensor(t) = value {
                let size = t.data.byte_size();
                if t.data.is_view() { bytes.in_place += size } else { bytes.copied += size }
            }
        }
        bytes
    }

    pub fn new(model: &'m Model) -> Result<Plan<'m>, PlanError> {
        Plan::with_options(model, &PlanOptions::default())
    }

    pub fn with_options(model: &'m Model, options: &PlanOptions) -> Result<Plan<'m>, PlanError> {
        let main = model.graph.ok_or(PlanError::NoGraph)?;
        let numbers = resolve_without_tables(model).numbers;
        let opset = model.opset_version("").unwrap_or(1);
        let mut planner = Planner::new(model, opset, options, Vec::new());
        let mut called = Vec::new();
        for (g, graph) in model.graphs.iter() {
            if !numbers.graph_in_graph_space(g) {
                continue;
            }
            for &n in &graph.nodes {
                called.extend(planner.plan(n));
            }
        }
        planner.plan_functions(called);
        let Planner { steps, constant_nodes, missing, bodies, .. } = planner;
        if !missing.is_empty() {
            return Err(PlanError::Unsupported(missing));
        }
        let mut constants = Vec::new();
        for (g, graph) in model.graphs.iter() {
            if !numbers.graph_in_graph_space(g) {
                continue;
            }
            for (&t, value) in graph.initializers.iter().zip(numbers.graph_initializers(g, graph)) {
                let tensor = &model.tensors[t];
                let converted = Tensor::from_ir(tensor).map_err(|error| PlanError::Initializer {
                    name: tensor.name.as_ref().map(ToString::to_string).unwrap_or_default(),
                    error,
                })?;
                constants.push((value, Value::Tensor(converted)));
            }
        }
        let mut plan = Plan {
            model,
            main,
            numbers,
            steps,
            constants,
            last_uses: Vec::new(),
            opset,
            constant_nodes,
            bodies,
            views: Vec::new(),
            prepared: ArenaMap::default(),
        };
        plan.make_views();
        plan.fold_constants(options.prepared_budget.unwrap_or(PREPARED_BUDGET));
        plan.last_uses = last_uses(model, &plan.numbers, main);
        Ok(plan)
    }
}

/// A folded node may keep this many times its inputs' bytes (dequantizing 8-bit weights to
/// float32 takes four), plus [`FOLD_SLACK`]: folding must not hold a large tensor for the
/// whole run that the node would make and drop at once (an Expand or ConstantOfShape).
const FOLD_GROWTH: usize = 4;
const FOLD_SLACK: usize = 64 << 10;
/// Beyond that, results are still folded while all such results together stay under this
/// many bytes: a model that makes its weights with ConstantOfShape (caffe2's "light"
/// GoogLeNet makes all 57 convolution weights so: 3.6 of 58 ms per run) keeps them, as
/// onnxruntime does, and memory stays bounded.
const FOLD_GROWN_BUDGET: usize = 64 << 20;
/// What all nodes' prepared forms may hold together ([`Plan::prepared`]): 4-bit weights
/// decoded to float32 take eight times their bytes, so a model past this (a 4-bit model of
/// more than some 60 M weights) has the rest decoded on each run, as before.
pub const PREPARED_BUDGET: usize = 512 << 20;

impl Plan<'_> {
    /// Constant folding: each main-graph node whose inputs are all constant (initializers
    /// that no input can replace, `Constant` nodes, nodes folded before it) is run once
    /// here and becomes a [`Step::Constant`]; each run then only hands out its values. In a
    /// quantized model this takes the dequantization of every weight out of the run, as
    /// onnxruntime does when it builds a session. A node whose kernel fails is left to fail
    /// when it runs, where the error names it.
    fn fold_constants(&mut self, prepared_budget: usize) {
        let model = self.model;
        let graph = &model.graphs[self.main];
        // An initializer that is also a graph input is only a default, from IR version 4 on;
        // before it every initializer had to be listed as an input, and is a constant (as
        // onnxruntime takes it: it refuses a value for one).
        let inputs: HashSet<&[u8]> = if initializers_are_inputs(model) {
            graph.inputs.iter().filter_map(|v| v.name.as_ref()).map(Str::as_bytes).collect()
        } else {
            HashSet::new()
        };
        let fixed: HashSet<ValueId> = graph
            .initializers
            .iter()
            .zip(self.numbers.graph_initializers(self.main, graph))
            .filter(|(t, _)| !model.tensors[**t].name.as_ref().is_some_and(|n| inputs.contains(n.as_bytes())))
            .map(|(_, value)| value)
            .collect();
        let mut known: HashMap<ValueId, Value> =
            self.constants.iter().filter(|(value, _)| fixed.contains(value)).map(|(k, v)| (*k, v.clone())).collect();
        let limits = crate::Limits::default();
        let opset = self.opset;
        // A kernel's context while planning: no prepared form yet, a budget of its own.
        fn planning<'a>(
            (model, opset, limits): (&'a Model, i64, &'a crate::Limits),
            node: &'a Node,
            budget: &'a crate::memory::Budget,
        ) -> crate::kernels::Ctx<'a> {
            crate::kernels::Ctx { model, node, opset, limits, budget, prepared: None }
        }
        let mut grown = 0usize;
        let mut prepared_bytes = 0usize;
        // Which node makes each value, for the QDQ pairs: made when a MatMul or Conv with a
        // constant input first asks.
        let mut producers: Option<HashMap<ValueId, NodeId>> = None;
        for &n in &graph.nodes {
            let node = &model.nodes[n];
            let values = match self.steps.get(n) {
                Some(Step::Constant(i)) => self.constant_nodes[*i].clone(),
                Some(Step::Kernel(kernel)) => {
                    let op = node.op_type.as_ref().and_then(Str::as_str).unwrap_or("");
                    let domain = node.schema_domain().unwrap_or("");
                    let places = self.numbers.node_inputs(n, node);
                    // The constant inputs (`None` for the others and for omitted ones).
                    let given: Vec<Option<&Value>> = (0..node.inputs.len())
                        .map(|i| if node.inputs[i].is_empty() { None } else { known.get(&places.get(i)?) })
                        .collect();
                    if !given.iter().any(Option::is_some)
                        || is_random(domain, op)
                        || node.attributes.iter().any(|a| a.ref_attr_name.is_some())
                    {
                        continue;
                    }
                    if given.iter().zip(&node.inputs).any(|(g, name)| g.is_none() && !name.is_empty()) {
                        // Not foldable: what its kernel can make of the constant inputs alone.
                        let dequantized: Option<crate::kernels::DequantizedPrepare> = match (domain, op) {
                            ("", "MatMul") => Some(crate::kernels::dequantized_product::prepare),
                            // One group only (what the 8-bit convolution takes).
                            ("", "Conv")
                                if matches!(
                                    node.attribute("group").and_then(|a| a.value()),
                                    None | Some(AttributeValue::Int(1))
                                ) =>
                            {
                                Some(crate::kernels::nn::dequantized_conv::prepare)
                            }
                            _ => None,
                        };
                        if let Some(prepare) = dequantized
                            && let Some((a, b)) = dequantized_operands(
                                model,
                                &self.numbers,
                                n,
                                &known,
                                producers.get_or_insert_with(|| {
                                    graph
                                        .nodes
                                        .iter()
                                        .flat_map(|&m| {
                                            self.numbers.node_outputs(m, &model.nodes[m]).iter().map(move |v| (v, m))
                                        })
                                        .collect()
                                }),
                            )
                            && let Some((form, bytes)) = prepare(&a, &b)
                            && prepared_bytes + bytes <= prepared_budget
                        {
                            prepared_bytes += bytes;
                            self.prepared.insert(n, form);
                            continue;
                        }
                        if let Some(prepare) = crate::kernels::preparer(domain, op) {
                            let allowed = prepared_budget.saturating_sub(prepared_bytes).min(limits.max_memory);
                            let budget = crate::memory::Budget::starting_now(allowed);
                            let ctx = planning((model, opset, &limits), node, &budget);
                            // A form that does not fit, or inputs it refuses: the kernel
                            // decodes on each run, where an error names the node.
                            if let Ok(Some((form, bytes))) = prepare(&ctx, &given)
                                && prepared_bytes + bytes <= prepared_budget
                            {
                                prepared_bytes += bytes;
                                self.prepared.insert(n, form);
                            }
                        }
                        continue;
                    }
                    // What the node may make is bounded before it runs: a kernel checks its
                    // result's size against this budget before allocating it, so a
                    // ConstantOfShape of 10^9 elements is left to the run (and its budget)
                    // rather than made here and then thrown away.
                    let taken: usize = given.iter().flatten().map(|v| v.byte_size()).sum();
                    let allowed = (taken.saturating_mul(FOLD_GROWTH) + FOLD_SLACK)
                        .max(FOLD_GROWN_BUDGET.saturating_sub(grown))
                        .min(limits.max_memory);
                    let budget = crate::memory::Budget::starting_now(allowed);
                    let ctx = planning((model, opset, &limits), node, &budget);
                    let Ok(values) = crate::invoke::call(*kernel, &ctx, &given) else { continue };
                    let made: usize = values.iter().map(Value::byte_size).sum();
                    if made > taken * FOLD_GROWTH + FOLD_SLACK {
                        if grown + made > FOLD_GROWN_BUDGET {
                            continue;
                        }
                        grown += made;
                    }
                    self.steps.insert(n, Step::Constant(self.constant_nodes.len()));
                    self.constant_nodes.push(values.clone());
                    values
                }
                _ => continue,
            };
            for (value, v) in self.numbers.node_outputs(n, node).iter().zip(values) {
                known.insert(value, v);
            }
        }
    }
}

/// A MatMul's two operands when both are DequantizeLinear outputs of 8-bit integers with
/// constant scales and zero points, B's from a constant weight (the QDQ form): what
/// [`crate::kernels::dequantized_product`] runs as an 8-bit product.
fn dequantized_operands<'k>(
    model: &Model,
    numbers: &ValueNumbers,
    n: NodeId,
    known: &'k HashMap<ValueId, Value>,
    producers: &HashMap<ValueId, NodeId>,
) -> Option<(
    crate::kernels::dequantized_product::DequantizedA<'k>,
    crate::kernels::dequantized_product::DequantizedB<'k>,
)> {
    use crate::kernels::dequantized_product::{DequantizedA, DequantizedB};
    let places = numbers.node_inputs(n, &model.nodes[n]);
    let (a, b) = (places.get(0)?, places.get(1)?);
    let int = |node: &Node, name: &str| match node.attribute(name).and_then(|a| a.value()) {
        Some(AttributeValue::Int(v)) => Some(v),
        _ => None,
    };
    // The DequantizeLinear making `value`, with its three inputs as constants (`None` for
    // an omitted zero point).
    let dequantized = |value: ValueId| {
        let d = *producers.get(&value)?;
        let node = &model.nodes[d];
        let plain = node.schema_domain() == Some("")
            && node.op_type.as_ref().and_then(Str::as_str) == Some("DequantizeLinear")
            && int(node, "block_size").unwrap_or(0) == 0
            && int(node, "output_dtype").unwrap_or(0) == 0;
        if !plain {
            return None;
        }
        let inputs = numbers.node_inputs(d, node);
        let constant = |i: usize| match known.get(&inputs.get(i)?) {
            Some(Value::Tensor(t)) => Some(Some(t)),
            _ => None,
        };
        let zero = if node.inputs.get(2).is_none_or(|z| z.is_empty()) { None } else { constant(2)? };
        Some((node, inputs.get(0)?, constant(1)??, zero))
    };
    let (_, _, a_scale, a_zero) = dequantized(a)?;
    let (b_node, weight, b_scale, b_zero) = dequantized(b)?;
    let Some(Value::Tensor(weight)) = known.get(&weight) else { return None };
    Some((
        DequantizedA { scale: a_scale, zero: a_zero? },
        DequantizedB { weight, scale: b_scale, zero: b_zero, axis: int(b_node, "axis").unwrap_or(1) },
    ))
}

impl Plan<'_> {
    /// Makes each main-graph Transpose, Slice and Expand whose result only main-graph
    /// view-reading kernels read (no graph output, no control flow, call or subgraph) a
    /// strided view of its input ([`crate::view`]): a transpose feeding a MatMul is read
    /// through the GEMM's strides instead of copied.
    ///
    /// Not inside subgraphs, and not for values a subgraph reads: a loop body's node whose
    /// inputs do not change is made once and held for every step (`run::repeated`), and
    /// products read a held row-major copy faster, step after step, than a view (a real
    /// PaddleOCR table model: 83 ms with copies, 121 with views read in its loop).
    fn make_views(&mut self) {
        let model = self.model;
        let main = &model.graphs[self.main];
        let op_of = |n: NodeId| {
            let node = &model.nodes[n];
            match node.schema_domain() {
                Some("") => node.op_type.as_ref().and_then(Str::as_str).unwrap_or(""),
                _ => "",
            }
        };
        // Readers are main-graph nodes: a node holding subgraphs counts as reading what they
        // read, and, being control flow, reads no views.
        let mut readers: HashMap<ValueId, Vec<NodeId>> = HashMap::new();
        for &n in &main.nodes {
            let mut read = Vec::new();
            uses_of(model, &self.numbers, n, &mut read);
            for v in read {
                readers.entry(v).or_default().push(n);
            }
        }
        let kept: HashSet<ValueId> = self.numbers.graph_outputs(self.main, main).iter().collect();
        let reads_views = |n: NodeId| {
            matches!(self.steps.get(n), Some(Step::Kernel(_))) && crate::registry::reads_views("", op_of(n))
        };
        let mut views = Vec::new();
        for &n in &main.nodes {
            let Some(kernel) = crate::kernels::shape::view_kernel(op_of(n)) else { continue };
            if !matches!(self.steps.get(n), Some(Step::Kernel(_))) {
                continue;
            }
            let only_views_read = self
                .numbers
                .node_outputs(n, &model.nodes[n])
                .iter()
                .all(|v| !kept.contains(&v) && readers.get(&v).is_some_and(|r| r.iter().all(|&m| reads_views(m))));
            if only_views_read {
                views.push((n, kernel));
            }
        }
        for &(n, kernel) in &views {
            self.steps.insert(n, Step::Kernel(Dispatch::only(kernel, crate::registry::reads_views("", op_of(n)))));
        }
        self.views = views.into_iter().map(|(n, _)| n).collect();
    }
}

/// Whether an initializer listed among the graph's inputs may be given a value in its place:
/// from IR version 4 on. Before it every initializer had to be listed as an input, and
/// onnxruntime takes them as constants.
pub fn initializers_are_inputs(model: &Model) -> bool {
    model.ir_version.is_none_or(|v| v >= 4)
}

/// The steps found so far, and what cannot run.
struct Planner<'m> {
    model: &'m Model,
    opset: i64,
    options: &'m PlanOptions,
    steps: ArenaMap<NodeId, Step>,
    constant_nodes: Vec<Vec<Value>>,
    missing: Vec<Unsupported>,
    bodies: Vec<BodyPlan>,
    /// Each body planned, by (domain, operator, body version): nodes of one operator share it.
    body_index: HashMap<(String, String, i64), usize>,
    /// The operators whose bodies are being planned around this one: a body that needs
    /// itself is not expanded again.
    expanding: Vec<(String, String)>,
}

impl<'m> Planner<'m> {
    fn new(model: &'m Model, opset: i64, options: &'m PlanOptions, expanding: Vec<(String, String)>) -> Planner<'m> {
        Planner {
            model,
            opset,
            options,
            steps: ArenaMap::default(),
            constant_nodes: Vec::new(),
            missing: Vec::new(),
            bodies: Vec::new(),
            body_index: HashMap::new(),
            expanding,
        }
    }

    /// Plans the bodies of the functions called, and of those they call, with their
    /// subgraphs.
    fn plan_functions(&mut self, mut called: Vec<FunctionId>) {
        let model = self.model;
        let mut planned: HashSet<FunctionId> = HashSet::new();
        while let Some(f) = called.pop() {
            if !planned.insert(f) {
                continue;
            }
            // In body order (unsupported nodes are listed in model order), subgraphs after.
            let mut nodes = model.function_store[f].nodes.clone();
            let mut next = 0;
            while let Some(&n) = nodes.get(next) {
                next += 1;
                called.extend(self.plan(n));
                nodes.extend(subgraph_nodes(model, &model.nodes[n]));
            }
        }
    }

    /// Plans node `n`; returns the function it calls, if it calls one.
    fn plan(&mut self, n: NodeId) -> Option<FunctionId> {
        let (model, opset) = (self.model, self.opset);
        let node = &model.nodes[n];
        let step = match step_of(model, node) {
            Ok(Step::Kernel(kernel)) if self.options.expand_function_bodies => match self.body_step(node) {
                Ok(Some(step)) => Ok(step),
                _ => Ok(Step::Kernel(kernel)),
            },
            Err(why) => match self.body_step(node) {
                Ok(Some(step)) => Ok(step),
                Ok(None) => Err(why),
                Err(body_why) => Err(body_why),
            },
            found => found,
        };
        match step {
            // A `Constant` whose value is an attribute reference (in a function body) is
            // made at each call, from the call's attribute.
            Ok(Step::Kernel(kernel))
                if node.op_type.as_ref().is_some_and(|o| o.as_bytes() == b"Constant")
                    && node.attributes.iter().all(|a| a.ref_attr_name.is_none()) =>
            {
                let limits = crate::Limits::default();
                let budget = crate::memory::Budget::starting_now(limits.max_memory);
                let ctx = crate::kernels::Ctx { model, node, opset, limits: &limits, budget: &budget, prepared: None };
                match crate::invoke::call(kernel, &ctx, &[]) {
                    Ok(values) => {
                        self.steps.insert(n, Step::Constant(self.constant_nodes.len()));
                        self.constant_nodes.push(values);
                    }
                    // Reported when the node runs, naming it.
                    Err(_) => {
                        self.steps.insert(n, Step::Kernel(kernel));
                    }
                }
                None
            }
            Ok(step) => {
                self.steps.insert(n, step);
                match step {
                    Step::Call(f) => Some(f),
                    _ => None,
                }
            }
            Err(why) => {
                let name = node.name.as_ref().map(ToString::to_string).unwrap_or_default();
                match self.missing.iter_mut().find(|u| u.op == why.op && u.reason == why.reason) {
                    Some(u) => u.nodes.push(name),
                    None => self.missing.push(Unsupported { nodes: vec![name], ..why }),
                }
                None
            }
        }
    }

    /// The step that runs `node` through its schema's function body: `None` when its
    /// schema has no body for the imported version (or the body would expand itself), an
    /// error naming what the body needs when the body cannot run either.
    fn body_step(&mut self, node: &Node) -> Result<Option<Step>, Unsupported> {
        let Some(domain) = node.schema_domain() else { return Ok(None) };
        let op = node.op_type.as_ref().and_then(Str::as_str).unwrap_or("");
        let version = self.model.opset_version(domain).unwrap_or(1);
        let Some(schema) = onnx_core::schema::registry().lookup(domain, op, version) else { return Ok(None) };
        let Some(&(body_version, _)) = schema.function_body_at(version) else { return Ok(None) };
        let key = (domain.to_owned(), op.to_owned(), body_version);
        if let Some(&i) = self.body_index.get(&key) {
            return Ok(Some(Step::Body(i)));
        }
        if self.expanding.contains(&(key.0.clone(), key.1.clone())) {
            return Ok(None);
        }
        let Some(body) = onnx_core::infer::schema_function_body(schema, version) else { return Ok(None) };
        let mut expanding = self.expanding.clone();
        expanding.push((key.0.clone(), key.1.clone()));
        let plan = plan_body(&body, self.options, expanding).map_err(|missing| {
            let needs: Vec<String> = missing.iter().map(|u| u.op.clone()).collect();
            let shown = if domain.is_empty() { op.to_owned() } else { format!("{domain}::{op}") };
            Unsupported {
                op: shown,
                reason: format!("no kernel yet, and its function body needs {}", needs.join(", ")),
                nodes: Vec::new(),
            }
        })?;
        self.bodies.push(BodyPlan { body, plan });
        self.body_index.insert(key, self.bodies.len() - 1);
        Ok(Some(Step::Body(self.bodies.len() - 1)))
    }
}

/// A plan of a schema function body: every node of its function (and of what it calls),
/// or what cannot run there.
fn plan_body(
    body: &onnx_core::infer::SchemaBody,
    options: &PlanOptions,
    expanding: Vec<(String, String)>,
) -> Result<Plan<'static>, Vec<Unsupported>> {
    let model: &'static Model = body.model;
    let function = &model.function_store[body.function];
    // The body's own import of the default domain, which its nodes are written against.
    let opset = function
        .opset_import
        .iter()
        .find(|o| o.domain.as_ref().is_none_or(|d| d.is_empty()))
        .and_then(|o| o.version)
        .or_else(|| model.opset_version(""))
        .unwrap_or(1);
    let mut planner = Planner::new(model, opset, options, expanding);
    planner.plan_functions(vec![body.function]);
    let Planner { steps, constant_nodes, missing, bodies, .. } = planner;
    if !missing.is_empty() {
        return Err(missing);
    }
    Ok(Plan {
        model,
        // Never read: a body plan is entered through its function, not a graph.
        main: GraphId::from_raw(la_arena::RawIdx::from(0u32)),
        numbers: resolve_without_tables(model).numbers,
        steps,
        constants: Vec::new(),
        last_uses: Vec::new(),
        opset,
        constant_nodes,
        bodies,
        views: Vec::new(),
        prepared: ArenaMap::default(),
    })
}

/// The nodes of the subgraphs `node` holds (If branches, Loop bodies).
fn subgraph_nodes(model: &Model, node: &Node) -> Vec<NodeId> {
    let mut nodes = Vec::new();
    for a in &node.attributes {
        match a.value() {
            Some(AttributeValue::Graph(g)) => nodes.extend(&model.graphs[g].nodes),
            Some(AttributeValue::Graphs(gs)) => gs.iter().for_each(|&g| nodes.extend(&model.graphs[g].nodes)),
            _ => {}
        }
    }
    nodes
}

/// The step of `node`, or why there is none (its `nodes` left empty): control flow, the
/// kernel registered for its operator at the imported version ([`crate::registry`]), or a
/// call of the model-local function it names.
fn step_of(model: &Model, node: &Node) -> Result<Step, Unsupported> {
    let op = node.op_type.as_ref().and_then(Str::as_str).unwrap_or("");
    let describe = |why: &str| {
        let domain = node.domain.as_ref().map(ToString::to_string).unwrap_or_default();
        let op = if domain.is_empty() { op.to_owned() } else { format!("{domain}::{op}") };
        Unsupported { op, reason: why.to_owned(), nodes: Vec::new() }
    };
    let Some(domain) = node.schema_domain() else {
        return model.local_function(node).map(Step::Call).ok_or_else(|| describe("no kernel for this domain yet"));
    };
    if is_control(domain, op) {
        return Ok(Step::Control);
    }
    let opset = model.opset_version(domain).unwrap_or(1);
    if let Some(kernels) = dispatch(domain, op, opset) {
        return Ok(Step::Kernel(kernels));
    }
    if let Some(f) = model.local_function(node) {
        return Ok(Step::Call(f));
    }
    let known_domain = domain.is_empty() || crate::kernels::OTHER_DOMAINS.iter().any(|(d, _)| *d == domain);
    Err(describe(if known_domain { "no kernel yet" } else { "no kernel for this domain yet" }))
}

/// For each main-graph node, the values used for the last time there: its inputs, and every
/// value its subgraphs read (they run inside the node). Graph outputs are kept.
fn last_uses(model: &Model, numbers: &ValueNumbers, main: GraphId) -> Vec<Vec<ValueId>> {
    let graph = &model.graphs[main];
    let mut last: HashMap<ValueId, usize> = HashMap::new();
    for (i, &n) in graph.nodes.iter().enumerate() {
        let mut used = Vec::new();
        uses_of(model, numbers, n, &mut used);
        for v in used {
            last.insert(v, i);
        }
    }
    for v in numbers.graph_outputs(main, graph).iter() {
        last.remove(&v);
    }
    let mut by_node = vec![Vec::new(); graph.nodes.len()];
    for (v, i) in last {
        by_node[i].push(v);
    }
    by_node
}

/// The values node `n` reads, directly or through its subgraphs.
fn uses_of(model: &Model, numbers: &ValueNumbers, n: NodeId, out: &mut Vec<ValueId>) {
    let node = &model.nodes[n];
    out.extend(numbers.node_inputs(n, node).iter().filter(|&v| v != onnx_core::resolve::NO_VALUE));
    for a in &node.attributes {
        let graphs: Vec<GraphId> = match a.value() {
            Some(AttributeValue::Graph(g)) => vec![g],
            Some(AttributeValue::Graphs(gs)) => gs.to_vec(),
            _ => continue,
        };
        for g in graphs {
            let sub = &model.graphs[g];
            out.extend(numbers.graph_outputs(g, sub).iter());
            for &m in &sub.nodes {
                uses_of(model, numbers, m, out);
            }
        }
    }
}
