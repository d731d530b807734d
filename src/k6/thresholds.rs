//! k6's thresholds: `thresholds: { 'http_req_duration{group:::notify}':
//! ['p(95)<500'], checks: [{ threshold: 'rate>0.99', abortOnFail: true }] }`,
//! parsed before the run (a malformed one is exit 2, naming it) and judged
//! on the run's metrics at its end; one that fails makes `dbload k6 run`
//! exit 99, as k6 does.

use anyhow::Result;
use serde::Serialize;

use crate::error::usage;
use crate::stats::bound::Op;
use crate::stats::k6::{Kind, Metrics, Series};

/// One threshold expression on one (sub)metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// As written in the options: `http_req_duration{group:::notify}`.
    pub key: String,
    pub metric: String,
    /// The submetric's tags; empty: the whole metric.
    pub tags: Vec<(String, String)>,
    /// As written: `p(95)<500`.
    pub expression: String,
    aggregate: Aggregate,
    op: Op,
    bound: f64,
    /// k6's `abortOnFail`: judged while the run goes (`run::k6`), the run
    /// stopped once it fails.
    pub abort_on_fail: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Aggregate {
    Avg,
    Min,
    Max,
    Med,
    Percentile(f64),
    Count,
    Rate,
    Value,
}

/// A threshold judged: its value and whether it held.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Judged {
    pub metric: String,
    pub threshold: String,
    pub value: f64,
    pub ok: bool,
}

/// `metric{tag:value,...}` → the metric and its tags.
pub fn parse_key(key: &str) -> Result<(String, Vec<(String, String)>)> {
    let bad = |why: &str| usage(format!("options.thresholds {key:?}: {why}"));
    let Some(open) = key.find('{') else { return Ok((key.trim().to_owned(), Vec::new())) };
    let inner = key[open + 1..].strip_suffix('}').ok_or_else(|| bad("a tag filter ends with `}`"))?;
    let mut tags = Vec::new();
    for part in inner.split(',').filter(|p| !p.trim().is_empty()) {
        let (k, v) = part.split_once(':').ok_or_else(|| bad("give each tag as name:value, e.g. {status:200}"))?;
        tags.push((k.trim().to_owned(), v.trim().trim_matches(|c| c == '"' || c == '\'').to_owned()));
    }
    Ok((key[..open].trim().to_owned(), tags))
}

impl Threshold {
    /// One expression of `key`.
    pub fn parse(key: &str, expression: &str, abort_on_fail: bool) -> Result<Threshold> {
        let (metric, tags) = parse_key(key)?;
        let bad = |why: &str| {
            usage(format!(
                "options.thresholds {key:?}: {expression:?}: {why}; write it as k6 does, e.g. 'p(95)<500', \
                 'rate<0.01', 'count>10', 'avg<200'"
            ))
        };
        let e = expression.trim();
        let at = e.find(['<', '>', '=', '!']).ok_or_else(|| bad("no comparison"))?;
        let (lhs, rest) = e.split_at(at);
        // JavaScript's `===` is k6's `==`; the longest operator that matches wins.
        let (op, rhs) = ["===", "<=", ">=", "==", "!=", "<", ">"]
            .iter()
            .find(|s| rest.starts_with(**s))
            .and_then(|s| Some((Op::parse(if *s == "===" { "==" } else { s })?, &rest[s.len()..])))
            .ok_or_else(|| bad("an unknown comparison"))?;
        let rhs = rhs.trim_start_matches('=');
        let bound: f64 = rhs.trim().parse().map_err(|_| bad("the bound is not a number"))?;
        let lhs = lhs.trim();
        let aggregate = match lhs {
            "avg" => Aggregate::Avg,
            "min" => Aggregate::Min,
            "max" => Aggregate::Max,
            "med" => Aggregate::Med,
            "count" => Aggregate::Count,
            "rate" => Aggregate::Rate,
            "value" => Aggregate::Value,
            p => {
                let n = p
                    .strip_prefix("p(")
                    .and_then(|p| p.strip_suffix(')'))
                    .ok_or_else(|| bad("an unknown aggregate"))?;
                let n: f64 = n.trim().parse().map_err(|_| bad("the percentile is not a number"))?;
                if !(0.0..=100.0).contains(&n) {
                    return Err(bad("a percentile is from 0 to 100"));
                }
                Aggregate::Percentile(n)
            }
        };
        Ok(Threshold {
            key: key.to_owned(),
            metric,
            tags,
            expression: expression.to_owned(),
            aggregate,
            op,
            bound,
            abort_on_fail,
        })
    }

