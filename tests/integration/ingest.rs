//! Ingest against the real server: exact counts and content for every model
//! × method, upserts, failures counted, pacing, verification.

use anyhow::Result;

use crate::support::{config, ensure, expected, found, Ctx};
use crate::Phase::{Parallel, Quiet};
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("ingest::every_model_and_method_writes_exact_rows", every_model_and_method_writes_exact_rows, Parallel),
        (
            "ingest::insert_splits_batches_over_the_parameter_limit",
            insert_splits_batches_over_the_parameter_limit,
            Parallel,
        ),
        ("ingest::upsert_twice_keeps_the_count", upsert_twice_keeps_the_count, Parallel),
        ("ingest::failed_batches_are_counted_not_written", failed_batches_are_counted_not_written, Parallel),
        ("ingest::existing_table_is_never_dropped_unasked", existing_table_is_never_dropped_unasked, Parallel),
        ("ingest::rate_is_held", rate_is_held, Quiet),
        ("ingest::warmup_is_reported_apart", warmup_is_reported_apart, Parallel),
        ("ingest::duration_stops_the_run", duration_stops_the_run, Parallel),
        ("ingest::schema_qualified_mixed_case_table", schema_qualified_mixed_case_table, Parallel),
        ("ingest::report_names_the_setup", report_names_the_setup, Parallel),
        ("ingest::long_table_names_keep_their_indexes", long_table_names_keep_their_indexes, Parallel),
    ]
}

const START: &str = "--start 2024-01-01T00:00:00Z";

/// Ingests `args` into `table` and checks count and checksums against the generator.
fn ingest_and_check(ctx: &Ctx, table: &str, args: &str) -> Result<()> {
    let args = format!("{args} {START} --table {table} --drop-table --verify");
    let out = ctx.ingest(&args)?;
    let cfg = config(&args);
    let want = expected(&cfg);
    ensure(out.exit_code == 0, || format!("{args}: exit {} {:?}", out.exit_code, out.report.error_classes))?;
    ensure(out.report.throughput.rows == want.rows, || {
        format!("{args}: reported {} rows, want {}", out.report.throughput.rows, want.rows)
    })?;
    ensure(out.report.verify.as_ref().is_some_and(|v| v.ok), || format!("{args}: verify {:?}", out.report.verify))?;
    let got = found(ctx, &cfg, &format!("\"{table}\""))?;
    ensure(got == want, || format!("{args}: server has {got:?}, generator made {want:?}"))
}

fn every_model_and_method_writes_exact_rows(ctx: &Ctx) -> Result<()> {
    for method in ["copy", "copy-csv", "insert", "unnest"] {
        for (name, model) in [("m", "--metrics 4"), ("j", "--jsonb --metrics 3"), ("c", "--model cpu --extra-tags 2")] {
            let table = format!("exact_{name}_{}", method.replace('-', "_"));
            // Odd sizes: partial last batches, uneven worker shares.
            ingest_and_check(
                ctx,
                &table,
                &format!("{model} --method {method} --workers 2 --rows 2345 --batch-size 500"),
            )?;
        }
    }
    Ok(())
}

fn insert_splits_batches_over_the_parameter_limit(ctx: &Ctx) -> Result<()> {
    // 102 columns: at most 642 rows per statement, so a 1,500-row batch is 3 statements.
    let args = "--method insert --metrics 100 --workers 1 --rows 3100 --batch-size 1500";
    ingest_and_check(ctx, "split_insert", args)?;
    let cfg = config(args);
    let postgres = cfg.dialect_for(dbload::dialect::Engine::Postgres, false)?;
    let rows = cfg.plan(Some(postgres), false, cfg.schema.clone())?.insert_rows;
    ensure(rows == 642, || format!("insert_rows {rows}"))
}

