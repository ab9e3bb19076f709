//! Helpers shared by the data-driven tests: where the corpus is and how to walk it.

pub mod fuzz;
pub mod fuzz_lsp;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};

/// The folder of this crate (`tests/`), which holds the corpus and the fixtures; the
/// paths the fixture tables list are relative to it.
pub fn tests_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Root of the committed corpus (`tests/corpus`).
pub fn corpus_dir() -> PathBuf {
    tests_dir().join("corpus")
}

/// A file or folder of the corpus: `tests/corpus/REL`.
pub fn corpus_file(rel: &str) -> PathBuf {
    corpus_dir().join(rel)
}

/// onnx's backend node tests, one folder each (`tests/corpus/node`).
pub fn node_tests_dir() -> PathBuf {
    corpus_dir().join("node")
}

/// The Python with the reference packages (onnx 1.23.2 and onnxruntime 1.32.0, as `.ci/run`
/// installs them into the repository's `.venv`): `ONNX_PYTHON`, else `.venv/bin/python`,
/// else `python3`, the first that has them. `None` where a skip is allowed (not in CI),
/// said on stderr; in CI a missing one fails the test.
pub fn reference_python_or_skip(test: &str) -> Option<PathBuf> {
    let repo = tests_dir().join("..");
    let candidates = [
        std::env::var_os("ONNX_PYTHON").map(PathBuf::from),
        Some(repo.join(".venv/bin/python")).filter(|p| p.exists()),
        Some(PathBuf::from("python3")),
    ];
    let check =
        "import onnx, onnxruntime, sys; sys.exit(onnx.__version__ != '1.23.2' or onnxruntime.__version__ != '1.32.0')";
    let found = candidates.into_iter().flatten().find(|python| {
        std::process::Command::new(python).args(["-c", check]).output().is_ok_and(|out| out.status.success())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "onnx 1.23.2 and onnxruntime 1.32.0 for Python are missing in CI: .ci/run installs them into .venv"
        );
        // Written to stderr itself, not through `eprintln!`, which the test harness captures
        // and hides for a passing test: a skip must be seen.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test}: no Python with onnx 1.23.2 and onnxruntime 1.32.0 (set ONNX_PYTHON or make .venv)"
        );
    }
    found
}

/// A folder of fixtures: `tests/fixtures/NAME` (`check`, `ml`, `random`, …).
pub fn fixture_dir(name: &str) -> PathBuf {
    tests_dir().join("fixtures").join(name)
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
            } else if path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(suffix)) {
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

    /// A copy of `original` (not empty) with 1 to `most` random bits flipped, and how many.
    pub fn bit_flipped(&mut self, original: &[u8], most: u64) -> (Vec<u8>, u64) {
        let mut data = original.to_vec();
        let flips = 1 + self.below(most);
        for _ in 0..flips {
            let at = self.below(data.len() as u64) as usize;
            data[at] ^= 1 << self.below(8);
        }
        (data, flips)
    }
}

/// A global allocator that forwards to the system allocator and remembers, per thread, the
/// largest single allocation since the last reset. A test binary installs it with
/// `#[global_allocator] static A: TrackingAllocator = TrackingAllocator;`.
#[derive(Debug)]
pub struct TrackingAllocator;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // `try_with`: the thread-local may already be gone while a thread shuts down.
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
}

pub fn reset_largest_allocation() {
    LARGEST.with(|l| l.set(0));
}

/// The largest single allocation on this thread since the last reset.
pub fn largest_allocation() -> usize {
    LARGEST.with(Cell::get)
}

#[allow(unsafe_code)]
// SAFETY: forwards every call to the system allocator unchanged; only records sizes.
unsafe impl GlobalAlloc for TrackingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// A protobuf writer for crafting encodings by hand (hostile inputs, unusual but legal
/// field orders).
pub mod wire {
    /// Appends `v` as a varint.
    pub fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    /// A length-delimited field: key, length, payload.
    pub fn len_field(number: u32, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        varint(u64::from(number) << 3 | 2, &mut out);
        varint(payload.len() as u64, &mut out);
        out.extend_from_slice(payload);
        out
    }

    /// A varint field: key, value.
    pub fn varint_field(number: u32, value: u64) -> Vec<u8> {
        let mut out = Vec::new();
        varint(u64::from(number) << 3, &mut out);
        varint(value, &mut out);
        out
    }
}

/// The first column of each row of a tab-separated table (rows starting with `#` are
/// comments): the cases a list of known gaps names. Empty when the file does not exist.
pub fn first_column(path: &Path) -> std::collections::BTreeSet<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.split('\t').next().map(str::to_owned))
        .collect()
}
