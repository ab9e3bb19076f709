//! Snapshot tests of the text front end over fixture folders, one snapshot per input file:
//!
//! * `fixtures/lexer/`: every token with its kind and range (trivia and error tokens too);
//! * `fixtures/parser/`: the syntax errors and the tree the parser recovered;
//! * `fixtures/format/`: the formatted text (and that formatting it again changes nothing).
//!
//! A change of behaviour shows up as a diff of a `.snap` file in `snapshots/`, to review
//! before it is committed: `INSTA_UPDATE=always cargo test -p onnx-syntax --test snapshots`
//! (or `cargo insta review`) writes the new snapshots. With `CI=true` insta never writes
//! them, so any difference fails the run. Add a case by adding a file.

use onnx_syntax::format::format_model;
use onnx_syntax::lexer;
use onnx_syntax::parse_model;

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn lexer_token_dumps() {
    insta::glob!("fixtures/lexer/*.onnxtxt", |path| {
        let source = read(path);
        let mut dump = String::new();
        for token in lexer::lex(&source) {
            dump.push_str(&format!("{}..{} {:?} {:?}\n", token.start, token.end, token.kind, token.text(&source)));
        }
        insta::assert_snapshot!(dump);
    });
}

#[test]
fn parser_tree_dumps_with_recovery() {
    insta::glob!("fixtures/parser/*.onnxtxt", |path| {
        let source = read(path);
        let parse = parse_model(&source);
        let mut dump = String::new();
        for e in &parse.errors {
            let text = source.get(e.span.start as usize..e.span.end as usize).unwrap_or("");
            dump.push_str(&format!("error[{}] {}..{} {text:?}: {}\n", e.code, e.span.start, e.span.end, e.message));
        }
        dump.push_str(&format!("{:#?}\n", parse.tree));
        insta::assert_snapshot!(dump);
    });
}

#[test]
fn formatter_outputs() {
    insta::glob!("fixtures/format/*.onnxtxt", |path| {
        let source = read(path);
        let formatted = match format_model(&source) {
            Ok(text) => {
                assert_eq!(format_model(&text).as_ref(), Ok(&text), "{}: formatting again changes it", path.display());
                text
            }
            Err(errors) => format!("not formatted: {} syntax error(s), first: {:?}\n", errors.len(), errors[0].message),
        };
        insta::assert_snapshot!(formatted);
    });
}
