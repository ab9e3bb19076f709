//! The incremental reparse gives what a full parse gives: random edits are applied to
//! real texts of the repository (and one with nested graphs and functions), each new text
//! is parsed both ways, and the trees must be equal. The edits are chained: each reparse
//! starts from the tree the previous step produced, so ranges that drift would show.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use onnx_syntax::ast::{Model, NodeItem, Span, ValueDecl};
use onnx_syntax::incremental::{Edit, reparse_model};
use onnx_syntax::parse_model;

/// The same edits on every run: a seeded generator.
fn rng() -> fastrand::Rng {
    fastrand::Rng::with_seed(0x9e37_79b9_7f4a_7c15)
}

/// A number below `n` (below 1 when `n` is 0).
fn below(rng: &mut fastrand::Rng, n: usize) -> usize {
    rng.usize(..n.max(1))
}

/// What people type, and what breaks the grammar or the lexer's context.
const SNIPPETS: &[&str] = &[
    " ",
    "x",
    "7",
    ",",
    "(",
    ")",
    "<",
    ">",
    "{",
    "}",
    "[",
    "]",
    "=",
    ".",
    ":",
    "@",
    "\n",
    "#",
    "\"",
    "#@ k: 1\n",
    "1.5e3",
    "-",
    "a = Relu(b)\n",
    ", y",
    "<alpha = 0.5>",
    "float[2] t = {1, 2}",
    "é",
    "b\"\\x01\"",
    "# note\n",
    "\"quoted name\"",
    "{1, 2, 3}",
    "=>",
];

const NESTED: &str = r#"<ir_version: 10, opset_import: ["" : 21, "local" : 1]>
main (float[N, 4] x, bool c) => (float[N, 4] y) <float[4] w = {1, 2, 3, 4}> {
  #@ doc_string: "first"
  [first] a = Add (x, w)
  b = If (c) <then_branch: graph = then_g () => (float[N, 4] t) {
      t = Relu (a)
    }, else_branch: graph = else_g () => (float[N, 4] e) {
      e = Neg (a)
    }>
  l = Loop (m, "", a) <body: graph = body (int64 i, bool k, float[N, 4] v) => (bool k2, float[N, 4] v2) {
      k2 = Identity (k)
      v2 = local.Twice <scale = 2.0> (v)
    }>
  y = Mul (b, l) <note = "x,y">
}
<domain: "local", opset_import: ["" : 21]>
Twice <scale: float = 1.0> (x) => (y) {
  s = Constant <value_float: float = @scale> ()
  y = Mul (x, s)
}
"#;

fn texts() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dirs = [
        "lsp/tests/fixtures",
        "tui/tests/fixtures",
        "syntax/tests/fixtures/parser",
        "syntax/tests/fixtures/format",
        "tests/fixtures/text",
        "tests/fixtures/check/text",
        "tests/corpus/golden/onnx-text/handmade",
        "cli/tests/fixtures/commands",
    ];
    let mut found: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        let entries = std::fs::read_dir(root.join(dir)).unwrap_or_else(|e| panic!("{dir}: {e}"));
        for entry in entries {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "onnxtxt") {
                found.push(path);
            }
        }
    }
    found.sort();
    let mut texts: Vec<(String, String)> =
        found.into_iter().map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap())).collect();
    texts.push(("nested".into(), NESTED.into()));
    assert!(texts.len() > 40, "{} texts", texts.len());
    texts
}

