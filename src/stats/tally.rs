//! The running totals that `--metrics-listen` serves while a run goes on:
//! operations, units, failed operations by class, latency in fixed
//! buckets, the pacer's lag. The recorders keep the run's real figures
//! (HDR histograms, merged at the end); these are their live shadow, made
//! for Prometheus, whose histograms add up across instances only when
//! every instance uses the same buckets. Each worker counts into a
//! [`Tally`] of its own, with no lock and no shared cache line, and adds
//! it to the run's [`Totals`] when it publishes its progress counters
//! (every 10 ms), so a scrape takes one lock per publish, never one per
//! operation.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The latency buckets' upper bounds (inclusive), in seconds: from 100 µs
/// (a `select 1` on a socket) to 10 s (a large COPY batch), 1, 2.5, 5 per
/// decade, as Prometheus's own defaults space them. Fixed, so that
/// instances' histograms add up.
pub const BUCKETS_S: [f64; 16] =
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// [`BUCKETS_S`] in µs, as latencies are measured.
const BUCKETS_US: [u64; 16] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000,
    5_000_000, 10_000_000,
];

/// Operations counted since the last publish (a worker's), or since the
/// run's start (the run's, in [`Totals`]). Warm-up included: these are the
/// run's live figures, not its report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Operations that ended, answered or failed.
    pub operations: u64,
    /// Units (rows, queries, requests) the target acknowledged.
    pub units: u64,
    /// Failed operations by error class (a few classes: a list).
    pub errors: Vec<(String, u64)>,
    /// Answered operations' latency (from the intended start under
    /// `--rate`) by bucket, not cumulative: the last one is above 10 s.
    pub buckets: [u64; BUCKETS_S.len() + 1],
    pub latency_sum_us: u64,
    /// The largest schedule lag among the operations counted (open loop).
    pub lag: Duration,
}

impl Tally {
    /// An operation answered with `units` acknowledged, after `latency`,
    /// `lag` of it spent behind the schedule.
    pub fn answered(&mut self, units: u64, latency: Duration, lag: Duration) {
        let us = latency.as_micros().min(u64::MAX as u128) as u64;
        self.operations += 1;
        self.units += units;
        self.buckets[BUCKETS_US.partition_point(|&bound| bound < us)] += 1;
        self.latency_sum_us = self.latency_sum_us.saturating_add(us);
        self.lag = self.lag.max(lag);
    }

    /// An operation that failed with an error of `class`, `units` of it
    /// acknowledged all the same.
    pub fn failed(&mut self, units: u64, class: &str) {
        self.operations += 1;
        self.units += units;
        match self.errors.iter_mut().find(|(c, _)| c == class) {
            Some((_, n)) => *n += 1,
            None => self.errors.push((class.to_string(), 1)),
        }
    }

    /// Adds `o` (the lag is not added: see [`Totals::lag`]).
    pub fn add(&mut self, o: &Tally) {
        self.operations += o.operations;
        self.units += o.units;
        for (class, n) in &o.errors {
            match self.errors.iter_mut().find(|(c, _)| c == class) {
                Some((_, total)) => *total += n,
                None => self.errors.push((class.clone(), *n)),
            }
        }
        for (total, n) in self.buckets.iter_mut().zip(o.buckets) {
            *total += n;
        }
        self.latency_sum_us = self.latency_sum_us.saturating_add(o.latency_sum_us);
    }

    /// The latency's sum in seconds.
    pub fn latency_sum_s(&self) -> f64 {
        self.latency_sum_us as f64 / 1e6
    }
}

/// A run's totals since its start, added to by its workers.
#[derive(Debug, Default)]
pub struct Totals {
    sum: Mutex<Tally>,
    /// The largest lag of the operations of the latest publish, in µs.
    lag_us: AtomicU64,
}

impl Totals {
    /// Adds a worker's `tally` and empties it.
    pub fn publish(&self, tally: &mut Tally) {
        if tally.operations == 0 {
            return;
        }
        self.sum.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).add(tally);
        self.lag_us.store(tally.lag.as_micros() as u64, Ordering::Relaxed);
        tally.operations = 0;
        tally.units = 0;
        tally.errors.clear();
        tally.buckets = Default::default();
        tally.latency_sum_us = 0;
        tally.lag = Duration::ZERO;
    }

    /// The totals so far.
    pub fn read(&self) -> Tally {
        let mut read = self.sum.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        read.lag = self.lag();
        read
    }

    /// How far behind its schedule an operation of the latest publish
    /// started: the pacer's lag now (zero for a closed loop).
    pub fn lag(&self) -> Duration {
        Duration::from_micros(self.lag_us.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A latency on a bound is in that bound's bucket (`le` is inclusive),
    /// one above 10 s in the last; publishing adds up and empties.
    #[test]
    fn latencies_fall_in_their_buckets_and_publishing_adds_up() {
        let ms = Duration::from_millis;
        let mut t = Tally::default();
        t.answered(10, Duration::from_micros(100), Duration::ZERO);
        t.answered(10, Duration::from_micros(101), ms(3));
        t.answered(10, ms(11_000), ms(1));
        t.failed(4, "40001 serialization_failure");
        t.failed(0, "40001 serialization_failure");
        t.failed(0, "timeout");
        assert_eq!((t.operations, t.units), (6, 34));
        assert_eq!((t.buckets[0], t.buckets[1], t.buckets[BUCKETS_S.len()]), (1, 1, 1));
        assert_eq!(t.errors, [("40001 serialization_failure".to_string(), 2), ("timeout".to_string(), 1)]);
        let totals = Totals::default();
        let mut again = t.clone();
        totals.publish(&mut t);
        assert_eq!(t, Tally::default(), "emptied");
        totals.publish(&mut again);
        let read = totals.read();
        assert_eq!((read.operations, read.units, read.buckets[0]), (12, 68, 2));
        assert_eq!(read.errors[0].1, 4);
        assert_eq!(read.lag, ms(3));
        assert!((read.latency_sum_s() - 2.0 * 11.000201).abs() < 1e-9, "{}", read.latency_sum_s());
    }
}
