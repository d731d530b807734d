//! Open-loop pacing: operations are scheduled on an absolute timeline
//! (`t0 + units_scheduled / rate`), never relative to when the last one
//! finished, so a slow database cannot slow the schedule down and hide its
//! stalls. All workers of a run share one schedule (k6's constant arrival
//! rate): whichever worker is free takes the next slot, so one slow
//! operation makes only its own slot late while the other workers keep the
//! rate, and `--concurrency` is the most operations in flight.
//!
//! With `--rate-stages` the rate is a function of time (k6's ramping
//! arrival rate): the n-th unit's slot is where the integral of the rate
//! reaches n. With `--stages` (k6's ramping VUs) the loop stays closed, and
//! each worker takes a turn number when it starts: a worker whose number
//! is not below the current target waits for the target to pass it.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use crate::op::{Ramps, Stages};

/// The schedule of a run, shared by its workers.
#[derive(Debug)]
pub struct Schedule {
    /// Units (rows, queries, requests) per second in total; `None` is a closed loop.
    rate: Option<f64>,
    /// `--stages` or `--rate-stages`: the rate or the workers busy, over time.
    stages: Option<Stages>,
    /// Units placed on the schedule so far: the next slot starts here.
    taken: AtomicU64,
    /// Units of the operations that really started.
    started: AtomicU64,
    /// Workers that joined the run: the next one's turn number.
    joined: AtomicUsize,
}

/// Whether a worker may start an operation now (see [`Schedule::turn`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Turn {
    Now,
    /// Not before this time since the run's start (then ask again).
    At(Duration),
    /// Not again in this run: the target stays at or below its number.
    Never,
}

impl Schedule {
    pub fn new(rate: Option<f64>) -> Self {
        Schedule {
            rate,
            stages: None,
            taken: AtomicU64::new(0),
            started: AtomicU64::new(0),
            joined: AtomicUsize::new(0),
        }
    }

    /// `--rate`, if the schedule has one.
    pub fn rate(&self) -> Option<f64> {
        self.rate
    }

    /// A schedule that follows `stages` (`None`: this one as it is).
    pub fn staged(self, stages: Option<Stages>) -> Self {
        Schedule { stages, ..self }
    }

    /// Takes the next slot, for an operation of `units`: its intended start
    /// since the run's start. Closed loop: `now`, i.e. as soon as possible.
    /// Past the end of rate stages: their end, which is the run's deadline.
    pub fn take(&self, units: u64, now: Duration) -> Duration {
        match (&self.stages, self.rate) {
            (Some(s), _) if s.ramps == Ramps::Rate => {
                let n = self.taken.fetch_add(units, Ordering::Relaxed) as f64;
                time_of(s, n).unwrap_or_else(|| s.duration())
            }
            (_, Some(rate)) => Duration::from_secs_f64(self.taken.fetch_add(units, Ordering::Relaxed) as f64 / rate),
            _ => now,
        }
    }

    /// Whether this is an open loop (`--rate`, `--rate-stages`): operations have a lag.
    pub fn open(&self) -> bool {
        self.rate.is_some() || self.stages.as_ref().is_some_and(|s| s.ramps == Ramps::Rate)
    }

    /// Whether each worker's next operation starts as soon as its last one
    /// ends: a closed loop with no stages (no schedule to wait for, no
    /// ramp that may stop the worker).
    pub fn back_to_back(&self) -> bool {
        self.rate.is_none() && self.stages.is_none()
    }

    /// An operation of `units` started. Counted for an open loop only (what
    /// [`Self::dropped`] needs): a counter every worker adds to moves its
    /// cache line between the CPUs at each operation.
    pub fn started(&self, units: u64) {
        if self.open() {
            self.started.fetch_add(units, Ordering::Relaxed);
        }
    }

    /// Open loop: the units the schedule placed before `end` (at most
    /// `limit`, the run's count) that never started; `None` for a closed
    /// loop, which has no schedule to fall behind.
    pub fn dropped(&self, end: Duration, limit: Option<u64>) -> Option<u64> {
        let due = match (&self.stages, self.rate) {
            (Some(s), _) if s.ramps == Ramps::Rate => units_due(s, end),
            (_, Some(rate)) => end.as_secs_f64() * rate,
            _ => return None,
        };
        let due = due.ceil() as u64;
        Some(due.min(limit.unwrap_or(u64::MAX)).saturating_sub(self.started.load(Ordering::Relaxed)))
    }

    /// A worker joins the run: its turn number, 0 for the first.
    pub fn join(&self) -> usize {
        self.joined.fetch_add(1, Ordering::Relaxed)
    }

