//! Runs that survive the server (`--reconnect`): a restart of a server of
//! their own (never the shared one, which every other test uses), one
//! worker's connection terminated, and the old behaviour without it.

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use dbload::report::Connections;
use dbload::stats::recorder::Resolution;
use dbload::target::{LocalOptions, LocalPostgres};

use crate::support::{ensure, Ctx};
use crate::Test;

pub fn tests() -> Vec<(&'static str, Test)> {
    vec![
        (
            "reconnect::a_restart_mid_run_is_one_outage_and_loses_nothing",
            a_restart_mid_run_is_one_outage_and_loses_nothing,
        ),
        ("reconnect::a_terminated_connection_is_one_reconnect", a_terminated_connection_is_one_reconnect),
        ("reconnect::the_in_doubt_lookup_finds_written_batches", the_in_doubt_lookup_finds_written_batches),
        (
            "reconnect::a_batch_of_a_table_without_a_key_is_left_in_doubt",
            a_batch_of_a_table_without_a_key_is_left_in_doubt,
        ),
        (
            "reconnect::without_reconnect_a_lost_connection_ends_its_worker",
            without_reconnect_a_lost_connection_ends_its_worker,
        ),
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
            let (out, child) = std::thread::scope(|s| {
                let run = s.spawn(|| ctx.ingest(&args));
                std::thread::sleep(Duration::from_millis(1500));
                let child = restart(server.data_dir(), DOWN);
                (run.join().expect("the run does not panic"), child)
            });
            restarted.push(child?);
            let r = out?.report;
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
    // The restarted servers are ours to stop (the dropped LocalPostgres
    // stops only the one it started); each but the last is already gone.
    for mut child in restarted {
        let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGINT);
        let _ = child.wait();
    }
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

/// Runs `run` (a COPY ingest into `table`, its connections named `table`:
/// [`Ctx::with_app`]) and terminates the connection of one of its workers
/// a second in.
fn terminate_one<R: Send>(ctx: &Ctx, table: &str, run: impl FnOnce() -> Result<R> + Send) -> Result<R> {
    let (out, killed) = std::thread::scope(|s| {
        let run = s.spawn(run);
        std::thread::sleep(Duration::from_secs(1));
        // Only the workers' connections run COPY, each in a transaction of
        // its own (dbload's admin connection runs DDL and counts). On a
        // loaded machine they may still be logging in: look again a while.
        let kill = format!(
            "SELECT count(pg_terminate_backend(pid)) FROM (SELECT pid FROM pg_stat_activity \
             WHERE application_name = '{table}' AND (query LIKE 'COPY%' OR query IN ('BEGIN', 'COMMIT')) \
             ORDER BY pid LIMIT 1) AS one"
        );
        let looking = Instant::now();
        let killed = loop {
            match ctx.scalar(&kill) {
                Ok(n) if n == "0" && looking.elapsed() < Duration::from_secs(10) && !run.is_finished() => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                other => break other,
            }
        };
        (run.join().expect("the run does not panic"), killed)
    });
    let killed = killed?;
    ensure(killed == "1", || format!("terminated {killed} connections"))?;
    out
}

/// A report with an outage and in-doubt batches follows `schema/report.schema.json`.
fn matches_the_schema(report: &dbload::report::Report) -> Result<()> {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../schema/report.schema.json")).context("schema file")?;
    let validator = jsonschema::validator_for(&schema).context("compiling the schema")?;
    let json = serde_json::to_value(report)?;
    let errors: Vec<String> = validator.iter_errors(&json).map(|e| format!("{}: {e}", e.instance_path)).collect();
    ensure(errors.is_empty(), || format!("report against the schema: {errors:?}"))
}

/// Every batch in flight when a connection was lost was found written or
/// found unwritten and resent: none is left in doubt.
fn settled(what: &str, c: &Connections) -> Result<()> {
    let ok = !c.in_doubt_batches.is_empty()
        && c.in_doubt_batches.iter().all(|b| matches!(b.resolution, Resolution::Written | Resolution::Resent));
    ensure(ok && c.in_doubt_rows == 0, || format!("{what}: {c:?}"))
}

/// Stops the server of `data_dir` as `pg_ctl -m immediate stop` does
/// (SIGQUIT to the postmaster: no shutdown checkpoint, crash recovery at
/// the next start), waits `down`, and starts it again with the command
/// line it was started with, as the account that owns its data.
fn restart(data_dir: &Path, down: Duration) -> Result<Child> {
    let pid_file = data_dir.join("postmaster.pid");
    let pid: i32 = std::fs::read_to_string(&pid_file)?.lines().next().context("empty postmaster.pid")?.parse()?;
    let opts = std::fs::read_to_string(data_dir.join("postmaster.opts"))?;
    kill(Pid::from_raw(pid), Signal::SIGQUIT)?;
    let stopped = Instant::now();
    while pid_file.exists() {
        ensure(stopped.elapsed() < Duration::from_secs(10), || "the server did not stop".into())?;
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(down.saturating_sub(stopped.elapsed()));
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
            cfg.model.generator(cfg.seed, 0, cfg.start_us, 1000).next_batch(&mut batch, 500);
            let stmt = dbload::dialect::postgres::batch_rows_found(&cfg.table, &cfg.schema).context("a key")?;
            let found = ctx.count_bound(&stmt, &batch)?;
            ensure(found == want, || format!("{model} {start}: found {found} of a batch, want {want}"))?;
        }
    }
    Ok(())
}

const START: &str = "--start 2024-01-01T00:00:00Z";
