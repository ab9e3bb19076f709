//! The options every subcommand shares (`--color`, `-q`, `-v`), set once from the command
//! line and read wherever output is made: reports, progress, informational lines.

use std::io::IsTerminal as _;
use std::sync::OnceLock;
use std::time::Instant;

/// When reports use colour.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Color {
    /// When stderr is a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    Always,
    Never,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Settings {
    pub color: Color,
    /// No progress and no informational lines: only results, warnings and errors.
    pub quiet: bool,
    /// Also how long each phase took, on stderr.
    pub verbose: bool,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// Sets the options once, from the command line.
pub fn set(settings: Settings) {
    let _ = SETTINGS.set(settings);
}

pub fn get() -> Settings {
    SETTINGS.get().copied().unwrap_or_default()
}

/// Whether reports on stderr are coloured.
pub fn colored() -> bool {
    match get().color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

/// A phase of work; with `-v`, says on stderr how long it took when dropped.
pub struct Phase {
    what: String,
    started: Instant,
}

pub fn phase(what: impl Into<String>) -> Phase {
    Phase { what: what.into(), started: Instant::now() }
}

impl Drop for Phase {
    fn drop(&mut self) {
        if get().verbose {
            errln!("onnx: {} in {:.1} ms", self.what, self.started.elapsed().as_secs_f64() * 1e3);
        }
    }
}
