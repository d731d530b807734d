//! The charts of the HTML pages, drawn as inline SVG by plotters: a
//! report's per-second `timeline[]` (and each query's), with its warm-up,
//! outages and stage boundaries marked, and the `latency_spectrum` that
//! the stats layer computed from the histograms; `compare` and `sweep`
//! pages draw their lines with the same frame, axes and colours. Kept
//! apart from the page (`html.rs`), which only places what is drawn here.

use anyhow::Result;
use plotters::prelude::*;
use serde_json::Value as Json;

use super::plot::{
    font, frame, inline, mesh, tick, Chart, LegendKey, XAxis, BLUE, INK, ORANGE, PALETTE, RED, SECONDS, SIZE,
};
use crate::format::{group, human, Unit};
use crate::stats::summary::SpectrumPoint;

/// The shade of an outage window (`--reconnect`) behind the lines.
const OUTAGE: RGBColor = RGBColor(254, 215, 170);
/// The line where a stage (`--stages`, `--rate-stages`) gives way to the next.
const BOUNDARY: RGBColor = RGBColor(107, 114, 128);
/// The shade of the warm-up, whose operations the figures leave out.
const WARMUP: RGBColor = RGBColor(226, 226, 226);
/// A line; `None` points break it (a second without a completed operation
/// has no latency, and a line through it would invent one).
pub(super) struct Line {
    pub(super) label: String,
    pub(super) color: RGBColor,
    pub(super) points: Vec<Option<(f64, f64)>>,
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
/// latency charts when nothing completed. The time charts' axis ends at
/// second `span` when the part shares its time axis with others (`dbload
/// run`'s ingest and workloads ran at once, and their charts, one under
/// the other, line up only on one axis); at the part's own last second
/// with `None`.
pub(super) fn charts(part: &Json, span: Option<f64>) -> Result<Vec<Chart>> {
    let timeline = timeline_of(part);
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
    let outage_key = (!outages.is_empty()).then(|| LegendKey::band("outage (a connection lost)", OUTAGE));
    // Where one stage (`--stages`, `--rate-stages`) gives way to the next.
    let boundaries: Vec<f64> = part["stages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .skip(1)
        .filter_map(|s| s["start_s"].as_f64())
        .collect();
    let stage_key = (!boundaries.is_empty()).then(|| LegendKey::new("stage boundary", BOUNDARY));
    // The warm-up, from the start to its last operation's end.
    let warmup = part["warmup"]["end_s"].as_f64().filter(|end| *end > 0.0);
    let warmup_key = warmup.map(|_| LegendKey::band("warm-up (left out of the figures)", WARMUP));
    // What the server did (its section's events), a line each.
    let (events, event_keys) = super::server_charts::event_marks(part);
    let marks = Marks { outages: &outages, boundaries: &boundaries, warmup, target: None, events: &events, span };
    // What every time chart's legend ends with: the marks behind its lines.
    let mark_keys: Vec<LegendKey> =
        warmup_key.into_iter().chain(outage_key).chain(stage_key).chain(event_keys).collect();
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
        let last = (timeline.len() - 1) as f64;
        let target = target_rate(part, last);
        out.push(Chart {
            title: format!("Throughput: {unit} per second"),
            caption: format!("{what} completed in each whole second since the start"),
            legend: [Some(&done), target.as_ref(), errors.as_ref()]
                .into_iter()
                .flatten()
                .map(Line::key)
                .chain(mark_keys.clone())
                .collect(),
            svg: line_chart(
                &[done],
                &SECONDS,
                &format!("{unit}/s"),
                errors.as_ref(),
                &Marks { target: target.as_ref(), ..marks },
                |v| group(v.round().max(0.0) as u64),
            )?,
        });
        if let Some(chart) = vus_chart(part, last, &marks, &mark_keys)? {
            out.push(chart);
        }
        out.extend(super::server_charts::wait_band(part, span.unwrap_or(last))?);
        // The median and p99 of each second: a mean and a max let one
        // outlier set the axis and flatten everything else. A merge of
        // instances has neither (no second's distribution is kept): its
        // mean and max then.
        let percentiles = timeline.iter().any(|e| e["latency_p50_ms"].is_number());
        let ((low, low_key), (high, high_key), what) = match percentiles {
            true => (
                ("p50", "latency_p50_ms"),
                ("p99", "latency_p99_ms"),
                "the median and 99th percentile of the latencies of the operations that completed in each second \
                 (each to within 6.25 %); the run's max is on the percentile chart",
            ),
            false => (
                ("mean", "latency_mean_ms"),
                ("max", "latency_max_ms"),
                "mean and max latency of the operations that completed in each second",
            ),
        };
        let lines = [
            Line { label: low.into(), color: BLUE, points: timeline.iter().map(field(low_key)).collect() },
            Line { label: high.into(), color: ORANGE, points: timeline.iter().map(field(high_key)).collect() },
        ];
        if lines.iter().any(|l| l.points.iter().any(Option::is_some)) {
            let (lines, unit) = in_unit(lines.into());
            out.push(Chart {
                title: "Latency per second".into(),
                caption: what.into(),
                legend: lines.iter().map(Line::key).chain(mark_keys.clone()).collect(),
                svg: line_chart(&lines, &SECONDS, unit, None, &marks, tick)?,
            });
        }
        if let Some(chart) = per_query_chart(part, timeline.len(), &marks, &mark_keys)? {
            out.push(chart);
        }
    }
    if let Some(chart) = spectrum_chart(part)? {
        out.push(chart);
    }
    Ok(out)
}

/// What an open loop was asked for, per second, up to second `last`:
/// `--rate` as a level, `--rate-stages` as their ramps; `None` for a
/// closed loop. The setup names the rate by what it counts.
fn target_rate(part: &Json, last: f64) -> Option<Line> {
    let points = match stage_ramps(part, "rate", last) {
        Some(points) => points,
        None => {
            let setup = &part["setup"];
            let rate =
                ["rate_rows_per_sec", "rate_queries_per_sec", "rate_per_sec"].iter().find_map(|k| setup[k].as_f64())?;
            vec![Some((0.0, rate)), Some((last, rate))]
        }
    };
    (!points.is_empty()).then(|| Line { label: "target rate".into(), color: INK, points })
}

/// The targets of a part's stages that ramp `ramps` (`rate` or `vus`),
/// each stage's ramp from its start to its end, up to second `last`;
/// `None` when its stages ramp the other or it has none.
fn stage_ramps(part: &Json, ramps: &str, last: f64) -> Option<Vec<Option<(f64, f64)>>> {
    let stages = part["stages"].as_array().filter(|s| s.first().is_some_and(|s| s["ramps"] == ramps))?;
    let points = stages
        .iter()
        .filter_map(|s| Some((s["start_s"].as_f64()?, s["end_s"].as_f64()?, s["from"].as_f64()?, s["to"].as_f64()?)))
        .filter(|&(start, ..)| start <= last)
        .flat_map(|(start, end, from, to)| {
            let clipped = end.min(last);
            // A stage of no time (`0s:4`) is a jump: at its end, its target.
            let at = if clipped >= end { to } else { from + (to - from) * (clipped - start) / (end - start) };
            [Some((start, from)), Some((clipped, at))]
        })
        .collect();
    Some(points)
}

/// The VUs of a `--stages` run (a closed loop whose workers the stages
/// ramp), as a chart of its own under the throughput's, on the same time
/// axis: the throughput's own right axis holds its errors, and a count of
/// workers beside a rate would squeeze one of them flat. Each stage's ramp
/// is drawn as given; a worker runs while the ramp is above its number.
fn vus_chart(part: &Json, last: f64, marks: &Marks, mark_keys: &[LegendKey]) -> Result<Option<Chart>> {
    let Some(points) = stage_ramps(part, "vus", last).filter(|p| !p.is_empty()) else { return Ok(None) };
    let vus = Line { label: "VUs".into(), color: VUS, points };
    Ok(Some(Chart {
        title: "VUs: the workers the stages keep busy".into(),
        caption: "the target of --stages over time, each stage ramping from its start to its end; under it, a \
                  worker is busy while the target is above its number (2.5 keeps three busy)"
            .into(),
        legend: [vus.key()].into_iter().chain(mark_keys.iter().cloned()).collect(),
        svg: line_chart(&[vus], &SECONDS, "VUs", None, marks, tick)?,
    }))
}

/// The VU line's colour: apart from the throughput's blue and red above it.
const VUS: RGBColor = PALETTE[2];

/// The whole seconds of a part's timeline (see [`whole_seconds`]).
fn timeline_of(part: &Json) -> &[Json] {
    let timeline = part["timeline"].as_array().map(Vec::as_slice).unwrap_or_default();
    &timeline[..whole_seconds(part, timeline.len())]
}

/// The last second a part's time charts draw on their own axis; `None`
/// when they draw none (under two whole seconds).
pub(super) fn last_second(part: &Json) -> Option<f64> {
    let seconds = timeline_of(part).len();
    (seconds >= 2).then(|| (seconds - 1) as f64)
}

/// How many of a timeline's `len` seconds to draw: those that ended by the
/// end of the run's last operation (`wall_s`, give or take 50 ms). A run
/// ends inside a second, and that second's few operations, drawn, made
/// every time chart end in a cliff that nothing in the run caused.
fn whole_seconds(part: &Json, len: usize) -> usize {
    match part["wall_s"].as_f64() {
        Some(end) => len.min((end + 0.05).floor() as usize),
        None => len,
    }
}

/// A workload's queries, a line each of their mean latency per second
/// over the first `seconds` of the timeline: which query slowed down, and
/// when. Not for timeit, whose statements run one after another, each
/// timed from its own start.
fn per_query_chart(part: &Json, seconds: usize, marks: &Marks, mark_keys: &[LegendKey]) -> Result<Option<Chart>> {
    let queries = part["queries"].as_array().map(Vec::as_slice).unwrap_or_default();
    if part["command"] != "workload" || queries.len() < 2 {
        return Ok(None);
    }
    let lines: Vec<Line> = queries
        .iter()
        .enumerate()
        .map(|(i, q)| Line {
            label: q["name"].as_str().unwrap_or("?").to_string(),
            color: PALETTE[i % PALETTE.len()],
            points: q["timeline_latency_mean_ms"]
                .as_array()
                .into_iter()
                .flatten()
                .take(seconds)
                .enumerate()
                .map(|(second, ms)| Some((second as f64, ms.as_f64()?)))
                .collect(),
        })
        .collect();
    if lines.iter().all(|l| l.points.iter().all(Option::is_none)) {
        return Ok(None);
    }
    let (lines, unit) = in_unit(lines);
    Ok(Some(Chart {
        title: "Latency per second, per query".into(),
        caption: "each query's mean latency over its executions that completed in each second".into(),
        legend: lines.iter().map(Line::key).chain(mark_keys.iter().cloned()).collect(),
        svg: line_chart(&lines, &SECONDS, unit, None, marks, tick)?,
    }))
}

/// The latency at every percentile, HdrHistogram's percentile plot: on a
/// log scale of nines the tail gets room (a bar chart of p50 … max is
/// all max). Under `--rate`, service time beside the latency: the gap
/// between them is the time operations waited for their turn.
fn spectrum_chart(part: &Json) -> Result<Option<Chart>> {
    let spectrum = |key: &str| -> Vec<Option<(f64, f64)>> {
        part[key]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                let (percentile, ms) = (p["percentile"].as_f64()?, p["ms"].as_f64()?);
                let point = SpectrumPoint { percentile, ms };
                Some((point.nines().min(MAX_AT), ms))
            })
            .collect()
    };
    let latency = spectrum("latency_spectrum");
    if latency.is_empty() {
        return Ok(None);
    }
    let service = spectrum("service_time_spectrum");
    let mut lines = vec![Line {
        label: if service.is_empty() { "latency" } else { "latency (from the intended start)" }.into(),
        color: BLUE,
        points: latency,
    }];
    if !service.is_empty() {
        lines.push(Line { label: "service time (from the actual start)".into(), color: ORANGE, points: service });
    }
    // The max stands apart at the axis' end: a line to it would draw percentiles not measured.
    for line in &mut lines {
        let last = line.points.len() - 1;
        line.points.insert(last, None);
    }
    let l = &part["latency_ms"];
    let figure = |key: &str| human(l[key].as_f64(), Unit::Ms);
    let (lines, unit) = in_unit(lines);
    Ok(Some(Chart {
        title: "Latency by percentile".into(),
        caption: format!(
            "from the merged HDR histogram of the measured window, to 99.99 % and the max on a log scale: p50 {}, \
             p99 {}, p99.9 {}, max {}",
            figure("p50"),
            figure("p99"),
            figure("p99_9"),
            figure("max")
        ),
        legend: if lines.len() > 1 { lines.iter().map(Line::key).collect() } else { Vec::new() },
        svg: line_chart(&lines, &NINES, unit, None, &Marks::default(), tick)?,
    }))
}

