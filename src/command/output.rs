//! What every measuring command does around its runs: the runtime and
//! `--runs` ([`repeated`]), and the report written out ([`emit`]): judged
//! by `--fail-if`, stamped with the run's metadata, written to its files
//! and kept in the results store first, and printed on stdout last, where
//! a reader that has gone (`| head`) is no failure (see [`crate::console`]).

use std::io::Write;
use std::time::Instant;

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use crate::cli::OutputFormat;
use crate::config::OutputConfig;
use crate::outcome::Figures;
use crate::report::meta::{RunStart, Stamped};
use crate::results::KeptHistograms;
use crate::run::metrics::{Endpoint, Labels};
use crate::run::signals::with_threads;
use crate::{console, error, redact, report, results, run};

/// The start of a command that measures: its run_id and start time, taken
/// before anything connects, with the command line it was given (redacted;
/// an argument that is not UTF-8 shown lossily rather than a panic).
pub(super) fn start() -> RunStart {
    let args = std::env::args_os().map(|a| a.to_string_lossy().into_owned());
    RunStart::now(redact::command_line(args))
}

/// `--metrics-listen`'s endpoint, bound before anything connects (a port
/// taken is bad usage), labelled with the command `name`, its run's id (a
/// distributed run's shared `--run-id`), its instance and its sweep point.
pub(super) fn metrics_endpoint(output: &OutputConfig, name: &str, begun: &RunStart) -> Result<Option<Endpoint>> {
    let Some(listen) = &output.metrics else { return Ok(None) };
    let labels = Labels {
        command: name.to_string(),
        run_id: output.instance.as_ref().map_or_else(|| begun.run_id(), |i| i.run_id.clone()),
        instance: output.instance.as_ref().map_or(0, |i| i.index),
        point: output.results.tags.get("point").cloned(),
    };
    Endpoint::bind(listen, labels).map(Some)
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
pub(super) fn emit<R: serde::Serialize>(
    output: &OutputConfig,
    mut runs: Vec<R>,
    failed: Option<anyhow::Error>,
    verdict: fn(&mut R) -> &mut report::Verdict,
    text: fn(&R) -> String,
    out: &mut dyn Write,
    (start, latencies): (RunStart, KeptHistograms),
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
/// stop it (see [`crate::run::repeat::repeat`]).
pub(super) fn repeated<O>(
    output: &OutputConfig,
    threads: Option<usize>,
    once: impl AsyncFnMut(u32, CancellationToken) -> Result<O>,
) -> Result<run::repeat::Runs<O>> {
    with_threads(threads, async |cancel| run::repeat::repeat(output.repeat, output.quiet, &cancel, once).await)
}

/// Every run's measured histograms, each an interval at the run's own
/// start (`began`), by the parts of the run (`parts`, in the order of the
/// runs), for the results store, which keeps them beside the report.
pub(super) fn kept_histograms<'a>(
    begun: &RunStart,
    began: &[Instant],
    parts: impl Iterator<Item = Vec<(&'a str, &'a Figures)>>,
) -> KeptHistograms {
    let mut kept = KeptHistograms::default();
    for (parts, at) in parts.zip(began) {
        kept.add_run(begun.since(*at), &parts);
    }
    kept
}
