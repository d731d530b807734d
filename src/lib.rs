//! dbload: measure how fast SQL databases ingest data and answer queries.
//!
//! [`run()`](fn@run) is the library entry that `main` and the tests call: it takes
//! parsed arguments, runs the command and returns its report and exit code.

pub mod cli;
pub mod config;
pub mod dialect;
pub mod encode;
pub mod error;
pub mod model;
pub mod report;
pub mod run;
pub mod stats;
pub mod target;

use std::io::Write;

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use cli::{Cli, Command, IngestArgs, OutputFormat};
use config::{IngestConfig, TargetChoice};
use report::Report;
use target::LocalPostgres;

/// What a finished command leaves: its report and the exit code it earned.
#[derive(Debug)]
pub struct Outcome<R> {
    pub report: R,
    pub exit_code: u8,
}

/// Runs a parsed command line, writing the report to `out`; returns the
/// exit code. Environment variables (`DATABASE_URL`, `PG*`) are read from
/// the process.
pub fn run(cli: Cli, out: &mut dyn Write) -> Result<u8> {
    let env = |k: &str| std::env::var(k).ok();
    match cli.command {
        Command::Ingest(args) => ingest(args, &env, out).map(|o| o.exit_code),
    }
}

/// `dbload ingest` with an injectable environment.
pub fn ingest(args: IngestArgs, env: &dyn Fn(&str) -> Option<String>, out: &mut dyn Write) -> Result<Outcome<Report>> {
    let cfg = IngestConfig::resolve(args, env)?;
    // Started before the runtime, on this thread, which outlives the server.
    let local = match &cfg.target {
        TargetChoice::Local(opts) => Some(LocalPostgres::start(opts)?),
        _ => None,
    };
    let target = match (&cfg.target, &local) {
        (_, Some(l)) => Some(l.target()),
        (TargetChoice::Remote(t), None) => Some((**t).clone()),
        _ => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    let cancel = CancellationToken::new();
    let outcome = runtime.block_on(async {
        // Ctrl-C stops issuing batches; the run still reports what it did.
        let on_ctrl_c = cancel.clone();
        let signal = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                on_ctrl_c.cancel();
            }
        });
        let outcome = run::ingest(&cfg, target.as_ref(), cancel.clone()).await;
        signal.abort();
        outcome
    })?;
    drop(runtime);

    let url = target.as_ref().map(|t| t.redacted().to_string());
    let report = Report::ingest(&cfg, &outcome, url, local.is_some());
    match cfg.output {
        OutputFormat::Text => out.write_all(report::text::render(&report).as_bytes()).context("writing the report")?,
        OutputFormat::Json => report::json::write(&report, out)?,
    }
    if let Some(path) = &cfg.report_file {
        report::json::write_file(&report, path)?;
    }
    if let Some(l) = &local {
        if let TargetChoice::Local(opts) = &cfg.target {
            if opts.keep {
                eprintln!(
                    "dbload: the throwaway PostgreSQL keeps running at {} (data in {}); stop it with: kill -INT $(head -1 {}/postmaster.pid)",
                    l.url(),
                    l.data_dir().display(),
                    l.data_dir().display()
                );
            }
        }
    }
    Ok(Outcome { exit_code: report.exit_code, report })
}
