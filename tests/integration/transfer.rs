//! `export` and `insert-from-sql` against the real server: every column type
//! round-trips through the files (JSON and CSV, gzip or not, split across
//! workers), a large export keeps memory flat, a query's rows land in
//! another table exactly, and bad input is refused naming the culprit.
//! The cursor route that reads CrateDB over its PostgreSQL protocol is
//! checked on the harness's PostgreSQL, which sends the same binary format.
//! CrateDB's paged export, and insert-from-sql into CrateDB, run when
//! `DBLOAD_TEST_CRATEDB_HTTP_URL` is set; export and insert-from-sql out
//! of CrateDB over its PostgreSQL protocol when `DBLOAD_TEST_CRATEDB_URL` is;
//! export of a TimescaleDB hypertable when `DBLOAD_TEST_TIMESCALEDB_URL` is.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use dbload::cli::{Cli, Command as Cmd};
use dbload::driver::export::file::ExportFile;
use dbload::driver::pg::cursor::{raw_values, Cursor};
use dbload::driver::pg::decode::binary_text::RowText;
use dbload::driver::pg::export::CursorWorker;
use dbload::report::ingest::IngestReport;
use dbload::report::transfer::TransferReport;
use dbload::Finished;

use crate::engines::{crate_count, crate_rows, crate_target, engine_url, CRATEDB_HTTP, CRATEDB_PG, TIMESCALEDB};
use crate::fake_cratedb::{Cluster, Node, SYNTAX_ERROR};
use crate::support::{dbload_bin, ensure, refused, Ctx};
use crate::Phase::Parallel;
use crate::{EngineTest, Registered};

pub fn tests() -> Vec<Registered> {
    vec![
        ("transfer::export_json_round_trips_every_type", export_json_round_trips_every_type, Parallel),
        (
            "transfer::a_query_cratedb_refuses_as_a_syntax_error_is_the_users",
            a_query_cratedb_refuses_as_a_syntax_error_is_the_users,
            Parallel,
        ),
        ("transfer::export_gzip_csv_round_trips", export_gzip_csv_round_trips, Parallel),
        ("transfer::export_a_query_and_refuse_leftovers", export_a_query_and_refuse_leftovers, Parallel),
        (
            "transfer::export_a_query_ending_in_a_comment_and_refuse_duplicate_names",
            export_a_query_ending_in_a_comment_and_refuse_duplicate_names,
            Parallel,
        ),
        ("transfer::large_export_keeps_memory_flat", large_export_keeps_memory_flat, Parallel),
        ("transfer::ctrl_c_leaves_flushed_partial_files", ctrl_c_leaves_flushed_partial_files, Parallel),
        ("transfer::insert_from_sql_copies_exact_rows", insert_from_sql_copies_exact_rows, Parallel),
        ("transfer::insert_from_sql_refuses_what_does_not_fit", insert_from_sql_refuses_what_does_not_fit, Parallel),
        ("transfer::cursor_rows_round_trip_every_type", cursor_rows_round_trip_every_type, Parallel),
        ("transfer::cratedb_export_split_is_even", cratedb_export_split_is_even, Parallel),
        ("transfer::export_on_a_full_disk_keeps_whole_rows", export_on_a_full_disk_keeps_whole_rows, Parallel),
        (
            "transfer::export_into_a_directory_it_cannot_write_exits_2",
            export_into_a_directory_it_cannot_write,
            Parallel,
        ),
        (
            "transfer::insert_from_sql_fills_an_identity_column_but_not_a_generated_one",
            insert_from_sql_fills_an_identity_column_but_not_a_generated_one,
            Parallel,
        ),
    ]
}

/// Against a real CrateDB, over both of its protocols.
pub fn engine_tests() -> Vec<EngineTest> {
    let both: &'static [&'static str] = &[CRATEDB_HTTP, CRATEDB_PG];
    vec![
        ("transfer::cratedb_export_pages_round_trip", both, cratedb_export_pages_round_trip),
        ("transfer::insert_from_sql_into_cratedb", both, insert_from_sql_into_cratedb),
        ("transfer::insert_from_sql_out_of_cratedb", both, insert_from_sql_out_of_cratedb),
        (
            "transfer::timescaledb_export_of_a_compressed_hypertable_reads_every_row",
            &[TIMESCALEDB],
            timescaledb_export_of_a_compressed_hypertable_reads_every_row,
        ),
    ]
}

/// A table with every kind of value export must carry: text with a
/// backslash, tab, newline, quote and unicode, numeric beyond float
/// precision, timestamptz, arrays, json kept as written (raw newline and
/// tab), jsonb, bytea, NULLs, in a schema-qualified mixed-case name.
const TYPES: &str = r#"
DROP SCHEMA IF EXISTS "Xfer" CASCADE;
CREATE SCHEMA "Xfer";
CREATE TABLE "Xfer"."Types" (
  id int8 PRIMARY KEY, t text, v varchar(40), n numeric, f float8, i4 int4, ts timestamptz, d date,
  iv interval, ok boolean, u uuid, ints int4[], texts text[], jb jsonb, js json, b bytea
);
INSERT INTO "Xfer"."Types"
SELECT g, 'row ' || g || repeat('x', g % 50), 'v' || g, g * 1.000000000000000000001, g / 7.0::float8, g % 1000,
       '2024-01-01 00:00:00+00'::timestamptz + g * interval '1 minute 1.5 second', date '2024-01-01' + g % 300,
       g * interval '1 second', g % 2 = 0, md5(g::text)::uuid, ARRAY[g, NULL, -g], ARRAY['a' || g, 'q"b', NULL],
       jsonb_build_object('k', g, 'arr', jsonb_build_array(1.5, 'x', NULL)), ('{"g": ' || g || '}')::json,
       decode(md5(g::text), 'hex')
