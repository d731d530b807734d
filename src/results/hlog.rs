//! A run's merged latency histograms in HdrHistogram's interval-log format
//! (`.hlog`: one line per histogram, V2 compressed and base64 encoded, the
//! format of Java's `HistogramLogWriter`), so that HdrHistogram's own tools
//! (`HistogramLogProcessor`, the plotters, any language's reader) open them,
//! and so that runs can later be merged exactly rather than by averaging
//! percentiles. Values are microseconds, as the recorders keep them. With
//! `--runs`, each run is an interval of its own, at its start, under the
//! same tags: the log's readers add a tag's intervals, as ours does.

use std::time::{Duration, UNIX_EPOCH};

use hdrhistogram::serialization::interval_log::{
    IntervalLogHistogram, IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

use crate::outcome::Figures;
use crate::report::meta::RunMeta;

/// The histograms a run keeps, each with its tag: `latency` (from the
/// intended start, what the report's `latency_ms` is made of) and
/// `service` (from the actual start) of its measured operations, prefixed
/// by the part of a mixed run they belong to (`ingest.latency`).
#[derive(Debug, Default)]
pub struct KeptHistograms {
    pub intervals: Vec<Interval>,
}

/// One histogram of the log, and the stretch of the run it covers.
#[derive(Debug)]
pub struct Interval {
    pub tag: String,
    /// From the command's start (the log's `StartTime`).
    pub start: Duration,
    /// The part's measured wall time.
    pub length: Duration,
    pub histogram: Histogram<u64>,
}

impl KeptHistograms {
    /// The measured histograms of one run, which began `start` after the
    /// command did, by its parts: `("", figures)` for a command of one
    /// part; a mixed run names each part.
    pub fn add_run(&mut self, start: Duration, parts: &[(&str, &Figures)]) {
        for (part, figures) in parts {
            let prefix = if part.is_empty() { String::new() } else { format!("{}.", tag_safe(part)) };
            // Every recorder of a part (one per label) merged: the part's total.
            let mut merged: Option<(Histogram<u64>, Histogram<u64>)> = None;
            for r in &figures.recorders {
                match &mut merged {
                    None => merged = Some((r.measured.latency.clone(), r.measured.service.clone())),
                    Some((l, s)) => {
                        l.add(&r.measured.latency).expect("histograms of new_histogram() merge");
                        s.add(&r.measured.service).expect("histograms of new_histogram() merge");
                    }
                }
            }
            for (kind, histogram) in merged.into_iter().flat_map(|(l, s)| [("latency", l), ("service", s)]) {
                let tag = format!("{prefix}{kind}");
                self.intervals.push(Interval { tag, start, length: figures.wall, histogram });
            }
        }
    }
}

/// A tag holds no comma, space or line break (the format's separators).
fn tag_safe(s: &str) -> String {
    s.chars().map(|c| if matches!(c, ',' | ' ' | '\r' | '\n') { '_' } else { c }).collect()
}

/// The interval log of `latencies`: one interval per histogram, at its
/// offset from the command's start (`StartTime` and `BaseTime`), over its
/// measured wall time.
pub fn write(latencies: &KeptHistograms, meta: &RunMeta) -> String {
    let started = chrono::DateTime::parse_from_rfc3339(&meta.started_at)
        .map(|t| UNIX_EPOCH + Duration::from_millis(t.timestamp_millis().max(0) as u64))
        .unwrap_or(UNIX_EPOCH);
    let mut buf = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    let mut writer = IntervalLogWriterBuilder::new()
        .add_comment(&format!("dbload {} run {}: latency histograms in microseconds", meta.dbload_version, meta.run_id))
        .add_comment(&format!("command: {}", meta.command_line))
        .with_start_time(started)
        .with_base_time(started)
        .begin_log_with(&mut buf, &mut serializer)
        .expect("writing to memory");
    for i in &latencies.intervals {
        writer
            .write_histogram(&i.histogram, i.start, i.length, Tag::new(&i.tag))
            .expect("a histogram of new_histogram() serializes into memory");
    }
    String::from_utf8(buf).expect("an interval log is ASCII")
}

/// The histograms of an interval log, by tag (`None` for an untagged one),
/// in the order the tags first appear: a tag's intervals (one per run of
/// `--runs`) added into one.
pub fn read(log: &str) -> anyhow::Result<Vec<(Option<String>, Histogram<u64>)>> {
    let mut deserializer = Deserializer::new();
    let mut found: Vec<(Option<String>, Histogram<u64>)> = Vec::new();
    for entry in IntervalLogIterator::new(log.as_bytes()) {
        let entry = entry.map_err(|e| anyhow::anyhow!("not an HdrHistogram interval log: {e:?}"))?;
        if let LogEntry::Interval(i) = entry {
            let tag = i.tag().map(|t| t.as_str().to_string());
            let mut histogram = decode(&i, &mut deserializer)?;
            // A decoded histogram's range is what it held: a later run's
            // longer latencies widen it.
            histogram.auto(true);
            match found.iter_mut().find(|(t, _)| *t == tag) {
                Some((_, sum)) => {
                    sum.add(&histogram).map_err(|e| anyhow::anyhow!("adding {tag:?}'s intervals: {e:?}"))?
                }
                None => found.push((tag, histogram)),
            }
        }
    }
    Ok(found)
}

fn decode(i: &IntervalLogHistogram, deserializer: &mut Deserializer) -> anyhow::Result<Histogram<u64>> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD.decode(i.encoded_histogram())?;
    deserializer.deserialize(&mut &bytes[..]).map_err(|e| anyhow::anyhow!("a histogram of the log: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::meta::RunStart;
    use crate::stats::hist::record_us;
    use crate::stats::Recorder;

    #[test]
    fn histograms_round_trip_through_the_log() {
        let mut rec = Recorder::default();
        for us in [120, 340, 5_000, 80_000] {
            record_us(&mut rec.measured.latency, us);
            record_us(&mut rec.measured.service, us / 2);
        }
        let figures = Figures { recorders: vec![rec.clone(), rec], wall: Duration::from_secs(3), ..Default::default() };
        let mut kept = KeptHistograms::default();
        kept.add_run(Duration::ZERO, &[("ingest part", &figures)]);
        let log = write(&kept, &RunStart::now("dbload ingest".into()).end());
        assert!(log.lines().any(|l| l.starts_with("Tag=ingest_part.latency,0.000,3.000,")), "{log}");
        let found = read(&log).unwrap();
        assert_eq!(found.len(), 2);
        let (tag, latency) = &found[0];
        assert_eq!(tag.as_deref(), Some("ingest_part.latency"));
        assert_eq!(latency.len(), 8);
        assert_eq!(latency.value_at_quantile(0.99), kept.intervals[0].histogram.value_at_quantile(0.99));
        assert_eq!(*latency, kept.intervals[0].histogram);
        assert!(read(&write(&KeptHistograms::default(), &RunStart::now(String::new()).end())).unwrap().is_empty());
    }

    /// With `--runs`, every run's histograms are kept, each an interval at
    /// its own start; reading the log adds a tag's intervals.
    #[test]
    fn every_run_is_an_interval_and_reading_adds_them() {
        let mut fast = Recorder::default();
        let mut slow = Recorder::default();
        for us in [100, 200, 300] {
            record_us(&mut fast.measured.latency, us);
            record_us(&mut slow.measured.latency, us * 1000);
        }
        let second = Duration::from_secs;
        let run = |rec: &Recorder| Figures { recorders: vec![rec.clone()], wall: second(2), ..Default::default() };
        let mut kept = KeptHistograms::default();
        kept.add_run(second(0), &[("", &run(&fast))]);
        kept.add_run(second(5), &[("", &run(&slow))]);
        let log = write(&kept, &RunStart::now("dbload timeit --runs 2".into()).end());
        let starts: Vec<&str> = log.lines().filter(|l| l.starts_with("Tag=latency,")).map(|l| &l[12..23]).collect();
        assert_eq!(starts, ["0.000,2.000", "5.000,2.000"], "{log}");
        let found = read(&log).unwrap();
        let tags: Vec<_> = found.iter().map(|(t, h)| (t.as_deref().unwrap(), h.len())).collect();
        assert_eq!(tags, [("latency", 6), ("service", 0)]);
        assert_eq!(found[0].1.max(), slow.measured.latency.max());
    }
}
