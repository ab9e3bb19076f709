//! `onnx/binaryToText`: a binary model (`.onnx`, `.pb`) printed in our text format, so an
//! editor can open it as a document (the lossless printer of `onnx convert`);
//! `onnx/saveBinary`: such a document written back as the binary model; and `onnx/convert`:
//! text ⇄ binary conversion of a file, for editor commands.

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
/// warnings. A binary model converted to text beside it becomes its outline (big tensors by
/// reference into it), as the CLI writes it. The destination is written atomically.
pub fn convert(params: &ConvertParams) -> Result<ConvertResult, String> {
    let source = file_path(&params.source).ok_or("the source is not a file URI")?;
    let destination = file_path(&params.destination).ok_or("the destination is not a file URI")?;
    regular_file(&source)?;
    let source_dir = binary::model_dir(&source);
    let (mut model, warnings, bytes) = match form_of(&source)? {
        Form::Binary => {
            let data = binary::read_bytes_copied(&source).map_err(|e| format!("{}: {e}", source.display()))?;
            let label = source.display().to_string();
            (binary::decode_model(data.clone(), &label).map_err(|e| e.to_string())?, Vec::new(), Some(data))
        }
        Form::Text => {
            let text = std::fs::read_to_string(&source).map_err(|e| format!("{}: {e}", source.display()))?;
            let (model, warnings) = model_of_text(&text, &source.display().to_string())?;
            (model, warnings, None)
        }
    };
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
    let same_dir = binary::same_directory(&source_dir, &binary::model_dir(&destination));
    if !side_files.is_empty() && !same_dir {
        return Err(format!(
            "{}: the model keeps tensor data in files beside it; converting it to another directory \
             would break those references (run `onnx convert --embed-external` first)",
            source.display()
        ));
    }
    let text = match (form_of(&destination)?, bytes) {
        (Form::Binary, _) => return write_binary(&model, &destination, warnings),
        // Beside its binary: the outline, whose references read the tensors from it.
        (Form::Text, Some(data)) if same_dir => {
            let location = source.file_name().and_then(|n| n.to_str());
            let layout = match location {
                Some(location) => {
                    outline::refer_to_source(&mut model, &data, location, outline::DEFAULT_THRESHOLD, false)
                }
                None => canonical::Layout::default(),
            };
            let mut text = Vec::new();
            canonical::write_model_with(&model, &layout, &mut text).map_err(|e| e.to_string())?;
            text
        }
        (Form::Text, _) => canonical::model(&model).into_bytes(),
    };
    write_atomically(&destination, |out| out.write_all(&text)).map_err(|e| e.to_string())?;
    Ok(ConvertResult { destination: destination.display().to_string(), warnings })
}

#[derive(Debug, Deserialize, Serialize)]
pub struct SaveBinaryParams {
    /// The text of the model (an editor's document, saved or not).
    pub text: String,
    /// A `file:` URI of the binary model to write (`.onnx`, `.pb`).
    pub destination: Uri,
}

/// `onnx/saveBinary`: the text of a document written as the binary model `destination`, the
/// way a binary model opened as text is saved back. References into model files (the
/// outline's, relative to the destination's directory, the destination itself included) are
/// read in first; other side files stay external and are never written over. Refused, with
/// nothing written, when the text has syntax errors; the write is atomic (a temporary file
/// beside it, renamed over it).
pub fn save_binary(params: &SaveBinaryParams) -> Result<ConvertResult, String> {
    let destination = file_path(&params.destination).ok_or("the destination is not a file URI")?;
    if form_of(&destination)? != Form::Binary {
        return Err(format!("{}: not a binary model's name (.onnx or .pb)", destination.display()));
    }
    let (mut model, warnings) = model_of_text(&params.text, &destination.display().to_string())?;
    let dir = binary::model_dir(&destination);
    onnx_core::external::embed_where(&mut model, Some(dir.clone()), onnx_core::external::is_model_file)
        .map_err(|e| format!("{}: {e}", destination.display()))?;
    let side_files = onnx_core::external::referenced_files(&model, &dir);
    if let Some(file) = onnx_core::overwritten(&destination, &side_files) {
        return Err(format!(
            "{}: refusing to write over {}, which holds tensor data the model refers to",
            destination.display(),
            file.display()
        ));
    }
    write_binary(&model, &destination, warnings)
}

/// The model a text says, with the rules of meaning it breaks as `label:line: message`
/// warnings; an error when the text does not say one exact model (syntax errors).
fn model_of_text(text: &str, label: &str) -> Result<(onnx_core::ir::Model, Vec<String>), String> {
    let analysis = analyze_text(text);
    let place = |d: &onnx_core::diagnostic::Diagnostic| {
        let offset = span_of(d.anchor).start as usize;
        let line = text.get(..offset).map_or(0, |t| t.matches('\n').count()) + 1;
        format!("{label}:{line}: {}", d.message)
    };
    let errors = analysis.diagnostics.iter().filter(|d| d.severity == Severity::Error);
    if !analysis.readable
        && let Some(first) = errors.clone().next()
    {
        return Err(format!("{} (fix the errors first)", place(first)));
    }
    let warnings = errors.map(place).collect();
    Ok((analysis.model, warnings))
}

