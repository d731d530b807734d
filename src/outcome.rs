//! What a run found, as plain data: the one type family every command's run
//! (`run/`) produces and every report (`report/`) reads. A report is made
//! from these values alone, after the run: it opens no connection, reads no
//! live model or driver state, and could be made again from a saved outcome.
//!
//! A module of its own rather than a part of `stats/`: an outcome names what
//! the setup found (an engine, a method), the queries a run sent and their
//! plans (`workload/`), so it sits above those layers, while `stats/`
//! (recorders, summaries) sits below them and is what drivers and workloads
//! record into. It names neither the run that made it, nor a driver, model,
//! configuration or report (checked by `tests/architecture.rs`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use chrono::{DateTime, SecondsFormat, Utc};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::dialect::{citus::NodeSettings, Engine, Method};
use crate::stats::cost::ClientCost;
use crate::stats::http::HttpStats;
use crate::stats::query::{Connects, Retries, StatementSummary};
use crate::stats::server::ServerTimeline;
use crate::stats::threads::Busiest;
use crate::stats::{PhaseSummary, Recorder};
use crate::workload::explain::Explain;
use crate::workload::tsbs::CpuData;
use crate::workload::QuerySpec;

/// A name in a report: one the code gives (borrowed, free), or one read
/// back from a kept report's JSON (`dbload results show`), which owns it.
pub type Name = std::borrow::Cow<'static, str>;
/// What a run found out about its target before it started.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// The engine, or none on a dry run.
    pub engine: Option<Engine>,
    /// The engine's own version (TimescaleDB's or Citus' extension, CrateDB's).
    pub engine_version: Option<String>,
    pub server_version: Option<String>,
    /// The address and port the server answered on, as the server sees
    /// them (`inet_server_addr()`); none over a Unix socket, or on CrateDB.
    pub server_address: Option<String>,
    /// The server settings that matter for ingest, as the server shows them.
    pub server_settings: Vec<(String, String)>,
    /// Citus: the same settings on each worker node.
    pub worker_settings: Vec<NodeSettings>,
    /// What the engine made of the table: chunks, shards, nodes.
    pub layout: Vec<(String, String)>,
    /// The statements that created the table (empty if it was reused).
    pub ddl: Vec<String>,
    /// The columns written, in order, when they were read from the table's catalog.
    pub columns: Option<Vec<String>>,
    /// `insert`: the rows each multi-row INSERT statement carries.
    pub insert_rows_per_statement: Option<usize>,
}

/// `verify`: rows the table gained (`found`) against rows the database
/// acknowledged (`expected`); equal, or with upserts, no more than them.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Verify {
    pub expected: u64,
    /// None when the rows could not be counted (`error` says why).
    pub found: Option<u64>,
    pub ok: bool,
    /// Why verify could not run: the run's figures stand, unverified.
    pub error: Option<String>,
}

/// What one measured stretch of the worker loop leaves, whatever the
/// command: the workers' recorders merged, the time it took, what the
/// client cost, and how it ended.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// Merged over the workers, one per label: one for every command but
    /// a query phase, which labels its operations by query.
    pub recorders: Vec<Recorder>,
    /// From the common start of the workers to the end of the last operation.
    pub wall: Duration,
    pub cost: ClientCost,
    /// Stopped by Ctrl-C: the figures cover what was done until then.
    pub interrupted: bool,
    /// Why the run stopped on its own before its end (a panic, or
    /// operations that all failed for a sustained stretch), if it did.
    pub stopped: Option<String>,
    /// Open loop: units the schedule called for that never started.
    pub dropped: Option<u64>,
    /// What the server was doing meanwhile; none when it was not sampled
    /// (a dry run, a command that does not sample).
    pub server: Option<ServerTimeline>,
    /// The client's busiest thread in each whole second (empty when not measured).
    pub client_load: Vec<Busiest>,
}

impl Figures {
    /// The recorder of a run whose operations carry one label.
    pub fn recorder(&self) -> &Recorder {
        &self.recorders[0]
    }
}

/// An ingest run (`ingest`, `insert-fake-data`, `insert-json`).
pub struct IngestOutcome {
    pub setup: Setup,
    /// The method the run settled on (`--method`, or the engine's best).
    pub method: Method,
    pub figures: Figures,
    pub verify: Option<Verify>,
    /// CrateDB's own `duration` of each request, beside the round trip.
    pub server_duration: Option<Histogram<u64>>,
    /// insert-json: what reading its input found.
    pub input: Option<crate::input::Stats>,
    pub server_cost: ServerCost,
}

