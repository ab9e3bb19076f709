//! `onnx convert IN OUT`: re-encode a model, optionally moving tensor data into or out of a
//! side file.

use std::path::Path;

use onnx_core::binary;
use onnx_core::external;
use onnx_core::ir::Model;
use onnx_core::print::canonical::Layout;
use onnx_core::print::digest::bytes_in_file;
use onnx_core::print::outline::{DEFAULT_THRESHOLD, refer_to_source};

use crate::failure::Failure;
use crate::io::{
    Format, Input, ReadOptions, format_of, protected_files, read_model, refuse_to_overwrite, write_output,
    write_streamed,
};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The model to read (`-` reads stdin).
    input: String,
    /// Where to write (`-` writes stdout). The format follows the extension: .onnx or .pb.
    output: String,
    /// Input format, when the extension does not say (stdin: sniffed from its first bytes).
    #[arg(long, value_enum)]
    from: Option<Format>,
    /// Output format, when the extension does not say (stdout is binary unless told).
    #[arg(long, value_enum)]
    to: Option<Format>,
    /// Text style: `canonical` reads back to exactly the same model; `onnx` writes exactly
    /// what `onnx.printer.to_text` writes (and loses what onnx's text cannot say).
    #[arg(long, value_enum, default_value = "canonical")]
    style: Style,
    /// Print the result (and any text diagnostics) as one JSON object on stdout
    /// (docs/json.md); the output must then be a file.
    #[arg(long)]
    json: bool,
    /// Read every tensor stored in external data into the model itself.
    #[arg(long, conflicts_with = "external_data")]
    embed_external: bool,
    /// Store initializers of at least --size-threshold bytes in this side file, relative to
    /// the output's directory (standard ONNX external data).
    #[arg(long, value_name = "LOCATION")]
    external_data: Option<String>,
    /// Keep initializers of at least --size-threshold bytes where they are: the output refers
    /// to their raw bytes inside the input .onnx file (standard external data with offset and
    /// length), so a text view of a big model holds no numbers. The output must go to the
    /// input's directory; `--embed-external` puts the data back in.
    #[arg(long, conflicts_with_all = ["external_data", "embed_external"])]
    reference_input: bool,
    /// Write every number into the text, even for a model with big tensors. Without it, a
    /// binary model converted to a text file beside it becomes an outline: each big tensor is
    /// a reference into the model (standard external data, which onnx's parser reads) with a
    /// comment giving its size and range (docs/syntax.md).
    #[arg(long, conflicts_with_all = ["external_data", "reference_input"])]
    inline: bool,
    /// Write every graph's `< … >` list after its nodes, as `@initializers < … >`, so the
    /// text starts with the structure. Our extension: onnx's parser does not read it.
    #[arg(long)]
    initializers_last: bool,
    /// Converting to binary, keep references into another .onnx file (an outline's) as
    /// external data instead of reading their bytes into the output.
    #[arg(long, conflicts_with = "embed_external")]
    keep_external: bool,
    /// Refuse a text model that breaks a rule of meaning (undefined values, outputs nothing
    /// computes, names defined twice) instead of converting it with warnings.
    #[arg(long)]
    strict: bool,
    /// Smallest initializer, in bytes, that --external-data, --reference-input or the
    /// outline moves out of the text.
    #[arg(long, default_value_t = DEFAULT_THRESHOLD, value_name = "BYTES")]
    size_threshold: u64,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let input = Input::parse(&args.input);
    if args.json {
        crate::json::begin("convert");
        crate::json::set("input", input.label());
        crate::json::set("output", args.output.clone());
        crate::json::refuse_stdout(&args.output)?;
    }
    let out_format = match (&args.to, args.output.as_str()) {
        (Some(f), _) => *f,
        (None, "-") => Format::Binary,
        (None, path) => format_of(Path::new(path))?,
    };
    if args.initializers_last && (args.style == Style::Onnx || out_format == Format::Binary) {
        return Err(Failure::Usage(
            "--initializers-last lays out our canonical text; it means nothing for onnx's style or a binary output"
                .to_owned(),
        ));
    }
    let out_dir = (args.output != "-").then(|| binary::model_dir(Path::new(&args.output)));
    let outline = Outline::choose(&args, &input, out_format, out_dir.as_deref())?;
    if args.reference_input || outline == Outline::Written {
        return convert_referencing_input(&args, &input, out_dir.as_deref(), out_format);
    }
    let options = ReadOptions { meaning_errors_as_warnings: !args.strict };
    let mut model = read_model(&input, args.from, options)?;
    if outline == Outline::Elsewhere
        && !crate::settings::get().quiet
        && !crate::json::active()
        && big_initializers(&model, args.size_threshold)
    {
        errln!(
            "note: {}: every number is written into the text; the outline (nodes first, big tensors \
             by reference) is written only beside {} (--inline says you want the numbers)",
            if args.output == "-" { "<stdout>" } else { &args.output },
            input.label()
        );
    }
    if out_format == Format::Binary && !args.keep_external && !args.embed_external {
        // An outline's references are a view of a model's own bytes: the binary gets them back.
        external::embed_where(&mut model, input.model_dir(), external::is_model_file)
            .map_err(|e| Failure::Invalid(format!("{}: {e}", input.label())))?;
    }
    let has_external = external::external_tensors(&model).next().is_some();
    let protected = protected_files(&input, &model);
    refuse_to_overwrite(&args.output, &protected, "the output")?;
    if let Some(location) = &args.external_data {
        crate::io::check_side_file(&args.output, location, &protected)?;
    }

    if args.embed_external || (args.external_data.is_some() && has_external) {
        external::embed_all(&mut model, input.model_dir())
            .map_err(|e| Failure::Invalid(format!("{}: {e}", input.label())))?;
    } else if has_external && !same_dir(input.model_dir().as_deref(), out_dir.as_deref()) {
        return Err(Failure::Usage(format!(
            "{}: the model keeps tensor data in external files relative to its directory; \
             writing it to {} would break those references. Use --embed-external to put the \
             data into the model, or --external-data FILE to write a new side file.",
            input.label(),
            if args.output == "-" { "<stdout>".to_owned() } else { args.output.clone() }
        )));
    }
    if let Some(location) = &args.external_data {
        crate::io::write_side_file(&mut model, &args.output, location, args.size_threshold)?;
    }
    write_converted(&args, &model, out_format)
}

