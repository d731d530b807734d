//! A query run (`timeit`, `workload`): capture plans if asked, then run the
//! mix with one connection per worker through the same worker loop as
//! ingest, one phase per statement group, each recorded per query.

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use super::measure::{measure, Counted};
use super::{cores, interrupt, merge_histograms, setup};
use crate::config::query::{Scale, Vacuum};
use crate::config::QueryConfig;
use crate::dialect::{pgbench, tsbs, Dialect, Engine, TableOptions};
use crate::driver::query::QueryRunner;
use crate::driver::Admin;
use crate::error::usage;
use crate::model::{rng_for, Purpose};
use crate::outcome::{Figures, PhaseOutcome, QueryOutcome};
use crate::stats::cost::CostMeter;
use crate::stats::query::{Connects, Retries, StatementRecord, StatementSummary};
use crate::stats::txlog::TxLog;
use crate::stats::{PhaseSummary, Recorder};
use crate::target::Target;
use crate::workload::script::Tries;
use crate::workload::tsbs::{CpuData, CpuSuite};
use crate::workload::Chooser;

/// pgbench's vacuum before a run of scripts, in its words on stderr: a
/// step that fails (a database without its tables) is said and ignored, as
/// pgbench does, and the run goes on.
async fn vacuum(admin: &mut Admin, vacuum: Vacuum) {
    let accounts = [pgbench::VACUUM_ACCOUNTS];
    let blocks: &[(&str, &[&str])] = match vacuum {
        Vacuum::Skip => return,
        Vacuum::Tables => &[("starting vacuum...", &pgbench::VACUUM_BEFORE_RUN)],
        Vacuum::WithAccounts => {
            &[("starting vacuum...", &pgbench::VACUUM_BEFORE_RUN), ("starting vacuum pgbench_accounts...", &accounts)]
        }
    };
    for (starting, statements) in blocks {
        crate::console::text(starting);
        for sql in *statements {
            if let Err(e) = admin.execute(sql).await {
                crate::console::line(format_args!("dbload: error: {}", e.root_cause()));
                crate::console::line(format_args!("dbload: detail: (ignoring this error and continuing anyway)"));
            }
        }
        crate::console::line(format_args!("end."));
    }
}

