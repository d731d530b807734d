//! The real binary: exit codes, messages, Ctrl-C, the throwaway default
//! target, dry runs, the JSON contract and the HTML report.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::support::{dbload_bin, ensure, entries, interrupted, private_tmp, refused, Ctx};
use crate::Phase::Parallel;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("cli::a_closed_stdout_loses_no_file_and_no_run", a_closed_stdout_loses_no_file_and_no_run, Parallel),
        ("cli::a_closed_stderr_fails_no_run", a_closed_stderr_fails_no_run, Parallel),
        ("cli::output_nobody_reads_is_no_failure", output_nobody_reads_is_no_failure, Parallel),
        ("cli::bad_input_exits_2_naming_the_option", bad_input_exits_2_naming_the_option, Parallel),
        ("cli::unreachable_target_exits_3", unreachable_target_exits_3, Parallel),
        ("cli::ctrl_c_prints_a_partial_report_and_exits_130", ctrl_c_prints_a_partial_report_and_exits_130, Parallel),
        ("cli::throwaway_server_is_started_and_removed", throwaway_server_is_started_and_removed, Parallel),
        (
            "cli::sigterm_stops_cleanly_and_removes_the_throwaway_server",
            sigterm_stops_cleanly_and_removes_the_throwaway_server,
            Parallel,
        ),
        ("cli::sigterm_during_startup_still_cleans_up", sigterm_during_startup_still_cleans_up, Parallel),
        ("cli::dry_run_touches_no_database", dry_run_touches_no_database, Parallel),
        ("cli::json_report_matches_its_schema", json_report_matches_its_schema, Parallel),
        ("cli::passwords_are_never_printed", passwords_are_never_printed, Parallel),
        ("cli::throwaway_server_admits_its_owner_only", throwaway_server_admits_its_owner_only, Parallel),
        (
            "cli::password_file_and_service_log_in_as_psql_would",
            password_file_and_service_log_in_as_psql_would,
            Parallel,
        ),
        ("cli::no_form_of_url_echoes_its_password", no_form_of_url_echoes_its_password, Parallel),
        ("cli::html_report_is_one_file_with_charts", html_report_is_one_file_with_charts, Parallel),
        ("cli::timeit_threads_are_pgbench_j", timeit_threads_are_pgbench_j, Parallel),
        ("cli::a_time_past_the_clock_exits_2_not_a_panic", a_time_past_the_clock_exits_2_not_a_panic, Parallel),
        ("cli::a_file_descriptor_limit_is_named_not_the_host", a_file_descriptor_limit_is_named_not_the_host, Parallel),
    ]
}

/// `-j N` (pgbench's threads) runs the clients on N threads, as the report
/// says; without it, on one per CPU. In a process of its own: the threads
/// are the process's, made once.
/// Runs `timeit` on the harness's server (10 `select 1` a connection, or
/// `args`) with `--html`, `--report` and `--results` in a new directory,
/// its stdout or stderr a pipe whose reader is gone before the run starts
/// (`closed`); returns the exit code, what the other stream got, and the
/// directory.
fn with_closed(ctx: &Ctx, closed: &str, args: &[&str]) -> Result<(Option<i32>, String, tempfile::TempDir)> {
    let dir = tempfile::tempdir()?;
    let at = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let (html, report, store) = (at("r.html"), at("r.json"), at("store"));
    let mut argv = vec!["timeit", "--url", &ctx.url, "-s", "select 1", "--html", &html, "--report", &report];
    argv.extend(["--results", &store]);
    argv.extend(args);
    let mut child = Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(&argv)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut got = String::new();
    if closed == "stdout" {
        drop(child.stdout.take());
        child.stderr.take().context("stderr")?.read_to_string(&mut got)?;
    } else {
        drop(child.stderr.take());
        child.stdout.take().context("stdout")?.read_to_string(&mut got)?;
    }
    let status = child.wait()?;
    Ok((status.code(), got, dir))
}

