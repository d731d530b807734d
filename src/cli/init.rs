//! `dbload init`: pgbench's tables, made and filled as `pgbench -i` does.

use clap::Args;

use super::TargetArgs;

pub(super) const INIT_EXAMPLES: &str = "\
Examples:
  # pgbench's four tables at scale 10 (1,000,000 accounts), then its
  # TPC-B-like load for a minute
  dbload init --url $URL --scale 10
  dbload timeit --url $URL --builtin tpcb-like --concurrency 4 --duration 1m

It drops and recreates pgbench_accounts, pgbench_branches, pgbench_history and pgbench_tellers with pgbench's columns, fill factor and rows (binary COPY, from several connections), then vacuums and analyzes them and adds their primary keys, as `pgbench -i -s N` does.";

#[derive(Debug, Args)]
pub struct InitArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// pgbench's scale factor: per unit, 1 branch, 10 tellers and 100,000 accounts (up to
    /// 19999, below where pgbench switches its account ids to bigint).
    #[arg(short = 's', long, value_name = "N", default_value_t = 1, help_heading = "Tables")]
    pub scale: i64,

    /// Connections that fill the tables at the same time [default: one per CPU, up to 8].
    #[arg(long, value_name = "N", help_heading = "Tables")]
    pub workers: Option<u32>,

    /// No progress bar.
    #[arg(short, long, help_heading = "Output")]
    pub quiet: bool,
}
