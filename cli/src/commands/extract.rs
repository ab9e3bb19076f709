//! `onnx extract IN OUT --inputs … --outputs …`: the sub-model that computes the chosen
//! outputs from the chosen inputs (`onnx.utils.extract_model`'s cut; see
//! `onnx_core::extract`), written as text or binary by OUT's extension. Types of
//! intermediate values come from inference first, as onnx's extractor does by default. Big
//! tensors kept in side files stay there (the output then goes beside the input), or move into
//! a new side file with `--external-data`.

use onnx_core::ir::Str;

use crate::failure::Failure;
use crate::io::{Input, ReadOptions, SideFileArgs, WriteArgs, model_bytes, read_model, write_output};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The model to cut (`-` for stdin).
    input: String,
    /// Where to write the sub-model (`-` for stdout, binary unless `--to text`).
    output: String,
    /// Values the sub-model starts from, comma-separated (default: the model's inputs).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    inputs: Vec<String>,
    /// Values the sub-model computes, comma-separated (default: the model's outputs).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    outputs: Vec<String>,
    #[command(flatten)]
    write: WriteArgs,
    #[command(flatten)]
    side_file: SideFileArgs,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let input = Input::parse(&args.input);
    let format = args.write.start("extract", &input, &args.output)?;
    if args.inputs.is_empty() && args.outputs.is_empty() {
        return Err(Failure::Usage("extract needs --inputs, --outputs or both: where the cut starts and ends".into()));
    }
    let mut model = read_model(&input, None, ReadOptions::default())?;
    args.side_file.check(&input, &model, &args.output, "the sub-model")?;
    let main_io = |outputs: bool| -> Vec<Str> {
        let Some(g) = model.main_graph() else { return Vec::new() };
        let initializers: std::collections::HashSet<&Str> =
            g.initializers.iter().filter_map(|&t| model.tensors[t].name.as_ref()).collect();
        let list = if outputs { &g.outputs } else { &g.inputs };
        list.iter().filter_map(|v| v.name.clone()).filter(|n| outputs || !initializers.contains(n)).collect()
    };
    let names = |given: &[String], outputs: bool| -> Vec<Str> {
        if given.is_empty() { main_io(outputs) } else { given.iter().map(|n| Str::from(n.as_str())).collect() }
    };
    let (inputs, outputs) = (names(&args.inputs, false), names(&args.outputs, true));
    for (what, list) in [("--inputs", &inputs), ("--outputs", &outputs)] {
        let mut seen = std::collections::HashSet::new();
        if let Some(twice) = list.iter().find(|n| !seen.insert(*n)) {
            return Err(Failure::Usage(format!("{what} names {} twice", twice.escaped())));
        }
    }
    let extracted = onnx_core::extract::extract(&mut model, &inputs, &outputs)
        .map_err(|e| Failure::Invalid(format!("{}: cannot extract: {e}", input.label())))?;
    args.side_file.place(&input, &mut model, &args.output, None)?;
    let bytes = model_bytes(&model, format, &args.output)?;
    crate::json::set("nodes", extracted.nodes);
    crate::json::set("initializers", extracted.initializers);
    crate::json::set("functions", extracted.functions);
    if !crate::settings::get().quiet && !crate::json::active() {
        errln!(
            "{}: {} node(s), {} initializer(s), {} function(s) from {} input(s) to {} output(s)",
            args.output,
            extracted.nodes,
            extracted.initializers,
            extracted.functions,
            inputs.len(),
            outputs.len()
        );
    }
    write_output(&args.output, &bytes)
}
