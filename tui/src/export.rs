//! Exporting a value as a `.npy` file from the tensor viewer. The name is the program's
//! choice, not the user's, so an export never replaces a file: when `NAME.npy` exists it
//! takes `NAME-2.npy`, `NAME-3.npy`, … (each written whole beside it and given its name only
//! if the name is still free), and what it says names the file it wrote, in full.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use onnx_core::WriteOptions;
use onnx_eval::value::Tensor;

/// How many numbered names are tried before the export gives up.
const NAMES_TRIED: usize = 999;

/// The file a value named `name` is exported to by default: `NAME.npy` in the working
/// directory, with every character but ASCII letters, digits and `_` made `_`.
pub fn default_file(name: &str) -> PathBuf {
    let safe: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    PathBuf::from(format!("{safe}.npy"))
}

/// Writes `tensor` as `.npy` to `wanted` or, when that exists, to the first free numbered
/// name beside it; says what happened, naming the file by its absolute path.
pub fn export(wanted: &Path, tensor: &Tensor) -> String {
    let bytes = match onnx_eval::npy::encode(tensor) {
        Ok(bytes) => bytes,
        Err(e) => return format!("export failed: {e}"),
    };
    match write_new(wanted, &bytes) {
        Ok(path) => {
            let shown = std::path::absolute(&path).unwrap_or(path.clone());
            let kept = if path == wanted { String::new() } else { format!(" ({} exists, kept)", wanted.display()) };
            format!("wrote {}{kept}", shown.display())
        }
        Err(why) => format!("export failed: {why}"),
    }
}

/// Writes `bytes` to `wanted` or, when that exists, to the first free numbered name beside
/// it (each written whole and given its name only if the name is still free): the file
/// written, or why none was.
fn write_new(wanted: &Path, bytes: &[u8]) -> Result<PathBuf, String> {
    let options = WriteOptions { new_file_only: true, ..WriteOptions::default() };
    for path in candidates(wanted).take(NAMES_TRIED) {
        match onnx_core::write_file(&path, options, |out| out.write_all(bytes)) {
            Ok(()) => return Ok(path),
            Err(e) if e.source.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Err(format!("{} and {NAMES_TRIED} numbered names beside it exist", wanted.display()))
}

/// The file the simplified model of `label` goes to by default: `STEM.simplified.onnx` in
/// the working directory.
pub fn simplified_file(label: &str) -> PathBuf {
    let stem = Path::new(label).file_stem().map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}.simplified.onnx"))
}

/// Writes `model` simplified (`onnx simplify`'s passes, folding with the evaluator's kernels)
/// as a binary model to `wanted` or, when that exists, the first free numbered name beside
/// it; says how many nodes it kept and where it wrote them. A model with tensors in external
/// files is not written (the copy elsewhere would lose them).
pub fn simplified(wanted: &Path, model: &onnx_core::ir::Model) -> String {
    if onnx_core::external::external_tensors(model).next().is_some() {
        return "simplify: the model keeps tensors in external files; run `onnx simplify IN OUT` beside it".into();
    }
    let mut copy = model.clone();
    let options = onnx_core::simplify::Options::default();
    let done = onnx_core::simplify::simplify(&mut copy, &onnx_eval::fold::Kernels, options);
    let bytes = onnx_core::binary::encode_model(&copy);
    if let Some(why) = onnx_core::binary::unwritable(&copy, bytes.len()) {
        return format!("simplify: cannot write it: {why}");
    }
    match write_new(wanted, &bytes) {
        Ok(path) => {
            let shown = std::path::absolute(&path).unwrap_or(path.clone());
            format!("simplified: {} → {} nodes, wrote {}", done.nodes_before, done.nodes_after, shown.display())
        }
        Err(why) => format!("simplify failed: {why}"),
    }
}

/// Converts `model` to default-domain opset `target` (`onnx opset`) and writes it as a
/// binary model to `file`, or `STEM.opsetN.onnx` beside where the browser runs (the first
/// free numbered name when taken); says what it did. The nodes that block the conversion
/// come back as the error.
pub fn opset_converted(
    model: &onnx_core::ir::Model,
    label: &str,
    target: i64,
    file: Option<PathBuf>,
) -> Result<String, onnx_core::opset::OpsetError> {
    if onnx_core::external::external_tensors(model).next().is_some() {
        return Ok("opset: the model keeps tensors in external files; run `onnx opset IN OUT --to N` beside it".into());
    }
    let mut copy = model.clone();
    let done = onnx_core::opset::convert(&mut copy, target)?;
    let wanted = file.unwrap_or_else(|| {
        let stem = Path::new(label).file_stem().map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned());
        PathBuf::from(format!("{stem}.opset{target}.onnx"))
    });
    let bytes = onnx_core::binary::encode_model(&copy);
    if let Some(why) = onnx_core::binary::unwritable(&copy, bytes.len()) {
        return Ok(format!("opset: cannot write it: {why}"));
    }
    Ok(match write_new(&wanted, &bytes) {
        Ok(path) => {
            let shown = std::path::absolute(&path).unwrap_or(path.clone());
            format!(
                "opset {} → {}: {} node(s) changed, {} added; wrote {}",
                done.from,
                done.to,
                done.changed,
                done.added,
                shown.display()
            )
        }
        Err(why) => format!("opset failed: {why}"),
    })
}

