//! `dbload compare A B [C …]`: reports side by side, each against the
//! first, with a verdict per headline figure that needs evidence. A report
//! made with `--runs` carries each run's figures. With `MIN_RUNS` (4) runs
//! or more on both sides, a figure is better or worse only when two tests
//! agree (`stats::repeat::difference`): the 95 % bootstrap interval of the
//! ratio of the medians excludes 1 (it says by how much), and the exact
//! Mann–Whitney test gives p < 0.05 (it keeps two identical setups from a
//! false verdict on more than 1 figure in 20, which the bootstrap alone
//! cannot with few runs: 3 a side, about 1 in 10). With fewer runs the
//! verdict says so rather than guess.
//!
//! Its input is a report already loaded as JSON ([`Loaded`]), whatever it
//! was read from: a file, or a run of the results store (whose kept
//! histograms give the HTML page its percentiles to 99.99 %).

use std::cmp::Ordering;
use std::path::Path;

use anyhow::{Context, Result};
use chrono::{DateTime, FixedOffset};
use serde::Serialize;
use serde_json::{json, Value as Json};

use crate::error::{exit, usage};
use crate::file_cap::{self, Cap};
use crate::report::compare_html::Ratios;
use crate::report::repeat::{figure, figures_of, Better, HEADLINES};
use crate::report::table::Table;
use crate::results::{hlog, Kept};
use crate::stats::repeat::{difference, median, ratio, Difference, ALPHA, MIN_RUNS, RESAMPLES, SEED};
use crate::stats::summary;

/// The version of `compare --output json`'s shape (`schema/compare.schema.json`).
const JSON_VERSION: u32 = 1;

/// A report to compare: its name (as the table heads it) and its JSON.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub name: String,
    pub json: Json,
    /// Its latency by percentile, (nines, ms), to 99.99 %, when the results
    /// store kept its histograms; the HTML page draws it rather than the
    /// report's few percentiles.
    pub spectrum: Option<Vec<(f64, f64)>>,
}

impl Loaded {
    /// Reads a JSON report (`--output json`, `--report FILE`); a file that
    /// cannot be read or is not a dbload report is a usage error naming it.
    pub fn from_file(path: &Path) -> Result<Loaded> {
        let name = path.display().to_string();
        let text = file_cap::read_text(path, &format!("compare {name}"), Cap::report("the report"))?;
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
        Ok(Loaded { name, json, spectrum: None })
    }

    /// A run of the results store, named by its run_id, with the
    /// percentile curve of its kept latency histogram (the whole
    /// operation's, or a mixed run's first part's), when it has one.
    pub fn from_kept(kept: Kept) -> Result<Loaded> {
        let histograms = hlog::read(&kept.log).with_context(|| format!("the kept histograms of {}", kept.run_id))?;
        let latency = histograms.iter().find(|(tag, _)| tag.as_deref().is_some_and(|t| t.ends_with("latency")));
        // The report's spectrum to 99.99 % (the max, at no finite nine, left out).
        let spectrum = latency
            .and_then(|(_, h)| summary::spectrum(h))
            .map(|points| points.iter().filter(|p| p.nines().is_finite()).map(|p| (p.nines(), p.ms)).collect());
        Ok(Loaded { spectrum, ..Loaded::new(kept.run_id, kept.report)? })
    }

    /// Its `run.tags` (`--tag KEY=VALUE`), where it has any.
    fn tags(&self) -> Option<&serde_json::Map<String, Json>> {
        self.json.pointer("/run/tags").and_then(Json::as_object)
    }

    fn command(&self) -> &str {
        self.json["command"].as_str().unwrap_or("?")
    }

    /// When its runs took place: `run.started_at` to `run.ended_at`
    /// (RFC 3339), if the report says.
    fn window(&self) -> Option<(DateTime<FixedOffset>, DateTime<FixedOffset>)> {
        let at = |key: &str| self.json["run"][key].as_str().and_then(|t| DateTime::parse_from_rfc3339(t).ok());
        Some((at("started_at")?, at("ended_at")?))
    }

