//! The statistics of repeated runs: the median of a figure over the runs,
//! a distribution-free 95 % confidence interval of that median, and for
//! `dbload compare` a bootstrap confidence interval of the ratio of two
//! medians with the exact Mann–Whitney test beside it: a difference is
//! called only with [`MIN_RUNS`] runs a side, when both agree. A run's figures are few (a handful of repeats) and need not
//! be normally distributed (a stall makes one run slow), so nothing here
//! assumes a distribution.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

/// The most runs `--runs` takes: beyond it the binomial weights of the
/// order-statistic interval (0.5^N) leave what an `f64` holds, and no one
/// repeats a benchmark a thousand times.
pub const MAX_RUNS: u32 = 1000;

/// The confidence the intervals aim at.
const CONFIDENCE: f64 = 0.95;

/// The median of `xs` (the mean of the two middle values for an even
/// count); `None` for no values.
pub fn median(xs: &[f64]) -> Option<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    median_of_sorted(&v)
}

fn median_of_sorted(v: &[f64]) -> Option<f64> {
    let n = v.len();
    match n {
        0 => None,
        n if n % 2 == 1 => Some(v[n / 2]),
        n => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// A figure over repeated runs: median, range, and the 95 % interval of
/// the median.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// The interval of the median, from order statistics: the `k`-th
    /// smallest and `k`-th largest run.
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// How often an interval made this way holds the true median (at least
    /// 0.95 from 6 runs on; below it for fewer runs, whose widest interval,
    /// min..max, covers only 1 − 2^(1−N): 0.9375 for 5 runs, 0.75 for 3, 0
    /// for one).
    pub ci_coverage: f64,
}

impl Spread {
    /// `None` for no values.
    pub fn of(xs: &[f64]) -> Option<Spread> {
        let mut v = xs.to_vec();
        v.sort_by(f64::total_cmp);
        let median = median_of_sorted(&v)?;
        let (k, coverage) = median_rank(v.len());
        let n = v.len();
        Some(Spread {
            median,
            min: v[0],
            max: v[n - 1],
            ci95_low: v[k - 1],
            ci95_high: v[n - k],
            ci_coverage: coverage,
        })
    }
}

/// The rank `k` (1-based) of the distribution-free interval
/// [X(k), X(n+1−k)] of the median of `n` values, and its coverage:
/// 1 − 2·P(Bin(n, ½) ≤ k−1). The largest `k` whose coverage is at least
/// 95 %; with fewer than 6 values none reaches it and `k` is 1 (min..max).
fn median_rank(n: usize) -> (usize, f64) {
    debug_assert!(n >= 1 && n <= MAX_RUNS as usize);
    // P(Bin(n, ½) = i), from i = 0 up, and the running sum P(Bin ≤ i).
    let mut term = 0.5f64.powi(n as i32);
    let mut below = 0.0;
    let mut best = (1, 1.0 - 2.0 * term);
    for k in 1..=n.div_ceil(2) {
        // Here `below` is P(Bin ≤ k − 2) and `term` is P(Bin = k − 1).
        below += term;
        let coverage = 1.0 - 2.0 * below;
        if coverage < CONFIDENCE {
            break;
        }
        best = (k, coverage);
        term *= (n - (k - 1)) as f64 / k as f64;
    }
    best
}

/// Resamples the bootstrap draws: 10,000 gives the 2.5 % and 97.5 %
/// percentiles to about ±0.3 percentage points of coverage.
pub const RESAMPLES: usize = 10_000;

/// The seed of the bootstrap: the same reports always get the same verdict.
pub const SEED: u64 = 16;

/// `b / a`, with 0 / 0 = 1 (two runs without errors are alike) and
/// x / 0 = ∞ for x > 0.
pub fn ratio(a: f64, b: f64) -> f64 {
    if a != 0.0 {
        b / a
    } else if b == 0.0 {
        1.0
    } else {
        f64::INFINITY
    }
}

/// The 95 % percentile-bootstrap interval of median(b) / median(a): each
/// of [`RESAMPLES`] draws resamples `a` and `b` with replacement (each its
/// own size), and the 2.5 % and 97.5 % percentiles of the draws' ratios
/// are the interval. Seeded ([`SEED`]), so it is reproducible. `None`
/// unless both sides have at least two values (one run says nothing of
/// its noise). With few values it is too narrow: for 3 a side it is
/// [min b / max a, max b / min a] (each extreme pairing is drawn 6.7 % of
/// the time), which excludes 1 whenever the runs do not overlap, as two
/// equal setups' runs do not for 1 figure in 10.
pub fn ratio_ci95(a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut draw = vec![0.0; a.len().max(b.len())];
    let mut resampled_median = |xs: &[f64], rng: &mut ChaCha8Rng| {
        let d = &mut draw[..xs.len()];
        for slot in d.iter_mut() {
            *slot = xs[rng.random_range(0..xs.len())];
        }
        d.sort_by(f64::total_cmp);
        median_of_sorted(d).expect("not empty")
    };
    let mut ratios: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let ma = resampled_median(a, &mut rng);
            let mb = resampled_median(b, &mut rng);
            ratio(ma, mb)
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    let at = |q: f64| ratios[((q * RESAMPLES as f64).round() as usize).min(RESAMPLES - 1)];
    Some((at(tail), at(1.0 - tail)))
}

/// The fewest runs a side for a verdict. The rank test below cannot call
/// a difference with fewer: with 3 runs a side its smallest two-sided
/// p-value is 2/20 = 0.1, with 4 it is 2/70 ≈ 0.029. (The bootstrap alone,
/// with 3 a side, calls a false difference on about 1 figure in 10:
/// `compare::tests::identical_setups_get_a_false_verdict_at_most_one_figure_in_twenty`.)
pub const MIN_RUNS: usize = 4;

/// The two-sided p-value below which the rank test calls a difference.
pub const ALPHA: f64 = 1.0 - CONFIDENCE;

/// The two-sided p-value of the Mann–Whitney U test that `a` and `b` come
/// from one distribution, from U's exact null distribution (every split
/// of the pooled runs equally likely), so its level is what it says for
/// any distribution of the runs and any number of them. Ties count a
/// half; the exact distribution is the tie-free one and the half is
/// rounded towards 1, which makes ties conservative. 1 for an empty side.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 1.0;
    }
    let pairs = a.len() * b.len();
    let u: f64 = a
        .iter()
        .flat_map(|x| {
            b.iter().map(move |y| {
                if x < y {
                    1.0
                } else if x == y {
                    0.5
                } else {
                    0.0
                }
            })
        })
        .sum();
    let smaller = u.min(pairs as f64 - u);
    let at_most = if a.len().min(b.len()) <= EXACT_UP_TO {
        u_null_distribution(a.len(), b.len())[..=smaller.round() as usize].iter().sum::<f64>()
    } else {
        // U's normal approximation, with continuity correction.
        let (n, m) = (a.len() as f64, b.len() as f64);
        let z = (smaller.round() + 0.5 - n * m / 2.0) / (n * m * (n + m + 1.0) / 12.0).sqrt();
        standard_normal_cdf(z)
    };
    (2.0 * at_most).min(1.0)
}