/// Whether the text is the outline of a binary model (see `--inline`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outline {
    /// Not asked for: a binary output, another style, a flag that says where tensors go.
    No,
    /// Written: a binary model converted to a text file in its own directory.
    Written,
    /// Wanted but impossible: the text goes elsewhere (stdout, another directory) or the
    /// model comes from stdin, where references into the model would not resolve.
    Elsewhere,
}

impl Outline {
    fn choose(args: &Args, input: &Input, out_format: Format, out_dir: Option<&Path>) -> Result<Outline, Failure> {
        let default_text = out_format == Format::Text
            && args.style == Style::Canonical
            && !(args.inline || args.reference_input || args.embed_external || args.external_data.is_some());
        let binary_input = match (input, args.from) {
            (_, Some(format)) => format == Format::Binary,
            (Input::File(path), None) => format_of(path)? == Format::Binary,
            (Input::Stdin, None) => true,
        };
        Ok(match (default_text && binary_input, input) {
            (false, _) => Outline::No,
            (true, Input::File(_)) if same_dir(input.model_dir().as_deref(), out_dir) => Outline::Written,
            (true, _) => Outline::Elsewhere,
        })
    }
}

/// Whether some tensor is big enough to be shown by reference in an outline.
fn big_initializers(model: &Model, threshold: u64) -> bool {
    model.tensors.iter().any(|(_, t)| bytes_in_file(t).is_some_and(|r| r.len() as u64 >= threshold.max(1)))
}

/// Writes the model in the output format. The canonical text is streamed to its file as it
/// is printed (a model's text can be several times the size of the model).
fn write_converted(args: &Args, model: &Model, format: Format) -> Result<(), Failure> {
    let layout = Layout { initializers_after_nodes: args.initializers_last, ..Layout::default() };
    write_laid_out(model, format, args.style, &layout, &args.output)
}

