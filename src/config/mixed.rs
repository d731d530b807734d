//! `MixedConfig` for `dbload run FILE`: an ingest part and query workloads
//! that run at the same time. Each part's options are written with the long
//! names of its own command (`batch_size: 5000` is `--batch-size 5000`) and
//! resolved by that command's own parser and rules, so a mixed run accepts
//! exactly what the single commands accept, with the same messages.

use std::borrow::Cow;
use std::path::Path;

use anyhow::Result;
use clap::Parser;

use super::fail_if::Contract;
use super::{resolve_target, IngestConfig, OutputConfig, QueryConfig, TargetChoice};
use crate::cli::mistake::Mistake;
use crate::cli::{Cli, Command, RunArgs};
use crate::error::usage;
use crate::file_cap::{self, Cap};
use crate::hint::{did_you_mean, suggest};
use crate::workload::file;
use crate::yaml::{self, fail, Node, Yaml};

const KEYS: [&str; 4] = ["duration", "warmup", "ingest", "workloads"];

#[derive(Debug, Clone)]
pub struct MixedConfig {
    pub target: TargetChoice,
    pub ingest: Option<IngestConfig>,
    /// Each workload with its name.
    pub workloads: Vec<(String, QueryConfig)>,
    pub baseline: bool,
    pub output: OutputConfig,
}

/// `key: value` pairs of a part, as the command-line arguments they stand for.
fn argv(origin: &str, part: &str, pairs: &[(Node, Node)], skip: &[&str]) -> Result<Vec<String>> {
    let mut args = Vec::new();
    for (k, v) in pairs {
        let Some(key) = k.value.as_str() else {
            return Err(fail(origin, &k.referenced, format!("{part}: option names are text, found {}", k.value)));
        };
        if skip.contains(&key) {
            continue;
        }
        // One target and one report for the whole run: those options are the
        // run's, whether written `fail_if` or as the flag is, `fail-if`.
        if matches!(
            key.replace('-', "_").as_str(),
            "url" | "keep" | "output" | "report" | "html" | "quiet" | "progress" | "fail_if" | "runs" | "pause"
        ) {
            let flag = key.replace('_', "-");
            return Err(fail(
                origin,
                &k.referenced,
                format!("{part}: `{key}` belongs on the command line (dbload run FILE --{flag} ...): it applies to the whole run"),
            ));
        }
        let flag = format!("--{}", key.replace('_', "-"));
        match &v.value {
            Yaml::Bool(true) => args.push(flag),
            Yaml::Bool(false) | Yaml::Null => {}
            _ => args.extend([flag, value(origin, part, key, v)?]),
        }
    }
    Ok(args)
}

/// A number or a text, as the argument of its flag (`3` is `--duration 3`,
/// three seconds, as on the command line).
fn value(origin: &str, part: &str, key: &str, v: &Node) -> Result<String> {
    match &v.value {
        Yaml::Int(i) => Ok(i.to_string()),
        Yaml::Float(f) => Ok(f.to_string()),
        Yaml::Str(s) => Ok(s.clone()),
        other => Err(fail(origin, &v.referenced, format!("{part}: `{key}` takes one value, found {other}"))),
    }
}

/// Parses `dbload <command> <args>` as the binary would; a mistake names the
/// file, the part, and the line of the option at fault when clap names one.
fn parse(origin: &str, at: &Node, part: &str, command: &[&str], args: Vec<String>) -> Result<Command> {
    let line = ["dbload"].iter().chain(command).map(|s| s.to_string()).chain(args);
    Cli::try_parse_from(line).map(|c| c.command).map_err(|e| {
        let mistake = Mistake::of(&e);
        let culprit = match (&at.value, &mistake.option) {
            (Yaml::Map(pairs), Some(option)) => pairs
                .iter()
                .map(|(k, _)| k)
                .find(|k| k.value.as_str().is_some_and(|key| option.trim_start_matches('-') == key.replace('_', "-"))),
            _ => None,
        };
        fail(
            origin,
            &culprit.unwrap_or(at).referenced,
            format!("{part}: {}; options are the long names of `dbload {}`'s flags", mistake.message, command[0]),
        )
    })
}

