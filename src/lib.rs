//! dbload: measure how fast SQL databases ingest data and answer queries.
//!
//! [`run()`](fn@run) is the library entry that `main` and the tests call: it takes
//! parsed arguments, runs the command and returns its report and exit code.

pub mod barrier;
pub mod cli;
pub mod compare;
pub mod config;
pub mod console;
#[cfg(test)]
mod counting_alloc;
pub mod dialect;
pub mod driver;
pub mod encode;
pub mod error;
pub mod file_cap;
#[cfg(test)]
mod fuzz;
pub mod ident;
pub mod input;
pub mod model;
pub mod op;
pub mod outcome;
pub mod redact;
pub mod report;
pub mod results;
pub mod run;
pub mod sqltext;
pub mod stats;
pub mod sweep;
pub mod target;
pub mod throwaway;
pub mod workload;
mod yaml;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use cli::{Cli, Command, IngestArgs, OutputFormat};
use config::{IngestConfig, MixedConfig, OutputConfig, QueryConfig, TargetChoice};
use report::meta::{RunStart, Stamped};
use report::mixed::MixedReport;
use report::query::QueryReport;
use report::transfer::TransferReport;
use report::Report;
use results::Latencies;
use run::scale::together;
use target::Target;
use throwaway::LocalPostgres;

/// What a finished command leaves: its report and the exit code it earned.
#[derive(Debug)]
pub struct Outcome<R> {
    pub report: R,
    pub exit_code: u8,
}

/// Runs a parsed command line, writing the report to `out`; returns the
/// exit code. Environment variables (`DATABASE_URL`, `PG*`) are read from
/// the process, statements for `timeit` from stdin when no `-s` is given.
pub fn run(cli: Cli, out: &mut dyn Write) -> Result<u8> {
    let env = |k: &str| std::env::var(k).ok();
    match cli.command {
        Command::Ingest(args) => ingest(args, &env, out).map(|o| o.exit_code),
        Command::Timeit(args) => {
            let cfg = QueryConfig::timeit(args, &env, &mut std::io::stdin().lock())?;
            queries(cfg, out).map(|o| o.exit_code)
        }
        Command::Workload(args) => queries(QueryConfig::workload(args, &env)?, out).map(|o| o.exit_code),
        Command::Init(args) => init(args, &env, out),
        Command::Run(args) => mixed(MixedConfig::resolve(args, &env)?, out).map(|o| o.exit_code),
        Command::Http(args) => http(args, &env, out).map(|o| o.exit_code),
        Command::InsertFakeData(args) => insert_fake_data(args, &env, out).map(|o| o.exit_code),
        Command::InsertJson(args) => insert_json(args, &env, out).map(|o| o.exit_code),
        Command::Export(args) => export(args, &env, out).map(|o| o.exit_code),
        Command::InsertFromSql(args) => insert_from_sql(args, &env, out).map(|o| o.exit_code),
        Command::Compare(args) => compare(args, &env, out),
        Command::Sweep(args) => {
            // A stop signal is noted from the start and stays noted: the
            // point running stops on it, and no point starts after it.
            note_early_signals();
            sweep::run(args, run, &|| EARLY_SIGNAL.load(Ordering::SeqCst), out)
        }
        Command::Stop(args) => stop(&args.dir, out),
        Command::Results(args) => results_command(args, &env, out),
        Command::Completions(args) => completions(args.shell, out),
        Command::Man(args) => man(args.dir.as_deref(), out),
        Command::Report(args) => merged_report(args, &env, out),
    }
}

/// `dbload init`: pgbench's tables on the target; exit 130 when
/// interrupted while filling them.
pub fn init(args: cli::InitArgs, env: &dyn Fn(&str) -> Option<String>, out: &mut dyn Write) -> Result<u8> {
    let cfg = config::init::InitConfig::resolve(args, env)?;
    let started = Started::new(&cfg.target)?;
    let target = started.target.clone().expect("init always has a target");
    let done = with_threads(None, async |cancel| run::init::init(&cfg, &target, cancel).await)?;
    let printed = out.write_all(report::init::render(&done).as_bytes()).context("writing the report");
    console::printed(out, printed)?;
    Ok(if done.interrupted { error::exit::INTERRUPTED } else { error::exit::OK })
}

