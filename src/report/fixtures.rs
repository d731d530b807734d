//! Fixed figures that the reports' unit and snapshot tests are made from:
//! a run's outcome without a run, so that a text snapshot changes only
//! when its renderer (or the report it renders) does, never with the
//! machine's speed.

use std::time::Duration;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::config::QueryConfig;
use crate::dialect::Engine;
use crate::outcome::{Figures, IngestOutcome, PhaseOutcome, QueryOutcome, Setup, Verify};
use crate::stats::cost::ClientCost;
use crate::stats::query::{PhaseSummary, StatementRecord, StatementSummary};
use crate::stats::recorder::Timing;
use crate::stats::Recorder;
use crate::workload::QuerySpec;

/// The redacted URL the fixtures' reports name as their target.
pub(crate) const URL: &str = "postgres://bench:***@db:5432/bench";

/// `argv` as clap parses it.
pub(crate) fn command(argv: &[&str]) -> Command {
    Cli::try_parse_from(argv).unwrap().command
}

/// Ten operations of `units` each that took 10, 20, ... 100 ms and started
/// 0..9 ms late, and one of `units` that failed (a unique violation).
pub(crate) fn recorder(units: u64) -> Recorder {
    let mut recorder = Recorder::default();
    for i in 0..10u64 {
        let ms = Duration::from_millis;
        let t = Timing {
            intended: ms(i * 100),
            started: ms(i * 100 + i),
            ended: ms(i * 100 + 10 * (i + 1)),
            stage: None,
            retries: 0,
        };
        recorder.ok(false, units, t);
    }
    recorder.failed(
        false,
        0,
        units,
        Timing {
            intended: Duration::ZERO,
            started: Duration::ZERO,
            ended: Duration::from_millis(5),
            stage: None,
            retries: 0,
        },
        "SQLSTATE 23505".into(),
        "duplicate key value violates unique constraint".into(),
    );
    recorder
}

/// `recorders` over one second, for 0.15 s of the client's CPU.
pub(crate) fn figures(recorders: Vec<Recorder>) -> Figures {
    Figures {
        recorders,
        wall: Duration::from_secs(1),
        interrupted: false,
        stopped: None,
        cost: ClientCost {
            user: Duration::from_millis(120),
            system: Duration::from_millis(30),
            peak_rss_bytes: 20 << 20,
        },
        dropped: None,
        server: None,
        client_load: Vec::new(),
    }
}

/// A PostgreSQL 15.18 server, durable.
pub(crate) fn postgres() -> Setup {
    Setup {
        engine: Some(Engine::Postgres),
        server_version: Some("15.18".into()),
        server_settings: vec![("fsync".into(), "on".into()), ("synchronous_commit".into(), "on".into())],
        ..Setup::default()
    }
}

/// An ingest of ten batches of 1,000 rows into PostgreSQL by COPY (one
/// batch failed), verified; `stopped`: why it stopped on its own, if it did.
pub(crate) fn ingested(stopped: Option<String>) -> IngestOutcome {
    IngestOutcome {
        setup: Setup {
            ddl: vec!["CREATE TABLE \"measurement\" (\n  \"time\" timestamptz NOT NULL\n)".into()],
            ..postgres()
        },
        method: crate::dialect::Method::Copy,
        figures: Figures { stopped, ..figures(vec![recorder(1000)]) },
        verify: Some(Verify { expected: 10_000, found: Some(10_000), ok: true, error: None }),
        server_duration: None,
        input: None,
        server_cost: Default::default(),
    }
}

/// A query run of `cfg`'s phases in which each query ran [`recorder`]'s
/// eleven queries; a script's commands (statements and `\` commands) each
/// took 1, 2, ... 10 ms in the ten runs that succeeded, and its last
/// command failed in the other.
pub(crate) fn queried(cfg: &QueryConfig) -> QueryOutcome {
    let mut total = Recorder::default();
    let phases: Vec<PhaseOutcome> = cfg
        .phases
        .iter()
        .map(|queries| {
            let recorders: Vec<Recorder> = queries.iter().map(|_| recorder(1)).collect();
            PhaseOutcome {
                queries: queries.clone(),
                summary: PhaseSummary::of(&recorders, &mut total),
                explains: Vec::new(),
                statements: queries.iter().map(statements).collect(),
            }
        })
        .collect();
    let scripts = phases.iter().flat_map(|p| p.queries.iter()).any(|q| q.script.is_some());
    QueryOutcome {
        setup: postgres(),
        phases,
        figures: figures(vec![total]),
        server_duration: None,
        scale: scripts.then_some(1),
        suite_data: None,
        statements: Err("not installed".into()),
        threads: 2,
        connecting: Duration::from_micros(12_345),
        retries: Default::default(),
        connects: Default::default(),
    }
}

/// A script's commands as [`queried`] ran them; none for a query.
fn statements(q: &QuerySpec) -> Vec<StatementSummary> {
    let Some(script) = &q.script else { return Vec::new() };
    let last = script.commands.len().saturating_sub(1);
    (0..script.commands.len())
        .map(|i| {
            let mut record = StatementRecord::default();
            for ms in 1..=10 {
                record.ok(Duration::from_millis(ms * (i as u64 + 1)));
            }
            record.failed = u64::from(i == last);
            StatementSummary::of(&record)
        })
        .collect()
}

/// A timeit report of [`queried`]'s outcome for `flags` after the URL.
pub(crate) fn timeit(flags: &[&str]) -> crate::report::query::QueryReport {
    let argv = [&["dbload", "timeit", "--url", "postgres://bench:secret@db:5432/bench"][..], flags].concat();
    let Command::Timeit(a) = command(&argv) else { unreachable!("timeit") };
    let cfg = QueryConfig::timeit(a, &|_| None, Some(&mut std::io::empty())).unwrap();
    crate::report::query::QueryReport::new(&cfg, &queried(&cfg), Some(URL.into()), false)
}
