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
}

/// One model as read, and whether it was read from text.
struct Side {
    label: String,
    read: Read,
    from_text: bool,
}

impl Side {
    fn new(input: &Input) -> Result<Side, Failure> {
        let read = read_any(input, None, ReadOptions::default())?;
        Ok(Side { label: input.label(), from_text: read.text.is_some(), read })
    }

    /// Where each part is in the text: the text read, or the printing of a binary model.
    fn lines(&mut self) -> Option<Lines> {
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
    let (lines_a, lines_b) = if changes.is_empty() { (None, None) } else { (a.lines(), b.lines()) };
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
    if changes.is_empty() {
        return Ok(());
    }
    Err(Failure::Invalid(format!("{} and {} differ: {}", a.label, b.label, counts_text(&changes))))
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
        let sign = match c.kind {
            Kind::Added => '+',
            Kind::Removed => '-',
            Kind::Changed => '~',
        };
        let scope = if c.scope.is_empty() { String::new() } else { format!("{} › ", c.scope) };
        let op = c.op.as_ref().map(|op| format!(" ({op})")).unwrap_or_default();
        let name = if c.name.is_empty() { String::new() } else { format!(" \"{}\"", c.name) };
        let detail = match (c.kind, c.detail.is_empty()) {
            (_, false) => format!(": {}", c.detail),
            (Kind::Added, true) => ": added".to_owned(),
            (Kind::Removed, true) => ": removed".to_owned(),
            (Kind::Changed, true) => String::new(),
        };
        let mut at = Vec::new();
        if let Some(anchor) = c.a {
            at.push(places.place(false, anchor));
        }
        if let Some(anchor) = c.b {
            at.push(places.place(true, anchor));
        }
        let _ = writeln!(out, "{sign} {scope}{}{name}{op}{detail}  [{}]", c.subject.word(), at.join(", "));
    }
    let binary: Vec<&str> = [places.a, places.b].iter().filter(|s| !s.from_text).map(|s| s.label.as_str()).collect();
    if !binary.is_empty() {
        let whose = if binary.len() == 1 { "its" } else { "their" };
        let _ =
            writeln!(out, "(lines of {} are those of {whose} text as `onnx convert` prints it)", binary.join(" and "));
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
