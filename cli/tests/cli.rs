//! The `onnx` binary as a user meets it: output, exit codes (0 ok, 1 invalid input, 2 usage
//! or I/O), messages that name the file, and outputs that are never half-written.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use onnx_tests::corpus_file;

fn onnx() -> Command {
    Command::new(env!("CARGO_BIN_EXE_onnx"))
}

fn run(args: &[&str]) -> Output {
    onnx().args(args).output().expect("onnx runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[track_caller]
fn assert_exit(out: &Output, code: i32) {
    assert_eq!(out.status.code(), Some(code), "stdout:\n{}\nstderr:\n{}", text(&out.stdout), text(&out.stderr));
}

#[test]
fn info_prints_the_model_at_a_glance() {
    let model = corpus_file("node/test_if_seq/model.onnx");
    let out = run(&["info", model.to_str().unwrap()]);
    assert_exit(&out, 0);
    let stdout = text(&out.stdout);
    for expected in [
        "ir_version      7",
        "opset_import    ai.onnx 13",
        "producer        backend-test",
        "inputs          cond: bool",
        "outputs         res: seq(float[])",
        "nodes           1 in the main graph, 5 in all",
        "subgraphs       2",
        "op types        Constant 2, SequenceConstruct 2, If 1",
    ] {
        assert!(stdout.contains(expected), "missing {expected:?} in:\n{stdout}");
    }
}

#[test]
fn info_json_is_machine_readable() {
    let model = corpus_file("node/test_conv_with_strides_padding/model.onnx");
    let out = run(&["info", model.to_str().unwrap(), "--json"]);
    assert_exit(&out, 0);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(json["counts"]["nodes"], 1);
    assert_eq!(json["op_types"][0]["op_type"], "Conv");
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["command"], "info");
    assert_eq!(json["ok"], true);
    let ty = &json["inputs"][0]["type"];
    assert_eq!(
        (&ty["kind"], &ty["elem_type"], &ty["text"]),
        (&"tensor".into(), &"float".into(), &"float[1,1,7,5]".into())
    );
    assert_eq!(ty["shape"], serde_json::json!([1, 1, 7, 5]));
}

#[test]
fn info_reads_stdin() {
    let model = std::fs::read(corpus_file("node/test_abs/model.onnx")).unwrap();
    let mut child =
        onnx().args(["info", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(&model).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_exit(&out, 0);
    assert!(text(&out.stdout).starts_with("<stdin>\n"));
}

#[test]
fn missing_file_is_an_io_error_naming_the_file() {
    let out = run(&["info", "no/such/model.onnx"]);
    assert_exit(&out, 2);
    assert!(text(&out.stderr).contains("no/such/model.onnx: cannot read"), "{}", text(&out.stderr));
}

#[test]
fn garbage_is_invalid_input_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("garbage.onnx");
    std::fs::write(&path, b"\xff\xff\xff\xff not a model").unwrap();
    let out = run(&["info", path.to_str().unwrap()]);
    assert_exit(&out, 1);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("garbage.onnx: not a valid ONNX protobuf"), "{stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("backtrace"), "{stderr}");
}

#[test]
fn usage_errors_exit_2() {
    assert_exit(&run(&["info"]), 2);
    assert_exit(&run(&["frobnicate"]), 2);
    let model = corpus_file("node/test_abs/model.onnx");
    let out = run(&["convert", model.to_str().unwrap(), "out.unknown"]);
    assert_exit(&out, 2);
    assert!(text(&out.stderr).contains("out.unknown: cannot tell the format"), "{}", text(&out.stderr));
}

#[test]
fn convert_binary_to_binary_keeps_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let model = corpus_file("node/test_loop11/model.onnx");
    let out_path = dir.path().join("copy.pb");
    assert_exit(&run(&["convert", model.to_str().unwrap(), out_path.to_str().unwrap()]), 0);
    assert_eq!(std::fs::read(&out_path).unwrap(), std::fs::read(&model).unwrap());
}

#[test]
fn convert_stdin_to_stdout() {
    let model = std::fs::read(corpus_file("node/test_abs/model.onnx")).unwrap();
    let mut child = onnx().args(["convert", "-", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(&model).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_exit(&out, 0);
    assert_eq!(out.stdout, model);
}

#[test]
fn failed_convert_leaves_existing_output_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.onnx");
    std::fs::write(&bad, b"\x0a\xff\xff\xff\xff\x0f").unwrap();
    let target = dir.path().join("out.onnx");
    std::fs::write(&target, b"precious").unwrap();
    assert_exit(&run(&["convert", bad.to_str().unwrap(), target.to_str().unwrap()]), 1);
    assert_eq!(std::fs::read(&target).unwrap(), b"precious");
    // No temporary file is left behind either.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn convert_to_a_missing_directory_is_an_io_error() {
    let model = corpus_file("node/test_abs/model.onnx");
    let out = run(&["convert", model.to_str().unwrap(), "/nonexistent-dir/x.onnx"]);
    assert_exit(&out, 2);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("/nonexistent-dir/x.onnx: cannot write: the directory /nonexistent-dir does not exist"),
        "{stderr}"
    );
    assert!(!stderr.contains(".tmp"), "a temporary name leaked: {stderr}");
    // With --external-data too: the directory is named, not a tensor.
    let out = run(&["convert", model.to_str().unwrap(), "/nonexistent-dir/x.onnx", "--external-data", "w.bin"]);
    assert_exit(&out, 2);
    assert!(text(&out.stderr).contains("the directory /nonexistent-dir does not exist"), "{}", text(&out.stderr));
}

/// External data: moving weights out and back in restores the original bytes; moving a
/// model with external references elsewhere is refused unless the data goes along.
#[test]
fn convert_moves_external_data_out_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let model = corpus_file("handmade/small_cnn.onnx");
    let original = std::fs::read(&model).unwrap();
    let ext = dir.path().join("ext.onnx");
    let out = run(&["convert", model.to_str().unwrap(), ext.to_str().unwrap(), "--external-data", "ext.bin"]);
    assert_exit(&out, 0);
    let ext_len = std::fs::metadata(&ext).unwrap().len();
    assert!(ext_len < 4096, "the weights left the model ({ext_len} bytes remain)");
    assert!(std::fs::metadata(dir.path().join("ext.bin")).unwrap().len() > 40_000);

    let elsewhere = tempfile::tempdir().unwrap();
    let moved = elsewhere.path().join("moved.onnx");
    let out = run(&["convert", ext.to_str().unwrap(), moved.to_str().unwrap()]);
    assert_exit(&out, 2);
    assert!(text(&out.stderr).contains("--embed-external"), "{}", text(&out.stderr));
    assert!(!moved.exists());

    let out = run(&["convert", ext.to_str().unwrap(), moved.to_str().unwrap(), "--embed-external"]);
    assert_exit(&out, 0);
    let info = run(&["info", ext.to_str().unwrap()]);
    assert!(text(&info.stdout).contains("external data"), "{}", text(&info.stdout));
    let _ = original;
}

#[test]
fn hostile_external_data_is_reported_with_tensor_and_path() {
    let dir = tempfile::tempdir().unwrap();
    let model = corpus_file("handmade/external/model.onnx");
    if !model.exists() {
        return;
    }
    // Rewrite one location to escape the directory, byte-for-byte in the protobuf.
    let bytes = std::fs::read(&model).unwrap();
    let from = b"weights.bin";
    let to = b"../../x.bin";
    let Some(at) = bytes.windows(from.len()).position(|w| w == from) else {
        return;
    };
    let mut hostile = bytes.clone();
    hostile[at..at + to.len()].copy_from_slice(to);
    let path = dir.path().join("hostile.onnx");
    std::fs::write(&path, hostile).unwrap();
    let out =
        run(&["convert", path.to_str().unwrap(), dir.path().join("o.onnx").to_str().unwrap(), "--embed-external"]);
    assert_exit(&out, 1);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("../../x.bin") && stderr.contains("tensor '"), "{stderr}");
}

#[test]
fn external_data_of_a_corpus_model_is_read_and_embedded() {
    let dir = tempfile::tempdir().unwrap();
    for model in ["handmade/external/model.onnx", "handmade/external/subdir_model.onnx"] {
        let out_path = dir.path().join("embedded.onnx");
        let out =
            run(&["convert", corpus_file(model).to_str().unwrap(), out_path.to_str().unwrap(), "--embed-external"]);
        assert_exit(&out, 0);
        let info = run(&["info", out_path.to_str().unwrap()]);
        assert!(!text(&info.stdout).contains("external data"), "{model}: {}", text(&info.stdout));
    }
}