    /// How many runs the report was made of (1 without `--runs`).
    fn runs(&self) -> usize {
        self.json.pointer("/repeat/runs").and_then(Json::as_array).map_or(1, Vec::len)
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

/// How one figure of one report changed against the first report's: the
/// verdict its column shows (and the JSON's `verdict`). Not a run's
/// verdict (`report::Verdict`: how a run ended), hence its own name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Better,
    Worse,
    WithinNoise,
    /// One side is a single run: no noise estimate, no verdict.
    SingleRuns,
    /// A side has fewer than `MIN_RUNS` runs: too few to tell noise from a difference.
    TooFewRuns,
}

impl Change {
    /// The verdict in words, as the tables show it.
    pub fn text(self) -> String {
        match self {
            Change::Better => "better".into(),
            Change::Worse => "worse".into(),
            Change::WithinNoise => "within noise".into(),
            Change::SingleRuns => "single runs: no noise estimate".into(),
            Change::TooFewRuns => format!("too few runs for a noise estimate ({MIN_RUNS} per side needed)"),
        }
    }
}

/// A figure of one report: its median over its runs and, but for the
/// first report, how it stands against the first. As the JSON's `cells`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Cell {
    pub median: f64,
    pub runs: usize,
    /// Median over the first report's median (None for the first).
    pub ratio: Option<f64>,
    /// The 95 % bootstrap interval of that ratio, with enough runs on both
    /// sides; written as `{low, high}`.
    #[serde(serialize_with = "low_high")]
    #[cfg_attr(test, schemars(with = "Option<Interval>"))]
    pub ratio_ci95: Option<(f64, f64)>,
    /// The exact Mann–Whitney p-value of the runs, with enough runs on both sides.
    pub p_value: Option<f64>,
    pub verdict: Option<Change>,
}

/// One headline figure across the reports (None where a report lacks it).
/// As the JSON's `figures`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Row {
    pub figure: String,
    pub label: String,
    pub better: Better,
    pub cells: Vec<Option<Cell>>,
}

/// The comparison: the reports and one row per figure the first has.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub reports: Vec<String>,
    pub rows: Vec<Row>,
    /// What the reader must know to weigh the verdicts: reports that ran one
    /// after the other, not interleaved.
    pub notes: Vec<String>,
}

/// What a command's report measures: reports of two kinds are not compared,
/// as a figure of one name would mean two things (`p99_ms` of a batch of
/// rows and of a query).
fn kind(command: &str) -> &str {
    match command {
        "ingest" | "insert-fake-data" | "insert-json" => "rows written",
        "timeit" | "workload" => "queries",
        "http" => "HTTP requests",
        "export" | "insert-from-sql" => "rows moved",
        other => other,
    }
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
    for r in others {
        if kind(r.command()) != kind(base.command()) {
            return Err(usage(format!(
                "compare {}: its command is {} ({}) and {}'s is {} ({}): compare reports of one kind",
                r.name,
                r.command(),
                kind(r.command()),
                base.name,
                base.command(),
                kind(base.command())
            )));
        }
    }
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
    let notes = not_interleaved(reports).into_iter().collect();
    Ok(Comparison { reports: reports.iter().map(|r| r.name.clone()).collect(), rows, notes })
}

/// A note when the reports' runs took place one side after the other
/// rather than interleaved: whatever drifted on the machine between them
/// (other load, caches, the server's own state) reads as a difference,
/// and even two identical setups run back to back can be told apart
/// "beyond noise". None when their time windows overlap or are unknown.
fn not_interleaved(reports: &[Loaded]) -> Option<String> {
    let windows: Vec<_> = reports.iter().map(Loaded::window).collect::<Option<_>>()?;
    let apart = windows.iter().enumerate().any(|(i, a)| windows[i + 1..].iter().any(|b| a.1 <= b.0 || b.1 <= a.0));
    if !apart {
        return None;
    }
    let letter = |i: usize| char::from(b'A' + (i % 26) as u8);
    let spans: Vec<String> = windows
        .iter()
        .enumerate()
        .map(|(i, (from, to))| {
            format!("{} {} to {}", letter(i), from.format("%Y-%m-%d %H:%M:%S"), to.format("%H:%M:%S"))
        })
        .collect();
    Some(format!(
        "Note: the reports ran one after the other, not interleaved ({}): a drift of the machine between them reads \
         as a difference, and the verdicts cannot tell it from one. For a verdict on two setups, interleave their \
         runs: `dbload sweep --vary NAME=A,B --runs N -- COMMAND ...` runs the points' rounds in shuffled order.",
        spans.join("; ")
    ))
}

