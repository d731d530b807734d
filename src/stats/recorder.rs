//! Per-worker recording: latency histograms, counters, errors by class and a
//! per-second timeline. Each worker owns one; nothing is shared on the hot
//! path but the [`Live`] counters that the progress bar reads.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use hdrhistogram::Histogram;

use super::coarse::Coarse;
use super::hist::{micros, new_histogram, record_us};
use super::interval::Interval;
use super::tally::Totals;

/// Counters the progress bar reads while the run goes on.
#[derive(Debug, Default)]
pub struct Live {
    pub rows: AtomicU64,
    pub failed: AtomicU64,
    /// The latencies of the progress interval under way: set before the
    /// workers start when progress lines are printed (`-P`), else nothing
    /// is recorded there.
    pub interval: OnceLock<Interval>,
    /// The run's totals for `--metrics-listen`: set before the workers
    /// start when it is given, else nothing is counted there.
    pub tally: OnceLock<Totals>,
}

impl Live {
    /// The interval slot of the worker that calls this, as it starts.
    pub fn join(&self) -> usize {
        self.interval.get().map_or(0, Interval::join)
    }

    /// A successful operation of the worker on `slot`, for progress lines.
    pub fn succeeded(&self, slot: usize, t: &Timing) {
        if let Some(interval) = self.interval.get() {
            interval.record(slot, t.latency(), t.lag());
        }
    }

    pub fn rows(&self) -> u64 {
        self.rows.load(Ordering::Relaxed)
    }
    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }
}

/// One second of the run, counted from its start (warm-up included).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Second {
    pub rows: u64,
    pub batches: u64,
    pub errors: u64,
    /// Sum of batch latencies in µs (for the mean when merged).
    #[serde(skip)]
    pub latency_sum_us: u64,
    #[serde(skip)]
    pub latency_max_us: u64,
    /// The second's latencies, for its p50 and p99.
    #[serde(skip)]
    pub latency: Coarse,
}

impl Second {
    /// The mean latency of the operations that completed in this second;
    /// `None` when none did (no figure is better than a zero).
    pub fn latency_mean_ms(&self) -> Option<f64> {
        (self.batches > 0).then(|| self.latency_sum_us as f64 / self.batches as f64 / 1000.0)
    }

    pub fn latency_max_ms(&self) -> Option<f64> {
        (self.batches > 0).then(|| self.latency_max_us as f64 / 1000.0)
    }

    /// The latency at quantile `q` of the operations that completed in
    /// this second, to within its bucket (see [`Coarse`]); `None` when none did.
    pub fn latency_quantile_ms(&self, q: f64) -> Option<f64> {
        self.latency.quantile(q).map(|us| us / 1000.0)
    }
}

/// A class of failed operation (SQLSTATE, connection lost, ...) with one
/// example message so the report can say what went wrong.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ErrorClass {
    pub count: u64,
    pub example: String,
}

/// A worker without a connection: from the error that lost it to the
/// moment it was connected again (or gave up, when the run ended first).
#[derive(Debug, Clone, PartialEq)]
pub struct Outage {
    /// Since the start of the run.
    pub start: Duration,
    pub end: Duration,
    /// Whether the worker was connected again before the run ended.
    pub reconnected: bool,
    /// The error that began it: class and message.
    pub error: String,
    /// Connection attempts made, the successful one included.
    pub attempts: u32,
}

/// What became of a batch that was in flight when its connection was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// Its rows were found in the table: counted as written.
    Written,
    /// None of its rows were in the table: sent again on the new connection.
    Resent,
    /// None of its rows were in the table, and the run ended before it could
    /// be sent again: counted as failed.
    NotWritten,
    /// The table has no key to look its rows up by (or the check failed):
    /// its commit may or may not have happened.
    InDoubt,
}

/// A batch in flight when its connection was lost.
#[derive(Debug, Clone, PartialEq)]
pub struct InDoubtBatch {
    /// When it was sent, since the start of the run.
    pub at: Duration,
    pub rows: u64,
    pub resolution: Resolution,
}

/// Merges the outages of all workers into the windows during which at
/// least one worker had no connection: overlapping outages are one window,
/// begun by the error of its first. Returns (start, end, error, workers).
pub fn outage_windows(outages: &[Outage]) -> Vec<(Duration, Duration, String, usize)> {
    let mut sorted: Vec<&Outage> = outages.iter().collect();
    sorted.sort_by_key(|o| o.start);
    let mut windows: Vec<(Duration, Duration, String, usize)> = Vec::new();
    for o in sorted {
        match windows.last_mut() {
            Some(w) if o.start <= w.1 => {
                w.1 = w.1.max(o.end);
                w.3 += 1;
            }
            _ => windows.push((o.start, o.end, o.error.clone(), 1)),
        }
    }
    windows
}

