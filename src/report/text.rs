//! The lines every text report shares: the target and its durability,
//! cr8's runtime block (from the full HDR histogram, not a sample), the
//! accounting, errors, outages, stages, pacing and what the client itself
//! cost. Each command's report renders itself (`ingest::render`,
//! `query::render_timeit`, ...) from these.

use std::fmt::Write as _;

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
    let engine =
        server.engine.map_or_else(String::new, |e| format!(", {}", e.describe(engine_version, server_version)));
    // Behind a proxy or NAT, the address the server answered on is not the
    // one dialled. CrateDB does not say which node answered: its nodes'.
    let seen = match (server.engine, server.server_address.as_deref()) {
        (_, None) => String::new(),
        (Some(Engine::Cratedb), Some(a)) if a.contains(", ") => format!(", nodes at {a}"),
        (Some(Engine::Cratedb), Some(a)) => format!(", node at {a}"),
        (_, Some(a)) => format!(", answering on {a}"),
    };
    match (&*server.target_kind, server.target.as_deref()) {
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
pub(crate) fn accounting_line_as(out: &mut String, a: &Accounting, done: &str) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The target line says where the server answered; CrateDB, which does
    /// not say which node answered, its nodes.
    #[test]
    fn the_target_line_names_the_address_the_server_sees() {
        let server = |engine, address: &str| Server {
            target_kind: "server".into(),
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
}
