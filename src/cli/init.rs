//! `dbload init`: pgbench's tables, made and filled as `pgbench -i` does.

use clap::Args;

use super::TargetArgs;
use crate::dialect::pgbench::PartitionMethod;

pub(super) const INIT_EXAMPLES: &str = "\
Examples:
  # pgbench's four tables at scale 10 (1,000,000 accounts), then its
  # TPC-B-like load for a minute
  dbload init --url $URL --scale 10
  dbload timeit --url $URL --builtin tpcb-like --concurrency 4 --duration 1m

  # pgbench -i's table flags, with its meanings
  dbload init --url $URL -s 10 -F 90 --partitions 4 --partition-method hash
  dbload init --url $URL -s 10 -I dtGvpf --unlogged-tables

It drops and recreates pgbench_accounts, pgbench_branches, pgbench_history and pgbench_tellers with pgbench's columns, fill factor and rows (binary COPY, from several connections), then vacuums and analyzes them and adds their primary keys, as `pgbench -i -s N` does; -I chooses and orders those steps as pgbench's does. With no target (no --url, DATABASE_URL or PG*), they go into a throwaway PostgreSQL, removed at exit with them: --keep leaves it running.";

/// The flags `dbload init -h` shows; `--help` shows them all.
pub(super) const INIT_MOST_USED: &[&str] =
    &["url", "keep", "scale", "workers", "partitions", "partition-method", "unlogged-tables", "no-vacuum", "quiet"];

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

    /// pgbench's -I: the steps, in this order: d drop tables, t create tables, g generate rows
    /// here (binary COPY), G generate them on the server (INSERT ... SELECT generate_series),
    /// v vacuum, p primary keys, f foreign keys.
    #[arg(short = 'I', long, value_name = "STEPS", default_value = "dtgvp", help_heading = "Steps")]
    pub init_steps: String,

    /// pgbench's -n: leave out the vacuum (v) of the steps.
    #[arg(short = 'n', long, help_heading = "Steps")]
    pub no_vacuum: bool,

    /// Add foreign keys (f) to the steps, if -I has none.
    #[arg(long, help_heading = "Steps")]
    pub foreign_keys: bool,

    /// Fill factor of accounts, branches and tellers (10 to 100).
    #[arg(short = 'F', long, value_name = "N", default_value_t = 100, help_heading = "Tables")]
    pub fillfactor: u32,

    /// pgbench_accounts as a partitioned table of N partitions (ingest's --partitions).
    #[arg(long, value_name = "N", default_value_t = 0, help_heading = "Tables")]
    pub partitions: u32,

    /// How --partitions splits the accounts' ids [default: range].
    #[arg(long, visible_alias = "partition-by", value_enum, value_name = "range|hash", help_heading = "Tables")]
    pub partition_method: Option<PartitionMethod>,

    /// CREATE UNLOGGED TABLE: no WAL, lost in a crash (ingest's --unlogged).
    #[arg(long, visible_alias = "unlogged", help_heading = "Tables")]
    pub unlogged_tables: bool,

    /// No progress bar (pgbench's -q, which makes its progress quieter).
    #[arg(short, long, help_heading = "Output")]
    pub quiet: bool,

    /// Serve the fill's figures as Prometheus text at http://ADDR/metrics while init runs (rows,
    /// operations, errors, a latency histogram, the client's CPU): HOST:PORT, :PORT (every
    /// interface) or 0 (a free port, printed). See docs/metrics.md.
    #[arg(long, value_name = "ADDR", help_heading = "Output")]
    pub metrics_listen: Option<String>,
}
