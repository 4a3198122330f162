//! The worker threads that render and tokenize, fed through a bounded queue: a request that finds
//! the queue full is refused at once (503) instead of waiting without bound.

use crate::api::ApiError;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};

type Job = Box<dyn FnOnce() + Send>;

/// A fixed set of worker threads and their queue.
pub struct Pool {
    sender: SyncSender<Job>,
}

impl Pool {
    /// Starts `workers` threads (at least one) behind a queue of `queue` waiting jobs.
    pub fn new(workers: usize, queue: usize) -> std::io::Result<Pool> {
        let (sender, receiver) = sync_channel::<Job>(queue);
        let receiver = Arc::new(Mutex::new(receiver));
        for i in 0..workers.max(1) {
            let receiver = Arc::clone(&receiver);
            std::thread::Builder::new()
                .name(format!("chatfmt-worker-{i}"))
                .spawn(move || work(&receiver))?;
        }
        Ok(Pool { sender })
    }

    /// Runs `f` and gives its result: on a worker, waiting for it, or at once on the calling thread
    /// when the request is `light` (its work takes less than the hand-off to a worker and back).
    /// A full queue is a 503.
    pub async fn run<T: Send + 'static>(
        &self,
        light: bool,
        f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        if light {
            return guarded(f);
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = tx.send(guarded(f));
        });
        match self.sender.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => return Err(ApiError::busy()),
        }
        rx.await.unwrap_or_else(|_| Err(ApiError::busy()))
    }
}

/// Runs `f`; a panic is an error answer, not a lost connection.
fn guarded<T>(f: impl FnOnce() -> Result<T, ApiError>) -> Result<T, ApiError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| Err(ApiError::bad("the request could not be processed", None)))
}

/// A worker: takes jobs until the pool is dropped.
fn work(receiver: &Mutex<Receiver<Job>>) {
    loop {
        let job = match receiver.lock() {
            Ok(r) => r.recv(),
            Err(_) => return,
        };
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    use std::sync::mpsc::channel;
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_job_finding_every_worker_busy_and_the_queue_full_is_refused_with_503() {
        let pool = Arc::new(Pool::new(1, 0).unwrap());
        // The first job holds the lone worker until released (it is refused, and tried again, only
        // while the new worker is not yet waiting for work).
        let (first, release) = loop {
            let (started_tx, started_rx) = channel::<()>();
            let (release_tx, release_rx) = channel::<()>();
            let p = Arc::clone(&pool);
            let job = tokio::spawn(async move {
                p.run(false, move || {
                    let _ = started_tx.send(());
                    let _ = release_rx.recv();
                    Ok(1)
                })
                .await
            });
            if started_rx.recv_timeout(Duration::from_secs(10)).is_ok() {
                break (job, release_tx);
            }
            assert!(job.await.unwrap().is_err());
        };
        let refused = pool.run(false, || Ok(2)).await.unwrap_err().into_response();
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refused.headers()[header::RETRY_AFTER], "1");
        // A light job runs in place, busy workers or not; its panic is an error answer.
        assert_eq!(pool.run(true, || Ok(3)).await.unwrap(), 3);
        let panicked = pool.run(true, || -> Result<(), ApiError> { panic!("a bug") }).await;
        assert_eq!(panicked.unwrap_err().into_response().status(), StatusCode::BAD_REQUEST);
        release.send(()).unwrap();
        assert_eq!(first.await.unwrap().unwrap(), 1);
    }
}
