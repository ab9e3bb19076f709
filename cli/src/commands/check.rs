//! `onnx check MODEL… [--profile sonnx] [--strict] [--json]`: every checker rule (onnx.checker's and
//! ours), reported all at once. Exit 0 valid (warnings allowed), 1 invalid (a rule onnx's full check
//! or onnxruntime's loader enforces is broken; with `--strict`, anything found), 2 usage or I/O error.
//! Several models (what a pre-commit hook passes) are each checked and reported; the exit code is
//! the worst of theirs.
//!
//! Text models get rustc-style reports on their source lines; binary models name the
//! protobuf field path of each problem (`graph.node[3].input[1]`).

use std::sync::Arc;

use onnx_core::binary;
use onnx_core::check::{CheckOptions, Profile, is_valid};
use onnx_core::diagnostic::{Diagnostic, Severity};
use onnx_core::pipeline::{check_model, check_text_with_progress};
use onnx_core::proto_path::ProtoPaths;
use onnx_syntax::progress::Progress;

use crate::failure::Failure;
use crate::io::{Format, Input, format_of};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The models, binary or text (`-` reads a binary model from stdin); each is checked and
    /// reported in turn.
    #[arg(required = true, value_name = "MODEL")]
    models: Vec<String>,
    /// Print the result as one JSON object on stdout (docs/json.md).
    #[arg(long)]
    json: bool,
    /// Also report nodes of custom domains that no schema describes.
    #[arg(long)]
    check_custom_domain: bool,
    /// Also check a profile's rules: `sonnx`, the safety-related profile's graph
    /// constraints C1–C6 and restriction R1 (no dead node).
    #[arg(long, value_enum)]
    profile: Option<ProfileArg>,
    /// Make every warning an error: exit 1 on anything found, not only on what onnx's full
    /// check or onnxruntime's loader refuses (docs/diagnostics.md, "Verdicts").
    #[arg(long)]
    strict: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum ProfileArg {
    Sonnx,
}

pub fn run(args: Args) -> Result<(), Failure> {
    if let [model] = args.models.as_slice() {
        return check_one(model, &args);
    }
    if args.json {
        return Err(Failure::Usage("--json checks one model at a time".to_owned()));
    }
    // Every model is checked, whatever the earlier ones gave; the worst outcome decides the
    // exit code (a file that cannot be read, 2, over an invalid model, 1).
    let (mut invalid, mut unreadable) = (0usize, 0usize);
    for model in &args.models {
        match check_one(model, &args) {
            Ok(()) => {}
            Err(Failure::Invalid(message)) => {
                invalid += 1;
                errln!("error: {message}");
            }
            Err(Failure::Usage(message)) => {
                unreadable += 1;
                errln!("error: {message}");
            }
        }
    }
    let total = args.models.len();
    match (invalid, unreadable) {
        (0, 0) => Ok(()),
        (_, 0) => Err(Failure::Invalid(format!("{invalid} of {total} models invalid"))),
        _ => Err(Failure::Usage(format!("{unreadable} of {total} models could not be checked, {invalid} invalid"))),
    }
}

fn check_one(model: &str, args: &Args) -> Result<(), Failure> {
    let input = Input::parse(model);
    let label = input.label();
    if args.json {
        crate::json::begin("check");
        crate::json::set("file", label.clone());
    }
    let named = match &input {
        Input::File(path) => Some(format_of(path)?),
        Input::Stdin => None,
    };
    let data = match &input {
        Input::File(path) => {
            binary::read_bytes(path).map_err(|e| Failure::Usage(format!("{label}: cannot read: {e}")))?
        }
        Input::Stdin => binary::read_stdin().map_err(|e| Failure::Usage(format!("{label}: cannot read: {e}")))?,
    };
    let format = named.unwrap_or_else(|| crate::io::sniff_format(&data));
    let options = CheckOptions {
        model_dir: input.model_dir(),
        check_custom_domain: args.check_custom_domain,
        full_check: true,
        profile: match args.profile {
            Some(ProfileArg::Sonnx) => Profile::Sonnx,
            None => Profile::None,
        },
    };
    let diagnostics = match format {
        Format::Binary => {
            crate::io::not_a_model_file(&label, &data)?;
            let model = {
                let _phase = crate::settings::phase(format!("decode {label}"));
                binary::decode_model(data, &label)?
            };
            let diagnostics = {
                let _phase = crate::settings::phase("check (rules, names, inference)");
                strictly(check_model(&model, &options).diagnostics, args.strict)
            };
            // Proto paths are only needed to show diagnostics (building them is a walk over
            // the whole model).
            let paths = if diagnostics.is_empty() { ProtoPaths::default() } else { ProtoPaths::new(&model) };
            crate::report::emit_binary(&label, &model, &diagnostics, &paths);
            // The process ends after the report: freeing every node, name and tensor of a
            // big model one by one would take a tenth of the run, for nothing.
            std::mem::forget(model);
            diagnostics
        }
        Format::Text => {
            let source = std::str::from_utf8(&data).map_err(|e| {
                Failure::Invalid(format!("{label}: not UTF-8 text (invalid byte at offset {})", e.valid_up_to()))
            })?;
            let checked = {
                let _phase = crate::settings::phase("parse and check");
                let progress = Arc::new(Progress::default());
                let _bar = crate::progress::reading_text(source.len(), &label, Arc::clone(&progress));
                check_text_with_progress(source, &options, Some(&progress))
            };
            let diagnostics = strictly(checked.diagnostics, args.strict);
            crate::report::emit(&label, source, &diagnostics);
            diagnostics
        }
    };
    // A diagnostic that others of its code were folded into counts for them too.
    let count = |s: Severity| diagnostics.iter().filter(|d| d.severity == s).map(|d| 1 + d.folded).sum::<usize>();
    let (errors, warnings) = (count(Severity::Error), count(Severity::Warning));
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    crate::json::set("valid", is_valid(&diagnostics));
    crate::json::set("errors", errors);
    crate::json::set("warnings", warnings);
    if !is_valid(&diagnostics) {
        return Err(Failure::Invalid(format!("{label}: invalid, {errors} error{}", plural(errors))));
    }
    if !args.json && !crate::settings::get().quiet {
        let extra = if warnings > 0 { format!(" ({warnings} warning{})", plural(warnings)) } else { String::new() };
        outln!("{label}: valid{extra}");
    }
    Ok(())
}

/// Under `--strict`, every warning is an error (and is shown as one).
fn strictly(mut diagnostics: Vec<Diagnostic>, strict: bool) -> Vec<Diagnostic> {
    if strict {
        diagnostics.iter_mut().filter(|d| d.severity == Severity::Warning).for_each(|d| d.severity = Severity::Error);
    }
    diagnostics
}
