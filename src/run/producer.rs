//! The producer side of the workers: threads that prepare operations ahead
//! of the senders (generate and encode batches, render request bodies), so
//! that work stays off the send path. Items go to the senders through a
//! bounded channel and come back to be refilled: memory is bounded by the
//! pool, whatever the run's length. A feed may be cloned, so that producers
//! feed several senders; each filled item goes to whichever sender asks
//! first. A producer that panics does not look like the end of its input:
//! the panic is carried on into the worker that reads the feed next, which
//! fails the run and names it (see `run::stop`).
//!
//! Memory follows the work in flight, not the number of senders: a shared
//! feed ([`spawn_shared`]) makes an item only when a producer finds none
//! free, so there are at most one per sender (the item it sends) plus two
//! per producer thread (one being filled, one ready); a run whose senders
//! return their items at once (a dry run) makes a handful. An ingest of 256
//! workers on 2 cores thus keeps 256 + 4 batches at most, not 3 × 256, and
//! 2 producer threads, not 256.
//!
//! One thread may also fill several feeds, each with items and an order of
//! its own ([`spawn_each`]): `dbload http`'s templated VUs, thousands of
//! them on a few threads.

use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Condvar, OnceLock};
use std::thread;

use tokio::sync::{mpsc, Mutex};

use super::stop::{panic_message, ProducerPanicked};
use crate::op::{Operation, Source};

/// Items per sender of a feed of its own ([`spawn`]): one being sent, one
/// ready, one being filled.
pub const POOL: usize = 3;

/// Items a producer thread of a shared feed may hold besides the senders':
/// one being filled and one ready in the channel.
const PER_THREAD: usize = 2;

/// Producer threads for a shared feed of `senders`: one per core (more
/// would only take turns on the same cores), never more than the senders.
fn threads_for(senders: usize) -> usize {
    thread::available_parallelism().map_or(1, |n| n.get()).min(senders).max(1)
}

/// The most items a shared feed of `senders` and `threads` producers makes.
fn pool_cap(senders: usize, threads: usize) -> usize {
    senders + PER_THREAD * threads
}

/// The two ends a sender uses: filled items in, used ones back. Clones
/// share the producers: each filled item goes to one of them.
pub struct Feed<T> {
    ends: Arc<Ends<T>>,
    /// Set if a producer panicked (then they all stop).
    panicked: Arc<OnceLock<String>>,
}

/// What the clones of a feed share; dropped with the last of them, which
/// tells its producers it is gone.
struct Ends<T> {
    /// Behind a lock so clones can share it; uncontended (one lock per
    /// batch) when the feed is not shared.
    filled: Mutex<mpsc::Receiver<T>>,
    free: Arc<Free<T>>,
    /// Which of the feeds of its thread this is ([`spawn_each`]); 0 otherwise.
    index: usize,
}

impl<T> Drop for Ends<T> {
    fn drop(&mut self) {
        self.free.feed_gone();
    }
}

impl<T> Clone for Feed<T> {
    fn clone(&self) -> Self {
        Feed { ends: self.ends.clone(), panicked: self.panicked.clone() }
    }
}

impl<T> Feed<T> {
    /// The next filled item; `None` when the producers are done. If one
    /// panicked instead, this panics with [`ProducerPanicked`]: call it
    /// from a worker's task, whose panic the run reports.
    pub async fn recv(&mut self) -> Option<T> {
        match self.try_recv().await {
            Ok(item) => item,
            Err(p) => panic::resume_unwind(Box::new(p)),
        }
    }

    /// The next filled item; `None` when the producers are done, an error
    /// if one panicked. For callers outside a worker's task.
    pub async fn try_recv(&mut self) -> Result<Option<T>, ProducerPanicked> {
        let item = self.ends.filled.lock().await.recv().await;
        match (item, self.panicked.get()) {
            (None, Some(msg)) => Err(ProducerPanicked(msg.clone())),
            (item, _) => Ok(item),
        }
    }

    /// Gives a used item back to be filled again.
    pub fn give_back(&mut self, item: T) {
        self.ends.free.give_back(self.ends.index, item);
    }