/// The --html page, the --report file and the stored run are all there.
fn nothing_lost(dir: &tempfile::TempDir) -> Result<()> {
    for file in ["r.html", "r.json"] {
        ensure(dir.path().join(file).is_file(), || format!("no {file}"))?;
    }
    let kept = entries(&dir.path().join("store")).unwrap_or_default();
    ensure(kept.iter().filter(|f| f.ends_with(".json")).count() == 1, || format!("the store holds {kept:?}"))
}

/// Issue 29, item 3: `dbload ... | head` closed stdout before the report
/// was printed, and the run exited 1 with no --html page, no --report file
/// and no stored run. Stdout is written last, and a closed pipe there is
/// no failure: the exit code is the run's.
fn a_closed_stdout_loses_no_file_and_no_run(ctx: &Ctx) -> Result<()> {
    let (code, stderr, dir) = with_closed(ctx, "stdout", &["-t", "10", "--quiet"])?;
    ensure(code == Some(0), || format!("exit {code:?}: {stderr}"))?;
    nothing_lost(&dir)?;
    // The run's own exit code stands: here a --fail-if that holds.
    let (code, stderr, _) = with_closed(ctx, "stdout", &["-t", "10", "--quiet", "--fail-if", "qps > 0"])?;
    ensure(code == Some(1), || format!("exit {code:?}: {stderr}"))
}

