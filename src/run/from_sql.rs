//! An insert-from-sql run: match the query's columns to the table's, start
//! the source's COPY once, and let one producer cut it into batches for all
//! the workers, each sending its batches with its own COPY, through the same
//! worker loop as ingest. CrateDB, without COPY, gets the query's rows as
//! JSON through insert-json's model instead: an ingest run of that model
//! whose input is the source's stream. CrateDB as the source (over its
//! PostgreSQL protocol) is read through a cursor, a batch per fetch.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use super::ingest::read_catalog;
use super::measure::{Counted, Measurement};
use super::{cores, interrupt, producer, server_cost, setup};
use crate::config::data::{into_table, RowsInto};
use crate::config::transfer::{CRATEDB_FROM_SQL, CRATEDB_METHOD};
use crate::config::{FromSqlConfig, Load};
use crate::dialect::{Engine, Method};
use crate::driver::source::{self, CopyBatch, Source};
use crate::driver::Admin;
use crate::error::usage;
use crate::input::Input;
use crate::model::catalog::TableColumn;
use crate::model::json::{OnError, Spec};
use crate::model::ModelSpec;
use crate::op::Operation;
use crate::outcome::{FromSqlOutcome, ServerCost, Setup};
use crate::target::Target;

/// Copies the rows of `cfg.query` on `source` into `cfg.table` on `target`.
pub async fn insert_from_sql(
    cfg: &FromSqlConfig,
    source: &Target,
    target: &Target,
    cancel: CancellationToken,
) -> Result<FromSqlOutcome> {
    let named = format!("{} (reading from {})", target.redacted(), source.redacted());
    let connecting = async {
        let (src, src_setup) = connect_source(source).await.context("the source (--src-url)")?;
        let query_columns = src.columns(&cfg.query).await?;
        let (admin, info, setup) = setup::connect(target).await?;
        Ok((src, src_setup, query_columns, admin, info, setup))
    };
    let (src, src_setup, mut query_columns, mut admin, info, setup) =
        interrupt::setting_up(&cancel, &named, connecting).await?;
    if target.over_http() || info.engine == Engine::Cratedb {
        return into_cratedb(cfg, src, src_setup, &query_columns, target, cancel).await;
    }
    let preparing = async {
        let table = table_columns(&mut admin, cfg, target, info.engine).await?;
        let convert = match src.cursor() {
            true => source::conversions(&mut query_columns, &table),
            false => Vec::new(),
        };
        let columns = source::match_columns(&query_columns, &table, &cfg.table)?;
        let copy = crate::dialect::postgres::copy_in_binary(&cfg.table, &columns);
        let each = (0..cfg.workers).map(|_| (target.clone(), copy.clone()));
        let sinks = cores::open_each(each, |(target, copy), _| async move { target.table_copy(&copy).await })
            .await
            .context("opening the workers' connections")?;
        anyhow::Ok((convert, columns, sinks))
    };
    let (convert, columns, sinks) = interrupt::setting_up(&cancel, &named, preparing).await?;

    // Stops the producer once the workers are done, whatever they left unread.
    let stop = cancel.child_token();
    let wal_start = server_cost::wal_position(&mut admin, info.engine).await;
    // The clock starts before the source's rows are asked for, as the transfer does.
    let measurement =
        Measurement::start(&Load::default(), 1, cancel.clone(), Counted::units(None, "rows", cfg.output.progress));
    let mut rows = src.rows(&cfg.query, cfg.batch_size, stop.clone(), convert).await?;
    let source_error: Arc<OnceLock<String>> = rows.error();
    let pool = (0..cfg.workers as usize + 2).map(|_| CopyBatch::default()).collect();
    let read = Arc::new(AtomicU64::new(0));
    let reading = read.clone();
    let feed = producer::spawn(pool, move |b: &mut CopyBatch| {
        let more = rows.fill(b);
        reading.fetch_add(b.units(), Ordering::Relaxed);
        more
    })
    .context("starting the reader thread")?;
    let pairs = sinks.into_iter().map(|sink| (feed.clone(), sink)).collect();
    drop(feed);
    let (figures, finished) = measurement.of(pairs).await;
    stop.cancel();
    let mut server_cost = ServerCost::default();
    let after = async {
        server_cost.wal_bytes = Some(server_cost::wal_since(&mut admin, wal_start).await);
        server_cost.size = Some(server_cost::table_size(&mut admin, info.engine, &cfg.table, None).await);
    };
    if interrupt::after_run(&cancel, after).await.is_none() {
        interrupt::cancel_on_server(&admin).await;
        server_cost.size.get_or_insert_with(|| Err(format!("not measured: {}", interrupt::CUT_SHORT)));
    }
    Ok(FromSqlOutcome {
        source: src_setup,
        setup,
        method: cfg.method.unwrap_or(Method::Copy),
        columns,
        figures,
        bytes: finished.iter().map(|s| s.bytes).sum(),
        source_error: source_error.get().cloned(),
        rows_read: read.load(Ordering::Relaxed),
        server_cost,
    })
}