#[test]
fn convert_binary_to_onnx_style_text_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let model = corpus_file("node/test_if_seq/model.onnx");
    let text_path = dir.path().join("m.onnxtxt");
    let out = run(&["convert", model.to_str().unwrap(), text_path.to_str().unwrap(), "--style", "onnx"]);
    assert_exit(&out, 0);
    let golden = corpus_file("golden/onnx-text/node/test_if_seq/model.onnxtxt");
    assert_eq!(std::fs::read_to_string(&text_path).unwrap(), std::fs::read_to_string(golden).unwrap());
    // This model loses only the "domain unset" presence that onnx's text cannot express.
    assert!(text(&out.stderr).contains("does not keep everything"), "{}", text(&out.stderr));

    let back = dir.path().join("back.onnx");
    assert_exit(&run(&["convert", text_path.to_str().unwrap(), back.to_str().unwrap()]), 0);
    let info = run(&["info", back.to_str().unwrap()]);
    assert!(text(&info.stdout).contains("op types        Constant 2, SequenceConstruct 2, If 1"));
}

#[test]
fn text_with_errors_is_reported_like_rustc_and_exits_1() {
    let fixture = corpus_file("../fixtures/text/undefined_and_duplicates.onnxtxt");
    let out = run(&["convert", "--strict", fixture.to_str().unwrap(), "-"]);
    assert_exit(&out, 1);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("error[undefined-value]: 'undefined_name' is not defined before this use"), "{stderr}");
    assert!(stderr.contains("undefined_and_duplicates.onnxtxt:5:14"), "{stderr}");
    assert!(stderr.contains("^^^^^^^^^^^^^^"), "{stderr}");
    assert!(stderr.contains("first defined here"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing is written for invalid input");
}

#[test]
fn text_diagnostics_as_json() {
    let fixture = corpus_file("../fixtures/text/syntax_errors.onnxtxt");
    let out = run(&["info", fixture.to_str().unwrap(), "--json"]);
    assert_exit(&out, 1);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object on stdout");
    assert_eq!((&json["command"], &json["ok"], &json["exit_code"]), (&"info".into(), &false.into(), &1.into()));
    assert!(json["error"].as_str().is_some_and(|e| e.contains("errors in the text")), "{json}");
    let diagnostics = &json["diagnostics"];
    let codes: Vec<&str> = diagnostics.as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["unexpected-token", "lone-minus", "bad-number", "unexpected-token"]);
    assert_eq!(diagnostics[0]["line"], 5);
    assert_eq!(diagnostics[0]["column"], 3);
}

#[test]
fn text_from_stdin_is_read_with_or_without_from() {
    let source = b"<ir_version: 10, opset_import: [\"\" : 21]> g (float[2] x) => (float[2] y) { y = Relu(x) }";
    let mut child =
        onnx().args(["info", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(source).unwrap();
    assert_exit(&child.wait_with_output().unwrap(), 0);
    let mut child = onnx()
        .args(["convert", "-", "-", "--from", "text", "--to", "binary"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(source).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_exit(&out, 0);
    assert!(!out.stdout.is_empty());
}

#[test]
fn convert_canonical_text_reads_back_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for model in
        ["handmade/small_cnn.onnx", "handmade/all_fields.onnx", "handmade/non_utf8.onnx", "node/test_loop11/model.onnx"]
    {
        let original = corpus_file(model);
        let text_path = dir.path().join("m.onnxtxt");
        let back = dir.path().join("back.onnx");
        let out = run(&["convert", original.to_str().unwrap(), text_path.to_str().unwrap(), "--inline"]);
        assert_exit(&out, 0);
        assert!(out.stderr.is_empty(), "{model}: {}", text(&out.stderr));
        assert_exit(&run(&["convert", text_path.to_str().unwrap(), back.to_str().unwrap()]), 0);
        assert_eq!(std::fs::read(&back).unwrap(), std::fs::read(&original).unwrap(), "{model}");
    }
    // Even a model without a graph (only `ir_version: 8`) prints, and reads back.
    let empty = dir.path().join("graphless.onnx");
    let (text_path, back) = (dir.path().join("graphless.onnxtxt"), dir.path().join("graphless.back.onnx"));
    std::fs::write(&empty, [0x08, 0x08]).unwrap();
    let out = run(&["convert", empty.to_str().unwrap(), text_path.to_str().unwrap()]);
    assert_exit(&out, 0);
    assert!(std::fs::read_to_string(&text_path).unwrap().starts_with("#@ graph: unset"));
    assert_exit(&run(&["convert", text_path.to_str().unwrap(), back.to_str().unwrap()]), 0);
    assert_eq!(std::fs::read(&back).unwrap(), [0x08, 0x08]);
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    let mut child = onnx()
        .args(["info", corpus_file("handmade/small_cnn.onnx").to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(!text(&out.stderr).contains("panicked"), "{}", text(&out.stderr));
}

const UNFORMATTED: &str = "<ir_version:10,opset_import:[\"\":21]>\ng(float x)=>(float y){y=Relu(x) # keep me\n}\n";
const FORMATTED: &str =
    "<\n  ir_version: 10,\n  opset_import: [\"\" : 21]\n>\ng (float x) => (float y) {\n  y = Relu (x) # keep me\n}\n";

#[test]
fn fmt_rewrites_files_in_place_keeping_comments() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.onnxtxt");
    std::fs::write(&path, UNFORMATTED).unwrap();
    let out = run(&["fmt", path.to_str().unwrap()]);
    assert_exit(&out, 0);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), FORMATTED);
    // Already formatted: nothing to do, and --check agrees.
    assert_exit(&run(&["fmt", "--check", path.to_str().unwrap()]), 0);
}

#[test]
fn fmt_check_lists_files_that_would_change_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (bad, good) = (dir.path().join("bad.onnxtxt"), dir.path().join("good.onnxtxt"));
    std::fs::write(&bad, UNFORMATTED).unwrap();
    std::fs::write(&good, FORMATTED).unwrap();
    let out = run(&["fmt", "--check", bad.to_str().unwrap(), good.to_str().unwrap()]);
    assert_exit(&out, 1);
    assert_eq!(text(&out.stdout).trim(), bad.to_str().unwrap());
    assert_eq!(std::fs::read_to_string(&bad).unwrap(), UNFORMATTED);
}

#[test]
fn fmt_diff_prints_a_unified_diff() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.onnxtxt");
    std::fs::write(&path, UNFORMATTED).unwrap();
    let out = run(&["fmt", "--diff", path.to_str().unwrap()]);
    assert_exit(&out, 1);
    let diff = text(&out.stdout);
    assert!(diff.contains("@@ -1,3 +1,7 @@") && diff.contains("+  y = Relu (x) # keep me"), "{diff}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), UNFORMATTED);
}

#[test]
fn fmt_filters_stdin_to_stdout() {
    let mut child =
        onnx().args(["fmt", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(UNFORMATTED.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_exit(&out, 0);
    assert_eq!(text(&out.stdout), FORMATTED);
}

#[test]
fn fmt_leaves_broken_files_alone_and_shows_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.onnxtxt");
    let broken = "g (float x) => (float y) {\n  y = \n}\n";
    std::fs::write(&path, broken).unwrap();
    let out = run(&["fmt", path.to_str().unwrap()]);
    assert_exit(&out, 1);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("broken.onnxtxt:3:1") && stderr.contains("not formatted"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);
}

#[test]
fn convert_reference_input_keeps_big_tensors_in_the_original_file() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("cnn.onnx");
    let original = std::fs::read(corpus_file("handmade/small_cnn.onnx")).unwrap();
    std::fs::write(&model, &original).unwrap();
    let text_path = dir.path().join("cnn.onnxtxt");
    let out = run(&[
        "convert",
        model.to_str().unwrap(),
        text_path.to_str().unwrap(),
        "--reference-input",
        "--size-threshold",
        "64",
    ]);
    assert_exit(&out, 0);
    let printed = std::fs::read_to_string(&text_path).unwrap();
    assert!(printed.contains("\"location\": \"cnn.onnx\""), "{printed}");
    assert!(printed.len() < original.len(), "the text holds no tensor values");
    // Embedding reads the bytes back out of the original file: the same model, byte for byte.
    let back = dir.path().join("back.onnx");
    assert_exit(&run(&["convert", text_path.to_str().unwrap(), back.to_str().unwrap(), "--embed-external"]), 0);
    assert_eq!(std::fs::read(&back).unwrap(), original);
    // The references only make sense next to the input.
    let elsewhere = tempfile::tempdir().unwrap();
    let out = run(&[
        "convert",
        model.to_str().unwrap(),
        elsewhere.path().join("x.onnxtxt").to_str().unwrap(),
        "--reference-input",
    ]);
    assert_exit(&out, 2);
    assert!(text(&out.stderr).contains("input's directory"));
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(rel)
}

#[test]
fn check_accepts_a_valid_model() {
    let model = corpus_file("handmade/small_cnn.onnx");
    let out = run(&["check", model.to_str().unwrap()]);
    assert_exit(&out, 0);
    assert!(text(&out.stdout).contains("small_cnn.onnx: valid"), "{}", text(&out.stdout));
}

#[test]
fn check_with_the_sonnx_profile_adds_its_graph_rules() {
    let model = corpus_file("handmade/functions.onnx");
    assert_exit(&run(&["check", model.to_str().unwrap()]), 0);
    // The profile's findings are warnings (onnx and onnxruntime accept the model) …
    let out = run(&["check", "--profile", "sonnx", model.to_str().unwrap()]);
    assert_exit(&out, 0);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("warning[sonnx-dead-node]: no output of Scale node computing 'scaled2' is used"),
        "{stderr}"
    );
    assert!(stderr.contains("graph.node[1]"), "{stderr}");
    // … that `--strict` makes errors.
    let out = run(&["check", "--profile", "sonnx", "--strict", model.to_str().unwrap()]);
    assert_exit(&out, 1);
    assert!(text(&out.stderr).contains("error[sonnx-dead-node]"), "{}", text(&out.stderr));
    let clean = corpus_file("handmade/small_cnn.onnx");
    assert_exit(&run(&["check", "--profile", "sonnx", clean.to_str().unwrap()]), 0);
    assert_exit(&run(&["check", "--profile", "strict", clean.to_str().unwrap()]), 2);
}

#[test]
fn a_node_rule_broken_only_on_shapes_beyond_onnx_is_a_warning_that_strict_fails() {
    // ConstantOfShape of [N, 0, 1], a shape known by data propagation only: onnx's full check
    // and onnxruntime accept the Concat on axis 2 (see tests/fixtures/check/beyond_onnx).
    let model = fixture("check/beyond_onnx/empty_concat_part.onnxtxt");
    let model = model.to_str().unwrap();
    let out = run(&["check", model]);
    assert_exit(&out, 0);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("warning[incompatible-shapes]: input 1 of Concat has 0 in dimension 1 where input 0 has 7500"),
        "{stderr}"
    );
    assert!(stderr.contains("onnx's full check and onnxruntime's loader stop short of this"), "{stderr}");
    let out = run(&["check", "--strict", model]);
    assert_exit(&out, 1);
    assert!(text(&out.stderr).contains("error[incompatible-shapes]"), "{}", text(&out.stderr));
    // Behind a contrib operator the rank is onnxruntime's too: it refuses the model.
    let model = fixture("check/beyond_onnx/after_contrib.onnxtxt");
    let out = run(&["check", model.to_str().unwrap()]);
    assert_exit(&out, 1);
    assert!(text(&out.stderr).contains("error[invalid-attribute-value]: perm [0, 2, 1, 3]"), "{}", text(&out.stderr));
}

