//! `dbload results list`: which kept runs it shows (`--tag`, `--command`,
//! `--since`) and how each is shown: its headline figures (for a `--runs`
//! entry the median over its runs, not its last run's), its tags, and the
//! flags that set it apart from its neighbours (its command line without
//! the flags every run has: where it connected and where it was kept).

use std::collections::BTreeMap;

use anyhow::Result;
use chrono::{DateTime, NaiveDate, Utc};
use serde_json::Value as Json;

use super::Headline;
use crate::error::usage;
use crate::format::group;

/// Which runs `results list` shows: all of them by default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// `--tag KEY=VALUE`: every one must be among the run's tags.
    pub tags: BTreeMap<String, String>,
    /// `--command NAME`: the report's `command`.
    pub command: Option<String>,
    /// `--since DATE|DURATION`: runs started at or after it.
    pub since: Option<DateTime<Utc>>,
}

impl Filter {
    /// From the flags as given; `now` is what `--since 2h` counts back from.
    pub fn new(tags: &[String], command: Option<String>, since: Option<&str>, now: DateTime<Utc>) -> Result<Filter> {
        let since = since.map(|s| since_of(s, now)).transpose()?;
        Ok(Filter { tags: crate::config::results::tags(tags)?, command, since })
    }

    /// Whether the kept `report` is one to show.
    pub fn matches(&self, report: &Json) -> bool {
        let tag = |k: &str| report.pointer("/run/tags").and_then(|t| t.get(k)).and_then(Json::as_str);
        let started = report.pointer("/run/started_at").and_then(Json::as_str);
        let started = started.and_then(|s| DateTime::parse_from_rfc3339(s).ok());
        self.tags.iter().all(|(k, v)| tag(k) == Some(v.as_str()))
            && self.command.as_ref().is_none_or(|c| report.get("command").and_then(Json::as_str) == Some(c))
            && self.since.is_none_or(|since| started.is_some_and(|s| s >= since))
    }
}

/// `--since`: a date (midnight UTC), an RFC 3339 time, or a duration back
/// from `now` (`2h`, `3days`).
fn since_of(given: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>> {
    if let Ok(day) = NaiveDate::parse_from_str(given, "%Y-%m-%d") {
        return Ok(day.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc());
    }
    if let Ok(at) = DateTime::parse_from_rfc3339(given) {
        return Ok(at.with_timezone(&Utc));
    }
    let back = humantime::parse_duration(given).ok().and_then(|d| chrono::Duration::from_std(d).ok());
    back.and_then(|d| now.checked_sub_signed(d)).ok_or_else(|| {
        usage(format!(
            "--since {given}: not a date (2026-11-28), a time (2026-11-28T09:00:00Z) or a duration back from now (2h, 3days)"
        ))
    })
}

/// One line of `results list`.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub run_id: String,
    pub started_at: String,
    pub command: String,
    pub status: String,
    pub throughput: Option<f64>,
    pub unit: Option<String>,
    pub p99_ms: Option<f64>,
    /// Whether the figures are the median of a `--runs` entry's runs.
    pub median: bool,
    /// Its `run.tags`, as `key=value key=value`.
    pub tags: String,
    /// Its distinctive flags: its command line after the subcommand, without
    /// the flags every run has (where it connected, where it was kept).
    pub flags: String,
}

impl Listed {
    /// The line of the run `run_id` whose kept report is `report`.
    pub fn of(run_id: String, report: &Json) -> Listed {
        let field = |p: &str| report.pointer(p).and_then(Json::as_str).unwrap_or("?").to_string();
        let h = Headline::of(report);
        let median = |name: &str| {
            let figures = report.pointer("/repeat/figures")?;
            let spread = figures.get(name).or_else(|| figures.get(format!("ingest.{name}")))?;
            spread.get("median")?.as_f64()
        };
        let repeated = report.pointer("/repeat/figures").is_some();
        let (throughput, p99_ms) = match repeated {
            true => (h.unit.and_then(|u| median(rate_name(u))), median("p99_ms")),
            false => (h.throughput, h.p99_ms),
        };
        Listed {
            run_id,
            started_at: field("/run/started_at"),
            command: field("/command"),
            status: field("/status"),
            throughput,
            unit: h.unit.map(str::to_string),
            p99_ms,
            median: repeated,
            tags: tags_of(&report["run"]["tags"]),
            flags: flags_of(report.pointer("/run/command_line").and_then(Json::as_str).unwrap_or_default()),
        }
    }
}

/// The repeat figure of a throughput unit (as [`Headline`] names it).
fn rate_name(unit: &str) -> &'static str {
    match unit {
        "rows/s" => "rows_per_sec",
        "queries/s" => "qps",
        _ => "http_reqs_per_sec",
    }
}

/// A report's `run.tags` object as one line (`key=value`, in key order).
fn tags_of(tags: &Json) -> String {
    let pairs = tags.as_object().into_iter().flatten();
    pairs.map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default())).collect::<Vec<_>>().join(" ")
}

