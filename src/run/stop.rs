//! Why a run ended before its end when nobody asked it to. Two things stop
//! a run on their own: a panic (in a producer thread, a worker or its
//! executor), which would otherwise read as "input finished" or lose the
//! report; and operations that have all failed for a sustained stretch,
//! which would otherwise spin for the whole duration recording millions of
//! identical errors. Either way the other workers are cancelled, the report
//! of what was done is still printed, and it says why (status `failed`).

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::format::group;
use crate::op::OpError;

/// A run stops when this many operations in a row have failed...
pub const SUSTAINED_FAILURES: u64 = 1_000;
/// ...over at least this long: a short burst of errors (a failover, a
/// restart) is counted and lived through, a run that cannot succeed is not.
pub const SUSTAINED_FOR: Duration = Duration::from_secs(5);

/// A run's own reason to stop, shared by its workers. The first reason
/// given is kept: what follows it (cancelled workers) is its consequence.
#[derive(Debug)]
pub struct Stop {
    /// The workers' token: a child of the user's, so that stopping here is
    /// not taken for Ctrl-C.
    workers: CancellationToken,
    reason: OnceLock<String>,
    /// Operations that failed in a row, in any worker, and when (µs since
    /// the run's start) the first of them ended.
    streak: AtomicU64,
    streak_since_us: AtomicU64,
}

impl Stop {
    /// `workers`: the token the run's workers stop on.
    pub fn new(workers: CancellationToken) -> Stop {
        Stop { workers, reason: OnceLock::new(), streak: AtomicU64::new(0), streak_since_us: AtomicU64::new(0) }
    }

    /// Stops the run's workers, saying why (unless a reason was given already).
    pub fn stop(&self, reason: String) {
        let _ = self.reason.set(reason);
        self.workers.cancel();
    }

    /// Why the run stopped on its own, if it did.
    pub fn reason(&self) -> Option<String> {
        self.reason.get().cloned()
    }

    /// An operation succeeded: the run can succeed. (Read before written:
    /// no write to the shared line while operations succeed.)
    pub fn succeeded(&self) {
        if self.streak.load(Ordering::Relaxed) != 0 {
            self.streak.store(0, Ordering::Relaxed);
        }
    }

    /// An operation that ended `at` (since the run's start) failed with
    /// `error`; true if that makes [`SUSTAINED_FAILURES`] in a row over
    /// [`SUSTAINED_FOR`] or more, and the run is stopped. One that the
    /// target partly acknowledged (some rows of a bulk request) did not
    /// fail as a whole: the run can succeed.
    pub fn failed(&self, at: Duration, error: &OpError) -> bool {
        if error.acked > 0 {
            self.succeeded();
            return false;
        }
        let at_us = at.as_micros() as u64;
        let n = self.streak.fetch_add(1, Ordering::Relaxed) + 1;
        if n == 1 {
            self.streak_since_us.store(at_us, Ordering::Relaxed);
        }
        let over = Duration::from_micros(at_us.saturating_sub(self.streak_since_us.load(Ordering::Relaxed)));
        if n < SUSTAINED_FAILURES || over < SUSTAINED_FOR {
            return false;
        }
        self.stop(format!(
            "the last {} operations over {:.1} s all failed: {}: {}",
            group(n),
            over.as_secs_f64(),
            error.class,
            error.message
        ));
        true
    }
}

/// What a producer thread's panic becomes in the worker that reads its feed:
/// the worker's task panics with this, and the run names the producer.
#[derive(Debug, Clone)]
pub struct ProducerPanicked(pub String);

/// Why worker `w`'s task panicked, from its payload, for the run's reason.
pub fn panicked(w: usize, payload: &(dyn Any + Send)) -> String {
    match payload.downcast_ref::<ProducerPanicked>() {
        Some(ProducerPanicked(msg)) => format!("the producer of worker {w} panicked: {msg}"),
        None => format!("worker {w} panicked: {}", panic_message(payload)),
    }
}

/// The message a panic was given (`panic!("...")`), as far as it is text.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(s), _) => s.to_string(),
        (_, Some(s)) => s.clone(),
        _ => "(a panic without a message)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_stop_the_run_only_when_many_and_sustained() {
        let ms = Duration::from_millis;
        let stop = Stop::new(CancellationToken::new());
        let e = OpError::new("SQLSTATE 22012", "division by zero");
        // Many failures in a short time: a burst, lived through.
        for i in 0..2 * SUSTAINED_FAILURES {
            assert!(!stop.failed(ms(i), &e));
        }
        // A success ends the streak; a long one with few failures goes on.
        stop.succeeded();
        assert!(!stop.failed(ms(10_000), &e) && !stop.failed(ms(20_000), &e));
        // A request that wrote some of its rows did not fail as a whole: the streak starts again.
        let partly = OpError { acked: 1, ..OpError::new("bulk", "row 2 failed") };
        assert!(!stop.failed(ms(20_000), &partly));
        for i in 0..SUSTAINED_FAILURES - 1 {
            assert!(!stop.failed(ms(20_000 + i), &e));
        }
        assert!(stop.reason().is_none() && !stop.workers.is_cancelled());
        assert!(stop.failed(ms(25_000), &e), "the 1,000th failure, 5 s after the first");
        assert!(stop.workers.is_cancelled());
        let why = stop.reason().unwrap();
        assert_eq!(why, "the last 1,000 operations over 5.0 s all failed: SQLSTATE 22012: division by zero");
        // The first reason stays.
        stop.stop("later".into());
        assert_eq!(stop.reason().unwrap(), why);
    }

    #[test]
    fn a_panic_is_named_by_where_it_happened() {
        assert_eq!(panicked(3, &"boom"), "worker 3 panicked: boom");
        assert_eq!(panicked(1, &String::from("bad")), "worker 1 panicked: bad");
        assert_eq!(panicked(2, &ProducerPanicked("x".into())), "the producer of worker 2 panicked: x");
        assert_eq!(panicked(0, &7), "worker 0 panicked: (a panic without a message)");
    }
}
