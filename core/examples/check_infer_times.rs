//! Times the checker and inference in-process on one model (no process start, no output
//! written): `cargo run --release -p onnx-core --example check_infer_times -- MODEL`.

use std::time::Instant;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: check_infer_times MODEL");
        std::process::exit(2);
    };
    let start = Instant::now();
    let model = match onnx_core::binary::read_model(std::path::Path::new(&path)) {
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
    let diagnostics = onnx_core::check::check_model(&model, &onnx_core::check::CheckOptions::default());
    let check = start.elapsed();
    let start = Instant::now();
    let types = onnx_core::infer::infer_main_graph(&model);
    let infer = start.elapsed();
    let start = Instant::now();
    let all_types = onnx_core::infer::infer_model(&model);
    let violations = onnx_core::infer::type_constraint_violations(&model, &all_types);
    let conflicts = onnx_core::infer::conflicts(&model, &all_types);
    let full = start.elapsed();
    let start = Instant::now();
    let full_options = onnx_core::check::CheckOptions { full_check: true, ..Default::default() };
    let full_diagnostics = onnx_core::check::check_model(&model, &full_options);
    let full_check = start.elapsed();
    let start = Instant::now();
    drop(all_types);
    drop(types);
    drop(model);
    let dropped = start.elapsed();
    println!(
        "read {:.4}s  schemas {:.4}s  check {:.4}s ({} diagnostics)  infer {:.4}s  \
         full-check extras {:.4}s ({} findings)  check with full_check {:.4}s ({} diagnostics)  drop {:.4}s",
        read.as_secs_f64(),
        schemas.as_secs_f64(),
        check.as_secs_f64(),
        diagnostics.len(),
        infer.as_secs_f64(),
        full.as_secs_f64(),
        violations.len() + conflicts.len(),
        full_check.as_secs_f64(),
        full_diagnostics.len(),
        dropped.as_secs_f64(),
    );
}