/// The same for stderr (`2>&1 | head`): progress lines to a closed pipe
/// lose the lines, not the run; an error said to a closed pipe loses the
/// message, not the exit code (it was 101, a panic of `eprintln!`).
fn a_closed_stderr_fails_no_run(ctx: &Ctx) -> Result<()> {
    let (code, stdout, dir) = with_closed(ctx, "stderr", &["--duration", "2s", "-P", "0.5"])?;
    ensure(code == Some(0), || format!("exit {code:?}: {stdout}"))?;
    ensure(stdout.contains("select 1"), || stdout.clone())?;
    nothing_lost(&dir)?;
    let mut child = Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(["timeit", "-s", "select 1", "--url", "postgres://u@127.0.0.1:1/d"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    drop(child.stderr.take());
    let status = child.wait()?;
    ensure(status.code() == Some(3), || format!("unreachable target: {status}"))
}

/// A command whose work is its output (`dbload completions bash | head`,
/// `dbload results list | head`): a reader that has gone took what it
/// wanted, so exit 0 and no message, as ripgrep does (it was exit 1,
/// "writing to stdout: Broken pipe").
fn output_nobody_reads_is_no_failure(_: &Ctx) -> Result<()> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(["completions", "bash"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    drop(child.stdout.take());
    let mut stderr = String::new();
    child.stderr.take().context("stderr")?.read_to_string(&mut stderr)?;
    let status = child.wait()?;
    ensure(status.code() == Some(0) && stderr.is_empty(), || format!("{status}: {stderr}"))
}

fn timeit_threads_are_pgbench_j(ctx: &Ctx) -> Result<()> {
    let cpus = std::thread::available_parallelism()?.get();
    for (j, threads) in [(Some("1"), 1), (Some("3"), 3), (None, cpus)] {
        let mut args = vec!["timeit", "--url", &ctx.url, "-s", "select 1", "-c", "4", "-t", "25"];
        args.extend(["--output", "json", "--no-results", "--quiet"]);
        args.extend(j.iter().flat_map(|j| ["-j", *j]));
        let (code, stdout, stderr) = dbload_bin(&args, &[]);
        ensure(code == 0, || format!("-j {j:?}: exit {code}: {stderr}"))?;
        let report: serde_json::Value = serde_json::from_str(&stdout).with_context(|| stdout.clone())?;
        ensure(report["setup"]["threads"] == threads && report["count"] == 100, || format!("-j {j:?}: {stdout}"))?;
    }
    Ok(())
}

fn bad_input_exits_2_naming_the_option(ctx: &Ctx) -> Result<()> {
    for (args, culprit) in [
        ("--batch-size 0", "--batch-size"),
        ("--metrics 101", "--metrics"),
        ("--model nosuch", "--model"),
        ("--rows lots", "--rows"),
        ("--duration forever", "--duration"),
        ("--url postgres://h/d?sslmode=sometimes", "sslmode"),
        ("--table a.b.c", "--table"),
    ] {
        let mut argv = vec!["ingest"];
        if !args.contains("--url") {
            argv.extend(["--url", &ctx.url]);
        }
        argv.extend(args.split_whitespace());
        refused(&argv, culprit)?;
    }
    Ok(())
}

/// Issue 29, item 7: `--duration 500000000000y` passed resolving and
/// panicked in the workers (adding it to the run's start overflowed the
/// clock); every command that runs for a time refuses it up front.
fn a_time_past_the_clock_exits_2_not_a_panic(ctx: &Ctx) -> Result<()> {
    let far = ["--duration", "500000000000y", "--no-results", "--quiet"];
    refused(&[&["ingest", "--dry-run"][..], &far].concat(), "--duration 500000000000years")?;
    refused(&[&["timeit", "--url", &ctx.url, "-s", "select 1"][..], &far].concat(), "--duration 500000000000years")?;
    refused(&[&["http", "http://127.0.0.1:9/"][..], &far].concat(), "--duration 500000000000years")?;
    refused(&["ingest", "--dry-run", "--no-results", "--quiet", "--stages", "500000000000y:1"], "--stages")
}

/// Issue 29, item 7: connections past the process's file-descriptor limit
/// (`ulimit -n`) failed with "check the host name and port" and exit 3; the
/// limit is named, with exit 2. The HTTP target is a bare listening socket
/// (a fake: nothing answers; only opening connections is tested).
fn a_file_descriptor_limit_is_named_not_the_host(ctx: &Ctx) -> Result<()> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let http = format!("http://{}/", listener.local_addr()?);
    let runs: [&[&str]; 2] = [
        &["timeit", "--url", &ctx.url, "-s", "select 1", "-c", "60", "-t", "1"],
        &["http", &http, "--vus", "60", "--iterations", "60", "--timeout", "2s"],
    ];
    for args in runs {
        let out = Command::new("sh")
            .arg("-c")
            .arg("ulimit -n 40 && exec \"$0\" \"$@\"")
            .arg(env!("CARGO_BIN_EXE_dbload"))
            .args(args)
            .args(["--no-results", "--quiet"])
            .output()?;
        let (code, stderr) = (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr));
        ensure(code == 2 && stderr.contains("ulimit -n") && !stderr.contains("host name"), || {
            format!("{}: exit {code}: {stderr}", args[0])
        })?;
    }
    Ok(())
}

fn unreachable_target_exits_3(_: &Ctx) -> Result<()> {
    // Port 1 on loopback: nothing listens there.
    let (code, _, stderr) =
        dbload_bin(&["ingest", "--url", "postgres://app:hunter2@127.0.0.1:1/bench", "--rows", "10"], &[]);
    ensure(code == 3, || format!("exit {code}: {stderr}"))?;
    ensure(stderr.contains("127.0.0.1:1") && !stderr.contains("hunter2"), || stderr.clone())
}

fn ctrl_c_prints_a_partial_report_and_exits_130(ctx: &Ctx) -> Result<()> {
    let argv = ["ingest", "--url", &ctx.url, "--duration", "60s", "--table", "interrupted", "--drop-table"];
    let report = interrupted(&[&argv[..], &["--workers", "2", "--output", "json", "--quiet"]].concat(), None, SECS_3)?;
    // Everything counted was acknowledged: the table has at least those rows.
    let count: u64 = ctx.scalar("SELECT count(*) FROM interrupted")?.parse()?;
    ensure(count >= report["rows_total"].as_u64().unwrap_or(u64::MAX), || format!("{count} rows in the table"))
}

const SECS_3: Duration = Duration::from_secs(3);

fn throwaway_server_is_started_and_removed(_: &Ctx) -> Result<()> {
    // No --url, DATABASE_URL or PGHOST: dbload starts its own server (as the
    // postgres account when run as root, as CI does) and removes it at exit.
    let tmp = private_tmp()?;
    let env = [("TMPDIR", tmp.path().to_str().unwrap())];
    let (code, stdout, stderr) = dbload_bin(&["ingest", "--rows", "20000", "--workers", "2", "--output", "json"], &env);
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    let report: serde_json::Value = serde_json::from_str(&stdout)?;
    ensure(report["setup"]["target_kind"] == "throwaway" && report["rows"] == 20000, || stdout.clone())?;
    let left = entries(tmp.path())?;
    ensure(left.is_empty(), || format!("left behind: {left:?}"))
}

fn sigterm_stops_cleanly_and_removes_the_throwaway_server(_: &Ctx) -> Result<()> {
    // `kill` or a closed terminal must not leave a server or its files behind.
    // Rows flow by 4 s after the data directory appears.
    sigterm_a_throwaway_ingest(Duration::from_secs(4))
}

/// SIGTERM while the throwaway server is still being created (before the
/// run's own handling exists) is noted, not fatal: the run stops as soon as
/// it starts, reports, and removes the server and its directory.
fn sigterm_during_startup_still_cleans_up(_: &Ctx) -> Result<()> {
    sigterm_a_throwaway_ingest(Duration::ZERO)
}

/// Starts an ingest into a throwaway server, sends SIGTERM `after` its data
/// directory appears (initdb is running), and checks that it exits 130 at
/// once with an interrupted report and leaves nothing behind.
fn sigterm_a_throwaway_ingest(after: Duration) -> Result<()> {
    let tmp = private_tmp()?;
    let mut child = Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(["ingest", "--duration", "60s", "--workers", "1", "--output", "json", "--quiet"])
        .env_remove("DATABASE_URL")
        .env_remove("PGHOST")
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let started = Instant::now();
    while entries(tmp.path())?.is_empty() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(after);
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM)?;
    let status = child.wait()?;
    let mut stdout = String::new();
    child.stdout.take().context("stdout")?.read_to_string(&mut stdout)?;
    ensure(status.code() == Some(130), || format!("exit {status:?}: {stdout}"))?;
    ensure(started.elapsed() < Duration::from_secs(40), || "the run went on after SIGTERM".into())?;
    let report: serde_json::Value = serde_json::from_str(&stdout).with_context(|| stdout.clone())?;
    ensure(report["status"] == "interrupted", || stdout.clone())?;
    let left = entries(tmp.path())?;
    ensure(left.is_empty(), || format!("left behind: {left:?}"))
}