/// `b`'s cell, against `a` when given (also how `dbload sweep` weighs
/// its best point against the runner-up).
pub fn cell(b: &[f64], a: Option<&[f64]>, better: Better) -> Cell {
    let mb = median(b).expect("samples are never empty");
    let Some(a) = a else {
        return Cell { median: mb, runs: b.len(), ratio: None, ratio_ci95: None, p_value: None, verdict: None };
    };
    let ratio_ = ratio(median(a).expect("samples are never empty"), mb);
    let (verdict, ci, p) = match difference(a, b) {
        Difference::TooFewRuns { single: true } => (Change::SingleRuns, None, None),
        Difference::TooFewRuns { single: false } => (Change::TooFewRuns, None, None),
        Difference::Judged { ci95, p, shift } => {
            let verdict = match shift {
                None => Change::WithinNoise,
                Some(s) if (s == Ordering::Greater) == (better == Better::Higher) => Change::Better,
                Some(_) => Change::Worse,
            };
            (verdict, Some(ci95), Some(p))
        }
    };
    Cell { median: mb, runs: b.len(), ratio: Some(ratio_), ratio_ci95: ci, p_value: p, verdict: Some(verdict) }
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
                if c.verdict == Some(Change::Worse) && by > limit.percent {
                    found.push(format!(
                        "{name}: {} worse by {by:.1}% (more than {}%), beyond noise",
                        limit.figure, limit.percent
                    ));
                }
            }
        }
        Ok(found)
    }

    /// The table: above it the reports named by letter and the method,
    /// then a row per figure with each report's median, and for each after
    /// the first its ratio to the first and the verdict.
    pub fn table(&self, reports: &[Loaded]) -> Table {
        let letter = |i: usize| char::from(b'A' + (i % 26) as u8).to_string();
        let mut head = vec!["figure".to_string()];
        for i in 0..reports.len() {
            head.push(letter(i));
            if i > 0 {
                head.push(format!("{}/A", letter(i)));
                head.push(format!("verdict {}", letter(i)));
            }
        }
        let verdicts: Vec<bool> = head.iter().map(|h| h.starts_with("verdict")).collect();
        let mut table = Table::new(head, |c| c > 0 && !verdicts[c]);
        for (i, r) in reports.iter().enumerate() {
            let runs = r.runs();
            let runs = if runs == 1 { "1 run".to_string() } else { format!("{runs} runs") };
            table.above.push(format!("{}: {} ({}, {runs})", letter(i), r.name, r.command()));
        }
        let differing = setup_difference(reports);
        if !differing.is_empty() {
            table.above.push("Setup that differs:".into());
        }
        for d in &differing {
            let values: Vec<String> =
                d.values.iter().enumerate().map(|(i, v)| format!("{} {}", letter(i), scalar(v))).collect();
            table.above.push(format!("  {}: {}", d.setting, values.join(" · ")));
        }
        if reports.iter().any(|r| r.tags().is_some_and(|t| !t.is_empty())) {
            let tags: Vec<String> = reports
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let tags = r.tags().into_iter().flatten().map(|(k, v)| format!("{k}={}", scalar(v)));
                    let tags: Vec<String> = tags.collect();
                    format!("{} {}", letter(i), if tags.is_empty() { "-".into() } else { tags.join(",") })
                })
                .collect();
            table.above.push(format!("Tags: {}", tags.join(" · ")));
        }
        table.above.push(format!(
            "Medians over each report's runs; ratio to A; a verdict needs {MIN_RUNS} runs or more on both sides: \
             better or worse when the 95% bootstrap interval of the ratio of medians ({RESAMPLES} resamples, seed \
             {SEED}) excludes 1 and the exact Mann-Whitney test gives p < 0.05."
        ));
        for row in &self.rows {
            let mut line = vec![row.label.clone()];
            for (i, c) in row.cells.iter().enumerate() {
                line.push(c.as_ref().map_or("-".into(), |c| figure(c.median)));
                if i > 0 {
                    line.push(c.as_ref().and_then(|c| c.ratio).map_or("-".into(), |r| format!("{r:.3}")));
                    line.push(c.as_ref().map_or("-".into(), verdict_text));
                }
            }
            table.rows.push(line);
        }
        table
    }
}

impl Comparison {
    /// The `--output json` form (`schema/compare.schema.json`): the method,
    /// the reports, per figure each report's cell, and the `--fail-if-worse`
    /// breaches.
    pub fn to_json(&self, reports: &[Loaded], breaches: &[String]) -> Json {
        let differing = setup_difference(reports);
        let reports = reports
            .iter()
            .map(|r| ReportEntry {
                name: &r.name,
                command: r.command(),
                runs: r.runs(),
                run_id: r.json.pointer("/run/run_id"),
                tags: r.tags(),
            })
            .collect();
        let document = CompareReport {
            schema_version: JSON_VERSION,
            command: "compare",
            method: METHOD,
            reports,
            setup_difference: differing,
            figures: &self.rows,
            notes: &self.notes,
            fail_if_worse: breaches,
        };
        json!(document)
    }
}

