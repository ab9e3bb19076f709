//! Which published diagnostics the transport has written to the client. The diagnostics task
//! lets a version's requests start only once its diagnostics are written, not merely queued:
//! on two cores, five requests computing tokens, symbols and hints held the writer back by
//! up to 15 ms (7 ms median) on a 10,000-node document, and the diagnostics a person waits for
//! reached the editor that much later.
//!
//! Only a transport that writes (stdio) attaches; without one (the in-process tests, which
//! read the messages straight from the service) nothing waits.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

/// The longest a version's requests wait for its diagnostics to be written: a client that
/// stopped reading must not hold them forever.
const LONGEST_WAIT: Duration = Duration::from_secs(2);

#[derive(Debug, Default)]
pub struct Delivery {
    attached: AtomicBool,
    /// The last version written for each document (by URI).
    written: Mutex<HashMap<String, i32>>,
    wake: Notify,
}

impl Delivery {
    /// A transport that writes is in front: from now on [`Delivery::written`] waits.
    pub fn attach(&self) {
        self.attached.store(true, Ordering::Release);
    }

    /// The transport stopped writing: nobody waits any more.
    pub fn detach(&self) {
        self.attached.store(false, Ordering::Release);
        self.wake.notify_waiters();
    }

    /// The diagnostics of `version` of `uri` are written.
    pub fn note(&self, uri: &str, version: i32) {
        self.lock().insert(uri.to_owned(), version);
        self.wake.notify_waiters();
    }

    /// Returns once the diagnostics of `version` of `uri` are written (at once when no
    /// transport is attached, and after [`LONGEST_WAIT`] at most).
    pub async fn written(&self, uri: &str, version: i32) {
        let _ = tokio::time::timeout(LONGEST_WAIT, async {
            loop {
                let woken = self.wake.notified();
                tokio::pin!(woken);
                // Registered before looking, so a note made in between is not missed.
                woken.as_mut().enable();
                if !self.attached.load(Ordering::Acquire) || self.lock().get(uri) == Some(&version) {
                    return;
                }
                woken.await;
            }
        })
        .await;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, i32>> {
        self.written.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_waiter_is_woken_by_the_note_of_its_version_only() {
        let delivery = std::sync::Arc::new(Delivery::default());
        // Nothing attached: no wait.
        delivery.written("file:///a", 1).await;
        delivery.attach();
        let waiting = tokio::spawn({
            let delivery = delivery.clone();
            async move { delivery.written("file:///a", 3).await }
        });
        delivery.note("file:///a", 2);
        delivery.note("file:///b", 3);
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        delivery.note("file:///a", 3);
        tokio::time::timeout(Duration::from_secs(1), waiting).await.unwrap().unwrap();
        // Detached: whoever waits goes on.
        let waiting = tokio::spawn({
            let delivery = delivery.clone();
            async move { delivery.written("file:///a", 4).await }
        });
        tokio::task::yield_now().await;
        delivery.detach();
        tokio::time::timeout(Duration::from_secs(1), waiting).await.unwrap().unwrap();
    }
}