FROM generate_series(1, 5000) g;
INSERT INTO "Xfer"."Types" (id, t, n, ts, texts, jb, js, b) VALUES
  (-1, E'back\\slash\ttab\nnewline "quote" é 😀 \\N', 12345678901234567890.123456789, '1999-12-31 23:59:59.999999+05:30',
   ARRAY[E'a\\b', E'c\nd', '"'], '{"s": "x\\y\n", "n": null}', E'{\n\t"raw": [1,\n 2]}', '\x00ff5c0a'),
  (-2, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
"#;

/// The content of rows of [`TYPES`] in `from`, order-independent: a hash
/// over every row's text form. The `json` column is compared as jsonb: its
/// value round-trips, but a raw newline in its whitespace becomes a space,
/// so that each row stays on one line.
fn content(ctx: &Ctx, from: &str) -> Result<(String, String)> {
    let row = "(id, t, v, n, f, i4, ts, d, iv, ok, u, ints, texts, jb, js::jsonb, b)::text";
    let sum = format!("SELECT count(*)::text, md5(string_agg({row}, '|' ORDER BY {row})) FROM {from} r");
    let row = ctx.query(&sum)?;
    Ok((row[0][0].clone().unwrap_or_default(), row[0][1].clone().unwrap_or_default()))
}

fn run(ctx: &Ctx, command: &str, args: &str) -> Result<Finished<TransferReport>> {
    run_at(&ctx.url, command, args)
}

fn run_at(url: &str, command: &str, args: &str) -> Result<Finished<TransferReport>> {
    let argv = format!("dbload {command} --url {url} --quiet {args}");
    let cli = Cli::try_parse_from(shell_words(&argv))?;
    let mut out = Vec::new();
    match cli.command {
        Cmd::Export(a) => dbload::export(a, &|_| None, &mut out),
        Cmd::InsertFromSql(a) => dbload::insert_from_sql(a, &|_| None, &mut out),
        _ => unreachable!("a transfer command"),
    }
}

/// Splits on spaces, keeping '...' quoted parts (no escapes) whole.
fn shell_words(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    for (i, part) in s.split('\'').enumerate() {
        if i % 2 == 1 {
            words.push(part.to_string());
        } else {
            words.extend(part.split_whitespace().map(str::to_string));
        }
    }
    words
}

fn export(ctx: &Ctx, args: &str) -> Result<TransferReport> {
    export_at(&ctx.url, args)
}

fn export_at(url: &str, args: &str) -> Result<TransferReport> {
    let out = run_at(url, "export", args)?;
    let r = out.report;
    ensure(out.exit_code == 0, || format!("export {args}: exit {} {:?}", out.exit_code, r.error_classes))?;
    ensure(r.files.iter().all(|f| f.complete), || format!("export {args}: incomplete files {:?}", r.files))?;
    Ok(r)
}

/// Every line of the files: each file decompressed if gzip, its rows counted against the report.
fn read_files(r: &TransferReport) -> Result<String> {
    let mut all = String::new();
    for f in &r.files {
        let raw = std::fs::read(&f.path).with_context(|| f.path.display().to_string())?;
        let text = match f.path.extension().is_some_and(|e| e == "gz") {
            true => {
                let mut s = String::new();
                flate2::read::GzDecoder::new(&raw[..]).read_to_string(&mut s)?;
                s
            }
            false => String::from_utf8(raw)?,
        };
        ensure(text.len() as u64 == f.bytes, || {
            format!("{}: {} bytes, report says {}", f.path.display(), text.len(), f.bytes)
        })?;
        all.push_str(&text);
    }
    Ok(all)
}

/// `dbload insert-json` or `insert-fake-data --url URL --quiet ARGS`, in process.
fn rows_cmd(url: &str, args: &str) -> Result<Finished<IngestReport>> {
    let (command, args) = args.split_once(' ').unwrap_or((args, ""));
    let cli = Cli::try_parse_from(shell_words(&format!("dbload {command} --url {url} --quiet {args}")))?;
    match cli.command {
        Cmd::InsertJson(a) => dbload::insert_json(a, &|_| None, &mut Vec::new()),
        Cmd::InsertFakeData(a) => dbload::insert_fake_data(a, &|_| None, &mut Vec::new()),
        _ => unreachable!("a command that writes rows"),
    }
}

/// Loads text into `table` with COPY FROM STDIN `options`.
fn copy_in(ctx: &Ctx, table: &str, options: &str, data: String) -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async {
        let client = dbload::driver::PgTarget::from_url(&ctx.url, "test", &|_| None)?.connect().await?;
        let sink = client.copy_in(&format!("COPY {table} FROM STDIN {options}")).await?;
        futures_util::pin_mut!(sink);
        futures_util::SinkExt::send(&mut sink, bytes::Bytes::from(data)).await?;
        sink.finish().await?;
        Ok(())
    })
}

