//! `-l`: a query run's workers measured as [`measure`](super::measure::measure)
//! does, their recorders wrapped in [`Logged`] so that each measured
//! transaction is also kept for pgbench's transaction log. A separate
//! spawn, so a run without `-l` keeps the plain recorders and pays nothing.

use std::cell::RefCell;
use std::rc::Rc;

use tokio_util::sync::CancellationToken;

use super::cores;
use super::measure::{Counted, Measurement};
use super::worker;
use crate::config::Load;
use crate::model::{rng_for, Purpose};
use crate::op::{Executor, Source};
use crate::outcome::Figures;
use crate::stats::txlog::{ClientLog, Entry, LogConfig, Logged};
use crate::stats::Recorder;

/// [`measure`](super::measure::measure) with `log`: worker `w`'s logged
/// transactions are appended to `threads[w % threads.len()]`, its thread's
/// log (a worker that panicked leaves none).
pub async fn measure<S, E>(
    load: &Load,
    labels: usize,
    cancel: CancellationToken,
    counted: Counted,
    pairs: Vec<(S, E)>,
    log: &LogConfig,
    threads: &mut [Vec<Entry>],
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
        cores::spawn(w, move || async move {
            let log = Rc::new(RefCell::new(ClientLog::new(client, plan.t0, sampling)));
            let recorders = (0..plan.labels).map(|l| Logged::new(Recorder::default(), l as u32, log.clone())).collect();
            let (executor, recorders): (E, Vec<Logged<Recorder>>) =
                worker::run_into(plan, source, executor, recorders).await;
            let recorders = recorders.into_iter().map(|r| r.inner).collect();
            let entries = Rc::into_inner(log).map(|l| l.into_inner().into_entries()).unwrap_or_default();
            ((executor, w, entries), recorders)
        })
    });
    let tasks = tasks.collect();
    let (figures, ended) = measurement.of_tasks(tasks).await;
    let executors = ended
        .into_iter()
        .map(|(executor, w, entries)| {
            let n = threads.len();
            threads[w % n].extend(entries);
            executor
        })
        .collect();
    (figures, executors)
}
