//! `QueryConfig`: `timeit` and `workload` flags and files resolved once.

use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use super::fail_if::Contract;
use super::ingest::split_rows;
use super::load::Load;
use super::{default_in_flight, parse_warmup, resolve_target, OutputConfig, TargetChoice};
use crate::cli::{PgbenchLogArgs, QueryRunArgs, Repeat, TimeitArgs, WorkloadArgs};
use crate::dialect::pgbench::BUILTINS;
use crate::error::usage;
use crate::file_cap::{self, Cap};
use crate::ident::TableName;
use crate::op::{Stages, Warmup};
use crate::stats::txlog::{Columns, LogConfig};
use crate::workload::explain::ExplainMode;
use crate::workload::script::{Define, Script};
use crate::workload::tsbs::CpuSuite;
use crate::workload::Protocol;
use crate::workload::{file, QuerySpec};

/// `timeit`'s default number of executions per statement.
const DEFAULT_REPEAT: u64 = 1000;
/// With `--rate` and no `--concurrency`: one connection per query/s, up to
/// this many. Fewer than `dbload http`'s 100 VUs, because each is a server
/// connection, and PostgreSQL's default `max_connections` is 100 in all.
pub const MAX_DEFAULT_CONCURRENCY: u32 = 20;

#[derive(Debug, Clone)]
pub struct QueryConfig {
    pub command: &'static str,
    pub target: TargetChoice,
    /// Measured one after another (timeit: one phase per statement).
    pub phases: Vec<Arc<[QuerySpec]>>,
    /// `--suite`: a mix whose statements need the engine and whose
    /// parameters need the table's data, so it becomes the run's one phase
    /// once both are known (`phases` is then empty).
    pub suite: Option<CpuSuite>,
    pub protocol: Protocol,
    /// `--pipeline`: queries in flight on each connection at once (1: one at a time).
    pub pipeline: usize,
    pub concurrency: u32,
    /// Queries each worker runs in a phase (u64::MAX: until the duration ends).
    pub per_worker: Vec<u64>,
    pub max_queries: Option<u64>,
    /// Duration, rate (total queries per second), stages, warm-up, seed, first worker, reconnect.
    pub load: Load,
    pub explain: Option<ExplainMode>,
    pub output: OutputConfig,
    /// The `:scale` of pgbench scripts.
    pub scale: Scale,
    /// Scripts' statements are reported one by one (pgbench's `-r`).
    pub per_statement: bool,
    /// Tries a pgbench script run gets (`--max-tries`, at least 1).
    pub max_tries: u32,
    /// `--failures-detailed`: the report counts failures by pgbench's kinds.
    pub failures_detailed: bool,
    /// `-l`: pgbench's transaction log.
    pub log: Option<LogConfig>,
    /// `-C`: a new connection for each query or script run.
    pub connect_each: bool,
    /// `-L`: the latency above which a run is counted late (pgbench's latency limit).
    pub latency_limit: Option<Duration>,
    /// `--threads` (pgbench's `-j`): the threads that run the workers
    /// (`run::cores`); none: one per CPU.
    pub threads: Option<usize>,
    /// nodeIngestBench's flags were given: its options, printed with its
    /// Options block at the start and its Global Results block before the report.
    pub node_options: Option<super::node_ingest::Options>,
    /// What pgbench's tables get before the run, as pgbench does before its scripts.
    pub vacuum: Vacuum,
}

/// pgbench's vacuum before a run of scripts (dialect::pgbench::VACUUM_BEFORE_RUN).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vacuum {
    /// `-n`, or no pgbench script in the run.
    Skip,
    /// pgbench_branches and pgbench_tellers vacuumed, pgbench_history truncated.
    Tables,
    /// `-v`: pgbench_accounts vacuumed (and analyzed) too.
    WithAccounts,
}

/// Where pgbench scripts' `:scale` comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// `--scale N`, or 1 (pgbench's default for custom scripts).
    Given(i64),
    /// Counted from `pgbench_branches` once connected, as pgbench does
    /// whenever a built-in script runs; `given`: a `-s`/`--scale` that is
    /// then ignored, with pgbench's warning.
    Counted { given: Option<i64> },
}

