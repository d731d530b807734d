//! Runs that survive the server (`--reconnect`): a restart of a server of
//! their own (never the shared one, which every other test uses), one
//! worker's connection terminated, and the old behaviour without it; for
//! ingest and for queries. CrateDB over HTTP: a node of two that goes away
//! mid-run (a fake node, see `fake_cratedb`).

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use dbload::report::Connections;
use dbload::stats::recorder::Resolution;
use dbload::throwaway::{LocalOptions, LocalPostgres};

use crate::fake_cratedb::{Cluster, Leaves, Node, QUERY};
use crate::stop::stopped_on_the_server;
use crate::support::{dbload_bin, ensure, follows, json, terminate_one_running, Ctx};
use crate::Phase::{Parallel, Quiet};
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        (
            "reconnect::a_restart_mid_run_is_one_outage_and_loses_nothing",
            a_restart_mid_run_is_one_outage_and_loses_nothing,
            Quiet,
        ),
        ("reconnect::a_terminated_connection_is_one_reconnect", a_terminated_connection_is_one_reconnect, Parallel),
        ("reconnect::the_in_doubt_lookup_finds_written_batches", the_in_doubt_lookup_finds_written_batches, Parallel),
        (
            "reconnect::a_batch_of_a_table_without_a_key_is_left_in_doubt",
            a_batch_of_a_table_without_a_key_is_left_in_doubt,
            Parallel,
        ),
        (
            "reconnect::without_reconnect_a_lost_connection_ends_its_worker",
            without_reconnect_a_lost_connection_ends_its_worker,
            Parallel,
        ),
        ("reconnect::timeit_goes_on_through_a_restart", timeit_goes_on_through_a_restart, Parallel),
        (
            "reconnect::a_pipeline_goes_on_through_a_restart_and_counts_what_the_table_holds",
            a_pipeline_goes_on_through_a_restart_and_counts_what_the_table_holds,
            Parallel,
        ),
        (
            "reconnect::a_terminated_query_connection_is_one_reconnect",
            a_terminated_query_connection_is_one_reconnect,
            Parallel,
        ),
        (
            "reconnect::a_query_after_a_reconnect_is_cancelled_on_the_new_connection",
            a_query_after_a_reconnect_is_cancelled_on_the_new_connection,
            Parallel,
        ),
        (
            "reconnect::without_reconnect_a_lost_query_connection_ends_its_worker",
            without_reconnect_a_lost_query_connection_ends_its_worker,
            Parallel,
        ),
        ("reconnect::cratedb_http_ingest_moves_to_the_next_node", cratedb_http_ingest_moves_to_the_next_node, Parallel),
        ("reconnect::cratedb_http_queries_move_to_the_next_node", cratedb_http_queries_move_to_the_next_node, Parallel),
    ]
}

/// How long the server stays down in the restart test.
const DOWN: Duration = Duration::from_secs(2);

fn a_restart_mid_run_is_one_outage_and_loses_nothing(_: &Ctx) -> Result<()> {
    // synchronous_commit off (the throwaway default) acknowledges commits
    // before their WAL is written: a crash loses them, and --verify says so.
    let durable = vec![("synchronous_commit".to_string(), "on".to_string())];
    let server = LocalPostgres::start(&LocalOptions { extra_settings: durable, ..Default::default() })?;
    let ctx = Ctx::new(&server);
    let mut restarted = Vec::new();
    let result = (|| {
        for method in ["copy", "copy-csv", "insert", "unnest"] {
            let table = format!("restart_{}", method.replace('-', "_"));
            let args = format!(
                "--duration 7s --workers 2 --batch-size 500 --rate 10000 --method {method} --table {table} \
                 --drop-table --verify"
            );
            let r = restarted_during(server.data_dir(), &mut restarted, || ctx.ingest(&args))??.report;
            let c = &r.connections;
            eprintln!("{method}: outages {:?}", c.outages);
            ensure(r.verdict.exit_code == 0 && r.throughput.errors == 0, || {
                format!("{method}: exit {} {:?} {:?} {c:?}", r.verdict.exit_code, r.error_classes, r.verify)
            })?;
            ensure(c.outages.len() == 1 && c.reconnects == 2, || format!("{method}: {c:?}"))?;
            let o = &c.outages[0];
            // Down for DOWN, plus crash recovery and at most one backoff step (1 s).
            ensure(o.reconnected && (1.9..6.0).contains(&o.duration_s), || format!("{method}: {o:?}"))?;
            settled(method, c)?;
            // Written == rows found, and rows kept coming after the outage.
            ensure(r.verify.as_ref().is_some_and(|v| v.ok && v.found == Some(r.rows_total)), || {
                format!("{method}: verify {:?}, {} rows", r.verify, r.rows_total)
            })?;
            let after = r.timeline.iter().skip(o.end_s.ceil() as usize).map(|s| s.rows).sum::<u64>();
            ensure(after > 0, || format!("{method}: no rows after the outage: {:?}", r.timeline))?;
        }
        Ok(())
    })();
    stop_restarted(restarted);
    result
}

