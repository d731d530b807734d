//! Open-loop clocks against the real server: the pacer adds next to no lag
//! of its own, a rate that cannot be held is said (late, dropped, a warning,
//! exit 1) by every command that takes --rate, `--warmup N` is the first N
//! of the run's total everywhere, and `dbload run --baseline` brackets the
//! mixed phase with a run alone before and after it.

use anyhow::{Context, Result};

use crate::support::{dbload_bin, ensure, json, write_file, Ctx};
use crate::Phase::Quiet;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("pacing::schedule_lag_is_small_on_an_idle_target", schedule_lag_is_small_on_an_idle_target, Quiet),
        ("pacing::rate_not_held_is_said_by_timeit_and_workload", rate_not_held_is_said_by_timeit_and_workload, Quiet),
        ("pacing::rate_not_held_is_said_by_ingest", rate_not_held_is_said_by_ingest, Quiet),
        ("pacing::easy_rate_shows_no_late_or_dropped", easy_rate_shows_no_late_or_dropped, Quiet),
        ("pacing::warmup_count_is_taken_out_of_the_total", warmup_count_is_taken_out_of_the_total, Quiet),
        ("pacing::baseline_brackets_the_mixed_phase", baseline_brackets_the_mixed_phase, Quiet),
        ("pacing::mixed_run_that_fell_behind_fails", mixed_run_that_fell_behind_fails, Quiet),
        ("pacing::a_part_that_stops_stops_the_mixed_run", a_part_that_stops_stops_the_mixed_run, Quiet),
        (
            "pacing::appending_the_same_seed_again_says_duplicate_keys_not_the_rate",
            appending_the_same_seed_again_says_duplicate_keys_not_the_rate,
            Quiet,
        ),
    ]
}

/// Runs `argv` (a paced run, JSON out) up to three times and returns the
/// first report for which `good` holds, or the last one. A busy machine only
/// ever adds lag to what the pacer itself costs, so the best of a few runs
/// is the fair measure of the pacer: the old one never got under ~1 ms.
fn best_of_three(argv: &[&str], good: impl Fn(&serde_json::Value) -> bool) -> Result<serde_json::Value> {
    let mut last = serde_json::Value::Null;
    for _ in 0..3 {
        let (_, stdout, stderr) = dbload_bin(argv, &[]);
        last = json(&stdout).with_context(|| stderr)?;
        if good(&last) {
            break;
        }
    }
    Ok(last)
}

/// The pacer itself used to add ~1.4 ms to every paced query (tokio's
/// timer rounds up to the next millisecond). The goal is a median lag of
/// 0.1 ms on a quiet machine; the bound here is 0.5 ms, still well under
/// the old millisecond, so that a busy test machine does not fail it.
fn schedule_lag_is_small_on_an_idle_target(ctx: &Ctx) -> Result<()> {
    let argv = ["timeit", "--url", &ctx.url, "-s", "select 1", "--rate", "200", "--duration", "2s", "--output", "json"];
    // A few connections, so that one query slowed by a busy server does not queue the next ones.
    let argv = [&argv[..], &["--concurrency", "4"]].concat();
    let p50 = |r: &serde_json::Value| r["schedule_lag_ms"]["p50"].as_f64().unwrap_or(f64::MAX);
    let r = best_of_three(&argv, |r| p50(r) <= 0.5)?;
    let lag = &r["schedule_lag_ms"];
    ensure(lag["count"].as_u64() >= Some(300), || format!("lag {lag}"))?;
    ensure(p50(&r) <= 0.5, || format!("median schedule lag {} ms at 200 queries/s: {lag}", p50(&r)))
}

