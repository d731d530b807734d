//! `--instance I/N` and its company resolved once: which part of a
//! distributed run this process is, how it starts together with the
//! others, and its share of the work. N instances started with the same
//! options do together what one process would: the work is cut along the
//! workers, numbered across the instances (instance `i` of `N`, with `W`
//! workers each, runs workers `i*W .. (i+1)*W` of `N*W`), so device ids,
//! seeds and row counts are those of one process with `N*W` workers.

use std::time::Duration;

use anyhow::Result;
use chrono::{DateTime, Utc};

use super::OutputConfig;
use crate::cli::ScaleArgs;
use crate::error::usage;

/// The most instances of one run (a registration row and a connection to
/// the results store each).
pub const MAX_INSTANCES: u32 = 10_000;

/// This process's part of a distributed run.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    /// 0-based.
    pub index: u32,
    pub count: u32,
    /// `--run-id`: shared by the instances.
    pub run_id: String,
    pub start: StartRule,
}

/// How the instances start together.
#[derive(Debug, Clone, PartialEq)]
pub enum StartRule {
    /// Register in the `--results-url` store and wait (at most this long)
    /// for the others; the server's clock sets the common start.
    Register { timeout: Duration },
    /// `--start-at`: at this time of this machine's clock.
    At(DateTime<Utc>),
}

impl Instance {
    /// None without `--instance`. `results_url`: whether the run has a
    /// store to register in. `runs`: `--runs`, refused with `--instance`.
    pub fn resolve(a: ScaleArgs, results_url: bool, runs: u32) -> Result<Option<Instance>> {
        let Some(given) = a.instance else { return Ok(None) };
        let (index, count) = parse(&given)?;
        if runs > 1 {
            return Err(usage(format!(
                "--instance {given} with --runs {runs}: repeats of a distributed run are distributed runs of their \
                 own; start the instances again with another --run-id for each"
            )));
        }
        let run_id = a.run_id.unwrap_or_default();
        if run_id.is_empty() || run_id.len() > 200 || run_id.chars().any(char::is_control) {
            return Err(usage(format!(
                "--run-id {run_id:?}: give 1 to 200 printable characters (e.g. nightly-42), the same for every instance"
            )));
        }
        let start = match (a.start_at, results_url) {
            (Some(at), _) => StartRule::At(
                DateTime::parse_from_rfc3339(&at)
                    .map_err(|e| {
                        usage(format!("--start-at {at:?}: {e}; give an RFC 3339 time like 2026-11-24T12:00:00Z"))
                    })?
                    .with_timezone(&Utc),
            ),
            (None, true) => StartRule::Register { timeout: a.start_timeout },
            (None, false) => {
                return Err(usage(format!(
                    "--instance {given}: the instances start together by registering in --results-url URL; give it, \
                     or --start-at TIME for a store that cannot coordinate"
                )))
            }
        };
        Ok(Some(Instance { index, count, run_id, start }))
    }

    /// This instance's workers' shares of `total`, which is split across
    /// all `count * workers` workers of the run as one process splits it
    /// across its own (the first ones taking one more).
    pub fn shares(&self, total: u64, workers: u32) -> Vec<u64> {
        let all = self.count as u64 * workers as u64;
        let first = self.index as u64 * workers as u64;
        (first..first + workers as u64).map(|w| total / all + u64::from(w < total % all)).collect()
    }

    /// The whole run's workers: `workers` in each instance.
    pub fn all_workers(&self, workers: u32) -> u32 {
        self.count * workers
    }

    /// This instance's number of its first worker among all the run's.
    pub fn first_worker(&self, workers: u32) -> u32 {
        self.index * workers
    }

    /// This instance's part of a rate given for the whole run.
    pub fn rate(&self, rate: f64) -> f64 {
        rate / self.count as f64
    }
}

/// `I/N`: 0 ≤ I < N ≤ [`MAX_INSTANCES`].
pub fn parse(s: &str) -> Result<(u32, u32)> {
    let bad = |why: &str| usage(format!("--instance {s:?}: {why}; give I/N, e.g. 0/4 for the first of four instances"));
    let (i, n) = s.split_once('/').ok_or_else(|| bad("no '/'"))?;
    let (i, n): (u32, u32) = match (i.trim().parse(), n.trim().parse()) {
        (Ok(i), Ok(n)) => (i, n),
        _ => return Err(bad("I and N are whole numbers")),
    };
    if n == 0 || n > MAX_INSTANCES {
        return Err(bad(&format!("N is 1 to {MAX_INSTANCES}")));
    }
    if i >= n {
        return Err(bad(&format!("I counts from 0, so it is below N ({n})")));
    }
    Ok((i, n))
}

