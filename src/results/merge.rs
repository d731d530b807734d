//! `dbload report --run-id ID`: the instances of a distributed run, kept
//! in the results store, merged into one report. Exactly, not by
//! averaging: counts and client cost are added, latency percentiles are
//! read from the instances' histograms added together (their kept
//! interval logs), per-second timelines are added on wall-clock seconds,
//! and rates are the added counts over the merged measured window. The
//! merged report is the first instance's report with those figures in
//! place (and an ingest's server cost, the table's size and its part on
//! each node, from the instance that ended last, which measured the table
//! with every instance's rows in it: dbload keeps no password to query the
//! target again at merge time), so every report form (JSON, HTML) reads it
//! as it reads one run;
//! its `merged` object names the instances, each with its own headline
//! figures, and the ones missing or failed, which fail the merged run.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use chrono::DateTime;
use hdrhistogram::Histogram;
use serde_json::{json, Value as Json};

use super::schema::Registered;
use super::Kept;
use crate::error::exit;
use crate::report::repeat::{figure, figures_of};
use crate::report::server_cost::NodesReport;
use crate::report::table::columns;
use crate::stats::summary::spectrum;
use crate::stats::LatencySummary;

/// Counts that add up across instances, where a report has them.
const SUMMED: [&str; 24] = [
    "rows",
    "rows_total",
    "batches",
    "errors",
    "failed_rows",
    "rows_read",
    "rejected_rows",
    "count",
    "http_reqs",
    "requests_ok",
    "late",
    "dropped",
    "reconnects",
    "in_doubt_batches",
    "in_doubt_rows",
    "data_sent_bytes",
    "data_received_bytes",
    "connections_opened",
    "client_cpu_s",
    "client_cpu_user_s",
    "client_cpu_sys_s",
    "client_peak_rss_mib",
    "accounting",
    "statuses",
];

/// Rates: (the rate, the count it is of) over the merged measured window.
const RATES: [(&str, &str); 4] =
    [("rows_per_sec", "rows"), ("batches_per_sec", "batches"), ("qps", "count"), ("http_reqs_per_sec", "http_reqs")];

/// Latency summaries and spectra made again from the added histograms:
/// (the summary's field, the spectrum's, the interval log's tag).
const HISTOGRAMS: [(&str, &str, &str); 2] =
    [("latency_ms", "latency_spectrum", "latency"), ("service_time_ms", "service_time_spectrum", "service")];

/// Fields of the first instance's report that hold only its own figures
/// (no histogram of them is kept to add): said in `merged.not_merged`.
const OWN: [&str; 12] = [
    "warmup",
    "outages",
    "server_duration_ms",
    "schedule_lag_ms",
    "queries",
    "checks",
    "http_req_duration_ms",
    "http_req_blocked_ms",
    "http_req_connecting_ms",
    "http_req_tls_handshaking_ms",
    "http_req_sending_ms",
    "http_req_waiting_ms",
];

