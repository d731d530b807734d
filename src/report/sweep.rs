//! `dbload sweep`'s report: every point of the grid (or every step of a
//! saturation search) with its runs and figures, the best point and its
//! margin over the runner-up; as text, as JSON (`schema/sweep.schema.json`)
//! and as an HTML page of charts. Plain data that `sweep/` fills in: this
//! file runs nothing.

use std::fmt::Write as _;

use serde::Serialize;

use super::repeat::figure;
use super::table::Table;

/// The version of the sweep report's shape.
pub const SCHEMA_VERSION: u32 = 1;

/// A sweep, as it ended.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SweepReport {
    pub schema_version: u32,
    /// Always `sweep`.
    pub command: crate::report::Name,
    /// `ok` (a best point or a sustainable rate was found), `no_point`
    /// (none met --where or --slo), `interrupted`, or `failed` (a point
    /// could not run: `stopped` says why).
    pub status: crate::report::Name,
    pub exit_code: u8,
    /// The sweep's run_id: its tag on every point's run, and its name in
    /// the results store.
    pub sweep_id: String,
    /// `grid` or `find_max_rate`.
    pub mode: crate::report::Name,
    /// The command swept (`ingest`, `timeit`, ...).
    pub swept: String,
    /// The command and its arguments as given after `--`, secrets redacted.
    pub base_command: String,
    pub varied: Vec<Varied>,
    pub objective: Objective,
    /// `--where` conditions, as written.
    #[serde(rename = "where")]
    pub where_: Vec<String>,
    /// Runs per point.
    pub runs: u32,
    /// The seed of the shuffled order (`--seed` replays it).
    pub seed: u64,
    /// `shuffled_rounds` (a grid: every point once a round, the order
    /// shuffled per round) or `sequential` (a search's steps).
    pub order_method: crate::report::Name,
    /// The points' indices in the order they ran, one list per round.
    pub order: Vec<Vec<usize>>,
    pub points: Vec<Point>,
    /// The index of the best point.
    pub best: Option<usize>,
    pub margin: Option<Margin>,
    pub search: Option<Search>,
    /// What stopped the sweep before its end, if anything did.
    pub stopped: Option<String>,
}

/// One `--vary` flag and its values.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Varied {
    pub flag: String,
    pub values: Vec<String>,
}

/// `--objective`: which figure the best point has the most (`max`) or the
/// least (`min`) of.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Objective {
    pub direction: crate::report::Name,
    pub figure: String,
}

/// One point of the sweep.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Point {
    pub index: usize,
    /// `batch-size=500,workers=2`: its tag in the store.
    pub label: String,
    /// Its value of each varied flag, in the order of `varied`.
    pub values: Vec<String>,
    /// `ok`, `failed` (a run had failed operations or could not run),
    /// `interrupted`, or `not_run` (the sweep stopped first).
    pub status: crate::report::Name,
    /// Whether it may be best: every run finished ok and every --where
    /// (--slo) holds for the medians.
    pub eligible: bool,
    pub why_not: Option<String>,
    /// The objective figure: the median over its runs.
    pub objective: Option<f64>,
    /// Its headline figures (rows_per_sec or qps or http_reqs_per_sec,
    /// p50_ms, p99_ms, errors, ...): medians over its runs.
    pub figures: std::collections::BTreeMap<String, f64>,
    pub runs: Vec<PointRun>,
}

/// One run of a point.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PointRun {
    /// 1-based.
    pub round: u32,
    /// Its run_id in the results store (none if it could not run).
    pub run_id: Option<String>,
    pub status: String,
    pub exit_code: u8,
    pub figures: std::collections::BTreeMap<String, f64>,
}

/// The best point against the runner-up, on the objective figure.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Margin {
    pub runner_up: usize,
    /// The best point's median over the runner-up's.
    pub ratio: f64,
    /// With enough runs on both sides: the 95 % bootstrap interval of that
    /// ratio and the exact Mann–Whitney p-value, as `compare` gives them.
    pub ratio_ci95: Option<RatioInterval>,
    pub p_value: Option<f64>,
    /// As `compare` words it: `better`, `within_noise`, `single_runs`,
    /// `too_few_runs`.
    pub verdict: String,
    /// The verdict in words.
    pub verdict_text: String,
}

/// The 95 % bootstrap interval of a ratio of medians.
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RatioInterval {
    pub low: f64,
    pub high: f64,
}

