//! `dbload ingest`: its flags, with tsdbperf's names where they mean the same.

use clap::Args;

use super::values::{count, seconds_or_duration};
use super::{ModelName, OutputArgs, TargetArgs};
use crate::dialect::{Method, PartitionBy};

pub(super) const INGEST_EXAMPLES: &str = "\
Examples:
  # No target: a throwaway local PostgreSQL, started, loaded and removed
  dbload ingest

  # A real server (libpq URL; PG* variables and DATABASE_URL work too)
  dbload ingest --url postgres://app@db1:5432/bench --table measurement \\
      --drop-table --workers 8 --batch-size 10000 --rows 10000000

  # tsdbperf's command line, same meaning (80 devices, 8,000,000 rows)
  dbload ingest --workers 8 --devices 10 --measurements 100000 --metrics 10

  # nodeIngestBench's command line, same meaning: 2 × 1,000,000 cpu rows,
  # 40 batches in flight, the table recreated; CRATE_HOST ... read as it does
  dbload ingest --batch_size 20000 --max_rows 1000000 --shards 12 \\
      --concurrent_requests 20 --processes 2

  # Open loop at 200,000 rows/s for 5 minutes, after 30 s of warm-up
  dbload ingest --rate 200000 --duration 5m --warmup 30s

  # TimescaleDB (detected): a hypertable with one-day chunks
  dbload ingest --url postgres://postgres@tsdb:5432/postgres \\
      --chunk-interval 86400

  # Citus (detected): 32 shards by device_id
  dbload ingest --url postgres://postgres@coord:5432/postgres --shards 32 \\
      --distribution-column device_id

  # CrateDB over its HTTP endpoint (bulk_args), as nodeIngestBench does
  dbload ingest --url cratedb://crate@crate1:4200 --model cpu --shards 12 \\
      --replicas 0 --batch-size 20000 --workers 20

  # Generation and encoding only: how fast is the client?
  dbload ingest --dry-run --rows 50000000

  # For scripts: JSON on stdout, exit 1 if a batch failed or rows are missing
  dbload ingest --rows 1000000 --verify --output json --quiet

  # Keep the run in the team's results database too (see `dbload results list`)
  dbload ingest --url $URL --rows 2000000 \\
      --results-url postgres://bench@results-db/bench";

/// The flags `dbload ingest -h` shows; `--help` shows them all.
pub(super) const INGEST_MOST_USED: &[&str] =
    &["url", "table", "drop-table", "method", "batch-size", "workers", "rows", "duration", "rate", "dry-run", "output"];

