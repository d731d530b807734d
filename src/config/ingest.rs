//! `IngestConfig`: the ingest flags resolved and validated once. Every
//! limit is checked here, so a worker never discovers a bad setting mid-run
//! and never has to interpret an `Option`. What only the server can say
//! (the engine, an existing table's columns) is settled once it has, into
//! an [`IngestPlan`].

use std::borrow::Cow;

use anyhow::Result;

use super::fail_if::Contract;
use super::load::Load;
use super::{parse_warmup, resolve_target, OutputConfig, TargetChoice};
use crate::cli::{DbArgs, IngestArgs, ModelName};
use crate::dialect::{Dialect, Engine, Method, PartitionBy, TableOptions};

use crate::error::usage;
use crate::ident::TableName;
use crate::model::{cpu, measurement, ModelSpec, Schema, SqlType};
use crate::op::Stages;

/// tsdbperf's default number of measurements per device.
const DEFAULT_MEASUREMENTS: u64 = 100_000;

/// What happens to the table before the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum TableAction {
    /// Create it; refuse if it exists.
    Create,
    /// Drop it if it exists, then create it.
    Recreate,
    /// Use it if it exists, create it otherwise.
    Append,
    /// Write the table as it is, with the columns its catalog lists
    /// (`insert-fake-data`, `insert-json`); refuse if it does not exist.
    Existing,
}

#[derive(Debug, Clone)]
pub struct IngestConfig {
    /// The command, as the report names it (`ingest`, `insert-fake-data`, `insert-json`).
    pub command: &'static str,
    pub target: TargetChoice,
    pub model: ModelSpec,
    pub schema: Schema,
    pub table: TableName,
    pub table_action: TableAction,
    /// `--method` (or the one `--with-upserts`, `--with-copy-upserts`
    /// imply); none: the engine's best, which [`IngestConfig::plan`]
    /// settles once the engine is known.
    pub method: Option<Method>,
    pub table_options: TableOptions,
    /// First and last reading's time (µs), when the run is bounded by rows.
    pub time_span_us: Option<(i64, i64)>,
    pub upsert: bool,
    pub workers: u32,
    pub batch_size: usize,
    /// Rows each worker generates (u64::MAX: until the duration ends).
    pub rows_per_worker: Vec<u64>,
    /// Duration, rate (total rows per second), stages, warm-up, seed, first worker, reconnect.
    pub load: Load,
    /// First reading's time, µs since the Unix epoch.
    pub start_us: i64,
    pub verify: bool,
    /// nodeIngestBench's flags were given: its Global Results block follows the report.
    /// nodeIngestBench's flags were given: its options, printed with its
    /// Options block at the start and its Global Results block before the report.
    pub node_options: Option<super::node_ingest::Options>,
    pub output: OutputConfig,
}

/// An ingest's settings once its engine is known: what [`IngestConfig`]
/// leaves open because only the server can say it. [`IngestConfig::plan`]
/// makes it once, after detection on the admin connection and after an
/// existing table's catalog is read; the run, its sinks and the report read
/// it, and nothing after it decides again. It lives in config/, not run/,
/// because it is the last step of resolving the flags (the one that needs
/// the server's answer) and the report reads it as it reads the config.
#[derive(Debug, Clone)]
pub struct IngestPlan {
    /// The engine's SQL; none on a dry run, which has no server.
    pub dialect: Option<Dialect>,
    /// `--method`, or the engine's best for the columns written.
    pub method: Method,
    /// The columns written: the model's, or those of the existing table
    /// the model was bound to.
    pub schema: Schema,
    /// Rows per `INSERT ... VALUES` statement: the batch is split so that
    /// no statement carries more values than the engine takes.
    pub insert_rows: usize,
}

impl IngestPlan {
    /// Whose SQL and limits the rows are written for (a dry run encodes
    /// for PostgreSQL).
    pub fn engine(&self) -> Engine {
        self.dialect.as_ref().map_or(Engine::Postgres, |d| d.engine)
    }
}

