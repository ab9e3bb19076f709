//! `onnx run MODEL [INPUT...] [--test-data DIR] [--output-dir DIR] [--compare DIR]
//! [--repeat N] [--all-values] [--profile] [--json]`: runs a model with the evaluator.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use onnx_eval::{Plan, RunOptions, RunResult, Tensor, Value};

use crate::failure::Failure;
use crate::io::{Input, ReadOptions, read_model};

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  onnx run model.onnx --test-data test_data_set_0 --compare test_data_set_0
  onnx run model.onnx x=input_0.pb --output-dir out
  onnx run model.onnx input_0.pb --repeat 10 --profile

Exit codes: 0 the run succeeded (and matched, with --compare); 1 the model cannot be run,
the run failed, or outputs differ; 2 usage or I/O error.")]
pub struct Args {
    /// The model (`.onnx`, or text).
    model: String,
    /// Input values: `PATH.pb` (a TensorProto, matched to a graph input by the name inside,
    /// else by position), `PATH.npy` (by position) or `NAME=PATH`.
    inputs: Vec<String>,
    /// Read `DIR/input_*.pb` in numeric order (onnx's backend-test layout).
    #[arg(long, value_name = "DIR")]
    test_data: Option<PathBuf>,
    /// Write each output as `DIR/output_K.pb`.
    #[arg(long, value_name = "DIR")]
    output_dir: Option<PathBuf>,
    /// Compare the outputs with `DIR/output_*.pb` (floats within `atol + rtol·|expected|`,
    /// everything else exactly); exit 1 on a mismatch.
    #[arg(long, value_name = "DIR")]
    compare: Option<PathBuf>,
    /// The relative tolerance of --compare and --compare-values. The default is
    /// polygraphy's; onnx's backend tests use `--rtol 1e-3 --atol 1e-7`.
    #[arg(long, default_value_t = onnx_eval::compare::RTOL_DEFAULT, value_name = "RTOL")]
    rtol: f64,
    /// The absolute tolerance of --compare and --compare-values (polygraphy's default):
    /// values near zero agree within it whatever their relative difference.
    #[arg(long, default_value_t = onnx_eval::compare::ATOL_DEFAULT, value_name = "ATOL")]
    atol: f64,
    /// Run this many times after one warm-up run and report the time per run.
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// With --output-dir: also write every intermediate value of the main graph.
    #[arg(long)]
    all_values: bool,
    /// Report the first node, in execution order, whose output holds NaN or infinity while
    /// its inputs hold none (exit 1 if there is one).
    #[arg(long)]
    find_nonfinite: bool,
    /// Compare every intermediate value that has a file in DIR (as `--all-values` writes
    /// them: `values.tsv` maps files to value names) and report the first node whose output
    /// differs beyond tolerance (exit 1 if one does).
    #[arg(long, value_name = "DIR")]
    compare_values: Option<PathBuf>,
    /// Also show this value of the main graph (a node output, by name; repeatable): its
    /// type, statistics and first elements, and, with --output-dir, its file.
    #[arg(long = "value", value_name = "NAME")]
    values: Vec<String>,
    /// Print each operator's share of the time (and the rate of matrix products in GFLOP/s).
    #[arg(long)]
    profile: bool,
    /// Run every operator whose schema defines it by a function body (Celu, HardSwish,
    /// MeanVarianceNormalization, …) through that body instead of its kernel: onnx's own
    /// definition, to check a result against. Operators without a kernel always run so.
    #[arg(long)]
    expand_functions: bool,
    /// Threads for the run's matrix products (and the rest of the process); default: every
    /// core (the environment variable ONNX_THREADS says the same for every command).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// The most memory the run's values may hold at once, all together (`512M`, `8G`);
    /// a run that would need more ends with an error naming the node. Default: half of the
    /// memory this process may use (the machine's, or its control group's or ulimit's).
    #[arg(long, value_name = "SIZE", value_parser = onnx_eval::memory::parse_size)]
    max_memory: Option<usize>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<(), Failure> {
    if let Some(n) = args.threads {
        if n == 0 {
            return Err(Failure::Usage("--threads needs at least 1".to_owned()));
        }
        onnx_threads::set_cores(n);
    }
    let input = Input::parse(&args.model);
    if args.json {
        crate::json::begin("run");
        crate::json::set("file", input.label());
    }
    let mut model = read_model(&input, None, ReadOptions::default())?;
    let label = input.label();
    onnx_core::external::embed_all(&mut model, input.model_dir())
        .map_err(|e| Failure::Invalid(format!("{label}: external data: {e}")))?;
    // onnxruntime runs a graph whose nodes are out of order (its float16 converter writes
    // them), sorting them at load: so do we, saying so once.
    let reordered = onnx_core::order::sort_nodes(&mut model);
    if reordered.sorted > 0 {
        eprintln!(
            "warning: {label}: the nodes of {} graph(s) are not in a topological order (onnx refuses the model; \
             onnxruntime sorts them): running them sorted",
            reordered.sorted
        );
    }
    let plan_options = onnx_eval::PlanOptions { expand_function_bodies: args.expand_functions, ..Default::default() };
    let plan = Plan::with_options(&model, &plan_options).map_err(|e| Failure::Invalid(format!("{label}: {e}")))?;
    let values = read_inputs(&plan, args.test_data.as_deref(), &args.inputs)?;
    let capture = args.all_values || args.find_nonfinite || args.compare_values.is_some();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    check_value_names(&plan, &args.values)?;
    let options = RunOptions {
        capture_all: capture,
        capture_names: args.values.clone(),
        timing: args.profile,
        progress: Some(std::sync::Arc::clone(&done)),
        limits: onnx_eval::Limits {
            max_memory: args.max_memory.unwrap_or_else(onnx_eval::memory::default_budget),
            ..Default::default()
        },
        ..RunOptions::default()
    };
    let total = model.main_graph().map_or(0, |g| g.nodes.len());
    let run_once = || {
        plan.run(values.clone(), &options).map_err(|e| {
            let hint = if e.to_string().contains("memory budget") && args.max_memory.is_none() {
                " (--max-memory sets another)"
            } else {
                ""
            };
            Failure::Invalid(format!("{label}: {e}{hint}"))
        })
    };
    let (result, times) = {
        // Drawn only on a terminal, once a run has lasted a moment, never with --json; gone
        // before the report.
        let _bar = (!args.json).then(|| crate::progress::nodes(total, std::sync::Arc::clone(&done)));
        let mut result = run_once()?;
        let mut times = Vec::new();
        if args.repeat > 1 {
            for _ in 0..args.repeat {
                let started = Instant::now();
                result = run_once()?;
                times.push(started.elapsed());
            }
        }
        (result, times)
    };
    if let Some(dir) = &args.output_dir {
        write_values(dir, &result, args.all_values || !args.values.is_empty())?;
    }
    let mismatches = match &args.compare {
        Some(dir) => compare(dir, &plan, &result, (args.rtol, args.atol))?,
        None => Vec::new(),
    };
    report(&args, &plan, &result, &times, &mismatches);
    if args.find_nonfinite
        && let Some(found) = first_nonfinite(&plan, &values, &result)
    {
        say_found("first_nonfinite", &found);
        return Err(Failure::Invalid("a node produces non-finite values from finite inputs".into()));
    }
    if let Some(dir) = &args.compare_values
        && let Some(found) = first_divergence(dir, &plan, &result, (args.rtol, args.atol))?
    {
        say_found("first_divergence", &found);
        return Err(Failure::Invalid(format!("an intermediate value differs from {}", dir.display())));
    }
    if !mismatches.is_empty() {
        return Err(Failure::Invalid(format!(
            "{} output(s) differ from {}",
            mismatches.len(),
            display(args.compare.as_deref())
        )));
    }
    Ok(())
}

fn display(p: Option<&Path>) -> String {
    p.map(|p| p.display().to_string()).unwrap_or_default()
}

/// `DIR/PREFIX_K.pb` in numeric order of K.
fn numbered(dir: &Path, prefix: &str) -> Result<Vec<PathBuf>, Failure> {
    onnx_eval::stored::numbered(dir, prefix).map_err(|e| Failure::Usage(format!("{}: cannot read: {e}", dir.display())))
}

/// The inputs from the command line and `--test-data`, matched to the model's inputs; a
/// missing one is refused with what the model expects.
/// The input values `--test-data DIR` and the INPUT arguments name (see [`Args::inputs`]),
/// every input the model needs given.
pub(crate) fn read_inputs(
    plan: &Plan<'_>,
    test_data: Option<&Path>,
    inputs: &[String],
) -> Result<Vec<(String, Value)>, Failure> {
    let expected = plan.inputs();
    let mut paths: Vec<(Option<String>, PathBuf)> = Vec::new();
    if let Some(dir) = test_data {
        paths.extend(numbered(dir, "input_")?.into_iter().map(|p| (None, p)));
    }
    for arg in inputs {
        match arg.split_once('=') {
            Some((name, path)) if !Path::new(arg).exists() => paths.push((Some(name.to_owned()), PathBuf::from(path))),
            _ => paths.push((None, PathBuf::from(arg))),
        }
    }
    let values = onnx_eval::stored::read_inputs(plan, paths).map_err(Failure::Invalid)?;
    let missing: Vec<String> = expected
        .iter()
        .filter(|(n, _)| !values.iter().any(|(v, _)| v == n))
        .map(|(n, ty)| format!("  {n}: {ty}"))
        .collect();
    if !missing.is_empty() {
        return Err(Failure::Usage(format!(
            "the model needs these inputs, which were not given:\n{}",
            missing.join("\n")
        )));
    }
    Ok(values)
}

fn write_values(dir: &Path, result: &RunResult, all: bool) -> Result<(), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| Failure::Usage(format!("{}: cannot create: {e}", dir.display())))?;
    let mut files: Vec<(String, &str, &Value)> =
        result.outputs.iter().enumerate().map(|(k, (name, v))| (format!("output_{k}.pb"), name.as_str(), v)).collect();
    if all {
        // Value names are not safe file names: numbered files, and an index to find them.
        let mut index = String::new();
        for (k, c) in result.values.iter().enumerate() {
            files.push((format!("value_{k}.pb"), c.name.as_str(), &c.value));
            index.push_str(&format!("value_{k}.pb\t{}\n", c.name));
        }
        write(&dir.join("values.tsv"), index.as_bytes())?;
    }
    for (file, name, value) in files {
        write(&dir.join(&file), &onnx_eval::stored::encode(value, name))?;
    }
    Ok(())
}

