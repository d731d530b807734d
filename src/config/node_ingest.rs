//! nodeIngestBench's habits, turned into dbload's own flags before they
//! are resolved, so that its users' command lines run unchanged and then
//! mean what dbload's would: `--processes` × `--concurrent_requests`
//! workers, `--processes` × `--max_rows` rows (exactly: nodeIngestBench
//! itself writes whole batches past `--max_rows`), the table dropped and
//! recreated unless `--drop_table false`, the cpu model (its TSBS rows);
//! and its connection, `CRATE_HOST`, `CRATE_PORT`, `CRATE_USER`,
//! `CRATE_PASSWORD`, `CRATE_SSL`, from the environment or its `.env` file.
//! The habit's [`Options`] are what nodeIngestBench prints when it starts.

use std::path::Path;

use anyhow::Result;
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};

use clap::ValueEnum;

use crate::cli::{IngestArgs, ModelName, WorkloadArgs};
use crate::error::usage;

/// nodeIngestBench's defaults: rows per process, requests per process,
/// queries per process.
const MAX_ROWS: u64 = 1_000_000;
const CONCURRENT_REQUESTS: u32 = 20;
const MAX_QUERIES: u64 = 100;

/// nodeIngestBench's options as it prints them when it starts (its
/// `console.log(options)`), with the values dbload runs with: its users
/// read their run's settings in its words before dbload's report.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The analytical script's block (`appClusterAnalytical.js`), else the ingest script's.
    pub queries: bool,
    pub fields: Vec<(&'static str, OptionValue)>,
}

/// An option's value, as Node's `console.log` shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionValue {
    Bool(bool),
    Number(f64),
    Text(String),
    /// Not given, and dbload takes no default of nodeIngestBench's for it
    /// (the engine's own applies): Node's `undefined`.
    Undefined,
    /// The queries file's entries: each query's text and ratio.
    Queries(Vec<(String, f64)>),
}

fn number(n: impl Into<f64>) -> OptionValue {
    OptionValue::Number(n.into())
}

fn count_or_undefined(n: Option<u64>) -> OptionValue {
    n.map_or(OptionValue::Undefined, |n| number(n as f64))
}

/// Rewrites `a` as nodeIngestBench's flags in it ask; its options if any
/// was given (its blocks are then printed before dbload's report).
pub fn habit(a: &mut IngestArgs) -> Result<Option<Options>> {
    let n = a.node.clone();
    if !n.given() {
        return Ok(None);
    }
    // One Node.js process per CPU, as nodeIngestBench forks by default.
    let processes = n.processes.unwrap_or_else(super::cpus);
    let concurrent = n.concurrent_requests.unwrap_or(CONCURRENT_REQUESTS);
    a.workers = Some(in_flight(processes, (concurrent, "--concurrent_requests"))?);
    let bounded_otherwise = a.rows.is_some() || a.measurements.is_some() || a.duration.is_some();
    let max_rows = match n.max_rows {
        Some(m) => Some(m),
        None if bounded_otherwise || a.stages.given() => None,
        None => Some(MAX_ROWS),
    };
    if let Some(m) = max_rows {
        a.rows = Some(for_all_processes((m, "--max_rows"), processes)?);
    }
    let drop_table = n.drop_table.unwrap_or(true);
    match drop_table {
        true => a.drop_table = true,
        false => a.append = true,
    }
    let model = *a.model.get_or_insert(ModelName::Cpu);
    let table = a.table.clone().unwrap_or_else(|| model.to_possible_value().expect("named").get_name().to_string());
    let replicas = match &a.replicas {
        Some(r) => r.parse::<u32>().map_or_else(|_| OptionValue::Text(r.clone()), number),
        None => OptionValue::Undefined,
    };
    let fields = vec![
        ("dropTable", OptionValue::Bool(drop_table)),
        ("processes", number(processes)),
        ("batchSize", number(a.batch_size as f64)),
        ("maxRows", count_or_undefined(max_rows)),
        ("table", OptionValue::Text(table)),
        ("shards", count_or_undefined(a.shards.map(u64::from))),
        ("concurrentRequests", number(concurrent)),
        ("extraTagsLength", number(a.extra_tags.unwrap_or(0))),
        ("replicas", replicas),
    ];
    Ok(Some(Options { queries: false, fields }))
}