impl IngestConfig {
    /// The configuration run `run` of `--runs` (1-based) runs with. Each
    /// run after the first starts with a fresh table, as the first did, so
    /// that the runs measure the same thing; the first run made the table
    /// (it refuses one that exists), so dropping it drops no one else's.
    /// `--append` and the existing-table commands keep their table. The
    /// resolved configuration stays as it is: a later run gets a copy.
    pub fn for_run(&self, run: u32) -> Cow<'_, IngestConfig> {
        match self.table_action {
            TableAction::Create if run > 1 => {
                Cow::Owned(IngestConfig { table_action: TableAction::Recreate, ..self.clone() })
            }
            _ => Cow::Borrowed(self),
        }
    }

    /// Before a run after the first (`--runs`): insert-json reads its files
    /// again, so that every run writes the same rows.
    pub fn read_input_again(&self) -> Result<()> {
        match &self.model {
            ModelSpec::Json(spec) => spec.read_again(),
            _ => Ok(()),
        }
    }

    pub fn dry_run(&self) -> bool {
        matches!(self.target, TargetChoice::DryRun { .. })
    }

    /// Checks what the URL or `--engine` already says about the engine now,
    /// before anything starts; a detected engine is checked once known.
    pub(super) fn check_known_engine(&self) -> Result<()> {
        let (engine, http) = match &self.target {
            TargetChoice::Crate(_) => (Engine::Cratedb, true),
            TargetChoice::Remote(_, Some(e)) => (*e, false),
            TargetChoice::Local(_) => (Engine::Postgres, false),
            TargetChoice::Remote(_, None) | TargetChoice::DryRun { .. } => return Ok(()),
        };
        let dialect = self.dialect_for(engine, http)?;
        // The columns of an existing table are known only once it is read.
        if !self.model.reads_catalog() {
            self.plan(Some(dialect), http, self.schema.clone())?;
        }
        Ok(())
    }

    /// `engine`'s SQL for this run's table (reached over CrateDB's HTTP
    /// endpoint or not); refuses a method or a table flag the engine has no
    /// such thing for. The table is prepared with it before the plan is
    /// made, since an existing table's columns shape the plan.
    pub fn dialect_for(&self, engine: Engine, http: bool) -> Result<Dialect> {
        if let Some(method) = self.method {
            engine.check_method(method, http)?;
        }
        self.table_options.check(engine, &self.schema, self.upsert)?;
        Ok(Dialect { engine, options: self.table_options.clone() })
    }

    /// Settles the plan for `dialect` (none: a dry run), over CrateDB's HTTP
    /// endpoint or not, writing `schema`'s columns. The method is
    /// `--method`, or the engine's best; binary COPY needs each type's
    /// binary form, so columns in text form go by CSV COPY instead (refused
    /// if `--method copy` was asked for).
    pub fn plan(&self, dialect: Option<Dialect>, http: bool, schema: Schema) -> Result<IngestPlan> {
        let engine = dialect.as_ref().map_or(Engine::Postgres, |d| d.engine);
        let text = schema.columns.iter().any(|c| matches!(c.ty, SqlType::Text { .. }));
        let method = match (self.method, engine.methods(http)[0]) {
            (Some(Method::Copy), _) if text => {
                return Err(usage(format!(
                    "--method copy (binary COPY) needs each column's binary form, and {} writes values as text: \
                     use copy-csv (the default here), insert or unnest",
                    self.command
                )))
            }
            (Some(given), _) => given,
            (None, Method::Copy) if text => Method::CopyCsv,
            (None, best) => best,
        };
        self.check_statement_size(method, &schema, engine, http)?;
        let insert_rows = self.batch_size.min(engine.max_params() / schema.columns.len().max(1));
        Ok(IngestPlan { dialect, method, schema, insert_rows })
    }

    /// Over CrateDB's HTTP endpoint, `--method insert` sends a whole batch as
    /// one statement, which must stay within CrateDB's statement length.
    fn check_statement_size(&self, method: Method, schema: &Schema, engine: Engine, http: bool) -> Result<()> {
        let width = schema.columns.len().max(1);
        if !(http && method == Method::Insert && self.batch_size * width > engine.max_params()) {
            return Ok(());
        }
        Err(usage(format!(
            "--batch-size {}: over CrateDB's HTTP endpoint --method insert sends a batch as one statement, and {} \
             values exceed its statement length; use --batch-size {} or less, or --method bulk",
            self.batch_size,
            self.batch_size * width,
            engine.max_params() / width
        )))
    }

    /// Total rows to generate, if bounded.
    pub fn total_rows(&self) -> Option<u64> {
        self.rows_per_worker.iter().try_fold(0u64, |acc, &r| (r != u64::MAX).then_some(acc + r))
    }

    /// Resolve the flags. `env` reads environment variables (injected for tests).
    pub fn resolve(mut a: IngestArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<IngestConfig> {
        let tsdbperf = tsdbperf_target(&a.db);
        // tsdbperf drops and recreates its table at every start: its command
        // line keeps that meaning, so that running it again works as it did
        // there. `--append` keeps the rows.
        if (tsdbperf.is_some() || a.measurements.is_some()) && !a.append {
            a.drop_table = true;
        }
        if let Some(conninfo) = tsdbperf {
            a.target.url = Some(conninfo);
        }
        let node_options = super::node_ingest::habit(&mut a)?;
        let stages = super::resolve_stages(&a.stages, a.duration, a.rate, ("--workers", a.workers))?;
        let duration = stages.as_ref().map(Stages::duration).or(super::check_duration(a.duration)?);
        let workers = match (super::stage_workers(stages.as_ref()), a.workers) {
            (Some(n), _) => n,
            (None, Some(w)) => super::connections("--workers", w, "worker")?,
            (None, None) => super::cpus(),
        };
        if a.batch_size == 0 {
            return Err(usage("--batch-size 0: a batch needs at least 1 row"));
        }
        if a.devices == 0 {
            return Err(usage("--devices 0: need at least 1 device per worker"));
        }
        let model = resolve_model(&a)?;
        let schema = model.schema();
        let output = OutputConfig::resolve(a.output, Contract::Ingest)?;
        // With --instance, the counts are the whole run's, cut along its workers.
        let instance = output.instance.clone();
        super::stages_not_split(&a.stages, instance.as_ref())?;
        let all_workers = instance.as_ref().map_or(workers, |i| i.all_workers(workers));
        // Device (host) ids are numbered across all the run's workers, as oids.
        if all_workers as u64 * a.devices as u64 > u32::MAX as u64 {
            return Err(usage(format!(
                "--devices {} with {all_workers} workers in all: the device ids would pass {}; give fewer devices, \
                 workers or instances",
                a.devices,
                u32::MAX
            )));
        }

        let (method, upsert) = match (a.with_upserts, a.with_copy_upserts) {
            (true, _) if a.method.is_some_and(|m| m != Method::Copy && m != Method::Insert) => {
                return Err(usage(format!(
                    "--with-upserts means --upsert --method insert; it conflicts with --method {}",
                    a.method.unwrap_or(Method::Copy)
                )))
            }
            (true, _) => (Some(Method::Insert), true),
            (_, true) if a.method.is_some_and(|m| m != Method::Copy) => {
                return Err(usage(format!(
                    "--with-copy-upserts means --upsert --method copy; it conflicts with --method {}",
                    a.method.unwrap_or(Method::Copy)
                )))
            }
            (_, true) => (Some(Method::Copy), true),
            _ => (a.method, a.upsert),
        };

        let measurements = a.measurements.or(match (a.rows, duration) {
            (None, None) => Some(DEFAULT_MEASUREMENTS),
            _ => None,
        });
        let rows_per_worker: Vec<u64> = match (a.rows, measurements) {
            (Some(0), _) => return Err(usage("--rows 0: nothing to write; give at least 1 row")),
            (None, Some(0)) => {
                return Err(usage("--measurements 0: nothing to write; give at least 1 measurement per device"))
            }
            (Some(rows), _) => match &instance {
                Some(i) => i.shares(rows, workers),
                None => split_rows(rows, workers),
            },
            (None, Some(m)) => match m.checked_mul(model.devices() as u64) {
                Some(rows) => vec![rows; workers as usize],
                None => return Err(usage(format!("--measurements {m}: out of range for {} devices", model.devices()))),
            },
            (None, None) => vec![u64::MAX; workers as usize],
        };
        let rate = super::check_rate(a.rate, "rows")?.map(|r| instance.as_ref().map_or(r, |i| i.rate(r)));
        // None: no total (a duration run), or one past u64 (refused below: past the clock).
        let total = rows_per_worker.iter().try_fold(0u64, |acc, &r| (r != u64::MAX).then_some(acc.checked_add(r)?));
        let total_flag = if a.rows.is_some() { "--rows" } else { "--measurements" };
        // The whole run's rows and warm-up (a share of each in every instance).
        let total = match (instance.is_some(), a.rows) {
            (true, Some(rows)) => Some(rows),
            _ => total.map(|t| t.saturating_mul((all_workers / workers) as u64)),
        };
        let warmup = parse_warmup(
            a.warmup.as_deref(),
            all_workers,
            "rows",
            total.map(|n| (n, total_flag)),
            super::run_span(stages.as_ref(), duration),
        )?;

        // The rows asked for, as given, for the message if their times do not fit.
        let asked = match (a.rows, measurements) {
            (Some(r), _) => format!("--rows {r}"),
            (None, m) => format!("--measurements {}", m.unwrap_or_default()),
        };
        // The span of the run's longest worker, the same in every instance.
        let longest = match a.rows {
            Some(rows) => vec![rows.div_ceil(all_workers as u64)],
            None => rows_per_worker.clone(),
        };
        let span_us = readings_span(&model, &longest).ok_or_else(|| beyond_the_clock(&asked))?;
        let start_us = match &a.start {
            Some(s) => chrono::DateTime::parse_from_rfc3339(s)
                .map_err(|e| usage(format!("--start {s:?}: {e}; give an RFC 3339 time like 2024-01-01T00:00:00Z")))?
                .timestamp_micros(),
            None => default_start(span_us),
        };
        let time_span_us = span_us.map(|span| (start_us, start_us.saturating_add(span)));
        if let Some((first, last)) = time_span_us {
            if !in_clock(first, last) {
                return Err(beyond_the_clock(&asked));
            }
        }

        let table = TableName::parse(a.table.as_deref().unwrap_or(model.name()))?;
        let table_action = match (a.drop_table, a.append) {
            // Instance 0 of a distributed run makes the table; the others add to it.
            _ if instance.as_ref().is_some_and(|i| i.index > 0) => TableAction::Append,
            (true, _) => TableAction::Recreate,
            (_, true) => TableAction::Append,
            _ => TableAction::Create,
        };
        if a.verify && instance.is_some() {
            return Err(usage(
                "--verify counts the table's rows, and with --instance the table gets every instance's rows: count \
                 them once `dbload report --run-id` shows the run done",
            ));
        }

        let dry_run = a.dry_run || a.copy_file.is_some();
        if let Some(f) = &a.copy_file {
            if method.is_some_and(|m| m != Method::Copy) || upsert {
                let m = method.unwrap_or(Method::Copy);
                return Err(usage(format!(
                    "--copy-file writes a binary COPY stream: it needs --method copy without upserts, not --method {m}"
                )));
            }
            if workers > 1 && !f.contains("{worker}") {
                return Err(usage(format!(
                    "--copy-file {f:?} with {workers} workers: put {{worker}} in the name (e.g. rows-{{worker}}.bin) so each worker writes its own file"
                )));
            }
        }
        if dry_run && a.verify {
            return Err(usage("--verify needs a database; it cannot be combined with --dry-run or --copy-file"));
        }
        if dry_run && (a.target.url.is_some() || a.target.keep) {
            return Err(usage("--dry-run sends nothing: drop --url/--keep, or drop --dry-run"));
        }

        let target = if dry_run {
            TargetChoice::DryRun { copy_file: a.copy_file }
        } else {
            resolve_target(&a.target, workers, env)?
        };

        let table_options = TableOptions {
            shards: a.shards,
            replicas: a.replicas,
            chunk_interval: a.chunk_interval,
            no_hypertables: a.no_hypertables,
            distribution_column: a.distribution_column,
            reference_table: a.reference_table,
            partitions: a.partitions,
            partition_by: a.partition_by,
            unlogged: a.unlogged,
            compress: a.compress,
        };
        table_options.validate()?;
        if table_options.partition_by == Some(PartitionBy::Time) && time_span_us.is_none() {
            return Err(usage(
                "--partition-by time splits the generated time span, which --duration leaves open: give --rows or --measurements",
            ));
        }
        if method == Some(Method::Bulk) && dry_run {
            return Err(usage("--method bulk is CrateDB's HTTP bulk_args: --dry-run measures PostgreSQL's encodings"));
        }

        let cfg = IngestConfig {
            command: "ingest",
            target,
            model,
            schema,
            table,
            table_action,
            method,
            table_options,
            time_span_us,
            upsert,
            workers,
            batch_size: a.batch_size,
            rows_per_worker,
            load: Load {
                duration,
                rate,
                stages,
                warmup,
                seed: a.seed,
                first_worker: instance.as_ref().map_or(0, |i| i.first_worker(workers)),
                reconnect: super::reconnect(a.reconnect, a.no_reconnect, duration),
                skip_late: None,
            },
            start_us,
            verify: a.verify,
            node_options,
            output,
        };
        cfg.check_known_engine()?;
        Ok(cfg)
    }
}