/// Runs `cfg`'s phases one after another; `gate` (`--instance`) holds the
/// first phase's workers until the instances start together.
pub async fn queries(
    cfg: &QueryConfig,
    target: &Target,
    cancel: CancellationToken,
    mut gate: Option<super::Gate>,
) -> Result<QueryOutcome> {
    let named = target.redacted();
    let (mut admin, info, setup) = interrupt::setting_up(&cancel, &named, setup::connect(target)).await?;
    let preparing = async {
        let (planned, suite_data) = match &cfg.suite {
            Some(suite) => {
                let data = suite_data(&mut admin, suite, info.engine, target).await?;
                (vec![suite.specs(info.engine, &data)?.into()], Some(data))
            }
            None => (cfg.phases.clone(), None),
        };
        // Counted first: on a database without pgbench's tables, its error says to run init.
        let scale = match cfg.scale {
            Scale::Given(n) => n,
            Scale::Counted { given } => {
                let n = admin.pgbench_scale().await?;
                if given.is_some() {
                    // pgbench 15's words, on stderr as its warning.
                    crate::console::line(format_args!(
                        "dbload: warning: scale option ignored, using count from pgbench_branches table ({n})"
                    ));
                }
                n
            }
        };
        for queries in &planned {
            admin.check_queries(queries, cfg.protocol).await?;
        }
        // After the checks: a script refused leaves the tables as they were.
        vacuum(&mut admin, cfg.vacuum).await;
        let statements_before = super::server_cost::statements(&mut admin, info.engine).await;
        Ok((planned, suite_data, scale, statements_before))
    };
    let (planned, suite_data, scale, statements_before) = interrupt::setting_up(&cancel, &named, preparing).await?;
    // The cost reported spans every phase and what runs between them.
    let meter = CostMeter::start();
    let mut phases = Vec::with_capacity(planned.len());
    let mut total = Figures { recorders: vec![Recorder::default()], ..Figures::default() };
    let mut server_duration = None;
    let mut connecting = std::time::Duration::ZERO;
    let mut retries = Retries::default();
    let mut connects = Connects::default();
    // `-l`: a log per thread, shared by the phases, complete once they ended.
    let log = match &cfg.log {
        Some(log) => {
            let (started, here) = (std::time::SystemTime::now(), std::path::Path::new("."));
            let (threads, clients) = (cores::threads().min(cfg.concurrency as usize), cfg.concurrency as usize);
            let made = TxLog::create(log, here, threads, clients, started);
            Some((log.sampling_rate, made.context("creating the transaction log (-l) in the current directory")?))
        }
        None => None,
    };
    for queries in &planned {
        if cancel.is_cancelled() || total.stopped.is_some() {
            break;
        }
        let explains = match cfg.explain {
            Some(mode) => {
                // Parameters from a stream of their own, so plans do not shift the measured mix.
                let mut rng = rng_for(cfg.load.seed, u32::MAX, Purpose::Choice);
                let now_us = chrono::Utc::now().timestamp_micros();
                let mut out = Vec::with_capacity(queries.len());
                for q in queries.iter() {
                    let params = q.draw(&mut rng, now_us);
                    out.push(admin.explain(q, &params, mode).await);
                }
                out
            }
            None => Vec::new(),
        };
        let (protocol, connect_each, window) = (cfg.protocol, cfg.connect_each, cfg.pipeline);
        let tries = Tries { max: cfg.max_tries, latency_limit: cfg.latency_limit, ends: None };
        let each = (0..cfg.concurrency).map(|_| (target.clone(), queries.clone()));
        let opening = cores::open_each(each, move |(t, q), w| async move {
            t.query_runner(w, q, protocol, tries, connect_each, window).await
        });
        let opening_at = std::time::Instant::now();
        let opened = interrupt::setting_up(&cancel, &named, opening).await;
        connecting += opening_at.elapsed();
        let executors = match opened.context("opening the workers' connections") {
            Ok(executors) => executors,
            // The statements done are kept and reported: the run stops here.
            Err(e) if !phases.is_empty() && !cancel.is_cancelled() => {
                total.stopped = Some(format!("{e:#}: the statements after it were not run"));
                break;
            }
            Err(e) => return Err(e),
        };
        // The server is sampled in a run of one phase (a mix, or one
        // statement), whose timeline is the run's.
        let sampler = match planned.len() {
            1 => super::sampler::Sampler::open(target, info.engine, None, cfg.output.sample_every).await,
            _ => Err("several statements run one after another: the server is sampled in a run of one only".into()),
        };
        if let Some(gate) = gate.take() {
            gate.pass().await;
        }
        let pairs = executors
            .into_iter()
            .enumerate()
            .map(|(w, executor)| {
                let rng = rng_for(cfg.load.seed, cfg.load.first_worker + w as u32, Purpose::Choice);
                (
                    Chooser::new(
                        queries.clone(),
                        rng,
                        cfg.per_worker[w],
                        cfg.load.first_worker as usize + w,
                        scale,
                        cfg.load.seed,
                    )
                    .timing_sets(cfg.per_statement),
                    executor,
                )
            })
            .collect();
        let how = super::measure::count(cfg.concurrency, "connection");
        let header = super::measure::header(&named, Some(&setup), &how, &cfg.load);
        let counted =
            Counted::units(cfg.max_queries, "queries", cfg.output.progress).header(header).sampled_by(sampler);
        let (figures, executors) = match &log {
            Some((sampling, log)) => {
                super::txlog::measure(&cfg.load, queries.len(), cancel.clone(), counted, pairs, *sampling, log).await
            }
            None => measure(&cfg.load, queries.len(), cancel.clone(), counted, pairs).await,
        };
        let durations = executors.iter().filter_map(QueryRunner::server_duration);
        server_duration = merge_histograms(server_duration.iter().chain(durations));
        let statements = statement_summaries(&executors);
        executors.iter().for_each(|e| retries.merge(e.retries()));
        executors.iter().for_each(|e| connects.merge(e.connects()));
        let summary = PhaseSummary::of(&figures.recorders, &mut total.recorders[0]);
        total.wall += figures.wall;
        total.dropped = [total.dropped, figures.dropped].into_iter().flatten().reduce(|a, b| a + b);
        total.stopped = figures.stopped;
        total.server = figures.server;
        total.client_load = figures.client_load;
        phases.push(PhaseOutcome { queries: queries.clone(), summary, explains, statements });
    }
    total.interrupted = cancel.is_cancelled();
    total.cost = meter.read();
    if let Some((_, log)) = log {
        log.finish().context("writing the transaction log (-l)")?;
    }
    let scripts = cfg.phases.iter().flat_map(|p| p.iter()).any(|q| q.script.is_some());
    let statements = match statements_before {
        Ok(before) => {
            match interrupt::after_run(&cancel, super::server_cost::statements(&mut admin, info.engine)).await {
                Some(after) => after.map(|after| {
                    let sent = phases.iter().flat_map(|p| p.queries.iter().map(|q| q.query.as_str()));
                    super::server_cost::deltas(&before, &after, sent)
                }),
                None => {
                    interrupt::cancel_on_server(&admin).await;
                    Err(format!("not read: {}", interrupt::CUT_SHORT))
                }
            }
        }
        Err(why) => Err(why),
    };
    let scale = scripts.then_some(scale);
    // The threads the workers ran on: no more than the workers (pgbench caps -j at -c too).
    let threads = cores::threads().min(cfg.concurrency as usize);
    Ok(QueryOutcome {
        setup,
        phases,
        figures: total,
        server_duration,
        scale,
        suite_data,
        statements,
        threads,
        connecting,
        retries,
        connects,
    })
}

