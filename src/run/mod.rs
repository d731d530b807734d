//! One ingest run: prepare the table, start one producer thread and one
//! sender task per worker, let them run until a stop condition, merge their
//! recorders, verify. Every command that writes rows goes through here.

pub mod http;
pub mod mixed;
pub mod pacer;
pub mod producer;
pub mod progress;
pub mod queries;
pub mod worker;

use std::time::Duration;

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use crate::config::{IngestConfig, TableAction, TargetChoice};
use crate::dialect::postgres as sql;
use crate::encode::Payload;
use crate::error::usage;
use crate::stats::cost::{ClientCost, CostMeter};
use crate::stats::Recorder;
use crate::target::sink::{PgSink, Sink, SinkSpec};
use crate::target::PgTarget;

/// What a run found out about its target before it started.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// `postgres`, or none on a dry run.
    pub engine: Option<&'static str>,
    pub server_version: Option<String>,
    /// The server settings that matter for ingest, as the server reports them.
    pub server_settings: Vec<(String, String)>,
    /// The statements that created the table (empty if it was reused).
    pub ddl: Vec<String>,
}

/// `verify`: rows the table gained (`found`) against rows the database
/// acknowledged (`expected`); equal, or with upserts, no more than them.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Verify {
    pub expected: u64,
    pub found: u64,
    pub ok: bool,
}

pub struct IngestOutcome {
    pub setup: Setup,
    pub recorder: Recorder,
    /// From the common start of the workers to the end of the last batch.
    pub wall: Duration,
    pub interrupted: bool,
    pub verify: Option<Verify>,
    pub cost: ClientCost,
}

/// Runs an ingest against `target` (None: dry run). `started` is told when
/// the table is ready and the workers start (a mixed run starts its queries then).
pub async fn ingest(
    cfg: &IngestConfig,
    target: Option<&PgTarget>,
    cancel: CancellationToken,
    started: Option<tokio::sync::oneshot::Sender<()>>,
) -> Result<IngestOutcome> {
    let spec = SinkSpec {
        table: cfg.table.clone(),
        schema: cfg.schema.clone(),
        method: cfg.method,
        upsert: cfg.upsert,
        insert_rows: cfg.insert_rows,
    };
    let mut setup = Setup::default();
    let mut rows_before = 0;
    let admin = match target {
        Some(t) => {
            let client = t.connect().await?;
            describe_server(&client, &mut setup).await?;
            setup.ddl = prepare_table(&client, cfg, t).await?;
            if cfg.verify {
                rows_before = count_rows(&client, cfg).await?;
            }
            Some(client)
        }
        None => None,
    };

    let sinks = open_sinks(cfg, target, &spec).await?;

    if let Some(started) = started {
        let _ = started.send(());
    }
    let meter = CostMeter::start();
    let plan = worker::Plan::new(cfg.duration, cfg.rate, cfg.workers, cfg.warmup, 1, cancel.clone());
    let progress = progress::Progress::start(plan.live.clone(), cfg.total_rows(), "rows", cfg.output.quiet);
    let mut pairs = Vec::with_capacity(sinks.len());
    for (w, sink) in sinks.into_iter().enumerate() {
        let mut generator = cfg.model.generator(cfg.seed, w as u32, cfg.start_us, cfg.rows_per_worker[w]);
        let (framing, batch_size) = (sink.framing(), cfg.batch_size);
        let pool = (0..producer::POOL).map(|_| Payload::new(&cfg.schema)).collect();
        let feed = producer::spawn(pool, move |p: &mut Payload| {
            let more = generator.next_batch(&mut p.batch, batch_size);
            if more {
                framing.encode(p);
            }
            more
        })
        .context("starting a producer thread")?;
        pairs.push((feed, sink));
    }
    let (finished, mut recorders) = run_workers(&plan, pairs).await?;
    let recorder = recorders.pop().unwrap_or_default();
    let wall = plan.t0.elapsed();
    let cost = meter.stop();
    progress.finish().await;
    for sink in finished {
        sink.finish()?;
    }

    let verify = match &admin {
        Some(client) if cfg.verify => {
            let after = count_rows(client, cfg).await?;
            let found = after.saturating_sub(rows_before);
            let expected = recorder.warmup.rows + recorder.measured.rows;
            // An upsert that updates is acknowledged without adding a row, so
            // the table may gain fewer rows than were acknowledged; but it
            // must hold at least as many (the keys of one run are distinct).
            let ok = if cfg.upsert { found <= expected && after >= expected } else { found == expected };
            Some(Verify { expected, found, ok })
        }
        _ => None,
    };
    Ok(IngestOutcome { setup, recorder, wall, interrupted: cancel.is_cancelled(), verify, cost })
}

