//! `dbload compare A B [C …]`: reports side by side, each against the
//! first, with a verdict per headline figure that needs evidence. A report
//! made with `--runs` carries each run's figures; with runs on both sides
//! the verdict comes from a 95 % bootstrap interval of the ratio of the
//! medians (`stats::repeat::ratio_ci95`): better or worse only when it
//! excludes 1, else within noise. A single run says nothing of its noise,
//! and the verdict says so rather than guess.
//!
//! Its input is a report already loaded as JSON ([`Loaded`]), whatever it
//! was read from: a file now, a results store later.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value as Json;

use crate::error::{exit, usage};
use crate::report::repeat::{columns, figure, figures_of, Better, HEADLINES};
use crate::stats::repeat::{median, ratio, ratio_ci95, RESAMPLES, SEED};

/// A report to compare: its name (as the table heads it) and its JSON.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub name: String,
    pub json: Json,
}

impl Loaded {
    /// Reads a JSON report (`--output json`, `--report FILE`); a file that
    /// cannot be read or is not a dbload report is a usage error naming it.
    pub fn from_file(path: &Path) -> Result<Loaded> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| usage(format!("compare {name}: cannot read it ({e}); give a JSON report file")))?;
        let json: Json = serde_json::from_str(&text).map_err(|e| {
            usage(format!("compare {name}: not JSON ({e}); give a report written by --output json or --report FILE"))
        })?;
        Loaded::new(name, json)
    }

    /// A report as JSON, checked to be one of dbload's.
    pub fn new(name: String, json: Json) -> Result<Loaded> {
        if json.get("schema_version").and_then(Json::as_u64).is_none() || !json["command"].is_string() {
            return Err(usage(format!(
                "compare {name}: not a dbload report (no schema_version and command); give a report written by \
                 --output json or --report FILE"
            )));
        }
        Ok(Loaded { name, json })
    }

    fn command(&self) -> &str {
        self.json["command"].as_str().unwrap_or("?")
    }

    /// The values of a figure: one per counted run of a `--runs` report
    /// (interrupted runs left out, as the report's own statistics do), else
    /// the report's one value; `None` when the report lacks the figure.
    fn samples(&self, name: &str) -> Option<Vec<f64>> {
        let Some(runs) = self.json.pointer("/repeat/runs").and_then(Json::as_array) else {
            return figures_of(&self.json).into_iter().find(|f| f.name == name).map(|f| vec![f.value]);
        };
        let finished: Vec<&Json> = runs.iter().filter(|r| r["status"] != "interrupted").collect();
        let counted = if finished.is_empty() { runs.iter().collect() } else { finished };
        let values: Vec<f64> = counted.iter().filter_map(|r| r["figures"][name].as_f64()).collect();
        (!values.is_empty()).then_some(values)
    }
}

/// `--fail-if-worse FIGURE:PERCENT`, e.g. `rows_per_sec:5%`: exit 1 when a
/// report is worse than the first on FIGURE by more than PERCENT, beyond
/// noise. FIGURE is a headline figure's name, as a `dbload run` report
/// names it for its part (`ingest.rows_per_sec`, `workloads.NAME.p99_ms`).
#[derive(Debug, Clone)]
pub struct WorseLimit {
    pub figure: String,
    pub percent: f64,
}

impl WorseLimit {
    pub fn parse(s: &str) -> Result<WorseLimit> {
        let names = || HEADLINES.iter().map(|h| h.name).collect::<Vec<_>>().join(", ");
        let bad = |why: String| {
            usage(format!(
                "--fail-if-worse `{s}`: {why}; write FIGURE:PERCENT, e.g. rows_per_sec:5%, with FIGURE one of {}",
                names()
            ))
        };
        let Some((name, percent)) = s.split_once(':') else {
            return Err(bad("no `:` between the figure and the percentage".into()));
        };
        let figure = name.trim();
        let last = figure.rsplit('.').next().unwrap_or(figure);
        if !HEADLINES.iter().any(|h| h.name == last) {
            return Err(bad(format!("`{figure}` is not a headline figure")));
        }
        let figure = figure.to_string();
        let number = percent.trim().trim_end_matches('%').trim();
        let percent = number
            .parse::<f64>()
            .ok()
            .filter(|p| p.is_finite() && *p >= 0.0)
            .ok_or_else(|| bad(format!("`{}` is not a percentage (0 or more)", percent.trim())))?;
        Ok(WorseLimit { figure, percent })
    }
}

