//! The report of a query run (`timeit`, `workload`): totals, and one entry
//! per query with its intended ratio beside the share it actually got
//! (pgbench's habit), its latency, errors and plan.

use std::fmt::Write as _;

use serde::Serialize;

use super::text::{
    accounting_line, client_and_verdict, durability_line, error_lines, interrupted_banner, outage_lines, pacing_words,
    rate_warning_line, runtime_block, server_duration_line, stage_lines, target_lines,
};
use super::{
    end_s, error_entries, paced_rate, per_sec, span_s, stage_entries, timeline, Accounting, ClientReport, Connections,
    ErrorEntry, Header, Latencies, OutageEntry, Paced, Pacing, Server, Settings, StageEntry, TimelineEntry, Verdict,
};
use crate::config::{ProgressDisplay, QueryConfig, TargetChoice};
use crate::dialect::pgbench::BUILTINS;
use crate::format::{group, human, Unit};
use crate::ident::TableName;
use crate::op::{Stages, Warmup};
use crate::outcome::QueryOutcome;
use crate::stats::query::StatementSummary;
use crate::stats::LatencySummary;
use crate::workload::explain::Explain;
use crate::workload::explain::ExplainMode;
use crate::workload::tsbs::CpuData;
use crate::workload::{Protocol, QuerySpec};

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct QueryReport {
    /// `command`: `timeit` or `workload`.
    #[serde(flatten)]
    pub header: Header,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Queries that succeeded in the measured window(s).
    pub count: u64,
    /// Queries that failed, warm-up included.
    pub errors: u64,
    /// Queries requested (`--repeat` per statement, `--max-queries`) = ok +
    /// failed + unattempted, warm-up (which comes on top) left out.
    pub accounting: Accounting,
    pub qps: f64,
    /// pgbench scripts (`-f`, `--builtin`): `count` in pgbench's word, a
    /// transaction being one run of a script; null for queries.
    pub transactions: Option<u64>,
    /// pgbench scripts: `qps` in pgbench's word (transactions per second of
    /// the measured window, without the connections' opening); null for queries.
    pub tps: Option<f64>,
    /// Opening the workers' connections before the measured window (each
    /// statement's, summed): pgbench's initial connection time.
    pub initial_connection_ms: f64,
    pub duration_s: f64,
    pub wall_s: f64,
    /// Per query, all queries together.
    #[serde(flatten)]
    pub latencies: Latencies,
    /// Open loop: queries that started late or never started, all phases together.
    #[serde(flatten)]
    pub pacing: Pacing,
    pub warmup: Option<QueryWarmup>,
    pub error_classes: Vec<ErrorEntry>,
    pub queries: Vec<QueryEntry>,
    #[serde(flatten)]
    pub client: ClientReport,
    pub timeline: Vec<TimelineEntry>,
    /// `--stages` or `--rate-stages`: each stage's figures, all phases together (empty without).
    pub stages: Vec<StageEntry>,
    /// Windows during which a worker had lost its connection (`--reconnect`).
    pub outages: Vec<OutageEntry>,
    /// Connections made again after one was lost, over all workers.
    pub reconnects: u64,
    /// pgbench's "number of transactions retried": measured script runs
    /// that took more than one try (`--max-tries`).
    pub retried: u64,
    /// pgbench's "total number of retries": their tries beyond the first.
    pub retries: u64,
    /// `-L`: the measured runs that succeeded with a latency above the limit
    /// (from the merged histogram: to its 3 significant digits); none without -L.
    pub above_latency_limit: Option<u64>,
    /// `-L` with `--rate`: measured runs skipped, not sent, their slot more
    /// than the limit past when they could start (pgbench's "skipped").
    pub skipped: u64,
    /// `-C`: pgbench's "average connection time", of the connections made
    /// for each run; none without -C.
    pub average_connection_ms: Option<f64>,
    pub setup: QuerySetup,
    /// What the server paid per statement (`pg_stat_statements`).
    pub server_cost: super::server_cost::QueryCost,
    /// What the server was doing while the run ran; null when it was not sampled.
    pub server: Option<super::server::ServerReport>,
    /// The client's busiest thread each second, and when one was saturated.
    pub client_saturation: Option<super::client_load::ClientSaturation>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct QueryEntry {
    pub name: String,
    pub query: String,
    /// The intended share of executions.
    pub ratio: f64,
    /// A `-f` or `--builtin` script's `@weight` (pgbench's), of which
    /// `ratio` is the share; null for a workload file's entry.
    pub weight: Option<u64>,
    /// A pgbench script's name as pgbench prints it after `transaction
    /// type:` (`<builtin: TPC-B (sort of)>`, or the file as given); null for a query.
    pub transaction_type: Option<String>,
    /// The share it actually got, of all executions attempted in its phase.
    pub share: f64,
    pub count: u64,
    pub errors: u64,
    pub qps: f64,
    pub duration_s: f64,
    pub latency_ms: Option<LatencySummary>,
    pub error_classes: Vec<ErrorEntry>,
    pub explain: Option<Explain>,
    /// Why `--explain` has no plan for this query.
    pub explain_error: Option<String>,
    /// A pgbench script's statements, with `--per-statement` (pgbench's `-r`).
    pub statements: Option<Vec<StatementEntry>>,
    /// Each second since its phase's start (as `timeline`), the mean latency
    /// of its executions that completed then; null where none did.
    pub timeline_latency_mean_ms: Vec<Option<f64>>,
}

/// One command of a script (a SQL statement or a `\` command, as pgbench's
/// `-r` lists them): its measured executions in the script's runs.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct StatementEntry {
    /// Its line in the script.
    pub line: usize,
    pub statement: String,
    pub count: u64,
    pub errors: u64,
    /// Its failures after which the run was tried again (`--max-tries`).
    pub retries: u64,
    pub latency_ms: Option<LatencySummary>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct QueryWarmup {
    pub count: u64,
    pub errors: u64,
    pub duration_s: f64,
    /// When its last query ended, since the start; null when none ended.
    pub end_s: Option<f64>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct QuerySetup {
    #[serde(flatten)]
    pub server: Server,
    #[serde(flatten)]
    pub settings: Settings,
    /// `--insecure`: https to CrateDB without verifying its certificate.
    pub tls_unverified: bool,
    /// How statements are sent over the PostgreSQL protocol; none over
    /// CrateDB's HTTP endpoint, where each goes to `_sql` as JSON.
    pub protocol: Option<Protocol>,
    /// `--pipeline`: statements in flight on each connection at once.
    pub pipeline: usize,
    pub concurrency: u32,
    /// The threads the workers ran on (pgbench's `-j`).
    pub threads: usize,
    pub rate_queries_per_sec: Option<f64>,
    /// `--stages` or `--rate-stages`, as given.
    pub stages: Option<String>,
    pub max_queries: Option<u64>,
    pub duration_limit_s: Option<f64>,
    pub warmup: Warmup,
    pub seed: u64,
    pub explain: Option<ExplainMode>,
    /// pgbench scripts' `:scale`; none without scripts.
    pub scale: Option<i64>,
    pub per_statement: bool,
    /// nodeIngestBench's flags were given: the text ends with its Global
    /// Results block, as the run printed it (`results show` too); false in
    /// a report kept before.
    #[serde(default)]
    pub global_results: bool,
    /// `--max-tries`: tries a script run gets (pgbench's "maximum number of tries").
    pub max_tries: u32,
    /// `--failures-detailed`: the text counts failures by pgbench's kinds.
    pub failures_detailed: bool,
    /// `-L`: pgbench's latency limit.
    pub latency_limit_ms: Option<f64>,
    /// `-P`: seconds between progress lines; none without it (pgbench
    /// measures each transaction's latency only with `-P`, `-R` or `-L`).
    #[serde(default)]
    pub progress_s: Option<f64>,
    /// `-C`: a new connection for each run.
    pub connect: bool,
    /// `--suite`: what its parameters were drawn from.
    pub suite: Option<SuiteSetup>,
}

/// A suite's table, as read before the run: its hosts and time range.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SuiteSetup {
    pub name: crate::report::Name,
    pub table: String,
    pub hosts: usize,
    /// The first and the last reading's time (RFC 3339, UTC).
    pub first_reading: String,
    pub last_reading: String,
}

impl SuiteSetup {
    fn of(table: &TableName, data: &CpuData) -> SuiteSetup {
        let time = |us: i64| {
            chrono::DateTime::from_timestamp_micros(us)
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
                .unwrap_or_default()
        };
        SuiteSetup {
            name: "tsbs-cpu".into(),
            table: table.to_string(),
            hosts: data.hosts.len(),
            first_reading: time(data.first_us),
            last_reading: time(data.last_us),
        }
    }
}

impl QueryReport {
    pub fn new(cfg: &QueryConfig, out: &QueryOutcome, target_url: Option<String>, throwaway: bool) -> QueryReport {
        let mut queries = Vec::new();
        let mut duration_s = 0.0;
        for phase in &out.phases {
            let window = phase.summary.window.as_secs_f64();
            let attempted = phase.summary.attempted();
            for (i, (q, s)) in phase.queries.iter().zip(&phase.summary.queries).enumerate() {
                let (explain, explain_error) = match phase.explains.get(i) {
                    Some(Ok(e)) => (Some(e.clone()), None),
                    Some(Err(e)) => (None, Some(e.clone())),
                    None => (None, None),
                };
                queries.push(QueryEntry {
                    name: q.name.clone(),
                    query: q.query.clone(),
                    ratio: q.ratio,
                    weight: q.weight,
                    transaction_type: q.script.as_ref().map(|s| transaction_type(&s.origin)),
                    share: if attempted > 0 { s.attempted() as f64 / attempted as f64 } else { 0.0 },
                    count: s.ok,
                    errors: s.failed + s.warmup_failed,
                    qps: per_sec(s.ok, window),
                    duration_s: window,
                    latency_ms: s.latency.clone(),
                    error_classes: error_entries(&s.errors),
                    explain,
                    explain_error,
                    statements: statement_entries(cfg.per_statement, q, phase.statements.get(i)),
                    timeline_latency_mean_ms: s.timeline_mean_ms.clone(),
                });
            }
            duration_s += window;
        }
        let f = &out.figures;
        let total = f.recorder();
        let m = &total.measured;
        let errors = m.failed_batches + total.warmup.failed_batches;
        let (rate, rate_flag) = paced_rate(cfg.load.rate, cfg.load.stages.as_ref());
        let paced = rate.is_some();
        let setup = &out.setup;
        let qps = per_sec(m.batches, duration_s);
        // A query in flight when its connection was lost counts as failed: none is left in doubt.
        let Connections { outages, reconnects, .. } = Connections::of(total);
        let pacing = Pacing::of(
            Paced { rate, rate_flag, unit: "queries", in_flight_flag: "--concurrency", reached: qps },
            m,
            f.dropped,
        );
        let scripts = !queries.is_empty() && queries.iter().all(|q| q.transaction_type.is_some());
        QueryReport {
            header: Header::new(cfg.command),
            verdict: Verdict::new(f.interrupted, errors > 0 || pacing.behind()).stopped(f.stopped.clone()),
            count: m.batches,
            errors,
            // timeit runs `--repeat` of each statement, a phase each; a workload is one phase.
            // The warm-up is the first part of that total (`--warmup`).
            accounting: Accounting::of(
                "queries",
                cfg.max_queries.map(|n| n * cfg.phase_count() as u64),
                m.batches + total.warmup.batches,
                errors,
                0,
            ),
            qps,
            transactions: scripts.then_some(m.batches),
            tps: scripts.then_some(qps),
            initial_connection_ms: out.connecting.as_secs_f64() * 1e3,
            duration_s,
            wall_s: f.wall.as_secs_f64(),
            latencies: Latencies::of(m, paced, out.server_duration.as_ref()),
            pacing,
            warmup: (cfg.load.warmup != Warmup::None).then(|| QueryWarmup {
                count: total.warmup.batches,
                errors: total.warmup.failed_batches,
                duration_s: span_s(&total.warmup),
                end_s: end_s(&total.warmup),
            }),
            error_classes: error_entries(&total.errors),
            queries,
            client: ClientReport::from(&f.cost),
            timeline: timeline(total),
            stages: stage_entries(cfg.load.stages.as_ref(), total, f.wall),
            outages,
            reconnects,
            retried: out.retries.retried,
            retries: out.retries.retries,
            above_latency_limit: cfg.latency_limit.map(|limit| above(&m.latency, limit)),
            skipped: m.skipped,
            average_connection_ms: out.connects.average_ms().filter(|_| cfg.connect_each),
            setup: QuerySetup {
                server: Server::of(setup, target_url, throwaway),
                settings: Settings::of(setup),
                tls_unverified: cfg.target.tls_unverified(),
                protocol: (!matches!(cfg.target, TargetChoice::Crate(_))).then_some(cfg.protocol),
                pipeline: cfg.pipeline,
                concurrency: cfg.concurrency,
                threads: out.threads,
                rate_queries_per_sec: cfg.load.rate,
                stages: cfg.load.stages.as_ref().map(Stages::to_string),
                max_queries: cfg.max_queries,
                duration_limit_s: cfg.load.duration.map(|d| d.as_secs_f64()),
                warmup: cfg.load.warmup,
                seed: cfg.load.seed,
                explain: cfg.explain,
                scale: out.scale,
                per_statement: cfg.per_statement,
                global_results: cfg.node_options.is_some(),
                max_tries: cfg.max_tries,
                failures_detailed: cfg.failures_detailed,
                latency_limit_ms: cfg.latency_limit.map(|l| l.as_secs_f64() * 1000.0),
                progress_s: match cfg.output.progress {
                    ProgressDisplay::Lines(every) => Some(every.as_secs_f64()),
                    ProgressDisplay::Hidden | ProgressDisplay::Auto => None,
                },
                connect: cfg.connect_each,
                suite: cfg.suite.as_ref().zip(out.suite_data.as_ref()).map(|(s, d)| SuiteSetup::of(&s.table, d)),
            },
            server_cost: super::server_cost::QueryCost::of(
                &out.statements,
                out.phases.iter().flat_map(|p| p.queries.iter()),
            ),
            server: super::server::ServerReport::of(&out.figures),
            client_saturation: super::client_load::ClientSaturation::of(&out.figures.client_load),
        }
    }
}

impl QueryReport {
    /// What one operation is called: a run of pgbench scripts counts
    /// transactions, in pgbench's words; any other, queries.
    fn unit(&self) -> &'static str {
        if self.transactions.is_some() {
            "transactions"
        } else {
            "queries"
        }
    }
}

