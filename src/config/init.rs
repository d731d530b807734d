//! `InitConfig`: `dbload init`'s flags checked once: the steps (pgbench's
//! `-I`, `-n`, `--foreign-keys`) and the tables' layout (`-F`,
//! `--partitions`, `--partition-method`, `--unlogged-tables`).

use anyhow::Result;

use super::metrics::MetricsListen;
use super::{resolve_target, ProgressDisplay, TargetChoice};
use crate::cli::InitArgs;
use crate::dialect::pgbench::{Layout, MAX_SCALE};
use crate::error::usage;

/// Most connections `init` opens by default.
const MAX_DEFAULT_WORKERS: u32 = 8;

#[derive(Debug)]
pub struct InitConfig {
    pub target: TargetChoice,
    pub scale: i64,
    pub workers: u32,
    /// What `init` does, in order (pgbench's `-I`).
    pub steps: Vec<Step>,
    pub layout: Layout,
    /// `--quiet`: none; else the bar (or a line now and then in a log).
    pub progress: ProgressDisplay,
    /// `--metrics-listen`.
    pub metrics: Option<MetricsListen>,
}

/// One of pgbench's initialization steps, by its `-I` letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Drop,
    Create,
    /// `g`: rows made here and sent by binary COPY.
    Generate,
    /// `G`: rows made by the server (INSERT ... SELECT generate_series).
    GenerateOnServer,
    Vacuum,
    PrimaryKeys,
    ForeignKeys,
}

impl Step {
    /// pgbench's letters, in the order its documentation lists them.
    const LETTERS: &'static str = "dtgGvpf";

    fn of(letter: char) -> Option<Step> {
        Some(match letter {
            'd' => Step::Drop,
            't' => Step::Create,
            'g' => Step::Generate,
            'G' => Step::GenerateOnServer,
            'v' => Step::Vacuum,
            'p' => Step::PrimaryKeys,
            'f' => Step::ForeignKeys,
            _ => return None,
        })
    }

    /// The step's name in the report: pgbench's words in its `done in` line.
    pub fn name(self) -> &'static str {
        match self {
            Step::Drop => "drop tables",
            Step::Create => "create tables",
            Step::Generate => "client-side generate",
            Step::GenerateOnServer => "server-side generate",
            Step::Vacuum => "vacuum",
            Step::PrimaryKeys => "primary keys",
            Step::ForeignKeys => "foreign keys",
        }
    }
}

/// pgbench's `-I` with its `-n` (no `v`) and `--foreign-keys` (an `f` at the
/// end if there is none); spaces are ignored, as pgbench ignores them.
fn steps(letters: &str, no_vacuum: bool, foreign_keys: bool) -> Result<Vec<Step>> {
    let mut steps = Vec::new();
    for c in letters.chars().filter(|c| *c != ' ') {
        let step = Step::of(c).ok_or_else(|| {
            usage(format!(
                "-I {letters}: no initialization step {c:?}; give letters of \"{}\": d drop tables, t create \
                 tables, g generate rows here, G generate them on the server, v vacuum, p primary keys, f foreign keys",
                Step::LETTERS
            ))
        })?;
        if !(no_vacuum && step == Step::Vacuum) {
            steps.push(step);
        }
    }
    if foreign_keys && !steps.contains(&Step::ForeignKeys) {
        steps.push(Step::ForeignKeys);
    }
    Ok(steps)
}

impl InitConfig {
    pub fn resolve(a: InitArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<InitConfig> {
        if !(1..=MAX_SCALE).contains(&a.scale) {
            return Err(usage(format!(
                "--scale {}: give a scale factor from 1 to {MAX_SCALE} (pgbench makes account ids bigint beyond, \
                 which dbload's init does not)",
                a.scale
            )));
        }
        if !(10..=100).contains(&a.fillfactor) {
            return Err(usage(format!("--fillfactor {} (-F): give a fill factor from 10 to 100", a.fillfactor)));
        }
        if a.partition_method.is_some() && a.partitions == 0 {
            return Err(usage("--partition-method needs --partitions N (at least 1), as pgbench's does"));
        }
        let layout = Layout {
            fillfactor: a.fillfactor,
            partitions: a.partitions,
            method: a.partition_method.unwrap_or_default(),
            unlogged: a.unlogged_tables,
        };
        let steps = steps(&a.init_steps, a.no_vacuum, a.foreign_keys)?;
        let cpus = super::cpus();
        let workers = match a.workers {
            Some(n) => super::connections("--workers", n, "connection")?,
            None => cpus.min(MAX_DEFAULT_WORKERS),
        };
        let progress = if a.quiet { ProgressDisplay::Hidden } else { ProgressDisplay::Auto };
        let metrics = a.metrics_listen.as_deref().map(MetricsListen::resolve).transpose()?;
        Ok(InitConfig {
            target: resolve_target(&a.target, workers + 1, env)?,
            scale: a.scale,
            workers,
            steps,
            layout,
            progress,
            metrics,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::pgbench::PartitionMethod;

    fn resolve(args: &[&str]) -> Result<InitConfig> {
        use clap::Parser;
        let argv = ["dbload", "init", "--url", "postgres://u@h/db"].iter().chain(args);
        let crate::cli::Command::Init(a) = crate::cli::Cli::try_parse_from(argv)?.command else { unreachable!("init") };
        InitConfig::resolve(a, &|_| None)
    }

    /// Issue 32: pgbench's `-I`, `-n` and `--foreign-keys`, as pgbench combines them.
    #[test]
    fn steps_are_pgbench_s() {
        use Step::*;
        let of = |args: &[&str]| resolve(args).unwrap().steps;
        assert_eq!(of(&[]), [Drop, Create, Generate, Vacuum, PrimaryKeys]);
        assert_eq!(of(&["-n", "--foreign-keys"]), [Drop, Create, Generate, PrimaryKeys, ForeignKeys]);
        assert_eq!(
            of(&["-I", "dtG vpf", "--foreign-keys"]),
            [Drop, Create, GenerateOnServer, Vacuum, PrimaryKeys, ForeignKeys]
        );
        assert_eq!(of(&["-I", "pv"]), [PrimaryKeys, Vacuum]);
        let e = resolve(&["-I", "dtx"]).unwrap_err().to_string();
        assert!(e.contains("-I dtx") && e.contains("'x'") && e.contains("dtgGvpf"), "{e}");
    }

    /// Issue 32: pgbench's table flags, checked as pgbench checks them.
    #[test]
    fn layout_is_checked_as_pgbench_checks_it() {
        let c = resolve(&["-F", "80", "--partitions", "3", "--partition-by", "hash", "--unlogged"]).unwrap();
        let want = Layout { fillfactor: 80, partitions: 3, method: PartitionMethod::Hash, unlogged: true };
        assert_eq!(c.layout, want);
        assert_eq!(resolve(&["--partitions", "2"]).unwrap().layout.method, PartitionMethod::Range);
        let e = resolve(&["-F", "5"]).unwrap_err().to_string();
        assert!(e.contains("--fillfactor 5"), "{e}");
        let e = resolve(&["--partition-method", "hash"]).unwrap_err().to_string();
        assert!(e.contains("--partitions"), "{e}");
    }
}