/// The flags every run has, whatever it measured: where it connected and
/// where its report went. `true`: the flag takes a value.
const COMMON: [(&str, bool); 8] = [
    ("--url", true),
    ("--results", true),
    ("--results-url", true),
    ("--no-results", false),
    ("--output", true),
    ("--html", true),
    ("--report", true),
    ("--tag", true),
];

/// A kept `command_line`'s arguments after its program and subcommand,
/// without the [`COMMON`] flags, redacted again (a run kept by an older
/// dbload may show more than today's would).
fn flags_of(command_line: &str) -> String {
    let words = shlex::split(command_line).unwrap_or_default();
    let mut kept = Vec::new();
    let mut words = words.into_iter().skip(2);
    while let Some(word) = words.next() {
        let (name, inline) = match word.split_once('=') {
            Some((name, _)) => (name, true),
            None => (word.as_str(), false),
        };
        match COMMON.iter().find(|(flag, _)| *flag == name) {
            Some((_, valued)) => {
                if *valued && !inline {
                    words.next();
                }
            }
            None => kept.push(word),
        }
    }
    crate::redact::command_line(kept)
}

/// The lines as a table, newest first; "median" marks the figures of a
/// `--runs` entry.
pub fn table(runs: &[Listed]) -> String {
    let tags_width = runs.iter().map(|r| r.tags.chars().count()).max().unwrap_or(0).max(4);
    let mut s = format!(
        "{:<36}  {:<20}  {:<16}  {:<11}  {:>29}  {:>10}  {:<tags_width$}  flags\n",
        "run_id", "started_at", "command", "status", "throughput", "p99_ms", "tags"
    );
    for r in runs {
        let throughput = match (r.throughput, &r.unit) {
            (Some(t), Some(u)) => format!("{}{} {u}", if r.median { "median " } else { "" }, group(t.round() as u64)),
            _ => "–".into(),
        };
        let p99 = r.p99_ms.map_or_else(|| "–".into(), |p| format!("{p:.3}"));
        let started = r.started_at.get(..19).map_or(r.started_at.clone(), |s| format!("{s}Z"));
        let line = format!(
            "{:<36}  {:<20}  {:<16}  {:<11}  {throughput:>29}  {p99:>10}  {:<tags_width$}  {}",
            r.run_id, started, r.command, r.status, r.tags, r.flags
        );
        s += line.trim_end();
        s.push('\n');
    }
    if runs.is_empty() {
        s += "(no runs kept match)\n";
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn since_is_a_date_a_time_or_a_duration_back() {
        let now = at("2026-11-28T12:00:00Z");
        assert_eq!(since_of("2026-11-27", now).unwrap(), at("2026-11-27T00:00:00Z"));
        assert_eq!(since_of("2026-11-27T09:30:00+01:00", now).unwrap(), at("2026-11-27T08:30:00Z"));
        assert_eq!(since_of("2h", now).unwrap(), at("2026-11-28T10:00:00Z"));
        let e = since_of("last week", now).unwrap_err();
        assert!(
            crate::error::exit_code(&e) == crate::error::exit::USAGE && e.to_string().contains("--since last week"),
            "{e}"
        );
    }

    #[test]
    fn a_filter_needs_every_tag_the_command_and_the_time() {
        let report =
            json!({"command": "timeit", "run": {"started_at": "2026-11-28T11:00:00.5Z", "tags": {"a": "1", "b": "2"}}});
        let now = at("2026-11-28T12:00:00Z");
        let filter = |tags: &[&str], command: Option<&str>, since: Option<&str>| {
            let tags: Vec<String> = tags.iter().map(|t| t.to_string()).collect();
            Filter::new(&tags, command.map(str::to_string), since, now).unwrap().matches(&report)
        };
        assert!(filter(&["a=1", "b=2"], Some("timeit"), Some("2h")));
        assert!(!filter(&["a=1", "c=3"], None, None));
        assert!(!filter(&["a=2"], None, None));
        assert!(!filter(&[], Some("ingest"), None));
        assert!(!filter(&[], None, Some("30m")));
    }

    #[test]
    fn the_flags_are_those_that_set_a_run_apart() {
        let line = "dbload timeit --url postgres://u:pw@h/db -s 'select 1' --repeat=5 --results /tmp/r --tag a=1 \
                    --output json --no-results --html=x.html -H 'Authorization: Bearer s3cret'";
        assert_eq!(flags_of(line), "-s 'select 1' --repeat=5 -H 'Authorization: ***'");
    }

    #[test]
    fn a_runs_entry_is_listed_by_its_median() {
        let report = json!({"command": "timeit", "status": "ok", "qps": 10.0, "latency_ms": {"p99": 9.0},
            "repeat": {"figures": {"qps": {"median": 20.0}, "p99_ms": {"median": 3.0}}},
            "run": {"started_at": "2026-11-28T11:00:00Z", "command_line": "dbload timeit --runs 3"}});
        let l = Listed::of("id".into(), &report);
        assert_eq!((l.throughput, l.p99_ms, l.median, l.flags.as_str()), (Some(20.0), Some(3.0), true, "--runs 3"));
        assert!(table(&[l]).contains("median 20 queries/s       3.000"));
    }
}