/// What one batch cost: when it was meant to start, when it did, when it ended.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Since the start of the run.
    pub intended: Duration,
    pub started: Duration,
    pub ended: Duration,
    /// With `--stages` or `--rate-stages`: the stage (0-based) it started in.
    pub stage: Option<usize>,
    /// How many times it was run again before it ended ([`Operation::retries`]).
    ///
    /// [`Operation::retries`]: crate::op::Operation::retries
    pub retries: u32,
}

impl Timing {
    /// Response time: from the intended start, so stalls are not hidden
    /// (coordinated omission); without pacing intended == started.
    pub fn latency(&self) -> Duration {
        self.ended.saturating_sub(self.intended.min(self.started))
    }
    pub fn service(&self) -> Duration {
        self.ended.saturating_sub(self.started)
    }
    pub fn lag(&self) -> Duration {
        self.started.saturating_sub(self.intended)
    }
}

/// The statistics of one phase (warm-up or measured).
#[derive(Debug, Clone)]
pub struct Phase {
    pub latency: Histogram<u64>,
    pub service: Histogram<u64>,
    /// How late each operation started against its schedule, failed ones
    /// too: the wait comes before the outcome (`dbload http` shows it as
    /// `http_req_blocked`, which read "-" when every check failed).
    pub lag: Histogram<u64>,
    pub rows: u64,
    pub batches: u64,
    pub failed_batches: u64,
    pub failed_rows: u64,
    /// Rows of batches whose connection was lost before they were answered
    /// and which no check could settle (see [`Resolution::InDoubt`]).
    pub in_doubt_rows: u64,
    /// Operations skipped, not sent: their slot passed more than pgbench's
    /// `-L` before they could start (under `--rate`).
    pub skipped: u64,
    /// Earliest start and latest end of a batch in this phase.
    pub first_start: Option<Duration>,
    pub last_end: Option<Duration>,
    /// Latest (actual) start of a batch: with `first_start`, the window
    /// over which an open loop's operations arrived, which a slow last
    /// answer does not stretch.
    pub last_start: Option<Duration>,
}

impl Default for Phase {
    fn default() -> Self {
        Phase {
            latency: new_histogram(),
            service: new_histogram(),
            lag: new_histogram(),
            rows: 0,
            batches: 0,
            failed_batches: 0,
            failed_rows: 0,
            in_doubt_rows: 0,
            skipped: 0,
            first_start: None,
            last_end: None,
            last_start: None,
        }
    }
}

impl Phase {
    /// An operation acknowledged with `rows` rows.
    fn ok(&mut self, rows: u64, t: &Timing) {
        record_us(&mut self.latency, micros(t.latency()));
        record_us(&mut self.service, micros(t.service()));
        record_us(&mut self.lag, micros(t.lag()));
        self.rows += rows;
        self.batches += 1;
        self.span(t);
    }

    /// An operation that failed with `rows` rows unwritten, `acked` written.
    fn failed(&mut self, acked: u64, rows: u64, t: &Timing) {
        record_us(&mut self.lag, micros(t.lag()));
        self.failed_batches += 1;
        self.failed_rows += rows;
        self.rows += acked;
        self.span(t);
    }

    /// An operation lost with its connection that nothing could settle.
    fn in_doubt(&mut self, rows: u64, t: &Timing) {
        self.in_doubt_rows += rows;
        self.span(t);
    }

    fn span(&mut self, t: &Timing) {
        let start = t.intended.min(t.started);
        self.first_start = Some(self.first_start.map_or(start, |s| s.min(start)));
        self.last_end = Some(self.last_end.map_or(t.ended, |e| e.max(t.ended)));
        self.last_start = self.last_start.max(Some(t.started));
    }

    fn merge(&mut self, o: &Phase) {
        self.latency.add(&o.latency).expect("same bounds");
        self.service.add(&o.service).expect("same bounds");
        self.lag.add(&o.lag).expect("same bounds");
        self.rows += o.rows;
        self.batches += o.batches;
        self.failed_batches += o.failed_batches;
        self.failed_rows += o.failed_rows;
        self.in_doubt_rows += o.in_doubt_rows;
        self.skipped += o.skipped;
        self.first_start = match (self.first_start, o.first_start) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last_end = self.last_end.max(o.last_end);
        self.last_start = self.last_start.max(o.last_start);
    }
}

#[derive(Debug, Clone, Default)]
pub struct Recorder {
    pub warmup: Phase,
    pub measured: Phase,
    pub errors: BTreeMap<String, ErrorClass>,
    pub timeline: Vec<Second>,
    /// Each time a worker lost its connection, in the order they began.
    pub outages: Vec<Outage>,
    /// The batches in flight when a connection was lost, and what became of them.
    pub in_doubt: Vec<InDoubtBatch>,
    /// With stages: the measured operations of each stage, by the stage
    /// they started in (empty without stages).
    pub stages: Vec<Phase>,
}

