//! Hardening, round three (issue 52): what used to end the `onnx` process by abort or signal,
//! or write what no reader reads. Each test runs the real binary the way the report did.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn onnx() -> Command {
    Command::new(env!("CARGO_BIN_EXE_onnx"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `onnx ARGS` under `sh -c 'ulimit …; exec …'`: the limits a user or a container
/// puts on a process.
fn onnx_under(ulimit: &str, args: &[&str]) -> Output {
    let mut script = format!("ulimit {ulimit} && exec \"$0\"");
    for k in 0..args.len() {
        script.push_str(&format!(" \"${}\"", k + 1));
    }
    Command::new("sh").arg("-c").arg(script).arg(env!("CARGO_BIN_EXE_onnx")).args(args).output().expect("sh runs")
}

/// The process ended by itself, with `code`, and said why on stderr.
#[track_caller]
fn ended_with(out: &Output, code: i32) -> String {
    use std::os::unix::process::ExitStatusExt;
    let err = text(&out.stderr);
    assert_eq!(out.status.signal(), None, "killed by a signal: {err}");
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert!(!err.contains("panicked") && !err.contains("memory allocation"), "{err}");
    err
}

fn write(dir: &Path, name: &str, contents: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("written");
    path
}

// ---- a run's memory -------------------------------------------------------------------

/// Four values of 2^28 floats (1 GiB each), each under the per-tensor limit of 2^30.
const FOUR_GIB: &str = r#"<ir_version: 10, opset_import: ["" : 21]>
main (float[1] x) => (float[?] a, float[?] b, float[?] c, float[?] d) <int64[1] n = {268435456}> {
    a = Expand (x, n)
    b = Expand (x, n)
    c = Expand (x, n)
    d = Expand (x, n)
}"#;

#[test]
fn a_run_needing_more_memory_than_the_process_may_use_is_an_error_not_an_abort() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let model = write(dir.path(), "four.onnxtxt", FOUR_GIB);
    let x = dir.path().join("x.npy");
    write_npy_f32(&x, &[1], &[1.0]);
    // With 3 GiB of address space, the third GiB used to abort the process.
    let out = onnx_under("-v 3145728", &["run", model.to_str().expect("utf-8"), x.to_str().expect("utf-8")]);
    let err = ended_with(&out, 1);
    assert!(err.contains("(Expand)") && err.contains("memory budget") && err.contains("--max-memory"), "{err}");
}

#[test]
fn max_memory_bounds_the_run_and_names_the_node() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let model = write(dir.path(), "four.onnxtxt", &FOUR_GIB.replace("268435456", "1048576"));
    let x = dir.path().join("x.npy");
    write_npy_f32(&x, &[1], &[1.0]);
    let args = |budget: &str| onnx().args(["run", "--max-memory", budget]).arg(&model).arg(&x).output().expect("runs");
    let err = ended_with(&args("10M"), 1);
    assert!(err.contains("(Expand)") && err.contains("memory budget of 10.0 MiB"), "{err}");
    assert!(!err.contains("--max-memory sets another"), "the user set it: {err}");
    ended_with(&args("64M"), 0);
    let usage = args("lots");
    assert_eq!(usage.status.code(), Some(2), "{}", text(&usage.stderr));
    assert!(text(&usage.stderr).contains("not a size"), "{}", text(&usage.stderr));
}

#[test]
fn planning_does_not_fold_a_constant_past_its_budget() {
    // A valid model of a few hundred bytes whose ConstantOfShape makes 10^9 values from
    // constants: folding it while planning took 4 GB before anything else was looked at.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let model = write(
        dir.path(),
        "fold.onnxtxt",
        r#"<ir_version: 10, opset_import: ["" : 21]>
main (float[1] x) => (float[?] y) <int64[1] n = {1000000000}> {
    big = ConstantOfShape <value = float[1] {1.0}> (n)
    y = Add (big, x)
}"#,
    );
    // No input given: with 2 GiB of address space, planning must not allocate the 4 GB
    // (it aborted), and the missing input is what is reported.
    let out = onnx_under("-v 2097152", &["run", model.to_str().expect("utf-8")]);
    let err = ended_with(&out, 2);
    assert!(err.contains("needs these inputs") && err.contains("x: float[1]"), "{err}");
}

/// A float32 `.npy` file.
fn write_npy_f32(path: &Path, shape: &[usize], values: &[f32]) {
    let dims: Vec<String> = shape.iter().map(ToString::to_string).collect();
    let tuple = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {tuple}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&u16::try_from(header.len()).expect("short").to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for v in values {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(path, bytes).expect("written");
}
