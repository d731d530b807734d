//! The latency of the progress interval under way, for `-P` lines (pgbench's
//! `lat … stddev …`, and a p99 it does not give). Each worker records into a
//! slot of its own, so the hot path takes a lock nobody else wants; once per
//! interval the progress task merges the slots and empties them. Nothing
//! here feeds the report: the run's figures come from the recorders.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use hdrhistogram::Histogram;

use super::hist::{micros, new_histogram, record_us};

/// Slots of an [`Interval`]: workers beyond this many share them (the lock
/// is then contended, rarely: an operation holds it for a few ns).
const SLOTS: usize = 64;

/// One worker's operations of the interval under way.
#[derive(Debug)]
struct Slot {
    latency: Histogram<u64>,
    /// Sum of the operations' schedule lag (open loop), in µs.
    lag_us: u64,
}

/// The interval's latencies, one slot per worker, merged on [`Interval::take`].
#[derive(Debug)]
pub struct Interval {
    slots: Box<[Mutex<Slot>]>,
    joined: AtomicUsize,
}

impl Default for Interval {
    fn default() -> Self {
        let slots = (0..SLOTS).map(|_| Mutex::new(Slot { latency: new_histogram(), lag_us: 0 })).collect();
        Interval { slots, joined: AtomicUsize::new(0) }
    }
}

/// What one interval's operations took: the fields of a pgbench progress line.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct IntervalLatency {
    pub count: u64,
    pub mean_ms: f64,
    pub stddev_ms: f64,
    pub p99_ms: f64,
    /// Mean schedule lag (open loop).
    pub lag_ms: f64,
}

impl Interval {
    /// The slot of the worker that calls this (once, as it starts).
    pub fn join(&self) -> usize {
        self.joined.fetch_add(1, Ordering::Relaxed) % SLOTS
    }

    /// An operation of the worker on `slot` succeeded after `latency`, `lag`
    /// of it spent waiting for its slot of an open-loop schedule.
    pub fn record(&self, slot: usize, latency: Duration, lag: Duration) {
        let mut s = self.slots[slot].lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        record_us(&mut s.latency, micros(latency));
        s.lag_us = s.lag_us.saturating_add(lag.as_micros() as u64);
    }

    /// The interval since the last call, merged over the workers; the slots
    /// are emptied for the next one.
    pub fn take(&self) -> IntervalLatency {
        let mut all = new_histogram();
        let mut lag_us = 0u64;
        for slot in self.slots.iter() {
            let mut s = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            all.add(&s.latency).expect("histograms of new_histogram() grow to hold each other");
            s.latency.reset();
            lag_us = lag_us.saturating_add(std::mem::take(&mut s.lag_us));
        }
        let count = all.len();
        if count == 0 {
            return IntervalLatency::default();
        }
        let ms = |us: f64| us / 1000.0;
        IntervalLatency {
            count,
            mean_ms: ms(all.mean()),
            stddev_ms: ms(all.stdev()),
            p99_ms: ms(all.value_at_quantile(0.99) as f64),
            lag_ms: ms(lag_us as f64 / count as f64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_merges_the_workers_and_starts_empty_again() {
        let interval = Interval::default();
        let (a, b) = (interval.join(), interval.join());
        assert_ne!(a, b);
        for ms in 1..=99 {
            interval.record(a, Duration::from_millis(ms), Duration::ZERO);
        }
        interval.record(b, Duration::from_millis(1000), Duration::from_millis(4));
        let got = interval.take();
        assert_eq!(got.count, 100);
        assert!((got.mean_ms - 59.5).abs() < 0.1, "{got:?}");
        assert!((got.p99_ms - 99.0).abs() < 0.1, "{got:?}");
        assert!(got.stddev_ms > 90.0 && got.stddev_ms < 100.0, "{got:?}");
        assert!((got.lag_ms - 0.04).abs() < 1e-9, "{got:?}");
        assert_eq!(interval.take(), IntervalLatency::default());
    }
}
