//! Bulk work on all cores: big number lists are read and printed in pieces, one per core.
//! Plain scoped threads, because the work comes in a few large, equal pieces (no pool or
//! work stealing needed) and the results must come back in order.

use std::sync::OnceLock;

/// How many threads bulk work may use: `ONNX_THREADS` if set to a positive number, else the
/// cores available to the process (read once: it is a system call, more on Linux with
/// cgroups).
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| {
        let wanted = std::env::var("ONNX_THREADS").ok().and_then(|n| n.trim().parse::<usize>().ok());
        match wanted {
            Some(n) if n > 0 => n.min(64),
            _ => std::thread::available_parallelism().map_or(1, |n| n.get().min(16)),
        }
    })
}

/// A worker thread with the stack a program's main thread gets on Linux (8 MiB, where a
/// spawned thread gets 2): the work handed to one (name resolution, the checker's rules)
/// recurses through nested subgraphs as it would on the main thread. Only touched pages
/// are ever backed by memory.
pub fn worker() -> std::thread::Builder {
    std::thread::Builder::new().stack_size(8 << 20)
}

/// Runs `there` on a scoped thread while `here` runs on this one, and returns both
/// results; `there` runs here after `here` when no thread can be had (or it failed).
pub fn beside<A, B: Send>(here: impl FnOnce() -> A, there: &(impl Fn() -> B + Sync)) -> (A, B) {
    std::thread::scope(|scope| {
        let spawned = worker().spawn_scoped(scope, there);
        let a = here();
        let b = spawned.ok().and_then(|handle| handle.join().ok()).unwrap_or_else(there);
        (a, b)
    })
}

/// Runs `work` on every job, the first on this thread and the others on scoped threads,
/// and returns the results in order; `None` if a thread could not be started or failed.
pub fn in_parallel<J: Send, R: Send>(jobs: Vec<J>, work: impl Fn(J) -> R + Sync) -> Option<Vec<R>> {
    let mut jobs = jobs.into_iter();
    let first = jobs.next()?;
    let work = &work;
    std::thread::scope(|scope| {
        let spawned: Vec<_> = jobs.map(|job| worker().spawn_scoped(scope, move || work(job))).collect();
        let mut results = vec![work(first)];
        for handle in spawned {
            results.push(handle.ok()?.join().ok()?);
        }
        Some(results)
    })
}
