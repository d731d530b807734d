//! `QueryConfig`: `timeit` and `workload` flags and files resolved once.

use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

use super::fail_if::Contract;
use super::ingest::split_rows;
use super::{default_in_flight, parse_warmup, resolve_target, OutputConfig, TargetChoice};
use crate::cli::{QueryRunArgs, TimeitArgs, WorkloadArgs};
use crate::error::usage;
use crate::op::Warmup;
use crate::workload::explain::ExplainMode;
use crate::workload::Protocol;
use crate::workload::{file, QuerySpec};

/// `timeit`'s default number of executions per statement.
const DEFAULT_REPEAT: u64 = 1000;
/// With `--rate` and no `--concurrency`: one connection per query/s, up to
/// this many. Fewer than `dbload http`'s 100 VUs, because each is a server
/// connection, and PostgreSQL's default `max_connections` is 100 in all.
pub const MAX_DEFAULT_CONCURRENCY: u32 = 20;

#[derive(Debug)]
pub struct QueryConfig {
    pub command: &'static str,
    pub target: TargetChoice,
    /// Measured one after another (timeit: one phase per statement).
    pub phases: Vec<Arc<[QuerySpec]>>,
    pub protocol: Protocol,
    pub concurrency: u32,
    /// Queries each worker runs in a phase (u64::MAX: until the duration ends).
    pub per_worker: Vec<u64>,
    pub max_queries: Option<u64>,
    pub duration: Option<Duration>,
    /// Total queries per second, open loop.
    pub rate: Option<f64>,
    pub warmup: Warmup,
    pub seed: u64,
    /// The number of the first worker among the whole run's (`--instance`:
    /// each instance's workers draw their own random streams).
    pub first_worker: u32,
    pub explain: Option<ExplainMode>,
    /// A lost connection is replaced rather than ending its worker.
    pub reconnect: bool,
    pub output: OutputConfig,
}

