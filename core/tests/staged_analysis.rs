//! The staged analysis the language server runs: from the previous version's tree it gives
//! what a fresh analysis gives, it tells the syntax errors before going on, and it stops
//! between stages once asked to.

#![allow(clippy::unwrap_used)]

use std::cell::RefCell;

use onnx_core::analysis::{Stages, Stopped, analyze_text, analyze_text_staged};
use onnx_core::check::CheckOptions;
use onnx_core::pipeline::{CheckedText, EarlierCheck, check_text, check_text_staged};

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
        let staged = check_text_staged(&edited, &options, &stages, None).unwrap();
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

/// Tensors of every kind of storage a number list can end in: typed values, raw bytes
/// (`#@ storage: raw`), a value out of its type's range, a whole embedded tensor, and a
/// tensor in a node's attribute.
const TENSORS: &str = "<ir_version: 10, opset_import: [\"\" : 21]>
main (float[4] x) => (float[4] y) <
  float[4] w = {1, 2, 3, 4},
  #@ storage: raw
  float[4] r = {0.5, 1.5, 2.5, 3.5},
  #@ storage: raw
  int8[3] q = {1, -2, 300},
  int8[3] p = {5, 6, 7},
  int64[2] s = {2, 2},
  double[2] d = {0.25, 0.75}
> {
  c = Constant <value = float[4] {9, 8, 7, 6}> ()
  a = Add (x, w)
  b = Mul (a, r)
  y = Add (b, c)
}
";

#[test]
fn lowering_that_takes_untouched_number_lists_from_the_previous_version_equals_a_fresh_one() {
    let options = CheckOptions { full_check: true, ..CheckOptions::default() };
    // Each edit applies to the text the one before left, as typing does; each version starts
    // from the previous version's analysis, as the language server's do.
    let edits = [
        ("{1, 2, 3, 4}", "{1, 2, 3, 5}"),                    // inside a list: read again
        ("Mul (a, r)", "Mul (a, w)"),                        // elsewhere: every list taken
        ("  #@ storage: raw\n  float[4] r", "  float[4] r"), // raw before, values now
        ("  float[4] r", "  #@ storage: raw\n  float[4] r"), // and back
        ("  #@ storage: raw\n  int8[3] q", "  int8[3] q"),   // 300 does not fit: read again
        ("int8[3] p", "uint8[3] p"),                         // another type: read again
        ("int64[2] s", "int32[2] s"),
        ("double[2] d", "float[2] d"),
        ("{9, 8, 7, 6}", "{9, 8, 7, 6.5}"),
        ("Add (x, w)", "Add (x,  w)"),
    ];
    let mut text = TENSORS.to_owned();
    let mut previous = check_text(&text, &options);
    for (from, to) in edits {
        assert!(text.contains(from), "{from}");
        let edited = text.replacen(from, to, 1);
        let stages = Stages {
            previous: Some((previous.analysis.tree.as_ref().unwrap(), &text)),
            earlier: Some(&previous.analysis),
            earlier_text: &text,
            ..Stages::default()
        };
        let staged = check_text_staged(&edited, &options, &stages, Some(EarlierCheck::of(&previous))).unwrap();
        let fresh = check_text(&edited, &options);
        assert_eq!(staged.analysis.model, fresh.analysis.model, "{from} → {to}");
        assert_eq!(staged.diagnostics, fresh.diagnostics, "{from} → {to}");
        assert_eq!(staged.analysis.source_map.number_lists, fresh.analysis.source_map.number_lists, "{from} → {to}");
        text = edited;
        previous = staged;
    }
    // The lists were taken, not read: the last version's tensors share the first version's
    // raw bytes.
    let first = check_text(TENSORS, &options);
    let raw_of = |checked: &onnx_core::pipeline::CheckedText| {
        let model = &checked.analysis.model;
        let main = &model.graphs[model.graph.unwrap()];
        main.initializers
            .iter()
            .map(|&t| &model.tensors[t])
            .find(|t| t.name.as_ref().is_some_and(|n| *n == "r"))
            .and_then(|t| t.raw_data.clone())
            .unwrap()
    };
    let edited = TENSORS.replacen("Mul (a, r)", "Mul (a, w)", 1);
    let stages = Stages {
        previous: Some((first.analysis.tree.as_ref().unwrap(), TENSORS)),
        earlier: Some(&first.analysis),
        earlier_text: TENSORS,
        ..Stages::default()
    };
    let next = check_text_staged(&edited, &options, &stages, None).unwrap();
    assert_eq!(raw_of(&next).as_ptr(), raw_of(&first).as_ptr(), "the bytes were read again");
}

