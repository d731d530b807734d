//! k6's metrics as a script's run makes them: the built-in ones (`http_reqs`,
//! `http_req_duration`, `checks`, `iterations`, ...) and the script's own
//! (`new Trend('notify_ms')`), each of one of k6's four kinds, and the
//! submetrics that thresholds name (`http_req_duration{group:::notify}`):
//! a sample goes to its metric and to every submetric whose tags it has.
//! Trends are HDR histograms (3 significant digits, values in thousandths),
//! not k6's samples kept in memory.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::Serialize;

use super::hist::{new_histogram, record_us};

/// One of k6's metric types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Counter,
    Gauge,
    Rate,
    Trend,
}

impl Kind {
    pub fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "counter" => Kind::Counter,
            "gauge" => Kind::Gauge,
            "rate" => Kind::Rate,
            "trend" => Kind::Trend,
            _ => return None,
        })
    }
}

/// Trend values are kept in thousandths: a time in ms to the µs.
const SCALE: f64 = 1000.0;

/// What one metric (or submetric) holds.
#[derive(Debug, Clone)]
pub struct Series {
    pub kind: Kind,
    /// A time, in ms: shown as one (`avg=1.2ms`).
    pub is_time: bool,
    /// Samples added.
    pub count: u64,
    /// Their sum (a Counter's value).
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    /// A Gauge's last value.
    pub last: f64,
    /// A Rate's non-zero samples.
    pub trues: u64,
    /// A Trend's distribution (in thousandths).
    hist: Option<Histogram<u64>>,
}

impl Series {
    pub fn new(kind: Kind, is_time: bool) -> Series {
        let hist = (kind == Kind::Trend).then(new_histogram);
        Series {
            kind,
            is_time,
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            last: 0.0,
            trues: 0,
            hist,
        }
    }

    pub fn add(&mut self, v: f64) {
        if !v.is_finite() {
            return;
        }
        self.count += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.last = v;
        if v != 0.0 {
            self.trues += 1;
        }
        if let Some(h) = &mut self.hist {
            // Past an hour in µs (a value past 3.6e6 in thousandths) it is
            // recorded as that: the histograms' bound everywhere.
            record_us(h, (v.max(0.0) * SCALE).round() as u64);
        }
    }

    /// A Trend's percentile `p` (0 to 100); a Rate's share of non-zero
    /// samples for `rate`.
    pub fn percentile(&self, p: f64) -> f64 {
        match &self.hist {
            Some(h) if self.count > 0 => h.value_at_quantile(p / 100.0) as f64 / SCALE,
            _ => 0.0,
        }
    }

    /// A Trend's distribution: µs for a time in ms.
    pub fn histogram(&self) -> Option<&Histogram<u64>> {
        self.hist.as_ref().filter(|_| self.count > 0)
    }

    pub fn avg(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    pub fn rate(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.trues as f64 / self.count as f64
        }
    }

    /// min and max as shown: 0 with no samples.
    pub fn bounds(&self) -> (f64, f64) {
        if self.count == 0 {
            (0.0, 0.0)
        } else {
            (self.min, self.max)
        }
    }
}

/// A metric's series restricted to samples with these tags.
#[derive(Debug, Clone)]
struct Sub {
    metric: String,
    /// `metric`'s place once it is declared (a script's metric may be
    /// declared after the thresholds that name it are read).
    id: Option<Id>,
    tags: Vec<(String, String)>,
    series: Series,
}

/// A metric's place in [`Metrics`]: a VU finds the built-in metrics it
/// adds to on each request once ([`Id::builtin`]), not by name per sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Id(usize);

impl Id {
    /// A built-in metric's place: the built-in metrics are the first
    /// series of every [`Metrics`], in [`BUILTIN`]'s order.
    pub fn builtin(name: &str) -> Id {
        Id(BUILTIN.iter().position(|&(n, _, _)| n == name).expect("a built-in metric's name"))
    }
}

/// One check's passes and fails, by name (k6 shows them in the order they
/// were first made).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckTally {
    pub name: String,
    pub passes: u64,
    pub fails: u64,
}

/// The run's metrics; one, behind a lock, that every VU adds to.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    /// Each metric's place in `series`, by name.
    names: BTreeMap<String, Id>,
    series: Vec<Series>,
    subs: Vec<Sub>,
    pub checks: Vec<CheckTally>,
}

/// The built-in metrics, with their kinds: each exists from the start, so
/// a threshold on one is known and the summary shows it even at 0.
pub const BUILTIN: [(&str, Kind, bool); 14] = [
    ("checks", Kind::Rate, false),
    ("data_received", Kind::Counter, false),
    ("data_sent", Kind::Counter, false),
    ("http_req_blocked", Kind::Trend, true),
    ("http_req_connecting", Kind::Trend, true),
    ("http_req_duration", Kind::Trend, true),
    ("http_req_failed", Kind::Rate, false),
    ("http_req_receiving", Kind::Trend, true),
    ("http_req_sending", Kind::Trend, true),
    ("http_req_tls_handshaking", Kind::Trend, true),
    ("http_req_waiting", Kind::Trend, true),
    ("http_reqs", Kind::Counter, false),
    ("iteration_duration", Kind::Trend, true),
    ("iterations", Kind::Counter, false),
];

impl Metrics {
    /// The built-in metrics, and a submetric for each of `subs` (a metric
    /// and the tags its samples must have).
    pub fn new(subs: &[(String, Vec<(String, String)>)]) -> Metrics {
        let mut m = Metrics::default();
        for &(name, kind, is_time) in &BUILTIN {
            m.insert(name, Series::new(kind, is_time));
        }
        for (metric, tags) in subs {
            let series = Series::new(Kind::Trend, false);
            m.subs.push(Sub { metric: metric.clone(), id: None, tags: tags.clone(), series });
        }
        m.fit_subs();
        m
    }

