//! Frees what the server no longer needs on a thread of the lowest priority. A replaced
//! analysis of a 100,000-node document is millions of small blocks: freeing it took tens of
//! milliseconds of a core, and on a two-core machine it ran beside the next version's
//! analysis and the requests about it (an edit → diagnostics went from 35 to 45 ms at
//! typing pace). At nice 19 it takes only what the analyses leave idle.

use std::sync::OnceLock;
use std::sync::mpsc::{Sender, channel};

/// Something to free.
pub type Garbage = Box<dyn std::any::Any + Send>;

static REAPER: OnceLock<Option<Sender<Garbage>>> = OnceLock::new();

/// Frees `garbage` later, on the reaper thread (here and now if it cannot be started).
pub fn free(garbage: Garbage) {
    let reaper = REAPER.get_or_init(|| {
        let (send, receive) = channel::<Garbage>();
        let started = std::thread::Builder::new().name("onnx-lsp-reaper".into()).spawn(move || {
            lower_priority();
            for garbage in receive {
                drop(garbage);
            }
        });
        started.ok().map(|_| send)
    });
    match reaper {
        Some(send) => {
            // A closed channel hands the garbage back: free it here.
            if let Err(returned) = send.send(garbage) {
                drop(returned.0);
            }
        }
        None => drop(garbage),
    }
}

/// Nice 19 for this thread (on Linux a thread has its own nice value); where that cannot
/// be done the thread keeps the normal priority, which only costs speed.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), 19);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Flag(std::sync::Arc<std::sync::atomic::AtomicBool>);

    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[test]
    fn garbage_is_freed_on_the_reaper_thread() {
        let freed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        free(Box::new(Flag(freed.clone())));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !freed.load(std::sync::atomic::Ordering::SeqCst) {
            assert!(std::time::Instant::now() < deadline, "not freed within 10 s");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}