#[derive(Debug, Args)]
pub struct IngestArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub db: DbArgs,

    /// Data model [default: measurement; cpu with nodeIngestBench's flags].
    #[arg(long, value_enum, help_heading = "Data")]
    pub model: Option<ModelName>,

    /// Table to write (NAME or SCHEMA.NAME; default: the model's name).
    #[arg(long, value_name = "NAME", help_heading = "Data")]
    pub table: Option<String>,

    /// Drop the table first if it exists, then create it.
    #[arg(long, conflicts_with = "append", help_heading = "Data")]
    pub drop_table: bool,

    /// Add rows to the table if it exists (it is created when missing).
    #[arg(long, help_heading = "Data")]
    pub append: bool,

    /// Devices per worker (cpu model: hosts per worker).
    #[arg(long, value_name = "N", default_value_t = 10, help_heading = "Data")]
    pub devices: u32,

    /// Measurements per device, or per host with the cpu model (tsdbperf's meaning; rows =
    /// workers × devices × measurements). As tsdbperf does, the table is dropped and recreated
    /// first, unless --append.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = count::<u64>, conflicts_with = "rows", help_heading = "Data")]
    pub measurements: Option<u64>,

    /// Metric columns per row, 1 to 100 (measurement model).
    #[arg(long, value_name = "N", help_heading = "Data")]
    pub metrics: Option<u32>,

    /// Extra string tags per host (cpu model), for wider rows.
    #[arg(long, alias = "extra_tags_length", value_name = "N", help_heading = "Data")]
    pub extra_tags: Option<u32>,

    /// Store the metrics as one jsonb column (measurement model).
    #[arg(long, visible_alias = "with-jsonb", help_heading = "Data")]
    pub jsonb: bool,

    /// Seed of the generators: the same seed gives the same rows.
    #[arg(long, value_name = "N", default_value_t = 1, help_heading = "Data")]
    pub seed: u64,

    /// Time of the first reading (RFC 3339). Default: so that the data ends now.
    #[arg(long, value_name = "TIME", help_heading = "Data")]
    pub start: Option<String>,

    /// How rows travel to the target [default: copy; insert on CrateDB over the PostgreSQL
    /// protocol; bulk over CrateDB's HTTP endpoint].
    #[arg(long, value_enum, help_heading = "Method")]
    pub method: Option<Method>,

    /// Rows per batch; each batch is one transaction.
    #[arg(long, alias = "batch_size", value_name = "N", allow_negative_numbers = true, value_parser = count::<usize>, default_value_t = 10_000, help_heading = "Method")]
    pub batch_size: usize,

    /// Update rows whose key exists (INSERT ... ON CONFLICT DO UPDATE; COPY goes through a staging table).
    #[arg(long, help_heading = "Method")]
    pub upsert: bool,

    /// tsdbperf's flag: --upsert with --method insert.
    #[arg(long, conflicts_with = "with_copy_upserts", help_heading = "Method")]
    pub with_upserts: bool,

    /// tsdbperf's flag: --upsert with --method copy.
    #[arg(long, help_heading = "Method")]
    pub with_copy_upserts: bool,

    /// Shards of the table: Citus shard_count, CrateDB CLUSTERED INTO N SHARDS. PostgreSQL and
    /// TimescaleDB have none: accepted, not applied, and said so.
    #[arg(long, value_name = "N", help_heading = "Table (per engine)")]
    pub shards: Option<u32>,

    /// CrateDB replicas: a number or a range (0-1, 0-all).
    #[arg(long, value_name = "N|RANGE", help_heading = "Table (per engine)")]
    pub replicas: Option<String>,

    /// TimescaleDB hypertable chunk width in seconds [default: 86400].
    #[arg(long, value_name = "SECONDS", help_heading = "Table (per engine)")]
    pub chunk_interval: Option<u64>,

    /// On TimescaleDB, create a plain table instead of a hypertable (elsewhere tables are plain already:
    /// accepted, so that tsdbperf's command lines run unchanged).
    #[arg(long, help_heading = "Table (per engine)")]
    pub no_hypertables: bool,

    /// Citus distribution column [default: device_id; ts for the cpu model].
    #[arg(long, value_name = "COLUMN", help_heading = "Table (per engine)")]
    pub distribution_column: Option<String>,

    /// Citus: a reference table (a full copy on every node) instead of a distributed one.
    #[arg(long, help_heading = "Table (per engine)")]
    pub reference_table: bool,

    /// PostgreSQL: a partitioned table with N native partitions.
    #[arg(long, value_name = "N", help_heading = "Table (per engine)")]
    pub partitions: Option<u32>,

    /// How --partitions splits rows: key (hash of the series column; pgbench's hash) or time
    /// (equal ranges of the generated time span, and a DEFAULT partition; pgbench's range)
    /// [default: key].
    #[arg(
        long,
        visible_alias = "partition-method",
        value_enum,
        value_name = "HOW",
        help_heading = "Table (per engine)"
    )]
    pub partition_by: Option<PartitionBy>,

    /// PostgreSQL, TimescaleDB (with --no-hypertables), Citus: CREATE UNLOGGED TABLE (no WAL).
    #[arg(long, visible_alias = "unlogged-tables", help_heading = "Table (per engine)")]
    pub unlogged: bool,

    /// TimescaleDB: after the load, compress every chunk (segmented by measurement's device_id, by
    /// cpu's tags) and report the hypertable's size before and after, and the ratio; if it fails, the run fails.
    #[arg(long, help_heading = "Table (per engine)")]
    pub compress: bool,

    /// Parallel connections, each with its own generator (default: number of CPUs; -c as
    /// pgbench's clients). With --rate, the most batches in flight: a batch whose slot comes
    /// while all are busy starts late.
    #[arg(short = 'c', long, value_name = "N", help_heading = "Run")]
    pub workers: Option<u32>,

    /// Total rows to write, split across the workers (1000000, 1_000_000, 1e6, 1M, 2.5k).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = count::<u64>, help_heading = "Run")]
    pub rows: Option<u64>,

    /// Run for this long instead: seconds (-T 60, as pgbench) or a time (30s, 5m); with --rows,
    /// whichever comes first. A batch still in flight 5 s later is cancelled on the server and
    /// counted as failed (interrupted). The run stops early, exit 1, once its last 1,000
    /// batches (over 5 s or more) all failed.
    #[arg(short = 'T', long, value_name = "TIME", value_parser = seconds_or_duration, help_heading = "Run")]
    pub duration: Option<std::time::Duration>,

    #[command(flatten)]
    pub stages: super::StagesArgs,

    /// Open loop: schedule batches at this many rows per second in total (-R: pgbench's rate,
    /// here in rows); latency is then measured from each batch's intended start.
    #[arg(short = 'R', long, value_name = "ROWS_PER_SEC", help_heading = "Run")]
    pub rate: Option<f64>,

    /// Warm-up excluded from the figures: a time (10s) or a number of rows (100000). Either way it
    /// is the first part of the run, taken out of --duration or --rows.
    #[arg(long, value_name = "TIME|ROWS", help_heading = "Run")]
    pub warmup: Option<String>,

    /// After the run, count the table's rows and compare with the rows acknowledged (a count
    /// that cannot run fails the run, exit 1, and the report says why).
    #[arg(long, help_heading = "Run")]
    pub verify: bool,

    /// A worker whose connection is lost connects again (waiting 50 ms, doubling up to 1 s; over
    /// CrateDB's HTTP endpoint, to the next host) until the run ends, and looks up whether the
    /// batch in flight was written [default: on with --duration, which bounds the wait; off for
    /// a --rows run, which would wait for a server that never returns until Ctrl-C].
    #[arg(long, overrides_with = "no_reconnect", help_heading = "Run")]
    pub reconnect: bool,

    /// A lost connection ends its worker (its batch counts as failed, exit code 1).
    #[arg(long, overrides_with = "reconnect", help_heading = "Run")]
    pub no_reconnect: bool,

    /// Generate and encode only, send nothing: shows what the client alone can do. The report
    /// counts the rows generated (none is written).
    #[arg(long, help_heading = "Run")]
    pub dry_run: bool,

    /// Write the binary COPY stream to FILE instead of a database (implies --dry-run; with
    /// several workers FILE must contain {worker}).
    #[arg(long, value_name = "FILE", help_heading = "Run")]
    pub copy_file: Option<String>,

    #[command(flatten)]
    pub node: super::node_ingest::NodeIngestArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// tsdbperf's connection flags, so its command line names the same server:
/// any of them makes the target, each left out taking tsdbperf's default.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Target (tsdbperf's flags)")]
pub struct DbArgs {
    /// tsdbperf's --db-host [default: localhost]. With any --db-* flag the target is this host,
    /// port PGPORT or else 5432 (tsdbperf always used port 5432: for another, set PGPORT or
    /// give --url).
    #[arg(long, value_name = "HOST", conflicts_with = "url")]
    pub db_host: Option<String>,

    /// tsdbperf's --db-user [default: postgres].
    #[arg(long, value_name = "USER", conflicts_with = "url")]
    pub db_user: Option<String>,

    /// tsdbperf's --db-password; never printed (the report's command line shows ***). Without it,
    /// PGPASSWORD or the password file (~/.pgpass, PGPASSFILE), as libpq reads them: tsdbperf's
    /// default password is not assumed.
    #[arg(long, value_name = "PASSWORD", conflicts_with = "url")]
    pub db_password: Option<String>,

    /// tsdbperf's --db-name [default: postgres].
    #[arg(long, value_name = "NAME", conflicts_with = "url")]
    pub db_name: Option<String>,
}