/// Writes a file whole or not at all (a temporary file renamed into place).
fn write(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    onnx_core::write_atomically(path, |w| w.write_all(bytes)).map_err(|e| Failure::Usage(e.to_string()))
}

/// Per output: the largest absolute and relative errors, and whether it is within tolerance.
struct Mismatch {
    name: String,
    message: String,
}

fn compare(
    dir: &Path,
    plan: &Plan<'_>,
    result: &RunResult,
    (rtol, atol): (f64, f64),
) -> Result<Vec<Mismatch>, Failure> {
    let files = numbered(dir, "output_")?;
    if files.len() != result.outputs.len() {
        return Err(Failure::Usage(format!(
            "{} holds {} outputs, the model has {}",
            dir.display(),
            files.len(),
            result.outputs.len()
        )));
    }
    let graph = &plan.model.graphs[plan.main];
    let mut mismatches = Vec::new();
    for (k, (path, (name, got))) in files.iter().zip(&result.outputs).enumerate() {
        let declared = graph.outputs.get(k).and_then(|v| v.ty.as_ref());
        let (_, want) = onnx_eval::stored::read_value(path, declared).map_err(Failure::Invalid)?;
        if let Some(message) = onnx_eval::compare::value_difference(got, &want, rtol, atol) {
            mismatches.push(Mismatch { name: name.clone(), message });
        }
    }
    Ok(mismatches)
}

