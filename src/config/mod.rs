//! Configuration: the flags of each command resolved and validated once
//! into what its run uses. What every command shares (which target, the
//! warm-up) is resolved here, the same way for all.

pub mod data;
pub mod fail_if;
pub mod http;
pub mod ingest;
pub mod init;
pub mod k6;
pub mod load;
pub mod metrics;
pub mod mixed;
pub mod node_ingest;
pub mod query;
pub mod results;
pub mod scale;
pub mod transfer;

use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use crate::cli::{OutputArgs, OutputFormat, StagesArgs, TargetArgs};
use crate::dialect::Engine;
use crate::driver::cratedb_http::CrateTarget;
use crate::driver::PgTarget;
use crate::error::usage;
use crate::op::{Ramps, Stage, Stages, Warmup};
use crate::stats::repeat::MAX_RUNS;
use crate::throwaway::LocalOptions;
use fail_if::{Condition, Contract};

pub use ingest::{IngestConfig, IngestPlan, TableAction};
pub use load::Load;
pub use mixed::MixedConfig;
pub use query::QueryConfig;
pub use transfer::{ExportConfig, FromSqlConfig};

/// Where the rows go.
#[derive(Debug, Clone)]
pub enum TargetChoice {
    /// A server given by URL, DATABASE_URL or PG* variables, and the engine
    /// `--engine` named (None: detect it).
    Remote(Box<PgTarget>, Option<Engine>),
    /// CrateDB's HTTP endpoint.
    Crate(Box<CrateTarget>),
    /// A throwaway local PostgreSQL, started for this run.
    Local(LocalOptions),
    /// Nowhere: generation and encoding only, optionally into COPY files.
    DryRun { copy_file: Option<String> },
}

impl TargetChoice {
    /// `--insecure` was given for an https CrateDB endpoint.
    pub fn tls_unverified(&self) -> bool {
        matches!(self, TargetChoice::Crate(c) if c.tls() && c.insecure())
    }

    /// The URL of a server given by the user, its password replaced, for
    /// reports; none for a throwaway server or a dry run.
    pub fn redacted(&self) -> Option<String> {
        match self {
            TargetChoice::Remote(t, _) => Some(t.redacted().to_string()),
            TargetChoice::Crate(c) => Some(c.redacted().to_string()),
            TargetChoice::Local(_) | TargetChoice::DryRun { .. } => None,
        }
    }
}

/// Where a run's report goes: the output flags every command shares,
/// resolved once (`--fail-if` expressions parsed before anything runs).
#[derive(Debug, Clone)]
pub struct OutputConfig {
    pub format: OutputFormat,
    pub report_file: Option<std::path::PathBuf>,
    pub html_file: Option<std::path::PathBuf>,
    pub quiet: bool,
    /// How the run shows its progress on stderr.
    pub progress: ProgressDisplay,
    pub fail_if: Vec<Condition>,
    /// Where the finished run is kept.
    pub results: results::ResultsConfig,
    pub repeat: Repeat,
    /// `--instance`: this run's part of a distributed run.
    pub instance: Option<scale::Instance>,
    /// `--metrics-listen`: where the run's live figures are served.
    pub metrics: Option<metrics::MetricsListen>,
    /// `--sample-interval`: how often the server is sampled.
    pub sample_every: Duration,
}

/// `--sample-interval`'s bounds: faster would load the server it measures,
/// slower would leave most of a run's seconds unknown.
pub const SAMPLE_EVERY: std::ops::RangeInclusive<Duration> = Duration::from_millis(100)..=Duration::from_secs(60);

/// How a run shows its progress on stderr while it goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressDisplay {
    /// `--quiet`: nothing.
    Hidden,
    /// A bar on a terminal; when stderr is not one (a log, CI), a line
    /// every [`AUTO_PROGRESS_EVERY`].
    Auto,
    /// `-P SECONDS`: a line (pgbench's) every interval, instead of the bar.
    Lines(Duration),
}

/// How often a run whose stderr is not a terminal prints a progress line,
/// so that a log shows it is alive without filling up.
pub const AUTO_PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// `--runs N` and `--pause`: how often the command runs, and the wait
/// between runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repeat {
    /// 1 to [`MAX_RUNS`].
    pub runs: u32,
    pub pause: Duration,
}

