//! `dbload sweep`: one command run over a grid of settings (`--vary`), or
//! at rising rates until it breaks its SLO (`--find-max-rate`), to find
//! the best setting or the knee, which users otherwise find by hand.
//!
//! Every point is a plain run of the command, in process, through the same
//! dispatch as `dbload` itself ([`Dispatch`]): the sweep builds the point's
//! command line (the base arguments with the point's values, `--output
//! json`, its store and tags), runs it, and reads the point's figures from
//! its JSON report with the extraction `compare` uses. So a point measures
//! exactly what the command alone measures, is kept in the results store
//! like any run (tagged `sweep=ID`, `point=...`), and the sweep needs to
//! know nothing of how a command runs.
//!
//! `grid.rs` plans the points and their order, `search.rs` the rates of a
//! saturation search; `report::sweep` renders what this finds.

mod grid;
mod search;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{CommandFactory, Parser};
use serde_json::Value as Json;

use crate::cli::{Cli, Command, OutputFormat, ResultsArgs, SweepArgs};
use crate::compare::{cell, Change};
use crate::config::fail_if::{Condition, Contract};
use crate::config::results::ResultsConfig;
use crate::error::{exit, exit_code, interrupted, usage};
use crate::report::fail_if::{holds, samples_behind, value};
use crate::report::meta::{RunMeta, RunStart, Stamped};
use crate::report::repeat::{figure, figures_of, median_report, Better};
use crate::report::sweep::{self as report, SweepReport};
use crate::results::{self, KeptHistograms};
use grid::{Spellings, Vary};
use search::Search;

/// Runs one command line in process as `dbload` runs it (the crate's
/// `run`), writing its report to the buffer given: handed to the sweep so
/// that it names neither the commands nor their loop.
pub type Dispatch = fn(Cli, &mut dyn Write) -> Result<u8>;

/// The commands a sweep runs, with the report contract that their
/// figures (`--objective`, `--where`, `--slo`) are checked against.
const SWEEPABLE: [(&str, Contract); 6] = [
    ("ingest", Contract::Ingest),
    ("insert-fake-data", Contract::Ingest),
    ("insert-json", Contract::Ingest),
    ("timeit", Contract::Query),
    ("workload", Contract::Query),
    ("http", Contract::Http),
];

/// The commands with a `--rate` that `--find-max-rate` can raise.
const PACED: [&str; 3] = ["timeit", "workload", "http"];

/// A step of a saturation search holds its rate when it reaches at least
/// this share of it (the command itself fails a run below 90 %).
const HELD_SHARE: f64 = 0.95;

/// ... and when no more than this share of the operations due started
/// late (every worker busy when their slot came): late starts are queueing,
/// which the latency (measured from the intended start) and so the SLO
/// already weigh; when most operations wait for a worker, the schedule is
/// not kept, whatever the latency.
const LATE_SHARE: f64 = 0.5;

/// ... and when no more than this share of them never started: work the
/// schedule called for and the run did not do (a run of an open loop that
/// falls behind leaves it at the end).
const DROPPED_SHARE: f64 = 0.01;

/// A step judges a percentile (`--slo 'p99_ms < 50'`) on at least this
/// many samples: below it, a p99 is the slowest of a few, whose verdict
/// the next step could turn around by chance.
const MIN_SAMPLES: f64 = 100.0;

/// A step with too few samples runs again for longer, aiming this much
/// above [`MIN_SAMPLES`] (a step rarely reaches its rate exactly) ...
const EXTENSION_MARGIN: f64 = 1.2;

/// ... when at most this many times its measured part suffices; beyond
/// it the step is "not judged" rather than run for minutes unasked.
const MAX_EXTENSION: f64 = 10.0;

/// A sweep resolved before anything runs: every point's command line
/// parsed, every figure named checked against the command's report.
struct Plan {
    swept: String,
    /// The swept command's arguments (after its name) with what the sweep
    /// sets on every point: `--output json`, `--quiet`, the store, the tags.
    base: Vec<String>,
    /// As the user gave them after `--`, for the report (redacted there).
    given: Vec<String>,
    varied: Vec<Vary>,
    spellings: Vec<Spellings>,
    better: Better,
    objective: String,
    conditions: Vec<Condition>,
    runs: u32,
    seed: u64,
    search: Option<SearchPlan>,
    /// `ingest` making its own table: every point after the one that made
    /// it starts with it dropped (`--drop-table`), as `--runs` does, so
    /// that the points measure the same thing. The first point to write a
    /// table (a server and a name: see [`Sweep::table_of`]) refuses one
    /// that exists, so no one else's is dropped.
    fresh_table: bool,
    output: OutputFormat,
    html: Option<PathBuf>,
    results: ResultsConfig,
}

