//! One ingest run: prepare the table, start the producer threads (one per
//! core, sharing the workers' generators) and one sender task per worker,
//! let them run until a stop condition, merge their recorders, verify. Every
//! command that writes generated or read rows goes through here (ingest,
//! insert-fake-data, insert-json, insert-from-sql into CrateDB, a mixed
//! run's ingest).

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use super::setup::{self, text};
use super::{cores, interrupt, measure, merge_histograms, producer, sampler, server_cost, Gate};
use crate::config::{IngestConfig, TableAction, TargetChoice};
use crate::dialect::{self, postgres as sql, Dialect, Engine, Method};
use crate::driver::sink::Sink;
use crate::driver::spec::SinkSpec;
use crate::driver::Admin;
use crate::encode::Payload;
use crate::error::usage;
use crate::ident::TableName;
use crate::model::catalog::{self, BindContext, TableColumn};
use crate::outcome::{IngestOutcome, ServerCost, Setup, Verify};
use crate::target::Target;

/// Runs an ingest against `target` (None: dry run), its workers held by
/// `gate` if there is one.
pub async fn ingest(
    cfg: &IngestConfig,
    target: Option<&Target>,
    cancel: CancellationToken,
    gate: Option<Gate>,
) -> Result<IngestOutcome> {
    let mut setup = Setup::default();
    let mut rows_before = 0;
    let mut model = cfg.model.clone();
    // dbload's own connection, outside the setup so that a statement it
    // leaves running when a signal ends the setup can be cancelled.
    let mut own = None;
    let preparing = async {
        let settled = match target {
            Some(t) => {
                let (admin, info, described) = setup::connect_into(t, &mut own).await?;
                setup = described;
                let http = t.over_http();
                let dialect = cfg.dialect_for(info.engine, http)?;
                if let Some((flag, why)) = dialect.options.not_applied(info.engine) {
                    crate::console::line(format_args!("dbload: warning: --{flag} {why}"));
                }
                setup.ddl = prepare_table(admin, cfg, &dialect, t).await?;
                if cfg.model.reads_catalog() {
                    let columns = read_catalog(admin, &cfg.table, info.engine).await?;
                    let ctx = BindContext {
                        table: cfg.table.clone(),
                        // JSON bodies only over HTTP: CrateDB's PostgreSQL protocol reads text forms.
                        cratedb: http,
                        rows: cfg.total_rows(),
                        workers: cfg.workers,
                    };
                    model = cfg.model.bind(&columns, &ctx)?;
                    setup.columns = Some(model.schema().columns.iter().map(|c| c.name.clone()).collect());
                }
                let settled = cfg.plan(Some(dialect.clone()), http, model.schema())?;
                setup.layout = layout(admin, cfg, &dialect).await;
                if cfg.verify {
                    rows_before = count_rows(admin, cfg, &dialect).await?;
                }
                settled
            }
            None => cfg.plan(None, false, model.schema())?,
        };
        // The report states what the plan settled.
        setup.insert_rows_per_statement = (settled.method == Method::Insert).then_some(settled.insert_rows);
        let spec = SinkSpec {
            table: cfg.table.clone(),
            schema: settled.schema.clone(),
            method: settled.method,
            upsert: cfg.upsert,
            insert_rows: settled.insert_rows,
            batch_size: cfg.batch_size,
            engine: settled.engine(),
        };

        let sinks = open_sinks(cfg, target, &spec).await?;
        Ok((settled, spec, sinks))
    };
    let named = target.map_or_else(|| "no database (a dry run)".into(), Target::redacted);
    let prepared = interrupt::setting_up(&cancel, &named, preparing).await;
    let (settled, spec, sinks) = interrupt::cancel_if_interrupted(prepared, &cancel, own.as_ref()).await?;
    let mut admin = own;
    // The server's sampler connects before the workers start, so that its
    // connecting is not in the measured time.
    let sampler = match target {
        Some(t) if admin.is_some() => {
            Some(sampler::Sampler::open(t, settled.engine(), Some(&cfg.table), cfg.output.sample_every).await)
        }
        _ => None,
    };

    if let Some(gate) = gate {
        gate.pass().await;
    }
    let wal_start = match &mut admin {
        Some(admin) => Some(server_cost::wal_position(admin, settled.engine()).await),
        None => None,
    };
    let how = format!(
        "{}, {}, batches of {} rows",
        measure::count(cfg.workers, "worker"),
        settled.method,
        crate::format::group(cfg.batch_size as u64)
    );
    let header = measure::header(&named, target.map(|_| &setup), &how, &cfg.load);
    let counted = measure::Counted::units(cfg.total_rows(), "rows", cfg.output.progress).header(header);
    let counted = match &cfg.model {
        crate::model::ModelSpec::Json(json) => match json.input_progress() {
            Some((read, size)) => counted.reading(read, size),
            None => counted,
        },
        _ => counted,
    };
    let counted = match sampler {
        Some(sampler) => counted.sampled_by(sampler),
        None => counted,
    };
    let measurement = measure::Measurement::start(&cfg.load, 1, cancel.clone(), counted);
    // Every sink of a run frames its batches alike.
    let framing = sinks.first().map(Sink::framing);
    let fillers = (0..sinks.len()).map(|w| {
        let mut generator =
            model.generator(cfg.load.seed, cfg.load.first_worker + w as u32, cfg.start_us, cfg.rows_per_worker[w]);
        let (framing, batch_size) = (framing.clone().expect("a sink per generator"), cfg.batch_size);
        move |p: &mut Payload| {
            let more = generator.next_batch(&mut p.batch, batch_size);
            if more {
                framing.encode(p);
            }
            more
        }
    });
    // One feed for all the workers: each generator keeps its own rows (seed
    // and worker number), and any free worker sends the next batch ready.
    let schema = settled.schema.clone();
    let feed = producer::spawn_shared(fillers.collect(), sinks.len(), move || Payload::new(&schema))
        .context("starting the producer threads")?;
    let mut pairs = Vec::with_capacity(sinks.len());
    for sink in sinks {
        pairs.push((feed.clone(), sink));
    }
    drop(feed);
    let (mut figures, finished) = measurement.of(pairs).await;
    let mut durations = Vec::new();
    for sink in finished {
        durations.extend(sink.finish()?);
    }
    let server_duration = merge_histograms(durations.iter());
    let expected = figures.recorder().warmup.rows + figures.recorder().measured.rows;
    // What a count cut short by a stop signal leaves in the report.
    let counted = admin.is_some() && settled.dialect.is_some();
    let cut_short = || format!("not counted: {}", interrupt::CUT_SHORT);
    let mut verify =
        (cfg.verify && counted).then(|| Verify { expected, found: None, ok: false, error: Some(cut_short()) });
    let mut server_cost = ServerCost::default();
    let after = async {
        if let (Some(t), Some(_), true) = (target, &admin, cfg.load.reconnect) {
            // The server may have restarted under the run, and dbload's own
            // connection with it. One still gone leaves what needs it unknown
            // in the report (the verify failed), not the report lost.
            match t.admin().await {
                Ok(again) => admin = Some(again),
                Err(e) => {
                    let gone = format!("connecting again after the run: {e:#}");
                    if let Some(v) = &mut verify {
                        v.error = Some(gone.clone());
                    }
                    server_cost.wal_bytes = wal_start.map(|_| Err(gone.clone()));
                    server_cost.size = Some(Err(gone));
                    return anyhow::Ok(());
                }
            }
        }
        if let (Some(admin), Some(start)) = (&mut admin, wal_start) {
            server_cost.wal_bytes = Some(server_cost::wal_since(admin, start).await);
        }
        let mut rows_now = None;
        if let (Some(admin), Some(dialect), Some(verify)) = (&mut admin, &settled.dialect, &mut verify) {
            // A count that fails (its connection lost) fails the run, but
            // the report of what was done is not lost for it.
            *verify = match count_rows(admin, cfg, dialect).await {
                Ok(after) => {
                    rows_now = Some(after);
                    let found = after.saturating_sub(rows_before);
                    // An upsert that updates is acknowledged without adding a row, so
                    // the table may gain fewer rows than were acknowledged; but it
                    // must hold at least as many (the keys of one run are distinct).
                    let ok = if cfg.upsert { found <= expected && after >= expected } else { found == expected };
                    Verify { expected, found: Some(found), ok, error: None }
                }
                Err(e) => Verify { expected, found: None, ok: false, error: Some(format!("{e:#}")) },
            };
        }
        if let (Some(admin), Some(dialect)) = (&mut admin, &settled.dialect) {
            let size = server_cost::table_size(admin, dialect.engine, &cfg.table, rows_now).await;
            if let (Ok(before), true) = (&size, cfg.table_options.compress) {
                let compressed = server_cost::compress(admin, &cfg.table, &settled.schema, *before).await;
                server_cost.compression = Some(compressed);
            }
            server_cost.size = Some(size);
            server_cost.nodes = server_cost::node_shares(admin, dialect.engine, &cfg.table).await;
        }
        if let (Some(admin), Some(dialect), Engine::Timescaledb) = (&mut admin, &settled.dialect, spec.engine) {
            // Chunks exist once rows arrived.
            setup.layout = layout(admin, cfg, dialect).await;
        }
        anyhow::Ok(())
    };
    match interrupt::after_run(&cancel, after).await {
        Some(done) => done?,
        None => {
            if let Some(admin) = &admin {
                interrupt::cancel_on_server(admin).await;
            }
            if counted && server_cost.size.is_none() {
                server_cost.size = Some(Err(cut_short()));
            }
        }
    }
    // Ctrl-C while the run was verifying interrupts it too.
    figures.interrupted = cancel.is_cancelled();
    let input = match &cfg.model {
        crate::model::ModelSpec::Json(json) => Some(json.input.stats()),
        _ => None,
    };
    Ok(IngestOutcome { setup, method: settled.method, figures, verify, server_duration, input, server_cost })
}
async fn open_sinks(cfg: &IngestConfig, target: Option<&Target>, spec: &SinkSpec) -> Result<Vec<Sink>> {
    let workers = cfg.workers as usize;
    let Some(target) = target else {
        return match &cfg.target {
            TargetChoice::DryRun { copy_file: Some(f) } => {
                (0..workers).map(|w| Sink::copy_file(f.replace("{worker}", &w.to_string()))).collect()
            }
            _ => Ok((0..workers).map(|_| Sink::dry_run(spec)).collect()),
        };
    };
    let each = (0..workers).map(|_| (target.clone(), spec.clone()));
    let opened = cores::open_each(each, |(target, spec), w| async move { target.sink(w, &spec).await }).await;
    opened.context("preparing the workers' connections")
}

