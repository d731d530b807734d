//! The one worker loop that every command runs: take the next operation
//! from a [`Source`], pace it, run it through an [`Executor`], record what
//! happened. Stop (count, duration, Ctrl-C) × Pacer (open or closed loop)
//! × what an operation is (a batch of rows, a query, a request) are
//! composed here rather than written again per mode.

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::pacer::{Clock, Schedule};
use crate::config::{Warmup, LATE_AFTER};
use crate::stats::recorder::Timing;
use crate::stats::{Live, OpError, Recorder};

/// How long in-flight operations may take to finish after Ctrl-C.
pub const GRACE: Duration = Duration::from_secs(5);

/// Something a worker sends: a batch of rows, a query, a request.
pub trait Operation {
    /// What pacing and throughput count: rows in a batch, 1 for a query.
    fn units(&self) -> u64;
    /// Which of the run's labels (e.g. the query of a mix) it is recorded under.
    fn label(&self) -> usize {
        0
    }
}

/// Where a worker's operations come from.
pub trait Source {
    type Op: Operation;
    /// The next operation; `None` when there are no more.
    fn next(&mut self) -> impl Future<Output = Option<Self::Op>> + Send;
    /// Gives a sent operation back, so its buffers can be reused.
    fn recycle(&mut self, _op: Self::Op) {}
}

/// Runs operations against the target.
pub trait Executor<Op> {
    /// Runs `op`; on success, the units the target acknowledged.
    fn execute(&mut self, op: &mut Op) -> impl Future<Output = Result<u64, OpError>> + Send;
}

/// Everything a worker needs besides its source and executor.
#[derive(Clone)]
pub struct Plan {
    pub t0: Instant,
    /// Stop issuing operations after this point (since t0).
    pub deadline: Option<Duration>,
    /// The run's open-loop schedule (`--rate`), shared by its workers.
    pub schedule: Arc<Schedule>,
    pub warmup: Warmup,
    /// How many labels operations may carry (one recorder each).
    pub labels: usize,
    pub cancel: CancellationToken,
    pub live: Arc<Live>,
}

impl Plan {
    /// A plan whose clock starts now, with `rate` units per second in total
    /// on one schedule that the workers share.
    pub fn new(
        deadline: Option<Duration>,
        rate: Option<f64>,
        warmup: Warmup,
        labels: usize,
        cancel: CancellationToken,
    ) -> Plan {
        Plan {
            t0: Instant::now(),
            deadline,
            schedule: Arc::new(Schedule::new(rate)),
            warmup,
            labels,
            cancel,
            live: Arc::new(Live::default()),
        }
    }

    /// Open loop: units due before the run ended (its deadline, or `wall`
    /// if it ended first; at most `limit`) that never started. Those due in
    /// its last [`LATE_AFTER`] were not late yet: they are not counted.
    pub fn dropped(&self, wall: Duration, limit: Option<u64>) -> Option<u64> {
        let end = self.deadline.map_or(wall, |d| d.min(wall));
        self.schedule.dropped(end.saturating_sub(LATE_AFTER), limit)
    }
}

/// Runs until the source is exhausted, the deadline passes, Ctrl-C, or the
/// executor reports a fatal error; returns the executor (to finish) and one
/// recorder per label.
pub async fn run<S, E>(plan: Plan, mut source: S, mut executor: E) -> (E, Vec<Recorder>)
where
    S: Source,
    E: Executor<S::Op>,
{
    let mut recorders = vec![Recorder::default(); plan.labels];
    let mut attempted = 0u64;
    let mut clock = Clock::default();
    let cancel = &plan.cancel;
    // Waiting for Ctrl-C registers with the token: done once per worker,
    // not once per operation (at 100k requests/s that lock would show).
    let cancelled = cancel.cancelled();
    tokio::pin!(cancelled);
    let grace = async {
        cancel.cancelled().await;
        tokio::time::sleep(GRACE).await
    };
    tokio::pin!(grace);
    loop {
        let mut op = tokio::select! {
            biased;
            _ = &mut cancelled => break,
            op = source.next() => match op { Some(op) => op, None => break },
        };
        let units = op.units();
        let intended = plan.schedule.take(units, plan.t0.elapsed());
        if plan.deadline.is_some_and(|d| intended >= d) {
            break;
        }
        // Only sleep when ahead of the schedule (a closed loop never is).
        // (Ctrl-C was just checked above, before taking the operation.)
        if plan.t0 + intended > Instant::now() {
            tokio::select! {
                biased;
                _ = &mut cancelled => break,
                _ = clock.sleep_until(plan.t0 + intended) => {}
            }
        }
        let started = plan.t0.elapsed();
        if plan.deadline.is_some_and(|d| started >= d) {
            break;
        }
        plan.schedule.started(units);
        let warmup = warming_up(plan.warmup, started, attempted);
        let outcome = tokio::select! {
            r = executor.execute(&mut op) => Some(r),
            _ = &mut grace => None,
        };
        let t = Timing { intended, started, ended: plan.t0.elapsed() };
        attempted += units;
        let rec = &mut recorders[op.label()];
        match outcome {
            Some(Ok(acked)) => {
                rec.ok(warmup, acked, t);
                plan.live.rows.fetch_add(acked, Ordering::Relaxed);
            }
            Some(Err(e)) => {
                let acked = e.acked.min(units);
                rec.failed(warmup, acked, units - acked, t, e.class, e.message);
                plan.live.rows.fetch_add(acked, Ordering::Relaxed);
                plan.live.failed.fetch_add(units - acked, Ordering::Relaxed);
                if e.fatal {
                    break;
                }
            }
            None => {
                let msg = format!("still in flight {} s after Ctrl-C", GRACE.as_secs());
                rec.failed(warmup, 0, units, t, "interrupted".into(), msg);
                break;
            }
        }
        source.recycle(op);
    }
    (executor, recorders)
}

/// Whether an operation that starts `started` after t0, with `attempted`
/// units before it on this worker, belongs to the warm-up. Executors that
/// keep figures of their own (HTTP phases) ask the same question.
pub fn warming_up(warmup: Warmup, started: Duration, attempted: u64) -> bool {
    match warmup {
        Warmup::None => false,
        Warmup::Duration(d) => started < d,
        Warmup::Count(n) => attempted < n,
    }
}
