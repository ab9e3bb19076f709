//! Work that must not hold up a frame: checking and inferring the model, running it,
//! statistics of a tensor, and search. Each job runs on a thread of its own and reports on
//! the one channel the event loop listens to; the UI thread only reads keys and draws.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use onnx_core::check::CheckOptions;
use onnx_core::diagnostic::{Anchor, Diagnostic};
use onnx_core::infer::ModelTypes;
use onnx_core::ir::{Model, NodeId};
use onnx_core::proto_path::ProtoPaths;
use onnx_eval::{Plan, RunOptions, Tensor, Value};

use crate::inputs::{Source, make};
use crate::load::TextSource;
use crate::search::{Haystack, Hit};
use crate::stats::{self, Stats};

/// What a job sends back.
#[derive(Debug)]
pub enum Report {
    Checked(Analysis),
    Ran(Result<Box<RunOutcome>, RunError>),
    Stats {
        key: String,
        stats: Result<Stats, String>,
    },
    Found {
        generation: u64,
        hits: Vec<Hit>,
    },
    SearchReady,
    /// A job ended by a panic (a bug): what it was doing and the panic's message.
    Failed {
        job: &'static str,
        message: String,
    },
}

/// What the checker and inference found.
#[derive(Debug, Default)]
pub struct Analysis {
    pub diagnostics: Vec<Finding>,
    pub types: std::sync::Arc<ModelTypes>,
    pub took: Duration,
}

/// A diagnostic with where it is, said for people, and the node it concerns (if any).
#[derive(Debug, Clone)]
pub struct Finding {
    pub diagnostic: Diagnostic,
    pub place: String,
    pub node: Option<NodeId>,
}

/// Checks a model as `onnx check --full` does; a text model through the text pipeline, so
/// that its findings carry line and column.
pub fn analyse(model: &Model, text: Option<&TextSource>, model_dir: Option<PathBuf>) -> Analysis {
    let started = Instant::now();
    let options = CheckOptions { full_check: true, model_dir, ..CheckOptions::default() };
    let (diagnostics, types) = match text {
        Some(text) => {
            let checked = onnx_core::pipeline::check_text(&text.source, &options);
            let map = &checked.analysis.source_map;
            let lines = onnx_core::source_map::LineStarts::new(&text.source);
            let placed = checked
                .diagnostics
                .into_iter()
                .map(|d| {
                    let span = onnx_core::analysis::span_of(d.anchor);
                    let (line, col) = lines.line_column(&text.source, span.start as usize);
                    // Where it is, else the node of the value it is about, else the first
                    // related place that is in a node ("inferred here").
                    let node = innermost_node(map, span.start)
                        .or_else(|| value_node(&checked.analysis.model, d.anchor))
                        .or_else(|| {
                            let related = d.related.iter().map(|(a, _)| onnx_core::analysis::span_of(*a).start);
                            related.into_iter().find_map(|at| innermost_node(map, at))
                        });
                    Finding { diagnostic: d, place: format!("line {line}:{col}"), node }
                })
                .collect();
            (placed, checked.types)
        }
        None => {
            let checked = onnx_core::pipeline::check_model(model, &options);
            let paths = ProtoPaths::new(model);
            let placed = checked
                .diagnostics
                .into_iter()
                .map(|d| {
                    let node = anchored_node(d.anchor)
                        .or_else(|| value_node(model, d.anchor))
                        .or_else(|| d.related.iter().find_map(|(a, _)| anchored_node(*a)));
                    Finding { place: paths.path(d.anchor), node, diagnostic: d }
                })
                .collect();
            (placed, std::sync::Arc::new(checked.types.unwrap_or_default()))
        }
    };
    Analysis { diagnostics, types, took: started.elapsed() }
}

fn anchored_node(anchor: Anchor) -> Option<NodeId> {
    match anchor {
        Anchor::Node(n) | Anchor::NodeInput(n, _) | Anchor::NodeOutput(n, _) | Anchor::Attribute(n, _) => Some(n),
        _ => None,
    }
}

