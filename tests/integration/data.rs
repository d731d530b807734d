//! insert-fake-data and insert-json against the real server: every column
//! type filled with its constraints honoured, the same seed giving the same
//! content by every method, a round trip through JSON, and bad input named
//! by file and line.

use std::io::Write as _;

use anyhow::{Context, Result};
use clap::Parser;

use dbload::cli::{Cli, Command};
use dbload::report::ingest::IngestReport;
use dbload::Finished;

use crate::support::{dbload_bin, ensure, interrupted, Ctx};
use crate::Phase::Parallel;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("data::fake_data_fills_every_column_type", fake_data_fills_every_column_type, Parallel),
        (
            "data::fake_data_is_the_same_for_a_seed_by_every_method",
            fake_data_is_the_same_for_a_seed_by_every_method,
            Parallel,
        ),
        ("data::fake_data_refuses_what_it_cannot_do", fake_data_refuses_what_it_cannot_do, Parallel),
        (
            "data::wide_table_report_states_the_rows_per_insert_used",
            wide_table_report_states_the_rows_per_insert_used,
            Parallel,
        ),
        ("data::json_round_trip_of_every_column_type", json_round_trip_of_every_column_type, Parallel),
        ("data::json_bad_row_aborts_naming_its_line", json_bad_row_aborts_naming_its_line, Parallel),
        ("data::json_skip_writes_exactly_the_bad_rows", json_skip_writes_exactly_the_bad_rows, Parallel),
        ("data::json_unknown_column_mismatch_and_empty_input", json_unknown_column_mismatch_and_empty_input, Parallel),
        ("data::json_gzip_and_arrays", json_gzip_and_arrays, Parallel),
        ("data::json_unreadable_input_exits_2_saying_why", json_unreadable_input_exits_2_saying_why, Parallel),
        ("data::json_runs_read_their_files_again", json_runs_read_their_files_again, Parallel),
        ("data::json_values_are_kept_exactly", json_values_are_kept_exactly, Parallel),
        (
            "data::json_default_columns_do_not_depend_on_a_rejected_first_row",
            json_default_columns_do_not_depend_on_a_rejected_first_row,
            Parallel,
        ),
        (
            "data::json_rows_name_default_columns_or_leave_them_to_the_database",
            json_rows_name_default_columns_or_leave_them_to_the_database,
            Parallel,
        ),
        (
            "data::json_more_column_sets_than_a_connection_keeps_prepared",
            json_more_column_sets_than_a_connection_keeps_prepared,
            Parallel,
        ),
        ("data::json_lone_surrogate_is_a_rejected_row", json_lone_surrogate_is_a_rejected_row, Parallel),
        ("data::reports_match_the_schema", reports_match_the_schema, Parallel),
        ("data::ctrl_c_stops_both_with_a_partial_report", ctrl_c_stops_both_with_a_partial_report, Parallel),
    ]
}

/// Ctrl-C: both commands stop, report what was committed (marked
/// interrupted) and exit 130; the table holds at least the counted rows.
fn ctrl_c_stops_both_with_a_partial_report(ctx: &Ctx) -> Result<()> {
    ctx.query("DROP TABLE IF EXISTS cc_data; CREATE TABLE cc_data (id int8 PRIMARY KEY, name text, at timestamptz)")?;
    let common = ["--url", &ctx.url, "--table", "cc_data", "--output", "json", "--quiet"];
    let fake = ["insert-fake-data", "--num-records", "100000000", "--concurrency", "2"];
    let after = std::time::Duration::from_secs(3);
    let report = interrupted(&[&fake[..], &common[..]].concat(), None, after)?;
    let count = |ctx: &Ctx| -> Result<u64> { Ok(ctx.scalar("SELECT count(*) FROM cc_data")?.parse()?) };
    let n = count(ctx)?;
    ensure(n >= report["rows_total"].as_u64().unwrap_or(u64::MAX), || format!("{n} rows after insert-fake-data"))?;
    ctx.query("TRUNCATE cc_data")?;
    // An endless JSON stream on stdin, ids from 1 up, until the pipe closes.
    let endless: fn(&mut dyn std::io::Write) = |stdin| {
        for id in 1u64.. {
            if writeln!(stdin, r#"{{"id": {id}, "name": "n{id}", "at": "2024-01-01T00:00:00Z"}}"#).is_err() {
                return;
            }
        }
    };
    let report = interrupted(&[&["insert-json"][..], &common[..]].concat(), Some(endless), after)?;
    let n = count(ctx)?;
    ensure(n >= report["rows_total"].as_u64().unwrap_or(u64::MAX), || format!("{n} rows after insert-json"))
}

/// A table with every type insert-fake-data fakes, constraints, a generated
/// column and columns with defaults.
const ALL_TYPES: &str = "
    id int PRIMARY KEY, code varchar(5) UNIQUE, small int2, big int8, r real, d double precision,
    price numeric(6,2), note text, c char(3), flag boolean, day date, t time, ts timestamp,
    created_at timestamptz, span interval, uid uuid, ip inet, net cidr, doc json, docb jsonb,
    raw bytea, tags text[], nums int4[], email text NOT NULL, name varchar(12),
    total int GENERATED ALWAYS AS (id * 2) STORED, serial_no serial, status text DEFAULT 'new'";