/// What the server paid for a run that wrote or read a table, as the
/// engine's own functions measure it. Each part is a figure or why there
/// is none (a standby writes no WAL, CrateDB has none of PostgreSQL's kind).
#[derive(Debug, Clone, Default)]
pub struct ServerCost {
    /// The table after the run; none on a dry run.
    pub size: Option<Result<TableSize, String>>,
    /// Bytes of WAL the whole server wrote (other sessions' too) from the
    /// workers' start to their end; none on a dry run.
    pub wal_bytes: Option<Result<u64, String>>,
    /// TimescaleDB `--compress`: the hypertable before and after.
    pub compression: Option<Result<Compression, String>>,
    /// Citus and CrateDB: the table's part on each node; none on engines
    /// that keep a table on one server.
    pub nodes: Option<Result<Vec<NodeShare>, String>>,
}

/// One node's part of a table spread over a cluster (Citus' shard
/// placements, CrateDB's `sys.shards`), as the engine reports it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeShare {
    /// `host:port` (Citus) or the node's name (CrateDB); none for CrateDB
    /// shards that no node holds (unassigned).
    pub node: Option<String>,
    /// Shard placements on the node (CrateDB: its primary shards).
    pub shards: u64,
    /// CrateDB: replica shards on the node; none on Citus, whose placements
    /// are not told apart so.
    pub replica_shards: Option<u64>,
    /// Rows (CrateDB: documents, replicas' too) on the node; none when a
    /// shard could not be counted.
    pub rows: Option<u64>,
    /// Bytes of its shards on the node (Citus: with their indexes).
    pub bytes: u64,
}

/// A table's size on the server and the rows it holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TableSize {
    /// The table's own bytes (heap, TOAST and maps; summed over partitions,
    /// chunks or shards; CrateDB: its primary shards).
    pub table_bytes: u64,
    /// Its indexes' bytes; none on CrateDB, whose shards hold their index.
    pub index_bytes: Option<u64>,
    /// CrateDB: the bytes of every shard copy, replicas included; Citus:
    /// a reference table's copies on every node.
    pub with_replicas_bytes: Option<u64>,
    /// Rows in the table when it was measured.
    pub rows: u64,
}

/// TimescaleDB `--compress`: the chunks compressed and the hypertable's size around it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Compression {
    pub chunks: u64,
    pub before: TableSize,
    pub after: TableSize,
}

/// One statement's `pg_stat_statements` counters over a query run: the
/// difference of two snapshots taken around it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StatementCost {
    pub calls: u64,
    pub total_exec_ms: f64,
    pub rows: u64,
    pub shared_blks_hit: u64,
    pub shared_blks_read: u64,
}

/// One statement's counters and the run's queries that sent it (indexes
/// into the phases' queries in order). Queries that differ only in their
/// constants or parameters (TSBS's single-groupby-1-1-1 and -1-1-12) are
/// one statement to `pg_stat_statements`, whose counters cannot be split
/// between them: one entry for them all, not the same figures twice.
#[derive(Debug, Clone, PartialEq)]
pub struct SentStatement {
    pub queries: Vec<usize>,
    pub cost: StatementCost,
}

/// One group of queries measured together (a timeit statement, or the mix).
pub struct PhaseOutcome {
    pub queries: Arc<[QuerySpec]>,
    /// One per query, merged across workers. The recorders it was made of
    /// went into the run's total (see [`QueryOutcome`]): a phase keeps no histogram.
    pub summary: PhaseSummary,
    /// `--explain`: the plan of each query, or why there is none.
    pub explains: Vec<Result<Explain, String>>,
    /// Per query, its script's statements (none for a query), workers merged.
    pub statements: Vec<Vec<StatementSummary>>,
}

/// A query run (`timeit`, `workload`, a mixed run's workload).
pub struct QueryOutcome {
    pub setup: Setup,
    pub phases: Vec<PhaseOutcome>,
    /// Every phase's recorders merged into one (the run's totals, timeline
    /// and errors); its wall and dropped queries summed over the phases;
    /// the cost of them all. A stop ends the run: later phases did not run.
    pub figures: Figures,
    /// CrateDB over HTTP: its own duration of each query, merged over workers and phases.
    pub server_duration: Option<Histogram<u64>>,
    /// pgbench scripts' `:scale`, as given or counted; none without scripts.
    pub scale: Option<i64>,
    /// `--suite`: the hosts and time range its parameters were drawn from.
    pub suite_data: Option<CpuData>,
    /// `pg_stat_statements` over the run: one per statement that ran, in
    /// the order of the phases' queries, or why there are no counters (the
    /// extension is not installed).
    pub statements: Result<Vec<SentStatement>, String>,
    /// The threads its workers ran on (pgbench's `-j`).
    pub threads: usize,
    /// Opening the workers' connections, before each phase's measured
    /// window, phases summed (pgbench's initial connection time).
    pub connecting: Duration,
    /// Script runs tried more than once (`--max-tries`), over every phase.
    pub retries: Retries,
    /// `-C`: the connections made for each run, over every phase.
    pub connects: Connects,
}

