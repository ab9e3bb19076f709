//! `onnx-lsp`: serves the Language Server Protocol on stdin/stdout.

// The allocator of all our binaries (see the workspace Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() {
    if std::env::args().nth(1).as_deref() == Some("--version") {
        println!("onnx-lsp {}", env!("CARGO_PKG_VERSION"));
        return;
    }
    let status = onnx_lsp::serve_stdio().await;
    std::process::exit(status);
}