fn dry_run_touches_no_database(_: &Ctx) -> Result<()> {
    // PGHOST points nowhere: a dry run must not try it, nor start a server.
    let tmp = private_tmp()?;
    let env = [("PGHOST", "127.0.0.1"), ("PGPORT", "1"), ("TMPDIR", tmp.path().to_str().unwrap())];
    for method in ["copy", "copy-csv", "insert", "unnest"] {
        let (code, stdout, stderr) =
            dbload_bin(&["ingest", "--dry-run", "--rows", "200000", "--method", method, "--output", "json"], &env);
        ensure(code == 0, || format!("{method}: exit {code}: {stderr}"))?;
        let report: serde_json::Value = serde_json::from_str(&stdout)?;
        ensure(report["rows"] == 200000 && report["setup"]["target_kind"] == "none", || stdout.clone())?;
    }
    ensure(entries(tmp.path())?.is_empty(), || "a dry run started a server".into())
}

fn json_report_matches_its_schema(ctx: &Ctx) -> Result<()> {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../schema/report.schema.json")).context("schema file")?;
    let validator = jsonschema::validator_for(&schema).context("compiling the schema")?;
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("report.json");
    for args in [
        vec!["--rows", "3000", "--verify", "--warmup", "500"],
        vec!["--rate", "5000", "--duration", "1s"],
        vec!["--method", "insert", "--upsert", "--model", "cpu", "--rows", "1000"],
    ] {
        let mut argv = vec!["ingest", "--url", &ctx.url, "--table", "json_schema", "--drop-table", "--output", "json"];
        argv.extend(["--report", file.to_str().unwrap()]);
        argv.extend(args.iter().copied());
        let (code, stdout, stderr) = dbload_bin(&argv, &[]);
        ensure(code == 0, || format!("{args:?}: exit {code}: {stderr}"))?;
        let report: serde_json::Value = serde_json::from_str(&stdout)?;
        let errors: Vec<String> =
            validator.iter_errors(&report).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        ensure(errors.is_empty(), || format!("{args:?}: {errors:#?}"))?;
        let from_file: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file)?)?;
        ensure(from_file["rows"] == report["rows"], || "--report file differs from stdout".into())?;
    }
    // The dry-run shape too (no target, no server fields).
    let (_, stdout, _) = dbload_bin(&["ingest", "--dry-run", "--rows", "1000", "--output", "json"], &[]);
    let report: serde_json::Value = serde_json::from_str(&stdout)?;
    let errors: Vec<String> = validator.iter_errors(&report).map(|e| e.to_string()).collect();
    ensure(errors.is_empty(), || format!("dry run: {errors:#?}"))
}

