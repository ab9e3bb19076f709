//! The staged analysis the language server runs: from the previous version's tree it gives
//! what a fresh analysis gives, it tells the syntax errors before going on, and it stops
//! between stages once asked to.

#![allow(clippy::unwrap_used)]

use std::cell::RefCell;

use onnx_core::analysis::{Stages, Stopped, analyze_text, analyze_text_staged};
use onnx_core::check::CheckOptions;
use onnx_core::pipeline::{check_text, check_text_staged};

const TEXT: &str = "<ir_version: 10, opset_import: [\"\" : 21]>
main (float[N, 4] x) => (float[N, 4] y) <float[4] w = {1, 2, 3, 4}> {
  a = Relu (x)
  b = Transpose <perm = [1, 0]> (a)
  c = Add (b, w)
  y = Mul (c, a)
}
";

#[test]
fn an_analysis_from_the_previous_tree_equals_a_fresh_one() {
    let previous = analyze_text(TEXT);
    assert!(previous.syntax_clean);
    for (from, to) in [("Relu (x)", "Relu (q)"), ("perm = [1, 0]", "perm = [1, 0, 2]"), ("Add (b, w)", "Add (b,w, w)")]
    {
        let edited = TEXT.replacen(from, to, 1);
        let stages = Stages { previous: Some((previous.tree.as_ref().unwrap(), TEXT)), ..Stages::default() };
        let options = CheckOptions { full_check: true, ..CheckOptions::default() };
        let staged = check_text_staged(&edited, &options, &stages).unwrap();
        let fresh = check_text(&edited, &options);
        assert_eq!(staged.analysis.tree, fresh.analysis.tree, "{from} → {to}");
        assert_eq!(staged.analysis.model, fresh.analysis.model, "{from} → {to}");
        assert_eq!(staged.diagnostics, fresh.diagnostics, "{from} → {to}");
        assert!(!staged.diagnostics.is_empty(), "{from} → {to}: each edit breaks something");
    }
}

#[test]
fn syntax_errors_are_told_first_and_a_stale_analysis_stops() {
    let broken = TEXT.replacen("Relu (x)", "Relu ((x)", 1);
    let told = RefCell::new(Vec::new());
    let on_parsed =
        |found: &[onnx_core::diagnostic::Diagnostic]| told.borrow_mut().extend(found.iter().map(|d| d.code));
    let stale = || true;
    let stages = Stages { on_parsed: Some(&on_parsed), stale: Some(&stale), ..Stages::default() };
    let stopped = analyze_text_staged(&broken, &stages).unwrap_err();
    assert!(stopped.clean_tree.is_none(), "a tree with errors is no start for the next parse");
    assert!(!told.borrow().is_empty(), "the syntax errors were told before stopping");
    // A clean text stopped after its parse gives its tree, for the next version to start from.
    let Stopped { clean_tree } = analyze_text_staged(TEXT, &stages).unwrap_err();
    assert_eq!(clean_tree.map(|t| *t), analyze_text(TEXT).tree);
    // Not stale: it goes to the end.
    let fresh = || false;
    let stages = Stages { stale: Some(&fresh), ..Stages::default() };
    assert!(analyze_text_staged(TEXT, &stages).is_ok());
}
