//! `dbload results show ID`: a kept run printed again as its command
//! printed it. The kept JSON is read back into its command's report type
//! and handed to that command's own text renderer (one renderer per report
//! kind), then the repeat table (`--runs`) and the run's metadata, as the
//! run printed them. A report kept by an older dbload renders what it has,
//! after a line naming what it lacks; one that cannot be read back at all
//! is said so, with why, and printed as JSON.

use anyhow::{Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value as Json;

use crate::report::{self, meta::RunMeta, repeat::RepeatReport};

/// The text report of the kept `report`, or, when it cannot be read back,
/// why, followed by its JSON.
pub fn text(report: &Json) -> String {
    match rendered(report) {
        Ok(shown) => shown,
        Err(e) => format!(
            "This kept report cannot be shown as text ({e:#}); its JSON report follows.\n{}\n",
            serde_json::to_string_pretty(report).unwrap_or_default()
        ),
    }
}

fn rendered(report: &Json) -> Result<String> {
    let command = report.get("command").and_then(Json::as_str).context("it names no command")?;
    let mut lacks = Vec::new();
    let body = match command {
        "timeit" | "workload" => {
            let r: report::query::QueryReport = read(report, &mut lacks)?;
            match (command, r.transactions.is_some()) {
                ("timeit", true) => report::pgbench::render(&r),
                ("timeit", false) => report::query::render_timeit(&r),
                _ if r.setup.global_results => report::node_ingest::render_workload(&r),
                _ => report::query::render_workload(&r),
            }
        }
        "http" => report::http::render(&read(report, &mut lacks)?),
        "k6" => report::k6::render(&read(report, &mut lacks)?),
        "run" => report::mixed::render(&read(report, &mut lacks)?),
        "export" | "insert-from-sql" => report::transfer::render(&read(report, &mut lacks)?),
        "sweep" => report::sweep::render(&read(report, &mut lacks)?),
        _ => {
            let r: report::ingest::IngestReport = read(report, &mut lacks)?;
            match r.setup.global_results {
                true => report::ingest::render_with_global_results(&r),
                false => report::ingest::render(&r),
            }
        }
    };
    let repeated = match report.get("repeat") {
        Some(repeat) => report::repeat::render(&RepeatReport::kept(repeat, report).context("its repeat section")?),
        None => String::new(),
    };
    let meta = match report.get("run") {
        Some(run) => report::meta::render(&read::<RunMeta>(run, &mut lacks).context("its run section")?),
        None => String::new(),
    };
    let head = match lacks.is_empty() {
        true => String::new(),
        false => format!(
            "Kept by dbload {} with report schema {}: it lacks {} (shown as none).\n",
            report.get("dbload_version").and_then(Json::as_str).unwrap_or("?"),
            report.get("schema_version").map_or("?".into(), Json::to_string),
            lacks.join(", ")
        ),
    };
    Ok(format!("{head}{body}{repeated}{meta}"))
}

/// `kept` read back as an `R`, adding to `lacks` the fields `R` has that
/// `kept` does not (those its dbload did not yet write).
fn read<R: DeserializeOwned + Serialize>(kept: &Json, lacks: &mut Vec<String>) -> Result<R> {
    let r: R = serde_json::from_value(kept.clone())?;
    missing("", &serde_json::to_value(&r)?, kept, lacks);
    Ok(r)
}

/// The keys of `full` (recursing into objects) that `kept` lacks, as JSON paths.
fn missing(at: &str, full: &Json, kept: &Json, found: &mut Vec<String>) {
    let Json::Object(full) = full else { return };
    for (key, value) in full {
        let path = if at.is_empty() { key.clone() } else { format!("{at}.{key}") };
        match kept.get(key) {
            None => found.push(path),
            Some(kept) => missing(&path, value, kept, found),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report of a timeit run, as the fixtures make it, with its run.
    fn kept_timeit() -> Json {
        let mut json = serde_json::to_value(report::fixtures::timeit(&["-s", "select 1", "--repeat", "3"])).unwrap();
        let meta = report::meta::RunStart::now("dbload timeit -s 'select 1' --repeat 3".into()).end();
        json["run"] = serde_json::to_value(meta).unwrap();
        json
    }

    #[test]
    fn a_kept_run_renders_as_its_command_printed_it() {
        let json = kept_timeit();
        let r: report::query::QueryReport = serde_json::from_value(json.clone()).unwrap();
        let meta: RunMeta = serde_json::from_value(json["run"].clone()).unwrap();
        let printed = report::query::render_timeit(&r) + &report::meta::render(&meta);
        assert_eq!(text(&json), printed);
    }

    #[test]
    fn an_older_schema_renders_what_it_has_and_names_what_it_lacks() {
        let mut json = kept_timeit();
        json["schema_version"] = 1.into();
        json.as_object_mut().unwrap().remove("above_latency_limit");
        json.as_object_mut().unwrap().remove("tps");
        let shown = text(&json);
        let first = shown.lines().next().unwrap();
        assert!(first.starts_with("Kept by dbload") && first.contains("schema 1"), "{shown}");
        assert!(first.contains("above_latency_limit, tps"), "{first}");
    }

    #[test]
    fn a_report_that_cannot_be_read_back_is_said_so_and_printed_as_json() {
        let mut json = kept_timeit();
        json.as_object_mut().unwrap().remove("accounting");
        let shown = text(&json);
        assert!(shown.starts_with("This kept report cannot be shown as text (missing field `accounting`"), "{shown}");
        assert!(shown.contains("\"command\": \"timeit\""), "{shown}");
    }
}