/// pgbench's name for a script (its `desc`): `<builtin: TPC-B (sort of)>`
/// for a built-in one, else the file as given. `origin` is the script's
/// (`builtin:NAME` or the path).
fn transaction_type(origin: &str) -> String {
    let builtin = origin.strip_prefix("builtin:").and_then(|name| BUILTINS.iter().find(|(n, _, _)| *n == name));
    match builtin {
        Some((_, desc, _)) => format!("<builtin: {desc}>"),
        None => origin.to_string(),
    }
}

/// A script's statements for the report, when they were asked for.
fn statement_entries(
    wanted: bool,
    q: &QuerySpec,
    summaries: Option<&Vec<StatementSummary>>,
) -> Option<Vec<StatementEntry>> {
    let (true, Some(script), Some(summaries)) = (wanted, &q.script, summaries) else { return None };
    let entries = script.commands.iter().zip(summaries).map(|(c, s)| StatementEntry {
        line: c.line,
        statement: c.text.clone(),
        count: s.ok,
        errors: s.failed,
        retries: s.retries,
        latency_ms: s.latency.clone(),
    });
    Some(entries.collect())
}

/// pgbench's `-r`: a row per statement of a script, under its block.
fn statement_lines(out: &mut String, q: &QueryEntry) {
    let Some(statements) = &q.statements else { return };
    let _ = writeln!(
        out,
        "Statements: {:>9}  {:>6}  {:>9}  {:>9}  {:>9}  {:>9}  statement (line)",
        "count", "errors", "mean ms", "p50 ms", "p99 ms", "max ms"
    );
    for st in statements {
        let f = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_else(|| "-".into());
        let l = st.latency_ms.as_ref();
        let _ = writeln!(
            out,
            "            {:>9}  {:>6}  {:>9}  {:>9}  {:>9}  {:>9}  {} ({})",
            group(st.count),
            group(st.errors),
            f(l.map(|l| l.mean)),
            f(l.map(|l| l.p50)),
            f(l.map(|l| l.p99)),
            f(l.map(|l| l.max)),
            st.statement.replace('\n', " "),
            st.line
        );
    }
}