/// What one figure of one report says against the first report's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    Worse,
    WithinNoise,
    /// One side is a single run: no noise estimate, no verdict.
    SingleRuns,
}

impl Verdict {
    fn text(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::WithinNoise => "within noise",
            Verdict::SingleRuns => "single runs: no noise estimate",
        }
    }
}

/// A figure of one report: its median over its runs and, but for the
/// first report, how it stands against the first.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub median: f64,
    pub runs: usize,
    /// Median over the first report's median (None for the first).
    pub ratio: Option<f64>,
    /// The 95 % bootstrap interval of that ratio, with runs on both sides.
    pub ratio_ci95: Option<(f64, f64)>,
    pub verdict: Option<Verdict>,
}

/// One headline figure across the reports (None where a report lacks it).
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub figure: String,
    pub label: String,
    #[serde(skip)]
    pub better: Better,
    pub cells: Vec<Option<Cell>>,
}

/// The comparison: the reports and one row per figure the first has.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub reports: Vec<String>,
    pub rows: Vec<Row>,
}

/// Compares each report after the first with the first.
pub fn compare(reports: &[Loaded]) -> Result<Comparison> {
    let [base, others @ ..] = reports else {
        return Err(usage("compare needs two reports or more"));
    };
    if others.is_empty() {
        return Err(usage("compare needs two reports or more: give the report to compare with the first"));
    }
    let rows: Vec<Row> = figures_of(&base.json)
        .into_iter()
        .filter_map(|f| {
            let a = base.samples(&f.name)?;
            let cells = reports
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let b = r.samples(&f.name)?;
                    Some(if i == 0 { cell(&a, None, f.better) } else { cell(&b, Some(&a), f.better) })
                })
                .collect();
            Some(Row { figure: f.name, label: f.label, better: f.better, cells })
        })
        .collect();
    for (i, r) in others.iter().enumerate() {
        if rows.iter().all(|row| row.cells[i + 1].is_none()) {
            return Err(usage(format!(
                "compare {}: it shares no headline figure with {} ({} report against {} report)",
                r.name,
                base.name,
                r.command(),
                base.command()
            )));
        }
    }
    Ok(Comparison { reports: reports.iter().map(|r| r.name.clone()).collect(), rows })
}

/// `b`'s cell, against `a` when given.
fn cell(b: &[f64], a: Option<&[f64]>, better: Better) -> Cell {
    let mb = median(b).expect("samples are never empty");
    let Some(a) = a else {
        return Cell { median: mb, runs: b.len(), ratio: None, ratio_ci95: None, verdict: None };
    };
    let ratio_ = ratio(median(a).expect("samples are never empty"), mb);
    let ci = ratio_ci95(a, b);
    let verdict = match ci {
        None => Verdict::SingleRuns,
        Some((lo, hi)) if lo > 1.0 || hi < 1.0 => {
            let higher = lo > 1.0;
            if higher == (better == Better::Higher) {
                Verdict::Better
            } else {
                Verdict::Worse
            }
        }
        Some(_) => Verdict::WithinNoise,
    };
    Cell { median: mb, runs: b.len(), ratio: Some(ratio_), ratio_ci95: ci, verdict: Some(verdict) }
}