/// `compare --output json`: the contract `schema/compare.schema.json`,
/// which `report::schema_check` holds to this type.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CompareReport<'a> {
    schema_version: u32,
    command: &'static str,
    method: Method,
    reports: Vec<ReportEntry<'a>>,
    /// The settings of the reports' `setup` that differ between them.
    setup_difference: Vec<SettingDifference>,
    figures: &'a [Row],
    notes: &'a [String],
    /// The `--fail-if-worse` limits breached.
    fail_if_worse: &'a [String],
}

/// How a verdict is reached (`stats::repeat`), as the JSON states it.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
struct Method {
    min_runs: usize,
    confidence: f64,
    bootstrap_resamples: usize,
    bootstrap_seed: u64,
    rank_test: &'static str,
    alpha: f64,
}

const METHOD: Method = Method {
    min_runs: MIN_RUNS,
    confidence: 1.0 - ALPHA,
    bootstrap_resamples: RESAMPLES,
    bootstrap_seed: SEED,
    rank_test: "mann_whitney_exact",
    alpha: ALPHA,
};

/// A report compared, as the JSON names it.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
struct ReportEntry<'a> {
    name: &'a str,
    command: &'a str,
    runs: usize,
    /// Its `run.run_id` as the report has it; null without one.
    #[cfg_attr(test, schemars(with = "Option<String>"))]
    run_id: Option<&'a Json>,
    /// Its `run.tags`; null without any.
    #[cfg_attr(test, schemars(with = "Option<std::collections::BTreeMap<String, String>>"))]
    tags: Option<&'a serde_json::Map<String, Json>>,
}

/// A cell's `ratio_ci95` as written.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
struct Interval {
    /// An end over a median of 0 is infinite, which JSON writes as null.
    #[cfg_attr(test, schemars(with = "Option<f64>"))]
    low: f64,
    #[cfg_attr(test, schemars(with = "Option<f64>"))]
    high: f64,
}

fn low_high<S: serde::Serializer>(ci: &Option<(f64, f64)>, s: S) -> Result<S::Ok, S::Error> {
    ci.map(|(low, high)| Interval { low, high }).serialize(s)
}

fn verdict_text(c: &Cell) -> String {
    match (c.verdict, c.ratio_ci95) {
        (Some(v @ (Change::Better | Change::Worse | Change::WithinNoise)), Some((lo, hi))) => {
            format!("{} [{lo:.3}, {hi:.3}]", v.text())
        }
        (Some(v), _) => v.text(),
        (None, _) => String::new(),
    }
}

/// A setting whose value is not the same in every report: its path in the
/// reports' `setup` (`server_settings.work_mem`) and each report's value
/// (null where a report has none). As the JSON's `setup_difference`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SettingDifference {
    pub setting: String,
    #[cfg_attr(test, schemars(with = "Vec<serde_json::Value>"))]
    pub values: Vec<Json>,
}

/// The settings of the reports' `setup` whose values differ, in the first
/// report's order, then the others': what the reader must know before
/// reading any ratio (the concurrency, the batch size, a server setting).
fn setup_difference(reports: &[Loaded]) -> Vec<SettingDifference> {
    fn flatten(prefix: &str, v: &Json, out: &mut Vec<(String, Json)>) {
        match v {
            Json::Object(map) => {
                for (k, v) in map {
                    let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    flatten(&path, v, out);
                }
            }
            scalar => out.push((prefix.to_string(), scalar.clone())),
        }
    }
    let flat: Vec<Vec<(String, Json)>> = reports
        .iter()
        .map(|r| {
            let mut out = Vec::new();
            flatten("", &r.json["setup"], &mut out);
            out
        })
        .collect();
    let mut settings: Vec<&String> = Vec::new();
    for (name, _) in flat.iter().flatten() {
        if !settings.contains(&name) {
            settings.push(name);
        }
    }
    settings
        .into_iter()
        .filter_map(|setting| {
            let values: Vec<Json> = flat
                .iter()
                .map(|f| f.iter().find(|(n, _)| n == setting).map_or(Json::Null, |(_, v)| v.clone()))
                .collect();
            let differs = values.iter().any(|v| *v != values[0]) && !DRAWN_FROM_THE_CLOCK.contains(&setting.as_str());
            differs.then(|| SettingDifference { setting: setting.clone(), values })
        })
        .collect()
}