/// `dbload completions SHELL`: the script, made from the clap definitions
/// so that it knows every command and flag of this build.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn Write) -> Result<u8> {
    use clap::CommandFactory;
    // Made in memory first: clap_complete panics on a failed write (a
    // closed pipe), where dbload reports it.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "dbload", &mut script);
    out.write_all(&script).context("writing to stdout")?;
    Ok(error::exit::OK)
}

/// `dbload man [DIR]`: dbload(1) on `out`, or every command's page into
/// `dir`, made from the clap definitions (the same text as `--help`).
pub fn man(dir: Option<&std::path::Path>, out: &mut dyn Write) -> Result<u8> {
    use clap::CommandFactory;
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .and_then(|()| clap_mangen::generate_to(Cli::command(), dir))
                .with_context(|| format!("writing the man pages into {}", dir.display()))?;
        }
        None => clap_mangen::Man::new(Cli::command()).render(out).context("writing to stdout")?,
    }
    Ok(error::exit::OK)
}

/// `dbload report --run-id ID`: the instances of a distributed run merged
/// into one report; exit 1 when one is missing or failed.
pub fn merged_report(args: cli::ReportArgs, env: &dyn Fn(&str) -> Option<String>, out: &mut dyn Write) -> Result<u8> {
    if let Some(path) = &args.html {
        config::check_writable("--html", path)?;
    }
    let store = config::results::Store::resolve(args.store, env)?;
    let (merged, exit_code) = results::merged(&store, &args.run_id)?;
    if let Some(path) = &args.html {
        report::html::write_file(&merged, path)?;
    }
    let printed = match args.output {
        OutputFormat::Text => out.write_all(results::merge::render(&merged).as_bytes()).context("writing the report"),
        OutputFormat::Json => report::json::write(&merged, out),
    };
    console::printed(out, printed)?;
    Ok(exit_code)
}

/// `dbload compare A B [C …]`: exit 1 when a `--fail-if-worse` limit is
/// breached, 2 for a report that cannot be read, an unknown run id or a
/// bad limit.
pub fn compare(args: cli::CompareArgs, env: &dyn Fn(&str) -> Option<String>, out: &mut dyn Write) -> Result<u8> {
    let limits = args.fail_if_worse.iter().map(|s| compare::WorseLimit::parse(s)).collect::<Result<Vec<_>>>()?;
    if let Some(path) = &args.html {
        config::check_writable("--html", path)?;
    }
    // The store is resolved only when a run of it is named: report files
    // alone need no data directory.
    let store = || config::results::Store::resolve(args.store.clone(), env);
    let mut reports = Vec::new();
    for given in &args.reports {
        let path = std::path::Path::new(given);
        reports.push(if path.exists() || !looks_like_run_id(given) {
            compare::Loaded::from_file(path)?
        } else {
            compare::Loaded::from_kept(results::fetch(&store()?, given, "compare")?)?
        });
    }
    if let Some(n) = args.last {
        for kept in results::last(&store()?, n as usize)? {
            reports.push(compare::Loaded::from_kept(kept)?);
        }
    }
    compare::run(reports, &limits, args.html.as_deref(), args.output == cli::OutputFormat::Json, out)
}

/// An argument of `compare` that is no file and reads as the start of a
/// run_id (hex digits and dashes) names a run of the results store.
fn looks_like_run_id(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}

/// `dbload stop DIR`: stops a server that `--keep` left running and removes
/// its directory.
pub fn stop(dir: &std::path::Path, out: &mut dyn Write) -> Result<u8> {
    let freed = throwaway::stop_kept(dir)?;
    let freed = throwaway::human_size(freed);
    writeln!(out, "dbload: stopped the throwaway PostgreSQL in {} and removed it ({freed} freed)", dir.display())
        .context("writing to stdout")?;
    Ok(error::exit::OK)
}

