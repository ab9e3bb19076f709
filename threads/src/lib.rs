//! The one thread pool every crate shares: the syntax crate's number-list scans, the
//! printer's long lists, the encoders, the checker beside inference and the evaluator's
//! kernels. A rayon pool built on first use with one thread fewer than [`cores`], each with
//! the stack a program's main thread gets (work handed to the pool, such as the checker's
//! rules, recurses through nested subgraphs as it would on the main thread).
//!
//! Results never depend on the number of threads: work is cut by size, not by thread, and
//! put back together in order. When no thread can be started, everything runs on the
//! calling thread.
//!
//! Every caller takes a share of its own work (rayon's `in_place_scope`, not `install`), so
//! the pool holds one thread fewer than [`cores`]: the caller plus the pool are one thread
//! per core. A pool of one thread per core left a thread with nothing to do but spin while
//! the caller and another pool thread worked, three threads on two cores: with two threads,
//! GoogLeNet's (caffe2_light_inception_v1) convolutions took 40.8–55.6 ms against 52.8–58.2
//! on one, and 38.7–44.7 ms with this pool (docs/benchmarks.md, session 57).
//!
//! One thing is not for the pool: work that another thread blocks on while it runs (name
//! resolution publishes its progress and inference waits for it). A pool task may never
//! start while the waiter holds the only free worker, so that work gets a thread of its
//! own ([`dedicated`]).

use std::sync::OnceLock;

pub use rayon;

/// The stack of each pool thread and of [`dedicated`] threads: what a program's main thread
/// gets on Linux (a spawned thread gets 2 MiB). Only touched pages are ever backed by memory.
const STACK: usize = 8 << 20;

static CORES: OnceLock<usize> = OnceLock::new();

/// Sets how many threads bulk work may use (a command line's `--threads`), before anything
/// has asked: false once [`cores`] has answered (the pool, if started, keeps its size).
pub fn set_cores(n: usize) -> bool {
    CORES.set(n.clamp(1, 64)).is_ok()
}

/// How many threads bulk work may use: `ONNX_THREADS` if set to a positive number, else the
/// cores available to the process (read once: it is a system call, more on Linux with
/// cgroups).
pub fn cores() -> usize {
    *CORES.get_or_init(|| {
        let wanted = std::env::var("ONNX_THREADS").ok().and_then(|n| n.trim().parse::<usize>().ok());
        match wanted {
            Some(n) if n > 0 => n.min(64),
            _ => std::thread::available_parallelism().map_or(1, |n| n.get().min(16)),
        }
    })
}

