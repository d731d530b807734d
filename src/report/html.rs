//! The HTML report (`--html FILE`): one page to share that opens offline,
//! with no stylesheet, script or font to fetch. It is built from the
//! report's JSON form, not from the report types, so one template serves
//! every command: the template shows the fields a report has and skips the
//! ones it lacks. Charts are inline SVG drawn by plotters from the
//! per-second `timeline[]` and the `latency_ms` summary.

use std::path::Path;

use anyhow::{Context, Result};
use minijinja::context;
use minijinja::value::Serde;
use plotters::chart::MeshStyle;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde::Serialize;
use serde_json::Value as Json;

use super::page::{environment, Header, Setup};
use super::text::group;

/// Compiled into the binary so that `--html` works wherever dbload was copied.
const TEMPLATE: &str = include_str!("../../templates/report.html.j2");
/// The `.html.j2` name turns minijinja's HTML autoescaping on (its default
/// callback strips `.j2`): query texts, URLs and error messages are data.
const TEMPLATE_NAME: &str = "report.html.j2";

/// Chart size in SVG user units; the page scales it to its width (viewBox).
pub(super) const SIZE: (u32, u32) = (880, 300);
/// The chart colours; the page's legends are drawn from the same values.
pub(super) const BLUE: RGBColor = RGBColor(37, 99, 235);
pub(super) const RED: RGBColor = RGBColor(220, 38, 38);
pub(super) const ORANGE: RGBColor = RGBColor(234, 88, 12);
const INK: RGBColor = RGBColor(55, 65, 81);
const GRID: RGBColor = RGBColor(229, 231, 235);
const FAINT_GRID: RGBColor = RGBColor(243, 244, 246);
/// The shade of an outage window (`--reconnect`) behind the lines.
const OUTAGE: RGBColor = RGBColor(254, 215, 170);
/// The line where a stage (`--stages`, `--rate-stages`) gives way to the next.
const BOUNDARY: RGBColor = RGBColor(107, 114, 128);

/// Writes the HTML report of any command's report to `path`.
pub fn write_file<R: Serialize>(report: &R, path: &Path) -> Result<()> {
    let html = render(report)?;
    std::fs::write(path, html).with_context(|| format!("--html: cannot create {}", path.display()))
}