/// The table's content as one digest, in id order (without the serial,
/// which follows the order rows arrived in).
/// (The alias is not `t`: the table has a column of that name.)
const CHECKSUM: &str = "SELECT md5(string_agg((to_jsonb(x) - 'serial_no')::text, ',' ORDER BY id)) FROM";

fn create(ctx: &Ctx, table: &str, columns: &str) -> Result<()> {
    ctx.query(&format!("DROP TABLE IF EXISTS {table}; CREATE TABLE {table} ({columns})"))?;
    Ok(())
}

fn parse(args: &str) -> Command {
    Cli::parse_from(std::iter::once("dbload").chain(args.split_whitespace())).command
}

/// `dbload insert-fake-data --url URL --quiet ARGS`, in process.
pub(crate) fn fake(ctx: &Ctx, args: &str) -> Result<Finished<IngestReport>> {
    let Command::InsertFakeData(a) = parse(&format!("insert-fake-data --url {} --quiet {args}", ctx.url)) else {
        unreachable!()
    };
    dbload::insert_fake_data(a, &|_| None, &mut Vec::new())
}

/// `dbload insert-json --url URL --quiet ARGS`, in process.
fn json(ctx: &Ctx, args: &str) -> Result<Finished<IngestReport>> {
    let Command::InsertJson(a) = parse(&format!("insert-json --url {} --quiet {args}", ctx.url)) else {
        unreachable!()
    };
    dbload::insert_json(a, &|_| None, &mut Vec::new())
}

fn ok(o: &Finished<IngestReport>, what: &str) -> Result<()> {
    ensure(o.exit_code == 0, || {
        format!("{what}: exit {} {:?} {:?}", o.exit_code, o.report.error_classes, o.report.input_error)
    })
}

fn fake_data_fills_every_column_type(ctx: &Ctx) -> Result<()> {
    create(ctx, "fake_all", ALL_TYPES)?;
    let out = fake(ctx, "--table fake_all --num-records 2000 --concurrency 3 --bulk-size 300")?;
    ok(&out, "insert-fake-data")?;
    let r = &out.report;
    ensure(r.throughput.rows == 2000 && r.header.command == "insert-fake-data", || {
        format!("rows {} command {}", r.throughput.rows, r.header.command)
    })?;
    ensure(r.setup.method == dbload::dialect::Method::CopyCsv, || format!("method {}", r.setup.method))?;
    // Generated, serial and defaulted columns are left to the database.
    ensure(r.setup.columns == 25, || format!("{} columns written", r.setup.columns))?;
    let row = &ctx.query(
        "SELECT count(*), count(DISTINCT id), count(DISTINCT code), max(length(code)), max(length(name)), \
         bool_and(total = id * 2), count(serial_no), bool_and(status = 'new'), bool_and(email LIKE '%@%'), \
         count(DISTINCT flag), bool_and(abs(price) < 10000), count(tags), max(created_at) <= now() FROM fake_all",
    )?[0];
    let v = |i: usize| row[i].clone().unwrap_or_default();
    let want = ["2000", "2000", "2000"];
    ensure(row[..3].iter().zip(want).all(|(a, b)| a.as_deref() == Some(b)), || format!("counts {row:?}"))?;
    ensure(v(3).parse::<u32>()? <= 5 && v(4).parse::<u32>()? <= 12, || format!("varchar lengths {row:?}"))?;
    ensure(v(5) == "t" && v(6) == "2000" && v(7) == "t" && v(8) == "t", || format!("defaults, generated {row:?}"))?;
    ensure(v(9) == "2" && v(10) == "t" && v(11) == "2000" && v(12) == "t", || format!("values {row:?}"))?;
    // Ids are exactly 1..=2000, whatever worker wrote them.
    let ids = ctx.scalar("SELECT min(id)::text || '-' || max(id)::text FROM fake_all")?;
    ensure(ids == "1-2000", || format!("ids {ids}"))
}

/// The report states the columns and the rows per INSERT statement of the
/// table's own columns (read from the catalog when the run starts), not of
/// the model as configured: the run records them in its outcome.
fn wide_table_report_states_the_rows_per_insert_used(ctx: &Ctx) -> Result<()> {
    let columns: Vec<String> = (0..300).map(|i| format!("c{i} int4")).collect();
    create(ctx, "fake_wide", &columns.join(", "))?;
    let out = fake(ctx, "--table fake_wide --num-records 1000 --bulk-size 1000 --method insert")?;
    ok(&out, "insert-fake-data")?;
    let s = &out.report.setup;
    // 65,535 bound parameters over 300 columns.
    ensure(s.columns == 300 && s.insert_rows_per_statement == Some(218), || {
        format!("{} columns, {:?} rows per statement", s.columns, s.insert_rows_per_statement)
    })?;
    let count = ctx.scalar("SELECT count(*) FROM fake_wide")?;
    ensure(count == "1000", || format!("{count} rows in the table"))
}