/// `--find-max-rate`: the search and its answer.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Search {
    pub slo: Vec<String>,
    pub start_rate: f64,
    pub precision_percent: f64,
    pub max_rate: Option<f64>,
    /// The highest rate held; none if the start rate broke.
    pub max_sustainable_rate: Option<f64>,
    /// The latency-vs-rate curve: every step, in the order tried.
    pub steps: Vec<Step>,
}

/// One step of the search.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Step {
    /// Its point's index.
    pub point: usize,
    pub target_rate: f64,
    pub achieved_rate: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub held: bool,
    /// Whether its percentiles rest on enough samples to be judged (see
    /// the sweep's `MIN_SAMPLES`); a step not judged does not hold.
    pub judged: bool,
    /// The `--duration` (seconds) it ran again with, having had too few
    /// samples at the one given.
    pub extended_duration_s: Option<u64>,
    /// Why it did not hold.
    pub why_not: Option<String>,
}

impl SweepReport {
    /// The headline throughput figure its points have, and how tables head
    /// it.
    fn throughput(&self) -> Option<(&'static str, &'static str)> {
        let known = [("rows_per_sec", "rows/s"), ("qps", "queries/s"), ("http_reqs_per_sec", "requests/s")];
        known.into_iter().find(|(name, _)| self.points.iter().any(|p| p.figures.contains_key(*name)))
    }
}

/// The text form: what was swept, its points and the best one, as `table`
/// lays them out.
pub fn render(r: &SweepReport) -> String {
    table(r).text()
}

/// What was swept, a table of every point (the varied flags, the headline
/// figures, whether it may be best; the best one marked), then the best
/// point and its margin, or the rate found.
fn table(r: &SweepReport) -> Table {
    let flags: Vec<&str> = r.varied.iter().map(|v| v.flag.as_str()).collect();
    let runs = if r.runs == 1 { "1 run each".to_string() } else { format!("{} runs each", r.runs) };
    let order = match &*r.order_method {
        "shuffled_rounds" => format!("{runs}, in an order shuffled per round, seed {}", r.seed),
        _ => format!("{runs}, one step after another"),
    };
    let mut wanted = format!("Objective: {} {}", r.objective.direction, r.objective.figure);
    if !r.where_.is_empty() {
        let _ = write!(wanted, "; where {}", r.where_.join(" and "));
    }
    if r.search.is_some() {
        let kept = if r.where_.is_empty() { "its rate".to_string() } else { r.where_.join(" and ") };
        wanted = format!("Find the highest rate that keeps {kept}");
    }
    let throughput = r.throughput();
    let mut head: Vec<String> = vec![String::new()];
    head.extend(flags.iter().map(|f| f.to_string()));
    let mut figures: Vec<(&str, &str)> = throughput.into_iter().collect();
    figures.extend([("p50_ms", "p50 ms"), ("p99_ms", "p99 ms"), ("errors", "errors")]);
    let objective_shown = figures.iter().any(|(name, _)| *name == r.objective.figure);
    head.extend(figures.iter().map(|(_, label)| label.to_string()));
    if !objective_shown {
        head.push(r.objective.figure.clone());
    }
    head.push("eligible".into());
    // The figures right-aligned: after the mark and the flags' values, before `eligible`.
    let (last_value, eligible) = (flags.len(), head.len() - 1);
    let mut table = Table::new(head, |c| c > last_value && c < eligible);
    table.above = vec![
        format!("Sweep {}: {} over {} ({order})", r.sweep_id, r.swept, flags.join(" × ")),
        format!("Command: {}", r.base_command),
        wanted,
    ];
    table.marked = r.best;
    for p in &r.points {
        let mut row = vec![if r.best == Some(p.index) { "*".to_string() } else { String::new() }];
        row.extend(p.values.iter().cloned());
        row.extend(figures.iter().map(|(name, _)| p.figures.get(*name).map_or("-".into(), |v| figure(*v))));
        if !objective_shown {
            row.push(p.objective.map_or("-".into(), figure));
        }
        row.push(match (&p.why_not, r.best == Some(p.index)) {
            (_, true) => "yes (best)".into(),
            (None, false) => "yes".into(),
            (Some(why), false) => format!("no: {why}"),
        });
        table.rows.push(row);
    }
    let below = &mut table.below;
    if let Some(s) = &r.search {
        below.push(match s.max_sustainable_rate {
            // The search stops at --max-rate: what it found is the limit given, not the target's.
            Some(rate) if s.max_rate == Some(rate) => format!(
                "Highest sustainable rate: {}/s, the --max-rate given: the search stopped there, and the target \
                 may sustain more (raise --max-rate to find out)",
                figure(rate)
            ),
            Some(rate) => format!("Highest sustainable rate: {}/s", figure(rate)),
            None if s.steps.first().is_some_and(|step| !step.judged) => format!(
                "No rate judged: the first step ({}/s) had too few samples for its percentile (see its row)",
                figure(s.start_rate)
            ),
            None => format!("No rate held: the first step ({}/s) already broke", figure(s.start_rate)),
        });
        // A step not judged ends the search like a broken one, without showing that the rate broke.
        if let Some(step) = s.steps.iter().skip(usize::from(s.max_sustainable_rate.is_none())).find(|s| !s.judged) {
            below.push(format!(
                "The step at {}/s was too short to judge and counts as not held: the target may sustain more; \
                 a longer --duration gives each step more samples",
                figure(step.target_rate)
            ));
        }
    } else if let Some(best) = r.best.map(|i| &r.points[i]) {
        let value = best.objective.map_or("-".into(), figure);
        let margin = match &r.margin {
            Some(m) => {
                let interval = m.ratio_ci95.map(|i| format!(" [{:.3}, {:.3}]", i.low, i.high)).unwrap_or_default();
                let runner_up = &r.points[m.runner_up].label;
                format!(", {:.3}× the runner-up {runner_up} ({}{interval})", m.ratio, m.verdict_text)
            }
            None => ", the only eligible point".into(),
        };
        below.push(format!("Best: {} ({} {value}){margin}", best.label, r.objective.figure));
    } else if r.status != "interrupted" {
        below.push("No point meets every --where: no best point".into());
    }
    if r.status == "interrupted" {
        let done = r.points.iter().map(|p| p.runs.len()).sum::<usize>();
        let planned = r.order.iter().map(Vec::len).sum::<usize>();
        below.push(format!("Interrupted: {done} of {planned} runs done; the points above are what they measured"));
    }
    if let Some(why) = &r.stopped {
        below.push(format!("Stopped: {why}"));
    }
    table
}

