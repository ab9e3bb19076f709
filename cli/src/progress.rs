//! Progress on stderr for work long enough to wonder about. indicatif draws only when stderr
//! is a terminal, so pipes, CI logs and tests see nothing.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use onnx_syntax::progress::Progress;

/// Below this size, reading or writing is too quick for a spinner to be worth drawing.
const SHOW_FROM_BYTES: u64 = 64 << 20;

/// A spinner labelled `what` while the returned guard lives, for inputs of at least 64 MiB.
pub fn stage_for_len(len: u64, what: &str) -> Option<Spinner> {
    if len < SHOW_FROM_BYTES || crate::settings::get().quiet {
        return None;
    }
    let bar = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        bar.set_style(style);
    }
    bar.set_message(format!("{what} ({} MiB)", len >> 20));
    bar.enable_steady_tick(Duration::from_millis(120));
    Some(Spinner(bar))
}

pub fn stage_for_file(path: &Path, what: &str) -> Option<Spinner> {
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    stage_for_len(len, &format!("{what} {}", path.display()))
}

/// Clears its spinner when dropped.
#[derive(Debug)]
pub struct Spinner(ProgressBar);

impl Drop for Spinner {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// A determinate bar of bytes written out of `total` (known, or estimated for printed text:
/// the bar then stops at whatever was written), with rate and time left, for outputs of at
/// least 64 MiB. The writer it wraps counts what passes.
pub fn bytes_written<W: std::io::Write>(inner: W, total: u64, what: &str) -> CountingWriter<W> {
    let bar = if total < SHOW_FROM_BYTES || crate::settings::get().quiet {
        None
    } else {
        let bar = ProgressBar::new(total);
        if let Ok(style) = ProgressStyle::with_template(
            "{msg} {wide_bar} {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, {eta} left)",
        ) {
            bar.set_style(style);
        }
        bar.set_message(what.to_owned());
        Some(bar)
    };
    CountingWriter { inner, bar, since_draw: 0 }
}

/// A writer that advances its bar as bytes pass (every megabyte, not every write: printing
/// makes many small writes).
pub struct CountingWriter<W> {
    inner: W,
    bar: Option<ProgressBar>,
    since_draw: u64,
}

impl<W: std::io::Write> std::io::Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        if let Some(bar) = &self.bar {
            self.since_draw += n as u64;
            if self.since_draw >= 1 << 20 {
                bar.inc(self.since_draw);
                self.since_draw = 0;
                // A printed text's size is estimated: the bar grows if the text is longer.
                if bar.position() > bar.length().unwrap_or(0) {
                    bar.set_length(bar.position());
                }
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<W> Drop for CountingWriter<W> {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A bar of nodes done out of `total`, read from `done` (which the evaluator advances) by a
/// thread of its own, from 0.3 s into the run, while the returned guard lives.
pub fn nodes(total: usize, done: Arc<AtomicUsize>) -> NodeBar {
    let bar = if crate::settings::get().quiet { ProgressBar::hidden() } else { ProgressBar::new(total as u64) };
    if let Ok(style) = ProgressStyle::with_template("{spinner} running node {pos}/{len} {wide_bar} ({elapsed})") {
        bar.set_style(style);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let (ticking, stopping) = (bar.clone(), Arc::clone(&stop));
    let thread = std::thread::Builder::new()
        .name("onnx progress".into())
        .spawn(move || {
            // Nothing is drawn for a run shorter than this: a bar that flashes is noise.
            let started = std::time::Instant::now();
            while !stopping.load(Ordering::Relaxed) {
                if started.elapsed() >= Duration::from_millis(300) {
                    ticking.set_position(done.load(Ordering::Relaxed) as u64);
                    ticking.tick();
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        })
        .ok();
    NodeBar { bar, stop, thread }
}

/// Stops and clears its bar when dropped.
#[derive(Debug)]
pub struct NodeBar {
    bar: ProgressBar,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for NodeBar {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.bar.finish_and_clear();
    }
}

/// A determinate bar for reading a text of `len` bytes (scanning, parsing, building the
/// model: each from 0 to `len`, with rate and time left; then "checking"), for texts of at
/// least 64 MiB, drawn by a thread of its own from what `progress` records, while the
/// returned guard lives.
pub fn reading_text(len: usize, label: &str, progress: Arc<Progress>) -> Option<NodeBar> {
    if (len as u64) < SHOW_FROM_BYTES || crate::settings::get().quiet || crate::json::active() {
        return None;
    }
    let bar = ProgressBar::new(len as u64);
    if let Ok(style) = ProgressStyle::with_template(
        "{msg} {wide_bar} {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, {eta} left)",
    ) {
        bar.set_style(style);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let (drawing, stopping, label) = (bar.clone(), Arc::clone(&stop), label.to_owned());
    let thread = std::thread::Builder::new()
        .name("onnx progress".into())
        .spawn(move || {
            let mut shown = None;
            while !stopping.load(Ordering::Relaxed) {
                let (stage, at) = progress.get();
                if shown != Some(stage) {
                    // Each stage runs over the text again: its own rate and time left.
                    drawing.reset();
                    drawing.set_message(format!("{} {label}", stage.describe()));
                    shown = Some(stage);
                }
                drawing.set_position(if stage.has_position() { at as u64 } else { len as u64 });
                std::thread::sleep(Duration::from_millis(100));
            }
        })
        .ok();
    Some(NodeBar { bar, stop, thread })
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    #[test]
    fn the_text_bar_is_made_for_big_texts_only_and_stops_when_dropped() {
        let progress = Arc::new(Progress::default());
        assert!(reading_text(1 << 20, "small.onnxtxt", Arc::clone(&progress)).is_none());
        let bar = reading_text(64 << 20, "big.onnxtxt", Arc::clone(&progress));
        assert!(bar.is_some());
        progress.reached(1 << 20);
        drop(bar);
    }

    #[test]
    fn the_bytes_bar_passes_everything_through_and_counts_it() {
        let mut out = Vec::new();
        {
            let mut writer = bytes_written(&mut out, 100 << 20, "writing");
            let chunk = vec![7u8; 3 << 20];
            writer.write_all(&chunk).expect("written");
            let bar = writer.bar.as_ref().expect("a bar for 100 MiB");
            assert_eq!(bar.position(), 3 << 20);
            // Past the estimate, the bar's length follows.
            for _ in 0..40 {
                writer.write_all(&chunk).expect("written");
            }
            let bar = writer.bar.as_ref().expect("a bar");
            assert_eq!(bar.length(), Some(123 << 20));
        }
        assert_eq!(out.len(), 123 << 20);
        let small = bytes_written(Vec::new(), 1 << 20, "writing");
        assert!(small.bar.is_none(), "no bar below 64 MiB");
    }
}