/// `dbload results list|show`: reads the store the flags name.
pub fn results_command(
    args: cli::ResultsCommandArgs,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<u8> {
    use config::results::Store;
    let text = match args.action {
        cli::ResultsAction::List { store, limit } => results::list(&Store::resolve(store, env)?, limit)?,
        cli::ResultsAction::Show { id, store, histograms } => {
            results::show(&Store::resolve(store, env)?, &id, histograms)?
        }
    };
    out.write_all(text.as_bytes()).context("writing to stdout")?;
    Ok(error::exit::OK)
}

/// A started target: a throwaway server (kept alive by this value) or a
/// remote one; none for a dry run.
struct Started {
    local: Option<LocalPostgres>,
    target: Option<Target>,
    keep: bool,
}

impl Started {
    /// Starts a throwaway server if that is the choice. Call it before the
    /// runtime, on a thread that outlives the server (see `throwaway`).
    fn new(choice: &TargetChoice) -> Result<Started> {
        let local = match choice {
            TargetChoice::Local(opts) => {
                note_early_signals();
                Some(LocalPostgres::start(opts)?)
            }
            _ => None,
        };
        let target = match (choice, &local) {
            (_, Some(l)) => Some(Target::Pg { pg: Box::new(l.target()), engine: Some(dialect::Engine::Postgres) }),
            (TargetChoice::Remote(t, engine), None) => Some(Target::Pg { pg: t.clone(), engine: *engine }),
            (TargetChoice::Crate(c), None) => Some(Target::Crate((**c).clone())),
            _ => None,
        };
        let keep = matches!(choice, TargetChoice::Local(o) if o.keep);
        Ok(Started { local, target, keep })
    }

    fn url(&self) -> Option<String> {
        self.target.as_ref().map(Target::redacted)
    }

    fn throwaway(&self) -> bool {
        self.local.is_some()
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        if let (Some(l), true) = (&self.local, self.keep) {
            console::text(&l.keep_recipe());
        }
    }
}

/// A stop signal that came while the throwaway server was starting, before
/// the runtime was there to handle it.
static EARLY_SIGNAL: std::sync::LazyLock<Arc<AtomicBool>> = std::sync::LazyLock::new(Arc::default);

/// Until the runtime handles them, SIGINT, SIGTERM and SIGHUP are noted
/// rather than fatal: the throwaway server takes seconds to start (more on a
/// loaded machine), and a signal then would kill dbload with its data
/// directory left behind. The run then stops as soon as it starts.
fn note_early_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    for signal in [SIGINT, SIGTERM, SIGHUP] {
        // Fails only for a signal that cannot be caught; these three can.
        let _ = signal_hook::flag::register(signal, EARLY_SIGNAL.clone());
    }
}

/// Ctrl-C, `kill` (SIGTERM) and a closed terminal (SIGHUP) all stop the run
/// the same way: no new work, a report of what was done, and the throwaway
/// server removed, rather than a dead process and a server left behind.
async fn cancel_on_signals(cancel: CancellationToken) {
    use tokio::signal::unix::{signal, SignalKind};
    let handled = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()), signal(SignalKind::hangup()));
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) = handled else {
        let _ = tokio::signal::ctrl_c().await;
        return cancel.cancel();
    };
    // Handled from here on; one that came before is not lost.
    if !EARLY_SIGNAL.load(Ordering::SeqCst) {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
            _ = hup.recv() => {}
        }
    }
    cancel.cancel();
}

/// Runs `body` on a runtime where Ctrl-C, SIGTERM or SIGHUP cancel its
/// token: the run stops issuing work and still reports what it did. Its
/// workers run on `threads` threads of their own (default: one per CPU;
/// see [`run::cores`]), and so does the runtime.
fn with_threads<T>(threads: Option<usize>, body: impl AsyncFnOnce(CancellationToken) -> Result<T>) -> Result<T> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = threads {
        builder.worker_threads(n);
        run::cores::use_threads(n);
    }
    let runtime = builder.enable_all().build().context("starting the runtime")?;
    let cancel = CancellationToken::new();
    if EARLY_SIGNAL.load(Ordering::SeqCst) {
        // Before the body starts, so that it sees the signal from its first
        // step (a setup lets the run start and report; see `run::interrupt`).
        cancel.cancel();
    }
    runtime.block_on(async {
        let signal = tokio::spawn(cancel_on_signals(cancel.clone()));
        let result = body(cancel).await;
        signal.abort();
        result
    })
}

/// The start of a command that measures: its run_id and start time, taken
/// before anything connects, with the command line it was given (redacted;
/// an argument that is not UTF-8 shown lossily rather than a panic).
fn start() -> RunStart {
    let args = std::env::args_os().map(|a| a.to_string_lossy().into_owned());
    RunStart::now(redact::command_line(args))
}