/// For a finding about a value (a graph output or input, a value_info entry, an
/// initializer): the node that makes it, or else the first that reads it, so that Enter on
/// a type conflict lands where the value is computed.
fn value_node(model: &Model, anchor: Anchor) -> Option<NodeId> {
    let (g, info) = match anchor {
        Anchor::GraphOutput(g, i) => (g, model.graphs[g].outputs.get(i)?.name.as_ref()),
        Anchor::GraphInput(g, i) => (g, model.graphs[g].inputs.get(i)?.name.as_ref()),
        Anchor::ValueInfo(g, i) => (g, model.graphs[g].value_info.get(i)?.name.as_ref()),
        Anchor::Initializer(g, i) => (g, model.tensors[*model.graphs[g].initializers.get(i)?].name.as_ref()),
        _ => return None,
    };
    let name = info?.as_bytes();
    let nodes = &model.graphs[g].nodes;
    let made = nodes.iter().find(|&&n| model.nodes[n].outputs.iter().any(|o| o.as_bytes() == name));
    let read = || nodes.iter().find(|&&n| model.nodes[n].inputs.iter().any(|i| i.as_bytes() == name));
    made.or_else(read).copied()
}

/// The node whose text holds `offset`, the innermost when subgraphs nest.
fn innermost_node(map: &onnx_core::source_map::SourceMap, offset: u32) -> Option<NodeId> {
    map.nodes
        .iter()
        .filter(|(_, s)| s.node.start <= offset && offset < s.node.end.max(s.node.start + 1))
        .min_by_key(|(_, s)| s.node.end - s.node.start)
        .map(|(n, _)| n)
}

/// How a run gets its inputs.
#[derive(Clone, Debug)]
pub struct RunRequest {
    /// A test-data directory (`input_*.pb`, `output_*.pb`).
    pub test_data: Option<PathBuf>,
    /// Where inputs come from, by name, as the run dialog chose: a listed input takes its
    /// source even where the test data has a value for it (its expected outputs are then
    /// not compared); an input not listed comes from the test data, or is `Random { seed: 0 }`.
    pub sources: BTreeMap<String, Source>,
    /// Numbers for symbolic dimensions.
    pub dims: BTreeMap<String, usize>,
    pub cancel: Arc<AtomicBool>,
    pub progress: Arc<AtomicUsize>,
    /// The most bytes the run's values may hold at once ([`onnx_eval::Limits::max_memory`]).
    pub max_memory: usize,
    /// A directory of intermediate values (`onnx run --all-values`) to compare the run's
    /// with, finding the first node that differs (`:compare`).
    pub compare_values: Option<PathBuf>,
}

/// What a finished run left.
#[derive(Debug, Default)]
pub struct RunOutcome {
    pub inputs: Vec<(String, Value)>,
    pub outputs: Vec<(String, Value)>,
    /// Every value the main graph computed, by name.
    pub values: HashMap<String, Value>,
    pub timings: Vec<(NodeId, Duration)>,
    /// How many runs the times are the median of.
    pub runs: usize,
    /// The time of each node inside a subgraph (If branches, Loop and Scan bodies), summed
    /// over its runs; already part of the time of the node holding the subgraph.
    pub nested_timings: HashMap<NodeId, Duration>,
    /// What each node inside a subgraph last produced, by node and output position.
    pub nested_values: HashMap<(NodeId, usize), Value>,
    pub total: Duration,
    /// Nodes that wrote NaN or infinity into an output.
    pub nonfinite: HashSet<NodeId>,
    /// One per expected output.
    pub comparison: Vec<OutputCheck>,
    /// Statistics of each output, in order (an error for non-numeric ones).
    pub output_stats: Vec<Result<Stats, String>>,
    /// Some values were not kept: their bytes would have passed [`KEPT_BYTES`].
    pub capture_full: bool,
    /// Why the expected outputs of the test data were not compared, when they were not.
    pub not_compared: Option<String>,
    /// With `compare_values`: where the run first differs from the directory's values, or
    /// why they could not be compared.
    pub divergence: Option<Result<onnx_eval::compare::Divergence, String>>,
}

