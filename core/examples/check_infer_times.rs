//! Times the checker and inference in-process on one model (no process start, no output
//! written): `cargo run --release -p onnx-core --example check_infer_times -- MODEL`.
//!
//! After an untimed warm-up pass, the first line breaks the work into stages (one pass
//! each); the last line is JSON for `bench/check_infer_vs_onnx.py`, with the two tasks as
//! onnx does them in-process, each the best of [`ROUNDS`] runs in a row (as the bench
//! times onnx: the best of its runs in a row in one process):
//! `check` = read the file, check with `full_check` (onnx: `check_model(path,
//! full_check=True)`); `infer` = decode the bytes, infer, add the value types, and encode
//! as `onnx infer` does, the input's bytes with the new value types appended (onnx:
//! `infer_shapes(model)`, which serializes the model for C++ and parses its answer).

use std::time::Instant;

/// How many times each whole task is timed (the best counts).
const ROUNDS: usize = 20;

// The allocator of the `onnx` binary, so that these timings are the command's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: check_infer_times MODEL");
        std::process::exit(2);
    };
    let path = std::path::Path::new(&path);
    // One untimed pass first, as onnx's side is timed warm (the best of several runs): the
    // schema table's first lookups and the allocator's first pages are not what is measured.
    if let Ok(model) = onnx_core::binary::read_model(path) {
        let options = onnx_core::check::CheckOptions { full_check: true, ..Default::default() };
        std::hint::black_box(onnx_core::pipeline::check_model(&model, &options));
    }
    let start = Instant::now();
    let model = match onnx_core::binary::read_model(path) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let read = start.elapsed();
    let start = Instant::now();
    let _ = onnx_core::schema::registry();
    let schemas = start.elapsed();
    let start = Instant::now();
    let diagnostics = onnx_core::pipeline::check_model(&model, &onnx_core::check::CheckOptions::default()).diagnostics;
    let rules = start.elapsed();
    let start = Instant::now();
    let all_types = onnx_core::infer::infer_model(&model);
    // Inference checks type constraints as it goes.
    let inferred = start.elapsed();
    let start = Instant::now();
    let violations = all_types.violations.len();
    let conflicts = onnx_core::infer::conflicts(&model, &all_types);
    let judged = start.elapsed();
    drop(all_types);
    drop(model);

    // The two tasks whole, as onnx does them in-process, each the best of a few runs in a
    // row as onnx's side is (the bench takes the best of its warm runs in one process too).
    let (mut check, mut infer) = (std::time::Duration::MAX, std::time::Duration::MAX);
    let (mut found, mut added, mut encoded) = (Vec::new(), 0, Vec::new());
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let model = onnx_core::binary::read_model(path).unwrap_or_default();
        let options = onnx_core::check::CheckOptions { full_check: true, ..Default::default() };
        found = onnx_core::pipeline::check_model(&model, &options).diagnostics;
        check = check.min(start.elapsed());
    }
    for _ in 0..ROUNDS {
        let bytes = bytes::Bytes::from(std::fs::read(path).unwrap_or_default());
        let start = Instant::now();
        let model = onnx_core::binary::decode_model(bytes.clone(), "model").unwrap_or_default();
        (encoded, added) = onnx_core::infer::annotated_bytes(&model, &bytes).unwrap_or_default();
        infer = infer.min(start.elapsed());
    }
    println!(
        "read {:.4}s  schemas {:.4}s  rules {:.4}s ({} diagnostics)  inference and type constraints {:.4}s  \
         conflicts {:.4}s ({} findings)  |  check with full_check {:.4}s \
         ({} diagnostics)  infer, annotate, encode {:.4}s ({added} types, {} bytes)",
        read.as_secs_f64(),
        schemas.as_secs_f64(),
        rules.as_secs_f64(),
        diagnostics.len(),
        inferred.as_secs_f64(),
        judged.as_secs_f64(),
        violations + conflicts.len(),
        check.as_secs_f64(),
        found.len(),
        infer.as_secs_f64(),
        encoded.len(),
    );
    println!("{{\"check\": {}, \"infer\": {}}}", check.as_secs_f64(), infer.as_secs_f64());
}
