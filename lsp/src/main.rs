//! `onnx-lsp`: serves the Language Server Protocol on stdin/stdout.

// The allocator of all our binaries (see the workspace Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The allocator options the server runs with, each left alone when the user set it.
///
/// `MIMALLOC_PURGE_DELAY`: how long (ms) mimalloc keeps freed memory before returning it to
/// the system. Each edit frees the analysis of an earlier version and builds a new one of
/// the same size; returned at once (the default), that memory was faulted in again page by
/// page, which cost a third of an edit's time on a 100,000-node document (first diagnostics
/// 40 → 25 ms, complete 133 → 100 ms). Ten seconds keeps it through a burst of typing and
/// gives it back after.
///
/// `MIMALLOC_ALLOW_THP`: off. With transparent huge pages, every fresh 2 MiB of the heap is
/// zeroed whole by the kernel on first touch; the responses to an editor's requests (a
/// megabyte of symbols as JSON, grown by doubling) touch fresh memory on every edit, and an
/// analysis that ran beside that zeroing now and then took 20–40 ms instead of 7: edit →
/// diagnostics at 10,000 nodes had a p95 of 39–47 ms with huge pages and 21–22 ms without.
const ALLOCATOR_OPTIONS: [(&str, &str); 2] = [("MIMALLOC_PURGE_DELAY", "10000"), ("MIMALLOC_ALLOW_THP", "0")];

/// mimalloc reads its options from the environment as the process starts, before `main`:
/// the only safe way to set one is to start again with it set (`exec` replaces this process,
/// keeping its id, stdin and stdout). If `exec` fails the server runs with the defaults.
#[cfg(unix)]
fn restart_with_allocator_options() {
    use std::os::unix::process::CommandExt;
    let missing: Vec<_> = ALLOCATOR_OPTIONS.iter().filter(|(name, _)| std::env::var_os(name).is_none()).collect();
    if missing.is_empty() {
        return;
    }
    let Ok(me) = std::env::current_exe() else { return };
    let mut command = std::process::Command::new(me);
    command.args(std::env::args_os().skip(1));
    for (name, value) in missing {
        command.env(name, value);
    }
    let _failed = command.exec();
}

fn main() {
    #[cfg(unix)]
    restart_with_allocator_options();
    serve();
}

#[tokio::main]
async fn serve() {
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