/// Settings drawn from the clock when the run is not told them (`--start`:
/// the rows end at the run's start), so two runs of one command line
/// differ in them by the time between the runs: no setup the reader chose.
const DRAWN_FROM_THE_CLOCK: [&str; 1] = ["data_start"];

/// A JSON value as the table shows it: text without its quotes.
fn scalar(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => "-".into(),
        other => other.to_string(),
    }
}

/// `dbload compare`: writes the HTML page if asked, then prints the
/// comparison (text, or JSON with `json`); exit 1 when a `--fail-if-worse` limit is
/// breached.
pub fn run(
    reports: Vec<Loaded>,
    limits: &[WorseLimit],
    html: Option<&Path>,
    json: bool,
    out: &mut dyn std::io::Write,
) -> Result<u8> {
    let comparison = compare(&reports)?;
    let breaches = comparison.breaches(limits)?;
    let mut table = comparison.table(&reports);
    table.below = comparison.notes.clone();
    table.below.extend(breaches.iter().map(|b| format!("--fail-if-worse: {b}")));
    let printed = if json {
        serde_json::to_string_pretty(&comparison.to_json(&reports, &breaches))? + "\n"
    } else {
        table.text()
    };
    let code = if breaches.is_empty() { exit::OK } else { exit::FAILED_OPERATIONS };
    if let Some(path) = html {
        let named: Vec<_> = reports.iter().map(|r| (&r.name, &r.json, r.spectrum.as_deref())).collect();
        let ratios: Vec<Ratios> = comparison
            .rows
            .iter()
            .map(|row| Ratios {
                label: row.label.clone(),
                cells: row.cells.iter().map(|c| c.as_ref().and_then(|c| Some((c.ratio?, c.ratio_ci95)))).collect(),
            })
            .collect();
        crate::report::compare_html::write_file(&named, &table, &ratios, code, path)?;
    }
    let written = out.write_all(printed.as_bytes()).context("writing the comparison");
    crate::console::printed(out, written)?;
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt, SeedableRng};

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

    fn verdict(c: &Comparison, figure: &str, i: usize) -> Option<Change> {
        c.rows.iter().find(|r| r.figure == figure).unwrap().cells[i].as_ref().unwrap().verdict
    }

    /// The text `dbload compare` prints: a report against itself (within
    /// noise) and against one that wrote half as many rows per second
    /// (worse), five runs each; the bootstrap's seed is fixed.
    #[test]
    fn compare_text() {
        let runs = [100.0, 104.0, 98.0, 101.0, 97.0];
        let reports = vec![report("a.json", &runs), report("b.json", &runs), report("c.json", &runs.map(|r| r / 2.0))];
        let mut out = Vec::new();
        run(reports, &[], None, false, &mut out).unwrap();
        insta::assert_snapshot!(String::from_utf8(out).unwrap());
    }

    /// The JSON `dbload compare --output json` prints, on the reports of
    /// `compare_text`: the first with a run_id, the third without a p99.
    #[test]
    fn compare_json() {
        let runs = [100.0, 104.0, 98.0, 101.0, 97.0];
        let mut a = report("a.json", &runs);
        a.json["run"] = json!({"run_id": "0190a1b2-0000-7000-8000-000000000001"});
        let mut c = report("c.json", &runs.map(|r| r / 2.0));
        c.json["latency_ms"].as_object_mut().unwrap().remove("p99");
        for r in c.json["repeat"]["runs"].as_array_mut().unwrap() {
            r["figures"].as_object_mut().unwrap().remove("p99_ms");
        }
        let limit = WorseLimit { figure: "rows_per_sec".into(), percent: 10.0 };
        let mut out = Vec::new();
        run(vec![a, report("b.json", &runs), c], &[limit], None, true, &mut out).unwrap();
        insta::assert_snapshot!(String::from_utf8(out).unwrap());
    }

    /// A report of rows written against one of queries: refused, not a
    /// table of figures that share names but not meanings.
    #[test]
    fn reports_of_two_kinds_are_refused() {
        let mut timeit = report("t", &[100.0]).json;
        timeit["command"] = json!("timeit");
        let err = compare(&[report("i", &[100.0]), Loaded::new("t".into(), timeit).unwrap()]).unwrap_err();
        assert_eq!(crate::error::exit_code(&err), exit::USAGE);
        assert!(
            format!("{err}").contains("t: its command is timeit (queries) and i's is ingest (rows written)"),
            "{err}"
        );
        let mut fake = report("f", &[100.0]).json;
        fake["command"] = json!("insert-fake-data");
        assert!(compare(&[report("i", &[100.0]), Loaded::new("f".into(), fake).unwrap()]).is_ok(), "rows and rows");
    }

    /// Two reports whose runs did not overlap in time get a note saying so,
    /// with each one's window; runs that overlap (interleaved) get none.
    #[test]
    fn reports_run_one_after_the_other_are_said_not_interleaved() {
        let at = |r: Loaded, from: &str, to: &str| {
            let mut json = r.json;
            json["run"] = json!({"started_at": from, "ended_at": to});
            Loaded::new(r.name, json).unwrap()
        };
        let a = at(report("a", &[100.0]), "2026-11-27T10:00:00Z", "2026-11-27T10:00:40Z");
        let b = at(report("b", &[100.0]), "2026-11-27T10:01:00Z", "2026-11-27T10:01:40Z");
        let notes = compare(&[a.clone(), b]).unwrap().notes;
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("not interleaved"), "{}", notes[0]);
        assert!(
            notes[0].contains("A 2026-11-27 10:00:00 to 10:00:40; B 2026-11-27 10:01:00 to 10:01:40"),
            "{}",
            notes[0]
        );
        assert!(notes[0].contains("dbload sweep"), "{}", notes[0]);
        let overlapping = at(report("c", &[100.0]), "2026-11-27T10:00:20Z", "2026-11-27T10:01:00Z");
        assert!(compare(&[a, overlapping]).unwrap().notes.is_empty());
    }

    #[test]
    fn a_report_against_itself_is_within_noise() {
        let a = report("a", &[100.0, 110.0, 90.0, 105.0, 95.0]);
        let c = compare(&[a.clone(), a]).unwrap();
        for row in &c.rows {
            assert_eq!(row.cells[1].as_ref().unwrap().verdict, Some(Change::WithinNoise), "{}", row.figure);
        }
    }

    #[test]
    fn half_the_throughput_is_worse_and_breaches_a_limit() {
        let c =
            compare(&[report("a", &[100.0, 110.0, 90.0, 105.0, 95.0]), report("b", &[50.0, 55.0, 45.0, 52.0, 48.0])])
                .unwrap();
        assert_eq!(verdict(&c, "rows_per_sec", 1), Some(Change::Worse));
        let limit = WorseLimit::parse("rows_per_sec:5%").unwrap();
        assert_eq!(c.breaches(&[limit]).unwrap().len(), 1);
        let lenient = WorseLimit::parse("rows_per_sec:60").unwrap();
        assert!(c.breaches(&[lenient]).unwrap().is_empty());
        let c =
            compare(&[report("b", &[50.0, 55.0, 45.0, 52.0, 48.0]), report("a", &[100.0, 110.0, 90.0, 105.0, 95.0])])
                .unwrap();
        assert_eq!(verdict(&c, "rows_per_sec", 1), Some(Change::Better));
    }

    #[test]
    fn the_page_shows_the_comparison_as_a_table_of_cells() {
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("compare.html");
        let (a, b) =
            (report("a.json", &[100.0, 110.0, 90.0, 105.0, 95.0]), report("<b>.json", &[50.0, 55.0, 45.0, 52.0, 48.0]));
        let limit = WorseLimit::parse("rows_per_sec:5%").unwrap();
        let code = run(vec![a, b], &[limit], Some(&page), false, &mut Vec::new()).unwrap();
        assert_eq!(code, exit::FAILED_OPERATIONS);
        let page = std::fs::read_to_string(page).unwrap();
        assert!(!page.contains("<pre>"), "no table as text: {page}");
        // minijinja escapes `/` too: `&#x2f;`, which a browser shows as `/`.
        assert!(page.contains("<th>figure</th>") && page.contains("<th class=\"num\">B&#x2f;A</th>"), "{page}");
        let row = page.split("<td>rows&#x2f;s</td>").nth(1).expect("a row per figure").split("</tr>").next().unwrap();
        assert!(row.contains("<td class=\"num\">100</td>") && row.contains("<td class=\"num\">0.500</td>"), "{row}");
        assert!(row.contains("<td class=\"worse\">worse [0.436, 0.578]</td>"), "{row}");
        assert!(page.contains("<p>B: &lt;b&gt;.json"), "the reports named by letter, escaped: {page}");
        assert!(page.contains("<p>--fail-if-worse: &lt;b&gt;.json: rows_per_sec worse by"), "the breach: {page}");
    }

    /// Issue 35: the page told its verdicts apart by their words only and
    /// drew no interval: a verdict's cell is coloured by what it says, and a
    /// chart draws each ratio of medians with its 95 % interval about 1.
    #[test]
    fn the_page_colours_verdicts_and_draws_each_ratio_with_its_interval() {
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("compare.html");
        let runs = [100.0, 110.0, 90.0, 105.0, 95.0];
        let (a, b, c) = (report("a.json", &runs), report("b.json", &runs), report("c.json", &runs.map(|r| r / 2.0)));
        run(vec![a, b, c], &[], Some(&page), false, &mut Vec::new()).unwrap();
        let page = std::fs::read_to_string(page).unwrap();
        assert!(page.contains("<td class=\"noise\">within noise ["), "{page}");
        assert!(page.contains("<td class=\"worse\">worse ["), "{page}");
        assert!(page.contains("td.worse {") && page.contains("td.better {"), "the verdicts' colours");
        let chart = page.split("<h3>Ratio to A").nth(1).expect("the chart of ratios").split("</svg>").next().unwrap();
        // B and C: a whisker (the interval) and a dot (the ratio) per figure with runs, and the line at 1.
        assert!(chart.matches("<circle").count() >= 6, "{chart}");
        assert!(chart.contains("rows/s") && chart.contains("p99 ms"), "figures label the rows: {chart}");
    }

    /// Issue 35: compare named the reports but not how their setups
    /// differed, nor their tags: the settings that differ are listed with
    /// each side's value (the ones alike are not), and the tags, in the
    /// The time the generated rows start at is drawn from the clock when
    /// `--start` is not given: two runs of one command line a second
    /// apart listed "data_start: A …:43 · B …:45" as a setup difference.
    #[test]
    fn the_data_s_start_drawn_from_the_clock_is_no_setup_difference() {
        let with = |name: &str, start: &str| {
            let mut r = report(name, &[100.0]);
            r.json["setup"] = json!({"batch_size": 1000, "data_start": start});
            r
        };
        let reports = vec![with("a.json", "2026-11-28T17:33:43Z"), with("b.json", "2026-11-28T17:33:45Z")];
        let text = compare(&reports).unwrap().table(&reports).text();
        assert!(!text.contains("data_start") && !text.contains("Setup that differs"), "{text}");
    }

    /// text, the page and the JSON.
    #[test]
    fn the_setups_difference_and_the_tags_are_shown() {
        let with = |name: &str, concurrency: u64, tag: &str| {
            let mut r = report(name, &[100.0]);
            r.json["setup"] = json!({"concurrency": concurrency, "protocol": "prepared",
                                     "server_settings": {"fsync": "on", "work_mem": tag}});
            r.json["run"] = json!({"tags": {"setup": tag}});
            r
        };
        let reports = vec![with("a.json", 2, "a"), with("b.json", 4, "b")];
        let text = compare(&reports).unwrap().table(&reports).text();
        assert!(text.contains("Setup that differs:\n  concurrency: A 2 · B 4\n"), "{text}");
        assert!(text.contains("  server_settings.work_mem: A a · B b\n"), "{text}");
        assert!(!text.contains("protocol") && !text.contains("fsync"), "settings alike are not listed: {text}");
        assert!(text.contains("Tags: A setup=a · B setup=b\n"), "{text}");
        let json = compare(&reports).unwrap().to_json(&reports, &[]);
        assert_eq!(json["setup_difference"][0], json!({"setting": "concurrency", "values": [2, 4]}));
        assert_eq!(json["reports"][1]["tags"], json!({"setup": "b"}));
    }

    #[test]
    fn single_runs_get_no_verdict_and_breach_nothing() {
        let c = compare(&[report("a", &[100.0]), report("b", &[50.0])]).unwrap();
        assert_eq!(verdict(&c, "rows_per_sec", 1), Some(Change::SingleRuns));
        assert!(c
            .table(&[report("a", &[100.0]), report("b", &[50.0])])
            .text()
            .contains("single runs: no noise estimate"));
        assert!(c.breaches(&[WorseLimit::parse("rows_per_sec:5%").unwrap()]).unwrap().is_empty());
    }

    /// `trials` simulated pairs of setups, `runs` runs a side: A's runs
    /// drawn from `draw`, B's from `draw` scaled by `scale`; the share of
    /// pairs that get a better or worse verdict on a higher-is-better
    /// figure. Seeded, so a failure is reproducible.
    fn verdict_rate(trials: usize, runs: usize, scale: f64, draw: fn(&mut ChaCha8Rng) -> f64) -> f64 {
        let mut rng = ChaCha8Rng::seed_from_u64(2026);
        let mut judged = 0;
        for _ in 0..trials {
            let a: Vec<f64> = (0..runs).map(|_| draw(&mut rng)).collect();
            let b: Vec<f64> = (0..runs).map(|_| draw(&mut rng) * scale).collect();
            judged += usize::from(crate::stats::repeat::beyond_noise(&a, &b).is_some());
        }
        judged as f64 / trials as f64
    }

    /// A standard normal value (Box–Muller), for the simulations.
    fn standard_normal(rng: &mut ChaCha8Rng) -> f64 {
        let u: f64 = 1.0 - rng.random::<f64>();
        let v: f64 = rng.random::<f64>();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Runs whose figure varies by 5 % (normal, coefficient of variation 0.05).
    fn normal_5_percent(rng: &mut ChaCha8Rng) -> f64 {
        100.0 * (1.0 + 0.05 * standard_normal(rng))
    }

    /// Runs with a skewed figure: lognormal, σ = 0.3 (a long tail of slow runs).
    fn lognormal(rng: &mut ChaCha8Rng) -> f64 {
        100.0 * (0.3 * standard_normal(rng)).exp()
    }

    /// Skewed runs that vary by about 5 % (lognormal, σ = 0.05).
    fn lognormal_5_percent(rng: &mut ChaCha8Rng) -> f64 {
        100.0 * (0.05 * standard_normal(rng)).exp()
    }

    /// Two identical setups must get a false better / worse on at most 5 %
    /// of figures (7 % allowed for the simulation's own noise), at every
    /// number of runs a side: 3 (the fewest `--runs` users give) and more.
    #[test]
    fn identical_setups_get_a_false_verdict_at_most_one_figure_in_twenty() {
        let mut rates = Vec::new();
        for runs in [3, 4, 5, 6, 8] {
            for (name, draw) in [("normal", normal_5_percent as fn(&mut ChaCha8Rng) -> f64), ("lognormal", lognormal)] {
                let rate = verdict_rate(2000, runs, 1.0, draw);
                println!("{runs} runs a side, {name}: false verdicts on {:.1}% of figures", rate * 100.0);
                rates.push((runs, name, rate));
            }
        }
        let too_many: Vec<String> = rates
            .iter()
            .filter(|r| r.2 > 0.07)
            .map(|(runs, name, rate)| format!("{runs} runs a side, {name}: {:.1}%", rate * 100.0))
            .collect();
        assert!(too_many.is_empty(), "false verdicts on too many figures: {too_many:?}");
    }

    /// The other side of the calibration: a true 20 % difference, at the
    /// fewest runs that get a verdict, is found in most trials, with runs
    /// that vary by 5 % (normal, and skewed).
    #[test]
    fn a_20_percent_difference_is_found_with_the_fewest_runs() {
        let draws = [("normal", normal_5_percent as fn(&mut ChaCha8Rng) -> f64), ("lognormal", lognormal_5_percent)];
        for (name, draw) in draws {
            // 500 trials: each found difference costs a bootstrap.
            let rate = verdict_rate(500, MIN_RUNS, 0.8, draw);
            println!("{MIN_RUNS} runs a side, {name} 5%: 20% found in {:.1}% of trials", rate * 100.0);
            assert!(rate >= 0.8, "{MIN_RUNS} runs a side, {name}: 20% found in {:.1}% of trials", rate * 100.0);
        }
    }

    #[test]
    fn fewer_runs_than_the_test_needs_get_no_verdict() {
        let (a, b) = (report("a", &[100.0, 110.0, 90.0]), report("b", &[50.0, 55.0, 45.0]));
        let c = compare(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(verdict(&c, "rows_per_sec", 1), Some(Change::TooFewRuns));
        assert!(c.table(&[a, b]).text().contains("too few runs for a noise estimate (4 per side needed)"));
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
