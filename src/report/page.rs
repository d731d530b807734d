//! What the HTML pages say around their figures and charts: the header
//! (what ran, when, where, and its verdict) and the setup as labelled rows,
//! so that a page sent to a team reads without the JSON's field names. Built
//! from a report's JSON form, like the rest of the page; `html.rs` draws the
//! charts.

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use minijinja::{Environment, Error, ErrorKind};
use serde::Serialize;
use serde_json::Value as Json;

use crate::format::{human, slowdown, Unit};

/// The header every page starts with, a template the pages import.
const HEADER: &str = include_str!("../../templates/header.html.j2");

/// The template environment of a page (`name` ending in `.html.j2`, which
/// turns autoescaping on): its template, the shared header, and the one
/// formatting filter every figure goes through (`{{ v|unit("ms") }}`),
/// with `slowdown` for a figure under load against the same alone.
pub(super) fn environment(name: &'static str, template: &'static str) -> Result<Environment<'static>> {
    let mut env = Environment::new();
    env.add_template("header.html.j2", HEADER).context("the pages' header template")?;
    env.add_template(name, template).with_context(|| format!("the template {name}"))?;
    env.add_filter("unit", |v: Option<f64>, unit: &str| -> Result<String, Error> {
        let unit: Unit = unit.parse().map_err(|e: String| Error::new(ErrorKind::InvalidOperation, e))?;
        Ok(human(v, unit))
    });
    env.add_filter("slowdown", slowdown);
    Ok(env)
}

/// The top of every page.
#[derive(Debug, Serialize)]
pub(super) struct Header {
    /// `dbload ingest`.
    pub(super) title: String,
    /// What: the command line as the JSON's `run` holds it (secrets redacted).
    pub(super) command_line: Option<String>,
    /// When: `2026-11-24 12:51:43 UTC`, and how long the command took.
    pub(super) started: Option<String>,
    pub(super) duration: Option<String>,
    /// Where: the client host, and the target the load went to.
    pub(super) client: Option<String>,
    pub(super) target: Option<String>,
    /// `postgres 15.20`, with TimescaleDB's or Citus' extension version.
    pub(super) engine: Option<String>,
    /// `host:port` as the server sees itself (behind a proxy or NAT, not
    /// the name dialled); CrateDB's nodes.
    pub(super) address: Option<String>,
    pub(super) verdict: StatusBadge,
    pub(super) run_id: Option<String>,
    pub(super) dbload: Option<String>,
}

/// The outcome, as the coloured badge says it.
#[derive(Debug, Serialize)]
pub(super) struct StatusBadge {
    /// The badge's colour: `ok`, `failed` or `interrupted`.
    pub(super) class: &'static str,
    /// `ok`, `failed operations`, `interrupted` ...
    pub(super) label: String,
    pub(super) exit_code: Option<u64>,
}

impl Header {
    /// The header of a report's page, `json` being the report (with its
    /// `run` object when it has one).
    pub(super) fn of(json: &Json, title: String) -> Header {
        let run = &json["run"];
        let text = |v: &Json| v.as_str().map(str::to_string);
        let (started, ended) = (time(&run["started_at"]), time(&run["ended_at"]));
        let server = server(json);
        let client = &run["client"];
        Header {
            title,
            command_line: text(&run["command_line"]),
            started: started.map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string()),
            duration: started.zip(ended).map(|(a, b)| human(Some((b - a).num_milliseconds() as f64), Unit::Ms)),
            client: client["host_name"].as_str().map(|host| {
                let cpus = client["cpus"].as_u64().map(|n| format!(", {n} CPUs")).unwrap_or_default();
                let memory = client["memory_bytes"]
                    .as_f64()
                    .map(|b| format!(", {}", human(Some(b), Unit::Bytes)))
                    .unwrap_or_default();
                format!("{host} ({}{cpus}{memory})", client["os"].as_str().unwrap_or("unknown OS"))
            }),
            target: server.and_then(|s| match s["target_kind"].as_str() {
                Some("none") => Some("none (dry run: generated and encoded, nothing sent)".into()),
                Some("throwaway") => text(&s["target"]).map(|t| format!("{t} (a throwaway PostgreSQL)")),
                _ => text(&s["target"]),
            }),
            engine: server.and_then(|s| {
                let engine = s["engine"].as_str()?;
                let version = [&s["server_version"], &s["engine_version"]]
                    .into_iter()
                    .filter_map(Json::as_str)
                    .collect::<Vec<_>>()
                    .join(", extension ");
                Some(if version.is_empty() { engine.to_string() } else { format!("{engine} {version}") })
            }),
            address: server.and_then(|s| text(&s["server_address"])),
            verdict: StatusBadge::of(json),
            run_id: text(&run["run_id"]).or_else(|| text(&json["sweep_id"])),
            dbload: text(&json["dbload_version"])
                .map(|v| format!("dbload {v}, report schema {}", json["schema_version"])),
        }
    }
}

