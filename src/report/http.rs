//! The report of `dbload http`: k6's end-of-test summary (the layout the
//! seed's users already read: `http_reqs`, `http_req_duration` and its
//! phases, data sent and received, checks with ✓/✗), from HDR histograms
//! rather than k6's samples, plus what k6 leaves out: late and dropped
//! requests of an open loop, connections opened, and the client's own cost.
//! Its JSON form is `schema/http-report.schema.json`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::text::{
    accounting_line, client_and_verdict, error_lines, interrupted_banner, pacing_words, rate_warning_line, stage_lines,
};
use super::{
    end_s, error_entries, paced_rate, span_s, stage_entries, timeline, Accounting, ClientReport, ErrorEntry, Header,
    Paced, Pacing, StageEntry, TimelineEntry, Verdict,
};
use crate::config::http::{BodySource, HttpConfig};
use crate::format::{group, k6_bytes, k6_time};
use crate::op::{Stages, Warmup};
use crate::outcome::HttpOutcome;
use crate::stats::summary::{spectrum, SpectrumPoint};
use crate::stats::LatencySummary;

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct HttpReport {
    #[serde(flatten)]
    pub header: Header,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Requests sent in the measured window, failed ones included (k6's `http_reqs`).
    pub http_reqs: u64,
    pub http_reqs_per_sec: f64,
    /// Requests answered with success and passing every check, measured window.
    pub requests_ok: u64,
    /// Failed requests (errors, non-2xx without a status check, failed checks), warm-up included.
    pub errors: u64,
    /// Requests requested (`--iterations`, warm-up included) = ok + failed + unattempted.
    pub accounting: Accounting,
    /// Share of the measured requests that failed (k6's `http_req_failed`).
    pub http_req_failed_rate: f64,
    /// The measured window: first measured request's start to last one's end.
    pub duration_s: f64,
    /// From the VUs' common start to the end of the last request.
    pub wall_s: f64,
    pub error_classes: Vec<ErrorEntry>,
    pub checks: Vec<CheckEntry>,
    /// Responses per status code (measured window).
    pub statuses: BTreeMap<String, u64>,
    /// k6's `http_req_duration`: sending + waiting + receiving, connecting excluded.
    pub http_req_duration_ms: Option<LatencySummary>,
    /// How long a request waited for its VU: its start minus its intended start.
    pub http_req_blocked_ms: Option<LatencySummary>,
    pub http_req_connecting_ms: Option<LatencySummary>,
    pub http_req_tls_handshaking_ms: Option<LatencySummary>,
    pub http_req_sending_ms: Option<LatencySummary>,
    pub http_req_waiting_ms: Option<LatencySummary>,
    pub http_req_receiving_ms: Option<LatencySummary>,
    /// From the intended start (with --rate) or the start to the end of the
    /// response, connecting included: what a caller of the API waited. The
    /// same figure as every command's `latency_ms` (so `--fail-if 'p99_ms > 50'`).
    pub latency_ms: Option<LatencySummary>,
    /// `latency_ms` at every tenth of a nine to 99.99 %, then the max.
    pub latency_spectrum: Option<Vec<SpectrumPoint>>,
    /// Open loop: requests that started late, or never started.
    #[serde(flatten)]
    pub pacing: Pacing,
    pub data_sent_bytes: u64,
    pub data_received_bytes: u64,
    /// Every connection opened, the VUs' first ones included.
    pub connections_opened: u64,
    pub warmup: Option<HttpWarmup>,
    #[serde(flatten)]
    pub client: ClientReport,
    /// Per second: `rows` are requests that succeeded, `batches` all requests that completed.
    pub timeline: Vec<TimelineEntry>,
    /// `--stages` or `--rate-stages`: each stage's figures (empty without).
    pub stages: Vec<StageEntry>,
    pub setup: HttpSetup,
    /// `--observe`: what the database behind the API was doing while the
    /// run ran; null when none was observed.
    pub server: Option<super::server::ServerReport>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CheckEntry {
    pub check: String,
    pub passes: u64,
    pub fails: u64,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct HttpWarmup {
    pub requests: u64,
    pub errors: u64,
    pub duration_s: f64,
    /// When its last request ended, since the start; null when none ended.
    pub end_s: Option<f64>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct HttpSetup {
    pub method: String,
    /// The URL with its password and secret query values redacted.
    pub target: String,
    /// As sent, with secret values (Authorization, tokens, keys, cookies) redacted.
    pub headers: Vec<String>,
    /// `none`, a file or `--body` with its size, or `template FILE`.
    pub body: String,
    pub vus: u32,
    /// Threads that ran the VUs.
    pub threads: usize,
    pub rate_per_sec: Option<f64>,
    /// `--stages` or `--rate-stages`, as given.
    pub stages: Option<String>,
    pub iterations_limit: Option<u64>,
    pub duration_limit_s: Option<f64>,
    pub sleep_s: Option<f64>,
    pub keepalive: bool,
    pub tls: bool,
    /// False with --insecure: encrypted, but the server was not authenticated.
    pub tls_verified: bool,
    pub timeout_s: f64,
    pub warmup: Warmup,
    pub seed: u64,
    /// `--observe`: the database sampled, its password redacted.
    pub observed: Option<String>,
}

impl HttpReport {
    pub fn new(cfg: &HttpConfig, out: &HttpOutcome) -> HttpReport {
        let f = &out.figures;
        let rec = f.recorder();
        let m = &rec.measured;
        let s = &out.stats;
        let duration_s = span_s(m);
        let http_reqs = m.batches + m.failed_batches;
        let errors = m.failed_batches + rec.warmup.failed_batches;
        let rate = |n: u64| if duration_s > 0.0 { n as f64 / duration_s } else { 0.0 };
        let spec = &cfg.request;
        let (target_rate, rate_flag) = paced_rate(cfg.load.rate, cfg.load.stages.as_ref());
        let paced =
            Paced { rate: target_rate, rate_flag, unit: "requests", in_flight_flag: "--vus", reached: rate(http_reqs) };
        let pacing = Pacing::of(paced, m, f.dropped);
        let body = match &cfg.body {
            BodySource::Fixed { label: Some(l) } => l.clone(),
            BodySource::Fixed { label: None } => "none".into(),
            BodySource::Template(t) => format!("template {}", t.file()),
        };
        HttpReport {
            header: Header::new("http"),
            verdict: Verdict::new(f.interrupted, errors > 0 || pacing.behind()).stopped(f.stopped.clone()),
            http_reqs,
            http_reqs_per_sec: rate(http_reqs),
            requests_ok: m.batches,
            errors,
            accounting: Accounting::of("requests", cfg.iterations, m.batches + rec.warmup.batches, errors, 0),
            http_req_failed_rate: if http_reqs > 0 { m.failed_batches as f64 / http_reqs as f64 } else { 0.0 },
            duration_s,
            wall_s: f.wall.as_secs_f64(),
            error_classes: error_entries(&rec.errors),
            checks: spec
                .checks
                .iter()
                .zip(&s.checks)
                .map(|(c, n)| CheckEntry { check: c.text.clone(), passes: n.passes, fails: n.fails })
                .collect(),
            statuses: s.statuses.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            http_req_duration_ms: LatencySummary::of(&s.duration),
            http_req_blocked_ms: LatencySummary::of(&m.lag),
            http_req_connecting_ms: LatencySummary::of(&s.connecting),
            http_req_tls_handshaking_ms: LatencySummary::of(&s.tls_handshaking),
            http_req_sending_ms: LatencySummary::of(&s.sending),
            http_req_waiting_ms: LatencySummary::of(&s.waiting),
            http_req_receiving_ms: LatencySummary::of(&s.receiving),
            latency_ms: LatencySummary::of(&m.latency),
            latency_spectrum: spectrum(&m.latency),
            pacing,
            data_sent_bytes: s.bytes_sent,
            data_received_bytes: s.bytes_received,
            connections_opened: s.connections_opened,
            warmup: (cfg.load.warmup != Warmup::None).then(|| HttpWarmup {
                requests: rec.warmup.batches + rec.warmup.failed_batches,
                errors: rec.warmup.failed_batches,
                duration_s: span_s(&rec.warmup),
                end_s: end_s(&rec.warmup),
            }),
            client: ClientReport::from(&f.cost),
            timeline: timeline(rec),
            stages: stage_entries(cfg.load.stages.as_ref(), rec, f.wall),
            setup: HttpSetup {
                method: spec.method.clone(),
                target: spec.endpoint.redacted.clone(),
                headers: cfg.shown_headers(),
                body,
                vus: cfg.vus,
                threads: out.threads,
                rate_per_sec: cfg.load.rate,
                stages: cfg.load.stages.as_ref().map(Stages::to_string),
                iterations_limit: cfg.iterations,
                duration_limit_s: cfg.load.duration.map(|d| d.as_secs_f64()),
                sleep_s: cfg.sleep.map(|d| d.as_secs_f64()),
                keepalive: spec.keepalive,
                tls: spec.endpoint.tls,
                tls_verified: spec.endpoint.tls && !spec.insecure,
                timeout_s: spec.timeout.as_secs_f64(),
                warmup: cfg.load.warmup,
                seed: cfg.load.seed,
                observed: cfg.observe.as_ref().and_then(crate::config::TargetChoice::redacted),
            },
            server: super::server::ServerReport::of(f),
        }
    }
}

/// Values recorded above `us`.
/// `name.....: ` padded to k6's column.
pub(super) fn metric(out: &mut String, name: &str, value: &str) {
    let dots = ".".repeat(28usize.saturating_sub(name.chars().count()));
    let _ = writeln!(out, "     {name}{dots}: {value}");
}

pub(super) fn trend(l: &Option<LatencySummary>) -> String {
    match l {
        None => "-".into(),
        Some(l) => format!(
            "avg={} min={} med={} max={} p(90)={} p(95)={} p(99)={}",
            k6_time(l.mean),
            k6_time(l.min),
            k6_time(l.p50),
            k6_time(l.max),
            k6_time(l.p90),
            k6_time(l.p95),
            k6_time(l.p99)
        ),
    }
}

pub(super) fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    format!("{:.2}%", part as f64 * 100.0 / whole as f64)
}

pub fn render(r: &HttpReport) -> String {
    let mut out = String::new();
    let s = &r.setup;
    interrupted_banner(&mut out, &r.verdict);
    let _ = writeln!(out, "dbload {} http {} {}", r.header.dbload_version, s.method, s.target);
    let mode = pacing_words(s.stages.as_deref(), s.rate_per_sec, "requests");
    let limit = match (s.iterations_limit, s.duration_limit_s) {
        (Some(n), Some(d)) => format!("{} requests or {d} s", group(n)),
        (Some(n), None) => format!("{} requests", group(n)),
        (None, Some(d)) => format!("{d} s"),
        (None, None) => "until stopped".into(),
    };
    let _ = writeln!(
        out,
        "Setup:    {} VU{} on {} thread{}, {mode}, {limit}, {}{}, body {}",
        s.vus,
        if s.vus == 1 { "" } else { "s" },
        s.threads,
        if s.threads == 1 { "" } else { "s" },
        if s.keepalive { "keep-alive" } else { "a new connection per request" },
        s.sleep_s.map(|d| format!(", sleep {d} s")).unwrap_or_default(),
        s.body
    );
    if !s.headers.is_empty() {
        let _ = writeln!(out, "Headers:  {}", s.headers.join(" | "));
    }
    if let Some(db) = &s.observed {
        let _ = writeln!(out, "Observed: {db} (--observe: the database behind the API, in the Server section)");
    }
    if s.tls && !s.tls_verified {
        out.push_str("TLS:      --insecure: encrypted, but the server's certificate was NOT verified\n");
    }
    out.push('\n');

    if !r.checks.is_empty() {
        for c in &r.checks {
            let mark = if c.fails == 0 { '✓' } else { '✗' };
            let _ = writeln!(out, "     {mark} {}", c.check);
            if c.fails > 0 {
                let _ = writeln!(
                    out,
                    "      ↳  {} — ✓ {} / ✗ {}",
                    percent(c.passes, c.passes + c.fails),
                    c.passes,
                    c.fails
                );
            }
        }
        out.push('\n');
        let (pass, fail) = r.checks.iter().fold((0, 0), |(p, f), c| (p + c.passes, f + c.fails));
        metric(&mut out, "checks", &format!("{} ✓ {pass} ✗ {fail}", percent(pass, pass + fail)));
    }
    let per_sec = |b: u64| if r.duration_s > 0.0 { b as f64 / r.duration_s } else { 0.0 };
    for (name, bytes) in [("data_received", r.data_received_bytes), ("data_sent", r.data_sent_bytes)] {
        metric(&mut out, name, &format!("{} {}/s", k6_bytes(bytes as f64), k6_bytes(per_sec(bytes))));
    }
    for (name, l) in [
        ("http_req_blocked", &r.http_req_blocked_ms),
        ("http_req_connecting", &r.http_req_connecting_ms),
        ("http_req_duration", &r.http_req_duration_ms),
        ("http_req_receiving", &r.http_req_receiving_ms),
        ("http_req_sending", &r.http_req_sending_ms),
        ("http_req_tls_handshaking", &r.http_req_tls_handshaking_ms),
        ("http_req_waiting", &r.http_req_waiting_ms),
    ] {
        metric(&mut out, name, &trend(l));
    }
    let failed = r.http_reqs - r.requests_ok;
    metric(&mut out, "http_req_failed", &format!("{} {} of {}", percent(failed, r.http_reqs), failed, r.http_reqs));
    metric(&mut out, "http_reqs", &format!("{} {:.1}/s", r.http_reqs, r.http_reqs_per_sec));
    // Open loop (`--rate`, `--rate-stages`): pacing has figures.
    if r.pacing.late.is_some() {
        metric(&mut out, "response_time", &format!("{} (from the intended start)", trend(&r.latency_ms)));
        if let Some(late) = r.pacing.late {
            let after = r.pacing.late_after_ms;
            metric(&mut out, "late_requests", &format!("{late} (started > {after} ms after schedule)"));
        }
        if let Some(dropped) = r.pacing.dropped {
            metric(&mut out, "dropped_requests", &format!("{dropped} (scheduled, never started)"));
        }
    }
    metric(&mut out, "connections_opened", &r.connections_opened.to_string());
    metric(&mut out, "vus", &s.vus.to_string());
    out.push('\n');
    if !r.statuses.is_empty() {
        let statuses: Vec<String> = r.statuses.iter().map(|(k, v)| format!("{k} × {}", group(*v))).collect();
        let _ = writeln!(out, "Statuses:   {}", statuses.join(", "));
    }
    accounting_line(&mut out, &r.accounting);
    error_lines(&mut out, &r.error_classes);
    if let Some(w) = &r.warmup {
        let _ = writeln!(
            out,
            "Warm-up:    {} requests over {:.2} s ({} failed), excluded from the figures",
            group(w.requests),
            w.duration_s,
            w.errors
        );
    }
    stage_lines(&mut out, &r.stages, "requests");
    super::server::server_lines(&mut out, r.server.as_ref());
    rate_warning_line(&mut out, &r.pacing);
    client_and_verdict(&mut out, &r.client, r.wall_s, &r.verdict);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;
    use crate::stats::http::HttpStats;

    #[test]
    fn http_text() {
        let argv = [
            "dbload",
            "http",
            "POST",
            "http://api:8668/v2/notify",
            "--vus",
            "2",
            "--iterations",
            "12",
            "--check",
            "status=200",
        ];
        let crate::cli::Command::Http(a) = fixtures::command(&argv) else { unreachable!("http") };
        let cfg = HttpConfig::resolve(a, &|_| None).unwrap();
        let mut stats = HttpStats::new(1);
        for ms in (10..=100).step_by(10) {
            let us = ms * 1000;
            stats.duration.record(us).unwrap();
            stats.sending.record(50).unwrap();
            stats.waiting.record(us - 100).unwrap();
            stats.receiving.record(50).unwrap();
        }
        stats.connecting.record(800).unwrap();
        stats.connecting.record(900).unwrap();
        (stats.connections_opened, stats.bytes_sent, stats.bytes_received) = (2, 27_000, 1_600_000);
        stats.checks[0].passes = 10;
        stats.checks[0].fails = 1;
        stats.statuses = [(200, 10), (500, 1)].into();
        let out = HttpOutcome { figures: fixtures::figures(vec![fixtures::recorder(1)]), stats, threads: 2 };
        insta::assert_snapshot!(render(&HttpReport::new(&cfg, &out)));
    }
}