/// `rows` shared by `workers`, the first ones taking one more if it does not divide.
pub(crate) fn split_rows(rows: u64, workers: u32) -> Vec<u64> {
    (0..workers as u64).map(|w| rows / workers as u64 + u64::from(w < rows % workers as u64)).collect()
}

/// From the first reading to the last, in µs: `Some(None)` if the row
/// count is unbounded, `None` if the span does not fit in the clock (a
/// `--rows` of 10¹⁴ or more).
fn readings_span(model: &ModelSpec, rows_per_worker: &[u64]) -> Option<Option<i64>> {
    let Some(&rows) = rows_per_worker.iter().max().filter(|&&r| r != u64::MAX) else { return Some(None) };
    let steps = i64::try_from(rows.div_ceil(model.devices() as u64)).ok()?;
    steps.checked_mul(step_us(model)).map(Some)
}

/// The readings' times must be timestamps that every engine and RFC 3339
/// take: years 1 to 9999 (PostgreSQL goes further, CrateDB and JSON not).
fn in_clock(first_us: i64, last_us: i64) -> bool {
    let year = |us| chrono::DateTime::from_timestamp_micros(us).map(|t| chrono::Datelike::year(&t));
    let in_range = |us| year(us).is_some_and(|y| (1..=9999).contains(&y));
    in_range(first_us) && in_range(last_us)
}

