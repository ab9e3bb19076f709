//! `onnx opset IN OUT --to N`: the model's default-domain opset converted up or down (see
//! `onnx_core::opset`), written as text or binary by OUT's extension. When a node cannot be
//! converted nothing is written, and every such node is named with its reason.

use onnx_core::opset::{Finding, OpsetError};

use crate::failure::Failure;
use crate::io::{Input, ReadOptions, SideFileArgs, WriteArgs, model_bytes, read_model, write_output};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The model to convert (`-` for stdin).
    input: String,
    /// Where to write it (`-` for stdout, binary unless `--format text`).
    output: String,
    /// The default-domain (ai.onnx) opset to convert to, up or down.
    #[arg(long = "to", value_name = "N")]
    target: i64,
    /// Format of the output when the extension does not say (`--to`, which other commands
    /// use for this, is the opset here).
    #[arg(long, value_enum)]
    format: Option<crate::io::Format>,
    /// Print the result as one JSON object on stdout (docs/json.md); the output must then
    /// be a file.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    side_file: SideFileArgs,
}

fn finding_json(f: &Finding) -> serde_json::Value {
    serde_json::json!({ "node": f.node, "op": f.op, "place": f.place, "reason": f.reason })
}

pub fn run(args: Args) -> Result<(), Failure> {
    let input = Input::parse(&args.input);
    let format = WriteArgs { to: args.format, json: args.json }.start("opset", &input, &args.output)?;
    let mut model = read_model(&input, None, ReadOptions::default())?;
    args.side_file.check(&input, &model, &args.output, "the converted model")?;
    let converted = match onnx_core::opset::convert(&mut model, args.target) {
        Ok(converted) => converted,
        Err(OpsetError::Blocked { from, to, blockers }) => {
            crate::json::set("from", from);
            crate::json::set("to", to);
            crate::json::set("blockers", blockers.iter().map(finding_json).collect::<Vec<_>>());
            let listing: Vec<String> = blockers.iter().map(|b| format!("  {b}")).collect();
            return Err(Failure::Invalid(format!(
                "{}: cannot convert from opset {from} to {to}; {} node(s) block it:\n{}",
                input.label(),
                blockers.len(),
                listing.join("\n")
            )));
        }
        Err(e @ OpsetError::OutOfRange { .. }) => return Err(Failure::Usage(e.to_string())),
        Err(e) => return Err(Failure::Invalid(format!("{}: {e}", input.label()))),
    };
    args.side_file.place(&input, &mut model, &args.output, None)?;
    let bytes = model_bytes(&model, format, &args.output)?;
    crate::json::set("from", converted.from);
    crate::json::set("to", converted.to);
    crate::json::set("changed", converted.changed);
    crate::json::set("added", converted.added);
    crate::json::set("removed", converted.removed);
    crate::json::set("ir_version", converted.ir_version.map(|(_, new)| new));
    crate::json::set("notes", converted.notes.iter().map(finding_json).collect::<Vec<_>>());
    if !crate::settings::get().quiet && !crate::json::active() {
        let ir = match converted.ir_version {
            Some((old, new)) => {
                format!("; IR version {} → {new}", old.map_or_else(|| "unset".to_owned(), |v| v.to_string()))
            }
            None => String::new(),
        };
        errln!(
            "{}: opset {} → {}: {} node(s) changed, {} node(s) or constant(s) added, {} constant(s) removed{ir}",
            args.output,
            converted.from,
            converted.to,
            converted.changed,
            converted.added,
            converted.removed
        );
    }
    if !crate::json::active() {
        // One line per operator and reason: a model's sixteen Reshapes need one.
        let mut grouped: Vec<(&str, &str, Vec<&str>)> = Vec::new();
        for note in &converted.notes {
            match grouped.iter_mut().find(|(op, reason, _)| *op == note.op && *reason == note.reason) {
                Some((_, _, nodes)) => nodes.push(&note.node),
                None => grouped.push((&note.op, &note.reason, vec![&note.node])),
            }
        }
        for (op, reason, nodes) in grouped {
            let more = if nodes.len() > 3 { format!(" and {} more", nodes.len() - 3) } else { String::new() };
            let shown: Vec<&str> = nodes.iter().take(3).copied().collect();
            errln!("note: {}: {op} node(s) {}{more}: {reason}", args.output, shown.join(", "));
        }
    }
    write_output(&args.output, &bytes)
}