/// Runs one worker per (source, executor) pair under `plan`, all starting
/// together, and merges their recorders label by label.
pub(crate) async fn run_workers<S, E>(plan: &worker::Plan, pairs: Vec<(S, E)>) -> Result<(Vec<E>, Vec<Recorder>)>
where
    S: worker::Source + Send + 'static,
    S::Op: Send,
    E: worker::Executor<S::Op> + Send + 'static,
{
    let tasks: Vec<_> =
        pairs.into_iter().map(|(source, executor)| tokio::spawn(worker::run(plan.clone(), source, executor))).collect();
    let mut merged = vec![Recorder::default(); plan.labels];
    let mut executors = Vec::with_capacity(tasks.len());
    for task in tasks {
        let (executor, recorders) = task.await.context("a worker panicked")?;
        for (m, r) in merged.iter_mut().zip(&recorders) {
            m.merge(r);
        }
        executors.push(executor);
    }
    Ok((executors, merged))
}

async fn open_sinks(cfg: &IngestConfig, target: Option<&PgTarget>, spec: &SinkSpec) -> Result<Vec<Sink>> {
    let workers = cfg.workers as usize;
    match (target, &cfg.target) {
        (Some(t), _) => {
            let opening = (0..workers).map(|_| PgSink::open(t, spec));
            let sinks =
                futures_util::future::try_join_all(opening).await.context("preparing the workers' connections")?;
            Ok(sinks.into_iter().map(Sink::Postgres).collect())
        }
        (None, TargetChoice::DryRun { copy_file: Some(f) }) => {
            (0..workers).map(|w| Sink::copy_file(f.replace("{worker}", &w.to_string()))).collect()
        }
        (None, _) => Ok((0..workers).map(|_| Sink::dry_run(spec)).collect()),
    }
}

pub(crate) async fn describe_server(client: &tokio_postgres::Client, setup: &mut Setup) -> Result<()> {
    setup.engine = Some("postgres");
    let version = client.query_one("SHOW server_version", &[]).await.context("reading server_version")?;
    setup.server_version = Some(version.get(0));
    let rows = client
        .query(
            "SELECT name, setting || coalesce(unit, '') FROM pg_settings WHERE name = ANY($1) ORDER BY name",
            &[&sql::REPORTED_SETTINGS],
        )
        .await
        .context("reading server settings")?;
    setup.server_settings = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    Ok(())
}

/// Creates, recreates or reuses the table as `--drop-table`/`--append` say;
/// returns the DDL that ran. An existing table is never dropped unasked.
async fn prepare_table(client: &tokio_postgres::Client, cfg: &IngestConfig, target: &PgTarget) -> Result<Vec<String>> {
    let name = cfg.table.sql();
    let exists: bool = client
        .query_one("SELECT to_regclass($1) IS NOT NULL", &[&name])
        .await
        .with_context(|| format!("checking whether table {} exists", cfg.table))?
        .get(0);
    match (exists, cfg.table_action) {
        (true, TableAction::Create) => {
            return Err(usage(format!(
                "table {} already exists on {}: pass --drop-table to drop and recreate it, --append to add rows to it, or --table to choose another",
                cfg.table,
                target.redacted()
            )))
        }
        (true, TableAction::Append) => {
            check_columns(client, cfg).await?;
            return Ok(Vec::new());
        }
        (true, TableAction::Recreate) => {
            client.batch_execute(&sql::drop_table(&cfg.table)).await.with_context(|| format!("dropping {}", cfg.table))?;
        }
        (false, _) => {}
    }
    let ddl = sql::create_table(&cfg.table, &cfg.schema);
    for stmt in &ddl {
        client.batch_execute(stmt).await.with_context(|| format!("creating table {}: {stmt}", cfg.table))?;
    }
    Ok(ddl)
}

/// An `--append` table must have the model's columns.
async fn check_columns(client: &tokio_postgres::Client, cfg: &IngestConfig) -> Result<()> {
    let rows = client
        .query(
            "SELECT attname::text FROM pg_attribute WHERE attrelid = $1::text::regclass AND attnum > 0 AND NOT attisdropped",
            &[&cfg.table.sql()],
        )
        .await
        .context("reading the table's columns")?;
    let have: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    let missing: Vec<&str> =
        cfg.schema.columns.iter().map(|c| c.name.as_str()).filter(|c| !have.iter().any(|h| h == c)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(usage(format!(
        "--append: table {} has no column {} that the {} model writes; use --drop-table or another --table",
        cfg.table,
        missing.join(", "),
        cfg.model.name()
    )))
}

async fn count_rows(client: &tokio_postgres::Client, cfg: &IngestConfig) -> Result<u64> {
    let n: i64 = client
        .query_one(&format!("SELECT count(*) FROM {}", cfg.table.sql()), &[])
        .await
        .with_context(|| format!("counting the rows of {}", cfg.table))?
        .get(0);
    Ok(n as u64)
}