impl QueryConfig {
    /// `stdin` is read for statements when no `-s` and no script is given;
    /// `None` when it is a terminal, where nothing was piped: then, or when
    /// nothing came through the pipe, timeit runs pgbench's default, its
    /// built-in tpcb-like, as `pgbench -c 4 -T 60` does (the summary names
    /// it: "transaction type: <builtin: TPC-B (sort of)>").
    pub fn timeit(
        mut a: TimeitArgs,
        env: &dyn Fn(&str) -> Option<String>,
        stdin: Option<&mut dyn Read>,
    ) -> Result<Self> {
        super::cr8_hosts(&mut a.target, a.hosts.as_deref());
        // `-r` alone is pgbench's per-statement report; `-r N`, cr8's repetitions.
        let pgbench_r = a.repeat.contains(&Repeat::PerStatement);
        let repeat = a.repeat.iter().rev().find_map(|r| match r {
            Repeat::Times(n) => Some(*n),
            Repeat::PerStatement => None,
        });
        // pgbench's -S and -N are two of its built-in scripts.
        let mut builtins = std::mem::take(&mut a.builtin);
        builtins.extend(a.select_only.then(|| "select-only".to_string()));
        builtins.extend(a.skip_some_updates.then(|| "simple-update".to_string()));
        let nothing_given = a.files.is_empty() && builtins.is_empty() && a.stmts.is_empty();
        let piped = match stdin {
            Some(stdin) if nothing_given => {
                crate::sqltext::statements(&file_cap::read_text_from(stdin, "stdin", Cap::config("the SQL text"))?)
            }
            _ => Vec::new(),
        };
        // pgbench reads no stdin: `pgbench -c 2 -t 40 < /dev/null` (a job,
        // a script) runs its default too.
        if nothing_given && piped.is_empty() {
            builtins.push("tpcb-like".to_string());
        }
        let scripts = !a.files.is_empty() || !builtins.is_empty();
        scale_from_s(&mut a.stmts, scripts, &mut a.run.scale)?;
        let defines: Vec<Define> = a.defines.iter().map(|d| Define::parse(d)).collect::<Result<_>>()?;
        if let (Some(d), false) = (a.defines.first(), scripts) {
            return Err(usage(format!(
                "-D {d}: variables are for pgbench scripts (-f FILE, -b NAME, -S, -N); a -s statement has none"
            )));
        }
        if pgbench_r && !scripts {
            return Err(usage(
                "-r without a number is pgbench's per-statement report, for scripts (-f FILE or --builtin NAME); \
                 to run each statement N times, give -r N",
            ));
        }
        // pgbench's `-t N -r` is a count and its per-statement report; cr8's `-r N` is a second count.
        if repeat.is_some() && a.run.transactions.is_some() {
            return Err(usage("--repeat N (-r N) and --transactions N (-t N) both count executions: give one"));
        }
        if scripts && !a.stmts.is_empty() {
            return Err(usage("timeit: give statements (-s) or pgbench scripts (-f, --builtin), not both"));
        }
        let phases = if scripts {
            vec![scripts_phase(&a.files, &builtins, &defines)?]
        } else {
            Self::statement_phases(&a, piped)?
        };
        // -t counts per connection (see `resolve`); --duration and stages bound by time.
        let bounded = a.run.duration.is_some() || a.run.stages.given() || a.run.transactions.is_some();
        let total = match (repeat, bounded) {
            (Some(0), _) => return Err(usage("--repeat 0: give at least 1 execution")),
            (Some(n), _) => Some(n),
            (None, true) => None,
            (None, false) => Some(DEFAULT_REPEAT),
        };
        // pgbench 15 takes the scale of its built-in scripts from the table, whatever -s said.
        let count_scale = (!builtins.is_empty()).then_some(a.run.scale);
        let vacuum = match (scripts, a.run.no_vacuum, a.run.vacuum_all) {
            (false, _, _) | (true, true, _) => Vacuum::Skip,
            (true, false, false) => Vacuum::Tables,
            (true, false, true) => Vacuum::WithAccounts,
        };
        let mut cfg = Self::resolve("timeit", phases, total, a.warmup_before, a.run, a.target, a.output, env)?;
        cfg.per_statement |= pgbench_r;
        cfg.vacuum = vacuum;
        if let Some(given) = count_scale {
            cfg.scale = Scale::Counted { given };
        }
        Ok(cfg)
    }

