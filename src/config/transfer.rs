//! `export` and `insert-from-sql`, resolved and checked once: the source
//! and target through the same resolution as every other command, names
//! parsed, limits checked, and what an engine cannot do refused before
//! anything connects.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::fail_if::Contract;
use super::{resolve_target, OutputConfig, TargetChoice};
use crate::cli::{EngineChoice, ExportArgs, FromSqlMethod, InsertFromSqlArgs, TargetArgs};
use crate::dialect::{Engine, ExportFormat, Method};

use crate::error::usage;
use crate::ident::TableName;

/// Why insert-from-sql refuses CrateDB's HTTP endpoint as its source, and what to use instead.
pub const CRATEDB_FROM_SQL: &str = "--src-url (the target without it): insert-from-sql reads CrateDB over its \
     PostgreSQL protocol, whose values come with their types (its HTTP endpoint's JSON has none to match the \
     table's columns with); give --src-url postgres://crate@host:5432/doc";

/// Why `--method copy` is refused for CrateDB.
pub const CRATEDB_METHOD: &str = "--method copy: CrateDB has no COPY FROM STDIN; leave --method out, and \
     insert-from-sql reads the query's rows as JSON and writes them the way insert-json does";

/// What an export reads.
#[derive(Debug, Clone)]
pub enum ExportSource {
    Table(TableName),
    Query(String),
}

#[derive(Debug, Clone)]
pub struct ExportConfig {
    pub target: TargetChoice,
    pub source: ExportSource,
    pub out_dir: PathBuf,
    /// Files are `{name}_{worker}.{ext}`.
    pub name: String,
    pub format: ExportFormat,
    pub gzip: bool,
    pub overwrite: bool,
    /// `--workers` (a query's: 1); none: as many as the engine's export
    /// takes, which [`ExportConfig::workers_on`] settles once it is known.
    pub workers: Option<u32>,
    pub chunk_rows: usize,
    pub output: OutputConfig,
}

/// `--out`, when it exists: a directory the export can create its files in
/// (probed with a file that vanishes when closed), so that one it cannot
/// write in is refused before connecting rather than failing the run. One
/// that does not exist yet is created by the run, which says if it cannot.
fn check_out_dir(dir: &Path) -> Result<()> {
    let refuse = |why: String| usage(format!("--out {}: {why}; give a directory you can write in", dir.display()));
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => Err(refuse("is not a directory".into())),
        Ok(_) => tempfile::tempfile_in(dir).map(drop).map_err(|e| refuse(format!("cannot create files in it ({e})"))),
        Err(_) => Ok(()),
    }
}

impl ExportConfig {
    /// The configuration run `run` of `--runs` (1-based) runs with: each
    /// run after the first replaces the files the first wrote (it refused
    /// files left by another export, so these are its own), as
    /// [`super::IngestConfig::for_run`] makes the table afresh. The resolved
    /// configuration stays as it is: a later run gets a copy.
    pub fn for_run(&self, run: u32) -> Cow<'_, ExportConfig> {
        match run {
            1 => Cow::Borrowed(self),
            _ => Cow::Owned(ExportConfig { overwrite: true, ..self.clone() }),
        }
    }

    pub fn resolve(a: ExportArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<ExportConfig> {
        let source = match (a.table, a.query) {
            (Some(t), _) => ExportSource::Table(TableName::parse(&t)?),
            (None, Some(q)) => ExportSource::Query(query(&q, "--query")?),
            (None, None) => unreachable!("clap requires --table or --query"),
        };
        let given = a.workers.map(|w| super::connections("--workers", w, "worker")).transpose()?;
        let workers = match (&source, given) {
            (ExportSource::Query(_), Some(w)) if w > 1 => {
                return Err(usage(format!(
                    "--workers {w} with --query: a query's rows are read by one worker (only a table \
                     splits into block ranges); drop --workers, or export a --table"
                )))
            }
            (ExportSource::Query(_), _) => Some(1),
            (ExportSource::Table(_), w) => w,
        };
        if a.chunk_rows == 0 {
            return Err(usage("--chunk-rows 0: a chunk needs at least 1 row"));
        }
        let name = match (a.name, &source) {
            (Some(n), _) => n,
            (None, ExportSource::Table(t)) => t.name.clone(),
            (None, ExportSource::Query(_)) => "query".into(),
        };
        if name.is_empty() || name.contains(['/', '\0']) {
            return Err(usage(format!(
                "--name {name:?}: file names are NAME_N.{}; give a name without '/'",
                a.format.extension()
            )));
        }
        check_out_dir(&a.out)?;
        let target = resolve_target(&a.target, workers.unwrap_or_else(super::cpus), env)?;
        if matches!(target, TargetChoice::Crate(_)) && a.format == ExportFormat::Csv {
            return Err(usage(
                "--format csv over CrateDB's HTTP endpoint: JSON lines only there (its values come without their \
                 types); give CrateDB's PostgreSQL protocol for CSV: --url postgres://crate@host:5432/doc",
            ));
        }
        Ok(ExportConfig {
            target,
            source,
            out_dir: a.out,
            name,
            format: a.format,
            gzip: a.gzip,
            overwrite: a.overwrite,
            workers,
            chunk_rows: a.chunk_rows,
            output: super::scale::alone(
                OutputConfig::resolve(a.output, Contract::Transfer)?,
                "export",
                "reads one table or query whole; export it from one process",
            )?,
        })
    }

    /// The workers an export from `engine` runs: `--workers`, else one per
    /// core; on Citus one, since block ranges do not split a distributed
    /// table (its rows are on the workers' shards, which Citus reads in
    /// parallel itself). The run asks once it has detected the engine, and
    /// its outcome says what it ran: the config is not changed for it.
    pub fn workers_on(&self, engine: Engine) -> u32 {
        self.workers.unwrap_or_else(|| if engine == Engine::Citus { 1 } else { super::cpus() })
    }

    /// The file of `worker`: `my_table_0.json`, as CrateDB's `COPY TO
    /// DIRECTORY` names them (by table and number), so `my_table_*.json` reads them all.
    pub fn file_name(&self, worker: u32) -> String {
        let gz = if self.gzip { ".gz" } else { "" };
        format!("{}_{worker}.{}{gz}", self.name, self.format.extension())
    }

    /// Whether `file` is one an export with this name and format writes
    /// (any worker count, gzipped or not): an earlier export's leftovers.
    pub fn is_export_file(&self, file: &str) -> bool {
        let Some(rest) = file.strip_prefix(&format!("{}_", self.name)) else { return false };
        let ext = self.format.extension();
        let number = rest.strip_suffix(&format!(".{ext}")).or_else(|| rest.strip_suffix(&format!(".{ext}.gz")));
        number.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    }
}