impl QueryConfig {
    /// `stdin` is read for statements when no `-s` is given.
    pub fn timeit(a: TimeitArgs, env: &dyn Fn(&str) -> Option<String>, stdin: &mut dyn Read) -> Result<Self> {
        let stmts = if a.stmts.is_empty() {
            let mut text = String::new();
            stdin.read_to_string(&mut text).context("reading statements from stdin")?;
            split_statements(&text)
        } else {
            a.stmts
                .iter()
                .map(|s| s.trim().trim_end_matches(';').trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        };
        if stmts.is_empty() {
            return Err(usage("timeit: no statement given; pass -s \"select ...\" or pipe statements on stdin"));
        }
        let phases = stmts
            .into_iter()
            .enumerate()
            .map(|(i, query)| {
                let spec = QuerySpec { name: format!("s{}", i + 1), query, ratio: 1.0, params: Vec::new(), line: 0 };
                Arc::from(vec![spec])
            })
            .collect();
        let total = match (a.repeat, a.run.duration) {
            (Some(0), _) => return Err(usage("--repeat 0: give at least 1 execution")),
            (Some(n), _) => Some(n),
            (None, Some(_)) => None,
            (None, None) => Some(DEFAULT_REPEAT),
        };
        Self::resolve("timeit", phases, total, a.run, a.target, a.output, env)
    }

    pub fn workload(a: WorkloadArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<Self> {
        let queries = file::load(&a.file)?;
        if a.max_queries.is_none() && a.run.duration.is_none() {
            return Err(usage("workload: say when to stop with --max-queries N or --duration TIME"));
        }
        if a.max_queries == Some(0) {
            return Err(usage("--max-queries 0: give at least 1 query"));
        }
        Self::resolve("workload", vec![queries.into()], a.max_queries, a.run, a.target, a.output, env)
    }

    /// Shared by the commands and by the workloads of a mixed run.
    pub(crate) fn resolve(
        command: &'static str,
        phases: Vec<Arc<[QuerySpec]>>,
        total: Option<u64>,
        r: QueryRunArgs,
        target: crate::cli::TargetArgs,
        output: crate::cli::OutputArgs,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self> {
        let output = OutputConfig::resolve(output, Contract::Query)?;
        let instance = output.instance.clone();
        // --rate and the counts are the whole run's; this instance does its share.
        let rate = super::check_rate(r.rate, "queries")?.map(|r| instance.as_ref().map_or(r, |i| i.rate(r)));
        let concurrency = match (r.concurrency, rate) {
            (Some(n), _) => super::connections("--concurrency", n, "query stream")?,
            (None, Some(rate)) => default_in_flight(rate, MAX_DEFAULT_CONCURRENCY),
            (None, None) => 1,
        };
        if r.duration.is_some_and(|d| d.is_zero()) {
            return Err(usage("--duration 0s: give a positive duration such as 30s or 2m"));
        }
        let flag = if command == "timeit" { "--repeat" } else { "--max-queries" };
        let all_workers = instance.as_ref().map_or(concurrency, |i| i.all_workers(concurrency));
        let warmup = parse_warmup(r.warmup.as_deref(), all_workers, "queries", total.map(|n| (n, flag)))?;
        let per_worker: Vec<u64> = match (total, &instance) {
            (Some(n), Some(i)) => i.shares(n, concurrency),
            (Some(n), None) => split_rows(n, concurrency),
            (None, _) => vec![u64::MAX; concurrency as usize],
        };
        let max_queries = total.map(|_| per_worker.iter().sum());
        Ok(QueryConfig {
            command,
            target: resolve_target(&target, concurrency, env)?,
            phases,
            protocol: r.protocol,
            concurrency,
            per_worker,
            max_queries,
            duration: r.duration,
            rate,
            warmup,
            seed: r.seed,
            first_worker: instance.as_ref().map_or(0, |i| i.first_worker(concurrency)),
            explain: r.explain,
            reconnect: super::reconnect(r.reconnect, r.no_reconnect, r.duration),
            output,
        })
    }
}

/// Statements from a script: `;`-separated (outside quotes), `--` comments dropped.
pub fn split_statements(text: &str) -> Vec<String> {
    let mut stmts = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for line in text.lines() {
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (None, '\'' | '"') => quote = Some(c),
                (None, '-') if chars.peek() == Some(&'-') => break,
                (None, ';') => {
                    stmts.push(std::mem::take(&mut cur));
                    continue;
                }
                _ => {}
            }
            cur.push(c);
        }
        cur.push('\n');
    }
    stmts.push(cur);
    stmts.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As for ingest: on by default where a deadline bounds the wait for a
    /// server that may not return, and as the flags say.
    #[test]
    fn reconnect_is_on_by_default_with_a_duration() {
        use clap::Parser;
        let reconnects = |flags: &[&str]| {
            let argv = [&["dbload", "timeit", "-s", "select 1"][..], flags].concat();
            let crate::cli::Command::Timeit(a) = crate::cli::Cli::try_parse_from(argv).unwrap().command else {
                unreachable!("timeit")
            };
            QueryConfig::timeit(a, &|_| None, &mut std::io::empty()).unwrap().reconnect
        };
        assert!(reconnects(&["--duration", "10s"]));
        assert!(!reconnects(&["--duration", "10s", "--no-reconnect"]));
        assert!(!reconnects(&["--repeat", "10"]));
        assert!(!reconnects(&[]));
        assert!(reconnects(&["--repeat", "10", "--reconnect"]));
        assert!(reconnects(&["--reconnect", "--no-reconnect", "--reconnect", "--duration", "1s"]));
    }

    #[test]
    fn statements_split_on_semicolons_outside_quotes() {
        let script = "-- a comment\nselect 1; select ';' -- trailing\n;\n\nselect \"a;b\" from t";
        assert_eq!(split_statements(script), vec!["select 1", "select ';'", "select \"a;b\" from t"]);
    }

    /// Found by `bench/fuzz.sh`: `--concurrency 2147483647` set up that many
    /// query streams before the run (minutes, gigabytes) instead of refusing.
    #[test]
    fn concurrency_beyond_any_server_is_refused() {
        use clap::Parser;
        let cli =
            crate::cli::Cli::try_parse_from(["dbload", "timeit", "-s", "select 1", "--concurrency", "2147483647"]);
        let crate::cli::Command::Timeit(a) = cli.unwrap().command else { unreachable!("timeit") };
        let e = QueryConfig::timeit(a, &|_| None, &mut std::io::empty()).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().starts_with("--concurrency 2147483647: at most 100000"), "{e}");
    }
}
