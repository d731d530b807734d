//! `--runs N`: what repeated runs of one configuration found, beside the
//! last run's own report: each run's headline figures, and per figure the
//! median, min, max and a 95 % interval of the median (order statistics,
//! `stats::repeat`). Built from the runs' reports in their JSON form, so it
//! is the same for every command; `dbload compare` reads it back.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value as Json;

use crate::config::Repeat;
use crate::error::{exit, exit_code};
use crate::stats::repeat::Spread;

use super::table::columns;
use super::{Status, Verdict};

/// Which way a figure is better (`compare`'s JSON: `higher`, `lower`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

/// A headline figure: its name (as `--fail-if` and `compare` know it), where
/// a report's JSON holds it, and which way is better.
#[derive(Debug, Clone, Copy)]
pub struct Headline {
    pub name: &'static str,
    pub pointer: &'static str,
    pub better: Better,
    /// As the text tables head it.
    pub label: &'static str,
}

const fn headline(name: &'static str, pointer: &'static str, better: Better, label: &'static str) -> Headline {
    Headline { name, pointer, better, label }
}

/// The figures a repeat summarises and `compare` weighs, in the order they
/// are shown. A report has those of its command (rows/s, queries/s or
/// requests/s), and latency once something completed.
pub const HEADLINES: [Headline; 9] = [
    headline("rows_per_sec", "/rows_per_sec", Better::Higher, "rows/s"),
    headline("qps", "/qps", Better::Higher, "queries/s"),
    headline("http_reqs_per_sec", "/http_reqs_per_sec", Better::Higher, "requests/s"),
    headline("p50_ms", "/latency_ms/p50", Better::Lower, "p50 ms"),
    headline("p95_ms", "/latency_ms/p95", Better::Lower, "p95 ms"),
    headline("p99_ms", "/latency_ms/p99", Better::Lower, "p99 ms"),
    headline("p99_9_ms", "/latency_ms/p99_9", Better::Lower, "p99.9 ms"),
    headline("errors", "/errors", Better::Lower, "errors"),
    headline("client_cpu_s", "/client_cpu_s", Better::Lower, "client CPU s"),
];

/// A headline figure as a report has it: named for its part in `dbload
/// run`'s report (`ingest.rows_per_sec`, `workloads.NAME.p99_ms`, the
/// workload under load), else as in [`HEADLINES`].
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub name: String,
    pub label: String,
    pub better: Better,
    pub value: f64,
}

/// The headline figures `report` has (its JSON form), in [`HEADLINES`]'
/// order, part by part for `dbload run`.
pub fn figures_of(report: &Json) -> Vec<Figure> {
    let mut parts: Vec<(String, String, &Json)> = Vec::new();
    if report["command"] == "run" {
        if report["ingest"].is_object() {
            parts.push(("ingest.".into(), "ingest ".into(), &report["ingest"]));
        }
        for w in report["workloads"].as_array().into_iter().flatten() {
            let name = w["name"].as_str().unwrap_or("?");
            parts.push((format!("workloads.{name}."), format!("{name} "), &w["under_load"]));
        }
    } else {
        parts.push((String::new(), String::new(), report));
    }
    parts
        .into_iter()
        .flat_map(|(prefix, label, part)| {
            HEADLINES.iter().filter_map(move |h| {
                Some(Figure {
                    name: format!("{prefix}{}", h.name),
                    label: format!("{label}{}", h.label),
                    better: h.better,
                    value: part.pointer(h.pointer)?.as_f64()?,
                })
            })
        })
        .collect()
}

/// How the interval of the median is made, as the JSON states it.
pub const INTERVAL_METHOD: &str = "order statistics (distribution-free): [X(k), X(N+1-k)] with the largest k whose \
                                   binomial coverage is at least 95%; below 6 runs it is min..max and covers less \
                                   (ci_coverage)";

/// The `repeat` object of a report made with `--runs`.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RepeatReport {
    /// `--runs`.
    pub runs_asked: u32,
    /// Runs started (fewer than asked after Ctrl-C).
    pub runs_done: u32,
    pub pause_s: f64,
    pub interval_method: crate::report::Name,
    /// The runs the statistics are over: every one that was not interrupted
    /// (all of them if each was).
    pub runs_in_figures: u32,
    pub runs: Vec<RunFigures>,
    /// Per headline figure: median, min, max, the 95 % interval of the median.
    pub figures: BTreeMap<String, Spread>,
    /// The figures' labels in the order the text shows them.
    #[serde(skip)]
    labels: Vec<(String, String)>,
}

