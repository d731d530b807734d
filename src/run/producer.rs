//! The producer side of a worker: a thread that prepares operations ahead of
//! the sender (generates and encodes batches, renders request bodies), so
//! that work stays off the send path. Items go to the sender through a
//! bounded channel and come back to be refilled: memory is bounded by the
//! pool, whatever the run's length. A feed may be cloned, so that one
//! producer (a single ordered reader, such as a source query's COPY stream)
//! feeds several senders; one thread may also fill several feeds (each
//! with its own items and order: `dbload http`'s templated VUs, thousands
//! of them on a few threads). A producer that panics does not look like the
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
    /// Used items go back with the number of their feed on the thread.
    empty: std_mpsc::SyncSender<(usize, T)>,
    index: usize,
    /// Set if the producer panicked (then it has stopped).
    panicked: Arc<OnceLock<String>>,
}

impl<T> Clone for Feed<T> {
    fn clone(&self) -> Self {
        let (filled, empty, panicked) = (self.filled.clone(), self.empty.clone(), self.panicked.clone());
        Feed { filled, empty, index: self.index, panicked }
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

    /// Whether `other` is filled by the same producer thread.
    #[cfg(test)]
    pub fn same_producer(&self, other: &Feed<T>) -> bool {
        Arc::ptr_eq(&self.panicked, &other.panicked)
    }

    /// Gives a used item back to be filled again.
    pub fn give_back(&mut self, item: T) {
        // The producer may have stopped already; then the item is dropped.
        let _ = self.empty.send((self.index, item));
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
    let feeds = spawn_each(vec![pool], move |_, item: &mut T| fill(item))?;
    Ok(feeds.into_iter().next().expect("one pool, one feed"))
}

/// Starts one producer thread for several feeds, one per pool: `fill(i,
/// item)` fills an item of feed `i`, in the order items come back, until it
/// returns false for that feed (then it is done) or its senders drop it. The
/// thread ends when every feed is done; a panic ends them all.
pub fn spawn_each<T, F>(pools: Vec<Vec<T>>, mut fill: F) -> std::io::Result<Vec<Feed<T>>>
where
    T: Send + 'static,
    F: FnMut(usize, &mut T) -> bool + Send + 'static,
{
    let (empty, empty_rx) = std_mpsc::sync_channel(pools.iter().map(Vec::len).sum());
    let panicked = Arc::new(OnceLock::new());
    let mut senders = Vec::with_capacity(pools.len());
    let mut feeds = Vec::with_capacity(pools.len());
    for (index, pool) in pools.into_iter().enumerate() {
        // Room for the whole pool: sending a filled item never blocks the thread.
        let (filled_tx, filled) = mpsc::channel(pool.len().max(1));
        for item in pool {
            empty.send((index, item)).expect("channel sized for the pools");
        }
        senders.push(Some(filled_tx));
        feeds.push(Feed {
            filled: Arc::new(Mutex::new(filled)),
            empty: empty.clone(),
            index,
            panicked: panicked.clone(),
        });
    }
    drop(empty);
    let noted = panicked;
    thread::Builder::new().name("dbload-producer".into()).spawn(move || {
        let mut open = senders.len();
        while let Ok((i, mut item)) = empty_rx.recv() {
            let Some(filled_tx) = &senders[i] else { continue };
            // `fill` is not called again after a panic, so its state is never seen half-changed.
            let more = match panic::catch_unwind(AssertUnwindSafe(|| fill(i, &mut item))) {
                Ok(more) => more,
                Err(payload) => {
                    // Noted before the senders drop: a reader that finds its feed closed finds this.
                    let _ = noted.set(panic_message(payload.as_ref()));
                    break;
                }
            };
            if !more || filled_tx.blocking_send(item).is_err() {
                senders[i] = None;
                open -= 1;
                if open == 0 {
                    break;
                }
            }
        }
    })?;
    Ok(feeds)
}