/// Creates, recreates or reuses the table as `--drop-table`/`--append` say;
/// returns the DDL that ran. An existing table is never dropped unasked.
async fn prepare_table(
    admin: &mut Admin,
    cfg: &IngestConfig,
    dialect: &Dialect,
    target: &Target,
) -> Result<Vec<String>> {
    let exists = admin
        .count(&dialect.table_exists(&cfg.table))
        .await
        .with_context(|| format!("checking whether table {} exists", cfg.table))?
        > 0;
    match (exists, cfg.table_action) {
        (true, TableAction::Create) => {
            return Err(usage(format!(
                "table {} already exists on {}: pass --drop-table to drop and recreate it, --append to add rows to it, or --table to choose another",
                cfg.table,
                target.redacted()
            )))
        }
        (true, TableAction::Append) => {
            check_columns(admin, cfg, dialect).await?;
            return Ok(Vec::new());
        }
        (true, TableAction::Existing) => return Ok(Vec::new()),
        (false, TableAction::Existing) => return Err(catalog::missing_table(&cfg.table, &target.redacted())),
        (true, TableAction::Recreate) => {
            admin.execute(&dialect.drop_table(&cfg.table)).await.with_context(|| format!("dropping {}", cfg.table))?;
        }
        (false, _) => {}
    }
    let ddl = dialect.create_table(&cfg.table, &cfg.schema, cfg.time_span_us);
    for stmt in &ddl {
        admin.execute(stmt).await.with_context(|| format!("creating table {}: {stmt}", cfg.table))?;
    }
    Ok(ddl)
}

