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

// ---- files that change or cannot grow while we work -------------------------------------

/// A chain of `count` Relu nodes: a model that takes a while to read and check.
fn relu_chain(count: usize) -> String {
    let mut text =
        String::from("<ir_version: 10, opset_import: [\"\" : 21]>\nmain (float[4] y0) => (float[4] out) {\n");
    for k in 1..=count {
        text.push_str(&format!("    y{k} = Relu (y{})\n", k - 1));
    }
    text.push_str(&format!("    out = Identity (y{count})\n}}\n"));
    text
}

/// Files in `dir` other than `keep`.
fn others(dir: &Path, keep: &[&str]) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .expect("listed")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect();
    found.sort();
    found
}

#[test]
fn a_write_past_the_file_size_limit_is_an_error_that_leaves_no_temporary() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let model = write(dir.path(), "chain.onnxtxt", &relu_chain(20_000));
    let out = dir.path().join("chain.onnx");
    // 64 blocks (32 or 64 KiB, as the shell counts them); the binary is larger.
    let run = onnx_under("-f 64", &["convert", model.to_str().expect("utf-8"), out.to_str().expect("utf-8")]);
    let err = ended_with(&run, 2);
    assert!(err.contains("chain.onnx") && err.contains("File too large"), "{err}");
    assert_eq!(others(dir.path(), &["chain.onnxtxt"]), Vec::<String>::new(), "no output, no temporary: {err}");
}

/// Starts `onnx ARGS`, waits until `mapped` shows in its memory maps, then truncates it.
fn truncate_while_mapped(args: &[&Path], mapped: &Path) -> Output {
    let child = onnx().args(args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn();
    let child = child.expect("starts");
    let maps = PathBuf::from(format!("/proc/{}/maps", child.id()));
    let name = mapped.file_name().expect("a name").to_string_lossy().into_owned();
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(60) {
        match std::fs::read_to_string(&maps) {
            Ok(m) if m.contains(&name) => break,
            Ok(_) => std::thread::sleep(std::time::Duration::from_micros(200)),
            Err(_) => break,
        }
    }
    // What `onnx.save` does when it rewrites a model in place.
    std::fs::File::create(mapped).expect("truncated");
    child.wait_with_output().expect("ends")
}

#[test]
fn a_model_truncated_while_it_is_checked_or_converted_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let source = write(dir.path(), "chain.onnxtxt", &relu_chain(200_000));
    let model = dir.path().join("chain.onnx");
    let made = onnx().arg("convert").arg(&source).arg(&model).output().expect("converts");
    assert!(made.status.success(), "{}", text_of(&made));
    let pristine = std::fs::read(&model).expect("read");
    let source_text = std::fs::read(&source).expect("read");
    let mut faulted = 0;
    for (command, input) in [("check", &model), ("convert", &model), ("check", &source)] {
        std::fs::write(&model, &pristine).expect("restored");
        std::fs::write(&source, &source_text).expect("restored");
        let out = dir.path().join("out.onnxtxt");
        let args: Vec<&Path> = match command {
            "check" => vec![command.as_ref(), input],
            _ => vec![command.as_ref(), input, &out],
        };
        let run = truncate_while_mapped(&args, input);
        use std::os::unix::process::ExitStatusExt;
        let err = text(&run.stderr);
        assert_eq!(run.status.signal(), None, "{command}: killed by a signal: {err}");
        if !run.status.success() {
            let named = format!("{}: the file changed while it was being read", input.display());
            assert!(err.contains(&named), "{command}: {err}");
            assert_eq!(run.status.code(), Some(1), "{command}: {err}");
            faulted += 1;
        }
        assert_eq!(others(dir.path(), &["chain.onnxtxt", "chain.onnx"]), Vec::<String>::new(), "{command}: {err}");
    }
    // Each reads the model long after it is mapped (names and nodes are read in place, a
    // text is parsed from where it lies).
    assert_eq!(faulted, 3, "the truncation landed while each command was reading");
}

fn text_of(out: &Output) -> String {
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}

// ---- binaries no reader could read --------------------------------------------------------

