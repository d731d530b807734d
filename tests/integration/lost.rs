//! Batches lost with their connection: one whose COMMIT reached the server
//! before the connection died is counted as the table holds it, looked up
//! by the model's key, or in doubt where nobody can tell; never "not
//! written" (a miscount is a table whose count lies outside
//! [written, written + in doubt]).
//!
//! The server of these tests commits but never acknowledges: dbload's
//! sessions ask for `synchronous_commit = on` and the server waits for a
//! synchronous standby that does not exist (`synchronous_standby_names`),
//! so each batch's rows are committed in the table while the client still
//! waits for the COMMIT's answer. Its other sessions (the test's own, and
//! the first run that creates the table) commit locally and do not wait.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use dbload::throwaway::{LocalOptions, LocalPostgres};

use crate::reconnect::{start_again, stop_immediately, stop_restarted};
use crate::support::{ensure, json, Ctx};
use crate::Phase::Parallel;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        (
            "lost::a_batch_committed_before_its_connection_was_lost_is_found_written",
            a_batch_committed_before_its_connection_was_lost_is_found_written,
            Parallel,
        ),
        (
            "lost::a_batch_lost_with_its_server_is_in_doubt_not_failed",
            a_batch_lost_with_its_server_is_in_doubt_not_failed,
            Parallel,
        ),
        (
            "lost::timeit_keeps_the_statements_done_when_the_server_is_gone_for_the_next",
            timeit_keeps_the_statements_done_when_the_server_is_gone_for_the_next,
            Parallel,
        ),
    ]
}

/// Rows each worker sends in its one batch, which commits but is never answered.
const BATCH: u64 = 500;

/// A server whose commits wait for a standby that never comes, for
/// sessions that ask for `synchronous_commit = on` (see [`WAITING`]).
fn server_that_never_acknowledges() -> Result<LocalPostgres> {
    // Synchronous replication needs WAL senders, which the throwaway
    // server's default (wal_level = minimal) has none of.
    let settings = [
        ("synchronous_commit", "local"),
        ("synchronous_standby_names", "nobody"),
        ("wal_level", "replica"),
        ("max_wal_senders", "1"),
    ];
    let extra_settings = settings.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    LocalPostgres::start(&LocalOptions { extra_settings, ..Default::default() })
}

/// The URL option that makes a session's commits wait (libpq's `options`).
const WAITING: &str = "options=-c%20synchronous_commit%3Don";