fn fake_data_is_the_same_for_a_seed_by_every_method(ctx: &Ctx) -> Result<()> {
    create(ctx, "fake_seeded", ALL_TYPES)?;
    let mut sums = Vec::new();
    for method in ["copy-csv", "insert", "unnest", "copy-csv"] {
        ctx.query("TRUNCATE fake_seeded")?;
        let out = fake(
            ctx,
            &format!("--table fake_seeded --num-records 700 --workers 2 --batch-size 150 --seed 7 --method {method}"),
        )?;
        ok(&out, method)?;
        ensure(out.report.throughput.rows == 700, || format!("{method}: {} rows", out.report.throughput.rows))?;
        sums.push((method, ctx.scalar(&format!("{CHECKSUM} fake_seeded x"))?));
    }
    ensure(sums.iter().all(|s| s.1 == sums[0].1), || format!("content differs: {sums:?}"))?;
    // Another batch size, same rows; another seed, other rows.
    ctx.query("TRUNCATE fake_seeded")?;
    ok(&fake(ctx, "--table fake_seeded --num-records 700 --workers 2 --batch-size 33 --seed 7")?, "batch 33")?;
    let again = ctx.scalar(&format!("{CHECKSUM} fake_seeded x"))?;
    ensure(again == sums[0].1, || "the batch size changed the rows".into())?;
    ctx.query("TRUNCATE fake_seeded")?;
    ok(&fake(ctx, "--table fake_seeded --num-records 700 --workers 2 --seed 8")?, "seed 8")?;
    let other = ctx.scalar(&format!("{CHECKSUM} fake_seeded x"))?;
    ensure(other != sums[0].1, || "another seed gave the same rows".into())
}

fn fake_data_refuses_what_it_cannot_do(ctx: &Ctx) -> Result<()> {
    let refused = |args: &str, culprits: &[&str]| -> Result<()> {
        let e = fake(ctx, args).map(|o| o.exit_code).expect_err(args);
        let msg = format!("{e:#}");
        ensure(dbload::error::exit_code(&e) == 2, || format!("{args}: {msg}"))?;
        ensure(culprits.iter().all(|c| msg.contains(c)), || format!("{args}: {msg}"))
    };
    ctx.query("DROP TABLE IF EXISTS no_such_table")?;
    refused("--table no_such_table", &["no_such_table", "create it first"])?;
    create(ctx, "fake_point", "id int, p point")?;
    refused("--table fake_point", &["\"p\"", "point", "--mapping"])?;
    create(ctx, "fake_small", "k int2 PRIMARY KEY")?;
    refused("--table fake_small --num-records 40000", &["\"k\"", "32767"])?;
    refused("--table fake_small --method copy", &["--method copy", "copy-csv"])?;
    let dir = tempfile::tempdir()?;
    let mapping = dir.path().join("map.yml");
    std::fs::write(&mapping, "id: {int: [1, 5]}\npp: {const: \"(1,2)\"}\n")?;
    refused(
        &format!("--table fake_point --mapping {}", mapping.display()),
        &["map.yml:2:1", "\"pp\"", "did you mean `p`"],
    )?;
    // Mapped, the point column is filled.
    std::fs::write(&mapping, "id: {int: [1, 5]}\np: {const: \"(1,2)\", null_ratio: 0.5}\n")?;
    let out = fake(ctx, &format!("--table fake_point --num-records 100 --mapping {}", mapping.display()))?;
    ok(&out, "mapped point")?;
    let n =
        ctx.scalar("SELECT count(*) FILTER (WHERE p IS NOT NULL AND p[0] = 1 AND id BETWEEN 1 AND 5) FROM fake_point")?;
    ensure((20..80).contains(&n.parse::<u32>()?), || format!("{n} of 100 points at null_ratio 0.5"))
}

/// The table's rows as JSON lines, as an export would give them.
fn dump(ctx: &Ctx, table: &str, path: &std::path::Path) -> Result<u64> {
    let rows = ctx.query(&format!("SELECT row_to_json(x)::text FROM {table} x ORDER BY id"))?;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    for r in &rows {
        writeln!(f, "{}", r[0].as_deref().context("row")?)?;
    }
    f.flush()?;
    Ok(rows.len() as u64)
}

fn json_round_trip_of_every_column_type(ctx: &Ctx) -> Result<()> {
    create(ctx, "json_all", ALL_TYPES)?;
    ok(&fake(ctx, "--table json_all --num-records 1500 --concurrency 2 --seed 3")?, "fake")?;
    let want = ctx.scalar(&format!("{CHECKSUM} json_all x"))?;
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("json_all.json");
    let lines = dump(ctx, "json_all", &file)?;
    for method in ["copy-csv", "insert", "unnest"] {
        ctx.query("TRUNCATE json_all")?;
        let out = json(
            ctx,
            &format!("--table json_all --method {method} --bulk-size 200 --concurrency 3 {}", file.display()),
        )?;
        ok(&out, method)?;
        let r = &out.report;
        ensure(r.throughput.rows == lines && r.rows_read == Some(lines) && r.rejected_rows == Some(0), || {
            format!("{method}: rows {} read {:?} rejected {:?}", r.throughput.rows, r.rows_read, r.rejected_rows)
        })?;
        let got = ctx.scalar(&format!("{CHECKSUM} json_all x"))?;
        ensure(got == want, || format!("{method}: content differs after the round trip"))?;
    }
    Ok(())
}

