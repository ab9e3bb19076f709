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
    println!(
        "read {:.4}s  schemas {:.4}s  check {:.4}s ({} diagnostics)  infer {:.4}s ({} values)",
        read.as_secs_f64(),
        schemas.as_secs_f64(),
        check.as_secs_f64(),
        diagnostics.len(),
        infer.as_secs_f64(),
        types.types.len()
    );
}