/// How an output compares with the expected one.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputCheck {
    pub name: String,
    /// How it differs (count, first mismatch, largest errors); `None` when it matches.
    pub difference: Option<String>,
    /// The largest absolute error, for numeric outputs of the expected shape.
    pub largest_error: Option<f64>,
}

/// The most bytes of intermediate values a run keeps for the viewer.
pub const KEPT_BYTES: usize = 1 << 30;

impl RunOutcome {
    pub fn check(&self, name: &str) -> Option<&OutputCheck> {
        self.comparison.iter().find(|c| c.name == name)
    }

    /// The time of node `n`, in the main graph or inside a subgraph.
    pub fn time_of(&self, n: NodeId) -> Option<Duration> {
        let main = self.timings.iter().find(|(m, _)| *m == n).map(|(_, d)| *d);
        main.or_else(|| self.nested_timings.get(&n).copied())
    }
}

/// Runs the model's main graph with every value kept and every node timed.
/// Why a run gave no outcome: the user stopped it, or it failed (the message says where).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    Cancelled,
    Failed(String),
}

impl From<String> for RunError {
    fn from(message: String) -> RunError {
        RunError::Failed(message)
    }
}

pub fn run(model: &Model, model_dir: Option<PathBuf>, request: &RunRequest) -> Result<Box<RunOutcome>, RunError> {
    let prepared;
    let out_of_order =
        model.graphs.iter().any(|(g, _)| matches!(onnx_core::order::sorted_order(model, g), Ok(Some(_))));
    let model = if out_of_order || onnx_core::external::external_tensors(model).next().is_some() {
        let mut copy = model.clone();
        onnx_core::external::embed_all(&mut copy, model_dir).map_err(|e| format!("external data: {e}"))?;
        // Run in a topological order, as onnxruntime does (the check view says why).
        onnx_core::order::sort_nodes(&mut copy);
        prepared = copy;
        &prepared
    } else {
        model
    };
    let plan = Plan::new(model).map_err(|e| e.to_string())?;
    let (mut inputs, mut expected) = match &request.test_data {
        Some(dir) => crate::inputs::test_data(&plan, dir)?,
        None => (Vec::new(), Vec::new()),
    };
    // The dialog's choices win over the test data; the expected outputs are then of other
    // inputs, and comparing with them would report differences that mean nothing.
    let replaced: Vec<String> =
        inputs.iter().filter(|(name, _)| request.sources.contains_key(name)).map(|(name, _)| name.clone()).collect();
    let mut not_compared = None;
    if !replaced.is_empty() {
        inputs.retain(|(name, _)| !request.sources.contains_key(name));
        if !expected.is_empty() {
            expected.clear();
            let names: Vec<String> = replaced.iter().map(|n| format!("'{n}'")).collect();
            not_compared = Some(format!(
                "not compared with the test data's outputs: {} chosen in the run dialog",
                names.join(", ")
            ));
        }
    }
    let graph = &model.graphs[plan.main];
    for (name, _) in plan.inputs() {
        if inputs.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let ty = graph.inputs.iter().find(|v| v.name.as_ref().is_some_and(|n| n.to_string() == name));
        let ty = ty.and_then(|v| v.ty.as_ref()).ok_or_else(|| format!("input '{name}' declares no type"))?;
        let limit = onnx_eval::Limits::default().max_tensor_elements;
        let source = request.sources.get(&name).cloned().unwrap_or(Source::Random { seed: 0 });
        inputs.push((name.clone(), make(ty, &request.dims, &source, limit).map_err(|e| format!("{name}: {e}"))?));
    }
    let options = RunOptions {
        cancel: Some(Arc::clone(&request.cancel)),
        progress: Some(Arc::clone(&request.progress)),
        capture_all: true,
        capture_limit: Some(KEPT_BYTES),
        timing: true,
        limits: onnx_eval::Limits { max_memory: request.max_memory, ..Default::default() },
        ..RunOptions::default()
    };
    let started = Instant::now();
    let result = plan.run(inputs.clone(), &options).map_err(|e| match e {
        onnx_eval::EvalError::Cancelled => RunError::Cancelled,
        e => RunError::Failed(e.to_string()),
    })?;
    let divergence = request.compare_values.as_deref().map(|dir| {
        use onnx_eval::compare::{ATOL_DEFAULT, RTOL_DEFAULT, first_divergence};
        first_divergence(dir, &result.values, RTOL_DEFAULT, ATOL_DEFAULT)
    });
    let first = Timed { total: started.elapsed(), nodes: result.timings, nested: result.nested_timings, runs: 1 };
    // One run's times are noisy, and the first (which keeps every value) pays for caches and
    // page faults: the times shown are each node's median over a few more runs that keep
    // nothing, as the CLI's `--repeat` measures.
    let timed = timing_runs(&plan, &inputs, &options, first)?;
    let mut outcome = RunOutcome {
        total: timed.total,
        timings: timed.nodes,
        nested_timings: timed.nested.into_iter().collect(),
        runs: timed.runs,
        nested_values: result.nested_values.into_iter().collect(),
        capture_full: result.capture_full,
        not_compared,
        divergence,
        ..RunOutcome::default()
    };
    for c in result.values {
        if has_nonfinite(&c.value) {
            outcome.nonfinite.insert(c.node);
        }
        outcome.values.insert(c.name, c.value);
    }
    for (name, value) in &inputs {
        outcome.values.insert(name.clone(), value.clone());
    }
    for (name, want) in &expected {
        let got = result.outputs.iter().find(|(n, _)| n == name).map(|(_, v)| v);
        let check = match got {
            Some(got) => OutputCheck {
                name: name.clone(),
                difference: onnx_eval::compare::value_difference(got, want, 1e-3, 1e-5),
                largest_error: largest_error(got, want),
            },
            None => OutputCheck {
                name: name.clone(),
                difference: Some("the model has no output of this name".to_owned()),
                largest_error: None,
            },
        };
        outcome.comparison.push(check);
    }
    outcome.output_stats =
        result.outputs.iter().map(|(_, v)| v.tensor().map_err(String::from).and_then(stats::of)).collect();
    outcome.inputs = inputs;
    outcome.outputs = result.outputs;
    Ok(Box::new(outcome))
}

