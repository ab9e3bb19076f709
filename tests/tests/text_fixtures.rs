//! Text fixtures with their expected diagnostics written inside them, as comment lines
//! under the offending line:
//!
//! ```text
//!   y = Relu(undefined_name)
//! #          ^^^^^^^^^^^^^^ error[undefined-value]: 'undefined_name' is not defined before this use
//! ```
//!
//! Carets start at the column of the range (a range at column 0 is shown from column 1, as
//! the `#` takes column 0) and span its length on that line. Each fixture file is the text;
//! its snapshot (insta, `tests/tests/snapshots/`) is the text with every annotation
//! recomputed. After an intended change, `INSTA_UPDATE=always cargo test -p onnx-tests
//! --test text_fixtures` (or `cargo insta review`) rewrites the snapshots: review the diff.
//! Annotation lines left in a fixture are ignored, so stale ones cannot hide anything.
//!
//! `tests/fixtures/text` holds what the text front end reports (syntax, lowering, names);
//! `tests/fixtures/check/text` adds the checker's diagnostics (`onnx check` on text), and
//! `tests/fixtures/check/sonnx` those of `onnx check --profile sonnx`.

use onnx_core::analysis::{analyze_text, span_of};
use onnx_core::check::{CheckOptions, Profile};
use onnx_core::diagnostic::Severity;
use onnx_core::pipeline::check_text;
use onnx_tests::files_with_suffix;

fn is_annotation(line: &str) -> bool {
    let t = line.trim_start_matches(['#', ' ']);
    line.starts_with('#') && t.starts_with('^') && (t.contains(" error[") || t.contains(" warning["))
}

/// The file with its annotation lines recomputed from the analysis, and from the checker
/// (with a profile) when `checker` is given.
fn annotate(source: &str, checker: Option<Profile>) -> String {
    let diagnostics = match checker {
        // As `onnx check` does for text.
        Some(profile) => {
            let options = CheckOptions { full_check: true, profile, ..CheckOptions::default() };
            check_text(source, &options).diagnostics
        }
        None => analyze_text(source).diagnostics,
    };
    // Line starts of the source, to place each diagnostic under its line.
    let mut line_starts = vec![0usize];
    line_starts.extend(source.match_indices('\n').map(|(i, _)| i + 1));
    let mut notes: Vec<(usize, String)> = Vec::new();
    for d in &diagnostics {
        let span = span_of(d.anchor);
        let start = span.start as usize;
        let line = line_starts.partition_point(|&s| s <= start).saturating_sub(1);
        let line_end = source[line_starts[line]..].find('\n').map_or(source.len(), |i| line_starts[line] + i);
        let column = start - line_starts[line];
        let width = (span.end as usize).min(line_end).saturating_sub(start).max(1);
        let severity = if d.severity == Severity::Error { "error" } else { "warning" };
        let pad = " ".repeat(column.saturating_sub(1));
        notes.push((line, format!("#{pad}{} {severity}[{}]: {}", "^".repeat(width), d.code, d.message)));
    }
    let mut out = String::new();
    for (i, line) in source.split_inclusive('\n').enumerate() {
        let bare = line.trim_end_matches(['\n', '\r']);
        if is_annotation(bare) {
            continue;
        }
        out.push_str(line);
        for (_, note) in notes.iter().filter(|(l, _)| *l == i) {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(note);
            out.push('\n');
        }
    }
    out
}

#[test]
fn text_fixtures_report_the_diagnostics_written_in_them() {
    compare_fixtures("../fixtures/text", None, 5);
}

#[test]
fn checker_text_fixtures_report_the_diagnostics_written_in_them() {
    compare_fixtures("../fixtures/check/text", Some(Profile::None), 3);
}

#[test]
fn sonnx_profile_fixtures_report_the_diagnostics_written_in_them() {
    compare_fixtures("../fixtures/check/sonnx", Some(Profile::Sonnx), 2);
}

fn compare_fixtures(rel: &str, checker: Option<Profile>, at_least: usize) {
    let dir = onnx_tests::corpus_dir().join(rel);
    let files = files_with_suffix(&dir, ".onnxtxt");
    assert!(files.len() >= at_least, "fixtures missing in {}", dir.display());
    let folder = rel.trim_start_matches("../");
    // One snapshot folder per fixture folder: file names repeat across them.
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(format!("snapshots/{}", folder.trim_start_matches("fixtures/").replace('/', "_")));
    let _guard = settings.bind_to_scope();
    insta::glob!("..", &format!("{folder}/*.onnxtxt"), |path| {
        // Annotation lines left in a fixture are comments (they change nothing analysed) and
        // `annotate` drops them.
        let source = std::fs::read_to_string(path).expect("fixture readable");
        insta::assert_snapshot!(annotate(&source, checker));
    });
}
