//! Summary math over a merged histogram: mean, its 95% confidence margin,
//! standard deviation and percentiles, in milliseconds, and the percentile
//! spectrum that the HTML report draws.

use hdrhistogram::Histogram;

/// Latency figures in milliseconds, as reports show them.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct LatencySummary {
    pub count: u64,
    pub mean: f64,
    /// Half-width of the 95% confidence interval of the mean (1.96 σ/√n):
    /// what cr8 prints after `mean ±`, named for what it is.
    pub mean_ci95: f64,
    pub stdev: f64,
    pub min: f64,
    pub max: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p99_9: f64,
}

fn ms(us: f64) -> f64 {
    us / 1000.0
}

impl LatencySummary {
    /// `None` when nothing was recorded (no figure is better than a zero).
    pub fn of(h: &Histogram<u64>) -> Option<LatencySummary> {
        if h.is_empty() {
            return None;
        }
        let n = h.len();
        let stdev = h.stdev();
        let q = |p: f64| ms(h.value_at_quantile(p) as f64);
        Some(LatencySummary {
            count: n,
            mean: ms(h.mean()),
            mean_ci95: ms(1.96 * stdev / (n as f64).sqrt()),
            stdev: ms(stdev),
            min: ms(h.min() as f64),
            max: ms(h.max() as f64),
            p50: q(0.50),
            p90: q(0.90),
            p95: q(0.95),
            p99: q(0.99),
            p99_9: q(0.999),
        })
    }
}

/// How far the spectrum reaches, in nines (−log10(1 − q)): 4 is 99.99 %.
/// Beyond it a histogram of a few thousand operations holds only its max.
const SPECTRUM_NINES: u32 = 4;
/// Points per nine: 10 draw a smooth curve on a log axis of nines (41
/// points and the max: small enough to go in every report).
const POINTS_PER_NINE: u32 = 10;

/// One point of a latency spectrum: `percentile` % of the operations took
/// at most `ms`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SpectrumPoint {
    pub percentile: f64,
    pub ms: f64,
}

impl SpectrumPoint {
    /// Where the point sits on a log axis of nines, as HdrHistogram's
    /// percentile plots draw it: 0 for 0 %, 1 for 90 %, 2 for 99 %;
    /// infinite for the max (100 %). Rounded to a millionth, so that
    /// 99.99 % is 4 exactly (in floating point it is 3.9999999999996), and
    /// an axis that ends there has its tick.
    pub fn nines(&self) -> f64 {
        (-(1.0 - self.percentile / 100.0).log10() * 1e6).round() / 1e6
    }
}

/// The latency at every tenth of a nine from 0 % to 99.99 %, then the max
/// (as percentile 100): the whole distribution, where a few percentiles
/// hide its tail. `None` when nothing was recorded.
pub fn spectrum(h: &Histogram<u64>) -> Option<Vec<SpectrumPoint>> {
    if h.is_empty() {
        return None;
    }
    let steps = SPECTRUM_NINES * POINTS_PER_NINE;
    let levels = (0..=steps).map(|i| {
        let q = 1.0 - 10f64.powf(-f64::from(i) / f64::from(POINTS_PER_NINE));
        // Four decimals of a percent tell the levels apart and keep the JSON short.
        let percentile = (q * 100.0 * 1e4).round() / 1e4;
        SpectrumPoint { percentile, ms: ms(h.value_at_quantile(percentile / 100.0) as f64) }
    });
    Some(levels.chain([SpectrumPoint { percentile: 100.0, ms: ms(h.max() as f64) }]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::hist::new_histogram;
    use rand::{RngExt, SeedableRng};

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-9)
    }

    #[test]
    fn uniform_distribution() {
        // 1..=100_000 µs uniformly: mean 50 ms, stdev 100/√12 ms, pN = N ms.
        let mut h = new_histogram();
        for us in 1..=100_000u64 {
            h.record(us).unwrap();
        }
        let s = LatencySummary::of(&h).unwrap();
        assert!(close(s.mean, 50.0, 0.001), "{s:?}");
        assert!(close(s.stdev, 100.0 / 12f64.sqrt(), 0.001), "{s:?}");
        assert!(close(s.p50, 50.0, 0.001) && close(s.p99, 99.0, 0.001) && close(s.p99_9, 99.9, 0.001));
        assert_eq!(s.min, 0.001);
        assert!(close(s.max, 100.0, 0.001));
        assert!(close(s.mean_ci95, 1.96 * s.stdev / (100_000f64).sqrt(), 1e-9));
    }

    #[test]
    fn exponential_distribution() {
        // Exponential with mean 10 ms: stdev 10 ms, p99 = 10·ln(100) ms.
        let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(1);
        let mut h = new_histogram();
        for _ in 0..200_000 {
            let u: f64 = rng.random();
            h.record((-(1.0 - u).ln() * 10_000.0) as u64 + 1).unwrap();
        }
        let s = LatencySummary::of(&h).unwrap();
        assert!(close(s.mean, 10.0, 0.02), "{s:?}");
        assert!(close(s.stdev, 10.0, 0.03), "{s:?}");
        assert!(close(s.p99, 10.0 * 100f64.ln(), 0.03), "{s:?}");
        assert!(close(s.p50, 10.0 * 2f64.ln(), 0.02), "{s:?}");
    }

    #[test]
    fn empty_has_no_summary() {
        assert_eq!(LatencySummary::of(&new_histogram()), None);
        assert_eq!(spectrum(&new_histogram()), None);
    }

    #[test]
    fn the_spectrum_climbs_to_99_99_and_ends_at_the_max() {
        // 1..=100_000 µs uniformly: the latency at percentile p is p ms.
        let mut h = new_histogram();
        for us in 1..=100_000u64 {
            h.record(us).unwrap();
        }
        let points = spectrum(&h).unwrap();
        assert_eq!(points.len(), 42, "41 levels to 99.99 % and the max");
        assert!(points.windows(2).all(|w| w[0].percentile < w[1].percentile && w[0].ms <= w[1].ms), "{points:?}");
        let at = |p: f64| points.iter().find(|x| x.percentile == p).map(|x| x.ms);
        let s = LatencySummary::of(&h).unwrap();
        assert_eq!((at(0.0), at(90.0), at(99.0), at(99.9)), (Some(s.min), Some(s.p90), Some(s.p99), Some(s.p99_9)));
        assert!(at(99.99).is_some_and(|ms| close(ms, 99.99, 0.001)), "{points:?}");
        assert_eq!(points.last(), Some(&SpectrumPoint { percentile: 100.0, ms: s.max }));
        assert_eq!((points[20].nines(), points[40].nines()), (2.0, 4.0), "99 % and 99.99 % on their ticks");
        assert!(points[41].nines().is_infinite());
    }
}
