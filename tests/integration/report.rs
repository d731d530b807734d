//! What every report promises, against the real server: mistakes in the
//! output options found before the run, a report never lost (not to a
//! failed `--verify`), and the figures of the report account for what was
//! asked (issue 13, items 4, 8 and 9).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::support::{accounted, dbload_bin, ensure, interrupt, refused, Ctx};
use crate::Phase::Parallel;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("report::fail_if_field_is_checked_before_the_run", fail_if_field_is_checked_before_the_run, Parallel),
        (
            "report::fail_if_without_a_value_says_exit_2_in_the_report",
            fail_if_without_a_value_says_exit_2_in_the_report,
            Parallel,
        ),
        ("report::unwritable_report_files_fail_before_the_run", unwritable_report_files_fail_before_the_run, Parallel),
        ("report::failed_verify_still_prints_the_report", failed_verify_still_prints_the_report, Parallel),
        ("report::settings_are_shown_as_the_session_sees_them", settings_are_shown_as_the_session_sees_them, Parallel),
        (
            "report::citus_worker_settings_command_runs_on_postgres",
            citus_worker_settings_command_runs_on_postgres,
            Parallel,
        ),
        ("report::rows_are_accounted_after_ctrl_c", rows_are_accounted_after_ctrl_c, Parallel),
        ("report::queries_are_accounted_after_ctrl_c", queries_are_accounted_after_ctrl_c, Parallel),
        ("report::transfers_are_accounted_after_ctrl_c", transfers_are_accounted_after_ctrl_c, Parallel),
        (
            "report::rows_are_accounted_when_a_worker_is_terminated",
            rows_are_accounted_when_a_worker_is_terminated,
            Parallel,
        ),
        (
            "report::queries_are_accounted_when_a_worker_is_terminated",
            queries_are_accounted_when_a_worker_is_terminated,
            Parallel,
        ),
    ]
}

const JSON: [&str; 3] = ["--output", "json", "--quiet"];
const SECS_3: Duration = Duration::from_secs(3);

fn count(ctx: &Ctx, table: &str) -> Result<u64> {
    Ok(ctx.scalar(&format!("SELECT count(*) FROM {table}"))?.parse()?)
}

/// Ctrl-C during ingest, insert-fake-data and insert-json: the rows asked
/// for (or read) = written + failed + rejected + unattempted, the ones
/// never tried are counted, and the table holds exactly the rows written.
fn rows_are_accounted_after_ctrl_c(ctx: &Ctx) -> Result<()> {
    let url = ctx.url.as_str();
    let ingest = ["ingest", "--url", url, "--rows", "100000000", "--workers", "2", "--table", "acc_cc", "--drop-table"];
    let r = interrupt(&[&ingest[..], &JSON].concat(), None, SECS_3)?;
    let unattempted = accounted(&r["accounting"], Some(100_000_000))?;
    ensure(unattempted > 0 && r["accounting"]["ok"] == count(ctx, "acc_cc")?, || r["accounting"].to_string())?;

    ctx.query("DROP TABLE IF EXISTS acc_cc_data; CREATE TABLE acc_cc_data (id int8 PRIMARY KEY, name text)")?;
    let fake = ["insert-fake-data", "--url", url, "--table", "acc_cc_data", "--num-records", "100000000"];
    let r = interrupt(&[&fake[..], &["--concurrency", "2"], &JSON].concat(), None, SECS_3)?;
    let unattempted = accounted(&r["accounting"], Some(100_000_000))?;
    ensure(unattempted > 0 && r["accounting"]["ok"] == count(ctx, "acc_cc_data")?, || r["accounting"].to_string())?;

    ctx.query("TRUNCATE acc_cc_data")?;
    let endless: fn(&mut dyn std::io::Write) = |stdin| {
        for id in 1u64.. {
            if writeln!(stdin, r#"{{"id": {id}, "name": "n{id}"}}"#).is_err() {
                return;
            }
        }
    };
    let json = ["insert-json", "--url", url, "--table", "acc_cc_data", "--concurrency", "2"];
    let r = interrupt(&[&json[..], &JSON].concat(), Some(endless), SECS_3)?;
    // What was asked of insert-json is what it read.
    accounted(&r["accounting"], r["rows_read"].as_u64())?;
    ensure(r["accounting"]["ok"] == count(ctx, "acc_cc_data")?, || r["accounting"].to_string())
}

