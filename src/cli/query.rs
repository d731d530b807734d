//! `dbload timeit` and `dbload workload`: query latency and weighted query
//! mixes, with cr8's and nodeIngestBench's names where they mean the same.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::values::{count, seconds_or_duration};
use super::{OutputArgs, TargetArgs};
use crate::workload::explain::ExplainMode;
use crate::workload::tsbs::Suite;
use crate::workload::Protocol;

pub(super) const TIMEIT_EXAMPLES: &str = "\
Examples:
  # Statements from stdin (';'-separated, -- comments dropped), 1,000 times
  # each, 4 at a time
  echo \"select count(*) from measurement\" | \\
      dbload timeit --url $URL --repeat 1000 --concurrency 4 --warmup 50

  # For 30 seconds, with its plan captured first
  dbload timeit -s \"select max(m1) from measurement where device_id = 3\" \\
      --duration 30s --explain

  # Open loop at 200 queries/s; fail a CI job when p99 exceeds 50 ms
  dbload timeit -s \"select 1\" --rate 200 --duration 1m --fail-if 'p99_ms > 50'

  # pgbench's TPC-B-like transaction on `dbload init --scale 10`'s tables, 30 s
  dbload timeit --builtin tpcb-like --concurrency 4 --duration 30s

  # Two pgbench scripts weighted 9:1, each statement's latency (pgbench's -r)
  dbload timeit -f reads.sql@9 -f writes.sql@1 -r --duration 1m";

/// The flags `dbload timeit -h` shows; `--help` shows them all.
pub(super) const TIMEIT_MOST_USED: &[&str] =
    &["url", "stmt", "file", "builtin", "repeat", "concurrency", "duration", "rate", "output"];

pub(super) const WORKLOAD_EXAMPLES: &str = "\
Examples:
  # nodeIngestBench's queries.yml as it is (a misspelt key, such as its
  # README's `ration`, is refused): 10 at a time, 500 queries in all
  dbload workload queries.yml --url $URL --concurrency 10 --max-queries 500

  # Open loop at 200 queries/s for 2 minutes, plans captured before the run
  dbload workload queries.yml --duration 2m --rate 200 --explain

  # TSBS's cpu-only queries on the table of `dbload ingest --model cpu`,
  # 4 at a time for 1 minute
  dbload workload --suite tsbs-cpu --url $URL --concurrency 4 --duration 1m

A workload file is a YAML list; each query has a ratio (they add up to 1), and optionally a name and parameters ($1, $2 ...) drawn per execution:
  - name: device_max
    query: select max(m1) from measurement where device_id = $1 and time > $2
    ratio: 0.7
    params: [{int: [1, 80]}, {time_ago: 1h}]
  - query: select count(*) from measurement
    ratio: 0.3
Parameter forms: a constant, {int: [lo, hi]}, {float: [lo, hi]}, {choice: [a, b]}, {time_ago: 1h}.
A pgbench script (see `timeit -f`) is an entry too, run as one operation, its path relative to the file:
  - script: transfer.sql
    ratio: 0.1";

/// The flags `dbload workload -h` shows; `--help` shows them all.
pub(super) const WORKLOAD_MOST_USED: &[&str] =
    &["url", "suite", "max-queries", "concurrency", "duration", "rate", "output"];

/// What every query command shares.
#[derive(Debug, Args)]
pub struct QueryRunArgs {
    /// Queries in flight at once, one connection each (default: 1; with --rate, one per query/s
    /// up to 20). With --rate it is the most queries in flight: a query whose slot comes while
    /// all are busy starts late, and one never started by the end is counted dropped. -c is
    /// pgbench's clients and cr8's concurrency.
    #[arg(short = 'c', long, value_name = "N", help_heading = "Run")]
    pub concurrency: Option<u32>,

    /// Queries each connection runs (pgbench's transactions per client): N × --concurrency in
    /// all (timeit: of each statement), in place of --repeat or --max-queries.
    #[arg(short = 't', long, value_name = "N", allow_negative_numbers = true, value_parser = count::<u64>, help_heading = "Run")]
    pub transactions: Option<u64>,

    /// Open loop: start queries at this many per second in total; latency is then measured
    /// from each query's intended start. -R is pgbench's.
    #[arg(short = 'R', long, value_name = "QUERIES_PER_SEC", help_heading = "Run")]
    pub rate: Option<f64>,

    /// Run for this long: seconds (pgbench's -T 60) or a time (30s, 2m); a query still running
    /// 5 s later is cancelled on the server and counted as failed (interrupted). The run stops
    /// early, exit 1, once its last 1,000 queries (over 5 s or more) all failed.
    #[arg(short = 'T', long, value_name = "TIME", value_parser = seconds_or_duration, help_heading = "Run")]
    pub duration: Option<Duration>,

