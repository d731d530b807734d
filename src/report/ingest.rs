//! The ingest report: what a run that wrote rows into a table leaves
//! behind (`ingest`, `insert-fake-data`, `insert-json`). Built once from
//! the resolved configuration and the run's outcome; its JSON form is the
//! contract `schema/report.schema.json`, its text form `text::render`.
//! The parts it shares with the other commands' reports (header, verdict,
//! throughput, latencies, pacing, server) are in `report/mod.rs`.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{
    end_s, error_entries, paced_rate, per_sec, server_cost, span_s, stage_entries, timeline, Accounting, ClientReport,
    Connections, ErrorEntry, Header, Latencies, Paced, Pacing, Server, Settings, StageEntry, Status, Throughput,
    TimelineEntry, Verdict,
};
use crate::config::{IngestConfig, TableAction};
use crate::dialect::{Method, TableOptions};
use crate::error::exit;
use crate::op::{Stages, Warmup};
use crate::outcome::{IngestOutcome, Verify};
use crate::stats::LatencySummary;

/// The report of the commands that write generated or read rows into a
/// table: `ingest` and its aliases, `insert-fake-data`, `insert-json`.
#[derive(Debug, Clone, Serialize)]
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
}

#[derive(Debug, Clone, Serialize)]
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

#[derive(Debug, Clone, Serialize)]
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
    pub model: &'static str,
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
                server: if cfg.dry_run() { Server { target_kind: "none", ..server } } else { server },
                settings: Settings::of(setup).with_unlogged_table(cfg.table_options.unlogged),
                tls_unverified: cfg.target.tls_unverified(),
                table_options: cfg.table_options.clone(),
                layout: setup.layout.iter().cloned().collect(),
                model: cfg.model.name(),
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
        }
    }
}
