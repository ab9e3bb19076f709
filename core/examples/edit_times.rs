//! Times what the language server does after a one-character edit, in-process: the parse
//! alone (whole, then incremental from the previous tree), and the whole staged check
//! (parse, lowering, resolution, rules and inference) both ways, once more with the
//! number lists the edit left alone taken from the previous lowering, and once with the
//! previous check given too (the model being the same, its verdict is taken as it is).
//! A last row makes an edit that changes the model (a letter typed into a node's input
//! name, which is then undefined), with everything the previous version gives:
//! `cargo run --release -p onnx-core --example edit_times -- (TEXT | --chain NODES) [REPEAT]`.
//! `--chain N` makes a chain of N `Relu` nodes. The edit puts a space after the `=` of the
//! node line nearest the middle.

use std::time::{Duration, Instant};

use onnx_core::analysis::Stages;
use onnx_core::check::CheckOptions;
use onnx_core::pipeline::{EarlierCheck, check_text, check_text_staged};
use onnx_syntax::incremental::{Edit, reparse_model};

// The allocator the language server ships with.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn best<T>(repeat: usize, mut f: impl FnMut() -> T) -> Duration {
    (0..repeat)
        .map(|_| {
            let start = Instant::now();
            let out = f();
            let t = start.elapsed();
            drop(out);
            t
        })
        .min()
        .unwrap_or_default()
}

/// Just after the `=` of the node nearest the middle line.
fn node_edit_place(source: &str) -> usize {
    let starts: Vec<usize> = std::iter::once(0).chain(source.match_indices('\n').map(|(i, _)| i + 1)).collect();
    // `[label] out = Op (` is a node; `float[2] w = …` is not.
    let is_node = |line: &str| {
        let body = line.trim_start();
        let Some((before, after)) = body.split_once(" = ") else { return false };
        let typed = before.contains(']') && !before.starts_with('[');
        !body.starts_with(['<', '#', '@']) && !typed && !line.contains('{') && after.contains('(')
    };
    let middle = starts.len() / 2;
    for distance in 0..starts.len() {
        for k in [middle + distance, middle.wrapping_sub(distance)] {
            let Some(&start) = starts.get(k) else { continue };
            let end = starts.get(k + 1).map_or(source.len(), |e| e - 1);
            let line = &source[start..end];
            if is_node(line) {
                return start + line.find(" = ").unwrap_or(0) + 2;
            }
        }
    }
    source.len() / 2
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (source, rest) = match args.first().map(String::as_str) {
        Some("--chain") => {
            let n: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(100_000);
            let mut text =
                String::from("<ir_version: 10, opset_import: [\"\" : 21]>\nmain (float[N] v0) => (float[N] y) {\n");
            for i in 0..n {
                text.push_str(&format!("  v{} = Relu (v{i})\n", i + 1));
            }
            text.push_str(&format!("  y = Identity (v{n})\n}}\n"));
            (text, &args[2.min(args.len())..])
        }
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => (text, &args[1..]),
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(1);
            }
        },
        None => {
            eprintln!("usage: edit_times (TEXT | --chain NODES) [REPEAT]");
            std::process::exit(2);
        }
    };
    let repeat: usize = rest.first().and_then(|r| r.parse().ok()).unwrap_or(5);
    let at = node_edit_place(&source);
    let edited = format!("{} {}", &source[..at], &source[at..]);
    // The letter goes at the end of the node's first input name (`… (v7` → `… (v7x`).
    let renamed = match source[at..].find('(').map(|open| at + open + 1) {
        Some(name) => {
            let mut end = name + source[name..].find([',', ')']).unwrap_or(0);
            if source[..end].ends_with('"') {
                end -= 1; // inside the quotes of a quoted name
            }
            format!("{}x{}", &source[..end], &source[end..])
        }
        None => edited.clone(),
    };
    let options = CheckOptions { full_check: true, ..CheckOptions::default() };
    let checked = check_text(&source, &options);
    let previous = &checked.analysis;
    let edit = Edit::between(&source, &edited);
    let tree = previous.tree.as_ref().expect("a tree");
    let incremental = Stages { previous: Some((tree, &source)), ..Stages::default() };
    let reusing =
        Stages { previous: Some((tree, &source)), earlier: Some(previous), earlier_text: &source, ..Stages::default() };
    let verdict = Some(EarlierCheck::of(&checked));
    let rows = [
        ("parse, whole", best(repeat, || onnx_syntax::parse_model(&edited))),
        ("parse, incremental", best(repeat, || reparse_model(tree, &edited, edit).expect("one node"))),
        ("check, whole", best(repeat, || check_text_staged(&edited, &options, &Stages::default(), None))),
        ("check, incremental", best(repeat, || check_text_staged(&edited, &options, &incremental, None))),
        ("check, reusing lists", best(repeat, || check_text_staged(&edited, &options, &reusing, None))),
        ("check, same model", best(repeat, || check_text_staged(&edited, &options, &reusing, verdict))),
        ("check, name typed", best(repeat, || check_text_staged(&renamed, &options, &reusing, verdict))),
    ];
    let checked = check_text_staged(&edited, &options, &incremental, None);
    let start = Instant::now();
    drop(checked);
    let freeing = start.elapsed();
    println!("{:.1} MB, best of {repeat}:", source.len() as f64 / 1e6);
    println!("  {:<20} {:8.1} ms", "freeing a check", freeing.as_secs_f64() * 1e3);
    for (what, t) in rows {
        println!("  {what:<20} {:8.1} ms", t.as_secs_f64() * 1e3);
    }
}