impl Repeat {
    /// `--runs` (1 to [`MAX_RUNS`]) and `--pause` (only with 2 runs or more).
    pub fn resolve(runs: u32, pause: Option<Duration>) -> Result<Repeat> {
        if !(1..=MAX_RUNS).contains(&runs) {
            return Err(usage(format!("--runs {runs}: give a number of runs from 1 to {MAX_RUNS}")));
        }
        if pause.is_some() && runs == 1 {
            return Err(usage("--pause waits between runs: it needs --runs 2 or more"));
        }
        Ok(Repeat { runs, pause: pause.unwrap_or_default() })
    }
}

impl OutputConfig {
    /// `contract`: the report the command writes, whose fields `--fail-if`
    /// may name. The report files are checked writable here, so that a
    /// typo costs no run.
    pub fn resolve(a: OutputArgs, contract: Contract) -> Result<OutputConfig> {
        let fail_if: Vec<Condition> = a.fail_if.iter().map(|c| Condition::parse(c)).collect::<Result<_>>()?;
        for c in &fail_if {
            c.check(contract)?;
        }
        for (option, path) in [("--report", &a.report), ("--html", &a.html)] {
            if let Some(path) = path {
                check_writable(option, path)?;
            }
        }
        // The store is the user's, as their home is: found from the process's
        // environment whatever environment the command was given.
        let results = results::ResultsConfig::resolve(a.results, &|k| std::env::var(k).ok())?;
        let repeat = Repeat::resolve(a.runs, a.pause)?;
        let progress = match (a.quiet, a.progress) {
            (_, Some(every)) if every < Duration::from_millis(100) => {
                return Err(usage(format!(
                    "--progress {every:?} (-P): too short to measure an interval; give 1 (second) or more"
                )))
            }
            (_, Some(every)) => ProgressDisplay::Lines(every),
            (true, None) => ProgressDisplay::Hidden,
            (false, None) => ProgressDisplay::Auto,
        };
        let instance = scale::Instance::resolve(a.scale, results.url.is_some(), repeat.runs)?;
        let metrics = a.metrics_listen.as_deref().map(metrics::MetricsListen::resolve).transpose()?;
        if !SAMPLE_EVERY.contains(&a.sample_interval) {
            return Err(usage(format!(
                "--sample-interval {}: give 100ms to 60s (e.g. 250ms, 5s)",
                humantime::format_duration(a.sample_interval)
            )));
        }
        Ok(OutputConfig {
            format: a.output,
            report_file: a.report,
            html_file: a.html,
            quiet: a.quiet,
            progress,
            fail_if,
            results,
            repeat,
            instance,
            metrics,
            sample_every: a.sample_interval,
        })
    }
}

/// Fails (usage) unless `path` can be written at the end of the run. An
/// existing file is opened to append, so it is not truncated before the
/// run is over; a new one is created and removed again.
pub fn check_writable(option: &str, path: &Path) -> Result<()> {
    let refuse =
        |why: String| usage(format!("{option} {}: {why}; give a file in a writable directory", path.display()));
    if path.is_dir() {
        return Err(refuse("is a directory".into()));
    }
    if path.exists() {
        std::fs::OpenOptions::new().append(true).open(path).map_err(|e| refuse(format!("cannot write it ({e})")))?;
        return Ok(());
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| refuse(format!("cannot create it ({e})")))?;
    std::fs::remove_file(path).map_err(|e| refuse(format!("cannot remove the probe file ({e})")))
}