/// `--find-max-rate`'s settings.
struct SearchPlan {
    start: f64,
    /// A fraction (0.05 for `5%`).
    precision: f64,
    max: Option<f64>,
    slo: Vec<String>,
    /// How the swept command spells `--duration`, when the base gives it:
    /// a step short of samples is run again with a longer one.
    duration: Option<Spellings>,
}

/// `dbload sweep`: resolves the plan (any error is a usage error, before a
/// point runs), runs the points, prints and keeps the sweep's report.
/// `signalled`: whether a stop signal came (Ctrl-C, SIGTERM, SIGHUP);
/// the point running sees it too and stops, and no point starts after it.
pub fn run(args: SweepArgs, dispatch: Dispatch, signalled: &dyn Fn() -> bool, out: &mut dyn Write) -> Result<u8> {
    let start =
        RunStart::now(crate::redact::command_line(std::env::args_os().map(|a| a.to_string_lossy().into_owned())));
    let sweep_id = start.run_id();
    let plan = Plan::resolve(args, &sweep_id, signalled)?;
    let mut sweep = Sweep {
        plan: &plan,
        dispatch,
        signalled,
        sweep_id,
        points: Vec::new(),
        interrupted: false,
        tables_made: Vec::new(),
    };
    let (order, failed, search) = match &plan.search {
        None => {
            let order = grid::rounds(grid::points(&plan.varied).len(), plan.runs, plan.seed);
            (order.clone(), sweep.grid(&order).err(), None)
        }
        Some(s) => {
            let (search, failed) = sweep.find_max_rate(s);
            (vec![(0..sweep.points.len()).collect()], failed, Some(search))
        }
    };
    let report = sweep.report(order, search, failed.as_ref());
    let meta = RunMeta { tags: plan.results.tags.clone(), ..start.end() };
    let json = serde_json::to_value(Stamped { report: &report, run: &meta }).context("the sweep's JSON report")?;
    if let Some(path) = &plan.html {
        report::write_html(&report, &json, path)?;
    }
    let kept = results::keep(
        &plan.results,
        &results::Run { meta: &meta, report: &json, latencies: &KeptHistograms::default() },
    );
    // Stdout last: a reader that has gone costs neither the page nor the kept sweep.
    let printed = match plan.output {
        OutputFormat::Text => {
            // The run's lines, as every command prints them (and `results show` shows them).
            let meta = crate::report::meta::render(&meta);
            let shown = format!("{}{meta}{}\n", report::render(&report), kept.join("\n"));
            out.write_all(shown.as_bytes()).context("writing the report")
        }
        OutputFormat::Json => crate::report::json::write(&json, out),
    };
    crate::console::printed(out, printed)?;
    match failed {
        Some(e) => Err(e),
        None => Ok(report.exit_code),
    }
}

