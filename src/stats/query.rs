//! What a query run keeps of a finished phase (a timeit statement, or a
//! workload's mix): per query, the figures its report prints, and no
//! histogram. The phase's recorders are merged into the run's one total and
//! dropped as the phase ends: timeit runs each statement as a phase of its
//! own, and keeping every phase's recorders (six histograms of 16 KiB or
//! more each) until the report cost ~100 KiB per distinct statement
//! (2,000 statements: 238 MiB peak, release build); a summary costs ~1 KiB
//! with the statement's own text and report entry (2,000: 12 MiB).

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;

use super::hist::{new_histogram, record_us};
use super::recorder::{ErrorClass, Recorder};
use super::LatencySummary;

/// One command of a script (a SQL statement or a `\` command) as the
/// executor that runs it records it (pgbench's `-r`): the latency of each
/// measured execution that succeeded, how many measured executions failed,
/// and how many failed and had their run tried again (`--max-tries`). The
/// script run as a whole is the loop's operation, recorded as any other.
#[derive(Debug, Clone)]
pub struct StatementRecord {
    pub latency: Histogram<u64>,
    pub failed: u64,
    pub retries: u64,
}

impl Default for StatementRecord {
    fn default() -> Self {
        StatementRecord { latency: new_histogram(), failed: 0, retries: 0 }
    }
}

impl StatementRecord {
    pub fn ok(&mut self, took: Duration) {
        record_us(&mut self.latency, took.as_micros().try_into().unwrap_or(u64::MAX));
    }

    pub fn merge(&mut self, other: &StatementRecord) {
        self.latency.add(&other.latency).expect("auto-resizing histograms");
        self.failed += other.failed;
        self.retries += other.retries;
    }
}

/// pgbench's `--max-tries` accounting: the script runs that needed more than
/// one try, and the tries beyond the first, over all of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retries {
    pub retried: u64,
    pub retries: u64,
}

impl Retries {
    /// One measured run that took `tries` tries (the last one its outcome).
    pub fn ran(&mut self, tries: u32) {
        if tries > 1 {
            self.retried += 1;
            self.retries += u64::from(tries - 1);
        }
    }

    pub fn merge(&mut self, other: Retries) {
        self.retried += other.retried;
        self.retries += other.retries;
    }
}

/// pgbench's `-C`: the connections made for each run, and the time they took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Connects {
    pub made: u64,
    pub total: Duration,
}

impl Connects {
    pub fn merge(&mut self, other: Connects) {
        self.made += other.made;
        self.total += other.total;
    }

    /// pgbench's "average connection time"; none when none was made.
    pub fn average_ms(&self) -> Option<f64> {
        (self.made > 0).then(|| self.total.as_secs_f64() * 1000.0 / self.made as f64)
    }
}

/// A script's statement in the report: its workers' records merged.
#[derive(Debug, Clone, PartialEq)]
pub struct StatementSummary {
    pub ok: u64,
    pub failed: u64,
    pub retries: u64,
    pub latency: Option<LatencySummary>,
}

impl StatementSummary {
    pub fn of(r: &StatementRecord) -> StatementSummary {
        StatementSummary {
            ok: r.latency.len(),
            failed: r.failed,
            retries: r.retries,
            latency: LatencySummary::of(&r.latency),
        }
    }
}

/// One query of a finished phase, its workers merged.
#[derive(Debug, Clone, PartialEq)]
pub struct QuerySummary {
    /// Executions that succeeded in the measured window.
    pub ok: u64,
    /// Executions that failed in the measured window.
    pub failed: u64,
    /// Executions that failed during the warm-up (reported among the errors).
    pub warmup_failed: u64,
    /// Of the measured executions; `None` when none succeeded.
    pub latency: Option<LatencySummary>,
    /// Failures by class, warm-up included.
    pub errors: BTreeMap<String, ErrorClass>,
    /// Each second of the phase (warm-up included), the mean latency of
    /// its executions that completed then; `None` where none did. The
    /// HTML report draws a line of it per query.
    pub timeline_mean_ms: Vec<Option<f64>>,
}

