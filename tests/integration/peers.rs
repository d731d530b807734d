//! The command lines of the tools users come from, against the real server:
//! pgbench's -c -t -T -M -P, cr8's timeit -w, tsdbperf's --db-* flags; and
//! what installing dbload gives (shell completions).

use anyhow::{Context, Result};

use crate::support::{dbload_bin, ensure, json, refused, Ctx};
use crate::Phase::Parallel;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("peers::pgbench_flags_run_timeit_for_seconds", pgbench_flags_run_timeit_for_seconds, Parallel),
        ("peers::pgbench_t_runs_t_queries_per_client", pgbench_t_runs_t_queries_per_client, Parallel),
        ("peers::cr8_w_warms_up_before_the_measured_repeat", cr8_w_warms_up_before_the_measured_repeat, Parallel),
        ("peers::progress_lines_have_pgbench_fields", progress_lines_have_pgbench_fields, Parallel),
        ("peers::tsdbperf_db_flags_reach_the_server", tsdbperf_db_flags_reach_the_server, Parallel),
        ("peers::tsdbperf_command_line_runs_on_plain_postgres", tsdbperf_command_line_runs_on_plain_postgres, Parallel),
        ("peers::tsdbperf_run_twice_recreates_its_table", tsdbperf_run_twice_recreates_its_table, Parallel),
        ("peers::bad_counts_are_refused_naming_the_flag", bad_counts_are_refused_naming_the_flag, Parallel),
        ("peers::bash_accepts_the_completion_script", bash_accepts_the_completion_script, Parallel),
    ]
}

/// `dbload timeit ARGS --url URL --output json --quiet`: the report.
fn timeit(ctx: &Ctx, args: &[&str]) -> Result<serde_json::Value> {
    let argv = [&["timeit", "--url", &ctx.url, "--output", "json", "--quiet"], args].concat();
    let (code, stdout, stderr) = dbload_bin(&argv, &[]);
    ensure(code == 0, || format!("{argv:?}: exit {code}: {stderr}"))?;
    json(&stdout)
}

/// pgbench's `-c 4 -T 2 -M simple`: four connections for two seconds
/// (a plain number is seconds), over the simple query protocol.
fn pgbench_flags_run_timeit_for_seconds(ctx: &Ctx) -> Result<()> {
    let r = timeit(ctx, &["-c", "4", "-T", "2", "-M", "simple", "-s", "select 1"])?;
    let setup = &r["setup"];
    ensure(setup["concurrency"] == 4 && setup["protocol"] == "simple", || format!("setup {setup}"))?;
    ensure(setup["duration_limit_s"].as_f64() == Some(2.0), || format!("setup {setup}"))?;
    let wall = r["wall_s"].as_f64().unwrap_or(0.0);
    ensure((2.0..4.0).contains(&wall), || format!("ran {wall} s for -T 2"))?;
    ensure(r["count"].as_u64() > Some(0) && r["errors"] == 0, || format!("count {} errors {}", r["count"], r["errors"]))
}

/// pgbench's `-t 50 -c 2`: each of the two connections runs 50 queries,
/// 100 in all, all of them measured; the server saw exactly 100 inserts.
fn pgbench_t_runs_t_queries_per_client(ctx: &Ctx) -> Result<()> {
    ctx.query("DROP TABLE IF EXISTS peers_t; CREATE TABLE peers_t (x int)")?;
    let r = timeit(ctx, &["-t", "50", "-c", "2", "-s", "insert into peers_t values (1)"])?;
    ensure(r["count"] == 100 && r["setup"]["max_queries"] == 100, || format!("count {}", r["count"]))?;
    ensure(ctx.scalar("SELECT count(*) FROM peers_t")? == "100", || "the server has not 100 rows".into())?;
    // The same count written as pgbench users write large ones.
    let r = timeit(ctx, &["-t", "0.05k", "-c", "2", "-s", "select 1"])?;
    ensure(r["count"] == 100, || format!("-t 0.05k: count {}", r["count"]))
}

/// cr8's `-w 10 -r 100 -c 2`: 10 warm-up executions first, then the 100
/// that --repeat asks for, all measured (dbload's --warmup would take the
/// 10 out of the 100). Issue 32, item 5: exactly 10 over 4 connections too
/// (whole warm-ups per connection made it 12), and with `-t` each
/// connection still measures its N.
fn cr8_w_warms_up_before_the_measured_repeat(ctx: &Ctx) -> Result<()> {
    for (concurrency, count) in [("2", ["-r", "100"]), ("4", ["-r", "100"]), ("4", ["-t", "25"])] {
        ctx.query("DROP TABLE IF EXISTS peers_w; CREATE TABLE peers_w (x int)")?;
        let args = [&["-w", "10", "-c", concurrency, "-s", "insert into peers_w values (1)"][..], &count].concat();
        let r = timeit(ctx, &args)?;
        ensure(r["count"] == 100 && r["warmup"]["count"] == 10, || {
            format!("{args:?}: count {} warm-up {}", r["count"], r["warmup"])
        })?;
        let rows = ctx.scalar("SELECT count(*) FROM peers_w")?;
        ensure(rows == "110", || format!("{args:?}: the server has {rows} rows, not 110"))?;
    }
    Ok(())
}