fn plan_line(out: &mut String, q: &QueryEntry) {
    if let Some(e) = &q.explain {
        let ms = |v: Option<f64>| v.map(|v| format!("{v:.3} ms")).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "Plan:       {}: {} {} (planning {}, execution {})",
            q.name,
            e.top_node,
            ms(e.top_node_ms),
            ms(e.planning_ms),
            ms(e.execution_ms)
        );
        if let Some(d) = &e.distributed {
            let count = d.task_count.map_or("?".into(), |n| n.to_string());
            let node = d.task_node.as_deref().unwrap_or("?");
            let top = d.task_top_node.as_deref().unwrap_or("?");
            let _ = writeln!(out, "            distributed: {count} tasks; one task: {top} on {node}");
        }
    }
    if let Some(e) = &q.explain_error {
        let _ = writeln!(out, "Plan:       {}: none ({e})", q.name);
    }
}

/// What every timeit and workload text opens with: the target, the setup, the warm-up.
pub(crate) fn header(out: &mut String, r: &QueryReport) {
    let s = &r.setup;
    interrupted_banner(out, &r.verdict);
    let _ = writeln!(out, "dbload {} {}", r.header.dbload_version, r.header.command);
    target_lines(out, &s.server, s.tls_unverified);
    durability_line(out, &s.settings);
    let pacing = pacing_words(s.stages.as_deref(), s.rate_queries_per_sec, r.unit());
    let protocol = match s.protocol.as_ref().and_then(clap::ValueEnum::to_possible_value) {
        Some(p) if s.pipeline > 1 => format!("protocol {}, pipeline {}", p.get_name(), s.pipeline),
        Some(p) => format!("protocol {}", p.get_name()),
        None => "CrateDB's HTTP endpoint (_sql)".into(),
    };
    let threads = if s.threads == 1 { "1 thread".to_string() } else { format!("{} threads", s.threads) };
    let _ = writeln!(out, "Setup:    concurrency {} on {threads}, {pacing}, {protocol}", s.concurrency);
    if let Some(suite) = &s.suite {
        let _ = writeln!(
            out,
            "Suite:    {} on table {}: {} hosts, readings {} to {}, parameters drawn from them",
            suite.name, suite.table, suite.hosts, suite.first_reading, suite.last_reading
        );
    }
    if let Some(w) = &r.warmup {
        // --warmup N is whole per connection: say so when that rounded it up
        // (cr8's -w is exactly its count, shared out: Warmup::Total).
        let each = match s.warmup {
            Warmup::Count(n) if s.concurrency > 1 => format!(
                " ({n} per connection × {} connections: --warmup rounds up to whole warm-ups per connection)",
                s.concurrency
            ),
            _ => String::new(),
        };
        let over = human(Some(w.duration_s), Unit::S);
        let _ = writeln!(out, "Warm-up:  {} {} over {over}{each}, not measured", group(w.count), r.unit());
    }
    out.push('\n');
}

