//! `onnx reduce MODEL OUT --check 'CMD {} {data}'`: the smallest run of the model's nodes on
//! which a check still fails (`onnx_core::reduce`), written to OUT. Each candidate is written
//! with its inputs beside it (`input_K.pb`, the values the whole model's run made there: the
//! cut-off part of the model is replaced by its real values), and the check command runs on
//! it; a non-zero exit means it still fails. With `--against DIR` (another runtime's values,
//! as `onnx run --all-values` writes them) the check is built in: each candidate runs in
//! this process on that runtime's values at its inputs, and fails where one of its outputs
//! differs from that runtime's beyond tolerance (or the run fails).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use onnx_core::ir::{DimValue, Dimension, Model, Shape, Str, TensorType, Type, TypeValue};
use onnx_core::reduce::ReduceError;
use onnx_eval::value::Value;

use crate::failure::Failure;
use crate::io::{Input, ReadOptions, read_model};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The model.
    model: String,
    /// Where the reduced model goes (binary or text by its extension); its inputs' values are
    /// written beside it, in `OUT_inputs/input_K.pb`.
    output: String,
    /// The check: a shell command in which `{}` is a candidate model's path and `{data}` the
    /// folder of its inputs (`onnx run {} --test-data {data}`, a script comparing with
    /// onnxruntime, …). A non-zero exit means the candidate still fails.
    #[arg(long, value_name = "COMMAND", required_unless_present = "against", conflicts_with = "against")]
    check: Option<String>,
    /// The built-in check: another runtime's values of the whole model (a folder as
    /// `onnx run --all-values` writes it, `values.tsv` naming each file). A candidate fails
    /// where our evaluator, given that runtime's values at its inputs, makes an output that
    /// differs from that runtime's beyond tolerance, or cannot run it.
    #[arg(long, value_name = "DIR")]
    against: Option<PathBuf>,
    /// Relative tolerance of `--against` (polygraphy's default).
    #[arg(long, default_value_t = 1e-5)]
    rtol: f64,
    /// Absolute tolerance of `--against` (polygraphy's default).
    #[arg(long, default_value_t = 1e-5)]
    atol: f64,
    /// The whole model's run's inputs.
    #[command(flatten)]
    inputs: crate::commands::inputs::InputArgs,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let input = Input::parse(&args.model);
    let label = input.label();
    if args.json {
        crate::json::begin("reduce");
        crate::json::set("input", label.clone());
        crate::json::set("output", args.output.clone());
    }
    let format = crate::io::output_format(None, &args.output)?;
    let mut model = read_model(&input, None, ReadOptions::default())?;
    onnx_core::external::embed_all(&mut model, input.model_dir())
        .map_err(|e| Failure::Invalid(format!("{label}: external data: {e}")))?;
    onnx_core::order::sort_nodes(&mut model);
    let order: Vec<_> = model.main_graph().map(|g| g.nodes.clone()).unwrap_or_default();
    if order.is_empty() {
        return Err(Failure::Invalid(format!("{label}: the main graph has no nodes to reduce")));
    }
    let mut values = whole_run(&model, &args, &label)?;
    // The other runtime's values stand in for ours: a candidate starts from what that
    // runtime made, so only its own nodes can make the difference.
    let reference = match &args.against {
        Some(dir) => {
            let files = onnx_eval::compare::value_files(dir).map_err(Failure::Usage)?;
            let mut read = HashMap::new();
            for (name, file) in files {
                let (_, value) = onnx_eval::stored::read_value(&file, None).map_err(Failure::Invalid)?;
                values.insert(name.clone(), value.clone());
                read.insert(name, value);
            }
            Some(read)
        }
        None => None,
    };
    let types = |name: &Str| values.get(&name.to_string()).and_then(type_of);
    let work = tempfile::tempdir().map_err(|e| Failure::Usage(format!("cannot make a temporary folder: {e}")))?;
    let candidate = work.path().join("candidate.onnx");
    let data = work.path().join("candidate_inputs");
    // The list being reduced: the main graph's nodes (`None`), then the model those the
    // shortest failing prefix keeps (`narrow`).
    let current: std::cell::RefCell<Option<(Model, Vec<_>)>> = std::cell::RefCell::new(None);
    let mut fails = |start: usize, end: usize| -> Result<bool, String> {
        let now = current.borrow();
        let (model, order) = now.as_ref().map_or((&model, &order), |(m, o)| (m, o));
        let (cut, inputs) = onnx_core::reduce::cut(model, order, (start, end), false, &types)?;
        let failed = match (&reference, &args.check) {
            (Some(reference), _) => differs_from(&cut, &inputs, &values, reference, (args.rtol, args.atol)),
            (None, Some(check)) => {
                write_candidate(&cut, &inputs, &values, &candidate, &data)?;
                check_fails(check, &candidate, &data)?
            }
            (None, None) => return Err("no check: give --check or --against".to_owned()),
        };
        if !args.json {
            let verdict = if failed { "fails" } else { "passes" };
            let count = end - start;
            errln!("check: nodes {start}..{end} ({count} node{}): {verdict}", if count == 1 { "" } else { "s" });
        }
        Ok(failed)
    };
    // From the main graph's nodes each time: the unpruned prefix comes after the pruned one
    // when the pruned one does not fail.
    let mut narrow = |end: usize, prune: bool| -> Result<usize, String> {
        let (prefix, _) = onnx_core::reduce::cut(&model, &order, (0, end), prune, &types)?;
        let kept: Vec<_> = prefix.main_graph().map(|g| g.nodes.clone()).unwrap_or_default();
        let count = kept.len();
        *current.borrow_mut() = Some((prefix, kept));
        Ok(count)
    };
    let reduced = match onnx_core::reduce::reduce(order.len(), &mut fails, &mut narrow) {
        Ok(reduced) => reduced,
        Err(ReduceError::NothingFails) => {
            return Err(Failure::Invalid(format!("{label}: the check passes on the whole model: nothing to reduce")));
        }
        Err(ReduceError::Check(why)) => return Err(Failure::Invalid(why)),
    };
    let (model_now, order_now) = current.into_inner().unwrap_or_else(|| (model.clone(), order.clone()));
    let (cut, inputs) = onnx_core::reduce::cut(&model_now, &order_now, (reduced.start, reduced.end), false, &types)
        .map_err(Failure::Invalid)?;
    let inputs_dir = PathBuf::from(format!("{}_inputs", args.output));
    crate::io::refuse_to_overwrite(&args.output, &crate::io::protected_files(&input, &model), "the output")?;
    let bytes = crate::io::model_bytes(&cut, format, &args.output)?;
    // The inputs first: a folder that cannot take them stops the command before the model
    // is written.
    write_inputs(&inputs, &values, &inputs_dir).map_err(Failure::Usage)?;
    crate::io::write_output(&args.output, &bytes)?;
    let nodes = reduced.end - reduced.start;
    let name_of = |k: usize| onnx_core::diff::node_label(&model_now, order_now[k]);
    let checks = reduced.checks;
    if args.json {
        crate::json::set("nodes_before", order.len());
        crate::json::set("nodes_after", nodes);
        crate::json::set("checks", checks);
        crate::json::set("first_node", name_of(reduced.start));
        crate::json::set("last_node", name_of(reduced.end - 1));
        crate::json::set("inputs_dir", inputs_dir.display().to_string());
    } else {
        let text = format!(
            "{}: {} of {} nodes still fail the check (\"{}\" … \"{}\"), found in {checks} checks; its inputs are in {}\n",
            args.output,
            nodes,
            order.len(),
            name_of(reduced.start),
            name_of(reduced.end - 1),
            inputs_dir.display()
        );
        crate::io::write_output("-", crate::printable::printable(&text).as_bytes())?;
    }
    Ok(())
}

