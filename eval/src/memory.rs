//! A run's memory, bounded as a whole: the bytes the evaluator's own element buffers hold
//! are counted where they are made and dropped ([`crate::buf::Buf`]), so a run can ask at
//! any moment how much it holds (live values, a Loop's scan outputs, carried sequences and
//! what its kernels keep between steps alike) and refuse to grow past its budget.
//!
//! The budget is checked *before* each large allocation a kernel makes from sizes in the
//! model ([`crate::kernels::Ctx::check_elements`]), and between nodes and loop iterations.
//! Running out of memory would otherwise abort the process (Rust's allocation failure is an
//! abort, not an error), or bring the kernel's OOM killer: a run that asks for too much
//! must end with an error naming the node instead.
//!
//! The count is per process: runs on several threads at once share it (a run measures
//! from what was held when it started). Views of the model's bytes are not counted (they
//! lie in the page cache, not on the heap); nor are boolean, string and 2-, 4- and 8-bit
//! coded tensors, which are plain vectors — their allocations are still checked in advance
//! by `check_elements`.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{KernelError, limit};

/// Bytes held by evaluator buffers in this process.
static HELD: AtomicUsize = AtomicUsize::new(0);

/// Bytes held by evaluator buffers in this process now.
pub fn held() -> usize {
    HELD.load(Ordering::Relaxed)
}

pub(crate) fn add(bytes: usize) {
    if bytes > 0 {
        HELD.fetch_add(bytes, Ordering::Relaxed);
    }
}

pub(crate) fn sub(bytes: usize) {
    if bytes > 0 {
        HELD.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// The most bytes a tensor of `count` elements is taken to need before its type is known
/// (the widest numeric element): an estimate that never falls short, so a check made
/// before allocating never lets the run pass its budget.
pub const WIDEST_ELEMENT: usize = 8;

/// A run's budget: how many bytes it may hold beyond what was held when it started.
#[derive(Clone, Debug)]
pub struct Budget {
    limit: usize,
    base: usize,
}

impl Budget {
    /// A budget of `limit` bytes, counted from now.
    pub fn starting_now(limit: usize) -> Budget {
        Budget { limit, base: held() }
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// What the run holds now.
    pub fn used(&self) -> usize {
        held().saturating_sub(self.base)
    }

    /// Fails when `more` bytes on top of what the run holds would pass the budget.
    pub fn check_more(&self, more: usize, what: &str) -> Result<(), KernelError> {
        let used = self.used();
        if used.saturating_add(more) > self.limit {
            return Err(limit!(
                "{what} would need {} on top of the {} the run holds, past its memory budget of {}",
                human(more),
                human(used),
                human(self.limit)
            ));
        }
        Ok(())
    }

    /// Fails when the run already holds more than its budget.
    pub fn check_held(&self) -> Result<(), KernelError> {
        let used = self.used();
        if used > self.limit {
            return Err(limit!("the run holds {}, past its memory budget of {}", human(used), human(self.limit)));
        }
        Ok(())
    }
}

/// The budget a run gets unless told otherwise: half of the memory this process may use
/// (the machine's, or its control group's or `ulimit`'s limit where lower), so that the
/// run, the model's bytes and everything else fit. 4 GiB where none can be read.
pub fn default_budget() -> usize {
    static DEFAULT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *DEFAULT.get_or_init(|| available_memory().map_or(4 << 30, |bytes| bytes / 2))
}

/// The memory this process may use: the machine's physical memory, or its control group's
/// limit or its address-space or data limit where lower.
fn available_memory() -> Option<usize> {
    use rustix::process::{Resource, getrlimit};
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let physical = meminfo.as_deref().and_then(meminfo_total);
    let group = std::fs::read_to_string("/sys/fs/cgroup/memory.max").ok().and_then(|s| s.trim().parse::<usize>().ok());
    let limit = |resource| getrlimit(resource).current.and_then(|bytes| usize::try_from(bytes).ok());
    [physical, group, limit(Resource::As), limit(Resource::Data)].into_iter().flatten().min()
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn meminfo_total(meminfo: &str) -> Option<usize> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// A size as a person writes it: `512M`, `4G`, `1.5GiB`, `2048` (bytes); the units are
/// powers of 1024, as in `ulimit` and `docker --memory`.
pub fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    if number.is_empty() {
        return Err(format!("'{text}' is not a size (such as 512M or 4G)"));
    }
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tb" | "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        other => return Err(format!("'{text}': unknown unit '{other}' (use K, M, G or T)")),
    };
    let value: f64 = number.parse().map_err(|_| format!("'{text}' is not a size (such as 512M or 4G)"))?;
    let bytes = value * scale;
    if !bytes.is_finite() || bytes >= usize::MAX as f64 {
        return Err(format!("'{text}' is too large"));
    }
    Ok(bytes as usize)
}

/// `bytes` as people read them (`1.5 GiB`), as `onnx info` writes sizes.
fn human(bytes: usize) -> String {
    onnx_core::summary::human_bytes(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(parse_size("2048"), Ok(2048));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("4g"), Ok(4 << 30));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size(" 64 KiB "), Ok(64 << 10));
        assert!(parse_size("4X").is_err());
        assert!(parse_size("G").is_err());
        assert!(parse_size("1e30T").is_err());
    }

    #[test]
    fn the_default_budget_is_half_of_what_the_machine_has() {
        let text = "MemTotal:       24576000 kB\nMemFree:        1 kB\n";
        assert_eq!(meminfo_total(text), Some(24_576_000 * 1024));
        let budget = default_budget();
        assert!(budget >= 64 << 20, "{budget}");
        if let Some(all) = available_memory() {
            assert_eq!(budget, all / 2);
        }
    }
}