/// `-P 1`: one line per second on stderr with pgbench's fields in
/// pgbench's order, then p99; `lag` under --rate; rows/s for an ingest.
fn progress_lines_have_pgbench_fields(ctx: &Ctx) -> Result<()> {
    let number = r"\d+\.\d+";
    let closed = regex::Regex::new(&format!(
        r"^progress: {number} s, {number} tps, lat \d+\.\d{{3}} ms stddev \d+\.\d{{3}}, \d+ failed, p99 \d+\.\d{{3}} ms$"
    ))?;
    let open = regex::Regex::new(&format!(
        r"^progress: {number} s, {number} tps, lat \d+\.\d{{3}} ms stddev \d+\.\d{{3}}, 0 failed, lag \d+\.\d{{3}} ms, p99 \d+\.\d{{3}} ms$"
    ))?;
    let ingest = regex::Regex::new(&format!(r"^progress: {number} s, {number} rows/s, lat \d+\.\d{{3}} ms stddev "))?;
    for (args, line) in [
        (vec!["timeit", "-P", "1", "-T", "2.5", "-c", "2", "-s", "select 1"], &closed),
        (vec!["timeit", "-P", "1", "-T", "2.5", "-R", "200", "-s", "select 1"], &open),
        (vec!["ingest", "-P", "1", "-T", "2.5", "-R", "20000", "--table", "peers_progress", "--drop-table"], &ingest),
    ] {
        let argv = [&args[..], &["--url", &ctx.url, "--output", "json"]].concat();
        let (code, stdout, stderr) = dbload_bin(&argv, &[]);
        ensure(code == 0, || format!("{args:?}: exit {code}: {stderr}"))?;
        json(&stdout)?;
        let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("progress: ")).collect();
        ensure(!lines.is_empty(), || format!("{args:?}: no progress line on stderr: {stderr}"))?;
        for l in &lines {
            ensure(line.is_match(l), || format!("{args:?}: not pgbench's form: {l}"))?;
        }
        let first: f64 = lines[0]["progress: ".len()..].split(' ').next().unwrap_or("").parse()?;
        ensure((1.0..2.0).contains(&first), || format!("{args:?}: the first line is not 1 s in: {}", lines[0]))?;
    }
    Ok(())
}

/// Issue 32: a tsdbperf command line with `--no-hypertables` runs on plain
/// PostgreSQL (where its table is plain already) and prints tsdbperf's four
/// header lines before its `Wrote` lines, `--with-jsonb` said in Setup.
fn tsdbperf_command_line_runs_on_plain_postgres(ctx: &Ctx) -> Result<()> {
    let argv = [
        "ingest",
        "--url",
        &ctx.url,
        "--quiet",
        "--workers",
        "2",
        "--devices",
        "3",
        "--measurements",
        "50",
        "--metrics",
        "4",
        "--no-hypertables",
        "--with-jsonb",
        "--table",
        "peers_tsdbperf_plain",
        "--drop-table",
    ];
    let (code, stdout, stderr) = dbload_bin(&argv, &[]);
    ensure(code == 0, || format!("{argv:?}: exit {code}: {stderr}"))?;
    let header = "Number of workers:       2\nDevices per worker:      3\nMetrics per device:      4\n\
                  Measurements per device: 50\nWrote       300 measurements in ";
    ensure(stdout.contains(header), || format!("no tsdbperf header before its Wrote lines:\n{stdout}"))?;
    ensure(stdout.contains("(3 devices/worker, 4 metrics/row as jsonb)"), || format!("no jsonb in Setup:\n{stdout}"))?;
    let rows = ctx.scalar("SELECT count(*) FROM peers_tsdbperf_plain")?;
    ensure(rows == "300", || format!("{rows} rows in the table, not 2 workers × 3 devices × 50"))
}

