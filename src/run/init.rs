//! `dbload init`: pgbench's tables made and filled as `pgbench -i -s N`
//! does, its steps (drop, create, generate, vacuum, primary and foreign
//! keys) in the order `-I` gives them; the rows of `g` sent by binary COPY
//! through the ingest's own sink and the one worker loop, each table's rows
//! split between the workers (those of `G` made by the server).

use std::time::Instant;

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use super::measure::{Counted, Measurement};
use super::{cores, interrupt};
use crate::config::ingest::split_rows;
use crate::config::init::{InitConfig, Step};
use crate::config::Load;
use crate::dialect::{pgbench as sql, Engine, Method};
use crate::driver::spec::SinkSpec;
use crate::driver::Admin;
use crate::encode::Payload;
use crate::error::usage;
use crate::ident::TableName;
use crate::model::pgbench::Table;
use crate::op::Source;
use crate::outcome::{InitOutcome, InitStep};
use crate::target::Target;

/// Rows per COPY (each its own transaction): ~30 bytes a row of accounts.
const BATCH_ROWS: u64 = 50_000;

pub async fn init(cfg: &InitConfig, target: &Target, cancel: CancellationToken) -> Result<InitOutcome> {
    if target.over_http() {
        return Err(usage("init makes pgbench's tables over the PostgreSQL protocol: give a postgres:// URL"));
    }
    let named = target.redacted();
    let mut admin = interrupt::setting_up(&cancel, &named, target.admin()).await?;
    let started = Instant::now();
    let mut out = InitOutcome { scale: cfg.scale, ..InitOutcome::default() };
    // Before rows are in, a signal ends init with nothing to report; after,
    // the report says what was done.
    let mut filled = false;
    for &step in &cfg.steps {
        if step == Step::Generate {
            let t = Instant::now();
            admin.execute(sql::TRUNCATE).await.with_context(|| format!("init: {}", step.name()))?;
            let mut rows = 0;
            for table in Table::ALL {
                rows += fill(cfg, target, table, cancel.clone()).await?;
                if cancel.is_cancelled() {
                    out.interrupted = true;
                    break;
                }
            }
            out.steps.push(InitStep { step: step.name().into(), seconds: t.elapsed().as_secs_f64(), rows: Some(rows) });
            if out.interrupted {
                break;
            }
            filled = true;
            continue;
        }
        let statements = statements(cfg, step);
        let doing = timed(&mut admin, &mut out, step.name(), &statements);
        if !filled {
            if let Err(e) = interrupt::setting_up(&cancel, &named, doing).await {
                // A DROP waiting on a lock would otherwise run once it is free.
                if cancel.is_cancelled() {
                    interrupt::cancel_on_server(&admin).await;
                }
                return Err(e);
            }
            filled = step == Step::GenerateOnServer;
            continue;
        }
        match interrupt::after_run(&cancel, doing).await {
            Some(done) => done?,
            None => {
                interrupt::cancel_on_server(&admin).await;
                out.interrupted = true;
                break;
            }
        }
    }
    out.seconds = started.elapsed().as_secs_f64();
    Ok(out)
}

/// The SQL of a step that the server does alone (all but `g`).
fn statements(cfg: &InitConfig, step: Step) -> Vec<String> {
    let all = |s: &[&str]| s.iter().map(|s| s.to_string()).collect();
    match step {
        Step::Drop => vec![sql::drop_tables()],
        Step::Create => sql::create_tables(&cfg.layout, cfg.scale),
        Step::GenerateOnServer => sql::generate_on_server(cfg.scale),
        Step::Vacuum => all(&sql::VACUUM),
        Step::PrimaryKeys => all(&sql::PRIMARY_KEYS),
        Step::ForeignKeys => all(&sql::FOREIGN_KEYS),
        Step::Generate => unreachable!("init fills the tables itself"),
    }
}

/// Runs `statements` as init's step `step`, timed into `out`.
async fn timed(admin: &mut Admin, out: &mut InitOutcome, step: &'static str, statements: &[String]) -> Result<()> {
    let t = Instant::now();
    for s in statements {
        admin.execute(s).await.with_context(|| format!("init: {step}: `{s}`"))?;
    }
    out.steps.push(InitStep { step: step.into(), seconds: t.elapsed().as_secs_f64(), rows: None });
    Ok(())
}

/// Fills `table` from `cfg.workers` connections; returns the rows written.
/// A batch that failed fails the init: pgbench's tables are whole or unusable.
async fn fill(cfg: &InitConfig, target: &Target, table: Table, cancel: CancellationToken) -> Result<u64> {
    let total = table.per_scale() * cfg.scale as u64;
    let workers = cfg.workers.min(total.div_ceil(BATCH_ROWS) as u32).max(1);
    let spec = SinkSpec {
        table: TableName::parse(table.name())?,
        schema: table.schema(),
        method: Method::Copy,
        upsert: false,
        insert_rows: 1,
        batch_size: BATCH_ROWS as usize,
        engine: Engine::Postgres,
    };
    let each = (0..workers).map(|_| (target.clone(), spec.clone()));
    let sinks = cores::open_each(each, |(target, spec), w| async move { target.sink(w, &spec).await })
        .await
        .context("opening the workers' connections")?;
    let measurement =
        Measurement::start(&Load::default(), 1, cancel, Counted::units(Some(total), "rows", cfg.progress));
    let mut start = 0;
    let pairs = split_rows(total, workers)
        .into_iter()
        .zip(sinks)
        .map(|(n, sink)| {
            let rows = TableRows::new(table, start..start + n);
            start += n;
            (rows, sink)
        })
        .collect();
    let (figures, _) = measurement.of(pairs).await;
    let m = &figures.recorder().measured;
    if let Some((class, e)) = figures.recorder().errors.iter().next() {
        anyhow::bail!("init: filling {}: {} batch(es) failed: {class}: {}", table.name(), m.failed_batches, e.example);
    }
    if let Some(why) = figures.stopped {
        anyhow::bail!("init: filling {} stopped: {why}", table.name());
    }
    Ok(m.rows)
}

/// A worker's range of a table's rows, as batches (the sink encodes their
/// binary COPY payloads as it sends them).
struct TableRows {
    table: Table,
    next: u64,
    end: u64,
    /// A sent payload, given back to be filled again.
    spare: Option<Payload>,
}

impl TableRows {
    fn new(table: Table, rows: std::ops::Range<u64>) -> TableRows {
        TableRows { table, next: rows.start, end: rows.end, spare: None }
    }
}

impl Source for TableRows {
    type Op = Payload;

    async fn next(&mut self) -> Option<Payload> {
        if self.next == self.end {
            return None;
        }
        let to = (self.next + BATCH_ROWS).min(self.end);
        let mut p = self.spare.take().unwrap_or_else(|| Payload::new(&self.table.schema()));
        self.table.fill(&mut p.batch, self.next..to);
        self.next = to;
        Some(p)
    }

    fn recycle(&mut self, op: Payload) {
        self.spare = Some(op);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker's range of rows comes in whole batches, the last one short.
    #[tokio::test]
    async fn a_worker_s_rows_come_in_batches() {
        let mut rows = TableRows::new(Table::Accounts, 0..BATCH_ROWS * 2 + 1);
        let mut sizes = Vec::new();
        while let Some(p) = rows.next().await {
            sizes.push(p.rows());
        }
        assert_eq!(sizes, [BATCH_ROWS, BATCH_ROWS, 1]);
        assert!(TableRows::new(Table::Accounts, 5..5).next().await.is_none());
    }
}