/// `asked`: the option that asked for the rows, with its value.
fn beyond_the_clock(asked: &str) -> anyhow::Error {
    usage(format!(
        "{asked}: out of range; the readings (one per device per time step) would reach beyond the years 1 to \
         9999 that timestamps take: give fewer rows, more --devices, or another --start"
    ))
}

fn step_us(model: &ModelSpec) -> i64 {
    match model {
        ModelSpec::Measurement(_) => measurement::STEP_US,
        ModelSpec::Cpu(_) => cpu::STEP_US,
        // No time series of their own: the span only matters to `--partition-by time`, which they do not create.
        ModelSpec::Table(_) | ModelSpec::Json(_) => measurement::STEP_US,
    }
}

/// tsdbperf's `--db-*` flags as a libpq conninfo string, each left out
/// taking tsdbperf's default (localhost, postgres, postgres) and the port
/// left to PGPORT or libpq's 5432, which tsdbperf always used. No password
/// is assumed: libpq's PGPASSWORD and password file give it, as for --url.
/// None when no `--db-*` flag was given.
fn tsdbperf_target(db: &DbArgs) -> Option<String> {
    if db.db_host.is_none() && db.db_user.is_none() && db.db_password.is_none() && db.db_name.is_none() {
        return None;
    }
    // libpq's quoting: a value in single quotes, a backslash or a quote in it escaped.
    let quoted = |v: &str| format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"));
    let mut conninfo = format!(
        "host={} user={} dbname={}",
        quoted(db.db_host.as_deref().unwrap_or("localhost")),
        quoted(db.db_user.as_deref().unwrap_or("postgres")),
        quoted(db.db_name.as_deref().unwrap_or("postgres")),
    );
    if let Some(password) = &db.db_password {
        conninfo.push_str(&format!(" password={}", quoted(password)));
    }
    Some(conninfo)
}