    /// Whether `other` is filled by the same producer thread.
    #[cfg(test)]
    pub fn same_producer(&self, other: &Feed<T>) -> bool {
        Arc::ptr_eq(&self.ends.free, &other.ends.free)
    }
}

/// The items not in use, each with the index of its feed, and how to make
/// more while fewer than `cap` exist: taken by the producer threads, given
/// back by the senders.
struct Free<T> {
    state: std::sync::Mutex<FreeState<T>>,
    given_back: Condvar,
    /// None for a pool given whole ([`spawn`]).
    make: Option<Box<dyn Fn() -> T + Send + Sync>>,
    cap: usize,
}

struct FreeState<T> {
    items: Vec<(usize, T)>,
    made: usize,
    /// Feeds still read; at 0 producers stop and items given back are dropped.
    open: usize,
}

impl<T> Free<T> {
    /// A pool given whole, shared by `feeds` feeds: no more are made.
    fn given(items: Vec<(usize, T)>, feeds: usize) -> Free<T> {
        let cap = items.len();
        let state = FreeState { made: cap, items, open: feeds };
        Free { state: std::sync::Mutex::new(state), given_back: Condvar::new(), make: None, cap }
    }

    /// A free item: one given back (its buffers already grown), else a new
    /// one while fewer than `cap` were made, else the next given back.
    /// `None` once the feeds are gone.
    fn take(&self) -> Option<(usize, T)> {
        let mut state = self.state.lock().expect("no panic while holding the free list");
        loop {
            if state.open == 0 {
                return None;
            }
            if let Some(item) = state.items.pop() {
                return Some(item);
            }
            if let (Some(make), true) = (&self.make, state.made < self.cap) {
                state.made += 1;
                drop(state);
                return Some((0, make()));
            }
            state = self.given_back.wait(state).expect("no panic while holding the free list");
        }
    }

    fn give_back(&self, index: usize, item: T) {
        let mut state = self.state.lock().expect("no panic while holding the free list");
        if state.open > 0 {
            state.items.push((index, item));
            drop(state);
            self.given_back.notify_one();
        }
    }

    fn feed_gone(&self) {
        let mut state = self.state.lock().expect("no panic while holding the free list");
        state.open -= 1;
        if state.open == 0 {
            state.items.clear();
            drop(state);
            self.given_back.notify_all();
        }
    }

    #[cfg(test)]
    fn made(&self) -> usize {
        self.state.lock().unwrap().made
    }
}

/// A feed of operations is a worker's source as it is; a feed of anything
/// else (batches of request bodies) is read by a source of its own.
impl<T: Operation + Send + 'static> Source for Feed<T> {
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
/// its [`Feed`]. A feed shared by several senders needs a pool of at least
/// one item per sender plus two (one ready, one being filled) to keep them
/// all busy.
pub fn spawn<T, F>(pool: Vec<T>, fill: F) -> std::io::Result<Feed<T>>
where
    T: Send + 'static,
    F: FnMut(&mut T) -> bool + Send + 'static,
{
    let cap = pool.len();
    start(Free::given(pool.into_iter().map(|item| (0, item)).collect(), 1), vec![vec![fill]], cap)
}

/// Starts `threads_for(senders)` producer threads that share `fillers`
/// (one per generator: filler `i` goes to thread `i % threads`, which takes
/// turns among its own), for `senders` that share the returned [`Feed`].
/// Each filler is called until it returns false (its rows are done); a
/// filler's items reach the senders in the order it filled them, but any
/// sender may send any of them. Items are made by `make` as needed, at most
/// `pool_cap(senders, threads)`: memory follows the work in flight.
pub fn spawn_shared<T, F>(
    fillers: Vec<F>,
    senders: usize,
    make: impl Fn() -> T + Send + Sync + 'static,
) -> std::io::Result<Feed<T>>
where
    T: Send + 'static,
    F: FnMut(&mut T) -> bool + Send + 'static,
{
    let threads = threads_for(senders).min(fillers.len()).max(1);
    let free = Free {
        state: std::sync::Mutex::new(FreeState { items: Vec::new(), made: 0, open: 1 }),
        given_back: Condvar::new(),
        make: Some(Box::new(make)),
        cap: pool_cap(senders, threads),
    };
    let mut shares: Vec<Vec<F>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, filler) in fillers.into_iter().enumerate() {
        shares[i % threads].push(filler);
    }
    start(free, shares, threads)
}