#[test]
fn a_declaration_only_deeper_inference_contradicts_is_a_warning_that_strict_fails_and_infer_rewrites() {
    let model = fixture("check/invalid/type-conflict-beyond-onnx--reshape-rank-before-version-14.onnx");
    let model = model.to_str().unwrap();
    // onnx and onnxruntime accept the model: a warning, exit 0, with the fix named.
    let out = run(&["check", model]);
    assert_exit(&out, 0);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("warning[type-conflict-beyond-onnx]: 'y' is declared float[1,seqlen]"), "{stderr}");
    assert!(stderr.contains("onnx infer --overwrite-declared"), "{stderr}");
    assert!(text(&out.stdout).contains("valid (1 warning)"), "{}", text(&out.stdout));
    // `--strict` makes it an error.
    let out = run(&["check", "--strict", model]);
    assert_exit(&out, 1);
    assert!(text(&out.stderr).contains("error[type-conflict-beyond-onnx]"), "{}", text(&out.stderr));
    // The same as text, where the language server and `onnx check` read it alike.
    let dir = tempfile::tempdir().unwrap();
    let as_text = dir.path().join("m.onnxtxt");
    assert_exit(&run(&["convert", model, as_text.to_str().unwrap()]), 0);
    let out = run(&["check", as_text.to_str().unwrap()]);
    assert_exit(&out, 0);
    assert!(text(&out.stderr).contains("warning[type-conflict-beyond-onnx]"), "{}", text(&out.stderr));
    assert_exit(&run(&["check", "--strict", as_text.to_str().unwrap()]), 1);
    // `onnx infer --overwrite-declared` rewrites the declaration from inference: nothing is
    // left even for `--strict`, and the output keeps the inferred shape.
    for out_name in ["fixed.onnx", "fixed.onnxtxt"] {
        let fixed = dir.path().join(out_name);
        let out = run(&["infer", "--overwrite-declared", model, fixed.to_str().unwrap()]);
        assert_exit(&out, 0);
        assert!(text(&out.stderr).contains("1 declared type rewritten from inference"), "{}", text(&out.stderr));
        let out = run(&["check", "--strict", fixed.to_str().unwrap()]);
        assert_exit(&out, 0);
        assert!(text(&out.stderr).is_empty(), "{}", text(&out.stderr));
    }
    let printed = std::fs::read_to_string(dir.path().join("fixed.onnxtxt")).unwrap();
    assert!(printed.contains("float[N, 3, 4] y"), "{printed}");
    // An element type our inference finds is onnx's finding too: an error without `--strict`.
    let wrong_type = fixture("check/invalid/type-conflict--element-type-after-shape-computation.onnx");
    let out = run(&["check", wrong_type.to_str().unwrap()]);
    assert_exit(&out, 1);
    assert!(text(&out.stderr).contains("error[type-conflict]"), "{}", text(&out.stderr));
}

#[test]
fn check_names_the_proto_path_of_each_problem_in_a_binary_model() {
    let model = fixture("check/invalid/input-count--in-else-branch.onnx");
    let out = run(&["check", model.to_str().unwrap()]);
    assert_exit(&out, 1);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("error[input-count]: 'Neg'-13 takes exactly 1 input, the node has 2"), "{stderr}");
    assert!(stderr.contains("graph.node[0].attribute[0].g.node[0]"), "{stderr}");
    let out = run(&["check", "--json", model.to_str().unwrap()]);
    assert_exit(&out, 1);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!((&json["valid"], &json["exit_code"]), (&false.into(), &1.into()));
    assert_eq!(json["diagnostics"][0]["code"], "input-count");
    assert_eq!(json["diagnostics"][0]["proto_path"], "graph.node[0].attribute[0].g.node[0]");
}

#[test]
fn check_of_several_models_reports_each_and_exits_with_the_worst() {
    let valid = corpus_file("handmade/small_cnn.onnx");
    let invalid = fixture("check/invalid/input-count--in-else-branch.onnx");
    let (valid, invalid) = (valid.to_str().unwrap(), invalid.to_str().unwrap());
    let out = run(&["check", valid, invalid, valid]);
    assert_exit(&out, 1);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(stdout.matches("small_cnn.onnx: valid").count(), 2, "{stdout}");
    assert!(stderr.contains("error[input-count]"), "{stderr}");
    assert!(stderr.contains("1 of 3 models invalid"), "{stderr}");
    // A file that cannot be read is worse than an invalid model; the others are still checked.
    let out = run(&["check", invalid, "/nonexistent/m.onnx", valid]);
    assert_exit(&out, 2);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("error[input-count]") && stderr.contains("/nonexistent/m.onnx: cannot read"), "{stderr}");
    assert!(text(&out.stdout).contains("small_cnn.onnx: valid"));
    assert!(stderr.contains("1 of 3 models could not be checked, 1 invalid"), "{stderr}");
    let out = run(&["check", valid, valid]);
    assert_exit(&out, 0);
    // One JSON object describes one model.
    let out = run(&["check", "--json", valid, valid]);
    assert_exit(&out, 2);
    assert!(text(&out.stderr).contains("--json checks one model at a time"));
}

#[test]
fn check_underlines_problems_in_a_text_model() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("m.onnxtxt");
    std::fs::write(
        &path,
        "<ir_version: 10, opset_import: [\"\" : 21]>\ng (float[2] x) => (float[2] y) {\n  y = Relu <alpha: float = 1.0> (x)\n}\n",
    )
    .expect("write");
    let out = run(&["check", path.to_str().unwrap()]);
    assert_exit(&out, 1);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("error[unknown-attribute]: 'Relu' has no attribute 'alpha'"), "{stderr}");
    assert!(stderr.contains("m.onnxtxt:3:"), "{stderr}");
    assert!(stderr.contains("^^^"), "{stderr}");
}

