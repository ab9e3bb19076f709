//! Opening a model: binary protobuf or ONNX text, told apart by extension or, failing
//! that, by content. A text with errors still opens, with its diagnostics, so that the
//! browser can show what is wrong; a file that cannot be read at all is an error naming it.

use std::path::{Path, PathBuf};

use onnx_core::analysis::{Progress, analyze_text_with_progress};
use onnx_core::binary;
use onnx_core::diagnostic::Diagnostic;
use onnx_core::ir::Model;

/// A model as the browser opened it.
#[derive(Debug)]
pub struct Loaded {
    /// The path as given, for the title and messages.
    pub label: String,
    pub model: Model,
    /// The directory external data is resolved against.
    pub model_dir: Option<PathBuf>,
    /// For a text model: its source, and what its analysis found (syntax and name errors,
    /// placed in the text).
    pub text: Option<TextSource>,
}

#[derive(Debug)]
pub struct TextSource {
    pub source: String,
    pub diagnostics: Vec<Diagnostic>,
    /// The text reads as exactly one model (no syntax or lowering error).
    pub readable: bool,
}

/// Reads `path`. The error is a whole sentence naming the file.
pub fn load(path: &Path) -> Result<Loaded, String> {
    load_with_progress(path, None)
}

/// [`load`], recording in `progress` how far reading a text model has come (a big text
/// takes seconds: `main.rs` shows it before the first frame).
pub fn load_with_progress(path: &Path, progress: Option<&Progress>) -> Result<Loaded, String> {
    let label = path.display().to_string();
    // Read, not mapped: the browser holds the model for as long as it is open, and a model
    // rewritten meanwhile (exported again) must not take it down.
    let data = binary::read_bytes_copied(path).map_err(|e| format!("{label}: cannot read: {e}"))?;
    if let Some(why) = binary::not_a_model(&data) {
        return Err(format!("{label}: {why}"));
    }
    let text = match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("onnxtxt" | "onnxtext" | "txt") => true,
        Some("onnx" | "pb") => false,
        _ => binary::looks_like_text(&data),
    };
    let model_dir = Some(binary::model_dir(path));
    if !text {
        let model = binary::decode_model(data, &label).map_err(|e| e.to_string())?;
        return Ok(Loaded { label, model, model_dir, text: None });
    }
    let source = std::str::from_utf8(&data)
        .map_err(|e| format!("{label}: not UTF-8 text (invalid byte at offset {})", e.valid_up_to()))?
        .to_owned();
    Ok(Loaded { model_dir, ..text_model(&label, &source, progress) })
}

/// A model given as text, for tests and for `-` (nothing read from disk).
pub fn from_text(label: &str, source: &str) -> Loaded {
    text_model(label, source, None)
}

fn text_model(label: &str, source: &str, progress: Option<&Progress>) -> Loaded {
    let analysis = analyze_text_with_progress(source, progress);
    let text = TextSource { diagnostics: analysis.diagnostics, readable: analysis.readable, source: source.to_owned() };
    Loaded { label: label.to_owned(), model: analysis.model, model_dir: None, text: Some(text) }
}