/// The columns of an existing table, in table order, from the engine's catalog.
pub(super) async fn read_catalog(admin: &mut Admin, table: &TableName, engine: Engine) -> Result<Vec<TableColumn>> {
    let reading = || format!("reading the columns of {table} from the catalog");
    Ok(match engine {
        Engine::Cratedb => {
            let rows = admin.rows(&dialect::cratedb::catalog_columns(table)).await.with_context(reading)?;
            let key = admin.rows(&dialect::cratedb::primary_key_columns(table)).await.with_context(reading)?;
            catalog::from_crate(&rows, &key)
        }
        _ => {
            let rows = admin.rows(&sql::catalog_columns(table)).await.with_context(reading)?;
            let keys = admin.rows(&sql::unique_keys(table)).await.with_context(reading)?;
            catalog::from_pg(&rows, &keys)
        }
    })
}

/// An `--append` table must have the model's columns.
async fn check_columns(admin: &mut Admin, cfg: &IngestConfig, dialect: &Dialect) -> Result<()> {
    let rows = admin.rows(&dialect.columns(&cfg.table)).await.context("reading the table's columns")?;
    let have: Vec<String> = rows.iter().map(|r| text(&r[0])).collect();
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

/// What the engine made of the table (chunks, shards and nodes), and a
/// table flag it had no such thing for, for the report. Best effort: a
/// report is not lost for want of it.
async fn layout(admin: &mut Admin, cfg: &IngestConfig, dialect: &Dialect) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> =
        dialect.options.not_applied(dialect.engine).map(|(flag, why)| (flag.to_string(), why)).into_iter().collect();
    for (name, query) in dialect.layout_queries(&cfg.table) {
        if let Ok(Some(v)) = admin.scalar(&query).await {
            found.push((name.to_string(), v));
        }
    }
    found
}

/// The rows in an ingest's table now: a mixed run states them beside its
/// baselines. None when a stop signal cut the count short (see
/// [`interrupt::after_run`]).
pub(crate) async fn table_rows(cfg: &IngestConfig, target: &Target, cancel: &CancellationToken) -> Result<Option<u64>> {
    let mut admin = None;
    let counting = async {
        let (admin, info, _) = setup::connect_into(target, &mut admin).await?;
        let dialect = cfg.dialect_for(info.engine, target.over_http())?;
        count_rows(admin, cfg, &dialect).await
    };
    match interrupt::after_run(cancel, counting).await {
        Some(counted) => counted.map(Some),
        None => {
            if let Some(admin) = &admin {
                interrupt::cancel_on_server(admin).await;
            }
            Ok(None)
        }
    }
}

async fn count_rows(admin: &mut Admin, cfg: &IngestConfig, dialect: &Dialect) -> Result<u64> {
    if let Some(refresh) = dialect.refresh(&cfg.table) {
        admin.execute(&refresh).await.with_context(|| format!("refreshing {}", cfg.table))?;
    }
    admin
        .count(&crate::dialect::count_rows(&cfg.table))
        .await
        .with_context(|| format!("counting the rows of {}", cfg.table))
}
