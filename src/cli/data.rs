//! `dbload insert-fake-data` and `dbload insert-json`: cr8's commands, with
//! cr8's flag names (`--hosts`, `--table`, `--bulk-size`, `--concurrency`,
//! `--num-records`) beside dbload's own (`--url`, `--batch-size`, `--workers`).

use std::path::PathBuf;

use clap::Args;

use super::values::count;
use super::{OutputArgs, TargetArgs};
use crate::dialect::Method;
use crate::model::json::OnError;

pub(super) const INSERT_FAKE_DATA_EXAMPLES: &str = "\
Examples:
  # cr8's command line: one million rows that fit my_table's columns
  dbload insert-fake-data --hosts localhost:4200 --table my_table \\
      --num-records 1000000

  # PostgreSQL; a mapping file chooses some columns' values
  dbload insert-fake-data --url postgres://app@db1/bench --table users \\
      --num-records 100000 --mapping users.yml

  # users.yml:
  #   age:   {int: [18, 99]}
  #   plan:  {choice: [free, pro, team], null_ratio: 0.1}
  #   code:  {pattern: \"user-####\"}
  #   email: email
  #   id:    default          # left to its serial / identity default";

/// The flags `dbload insert-fake-data -h` shows; `--help` shows them all.
pub(super) const INSERT_FAKE_DATA_MOST_USED: &[&str] =
    &["url", "hosts", "table", "num-records", "mapping", "method", "bulk-size", "concurrency", "output", "html"];

pub(super) const INSERT_JSON_EXAMPLES: &str = "\
Examples:
  # cr8's workflow: re-insert an export, measuring bulk size and concurrency
  cat /tmp/crate/my_table_*.json | \\
      dbload insert-json --hosts localhost:4200 --table my_table \\
      --bulk-size 1000 --concurrency 25

  # Files (JSON lines, arrays or concatenated objects; gzip known by content)
  dbload insert-json --url postgres://app@db1/bench --table events \\
      events-1.json.gz events-2.json

  # Go on past bad rows, keeping them (with the reason) in a file
  dbload insert-json --table events --on-error skip --rejects rejects.jsonl \\
      events.json";

/// The flags `dbload insert-json -h` shows; `--help` shows them all.
pub(super) const INSERT_JSON_MOST_USED: &[&str] =
    &["url", "hosts", "table", "method", "bulk-size", "concurrency", "on-error", "output"];

/// How rows travel, in cr8's words and dbload's.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Method")]
pub struct BulkArgs {
    /// cr8's --hosts: CrateDB's HTTP endpoints (host:4200[,host:4200...]); the same as
    /// --url cratedb://host:4200,...
    #[arg(long, value_name = "HOST:PORT,...", conflicts_with = "url", help_heading = "Target")]
    pub hosts: Option<String>,

    /// How rows travel [default: copy-csv; insert on CrateDB over the PostgreSQL protocol; bulk
    /// over CrateDB's HTTP endpoint]. Binary copy is refused: values travel as text.
    #[arg(long, value_enum)]
    pub method: Option<Method>,

    /// Rows per batch (one transaction, one request).
    #[arg(long, visible_alias = "batch-size", value_name = "N", allow_negative_numbers = true, value_parser = count::<usize>, default_value_t = 1000)]
    pub bulk_size: usize,

    /// Batches in flight at once, one connection each.
    #[arg(short = 'c', long, visible_alias = "workers", value_name = "N", default_value_t = 25)]
    pub concurrency: u32,

    /// A worker whose connection is lost connects again (waiting 50 ms, doubling up to 1 s,
    /// moving to the next of --hosts) until Ctrl-C; the batch in flight counts as in doubt.
    #[arg(long, help_heading = "Run")]
    pub reconnect: bool,
}

#[derive(Debug, Args)]
pub struct InsertFakeDataArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// The existing table to fill (NAME or SCHEMA.NAME); its columns are read from the catalog.
    #[arg(long, value_name = "NAME", help_heading = "Data")]
    pub table: String,

    /// Rows to insert (1000000, 1e6, 1M).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = count::<u64>, default_value_t = 1000, help_heading = "Data")]
    pub num_records: u64,

    /// YAML file choosing columns' generators ({int: [lo, hi]}, {choice: [...]}, {pattern:
    /// "u-####"}, {const: v}, {sequence: start}, email, name, null, default, ...; null_ratio: x).
    #[arg(long, value_name = "FILE", help_heading = "Data")]
    pub mapping: Option<PathBuf>,

    /// Seed of the generators: the same seed and concurrency give the same rows.
    #[arg(long, value_name = "N", default_value_t = 1, help_heading = "Data")]
    pub seed: u64,

    #[command(flatten)]
    pub bulk: BulkArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct InsertJsonArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// JSON input: files of JSON lines, arrays of objects or concatenated objects, plain or
    /// gzip (- or none: stdin). Read in one pass, one value (row) at most 64 MiB. Values are
    /// kept exactly: integers never go through a float, numbers go to the server as written.
    #[arg(value_name = "FILE", help_heading = "Data")]
    pub files: Vec<String>,

    /// The existing table to insert into (NAME or SCHEMA.NAME); keys are its column names.
    #[arg(long, value_name = "NAME", help_heading = "Data")]
    pub table: String,

    /// A row that is malformed or has a value its column cannot take: abort (stop reading,
    /// write what was read, exit 2) or skip it (to --rejects).
    #[arg(long, value_enum, default_value_t = OnError::Abort, help_heading = "Data")]
    pub on_error: OnError,

    /// Write bad rows here, one JSON object per line: {"file", "line", "error", "input"}.
    /// Not one of the input files.
    #[arg(long, value_name = "FILE", help_heading = "Data")]
    pub rejects: Option<PathBuf>,

    /// Drop keys that name no column, instead of treating the row as bad.
    #[arg(long, help_heading = "Data")]
    pub ignore_unknown: bool,

    #[command(flatten)]
    pub bulk: BulkArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}
