//! No hang that only SIGKILL ends (issue 29, item 1): a server that takes
//! the TCP connection and never answers is given up at `connect_timeout`,
//! and a stop signal ends the setup before the run, or the count after it,
//! within a second or two (exit 130), keeping the report of what was done.
//! Each test runs the real binary and times it.

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::support::{ensure, json, Ctx};
use crate::Phase::Parallel;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("hang::timeit_gives_up_at_the_urls_connect_timeout", timeit_gives_up_at_the_urls_connect_timeout, Parallel),
        ("hang::timeit_gives_up_at_pgconnect_timeout", timeit_gives_up_at_pgconnect_timeout, Parallel),
        ("hang::ingest_ends_at_ctrl_c_while_connecting", ingest_ends_at_ctrl_c_while_connecting, Parallel),
        ("hang::cratedb_ends_at_ctrl_c_while_connecting", cratedb_ends_at_ctrl_c_while_connecting, Parallel),
        ("hang::cratedb_gives_up_at_connect_timeout", cratedb_gives_up_at_connect_timeout, Parallel),
        (
            "hang::a_count_waiting_on_a_lock_ends_at_ctrl_c_with_the_report",
            a_count_waiting_on_a_lock_ends_at_ctrl_c,
            Parallel,
        ),
        (
            "hang::a_drop_table_waiting_on_a_lock_is_cancelled_at_ctrl_c",
            a_drop_table_waiting_on_a_lock_is_cancelled,
            Parallel,
        ),
        (
            "hang::a_sweep_grid_of_a_million_points_is_refused_at_once",
            a_sweep_grid_of_a_million_points_is_refused,
            Parallel,
        ),
        ("hang::ctrl_c_ends_the_check_of_a_large_sweep_grid", ctrl_c_ends_the_check_of_a_large_sweep_grid, Parallel),
    ]
}

/// A fake server, not a database: it accepts TCP connections and never
/// reads or writes a byte, as a stuck pooler, a half-dead node or the
/// wrong service on the port does. No real server can be made to behave
/// so; the connections it took are held until it is dropped.
struct Silent {
    port: u16,
    stop: Arc<AtomicBool>,
}

impl Silent {
    fn start() -> Result<Silent> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        std::thread::spawn(move || {
            let mut held: Vec<TcpStream> = Vec::new();
            for conn in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                held.extend(conn);
            }
        });
        Ok(Silent { port, stop })
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees `stop`.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// How a run of the binary ended: its status (None: still running at the
/// limit, then killed), how long after `from` it ended, its output.
struct Ended {
    status: Option<ExitStatus>,
    after: Duration,
    stdout: String,
    stderr: String,
}

impl Ended {
    fn code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.status {
            Some(s) => write!(f, "{s} after {:.2} s", self.after.as_secs_f64())?,
            None => write!(f, "still running {:.2} s later: killed", self.after.as_secs_f64())?,
        }
        write!(f, "\nstderr: {}\nstdout: {}", self.stderr, self.stdout)
    }
}

fn spawn(args: &[&str], env: &[(&str, &str)]) -> Result<Child> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dbload"));
    cmd.args(args).env_remove("DATABASE_URL").env_remove("PGHOST").env_remove("PGCONNECT_TIMEOUT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    Ok(cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?)
}

/// Waits for `child` (the run `what`) to end, at most `limit` after
/// `from`; kills it then. Says how long it took, for the figures.
fn ends(what: &str, mut child: Child, from: Instant, limit: Duration) -> Result<Ended> {
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break Some(s);
        }
        if from.elapsed() > limit {
            child.kill()?;
            child.wait()?;
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let after = from.elapsed();
    let (mut stdout, mut stderr) = (String::new(), String::new());
    child.stdout.take().context("stdout")?.read_to_string(&mut stdout)?;
    child.stderr.take().context("stderr")?.read_to_string(&mut stderr)?;
    eprintln!("{what}: ended {:.2} s after it was timed", after.as_secs_f64());
    Ok(Ended { status, after, stdout, stderr })
}