fn passwords_are_never_printed(ctx: &Ctx) -> Result<()> {
    ctx.query("DO $$ BEGIN CREATE ROLE secretive LOGIN SUPERUSER PASSWORD 'hunter2'; EXCEPTION WHEN duplicate_object THEN NULL; END $$")?;
    let url = ctx.url.replace("postgres@", "secretive:hunter2@");
    let (code, stdout, stderr) = dbload_bin(
        &["ingest", "--url", &url, "--rows", "100", "--table", "pw", "--drop-table", "--output", "json"],
        &[],
    );
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    ensure(!stdout.contains("hunter2") && !stderr.contains("hunter2"), || stdout.clone())?;
    ensure(stdout.contains("secretive"), || "the user name should still be shown".into())
}

fn html_report_is_one_file_with_charts(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("report.html");
    let argv = ["ingest", "--url", &ctx.url, "--rows", "20000", "--table", "html_report", "--drop-table", "--quiet"];
    let (code, stdout, stderr) = dbload_bin(&[&argv[..], &["--html", file.to_str().unwrap()]].concat(), &[]);
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    ensure(stdout.contains("Throughput:"), || format!("the text report still goes to stdout: {stdout}"))?;
    let html = std::fs::read_to_string(&file).context("the --html file")?;
    ensure(html.contains("<svg"), || "no chart in the HTML report".into())?;
    ensure(html.contains("20,000"), || "the rows figure is missing".into())?;
    ensure(!html.contains("<script") && !html.contains("<link") && !html.contains("src="), || {
        "the HTML report loads something from outside".into()
    })
}

