//! Command-line definitions only: raw flags as the user typed them, no I/O.
//! `config` resolves them, once, into what the run uses. One file per
//! command family; the options every command shares are here.

mod compare;
mod data;
mod http;
mod ingest;
mod init;
mod k6;
pub mod mistake;
mod node_ingest;
mod query;
mod results;
mod scale;
mod short_help;
mod sweep;
mod transfer;
pub mod values;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use short_help::{most_used, SEE_HELP};

pub use compare::CompareArgs;
use compare::{COMPARE_EXAMPLES, COMPARE_MOST_USED};
pub use data::{BulkArgs, InsertFakeDataArgs, InsertJsonArgs};
use data::{INSERT_FAKE_DATA_EXAMPLES, INSERT_FAKE_DATA_MOST_USED, INSERT_JSON_EXAMPLES, INSERT_JSON_MOST_USED};
pub use http::HttpArgs;
use http::{HTTP_EXAMPLES, HTTP_MOST_USED};
pub use ingest::{DbArgs, IngestArgs};
use ingest::{INGEST_EXAMPLES, INGEST_MOST_USED};
pub use init::InitArgs;
use init::{INIT_EXAMPLES, INIT_MOST_USED};
pub use k6::{K6Args, K6Command, K6RunArgs};
pub use node_ingest::{NodeIngestArgs, NodeQueryArgs};
pub use query::{PgbenchLogArgs, QueryRunArgs, Repeat, RunArgs, TimeitArgs, WorkloadArgs};
use query::{RUN_EXAMPLES, RUN_MOST_USED, TIMEIT_EXAMPLES, TIMEIT_MOST_USED, WORKLOAD_EXAMPLES, WORKLOAD_MOST_USED};
use results::RESULTS_EXAMPLES;
pub use results::{ResultsAction, ResultsArgs, ResultsCommandArgs, StoreArgs};
use scale::REPORT_EXAMPLES;
pub use scale::{ReportArgs, ScaleArgs};
pub use sweep::SweepArgs;
use sweep::{SWEEP_EXAMPLES, SWEEP_MOST_USED};
pub use transfer::{ExportArgs, FromSqlMethod, InsertFromSqlArgs};
use transfer::{EXPORT_EXAMPLES, EXPORT_MOST_USED, INSERT_FROM_SQL_EXAMPLES, INSERT_FROM_SQL_MOST_USED};

const ABOUT: &str = "Measure how fast SQL databases ingest data and answer queries.";

#[derive(Debug, Parser)]
#[command(name = "dbload", version, about = ABOUT, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate time-series rows and write them as fast as the target takes them.
    #[command(after_help = SEE_HELP, after_long_help = INGEST_EXAMPLES, mut_args = most_used(INGEST_MOST_USED))]
    Ingest(IngestArgs),
    /// Time statements: latency percentiles and queries/s, in cr8's layout.
    #[command(after_help = SEE_HELP, after_long_help = TIMEIT_EXAMPLES, mut_args = most_used(TIMEIT_MOST_USED))]
    Timeit(TimeitArgs),
    /// Run a weighted mix of queries from a YAML file (nodeIngestBench's queries.yml works), or
    /// TSBS's cpu queries (--suite tsbs-cpu).
    #[command(after_help = SEE_HELP, after_long_help = WORKLOAD_EXAMPLES, mut_args = most_used(WORKLOAD_MOST_USED))]
    Workload(WorkloadArgs),
    /// Make and fill pgbench's tables, as `pgbench -i -s N` does (binary COPY), for --builtin scripts.
    #[command(after_help = SEE_HELP, after_long_help = INIT_EXAMPLES, mut_args = most_used(INIT_MOST_USED))]
    Init(InitArgs),
    /// Ingest and query workloads at the same time: query latency under write load.
    #[command(after_help = SEE_HELP, after_long_help = RUN_EXAMPLES, mut_args = most_used(RUN_MOST_USED))]
    Run(RunArgs),
    /// Load an HTTP endpoint (the API in front of a database), k6-style: VUs or a fixed rate,
    /// templated bodies, checks.
    #[command(after_help = SEE_HELP, after_long_help = HTTP_EXAMPLES, mut_args = most_used(HTTP_MOST_USED))]
    Http(HttpArgs),
    /// Run k6 scripts unchanged: `dbload k6 run script.js` with k6's flags and summary.
    K6(K6Args),
    /// Fill an existing table with fake rows that fit its columns (cr8's insert-fake-data).
    #[command(after_help = SEE_HELP, after_long_help = INSERT_FAKE_DATA_EXAMPLES, mut_args = most_used(INSERT_FAKE_DATA_MOST_USED))]
    InsertFakeData(InsertFakeDataArgs),
    /// Insert JSON rows (lines, arrays, gzip) into an existing table, measuring it (cr8's insert-json).
    #[command(after_help = SEE_HELP, after_long_help = INSERT_JSON_EXAMPLES, mut_args = most_used(INSERT_JSON_MOST_USED))]
    InsertJson(InsertJsonArgs),
    /// Export a table or a query to JSON lines or CSV files, one per worker, streamed (gzip optional).
    #[command(after_help = SEE_HELP, after_long_help = EXPORT_EXAMPLES, mut_args = most_used(EXPORT_MOST_USED))]
    Export(ExportArgs),
    /// Copy a query's rows from a source server into an existing table, with the target's fastest method.
    #[command(after_help = SEE_HELP, after_long_help = INSERT_FROM_SQL_EXAMPLES, mut_args = most_used(INSERT_FROM_SQL_MOST_USED))]
    InsertFromSql(InsertFromSqlArgs),
    /// Compare reports side by side: each headline figure's ratio to the first report's, and
    /// whether it is better, worse or within noise.
    #[command(after_help = SEE_HELP, after_long_help = COMPARE_EXAMPLES, mut_args = most_used(COMPARE_MOST_USED))]
    Compare(CompareArgs),
    /// Run a command over a grid of settings (--vary) and name the best point, or find the highest
    /// rate it sustains within an SLO (--find-max-rate).
    #[command(after_help = SEE_HELP, after_long_help = SWEEP_EXAMPLES, mut_args = most_used(SWEEP_MOST_USED))]
    Sweep(SweepArgs),
    /// Stop a throwaway PostgreSQL that --keep left running, and remove its directory.
    Stop(StopArgs),
    /// List or show the runs kept in the results store (a directory, or a database).
    #[command(after_help = RESULTS_EXAMPLES)]
    Results(ResultsCommandArgs),
    /// Merge the instances of a distributed run (--instance, --run-id) into one report: counts
    /// and timelines added, latency percentiles from the histograms added.
    ///
    /// An ingest's server cost (the table's size, and each node's shards, rows and bytes on
    /// Citus and CrateDB) is the one measured by the instance that ended last, the only one that
    /// saw every instance's rows.
    #[command(after_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// Print the shell completion script for bash, zsh, fish, elvish or powershell.
    #[command(after_help = COMPLETIONS_EXAMPLES)]
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one per command into DIR (`make man`: target/man).
    #[command(hide = true)]
    Man(ManArgs),
}

