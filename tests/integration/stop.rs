//! Runs that stop: before the measured phase when a query can never
//! succeed (issue 13 item 5), and at the deadline or on Ctrl-C with the
//! statements still running cancelled on the server (item 9).

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::support::{dbload_bin, ensure, write_file, Ctx};
use crate::Phase::Parallel;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("stop::timeit_statement_that_cannot_be_prepared_exits_2_before_the_run", unpreparable_timeit, Parallel),
        ("stop::workload_query_that_cannot_be_prepared_exits_2_before_the_run", unpreparable_workload, Parallel),
        ("stop::mixed_run_query_that_cannot_be_prepared_exits_2", unpreparable_mixed_run, Parallel),
        ("stop::workload_parameter_the_statement_cannot_take_exits_2_before_the_run", untakeable_parameter, Parallel),
        ("stop::statement_running_at_the_deadline_is_cancelled_on_the_server", cancelled_at_the_deadline, Parallel),
        ("stop::statement_running_at_ctrl_c_is_cancelled_on_the_server", cancelled_at_ctrl_c, Parallel),
        ("stop::export_copy_running_at_ctrl_c_is_cancelled_on_the_server", export_cancelled_at_ctrl_c, Parallel),
    ]
}

/// Runs the binary; checks exit 2 well within the 30 s the run asked for,
/// nothing on stdout, and every one of `needles` on stderr.
fn refused_quickly(argv: &[&str], needles: &[&str]) -> Result<()> {
    let t = Instant::now();
    let (code, stdout, stderr) = dbload_bin(argv, &[]);
    let took = t.elapsed();
    let what = || format!("{argv:?}: exit {code} after {took:?}\nstderr: {stderr}\nstdout: {stdout}");
    ensure(code == 2 && stdout.is_empty() && took < Duration::from_secs(5), what)?;
    ensure(needles.iter().all(|n| stderr.contains(n)), what)
}

fn unpreparable_timeit(ctx: &Ctx) -> Result<()> {
    // The README's example on a database without its table.
    let sql = "select max(m1) from no_such_measurement where device_id = 3";
    let run = ["timeit", "--url", &ctx.url, "-s", sql, "--duration", "30s"];
    refused_quickly(&run, &[sql, "relation \"no_such_measurement\" does not exist", "42P01"])?;
    // Each protocol; a bad second statement stops the run before the first is measured.
    for protocol in ["simple", "extended", "prepared"] {
        let argv = ["timeit", "--url", &ctx.url, "-s", "select 1", "-s", "selec 2", "--duration", "30s"];
        let argv = [&argv[..], &["--protocol", protocol]].concat();
        refused_quickly(&argv, &["query s2", "selec 2", "syntax error", "42601"])?;
    }
    Ok(())
}

fn unpreparable_workload(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let no_params = write_file(
        &dir,
        "no_params.yml",
        "- name: ok\n  query: select 1\n  ratio: 0.5\n- name: by_device\n  query: select $1::int\n  ratio: 0.5\n",
    )?;
    let no_column =
        write_file(&dir, "no_column.yml", "- name: cols\n  query: select no_such_column from pg_class\n  ratio: 1\n")?;
    for protocol in ["simple", "extended", "prepared"] {
        let argv = ["workload", &no_params, "--url", &ctx.url, "--duration", "30s", "--protocol", protocol];
        refused_quickly(&argv, &["query by_device", "1 placeholder(s)", "0 parameter(s)"])?;
        let argv = ["workload", &no_column, "--url", &ctx.url, "--duration", "30s", "--protocol", protocol];
        refused_quickly(&argv, &["query cols", "no_such_column", "does not exist"])?;
    }
    Ok(())
}

/// Issue 29, item 7: a parameter whose values the prepared statement's
/// type cannot take (a float for an int4, a range past an int2) failed every
/// query, or some, at run time; it is refused before the run, naming the
/// query and the parameter. The simple protocol splices literals, which the
/// server casts, so there the same file runs.
fn untakeable_parameter(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let file = |name: &str, query: &str, params: &str| {
        write_file(&dir, name, &format!("- name: q\n  query: {query}\n  ratio: 1\n  params: [{params}]\n"))
    };
    let float = file("float.yml", "select $1::text, $2::int4 + 1", "{int: [1, 5]}, {float: [0.5, 1.5]}")?;
    let wide = file("wide.yml", "select $1::int2", "{int: [1, 100000]}")?;
    let text = file("text.yml", "select $1::int4 + 1", "{choice: [1, '2', abc]}")?;
    for protocol in ["extended", "prepared"] {
        let argv = ["workload", &text, "--url", &ctx.url, "--duration", "30s", "--protocol", protocol];
        refused_quickly(&argv, &["query q", "parameter $1", "\"abc\"", "integer"])?;
        let argv = ["workload", &float, "--url", &ctx.url, "--duration", "30s", "--protocol", protocol];
        refused_quickly(&argv, &["query q", "parameter $2", "a float", "int4"])?;
        let argv = ["workload", &wide, "--url", &ctx.url, "--duration", "30s", "--protocol", protocol];
        refused_quickly(&argv, &["query q", "parameter $1", "100000", "int2"])?;
    }
    let simple = ["workload", &wide, "--url", &ctx.url, "--max-queries", "5", "--protocol", "simple", "--quiet"];
    let (code, _, stderr) = dbload_bin(&[&simple[..], &["--no-results"]].concat(), &[]);
    ensure(code == 1, || format!("simple protocol: exit {code}: {stderr}"))?;
    Ok(())
}

