//! The ingest report: what a run that wrote rows into a table leaves
//! behind (`ingest`, `insert-fake-data`, `insert-json`). Built once from
//! the resolved configuration and the run's outcome; its JSON form is the
//! contract `schema/report.schema.json`, its text form [`render`].
//! The parts it shares with the other commands' reports (header, verdict,
//! throughput, latencies, pacing, server) are in `report/mod.rs`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::server_cost::table_lines;
use super::text::{
    accounting_line_as, client_and_verdict, durability_line, error_lines, interrupted_banner, outage_lines,
    pacing_words, rate_warning_line, runtime_block, server_duration_line, stage_lines, target_lines,
};
use super::{
    end_s, error_entries, paced_rate, per_sec, server_cost, span_s, stage_entries, timeline, Accounting, ClientReport,
    Connections, ErrorEntry, Header, Latencies, Paced, Pacing, Server, Settings, StageEntry, Status, Throughput,
    TimelineEntry, Verdict,
};
use crate::config::{IngestConfig, TableAction};
use crate::dialect::{Method, TableOptions};
use crate::error::exit;
use crate::format::{group, human, Unit};
use crate::op::{Stages, Warmup};
use crate::outcome::{IngestOutcome, Verify};
use crate::stats::LatencySummary;

/// The report of the commands that write generated or read rows into a
/// table: `ingest` and its aliases, `insert-fake-data`, `insert-json`.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct IngestReport {
    #[serde(flatten)]
    pub header: Header,
    #[serde(flatten)]
    pub verdict: Verdict,
    #[serde(flatten)]
    pub throughput: Throughput,
    /// Rows acknowledged in all, warm-up included.
    pub rows_total: u64,
    pub metrics_per_sec: f64,
    /// insert-json: rows (JSON values) read = `rows_total + rejected_rows + failed_rows`.
    pub rows_read: Option<u64>,
    /// insert-json: rows that were malformed or had a value their column cannot take.
    pub rejected_rows: Option<u64>,
    /// insert-json: why reading stopped early (`--on-error abort`), with file and line.
    pub input_error: Option<String>,
    /// Rows requested = written + failed + rejected + in doubt + unattempted.
    pub accounting: Accounting,
    pub error_classes: Vec<ErrorEntry>,
    /// Per batch.
    #[serde(flatten)]
    pub latencies: Latencies,
    /// Open loop: batches that started late; rows never started.
    #[serde(flatten)]
    pub pacing: Pacing,
    pub warmup: Option<WarmupReport>,
    #[serde(flatten)]
    pub client: ClientReport,
    pub timeline: Vec<TimelineEntry>,
    /// `--stages` or `--rate-stages`: each stage's figures (empty without).
    pub stages: Vec<StageEntry>,
    #[serde(flatten)]
    pub connections: Connections,
    pub setup: SetupReport,
    pub verify: Option<Verify>,
    /// What the server paid: the table's size, the WAL written; null on a dry run.
    pub server_cost: Option<server_cost::TableCost>,
    /// What the server was doing while the run ran; null when it was not sampled.
    pub server: Option<super::server::ServerReport>,
    /// The client's busiest thread each second, and when one was saturated.
    pub client_saturation: Option<super::client_load::ClientSaturation>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct WarmupReport {
    pub rows: u64,
    pub batches: u64,
    pub errors: u64,
    pub duration_s: f64,
    /// When its last batch ended, since the start; null when none ended.
    pub end_s: Option<f64>,
    pub latency_ms: Option<LatencySummary>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SetupReport {
    #[serde(flatten)]
    pub server: Server,
    #[serde(flatten)]
    pub settings: Settings,
    /// `--insecure`: https to CrateDB without verifying its certificate.
    pub tls_unverified: bool,
    /// The table flags given (shards, replicas, chunk interval, ...).
    pub table_options: TableOptions,
    /// What the engine made of the table: chunks, shards, nodes, partitions.
    pub layout: BTreeMap<String, String>,
    pub model: crate::report::Name,
    pub method: Method,
    pub upsert: bool,
    pub table: String,
    pub table_action: TableAction,
    pub ddl: Vec<String>,
    pub columns: usize,
    pub batch_size: usize,
    pub insert_rows_per_statement: Option<usize>,
    pub workers: u32,
    pub devices_per_worker: u32,
    pub metrics_per_row: u32,
    /// `--with-jsonb`: the measurement model's metrics in one jsonb column.
    pub jsonb: bool,
    /// nodeIngestBench's flags were given: the text ends with its Global
    /// Results block, as the run printed it (`results show` too); false in
    /// a report kept before.
    #[serde(default)]
    pub global_results: bool,
    pub rows_limit: Option<u64>,
    pub duration_limit_s: Option<f64>,
    pub rate_rows_per_sec: Option<f64>,
    /// `--stages` or `--rate-stages`, as given.
    pub stages: Option<String>,
    pub warmup: Warmup,
    pub seed: u64,
    /// Time of the first generated reading (RFC 3339).
    pub data_start: String,
    pub dry_run: bool,
}

impl IngestReport {
    /// `target_url`: the redacted target; `throwaway`: whether dbload started it.
    pub fn ingest(
        cfg: &IngestConfig,
        out: &IngestOutcome,
        target_url: Option<String>,
        throwaway: bool,
    ) -> IngestReport {
        let f = &out.figures;
        let rec = f.recorder();
        let m = &rec.measured;
        let throughput = Throughput::of(rec, f.wall);
        let verify_failed = out.verify.as_ref().is_some_and(|v| !v.ok);
        // --compress was asked for: a compression that failed fails the run.
        let compress_failed = out.server_cost.compression.as_ref().is_some_and(|c| c.is_err());
        let metrics = cfg.schema.metrics_per_row as u64;
        let warmup = (cfg.load.warmup != Warmup::None).then(|| WarmupReport {
            rows: rec.warmup.rows,
            batches: rec.warmup.batches,
            errors: rec.warmup.failed_batches,
            duration_s: span_s(&rec.warmup),
            end_s: end_s(&rec.warmup),
            latency_ms: LatencySummary::of(&rec.warmup.latency),
        });
        let setup = &out.setup;
        let method = out.method;
        let input = &out.input;
        let connections = Connections::of(rec);
        // A batch nobody can vouch for may be lost: the run did not succeed.
        let lost = throughput.errors > 0 || connections.in_doubt_rows > 0;
        let (rate, rate_flag) = paced_rate(cfg.load.rate, cfg.load.stages.as_ref());
        let paced =
            Paced { rate, rate_flag, unit: "rows", in_flight_flag: "--workers", reached: throughput.rows_per_sec };
        let pacing = Pacing::of(paced, m, f.dropped);
        let mut verdict = Verdict::new(f.interrupted, lost || verify_failed || compress_failed || pacing.behind());
        let input_error = input.as_ref().and_then(|i| {
            let committed = m.rows + rec.warmup.rows;
            let abort = i.abort.as_ref().map(|why| {
                format!(
                    "{why}; reading stopped there (--on-error abort) with {committed} rows committed: fix that row, or \
                     pass --on-error skip --rejects FILE to go on past bad rows"
                )
            });
            let unreadable = i
                .read_error
                .as_ref()
                .map(|why| format!("{why}; reading stopped there with {committed} rows committed"));
            unreadable.or(abort).or(i.write_error.clone())
        });
        if input_error.is_some() && !f.interrupted {
            verdict.status = Status::Failed;
            verdict.exit_code = exit::USAGE;
        }
        let verdict = verdict.stopped(f.stopped.clone());
        let server = Server::of(setup, target_url, throwaway);
        let written = m.rows + rec.warmup.rows;
        let accounting = match input {
            Some(i) => Accounting::of("rows", Some(i.rows_read), written, throughput.failed_rows, i.rejected),
            None => Accounting::of("rows", cfg.total_rows(), written, throughput.failed_rows, 0),
        }
        .in_doubt(connections.in_doubt_rows);
        IngestReport {
            header: Header::new(cfg.command),
            verdict,
            rows_total: written,
            metrics_per_sec: per_sec(m.rows * metrics, throughput.duration_s),
            throughput,
            rows_read: input.as_ref().map(|i| i.rows_read),
            rejected_rows: input.as_ref().map(|i| i.rejected),
            input_error,
            accounting,
            error_classes: error_entries(&rec.errors),
            latencies: Latencies::of(m, rate.is_some(), out.server_duration.as_ref()),
            pacing,
            warmup,
            client: ClientReport::from(&f.cost),
            timeline: timeline(rec),
            stages: stage_entries(cfg.load.stages.as_ref(), rec, f.wall),
            connections,
            setup: SetupReport {
                // A dry run has no server: nothing was sent anywhere.
                server: if cfg.dry_run() { Server { target_kind: "none".into(), ..server } } else { server },
                settings: Settings::of(setup).with_unlogged_table(cfg.table_options.unlogged),
                tls_unverified: cfg.target.tls_unverified(),
                table_options: cfg.table_options.clone(),
                layout: setup.layout.iter().cloned().collect(),
                model: cfg.model.name().into(),
                method,
                upsert: cfg.upsert,
                table: cfg.table.to_string(),
                table_action: cfg.table_action,
                ddl: setup.ddl.clone(),
                columns: setup.columns.as_ref().map_or(cfg.schema.columns.len(), Vec::len),
                batch_size: cfg.batch_size,
                insert_rows_per_statement: setup.insert_rows_per_statement,
                workers: cfg.workers,
                devices_per_worker: cfg.model.devices(),
                metrics_per_row: cfg.schema.metrics_per_row,
                jsonb: cfg.model.jsonb(),
                global_results: cfg.node_options.is_some(),
                rows_limit: cfg.total_rows(),
                duration_limit_s: cfg.load.duration.map(|d| d.as_secs_f64()),
                rate_rows_per_sec: cfg.load.rate,
                stages: cfg.load.stages.as_ref().map(Stages::to_string),
                warmup: cfg.load.warmup,
                seed: cfg.load.seed,
                data_start: chrono::DateTime::from_timestamp_micros(cfg.start_us)
                    .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true))
                    .unwrap_or_default(),
                dry_run: cfg.dry_run(),
            },
            verify: out.verify.clone(),
            server_cost: server_cost::TableCost::of(&out.server_cost, written),
            server: super::server::ServerReport::of(f),
            client_saturation: super::client_load::ClientSaturation::of(&f.client_load),
        }
    }
}

