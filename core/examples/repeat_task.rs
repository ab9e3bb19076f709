//! Repeats one benchmark task in-process so that a profiler sees it many times:
//! `cargo run --release -p onnx-core --example repeat_task -- MODEL check|infer [TIMES]`,
//! or under `perf record -g` (build with `RUSTFLAGS="-C force-frame-pointers=yes"`).
//!
//! The tasks are those of `check_infer_times`: `check` = read the file and check it with
//! `full_check`; `infer` = decode the bytes, infer, add the value types, encode.

use std::time::Instant;

// The allocator of the `onnx` binary, so that these timings are the command's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(path), Some(task)) = (args.first(), args.get(1)) else {
        eprintln!("usage: repeat_task MODEL check|infer [TIMES]");
        std::process::exit(2);
    };
    let times: u32 = args.get(2).and_then(|t| t.parse().ok()).unwrap_or(100).max(1);
    let path = std::path::Path::new(path);
    let _ = onnx_core::schema::registry();
    let start = Instant::now();
    for _ in 0..times {
        match task.as_str() {
            "check" => {
                let model = onnx_core::binary::read_model(path).unwrap_or_default();
                let options = onnx_core::check::CheckOptions { full_check: true, ..Default::default() };
                std::hint::black_box(onnx_core::pipeline::check_model(&model, &options));
            }
            "infer" => {
                let bytes = bytes::Bytes::from(std::fs::read(path).unwrap_or_default());
                let model = onnx_core::binary::decode_model(bytes.clone(), "model").unwrap_or_default();
                std::hint::black_box(onnx_core::infer::annotated_bytes(&model, &bytes));
            }
            other => {
                eprintln!("unknown task '{other}' (check or infer)");
                std::process::exit(2);
            }
        }
    }
    println!("{task}: {:.4} s per run ({times} runs)", start.elapsed().as_secs_f64() / f64::from(times));
}