impl Recorder {
    fn second(&mut self, at: Duration) -> &mut Second {
        let s = at.as_secs() as usize;
        if self.timeline.len() <= s {
            self.timeline.resize(s + 1, Second::default());
        }
        &mut self.timeline[s]
    }

    /// The phase of the stage an operation started in, when it has one
    /// and is measured (warm-up is kept out of the stages as out of the run).
    fn stage(&mut self, warmup: bool, t: &Timing) -> Option<&mut Phase> {
        let s = t.stage.filter(|_| !warmup)?;
        if self.stages.len() <= s {
            self.stages.resize(s + 1, Phase::default());
        }
        Some(&mut self.stages[s])
    }

    /// A batch the database acknowledged with `rows` rows.
    pub fn ok(&mut self, warmup: bool, rows: u64, t: Timing) {
        if let Some(stage) = self.stage(warmup, &t) {
            stage.ok(rows, &t);
        }
        let phase = if warmup { &mut self.warmup } else { &mut self.measured };
        phase.ok(rows, &t);
        let latency = micros(t.latency());
        let sec = self.second(t.ended);
        sec.rows += rows;
        sec.batches += 1;
        sec.latency_sum_us += latency;
        sec.latency_max_us = sec.latency_max_us.max(latency);
        sec.latency.record(latency);
    }

    /// A batch that failed: `rows` of its rows are not written, `acked` of
    /// them were (a bulk request fails row by row).
    pub fn failed(&mut self, warmup: bool, acked: u64, rows: u64, t: Timing, class: String, message: String) {
        if let Some(stage) = self.stage(warmup, &t) {
            stage.failed(acked, rows, &t);
        }
        let phase = if warmup { &mut self.warmup } else { &mut self.measured };
        phase.failed(acked, rows, &t);
        let sec = self.second(t.ended);
        sec.errors += 1;
        sec.rows += acked;
        self.errors.entry(class).and_modify(|e| e.count += 1).or_insert(ErrorClass { count: 1, example: message });
    }

    /// The measured window runs at least to `end`: an open loop's
    /// operations were due over the whole run, the time after the last one
    /// included, so its rate is counted over the run to its deadline (not to
    /// its last operation's end: N operations over (N-1)/R would read as
    /// R·N/(N-1)). Nothing measured, nothing to extend.
    pub fn ran_until(&mut self, end: Duration) {
        let m = &mut self.measured;
        if m.first_start.is_some() {
            m.last_end = Some(m.last_end.map_or(end, |e| e.max(end)));
        }
    }

    /// A batch whose connection was lost before it was answered and which
    /// nothing could settle: neither written nor failed, it is counted apart.
    /// An operation skipped, not sent (pgbench's `-L` with `-R`).
    pub fn skipped(&mut self, warmup: bool) {
        let phase = if warmup { &mut self.warmup } else { &mut self.measured };
        phase.skipped += 1;
    }

    pub fn in_doubt(&mut self, warmup: bool, rows: u64, t: Timing) {
        if let Some(stage) = self.stage(warmup, &t) {
            stage.in_doubt(rows, &t);
        }
        let phase = if warmup { &mut self.warmup } else { &mut self.measured };
        phase.in_doubt(rows, &t);
        self.in_doubt.push(InDoubtBatch { at: t.started, rows, resolution: Resolution::InDoubt });
    }

