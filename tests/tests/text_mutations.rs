//! Random mutations of text fixtures (deterministic seed, thousands of cases) never panic or
//! hang the parser, the lowering, name resolution or the printers.

use std::time::{Duration, Instant};

use onnx_core::analysis::analyze_text;
use onnx_core::print;
use onnx_tests::{SplitMix64, corpus_dir, files_with_suffix};

/// Pieces of the language spliced into texts, so mutations reach deep into the grammar.
const PIECES: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "<",
    ">",
    ",",
    ":",
    "=",
    "=>",
    ".",
    "@",
    "?",
    "\"",
    "#",
    "#@ ",
    "\n",
    " ",
    "-",
    "1e",
    "-inf",
    "nan",
    "1.5",
    "99999999999999999999",
    "float",
    "seq(",
    "map(",
    "opaque(",
    "sparse_tensor(",
    "x",
    "g () => () {}",
    "b\"\\xff\"",
    "\0",
    "é",
    "#@ doc_string: b\"a\\nb\"\n",
    "#@ node_domain: unset\n",
    "#@ storage: raw\n",
    "<ir_version: 7>",
    "float[2] t = {1, 2}",
];

/// A hang guard, not a performance assertion.
const HANG: Duration = Duration::from_secs(10);

fn mutate(rng: &mut SplitMix64, text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(bytes.len() as u64 + 1) as usize;
        match rng.below(4) {
            0 => {
                let len = rng.below(16) as usize;
                bytes.drain(at..(at + len).min(bytes.len()));
            }
            1 | 2 => {
                let piece = PIECES[rng.below(PIECES.len() as u64) as usize];
                bytes.splice(at..at, piece.bytes());
            }
            _ => {
                let from = rng.below(bytes.len() as u64 + 1) as usize;
                let len = rng.below(32) as usize;
                let copy: Vec<u8> = bytes[from..(from + len).min(bytes.len())].to_vec();
                bytes.splice(at..at, copy);
            }
        }
    }
    // The analysis takes text; mutations that broke UTF-8 are repaired the way an editor would.
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn mutated_texts_never_panic_or_hang() {
    let mut sources: Vec<String> = files_with_suffix(&corpus_dir().join("../fixtures/text"), ".onnxtxt")
        .into_iter()
        .chain(files_with_suffix(&corpus_dir().join("golden/onnx-text"), ".onnxtxt").into_iter().step_by(40))
        .map(|p| std::fs::read_to_string(p).expect("readable"))
        .collect();
    sources.retain(|s| s.len() < 20_000);
    assert!(sources.len() >= 40);
    let mut rng = SplitMix64(0x7465_7874);
    let mut cases = 0;
    for source in &sources {
        for _ in 0..80 {
            let text = mutate(&mut rng, source);
            let start = Instant::now();
            let analysis = analyze_text(&text);
            let _ = print::canonical::model(&analysis.model);
            let _ = print::onnx_style::model(&analysis.model);
            assert!(start.elapsed() < HANG, "looks like a hang on:\n{text}");
            cases += 1;
        }
    }
    assert!(cases >= 3000, "only {cases} cases");
}
