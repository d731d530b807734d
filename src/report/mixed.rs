//! The report of a mixed run: the ingest part's report, each workload's
//! report under load, and (with `--baseline`) the same workload alone, with
//! a side-by-side table of what the write load cost each query.

use std::fmt::Write as _;

use serde::Serialize;

use super::query::{render_workload, QueryReport};
use super::text::{fail_if_lines, render as render_ingest};
use super::{Header, Report, Status, Verdict};
use crate::config::MixedConfig;
use crate::run::mixed::MixedOutcome;

#[derive(Debug, Clone, Serialize)]
pub struct MixedReport {
    #[serde(flatten)]
    pub header: Header,
    #[serde(flatten)]
    pub verdict: Verdict,
    pub ingest: Option<Report>,
    pub workloads: Vec<MixedWorkload>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MixedWorkload {
    pub name: String,
    pub under_load: QueryReport,
    /// The same workload alone (`--baseline`).
    pub alone: Option<QueryReport>,
}

impl MixedReport {
    pub fn new(cfg: &MixedConfig, out: &MixedOutcome, url: Option<String>, throwaway: bool) -> MixedReport {
        let ingest = match (&cfg.ingest, &out.ingest) {
            (Some(c), Some(o)) => Some(Report::ingest(c, o, url.clone(), throwaway)),
            _ => None,
        };
        let workloads: Vec<MixedWorkload> = cfg
            .workloads
            .iter()
            .zip(&out.workloads)
            .map(|((name, c), (loaded, alone))| MixedWorkload {
                name: name.clone(),
                under_load: QueryReport::new(c, loaded, url.clone(), throwaway),
                alone: alone.as_ref().map(|a| QueryReport::new(c, a, url.clone(), throwaway)),
            })
            .collect();
        let verdicts = ingest.iter().map(|r| &r.verdict).chain(
            workloads
                .iter()
                .flat_map(|w| std::iter::once(&w.under_load.verdict).chain(w.alone.as_ref().map(|a| &a.verdict))),
        );
        let (mut interrupted, mut failed, mut stopped) = (false, false, None);
        for v in verdicts {
            interrupted |= v.status == Status::Interrupted;
            failed |= v.status == Status::Failed;
            stopped = stopped.or(v.stopped.clone());
        }
        let verdict = Verdict::new(interrupted, failed).stopped(stopped);
        MixedReport { header: Header::new("run"), verdict, ingest, workloads }
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
        if let Some(alone) = &w.alone {
            let _ = writeln!(out, "== Workload {}: alone vs under load ==", w.name);
            let _ = writeln!(
                out,
                "{:<12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
                "query", "p50 alone", "p50 load", "p99 alone", "p99 load", "qps alone", "qps load"
            );
            for (a, l) in alone.queries.iter().zip(&w.under_load.queries) {
                let p = |q: &super::query::QueryEntry, f: fn(&crate::stats::LatencySummary) -> f64| {
                    q.latency_ms.as_ref().map_or("-".into(), |s| format!("{:.3}", f(s)))
                };
                let _ = writeln!(
                    out,
                    "{:<12} {:>10} {:>10} {:>10} {:>10} {:>10.1} {:>10.1}",
                    a.name,
                    p(a, |s| s.p50),
                    p(l, |s| s.p50),
                    p(a, |s| s.p99),
                    p(l, |s| s.p99),
                    a.qps,
                    l.qps
                );
            }
            out.push('\n');
        }
    }
    fail_if_lines(&mut out, &r.verdict);
    out
}
