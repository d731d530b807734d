//! `dbload k6 run`: a k6 script run against the endpoints it names (no
//! database is started or reached), its summary in k6's words, and
//! `--summary-export` written beside the report.

use std::io::Write;

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use super::{measured, Command, Finished, Instances};
use crate::cli::OutputFormat;
use crate::config::k6::K6Config;
use crate::config::OutputConfig;
use crate::outcome::{Figures, K6Outcome};
use crate::report::k6::{self, K6Report};
use crate::report::Verdict;
use crate::run::{self, Gate};

/// `dbload k6 run` on a resolved configuration.
pub fn k6_run(cfg: K6Config, out: &mut dyn Write) -> Result<Finished<K6Report>> {
    let finished = measured::<K6>(&cfg, out)?;
    if let Some(path) = &cfg.summary_export {
        let text = serde_json::to_string_pretty(&finished.report.summary_export())?;
        std::fs::write(path, text).with_context(|| format!("--summary-export: cannot write {}", path.display()))?;
    }
    Ok(finished)
}

struct K6;

impl Command for K6 {
    type Config = K6Config;
    type Ends = ();
    type Outcome = K6Outcome;
    type Report = K6Report;

    fn output(cfg: &K6Config) -> &OutputConfig {
        &cfg.output
    }

    fn name(_: &K6Config) -> &str {
        "k6 run"
    }

    fn start(_: &K6Config, _: &str) -> Result<()> {
        Ok(())
    }

    fn threads(cfg: &K6Config) -> Option<usize> {
        cfg.threads
    }

    fn instances(_: &K6Config) -> Instances {
        Instances::Together { table: false }
    }

    async fn once(cfg: &K6Config, _: &(), cancel: CancellationToken, gate: Option<Gate>) -> Result<K6Outcome> {
        run::k6::k6(cfg, cancel, gate).await
    }

    /// The report; a script that exports `handleSummary` is given its
    /// summary data, and what it returns as `stdout` is printed in place of
    /// k6's summary (on stderr with `--output json`, whose stdout is the report).
    fn report(cfg: &K6Config, outcome: &K6Outcome, _: &()) -> K6Report {
        let mut report = K6Report::new(cfg, outcome);
        if cfg.handle_summary {
            let printed = crate::k6::summary::handle(
                &cfg.script,
                &cfg.env,
                cfg.insecure,
                &k6::summary_data(&report),
                k6::text_summary,
            );
            match (printed, cfg.output.format) {
                (Some(printed), OutputFormat::Json) => crate::console::text(&printed),
                (printed, _) => report.handled_summary = printed,
            }
        }
        report
    }

    fn verdict(report: &mut K6Report) -> &mut Verdict {
        &mut report.verdict
    }

    fn text(_: &K6Config) -> fn(&K6Report) -> String {
        k6::render
    }

    fn parts<'a>(_: &'a K6Report, outcome: &'a K6Outcome) -> Vec<(&'a str, &'a Figures)> {
        vec![("", &outcome.figures)]
    }
}