/// Sends SIGINT to `child` once `after` passed, and returns when it was sent.
fn interrupt_after(child: &Child, after: Duration) -> Result<Instant> {
    std::thread::sleep(after);
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT)?;
    Ok(Instant::now())
}

/// A target error (exit 3) naming connect_timeout and the host, between
/// the timeout and 2 s after it.
fn gave_up(ended: &Ended, timeout_s: u64, port: u16) -> Result<()> {
    let limit = Duration::from_secs(timeout_s + 2);
    ensure(ended.code() == Some(3), || format!("want exit 3: {ended}"))?;
    ensure(ended.after >= Duration::from_secs(timeout_s) && ended.after < limit, || format!("{ended}"))?;
    let named = ended.stderr.contains("connect_timeout") && ended.stderr.contains(&format!("127.0.0.1:{port}"));
    ensure(named, || format!("the message names neither connect_timeout nor the host: {ended}"))
}

/// (a) The URL's `connect_timeout` bounds the startup and login too, not
/// only the TCP connect.
fn timeit_gives_up_at_the_urls_connect_timeout(_: &Ctx) -> Result<()> {
    let server = Silent::start()?;
    let url = format!("postgres://u@127.0.0.1:{}/db?connect_timeout=2&sslmode=disable", server.port);
    let t = Instant::now();
    let child = spawn(&["timeit", "--url", &url, "-s", "select 1", "-t", "1"], &[])?;
    gave_up(&ends("timeit, connect_timeout=2", child, t, Duration::from_secs(15))?, 2, server.port)
}

/// (b) `PGCONNECT_TIMEOUT` the same.
fn timeit_gives_up_at_pgconnect_timeout(_: &Ctx) -> Result<()> {
    let server = Silent::start()?;
    let url = format!("postgres://u@127.0.0.1:{}/db", server.port);
    let t = Instant::now();
    let child = spawn(&["timeit", "--url", &url, "-s", "select 1", "-t", "1"], &[("PGCONNECT_TIMEOUT", "2")])?;
    gave_up(&ends("timeit, PGCONNECT_TIMEOUT=2", child, t, Duration::from_secs(15))?, 2, server.port)
}

/// A run interrupted before it began: exit 130 within 2 s of SIGINT,
/// saying that it was interrupted.
fn interrupted_at_once(ended: &Ended) -> Result<()> {
    ensure(ended.code() == Some(130) && ended.after < Duration::from_secs(2), || format!("want exit 130: {ended}"))?;
    ensure(ended.stderr.contains("interrupted"), || format!("not said: {ended}"))
}

/// (c) Ctrl-C while the connection's startup goes unanswered (the 10 s
/// default timeout not yet reached).
fn ingest_ends_at_ctrl_c_while_connecting(_: &Ctx) -> Result<()> {
    let server = Silent::start()?;
    let url = format!("postgres://u@127.0.0.1:{}/db?sslmode=disable", server.port);
    let child = spawn(&["ingest", "--url", &url, "--rows", "1000"], &[])?;
    let t = interrupt_after(&child, Duration::from_secs(1))?;
    interrupted_at_once(&ends("ingest, SIGINT while connecting", child, t, Duration::from_secs(10))?)
}

/// (d) CrateDB over HTTP: a node that takes the connection and never
/// answers the first request, by `cratedb://` and by `--engine cratedb`
/// with an http URL.
fn cratedb_ends_at_ctrl_c_while_connecting(_: &Ctx) -> Result<()> {
    let server = Silent::start()?;
    let crate_url = format!("cratedb://127.0.0.1:{}", server.port);
    let http_url = format!("http://127.0.0.1:{}", server.port);
    for args in [
        vec!["ingest", "--url", &crate_url, "--rows", "1000"],
        vec!["ingest", "--url", &http_url, "--engine", "cratedb", "--rows", "1000"],
        vec!["timeit", "--url", &crate_url, "-s", "select 1", "-t", "1"],
    ] {
        let child = spawn(&args, &[])?;
        let t = interrupt_after(&child, Duration::from_secs(1))?;
        interrupted_at_once(&ends(&args.join(" "), child, t, Duration::from_secs(10))?)
            .with_context(|| args.join(" "))?;
    }
    Ok(())
}

