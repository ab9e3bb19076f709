//! `onnx-lsp`: serves the Language Server Protocol on stdin/stdout.

// The allocator of all our binaries (see the workspace Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("--version" | "-V") => {
            println!("onnx-lsp {}", env!("CARGO_PKG_VERSION"));
            return;
        }
        Some("--help" | "-h") => {
            println!(
                "onnx-lsp {}: the language server for ONNX text models (.onnxtxt, .onnxtext)\n\n\
                 Usage: onnx-lsp [--stdio]\n\n\
                 Speaks the Language Server Protocol on stdin and stdout; an editor starts it\n\
                 (VS Code: editors/vscode, Neovim: editors/nvim, Helix: editors/helix).\n\n\
                 Options:\n  --stdio     serve on stdin/stdout (the default)\n  \
                 -h, --help  print this help\n  -V, --version  print the version",
                env!("CARGO_PKG_VERSION")
            );
            return;
        }
        Some("--stdio") | None => {}
        Some(other) => {
            eprintln!("onnx-lsp: unknown argument '{other}' (see onnx-lsp --help)");
            std::process::exit(2);
        }
    }
    let status = onnx_lsp::serve_stdio().await;
    std::process::exit(status);
}
