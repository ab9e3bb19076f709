//! `onnx opset` as a user runs it: a model keeping its weights in an external file converts
//! beside it without reading them in (and computes the same), `--json` says what was done,
//! and a conversion some node blocks writes nothing and lists every blocker.

#![allow(clippy::unwrap_used)]

use std::process::{Command, Output};

use onnx_tests::corpus_file;
use serde_json::Value;

fn onnx(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_onnx")).args(args).output().unwrap()
}

fn ok(out: &Output) {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_model_with_external_weights_converts_beside_them_and_computes_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let model = corpus_file("../fixtures/run/cntk_mnist_conv");
    let source = corpus_file("real/cntk_mnist_conv.onnx");
    let ext = dir.path().join("ext.onnx");
    ok(&onnx(&["convert", source.to_str().unwrap(), ext.to_str().unwrap(), "--external-data", "ext.bin"]));
    let weights = std::fs::read(dir.path().join("ext.bin")).unwrap();
    let converted = dir.path().join("ext17.onnx");
    ok(&onnx(&["opset", ext.to_str().unwrap(), converted.to_str().unwrap(), "--to", "17"]));
    // The weights stay where they were, untouched, and the converted model refers to them.
    assert!(std::fs::metadata(&converted).unwrap().len() < 4096, "the weights were copied in");
    assert_eq!(std::fs::read(dir.path().join("ext.bin")).unwrap(), weights);
    // It computes what the original computes on the committed inputs.
    let expected = dir.path().join("expected");
    let data = model.to_str().unwrap();
    ok(&onnx(&["run", source.to_str().unwrap(), "--test-data", data, "--output-dir", expected.to_str().unwrap()]));
    ok(&onnx(&["run", converted.to_str().unwrap(), "--test-data", data, "--compare", expected.to_str().unwrap()]));
    // Written elsewhere, the references would break: refused, nothing written.
    let elsewhere = tempfile::tempdir().unwrap();
    let moved = elsewhere.path().join("moved.onnx");
    let out = onnx(&["opset", ext.to_str().unwrap(), moved.to_str().unwrap(), "--to", "17"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!moved.exists());
}

#[test]
fn json_says_what_was_done_or_what_blocks_it() {
    let dir = tempfile::tempdir().unwrap();
    let model = "cli/tests/fixtures/commands/opset_old.onnxtxt";
    let model = corpus_file(&format!("../../{model}"));
    let out_path = dir.path().join("old9.onnx");
    let out = onnx(&["opset", model.to_str().unwrap(), out_path.to_str().unwrap(), "--to", "9", "--json"]);
    ok(&out);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["command"], "opset", "{report}");
    assert_eq!((report["from"].as_i64(), report["to"].as_i64()), (Some(13), Some(9)), "{report}");
    assert_eq!(report["changed"].as_u64(), Some(4), "{report}");
    assert_eq!(report["notes"].as_array().map(Vec::len), Some(0), "{report}");
    assert!(out_path.exists());

    let blocked = dir.path().join("never.onnx");
    let model = corpus_file("../../cli/tests/fixtures/commands/opset_model.onnxtxt");
    let out = onnx(&["opset", model.to_str().unwrap(), blocked.to_str().unwrap(), "--to", "9", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let blockers = report["blockers"].as_array().unwrap();
    assert_eq!(blockers.len(), 1, "{report}");
    assert_eq!(blockers[0]["node"], "'sample'", "{report}");
    assert_eq!(blockers[0]["op"], "GridSample", "{report}");
    assert!(blockers[0]["reason"].as_str().unwrap().contains("only from opset 16"), "{report}");
    assert!(!blocked.exists(), "a blocked conversion wrote a file");
}
