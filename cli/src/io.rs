//! Reading models from files or stdin and writing them to files (atomically) or stdout.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use onnx_core::analysis::analyze_text_with_progress;
use onnx_core::binary;
use onnx_core::diagnostic::Severity;
use onnx_core::ir::Model;
use onnx_syntax::progress::Progress;

use crate::failure::Failure;

/// Where a model comes from: a file (whose directory anchors external data) or stdin.
#[derive(Debug, Clone)]
pub enum Input {
    File(PathBuf),
    Stdin,
}

impl Input {
    pub fn parse(arg: &str) -> Input {
        if arg == "-" { Input::Stdin } else { Input::File(PathBuf::from(arg)) }
    }

    pub fn label(&self) -> String {
        match self {
            Input::File(p) => p.display().to_string(),
            Input::Stdin => "<stdin>".to_owned(),
        }
    }

    /// The directory external data is resolved against; none for stdin.
    pub fn model_dir(&self) -> Option<PathBuf> {
        match self {
            Input::File(p) => Some(binary::model_dir(p)),
            Input::Stdin => None,
        }
    }
}

/// The on-disk format of a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Protobuf (`.onnx`, `.pb`).
    Binary,
    /// The ONNX text format (`.onnxtxt`, `.onnxtext`).
    Text,
}

/// How a text that breaks rules of meaning is read.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// A text that reads to a model which breaks a rule of meaning (a value used before it
    /// is defined, an output nothing computes, a name defined twice) is still that model:
    /// read it, showing those errors as warnings. Syntax errors, and anything that keeps the
    /// text from saying one exact model, still refuse the input. (`convert`, unless
    /// `--strict`: a broken model can be written as text and turned into a `.onnx`, as onnx's
    /// own parser allows.)
    pub meaning_errors_as_warnings: bool,
}

/// The format a path's extension names.
pub fn format_of(path: &Path) -> Result<Format, Failure> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("onnx" | "pb") => Ok(Format::Binary),
        Some("onnxtxt" | "onnxtext") => Ok(Format::Text),
        _ => Err(Failure::Usage(format!(
            "{}: cannot tell the format from the extension (expected .onnx, .pb, .onnxtxt or .onnxtext)",
            path.display()
        ))),
    }
}

/// Reads a model in either format. Text with errors is reported (every diagnostic, with
/// the source) and fails as invalid input; warnings are reported and reading goes on.
pub fn read_model(input: &Input, format: Option<Format>, options: ReadOptions) -> Result<Model, Failure> {
    read_model_and_bytes(input, format, options).map(|(model, _)| model)
}

/// [`read_model`], also giving the bytes of a binary input (the model shares them, so
/// keeping them costs nothing): a command that changes little can write them back as they
/// are, with only its change encoded.
pub fn read_model_and_bytes(
    input: &Input,
    format: Option<Format>,
    options: ReadOptions,
) -> Result<(Model, Option<Bytes>), Failure> {
    read_any(input, format, options).map(|read| (read.model, read.binary))
}

/// What reading a model gave: the model, a binary input's bytes, a text input's text with
/// where each part of the model is in it.
pub struct Read {
    pub model: Model,
    pub binary: Option<Bytes>,
    pub text: Option<(Bytes, onnx_core::source_map::SourceMap)>,
}