/// Writes the sweep's HTML page to `path`: its header (from `stamped`, the
/// report with its `run` object), its table, then its charts.
pub fn write_html(r: &SweepReport, stamped: &serde_json::Value, path: &std::path::Path) -> anyhow::Result<()> {
    use anyhow::Context;
    let html = html(r, stamped)?;
    std::fs::write(path, html).with_context(|| format!("--html: cannot create {}", path.display()))
}

/// The page: the table above the charts, in the page `compare --html`
/// makes.
pub fn html(r: &SweepReport, stamped: &serde_json::Value) -> anyhow::Result<String> {
    use super::compare_html::{TEMPLATE, TEMPLATE_NAME};
    use anyhow::Context;
    use minijinja::{context, value::Serde};
    let charts = charts(r)?;
    let env = super::page::environment(TEMPLATE_NAME, TEMPLATE)?;
    let template = env.get_template(TEMPLATE_NAME).context("the sweep's HTML template")?;
    let (heading, names, table) = (format!("dbload sweep of {}", r.swept), [r.sweep_id.clone()], table(r));
    let header = super::page::Header::of(stamped, heading.clone());
    template
        .render(context! { heading, names, table => Serde(table), charts => Serde(&charts), header => Serde(header) })
        .context("rendering the sweep's HTML page")
}

