//! The producer side of a worker: a thread that prepares operations ahead of
//! the sender (generates and encodes batches, renders request bodies), so
//! that work stays off the send path. Items go to the sender through a
//! bounded channel and come back to be refilled: memory is bounded by the
//! pool, whatever the run's length. A feed may be cloned, so that one
//! producer (a single ordered reader, such as a source query's COPY stream)
//! feeds several senders. A producer that panics does not look like the
//! end of its input: the panic is carried on into the worker that reads the
//! feed next, which fails the run and names it (see `run::stop`).

use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, OnceLock};
use std::thread;

use tokio::sync::{mpsc, Mutex};

use super::stop::{panic_message, ProducerPanicked};
use super::worker::{Operation, Source};

/// Items per worker: one being sent, one ready, one being filled.
pub const POOL: usize = 3;

/// The two ends a sender uses: filled items in, used ones back. Clones
/// share the producer: each filled item goes to one of them.
pub struct Feed<T> {
    /// Behind a lock so clones can share it; uncontended (one lock per
    /// batch) when the feed is not shared.
    filled: Arc<Mutex<mpsc::Receiver<T>>>,
    empty: std_mpsc::SyncSender<T>,
    /// Set if the producer panicked (then it has stopped).
    panicked: Arc<OnceLock<String>>,
}

impl<T> Clone for Feed<T> {
    fn clone(&self) -> Self {
        Feed { filled: self.filled.clone(), empty: self.empty.clone(), panicked: self.panicked.clone() }
    }
}

impl<T> Feed<T> {
    /// The next filled item; `None` when the producer is done. If it
    /// panicked instead, this panics with [`ProducerPanicked`]: call it
    /// from a worker's task, whose panic the run reports.
    pub async fn recv(&mut self) -> Option<T> {
        match self.try_recv().await {
            Ok(item) => item,
            Err(p) => panic::resume_unwind(Box::new(p)),
        }
    }

    /// The next filled item; `None` when the producer is done, an error if
    /// it panicked. For callers outside a worker's task.
    pub async fn try_recv(&mut self) -> Result<Option<T>, ProducerPanicked> {
        let item = self.filled.lock().await.recv().await;
        match (item, self.panicked.get()) {
            (None, Some(msg)) => Err(ProducerPanicked(msg.clone())),
            (item, _) => Ok(item),
        }
    }

    /// Gives a used item back to be filled again.
    pub fn give_back(&mut self, item: T) {
        // The producer may have stopped already; then the item is dropped.
        let _ = self.empty.send(item);
    }
}

/// A feed of operations is a worker's source as it is; a feed of anything
/// else (batches of request bodies) is read by a source of its own.
impl<T: Operation + Send> Source for Feed<T> {
    type Op = T;

    async fn next(&mut self) -> Option<T> {
        self.recv().await
    }

    fn recycle(&mut self, item: T) {
        self.give_back(item)
    }
}

/// Starts a producer thread that calls `fill` on each free item of `pool`
/// until it returns false (nothing left) or the senders drop every clone of
/// its [`Feed`]. A shared feed needs a pool of at least one item per sender
/// plus two (one ready, one being filled) to keep them all busy.
pub fn spawn<T, F>(pool: Vec<T>, mut fill: F) -> std::io::Result<Feed<T>>
where
    T: Send + 'static,
    F: FnMut(&mut T) -> bool + Send + 'static,
{
    let (filled_tx, filled) = mpsc::channel(pool.len());
    let (empty, empty_rx) = std_mpsc::sync_channel(pool.len());
    for item in pool {
        empty.send(item).expect("channel sized for the pool");
    }
    let panicked = Arc::new(OnceLock::new());
    let noted = panicked.clone();
    thread::Builder::new().name("dbload-producer".into()).spawn(move || {
        while let Ok(mut item) = empty_rx.recv() {
            // `fill` is not called again after a panic, so its state is never seen half-changed.
            let more = match panic::catch_unwind(AssertUnwindSafe(|| fill(&mut item))) {
                Ok(more) => more,
                Err(payload) => {
                    // Noted before `filled_tx` drops: a reader that finds the feed closed finds this.
                    let _ = noted.set(panic_message(payload.as_ref()));
                    false
                }
            };
            if !more || filled_tx.blocking_send(item).is_err() {
                break;
            }
        }
    })?;
    Ok(Feed { filled: Arc::new(Mutex::new(filled)), empty, panicked })
}