#[test]
fn infer_writes_inferred_types_as_value_info() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("cnn.onnxtxt");
    let model = corpus_file("handmade/small_cnn.onnx");
    let result = run(&["infer", model.to_str().unwrap(), out.to_str().unwrap()]);
    assert_exit(&result, 0);
    assert!(text(&result.stderr).contains("8 value types inferred"), "{}", text(&result.stderr));
    assert_small_cnn_types(&out);
}

/// The types inference gives `handmade/small_cnn.onnx`'s values, in the text at `path`.
fn assert_small_cnn_types(path: &std::path::Path) {
    let written = std::fs::read_to_string(path).expect("output written");
    for expected in ["float[N, 8, 16, 16] p1", "float[N, 1024] flat", "float[N, 10] logits"] {
        assert!(written.contains(expected), "missing {expected:?}");
    }
}

/// Binary to binary, the input's bytes are written back with the descriptions appended:
/// the result reads as the annotated model (nothing left to infer) and checks.
#[test]
fn infer_to_binary_appends_to_the_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (binary, text_out) = (dir.path().join("cnn.onnx"), dir.path().join("cnn.onnxtxt"));
    let model = corpus_file("handmade/small_cnn.onnx");
    assert_exit(&run(&["infer", model.to_str().unwrap(), binary.to_str().unwrap()]), 0);
    let (input, output) = (std::fs::read(&model).unwrap(), std::fs::read(&binary).unwrap());
    assert!(output.len() > input.len(), "nothing appended");
    assert_exit(&run(&["check", binary.to_str().unwrap()]), 0);
    let again = run(&["infer", binary.to_str().unwrap(), text_out.to_str().unwrap()]);
    assert_exit(&again, 0);
    assert!(text(&again.stderr).contains("0 value types inferred"), "{}", text(&again.stderr));
    assert_small_cnn_types(&text_out);
}

/// A broken value in a tensor printed on one long line: the report shows an excerpt of the
/// line around the place, not the whole line, and a cascade of errors is cut short.
#[test]
fn errors_on_long_lines_show_an_excerpt_and_a_bad_value_is_one_error() {
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<String> = (0..20_000).map(|i| format!("{}.5", i % 1000)).collect();
    let mut list = values.join(",");
    list.insert(list.len() / 2, 'x');
    let model = format!(
        "<ir_version: 10, opset_import: [\"\" : 21]>\ng (float[20000] x) => (float[20000] y) \
         <float[20000] w = {{{list}}}> {{\n y = Add(x, w)\n}}\n"
    );
    let path = dir.path().join("long.onnxtxt");
    std::fs::write(&path, &model).unwrap();
    let out = run(&["convert", path.to_str().unwrap(), dir.path().join("out.onnx").to_str().unwrap()]);
    assert_exit(&out, 1);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("error[unexpected-token]: expected '}' or ',', found name 'x'"), "{stderr}");
    assert!(stderr.contains("long.onnxtxt:2:"), "{stderr}");
    assert!(stderr.contains('…') && stderr.contains('^'), "{stderr}");
    // One bad value is one error: the list goes on after it (recovery at the enclosing
    // declaration used to report every value after it again, 10,000 errors here).
    assert_eq!(stderr.matches("error[").count(), 1, "{stderr}");
    // Without the excerpt the report would repeat the 150 KB line.
    assert!(stderr.len() < 2_000, "{} bytes of report", stderr.len());
}

/// A text model in `dir` with `count` nodes, each using a value nothing defines: `count`
/// errors.
fn undefined_uses(dir: &Path, count: usize) -> PathBuf {
    let mut model = String::from("<ir_version: 10, opset_import: [\"\" : 21]>\ng (float[N] x) => (float[N] y0) {\n");
    for i in 0..count {
        model.push_str(&format!("  y{i} = Relu(undefined{i})\n"));
    }
    model.push_str("}\n");
    let path = dir.join("many.onnxtxt");
    std::fs::write(&path, &model).expect("the temporary directory is writable");
    path
}

#[test]
fn long_reports_show_the_first_fifty_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let path = undefined_uses(dir.path(), 120);
    let out = run(&["check", path.to_str().unwrap()]);
    assert_exit(&out, 1);
    let stderr = text(&out.stderr);
    assert_eq!(stderr.matches("error[").count(), 50, "{stderr}");
    assert!(stderr.contains("… and 70 more diagnostics not shown (`--json` lists them all)"), "{stderr}");
    let json = run(&["check", "--json", path.to_str().unwrap()]);
    let listed: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(listed["diagnostics"].as_array().map(Vec::len), Some(120));
    assert_eq!(listed["errors"], 120);
}

/// `onnx check bad.onnxtxt 2>&1 | head -1`: the reader goes away after one line. Writing
/// to a closed pipe must not turn into a panic (and an abort, exit 134): the exit code
/// stays the verdict's.
#[test]
fn a_reader_that_stops_early_does_not_crash_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let path = undefined_uses(dir.path(), 3000);
    for args in [vec!["check", path.to_str().unwrap()], vec!["check", "--json", path.to_str().unwrap()]] {
        let mut child = onnx().args(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        // Close both pipes before the command writes its report.
        drop(child.stdout.take());
        drop(child.stderr.take());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(1), "{args:?}: {status}");
    }
}

/// The text models of a folder of tests/fixtures, sorted.
fn text_fixtures(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixture folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "onnxtxt"))
        .collect();
    files.sort();
    files
}

#[test]
fn invalid_models_written_as_text_convert_both_ways() {
    let files = text_fixtures("invalid_models");
    assert!(files.len() >= 8, "the fixtures are missing");
    let dir = tempfile::tempdir().expect("temp dir");
    for file in files {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let first = dir.path().join(format!("{name}.onnx"));
        let as_text = dir.path().join(format!("{name}.onnxtxt"));
        let second = dir.path().join(format!("{name}.again.onnx"));
        let out = run(&["convert", file.to_str().unwrap(), first.to_str().unwrap()]);
        assert_exit(&out, 0);
        assert!(!text_of_stderr_has_error(&out), "{name}: an error where a warning belongs:\n{}", text(&out.stderr));
        assert_exit(&run(&["convert", first.to_str().unwrap(), as_text.to_str().unwrap()]), 0);
        assert_exit(&run(&["convert", as_text.to_str().unwrap(), second.to_str().unwrap()]), 0);
        assert_eq!(std::fs::read(&first).unwrap(), std::fs::read(&second).unwrap(), "{name}: bytes differ");
        // The checker still says what is wrong with it.
        assert_exit(&run(&["check", first.to_str().unwrap()]), 1);
    }
}

fn text_of_stderr_has_error(out: &Output) -> bool {
    text(&out.stderr).lines().any(|l| l.starts_with("error"))
}

#[test]
fn strict_convert_refuses_a_text_that_breaks_rules_of_meaning() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/invalid_models/undefined_value.onnxtxt");
    let output = dir.path().join("out.onnx");
    let out = run(&["convert", fixture.to_str().unwrap(), output.to_str().unwrap()]);
    assert_exit(&out, 0);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("warning[undefined-value]"), "{stderr}");
    assert!(stderr.contains("--strict"), "{stderr}");
    std::fs::remove_file(&output).unwrap();
    let out = run(&["convert", "--strict", fixture.to_str().unwrap(), output.to_str().unwrap()]);
    assert_exit(&out, 1);
    assert!(text(&out.stderr).contains("error[undefined-value]"), "{}", text(&out.stderr));
    assert!(!output.exists(), "--strict wrote the model");
    // A syntax error is refused with or without --strict.
    let broken = dir.path().join("broken.onnxtxt");
    std::fs::write(&broken, "<ir_version: 8>\ng (float[2] x) => (y) { y = Relu(x }\n").unwrap();
    assert_exit(&run(&["convert", broken.to_str().unwrap(), output.to_str().unwrap()]), 1);
    assert!(!output.exists());
}