    /// Whether its aggregate exists for a metric of `kind` (k6 refuses
    /// `p(95)` on a Counter).
    pub fn fits(&self, kind: Kind) -> Result<()> {
        let ok = match self.aggregate {
            Aggregate::Avg | Aggregate::Min | Aggregate::Max | Aggregate::Med | Aggregate::Percentile(_) => {
                kind == Kind::Trend
            }
            Aggregate::Count => kind == Kind::Counter,
            Aggregate::Rate => kind == Kind::Counter || kind == Kind::Rate,
            Aggregate::Value => kind == Kind::Gauge,
        };
        if ok {
            return Ok(());
        }
        Err(usage(format!(
            "options.thresholds {:?}: {:?}: {} is a {kind:?}, which has no such aggregate (a Trend has avg, min, \
             max, med, p(N); a Counter count and rate; a Rate rate; a Gauge value)",
            self.key, self.expression, self.metric
        )))
    }

    /// The threshold on `metrics` at the end of a run of `duration_s`.
    pub fn judge(&self, metrics: &Metrics, duration_s: f64) -> Judged {
        let value = self.series(metrics).map_or(0.0, |s| self.value_of(s, duration_s));
        let ok = self.op.compare(value, self.bound);
        Judged { metric: self.key.clone(), threshold: self.expression.clone(), value, ok }
    }

    /// Its (sub)metric's samples: none yet, it is not judged while the
    /// run goes (as k6 waits for a metric's first sample).
    pub fn series<'m>(&self, metrics: &'m Metrics) -> Option<&'m Series> {
        if self.tags.is_empty() {
            metrics.get(&self.metric)
        } else {
            metrics.sub(&self.metric, &self.tags)
        }
    }

    fn value_of(&self, s: &Series, duration_s: f64) -> f64 {
        match self.aggregate {
            Aggregate::Avg => s.avg(),
            Aggregate::Min => s.bounds().0,
            Aggregate::Max => s.bounds().1,
            Aggregate::Med => s.percentile(50.0),
            Aggregate::Percentile(p) => s.percentile(p),
            Aggregate::Count => s.sum,
            Aggregate::Rate if s.kind == Kind::Counter => {
                if duration_s > 0.0 {
                    s.sum / duration_s
                } else {
                    0.0
                }
            }
            Aggregate::Rate => s.rate(),
            Aggregate::Value => s.last,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_with_tag_filters() {
        assert_eq!(parse_key("http_req_duration").unwrap(), ("http_req_duration".into(), vec![]));
        let (m, tags) = parse_key("http_req_duration{group:::notify,status:200}").unwrap();
        assert_eq!(m, "http_req_duration");
        assert_eq!(tags, vec![("group".into(), "::notify".into()), ("status".into(), "200".into())]);
        assert!(parse_key("x{group").is_err());
    }

    #[test]
    fn expressions_are_judged_on_their_aggregate() {
        let mut m = Metrics::new(&[]);
        for v in [10.0, 20.0, 30.0, 1000.0] {
            m.add("http_req_duration", v, &[]).unwrap();
        }
        m.add("http_req_failed", 0.0, &[]).unwrap();
        m.add("http_reqs", 4.0, &[]).unwrap();
        let judge = |k: &str, e: &str| Threshold::parse(k, e, false).unwrap().judge(&m, 2.0).ok;
        assert!(judge("http_req_duration", "p(50)<25"));
        assert!(!judge("http_req_duration", "p(95)<500"));
        assert!(judge("http_req_duration", "avg>=265"));
        assert!(judge("http_req_duration", "max == 1000"));
        assert!(judge("http_req_failed", "rate<0.01"));
        assert!(judge("http_reqs", "count>3"));
        assert!(judge("http_reqs", "rate==2"));
    }

    #[test]
    fn malformed_thresholds_are_refused_with_their_key() {
        for e in ["p95<1", "avg", "avg<x", "p(101)<1", "avg~1"] {
            let err = Threshold::parse("http_req_duration", e, false).unwrap_err();
            assert_eq!(crate::error::exit_code(&err), 2);
            assert!(err.to_string().contains("http_req_duration"), "{err}");
        }
        let t = Threshold::parse("http_reqs", "p(95)<1", false).unwrap();
        assert!(t.fits(Kind::Counter).is_err());
    }
}
