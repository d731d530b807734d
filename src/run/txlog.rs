//! `-l`: a query run's workers measured as [`measure`](super::measure::measure)
//! does, their recorders wrapped in [`Logged`] so that each measured
//! transaction also goes to pgbench's transaction log. A separate
//! spawn, so a run without `-l` keeps the plain recorders and pays nothing.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::cores;
use super::measure::{Counted, Measurement};
use super::worker;
use crate::config::Load;
use crate::model::{rng_for, Purpose};
use crate::op::{Executor, Source};
use crate::outcome::Figures;
use crate::stats::txlog::{ClientLog, LogConfig, Logged, ThreadLog};
use crate::stats::Recorder;

/// [`measure`](super::measure::measure) with `log`: worker `w` logs into
/// `threads[w % threads.len()]`, its thread's log (a worker that panicked
/// loses its last chunk, fewer than [`CHUNK`](crate::stats::txlog::CHUNK) transactions).
pub async fn measure<S, E>(
    load: &Load,
    labels: usize,
    cancel: CancellationToken,
    counted: Counted,
    pairs: Vec<(S, E)>,
    log: &LogConfig,
    threads: &[Arc<ThreadLog>],
) -> (Figures, Vec<E>)
where
    S: Source + Send + 'static,
    S::Op: Send,
    E: Executor<S::Op> + Send + 'static,
{
    let measurement = Measurement::start(load, labels, cancel, counted);
    let started = measurement.plan().clone();
    let tasks = pairs.into_iter().enumerate().map(|(w, (source, executor))| {
        let plan = started.clone();
        let client = load.first_worker + w as u32;
        let sampling = log.sampling_rate.map(|rate| (rate, rng_for(load.seed, client, Purpose::Sampling)));
        let thread = threads[w % threads.len()].clone();
        cores::spawn(w, move || async move {
            let log = Rc::new(RefCell::new(ClientLog::new(client, plan.t0, thread, sampling)));
            let recorders = (0..plan.labels).map(|l| Logged::new(Recorder::default(), l as u32, log.clone())).collect();
            let (executor, recorders): (E, Vec<Logged<Recorder>>) =
                worker::run_into(plan, source, executor, recorders).await;
            let recorders = recorders.into_iter().map(|r| r.inner).collect();
            if let Some(log) = Rc::into_inner(log) {
                log.into_inner().finish();
            }
            (executor, recorders)
        })
    });
    let tasks = tasks.collect();
    measurement.of_tasks(tasks).await
}