/// The times of one run, or the medians of several.
struct Timed {
    total: Duration,
    nodes: Vec<(NodeId, Duration)>,
    nested: Vec<(NodeId, Duration)>,
    runs: usize,
}

/// The most runs timed after the first, and the time they may take together.
const TIMING_RUNS: usize = 4;
const TIMING_BUDGET: Duration = Duration::from_secs(1);

/// Runs the model again (keeping no values) while the runs stay within [`TIMING_BUDGET`],
/// up to [`TIMING_RUNS`] times, and gives each node's median time over the timed runs: the
/// first run's when no other fits.
fn timing_runs(
    plan: &Plan<'_>,
    inputs: &[(String, Value)],
    options: &RunOptions,
    first: Timed,
) -> Result<Timed, RunError> {
    let mut runs = vec![first];
    let spent = |runs: &[Timed]| runs.iter().map(|r| r.total).sum::<Duration>();
    let quiet = RunOptions { capture_all: false, capture_limit: None, ..options.clone() };
    while runs.len() <= TIMING_RUNS && spent(&runs) + runs[runs.len() - 1].total <= TIMING_BUDGET {
        let started = Instant::now();
        let result = plan.run(inputs.to_vec(), &quiet).map_err(|e| match e {
            onnx_eval::EvalError::Cancelled => RunError::Cancelled,
            e => RunError::Failed(e.to_string()),
        })?;
        runs.push(Timed { total: started.elapsed(), nodes: result.timings, nested: result.nested_timings, runs: 1 });
    }
    // The first run warmed up: left out once another was timed.
    let timed = if runs.len() > 1 { &runs[1..] } else { &runs[..] };
    let median = |mut d: Vec<Duration>| {
        d.sort_unstable();
        d[d.len() / 2]
    };
    // Every run times the main graph's nodes in the same order; the nodes inside subgraphs
    // are matched by node.
    let nodes = (0..timed[0].nodes.len())
        .map(|i| {
            let n = timed[0].nodes[i].0;
            let times = timed.iter().filter_map(|r| r.nodes.get(i).filter(|(m, _)| *m == n).map(|(_, d)| *d));
            (n, median(times.collect()))
        })
        .collect();
    let mut nested: HashMap<NodeId, Vec<Duration>> = HashMap::new();
    for r in timed {
        for &(n, d) in &r.nested {
            nested.entry(n).or_default().push(d);
        }
    }
    Ok(Timed {
        total: median(timed.iter().map(|r| r.total).collect()),
        nodes,
        nested: nested.into_iter().map(|(n, d)| (n, median(d))).collect(),
        runs: timed.len(),
    })
}