impl QueryReport {
    /// Whether the text opens with pgbench's summary (`pgbench::render`:
    /// timeit of pgbench scripts), which then holds the lines pgbench's
    /// flags add.
    fn pgbench_summarized(&self) -> bool {
        self.transactions.is_some() && self.header.command == "timeit"
    }
}

/// What every timeit and workload text ends with: the accounting, errors,
/// stages, latency's parts, the server's cost, the client's and the verdict.
pub(crate) fn footer(out: &mut String, r: &QueryReport) {
    accounting_line(out, &Accounting { unit: r.unit().into(), ..r.accounting.clone() });
    error_lines(out, &r.error_classes);
    outage_lines(out, &r.outages);
    if !r.outages.is_empty() {
        let _ = writeln!(out, "Reconnects: {}", group(r.reconnects));
    }
    stage_lines(out, &r.stages, r.unit());
    // A pgbench script run has these in pgbench's summary, in its order.
    if !r.pgbench_summarized() {
        latency_limit_lines(out, r);
        failure_lines(out, r);
        retry_lines(out, r);
        connection_time_line(out, r);
    }
    let latencies = &r.latencies;
    server_duration_line(out, latencies.server_duration_ms.as_ref());
    if let (Some(svc), Some(lag)) = (&latencies.service_time_ms, &latencies.schedule_lag_ms) {
        let _ = writeln!(out, "Service time (ms): mean {:.3}, p50 {:.3}, p99 {:.3}", svc.mean, svc.p50, svc.p99);
        let _ = writeln!(out, "Schedule lag (ms): mean {:.3}, p99 {:.3}, max {:.3}", lag.mean, lag.p99, lag.max);
    }
    super::server_cost::query_lines(out, &r.server_cost);
    super::server::server_lines(out, r.server.as_ref());
    super::client_load::client_load_line(out, r.client_saturation.as_ref());
    rate_warning_line(out, &r.pacing);
    client_and_verdict(out, &r.client, r.wall_s, &r.verdict);
}

