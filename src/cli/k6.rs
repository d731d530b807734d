//! `dbload k6 run SCRIPT`: a command of its own so that k6's flags keep
//! k6's meanings (`-u`, `-d`, `-i`, `-s`, `-e`, `--summary-export`,
//! `--no-thresholds`), beside dbload's output options.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::short_help::{most_used, SEE_HELP};
use super::values::{count, seconds_or_duration};
use super::OutputArgs;

pub(super) const K6_EXAMPLES: &str = "\
Examples:
  # QuantumLeap's notify load test, as its README runs it with k6
  dbload k6 run --vus 30 --duration 60s - < notify-load-test.js

  # A script's own options (vus, duration, stages, thresholds), a variable
  # for __ENV, the k6 summary exported as JSON
  dbload k6 run -e QL_URL=http://ql:8668 --summary-export summary.json load.js

What runs: ES modules importing k6, k6/http, k6/metrics and k6/data; see
docs/k6.md, \"For k6 users\", for what does and what does not.";

/// The flags `dbload k6 run -h` shows; `--help` shows them all.
pub(super) const K6_MOST_USED: &[&str] =
    &["vus", "duration", "iterations", "stage", "env", "summary-export", "no-thresholds", "output", "html"];

/// `dbload k6 ...`.
#[derive(Debug, Args)]
pub struct K6Args {
    #[command(subcommand)]
    pub command: K6Command,
}

#[derive(Debug, Subcommand)]
pub enum K6Command {
    /// Run a k6 script (ES module) unchanged: each VU runs its default function in a loop, and
    /// the summary is k6's, then dbload's additions. Exit 99 when a threshold fails.
    #[command(after_help = SEE_HELP, after_long_help = K6_EXAMPLES, mut_args = most_used(K6_MOST_USED))]
    Run(K6RunArgs),
}

#[derive(Debug, Args)]
pub struct K6RunArgs {
    /// The script: a file, or `-` to read it from stdin.
    #[arg(value_name = "SCRIPT")]
    pub script: PathBuf,

    /// Virtual users: VUs running the default function at once (default: options.vus, else 1).
    #[arg(short = 'u', long, value_name = "N", help_heading = "k6")]
    pub vus: Option<u32>,

    /// Run for this long (30s, 2m), then stop (default: options.duration; with neither
    /// duration nor iterations, one iteration).
    #[arg(short = 'd', long, value_name = "TIME", value_parser = seconds_or_duration, help_heading = "k6")]
    pub duration: Option<Duration>,

    /// Iterations in all, each taken by the first VU free, as k6's shared-iterations (default:
    /// options.iterations).
    #[arg(short = 'i', long, value_name = "N", value_parser = count::<u64>, help_heading = "k6")]
    pub iterations: Option<u64>,

    /// A stage of ramping VUs, TIME:VUS (repeatable, in order), as k6's --stage: replaces
    /// options.stages.
    #[arg(short = 's', long = "stage", value_name = "TIME:VUS", help_heading = "k6")]
    pub stages: Vec<String>,

    /// An environment variable for the script's __ENV, NAME=VALUE (repeatable); __ENV also has
    /// the process's environment, as k6 gives it.
    #[arg(short = 'e', long = "env", value_name = "NAME=VALUE", help_heading = "k6")]
    pub env: Vec<String>,

    /// Also write k6's summary export (every metric as `--summary-export` writes it) to this file.
    #[arg(long, value_name = "FILE", help_heading = "k6")]
    pub summary_export: Option<PathBuf>,

    /// Do not judge the script's thresholds (they are not shown, and never exit 99).
    #[arg(long, help_heading = "k6")]
    pub no_thresholds: bool,

    /// https without verifying the server's certificate (k6's flag).
    #[arg(long, help_heading = "k6")]
    pub insecure_skip_tls_verify: bool,

    /// Threads that run the VUs, their JavaScript and their requests, 1 to 1024 (default:
    /// one per CPU).
    #[arg(long, value_name = "N", help_heading = "Run")]
    pub threads: Option<usize>,

    #[command(flatten)]
    pub output: OutputArgs,
}
