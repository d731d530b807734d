//! Open-loop pacing: batches are scheduled on an absolute timeline
//! (`t0 + rows_sent / rate`), never relative to when the last one finished,
//! so a slow database cannot slow the schedule down and hide its stalls.

use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Pacer {
    /// Rows per second for this worker; `None` is a closed loop.
    rate: Option<f64>,
    rows_scheduled: u64,
}

impl Pacer {
    pub fn new(rate: Option<f64>) -> Self {
        Pacer { rate, rows_scheduled: 0 }
    }

    /// The intended start of the next batch of `rows` rows, since the run's
    /// start. Closed loop: `now`, i.e. as soon as possible.
    pub fn next(&mut self, rows: u64, now: Duration) -> Duration {
        match self.rate {
            None => now,
            Some(rate) => {
                let at = Duration::from_secs_f64(self.rows_scheduled as f64 / rate);
                self.rows_scheduled += rows;
                at
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_is_absolute() {
        let mut p = Pacer::new(Some(1000.0));
        assert_eq!(p.next(100, Duration::from_secs(5)), Duration::ZERO);
        // However late we are, the schedule does not move.
        assert_eq!(p.next(100, Duration::from_secs(9)), Duration::from_millis(100));
        assert_eq!(p.next(50, Duration::ZERO), Duration::from_millis(200));
        assert_eq!(p.next(1, Duration::ZERO), Duration::from_millis(250));
    }

    #[test]
    fn closed_loop_is_now() {
        let mut p = Pacer::new(None);
        assert_eq!(p.next(100, Duration::from_secs(3)), Duration::from_secs(3));
    }
}