/// This machine's CPUs: the default count of workers, init's fillers and
/// nodeIngestBench's processes.
pub(crate) fn cpus() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// `--url`, then `DATABASE_URL`, then `PG*` variables when `PGHOST` is set,
/// then nodeIngestBench's `CRATE_*` variables when `CRATE_HOST` is set (in
/// the environment or `./.env`, as it reads them), else a throwaway local
/// PostgreSQL sized for `connections`. A cratedb://
/// URL, or http(s):// with `--engine cratedb`, is CrateDB's HTTP endpoint.
/// `--observe URL`: a database to sample while a run loads something else
/// (the database behind an HTTP API): a PostgreSQL-family URL, or CrateDB's
/// HTTP endpoint as `cratedb://`. An http(s) URL is most likely the API's
/// own: refused, saying what to give.
pub fn resolve_observed(url: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<TargetChoice> {
    match url.split_once("://").map(|(s, _)| s.to_ascii_lowercase()).as_deref() {
        Some("cratedb") => Ok(TargetChoice::Crate(Box::new(CrateTarget::parse(url, "--observe", false)?))),
        Some("http" | "https") => Err(usage(format!(
            "--observe {}: an HTTP URL; give the database behind the API: postgres://user@host:5432/db \
             (PostgreSQL, TimescaleDB, Citus, CrateDB's port 5432) or cratedb://host:4200",
            crate::redact::userinfo(url)
        ))),
        _ => Ok(TargetChoice::Remote(Box::new(PgTarget::from_url(url, "--observe", env)?), None)),
    }
}

pub fn resolve_target(a: &TargetArgs, connections: u32, env: &dyn Fn(&str) -> Option<String>) -> Result<TargetChoice> {
    let engine = a.engine.engine();
    if let Some(url) = &a.url {
        if a.keep {
            return Err(usage("--keep applies to the throwaway local PostgreSQL, not to --url"));
        }
        let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
        match (scheme.as_deref(), engine) {
            (Some("cratedb"), None | Some(Engine::Cratedb)) | (Some("http" | "https"), Some(Engine::Cratedb)) => {
                return Ok(TargetChoice::Crate(Box::new(CrateTarget::parse(url, "--url", a.insecure)?)))
            }
            (Some("cratedb"), Some(e)) => {
                return Err(usage(format!("--engine {e} with a cratedb:// URL: that is CrateDB's HTTP endpoint")))
            }
            (Some("http" | "https"), _) => {
                return Err(usage(format!(
                    "--url {}: an http(s) URL is CrateDB's HTTP endpoint only with --engine cratedb (or write \
                     cratedb://host:4200); to load an HTTP API use `dbload http`",
                    crate::redact::userinfo(url)
                )))
            }
            _ => {}
        }
    }
    if a.insecure {
        return Err(usage(
            "--insecure applies to CrateDB over https; for PostgreSQL add sslmode=require to the URL (encrypts without verifying)",
        ));
    }
    if let Some(url) = &a.url {
        return Ok(TargetChoice::Remote(Box::new(PgTarget::from_url(url, "--url", env)?), engine));
    }
    if let Some(url) = env("DATABASE_URL").filter(|u| !u.is_empty()) {
        return Ok(TargetChoice::Remote(Box::new(PgTarget::from_url(&url, "DATABASE_URL", env)?), engine));
    }
    // A service names a server as PGHOST does.
    if ["PGHOST", "PGSERVICE"].into_iter().any(|var| env(var).is_some_and(|v| !v.is_empty())) {
        return Ok(TargetChoice::Remote(Box::new(PgTarget::from_env(env)?), engine));
    }
    if let Some(url) = node_ingest::crate_target(env, std::path::Path::new(".env"))? {
        if let Some(e) = engine.filter(|e| *e != Engine::Cratedb) {
            return Err(usage(format!("--engine {e} with CRATE_HOST set: that names CrateDB's HTTP endpoint")));
        }
        return Ok(TargetChoice::Crate(Box::new(CrateTarget::parse(&url, "CRATE_HOST", a.insecure)?)));
    }
    if let Some(e) = engine.filter(|e| *e != Engine::Postgres) {
        return Err(usage(format!(
            "--engine {e} needs --url (or DATABASE_URL, PGHOST): the throwaway local target is plain PostgreSQL"
        )));
    }
    Ok(TargetChoice::Local(LocalOptions {
        keep: a.keep,
        max_connections: (connections + 20).max(100),
        ..Default::default()
    }))
}

/// cr8's `--hosts host:4200[,...]`: CrateDB's HTTP endpoints, the target
/// that `--url cratedb://host:4200,...` names (clap refuses the two together).
pub fn cr8_hosts(target: &mut TargetArgs, hosts: Option<&str>) {
    if let Some(hosts) = hosts {
        target.url = Some(format!("cratedb://{hosts}"));
    }
}

/// The slowest `--rate` taken: one operation every 1,000 s. A slower rate
/// puts the schedule past what a clock can hold (`--rate 1e-300` would
/// overflow it at the second operation).
pub const MIN_RATE: f64 = 0.001;

/// The fastest `--rate` taken: one unit a nanosecond, the finest step of
/// the clock the schedule is kept on. Faster slots all fall on the same
/// instant (`--rate 18446744073709551616` was taken and ran as a closed loop).
pub const MAX_RATE: f64 = 1e9;

/// `--rate`, checked: a finite number of `unit`s per second, from
/// [`MIN_RATE`] to [`MAX_RATE`].
pub fn check_rate(rate: Option<f64>, unit: &str) -> Result<Option<f64>> {
    match rate {
        Some(r) if !(MIN_RATE..=MAX_RATE).contains(&r) => Err(usage(format!(
            "--rate {r:?}: out of range; give a finite number of {unit} per second, {MIN_RATE} or more and \
             {MAX_RATE} or less"
        ))),
        r => Ok(r),
    }
}

/// The longest a run, its stages or its warm-up may last: 100 years (as
/// humantime counts them). A run's deadline is its start on the monotonic
/// clock plus its length, and that clock holds only so far: `--duration
/// 500000000000y` overflowed it and panicked in the workers.
pub const MAX_DURATION: Duration = Duration::from_secs(100 * 31_557_600);

/// `what` (`--duration 2m`, `--stages ...`), a time up to [`MAX_DURATION`].
fn within_clock(what: &str, d: Duration) -> Result<Duration> {
    if d > MAX_DURATION {
        return Err(usage(format!(
            "{what}: past what the run's clock holds; give at most {} (Ctrl-C ends a run early)",
            humantime::format_duration(MAX_DURATION)
        )));
    }
    Ok(d)
}

/// `--duration`, checked: more than 0 and at most [`MAX_DURATION`].
pub fn check_duration(d: Option<Duration>) -> Result<Option<Duration>> {
    match d {
        Some(d) if d.is_zero() => Err(usage("--duration 0s: give a positive duration such as 30s or 5m")),
        Some(d) => within_clock(&format!("--duration {}", humantime::format_duration(d)), d).map(Some),
        None => Ok(None),
    }
}

/// How long a run lasts, if a time bounds it, and the flag that says so:
/// the stages' total or `--duration`. A time warm-up must end before it.
pub fn run_span(stages: Option<&Stages>, duration: Option<Duration>) -> Option<(Duration, &'static str)> {
    stages.map(|s| (s.duration(), s.flag())).or(duration.map(|d| (d, "--duration")))
}

/// The most connections (workers, VUs) one run opens: far beyond any
/// server's `max_connections` and a process's file descriptors, and a bound
/// on what a run sets up per connection before it starts (`--concurrency
/// 2147483647` spent minutes and gigabytes on that).
pub const MAX_CONNECTIONS: u32 = 100_000;

/// `--workers`, `--concurrency` or `--vus` (`flag`), each a connection of
/// `what`'s: at least 1, at most [`MAX_CONNECTIONS`].
pub fn connections(flag: &str, n: u32, what: &str) -> Result<u32> {
    match n {
        0 => Err(usage(format!("{flag} 0: need at least 1 {what}"))),
        n if n > MAX_CONNECTIONS => {
            Err(usage(format!("{flag} {n}: at most {MAX_CONNECTIONS} (each {what} opens a connection of its own)")))
        }
        n => Ok(n),
    }
}

/// `--threads` (`-j`): the threads that run the workers, 1 to 1024. A
/// thread per core is what the workers can use; far more is a typo (and
/// each starts a thread of the OS before the run).
pub fn worker_threads(n: Option<usize>) -> Result<Option<usize>> {
    match n {
        Some(n @ (0 | 1025..)) => Err(usage(format!("--threads {n}: give 1 to 1024 threads (default: one per CPU)"))),
        n => Ok(n),
    }
}

/// `--reconnect` / `--no-reconnect` (ingest and queries alike): on when
/// asked, or by default when a `--duration` bounds the run, since reconnecting
/// waits for a server that may never return and only a deadline bounds that
/// wait (a run of a count of rows or queries would wait until Ctrl-C).
pub fn reconnect(on: bool, off: bool, duration: Option<Duration>) -> bool {
    on || (duration.is_some() && !off)
}

/// An operation of an open-loop run that starts later than this after its
/// intended start is counted `late`: every worker was busy when its slot
/// came. One due less than this before the run ended and not started is
/// late, not dropped.
pub const LATE_AFTER: Duration = Duration::from_millis(10);

/// With `--rate` and no `--concurrency`/`--vus`: the most operations in
/// flight, sized like k6's `maxVUs`: one per operation per second, at least
/// 1 and at most `cap`. The workers share one schedule, so idle ones cost
/// only their connection.
pub fn default_in_flight(rate: f64, cap: u32) -> u32 {
    (rate.ceil() as u32).clamp(1, cap)
}

/// `--warmup`: `10s`, `2m` (a time) or `100000` (a count of `unit`s, split
/// across workers). It means the same in every command: the first part of
/// the run, taken out of it and not measured. A time is the first part of
/// `--duration`, so a count is the first part of the run's total (`total`:
/// the count and the flag that gave it): `--rows`, `--repeat`,
/// `--max-queries` and `--iterations` stay what the target receives.
/// A time is refused when it is not shorter than the run (`span`: its
/// length and the flag that set it, see [`run_span`]).
pub fn parse_warmup(
    s: Option<&str>,
    workers: u32,
    unit: &str,
    total: Option<(u64, &str)>,
    span: Option<(Duration, &str)>,
) -> Result<Warmup> {
    let Some(s) = s else { return Ok(Warmup::None) };
    if let Ok(n) = s.parse::<u64>() {
        if let Some((total, flag)) = total.filter(|&(total, _)| n >= total) {
            return Err(usage(format!(
                "--warmup {n}: the warm-up is the first {n} {unit} of the {total} that {flag} asks for, which leaves \
                 none to measure; give a smaller warm-up or a larger {flag}"
            )));
        }
        return Ok(match n {
            0 => Warmup::None,
            r => Warmup::Count(r.div_ceil(workers as u64)),
        });
    }
    let d = humantime::parse_duration(s)
        .map_err(|e| usage(format!("--warmup {s:?}: {e}; give a time (30s, 2m) or a number of {unit} (100000)")))?;
    within_clock(&format!("--warmup {s}"), d)?;
    if let Some((length, flag)) = span.filter(|&(length, _)| d >= length) {
        return Err(usage(format!(
            "--warmup {s}: the warm-up is the first {} of the run, and the run lasts {} ({flag}): none of it would \
             be measured; give a shorter warm-up or a longer run",
            humantime::format_duration(d),
            humantime::format_duration(length)
        )));
    }
    Ok(Warmup::Duration(d))
}

/// Stages are one schedule for one client: with `--instance` each instance
/// would run the whole ramp, N times the load asked for. Refused until
/// they are split like `--rate`.
pub fn stages_not_split(a: &StagesArgs, instance: Option<&scale::Instance>) -> Result<()> {
    match (a.given(), instance) {
        (true, Some(_)) => Err(usage(
            "--instance with --stages or --rate-stages: stages are not split across instances (each would run the \
             whole ramp); give --rate or the workers' flag with --duration",
        )),
        _ => Ok(()),
    }
}

/// `--stages` or `--rate-stages` (clap lets only one through), parsed and
/// checked against the flags they replace. `start_flag`: the flag that
/// sets the workers, and its value if given, which a VU ramp starts from
/// (k6's startVUs; 1 if not given). A rate ramp starts from 0 (k6's startRate).
pub fn resolve_stages(
    a: &StagesArgs,
    duration: Option<Duration>,
    rate: Option<f64>,
    start_flag: (&str, Option<u32>),
) -> Result<Option<Stages>> {
    let (flag, text, ramps) = match (&a.stages, &a.rate_stages) {
        (Some(t), _) => ("--stages", t, Ramps::Vus),
        (None, Some(t)) => ("--rate-stages", t, Ramps::Rate),
        (None, None) => return Ok(None),
    };
    let (start, unit) = match ramps {
        Ramps::Vus => (f64::from(start_flag.1.unwrap_or(1)), "a whole number of workers"),
        Ramps::Rate => (0.0, "a number per second"),
    };
    let stages = parse_stages(flag, text, ramps, unit)?;
    let stages = Stages { ramps, start, stages };
    let total = stages.stages.iter().try_fold(Duration::ZERO, |sum, s| sum.checked_add(s.duration));
    match total {
        None => return Err(usage(format!("{flag} {text}: the stages' total time is past what a clock holds"))),
        Some(t) if t.is_zero() => {
            return Err(usage(format!("{flag} {text}: the stages take no time; give each a time such as 30s")))
        }
        Some(t) => within_clock(&format!("{flag} {text}"), t)?,
    };
    // A VU ramp starts from the workers' flag only when it is given: from
    // the default 1 down to 0 is a run of nothing meant.
    let given_start = match ramps {
        Ramps::Vus => start_flag.1.map_or(0.0, f64::from),
        Ramps::Rate => 0.0,
    };
    if stages.stages.iter().map(|s| s.target).fold(given_start, f64::max) <= 0.0 {
        return Err(usage(format!("{flag} {text}: every target is 0, so nothing would run; give one above 0")));
    }
    let units = stages.mean() * stages.duration().as_secs_f64();
    if ramps == Ramps::Rate && units < 1.0 {
        return Err(usage(format!(
            "{flag} {text}: the ramp calls for {units:.3} in all, less than 1 operation; give higher rates or \
             longer stages"
        )));
    }
    if duration.is_some() {
        return Err(usage(format!(
            "{flag} and --duration: the run lasts the stages' total ({}); leave out --duration",
            humantime::format_duration(stages.duration())
        )));
    }
    if rate.is_some() {
        return Err(usage(format!(
            "{flag} and --rate: {}; leave out --rate",
            match ramps {
                Ramps::Vus => "--stages ramps workers in a closed loop, --rate-stages ramps the rate",
                Ramps::Rate => "--rate-stages sets the rate over time",
            }
        )));
    }
    if stage_workers(Some(&stages)).is_some_and(|n| n > MAX_CONNECTIONS) {
        return Err(usage(format!(
            "{flag} {text}: at most {MAX_CONNECTIONS} workers (each opens a connection of its own)"
        )));
    }
    if let (Ramps::Vus, (name, Some(n))) = (ramps, start_flag) {
        connections(name, n, "worker")?;
    }
    Ok(Some(stages))
}

/// `TIME:TARGET,...`, each part named by its place when it is wrong.
fn parse_stages(flag: &str, text: &str, ramps: Ramps, unit: &str) -> Result<Vec<Stage>> {
    let example = match ramps {
        Ramps::Vus => "30s:10,1m:50,30s:0",
        Ramps::Rate => "30s:100,1m:1000,30s:1000",
    };
    if text.trim().is_empty() {
        return Err(usage(format!("{flag} {text:?}: no stage given; give TIME:TARGET,... such as {example}")));
    }
    text.split(',')
        .enumerate()
        .map(|(i, part)| {
            let bad = |why: String| {
                usage(format!("{flag} {text}: stage {} {part:?}: {why}; give TIME:TARGET,... such as {example}", i + 1))
            };
            let Some((time, target)) = part.trim().split_once(':') else {
                return Err(bad("no target (write TIME:TARGET)".into()));
            };
            let duration =
                humantime::parse_duration(time.trim()).map_err(|e| bad(format!("{time:?} is not a time ({e})")))?;
            let n = target.trim().parse::<f64>().ok().filter(|n| n.is_finite() && *n >= 0.0);
            let n = match (ramps, n) {
                (Ramps::Vus, Some(n)) if n.fract() == 0.0 => n,
                (Ramps::Rate, Some(n)) if n == 0.0 || (MIN_RATE..=MAX_RATE).contains(&n) => n,
                (Ramps::Rate, Some(_)) => {
                    return Err(bad(format!("rate {target:?} is out of range: give 0, or {MIN_RATE} to {MAX_RATE}")))
                }
                _ => return Err(bad(format!("target {target:?} is not {unit}, 0 or more"))),
            };
            Ok(Stage { duration, target: n })
        })
        .collect()
}

/// With VU stages: the workers a run starts, as many as the highest target.
pub fn stage_workers(stages: Option<&Stages>) -> Option<u32> {
    stages.filter(|s| s.ramps == Ramps::Vus).map(|s| s.peak().ceil() as u32)
}

/// The rate that sizes the operations in flight when no flag does:
/// `--rate`, or the highest of `--rate-stages`.
pub fn sizing_rate(rate: Option<f64>, stages: Option<&Stages>) -> Option<f64> {
    rate.or(stages.filter(|s| s.ramps == Ramps::Rate).map(Stages::peak))
}