/// The values of a latency histogram (µs) above `limit`.
fn above(latency: &hdrhistogram::Histogram<u64>, limit: std::time::Duration) -> u64 {
    let limit_us = u64::try_from(limit.as_micros()).unwrap_or(u64::MAX);
    latency.iter_recorded().filter(|v| v.value_iterated_to() > limit_us).map(|v| v.count_at_value()).sum()
}

/// `-L`: pgbench's line on the runs above its latency limit, in its words.
pub(super) fn latency_limit_lines(out: &mut String, r: &QueryReport) {
    let (Some(limit), Some(n)) = (r.setup.latency_limit_ms, r.above_latency_limit) else { return };
    if r.setup.rate_queries_per_sec.is_some() {
        let share = 100.0 * r.skipped as f64 / (r.count + r.skipped + r.errors).max(1) as f64;
        let _ = writeln!(out, "number of transactions skipped: {} ({share:.3}%)", r.skipped);
    }
    let share = 100.0 * n as f64 / r.count.max(1) as f64;
    let _ =
        writeln!(out, "number of transactions above the {limit:.1} ms latency limit: {n}/{} ({share:.3}%)", r.count);
}

/// `--failures-detailed`: pgbench's failures by kind, in its words, read from
/// the error classes (a serialization failure is SQLSTATE 40001, a deadlock 40P01).
pub(super) fn failure_lines(out: &mut String, r: &QueryReport) {
    if !r.setup.failures_detailed {
        return;
    }
    for (kind, code) in [("serialization", "40001"), ("deadlock", "40P01")] {
        let class = format!("SQLSTATE {code}");
        let n: u64 = r.error_classes.iter().filter(|e| e.class == class).map(|e| e.count).sum();
        let share = 100.0 * n as f64 / (r.count + r.errors).max(1) as f64;
        let _ = writeln!(out, "number of {kind} failures: {n} ({share:.3}%)");
    }
}

