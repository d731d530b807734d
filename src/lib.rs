//! dbload: measure how fast SQL databases ingest data and answer queries.
//!
//! [`run()`](fn@run) is the library entry that `main` and the tests call: it takes
//! parsed arguments, runs the command and returns its report and exit code.

pub mod cli;
pub mod command;
pub mod compare;
pub mod config;
pub mod console;
#[cfg(test)]
mod counting_alloc;
pub mod dialect;
pub mod driver;
pub mod encode;
pub mod error;
pub mod file_cap;
#[cfg(test)]
mod fuzz;
pub mod ident;
pub mod input;
pub mod model;
pub mod op;
pub mod outcome;
pub mod redact;
pub mod report;
pub mod results;
pub mod run;
pub mod sqltext;
pub mod stats;
pub mod sweep;
pub mod target;
pub mod throwaway;
pub mod workload;
mod yaml;

use std::io::Write;

use anyhow::Result;

use cli::{Cli, Command};
use config::{MixedConfig, QueryConfig};

use anyhow::Context;
use cli::OutputFormat;
use run::signals::{note_early_signals, with_threads};
use target::Started;

pub use command::{export, http, ingest, insert_fake_data, insert_from_sql, insert_json, mixed, queries, Finished};

/// Runs a parsed command line, writing the report to `out`; returns the
/// exit code. Environment variables (`DATABASE_URL`, `PG*`) are read from
/// the process, statements for `timeit` from stdin when no `-s` is given.
pub fn run(cli: Cli, out: &mut dyn Write) -> Result<u8> {
    let env = |k: &str| std::env::var(k).ok();
    match cli.command {
        Command::Ingest(args) => ingest(args, &env, out).map(|o| o.exit_code),
        Command::Timeit(args) => {
            let cfg = QueryConfig::timeit(args, &env, &mut std::io::stdin().lock())?;
            queries(cfg, out).map(|o| o.exit_code)
        }
        Command::Workload(args) => queries(QueryConfig::workload(args, &env)?, out).map(|o| o.exit_code),
        Command::Init(args) => init(args, &env, out),
        Command::Run(args) => mixed(MixedConfig::resolve(args, &env)?, out).map(|o| o.exit_code),
        Command::Http(args) => http(args, &env, out).map(|o| o.exit_code),
        Command::InsertFakeData(args) => insert_fake_data(args, &env, out).map(|o| o.exit_code),
        Command::InsertJson(args) => insert_json(args, &env, out).map(|o| o.exit_code),
        Command::Export(args) => export(args, &env, out).map(|o| o.exit_code),
        Command::InsertFromSql(args) => insert_from_sql(args, &env, out).map(|o| o.exit_code),
        Command::Compare(args) => compare(args, &env, out),
        Command::Sweep(args) => {
            // A stop signal is noted from the start and stays noted: the
            // point running stops on it, and no point starts after it.
            run::signals::note_early_signals();
            sweep::run(args, run, &run::signals::noted, out)
        }
        Command::Stop(args) => stop(&args.dir, out),
        Command::Results(args) => results_command(args, &env, out),
        Command::Completions(args) => completions(args.shell, out),
        Command::Man(args) => man(args.dir.as_deref(), out),
        Command::Report(args) => merged_report(args, &env, out),
    }
}

/// `dbload init`: pgbench's tables on the target; exit 130 when
/// interrupted while filling them.
pub fn init(args: cli::InitArgs, env: &dyn Fn(&str) -> Option<String>, out: &mut dyn Write) -> Result<u8> {
    let cfg = config::init::InitConfig::resolve(args, env)?;
    let started = Started::new(&cfg.target, note_early_signals)?;
    let done = with_threads(None, async |cancel| run::init::init(&cfg, started.server(), cancel).await)?;
    let printed = out.write_all(report::init::render(&done).as_bytes()).context("writing the report");
    console::printed(out, printed)?;
    Ok(if done.interrupted { error::exit::INTERRUPTED } else { error::exit::OK })
}

/// `dbload completions SHELL`: the script, made from the clap definitions
/// so that it knows every command and flag of this build.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn Write) -> Result<u8> {
    use clap::CommandFactory;
    // Made in memory first: clap_complete panics on a failed write (a
    // closed pipe), where dbload reports it.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "dbload", &mut script);
    out.write_all(&script).context("writing to stdout")?;
    Ok(error::exit::OK)
}