fn resolve_model(a: &IngestArgs) -> Result<ModelSpec> {
    Ok(match a.model.unwrap_or(ModelName::Measurement) {
        ModelName::Measurement => {
            if a.extra_tags.is_some() {
                return Err(usage("--extra-tags applies to the cpu model; add --model cpu"));
            }
            let metrics = a.metrics.unwrap_or(10);
            if !(1..=100).contains(&metrics) {
                return Err(usage(format!("--metrics {metrics}: give 1 to 100 metric columns")));
            }
            ModelSpec::Measurement(measurement::Options { devices: a.devices, metrics, jsonb: a.jsonb })
        }
        ModelName::Cpu => {
            if a.metrics.is_some() {
                return Err(usage("--metrics applies to the measurement model; the cpu model has its ten usage_* metrics (use --extra-tags for wider rows)"));
            }
            if a.jsonb {
                return Err(usage(
                    "--jsonb applies to the measurement model; the cpu model already stores its tags as jsonb",
                ));
            }
            ModelSpec::Cpu(cpu::Options { hosts: a.devices, extra_tags: a.extra_tags.unwrap_or(0) })
        }
    })
}

/// So that the last reading of the longest worker is about now (tsdbperf:
/// from `now - measurements` seconds); runs bounded by time start now.
fn default_start(span_us: Option<i64>) -> i64 {
    let now = chrono::Utc::now().timestamp() * 1_000_000;
    now.saturating_sub(span_us.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use crate::op::Warmup;
    use clap::Parser;
    use std::time::Duration;

    fn resolve(args: &str) -> Result<IngestConfig> {
        let cli = Cli::try_parse_from(format!("dbload ingest {args}").split_whitespace()).unwrap();
        let Command::Ingest(a) = cli.command else { unreachable!("ingest") };
        IngestConfig::resolve(a, &|_| None)
    }

    fn err(args: &str) -> String {
        let e = resolve(args).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2, "{e}");
        e.to_string()
    }

    /// Issue 32: `init`'s pgbench names for partitions and unlogged tables
    /// are ingest's too (one concept, one vocabulary): `--partition-method
    /// hash` is `--partition-by key`, `range` is `time`, `--unlogged-tables` is `--unlogged`.
    #[test]
    fn pgbench_s_partition_names_are_ingest_s() {
        let c = resolve("--rows 1000 --partitions 4 --partition-method hash --unlogged-tables").unwrap();
        let o = &c.table_options;
        assert_eq!((o.partitions, o.partition_by, o.unlogged), (Some(4), Some(PartitionBy::Key), true));
        let c = resolve("--rows 1000 --partitions 4 --partition-by range").unwrap();
        assert_eq!(c.table_options.partition_by, Some(PartitionBy::Time));
    }

    #[test]
    fn rows_take_the_forms_people_write() {
        for (rows, want) in [("1M", 1_000_000), ("1e6", 1_000_000), ("1_000_000", 1_000_000), ("2.5M", 2_500_000)] {
            assert_eq!(resolve(&format!("--rows {rows} --workers 4")).unwrap().total_rows(), Some(want), "{rows}");
        }
        let e = Cli::try_parse_from(["dbload", "ingest", "--rows", "1.5"]).unwrap_err().to_string();
        assert!(e.contains("'--rows <N>': 1.5 is not a whole number"), "{e}");
    }

    /// tsdbperf's --db-* flags: its defaults for what is left out, the port
    /// from PGPORT or libpq's 5432, and the password kept out of sight.
    #[test]
    fn tsdbperf_db_flags_are_the_target() {
        let target = |args: &str, env: &dyn Fn(&str) -> Option<String>| {
            let cli = Cli::try_parse_from(format!("dbload ingest {args}").split_whitespace()).unwrap();
            let Command::Ingest(a) = cli.command else { unreachable!("ingest") };
            let TargetChoice::Remote(t, None) = IngestConfig::resolve(a, env).unwrap().target else {
                panic!("not a server")
            };
            t.redacted().to_string()
        };
        assert_eq!(
            target("--db-host tsdb --db-password s3cret", &|_| None),
            "postgres://postgres:***@tsdb:5432/postgres"
        );
        let port = |k: &str| (k == "PGPORT").then(|| "6543".to_string());
        assert_eq!(target("--db-user app --db-name bench", &port), "postgres://app@localhost:6543/bench");
        let e = Cli::try_parse_from(["dbload", "ingest", "--db-host", "h", "--url", "postgres://x"]).unwrap_err();
        assert!(e.to_string().contains("--db-host <HOST>' cannot be used with '--url <URL>'"), "{e}");
    }

    #[test]
    fn tsdbperf_command_line() {
        let c = resolve("--workers 8 --devices 10 --measurements 100000 --metrics 10").unwrap();
        assert_eq!(c.total_rows(), Some(8_000_000));
        assert_eq!(c.schema.columns.len(), 12);
        assert!(matches!(c.target, TargetChoice::Local(_)));
    }

    /// Device ids are oids numbered across every worker of the run (all
    /// the instances'): past u32 they wrapped round and repeated.
    #[test]
    fn device_ids_past_an_oid_are_refused() {
        assert!(err("--workers 100000 --devices 50000 --rows 10").contains("device ids would pass 4294967295"));
        let e =
            err("--workers 1000 --devices 5000 --rows 10 --instance 0/1000 --run-id r --start-at 2026-01-01T00:00:00Z");
        assert!(e.contains("with 1000000 workers in all"), "{e}");
        assert!(resolve(
            "--workers 1000 --devices 4000 --rows 10 --instance 3/1000 --run-id r --start-at 2026-01-01T00:00:00Z"
        )
        .is_ok());
    }

    #[test]
    fn rows_split_across_workers() {
        let c = resolve("--workers 3 --rows 10").unwrap();
        assert_eq!(c.rows_per_worker, vec![4, 3, 3]);
        let c = resolve("--workers 2 --duration 5s").unwrap();
        assert_eq!(c.total_rows(), None);
    }

    /// The plan for `engine` (over CrateDB's HTTP endpoint or not), writing the model's columns.
    fn plan(c: &IngestConfig, engine: Engine, http: bool) -> Result<IngestPlan> {
        c.plan(Some(c.dialect_for(engine, http)?), http, c.schema.clone())
    }

    #[test]
    fn insert_statements_stay_under_the_parameter_limit() {
        let c = resolve("--method insert --batch-size 100000 --metrics 100").unwrap();
        let rows = plan(&c, Engine::Postgres, false).unwrap().insert_rows;
        assert_eq!(rows, 65_535 / 102);
        assert!(rows * c.schema.columns.len() <= Engine::Postgres.max_params());
        let c = resolve("--method insert --batch-size 10").unwrap();
        assert_eq!(plan(&c, Engine::Postgres, false).unwrap().insert_rows, 10);
    }

    /// The plan settles what the flags leave to the engine: `--method` as
    /// given, else the engine's best (a dry run's: PostgreSQL's), CSV COPY
    /// for columns in text form unless binary COPY was asked for, and rows
    /// per statement within the engine's limit.
    #[test]
    fn plan_settles_the_method_and_rows_per_statement_for_the_engine() {
        let best = |args: &str, engine, http| plan(&resolve(args).unwrap(), engine, http).unwrap().method;
        assert_eq!(best("", Engine::Postgres, false), Method::Copy);
        assert_eq!(best("--url postgres://h/d --engine timescaledb", Engine::Timescaledb, false), Method::Copy);
        assert_eq!(best("--url cratedb://h:4200", Engine::Cratedb, true), Method::Bulk);
        assert_eq!(best("--url postgres://h/d --engine cratedb", Engine::Cratedb, false), Method::Insert);
        assert_eq!(best("--method unnest", Engine::Postgres, false), Method::Unnest);
        assert_eq!(best("--url postgres://h/d --method unnest", Engine::Cratedb, false), Method::Unnest);
        let dry = resolve("--dry-run").unwrap();
        let p = dry.plan(None, false, dry.schema.clone()).unwrap();
        assert_eq!((p.method, p.engine(), p.insert_rows), (Method::Copy, Engine::Postgres, 65_535 / 12));
        // A detected engine's refusal comes from the plan's first step.
        let e = plan(&resolve("--url postgres://h/d --method copy").unwrap(), Engine::Cratedb, false).unwrap_err();
        assert!(e.to_string().contains("no COPY FROM STDIN"), "{e}");

        // Columns in text form (an existing table's, once bound).
        let with_text = |c: &IngestConfig| {
            let mut schema = c.schema.clone();
            schema.columns[1].ty = SqlType::Text { json: false };
            c.plan(Some(c.dialect_for(Engine::Postgres, false).unwrap()), false, schema)
        };
        assert_eq!(with_text(&resolve("").unwrap()).unwrap().method, Method::CopyCsv);
        assert_eq!(with_text(&resolve("--method insert").unwrap()).unwrap().method, Method::Insert);
        let e = with_text(&resolve("--method copy").unwrap()).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("--method copy (binary COPY)"), "{e}");

        // Rows per statement: the batch, within the engine's values per statement.
        let c = resolve("--url postgres://h/d --engine cratedb --method insert --batch-size 100000").unwrap();
        assert_eq!(plan(&c, Engine::Cratedb, false).unwrap().insert_rows, 25_000 / 12);
        assert_eq!(plan(&c, Engine::Postgres, false).unwrap().insert_rows, 65_535 / 12);
    }

    #[test]
    fn rows_or_rate_beyond_the_clock_are_refused() {
        for args in [
            "--rows 18446744073709551614",
            "--rows 100000000000000 --workers 1",
            "--measurements 100000000000000000",
            // Found by bench/fuzz.sh: the total of the workers' rows overflowed.
            "--measurements 922337203685477581",
        ] {
            let e = err(args);
            assert!(e.starts_with(args.split(" --").next().unwrap()) && e.contains("out of range"), "{args}: {e}");
        }
        let e = err("--rows 1000000 --start 9999-12-31T23:00:00Z");
        assert!(e.contains("years 1 to 9999"), "{e}");
        resolve("--rows 1000000000 --devices 10").unwrap();
        let e = err("--rate 1e-300 --rows 10");
        assert!(e.contains("--rate 1e-300") && e.contains("0.001 or more"), "{e}");
    }

    #[test]
    fn cratedb_statements_stay_within_its_statement_length() {
        let e = err("--url cratedb://h:4200 --method insert --batch-size 10000");
        assert!(e.contains("--batch-size 10000") && e.contains("--method bulk"), "{e}");
        resolve("--url cratedb://h:4200 --method insert --batch-size 2000").unwrap();
        resolve("--url cratedb://h:4200 --batch-size 10000").unwrap();
        let c = resolve("--url postgres://crate@h:5432/doc --engine cratedb --method insert").unwrap();
        assert_eq!(plan(&c, Engine::Cratedb, false).unwrap().insert_rows, 25_000 / 12);
        assert_eq!(plan(&c, Engine::Postgres, false).unwrap().insert_rows, 65_535 / 12);
    }

    #[test]
    fn tsdbperf_upsert_flags() {
        let c = resolve("--with-upserts").unwrap();
        assert_eq!((c.method, c.upsert), (Some(Method::Insert), true));
        let c = resolve("--with-copy-upserts").unwrap();
        assert_eq!((c.method, c.upsert), (Some(Method::Copy), true));
        assert!(err("--with-copy-upserts --method unnest").contains("--method unnest"));
    }

    #[test]
    fn bad_values_name_the_option() {
        assert!(err("--batch-size 0").contains("--batch-size"));
        assert!(err("--metrics 101").contains("--metrics 101"));
        assert!(err("--workers 0").contains("--workers"));
        // Issue 14 (fuzz): a count of connections that would take minutes to set up.
        assert!(err("--workers 100001").contains("--workers 100001: at most 100000"));
        assert!(err("--rows 0").contains("--rows"));
        assert!(err("--rate=-5").contains("--rate"));
        assert!(err("--warmup soon").contains("--warmup"));
        assert!(err("--model cpu --metrics 5").contains("--metrics"));
        assert!(err("--start yesterday").contains("--start"));
        assert!(err("--workers 2 --copy-file x.bin").contains("{worker}"));
        assert!(err("--dry-run --verify").contains("--verify"));
    }

    #[test]
    fn target_precedence() {
        let cli = Cli::try_parse_from(["dbload", "ingest"]).unwrap();
        let Command::Ingest(a) = cli.command else { unreachable!("ingest") };
        let env = |k: &str| (k == "DATABASE_URL").then(|| "postgres://u:secret@h:5/d".to_string());
        let c = IngestConfig::resolve(a, &env).unwrap();
        let TargetChoice::Remote(t, None) = c.target else { panic!("DATABASE_URL ignored") };
        assert!(!t.redacted().contains("secret"));
    }

    #[test]
    fn warmup_forms() {
        assert_eq!(
            parse_warmup(Some("10s"), 2, "rows", None, None).unwrap(),
            Warmup::Duration(Duration::from_secs(10))
        );
        assert_eq!(parse_warmup(Some("1001"), 2, "rows", None, None).unwrap(), Warmup::Count(501));
        assert_eq!(parse_warmup(Some("999"), 2, "rows", Some((1000, "--rows")), None).unwrap(), Warmup::Count(500));
    }

    /// A warm-up is taken out of the total, so one that is all of it is refused.
    #[test]
    fn warmup_count_that_leaves_nothing_to_measure_is_refused() {
        let e = parse_warmup(Some("1000"), 2, "rows", Some((1000, "--rows")), None).unwrap_err().to_string();
        assert!(e.contains("--warmup 1000") && e.contains("--rows"), "{e}");
    }

    /// Issue 29, item 7: a time past the clock panicked in the workers
    /// (`run/worker.rs:139`), and stages, rates, `--measurements 0` and a
    /// warm-up as long as the run were taken and measured nothing.
    #[test]
    fn times_rates_and_counts_a_run_cannot_keep_are_refused() {
        let e = err("--dry-run --duration 500000000000y");
        assert!(e.contains("--duration 500000000000years") && e.contains("at most 100years"), "{e}");
        let e = err("--dry-run --stages 500000000000y:1");
        assert!(e.contains("--stages 500000000000y:1") && e.contains("at most 100years"), "{e}");
        let e = err("--dry-run --stages 1s:0,1s:0");
        assert!(e.contains("--stages 1s:0,1s:0") && e.contains("every target is 0"), "{e}");
        let e = err("--dry-run --rate-stages 1s:1e-9");
        assert!(e.contains("--rate-stages 1s:1e-9") && e.contains("0.001 to 1000000000"), "{e}");
        let e = err("--dry-run --rate-stages 1s:0.5");
        assert!(e.contains("--rate-stages 1s:0.5") && e.contains("less than 1 operation"), "{e}");
        let e = err("--dry-run --rate 18446744073709551616 --duration 1s");
        assert!(e.contains("--rate 1.8446744073709552e19") && e.contains("1000000000 or less"), "{e}");
        let e = err("--dry-run --rate-stages 1s:18446744073709551616");
        assert!(e.contains("--rate-stages") && e.contains("1000000000"), "{e}");
        let e = err("--dry-run --measurements 0");
        assert!(e.contains("--measurements 0") && e.contains("nothing to write"), "{e}");
        let e = err("--dry-run --warmup 5s --duration 2s");
        assert!(e.contains("--warmup 5s") && e.contains("the run lasts 2s (--duration)"), "{e}");
        let e = err("--dry-run --warmup 500000000000y --rows 10");
        assert!(e.contains("--warmup 500000000000y") && e.contains("at most 100years"), "{e}");
        // What stays taken: a ramp down from workers given, the longest run, a warm-up shorter than the run.
        resolve("--dry-run --workers 3 --stages 1s:0").unwrap();
        resolve("--dry-run --duration 100y --warmup 1s").unwrap();
        resolve("--dry-run --rate-stages 2s:1 --rate 1 --rows 5").unwrap_err();
        resolve("--dry-run --rate-stages 2s:1").unwrap();
        resolve("--dry-run --rate 1000000000 --duration 1s").unwrap();
    }

    #[test]
    fn a_later_run_makes_its_table_afresh_and_leaves_the_resolved_config_as_it_is() {
        let cfg = resolve("--rows 10").unwrap();
        assert_eq!(cfg.for_run(1).table_action, TableAction::Create);
        assert_eq!(
            (cfg.for_run(2).table_action, cfg.for_run(3).table_action),
            (TableAction::Recreate, TableAction::Recreate)
        );
        assert_eq!(cfg.table_action, TableAction::Create);
        let appended = resolve("--rows 10 --append").unwrap();
        assert!(matches!(appended.for_run(2), Cow::Borrowed(c) if c.table_action == TableAction::Append));
    }
}