const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  # bash: for your user (bash-completion loads it on demand), or this shell
  dbload completions bash > ~/.local/share/bash-completion/completions/dbload
  source <(dbload completions bash)

  # zsh: into a directory of your $fpath, then start a new shell
  dbload completions zsh > ~/.zfunc/_dbload

  # fish
  dbload completions fish > ~/.config/fish/completions/dbload.fish";

/// `dbload completions SHELL`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete dbload's commands and flags in.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// `dbload man [DIR]`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write dbload.1 and a page per command (dbload-ingest.1, ...) here, instead of printing
    /// dbload.1 on stdout.
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `dbload stop DIR`.
#[derive(Debug, Args)]
pub struct StopArgs {
    /// The server's directory, as --keep printed it. A directory that dbload did not make is
    /// refused.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// k6's stages: how the load changes during the run. Either replaces --duration: the run lasts
/// the stages' total.
#[derive(Debug, Args, Clone, Default)]
pub struct StagesArgs {
    /// Ramp the workers busy at once, k6's ramping-vus: TIME:VUS,... (e.g. 30s:10,1m:50,30s:0).
    /// Each stage goes linearly from the target before it (at the start: the connections flag,
    /// else 1, as k6's startVUs) to its own over its time; 0s jumps. A closed loop: as many
    /// workers connect as the highest target, and those beyond the current one wait. The run
    /// lasts the stages' total (no --duration); the report shows each stage.
    #[arg(long, visible_alias = "stage", value_name = "TIME:VUS,...", help_heading = "Run")]
    pub stages: Option<String>,

    /// Ramp the arrival rate, k6's ramping-arrival-rate: TIME:PER_SEC,... (e.g.
    /// 30s:100,1m:1000,30s:1000), per second as --rate counts (rows for ingest). From 0 (k6's
    /// startRate), linearly within each stage; an open loop like --rate, latency from each
    /// intended start. The connections flag bounds what is in flight, as with --rate. The run
    /// lasts the stages' total (no --duration); the report shows each stage.
    #[arg(long, value_name = "TIME:PER_SEC,...", conflicts_with = "stages", help_heading = "Run")]
    pub rate_stages: Option<String>,
}

impl StagesArgs {
    /// Whether stages were given: they bound the run in time, as --duration does.
    pub fn given(&self) -> bool {
        self.stages.is_some() || self.rate_stages.is_some()
    }
}

/// Where the load goes.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Target")]
pub struct TargetArgs {
    /// Target as a libpq URL or conninfo string (postgres://user@host:port/db?sslmode=...), or
    /// CrateDB's HTTP endpoint (cratedb://user@host1:4200,host2:4200). Without it, DATABASE_URL,
    /// then PG* variables (when PGHOST or PGSERVICE is set), then nodeIngestBench's CRATE_HOST,
    /// CRATE_PORT, CRATE_USER, CRATE_PASSWORD, CRATE_SSL (environment, or ./.env as it reads
    /// them); with none of them a throwaway local PostgreSQL is
    /// started and removed at exit. A password in the URL is visible to every local user (ps):
    /// prefer ~/.pgpass or PGPASSFILE, PGSERVICE, or PGPASSWORD, read as libpq reads them.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,