/// Judges `--fail-if`, then writes the report, stamped with the run's
/// metadata (`run`), where `output` says, and keeps it in the results store
/// (the text report's last line says where), stdout last, where a reader
/// that has gone is no failure; returns its exit code and the
/// (last) run's report. A condition naming a field the report lacks is an
/// error, but only after the report was written, so the run is not lost.
/// `runs` holds each run's report, in order (one without `--runs`); with
/// `--runs` the last run's report is written with a `repeat` section beside
/// it, and `--fail-if` judges the runs' medians. `failed`: what kept a
/// later run from running; the report of the runs done says it, and it is
/// the result once the report is written and kept. `latencies`: every
/// run's histograms, which the store keeps beside the report.
fn emit<R: serde::Serialize>(
    output: &OutputConfig,
    mut runs: Vec<R>,
    failed: Option<anyhow::Error>,
    verdict: fn(&mut R) -> &mut report::Verdict,
    text: fn(&R) -> String,
    out: &mut dyn Write,
    (start, latencies): (RunStart, Latencies),
) -> Result<(u8, R)> {
    let mut report = runs.pop().context("no run was made")?;
    let repeat = if output.repeat.runs > 1 {
        let mut each = runs.iter().map(serde_json::to_value).collect::<Result<Vec<_>, _>>()?;
        each.push(serde_json::to_value(&report)?);
        let repeat = report::repeat::RepeatReport::new(output.repeat, &each);
        *verdict(&mut report) = repeat.verdict(verdict(&mut report), failed.as_ref());
        let judged = report::judge_json(&report::repeat::median_report(&each), verdict(&mut report), &output.fail_if);
        Some((repeat, judged))
    } else {
        None
    };
    let (repeat, judged) = match repeat {
        Some((r, judged)) => (Some(r), judged),
        None => (None, report::judge(&mut report, verdict, &output.fail_if)),
    };
    if judged.is_err() {
        // The report says the exit code the process will have (bad usage).
        let v = verdict(&mut report);
        (v.status, v.exit_code) = (report::Status::Failed, error::exit::USAGE);
    }
    let meta = report::meta::RunMeta { tags: output.results.tags.clone(), ..start.end() };
    let mut json = serde_json::to_value(Stamped { report: &report, run: &meta }).context("the JSON report")?;
    if let Some(r) = &repeat {
        json["repeat"] = serde_json::to_value(r)?;
    }
    // The files and the store first, stdout last: a stdout nobody reads
    // (`| head`) must cost neither the files nor the kept run. Each is
    // tried whatever became of the others; the first failure is the result.
    let files = [
        output.report_file.as_ref().map(|path| report::json::write_file(&json, path)),
        output.html_file.as_ref().map(|path| report::html::write_file(&json, path)),
    ];
    let kept = results::keep(&output.results, &results::Run { meta: &meta, report: &json, latencies: &latencies });
    let printed = match output.format {
        OutputFormat::Text => {
            let repeated = repeat.as_ref().map(report::repeat::render).unwrap_or_default();
            let shown = format!("{}{repeated}{}{}\n", text(&report), report::meta::render(&meta), kept.join("\n"));
            out.write_all(shown.as_bytes()).context("writing the report")
        }
        OutputFormat::Json => report::json::write(&json, out),
    };
    console::printed(out, printed)?;
    files.into_iter().flatten().collect::<Result<()>>()?;
    if let Some(e) = failed {
        return Err(e);
    }
    judged?;
    Ok((verdict(&mut report).exit_code, report))
}

/// Runs `once` as often as `--runs` says, on one runtime of `threads`
/// worker threads (default: one per CPU) where Ctrl-C, SIGTERM or SIGHUP
/// stop it (see [`run::repeat::repeat`]).
fn repeated<O>(
    output: &OutputConfig,
    threads: Option<usize>,
    once: impl AsyncFnMut(u32, CancellationToken) -> Result<O>,
) -> Result<run::repeat::Runs<O>> {
    with_threads(threads, async |cancel| run::repeat::repeat(output.repeat, output.quiet, &cancel, once).await)
}

/// Every run's measured histograms, each an interval at the run's own
/// start, for the results store, which keeps them beside the report.
fn run_latencies<O>(begun: &RunStart, runs: &run::repeat::Runs<O>, figures: fn(&O) -> &outcome::Figures) -> Latencies {
    let mut kept = Latencies::default();
    for (done, at) in runs.done.iter().zip(&runs.began) {
        kept.add_run(begun.since(*at), &[("", figures(done))]);
    }
    kept
}