    /// `-s` statements, or the statements `piped` on stdin: a phase each.
    fn statement_phases(a: &TimeitArgs, piped: Vec<String>) -> Result<Vec<Arc<[QuerySpec]>>> {
        let stmts = if a.stmts.is_empty() {
            piped
        } else {
            a.stmts
                .iter()
                .map(|s| s.trim().trim_end_matches(';').trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        };
        if stmts.is_empty() {
            return Err(usage(
                "timeit: no statement given; pass -s \"select ...\", pipe statements on stdin, or give a pgbench \
                 script with -f FILE or --builtin NAME",
            ));
        }
        Ok(stmts
            .into_iter()
            .enumerate()
            .map(|(i, query)| {
                let spec = QuerySpec {
                    name: format!("s{}", i + 1),
                    query,
                    ratio: 1.0,
                    params: Vec::new(),
                    line: 0,
                    script: None,
                    weight: None,
                };
                Arc::from(vec![spec])
            })
            .collect())
    }

    pub fn workload(mut a: WorkloadArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<Self> {
        let node_options = super::node_ingest::query_habit(&mut a)?;
        let (phases, suite) = match (&a.file, a.suite) {
            (Some(f), Some(_)) => {
                return Err(usage(format!(
                    "{}: give a workload FILE or --suite, not both; to run a file's queries beside the suite's, \
                     make each a workload of a `dbload run` file",
                    f.display()
                )))
            }
            (Some(f), None) => (vec![file::load(f)?.into()], None),
            (None, _) => (Vec::new(), Some(suite(&a)?)),
        };
        let bounded = a.run.duration.is_some() || a.run.stages.given() || a.run.transactions.is_some();
        if a.max_queries.is_none() && !bounded {
            return Err(usage(
                "workload: say when to stop with --max-queries N, -t N (per connection), --duration TIME or stages",
            ));
        }
        if a.max_queries == Some(0) {
            return Err(usage("--max-queries 0: give at least 1 query"));
        }
        let mut cfg = Self::resolve("workload", phases, a.max_queries, None, a.run, a.target, a.output, env)?;
        cfg.suite = suite;
        cfg.node_options = match (node_options, cfg.phases.first()) {
            (Some(o), Some(mix)) => Some(o.with_queries(mix)),
            (o, _) => o,
        };
        Ok(cfg)
    }

    /// How many phases the run measures: a suite's mix is one.
    pub fn phase_count(&self) -> usize {
        self.phases.len() + usize::from(self.suite.is_some())
    }

    /// Shared by the commands and by the workloads of a mixed run. `total`:
    /// the queries of each phase, unless `-t` (per connection) gives them;
    /// `warmup_before`: cr8's `-w`, warm-up queries added before them.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn resolve(
        command: &'static str,
        phases: Vec<Arc<[QuerySpec]>>,
        total: Option<u64>,
        warmup_before: Option<u64>,
        r: QueryRunArgs,
        target: crate::cli::TargetArgs,
        output: crate::cli::OutputArgs,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self> {
        let output = OutputConfig::resolve(output, Contract::Query)?;
        let instance = output.instance.clone();
        super::stages_not_split(&r.stages, instance.as_ref())?;
        // --rate and the counts are the whole run's; this instance does its share.
        let rate = super::check_rate(r.rate, "queries")?.map(|r| instance.as_ref().map_or(r, |i| i.rate(r)));
        let stages = super::resolve_stages(&r.stages, r.duration, rate, ("--concurrency", r.concurrency))?;
        let sizing_rate = super::sizing_rate(rate, stages.as_ref());
        let concurrency = match (super::stage_workers(stages.as_ref()), r.concurrency, sizing_rate) {
            (Some(n), _, _) => n,
            (None, Some(n), _) => super::connections("--concurrency", n, "query stream")?,
            (None, None, Some(rate)) => default_in_flight(rate, MAX_DEFAULT_CONCURRENCY),
            (None, None, None) => 1,
        };
        let duration = stages.as_ref().map(Stages::duration).or(super::check_duration(r.duration)?);
        if r.explain.is_some() && phases.iter().flat_map(|p| p.iter()).any(|q| q.script.is_some()) {
            return Err(usage("--explain captures the plans of queries; a pgbench script has several: drop --explain"));
        }
        // pgbench sends its scripts with the simple protocol unless -M says
        // otherwise: its users' figures are of that; dbload's own statements
        // are prepared.
        let scripted = phases.iter().flat_map(|p| p.iter()).any(|q| q.script.is_some());
        let protocol = r.protocol.unwrap_or(if scripted { Protocol::Simple } else { Protocol::Prepared });
        if protocol == Protocol::Simple {
            let scripts = phases.iter().flat_map(|p| p.iter()).filter_map(|q| q.script.as_deref());
            if let Some((origin, (line, column))) = scripts.filter_map(|s| Some((&s.origin, s.pipeline()?))).next() {
                return Err(usage(format!(
                    "{origin}:{line}:{column}: a pipeline needs the extended protocol, as in pgbench: give -M extended or \
                     -M prepared (not -M simple)"
                )));
            }
        }
        let pipeline = pipeline(&r, protocol, &phases)?;
        let scale = match r.scale {
            Some(n) if !(1..=i32::MAX as i64).contains(&n) => {
                return Err(usage(format!("--scale {n}: give a scale factor of at least 1")))
            }
            Some(n) => Scale::Given(n),
            None => Scale::Given(1),
        };
        let (total, flag) = match r.transactions {
            Some(0) => return Err(usage("--transactions 0 (-t): give at least 1 query per connection")),
            Some(t) => {
                let all = t.checked_mul(u64::from(concurrency)).ok_or_else(|| {
                    usage(format!("--transactions {t} (-t) × --concurrency {concurrency}: too many; give fewer"))
                })?;
                (Some(all), "-t")
            }
            None if command == "timeit" => (total, "--repeat"),
            None => (total, "--max-queries"),
        };
        // -t is per connection: every instance's connections run it all;
        // the other counts are the whole run's, an instance does its share.
        let shared = instance.as_ref().filter(|_| r.transactions.is_none());
        // cr8's -w: exactly that many warm-up queries, shared out over the
        // connections, before the measured ones (which stay the count asked
        // for); with --instance, this instance's share of them.
        let all_workers = shared.map_or(concurrency, |i| i.all_workers(concurrency));
        let (total, warmup) = match warmup_before.filter(|&w| w > 0) {
            Some(w) => {
                let own = shared.map_or(w, |i| i.shares(w, concurrency).iter().sum());
                (total.map(|n| n.saturating_add(w)), Warmup::Total(own))
            }
            None => {
                let span = super::run_span(stages.as_ref(), duration);
                (total, parse_warmup(r.warmup.as_deref(), all_workers, "queries", total.map(|n| (n, flag)), span)?)
            }
        };
        let per_worker: Vec<u64> = match (total, shared) {
            (Some(n), Some(i)) => i.shares(n, concurrency),
            (Some(n), None) => split_rows(n, concurrency),
            (None, _) => vec![u64::MAX; concurrency as usize],
        };
        let max_queries = total.map(|_| per_worker.iter().sum());
        let latency_limit = match r.latency_limit {
            Some(ms) if !(ms > 0.0 && ms <= 3_600_000.0) => {
                return Err(usage(format!(
                    "-L {ms}: the latency limit is milliseconds above 0 (up to an hour), such as -L 10"
                )))
            }
            ms => ms.map(|ms| Duration::from_secs_f64(ms / 1000.0)),
        };
        let pgbench = (r.max_tries, r.failures_detailed, rate.is_some());
        let log = transaction_log(&r.pgbench_log, pgbench)?;
        let target = resolve_target(&target, concurrency, env)?;
        if let (TargetChoice::Crate(_), 2..) = (&target, pipeline) {
            return Err(usage(format!(
                "--pipeline {pipeline}: pipelines are the PostgreSQL protocol's; CrateDB's HTTP endpoint takes one \
                 statement per request: give a postgres:// URL (CrateDB's PostgreSQL protocol, port 5432) or drop \
                 --pipeline"
            )));
        }
        Ok(QueryConfig {
            command,
            target,
            phases,
            suite: None,
            protocol,
            pipeline,
            concurrency,
            per_worker,
            max_queries,
            load: Load {
                duration,
                rate,
                stages,
                warmup,
                seed: r.seed,
                first_worker: instance.as_ref().map_or(0, |i| i.first_worker(concurrency)),
                reconnect: super::reconnect(r.reconnect, r.no_reconnect, duration),
                skip_late: latency_limit.filter(|_| rate.is_some()),
            },
            explain: r.explain,
            output,
            scale,
            per_statement: r.per_statement,
            max_tries: match r.max_tries {
                0 if duration.is_none() && latency_limit.is_none() => {
                    return Err(usage(
                        "--max-tries 0: an unlimited number of transaction tries can only be used with \
                         --latency-limit or a duration (-T), as pgbench says: add one, or give a number of tries",
                    ))
                }
                n => n,
            },
            log,
            failures_detailed: r.failures_detailed,
            latency_limit,
            connect_each: r.connect,
            threads: super::worker_threads(r.threads)?,
            node_options: None,
            vacuum: Vacuum::Skip,
        })
    }
}

/// The most queries `--pipeline` keeps in flight on one connection: they
/// are all written before any answer is read, so the pipeline must fit in
/// the socket's buffers (pgbench's pipelines are as long as the script).
const MAX_PIPELINE: u32 = 1024;

/// `--pipeline N`, checked: what a pipeline cannot run is refused here
/// (pgbench refuses `-M simple` for its pipelines too).
fn pipeline(r: &QueryRunArgs, protocol: Protocol, phases: &[Arc<[QuerySpec]>]) -> Result<usize> {
    let n = r.pipeline;
    if !(1..=MAX_PIPELINE).contains(&n) {
        return Err(usage(format!(
            "--pipeline {n}: give the statements in flight per connection, from 1 (one at a time) to {MAX_PIPELINE}"
        )));
    }
    if n == 1 {
        return Ok(1);
    }
    if let Some(s) = phases.iter().flat_map(|p| p.iter()).find_map(|q| q.script.as_deref()) {
        return Err(usage(format!(
            "--pipeline {n} with the pgbench script {}: a script pipelines its own statements, as in pgbench: put \
             them between \\startpipeline and \\endpipeline in the script, and drop --pipeline",
            s.origin
        )));
    }
    if protocol == Protocol::Simple {
        return Err(usage(format!(
            "--pipeline {n} with -M simple: a pipeline needs the extended protocol, as in pgbench: give -M prepared \
             or -M extended, or drop --pipeline"
        )));
    }
    if r.connect {
        return Err(usage(format!(
            "--pipeline {n} with -C: -C opens a connection for each query, a pipeline keeps {n} in flight on one: \
             drop one of them"
        )));
    }
    Ok(n as usize)
}

/// `-l` and the flags that shape its log, checked as pgbench checks them,
/// with the run's `--max-tries`, `--failures-detailed`, and whether `--rate`
/// was given (the columns they fill).
fn transaction_log(l: &PgbenchLogArgs, (max_tries, detailed, rated): (u32, bool, bool)) -> Result<Option<LogConfig>> {
    if !l.log {
        let given = [
            (l.log_prefix.is_some(), "--log-prefix"),
            (l.sampling_rate.is_some(), "--sampling-rate"),
            (l.aggregate_interval.is_some(), "--aggregate-interval"),
        ];
        return match given.into_iter().find_map(|(given, name)| given.then_some(name)) {
            Some(name) => Err(usage(format!("{name}: shapes pgbench's transaction log: add -l to write it"))),
            None => Ok(None),
        };
    }
    if let Some(rate) = l.sampling_rate.filter(|r| !(*r > 0.0 && *r <= 1.0)) {
        return Err(usage(format!(
            "--sampling-rate {rate}: give the share of transactions logged, above 0 and at most 1"
        )));
    }
    if l.aggregate_interval == Some(0) {
        return Err(usage("--aggregate-interval 0: give the interval in whole seconds, 1 or more"));
    }
    if l.sampling_rate.is_some() && l.aggregate_interval.is_some() {
        return Err(usage(
            "--sampling-rate with --aggregate-interval: an interval's figures are of all its transactions \
             (as pgbench, which refuses them together): give one",
        ));
    }
    let prefix = l.log_prefix.clone().unwrap_or_else(|| "pgbench_log".to_string());
    if prefix.is_empty() || prefix.contains('/') {
        return Err(usage(format!(
            "--log-prefix {prefix:?}: give a file name start (the files go to the current directory, as pgbench's)"
        )));
    }
    Ok(Some(LogConfig {
        prefix,
        sampling_rate: l.sampling_rate,
        aggregate: l.aggregate_interval,
        columns: Columns { lag: rated, detailed, retries: max_tries != 1 },
    }))
}

/// `-s N` beside a script is pgbench's scale, not cr8's statement: whole
/// numbers are taken out of `stmts` into `scale` (the last one given). A
/// bare number is never a statement, so without a script it is refused.
fn scale_from_s(stmts: &mut Vec<String>, scripts: bool, scale: &mut Option<i64>) -> Result<()> {
    let (numbers, sql): (Vec<String>, Vec<String>) =
        std::mem::take(stmts).into_iter().partition(|s| s.trim().parse::<i64>().is_ok());
    *stmts = sql;
    let Some(given) = numbers.last() else { return Ok(()) };
    let n: i64 = given.trim().parse()?;
    if !scripts {
        return Err(usage(format!(
            "-s {given}: a whole number after -s is pgbench's scale, for scripts (-f FILE, -b NAME, -S, -N; or \
             --scale {n}); to time a statement, give its SQL, such as -s 'select {n}'"
        )));
    }
    match *scale {
        Some(other) if other != n => {
            Err(usage(format!("-s {given} and --scale {other}: two scale factors; give one of them")))
        }
        _ => {
            *scale = Some(n);
            Ok(())
        }
    }
}

/// The one phase of `-f` and `--builtin` scripts, each run as often as its
/// `@weight` says against the others' (pgbench's rule; default weight 1),
/// each with the `-D` variables.
fn scripts_phase(files: &[String], builtins: &[String], defines: &[Define]) -> Result<Arc<[QuerySpec]>> {
    let mut scripts = Vec::new();
    for given in files {
        let (path, weight) = weighted("-f", given)?;
        let name = std::path::Path::new(path).file_name().map_or(path.into(), |n| n.to_string_lossy().into_owned());
        scripts.push((name, file::load_script(std::path::Path::new(path), defines)?, weight));
    }
    for given in builtins {
        let (name, weight) = weighted("--builtin", given)?;
        let Some((name, _, text)) = BUILTINS.iter().find(|(n, _, _)| *n == name) else {
            let names: Vec<&str> = BUILTINS.iter().map(|(n, _, _)| *n).collect();
            return Err(usage(format!(
                "--builtin {name}: no such script; pgbench's built-in ones are {}",
                names.join(", ")
            )));
        };
        scripts.push((name.to_string(), Script::parse_defined(text, &format!("builtin:{name}"), defines)?, weight));
    }
    let total: u64 = scripts.iter().map(|(_, _, w)| w).sum();
    Ok(scripts
        .into_iter()
        .map(|(name, script, w)| QuerySpec {
            weight: Some(w),
            ..QuerySpec::of_script(name, script, w as f64 / total as f64)
        })
        .collect())
}

/// `NAME@WEIGHT` split, the weight 1 when none is given; a name may hold `@`
/// when what follows the last one is not a number.
fn weighted<'a>(flag: &str, given: &'a str) -> Result<(&'a str, u64)> {
    match given.rsplit_once('@') {
        Some((name, w)) if w.trim().chars().all(|c| c.is_ascii_digit()) && !w.trim().is_empty() => {
            match w.trim().parse::<u64>() {
                Ok(n) if (1..=u32::MAX as u64).contains(&n) => Ok((name, n)),
                _ => Err(usage(format!("{flag} {given}: the weight after @ is a whole number from 1, such as @5"))),
            }
        }
        _ => Ok((given, 1)),
    }
}

/// `--suite` (tsbs-cpu, the one there is) with `--suite-queries` and `--table`.
pub(crate) fn suite(a: &WorkloadArgs) -> Result<CpuSuite> {
    CpuSuite::new(TableName::parse(a.table.as_deref().unwrap_or("cpu"))?, &a.suite_queries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
            QueryConfig::timeit(a, &|_| None, Some(&mut std::io::empty())).unwrap().load.reconnect
        };
        assert!(reconnects(&["--duration", "10s"]));
        assert!(!reconnects(&["--duration", "10s", "--no-reconnect"]));
        assert!(!reconnects(&["--repeat", "10"]));
        assert!(!reconnects(&[]));
        assert!(reconnects(&["--repeat", "10", "--reconnect"]));
        assert!(reconnects(&["--reconnect", "--no-reconnect", "--reconnect", "--duration", "1s"]));
    }

