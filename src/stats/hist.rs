//! The latency histograms every recorder of `stats/` keeps: their bounds
//! (µs, up to an hour, three significant digits) and how a duration goes
//! into one. A leaf of `stats/`, so that the recorders (the run's, the
//! progress interval's, the HTTP executor's) share it without naming each
//! other.

use std::time::Duration;

use hdrhistogram::Histogram;

/// The longest latency recorded, in µs (one hour); longer ones count as this.
pub const MAX_US: u64 = 3_600_000_000;

/// Latencies are recorded in microseconds, up to [`MAX_US`], with three
/// significant digits. The histogram grows to the largest value recorded
/// instead of being allocated (and zeroed: ~190 KiB) for an hour up front:
/// a run keeps several per worker, and `dbload http` has hundreds of workers.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant digits are valid")
}

/// `d` in whole µs, at least 1 and at most [`MAX_US`].
pub fn micros(d: Duration) -> u64 {
    (d.as_micros() as u64).clamp(1, MAX_US)
}

/// Records `us` (at most [`MAX_US`]) into a histogram of [`new_histogram`],
/// which grows to hold it. (`saturating_record` would not grow it: it
/// clamps to the current top, which starts at 2 ms.)
pub fn record_us(h: &mut Histogram<u64>, us: u64) {
    h.record(us.min(MAX_US)).expect("a histogram of new_histogram() grows to one hour");
}
