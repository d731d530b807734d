//! Dips in a run's throughput: the seconds a report explains with what
//! the server was doing then. A dip is a second whose throughput is below
//! 2/3 of the median of the 10 seconds before it; seconds of warm-up and
//! the partial last second are not judged (the one is not the run, the
//! other not a whole second). Consecutive such seconds are one dip.

/// A second is in a dip below this share of the median before it.
pub const BELOW: f64 = 2.0 / 3.0;
/// The seconds whose median a second is judged against.
pub const WINDOW: usize = 10;
/// The fewest seconds before a second that make a median to judge it by.
pub const FEWEST: usize = 3;

/// Seconds `start..=end` (since the run's start) whose throughput fell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dip {
    pub start: usize,
    pub end: usize,
    /// The median per second it is judged against (before its first second).
    pub before: f64,
    /// Its mean per second.
    pub during: f64,
}

impl Dip {
    /// How much throughput fell, as a share of `before`.
    pub fn fell(&self) -> f64 {
        if self.before > 0.0 {
            1.0 - self.during / self.before
        } else {
            0.0
        }
    }
}

/// The dips of `per_second` (units per second since the run's start),
/// judged from second `first` (the first after warm-up) to the last whole
/// second `whole` (exclusive). A second already in a dip is left out of
/// the medians that judge the seconds after it, so a long dip is measured
/// against the throughput before it, not against itself.
pub fn dips(per_second: &[u64], first: usize, whole: usize) -> Vec<Dip> {
    let whole = whole.min(per_second.len());
    let mut normal: Vec<u64> = Vec::with_capacity(whole);
    let mut found: Vec<Dip> = Vec::new();
    for (s, &n) in per_second.iter().enumerate().take(whole).skip(first) {
        let before = median(&normal[normal.len().saturating_sub(WINDOW)..]);
        match before.filter(|&m| normal.len() >= FEWEST && m > 0.0 && (n as f64) < BELOW * m) {
            Some(m) => match found.last_mut() {
                Some(d) if d.end + 1 == s => {
                    let seconds = (s - d.start) as f64;
                    d.during = (d.during * seconds + n as f64) / (seconds + 1.0);
                    d.end = s;
                }
                _ => found.push(Dip { start: s, end: s, before: m, during: n as f64 }),
            },
            None => normal.push(n),
        }
    }
    found
}

/// The median of `xs`; none of none.
fn median(xs: &[u64]) -> Option<f64> {
    let mut sorted = xs.to_vec();
    sorted.sort_unstable();
    let mid = sorted.len() / 2;
    match sorted.len() {
        0 => None,
        n if n % 2 == 1 => Some(sorted[mid] as f64),
        _ => Some((sorted[mid - 1] + sorted[mid]) as f64 / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fall_below_two_thirds_of_the_median_before_is_a_dip() {
        let mut s = vec![100u64; 30];
        s[12] = 70; // above 2/3: no dip
        s[20] = 60;
        s[21] = 40;
        s[22] = 50;
        let got = dips(&s, 0, 30);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!((got[0].start, got[0].end, got[0].before), (20, 22, 100.0));
        assert_eq!(got[0].during, 50.0);
        assert!((got[0].fell() - 0.5).abs() < 1e-9);
    }

    #[test]
    fn a_long_dip_is_judged_against_the_seconds_before_it() {
        // Eight slow seconds: against a window that took them in, the last would pass for normal.
        let s: Vec<u64> = (0..30).map(|i| if (10..18).contains(&i) { 30 } else { 90 }).collect();
        let got = dips(&s, 0, 30);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!((got[0].start, got[0].end), (10, 17));
    }

    #[test]
    fn warm_up_the_partial_last_second_and_a_short_history_are_not_judged() {
        let mut s = vec![100u64; 20];
        s[1] = 10; // warm-up
        s[6] = 10; // 2 seconds of history after warm-up at 4: too few
        s[19] = 5; // the partial last second
        assert_eq!(dips(&s, 4, 19), vec![]);
        s[10] = 10;
        assert_eq!(dips(&s, 4, 19).iter().map(|d| (d.start, d.end)).collect::<Vec<_>>(), vec![(10, 10)]);
        // No throughput before: nothing to fall from.
        assert_eq!(dips(&[0, 0, 0, 0, 0], 0, 5), vec![]);
    }
}
