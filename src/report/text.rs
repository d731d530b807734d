//! The text summary on stdout: the setup, tsdbperf's three lines, cr8's
//! runtime block (from the full HDR histogram, not a sample), throughput,
//! errors and what the client itself cost.

use std::fmt::Write as _;

use super::ingest::{IngestReport, SetupReport};
use super::{Accounting, ClientReport, ErrorEntry, Server, Settings, Status, Verdict};
use crate::dialect::Engine;
use crate::format::group;
use crate::op::Ramps;
use crate::stats::LatencySummary;

/// cr8's runtime block: mean with its 95% margin, min/max, percentiles.
pub(crate) fn runtime_block(out: &mut String, title: &str, l: &LatencySummary) {
    let _ = writeln!(out, "{title}");
    let _ = writeln!(out, "    mean:    {:.3} ± {:.3} (95% CI)", l.mean, l.mean_ci95);
    let _ = writeln!(out, "    min/max: {:.3} → {:.3}", l.min, l.max);
    let _ = writeln!(out, "Percentile:");
    let _ = writeln!(out, "    50:   {:.3} ± {:.3} (stdev)", l.p50, l.stdev);
    for (p, v) in [("90", l.p90), ("95", l.p95), ("99", l.p99), ("99.9", l.p99_9)] {
        let _ = writeln!(out, "    {:<5} {v:.3}", format!("{p}:"));
    }
}

/// Where the load went, for the header: the URL, whether dbload started
/// it, and the engine with its version (`TimescaleDB 2.28.0 on PostgreSQL 15.18`).
pub(crate) fn target_line(server: &Server) -> String {
    let (engine_version, server_version) = (server.engine_version.as_deref(), server.server_version.as_deref());
    let with_version = |name: &str, v: Option<&str>| match v {
        Some(v) => format!("{name} {v}"),
        None => name.to_string(),
    };
    let engine = match server.engine {
        None => String::new(),
        Some(Engine::Cratedb) => format!(", {}", with_version("CrateDB", engine_version)),
        Some(Engine::Postgres) => format!(", {}", with_version("PostgreSQL", server_version)),
        Some(e) => {
            let name = if e == Engine::Citus { "Citus" } else { "TimescaleDB" };
            format!(", {} on {}", with_version(name, engine_version), with_version("PostgreSQL", server_version))
        }
    };
    // Behind a proxy or NAT, the address the server answered on is not the
    // one dialled. CrateDB does not say which node answered: its nodes'.
    let seen = match (server.engine, server.server_address.as_deref()) {
        (_, None) => String::new(),
        (Some(Engine::Cratedb), Some(a)) if a.contains(", ") => format!(", nodes at {a}"),
        (Some(Engine::Cratedb), Some(a)) => format!(", node at {a}"),
        (_, Some(a)) => format!(", answering on {a}"),
    };
    match (server.target_kind, server.target.as_deref()) {
        ("none", _) => "nowhere (dry run: generated and encoded, nothing sent)".to_string(),
        (kind, Some(url)) => format!("{url} ({kind}{engine}{seen})"),
        (_, None) => "-".into(),
    }
}

/// The header's `Target:` line, and a warning when TLS was not verified.
pub(crate) fn target_lines(out: &mut String, server: &Server, tls_unverified: bool) {
    let _ = writeln!(out, "Target:   {}", target_line(server));
    if tls_unverified {
        out.push_str("TLS:      the server's certificate was NOT verified (--insecure)\n");
    }
}

/// A warning under the target when its settings let it lose acknowledged
/// writes, so that nobody quotes such a figure as a durable server's.
pub(crate) fn durability_line(out: &mut String, settings: &Settings) {
    if !settings.not_durable.is_empty() {
        let _ = writeln!(
            out,
            "WARNING:  not durable: {} — figures are not those of a durable server",
            settings.not_durable.join(", ")
        );
    }
}

/// CrateDB's own time per request, beside the client's round trip.
pub(crate) fn server_duration_line(out: &mut String, d: Option<&LatencySummary>) {
    if let Some(d) = d {
        let _ = writeln!(
            out,
            "Server-side duration (ms, as CrateDB reports it): mean {:.3}, p50 {:.3}, p99 {:.3}, max {:.3}",
            d.mean, d.p50, d.p99, d.max
        );
    }
}

/// Opens the report of a run that Ctrl-C, or the run itself, stopped: its figures are partial.
pub(crate) fn interrupted_banner(out: &mut String, v: &Verdict) {
    if let Some(why) = &v.stopped {
        let _ = writeln!(out, "STOPPED: {why}\nPartial report of what was done until then\n");
    } else if v.status == Status::Interrupted {
        out.push_str("INTERRUPTED (Ctrl-C): partial report of what was done until then\n\n");
    }
}

