//! A batch counts as written only once its COMMIT is acknowledged (issue 13
//! item 1): every path that sends COPY, against deferred constraint
//! triggers that fail or stall at commit, after COPY itself has completed.

use std::path::Path;

use anyhow::{Context, Result};

use crate::support::{dbload_bin, ensure, Ctx};
use crate::Phase::Parallel;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("commit::a_batch_failing_at_commit_is_counted_failed_on_every_copy_path", failing_commit, Parallel),
        ("commit::a_batch_latency_includes_its_commit_on_every_copy_path", slow_commit, Parallel),
        ("commit::rows_the_server_skips_without_an_error_are_failed_on_every_path", skipped_rows, Parallel),
    ]
}

const ROWS: u64 = 5000;
const BATCH: u64 = 1000;

/// One way dbload sends COPY, writing [`ROWS`] rows in batches of [`BATCH`]
/// over one connection.
struct CopyPath {
    name: &'static str,
    /// How the table is made: by `dbload ingest` with these flags (the
    /// measurement model), or `None` for a plain `(id int8, v text)`.
    ingest_table: Option<&'static str>,
    /// The command line after `--url URL --table TABLE`.
    args: fn(json_file: &str) -> Vec<String>,
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

const PATHS: [CopyPath; 6] = [
    CopyPath {
        name: "copy",
        ingest_table: Some(""),
        args: |_| words("ingest --append --method copy --rows 5000 --batch-size 1000 --workers 1"),
    },
    CopyPath {
        name: "copy_csv",
        ingest_table: Some(""),
        args: |_| words("ingest --append --method copy-csv --rows 5000 --batch-size 1000 --workers 1"),
    },
    CopyPath {
        name: "upsert",
        ingest_table: Some("--upsert"),
        args: |_| words("ingest --append --upsert --method copy --rows 5000 --batch-size 1000 --workers 1"),
    },
    CopyPath {
        name: "fake",
        ingest_table: None,
        args: |_| words("insert-fake-data --num-records 5000 --bulk-size 1000 --concurrency 1"),
    },
    CopyPath {
        name: "json",
        ingest_table: None,
        args: |file| {
            let mut a = words("insert-json --bulk-size 1000 --concurrency 1");
            a.push(file.to_string());
            a
        },
    },
    CopyPath {
        name: "from_sql",
        ingest_table: None,
        args: |_| {
            let mut a = words("insert-from-sql --batch-size 1000 --workers 1 --query");
            a.push("SELECT g::int8 AS id, g::text AS v FROM generate_series(1, 5000) g".into());
            a
        },
    },
];

/// Makes `table` for `path`, empty.
fn empty_table(ctx: &Ctx, path: &CopyPath, table: &str) -> Result<()> {
    match path.ingest_table {
        Some(flags) => {
            ctx.ingest(&format!("--table {table} --drop-table --rows 1 {flags}"))?;
            ctx.query(&format!("TRUNCATE {table}"))?;
        }
        None => {
            ctx.query(&format!("DROP TABLE IF EXISTS {table}; CREATE TABLE {table} (id int8, v text)"))?;
        }
    }
    Ok(())
}

/// Makes `table` for `path` (empty) and gives it a deferred constraint
/// trigger running `body` (PL/pgSQL) at commit, once per row written.
fn table_with_deferred_trigger(ctx: &Ctx, path: &CopyPath, table: &str, body: &str) -> Result<()> {
    empty_table(ctx, path, table)?;
    ctx.query(&format!(
        "DROP SEQUENCE IF EXISTS {table}_seq; CREATE SEQUENCE {table}_seq;
         CREATE OR REPLACE FUNCTION {table}_check() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN {body} RETURN NULL; END $$;
         CREATE CONSTRAINT TRIGGER {table}_at_commit AFTER INSERT ON {table}
           DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {table}_check();"
    ))?;
    Ok(())
}

/// Runs `path` into `table`; returns the exit code and the JSON report.
fn run(ctx: &Ctx, path: &CopyPath, table: &str, dir: &Path) -> Result<(i32, serde_json::Value)> {
    let file = dir.join("rows.json");
    let lines: String = (1..=ROWS).map(|i| format!("{{\"id\": {i}, \"v\": \"r{i}\"}}\n")).collect();
    std::fs::write(&file, lines)?;
    let mut argv = (path.args)(file.to_str().context("temp path")?);
    argv.splice(1..1, ["--url", &ctx.url, "--table", table, "--quiet", "--output", "json"].map(String::from));
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let (code, stdout, stderr) = dbload_bin(&argv, &[]);
    let report = serde_json::from_str(&stdout).with_context(|| format!("{}: exit {code}: {stderr}", path.name))?;
    Ok((code, report))
}

/// The reproduction: the one row whose commit-time check draws
/// 2,500 from a sequence fails its batch at COMMIT, after COPY completed.
/// Before the fix, COPY paths reported all 5,000 rows and exit 0 while the
/// table held 4,000.
fn failing_commit(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    for path in &PATHS {
        let table = format!("commit_fails_{}", path.name);
        let body = format!("IF nextval('{table}_seq') = 2500 THEN RAISE EXCEPTION 'refused at commit'; END IF;");
        table_with_deferred_trigger(ctx, path, &table, &body)?;
        let (code, r) = run(ctx, path, &table, dir.path())?;
        let in_table: u64 = ctx.scalar(&format!("SELECT count(*) FROM {table}"))?.parse()?;
        let what = || format!("{}: exit {code}, {in_table} rows in the table, report {r}", path.name);
        ensure(code == 1 && r["status"] == "failed", what)?;
        ensure(r["rows"] == in_table && in_table == ROWS - BATCH, what)?;
        ensure(r["failed_rows"] == BATCH && r["errors"] == 1, what)?;
        let classes = r["error_classes"].as_array().context("error_classes")?;
        ensure(classes.len() == 1 && classes[0]["class"] == "SQLSTATE P0001", what)?;
        ensure(classes[0]["example"].as_str().is_some_and(|e| e.contains("refused at commit")), what)?;
    }
    Ok(())
}

/// A trigger that drops every fourth row (`RETURN NULL` before the insert)
/// makes the server acknowledge fewer rows than it was sent, without an
/// error; CrateDB does the same with rows whose primary key exists. Those
/// rows are failed (exit 1, an error class saying so), not written and not
/// "not attempted". Before the fix they vanished from the report: 3,750
/// written, 0 failed, exit 0.
fn skipped_rows(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let insert = CopyPath {
        name: "insert",
        ingest_table: Some(""),
        args: |_| words("ingest --append --method insert --rows 5000 --batch-size 1000 --workers 1"),
    };
    for path in PATHS.iter().chain([&insert]) {
        let table = format!("skipped_{}", path.name);
        empty_table(ctx, path, &table)?;
        ctx.query(&format!(
            "DROP SEQUENCE IF EXISTS {table}_seq; CREATE SEQUENCE {table}_seq;
             CREATE OR REPLACE FUNCTION {table}_skip() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN IF nextval('{table}_seq') % 4 = 0 THEN RETURN NULL; END IF; RETURN NEW; END $$;
             CREATE TRIGGER {table}_skip BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION {table}_skip();"
        ))?;
        let (code, r) = run(ctx, path, &table, dir.path())?;
        let in_table: u64 = ctx.scalar(&format!("SELECT count(*) FROM {table}"))?.parse()?;
        let what = || format!("{}: exit {code}, {in_table} rows in the table, report {r}", path.name);
        ensure(code == 1 && r["status"] == "failed" && in_table == ROWS / 4 * 3, what)?;
        ensure(r["rows"] == in_table && r["failed_rows"] == ROWS / 4 && r["errors"] == ROWS / BATCH, what)?;
        let classes = r["error_classes"].as_array().context("error_classes")?;
        ensure(classes.len() == 1 && classes[0]["class"] == "not written", what)?;
        ensure(classes[0]["example"].as_str().is_some_and(|e| e.contains("wrote 750 of its 1000 rows")), what)?;
    }
    Ok(())
}

/// A commit that takes 200 ms (once per transaction) is part of every
/// batch's latency.
fn slow_commit(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    for path in &PATHS {
        let table = format!("commit_slow_{}", path.name);
        let body = "IF coalesce(current_setting('dbload_test.slept', true), '') = '' THEN
                      PERFORM pg_sleep(0.2); PERFORM set_config('dbload_test.slept', 'y', true);
                    END IF;";
        table_with_deferred_trigger(ctx, path, &table, body)?;
        let (code, r) = run(ctx, path, &table, dir.path())?;
        let what = || format!("{}: exit {code}, report {r}", path.name);
        ensure(code == 0 && r["rows"] == ROWS, what)?;
        let latency = &r["latency_ms"];
        ensure(latency["count"] == ROWS / BATCH && latency["min"].as_f64() >= Some(200.0), what)?;
    }
    Ok(())
}