impl Comparison {
    /// The reports worse than the first beyond noise and by more than a
    /// limit allows, as sentences; a limit on a figure the first report
    /// lacks is a usage error naming it.
    pub fn breaches(&self, limits: &[WorseLimit]) -> Result<Vec<String>> {
        let mut found = Vec::new();
        for limit in limits {
            let Some(row) = self.rows.iter().find(|r| r.figure == limit.figure) else {
                return Err(usage(format!(
                    "--fail-if-worse {}: {} has no {} figure",
                    limit.figure, self.reports[0], limit.figure
                )));
            };
            for (name, cell) in self.reports.iter().zip(&row.cells).skip(1) {
                let Some(c) = cell else {
                    return Err(usage(format!(
                        "--fail-if-worse {}: {name} has no {} figure",
                        limit.figure, limit.figure
                    )));
                };
                let ratio = c.ratio.unwrap_or(1.0);
                let by = match row.better {
                    Better::Higher => (1.0 - ratio) * 100.0,
                    Better::Lower => (ratio - 1.0) * 100.0,
                };
                if c.verdict == Some(Verdict::Worse) && by > limit.percent {
                    found.push(format!(
                        "{name}: {} worse by {by:.1}% (more than {}%), beyond noise",
                        limit.figure, limit.percent
                    ));
                }
            }
        }
        Ok(found)
    }

    /// The text form: the reports named by letter, then a row per figure
    /// with each report's median, and for each after the first its ratio to
    /// the first and the verdict.
    pub fn render(&self, reports: &[Loaded]) -> String {
        let mut out = String::new();
        let letter = |i: usize| char::from(b'A' + (i % 26) as u8).to_string();
        for (i, r) in reports.iter().enumerate() {
            let runs = r.json.pointer("/repeat/runs").and_then(Json::as_array).map_or(1, Vec::len);
            let runs = if runs == 1 { "1 run".to_string() } else { format!("{runs} runs") };
            let _ = writeln!(out, "{}: {} ({}, {runs})", letter(i), r.name, r.command());
        }
        let _ = writeln!(
            out,
            "Medians over each report's runs; ratio to A; a verdict needs runs on both sides: better or worse when \
             the 95% bootstrap interval of the ratio of medians ({RESAMPLES} resamples, seed {SEED}) excludes 1.\n"
        );
        let mut head = vec!["figure".to_string()];
        for i in 0..reports.len() {
            head.push(letter(i));
            if i > 0 {
                head.push(format!("{}/A", letter(i)));
                head.push(format!("verdict {}", letter(i)));
            }
        }
        let mut table = vec![head];
        for row in &self.rows {
            let mut line = vec![row.label.clone()];
            for (i, c) in row.cells.iter().enumerate() {
                line.push(c.as_ref().map_or("-".into(), |c| figure(c.median)));
                if i > 0 {
                    line.push(c.as_ref().and_then(|c| c.ratio).map_or("-".into(), |r| format!("{r:.3}")));
                    line.push(c.as_ref().map_or("-".into(), verdict_text));
                }
            }
            table.push(line);
        }
        out += &columns(&table, "", |c| c > 0 && !table[0][c].starts_with("verdict"));
        out
    }
}

fn verdict_text(c: &Cell) -> String {
    match (c.verdict, c.ratio_ci95) {
        (Some(v @ (Verdict::Better | Verdict::Worse | Verdict::WithinNoise)), Some((lo, hi))) => {
            format!("{} [{lo:.3}, {hi:.3}]", v.text())
        }
        (Some(v), _) => v.text().to_string(),
        (None, _) => String::new(),
    }
}