    #[command(flatten)]
    pub stages: super::StagesArgs,

    /// Warm-up excluded from the figures: a time (10s) or a number of queries (50). Either way it
    /// is the first part of the run, taken out of --duration, --repeat or --max-queries.
    #[arg(long, value_name = "TIME|QUERIES", help_heading = "Run")]
    pub warmup: Option<String>,

    /// How statements are sent (-M is pgbench's) [default: prepared; simple for pgbench scripts
    /// (-f, -b, -S, -N), as pgbench]. Each is prepared once before the run: one the server
    /// refuses, or whose $n do not match its params, stops the run there (exit 2).
    #[arg(short = 'M', long, value_enum, help_heading = "Run")]
    pub protocol: Option<Protocol>,

    /// Statements in flight on each connection at once (pgbench's pipeline mode, for -s
    /// statements and workload queries): N are sent in one write with one Sync and answered
    /// together. As in pgbench's \startpipeline ... \endpipeline, those N are one transaction on
    /// the server: one that fails rolls back those before it and the server skips those after
    /// it; each counts as failed. Latency is per statement, from its send (under --rate, from its
    /// intended start). Needs -M prepared or extended; a pgbench script (-f, -b) pipelines its
    /// own statements with \startpipeline instead.
    #[arg(long, value_name = "N", default_value_t = 1, help_heading = "Run")]
    pub pipeline: u32,

    /// A worker whose connection is lost connects again (waiting 50 ms, doubling up to 1 s; over
    /// CrateDB's HTTP endpoint, to the next host) until the run ends, and goes on; the query in
    /// flight counts as failed [default: on with --duration, which bounds the wait; off for a
    /// --repeat or --max-queries run, which would wait for a server that never returns until
    /// Ctrl-C].
    #[arg(long, overrides_with = "no_reconnect", help_heading = "Run")]
    pub reconnect: bool,

    /// A lost connection ends its worker (its query counts as failed, exit code 1).
    #[arg(long, overrides_with = "reconnect", help_heading = "Run")]
    pub no_reconnect: bool,

    /// Capture each query's plan before the measured run: --explain (EXPLAIN ANALYZE, rolled
    /// back) or --explain=plan (EXPLAIN only).
    #[arg(long, value_enum, num_args = 0..=1, require_equals = true, default_missing_value = "analyze", help_heading = "Run")]
    pub explain: Option<ExplainMode>,

    /// Seed of the parameter generators and the weighted choice.
    #[arg(long, value_name = "N", default_value_t = 1, help_heading = "Run")]
    pub seed: u64,

    /// pgbench scripts: also report each statement's latency (pgbench's -r; timeit takes -r
    /// without a number for it).
    #[arg(long, help_heading = "Scripts")]
    pub per_statement: bool,

    /// pgbench scripts: the value of :scale (pgbench's -s; timeit takes -s N beside a script too)
    /// [default: 1]. With a built-in script (-b, -S, -N) it is ignored, as pgbench 15 does, with its
    /// warning: the scale is the rows of pgbench_branches.
    #[arg(long, value_name = "N", help_heading = "Scripts")]
    pub scale: Option<i64>,

    /// pgbench's --max-tries: a script run that fails with a serialization failure or a deadlock
    /// (SQLSTATE 40001, 40P01) is rolled back and run again from its start with the same values,
    /// up to N tries in all; it counts once, done or failed. 0: unlimited, with -T or
    /// --latency-limit (tries end with the run or past the limit), as pgbench.
    #[arg(long, value_name = "N", default_value_t = 1, help_heading = "Scripts")]
    pub max_tries: u32,

    /// pgbench's -L: count the runs whose latency is above this many milliseconds (from the
    /// intended start under --rate, as pgbench's), in pgbench's words. With --rate, a run whose
    /// slot passed more than this before it could start is skipped, not sent, and counted.
    #[arg(short = 'L', long, value_name = "MS", help_heading = "Scripts")]
    pub latency_limit: Option<f64>,

    /// pgbench's -C: a new connection for each query or script run (its statements prepared on it
    /// again with -M prepared), made before the run starts; the time it takes is reported apart
    /// (pgbench's "average connection time"), not in the latency.
    #[arg(short = 'C', long, help_heading = "Run")]
    pub connect: bool,

    /// pgbench's -l, --log-prefix, --sampling-rate and --aggregate-interval (its transaction log).
    #[command(flatten)]
    pub pgbench_log: PgbenchLogArgs,

    /// pgbench's --failures-detailed: the report also counts the failed runs by kind, pgbench's
    /// serialization failures (SQLSTATE 40001) and deadlock failures (40P01).
    #[arg(long, help_heading = "Scripts")]
    pub failures_detailed: bool,

