//! The results store: every finished run kept, so that runs can be listed,
//! shown and compared later. By default a directory in the user's data
//! directory (`dir.rs`: one JSON report and one HdrHistogram interval log
//! per run, named by its run_id); with `--results-url`, also tables in a
//! PostgreSQL-family database (`db.rs`), which a team can query and chart.
//!
//! Keeping a run is the last thing a command does, after its report is
//! written: a store that fails is a warning on stderr naming where and why,
//! and never changes the run's exit code (the measurement stands; only its
//! copy is missing). `docs/results.md` describes both stores.

mod db;
mod dir;
pub mod hlog;
pub mod list;
pub mod merge;
pub mod schema;
mod show;

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value as Json;

use crate::config::results::{ResultsConfig, Store};
use crate::report::meta::RunMeta;

pub use hlog::KeptHistograms;
pub use list::{Filter, Listed};

/// A finished run as the stores keep it.
pub struct Run<'a> {
    pub meta: &'a RunMeta,
    /// The whole report (with its `run` object), as `--output json` prints it.
    pub report: &'a Json,
    pub latencies: &'a KeptHistograms,
}

/// Keeps `run` where `cfg` says; returns the lines that end the text report
/// (where it was kept, or why not). A store that fails is warned about on
/// stderr, and the run goes on to the next store.
pub fn keep(cfg: &ResultsConfig, run: &Run) -> Vec<String> {
    let mut lines = Vec::new();
    let log = hlog::write(run.latencies, run.meta);
    match &cfg.dir {
        Ok(d) => match dir::keep(d, run, &log) {
            Ok(path) => lines.push(format!("Kept:     {}", path.display())),
            Err(e) => lines.push(warn(&format!("in {}", d.display()), &e)),
        },
        Err(why) => lines.push(format!("Kept:     not in a results directory ({why})")),
    }
    if let Some(target) = &cfg.url {
        match db::keep(target, run, &log) {
            Ok(()) => lines.push(format!("Kept:     in dbload_runs of {}", target.redacted())),
            Err(e) => lines.push(warn(&format!("in the database {} (--results-url)", target.redacted()), &e)),
        }
    }
    lines
}

fn warn(place: &str, e: &anyhow::Error) -> String {
    crate::console::line(format_args!("dbload: warning: the run was not kept {place}: {e:#}"));
    format!("Not kept: {place} (see the warning on stderr)")
}

/// `dbload results list`: the newest `limit` runs of `store` that
/// `filter` lets through, as a table.
pub fn list(store: &Store, filter: &Filter, limit: usize) -> Result<String> {
    let runs = match store {
        Store::Dir(d) => dir::list(d, filter, limit)?,
        Store::Db(t) => db::list(t, filter, limit)?,
    };
    let listed: Vec<Listed> = runs.into_iter().map(|(id, report)| Listed::of(id, &report)).collect();
    Ok(list::table(&listed))
}

/// `dbload results show ID`: the one run whose id starts with `id`: its
/// text report (as the run printed it, see `show.rs`), its JSON report
/// with `json`, or (`histograms`) its interval log; with `html`, its page
/// written there too.
pub fn show(store: &Store, id: &str, histograms: bool, json: bool, html: Option<&Path>) -> Result<String> {
    let kept = fetch(store, id, "results show")?;
    if let Some(path) = html {
        crate::report::html::write_file(&kept.report, path)?;
    }
    Ok(match (histograms, json) {
        (true, _) => kept.log,
        (false, false) => show::text(&kept.report),
        (false, true) => serde_json::to_string_pretty(&kept.report)? + "\n",
    })
}

/// A kept run as `dbload compare` reads it.
pub struct Kept {
    pub run_id: String,
    pub report: Json,
    /// Its HdrHistogram interval log ("" when none was kept).
    pub log: String,
}