    /// `timeit -s 'select 1'` with `flags`, resolved.
    fn select1(flags: &[&str]) -> QueryConfig {
        use clap::Parser;
        let argv = [&["dbload", "timeit", "-s", "select 1"][..], flags].concat();
        let crate::cli::Command::Timeit(a) = crate::cli::Cli::try_parse_from(argv).unwrap().command else {
            unreachable!("timeit")
        };
        QueryConfig::timeit(a, &|_| None, Some(&mut std::io::empty())).unwrap()
    }

    /// pgbench's -t is per connection: exactly N on each, N × clients in all.
    #[test]
    fn transactions_are_per_connection() {
        let c = select1(&["-t", "50", "-c", "2"]);
        assert_eq!((c.per_worker.clone(), c.max_queries), (vec![50, 50], Some(100)));
        assert_eq!(c.load.warmup, Warmup::None);
        let c = select1(&["-t", "1k", "-c", "3", "-T", "10"]);
        assert_eq!((c.per_worker.clone(), c.load.duration), (vec![1000; 3], Some(Duration::from_secs(10))));
    }

    /// cr8's -w comes before the measured --repeat, exactly that many
    /// (issue 32, item 5: whole per connection made -w 10 -c 4 twelve).
    #[test]
    fn cr8_warmup_is_added_before_the_repeat() {
        let c = select1(&["-w", "5", "-r", "100", "-c", "2"]);
        assert_eq!((c.per_worker.clone(), c.load.warmup), (vec![53, 52], Warmup::Total(5)));
        let shares: Vec<Warmup> = (0..2).map(|w| c.load.warmup.for_worker(w, 2)).collect();
        assert_eq!(shares, [Warmup::Count(3), Warmup::Count(2)], "50 measured each");
        let c = select1(&["-w", "30", "-t", "10", "-c", "2"]);
        assert_eq!((c.per_worker.clone(), c.load.warmup), (vec![25, 25], Warmup::Total(30)));
        let c = select1(&["-w", "10", "-t", "25", "-c", "4"]);
        assert_eq!(c.per_worker, [28, 28, 27, 27]);
        let shares: Vec<Warmup> = (0..4).map(|w| c.load.warmup.for_worker(w, 4)).collect();
        assert_eq!(shares, [3, 3, 2, 2].map(Warmup::Count), "-t 25 measured on each connection");
    }

