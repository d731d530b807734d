//! The real binary: exit codes, messages, Ctrl-C, the throwaway default
//! target, dry runs, the JSON contract and the HTML report.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::support::{dbload_bin, ensure, entries, interrupted, private_tmp, refused, Ctx};
use crate::Test;

pub fn tests() -> Vec<(&'static str, Test)> {
    vec![
        ("cli::bad_input_exits_2_naming_the_option", bad_input_exits_2_naming_the_option),
        ("cli::unreachable_target_exits_3", unreachable_target_exits_3),
        ("cli::ctrl_c_prints_a_partial_report_and_exits_130", ctrl_c_prints_a_partial_report_and_exits_130),
        ("cli::throwaway_server_is_started_and_removed", throwaway_server_is_started_and_removed),
        (
            "cli::sigterm_stops_cleanly_and_removes_the_throwaway_server",
            sigterm_stops_cleanly_and_removes_the_throwaway_server,
        ),
        ("cli::sigterm_during_startup_still_cleans_up", sigterm_during_startup_still_cleans_up),
        ("cli::dry_run_touches_no_database", dry_run_touches_no_database),
        ("cli::json_report_matches_its_schema", json_report_matches_its_schema),
        ("cli::passwords_are_never_printed", passwords_are_never_printed),
        ("cli::html_report_is_one_file_with_charts", html_report_is_one_file_with_charts),
    ]
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
            validator.iter_errors(&report).map(|e| format!("{} at {}", e, e.instance_path)).collect();
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
