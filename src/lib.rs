//! dbload: measure how fast SQL databases ingest data and answer queries.
//!
//! [`run()`](fn@run) is the library entry that `main` and the tests call: it takes
//! parsed arguments, runs the command and returns its report and exit code.

pub mod barrier;
pub mod cli;
pub mod clock;
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
pub mod format;
#[cfg(test)]
mod fuzz;
pub mod hint;
pub mod ident;
pub mod input;
pub mod k6;
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

use std::io::{Read, Write};

use anyhow::Result;

use cli::{Cli, Command};
use config::k6::K6Config;
use config::{MixedConfig, QueryConfig};

pub use command::{
    compare, completions, export, http, ingest, init, insert_fake_data, insert_from_sql, insert_json, k6_run, man,
    merged_report, mixed, queries, results_command, stop, Finished,
};

/// Runs a parsed command line, writing the report to `out`; returns the
/// exit code. Environment variables (`DATABASE_URL`, `PG*`) are read from
/// the process, statements for `timeit` from stdin when no `-s` is given.
pub fn run(cli: Cli, out: &mut dyn Write) -> Result<u8> {
    let env = |k: &str| std::env::var(k).ok();
    match cli.command {
        Command::Ingest(args) => ingest(args, &env, out).map(|o| o.exit_code),
        Command::Timeit(args) => {
            let stdin = std::io::stdin();
            // At a terminal nothing was piped: no statements to read there.
            let mut piped = (!std::io::IsTerminal::is_terminal(&stdin)).then(|| stdin.lock());
            let cfg = QueryConfig::timeit(args, &env, piped.as_mut().map(|s| s as &mut dyn Read))?;
            queries(cfg, out).map(|o| o.exit_code)
        }
        Command::Workload(args) => queries(QueryConfig::workload(args, &env)?, out).map(|o| o.exit_code),
        Command::Init(args) => init(args, &env, out),
        Command::Run(args) => mixed(MixedConfig::resolve(args, &env)?, out).map(|o| o.exit_code),
        Command::Http(args) => http(args, &env, out).map(|o| o.exit_code),
        Command::K6(cli::K6Args { command: cli::K6Command::Run(args) }) => {
            // A signal during the script's init code (which may never
            // return) is noted, and ends it with exit 130.
            run::signals::note_early_signals();
            let stdin = &mut std::io::stdin().lock();
            let cfg = K6Config::resolve(args, std::env::vars().collect(), stdin, &run::signals::noted)?;
            k6_run(cfg, out).map(|o| o.exit_code)
        }
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