/// Rewrites `a` as nodeIngestBench's analytical flags in it ask
/// (`--queries_config`, `--max_queries` and `--concurrent_queries` per
/// process, `--processes`, one by default); its options if any was given,
/// but for its queries, which [`Options::with_queries`] adds once read.
pub fn query_habit(a: &mut WorkloadArgs) -> Result<Option<Options>> {
    let n = a.node.clone();
    if !n.given() {
        return Ok(None);
    }
    let processes = n.processes.unwrap_or(1);
    let concurrent = n.concurrent_queries.unwrap_or(CONCURRENT_REQUESTS);
    a.run.concurrency = Some(in_flight(processes, (concurrent, "--concurrent_queries"))?);
    if let Some(file) = n.queries_config {
        a.file = Some(file);
    }
    let bounded_otherwise =
        a.max_queries.is_some() || a.run.duration.is_some() || a.run.transactions.is_some() || a.run.stages.given();
    let per_process = match n.max_queries {
        Some(m) => Some(m),
        None if bounded_otherwise => None,
        None => Some(MAX_QUERIES),
    };
    if let Some(m) = per_process {
        a.max_queries = Some(for_all_processes((m, "--max_queries"), processes)?);
    }
    let fields = vec![
        ("processes", number(processes)),
        ("maxQueries", count_or_undefined(per_process)),
        ("concurrentRequests", number(concurrent)),
    ];
    Ok(Some(Options { queries: true, fields }))
}

impl Options {
    /// The analytical options with the queries of the mix, as its file gave them.
    pub fn with_queries(mut self, queries: &[crate::workload::QuerySpec]) -> Options {
        let entries = queries.iter().map(|q| (q.query.clone(), q.ratio)).collect();
        self.fields.push(("queries", OptionValue::Queries(entries)));
        self
    }
}

/// What dbload keeps in flight for `processes` of nodeIngestBench's, each
/// with `concurrent` (the flag that gave it) operations in flight.
fn in_flight(processes: u32, (concurrent, flag): (u32, &str)) -> Result<u32> {
    if processes == 0 || concurrent == 0 {
        return Err(usage(format!(
            "--processes {processes} {flag} {concurrent}: each needs at least 1 (nodeIngestBench's processes each \
             keep {flag} operations in flight)"
        )));
    }
    processes
        .checked_mul(concurrent)
        .ok_or_else(|| usage(format!("--processes {processes} × {flag} {concurrent}: too many connections")))
}

/// A count nodeIngestBench gives per process (`flag`), for all `processes`.
fn for_all_processes((count, flag): (u64, &str), processes: u32) -> Result<u64> {
    count
        .checked_mul(u64::from(processes))
        .ok_or_else(|| usage(format!("{flag} {count} × --processes {processes}: out of range; give fewer")))
}

