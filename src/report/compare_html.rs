//! `dbload compare --html FILE`: the compared reports' latency percentile
//! spectra and throughput timelines overlaid, one page that opens offline,
//! drawn with the HTML report's own charts.

use std::path::Path;

use anyhow::{Context, Result};
use minijinja::context;
use minijinja::value::Serde;
use serde_json::{json, Value as Json};

use plotters::prelude::*;

use super::charts::{line_chart, Line, Marks, NINES};
use super::plot::{frame, inline, mesh, tick, Chart, LegendKey, INK, PALETTE, SECONDS, SIZE};
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

/// A figure's median over each report's runs against the first report's:
/// per report (none for the first), the ratio and, with enough runs on both
/// sides, its 95 % interval.
pub struct Ratios {
    pub label: String,
    pub cells: Vec<Option<Ratio>>,
}

/// A ratio and its 95 % interval (none without enough runs).
pub type Ratio = (f64, Option<(f64, f64)>);

/// Writes the page for `reports` under the comparison's `table` and its
/// `ratios`; `exit_code`: the comparison's (1: a `--fail-if-worse` limit breached).
pub fn write_file(reports: &[Drawn], table: &Table, ratios: &[Ratios], exit_code: u8, path: &Path) -> Result<()> {
    let html = render(reports, table, ratios, exit_code)?;
    std::fs::write(path, html).with_context(|| format!("--html: cannot create {}", path.display()))
}

pub fn render(reports: &[Drawn], table: &Table, ratios: &[Ratios], exit_code: u8) -> Result<String> {
    let names: Vec<&String> = reports.iter().map(|r| r.0).collect();
    let mut charts: Vec<Chart> = ratio_chart(&names, ratios)?.into_iter().collect();
    charts.extend(self::charts(reports)?);
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

/// Each figure's ratio of medians to the first report's, a dot per later
/// report, with its 95 % interval as a bar through it, about a line at 1:
/// what the verdicts rest on, at a glance. None when there is nothing to
/// draw.
fn ratio_chart(names: &[&String], ratios: &[Ratios]) -> Result<Option<Chart>> {
    let drawn: Vec<&Ratios> =
        ratios.iter().filter(|r| r.cells.iter().flatten().any(|c| c.0.is_finite() && c.0 > 0.0)).collect();
    if drawn.is_empty() {
        return Ok(None);
    }
    let ends = drawn.iter().flat_map(|r| r.cells.iter().flatten()).flat_map(|(ratio, ci)| {
        [Some(*ratio), ci.map(|c| c.0), ci.map(|c| c.1)].into_iter().flatten().filter(|v| v.is_finite())
    });
    // On a log axis: half and twice are as far from 1, and one large ratio
    // does not squeeze the others onto the line.
    let ends = ends.filter(|v| *v > 0.0).map(f64::log10);
    let (low, high) = ends.fold((0.0f64, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let pad = (high - low).max(0.05) * 0.08;
    let (x_from, x_to) = (low - pad, high + pad);
    let rows = drawn.len();
    // The first figure at the top; each report a little below the last.
    let y = |row: usize, report: usize| (rows - 1 - row) as f64 + 0.3 - 0.6 * report as f64 / names.len() as f64;
    let label = |v: &f64| {
        let row = rows as f64 - 1.0 - v.round();
        match (v - v.round()).abs() < 1e-9 && row >= 0.0 {
            true => drawn.get(row as usize).map_or_else(String::new, |r| r.label.clone()),
            false => String::new(),
        }
    };
    let color = |i: usize| PALETTE[i % PALETTE.len()];
    let mut svg = String::new();
    {
        let height = (90 + 34 * rows as u32).max(200);
        let root = SVGBackend::with_string(&mut svg, (SIZE.0, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut c = frame(&root).y_label_area_size(110).build_cartesian_2d(x_from..x_to, -0.5..rows as f64 - 0.5)?;
        mesh(&mut c)
            .y_labels(rows + 1)
            .y_label_formatter(&label)
            .x_label_formatter(&|v| format!("{:.2}", 10f64.powf(*v)))
            .x_desc(format!("ratio to {} (1: the same; log scale)", names[0]))
            .draw()?;
        c.draw_series(DashedLineSeries::new([(0.0, -0.5), (0.0, rows as f64 - 0.5)], 8, 6, INK.stroke_width(1)))?;
        for (row, r) in drawn.iter().enumerate() {
            for (i, (ratio, ci)) in r.cells.iter().enumerate().filter_map(|(i, c)| Some((i, (*c)?))) {
                let at = y(row, i);
                let log = |v: f64| (v.is_finite() && v > 0.0).then(|| v.log10());
                if let Some((lo, hi)) = ci.and_then(|(lo, hi)| Some((log(lo)?, log(hi)?))) {
                    c.draw_series(std::iter::once(PathElement::new([(lo, at), (hi, at)], color(i).stroke_width(3))))?;
                }
                if let Some(ratio) = log(ratio) {
                    c.draw_series(std::iter::once(Circle::new((ratio, at), 5, color(i).filled())))?;
                }
            }
        }
        root.present()?;
    }
    Ok(Some(Chart {
        title: format!("Ratio to A ({}), with its 95% interval", names[0]),
        caption: "each figure's median over a report's runs divided by the first report's: the dot; the bar: its \
                  95% bootstrap interval (with 4 runs or more on both sides); beyond the dashed line at 1 is a \
                  difference, whether better or worse depends on the figure"
            .into(),
        legend: names.iter().enumerate().skip(1).map(|(i, n)| LegendKey::new(n, color(i))).collect(),
        svg: inline(svg),
    }))
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
        let html = render(&[(&na, &a, None), (&nb, &b, None)], &table, &[], 1).unwrap();
        assert!(html.contains("worse beyond a --fail-if-worse limit · exit 1"), "the verdict in the header");
        assert_eq!(html.matches("<svg").count(), 2, "{html}");
        assert!(html.contains("&lt;b&gt;.json") && !html.contains("<b>.json"));
        assert!(!html.contains("http://") && !html.contains("https://"));
    }
}