/// `-C`: pgbench's line on the connections made for each run.
fn connection_time_line(out: &mut String, r: &QueryReport) {
    if let Some(ms) = r.average_connection_ms {
        let _ = writeln!(out, "average connection time = {ms:.3} ms");
    }
}

/// `--max-tries` other than 1: pgbench's lines on its retries, in its words.
pub(super) fn retry_lines(out: &mut String, r: &QueryReport) {
    if r.setup.max_tries == 1 {
        return;
    }
    let share = |n: u64| 100.0 * n as f64 / (r.count + r.errors).max(1) as f64;
    if !r.pgbench_summarized() && r.setup.max_tries != 0 {
        let _ = writeln!(out, "maximum number of tries: {}", r.setup.max_tries);
    }
    let _ = writeln!(out, "number of transactions retried: {} ({:.3}%)", r.retried, share(r.retried));
    let _ = writeln!(out, "total number of retries: {}", r.retries);
}

/// timeit: cr8's block per statement.
pub fn render_timeit(r: &QueryReport) -> String {
    let mut out = String::new();
    header(&mut out, r);
    query_blocks(&mut out, r);
    footer(&mut out, r);
    out
}

/// cr8's block per statement (or script): its runtime, count and rate,
/// its share of a weighted mix, its statements and plan.
pub(crate) fn query_blocks(out: &mut String, r: &QueryReport) {
    let (done, rate) = if r.transactions.is_some() { ("Transactions:", "tps") } else { ("Queries:   ", "queries/s") };
    for q in &r.queries {
        let _ = writeln!(out, "{}: {}", q.name, q.query.replace('\n', " "));
        if let Some(l) = &q.latency_ms {
            runtime_block(out, "Runtime (in ms):", l);
        }
        let _ = writeln!(
            out,
            "{done} {} in {} = {:.1} {rate}, {} failed",
            group(q.count),
            human(Some(q.duration_s), Unit::S),
            q.qps,
            group(q.errors)
        );
        if q.ratio < 1.0 {
            // Weighted scripts (-f FILE@W): pgbench's "targets x % of total" beside what each got.
            let _ = writeln!(out, "Share:      {:.3} intended, {:.3} got", q.ratio, q.share);
        }
        statement_lines(out, q);
        plan_line(out, q);
        out.push('\n');
    }
}

