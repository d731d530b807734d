//! An export run: check what is exported and where, split a table into one
//! block range per worker (a hypertable into time ranges), take one snapshot for all of them, then stream
//! each range into its file through the worker loop, a chunk per operation.
//! On CrateDB each worker reads a cursor over its share of the table (or
//! over the query) instead, a page per operation, over either protocol.

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use super::measure::{measure, Counted};
use super::{cores, interrupt, server_cost, setup};
use crate::config::transfer::ExportSource;
use crate::config::{ExportConfig, Load};
use crate::dialect::{cratedb, postgres as sql, Engine};
use crate::driver::export::file::{Chunks, ExportFile};
use crate::driver::export::{self, ExportWorker};
use crate::driver::Admin;
use crate::error::usage;
use crate::outcome::{ExportOutcome, ServerCost};
use crate::target::Target;

/// Exports as `cfg` says, with as many workers as it settles for the
/// engine detected.
pub async fn export(cfg: &ExportConfig, target: &Target, cancel: CancellationToken) -> Result<ExportOutcome> {
    let preparing = async {
        let (admin, info, setup) = setup::connect(target).await?;
        let count = cfg.workers_on(info.engine);
        let (workers, rows_estimate) = match info.engine {
            Engine::Cratedb => cursor_workers(cfg, count, admin, target).await?,
            engine => copy_workers(cfg, count, admin, engine, target).await?,
        };
        anyhow::Ok((info, setup, count, workers, rows_estimate))
    };
    let (info, setup, count, workers, rows_estimate) =
        interrupt::setting_up(&cancel, &target.redacted(), preparing).await?;

    // The estimate ends the progress bar; with no rate, nothing is dropped below it.
    let counted = Counted::units(rows_estimate, "rows", cfg.output.progress);
    let pairs = workers.into_iter().map(|w| (Chunks::default(), w)).collect();
    let (figures, finished) = measure(&Load::default(), 1, cancel.clone(), counted, pairs).await;
    let files: Vec<_> = finished.into_iter().map(ExportWorker::finish).collect();
    let mut server_cost = ServerCost::default();
    if let ExportSource::Table(table) = &cfg.source {
        // Every row read, when the export ran to its end: no need to count them again.
        let complete = figures.stopped.is_none() && !figures.interrupted && files.iter().all(|f| f.complete);
        let rows = complete.then(|| files.iter().map(|f| f.rows).sum());
        let mut admin = None;
        let sizing = async {
            match target.admin().await {
                Ok(a) => server_cost::table_size(admin.insert(a), info.engine, table, rows).await,
                Err(e) => Err(format!("{e:#}")),
            }
        };
        let size = match interrupt::after_run(&cancel, sizing).await {
            Some(size) => size,
            None => {
                if let Some(admin) = &admin {
                    interrupt::cancel_on_server(admin).await;
                }
                Err(format!("not measured: {}", interrupt::CUT_SHORT))
            }
        };
        server_cost.size = Some(size);
    }
    Ok(ExportOutcome { setup, figures, files, workers: count, rows_estimate, server_cost })
}

/// The files of the export, one per worker, in a checked `--out`.
fn create_files(cfg: &ExportConfig, workers: u32) -> Result<Vec<ExportFile>> {
    prepare_dir(cfg)?;
    (0..workers).map(|w| ExportFile::create(cfg.out_dir.join(cfg.file_name(w)), cfg.gzip)).collect()
}

/// What CrateDB's `workers` read: each its share of the table (or the
/// query), and the table's rows. CrateDB shows new rows to queries only
/// after a refresh: the table is refreshed first, so what was written is
/// exported.
async fn crate_selects(
    cfg: &ExportConfig,
    workers: u32,
    admin: &mut Admin,
    target: &Target,
) -> Result<(Vec<String>, Option<u64>)> {
    let table = match &cfg.source {
        ExportSource::Query(q) => return Ok((vec![q.clone()], None)),
        ExportSource::Table(t) => t,
    };
    if admin.count(&cratedb::table_exists(table)).await? == 0 {
        return Err(usage(format!("--table {table}: no such table on {}", target.redacted())));
    }
    admin.execute(&cratedb::refresh(table)).await?;
    let rows = admin.count(&crate::dialect::count_rows(table)).await?;
    Ok(((0..workers).map(|w| cratedb::export_select(table, w, workers)).collect(), Some(rows)))
}

