//! Snapshot tests of whole commands: each file in `fixtures/commands/` holds one command
//! line (the arguments after `onnx`, split at spaces, paths relative to the repository's
//! root, where the command runs); its snapshot is the exit code, stdout and stderr. A
//! change of what a user sees shows up as a diff of a `.snap` file in `snapshots/`:
//! `INSTA_UPDATE=always cargo test -p onnx-cli --test commands` (or `cargo insta review`)
//! writes the new snapshots; with `CI=true` none is written and a difference fails.

use std::process::{Command, Stdio};

#[test]
fn command_outputs() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    insta::glob!("fixtures/commands/*.args", |path| {
        let line = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let args: Vec<&str> = line.split_whitespace().collect();
        let out = Command::new(env!("CARGO_BIN_EXE_onnx"))
            .args(&args)
            .current_dir(&root)
            .stdin(Stdio::null())
            .output()
            .expect("onnx runs");
        let snapshot = format!(
            "$ onnx {}\nexit: {}\n--- stdout\n{}--- stderr\n{}",
            args.join(" "),
            out.status.code().map_or("signal".to_owned(), |c| c.to_string()),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        insta::assert_snapshot!(snapshot);
    });
}
