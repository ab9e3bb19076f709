//! Replays the fuzz targets' properties (`onnx_tests::fuzz`) under plain `cargo test`: over
//! every input a fuzzing campaign found and committed (`fuzz/regressions/TARGET/`), and over
//! the committed corpus (binary models, their texts, the text fixtures), which is also what
//! the campaigns are seeded from (`fuzz/seed.sh`).

use std::path::Path;

use onnx_tests::fuzz::TARGETS;
use onnx_tests::{corpus_dir, files_with_suffix};

fn regressions(target: &str) -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions").join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n != ".keep"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_committed_fuzz_finding_now_holds() {
    for (target, property) in TARGETS {
        for input in regressions(target) {
            let data = std::fs::read(&input).expect("readable");
            property(&data);
        }
    }
}

#[test]
fn the_seeds_hold() {
    let handmade: Vec<_> = files_with_suffix(&corpus_dir().join("handmade"), ".onnx");
    let real = files_with_suffix(&corpus_dir().join("real"), ".onnx");
    // A sample of the node tests (every 20th) keeps the debug build quick.
    let node: Vec<_> = files_with_suffix(&corpus_dir().join("node"), ".onnx").into_iter().step_by(20).collect();
    let texts = files_with_suffix(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"), ".onnxtxt");
    assert!(!texts.is_empty() && !real.is_empty());
    for model in handmade.iter().chain(&node).chain(real.iter().filter(|p| size(p) < 1 << 20)) {
        let data = std::fs::read(model).expect("readable");
        onnx_tests::fuzz::binary_roundtrip(&data);
        onnx_tests::fuzz::check_binary(&data);
        onnx_tests::fuzz::run_binary(&data);
        onnx_tests::fuzz::simplify_binary(&data);
        onnx_tests::fuzz::diff_binary(&data);
        onnx_tests::fuzz::opset_binary(&data);
    }
    for text in &texts {
        let data = std::fs::read(text).expect("readable");
        onnx_tests::fuzz::text_roundtrip(&data);
        onnx_tests::fuzz::fmt_stable(&data);
        onnx_tests::fuzz::check_text(&data);
    }
}

/// The committed seeds of the targets that have their own (`fuzz/seeds/TARGET/`, written by
/// `fuzz/lsp_seeds.py`): the language server's message sequences and edit scripts.
#[test]
fn the_committed_seeds_hold() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds");
    let mut replayed = 0;
    for (target, property) in TARGETS {
        let Ok(entries) = std::fs::read_dir(seeds.join(target)) else { continue };
        let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        for input in files {
            property(&std::fs::read(&input).expect("readable"));
            replayed += 1;
        }
    }
    assert!(replayed >= 30, "only {replayed} committed seeds replayed");
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}
