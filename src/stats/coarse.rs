//! One second's latencies, kept coarse: what the time charts' p50 and p99
//! per second are read from. A mean and a max per second let one outlier
//! flatten the latency line; percentiles need the second's distribution.
//! An HDR histogram per second and worker (2 KiB at its coarsest, 8 KiB
//! at two digits) would cost an hour's run with 16 workers 100 MiB or
//! more, so a second keeps only the buckets its operations fell in: the
//! octave of the value and 8 linear steps within it (HDR's layout with 3
//! bits of mantissa), at most 6.25 % wide, in a sorted vector of a few
//! dozen entries. The run's own percentiles still come from the full HDR
//! histograms (`hist.rs`).

/// Buckets of one second: `(bucket, count)`, sorted by bucket.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Coarse {
    buckets: Vec<(u16, u32)>,
}

/// Linear steps per octave: 3 bits of the value below its leading one.
const STEP_BITS: u32 = 3;
const STEPS: u64 = 1 << STEP_BITS;

impl Coarse {
    /// Counts a latency of `us` microseconds.
    pub fn record(&mut self, us: u64) {
        let b = bucket(us);
        match self.buckets.binary_search_by_key(&b, |&(k, _)| k) {
            Ok(i) => self.buckets[i].1 = self.buckets[i].1.saturating_add(1),
            Err(i) => self.buckets.insert(i, (b, 1)),
        }
    }

    /// Adds `other`'s counts (another worker's same second).
    pub fn add(&mut self, other: &Coarse) {
        for &(b, n) in &other.buckets {
            match self.buckets.binary_search_by_key(&b, |&(k, _)| k) {
                Ok(i) => self.buckets[i].1 = self.buckets[i].1.saturating_add(n),
                Err(i) => self.buckets.insert(i, (b, n)),
            }
        }
    }

    /// The latency at quantile `q` (0.5: the median) in microseconds, the
    /// middle of its bucket; `None` for a second without operations.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let total: u64 = self.buckets.iter().map(|&(_, n)| u64::from(n)).sum();
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total.max(1));
        let mut seen = 0u64;
        self.buckets.iter().find_map(|&(b, n)| {
            seen += u64::from(n);
            (seen >= rank).then(|| middle(b))
        })
    }
}

/// The bucket of `us`: 0 for 0, then 8 per octave.
fn bucket(us: u64) -> u16 {
    if us == 0 {
        return 0;
    }
    let octave = 63 - us.leading_zeros();
    let step = if octave >= STEP_BITS { us >> (octave - STEP_BITS) } else { us << (STEP_BITS - octave) } & (STEPS - 1);
    (1 + u64::from(octave) * STEPS + step) as u16
}

/// The middle of bucket `b`'s values, in microseconds.
fn middle(b: u16) -> f64 {
    if b == 0 {
        return 0.0;
    }
    let (octave, step) = (u64::from(b - 1) / STEPS, u64::from(b - 1) % STEPS);
    let width = 2f64.powi(octave as i32) / STEPS as f64;
    (STEPS + step) as f64 * width + width / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn an_empty_second_has_no_percentile() {
        assert_eq!(Coarse::default().quantile(0.5), None);
    }

    /// One slow operation among a hundred moves the max, not the median
    /// nor (at 1 %) the p99 by more than its bucket.
    #[test]
    fn percentiles_of_a_second_ignore_one_outlier() {
        let mut c = Coarse::default();
        (0..99).for_each(|_| c.record(1_000));
        c.record(40_000_000);
        let p50 = c.quantile(0.5).unwrap();
        let p99 = c.quantile(0.99).unwrap();
        assert!((p50 - 1_000.0).abs() / 1_000.0 < 0.0625, "{p50}");
        assert!((p99 - 1_000.0).abs() / 1_000.0 < 0.0625, "{p99}");
        assert!(c.quantile(1.0).unwrap() > 37_000_000.0);
    }

    #[test]
    fn seconds_of_two_workers_add_up() {
        let (mut a, mut b) = (Coarse::default(), Coarse::default());
        (0..10).for_each(|_| a.record(100));
        (0..30).for_each(|_| b.record(10_000));
        a.add(&b);
        assert!(a.quantile(0.2).unwrap() < 110.0 && a.quantile(0.5).unwrap() > 9_000.0);
    }

    proptest! {
        /// Any value lands in a bucket whose middle is within its width
        /// (at most 6.25 % of the value) of it.
        #[test]
        fn a_bucket_s_middle_is_near_its_values(us in 1u64..u64::MAX / 2) {
            let m = middle(bucket(us));
            prop_assert!((m - us as f64).abs() <= us as f64 * 0.0625 + 1.0, "{} -> {}", us, m);
        }

        #[test]
        fn buckets_keep_the_order_of_values(a in 0u64..u64::MAX, b in 0u64..u64::MAX) {
            if a <= b {
                prop_assert!(bucket(a) <= bucket(b));
            }
        }
    }
}