impl QuerySummary {
    pub fn of(rec: &Recorder) -> QuerySummary {
        QuerySummary {
            ok: rec.measured.batches,
            failed: rec.measured.failed_batches,
            warmup_failed: rec.warmup.failed_batches,
            latency: LatencySummary::of(&rec.measured.latency),
            errors: rec.errors.clone(),
            timeline_mean_ms: rec.timeline.iter().map(|s| s.latency_mean_ms()).collect(),
        }
    }

    /// Executions attempted in the measured window.
    pub fn attempted(&self) -> u64 {
        self.ok + self.failed
    }
}

/// A finished phase: one summary per query, in the phase's order.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseSummary {
    pub queries: Vec<QuerySummary>,
    /// The measured window of all its queries together: from the first
    /// (intended) start to the last end.
    pub window: Duration,
}

impl PhaseSummary {
    /// Summarises `recorders` (one per query, in order) and merges them
    /// into `total`, which is all the run keeps of them.
    pub fn of(recorders: &[Recorder], total: &mut Recorder) -> PhaseSummary {
        let first = recorders.iter().filter_map(|r| r.measured.first_start).min();
        let last = recorders.iter().filter_map(|r| r.measured.last_end).max();
        recorders.iter().for_each(|r| total.merge(r));
        PhaseSummary {
            queries: recorders.iter().map(QuerySummary::of).collect(),
            window: match (first, last) {
                (Some(a), Some(b)) => b.saturating_sub(a),
                _ => Duration::ZERO,
            },
        }
    }

    /// Executions attempted in the measured window, all queries together.
    pub fn attempted(&self) -> u64 {
        self.queries.iter().map(QuerySummary::attempted).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::recorder::Timing;

    fn at(start_ms: u64, end_ms: u64) -> Timing {
        let ms = Duration::from_millis;
        Timing { intended: ms(start_ms), started: ms(start_ms), ended: ms(end_ms), stage: None, retries: 0 }
    }

    #[test]
    fn a_phase_is_summarised_per_query_and_merged_into_the_total() {
        let mut a = Recorder::default();
        a.ok(true, 1, at(0, 5));
        a.failed(true, 0, 1, at(5, 6), "57014".into(), "canceled".into());
        a.ok(false, 1, at(100, 101));
        a.ok(false, 1, at(110, 112));
        a.failed(false, 0, 1, at(120, 121), "57014".into(), "canceled again".into());
        let mut b = Recorder::default();
        b.ok(false, 1, at(90, 250));
        let mut total = Recorder::default();
        total.ok(false, 1, at(0, 1)); // an earlier phase

        let s = PhaseSummary::of(&[a, b], &mut total);

        let q = &s.queries[0];
        assert_eq!((q.ok, q.failed, q.warmup_failed, q.attempted()), (2, 1, 1, 3));
        assert_eq!(q.errors["57014"], ErrorClass { count: 2, example: "canceled".into() });
        let l = q.latency.as_ref().expect("two measured executions");
        assert_eq!((l.count, l.min, l.max), (2, 1.0, 2.0));
        assert_eq!(s.queries[1].latency.as_ref().map(|l| l.count), Some(1));
        let mean = q.timeline_mean_ms.iter().map(|m| m.map(|ms| (ms * 1e3).round())).collect::<Vec<_>>();
        assert_eq!(mean, [Some(2667.0)], "second 0: 5, 1 and 2 ms (warm-up included); failures have no latency");
        assert_eq!(s.queries[1].timeline_mean_ms, [Some(160.0)]);
        assert_eq!(s.attempted(), 4);
        // From b's start (90 ms) to its end (250 ms): the queries' windows together.
        assert_eq!(s.window, Duration::from_millis(160));
        assert_eq!((total.measured.batches, total.measured.failed_batches, total.warmup.batches), (4, 1, 1));
        assert_eq!(total.errors["57014"].count, 2);
    }

    #[test]
    fn a_phase_without_measured_executions_has_no_window() {
        let mut warmup_only = Recorder::default();
        warmup_only.ok(true, 1, at(0, 5));
        let s = PhaseSummary::of(&[warmup_only], &mut Recorder::default());
        assert_eq!((s.window, s.attempted(), s.queries[0].latency.clone()), (Duration::ZERO, 0, None));
    }
}
