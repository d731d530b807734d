//! The report of the commands that move rows which already exist: `export`
//! (a table or a query into files) and `insert-from-sql` (a query's rows
//! into a table). Rows and bytes per second, latency per chunk or batch,
//! errors, files, built from the same pieces as ingest's report. Its JSON
//! form is `schema/transfer-report.schema.json`.

use std::fmt::Write as _;

use serde::Serialize;

use super::server_cost::{table_lines, TableCost};
use super::text::{
    accounting_line, client_and_verdict, durability_line, error_lines, interrupted_banner, runtime_block, target_line,
};
use super::{
    error_entries, per_sec, timeline, Accounting, ClientReport, ErrorEntry, Header, Server, Settings, Throughput,
    TimelineEntry, Verdict,
};
use crate::config::transfer::ExportSource;
use crate::config::{ExportConfig, FromSqlConfig};
use crate::dialect::{ExportFormat, Method};
use crate::format::{group, megabytes};
use crate::outcome::{ExportOutcome, ExportedFile, Figures, FromSqlOutcome, ServerCost};
use crate::stats::summary::{spectrum, SpectrumPoint};
use crate::stats::LatencySummary;

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TransferReport {
    /// `command`: `export` or `insert-from-sql`.
    #[serde(flatten)]
    pub header: Header,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Rows exported to the files, or acknowledged by the target; chunks
    /// read (export) or batches written (insert-from-sql).
    #[serde(flatten)]
    pub throughput: Throughput,
    /// Bytes of rows written to the files before compression (export), or
    /// of the binary COPY batches the target took (insert-from-sql; into
    /// CrateDB: of the JSON rows read from the source).
    pub bytes: u64,
    /// `bytes` per second, in MB (10^6 bytes).
    pub mb_per_sec: f64,
    /// Rows requested = written + failed + unattempted: insert-from-sql's
    /// rows read from the source; export has no amount asked of it (null).
    pub accounting: Accounting,
    pub error_classes: Vec<ErrorEntry>,
    pub latency_ms: Option<LatencySummary>,
    /// `latency_ms` at every tenth of a nine to 99.99 %, then the max.
    pub latency_spectrum: Option<Vec<SpectrumPoint>>,
    /// insert-from-sql: how the source query failed mid-stream (the rows
    /// after that point were not copied).
    pub source_error: Option<String>,
    /// export: every file written, with its rows and whether it is complete.
    pub files: Vec<ExportedFile>,
    #[serde(flatten)]
    pub client: ClientReport,
    pub timeline: Vec<TimelineEntry>,
    pub setup: TransferSetup,
    /// What the server paid: the size of the table exported or written
    /// (null for a query's export), and the WAL insert-from-sql's target wrote.
    pub server_cost: Option<TableCost>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TransferSetup {
    /// Where the rows were read.
    pub source: Server,
    /// insert-from-sql: where they were written.
    pub target: Option<Server>,
    /// The table exported, or written by insert-from-sql.
    pub table: Option<String>,
    pub query: Option<String>,
    /// insert-from-sql: the table's columns filled, in the query's order.
    pub columns: Vec<String>,
    pub method: Option<Method>,
    pub workers: u32,
    /// Rows per batch (insert-from-sql), or at most per chunk (export).
    pub batch_size: usize,
    pub out_dir: Option<String>,
    pub format: Option<ExportFormat>,
    pub gzip: bool,
    /// export of a table: its rows as the planner estimates them
    /// (`pg_class.reltuples`), the progress bar's total.
    pub rows_estimate: Option<u64>,
    /// The settings of the server written to (read from, for export).
    #[serde(flatten)]
    pub settings: Settings,
}

/// What both commands measured, in the same words.
struct Moved<'a> {
    command: &'static str,
    figures: &'a Figures,
    bytes: u64,
    /// A failure besides failed operations (an incomplete file, a source error).
    failed: bool,
    /// Rows asked for (read from the source), where known.
    requested: Option<u64>,
    server_cost: &'a ServerCost,
}

