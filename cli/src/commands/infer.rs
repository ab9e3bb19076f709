//! `onnx infer IN OUT`: writes the model with the types and shapes inference found, as
//! `value_info` entries of the main graph (text or binary by OUT's extension). Declared
//! types are kept, unless `--overwrite-declared` rewrites those inference contradicts;
//! values without one get an entry.

use crate::failure::Failure;
use crate::io::{Format, Input, ReadOptions, SideFileArgs, WriteArgs, model_bytes, read_model_and_bytes, write_output};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The model to read (`-` for stdin, binary).
    input: String,
    /// Where to write it (`-` for stdout, binary unless `--to text`).
    output: String,
    #[command(flatten)]
    write: WriteArgs,
    #[command(flatten)]
    side_file: SideFileArgs,
    /// Also rewrite the declared types (graph outputs, value_info entries) that inference
    /// contradicts, with the inferred ones (what `type-conflict` findings suggest).
    #[arg(long)]
    overwrite_declared: bool,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let input = Input::parse(&args.input);
    let format = args.write.start("infer", &input, &args.output)?;
    let (mut model, original) = read_model_and_bytes(&input, None, ReadOptions::default())?;
    // Writing over the input itself is fine (it is replaced only once the output is whole);
    // over a side file the model's tensors live in is not, nor moving the model away from
    // those side files.
    args.side_file.check(&input, &model, &args.output, "the annotated model")?;
    // A binary model is written back as it came, with the new entries appended to its
    // graph (nothing else is re-encoded, and the entries are encoded straight from the
    // inferred types); otherwise the model is annotated, then encoded or printed.
    let overwritten = if args.overwrite_declared { onnx_core::infer::overwrite_declared(&mut model) } else { 0 };
    let appended = match (format, &original) {
        (Format::Binary, Some(bytes)) if overwritten == 0 && args.side_file.external_data.is_none() => {
            onnx_core::infer::annotated_bytes(&model, bytes)
        }
        _ => None,
    };
    let (bytes, added) = match appended {
        Some(done) => done,
        None => {
            let added = onnx_core::infer::annotate(&mut model);
            args.side_file.place(&input, &mut model, &args.output, None)?;
            let bytes = model_bytes(&model, format, &args.output)?;
            (bytes, added)
        }
    };
    crate::json::set("inferred", added);
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    if args.overwrite_declared {
        crate::json::set("overwritten", overwritten);
    }
    if !crate::settings::get().quiet && !crate::json::active() {
        errln!("{}: {added} value type{} inferred", input.label(), plural(added));
        if args.overwrite_declared {
            errln!("{}: {overwritten} declared type{} rewritten from inference", input.label(), plural(overwritten));
        }
    }
    // The process ends after the write: leave the model and the encoded bytes to it rather
    // than free them piece by piece (a tenth of the run on big models).
    std::mem::forget(model);
    let written = write_output(&args.output, &bytes);
    std::mem::forget(bytes);
    written
}