    fn insert(&mut self, name: &str, series: Series) -> Id {
        let id = Id(self.series.len());
        self.series.push(series);
        self.names.insert(name.to_owned(), id);
        id
    }

    /// A submetric takes its metric's place and kind once the metric is known.
    fn fit_subs(&mut self) {
        for s in &mut self.subs {
            if let Some(&id) = self.names.get(&s.metric) {
                s.id = Some(id);
                let m = &self.series[id.0];
                if s.series.count == 0 && (s.series.kind != m.kind || s.series.is_time != m.is_time) {
                    s.series = Series::new(m.kind, m.is_time);
                }
            }
        }
    }

    /// Declares a script's metric (`new Trend(name, isTime)`); declaring it
    /// again with another kind is the script's error.
    pub fn declare(&mut self, name: &str, kind: Kind, is_time: bool) -> Result<(), String> {
        match self.get(name) {
            Some(s) if s.kind != kind => {
                Err(format!("metric {name:?} is already a {:?}; give the new metric another name", s.kind))
            }
            Some(_) => Ok(()),
            None => {
                self.insert(name, Series::new(kind, is_time));
                self.fit_subs();
                Ok(())
            }
        }
    }

    /// A sample of metric `name` with `tags`; an undeclared metric is the
    /// script's error.
    pub fn add(&mut self, name: &str, v: f64, tags: &[(String, String)]) -> Result<(), String> {
        let id = *self.names.get(name).ok_or_else(|| format!("no metric {name:?}"))?;
        self.add_to(id, v, tags);
        Ok(())
    }

    /// A sample of the metric at `id` with `tags`.
    pub fn add_to(&mut self, id: Id, v: f64, tags: &[(String, String)]) {
        self.series[id.0].add(v);
        for sub in self.subs.iter_mut().filter(|s| s.id == Some(id)) {
            if sub.tags.iter().all(|t| tags.contains(t)) {
                sub.series.add(v);
            }
        }
    }

    /// Whether a sample of the metric at `id` needs its tags: some
    /// threshold's submetric of it selects by them.
    pub fn wants_tags(&self, id: Id) -> bool {
        self.subs.iter().any(|s| s.id == Some(id))
    }

    /// A check's result (also a sample of the `checks` rate).
    pub fn check(&mut self, name: &str, ok: bool, tags: &[(String, String)]) {
        let _ = self.add("checks", if ok { 1.0 } else { 0.0 }, tags);
        let i = match self.checks.iter().position(|c| c.name == name) {
            Some(i) => i,
            None => {
                self.checks.push(CheckTally { name: name.to_owned(), passes: 0, fails: 0 });
                self.checks.len() - 1
            }
        };
        if ok {
            self.checks[i].passes += 1;
        } else {
            self.checks[i].fails += 1;
        }
    }

    /// Sets a built-in gauge (`vus`, `vus_max`).
    pub fn set_gauge(&mut self, name: &str, v: f64) {
        let id = match self.names.get(name) {
            Some(&id) => id,
            None => self.insert(name, Series::new(Kind::Gauge, false)),
        };
        self.series[id.0].add(v);
    }

    pub fn get(&self, name: &str) -> Option<&Series> {
        self.names.get(name).map(|id| &self.series[id.0])
    }

    /// The submetric of `metric` with exactly `tags`.
    pub fn sub(&self, metric: &str, tags: &[(String, String)]) -> Option<&Series> {
        self.subs.iter().find(|s| s.metric == metric && s.tags == tags).map(|s| &s.series)
    }

    /// Every metric, by name.
    pub fn all(&self) -> impl Iterator<Item = (&String, &Series)> {
        self.names.iter().map(|(name, id)| (name, &self.series[id.0]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(t: &[(&str, &str)]) -> Vec<(String, String)> {
        t.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn a_sample_goes_to_its_metric_and_the_submetrics_it_matches() {
        let mut m = Metrics::new(&[("http_req_duration".into(), tags(&[("group", "::notify")]))]);
        m.add("http_req_duration", 10.0, &tags(&[("group", "::notify"), ("method", "POST")])).unwrap();
        m.add("http_req_duration", 30.0, &tags(&[("group", "")])).unwrap();
        assert_eq!(m.get("http_req_duration").unwrap().count, 2);
        let sub = m.sub("http_req_duration", &tags(&[("group", "::notify")])).unwrap();
        assert_eq!((sub.count, sub.kind, sub.is_time), (1, Kind::Trend, true));
        assert!((sub.percentile(95.0) - 10.0).abs() < 0.01, "{}", sub.percentile(95.0));
    }

    #[test]
    fn custom_metrics_keep_their_kind() {
        let mut m = Metrics::new(&[]);
        m.declare("errors", Kind::Rate, false).unwrap();
        assert!(m.declare("errors", Kind::Counter, false).is_err());
        m.add("errors", 1.0, &[]).unwrap();
        m.add("errors", 0.0, &[]).unwrap();
        assert_eq!(m.get("errors").unwrap().rate(), 0.5);
        assert!(m.add("nope", 1.0, &[]).is_err());
        m.check("is 200", true, &[]);
        m.check("is 200", false, &[]);
        assert_eq!(m.checks, vec![CheckTally { name: "is 200".into(), passes: 1, fails: 1 }]);
        assert_eq!(m.get("checks").unwrap().rate(), 0.5);
    }
}
