//! `-l`: a query run's workers measured as [`measure`](super::measure::measure)
//! does, their recorders wrapped in [`Logged`] so that each measured
//! transaction also goes to pgbench's transaction log. A separate
//! spawn, so a run without `-l` keeps the plain recorders and pays nothing.
//! The workers of a thread are started by one task on that thread, which
//! makes the thread's [`Chunk`] they share: pushed into as each
//! transaction ends, it keeps the thread's file in completion order.

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
use crate::stats::txlog::{Chunk, Logged, TxLog};
use crate::stats::Recorder;

/// [`measure`](super::measure::measure) with `log` (made for
/// `min(threads, workers)` threads): worker `w` runs on `cores`' thread
/// `w % threads` and logs into that thread's file (a worker that panicked
/// loses what its thread had not handed to the file yet, fewer than
/// [`CHUNK`](crate::stats::txlog::CHUNK) transactions).
pub async fn measure<S, E>(
    load: &Load,
    labels: usize,
    cancel: CancellationToken,
    counted: Counted,
    pairs: Vec<(S, E)>,
    sampling_rate: Option<f64>,
    log: &TxLog,
) -> (Figures, Vec<E>)
where
    S: Source + Send + 'static,
    S::Op: Send,
    E: Executor<S::Op> + Send + 'static,
{
    let measurement = Measurement::start(load, labels, cancel, counted);
    let (threads, workers) = (cores::threads(), pairs.len());
    let mut on_thread: Vec<Vec<(usize, S, E)>> = (0..threads).map(|_| Vec::new()).collect();
    for (w, (source, executor)) in pairs.into_iter().enumerate() {
        on_thread[w % threads].push((w, source, executor));
    }
    let starting = on_thread.into_iter().enumerate().filter(|(_, group)| !group.is_empty()).map(|(n, group)| {
        let (plan, file, first_worker, seed) =
            (measurement.plan().clone(), log.thread(n), load.first_worker, load.seed);
        let clients: Vec<_> = group
            .into_iter()
            .map(|(w, source, executor)| {
                let client = first_worker + w as u32;
                let sampling = sampling_rate.map(|rate| (rate, rng_for(seed, client, Purpose::Sampling)));
                (w, client, sampling, source, executor)
            })
            .collect();
        let counts = log.counts();
        cores::spawn(n, move || async move {
            let chunk = Chunk::new(file, plan.t0);
            let spawned = clients.into_iter().map(|(w, client, sampling, source, executor)| {
                let (plan, log) =
                    (plan.for_worker(w, workers), counts.client(w, client, plan.t0, chunk.clone(), sampling));
                // On this thread's runtime, beside the task that made the chunk.
                let task = tokio::task::spawn_local(async move {
                    let log = Rc::new(RefCell::new(log));
                    let recorders =
                        (0..plan.labels).map(|l| Logged::new(Recorder::default(), l as u32, log.clone())).collect();
                    let (executor, recorders): (E, Vec<Logged<Recorder>>) =
                        worker::run_into(plan, source, executor, recorders).await;
                    let recorders = recorders.into_iter().map(|r| r.inner).collect();
                    if let Some(log) = Rc::into_inner(log) {
                        log.into_inner().finish();
                    }
                    (executor, recorders)
                });
                (w, task)
            });
            spawned.collect::<Vec<_>>()
        })
    });
    let mut tasks = Vec::new();
    for started in futures_util::future::join_all(starting).await {
        tasks.extend(started.expect("starting a thread's workers only spawns them"));
    }
    tasks.sort_by_key(|(w, _)| *w);
    measurement.of_tasks(tasks.into_iter().map(|(_, task)| task).collect()).await
}
