//! `onnx set-dims IN OUT batch=1 x:1,3,224,224`: dynamic dimensions made fixed, as
//! onnxruntime's `make_dynamic_shape_fixed` tool makes them (see `onnx_core::set_dims`), then
//! the outputs inference can fix from the new inputs; text or binary by OUT's extension.
//! `x:N,3,224,224` makes a size dynamic instead, and names the nodes that pin it.

use onnx_core::set_dims::DimSetting;

use crate::failure::Failure;
use crate::io::{Input, ReadOptions, SideFileArgs, WriteArgs, model_bytes, read_model, write_output};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The model to read (`-` for stdin).
    input: String,
    /// Where to write it (`-` for stdout, binary unless `--to text`).
    output: String,
    /// `NAME=SIZE` fixes every dimension named NAME; `INPUT:D0,D1,…` gives a graph input its
    /// whole shape (and fixes the symbols it had everywhere).
    #[arg(required = true, value_name = "SETTING")]
    settings: Vec<String>,
    #[command(flatten)]
    write: WriteArgs,
    #[command(flatten)]
    side_file: SideFileArgs,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let input = Input::parse(&args.input);
    let format = args.write.start("set-dims", &input, &args.output)?;
    let settings: Vec<DimSetting> =
        args.settings.iter().map(|s| DimSetting::parse(s)).collect::<Result<_, _>>().map_err(Failure::Usage)?;
    let mut model = read_model(&input, None, ReadOptions::default())?;
    args.side_file.check(&input, &model, &args.output, "the model")?;
    let fixed = onnx_core::set_dims::set_dims(&mut model, &settings)
        .map_err(|e| Failure::Invalid(format!("{}: {e}", input.label())))?;
    args.side_file.place(&input, &mut model, &args.output, None)?;
    let bytes = model_bytes(&model, format, &args.output)?;
    crate::json::set("dimensions", fixed.dimensions);
    crate::json::set("outputs", fixed.outputs);
    crate::json::set("made_symbolic", fixed.made_symbolic);
    let pins: Vec<serde_json::Value> = fixed
        .pinned
        .iter()
        .map(|p| serde_json::json!({ "symbol": p.symbol, "node": p.node, "op": p.op, "output": p.output }))
        .collect();
    crate::json::set("pinned_by", pins);
    if !crate::settings::get().quiet && !crate::json::active() {
        errln!(
            "{}: {} dimension(s) fixed, {} made symbolic; {} declared value(s) updated from inference",
            args.output,
            fixed.dimensions,
            fixed.made_symbolic,
            fixed.outputs
        );
    }
    // Pins are warnings (in JSON, `pinned_by`): the model is written, but does not follow
    // the symbol past them.
    if !crate::json::active() {
        for p in &fixed.pinned {
            errln!(
                "warning: {}: {} is pinned by {} node {} (its output: {})",
                args.output,
                p.symbol,
                p.op,
                p.node,
                p.output
            );
        }
    }
    write_output(&args.output, &bytes)
}

/// Parses `settings` (`NAME=SIZE`, `INPUT:D0,D1,…`) and fixes them in `model` first, for the
/// commands that take them before their own work (`cost`, `simplify`); nothing for none.
pub fn fix_first(model: &mut onnx_core::ir::Model, settings: &[String], label: &str) -> Result<(), Failure> {
    if settings.is_empty() {
        return Ok(());
    }
    let parsed: Vec<DimSetting> =
        settings.iter().map(|s| DimSetting::parse(s)).collect::<Result<_, _>>().map_err(Failure::Usage)?;
    onnx_core::set_dims::set_dims(model, &parsed).map_err(|e| Failure::Invalid(format!("{label}: {e}")))?;
    Ok(())
}