/// CrateDB's HTTP endpoint as nodeIngestBench connects to it, when
/// `CRATE_HOST` is set: in the environment, else in `dot_env` (its `.env`
/// file, whose other keys are left alone, as is the process's
/// environment). Its defaults: port 4200, user `crate`, no password, no TLS.
pub fn crate_target(env: &dyn Fn(&str) -> Option<String>, dot_env: &Path) -> Result<Option<String>> {
    let unreadable = |e: dotenvy::Error| usage(format!("{}: {e}: fix the file or remove it", dot_env.display()));
    let file: Vec<(String, String)> = match dotenvy::from_path_iter(dot_env) {
        Ok(items) => items.collect::<Result<Vec<_>, _>>().map_err(unreadable)?,
        Err(e) if e.not_found() => Vec::new(),
        Err(e) => return Err(unreadable(e)),
    };
    let var = |k: &str| {
        let from_file = || file.iter().find(|(name, _)| name == k).map(|(_, v)| v.clone());
        env(k).or_else(from_file).filter(|v| !v.is_empty())
    };
    let Some(host) = var("CRATE_HOST") else { return Ok(None) };
    let port = var("CRATE_PORT").unwrap_or_else(|| "4200".into());
    let user = var("CRATE_USER").unwrap_or_else(|| "crate".into());
    let user = utf8_percent_encode(&user, NON_ALPHANUMERIC);
    let password = var("CRATE_PASSWORD").map(|p| format!(":{}", utf8_percent_encode(&p, NON_ALPHANUMERIC)));
    let ssl = if var("CRATE_SSL").as_deref() == Some("true") { "?ssl=true" } else { "" };
    Ok(Some(format!("cratedb://{user}{}@{host}:{port}{ssl}", password.unwrap_or_default())))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::{Cli, Command};
    use crate::config::{IngestConfig, QueryConfig, TableAction};

    fn resolve(args: &str) -> anyhow::Result<IngestConfig> {
        let argv = format!("dbload ingest --url postgres://h/db {args}");
        let Command::Ingest(a) = Cli::try_parse_from(argv.split_whitespace())?.command else { unreachable!("ingest") };
        IngestConfig::resolve(a, &|_| None)
    }

    /// The seed's command line: rows per process, requests per process,
    /// the table dropped first, the cpu model, its batch size.
    #[test]
    fn nodeingestbenchs_command_line_means_what_it_means_there() {
        let c = resolve("--batch_size 20000 --max_rows 1000000 --shards 12 --concurrent_requests 20 --processes 2")
            .unwrap();
        assert_eq!((c.workers, c.total_rows(), c.batch_size), (40, Some(2_000_000), 20_000));
        assert_eq!((c.table_action, c.model.name()), (TableAction::Recreate, "cpu"));
        let fields = &c.node_options.as_ref().expect("nodeIngestBench's options").fields;
        assert_eq!(fields[0], ("dropTable", super::OptionValue::Bool(true)));
        assert_eq!(fields[3], ("maxRows", super::OptionValue::Number(1e6)), "per process, as given");
        assert_eq!(fields[5], ("shards", super::OptionValue::Number(12.0)));
        let c = resolve("--processes 1 --concurrent_requests 4 --drop_table false --extra_tags_length 3").unwrap();
        assert_eq!((c.workers, c.total_rows(), c.table_action), (4, Some(1_000_000), TableAction::Append));
        let c = resolve("--processes 1 --concurrent_requests 2 --duration 5s").unwrap();
        assert_eq!(c.total_rows(), None, "a duration bounds the run instead of the default --max_rows");
        assert!(resolve("--rows 10").unwrap().node_options.is_none(), "dbload's own flags print no Global Results");
    }

    /// nodeIngestBench's connection: the environment first, then its
    /// `.env`; its defaults for what neither gives; none without CRATE_HOST.
    #[test]
    fn crate_variables_name_the_target_as_nodeingestbench_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let dot_env = dir.path().join(".env");
        let none = |_: &str| None;
        assert_eq!(super::crate_target(&none, &dot_env).unwrap(), None, "no .env, no CRATE_HOST");
        let file = "CRATE_HOST=db1\nCRATE_USER=admin\nCRATE_PASSWORD=\"p@ss word\"\nCRATE_SSL=true\nOTHER=x\n";
        std::fs::write(&dot_env, file).unwrap();
        let url = super::crate_target(&none, &dot_env).unwrap();
        assert_eq!(url.as_deref(), Some("cratedb://admin:p%40ss%20word@db1:4200?ssl=true"));
        let env = |k: &str| (k == "CRATE_HOST").then(|| "db2".to_string());
        let url = super::crate_target(&env, &dot_env).unwrap().unwrap();
        assert!(url.contains("@db2:4200"), "the environment wins over the file: {url}");
        let local = |k: &str| (k == "CRATE_HOST").then(|| "localhost".to_string());
        std::fs::write(&dot_env, "CRATE_HOST=db1\nCRATE_PASSWORD=two words\n").unwrap();
        let e = super::crate_target(&none, &dot_env).unwrap_err().to_string();
        assert!(e.contains(".env") && e.contains("fix the file"), "a line it cannot read is named, not skipped: {e}");
        std::fs::remove_file(&dot_env).unwrap();
        assert_eq!(super::crate_target(&local, &dot_env).unwrap().as_deref(), Some("cratedb://crate@localhost:4200"));
    }

    /// The seed's analytical command line: 500 queries, 10 in flight (its
    /// README's flag; its code reads --concurrent_requests, taken too).
    #[test]
    fn nodeingestbenchs_analytical_command_line_runs_the_workload() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("queries.yml");
        std::fs::write(&file, "- query: SELECT 1\n  ratio: 0.4\n- query: SELECT 2\n  ratio: 0.6\n").unwrap();
        let workload = |flags: &str| {
            let argv = format!("dbload workload --url postgres://h/db --queries_config {} {flags}", file.display());
            let Command::Workload(a) = Cli::try_parse_from(argv.split_whitespace()).unwrap().command else {
                unreachable!("workload")
            };
            QueryConfig::workload(a, &|_| None).unwrap()
        };
        let c = workload("--max_queries 500 --concurrent_queries 10 --processes 1");
        assert_eq!((c.concurrency, c.max_queries, c.phases[0].len()), (10, Some(500), 2));
        let fields = &c.node_options.as_ref().expect("nodeIngestBench's options").fields;
        let queries = vec![("SELECT 1".to_string(), 0.4), ("SELECT 2".to_string(), 0.6)];
        assert_eq!(fields[3], ("queries", super::OptionValue::Queries(queries)));
        let c = workload("--max_queries 50 --concurrent_requests 3 --processes 2");
        assert_eq!((c.concurrency, c.max_queries), (6, Some(100)));
        let c = workload("--processes 1");
        assert_eq!((c.concurrency, c.max_queries), (20, Some(100)), "nodeIngestBench's defaults");
    }

    #[test]
    fn nodeingestbenchs_flags_that_contradict_dbloads_are_refused() {
        for (args, culprit) in [
            ("--processes 2 --workers 4", "--workers"),
            ("--max_rows 10 --rows 10", "--rows"),
            ("--drop_table --append", "--append"),
            ("--processes 0", "--processes 0"),
        ] {
            let e = resolve(args).unwrap_err().to_string();
            assert!(e.contains(culprit), "{args}: {e}");
        }
    }
}