    /// The engine behind the target (auto: asked from the server: version, extensions,
    /// CrateDB's banner). With an http(s):// URL, cratedb says it is CrateDB's HTTP endpoint.
    #[arg(long, value_enum, default_value_t = EngineChoice::Auto)]
    pub engine: EngineChoice,

    /// CrateDB over https: encrypt without verifying the server's certificate (said in the report).
    #[arg(long)]
    pub insecure: bool,

    /// Leave the throwaway PostgreSQL running at exit, and print how to connect to it (its password
    /// is in a 0600 password file in its directory), its size, and how to stop it (dbload stop DIR).
    #[arg(long)]
    pub keep: bool,
}

/// `--engine`: a named engine, or detection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineChoice {
    Auto,
    Postgres,
    Timescaledb,
    Citus,
    Cratedb,
}

impl EngineChoice {
    /// The engine named, if one is.
    pub fn engine(self) -> Option<crate::dialect::Engine> {
        use crate::dialect::Engine;
        match self {
            EngineChoice::Auto => None,
            EngineChoice::Postgres => Some(Engine::Postgres),
            EngineChoice::Timescaledb => Some(Engine::Timescaledb),
            EngineChoice::Citus => Some(Engine::Citus),
            EngineChoice::Cratedb => Some(Engine::Cratedb),
        }
    }
}