impl TransferReport {
    fn new(moved: Moved, source_error: Option<String>, files: Vec<ExportedFile>, setup: TransferSetup) -> Self {
        let f = moved.figures;
        let rec = f.recorder();
        let throughput = Throughput::of(rec, f.wall);
        TransferReport {
            header: Header::new(moved.command),
            verdict: Verdict::new(f.interrupted, throughput.errors > 0 || moved.failed).stopped(f.stopped.clone()),
            bytes: moved.bytes,
            mb_per_sec: per_sec(moved.bytes, throughput.duration_s) / 1e6,
            accounting: Accounting::of(
                "rows",
                moved.requested,
                rec.measured.rows + rec.warmup.rows,
                throughput.failed_rows,
                0,
            ),
            throughput,
            error_classes: error_entries(&rec.errors),
            latency_ms: LatencySummary::of(&rec.measured.latency),
            latency_spectrum: spectrum(&rec.measured.latency),
            source_error,
            files,
            client: ClientReport::from(&f.cost),
            timeline: timeline(rec),
            setup,
            server_cost: TableCost::of(moved.server_cost, rec.measured.rows + rec.warmup.rows),
        }
    }

    pub fn export(cfg: &ExportConfig, out: &ExportOutcome, url: Option<String>, throwaway: bool) -> TransferReport {
        let (table, query) = match &cfg.source {
            ExportSource::Table(t) => (Some(t.to_string()), None),
            ExportSource::Query(q) => (None, Some(q.clone())),
        };
        let moved = Moved {
            command: "export",
            figures: &out.figures,
            bytes: out.files.iter().map(|f| f.bytes).sum(),
            failed: out.files.iter().any(|f| !f.complete),
            requested: None,
            server_cost: &out.server_cost,
        };
        let setup = TransferSetup {
            source: Server::of(&out.setup, url, throwaway),
            target: None,
            table,
            query,
            columns: Vec::new(),
            method: None,
            workers: out.workers,
            batch_size: cfg.chunk_rows,
            out_dir: Some(cfg.out_dir.display().to_string()),
            format: Some(cfg.format),
            gzip: cfg.gzip,
            rows_estimate: out.rows_estimate,
            settings: Settings::of(&out.setup),
        };
        TransferReport::new(moved, None, out.files.clone(), setup)
    }

    /// `source`, `target`: each server's redacted URL and whether dbload started it.
    pub fn from_sql(
        cfg: &FromSqlConfig,
        out: &FromSqlOutcome,
        source: (Option<String>, bool),
        target: (Option<String>, bool),
    ) -> TransferReport {
        let moved = Moved {
            command: "insert-from-sql",
            figures: &out.figures,
            bytes: out.bytes,
            failed: out.source_error.is_some(),
            requested: Some(out.rows_read),
            server_cost: &out.server_cost,
        };
        let setup = TransferSetup {
            source: Server::of(&out.source, source.0, source.1),
            target: Some(Server::of(&out.setup, target.0, target.1)),
            table: Some(cfg.table.to_string()),
            query: Some(cfg.query.clone()),
            columns: out.columns.clone(),
            method: Some(out.method),
            workers: cfg.workers,
            batch_size: cfg.batch_size,
            out_dir: None,
            format: None,
            gzip: false,
            rows_estimate: None,
            settings: Settings::of(&out.setup),
        };
        TransferReport::new(moved, out.source_error.clone(), Vec::new(), setup)
    }
}