/// `dbload man [DIR]`: dbload(1) on `out`, or every command's page into
/// `dir`, made from the clap definitions (the same text as `--help`).
pub fn man(dir: Option<&std::path::Path>, out: &mut dyn Write) -> Result<u8> {
    use clap::CommandFactory;
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .and_then(|()| clap_mangen::generate_to(Cli::command(), dir))
                .with_context(|| format!("writing the man pages into {}", dir.display()))?;
        }
        None => clap_mangen::Man::new(Cli::command()).render(out).context("writing to stdout")?,
    }
    Ok(error::exit::OK)
}

/// `dbload report --run-id ID`: the instances of a distributed run merged
/// into one report; exit 1 when one is missing or failed.
pub fn merged_report(args: cli::ReportArgs, env: &dyn Fn(&str) -> Option<String>, out: &mut dyn Write) -> Result<u8> {
    if let Some(path) = &args.html {
        config::check_writable("--html", path)?;
    }
    let store = config::results::Store::resolve(args.store, env)?;
    let (merged, exit_code) = results::merged(&store, &args.run_id)?;
    if let Some(path) = &args.html {
        report::html::write_file(&merged, path)?;
    }
    let printed = match args.output {
        OutputFormat::Text => out.write_all(results::merge::render(&merged).as_bytes()).context("writing the report"),
        OutputFormat::Json => report::json::write(&merged, out),
    };
    console::printed(out, printed)?;
    Ok(exit_code)
}

/// `dbload compare A B [C …]`: exit 1 when a `--fail-if-worse` limit is
/// breached, 2 for a report that cannot be read, an unknown run id or a
/// bad limit.
pub fn compare(args: cli::CompareArgs, env: &dyn Fn(&str) -> Option<String>, out: &mut dyn Write) -> Result<u8> {
    let limits = args.fail_if_worse.iter().map(|s| compare::WorseLimit::parse(s)).collect::<Result<Vec<_>>>()?;
    if let Some(path) = &args.html {
        config::check_writable("--html", path)?;
    }
    // The store is resolved only when a run of it is named: report files
    // alone need no data directory.
    let store = || config::results::Store::resolve(args.store.clone(), env);
    let mut reports = Vec::new();
    for given in &args.reports {
        let path = std::path::Path::new(given);
        reports.push(if path.exists() || !looks_like_run_id(given) {
            compare::Loaded::from_file(path)?
        } else {
            compare::Loaded::from_kept(results::fetch(&store()?, given, "compare")?)?
        });
    }
    if let Some(n) = args.last {
        for kept in results::last(&store()?, n as usize)? {
            reports.push(compare::Loaded::from_kept(kept)?);
        }
    }
    compare::run(reports, &limits, args.html.as_deref(), args.output == cli::OutputFormat::Json, out)
}

/// An argument of `compare` that is no file and reads as the start of a
/// run_id (hex digits and dashes) names a run of the results store.
fn looks_like_run_id(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}

/// `dbload stop DIR`: stops a server that `--keep` left running and removes
/// its directory.
pub fn stop(dir: &std::path::Path, out: &mut dyn Write) -> Result<u8> {
    let freed = throwaway::stop_kept(dir)?;
    let freed = throwaway::human_size(freed);
    writeln!(out, "dbload: stopped the throwaway PostgreSQL in {} and removed it ({freed} freed)", dir.display())
        .context("writing to stdout")?;
    Ok(error::exit::OK)
}

/// `dbload results list|show`: reads the store the flags name.
pub fn results_command(
    args: cli::ResultsCommandArgs,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<u8> {
    use config::results::Store;
    let text = match args.action {
        cli::ResultsAction::List { store, limit } => results::list(&Store::resolve(store, env)?, limit)?,
        cli::ResultsAction::Show { id, store, histograms } => {
            results::show(&Store::resolve(store, env)?, &id, histograms)?
        }
    };
    out.write_all(text.as_bytes()).context("writing to stdout")?;
    Ok(error::exit::OK)
}