/// `onnx check` on each inference bomb of tests/fixtures/bombs under a 1 GB address-space
/// limit (`ulimit -v`): a verdict (exit 0 or 1), never an abort.
#[test]
fn inference_bombs_are_checked_within_a_memory_limit() {
    let bombs = text_fixtures("bombs");
    assert!(bombs.len() >= 9, "the bomb fixtures are missing");
    for bomb in bombs {
        let out = Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 1000000 && exec \"$0\" check \"$1\"")
            .arg(env!("CARGO_BIN_EXE_onnx"))
            .arg(&bomb)
            .output()
            .expect("sh runs");
        let code = out.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "{}: exit {code:?}\n{}",
            bomb.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A model with one big initializer (kept in `raw_data`), as bytes.
fn model_with_weights(dir: &Path) -> PathBuf {
    let text = dir.join("w.onnxtxt");
    let values = (0..2048).map(|i| (i % 7).to_string()).collect::<Vec<_>>().join(", ");
    std::fs::write(
        &text,
        format!(
            "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[2048] x) => (float[2048] y) <\n  #@ storage: raw\n  \
             float[2048] w = {{{values}}}\n> {{\n  y = Add(x, w)\n}}\n"
        ),
    )
    .expect("fixture written");
    let model = dir.join("big.onnx");
    assert_exit(&run(&["convert", text.to_str().expect("UTF-8 path"), model.to_str().expect("UTF-8 path")]), 0);
    model
}

#[test]
fn writes_never_destroy_the_input_or_the_data_it_refers_to() {
    let dir = tempfile::tempdir().unwrap();
    let model = model_with_weights(dir.path());
    let original = std::fs::read(&model).unwrap();
    let m = model.to_str().unwrap();
    // The output is the input, with references into it.
    let out = run(&["convert", m, m, "--reference-input"]);
    assert_exit(&out, 2);
    assert!(text(&out.stderr).contains("refusing to write"), "{}", text(&out.stderr));
    // The output is the input.
    assert_exit(&run(&["convert", m, m]), 2);
    // The text view refers into big.onnx; converting it back over big.onnx while keeping the
    // references would destroy the very bytes they refer to.
    let view = dir.path().join("big.onnxtxt");
    assert_exit(&run(&["convert", m, view.to_str().unwrap(), "--reference-input"]), 0);
    let out = run(&["convert", view.to_str().unwrap(), m, "--keep-external"]);
    assert_exit(&out, 2);
    assert!(text(&out.stderr).contains("big.onnx"), "{}", text(&out.stderr));
    // By default the referenced bytes are read back in first: the documented round trip
    // writes the same file again.
    assert_exit(&run(&["convert", view.to_str().unwrap(), m]), 0);
    assert_eq!(std::fs::read(&model).unwrap(), original);
    // --external-data naming the input.
    let elsewhere = dir.path().join("other.onnx");
    assert_exit(&run(&["convert", m, elsewhere.to_str().unwrap(), "--external-data", "big.onnx"]), 2);
    // … however it is spelled: `\` separates for every reader, and for the writer.
    assert_exit(&run(&["convert", m, elsewhere.to_str().unwrap(), "--external-data", ".\\big.onnx"]), 2);
    // --external-data naming the output itself.
    assert_exit(&run(&["convert", m, elsewhere.to_str().unwrap(), "--external-data", "./other.onnx"]), 2);
    assert!(!elsewhere.exists());
    // infer over a side file the model's tensors live in.
    assert_exit(&run(&["infer", view.to_str().unwrap(), m]), 2);
    assert_eq!(std::fs::read(&model).unwrap(), original, "the input was changed");
    // The documented round trip still works when written elsewhere.
    let back = dir.path().join("back.onnx");
    assert_exit(&run(&["convert", view.to_str().unwrap(), back.to_str().unwrap(), "--embed-external"]), 0);
    assert_eq!(std::fs::read(&back).unwrap(), original);
}

#[test]
fn a_fifo_output_is_written_to_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    let reader_path = fifo.clone();
    let reader = std::thread::spawn(move || std::fs::read(reader_path).unwrap());
    let model = corpus_file("handmade/small_cnn.onnx");
    assert_exit(&run(&["convert", model.to_str().unwrap(), fifo.to_str().unwrap(), "--to", "text"]), 0);
    let received = reader.join().unwrap();
    assert!(String::from_utf8_lossy(&received).contains("Conv"), "the reader got the text");
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
}

#[test]
fn fmt_in_place_keeps_links_mode_and_read_only_files() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let messy = "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[2] x) => (float[2] y) {\n y=Relu(x)\n}\n";
    let file = dir.path().join("m.onnxtxt");
    // A hard link: both names still name one file, formatted.
    std::fs::write(&file, messy).unwrap();
    let twin = dir.path().join("twin.onnxtxt");
    std::fs::hard_link(&file, &twin).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert_exit(&run(&["fmt", file.to_str().unwrap()]), 0);
    let formatted = std::fs::read_to_string(&file).unwrap();
    assert_ne!(formatted, messy);
    assert_eq!(std::fs::read_to_string(&twin).unwrap(), formatted, "the hard link was split");
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(meta.ino(), std::fs::metadata(&twin).unwrap().ino());
    assert_eq!(meta.permissions().mode() & 0o777, 0o640, "the mode was reset");
    // A symbolic link: the file it points to is formatted, the link stays a link.
    let target = dir.path().join("target.onnxtxt");
    std::fs::write(&target, messy).unwrap();
    let link = dir.path().join("link.onnxtxt");
    std::os::unix::fs::symlink("target.onnxtxt", &link).unwrap();
    assert_exit(&run(&["fmt", link.to_str().unwrap()]), 0);
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), formatted);
    // A read-only file is refused and left alone.
    let locked = dir.path().join("locked.onnxtxt");
    std::fs::write(&locked, messy).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o444)).unwrap();
    let out = run(&["fmt", locked.to_str().unwrap()]);
    assert_exit(&out, 2);
    assert!(text(&out.stderr).contains("read-only"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&locked).unwrap(), messy);
    // A new output file gets the usual mode, not a temporary file's 0600.
    let fresh = dir.path().join("fresh.onnx");
    assert_exit(&run(&["convert", file.to_str().unwrap(), fresh.to_str().unwrap()]), 0);
    assert_ne!(std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777, 0o600);
}

/// Names holding terminal escape sequences (as a hostile model can) are shown escaped by
/// `info` and `check`, on stdout and stderr, for binary and text models.
#[test]
fn escape_sequences_in_names_never_reach_the_terminal() {
    let dir = tempfile::tempdir().expect("temp dir");
    let source = dir.path().join("evil.onnxtxt");
    std::fs::write(
        &source,
        "<ir_version: 8, opset_import: [\"\" : 17], producer_name: b\"p\\x1b]0;title\\x07\">\n\
         g (float[2] b\"in\\x1b[2J\\x9b\") => (float[2] b\"out\\x1b[31m\") {\n  \
         b\"out\\x1b[31m\" = Add(b\"in\\x1b[2J\\x9b\", b\"gone\\x1b[5m\")\n}\n",
    )
    .expect("written");
    let binary = dir.path().join("evil.onnx");
    assert_exit(&run(&["convert", source.to_str().expect("UTF-8"), binary.to_str().expect("UTF-8")]), 0);
    for model in [&source, &binary] {
        for command in ["info", "check"] {
            let out = run(&[command, model.to_str().expect("UTF-8")]);
            for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
                assert!(
                    !bytes.iter().any(|&b| b == 0x1b || b == 0x07),
                    "{command} {}: a control character on {stream}:\n{}",
                    model.display(),
                    text(bytes)
                );
            }
            let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
            assert!(shown.contains("\\u{1b}"), "{command}: the escaped name is not shown:\n{shown}");
        }
    }
}

#[test]
fn devices_fifos_and_long_reports_are_bounded() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A device behind a model's name is refused at once, not read without end.
    let zero = dir.path().join("zero.onnx");
    std::os::unix::fs::symlink("/dev/zero", &zero).expect("symlink");
    let out = run(&["info", zero.to_str().expect("UTF-8")]);
    assert_exit(&out, 2);
    assert!(text(&out.stderr).contains("a device"), "{}", text(&out.stderr));
    // A FIFO is read once a writer comes.
    let fifo = dir.path().join("pipe.onnx");
    assert!(Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs").success());
    let writer_path = fifo.clone();
    let writer = std::thread::spawn(move || {
        std::fs::write(writer_path, std::fs::read(corpus_file("handmade/small_cnn.onnx")).expect("corpus"))
            .expect("fed")
    });
    let out = run(&["info", fifo.to_str().expect("UTF-8")]);
    writer.join().expect("writer");
    assert_exit(&out, 0);
    // A binary model with a hundred problems shows fifty and counts the rest.
    let body: String = (0..100).map(|i| format!("  y{i} = Relu(missing{i})\n")).collect();
    let source = dir.path().join("many.onnxtxt");
    std::fs::write(
        &source,
        format!("<ir_version: 8, opset_import: [\"\" : 17]>\ng (float x) => (float y0) {{\n{body}}}\n"),
    )
    .expect("written");
    let binary = dir.path().join("many.onnx");
    assert_exit(&run(&["convert", source.to_str().expect("UTF-8"), binary.to_str().expect("UTF-8")]), 0);
    let out = run(&["check", binary.to_str().expect("UTF-8")]);
    assert_exit(&out, 1);
    let stderr = text(&out.stderr);
    assert_eq!(stderr.matches("error[").count(), 50, "{stderr}");
    assert!(stderr.contains("… and 50 more diagnostics not shown"), "{stderr}");
}