/// `dbload init`: pgbench's tables made and filled.
#[derive(Debug, Default)]
pub struct InitOutcome {
    pub scale: i64,
    /// The steps done, in the order `-I` gave them (pgbench's words).
    pub steps: Vec<InitStep>,
    /// All steps together.
    pub seconds: f64,
    /// Stopped by Ctrl-C while filling: the tables are incomplete.
    pub interrupted: bool,
}

#[derive(Debug)]
pub struct InitStep {
    pub step: Name,
    pub seconds: f64,
    /// Rows written, for the step that fills the tables.
    pub rows: Option<u64>,
}

/// A `dbload http` run.
pub struct HttpOutcome {
    pub figures: Figures,
    pub stats: HttpStats,
    /// The threads its VUs ran on.
    pub threads: usize,
}

/// What a `dbload k6 run` found: the loop's figures (one operation per
/// iteration), the HTTP figures of its requests, and k6's metrics.
#[derive(Debug)]
pub struct K6Outcome {
    pub figures: Figures,
    /// Bytes, connections and statuses of every request.
    pub stats: HttpStats,
    pub metrics: crate::stats::k6::Metrics,
    /// The threads its VUs' requests ran on.
    pub threads: usize,
}

/// What became of one file of an export.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ExportedFile {
    pub path: PathBuf,
    pub rows: u64,
    /// Bytes of rows, before compression.
    pub bytes: u64,
    /// The file's size on disk.
    pub file_bytes: u64,
    /// False when the export stopped (Ctrl-C, an error) before its last row.
    pub complete: bool,
    /// Why the file ends early: the error writing it (naming the file and
    /// the OS error) and whether it could be cut back to its last whole row.
    pub error: Option<String>,
}

/// An export run.
pub struct ExportOutcome {
    pub setup: Setup,
    pub figures: Figures,
    pub files: Vec<ExportedFile>,
    /// The workers the export ran: `--workers`, or what the engine found
    /// takes (one on Citus).
    pub workers: u32,
    /// The table's rows as the planner estimates them (`pg_class.reltuples`;
    /// CrateDB: its `count(*)`), for the progress bar's ETA; none for a
    /// query or a table never analyzed.
    pub rows_estimate: Option<u64>,
    /// The size of the table read (none for a query; no WAL: it reads).
    pub server_cost: ServerCost,
}

/// An insert-from-sql run.
pub struct FromSqlOutcome {
    /// The source server.
    pub source: Setup,
    /// The target server.
    pub setup: Setup,
    /// How the rows went in: binary COPY on PostgreSQL-family targets, the
    /// ingest's settled method on CrateDB.
    pub method: Method,
    /// The table's columns that were filled, in the query's order.
    pub columns: Vec<String>,
    pub figures: Figures,
    /// Bytes of the batches the target took (CrateDB: of the JSON rows read).
    pub bytes: u64,
    /// How the source failed mid-stream, if it did.
    pub source_error: Option<String>,
    /// Rows read from the source: those the run was asked to copy.
    pub rows_read: u64,
    /// The target table's size after the run, and the WAL the target wrote.
    pub server_cost: ServerCost,
}

/// A mixed run (`dbload run FILE`).
pub struct MixedOutcome {
    pub ingest: Option<IngestOutcome>,
    pub workloads: Vec<WorkloadOutcome>,
    /// With `--baseline` and an ingest part: the rows in its table when the
    /// mixed phase started and when it ended (the baselines ran at those sizes).
    pub table_rows: Option<(u64, u64)>,
}

/// One workload of a mixed run: under load, and alone before and after (`--baseline`).
pub struct WorkloadOutcome {
    pub under_load: QueryOutcome,
    pub alone_before: Option<QueryOutcome>,
    pub alone_after: Option<QueryOutcome>,
}

/// A distributed run's part (`--instance`), as the report's `run.instance`
/// object states it: which part of which distributed run this is,
/// and when its workers started (what `dbload report --run-id` lines the
/// instances' timelines up by).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct InstanceMeta {
    /// `--run-id`, shared by the instances.
    pub run_id: String,
    /// 0-based.
    pub index: u32,
    pub count: u32,
    /// When this instance's workers were let go, UTC, RFC 3339: the common
    /// start (within a few milliseconds), after every instance was ready.
    pub started_at: String,
}

impl InstanceMeta {
    /// `started`: when the workers were let go.
    pub fn new(run_id: String, index: u32, count: u32, started: SystemTime) -> InstanceMeta {
        InstanceMeta { run_id, index, count, started_at: rfc3339(started) }
    }
}

/// `t` in UTC, RFC 3339 with milliseconds (`2026-11-24T08:20:41.123Z`): how
/// the times of a report's `run` object are written.
pub(crate) fn rfc3339(t: SystemTime) -> String {
    DateTime::<Utc>::from(t).to_rfc3339_opts(SecondsFormat::Millis, true)
}