impl Plan {
    fn resolve(a: SweepArgs, sweep_id: &str, signalled: &dyn Fn() -> bool) -> Result<Plan> {
        let (swept, given) = a.command.split_first().context("clap requires the command")?;
        let Some(&(_, contract)) = SWEEPABLE.iter().find(|(name, _)| name == swept) else {
            let names: Vec<&str> = SWEEPABLE.iter().map(|(n, _)| *n).collect();
            return Err(usage(format!(
                "sweep -- {swept}: `{swept}` cannot be swept; sweep one of {}",
                names.join(", ")
            )));
        };
        for flag in ["runs", "pause"] {
            if grid::has_flag(given, &Spellings::long(flag)) {
                return Err(usage(format!(
                    "sweep -- {swept} --{flag}: the sweep repeats each point itself; give --runs to the sweep, before `--`"
                )));
            }
        }
        // A point is one run; its instances would have to be swept together.
        if grid::has_flag(given, &Spellings::long("instance")) {
            return Err(usage(format!(
                "sweep -- {swept} --instance: a sweep runs its points in this process; sweep each instance's \
                 settings without --instance, or start the instances of each setting yourself"
            )));
        }
        let varied = a.vary.iter().map(|v| Vary::parse(v)).collect::<Result<Vec<_>>>()?;
        for (i, v) in varied.iter().enumerate() {
            if varied[..i].iter().any(|w| w.flag == v.flag) {
                return Err(usage(format!(
                    "--vary {}: the flag is varied twice; give its values in one --vary",
                    v.flag
                )));
            }
        }
        let points = grid::size(&varied)?;
        let spellings: Vec<Spellings> =
            varied.iter().map(|v| spellings(swept, &v.flag).unwrap_or_else(|| Spellings::long(&v.flag))).collect();
        let (better, objective) = objective(a.objective.as_deref(), contract)?;
        let mut conditions = Vec::new();
        for (flag, given) in [("--where", &a.where_), ("--slo", &a.slo)] {
            for text in given {
                let c = Condition::parse_as(flag, text)?;
                c.check(contract)?;
                conditions.push(c);
            }
        }
        let runs = crate::config::Repeat::resolve(a.runs, None)?.runs;
        let search = if a.find_max_rate {
            if !PACED.contains(&swept.as_str()) {
                return Err(usage(format!(
                    "--find-max-rate searches the --rate of {}, not of {swept}; give one of those after `--`",
                    PACED.join(", ")
                )));
            }
            Some(SearchPlan::resolve(&a, swept, given)?)
        } else {
            if varied.is_empty() {
                return Err(usage("sweep: give --vary FLAG=V1,V2,... (repeatable), or --find-max-rate"));
            }
            None
        };
        if let Some(path) = &a.html {
            crate::config::check_writable("--html", path)?;
        }
        let base = point_base(given, &a.results);
        let keeps_table =
            ["drop-table", "append", "dry-run"].iter().any(|f| grid::has_flag(given, &Spellings::long(f)));
        let results = ResultsConfig::resolve(a.results, &|k| std::env::var(k).ok())?;
        let plan = Plan {
            swept: swept.clone(),
            base,
            given: given.to_vec(),
            varied,
            spellings,
            better,
            objective,
            conditions,
            runs,
            seed: a.seed.unwrap_or_else(|| uuid::Uuid::now_v7().as_u64_pair().1),
            search,
            fresh_table: swept == "ingest" && !keeps_table,
            output: a.output,
            html: a.html,
            results,
        };
        plan.check_every_point(sweep_id, points, signalled)?;
        Ok(plan)
    }

    /// Parses the base command, each value of each `--vary` alone, then
    /// every point, as `dbload` would: a flag the command does not take or
    /// a value it refuses is found here, naming the `--vary`, before any
    /// point runs. A stop signal ends it (exit 130): a large grid takes
    /// seconds to check.
    fn check_every_point(&self, sweep_id: &str, points: u64, signalled: &dyn Fn() -> bool) -> Result<()> {
        let parse_cli = |args: &[String]| {
            let argv = ["dbload", self.swept.as_str()].into_iter().map(String::from).chain(args.iter().cloned());
            Cli::try_parse_from(argv).map_err(|e| crate::cli::mistake::Mistake::of(&e).message)
        };
        let parse = |args: &[String]| parse_cli(args).map(drop);
        let base = parse_cli(&self.base).map_err(|why| usage(format!("sweep -- {}: {why}", self.swept)))?;
        let reads_stdin = match base.command {
            Command::Timeit(a) => a.stmts.is_empty(),
            Command::InsertJson(a) => a.files.is_empty() || a.files.iter().any(|f| f == "-"),
            _ => false,
        };
        if reads_stdin {
            return Err(usage(format!(
                "sweep -- {}: its input would come from stdin, which only the first point could read; give the \
                 statements with -s (timeit) or the input as files (insert-json)",
                self.swept
            )));
        }
        if let Some(s) = &self.search {
            let args = grid::with_flag(&self.base, &Spellings::long("rate"), &rate_text(s.start));
            parse(&args).map_err(|why| usage(format!("--find-max-rate: dbload {} --rate: {why}", self.swept)))?;
        }
        for (v, spelt) in self.varied.iter().zip(&self.spellings) {
            for (value, shown) in v.values.iter().zip(&v.shown) {
                parse(&grid::with_flag(&self.base, spelt, value)).map_err(|why| {
                    usage(format!("--vary {}={shown}: dbload {} does not take it: {why}", v.flag, self.swept))
                })?;
            }
        }
        for point in grid::points(&self.varied) {
            if signalled() {
                return Err(interrupted(format!(
                    "sweep: interrupted while checking its {} points: nothing was run",
                    crate::format::group(points)
                )));
            }
            parse(&self.point_args(&point, sweep_id)).map_err(|why| {
                usage(format!(
                    "sweep point {}: dbload {} refuses it: {why}",
                    grid::label(&self.varied, &point),
                    self.swept
                ))
            })?;
        }
        Ok(())
    }

