//! Recording for runs with many more workers than threads (`dbload http`
//! with thousands of VUs): a [`Recorder`] holds several HDR histograms of
//! 16 KiB or more each, ~0.4 MiB per worker once latencies spread, so
//! thousands of them cost gigabytes. A [`Buffered`] recorder holds only the
//! last few operations and moves them into a [`Recorder`] shared by several
//! workers, taking its lock once per [`BUFFERED`] operations, not once per
//! operation.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use super::recorder::{InDoubtBatch, Outage, Timing};
use super::Recorder;

/// What the worker loop records, whichever recorder it records into.
pub trait Record {
    /// An operation the target acknowledged with `units` units.
    fn ok(&mut self, warmup: bool, units: u64, t: Timing);
    /// An operation that failed: `units` not written, `acked` written.
    fn failed(&mut self, warmup: bool, acked: u64, units: u64, t: Timing, class: String, message: String);
    /// An operation lost with its connection that nothing could settle.
    fn in_doubt(&mut self, warmup: bool, units: u64, t: Timing);
    /// A lost connection, from the error to the reconnection.
    fn outage(&mut self, outage: Outage);
    /// What became of an operation in flight when its connection was lost.
    fn settled(&mut self, batch: InDoubtBatch);
    /// The measured window runs at least to `end` (an open loop's deadline).
    fn ran_until(&mut self, end: Duration);
    /// An operation skipped, not sent: its slot passed too long ago (pgbench's `-L` with `-R`).
    fn skipped(&mut self, warmup: bool);
}

impl Record for Recorder {
    fn ok(&mut self, warmup: bool, units: u64, t: Timing) {
        Recorder::ok(self, warmup, units, t)
    }
    fn failed(&mut self, warmup: bool, acked: u64, units: u64, t: Timing, class: String, message: String) {
        Recorder::failed(self, warmup, acked, units, t, class, message)
    }
    fn in_doubt(&mut self, warmup: bool, units: u64, t: Timing) {
        Recorder::in_doubt(self, warmup, units, t)
    }
    fn outage(&mut self, outage: Outage) {
        self.outages.push(outage);
    }
    fn settled(&mut self, batch: InDoubtBatch) {
        self.in_doubt.push(batch);
    }
    fn ran_until(&mut self, end: Duration) {
        Recorder::ran_until(self, end)
    }
    fn skipped(&mut self, warmup: bool) {
        Recorder::skipped(self, warmup)
    }
}

/// Operations a [`Buffered`] recorder holds before it takes the lock.
pub const BUFFERED: usize = 32;

/// An operation not yet in the shared recorder.
enum Event {
    Ok {
        warmup: bool,
        units: u64,
        t: Timing,
    },
    /// Boxed: the rare event would double the size of every other.
    Failed(Box<Failure>),
    InDoubt {
        warmup: bool,
        units: u64,
        t: Timing,
    },
}

struct Failure {
    warmup: bool,
    acked: u64,
    units: u64,
    t: Timing,
    class: String,
    message: String,
}

/// A worker's recorder that owns no histograms: it keeps up to
/// [`BUFFERED`] operations and records them into the shared recorder
/// together. What it holds is recorded when it is dropped, so nothing is
/// lost however the worker ends (a panicking worker's figures included).
pub struct Buffered {
    pending: Vec<Event>,
    into: Arc<Mutex<Recorder>>,
}

impl Buffered {
    pub fn new(into: Arc<Mutex<Recorder>>) -> Buffered {
        Buffered { pending: Vec::with_capacity(BUFFERED), into }
    }

    fn push(&mut self, e: Event) {
        self.pending.push(e);
        if self.pending.len() == BUFFERED {
            self.flush();
        }
    }

    fn flush(&mut self) {
        let mut rec = lock(&self.into);
        for e in self.pending.drain(..) {
            match e {
                Event::Ok { warmup, units, t } => rec.ok(warmup, units, t),
                Event::Failed(f) => rec.failed(f.warmup, f.acked, f.units, f.t, f.class, f.message),
                Event::InDoubt { warmup, units, t } => rec.in_doubt(warmup, units, t),
            }
        }
    }
}