/// Ctrl-C during timeit (two statements: the second never started),
/// workload and a mixed run: queries asked for = ok + failed + unattempted.
fn queries_are_accounted_after_ctrl_c(ctx: &Ctx) -> Result<()> {
    let url = ctx.url.as_str();
    let timeit = ["timeit", "--url", url, "-s", "select pg_sleep(0.001)", "-s", "select 2", "-r", "1000000"];
    let r = interrupt(&[&timeit[..], &["--concurrency", "2"], &JSON].concat(), None, SECS_3)?;
    let unattempted = accounted(&r["accounting"], Some(2_000_000))?;
    ensure(unattempted > 1_000_000 && r["accounting"]["ok"] == r["count"], || r["accounting"].to_string())?;

    let dir = tempfile::tempdir()?;
    let file = dir.path().join("acc.yml");
    std::fs::write(&file, "- name: nap\n  query: select pg_sleep(0.001)\n  ratio: 1\n")?;
    let file = file.to_str().unwrap();
    let workload = ["workload", file, "--url", url, "--max-queries", "1000000", "--concurrency", "2"];
    let r = interrupt(&[&workload[..], &JSON].concat(), None, SECS_3)?;
    ensure(accounted(&r["accounting"], Some(1_000_000))? > 0, || r["accounting"].to_string())?;

    let mixed = dir.path().join("mixed.yml");
    std::fs::write(
        &mixed,
        format!(
            "ingest:\n  rows: 100000000\n  table: acc_mixed\n  drop_table: true\n\
             workloads:\n  - name: w\n    file: {file}\n    max_queries: 1000000\n"
        ),
    )?;
    let run = ["run", mixed.to_str().unwrap(), "--url", url];
    let r = interrupt(&[&run[..], &JSON].concat(), None, SECS_3)?;
    ensure(accounted(&r["ingest"]["accounting"], Some(100_000_000))? > 0, || r["ingest"].to_string())?;
    let w = &r["workloads"][0]["under_load"]["accounting"];
    ensure(accounted(w, Some(1_000_000))? > 0, || w.to_string())
}

/// Ctrl-C during insert-from-sql (rows read from the source = written +
/// failed + unattempted) and export (no amount asked: `requested` null).
fn transfers_are_accounted_after_ctrl_c(ctx: &Ctx) -> Result<()> {
    let url = ctx.url.as_str();
    ctx.query("DROP TABLE IF EXISTS acc_copy; CREATE TABLE acc_copy (id int8, name text)")?;
    let source = "select g as id, md5(g::text) as name from generate_series(1::int8, 5000000) g";
    let copy = ["insert-from-sql", "--url", url, "--query", source, "--table", "acc_copy", "--workers", "2"];
    let r = interrupt(&[&copy[..], &JSON].concat(), None, Duration::from_secs(2))?;
    accounted(&r["accounting"], r["accounting"]["requested"].as_u64())?;
    ensure(r["accounting"]["ok"] == count(ctx, "acc_copy")?, || r["accounting"].to_string())?;

    let dir = tempfile::tempdir()?;
    let export = ["export", "--url", url, "--query", source, "--out", dir.path().to_str().unwrap()];
    let r = interrupt(&[&export[..], &JSON].concat(), None, Duration::from_secs(2))?;
    let a = &r["accounting"];
    ensure(a["requested"].is_null() && a["unattempted"].is_null() && a["ok"] == r["rows"], || a.to_string())
}