/// tsdbperf drops and recreates its table at every start, so its users run
/// the same command line again and again: the second run of a tsdbperf
/// command line must not stop on "table already exists", and the table
/// then holds the second run's rows alone. `--append` keeps the rows.
fn tsdbperf_run_twice_recreates_its_table(ctx: &Ctx) -> Result<()> {
    let table = "peers_tsdbperf_again";
    let argv = ["ingest", "--url", &ctx.url, "--quiet", "--workers", "2", "--devices", "2", "--measurements", "25"];
    let argv = [&argv[..], &["--metrics", "3", "--table", table]].concat();
    for run in ["first", "second"] {
        let (code, _, stderr) = dbload_bin(&argv, &[]);
        ensure(code == 0, || format!("the {run} run: exit {code}: {stderr}"))?;
        let rows = ctx.scalar(&format!("SELECT count(*) FROM {table}"))?;
        ensure(rows == "100", || format!("after the {run} run: {rows} rows, not 2 workers × 2 devices × 25"))?;
    }
    let (code, _, stderr) = dbload_bin(&[&argv[..], &["--append", "--start", "2020-01-01T00:00:00Z"]].concat(), &[]);
    ensure(code == 0, || format!("--append: exit {code}: {stderr}"))?;
    let rows = ctx.scalar(&format!("SELECT count(*) FROM {table}"))?;
    ensure(rows == "200", || format!("--append: {rows} rows, not 200"))
}

/// tsdbperf's `--db-host --db-user --db-password --db-name` name the
/// harness's server (its port from PGPORT: tsdbperf itself always used
/// 5432); the rows land there, and the password shows nowhere.
fn tsdbperf_db_flags_reach_the_server(ctx: &Ctx) -> Result<()> {
    let (port, password) = port_and_password(ctx)?;
    let argv = [
        "ingest",
        "--db-host",
        "127.0.0.1",
        "--db-user",
        "postgres",
        "--db-password",
        &password,
        "--db-name",
        "postgres",
        "--rows",
        "2.5k",
        "-c",
        "2",
        "--table",
        "peers_tsdbperf",
        "--drop-table",
        "--output",
        "json",
    ];
    let (code, stdout, stderr) = dbload_bin(&argv, &[("PGPORT", &port)]);
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    let r = json(&stdout)?;
    ensure(r["rows"] == 2500, || format!("rows {}", r["rows"]))?;
    ensure(ctx.scalar("SELECT count(*) FROM peers_tsdbperf")? == "2500", || "the server has not 2500 rows".into())?;
    ensure(!stdout.contains(&password) && !stderr.contains(&password), || "the password was printed".into())?;
    let command_line = r["run"]["command_line"].as_str().unwrap_or_default();
    ensure(command_line.contains("--db-password '***'"), || format!("command line: {command_line}"))?;
    // Without PGPORT: tsdbperf's port, 5432, where no server listens here.
    let (code, _, stderr) = dbload_bin(&argv, &[]);
    ensure(code == 3 && stderr.contains("5432") && !stderr.contains(&password), || format!("exit {code}: {stderr}"))
}

/// The harness server's port and password (from its password file, as the
/// URL's `passfile` names it).
fn port_and_password(ctx: &Ctx) -> Result<(String, String)> {
    let port = ctx.url.split("127.0.0.1:").nth(1).and_then(|rest| rest.split('/').next()).context("port")?;
    let passfile = ctx.url.split("passfile=").nth(1).context("passfile")?.split('&').next().context("passfile")?;
    let text = std::fs::read_to_string(passfile)?;
    let line = text.lines().find(|l| l.starts_with(&format!("127.0.0.1:{port}:"))).context("127.0.0.1 line")?;
    let password = line.rsplit(':').next().context("password")?;
    Ok((port.to_string(), password.to_string()))
}

/// A count that is not a whole number, or is negative, is refused naming
/// its flag (exit 2, nothing run).
fn bad_counts_are_refused_naming_the_flag(ctx: &Ctx) -> Result<()> {
    refused(&["ingest", "--url", &ctx.url, "--rows", "1.5"], "'--rows <N>': 1.5 is not a whole number")?;
    refused(&["ingest", "--url", &ctx.url, "--rows", "-3"], "'--rows <N>': -3 is negative")?;
    refused(&["ingest", "--url", &ctx.url, "--rows", "1e30"], "'--rows <N>': 1e30 is too large")?;
    refused(&["timeit", "--url", &ctx.url, "-t", "2.5", "-s", "select 1"], "'--transactions <N>'")?;
    refused(&["timeit", "--url", &ctx.url, "-t", "0", "-s", "select 1"], "--transactions 0 (-t)")?;
    refused(&["workload", "x.yml", "--url", &ctx.url, "--max-queries", "ten"], "'--max-queries <N>'")?;
    refused(&["http", "http://127.0.0.1:1/", "--iterations", "1.5"], "'--iterations <N>'")
}

/// `dbload completions bash` prints a script that bash parses.
fn bash_accepts_the_completion_script(_: &Ctx) -> Result<()> {
    let (code, script, stderr) = dbload_bin(&["completions", "bash"], &[]);
    ensure(code == 0 && script.contains("_dbload()") && script.contains("--transactions"), || {
        format!("exit {code}: {stderr}")
    })?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("dbload.bash");
    std::fs::write(&path, &script)?;
    let check = std::process::Command::new("bash").arg("-n").arg(&path).output().context("running bash -n")?;
    ensure(check.status.success(), || format!("bash -n: {}", String::from_utf8_lossy(&check.stderr)))
}