/// The shared recorder, even if a worker panicked while it held the lock:
/// each record is complete before the next begins, so it is consistent.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Drop for Buffered {
    fn drop(&mut self) {
        self.flush();
    }
}

impl Record for Buffered {
    fn ok(&mut self, warmup: bool, units: u64, t: Timing) {
        self.push(Event::Ok { warmup, units, t });
    }
    fn failed(&mut self, warmup: bool, acked: u64, units: u64, t: Timing, class: String, message: String) {
        self.push(Event::Failed(Box::new(Failure { warmup, acked, units, t, class, message })));
    }
    fn in_doubt(&mut self, warmup: bool, units: u64, t: Timing) {
        self.push(Event::InDoubt { warmup, units, t });
    }
    // Rare (a lost connection): recorded at once, in order with the rest.
    fn outage(&mut self, outage: Outage) {
        self.flush();
        lock(&self.into).outages.push(outage);
    }
    fn ran_until(&mut self, end: Duration) {
        self.flush();
        lock(&self.into).ran_until(end);
    }
    fn settled(&mut self, batch: InDoubtBatch) {
        self.flush();
        lock(&self.into).in_doubt.push(batch);
    }
    /// Rare (and never under `dbload http`, which has no `-L`): recorded at once.
    fn skipped(&mut self, warmup: bool) {
        lock(&self.into).skipped(warmup);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn t(ms: u64) -> Timing {
        let d = Duration::from_millis(ms);
        Timing { intended: d, started: d, ended: d + Duration::from_millis(3), stage: None, retries: 0 }
    }

    /// Two buffered workers into one shared recorder record what one
    /// recorder of their own each would have, merged.
    #[test]
    fn buffered_workers_record_what_their_own_recorders_would() {
        let shared = Arc::new(Mutex::new(Recorder::default()));
        let (mut a, mut b) = (Buffered::new(shared.clone()), Buffered::new(shared.clone()));
        let (mut ra, mut rb) = (Recorder::default(), Recorder::default());
        for i in 0..(BUFFERED as u64 * 3 + 5) {
            for (buffered, own) in [(&mut a as &mut dyn Record, &mut ra), (&mut b, &mut rb)] {
                if i % 7 == 3 {
                    buffered.failed(i < 4, 0, 1, t(i * 10), "timeout".into(), "slow".into());
                    own.failed(i < 4, 0, 1, t(i * 10), "timeout".into(), "slow".into());
                } else {
                    buffered.ok(i < 4, 1, t(i * 10));
                    Record::ok(own, i < 4, 1, t(i * 10));
                }
            }
        }
        assert!(lock(&shared).measured.batches < 2 * (BUFFERED as u64 * 3 + 5), "some still held");
        drop((a, b));
        ra.merge(&rb);
        let rec = lock(&shared);
        assert_eq!(rec.measured.latency, ra.measured.latency);
        assert_eq!((rec.measured.rows, rec.measured.failed_rows), (ra.measured.rows, ra.measured.failed_rows));
        assert_eq!((rec.warmup.rows, rec.warmup.batches), (ra.warmup.rows, ra.warmup.batches));
        assert_eq!(rec.errors, ra.errors);
        assert_eq!(rec.timeline, ra.timeline);
    }

    /// What keeps thousands of VUs cheap: a buffered recorder holds a few
    /// operations, not histograms (a Recorder's are 16 KiB each, at least).
    #[test]
    fn a_buffered_recorder_is_small() {
        let b = Buffered::new(Arc::new(Mutex::new(Recorder::default())));
        let bytes = std::mem::size_of::<Buffered>() + b.pending.capacity() * std::mem::size_of::<Event>();
        assert!(bytes <= 3 * 1024, "{bytes} bytes");
    }
}
