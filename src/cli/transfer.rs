//! `dbload export` and `dbload insert-from-sql`: rows that already exist,
//! moved out to files or into another table, measured like ingest.

use std::path::PathBuf;

use clap::{ArgGroup, Args, ValueEnum};

use super::values::count;
use super::{OutputArgs, TargetArgs};
use crate::dialect::{ExportFormat, Method};

pub(super) const EXPORT_EXAMPLES: &str = "\
Examples:
  # cr8's workflow: export, empty the table, re-insert the JSON and
  # measure that
  dbload export --url $URL --table my_table --out /tmp/crate/ --workers 4
  cat /tmp/crate/my_table_*.json | \\
      dbload insert-json --url $URL --table my_table

  # Gzipped CSV with a header line, one file per worker
  dbload export --url $URL --table app.\"Events\" --out /data/events \\
      --format csv --gzip

  # A query's rows (one worker), files named day_0.json
  dbload export --url $URL \\
      --query \"select * from events where day = '2024-01-01'\" \\
      --out /tmp/x --name day

  # CrateDB: a table over HTTP, each worker reading a cursor
  dbload export --url cratedb://crate-host:4200 --table doc.events \\
      --out /tmp/events --workers 4

  # CrateDB to CSV: over its PostgreSQL protocol
  dbload export --url postgres://crate@crate-host:5432/doc --table doc.events \\
      --format csv --out /tmp/csv";

/// The flags `dbload export -h` shows; `--help` shows them all.
pub(super) const EXPORT_MOST_USED: &[&str] = &["url", "table", "query", "out", "format", "gzip", "workers", "output"];

pub(super) const INSERT_FROM_SQL_EXAMPLES: &str = "\
Examples:
  # One day of events from one server into an existing table on another,
  # 4 connections
  dbload insert-from-sql --src-url postgres://ro@src/app \\
      --query \"select * from events where day = '2024-01-01'\" \\
      --url postgres://app@dst/app --table events --workers 4 --batch-size 20000

  # Within one database: the query's columns go to the table's columns of the
  # same names
  dbload insert-from-sql --url $URL \\
      --query \"select id, name from users where active\" --table active_users

  # Out of CrateDB (its PostgreSQL protocol, through a cursor) into PostgreSQL
  dbload insert-from-sql --src-url postgres://crate@crate-host:5432/doc \\
      --query \"select * from doc.events\" \\
      --url postgres://app@dst/app --table events";

/// The flags `dbload insert-from-sql -h` shows; `--help` shows them all.
pub(super) const INSERT_FROM_SQL_MOST_USED: &[&str] =
    &["src-url", "query", "url", "table", "method", "batch-size", "workers", "output"];

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("what").required(true).args(["table", "query"])))]
pub struct ExportArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// Table to export (NAME or SCHEMA.NAME, case kept), split across the workers by block ranges
    /// (CrateDB: by md5(_id), each worker reading a cursor).
    #[arg(long, value_name = "NAME", help_heading = "Data")]
    pub table: Option<String>,

    /// A query to export instead of a table (read by one worker).
    #[arg(long, value_name = "SQL", help_heading = "Data")]
    pub query: Option<String>,

    /// Directory of the files (created if missing).
    #[arg(long, value_name = "DIR", help_heading = "Files")]
    pub out: PathBuf,

    /// File format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Json, help_heading = "Files")]
    pub format: ExportFormat,

    /// Compress the files with gzip (names end in .gz).
    #[arg(long, help_heading = "Files")]
    pub gzip: bool,

    /// File names are NAME_N.json, N = worker [default: the table's name; `query` for --query].
    #[arg(long, value_name = "NAME", help_heading = "Files")]
    pub name: Option<String>,

    /// Replace NAME_*.json files left in the directory by an earlier export (else refused:
    /// a glob over them would read old rows too).
    #[arg(long, help_heading = "Files")]
    pub overwrite: bool,

    /// Parallel connections, one file each [default: number of CPUs for --table, 1 for --query].
    #[arg(long, value_name = "N", help_heading = "Run")]
    pub workers: Option<u32>,

    /// Rows per chunk: a chunk (at most this many rows, or 1 MiB) is what latency is measured on.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = count::<usize>, default_value_t = 10_000, help_heading = "Run")]
    pub chunk_rows: usize,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// insert-from-sql's methods on a PostgreSQL-family target: the source's
/// rows are never decoded, so they travel the way they were read. CrateDB
/// (over HTTP) gets the rows as JSON, in `bulk` requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FromSqlMethod {
    /// Binary COPY FROM STDIN, one per batch: the source's binary COPY tuples as they are.
    Copy,
}

impl FromSqlMethod {
    pub fn method(self) -> Method {
        match self {
            FromSqlMethod::Copy => Method::Copy,
        }
    }
}

#[derive(Debug, Args)]
pub struct InsertFromSqlArgs {
    /// The server the query runs on, as --url takes it [default: the target].
    #[arg(long, visible_alias = "src-uri", value_name = "URL", help_heading = "Source")]
    pub src_url: Option<String>,

    /// The query whose rows are copied; its column names are the table's columns to fill.
    #[arg(long, value_name = "SQL", help_heading = "Source")]
    pub query: String,

    #[command(flatten)]
    pub target: TargetArgs,

    /// Table to write (must exist; NAME or SCHEMA.NAME, case kept).
    #[arg(long, value_name = "NAME", help_heading = "Data")]
    pub table: String,

    /// How rows travel to the target [default: copy; CrateDB: bulk requests of the rows read as JSON].
    #[arg(long, value_enum, help_heading = "Method")]
    pub method: Option<FromSqlMethod>,

    /// Rows per batch; each batch is one COPY (one transaction), or one CrateDB request.
    #[arg(long, visible_alias = "bulk-size", value_name = "N", allow_negative_numbers = true, value_parser = count::<usize>, default_value_t = 10_000, help_heading = "Method")]
    pub batch_size: usize,

    /// Parallel target connections, fed by the one source query [default: number of CPUs].
    #[arg(short = 'c', long, visible_alias = "concurrency", value_name = "N", help_heading = "Run")]
    pub workers: Option<u32>,

    #[command(flatten)]
    pub output: OutputArgs,
}
