//! `onnx diff A B`: what changed from one model to another, one line per change, each placed
//! by name and by text line in both models (`onnx_core::diff`). A binary model's lines are
//! those of its text as `onnx convert` prints it.

use onnx_core::diagnostic::Anchor;
use onnx_core::diff::locate::Lines;
use onnx_core::diff::{Change, Kind, Options, diff};
use onnx_core::ir::Model;
use onnx_core::proto_path::ProtoPaths;
use serde_json::{Value, json};

use crate::failure::Failure;
use crate::io::{Input, Read, ReadOptions, read_any};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The first model (`-` reads stdin).
    a: String,
    /// The second model.
    b: String,
    /// Names carry no meaning: inputs and outputs pair by position, a consistent renaming is
    /// no change.
    #[arg(long)]
    ignore_names: bool,
    /// Print the changes as one JSON object on stdout (docs/json.md).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    run: RunArgs,
}

/// `--run`: where the two models' values first part.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Also run both models on the same inputs and report the first paired value, in the
    /// first model's order, that differs beyond tolerance; the exit code then says whether
    /// the runs agree (0) or part (1).
    #[arg(long)]
    run: bool,
    #[command(flatten)]
    inputs: crate::commands::inputs::InputArgs,
    /// Relative tolerance (polygraphy's default).
    #[arg(long, default_value_t = onnx_eval::compare::RTOL_DEFAULT)]
    rtol: f64,
    /// Absolute tolerance (polygraphy's default).
    #[arg(long, default_value_t = onnx_eval::compare::ATOL_DEFAULT)]
    atol: f64,
    /// The most bytes of values held at once waiting for their partner (`512M`, `4G`): the
    /// model whose run is ahead by more waits for the other.
    #[arg(long, value_name = "SIZE", value_parser = onnx_eval::memory::parse_size, default_value = "1G")]
    keep: usize,
}

/// One model as read, and whether it was read from text.
struct Side {
    label: String,
    read: Read,
    from_text: bool,
    /// The file's name, which a binary model's outline refers to.
    file_name: Option<String>,
}

impl Side {
    fn new(input: &Input) -> Result<Side, Failure> {
        let read = read_any(input, None, ReadOptions::default())?;
        let file_name = match input {
            Input::File(path) => path.file_name().and_then(|n| n.to_str()).map(str::to_owned),
            Input::Stdin => None,
        };
        Ok(Side { label: input.label(), from_text: read.text.is_some(), read, file_name })
    }

    /// Where each part is in the text: the text read; for a binary file, the outline
    /// `onnx convert` writes beside it; for a binary model from stdin, its whole printing.
    fn lines(&mut self) -> Option<Lines> {
        if let (Some(bytes), Some(name)) = (&self.read.binary, &self.file_name) {
            return Some(Lines::of_outline(&self.read.model, bytes, name));
        }
        match self.read.text.take() {
            Some((text, map)) => Some(Lines::of_text(std::str::from_utf8(&text).ok()?, map)),
            // The printing of a model far past what a person reads as text is not made just
            // for its line numbers; the protobuf path still places each change.
            None if onnx_core::print::estimated_len(&self.read.model) > PRINT_LIMIT => None,
            None => Some(Lines::of_printed(&self.read.model)),
        }
    }

    fn model(&self) -> &Model {
        &self.read.model
    }
}

const PRINT_LIMIT: usize = 1 << 30;