fn a_terminated_connection_is_one_reconnect(ctx: &Ctx) -> Result<()> {
    for (model, table) in [("measurement", "terminated_m"), ("cpu", "terminated_cpu")] {
        let args = format!("--model {model} --duration 4s --reconnect {PACED} --table {table} --drop-table --verify");
        let out = terminate_one(ctx, table, || ctx.with_app(table).ingest(&args))?.report;
        let c = &out.connections;
        ensure(out.verdict.exit_code == 0 && out.throughput.errors == 0, || {
            format!("{model}: exit {} {:?} {:?} {c:?}", out.verdict.exit_code, out.error_classes, out.verify)
        })?;
        ensure(c.outages.len() == 1 && c.outages[0].workers == 1 && c.reconnects == 1, || format!("{model}: {c:?}"))?;
        settled(model, c)?;
        matches_the_schema(&out)?;
        ensure(out.verify.as_ref().is_some_and(|v| v.ok && v.found == Some(out.rows_total)), || {
            format!("{model}: {:?}", out.verify)
        })?;
    }
    Ok(())
}

fn a_batch_of_a_table_without_a_key_is_left_in_doubt(ctx: &Ctx) -> Result<()> {
    let table = "terminated_keyless";
    ctx.query(&format!("DROP TABLE IF EXISTS {table}; CREATE TABLE {table} (n int, note text)"))?;
    let args = format!("--table {table} --num-records 400000 --concurrency 2 --bulk-size 1000 --reconnect");
    let out = terminate_one(ctx, table, || crate::data::fake(&ctx.with_app(table), &args))?;
    let (r, c) = (&out.report, &out.report.connections);
    ensure(out.exit_code == 1 && r.throughput.errors == 0 && c.reconnects == 1, || {
        format!("exit {}: a batch nobody can vouch for fails the run; {:?} {c:?}", out.exit_code, r.error_classes)
    })?;
    let doubt = &c.in_doubt_batches;
    ensure(doubt.len() == 1 && doubt[0].resolution == Resolution::InDoubt && c.in_doubt_rows == 1000, || {
        format!("{c:?}")
    })?;
    // Written or not, the batch in doubt is the only difference.
    let n: u64 = ctx.scalar(&format!("SELECT count(*) FROM {table}"))?.parse()?;
    ensure(n == r.rows_total || n == r.rows_total + 1000, || format!("{n} rows, {} acknowledged", r.rows_total))
}

fn without_reconnect_a_lost_connection_ends_its_worker(ctx: &Ctx) -> Result<()> {
    // A --rows run: --reconnect is off unless asked for.
    let table = "terminated_stops";
    let args = format!("--rows 40000 {PACED} --table {table} --drop-table --verify");
    let out = terminate_one(ctx, table, || ctx.with_app(table).ingest(&args))?.report;
    let c = &out.connections;
    ensure(out.verdict.exit_code == 1 && out.throughput.errors == 1, || {
        format!("exit {} errors {}", out.verdict.exit_code, out.throughput.errors)
    })?;
    ensure(c.outages.is_empty() && c.reconnects == 0, || format!("{c:?}"))?;
    ensure(out.rows_total < 40000, || format!("{} rows: the terminated worker went on", out.rows_total))?;
    ensure(out.verify.as_ref().is_some_and(|v| v.ok), || format!("{:?}", out.verify))
}

/// Two workers sending COPY batches at a pace that lasts a few seconds.
const PACED: &str = "--workers 2 --batch-size 500 --rate 10000 --method copy";

/// What only a COPY ingest's workers run, each batch in a transaction of
/// its own (dbload's admin connection runs DDL and counts).
const COPYING: &str = "(query LIKE 'COPY%' OR query IN ('BEGIN', 'COMMIT'))";