/// Per query, its script's statements with every worker's records merged.
fn statement_summaries(executors: &[QueryRunner]) -> Vec<Vec<StatementSummary>> {
    let mut merged: Vec<Vec<StatementRecord>> = Vec::new();
    for records in executors.iter().map(QueryRunner::statement_records) {
        merged.resize_with(records.len(), Vec::new);
        for (into, from) in merged.iter_mut().zip(records) {
            into.resize_with(from.len(), StatementRecord::default);
            into.iter_mut().zip(from).for_each(|(a, b)| a.merge(b));
        }
    }
    merged.iter().map(|q| q.iter().map(StatementSummary::of).collect()).collect()
}

/// The hosts and the time range the suite's table holds now, which its
/// parameters are drawn from (read once, before the run).
async fn suite_data(admin: &mut Admin, suite: &CpuSuite, engine: Engine, target: &Target) -> Result<CpuData> {
    let table = &suite.table;
    let dialect = Dialect { engine, options: TableOptions::default() };
    let reading = || format!("reading the hosts and time range of {table} for --suite tsbs-cpu");
    let have: Vec<String> = admin
        .rows(&dialect.columns(table))
        .await
        .with_context(reading)?
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .collect();
    if have.is_empty() {
        return Err(usage(format!(
            "--suite tsbs-cpu: table {table} does not exist on {}: make it first with \
             `dbload ingest --model cpu --table {table}`, or name it with --table",
            target.redacted()
        )));
    }
    // A table of another model would fail every query: refused here, saying why.
    let missing: Vec<&str> = tsbs::columns().filter(|c| !have.iter().any(|h| h == c)).collect();
    if !missing.is_empty() {
        return Err(usage(format!(
            "--suite tsbs-cpu: table {table} has no column {}: the suite queries the table that \
             `dbload ingest --model cpu` writes; make one with it, or name it with --table",
            missing.join(", ")
        )));
    }
    if let Some(refresh) = dialect.refresh(table) {
        admin.execute(&refresh).await.with_context(reading)?;
    }
    let hosts: Vec<String> = admin
        .rows(&tsbs::hosts(engine, table))
        .await
        .with_context(reading)?
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .collect();
    let range = admin.rows(&tsbs::time_range(engine, table)).await.with_context(reading)?;
    let micros = |i: usize| range.first().and_then(|r| r.get(i).cloned().flatten()).and_then(|v| v.parse::<i64>().ok());
    let (Some(first_us), Some(last_us)) = (micros(0), micros(1)) else {
        return Err(usage(format!(
            "--suite tsbs-cpu: table {table} has no rows: fill it first with `dbload ingest --model cpu --table {table}`"
        )));
    };
    Ok(CpuData { hosts, first_us, last_us })
}