/// workload: a row per query (intended ratio beside achieved share), the totals, then cr8's block.
pub fn render_workload(r: &QueryReport) -> String {
    let mut out = String::new();
    header(&mut out, r);
    let width = r.queries.iter().map(|q| q.name.len()).max().unwrap_or(0).max(5);
    let _ = writeln!(
        out,
        "{:<width$}  {:>6}  {:>6}  {:>9}  {:>6}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}",
        "query", "ratio", "share", "count", "errors", "qps", "mean ms", "p50 ms", "p95 ms", "p99 ms", "max ms"
    );
    let row = |out: &mut String,
               name: &str,
               ratio: f64,
               share: f64,
               count: u64,
               errors: u64,
               qps: f64,
               l: Option<&LatencySummary>| {
        let f = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "{name:<width$}  {ratio:>6.3}  {share:>6.3}  {:>9}  {:>6}  {qps:>9.1}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}",
            group(count),
            group(errors),
            f(l.map(|l| l.mean)),
            f(l.map(|l| l.p50)),
            f(l.map(|l| l.p95)),
            f(l.map(|l| l.p99)),
            f(l.map(|l| l.max)),
        );
    };
    for q in &r.queries {
        row(&mut out, &q.name, q.ratio, q.share, q.count, q.errors, q.qps, q.latency_ms.as_ref());
    }
    row(&mut out, "total", 1.0, 1.0, r.count, r.errors, r.qps, r.latencies.latency_ms.as_ref());
    // What each row's name stands for: `q1` alone says nothing.
    for q in &r.queries {
        let _ = writeln!(out, "{:<width$}  {}", q.name, one_line(&q.query, 100));
    }
    out.push('\n');
    if let Some(l) = &r.latencies.latency_ms {
        runtime_block(&mut out, "Runtime (in ms), all queries:", l);
    }
    for q in &r.queries {
        if q.statements.is_some() {
            let _ = writeln!(out, "{}:", q.name);
            statement_lines(&mut out, q);
            out.push('\n');
        }
        plan_line(&mut out, q);
    }
    footer(&mut out, r);
    out
}