/// The output settings of a command that plays no part in a distributed
/// run: `--instance` refused, naming the command and why.
pub fn alone(output: OutputConfig, command: &str, why: &str) -> Result<OutputConfig> {
    match &output.instance {
        None => Ok(output),
        Some(i) => Err(usage(format!("--instance {}/{}: {command} {why}", i.index, i.count))),
    }
}

/// What may differ between the instances of one run: which instance
/// each is and how it starts, where it reports and keeps its run, how its
/// report is judged (`--fail-if`), where it serves its live metrics
/// (`--metrics-listen`: each instance its own port), and what it reads (positional inputs:
/// insert-json reads its own).
const PER_INSTANCE: [&str; 15] = [
    "fail_if",
    "metrics_listen",
    "instance",
    "run_id",
    "start_timeout",
    "start_at",
    "output",
    "report",
    "html",
    "quiet",
    "progress",
    "results",
    "no_results",
    "results_url",
    "tag",
];

/// An option given on a command line: its flag and its values.
type Given = (String, Vec<String>);

/// The options the instances of a run were started with that differ
/// between them, each as `--batch-size: 1000 (instance 0), 5000
/// (instance 1)`: instances started alike do together what one process
/// would, and a merge of unlike ones would report a run nobody made. Read
/// from their command lines as kept (`run.command_line`, passwords
/// hidden alike), parsed by the same definitions as the instances' own.
pub fn differing_options(command_lines: &[(u32, &str)]) -> Vec<String> {
    use clap::CommandFactory;
    let command = crate::cli::Cli::command();
    let options = |line: &str| -> Option<Vec<Given>> {
        let words = shlex::split(line)?;
        let matches = command.clone().try_get_matches_from(words).ok()?;
        let (name, sub) = matches.subcommand()?;
        let definition = command.find_subcommand(name)?;
        let mut given: Vec<Given> = definition
            .get_arguments()
            .filter(|a| !a.is_positional() && !PER_INSTANCE.contains(&a.get_id().as_str()))
            .filter(|a| sub.value_source(a.get_id().as_str()) == Some(clap::parser::ValueSource::CommandLine))
            .map(|a| {
                let values = sub.get_raw(a.get_id().as_str()).into_iter().flatten();
                let flag =
                    a.get_long().map_or_else(|| format!("-{}", a.get_short().unwrap_or('?')), |l| format!("--{l}"));
                (flag, values.map(|v| v.to_string_lossy().into_owned()).collect())
            })
            .collect();
        given.sort();
        Some(given)
    };
    // A command line this version cannot read (another version's) is not
    // compared: nothing can be said of its options.
    let parsed: Vec<(u32, Vec<Given>)> =
        command_lines.iter().filter_map(|(i, line)| Some((*i, options(line)?))).collect();
    let mut flags: Vec<&String> = parsed.iter().flat_map(|(_, o)| o.iter().map(|(f, _)| f)).collect();
    flags.sort();
    flags.dedup();
    let shown = |values: Option<&Vec<String>>| match values {
        Some(v) if v.is_empty() => "given".to_string(),
        Some(v) => v.join(" "),
        None => "not given".to_string(),
    };
    let mut differing = Vec::new();
    for flag in flags {
        let each: Vec<(u32, Option<&Vec<String>>)> =
            parsed.iter().map(|(i, o)| (*i, o.iter().find(|(f, _)| f == flag).map(|(_, v)| v))).collect();
        if each.windows(2).any(|w| w[0].1 != w[1].1) {
            let values: Vec<String> = each.iter().map(|(i, v)| format!("{} (instance {i})", shown(*v))).collect();
            differing.push(format!("{flag}: {}", values.join(", ")));
        }
    }
    differing
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Instances started alike but for who each is and where it reports
    /// agree; one with another batch size, or a flag the other lacks, is named.
    #[test]
    fn options_that_differ_between_instances_are_named() {
        let line = |i: u32, more: &str| {
            format!(
                "dbload ingest --url 'postgres://u:***@h/db' --instance {i}/2 --run-id r1 \
                 --results-url postgres://r/db --report /tmp/r{i}.json --tag host=n{i}{more}"
            )
        };
        let (a, b) = (line(0, " --workers 4"), line(1, " --workers 4"));
        assert!(differing_options(&[(0, &a), (1, &b)]).is_empty(), "{:?}", differing_options(&[(0, &a), (1, &b)]));
        let b = line(1, " --batch-size 5000 --workers 8");
        assert_eq!(
            differing_options(&[(0, &a), (1, &b)]),
            ["--batch-size: not given (instance 0), 5000 (instance 1)", "--workers: 4 (instance 0), 8 (instance 1)"]
        );
    }
    use crate::config::ingest::split_rows;

    fn instance(index: u32, count: u32) -> Instance {
        Instance { index, count, run_id: "r".into(), start: StartRule::Register { timeout: Duration::ZERO } }
    }

    /// The instances' shares, worker by worker, are one process's split
    /// across all their workers: the totals are exact, and the remainder
    /// goes to the first workers, hence to the first instances.
    #[test]
    fn the_instances_shares_are_one_process_split() {
        for (total, count, workers) in [(10, 1, 3), (3, 4, 1), (0, 2, 2), (10, 4, 1), (1_000_003, 3, 4), (7, 3, 2)] {
            let all: Vec<u64> = (0..count).flat_map(|i| instance(i, count).shares(total, workers)).collect();
            assert_eq!(all, split_rows(total, count * workers), "{total} rows, {count} instances of {workers}");
            assert_eq!(all.iter().sum::<u64>(), total);
        }
        // Fewer rows than instances: the last ones get none.
        let each: Vec<u64> = (0..4).map(|i| instance(i, 4).shares(3, 1)[0]).collect();
        assert_eq!(each, [1, 1, 1, 0]);
        // Not divisible: the remainder to the first instances.
        let each: Vec<u64> = (0..3).map(|i| instance(i, 3).shares(10, 1)[0]).collect();
        assert_eq!(each, [4, 3, 3]);
        // One instance is the process itself.
        assert_eq!(instance(0, 1).shares(10, 3), split_rows(10, 3));
    }

    /// The instances' workers, hence their devices and random streams, do
    /// not overlap, and together are one process's.
    #[test]
    fn the_instances_workers_are_disjoint() {
        let (count, workers) = (4, 3);
        let mut all: Vec<u32> = (0..count)
            .flat_map(|i| {
                let first = instance(i, count).first_worker(workers);
                first..first + workers
            })
            .collect();
        all.sort_unstable();
        assert_eq!(all, (0..count * workers).collect::<Vec<_>>());
        assert_eq!(instance(0, 1).first_worker(5), 0);
    }

    #[test]
    fn rates_split_exactly() {
        let total: f64 = (0..3).map(|i| instance(i, 3).rate(1000.0)).sum();
        assert!((total - 1000.0).abs() < 1e-9, "{total}");
        assert_eq!(instance(0, 1).rate(250.0), 250.0);
        assert_eq!(instance(3, 4).rate(100.0), 25.0);
    }

    #[test]
    fn instance_flags_are_checked() {
        assert_eq!(parse("0/1").unwrap(), (0, 1));
        assert_eq!(parse("3/4").unwrap(), (3, 4));
        for bad in ["4/4", "1", "a/2", "0/0", "-1/2", "0/10001"] {
            let e = parse(bad).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{bad}");
            assert!(e.to_string().starts_with(&format!("--instance {bad:?}")), "{e}");
        }
        let args = |instance: &str, start_at: Option<&str>| ScaleArgs {
            instance: Some(instance.into()),
            run_id: Some("r1".into()),
            start_timeout: Duration::from_secs(5),
            start_at: start_at.map(str::to_string),
        };
        let i = Instance::resolve(args("1/2", None), true, 1).unwrap().unwrap();
        assert_eq!((i.index, i.count, i.start), (1, 2, StartRule::Register { timeout: Duration::from_secs(5) }));
        let i = Instance::resolve(args("1/2", Some("2026-11-24T12:00:00Z")), false, 1).unwrap().unwrap();
        assert!(matches!(i.start, StartRule::At(_)));
        let e = Instance::resolve(args("1/2", None), false, 1).unwrap_err().to_string();
        assert!(e.contains("--results-url") && e.contains("--start-at"), "{e}");
        let e = Instance::resolve(args("1/2", None), true, 3).unwrap_err().to_string();
        assert!(e.contains("--runs 3") && e.contains("distributed runs of their own"), "{e}");
        assert_eq!(Instance::resolve(ScaleArgs::default(), true, 3).unwrap(), None);
    }
}