/// The merged report of run `run_id` from its instances' kept runs
/// (`kept`) and registration rows (`registered`, none for a directory
/// store): its JSON, and its exit code (1 when an instance is missing or
/// failed).
pub fn merge(run_id: &str, kept: &[Kept], registered: &[Registered]) -> Result<(Json, u8)> {
    let first = kept.first().with_context(|| format!("--run-id {run_id}: no instance of that run was kept"))?;
    let count = first.report.pointer("/run/instance/count").and_then(Json::as_u64).unwrap_or(1) as u32;
    let index_of = |k: &Kept| k.report.pointer("/run/instance/index").and_then(Json::as_u64).map(|i| i as u32);
    let mut missing = Vec::new();
    for i in 0..count {
        if !kept.iter().any(|k| index_of(k) == Some(i)) {
            let why = match registered.iter().find(|r| r.instance == i) {
                Some(r) => format!(
                    "{} on host {}{}",
                    r.status,
                    r.host,
                    r.note.as_ref().map_or(String::new(), |n| format!(": {n}"))
                ),
                None => "not registered".into(),
            };
            missing.push(json!({"index": i, "why": format!("no kept run ({why})")}));
        }
    }
    // Each instance's start, in seconds after the first one's.
    let starts: Vec<i64> = kept.iter().map(started_us).collect::<Result<_>>()?;
    let first_us = starts.iter().copied().min().unwrap_or(0);
    let starts: Vec<f64> = starts.iter().map(|us| (us - first_us) as f64 / 1e6).collect();
    let mut merged = first.report.clone();
    for key in SUMMED {
        if let Some(v) = merged.get_mut(key) {
            *v = sum(&kept.iter().map(|k| &k.report[key]).collect::<Vec<_>>());
        }
    }
    // The merged window: from the first instance's start to the last one's end.
    for key in ["duration_s", "wall_s"] {
        let end = kept.iter().zip(&starts).filter_map(|(k, s)| Some(s + k.report.get(key)?.as_f64()?));
        if let (Some(end), Some(v)) = (end.reduce(f64::max), merged.get_mut(key)) {
            *v = json!(end);
        }
    }
    let duration = merged.get("duration_s").and_then(Json::as_f64).unwrap_or(0.0);
    for (rate, of) in RATES {
        if let (Some(n), true) = (merged.get(of).and_then(Json::as_f64), merged.get(rate).is_some()) {
            merged[rate] = json!(if duration > 0.0 { n / duration } else { 0.0 });
        }
    }
    if let (Some(rows), Some(metrics)) =
        (first.report["rows_per_sec"].as_f64(), first.report["metrics_per_sec"].as_f64())
    {
        // Metrics per row are the same in every instance.
        let per_row = if rows > 0.0 { metrics / rows } else { 0.0 };
        merged["metrics_per_sec"] = json!(merged["rows_per_sec"].as_f64().unwrap_or(0.0) * per_row);
    }
    if merged.get("http_req_failed_rate").is_some() {
        // Failed requests over requests, each instance's weighed by its requests.
        let reqs = |k: &Kept| k.report["http_reqs"].as_f64().unwrap_or(0.0);
        let failed: f64 = kept.iter().map(|k| k.report["http_req_failed_rate"].as_f64().unwrap_or(0.0) * reqs(k)).sum();
        let all: f64 = kept.iter().map(reqs).sum();
        merged["http_req_failed_rate"] = json!(if all > 0.0 { failed / all } else { 0.0 });
    }
    let added = added_histograms(kept)?;
    for (field, spectrum_field, tag) in HISTOGRAMS {
        if merged.get(field).is_some_and(|v| !v.is_null()) {
            let summary = added.get(tag).and_then(LatencySummary::of);
            merged[field] = serde_json::to_value(summary)?;
        }
        if merged.get(spectrum_field).is_some_and(|v| !v.is_null()) {
            merged[spectrum_field] = serde_json::to_value(added.get(tag).and_then(spectrum))?;
        }
    }
    if merged.get("timeline").is_some() {
        merged["timeline"] = timeline(kept, &starts);
    }
    if merged.get("error_classes").is_some() {
        merged["error_classes"] = error_classes(kept);
    }
    let server_cost_of = last_to_finish(kept, &starts).filter(|_| merged.pointer("/server_cost/table_bytes").is_some());
    if let Some(last) = server_cost_of {
        // The table's size and its part on each node were measured by each
        // instance after its own end: the last one to end saw every row.
        merged["server_cost"] = last.report["server_cost"].clone();
    }
    let failed: Vec<&Kept> = kept.iter().filter(|k| k.report["status"] != "ok").collect();
    let exit_code = kept.iter().filter_map(|k| k.report["exit_code"].as_u64()).max().unwrap_or(0) as u8;
    let (status, exit_code) = match (missing.is_empty(), failed.is_empty()) {
        (true, true) => ("ok", exit_code),
        _ if failed.iter().all(|k| k.report["status"] == "interrupted") && missing.is_empty() => {
            ("interrupted", exit_code)
        }
        _ => ("failed", exit_code.max(exit::FAILED_OPERATIONS)),
    };
    merged["status"] = json!(status);
    merged["exit_code"] = json!(exit_code);
    let instances: Vec<Json> = kept
        .iter()
        .map(|k| {
            let figures: BTreeMap<String, f64> = figures_of(&k.report).into_iter().map(|f| (f.name, f.value)).collect();
            json!({
                "index": index_of(k),
                "run_id": k.run_id,
                "host": k.report.pointer("/run/client/host_name"),
                "started_at": k.report.pointer("/run/instance/started_at"),
                "status": k.report["status"],
                "exit_code": k.report["exit_code"],
                "acknowledged": k.report.pointer("/accounting/ok"),
                "figures": figures,
            })
        })
        .collect();
    // A section instance 0 has nothing in (no outages) has nothing of its own to say.
    let empty = |v: &Json| v.is_null() || v.as_array().is_some_and(Vec::is_empty);
    let not_merged: Vec<&str> = OWN.into_iter().filter(|f| merged.get(*f).is_some_and(|v| !empty(v))).collect();
    merged["merged"] = json!({
        "run_id": run_id,
        "count": count,
        "instances": instances,
        "missing": missing,
        "not_merged": not_merged,
    });
    if let Some(last) = server_cost_of {
        merged["merged"]["server_cost_of"] = json!(index_of(last));
    }
    Ok((merged, exit_code))
}