    /// pgbench's -n: no vacuum before a run of pgbench scripts. Without it, as pgbench does, timeit
    /// vacuums pgbench_branches and pgbench_tellers and truncates pgbench_history first ("starting
    /// vacuum...end." on stderr; a step that fails is said and ignored).
    #[arg(short = 'n', long, help_heading = "Run")]
    pub no_vacuum: bool,

    /// pgbench's -v: pgbench_accounts is vacuumed (and analyzed) too before a run of scripts.
    #[arg(short = 'v', long, conflicts_with = "no_vacuum", help_heading = "Run")]
    pub vacuum_all: bool,

    /// Threads that run the clients, 1 to 1024 (default: one per CPU), client w on thread w mod
    /// N with its connection: pgbench's -j. On a machine shared with the server under test,
    /// fewer leave it more.
    #[arg(short = 'j', long, value_name = "N", help_heading = "Run")]
    pub threads: Option<usize>,
}

/// pgbench's transaction log (`-l`) and the flags that shape it.
#[derive(Debug, Args)]
pub struct PgbenchLogArgs {
    /// pgbench's -l: a line per transaction in pgbench_log.PID (thread 0 of --threads) and
    /// pgbench_log.PID.N (thread N) in the current directory, in pgbench 15's columns: client_id
    /// transaction_no time (µs, or failed, serialization, deadlock, skipped) script_no time_epoch
    /// time_us [schedule_lag under --rate]. Warm-up runs are not logged.
    #[arg(short = 'l', long = "log", help_heading = "Scripts")]
    pub log: bool,
    /// pgbench's --log-prefix: the log files' names start with PREFIX, not pgbench_log.
    #[arg(long, value_name = "PREFIX", help_heading = "Scripts")]
    pub log_prefix: Option<String>,
    /// pgbench's --sampling-rate: log only this share of the transactions (0 < RATE <= 1),
    /// drawn from --seed.
    #[arg(long, value_name = "RATE", help_heading = "Scripts")]
    pub sampling_rate: Option<f64>,
    /// pgbench's --aggregate-interval: a line per interval of this many seconds instead, in
    /// pgbench 15's 15 columns: interval_start num_transactions sum_latency sum_latency_2
    /// min_latency max_latency sum_lag sum_lag_2 min_lag max_lag skipped retried retries
    /// serialization_failures deadlock_failures (0 where their flag is not given). The last,
    /// partial interval is written too.
    #[arg(long, value_name = "SECONDS", help_heading = "Scripts")]
    pub aggregate_interval: Option<u64>,
}

#[derive(Debug, Args)]
pub struct TimeitArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// A statement to time (repeatable; cr8's -s); without -s, -f or --builtin, statements are read
    /// from stdin. With a script (-f, -b, -S, -N), a whole number after -s is pgbench's scale
    /// (--scale N); a bare number is never a statement.
    #[arg(short = 's', long = "stmt", value_name = "SQL", help_heading = "Queries")]
    pub stmts: Vec<String>,

    /// Executions of each statement, or script runs in all (default 1000 unless --duration is
    /// given); cr8's meaning. -r without a number is pgbench's -r: --per-statement, for -f and
    /// --builtin scripts. To run the whole measurement again, --runs.
    #[arg(short = 'r', long, value_name = "N", num_args = 0..=1, default_missing_value = "",
          allow_negative_numbers = true, value_parser = repeat_value, action = clap::ArgAction::Append,
          help_heading = "Queries")]
    pub repeat: Vec<Repeat>,

    /// A pgbench script (repeatable; FILE@WEIGHT weighs it against the others, as pgbench's -f):
    /// SQL statements ending in `;`, \set NAME EXPR, \sleep N [us|ms|s], :NAME bound as a
    /// parameter, \startpipeline … \syncpipeline … \endpipeline (not with -M simple). One run of
    /// the script is one operation.
    #[arg(short = 'f', long = "file", value_name = "FILE[@WEIGHT]", help_heading = "Queries")]
    pub files: Vec<String>,

    /// pgbench's built-in script (repeatable, NAME@WEIGHT) on the tables `dbload init` makes.
    #[arg(short = 'b', long, value_name = "tpcb-like|simple-update|select-only[@WEIGHT]", help_heading = "Queries")]
    pub builtin: Vec<String>,

    /// pgbench's -S: its built-in select-only script (-b select-only).
    #[arg(short = 'S', long, help_heading = "Queries")]
    pub select_only: bool,

    /// pgbench's -N: its built-in simple-update script (-b simple-update).
    #[arg(short = 'N', long, help_heading = "Queries")]
    pub skip_some_updates: bool,

    /// pgbench's -D: a variable every script sees from its first line (repeatable); a number,
    /// or a text put in place of :NAME as written (-M simple) or bound (-M extended); a \set may
    /// overwrite it, and -D scale=N sets :scale.
    #[arg(short = 'D', long = "define", value_name = "NAME=VALUE", help_heading = "Scripts")]
    pub defines: Vec<String>,

    /// cr8's -w: N executions of each statement (exactly N, shared out over the connections) before
    /// the measured ones, which --repeat or -t then counts in full; --warmup N instead takes the
    /// warm-up out of --repeat.
    #[arg(short = 'w', value_name = "N", allow_negative_numbers = true, value_parser = count::<u64>, conflicts_with = "warmup", help_heading = "Queries")]
    pub warmup_before: Option<u64>,

    /// cr8's --hosts: CrateDB's HTTP endpoints (host:4200[,host:4200...]); the same as
    /// --url cratedb://host:4200,...
    #[arg(long, value_name = "HOST:PORT,...", conflicts_with = "url", help_heading = "Target")]
    pub hosts: Option<String>,

    #[command(flatten)]
    pub run: QueryRunArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// One `-r`/`--repeat`: given both ways (`-r --repeat 100`, pgbench's and
