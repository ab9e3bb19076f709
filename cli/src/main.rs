//! `onnx`: the command line of the toolkit.
//!
//! Exit codes, shared by every subcommand: 0 success; 1 the input is invalid (diagnostics
//! printed); 2 usage or I/O error. Every message names the file and what is wrong.

/// `println!` that ignores a closed stdout (`onnx check … | head -1`): a reader that stopped
/// reading is not our error, and `println!` would panic on it. Control characters (names in
/// a hostile model can hold terminal escape sequences) are written escaped.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let line = format!($($arg)*);
        let _ = writeln!(std::io::stdout(), "{}", crate::printable::printable(&line));
    }};
}

/// `eprintln!` that ignores a closed stderr (`onnx convert … 2>&1 | head -1`), for the same
/// reason, and escapes control characters likewise.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let line = format!($($arg)*);
        let _ = writeln!(std::io::stderr(), "{}", crate::printable::printable(&line));
    }};
}

mod commands;
mod failure;
mod help;
mod io;
mod json;
mod printable;
mod progress;
mod report;
mod settings;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use failure::Failure;

#[derive(Parser, Debug)]
#[command(
    name = "onnx",
    version = version_text(),
    about = "Read, convert and inspect ONNX models",
    max_term_width = 100,
    after_help = help::TOP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// When to colour reports: `auto` colours them on a terminal unless NO_COLOR is set.
    #[arg(long, global = true, value_enum, default_value_t = settings::Color::Auto)]
    color: settings::Color,
    /// Print only results, warnings and errors: no progress, no informational lines.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Also say how long each phase took (reading, checking, writing…), on stderr.
    #[arg(short, long, global = true)]
    verbose: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show a model's header, inputs and outputs, sizes and operator histogram.
    #[command(after_help = help::INFO)]
    Info(commands::info::Args),
    /// Convert a model between binary (`.onnx`, `.pb`) and text (`.onnxtxt`), managing external data.
    #[command(after_help = help::CONVERT)]
    Convert(commands::convert::Args),
    /// Check a model against every rule of onnx.checker and the operator schemas.
    #[command(after_help = help::CHECK)]
    Check(commands::check::Args),
    /// Infer types and shapes and write them into the model as value_info.
    #[command(after_help = help::INFER)]
    Infer(commands::infer::Args),
    /// Run a model on input values (TensorProto files) and show, write or compare its outputs.
    #[command(after_help = help::RUN)]
    Run(commands::run::Args),
    /// Format text models in place, keeping every comment (`--check` and `--diff` write nothing).
    #[command(after_help = help::FMT)]
    Fmt(commands::fmt::Args),
    /// Cut out the sub-model that computes chosen outputs from chosen inputs.
    #[command(after_help = help::EXTRACT)]
    Extract(commands::extract::Args),
    /// Make dynamic dimensions fixed (`batch=1`, `x:1,3,224,224`), as onnxruntime's tool does.
    #[command(name = "set-dims", after_help = help::SET_DIMS)]
    SetDims(commands::set_dims::Args),
    /// Fold constants and known shapes, remove identities and dead nodes.
    #[command(after_help = help::SIMPLIFY)]
    Simplify(commands::simplify::Args),
    /// Count multiply-accumulates, parameters and activation memory, per operator and node.
    #[command(after_help = help::COST)]
    Cost(commands::cost::Args),
    /// Show what changed from one model to another, each change placed by name and line.
    #[command(after_help = help::DIFF)]
    Diff(commands::diff::Args),
    /// Convert a model's default-domain opset up or down, naming every node that blocks it.
    #[command(after_help = help::OPSET)]
    Opset(commands::opset::Args),
    /// Cut a model down to the fewest nodes on which a check still fails.
    #[command(after_help = help::REDUCE)]
    Reduce(commands::reduce::Args),
}

/// `onnx --version`: ours, and what the compiled-in onnx 1.23.2 schemas know (the newest IR
/// version and each domain's newest opset), the first thing to check against a model.
fn version_text() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(describe_version)
}

fn describe_version() -> String {
    let registry = onnx_core::schema::registry();
    let opsets: Vec<String> = registry
        .domain_versions
        .iter()
        .map(|(domain, v)| format!("{} {v}", if domain.is_empty() { "ai.onnx" } else { domain }))
        .collect();
    format!(
        "{} (onnx 1.23.2 semantics: IR version up to {}; opsets {})",
        env!("CARGO_PKG_VERSION"),
        registry.ir_version,
        opsets.join(", ")
    )
}

// The allocator of all our binaries (see the workspace Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    failure::install_panic_hook();
    // A mapped model truncated while read, or a write past `ulimit -f`: an error that names
    // the file and leaves no temporary, not a death by SIGBUS or SIGXFSZ.
    onnx_core::signals::install("onnx");
    // Destructors do not run when a signal ends the process: remove the temporary files of
    // unfinished writes ourselves (the targets were never touched).
    let _ = ctrlc::set_handler(|| {
        onnx_core::remove_unfinished();
        std::process::exit(130);
    });
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() { 2 } else { 0 };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    settings::set(settings::Settings { color: cli.color, quiet: cli.quiet, verbose: cli.verbose });
    let result = match cli.command {
        Command::Info(args) => commands::info::run(args),
        Command::Convert(args) => commands::convert::run(args),
        Command::Fmt(args) => commands::fmt::run(args),
        Command::Check(args) => commands::check::run(args),
        Command::Infer(args) => commands::infer::run(args),
        Command::Run(args) => commands::run::run(args),
        Command::Extract(args) => commands::extract::run(args),
        Command::SetDims(args) => commands::set_dims::run(args),
        Command::Cost(args) => commands::cost::run(args),
        Command::Diff(args) => commands::diff::run(args),
        Command::Reduce(args) => commands::reduce::run(args),
        Command::Opset(args) => commands::opset::run(args),
        Command::Simplify(args) => commands::simplify::run(args),
    };
    match result {
        Ok(()) => {
            json::finish(0, None);
            ExitCode::SUCCESS
        }
        Err(failure) => report(failure),
    }
}

/// Ends a failed run: the message on stderr, the `--json` object (if one was begun) on
/// stdout, and the exit code that classifies the failure.
fn report(failure: Failure) -> ExitCode {
    let (message, code) = match failure {
        Failure::Invalid(m) => (m, 1),
        Failure::Usage(m) => (m, 2),
    };
    errln!("error: {message}");
    json::finish(code, Some(&message));
    ExitCode::from(code)
}