fn map<'a>(origin: &str, node: &'a Node, what: &str) -> Result<&'a [(Node, Node)]> {
    match &node.value {
        Yaml::Map(pairs) => Ok(pairs),
        other => Err(fail(origin, &node.referenced, format!("{what} is a mapping of options, found {other}"))),
    }
}

fn get<'a>(pairs: &'a [(Node, Node)], key: &str) -> Option<&'a Node> {
    pairs.iter().find(|(k, _)| k.value.as_str() == Some(key)).map(|(_, v)| v)
}

impl MixedConfig {
    /// The configuration run `run` of `--runs` (1-based) runs with: its
    /// ingest's (see [`IngestConfig::for_run`]); the resolved one stays as
    /// it is.
    pub fn for_run(&self, run: u32) -> Cow<'_, MixedConfig> {
        match self.ingest.as_ref().map(|i| i.for_run(run)) {
            Some(Cow::Owned(ingest)) => Cow::Owned(MixedConfig { ingest: Some(ingest), ..self.clone() }),
            _ => Cow::Borrowed(self),
        }
    }

    pub fn resolve(a: RunArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<Self> {
        let origin = a.file.display().to_string();
        let text = file_cap::read_text(&a.file, &origin, Cap::config("the mixed-run file"))?;
        let root = yaml::read(&text, &origin)?;
        let top = map(&origin, &root, "a mixed-run file")?;
        for (k, _) in top {
            let key = k.value.as_str().unwrap_or("");
            if !KEYS.contains(&key) {
                return Err(fail(
                    &origin,
                    &k.referenced,
                    format!("unknown key `{key}`{} (keys: {})", did_you_mean(suggest(key, &KEYS)), KEYS.join(", ")),
                ));
            }
        }
        let shared: Vec<String> = ["duration", "warmup"]
            .iter()
            .filter_map(|k| get(top, k).map(|v| Ok([format!("--{k}"), value(&origin, "the run", k, v)?])))
            .collect::<Result<Vec<_>>>()?
            .concat();
        let with_shared = |mut args: Vec<String>| {
            for pair in shared.chunks(2) {
                if !args.contains(&pair[0]) {
                    args.extend(pair.iter().cloned());
                }
            }
            args
        };

        let ingest = match get(top, "ingest") {
            Some(node) => {
                let mut args = with_shared(argv(&origin, "ingest", map(&origin, node, "ingest")?, &[])?);
                if a.output.quiet {
                    args.push("--quiet".into());
                }
                // The ingest part is the run's progress: -P given to the run applies to it.
                if let Some(every) = a.output.progress {
                    args.extend(["--progress".into(), humantime::format_duration(every).to_string()]);
                }
                let Command::Ingest(i) = parse(&origin, node, "ingest", &["ingest"], args)? else { unreachable!() };
                Some(IngestConfig::resolve(i, env)?)
            }
            None => None,
        };

        let dir = a.file.parent().unwrap_or(Path::new("."));
        let mut workloads = Vec::new();
        let list = match get(top, "workloads").map(|n| &n.value) {
            Some(Yaml::Seq(items)) => items.as_slice(),
            Some(other) => return Err(usage(format!("{origin}: `workloads` is a list, found {other}"))),
            None => &[],
        };
        for (i, node) in list.iter().enumerate() {
            let pairs = map(&origin, node, "a workload")?;
            let name = match get(pairs, "name").map(|n| &n.value) {
                Some(Yaml::Str(s)) => s.clone(),
                _ => format!("w{}", i + 1),
            };
            let part = format!("workload {name}");
            let queries = match (get(pairs, "file"), get(pairs, "queries"), get(pairs, "suite")) {
                (Some(f), None, None) => {
                    let path = f.value.as_str().map(|p| dir.join(p)).ok_or_else(|| {
                        fail(&origin, &f.referenced, format!("{part}: `file` is a path, found {}", f.value))
                    })?;
                    Some(file::load(&path)?)
                }
                (None, Some(q), None) => Some(file::queries(q, &origin, dir)?),
                // `suite`, `suite_queries` and `table` go to the workload's flags.
                (None, None, Some(_)) => None,
                _ => {
                    return Err(fail(
                        &origin,
                        &node.referenced,
                        format!("{part}: give its queries with `file: queries.yml`, an inline `queries:` list, or `suite: tsbs-cpu` (one of them)"),
                    ))
                }
            };
            let mut args = with_shared(argv(&origin, &part, pairs, &["name", "file", "queries"])?);
            args.push("--quiet".into());
            let command: &[&str] = if queries.is_some() { &["workload", "-"] } else { &["workload"] };
            let Command::Workload(w) = parse(&origin, node, &part, command, args)? else { unreachable!() };
            if w.max_queries.is_none() && w.run.duration.is_none() && w.run.transactions.is_none() {
                return Err(fail(
                    &origin,
                    &node.referenced,
                    format!("{part}: say when it stops: `duration` (here or at the top) or `max_queries`"),
                ));
            }
            if w.run.threads.is_some() {
                // One pool of threads runs every part's workers (`run::cores`).
                return Err(fail(
                    &origin,
                    &node.referenced,
                    format!("{part}: `threads` is not taken by a part: a run's workers share one thread per CPU"),
                ));
            }
            let (phases, suite) = match queries {
                Some(q) => (vec![q.into()], None),
                None => (Vec::new(), Some(super::query::suite(&w)?)),
            };
            let mut cfg =
                QueryConfig::resolve("workload", phases, w.max_queries, None, w.run, w.target, w.output, env)?;
            if cfg.log.is_some() {
                // Every part would write the same pgbench_log.PID files.
                return Err(fail(
                    &origin,
                    &node.referenced,
                    format!("{part}: pgbench's transaction log (-l) is not taken by a part: run the workload alone"),
                ));
            }
            cfg.suite = suite;
            workloads.push((name, cfg));
        }
        if ingest.is_none() && workloads.is_empty() {
            return Err(usage(format!("{origin}: nothing to run; add an `ingest:` part and/or `workloads:`")));
        }
        let connections =
            ingest.as_ref().map_or(0, |i| i.workers) + workloads.iter().map(|(_, w)| w.concurrency).sum::<u32>();
        Ok(MixedConfig {
            target: resolve_target(&a.target, connections, env)?,
            ingest,
            workloads,
            baseline: a.baseline,
            output: super::scale::alone(
                OutputConfig::resolve(a.output, Contract::Mixed)?,
                "run",
                "is not split across instances yet: run ingest, timeit, workload or http with --instance",
            )?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ProgressDisplay, TableAction};
    use std::time::Duration;

    /// `dbload run FILE -P 2`: the run's progress is its ingest part's, so
    /// -P given to the run reaches that part.
    #[test]
    fn progress_flag_reaches_the_ingest_part() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mixed.yml");
        std::fs::write(&file, "duration: 5s\ningest:\n  workers: 1\n").unwrap();
        let cli = Cli::try_parse_from(["dbload", "run", file.to_str().unwrap(), "-P", "2"]).unwrap();
        let Command::Run(a) = cli.command else { unreachable!("run") };
        let ingest = MixedConfig::resolve(a, &|_| None).unwrap().ingest.unwrap();
        assert_eq!(ingest.output.progress, ProgressDisplay::Lines(Duration::from_secs(2)));
    }

    /// `--runs`: a later run makes its ingest's table afresh, in a copy of
    /// the configuration; the resolved one stays as it is.
    #[test]
    fn a_later_run_makes_its_ingest_table_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mixed.yml");
        std::fs::write(&file, "duration: 5s\ningest:\n  workers: 1\n").unwrap();
        let cli = Cli::try_parse_from(["dbload", "run", file.to_str().unwrap(), "--runs", "2"]).unwrap();
        let Command::Run(a) = cli.command else { unreachable!("run") };
        let cfg = MixedConfig::resolve(a, &|_| None).unwrap();
        let action = |c: &MixedConfig| c.ingest.as_ref().unwrap().table_action;
        assert_eq!((action(&cfg.for_run(1)), action(&cfg.for_run(2))), (TableAction::Create, TableAction::Recreate));
        assert_eq!(action(&cfg), TableAction::Create);
    }

    /// Every part's workers run on the one pool of threads (`run::cores`):
    /// a part's `threads` would be ignored, so it is refused, saying why.
    #[test]
    fn a_part_cannot_set_its_threads() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mixed.yml");
        let yaml = "duration: 5s\nworkloads:\n  - name: reads\n    threads: 2\n    queries:\n      - query: select 1\n        ratio: 1\n";
        std::fs::write(&file, yaml).unwrap();
        let cli = Cli::try_parse_from(["dbload", "run", file.to_str().unwrap()]).unwrap();
        let Command::Run(a) = cli.command else { unreachable!("run") };
        let e = MixedConfig::resolve(a, &|_| None).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("`threads` is not taken by a part"), "{e}");
    }

    /// Issue 32: every part would write the same pgbench_log.PID files, so
    /// a part's `log` (pgbench's -l) is refused, saying why.
    #[test]
    fn a_part_cannot_write_pgbench_s_log() {
        let yaml = "duration: 5s\nworkloads:\n  - name: reads\n    log: true\n    queries:\n      - query: select 1\n        ratio: 1\n";
        let e = resolve_file(yaml).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("(-l) is not taken by a part"), "{e}");
    }

    /// Issue 29, item 6: a run file's line echoed as a key showed a URL's password.
    #[test]
    fn a_line_echoed_hides_its_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mixed.yml");
        std::fs::write(&file, "duration: 5s\npostgres://u:S3cr3tPW@h/db: 1\n").unwrap();
        let cli = Cli::try_parse_from(["dbload", "run", file.to_str().unwrap()]).unwrap();
        let Command::Run(a) = cli.command else { unreachable!("run") };
        let e = MixedConfig::resolve(a, &|_| None).unwrap_err().to_string();
        assert!(!e.contains("S3cr3tPW") && e.contains("postgres://u:***@h/db"), "{e}");
    }

    fn resolve_file(yaml: &str) -> Result<MixedConfig> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mixed.yml");
        std::fs::write(&file, yaml).unwrap();
        let cli = Cli::try_parse_from(["dbload", "run", file.to_str().unwrap()]).unwrap();
        let Command::Run(a) = cli.command else { unreachable!("run") };
        MixedConfig::resolve(a, &|_| None)
    }

    /// Issue 29, item 7: `duration: 3` (a number, as on the command line:
    /// seconds) was ignored at the top of a run file.
    #[test]
    fn a_top_duration_in_seconds_is_taken() {
        let c = resolve_file("duration: 3\nwarmup: 1\ningest:\n  workers: 1\n").unwrap();
        let ingest = c.ingest.unwrap();
        assert_eq!(ingest.load.duration, Some(Duration::from_secs(3)));
        assert_eq!(ingest.load.warmup, crate::op::Warmup::Count(1));
        let e = resolve_file("duration: [3]\ningest:\n  workers: 1\n").unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("mixed.yml:1:") && e.to_string().contains("`duration` takes one value"), "{e}");
    }

    /// Issue 29, item 7: `fail-if:` (a hyphen) in a part went to the part's
    /// own report, which a mixed run does not judge: silently no effect.
    #[test]
    fn a_run_option_with_a_hyphen_in_a_part_is_refused() {
        let e = resolve_file("duration: 5s\ningest:\n  workers: 1\n  fail-if: p99_ms > 50\n").unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("`fail-if` belongs on the command line"), "{e}");
    }
}
