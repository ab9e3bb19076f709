//! Times parsing and printing in-process, the work onnx's `parse_model` and
//! `printer.to_text` do: text in memory → model, and a model read from binary → text in
//! memory (the binary's tensors in `raw_data`, as onnx has them):
//! `cargo run --release -p onnx-core --example text_times -- TEXT BINARY [REPEAT] [TASK]`
//! with TASK one of `parse`, `onnx`, `canonical` (default: all three). The last line is JSON
//! (minimum seconds per task) for `bench/text_vs_onnx.py`.

use std::time::{Duration, Instant};

use onnx_core::print::{canonical, onnx_style};

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(path), Some(binary)) = (args.next(), args.next()) else {
        eprintln!("usage: text_times TEXT BINARY [REPEAT] [parse|onnx|canonical]");
        std::process::exit(2);
    };
    let repeat: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(3);
    let task = args.next().unwrap_or_default();
    let wanted = |name: &str| task.is_empty() || task == name;
    let source = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let model = match onnx_core::binary::read_model(std::path::Path::new(&binary)) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let mut best = [("parse", Duration::MAX), ("print_onnx", Duration::MAX), ("print_canonical", Duration::MAX)];
    for _ in 0..repeat {
        if wanted("parse") {
            let (again, t) = timed(|| onnx_core::analysis::analyze_text(&source));
            best[0].1 = best[0].1.min(t);
            drop(again);
        }
        if wanted("onnx") {
            let (text, t) = timed(|| onnx_style::model(&model));
            best[1].1 = best[1].1.min(t);
            drop(text);
        }
        if wanted("canonical") {
            let (text, t) = timed(|| canonical::model(&model));
            best[2].1 = best[2].1.min(t);
            drop(text);
        }
    }
    let measured: Vec<_> = best.iter().filter(|(_, t)| *t != Duration::MAX).collect();
    let mb = source.len() as f64 / 1e6;
    let summary: Vec<String> = measured.iter().map(|(name, t)| format!("{name} {:.3}s", t.as_secs_f64())).collect();
    eprintln!("{mb:.1} MB, best of {repeat}: {}", summary.join(", "));
    let json: Vec<String> = measured.iter().map(|(name, t)| format!("\"{name}\": {}", t.as_secs_f64())).collect();
    println!("{{{}}}", json.join(", "));
}