/// One worker's connection terminated on the server mid-run (no
/// reconnecting): that worker stops and its batch in flight fails; the
/// batches share one feed, so the other worker sends the rest, none is left
/// `unattempted`, and requested = written + failed + unattempted still
/// holds; the table has the rows written.
fn rows_are_accounted_when_a_worker_is_terminated(ctx: &Ctx) -> Result<()> {
    for (command, app, table, rows) in [
        ("ingest", "h5_kill_ingest", "acc_kill", "--rows"),
        ("insert-fake-data", "h5_kill_fake", "acc_kill_data", "--num-records"),
    ] {
        if command == "insert-fake-data" {
            ctx.query("DROP TABLE IF EXISTS acc_kill_data; CREATE TABLE acc_kill_data (id int8 PRIMARY KEY, n text)")?;
        }
        let url = ctx.url_with(&format!("application_name={app}"));
        let (workers, batch) = match command {
            "ingest" => (&["--workers", "2", "--drop-table"][..], "--batch-size"),
            _ => (&["--concurrency", "2"][..], "--bulk-size"),
        };
        let argv = ["--url", &url, "--table", table, rows, "2000000", batch, "5000"];
        let argv = [&[command][..], &argv, workers, &JSON].concat();
        let has_rows = |ctx: &Ctx| Ok(count(ctx, table).unwrap_or(0) > 0);
        let (code, stdout, stderr) = terminate_one_backend_during(ctx, &argv, app, 3, false, &has_rows)?;
        let r: serde_json::Value = serde_json::from_str(&stdout).with_context(|| format!("exit {code}: {stderr}"))?;
        let a = &r["accounting"];
        ensure(code == 1 && a["failed"].as_u64() > Some(0), || format!("{command}: exit {code}: {a}"))?;
        ensure(accounted(a, Some(2_000_000))? == 0 && a["failed"] == 5000, || format!("{command}: {a}"))?;
        ensure(a["ok"] == count(ctx, table)?, || format!("{command}: {a}"))?;
    }
    Ok(())
}

/// The same for timeit: the terminated worker's share of `--repeat` is
/// `unattempted`.
fn queries_are_accounted_when_a_worker_is_terminated(ctx: &Ctx) -> Result<()> {
    let app = "h5_kill_timeit";
    let url = ctx.url_with(&format!("application_name={app}"));
    let argv = ["timeit", "--url", &url, "-s", "select pg_sleep(0.002)", "-r", "2000", "--concurrency", "2"];
    let argv = [&argv[..], &JSON].concat();
    let (code, stdout, stderr) = terminate_one_backend_during(ctx, &argv, app, 3, false, &|_| Ok(true))?;
    let r: serde_json::Value = serde_json::from_str(&stdout).with_context(|| format!("exit {code}: {stderr}"))?;
    let a = &r["accounting"];
    ensure(code == 1 && a["failed"].as_u64() > Some(0), || format!("exit {code}: {a}"))?;
    ensure(accounted(a, Some(2000))? > 0, || a.to_string())
}

/// The server settings a report states are the session's, in PostgreSQL's
/// own units (the harness runs with shared_buffers=512MB, fsync=off,
/// full_page_writes=off, synchronous_commit=off; the role used here sets
/// synchronous_commit=on for its sessions, as the workers' connections
/// see it), and the settings that are not durable are flagged in the text
/// summary and in the JSON of every command.
fn settings_are_shown_as_the_session_sees_them(ctx: &Ctx) -> Result<()> {
    ctx.query(
        "DO $$ BEGIN CREATE ROLE h5_durable LOGIN SUPERUSER; EXCEPTION WHEN duplicate_object THEN NULL; END $$; \
         ALTER ROLE h5_durable SET synchronous_commit = on; ALTER ROLE h5_durable PASSWORD 'h5-durable'",
    )?;
    // The server's password file holds the superuser's line only.
    let url = ctx.url.replace("postgres@", "h5_durable:h5-durable@");
    let ingest = ["ingest", "--url", &url, "--rows", "1000", "--table", "settings_units", "--drop-table", "--quiet"];
    let timeit = ["timeit", "--url", &url, "-s", "select 1", "-r", "5", "--quiet"];
    let warning = "WARNING:  not durable: fsync=off, full_page_writes=off — figures are not those of a durable server";
    for argv in [&ingest[..], &timeit[..]] {
        let (code, text, stderr) = dbload_bin(argv, &[]);
        ensure(code == 0 && text.lines().any(|l| l == warning), || format!("{argv:?}: exit {code} {stderr}\n{text}"))?;
        let (code, stdout, stderr) = dbload_bin(&[argv, &["--output", "json"]].concat(), &[]);
        ensure(code == 0, || format!("{argv:?}: exit {code} {stderr}"))?;
        let report: serde_json::Value = serde_json::from_str(&stdout)?;
        let s = &report["setup"];
        ensure(s["server_settings"]["shared_buffers"] == "512MB", || format!("{argv:?}: {s}"))?;
        ensure(s["server_settings"]["synchronous_commit"] == "on", || format!("{argv:?}: {s}"))?;
        ensure(s["not_durable"] == serde_json::json!(["fsync=off", "full_page_writes=off"]), || format!("{s}"))?;
    }
    Ok(())
}

