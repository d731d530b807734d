//! `insert-fake-data` and `insert-json` resolved into an [`IngestConfig`]:
//! they are ingest runs with the `table` and `json` models, whose columns
//! are read from the existing table when the run starts.

use std::sync::Arc;

use anyhow::Result;

use super::fail_if::Contract;
use super::ingest::split_rows;
use super::load::Load;
use super::{resolve_target, IngestConfig, OutputConfig, TableAction};
use crate::cli::{BulkArgs, InsertFakeDataArgs, InsertJsonArgs, OutputArgs, TargetArgs};
use crate::dialect::{Method, TableOptions};

use crate::error::usage;
use crate::file_cap::{self, Cap};
use crate::ident::TableName;
use crate::input::Input;
use crate::model::json;
use crate::model::mapping::Mapping;
use crate::model::{table, ModelSpec};

/// `dbload insert-fake-data`.
pub fn insert_fake_data(a: InsertFakeDataArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<IngestConfig> {
    if a.num_records == 0 {
        return Err(usage("--num-records 0: nothing to insert; give at least 1"));
    }
    let mapping = match &a.mapping {
        Some(path) => {
            let name = path.display().to_string();
            let text = file_cap::read_text(path, &format!("--mapping {name}"), Cap::config("the mapping"))?;
            Some(Arc::new(Mapping::parse(&text, &name)?))
        }
        None => None,
    };
    // Random times lie before the start of today (UTC): recent, and the
    // same all day for a given seed.
    let day_us = 86_400_000_000;
    let anchor_us = chrono::Utc::now().timestamp_micros().div_euclid(day_us) * day_us;
    let spec = table::Spec {
        mapping,
        workers: a.bulk.concurrency,
        anchor_us,
        columns: Vec::new(),
        key: Vec::new(),
        cratedb: false,
    };
    let rows = split_rows(a.num_records, super::connections("--concurrency", a.bulk.concurrency, "worker")?);
    if let Some(m) = &spec.mapping {
        // Row r of worker w is global row r × workers + w.
        let workers = rows.len() as u64;
        let last = rows.iter().enumerate().filter(|(_, &n)| n > 0).map(|(w, &n)| (n - 1) * workers + w as u64).max();
        m.check_sequences(last.unwrap_or(0), &format!("--num-records {}", a.num_records))?;
    }
    resolve("insert-fake-data", ModelSpec::Table(spec), &a.table, a.target, a.bulk, a.output, rows, a.seed, env)
}

/// `dbload insert-json`.
pub fn insert_json(a: InsertJsonArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<IngestConfig> {
    if a.on_error == json::OnError::Skip && a.rejects.is_none() {
        return Err(usage("--on-error skip needs --rejects FILE, where the skipped rows go with the reason"));
    }
    if a.files.is_empty() && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        return Err(usage(
            "insert-json reads JSON from stdin, which is a terminal: give FILE arguments or pipe the input in",
        ));
    }
    let input = Input::open(&a.files)?;
    if a.output.runs > 1 && !input.rereadable() {
        return Err(usage(format!(
            "--runs {}: {} is read once, so only one run could read it; give the input as files, which every \
             run reads again",
            a.output.runs,
            input.names()
        )));
    }
    if let Some((path, input)) = a.rejects.as_ref().and_then(|p| Some((p, input.same_file_as(p)?))) {
        return Err(usage(format!(
            "--rejects {} is the input file {input}: writing the rejects there would destroy the input; give --rejects another path",
            path.display()
        )));
    }
    let rejects: Option<json::RejectsOut> = match &a.rejects {
        Some(path) => Some(Box::new(
            std::fs::File::create(path)
                .map_err(|e| usage(format!("--rejects {}: cannot create it: {e}", path.display())))?,
        )),
        None => None,
    };
    let spec = json::Spec::new(input, a.on_error, rejects, a.ignore_unknown);
    let workers = a.bulk.concurrency.max(1);
    let rows = vec![u64::MAX; workers as usize];
    resolve("insert-json", ModelSpec::Json(spec), &a.table, a.target, a.bulk, a.output, rows, 1, env)
}

/// What both commands share.
#[allow(clippy::too_many_arguments)]
fn resolve(
    command: &'static str,
    model: ModelSpec,
    table: &str,
    mut target: TargetArgs,
    bulk: BulkArgs,
    output: OutputArgs,
    rows_per_worker: Vec<u64>,
    seed: u64,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<IngestConfig> {
    super::connections("--concurrency", bulk.concurrency, "worker")?;
    if bulk.bulk_size == 0 {
        return Err(usage("--bulk-size 0: a batch needs at least 1 row"));
    }
    super::cr8_hosts(&mut target, bulk.hosts.as_deref());
    let target = resolve_target(&target, bulk.concurrency, env)?;
    let rows = RowsInto { workers: bulk.concurrency, batch_size: bulk.bulk_size, rows_per_worker, seed };
    let mut output = OutputConfig::resolve(output, Contract::Ingest)?;
    if command == "insert-fake-data" {
        let why = "does not split its rows across instances: use ingest --instance, or a process per table";
        output = super::scale::alone(output, command, why)?;
    }
    let mut cfg = into_table(command, model, TableName::parse(table)?, target, bulk.method, rows, output)?;
    cfg.load.reconnect = bulk.reconnect;
    Ok(cfg)
}

/// How many rows an ingest into an existing table writes, and how.
pub struct RowsInto {
    pub workers: u32,
    pub batch_size: usize,
    /// Rows each worker writes (u64::MAX: until its input ends).
    pub rows_per_worker: Vec<u64>,
    pub seed: u64,
}

/// An ingest of `model`'s rows into the existing `table`, by `method` or
/// the target's best one for the table's columns, settled once they are
/// read (insert-fake-data, insert-json, and insert-from-sql into CrateDB).
pub fn into_table(
    command: &'static str,
    model: ModelSpec,
    table: TableName,
    target: super::TargetChoice,
    method: Option<Method>,
    rows: RowsInto,
    output: OutputConfig,
) -> Result<IngestConfig> {
    let schema = model.schema();
    let RowsInto { workers, batch_size, rows_per_worker, seed } = rows;
    let cfg = IngestConfig {
        command,
        target,
        model,
        schema,
        table,
        table_action: TableAction::Existing,
        method,
        table_options: TableOptions::default(),
        time_span_us: None,
        upsert: false,
        workers,
        batch_size,
        rows_per_worker,
        load: Load { seed, ..Load::default() },
        start_us: 0,
        verify: false,
        node_options: None,
        output,
    };
    cfg.check_known_engine()?;
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use crate::dialect::Engine;
    use crate::model::{Column, Schema, SqlType};
    use clap::Parser;

    /// The method settled for `engine` once the table's columns are read
    /// (the table model writes every value as text).
    fn settled(c: &IngestConfig, engine: Engine, http: bool) -> Method {
        let text = Column {
            name: "c".into(),
            ty: SqlType::Text { json: false },
            not_null: false,
            cast: None,
            fields: Vec::new(),
        };
        let schema = Schema { columns: vec![text], key: Vec::new(), metrics_per_row: 0 };
        c.plan(Some(c.dialect_for(engine, http).unwrap()), http, schema).unwrap().method
    }

    fn fake(args: &str) -> Result<IngestConfig> {
        let cli =
            Cli::try_parse_from(format!("dbload insert-fake-data --url postgres://u@h/d {args}").split_whitespace())?;
        let Command::InsertFakeData(a) = cli.command else { unreachable!() };
        insert_fake_data(a, &|_| None)
    }

    #[test]
    fn cr8_flags() {
        let c = fake("--table t --num-records 10 --bulk-size 3 --concurrency 4").unwrap();
        assert_eq!((c.batch_size, c.workers, c.total_rows()), (3, 4, Some(10)));
        assert_eq!((c.method, c.table_action, c.command), (None, TableAction::Existing, "insert-fake-data"));
        assert_eq!(settled(&c, Engine::Postgres, false), Method::CopyCsv);
        let c = fake("--table t --batch-size 5 --workers 2").unwrap();
        assert_eq!((c.batch_size, c.workers), (5, 2));
        let cli =
            Cli::try_parse_from(["dbload", "insert-fake-data", "--hosts", "c1:4200,c2:4200", "--table", "t"]).unwrap();
        let Command::InsertFakeData(a) = cli.command else { unreachable!() };
        let c = insert_fake_data(a, &|_| None).unwrap();
        assert!(matches!(c.target, crate::config::TargetChoice::Crate(_)));
        assert_eq!(settled(&c, Engine::Cratedb, true), Method::Bulk);
    }

    /// Issue 14 item 3: `--rejects` naming the input (by another path, or
    /// through a symlink) truncated it; it is refused before anything is opened
    /// for writing, and the input keeps its content.
    #[test]
    fn rejects_file_that_is_the_input_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.json");
        std::fs::write(&input, "{\"a\": 1}\n").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        let json = |rejects: &std::path::Path| {
            let args = format!(
                "dbload insert-json --url postgres://u@h/d --table t --on-error skip --rejects {} {}",
                rejects.display(),
                input.display()
            );
            let Command::InsertJson(a) = Cli::try_parse_from(args.split_whitespace()).unwrap().command else {
                unreachable!()
            };
            insert_json(a, &|_| None)
        };
        for same in [input.clone(), dir.path().join(".").join("in.json"), link] {
            let e = json(&same).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2);
            let msg = e.to_string();
            assert!(msg.contains("--rejects") && msg.contains("input file") && msg.contains("in.json"), "{msg}");
        }
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "{\"a\": 1}\n");
        assert!(json(&dir.path().join("rejects.jsonl")).is_ok());
    }

    #[test]
    fn bad_values_name_the_option() {
        for (args, culprit) in [
            ("--table t --num-records 0", "--num-records"),
            ("--table t --concurrency 0", "--concurrency"),
            ("--table t --concurrency 2147483648", "--concurrency 2147483648: at most 100000"),
            ("--table t --bulk-size 0", "--bulk-size"),
            ("--table a.b.c", "--table"),
            ("--table t --mapping /nonexistent.yml", "--mapping"),
        ] {
            let e = fake(args).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{args}: {e}");
            assert!(e.to_string().contains(culprit), "{args}: {e}");
        }
    }

    /// Issue 29, item 7: `{sequence: 9223372036854775800}` over 100 rows
    /// wrote 9223372036854775807 again and again (the addition saturated);
    /// a sequence that would pass the largest integer is refused up front.
    #[test]
    fn a_sequence_past_the_largest_integer_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let map = dir.path().join("map.yml");
        std::fs::write(&map, "name: name\nid: {sequence: 9223372036854775800}\n").unwrap();
        let args = |n: u64| format!("--table t --mapping {} --num-records {n}", map.display());
        let e = fake(&args(100)).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2, "{e}");
        let e = e.to_string();
        assert!(e.contains("map.yml:2:") && e.contains("\"id\"") && e.contains("--num-records 100"), "{e}");
        fake(&args(8)).unwrap();
    }
}