fn export_json_round_trips_every_type(ctx: &Ctx) -> Result<()> {
    ctx.query(TYPES)?;
    let dir = tempfile::tempdir()?;
    let r = export(ctx, &format!(r#"--table Xfer.Types --workers 3 --chunk-rows 700 --out {}"#, dir.path().display()))?;
    let names: Vec<String> = r.files.iter().map(|f| f.path.file_name().unwrap().to_string_lossy().into()).collect();
    ensure(names == ["Types_0.json", "Types_1.json", "Types_2.json"], || format!("{names:?}"))?;
    ensure(r.throughput.rows == 5002 && r.files.iter().map(|f| f.rows).sum::<u64>() == 5002, || {
        format!("{:?}", r.files)
    })?;
    ensure(r.files.iter().filter(|f| f.rows > 0).count() >= 2, || format!("one worker did it all: {:?}", r.files))?;
    ensure(r.throughput.batches >= 8 && r.latency_ms.is_some(), || format!("{} chunks", r.throughput.batches))?;
    // An export writes files, not rows to a table: its chunk line says nothing of rows "not written".
    let text = dbload::report::transfer::render(&r);
    let chunks = text.lines().find(|l| l.starts_with("Chunks:")).context("no Chunks: line")?;
    ensure(chunks.contains(" ok, 0 failed, ") && !chunks.contains("written"), || chunks.to_string())?;
    let lines = read_files(&r)?;
    ensure(lines.lines().count() == 5002, || format!("{} lines", lines.lines().count()))?;
    let mut special = None;
    for line in lines.lines() {
        let v: serde_json::Value = serde_json::from_str(line).with_context(|| line.to_string())?;
        if v["id"] == -1 {
            special = Some((v, line));
        }
    }
    let (v, line) = special.context("row -1 is missing")?;
    // Numbers exactly as the server wrote them (serde_json would round this one).
    ensure(line.contains(r#""n":12345678901234567890.123456789"#), || line.to_string())?;
    ensure(v["t"] == "back\\slash\ttab\nnewline \"quote\" é 😀 \\N", || format!("t = {}", v["t"]))?;
    ensure(v["js"]["raw"] == serde_json::json!([1, 2]) && v["jb"]["s"] == "x\\y\n", || v.to_string())?;
    ensure(v["texts"] == serde_json::json!(["a\\b", "c\nd", "\""]), || v.to_string())?;

    // Back into a copy of the table, with PostgreSQL's own JSON reading: the same rows.
    ctx.query(r#"CREATE TABLE "Xfer"."Back" (LIKE "Xfer"."Types")"#)?;
    let quoted = format!("$dbload${}$dbload$", lines.lines().collect::<Vec<_>>().join(","));
    ctx.query(&format!(
        r#"INSERT INTO "Xfer"."Back" SELECT r.* FROM json_array_elements(('[' || {quoted} || ']')::json) e,
           json_populate_record(NULL::"Xfer"."Back", e) r"#
    ))?;
    let (want, got) = (content(ctx, r#""Xfer"."Types""#)?, content(ctx, r#""Xfer"."Back""#)?);
    ensure(want == got, || format!("round trip: source {want:?}, back {got:?}"))?;

    // Seed 000's workflow: the files, emptied table, insert-json, the same rows.
    ctx.query(r#"TRUNCATE "Xfer"."Back""#)?;
    let files: Vec<String> = r.files.iter().map(|f| f.path.display().to_string()).collect();
    let out = rows_cmd(&ctx.url, &format!("insert-json --table Xfer.Back --bulk-size 500 {}", files.join(" ")))?;
    ensure(out.exit_code == 0, || format!("insert-json: {:?} {:?}", out.report.input_error, out.report.error_classes))?;
    let got = content(ctx, r#""Xfer"."Back""#)?;
    ensure(want == got, || format!("export + insert-json: source {want:?}, back {got:?}"))
}

fn export_gzip_csv_round_trips(ctx: &Ctx) -> Result<()> {
    ctx.query(&TYPES.replace(r#""Xfer""#, r#""XferCsv""#))?;
    let dir = tempfile::tempdir()?;
    let args = format!("--table XferCsv.Types --workers 2 --format csv --gzip --out {}", dir.path().display());
    let r = export(ctx, &args)?;
    ensure(r.files.iter().all(|f| f.path.to_string_lossy().ends_with(".csv.gz") && f.file_bytes < f.bytes), || {
        format!("{:?}", r.files)
    })?;
    ctx.query(r#"CREATE TABLE "XferCsv"."Back" (LIKE "XferCsv"."Types")"#)?;
    for f in &r.files {
        let one = TransferReport { files: vec![f.clone()], ..r.clone() };
        copy_in(ctx, r#""XferCsv"."Back""#, "(FORMAT csv, HEADER)", read_files(&one)?)?;
    }
    let (want, got) = (content(ctx, r#""XferCsv"."Types""#)?, content(ctx, r#""XferCsv"."Back""#)?);
    ensure(want == got && want.0 == "5002", || format!("CSV round trip: source {want:?}, back {got:?}"))
}

fn export_a_query_and_refuse_leftovers(ctx: &Ctx) -> Result<()> {
    ctx.query(
        "DROP TABLE IF EXISTS xq; CREATE TABLE xq AS SELECT g AS id, 'n' || g AS name FROM generate_series(1, 999) g",
    )?;
    let dir = tempfile::tempdir()?;
    let d = dir.path().display().to_string();
    let args = format!("--query 'select id, name from xq where id % 3 = 0;' --name thirds --out {d}");
    let r = export(ctx, &args)?;
    ensure(r.throughput.rows == 333 && r.files.len() == 1, || format!("{} rows {:?}", r.throughput.rows, r.files))?;
    let lines = read_files(&r)?;
    let first: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap_or("{}"))?;
    ensure(first == serde_json::json!({"id": 3, "name": "n3"}), || first.to_string())?;
    ensure(r.files[0].path.ends_with("thirds_0.json"), || format!("{:?}", r.files[0].path))?;
    // A second export would mix with the first one's files under a glob: refused, or replaced.
    refused(&["export", "--url", &ctx.url, "--query", "select 1", "--name", "thirds", "--out", &d], "thirds_0.json")?;
    export(ctx, &format!("{args} --overwrite"))?;
    refused(&["export", "--url", &ctx.url, "--table", "no_such_table", "--out", &d], "no_such_table")?;
    refused(&["export", "--url", &ctx.url, "--query", "selec 1", "--out", &d], "--query")?;
    refused(&["export", "--url", &ctx.url, "--query", "select 1", "--workers", "2", "--out", &d], "--workers")
}

/// Issue 29, item 7: `--out` a directory the export cannot write in (here
/// /sys/kernel, which refuses even root; a `chmod 555` one refuses other
/// users) failed as a failed operation (exit 1); it is bad input, found
/// before connecting.
fn export_into_a_directory_it_cannot_write(ctx: &Ctx) -> Result<()> {
    let ro = "/sys/kernel";
    if std::fs::File::create(format!("{ro}/dbload-probe")).is_ok() {
        anyhow::bail!("{ro} is writable here: the test needs a directory that refuses files");
    }
    let args = ["export", "--url", &ctx.url, "--query", "select 1", "--out", ro, "--no-results"];
    refused(&args, &format!("--out {ro}"))?;
    let file = tempfile::NamedTempFile::new()?;
    let not_dir = file.path().display().to_string();
    refused(&["export", "--url", &ctx.url, "--query", "select 1", "--out", &not_dir], "is not a directory")
}

/// Issue 29, item 8: `--query "select 1 as x -- c"` failed (the comment
/// swallowed the `)` that wraps the query), and a query of two columns of
/// one name wrote `{"x":1,"x":2}`, a JSON object no reader keeps whole:
/// it is refused (exit 2) with a way to rename them.
fn export_a_query_ending_in_a_comment_and_refuse_duplicate_names(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let d = dir.path().display().to_string();
    for format in ["json", "csv"] {
        let args = format!("--query 'select 1 as x -- c' --name commented --format {format} --overwrite --out {d}");
        let r = export(ctx, &args)?;
        let text = read_files(&r)?;
        let want = if format == "json" { "{\"x\":1}\n" } else { "x\n1\n" };
        ensure(r.throughput.rows == 1 && text == want, || format!("{format}: {} rows: {text:?}", r.throughput.rows))?;
    }
    let twice = ["export", "--url", &ctx.url, "--query", "select 1 as x, 2 as x", "--name", "twice", "--out", &d];
    refused(&twice, "--query: two columns are named `x`")?;
    let (_, _, stderr) = dbload_bin(&twice, &[]);
    ensure(stderr.contains("alias them (`select a.x, b.x as x2`)"), || stderr.clone())?;
    // CrateDB's route over its PostgreSQL protocol (a cursor), on the harness's server.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let opened = rt.block_on(async {
        let client = dbload::driver::PgTarget::from_url(&ctx.url, "test", &|_| None)?.connect().await?;
        let cursor = Cursor::declare(client, "select 1 as x, 2 as x", 10).await?;
        let file = ExportFile::create(dir.path().join("cursor.json"), false)?;
        anyhow::Ok(CursorWorker::open(cursor, dbload::dialect::ExportFormat::Json, file).map(|_| ()))
    })?;
    ensure(opened.as_ref().is_err_and(|e| e.starts_with("--query: two columns are named `x`")), || {
        format!("{opened:?}")
    })
}

fn large_export_keeps_memory_flat(ctx: &Ctx) -> Result<()> {
    const ROWS: u64 = 1_500_000;
    ctx.query(&format!(
        "DROP TABLE IF EXISTS xbig; CREATE UNLOGGED TABLE xbig AS \
         SELECT g AS id, g * 2 AS v, 'name ' || g AS name FROM generate_series(1, {ROWS}) g; ANALYZE xbig"
    ))?;
    let dir = tempfile::tempdir()?;
    let d = dir.path().display().to_string();
    let argv = ["export", "--url", &ctx.url, "--table", "xbig", "--workers", "2", "--out", &d, "--output", "json"];
    let (code, stdout, stderr) = dbload_bin(&argv, &[]);
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    let report: serde_json::Value = serde_json::from_str(&stdout)?;
    let schema: serde_json::Value = serde_json::from_str(include_str!("../../schema/transfer-report.schema.json"))?;
    let validator = jsonschema::validator_for(&schema).context("compiling the schema")?;
    let errors: Vec<String> = validator.iter_errors(&report).map(|e| format!("{e} at {}", e.instance_path())).collect();
    ensure(errors.is_empty(), || format!("{errors:#?}"))?;
    ensure(report["rows"] == ROWS, || format!("rows {}", report["rows"]))?;
    let estimate = report["setup"]["rows_estimate"].as_u64().unwrap_or(0);
    ensure(estimate.abs_diff(ROWS) < ROWS / 10, || format!("estimate {estimate}"))?;
    let rss = report["client_peak_rss_mib"].as_f64().unwrap_or(f64::MAX);
    ensure(rss < 64.0, || format!("peak RSS {rss} MiB exporting {ROWS} rows"))?;
    let mut lines = 0;
    for f in report["files"].as_array().into_iter().flatten() {
        let data = std::fs::read(f["path"].as_str().unwrap_or_default())?;
        lines += data.iter().filter(|&&b| b == b'\n').count() as u64;
    }
    ensure(lines == ROWS, || format!("{lines} lines in the files"))?;
    eprintln!(
        "large export: {} rows/s, {:.1} MB/s, peak RSS {rss:.1} MiB",
        report["rows_per_sec"].as_f64().unwrap_or(0.0) as u64,
        report["mb_per_sec"].as_f64().unwrap_or(0.0)
    );
    Ok(())
}

fn ctrl_c_leaves_flushed_partial_files(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let d = dir.path().display().to_string();
    // One row per chunk, 0.3 s per row (pg_sleep's argument depends on the
    // row, so it runs for every row): Ctrl-C lands mid-export. The server
    // sends COPY's rows in 8 KB blocks, here all at the end (3 s): within
    // the 5 s the loop gives what is in flight at Ctrl-C, the first chunk
    // arrives whole and the worker stops after it.
    let query = "select g, (select g from pg_sleep(0.3 + 0 * g)) as s from generate_series(1, 10) g";
    let argv = ["export", "--url", &ctx.url, "--query", query, "--chunk-rows", "1", "--gzip", "--out", &d];
    let child = Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(argv.iter().chain(&["--output", "json", "--quiet"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // Ready when the server runs the export's COPY (not after a fixed
    // time, which a slow start overruns; not at the query's prepare before it).
    let copying = "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' \
                   AND query LIKE 'COPY%pg_sleep(0.3 + 0 * g)%' AND pid <> pg_backend_pid()";
    let ready = std::time::Instant::now();
    while ctx.scalar(copying)? == "0" {
        ensure(ready.elapsed() < Duration::from_secs(30), || "the export's COPY never started".into())?;
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(1000));
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT)?;
    let out = child.wait_with_output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    ensure(out.status.code() == Some(130), || {
        format!("exit {:?}: {}", out.status, String::from_utf8_lossy(&out.stderr))
    })?;
    let report: serde_json::Value = serde_json::from_str(&stdout)?;
    let file = &report["files"][0];
    let rows = file["rows"].as_u64().unwrap_or(0);
    ensure(report["status"] == "interrupted" && file["complete"] == false && (1..10).contains(&rows), || {
        stdout.to_string()
    })?;
    // Flushed and closed: the gzip file is whole and holds exactly the rows reported.
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(Path::new(&d).join("query_0.json.gz"))?)
        .read_to_string(&mut text)?;
    ensure(text.lines().count() as u64 == rows, || format!("{rows} rows reported, file has {text:?}"))
}

fn insert_from_sql_copies_exact_rows(ctx: &Ctx) -> Result<()> {
    ctx.query(&TYPES.replace(r#""Xfer""#, r#""XferSql""#))?;
    ctx.query(
        r#"CREATE TABLE "XferSql"."Dst" (LIKE "XferSql"."Types");
           CREATE TABLE "XferSql"."Some" (extra int DEFAULT 7, t text, "ID" int8)"#,
    )?;
    let query = r#"select * from "XferSql"."Types" where id % 3 <> 0"#;
    let args = format!("--query '{query}' --table XferSql.Dst --workers 2 --batch-size 333 --output json");
    let out = run(ctx, "insert-from-sql", &args)?;
    let r = &out.report;
    ensure(out.exit_code == 0, || format!("exit {} {:?} {:?}", out.exit_code, r.error_classes, r.source_error))?;
    let want = content(ctx, &format!("({query})"))?;
    let got = content(ctx, r#""XferSql"."Dst""#)?;
    ensure(want == got, || format!("query gives {want:?}, table has {got:?}"))?;
    ensure(r.throughput.rows.to_string() == want.0 && r.throughput.batches == r.throughput.rows.div_ceil(333), || {
        format!("{} rows in {} batches", r.throughput.rows, r.throughput.batches)
    })?;
    ensure(r.bytes > 0 && r.mb_per_sec > 0.0 && r.throughput.errors == 0, || format!("{r:?}"))?;
    ensure(r.setup.method == Some(dbload::dialect::Method::Copy), || format!("method {:?}", r.setup.method))?;
    // A subset of columns, in another order, by name (case kept); the rest take their defaults.
    let args = r#"--query 'select t, id as "ID" from "XferSql"."Types"' --table XferSql.Some --batch-size 1000"#;
    let out = run(ctx, "insert-from-sql", args)?;
    ensure(out.exit_code == 0 && out.report.setup.columns == ["t", "ID"], || format!("{:?}", out.report.setup))?;
    let sums = ctx.query(r#"SELECT count(*), sum(extra), sum("ID") FROM "XferSql"."Some""#)?;
    let want = ctx.query(r#"SELECT count(*), 7 * count(*), sum(id) FROM "XferSql"."Types""#)?;
    ensure(sums == want, || format!("{sums:?} != {want:?}"))
}

fn insert_from_sql_refuses_what_does_not_fit(ctx: &Ctx) -> Result<()> {
    ctx.query("DROP TABLE IF EXISTS xfit; CREATE TABLE xfit (id int8, name text)")?;
    let base = ["insert-from-sql", "--url", &ctx.url, "--table", "xfit", "--query"];
    let with = |q: &'static str| [&base[..], &[q]].concat();
    refused(&with("select 1::int8 as id, 'x' as nom"), "no column nom")?;
    refused(&with("select 1::int4 as id"), "cast it in the query (id::int8)")?;
    refused(&with("select nothing from nowhere"), "--query")?;
    let missing = ["insert-from-sql", "--url", &ctx.url, "--table", "no_such", "--query", "select 1 as id"];
    refused(&missing, "no_such")?;
    let count = ctx.scalar("SELECT count(*) FROM xfit")?;
    ensure(count == "0", || format!("{count} rows written by refused runs"))
}

/// Binary COPY fills a `GENERATED ALWAYS AS IDENTITY` column from the
/// query, as INSERT does with OVERRIDING SYSTEM VALUE, while nothing can
/// write a stored generated column: insert-from-sql copies the first and
/// refuses the second by name, whatever catalog type it reads the
/// table's columns into (the models leave both to the database).
fn insert_from_sql_fills_an_identity_column_but_not_a_generated_one(ctx: &Ctx) -> Result<()> {
    ctx.query(
        "DROP TABLE IF EXISTS xident; \
         CREATE TABLE xident (id int8 GENERATED ALWAYS AS IDENTITY, v int4, twice int4 GENERATED ALWAYS AS (v * 2) STORED)",
    )?;
    let base = ["insert-from-sql", "--url", &ctx.url, "--table", "xident", "--query"];
    let with = |q: &'static str| [&base[..], &[q]].concat();
    refused(&with("select 1::int4 as v, 2::int4 as twice"), "twice is a generated column: leave it out of the query")?;
    let (code, _, stderr) =
        dbload_bin(&with("select g::int8 + 40 as id, g::int4 as v from generate_series(1, 3) g"), &[]);
    ensure(code == 0, || format!("insert-from-sql into an identity column: exit {code}: {stderr}"))?;
    let rows = ctx.query("SELECT concat_ws(' ', id, v, twice) FROM xident ORDER BY id")?;
    let rows: Vec<&str> = rows.iter().map(|r| r[0].as_deref().unwrap_or("")).collect();
    ensure(rows == ["41 1 2", "42 2 4", "43 3 6"], || format!("{rows:?}"))
}

/// Seed 000 on CrateDB over HTTP: fake rows, an export by 2 workers (each
/// a cursor over its share; every row once), the table emptied, the files
/// back through insert-json, a second export with the same lines, and a
/// query's rows; then the same over CrateDB's PostgreSQL protocol.
fn cratedb_export_pages_round_trip(_: &Ctx) -> Result<()> {
    let url = engine_url(CRATEDB_HTTP)?;
    let target = crate_target(&url)?;
    crate_rows(&target, "DROP TABLE IF EXISTS doc.xfer_crate")?;
    crate_rows(
        &target,
        "CREATE TABLE doc.xfer_crate (id bigint PRIMARY KEY, name text, email text, ts timestamp with time zone, \
         v double precision, n integer, ok boolean, tags array(text), o object(dynamic) AS (k integer, s text)) \
         CLUSTERED INTO 3 SHARDS WITH (number_of_replicas = 0)",
    )?;
    let fake = rows_cmd(&url, "insert-fake-data --table doc.xfer_crate --num-records 3000 --bulk-size 500")?;
    ensure(fake.exit_code == 0, || format!("insert-fake-data: {:?}", fake.report.error_classes))?;
    let count = crate_count(&target, "doc.xfer_crate")?;
    ensure(count == 3000, || format!("{count} rows after insert-fake-data"))?;

    let (first, second) = (tempfile::tempdir()?, tempfile::tempdir()?);
    let args = |dir: &Path| format!("--table doc.xfer_crate --workers 2 --chunk-rows 700 --out {}", dir.display());
    let r = export_at(&url, &args(first.path()))?;
    let lines = read_files(&r)?;
    ensure(r.throughput.rows == count && lines.lines().count() as u64 == count, || {
        format!("{} rows, {} lines, count {count}", r.throughput.rows, lines.lines().count())
    })?;
    ensure(r.files.iter().all(|f| f.rows > 0) && r.throughput.batches >= 5, || {
        format!("{} pages {:?}", r.throughput.batches, r.files)
    })?;
    let row: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap_or_default())?;
    ensure(row["ts"].is_i64() && row.get("_id").is_none(), || format!("epoch ms, no _id: {row}"))?;

    crate_rows(&target, "DELETE FROM doc.xfer_crate")?;
    ensure(crate_count(&target, "doc.xfer_crate")? == 0, || "rows left after DELETE".into())?;
    let files: Vec<String> = r.files.iter().map(|f| f.path.display().to_string()).collect();
    let back = rows_cmd(&url, &format!("insert-json --table doc.xfer_crate --bulk-size 400 {}", files.join(" ")))?;
    ensure(back.exit_code == 0, || {
        format!("insert-json: {:?} {:?}", back.report.input_error, back.report.error_classes)
    })?;
    ensure(crate_count(&target, "doc.xfer_crate")? == count, || "count after insert-json".into())?;
    let again = read_files(&export_at(&url, &args(second.path()))?)?;
    let sorted = |text: &str| {
        let mut v: Vec<&str> = text.lines().collect();
        v.sort_unstable();
        v.join("\n")
    };
    ensure(sorted(&lines) == sorted(&again), || "the second export differs from the first".into())?;
    let even = crate_rows(&target, "SELECT count(*) FROM doc.xfer_crate WHERE id % 2 = 0")?[0][0].clone();
    let query = format!(
        "--query 'select id, name from doc.xfer_crate where id % 2 = 0' --name even --out {}",
        second.path().display()
    );
    let r = export_at(&url, &query)?;
    ensure(Some(r.throughput.rows.to_string()) == even, || {
        format!("{} rows of the query, {even:?} even ids", r.throughput.rows)
    })?;

    // The same table over CrateDB's PostgreSQL protocol, through cursors: the
    // same rows (objects' keys compared in any order), and a query as CSV.
    let pg_url = engine_url(CRATEDB_PG)?;
    let third = tempfile::tempdir()?;
    let by_cursor = read_files(&export_at(&pg_url, &args(third.path()))?)?;
    let canonical = |text: &str| -> Result<Vec<String>> {
        let mut v = text
            .lines()
            .map(|l| Ok(serde_json::from_str::<serde_json::Value>(l)?.to_string()))
            .collect::<Result<Vec<_>>>()?;
        v.sort_unstable();
        Ok(v)
    };
    ensure(canonical(&by_cursor)? == canonical(&lines)?, || "the export over the PostgreSQL protocol differs".into())?;
    let csv_args = format!(
        "--query 'select id, name, tags from doc.xfer_crate where id % 2 = 0' --format csv --out {}",
        third.path().display()
    );
    let csv = read_files(&export_at(&pg_url, &csv_args)?)?;
    ensure(csv.starts_with("id,name,tags\n"), || csv.lines().next().unwrap_or_default().to_string())?;
    ensure(Some((csv.lines().count() - 1).to_string()) == even, || {
        format!("{} CSV lines, {even:?} even ids", csv.lines().count())
    })
}

/// The harness's PostgreSQL into CrateDB over HTTP: the query's rows as
/// JSON through insert-json's model, every row once, values converted.
/// Over CrateDB's HTTP endpoint (JSON bodies) and its PostgreSQL protocol (text forms).
fn insert_from_sql_into_cratedb(ctx: &Ctx) -> Result<()> {
    for var in [CRATEDB_HTTP, CRATEDB_PG] {
        let url = engine_url(var)?;
        insert_from_sql_into_cratedb_at(ctx, &url).with_context(|| format!("{var}={url}"))?;
    }
    Ok(())
}

/// `pg`, a PostgreSQL table of 2,500 rows (quotes, a backslash and unicode
/// in text, timestamps of whole milliseconds, arrays with NULLs, jsonb), and
/// `crate`, an empty CrateDB table of the same columns.
fn pg_and_crate_tables(ctx: &Ctx, target: &dbload::target::Target, pg: &str, crate_table: &str) -> Result<()> {
    ctx.query(&format!(
        "DROP TABLE IF EXISTS {pg};
         CREATE TABLE {pg} AS
         SELECT g::int8 AS id, 'name ' || g || E' \"q\" \\ é' AS name,
                '2024-01-01 00:00:00+00'::timestamptz + g * interval '1.5 second' AS ts, g / 7.0::float8 AS v,
                ARRAY['a' || g, NULL, 'c'] AS tags, jsonb_build_object('k', g, 's', 'x' || g) AS o
         FROM generate_series(1, 2500) g"
    ))?;
    crate_rows(target, &format!("DROP TABLE IF EXISTS {crate_table}"))?;
    crate_rows(
        target,
        &format!(
            "CREATE TABLE {crate_table} (id bigint PRIMARY KEY, name text, ts timestamp with time zone, \
             v double precision, tags array(text), o object(dynamic) AS (k integer, s text)) \
             CLUSTERED INTO 2 SHARDS WITH (number_of_replicas = 0)"
        ),
    )?;
    Ok(())
}

fn insert_from_sql_into_cratedb_at(ctx: &Ctx, url: &str) -> Result<()> {
    let target = crate_target(url)?;
    pg_and_crate_tables(ctx, &target, "xfer_to_crate", "doc.xfer_from_pg")?;
    let args = format!(
        "--src-url {} --query 'select * from xfer_to_crate where id > 0' --table doc.xfer_from_pg --workers 2 \
         --batch-size 300",
        ctx.url
    );
    let out = run_at(url, "insert-from-sql", &args)?;
    let r = &out.report;
    ensure(out.exit_code == 0, || format!("exit {} {:?} {:?}", out.exit_code, r.error_classes, r.source_error))?;
    ensure(r.throughput.rows == 2500 && r.throughput.batches == 9 && r.bytes > 0, || {
        format!("{} rows, {} batches", r.throughput.rows, r.throughput.batches)
    })?;
    ensure(r.setup.columns == ["id", "name", "ts", "v", "tags", "o"], || format!("{:?}", r.setup.columns))?;
    // The ingest's settled method (bulk over HTTP, insert over port 5432), not none.
    ensure(r.setup.method.is_some_and(|m| m != dbload::dialect::Method::Copy), || {
        format!("method {:?}", r.setup.method)
    })?;
    ensure(crate_count(&target, "doc.xfer_from_pg")? == 2500, || "count in CrateDB".into())?;
    let sums = "SELECT sum(id), sum(o['k']), count(DISTINCT name), min(ts), max(ts), sum(v) FROM doc.xfer_from_pg";
    let got = crate_rows(&target, sums)?;
    let want = ctx.query(
        "SELECT sum(id), sum((o->>'k')::int), count(DISTINCT name), (extract(epoch FROM min(ts)) * 1000)::int8, \
         (extract(epoch FROM max(ts)) * 1000)::int8, sum(v) FROM xfer_to_crate",
    )?;
    // Over the PostgreSQL protocol CrateDB gives times as text, not epoch ms: compare the rest.
    let n = if url.starts_with("cratedb://") { 5 } else { 3 };
    ensure(got[0][..n] == want[0][..n], || format!("CrateDB {got:?}, PostgreSQL {want:?}"))
}

/// The cursor route that reads CrateDB over its PostgreSQL protocol, run
/// on the harness's PostgreSQL, which sends the same binary format: every
/// type of [`TYPES`] as JSON lines back through insert-json, and as CSV
/// back through COPY FROM, gives the same rows.
fn cursor_rows_round_trip_every_type(ctx: &Ctx) -> Result<()> {
    ctx.query(&TYPES.replace(r#""Xfer""#, r#""XferCur""#))?;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let (json, csv, pages) = rt.block_on(async {
        let client = dbload::driver::PgTarget::from_url(&ctx.url, "test", &|_| None)?.connect().await?;
        let mut cursor = Cursor::declare(client, r#"SELECT * FROM "XferCur"."Types""#, 700).await?;
        let mut text = RowText::new(&cursor.columns()).map_err(anyhow::Error::msg)?;
        let (mut json, mut csv, mut pages) = (Vec::new(), Vec::new(), 0);
        text.csv_header(&mut csv);
        while !cursor.ended() {
            pages += 1;
            for row in &cursor.fetch().await? {
                text.json(raw_values(row), &mut json).map_err(anyhow::Error::msg)?;
                text.csv(raw_values(row), &mut csv).map_err(anyhow::Error::msg)?;
            }
        }
        anyhow::Ok((json, String::from_utf8(csv)?, pages))
    })?;
    ensure(pages == 8, || format!("{pages} pages of 700 for 5,002 rows"))?;
    let want = content(ctx, r#""XferCur"."Types""#)?;

    let dir = tempfile::tempdir()?;
    let file = dir.path().join("rows.json");
    std::fs::write(&file, &json)?;
    ctx.query(r#"CREATE TABLE "XferCur"."Back" (LIKE "XferCur"."Types")"#)?;
    let out = rows_cmd(&ctx.url, &format!("insert-json --table XferCur.Back {}", file.display()))?;
    ensure(out.exit_code == 0, || format!("insert-json: {:?} {:?}", out.report.input_error, out.report.error_classes))?;
    let got = content(ctx, r#""XferCur"."Back""#)?;
    ensure(want == got && want.0 == "5002", || format!("JSON by cursor: source {want:?}, back {got:?}"))?;

    ctx.query(r#"CREATE TABLE "XferCur"."BackCsv" (LIKE "XferCur"."Types")"#)?;
    copy_in(ctx, r#""XferCur"."BackCsv""#, "(FORMAT csv, HEADER)", csv)?;
    let got = content(ctx, r#""XferCur"."BackCsv""#)?;
    ensure(want == got, || format!("CSV by cursor: source {want:?}, back {got:?}"))
}

/// The harness's PostgreSQL into CrateDB and back out of it over its
/// PostgreSQL protocol (a cursor): the rows that come back are the rows
/// that went in (objects into jsonb, `varchar[]` into `text[]`); and from
/// CrateDB into CrateDB over HTTP, every row once.
fn insert_from_sql_out_of_cratedb(ctx: &Ctx) -> Result<()> {
    let url = engine_url(CRATEDB_PG)?;
    let target = crate_target(&url)?;
    pg_and_crate_tables(ctx, &target, "xfer_via_crate", "doc.xfer_via_pg")?;
    ctx.query("DROP TABLE IF EXISTS xfer_via_crate_back; CREATE TABLE xfer_via_crate_back (LIKE xfer_via_crate)")?;
    let into = format!("--src-url {} --query 'select * from xfer_via_crate' --table doc.xfer_via_pg", ctx.url);
    let out = run_at(&url, "insert-from-sql", &into)?;
    ensure(out.exit_code == 0, || format!("into CrateDB: exit {} {:?}", out.exit_code, out.report.error_classes))?;
    crate_rows(&target, "REFRESH TABLE doc.xfer_via_pg")?;

    let back = format!(
        "--src-url {url} --query 'select id, name, ts, v, tags, o from doc.xfer_via_pg' --table xfer_via_crate_back \
         --workers 2 --batch-size 300"
    );
    let out = run_at(&ctx.url, "insert-from-sql", &back)?;
    let r = &out.report;
    ensure(out.exit_code == 0, || {
        format!("out of CrateDB: exit {} {:?} {:?}", out.exit_code, r.error_classes, r.source_error)
    })?;
    ensure(r.throughput.rows == 2500 && r.throughput.batches == 9, || {
        format!("{} rows in {} batches", r.throughput.rows, r.throughput.batches)
    })?;
    let sum = |t: &str| {
        let row = "(id, name, ts, v, tags, o)::text";
        ctx.query(&format!("SELECT count(*), md5(string_agg({row}, '|' ORDER BY id)) FROM {t}"))
    };
    let (want, got) = (sum("xfer_via_crate")?, sum("xfer_via_crate_back")?);
    ensure(want == got, || format!("PostgreSQL → CrateDB → PostgreSQL: {want:?} became {got:?}"))?;

    let http = engine_url(CRATEDB_HTTP)?;
    crate_rows(&target, "DROP TABLE IF EXISTS doc.xfer_via_pg_copy")?;
    crate_rows(&target, "CREATE TABLE doc.xfer_via_pg_copy AS SELECT * FROM doc.xfer_via_pg LIMIT 0")?;
    let copy = format!("--src-url {url} --query 'select * from doc.xfer_via_pg' --table doc.xfer_via_pg_copy");
    let out = run_at(&http, "insert-from-sql", &copy)?;
    ensure(out.exit_code == 0 && out.report.throughput.rows == 2500, || {
        format!("CrateDB → CrateDB: {} rows", out.report.throughput.rows)
    })?;
    let count = crate_count(&target, "doc.xfer_via_pg_copy")?;
    ensure(count == 2500, || format!("{count} rows in the copy"))
}

/// CrateDB export's split, the condition of the SELECTs it sends, evaluated
/// on the harness's PostgreSQL (whose `md5`, `substr`, `ascii` and `%`
/// behave as CrateDB's) over a table of 65,536 `_id`s: for each worker
/// count every id goes to a worker in range, and each worker gets its share
/// within 10 % (`ascii(md5(_id)) % 16` left workers 10-15 without a row).
fn cratedb_export_split_is_even(ctx: &Ctx) -> Result<()> {
    ctx.query(
        "DROP TABLE IF EXISTS crate_split; CREATE TABLE crate_split AS \
         SELECT g::text AS _id FROM generate_series(1, 65536) g",
    )?;
    let table = dbload::ident::TableName::parse("crate_split")?;
    for n in [2u32, 3, 7, 10, 16, 17, 33, 64] {
        let select = dbload::dialect::cratedb::export_select(&table, 0, n);
        let worker = select.split_once(" WHERE ").and_then(|(_, w)| w.strip_suffix(" = 0")).context("condition")?;
        let mut counts = vec![0u64; n as usize];
        for row in ctx.query(&format!("SELECT ({worker})::int, count(*) FROM crate_split GROUP BY 1"))? {
            let w: usize = row[0].as_deref().context("worker")?.parse()?;
            ensure(w < counts.len(), || format!("{n} workers: a row for worker {w}"))?;
            counts[w] = row[1].as_deref().context("count")?.parse()?;
        }
        ensure(counts.iter().sum::<u64>() == 65_536, || format!("{n} workers read {counts:?}: not every row"))?;
        let share = 65_536.0 / n as f64;
        ensure(counts.iter().all(|&c| (c as f64 - share).abs() < share * 0.1), || {
            format!("{n} workers, uneven shares {counts:?} (each ~{share:.0})")
        })?;
    }
    Ok(())
}

/// Export on a full disk, plain and gzip: the binary runs with a 64 KiB
/// file size limit (`RLIMIT_FSIZE`) and SIGXFSZ ignored (ignored signals
/// survive exec), so its writes fail with EFBIG as on a full disk. It exits
/// 1 with its report (valid against the schema), whose rows are the lines
/// in the file, the last one whole; the gzip file is a whole stream; the
/// report names the file and the OS error. (It used to leave a torn line,
/// and lost the report when the file's last flush failed.)
fn export_on_a_full_disk_keeps_whole_rows(ctx: &Ctx) -> Result<()> {
    use std::os::unix::process::CommandExt;
    const LIMIT: u64 = 64 * 1024;
    ctx.query(
        "DROP TABLE IF EXISTS xfull; CREATE TABLE xfull AS \
         SELECT g AS id, md5(g::text) || md5((-g)::text) AS h FROM generate_series(1, 20000) g",
    )?;
    let schema: serde_json::Value = serde_json::from_str(include_str!("../../schema/transfer-report.schema.json"))?;
    let validator = jsonschema::validator_for(&schema).context("compiling the schema")?;
    for gzip in [false, true] {
        let dir = tempfile::tempdir()?;
        let d = dir.path().display().to_string();
        let mut argv = vec!["export", "--url", &ctx.url, "--table", "xfull", "--workers", "1"];
        argv.extend(["--chunk-rows", "300", "--out", &d, "--output", "json", "--quiet"]);
        if gzip {
            argv.push("--gzip");
        }
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_dbload"));
        cmd.args(&argv);
        // SAFETY: only async-signal-safe calls (setrlimit, sigaction) between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_FSIZE, LIMIT, LIMIT)?;
                nix::sys::signal::signal(Signal::SIGXFSZ, nix::sys::signal::SigHandler::SigIgn)?;
                Ok(())
            });
        }
        let out = cmd.output()?;
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        let what = format!("gzip {gzip}: exit {:?}, stderr {stderr}, stdout {stdout}", out.status.code());
        ensure(out.status.code() == Some(1), || what.clone())?;
        let report: serde_json::Value = serde_json::from_str(&stdout).with_context(|| what.clone())?;
        let errors: Vec<String> =
            validator.iter_errors(&report).map(|e| format!("{e} at {}", e.instance_path())).collect();
        ensure(errors.is_empty(), || format!("{errors:#?}"))?;
        let file = &report["files"][0];
        let path = file["path"].as_str().context("a file")?;
        ensure(report["status"] == "failed" && file["complete"] == false, || what.clone())?;
        ensure(stdout.contains(path) && stdout.contains("File too large"), || format!("reason not named: {what}"))?;
        let raw = std::fs::read(path)?;
        ensure(raw.len() as u64 <= LIMIT && file["file_bytes"] == raw.len() as u64, || {
            format!("{} bytes: {what}", raw.len())
        })?;
        let text = match gzip {
            true => {
                let mut s = String::new();
                flate2::read::GzDecoder::new(&raw[..]).read_to_string(&mut s).with_context(|| what.clone())?;
                s
            }
            false => String::from_utf8(raw)?,
        };
        let lines = text.lines().count() as u64;
        ensure(text.is_empty() || text.ends_with("}\n"), || {
            format!("torn last line: {:?}", &text[text.len().saturating_sub(80)..])
        })?;
        ensure(lines > 0 && report["rows"] == lines && file["rows"] == lines, || format!("{lines} lines: {what}"))?;
        ensure(file["bytes"] == text.len() as u64, || format!("{} bytes of rows: {what}", text.len()))?;
        for line in text.lines() {
            serde_json::from_str::<serde_json::Value>(line).with_context(|| line.to_string())?;
        }
    }
    Ok(())
}

/// A hypertable whose first chunks are compressed and whose last are not,
/// exported by several workers: every row once. A compressed chunk has no
/// ctid to split by block ranges (TimescaleDB refused the export with
/// SQLSTATE 42P10), so workers split the hypertable by its chunks' time.
fn timescaledb_export_of_a_compressed_hypertable_reads_every_row(_: &Ctx) -> Result<()> {
    let url = engine_url(TIMESCALEDB)?;
    let ts = Ctx::from_url(&url)?;
    // Two devices, one reading a second: four one-hour chunks compressed, then two more as loaded.
    let base = "--table tsdb_export --workers 1 --devices 2 --chunk-interval 3600 --verify";
    for args in [
        format!("{base} --drop-table --measurements 14400 --start 2024-01-01T00:00:00Z --compress"),
        format!("{base} --append --measurements 7200 --start 2024-01-01T04:00:00Z"),
    ] {
        let out = ts.ingest(&args)?;
        ensure(out.exit_code == 0, || format!("{args}: exit {} {:?}", out.exit_code, out.report.error_classes))?;
    }
    let compressed = ts.scalar(
        "SELECT count(*) FILTER (WHERE is_compressed)::text || '/' || count(*) \
         FROM timescaledb_information.chunks WHERE hypertable_name = 'tsdb_export'",
    )?;
    ensure(compressed == "4/6", || format!("compressed/all chunks: {compressed}"))?;
    let dir = tempfile::tempdir()?;
    let r = export_at(&url, &format!("--table tsdb_export --workers 3 --out {}", dir.path().display()))?;
    ensure(r.files.iter().all(|f| f.rows > 0), || format!("a worker read nothing: {:?}", r.files))?;
    let mut keys = std::collections::HashSet::new();
    for line in read_files(&r)?.lines() {
        let v: serde_json::Value = serde_json::from_str(line).with_context(|| line.to_string())?;
        keys.insert((v["device_id"].to_string(), v["time"].to_string()));
    }
    ensure(r.throughput.rows == 43_200 && keys.len() == 43_200, || {
        format!("{} rows exported, {} distinct: {:?}", r.throughput.rows, keys.len(), r.files)
    })
}

/// An export `--query` that CrateDB's HTTP endpoint refuses as a syntax
/// error (its code 4000, read as a code, not from the message) is the
/// user's to fix: exit 2 naming `--query`. A fake node (see
/// `fake_cratedb`): no CrateDB runs in CI.
fn a_query_cratedb_refuses_as_a_syntax_error_is_the_users(_: &Ctx) -> Result<()> {
    let node = Node::start(&std::sync::Arc::new(Cluster::default()), None)?;
    let dir = tempfile::tempdir()?;
    let out = dir.path().to_str().context("a temporary path")?;
    let url = format!("cratedb://{}", node.addr);
    let (code, _, stderr) = dbload_bin(&["export", "--url", &url, "--query", SYNTAX_ERROR, "--out", out], &[]);
    ensure(code == 2 && stderr.contains("--query: ") && stderr.contains("CrateDB 4000"), || {
        format!("exit {code}: {stderr}")
    })
}