fn upsert_twice_keeps_the_count(ctx: &Ctx) -> Result<()> {
    for method in ["copy", "insert", "unnest"] {
        let table = format!("upsert_{method}");
        let args =
            format!("--upsert --method {method} --rows 3000 --workers 2 --batch-size 700 {START} --table {table}");
        let first = ctx.ingest(&format!("{args} --drop-table --verify"))?;
        let second = ctx.ingest(&format!("{args} --append --verify"))?;
        for (run, o) in [("first", &first), ("second", &second)] {
            ensure(o.exit_code == 0 && o.report.throughput.rows == 3000, || {
                format!(
                    "{method} {run}: exit {} rows {} {:?}",
                    o.exit_code, o.report.throughput.rows, o.report.error_classes
                )
            })?;
        }
        let count = ctx.scalar(&format!("SELECT count(*) FROM \"{table}\""))?;
        ensure(count == "3000", || format!("{method}: {count} rows after two upsert runs"))?;
        // The second run updated every row: acknowledged, none added, verified.
        let v = second.report.verify.as_ref().expect("verify");
        ensure(v.ok && v.expected == 3000 && v.found == Some(0), || format!("{method}: second run {v:?}"))?;
    }
    // The cpu model upserts on (hostname, ts).
    let args = format!("--model cpu --upsert --rows 1000 --workers 1 {START} --table upsert_cpu");
    ctx.ingest(&format!("{args} --drop-table"))?;
    let again = ctx.ingest(&format!("{args} --append"))?;
    ensure(again.exit_code == 0, || format!("cpu upsert: {:?}", again.report.error_classes))?;
    let count = ctx.scalar("SELECT count(*) FROM upsert_cpu")?;
    ensure(count == "1000", || format!("cpu: {count} rows after two upsert runs"))
}

fn failed_batches_are_counted_not_written(ctx: &Ctx) -> Result<()> {
    let args = format!("--rows 2000 --workers 2 --batch-size 300 {START} --table dup_keys");
    ctx.ingest(&format!("{args} --drop-table"))?;
    // The same rows again without --upsert: every batch violates the unique key.
    let out = ctx.ingest(&format!("{args} --append --verify"))?;
    let r = &out.report;
    ensure(out.exit_code == 1, || format!("exit {}", out.exit_code))?;
    ensure(r.throughput.rows == 0 && r.throughput.failed_rows == 2000 && r.throughput.errors == 8, || {
        format!("rows {} failed_rows {} errors {}", r.throughput.rows, r.throughput.failed_rows, r.throughput.errors)
    })?;
    ensure(r.error_classes.len() == 1 && r.error_classes[0].class == "SQLSTATE 23505", || {
        format!("{:?}", r.error_classes)
    })?;
    ensure(r.verify.as_ref().is_some_and(|v| v.ok && v.found == Some(0)), || format!("{:?}", r.verify))
}

fn existing_table_is_never_dropped_unasked(ctx: &Ctx) -> Result<()> {
    ctx.ingest("--rows 100 --table keep_me --drop-table")?;
    let err = ctx.ingest("--rows 100 --table keep_me").unwrap_err();
    ensure(dbload::error::exit_code(&err) == 2, || format!("exit code for {err}"))?;
    let msg = format!("{err:#}");
    ensure(msg.contains("keep_me") && msg.contains("--drop-table") && msg.contains("--append"), || msg.clone())?;
    let count = ctx.scalar("SELECT count(*) FROM keep_me")?;
    ensure(count == "100", || format!("table changed: {count} rows"))
}

fn rate_is_held(ctx: &Ctx) -> Result<()> {
    // A rate a busy test machine holds too: one that is not held now fails the run.
    let out = ctx.ingest("--rate 5000 --duration 3s --batch-size 250 --workers 2 --table paced --drop-table")?;
    let r = &out.report;
    ensure(out.exit_code == 0, || format!("exit {}: {:?}", out.exit_code, r.pacing.rate_warning))?;
    ensure((r.throughput.rows_per_sec - 5_000.0).abs() <= 500.0, || {
        format!("{} rows/s at --rate 5000", r.throughput.rows_per_sec)
    })?;
    ensure(r.latencies.service_time_ms.is_some() && r.latencies.schedule_lag_ms.is_some(), || {
        "no service time / lag".into()
    })?;
    // Paced batches are whole batches, each acknowledged: the table holds
    // what the report counts, in batches of 250. (Latency from the intended
    // start is at least the service time by construction: not a check.)
    let in_table: u64 = ctx.scalar("SELECT count(*) FROM paced")?.parse()?;
    ensure(in_table == r.rows_total && in_table.is_multiple_of(250), || {
        format!("{in_table} rows in the table, {} reported", r.rows_total)
    })
}