/// The one run of `store` whose id starts with `id`; `who` (`results
/// show`, `compare`) heads the usage error for an id that is not one, or
/// names no run or several.
pub fn fetch(store: &Store, id: &str, who: &str) -> Result<Kept> {
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        return Err(crate::error::usage(format!(
            "{who} {id}: not a run_id (hex digits and dashes, as `dbload results list` shows them)"
        )));
    }
    let (run_id, report, log) = match store {
        Store::Dir(d) => dir::show(d, id, who)?,
        Store::Db(t) => db::show(t, id, who)?,
    };
    let report = serde_json::from_str(&report).with_context(|| format!("the stored report of {run_id}"))?;
    Ok(Kept { run_id, report, log })
}

/// `dbload report --run-id ID`: the instances of the distributed run
/// `run_id` kept in `store`, merged (see `merge.rs`); the merged report's
/// JSON and its exit code.
pub fn merged(store: &Store, run_id: &str) -> Result<(Json, u8)> {
    let (kept, registered) = match store {
        Store::Dir(d) => (dir::instances(d, run_id)?, Vec::new()),
        Store::Db(t) => db::instances(t, run_id)?,
    };
    if kept.is_empty() && !registered.is_empty() {
        let each: Vec<String> = registered
            .iter()
            .map(|r| {
                format!(
                    "{} on {} {}{}",
                    r.instance,
                    r.host,
                    r.status,
                    r.note.as_ref().map_or(String::new(), |n| format!(" ({n})"))
                )
            })
            .collect();
        anyhow::bail!("report --run-id {run_id}: no instance kept a run; registered: {}", each.join("; "));
    }
    if kept.is_empty() {
        return Err(crate::error::usage(format!(
            "report --run-id {run_id}: no instance of that run is kept in {} (started with --instance and this --run-id?)",
            match store {
                Store::Dir(d) => d.display().to_string(),
                Store::Db(t) => t.redacted().to_string(),
            }
        )));
    }
    let lines: Vec<(u32, &str)> = kept
        .iter()
        .map(|k| {
            let index = k.report.pointer("/run/instance/index").and_then(Json::as_u64).unwrap_or(0) as u32;
            (index, k.report.pointer("/run/command_line").and_then(Json::as_str).unwrap_or_default())
        })
        .collect();
    let differing = crate::config::scale::differing_options(&lines);
    if !differing.is_empty() {
        return Err(crate::error::usage(format!(
            "report --run-id {run_id}: its instances were started with different options, so their merge would \
             report a run nobody made: {}; start every instance with the same options",
            differing.join("; ")
        )));
    }
    merge::merge(run_id, &kept, &registered)
}

/// The newest `n` runs of `store`, oldest first (`compare --last N`).
pub fn last(store: &Store, n: usize) -> Result<Vec<Kept>> {
    let listed = match store {
        Store::Dir(d) => dir::list(d, &Filter::default(), n)?,
        Store::Db(t) => db::list(t, &Filter::default(), n)?,
    };
    listed.iter().rev().map(|(run_id, _)| fetch(store, run_id, "compare --last")).collect()
}

/// The figures a run is listed and compared by, read from its JSON report
/// (the same for every command: rows/s, queries/s or requests/s, and
/// latency); a mixed run's are its ingest's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Headline {
    pub throughput: Option<f64>,
    pub unit: Option<&'static str>,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub p99_9_ms: Option<f64>,
    pub errors: Option<i64>,
    pub client_cpu_s: Option<f64>,
}

impl Headline {
    pub fn of(report: &Json) -> Headline {
        let scope = if report.get("ingest").is_some_and(Json::is_object) { &report["ingest"] } else { report };
        let rate = [("rows_per_sec", "rows/s"), ("qps", "queries/s"), ("http_reqs_per_sec", "requests/s")]
            .into_iter()
            .find_map(|(key, unit)| Some((scope.get(key)?.as_f64()?, unit)));
        let latency = |p: &str| scope.get("latency_ms")?.get(p)?.as_f64();
        Headline {
            throughput: rate.map(|r| r.0),
            unit: rate.map(|r| r.1),
            p50_ms: latency("p50"),
            p95_ms: latency("p95"),
            p99_ms: latency("p99"),
            p99_9_ms: latency("p99_9"),
            errors: scope.get("errors").and_then(Json::as_i64),
            client_cpu_s: scope.get("client_cpu_s").and_then(Json::as_f64),
        }
    }
}

