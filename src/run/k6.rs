//! One `dbload k6 run`: the VU that runs `setup()` and `teardown()`, then
//! one VU per `--vus`, each a JavaScript thread (`k6::vu`) driven through
//! the shared worker loop by its executor, whose requests run on the
//! worker threads (`run::cores`) as `dbload http`'s do. Measured like
//! every command, by `run::measure`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Result;
use tokio_util::sync::CancellationToken;

use super::measure::{spawn_sharing, Counted, Measurement};
use super::{cores, interrupt, worker};
use crate::config::k6::K6Config;
use crate::driver::http::client::Client;
use crate::error::usage;
use crate::k6::vu::{self, Call, CallError, Loaded, VuLink, VuSpec};
use crate::k6::{Iterations, VuExecutor};
use crate::outcome::K6Outcome;
use crate::stats::buffered::{lock, Buffered};
use crate::stats::http::HttpStats;
use crate::stats::k6::Metrics;
use crate::stats::Recorder;

/// Runs `cfg` until its iterations are done, its duration is over, or Ctrl-C.
pub async fn k6(cfg: &K6Config, cancel: CancellationToken, gate: Option<super::Gate>) -> Result<K6Outcome> {
    let stop = Arc::new(AtomicBool::new(false));
    // The VUs' JavaScript is interrupted (and their sleeps end) once the run stops.
    let stopper = {
        let (stop, cancel) = (stop.clone(), cancel.clone());
        tokio::spawn(async move {
            cancel.cancelled().await;
            stop.store(true, Ordering::Relaxed);
        })
    };
    let outcome = run(cfg, &cancel, gate, &stop).await;
    stop.store(true, Ordering::Relaxed);
    stopper.abort();
    outcome
}

async fn run(
    cfg: &K6Config,
    cancel: &CancellationToken,
    gate: Option<super::Gate>,
    stop: &Arc<AtomicBool>,
) -> Result<K6Outcome> {
    let metrics = Arc::new(Mutex::new(Metrics::new(&cfg.submetrics())));
    let spec = |id: u32, data: Option<String>| VuSpec {
        id,
        script: cfg.script.clone(),
        env: cfg.env.clone(),
        stop: stop.clone(),
        metrics: metrics.clone(),
        data,
    };
    let name = &cfg.script.name;
    let setup_stats = Arc::new(Mutex::new(HttpStats::new(0)));
    let (mut lifecycle, loaded) = start(spec(0, None), cancel, name).await?;
    let mut lifecycle_client = Client::new(setup_stats.clone(), cfg.insecure);
    let data = if loaded.setup {
        let setup = lifecycle.call(Call::Setup, &mut lifecycle_client, true);
        match interrupt::setting_up(cancel, name, async { Ok(setup.await) }).await? {
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
    let shard = |vu: usize| &shared[vu % shards];
    let mut links = Vec::with_capacity(cfg.vus as usize);
    let mut waits = Vec::with_capacity(cfg.vus as usize);
    for vu in 0..cfg.vus {
        let (link, loaded) = vu::start(spec(vu + 1, data.clone()))?;
        links.push(link);
        waits.push(loaded);
    }
    // Every VU's init code has run before the clock starts, as in k6.
    interrupt::setting_up(cancel, name, async {
        for w in waits {
            w.await.map_err(|_| anyhow::anyhow!("a VU's thread ended while loading {name}"))??;
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
    let plan = measurement.plan();
    let mut tasks = Vec::with_capacity(links.len());
    for (vu, link) in links.into_iter().enumerate() {
        let executor = VuExecutor::new(link, Client::new(shard(vu).1.clone(), cfg.insecure));
        let recorders = vec![Buffered::new(shard(vu).0.clone())];
        let source = Iterations { left: cfg.per_vu[vu] };
        tasks.push(spawn_sharing(vu, worker::run_into(plan.clone(), source, executor, recorders)));
    }
    let (mut figures, _) = measurement.of_tasks(tasks).await;
    let mut stats = HttpStats::new(0);
    for (r, s) in &shared {
        figures.recorders[0].merge(&lock(r));
        stats.merge(lock(s).clone());
    }

    if loaded.teardown && !cancel.is_cancelled() {
        match lifecycle.call(Call::Teardown, &mut lifecycle_client, true).await {
            Ok(_) => {}
            Err(CallError::Thrown(e)) => crate::console::line(format_args!("teardown() threw: {e}")),
            Err(CallError::Gone) => crate::console::line(format_args!("the VU running teardown() ended")),
        }
    }
    drop(lifecycle_client);
    stats.merge(lock(&setup_stats).clone());
    let mut metrics = lock(&metrics).clone();
    // k6's data_sent and data_received: the bytes the HTTP client counted.
    for (name, bytes) in [("data_sent", stats.bytes_sent), ("data_received", stats.bytes_received)] {
        metrics.add(name, bytes as f64, &[]).expect("a built-in metric");
    }
    Ok(K6Outcome { figures, stats, metrics, threads: cores::threads() })
}

/// Starts the VU of `setup()` and `teardown()` and waits for its init code.
async fn start(spec: VuSpec, cancel: &CancellationToken, name: &str) -> Result<(VuLink, Loaded)> {
    let (link, loaded) = vu::start(spec)?;
    let loaded = interrupt::setting_up(cancel, name, async {
        loaded.await.map_err(|_| anyhow::anyhow!("the VU loading {name} ended without a word"))?
    })
    .await?;
    Ok((link, loaded))
}