/// What the run leaves behind.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// Format of the report on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,

    /// Also write the JSON report to this file (checked writable before the run; an existing
    /// file is replaced only at the end).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,

    /// Also write an HTML report with charts to this file: one self-contained page to share,
    /// which opens offline (checked writable before the run).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// No progress bar, no progress lines.
    #[arg(short, long)]
    pub quiet: bool,

    /// Progress as one line on stderr every SECONDS (pgbench's -P: `progress: 5.0 s, 1234.5 tps,
    /// lat 0.812 ms stddev 0.105, 0 failed`, with `lag` under --rate, then dbload's p99), instead
    /// of the bar. Without it: the bar on a terminal, a line every 10 s when stderr is not one.
    #[arg(short = 'P', long, value_name = "SECONDS", value_parser = values::seconds_or_duration, conflicts_with = "quiet")]
    pub progress: Option<std::time::Duration>,

    /// Exit 1 when this holds for the report (repeatable), e.g. 'p99_ms > 50' or
    /// 'rows_per_sec < 100000': a field of the JSON report, a comparison, a number. The field
    /// is checked against the report's schema before the run.
    #[arg(long, value_name = "EXPR")]
    pub fail_if: Vec<String>,

    /// Serve the run's figures as Prometheus text at http://ADDR/metrics while it runs
    /// (operations, rows, errors by class, a latency histogram, the pacer's lag, the server's
    /// latest second, the client's CPU): HOST:PORT, :PORT (every interface) or 0 (a free port,
    /// printed). It ends with the command. See docs/metrics.md.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<String>,

    /// How often the server is sampled for the report's Server section (ingest, timeit,
    /// workload, run, http --observe): seconds or a time, 100ms to 60s. Faster samples of one
    /// second add up in it; slower ones leave the seconds between them unknown.
    #[arg(long, value_name = "TIME", default_value = "1s", value_parser = values::seconds_or_duration)]
    pub sample_interval: std::time::Duration,

    #[command(flatten)]
    pub results: ResultsArgs,

    #[command(flatten)]
    pub scale: ScaleArgs,

    /// Run the same configuration N times (ingest: a fresh table each time unless --append) and
    /// report each run's headline figures with their median, min, max and a 95% interval of the
    /// median; --fail-if then applies to the median. Ctrl-C keeps the runs done.
    #[arg(long, value_name = "N", default_value_t = 1, help_heading = "Repeat")]
    pub runs: u32,

    /// With --runs: wait this long between runs (e.g. 10s), to let the server settle.
    #[arg(long, value_name = "TIME", value_parser = humantime::parse_duration, help_heading = "Repeat")]
    pub pause: Option<std::time::Duration>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModelName {
    /// tsdbperf's: time, device_id, m1..mN double precision
    Measurement,
    /// TSBS cpu-only (nodeIngestBench): ts, tags jsonb (a host's hostname, region ...),
    /// usage_* integers; a series per host
    Cpu,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    /// Issue 17, item 6: an example that the terminal wraps breaks when it
    /// is pasted. Every indented line of a command's after-help (examples,
    /// file formats, template functions) fits in 80 columns, so that clap
    /// never wraps it; prose between them is left for clap to wrap.
    #[test]
    fn help_examples_fit_80_columns() {
        let mut long = Vec::new();
        let mut commands = vec![Cli::command()];
        while let Some(c) = commands.pop() {
            for text in [c.get_after_help(), c.get_after_long_help()].into_iter().flatten() {
                let text = text.to_string();
                let wrapped = text.lines().filter(|l| l.starts_with(' ') && l.chars().count() > 80);
                long.extend(wrapped.map(|l| format!("{}: {l}", c.get_name())));
            }
            commands.extend(c.get_subcommands().cloned());
        }
        assert!(long.is_empty(), "lines that clap wraps at 80 columns:\n{}", long.join("\n"));
    }

    /// Issue 17, item 6: a flag's default is stated once, in its own help.
    /// The methods' descriptions are shared by ingest, insert-fake-data and
    /// insert-json, whose defaults differ: they name none.
    #[test]
    fn method_defaults_are_stated_once() {
        for name in ["ingest", "insert-fake-data", "insert-json"] {
            let command = Cli::command();
            let method = command
                .find_subcommand(name)
                .and_then(|c| c.get_arguments().find(|a| a.get_id() == "method").cloned())
                .unwrap_or_else(|| panic!("{name} --method"));
            let values = method.get_possible_values();
            let texts = std::iter::once(method.get_help().map(ToString::to_string).unwrap_or_default())
                .chain(values.iter().filter_map(|v| v.get_help().map(ToString::to_string)));
            let said: Vec<String> = texts.filter(|t| t.contains("default")).collect();
            assert_eq!(said.len(), 1, "{name} --method states its default {} times: {said:?}", said.len());
        }
    }

    /// Every command and every command of a command (`results list`), by its path.
    fn command_paths() -> Vec<Vec<String>> {
        let mut paths: Vec<Vec<String>> = Vec::new();
        for command in Cli::command().get_subcommands().filter(|c| c.get_name() != "help") {
            paths.push(vec![command.get_name().to_string()]);
            for sub in command.get_subcommands().filter(|c| c.get_name() != "help") {
                paths.push(vec![command.get_name().to_string(), sub.get_name().to_string()]);
            }
        }
        paths
    }

    /// The help `argv` asks for, as printed `width` columns wide.
    fn help_at(width: usize, argv: &[&str]) -> String {
        let err = Cli::command().term_width(width).try_get_matches_from(argv).unwrap_err();
        err.render().to_string()
    }

    /// Issue 35: `-h` fits on a screen (40 lines of an 80-column terminal)
    /// for every command, and `--help` still lists every flag.
    #[test]
    fn short_help_fits_a_screen_and_long_help_lists_every_flag() {
        let mut wrong = Vec::new();
        for path in command_paths() {
            let argv =
                |flag| ["dbload"].into_iter().chain(path.iter().map(String::as_str)).chain([flag]).collect::<Vec<_>>();
            let short = help_at(80, &argv("-h"));
            if short.lines().count() > 40 {
                wrong.push(format!("dbload {} -h: {} lines", path.join(" "), short.lines().count()));
            }
            let long = help_at(80, &argv("--help"));
            let mut command = Cli::command();
            for name in &path {
                command = command.find_subcommand(name).expect("a command of the path").clone();
            }
            for arg in command.get_arguments().filter(|a| !a.is_hide_set() && !a.is_positional()) {
                let flag = arg.get_long().map(|l| format!("--{l}")).or(arg.get_short().map(|s| format!("-{s}")));
                if let Some(flag) = flag.filter(|f| !long.contains(f.as_str())) {
                    wrong.push(format!("dbload {} --help does not list {flag}", path.join(" ")));
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// `dbload --help` and every command's `--help` and `-h`, as printed at
    /// a fixed width: a flag or text changed by accident shows in the diff.
    #[test]
    fn every_command_help() {
        let help = |argv: &[&str]| help_at(100, argv);
        insta::assert_snapshot!("dbload_help", help(&["dbload", "--help"]));
        for path in command_paths() {
            for (flag, suffix) in [("--help", "help"), ("-h", "short_help")] {
                let name = format!("{}_{suffix}", path.join("_").replace('-', "_"));
                let argv: Vec<&str> =
                    ["dbload"].into_iter().chain(path.iter().map(String::as_str)).chain([flag]).collect();
                insta::assert_snapshot!(name, help(&argv));
            }
        }
    }
}