/// The command dbload sends to each Citus worker (the harness has no
/// Citus) is valid SQL on PostgreSQL and gives what the parser reads.
fn citus_worker_settings_command_runs_on_postgres(ctx: &Ctx) -> Result<()> {
    use dbload::dialect::{citus, postgres};
    let rows = ctx.query(&format!("SELECT 'local:1', true, ({})::text", postgres::reported_settings_json()))?;
    let parsed = citus::parse_worker_settings(&rows);
    let settings = parsed[0].1.as_ref().map_err(|e| anyhow::anyhow!("{e}"))?;
    let get = |name: &str| settings.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    ensure(get("shared_buffers") == Some("512MB") && get("fsync") == Some("off"), || format!("{settings:?}"))?;
    ensure(settings.len() == postgres::REPORTED_SETTINGS.len(), || format!("{settings:?}"))
}

/// `--fail-if 'p99 > 50'` (no such field) is refused at once, naming the
/// field and the closest valid one, for every report contract; not after
/// a 5 s run whose report is printed and then disowned.
fn fail_if_field_is_checked_before_the_run(ctx: &Ctx) -> Result<()> {
    let url = ctx.url.as_str();
    for argv in [
        &["ingest", "--url", url, "--duration", "5s", "--table", "fail_if_early", "--drop-table"][..],
        &["timeit", "--url", url, "-s", "select 1", "--duration", "5s"][..],
        &["insert-fake-data", "--url", url, "--table", "fail_if_early", "--num-records", "100000000"][..],
    ] {
        let t = Instant::now();
        refused(&[argv, &["--fail-if", "p99 > 50"]].concat(), "did you mean `p99_ms`?")?;
        ensure(t.elapsed() < Duration::from_secs(4), || format!("{argv:?}: refused after {:?}", t.elapsed()))?;
    }
    Ok(())
}

/// A field that exists but has no value in this run (`service_time_ms`
/// without `--rate`) can only be found at the end: the report printed then
/// says the exit code the process has (2), not 0.
fn fail_if_without_a_value_says_exit_2_in_the_report(ctx: &Ctx) -> Result<()> {
    let argv = ["timeit", "--url", &ctx.url, "-s", "select 1", "-r", "20", "--output", "json", "--quiet"];
    let (code, stdout, stderr) = dbload_bin(&[&argv[..], &["--fail-if", "service_time_ms.p99 > 5"]].concat(), &[]);
    ensure(code == 2 && stderr.contains("service_time_ms"), || format!("exit {code}: {stderr}"))?;
    let report: serde_json::Value = serde_json::from_str(&stdout).with_context(|| stdout.clone())?;
    ensure(report["exit_code"] == 2 && report["status"] == "failed", || stdout.clone())
}

