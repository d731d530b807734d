//! The results store in a database (`--results-url`): one row per run in
//! `dbload_runs`, its per-second series in `dbload_timeline` and the
//! server's in `dbload_server_timeline`, reached with
//! dbload's own PostgreSQL connection (libpq's rules, `.pgpass`, TLS). The
//! SQL is in `dialect/results.rs`; every value is bound.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::Value as Json;
use tokio_postgres::Client;

use super::schema::{ensure_tables, Registered};
use super::{Filter, Headline, Run};
use crate::dialect::results as sql;
use crate::driver::PgTarget;
use crate::error::usage;

/// However slow the results database, a finished run waits no longer for it.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Runs `body` on a connection to `target`, within [`TIMEOUT`].
fn with_client<T>(target: &PgTarget, body: impl AsyncFnOnce(&mut Client) -> Result<T>) -> Result<T> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().context("starting a runtime")?;
    rt.block_on(async {
        let work = async {
            let mut client = target.connect().await?;
            body(&mut client).await
        };
        tokio::time::timeout(TIMEOUT, work).await.unwrap_or_else(|_| bail!("no answer within {}s", TIMEOUT.as_secs()))
    })
}

/// Creates the tables if missing (refusing those of another schema
/// version), then inserts the run and its timeline in one transaction; the
/// run of an instance of a distributed run also ends its registration.
pub fn keep(target: &PgTarget, run: &Run, log: &str) -> Result<()> {
    with_client(target, async |client| {
        let tx = client.transaction().await?;
        ensure_tables(&tx).await?;
        insert_run(&tx, run, log).await?;
        insert_timeline(&tx, run).await?;
        insert_server_timeline(&tx, run).await?;
        if let Some(i) = &run.meta.instance {
            let status = run.report.get("status").and_then(Json::as_str).unwrap_or("failed");
            let args: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
                [&i.run_id, &(i.index as i32), &status, &None::<String>, &run.meta.run_id];
            tx.execute(&sql::finish(), &args).await.context("ending the instance's registration")?;
        }
        tx.commit().await.context("committing the run")
    })
}

async fn insert_run(tx: &tokio_postgres::Transaction<'_>, run: &Run<'_>, log: &str) -> Result<()> {
    let (m, r) = (run.meta, run.report);
    let h = Headline::of(r);
    let text = |p: &str| r.pointer(p).and_then(Json::as_str).map(str::to_string);
    let first = |ps: &[&str]| ps.iter().find_map(|p| text(p));
    let setup = r.get("setup").map(Json::to_string);
    let exit_code = r.get("exit_code").and_then(Json::as_i64).unwrap_or(-1) as i32;
    let report = r.to_string();
    tx.execute(
        &sql::insert_run(),
        &[
            &m.run_id,
            &m.started_at,
            &m.ended_at,
            &text("/command"),
            &m.command_line,
            &m.dbload_version,
            &m.git_commit,
            &m.client.host_name,
            &first(&["/setup/target", "/setup/target/target", "/setup/source/target", "/ingest/setup/target"]),
            &first(&["/setup/engine", "/setup/target/engine", "/setup/source/engine", "/ingest/setup/engine"]),
            &first(&[
                "/setup/server_version",
                "/setup/target/server_version",
                "/setup/source/server_version",
                "/ingest/setup/server_version",
            ]),
            &text("/status").unwrap_or_default(),
            &exit_code,
            &h.throughput,
            &h.unit,
            &h.p50_ms,
            &h.p95_ms,
            &h.p99_ms,
            &h.p99_9_ms,
            &h.errors,
            &h.client_cpu_s,
            &setup,
            &report,
            &log,
        ],
    )
    .await
    .context("inserting into dbload_runs")?;
    Ok(())
}

/// Every part's per-second series, as one array per column.
async fn insert_timeline(tx: &tokio_postgres::Transaction<'_>, run: &Run<'_>) -> Result<()> {
    #[derive(Default)]
    struct Columns {
        part: Vec<String>,
        second: Vec<i32>,
        rows: Vec<i64>,
        operations: Vec<i64>,
        errors: Vec<i64>,
        mean: Vec<Option<f64>>,
        max: Vec<Option<f64>>,
        p50: Vec<Option<f64>>,
        p99: Vec<Option<f64>>,
    }
    let mut c = Columns::default();
    for (part, entries) in super::timelines(run.report) {
        for e in entries {
            let int = |k: &str| e.get(k).and_then(Json::as_i64);
            c.part.push(part.clone());
            c.second.push(int("second").unwrap_or(0) as i32);
            c.rows.push(int("rows").unwrap_or(0));
            c.operations.push(int("batches").unwrap_or(0));
            c.errors.push(int("errors").unwrap_or(0));
            let ms = |k: &str| e.get(k).and_then(Json::as_f64);
            c.mean.push(ms("latency_mean_ms"));
            c.max.push(ms("latency_max_ms"));
            c.p50.push(ms("latency_p50_ms"));
            c.p99.push(ms("latency_p99_ms"));
        }
    }
    let m = run.meta;
    tx.execute(
        &sql::insert_timeline(),
        &[
            &m.run_id,
            &m.started_at,
            &c.part,
            &c.second,
            &c.rows,
            &c.operations,
            &c.errors,
            &c.mean,
            &c.max,
            &c.p50,
            &c.p99,
        ],
    )
    .await
    .context("inserting into dbload_timeline")?;
    Ok(())
}