/// What only a query run's workers run (dbload's admin connection, which
/// prepared the statements before the run, is idle).
const SLEEPING: &str = "state = 'active' AND query LIKE 'select pg_sleep%'";

/// Runs `run` (a COPY ingest into `table`, its connections named `table`:
/// [`Ctx::with_app`]) and terminates the connection of one of its workers
/// a second in.
fn terminate_one<R: Send>(ctx: &Ctx, table: &str, run: impl FnOnce() -> Result<R> + Send) -> Result<R> {
    terminate_one_running(ctx, table, COPYING, run)
}

/// A report with an outage and in-doubt batches follows `schema/report.schema.json`,
/// as printed: with a `run` object (this one made now; the run's own is checked in `results.rs`).
fn matches_the_schema(report: &dbload::report::ingest::IngestReport) -> Result<()> {
    use dbload::report::meta::{RunStart, Stamped};
    let run = RunStart::now("dbload ingest".into()).end();
    follows(include_str!("../../schema/report.schema.json"), &serde_json::to_value(Stamped { report, run: &run })?)
}

/// Every batch in flight when a connection was lost was found written or
/// found unwritten and resent: none is left in doubt.
fn settled(what: &str, c: &Connections) -> Result<()> {
    let ok = !c.in_doubt_batches.is_empty()
        && c.in_doubt_batches.iter().all(|b| matches!(b.resolution, Resolution::Written | Resolution::Resent));
    ensure(ok && c.in_doubt_rows == 0, || format!("{what}: {c:?}"))
}

/// Runs `run` and, 1.5 s into it, restarts the server of `data_dir` (see
/// [`restart`]); the server started again goes on `restarted`, for
/// [`stop_restarted`].
fn restarted_during<R: Send>(data_dir: &Path, restarted: &mut Vec<Child>, run: impl FnOnce() -> R + Send) -> Result<R> {
    let (out, child) = std::thread::scope(|s| {
        let run = s.spawn(run);
        std::thread::sleep(Duration::from_millis(1500));
        let child = restart(data_dir, DOWN);
        (run.join().expect("the run does not panic"), child)
    });
    restarted.push(child?);
    Ok(out)
}

/// The restarted servers are ours to stop (the dropped LocalPostgres
/// stops only the one it started); each but the last is already gone.
pub fn stop_restarted(restarted: Vec<Child>) {
    for mut child in restarted {
        let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGINT);
        let _ = child.wait();
    }
}

/// Stops the server of `data_dir` as `pg_ctl -m immediate stop` does
/// (SIGQUIT to the postmaster: no shutdown checkpoint, crash recovery at
/// the next start), waits `down`, and starts it again (see [`start_again`]).
fn restart(data_dir: &Path, down: Duration) -> Result<Child> {
    let stopped = Instant::now();
    stop_immediately(data_dir)?;
    std::thread::sleep(down.saturating_sub(stopped.elapsed()));
    start_again(data_dir)
}