/// [`write_converted`] with the canonical text in a chosen layout.
fn write_laid_out(model: &Model, format: Format, style: Style, layout: &Layout, output: &str) -> Result<(), Failure> {
    match (format, style) {
        (Format::Text, Style::Canonical) => {
            write_streamed(output, onnx_core::print::estimated_len(model) as u64, |out| {
                onnx_core::print::canonical::write_model_with(model, layout, out)
            })
        }
        (Format::Text, Style::Onnx) => write_output(output, &text_of(model, style, output)?),
        (Format::Binary, _) => {
            let encoded = binary::encode_model_spliced(model);
            if let Some(why) = binary::unwritable(model, encoded.len()) {
                return Err(Failure::Invalid(format!("{output}: not written: {why}")));
            }
            write_streamed(output, encoded.len() as u64, |out| encoded.write_to(out))
        }
    }
}

/// `--reference-input` and the outline: big initializers become references into the input
/// file itself, each with a comment giving its size and range.
fn convert_referencing_input(
    args: &Args,
    input: &Input,
    out_dir: Option<&Path>,
    out_format: Format,
) -> Result<(), Failure> {
    let Input::File(path) = input else {
        return Err(Failure::Usage("--reference-input needs the input model as a file, not stdin".to_owned()));
    };
    if args.from == Some(Format::Text) || (args.from.is_none() && format_of(path)? != Format::Binary) {
        return Err(Failure::Usage(format!("{}: --reference-input needs a binary model as input", path.display())));
    }
    if !same_dir(input.model_dir().as_deref(), out_dir) {
        return Err(Failure::Usage(format!(
            "{}: with --reference-input the output must be written to the input's directory, so \
             that the references to {} stay valid",
            args.output,
            path.display()
        )));
    }
    let location = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
        Failure::Usage(format!("{}: --reference-input needs a file name that is UTF-8", path.display()))
    })?;
    let label = input.label();
    // The output will point into the input: writing over it would destroy the data.
    refuse_to_overwrite(&args.output, std::slice::from_ref(path), "the output")?;
    let data = binary::read_bytes(path).map_err(|e| Failure::Usage(format!("{label}: cannot read: {e}")))?;
    crate::io::not_a_model_file(&label, &data)?;
    let mut model = binary::decode_model(data.clone(), &label)?;
    let layout = refer_to_source(&mut model, &data, location, args.size_threshold, args.initializers_last);
    write_laid_out(&model, out_format, args.style, &layout, &args.output)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Style {
    /// Ours: reads back to the same model, with `#@` annotations onnx reads as comments.
    Canonical,
    /// Byte for byte what onnx's printer writes.
    Onnx,
}

/// Prints the model. The onnx style warns when the text does not read back to the same
/// model; the canonical style always reads back to the same model.
fn text_of(model: &Model, style: Style, output: &str) -> Result<Vec<u8>, Failure> {
    match style {
        Style::Canonical => Ok(onnx_core::print::canonical::model(model).into_bytes()),
        Style::Onnx => {
            let text = onnx_core::print::onnx_style::model(model);
            // Reading a big text back costs as much as printing it: skip it when the answer
            // is known.
            let lossy = onnx_core::print::onnx_style::surely_lossy(model) || {
                let again = onnx_core::analysis::analyze_text(&text);
                again.has_errors() || binary::encode_model(&again.model) != binary::encode_model(model)
            };
            if lossy {
                errln!(
                    "warning: {output}: the onnx text style does not keep everything in this model \
                     (doc strings, metadata, raw tensor storage, field presence, …); reading the text \
                     back gives a different model; the default canonical style keeps it all"
                );
            }
            Ok(text.into_bytes())
        }
    }
}

/// The canonical text of a model (what `onnx infer` writes for text outputs).
pub fn canonical_text(model: &Model, output: &str) -> Result<Vec<u8>, Failure> {
    text_of(model, Style::Canonical, output)
}

/// Whether two model directories are the same place (external references stay valid).
pub(crate) fn same_dir(a: Option<&Path>, b: Option<&Path>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if binary::same_directory(a, b))
}