/// Every part's server seconds, as one array per column (wait events and
/// the engine's figures as JSON text, `{}` when it has none).
async fn insert_server_timeline(tx: &tokio_postgres::Transaction<'_>, run: &Run<'_>) -> Result<()> {
    #[derive(Default)]
    struct Columns {
        part: Vec<String>,
        second: Vec<i32>,
        own_waits: Vec<String>,
        other_waits: Vec<String>,
        wal_bytes: Vec<Option<i64>>,
        timed: Vec<i64>,
        requested: Vec<i64>,
        engine: Vec<String>,
    }
    let mut c = Columns::default();
    for (part, seconds) in super::server_seconds(run.report) {
        for s in seconds {
            let int = |k: &str| s.get(k).and_then(Json::as_i64);
            let waits = |k: &str| s.get(k).map_or_else(|| "{}".to_string(), Json::to_string);
            c.part.push(part.clone());
            c.second.push(int("second").unwrap_or(0) as i32);
            c.own_waits.push(waits("own_waits"));
            c.other_waits.push(waits("other_waits"));
            c.wal_bytes.push(int("wal_bytes"));
            c.timed.push(int("checkpoints_timed").unwrap_or(0));
            c.requested.push(int("checkpoints_requested").unwrap_or(0));
            c.engine.push(waits("engine"));
        }
    }
    if c.part.is_empty() {
        return Ok(());
    }
    let m = run.meta;
    let args: [&(dyn tokio_postgres::types::ToSql + Sync); 10] = [
        &m.run_id,
        &m.started_at,
        &c.part,
        &c.second,
        &c.own_waits,
        &c.other_waits,
        &c.wal_bytes,
        &c.timed,
        &c.requested,
        &c.engine,
    ];
    tx.execute(&sql::insert_server_timeline(), &args).await.context("inserting into dbload_server_timeline")?;
    Ok(())
}

/// The newest `limit` runs of the database that `filter` lets through
/// (the filter in the query, so that the limit counts the runs shown):
/// their ids and reports.
pub fn list(target: &PgTarget, filter: &Filter, limit: usize) -> Result<Vec<(String, Json)>> {
    let tags = serde_json::to_string(&filter.tags)?;
    let since = filter.since.map(|s| s.to_rfc3339());
    with_client(target, async |client| {
        let args: [&(dyn tokio_postgres::types::ToSql + Sync); 4] = [&(limit as i64), &filter.command, &since, &tags];
        let rows = client.query(&sql::list(), &args).await.map_err(|e| missing(e, target))?;
        rows.iter()
            .map(|r| {
                let (run_id, report): (String, String) = (r.get(0), r.get(1));
                let report = serde_json::from_str(&report).with_context(|| format!("the stored report of {run_id}"))?;
                Ok((run_id, report))
            })
            .collect()
    })
}

/// The id, report and histograms of the one run whose id starts with
/// `prefix`; `who` (`results show`, `compare`) heads the error.
pub fn show(target: &PgTarget, prefix: &str, who: &str) -> Result<(String, String, String)> {
    let rows = with_client(target, async |client| {
        let rows = client.query(&sql::show(), &[&prefix]).await.map_err(|e| missing(e, target))?;
        Ok(rows
            .iter()
            .map(|r| (r.get::<_, String>(0), r.get::<_, String>(1), r.get::<_, String>(2)))
            .collect::<Vec<_>>())
    })?;
    match rows.as_slice() {
        [found] => Ok(found.clone()),
        [] => Err(usage(format!("{who} {prefix}: no run with that id in {}", target.redacted()))),
        _ => Err(usage(format!("{who} {prefix}: several runs start so; give more of the id"))),
    }
}

/// The kept runs of the instances of the distributed run `run_id`, and
/// its registration rows (none in a store that has no such table).
pub fn instances(target: &PgTarget, run_id: &str) -> Result<(Vec<super::Kept>, Vec<Registered>)> {
    with_client(target, async |client| {
        let rows = client.query(&sql::kept_instances(), &[&run_id]).await.map_err(|e| missing(e, target))?;
        let mut kept = Vec::with_capacity(rows.len());
        for r in rows {
            let (run_id, report, log): (String, String, String) = (r.get(0), r.get(1), r.get(2));
            let report = serde_json::from_str(&report).with_context(|| format!("the stored report of {run_id}"))?;
            kept.push(super::Kept { run_id, report, log });
        }
        let registered = match client.query(&sql::instances(), &[&run_id]).await {
            Ok(rows) => rows.iter().map(Registered::of).collect(),
            Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => Vec::new(),
            Err(e) => return Err(anyhow::Error::new(e).context("reading dbload_instances")),
        };
        Ok((kept, registered))
    })
}

/// A database without the tables has kept no run: said so, not as SQL.
fn missing(e: tokio_postgres::Error, target: &PgTarget) -> anyhow::Error {
    if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) {
        return usage(format!(
            "--results-url {}: no {} table there: no run was kept in it",
            target.redacted(),
            sql::RUNS
        ));
    }
    anyhow::Error::new(e).context("reading dbload_runs")
}