/// The most runs on the smaller side for which U's distribution is
/// computed exactly: beyond, the cancellations of [`u_null_distribution`]
/// grow past 1e-12, and the normal approximation is closer than that.
const EXACT_UP_TO: usize = 50;

/// Φ(z), from erfc's rational approximation (Abramowitz and Stegun
/// 7.1.26, absolute error below 1.5e-7): plenty for a p-value weighed
/// against 0.05.
fn standard_normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    if z >= 0.0 {
        1.0 - erfc / 2.0
    } else {
        erfc / 2.0
    }
}

/// P(U = u) for u = 0..=n·m with no ties and no difference: the
/// coefficients of the Gaussian binomial [n+m choose n]_q, built as the
/// product of (1 − q^(m+i)) / (1 − q^i) for i = 1..=min(n, m), each step
/// scaled by i / (m+i) so that the coefficients stay probabilities (the
/// counts themselves, C(n+m, n) in all, leave an `f64` near 500 a side).
/// Exact to 1e-12 up to [`EXACT_UP_TO`] on the smaller side.
fn u_null_distribution(n: usize, m: usize) -> Vec<f64> {
    let (n, m) = (n.min(m), n.max(m));
    let mut p = vec![1.0];
    for i in 1..=n {
        let mut next = vec![0.0; i * m + i + 1];
        for (k, &c) in p.iter().enumerate() {
            next[k] += c;
            next[k + m + i] -= c;
        }
        for k in i..next.len() {
            next[k] += next[k - i];
        }
        next.truncate(i * m + 1);
        let scale = i as f64 / (m + i) as f64;
        next.iter_mut().for_each(|c| *c *= scale);
        p = next;
    }
    p
}

/// How the runs of two setups compare on one figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Difference {
    /// A side has fewer than [`MIN_RUNS`] runs: no verdict.
    TooFewRuns { single: bool },
    /// Judged: `b` is higher, lower or neither, with the interval of
    /// median(b) / median(a) and the rank test's p-value.
    Judged { ci95: (f64, f64), p: f64, shift: Option<std::cmp::Ordering> },
}