/// `--report` and `--html` where nothing can be written are refused before
/// the run (exit 2, naming the option and the path), and an existing report
/// file is not truncated by the check.
fn unwritable_report_files_fail_before_the_run(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let missing = dir.path().join("no/such/dir/report.json");
    let missing = missing.to_str().unwrap();
    let existing = dir.path().join("old.json");
    std::fs::write(&existing, "the last run's report")?;
    let run = ["ingest", "--url", &ctx.url, "--duration", "5s", "--table", "unwritable", "--drop-table", "--quiet"];
    for (option, path, culprit) in [
        ("--report", missing, format!("--report {missing}")),
        ("--html", missing, format!("--html {missing}")),
        ("--html", dir.path().to_str().unwrap(), "is a directory".to_string()),
    ] {
        let t = Instant::now();
        let with_existing = ["--report", existing.to_str().unwrap()];
        let extra = if option == "--html" { &with_existing[..] } else { &[][..] };
        refused(&[&run[..], extra, &[option, path]].concat(), &culprit)?;
        ensure(t.elapsed() < Duration::from_secs(4), || format!("{option}: refused after {:?}", t.elapsed()))?;
    }
    let kept = std::fs::read_to_string(&existing)?;
    ensure(kept == "the last run's report", || format!("the existing --report file was changed: {kept:?}"))
}

/// Runs the dbload binary with `argv` (whose `--url` carries
/// `application_name=APP`) and, once `backends` connections of `APP` are
/// open and `ready` holds, terminates one of them on the server: the
/// first opened (the run's own admin connection) or the last (a worker's).
/// Returns (exit code, stdout, stderr).
fn terminate_one_backend_during(
    ctx: &Ctx,
    argv: &[&str],
    app: &str,
    backends: usize,
    first: bool,
    ready: &dyn Fn(&Ctx) -> Result<bool>,
) -> Result<(i32, String, String)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(argv)
        .env_remove("DATABASE_URL")
        .env_remove("PGHOST")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let t = Instant::now();
    let open = format!("SELECT count(*) FROM pg_stat_activity WHERE application_name = '{app}'");
    loop {
        let n: usize = ctx.scalar(&open)?.parse()?;
        if n >= backends && ready(ctx)? {
            break;
        }
        if let Some(status) = child.try_wait()? {
            let mut stderr = String::new();
            child.stderr.take().context("stderr")?.read_to_string(&mut stderr)?;
            anyhow::bail!("{argv:?}: ended ({status}) before {backends} connections of {app} were at work: {stderr}");
        }
        if t.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            anyhow::bail!("{argv:?}: never saw {backends} connections of {app} at work");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let order = if first { "ASC" } else { "DESC" };
    ctx.query(&format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '{app}' \
         ORDER BY backend_start {order}, pid {order} LIMIT 1"
    ))?;
    let status = child.wait()?;
    let (mut stdout, mut stderr) = (String::new(), String::new());
    child.stdout.take().context("stdout")?.read_to_string(&mut stdout)?;
    child.stderr.take().context("stderr")?.read_to_string(&mut stderr)?;
    Ok((status.code().unwrap_or(-1), stdout, stderr))
}

/// `--verify` whose connection was terminated during the run: the full
/// report is still printed, says verify could not run and why, and the run
/// is failed (exit 1).
fn failed_verify_still_prints_the_report(ctx: &Ctx) -> Result<()> {
    let app = "h5_verify_lost";
    let url = ctx.url_with(&format!("application_name={app}"));
    let argv =
        ["ingest", "--url", &url, "--table", "verify_lost", "--drop-table", "--rows", "1000000", "--workers", "1"];
    let argv = [&argv[..], &["--batch-size", "1000", "--verify", "--output", "json", "--quiet"]].concat();
    let (code, stdout, stderr) = terminate_one_backend_during(ctx, &argv, app, 2, true, &|_| Ok(true))?;
    let report: serde_json::Value =
        serde_json::from_str(&stdout).with_context(|| format!("exit {code}, no report: {stderr}"))?;
    ensure(code == 1 && report["status"] == "failed" && report["exit_code"] == 1, || format!("exit {code}: {stdout}"))?;
    let verify = &report["verify"];
    ensure(verify["found"].is_null() && verify["ok"] == false && verify["error"].is_string(), || stdout.clone())?;
    ensure(report["rows"].as_u64() > Some(0) && verify["expected"] == report["rows_total"], || stdout.clone())
}