/// `dbload ingest` with an injectable environment.
pub fn ingest(args: IngestArgs, env: &dyn Fn(&str) -> Option<String>, out: &mut dyn Write) -> Result<Outcome<Report>> {
    write_rows(IngestConfig::resolve(args, env)?, out)
}

/// `dbload insert-fake-data` with an injectable environment.
pub fn insert_fake_data(
    args: cli::InsertFakeDataArgs,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<Outcome<Report>> {
    write_rows(config::data::insert_fake_data(args, env)?, out)
}

/// `dbload insert-json` with an injectable environment (the input is read
/// from the files given, or stdin).
pub fn insert_json(
    args: cli::InsertJsonArgs,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<Outcome<Report>> {
    write_rows(config::data::insert_json(args, env)?, out)
}

/// An ingest run of any model, reported. A row of input that stopped the
/// run is said on stderr too, after the report (exit 2).
fn write_rows(mut cfg: IngestConfig, out: &mut dyn Write) -> Result<Outcome<Report>> {
    let mut begun = start();
    let started = Started::new(&cfg.target)?;
    let output = cfg.output.clone();
    // Instance 0 makes the table that the other instances write to.
    let table = cfg.table_action != config::TableAction::Existing;
    let outcomes = repeated(&output, None, async |run, cancel| {
        if run == 2 {
            cfg.fresh_table_each_run();
        }
        if run >= 2 {
            cfg.read_input_again()?;
        }
        let target = started.target.as_ref();
        let (outcome, instance) =
            together(&output, table, &cancel, async |gate| run::ingest(&cfg, target, cancel.clone(), gate).await)
                .await?;
        begun.instance = instance;
        Ok(outcome)
    })?;
    let reports = outcomes.done.iter().map(|o| Report::ingest(&cfg, o, started.url(), started.throwaway())).collect();
    let kept = run_latencies(&begun, &outcomes, |o| &o.figures);
    let (exit_code, report) =
        emit(&cfg.output, reports, outcomes.failed, |r| &mut r.verdict, report::text::render, out, (begun, kept))?;
    if let Some(e) = &report.input_error {
        console::line(format_args!("dbload: {e}"));
    }
    Ok(Outcome { exit_code, report })
}

/// `dbload timeit` and `dbload workload`, from their resolved configuration.
pub fn queries(cfg: QueryConfig, out: &mut dyn Write) -> Result<Outcome<QueryReport>> {
    let mut begun = start();
    let started = Started::new(&cfg.target)?;
    let target = started.target.clone().expect("query commands always have a target");
    let outcomes = repeated(&cfg.output, cfg.threads, async |_, cancel| {
        let queries = async |gate| run::queries::queries(&cfg, &target, cancel.clone(), gate).await;
        let (outcome, instance) = together(&cfg.output, false, &cancel, queries).await?;
        begun.instance = instance;
        Ok(outcome)
    })?;
    let reports = outcomes.done.iter().map(|o| QueryReport::new(&cfg, o, started.url(), started.throwaway())).collect();
    let text = if cfg.command == "timeit" { report::query::render_timeit } else { report::query::render_workload };
    let kept = run_latencies(&begun, &outcomes, |o| &o.figures);
    let (exit_code, report) =
        emit(&cfg.output, reports, outcomes.failed, |r| &mut r.verdict, text, out, (begun, kept))?;
    Ok(Outcome { exit_code, report })
}

/// `dbload http` with an injectable environment.
pub fn http(
    args: cli::HttpArgs,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<Outcome<report::http::HttpReport>> {
    let mut begun = start();
    let cfg = config::http::HttpConfig::resolve(args, env)?;
    let outcomes = repeated(&cfg.output, cfg.threads, async |_, cancel| {
        let http = async |gate| run::http::http(&cfg, cancel.clone(), gate).await;
        let (outcome, instance) = together(&cfg.output, false, &cancel, http).await?;
        begun.instance = instance;
        Ok(outcome)
    })?;
    let reports = outcomes.done.iter().map(|o| report::http::HttpReport::new(&cfg, o)).collect();
    let kept = run_latencies(&begun, &outcomes, |o| &o.figures);
    let (exit_code, report) =
        emit(&cfg.output, reports, outcomes.failed, |r| &mut r.verdict, report::http::render, out, (begun, kept))?;
    Ok(Outcome { exit_code, report })
}

/// `dbload export` with an injectable environment.
pub fn export(
    args: cli::ExportArgs,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<Outcome<TransferReport>> {
    let begun = start();
    let mut cfg = config::ExportConfig::resolve(args, env)?;
    let started = Started::new(&cfg.target)?;
    let target = started.target.clone().expect("export always has a target");
    let output = cfg.output.clone();
    let outcomes = repeated(&output, None, async |run, cancel| {
        if run == 2 {
            cfg.fresh_files_each_run();
        }
        run::export::export(&cfg, &target, cancel).await
    })?;
    let reports =
        outcomes.done.iter().map(|o| TransferReport::export(&cfg, o, started.url(), started.throwaway())).collect();
    let kept = run_latencies(&begun, &outcomes, |o| &o.figures);
    let (exit_code, report) =
        emit(&cfg.output, reports, outcomes.failed, |r| &mut r.verdict, report::transfer::render, out, (begun, kept))?;
    Ok(Outcome { exit_code, report })
}

/// `dbload insert-from-sql` with an injectable environment. Without
/// `--src-url` the query runs on the target.
pub fn insert_from_sql(
    args: cli::InsertFromSqlArgs,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<Outcome<TransferReport>> {
    let begun = start();
    let cfg = config::FromSqlConfig::resolve(args, env)?;
    let started = Started::new(&cfg.target)?;
    let source = cfg.source.as_ref().map(Started::new).transpose()?;
    let source = source.as_ref().unwrap_or(&started);
    let (src, dst) = (source.target.clone(), started.target.clone());
    let (src, dst) = (src.expect("a source is a server"), dst.expect("insert-from-sql always has a target"));
    let outcomes =
        repeated(&cfg.output, None, async |_, cancel| run::from_sql::insert_from_sql(&cfg, &src, &dst, cancel).await)?;
    let ends = ((source.url(), source.throwaway()), (started.url(), started.throwaway()));
    let reports =
        outcomes.done.iter().map(|o| TransferReport::from_sql(&cfg, o, ends.0.clone(), ends.1.clone())).collect();
    let kept = run_latencies(&begun, &outcomes, |o| &o.figures);
    let (exit_code, report) =
        emit(&cfg.output, reports, outcomes.failed, |r| &mut r.verdict, report::transfer::render, out, (begun, kept))?;
    Ok(Outcome { exit_code, report })
}

/// `dbload run FILE`: ingest and workloads at the same time.
pub fn mixed(mut cfg: MixedConfig, out: &mut dyn Write) -> Result<Outcome<MixedReport>> {
    let begun = start();
    let started = Started::new(&cfg.target)?;
    let target = started.target.clone().expect("mixed runs always have a target");
    let output = cfg.output.clone();
    let outcomes = repeated(&output, None, async |run, cancel| {
        if let (2, Some(ingest)) = (run, &mut cfg.ingest) {
            ingest.fresh_table_each_run();
        }
        run::mixed::mixed(&cfg, &target, cancel).await
    })?;
    let reports: Vec<MixedReport> =
        outcomes.done.iter().map(|o| MixedReport::new(&cfg, o, started.url(), started.throwaway())).collect();
    let mut latencies = Latencies::default();
    for ((report, outcome), at) in reports.iter().zip(&outcomes.done).zip(&outcomes.began) {
        latencies.add_run(begun.since(*at), &mixed_parts(report, outcome));
    }
    let (exit_code, report) = emit(
        &cfg.output,
        reports,
        outcomes.failed,
        |r| &mut r.verdict,
        report::mixed::render,
        out,
        (begun, latencies),
    )?;
    Ok(Outcome { exit_code, report })
}

/// A mixed run's measured parts, named as its report names them: its
/// ingest, and each workload under load.
fn mixed_parts<'a>(
    report: &'a MixedReport,
    outcome: &'a outcome::MixedOutcome,
) -> Vec<(&'a str, &'a outcome::Figures)> {
    let ingest = outcome.ingest.iter().map(|i| ("ingest", &i.figures));
    let names = report.workloads.iter().map(|w| w.name.as_str());
    ingest.chain(names.zip(&outcome.workloads).map(|(n, w)| (n, &w.under_load.figures))).collect()
}
