//! onnx's own parser reads the canonical text we print, and the outline beside a binary model
//! (its big tensors by reference), for every corpus model (the backend
//! node tests, the hand-built models and the real exported ones): wherever onnx's grammar can
//! say a construct, the canonical text says it onnx's way, and what onnx cannot say is in
//! `#@` annotations, which onnx reads as comments. The few models it cannot read are listed
//! with the construct onnx's grammar has no way to write; the test fails when one of them
//! starts to parse (so the list stays true) or another fails.
//!
//! Runs `tests/onnx_parse_texts.py` with onnx 1.23.2: the Python of `ONNX_PYTHON`, else the
//! repository's `.venv` (made by `.ci/run`), else `python3`. Without onnx it fails in CI and
//! is skipped elsewhere, saying so.

use std::path::Path;
use std::process::Command;

use bytes::Bytes;
use onnx_core::print::outline;
use onnx_core::{binary, print};
use onnx_tests::{corpus_dir, corpus_models};

/// Models whose canonical text onnx cannot parse, and the construct its grammar lacks.
const ONNX_CANNOT_READ: &[(&str, &str)] = &[
    ("handmade/all_fields.onnxtxt", "a string attribute holding a NUL byte (a byte string b\"…\")"),
    ("handmade/non_utf8.onnxtxt", "names that are not UTF-8 (byte strings b\"…\")"),
];

/// Runs `onnx_parse_texts.py` over `dir` and checks its report against `ONNX_CANNOT_READ`;
/// returns how many texts it read.
fn onnx_reads_the_texts_in(python: &Path, dir: &Path, printed: usize) -> usize {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("onnx_parse_texts.py");
    let out = Command::new(python).arg(&script).arg(dir).output().expect("python runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = String::from_utf8(out.stdout).expect("UTF-8 report");
    let mut read = 0;
    let mut failures = Vec::new();
    for line in report.lines() {
        let mut cols = line.splitn(3, '\t');
        let (Some(rel), Some(status)) = (cols.next(), cols.next()) else { panic!("bad line: {line}") };
        let listed = ONNX_CANNOT_READ.iter().any(|(m, _)| *m == rel);
        match (status, listed) {
            ("ok", false) => {}
            ("ok", true) => failures.push(format!("{rel}: onnx now reads it: remove it from ONNX_CANNOT_READ")),
            (_, true) => {}
            (_, false) => failures.push(format!("{rel}: onnx cannot read it: {}", cols.next().unwrap_or_default())),
        }
        read += 1;
    }
    assert_eq!(read, printed, "the script did not report every text");
    assert!(failures.is_empty(), "{} of {read}:\n{}", failures.len(), failures.join("\n"));
    read
}

#[test]
fn onnx_parses_the_canonical_text_of_every_corpus_model() {
    let Some(python) = onnx_tests::reference_python_or_skip("onnx_parses_the_canonical_text_of_every_corpus_model")
    else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let mut printed = 0;
    for path in corpus_models() {
        let rel = path.strip_prefix(corpus_dir()).expect("in corpus");
        let data = std::fs::read(&path).expect("readable");
        let model = binary::decode_model(Bytes::from(data), &rel.to_string_lossy()).expect("decodes");
        let out = dir.path().join(rel).with_extension("onnxtxt");
        std::fs::create_dir_all(out.parent().expect("has a folder")).expect("folder");
        std::fs::write(&out, print::canonical::model(&model)).expect("written");
        printed += 1;
    }
    let read = onnx_reads_the_texts_in(&python, dir.path(), printed);
    assert!(read >= 1900, "only {read} texts: the corpus is missing");
}

/// The outline `onnx convert model.onnx model.onnxtxt` writes beside every corpus model with
/// a tensor of 1 KiB or more is ONNX text: onnx's parser reads it, and once onnx loads the
/// external references into the model, every tensor holds the binary model's values.
#[test]
fn onnx_reads_the_outline_of_every_corpus_model_with_big_tensors() {
    let Some(python) =
        onnx_tests::reference_python_or_skip("onnx_reads_the_outline_of_every_corpus_model_with_big_tensors")
    else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut printed, mut references) = (0, 0);
    for path in corpus_models() {
        let rel = path.strip_prefix(corpus_dir()).expect("in corpus");
        let data = Bytes::from(std::fs::read(&path).expect("readable"));
        let mut model = binary::decode_model(data.clone(), &rel.to_string_lossy()).expect("decodes");
        let copy = dir.path().join(rel);
        let location = copy.file_name().and_then(|n| n.to_str()).expect("a UTF-8 name").to_owned();
        let layout = outline::refer_to_source(&mut model, &data, &location, outline::DEFAULT_THRESHOLD, false);
        if layout.digests.is_empty() {
            continue;
        }
        references += layout.digests.len();
        std::fs::create_dir_all(copy.parent().expect("has a folder")).expect("folder");
        std::fs::write(&copy, &data).expect("copied");
        let mut text = Vec::new();
        print::canonical::write_model_with(&model, &layout, &mut text).expect("printed");
        std::fs::write(copy.with_extension("onnxtxt"), text).expect("written");
        printed += 1;
    }
    let read = onnx_reads_the_texts_in(&python, dir.path(), printed);
    assert!(read >= 60, "only {read} outlines: the real and contrib corpora are missing");
    assert!(references >= 1000, "only {references} tensors by reference");
}
