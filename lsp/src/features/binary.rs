//! `onnx/binaryToText`: a binary model (`.onnx`, `.pb`) printed in our text format, so an
//! editor can open it as a document (the lossless printer of `onnx convert`); and
//! `onnx/convert`: text ⇄ binary conversion of a file, for editor commands.

use std::path::Path;

use onnx_core::analysis::{analyze_text, span_of};
use onnx_core::binary;
use onnx_core::diagnostic::Severity;
use onnx_core::print::{canonical, outline};
use onnx_core::write_atomically;
use serde::{Deserialize, Serialize};

use crate::lsp::Uri;
use crate::workspace::file_path;

#[derive(Debug, Deserialize, Serialize)]
pub struct BinaryToTextParams {
    /// A `file:` URI of the binary model.
    pub uri: Uri,
}

#[derive(Debug, Deserialize, Serialize)]
pub struct BinaryToTextResult {
    pub text: String,
}

/// Files the server reads are regular files: a FIFO would block a thread until someone
/// writes to it, and a device (`/dev/zero`) could be read without end.
fn regular_file(path: &Path) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(_) => Err(format!("{}: not a regular file", path.display())),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// The model's outline, as `onnx convert model.onnx model.onnxtxt` writes it: ONNX text whose
/// big tensors are references into the model file with their size and range in a comment. The
/// text is for a document beside the model; saved there, it converts back to the same file.
pub fn binary_to_text(params: &BinaryToTextParams) -> Result<BinaryToTextResult, String> {
    let path = file_path(&params.uri).ok_or_else(|| format!("{}: not a file URI", params.uri.as_str()))?;
    regular_file(&path)?;
    let label = path.display().to_string();
    // Read, not mapped: a model truncated while the server converts it (rewritten by
    // `onnx.save`) must be an error, not the server's death by SIGBUS.
    let data = binary::read_bytes_copied(&path).map_err(|e| format!("{label}: {e}"))?;
    if let Some(why) = binary::not_a_model(&data) {
        return Err(format!("{label}: {why}"));
    }
    let mut model = binary::decode_model(data.clone(), &label).map_err(|e| e.to_string())?;
    let layout = match path.file_name().and_then(|n| n.to_str()) {
        Some(location) => outline::refer_to_source(&mut model, &data, location, outline::DEFAULT_THRESHOLD, false),
        // A file name that is not UTF-8 cannot be a location: every number goes inline.
        None => canonical::Layout::default(),
    };
    let mut text = Vec::new();
    canonical::write_model_with(&model, &layout, &mut text).map_err(|e| e.to_string())?;
    Ok(BinaryToTextResult { text: String::from_utf8_lossy(&text).into_owned() })
}

#[derive(Debug, Deserialize, Serialize)]
pub struct ConvertParams {
    pub source: Uri,
    pub destination: Uri,
}

#[derive(Debug, Deserialize, Serialize)]
pub struct ConvertResult {
    /// The path written.
    pub destination: String,
    /// The rules of meaning the model breaks (`file:line: message`): it is converted as
    /// written all the same, as `onnx convert` does.
    #[serde(default)]
    pub warnings: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Binary,
    Text,
}

fn form_of(path: &Path) -> Result<Form, String> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("onnx" | "pb") => Ok(Form::Binary),
        Some("onnxtxt" | "onnxtext") => Ok(Form::Text),
        _ => Err(format!("{}: unknown model extension (expected .onnx, .pb, .onnxtxt or .onnxtext)", path.display())),
    }
}