/// The query's rows into a CrateDB table (over HTTP or its PostgreSQL protocol): read as JSON lines from the
/// source, converted and sent by insert-json's model and CrateDB's method
/// (an ingest run), reported as insert-from-sql.
async fn into_cratedb(
    cfg: &FromSqlConfig,
    src: Source,
    source: Setup,
    query_columns: &[(String, postgres_types::Type)],
    target: &Target,
    cancel: CancellationToken,
) -> Result<FromSqlOutcome> {
    if cfg.method.is_some() {
        return Err(usage(CRATEDB_METHOD));
    }
    let stop = cancel.child_token();
    let rows = src.json(&cfg.query, cfg.batch_size, stop.clone()).await?;
    let bytes = rows.bytes();
    let spec = Spec::new(Input::from_reader("the query's rows", Box::new(rows)), OnError::Abort, None, false);
    let workers = cfg.workers;
    let rows =
        RowsInto { workers, batch_size: cfg.batch_size, rows_per_worker: vec![u64::MAX; workers as usize], seed: 1 };
    let model = ModelSpec::Json(spec);
    let ingest =
        into_table("insert-from-sql", model, cfg.table.clone(), cfg.target.clone(), None, rows, cfg.output.clone())?;
    let outcome = super::ingest::ingest(&ingest, Some(target), cancel.clone(), None).await;
    // The producers may have left rows unread (a worker stopped): end the source.
    stop.cancel();
    let out = outcome?;
    // The query's columns, which every row names (the table's other columns
    // are NULL or, with a default, the database's to fill).
    let table = out.setup.columns.iter().flatten();
    let columns = query_columns.iter().map(|(name, _)| name).filter(|&name| table.clone().any(|c| c == name)).cloned();
    let columns = columns.collect();
    let input = out.input.unwrap_or_default();
    Ok(FromSqlOutcome {
        source,
        setup: out.setup,
        method: out.method,
        columns,
        figures: out.figures,
        bytes: bytes.load(Ordering::Relaxed),
        source_error: input.read_error.or(input.abort),
        rows_read: input.rows_read,
        server_cost: out.server_cost,
    })
}

/// Connects to the source over the PostgreSQL protocol and describes it.
/// CrateDB over HTTP, whose JSON values come without their types, is refused.
async fn connect_source(target: &Target) -> Result<(Source, Setup)> {
    if target.over_http() {
        return Err(usage(CRATEDB_FROM_SQL));
    }
    let (admin, info, setup) = setup::connect(target).await?;
    Ok((Source::new(admin, info.engine, CRATEDB_FROM_SQL)?, setup))
}

/// The target table's columns, read from the catalog as a model reads
/// them; the table must exist.
async fn table_columns(
    admin: &mut Admin,
    cfg: &FromSqlConfig,
    target: &Target,
    engine: Engine,
) -> Result<Vec<TableColumn>> {
    let table = read_catalog(admin, &cfg.table, engine).await?;
    if table.is_empty() {
        return Err(usage(format!(
            "--table {}: no such table on {}; create it first (insert-from-sql writes into an existing table)",
            cfg.table,
            target.redacted()
        )));
    }
    Ok(table)
}