/// The pool, started on first use, with one thread fewer than [`cores`] (the caller is the
/// other, see the module's documentation); `None` when no thread could be started (or one
/// core is all there is: then a pool only adds hand-overs).
pub fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        if cores() < 2 {
            return None;
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(cores() - 1)
            .stack_size(STACK)
            .thread_name(|i| format!("onnx-pool-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Runs `here` on this thread and `there` on a pool thread at the same time, and returns
/// both results. The calling thread takes a share rather than waiting, so that its work
/// uses the memory it already has in cache and in its allocator's heap (measured: a rayon
/// `join`, which runs both sides on pool threads when called from outside the pool, made
/// `onnx infer` 15 % slower on a 100,000-node model).
pub fn join<A, B: Send>(here: impl FnOnce() -> A, there: impl FnOnce() -> B + Send) -> (A, B) {
    let Some(pool) = pool() else { return (here(), there()) };
    let mut theirs = None;
    let mine = pool.in_place_scope(|scope| {
        scope.spawn(|_| theirs = Some(there()));
        here()
    });
    // A scope returns once every task it spawned has run (a task's panic is resumed here).
    (mine, theirs.expect("a finished scope ran its task"))
}

/// `work` applied to every job, the first on this thread (as in [`join`]) and the others
/// on the pool, the results in the jobs' order.
pub fn map_in_order<J: Send, R: Send>(jobs: Vec<J>, work: impl Fn(J) -> R + Sync) -> Vec<R> {
    let Some(pool) = pool().filter(|_| jobs.len() > 1) else { return jobs.into_iter().map(work).collect() };
    let mut jobs = jobs.into_iter();
    let first = jobs.next();
    let mut rest: Vec<Option<R>> = std::iter::repeat_with(|| None).take(jobs.len()).collect();
    let work = &work;
    let mine = pool.in_place_scope(|scope| {
        for (job, slot) in jobs.zip(rest.iter_mut()) {
            scope.spawn(move |_| *slot = Some(work(job)));
        }
        first.map(work)
    });
    // Every slot is filled: the scope has run every task.
    mine.into_iter().chain(rest.into_iter().flatten()).collect()
}

/// `work(0)`, …, `work(count - 1)` made on this thread and the pool, each result handed to
/// `consume` on this thread in order as soon as it and every one before it are made: the
/// shape of streaming output (format pieces on every core, write them in order). At most
/// `ahead` results are made but not yet consumed, so memory stays bounded however long the
/// stream. `consume` returning false stops the stream: nothing more is started.
///
/// This thread makes results too whenever the next one to consume is not ready and the
/// window has room, so it only waits for a result a pool thread is already making (never for
/// a task that has not started), and the pool threads wait only for this thread to consume.
/// The helpers are every pool thread, and they wait on a condition variable, not in rayon:
/// `work` and `consume` must not hand work to the pool themselves (it would find no free
/// thread while the window is full).
pub fn pipeline<R: Send>(
    count: usize,
    ahead: usize,
    work: impl Fn(usize) -> R + Sync,
    mut consume: impl FnMut(R) -> bool,
) {
    let ahead = ahead.max(1);
    let helpers = cores().saturating_sub(1).min(count.saturating_sub(1));
    let Some(pool) = pool().filter(|_| helpers > 0) else {
        for i in 0..count {
            if !consume(work(i)) {
                return;
            }
        }
        return;
    };
    let shared = Pipeline {
        state: std::sync::Mutex::new(PipelineState {
            next: 0,
            consumed: 0,
            stopped: false,
            made: std::iter::repeat_with(|| None).take(count).collect(),
        }),
        changed: std::sync::Condvar::new(),
    };
    pool.in_place_scope(|scope| {
        for _ in 0..helpers {
            let (shared, work) = (&shared, &work);
            scope.spawn(move |_| {
                // A panic in `work` stops the stream, so this thread never waits for a result
                // that will not come; the scope then resumes the panic.
                let stop_on_panic = StopOnDrop(shared);
                let mut state = shared.lock();
                while !state.stopped && state.next < count {
                    if state.next < state.consumed + ahead {
                        state = shared.make_next(state, work);
                    } else {
                        state = shared.wait(state);
                    }
                }
                drop(state);
                std::mem::forget(stop_on_panic);
            });
        }
        // Stops the helpers however this loop ends, a panic in `work` here included (they
        // would otherwise wait for room in the window for ever).
        let _stop = StopOnDrop(&shared);
        let mut state = shared.lock();
        let mut k = 0;
        while k < count && !state.stopped {
            if let Some(result) = state.made[k].take() {
                drop(state);
                let go_on = consume(result);
                state = shared.lock();
                k += 1;
                state.consumed = k;
                state.stopped |= !go_on;
                shared.changed.notify_all();
            } else if state.next < count && state.next < k + ahead {
                state = shared.make_next(state, &work);
            } else {
                state = shared.wait(state);
            }
        }
    });
}

/// What [`pipeline`]'s threads share.
struct Pipeline<R> {
    state: std::sync::Mutex<PipelineState<R>>,
    changed: std::sync::Condvar,
}

struct PipelineState<R> {
    /// The next result nobody has started making.
    next: usize,
    /// How many results the calling thread has consumed.
    consumed: usize,
    /// Set when the stream ends early or a pool thread panicked.
    stopped: bool,
    /// Results made and not yet consumed.
    made: Vec<Option<R>>,
}

impl<R> Pipeline<R> {
    /// The state, also after a panic elsewhere (which only ever sets `stopped`).
    fn lock(&self) -> std::sync::MutexGuard<'_, PipelineState<R>> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Claims the next result, makes it without holding the lock, and stores it.
    fn make_next<'a>(
        &'a self,
        mut state: std::sync::MutexGuard<'a, PipelineState<R>>,
        work: &impl Fn(usize) -> R,
    ) -> std::sync::MutexGuard<'a, PipelineState<R>> {
        let i = state.next;
        state.next += 1;
        drop(state);
        let result = work(i);
        let mut state = self.lock();
        state.made[i] = Some(result);
        self.changed.notify_all();
        state
    }

    fn wait<'a>(
        &self,
        guard: std::sync::MutexGuard<'a, PipelineState<R>>,
    ) -> std::sync::MutexGuard<'a, PipelineState<R>> {
        self.changed.wait(guard).unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Stops a [`pipeline`] when dropped (a pool thread's panic unwinding past it).
struct StopOnDrop<'a, R>(&'a Pipeline<R>);

impl<R> Drop for StopOnDrop<'_, R> {
    fn drop(&mut self) {
        self.0.lock().stopped = true;
        self.0.changed.notify_all();
    }
}