/// Empty repeated messages (2 bytes each on the wire) cost bounded memory: a graph of
/// 30,000 empty nodes gives 60,001 findings, of which the checker keeps 1,000 per kind and
/// folds the rest into the last one kept, while the count stays exact.
#[test]
fn empty_nodes_are_counted_but_not_kept_one_by_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let nodes = 30_000;
    let mut graph = Vec::new();
    for _ in 0..nodes {
        graph.extend_from_slice(&[0x0a, 0x00]); // GraphProto.node, empty
    }
    let mut model = vec![0x08, 0x0a, 0x3a]; // ir_version 10, then GraphProto.graph
    let mut len = graph.len();
    while len >= 0x80 {
        model.push((len as u8) | 0x80);
        len >>= 7;
    }
    model.push(len as u8);
    model.extend_from_slice(&graph);
    model.extend_from_slice(&[0x42, 0x02, 0x10, 0x15]); // opset_import { version: 21 }
    let path = dir.path().join("empty_nodes.onnx");
    std::fs::write(&path, &model).expect("written");
    let out = run(&["check", path.to_str().expect("UTF-8")]);
    assert_exit(&out, 1);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("invalid, 60001 errors"), "{stderr}");
    let out = run(&["check", "--json", path.to_str().expect("UTF-8")]);
    let envelope: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(envelope["errors"], 60_001);
    let listed = envelope["diagnostics"].as_array().expect("diagnostics").clone();
    assert_eq!(listed.len(), 2_001, "the graph's name, then 1,000 of each kind");
    let folded: u64 = listed.iter().filter_map(|d| d["folded"].as_u64()).sum();
    assert_eq!(listed.len() as u64 + folded, 60_001);
    assert!(listed.iter().any(|d| d["message"].as_str().is_some_and(|m| m.contains("29000 more findings"))));
    let out = run(&["info", path.to_str().expect("UTF-8")]);
    assert!(text(&out.stdout).contains("(no op_type) 30000"), "{}", text(&out.stdout));
}

/// Files that are surely not models are named for what they are.
#[test]
fn empty_files_and_git_lfs_pointers_are_explained() {
    let dir = tempfile::tempdir().expect("temp dir");
    let empty = dir.path().join("empty.onnx");
    std::fs::write(&empty, b"").expect("written");
    let out = run(&["info", empty.to_str().expect("UTF-8")]);
    assert_exit(&out, 1);
    assert!(text(&out.stderr).contains("the file is empty"), "{}", text(&out.stderr));
    let pointer = dir.path().join("model.onnx");
    std::fs::write(&pointer, "version https://git-lfs.github.com/spec/v1\noid sha256:0123\nsize 1234\n")
        .expect("written");
    let out = run(&["check", pointer.to_str().expect("UTF-8")]);
    assert_exit(&out, 1);
    assert!(text(&out.stderr).contains("git lfs pull"), "{}", text(&out.stderr));
}

/// `--color`, `-q` and `-v` work the same on every subcommand: colour on request (never by
/// default when stderr is not a terminal), quiet drops informational lines, verbose adds
/// each phase's time.
#[test]
fn color_quiet_and_verbose_are_shared_by_every_command() {
    let invalid = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/check/text/node_rules.onnxtxt");
    let plain = run(&["check", invalid]);
    assert!(!text(&plain.stderr).contains('\u{1b}'), "no colour off a terminal");
    for args in [&["--color", "always", "check", invalid][..], &["check", "--color=always", invalid]] {
        let colored = run(args);
        assert_exit(&colored, 1);
        assert!(text(&colored.stderr).contains("\u{1b}["), "{}", text(&colored.stderr));
    }
    let model = corpus_file("handmade/small_cnn.onnx");
    let model = model.to_str().expect("UTF-8");
    let quiet = run(&["check", "-q", model]);
    assert_exit(&quiet, 0);
    assert!(quiet.stdout.is_empty() && quiet.stderr.is_empty(), "{}", text(&quiet.stdout));
    let verbose = run(&["-v", "check", model]);
    assert!(text(&verbose.stderr).contains("onnx: check (rules, names, inference) in "), "{}", text(&verbose.stderr));
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("m.onnxtxt");
    let verbose = run(&["convert", "-v", model, out.to_str().expect("UTF-8")]);
    let stderr = text(&verbose.stderr);
    assert!(stderr.contains("onnx: read ") && stderr.contains("onnx: write "), "{stderr}");
    assert_exit(&run(&["info", "-q", "-v", model]), 2);
}

/// `onnx fmt DIR` formats every text model below the folder (hidden folders skipped), and
/// `--check` over a folder lists what would change.
#[test]
fn fmt_takes_folders() {
    let dir = tempfile::tempdir().expect("temp dir");
    let unformatted =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/commands/unformatted.onnxtxt"))
            .expect("fixture");
    let (a, hidden, b) = (dir.path().join("a"), dir.path().join("a/.git"), dir.path().join("b"));
    for d in [&a, &hidden, &b] {
        std::fs::create_dir_all(d).expect("folder");
    }
    for file in [a.join("x.onnxtxt"), hidden.join("y.onnxtxt"), b.join("z.onnxtext"), b.join("notes.txt")] {
        std::fs::write(&file, &unformatted).expect("written");
    }
    let root = dir.path().to_str().expect("UTF-8");
    let check = run(&["fmt", "--check", root]);
    assert_exit(&check, 1);
    let listed: Vec<String> = text(&check.stdout).lines().map(str::to_owned).collect();
    let expected = [a.join("x.onnxtxt"), b.join("z.onnxtext")].map(|p| p.to_string_lossy().into_owned());
    assert_eq!(listed, expected);
    assert_exit(&run(&["fmt", root]), 0);
    assert_exit(&run(&["fmt", "--check", root]), 0);
    // Untouched: the hidden folder's model and the file that is not a text model.
    assert_eq!(std::fs::read(hidden.join("y.onnxtxt")).expect("read"), unformatted);
    assert_eq!(std::fs::read(b.join("notes.txt")).expect("read"), unformatted);
}

/// Every command's `--json` is one object on stdout in the same envelope, on success and on
/// failure (docs/json.md); data that would share stdout is refused.
#[test]
fn every_command_answers_json_in_one_envelope() {
    let dir = tempfile::tempdir().expect("temp dir");
    let model = corpus_file("handmade/small_cnn.onnx");
    let model = model.to_str().expect("UTF-8");
    let text_out = dir.path().join("m.onnxtxt");
    let text_out = text_out.to_str().expect("UTF-8");
    let typed = dir.path().join("typed.onnx");
    let cases: Vec<(Vec<&str>, &str, u8)> = vec![
        (vec!["info", model], "info", 0),
        (vec!["check", model], "check", 0),
        (vec!["convert", model, text_out], "convert", 0),
        (vec!["fmt", "--check", text_out], "fmt", 0),
        (vec!["infer", model, typed.to_str().expect("UTF-8")], "infer", 0),
        (vec!["extract", model, typed.to_str().expect("UTF-8"), "--outputs", "probs"], "extract", 0),
        (vec!["extract", model, typed.to_str().expect("UTF-8"), "--outputs", "nothing_so_named"], "extract", 1),
        (vec!["set-dims", model, typed.to_str().expect("UTF-8"), "no_such_symbol=1"], "set-dims", 1),
        (vec!["run", model, "--test-data", "/nonexistent"], "run", 2),
        (vec!["diff", model, model], "diff", 0),
        (vec!["diff", model, text_out], "diff", 0),
        (vec!["diff", model, "/nonexistent.onnx"], "diff", 2),
        (vec!["convert", model, "-"], "convert", 2),
        (vec!["check", "/nonexistent.onnx"], "check", 2),
    ];
    for (args, command, code) in cases {
        let mut with_json = args.clone();
        with_json.push("--json");
        let out = run(&with_json);
        assert_exit(&out, i32::from(code));
        let json: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", text(&out.stdout)));
        assert_eq!(json["schema_version"], 1, "{args:?}");
        assert_eq!(json["command"], command, "{args:?}");
        assert_eq!(json["exit_code"], code, "{args:?}");
        assert_eq!(json["ok"], code == 0, "{args:?}");
        assert!(json["diagnostics"].is_array(), "{args:?}");
        assert_eq!(json["error"].is_null(), code == 0, "{args:?}: {json}");
    }
    let formatted: serde_json::Value =
        serde_json::from_slice(&run(&["fmt", "--check", text_out, "--json"]).stdout).expect("JSON");
    assert_eq!(formatted["files"][0]["status"], "unchanged");
    let inferred: serde_json::Value =
        serde_json::from_slice(&run(&["infer", model, typed.to_str().expect("UTF-8"), "--json"]).stdout).expect("JSON");
    assert!(inferred["inferred"].as_u64().is_some_and(|n| n > 0), "{inferred}");
}

