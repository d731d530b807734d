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
use crate::op::{Stages, Warmup};
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
    /// `--stages` or `--rate-stages`; `duration` is their total.
    pub stages: Option<Stages>,
    pub warmup: Warmup,
    pub seed: u64,
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
        let bounded_in_time = a.run.duration.is_some() || a.run.stages.given();
        let total = match (a.repeat, bounded_in_time) {
            (Some(0), _) => return Err(usage("--repeat 0: give at least 1 execution")),
            (Some(n), _) => Some(n),
            (None, true) => None,
            (None, false) => Some(DEFAULT_REPEAT),
        };
        Self::resolve("timeit", phases, total, a.run, a.target, a.output, env)
    }

    pub fn workload(a: WorkloadArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<Self> {
        let queries = file::load(&a.file)?;
        if a.max_queries.is_none() && a.run.duration.is_none() && !a.run.stages.given() {
            return Err(usage("workload: say when to stop with --max-queries N, --duration TIME or stages"));
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
        super::check_rate(r.rate, "queries")?;
        let stages = super::resolve_stages(&r.stages, r.duration, r.rate, ("--concurrency", r.concurrency))?;
        let sizing_rate = super::sizing_rate(r.rate, stages.as_ref());
        let concurrency = match (super::stage_workers(stages.as_ref()), r.concurrency, sizing_rate) {
            (Some(n), _, _) => n,
            (None, Some(n), _) => super::connections("--concurrency", n, "query stream")?,
            (None, None, Some(rate)) => default_in_flight(rate, MAX_DEFAULT_CONCURRENCY),
            (None, None, None) => 1,
        };
        let duration = stages.as_ref().map(Stages::duration).or(r.duration);
        if r.duration.is_some_and(|d| d.is_zero()) {
            return Err(usage("--duration 0s: give a positive duration such as 30s or 2m"));
        }
        let flag = if command == "timeit" { "--repeat" } else { "--max-queries" };
        let warmup = parse_warmup(r.warmup.as_deref(), concurrency, "queries", total.map(|n| (n, flag)))?;
        let per_worker = match total {
            Some(n) => split_rows(n, concurrency),
            None => vec![u64::MAX; concurrency as usize],
        };
        Ok(QueryConfig {
            command,
            target: resolve_target(&target, concurrency, env)?,
            phases,
            protocol: r.protocol,
            concurrency,
            per_worker,
            max_queries: total,
            duration,
            rate: r.rate,
            stages,
            warmup,
            seed: r.seed,
            explain: r.explain,
            reconnect: super::reconnect(r.reconnect, r.no_reconnect, duration),
            output: OutputConfig::resolve(output, Contract::Query)?,
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

    /// Stages as k6 reads them: VUs from the connections flag (else 1) up
    /// to the highest target, which sets the workers; a rate from 0, with
    /// the connections flag or the highest rate sizing what is in flight;
    /// the run lasts the stages' total.
    #[test]
    fn stages_set_the_workers_and_the_duration_as_k6_does() {
        use crate::op::Ramps;
        use clap::Parser;
        let timeit = |flags: &[&str]| {
            let argv = [&["dbload", "timeit", "-s", "select 1"], flags].concat();
            let crate::cli::Command::Timeit(a) = crate::cli::Cli::try_parse_from(argv).unwrap().command else {
                unreachable!("timeit")
            };
            QueryConfig::timeit(a, &|_| None, &mut std::io::empty()).unwrap()
        };
        let c = timeit(&["--stages", "30s:10,1m:50,30s:0"]);
        let s = c.stages.as_ref().unwrap();
        assert_eq!((s.ramps, s.start, c.concurrency), (Ramps::Vus, 1.0, 50));
        assert_eq!((c.duration, c.max_queries, c.reconnect), (Some(Duration::from_secs(120)), None, true));
        let c = timeit(&["--stage", "10s:4", "--concurrency", "2"]);
        assert_eq!((c.stages.unwrap().start, c.concurrency), (2.0, 4), "--concurrency is k6's startVUs");
        let c = timeit(&["--rate-stages", "30s:100,1m:1000,30s:1000"]);
        let s = c.stages.as_ref().unwrap();
        assert_eq!((s.ramps, s.start, c.concurrency, c.rate), (Ramps::Rate, 0.0, 20, None));
        assert_eq!(timeit(&["--rate-stages", "10s:5", "--concurrency", "3"]).concurrency, 3);
        assert_eq!(timeit(&["--rate-stages", "10s:5", "--repeat", "7"]).max_queries, Some(7), "whichever first");
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