/// Starts one producer thread per share of fillers, all taking items from
/// `free` and sending them filled through one channel of `ready` places.
fn start<T, F>(free: Free<T>, shares: Vec<Vec<F>>, ready: usize) -> std::io::Result<Feed<T>>
where
    T: Send + 'static,
    F: FnMut(&mut T) -> bool + Send + 'static,
{
    let (filled_tx, filled) = mpsc::channel(ready.max(1));
    let free = Arc::new(free);
    let panicked = Arc::new(OnceLock::new());
    let feed = Feed { ends: Arc::new(Ends { filled: Mutex::new(filled), free: free.clone(), index: 0 }), panicked };
    for fillers in shares {
        let (free, filled_tx, noted) = (free.clone(), filled_tx.clone(), feed.panicked.clone());
        thread::Builder::new()
            .name("dbload-producer".into())
            .spawn(move || produce(fillers, &free, &filled_tx, &noted))?;
    }
    Ok(feed)
}

/// One producer thread: fills free items with its fillers in turn, until
/// they are all done, the feeds are gone, or a producer panicked.
fn produce<T, F>(mut fillers: Vec<F>, free: &Free<T>, filled: &mpsc::Sender<T>, panicked: &OnceLock<String>)
where
    F: FnMut(&mut T) -> bool,
{
    let mut next = 0;
    while !fillers.is_empty() && panicked.get().is_none() {
        let Some((_, mut item)) = free.take() else { return };
        next %= fillers.len();
        match caught(panicked, || fillers[next](&mut item)) {
            Some(true) => {
                if filled.blocking_send(item).is_err() {
                    return;
                }
                next += 1;
            }
            Some(false) => {
                free.give_back(0, item);
                fillers.remove(next);
            }
            None => return,
        }
    }
}

/// Starts one producer thread for several feeds, one per pool: `fill(i,
/// item)` fills an item of feed `i`, in the order its items come back,
/// until it returns false for that feed (then it is done) or its senders
/// drop it. The thread ends when every feed is done; a panic ends them all.
pub fn spawn_each<T, F>(pools: Vec<Vec<T>>, mut fill: F) -> std::io::Result<Vec<Feed<T>>>
where
    T: Send + 'static,
    F: FnMut(usize, &mut T) -> bool + Send + 'static,
{
    let sizes: Vec<usize> = pools.iter().map(Vec::len).collect();
    let items = pools.into_iter().enumerate().flat_map(|(i, pool)| pool.into_iter().map(move |item| (i, item)));
    let free = Arc::new(Free::given(items.collect(), sizes.len()));
    let panicked = Arc::new(OnceLock::new());
    let mut senders = Vec::with_capacity(sizes.len());
    let mut feeds = Vec::with_capacity(sizes.len());
    for (index, size) in sizes.into_iter().enumerate() {
        // Room for the whole pool: sending a filled item never blocks the thread.
        let (filled_tx, filled) = mpsc::channel(size.max(1));
        senders.push(Some(filled_tx));
        let ends = Ends { filled: Mutex::new(filled), free: free.clone(), index };
        feeds.push(Feed { ends: Arc::new(ends), panicked: panicked.clone() });
    }
    let noted = panicked;
    thread::Builder::new().name("dbload-producer".into()).spawn(move || {
        let mut open = senders.len();
        while open > 0 && noted.get().is_none() {
            let Some((i, mut item)) = free.take() else { return };
            let Some(filled) = &senders[i] else { continue };
            match caught(&noted, || fill(i, &mut item)) {
                Some(true) if filled.blocking_send(item).is_ok() => {}
                Some(_) => {
                    senders[i] = None;
                    open -= 1;
                }
                None => return,
            }
        }
    })?;
    Ok(feeds)
}