    /// Issue 29, item 8: `DO $$ ... ; ... $$` from stdin was cut at its inner `;`.
    #[test]
    fn statements_from_stdin_keep_dollar_quotes_whole() {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from(["dbload", "timeit"]).unwrap();
        let crate::cli::Command::Timeit(a) = cli.command else { unreachable!("timeit") };
        let mut stdin = "-- a comment\nDO $$ BEGIN PERFORM 1; END $$;\nselect ';' -- trailing\n;".as_bytes();
        let c = QueryConfig::timeit(a, &|_| None, Some(&mut stdin)).unwrap();
        let queries: Vec<&str> = c.phases.iter().flat_map(|p| p.iter().map(|q| q.query.as_str())).collect();
        assert_eq!(queries, ["DO $$ BEGIN PERFORM 1; END $$", "select ';'"]);
    }

    /// Stages as k6 reads them: VUs from the connections flag (else 1) up
    /// to the highest target, which sets the workers; a rate from 0, with
    /// the connections flag or the highest rate sizing what is in flight;
    /// the run lasts the stages' total.
    #[test]
    fn stages_set_the_workers_and_the_duration_as_k6_does() {
        use crate::op::Ramps;
        let c = select1(&["--stages", "30s:10,1m:50,30s:0"]);
        let s = c.load.stages.as_ref().unwrap();
        assert_eq!((s.ramps, s.start, c.concurrency), (Ramps::Vus, 1.0, 50));
        assert_eq!((c.load.duration, c.max_queries, c.load.reconnect), (Some(Duration::from_secs(120)), None, true));
        let c = select1(&["--stage", "10s:4", "--concurrency", "2"]);
        assert_eq!((c.load.stages.unwrap().start, c.concurrency), (2.0, 4), "--concurrency is k6's startVUs");
        let c = select1(&["--rate-stages", "30s:100,1m:1000,30s:1000"]);
        let s = c.load.stages.as_ref().unwrap();
        assert_eq!((s.ramps, s.start, c.concurrency, c.load.rate), (Ramps::Rate, 0.0, 20, None));
        assert_eq!(select1(&["--rate-stages", "10s:5", "--concurrency", "3"]).concurrency, 3);
        assert_eq!(select1(&["--rate-stages", "10s:5", "--repeat", "7"]).max_queries, Some(7), "whichever first");
    }