/// cr8's habits together), each keeps its meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// `-r` alone: pgbench's per-statement report.
    PerStatement,
    /// `-r N`: cr8's executions.
    Times(u64),
}

fn repeat_value(s: &str) -> Result<Repeat, String> {
    match s {
        "" => Ok(Repeat::PerStatement),
        n => count(n).map(Repeat::Times),
    }
}

#[derive(Debug, Args)]
pub struct WorkloadArgs {
    /// The workload file: a YAML list of {query, ratio, name?, params?}; or --suite instead.
    #[arg(value_name = "FILE", required_unless_present_any = ["suite", "queries_config"])]
    pub file: Option<PathBuf>,

    #[command(flatten)]
    pub target: TargetArgs,

    /// A built-in mix instead of a file: tsbs-cpu runs TSBS's 15 cpu-only query types with
    /// equal weights on the table of `dbload ingest --model cpu`, one report row each, their
    /// hosts and time windows drawn from those the table holds (read once before the run).
    #[arg(long, value_enum, help_heading = "Queries")]
    pub suite: Option<Suite>,

    /// With --suite: only these query types, by TSBS's names, comma-separated [default: all]:
    /// single-groupby-M-H-T (1-1-1, 1-1-12, 1-8-1, 5-1-1, 5-1-12, 5-8-1), cpu-max-all-1,
    /// cpu-max-all-8, double-groupby-1, double-groupby-5, double-groupby-all, high-cpu-1,
    /// high-cpu-all, lastpoint, groupby-orderby-limit.
    #[arg(long, value_name = "NAMES", value_delimiter = ',', requires = "suite", help_heading = "Queries")]
    pub suite_queries: Vec<String>,

    /// With --suite: the table the suite queries (NAME or SCHEMA.NAME) [default: cpu].
    #[arg(long, value_name = "NAME", requires = "suite", help_heading = "Queries")]
    pub table: Option<String>,

    /// Stop after this many queries in all.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = count::<u64>, conflicts_with = "transactions", help_heading = "Queries")]
    pub max_queries: Option<u64>,

    #[command(flatten)]
    pub run: QueryRunArgs,

    #[command(flatten)]
    pub node: super::node_ingest::NodeQueryArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

pub(super) const RUN_EXAMPLES: &str = "\
Examples:
  # Ingest and two query mixes at the same time, each mix also alone before
  # and after, for comparison
  dbload run mixed.yml --url $URL --baseline

A mixed-run file names each part's options as the part's own command does:
  duration: 60s             # how long every part runs (a part may set its own)
  ingest:                   # any `dbload ingest` option, by its long name
    model: measurement
    workers: 2
    rate: 50000
  workloads:
    - name: dashboards
      file: queries.yml     # relative to this file; or `queries:`, inline
      concurrency: 4        # any `dbload workload` option
      rate: 100";

/// The flags `dbload run -h` shows; `--help` shows them all.
pub(super) const RUN_MOST_USED: &[&str] =
    &["url", "keep", "baseline", "output", "report", "html", "quiet", "fail-if", "runs"];

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The mixed-run file: an ingest part and query workloads that run at the same time.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    #[command(flatten)]
    pub target: TargetArgs,

    /// Also run each workload alone with the same settings, just before the mixed phase and
    /// again just after it, for comparison; the report gives the table's row count at each point.
    #[arg(long)]
    pub baseline: bool,

    #[command(flatten)]
    pub output: OutputArgs,
}