pub fn render(r: &TransferReport) -> String {
    let mut out = String::new();
    let (s, t) = (&r.setup, &r.throughput);
    let export = r.header.command == "export";
    interrupted_banner(&mut out, &r.verdict);
    let what = match (&s.table, &s.query) {
        (Some(table), _) if export => table.clone(),
        (_, Some(q)) if export => format!("query {q}"),
        (Some(table), _) => table.clone(),
        _ => "-".into(),
    };
    let _ = writeln!(out, "dbload {} {} of {what}", r.header.dbload_version, r.header.command);
    match &s.target {
        Some(target) => {
            let _ = writeln!(out, "Source:     {}", target_line(&s.source));
            let _ = writeln!(out, "Query:      {}", s.query.as_deref().unwrap_or("-"));
            let _ = writeln!(out, "Target:     {}", target_line(target));
            durability_line(&mut out, &s.settings);
            let _ = writeln!(
                out,
                "Setup:      method {}, batch {}, {} worker{}, columns {}",
                s.method.map_or("-".into(), |m| m.to_string()),
                group(s.batch_size as u64),
                s.workers,
                if s.workers == 1 { "" } else { "s" },
                s.columns.join(", ")
            );
        }
        None => {
            let _ = writeln!(out, "Source:     {}", target_line(&s.source));
            durability_line(&mut out, &s.settings);
            let format = match s.format {
                Some(ExportFormat::Csv) => "CSV",
                _ => "JSON lines",
            };
            let estimate = s.rows_estimate.map_or(String::new(), |n| format!(", ~{} rows estimated", group(n)));
            let _ = writeln!(
                out,
                "Setup:      {format}{}, {} worker{}, chunks of up to {} rows{estimate}",
                if s.gzip { " gzip" } else { "" },
                s.workers,
                if s.workers == 1 { "" } else { "s" },
                group(s.batch_size as u64),
            );
        }
    }
    for f in &r.files {
        let partial = match (&f.error, f.complete) {
            (Some(e), _) => format!("  PARTIAL: {e}"),
            (None, false) => "  PARTIAL".into(),
            (None, true) => String::new(),
        };
        let size = if s.gzip { format!(", {} on disk", megabytes(f.file_bytes)) } else { String::new() };
        let _ = writeln!(
            out,
            "File:       {}: {} rows, {}{size}{partial}",
            f.path.display(),
            group(f.rows),
            megabytes(f.bytes)
        );
    }
    out.push('\n');
    let verb = if export { "Exported" } else { "Copied" };
    let _ = writeln!(
        out,
        "{verb} {} rows ({}) in {:.2} s: {} rows/s, {:.1} MB/s",
        group(t.rows),
        megabytes(r.bytes),
        t.duration_s,
        group(t.rows_per_sec as u64),
        r.mb_per_sec
    );
    // A failed chunk of an export leaves rows unread, not unwritten: its
    // failures are counted in chunks alone.
    let (unit, lost) = if export {
        ("Chunks:    ", String::new())
    } else {
        ("Batches:   ", format!(" ({} rows not written)", group(t.failed_rows)))
    };
    let _ =
        writeln!(out, "{unit} {} ok, {} failed{lost}, {:.1}/s", group(t.batches), group(t.errors), t.batches_per_sec);
    accounting_line(&mut out, &r.accounting);
    error_lines(&mut out, &r.error_classes);
    if let Some(e) = &r.source_error {
        let _ = writeln!(out, "Source:     FAILED mid-stream, the rows after it were not copied: {e}");
    }
    if let Some(l) = &r.latency_ms {
        let title = if export { "Runtime (in ms) per chunk:" } else { "Runtime (in ms) per batch:" };
        runtime_block(&mut out, title, l);
    }
    if let Some(c) = &r.server_cost {
        table_lines(&mut out, c);
    }
    client_and_verdict(&mut out, &r.client, t.wall_s, &r.verdict);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;

    const SOURCE: &str = "postgres://bench:secret@db:5432/bench";

    #[test]
    fn export_text() {
        let argv = ["dbload", "export", "--url", SOURCE, "--table", "measurement", "--out", "/nonexistent/export"];
        let crate::cli::Command::Export(a) = fixtures::command(&[&argv[..], &["--workers", "2"]].concat()) else {
            unreachable!("export")
        };
        let cfg = ExportConfig::resolve(a, &|_| None).unwrap();
        let file = |n: usize| ExportedFile {
            path: format!("/nonexistent/export/measurement_{n}.json").into(),
            rows: 5_000,
            bytes: 1_250_000,
            file_bytes: 1_250_000,
            complete: true,
            error: None,
        };
        let out = ExportOutcome {
            setup: fixtures::postgres(),
            figures: fixtures::figures(vec![fixtures::recorder(1000)]),
            files: vec![file(0), file(1)],
            workers: 2,
            rows_estimate: Some(10_000),
            server_cost: Default::default(),
        };
        insta::assert_snapshot!(render(&TransferReport::export(&cfg, &out, Some(fixtures::URL.into()), false)));
    }

    #[test]
    fn insert_from_sql_text() {
        let argv = ["dbload", "insert-from-sql", "--src-url", SOURCE, "--query", "select * from events"];
        let target = ["--url", "postgres://app:secret@dst:5432/app", "--table", "events", "--batch-size", "1000"];
        let crate::cli::Command::InsertFromSql(a) = fixtures::command(&[&argv[..], &target].concat()) else {
            unreachable!("insert-from-sql")
        };
        let cfg = FromSqlConfig::resolve(a, &|_| None).unwrap();
        let out = FromSqlOutcome {
            source: fixtures::postgres(),
            setup: fixtures::postgres(),
            method: Method::Copy,
            columns: vec!["time".into(), "device_id".into(), "reading".into()],
            figures: fixtures::figures(vec![fixtures::recorder(1000)]),
            bytes: 2_500_000,
            source_error: None,
            rows_read: 11_000,
            server_cost: Default::default(),
        };
        let ends = (Some(fixtures::URL.into()), false);
        let r = TransferReport::from_sql(&cfg, &out, ends, (Some("postgres://app:***@dst:5432/app".into()), false));
        insta::assert_snapshot!(render(&r));
    }
}