/// One run of a repeat: how it ended and its headline figures.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RunFigures {
    /// 1-based.
    pub run: u32,
    pub status: String,
    pub exit_code: u8,
    /// What the target acknowledged (`accounting.ok`: rows, queries or
    /// requests): the same in every run of a count-bounded configuration.
    pub acknowledged: Option<u64>,
    pub figures: BTreeMap<String, f64>,
}

impl RepeatReport {
    /// A kept report's `repeat` object read back, with the labels its text
    /// table heads its rows with (not kept: they follow from `report`, the
    /// whole kept report, as they did when it was made).
    pub fn kept(repeat: &Json, report: &Json) -> serde_json::Result<RepeatReport> {
        let mut r: RepeatReport = serde_json::from_value(repeat.clone())?;
        r.labels = figures_of(report).into_iter().map(|f| (f.name, f.label)).collect();
        Ok(r)
    }

    /// From each run's report as JSON, in the order they ran.
    pub fn new(plan: Repeat, runs: &[Json]) -> RepeatReport {
        let each: Vec<RunFigures> = runs
            .iter()
            .zip(1..)
            .map(|(json, run)| RunFigures {
                run,
                status: json["status"].as_str().unwrap_or("").to_string(),
                exit_code: json["exit_code"].as_u64().map_or(exit::FAILED_OPERATIONS, |c| c as u8),
                acknowledged: json.pointer("/accounting/ok").and_then(Json::as_u64),
                figures: figures_of(json).into_iter().map(|f| (f.name, f.value)).collect(),
            })
            .collect();
        let counted = counted(&each);
        let mut labels: Vec<(String, String)> = Vec::new();
        for f in runs.iter().flat_map(figures_of) {
            if !labels.iter().any(|(name, _)| *name == f.name) {
                labels.push((f.name, f.label));
            }
        }
        let figures = labels
            .iter()
            .filter_map(|(name, _)| {
                let values: Vec<f64> = counted.iter().filter_map(|r| r.figures.get(name).copied()).collect();
                Some((name.clone(), Spread::of(&values)?))
            })
            .collect();
        RepeatReport {
            runs_asked: plan.runs,
            runs_done: each.len() as u32,
            pause_s: plan.pause.as_secs_f64(),
            interval_method: INTERVAL_METHOD.into(),
            runs_in_figures: counted.len() as u32,
            runs: each,
            figures,
            labels,
        }
    }

    /// How the runs ended, taken together: failed with its exit code if a
    /// later run could not run (`failed`, said in `stopped`), interrupted
    /// if one was (or if fewer ran than asked: Ctrl-C in a pause), else
    /// failed if one failed, with the highest exit code of them; `last` is
    /// the last run's verdict, which keeps its `stopped` otherwise.
    pub fn verdict(&self, last: &Verdict, failed: Option<&anyhow::Error>) -> Verdict {
        if let Some(e) = failed {
            let stopped = Some(format!("{e:#}"));
            return Verdict { status: Status::Failed, exit_code: exit_code(e), stopped, ..last.clone() };
        }
        let exit_code = self.runs.iter().map(|r| r.exit_code).max().unwrap_or(exit::OK);
        let short = self.runs_done < self.runs_asked;
        let status = if short || self.runs.iter().any(|r| r.status == "interrupted") {
            Status::Interrupted
        } else if exit_code != exit::OK {
            Status::Failed
        } else {
            Status::Ok
        };
        let exit_code = if short { exit_code.max(exit::INTERRUPTED) } else { exit_code };
        Verdict { status, exit_code, ..last.clone() }
    }
}

/// The runs the statistics count: an interrupted run measured only part of
/// what was asked, so it is left out unless no other run is there.
fn counted(runs: &[RunFigures]) -> Vec<&RunFigures> {
    let finished: Vec<&RunFigures> = runs.iter().filter(|r| r.status != "interrupted").collect();
    if finished.is_empty() {
        runs.iter().collect()
    } else {
        finished
    }
}

/// The runs' reports with every number replaced by its median over the
/// runs that are counted (see [`RepeatReport::runs_in_figures`]): what
/// `--fail-if` judges with `--runs`, so that a condition holds for the
/// typical run rather than the last one. Numbers only some runs have (a
/// query that one run never completed) take the median of those that do.
pub fn median_report(runs: &[Json]) -> Json {
    let finished: Vec<&Json> = runs.iter().filter(|r| r["status"] != "interrupted").collect();
    let counted = if finished.is_empty() { runs.iter().collect() } else { finished };
    let last = counted.last().map_or(Json::Null, |j| (*j).clone());
    medians(last, &counted, "")
}