    /// A grid point's arguments: the base with the point's values and its tags.
    fn point_args(&self, point: &[usize], sweep_id: &str) -> Vec<String> {
        let mut args = self.base.clone();
        for ((v, spelt), &i) in self.varied.iter().zip(&self.spellings).zip(point) {
            args = grid::with_flag(&args, spelt, &v.values[i]);
        }
        tagged(args, sweep_id, &grid::label(&self.varied, point))
    }
}

impl SearchPlan {
    fn resolve(a: &SweepArgs, swept: &str, given: &[String]) -> Result<SearchPlan> {
        let start = crate::config::check_rate(Some(a.start_rate), "operations")?.unwrap_or(a.start_rate);
        let max = crate::config::check_rate(a.max_rate, "operations")?;
        if let Some(max) = max.filter(|m| *m < start) {
            return Err(usage(format!("--max-rate {max}: below --start-rate {start}; give a higher maximum")));
        }
        let number = a.precision.trim().trim_end_matches('%').trim();
        let precision = number.parse::<f64>().ok().filter(|p| *p > 0.0 && *p < 100.0).ok_or_else(|| {
            usage(format!("--precision {}: give a percentage above 0 and below 100, e.g. 5%", a.precision))
        })?;
        let duration = spellings(swept, "duration").filter(|d| grid::has_flag(given, d));
        Ok(SearchPlan { start, precision: precision / 100.0, max, slo: a.slo.clone(), duration })
    }
}

/// How `dbload COMMAND` spells a long flag (its aliases, its short
/// letter), as clap knows it; `None` for a flag it does not have (the
/// parse of the point then names it).
fn spellings(command: &str, flag: &str) -> Option<Spellings> {
    let cli = Cli::command();
    let sub = cli.find_subcommand(command)?;
    let arg = sub
        .get_arguments()
        .find(|a| a.get_long() == Some(flag) || a.get_all_aliases().is_some_and(|aliases| aliases.contains(&flag)))?;
    let longs = arg.get_long().into_iter().chain(arg.get_all_aliases().unwrap_or_default());
    Some(Spellings { longs: longs.map(String::from).collect(), short: arg.get_short() })
}

/// `--objective`: `max FIGURE` or `min FIGURE`, FIGURE checked against the
/// report contract; by default the command's throughput, max.
fn objective(given: Option<&str>, contract: Contract) -> Result<(Better, String)> {
    let Some(text) = given else {
        let throughput = match contract {
            Contract::Query => "qps",
            Contract::Http => "http_reqs_per_sec",
            _ => "rows_per_sec",
        };
        return Ok((Better::Higher, throughput.to_string()));
    };
    let bad = |why: String| {
        usage(format!("--objective `{text}`: {why}; write 'max FIGURE' or 'min FIGURE', e.g. 'max rows_per_sec'"))
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    let (better, field) = match words.as_slice() {
        ["max", field] => (Better::Higher, *field),
        ["min", field] => (Better::Lower, *field),
        _ => return Err(bad("not max or min followed by a figure".into())),
    };
    contract.check_field(field).map_err(bad)?;
    Ok((better, field.to_string()))
}

/// The swept command's arguments with what the sweep sets on every point:
/// JSON output (read back, not printed), no progress bar, and the sweep's
/// store and tags.
fn point_base(given: &[String], store: &ResultsArgs) -> Vec<String> {
    let mut args = grid::with_flag(given, &Spellings::long("output"), "json");
    if !grid::has_flag(&args, &Spellings { longs: vec!["quiet".into()], short: Some('q') }) {
        args.push("--quiet".into());
    }
    if let Some(dir) = &store.results {
        args = grid::with_flag(&args, &Spellings::long("results"), &dir.to_string_lossy());
    }
    if let Some(url) = &store.results_url {
        args = grid::with_flag(&args, &Spellings::long("results-url"), url);
    }
    if store.no_results && !grid::has_flag(&args, &Spellings::long("no-results")) {
        args.push("--no-results".into());
    }
    for tag in &store.tag {
        args.extend(["--tag".to_string(), tag.clone()]);
    }
    args
}

/// `args` tagged as a point of the sweep.
fn tagged(mut args: Vec<String>, sweep_id: &str, label: &str) -> Vec<String> {
    args.extend(["--tag".into(), format!("sweep={sweep_id}"), "--tag".into(), format!("point={label}")]);
    args
}

/// A rate as `--rate` takes it: `400`, `412.5`.
fn rate_text(rate: f64) -> String {
    format!("{rate}")
}

/// One run of a point: its report as JSON, or what kept it from running.
struct Ran {
    round: u32,
    report: Option<Json>,
    exit_code: u8,
}

/// Why a search's step stopped the search.
enum Stop {
    Interrupted,
    Failed(anyhow::Error),
}

/// A point as it ran: its label, its values, its runs.
struct Done {
    label: String,
    values: Vec<String>,
    /// `--find-max-rate`: the step's rate.
    rate: Option<f64>,
    /// `--find-max-rate`: the `--duration` the step ran again with, having
    /// had too few samples for its SLO's percentile.
    extended_to: Option<u64>,
    runs: Vec<Ran>,
}

/// A sweep under way.
struct Sweep<'a> {
    plan: &'a Plan,
    dispatch: Dispatch,
    signalled: &'a dyn Fn() -> bool,
    sweep_id: String,
    /// Every point, in the grid's order (a search's: in the order tried).
    points: Vec<Done>,
    interrupted: bool,
    /// The tables points made (see [`Plan::fresh_table`]).
    tables_made: Vec<Vec<String>>,
}