/// The largest absolute difference between two numeric tensors of one shape.
fn largest_error(got: &Value, want: &Value) -> Option<f64> {
    let (g, w) = (got.tensor().ok()?, want.tensor().ok()?);
    if g.shape != w.shape {
        return None;
    }
    let errors = onnx_eval::compare::compare_floats(&g.to_f64s().ok()?, &w.to_f64s().ok()?, 1e-3, 1e-5);
    Some(errors.largest_absolute)
}

fn has_nonfinite(v: &Value) -> bool {
    let Ok(t) = v.tensor() else { return false };
    matches!(t.data_type().name(), "float" | "double" | "float16" | "bfloat16")
        && t.to_f64s().is_ok_and(|xs| xs.iter().any(|x| !x.is_finite()))
}

/// Starts a job on a thread of its own; its report goes to `to`.
/// A panic inside a job becomes a [`Report::Failed`], so the screen says what broke instead
/// of waiting for the job forever.
pub fn spawn(to: &Sender<Report>, what: &'static str, job: impl FnOnce() -> Report + Send + 'static) {
    let job_to = to.clone();
    let started = std::thread::Builder::new().name(format!("onnx-view {what}")).spawn(move || {
        let report = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            Report::Failed { job: what, message }
        });
        let _ = job_to.send(report);
    });
    if let Err(e) = started {
        // Without a thread the job cannot run; say so rather than wait for it forever.
        let _ = to.send(Report::Failed { job: what, message: format!("cannot start a thread: {e}") });
    }
}

/// A query for the search thread: its generation, its text, and what inference has found
/// by then (for `shape:`; `None` while checking).
#[derive(Debug)]
pub struct SearchQuery {
    pub generation: u64,
    pub query: String,
    pub types: Option<Arc<ModelTypes>>,
}

/// The search thread: builds the haystack, then answers the newest query each time
/// (queries typed while one is matched are skipped to the last).
pub fn spawn_search(model: Arc<Model>, index: Arc<crate::index::Index>, to: &Sender<Report>) -> Sender<SearchQuery> {
    let (queries, incoming) = crossbeam_channel::unbounded::<SearchQuery>();
    let to = to.clone();
    let _ = std::thread::Builder::new().name("onnx-view search".into()).spawn(move || {
        let mut hay = Haystack::new(&model, &index);
        let _ = to.send(Report::SearchReady);
        while let Ok(mut query) = incoming.recv() {
            while let Ok(newer) = incoming.try_recv() {
                query = newer;
            }
            let hits = hay.find(&model, query.types.as_ref(), &query.query);
            if to.send(Report::Found { generation: query.generation, hits }).is_err() {
                break;
            }
        }
    });
    queries
}

/// Statistics of a tensor as a report.
pub fn stats_job(key: String, tensor: Tensor) -> impl FnOnce() -> Report + Send + 'static {
    move || Report::Stats { key, stats: stats::of(&tensor) }
}
