//! Timing events on stderr for finding where an edit's time goes, when the environment sets
//! `ONNX_LSP_TRACE=1`: each line is the milliseconds since the server started, the event
//! and the document version it is about. Off, an event costs one relaxed load.

use std::sync::OnceLock;
use std::time::Instant;

fn start() -> Option<Instant> {
    static START: OnceLock<Option<Instant>> = OnceLock::new();
    *START.get_or_init(|| std::env::var_os("ONNX_LSP_TRACE").filter(|v| v != "0").map(|_| Instant::now()))
}

/// Writes one event when tracing is on.
pub fn event(what: &str, detail: impl std::fmt::Display) {
    if let Some(start) = start() {
        let cpu = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        let cpu = cpu.tv_sec as f64 * 1e3 + cpu.tv_nsec as f64 / 1e6;
        eprintln!("[trace {:10.3} ms] {what} {detail} cpu={cpu:.3}", start.elapsed().as_secs_f64() * 1e3);
    }
}