/// Every per-second series of a report: (where it is, as a JSON pointer to
/// its parent, "" for the report itself; its entries). A mixed run has one
/// per part.
pub fn timelines(report: &Json) -> Vec<(String, &Vec<Json>)> {
    found(report, &|key, v| match (key, v) {
        ("timeline", Json::Array(entries)) => Some(entries),
        _ => None,
    })
}

/// Every Server section's seconds (`server.seconds`) of a report, by
/// part as [`timelines`] names them.
pub fn server_seconds(report: &Json) -> Vec<(String, &Vec<Json>)> {
    found(report, &|key, v| match (key, v.get("seconds")) {
        ("server", Some(Json::Array(seconds))) => Some(seconds),
        _ => None,
    })
}

/// The arrays `pick` finds under a key of `report`'s objects (the key and
/// its value given), each with the pointer to its parent; not looked into.
fn found<'a>(report: &'a Json, pick: &dyn Fn(&str, &'a Json) -> Option<&'a Vec<Json>>) -> Vec<(String, &'a Vec<Json>)> {
    fn walk<'a>(
        at: &str,
        v: &'a Json,
        pick: &dyn Fn(&str, &'a Json) -> Option<&'a Vec<Json>>,
        found: &mut Vec<(String, &'a Vec<Json>)>,
    ) {
        match v {
            Json::Object(map) => {
                for (k, v) in map {
                    match pick(k, v) {
                        Some(entries) => found.push((at.to_string(), entries)),
                        None => walk(&format!("{at}/{k}"), v, pick, found),
                    }
                }
            }
            Json::Array(items) => {
                items.iter().enumerate().for_each(|(i, v)| walk(&format!("{at}/{i}"), v, pick, found))
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk("", report, pick, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn headline_figures_of_each_report_kind() {
        let ingest = json!({"rows_per_sec": 1000.5, "errors": 2, "client_cpu_s": 0.5, "latency_ms": {"p50": 1.0, "p95": 2.0, "p99": 3.0, "p99_9": 4.0}});
        let h = Headline::of(&ingest);
        assert_eq!((h.throughput, h.unit, h.p99_ms, h.errors), (Some(1000.5), Some("rows/s"), Some(3.0), Some(2)));
        assert_eq!(Headline::of(&json!({"qps": 5.0})).unit, Some("queries/s"));
        assert_eq!(Headline::of(&json!({"http_reqs_per_sec": 5.0})).unit, Some("requests/s"));
        assert_eq!(Headline::of(&json!({"ingest": {"rows_per_sec": 7.0}})).throughput, Some(7.0));
        assert_eq!(Headline::of(&json!({"ingest": null})), Headline::default());
    }

    #[test]
    fn timelines_are_found_in_every_part() {
        let r = json!({"timeline": [{"second": 0}], "ingest": {"timeline": []}, "workloads": [{"under_load": {"timeline": [{}, {}]}}]});
        let found: Vec<(String, usize)> = timelines(&r).into_iter().map(|(p, t)| (p, t.len())).collect();
        assert_eq!(found, [("/ingest".into(), 0), ("".into(), 1), ("/workloads/0/under_load".into(), 2)]);
    }

    /// The server's seconds (a report's `server` section) are not a part
    /// of the run: `dbload_timeline` would get a part of zero rows.
    #[test]
    fn the_server_sections_seconds_are_not_a_part_of_the_run() {
        use crate::stats::server::{ServerSecond, ServerTimeline};
        let mut figures = crate::report::fixtures::figures(vec![crate::stats::Recorder::default()]);
        let seconds = vec![Some(ServerSecond::default()); 2];
        figures.server = Some(ServerTimeline { seconds, ..ServerTimeline::default() });
        let server = crate::report::server::ServerReport::of(&figures);
        let r = json!({"timeline": [{"second": 0}], "server": server});
        let found: Vec<String> = timelines(&r).into_iter().map(|(p, _)| p).collect();
        assert_eq!(found, [""]);
        let found: Vec<(String, usize)> = server_seconds(&r).into_iter().map(|(p, s)| (p, s.len())).collect();
        assert_eq!(found, [("".to_string(), 2)]);
    }
}