impl StatusBadge {
    fn of(json: &Json) -> StatusBadge {
        let status = json["status"].as_str().unwrap_or("unknown");
        let (class, label) = match status {
            "ok" => ("ok", "ok"),
            "failed" => ("failed", "failed operations"),
            "interrupted" => ("interrupted", "interrupted"),
            "no_point" => ("failed", "no point met the conditions"),
            other => ("failed", other),
        };
        StatusBadge { class, label: label.into(), exit_code: json["exit_code"].as_u64() }
    }
}

fn time(v: &Json) -> Option<DateTime<Utc>> {
    Some(DateTime::parse_from_rfc3339(v.as_str()?).ok()?.with_timezone(&Utc))
}

/// The server a report's load went to: its setup's (flattened into it, or
/// an export's source), or the first part's of `dbload run`.
fn server(json: &Json) -> Option<&Json> {
    ["/setup/source", "/setup", "/ingest/setup", "/workloads/0/under_load/setup"]
        .into_iter()
        .filter_map(|p| json.pointer(p))
        .find(|s| s["target"].is_string() || s["target_kind"] == "none")
}

/// A labelled row of the setup.
#[derive(Debug, Serialize, PartialEq)]
pub(super) struct Row {
    pub(super) label: String,
    pub(super) value: String,
}

/// A setup as the page shows it: the options that were set, then (folded)
/// the details a run derives or draws (columns, seed, data start).
#[derive(Debug, Serialize)]
pub(super) struct SetupRows {
    /// `Ingest` or `Workload dashboards` on `dbload run`'s page; none otherwise.
    pub(super) title: Option<String>,
    pub(super) rows: Vec<Row>,
    pub(super) details: Vec<Row>,
}

/// Fields shown elsewhere on the page: the header's target and engine, the
/// server settings' and the DDL's own blocks.
const ELSEWHERE: &[&str] = &[
    "target",
    "target_kind",
    "engine",
    "engine_version",
    "server_version",
    "server_address",
    "source",
    "server_settings",
    "worker_settings",
    "not_durable",
    "ddl",
];

/// What a run derives or draws rather than what the user chose: folded.
const DETAILS: &[&str] = &[
    "columns",
    "data_start",
    "devices_per_worker",
    "metrics_per_row",
    "insert_rows_per_statement",
    "rows_estimate",
    "seed",
    "threads",
    "layout",
    "table_action",
    "tls",
];

/// Setup fields whose `false` says something (the default is `true`).
const SAID_WHEN_FALSE: &[&str] = &["keepalive", "tls_verified"];

/// The order of the rows: what was loaded and how first, then how much and
/// how fast; fields not listed follow in their JSON order.
const ORDER: &[&str] = &[
    "model",
    "method",
    "upsert",
    "suite",
    "protocol",
    "table",
    "query",
    "format",
    "gzip",
    "out_dir",
    "workers",
    "concurrency",
    "vus",
    "batch_size",
    "rate_rows_per_sec",
    "rate_queries_per_sec",
    "rate_per_sec",
    "stages",
    "rows_limit",
    "max_queries",
    "iterations_limit",
    "duration_limit_s",
    "warmup",
];

impl SetupRows {
    pub(super) fn of(title: Option<String>, setup: &Json) -> SetupRows {
        let cpu = setup["model"] == "cpu";
        let https = setup["tls"] == true;
        // The table flags given (`table_options`) are rows of their own.
        let fields = setup.as_object().into_iter().flatten().flat_map(|(key, v)| match (key.as_str(), v) {
            ("table_options", Json::Object(options)) => options.iter().collect(),
            _ => vec![(key, v)],
        });
        let mut shown: Vec<(&str, Row)> = fields
            // Whether TLS was verified says something only over TLS.
            .filter(|(key, _)| !ELSEWHERE.contains(&key.as_str()) && (*key != "tls_verified" || https))
            .filter_map(|(key, v)| {
                let value = match v {
                    Json::Bool(false) if SAID_WHEN_FALSE.contains(&key.as_str()) => Some("no".into()),
                    _ => value(key, v),
                }?;
                Some((key.as_str(), Row { label: label(key, cpu), value }))
            })
            .collect();
        shown.sort_by_key(|(key, _)| ORDER.iter().position(|k| k == key).unwrap_or(ORDER.len()));
        let (details, rows): (Vec<_>, Vec<_>) = shown.into_iter().partition(|(key, _)| DETAILS.contains(key));
        let unkeyed = |v: Vec<(&str, Row)>| v.into_iter().map(|(_, r)| r).collect();
        SetupRows { title, rows: unkeyed(rows), details: unkeyed(details) }
    }
}