/// A unit for latencies in ms, chosen by the largest: µs under 1 ms, s
/// from 1,000 ms, so that figures read `40.6 s`, not `40566.783 ms`.
fn unit_for(max_ms: f64) -> (&'static str, f64) {
    if max_ms >= 1000.0 {
        ("s", 1e-3)
    } else if max_ms > 0.0 && max_ms < 1.0 {
        ("µs", 1e3)
    } else {
        ("ms", 1.0)
    }
}

/// Latency lines in ms, converted to the unit their largest value reads
/// best in, and that unit (for the axis).
fn in_unit(mut lines: Vec<Line>) -> (Vec<Line>, &'static str) {
    let (unit, per_ms) = unit_for(lines.iter().map(Line::max_y).fold(0.0, f64::max));
    for p in lines.iter_mut().flat_map(|l| l.points.iter_mut().flatten()) {
        p.1 *= per_ms;
    }
    (lines, unit)
}

/// Where the spectrum draws the max: one nine beyond 99.99 %, on the axis's last tick.
const MAX_AT: f64 = 5.0;

/// The spectrum's x axis: nines (−log10(1 − p): 1 for 90 %, 3 for 99.9 %),
/// so that 90, 99, 99.9 and 99.99 % are evenly apart, as HdrHistogram's
/// percentile plots draw them; the max at its end.
pub(super) const NINES: XAxis = XAxis { desc: "percentile (log scale of nines)", label: percentile };

