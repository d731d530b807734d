//! The producer side of a worker: a thread that prepares operations ahead of
//! the sender (generates and encodes batches, renders request bodies), so
//! that work stays off the send path. Items go to the sender through a
//! bounded channel and come back to be refilled: memory is bounded by the
//! pool, whatever the run's length. A feed may be cloned, so that one
//! producer (a single ordered reader, such as a source query's COPY stream)
//! feeds several senders.

use std::sync::mpsc as std_mpsc;
use std::sync::Arc;
use std::thread;

use tokio::sync::{mpsc, Mutex};

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
}

impl<T> Clone for Feed<T> {
    fn clone(&self) -> Self {
        Feed { filled: self.filled.clone(), empty: self.empty.clone() }
    }
}

impl<T> Feed<T> {
    /// The next filled item; `None` when the producer is done.
    pub async fn recv(&mut self) -> Option<T> {
        self.filled.lock().await.recv().await
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
    thread::Builder::new().name("dbload-producer".into()).spawn(move || {
        while let Ok(mut item) = empty_rx.recv() {
            if !fill(&mut item) || filled_tx.blocking_send(item).is_err() {
                break;
            }
        }
    })?;
    Ok(Feed { filled: Arc::new(Mutex::new(filled)), empty })
}