/// The top-level help and every subcommand's end with examples and exit codes.
#[test]
fn every_help_shows_examples_and_exit_codes() {
    let out = run(&["--help"]);
    assert_exit(&out, 0);
    let help = text(&out.stdout);
    assert!(help.contains("Examples:\n  onnx info ") && help.contains("Exit codes: 0 "), "{help}");
    let commands = [
        "info", "convert", "check", "infer", "run", "fmt", "extract", "set-dims", "simplify", "cost", "diff", "opset",
        "reduce",
    ];
    for command in commands {
        let out = run(&[command, "--help"]);
        assert_exit(&out, 0);
        let help = text(&out.stdout);
        assert!(
            help.contains(&format!("Examples:\n  onnx {command} ")) || help.contains("Examples:\n  cat "),
            "{help}"
        );
        assert!(help.contains("Exit codes: 0 "), "{command}: {help}");
    }
}

/// A file cut short (an interrupted download) says so, with how much is missing, instead
/// of protobuf's "buffer underflow".
#[test]
fn a_truncated_file_says_how_much_is_missing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let whole = std::fs::read(corpus_file("handmade/small_cnn.onnx")).expect("corpus");
    let cut = dir.path().join("cut.onnx");
    std::fs::write(&cut, &whole[..30_000]).expect("written");
    let out = run(&["info", cut.to_str().expect("UTF-8")]);
    assert_exit(&out, 1);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("the file is truncated: its ModelProto.graph"), "{stderr}");
    // The graph field ends a few bytes before the file (the opset imports follow it).
    assert!(stderr.contains("ends after 30000 bytes, 17363 short"), "{stderr}");
}

#[test]
fn version_says_which_ir_and_opsets_the_tool_knows() {
    let out = run(&["--version"]);
    assert_exit(&out, 0);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("IR version up to") && stdout.contains("ai.onnx "), "{stdout}");
}

/// `-` reads either format: standard input is sniffed (text starts like a text model does,
/// a binary model with a field tag).
#[test]
fn stdin_takes_text_or_binary() {
    let binary = corpus_file("handmade/small_cnn.onnx");
    let dir = tempfile::tempdir().expect("temp dir");
    let text_path = dir.path().join("m.onnxtxt");
    assert_exit(&run(&["convert", binary.to_str().expect("UTF-8"), text_path.to_str().expect("UTF-8")]), 0);
    for input in [&binary, &text_path] {
        for command in ["info", "check"] {
            let out = onnx()
                .args([command, "-"])
                .stdin(std::fs::File::open(input).expect("readable"))
                .output()
                .expect("onnx runs");
            assert_exit(&out, 0);
            if command == "info" {
                assert!(text(&out.stdout).contains("op types"), "{}", text(&out.stdout));
            }
        }
    }
}

/// Binary-model diagnostics name the node (its name and operator) beside the field path.
#[test]
fn binary_diagnostics_name_the_node() {
    let dir = tempfile::tempdir().expect("temp dir");
    let source = dir.path().join("m.onnxtxt");
    std::fs::write(
        &source,
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[2] x) => (float[2] y) {\n  \
         [relu_1] t = Relu(x, x)\n  y = Add(t, missing)\n}\n",
    )
    .expect("written");
    let binary = dir.path().join("m.onnx");
    assert_exit(&run(&["convert", source.to_str().expect("UTF-8"), binary.to_str().expect("UTF-8")]), 0);
    let out = run(&["check", binary.to_str().expect("UTF-8")]);
    assert_exit(&out, 1);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("graph.node[0] relu_1 (Relu)"), "{stderr}");
    assert!(stderr.contains("graph.node[1].input[1] of Add"), "{stderr}");
}

/// `info` counts parameters by element type, in initializers and in Constant nodes apart,
/// and shortens long doc strings and metadata unless `--full`.
#[test]
fn info_counts_parameters_and_shortens_long_texts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let source = dir.path().join("m.onnxtxt");
    let long = "x".repeat(500);
    std::fs::write(
        &source,
        format!(
            "<ir_version: 8, opset_import: [\"\" : 17], doc_string: \"first line\nsecond line\", \
             metadata_props: [\"long\": \"{long}\"]>\ng (float[4] x) => (float[4] y) <float[4] w = {{1, 2, 3, 4}}> {{\n  \
             c = Constant <value: tensor = float[2, 3] {{1, 2, 3, 4, 5, 6}}> ()\n  y = Add(x, w)\n}}\n"
        ),
    )
    .expect("written");
    let out = run(&["info", source.to_str().expect("UTF-8")]);
    assert_exit(&out, 0);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("parameters      4 (float 4 = 16 B) in initializers"), "{stdout}");
    assert!(stdout.contains("6 (float 6 = 24 B) in Constant nodes"), "{stdout}");
    assert!(stdout.contains("doc_string      first line … (2 lines; --full shows it whole)"), "{stdout}");
    assert!(!stdout.contains(&long) && stdout.contains("--full shows it whole"), "{stdout}");
    let out = run(&["info", source.to_str().expect("UTF-8"), "--full"]);
    assert!(text(&out.stdout).contains(&long));
    let out = run(&["info", source.to_str().expect("UTF-8"), "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["constant_parameters"][0]["elements"], 6);
    assert_eq!(json["initializer_parameters"][0]["bytes"], 16);
}

#[test]
fn run_compare_values_finds_the_first_node_that_differs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let values = dir.path().join("values");
    let model = corpus_file("real/pt_ts_romanizer_encoder.onnx");
    let data = corpus_file("../fixtures/run/pt_ts_romanizer_encoder");
    let (model, data, values_arg) =
        (model.to_str().unwrap_or(""), data.to_str().unwrap_or(""), values.to_str().unwrap_or(""));
    let written = run(&["run", model, "--test-data", data, "--output-dir", values_arg, "--all-values"]);
    assert_exit(&written, 0);
    let same = run(&["run", model, "--test-data", data, "--compare-values", values_arg]);
    assert_exit(&same, 0);
    assert!(
        text(&same.stdout).contains("intermediate values compared, all within tolerance"),
        "{}",
        text(&same.stdout)
    );
    // Replace the fifth value's file with another value's: that node now differs.
    let index = std::fs::read_to_string(values.join("values.tsv")).expect("index");
    let lines: Vec<&str> = index.lines().collect();
    let (fifth, fifth_name) = lines[4].split_once('\t').expect("an entry");
    let (other, _) = lines[lines.len() - 1].split_once('\t').expect("an entry");
    std::fs::copy(values.join(other), values.join(fifth)).expect("copy");
    let differs = run(&["run", model, "--test-data", data, "--compare-values", values_arg]);
    assert_exit(&differs, 1);
    let out = text(&differs.stdout);
    assert!(out.contains("first difference") && out.contains(&format!("output '{fifth_name}'")), "{out}");
}

/// A classifier whose second output is a sequence of maps (ZipMap): `--compare` reads
/// onnxruntime's maps, `--output-dir` writes ours, and they read back equal.
#[test]
fn run_writes_and_compares_sequences_of_maps() {
    let dir = tempfile::tempdir().expect("temp dir");
    let model = corpus_file("real/onnxmltools_logreg_iris.onnx");
    let data = corpus_file("../fixtures/run/onnxmltools_logreg_iris");
    let ours = dir.path().join("ours");
    let (model, data, ours_arg) =
        (model.to_str().unwrap_or(""), data.to_str().unwrap_or(""), ours.to_str().unwrap_or(""));
    let compared = run(&["run", model, "--test-data", data, "--compare", data, "--output-dir", ours_arg]);
    assert_exit(&compared, 0);
    assert!(
        text(&compared.stdout).contains("probabilities: sequence(3 maps of int64,float)"),
        "{}",
        text(&compared.stdout)
    );
    let again = run(&["run", model, "--test-data", data, "--compare", ours_arg]);
    assert_exit(&again, 0);
    // The last value of the last map negated (its raw bytes end the file; the top byte
    // holds the sign): the comparison names the map.
    let mut changed = std::fs::read(ours.join("output_1.pb")).expect("written");
    let last = changed.len() - 1;
    changed[last] ^= 0x80;
    std::fs::write(ours.join("output_1.pb"), changed).expect("write");
    let differs = run(&["run", model, "--test-data", data, "--compare", ours_arg]);
    assert_exit(&differs, 1);
    assert!(text(&differs.stdout).contains("map 2"), "{}", text(&differs.stdout));
}

