//! `dbload export` (a table or a query into files) and `dbload
//! insert-from-sql` (a query's rows into a table): rows moved, measured.

use std::borrow::Cow;
use std::io::Write;

use anyhow::Result;
use tokio_util::sync::CancellationToken;

use super::{measured, Command, Finished};
use crate::cli::{ExportArgs, InsertFromSqlArgs};
use crate::config::{ExportConfig, FromSqlConfig, OutputConfig};
use crate::outcome::{ExportOutcome, Figures, FromSqlOutcome};
use crate::report::transfer::{self, TransferReport};
use crate::report::Verdict;
use crate::run::{self, signals::note_early_signals, Gate};
use crate::target::Started;

/// `dbload export` with an injectable environment.
pub fn export(
    args: ExportArgs,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<Finished<TransferReport>> {
    measured::<Export>(&ExportConfig::resolve(args, env)?, out)
}

/// `dbload insert-from-sql` with an injectable environment. Without
/// `--src-url` the query runs on the target.
pub fn insert_from_sql(
    args: InsertFromSqlArgs,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<Finished<TransferReport>> {
    measured::<FromSql>(&FromSqlConfig::resolve(args, env)?, out)
}

struct Export;

impl Command for Export {
    type Config = ExportConfig;
    type Ends = Started;
    type Outcome = ExportOutcome;
    type Report = TransferReport;

    fn output(cfg: &ExportConfig) -> &OutputConfig {
        &cfg.output
    }

    fn name(_: &ExportConfig) -> &str {
        "export"
    }

    fn start(cfg: &ExportConfig, run_id: &str) -> Result<Started> {
        Started::new(&cfg.target, Some(run_id), note_early_signals)
    }

    /// A later run replaces the files the first wrote.
    fn before_run(cfg: &ExportConfig, run: u32) -> Result<Cow<'_, ExportConfig>> {
        Ok(cfg.for_run(run))
    }

    async fn once(
        cfg: &ExportConfig,
        started: &Started,
        cancel: CancellationToken,
        _: Option<Gate>,
    ) -> Result<ExportOutcome> {
        run::export::export(cfg, started.server(), cancel).await
    }

    fn report(cfg: &ExportConfig, outcome: &ExportOutcome, started: &Started) -> TransferReport {
        TransferReport::export(cfg, outcome, started.url(), started.throwaway())
    }

    fn verdict(report: &mut TransferReport) -> &mut Verdict {
        &mut report.verdict
    }

    fn text(_: &ExportConfig) -> fn(&TransferReport) -> String {
        transfer::render
    }

    fn parts<'a>(_: &'a TransferReport, outcome: &'a ExportOutcome) -> Vec<(&'a str, &'a Figures)> {
        vec![("", &outcome.figures)]
    }
}

struct FromSql;

/// The two ends of insert-from-sql, started: the source given by
/// `--src-url` (none: the target is the source too) and the target.
/// Fields drop in order: the source's server goes first.
struct Ends {
    source: Option<Started>,
    target: Started,
}

impl Ends {
    fn source(&self) -> &Started {
        self.source.as_ref().unwrap_or(&self.target)
    }
}

impl Command for FromSql {
    type Config = FromSqlConfig;
    type Ends = Ends;
    type Outcome = FromSqlOutcome;
    type Report = TransferReport;

    fn output(cfg: &FromSqlConfig) -> &OutputConfig {
        &cfg.output
    }

    fn name(_: &FromSqlConfig) -> &str {
        "insert-from-sql"
    }

    fn start(cfg: &FromSqlConfig, run_id: &str) -> Result<Ends> {
        let target = Started::new(&cfg.target, Some(run_id), note_early_signals)?;
        let source = cfg.source.as_ref().map(|s| Started::new(s, Some(run_id), note_early_signals)).transpose()?;
        Ok(Ends { source, target })
    }

    async fn once(
        cfg: &FromSqlConfig,
        ends: &Ends,
        cancel: CancellationToken,
        _: Option<Gate>,
    ) -> Result<FromSqlOutcome> {
        run::from_sql::insert_from_sql(cfg, ends.source().server(), ends.target.server(), cancel).await
    }

    fn report(cfg: &FromSqlConfig, outcome: &FromSqlOutcome, ends: &Ends) -> TransferReport {
        let (source, target) = (ends.source(), &ends.target);
        TransferReport::from_sql(cfg, outcome, (source.url(), source.throwaway()), (target.url(), target.throwaway()))
    }

    fn verdict(report: &mut TransferReport) -> &mut Verdict {
        &mut report.verdict
    }

    fn text(_: &FromSqlConfig) -> fn(&TransferReport) -> String {
        transfer::render
    }

    fn parts<'a>(_: &'a TransferReport, outcome: &'a FromSqlOutcome) -> Vec<(&'a str, &'a Figures)> {
        vec![("", &outcome.figures)]
    }
}
