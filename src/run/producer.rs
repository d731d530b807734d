//! The producer side of a worker: a thread that generates and encodes
//! batches ahead of the sender, so generation stays off the send path.
//! Payloads go to the sender through a bounded channel and come back to be
//! reused: memory is bounded by the pool, whatever the row count.

use std::sync::mpsc as std_mpsc;
use std::thread;

use tokio::sync::mpsc;

use crate::encode::{Framing, Payload};
use crate::model::Generator;

/// Payloads per worker: one being sent, one ready, one being filled.
pub const POOL: usize = 3;

/// The two ends a sender uses: filled payloads in, empty ones back.
pub struct Feed {
    pub filled: mpsc::Receiver<Payload>,
    pub empty: std_mpsc::SyncSender<Payload>,
}

impl super::worker::Source for Feed {
    type Op = Payload;

    async fn next(&mut self) -> Option<Payload> {
        self.filled.recv().await
    }

    fn recycle(&mut self, p: Payload) {
        // The producer may have stopped already; then the payload is dropped.
        let _ = self.empty.send(p);
    }
}

/// Starts the producer thread. It stops when the generator is exhausted or
/// the sender drops its [`Feed`].
pub fn spawn(
    mut generator: Generator,
    framing: Framing,
    batch_size: usize,
    pool: Vec<Payload>,
) -> std::io::Result<Feed> {
    let (filled_tx, filled) = mpsc::channel(pool.len());
    let (empty, empty_rx) = std_mpsc::sync_channel(pool.len());
    for p in pool {
        empty.send(p).expect("channel sized for the pool");
    }
    thread::Builder::new().name("dbload-producer".into()).spawn(move || {
        while let Ok(mut p) = empty_rx.recv() {
            if !generator.next_batch(&mut p.batch, batch_size) {
                break;
            }
            framing.encode(&mut p);
            if filled_tx.blocking_send(p).is_err() {
                break;
            }
        }
    })?;
    Ok(Feed { filled, empty })
}
