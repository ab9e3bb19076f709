//! Progress on stderr for work long enough to wonder about. indicatif draws only when stderr
//! is a terminal, so pipes, CI logs and tests see nothing.

use std::path::Path;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Below this size, reading or writing is too quick for a spinner to be worth drawing.
const SHOW_FROM_BYTES: u64 = 64 << 20;

/// A spinner labelled `what` while the returned guard lives, for inputs of at least 64 MiB.
pub fn stage_for_len(len: u64, what: &str) -> Option<Spinner> {
    if len < SHOW_FROM_BYTES {
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