fn write_binary(
    model: &onnx_core::ir::Model,
    destination: &Path,
    warnings: Vec<String>,
) -> Result<ConvertResult, String> {
    let encoded = binary::encode_model_spliced(model);
    if let Some(why) = binary::unwritable(model, encoded.len()) {
        return Err(format!("{}: not written: {why}", destination.display()));
    }
    write_atomically(destination, |out| encoded.write_to(out)).map_err(|e| e.to_string())?;
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

    /// A model with a 4 KiB weight, as a binary file in `dir`.
    fn model_with_weight(dir: &Path) -> std::path::PathBuf {
        let values = (0..1024).map(|i| format!("{}", i % 7)).collect::<Vec<_>>().join(", ");
        let text = dir.join("w.onnxtxt");
        std::fs::write(
            &text,
            format!(
                "<ir_version: 10, opset_import: [\"\" : 21]>\nmain (float[1024] x) => (float[1024] y) \
                 <float[1024] w = {{{values}}}> {{\n  y = Add(x, w)\n}}\n"
            ),
        )
        .unwrap();
        let binary = dir.join("w.onnx");
        convert(&ConvertParams { source: uri(&text), destination: uri(&binary) }).unwrap();
        std::fs::remove_file(&text).unwrap();
        binary
    }

    #[test]
    fn a_binary_opened_as_text_is_saved_back_over_itself() {
        let dir = tempfile::tempdir().unwrap();
        let binary = model_with_weight(dir.path());
        let before = binary::read_model(&binary).unwrap();
        let outline = binary_to_text(&BinaryToTextParams { uri: uri(&binary) }).unwrap().text;
        assert!(outline.contains("\"location\": \"w.onnx\""), "{outline}");
        // Edited: the node changes, the weight stays a reference into the file being replaced.
        let edited = outline.replace("y = Add (x, w)", "y = Sub (x, w)");
        assert_ne!(edited, outline);
        let saved = save_binary(&SaveBinaryParams { text: edited, destination: uri(&binary) }).unwrap();
        assert!(saved.warnings.is_empty(), "{:?}", saved.warnings);
        let after = binary::read_model(&binary).unwrap();
        let op = |m: &onnx_core::ir::Model| m.nodes.iter().next().and_then(|(_, n)| n.op_type.clone()).unwrap();
        assert_eq!(op(&after).escaped(), "Sub");
        let weight = |m: &onnx_core::ir::Model| m.tensors.iter().next().map(|(_, t)| t.raw_data.clone()).unwrap();
        assert_eq!(weight(&after), weight(&before), "the weight's bytes");
        // Text that does not read is refused, and the file is left as it was.
        let bytes = std::fs::read(&binary).unwrap();
        let broken = outline.replace("y = Add (x, w)", "y = Add (x, ");
        let refused = save_binary(&SaveBinaryParams { text: broken, destination: uri(&binary) }).unwrap_err();
        assert!(refused.contains("fix the errors first"), "{refused}");
        assert_eq!(std::fs::read(&binary).unwrap(), bytes);
        // Only binary names are written.
        let wrong = save_binary(&SaveBinaryParams { text: outline, destination: uri(&dir.path().join("w.onnxtxt")) });
        assert!(wrong.unwrap_err().contains("not a binary model's name"));
    }

    #[test]
    fn a_binary_converted_to_text_beside_it_becomes_its_outline() {
        let dir = tempfile::tempdir().unwrap();
        let binary = model_with_weight(dir.path());
        let text = dir.path().join("w.onnxtxt");
        convert(&ConvertParams { source: uri(&binary), destination: uri(&text) }).unwrap();
        let written = std::fs::read_to_string(&text).unwrap();
        assert!(written.contains("\"location\": \"w.onnx\"") && written.len() < 1000, "{written}");
        // Elsewhere, every number goes in.
        std::fs::create_dir(dir.path().join("away")).unwrap();
        let away = dir.path().join("away/w.onnxtxt");
        convert(&ConvertParams { source: uri(&binary), destination: uri(&away) }).unwrap();
        assert!(!std::fs::read_to_string(&away).unwrap().contains("location"));
    }

    #[test]
    fn the_text_of_a_binary_lies_beside_it() {
        let text_of: Uri = "onnx-text:///models/resnet.onnx.onnxtxt".parse().unwrap();
        assert_eq!(file_path(&text_of), Some(std::path::PathBuf::from("/models/resnet.onnx.onnxtxt")));
        assert_eq!(crate::workspace::model_dir(&text_of), Some(std::path::PathBuf::from("/models")));
        let other: Uri = "untitled:Untitled-1".parse().unwrap();
        assert_eq!(file_path(&other), None);
    }
}