impl Sweep<'_> {
    /// Runs the grid's points round by round, in `order`; stops at a stop
    /// signal (the point running is reported interrupted) or at a point
    /// that cannot run (its error returned).
    fn grid(&mut self, order: &[Vec<usize>]) -> Result<()> {
        let plan = self.plan;
        let grid = grid::points(&plan.varied);
        self.points = grid
            .iter()
            .map(|p| Done {
                label: grid::label(&plan.varied, p),
                values: plan.varied.iter().zip(p).map(|(v, &i)| v.shown[i].clone()).collect(),
                rate: None,
                extended_to: None,
                runs: Vec::new(),
            })
            .collect();
        let total = order.iter().map(Vec::len).sum::<usize>();
        for (n, (round, &p)) in order.iter().zip(1..).flat_map(|(o, r)| o.iter().map(move |p| (r, p))).enumerate() {
            if (self.signalled)() {
                self.interrupted = true;
                return Ok(());
            }
            let args = plan.point_args(&grid[p], &self.sweep_id);
            let code = self.run_point(p, args, round, &format!("[{}/{total}]", n + 1))?;
            if code == exit::INTERRUPTED || (self.signalled)() {
                self.interrupted = true;
                return Ok(());
            }
        }
        Ok(())
    }

    /// Raises the rate as [`Search`] says, each step `runs` times; returns
    /// the search and the error of a step that could not run.
    fn find_max_rate(&mut self, s: &SearchPlan) -> (Search, Option<anyhow::Error>) {
        let mut search = Search::new(s.start, s.precision, s.max);
        while let Some(rate) = search.next() {
            let p = self.points.len();
            let label = format!("rate={}", rate_text(rate));
            self.points.push(Done {
                label: label.clone(),
                values: vec![rate_text(rate)],
                rate: Some(rate),
                extended_to: None,
                runs: Vec::new(),
            });
            let base = grid::with_flag(&self.plan.base, &Spellings::long("rate"), &rate_text(rate));
            let mut stop = self.run_step(p, &base);
            if stop.is_none() {
                if let Some((duration, why)) = self.extension(s, &self.points[p]) {
                    crate::console::line(format_args!(
                        "dbload sweep [step {}] {label}: {why}; running the step again with --duration {duration}s",
                        p + 1
                    ));
                    let spelt = s.duration.as_ref().expect("an extension needs the flag");
                    let base = grid::with_flag(&base, spelt, &format!("{duration}s"));
                    let step = &mut self.points[p];
                    step.runs.clear();
                    step.extended_to = Some(duration);
                    stop = self.run_step(p, &base);
                }
            }
            match stop {
                Some(Stop::Interrupted) => {
                    self.interrupted = true;
                    return (search, None);
                }
                Some(Stop::Failed(e)) => return (search, Some(e)),
                None => search.record(rate, self.why_not(&self.points[p]).is_none()),
            }
        }
        (search, None)
    }

    /// Runs step `p` of a search `runs` times with `base`; what stopped it
    /// (a stop signal, a step that could not run), if anything did.
    fn run_step(&mut self, p: usize, base: &[String]) -> Option<Stop> {
        let label = self.points[p].label.clone();
        for round in 1..=self.plan.runs {
            if (self.signalled)() {
                return Some(Stop::Interrupted);
            }
            let args = tagged(base.to_vec(), &self.sweep_id, &label);
            match self.run_point(p, args, round, &format!("[step {}]", p + 1)) {
                Ok(code) if code == exit::INTERRUPTED || (self.signalled)() => return Some(Stop::Interrupted),
                Ok(_) => {}
                Err(e) => return Some(Stop::Failed(e)),
            }
        }
        None
    }

    /// A step judged on too few samples (see [`MIN_SAMPLES`]): the
    /// `--duration` in whole seconds that would give it enough at the rate
    /// it reached, and why, when the base gives a `--duration` to lengthen
    /// and [`MAX_EXTENSION`] times its measured part suffices.
    fn extension(&self, s: &SearchPlan, done: &Done) -> Option<(u64, String)> {
        s.duration.as_ref()?;
        let (condition, samples) = self.short_of_samples(done)?;
        let median = median_report(&done.runs.iter().filter_map(|r| r.report.clone()).collect::<Vec<_>>());
        let measured = median["duration_s"].as_f64().filter(|d| *d > 0.0)?;
        let warmup = median.pointer("/warmup/end_s").and_then(Json::as_f64).unwrap_or(0.0);
        let factor = MIN_SAMPLES * EXTENSION_MARGIN / samples.max(1.0);
        (samples > 0.0 && factor <= MAX_EXTENSION).then(|| {
            let duration = (warmup + measured * factor).ceil() as u64;
            (duration, format!("`{condition}` rests on {} samples, fewer than {MIN_SAMPLES}", figure(samples)))
        })
    }

    /// A step's condition that judges a percentile on the fewest samples
    /// (in the median of its runs), fewer than [`MIN_SAMPLES`], with their
    /// number; none if every percentile judged has enough, or a run has no
    /// report (the step is not judged on figures then).
    fn short_of_samples(&self, done: &Done) -> Option<(&str, f64)> {
        let reports: Vec<Json> = done.runs.iter().filter_map(|r| r.report.clone()).collect();
        if done.rate.is_none() || done.runs.is_empty() || reports.len() < done.runs.len() {
            return None;
        }
        let median = median_report(&reports);
        self.plan
            .conditions
            .iter()
            .filter_map(|c| Some((c.text(), samples_behind(c.field(), &median)?)))
            .filter(|(_, n)| *n < MIN_SAMPLES)
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Runs point `p` once with `args`, in process; records the run and
    /// says it on stderr (`at`: where the sweep is). An error that kept the
    /// command from running (exit 2 or 3) is returned: the sweep stops.
    fn run_point(&mut self, p: usize, mut args: Vec<String>, round: u32, at: &str) -> Result<u8> {
        let table = self.table_of(p);
        if self.tables_made.contains(&table) {
            args.push("--drop-table".into());
        }
        let argv = ["dbload", self.plan.swept.as_str()].into_iter().map(String::from).chain(args);
        let cli = Cli::try_parse_from(argv).map_err(|e| usage(crate::cli::mistake::Mistake::of(&e).message))?;
        let mut buffer = Vec::new();
        let result = (self.dispatch)(cli, &mut buffer);
        let report: Option<Json> = serde_json::from_slice(&buffer).ok();
        if self.plan.fresh_table && report.is_some() && !self.tables_made.contains(&table) {
            self.tables_made.push(table);
        }
        let code = match &result {
            Ok(code) => *code,
            Err(e) => exit_code(e),
        };
        let done = &mut self.points[p];
        done.runs.push(Ran { round, report, exit_code: code });
        let ran = done.runs.last().expect("just pushed");
        crate::console::line(format_args!("dbload sweep {at} {} (round {round}): {}", done.label, progress(ran)));
        result.map_err(|e| e.context(format!("sweep point {}", done.label)))
    }

    /// Which table point `p` writes, as far as the sweep varies it: its
    /// values of a varied `--url` or `--table` (none varied: the one table).
    fn table_of(&self, p: usize) -> Vec<String> {
        let varied = self.plan.varied.iter().zip(&self.points[p].values);
        varied.filter(|(v, _)| matches!(v.flag.as_str(), "url" | "table")).map(|(_, value)| value.clone()).collect()
    }

    /// Why a point may not be best (or a step did not hold its rate); none
    /// if it may.
    fn why_not(&self, done: &Done) -> Option<String> {
        let reports: Vec<Json> = done.runs.iter().filter_map(|r| r.report.clone()).collect();
        if done.runs.is_empty() {
            return Some("not run".into());
        }
        if done.runs.iter().any(|r| r.exit_code == exit::INTERRUPTED) {
            return Some("interrupted".into());
        }
        if reports.len() < done.runs.len() {
            return Some("a run could not run".into());
        }
        let median = median_report(&reports);
        let mut why = Vec::new();
        if let Some(rate) = done.rate {
            let achieved = value(&self.plan.objective, &median).unwrap_or(0.0);
            if achieved < rate * HELD_SHARE {
                why.push(format!(
                    "reached {}/s, below {}% of {}/s",
                    figure(achieved),
                    HELD_SHARE * 100.0,
                    figure(rate)
                ));
            }
            let count = |name: &str| median.pointer(name).and_then(Json::as_f64).unwrap_or(0.0);
            let (late, dropped) = (count("/late"), count("/dropped"));
            let due = count("/accounting/ok") + count("/accounting/failed") + dropped;
            if late > due * LATE_SHARE {
                why.push(format!(
                    "{} of {} due started late (more than {}%)",
                    figure(late),
                    figure(due),
                    LATE_SHARE * 100.0
                ));
            }
            if dropped > due * DROPPED_SHARE {
                let share = DROPPED_SHARE * 100.0;
                why.push(format!("{} of {} due never started (more than {share}%)", figure(dropped), figure(due)));
            }
            if let Some(errors) = median["errors"].as_f64().filter(|e| *e > 0.0) {
                why.push(format!("{} errors", figure(errors)));
            }
            if let Some((condition, samples)) = self.short_of_samples(done) {
                let longer = match (&self.plan.search, done.extended_to) {
                    (_, Some(d)) => format!(" after running again with --duration {d}s"),
                    (Some(s), None) if s.duration.is_none() => {
                        "; give --duration so that a short step can run longer".into()
                    }
                    _ => format!("; it would take over {MAX_EXTENSION} times the step's --duration"),
                };
                why.push(format!(
                    "not judged: `{condition}` rests on {} samples, fewer than {MIN_SAMPLES}{longer}",
                    figure(samples)
                ));
            }
        }
        // A step that could not keep its rate fails its run (exit 1): said above, in its terms.
        if let Some(r) = done.runs.iter().find(|r| r.exit_code != exit::OK).filter(|_| why.is_empty()) {
            why.push(format!("a run failed (exit {})", r.exit_code));
        }
        for c in &self.plan.conditions {
            match holds(c, &median) {
                Ok(true) => {}
                Ok(false) => {
                    let now = value(c.field(), &median).map_or_else(|e| e, figure);
                    why.push(format!("`{}` does not hold ({} = {now})", c.text(), c.field()));
                }
                Err(e) => why.push(format!("{e:#}")),
            }
        }
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// The sweep's report from the points done.
    fn report(&self, order: Vec<Vec<usize>>, search: Option<Search>, failed: Option<&anyhow::Error>) -> SweepReport {
        let plan = self.plan;
        let points: Vec<report::Point> = self.points.iter().enumerate().map(|(i, d)| self.point(i, d)).collect();
        let mut ranked: Vec<&report::Point> = points.iter().filter(|p| p.eligible && p.objective.is_some()).collect();
        ranked.sort_by(|a, b| {
            let (a, b) = (a.objective.unwrap_or_default(), b.objective.unwrap_or_default());
            match plan.better {
                Better::Higher => b.total_cmp(&a),
                Better::Lower => a.total_cmp(&b),
            }
        });
        let (best, runner_up) = match &search {
            // The highest rate held: steps are ranked by rate, not throughput.
            Some(s) => {
                (points.iter().find(|p| self.points[p.index].rate == s.max_sustainable()).map(|p| p.index), None)
            }
            None => (ranked.first().map(|p| p.index), ranked.get(1).map(|p| p.index)),
        };
        let margin = best.zip(runner_up).map(|(b, r)| self.margin(b, r));
        let (status, exit_code) = if let Some(e) = failed {
            ("failed", exit_code(e))
        } else if self.interrupted {
            ("interrupted", exit::INTERRUPTED)
        } else if best.is_none() {
            ("no_point", exit::FAILED_OPERATIONS)
        } else {
            ("ok", exit::OK)
        };
        let redacted = crate::redact::command_line(
            ["dbload", plan.swept.as_str()].into_iter().map(String::from).chain(plan.given.iter().cloned()),
        );
        let varied = match &plan.search {
            Some(_) => vec![report::Varied {
                flag: "rate".into(),
                values: self.points.iter().map(|p| p.values[0].clone()).collect(),
            }],
            None => {
                plan.varied.iter().map(|v| report::Varied { flag: v.flag.clone(), values: v.shown.clone() }).collect()
            }
        };
        let search = search.zip(plan.search.as_ref()).map(|(s, sp)| report::Search {
            slo: sp.slo.clone(),
            start_rate: sp.start,
            precision_percent: sp.precision * 100.0,
            max_rate: sp.max,
            max_sustainable_rate: s.max_sustainable(),
            steps: points
                .iter()
                .map(|p| report::Step {
                    point: p.index,
                    target_rate: self.points[p.index].rate.unwrap_or_default(),
                    achieved_rate: p.objective,
                    p50_ms: p.figures.get("p50_ms").copied(),
                    p99_ms: p.figures.get("p99_ms").copied(),
                    held: p.eligible,
                    judged: self.short_of_samples(&self.points[p.index]).is_none(),
                    extended_duration_s: self.points[p.index].extended_to,
                    why_not: p.why_not.clone(),
                })
                .collect(),
        });
        SweepReport {
            schema_version: report::SCHEMA_VERSION,
            command: "sweep".into(),
            status: status.into(),
            exit_code,
            sweep_id: self.sweep_id.clone(),
            mode: if plan.search.is_some() { "find_max_rate" } else { "grid" }.into(),
            swept: plan.swept.clone(),
            base_command: redacted,
            varied,
            objective: report::Objective {
                direction: if plan.better == Better::Higher { "max" } else { "min" }.into(),
                figure: plan.objective.clone(),
            },
            where_: plan.conditions.iter().map(|c| c.text().to_string()).collect(),
            runs: plan.runs,
            seed: plan.seed,
            order_method: if plan.search.is_some() { "sequential" } else { "shuffled_rounds" }.into(),
            order,
            points,
            best,
            margin,
            search,
            stopped: failed.map(|e| format!("{e:#}")),
        }
    }

    /// Point `index` as the report shows it: its runs, the medians of its
    /// figures, whether it may be best.
    fn point(&self, index: usize, done: &Done) -> report::Point {
        let reports: Vec<Json> = done.runs.iter().filter_map(|r| r.report.clone()).collect();
        let median = (!reports.is_empty()).then(|| median_report(&reports));
        let status = if done.runs.is_empty() {
            "not_run"
        } else if done.runs.iter().any(|r| r.exit_code == exit::INTERRUPTED) {
            "interrupted"
        } else if done.runs.iter().any(|r| r.exit_code != exit::OK) {
            "failed"
        } else {
            "ok"
        };
        let why_not = self.why_not(done);
        report::Point {
            index,
            label: done.label.clone(),
            values: done.values.clone(),
            status: status.into(),
            eligible: why_not.is_none(),
            why_not,
            objective: median.as_ref().and_then(|m| value(&self.plan.objective, m).ok()),
            figures: median
                .as_ref()
                .map(|m| figures_of(m).into_iter().map(|f| (f.name, f.value)).collect())
                .unwrap_or_default(),
            runs: done
                .runs
                .iter()
                .map(|r| report::PointRun {
                    round: r.round,
                    run_id: r.report.as_ref().and_then(|j| j.pointer("/run/run_id")?.as_str().map(String::from)),
                    status: r.report.as_ref().and_then(|j| j["status"].as_str()).unwrap_or("failed").to_string(),
                    exit_code: r.exit_code,
                    figures: r.report.as_ref().map(headline_figures).unwrap_or_default(),
                })
                .collect(),
        }
    }

    /// The best point against the runner-up on the objective, with the
    /// noise test `compare` uses when both have enough runs.
    fn margin(&self, best: usize, runner_up: usize) -> report::Margin {
        let samples = |p: usize| -> Vec<f64> {
            self.points[p].runs.iter().filter_map(|r| value(&self.plan.objective, r.report.as_ref()?).ok()).collect()
        };
        let c = cell(&samples(best), Some(&samples(runner_up)), self.plan.better);
        let verdict = c.verdict.unwrap_or(Change::SingleRuns);
        report::Margin {
            runner_up,
            ratio: c.ratio.unwrap_or(1.0),
            ratio_ci95: c.ratio_ci95.map(|(low, high)| report::RatioInterval { low, high }),
            p_value: c.p_value,
            verdict: serde_json::to_value(verdict).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default(),
            verdict_text: verdict.text(),
        }
    }
}

/// A run's headline figures by name, as `compare` reads them.
fn headline_figures(report: &Json) -> BTreeMap<String, f64> {
    figures_of(report).into_iter().map(|f| (f.name, f.value)).collect()
}

/// A run in one line of progress: its throughput, p99 and status.
fn progress(ran: &Ran) -> String {
    let Some(report) = &ran.report else { return format!("could not run (exit {})", ran.exit_code) };
    let shown: Vec<String> = figures_of(report)
        .iter()
        .filter_map(|f| match f.name.as_str() {
            "rows_per_sec" | "qps" | "http_reqs_per_sec" => Some(format!("{} {}", figure(f.value), f.label)),
            "p99_ms" => Some(format!("p99 {} ms", figure(f.value))),
            _ => None,
        })
        .collect();
    format!("{}, {}", shown.join(", "), report["status"].as_str().unwrap_or("?"))
}