/// The instance whose run ended last (its start, `starts`, plus its wall
/// time; the first of a tie).
fn last_to_finish<'a>(kept: &'a [Kept], starts: &[f64]) -> Option<&'a Kept> {
    let end = |(k, s): &(&Kept, &f64)| *s + k.report["wall_s"].as_f64().unwrap_or(0.0);
    kept.iter().zip(starts).reduce(|a, b| if end(&b) > end(&a) { b } else { a }).map(|(k, _)| k)
}

/// When an instance's workers started (µs since the epoch): its
/// `run.instance.started_at`.
fn started_us(k: &Kept) -> Result<i64> {
    let at = k.report.pointer("/run/instance/started_at").and_then(Json::as_str);
    let at = at.with_context(|| format!("the kept run {} is no instance of a distributed run", k.run_id))?;
    let t = DateTime::parse_from_rfc3339(at).with_context(|| format!("run.instance.started_at of {}", k.run_id))?;
    Ok(t.timestamp_micros())
}

/// The sum of numbers, or of objects field by field (`accounting`); a
/// value that is not a number in every report is the first one's.
fn sum(values: &[&Json]) -> Json {
    match values.first() {
        Some(Json::Object(first)) => Json::Object(
            first
                .iter()
                .map(|(k, v)| {
                    let fields: Vec<&Json> = values.iter().map(|o| &o[k]).collect();
                    (k.clone(), if v.is_number() { sum(&fields) } else { v.clone() })
                })
                .collect(),
        ),
        Some(_) if values.iter().all(|v| v.is_u64()) => json!(values.iter().filter_map(|v| v.as_u64()).sum::<u64>()),
        Some(_) if values.iter().all(|v| v.is_number()) => {
            json!(values.iter().filter_map(|v| v.as_f64()).sum::<f64>())
        }
        Some(first) => (*first).clone(),
        None => Json::Null,
    }
}

/// Every tag's histograms of the instances' interval logs, added.
fn added_histograms(kept: &[Kept]) -> Result<BTreeMap<String, Histogram<u64>>> {
    let mut added: BTreeMap<String, Histogram<u64>> = BTreeMap::new();
    for k in kept {
        for (tag, h) in super::hlog::read(&k.log).with_context(|| format!("the histograms of {}", k.run_id))? {
            let Some(tag) = tag else { continue };
            match added.get_mut(&tag) {
                Some(sum) => sum.add(&h).map_err(|e| anyhow::anyhow!("adding {tag}: {e:?}"))?,
                None => {
                    added.insert(tag, h);
                }
            }
        }
    }
    Ok(added)
}

/// The instances' per-second series added on wall-clock seconds: an
/// instance that started `d` seconds after the first (`starts`) has its
/// second `s` at `s + d` (rounded; the barrier starts them within
/// milliseconds).
fn timeline(kept: &[Kept], starts: &[f64]) -> Json {
    #[derive(Default)]
    struct Second {
        rows: u64,
        batches: u64,
        errors: u64,
        latency_sum_ms: f64,
        latency_max_ms: Option<f64>,
    }
    let mut seconds: BTreeMap<u64, Second> = BTreeMap::new();
    for (k, start) in kept.iter().zip(starts) {
        let shift = start.round() as u64;
        for e in k.report["timeline"].as_array().into_iter().flatten() {
            let int = |key: &str| e[key].as_u64().unwrap_or(0);
            let s = seconds.entry(int("second") + shift).or_default();
            let batches = int("batches");
            s.rows += int("rows");
            s.batches += batches;
            s.errors += int("errors");
            s.latency_sum_ms += e["latency_mean_ms"].as_f64().unwrap_or(0.0) * batches as f64;
            if let Some(max) = e["latency_max_ms"].as_f64() {
                s.latency_max_ms = Some(s.latency_max_ms.map_or(max, |m: f64| m.max(max)));
            }
        }
    }
    Json::Array(
        seconds
            .into_iter()
            .map(|(second, s)| {
                let mean = (s.batches > 0).then(|| s.latency_sum_ms / s.batches as f64);
                // The instances' reports keep no second's distribution: no
                // percentile per second can be merged from them.
                json!({"second": second, "rows": s.rows, "batches": s.batches, "errors": s.errors,
                       "latency_mean_ms": mean, "latency_p50_ms": null, "latency_p99_ms": null,
                       "latency_max_ms": s.latency_max_ms})
            })
            .collect(),
    )
}