/// `dbload compare`: loads the reports, prints the comparison, writes the
/// HTML page if asked; exit 1 when a `--fail-if-worse` limit is breached.
pub fn run(
    reports: Vec<Loaded>,
    limits: &[WorseLimit],
    html: Option<&Path>,
    out: &mut dyn std::io::Write,
) -> Result<u8> {
    let comparison = compare(&reports)?;
    let breaches = comparison.breaches(limits)?;
    let table = comparison.render(&reports);
    let mut text = table.clone();
    for b in &breaches {
        let _ = writeln!(text, "--fail-if-worse: {b}");
    }
    out.write_all(text.as_bytes()).context("writing the comparison")?;
    if let Some(path) = html {
        let named: Vec<(&String, &Json)> = reports.iter().map(|r| (&r.name, &r.json)).collect();
        crate::report::compare_html::write_file(&named, &table, path)?;
    }
    Ok(if breaches.is_empty() { exit::OK } else { exit::FAILED_OPERATIONS })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(name: &str, rows_per_sec: &[f64]) -> Loaded {
        let mut json = json!({"schema_version": 2, "command": "ingest", "rows_per_sec": rows_per_sec[0],
                              "errors": 0, "latency_ms": {"p50": 1.0, "p99": 2.0}});
        if rows_per_sec.len() > 1 {
            let runs: Vec<Json> = rows_per_sec
                .iter()
                .map(|r| json!({"status": "ok", "figures": {"rows_per_sec": r, "errors": 0, "p50_ms": 1.0, "p99_ms": 2.0}}))
                .collect();
            json["repeat"] = json!({ "runs": runs });
        }
        Loaded::new(name.into(), json).unwrap()
    }

    fn verdict(c: &Comparison, figure: &str, i: usize) -> Option<Verdict> {
        c.rows.iter().find(|r| r.figure == figure).unwrap().cells[i].as_ref().unwrap().verdict
    }

    #[test]
    fn a_report_against_itself_is_within_noise() {
        let a = report("a", &[100.0, 110.0, 90.0]);
        let c = compare(&[a.clone(), a]).unwrap();
        for row in &c.rows {
            assert_eq!(row.cells[1].as_ref().unwrap().verdict, Some(Verdict::WithinNoise), "{}", row.figure);
        }
    }

    #[test]
    fn half_the_throughput_is_worse_and_breaches_a_limit() {
        let c = compare(&[report("a", &[100.0, 110.0, 90.0]), report("b", &[50.0, 55.0, 45.0])]).unwrap();
        assert_eq!(verdict(&c, "rows_per_sec", 1), Some(Verdict::Worse));
        let limit = WorseLimit::parse("rows_per_sec:5%").unwrap();
        assert_eq!(c.breaches(&[limit]).unwrap().len(), 1);
        let lenient = WorseLimit::parse("rows_per_sec:60").unwrap();
        assert!(c.breaches(&[lenient]).unwrap().is_empty());
        let c = compare(&[report("b", &[50.0, 55.0, 45.0]), report("a", &[100.0, 110.0, 90.0])]).unwrap();
        assert_eq!(verdict(&c, "rows_per_sec", 1), Some(Verdict::Better));
    }

    #[test]
    fn single_runs_get_no_verdict_and_breach_nothing() {
        let c = compare(&[report("a", &[100.0]), report("b", &[50.0])]).unwrap();
        assert_eq!(verdict(&c, "rows_per_sec", 1), Some(Verdict::SingleRuns));
        assert!(c.render(&[report("a", &[100.0]), report("b", &[50.0])]).contains("single runs: no noise estimate"));
        assert!(c.breaches(&[WorseLimit::parse("rows_per_sec:5%").unwrap()]).unwrap().is_empty());
    }

    #[test]
    fn bad_limits_and_reports_are_usage_errors() {
        assert_eq!(WorseLimit::parse("workloads.dash.p99_ms:10%").unwrap().figure, "workloads.dash.p99_ms");
        for bad in ["rows_per_sec", "rows/s:5%", "rows_per_sec:x%", "rows_per_sec:-1%", "workloads.dash.p99:1%"] {
            let e = WorseLimit::parse(bad).unwrap_err();
            assert!(e.to_string().contains("--fail-if-worse"), "{e}");
        }
        let e = Loaded::new("x.json".into(), json!({"a": 1})).unwrap_err();
        assert!(e.to_string().contains("x.json") && e.to_string().contains("not a dbload report"), "{e}");
        let c = compare(&[report("a", &[1.0]), report("b", &[1.0])]).unwrap();
        let e = c.breaches(&[WorseLimit::parse("qps:5%").unwrap()]).unwrap_err();
        assert!(e.to_string().contains("has no qps"), "{e}");
        assert!(compare(&[report("a", &[1.0])]).is_err());
    }
}