fn unpreparable_mixed_run(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mixed = write_file(
        &dir,
        "mixed.yml",
        "duration: 30s\ningest:\n  table: stop_mixed\n  drop_table: true\n  workers: 1\n  rate: 1000\n\
         workloads:\n  - name: reads\n    queries:\n      - name: latest\n        query: select max(no_such) from stop_mixed\n        ratio: 1\n",
    )?;
    refused_quickly(&["run", &mixed, "--url", &ctx.url], &["query latest", "no_such", "does not exist"])
}

/// Statements still running on the server whose text is `sql`.
fn running(ctx: &Ctx, sql: &str) -> Result<u64> {
    // `sql` alone (timeit) or inside the statement that runs it (export's COPY).
    let q = format!(
        "SELECT count(*) FROM pg_stat_activity WHERE position('{sql}' in query) > 0 AND state = 'active' \
         AND pid <> pg_backend_pid()"
    );
    Ok(ctx.scalar(&q)?.parse()?)
}

/// Waits up to 2 s for the server to have stopped running `sql`.
pub(crate) fn stopped_on_the_server(ctx: &Ctx, sql: &str) -> Result<()> {
    let t = Instant::now();
    while running(ctx, sql)? > 0 {
        ensure(t.elapsed() < Duration::from_secs(2), || format!("`{sql}` still runs on the server"))?;
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// The query still running 5 s (GRACE) after the end is reported as interrupted and cancelled.
fn reported_cancelled(stdout: &str) -> Result<()> {
    let r: serde_json::Value = serde_json::from_str(stdout).with_context(|| stdout.to_string())?;
    let class = &r["error_classes"][0];
    ensure(r["error_classes"].as_array().map(Vec::len) == Some(1) && class["count"] == 1, || stdout.to_string())?;
    ensure(class["class"] == "interrupted", || stdout.to_string())?;
    ensure(class["example"].as_str().is_some_and(|e| e.contains("cancelled")), || stdout.to_string())
}

fn cancelled_at_the_deadline(ctx: &Ctx) -> Result<()> {
    let sql = "select pg_sleep(20.01)";
    let t = Instant::now();
    let (code, stdout, stderr) =
        dbload_bin(&["timeit", "--url", &ctx.url, "-s", sql, "--duration", "2s", "--output", "json"], &[]);
    let took = t.elapsed();
    // 2 s, then 5 s of grace, then the cancel: well before the 20 s of the statement.
    ensure(took < Duration::from_secs(10), || format!("took {took:?}"))?;
    ensure(code == 1, || format!("exit {code}: {stderr}"))?;
    reported_cancelled(&stdout)?;
    stopped_on_the_server(ctx, sql)
}

fn cancelled_at_ctrl_c(ctx: &Ctx) -> Result<()> {
    let sql = "select pg_sleep(20.02)";
    interrupted_while_running(
        ctx,
        sql,
        &["timeit", "--url", &ctx.url, "-s", sql, "--duration", "60s", "--output", "json"],
    )
}

/// An export's COPY whose first row is 20 s away: Ctrl-C, the grace, then
/// the COPY is cancelled on the server (it went on producing rows for
/// nobody until it next wrote to the closed socket).
fn export_cancelled_at_ctrl_c(ctx: &Ctx) -> Result<()> {
    let sql = "select pg_sleep(20.03)";
    let out = tempfile::tempdir()?;
    let dir = out.path().to_str().context("a temporary path")?;
    interrupted_while_running(
        ctx,
        sql,
        &["export", "--url", &ctx.url, "--query", sql, "--out", dir, "--output", "json"],
    )
}

/// Runs the binary with `argv` until `sql` runs on the server, sends Ctrl-C,
/// and checks that it stops within the grace with exit 130, reports the
/// operation cut off as interrupted and cancelled, and leaves nothing running.
fn interrupted_while_running(ctx: &Ctx, sql: &str, argv: &[&str]) -> Result<()> {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    use std::io::Read as _;
    use std::process::Stdio;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(argv)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    // Until the statement runs.
    let t = Instant::now();
    while running(ctx, sql)? == 0 {
        ensure(t.elapsed() < Duration::from_secs(10), || "the statement never started".into())?;
        std::thread::sleep(Duration::from_millis(50));
    }
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT)?;
    let t = Instant::now();
    let status = child.wait()?;
    let took = t.elapsed();
    let mut stdout = String::new();
    child.stdout.take().context("stdout")?.read_to_string(&mut stdout)?;
    ensure(took < Duration::from_secs(10), || format!("took {took:?} to stop"))?;
    ensure(status.code() == Some(130), || format!("exit {status:?}"))?;
    reported_cancelled(&stdout)?;
    stopped_on_the_server(ctx, sql)
}
