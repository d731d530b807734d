//! `dbload sweep`: a command run over a grid of settings, or at rising
//! rates until it breaks an SLO.

use std::path::PathBuf;

use clap::Args;

use super::{OutputFormat, ResultsArgs};

pub(super) const SWEEP_EXAMPLES: &str = "\
Examples:
  # Every batch size with every worker count: 12 points, the best by rows/s
  # with p99 under 500 ms
  dbload sweep --vary batch-size=1000,5000,20000 --vary workers=1,2,4,8 \\
    --where 'p99_ms < 500' -- ingest --url $URL --rows 2000000

  # Each method, 5 runs each (5 rounds, each point once a round, shuffled)
  dbload sweep --vary method=copy,insert,unnest --runs 5 -- \\
    ingest --url $URL --rows 500000

  # The lowest p99 among concurrencies; --seed replays the order it printed
  dbload sweep --vary concurrency=1,4,16 --objective 'min p99_ms' --seed 42 -- \\
    workload queries.yml --url $URL --duration 30s

  # The highest rate that keeps p99 under 50 ms: doubling from 10/s, then
  # bisection to 5%
  dbload sweep --find-max-rate --slo 'p99_ms < 50' -- \\
    workload queries.yml --url $URL --duration 30s

  # The sweep's own report, kept in the results store by its sweep id
  dbload results show 0193a1b2-7c4e

Order: with --runs N the sweep runs N rounds; each round runs every point once, in an order shuffled per round by a seeded random generator (the seed is printed; --seed replays it), so that slow drift (caches warming, a table growing, a noisy neighbour) spreads over every point instead of biasing one. Without --runs: one round, shuffled. A point's figures are the medians of its runs. --find-max-rate runs its steps one after another (each needs the one before). Every point goes to the same target: give --url (without it each point starts its own throwaway PostgreSQL); an ingest that makes its table drops and recreates it for every point after the first, as --runs does, unless --append.

Each point's runs are kept in the results store as usual, tagged sweep=ID and point=FLAG=VALUE,...; the sweep's report is kept too, by its sweep id. Exit code: 0 when the sweep names a best point (or a sustainable rate), 1 when none meets --where (or --slo), 130 on Ctrl-C (the points done are reported; the one running is shown as interrupted and is not eligible), 2 for bad usage.";

/// The flags `dbload sweep -h` shows; `--help` shows them all.
pub(super) const SWEEP_MOST_USED: &[&str] = &["vary", "objective", "where", "runs", "find-max-rate", "slo", "output"];

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Vary a long flag of the command over values (repeatable; the grid is every combination),
    /// written as the command takes them: batch-size=500,2000, workers=1,2,4, method=copy,insert.
    /// A point's value replaces the flag in the command's arguments, or is added. At most
    /// 10,000 points.
    #[arg(long, value_name = "FLAG=V1,V2,...")]
    pub vary: Vec<String>,

    /// What the best point has: 'max FIGURE' or 'min FIGURE', FIGURE a numeric field of the
    /// command's JSON report as --fail-if names it (rows_per_sec, qps, http_reqs_per_sec, p99_ms,
    /// ...). Default: the command's throughput, max.
    #[arg(long, value_name = "max|min FIGURE", conflicts_with = "find_max_rate")]
    pub objective: Option<String>,

    /// Only points where this holds may be best (repeatable), e.g. 'p99_ms < 500' or 'errors ==
    /// 0': a condition as --fail-if writes it, checked against the command's report contract
    /// before anything runs.
    #[arg(long = "where", value_name = "EXPR")]
    pub where_: Vec<String>,

    /// Run every point N times, in N rounds of a shuffled order; a point's figures are the medians
    /// of its runs, and the best point's margin over the runner-up gets a noise test (as compare
    /// gives it) with 4 runs or more. With --find-max-rate, each step runs N times.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub runs: u32,

    /// The seed of the shuffled order (default: a new one, printed), to replay a sweep's order.
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,

    /// Raise --rate until the command breaks --slo or cannot hold its rate: doubling from
    /// --start-rate, then bisection between the last rate held and the first broken until they
    /// are within --precision. For workload, timeit and http, with a --duration.
    #[arg(long, conflicts_with = "vary", help_heading = "Saturation search")]
    pub find_max_rate: bool,

    /// With --find-max-rate: what a rate must keep (repeatable), e.g. 'p99_ms < 50'. A step also
    /// breaks when it reaches less than 95% of its rate, starts more than half of the work due
    /// late or more than 1% of it never (the report's late and dropped), or has errors. A
    /// percentile is judged on at least 100 samples: a shorter step runs again with a longer
    /// --duration (up to 10 times), else it is "not judged" and does not hold.
    #[arg(long, value_name = "EXPR", requires = "find_max_rate", help_heading = "Saturation search")]
    pub slo: Vec<String>,

    /// With --find-max-rate: the first rate tried, per second.
    #[arg(
        long,
        value_name = "R",
        default_value_t = 10.0,
        requires = "find_max_rate",
        help_heading = "Saturation search"
    )]
    pub start_rate: f64,

    /// With --find-max-rate: stop bisecting when the rate held and the rate broken are this close
    /// (a percentage of the rate held).
    #[arg(
        long,
        value_name = "PERCENT",
        default_value = "5%",
        requires = "find_max_rate",
        help_heading = "Saturation search"
    )]
    pub precision: String,

    /// With --find-max-rate: never try a rate above this; reaching it held is the answer.
    #[arg(long, value_name = "R", requires = "find_max_rate", help_heading = "Saturation search")]
    pub max_rate: Option<f64>,

    /// Format of the sweep's report on stdout: text (a table of every point) or json
    /// (schema/sweep.schema.json).
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,

    /// Also write an HTML page: throughput against the varied flag, p99 against throughput, the
    /// best point marked (checked writable first).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Where the sweep and its points' runs are kept (given to every point); --tag tags them all.
    #[command(flatten)]
    pub results: ResultsArgs,

    /// The command to sweep and its arguments, after `--`: ingest, insert-fake-data,
    /// insert-json, timeit, workload or http.
    #[arg(last = true, required = true, allow_hyphen_values = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}