pub(super) fn percentile(nines: &f64) -> String {
    if *nines >= MAX_AT {
        return "max".into();
    }
    let p = 100.0 * (1.0 - 10f64.powf(-nines));
    let text = format!("{p:.3}");
    format!("{}%", text.trim_end_matches('0').trim_end_matches('.'))
}

/// What a timeline chart marks behind its lines, in seconds since the start.
#[derive(Default, Clone, Copy)]
pub(super) struct Marks<'a> {
    /// Outage windows (start, end), shaded.
    pub(super) outages: &'a [(f64, f64)],
    /// Where a stage begins (the first one's start left out), a vertical line each.
    pub(super) boundaries: &'a [f64],
    /// The warm-up's end: shaded from the start to it.
    pub(super) warmup: Option<f64>,
    /// What the open loop was asked for (the throughput chart's), dashed.
    pub(super) target: Option<&'a Line>,
    /// What the server did (a checkpoint, lock waits, ...): a dashed line
    /// at its second, in its kind's colour.
    pub(super) events: &'a [(f64, RGBColor)],
    /// The time axis' end when the chart shares it with others; without,
    /// the last point's.
    pub(super) span: Option<f64>,
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
    let x_max = marks.span.unwrap_or_else(|| {
        lines.iter().chain(right).flat_map(|l| l.points.iter().flatten()).map(|p| p.0).fold(1.0, f64::max)
    });
    let headroom = |m: f64| if m > 0.0 { m * 1.1 } else { 1.0 };
    let y_max = headroom(lines.iter().chain(marks.target).map(Line::max_y).fold(0.0, f64::max));
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
        chart.draw_series(marks.warmup.map(|end| Rectangle::new([(0.0, 0.0), (end, y_max)], WARMUP.filled())))?;
        chart
            .draw_series(marks.outages.iter().map(|&(a, b)| Rectangle::new([(a, 0.0), (b, y_max)], OUTAGE.filled())))?;
        chart.draw_series(
            marks.boundaries.iter().map(|&at| PathElement::new(vec![(at, 0.0), (at, y_max)], BOUNDARY.stroke_width(2))),
        )?;
        for &(at, color) in marks.events {
            chart.draw_series(DashedLineSeries::new([(at, 0.0), (at, y_max)], 4, 4, color.stroke_width(2)))?;
        }
        for run in marks.target.iter().flat_map(|t| t.segments()) {
            chart.draw_series(DashedLineSeries::new(run, 8, 6, INK.stroke_width(1)))?;
        }
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

