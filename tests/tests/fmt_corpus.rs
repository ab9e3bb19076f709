//! The formatter over every text we have: the canonical text of every corpus model, the text
//! onnx's printer wrote for it (golden files, a different layout), and the same texts with
//! comments inserted between tokens. For each: formatting twice changes nothing after the
//! first time, the formatted text reads to the same model, and no comment is lost. The
//! canonical printer and the formatter share one layout: formatting printed text changes
//! nothing (`fmt(print(m)) == print(m)`).

use std::path::Path;

use bytes::Bytes;
use onnx_core::analysis::analyze_text;
use onnx_core::print::outline;
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

/// What `onnx convert` writes for the real models is formatted text: the whole text as it is
/// streamed to the file (`--inline`), and the outline beside the model (big tensors by
/// reference with a comment on each) in both its layouts, onnx's and `--initializers-last`,
/// which [`print::canonical::model`] does not use.
#[test]
fn texts_convert_writes_for_the_real_models_are_formatted() {
    let mut failures = Vec::new();
    let (mut checked, mut outlines) = (0, 0);
    for path in files_with_suffix(&corpus_dir().join("real"), ".onnx") {
        let rel = path.strip_prefix(corpus_dir()).expect("in corpus").to_string_lossy().into_owned();
        let bytes = Bytes::from(std::fs::read(&path).expect("readable"));
        let model = binary::decode_model(bytes.clone(), &rel).expect("decodes");
        let mut streamed = Vec::new();
        print::canonical::write_model(&model, &mut streamed).expect("writes to memory");
        let streamed = String::from_utf8(streamed).expect("UTF-8");
        checked += 1;
        failures.extend(check(&format!("{rel} as written"), &streamed, true).err());
        for initializers_last in [false, true] {
            let mut model = model.clone();
            let layout = outline::refer_to_source(
                &mut model,
                &bytes,
                "model.onnx",
                outline::DEFAULT_THRESHOLD,
                initializers_last,
            );
            let mut text = Vec::new();
            print::canonical::write_model_with(&model, &layout, &mut text).expect("writes to memory");
            let text = String::from_utf8(text).expect("UTF-8");
            assert!(initializers_last || !text.contains("@initializers"), "{rel}: our syntax unasked");
            outlines += usize::from(!layout.digests.is_empty());
            checked += 1;
            failures
                .extend(check(&format!("{rel} outline (initializers last: {initializers_last})"), &text, true).err());
        }
    }
    report(failures, checked);
    assert!(checked >= 3 * 15, "only {checked} texts checked");
    assert!(outlines >= 20, "only {outlines} outlines with tensors by reference");
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

/// A value list of `count` values, each about `digits` characters wide.
fn values(count: usize, digits: usize, seed: usize) -> String {
    let texts: Vec<String> = (0..count)
        .map(|i| {
            let v = format!("{}", (i + seed) % 9 + 1).repeat(digits.min(8));
            if i % 3 == 1 { format!("-0.{v}") } else { format!("0.{v}") }
        })
        .collect();
    texts.join(", ")
}

/// The places a short tensor can be printed, as a text model around one list of values
/// (`V`) of `N` values under a name of some length (`NAME`): where its `{` starts depends on
/// what comes before it on the line, and the printer has to keep it on that line exactly when
/// the formatter does.
const SHORT_TENSOR_PLACES: &[&str] = &[
    // An initializer in the graph's `< … >` list, and one of several.
    "g (float[N] x) => (float[N] y) <float[N] NAME = {V}> {\n  y = Add (x, NAME)\n}\n",
    "g (float[N] x) => (float[N] y) <float[N] NAME = {V}, float[1] b = {1}> {\n  y = Add (x, NAME)\n}\n",
    // A Constant's value, unnamed and named, and with an annotation before it.
    "g (float[N] x) => (float[N] y) {\n  NAME = Constant <value: tensor = float[N] {V}> ()\n  y = Add (x, NAME)\n}\n",
    "g (float[N] x) => (float[N] y) {\n  c = Constant <value: tensor = float[N] NAME {V}> ()\n  y = Add (x, c)\n}\n",
    "g (float[N] x) => (float[N] y) {\n  c = Constant <\n    value: tensor =\n    #@ storage: raw\n    float[N] NAME {V}\n  > ()\n  y = Add (x, c)\n}\n",
    // Inside a subgraph, where the node holding it is laid out by the formatter.
    "g (bool b, float[N] x) => (float[N] y) {\n  y = If (b) <then_branch: graph = th () => (float[N] o) {\n    o = Constant <value: tensor = float[N] NAME {V}> ()\n  }, else_branch: graph = el () => (float[N] o) {\n    o = Identity (x)\n  }>\n}\n",
    // In a list of tensors.
    "g (float[N] x) => (float[N] y) {\n  c = custom.Op <ts: tensors = [float[1] {1}, float[N] NAME {V}]> ()\n  y = Add (x, c)\n}\n",
    // In a function's body.
    "g (float[N] x) => (float[N] y) {\n  y = custom.F (x)\n}\n\n<domain: \"custom\", opset_import: [\"\" : 17]>\nF (x) => (y) {\n  NAME = Constant <value: tensor = float[N] {V}> ()\n  y = Add (x, NAME)\n}\n",
];

/// The canonical printer lays out a short list of values as the formatter does wherever it
/// stands: on one line when it fits after what is before it, else filled into lines (it once
/// guessed what stood before it, and broke lists the formatter keeps on one line).
#[test]
fn short_tensors_are_printed_as_the_formatter_lays_them_out() {
    let header = "<ir_version: 8, opset_import: [\"\" : 17, \"custom\" : 1]>\n";
    let mut failures = Vec::new();
    let mut checked = 0;
    for (p, place) in SHORT_TENSOR_PLACES.iter().enumerate() {
        for name_len in [1, 6, 12, 20, 33] {
            let name = format!("n{}", "a".repeat(name_len - 1));
            for count in 1..=16 {
                for digits in [1, 4, 9] {
                    let text = format!("{header}{place}")
                        .replace("NAME", &name)
                        .replace("float[N]", &format!("float[{count}]"))
                        .replace("{V}", &format!("{{{}}}", values(count, digits, p)));
                    let analysis = analyze_text(&text);
                    assert!(analysis.readable, "{text}\n{:?}", analysis.diagnostics.first());
                    let printed = print::canonical::model(&analysis.model);
                    checked += 1;
                    let label = format!("place {p}, name of {name_len}, {count} values of {digits} digits");
                    failures.extend(check(&label, &printed, true).err());
                }
            }
        }
    }
    report(failures, checked);
}

/// Widths are counted in characters, as the formatter counts them, also in names and string
/// values that are not ASCII.
#[test]
fn printed_widths_are_counted_in_characters() {
    let header = "<ir_version: 8, opset_import: [\"\" : 17]>\n";
    let mut failures = Vec::new();
    let mut checked = 0;
    for len in 1..40 {
        let wide = "é".repeat(len);
        let texts = [
            // A signature that fits on its line in characters but not in bytes.
            format!(
                "g (float[2] \"{wide}\", float[2] \"x{wide}\") => (float[2] y) {{\n  y = Add (\"{wide}\", \"x{wide}\")\n}}\n"
            ),
            // String values, on one line and filled into lines.
            format!(
                "g (float[2] x) => (string[3] y) <string[3] s = {{\"{wide}\", \"{wide}\", \"{wide}\"}}> {{\n  y = Identity (s)\n}}\n"
            ),
            format!(
                "g (float[2] x) => (string[9] y) <string[9] s = {{{}}}> {{\n  y = Identity (s)\n}}\n",
                vec![format!("\"{wide}\""); 9].join(", ")
            ),
        ];
        for (i, text) in texts.iter().enumerate() {
            let analysis = analyze_text(&format!("{header}{text}"));
            assert!(analysis.readable, "{text}\n{:?}", analysis.diagnostics.first());
            let printed = print::canonical::model(&analysis.model);
            checked += 1;
            failures.extend(check(&format!("text {i}, {len} wide characters"), &printed, true).err());
        }
    }
    report(failures, checked);
}
