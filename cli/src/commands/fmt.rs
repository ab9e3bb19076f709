//! `onnx fmt [--check] [--diff] [FILE|DIR|-]...`: lay out text models in the canonical
//! style, keeping every comment.
//!
//! A folder stands for every `.onnxtxt` and `.onnxtext` file below it (hidden folders, such
//! as `.git`, are skipped), in name order.
//! Files are rewritten in place (atomically, and only when they change); `-` formats stdin
//! to stdout. `--check` rewrites nothing, lists the files that would change and exits 1 if
//! any would; `--diff` prints what would change as a unified diff (and rewrites nothing).
//! A file with syntax errors is left alone and its errors are reported.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use onnx_core::analysis::analyze_text;
use onnx_core::diagnostic::Severity;
use onnx_syntax::format::format_model_with_progress;
use onnx_syntax::progress::Progress;

use crate::failure::Failure;
use crate::io::{Input, write_output};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Text models to format, or folders to format every text model below (`-` reads stdin
    /// and writes the result to stdout).
    #[arg(required = true, value_name = "FILE|DIR")]
    files: Vec<String>,
    /// Write nothing; list the files that are not formatted and exit with 1 if there are any.
    #[arg(long)]
    check: bool,
    /// Write nothing; print the changes formatting would make as a unified diff.
    #[arg(long)]
    diff: bool,
    /// Print the result as one JSON object on stdout (docs/json.md): each file with what
    /// became of it, and the syntax errors. Not with `-`.
    #[arg(long)]
    json: bool,
}

/// What became of one file.
enum Outcome {
    Unchanged,
    Changed,
    /// Not formatted: it has syntax errors (reported already).
    Broken,
}

pub fn run(args: Args) -> Result<(), Failure> {
    if args.json {
        crate::json::begin("fmt");
        for file in &args.files {
            crate::json::refuse_stdout(file)?;
        }
    }
    let mut changed = Vec::new();
    let mut outcomes = Vec::new();
    let mut broken = 0usize;
    let mut io_errors = Vec::new();
    let mut files = Vec::new();
    for arg in &args.files {
        if arg != "-" && Path::new(arg).is_dir() {
            let before = files.len();
            if let Err(e) = text_models_below(Path::new(arg), &mut files) {
                errln!("error: {}: cannot list: {e}", arg);
                io_errors.push(arg.clone());
            } else if files.len() == before && !crate::settings::get().quiet {
                errln!("warning: {arg}: no text models (.onnxtxt, .onnxtext) below this folder");
            }
        } else {
            files.push(arg.clone());
        }
    }
    for file in &files {
        let status = match format_one(file, &args) {
            Ok(Outcome::Unchanged) => "unchanged",
            Ok(Outcome::Changed) => {
                changed.push(file.clone());
                if args.check || args.diff { "would change" } else { "formatted" }
            }
            Ok(Outcome::Broken) => {
                broken += 1;
                "syntax errors"
            }
            Err(Failure::Usage(message) | Failure::Invalid(message)) => {
                errln!("error: {message}");
                io_errors.push(file.clone());
                "unreadable"
            }
        };
        outcomes.push(serde_json::json!({ "file": file, "status": status }));
    }
    crate::json::set("files", outcomes);
    if args.check && !changed.is_empty() && !crate::json::active() {
        let mut stdout = std::io::stdout().lock();
        for file in &changed {
            let _ = writeln!(stdout, "{}", crate::printable::printable(if file == "-" { "<stdin>" } else { file }));
        }
    }
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    if !io_errors.is_empty() {
        return Err(Failure::Usage(format!(
            "{} file{} could not be read or written",
            io_errors.len(),
            plural(io_errors.len())
        )));
    }
    if broken > 0 {
        return Err(Failure::Invalid(format!("{broken} file{} not formatted: syntax errors", plural(broken))));
    }
    if (args.check || args.diff) && !changed.is_empty() {
        return Err(Failure::Invalid(format!("{} file{} would be reformatted", changed.len(), plural(changed.len()))));
    }
    Ok(())
}

fn format_one(file: &str, args: &Args) -> Result<Outcome, Failure> {
    let input = Input::parse(file);
    let label = input.label();
    // What the file was when read: a change saved meanwhile is not overwritten.
    let read_state = match &input {
        Input::File(path) => onnx_core::FileState::of(path).ok(),
        Input::Stdin => None,
    };
    let data = match &input {
        Input::File(path) => std::fs::read(path),
        Input::Stdin => onnx_core::binary::read_stdin().map(|b| b.to_vec()),
    }
    .map_err(|e| Failure::Usage(format!("{label}: cannot read: {e}")))?;
    let source = std::str::from_utf8(&data).map_err(|e| {
        Failure::Invalid(format!("{label}: not UTF-8 text (invalid byte at offset {})", e.valid_up_to()))
    })?;
    let progress = Arc::new(Progress::default());
    let bar = crate::progress::reading_text(source.len(), &label, Arc::clone(&progress));
    let formatted = format_model_with_progress(source, &progress);
    drop(bar);
    let formatted = match formatted {
        Ok(text) => text,
        Err(_) => {
            // Report through the analysis, which words syntax errors as every command does.
            let analysis = analyze_text(source);
            let errors: Vec<_> = analysis.diagnostics.into_iter().filter(|d| d.severity == Severity::Error).collect();
            crate::report::emit(&label, source, &errors);
            return Ok(Outcome::Broken);
        }
    };
    let outcome = if formatted == source { Outcome::Unchanged } else { Outcome::Changed };
    if args.diff && matches!(outcome, Outcome::Changed) {
        print_diff(&label, source, &formatted);
    }
    if !args.check && !args.diff {
        match input {
            // stdin → stdout, always, so `onnx fmt -` works as a filter.
            Input::Stdin => write_output("-", formatted.as_bytes())?,
            Input::File(path) if matches!(outcome, Outcome::Changed) => write_file(&path, &formatted, read_state)?,
            Input::File(_) => {}
        }
    }
    Ok(outcome)
}

/// Every `.onnxtxt` and `.onnxtext` file below `dir`, in name order; hidden folders are
/// skipped, and symbolic links to folders are not followed (a link cycle cannot loop).
fn text_models_below(dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if !name.to_string_lossy().starts_with('.') {
                text_models_below(&path, out)?;
            }
        } else if matches!(path.extension().and_then(|e| e.to_str()), Some("onnxtxt" | "onnxtext")) {
            out.push(path.to_string_lossy().into_owned());
        }
    }
    Ok(())
}

fn write_file(path: &Path, text: &str, read_state: Option<onnx_core::FileState>) -> Result<(), Failure> {
    let options = onnx_core::WriteOptions { unchanged_since: read_state, ..onnx_core::WriteOptions::default() };
    onnx_core::write_file(path, options, |w| w.write_all(text.as_bytes())).map_err(|e| Failure::Usage(e.to_string()))
}

/// A unified diff on stdout. similar: a maintained diff library (used by insta) with
/// unified-diff output, so the format is the one `patch` and reviewers expect.
fn print_diff(label: &str, before: &str, after: &str) {
    let diff = similar::TextDiff::from_lines(before, after);
    let text = diff.unified_diff().context_radius(3).header(label, &format!("{label} (formatted)")).to_string();
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(crate::printable::printable(&text).as_bytes());
}