/// `table` made by a first ingest of 1,000 rows (its commits not waiting),
/// then the binary started on it with other rows (`--seed 2`), `args` and
/// commits that wait, its
/// connections named `table`; returns the running child once each of its
/// two workers waits for a COMMIT's answer.
fn ingest_until_both_commits_wait(ctx: &Ctx, table: &str, method: &str, args: &str) -> Result<Child> {
    let first = ctx.ingest(&format!("--rows 1000 --method {method} --table {table} --drop-table"))?;
    ensure(first.exit_code == 0, || format!("{method}: first run exit {}", first.exit_code))?;
    let url = format!("{}&{WAITING}", ctx.url_with(&format!("application_name={table}")));
    let argv = format!(
        "ingest --url {url} --workers 2 --batch-size {BATCH} --method {method} --table {table} --output json --append --seed 2 {args}"
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(argv.split_whitespace())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let waiting =
        format!("SELECT count(*) FROM pg_stat_activity WHERE application_name = '{table}' AND wait_event = 'SyncRep'");
    let looking = Instant::now();
    while ctx.scalar(&waiting)? != "2" {
        if child.try_wait()?.is_some() {
            let out = child.wait_with_output()?;
            let err = String::from_utf8_lossy(&out.stderr);
            anyhow::bail!("{method}: dbload ended ({}) before its commits waited: {err}", out.status);
        }
        ensure(looking.elapsed() < Duration::from_secs(20), || {
            let seen = ctx.query("SELECT application_name, state, wait_event, query FROM pg_stat_activity");
            format!("{method}: the commits never waited: {seen:?}")
        })?;
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(child)
}

/// The child's exit code and JSON report, once it ends (within 30 s).
fn finished(mut child: Child) -> Result<(i32, serde_json::Value)> {
    use std::io::Read;
    let t = Instant::now();
    while child.try_wait()?.is_none() {
        if t.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            anyhow::bail!("dbload did not end within 30 s of losing its connections");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take().context("stdout")?.read_to_string(&mut out)?;
    child.stderr.take().context("stderr")?.read_to_string(&mut err)?;
    let code = child.wait()?.code().unwrap_or(-1);
    let report = json(&out).with_context(|| format!("exit {code}, stderr: {err}"))?;
    Ok((code, report))
}

/// Rows in `table` beyond the first run's 1,000 lie within [written,
/// written + in doubt] of the report, and the run failed (exit 1).
fn counted_as_the_table_holds(what: &str, ctx: &Ctx, table: &str, code: i32, r: &serde_json::Value) -> Result<u64> {
    let n: u64 = ctx.scalar(&format!("SELECT count(*) FROM {table}"))?.parse()?;
    let written = r["rows_total"].as_u64().context("rows_total")?;
    let in_doubt = r["in_doubt_rows"].as_u64().context("in_doubt_rows")?;
    let added = n - 1000;
    ensure((written..=written + in_doubt).contains(&added), || {
        format!("{what}: miscount: the table holds {added} new rows, the report says {written} written and {in_doubt} in doubt: {r}")
    })?;
    ensure(code == 1, || format!("{what}: exit {code}: a lost connection fails the run: {r}"))?;
    let a = &r["accounting"];
    ensure(a["in_doubt"].as_u64() == Some(in_doubt), || format!("{what}: accounting apart from in doubt: {a}"))?;
    if a["requested"].is_u64() {
        crate::support::accounted(a, None)?;
    }
    Ok(in_doubt)
}

/// Without `--reconnect` (a `--rows` run), each worker's connection is
/// terminated while its COMMIT waits: the batch is in the table, and the
/// look-up on a connection made once more finds it written.
fn a_batch_committed_before_its_connection_was_lost_is_found_written(_: &Ctx) -> Result<()> {
    let server = server_that_never_acknowledges()?;
    let ctx = Ctx::new(&server);
    for method in ["insert", "unnest", "copy", "copy-csv"] {
        let table = format!("lost_{}", method.replace('-', "_"));
        let child = ingest_until_both_commits_wait(&ctx, &table, method, "--rows 4000")?;
        let kill = "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE wait_event = 'SyncRep'";
        ensure(ctx.scalar(kill)? == "2", || format!("{method}: two connections terminated"))?;
        let (code, r) = finished(child)?;
        let in_doubt = counted_as_the_table_holds(method, &ctx, &table, code, &r)?;
        ensure(r["rows_total"].as_u64() == Some(2 * BATCH) && in_doubt == 0, || {
            format!("{method}: both batches found written: {r}")
        })?;
        let batches = r["in_doubt_batches"].as_array().context("in_doubt_batches")?;
        ensure(batches.len() == 2 && batches.iter().all(|b| b["resolution"] == "written"), || {
            format!("{method}: {batches:?}")
        })?;
        ensure(r["accounting"]["failed"] == 0, || format!("{method}: written rows are not failed: {r}"))?;
    }
    Ok(())
}

/// The server stopped (`-m immediate`) while both COMMITs wait: nobody can
/// look the batches up, so they are in doubt, not failed. Without
/// `--reconnect`, and with it when the run's deadline passes first; and
/// the report is whole (before, the second gave exit 3 and no report).
fn a_batch_lost_with_its_server_is_in_doubt_not_failed(_: &Ctx) -> Result<()> {
    let server = server_that_never_acknowledges()?;
    let ctx = Ctx::new(&server);
    let mut restarted = Vec::new();
    let result = (|| {
        let runs = [("down_rows", "--rows 4000 --verify"), ("down_deadline", "--duration 3s --reconnect --verify")];
        for (table, args) in runs {
            let child = ingest_until_both_commits_wait(&ctx, table, "copy", args)?;
            let code_and_report = stopped_until_it_ends(&server, child, &mut restarted);
            let (code, r) = code_and_report?;
            let in_doubt = counted_as_the_table_holds(table, &ctx, table, code, &r)?;
            ensure(in_doubt == 2 * BATCH && r["accounting"]["failed"] == 0, || {
                format!("{table}: both batches in doubt, none failed: {r}")
            })?;
            // The report survives the server it could not count on.
            let v = &r["verify"];
            ensure(v["ok"] == false && v["error"].is_string(), || format!("{table}: verify {v}"))?;
        }
        Ok(())
    })();
    stop_restarted(restarted);
    result
}

/// Stops `server` as `-m immediate` does, waits for `child` to end, then
/// starts the server again (pushed on `restarted`) and waits until it
/// answers; the child's exit code and report.
fn stopped_until_it_ends(
    server: &LocalPostgres,
    child: Child,
    restarted: &mut Vec<Child>,
) -> Result<(i32, serde_json::Value)> {
    let finished_while_down = {
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || tx.send(finished(child)));
        stop_immediately(server.data_dir())?;
        let out = rx.recv_timeout(Duration::from_secs(40)).context("dbload did not end while the server was down")?;
        let _ = waiter.join();
        out
    };
    restarted.push(start_again(server.data_dir())?);
    let ctx = Ctx::new(server);
    let t = Instant::now();
    while ctx.scalar("SELECT 1").is_err() {
        ensure(t.elapsed() < Duration::from_secs(30), || "the server did not come back".into())?;
        std::thread::sleep(Duration::from_millis(50));
    }
    finished_while_down
}

/// timeit's first statement runs its 2 s; the server stops 1.5 s in and
/// is still gone when the second statement's connections are opened: the
/// run stops there, with the first statement's figures reported and the
/// reason said (before: exit 3 and no report at all).
fn timeit_keeps_the_statements_done_when_the_server_is_gone_for_the_next(_: &Ctx) -> Result<()> {
    let server = LocalPostgres::start(&LocalOptions::default())?;
    let ctx = Ctx::new(&server);
    let argv =
        ["timeit", "--url", &ctx.url, "-s", "select 1", "-s", "select 2", "--duration", "2s", "--output", "json"];
    let child = Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(argv)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    std::thread::sleep(Duration::from_millis(1500));
    stop_immediately(server.data_dir())?;
    let ended = finished(child);
    let restarted = vec![start_again(server.data_dir())?];
    let checked = (|| {
        let (code, r) = ended?;
        ensure(code == 1, || format!("exit {code}: {r}"))?;
        let stopped = r["stopped"].as_str().unwrap_or_default();
        ensure(stopped.contains("opening the workers' connections"), || format!("stopped: {stopped:?}: {r}"))?;
        let first = &r["queries"][0];
        ensure(first["count"].as_u64() > Some(0), || format!("the first statement's figures: {first}"))
    })();
    stop_restarted(restarted);
    checked
}