/// CrateDB's `workers`, each reading a cursor over its share of the table
/// (or over the query), and the table's rows.
async fn cursor_workers(
    cfg: &ExportConfig,
    workers: u32,
    mut admin: Admin,
    target: &Target,
) -> Result<(Vec<ExportWorker>, Option<u64>)> {
    let (selects, rows) = crate_selects(cfg, workers, &mut admin, target).await?;
    let files = create_files(cfg, workers)?;
    let option = match cfg.source {
        ExportSource::Table(_) => "--table",
        ExportSource::Query(_) => "--query",
    };
    let each = selects.into_iter().zip(files).map(|(select, file)| (target.clone(), select, file));
    let (format, chunk_rows) = (cfg.format, cfg.chunk_rows);
    let workers = cores::open_each(each, move |(target, select, file), w| async move {
        target.cursor_export(w as u32, &select, file, (format, chunk_rows), option).await
    })
    .await?;
    Ok((workers, rows))
}

/// A PostgreSQL-family server's `workers`, each with the COPY of its block
/// range (or of the query), all in one snapshot; and the planner's estimate
/// of the table's rows.
async fn copy_workers(
    cfg: &ExportConfig,
    workers: u32,
    mut admin: Admin,
    engine: Engine,
    target: &Target,
) -> Result<(Vec<ExportWorker>, Option<u64>)> {
    let (selects, rows_estimate) = match &cfg.source {
        ExportSource::Table(t) => export::split_table(&admin, t, workers, engine, &target.redacted()).await?,
        ExportSource::Query(q) => {
            export::check_query(&admin, q).await?;
            (vec![q.clone()], None)
        }
    };
    let files = create_files(cfg, workers)?;
    // One snapshot for every worker: together they read the table as of one moment.
    let snapshot = match workers {
        1 => None,
        _ => {
            admin.execute(sql::BEGIN_EXPORT).await.context("starting the export")?;
            Some(admin.scalar(sql::EXPORT_SNAPSHOT).await.context("taking a snapshot")?.unwrap_or_default())
        }
    };
    let each = selects
        .iter()
        .zip(files)
        .map(|(select, file)| (target.clone(), snapshot.clone(), sql::copy_out(select, cfg.format), file));
    let (format, chunk_rows) = (cfg.format, cfg.chunk_rows);
    let workers = cores::open_each(each, move |(target, snapshot, copy, file), _| async move {
        target.copy_export(snapshot.as_deref(), copy, format, file, chunk_rows).await
    })
    .await
    .context("opening the workers' connections")?;
    if snapshot.is_some() {
        admin.execute(sql::COMMIT).await.context("releasing the exported snapshot")?;
    }
    Ok((workers, rows_estimate))
}

/// Creates `--out` if missing. Files of an earlier export under the same
/// name are removed with `--overwrite`, else refused: `my_table_*.json`
/// would read their rows as well.
fn prepare_dir(cfg: &ExportConfig) -> Result<()> {
    let dir = &cfg.out_dir;
    std::fs::create_dir_all(dir).map_err(|e| usage(format!("--out {}: cannot create it: {e}", dir.display())))?;
    let entries = std::fs::read_dir(dir).map_err(|e| usage(format!("--out {}: cannot read it: {e}", dir.display())))?;
    let mut old: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| cfg.is_export_file(name))
        .collect();
    old.sort();
    if old.is_empty() {
        return Ok(());
    }
    if !cfg.overwrite {
        let shown = old.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
        let more = if old.len() > 3 { format!(" and {} more", old.len() - 3) } else { String::new() };
        return Err(usage(format!(
            "--out {} already holds {shown}{more} from an earlier export: pass --overwrite to replace them, or \
             choose another --out or --name",
            dir.display()
        )));
    }
    for name in old {
        let path = dir.join(&name);
        std::fs::remove_file(&path).with_context(|| format!("--overwrite: removing {}", path.display()))?;
    }
    Ok(())
}