/// Throughput against the (first) varied flag, one line per value of the
/// second, if there is one (a search: achieved rate against target rate);
/// and p99 against throughput, the knee. The best point is ringed.
fn charts(r: &SweepReport) -> anyhow::Result<Vec<super::plot::Chart>> {
    use super::charts::Line;
    use super::plot::{BLUE, ORANGE, RED};
    let Some((name, unit)) = r.throughput() else { return Ok(Vec::new()) };
    let colors = [BLUE, RED, ORANGE, plotters::style::RGBColor(21, 128, 61), plotters::style::RGBColor(124, 58, 237)];
    let first = &r.varied[0];
    // A flag's values on the x axis: as numbers when they all are, else by
    // position; numbers over a decade or more (batch sizes 100 to 10,000)
    // on a log axis, where a linear one crowds the small ones together.
    let numeric: Option<Vec<f64>> = first.values.iter().map(|v| v.parse::<f64>().ok()).collect();
    let decades = numeric.as_ref().is_some_and(|n| {
        let (lo, hi) = n.iter().fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
        lo > 0.0 && hi / lo >= 10.0
    });
    let x_of = |p: &Point| -> f64 {
        let i = first.values.iter().position(|v| *v == p.values[0]).unwrap_or(0);
        match &numeric {
            Some(n) if decades => n[i].log10(),
            Some(n) => n[i],
            None => i as f64,
        }
    };
    let series: Vec<Option<&String>> = match r.varied.get(1) {
        Some(second) => second.values.iter().map(Some).collect(),
        None => vec![None],
    };
    // A point on a line: it measured something, and it has the line's value of the second flag.
    let on =
        |p: &Point, s: Option<&String>| p.figures.contains_key(name) && s.is_none_or(|v| p.values.get(1) == Some(v));
    let line = |i: usize, s: Option<&String>, xy: &dyn Fn(&Point) -> Option<(f64, f64)>| {
        let mut points: Vec<(f64, f64)> = r.points.iter().filter(|p| on(p, s)).filter_map(xy).collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let label = s.map_or_else(|| unit.to_string(), |v| format!("{}={v}", r.varied[1].flag));
        Line { label, color: colors[i % colors.len()], points: points.into_iter().map(Some).collect() }
    };
    let best = r.best.map(|i| &r.points[i]);
    let mut out = Vec::new();
    let against_flag: Vec<Line> =
        series.iter().enumerate().map(|(i, s)| line(i, *s, &|p| Some((x_of(p), *p.figures.get(name)?)))).collect();
    let ticks = match &numeric {
        None => XTicks::Names(first.values.clone()),
        Some(_) if decades => XTicks::Decades,
        Some(_) => XTicks::Values,
    };
    out.push(chart(
        format!("{unit} against {}", first.flag),
        match &ticks {
            XTicks::Names(n) => {
                format!("the median of each point's runs; {} by position: {}", first.flag, n.join(", "))
            }
            XTicks::Decades => format!("the median of each point's runs; {} on a log scale", first.flag),
            XTicks::Values => "the median of each point's runs".into(),
        },
        &against_flag,
        best.and_then(|b| Some((x_of(b), *b.figures.get(name)?))),
        (first.flag.clone(), unit.to_string()),
        ticks,
        None,
    )?);
    let knee: Vec<Line> = series
        .iter()
        .enumerate()
        .map(|(i, s)| line(i, *s, &|p| Some((*p.figures.get(name)?, *p.figures.get("p99_ms")?))))
        .collect();
    out.push(chart(
        format!("p99 against {unit}: the knee"),
        "where latency rises faster than throughput, the setup is saturated".into(),
        &knee,
        best.and_then(|b| Some((*b.figures.get(name)?, *b.figures.get("p99_ms")?))),
        (unit.to_string(), "p99 ms".into()),
        XTicks::Values,
        r.search.as_ref().and_then(|s| s.slo.iter().find_map(|slo| p99_bound(slo))),
    )?);
    Ok(out)
}

/// How the x axis of a sweep's chart is ticked.
enum XTicks {
    /// At the values, linearly.
    Values,
    /// At positions, each named by a value that is not a number.
    Names(Vec<String>),
    /// At powers of ten, the axis being their logarithm.
    Decades,
}

/// An SLO on p99 (`p99_ms < 50`, `p99_ms <= 50`) as the line the knee
/// chart draws: its bound and its text.
fn p99_bound(slo: &str) -> Option<(f64, String)> {
    let (figure, bound) = slo.split_once('<')?;
    let bound = bound.trim_start_matches('=').trim().parse().ok()?;
    (figure.trim() == "p99_ms").then(|| (bound, slo.trim().to_string()))
}