fn medians(value: Json, runs: &[&Json], at: &str) -> Json {
    match value {
        Json::Object(map) => Json::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let path = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                    let v = medians(v, runs, &path);
                    (k, v)
                })
                .collect(),
        ),
        Json::Array(items) => {
            Json::Array(items.into_iter().enumerate().map(|(i, v)| medians(v, runs, &format!("{at}/{i}"))).collect())
        }
        Json::Number(n) => {
            let values: Vec<f64> = runs.iter().filter_map(|r| r.pointer(at)?.as_f64()).collect();
            crate::stats::repeat::median(&values)
                .and_then(serde_json::Number::from_f64)
                .map_or(Json::Number(n), Json::Number)
        }
        other => other,
    }
}

/// The text form: a table of the headline figures, one row each, the runs
/// across, then median, min, max and the interval of the median.
pub fn render(r: &RepeatReport) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let counted = if r.runs_in_figures < r.runs_done { " (interrupted runs left out of the statistics)" } else { "" };
    let pause = if r.pause_s > 0.0 { format!(", {} s apart", r.pause_s) } else { String::new() };
    let _ = writeln!(
        out,
        "\nRuns: {} of {} done{pause}{counted}; the report above is the last run's",
        r.runs_done, r.runs_asked
    );
    let mut head = vec![String::new()];
    head.extend(r.runs.iter().map(|run| match run.status.as_str() {
        "ok" => format!("run {}", run.run),
        s => format!("run {} ({s})", run.run),
    }));
    head.extend(["median", "min", "max", "95% CI of median"].map(String::from));
    let mut rows = vec![head];
    for (name, label) in &r.labels {
        let Some(s) = r.figures.get(name) else { continue };
        let mut row = vec![label.clone()];
        row.extend(r.runs.iter().map(|run| run.figures.get(name).map_or("-".into(), |v| figure(*v))));
        row.extend([figure(s.median), figure(s.min), figure(s.max)]);
        row.push(format!("{} .. {}", figure(s.ci95_low), figure(s.ci95_high)));
        rows.push(row);
    }
    out += &columns(&rows, "  ", |c| c > 0);
    if let Some(s) = r.figures.values().next() {
        if s.ci_coverage < 0.95 {
            let _ = writeln!(
                out,
                "  With {} runs the interval of the median is min..max and holds it only {:.1}% of the time; \
                 6 runs or more give 95%.",
                r.runs_in_figures,
                s.ci_coverage * 100.0
            );
        }
    }
    out
}

