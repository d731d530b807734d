//! The sender side of a worker: takes encoded batches, paces them, sends
//! them through its sink and records what happened. One loop serves every
//! mode: Stop (rows, duration, Ctrl-C) × Pacer (open or closed loop).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::pacer::Pacer;
use super::producer::Feed;
use crate::config::Warmup;
use crate::stats::recorder::Timing;
use crate::stats::{Live, Recorder};
use crate::target::sink::Sink;

/// How long in-flight batches may take to finish after Ctrl-C.
pub const GRACE: Duration = Duration::from_secs(5);

/// Everything a worker needs besides its sink and feed.
#[derive(Clone)]
pub struct Plan {
    pub t0: Instant,
    /// Stop issuing batches after this point (since t0).
    pub deadline: Option<Duration>,
    /// This worker's share of `--rate`, rows per second.
    pub rate: Option<f64>,
    pub warmup: Warmup,
    pub cancel: CancellationToken,
    pub live: Arc<Live>,
}

/// Runs until the feed is exhausted, the deadline passes, Ctrl-C, or the
/// connection is lost; returns the sink (to finish) and the recorder.
pub async fn run(plan: Plan, mut sink: Sink, mut feed: Feed) -> (Sink, Recorder) {
    let mut rec = Recorder::default();
    let mut pacer = Pacer::new(plan.rate);
    let mut rows_attempted = 0u64;
    let cancel = &plan.cancel;
    loop {
        let mut payload = tokio::select! {
            biased;
            _ = cancel.cancelled() => break,
            p = feed.filled.recv() => match p { Some(p) => p, None => break },
        };
        let rows = payload.rows();
        let intended = pacer.next(rows, plan.t0.elapsed());
        if plan.deadline.is_some_and(|d| intended >= d) {
            break;
        }
        tokio::select! {
            biased;
            _ = cancel.cancelled() => break,
            _ = tokio::time::sleep_until((plan.t0 + intended).into()) => {}
        }
        let started = plan.t0.elapsed();
        if plan.deadline.is_some_and(|d| started >= d) {
            break;
        }
        let warmup = match plan.warmup {
            Warmup::None => false,
            Warmup::Duration(d) => started < d,
            Warmup::Rows(n) => rows_attempted < n,
        };
        let outcome = tokio::select! {
            r = sink.send(&mut payload) => Some(r),
            _ = async { cancel.cancelled().await; tokio::time::sleep(GRACE).await } => None,
        };
        let t = Timing { intended, started, ended: plan.t0.elapsed() };
        rows_attempted += rows;
        match outcome {
            Some(Ok(acked)) => {
                rec.ok(warmup, acked, t);
                plan.live.rows.fetch_add(acked, Ordering::Relaxed);
            }
            Some(Err(e)) => {
                rec.failed(warmup, rows, t, e.class, e.message);
                plan.live.failed.fetch_add(rows, Ordering::Relaxed);
                if e.fatal {
                    break;
                }
            }
            None => {
                let msg = format!("still in flight {} s after Ctrl-C", GRACE.as_secs());
                rec.failed(warmup, rows, t, "interrupted".into(), msg);
                break;
            }
        }
        // The producer may have stopped already; then the payload is dropped.
        let _ = feed.empty.send(payload);
    }
    (sink, rec)
}