pub fn run(args: Args) -> Result<(), Failure> {
    let (input_a, input_b) = (Input::parse(&args.a), Input::parse(&args.b));
    if matches!((&input_a, &input_b), (Input::Stdin, Input::Stdin)) {
        return Err(Failure::Usage("only one of the two models can be read from stdin (`-`)".into()));
    }
    if args.json {
        crate::json::begin("diff");
        crate::json::set("a", input_a.label());
        crate::json::set("b", input_b.label());
    }
    let (mut a, mut b) = (Side::new(&input_a)?, Side::new(&input_b)?);
    let options = Options { ignore_names: args.ignore_names, dir_a: input_a.model_dir(), dir_b: input_b.model_dir() };
    let changes = {
        let _phase = crate::settings::phase("compare the models".to_owned());
        diff(a.model(), b.model(), &options)
    };
    let ran = match args.run.run {
        true => {
            let _phase = crate::settings::phase("run both models".to_owned());
            Some(run_both(&a, &b, &options, &args.run)?)
        }
        false => None,
    };
    // Lines cost a printing of a binary model: only made when something is to be placed.
    let wanted = !changes.is_empty() || ran.as_ref().is_some_and(|r| r.part.first.is_some());
    let (lines_a, lines_b) = if wanted { (a.lines(), b.lines()) } else { (None, None) };
    let (paths_a, paths_b) = (ProtoPaths::new(a.model()), ProtoPaths::new(b.model()));
    let places = Places { a: &a, b: &b, lines_a, lines_b, paths_a, paths_b };
    if args.json {
        crate::json::set("changes", Value::Array(changes.iter().map(|c| places.to_json(c)).collect()));
        crate::json::set("counts", counts_json(&changes));
    } else {
        let text = render(&places, &changes);
        let out = crate::printable::printable(&text).into_owned();
        crate::io::write_output("-", out.as_bytes())?;
    }
    if let Some(ran) = ran {
        return report_run(&places, &ran, &args.run, args.json);
    }
    if changes.is_empty() {
        return Ok(());
    }
    Err(Failure::Invalid(format!("{} and {} differ: {}", a.label, b.label, counts_text(&changes))))
}

/// What running both models found.
struct Ran {
    paired: onnx_core::diff::PairedValues,
    part: onnx_eval::compare::RunsPart,
}

/// Runs both models on the same inputs and reports where their values first part.
fn run_both(a: &Side, b: &Side, options: &Options, args: &RunArgs) -> Result<Ran, Failure> {
    let paired = onnx_core::diff::paired_values(a.model(), b.model(), options.ignore_names);
    let (model_a, model_b) = (runnable(a, &options.dir_a)?, runnable(b, &options.dir_b)?);
    let plan_a = onnx_eval::Plan::new(&model_a).map_err(|e| Failure::Invalid(format!("{}: {e}", a.label)))?;
    let plan_b = onnx_eval::Plan::new(&model_b).map_err(|e| Failure::Invalid(format!("{}: {e}", b.label)))?;
    let inputs_a = args.inputs.values(&plan_a, a.model())?;
    // The second model's inputs are the first's, under their paired names.
    let inputs_b: Vec<(String, onnx_eval::value::Value)> = inputs_a
        .iter()
        .filter_map(|(name, v)| {
            let (_, there) = paired.inputs.iter().find(|(x, _)| x.to_string() == *name)?;
            Some((there.to_string(), v.clone()))
        })
        .collect();
    let pairs: Vec<(String, String)> = paired.values.iter().map(|p| (p.a.to_string(), p.b.to_string())).collect();
    let limits = onnx_eval::Limits { max_memory: onnx_eval::memory::default_budget(), ..Default::default() };
    let run_options = onnx_eval::RunOptions { limits, ..Default::default() };
    let part = onnx_eval::compare::first_difference_between(
        &plan_a,
        &plan_b,
        (&inputs_a, &inputs_b),
        &pairs,
        args.keep,
        (args.rtol, args.atol),
        &run_options,
    )
    .map_err(|e| Failure::Invalid(format!("running the models: {e}")))?;
    Ok(Ran { paired, part })
}

fn report_run(places: &Places, ran: &Ran, args: &RunArgs, json: bool) -> Result<(), Failure> {
    let (a, b, part, pairs) = (places.a, places.b, &ran.part, ran.paired.values.len());
    let first = part.first.as_ref().map(|(k, how)| (&ran.paired.values[*k], how));
    if json {
        let first_json = first.map(|(p, how)| {
            json!({
                "node_a": onnx_core::diff::node_label(a.model(), p.node_a),
                "node_b": onnx_core::diff::node_label(b.model(), p.node_b),
                "value_a": p.a.to_string(),
                "value_b": p.b.to_string(),
                "difference": how,
                "a": {"line": places.line(false, Anchor::Node(p.node_a))},
                "b": {"line": places.line(true, Anchor::Node(p.node_b))},
            })
        });
        crate::json::set(
            "run",
            json!({"compared": part.compared, "pairs": pairs, "held_at_most": part.held_at_most, "first_difference": first_json}),
        );
    } else {
        let text = match first {
            None => format!(
                "run: the {} paired values agree (rtol {}, atol {}; {} compared)\n",
                pairs, args.rtol, args.atol, part.compared,
            ),
            Some((p, how)) => format!(
                "run: first difference at node \"{}\" ({}), value \"{}\": {how}  [{}, {}]\n     (the paired values before it agree)\n",
                onnx_core::diff::node_label(a.model(), p.node_a),
                a.model().nodes[p.node_a].op_label(),
                p.a,
                places.place(false, Anchor::Node(p.node_a)),
                places.place(true, Anchor::Node(p.node_b)),
            ),
        };
        crate::io::write_output("-", crate::printable::printable(&text).as_bytes())?;
    }
    match first {
        None => Ok(()),
        Some((p, _)) => Err(Failure::Invalid(format!("the runs part at \"{}\"", p.a))),
    }
}

