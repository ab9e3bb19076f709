//! How a command fails: a message for the user and the exit code that classifies it.

use onnx_core::binary::ReadError;

#[derive(Debug)]
pub enum Failure {
    /// The input is not a valid model (exit 1).
    Invalid(String),
    /// Bad usage, or a file that cannot be read or written (exit 2).
    Usage(String),
}

impl From<ReadError> for Failure {
    fn from(err: ReadError) -> Self {
        match err {
            ReadError::Io { .. } => Failure::Usage(err.to_string()),
            ReadError::Decode { .. } | ReadError::Truncated { .. } => Failure::Invalid(err.to_string()),
        }
    }
}

/// A last line of defence: should a bug panic anyway, say so in one line, without a
/// backtrace, and exit with 101 like Rust does.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let location = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        let payload = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        errln!(
            "internal error{location}: {payload}\nThis is a bug in onnx; please report it with the input that caused it."
        );
    }));
}