/// A finding of `--find-nonfinite` or `--compare-values`: a line on stdout, or a field of the
/// JSON object.
fn say_found(key: &str, found: &str) {
    if crate::json::active() {
        crate::json::set(key, found);
    } else {
        outln!("{found}");
    }
}

fn report(args: &Args, plan: &Plan<'_>, result: &RunResult, times: &[Duration], mismatches: &[Mismatch]) {
    let mut sorted: Vec<f64> = times.iter().map(|t| t.as_secs_f64() * 1e3).collect();
    sorted.sort_by(f64::total_cmp);
    let (min, median) = (sorted.first().copied(), sorted.get(sorted.len() / 2).copied());
    if args.json {
        let outputs: Vec<serde_json::Value> = result
            .outputs
            .iter()
            .map(|(name, v)| {
                let ty = match v {
                    Value::Tensor(t) => {
                        let (elem_type, text) = (t.data_type().name(), v.describe());
                        serde_json::json!({ "kind": "tensor", "elem_type": elem_type, "shape": t.shape, "text": text })
                    }
                    Value::Sequence(items) => serde_json::json!({ "kind": "sequence", "length": items.len() }),
                    Value::Maps(maps) => {
                        serde_json::json!({ "kind": "sequence", "length": maps.len(), "text": v.describe() })
                    }
                    Value::Map(m) => serde_json::json!({ "kind": "map", "length": m.len(), "text": v.describe() }),
                    Value::Optional(inner) => {
                        serde_json::json!({ "kind": "optional", "present": inner.is_some(), "text": v.describe() })
                    }
                };
                serde_json::json!({ "name": name, "type": ty })
            })
            .collect();
        crate::json::set("outputs", outputs);
        if !times.is_empty() {
            crate::json::set("timing", serde_json::json!({ "runs": times.len(), "min_ms": min, "median_ms": median }));
        }
        if args.compare.is_some() {
            let list: Vec<_> =
                mismatches.iter().map(|m| serde_json::json!({ "name": m.name, "message": m.message })).collect();
            crate::json::set("mismatches", list);
        }
        return;
    }
    for (name, v) in &result.outputs {
        outln!("{name}: {}", v.describe());
    }
    for name in &args.values {
        if let Some(c) = result.values.iter().find(|c| c.name == *name) {
            outln!("{name}: {}", summary(&c.value));
        }
    }
    if let (Some(min), Some(median)) = (min, median) {
        outln!("time per run: min {min:.3} ms, median {median:.3} ms ({} runs)", times.len());
    }
    if args.profile {
        profile(plan, result);
    }
    if let Some(dir) = &args.compare {
        if mismatches.is_empty() {
            outln!("all {} outputs match {}", result.outputs.len(), dir.display());
        }
        for m in mismatches {
            outln!("{}: {}", m.name, m.message);
        }
    }
}

