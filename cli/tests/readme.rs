//! Every `console` sample of the README is what the tools print today: each `$ onnx …` line
//! runs (in a scratch folder that sees the repository's `tests/` and `cli/`, so nothing it
//! writes lands in the checkout) and its output, stderr and stdout as a terminal shows them
//! together, must match the lines under it. A line of only `…` stands for any number of
//! lines; `…` inside a line for any text (timings, long lists cut short). A trailing
//! `# exit N` says the exit code; without it the command must succeed.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One `$ command` of a sample, the lines shown under it and the exit code it expects.
#[derive(Debug)]
struct Sample {
    command: String,
    shown: Vec<String>,
    exit: i32,
}

fn samples(readme: &str) -> Vec<Sample> {
    let mut found = Vec::new();
    let mut in_console = false;
    for line in readme.lines() {
        if !in_console {
            in_console = line.trim_end() == "```console";
            continue;
        }
        if line.starts_with("```") {
            in_console = false;
        } else if let Some(command) = line.strip_prefix("$ ") {
            let (command, exit) = match command.split_once("# exit ") {
                Some((c, code)) => (c.trim_end(), code.trim().parse().expect("an exit code after `# exit`")),
                None => (command.trim_end(), 0),
            };
            found.push(Sample { command: command.to_owned(), shown: Vec::new(), exit });
        } else if let Some(sample) = found.last_mut() {
            sample.shown.push(line.to_owned());
        }
    }
    found
}

/// Whether `line` is `pattern`, each `…` in the pattern standing for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split('…').collect();
    if parts.len() == 1 {
        return pattern == line;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !line.starts_with(first) || !line[first.len()..].ends_with(last) || line.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Whether `lines` are what `shown` shows, a line of only `…` standing for any lines.
fn lines_match(shown: &[String], lines: &[&str]) -> bool {
    match shown.split_first() {
        None => lines.is_empty(),
        Some((first, rest)) if first.trim() == "…" => (0..=lines.len()).any(|skip| lines_match(rest, &lines[skip..])),
        Some((first, rest)) => {
            lines.split_first().is_some_and(|(line, others)| line_matches(first, line) && lines_match(rest, others))
        }
    }
}

#[test]
fn the_readme_samples_are_what_the_tools_print() {
    let root = repository();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let all = samples(&readme);
    assert!(all.len() >= 8, "only {} console samples found in README.md", all.len());
    let scratch = tempfile::tempdir().expect("a scratch folder");
    for shared in ["tests", "cli"] {
        std::os::unix::fs::symlink(root.join(shared), scratch.path().join(shared)).expect("symlink");
    }
    let onnx = PathBuf::from(env!("CARGO_BIN_EXE_onnx"));
    let bin_dir = onnx.parent().expect("the binary's folder");
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let mut wrong = Vec::new();
    for sample in &all {
        assert!(sample.command.starts_with("onnx "), "README sample of another program: {}", sample.command);
        // One pipe for both streams keeps the order a terminal shows them in.
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("{} 2>&1", sample.command))
            .current_dir(scratch.path())
            .env("PATH", &path)
            .env("NO_COLOR", "1")
            .env_remove("ONNX_THREADS")
            .output()
            .expect("sh runs");
        let printed = String::from_utf8_lossy(&out.stdout).into_owned();
        let lines: Vec<&str> = printed.trim_end_matches('\n').lines().collect();
        let shown: Vec<String> = {
            let mut shown = sample.shown.clone();
            while shown.last().is_some_and(|l| l.trim().is_empty()) {
                shown.pop();
            }
            shown
        };
        if out.status.code() != Some(sample.exit) || !lines_match(&shown, &lines) {
            wrong.push(format!(
                "$ {}\n--- README shows (exit {}):\n{}\n--- printed (exit {:?}):\n{}",
                sample.command,
                sample.exit,
                shown.join("\n"),
                out.status.code(),
                printed
            ));
        }
    }
    assert!(wrong.is_empty(), "{} README sample(s) differ:\n\n{}", wrong.len(), wrong.join("\n\n"));
}

#[test]
fn elisions_match_what_they_stand_for_and_nothing_else() {
    assert!(line_matches("time per run: min … ms, median … ms", "time per run: min 0.9 ms, median 1.0 ms"));
    assert!(!line_matches("time per run: min … ms", "time per run: min 0.9 s"));
    assert!(line_matches("a …", "a b c"));
    assert!(!line_matches("a … z", "a b"));
    let shown: Vec<String> = ["x", "…", "z"].iter().map(|s| s.to_string()).collect();
    assert!(lines_match(&shown, &["x", "y", "y", "z"]));
    assert!(lines_match(&shown, &["x", "z"]));
    assert!(!lines_match(&shown, &["x", "y"]));
    assert!(!lines_match(&shown, &["w", "z"]));
}