/// Issue 14.1: another OS user can connect to the throwaway server neither
/// over TCP nor through its socket; its owner can, with what `--keep`
/// prints, and `dbload stop DIR` stops it and removes its directory.
fn throwaway_server_admits_its_owner_only(_: &Ctx) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let tmp = private_tmp()?;
    let env = [("TMPDIR", tmp.path().to_str().unwrap())];
    let (code, _, stderr) = dbload_bin(&["ingest", "--rows", "1000", "--keep", "--quiet"], &env);
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    let line = |prefix: &str| {
        stderr.lines().map(str::trim).find(|l| l.starts_with(prefix)).map(str::to_owned).context(stderr.clone())
    };
    let connect = line("PGPASSFILE=")?;
    let stop = line("dbload stop ")?;
    let dir = std::path::PathBuf::from(stop.trim_start_matches("dbload stop "));
    let port = connect.split_whitespace().skip_while(|w| *w != "-p").nth(1).context(connect.clone())?.to_owned();
    let mode = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.permissions().mode() & 0o777);
    ensure(mode(&dir)? == 0o700, || format!("{} is not 0700", dir.display()))?;
    ensure(mode(&dir.join("pgpass"))? == 0o600, || "the password file is not 0600".into())?;
    ensure(!stderr.contains(&std::fs::read_to_string(dir.join("pgpass"))?), || "the password was printed".into())?;
    let pid: i32 = std::fs::read_to_string(dir.join("data/postmaster.pid"))?.lines().next().context("pid")?.parse()?;

    if nix::unistd::geteuid().is_root() {
        // Another user, with the password file's path too: the file is not theirs to read.
        let as_nobody = |host: &str| {
            Command::new("runuser")
                .args(["-u", "nobody", "--", "psql", "-w", "-h", host, "-p", &port, "-U", "postgres", "postgres"])
                .args(["-c", "COPY (SELECT 1) TO PROGRAM 'id'"])
                .env("PGPASSFILE", dir.join("pgpass"))
                .current_dir("/")
                .output()
        };
        let tcp = as_nobody("127.0.0.1")?;
        let tcp_err = String::from_utf8_lossy(&tcp.stderr);
        ensure(!tcp.status.success() && tcp_err.contains("password"), || format!("TCP as nobody: {tcp_err}"))?;
        let socket = as_nobody(dir.to_str().unwrap())?;
        let socket_err = String::from_utf8_lossy(&socket.stderr);
        ensure(!socket.status.success() && socket_err.contains("Permission denied"), || {
            format!("socket as nobody: {socket_err}")
        })?;
    } else {
        println!("not checked: another OS user's access needs root (to run psql as `nobody` with runuser)");
    }

    // The owner: psql exactly as printed, and dbload through the URL printed.
    let psql =
        Command::new("sh").arg("-c").arg(format!("{connect} -Atc 'SELECT count(*) FROM measurement'")).output()?;
    let count = String::from_utf8_lossy(&psql.stdout).trim().to_owned();
    ensure(count == "1000", || format!("psql as printed: {count} {}", String::from_utf8_lossy(&psql.stderr)))?;
    // Over the Unix socket too: libpq finds the password by the socket's
    // directory (its `localhost` means its own default directory only).
    let socket = connect.replace("-h 127.0.0.1", &format!("-h {}", dir.display()));
    let psql = Command::new("sh").arg("-c").arg(format!("{socket} -w -Atc 'SELECT 1'")).output()?;
    ensure(psql.status.success(), || format!("psql over the socket: {}", String::from_utf8_lossy(&psql.stderr)))?;
    let url = line("dbload ... --url ")?;
    let url = url.trim_start_matches("dbload ... --url ").trim_matches('\'').to_owned();
    let (code, _, err) = dbload_bin(&["timeit", "--url", &url, "-s", "select 1", "--repeat", "1", "--quiet"], &[]);
    ensure(code == 0, || format!("dbload with the printed URL: exit {code}: {err}"))?;

    let (code, stdout, err) = dbload_bin(&["stop", dir.to_str().unwrap()], &[]);
    ensure(code == 0 && stdout.contains("freed"), || format!("dbload stop: exit {code}: {stdout}{err}"))?;
    ensure(!dir.exists(), || format!("{} is still there", dir.display()))?;
    // Gone (or a zombie not yet reaped, which has let go of its directory).
    let alive = std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok();
    ensure(!alive, || format!("the postmaster (pid {pid}) still runs"))?;
    // Not a server's directory: refused, and left alone.
    let (code, _, err) = dbload_bin(&["stop", tmp.path().to_str().unwrap()], &[]);
    ensure(code == 2 && err.contains("not a throwaway PostgreSQL made by dbload"), || format!("exit {code}: {err}"))?;
    ensure(tmp.path().exists(), || "dbload stop removed a directory it did not make".into())
}

