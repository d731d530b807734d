//! The report of `dbload k6 run`: k6's end-of-test summary (checks, data
//! sent and received, `http_req_*`, `http_reqs`, `iterations`,
//! `iteration_duration`, `vus`, each custom metric, each threshold ✓/✗),
//! then what dbload adds (statuses, errors, connections, an arrival-rate
//! run's latency from the intended start and whether it held its rate, the
//! client's cost). In JSON, the figures `dbload http` also has keep its names
//! (`http_reqs`, `checks`, `http_req_duration_ms`, ...), and every metric is
//! under `metrics.NAME` in k6's summary-export shape, which
//! `--summary-export` writes alone.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::IsTerminal;

use serde::Serialize;
use serde_json::{json, Value as Json};

use super::http::{metric, percent, trend, CheckEntry};
use super::text::{client_and_verdict, error_lines, interrupted_banner, rate_warning_line, stage_lines};
use super::{
    error_entries, paced_rate, span_s, stage_entries, timeline, ClientReport, ErrorEntry, Header, Paced, Pacing,
    StageEntry, TimelineEntry, Verdict,
};
use crate::config::k6::K6Config;
use crate::error::exit;
use crate::format::{group, k6_bytes, k6_time};
use crate::k6::thresholds::Judged;
use crate::op::Stages;
use crate::outcome::K6Outcome;
use crate::stats::k6::{Kind, Series};
use crate::stats::LatencySummary;

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct K6Report {
    #[serde(flatten)]
    pub header: Header,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Iterations of the default function that ended (k6's `iterations`), thrown ones included.
    pub iterations: u64,
    pub iterations_per_sec: f64,
    /// Iterations that ended with an exception (k6 prints each and goes on).
    pub iterations_failed: u64,
    /// k6's `iteration_duration`: each iteration's own time.
    pub iteration_duration_ms: Option<LatencySummary>,
    /// An arrival-rate executor's iterations timed from their intended
    /// start (their slot on the schedule), so that iterations which waited
    /// for a free VU show it; null for the other executors.
    pub iteration_latency_ms: Option<LatencySummary>,
    /// An arrival-rate executor's schedule: iterations that started late,
    /// and those due that never started (k6's `dropped_iterations`).
    #[serde(flatten)]
    pub pacing: Pacing,
    /// Requests made, setup's and teardown's included, as k6 counts them.
    pub http_reqs: u64,
    pub http_reqs_per_sec: f64,
    /// Share of the requests that failed: an error, or a status outside 200-399 (k6's `http_req_failed`).
    pub http_req_failed_rate: f64,
    pub http_req_duration_ms: Option<LatencySummary>,
    /// k6 counts DNS and connecting as blocked; here: connecting and TLS.
    pub http_req_blocked_ms: Option<LatencySummary>,
    pub http_req_connecting_ms: Option<LatencySummary>,
    pub http_req_tls_handshaking_ms: Option<LatencySummary>,
    pub http_req_sending_ms: Option<LatencySummary>,
    pub http_req_waiting_ms: Option<LatencySummary>,
    pub http_req_receiving_ms: Option<LatencySummary>,
    pub checks: Vec<CheckEntry>,
    /// Responses per status code.
    pub statuses: BTreeMap<String, u64>,
    pub data_sent_bytes: u64,
    pub data_received_bytes: u64,
    pub connections_opened: u64,
    pub vus: u32,
    pub vus_max: u32,
    /// The measured window: first iteration's start to last one's end.
    pub duration_s: f64,
    pub wall_s: f64,
    /// The scripts' exceptions, by where they were thrown.
    pub error_classes: Vec<ErrorEntry>,
    /// Every metric, in k6's summary-export shape (Counter `count`, `rate`;
    /// Trend `avg`, `min`, `med`, `max`, `p(90)`, `p(95)`; Rate `rate`
    /// (`value` too, with `passes` and `fails`); Gauge `value`, `min`, `max`).
    #[cfg_attr(test, schemars(with = "BTreeMap<String, BTreeMap<String, serde_json::Value>>"))]
    pub metrics: BTreeMap<String, Json>,
    pub thresholds: Vec<Judged>,
    /// The metrics that are times (in ms), for the text summary: kept
    /// with the report, so that `results show` prints them as times too
    /// (skipped, they came back as bare numbers); none in a report kept
    /// before.
    #[serde(default)]
    pub time_metrics: Vec<String>,
    #[serde(flatten)]
    pub client: ClientReport,
    /// Per second: `rows` are iterations that ended without an exception, `batches` all that ended.
    pub timeline: Vec<TimelineEntry>,
    /// `--stage` or `options.stages`: each stage's figures (empty without).
    pub stages: Vec<StageEntry>,
    pub setup: K6Setup,
    /// What the script's `handleSummary(data)` returned as `stdout`:
    /// printed in place of k6's summary (dbload's own lines follow).
    #[serde(skip)]
    pub handled_summary: Option<String>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct K6Setup {
    /// The script's path, or `stdin`.
    pub script: String,
    pub vus: u32,
    /// Threads that ran the VUs, their JavaScript and their requests.
    pub threads: usize,
    pub stages: Option<String>,
    /// An arrival-rate executor's iterations per second (constant-arrival-rate).
    pub rate: Option<f64>,
    pub iterations_limit: Option<u64>,
    pub duration_limit_s: Option<f64>,
    pub insecure: bool,
}

/// A trend's figures in k6's summary: in ms for a time.
fn trend_of(s: &Series) -> Json {
    let (min, max) = s.bounds();
    json!({ "avg": s.avg(), "min": min, "med": s.percentile(50.0), "max": max,
            "p(90)": s.percentile(90.0), "p(95)": s.percentile(95.0) })
}

/// One metric as k6's `--summary-export` writes it; `thresholds`: each of
/// its expressions and whether it failed (k6's booleans).
fn exported(s: &Series, duration_s: f64, thresholds: &[&Judged]) -> Json {
    let per_sec = if duration_s > 0.0 { s.sum / duration_s } else { 0.0 };
    let mut m = match s.kind {
        Kind::Counter => json!({ "count": s.sum, "rate": per_sec }),
        Kind::Gauge => {
            let (min, max) = s.bounds();
            json!({ "value": s.last, "min": min, "max": max })
        }
        Kind::Rate => json!({ "rate": s.rate(), "value": s.rate(), "passes": s.trues, "fails": s.count - s.trues }),
        Kind::Trend => trend_of(s),
    };
    if !thresholds.is_empty() {
        let t: serde_json::Map<String, Json> =
            thresholds.iter().map(|j| (j.threshold.clone(), Json::Bool(!j.ok))).collect();
        m["thresholds"] = Json::Object(t);
    }
    m
}

/// A time series' histogram (µs) summarised as every report summarises latency.
fn latency(s: Option<&Series>) -> Option<LatencySummary> {
    s.and_then(|s| s.histogram()).and_then(LatencySummary::of)
}

impl K6Report {
    pub fn new(cfg: &K6Config, out: &K6Outcome) -> K6Report {
        let f = &out.figures;
        let rec = f.recorder();
        let m = &rec.measured;
        let metrics = &out.metrics;
        let duration_s = span_s(m);
        let wall_s = f.wall.as_secs_f64();
        let rate = |n: u64| if duration_s > 0.0 { n as f64 / duration_s } else { 0.0 };
        let series = |name: &str| metrics.get(name);
        let count = |name: &str| series(name).map_or(0, |s| s.sum as u64);
        let http_reqs = count("http_reqs");
        let judged: Vec<Judged> = cfg.thresholds.iter().map(|t| t.judge(metrics, duration_s)).collect();
        let mut exported_metrics = BTreeMap::new();
        for (name, s) in metrics.all() {
            let mine: Vec<&Judged> = judged.iter().filter(|j| j.metric == *name).collect();
            exported_metrics.insert(name.clone(), exported(s, duration_s, &mine));
        }
        for t in cfg.thresholds.iter().filter(|t| !t.tags.is_empty()) {
            if let Some(s) = metrics.sub(&t.metric, &t.tags) {
                let mine: Vec<&Judged> = judged.iter().filter(|j| j.metric == t.key).collect();
                exported_metrics.insert(t.key.clone(), exported(s, duration_s, &mine));
            }
        }
        let iterations = count("iterations");
        let (target_rate, staged) = paced_rate(cfg.load.rate, cfg.load.stages.as_ref());
        let rate_flag = if staged == "--rate" { "rate" } else { "stages" };
        let paced = Paced {
            rate: target_rate,
            rate_flag,
            unit: "iterations",
            in_flight_flag: "maxVUs",
            reached: rate(m.batches + m.failed_batches),
        };
        // An open loop is not failed for falling behind, as in k6: its
        // dropped iterations are counted and the summary warns.
        let pacing = Pacing::of(paced, m, f.dropped);
        if let Some(dropped) = pacing.dropped {
            let per_sec = rate(dropped);
            exported_metrics.insert("dropped_iterations".into(), json!({ "count": dropped, "rate": per_sec }));
        }
        let failed_thresholds = judged.iter().any(|j| !j.ok);
        // An iteration that threw is a failed operation (exit 1); a failed request or check is not.
        let mut verdict = Verdict::new(f.interrupted, m.failed_batches > 0).stopped(f.stopped.clone());
        if failed_thresholds && !f.interrupted {
            (verdict.status, verdict.exit_code) = (super::Status::Failed, exit::THRESHOLDS);
        }
        let s = &out.stats;
        let open = pacing.late.is_some();
        K6Report {
            header: Header::new("k6"),
            verdict,
            iterations,
            iterations_per_sec: rate(iterations),
            iterations_failed: m.failed_batches,
            // From the actual start: the same as the latency in a closed loop.
            iteration_duration_ms: LatencySummary::of(if open { &m.service } else { &m.latency }),
            iteration_latency_ms: open.then(|| LatencySummary::of(&m.latency)).flatten(),
            pacing,
            http_reqs,
            http_reqs_per_sec: rate(http_reqs),
            http_req_failed_rate: series("http_req_failed").map_or(0.0, Series::rate),
            http_req_duration_ms: latency(series("http_req_duration")),
            http_req_blocked_ms: latency(series("http_req_blocked")),
            http_req_connecting_ms: latency(series("http_req_connecting")),
            http_req_tls_handshaking_ms: latency(series("http_req_tls_handshaking")),
            http_req_sending_ms: latency(series("http_req_sending")),
            http_req_waiting_ms: latency(series("http_req_waiting")),
            http_req_receiving_ms: latency(series("http_req_receiving")),
            checks: metrics
                .checks
                .iter()
                .map(|c| CheckEntry { check: c.name.clone(), passes: c.passes, fails: c.fails })
                .collect(),
            statuses: s.statuses.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            data_sent_bytes: s.bytes_sent,
            data_received_bytes: s.bytes_received,
            connections_opened: s.connections_opened,
            vus: cfg.vus,
            vus_max: cfg.vus,
            duration_s,
            wall_s,
            error_classes: error_entries(&rec.errors),
            metrics: exported_metrics,
            thresholds: judged,
            time_metrics: metrics.all().filter(|(_, s)| s.is_time).map(|(n, _)| n.clone()).collect(),
            client: ClientReport::from(&f.cost),
            timeline: timeline(rec),
            stages: stage_entries(cfg.load.stages.as_ref(), rec, f.wall),
            setup: K6Setup {
                script: cfg.script.name.clone(),
                vus: cfg.vus,
                threads: out.threads,
                stages: cfg.load.stages.as_ref().map(Stages::to_string),
                rate: cfg.load.rate,
                iterations_limit: cfg.iterations,
                duration_limit_s: cfg.load.duration.map(|d| d.as_secs_f64()),
                insecure: cfg.insecure,
            },
            handled_summary: None,
        }
    }

    /// What `--summary-export` writes: the metrics alone, as k6 does.
    pub fn summary_export(&self) -> Json {
        json!({ "metrics": self.metrics })
    }
}

/// A number as k6 shows a non-time trend's or gauge's value.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.6}").trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// One metric's value in k6's summary, from its export.
fn shown(m: &Json, is_time: bool) -> String {
    let n = |k: &str| m[k].as_f64().unwrap_or(0.0);
    let v = |x: f64| if is_time { k6_time(x) } else { number(x) };
    if m.get("avg").is_some() {
        return format!(
            "avg={} min={} med={} max={} p(90)={} p(95)={}",
            v(n("avg")),
            v(n("min")),
            v(n("med")),
            v(n("max")),
            v(n("p(90)")),
            v(n("p(95)"))
        );
    }
    if m.get("passes").is_some() {
        let (p, f) = (n("passes") as u64, n("fails") as u64);
        return format!("{} ✓ {p} ✗ {f}", percent(p, p + f));
    }
    if m.get("count").is_some() {
        return format!("{} {}/s", number(n("count")), number((n("rate") * 1e6).round() / 1e6));
    }
    format!("{} min={} max={}", v(n("value")), v(n("min")), v(n("max")))
}

/// k6's summary data, as a script's `handleSummary(data)` gets it:
/// `metrics.NAME` with its `type`, what it `contains` (`time`, `data`,
/// `default`), its `values` (as `--summary-export` has them, a Rate's
/// without `value`) and its `thresholds` (`{ "p(95)<200": { "ok": true } }`);
/// `root_group` with the checks; `state`; `options`. [`text_summary`]
/// renders it, for dbload's report and for the script's `textSummary`.
pub fn summary_data(r: &K6Report) -> Json {
    let mut metrics = serde_json::Map::new();
    for (name, m) in &r.metrics {
        let mut values = m.clone();
        let thresholds = values.as_object_mut().and_then(|v| v.remove("thresholds"));
        let kind = if m.get("avg").is_some() {
            "trend"
        } else if m.get("passes").is_some() {
            values.as_object_mut().map(|v| v.remove("value"));
            "rate"
        } else if m.get("count").is_some() {
            "counter"
        } else {
            "gauge"
        };
        let base = name.split('{').next().unwrap_or(name);
        let contains = if r.time_metrics.iter().any(|t| t == base) {
            "time"
        } else if matches!(base, "data_sent" | "data_received") {
            "data"
        } else {
            "default"
        };
        let mut metric = json!({ "type": kind, "contains": contains, "values": values });
        if let Some(Json::Object(t)) = thresholds {
            let judged: serde_json::Map<String, Json> =
                t.into_iter().map(|(k, failed)| (k, json!({ "ok": failed == Json::Bool(false) }))).collect();
            metric["thresholds"] = Json::Object(judged);
        }
        metrics.insert(name.clone(), metric);
    }
    let checks: Vec<Json> = r
        .checks
        .iter()
        .map(|c| json!({ "name": c.check, "path": format!("::{}", c.check), "passes": c.passes, "fails": c.fails }))
        .collect();
    json!({
        "metrics": metrics,
        "root_group": { "name": "", "path": "", "groups": [], "checks": checks },
        "state": {
            "testRunDurationMs": r.wall_s * 1000.0,
            "isStdOutTTY": std::io::stdout().is_terminal(),
            "isStdErrTTY": std::io::stderr().is_terminal(),
        },
        "options": { "summaryTrendStats": ["avg", "min", "med", "max", "p(90)", "p(95)"], "summaryTimeUnit": "",
                     "noColor": true },
    })
}

/// k6's end-of-test summary (the checks, then each metric with its
/// thresholds' ✓/✗) rendered from its data ([`summary_data`]'s shape),
/// each line after `indent`: what dbload prints, and what k6's jslib
/// `textSummary(data, { indent })` gives a script's `handleSummary`.
pub fn text_summary(data: &Json, indent: &str) -> String {
    let mut out = String::new();
    let checks = data["root_group"]["checks"].as_array().map(Vec::as_slice).unwrap_or_default();
    for c in checks {
        let n = |k: &str| c[k].as_u64().unwrap_or(0);
        let (name, passes, fails) = (c["name"].as_str().unwrap_or_default(), n("passes"), n("fails"));
        let mark = if fails == 0 { '✓' } else { '✗' };
        let _ = writeln!(out, "     {mark} {name}");
        if fails > 0 {
            let _ = writeln!(out, "      ↳  {} — ✓ {passes} / ✗ {fails}", percent(passes, passes + fails));
        }
    }
    if !checks.is_empty() {
        out.push('\n');
    }
    let empty = serde_json::Map::new();
    let metrics = data["metrics"].as_object().unwrap_or(&empty);
    let http_reqs = metrics.get("http_reqs").and_then(|m| m["values"]["count"].as_f64()).unwrap_or(0.0);
    // ✓ when each of a metric's thresholds is met, ✗ when one is not.
    let judged = |m: &Json| m["thresholds"].as_object().map(|t| t.values().all(|j| j["ok"] == true));
    for (name, m) in metrics {
        let values = &m["values"];
        // Submetrics come under their metric; unused built-ins are left out, as k6 does.
        if name.contains('{') || (values.get("count").is_some_and(|c| c == 0.0) && name != "iterations") {
            continue;
        }
        if m["type"] == "rate" && values["passes"] == 0 && values["fails"] == 0 {
            continue;
        }
        if m["type"] == "trend" && http_reqs == 0.0 && name.starts_with("http_req_") {
            continue;
        }
        let mark = match judged(m) {
            Some(true) => "✓ ",
            Some(false) => "✗ ",
            None => "",
        };
        let value = |m: &Json| match m["contains"].as_str() {
            Some("data") => {
                let n = |k: &str| m["values"][k].as_f64().unwrap_or(0.0);
                format!("{} {}/s", k6_bytes(n("count")), k6_bytes(n("rate")))
            }
            contains => shown(&m["values"], contains == Some("time")),
        };
        metric(&mut out, &format!("{mark}{name}"), &value(m));
        for (sub, sm) in metrics.iter().filter(|(k, _)| k.starts_with(&format!("{name}{{"))) {
            let mark = if judged(sm) == Some(false) { "✗ " } else { "✓ " };
            metric(&mut out, &format!("  {mark}{}", &sub[name.len()..]), &value(sm));
        }
    }
    out.push('\n');
    if indent.is_empty() {
        return out;
    }
    out.lines().map(|l| if l.is_empty() { "\n".to_owned() } else { format!("{indent}{l}\n") }).collect()
}

pub fn render(r: &K6Report) -> String {
    let mut out = String::new();
    let s = &r.setup;
    interrupted_banner(&mut out, &r.verdict);
    let _ = writeln!(out, "dbload {} k6 run {}", r.header.dbload_version, s.script);
    let limit = match (s.iterations_limit, s.duration_limit_s, &s.stages, s.rate) {
        (_, _, Some(stages), _) => stages.clone(),
        (_, Some(d), None, Some(rate)) => format!("{rate} iterations/s for {d} s"),
        (Some(n), Some(d), _, _) => format!("{} iterations or {d} s", group(n)),
        (Some(n), None, _, _) => format!("{} iterations", group(n)),
        (None, Some(d), _, _) => format!("{d} s"),
        (None, None, _, _) => "until stopped".into(),
    };
    let _ = writeln!(
        out,
        "Setup:    {} VU{} (a thread each) over {} request thread{}, {limit}",
        s.vus,
        if s.vus == 1 { "" } else { "s" },
        s.threads,
        if s.threads == 1 { "" } else { "s" }
    );
    out.push('\n');
    match &r.handled_summary {
        Some(printed) => out.push_str(printed),
        None => out.push_str(&text_summary(&summary_data(r), "")),
    }
    if !r.thresholds.is_empty() {
        out.push_str("Thresholds:\n");
        for t in &r.thresholds {
            let mark = if t.ok { '✓' } else { '✗' };
            let _ = writeln!(
                out,
                "     {mark} {} {} (was {})",
                t.metric,
                t.threshold,
                number((t.value * 1000.0).round() / 1000.0)
            );
        }
        out.push('\n');
    }
    if !r.statuses.is_empty() {
        let statuses: Vec<String> = r.statuses.iter().map(|(k, v)| format!("{k} × {}", group(*v))).collect();
        let _ = writeln!(out, "Statuses:   {}", statuses.join(", "));
    }
    let _ = writeln!(out, "Connections opened: {}", r.connections_opened);
    if r.iteration_latency_ms.is_some() {
        let _ = writeln!(out, "Iteration latency from the intended start: {}", trend(&r.iteration_latency_ms));
    }
    if let Some(late) = r.pacing.late {
        let _ = writeln!(
            out,
            "Late iterations: {} (started > {} ms after their slot)",
            group(late),
            r.pacing.late_after_ms
        );
    }
    rate_warning_line(&mut out, &r.pacing);
    if r.iterations_failed > 0 {
        let _ = writeln!(out, "Iterations that threw: {} of {}", group(r.iterations_failed), group(r.iterations));
    }
    error_lines(&mut out, &r.error_classes);
    stage_lines(&mut out, &r.stages, "iterations");
    client_and_verdict(&mut out, &r.client, r.wall_s, &r.verdict);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command, K6Args, K6Command};
    use crate::report::fixtures;
    use crate::stats::http::HttpStats;
    use crate::stats::k6::Metrics;
    use clap::Parser;

    /// k6's summary as dbload prints it: checks, the built-in metrics in
    /// k6's order and units, a custom Trend, a submetric under its metric,
    /// thresholds ✓/✗ (one failing: exit 99), then dbload's additions.
    #[test]
    fn k6_text() {
        let script = "export const options = { thresholds: { 'http_req_duration{group:::notify}': ['p(95)<50'], \
                      checks: ['rate>0.99'] } };\nexport default function () {}\n";
        let cli = Cli::try_parse_from(["dbload", "k6", "run", "-u", "2", "-i", "12", "notify.js"]).unwrap();
        let Command::K6(K6Args { command: K6Command::Run(mut a) }) = cli.command else { unreachable!() };
        a.script = "-".into();
        let mut cfg = K6Config::resolve(a, Vec::new(), &mut script.as_bytes(), &|| false).unwrap();
        cfg.script.name = "notify.js".into();
        let mut m = Metrics::new(&cfg.submetrics());
        m.declare("notify_ms", Kind::Trend, true).unwrap();
        let notify = [("group".to_string(), "::notify".to_string())];
        for ms in (10..=100).step_by(10) {
            let ms = f64::from(ms);
            for (name, v) in
                [("http_reqs", 1.0), ("http_req_failed", 0.0), ("http_req_duration", ms), ("notify_ms", ms)]
            {
                m.add(name, v, &notify).unwrap();
            }
            m.add("http_req_waiting", ms - 0.5, &notify).unwrap();
            m.check("status was 200", ms < 100.0, &notify);
        }
        m.add("iterations", 12.0, &[]).unwrap();
        m.add("data_sent", 27_000.0, &[]).unwrap();
        m.add("data_received", 1_600_000.0, &[]).unwrap();
        m.set_gauge("vus", 2.0);
        m.set_gauge("vus_max", 2.0);
        let mut stats = HttpStats::new(0);
        (stats.connections_opened, stats.bytes_sent, stats.bytes_received) = (2, 27_000, 1_600_000);
        stats.statuses = [(200, 10)].into();
        let out = K6Outcome { figures: fixtures::figures(vec![fixtures::recorder(1)]), stats, metrics: m, threads: 2 };
        let r = K6Report::new(&cfg, &out);
        assert_eq!(r.verdict.exit_code, exit::THRESHOLDS);
        insta::assert_snapshot!(render(&r));
    }
}
