//! The results store's flags (on every measuring command) and `dbload
//! results list|show`, which read it back.

use std::path::PathBuf;

use clap::{Args, Subcommand};

pub(super) const RESULTS_EXAMPLES: &str = "\
Examples:
  # The last runs kept in the default store (~/.local/share/dbload/results)
  dbload results list

  # The timeit runs of the last two hours tagged setup=replica
  dbload results list --command timeit --tag setup=replica --since 2h

  # One run's report as it was printed, by its run_id (or the start of it)
  dbload results show 0193a1b2-7c4e

  # Its JSON report, and its HTML page
  dbload results show 0193a1b2-7c4e --output json --html run.html

  # The runs a team keeps in a database (--results-url on its runs)
  dbload results list --results-url postgres://bench@results-db/bench --limit 50";

/// Where a run is kept: every measuring command's flags.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Results store")]
pub struct ResultsArgs {
    /// Keep the run (its JSON report and latency histograms) in DIR rather than in
    /// $XDG_DATA_HOME/dbload/results (~/.local/share/dbload/results), the default.
    #[arg(long, value_name = "DIR", conflicts_with = "no_results")]
    pub results: Option<PathBuf>,

    /// Keep nothing of this run in the results directory.
    #[arg(long)]
    pub no_results: bool,

    /// Also insert the run into the tables dbload_runs and dbload_timeline of this
    /// PostgreSQL-family database (created if missing; see docs/results.md), e.g.
    /// postgres://bench@results-db/bench. A failure to store is a warning, not a failed run.
    #[arg(long, value_name = "URL")]
    pub results_url: Option<String>,

    /// Tag the run with KEY=VALUE (repeatable, e.g. --tag setup=replica --tag pr=1234): kept in
    /// the report's run.tags and in the results store, shown by dbload results list. dbload
    /// sweep tags each of its runs sweep=ID and point=FLAG=VALUE,...
    #[arg(long, value_name = "KEY=VALUE")]
    pub tag: Vec<String>,
}

/// `dbload results`.
#[derive(Debug, Args)]
pub struct ResultsCommandArgs {
    #[command(subcommand)]
    pub action: ResultsAction,
}

#[derive(Debug, Subcommand)]
pub enum ResultsAction {
    /// The runs kept, newest first: run_id, start, command, status, throughput, p99, tags, and
    /// the flags that set each apart (not --url, the store, --tag or --output). A --runs
    /// entry shows the median over its runs, marked "median".
    List {
        #[command(flatten)]
        store: StoreArgs,
        /// Show at most this many runs (of those the filters let through).
        #[arg(long, default_value_t = 20, value_name = "N")]
        limit: usize,
        /// Only the runs tagged KEY=VALUE (repeatable: every one must match).
        #[arg(long, value_name = "KEY=VALUE")]
        tag: Vec<String>,
        /// Only the runs of this command (ingest, timeit, workload, http, ...).
        #[arg(long, value_name = "NAME")]
        command: Option<String>,
        /// Only the runs started since DATE (2026-11-28, midnight UTC), a time
        /// (2026-11-28T09:00:00Z) or a DURATION ago (2h, 3days).
        #[arg(long, value_name = "DATE|DURATION")]
        since: Option<String>,
    },
    /// One run's report as its run printed it (text; --output json for its JSON report, --html
    /// FILE for its page), or, with --histograms, its latency histograms. A run kept by an older
    /// dbload shows what it has, after a line naming what it lacks.
    Show {
        /// The run's run_id, or a prefix of it that names one run.
        #[arg(value_name = "ID")]
        id: String,
        #[command(flatten)]
        store: StoreArgs,
        /// Print the run's latency histograms (HdrHistogram interval log) instead of its report.
        #[arg(long)]
        histograms: bool,
        /// Format of the report on stdout.
        #[arg(long, value_enum, default_value_t = super::OutputFormat::Text)]
        output: super::OutputFormat,
        /// Also write the run's HTML report (its charts) to this file.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
}

/// Which store `dbload results` reads.
#[derive(Debug, Args, Clone)]
pub struct StoreArgs {
    /// Read the results directory DIR (default: $XDG_DATA_HOME/dbload/results).
    #[arg(long, value_name = "DIR", conflicts_with = "results_url")]
    pub results: Option<PathBuf>,

    /// Read the tables of this database instead (as written with --results-url).
    #[arg(long, value_name = "URL")]
    pub results_url: Option<String>,
}
