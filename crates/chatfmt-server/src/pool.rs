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

    /// Runs `f` on a worker and waits for its result; a full queue is a 503.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let result = catch_unwind(AssertUnwindSafe(f))
                .unwrap_or_else(|_| Err(ApiError::bad("the request could not be processed", None)));
            let _ = tx.send(result);
        });
        match self.sender.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => return Err(ApiError::busy()),
        }
        rx.await.unwrap_or_else(|_| Err(ApiError::busy()))
    }
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