    /// Whether the worker with turn number `turn` may start an operation
    /// `now`: with VU stages, while the target is above its number (so a
    /// target of 2.5 keeps three workers busy, as k6 starts a VU as soon as
    /// the ramp passes it); always, otherwise.
    pub fn turn(&self, turn: usize, now: Duration) -> Turn {
        match &self.stages {
            Some(s) if s.ramps == Ramps::Vus => next_turn(s, turn as f64, now),
            _ => Turn::Now,
        }
    }

    /// Whether workers take turns at all (VU stages): without, [`Self::turn`]
    /// is always now, and a worker need not read the clock to ask.
    pub fn has_turns(&self) -> bool {
        self.stages.as_ref().is_some_and(|s| s.ramps == Ramps::Vus)
    }

    /// The stage (0-based) that `t` falls in, for the recorder; `None`
    /// without stages or past their end.
    pub fn stage_at(&self, t: Duration) -> Option<usize> {
        self.stages.as_ref()?.index_at(t)
    }
}

/// Units rate stages call for from the run's start to `t`.
fn units_due(stages: &Stages, t: Duration) -> f64 {
    stages.spans().take_while(|s| s.start < t).map(|s| s.units_in(t - s.start)).sum()
}

/// When rate stages have called for `n` units: the earliest time at which
/// their integral reaches `n`; `None` if it never does before their end.
fn time_of(stages: &Stages, n: f64) -> Option<Duration> {
    let mut left = n;
    for span in stages.spans() {
        let area = span.units_in(span.end - span.start);
        if left <= 0.0 {
            return Some(span.start);
        }
        if area > 0.0 && left <= area {
            // from·τ + a·τ² = left, with a = (to - from) / 2·length: the
            // positive root, written so that a near 0 (a constant rate)
            // loses no precision and a < 0 (a ramp down) needs no case.
            let length = (span.end - span.start).as_secs_f64();
            let a = (span.to - span.from) / (2.0 * length);
            let root = (span.from * span.from + 4.0 * a * left).max(0.0).sqrt();
            let tau = (2.0 * left / (span.from + root)).min(length);
            return Some(span.start + Duration::from_secs_f64(tau));
        }
        left -= area;
    }
    None
}

