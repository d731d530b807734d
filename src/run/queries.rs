//! A query run (`timeit`, `workload`): capture plans if asked, then run the
//! mix with one connection per worker through the same worker loop as
//! ingest, one phase per statement group, each recorded per query.

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use super::{describe_server, measure::measure, merge_histograms, progress::Progress, worker};
use crate::config::QueryConfig;
use crate::driver::pg::query;
use crate::driver::query::QueryRunner;
use crate::driver::Admin;
use crate::model::{rng_for, Purpose};
use crate::outcome::{Figures, PhaseOutcome, QueryOutcome, Setup};
use crate::stats::cost::CostMeter;
use crate::stats::{PhaseSummary, Recorder};
use crate::target::Target;
use crate::workload::Chooser;

/// Runs `cfg`'s phases one after another; `gate` (`--instance`) holds the
/// first phase's workers until the instances start together.
pub async fn queries(
    cfg: &QueryConfig,
    target: &Target,
    cancel: CancellationToken,
    mut gate: Option<super::Gate>,
) -> Result<QueryOutcome> {
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
    let mut total = Figures { recorders: vec![Recorder::default()], ..Figures::default() };
    let mut server_duration = None;
    for queries in &cfg.phases {
        if cancel.is_cancelled() || total.stopped.is_some() {
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
        if let Some(gate) = gate.take() {
            gate.pass().await;
        }
        let mut plan = worker::Plan::new(cfg.duration, cfg.rate, cfg.warmup, queries.len(), cancel.clone());
        plan.reconnect = cfg.reconnect;
        let progress = Progress::start(plan.live.clone(), cfg.max_queries, "queries", cfg.output.quiet);
        let pairs = executors
            .into_iter()
            .enumerate()
            .map(|(w, executor)| {
                let rng = rng_for(cfg.seed, cfg.first_worker + w as u32, Purpose::Choice);
                (Chooser::new(queries.clone(), rng, cfg.per_worker[w]), executor)
            })
            .collect();
        let (figures, executors) = measure(&plan, &meter, progress, cfg.max_queries, pairs).await;
        let durations = executors.iter().filter_map(QueryRunner::server_duration);
        server_duration = merge_histograms(server_duration.iter().chain(durations));
        let summary = PhaseSummary::of(&figures.recorders, &mut total.recorders[0]);
        total.wall += figures.wall;
        total.dropped = [total.dropped, figures.dropped].into_iter().flatten().reduce(|a, b| a + b);
        total.stopped = figures.stopped;
        phases.push(PhaseOutcome { queries: queries.clone(), summary, explains });
    }
    total.interrupted = cancel.is_cancelled();
    total.cost = meter.read();
    Ok(QueryOutcome { setup, phases, figures: total, server_duration })
}