/// A query of 10 ms on one connection cannot run 1,000 times a second.
fn not_held(r: &serde_json::Value, stdout: &str, what: &str) -> Result<()> {
    ensure(r["late"].as_u64() > Some(0) && r["dropped"].as_u64() > Some(0), || {
        format!("{what}: late {} dropped {}", r["late"], r["dropped"])
    })?;
    let warning = r["rate_warning"].as_str().unwrap_or("");
    ensure(warning.starts_with("could not hold 1000/s:"), || format!("{what}: warning {warning:?}\n{stdout}"))?;
    ensure(r["fail_if"][0]["held"] == true && r["exit_code"] == 1, || format!("{what}: {stdout}"))
}

fn rate_not_held_is_said_by_timeit_and_workload(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let w = write_file(&dir, "slow.yml", "- query: select pg_sleep(0.01)\n  ratio: 1\n")?;
    let runs: [(&str, Vec<&str>); 2] =
        [("timeit", vec!["timeit", "-s", "select pg_sleep(0.01)"]), ("workload", vec!["workload", &w])];
    for (what, args) in runs {
        let common = ["--url", &ctx.url, "--rate", "1000", "--concurrency", "1", "--duration", "1s"];
        let argv = [&args[..], &common[..], &["--fail-if", "dropped > 0"]].concat();
        let (code, stdout, stderr) = dbload_bin(&[&argv[..], &["--output", "json"]].concat(), &[]);
        ensure(code == 1, || format!("{what}: exit {code}: {stderr}"))?;
        not_held(&json(&stdout)?, &stdout, what)?;
        let (code, text, _) = dbload_bin(&argv, &[]);
        ensure(code == 1 && text.contains("WARNING:    could not hold 1000/s:"), || format!("{what}: {text}"))?;
    }
    Ok(())
}

fn rate_not_held_is_said_by_ingest(ctx: &Ctx) -> Result<()> {
    // The table, then a trigger that makes every batch take 10 ms: one
    // worker cannot send 1,000 single-row batches a second.
    ctx.ingest("--table pacing_slow --drop-table --rows 1")?;
    ctx.query(
        "CREATE OR REPLACE FUNCTION pacing_slow() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN PERFORM pg_sleep(0.01); RETURN NULL; END $$; \
         CREATE TRIGGER slow BEFORE INSERT ON pacing_slow FOR EACH STATEMENT EXECUTE FUNCTION pacing_slow()",
    )?;
    let argv = [
        "ingest",
        "--url",
        &ctx.url,
        "--table",
        "pacing_slow",
        "--append",
        "--workers",
        "1",
        "--batch-size",
        "1",
        "--rate",
        "1000",
        "--duration",
        "1s",
        "--fail-if",
        "dropped > 0",
        "--output",
        "json",
    ];
    let (code, stdout, stderr) = dbload_bin(&argv, &[]);
    ensure(code == 1, || format!("exit {code}: {stderr}\n{stdout}"))?;
    let r = json(&stdout)?;
    ensure(r["late"].as_u64() > Some(0) && r["dropped"].as_u64() > Some(500), || stdout.clone())?;
    let warning = r["rate_warning"].as_str().unwrap_or("");
    ensure(warning.starts_with("could not hold 1000/s:") && warning.contains("--workers"), || warning.to_string())
}

fn easy_rate_shows_no_late_or_dropped(ctx: &Ctx) -> Result<()> {
    let argv = ["timeit", "--url", &ctx.url, "-s", "select 1", "--rate", "50", "--duration", "1s", "--output", "json"];
    let held = |r: &serde_json::Value| r["exit_code"] == 0 && r["dropped"] == 0 && r["rate_warning"].is_null();
    let r = best_of_three(&argv, held)?;
    ensure(held(&r) && r["late"].is_u64(), || r.to_string())?;
    // --rate 50 and no --concurrency: one connection per query/s, up to 20.
    ensure(r["setup"]["concurrency"] == 20, || format!("concurrency {}", r["setup"]["concurrency"]))
}