/// A copy of a side's model as it runs: external data read in, nodes in order.
fn runnable(side: &Side, dir: &Option<std::path::PathBuf>) -> Result<Model, Failure> {
    let mut model = side.model().clone();
    onnx_core::external::embed_all(&mut model, dir.clone())
        .map_err(|e| Failure::Invalid(format!("{}: external data: {e}", side.label)))?;
    onnx_core::order::sort_nodes(&mut model);
    Ok(model)
}

struct Places<'s> {
    a: &'s Side,
    b: &'s Side,
    lines_a: Option<Lines>,
    lines_b: Option<Lines>,
    paths_a: ProtoPaths,
    paths_b: ProtoPaths,
}

impl Places<'_> {
    fn line(&self, second: bool, anchor: Anchor) -> Option<usize> {
        let lines = if second { &self.lines_b } else { &self.lines_a };
        lines.as_ref()?.line(anchor)
    }

    /// `a.onnx:17`, or the protobuf path where the text has no line for it.
    fn place(&self, second: bool, anchor: Anchor) -> String {
        let side = if second { self.b } else { self.a };
        match self.line(second, anchor) {
            Some(line) => format!("{}:{line}", side.label),
            None => {
                let paths = if second { &self.paths_b } else { &self.paths_a };
                format!("{} {}", side.label, paths.path(anchor))
            }
        }
    }

    fn to_json(&self, c: &Change) -> Value {
        let side = |second: bool, anchor: Option<Anchor>| match anchor {
            None => Value::Null,
            Some(anchor) => {
                let paths = if second { &self.paths_b } else { &self.paths_a };
                json!({"line": self.line(second, anchor), "path": paths.path(anchor)})
            }
        };
        json!({
            "kind": c.kind,
            "subject": c.subject,
            "scope": c.scope,
            "name": c.name,
            "op": c.op,
            "detail": c.detail,
            "a": side(false, c.a),
            "b": side(true, c.b),
        })
    }
}

fn render(places: &Places, changes: &[Change]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if changes.is_empty() {
        let _ = writeln!(out, "{} and {}: no differences", places.a.label, places.b.label);
        return out;
    }
    for c in changes {
        let mut at = Vec::new();
        if let Some(anchor) = c.a {
            at.push(places.place(false, anchor));
        }
        if let Some(anchor) = c.b {
            at.push(places.place(true, anchor));
        }
        let _ = writeln!(out, "{}  [{}]", c.text(), at.join(", "));
    }
    let binary: Vec<&str> = [places.a, places.b].iter().filter(|s| !s.from_text).map(|s| s.label.as_str()).collect();
    if !binary.is_empty() {
        let whose = if binary.len() == 1 { "its" } else { "their" };
        let _ = writeln!(
            out,
            "(lines of {} are those of {whose} text as `onnx convert` writes it beside the model)",
            binary.join(" and ")
        );
    }
    let _ = writeln!(out, "{}", counts_text(changes));
    out
}

fn count(changes: &[Change], kind: Kind) -> usize {
    changes.iter().filter(|c| c.kind == kind).count()
}

fn counts_text(changes: &[Change]) -> String {
    let n = changes.len();
    format!(
        "{n} change{}: {} added, {} removed, {} changed",
        if n == 1 { "" } else { "s" },
        count(changes, Kind::Added),
        count(changes, Kind::Removed),
        count(changes, Kind::Changed)
    )
}

fn counts_json(changes: &[Change]) -> Value {
    json!({
        "added": count(changes, Kind::Added),
        "removed": count(changes, Kind::Removed),
        "changed": count(changes, Kind::Changed),
    })
}