/// Where edits land: mostly inside a node or declaration of the main graph or a function
/// (where the reparse applies), the rest anywhere.
fn position(rng: &mut fastrand::Rng, text: &str, tree: &Option<Model>) -> usize {
    let graph = tree.as_ref().and_then(|m| m.graph.as_ref());
    let nodes = graph.iter().flat_map(|g| &g.nodes).filter_map(|n| match n {
        NodeItem::Node(n) => Some(n.span),
        NodeItem::Error(_) => None,
    });
    let declarations = graph.iter().flat_map(|g| g.inputs.iter().flatten().chain(&g.outputs).chain(g.local_decls()));
    let declarations = declarations.filter_map(|d| match d {
        ValueDecl::Decl { span, .. } => Some(*span),
        ValueDecl::Error(_) => None,
    });
    let functions = tree.iter().flat_map(|m| &m.functions).map(|f| f.span);
    let nodes: Vec<Span> = nodes.chain(declarations).chain(functions).collect();
    let mut at = match nodes.get(below(rng, nodes.len())) {
        Some(span) if below(rng, 4) != 0 => span.start as usize + below(rng, span.len() as usize + 1),
        _ => below(rng, text.len() + 1),
    };
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// What is typed: mostly what keeps a text readable (name characters, spaces), the rest
/// anything.
fn typed(rng: &mut fastrand::Rng) -> &'static str {
    match below(rng, 8) {
        0..=1 => "",
        2..=4 => ["x", " ", "7", "_"][below(rng, 4)],
        _ => SNIPPETS[below(rng, SNIPPETS.len())],
    }
}

#[test]
fn random_edits_reparse_to_the_full_parse() {
    let mut rng = rng();
    let (mut spliced, mut fell_back, mut steps) = (0usize, 0usize, 0usize);
    for (name, original) in texts() {
        let mut text = original.clone();
        let mut tree = parse_model(&text);
        for step in 0..120 {
            // Start again from the file now and then, and when the text no longer reads, so
            // that texts do not drift into noise.
            if step % 40 == 0 || (step % 4 == 0 && !tree.errors.is_empty()) {
                text = original.clone();
                tree = parse_model(&text);
            }
            let start = position(&mut rng, &text, &tree.tree);
            let mut end = (start + below(&mut rng, 4)).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            let insert = typed(&mut rng);
            let mut edited = text.clone();
            edited.replace_range(start..end, insert);
            let full = parse_model(&edited);
            steps += 1;
            // As the language server does: the smallest edit between the two texts, and an
            // incremental step only from a tree without errors.
            let edit = Edit::between(&text, &edited);
            let incremental = match (&tree.tree, tree.errors.is_empty()) {
                (Some(previous), true) => reparse_model(previous, &edited, edit),
                _ => None,
            };
            match incremental {
                Some(parse) => {
                    spliced += 1;
                    assert!(
                        full.errors.is_empty(),
                        "{name} step {step}: spliced, but the full parse has errors {:?}\n{edited}",
                        full.errors
                    );
                    assert_eq!(
                        parse.tree, full.tree,
                        "{name} step {step}: edit {edit:?} ({insert:?} at {start}..{end})\n{edited}"
                    );
                    assert!(parse.errors.is_empty());
                    tree = parse;
                }
                None => {
                    fell_back += 1;
                    tree = full;
                }
            }
            text = edited;
        }
    }
    // Both paths must be exercised, or the comparison proves nothing. (Most texts break
    // within a few random edits, and a text with errors is always parsed whole.)
    assert!(spliced > steps / 20, "only {spliced} of {steps} edits were reparsed incrementally");
    assert!(fell_back > steps / 10, "only {fell_back} of {steps} edits fell back");
}

#[test]
fn an_edit_inside_a_node_of_a_subgraph_reparses_that_node() {
    let at = NESTED.find("Neg (a)").unwrap() + "Neg (".len();
    let edited = format!("{}{}{}", &NESTED[..at], "x", &NESTED[at + 1..]);
    let previous = parse_model(NESTED).tree.unwrap();
    let parse = reparse_model(&previous, &edited, Edit::between(NESTED, &edited)).expect("reparsed");
    assert_eq!(parse.tree, parse_model(&edited).tree);
    // Growing the text moves what follows.
    let grown = NESTED.replacen("Relu (a)", "Relu (a_much_longer_name)", 1);
    let parse = reparse_model(&previous, &grown, Edit::between(NESTED, &grown)).expect("reparsed");
    assert_eq!(parse.tree, parse_model(&grown).tree);
}