/// Every name given to `--value` must be a value some node of the main graph computes.
fn check_value_names(plan: &Plan<'_>, names: &[String]) -> Result<(), Failure> {
    let graph = &plan.model.graphs[plan.main];
    let computed = |name: &String| {
        graph.nodes.iter().any(|&n| plan.model.nodes[n].outputs.iter().any(|o| o.as_bytes() == name.as_bytes()))
    };
    match names.iter().find(|n| !computed(n)) {
        Some(unknown) => {
            Err(Failure::Usage(format!("--value {unknown}: no node of the main graph computes a value of this name")))
        }
        None => Ok(()),
    }
}

/// A value's type, extremes, mean and first elements, on one line.
fn summary(v: &Value) -> String {
    let Ok(t) = v.tensor() else { return v.describe() };
    let Ok(numbers) = t.to_f64s() else { return v.describe() };
    let finite: Vec<f64> = numbers.iter().copied().filter(|x| x.is_finite()).collect();
    let head: Vec<String> = numbers.iter().take(6).map(ToString::to_string).collect();
    let more = if numbers.len() > 6 { ", …" } else { "" };
    let mut text = format!("{} [{}{more}]", v.describe(), head.join(", "));
    if !finite.is_empty() {
        let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
        let max = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mean = finite.iter().sum::<f64>() / finite.len() as f64;
        text.push_str(&format!(" min {min} max {max} mean {mean}"));
    }
    if finite.len() < numbers.len() {
        text.push_str(&format!(" ({} NaN or infinite)", numbers.len() - finite.len()));
    }
    text
}

/// NaN and infinity counts of a value (`None` when it is not a float tensor).
fn nonfinite(v: &Value) -> Option<(usize, usize, usize)> {
    let t = v.tensor().ok()?;
    if !matches!(t.data_type().name(), "float" | "double" | "float16" | "bfloat16") {
        return None;
    }
    let values = t.to_f64s().ok()?;
    let nan = values.iter().filter(|x| x.is_nan()).count();
    let inf = values.iter().filter(|x| x.is_infinite()).count();
    Some((nan, inf, values.len()))
}

fn node_label(plan: &Plan<'_>, n: onnx_core::ir::NodeId) -> String {
    let node = &plan.model.nodes[n];
    let op = node.op_type.as_ref().map(ToString::to_string).unwrap_or_default();
    match &node.name {
        Some(name) if !name.is_empty() => format!("node '{name}' ({op})"),
        _ => format!("node #{} ({op})", n.into_raw()),
    }
}