/// `onnx/convert`: what `onnx convert SOURCE DESTINATION` does, for editors. A text model
/// with syntax errors (or any that keep it from saying one exact model) is not converted; one
/// that reads to a model breaking rules of meaning (undefined values, …) is, with those as
/// warnings. The destination is written atomically.
pub fn convert(params: &ConvertParams) -> Result<ConvertResult, String> {
    let source = file_path(&params.source).ok_or("the source is not a file URI")?;
    let destination = file_path(&params.destination).ok_or("the destination is not a file URI")?;
    regular_file(&source)?;
    let mut warnings = Vec::new();
    let model = match form_of(&source)? {
        Form::Binary => binary::read_model(&source).map_err(|e| e.to_string())?,
        Form::Text => {
            let text = std::fs::read_to_string(&source).map_err(|e| format!("{}: {e}", source.display()))?;
            let analysis = analyze_text(&text);
            let place = |d: &onnx_core::diagnostic::Diagnostic| {
                let offset = span_of(d.anchor).start as usize;
                let line = text.get(..offset).map_or(0, |t| t.matches('\n').count()) + 1;
                format!("{}:{line}: {}", source.display(), d.message)
            };
            let errors = analysis.diagnostics.iter().filter(|d| d.severity == Severity::Error);
            if !analysis.readable
                && let Some(first) = errors.clone().next()
            {
                return Err(format!("{} (fix the errors first)", place(first)));
            }
            warnings = errors.map(place).collect();
            analysis.model
        }
    };
    let source_dir = binary::model_dir(&source);
    let mut model = model;
    if form_of(&destination)? == Form::Binary {
        // As `onnx convert` does: an outline's references into a model file are read back in.
        onnx_core::external::embed_where(&mut model, Some(source_dir.clone()), onnx_core::external::is_model_file)
            .map_err(|e| format!("{}: {e}", source.display()))?;
    }
    // As `onnx convert` does: never write over the source or a side file it refers to, and
    // never move a model away from the side files its references are relative to.
    let side_files = onnx_core::external::referenced_files(&model, &source_dir);
    let mut protected = side_files.clone();
    protected.push(source.clone());
    if let Some(file) = onnx_core::overwritten(&destination, &protected) {
        return Err(format!(
            "{}: refusing to write over {}, which holds the model being read or data it refers to",
            destination.display(),
            file.display()
        ));
    }
    if !side_files.is_empty() && !binary::same_directory(&source_dir, &binary::model_dir(&destination)) {
        return Err(format!(
            "{}: the model keeps tensor data in files beside it; converting it to another directory \
             would break those references (run `onnx convert --embed-external` first)",
            source.display()
        ));
    }
    let bytes = match form_of(&destination)? {
        Form::Binary => {
            let encoded = binary::encode_model_spliced(&model);
            if let Some(why) = binary::unwritable(&model, encoded.len()) {
                return Err(format!("{}: not written: {why}", destination.display()));
            }
            encoded.to_vec()
        }
        Form::Text => canonical::model(&model).into_bytes(),
    };
    write_atomically(&destination, |out| out.write_all(&bytes)).map_err(|e| e.to_string())?;
    Ok(ConvertResult { destination: destination.display().to_string(), warnings })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn uri(path: &Path) -> Uri {
        Uri::from_file_path(path).unwrap()
    }

    #[test]
    fn convert_goes_text_to_binary_to_text_and_refuses_broken_text() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("m.onnxtxt");
        std::fs::write(
            &text,
            "<ir_version: 10, opset_import: [\"\" : 21]>\nmain (float[N] x) => (float[N] y) {\n  y = Relu(x)\n}\n",
        )
        .unwrap();
        let binary = dir.path().join("m.onnx");
        convert(&ConvertParams { source: uri(&text), destination: uri(&binary) }).unwrap();
        let back = binary_to_text(&BinaryToTextParams { uri: uri(&binary) }).unwrap().text;
        assert!(back.contains("y = Relu (x)"), "{back}");
        let again = dir.path().join("again.onnxtxt");
        convert(&ConvertParams { source: uri(&binary), destination: uri(&again) }).unwrap();
        assert_eq!(std::fs::read_to_string(&again).unwrap(), back);

        std::fs::write(&text, "main (float x) => (float y) {\n  y = Relu(\n}\n").unwrap();
        let refused = convert(&ConvertParams { source: uri(&text), destination: uri(&binary) }).unwrap_err();
        assert!(refused.contains("m.onnxtxt:3:"), "{refused}");
        assert!(refused.contains("fix the errors first"), "{refused}");
        let wrong = convert(&ConvertParams { source: uri(&binary), destination: uri(&dir.path().join("m.txt")) });
        assert!(wrong.unwrap_err().contains("unknown model extension"));
    }
}
