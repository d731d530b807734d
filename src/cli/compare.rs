//! `dbload compare`: reports side by side, with a verdict that needs evidence.

use std::path::PathBuf;

use clap::Args;

use super::{OutputFormat, StoreArgs};

pub(super) const COMPARE_EXAMPLES: &str = "\
Examples:
  # Two settings, 5 runs each, then the verdict per figure
  dbload ingest --url $URL --batch-size 5000 --runs 5 --report small.json
  dbload ingest --url $URL --batch-size 20000 --runs 5 --report large.json
  dbload compare small.json large.json

  # The last two runs kept in the results store, oldest first; or by run_id
  dbload compare --last 2
  dbload compare 0193a1b2-7c4e 0193a1c5

  # A CI gate: exit 1 when rows/s fell by more than 5% beyond noise, or p99
  # rose by more than 10%
  dbload compare main.json branch.json --fail-if-worse rows_per_sec:5% \\
      --fail-if-worse p99_ms:10%

  # Overlaid latency percentiles and throughput timelines in one page; the
  # figures as JSON
  dbload compare a.json b.json c.json --html compare.html
  dbload compare a.json b.json --output json

Figures: rows_per_sec, qps, http_reqs_per_sec, p50_ms, p95_ms, p99_ms, p99_9_ms, errors, client_cpu_s; a `dbload run` report has them per part: ingest.rows_per_sec, workloads.NAME.p99_ms.
A verdict (better / worse / within noise) needs --runs 4 or more on both sides. Better or worse only when two tests agree: the 95% bootstrap interval of the ratio of the medians (10,000 resamples, seeded) excludes 1, and the exact Mann-Whitney rank test gives p < 0.05. The rank test holds false verdicts between two identical setups to at most 1 figure in 20 (the bootstrap alone, with 3 runs a side, gives one in 10); with 4 runs a side it finds a 20% difference in runs that vary by 5% nearly always. Fewer runs are shown with their ratio and \"too few runs for a noise estimate (4 per side needed)\" (\"single runs: no noise estimate\" for one run).";

/// The flags `dbload compare -h` shows; `--help` shows them all.
pub(super) const COMPARE_MOST_USED: &[&str] = &["last", "results", "output", "fail-if-worse", "html"];

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Reports to compare, each with the first: JSON files written by --output json or --report
    /// FILE, or run_ids of the results store (or the start of one, as `results list` shows
    /// them). A report made with --runs carries each run's figures.
    #[arg(value_name = "REPORT|ID", required_unless_present = "last")]
    pub reports: Vec<String>,

    /// Compare the N most recent runs of the results store, oldest first (after any REPORT|ID).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub last: Option<u32>,

    #[command(flatten)]
    pub store: StoreArgs,

    /// Format of the comparison on stdout: text (the table) or json (figures, ratios,
    /// intervals, p-values and verdicts; schema/compare.schema.json).
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,

    /// Exit 1 when a report is worse than the first on FIGURE by more than PERCENT and beyond
    /// noise (repeatable), e.g. rows_per_sec:5% or p99_ms:10%. Reports with fewer than 4 runs
    /// are never beyond noise.
    #[arg(long, value_name = "FIGURE:PERCENT")]
    pub fail_if_worse: Vec<String>,

    /// Also write an HTML page with the reports' latency percentiles (to 99.99% for runs of the
    /// results store, from their histograms) and throughput over time, overlaid (checked
    /// writable first).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}
