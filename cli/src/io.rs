//! Reading models from files or stdin and writing them to files (atomically) or stdout.

use std::io::Write;
use std::path::{Path, PathBuf};

use onnx_core::binary;
use onnx_core::ir::Model;

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
    Binary,
}

/// The format a path's extension names.
pub fn format_of(path: &Path) -> Result<Format, Failure> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("onnx" | "pb") => Ok(Format::Binary),
        Some("onnxtxt" | "onnxtext") => Err(Failure::Usage(format!(
            "{}: the ONNX text format is not supported yet; use a binary .onnx or .pb file",
            path.display()
        ))),
        _ => Err(Failure::Usage(format!(
            "{}: cannot tell the format from the extension (expected .onnx or .pb)",
            path.display()
        ))),
    }
}

pub fn read_model(input: &Input) -> Result<Model, Failure> {
    match input {
        Input::File(path) => {
            format_of(path)?;
            let _progress = crate::progress::stage_for_file(path, "reading");
            Ok(binary::read_model(path)?)
        }
        Input::Stdin => {
            let data = binary::read_stdin().map_err(|e| Failure::Usage(format!("<stdin>: cannot read: {e}")))?;
            Ok(binary::decode_model(data, "<stdin>")?)
        }
    }
}

/// Writes encoded bytes to a file atomically, or to stdout for `-`.
pub fn write_output(output: &str, bytes: &[u8]) -> Result<(), Failure> {
    if output == "-" {
        let mut stdout = std::io::stdout().lock();
        return stdout
            .write_all(bytes)
            .and_then(|()| stdout.flush())
            .map_err(|e| Failure::Usage(format!("<stdout>: cannot write: {e}")));
    }
    let path = Path::new(output);
    let _progress = crate::progress::stage_for_len(bytes.len() as u64, &format!("writing {}", path.display()));
    onnx_core::write_atomically(path, |w| w.write_all(bytes)).map_err(|e| Failure::Usage(e.to_string()))
}