/// [`read_model`], keeping what the input was read from (see [`Read`]).
pub fn read_any(input: &Input, format: Option<Format>, options: ReadOptions) -> Result<Read, Failure> {
    let named = match (format, input) {
        (Some(f), _) => Some(f),
        (None, Input::File(path)) => Some(format_of(path)?),
        (None, Input::Stdin) => None,
    };
    let label = input.label();
    let _phase = crate::settings::phase(format!("read {label}"));
    let data = match input {
        Input::File(path) => {
            use std::io::IsTerminal as _;
            use std::os::unix::fs::FileTypeExt as _;
            // Reading a FIFO waits for a writer: say so rather than look hung.
            if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) && std::io::stderr().is_terminal() {
                errln!("{label}: a FIFO; waiting for a program to write the model into it…");
            }
            let _progress = crate::progress::stage_for_file(path, "reading");
            // Mapped, text or binary: a file truncated while it is read ends the command with
            // an error naming it (onnx_core::signals), and a copy of a big text would cost
            // its reading time again.
            binary::read_bytes(path).map_err(|e| Failure::Usage(format!("{label}: cannot read: {e}")))?
        }
        Input::Stdin => binary::read_stdin().map_err(|e| Failure::Usage(format!("{label}: cannot read: {e}")))?,
    };
    // Standard input has no extension: its first bytes tell.
    let format = named.unwrap_or_else(|| sniff_format(&data));
    match format {
        Format::Binary => {
            not_a_model_file(&label, &data)?;
            Ok(Read { model: binary::decode_model(data.clone(), &label)?, binary: Some(data), text: None })
        }
        Format::Text => {
            let source = simdutf8::compat::from_utf8(&data).map_err(|e| {
                Failure::Invalid(format!("{label}: not UTF-8 text (invalid byte at offset {})", e.valid_up_to()))
            })?;
            let progress = Arc::new(Progress::default());
            let bar = crate::progress::reading_text(source.len(), &label, Arc::clone(&progress));
            let mut analysis = analyze_text_with_progress(source, Some(&progress));
            drop(bar);
            let downgraded = options.meaning_errors_as_warnings && analysis.readable && analysis.has_errors();
            if downgraded {
                for d in &mut analysis.diagnostics {
                    d.severity = Severity::Warning;
                }
            }
            if !analysis.diagnostics.is_empty() {
                crate::report::emit(&label, source, &analysis.diagnostics);
            }
            if downgraded && !crate::json::active() {
                errln!(
                    "warning: {label}: the model breaks the rules above; it is converted as written \
                     (`--strict` refuses it)"
                );
            }
            if analysis.has_errors() {
                let errors = analysis.diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
                return Err(Failure::Invalid(format!(
                    "{label}: {errors} error{} in the text",
                    if errors == 1 { "" } else { "s" }
                )));
            }
            Ok(Read { model: analysis.model, binary: None, text: Some((data.clone(), analysis.source_map)) })
        }
    }
}

/// The files a command reading `input` must never write over: the input itself and the side
/// files its tensors live in (writing over them destroys the data the output refers to).
pub fn protected_files(input: &Input, model: &Model) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Input::File(path) = input {
        files.push(path.clone());
    }
    if let Some(dir) = input.model_dir() {
        files.extend(onnx_core::external::referenced_files(model, &dir));
    }
    files
}

/// Refuses to write `output` (a file path, or `-`) when it is one of `protected`, compared
/// as files (device and inode, through links), not as names.
pub fn refuse_to_overwrite(output: &str, protected: &[PathBuf], what: &str) -> Result<(), Failure> {
    if output == "-" {
        return Ok(());
    }
    match onnx_core::overwritten(Path::new(output), protected) {
        Some(file) => Err(Failure::Usage(format!(
            "{output}: refusing to write {what} over {}, which holds the model being read or data it \
             refers to; write it elsewhere",
            file.display()
        ))),
        None => Ok(()),
    }
}

/// The format of bytes that came without a name (standard input): text when they are UTF-8
/// and start, after white space, like a text model does (`<` header, `#` comment or
/// annotation, a graph name); binary otherwise. A binary model starts with a field tag
/// (`0x08` for ir_version), which no text model starts with.
pub fn sniff_format(data: &[u8]) -> Format {
    if binary::looks_like_text(data) { Format::Text } else { Format::Binary }
}

/// Files that are surely not models, named for what they are (see [`binary::not_a_model`]).
pub fn not_a_model_file(label: &str, data: &[u8]) -> Result<(), Failure> {
    match binary::not_a_model(data) {
        Some(why) => Err(Failure::Invalid(format!("{label}: {why}"))),
        None => Ok(()),
    }
}