/// `work` applied to every item of a slice, in up to [`cores`] pieces of at least `piece`
/// items (the first on this thread, as in [`map_in_order`]), the results in order and
/// written straight into one vector: for big items, joining pieces made apart (moving half
/// of them again on two cores) made an editor's incremental parse of 100,000 nodes 10 → 14
/// ms. On this thread alone when there is no pool or the slice is one piece.
#[allow(unsafe_code)] // one vector's room filled from several threads; see SAFETY below
pub fn map_slice<T: Sync, R: Send>(items: &[T], piece: usize, work: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    let pieces = items.len().div_ceil(piece.max(1)).min(cores());
    if pool().is_none() || pieces < 2 {
        return items.iter().map(work).collect();
    }
    let size = items.len().div_ceil(pieces);
    let mut out: Vec<R> = Vec::with_capacity(items.len());
    let room = &mut out.spare_capacity_mut()[..items.len()];
    let jobs: Vec<_> = items.chunks(size).zip(room.chunks_mut(size)).collect();
    map_in_order(jobs, |(part, room)| {
        for (item, slot) in part.iter().zip(room) {
            slot.write(work(item));
        }
    });
    // SAFETY: `map_in_order` returned, so every job ran to its end (a panic in one is
    // resumed by it and this line is never reached; the values written then leak, nothing
    // is read). The items and the room were cut into chunks of the same size, so the jobs
    // wrote each of the first `items.len()` slots exactly once.
    unsafe { out.set_len(items.len()) };
    out
}

/// A thread of its own, with the pool's stack size: for work that another thread waits on
/// while it runs (see the module's documentation), and for tests that need a known stack.
pub fn dedicated() -> std::thread::Builder {
    std::thread::Builder::new().stack_size(STACK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order() {
        let jobs: Vec<usize> = (0..1000).collect();
        assert_eq!(map_in_order(jobs.clone(), |j| j * 2), jobs.iter().map(|j| j * 2).collect::<Vec<_>>());
    }

    #[test]
    fn a_pipeline_consumes_every_result_in_order() {
        for ahead in [1, 2, 7] {
            let mut seen = Vec::new();
            pipeline(
                500,
                ahead,
                |i| {
                    // Uneven work, so results are made out of order.
                    std::hint::black_box((0..(i * 37) % 1000).sum::<usize>());
                    i * 3
                },
                |r| {
                    seen.push(r);
                    true
                },
            );
            assert_eq!(seen, (0..500).map(|i| i * 3).collect::<Vec<_>>(), "ahead {ahead}");
        }
    }

    #[test]
    fn a_pipeline_stops_when_asked_and_starts_nothing_beyond_its_window() {
        let started = std::sync::atomic::AtomicUsize::new(0);
        let mut seen = Vec::new();
        pipeline(
            1000,
            3,
            |i| {
                started.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                i
            },
            |r| {
                seen.push(r);
                r < 9
            },
        );
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        // Ten consumed, and at most the window beyond the last.
        assert!(started.load(std::sync::atomic::Ordering::Relaxed) <= 10 + 3);
    }

    #[test]
    fn a_panic_in_a_pipeline_reaches_the_caller_instead_of_hanging() {
        let outcome = std::panic::catch_unwind(|| {
            pipeline(
                100,
                2,
                |i| {
                    assert!(i != 50, "piece 50");
                    i
                },
                |_| true,
            );
        });
        assert!(outcome.is_err());
    }

    #[test]
    fn a_mapped_slice_keeps_its_order_whatever_the_pieces() {
        let items: Vec<u32> = (0..10_001).collect();
        for piece in [1, 7, 5000, 10_001, 20_000] {
            let got = map_slice(&items, piece, |v| u64::from(*v) * 3);
            assert_eq!(got, items.iter().map(|v| u64::from(*v) * 3).collect::<Vec<_>>(), "piece {piece}");
        }
        assert!(map_slice(&[] as &[u32], 4, |v| *v).is_empty());
    }

    #[test]
    fn join_runs_both() {
        assert_eq!(join(|| 1, || "two"), (1, "two"));
    }

    /// Pool threads have the main thread's stack: a recursion that needs about 4 MiB (more
    /// than a spawned thread's default 2 MiB, such as this test's own thread) runs on them.
    #[test]
    fn pool_threads_have_a_main_threads_stack() {
        fn depth(n: u32) -> u32 {
            let pad = std::hint::black_box([n as u8; 1024]);
            if n == 0 { 0 } else { depth(n - 1) + u32::from(pad[1] & 1) }
        }
        assert!(pool().is_some() || cores() < 2, "no pool on a machine of {} cores", cores());
        if pool().is_some() {
            // `join` runs its first job here, its second on the pool.
            assert_eq!(join(|| 0, || depth(4000)), (0, 2000));
            assert_eq!(map_in_order(vec![0, 4000, 4000], depth), [0, 2000, 2000]);
        }
    }
}