/// Issue 14.2: a real password-protected login (the harness's server) with
/// the password in a PGPASSFILE or reached through a PGSERVICE, as psql finds it.
fn password_file_and_service_log_in_as_psql_would(ctx: &Ctx) -> Result<()> {
    let (url, passfile) = ctx.url.split_once("?passfile=").context("the harness URL names its password file")?;
    let home = tempfile::tempdir()?;
    let home = home.path().to_str().unwrap();
    let timeit = ["timeit", "-s", "select 1", "--repeat", "1", "--quiet"];
    let with_url = [&timeit[..], &["--url", url]].concat();
    let (code, _, err) = dbload_bin(&with_url, &[("HOME", home), ("PGPASSFILE", passfile)]);
    ensure(code == 0, || format!("PGPASSFILE: exit {code}: {err}"))?;
    // Without the file: refused, with advice that names it.
    let (code, _, err) = dbload_bin(&with_url, &[("HOME", home)]);
    ensure(code == 3 && err.contains("~/.pgpass"), || format!("no password: exit {code}: {err}"))?;
    // A service file names the server; no --url, no PGHOST.
    let port = url.rsplit(':').next().and_then(|p| p.split('/').next()).context("port")?;
    let services = format!("{home}/services.conf");
    std::fs::write(&services, format!("[bench]\nhost=127.0.0.1\nport={port}\nuser=postgres\ndbname=postgres\n"))?;
    let env = [("HOME", home), ("PGPASSFILE", passfile), ("PGSERVICEFILE", &services), ("PGSERVICE", "bench")];
    let (code, _, err) = dbload_bin(&timeit, &env);
    ensure(code == 0, || format!("PGSERVICE: exit {code}: {err}"))
}

/// Issue 14.2: no form of URL echoes its password, in any message or report.
fn no_form_of_url_echoes_its_password(_: &Ctx) -> Result<()> {
    let secret = "S3cr3tPw";
    for argv in [
        vec!["ingest", "--rows", "10", "--url", "cratedb://u:S3cr3tPw/x@127.0.0.1:1", "--output", "json"],
        vec!["ingest", "--rows", "10", "--url", "cratedb://u:S3cr3tPw?x@127.0.0.1:99999"],
        vec!["ingest", "--rows", "10", "--url", "postgres://u:S3cr3tPw/x@127.0.0.1:1/db", "--output", "json"],
        vec!["ingest", "--rows", "10", "--url", "postgres://u:S3c/r3tPw@127.0.0.1:1/db"],
        vec!["ingest", "--rows", "10", "--url", "postgres://u:S3cr3tPw?x@127.0.0.1:1/db", "--output", "json"],
        vec!["http", "ftp://u:S3cr3tPw@h"],
        vec!["http", "http://u:S3cr3tPw@/x"],
        vec!["http", "http://u:S3cr3tPw/x@127.0.0.1:1/y", "--iterations", "1"],
        vec!["http", "http://u:S3cr3tPw?x@127.0.0.1:1/y", "--iterations", "1"],
        vec!["http", "http://u:S3cr3tPw@127.0.0.1:1/y", "--iterations", "1", "--output", "json"],
    ] {
        let (code, stdout, stderr) = dbload_bin(&argv, &[]);
        ensure(code != 0, || format!("{argv:?} succeeded"))?;
        let leaked = [&stdout, &stderr].iter().any(|out| out.contains(secret) || out.contains("r3tPw"));
        ensure(!leaked, || format!("{argv:?} (exit {code}) shows the password: {stdout}{stderr}"))?;
    }
    Ok(())
}
