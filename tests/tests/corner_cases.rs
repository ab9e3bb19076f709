//! One case per row of the corner-case table of the syntax spec (§3 of
//! `onnx-text-syntax.md`, what onnx 1.23.2 does with odd text), in
//! `tests/fixtures/corner/cases.txt`. The snapshot (insta, `tests/tests/snapshots/`) holds
//! each case's text and, under `--- expected`, what we make of it: every diagnostic
//! (severity, code, line:column, message) and, when the text reads without errors, the model
//! it reads to, in canonical text. Where onnx crashes, ignores text or stores nonsense, we
//! give an error or a warning instead; the title of the case names the row. After an
//! intended change, `INSTA_UPDATE=always cargo test -p onnx-tests --test corner_cases` (or
//! `cargo insta review`) rewrites the snapshot: review the diff.

use std::path::PathBuf;

use onnx_core::analysis::{analyze_text, span_of};
use onnx_core::diagnostic::Severity;
use onnx_core::{binary, print};

/// Characters a text file should not hold raw, written as placeholders in the cases.
const PLACEHOLDERS: &[(&str, &str)] =
    &[("⟨CR⟩", "\r"), ("⟨VT⟩", "\x0b"), ("⟨FF⟩", "\x0c"), ("⟨NUL⟩", "\0"), ("⟨NBSP⟩", "\u{a0}"), ("⟨BOM⟩", "\u{feff}")];

fn cases_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures").join("corner").join("cases.txt")
}

struct Case {
    header: String,
    input: String,
}

fn read_cases(file: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    for block in file.split("=== ").skip(1) {
        let (header, rest) = block.split_once('\n').unwrap_or((block, ""));
        let input = rest.split("--- expected\n").next().unwrap_or("");
        cases.push(Case { header: header.to_owned(), input: input.to_owned() });
    }
    cases
}

/// The text the case stands for: placeholders expanded, `⟨NO-EOL⟩` dropping the last newline.
fn expand(input: &str) -> String {
    let mut text = input.replace("⟨NO-EOL⟩\n", "");
    for (shown, raw) in PLACEHOLDERS {
        text = text.replace(shown, raw);
    }
    text
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    (before.matches('\n').count() + 1, before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1)
}

/// What we make of a text, as the lines under `--- expected`.
fn outcome(text: &str) -> String {
    let analysis = analyze_text(text);
    let mut out = String::new();
    for d in &analysis.diagnostics {
        let span = span_of(d.anchor);
        let (line, column) = line_column(text, span.start as usize);
        let severity = if d.severity == Severity::Error { "error" } else { "warning" };
        out.push_str(&format!("{severity}[{}] {line}:{column}: {}\n", d.code, d.message));
    }
    if analysis.diagnostics.iter().all(|d| d.severity != Severity::Error) {
        let model = print::canonical::model(&analysis.model);
        // The canonical text must read back to the very same model.
        let again = analyze_text(&model);
        if binary::encode_model(&again.model) != binary::encode_model(&analysis.model) {
            out.push_str("DEFECT: the canonical text below reads back to a different model\n");
        }
        out.push_str("reads as:\n");
        for line in model.lines() {
            let indent = if line.is_empty() { "" } else { "  " };
            out.push_str(&format!("{indent}{line}\n"));
        }
    }
    out
}

#[test]
fn every_row_of_the_corner_case_table_gives_the_expected_result() {
    let path = cases_file();
    let file = std::fs::read_to_string(&path).expect("cases.txt is readable");
    let cases = read_cases(&file);
    let numbers: Vec<usize> =
        cases.iter().map(|c| c.header.split(':').next().and_then(|n| n.parse().ok()).unwrap_or(0)).collect();
    assert_eq!(numbers, (1..=98).collect::<Vec<_>>(), "one case per row, 1 to 98, in order");
    let mut rebuilt = String::new();
    for case in &cases {
        rebuilt.push_str(&format!(
            "=== {}\n{}--- expected\n{}",
            case.header,
            case.input,
            outcome(&expand(&case.input))
        ));
    }
    assert!(!rebuilt.contains("DEFECT"), "a case's canonical text does not read back:\n{rebuilt}");
    insta::assert_snapshot!("corner_cases", rebuilt);
}
