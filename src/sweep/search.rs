//! `--find-max-rate`: the highest rate a command sustains. Doubling from
//! the start rate until a step breaks (its SLO, its rate, its errors),
//! then bisection between the last rate held and the first broken until
//! they are within the precision. Only the arithmetic is here; the runner
//! (`mod.rs`) runs each step and says whether it held.

/// Where the search stands: the highest rate held and the lowest broken.
#[derive(Debug, Clone, PartialEq)]
pub struct Search {
    start: f64,
    /// The precision as a fraction of the rate held (0.05 for 5 %).
    precision: f64,
    max: Option<f64>,
    held: Option<f64>,
    broken: Option<f64>,
}

impl Search {
    /// `start` and `max` in operations per second, `precision` a fraction.
    pub fn new(start: f64, precision: f64, max: Option<f64>) -> Search {
        Search { start, precision, max, held: None, broken: None }
    }

    /// The next rate to try, or `None` when the search is over: the start
    /// rate broke (nothing is sustainable), `--max-rate` held, or the rate
    /// held and the rate broken are within the precision.
    pub fn next(&self) -> Option<f64> {
        match (self.held, self.broken) {
            (None, None) => Some(self.start),
            (None, Some(_)) => None,
            (Some(held), None) => match self.max {
                Some(max) if held >= max => None,
                max => Some(max.map_or(held * 2.0, |m| (held * 2.0).min(m))),
            },
            (Some(held), Some(broken)) => {
                (broken - held > held * self.precision).then_some(round((held + broken) / 2.0))
            }
        }
    }

    /// What a step at `rate` did.
    pub fn record(&mut self, rate: f64, held: bool) {
        if held {
            self.held = Some(self.held.map_or(rate, |h| h.max(rate)));
        } else {
            self.broken = Some(self.broken.map_or(rate, |b| b.min(rate)));
        }
    }

    /// The highest rate held so far.
    pub fn max_sustainable(&self) -> Option<f64> {
        self.held
    }
}

/// A bisected rate to three significant digits (412.5 becomes 413, 1234.5678
/// becomes 1230): a rate the user can type again, and fine enough for any
/// precision down to 1 %.
fn round(rate: f64) -> f64 {
    if rate <= 0.0 {
        return rate;
    }
    let scale = 10f64.powi(2 - rate.log10().floor() as i32);
    (rate * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the search against a command that holds every rate up to `limit`.
    fn search(start: f64, precision: f64, max: Option<f64>, limit: f64) -> (Option<f64>, Vec<f64>) {
        let mut s = Search::new(start, precision, max);
        let mut tried = Vec::new();
        while let Some(rate) = s.next() {
            assert!(tried.len() < 100, "no end: {tried:?}");
            tried.push(rate);
            s.record(rate, rate <= limit);
        }
        (s.max_sustainable(), tried)
    }

    #[test]
    fn doubling_then_bisection_to_the_precision() {
        let (found, tried) = search(10.0, 0.05, None, 400.0);
        assert_eq!(&tried[..7], [10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 640.0]);
        // Bisection between 320 (held) and 640 (broken): 480, 400, 440, 420.
        assert_eq!(&tried[7..], [480.0, 400.0, 440.0, 420.0]);
        assert_eq!(found, Some(400.0));
        let found = found.unwrap();
        assert!((420.0 - found) <= found * 0.05);
    }

    #[test]
    fn the_answer_is_within_the_precision_of_the_limit() {
        for limit in [13.0, 99.0, 400.0, 1234.0, 77_777.0] {
            for precision in [0.01, 0.05, 0.2] {
                let (found, _) = search(10.0, precision, None, limit);
                let found = found.unwrap();
                assert!(found <= limit && found >= limit / (1.0 + precision) * 0.99, "{limit} {precision}: {found}");
            }
        }
    }

    #[test]
    fn a_broken_start_or_a_held_maximum_ends_the_search() {
        assert_eq!(search(10.0, 0.05, None, 5.0), (None, vec![10.0]));
        let (found, tried) = search(10.0, 0.05, Some(50.0), 1000.0);
        assert_eq!((found, tried), (Some(50.0), vec![10.0, 20.0, 40.0, 50.0]));
    }

    #[test]
    fn bisected_rates_keep_three_digits() {
        assert_eq!(round(412.5), 413.0);
        assert_eq!(round(1234.5678), 1230.0);
        assert_eq!(round(0.123456), 0.123);
    }
}