/// A CrateDB URL's `connect_timeout` bounds the connection and its first
/// request (the login is checked there).
fn cratedb_gives_up_at_connect_timeout(_: &Ctx) -> Result<()> {
    let server = Silent::start()?;
    let url = format!("cratedb://127.0.0.1:{}/?connect_timeout=2", server.port);
    let t = Instant::now();
    let child = spawn(&["ingest", "--url", &url, "--rows", "1000"], &[])?;
    gave_up(&ends("cratedb ingest, connect_timeout=2", child, t, Duration::from_secs(15))?, 2, server.port)
}

/// (e) The rows are written, and the count after the run waits on a lock
/// another session holds: SIGINT ends it within 2 s with exit 130, and
/// the report of the rows written is printed, their count unknown.
///
/// The lock: the table is partitioned, all rows go to its default
/// partition, and the test holds ACCESS EXCLUSIVE on the other partition,
/// which the inserts never touch but a count of the table must read.
fn a_count_waiting_on_a_lock_ends_at_ctrl_c(ctx: &Ctx) -> Result<()> {
    let app = "hang_locked_count";
    let table = "hang_locked";
    ctx.query(&format!("DROP TABLE IF EXISTS {table}, {table}_model"))?;
    // The model's columns, from dbload itself.
    let made = ctx.ingest(&format!("--table {table}_model --rows 1 --metrics 2"))?;
    ensure(made.exit_code == 0, || "making the model's table".into())?;
    ctx.query(&format!(
        "CREATE TABLE {table} (LIKE {table}_model) PARTITION BY RANGE (time);
         CREATE TABLE {table}_rows PARTITION OF {table} DEFAULT;
         CREATE TABLE {table}_locked PARTITION OF {table} FOR VALUES FROM (MINVALUE) TO ('1900-01-01')"
    ))?;
    let locker = Locker::lock(ctx, &format!("{table}_locked"), "ACCESS EXCLUSIVE")?;

    let url = ctx.url_with(&format!("application_name={app}"));
    let args = ["ingest", "--url", &url, "--table", table, "--append", "--metrics", "2", "--rows", "2000"];
    let child = spawn(&[&args[..], &["--output", "json", "--quiet", "--no-results"]].concat(), &[])?;
    waits_on_a_lock(ctx, app)?;
    let t = interrupt_after(&child, Duration::from_millis(200))?;
    let ended = ends("ingest, SIGINT in the count", child, t, Duration::from_secs(10))?;
    locker.release()?;
    ensure(ended.code() == Some(130) && ended.after < Duration::from_secs(2), || format!("want exit 130: {ended}"))?;
    let report = json(&ended.stdout)?;
    ensure(report["status"] == "interrupted" && report["rows"] == 2000, || format!("{ended}"))?;
    nothing_left(ctx, app)
}

/// A session of the test's that holds a lock on a table until released.
struct Locker {
    rt: tokio::runtime::Runtime,
    client: tokio_postgres::Client,
}

impl Locker {
    fn lock(ctx: &Ctx, table: &str, mode: &str) -> Result<Locker> {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let target = dbload::driver::pg::PgTarget::from_url(&ctx.url, "test URL", &|_| None)?;
        let client = rt.block_on(target.connect())?;
        rt.block_on(client.batch_execute(&format!("BEGIN; LOCK TABLE {table} IN {mode} MODE")))?;
        Ok(Locker { rt, client })
    }

    fn release(self) -> Result<()> {
        Ok(self.rt.block_on(self.client.batch_execute("ROLLBACK"))?)
    }
}

/// The statements of dbload's connections (named `app`) that wait on a lock.
fn waiting(app: &str) -> String {
    format!("SELECT count(*) FROM pg_stat_activity WHERE application_name = '{app}' AND wait_event_type = 'Lock'")
}