/// [`Schedule::turn`] for VU stages: the worker numbered `turn` works
/// while the target is above `turn`.
fn next_turn(stages: &Stages, turn: f64, now: Duration) -> Turn {
    for span in stages.spans().filter(|s| s.end > now) {
        let from_t = span.start.max(now);
        if span.target_at(from_t) > turn {
            return if from_t == now { Turn::Now } else { Turn::At(from_t) };
        }
        if span.to > turn {
            // The ramp passes `turn` inside this span.
            let length = (span.end - span.start).as_secs_f64();
            let along = (turn - span.from) / (span.to - span.from);
            return Turn::At(from_t.max(span.start + Duration::from_secs_f64(along * length)));
        }
    }
    Turn::Never
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::Stage;

    #[test]
    fn schedule_is_absolute() {
        let s = Schedule::new(Some(1000.0));
        assert_eq!(s.take(100, Duration::from_secs(5)), Duration::ZERO);
        // However late we are, the schedule does not move.
        assert_eq!(s.take(100, Duration::from_secs(9)), Duration::from_millis(100));
        assert_eq!(s.take(50, Duration::ZERO), Duration::from_millis(200));
        assert_eq!(s.take(1, Duration::ZERO), Duration::from_millis(250));
    }

    #[test]
    fn closed_loop_is_now_and_drops_nothing() {
        let s = Schedule::new(None);
        assert_eq!(s.take(100, Duration::from_secs(3)), Duration::from_secs(3));
        assert_eq!(s.dropped(Duration::from_secs(3), None), None);
    }

    #[test]
    fn dropped_counts_what_the_schedule_wanted_and_never_started() {
        let s = Schedule::new(Some(10.0));
        s.started(15);
        // 10/s for 2 s: 20 were due.
        assert_eq!(s.dropped(Duration::from_secs(2), None), Some(5));
        // A count limit caps what was due.
        assert_eq!(s.dropped(Duration::from_secs(2), Some(12)), Some(0));
        s.started(10);
        assert_eq!(s.dropped(Duration::from_secs(2), None), Some(0));
    }

    fn stages(ramps: Ramps, start: f64, stages: &[(u64, f64)]) -> Stages {
        let stages = stages.iter().map(|&(ms, target)| Stage { duration: Duration::from_millis(ms), target }).collect();
        Stages { ramps, start, stages }
    }

    /// The `--rate-stages 2s:100,2s:300,2s:300` of the integration test,
    /// from k6's start rate of 0: 100, then 400, then 600 units.
    fn ramp() -> Stages {
        stages(Ramps::Rate, 0.0, &[(2000, 100.0), (2000, 300.0), (2000, 300.0)])
    }

    #[test]
    fn the_rate_integral_over_each_stage_is_its_mean_rate_times_its_length() {
        let r = ramp();
        let at = |s: f64| units_due(&r, Duration::from_secs_f64(s));
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(at(2.0), 100.0) && close(at(4.0), 500.0) && close(at(6.0), 1100.0));
        // Past the end, nothing more; halfway up the first ramp, a quarter of it.
        assert!(close(at(60.0), 1100.0) && close(at(1.0), 25.0), "{}", at(1.0));
        // A ramp down gives back the same triangle.
        let down = stages(Ramps::Rate, 0.0, &[(0, 300.0), (3000, 0.0)]);
        assert!(close(units_due(&down, Duration::from_secs(3)), 450.0));
    }

    #[test]
    fn the_schedule_places_each_unit_where_the_integral_reaches_it() {
        let r = ramp();
        for n in [0.0, 1.0, 25.0, 99.5, 100.0, 250.0, 500.0, 777.0, 1100.0] {
            let t = time_of(&r, n).unwrap();
            assert!((units_due(&r, t) - n).abs() < 1e-6, "unit {n} at {t:?}");
        }
        assert_eq!(time_of(&r, 1100.5), None, "the stages call for 1,100 units, no more");
        // The slots taken by operations of 10 units: as many as the integral says, in order.
        let s = Schedule::new(None).staged(Some(ramp()));
        let slots: Vec<Duration> = (0..110).map(|_| s.take(10, Duration::ZERO)).collect();
        assert!(slots.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(slots.iter().filter(|t| **t < Duration::from_secs(2)).count(), 10);
        assert_eq!(slots.iter().filter(|t| **t < Duration::from_secs(4)).count(), 50);
        assert_eq!(s.take(10, Duration::ZERO), Duration::from_secs(6), "past the end: the deadline");
        // A stage at rate 0 is a pause: nothing is placed in it.
        let paused =
            stages(Ramps::Rate, 0.0, &[(0, 10.0), (1000, 10.0), (0, 0.0), (1000, 0.0), (0, 10.0), (1000, 10.0)]);
        assert_eq!(time_of(&paused, 10.0), Some(Duration::from_secs(1)));
        assert_eq!(time_of(&paused, 10.5), Some(Duration::from_millis(2050)));
    }

    #[test]
    fn dropped_follows_the_stages_rate() {
        let s = Schedule::new(None).staged(Some(ramp()));
        s.started(400);
        assert_eq!(s.dropped(Duration::from_secs(4), None), Some(100));
        assert_eq!(
            Schedule::new(None)
                .staged(Some(stages(Ramps::Vus, 1.0, &[(1000, 5.0)])))
                .dropped(Duration::from_secs(1), None),
            None
        );
    }

    #[test]
    fn workers_beyond_the_vu_target_wait_for_their_turn() {
        // k6's default start of 1 VU, up to 3 over 2 s, down to 0 over 1 s.
        let v = stages(Ramps::Vus, 1.0, &[(2000, 3.0), (1000, 0.0)]);
        let s = Schedule::new(None).staged(Some(v));
        let ms = Duration::from_millis;
        assert_eq!([s.join(), s.join(), s.join(), s.join()], [0, 1, 2, 3]);
        assert_eq!(s.turn(0, ms(0)), Turn::Now);
        assert_eq!(s.turn(1, ms(0)), Turn::At(ms(0)), "at 0 the target is 1: worker 1 starts once it passes");
        assert_eq!(s.turn(1, ms(1)), Turn::Now);
        assert_eq!(s.turn(2, ms(500)), Turn::At(ms(1000)));
        assert_eq!(s.turn(3, ms(0)), Turn::Never, "the target never passes 3");
        // On the way down: worker 2 stops once the target is 2 (a third of the way), worker 0 last.
        assert_eq!(s.turn(2, ms(2300)), Turn::Now);
        assert_eq!(s.turn(2, ms(2334)), Turn::Never);
        assert_eq!(s.turn(0, ms(2900)), Turn::Now);
        assert_eq!(s.turn(0, ms(3000)), Turn::Never);
        // Without VU stages, every worker works.
        assert_eq!(Schedule::new(Some(5.0)).turn(7, ms(0)), Turn::Now);
        // VU stages keep the loop closed; rate stages open it (a lag to show).
        assert!(!s.open() && Schedule::new(None).staged(Some(ramp())).open());
        // Only a closed loop with no stages goes from one operation straight to the next.
        assert!(Schedule::new(None).back_to_back());
        assert!(!s.back_to_back() && !Schedule::new(Some(5.0)).back_to_back());
    }
}