/// The first node whose output holds NaN or infinity while its inputs hold none.
fn first_nonfinite(plan: &Plan<'_>, inputs: &[(String, Value)], result: &RunResult) -> Option<String> {
    let mut bad: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (name, v) in inputs {
        if nonfinite(v).is_some_and(|(nan, inf, _)| nan + inf > 0) {
            bad.insert(name.clone());
        }
    }
    for (g, graph) in plan.model.graphs.iter() {
        if g != plan.main {
            continue;
        }
        for &t in &graph.initializers {
            let tensor = &plan.model.tensors[t];
            if let Ok(v) = Tensor::from_ir(tensor)
                && nonfinite(&Value::Tensor(v)).is_some_and(|(nan, inf, _)| nan + inf > 0)
            {
                bad.insert(tensor.name.as_ref().map(ToString::to_string).unwrap_or_default());
            }
        }
    }
    for c in &result.values {
        let Some((nan, inf, total)) = nonfinite(&c.value).filter(|(nan, inf, _)| nan + inf > 0) else { continue };
        let node = &plan.model.nodes[c.node];
        if node.inputs.iter().any(|i| bad.contains(&i.to_string())) {
            bad.insert(c.name.clone());
            continue;
        }
        return Some(format!(
            "first non-finite value: {} output '{}' holds {nan} NaN and {inf} infinite of {total} values, from finite inputs",
            node_label(plan, c.node),
            c.name
        ));
    }
    None
}

/// The first node whose output differs from the file `DIR` holds for it.
fn first_divergence(
    dir: &Path,
    plan: &Plan<'_>,
    result: &RunResult,
    (rtol, atol): (f64, f64),
) -> Result<Option<String>, Failure> {
    let found = onnx_eval::compare::first_divergence(dir, &result.values, rtol, atol)
        .map_err(|e| if e.contains("values.tsv") { Failure::Usage(e) } else { Failure::Invalid(e) })?;
    if let Some((node, name, message)) = found.first {
        return Ok(Some(format!("first difference: {} output '{name}': {message}", node_label(plan, node))));
    }
    outln!("{} intermediate values compared, all within tolerance", found.compared);
    Ok(None)
}

/// Time and node count per operator type.
fn by_operator(plan: &Plan<'_>, timings: &[(onnx_core::ir::NodeId, Duration)]) -> Vec<(String, f64, usize)> {
    let mut by_op: Vec<(String, f64, usize)> = Vec::new();
    for (n, t) in timings {
        let op = plan.model.nodes[*n].op_type.as_ref().map(ToString::to_string).unwrap_or_default();
        match by_op.iter_mut().find(|(o, _, _)| *o == op) {
            Some(entry) => {
                entry.1 += t.as_secs_f64();
                entry.2 += 1;
            }
            None => by_op.push((op, t.as_secs_f64(), 1)),
        }
    }
    by_op
}

/// How many nodes the profile lists one by one.
const SLOWEST: usize = 15;

/// The nodes that took longest in the last run, largest first, with their share and, for
/// matrix products, their rate.
fn slowest_nodes(plan: &Plan<'_>, result: &RunResult, total: f64, peak: &Peak) {
    let mut nodes: Vec<(onnx_core::ir::NodeId, f64, u64)> =
        result.timings.iter().zip(&result.flops).map(|((n, t), (_, f))| (*n, t.as_secs_f64(), *f)).collect();
    nodes.sort_by(|a, b| b.1.total_cmp(&a.1));
    outln!("slowest nodes ({} of {}):", nodes.len().min(SLOWEST), nodes.len());
    for (n, t, f) in nodes.into_iter().take(SLOWEST) {
        let share = if total > 0.0 { t / total * 100.0 } else { 0.0 };
        let rate = if f > 0 && t > 0.0 { format!("  {}", peak.rate(f as f64 / t)) } else { String::new() };
        outln!("  {:>10.3} ms {share:>5.1} %  {}{rate}", t * 1e3, short_label(plan, n));
    }
    outln!(
        "peak: {:.1} GFLOP/s per core (float32 FMA loop, measured now) × {} thread{}",
        peak.per_core / 1e9,
        peak.cores,
        if peak.cores == 1 { "" } else { "s" }
    );
}

/// The most characters of a node's name a profile line shows.
const NAME_SHOWN: usize = 60;