/// Whether `b` differs from `a` beyond noise: only with [`MIN_RUNS`] runs
/// a side or more, and only when both the bootstrap interval of the ratio
/// of medians excludes 1 and the exact rank test's p-value is below
/// [`ALPHA`]. The interval says how large the difference is; the rank
/// test keeps the false verdicts at 5 % however few the runs, where the
/// bootstrap alone is too narrow.
pub fn difference(a: &[f64], b: &[f64]) -> Difference {
    if a.len() < MIN_RUNS || b.len() < MIN_RUNS {
        return Difference::TooFewRuns { single: a.len() < 2 || b.len() < 2 };
    }
    let ci95 = ratio_ci95(a, b).expect("two runs a side or more");
    let p = mann_whitney_p(a, b);
    Difference::Judged { ci95, p, shift: shift(ci95, p) }
}

/// The verdict of [`difference`]: which way `b` lies from `a`, when both
/// tests agree that it does.
fn shift((low, high): (f64, f64), p: f64) -> Option<std::cmp::Ordering> {
    match p < ALPHA {
        true if low > 1.0 => Some(std::cmp::Ordering::Greater),
        true if high < 1.0 => Some(std::cmp::Ordering::Less),
        _ => None,
    }
}

/// [`difference`]'s verdict alone, bootstrapping only when the rank test
/// has found a difference (it decides first, and alone it is cheap): what
/// the simulations of `compare`'s tests call thousands of times.
#[cfg(test)]
pub(crate) fn beyond_noise(a: &[f64], b: &[f64]) -> Option<std::cmp::Ordering> {
    if a.len() < MIN_RUNS || b.len() < MIN_RUNS {
        return None;
    }
    let p = mann_whitney_p(a, b);
    if p >= ALPHA {
        return None;
    }
    shift(ratio_ci95(a, b)?, p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_none() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[3.0, 1.0]), Some(2.0));
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }

    #[test]
    fn one_run_is_its_own_interval_with_no_coverage() {
        let s = Spread::of(&[42.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.ci95_low, s.ci95_high), (42.0, 42.0, 42.0, 42.0, 42.0));
        assert_eq!(s.ci_coverage, 0.0);
    }

    #[test]
    fn two_runs_give_min_to_max_at_half_coverage() {
        let s = Spread::of(&[2.0, 1.0]).unwrap();
        assert_eq!((s.median, s.ci95_low, s.ci95_high), (1.5, 1.0, 2.0));
        assert_eq!(s.ci_coverage, 0.5);
    }

    #[test]
    fn equal_values_give_a_point() {
        let s = Spread::of(&[3.0; 9]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.ci95_low, s.ci95_high), (3.0, 3.0, 3.0, 3.0, 3.0));
    }

    /// Below 6 runs min..max is the best there is, and its coverage is
    /// said (1 − 2^(1−N)); from 6 on, the interval reaches 95 %.
    #[test]
    fn coverage_below_and_from_six_runs() {
        assert_eq!(median_rank(3), (1, 0.75));
        assert_eq!(median_rank(5), (1, 0.9375));
        assert_eq!(median_rank(6), (1, 0.96875));
        // Textbook ranks (e.g. Conover, table A3): n = 9 → k = 2, n = 20 → k = 6.
        assert_eq!(median_rank(9).0, 2);
        assert_eq!(median_rank(20).0, 6);
        let (k, coverage) = median_rank(100);
        assert_eq!(k, 40);
        assert!((0.95..0.97).contains(&coverage), "{coverage}");
        let (_, coverage) = median_rank(MAX_RUNS as usize);
        assert!(coverage >= 0.95 && coverage.is_finite(), "{coverage}");
    }

    #[test]
    fn interval_holds_the_median_and_lies_within_the_range() {
        let xs: Vec<f64> = (1..=20).map(|i| (i * 37 % 20) as f64).collect();
        let s = Spread::of(&xs).unwrap();
        assert!(s.min <= s.ci95_low && s.ci95_low <= s.median && s.median <= s.ci95_high && s.ci95_high <= s.max);
        assert_eq!((s.ci95_low, s.ci95_high), (5.0, 14.0));
    }

    #[test]
    fn ratio_of_zeros_is_one_and_of_nothing_infinite() {
        assert_eq!(ratio(0.0, 0.0), 1.0);
        assert_eq!(ratio(0.0, 2.0), f64::INFINITY);
        assert_eq!(ratio(4.0, 2.0), 0.5);
    }

    #[test]
    fn bootstrap_needs_two_runs_a_side() {
        assert_eq!(ratio_ci95(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(ratio_ci95(&[1.0, 2.0], &[1.0]), None);
    }

    #[test]
    fn bootstrap_of_equal_runs_is_exactly_one() {
        assert_eq!(ratio_ci95(&[5.0, 5.0, 5.0], &[5.0, 5.0]), Some((1.0, 1.0)));
        assert_eq!(ratio_ci95(&[0.0, 0.0], &[0.0, 0.0]), Some((1.0, 1.0)));
    }

    #[test]
    fn bootstrap_separates_distinct_runs_and_not_overlapping_ones() {
        let a = [100.0, 101.0, 99.0, 100.5, 99.5];
        let half: Vec<f64> = a.iter().map(|x| x / 2.0).collect();
        let (lo, hi) = ratio_ci95(&a, &half).unwrap();
        assert!(lo > 0.48 && hi < 0.52, "{lo}..{hi}");
        let (lo, hi) = ratio_ci95(&a, &[99.0, 101.0, 100.0, 100.2, 99.8]).unwrap();
        assert!(lo < 1.0 && hi > 1.0, "{lo}..{hi}");
    }

    /// The documented limit: with 3 runs a side the interval is the
    /// extreme pairings, so runs that do not overlap always exclude 1.
    #[test]
    fn bootstrap_of_three_runs_a_side_is_the_extreme_pairings() {
        let (lo, hi) = ratio_ci95(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert_eq!((lo, hi), (4.0 / 3.0, 6.0));
    }

    /// Textbook values of the exact test: 3 against 3 apart is 2/20, 4
    /// against 4 apart is 2/70; equal runs are 1; the null distribution
    /// sums to 1 even where the counts would overflow.
    #[test]
    fn mann_whitney_exact_p_values() {
        assert!((mann_whitney_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]) - 0.1).abs() < 1e-12);
        assert!((mann_whitney_p(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]) - 2.0 / 70.0).abs() < 1e-12);
        assert!((mann_whitney_p(&[5.0, 6.0, 7.0, 8.0], &[1.0, 2.0, 3.0, 4.0]) - 2.0 / 70.0).abs() < 1e-12);
        // One of the 4 a side crosses: U = 1, P(U ≤ 1) = 2/70.
        assert!((mann_whitney_p(&[1.0, 2.0, 3.0, 5.5], &[5.0, 6.0, 7.0, 8.0]) - 4.0 / 70.0).abs() < 1e-12);
        assert_eq!(mann_whitney_p(&[0.0; 5], &[0.0; 5]), 1.0);
        assert_eq!(mann_whitney_p(&[], &[1.0]), 1.0);
        let big = u_null_distribution(EXACT_UP_TO, 70);
        assert!((big.iter().sum::<f64>() - 1.0).abs() < 1e-12 && big.iter().all(|p| *p > -1e-12));
        // Beyond, the normal approximation: 60 a side shifted by 5, the
        // smaller U = 1512.5 (55 ties count a half), rounded to 1513;
        // z = (1513.5 − 1800) / √36300 = −1.504, p = 2·Φ(z) = 0.133.
        let a: Vec<f64> = (0..60).map(f64::from).collect();
        let b: Vec<f64> = (5..65).map(f64::from).collect();
        let p = mann_whitney_p(&a, &b);
        assert!((p - 0.1326).abs() < 0.001, "{p}");
        assert!((standard_normal_cdf(-1.959_964) - 0.025).abs() < 1e-6);
        let small = u_null_distribution(2, 3);
        let want = [0.1, 0.1, 0.2, 0.2, 0.2, 0.1, 0.1];
        assert!(small.iter().zip(want).all(|(p, w)| (p - w).abs() < 1e-12) && small.len() == 7, "{small:?}");
    }

    #[test]
    fn no_difference_is_called_below_the_fewest_runs() {
        let (a, b) = ([1.0, 2.0, 3.0], [40.0, 50.0, 60.0]);
        assert_eq!(difference(&a, &b), Difference::TooFewRuns { single: false });
        assert_eq!(difference(&a, &[9.0]), Difference::TooFewRuns { single: true });
        let Difference::Judged { shift, .. } = difference(&[1.0, 2.0, 3.0, 4.0], &[40.0, 50.0, 60.0, 70.0]) else {
            panic!("4 a side are judged");
        };
        assert_eq!(shift, Some(std::cmp::Ordering::Greater));
        for (a, b) in [([1.0, 2.0, 3.0, 4.0], [2.5, 3.5, 4.5, 5.5]), ([1.0, 2.0, 3.0, 4.0], [0.1, 0.2, 0.3, 0.4])] {
            let Difference::Judged { shift, .. } = difference(&a, &b) else { panic!("judged") };
            assert_eq!(beyond_noise(&a, &b), shift);
        }
    }

    #[test]
    fn bootstrap_is_reproducible() {
        let (a, b) = ([1.0, 3.0, 2.0, 5.0], [2.0, 4.0, 3.0]);
        assert_eq!(ratio_ci95(&a, &b), ratio_ci95(&a, &b));
    }
}