/// Each outage (`--reconnect`), and what became of the batches in flight
/// when connections were lost; nothing when no connection was lost.
fn connection_lines(out: &mut String, c: &Connections) {
    outage_lines(out, &c.outages);
    if c.in_doubt_batches.is_empty() {
        return;
    }
    use crate::stats::recorder::Resolution::*;
    let how = [
        (Written, "found written"),
        (Resent, "not written and resent"),
        (NotWritten, "not written (failed)"),
        (InDoubt, "unresolved (no key to look their rows up by, or no server to ask)"),
    ];
    let parts: Vec<String> = how
        .iter()
        .filter_map(|&(resolution, what)| {
            let n = c.in_doubt_batches.iter().filter(|b| b.resolution == resolution).count();
            (n > 0).then(|| format!("{n} {what}"))
        })
        .collect();
    let _ = writeln!(
        out,
        "In doubt:   {} batches in flight when a connection was lost: {}; {} rows left in doubt",
        c.in_doubt_batches.len(),
        parts.join(", "),
        group(c.in_doubt_rows)
    );
    let _ = writeln!(out, "Reconnects: {}", group(c.reconnects));
}

/// The setup line of the time-series models, with tsdbperf's terms.
fn tsdbperf_setup(out: &mut String, s: &SetupReport) {
    let _ = writeln!(
        out,
        "Setup:    model {} ({} {}/worker, {} metrics/row{}), method {}{}, batch {}, {} worker{}, {}",
        s.model,
        s.devices_per_worker,
        // TSBS's cpu rows are per host (its tags' hostname).
        if s.model == "cpu" { "hosts" } else { "devices" },
        s.metrics_per_row,
        if s.jsonb { " as jsonb" } else { "" },
        s.method,
        if s.upsert { " + upsert" } else { "" },
        group(s.batch_size as u64),
        s.workers,
        if s.workers == 1 { "" } else { "s" },
        pacing_words(s.stages.as_deref(), s.rate_rows_per_sec, "rows")
    );
}