    /// A FILE with --suite is refused with one readable sentence (it had a
    /// run of spaces in its middle, from a broken line continuation).
    #[test]
    fn a_file_with_a_suite_is_refused_saying_what_to_do() {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from(["dbload", "workload", "w.yml", "--suite", "tsbs-cpu"]);
        let crate::cli::Command::Workload(a) = cli.unwrap().command else { unreachable!("workload") };
        let e = QueryConfig::workload(a, &|_| None).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert_eq!(
            e.to_string(),
            "w.yml: give a workload FILE or --suite, not both; to run a file's queries beside the suite's, \
             make each a workload of a `dbload run` file"
        );
    }

    /// Found by `bench/fuzz.sh`: `--concurrency 2147483647` set up that many
    /// query streams before the run (minutes, gigabytes) instead of refusing.
    #[test]
    fn concurrency_beyond_any_server_is_refused() {
        use clap::Parser;
        let cli =
            crate::cli::Cli::try_parse_from(["dbload", "timeit", "-s", "select 1", "--concurrency", "2147483647"]);
        let crate::cli::Command::Timeit(a) = cli.unwrap().command else { unreachable!("timeit") };
        let e = QueryConfig::timeit(a, &|_| None, Some(&mut std::io::empty())).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().starts_with("--concurrency 2147483647: at most 100000"), "{e}");
    }

    /// pgbench's `-j`: the threads that run the clients, as `http --threads`.
    #[test]
    fn threads_are_pgbench_j_from_1_to_1024() {
        assert_eq!(timeit(&["-s", "select 1"]).unwrap().threads, None);
        assert_eq!(timeit(&["-s", "select 1", "-j", "2"]).unwrap().threads, Some(2));
        assert_eq!(timeit(&["-s", "select 1", "--threads", "1024"]).unwrap().threads, Some(1024));
        for n in ["0", "1025"] {
            let e = timeit(&["-s", "select 1", "-j", n]).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2);
            assert!(e.to_string().starts_with(&format!("--threads {n}: give 1 to 1024 threads")), "{e}");
        }
    }

    fn timeit(flags: &[&str]) -> Result<QueryConfig> {
        use clap::Parser;
        let argv = [&["dbload", "timeit"][..], flags].concat();
        let crate::cli::Command::Timeit(a) = crate::cli::Cli::try_parse_from(argv)?.command else {
            unreachable!("timeit")
        };
        QueryConfig::timeit(a, &|_| None, Some(&mut std::io::empty()))
    }

    /// Issue 29, item 6: an http(s) `--url` without `--engine cratedb` was
    /// refused with its password in the message.
    #[test]
    fn a_refused_http_url_hides_its_password() {
        let e = timeit(&["-s", "select 1", "--url", "http://app:S3cr3t@h:4200"]).unwrap_err();
        assert!(e.to_string().starts_with("--url http://app:***@h:4200: an http(s) URL"), "{e}");
    }

    /// With `--instance`, counts and rates are the whole run's, split; but
    /// pgbench's `-t` is per connection, so every instance's connections
    /// run it all; stages are not split, so they are refused.
    #[test]
    fn instances_split_the_run_but_not_transactions_per_connection() {
        let part = ["--instance", "1/2", "--run-id", "r", "--start-at", "2026-01-01T00:00:00Z", "-c", "2"];
        let c = timeit(&[&["-s", "select 1", "--repeat", "10"][..], &part].concat()).unwrap();
        assert_eq!((c.per_worker.clone(), c.max_queries), (vec![2, 2], Some(4)), "10 over 4 connections: 3, 3, 2, 2");
        let c = timeit(&[&["-s", "select 1", "-t", "7"][..], &part].concat()).unwrap();
        assert_eq!((c.per_worker.clone(), c.max_queries), (vec![7, 7], Some(14)));
        let e = timeit(&[&["-s", "select 1", "--stages", "10s:4"][..], &part].concat()).unwrap_err();
        assert!(e.to_string().starts_with("--instance with --stages or --rate-stages"), "{e}");
    }

    /// pgbench's `-r` (no number) and cr8's `-r N` side by side.
    #[test]
    fn r_alone_is_per_statement_and_r_n_is_repeat() {
        let c = timeit(&["-b", "select-only", "-r"]).unwrap();
        assert!(c.per_statement && c.max_queries == Some(DEFAULT_REPEAT));
        let c = timeit(&["-b", "select-only", "-r", "--repeat", "50"]).unwrap();
        assert!(c.per_statement && c.max_queries == Some(50));
        let c = timeit(&["-b", "select-only", "-r", "7"]).unwrap();
        assert!(!c.per_statement && c.max_queries == Some(7));
        assert_eq!(c.scale, Scale::Counted { given: None }, "a built-in script's scale is counted, as pgbench does");
        // Issue 32, item 6: pgbench 15 ignores -s with a built-in script, and says so.
        let c = timeit(&["-b", "select-only", "--scale", "3"]).unwrap();
        assert_eq!(c.scale, Scale::Counted { given: Some(3) });
        let e = timeit(&["-s", "select 1", "-r"]).unwrap_err();
        assert!(e.to_string().starts_with("-r without a number is pgbench's per-statement report"), "{e}");
    }

    #[test]
    fn script_weights_become_ratios() {
        let c = timeit(&["-b", "tpcb-like@3", "-b", "select-only"]).unwrap();
        let ratios: Vec<(String, f64)> = c.phases[0].iter().map(|q| (q.name.clone(), q.ratio)).collect();
        assert_eq!(ratios, [("tpcb-like".to_string(), 0.75), ("select-only".to_string(), 0.25)]);
        assert_eq!(weighted("-f", "a@b.sql").unwrap(), ("a@b.sql", 1), "a name may hold @");
        let e = weighted("-f", "x.sql@0").unwrap_err();
        assert!(e.to_string().contains("whole number from 1"), "{e}");
        let e = timeit(&["-b", "select-only", "--explain"]).unwrap_err();
        assert!(e.to_string().contains("drop --explain"), "{e}");
        let e = timeit(&["-b", "select-only", "-s", "select 1"]).unwrap_err();
        assert!(e.to_string().contains("not both"), "{e}");
    }

    /// Issue 32: pgbench's `-S` and `-N` are its `-b select-only` and `-b
    /// simple-update`, beside any `-b`, each weighing 1.
    #[test]
    fn pgbench_s_and_n_are_its_builtin_scripts() {
        let names = |c: &QueryConfig| c.phases[0].iter().map(|q| (q.name.clone(), q.ratio)).collect::<Vec<_>>();
        let c = timeit(&["-S"]).unwrap();
        assert_eq!(names(&c), [("select-only".to_string(), 1.0)]);
        assert_eq!(c.scale, Scale::Counted { given: None }, "a built-in script's scale is counted, as pgbench does");
        assert_eq!(names(&timeit(&["--skip-some-updates"]).unwrap()), [("simple-update".to_string(), 1.0)]);
        let c = timeit(&["-b", "tpcb-like", "-N", "--select-only"]).unwrap();
        let third = 1.0 / 3.0;
        assert_eq!(
            names(&c),
            [
                ("tpcb-like".to_string(), third),
                ("select-only".to_string(), third),
                ("simple-update".to_string(), third)
            ]
        );
    }

    /// Issue 32: `pgbench -c 4 -T 60`, with no script, runs pgbench's
    /// built-in tpcb-like; `dbload timeit -c 4 -T 60` typed at a terminal
    /// waited for statements on stdin. It now runs tpcb-like too; piped
    /// statements and `-s` are read as before.
    #[test]
    fn no_statement_at_a_terminal_is_pgbench_s_default_tpcb_like() {
        use clap::Parser;
        let args = |flags: &[&str]| {
            let argv = [&["dbload", "timeit"][..], flags].concat();
            let crate::cli::Command::Timeit(a) = crate::cli::Cli::try_parse_from(argv).unwrap().command else {
                unreachable!("timeit")
            };
            a
        };
        let names = |c: &QueryConfig| c.phases[0].iter().map(|q| q.name.clone()).collect::<Vec<_>>();
        let c = QueryConfig::timeit(args(&["-c", "4", "-T", "60"]), &|_| None, None).unwrap();
        assert_eq!(names(&c), ["tpcb-like"]);
        assert_eq!(c.vacuum, Vacuum::Tables, "and vacuums first, as pgbench without -n");
        let c = QueryConfig::timeit(args(&["-s", "select 1"]), &|_| None, None).unwrap();
        assert_eq!(c.phases[0][0].query, "select 1");
        let mut piped = "select 2;".as_bytes();
        let c = QueryConfig::timeit(args(&[]), &|_| None, Some(&mut piped)).unwrap();
        assert_eq!(c.phases[0][0].query, "select 2");
        let c = QueryConfig::timeit(args(&["-t", "40"]), &|_| None, Some(&mut std::io::empty())).unwrap();
        assert_eq!(names(&c), ["tpcb-like"], "an empty pipe (< /dev/null) is pgbench's default too");
    }

    /// Issue 32: beside a script (`-f`, `-b`, `-S`, `-N`), `-s N` is
    /// pgbench's scale; a bare number is never a statement; `-s SQL` stays
    /// cr8's statement.
    #[test]
    fn s_with_a_whole_number_beside_scripts_is_the_scale() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("x.sql");
        std::fs::write(&script, "select :scale;\n").unwrap();
        let script = script.to_str().unwrap();
        assert_eq!(timeit(&["-f", script, "-s", "10"]).unwrap().scale, Scale::Given(10));
        assert_eq!(timeit(&["-S", "-s", "7"]).unwrap().scale, Scale::Counted { given: Some(7) });
        let c = timeit(&["-s", "3", "-b", "tpcb-like", "--scale", "3"]).unwrap();
        assert_eq!(c.scale, Scale::Counted { given: Some(3) });
        let e = timeit(&["-s", "10"]).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().starts_with("-s 10: a whole number after -s is pgbench's scale"), "{e}");
        assert!(e.to_string().contains("--scale"), "{e}");
        let e = timeit(&["-S", "-s", "10", "--scale", "5"]).unwrap_err();
        assert!(e.to_string().starts_with("-s 10 and --scale 5"), "{e}");
        let e = timeit(&["-S", "-s", "select 1"]).unwrap_err();
        assert!(e.to_string().contains("not both"), "{e}");
        let c = timeit(&["-s", "select 10"]).unwrap();
        assert_eq!(c.phases[0][0].query, "select 10");
    }

    /// pgbench sends its scripts with the simple protocol unless `-M` says
    /// otherwise, so `dbload timeit -S -c 4 -T 60` answers as `pgbench -S -c 4
    /// -T 60` does ("query mode: simple"); dbload's own statements (`-s`,
    /// workload files) are prepared by default.
    #[test]
    fn scripts_default_to_pgbench_s_simple_protocol() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("x.sql");
        std::fs::write(&script, "select 1;\n").unwrap();
        let script = script.to_str().unwrap();
        for (flags, want) in [
            (&["-f", script][..], Protocol::Simple),
            (&["-S"], Protocol::Simple),
            (&["-b", "tpcb-like"], Protocol::Simple),
            (&["-f", script, "-M", "prepared"], Protocol::Prepared),
            (&["-s", "select 1"], Protocol::Prepared),
            (&["-s", "select 1", "-M", "extended"], Protocol::Extended),
        ] {
            assert_eq!(timeit(flags).unwrap().protocol, want, "{flags:?}");
        }
    }

    /// Issue 32: pgbench's `-D NAME=VALUE` defines a script variable (an
    /// integer or a double), which a `\set` may overwrite.
    #[test]
    fn d_defines_script_variables() {
        use rand::SeedableRng;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("x.sql");
        std::fs::write(&script, "select :n, :ratio, :m;\n\\set n :n + 1\nselect :n;\n").unwrap();
        let script = script.to_str().unwrap();
        let c = timeit(&["-f", script, "-D", "n=5", "--define", "ratio=0.5", "-D", "m=-2"]).unwrap();
        let s = c.phases[0][0].script.clone().unwrap();
        let drawn = s.draw(&mut rand::rngs::ChaCha8Rng::seed_from_u64(1), [1, 0, 0], false).unwrap();
        use crate::workload::params::Value;
        assert_eq!(drawn.params, [Value::Int(5), Value::Float(0.5), Value::Int(-2), Value::Int(6)]);
        for (given, why) in [("n", "NAME=VALUE"), ("1n=2", "variable name")] {
            let e = timeit(&["-f", script, "-D", given]).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2);
            assert!(e.to_string().starts_with(&format!("-D {given}: ")) && e.to_string().contains(why), "{e}");
        }
        // A text is pgbench's too, but no expression's operand.
        let e = timeit(&["-f", script, "-D", "n=abc", "-D", "ratio=1", "-D", "m=1"]).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains(":2:8: \\set n: variable `n` holds the text `abc` (-D n=abc)"), "{e}");
        let e = timeit(&["-s", "select 1", "-D", "n=1"]).unwrap_err();
        assert!(e.to_string().starts_with("-D n=1: "), "{e}");
    }

    /// Issue 32: `-l` gives pgbench's log with the columns its flags add;
    /// the flags that shape it are refused without it, or out of range, by name.
    #[test]
    fn pgbench_log_flags_are_checked_as_pgbench_s() {
        let log = |flags: &[&str]| timeit(&[&["-b", "select-only"][..], flags].concat()).map(|c| c.log);
        let plain = log(&["-l"]).unwrap().unwrap();
        assert_eq!((plain.prefix.as_str(), plain.columns), ("pgbench_log", Columns::default()));
        let shaped = log(&["-l", "--log-prefix", "x", "-R", "10", "-L", "5", "--failures-detailed"]).unwrap().unwrap();
        assert_eq!(
            (shaped.prefix.as_str(), shaped.columns),
            ("x", Columns { lag: true, detailed: true, retries: false })
        );
        // --max-tries other than 1 adds pgbench 15's retries column (it was refused with -l before).
        let tried = log(&["-l", "--max-tries", "3"]).unwrap().unwrap();
        assert_eq!(tried.columns, Columns { retries: true, ..Columns::default() });
        assert_eq!(log(&[]).unwrap(), None);
        for (flags, culprit) in [
            (&["--log-prefix", "x"][..], "--log-prefix: shapes pgbench's transaction log: add -l"),
            (&["--sampling-rate", "0.1"], "--sampling-rate: shapes"),
            (&["--aggregate-interval", "1"], "--aggregate-interval: shapes"),
            (&["-l", "--sampling-rate", "0"], "--sampling-rate 0: "),
            (&["-l", "--sampling-rate", "1.5"], "--sampling-rate 1.5: "),
            (&["-l", "--aggregate-interval", "0"], "--aggregate-interval 0: "),
            (
                &["-l", "--aggregate-interval", "1", "--sampling-rate", "0.5"],
                "--sampling-rate with --aggregate-interval",
            ),
            (&["-l", "--log-prefix", "a/b"], "--log-prefix \"a/b\": "),
        ] {
            let e = log(flags).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2);
            assert!(e.to_string().starts_with(culprit), "{flags:?}: {e}");
        }
    }

    /// Issue 29, item 7, for queries: a time past the clock, a warm-up as
    /// long as the run and a rate past the clock's resolution are refused.
    #[test]
    fn times_and_rates_a_run_cannot_keep_are_refused() {
        use clap::Parser;
        let err = |flags: &[&str]| {
            let argv = [&["dbload", "timeit", "-s", "select 1"][..], flags].concat();
            let crate::cli::Command::Timeit(a) = crate::cli::Cli::try_parse_from(argv).unwrap().command else {
                unreachable!("timeit")
            };
            let e = QueryConfig::timeit(a, &|_| None, Some(&mut std::io::empty())).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{e}");
            e.to_string()
        };
        let e = err(&["--duration", "500000000000y"]);
        assert!(e.contains("--duration 500000000000years") && e.contains("at most 100years"), "{e}");
        let e = err(&["--duration", "2s", "--warmup", "2s"]);
        assert!(e.contains("--warmup 2s") && e.contains("the run lasts 2s (--duration)"), "{e}");
        let e = err(&["--duration", "2s", "--rate", "1e12"]);
        assert!(e.contains("--rate 1000000000000.0") && e.contains("1000000000 or less"), "{e}");
    }
}