/// [`node_label`] with a long name cut in the middle (exporters such as tf2onnx join a
/// dozen scope paths into one name).
fn short_label(plan: &Plan<'_>, n: onnx_core::ir::NodeId) -> String {
    let node = &plan.model.nodes[n];
    let name = node.name.as_ref().map(ToString::to_string).unwrap_or_default();
    let chars: Vec<char> = name.chars().collect();
    if chars.len() <= NAME_SHOWN {
        return node_label(plan, n);
    }
    let op = node.op_type.as_ref().map(ToString::to_string).unwrap_or_default();
    let head: String = chars[..NAME_SHOWN / 2].iter().collect();
    let tail: String = chars[chars.len() - NAME_SHOWN / 2..].iter().collect();
    format!("node '{head}…{tail}' ({op})")
}

/// This machine's float32 peak for the threads the run used: what a rate is measured
/// against.
struct Peak {
    per_core: f64,
    cores: usize,
}

impl Peak {
    fn measure() -> Peak {
        Peak { per_core: onnx_eval::peak::flops_per_core(), cores: onnx_threads::cores() }
    }

    /// `45.2 GFLOP/s (25 % of peak)`.
    fn rate(&self, flops_per_second: f64) -> String {
        let peak = self.per_core * self.cores as f64;
        format!("{:.1} GFLOP/s ({:.0} % of peak)", flops_per_second / 1e9, flops_per_second / peak * 100.0)
    }
}

/// Time per operator type, largest first, with its share.
fn mebibytes(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

fn profile(plan: &Plan<'_>, result: &RunResult) {
    let total: f64 = result.timings.iter().map(|(_, t)| t.as_secs_f64()).sum();
    let mut by_op = by_operator(plan, &result.timings);
    let mut nested = by_operator(plan, &result.nested_timings);
    by_op.sort_by(|a, b| b.1.total_cmp(&a.1));
    nested.sort_by(|a, b| b.1.total_cmp(&a.1));
    // Floating-point operations of the matrix products per operator type, for their rate.
    let mut flops: Vec<(String, u64)> = Vec::new();
    for (node, f) in result.flops.iter().filter(|(_, f)| *f > 0) {
        let op = plan.model.nodes[*node].op_type.as_ref().map(ToString::to_string).unwrap_or_default();
        match flops.iter_mut().find(|(o, _)| *o == op) {
            Some(entry) => entry.1 += f,
            None => flops.push((op, *f)),
        }
    }
    let all_flops: u64 = flops.iter().map(|(_, f)| f).sum();
    let peak = Peak::measure();
    outln!(
        "time by operator (last run, {:.3} ms in nodes, threads {}{}):",
        total * 1e3,
        peak.cores,
        if all_flops > 0 && total > 0.0 {
            format!(", matrix products {} overall", peak.rate(all_flops as f64 / total))
        } else {
            String::new()
        }
    );
    for (op, t, n) in by_op {
        let share = if total > 0.0 { t / total * 100.0 } else { 0.0 };
        let rate = match flops.iter().find(|(o, _)| *o == op) {
            Some((_, f)) if t > 0.0 => format!("  {}", peak.rate(*f as f64 / t)),
            _ => String::new(),
        };
        outln!("  {op:<24} {:>10.3} ms {share:>5.1} %  ({n} node{}){rate}", t * 1e3, if n == 1 { "" } else { "s" });
    }
    slowest_nodes(plan, result, total, &peak);
    let held = plan.initializer_bytes();
    if held.in_place + held.copied > 0 {
        outln!(
            "initializers: {} used where they lie in the model's file, {} copied (typed fields, unaligned bytes)",
            mebibytes(held.in_place),
            mebibytes(held.copied)
        );
    }
    if !plan.views.is_empty() {
        let mut ops: Vec<&str> =
            plan.views.iter().filter_map(|&n| plan.model.nodes[n].op_type.as_ref()?.as_str()).collect();
        ops.sort_unstable();
        ops.dedup();
        outln!(
            "views: {} {} node(s) read in place by the nodes after them (strides, no copy)",
            plan.views.len(),
            ops.join("/")
        );
    }
    if !nested.is_empty() {
        outln!("inside subgraphs (part of the time of the nodes that hold them):");
        for (op, t, n) in nested.into_iter().take(10) {
            let share = if total > 0.0 { t / total * 100.0 } else { 0.0 };
            outln!("  {op:<24} {:>10.3} ms {share:>5.1} %  ({n} node{})", t * 1e3, if n == 1 { "" } else { "s" });
        }
    }
}
