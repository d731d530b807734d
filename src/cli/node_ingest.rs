//! nodeIngestBench's flags, typed as its users type them: underscores,
//! counts per process. Ingest (`node appClusterIngest.js --batch_size
//! 20000 --max_rows 1000000 --processes 2 --concurrent_requests 20`):
//! `--batch_size` and `--extra_tags_length` are aliases of dbload's own
//! flags; these are the ones whose meaning differs. Queries (`node
//! appClusterAnalytical.js --queries_config queries.yml --max_queries 500
//! --concurrent_queries 10 --processes 1`) on `dbload workload`.

use std::path::PathBuf;

use clap::Args;

use super::values::count;

#[derive(Debug, Clone, Default, Args)]
pub struct NodeIngestArgs {
    /// nodeIngestBench: rows per process; dbload writes exactly --processes × --max_rows
    /// (default 1,000,000 when another of these flags is given).
    #[arg(long = "max_rows", value_name = "N", value_parser = count::<u64>, conflicts_with_all = ["rows", "measurements"], help_heading = "nodeIngestBench")]
    pub max_rows: Option<u64>,

    /// nodeIngestBench: processes, each with --concurrent_requests requests in flight; dbload
    /// runs processes × concurrent_requests workers in one process (default: the CPUs).
    #[arg(long = "processes", value_name = "N", conflicts_with = "workers", help_heading = "nodeIngestBench")]
    pub processes: Option<u32>,

    /// nodeIngestBench: requests in flight per process (default 20).
    #[arg(
        long = "concurrent_requests",
        value_name = "N",
        conflicts_with = "workers",
        help_heading = "nodeIngestBench"
    )]
    pub concurrent_requests: Option<u32>,

    /// nodeIngestBench: drop and recreate the table (true, its default whenever its flags are
    /// used), or add to it (false).
    #[arg(id = "node_drop_table", long = "drop_table", value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", conflicts_with_all = ["drop_table", "append"], help_heading = "nodeIngestBench")]
    pub drop_table: Option<bool>,
}

impl NodeIngestArgs {
    /// Whether any of nodeIngestBench's own flags was given.
    pub fn given(&self) -> bool {
        self.max_rows.is_some()
            || self.processes.is_some()
            || self.concurrent_requests.is_some()
            || self.drop_table.is_some()
    }
}

#[derive(Debug, Clone, Default, Args)]
pub struct NodeQueryArgs {
    /// nodeIngestBench: the queries file (what FILE gives).
    #[arg(long = "queries_config", value_name = "FILE", conflicts_with_all = ["file", "suite"], help_heading = "nodeIngestBench")]
    pub queries_config: Option<PathBuf>,

    /// nodeIngestBench: queries per process; dbload runs --processes × --max_queries in all
    /// (default 100 when another of these flags is given).
    #[arg(id = "node_max_queries", long = "max_queries", value_name = "N", value_parser = count::<u64>, conflicts_with = "max_queries", help_heading = "nodeIngestBench")]
    pub max_queries: Option<u64>,

    /// nodeIngestBench: queries in flight per process (default 20; its code reads
    /// --concurrent_requests, also taken).
    #[arg(
        long = "concurrent_queries",
        alias = "concurrent_requests",
        value_name = "N",
        conflicts_with = "concurrency",
        help_heading = "nodeIngestBench"
    )]
    pub concurrent_queries: Option<u32>,

    /// nodeIngestBench: processes, each with --concurrent_queries queries in flight; dbload
    /// runs processes × concurrent_queries connections in one process (default 1).
    #[arg(
        id = "node_processes",
        long = "processes",
        value_name = "N",
        conflicts_with = "concurrency",
        help_heading = "nodeIngestBench"
    )]
    pub processes: Option<u32>,
}

impl NodeQueryArgs {
    /// Whether any of nodeIngestBench's own flags was given.
    pub fn given(&self) -> bool {
        self.queries_config.is_some()
            || self.max_queries.is_some()
            || self.concurrent_queries.is_some()
            || self.processes.is_some()
    }
}
