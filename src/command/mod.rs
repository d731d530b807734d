//! The commands, from a resolved configuration to a written report. Every
//! command that measures goes through one pipeline, `measured`: its run's
//! start taken, its targets started, its run repeated (`--runs`) on one
//! runtime and started together with the other instances (`--instance`),
//! each run reported, the runs' histograms kept, the report written out
//! (`output.rs`). What differs between commands is only their `Command`:
//! a new measuring command is one `impl` and its `run/` module. The
//! commands that measure nothing (`init`, `compare`, `results`, ...) have
//! a small module each.

mod compare;
mod docs;
mod http;
mod ingest;
mod init;
mod k6;
mod mixed;
mod output;
mod queries;
mod stop;
mod store;
mod transfer;

pub use compare::compare;
pub use docs::{completions, man};
pub use http::http;
pub use ingest::{ingest, insert_fake_data, insert_json};
pub use init::init;
pub use k6::k6_run;
pub use mixed::mixed;
pub use queries::queries;
pub use stop::stop;
pub use store::{merged_report, results_command};
pub use transfer::{export, insert_from_sql};

use std::borrow::Cow;
use std::io::Write;

use anyhow::Result;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::config::OutputConfig;
use crate::outcome::Figures;
use crate::report::Verdict;
use crate::run::scale::together;
use crate::run::Gate;

/// What a finished command leaves: its report and the exit code it earned
/// (not to be mistaken for what a run found, [`crate::outcome`]).
#[derive(Debug)]
pub struct Finished<R> {
    pub report: R,
    pub exit_code: u8,
}

/// How a command takes part in a distributed run (`--instance`).
enum Instances {
    /// It does not split its work: it runs as it is.
    Alone,
    /// Its workers start together with the other instances'; `table`:
    /// instance 0 makes the table that the others write to.
    Together { table: bool },
}

/// A command that measures: what [`measured`] needs of it.
trait Command {
    /// Its resolved configuration, read-only: a run that must start
    /// otherwise than the first gets a copy from [`Command::before_run`].
    type Config: Clone;
    /// What its runs reach, started once before them (a throwaway server
    /// lives as long as this value).
    type Ends;
    /// What one run found.
    type Outcome;
    type Report: Serialize;

    fn output(cfg: &Self::Config) -> &OutputConfig;

    /// Its name, as its report's header and its metrics' labels say it.
    fn name(cfg: &Self::Config) -> &str;

    /// Starts what the runs reach, its connections naming `run_id`;
    /// called before the runtime, on the thread that outlives the
    /// throwaway server (see `throwaway`).
    fn start(cfg: &Self::Config, run_id: &str) -> Result<Self::Ends>;

    /// The threads its workers and runtime run on (none: one per CPU).
    fn threads(_: &Self::Config) -> Option<usize> {
        None
    }

    fn instances(_: &Self::Config) -> Instances {
        Instances::Alone
    }

    /// Called just before run `run` of `--runs` (1-based): the
    /// configuration that run runs with (and reports).
    fn before_run(cfg: &Self::Config, _run: u32) -> Result<Cow<'_, Self::Config>> {
        Ok(Cow::Borrowed(cfg))
    }

    /// One run; `gate` holds its workers until every instance starts.
    async fn once(
        cfg: &Self::Config,
        ends: &Self::Ends,
        cancel: CancellationToken,
        gate: Option<Gate>,
    ) -> Result<Self::Outcome>;

    fn report(cfg: &Self::Config, outcome: &Self::Outcome, ends: &Self::Ends) -> Self::Report;

    fn verdict(report: &mut Self::Report) -> &mut Verdict;

    /// Its report's text renderer.
    fn text(cfg: &Self::Config) -> fn(&Self::Report) -> String;

    /// A run's measured parts, named as its report names them (`""` for a
    /// command of one part), whose histograms the results store keeps.
    fn parts<'a>(report: &'a Self::Report, outcome: &'a Self::Outcome) -> Vec<(&'a str, &'a Figures)>;

    /// What it prints on stdout before its runs, in text output: a peer's
    /// block that its users read at the start (nodeIngestBench's Options).
    fn preamble(_: &Self::Config) -> Option<String> {
        None
    }

    /// What it says on stderr once its report is written.
    fn after_report(_: &Self::Report) {}
}

/// Runs command `C` on `cfg` as often as `--runs` says and writes its
/// report to `out` (see [`output::emit`]).
fn measured<C: Command>(cfg: &C::Config, out: &mut dyn Write) -> Result<Finished<C::Report>> {
    let mut begun = output::start();
    let endpoint = output::metrics_endpoint(C::output(cfg), C::name(cfg), &begun)?;
    let ends = C::start(cfg, &begun.run_id())?;
    if let Some(text) = C::preamble(cfg).filter(|_| C::output(cfg).format == crate::cli::OutputFormat::Text) {
        // A reader that has gone is no failure (see `console`): the run goes on.
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    }
    let runs = output::repeated(C::output(cfg), C::threads(cfg), async |n, cancel| {
        let cfg = C::before_run(cfg, n)?;
        let once = async |gate| C::once(&cfg, &ends, cancel.clone(), gate).await;
        let run = async {
            anyhow::Ok(match C::instances(&cfg) {
                Instances::Alone => once(None).await?,
                Instances::Together { table } => {
                    let (outcome, instance) = together(C::output(&cfg), table, &cancel, once).await?;
                    begun.instance = instance;
                    outcome
                }
            })
        };
        let outcome = match &endpoint {
            Some(endpoint) => endpoint.during(n, run).await?,
            None => run.await?,
        };
        Ok((cfg, outcome))
    })?;
    let reports: Vec<C::Report> = runs.done.iter().map(|(run_cfg, o)| C::report(run_cfg, o, &ends)).collect();
    let parts = reports.iter().zip(&runs.done).map(|(r, (_, o))| C::parts(r, o));
    let kept = output::kept_histograms(&begun, &runs.began, parts);
    let (exit_code, report) =
        output::emit(C::output(cfg), reports, runs.failed, C::verdict, C::text(cfg), out, (begun, kept))?;
    C::after_report(&report);
    Ok(Finished { exit_code, report })
}