/// A model with findings of each kind: a name that is not defined (name resolution), inputs
/// an operator's constraint rejects together (inference), and an unknown attribute (the
/// checker's rules).
const FLAWED: &str = "<ir_version: 10, opset_import: [\"\" : 21]>
main (float[N, 4] x, int64[4] k) => (float[N, 4] y) {
  a = Relu (x)
  b = Add (a, k)
  c = Relu <gamma = 1.0> (b)
  y = Mul (c, nowhere)
}
";

/// The next version of `before` after `edit`, from everything `before` gives.
fn next_version(before: &CheckedText, text: &str, edited: &str, options: &CheckOptions) -> CheckedText {
    let stages = Stages {
        previous: Some((before.analysis.tree.as_ref().unwrap(), text)),
        earlier: Some(&before.analysis),
        earlier_text: text,
        ..Stages::default()
    };
    check_text_staged(edited, options, &stages, Some(EarlierCheck::of(before))).unwrap()
}

#[test]
fn an_edit_that_leaves_the_model_as_it_was_takes_the_earlier_verdict_placed_anew() {
    let options = CheckOptions { full_check: true, ..CheckOptions::default() };
    let before = check_text(FLAWED, &options);
    let codes: Vec<&str> = before.diagnostics.iter().map(|d| d.code).collect();
    for code in ["undefined-value", "type-parameter-mismatch", "unknown-attribute"] {
        assert!(codes.contains(&code), "{code} is among {codes:?}");
    }
    // Layout and comments before every finding: each must move with the text.
    for (from, to) in [("  a = Relu", "\n  # a comment\n  a = Relu"), ("(x)", "( x )"), ("main (", "main  (")] {
        let edited = FLAWED.replacen(from, to, 1);
        let next = next_version(&before, FLAWED, &edited, &options);
        assert!(next.analysis.same_model, "{from} → {to}");
        assert!(std::sync::Arc::ptr_eq(&next.verdict, &before.verdict), "{from} → {to}: the verdict was found again");
        assert!(std::sync::Arc::ptr_eq(&next.types, &before.types), "{from} → {to}");
        assert!(std::sync::Arc::ptr_eq(&next.analysis.resolution, &before.analysis.resolution), "{from} → {to}");
        let fresh = check_text(&edited, &options);
        assert_eq!(next.diagnostics, fresh.diagnostics, "{from} → {to}");
        assert_ne!(next.diagnostics, before.diagnostics, "{from} → {to}: the findings moved");
    }
    // An edit of the model is checked again.
    let edited = FLAWED.replacen("nowhere", "a", 1);
    let next = next_version(&before, FLAWED, &edited, &options);
    assert!(!next.analysis.same_model);
    assert!(!std::sync::Arc::ptr_eq(&next.verdict, &before.verdict));
    assert_eq!(next.diagnostics, check_text(&edited, &options).diagnostics);
    // The same model checked with other options is checked again.
    let edited = FLAWED.replacen("(x)", "( x)", 1);
    let other = CheckOptions { full_check: true, check_custom_domain: true, ..CheckOptions::default() };
    let next = next_version(&before, FLAWED, &edited, &other);
    assert!(next.analysis.same_model);
    assert!(!std::sync::Arc::ptr_eq(&next.verdict, &before.verdict));
    assert_eq!(next.diagnostics, check_text(&edited, &other).diagnostics);
    assert_eq!(format!("{:?}", next.types), format!("{:?}", check_text(&edited, &other).types));
}

#[test]
fn a_model_with_external_data_is_always_checked_again() {
    // The file it names may have appeared or changed since the last version.
    let text = "<ir_version: 10, opset_import: [\"\" : 21]>
main (float[4] x) => (float[4] y) <float[4] w = [\"location\": \"weights.bin\"]> {
  y = Add (x, w)
}
";
    let options = CheckOptions { full_check: true, ..CheckOptions::default() };
    let before = check_text(text, &options);
    assert!(before.analysis.model.tensors.iter().any(|(_, t)| t.is_external()), "{:?}", before.diagnostics);
    let edited = text.replacen("Add (x, w)", "Add (x,  w)", 1);
    let next = next_version(&before, text, &edited, &options);
    assert!(!next.analysis.same_model);
    assert_eq!(next.diagnostics, check_text(&edited, &options).diagnostics);
}
