//! The report of a mixed run: the ingest part's report, each workload's
//! report under load, and (with `--baseline`) the same workload alone just
//! before and just after the mixed phase, with the table's row count at
//! each point and a side-by-side table of what the write load cost each query.

use std::fmt::Write as _;

use serde::Serialize;

use super::ingest::render as render_ingest;
use super::ingest::IngestReport;
use super::query::{render_workload, QueryReport};
use super::text::fail_if_lines;
use super::{Header, Status, Verdict};
use crate::config::MixedConfig;
use crate::format::group;
use crate::outcome::{MixedOutcome, QueryOutcome};

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct MixedReport {
    #[serde(flatten)]
    pub header: Header,
    #[serde(flatten)]
    pub verdict: Verdict,
    pub ingest: Option<IngestReport>,
    pub workloads: Vec<MixedWorkload>,
    /// With `--baseline`: the rows in the ingest's table when the mixed
    /// phase started (the `alone_before` runs saw this many) and ended (the
    /// `alone_after` runs saw this many).
    pub table_rows_before: Option<u64>,
    pub table_rows_after: Option<u64>,
    /// With `--baseline`: what was compared with what, in words.
    pub comparison: Option<String>,
    /// The parts whose open loop could not hold its `--rate` (the run fails).
    pub behind: Vec<String>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct MixedWorkload {
    pub name: String,
    pub under_load: QueryReport,
    /// The same workload alone just before the mixed phase (`--baseline`).
    pub alone_before: Option<QueryReport>,
    /// The same workload alone just after the mixed phase (`--baseline`).
    pub alone_after: Option<QueryReport>,
}

impl MixedReport {
    pub fn new(cfg: &MixedConfig, out: &MixedOutcome, url: Option<String>, throwaway: bool) -> MixedReport {
        let ingest = match (&cfg.ingest, &out.ingest) {
            (Some(c), Some(o)) => Some(IngestReport::ingest(c, o, url.clone(), throwaway)),
            _ => None,
        };
        let workloads: Vec<MixedWorkload> = cfg
            .workloads
            .iter()
            .zip(&out.workloads)
            .map(|((name, c), w)| {
                let report = |o: &QueryOutcome| QueryReport::new(c, o, url.clone(), throwaway);
                MixedWorkload {
                    name: name.clone(),
                    under_load: report(&w.under_load),
                    alone_before: w.alone_before.as_ref().map(report),
                    alone_after: w.alone_after.as_ref().map(report),
                }
            })
            .collect();
        let mut parts: Vec<(String, &Verdict, bool)> = Vec::new();
        if let Some(i) = &ingest {
            parts.push(("ingest".into(), &i.verdict, i.pacing.behind()));
        }
        for w in &workloads {
            let phases = [("under load", Some(&w.under_load)), ("alone before", w.alone_before.as_ref())];
            for (phase, r) in phases.into_iter().chain([("alone after", w.alone_after.as_ref())]) {
                if let Some(r) = r {
                    parts.push((format!("workload {} {phase}", w.name), &r.verdict, r.pacing.behind()));
                }
            }
        }
        let interrupted = parts.iter().any(|(_, v, _)| v.status == Status::Interrupted);
        let failed = parts.iter().any(|(_, v, _)| v.status == Status::Failed);
        let stopped = parts.iter().find_map(|(_, v, _)| v.stopped.clone());
        let behind = parts.iter().filter(|(_, _, behind)| *behind).map(|(name, _, _)| name.clone()).collect();
        let (before, after) = out.table_rows.unzip();
        let comparison = cfg.baseline.then(|| comparison(cfg, out.table_rows));
        MixedReport {
            header: Header::new("run"),
            verdict: Verdict::new(interrupted, failed).stopped(stopped),
            ingest,
            workloads,
            table_rows_before: before,
            table_rows_after: after,
            comparison,
            behind,
        }
    }
}

/// What `--baseline` compared, in words.
fn comparison(cfg: &MixedConfig, rows: Option<(u64, u64)>) -> String {
    match (&cfg.ingest, rows) {
        (Some(i), Some((before, after))) => format!(
            "each workload alone on {} at {} rows (just before), under the ingest load while it grew from {} to {} \
             rows, and alone again at {} rows (just after)",
            i.table,
            group(before),
            group(before),
            group(after),
            group(after)
        ),
        _ => "each workload alone just before and just after the mixed phase, and beside the other workloads in it"
            .into(),
    }
}

pub fn render(r: &MixedReport) -> String {
    let mut out = String::new();
    if let Some(i) = &r.ingest {
        out.push_str("== Ingest, while the workloads ran ==\n");
        out.push_str(&render_ingest(i));
        out.push('\n');
    }
    for w in &r.workloads {
        let _ = writeln!(out, "== Workload {}, under the ingest load ==", w.name);
        out.push_str(&render_workload(&w.under_load));
        out.push('\n');
        if let (Some(before), Some(after)) = (&w.alone_before, &w.alone_after) {
            let _ = writeln!(out, "== Workload {}: alone before, under load, alone after ==", w.name);
            side_by_side(&mut out, before, &w.under_load, after);
            out.push('\n');
        }
    }
    if let Some(c) = &r.comparison {
        let _ = writeln!(out, "Compared:   {c}");
    }
    for part in &r.behind {
        let _ = writeln!(out, "WARNING:    {part} could not hold its --rate (see its section): the run fails");
    }
    fail_if_lines(&mut out, &r.verdict);
    out
}

/// One line per query: p50, p99 and queries/s alone before, under load, alone after.
fn side_by_side(out: &mut String, before: &QueryReport, loaded: &QueryReport, after: &QueryReport) {
    let _ = writeln!(
        out,
        "{:<12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9}",
        "query",
        "p50 before",
        "p50 load",
        "p50 after",
        "p99 before",
        "p99 load",
        "p99 after",
        "qps bef.",
        "qps load",
        "qps aft."
    );
    let queries = before.queries.iter().zip(&loaded.queries).zip(&after.queries);
    for ((b, l), a) in queries {
        let p = |q: &super::query::QueryEntry, f: fn(&crate::stats::LatencySummary) -> f64| {
            q.latency_ms.as_ref().map_or("-".into(), |s| format!("{:.3}", f(s)))
        };
        let (p50, p99) = (|s: &crate::stats::LatencySummary| s.p50, |s: &crate::stats::LatencySummary| s.p99);
        let _ = writeln!(
            out,
            "{:<12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9.1} {:>9.1} {:>9.1}",
            b.name,
            p(b, p50),
            p(l, p50),
            p(a, p50),
            p(b, p99),
            p(l, p99),
            p(a, p99),
            b.qps,
            l.qps,
            a.qps
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::WorkloadOutcome;
    use crate::report::fixtures;

    #[test]
    fn mixed_text() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mixed.yml");
        let yaml = "duration: 1s\ningest:\n  workers: 2\n  batch_size: 1000\nworkloads:\n  - name: reads\n    \
                    concurrency: 2\n    queries:\n      - name: recent\n        query: select 1\n        ratio: 1\n";
        std::fs::write(&file, yaml).unwrap();
        let argv = ["dbload", "run", file.to_str().unwrap(), "--url", "postgres://bench:secret@db:5432/bench"];
        let crate::cli::Command::Run(a) = fixtures::command(&[&argv[..], &["--baseline"]].concat()) else {
            unreachable!("run")
        };
        let cfg = MixedConfig::resolve(a, &|_| None).unwrap();
        let queried = || fixtures::queried(&cfg.workloads[0].1);
        let out = MixedOutcome {
            ingest: Some(fixtures::ingested(None)),
            workloads: vec![WorkloadOutcome {
                under_load: queried(),
                alone_before: Some(queried()),
                alone_after: Some(queried()),
            }],
            table_rows: Some((10_000, 20_000)),
        };
        insta::assert_snapshot!(render(&MixedReport::new(&cfg, &out, Some(fixtures::URL.into()), false)));
    }
}