fn warmup_is_reported_apart(ctx: &Ctx) -> Result<()> {
    let out =
        ctx.ingest("--rows 5000 --warmup 1000 --workers 2 --batch-size 250 --table warm --drop-table --verify")?;
    let r = &out.report;
    let w = r.warmup.as_ref().expect("warm-up section");
    ensure(w.rows == 1000 && r.throughput.rows == 4000 && r.rows_total == 5000, || {
        format!("warm-up {} measured {} total {}", w.rows, r.throughput.rows, r.rows_total)
    })?;
    ensure(r.verify.as_ref().is_some_and(|v| v.ok && v.found == Some(5000)), || format!("{:?}", r.verify))
}

fn duration_stops_the_run(ctx: &Ctx) -> Result<()> {
    let t = std::time::Instant::now();
    let out = ctx.ingest("--duration 2s --workers 2 --batch-size 1000 --table timed --drop-table --verify")?;
    let took = t.elapsed().as_secs_f64();
    ensure(out.exit_code == 0 && out.report.throughput.rows > 0, || {
        format!("exit {} rows {}", out.exit_code, out.report.throughput.rows)
    })?;
    ensure((1.9..10.0).contains(&took), || format!("a 2 s run took {took} s"))?;
    ensure(out.report.timeline.len() >= 2, || format!("timeline {:?}", out.report.timeline.len()))
}

fn schema_qualified_mixed_case_table(ctx: &Ctx) -> Result<()> {
    ctx.query("CREATE SCHEMA IF NOT EXISTS \"Bench\"")?;
    let out = ctx.ingest("--rows 500 --table Bench.MixedCase --drop-table --method insert")?;
    ensure(out.exit_code == 0, || format!("exit {}", out.exit_code))?;
    let n = ctx.scalar("SELECT count(*) FROM \"Bench\".\"MixedCase\"")?;
    ensure(n == "500", || format!("{n} rows"))
}

fn report_names_the_setup(ctx: &Ctx) -> Result<()> {
    let out = ctx.ingest("--rows 1000 --table setup_named --drop-table")?;
    let s = &out.report.setup;
    ensure(s.server.server_version.as_deref().is_some_and(|v| v.starts_with(char::is_numeric)), || {
        format!("{:?}", s.server.server_version)
    })?;
    ensure(s.settings.server_settings.contains_key("synchronous_commit"), || {
        format!("{:?}", s.settings.server_settings)
    })?;
    ensure(s.ddl.iter().any(|d| d.starts_with("CREATE TABLE \"setup_named\"")), || format!("{:?}", s.ddl))?;
    ensure(out.report.client.client_cpu_s > 0.0 && out.report.client.client_peak_rss_mib > 1.0, || {
        "client cost missing".into()
    })
}

/// A table name of 63 bytes (PostgreSQL's longest) gets both of its indexes,
/// plain and with hash partitions: `NAME_key_idx` and `NAME_time_idx` (and
/// `NAME_p0`, `NAME_p1`) were cut to 63 bytes by the server, collided, and
/// the run exited 1 with a table left without indexes.
fn long_table_names_keep_their_indexes(ctx: &Ctx) -> Result<()> {
    for (prefix, flags) in [("long", ""), ("part", "--partitions 3")] {
        let table = format!("{prefix}_{}", "x".repeat(63 - prefix.len() - 1));
        let out = ctx.ingest(&format!("--rows 1000 --table {table} --drop-table {flags}"))?;
        ensure(out.exit_code == 0, || {
            format!("{table} {flags}: exit {} {:?}", out.exit_code, out.report.error_classes)
        })?;
        let n = ctx.scalar(&format!("SELECT count(*) FROM \"{table}\""))?;
        ensure(n == "1000", || format!("{table} {flags}: {n} rows"))?;
        let indexes = ctx.query(&format!(
            "SELECT indexname FROM pg_indexes WHERE tablename = '{table}' AND schemaname = current_schema() ORDER BY 1"
        ))?;
        ensure(indexes.len() == 2, || format!("{table} {flags}: indexes {indexes:?}"))?;
    }
    Ok(())
}