#[cfg(test)]
pub(super) mod tests {
    use serde_json::json;

    use super::*;

    /// A workload's report as JSON, shaped like `QueryReport`'s.
    pub(crate) fn workload(timeline: Json, latency: Json) -> Json {
        json!({
            "schema_version": 2, "dbload_version": "0.1.0", "command": "workload",
            "status": "failed", "exit_code": 1, "fail_if": [],
            "count": 120, "errors": 3, "qps": 60.0, "duration_s": 2.0, "wall_s": 2.1,
            "latency_ms": latency, "service_time_ms": null, "schedule_lag_ms": null, "warmup": null,
            "latency_spectrum": if latency.is_null() { Json::Null } else { spectrum() },
            "service_time_spectrum": null, "rate_warning": null,
            "error_classes": [{"class": "SQLSTATE 42703", "count": 3, "example": "column \"<nosuch>\" does not exist"}],
            "queries": [{
                "name": "<script>alert(1)</script>", "query": "select '<b>' & 1", "ratio": 1.0, "share": 1.0,
                "count": 120, "errors": 3, "qps": 60.0, "duration_s": 2.0, "latency_ms": latency,
                "error_classes": [], "explain": null, "explain_error": null,
                "timeline_latency_mean_ms": [4.0, 4.5, null]
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

    pub(crate) fn latency() -> Json {
        json!({"count": 120, "mean": 4.2, "mean_ci95": 0.1, "stdev": 1.1, "min": 1.0, "max": 20.5,
               "p50": 4.0, "p90": 6.0, "p95": 7.5, "p99": 12.0, "p99_9": 20.5})
    }

    /// Whether plotters wrote `text` as a text element of `svg` (a tick, an axis' unit).
    pub(crate) fn has_text(svg: &str, text: &str) -> bool {
        svg.contains(&format!(">\n{text}\n</text>"))
    }

    /// The spectrum of 1..=100,000 µs, uniformly: p ms at percentile p.
    pub(crate) fn spectrum() -> Json {
        let mut h = crate::stats::hist::new_histogram();
        (1..=100_000u64).for_each(|us| h.record(us).unwrap());
        serde_json::to_value(crate::stats::summary::spectrum(&h)).unwrap()
    }

    pub(crate) fn timeline() -> Json {
        json!([
            {"second": 0, "rows": 70, "batches": 72, "errors": 2, "latency_mean_ms": 4.0, "latency_p50_ms": 3.9,
             "latency_p99_ms": 12.0, "latency_max_ms": 20.5},
            {"second": 1, "rows": 50, "batches": 51, "errors": 1, "latency_mean_ms": 4.5, "latency_p50_ms": 4.1,
             "latency_p99_ms": 8.5, "latency_max_ms": 9.0},
            {"second": 2, "rows": 0, "batches": 0, "errors": 0, "latency_mean_ms": null, "latency_p50_ms": null,
             "latency_p99_ms": null, "latency_max_ms": null}
        ])
    }

    /// A timeline of `n` seconds, each with 100 operations of 4 ms.
    pub(crate) fn seconds(n: u64) -> Json {
        (0..n)
            .map(|second| {
                json!({"second": second, "rows": 100, "batches": 100, "errors": 0, "latency_mean_ms": 4.0,
                       "latency_p50_ms": 4.0, "latency_p99_ms": 6.0, "latency_max_ms": 9.0})
            })
            .collect()
    }

    /// The x tick labels of a chart's `svg` (centred under the axis), each
    /// with its x: what two charts on one time axis share.
    pub(crate) fn x_ticks(svg: &str, x: &XAxis) -> Vec<(f64, String)> {
        texts(svg).into_iter().filter(|t| t.1 == "middle" && t.3 != x.desc).map(|t| (t.0, t.3)).collect()
    }

    /// Each point of the line drawn in `color` (upper-case hex) in `svg`, in pixels.
    fn pixels(svg: &str, color: &str) -> Vec<(f64, f64)> {
        let svg = svg.to_uppercase();
        let line = svg.lines().find(|l| l.starts_with("<POLYLINE") && l.contains(color)).expect("the line");
        let points = line.split("POINTS=\"").nth(1).unwrap().split('"').next().unwrap();
        points
            .split_whitespace()
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect()
    }

    /// Issue 35: a `--stages` run drew no VUs: the chart under the
    /// throughput's draws them, on its time axis, and its line follows the
    /// stages (one VU for two seconds, a jump to four, four held).
    #[test]
    fn a_staged_run_draws_its_vus_under_the_throughput() {
        let mut report = workload(seconds(5), latency());
        report["wall_s"] = json!(5.0);
        report["stages"] = json!([
            {"stage": 1, "ramps": "vus", "start_s": 0.0, "end_s": 2.0, "from": 1.0, "to": 1.0},
            {"stage": 2, "ramps": "vus", "start_s": 2.0, "end_s": 2.0, "from": 1.0, "to": 4.0},
            {"stage": 3, "ramps": "vus", "start_s": 2.0, "end_s": 4.0, "from": 4.0, "to": 4.0}
        ]);
        let charts = charts(&report, None).unwrap();
        let titles: Vec<&str> = charts.iter().map(|c| c.title.as_str()).collect();
        assert!(titles.len() > 1 && titles[1].starts_with("VUs"), "{titles:?}");
        let vus = &charts[1];
        assert_eq!(x_ticks(&vus.svg, &SECONDS), x_ticks(&charts[0].svg, &SECONDS), "the throughput's time axis");
        // The stages' points: (0, 1) (2, 1), (2, 1) (2, 4), (2, 4) (4, 4).
        let line = pixels(&vus.svg, "#15803D");
        assert_eq!(line.len(), 6, "{line:?}");
        assert!(line[..3].iter().all(|p| p.1 == line[0].1) && line[3..].iter().all(|p| p.1 == line[3].1), "{line:?}");
        assert!(line[3].1 < line[0].1, "four VUs stand above one: {line:?}");
        assert!(line[1].0 == line[3].0 && line[5].0 > line[3].0, "the jump at second 2: {line:?}");
        // Rate stages ramp no workers: no VUs.
        report["stages"] = json!([{"stage": 1, "ramps": "rate", "start_s": 0.0, "end_s": 4.0, "from": 0.0, "to": 9.0}]);
        assert!(!super::charts(&report, None).unwrap().iter().any(|c| c.title.starts_with("VUs")));
    }

    /// Issue 35: the wait band under the throughput ran to the number of
    /// seconds, the line charts to the last whole second (or to the shared
    /// axis of a `dbload run` page): a second's band stood a little right of
    /// its point. Both axes are now the same, alone and on a shared span.
    #[test]
    fn the_wait_band_shares_the_throughput_s_time_axis() {
        let mut report = workload(seconds(5), latency());
        report["wall_s"] = json!(5.0);
        report["server"] = json!({
            "waits": [{"wait": "Lock:relation", "samples": 4, "share": 1.0}],
            "seconds": (0..5).map(|s| json!({"second": s, "own_waits": {"Lock:relation": 1}})).collect::<Vec<_>>()
        });
        for span in [None, Some(8.0)] {
            let charts = charts(&report, span).unwrap();
            let band = charts.iter().find(|c| c.title.contains("wait events")).expect("the band");
            assert_eq!(x_ticks(&band.svg, &SECONDS), x_ticks(&charts[0].svg, &SECONDS), "span {span:?}");
        }
    }

    /// Each text element of `svg`: its x, its anchor, its font size, its text.
    pub(crate) fn texts(svg: &str) -> Vec<(f64, String, f64, String)> {
        let attr = |tag: &str, name: &str| -> Option<String> {
            Some(tag.split(&format!(" {name}=\"")).nth(1)?.split('"').next()?.to_string())
        };
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let (tag, rest) = t.split_once('>').filter(|(tag, _)| !tag.contains("rotate"))?;
                let text = rest.split("</text>").next()?.trim().to_string();
                let x = attr(tag, "x")?.parse().ok()?;
                let size = attr(tag, "font-size")?.parse().ok()?;
                Some((x, attr(tag, "text-anchor").unwrap_or_default(), size, text))
            })
            .collect()
    }

    /// Issue 35: the spectrum's last tick, "99.9%", sat centred on the
    /// chart's right edge and half of it was cut off. Every tick, at about
    /// 0.6 em a character, ends inside the chart's width.
    #[test]
    fn tick_labels_stay_inside_the_chart() {
        let charts = charts(&workload(timeline(), latency()), None).unwrap();
        let lines = [Line { label: "a".into(), color: BLUE, points: vec![Some((0.3, 1.0)), Some((3.0, 9.0))] }];
        let nines = line_chart(&lines, &NINES, "ms", None, &Marks::default(), tick).unwrap();
        for svg in charts.iter().map(|c| c.svg.as_str()).chain([nines.as_str()]) {
            for (x, anchor, size, text) in texts(svg) {
                let width = 0.6 * size * text.chars().count() as f64;
                let end = if anchor == "middle" { x + width / 2.0 } else { x + width };
                assert!(anchor == "end" || end <= SIZE.0 as f64, "`{text}` at {x} ends at {end:.0}: {svg}");
                assert!(size >= 11.0, "`{text}` in {size} px");
            }
        }
        assert!(has_text(&nines, "99.9%"));
    }

    /// Issue 35: two series of a page were red and orange, which read as
    /// one. The series' first colours are far apart in hue.
    #[test]
    fn the_first_series_colours_are_far_apart() {
        // The hue as a share of the circle.
        let hue = |RGBColor(r, g, b): RGBColor| {
            let (r, g, b) = (f64::from(r), f64::from(g), f64::from(b));
            let (max, min) = (r.max(g).max(b), r.min(g).min(b));
            let h = if max == r {
                (g - b) / (max - min)
            } else if max == g {
                2.0 + (b - r) / (max - min)
            } else {
                4.0 + (r - g) / (max - min)
            };
            (h / 6.0).rem_euclid(1.0)
        };
        for (i, a) in PALETTE[..5].iter().enumerate() {
            for b in &PALETTE[i + 1..5] {
                let d = (hue(*a) - hue(*b)).abs();
                assert!(d.min(1.0 - d) > 0.06, "{a:?} and {b:?}: {d:.3} of the circle apart");
            }
        }
    }

    #[test]
    fn timeline_charts_show_errors_on_their_own_axis_and_break_at_gaps() {
        let charts = charts(&workload(timeline(), latency()), None).unwrap();
        let titles: Vec<&str> = charts.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(titles, ["Throughput: queries per second", "Latency per second", "Latency by percentile"]);
        assert_eq!(charts[0].legend.len(), 2, "queries/s and errors/s");
        assert!(charts[0].svg.contains("errors/s"), "the right axis is labelled");
        // Second 2 completed nothing: mean and max lines stop at second 1.
        let line = Line { label: "mean".into(), color: BLUE, points: vec![Some((0.0, 1.0)), None, Some((2.0, 3.0))] };
        assert_eq!(line.segments().count(), 2);
        for c in &charts {
            assert!(c.svg.starts_with("<svg") && c.svg.trim_end().ends_with("</svg>"), "{}", c.title);
        }
    }

    /// The points of the line drawn in `color` (upper-case hex) in `svg`.
    fn points(svg: &str, color: &str) -> usize {
        let svg = svg.to_uppercase();
        let line = svg.lines().find(|l| l.starts_with("<POLYLINE") && l.contains(color)).expect("the line");
        line.split("POINTS=\"").nth(1).unwrap().split('"').next().unwrap().split_whitespace().count()
    }

    /// A run ends inside a second: that second's few operations, drawn,
    /// made every time chart end in a cliff. Only whole seconds are drawn.
    #[test]
    fn the_partial_last_second_is_left_out_of_the_time_charts() {
        let mut timeline = timeline();
        timeline[2] = json!({"second": 2, "rows": 2, "batches": 2, "errors": 0, "latency_mean_ms": 0.1,
                              "latency_max_ms": 0.1});
        let mut report = workload(timeline, latency());
        report["queries"][0]["timeline_latency_mean_ms"] = json!([4.0, 4.5, 0.1]);
        let second = report["queries"][0].clone();
        report["queries"].as_array_mut().unwrap().push(second);
        report["wall_s"] = json!(2.0004);
        let charts = charts(&report, None).unwrap();
        assert_eq!(points(&charts[0].svg, "#2563EB"), 2, "seconds 0 and 1; second 2 lasted 0.4 ms");
        assert!(!charts[0].caption.contains("may be partial"), "{}", charts[0].caption);
        let per_query = charts.iter().find(|c| c.title.contains("per query")).unwrap();
        assert_eq!(points(&per_query.svg, "#2563EB"), 2);
        // A run of 2.5 s: second 2 is half a second, left out too.
        report["wall_s"] = json!(2.5);
        assert_eq!(points(&super::charts(&report, None).unwrap()[0].svg, "#2563EB"), 2);
        report["wall_s"] = json!(3.0);
        assert_eq!(points(&super::charts(&report, None).unwrap()[0].svg, "#2563EB"), 3);
    }

    /// Under `--rate` the throughput chart shows what was asked beside
    /// what was done: a dashed level at the rate, or the ramps of
    /// `--rate-stages`, up to the last whole second; none in a closed loop.
    #[test]
    fn the_target_rate_is_drawn_under_an_open_loop() {
        // The dashes: many short strokes in the ink's colour.
        let ink = |svg: &str| svg.to_uppercase().matches("#374151").count();
        let mut report = workload(timeline(), latency());
        let closed = charts(&report, None).unwrap();
        assert!(!closed[0].legend.iter().any(|k| k.label == "target rate"));
        report["setup"]["rate_queries_per_sec"] = json!(60.0);
        let paced = charts(&report, None).unwrap();
        let keys: Vec<&str> = paced[0].legend.iter().map(|k| k.label.as_str()).collect();
        assert_eq!(keys[..2], ["queries/s", "target rate"]);
        assert!(ink(&paced[0].svg) > ink(&closed[0].svg) + 10, "{} vs {}", ink(&paced[0].svg), ink(&closed[0].svg));
        // Rate stages: their ramps, clipped to the charted seconds.
        report["stages"] = json!([
            {"stage": 1, "ramps": "rate", "start_s": 0.0, "end_s": 1.0, "from": 0.0, "to": 100.0},
            {"stage": 2, "ramps": "rate", "start_s": 1.0, "end_s": 4.0, "from": 100.0, "to": 400.0}
        ]);
        let line = target_rate(&report, 2.0).unwrap();
        assert_eq!(line.points, [Some((0.0, 0.0)), Some((1.0, 100.0)), Some((1.0, 100.0)), Some((2.0, 200.0))]);
    }

    #[test]
    fn outages_are_shaded_on_the_timeline_charts() {
        let mut report = workload(timeline(), latency());
        report["outages"] = json!([{"start_s": 0.5, "end_s": 1.5, "duration_s": 1.0, "error": "connection lost: x",
                                    "workers": 2, "reconnected": true}]);
        let shade = "#FED7AA";
        let plain = charts(&workload(timeline(), latency()), None).unwrap();
        assert!(!plain[0].svg.to_uppercase().contains(shade), "no outage, no shade");
        let charts = charts(&report, None).unwrap();
        for c in &charts[..2] {
            assert!(c.svg.to_uppercase().contains(shade), "{}: the window is shaded", c.title);
        }
        assert_eq!(charts[0].legend.last().unwrap().label, "outage (a connection lost)");
    }

    #[test]
    fn latency_is_a_spectrum_of_percentiles_to_99_99_and_the_max() {
        let charts = charts(&workload(timeline(), latency()), None).unwrap();
        let c = charts.iter().find(|c| c.title == "Latency by percentile").expect("the spectrum");
        for tick in ["0%", "90%", "99%", "99.9%", "99.99%", "max"] {
            assert!(has_text(&c.svg, tick), "the tick {tick}");
        }
        assert!(has_text(&c.svg, "ms"), "up to 100 ms: the axis is in ms");
        assert!(c.legend.is_empty(), "one line needs no legend");
        assert!(c.caption.contains("p99 12.0 ms") && c.caption.contains("max 20.5 ms"), "{}", c.caption);
        // Under --rate, service time beside the latency.
        let mut paced = workload(timeline(), latency());
        paced["service_time_spectrum"] = spectrum();
        let charts = super::charts(&paced, None).unwrap();
        let keys: Vec<&str> = charts.last().unwrap().legend.iter().map(|k| k.label.as_str()).collect();
        assert_eq!(keys, ["latency (from the intended start)", "service time (from the actual start)"]);
        let svg = charts.last().unwrap().svg.to_uppercase();
        let lines = |color: &str| svg.lines().filter(|l| l.starts_with("<POLYLINE") && l.contains(color)).count();
        // Each: the curve to 99.99 %, then the max on its own (a run of one point, not joined to it).
        assert_eq!((lines("#2563EB"), lines("#EA580C")), (2, 2));
    }

    /// One slow operation in a second set the per-second chart's axis
    /// (its max line) and flattened the rest: the chart draws each
    /// second's p50 and p99, and a merge of instances, which has no
    /// percentiles per second, its mean and max.
    #[test]
    fn latency_per_second_is_p50_and_p99_not_flattened_by_one_outlier() {
        let mut report = workload(timeline(), latency());
        report["timeline"][0]["latency_max_ms"] = json!(40_566.783);
        let charts = charts(&report, None).unwrap();
        let c = charts.iter().find(|c| c.title == "Latency per second").unwrap();
        let keys: Vec<&str> = c.legend.iter().map(|k| k.label.as_str()).collect();
        assert_eq!(keys, ["p50", "p99"]);
        assert!(has_text(&c.svg, "ms") && !has_text(&c.svg, "s"), "the axis in ms: the 40 s max is not on it");
        for e in report["timeline"].as_array_mut().unwrap() {
            e["latency_p50_ms"] = Json::Null;
            e["latency_p99_ms"] = Json::Null;
        }
        let charts = super::charts(&report, None).unwrap();
        let c = charts.iter().find(|c| c.title == "Latency per second").unwrap();
        let keys: Vec<&str> = c.legend.iter().map(|k| k.label.as_str()).collect();
        assert_eq!(keys, ["mean", "max"]);
    }

    #[test]
    fn latencies_read_in_the_unit_that_fits() {
        assert_eq!(human(Some(40_566.783), Unit::Ms), "40.6 s");
        assert_eq!(human(Some(3.214), Unit::Ms), "3.21 ms");
        assert_eq!(human(Some(0.42), Unit::Ms), "420 µs");
        assert_eq!(human(Some(0.0), Unit::Ms), "0 ms");
        let mut slow = workload(timeline(), latency());
        slow["timeline"][0]["latency_p99_ms"] = json!(40_566.783);
        let charts = charts(&slow, None).unwrap();
        let per_second = charts.iter().find(|c| c.title == "Latency per second").unwrap();
        assert!(has_text(&per_second.svg, "s") && !has_text(&per_second.svg, "ms"), "the axis in s");
        assert!(has_text(&per_second.svg, "40"), "ticks in s: 40, not 40,000");
    }

    #[test]
    fn a_workload_draws_a_latency_line_per_query() {
        let mut report = workload(timeline(), latency());
        let mut second = report["queries"][0].clone();
        second["name"] = json!("lastpoint");
        second["timeline_latency_mean_ms"] = json!([9.0, null, 7.0]);
        report["queries"].as_array_mut().unwrap().push(second);
        let charts = charts(&report, None).unwrap();
        let c = charts.iter().find(|c| c.title == "Latency per second, per query").expect("the per-query chart");
        let keys: Vec<&str> = c.legend.iter().map(|k| k.label.as_str()).collect();
        assert_eq!(keys, ["<script>alert(1)</script>", "lastpoint"], "escaped by the template, not here");
        report["command"] = json!("timeit");
        let titles: Vec<String> = super::charts(&report, None).unwrap().into_iter().map(|c| c.title).collect();
        assert!(!titles.iter().any(|t| t.contains("per query")), "timeit's statements ran one after another");
    }
}
