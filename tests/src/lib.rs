//! Helpers shared by the data-driven tests: where the corpus is and how to walk it.

use std::path::{Path, PathBuf};

/// Root of the committed corpus (`tests/corpus`).
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// Every file below `dir` whose name ends with `suffix`, sorted, so test order and any
/// seeded sampling are stable.
pub fn files_with_suffix(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(suffix))
            {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Every model in the corpus: the backend node tests and the hand-built models.
pub fn corpus_models() -> Vec<PathBuf> {
    files_with_suffix(&corpus_dir(), ".onnx")
}

/// Every value file (`input_N.pb`, `output_N.pb`) of the backend node tests.
pub fn corpus_value_files() -> Vec<PathBuf> {
    files_with_suffix(&corpus_dir(), ".pb")
}

/// A small deterministic generator (SplitMix64), so mutation tests need no extra crate and
/// give the same cases on every machine.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}