/// SIGQUIT to the postmaster of `data_dir` (`pg_ctl -m immediate stop`),
/// once it has gone.
pub fn stop_immediately(data_dir: &Path) -> Result<()> {
    let pid_file = data_dir.join("postmaster.pid");
    let pid: i32 = std::fs::read_to_string(&pid_file)?.lines().next().context("empty postmaster.pid")?.parse()?;
    kill(Pid::from_raw(pid), Signal::SIGQUIT)?;
    let stopped = Instant::now();
    while pid_file.exists() {
        ensure(stopped.elapsed() < Duration::from_secs(10), || "the server did not stop".into())?;
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

/// Starts the stopped server of `data_dir` with the command line it was
/// started with, as the account that owns its data; the caller stops it
/// ([`stop_restarted`]).
pub fn start_again(data_dir: &Path) -> Result<Child> {
    let opts = std::fs::read_to_string(data_dir.join("postmaster.opts"))?;
    // `/path/postgres "-D" "/data" "-c" "name=value" ...`
    let mut words = opts.trim_end().split(" \"");
    let program = words.next().context("empty postmaster.opts")?;
    let args: Vec<&str> = words.map(|w| w.trim_end_matches('"')).collect();
    let owner = std::fs::metadata(data_dir)?;
    Command::new(program)
        .args(args)
        .uid(owner.uid())
        .gid(owner.gid())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .context("starting the server again")
}

/// The lookup that settles a batch in doubt finds every row of a batch that
/// was written and none of one that was not, for both models with a key
/// (cpu's key is an expression over its jsonb tags).
fn the_in_doubt_lookup_finds_written_batches(ctx: &Ctx) -> Result<()> {
    for model in ["measurement", "cpu"] {
        let table = format!("lookup_{model}");
        let args = format!("--model {model} --rows 1000 --workers 1 --batch-size 500 --table {table} --drop-table");
        let out = ctx.ingest(&format!("{args} {START}"))?;
        ensure(out.exit_code == 0, || format!("{model}: exit {}", out.exit_code))?;
        for (start, want) in [(START, 500), ("--start 2030-01-01T00:00:00Z", 0)] {
            let cfg = crate::support::config(&format!("{args} {start}"));
            let mut batch = dbload::model::Batch::new(&cfg.schema);
            cfg.model.generator(cfg.load.seed, 0, cfg.start_us, 1000).next_batch(&mut batch, 500);
            let stmt = dbload::dialect::postgres::batch_rows_found(&cfg.table, &cfg.schema).context("a key")?;
            let found = ctx.count_bound(&stmt, &batch)?;
            ensure(found == want, || format!("{model} {start}: found {found} of a batch, want {want}"))?;
        }
    }
    Ok(())
}

const START: &str = "--start 2024-01-01T00:00:00Z";

/// A statement that keeps a query worker busy without loading the machine.
const SLEEP: &str = "select pg_sleep(0.01)";

/// What a query run left: its exit code, its text report and its JSON report.
struct QueryRun {
    code: i32,
    text: String,
    report: serde_json::Value,
}

/// `dbload timeit --url URL -s SQL ARGS` (the binary), its JSON report
/// written with `--report` and checked against `schema/query-report.schema.json`.
fn timeit(url: &str, sql: &str, args: &[&str]) -> Result<QueryRun> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("report.json");
    let file = file.to_str().context("a temporary path")?;
    let argv = [&["timeit", "--url", url, "-s", sql, "--report", file, "--quiet"][..], args].concat();
    let (code, text, stderr) = dbload_bin(&argv, &[]);
    let report = std::fs::read_to_string(file).with_context(|| format!("exit {code}: {stderr}"))?;
    let report = json(&report)?;
    follows(include_str!("../../schema/query-report.schema.json"), &report)?;
    Ok(QueryRun { code, text, report })
}

/// A query run of which `workers` workers lost their connection once, at
/// the same time: their queries in flight failed (one each: exit 1), one
/// outage window of them all, each reconnected, said in the text too, and
/// queries succeeded after it. Returns that outage.
fn one_query_outage(run: &QueryRun, workers: u64) -> Result<serde_json::Value> {
    let (r, text) = (&run.report, &run.text);
    let what = || format!("exit {}: {r}", run.code);
    ensure(run.code == 1 && r["errors"] == workers && r["reconnects"] == workers, what)?;
    let outages = r["outages"].as_array().context("no outages in the report")?;
    ensure(outages.len() == 1 && outages[0]["workers"] == workers && outages[0]["reconnected"] == true, what)?;
    let said = text.lines().filter(|l| l.starts_with("Outage:") && l.contains(", reconnected; began with ")).count();
    ensure(said == 1 && text.contains(&format!("\nReconnects: {workers}\n")), || text.clone())?;
    let end = outages[0]["end_s"].as_f64().context("end_s")?;
    let timeline = r["timeline"].as_array().context("timeline")?;
    let after: u64 = timeline.iter().skip(end.ceil() as usize).filter_map(|s| s["rows"].as_u64()).sum();
    ensure(after > 0, || format!("no query succeeded after the outage: {r}"))?;
    Ok(outages[0].clone())
}

fn timeit_goes_on_through_a_restart(_: &Ctx) -> Result<()> {
    let server = LocalPostgres::start(&LocalOptions::default())?;
    let ctx = Ctx::new(&server);
    let mut restarted = Vec::new();
    let result = (|| {
        let run = || timeit(&ctx.url, SLEEP, &["--duration", "6s", "--concurrency", "2"]);
        let out = restarted_during(server.data_dir(), &mut restarted, run)??;
        // Both connections lost, both workers back.
        let o = one_query_outage(&out, 2)?;
        eprintln!("timeit: outage {o}");
        // Down for DOWN, plus crash recovery and at most one backoff step (1 s).
        let down = o["duration_s"].as_f64().unwrap_or_default();
        ensure((1.9..6.0).contains(&down), || format!("{o}"))?;
        let r = &out.report;
        ensure(r["wall_s"].as_f64() >= Some(5.9), || format!("the run did not last its duration: {r}"))
    })();
    stop_restarted(restarted);
    result
}

/// `--reconnect` with a pipeline window: the server stopped with 16
/// inserts in flight on each of 2 connections. The statements of a window
/// are one transaction at its Sync, so those lost with the server are each
/// counted failed once, never done; both workers reconnect and go on; what
/// is counted done is what the table holds after crash recovery.
fn a_pipeline_goes_on_through_a_restart_and_counts_what_the_table_holds(_: &Ctx) -> Result<()> {
    // Durable commits: an acknowledged commit must survive the stop.
    let durable = vec![("synchronous_commit".to_string(), "on".to_string())];
    let server = LocalPostgres::start(&LocalOptions { extra_settings: durable, ..Default::default() })?;
    let ctx = Ctx::new(&server);
    ctx.query("CREATE TABLE piped (id bigserial, v int)")?;
    let mut restarted = Vec::new();
    let result = (|| {
        let sql = "insert into piped (v) values (1)";
        let args = ["--duration", "5s", "--concurrency", "2", "--pipeline", "16"];
        let run = || timeit(&ctx.url, sql, &args);
        let out = restarted_during(server.data_dir(), &mut restarted, run)??;
        let r = &out.report;
        let what = || format!("exit {}: {r}", out.code);
        ensure(out.code == 1 && r["reconnects"] == 2, what)?;
        let failed = r["errors"].as_u64().context("errors")?;
        ensure((2..=32).contains(&failed), || format!("{failed} failed, not 2 to 32 (the windows in flight): {r}"))?;
        let outages = r["outages"].as_array().context("outages")?;
        ensure(outages.len() == 1 && outages[0]["workers"] == 2, what)?;
        let done = r["count"].as_u64().context("count")?;
        let held: u64 = Ctx::new(&server).scalar("SELECT count(*) FROM piped")?.parse()?;
        ensure(done == held, || format!("{done} counted done, the table holds {held}: {r}"))?;
        let timeline = r["timeline"].as_array().context("timeline")?;
        let end = outages[0]["end_s"].as_f64().context("end_s")?;
        let after: u64 = timeline.iter().skip(end.ceil() as usize).filter_map(|s| s["rows"].as_u64()).sum();
        ensure(after > 0, || format!("no statement done after the outage: {r}"))
    })();
    stop_restarted(restarted);
    result
}

fn a_terminated_query_connection_is_one_reconnect(ctx: &Ctx) -> Result<()> {
    let app = "terminated_timeit";
    let url = ctx.with_app(app).url;
    let args = ["--duration", "4s", "--concurrency", "2"];
    let out = terminate_one_running(ctx, app, SLEEPING, || timeit(&url, SLEEP, &args))?;
    one_query_outage(&out, 1)?;
    // Terminated mid-query (57P01), or just as its result was sent (found closed by the next one).
    let class = &out.report["error_classes"][0]["class"];
    ensure(class == "SQLSTATE 57P01" || class == "connection lost", || format!("{}", out.report))
}

/// The query a worker runs after reconnecting, still running 5 s after the
/// deadline, is cancelled on the server: the cancel goes to the new
/// connection, not to the one that was lost.
fn a_query_after_a_reconnect_is_cancelled_on_the_new_connection(ctx: &Ctx) -> Result<()> {
    let (app, sql) = ("reconnected_cancel", "select pg_sleep(20.05)");
    let url = ctx.with_app(app).url;
    let QueryRun { code, report: r, .. } =
        terminate_one_running(ctx, app, SLEEPING, || timeit(&url, sql, &["--duration", "3s"]))?;
    let classes = r["error_classes"].as_array().context("error_classes")?;
    let mut classes: Vec<&str> = classes.iter().filter_map(|c| c["class"].as_str()).collect();
    classes.sort();
    ensure(code == 1 && r["reconnects"] == 1 && classes == ["SQLSTATE 57P01", "interrupted"], || format!("{r}"))?;
    stopped_on_the_server(ctx, sql)
}

fn without_reconnect_a_lost_query_connection_ends_its_worker(ctx: &Ctx) -> Result<()> {
    let app = "terminated_timeit_stops";
    let url = ctx.with_app(app).url;
    let args = ["--duration", "4s", "--concurrency", "2", "--no-reconnect"];
    let QueryRun { code, report: r, .. } = terminate_one_running(ctx, app, SLEEPING, || timeit(&url, SLEEP, &args))?;
    let no_outage = r["outages"].as_array().is_some_and(Vec::is_empty) && r["reconnects"] == 0;
    ensure(code == 1 && r["errors"] == 1 && no_outage, || format!("exit {code}: {r}"))?;
    // The other worker went on to the end.
    ensure(r["wall_s"].as_f64() >= Some(3.9), || format!("the run did not last its duration: {r}"))
}

/// A bulk ingest over CrateDB's HTTP endpoint with two nodes, the first
/// going away mid-run: its worker moves to the second node, the other
/// worker goes on there, and every row counted as written was acknowledged.
/// The batch the node took with it is in doubt; one it was never sent
/// (the node left between two batches) is resent on the next node.
fn cratedb_http_ingest_moves_to_the_next_node(_: &Ctx) -> Result<()> {
    for (leaves, resolution) in
        [(Leaves::MidRequest(8), Resolution::InDoubt), (Leaves::AfterAnswer(8), Resolution::Resent)]
    {
        let cluster = Arc::new(Cluster::default());
        let (a, b) = (Node::start(&cluster, Some(leaves))?, Node::start(&cluster, None)?);
        let args = format!(
            "--url cratedb://{},{} --quiet --workers 2 --batch-size 100 --rate 2000 --duration 3s --table failover \
             --drop-table --verify",
            a.addr, b.addr
        );
        let out = dbload::ingest(crate::support::ingest_args(&args), &|_| None, &mut Vec::new())?;
        let (r, c) = (&out.report, &out.report.connections);
        let what = || format!("{resolution:?}: exit {} {:?} {:?} {c:?}", out.exit_code, r.error_classes, r.verify);
        let o = c.outages.first().context("no outage")?;
        ensure(c.outages.len() == 1 && o.workers == 1 && o.reconnected && c.reconnects == 1, what)?;
        let doubt = &c.in_doubt_batches;
        ensure(doubt.len() == 1 && doubt[0].resolution == resolution && doubt[0].rows == 100, what)?;
        let in_doubt = resolution == Resolution::InDoubt;
        ensure(out.exit_code == u8::from(in_doubt) && c.in_doubt_rows == if in_doubt { 100 } else { 0 }, what)?;
        // Written == acknowledged by a node == found by --verify.
        ensure(r.throughput.errors == 0 && r.rows_total == cluster.rows(), || {
            format!("{} rows: {}", cluster.rows(), what())
        })?;
        ensure(r.verify.as_ref().is_some_and(|v| v.ok && v.found == Some(r.rows_total)), what)?;
        // The first node went away at its 8th batch; rows kept coming after.
        ensure(a.operations() == (8, if in_doubt { 7 } else { 8 }), || format!("node A: {:?}", a.operations()))?;
        let after = r.timeline.iter().skip(o.end_s.ceil() as usize).map(|s| s.rows).sum::<u64>();
        ensure(after > 0, || format!("no rows after the outage: {:?}", r.timeline))?;
        matches_the_schema(r)?;
    }
    Ok(())
}

/// timeit over CrateDB's HTTP endpoint with two nodes, the first going away
/// mid-query: that query fails, its worker moves to the second node, and
/// every query counted as succeeded was answered by a node.
fn cratedb_http_queries_move_to_the_next_node(_: &Ctx) -> Result<()> {
    let cluster = Arc::new(Cluster::default());
    let (a, b) = (Node::start(&cluster, Some(Leaves::MidRequest(10)))?, Node::start(&cluster, None)?);
    let url = format!("cratedb://{},{}", a.addr, b.addr);
    let out = timeit(&url, QUERY, &["--duration", "3s", "--concurrency", "2", "--rate", "40"])?;
    one_query_outage(&out, 1)?;
    let r = &out.report;
    let ((a_received, a_answered), (_, b_answered)) = (a.operations(), b.operations());
    ensure(a_received == 10 && a_answered == 9 && r["count"] == a_answered + b_answered, || {
        format!("node A {:?}, node B {:?}: {r}", a.operations(), b.operations())
    })
}