#[test]
fn an_edit_inside_a_declaration_reparses_that_declaration() {
    let previous = parse_model(NESTED).tree.unwrap();
    for (from, to) in [
        ("float[4] w = {1, 2, 3, 4}", "float[4] w = {1, 2, 30, 4}"),
        ("float[N, 4] x, bool c", "float[M, 4] x, bool c"),
        ("=> (float[N, 4] y)", "=> (float[N, 44] y)"),
    ] {
        let edited = NESTED.replacen(from, to, 1);
        let parse = reparse_model(&previous, &edited, Edit::between(NESTED, &edited)).expect(from);
        assert_eq!(parse.tree, parse_model(&edited).tree, "{from} → {to}");
    }
}

#[test]
fn an_edit_in_a_function_outside_its_nodes_reparses_that_function() {
    let previous = parse_model(NESTED).tree.unwrap();
    for (from, to) in [
        ("Twice <scale: float = 1.0>", "Twice <scale: float = 1.5>"), // a parameter's default
        ("(x) => (y) {\n  s", "(x, z) => (y) {\n  s"),                // its signature
        ("<domain: \"local\", opset_import: [\"\" : 21]>", "<domain: \"local\", opset_import: [\"\" : 20]>"),
        ("body (int64 i, bool k", "body (int64 j, bool k"), // a subgraph's declaration: its node
    ] {
        let edited = NESTED.replacen(from, to, 1);
        assert_ne!(edited, NESTED, "{from}");
        let parse = reparse_model(&previous, &edited, Edit::between(NESTED, &edited)).expect(from);
        assert_eq!(parse.tree, parse_model(&edited).tree, "{from} → {to}");
    }
    // A function that no longer reads as one is parsed with the whole text.
    let edited = NESTED.replacen("(x) => (y) {\n  s", "(x) => (y) {{\n  s", 1);
    assert!(reparse_model(&previous, &edited, Edit::between(NESTED, &edited)).is_none());
}

#[test]
fn edits_outside_one_node_or_that_break_it_fall_back() {
    let previous = parse_model(NESTED).tree.unwrap();
    for (from, to) in [
        ("main (float[N, 4] x", "mainx (float[N, 4] x"), // the graph's name
        ("float[4] w = {1, 2", "float[4] w = {1, 2}, float[1] v = {1"), // one declaration becomes two
        ("y = Mul (b, l)", "y = Mul (b, l))"),           // a stray closer
        ("t = Relu (a)", "t = Relu (a"),                 // an unclosed bracket swallows what follows
        ("e = Neg (a)", "e = Neg (\"a)"),                // a string that runs on
        ("[first] a", "[first]\n  z = Relu(x)\n a"),     // two nodes where there was one
    ] {
        let edited = NESTED.replacen(from, to, 1);
        let edit = Edit::between(NESTED, &edited);
        match reparse_model(&previous, &edited, edit) {
            None => {}
            Some(parse) => panic!("{from:?} → {to:?} was reparsed: {:?}", parse.tree == parse_model(&edited).tree),
        }
    }
}

#[test]
fn a_big_graph_is_copied_on_every_core_and_still_equals_the_full_parse() {
    // Past the size at which the nodes are copied in pieces on the pool.
    let mut text = String::from("<ir_version: 10, opset_import: [\"\" : 21]>\nmain (float[N] v0) => (float[N] y) {\n");
    for i in 0..20_000 {
        text.push_str(&format!("  v{} = Relu (v{i})\n", i + 1));
    }
    text.push_str("  y = Identity (v20000)\n}\n");
    let previous = parse_model(&text).tree.unwrap();
    for (from, to) in [("v10001 = Relu (v10000)", "v10001 = Relu (v10000, extra)"), ("v3 = Relu (v2)", "v3 = Relu (v)")]
    {
        let edited = text.replacen(from, to, 1);
        let parse = reparse_model(&previous, &edited, Edit::between(&text, &edited)).expect("one node");
        assert!(parse.tree == parse_model(&edited).tree, "{from} → {to}");
    }
}
