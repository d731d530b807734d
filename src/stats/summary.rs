//! Summary math over a merged histogram: mean, its 95% confidence margin,
//! standard deviation and percentiles, in milliseconds.

use hdrhistogram::Histogram;

/// Latency figures in milliseconds, as reports show them.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::recorder::new_histogram;
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
    }
}
