//! One `dbload k6 run`: the VU that runs `setup()` and `teardown()`, then
//! one VU per `--vus`, each a JavaScript coroutine (`k6::vu`) driven
//! through the shared worker loop by its executor on a worker thread
//! (`run::cores`), whose requests run there as `dbload http`'s do.
//! Measured like every command, by `run::measure`.
//!
//! A VU lives in one task on one worker thread from its init code to its
//! end (its coroutine and runtime may not move between threads): the task
//! loads the script, says so, waits for the plan (the clock starts once
//! every VU has loaded, as in k6), runs the worker loop, and drops the VU.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::measure::{Counted, Measurement};
use super::worker::Plan;
use super::{cores, interrupt, worker};
use crate::config::k6::K6Config;
use crate::driver::http::client::Client;
use crate::error::usage;
use crate::k6::thresholds::Threshold;
use crate::k6::vu::{Call, CallError, Loaded, Vu, VuSpec};
use crate::k6::{Iterations, VuExecutor};
use crate::outcome::K6Outcome;
use crate::stats::buffered::{lock, Buffered};
use crate::stats::http::HttpStats;
use crate::stats::k6::Metrics;
use crate::stats::Recorder;

/// Runs `cfg` until its iterations are done, its duration is over, or Ctrl-C.
pub async fn k6(cfg: &K6Config, cancel: CancellationToken, gate: Option<super::Gate>) -> Result<K6Outcome> {
    let metrics = Arc::new(Mutex::new(Metrics::new(&cfg.submetrics())));
    let spec = |id: u32, data: Option<String>| VuSpec {
        id,
        script: cfg.script.clone(),
        env: cfg.env.clone(),
        stop: cancel.clone(),
        metrics: metrics.clone(),
        data,
        text_summary: None,
        shared: cfg.shared.clone(),
    };
    let name = &cfg.script.name;
    let setup_stats = Arc::new(Mutex::new(HttpStats::new(0)));
    let lifecycle_client = Client::new(setup_stats.clone(), cfg.insecure);
    let (lifecycle, loaded) = Lifecycle::start(spec(0, None), lifecycle_client, &cancel, name).await?;
    let data = if loaded.setup {
        match interrupt::setting_up(&cancel, name, async { Ok(lifecycle.call(Call::Setup).await) }).await? {
            Ok(data) => data,
            Err(CallError::Thrown(e)) => return Err(usage(format!("setup() threw: {e}"))),
            Err(CallError::Gone) => return Err(anyhow::anyhow!("the VU running setup() ended")),
        }
    } else {
        None
    };

    // VUs record into figures shared by the VUs of a worker thread, as
    // `dbload http`'s do (histograms of their own would weigh ~0.4 MiB each).
    let shards = cores::threads().min(cfg.vus as usize).max(1);
    let shared: Vec<_> = (0..shards)
        .map(|_| (Arc::new(Mutex::new(Recorder::default())), Arc::new(Mutex::new(HttpStats::new(0)))))
        .collect();
    let mut tasks = Vec::with_capacity(cfg.vus as usize);
    let mut waits = Vec::with_capacity(cfg.vus as usize);
    let mut plans = Vec::with_capacity(cfg.vus as usize);
    let sources = Iterations::handed(&cfg.handout, cfg.vus);
    for (vu, source) in sources.into_iter().enumerate() {
        let (loaded_tx, loaded_rx) = oneshot::channel();
        let (plan_tx, plan_rx) = oneshot::channel();
        let spec = spec(vu as u32 + 1, data.clone());
        let (recorder, stats) = shared[vu % shards].clone();
        let insecure = cfg.insecure;
        tasks.push(cores::spawn(vu, move || async move {
            let (js, _) = match Vu::start(spec).await {
                Ok(started) => started,
                Err(e) => {
                    let _ = loaded_tx.send(Err(e));
                    return ((), Vec::new());
                }
            };
            let _ = loaded_tx.send(Ok(()));
            // No plan: the run ended before the clock started.
            let Ok(plan) = plan_rx.await else { return ((), Vec::new()) };
            let executor = VuExecutor::new(js, Client::new(stats, insecure));
            // The worker's own recorder moves what it holds into the
            // shared one when it is dropped, here; the VU ends here too.
            let _ = worker::run_into(plan, source, executor, vec![Buffered::new(recorder)]).await;
            ((), Vec::<Recorder>::new())
        }));
        waits.push(loaded_rx);
        plans.push(plan_tx);
    }
    // Every VU's init code has run before the clock starts, as in k6.
    interrupt::setting_up(&cancel, name, async {
        for w in waits {
            w.await.map_err(|_| anyhow::anyhow!("a VU ended while loading {name}"))??;
        }
        Ok(())
    })
    .await?;
    {
        let mut m = lock(&metrics);
        m.set_gauge("vus", f64::from(cfg.vus));
        m.set_gauge("vus_max", f64::from(cfg.vus));
    }
    if let Some(gate) = gate {
        gate.pass().await;
    }

    let counted = Counted::units(cfg.iterations, "iterations", cfg.output.progress);
    let measurement = Measurement::start(&cfg.load, 1, cancel.clone(), counted);
    for plan in plans {
        let _ = plan.send(measurement.plan().clone());
    }
    let aborting: Vec<Threshold> = cfg.thresholds.iter().filter(|t| t.abort_on_fail).cloned().collect();
    let watcher = (!aborting.is_empty())
        .then(|| tokio::spawn(abort_on_fail(aborting, metrics.clone(), measurement.plan().clone())));
    let (mut figures, _) = measurement.of_tasks(tasks).await;
    if let Some(w) = watcher {
        w.abort();
    }
    let mut stats = HttpStats::new(0);
    for (r, s) in &shared {
        figures.recorders[0].merge(&lock(r));
        stats.merge(lock(s).clone());
    }

    if loaded.teardown && !cancel.is_cancelled() {
        match lifecycle.call(Call::Teardown).await {
            Ok(_) => {}
            Err(CallError::Thrown(e)) => crate::console::line(format_args!("teardown() threw: {e}")),
            Err(CallError::Gone) => crate::console::line(format_args!("the VU running teardown() ended")),
        }
    }
    lifecycle.end().await;
    stats.merge(lock(&setup_stats).clone());
    let mut metrics = lock(&metrics).clone();
    // k6's data_sent and data_received: the bytes the HTTP client counted.
    for (name, bytes) in [("data_sent", stats.bytes_sent), ("data_received", stats.bytes_received)] {
        metrics.add(name, bytes as f64, &[]).expect("a built-in metric");
    }
    Ok(K6Outcome { figures, stats, metrics, threads: cores::threads() })
}