/// Where the amount asked for went (`requested = ok + failed + rejected +
/// in doubt + unattempted`), when one was asked for.
pub(crate) fn accounting_line(out: &mut String, a: &Accounting) {
    accounting_line_as(out, a, if a.unit == "rows" { "written" } else { "ok" });
}

/// [`accounting_line`], the amount done called `done` (a dry run's rows
/// were `generated`: nothing was written).
fn accounting_line_as(out: &mut String, a: &Accounting, done: &str) {
    let (Some(requested), Some(unattempted)) = (a.requested, a.unattempted) else { return };
    let rejected = if a.rejected > 0 { format!(", {} rejected", group(a.rejected)) } else { String::new() };
    let in_doubt = if a.in_doubt > 0 { format!(", {} in doubt", group(a.in_doubt)) } else { String::new() };
    let _ = writeln!(
        out,
        "Requested:  {} {}: {} {done}, {} failed{rejected}{in_doubt}, {} not attempted",
        group(requested),
        a.unit,
        group(a.ok),
        group(a.failed),
        group(unattempted)
    );
}

/// A line per class of failed operations: how many, and an example.
pub(crate) fn error_lines(out: &mut String, errors: &[ErrorEntry]) {
    for e in errors {
        let _ = writeln!(out, "Error:      {} × {}: {}", group(e.count), e.class, e.example);
    }
}

/// Each outage (`--reconnect`), and what became of the batches in flight
/// when connections were lost; nothing when no connection was lost.
fn connection_lines(out: &mut String, c: &super::Connections) {
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

/// A line per outage (`--reconnect`): when, how long, how many workers, and why.
pub(crate) fn outage_lines(out: &mut String, outages: &[super::OutageEntry]) {
    for o in outages {
        let back = if o.reconnected { "reconnected" } else { "NOT reconnected before the run ended" };
        let workers = if o.workers == 1 { "1 worker".to_string() } else { format!("{} workers", o.workers) };
        let _ = writeln!(
            out,
            "Outage:     {:.2} s → {:.2} s ({:.2} s), {workers}, {back}; began with {}",
            o.start_s, o.end_s, o.duration_s, o.error
        );
    }
}

/// With stages (`--stages`, `--rate-stages`): a row per stage, its target
/// beside what the operations that started in it reached.
pub(crate) fn stage_lines(out: &mut String, stages: &[super::StageEntry], unit: &str) {
    if stages.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Stages:     {:>5}  {:>15}  {:>17}  {:>9}  {:>11}  {:>9}  {:>9}  {:>6}",
        "stage",
        "time (s)",
        "target",
        "ok",
        format!("{unit}/s"),
        "p50 ms",
        "p99 ms",
        "errors"
    );
    for e in stages {
        let ms = |f: fn(&LatencySummary) -> f64| e.latency_ms.as_ref().map_or("-".into(), |l| format!("{:.3}", f(l)));
        let per_sec = if e.per_sec >= 100.0 { group(e.per_sec.round() as u64) } else { format!("{:.1}", e.per_sec) };
        let number = |n: f64| if n >= 1000.0 { group(n.round() as u64) } else { n.to_string() };
        let target = match e.ramps {
            Ramps::Vus => format!("{} → {} VUs", e.from, e.to),
            Ramps::Rate => format!("{} → {}/s", number(e.from), number(e.to)),
        };
        let _ = writeln!(
            out,
            "            {:>5}  {:>15}  {:>17}  {:>9}  {:>11}  {:>9}  {:>9}  {:>6}",
            e.stage,
            format!("{:.1} → {:.1}", e.start_s, e.end_s),
            target,
            group(e.ok),
            per_sec,
            ms(|l| l.p50),
            ms(|l| l.p99),
            group(e.errors)
        );
    }
}

/// The setup's pacing in words: the stages as given, an open loop at
/// `rate` `unit`/s, or a closed loop.
pub(crate) fn pacing_words(stages: Option<&str>, rate: Option<f64>, unit: &str) -> String {
    match (stages, rate) {
        (Some(s), _) => s.to_string(),
        (None, Some(rate)) => format!("open loop at {} {unit}/s", group(rate as u64)),
        (None, None) => "closed loop".into(),
    }
}

/// An open loop that fell behind its `--rate` says so.
pub(crate) fn rate_warning_line(out: &mut String, p: &super::Pacing) {
    if let Some(w) = &p.rate_warning {
        let _ = writeln!(out, "WARNING:    {w}");
    }
}

/// What the client cost, and the `--fail-if` conditions that were checked.
pub(crate) fn client_and_verdict(out: &mut String, c: &ClientReport, wall_s: f64, v: &Verdict) {
    let (total, user, sys, rss_mib) = (c.client_cpu_s, c.client_cpu_user_s, c.client_cpu_sys_s, c.client_peak_rss_mib);
    let cores = if wall_s > 0.0 { total / wall_s } else { 0.0 };
    let _ = writeln!(
        out,
        "Client:     {total:.2} s CPU (user {user:.2}, sys {sys:.2}) = {cores:.2} cores; peak RSS {rss_mib:.1} MiB"
    );
    fail_if_lines(out, v);
}