/// Writes what `fill` produces to a file atomically, or to stdout for `-`, as it is produced
/// (a spinner on a terminal when `size_hint`, the bytes expected, is big).
pub fn write_streamed(
    output: &str,
    size_hint: u64,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), Failure> {
    if output == "-" {
        let stdout = std::io::stdout().lock();
        let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout);
        return match fill(&mut out).and_then(|()| out.flush()) {
            Ok(()) => Ok(()),
            // The reader went away (`onnx info model.onnx | head`): nothing left to do.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            Err(e) => Err(Failure::Usage(format!("<stdout>: cannot write: {e}"))),
        };
    }
    let path = Path::new(output);
    let _phase = crate::settings::phase(format!("write {}", path.display()));
    let what = format!("writing {}", path.display());
    onnx_core::write_atomically(path, |w| fill(&mut crate::progress::bytes_written(w, size_hint, &what)))
        .map_err(|e| Failure::Usage(e.to_string()))
}

/// Writes encoded bytes to a file atomically, or to stdout for `-`.
pub fn write_output(output: &str, bytes: &[u8]) -> Result<(), Failure> {
    write_streamed(output, bytes.len() as u64, |w| w.write_all(bytes))
}

/// Where a written model's big tensors go: the options of the commands that edit a model
/// (`simplify`, `extract`, `set-dims`, `opset`, `infer`).
#[derive(clap::Args, Debug, Default)]
pub struct SideFileArgs {
    /// Store every initializer of at least --size-threshold bytes in this new side file,
    /// relative to the output's directory (standard ONNX external data): for a model over
    /// protobuf's 2 GiB, or one whose side files the output would no longer reach. Without
    /// it, tensors already in side files stay there.
    #[arg(long, value_name = "LOCATION")]
    pub external_data: Option<String>,
    /// Smallest initializer, in bytes, that --external-data moves into the side file.
    #[arg(long, default_value_t = onnx_core::print::outline::DEFAULT_THRESHOLD, value_name = "BYTES", requires = "external_data")]
    pub size_threshold: u64,
}

impl SideFileArgs {
    /// Before any work: refuses an output, or a new side file, over the input or the side
    /// files it reads; and, without --external-data, an output away from the directory the
    /// model's side files are relative to (`what`: the thing written, for the message).
    pub fn check(&self, input: &Input, model: &Model, output: &str, what: &str) -> Result<(), Failure> {
        // The output may replace the input (it is written whole, then renamed over it), but
        // not a side file the output may still refer to.
        let side_files =
            input.model_dir().map(|dir| onnx_core::external::referenced_files(model, &dir)).unwrap_or_default();
        refuse_to_overwrite(output, &side_files, what)?;
        if let Some(location) = &self.external_data {
            return check_side_file(output, location, &protected_files(input, model));
        }
        let out_dir = (output != "-").then(|| binary::model_dir(Path::new(output)));
        if !side_files.is_empty()
            && !crate::commands::convert::same_dir(input.model_dir().as_deref(), out_dir.as_deref())
        {
            return Err(Failure::Usage(format!(
                "{}: the model keeps tensor data in external files relative to its directory; writing {what} \
                 to {output} would break those references (write it beside the input, or give --external-data \
                 FILE to write its tensors into a new side file beside it)",
                input.label(),
            )));
        }
        Ok(())
    }

    /// After the work, before encoding: with --external-data, every initializer of at least
    /// the threshold moves into the new side file (those still in the input's side files
    /// read first); without it, the tensors `read` took in place from side files refer to
    /// them again.
    pub fn place(
        &self,
        input: &Input,
        model: &mut Model,
        output: &str,
        read: Option<onnx_core::external::SideFiles>,
    ) -> Result<(), Failure> {
        match &self.external_data {
            Some(location) => {
                onnx_core::external::embed_all(model, input.model_dir())
                    .map_err(|e| Failure::Invalid(format!("{}: {e}", input.label())))?;
                write_side_file(model, output, location, self.size_threshold)
            }
            None => {
                if let Some(read) = read {
                    read.refer_back(model);
                }
                Ok(())
            }
        }
    }
}