/// tsdbperf's four lines before its `Wrote` lines, in its words and
/// alignment, so that what reads its output finds them. A run bounded by
/// time (which tsdbperf has not) has no count per device, and says so.
fn tsdbperf_header(out: &mut String, s: &SetupReport) {
    let series = u64::from(s.workers) * u64::from(s.devices_per_worker);
    let measurements = match s.rows_limit {
        Some(rows) if series > 0 && rows % series == 0 => (rows / series).to_string(),
        Some(rows) => format!("{:.1} (--rows {rows} over {series} devices)", rows as f64 / series.max(1) as f64),
        None => "until --duration ends".to_string(),
    };
    for (label, value) in [
        ("Number of workers:", s.workers.to_string()),
        ("Devices per worker:", s.devices_per_worker.to_string()),
        ("Metrics per device:", s.metrics_per_row.to_string()),
        ("Measurements per device:", measurements),
    ] {
        let _ = writeln!(out, "{label:<24} {value}");
    }
}

pub fn render(r: &IngestReport) -> String {
    let mut out = String::new();
    let (s, t) = (&r.setup, &r.throughput);
    interrupted_banner(&mut out, &r.verdict);
    let _ = writeln!(out, "dbload {} {} into {}", r.header.dbload_version, r.header.command, s.table);
    target_lines(&mut out, &s.server, s.tls_unverified);
    durability_line(&mut out, &s.settings);
    if !s.layout.is_empty() {
        let layout: Vec<String> = s.layout.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(out, "Table:    {}", layout.join(", "));
    }
    let time_series = matches!(&*s.model, "measurement" | "cpu");
    if time_series {
        tsdbperf_setup(&mut out, s);
    } else {
        // cr8's header line, then what dbload adds to it.
        let _ = writeln!(out, "Executing inserts: bulk_size={} concurrency={}", s.batch_size, s.workers);
        let _ = writeln!(
            out,
            "Setup:    model {} ({} columns of the table), method {}, batch {}, {} worker{}",
            s.model,
            s.columns,
            s.method,
            group(s.batch_size as u64),
            s.workers,
            if s.workers == 1 { "" } else { "s" },
        );
    }
    out.push('\n');
    if time_series {
        // tsdbperf's lines; a dry run wrote nothing, it generated.
        if s.model == "measurement" {
            tsdbperf_header(&mut out, s);
        }
        let verb = if s.dry_run { "Generated" } else { "Wrote" };
        let _ = writeln!(out, "{verb} {:>9} measurements in {:.2} seconds", t.rows, t.duration_s);
        let _ = writeln!(out, "{verb} {:>9} measurements per second", t.rows_per_sec as u64);
        let _ = writeln!(out, "{verb} {:>9} metrics per second", r.metrics_per_sec as u64);
        out.push('\n');
    }
    // Metrics are the time-series models' value columns; a table's rows have none.
    let metrics = if time_series { format!("{} metrics/s, ", group(r.metrics_per_sec as u64)) } else { String::new() };
    let _ = writeln!(
        out,
        "Throughput: {} rows/s, {metrics}{:.1} batches/s over {}",
        group(t.rows_per_sec as u64),
        t.batches_per_sec,
        human(Some(t.duration_s), Unit::S)
    );
    let _ = writeln!(
        out,
        "Batches:    {} ok, {} failed ({} rows not written)",
        group(t.batches),
        group(t.errors),
        group(t.failed_rows)
    );
    if let (Some(read), Some(rejected)) = (r.rows_read, r.rejected_rows) {
        let _ = writeln!(
            out,
            "Input:      {} rows read: {} committed, {} rejected, {} in failed batches",
            group(read),
            group(r.rows_total),
            group(rejected),
            group(t.failed_rows)
        );
    }
    accounting_line_as(&mut out, &r.accounting, if s.dry_run { "generated" } else { "written" });
    if let Some(e) = &r.input_error {
        let _ = writeln!(out, "Stopped:    {e}");
    }
    match &r.warmup {
        Some(w) => {
            let _ = writeln!(
                out,
                "Warm-up:    {} rows in {} batches over {}, excluded from the figures",
                group(w.rows),
                group(w.batches),
                human(Some(w.duration_s), Unit::S)
            );
        }
        None => out.push_str("Warm-up:    none\n"),
    }
    error_lines(&mut out, &r.error_classes);
    out.push_str(&duplicate_keys(r).unwrap_or_default());
    connection_lines(&mut out, &r.connections);
    stage_lines(&mut out, &r.stages, "rows");
    let latencies = &r.latencies;
    if let Some(l) = &latencies.latency_ms {
        let title = if latencies.service_time_ms.is_some() {
            "Runtime (in ms) per batch, from its intended start:"
        } else {
            "Runtime (in ms) per batch:"
        };
        runtime_block(&mut out, title, l);
    }
    server_duration_line(&mut out, latencies.server_duration_ms.as_ref());
    if let (Some(svc), Some(lag)) = (&latencies.service_time_ms, &latencies.schedule_lag_ms) {
        let _ = writeln!(
            out,
            "Service time (ms): mean {:.3}, p50 {:.3}, p99 {:.3}, max {:.3}",
            svc.mean, svc.p50, svc.p99, svc.max
        );
        let _ = writeln!(out, "Schedule lag (ms): mean {:.3}, p99 {:.3}, max {:.3}", lag.mean, lag.p99, lag.max);
    }
    match r.verify.as_ref().map(|v| (v, v.found)) {
        Some((v, Some(found))) => {
            let verdict = if v.ok { "ok" } else { "MISMATCH" };
            let _ =
                writeln!(out, "Verify:     {} rows acknowledged, {} found: {verdict}", group(v.expected), group(found));
        }
        Some((v, None)) => {
            let why = v.error.as_deref().unwrap_or("unknown");
            let _ =
                writeln!(out, "Verify:     could not run ({why}): {} rows acknowledged, unverified", group(v.expected));
        }
        None => {}
    }
    if let Some(c) = &r.server_cost {
        table_lines(&mut out, c);
    }
    super::server::server_lines(&mut out, r.server.as_ref());
    super::client_load::client_load_line(&mut out, r.client_saturation.as_ref());
    rate_warning_line(&mut out, &r.pacing);
    client_and_verdict(&mut out, &r.client, t.wall_s, &r.verdict);
    let pairs = |m: &std::collections::BTreeMap<String, String>| {
        m.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
    };
    if !s.settings.server_settings.is_empty() {
        let _ = writeln!(out, "Settings:   {}", pairs(&s.settings.server_settings));
    }
    for (node, settings) in &s.settings.worker_settings {
        let _ = writeln!(out, "Worker:     {node} {}", pairs(settings));
    }
    for stmt in &s.ddl {
        let _ = writeln!(out, "DDL:        {}", stmt.replace('\n', "\n            "));
    }
    out
}