/// How often `abortOnFail` thresholds are judged while the run goes (k6: every 2 s).
const ABORT_EVERY: Duration = Duration::from_secs(1);

/// k6's `abortOnFail`: `thresholds` judged every [`ABORT_EVERY`] on the
/// metrics so far, each once its metric has a sample; the first that fails
/// stops the run, saying which (the report judges every threshold at the
/// end: that one fails, exit 99, as k6's).
async fn abort_on_fail(thresholds: Vec<Threshold>, metrics: Arc<Mutex<Metrics>>, plan: Plan) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(ABORT_EVERY) => {}
            _ = plan.cancel.cancelled() => return,
        }
        let m = lock(&metrics);
        let elapsed = plan.t0.elapsed().as_secs_f64();
        let failed =
            thresholds.iter().filter(|t| t.series(&m).is_some_and(|s| s.count > 0)).map(|t| t.judge(&m, elapsed));
        if let Some(j) = failed.into_iter().find(|j| !j.ok) {
            plan.stop.stop(format!(
                "threshold {} {:?} failed with abortOnFail (its value: {})",
                j.metric, j.threshold, j.value
            ));
            return;
        }
    }
}
/// A call to the lifecycle VU and where its result goes.
type Asked = (Call, oneshot::Sender<Result<Option<String>, CallError>>);

/// The VU of `setup()` and `teardown()`, in a task of its own on worker
/// thread 0 for its whole life: it runs the calls sent to it, one by one,
/// with its own HTTP client.
struct Lifecycle {
    calls: mpsc::UnboundedSender<Asked>,
    task: tokio::task::JoinHandle<()>,
}

impl Lifecycle {
    /// Starts the VU and waits for its init code (Ctrl-C ends the wait).
    async fn start(
        spec: VuSpec,
        mut client: Client,
        cancel: &CancellationToken,
        name: &str,
    ) -> Result<(Lifecycle, Loaded)> {
        let (calls, mut asked) = mpsc::unbounded_channel::<Asked>();
        let (loaded_tx, loaded_rx) = oneshot::channel();
        let task = cores::spawn(0, move || async move {
            let mut vu = match Vu::start(spec).await {
                Ok((vu, loaded)) => {
                    let _ = loaded_tx.send(Ok(loaded));
                    vu
                }
                Err(e) => {
                    let _ = loaded_tx.send(Err(e));
                    return;
                }
            };
            while let Some((call, answer)) = asked.recv().await {
                let _ = answer.send(vu.call(call, &mut client, true).await);
            }
        });
        let loaded = interrupt::setting_up(cancel, name, async {
            loaded_rx.await.map_err(|_| anyhow::anyhow!("the VU loading {name} ended without a word"))?
        })
        .await?;
        Ok((Lifecycle { calls, task }, loaded))
    }

    async fn call(&self, call: Call) -> Result<Option<String>, CallError> {
        let (answer, answered) = oneshot::channel();
        self.calls.send((call, answer)).map_err(|_| CallError::Gone)?;
        answered.await.map_err(|_| CallError::Gone)?
    }

    /// Ends the VU and waits until it has: its HTTP client's figures are then all in.
    async fn end(self) {
        drop(self.calls);
        let _ = self.task.await;
    }
}