/// A chart of `lines` (each point drawn, joined in x order) with `best`
/// ringed, the x axis ticked as `ticks` says, and `slo` (a bound on the y
/// axis and its text) as a dashed level.
fn chart(
    title: String,
    caption: String,
    lines: &[super::charts::Line],
    best: Option<(f64, f64)>,
    (x_desc, y_desc): (String, String),
    ticks: XTicks,
    slo: Option<(f64, String)>,
) -> anyhow::Result<super::plot::Chart> {
    use super::plot::{font, frame, inline, mesh, tick, Chart, LegendKey, INK, ORANGE, SIZE};
    use plotters::prelude::*;
    let all = || lines.iter().flat_map(|l| l.points.iter().flatten());
    let (x_min, x_max) = all().fold((f64::MAX, f64::MIN), |(lo, hi), p| (lo.min(p.0), hi.max(p.0)));
    let (x_min, x_max) = if x_min > x_max { (0.0, 1.0) } else { (x_min, x_max) };
    let pad = match ticks {
        // A log axis may go below 0 (values under 1) and needs less room.
        XTicks::Decades => (x_max - x_min) * 0.05,
        _ => ((x_max - x_min) * 0.08).max(0.5),
    };
    let x_from = match ticks {
        XTicks::Decades => x_min - pad,
        _ => (x_min - pad).max(0.0),
    };
    let y_top = all().map(|p| p.1).chain(slo.as_ref().map(|s| s.0)).fold(0.0, f64::max);
    let y_max = y_top.max(1e-9) * 1.15;
    let near_whole = |v: &f64| (v - v.round()).abs() < 1e-9;
    let label = |v: &f64| match &ticks {
        XTicks::Names(n) if near_whole(v) => n.get(v.round() as usize).cloned().unwrap_or_default(),
        XTicks::Decades if near_whole(v) => tick(&10f64.powi(v.round() as i32)),
        XTicks::Names(_) | XTicks::Decades => String::new(),
        XTicks::Values => tick(v),
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let mut c = frame(&root).build_cartesian_2d(x_from..x_max + pad, 0f64..y_max)?;
        mesh(&mut c).x_label_formatter(&label).y_label_formatter(&tick).x_desc(x_desc).y_desc(y_desc).draw()?;
        if let Some((bound, _)) = &slo {
            let level = vec![(x_from, *bound), (x_max + pad, *bound)];
            c.draw_series(DashedLineSeries::new(level, 8, 6, INK.stroke_width(1)))?;
        }
        for line in lines {
            let points: Vec<(f64, f64)> = line.points.iter().flatten().copied().collect();
            c.draw_series(LineSeries::new(points.clone(), line.color.filled().stroke_width(2)).point_size(3))?;
        }
        if let Some(b) = best {
            // The label above and to the right of the ring, in pixels, clear of it.
            let ring = EmptyElement::at(b)
                + Circle::new((0, 0), 9, ORANGE.stroke_width(3))
                + Text::new("best", (10, -28), font(14));
            c.draw_series(std::iter::once(ring))?;
        }
        root.present()?;
    }
    let mut legend: Vec<LegendKey> = lines.iter().map(super::charts::Line::key).collect();
    legend.extend(best.map(|_| LegendKey::new("best point (ringed)", ORANGE)));
    legend.extend(slo.map(|(_, text)| LegendKey::new(&format!("SLO: {text}"), INK)));
    Ok(Chart { title, caption, legend, svg: inline(svg) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(index: usize, values: [&str; 2], rows_per_sec: f64, why_not: Option<&str>) -> Point {
        let figures = [("rows_per_sec", rows_per_sec), ("p50_ms", 1.5), ("p99_ms", 4.25), ("errors", 0.0)];
        Point {
            index,
            label: format!("batch-size={},workers={}", values[0], values[1]),
            values: values.map(String::from).to_vec(),
            status: if why_not.is_some() { "failed" } else { "ok" }.into(),
            eligible: why_not.is_none(),
            why_not: why_not.map(String::from),
            objective: Some(rows_per_sec),
            figures: figures.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            runs: Vec::new(),
        }
    }

    fn sweep() -> SweepReport {
        let varied =
            |flag: &str, values: [&str; 2]| Varied { flag: flag.into(), values: values.map(String::from).to_vec() };
        SweepReport {
            schema_version: SCHEMA_VERSION,
            command: "sweep".into(),
            status: "ok".into(),
            exit_code: 0,
            sweep_id: "01a20d1c-78aa-76f2-9187-07b4fc2e4f79".into(),
            mode: "grid".into(),
            swept: "ingest".into(),
            base_command: "dbload ingest --rows 1000".into(),
            varied: vec![varied("batch-size", ["500", "2000"]), varied("workers", ["1", "2"])],
            objective: Objective { direction: "max".into(), figure: "rows_per_sec".into() },
            where_: vec!["p99_ms < 500".into()],
            runs: 1,
            seed: 7,
            order_method: "shuffled_rounds".into(),
            order: vec![vec![2, 0, 3, 1]],
            points: vec![
                point(0, ["500", "1"], 1000.0, None),
                point(1, ["500", "2"], 5000.0, Some("`p99_ms < 500` does not hold (p99_ms = 612)")),
                point(2, ["2000", "1"], 3000.0, None),
                point(3, ["2000", "2"], 2000.0, None),
            ],
            best: Some(2),
            margin: Some(Margin {
                runner_up: 3,
                ratio: 1.5,
                ratio_ci95: None,
                p_value: None,
                verdict: "single_runs".into(),
                verdict_text: "single runs: no noise estimate".into(),
            }),
            search: None,
            stopped: None,
        }
    }

    #[test]
    fn sweep_text() {
        insta::assert_snapshot!(render(&sweep()));
    }

    #[test]
    fn the_table_marks_the_best_and_says_why_a_point_is_not_eligible() {
        let text = render(&sweep());
        let best = text.lines().find(|l| l.starts_with('*')).unwrap();
        assert!(best.contains("2000") && best.contains("3,000") && best.ends_with("yes (best)"), "{text}");
        assert!(text.contains("no: `p99_ms < 500` does not hold (p99_ms = 612)"), "{text}");
        assert!(text.contains("seed 7") && text.contains("where p99_ms < 500"), "{text}");
        assert!(
            text.contains("Best: batch-size=2000,workers=1 (rows_per_sec 3,000), 1.500× the runner-up batch-size=2000,workers=2 (single runs: no noise estimate)"),
            "{text}"
        );
        let mut with_runs = sweep();
        with_runs.margin = Some(Margin {
            ratio_ci95: Some(RatioInterval { low: 0.95, high: 1.62 }),
            p_value: Some(0.2),
            verdict: "within_noise".into(),
            verdict_text: "within noise".into(),
            ..with_runs.margin.unwrap()
        });
        assert!(render(&with_runs).contains("(within noise [0.950, 1.620])"), "{}", render(&with_runs));
    }

    /// A search that held --max-rate says that the answer is the limit it
    /// was given, not the target's.
    #[test]
    fn a_search_that_held_max_rate_says_so() {
        let mut r = sweep();
        let search = |max_rate, held| Search {
            slo: vec!["p99_ms < 50".into()],
            start_rate: 100.0,
            precision_percent: 5.0,
            max_rate,
            max_sustainable_rate: Some(held),
            steps: Vec::new(),
        };
        r.search = Some(search(Some(800.0), 800.0));
        let text = render(&r);
        assert!(text.contains("Highest sustainable rate: 800/s, the --max-rate given"), "{text}");
        r.search = Some(search(Some(800.0), 400.0));
        let text = render(&r);
        assert!(text.contains("Highest sustainable rate: 400/s\n") && !text.contains("--max-rate given"), "{text}");
    }

    #[test]
    fn a_step_not_judged_is_not_called_broken() {
        let mut r = sweep();
        let step = |target_rate, judged| Step {
            point: 0,
            target_rate,
            achieved_rate: Some(target_rate),
            p50_ms: Some(1.0),
            p99_ms: Some(2.0),
            held: false,
            judged,
            extended_duration_s: None,
            why_not: Some("not judged: `p99_ms < 50` rests on 2 samples, fewer than 100".into()),
        };
        let search = |max_sustainable_rate, steps| Search {
            slo: vec!["p99_ms < 50".into()],
            start_rate: 2.0,
            precision_percent: 5.0,
            max_rate: None,
            max_sustainable_rate,
            steps,
        };
        r.search = Some(search(None, vec![step(2.0, false)]));
        let text = render(&r);
        assert!(text.contains("No rate judged: the first step (2/s) had too few samples") && !text.contains("broke"));
        assert!(!text.contains("The step at"), "said once: {text}");
        let held = Step { held: true, judged: true, why_not: None, ..step(2.0, true) };
        r.search = Some(search(Some(2.0), vec![held, step(4.0, false)]));
        let text = render(&r);
        assert!(text.contains("Highest sustainable rate: 2/s\nThe step at 4/s was too short to judge"), "{text}");
    }

    #[test]
    fn the_page_has_both_charts_and_loads_nothing() {
        let page = html(&sweep(), &serde_json::to_value(sweep()).unwrap()).unwrap();
        assert_eq!(page.matches("<svg").count(), 2);
        assert!(
            page.contains("against batch-size") && page.contains("workers=2") && page.contains("best point"),
            "{page}"
        );
        for needle in ["http://", "https://", "<script", "<link"] {
            assert!(!page.contains(needle), "the page holds {needle}");
        }
    }

    /// Batch sizes swept over decades (100, 1,000, 10,000) sat in the
    /// first tenth of a linear axis: they go on a log axis, ticked at
    /// powers of ten.
    #[test]
    fn values_over_decades_are_on_a_log_axis() {
        let mut r = sweep();
        r.varied[0].values = vec!["100".into(), "1000".into(), "10000".into()];
        r.varied.truncate(1);
        r.points = ["100", "1000", "10000"]
            .iter()
            .enumerate()
            .map(|(i, v)| Point { values: vec![v.to_string()], ..point(i, [v, "1"], 1000.0 * (i + 1) as f64, None) })
            .collect();
        r.best = Some(2);
        let charts = charts(&r).unwrap();
        let svg = &charts[0].svg;
        let has = |t: &str| crate::report::charts::tests::has_text(svg, t);
        assert!(has("100") && has("1,000") && has("10,000") && !has("8,000"), "{svg}");
        assert!(charts[0].caption.contains("log"), "{}", charts[0].caption);
        // Two values an octave apart stay on a linear axis.
        assert!(!super::charts(&sweep()).unwrap()[0].caption.contains("log"));
    }

    /// The word "best" was drawn over its own ring.
    #[test]
    fn the_best_label_is_clear_of_its_ring() {
        let charts = charts(&sweep()).unwrap();
        let svg = &charts[0].svg;
        let num = |el: &str, name: &str| -> f64 {
            el.split(&format!(" {name}=\"")).nth(1).unwrap().split('"').next().unwrap().parse().unwrap()
        };
        let ring = svg.split("<circle").find(|c| c.contains(" r=\"9\"")).expect("the ring");
        let (cx, cy, r) = (num(ring, "cx"), num(ring, "cy"), num(ring, "r"));
        let label = svg.split("<text").find(|t| t.contains(">\nbest\n</text>")).expect("the label");
        let (x, y) = (num(label, "x"), num(label, "y"));
        assert!(y < cy - r - 4.0 || x > cx + r + 4.0, "label at ({x}, {y}), ring at ({cx}, {cy}) r {r}");
    }

    /// A search's knee chart draws its SLO on p99 as a line: the rates whose
    /// p99 crosses it are those that broke.
    #[test]
    fn a_search_draws_its_slo_on_the_knee_chart() {
        let mut r = sweep();
        r.search = Some(Search {
            slo: vec!["p99_ms < 50".into(), "errors == 0".into()],
            start_rate: 100.0,
            precision_percent: 5.0,
            max_rate: None,
            max_sustainable_rate: Some(400.0),
            steps: Vec::new(),
        });
        let charts = charts(&r).unwrap();
        let keys: Vec<&str> = charts[1].legend.iter().map(|k| k.label.as_str()).collect();
        assert!(keys.contains(&"SLO: p99_ms < 50"), "{keys:?}");
        assert!(crate::report::charts::tests::has_text(&charts[1].svg, "50"), "the axis reaches the SLO");
    }

    #[test]
    fn the_page_shows_the_points_as_a_table_of_cells() {
        let page = html(&sweep(), &serde_json::to_value(sweep()).unwrap()).unwrap();
        assert!(!page.contains("<pre>"), "no table as text: {page}");
        assert!(page.contains("<th>batch-size</th>") && page.contains("<th class=\"num\">p99 ms</th>"), "{page}");
        let best = page.split("<tr class=\"best\">").nth(1).expect("the best point's row is marked");
        let best = best.split("</tr>").next().unwrap();
        assert!(best.contains("<td>2000</td>") && best.contains("<td class=\"num\">3,000</td>"), "{best}");
        assert!(page.contains("<td>no: `p99_ms &lt; 500` does not hold (p99_ms = 612)</td>"), "escaped: {page}");
        assert!(page.contains("<p>Objective: max rows_per_sec; where p99_ms &lt; 500</p>"), "{page}");
        assert!(page.contains("<p>Best: batch-size=2000,workers=1 (rows_per_sec 3,000)"), "{page}");
    }
}