    pub fn merge(&mut self, o: &Recorder) {
        self.outages.extend(o.outages.iter().cloned());
        self.outages.sort_by_key(|o| o.start);
        self.in_doubt.extend(o.in_doubt.iter().cloned());
        self.in_doubt.sort_by_key(|b| b.at);
        self.warmup.merge(&o.warmup);
        self.measured.merge(&o.measured);
        if self.stages.len() < o.stages.len() {
            self.stages.resize(o.stages.len(), Phase::default());
        }
        for (a, b) in self.stages.iter_mut().zip(&o.stages) {
            a.merge(b);
        }
        for (k, v) in &o.errors {
            self.errors.entry(k.clone()).and_modify(|e| e.count += v.count).or_insert_with(|| v.clone());
        }
        if self.timeline.len() < o.timeline.len() {
            self.timeline.resize(o.timeline.len(), Second::default());
        }
        for (a, b) in self.timeline.iter_mut().zip(&o.timeline) {
            a.rows += b.rows;
            a.batches += b.batches;
            a.errors += b.errors;
            a.latency_sum_us += b.latency_sum_us;
            a.latency_max_us = a.latency_max_us.max(b.latency_max_us);
            a.latency.add(&b.latency);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t(intended: u64, started: u64, ended: u64) -> Timing {
        let ms = Duration::from_millis;
        Timing { intended: ms(intended), started: ms(started), ended: ms(ended), stage: None, retries: 0 }
    }

    #[test]
    fn latency_counts_from_the_intended_start() {
        let late = t(100, 400, 450);
        assert_eq!(late.latency(), Duration::from_millis(350));
        assert_eq!(late.service(), Duration::from_millis(50));
        assert_eq!(late.lag(), Duration::from_millis(300));
        assert_eq!(t(100, 100, 150).latency(), Duration::from_millis(50));
    }

    #[test]
    fn failures_are_counted_by_class() {
        let mut r = Recorder::default();
        r.failed(false, 0, 10, t(0, 0, 5), "23505".into(), "dup".into());
        r.failed(false, 0, 10, t(0, 0, 5), "23505".into(), "dup2".into());
        r.ok(false, 10, t(0, 0, 1500));
        assert_eq!(r.errors["23505"].count, 2);
        assert_eq!(r.errors["23505"].example, "dup");
        assert_eq!(r.measured.failed_rows, 20);
        assert_eq!(r.measured.rows, 10);
        assert_eq!(r.timeline.len(), 2);
        assert_eq!(r.timeline[1].rows, 10);
    }

    /// Each second keeps its distribution: its p50 and p99 come through
    /// the merge of the workers' recorders, one outlier moving neither.
    #[test]
    fn a_second_s_percentiles_survive_the_merge_of_workers() {
        let (mut a, mut b) = (Recorder::default(), Recorder::default());
        (0..60).for_each(|_| a.ok(false, 1, t(0, 0, 2)));
        (0..39).for_each(|_| b.ok(false, 1, t(0, 0, 2)));
        b.ok(false, 1, t(0, 0, 900));
        a.merge(&b);
        let s = &a.timeline[0];
        let (p50, p99) = (s.latency_quantile_ms(0.5).unwrap(), s.latency_quantile_ms(0.99).unwrap());
        assert!((p50 - 2.0).abs() < 0.125 && (p99 - 2.0).abs() < 0.125, "p50 {p50}, p99 {p99}");
        assert_eq!(s.latency_max_ms(), Some(900.0));
        assert_eq!(a.timeline.len(), 1);
    }

    #[test]
    fn each_stage_keeps_its_measured_operations_and_merges_by_stage() {
        let staged = |stage, ms| Timing { stage: Some(stage), ..t(ms, ms, ms + 2) };
        let mut a = Recorder::default();
        a.ok(true, 10, staged(0, 0));
        a.ok(false, 10, staged(0, 10));
        a.failed(false, 0, 10, staged(2, 20), "x".into(), "y".into());
        let mut b = Recorder::default();
        b.ok(false, 5, staged(1, 30));
        a.merge(&b);
        let figures: Vec<_> = a.stages.iter().map(|p| (p.rows, p.batches, p.failed_batches)).collect();
        assert_eq!(figures, [(10, 1, 0), (5, 1, 0), (0, 0, 1)], "warm-up stays out of the stages");
        assert_eq!((a.measured.rows, a.warmup.rows), (15, 10));
    }

    fn outage(start: u64, end: u64, error: &str) -> Outage {
        let ms = Duration::from_millis;
        Outage { start: ms(start), end: ms(end), reconnected: true, error: error.into(), attempts: 1 }
    }

    #[test]
    fn overlapping_outages_of_workers_are_one_window() {
        let all = [outage(1000, 3000, "a"), outage(5000, 5100, "c"), outage(1200, 3500, "b")];
        let w = outage_windows(&all);
        let ms = Duration::from_millis;
        assert_eq!(w, vec![(ms(1000), ms(3500), "a".into(), 2), (ms(5000), ms(5100), "c".into(), 1)]);
    }

    fn recorder(samples: &[(u64, u64)]) -> Recorder {
        let mut r = Recorder::default();
        for &(start, len) in samples {
            r.ok(false, 1, t(start, start, start + len));
        }
        r
    }

    proptest! {
        /// Merging is associative: per-worker order never changes the result.
        #[test]
        fn merge_is_associative(
            a in prop::collection::vec((0u64..5000, 1u64..100_000), 0..50),
            b in prop::collection::vec((0u64..5000, 1u64..100_000), 0..50),
            c in prop::collection::vec((0u64..5000, 1u64..100_000), 0..50),
        ) {
            let (ra, rb, rc) = (recorder(&a), recorder(&b), recorder(&c));
            let mut left = ra.clone();
            left.merge(&rb);
            left.merge(&rc);
            let mut bc = rb.clone();
            bc.merge(&rc);
            let mut right = ra.clone();
            right.merge(&bc);
            prop_assert_eq!(left.measured.latency, right.measured.latency);
            prop_assert_eq!(left.measured.rows, right.measured.rows);
            prop_assert_eq!(left.timeline, right.timeline);
            prop_assert_eq!(left.measured.first_start, right.measured.first_start);
        }
    }
}