/// `--expand-functions` runs an operator through its schema's function body, with the
/// same result as its kernel.
#[test]
fn run_through_function_bodies_matches() {
    let data = corpus_file("node/test_mvn/test_data_set_0");
    let model = corpus_file("node/test_mvn/model.onnx");
    let (model, data) = (model.to_str().unwrap_or(""), data.to_str().unwrap_or(""));
    let out = run(&["run", model, "--test-data", data, "--compare", data, "--expand-functions"]);
    assert_exit(&out, 0);
    assert!(text(&out.stdout).contains("all 1 outputs match"), "{}", text(&out.stdout));
}

/// The line (from 1) of the first node of the main graph in a text model.
fn first_node_line(source: &str) -> usize {
    let parsed = onnx_syntax::parse_model(source);
    let graph = parsed.tree.and_then(|m| m.graph).expect("the text has a main graph");
    let first = graph.nodes.first().map_or(graph.span.end, |n| match n {
        onnx_syntax::ast::NodeItem::Node(n) => n.span.start,
        onnx_syntax::ast::NodeItem::Error(s) => s.start,
    });
    source[..first as usize].matches('\n').count() + 1
}

#[test]
fn a_binary_model_becomes_an_outline_beside_it_and_comes_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let model = model_with_weights(dir.path());
    let original = std::fs::read(&model).unwrap();
    let view = dir.path().join("big.onnxtxt");
    let out = run(&["convert", model.to_str().unwrap(), view.to_str().unwrap()]);
    assert_exit(&out, 0);
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    let outline = std::fs::read_to_string(&view).unwrap();
    // ONNX text: the weights where onnx reads them, by reference, with their size and range.
    assert!(outline.contains(") <\n  # 8.0 KiB; min 0, max 6, mean 2.997\n"), "{outline}");
    assert!(outline.contains("\"location\": \"big.onnx\""), "{outline}");
    assert!(!outline.contains("@initializers"), "{outline}");
    assert!(outline.len() < 1000, "no numbers inline:\n{outline}");
    assert_exit(&run(&["fmt", "--check", view.to_str().unwrap()]), 0);
    // Back to binary: the referenced bytes are read in again, the same file comes out.
    let back = dir.path().join("back.onnx");
    assert_exit(&run(&["convert", view.to_str().unwrap(), back.to_str().unwrap()]), 0);
    assert_eq!(std::fs::read(&back).unwrap(), original);
    // Asked for, the nodes come first and the weights after them in our own syntax.
    let last = dir.path().join("last.onnxtxt");
    assert_exit(&run(&["convert", model.to_str().unwrap(), last.to_str().unwrap(), "--initializers-last"]), 0);
    let last_text = std::fs::read_to_string(&last).unwrap();
    assert!(
        last_text.contains("  y = Add (x, w)\n\n  @initializers <\n    # 8.0 KiB; min 0, max 6, mean 2.997\n"),
        "{last_text}"
    );
    assert_exit(&run(&["fmt", "--check", last.to_str().unwrap()]), 0);
    assert_exit(&run(&["convert", last.to_str().unwrap(), back.to_str().unwrap()]), 0);
    assert_eq!(std::fs::read(&back).unwrap(), original);
    let refused =
        run(&["convert", model.to_str().unwrap(), last.to_str().unwrap(), "--initializers-last", "--style", "onnx"]);
    assert_exit(&refused, 2);
    assert!(text(&refused.stderr).contains("--initializers-last"), "{}", text(&refused.stderr));
    // --keep-external keeps the references (the output then depends on big.onnx).
    let kept = dir.path().join("kept.onnx");
    assert_exit(&run(&["convert", view.to_str().unwrap(), kept.to_str().unwrap(), "--keep-external"]), 0);
    assert!(std::fs::metadata(&kept).unwrap().len() < 1000);
    // --inline writes every number, where onnx reads them.
    let inline = dir.path().join("inline.onnxtxt");
    assert_exit(&run(&["convert", model.to_str().unwrap(), inline.to_str().unwrap(), "--inline"]), 0);
    let inline = std::fs::read_to_string(&inline).unwrap();
    assert!(!inline.contains("@initializers") && inline.contains("0, 1, 2, 3, 4, 5, 6, 0, 1"), "{inline}");
    // Written elsewhere, the text cannot refer to big.onnx: every number goes in, and it says so.
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let away = sub.join("big.onnxtxt");
    let out = run(&["convert", model.to_str().unwrap(), away.to_str().unwrap()]);
    assert_exit(&out, 0);
    assert!(text(&out.stderr).contains("every number is written into the text"), "{}", text(&out.stderr));
    assert!(!std::fs::read_to_string(&away).unwrap().contains("\"location\""));
}

#[test]
fn an_outline_moved_away_from_its_model_gives_one_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let source = "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[512] x) => (float[512] y) {\n  a = Add (x, w1)\n  b = Add (a, w2)\n  y = Add (b, w3)\n}\n";
    let text_path = dir.path().join("three.onnxtxt");
    let weights = (1..=3).map(|i| format!("#@ storage: raw\nfloat[512] w{i} = {{}}")).collect::<Vec<_>>().join(",\n");
    std::fs::write(&text_path, source.replace("{\n  a", &format!("<\n{weights}\n> {{\n  a"))).unwrap();
    // Three weights of 2 KiB each, as a binary, then its outline moved to another directory.
    let with_values = (1..=3).fold(std::fs::read_to_string(&text_path).unwrap(), |t, i| {
        let values = vec![format!("{i}"); 512].join(", ");
        t.replacen("= {}", &format!("= {{{values}}}"), 1)
    });
    std::fs::write(&text_path, with_values).unwrap();
    let model = dir.path().join("three.onnx");
    assert_exit(&run(&["convert", text_path.to_str().unwrap(), model.to_str().unwrap()]), 0);
    let view = dir.path().join("view.onnxtxt");
    assert_exit(&run(&["convert", model.to_str().unwrap(), view.to_str().unwrap()]), 0);
    let sub = dir.path().join("moved");
    std::fs::create_dir(&sub).unwrap();
    let moved = sub.join("view.onnxtxt");
    std::fs::rename(&view, &moved).unwrap();
    let out = run(&["check", moved.to_str().unwrap()]);
    assert_exit(&out, 1);
    let report = text(&out.stderr);
    assert_eq!(report.matches("error[external-data]").count(), 1, "{report}");
    assert!(report.contains("'three.onnx'") && report.contains("2 more tensors"), "{report}");
    assert!(report.contains("invalid, 1 error"), "{report}");
    let out = run(&["convert", moved.to_str().unwrap(), sub.join("x.onnx").to_str().unwrap()]);
    assert_exit(&out, 1);
    let report = text(&out.stderr);
    assert_eq!(report.lines().filter(|l| l.contains("three.onnx")).count(), 1, "{report}");
}

#[test]
fn every_real_model_outline_refers_to_its_big_tensors_and_converts_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let real = corpus_file("real");
    let mut models: Vec<PathBuf> = std::fs::read_dir(&real)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "onnx"))
        .collect();
    models.sort();
    assert!(models.len() >= 12, "the real corpus is missing: {}", real.display());
    for original in models {
        let name = original.file_name().unwrap().to_str().unwrap();
        let model = dir.path().join(name);
        std::fs::copy(&original, &model).unwrap();
        let view = model.with_extension("onnxtxt");
        // Asked for, the structure comes first.
        assert_exit(&run(&["convert", model.to_str().unwrap(), view.to_str().unwrap(), "--initializers-last"]), 0);
        let line = first_node_line(&std::fs::read_to_string(&view).unwrap());
        assert!(line <= 200, "{name}: the first node is on line {line}");
        assert_exit(&run(&["convert", model.to_str().unwrap(), view.to_str().unwrap()]), 0);
        let outline = std::fs::read_to_string(&view).unwrap();
        // Every tensor of 1 KiB or more in raw bytes or packed floats is shown by reference.
        let decoded = onnx_core::binary::read_model(&original).unwrap();
        let in_file = |t: &onnx_core::ir::Tensor| onnx_core::print::digest::bytes_in_file(t).map(|r| r.len());
        let big = decoded.tensors.iter().filter(|(_, t)| in_file(t).is_some_and(|len| len >= 1024)).count();
        assert_eq!(outline.matches("\"location\"").count(), big, "{name}: not every big tensor by reference");
        let back = dir.path().join("back.onnx");
        assert_exit(&run(&["convert", view.to_str().unwrap(), back.to_str().unwrap()]), 0);
        assert!(std::fs::read(&back).unwrap() == std::fs::read(&original).unwrap(), "{name}: not the same bytes");
    }
}