/// Every value of the main graph in a run of the whole model, by name, its inputs included.
fn whole_run(model: &Model, args: &Args, label: &str) -> Result<HashMap<String, Value>, Failure> {
    let plan = onnx_eval::Plan::new(model).map_err(|e| Failure::Invalid(format!("{label}: {e}")))?;
    let inputs = args.inputs.values(&plan, model)?;
    // Every value as it is made: a run that fails part way still gives the values made
    // before the failure (a failing model is what one reduces).
    let seen = std::sync::Arc::new(std::sync::Mutex::new(HashMap::new()));
    let keep = std::sync::Arc::clone(&seen);
    let observe = onnx_eval::Observer(std::sync::Arc::new(move |name: &Str, value: &Value| {
        keep.lock().unwrap_or_else(|p| p.into_inner()).insert(name.to_string(), value.clone());
    }));
    let options = onnx_eval::RunOptions { observe: Some(observe), ..Default::default() };
    let result = plan.run(inputs.clone(), &options);
    drop(options);
    let mut values: HashMap<String, Value> = inputs.into_iter().collect();
    values.extend(std::mem::take(&mut *seen.lock().unwrap_or_else(|p| p.into_inner())));
    if let Err(e) = result {
        errln!("note: {label}: the whole model's run fails ({e}); values after that node are not known");
    }
    Ok(values)
}