#[derive(Debug, Clone)]
pub struct FromSqlConfig {
    /// `--src-url`; `None`: the query runs on the target.
    pub source: Option<TargetChoice>,
    pub target: TargetChoice,
    pub query: String,
    pub table: TableName,
    /// `--method`; none: COPY, or CrateDB's own.
    pub method: Option<Method>,
    pub workers: u32,
    pub batch_size: usize,
    pub output: OutputConfig,
}

impl FromSqlConfig {
    pub fn resolve(a: InsertFromSqlArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<FromSqlConfig> {
        let workers = match a.workers {
            Some(w) => super::connections("--workers", w, "worker")?,
            None => super::cpus(),
        };
        if a.batch_size == 0 {
            return Err(usage("--batch-size 0: a batch needs at least 1 row"));
        }
        let source = a
            .src_url
            .map(|url| {
                let args = TargetArgs { url: Some(url), engine: EngineChoice::Auto, insecure: false, keep: false };
                resolve_target(&args, 1, env).map_err(|e| usage(format!("--src-url: {e}")))
            })
            .transpose()?;
        let target = resolve_target(&a.target, workers, env)?;
        if matches!(source, Some(TargetChoice::Crate(_))) {
            return Err(usage(CRATEDB_FROM_SQL));
        }
        let method = a.method.map(FromSqlMethod::method);
        if matches!(target, TargetChoice::Crate(_)) && method.is_some() {
            return Err(usage(CRATEDB_METHOD));
        }
        Ok(FromSqlConfig {
            source,
            target,
            query: query(&a.query, "--query")?,
            table: TableName::parse(&a.table)?,
            method,
            workers,
            batch_size: a.batch_size,
            output: super::scale::alone(
                OutputConfig::resolve(a.output, Contract::Transfer)?,
                "insert-from-sql",
                "copies one query's rows whole; run it from one process",
            )?,
        })
    }
}

/// A query as it can be wrapped in `COPY (...)` or a cursor: its one
/// statement, without `--` comments (one at its end would swallow the
/// wrapping's `)`) or a final `;`.
fn query(q: &str, option: &str) -> Result<String> {
    match crate::sqltext::statements(q).as_slice() {
        [] => Err(usage(format!("{option}: empty; give a SELECT statement"))),
        [one] => Ok(one.clone()),
        more => Err(usage(format!(
            "{option}: {} statements; give one SELECT (a WITH ... SELECT may hold what the others did)",
            more.len()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn export(args: &str) -> Result<ExportConfig> {
        let url = if args.contains("--url") { "" } else { "--url postgres://u@h/d" };
        let cli = Cli::try_parse_from(format!("dbload export {url} {args}").split_whitespace())?;
        let Command::Export(a) = cli.command else { unreachable!("export") };
        ExportConfig::resolve(a, &|_| None)
    }

    fn from_sql(args: &str) -> Result<FromSqlConfig> {
        let url = if args.contains("--url") { "" } else { "--url postgres://u@h/d" };
        let argv = format!("dbload insert-from-sql {url} --table t {args}");
        let cli = Cli::try_parse_from(argv.split_whitespace())?;
        let Command::InsertFromSql(a) = cli.command else { unreachable!("insert-from-sql") };
        FromSqlConfig::resolve(a, &|_| None)
    }

    fn refused(r: Result<impl std::fmt::Debug>) -> String {
        let e = r.unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2, "{e}");
        e.to_string()
    }

    /// Issue 15, item 5: the workers are settled for the engine found, not
    /// by changing the config: Citus gets one unless `--workers` says otherwise.
    #[test]
    fn export_workers_are_settled_for_the_engine() {
        let c = export("--table t --out /tmp/x").unwrap();
        assert_eq!(c.workers, None);
        assert_eq!((c.workers_on(Engine::Citus), c.workers_on(Engine::Postgres)), (1, crate::config::cpus()));
        let c = export("--table t --out /tmp/x --workers 3").unwrap();
        assert_eq!((c.workers_on(Engine::Citus), c.workers_on(Engine::Postgres)), (3, 3));
    }

    #[test]
    fn export_files_are_named_by_table_and_worker() {
        let c = export("--table app.MyTable --out /tmp/x --workers 3 --gzip").unwrap();
        assert_eq!(c.file_name(2), "MyTable_2.json.gz");
        assert!(c.is_export_file("MyTable_17.json") && c.is_export_file("MyTable_0.json.gz"));
        assert!(!c.is_export_file("MyTable_x.json") && !c.is_export_file("MyTable_.json"));
        assert!(!c.is_export_file("MyTable_1.csv") && !c.is_export_file("Other_1.json"));
        let c = export("--query select.1; --out /tmp/x --format csv").unwrap();
        assert_eq!((c.file_name(0), c.workers_on(Engine::Postgres)), ("query_0.csv".to_string(), 1));
        let ExportSource::Query(q) = c.source else { panic!() };
        assert_eq!(q, "select.1");
    }

    /// Issue 29, item 8: a query ending in a `--` comment swallowed the `)`
    /// that wraps it in `COPY (...)`; comments and final `;` are left out,
    /// and two statements are refused.
    #[test]
    fn an_export_query_is_one_statement_without_its_comments() {
        let q = |given: &str| query(given, "--query");
        assert_eq!(q("select 1 as x -- c").unwrap(), "select 1 as x");
        assert_eq!(q("select ';' -- c\n , 2; ;").unwrap(), "select ';' \n , 2");
        assert!(refused(q("select 1; select 2")).starts_with("--query: 2 statements"));
        assert!(refused(q("-- only this")).contains("--query: empty"));
    }

    #[test]
    fn bad_export_options_name_themselves() {
        assert!(refused(export("--query x --workers 2 --out /tmp/x")).contains("--workers 2 with --query"));
        assert!(refused(export("--table t --workers 0 --out /tmp/x")).contains("--workers 0"));
        assert!(refused(export("--table t --chunk-rows 0 --out /tmp/x")).contains("--chunk-rows"));
        assert!(refused(export("--table t --name a/b --out /tmp/x")).contains("--name"));
        assert!(refused(export("--query ; --out /tmp/x")).contains("--query: empty"));
        let crate_url = "--url cratedb://crate@h:4200 --table t --out /tmp/x";
        assert_eq!(export(&format!("{crate_url} --workers 2")).unwrap().workers_on(Engine::Cratedb), 2);
        assert!(refused(export(&format!("{crate_url} --format csv")))
            .starts_with("--format csv over CrateDB's HTTP endpoint"));
        let crate_query = "--url cratedb://crate@h:4200 --query select.1 --out /tmp/x";
        assert!(matches!(export(crate_query).unwrap().source, ExportSource::Query(_)));
        assert!(export("--out /tmp/x").is_err(), "--table or --query is required");
    }

    #[test]
    fn bad_insert_from_sql_options_name_themselves() {
        assert!(refused(from_sql("--query x --batch-size 0")).contains("--batch-size 0"));
        assert!(refused(from_sql("--query x --src-url cratedb://h:4200")).contains("postgres://crate@host:5432/doc"));
        let crate_dst = from_sql("--query x --url cratedb://h:4200").unwrap();
        assert!(matches!((crate_dst.target, crate_dst.method), (TargetChoice::Crate(_), None)));
        assert!(refused(from_sql("--query x --url cratedb://h:4200 --method copy")).starts_with("--method copy"));
        assert!(refused(from_sql("--query x --src-url postgres://h/d?sslmode=bad")).starts_with("--src-url"));
        let c = from_sql("--query select.1 --bulk-size 7 --concurrency 3").unwrap();
        assert_eq!((c.batch_size, c.workers, c.source.is_none()), (7, 3, true));
    }

    #[test]
    fn a_later_run_replaces_the_files_and_leaves_the_resolved_config_as_it_is() {
        let cfg = export("--table t --out /tmp/x").unwrap();
        assert!(!cfg.for_run(1).overwrite);
        assert!(cfg.for_run(2).overwrite && cfg.for_run(3).overwrite);
        assert!(!cfg.overwrite);
    }
}