fn warmup_count_is_taken_out_of_the_total(ctx: &Ctx) -> Result<()> {
    let r =
        ctx.ingest("--table pacing_warm --drop-table --workers 1 --batch-size 100 --rows 1000 --warmup 200")?.report;
    ensure(r.throughput.rows == 800 && r.rows_total == 1000, || {
        format!("ingest: {} of {}", r.throughput.rows, r.rows_total)
    })?;
    ensure(r.warmup.as_ref().is_some_and(|w| w.rows == 200), || format!("ingest warm-up {:?}", r.warmup))?;
    ensure(ctx.scalar("SELECT count(*) FROM pacing_warm")? == "1000", || "the table holds --rows".into())?;

    let argv = ["timeit", "--url", &ctx.url, "-s", "select 1", "--repeat", "100", "--warmup", "10", "--output", "json"];
    let (code, stdout, stderr) = dbload_bin(&argv, &[]);
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    let r = json(&stdout)?;
    ensure(r["count"] == 90 && r["warmup"]["count"] == 10, || {
        format!("timeit: {} + warm-up {}", r["count"], r["warmup"])
    })?;

    // A warm-up that is the whole run leaves nothing to measure: refused before it starts.
    let argv = ["timeit", "--url", &ctx.url, "-s", "select 1", "--repeat", "10", "--warmup", "10"];
    let (code, _, stderr) = dbload_bin(&argv, &[]);
    ensure(code == 2 && stderr.contains("--warmup 10") && stderr.contains("--repeat"), || {
        format!("exit {code}: {stderr}")
    })
}

fn mixed_file(dir: &tempfile::TempDir, table: &str, workload_rate: &str) -> Result<String> {
    let yaml = format!(
        "duration: 1s\ningest:\n  table: {table}\n  drop_table: true\n  workers: 1\n  batch_size: 1000\n\
         workloads:\n  - name: count\n    concurrency: 1\n{workload_rate}    queries:\n      - query: select count(*) from {table}\n        ratio: 1\n"
    );
    write_file(dir, "mixed.yml", &yaml)
}

fn baseline_brackets_the_mixed_phase(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mixed = mixed_file(&dir, "pacing_bracket", "")?;
    let (code, stdout, stderr) = dbload_bin(&["run", &mixed, "--url", &ctx.url, "--baseline", "--output", "json"], &[]);
    ensure(code == 0, || format!("exit {code}: {stderr}\n{stdout}"))?;
    let r = json(&stdout)?;
    let w = &r["workloads"][0];
    for key in ["alone_before", "under_load", "alone_after"] {
        ensure(w[key]["count"].as_u64() > Some(0), || format!("{key}: {}", w[key]))?;
    }
    let (before, after) = (r["table_rows_before"].as_u64(), r["table_rows_after"].as_u64());
    let written = r["ingest"]["rows_total"].as_u64();
    ensure(before == Some(0) && after == written && after > Some(0), || {
        format!("table rows before {before:?}, after {after:?}, written {written:?}")
    })?;
    let said = r["comparison"].as_str().unwrap_or("");
    ensure(said.contains("pacing_bracket") && said.contains("just before") && said.contains("just after"), || {
        said.to_string()
    })?;
    let (code, text, _) = dbload_bin(&["run", &mixed, "--url", &ctx.url, "--baseline"], &[]);
    ensure(code == 0 && text.contains("alone before, under load, alone after") && text.contains("Compared:"), || text)
}

fn mixed_run_that_fell_behind_fails(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mixed = mixed_file(&dir, "pacing_behind", "    rate: 1000\n")?;
    let slow = std::fs::read_to_string(&mixed)?.replace("select count(*) from pacing_behind", "select pg_sleep(0.01)");
    std::fs::write(&mixed, slow)?;
    let (code, stdout, stderr) = dbload_bin(&["run", &mixed, "--url", &ctx.url, "--output", "json"], &[]);
    ensure(code == 1, || format!("exit {code}: {stderr}\n{stdout}"))?;
    let r = json(&stdout)?;
    let behind = r["behind"].as_array().context("behind[]")?;
    ensure(behind.iter().any(|p| p == "workload count under load"), || format!("behind: {behind:?}"))?;
    ensure(r["workloads"][0]["under_load"]["dropped"].as_u64() > Some(0), || stdout.clone())
}