/// `wanted`, then `STEM-2.EXT`, `STEM-3.EXT`, … beside it.
fn candidates(wanted: &Path) -> impl Iterator<Item = PathBuf> + '_ {
    let stem = wanted.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let extension = wanted.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    std::iter::once(wanted.to_owned())
        .chain((2..).map(move |n| wanted.with_file_name(format!("{stem}-{n}{extension}"))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use onnx_eval::value::Data;

    fn tensor(values: Vec<f32>) -> Tensor {
        Tensor::new(vec![values.len()], Data::F32(values.into()))
    }

    #[test]
    fn an_export_takes_a_free_name_and_keeps_every_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let wanted = dir.path().join("logits.npy");
        std::fs::write(&wanted, "mine").expect("written");
        std::fs::write(dir.path().join("logits-2.npy"), "mine too").expect("written");
        let said = export(&wanted, &tensor(vec![1.0, 2.0]));
        let written = dir.path().join("logits-3.npy");
        assert_eq!(said, format!("wrote {} ({} exists, kept)", written.display(), wanted.display()));
        assert_eq!(std::fs::read_to_string(&wanted).expect("readable"), "mine");
        assert_eq!(std::fs::read_to_string(dir.path().join("logits-2.npy")).expect("readable"), "mine too");
        let back = onnx_eval::npy::decode(&std::fs::read(&written).expect("readable")).expect("a .npy file");
        assert_eq!(back.to_f64s().expect("numbers"), vec![1.0, 2.0]);
    }

    #[test]
    fn a_failed_export_says_why() {
        let dir = tempfile::tempdir().expect("temp dir");
        let said = export(&dir.path().join("missing").join("x.npy"), &tensor(vec![1.0]));
        assert!(said.starts_with("export failed: ") && said.contains("does not exist"), "{said}");
    }

    /// `:simplify` writes the simplified model beside a file it keeps, as a binary model that
    /// reads back with the node count it reports.
    #[test]
    fn a_simplified_model_takes_a_free_name() {
        let dir = tempfile::tempdir().expect("temp dir");
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/real/pt_ts_sdp.onnx");
        let model = onnx_core::binary::read_model(&corpus).expect("a corpus model");
        let wanted = dir.path().join("sdp.simplified.onnx");
        std::fs::write(&wanted, "mine").expect("written");
        let said = simplified(&wanted, &model);
        let written = dir.path().join("sdp.simplified-2.onnx");
        assert_eq!(said, format!("simplified: 27 → 12 nodes, wrote {}", written.display()));
        assert_eq!(std::fs::read_to_string(&wanted).expect("readable"), "mine");
        let back = onnx_core::binary::read_model(&written).expect("a model");
        assert_eq!(back.main_graph().expect("a graph").nodes.len(), 12);
        assert_eq!(simplified_file("models/sdp.onnxtxt"), PathBuf::from("sdp.simplified.onnx"));
    }
}
