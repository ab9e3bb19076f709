//! `onnx-view MODEL`: opens a model in the terminal. See the crate docs (`lib.rs`) for the
//! shape; this file is the event loop and the terminal's lifetime.

use std::io::IsTerminal;
use std::os::unix::fs::FileTypeExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Parser;
use crossbeam_channel::{Receiver, select};
use onnx_view::app::App;
use onnx_view::worker::{self, Report};
use onnx_view::{start_check, start_effects, ui};
use ratatui::crossterm::event::{self, Event, KeyEventKind};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Explore and run an ONNX model in the terminal.
#[derive(Parser, Debug)]
#[command(version, after_help = "Keys: ? in the browser lists every key. q quits.")]
struct Args {
    /// A binary model (.onnx, external data beside it) or an ONNX text model
    /// (.onnxtxt, .onnxtext, or text detected from the content).
    model: PathBuf,
    /// A test-data directory (input_*.pb, output_*.pb): `r` runs on its inputs and compares
    /// the outputs with its expected ones.
    #[arg(long, value_name = "DIR")]
    test_data: Option<PathBuf>,
    /// The most memory a run's values may hold at once (`512M`, `8G`); a run that would need
    /// more fails with an error naming the node. Default: half of what the process may use.
    #[arg(long, value_name = "SIZE", value_parser = onnx_eval::memory::parse_size)]
    max_memory: Option<usize>,
    /// `mono` draws without colours (as NO_COLOR does).
    #[arg(long, value_enum, default_value_t = Theme::Dark)]
    theme: Theme,
    /// Print how long loading, indexing and the first frame took, on leaving.
    #[arg(long)]
    trace_startup: bool,
    /// Leave after the first frame (for measuring start-up).
    #[arg(long, hide = true)]
    exit_after_first_frame: bool,
}

/// From this size on, reading the model shows its progress (a 187 MB text takes about 4 s);
/// `ONNX_VIEW_PROGRESS_FROM_BYTES` sets another (for the test that the line is drawn).
fn big_model_bytes() -> u64 {
    std::env::var("ONNX_VIEW_PROGRESS_FROM_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(32 << 20)
}

/// A line on stderr, redrawn five times a second until `done`: what reading the model is
/// doing and how far into the text it is (`reading model.onnxtxt (187 MB): parsing 45 %`).
fn show_progress(
    path: &std::path::Path,
    bytes: u64,
    progress: std::sync::Arc<onnx_core::analysis::Progress>,
) -> (std::sync::Arc<std::sync::atomic::AtomicBool>, std::thread::JoinHandle<()>) {
    use std::io::Write;
    use std::sync::atomic::{AtomicBool, Ordering};
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let stop = std::sync::Arc::clone(&done);
    let label = format!("onnx-view: reading {} ({} MB)", path.display(), bytes / 1_000_000);
    // Said at once, before the reading starts; the thread then adds how far it has come.
    let _ = write!(std::io::stderr(), "{label}…");
    let _ = std::io::stderr().flush();
    let shower = std::thread::spawn(move || {
        let mut err = std::io::stderr();
        let mut first = true;
        while !stop.load(Ordering::Relaxed) {
            let (stage, at) = progress.get();
            let how_far = if stage.has_position() && bytes > 0 {
                format!(": {} {} %", stage.describe(), (at as u64).saturating_mul(100) / bytes)
            } else if first {
                String::new()
            } else {
                format!(": {}", stage.describe())
            };
            let _ = write!(err, "\r\x1b[2K{label}{how_far}…");
            let _ = err.flush();
            first = false;
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        let _ = writeln!(err);
    });
    (done, shower)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Theme {
    Dark,
    Mono,
}

fn main() {
    let args = Args::parse();
    // A write past `ulimit -f` (an exported tensor) fails instead of killing the browser.
    // The model itself is read into memory; a side file of external data truncated while a
    // run maps it ends the browser with a message naming it, on the normal screen (leave the
    // alternate screen, show the cursor).
    onnx_core::signals::install("onnx-view");
    // Mouse reporting off (what EnableMouseCapture turned on), the normal screen, the cursor.
    onnx_core::signals::restore_terminal_with(
        b"\x1b[?1006l\x1b[?1015l\x1b[?1003l\x1b[?1002l\x1b[?1000l\x1b[?1049l\x1b[?25h\r\n",
    );
    // Reading a FIFO waits for a writer: say so rather than look hung (as the CLI does).
    if std::fs::metadata(&args.model).is_ok_and(|m| m.file_type().is_fifo()) {
        eprintln!("onnx-view: {}: a FIFO; waiting for a program to write the model into it…", args.model.display());
    }
    // A big model takes seconds to read before the first frame: show how far it has come
    // rather than leave the terminal as it was.
    let big = std::fs::metadata(&args.model)
        .ok()
        .filter(|m| m.is_file() && m.len() >= big_model_bytes() && std::io::stderr().is_terminal())
        .map(|m| m.len());
    let progress = std::sync::Arc::new(onnx_core::analysis::Progress::default());
    let shown = big.map(|bytes| show_progress(&args.model, bytes, std::sync::Arc::clone(&progress)));
    let started = Instant::now();
    let loaded = onnx_view::load::load_with_progress(&args.model, Some(&progress));
    if let Some((done, shower)) = shown {
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = shower.join();
    }
    let loaded = match loaded {
        Ok(l) => l,
        Err(e) => {
            eprintln!("onnx-view: {e}");
            std::process::exit(1);
        }
    };
    if let Some(dir) = &args.test_data
        && !dir.is_dir()
    {
        eprintln!("onnx-view: {}: not a directory", dir.display());
        std::process::exit(2);
    }
    // Checked once the model is read, so a file that cannot be opened is named first.
    // Drawing to a pipe or a file helps no one, and ratatui panics where no terminal can be
    // opened for keys (a program's child without a controlling terminal).
    if !std::io::stdout().is_terminal() {
        eprintln!("onnx-view needs a terminal (its output is not one); for a report, use `onnx info` or `onnx check`");
        std::process::exit(2);
    }
    let loaded_at = started.elapsed();
    let mut app = App::new(loaded, args.test_data.clone());
    if let Some(bytes) = args.max_memory {
        app.max_memory = bytes;
    }
    let indexed_at = started.elapsed();
    ui::set_color(args.theme == Theme::Dark && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()));
    match run(&mut app, &args, started) {
        Ok(first_frame) => {
            if args.trace_startup {
                eprintln!(
                    "load {:.1?} · index {:.1?} · first frame {:.1?}",
                    loaded_at,
                    indexed_at - loaded_at,
                    first_frame
                );
            }
        }
        Err(RunError::NoTerminal(e)) => {
            eprintln!("onnx-view needs a terminal: {e}");
            std::process::exit(2);
        }
        Err(RunError::Terminal(e)) => {
            eprintln!("onnx-view: terminal: {e}");
            std::process::exit(1);
        }
    }
}

enum RunError {
    /// No terminal could be set up (no controlling terminal to read keys from).
    NoTerminal(std::io::Error),
    /// The terminal failed while in use.
    Terminal(std::io::Error),
}

/// The event loop. Returns when the first frame was drawn, counted from `started`.
fn run(app: &mut App, args: &Args, started: Instant) -> Result<Duration, RunError> {
    // ratatui::init enters raw mode and the alternate screen and installs a panic hook
    // that restores the terminal before the panic message is printed. That hook runs for
    // any thread; a worker's panic is caught and shown on screen instead (worker::spawn),
    // so the terminal must be restored only when the UI thread panics.
    let mut terminal = ratatui::try_init().map_err(|e| {
        ratatui::restore();
        RunError::NoTerminal(e)
    })?;
    let restore_and_report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().name() == Some("main") {
            let _ = ratatui::crossterm::execute!(std::io::stdout(), ratatui::crossterm::event::DisableMouseCapture);
            restore_and_report(info);
        }
    }));
    // Clicks and the wheel (hold Shift to select text with the mouse, as in other
    // terminal programs that read it).
    let _ = ratatui::crossterm::execute!(std::io::stdout(), ratatui::crossterm::event::EnableMouseCapture);
    let result = event_loop(&mut terminal, app, args, started);
    let _ = ratatui::crossterm::execute!(std::io::stdout(), ratatui::crossterm::event::DisableMouseCapture);
    ratatui::restore();
    result.map_err(RunError::Terminal)
}

fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    app: &mut App,
    args: &Args,
    started: Instant,
) -> std::io::Result<Duration> {
    let (reports, report_rx) = crossbeam_channel::unbounded::<Report>();
    draw(terminal, app)?;
    let first_frame = started.elapsed();
    if args.exit_after_first_frame {
        return Ok(first_frame);
    }
    // After the first frame: checking and inference, and the search index, on workers.
    start_check(app, &reports);
    if std::env::var_os("ONNX_VIEW_PANIC_AFTER_FIRST_FRAME").is_some() {
        // For the test that the terminal is restored when the UI thread panics.
        panic!("panic requested by ONNX_VIEW_PANIC_AFTER_FIRST_FRAME");
    }
    let search = worker::spawn_search(std::sync::Arc::clone(&app.model), std::sync::Arc::clone(&app.index), &reports);
    let keys = key_thread();
    loop {
        let tick = if app.busy() { Duration::from_millis(100) } else { Duration::from_secs(3600) };
        select! {
            recv(keys) -> ev => match ev {
                Ok(ev) => handle(app, ev),
                Err(_) => return Ok(first_frame),
            },
            recv(report_rx) -> r => if let Ok(r) = r { app.report(r) },
            default(tick) => {}
        }
        // Coalesce: everything already waiting is applied before one draw.
        while let Ok(ev) = keys.try_recv() {
            handle(app, ev);
        }
        while let Ok(r) = report_rx.try_recv() {
            app.report(r);
        }
        start_effects(app, &reports, &search);
        if app.should_quit() {
            if let Some(onnx_view::app::RunState::Running { cancel, .. }) = Some(&app.run) {
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            return Ok(first_frame);
        }
        draw(terminal, app)?;
    }
}

fn handle(app: &mut App, ev: Event) {
    match ev {
        Event::Key(key) if key.kind != KeyEventKind::Release => app.key(key),
        Event::Mouse(m) => app.mouse(m.kind, m.column, m.row),
        _ => {}
    }
}

fn draw(terminal: &mut ratatui::DefaultTerminal, app: &mut App) -> std::io::Result<()> {
    use ratatui::crossterm::{execute, terminal as term};
    // A synchronized update: the terminal shows the frame whole, never half drawn.
    execute!(std::io::stdout(), term::BeginSynchronizedUpdate)?;
    terminal.draw(|f| ui::draw(f, app))?;
    execute!(std::io::stdout(), term::EndSynchronizedUpdate)
}

/// Reads terminal events on a thread of its own, so the loop can wait on keys and reports
/// at once.
fn key_thread() -> Receiver<Event> {
    let (tx, rx) = crossbeam_channel::unbounded();
    let _ = std::thread::Builder::new().name("onnx-view keys".into()).spawn(move || {
        while let Ok(ev) = event::read() {
            if tx.send(ev).is_err() {
                break;
            }
        }
    });
    rx
}
