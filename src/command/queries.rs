//! `dbload timeit` and `dbload workload`: queries measured on a target.

use std::io::Write;

use anyhow::Result;
use tokio_util::sync::CancellationToken;

use super::{measured, Command, Finished, Instances};
use crate::config::{OutputConfig, QueryConfig};
use crate::outcome::{Figures, QueryOutcome};
use crate::report::pgbench;
use crate::report::query::{self, QueryReport};
use crate::report::Verdict;
use crate::run::{self, signals::note_early_signals, Gate};
use crate::target::Started;

/// `dbload timeit` and `dbload workload`, from their resolved configuration.
pub fn queries(cfg: QueryConfig, out: &mut dyn Write) -> Result<Finished<QueryReport>> {
    measured::<Queries>(&cfg, out)
}

struct Queries;

impl Command for Queries {
    type Config = QueryConfig;
    type Ends = Started;
    type Outcome = QueryOutcome;
    type Report = QueryReport;

    fn output(cfg: &QueryConfig) -> &OutputConfig {
        &cfg.output
    }

    fn name(cfg: &QueryConfig) -> &str {
        cfg.command
    }

    fn start(cfg: &QueryConfig, run_id: &str) -> Result<Started> {
        Started::new(&cfg.target, Some(run_id), note_early_signals)
    }

    fn threads(cfg: &QueryConfig) -> Option<usize> {
        cfg.threads
    }

    fn instances(_: &QueryConfig) -> Instances {
        Instances::Together { table: false }
    }

    async fn once(
        cfg: &QueryConfig,
        started: &Started,
        cancel: CancellationToken,
        gate: Option<Gate>,
    ) -> Result<QueryOutcome> {
        run::queries::queries(cfg, started.server(), cancel, gate).await
    }

    fn report(cfg: &QueryConfig, outcome: &QueryOutcome, started: &Started) -> QueryReport {
        QueryReport::new(cfg, outcome, started.url(), started.throwaway())
    }

    fn verdict(report: &mut QueryReport) -> &mut Verdict {
        &mut report.verdict
    }

    fn text(cfg: &QueryConfig) -> fn(&QueryReport) -> String {
        let scripts = cfg.phases.iter().flat_map(|p| p.iter()).any(|q| q.script.is_some());
        match (cfg.command, scripts, cfg.node_options.is_some()) {
            ("timeit", true, _) => pgbench::render,
            ("timeit", false, _) => query::render_timeit,
            (_, _, true) => crate::report::node_ingest::render_workload,
            _ => query::render_workload,
        }
    }

    fn preamble(cfg: &QueryConfig) -> Option<String> {
        cfg.node_options.as_ref().map(crate::report::node_ingest::options)
    }

    fn parts<'a>(_: &'a QueryReport, outcome: &'a QueryOutcome) -> Vec<(&'a str, &'a Figures)> {
        vec![("", &outcome.figures)]
    }
}