/// `fill()`, or `None` if it panicked, noted in `panicked` (before the
/// thread's senders drop: a reader that finds its feed closed finds this).
/// A filler is not called again after a panic, so its state is never seen
/// half-changed.
fn caught(panicked: &OnceLock<String>, fill: impl FnOnce() -> bool) -> Option<bool> {
    match panic::catch_unwind(AssertUnwindSafe(fill)) {
        Ok(more) => Some(more),
        Err(payload) => {
            let _ = panicked.set(panic_message(payload.as_ref()));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Item `seq` of filler `filler`.
    #[derive(Default)]
    struct Tagged {
        filler: usize,
        seq: u64,
    }

    /// Fillers that each fill `count` items, numbered, then are done.
    fn counting(fillers: usize, count: u64) -> Vec<impl FnMut(&mut Tagged) -> bool + Send + 'static> {
        (0..fillers)
            .map(|filler| {
                let mut seq = 0;
                move |t: &mut Tagged| {
                    if seq == count {
                        return false;
                    }
                    (t.filler, t.seq) = (filler, seq);
                    seq += 1;
                    true
                }
            })
            .collect()
    }

    /// Issue 14 item 3: 256 workers kept 3 batches each (1.4 GiB). The items
    /// of a shared feed follow what is in flight: one reader that sends one
    /// at a time leaves at most one per producer thread being filled and one
    /// ready, however many workers' generators there are.
    #[tokio::test]
    async fn a_shared_feed_makes_items_for_the_work_in_flight_not_per_worker() {
        let (workers, per_worker) = (64, 50);
        let mut feed = spawn_shared(counting(workers, per_worker), workers, Tagged::default).unwrap();
        let mut next_seq = vec![0; workers];
        while let Some(item) = feed.recv().await {
            assert_eq!(item.seq, next_seq[item.filler], "filler {}'s items out of order", item.filler);
            next_seq[item.filler] += 1;
            feed.give_back(item);
        }
        assert!(next_seq.iter().all(|&n| n == per_worker), "every filler's items, each once: {next_seq:?}");
        let (made, threads) = (feed.ends.free.made(), threads_for(workers));
        assert!(made <= 1 + PER_THREAD * threads, "{made} items made for one in flight and {threads} producers");
    }

    #[test]
    fn the_cap_is_one_item_per_worker_plus_two_per_producer_thread() {
        assert_eq!(pool_cap(256, 2), 258 + 2);
        assert!(threads_for(256) <= thread::available_parallelism().unwrap().get());
        assert_eq!(threads_for(1), 1);
    }

    /// Workers that all hold an item (each sending a batch) get one each;
    /// the producers then wait rather than make more than the cap.
    #[tokio::test]
    async fn workers_that_all_send_hold_one_item_each_and_no_more_are_made() {
        let workers = 16;
        let endless = (0..workers).map(|_| |_: &mut Tagged| true).collect();
        let feed = spawn_shared(endless, workers, Tagged::default).unwrap();
        let mut held = Vec::new();
        for _ in 0..workers {
            let mut f = feed.clone();
            held.push(f.recv().await.unwrap());
        }
        let cap = pool_cap(workers, threads_for(workers));
        let waited = std::time::Instant::now();
        while feed.ends.free.made() < cap && waited.elapsed() < std::time::Duration::from_secs(10) {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        // The producers, blocked with their items filled, make no more.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert_eq!(feed.ends.free.made(), cap);
    }

    #[tokio::test]
    async fn a_panic_in_one_producer_stops_them_all_and_reaches_a_reader() {
        // Filler 1 panics at its 5th item; the others would go on for ever.
        let fillers = (0..4).map(|f| {
            let mut n = 0;
            move |_: &mut Tagged| {
                n += 1;
                assert!(f != 1 || n < 5, "bad row {n}");
                true
            }
        });
        let mut feed = spawn_shared(fillers.collect(), 4, Tagged::default).unwrap();
        let found = loop {
            match feed.try_recv().await {
                Ok(Some(item)) => feed.give_back(item),
                Ok(None) => panic!("the end of the input, not a panic"),
                Err(ProducerPanicked(msg)) => break msg,
            }
        };
        assert_eq!(found, "bad row 5");
    }
}