/// The side file `location` names, relative to where `output` is written: split as the
/// writer and every reader split it (`/` and `\\` both separate; `..`, absolute paths and
/// drive letters refused), so the file checked is the file written.
fn side_file_path(output: &str, location: &str) -> Result<PathBuf, Failure> {
    if output == "-" {
        return Err(Failure::Usage("--external-data needs an output file, not stdout".to_owned()));
    }
    let components = onnx_core::external::location_components(&onnx_core::ir::Str::from(location))
        .map_err(|why| Failure::Usage(format!("--external-data {location}: {why}")))?;
    let mut path = binary::model_dir(Path::new(output));
    path.extend(components);
    Ok(path)
}

/// Refuses a new side file `location` beside `output` that would be written over one of
/// `protected` (the input, the side files it reads) or over the output itself.
pub fn check_side_file(output: &str, location: &str, protected: &[PathBuf]) -> Result<(), Failure> {
    let target = side_file_path(output, location)?;
    refuse_to_overwrite(&target.to_string_lossy(), protected, "the external data")?;
    if target == binary::model_dir(Path::new(output)).join(Path::new(output).file_name().unwrap_or_default()) {
        return Err(Failure::Usage(format!("--external-data {location}: that is the output model itself")));
    }
    Ok(())
}

/// Moves every initializer of at least `threshold` bytes into the side file `location`
/// beside `output` (written now, atomically); the model then refers to it.
pub fn write_side_file(model: &mut Model, output: &str, location: &str, threshold: u64) -> Result<(), Failure> {
    side_file_path(output, location)?;
    let dir = binary::model_dir(Path::new(output));
    if !dir.is_dir() {
        return Err(Failure::Usage(format!("{output}: cannot write: the directory {} does not exist", dir.display())));
    }
    onnx_core::external::externalize(model, &dir, location, threshold)
        .map(|_| ())
        .map_err(|e| Failure::Usage(format!("{output}: {e}")))
}

/// The options every command that writes a model shares.
#[derive(clap::Args, Debug)]
pub struct WriteArgs {
    /// Format of the output when the extension does not say.
    #[arg(long, value_enum)]
    pub to: Option<Format>,
    /// Print the result as one JSON object on stdout (docs/json.md); the output must then
    /// be a file.
    #[arg(long)]
    pub json: bool,
}

impl WriteArgs {
    /// Starts `command`'s JSON envelope when asked for, then says which format `output` is
    /// written in.
    pub fn start(&self, command: &'static str, input: &Input, output: &str) -> Result<Format, Failure> {
        if self.json {
            crate::json::begin(command);
            crate::json::set("input", input.label());
            crate::json::set("output", output.to_owned());
            crate::json::refuse_stdout(output)?;
        }
        output_format(self.to, output)
    }
}

/// The format to write `output` in: `to` when given, binary on stdout, else by extension.
pub fn output_format(to: Option<Format>, output: &str) -> Result<Format, Failure> {
    match (to, output) {
        (Some(f), _) => Ok(f),
        (None, "-") => Ok(Format::Binary),
        (None, path) => format_of(Path::new(path)),
    }
}

/// The model as the bytes of `format`: encoded (refused when protobuf cannot hold it) or
/// printed as canonical text.
pub fn model_bytes(model: &Model, format: Format, output: &str) -> Result<Vec<u8>, Failure> {
    match format {
        Format::Binary => {
            let encoded = binary::encode_model_spliced(model);
            if let Some(why) = binary::unwritable(model, encoded.len()) {
                return Err(Failure::Invalid(format!("{output}: not written: {why}")));
            }
            Ok(encoded.to_vec())
        }
        Format::Text => crate::commands::convert::canonical_text(model, output),
    }
}