/// The HTML page of a report.
pub fn render<R: Serialize>(report: &R) -> Result<String> {
    let json = serde_json::to_value(report).context("the HTML report")?;
    let parts = parts(&json)
        .into_iter()
        .map(|p| {
            let data = json.pointer(&p.pointer).unwrap_or(&Json::Null);
            Ok(context! {
                title => p.title,
                report => Serde(data),
                alone_vs_load => p.compare_with.and_then(|c| json.pointer(&c)).map(Serde),
                charts => Serde(charts(data)?),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut env = environment(TEMPLATE_NAME, TEMPLATE)?;
    env.add_filter("number", |v: f64| tick(&v));
    let template = env.get_template(TEMPLATE_NAME).context("the HTML report template")?;
    let command = json["command"].as_str().unwrap_or("report");
    let header = Header::of(&json, format!("dbload {command}"));
    // The settings and DDL of the server the load went to, shown once.
    let server = ["/setup", "/ingest/setup", "/workloads/0/under_load/setup"]
        .into_iter()
        .filter_map(|p| json.pointer(p))
        .find(|s| s["server_settings"].is_object());
    template
        .render(context! {
            r => Serde(&json), parts, header => Serde(header), setups => Serde(setups(&json)),
            server => server.map(Serde),
        })
        .context("rendering the HTML report")
}

/// The setup, shown once at the top: the command's, or on `dbload run`'s
/// page its ingest's and each workload's (the same whether under load or
/// alone).
fn setups(json: &Json) -> Vec<Setup> {
    if json["command"] != "run" {
        return vec![Setup::of(None, &json["setup"])];
    }
    let ingest = json["ingest"].is_object().then(|| Setup::of(Some("Ingest".into()), &json["ingest"]["setup"]));
    let workloads =
        json["workloads"].as_array().into_iter().flatten().map(|w| {
            Setup::of(Some(format!("Workload {}", w["name"].as_str().unwrap_or("?"))), &w["under_load"]["setup"])
        });
    ingest.into_iter().chain(workloads).collect()
}

/// A section of the page: the whole report, or one part of `dbload run`'s
/// (its ingest, each workload under load and alone), by JSON pointer.
struct Part {
    title: Option<String>,
    pointer: String,
    /// For a workload alone (`--baseline`): the same workload under load.
    compare_with: Option<String>,
}

/// `dbload run`'s report holds several reports (each with its own setup,
/// figures and timeline); every other command's is one.
fn parts(json: &Json) -> Vec<Part> {
    if json["command"] != "run" {
        return vec![Part { title: None, pointer: String::new(), compare_with: None }];
    }
    let mut parts = Vec::new();
    if json["ingest"].is_object() {
        parts.push(Part {
            title: Some("Ingest, while the workloads ran".into()),
            pointer: "/ingest".into(),
            compare_with: None,
        });
    }
    for (i, w) in json["workloads"].as_array().into_iter().flatten().enumerate() {
        let name = w["name"].as_str().unwrap_or("?");
        let loaded = format!("/workloads/{i}/under_load");
        parts.push(Part {
            title: Some(format!("Workload {name}, under the ingest load")),
            pointer: loaded.clone(),
            compare_with: None,
        });
        for (key, when, rows) in
            [("alone_before", "before", "table_rows_before"), ("alone_after", "after", "table_rows_after")]
        {
            if w[key].is_object() {
                let at = json[rows].as_u64().map(|n| format!(", table at {} rows", group(n))).unwrap_or_default();
                parts.push(Part {
                    title: Some(format!("Workload {name}, alone just {when} the mixed phase (--baseline{at})")),
                    pointer: format!("/workloads/{i}/{key}"),
                    compare_with: Some(loaded.clone()),
                });
            }
        }
    }
    parts
}

/// A chart as the template shows it: a heading, a legend, the inline SVG.
#[derive(Debug, Serialize)]
pub(super) struct Chart {
    pub(super) title: String,
    pub(super) caption: String,
    pub(super) legend: Vec<LegendKey>,
    /// Made by plotters, which escapes the text it writes: safe to inline.
    pub(super) svg: String,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct LegendKey {
    label: String,
    color: String,
}

/// A line; `None` points break it (a second without a completed operation
/// has no latency, and a line through it would invent one).
pub(super) struct Line {
    pub(super) label: String,
    pub(super) color: RGBColor,
    pub(super) points: Vec<Option<(f64, f64)>>,
}

impl LegendKey {
    pub(super) fn new(label: &str, RGBColor(r, g, b): RGBColor) -> LegendKey {
        LegendKey { label: label.to_string(), color: format!("#{r:02x}{g:02x}{b:02x}") }
    }
}

impl Line {
    pub(super) fn key(&self) -> LegendKey {
        LegendKey::new(&self.label, self.color)
    }

    fn max_y(&self) -> f64 {
        self.points.iter().flatten().map(|p| p.1).fold(0.0, f64::max)
    }

    /// Runs of consecutive points.
    fn segments(&self) -> impl Iterator<Item = Vec<(f64, f64)>> + '_ {
        self.points
            .split(Option::is_none)
            .map(|run| run.iter().flatten().copied().collect::<Vec<_>>())
            .filter(|r| !r.is_empty())
    }
}

/// The charts a report's data allows: no per-second charts for a run that
/// fit in one second (one point is no line; the figures say it all), no
/// latency charts when nothing completed.
fn charts(part: &Json) -> Result<Vec<Chart>> {
    let timeline = part["timeline"].as_array().map(Vec::as_slice).unwrap_or_default();
    let unit = match part["command"].as_str() {
        Some("ingest") => "rows",
        Some("http") => "requests",
        _ => "queries",
    };
    let field =
        |name: &'static str| move |e: &Json| -> Option<(f64, f64)> { Some((e["second"].as_f64()?, e[name].as_f64()?)) };
    // Seconds during which a worker had no connection, shaded behind the lines.
    let outages: Vec<(f64, f64)> = part["outages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|o| Some((o["start_s"].as_f64()?, o["end_s"].as_f64()?)))
        .collect();
    let outage_key = (!outages.is_empty())
        .then(|| LegendKey { label: "outage (a connection lost)".into(), color: "#fed7aa".into() });
    // Where one stage (`--stages`, `--rate-stages`) gives way to the next.
    let boundaries: Vec<f64> = part["stages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .skip(1)
        .filter_map(|s| s["start_s"].as_f64())
        .collect();
    let stage_key =
        (!boundaries.is_empty()).then(|| LegendKey { label: "stage boundary".into(), color: "#6b7280".into() });
    let marks = Marks { outages: &outages, boundaries: &boundaries };
    let mut out = Vec::new();
    if timeline.len() >= 2 {
        let done =
            Line { label: format!("{unit}/s"), color: BLUE, points: timeline.iter().map(field("rows")).collect() };
        let errors = Line {
            label: "errors/s (right axis)".into(),
            color: RED,
            points: timeline.iter().map(field("errors")).collect(),
        };
        let errors = (errors.max_y() > 0.0).then_some(errors);
        let what = if unit == "requests" { "successful requests" } else { unit };
        out.push(Chart {
            title: format!("Throughput: {unit} per second"),
            caption: format!("{what} completed in each second since the start; the last second may be partial"),
            legend: std::iter::once(&done)
                .chain(&errors)
                .map(Line::key)
                .chain(outage_key)
                .chain(stage_key.clone())
                .collect(),
            svg: line_chart(&[done], &SECONDS, &format!("{unit}/s"), errors.as_ref(), &marks, |v| {
                group(v.round().max(0.0) as u64)
            })?,
        });
        let lines = [
            Line { label: "mean".into(), color: BLUE, points: timeline.iter().map(field("latency_mean_ms")).collect() },
            Line { label: "max".into(), color: ORANGE, points: timeline.iter().map(field("latency_max_ms")).collect() },
        ];
        if lines.iter().any(|l| l.points.iter().any(Option::is_some)) {
            out.push(Chart {
                title: "Latency per second (ms)".into(),
                caption: "mean and max latency of the operations that completed in each second".into(),
                legend: lines.iter().map(Line::key).chain(stage_key).collect(),
                svg: line_chart(&lines, &SECONDS, "ms", None, &marks, tick)?,
            });
        }
    }
    let l = &part["latency_ms"];
    let bars: Option<Vec<(&str, f64)>> =
        [("p50", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99"), ("p99.9", "p99_9"), ("max", "max")]
            .into_iter()
            .map(|(label, key)| Some((label, l[key].as_f64()?)))
            .collect();
    if let Some(bars) = bars {
        out.push(Chart {
            title: "Latency percentiles (ms)".into(),
            caption: "from the merged HDR histogram of the measured window".into(),
            legend: Vec::new(),
            svg: bar_chart(&bars, BLUE)?,
        });
    }
    Ok(out)
}

pub(super) fn font(size: u32) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&INK)
}

/// Every chart's frame: its margin and the room for the axes' labels.
pub(super) fn frame<'a, 'b>(root: &'a DrawingArea<SVGBackend<'b>, Shift>) -> ChartBuilder<'a, 'static, SVGBackend<'b>> {
    let mut builder = ChartBuilder::on(root);
    builder.margin(12).x_label_area_size(42).y_label_area_size(78);
    builder
}

/// Every chart's axes and grid, in the page's fonts and greys.
pub(super) fn mesh<'a, 'b, 's>(
    chart: &'b mut ChartContext<'a, SVGBackend<'s>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
) -> MeshStyle<'a, 'b, RangedCoordf64, RangedCoordf64, SVGBackend<'s>> {
    let mut mesh = chart.configure_mesh();
    mesh.label_style(font(14))
        .axis_desc_style(font(14))
        .bold_line_style(GRID)
        .light_line_style(FAINT_GRID)
        .axis_style(INK);
    mesh
}

/// plotters writes the SVG namespace as an `http://` URL; HTML needs no
/// namespace on inline SVG, and without it the page holds no URL but the
/// report's own (which keeps "nothing is loaded from outside" checkable).
pub(super) fn inline(svg: String) -> String {
    svg.replacen(r#" xmlns="http://www.w3.org/2000/svg""#, "", 1)
}

/// A line chart's x axis: what it measures and how its ticks read.
pub(super) struct XAxis {
    pub(super) desc: &'static str,
    pub(super) label: fn(&f64) -> String,
}

/// Seconds since the run's start: the timelines' axis.
pub(super) const SECONDS: XAxis = XAxis { desc: "seconds since the start", label: whole };

fn whole(v: &f64) -> String {
    format!("{v:.0}")
}

/// What a timeline chart marks behind its lines, in seconds since the start.
#[derive(Default)]
pub(super) struct Marks<'a> {
    /// Outage windows (start, end), shaded.
    pub(super) outages: &'a [(f64, f64)],
    /// Where a stage begins (the first one's start left out), a vertical line each.
    pub(super) boundaries: &'a [f64],
}

/// Lines over `x` on the left axis, and an optional line on a right
/// axis of its own (errors are too few to see on the throughput's scale),
/// over the `marks`.
pub(super) fn line_chart(
    lines: &[Line],
    x: &XAxis,
    y_desc: &str,
    right: Option<&Line>,
    marks: &Marks,
    y_label: fn(&f64) -> String,
) -> Result<String> {
    let x_max = lines.iter().chain(right).flat_map(|l| l.points.iter().flatten()).map(|p| p.0).fold(1.0, f64::max);
    let headroom = |m: f64| if m > 0.0 { m * 1.1 } else { 1.0 };
    let y_max = headroom(lines.iter().map(Line::max_y).fold(0.0, f64::max));
    let y2_max = headroom(right.map_or(0.0, Line::max_y));
    // Dots as well as lines when there are few points: a one-second run is one point.
    let dots = if x_max <= 60.0 { 2 } else { 0 };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = frame(&root)
            .right_y_label_area_size(if right.is_some() { 64 } else { 0 })
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)?
            .set_secondary_coord(0f64..x_max, 0f64..y2_max);
        mesh(&mut chart)
            .x_labels((x_max as usize + 1).min(12))
            .x_label_formatter(&x.label)
            .y_label_formatter(&y_label)
            .x_desc(x.desc)
            .y_desc(y_desc)
            .draw()?;
        chart
            .draw_series(marks.outages.iter().map(|&(a, b)| Rectangle::new([(a, 0.0), (b, y_max)], OUTAGE.filled())))?;
        chart.draw_series(
            marks.boundaries.iter().map(|&at| PathElement::new(vec![(at, 0.0), (at, y_max)], BOUNDARY.stroke_width(2))),
        )?;
        for line in lines {
            for run in line.segments() {
                chart.draw_series(LineSeries::new(run, line.color.filled().stroke_width(2)).point_size(dots))?;
            }
        }
        if let Some(line) = right {
            chart
                .configure_secondary_axes()
                .y_desc(line.label.trim_end_matches(" (right axis)"))
                .y_label_formatter(&tick)
                .label_style(font(14))
                .axis_desc_style(font(14))
                .axis_style(INK)
                .draw()?;
            for run in line.segments() {
                chart.draw_secondary_series(
                    LineSeries::new(run, line.color.filled().stroke_width(2)).point_size(dots),
                )?;
            }
        }
        root.present()?;
    }
    Ok(inline(svg))
}

/// One bar per labelled value, its figure written above it.
fn bar_chart(bars: &[(&str, f64)], color: RGBColor) -> Result<String> {
    let y_max = bars.iter().map(|b| b.1).fold(0.0, f64::max);
    let y_max = if y_max > 0.0 { y_max * 1.15 } else { 1.0 };
    let n = bars.len();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        // A float axis with a bar centred on each whole number: labels are
        // drawn as text at the bars, so plotters' tick choice cannot skip one.
        let mut chart = frame(&root).build_cartesian_2d(-0.5f64..n as f64 - 0.5, 0f64..y_max)?;
        mesh(&mut chart).disable_x_mesh().x_labels(0).y_label_formatter(&tick).y_desc("ms").draw()?;
        chart.draw_series(
            bars.iter()
                .enumerate()
                .map(|(i, b)| Rectangle::new([(i as f64 - 0.3, 0.0), (i as f64 + 0.3, b.1)], color.filled())),
        )?;
        let above = font(14).pos(Pos::new(HPos::Center, VPos::Bottom));
        chart.draw_series(
            bars.iter()
                .enumerate()
                .map(|(i, b)| Text::new(trim_ms(b.1), (i as f64, b.1 + y_max * 0.01), above.clone())),
        )?;
        // Under the axis, in pixels: the plotting area's coordinates end at 0.
        let area = chart.plotting_area();
        let below = font(15).pos(Pos::new(HPos::Center, VPos::Top));
        for (i, b) in bars.iter().enumerate() {
            let (x, y) = area.map_coordinate(&(i as f64, 0.0));
            root.draw(&Text::new(b.0.to_string(), (x, y + 10), below.clone()))?;
        }
        root.present()?;
    }
    Ok(inline(svg))
}

