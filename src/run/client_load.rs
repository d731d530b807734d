//! How busy the client's own threads were, second by second, while the
//! workers ran: a task on the run's runtime that reads the kernel's
//! accounting of the process's threads once a second (`stats::threads`),
//! so that a report can say when the client, not the server, was the
//! bottleneck. Reading a few small files a second costs the run nothing
//! it would notice.

use std::time::Instant;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::sampler::EVERY;
use crate::stats::threads::{self, Busiest};

/// Reads the threads from `t0` once every [`EVERY`] until `stop`: the
/// busiest thread of each whole second.
pub fn spawn(t0: Instant, stop: CancellationToken) -> JoinHandle<Vec<Busiest>> {
    tokio::spawn(async move {
        let mut seconds = Vec::new();
        let (mut before, mut read_at) = (threads::read(), Instant::now());
        for k in 1u32.. {
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep_until((t0 + EVERY * k).into()) => {}
            }
            let (now, at) = (threads::read(), Instant::now());
            seconds.push(threads::busiest(&before, &now, at - read_at));
            (before, read_at) = (now, at);
        }
        seconds
    })
}