/// A tensor value's type with its whole shape.
fn type_of(value: &Value) -> Option<Type> {
    let Value::Tensor(t) = value else { return None };
    let dims =
        t.shape.iter().map(|&d| Dimension { value: Some(DimValue::Value(d as i64)), denotation: None }).collect();
    let tensor = TensorType { elem_type: Some(t.data_type().code()), shape: Some(Shape { dims }) };
    Some(Type { value: Some(TypeValue::Tensor(tensor)), denotation: None })
}

fn write_candidate(
    cut: &Model,
    inputs: &[Str],
    values: &HashMap<String, Value>,
    path: &Path,
    data: &Path,
) -> Result<(), String> {
    std::fs::write(path, onnx_core::binary::encode_model(cut)).map_err(|e| format!("{}: {e}", path.display()))?;
    write_inputs(inputs, values, data)
}

/// `input_K.pb` for each of the cut's inputs, in order, in `dir`, whose earlier `input_*.pb`
/// files (a previous reduction's) go first; a folder holding anything else is not touched.
fn write_inputs(inputs: &[Str], values: &HashMap<String, Value>, dir: &Path) -> Result<(), String> {
    if dir.exists() {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut ours = Vec::new();
        for entry in entries {
            let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if !(name.starts_with("input_") && name.ends_with(".pb")) {
                return Err(format!("{}: holds other files than input_K.pb; not written over", dir.display()));
            }
            ours.push(path);
        }
        for path in ours {
            std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (k, name) in inputs.iter().enumerate() {
        let name = name.to_string();
        let value = values.get(&name).ok_or_else(|| format!("no value of '{name}' from the whole model's run"))?;
        let file = dir.join(format!("input_{k}.pb"));
        std::fs::write(&file, onnx_eval::stored::encode(value, &name))
            .map_err(|e| format!("{}: {e}", file.display()))?;
    }
    Ok(())
}

/// The built-in check: whether our evaluator, run on the candidate from the values at its
/// inputs, cannot run it or makes an output that differs from the reference's value of that
/// name beyond tolerance.
fn differs_from(
    cut: &Model,
    inputs: &[Str],
    values: &HashMap<String, Value>,
    reference: &HashMap<String, Value>,
    (rtol, atol): (f64, f64),
) -> bool {
    let Ok(plan) = onnx_eval::Plan::new(cut) else { return true };
    let mut feed = Vec::new();
    for name in inputs {
        let name = name.to_string();
        let Some(value) = values.get(&name) else { return true };
        feed.push((name, value.clone()));
    }
    let Ok(result) = plan.run(feed, &onnx_eval::RunOptions::default()) else { return true };
    result.outputs.iter().any(|(name, got)| {
        reference.get(name).is_some_and(|want| onnx_eval::compare::value_difference(got, want, rtol, atol).is_some())
    })
}

/// Runs the check on a candidate: whether it exits non-zero.
fn check_fails(check: &str, model: &Path, data: &Path) -> Result<bool, String> {
    let line = check.replace("{data}", &quote(data)).replace("{}", &quote(model));
    let status = Command::new("sh")
        .args(["-c", &line])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("cannot run the check `{line}`: {e}"))?;
    Ok(!status.success())
}

/// A path as one shell word.
fn quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}
