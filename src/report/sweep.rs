//! `dbload sweep`'s report: every point of the grid (or every step of a
//! saturation search) with its runs and figures, the best point and its
//! margin over the runner-up; as text, as JSON (`schema/sweep.schema.json`)
//! and as an HTML page of charts. Plain data that `sweep/` fills in: this
//! file runs nothing.

use std::fmt::Write as _;

use serde::Serialize;

use super::repeat::{columns, figure};

/// The version of the sweep report's shape.
pub const SCHEMA_VERSION: u32 = 1;

/// A sweep, as it ended.
#[derive(Debug, Clone, Serialize)]
pub struct SweepReport {
    pub schema_version: u32,
    /// Always `sweep`.
    pub command: &'static str,
    /// `ok` (a best point or a sustainable rate was found), `no_point`
    /// (none met --where or --slo), `interrupted`, or `failed` (a point
    /// could not run: `stopped` says why).
    pub status: &'static str,
    pub exit_code: u8,
    /// The sweep's run_id: its tag on every point's run, and its name in
    /// the results store.
    pub sweep_id: String,
    /// `grid` or `find_max_rate`.
    pub mode: &'static str,
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
    pub order_method: &'static str,
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
#[derive(Debug, Clone, Serialize)]
pub struct Varied {
    pub flag: String,
    pub values: Vec<String>,
}

/// `--objective`: which figure the best point has the most (`max`) or the
/// least (`min`) of.
#[derive(Debug, Clone, Serialize)]
pub struct Objective {
    pub direction: &'static str,
    pub figure: String,
}

/// One point of the sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub index: usize,
    /// `batch-size=500,workers=2`: its tag in the store.
    pub label: String,
    /// Its value of each varied flag, in the order of `varied`.
    pub values: Vec<String>,
    /// `ok`, `failed` (a run had failed operations or could not run),
    /// `interrupted`, or `not_run` (the sweep stopped first).
    pub status: &'static str,
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
#[derive(Debug, Clone, Serialize)]
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
#[derive(Debug, Clone, Serialize)]
pub struct Margin {
    pub runner_up: usize,
    /// The best point's median over the runner-up's.
    pub ratio: f64,
    /// With enough runs on both sides: the 95 % bootstrap interval of that
    /// ratio and the exact Mann–Whitney p-value, as `compare` gives them.
    pub ratio_ci95: Option<Interval>,
    pub p_value: Option<f64>,
    /// As `compare` words it: `better`, `within_noise`, `single_runs`,
    /// `too_few_runs`.
    pub verdict: String,
    /// The verdict in words.
    pub verdict_text: String,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// `--find-max-rate`: the search and its answer.
#[derive(Debug, Clone, Serialize)]
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
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// Its point's index.
    pub point: usize,
    pub target_rate: f64,
    pub achieved_rate: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub held: bool,
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

/// The text form: what was swept, a table of every point (the varied
/// flags, the headline figures, whether it may be best), then the best
/// point and its margin, or the rate found.
pub fn render(r: &SweepReport) -> String {
    let mut out = String::new();
    let flags: Vec<&str> = r.varied.iter().map(|v| v.flag.as_str()).collect();
    let runs = if r.runs == 1 { "1 run each".to_string() } else { format!("{} runs each", r.runs) };
    let order = match r.order_method {
        "shuffled_rounds" => format!("{runs}, in an order shuffled per round, seed {}", r.seed),
        _ => format!("{runs}, one step after another"),
    };
    let _ = writeln!(out, "Sweep {}: {} over {} ({order})", r.sweep_id, r.swept, flags.join(" × "));
    let _ = writeln!(out, "Command: {}", r.base_command);
    let mut wanted = format!("Objective: {} {}", r.objective.direction, r.objective.figure);
    if !r.where_.is_empty() {
        let _ = write!(wanted, "; where {}", r.where_.join(" and "));
    }
    if let Some(s) = &r.search {
        wanted = format!("Find the highest rate that keeps {}", if s.slo.is_empty() { "up".into() } else { s.slo.join(" and ") });
    }
    let _ = writeln!(out, "{wanted}\n");
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
    let mut rows = vec![head];
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
        rows.push(row);
    }
    // The figures right-aligned: after the mark and the flags' values, before `eligible`.
    let (last_value, eligible) = (flags.len(), rows[0].len() - 1);
    out += &columns(&rows, "", |c| c > last_value && c < eligible);
    out.push('\n');
    if let Some(s) = &r.search {
        match s.max_sustainable_rate {
            Some(rate) => {
                let _ = writeln!(out, "Highest sustainable rate: {}/s", figure(rate));
            }
            None => {
                let _ = writeln!(out, "No rate held: the first step ({}/s) already broke", figure(s.start_rate));
            }
        }
    } else if let Some(best) = r.best.map(|i| &r.points[i]) {
        let value = best.objective.map_or("-".into(), figure);
        let _ = write!(out, "Best: {} ({} {value})", best.label, r.objective.figure);
        match &r.margin {
            Some(m) => {
                let _ = writeln!(
                    out,
                    ", {:.3}× the runner-up {} ({})",
                    m.ratio, r.points[m.runner_up].label, m.verdict_text
                );
            }
            None => out.push_str(", the only eligible point\n"),
        }
    } else if r.status != "interrupted" {
        let _ = writeln!(out, "No point meets every --where: no best point");
    }
    if let Some(why) = &r.stopped {
        let _ = writeln!(out, "Stopped: {why}");
    }
    out
}
