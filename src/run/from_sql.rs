//! An insert-from-sql run: match the query's columns to the table's, start
//! the source's COPY once, and let one producer cut it into batches for all
//! the workers, each sending its batches with its own COPY, through the same
//! worker loop as ingest.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::{Context, Result};
use postgres_types::Type;
use tokio_util::sync::CancellationToken;

use super::{describe_server, producer, progress::Progress, run_workers, worker, Setup};
use crate::config::transfer::CRATEDB_FROM_SQL;
use crate::config::{FromSqlConfig, Warmup};
use crate::dialect::Engine;
use crate::error::usage;
use crate::stats::cost::{ClientCost, CostMeter};
use crate::stats::Recorder;
use crate::target::from_sql::{self, CopyBatch, SourceRows, TableColumn, TableCopy};
use crate::target::{Admin, Target};

pub struct FromSqlOutcome {
    /// The source server.
    pub source: Setup,
    /// The target server.
    pub setup: Setup,
    /// The table's columns that were filled, in the query's order.
    pub columns: Vec<String>,
    pub recorder: Recorder,
    /// Bytes of the batches the target took.
    pub bytes: u64,
    /// How the source failed mid-stream, if it did.
    pub source_error: Option<String>,
    pub wall: Duration,
    pub interrupted: bool,
    pub cost: ClientCost,
}

/// Copies the rows of `cfg.query` on `source` into `cfg.table` on `target`.
pub async fn insert_from_sql(
    cfg: &FromSqlConfig,
    source: &Target,
    target: &Target,
    cancel: CancellationToken,
) -> Result<FromSqlOutcome> {
    let (mut src_setup, mut setup) = (Setup::default(), Setup::default());
    let src = postgres_family(source, &mut src_setup).await.context("the source (--src-url)")?;
    let dst = postgres_family(target, &mut setup).await?;
    setup.method = Some(cfg.method);

    let query_columns = match src.prepare(&cfg.query).await {
        Ok(stmt) => stmt.columns().iter().map(|c| (c.name().to_string(), c.type_().clone())).collect::<Vec<_>>(),
        Err(e) => {
            return Err(match e.as_db_error() {
                Some(db) => usage(format!("--query: {} (SQLSTATE {})", db.message(), db.code().code())),
                None => anyhow::Error::new(e).context("checking --query"),
            })
        }
    };
    let columns = match_table(&dst, cfg, &query_columns, target).await?;
    let Target::Pg { pg, .. } = target else { unreachable!("checked by postgres_family") };
    let copy = from_sql::copy_in(&cfg.table, &columns);
    let opening = (0..cfg.workers).map(|_| TableCopy::open(pg, &copy));
    let sinks = futures_util::future::try_join_all(opening).await.context("opening the workers' connections")?;

    // Stops the producer once the workers are done, whatever they left unread.
    let stop = cancel.child_token();
    let meter = CostMeter::start();
    let plan = worker::Plan::new(None, None, cfg.workers, Warmup::None, 1, cancel.clone());
    let mut rows = SourceRows::start(src, &cfg.query, cfg.batch_size, stop.clone()).await?;
    let source_error: Arc<OnceLock<String>> = rows.error();
    let pool = (0..cfg.workers as usize + 2).map(|_| CopyBatch::default()).collect();
    let feed = producer::spawn(pool, move |b: &mut CopyBatch| rows.fill(b)).context("starting the reader thread")?;
    let progress = Progress::start(plan.live.clone(), None, "rows", cfg.output.quiet);
    let pairs = sinks.into_iter().map(|sink| (feed.clone(), sink)).collect();
    drop(feed);
    let (finished, mut recorders) = run_workers(&plan, pairs).await?;
    stop.cancel();
    let wall = plan.t0.elapsed();
    let cost = meter.stop();
    progress.finish().await;
    Ok(FromSqlOutcome {
        source: src_setup,
        setup,
        columns,
        recorder: recorders.pop().unwrap_or_default(),
        bytes: finished.iter().map(|s| s.bytes).sum(),
        source_error: source_error.get().cloned(),
        wall,
        interrupted: cancel.is_cancelled(),
        cost,
    })
}

/// Connects to a PostgreSQL-family server and describes it; CrateDB,
/// without COPY, is refused.
async fn postgres_family(target: &Target, setup: &mut Setup) -> Result<tokio_postgres::Client> {
    let mut admin = target.admin().await?;
    let info = describe_server(&mut admin, target, setup).await?;
    match admin {
        Admin::Pg(client) if info.engine != Engine::Cratedb => Ok(client),
        _ => Err(usage(CRATEDB_FROM_SQL)),
    }
}

/// The table's columns the query fills; the table must exist.
async fn match_table(
    client: &tokio_postgres::Client,
    cfg: &FromSqlConfig,
    query: &[(String, Type)],
    target: &Target,
) -> Result<Vec<String>> {
    let rows =
        client.query(from_sql::TABLE_COLUMNS, &[&cfg.table.sql()]).await.context("reading the table's columns")?;
    if rows.is_empty() {
        return Err(usage(format!(
            "--table {}: no such table on {}; create it first (insert-from-sql writes into an existing table)",
            cfg.table,
            target.redacted()
        )));
    }
    let table: Vec<TableColumn> = rows
        .iter()
        .map(|r| TableColumn {
            name: r.get(0),
            oid: r.get::<_, i64>(1) as u32,
            type_name: r.get(2),
            declared: r.get(3),
            generated: r.get(4),
        })
        .collect();
    from_sql::match_columns(query, &table, &cfg.table)
}