/// A chain of `levels` If nodes, each in the then-branch of the one before; the innermost
/// graph gives `ty` (`seq(float)`, `seq(float[1])`) from a SequenceConstruct.
fn nested_ifs(levels: usize, ty: &str) -> String {
    let body = "t = Constant <value = float[1] {1.0}> () o = SequenceConstruct (t)";
    let mut graph = format!("b0 () => ({ty} o) {{ {body} }}");
    for k in 1..=levels {
        graph = format!(
            "b{k} () => ({ty} o) {{ o = If (c) <then_branch = {graph}, else_branch = k{k} () => ({ty} o) {{ {body} }}> }}"
        );
    }
    format!(
        "<ir_version: 10, opset_import: [\"\" : 21]>\nmain (bool c) => ({ty} y) {{\n y = If (c) <then_branch = {graph}, \
         else_branch = z () => ({ty} o) {{ {body} }}>\n}}\n"
    )
}

#[test]
fn a_binary_nested_past_protobufs_limit_is_refused_with_the_depth_and_the_limit() {
    // Measured with onnx 1.23.2: `onnx.parser.parse_model` of the first text gives a model
    // `onnx.load` reads back (its messages nest 100 deep); of the second it fails with
    // "Exceeded upb_DecodeOptions_MaxDepth" (101 deep). Converting used to write the second
    // with status 0, and neither onnx nor this tool could read it.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let deepest = write(dir.path(), "deepest.onnxtxt", &nested_ifs(30, "seq(float)"));
    let too_deep = write(dir.path(), "too_deep.onnxtxt", &nested_ifs(30, "seq(float[1])"));
    let out = dir.path().join("deepest.onnx");
    let run = onnx().arg("convert").arg(&deepest).arg(&out).output().expect("runs");
    ended_with(&run, 0);
    let back = onnx().arg("convert").arg(&out).arg("-").arg("--to").arg("text").output().expect("runs");
    ended_with(&back, 0);
    let out = dir.path().join("too_deep.onnx");
    let run = onnx().arg("convert").arg(&too_deep).arg(&out).output().expect("runs");
    let err = ended_with(&run, 1);
    assert!(err.contains("too_deep.onnx: not written") && err.contains("nest 101 levels deep"), "{err}");
    assert!(err.contains("past the 100 levels"), "{err}");
    assert!(!out.exists(), "nothing written");
    // Subgraphs nested 300 deep in text: the nesting limit is named, not the end of the text.
    let text = write(dir.path(), "three_hundred.onnxtxt", &nested_ifs(300, "seq(float)"));
    let err = ended_with(&onnx().arg("check").arg(&text).output().expect("runs"), 1);
    assert!(err.contains("nesting deeper than 512 levels") && !err.contains("end of the text"), "{err}");
}

#[test]
fn embedding_external_data_past_two_gib_is_refused_before_writing() {
    // 2,100 initializers naming one 1 MiB side file: embedded, 2.05 GiB, past what protobuf
    // can hold. Converting used to write it (a 100,000-initializer model grew toward 100 GiB).
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("w.bin"), vec![0u8; 1 << 20]).expect("written");
    let mut text =
        String::from("<ir_version: 10, opset_import: [\"\" : 21]>\nmain (float[262144] x) => (float[262144] y) {\n");
    text.push_str("    y = Add (x, w0)\n    @initializers <");
    for k in 0..2100 {
        if k > 0 {
            text.push_str(", ");
        }
        text.push_str(&format!(
            "float[262144] w{k} = [\"location\": \"w.bin\", \"offset\": \"0\", \"length\": \"1048576\"]"
        ));
    }
    text.push_str(">\n}\n");
    let model = write(dir.path(), "many.onnxtxt", &text);
    let out = dir.path().join("embedded.onnx");
    let run = onnx().arg("convert").arg(&model).arg(&out).arg("--embed-external").output().expect("runs");
    let err = ended_with(&run, 1);
    assert!(err.contains("embedded.onnx: not written") && err.contains("past protobuf's limit of 2 GiB"), "{err}");
    assert_eq!(others(dir.path(), &["w.bin", "many.onnxtxt"]), Vec::<String>::new(), "nothing written");
}
