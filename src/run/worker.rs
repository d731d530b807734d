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

use super::pacer::Pacer;
use crate::config::Warmup;
use crate::stats::recorder::Timing;
use crate::stats::{Live, OpError, Recorder};

/// How long in-flight operations may take to finish after Ctrl-C or the
/// deadline; then they are cancelled (see [`Executor::cancel`]).
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
    /// Stops, on the target, an operation the loop gave up on (still in
    /// flight [`GRACE`] after Ctrl-C or the deadline) once its future is
    /// dropped. Nothing to do where dropping the future ends it (HTTP).
    fn cancel(&mut self) -> impl Future<Output = ()> + Send {
        std::future::ready(())
    }
}

/// Everything a worker needs besides its source and executor.
#[derive(Clone)]
pub struct Plan {
    pub t0: Instant,
    /// Stop issuing operations after this point (since t0).
    pub deadline: Option<Duration>,
    /// This worker's share of `--rate`, units per second.
    pub rate: Option<f64>,
    pub warmup: Warmup,
    /// How many labels operations may carry (one recorder each).
    pub labels: usize,
    pub cancel: CancellationToken,
    pub live: Arc<Live>,
}

impl Plan {
    /// A plan whose clock starts now, with `rate` (in total) shared evenly
    /// by `workers`.
    pub fn new(
        deadline: Option<Duration>,
        rate: Option<f64>,
        workers: u32,
        warmup: Warmup,
        labels: usize,
        cancel: CancellationToken,
    ) -> Plan {
        Plan {
            t0: Instant::now(),
            deadline,
            rate: rate.map(|r| r / workers as f64),
            warmup,
            labels,
            cancel,
            live: Arc::new(Live::default()),
        }
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
    let mut pacer = Pacer::new(plan.rate);
    let mut attempted = 0u64;
    let cancel = &plan.cancel;
    // Waiting for Ctrl-C registers with the token: done once per worker,
    // not once per operation (at 100k requests/s that lock would show).
    let cancelled = cancel.cancelled();
    tokio::pin!(cancelled);
    // Once per worker too: what an operation in flight gets after Ctrl-C
    // or the deadline before it is given up.
    let grace = async {
        let deadline = async {
            match plan.deadline {
                Some(d) => tokio::time::sleep_until((plan.t0 + d).into()).await,
                None => std::future::pending().await,
            }
        };
        let why = tokio::select! {
            _ = cancel.cancelled() => "Ctrl-C",
            _ = deadline => "the deadline",
        };
        tokio::time::sleep(GRACE).await;
        why
    };
    tokio::pin!(grace);
    loop {
        let mut op = tokio::select! {
            biased;
            _ = &mut cancelled => break,
            op = source.next() => match op { Some(op) => op, None => break },
        };
        let units = op.units();
        let intended = pacer.next(units, plan.t0.elapsed());
        if plan.deadline.is_some_and(|d| intended >= d) {
            break;
        }
        // Only sleep when ahead of the schedule: the timer rounds up to the
        // next millisecond, which would cap a closed loop at 1,000 ops/s.
        // (Ctrl-C was just checked above, before taking the operation.)
        if plan.t0 + intended > Instant::now() {
            tokio::select! {
                biased;
                _ = &mut cancelled => break,
                _ = tokio::time::sleep_until((plan.t0 + intended).into()) => {}
            }
        }
        let started = plan.t0.elapsed();
        if plan.deadline.is_some_and(|d| started >= d) {
            break;
        }
        let warmup = warming_up(plan.warmup, started, attempted);
        let outcome = tokio::select! {
            r = executor.execute(&mut op) => Ok(r),
            why = &mut grace => Err(why),
        };
        let t = Timing { intended, started, ended: plan.t0.elapsed() };
        attempted += units;
        let rec = &mut recorders[op.label()];
        match outcome {
            Ok(Ok(acked)) => {
                rec.ok(warmup, acked, t);
                plan.live.rows.fetch_add(acked, Ordering::Relaxed);
            }
            Ok(Err(e)) => {
                let acked = e.acked.min(units);
                rec.failed(warmup, acked, units - acked, t, e.class, e.message);
                plan.live.rows.fetch_add(acked, Ordering::Relaxed);
                plan.live.failed.fetch_add(units - acked, Ordering::Relaxed);
                if e.fatal {
                    break;
                }
            }
            Err(why) => {
                executor.cancel().await;
                let msg = format!("still in flight {} s after {why}: cancelled", GRACE.as_secs());
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