/// The `--fail-if` conditions that were checked, and whether each held.
pub(crate) fn fail_if_lines(out: &mut String, v: &Verdict) {
    for f in &v.fail_if {
        let verdict = if f.held { "HELD: the run fails" } else { "did not hold" };
        let _ = writeln!(out, "Fail-if:    {}: {verdict}", f.condition);
    }
}

/// The setup line of the time-series models, with tsdbperf's terms.
fn tsdbperf_setup(out: &mut String, s: &SetupReport) {
    let _ = writeln!(
        out,
        "Setup:    model {} ({} {}/worker, {} metrics/row), method {}{}, batch {}, {} worker{}, {}",
        s.model,
        s.devices_per_worker,
        // TSBS's cpu rows are per host (its tags' hostname).
        if s.model == "cpu" { "hosts" } else { "devices" },
        s.metrics_per_row,
        s.method,
        if s.upsert { " + upsert" } else { "" },
        group(s.batch_size as u64),
        s.workers,
        if s.workers == 1 { "" } else { "s" },
        pacing_words(s.stages.as_deref(), s.rate_rows_per_sec, "rows")
    );
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
    let time_series = matches!(s.model, "measurement" | "cpu");
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
        "Throughput: {} rows/s, {metrics}{:.1} batches/s over {:.2} s",
        group(t.rows_per_sec as u64),
        t.batches_per_sec,
        t.duration_s
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
                "Warm-up:    {} rows in {} batches over {:.2} s, excluded from the figures",
                group(w.rows),
                group(w.batches),
                w.duration_s
            );
        }
        None => out.push_str("Warm-up:    none\n"),
    }
    error_lines(&mut out, &r.error_classes);
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
        super::server_cost::table_lines(&mut out, c);
    }
    rate_warning_line(&mut out, &r.pacing);
    client_and_verdict(&mut out, &r.client, t.wall_s, &r.verdict);
    let pairs = |m: &std::collections::BTreeMap<String, String>| {
        m.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
    };
    if !s.settings.server_settings.is_empty() {
        let _ = writeln!(out, "Server:     {}", pairs(&s.settings.server_settings));
    }
    for (node, settings) in &s.settings.worker_settings {
        let _ = writeln!(out, "Worker:     {node} {}", pairs(settings));
    }
    for stmt in &s.ddl {
        let _ = writeln!(out, "DDL:        {}", stmt.replace('\n', "\n            "));
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    use crate::cli::{Cli, Command};
    use crate::outcome::Setup;
    use crate::report::fixtures;
    use clap::Parser;

    /// The target line says where the server answered; CrateDB, which does
    /// not say which node answered, its nodes.
    #[test]
    fn the_target_line_names_the_address_the_server_sees() {
        let server = |engine, address: &str| Server {
            target_kind: "server",
            target: Some("cratedb://db:4200".into()),
            engine: Some(engine),
            engine_version: Some("6.4.0".into()),
            server_version: None,
            server_address: Some(address.into()),
        };
        let line = |engine, address| target_line(&server(engine, address));
        assert_eq!(
            line(Engine::Cratedb, "10.0.0.5:4200"),
            "cratedb://db:4200 (server, CrateDB 6.4.0, node at 10.0.0.5:4200)"
        );
        assert!(
            line(Engine::Cratedb, "10.0.0.5:4200, 10.0.0.6:4200").ends_with(", nodes at 10.0.0.5:4200, 10.0.0.6:4200)")
        );
        assert!(line(Engine::Postgres, "10.0.0.5:5432").ends_with(", answering on 10.0.0.5:5432)"));
    }

    /// A report from fixed figures: 10 batches of 1,000 rows, 10..100 ms each, one failed,
    /// 1,000 rows of the 12,000 asked for never tried.
    pub(crate) fn report(extra: &str) -> crate::report::ingest::IngestReport {
        report_stopped(extra, None)
    }

    /// [`report`] of a run that stopped on its own, as `stopped` says.
    fn report_stopped(extra: &str, stopped: Option<String>) -> crate::report::ingest::IngestReport {
        let args = format!("dbload ingest --url postgres://bench:secret@db:5432/bench --rows 12000 --workers 2 --batch-size 1000 --start 2024-01-01T00:00:00Z {extra}");
        let Command::Ingest(a) = Cli::parse_from(args.split_whitespace()).command else { unreachable!("ingest") };
        let cfg = crate::config::IngestConfig::resolve(a, &|_| None).unwrap();
        let outcome = fixtures::ingested(stopped);
        let url = match &cfg.target {
            crate::config::TargetChoice::Remote(t, _) => Some(t.redacted().to_string()),
            _ => None,
        };
        crate::report::ingest::IngestReport::ingest(&cfg, &outcome, url, false)
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