/// A field's label: the words a reader would use, not the JSON's key.
fn label(key: &str, cpu_model: bool) -> String {
    let known = match key {
        "batch_size" => "Batch size",
        "rows_limit" => "Rows",
        "duration_limit_s" => "Duration",
        "max_queries" => "Queries",
        "iterations_limit" => "Iterations",
        "rate_rows_per_sec" | "rate_queries_per_sec" | "rate_per_sec" => "Rate",
        "warmup" => "Warm-up",
        "upsert" => "Upsert (ON CONFLICT)",
        "dry_run" => "Dry run",
        "insert_rows_per_statement" => "Rows per INSERT",
        "devices_per_worker" if cpu_model => "Hosts per worker",
        "explain" => "Plans (EXPLAIN)",
        "per_statement" => "Per-statement latency",
        "tls_unverified" => "TLS certificate not verified",
        "tls" => "TLS",
        "tls_verified" => "TLS certificate verified",
        "vus" => "VUs",
        "keepalive" => "Keep-alive",
        "sleep_s" => "Sleep between requests",
        "timeout_s" => "Timeout",
        "out_dir" => "Output directory",
        "rows_estimate" => "Rows (estimate)",
        "gzip" => "Gzip",
        "data_start" => "Data starts at",
        "chunk_interval" => "Chunk interval",
        "no_hypertables" => "No hypertables",
        "reference_table" => "Reference table",
        "unlogged" => "Unlogged table",
        "compress" => "Compressed after the load",
        _ => "",
    };
    if !known.is_empty() {
        return known.into();
    }
    let words = key.trim_end_matches("_s").replace('_', " ");
    let mut chars = words.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// A field's value for a reader, or none for a field that was not set
/// (null, `false`, empty, `none`).
fn value(key: &str, v: &Json) -> Option<String> {
    let per_sec = |unit: &str| v.as_f64().map(|r| format!("{} {unit}/s", human(Some(r), Unit::Rate)));
    match v {
        Json::Null | Json::Bool(false) => None,
        Json::Bool(true) => Some("yes".into()),
        Json::String(s) if s.is_empty() || s == "none" => None,
        Json::String(s) => Some(s.clone()),
        Json::Number(_) => match key {
            "rate_rows_per_sec" => per_sec("rows"),
            "rate_queries_per_sec" => per_sec("queries"),
            "rate_per_sec" => per_sec("requests"),
            // `--warmup 1s` is `{"duration": 1.0}`: seconds, as the `_s` fields.
            "chunk_interval" | "duration" => v.as_f64().map(|s| human(Some(s), Unit::S)),
            k if k.ends_with("_s") => v.as_f64().map(|s| human(Some(s), Unit::S)),
            // An identifier, not an amount: no grouping.
            "seed" => Some(v.to_string()),
            _ => v.as_f64().map(|n| human(Some(n), Unit::Count)),
        },
        Json::Array(items) => {
            let items: Vec<String> = items.iter().filter_map(|x| value(key, x)).collect();
            (!items.is_empty()).then(|| items.join("\n"))
        }
        Json::Object(map) => {
            let pairs: Vec<String> = map.iter().filter_map(|(k, x)| Some(format!("{k}: {}", value(k, x)?))).collect();
            (!pairs.is_empty()).then(|| pairs.join("\n"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(rows: &[Row]) -> Vec<&str> {
        rows.iter().map(|r| r.label.as_str()).collect()
    }

    #[test]
    fn setup_rows_are_the_options_set_with_labels_and_units() {
        let setup = json!({
            "target": "postgres://app:***@db/bench", "target_kind": "server", "engine": "postgres",
            "model": "cpu", "method": "copy", "upsert": false, "batch_size": 10000, "workers": 2,
            "rate_rows_per_sec": 25000.0, "duration_limit_s": 40.566, "rows_limit": null, "stages": null,
            "warmup": "none", "seed": 12345, "devices_per_worker": 10, "layout": {}, "dry_run": false,
            "table_options": {"shards": null, "unlogged": true, "chunk_interval": 3600, "no_hypertables": false},
            "server_settings": {"fsync": "off"}, "ddl": ["CREATE TABLE x ()"]
        });
        let s = SetupRows::of(None, &setup);
        assert_eq!(
            s.rows,
            [
                Row { label: "Model".into(), value: "cpu".into() },
                Row { label: "Method".into(), value: "copy".into() },
                Row { label: "Workers".into(), value: "2".into() },
                Row { label: "Batch size".into(), value: "10,000".into() },
                Row { label: "Rate".into(), value: "25,000 rows/s".into() },
                Row { label: "Duration".into(), value: "40.6 s".into() },
                Row { label: "Chunk interval".into(), value: "1 h 00 min".into() },
                Row { label: "Unlogged table".into(), value: "yes".into() },
            ]
        );
        assert_eq!(labels(&s.details), ["Hosts per worker", "Seed"], "the cpu model speaks of hosts");
        assert_eq!(s.details[1].value, "12345");
    }

    #[test]
    fn a_false_that_says_something_is_shown() {
        let s = SetupRows::of(None, &json!({"keepalive": false, "tls": false, "tls_verified": false, "vus": 30}));
        assert_eq!(labels(&s.rows), ["VUs", "Keep-alive"]);
        assert_eq!(s.rows[1].value, "no");
        let s = SetupRows::of(None, &json!({"tls": true, "tls_verified": false}));
        assert_eq!(s.rows, [Row { label: "TLS certificate verified".into(), value: "no".into() }]);
        assert_eq!(labels(&s.details), ["TLS"]);
    }

    /// `--warmup 1s` is `{"duration": 1.0}` in the setup: seconds, not a count.
    #[test]
    fn a_warm_up_by_time_reads_in_seconds() {
        let s = SetupRows::of(None, &json!({"warmup": {"duration": 1.0}}));
        assert_eq!(s.rows, [Row { label: "Warm-up".into(), value: "duration: 1.00 s".into() }]);
    }

    #[test]
    fn unknown_fields_get_words_not_snake_case() {
        assert_eq!(label("some_new_field_s", false), "Some new field");
        let s = SetupRows::of(None, &json!({"headers": ["A: b", "C: d"], "per_statement": true}));
        assert_eq!(s.rows[0], Row { label: "Headers".into(), value: "A: b\nC: d".into() });
        assert_eq!(s.rows[1].label, "Per-statement latency");
    }

    #[test]
    fn the_header_says_what_when_where_and_the_verdict() {
        let report = json!({
            "command": "ingest", "status": "failed", "exit_code": 1, "dbload_version": "0.1.0", "schema_version": 2,
            "setup": {"target": "postgres://app:***@db/bench", "target_kind": "server", "engine": "timescaledb",
                      "server_version": "16.4", "engine_version": "2.17.0", "server_address": "10.0.0.5:5432"},
            "run": {"command_line": "dbload ingest --url postgres://app:***@db/bench", "run_id": "r1",
                    "started_at": "2026-11-24T08:20:41.123Z", "ended_at": "2026-11-24T08:21:21.689Z",
                    "client": {"host_name": "loadgen", "os": "linux 6.1", "cpus": 2, "memory_bytes": 8589934592u64}}
        });
        let h = Header::of(&report, "dbload ingest".into());
        assert_eq!(h.command_line.as_deref(), Some("dbload ingest --url postgres://app:***@db/bench"));
        assert_eq!(h.started.as_deref(), Some("2026-11-24 08:20:41 UTC"));
        assert_eq!(h.duration.as_deref(), Some("40.6 s"));
        assert_eq!(h.client.as_deref(), Some("loadgen (linux 6.1, 2 CPUs, 8.0 GiB)"));
        assert_eq!(h.target.as_deref(), Some("postgres://app:***@db/bench"));
        assert_eq!(h.engine.as_deref(), Some("timescaledb 16.4, extension 2.17.0"));
        assert_eq!(h.address.as_deref(), Some("10.0.0.5:5432"), "the address the server answered on");
        assert_eq!(
            (h.verdict.class, h.verdict.label.as_str(), h.verdict.exit_code),
            ("failed", "failed operations", Some(1))
        );
    }
}
