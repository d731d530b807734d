//! `dbload compare --html FILE`: the compared reports' latency percentile
//! spectra and throughput timelines overlaid, one page that opens offline,
//! drawn with the HTML report's own charts.

use std::path::Path;

use anyhow::{Context, Result};
use minijinja::context;
use minijinja::value::Serde;
use serde_json::{json, Value as Json};

use super::charts::{line_chart, tick, Chart, Line, Marks, NINES, PALETTE, SECONDS};
use super::table::Table;

use crate::format::group;

pub(super) const TEMPLATE: &str = include_str!("../../templates/compare.html.j2");
/// `.html.j2` turns autoescaping on: report names and the table's cells are data.
pub(super) const TEMPLATE_NAME: &str = "compare.html.j2";

/// The percentiles a report carries, as "nines" (−log10(1 − p): 1 for
/// 90 %, 3 for 99.9 %, written out so that the axis ends exactly on its
/// last tick), and where its JSON has them: the spectrum's points.
const PERCENTILES: [(f64, &str, &str); 5] = [
    (std::f64::consts::LOG10_2, "/latency_ms/p50", "p50_ms"),
    (1.0, "/latency_ms/p90", ""),
    (1.301_029_995_663_981_3, "/latency_ms/p95", "p95_ms"),
    (2.0, "/latency_ms/p99", "p99_ms"),
    (3.0, "/latency_ms/p99_9", "p99_9_ms"),
];

/// A report as the page draws it: its name, its JSON, and its latency by
/// percentile (nines, ms) from its histograms when they were kept.
pub type Drawn<'a> = (&'a String, &'a Json, Option<&'a [(f64, f64)]>);

/// Writes the page for `reports` under the comparison's `table`;
/// `exit_code`: the comparison's (1: a `--fail-if-worse` limit breached).
pub fn write_file(reports: &[Drawn], table: &Table, exit_code: u8, path: &Path) -> Result<()> {
    let html = render(reports, table, exit_code)?;
    std::fs::write(path, html).with_context(|| format!("--html: cannot create {}", path.display()))
}

pub fn render(reports: &[Drawn], table: &Table, exit_code: u8) -> Result<String> {
    let charts = charts(reports)?;
    let names: Vec<String> = reports.iter().map(|r| r.0.clone()).collect();
    let env = super::page::environment(TEMPLATE_NAME, TEMPLATE)?;
    let template = env.get_template(TEMPLATE_NAME).context("the comparison's HTML template")?;
    let heading = "dbload compare";
    // What was compared stands for the command line; the verdict is the exit code's.
    let status = if exit_code == 0 { "ok" } else { "worse beyond a --fail-if-worse limit" };
    let what = json!({"status": status, "exit_code": exit_code,
                      "run": {"command_line": format!("{heading} {}", names.join(" "))}});
    let header = super::page::Header::of(&what, heading.into());
    template
        .render(context! { heading, names, table => Serde(table), charts => Serde(&charts), header => Serde(header) })
        .context("rendering the comparison's HTML page")
}

/// A report's latency at each percentile it has: the medians over its runs
/// when it was made with `--runs` (p90 is not among them), else its own.
fn spectrum(json: &Json) -> Vec<Option<(f64, f64)>> {
    let medians = json.pointer("/repeat/figures");
    PERCENTILES
        .iter()
        .filter_map(|&(nines, pointer, headline)| {
            let v = match medians {
                Some(m) => m.get(headline)?.get("median")?.as_f64()?,
                None => json.pointer(pointer)?.as_f64()?,
            };
            Some(Some((nines, v)))
        })
        .collect()
}

fn charts(reports: &[Drawn]) -> Result<Vec<Chart>> {
    // One colour per report, in order.
    let color = |i: usize| PALETTE[i % PALETTE.len()];
    let spectra: Vec<Line> = reports
        .iter()
        .enumerate()
        .map(|(i, (name, json, kept))| Line {
            label: name.to_string(),
            color: color(i),
            points: kept.map_or_else(|| spectrum(json), |k| k.iter().copied().map(Some).collect()),
        })
        .filter(|l| !l.points.is_empty())
        .collect();
    let timelines: Vec<Line> = reports
        .iter()
        .enumerate()
        .map(|(i, (name, json, _))| Line {
            label: name.to_string(),
            color: color(i),
            points: json["timeline"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .map(|e| Some((e["second"].as_f64()?, e["rows"].as_f64()?)))
                .collect(),
        })
        .filter(|l| l.points.len() >= 2)
        .collect();
    let mut out = Vec::new();
    if !spectra.is_empty() {
        out.push(Chart {
            title: "Latency by percentile (ms)".into(),
            caption: "on a log scale of nines: to p99.99 from the histograms of runs of the results store (with \
                      --runs, the last run's), else p50 to p99.9 from the report (with --runs, the median over the \
                      runs)"
                .into(),
            legend: spectra.iter().map(Line::key).collect(),
            svg: line_chart(&spectra, &NINES, "ms", None, &Marks::default(), tick)?,
        });
    }
    if !timelines.is_empty() {
        out.push(Chart {
            title: "Throughput per second".into(),
            caption: "operations (rows, queries, requests) completed in each second; with --runs, the last run".into(),
            legend: timelines.iter().map(Line::key).collect(),
            svg: line_chart(&timelines, &SECONDS, "per second", None, &Marks::default(), |v| {
                group(v.round().max(0.0) as u64)
            })?,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::charts::percentile;
    use super::*;
    use serde_json::json;

    #[test]
    fn percentiles_read_as_percent() {
        assert_eq!(percentile(&0.0), "0%");
        assert_eq!(percentile(&1.0), "90%");
        assert_eq!(percentile(&2.0), "99%");
        assert_eq!(percentile(&3.0), "99.9%");
        assert_eq!(percentile(&PERCENTILES[0].0), "50%");
        assert_eq!(percentile(&PERCENTILES[2].0), "95%");
    }

    #[test]
    fn the_page_overlays_both_reports_and_escapes_names() {
        let a = json!({"latency_ms": {"p50": 1.0, "p90": 2.0, "p95": 3.0, "p99": 5.0, "p99_9": 9.0},
                       "timeline": [{"second": 0, "rows": 10}, {"second": 1, "rows": 12}]});
        let b = json!({"repeat": {"figures": {"p50_ms": {"median": 2.0}, "p99_ms": {"median": 7.0}}},
                       "timeline": [{"second": 0, "rows": 5}, {"second": 1, "rows": 6}]});
        let (na, nb) = ("a.json".to_string(), "<b>.json".to_string());
        let table = Table::new(vec!["figure".into(), "A".into(), "B".into()], |c| c > 0);
        let html = render(&[(&na, &a, None), (&nb, &b, None)], &table, 1).unwrap();
        assert!(html.contains("worse beyond a --fail-if-worse limit · exit 1"), "the verdict in the header");
        assert_eq!(html.matches("<svg").count(), 2, "{html}");
        assert!(html.contains("&lt;b&gt;.json") && !html.contains("<b>.json"));
        assert!(!html.contains("http://") && !html.contains("https://"));
    }
}