/// Issue 35: `append: true` on a table that an earlier ingest wrote with
/// the same seed (and start): every batch fails on the table's unique key
/// (SQLSTATE 23505), and the report said the ingest could not hold its
/// rate. It says the rows were there already and what to do; the run fails
/// by its failures (exit 1), and no part is said to be behind.
fn appending_the_same_seed_again_says_duplicate_keys_not_the_rate(ctx: &Ctx) -> Result<()> {
    let table = "pacing_again";
    let start = "2024-01-01T00:00:00Z";
    let first = ["ingest", "--url", &ctx.url, "--table", table, "--drop-table", "--rows", "8000", "--workers", "1"];
    let first =
        [&first[..], &["--batch-size", "500", "--seed", "5", "--start", start, "--no-results", "--quiet"]].concat();
    let (code, _, stderr) = dbload_bin(&first, &[]);
    ensure(code == 0, || format!("the first ingest: exit {code}: {stderr}"))?;
    let dir = tempfile::tempdir()?;
    let yaml = format!(
        "duration: 1s\ningest:\n  table: {table}\n  append: true\n  workers: 1\n  batch_size: 500\n  rate: 2000\n  \
         seed: 5\n  start: {start}\nworkloads:\n  - name: count\n    concurrency: 1\n    queries:\n      \
         - query: select count(*) from {table}\n        ratio: 1\n"
    );
    let mixed = write_file(&dir, "mixed.yml", &yaml)?;
    let (code, text, stderr) = dbload_bin(&["run", &mixed, "--url", &ctx.url, "--no-results"], &[]);
    ensure(code == 1, || format!("exit {code}: {stderr}\n{text}"))?;
    ensure(text.contains("SQLSTATE 23505") && text.contains("already") && text.contains("--seed"), || text.clone())?;
    ensure(!text.contains("could not hold") && !text.contains("behind"), || text.clone())?;
    let (_, json_out, _) = dbload_bin(&["run", &mixed, "--url", &ctx.url, "--no-results", "--output", "json"], &[]);
    let r = json(&json_out)?;
    ensure(r["behind"].as_array().is_some_and(Vec::is_empty), || format!("behind: {}", r["behind"]))
}

/// Issue 13 item 2: a part of a mixed run that stops on its own (here a
/// query that fails at every execution, 1,000 times over 5 s) stops the
/// other parts too, instead of leaving them to run their 30 s; the run
/// fails and says why.
fn a_part_that_stops_stops_the_mixed_run(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mixed = mixed_file(&dir, "pacing_stopped", "")?;
    let failing = std::fs::read_to_string(&mixed)?
        .replace("duration: 1s", "duration: 30s")
        .replace("batch_size: 1000", "batch_size: 1000\n  rate: 2000")
        .replace("select count(*) from pacing_stopped", "select 1 / (random() * 0)::int");
    std::fs::write(&mixed, failing)?;
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = dbload_bin(&["run", &mixed, "--url", &ctx.url, "--output", "json"], &[]);
    let took = started.elapsed();
    ensure(code == 1, || format!("exit {code}: {stderr}\n{stdout}"))?;
    ensure(took < std::time::Duration::from_secs(20), || format!("ran {took:?} of its 30 s"))?;
    let r = json(&stdout)?;
    ensure(r["status"] == "failed" && r["stopped"].as_str().is_some_and(|s| s.contains("all failed")), || {
        format!("status {} stopped {}", r["status"], r["stopped"])
    })?;
    let ingested = r["ingest"]["duration_s"].as_f64().context("ingest duration_s")?;
    ensure(ingested < 20.0, || format!("the ingest part ran {ingested} s"))
}