/// The instances' errors by class, added: each class's count summed, its
/// example the first instance's that had one; in class order, as a
/// report lists them.
fn error_classes(kept: &[Kept]) -> Json {
    let mut classes: BTreeMap<&str, (u64, &Json)> = BTreeMap::new();
    for e in kept.iter().filter_map(|k| k.report["error_classes"].as_array()).flatten() {
        let Some(class) = e["class"].as_str() else { continue };
        let added = classes.entry(class).or_insert((0, &e["example"]));
        added.0 += e["count"].as_u64().unwrap_or(0);
    }
    classes
        .into_iter()
        .map(|(class, (count, example))| json!({"class": class, "count": count, "example": example}))
        .collect()
}

/// The text form: the merged headline figures beside each instance's,
/// then the instances that are missing or failed.
pub fn render(merged: &Json) -> String {
    let m = &merged["merged"];
    let instances = m["instances"].as_array().cloned().unwrap_or_default();
    let mut out = format!(
        "Merged run {}: {} of {} instances kept, status {} (exit {})\n",
        m["run_id"].as_str().unwrap_or("?"),
        instances.len(),
        m["count"],
        merged["status"].as_str().unwrap_or("?"),
        merged["exit_code"]
    );
    let mut head = vec![String::new(), "merged".to_string()];
    head.extend(instances.iter().map(|i| match i["status"].as_str() {
        Some("ok") => format!("instance {}", i["index"]),
        s => format!("instance {} ({})", i["index"], s.unwrap_or("?")),
    }));
    let mut rows = vec![head];
    let acknowledged = |j: &Json| j.as_u64().map_or("-".into(), crate::format::group);
    if let Some(unit) = merged.pointer("/accounting/unit").and_then(Json::as_str) {
        let mut row = vec![unit.to_string(), acknowledged(&merged["accounting"]["ok"])];
        row.extend(instances.iter().map(|i| acknowledged(&i["acknowledged"])));
        rows.push(row);
    }
    for f in figures_of(merged) {
        let mut row = vec![f.label.clone(), figure(f.value)];
        row.extend(instances.iter().map(|i| i["figures"][&f.name].as_f64().map_or("-".into(), figure)));
        rows.push(row);
    }
    out += &columns(&rows, "  ", |c| c > 0);
    for miss in m["missing"].as_array().into_iter().flatten() {
        out += &format!("  instance {}: {}\n", miss["index"], miss["why"].as_str().unwrap_or("missing"));
    }
    for i in instances.iter().filter(|i| i["status"] != "ok") {
        out += &format!(
            "  instance {} ({}): {}, exit {}\n",
            i["index"],
            i["run_id"].as_str().unwrap_or("?"),
            i["status"].as_str().unwrap_or("?"),
            i["exit_code"]
        );
    }
    if let Some(own) = m["not_merged"].as_array().filter(|a| !a.is_empty()) {
        let own: Vec<&str> = own.iter().filter_map(Json::as_str).collect();
        out += &format!("  Instance 0's own (no histograms kept to add): {}\n", own.join(", "));
    }
    let nodes = merged.pointer("/server_cost/nodes").cloned().map(serde_json::from_value::<NodesReport>);
    if let (Some(Ok(nodes)), Some(last)) = (nodes, m["server_cost_of"].as_u64()) {
        out += &format!("The table after the run, measured by instance {last} (the last to end):\n");
        crate::report::server_cost::node_lines(&mut out, &nodes);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::hist::record_us;

    /// A kept instance of `count`, index `index`, started `at`, with
    /// `rows` rows and the latencies `us` (its interval log).
    fn instance(index: u32, count: u32, at: &str, rows: u64, us: &[u64], status: &str) -> Kept {
        let mut h = crate::stats::hist::new_histogram();
        for &u in us {
            record_us(&mut h, u);
        }
        let latencies = super::super::KeptHistograms {
            intervals: vec![super::super::hlog::Interval {
                tag: "latency".into(),
                start: std::time::Duration::ZERO,
                length: std::time::Duration::from_secs(2),
                histogram: h,
            }],
        };
        let meta = crate::report::meta::RunStart::now("dbload ingest".into()).end();
        let log = super::super::hlog::write(&latencies, &meta);
        let report = json!({
            "command": "ingest", "status": status, "exit_code": u8::from(status != "ok"),
            "rows": rows, "rows_per_sec": rows as f64 / 2.0, "duration_s": 2.0, "wall_s": 2.0,
            "errors": 0, "client_cpu_s": 0.5,
            "accounting": {"unit": "rows", "requested": rows, "ok": rows, "failed": 0, "rejected": 0, "unattempted": 0},
            "latency_ms": {"p99": 1.0}, "latency_spectrum": [{"percentile": 100.0, "ms": 1.0}],
            "timeline": [{"second": 0, "rows": rows / 2, "batches": 1, "errors": 0, "latency_mean_ms": 1.0, "latency_max_ms": 1.0},
                         {"second": 1, "rows": rows / 2, "batches": 1, "errors": 0, "latency_mean_ms": 3.0, "latency_max_ms": 3.0}],
            "run": {"client": {"host_name": "h"}, "instance": {"run_id": "r1", "index": index, "count": count, "started_at": at}},
        });
        Kept { run_id: format!("run-{index}"), report, log }
    }

    #[test]
    fn counts_add_and_percentiles_come_from_the_added_histograms() {
        let a = instance(0, 2, "2026-11-24T12:00:00.000Z", 100, &[1_000; 99], "ok");
        let b = instance(1, 2, "2026-11-24T12:00:00.020Z", 300, &[50_000; 3], "ok");
        let (m, code) = merge("r1", &[a, b], &[]).unwrap();
        assert_eq!((m["status"].as_str(), code), (Some("ok"), 0));
        assert_eq!(m["rows"], 400);
        assert_eq!(m["accounting"]["ok"], 400);
        assert_eq!(m["client_cpu_s"], 1.0);
        // The window is 2.02 s: the second one started 20 ms later.
        assert!((m["duration_s"].as_f64().unwrap() - 2.02).abs() < 1e-9, "{}", m["duration_s"]);
        assert!((m["rows_per_sec"].as_f64().unwrap() - 400.0 / 2.02).abs() < 1e-9);
        // 102 latencies, 3 of them 50 ms: p99 is 50 ms (an average of the
        // instances' p99s would say 25.5).
        assert_eq!(m["latency_ms"]["count"], 102);
        assert!((m["latency_ms"]["p99"].as_f64().unwrap() - 50.0).abs() < 0.1, "{}", m["latency_ms"]);
        let top = m["latency_spectrum"].as_array().and_then(|s| s.last()).unwrap();
        assert!((top["ms"].as_f64().unwrap() - 50.0).abs() < 0.1, "the spectrum too: {top}");
        let t = m["timeline"].as_array().unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!((t[0]["rows"].as_u64(), t[0]["batches"].as_u64()), (Some(200), Some(2)));
        assert_eq!(t[1]["latency_mean_ms"], 3.0);
        assert_eq!(m["merged"]["instances"].as_array().unwrap().len(), 2);
        let text = render(&m);
        assert!(text.contains("Merged run r1: 2 of 2 instances kept, status ok"), "{text}");
        assert!(text.lines().any(|l| l.trim_start().starts_with("rows  ") && l.contains("400")), "{text}");
    }

    /// Each instance's errors by class are added, as its counts are: an
    /// instance 1 whose batches failed made the merged run say nothing of
    /// them (instance 0's own were shown); and a section empty in instance
    /// 0 (no outages) is not named as "instance 0's own".
    #[test]
    fn error_classes_add_and_empty_sections_are_not_named() {
        let mut a = instance(0, 2, "2026-11-24T12:00:00.000Z", 100, &[1_000], "ok");
        let mut b = instance(1, 2, "2026-11-24T12:00:00.000Z", 100, &[1_000], "ok");
        a.report["outages"] = json!([]);
        a.report["error_classes"] = json!([{"class": "SQLSTATE 23505", "count": 1, "example": "dup"}]);
        b.report["outages"] = json!([]);
        b.report["error_classes"] = json!([
            {"class": "SQLSTATE 57014", "count": 5, "example": "cancelled"},
            {"class": "SQLSTATE 23505", "count": 2, "example": "dup again"}
        ]);
        let (m, _) = merge("r1", &[a, b], &[]).unwrap();
        assert_eq!(
            m["error_classes"],
            json!([{"class": "SQLSTATE 23505", "count": 3, "example": "dup"},
                   {"class": "SQLSTATE 57014", "count": 5, "example": "cancelled"}])
        );
        assert_eq!(m["merged"]["not_merged"], json!([]), "{}", m["merged"]);
        assert!(!render(&m).contains("Instance 0's own"), "{}", render(&m));
    }

    /// The table was measured with every instance's rows only by the instance that ended last.
    #[test]
    fn the_server_cost_is_the_last_instance_to_end() {
        let mut a = instance(0, 2, "2026-11-24T12:00:00.000Z", 100, &[1_000], "ok");
        let mut b = instance(1, 2, "2026-11-24T12:00:00.500Z", 300, &[1_000], "ok");
        a.report["wall_s"] = json!(3.0); // ends at 3.0 s
        b.report["wall_s"] = json!(2.6); // ends at 3.1 s
        for (k, rows) in [(&mut a, 250), (&mut b, 400)] {
            k.report["server_cost"] = json!({"table_bytes": rows * 100, "table_rows": rows,
                "nodes": {"nodes": [{"node": "w1:5432", "shards": 4, "replica_shards": null, "rows": rows,
                                     "bytes": rows * 100, "of_mean": 1.0}],
                          "compared": "rows", "skew": null, "unavailable": null}});
        }
        let (m, _) = merge("r1", &[a, b], &[]).unwrap();
        assert_eq!(m["server_cost"]["table_rows"], 400);
        assert_eq!(m["server_cost"]["nodes"]["nodes"][0]["rows"], 400);
        assert_eq!(m["merged"]["server_cost_of"], 1);
        let text = render(&m);
        assert!(text.contains("measured by instance 1 (the last to end):\nPer node:\n"), "{text}");
        assert!(text.lines().any(|l| l.trim_start().starts_with("w1:5432") && l.contains("400")), "{text}");
        // A query run's server cost (its statements) stays instance 0's.
        let mut q = instance(0, 1, "2026-11-24T12:00:00.000Z", 100, &[1_000], "ok");
        q.report["server_cost"] = json!({"statements": []});
        let (m, _) = merge("r1", &[q], &[]).unwrap();
        assert!(m["merged"].get("server_cost_of").is_none(), "{}", m["merged"]);
    }

    /// `dbload http`: the failed share is failed requests over all requests.
    #[test]
    fn the_failed_share_of_requests_is_weighed_by_requests() {
        let mut a = instance(0, 2, "2026-11-24T12:00:00.000Z", 0, &[1_000], "ok");
        let mut b = instance(1, 2, "2026-11-24T12:00:00.000Z", 0, &[1_000], "ok");
        for (k, reqs, rate) in [(&mut a, 100, 0.1), (&mut b, 300, 0.0)] {
            k.report["http_reqs"] = json!(reqs);
            k.report["http_reqs_per_sec"] = json!(reqs as f64 / 2.0);
            k.report["http_req_failed_rate"] = json!(rate);
        }
        let (m, _) = merge("r1", &[a, b], &[]).unwrap();
        assert_eq!((m["http_reqs"].as_u64(), m["http_reqs_per_sec"].as_f64()), (Some(400), Some(200.0)));
        assert!((m["http_req_failed_rate"].as_f64().unwrap() - 0.025).abs() < 1e-12, "{}", m["http_req_failed_rate"]);
    }

    #[test]
    fn a_missing_or_failed_instance_fails_the_merged_run_and_is_named() {
        let a = instance(0, 3, "2026-11-24T12:00:00.000Z", 100, &[1_000], "ok");
        let b = instance(1, 3, "2026-11-24T12:00:00.000Z", 100, &[1_000], "failed");
        let (m, code) = merge("r1", &[a, b], &[]).unwrap();
        assert_eq!((m["status"].as_str(), code), (Some("failed"), 1));
        assert_eq!(m["merged"]["missing"][0]["index"], 2);
        let text = render(&m);
        assert!(text.contains("instance 2: no kept run (not registered)"), "{text}");
        assert!(text.contains("instance 1 (run-1): failed, exit 1"), "{text}");
        assert!(merge("r9", &[], &[]).unwrap_err().to_string().contains("--run-id r9"));
    }
}
