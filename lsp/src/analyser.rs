//! The thread that analyses documents. One long-lived thread rather than whichever thread of
//! the blocking pool is free: an allocator keeps a heap per thread, and an analysis is
//! millions of small blocks of about the size of the previous version's. On the same thread
//! each analysis reuses the memory the last one freed; on a new thread it took fresh pages
//! from the system, faulted in page by page, and an edit of a 10,000-node document took
//! 10–50 ms instead of 7. When that thread is still busy (a superseded analysis running to its
//! next stage), the work goes to the blocking pool, so a new version never waits behind
//! an old one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, OnceLock};

type Work = Box<dyn FnOnce() + Send>;

struct Thread {
    send: Sender<Work>,
    busy: Arc<AtomicBool>,
}

static THREAD: OnceLock<Option<Thread>> = OnceLock::new();

fn thread() -> Option<&'static Thread> {
    THREAD
        .get_or_init(|| {
            let (send, receive) = channel::<Work>();
            let busy = Arc::new(AtomicBool::new(false));
            let started = std::thread::Builder::new().name("onnx-lsp-analysis".into()).spawn(move || {
                for work in receive {
                    work();
                }
            });
            started.ok().map(|_| Thread { send, busy })
        })
        .as_ref()
}

/// Runs `work` on the analysis thread, or on the blocking pool when that thread is busy or
/// cannot be started; the result comes back through the returned future (`Err` when the
/// work panicked, which the caller's own guard should have caught first).
pub async fn run<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    let (reply, result) = tokio::sync::oneshot::channel();
    let on_thread = thread().filter(|t| !t.busy.swap(true, Ordering::AcqRel));
    let busy = on_thread.map(|t| t.busy.clone());
    let job: Work = Box::new(move || {
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
        if let Some(busy) = busy {
            busy.store(false, Ordering::Release);
        }
        let _ = reply.send(out.map_err(|_| "the analysis panicked".to_owned()));
    });
    match on_thread {
        // A closed channel (the thread is gone) hands the work back.
        Some(t) => {
            if let Err(returned) = t.send.send(job) {
                tokio::task::spawn_blocking(returned.0);
            }
        }
        None => {
            tokio::task::spawn_blocking(job);
        }
    }
    result.await.map_err(|_| "the analysis was dropped unfinished".to_owned())?
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn work_runs_on_the_analysis_thread_and_never_waits_behind_other_work() {
        let name = || std::thread::current().name().map(str::to_owned);
        // The first analysis blocks until a second one has run: with one thread for both,
        // this would never end.
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let first = tokio::spawn(run(move || {
            let waited = wait.recv_timeout(Duration::from_secs(10)).is_ok();
            (waited, std::thread::current().name().map(str::to_owned))
        }));
        // Until the first has taken the thread, a second would take it instead.
        while !thread().is_some_and(|t| t.busy.load(Ordering::Acquire)) {
            tokio::task::yield_now().await;
        }
        let second = run(move || {
            let _ = done.send(());
            name()
        });
        let second_thread = tokio::time::timeout(Duration::from_secs(10), second).await.unwrap().unwrap();
        let (waited, first_thread) = first.await.unwrap().unwrap();
        assert!(waited);
        assert_eq!(first_thread.as_deref(), Some("onnx-lsp-analysis"));
        assert_ne!(second_thread.as_deref(), Some("onnx-lsp-analysis"));
        // Free again: the next one goes to the analysis thread.
        assert_eq!(run(name).await.unwrap().as_deref(), Some("onnx-lsp-analysis"));
        // A panic comes back as an error.
        assert!(run(|| panic!("boom")).await.is_err());
    }
}
