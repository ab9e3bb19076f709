//! The formatter over every text we have: the canonical text of every corpus model, the text
//! onnx's printer wrote for it (golden files, a different layout), and the same texts with
//! comments inserted between tokens. For each: formatting twice changes nothing after the
//! first time, the formatted text reads to the same model, and no comment is lost. The
//! canonical printer and the formatter share one layout: formatting printed text changes
//! nothing (`fmt(print(m)) == print(m)`).

use std::path::Path;

use bytes::Bytes;
use onnx_core::analysis::analyze_text;
use onnx_core::{binary, print};
use onnx_syntax::format::{comment_count, format_model};
use onnx_syntax::lexer::{self, TokenKind};
use onnx_tests::{SplitMix64, corpus_dir, corpus_models, files_with_suffix};

/// The binary encoding of the model a text reads to, or why it does not read.
fn model_of(text: &str) -> Result<Vec<u8>, String> {
    let analysis = analyze_text(text);
    if !analysis.readable {
        let first = analysis.diagnostics.first().map(|d| format!("{}: {}", d.code, d.message)).unwrap_or_default();
        return Err(first);
    }
    Ok(binary::encode_model(&analysis.model))
}

/// Checks one text; returns a description of what went wrong. `formatted`: the text is
/// expected to be formatted already.
fn check(label: &str, text: &str, formatted: bool) -> Result<(), String> {
    let expected = model_of(text).map_err(|e| format!("{label}: the input does not read: {e}"))?;
    let once = format_model(text).map_err(|e| format!("{label}: not formatted: {e:?}"))?;
    if formatted && once != text {
        return Err(format!("{label}: the formatter changes the printed text:\n{}", first_difference(text, &once)));
    }
    let twice = format_model(&once).map_err(|e| format!("{label}: its own output does not parse: {e:?}"))?;
    if twice != once {
        return Err(format!("{label}: formatting again changes the text:\n--- once\n{once}\n--- twice\n{twice}"));
    }
    if comment_count(&once) != comment_count(text) {
        return Err(format!("{label}: {} comments before, {} after", comment_count(text), comment_count(&once)));
    }
    match model_of(&once) {
        Ok(model) if model == expected => Ok(()),
        Ok(_) => Err(format!("{label}: the formatted text reads to a different model:\n{once}")),
        Err(e) => Err(format!("{label}: the formatted text does not read: {e}\n{once}")),
    }
}

/// The text with a comment after some tokens: at the end of the line (`# tN`) or on a line of
/// its own (`# oN`), sometimes after an empty line. Never right after an annotation or a
/// comment, which run to the end of their line.
fn with_comments(text: &str, rng: &mut SplitMix64) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let mut n = 0;
    for token in lexer::lex(text) {
        out.push_str(token.text(text));
        if token.kind.is_trivia() || token.kind == TokenKind::Annotation {
            continue;
        }
        match rng.below(8) {
            0 => out.push_str(&format!(" # t{n}\n")),
            1 => out.push_str(&format!("\n# o{n}\n")),
            2 => out.push_str(&format!("\n\n## doc{n}\n")),
            _ => continue,
        }
        n += 1;
    }
    out
}

/// The first line where two texts differ, with its number.
fn first_difference(before: &str, after: &str) -> String {
    let pairs = before.lines().zip(after.lines()).enumerate();
    match pairs.clone().find(|(_, (a, b))| a != b) {
        Some((i, (a, b))) => format!("line {}:\n- {a}\n+ {b}", i + 1),
        None => format!("{} lines before, {} after", before.lines().count(), after.lines().count()),
    }
}

fn report(failures: Vec<String>, checked: usize) {
    assert!(
        failures.is_empty(),
        "{} of {checked} texts fail:\n{}",
        failures.len(),
        failures[..failures.len().min(5)].join("\n\n")
    );
}

/// The largest text that also gets comments inserted between its tokens.
const COMMENTED_TEXT_LIMIT: usize = 1 << 20;

#[test]
fn canonical_texts_of_the_corpus_format_stably_to_the_same_model() {
    let mut rng = SplitMix64(0x5eed_f0a7);
    let mut failures = Vec::new();
    let mut checked = 0;
    for path in corpus_models() {
        let rel = path.strip_prefix(corpus_dir()).expect("in corpus").to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).expect("readable");
        let model = binary::decode_model(Bytes::from(bytes), &rel).expect("decodes");
        let text = print::canonical::model(&model);
        checked += 1;
        failures.extend(check(&rel, &text, true).err());
        // Comments between the millions of numbers of a real model's weights would take the
        // formatter off its fast path for number lists and the debug build minutes; the
        // comment handling is the same on a small text.
        if text.len() <= COMMENTED_TEXT_LIMIT {
            checked += 1;
            failures.extend(check(&format!("{rel} with comments"), &with_comments(&text, &mut rng), false).err());
        }
    }
    report(failures, checked);
    assert!(checked >= 2 * 1884);
}

#[test]
fn texts_printed_by_onnx_format_stably_to_the_same_model() {
    let mut rng = SplitMix64(0x0bb0_7e87);
    let mut failures = Vec::new();
    let mut checked = 0;
    let dir = corpus_dir().join("golden").join("onnx-text");
    for path in files_with_suffix(&dir, ".onnxtxt") {
        let text = std::fs::read_to_string(&path).expect("readable");
        let rel = path.strip_prefix(&dir).unwrap_or(&path).display().to_string();
        // Some of onnx's texts do not read back even in onnx (see onnx-reparse.tsv).
        if model_of(&text).is_err() {
            continue;
        }
        checked += 1;
        failures.extend(check(&rel, &text, false).err());
        // Comments between the millions of numbers of a real model's weights would take the
        // formatter off its fast path for number lists and the debug build minutes; the
        // comment handling is the same on a small text.
        if text.len() <= COMMENTED_TEXT_LIMIT {
            checked += 1;
            failures.extend(check(&format!("{rel} with comments"), &with_comments(&text, &mut rng), false).err());
        }
    }
    report(failures, checked);
    assert!(checked >= 2 * 1800, "only {checked} texts checked");
}

#[test]
fn the_text_fixtures_format_stably() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join("text");
    let mut checked = 0;
    for path in files_with_suffix(&dir, ".onnxtxt") {
        let text = std::fs::read_to_string(&path).expect("readable");
        let Ok(once) = format_model(&text) else { continue };
        checked += 1;
        assert_eq!(format_model(&once).as_ref(), Ok(&once), "{}", path.display());
        assert_eq!(comment_count(&once), comment_count(&text), "{}", path.display());
    }
    assert!(checked >= 1);
}

#[test]
fn comment_insertion_really_inserts_comments() {
    let text = "<ir_version: 10, opset_import: [\"\" : 21]>\ng (float x) => (float y) {\n  y = Relu (x)\n}\n";
    let commented = with_comments(text, &mut SplitMix64(3));
    assert!(comment_count(&commented) >= 3, "{commented}");
    assert_eq!(check("small", &commented, false), Ok(()));
}
