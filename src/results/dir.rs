//! The results directory: per run, `RUN_ID.json` (the report as `--output
//! json` prints it) and `RUN_ID.hlog` (its latency histograms). Run ids are
//! UUID v7, so the files sort by the time their runs started.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::Value as Json;

use super::{Filter, Run};
use crate::error::usage;
use crate::file_cap::{self, Cap};

/// Writes the run's two files into `dir` (made if missing); returns the
/// report's path. Each file is written whole under a temporary name and
/// then renamed, so a listing never reads half a report.
pub fn keep(dir: &Path, run: &Run, log: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create the directory {}", dir.display()))?;
    let json = serde_json::to_string_pretty(run.report).context("the JSON report")? + "\n";
    let id = &run.meta.run_id;
    write(&dir.join(format!("{id}.hlog")), log.as_bytes())?;
    let report = dir.join(format!("{id}.json"));
    write(&report, json.as_bytes())?;
    Ok(report)
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, bytes).with_context(|| format!("cannot write {}", partial.display()))?;
    std::fs::rename(&partial, path)
        .with_context(|| format!("cannot rename {} to {}", partial.display(), path.display()))
}

/// The newest `limit` runs of `dir` that `filter` lets through: their ids
/// and reports. A file that is not a readable report (cut short, edited by
/// hand) is passed over with a warning that names it, so that it hides
/// none of the good runs.
pub fn list(dir: &Path, filter: &Filter, limit: usize) -> Result<Vec<(String, Json)>> {
    let mut ids = run_ids(dir)?;
    ids.sort_unstable_by(|a, b| b.cmp(a));
    let readable = ids.into_iter().filter_map(|id| match kept_report(dir, &id) {
        Ok(report) => Some((id, report)),
        Err(e) => {
            crate::console::line(format_args!("dbload: warning: passed over {e:#}"));
            None
        }
    });
    Ok(readable.filter(|(_, report)| filter.matches(report)).take(limit).collect())
}

/// The id, report and histograms of the one run of `dir` whose id starts
/// with `prefix`; `who` (`results show`, `compare`) heads the error.
pub fn show(dir: &Path, prefix: &str, who: &str) -> Result<(String, String, String)> {
    let matching: Vec<String> = run_ids(dir)?.into_iter().filter(|id| id.starts_with(prefix)).collect();
    let id = match matching.as_slice() {
        [id] => id,
        [] => return Err(usage(format!("{who} {prefix}: no run with that id in {}", dir.display()))),
        _ => {
            return Err(usage(format!(
                "{who} {prefix}: {} runs in {} start so; give more of the id",
                matching.len(),
                dir.display()
            )))
        }
    };
    let path = dir.join(format!("{id}.json"));
    let report = file_cap::read_text(&path, &path.display().to_string(), KEPT)?;
    Ok((id.clone(), report, kept_log(dir, id)?))
}

/// The kept runs of `dir` that are instances of the distributed run
/// `run_id` (their reports' `run.instance.run_id`), by instance.
pub fn instances(dir: &Path, run_id: &str) -> Result<Vec<super::Kept>> {
    let mut kept = Vec::new();
    for id in run_ids(dir)? {
        let report = kept_report(dir, &id)?;
        if report.pointer("/run/instance/run_id").and_then(Json::as_str) == Some(run_id) {
            let log = kept_log(dir, &id)?;
            kept.push(super::Kept { run_id: id, report, log });
        }
    }
    kept.sort_by_key(|k| k.report.pointer("/run/instance/index").and_then(Json::as_u64));
    Ok(kept)
}

/// A kept run's files are reports, read under the reports' cap.
const KEPT: Cap = Cap::report("the kept run");

/// The report of the run `id` kept in `dir`.
fn kept_report(dir: &Path, id: &str) -> Result<Json> {
    let path = dir.join(format!("{id}.json"));
    let text = file_cap::read_text(&path, &path.display().to_string(), KEPT)?;
    serde_json::from_str(&text).with_context(|| format!("{}: not a JSON report", path.display()))
}

/// The histograms of the run `id` kept in `dir`: none when the file is
/// missing or unreadable (a run kept by an older dbload has none), but one
/// over the cap is refused like its report.
fn kept_log(dir: &Path, id: &str) -> Result<String> {
    let path = dir.join(format!("{id}.hlog"));
    match file_cap::text_of(&path, KEPT) {
        Ok(log) => Ok(log),
        Err(file_cap::Failure::OverCap) => Err(KEPT.refuse(&path.display().to_string(), file_cap::Failure::OverCap)),
        Err(_) => Ok(String::new()),
    }
}

/// The ids of the runs kept in `dir` (a missing directory keeps none).
fn run_ids(dir: &Path) -> Result<Vec<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(usage(format!("--results {}: cannot read the directory ({e})", dir.display()))),
    };
    let mut ids = Vec::new();
    for entry in entries {
        let name = entry.with_context(|| format!("reading {}", dir.display()))?.file_name();
        let name = name.to_string_lossy();
        if let Some(id) = name.strip_suffix(".json").filter(|id| uuid::Uuid::parse_str(id).is_ok()) {
            ids.push(id.to_string());
        }
    }
    Ok(ids)
}