/// An axis tick: whole numbers without a decimal point (`20`, not `20.0`).
pub(super) fn tick(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        group(v.round().max(0.0) as u64)
    } else {
        trim_ms(*v)
    }
}

/// A latency in ms with the digits that matter: `0.042`, `3.21`, `48.2`, `1,204`.
fn trim_ms(v: f64) -> String {
    match v.abs() {
        0.0 => "0".into(),
        a if a < 1.0 => format!("{v:.3}"),
        a if a < 10.0 => format!("{v:.2}"),
        a if a < 100.0 => format!("{v:.1}"),
        _ => group(v.round().max(0.0) as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Anything the page would fetch: it must fetch nothing.
    fn assert_offline(html: &str) {
        for needle in ["http://", "https://", "src=", "href=", "url(", "@import", "<link", "<script"] {
            assert!(!html.contains(needle), "the page holds {needle:?}");
        }
    }

    /// A workload's report as JSON, shaped like `QueryReport`'s.
    fn workload(timeline: Json, latency: Json) -> Json {
        json!({
            "schema_version": 2, "dbload_version": "0.1.0", "command": "workload",
            "status": "failed", "exit_code": 1, "fail_if": [],
            "count": 120, "errors": 3, "qps": 60.0, "duration_s": 2.0, "wall_s": 2.1,
            "latency_ms": latency, "service_time_ms": null, "schedule_lag_ms": null, "warmup": null,
            "error_classes": [{"class": "SQLSTATE 42703", "count": 3, "example": "column \"<nosuch>\" does not exist"}],
            "queries": [{
                "name": "<script>alert(1)</script>", "query": "select '<b>' & 1", "ratio": 1.0, "share": 1.0,
                "count": 120, "errors": 3, "qps": 60.0, "duration_s": 2.0, "latency_ms": latency,
                "error_classes": [], "explain": null, "explain_error": null
            }],
            "client_cpu_s": 0.2, "client_cpu_user_s": 0.15, "client_cpu_sys_s": 0.05, "client_peak_rss_mib": 12.5,
            "timeline": timeline,
            "setup": {
                "target_kind": "server", "target": "postgres://app@db:5432/bench", "engine": "postgres",
                "server_version": "16.4", "server_settings": {"fsync": "on"}, "protocol": "prepared",
                "concurrency": 2, "rate_queries_per_sec": null, "max_queries": null, "duration_limit_s": 2.0,
                "warmup": "none", "seed": 1, "explain": null
            }
        })
    }

    fn latency() -> Json {
        json!({"count": 120, "mean": 4.2, "mean_ci95": 0.1, "stdev": 1.1, "min": 1.0, "max": 20.5,
               "p50": 4.0, "p90": 6.0, "p95": 7.5, "p99": 12.0, "p99_9": 20.5})
    }

    fn timeline() -> Json {
        json!([
            {"second": 0, "rows": 70, "batches": 72, "errors": 2, "latency_mean_ms": 4.0, "latency_max_ms": 20.5},
            {"second": 1, "rows": 50, "batches": 51, "errors": 1, "latency_mean_ms": 4.5, "latency_max_ms": 9.0},
            {"second": 2, "rows": 0, "batches": 0, "errors": 0, "latency_mean_ms": null, "latency_max_ms": null}
        ])
    }

    #[test]
    fn ingest_report_is_one_offline_page_with_charts() {
        let report = crate::report::text::tests::report("");
        let html = render(&report).unwrap();
        assert!(html.starts_with("<!doctype html>"), "{}", &html[..80]);
        assert!(html.trim_end().ends_with("</html>"));
        assert!(html.matches("<svg").count() >= 1, "the percentile chart at least");
        assert!(html.contains("Latency percentiles"));
        assert!(html.contains("10,000"), "the rows figure");
        assert!(html.contains("SQLSTATE 23505"), "the error class");
        assert!(html.contains("<pre>CREATE TABLE &quot;measurement&quot;"), "the DDL, escaped, in a <pre>");
        assert!(!html.contains("secret"), "the password is redacted as in the JSON");
        assert_offline(&html);
    }

    #[test]
    fn report_text_is_escaped() {
        let html = render(&workload(timeline(), latency())).unwrap();
        assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"), "the query name, escaped");
        assert!(html.contains("select &#x27;&lt;b&gt;&#x27; &amp; 1"), "the query text, escaped");
        assert!(html.contains("column &quot;&lt;nosuch&gt;&quot; does not exist"), "the error example, escaped");
        assert_offline(&html);
    }

    #[test]
    fn timeline_charts_show_errors_on_their_own_axis_and_break_at_gaps() {
        let charts = charts(&workload(timeline(), latency())).unwrap();
        let titles: Vec<&str> = charts.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(titles, ["Throughput: queries per second", "Latency per second (ms)", "Latency percentiles (ms)"]);
        assert_eq!(charts[0].legend.len(), 2, "queries/s and errors/s");
        assert!(charts[0].svg.contains("errors/s"), "the right axis is labelled");
        // Second 2 completed nothing: mean and max lines stop at second 1.
        let line = Line { label: "mean".into(), color: BLUE, points: vec![Some((0.0, 1.0)), None, Some((2.0, 3.0))] };
        assert_eq!(line.segments().count(), 2);
        for c in &charts {
            assert!(c.svg.starts_with("<svg") && c.svg.trim_end().ends_with("</svg>"), "{}", c.title);
        }
    }

    #[test]
    fn outages_are_shaded_on_the_timeline_charts() {
        let mut report = workload(timeline(), latency());
        report["outages"] = json!([{"start_s": 0.5, "end_s": 1.5, "duration_s": 1.0, "error": "connection lost: x",
                                    "workers": 2, "reconnected": true}]);
        let shade = "#FED7AA";
        let plain = charts(&workload(timeline(), latency())).unwrap();
        assert!(!plain[0].svg.to_uppercase().contains(shade), "no outage, no shade");
        let charts = charts(&report).unwrap();
        for c in &charts[..2] {
            assert!(c.svg.to_uppercase().contains(shade), "{}: the window is shaded", c.title);
        }
        assert_eq!(charts[0].legend.last().unwrap().label, "outage (a connection lost)");
    }

    #[test]
    fn stage_boundaries_are_lines_on_the_timeline_charts_and_stages_a_table() {
        let mut report = workload(timeline(), latency());
        let stage = |n: u64, start: f64, end: f64| {
            json!({"stage": n, "ramps": "rate", "start_s": start, "end_s": end, "from": 0.0, "to": 100.0,
                   "target_per_sec": 50.0, "ok": 100, "units": 100, "errors": 0, "per_sec": 50.0, "latency_ms": null})
        };
        report["stages"] = json!([stage(1, 0.0, 1.0), stage(2, 1.0, 2.0)]);
        let boundary = "#6B7280";
        let plain = charts(&workload(timeline(), latency())).unwrap();
        assert!(!plain[0].svg.to_uppercase().contains(boundary), "no stages, no boundary");
        let charts = charts(&report).unwrap();
        for c in &charts[..2] {
            let lines = c.svg.to_uppercase().matches(&format!("STROKE=\"{boundary}\"")).count();
            assert_eq!(lines, 1, "{}: one boundary, between the two stages", c.title);
            assert_eq!(c.legend.last().unwrap().label, "stage boundary");
        }
        let html = render(&report).unwrap();
        assert!(html.contains("<h3>Stages</h3>") && html.contains("0 → 100/s"), "the stages' table");
    }

    #[test]
    fn charts_are_skipped_without_data() {
        let html = render(&workload(json!([]), Json::Null)).unwrap();
        assert!(!html.contains("<svg"), "no timeline and no latency: no chart");
        assert!(html.contains("<h3>Queries</h3>"), "the rest of the page is there");
        let one_second =
            json!([{"second": 0, "rows": 5, "batches": 5, "errors": 0, "latency_mean_ms": 1.0, "latency_max_ms": 2.0}]);
        let titles: Vec<String> =
            charts(&workload(one_second, latency())).unwrap().into_iter().map(|c| c.title).collect();
        assert_eq!(titles, ["Latency percentiles (ms)"], "one second is one point, not a line");
        // A dry run: no target, no server fields.
        let mut dry = serde_json::to_value(crate::report::text::tests::report("")).unwrap();
        dry["setup"].as_object_mut().unwrap().extend([
            ("target_kind".into(), json!("none")),
            ("target".into(), Json::Null),
            ("engine".into(), Json::Null),
            ("server_version".into(), Json::Null),
            ("server_settings".into(), json!({})),
            ("ddl".into(), json!([])),
        ]);
        let html = render(&dry).unwrap();
        assert!(html.contains("dry run: generated and encoded, nothing sent"));
    }

    #[test]
    fn a_mixed_run_has_a_section_per_part() {
        let w = workload(timeline(), latency());
        let run = json!({
            "schema_version": 2, "dbload_version": "0.1.0", "command": "run", "status": "failed", "exit_code": 1,
            "fail_if": [{"condition": "errors > 0", "held": true}],
            "ingest": serde_json::to_value(crate::report::text::tests::report("")).unwrap(),
            "workloads": [{"name": "dashboards", "under_load": w, "alone_before": w, "alone_after": w}],
            "table_rows_before": 0, "table_rows_after": 120000, "comparison": "each workload alone ..."
        });
        let html = render(&run).unwrap();
        for title in [
            "Ingest, while the workloads ran",
            "Workload dashboards, under the ingest load",
            "Workload dashboards, alone just before the mixed phase (--baseline, table at 0 rows)",
            "Workload dashboards, alone just after the mixed phase (--baseline, table at 120,000 rows)",
            "each workload alone ...",
            "Alone vs under the ingest load",
        ] {
            assert!(html.contains(title), "{title}");
        }
        assert!(html.contains("held: the run fails"));
        assert_offline(&html);
    }

    #[test]
    fn an_unwritable_path_is_named() {
        let err = write_file(&workload(json!([]), Json::Null), Path::new("/nonexistent/dir/r.html")).unwrap_err();
        assert!(format!("{err:#}").starts_with("--html: cannot create /nonexistent/dir/r.html"), "{err:#}");
    }
}