/// Returns once one of dbload's connections waits on a lock.
fn waits_on_a_lock(ctx: &Ctx, app: &str) -> Result<()> {
    let start = Instant::now();
    while ctx.scalar(&waiting(app))? == "0" {
        ensure(start.elapsed() < Duration::from_secs(20), || "dbload never waited on the lock".into())?;
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Nothing of dbload's is left waiting on the server.
fn nothing_left(ctx: &Ctx, app: &str) -> Result<()> {
    let left = ctx.scalar(&waiting(app))?;
    ensure(left == "0", || format!("{left} of dbload's statements still wait on the lock"))
}

/// `--drop-table` on a table another session holds a lock on: SIGINT
/// ends the wait (exit 130), and the DROP is cancelled on the server
/// rather than left queued to run once the lock is released: the table
/// the user stopped dbload from dropping is still there.
fn a_drop_table_waiting_on_a_lock_is_cancelled(ctx: &Ctx) -> Result<()> {
    let (app, table) = ("hang_locked_drop", "hang_locked_drop");
    let made = ctx.ingest(&format!("--table {table} --drop-table --rows 10"))?;
    ensure(made.exit_code == 0, || "making the table".into())?;
    let locker = Locker::lock(ctx, table, "ACCESS SHARE")?;
    let url = ctx.url_with(&format!("application_name={app}"));
    let child = spawn(&["ingest", "--url", &url, "--table", table, "--drop-table", "--rows", "10"], &[])?;
    waits_on_a_lock(ctx, app)?;
    let t = interrupt_after(&child, Duration::from_millis(200))?;
    let ended = ends("ingest --drop-table, SIGINT waiting on the lock", child, t, Duration::from_secs(10))?;
    interrupted_at_once(&ended)?;
    locker.release()?;
    std::thread::sleep(Duration::from_millis(300));
    let rows = ctx.scalar(&format!("SELECT count(*) FROM {table}"));
    ensure(rows.as_deref().ok() == Some("10"), || format!("the table after the lock was released: {rows:?}"))?;
    nothing_left(ctx, app)
}

/// A 1,000 x 1,000 grid is no sweep anyone can run (a million whole
/// runs), and checking each of its points took longer than anyone waits:
/// refused at once (exit 2), naming its size and the cap.
fn a_sweep_grid_of_a_million_points_is_refused(_: &Ctx) -> Result<()> {
    let values = (1..=1000).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let (rows, batch) = (format!("rows={values}"), format!("batch-size={values}"));
    let args = ["sweep", "--vary", &rows, "--vary", &batch, "--no-results", "--", "ingest", "--dry-run"];
    let t = Instant::now();
    let ended = ends("sweep, 1,000 x 1,000 points", spawn(&args, &[])?, t, Duration::from_secs(10))?;
    ensure(ended.code() == Some(2) && ended.after < Duration::from_secs(2), || format!("want exit 2: {ended}"))?;
    let named = ended.stderr.contains("1,000,000") && ended.stderr.contains("10,000");
    ensure(named, || format!("the message names neither the grid's size nor the cap: {ended}"))
}

/// The largest grid taken (100 x 100) takes seconds to check, point by
/// point, before any runs: Ctrl-C ends that too.
fn ctrl_c_ends_the_check_of_a_large_sweep_grid(_: &Ctx) -> Result<()> {
    let values = (1..=100).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let (rows, batch) = (format!("rows={values}"), format!("batch-size={values}"));
    let args = ["sweep", "--vary", &rows, "--vary", &batch, "--no-results", "--", "ingest", "--dry-run"];
    let child = spawn(&args, &[])?;
    let t = interrupt_after(&child, Duration::from_millis(500))?;
    let ended = ends("sweep, SIGINT while checking 10,000 points", child, t, Duration::from_secs(10))?;
    interrupted_at_once(&ended)?;
    ensure(ended.stderr.contains("checking its 10,000 points"), || format!("{ended}"))
}
