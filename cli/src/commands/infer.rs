//! `onnx infer IN OUT`: writes the model with the types and shapes inference found, as
//! `value_info` entries of the main graph (text or binary by OUT's extension). Declared
//! types are kept; only values without one get an entry.

use std::path::Path;

use onnx_core::binary;

use crate::failure::Failure;
use crate::io::{Format, Input, ReadOptions, format_of, read_model_and_bytes, write_output};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The model to read (`-` for stdin, binary).
    input: String,
    /// Where to write it (`-` for stdout, binary unless `--to text`).
    output: String,
    /// Format of the output when the extension does not say.
    #[arg(long, value_enum)]
    to: Option<Format>,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let input = Input::parse(&args.input);
    let (mut model, original) = read_model_and_bytes(&input, None, ReadOptions::default())?;
    let format = match (&args.to, args.output.as_str()) {
        (Some(f), _) => *f,
        (None, "-") => Format::Binary,
        (None, path) => format_of(Path::new(path))?,
    };
    // A binary model is written back as it came, with the new entries appended to its
    // graph (nothing else is re-encoded, and the entries are encoded straight from the
    // inferred types); otherwise the model is annotated, then encoded or printed.
    let appended = match (format, &original) {
        (Format::Binary, Some(bytes)) => onnx_core::infer::annotated_bytes(&model, bytes),
        _ => None,
    };
    let (bytes, added) = match appended {
        Some(done) => done,
        None => {
            let added = onnx_core::infer::annotate(&mut model);
            let bytes = match format {
                Format::Binary => binary::encode_model(&model),
                Format::Text => crate::commands::convert::canonical_text(&model, &args.output)?,
            };
            (bytes, added)
        }
    };
    errln!("{}: {added} value type{} inferred", input.label(), if added == 1 { "" } else { "s" });
    // The process ends after the write: leave the model and the encoded bytes to it rather
    // than free them piece by piece (a tenth of the run on big models).
    std::mem::forget(model);
    let written = write_output(&args.output, &bytes);
    std::mem::forget(bytes);
    written
}
