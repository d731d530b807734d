//! `dbload run FILE` (a mixed run): ingest and workloads at the same time.

use std::borrow::Cow;
use std::io::Write;

use anyhow::Result;
use tokio_util::sync::CancellationToken;

use super::{measured, Command, Finished};
use crate::config::{MixedConfig, OutputConfig};
use crate::outcome::{Figures, MixedOutcome};
use crate::report::mixed::{self, MixedReport};
use crate::report::Verdict;
use crate::run::{self, signals::note_early_signals, Gate};
use crate::target::Started;

/// `dbload run FILE`: ingest and workloads at the same time.
pub fn mixed(cfg: MixedConfig, out: &mut dyn Write) -> Result<Finished<MixedReport>> {
    measured::<Mixed>(&cfg, out)
}

struct Mixed;

impl Command for Mixed {
    type Config = MixedConfig;
    type Ends = Started;
    type Outcome = MixedOutcome;
    type Report = MixedReport;

    fn output(cfg: &MixedConfig) -> &OutputConfig {
        &cfg.output
    }

    fn name(_: &MixedConfig) -> &str {
        "run"
    }

    fn start(cfg: &MixedConfig, run_id: &str) -> Result<Started> {
        Started::new(&cfg.target, Some(run_id), note_early_signals)
    }

    /// A later run makes its ingest's table afresh.
    fn before_run(cfg: &MixedConfig, run: u32) -> Result<Cow<'_, MixedConfig>> {
        Ok(cfg.for_run(run))
    }

    async fn once(
        cfg: &MixedConfig,
        started: &Started,
        cancel: CancellationToken,
        _: Option<Gate>,
    ) -> Result<MixedOutcome> {
        run::mixed::mixed(cfg, started.server(), cancel).await
    }

    fn report(cfg: &MixedConfig, outcome: &MixedOutcome, started: &Started) -> MixedReport {
        MixedReport::new(cfg, outcome, started.url(), started.throwaway())
    }

    fn verdict(report: &mut MixedReport) -> &mut Verdict {
        &mut report.verdict
    }

    fn text(_: &MixedConfig) -> fn(&MixedReport) -> String {
        mixed::render
    }

    /// Its ingest, and each workload under load.
    fn parts<'a>(report: &'a MixedReport, outcome: &'a MixedOutcome) -> Vec<(&'a str, &'a Figures)> {
        let ingest = outcome.ingest.iter().map(|i| ("ingest", &i.figures));
        let names = report.workloads.iter().map(|w| w.name.as_str());
        ingest.chain(names.zip(&outcome.workloads).map(|(n, w)| (n, &w.under_load.figures))).collect()
    }
}
