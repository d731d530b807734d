//! A query run (`timeit`, `workload`): capture plans if asked, then run the
//! mix with one connection per worker through the same worker loop as
//! ingest, one phase per statement group, each recorded per query.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use tokio_util::sync::CancellationToken;

use super::{describe_server, merge_histograms, progress::Progress, run_workers, worker, Setup};
use crate::config::QueryConfig;
use crate::driver::pg::query;
use crate::driver::query::QueryRunner;
use crate::driver::Admin;
use crate::model::{rng_for, Purpose};
use crate::stats::cost::{ClientCost, CostMeter};
use crate::stats::{PhaseSummary, Recorder};
use crate::target::Target;
use crate::workload::explain::Explain;
use crate::workload::{Chooser, QuerySpec};

/// One group of queries measured together (a timeit statement, or the mix).
pub struct PhaseOutcome {
    pub queries: Arc<[QuerySpec]>,
    /// One per query, merged across workers. The recorders it was made of
    /// went into [`QueryOutcome::total`]: a phase keeps no histogram.
    pub summary: PhaseSummary,
    /// `--explain`: the plan of each query, or why there is none.
    pub explains: Vec<Result<Explain, String>>,
    pub wall: Duration,
    /// Open loop: queries the schedule called for that never started.
    pub dropped: Option<u64>,
}

pub struct QueryOutcome {
    pub setup: Setup,
    pub phases: Vec<PhaseOutcome>,
    /// Every phase's recorders merged: the run's totals, timeline and errors.
    pub total: Recorder,
    /// CrateDB over HTTP: its own duration of each query, merged over workers and phases.
    pub server_duration: Option<Histogram<u64>>,
    pub interrupted: bool,
    /// Why the run stopped on its own before its end (a panic, or operations
    /// that all failed for a sustained stretch), if it did; later phases then did not run.
    pub stopped: Option<String>,
    pub cost: ClientCost,
}

pub async fn queries(cfg: &QueryConfig, target: &Target, cancel: CancellationToken) -> Result<QueryOutcome> {
    let mut admin = target.admin().await?;
    let mut setup = Setup::default();
    describe_server(&mut admin, target, &mut setup).await?;
    if let Admin::Pg(client) = &admin {
        for queries in &cfg.phases {
            query::check(client, queries, cfg.protocol).await?;
        }
    }
    let meter = CostMeter::start();
    let mut phases = Vec::with_capacity(cfg.phases.len());
    let mut total = Recorder::default();
    let mut server_duration = None;
    let mut stopped = None;
    for queries in &cfg.phases {
        if cancel.is_cancelled() || stopped.is_some() {
            break;
        }
        let explains = match cfg.explain {
            Some(mode) => {
                // Parameters from a stream of their own, so plans do not shift the measured mix.
                let mut rng = rng_for(cfg.seed, u32::MAX, Purpose::Choice);
                let now_us = chrono::Utc::now().timestamp_micros();
                let mut out = Vec::with_capacity(queries.len());
                for q in queries.iter() {
                    let params: Vec<_> = q.params.iter().map(|p| p.sample(&mut rng, now_us)).collect();
                    out.push(match &admin {
                        Admin::Pg(client) => query::explain(client, q, &params, mode).await,
                        Admin::Crate(_) => {
                            Err("plans are captured over the PostgreSQL protocol: give CrateDB's postgres:// URL"
                                .into())
                        }
                    });
                }
                out
            }
            None => Vec::new(),
        };
        let opening = (0..cfg.concurrency as usize).map(|w| target.query_runner(w, queries.clone(), cfg.protocol));
        let executors =
            futures_util::future::try_join_all(opening).await.context("opening the workers' connections")?;
        let mut plan = worker::Plan::new(cfg.duration, cfg.rate, cfg.warmup, queries.len(), cancel.clone());
        plan.reconnect = cfg.reconnect;
        let progress = Progress::start(plan.live.clone(), cfg.max_queries, "queries", cfg.output.quiet);
        let pairs = executors
            .into_iter()
            .enumerate()
            .map(|(w, executor)| {
                let rng = rng_for(cfg.seed, w as u32, Purpose::Choice);
                (Chooser::new(queries.clone(), rng, cfg.per_worker[w]), executor)
            })
            .collect();
        let (executors, recorders) = run_workers(&plan, pairs).await;
        let durations = executors.iter().filter_map(QueryRunner::server_duration);
        server_duration = merge_histograms(server_duration.iter().chain(durations));
        let wall = plan.t0.elapsed();
        let dropped = plan.dropped(wall, cfg.max_queries);
        progress.finish().await;
        stopped = plan.stop.reason();
        let summary = PhaseSummary::of(&recorders, &mut total);
        phases.push(PhaseOutcome { queries: queries.clone(), summary, explains, wall, dropped });
    }
    let interrupted = cancel.is_cancelled();
    Ok(QueryOutcome { setup, phases, total, server_duration, interrupted, stopped, cost: meter.stop() })
}