/// Why batches failed on the table's unique key (PostgreSQL's SQLSTATE
/// 23505, CrateDB's HTTP error 4091) when the run appended: the generator is seeded, so an earlier ingest with the
/// same seed and start wrote the very same keys. Said under the error with
/// what to do, since the figures alone (nothing written) read as a target
/// too slow; `None` otherwise.
fn duplicate_keys(r: &IngestReport) -> Option<String> {
    let failed = r.error_classes.iter().find(|e| ["SQLSTATE 23505", "CrateDB 4091"].contains(&e.class.as_str()))?;
    (r.setup.table_action == TableAction::Append).then(|| {
        format!(
            "Why:        {} batches hit keys the table already holds: an earlier ingest with the same seed ({}) \
             and start wrote these rows, and append keeps them. Run with another --seed (`seed:` in a run \
             file), or without --append (`append: true`) so that the table is made again\n",
            group(failed.count),
            r.setup.seed
        )
    })
}

/// nodeIngestBench's Global Results block (its flags were given): the rows
/// written over the measured time, in its words first; then [`render`].
pub fn render_with_global_results(r: &IngestReport) -> String {
    let mut out = String::new();
    let (rows, seconds) = (r.throughput.rows, r.throughput.duration_s);
    super::node_ingest::global_results(&mut out, super::node_ingest::ROWS, rows, seconds);
    out.push('\n');
    out.push_str(&render(r));
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::op::Ramps;

    use crate::cli::{Cli, Command};
    use crate::outcome::Setup;
    use crate::report::fixtures;
    use clap::Parser;

    /// A report from fixed figures: 10 batches of 1,000 rows, 10..100 ms each, one failed,
    /// 1,000 rows of the 12,000 asked for never tried.
    pub(crate) fn report(extra: &str) -> IngestReport {
        report_stopped(extra, None)
    }

    /// [`report`] of a run that stopped on its own, as `stopped` says.
    fn report_stopped(extra: &str, stopped: Option<String>) -> IngestReport {
        let args = format!("dbload ingest --url postgres://bench:secret@db:5432/bench --rows 12000 --workers 2 --batch-size 1000 --start 2024-01-01T00:00:00Z {extra}");
        let Command::Ingest(a) = Cli::parse_from(args.split_whitespace()).command else { unreachable!("ingest") };
        let cfg = crate::config::IngestConfig::resolve(a, &|_| None).unwrap();
        let outcome = fixtures::ingested(stopped);
        IngestReport::ingest(&cfg, &outcome, cfg.target.redacted(), false)
    }

    /// Issue 35: an append that fails on keys an earlier run wrote says
    /// why, under PostgreSQL's SQLSTATE 23505 and under CrateDB's 4091
    /// (its HTTP endpoint's duplicate key), which had no hint.
    #[test]
    fn an_append_on_duplicate_keys_says_why_on_postgres_and_cratedb() {
        for class in ["SQLSTATE 23505", "CrateDB 4091"] {
            let mut r = report("--append");
            r.error_classes[0].class = class.into();
            assert!(render(&r).contains("Why:        1 batches hit keys the table already holds"), "{class}");
            r.setup.table_action = TableAction::Create;
            assert!(!render(&r).contains("Why:"), "{class}: a table made again has no earlier keys");
        }
    }

    #[test]
    fn each_stage_is_a_row_with_its_target_and_what_it_reached() {
        let entry = |stage, ramps, (from, to): (f64, f64), per_sec| super::super::StageEntry {
            stage,
            ramps,
            start_s: 10.0 * (stage - 1) as f64,
            end_s: 10.0 * stage as f64,
            from,
            to,
            target_per_sec: None,
            ok: 5000,
            units: 5000,
            errors: 0,
            per_sec,
            latency_ms: None,
        };
        let mut out = String::new();
        stage_lines(&mut out, &[], "rows");
        assert!(out.is_empty(), "no stages, no table");
        stage_lines(
            &mut out,
            &[entry(1, Ramps::Rate, (0.0, 2000.0), 999.6), entry(2, Ramps::Vus, (1.0, 20.0), 12.25)],
            "rows",
        );
        let rows: Vec<&str> = out.lines().collect();
        assert!(rows[0].starts_with("Stages:") && rows[0].contains("rows/s"), "{out}");
        assert!(
            rows[1].contains("0.0 → 10.0") && rows[1].contains("0 → 2,000/s") && rows[1].contains(" 1,000 "),
            "{out}"
        );
        assert!(
            rows[2].contains("1 → 20 VUs") && rows[2].contains(" 12.2 ") && rows[2].trim_end().ends_with('0'),
            "{out}"
        );
    }

    #[test]
    fn outages_and_in_doubt_batches_are_listed() {
        use crate::report::{Connections, InDoubtEntry, OutageEntry};
        use crate::stats::recorder::Resolution;
        let mut r = report("");
        assert!(!render(&r).contains("Outage:"), "no line when no connection was lost");
        let outage = |start_s: f64, end_s: f64| OutageEntry {
            start_s,
            end_s,
            duration_s: end_s - start_s,
            error: "connection lost: connection closed".into(),
            workers: 2,
            reconnected: true,
        };
        let batch = |resolution| InDoubtEntry { at_s: 1.5, rows: 1000, resolution };
        r.connections = Connections {
            outages: vec![outage(1.5, 4.1)],
            reconnects: 2,
            in_doubt_batches: vec![batch(Resolution::Resent), batch(Resolution::InDoubt)],
            in_doubt_rows: 1000,
        };
        let text = render(&r);
        assert!(
            text.contains("Outage:     1.50 s → 4.10 s (2.60 s), 2 workers, reconnected; began with connection lost"),
            "{text}"
        );
        assert!(
            text.contains(
                "In doubt:   2 batches in flight when a connection was lost: 1 not written and resent, \
                 1 unresolved (no key to look their rows up by, or no server to ask); 1,000 rows left in doubt"
            ),
            "{text}"
        );
        assert!(text.contains("Reconnects: 2"));
    }

    #[test]
    fn summary_layout() {
        let r = report("");
        assert_eq!(r.verdict.exit_code, 1, "a failed batch makes the run fail");
        insta::assert_snapshot!(render(&r));
    }

    /// Issue 34: "Server:" heads the section of what the server was doing
    /// (`report::server`); its settings go on a line of their own name, so
    /// the two never read as one section.
    #[test]
    fn the_server_s_settings_are_not_under_the_server_section_s_heading() {
        let text = render(&report(""));
        assert!(text.contains("\nSettings:   fsync=on synchronous_commit=on\n"), "{text}");
        assert!(!text.lines().any(|l| l.starts_with("Server:") && l.contains("fsync=")), "{text}");
    }

    #[test]
    fn paced_summary_shows_service_time_and_lag() {
        insta::assert_snapshot!(render(&report("--rate 10000")));
    }

    /// Issue 17, item 6: a dry run sends nothing, so its rows were
    /// generated, not written; the cpu model's series are hosts, not devices.
    #[test]
    fn a_dry_run_says_generated_and_the_cpu_model_says_hosts() {
        let mut dry = report("--model cpu");
        dry.setup.dry_run = true;
        let text = render(&dry);
        assert!(text.contains("Generated     10000 measurements in "), "{text}");
        assert!(text.contains("Requested:  12,000 rows: 10,000 generated, "), "{text}");
        assert!(text.contains("model cpu (10 hosts/worker, "), "{text}");
        assert!(!text.contains("Wrote") && !text.contains("devices"), "{text}");
        let text = render(&report(""));
        assert!(text.contains("Wrote     10000 measurements in ") && text.contains("(10 devices/worker, "), "{text}");
        assert!(text.contains("Requested:  12,000 rows: 10,000 written, "), "{text}");
    }

    /// Issue 32: tsdbperf's four header lines, in its words and alignment,
    /// just before its `Wrote` lines; `--with-jsonb` said in the Setup line.
    #[test]
    fn tsdbperf_s_header_lines_and_jsonb() {
        let text = render(&report("--devices 5 --metrics 3 --with-jsonb"));
        let header = "Number of workers:       2\n\
                      Devices per worker:      5\n\
                      Metrics per device:      3\n\
                      Measurements per device: 1200\n\
                      Wrote ";
        assert!(text.contains(header), "{text}");
        assert!(text.contains("(5 devices/worker, 3 metrics/row as jsonb)"), "{text}");
        // A run bounded by time has no count per device: the line says so.
        let mut by_time = report("--duration 10s");
        by_time.setup.rows_limit = None;
        let text = render(&by_time);
        assert!(text.contains("Measurements per device: until --duration ends\n"), "{text}");
        assert!(!render(&report("--model cpu")).contains("Devices per worker:"), "tsdbperf's model alone");
    }

    /// Issue 32: cr8's insert commands print this report too: a fast run
    /// said "over 0.00 s"; times under a second are in ms.
    #[test]
    fn a_fast_run_is_timed_in_ms() {
        let mut r = report("");
        r.throughput.duration_s = 0.0042;
        r.warmup =
            Some(WarmupReport { rows: 10, batches: 1, errors: 0, duration_s: 0.0009, end_s: None, latency_ms: None });
        let text = render(&r);
        assert!(text.contains("batches/s over 4.20 ms\n") && text.contains("over 900 µs, excluded"), "{text}");
        // tsdbperf's own line keeps its form ("in 0.00 seconds"): scripts read it.
        assert!(!text.contains("over 0.00 s"), "{text}");
    }

    /// Issue 17, item 6: an UNLOGGED table (`--unlogged`) loses its rows in
    /// a crash as `fsync=off` does; its figures are flagged the same way.
    #[test]
    fn an_unlogged_table_is_flagged_not_durable() {
        let r = report("--unlogged");
        assert_eq!(r.setup.settings.not_durable, ["unlogged table"]);
        assert!(render(&r).contains("WARNING:  not durable: unlogged table —"), "{}", render(&r));
        assert!(report("").setup.settings.not_durable.is_empty(), "a logged table on a durable server");
    }

    /// Issue 13, item 8: the settings that make a server (or a Citus
    /// worker) not durable are flagged at the top of the summary, in the
    /// JSON, and in the HTML page; the workers' settings are listed.
    #[test]
    fn not_durable_settings_are_flagged() {
        let mut r = report("");
        let off = |name: &str| (name.to_string(), "off".to_string());
        let setup = Setup {
            server_settings: vec![off("fsync"), ("shared_buffers".into(), "512MB".into())],
            worker_settings: vec![
                ("w1:5432".into(), Ok(vec![off("synchronous_commit"), ("fsync".into(), "on".into())])),
                ("w2:5432".into(), Err("connection refused".into())),
            ],
            ..Setup::default()
        };
        r.setup.settings = crate::report::Settings::of(&setup);
        assert_eq!(r.setup.settings.not_durable, ["fsync=off", "w1:5432 synchronous_commit=off"]);
        let text = render(&r);
        let warning = "WARNING:  not durable: fsync=off, w1:5432 synchronous_commit=off — figures are not those of a \
                       durable server\n";
        assert!(text.lines().nth(2).is_some_and(|l| warning.starts_with(l)), "{text}");
        assert!(text.contains("Worker:     w1:5432 fsync=on synchronous_commit=off\n"), "{text}");
        assert!(text.contains("Worker:     w2:5432 error=connection refused\n"), "{text}");
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["setup"]["not_durable"][1], "w1:5432 synchronous_commit=off");
        assert_eq!(json["setup"]["worker_settings"]["w1:5432"]["synchronous_commit"], "off");
        let html = crate::report::html::render(&r).unwrap();
        assert!(html.contains(
            "Not durable</b>: fsync=off, w1:5432 synchronous_commit=off. The figures are not comparable with a durable"
        ));
        assert!(html.contains("<th>worker w1:5432</th>"), "{html}");
        assert!(html.contains(r#"<td><code>fsync</code></td><td class="fail">off</td><td>on</td>"#), "{html}");
        // A durable server: no warning.
        assert!(!render(&report("")).contains("not durable"));
    }

    #[test]
    fn a_run_that_stopped_on_its_own_fails_and_says_why_in_every_form() {
        let why = "worker 1 panicked: boom";
        for (interrupted, failed) in [(false, false), (true, false), (false, true)] {
            let v = Verdict::new(interrupted, failed).stopped(Some(why.into()));
            assert_eq!((v.status, v.exit_code), (Status::Failed, 1), "{interrupted} {failed}");
        }
        let r = report_stopped("", Some(why.into()));
        let text = render(&r);
        assert!(text.starts_with("STOPPED: worker 1 panicked: boom\n"), "{text}");
        let run = crate::report::meta::RunStart::now("dbload ingest".into()).end();
        let json = serde_json::to_value(crate::report::meta::Stamped { report: &r, run: &run }).unwrap();
        assert_eq!((&json["status"], &json["exit_code"], &json["stopped"]), (&"failed".into(), &1.into(), &why.into()));
        let schema = serde_json::from_str(include_str!("../../schema/report.schema.json")).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let errors: Vec<String> = validator.iter_errors(&json).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?}");
        let html = crate::report::html::render(&r).unwrap();
        assert!(html.contains("Stopped: worker 1 panicked: boom."), "no banner in the HTML");
        assert_eq!(serde_json::to_value(report("")).unwrap()["stopped"], serde_json::Value::Null);
    }
}
