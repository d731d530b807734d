//! `dbload http`: requests measured on an HTTP endpoint, which its
//! configuration names (no database is started; `--observe` samples the
//! one behind the API).

use std::io::Write;

use anyhow::Result;
use tokio_util::sync::CancellationToken;

use super::{measured, Command, Finished, Instances};
use crate::cli::HttpArgs;
use crate::config::http::HttpConfig;
use crate::config::OutputConfig;
use crate::outcome::{Figures, HttpOutcome};
use crate::report::http::{self, HttpReport};
use crate::report::Verdict;
use crate::run::{self, Gate};
use crate::target::Target;

/// `dbload http` with an injectable environment.
pub fn http(args: HttpArgs, env: &dyn Fn(&str) -> Option<String>, out: &mut dyn Write) -> Result<Finished<HttpReport>> {
    measured::<Http>(&HttpConfig::resolve(args, env)?, out)
}

struct Http;

impl Command for Http {
    type Config = HttpConfig;
    /// `--observe`'s database, its connections naming the run.
    type Ends = Option<Target>;
    type Outcome = HttpOutcome;
    type Report = HttpReport;

    fn output(cfg: &HttpConfig) -> &OutputConfig {
        &cfg.output
    }

    fn name(_: &HttpConfig) -> &str {
        "http"
    }

    fn start(cfg: &HttpConfig, run_id: &str) -> Result<Option<Target>> {
        Ok(cfg.observe.as_ref().and_then(Target::given).map(|db| db.for_run(run_id)))
    }

    fn threads(cfg: &HttpConfig) -> Option<usize> {
        cfg.threads
    }

    fn instances(_: &HttpConfig) -> Instances {
        Instances::Together { table: false }
    }

    async fn once(
        cfg: &HttpConfig,
        observed: &Option<Target>,
        cancel: CancellationToken,
        gate: Option<Gate>,
    ) -> Result<HttpOutcome> {
        run::http::http(cfg, observed.as_ref(), cancel, gate).await
    }

    fn report(cfg: &HttpConfig, outcome: &HttpOutcome, _: &Option<Target>) -> HttpReport {
        HttpReport::new(cfg, outcome)
    }

    fn verdict(report: &mut HttpReport) -> &mut Verdict {
        &mut report.verdict
    }

    fn text(_: &HttpConfig) -> fn(&HttpReport) -> String {
        http::render
    }

    fn parts<'a>(_: &'a HttpReport, outcome: &'a HttpOutcome) -> Vec<(&'a str, &'a Figures)> {
        vec![("", &outcome.figures)]
    }
}