/// The columns of `json_exact` and their types.
const EXACT: [(&str, &str); 9] = [
    ("s", "int2"),
    ("i", "int4"),
    ("b", "int8"),
    ("n", "numeric(20,3)"),
    ("nn", "numeric"),
    ("r", "float4"),
    ("d", "float8"),
    ("ts", "timestamp"),
    ("tz", "timestamptz"),
];

/// Issue 13 item 3: boundary values of every integer width, numeric, float4/8
/// (maxima, smallest normals, subnormals) and timestamps land exactly as the
/// file has them (the server's text of each stored value equals the server's
/// text of the file's value cast to the column's type); values out of range
/// are rejected rows with their line (9223372036854775808 was stored as
/// 9223372036854775807).
fn json_values_are_kept_exactly(ctx: &Ctx) -> Result<()> {
    let columns: Vec<String> = EXACT.iter().map(|(c, t)| format!("{c} {t}")).collect();
    create(ctx, "json_exact", &format!("id int PRIMARY KEY, {}", columns.join(", ")))?;
    let good = [
        r#"{"id": 1, "s": -32768, "i": -2147483648, "b": -9223372036854775808}"#,
        r#"{"id": 2, "s": 32767, "i": 2147483647, "b": 9223372036854775807}"#,
        r#"{"id": 3, "n": 12345678901234567.0, "nn": 1.0000000000000001, "b": 1e3}"#,
        r#"{"id": 4, "n": -99999999999999999.999, "nn": "123456789012345678901234567890.123456789"}"#,
        r#"{"id": 5, "r": 3.4028235e38, "d": 1.7976931348623157e308}"#,
        r#"{"id": 6, "r": 1.17549435e-38, "d": 2.2250738585072014e-308}"#,
        r#"{"id": 7, "r": 1e-45, "d": 5e-324, "nn": 0.1}"#,
        r#"{"id": 8, "ts": "2024-02-29 23:59:59.999999", "tz": "2024-06-30T12:34:56.123456+05:30"}"#,
        r#"{"id": 9, "ts": "1970-01-01T00:00:00", "tz": "1999-12-31 23:59:59.5-08"}"#,
    ];
    let bad = [
        (10, r#"{"id": 10, "s": 32768}"#),
        (11, r#"{"id": 11, "i": -2147483649}"#),
        (12, r#"{"id": 12, "b": 9223372036854775808}"#),
        (13, r#"{"id": 13, "b": -9223372036854775809}"#),
        (14, r#"{"id": 14, "n": 123456789012345678.5}"#),
    ];
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("exact.json");
    let text: Vec<&str> = good.iter().copied().chain(bad.iter().map(|(_, t)| *t)).collect();
    std::fs::write(&file, text.join("\n"))?;
    let rejects = dir.path().join("rejects.jsonl");
    let args = format!("--table json_exact --on-error skip --rejects {} {}", rejects.display(), file.display());
    let out = json(ctx, &args)?;
    ok(&out, "exact")?;
    ensure(out.report.throughput.rows == good.len() as u64, || format!("{} rows", out.report.throughput.rows))?;
    for row in good {
        let row: std::collections::HashMap<String, Box<serde_json::value::RawValue>> = serde_json::from_str(row)?;
        let id = row["id"].get();
        for (column, ty) in EXACT {
            // The file's own text of the value (the JSON number's digits).
            let literal = match row.get(column).map(|v| v.get()) {
                None => continue,
                Some(text) if text.starts_with('"') => serde_json::from_str::<String>(text)?,
                Some(text) => text.to_string(),
            };
            // PostgreSQL reads `1e3` as a number, not as an integer's text.
            let via = if ty.starts_with("int") { "::numeric" } else { "" };
            let (stored, wanted) = {
                let r = ctx.query(&format!(
                    "SET TIME ZONE 'UTC'; SELECT {column}::text, '{literal}'{via}::{ty}::text FROM json_exact WHERE id = {id}"
                ))?;
                let r = r.into_iter().next().context("row missing")?;
                (r[0].clone(), r[1].clone())
            };
            ensure(stored == wanted && stored.is_some(), || {
                format!("id {id} column {column}: stored {stored:?}, the file has {literal} ({wanted:?})")
            })?;
        }
    }
    // serde_json turns `1.0000000000000001` into 1.0 and `12345678901234567.0` into 1.2345678901234568e16.
    let nn = ctx.scalar("SELECT n::text || ' ' || nn::text FROM json_exact WHERE id = 3")?;
    ensure(nn == "12345678901234567.000 1.0000000000000001", || nn.clone())?;
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(&rejects)?.lines().map(serde_json::from_str).collect::<Result<_, _>>()?;
    let got: Vec<(u64, bool)> = lines
        .iter()
        .map(|l| {
            let error = l["error"].as_str().unwrap_or("");
            (l["line"].as_u64().unwrap_or(0), error.contains("out of range") || error.contains("does not fit"))
        })
        .collect();
    let want: Vec<(u64, bool)> = bad.iter().map(|(l, _)| (*l, true)).collect();
    ensure(got == want, || format!("rejects {lines:?}"))
}

/// Issue 13 item 3: which columns a row sends does not depend on the rows
/// before it. A byte order mark, garbage and a rejected first row that
/// named `id` made every later row without `id` a bad row (or, before,
/// stored 0 for it); they get their ids from the sequence.
fn json_default_columns_do_not_depend_on_a_rejected_first_row(ctx: &Ctx) -> Result<()> {
    create(ctx, "json_first_row", "id bigserial PRIMARY KEY, v int NOT NULL")?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("in.json");
    let rows: String = (1..=5).map(|v| format!("{{\"v\": {v}}}\n")).collect();
    std::fs::write(&path, format!("\u{feff}garbage\n{{\"id\": \"oops\", \"v\": 0}}\n{rows}"))?;
    let rejects = dir.path().join("rejects.jsonl");
    let args = format!("--table json_first_row --on-error skip --rejects {} {}", rejects.display(), path.display());
    let out = json(ctx, &args)?;
    ok(&out, "rejected first row")?;
    let r = &out.report;
    ensure(r.throughput.rows == 5 && r.rejected_rows == Some(2), || {
        format!(
            "rows {} rejected {:?}: {}",
            r.throughput.rows,
            r.rejected_rows,
            std::fs::read_to_string(&rejects).unwrap_or_default()
        )
    })?;
    let rows = ctx.scalar("SELECT string_agg(id || ':' || v, ' ' ORDER BY v) FROM json_first_row")?;
    ensure(rows == "1:1 2:2 3:3 4:4 5:5", || format!("table has {rows}"))
}

/// Issue 13 item 3: rows that name a column with a default keep their
/// value, rows that do not get the default, whatever order they come in
/// (a batch holds rows that name the same columns), by every method
/// insert-json offers.
fn json_rows_name_default_columns_or_leave_them_to_the_database(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("mixed.json");
    // A row of an even `set` names `id`, one of set 0 or 1 `created_at`: the
    // four column sets change row after row for 200 rows, then in runs of 50.
    let mut text = String::new();
    for v in 0..400u32 {
        let set = if v < 200 { v % 4 } else { (v - 200) / 50 % 4 };
        let mut row = serde_json::json!({ "v": v, "set": set });
        if set % 2 == 0 {
            row["id"] = serde_json::json!(1_000_000 + v);
        }
        if set / 2 == 0 {
            row["created_at"] = serde_json::json!("2024-05-06T07:08:09Z");
        }
        text.push_str(&row.to_string());
        text.push('\n');
    }
    std::fs::write(&path, text)?;
    for method in ["copy-csv", "insert", "unnest"] {
        create(
            ctx,
            "json_mixed",
            "id bigserial PRIMARY KEY, v int NOT NULL, set int, created_at timestamptz DEFAULT '2000-01-01Z'",
        )?;
        let args = format!("--table json_mixed --method {method} --bulk-size 7 --concurrency 3 {}", path.display());
        let out = json(ctx, &args)?;
        ok(&out, method)?;
        ensure(out.report.throughput.rows == 400 && out.report.rejected_rows == Some(0), || {
            format!("{method}: rows {} rejected {:?}", out.report.throughput.rows, out.report.rejected_rows)
        })?;
        let got = ctx.scalar(
            "SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || count(*) FILTER (WHERE \
             (CASE WHEN set % 2 = 0 THEN id = 1000000 + v ELSE id < 1000000 END) \
             AND created_at = CASE WHEN set / 2 = 0 THEN '2024-05-06T07:08:09Z' ELSE '2000-01-01Z' END::timestamptz) \
             FROM json_mixed",
        )?;
        ensure(got == "400 400 400", || format!("{method}: rows, distinct ids, rows as expected: {got}"))?;
    }
    Ok(())
}

/// Issue 13 item 3: more sets of columns than a connection keeps statements
/// prepared for (16), and batches of more lengths than it keeps an INSERT
/// prepared for (8 short ones): the oldest are closed and prepared again
/// when needed, and every row keeps its values or gets its defaults.
fn json_more_column_sets_than_a_connection_keeps_prepared(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("sets.json");
    // Run r of 1 + r % 12 rows names d1..d5 by the bits of s = r % 32: each
    // of the 32 sets three times, in batches of 1 to 12 rows.
    let (mut text, mut v) = (String::new(), 0);
    for r in 0..96u32 {
        let s = r % 32;
        for _ in 0..=r % 12 {
            let mut row = serde_json::json!({ "v": v, "s": s });
            for k in (1..=5).filter(|k| s >> (k - 1) & 1 == 1) {
                row[format!("d{k}")] = serde_json::json!(v * 10 + k);
            }
            text.push_str(&row.to_string());
            text.push('\n');
            v += 1;
        }
    }
    std::fs::write(&path, text)?;
    let defaults: Vec<String> = (1..=5).map(|k| format!("d{k} int DEFAULT -{k}")).collect();
    let kept: Vec<String> =
        (1..=5).map(|k| format!("d{k} = CASE WHEN s >> {} & 1 = 1 THEN v * 10 + {k} ELSE -{k} END", k - 1)).collect();
    for method in ["copy-csv", "insert"] {
        create(ctx, "json_sets", &format!("v int PRIMARY KEY, s int, {}", defaults.join(", ")))?;
        let args = format!("--table json_sets --method {method} --bulk-size 16 --concurrency 1 {}", path.display());
        ok(&json(ctx, &args)?, method)?;
        let got = ctx.scalar(&format!(
            "SELECT count(*) || ' ' || count(*) FILTER (WHERE {}) FROM json_sets",
            kept.join(" AND ")
        ))?;
        ensure(got == format!("{v} {v}"), || format!("{method}: {v} rows; rows, rows as expected: {got}"))?;
    }
    Ok(())
}

/// Issue 13 item 2: a lone surrogate (`"\ud800"`) among 2,001 lines
/// panicked the producer (1,500 committed, exit 0); it is one rejected row
/// with its line, and the 2,000 others are written.
fn json_lone_surrogate_is_a_rejected_row(ctx: &Ctx) -> Result<()> {
    create(ctx, "json_surrogate", "id int PRIMARY KEY, v text")?;
    let dir = tempfile::tempdir()?;
    let file = rows_file(&dir, "in.json", 2001, &[(1600, r#"{"id": 1600, "v": "\ud800"}"#)])?;
    let rejects = dir.path().join("rejects.jsonl");
    let out = json(ctx, &format!("--table json_surrogate --on-error skip --rejects {} {file}", rejects.display()))?;
    ok(&out, "surrogate")?;
    let r = &out.report;
    ensure(r.throughput.rows == 2000 && r.rejected_rows == Some(1) && r.rows_read == Some(2001), || {
        format!("rows {} rejected {:?} read {:?}", r.throughput.rows, r.rejected_rows, r.rows_read)
    })?;
    let text = std::fs::read_to_string(&rejects)?;
    ensure(text.contains("\"line\":1600") && text.contains("is not text"), || text.clone())?;
    let n = ctx.scalar("SELECT count(*) FROM json_surrogate")?;
    ensure(n == "2000", || format!("table has {n} rows"))
}

/// `n` good rows for `json_rows (id int primary key, v text)`, with `bad`
/// put in place of the rows at the given lines (1-based).
fn rows_file(dir: &tempfile::TempDir, name: &str, n: u32, bad: &[(u32, &str)]) -> Result<String> {
    let path = dir.path().join(name);
    let mut text = String::new();
    for line in 1..=n {
        match bad.iter().find(|(l, _)| *l == line) {
            Some((_, b)) => text.push_str(b),
            None => text.push_str(&format!("{{\"id\": {line}, \"v\": \"row {line}\"}}")),
        }
        text.push('\n');
    }
    std::fs::write(&path, text)?;
    Ok(path.display().to_string())
}

/// `--runs` reads the input files again for every run (they are the same
/// rows each time: a repeat measures the same work); stdin, read once,
/// cannot be repeated and is refused before anything runs.
fn json_runs_read_their_files_again(ctx: &Ctx) -> Result<()> {
    create(ctx, "json_runs", "id int, v text")?;
    let dir = tempfile::tempdir()?;
    let file = rows_file(&dir, "in.json", 500, &[])?;
    let argv = ["insert-json", "--url", &ctx.url, "--table", "json_runs", "--runs", "3", "--output", "json", &file];
    let (code, stdout, stderr) = dbload_bin(&argv, &[]);
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    let report: serde_json::Value = serde_json::from_str(&stdout)?;
    let runs = report["repeat"]["runs"].as_array().cloned().unwrap_or_default();
    ensure(runs.len() == 3 && runs.iter().all(|r| r["acknowledged"] == 500), || report["repeat"].to_string())?;
    ensure(ctx.scalar("SELECT count(*) FROM json_runs")? == "1500", || "the table lacks a run's rows".into())?;
    let argv = ["insert-json", "--url", &ctx.url, "--table", "json_runs", "--runs", "2", "-"];
    let (code, _, stderr) = dbload_bin(&argv, &[]);
    ensure(code == 2 && stderr.contains("--runs 2") && stderr.contains("stdin"), || format!("exit {code}: {stderr}"))?;
    ensure(ctx.scalar("SELECT count(*) FROM json_runs")? == "1500", || "a refused run wrote rows".into())
}

fn json_bad_row_aborts_naming_its_line(ctx: &Ctx) -> Result<()> {
    create(ctx, "json_abort", "id int PRIMARY KEY, v text")?;
    let dir = tempfile::tempdir()?;
    let file = rows_file(&dir, "in.json", 20, &[(7, "{\"id\": 7, \"v\": oops}")])?;
    let (code, stdout, stderr) = dbload_bin(
        &["insert-json", "--url", &ctx.url, "--table", "json_abort", "--bulk-size", "3", "--concurrency", "1", &file],
        &[],
    );
    ensure(code == 2, || format!("exit {code}: {stderr}"))?;
    ensure(stderr.contains(&format!("{file}:7:")) && stderr.contains("6 rows committed"), || stderr.clone())?;
    ensure(stdout.contains("Input:") && stdout.contains("7 rows read"), || stdout.clone())?;
    // Rows before the bad one were written, none after it.
    let n = ctx.scalar("SELECT count(*)::text || ' ' || max(id)::text FROM json_abort")?;
    ensure(n == "6 6", || format!("table has {n}"))
}

fn json_skip_writes_exactly_the_bad_rows(ctx: &Ctx) -> Result<()> {
    create(ctx, "json_skip", "id int PRIMARY KEY, v varchar(8)")?;
    let dir = tempfile::tempdir()?;
    let bad = [
        (3, "{\"id\": 3, \"v\": "),
        (10, "{\"id\": \"ten\"}"),
        (11, "{\"id\": 11, \"v\": \"far too long\"}"),
        (40, "{\"id\": 40,"),
    ];
    let file = rows_file(&dir, "in.json", 40, &bad)?;
    let rejects = dir.path().join("rejects.jsonl");
    let args = format!(
        "--table json_skip --on-error skip --rejects {} --bulk-size 4 --concurrency 3 {file}",
        rejects.display()
    );
    let out = json(ctx, &args)?;
    ok(&out, "skip")?;
    let r = &out.report;
    ensure(
        r.throughput.rows == 36
            && r.rejected_rows == Some(4)
            && r.rows_read == Some(40)
            && r.throughput.failed_rows == 0,
        || {
            format!(
                "rows {} rejected {:?} read {:?} failed {}",
                r.throughput.rows, r.rejected_rows, r.rows_read, r.throughput.failed_rows
            )
        },
    )?;
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(&rejects)?.lines().map(serde_json::from_str).collect::<Result<_, _>>()?;
    let mut got: Vec<(u64, String)> = lines
        .iter()
        .map(|l| (l["line"].as_u64().unwrap_or(0), l["input"].as_str().unwrap_or("").to_string()))
        .collect();
    got.sort();
    let want: Vec<(u64, String)> = bad.iter().map(|(l, t)| (*l as u64, t.trim_end().to_string())).collect();
    ensure(got == want, || format!("rejects {got:?}"))?;
    ensure(lines.iter().all(|l| l["file"] == file.as_str() && l["error"].is_string()), || format!("{lines:?}"))?;
    let n = ctx.scalar("SELECT count(*) FROM json_skip")?;
    ensure(n == "36", || format!("table has {n} rows"))
}

fn json_unknown_column_mismatch_and_empty_input(ctx: &Ctx) -> Result<()> {
    create(ctx, "json_strict", "id int PRIMARY KEY, \"Name\" text")?;
    let dir = tempfile::tempdir()?;
    for (name, text, culprits) in [
        (
            "unknown.json",
            "{\"id\": 1, \"Name\": \"a\"}\n{\"id\": 2, \"name\": \"b\"}\n",
            &[":2:", "key \"name\" is not a column"][..],
        ),
        ("mismatch.json", "{\"id\": \"abc\"}\n", &[":1:", "column \"id\": value \"abc\" is not an integer"][..]),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text)?;
        let out = json(ctx, &format!("--table json_strict {}", path.display()))?;
        let e = out.report.input_error.clone().unwrap_or_default();
        ensure(out.exit_code == 2 && culprits.iter().all(|c| e.contains(c)), || {
            format!("{name}: exit {} {e}", out.exit_code)
        })?;
    }
    // With --ignore-unknown the unknown key is dropped.
    let path = dir.path().join("unknown.json");
    ctx.query("TRUNCATE json_strict")?;
    ok(&json(ctx, &format!("--table json_strict --ignore-unknown {}", path.display()))?, "--ignore-unknown")?;
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "\n  \n")?;
    let e =
        json(ctx, &format!("--table json_strict {}", empty.display())).map(|o| o.exit_code).expect_err("empty input");
    ensure(dbload::error::exit_code(&e) == 2 && format!("{e:#}").contains("no rows in input"), || format!("{e:#}"))?;
    ctx.query("DROP TABLE IF EXISTS json_missing")?;
    let e = json(ctx, &format!("--table json_missing {}", path.display())).map(|o| o.exit_code).expect_err("no table");
    ensure(format!("{e:#}").contains("json_missing does not exist"), || format!("{e:#}"))
}

/// Issue 29, item 7: input that cannot be read as JSON lines is bad input
/// (exit 2), and the message says what it is: a directory, a gzip file cut
/// short, a file in UTF-16 (not "byte 0xff").
fn json_unreadable_input_exits_2_saying_why(ctx: &Ctx) -> Result<()> {
    create(ctx, "json_unreadable", "a int")?;
    let dir = tempfile::tempdir()?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    for i in 0..2000 {
        writeln!(gz, "{{\"a\": {i}}}")?;
    }
    let gz = gz.finish()?;
    let truncated = dir.path().join("cut.json.gz");
    std::fs::write(&truncated, &gz[..gz.len() / 2])?;
    let header_only = dir.path().join("head.json.gz");
    std::fs::write(&header_only, &gz[..12])?;
    let utf16 = dir.path().join("utf16.json");
    let text: Vec<u8> = "{\"a\": 1}\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
    std::fs::write(&utf16, [&[0xff, 0xfe][..], &text].concat())?;
    let sub = dir.path().join("rows");
    std::fs::create_dir(&sub)?;
    for (path, culprits) in [
        (&sub, &["rows", "is a directory"][..]),
        (&truncated, &["cut.json.gz", "gzip", "ends early"][..]),
        (&header_only, &["head.json.gz", "gzip", "ends early"][..]),
        (&utf16, &["utf16.json", "UTF-16"][..]),
    ] {
        let (code, e) = match json(ctx, &format!("--table json_unreadable {}", path.display())) {
            Ok(o) => (o.exit_code, o.report.input_error.clone().unwrap_or_default()),
            Err(e) => (dbload::error::exit_code(&e), format!("{e:#}")),
        };
        // Not a row: --on-error skip would not go past it.
        let ok = code == 2 && culprits.iter().all(|c| e.contains(c)) && !e.contains("fix that row");
        ensure(ok, || format!("{}: exit {code}: {e}", path.display()))?;
    }
    Ok(())
}

fn json_gzip_and_arrays(ctx: &Ctx) -> Result<()> {
    create(ctx, "json_forms", "id int PRIMARY KEY, v text, at timestamptz DEFAULT now()")?;
    let dir = tempfile::tempdir()?;
    // A gzip file whose name does not say so, and a pretty-printed array.
    let gz = dir.path().join("rows.data");
    let mut enc = flate2::write::GzEncoder::new(std::fs::File::create(&gz)?, flate2::Compression::fast());
    for i in 1..=500 {
        writeln!(enc, "{{\"id\": {i}, \"v\": \"g{i}\"}}")?;
    }
    enc.finish()?;
    let array = dir.path().join("rows.json");
    let items: Vec<serde_json::Value> =
        (501..=800).map(|i| serde_json::json!({"id": i, "v": format!("a{i}")})).collect();
    std::fs::write(&array, serde_json::to_string_pretty(&items)?)?;
    let out =
        json(ctx, &format!("--table json_forms --bulk-size 64 --concurrency 4 {} {}", gz.display(), array.display()))?;
    ok(&out, "gzip + array")?;
    let got = ctx.scalar("SELECT count(*)::text || ' ' || sum(id)::text || ' ' || count(at) FROM json_forms")?;
    ensure(got == "800 320400 800", || format!("table has {got}"))
}

fn reports_match_the_schema(ctx: &Ctx) -> Result<()> {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../schema/report.schema.json")).context("schema file")?;
    let validator = jsonschema::validator_for(&schema).context("compiling the schema")?;
    create(ctx, "json_report", "id int PRIMARY KEY, v text")?;
    let dir = tempfile::tempdir()?;
    let file = rows_file(&dir, "in.json", 50, &[(9, "{\"id\": \"nine\"}")])?;
    let rejects = dir.path().join("rejects.jsonl");
    let rejects = rejects.to_str().context("path")?;
    let fake = ["insert-fake-data", "--url", &ctx.url, "--table", "json_report", "--num-records", "100"];
    let json =
        ["insert-json", "--url", &ctx.url, "--table", "json_report", "--on-error", "skip", "--rejects", rejects, &file];
    for argv in [&fake[..], &json[..]] {
        ctx.query("TRUNCATE json_report")?;
        let (code, stdout, stderr) = dbload_bin(&[argv, &["--output", "json"]].concat(), &[]);
        ensure(code == 0, || format!("{argv:?}: exit {code}: {stderr}"))?;
        let report: serde_json::Value = serde_json::from_str(&stdout)?;
        let errors: Vec<String> =
            validator.iter_errors(&report).map(|e| format!("{e} at {}", e.instance_path())).collect();
        ensure(errors.is_empty(), || format!("{argv:?}: {errors:#?}"))?;
        ctx.query("TRUNCATE json_report")?;
        let (_, text, _) = dbload_bin(argv, &[]);
        ensure(text.contains("Executing inserts: bulk_size=1000 concurrency=25"), || text.clone())?;
    }
    ctx.query("TRUNCATE json_report")?;
    let (_, text, _) = dbload_bin(&json, &[]);
    ensure(text.contains("50 rows read: 49 committed, 1 rejected, 0 in failed batches"), || text)
}
