//! `dbload compare`: reports side by side, with a verdict that needs evidence.

use std::path::PathBuf;

use clap::Args;

pub(super) const COMPARE_EXAMPLES: &str = "\
Examples:
  # Two settings, 5 runs each, then the verdict per figure
  dbload ingest --url $URL --batch-size 5000 --runs 5 --report small.json
  dbload ingest --url $URL --batch-size 20000 --runs 5 --report large.json
  dbload compare small.json large.json

  # A CI gate: exit 1 when rows/s fell by more than 5% beyond noise, or p99 rose by more than 10%
  dbload compare main.json branch.json --fail-if-worse rows_per_sec:5% --fail-if-worse p99_ms:10%

  # Overlaid latency percentiles and throughput timelines in one page
  dbload compare a.json b.json c.json --html compare.html

Figures: rows_per_sec, qps, http_reqs_per_sec, p50_ms, p95_ms, p99_ms, p99_9_ms, errors,
client_cpu_s; a `dbload run` report has them per part: ingest.rows_per_sec, workloads.NAME.p99_ms.
A verdict (better / worse / within noise) needs --runs on both sides: it comes from a 95% bootstrap
interval of the ratio of the medians (10,000 resamples, seeded), better or worse only when the
interval excludes 1. Single runs are shown with their ratio and \"single runs: no noise estimate\".";

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Reports to compare, each with the first: JSON written by --output json or --report FILE
    /// (with --runs, each run's figures are in it).
    #[arg(value_name = "REPORT", num_args = 2.., required = true)]
    pub reports: Vec<PathBuf>,

    /// Exit 1 when a report is worse than the first on FIGURE by more than PERCENT and beyond
    /// noise (repeatable), e.g. rows_per_sec:5% or p99_ms:10%. Single runs are never beyond noise.
    #[arg(long, value_name = "FIGURE:PERCENT")]
    pub fail_if_worse: Vec<String>,

    /// Also write an HTML page with the reports' latency percentiles and throughput over time,
    /// overlaid (checked writable first).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}
