//! Times each stage of reading a text model: `cargo run --release -p onnx-core --example
//! stage_times -- FILE`. For finding where parse time goes; the benchmark is bench/.
use std::time::Instant;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: stage_times FILE.onnxtxt");
        return;
    };
    let t = Instant::now();
    let source = std::fs::read_to_string(&path).unwrap_or_default();
    println!("read      {:>8.3} s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let parse = onnx_syntax::parse_model(&source);
    println!("parse     {:>8.3} s ({} errors)", t.elapsed().as_secs_f64(), parse.errors.len());
    let t = Instant::now();
    let analysis = onnx_core::analysis::analyze_text(&source);
    println!("analyze   {:>8.3} s (parse + lower + resolve)", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let bytes = onnx_core::binary::encode_model(&analysis.model);
    println!("encode    {:>8.3} s ({} bytes)", t.elapsed().as_secs_f64(), bytes.len());
}
