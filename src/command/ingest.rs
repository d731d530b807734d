//! `dbload ingest` and the commands that write rows the same way
//! (`insert-fake-data`, `insert-json`): an ingest run of any model.

use std::borrow::Cow;
use std::io::Write;

use anyhow::Result;
use tokio_util::sync::CancellationToken;

use super::{measured, Command, Finished, Instances};
use crate::cli::{IngestArgs, InsertFakeDataArgs, InsertJsonArgs};
use crate::config::{self, IngestConfig, OutputConfig, TableAction};
use crate::outcome::{Figures, IngestOutcome};
use crate::report::ingest::IngestReport;
use crate::report::{self, Verdict};
use crate::run::{self, signals::note_early_signals, Gate};
use crate::target::Started;

/// `dbload ingest` with an injectable environment.
pub fn ingest(
    args: IngestArgs,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<Finished<IngestReport>> {
    measured::<Ingest>(&IngestConfig::resolve(args, env)?, out)
}

/// `dbload insert-fake-data` with an injectable environment.
pub fn insert_fake_data(
    args: InsertFakeDataArgs,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<Finished<IngestReport>> {
    measured::<Ingest>(&config::data::insert_fake_data(args, env)?, out)
}

/// `dbload insert-json` with an injectable environment (the input is read
/// from the files given, or stdin).
pub fn insert_json(
    args: InsertJsonArgs,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<Finished<IngestReport>> {
    measured::<Ingest>(&config::data::insert_json(args, env)?, out)
}

/// Rows written into a table (none for a dry run).
struct Ingest;

impl Command for Ingest {
    type Config = IngestConfig;
    type Ends = Started;
    type Outcome = IngestOutcome;
    type Report = IngestReport;

    fn output(cfg: &IngestConfig) -> &OutputConfig {
        &cfg.output
    }

    fn name(cfg: &IngestConfig) -> &str {
        cfg.command
    }

    fn start(cfg: &IngestConfig, run_id: &str) -> Result<Started> {
        Started::new(&cfg.target, Some(run_id), note_early_signals)
    }

    /// Instance 0 makes the table that the other instances write to.
    fn instances(cfg: &IngestConfig) -> Instances {
        Instances::Together { table: cfg.table_action != TableAction::Existing }
    }

    /// A later run makes its table afresh, and insert-json reads its input
    /// again, so that every run writes the same rows.
    fn before_run(cfg: &IngestConfig, run: u32) -> Result<Cow<'_, IngestConfig>> {
        if run >= 2 {
            cfg.read_input_again()?;
        }
        Ok(cfg.for_run(run))
    }

    async fn once(
        cfg: &IngestConfig,
        started: &Started,
        cancel: CancellationToken,
        gate: Option<Gate>,
    ) -> Result<IngestOutcome> {
        run::ingest::ingest(cfg, started.target(), cancel, gate).await
    }

    fn report(cfg: &IngestConfig, outcome: &IngestOutcome, started: &Started) -> IngestReport {
        IngestReport::ingest(cfg, outcome, started.url(), started.throwaway())
    }

    fn verdict(report: &mut IngestReport) -> &mut Verdict {
        &mut report.verdict
    }

    fn text(cfg: &IngestConfig) -> fn(&IngestReport) -> String {
        match cfg.node_options {
            Some(_) => report::ingest::render_with_global_results,
            None => report::ingest::render,
        }
    }

    fn preamble(cfg: &IngestConfig) -> Option<String> {
        cfg.node_options.as_ref().map(report::node_ingest::options)
    }

    fn parts<'a>(_: &'a IngestReport, outcome: &'a IngestOutcome) -> Vec<(&'a str, &'a Figures)> {
        vec![("", &outcome.figures)]
    }

    /// A row of input that stopped the run is said on stderr too, after
    /// the report (exit 2).
    fn after_report(report: &IngestReport) {
        if let Some(e) = &report.input_error {
            crate::console::line(format_args!("dbload: {e}"));
        }
    }
}