/// `sql` on one line (its runs of white space made one space), cut to
/// `max` characters with an ellipsis.
fn one_line(sql: &str, max: usize) -> String {
    let line = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{Figures, Setup};
    use crate::report::fixtures;
    use crate::stats::Recorder;

    fn report(flags: &[&str]) -> QueryReport {
        use clap::Parser;
        let argv = [&["dbload", "timeit", "-s", "select 1"][..], flags].concat();
        let crate::cli::Command::Timeit(a) = crate::cli::Cli::try_parse_from(argv).unwrap().command else {
            unreachable!("timeit")
        };
        let cfg = QueryConfig::timeit(a, &|_| None, Some(&mut std::io::empty())).unwrap();
        let out = QueryOutcome {
            setup: Setup::default(),
            phases: Vec::new(),
            figures: Figures { recorders: vec![Recorder::default()], ..Figures::default() },
            server_duration: None,
            scale: None,
            suite_data: None,
            statements: Err("not installed".into()),
            threads: 2,
            connecting: std::time::Duration::ZERO,
            retries: Default::default(),
            connects: Default::default(),
        };
        QueryReport::new(&cfg, &out, None, false)
    }

    /// `--protocol` chooses between the PostgreSQL protocol's ways of
    /// sending a statement; CrateDB's HTTP endpoint has none of them (a
    /// statement goes to `_sql` as JSON), so its report names none.
    #[test]
    fn a_cratedb_http_run_names_no_postgresql_protocol() {
        let http = report(&["--url", "cratedb://localhost:4200"]);
        assert_eq!(serde_json::to_value(&http).unwrap()["setup"]["protocol"], serde_json::Value::Null);
        let text = render_timeit(&http);
        assert!(text.contains("concurrency 1 on 2 threads, closed loop, CrateDB's HTTP endpoint (_sql)\n"), "{text}");
        assert!(!text.contains("protocol"), "{text}");
        let pg = report(&["--url", "postgres://localhost/db", "--protocol", "simple"]);
        assert_eq!(serde_json::to_value(&pg).unwrap()["setup"]["protocol"], "simple");
        assert!(render_timeit(&pg).contains(", protocol simple\n"), "{}", render_timeit(&pg));
    }

    #[test]
    fn timeit_text() {
        let argv = ["dbload", "timeit", "--url", "postgres://bench:secret@db:5432/bench", "-s", "select 1", "-c", "2"];
        let crate::cli::Command::Timeit(a) = fixtures::command(&argv) else { unreachable!("timeit") };
        let cfg = QueryConfig::timeit(a, &|_| None, Some(&mut std::io::empty())).unwrap();
        let r = QueryReport::new(&cfg, &fixtures::queried(&cfg), Some(fixtures::URL.into()), false);
        insta::assert_snapshot!(render_timeit(&r));
    }

    #[test]
    fn workload_text() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("queries.yml");
        let queries =
            "- name: recent\n  query: select 1\n  ratio: 0.7\n- name: counts\n  query: select 2\n  ratio: 0.3\n";
        std::fs::write(&file, queries).unwrap();
        let argv = ["dbload", "workload", file.to_str().unwrap(), "--url", "postgres://bench:secret@db:5432/bench"];
        let crate::cli::Command::Workload(a) = fixtures::command(&[&argv[..], &["--max-queries", "22"]].concat())
        else {
            unreachable!("workload")
        };
        let cfg = QueryConfig::workload(a, &|_| None).unwrap();
        let r = QueryReport::new(&cfg, &fixtures::queried(&cfg), Some(fixtures::URL.into()), false);
        insta::assert_snapshot!(render_workload(&r));
    }

    /// Issue 35: a workload's rows were named q1, q2 (its entries had no
    /// name) and the text report had the queries' text nowhere.
    #[test]
    fn workload_rows_say_what_their_query_is() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("queries.yml");
        let long = format!("select *\n  from t where v in ({})", vec!["1"; 60].join(", "));
        std::fs::write(
            &file,
            format!(
                "- query: select 1\n  ratio: 0.7\n- query: |\n    {}\n  ratio: 0.3\n",
                long.replace('\n', "\n    ")
            ),
        )
        .unwrap();
        let argv =
            ["dbload", "workload", file.to_str().unwrap(), "--url", "postgres://bench@db/bench", "--max-queries", "5"];
        let crate::cli::Command::Workload(a) = fixtures::command(&argv) else { unreachable!("workload") };
        let cfg = QueryConfig::workload(a, &|_| None).unwrap();
        let text = render_workload(&QueryReport::new(&cfg, &fixtures::queried(&cfg), None, false));
        assert!(text.contains("\nq1     select 1\n"), "{text}");
        let q2 = text.lines().find(|l| l.starts_with("q2     select * from t where v in (1, 1,")).expect(&text);
        assert!(q2.ends_with('…') && q2.chars().count() == 7 + 101, "{q2}");
    }

    /// Issue 32: `--warmup 10` on 4 connections warms up with 12 queries
    /// (whole per connection), and the warm-up line says how the count came
    /// about; cr8's `-w 10` is exactly 10 and needs no word; a fast run said
    /// "0.00 s": short times are in ms.
    #[test]
    fn warmup_says_its_count_and_fast_runs_are_in_ms() {
        let argv = ["dbload", "timeit", "--url", "postgres://bench:secret@db:5432/bench", "-s", "select 1", "-c", "4"];
        let text = |flags: &[&str], count| {
            let crate::cli::Command::Timeit(a) = fixtures::command(&[&argv[..], flags].concat()) else {
                unreachable!("timeit")
            };
            let cfg = QueryConfig::timeit(a, &|_| None, Some(&mut std::io::empty())).unwrap();
            let mut r = QueryReport::new(&cfg, &fixtures::queried(&cfg), Some(fixtures::URL.into()), false);
            r.warmup = Some(QueryWarmup { count, errors: 0, duration_s: 0.0031, end_s: None });
            r.queries[0].duration_s = 0.0042;
            render_timeit(&r)
        };
        let rounded = text(&["--warmup", "10"], 12);
        let why = "(3 per connection × 4 connections: --warmup rounds up to whole warm-ups per connection)";
        assert!(rounded.contains(&format!("Warm-up:  12 queries over 3.10 ms {why}, not measured")), "{rounded}");
        assert!(rounded.contains(" in 4.20 ms = ") && !rounded.contains("0.00 s"), "{rounded}");
        let exact = text(&["-w", "10"], 10);
        assert!(exact.contains("Warm-up:  10 queries over 3.10 ms, not measured"), "{exact}");
    }
}
