//! `onnx simplify IN OUT [SETTING…]`: constants folded with the evaluator's kernels, shapes
//! inference knows made constants, identities and dead nodes removed (see
//! `onnx_core::simplify`); symbolic dimensions fixed first by the settings, as `onnx
//! set-dims` takes them, and kept symbolic otherwise. Text or binary by OUT's extension.

use onnx_core::simplify::{Options, simplify};

use crate::failure::Failure;
use crate::io::{Input, ReadOptions, SideFileArgs, WriteArgs, model_bytes, read_model, write_output};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The model to simplify (`-` for stdin).
    input: String,
    /// Where to write it (`-` for stdout, binary unless `--to text`).
    output: String,
    /// `NAME=SIZE` or `INPUT:D0,D1,…`: dimensions fixed first (as `onnx set-dims` takes
    /// them), so that what depends on them folds too.
    #[arg(value_name = "SETTING")]
    settings: Vec<String>,
    /// Fold nodes whose results are bigger than their constant inputs (dequantized weights,
    /// ConstantOfShape): fewer nodes, a bigger file.
    #[arg(long)]
    allow_growth: bool,
    #[command(flatten)]
    write: WriteArgs,
    #[command(flatten)]
    side_file: SideFileArgs,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let input = Input::parse(&args.input);
    let format = args.write.start("simplify", &input, &args.output)?;
    let mut model = read_model(&input, None, ReadOptions::default())?;
    args.side_file.check(&input, &model, &args.output, "the simplified model")?;
    // Weights in side files are folded like any other: read in place (mapped, not copied),
    // and referred to again where they come through unchanged.
    let side_files = onnx_core::external::read_in_place(&mut model, input.model_dir())
        .map_err(|e| Failure::Invalid(format!("{}: {e}", input.label())))?;
    crate::commands::set_dims::fix_first(&mut model, &args.settings, &input.label())?;
    let done = simplify(&mut model, &onnx_eval::fold::Kernels, Options { allow_growth: args.allow_growth });
    args.side_file.place(&input, &mut model, &args.output, Some(side_files))?;
    let bytes = model_bytes(&model, format, &args.output)?;
    crate::json::set("nodes_before", done.nodes_before);
    crate::json::set("nodes_after", done.nodes_after);
    crate::json::set("folded", done.folded);
    crate::json::set("shapes", done.shapes);
    crate::json::set("identities", done.identities);
    crate::json::set("dead", done.dead);
    crate::json::set("fused", done.fused);
    crate::json::set("merged", done.merged);
    crate::json::set("initializers_removed", done.initializers_removed);
    if !crate::settings::get().quiet && !crate::json::active() {
        errln!(
            "{}: {} → {} nodes ({} folded, {} made constants from inference, {} fused, {} duplicates merged, {} no-ops and {} dead nodes removed)",
            args.output,
            done.nodes_before,
            done.nodes_after,
            done.folded,
            done.shapes,
            done.fused,
            done.merged,
            done.identities,
            done.dead
        );
    }
    write_output(&args.output, &bytes)
}