/// A figure as the tables show it: whole numbers as they are (and from 100
/// up), else three significant digits or three decimals (0.042 ms).
pub fn figure(v: f64) -> String {
    let digits = match v.abs() {
        v if !v.is_finite() => return "-".into(),
        a if a >= 1000.0 => return crate::format::grouped(v),
        v if v >= 100.0 || v.fract() == 0.0 => 0,
        v if v >= 10.0 => 1,
        v if v >= 1.0 => 2,
        _ => 3,
    };
    format!("{v:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    fn run(status: &str, code: u8, rows_per_sec: f64, p99: f64) -> Json {
        json!({"status": status, "exit_code": code, "rows_per_sec": rows_per_sec, "rows": 100,
               "latency_ms": {"p99": p99}, "setup": {"method": "copy"}})
    }

    fn plan(runs: u32) -> Repeat {
        Repeat { runs, pause: Duration::ZERO }
    }

    /// A figure of a thousand or more is grouped, as every other figure
    /// of the reports is (`25,370 rows/s`): the repeat, compare and merged
    /// tables wrote `102016`.
    #[test]
    fn a_figure_of_a_thousand_or_more_is_grouped() {
        let said: Vec<String> = [102016.0, -1234.4, 999.0, 12.34, 0.5, f64::NAN].map(figure).into();
        assert_eq!(said, ["102,016", "-1,234", "999", "12.3", "0.500", "-"]);
    }

    #[test]
    fn figures_are_summarised_per_headline() {
        let runs = [run("ok", 0, 300.0, 5.0), run("ok", 0, 100.0, 7.0), run("ok", 0, 200.0, 6.0)];
        let r = RepeatReport::new(plan(3), &runs);
        let s = &r.figures["rows_per_sec"];
        assert_eq!((s.median, s.min, s.max), (200.0, 100.0, 300.0));
        assert_eq!(r.figures["p99_ms"].median, 6.0);
        assert!(!r.figures.contains_key("qps"));
        assert_eq!(r.runs[1].figures["rows_per_sec"], 100.0);
        let v = r.verdict(&Verdict::new(false, false), None);
        assert_eq!((v.status, v.exit_code), (Status::Ok, 0));
    }

    #[test]
    fn an_interrupted_run_is_listed_but_not_counted() {
        let runs = [run("ok", 0, 300.0, 5.0), run("interrupted", 130, 10.0, 50.0)];
        let r = RepeatReport::new(plan(3), &runs);
        assert_eq!((r.runs_done, r.runs_in_figures), (2, 1));
        assert_eq!(r.figures["rows_per_sec"].median, 300.0);
        let v = r.verdict(&Verdict::new(false, false), None);
        assert_eq!((v.status, v.exit_code), (Status::Interrupted, exit::INTERRUPTED));
        assert_eq!(median_report(&runs)["rows_per_sec"], 300.0);
    }

    #[test]
    fn fewer_runs_than_asked_is_an_interruption() {
        let r = RepeatReport::new(plan(3), &[run("ok", 0, 1.0, 1.0)]);
        let v = r.verdict(&Verdict::new(false, false), None);
        assert_eq!((v.status, v.exit_code), (Status::Interrupted, exit::INTERRUPTED));
    }

    #[test]
    fn a_run_that_could_not_run_stops_the_repeat_with_its_exit_code() {
        let r = RepeatReport::new(plan(3), &[run("ok", 0, 1.0, 1.0)]);
        let gone = anyhow::Error::new(crate::error::UsageError("bad".into())).context("run 2 of 3");
        let v = r.verdict(&Verdict::new(false, false), Some(&gone));
        assert_eq!((v.status, v.exit_code), (Status::Failed, exit::USAGE));
        assert_eq!(v.stopped.as_deref(), Some("run 2 of 3: bad"));
    }

    #[test]
    fn a_failed_run_fails_the_repeat() {
        let r = RepeatReport::new(plan(2), &[run("ok", 0, 1.0, 1.0), run("failed", 1, 1.0, 1.0)]);
        let v = r.verdict(&Verdict::new(false, false), None);
        assert_eq!((v.status, v.exit_code), (Status::Failed, 1));
    }

    #[test]
    fn the_median_report_takes_every_number_median_and_keeps_the_rest() {
        let runs = [run("ok", 0, 300.0, 5.0), run("ok", 0, 100.0, 9.0), run("ok", 0, 200.0, 6.0)];
        let m = median_report(&runs);
        assert_eq!(m["rows_per_sec"], 200.0);
        assert_eq!(m["latency_ms"]["p99"], 6.0);
        assert_eq!(m["setup"]["method"], "copy");
        assert_eq!(m["rows"], 100.0);
    }

    #[test]
    fn the_html_report_has_a_table_of_the_runs() {
        let mut runs = [run("ok", 0, 300.0, 5.0), run("interrupted", 130, 100.0, 7.0)];
        // A run that completed nothing has no latency: its cell is empty.
        runs[1]["latency_ms"] = Json::Null;
        let mut json = runs[1].clone();
        json["command"] = "ingest".into();
        json["repeat"] = serde_json::to_value(RepeatReport::new(plan(3), &runs)).unwrap();
        let html = crate::report::html::render(&json).unwrap();
        assert!(html.contains("Runs: 2 of 3") && html.contains("run 2 (interrupted)"), "{html}");
        assert!(html.contains("<td>300</td>") && html.contains("<td>–</td>"), "{html}");
    }

    #[test]
    fn a_mixed_run_has_figures_per_part() {
        let part = |qps: f64| json!({"qps": qps, "latency_ms": {"p99": 3.0}});
        let mixed = json!({"command": "run", "status": "ok", "exit_code": 0,
            "ingest": {"rows_per_sec": 10.0, "errors": 0},
            "workloads": [{"name": "dash", "under_load": part(5.0), "alone_before": part(9.0)}]});
        let names: Vec<String> = figures_of(&mixed).into_iter().map(|f| f.name).collect();
        assert_eq!(names, ["ingest.rows_per_sec", "ingest.errors", "workloads.dash.qps", "workloads.dash.p99_ms"]);
        let text = render(&RepeatReport::new(plan(2), &[mixed.clone(), mixed]));
        assert!(text.contains("dash queries/s") && text.contains("ingest rows/s"), "{text}");
    }

    #[test]
    fn text_names_the_runs_and_the_interval() {
        let runs = [run("ok", 0, 300.0, 5.0), run("ok", 0, 100.0, 7.0), run("ok", 0, 200.0, 6.0)];
        let text = render(&RepeatReport::new(plan(3), &runs));
        assert!(text.contains("Runs: 3 of 3 done"), "{text}");
        assert!(text.contains("rows/s"), "{text}");
        assert!(text.contains("100 .. 300"), "{text}");
        assert!(text.contains("75.0% of the time"), "{text}");
    }
}
