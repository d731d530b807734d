//! timeit and workload against the real server: counts, percentiles, shares
//! converging to the ratios, the seed's queries.yml, failures counted,
//! plans captured, --fail-if exit codes.

use std::io::Write as _;

use anyhow::{Context, Result};

use crate::support::{dbload_bin, ensure, json, write_file, Ctx};
use crate::Phase::{Parallel, Quiet};
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("queries::timeit_counts_and_percentiles", timeit_counts_and_percentiles, Parallel),
        (
            "queries::several_statements_in_one_query_are_the_simple_protocols",
            several_statements_in_one_query_are_the_simple_protocols,
            Parallel,
        ),
        ("queries::timeit_reads_statements_from_stdin", timeit_reads_statements_from_stdin, Parallel),
        (
            "queries::timeit_keeps_dollar_quotes_and_comments_whole",
            timeit_keeps_dollar_quotes_and_comments_whole,
            Parallel,
        ),
        ("queries::timeit_protocols", timeit_protocols, Parallel),
        ("queries::timeit_memory_does_not_grow_per_statement", timeit_memory_does_not_grow_per_statement, Parallel),
        ("queries::workload_shares_converge_to_ratios", workload_shares_converge_to_ratios, Parallel),
        ("queries::seed_queries_yml_runs_unchanged", seed_queries_yml_runs_unchanged, Parallel),
        (
            "queries::bad_workload_files_exit_2_naming_file_and_line",
            bad_workload_files_exit_2_naming_file_and_line,
            Parallel,
        ),
        ("queries::failing_query_is_counted_not_fatal", failing_query_is_counted_not_fatal, Parallel),
        (
            "queries::a_query_that_always_fails_stops_the_run_after_the_sustained_stretch",
            a_query_that_always_fails_stops_the_run_after_the_sustained_stretch,
            Parallel,
        ),
        ("queries::explain_captures_a_plan", explain_captures_a_plan, Parallel),
        ("queries::fail_if_sets_the_exit_code", fail_if_sets_the_exit_code, Parallel),
        ("queries::open_loop_holds_the_rate", open_loop_holds_the_rate, Quiet),
        ("queries::query_reports_match_their_schema", query_reports_match_their_schema, Parallel),
        (
            "queries::mixed_run_reports_ingest_and_queries_side_by_side",
            mixed_run_reports_ingest_and_queries_side_by_side,
            Parallel,
        ),
        ("queries::bad_mixed_files_exit_2_naming_file_and_line", bad_mixed_files_exit_2_naming_file_and_line, Parallel),
    ]
}

fn timeit_counts_and_percentiles(ctx: &Ctx) -> Result<()> {
    let (code, stdout, stderr) = dbload_bin(
        &["timeit", "--url", &ctx.url, "-s", "select pg_sleep(0.002)", "-s", "select 1", "--repeat", "200"],
        &[],
    );
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    ensure(stdout.contains("Runtime (in ms):") && stdout.contains("99.9:") && stdout.contains("queries/s"), || {
        stdout.clone()
    })?;
    let (code, stdout, _) = dbload_bin(
        &[
            "timeit",
            "--url",
            &ctx.url,
            "-s",
            "select pg_sleep(0.002)",
            "--repeat",
            "200",
            "--concurrency",
            "4",
            "--warmup",
            "20",
            "--output",
            "json",
        ],
        &[],
    );
    let r = json(&stdout)?;
    // The warm-up is the first 20 of the 200.
    ensure(code == 0 && r["count"] == 180 && r["queries"][0]["count"] == 180, || stdout.clone())?;
    ensure(r["warmup"]["count"] == 20, || format!("warm-up: {}", r["warmup"]))?;
    // pg_sleep(0.002): no execution is faster than 2 ms.
    let min = r["latency_ms"]["min"].as_f64().unwrap_or(0.0);
    let (p50, p99) = (r["latency_ms"]["p50"].as_f64().unwrap(), r["latency_ms"]["p99"].as_f64().unwrap());
    ensure(min >= 2.0 && p50 >= min && p99 >= p50, || format!("latency {}", r["latency_ms"]))
}

fn timeit_reads_statements_from_stdin(ctx: &Ctx) -> Result<()> {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(["timeit", "--url", &ctx.url, "--repeat", "10", "--output", "json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    child.stdin.take().unwrap().write_all(b"-- two statements\nselect 1;\nselect 'a;b' -- comment\n;")?;
    let out = child.wait_with_output()?;
    let r = json(&String::from_utf8_lossy(&out.stdout))?;
    ensure(out.status.success() && r["queries"].as_array().map(|q| q.len()) == Some(2), || r.to_string())?;
    ensure(r["queries"][1]["query"] == "select 'a;b'", || r["queries"].to_string())
}

/// Issue 29, item 8: a `DO $$ ... ; ... $$` block read from stdin was cut
/// at its inner `;` (two broken statements, every execution failed), and
/// so was one in a pgbench script (`-f`). Statements are cut where
/// PostgreSQL ends them: not inside a dollar quote, an `E'\''` string or
/// a `/* ; */` comment.
fn timeit_keeps_dollar_quotes_and_comments_whole(ctx: &Ctx) -> Result<()> {
    const DO: &str = "DO $$ BEGIN PERFORM 1; PERFORM 2; END $$";
    const BODY: &str = "DO $body$ BEGIN PERFORM ';'; END $body$";
    const ESCAPED: &str = "select E'it\\'s; fine' /* a; /* nested; */ comment */";
    let script = format!("{DO};\n{BODY};\n{ESCAPED};\n");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(["timeit", "--url", &ctx.url, "--repeat", "6", "--output", "json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    child.stdin.take().context("stdin")?.write_all(script.as_bytes())?;
    let out = child.wait_with_output()?;
    let r = json(&String::from_utf8_lossy(&out.stdout))
        .with_context(|| String::from_utf8_lossy(&out.stderr).into_owned())?;
    let queries: Vec<&str> =
        r["queries"].as_array().context("queries")?.iter().filter_map(|q| q["query"].as_str()).collect();
    ensure(queries == [DO, BODY, ESCAPED], || format!("stdin cut into {queries:?}"))?;
    ensure(out.status.success() && r["errors"] == 0, || format!("errors: {}", r["error_classes"]))?;

    let dir = tempfile::tempdir()?;
    let file = write_file(&dir, "do.sql", &script)?;
    let (code, stdout, stderr) =
        dbload_bin(&["timeit", "--url", &ctx.url, "-f", &file, "--repeat", "3", "-r", "--output", "json"], &[]);
    ensure(code == 0, || format!("-f: exit {code}: {stderr}"))?;
    let r = json(&stdout)?;
    let statements = r["queries"][0]["statements"].as_array().context("statements")?;
    let texts: Vec<&str> = statements.iter().filter_map(|s| s["statement"].as_str()).collect();
    ensure(texts == [DO, BODY, ESCAPED], || format!("-f cut into {texts:?}"))?;
    ensure(r["errors"] == 0, || format!("-f errors: {}", r["error_classes"]))
}

fn timeit_protocols(ctx: &Ctx) -> Result<()> {
    for protocol in ["simple", "extended", "prepared"] {
        let (code, stdout, stderr) = dbload_bin(
            &[
                "timeit",
                "--url",
                &ctx.url,
                "-s",
                "select count(*) from pg_class",
                "--repeat",
                "50",
                "--protocol",
                protocol,
                "--output",
                "json",
            ],
            &[],
        );
        ensure(code == 0 && json(&stdout)?["count"] == 50, || format!("{protocol}: exit {code} {stderr} {stdout}"))?;
    }
    Ok(())
}

/// timeit runs each statement as a phase of its own. Each finished phase
/// once kept its recorders (six histograms, ~100 KiB) until the report:
/// 300 statements then peaked ~31 MiB above one (debug build); a phase's
/// summary makes it ~1 MiB. The allowance (20 KiB each) covers allocator noise.
fn timeit_memory_does_not_grow_per_statement(ctx: &Ctx) -> Result<()> {
    let peak_rss_mib = |statements: usize| -> Result<f64> {
        let stmts: Vec<String> = (1..=statements).map(|i| format!("select {i} as c{i}")).collect();
        let mut args = vec!["timeit", "--url", &ctx.url, "--repeat", "2", "--output", "json"];
        stmts.iter().for_each(|s| args.extend(["-s", s]));
        let (code, stdout, stderr) = dbload_bin(&args, &[]);
        ensure(code == 0, || format!("{statements} statements: exit {code}: {stderr}"))?;
        let r = json(&stdout)?;
        ensure(r["count"].as_u64() == Some(2 * statements as u64), || format!("count {}", r["count"]))?;
        r["client_peak_rss_mib"].as_f64().context("client_peak_rss_mib")
    };
    let (one, many) = (peak_rss_mib(1)?, peak_rss_mib(300)?);
    let per_statement_kib = (many - one) * 1024.0 / 299.0;
    ensure(per_statement_kib < 20.0, || {
        format!("peak RSS {one:.1} MiB for 1 statement, {many:.1} MiB for 300: {per_statement_kib:.1} KiB each")
    })
}

fn workload_shares_converge_to_ratios(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let file = write_file(
        &dir,
        "mix.yml",
        "- name: heavy\n  query: select $1::int + 1\n  ratio: 0.7\n  params: [{int: [1, 80]}]\n\
         - name: medium\n  query: select $1::text\n  ratio: 0.2\n  params: [{choice: [a, b]}]\n\
         - name: light\n  query: select 1\n  ratio: 0.1\n",
    )?;
    let (code, stdout, stderr) = dbload_bin(
        &[
            "workload",
            &file,
            "--url",
            &ctx.url,
            "--max-queries",
            "3000",
            "--concurrency",
            "4",
            "--seed",
            "7",
            "--output",
            "json",
        ],
        &[],
    );
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    let r = json(&stdout)?;
    ensure(r["count"] == 3000 && r["errors"] == 0, || stdout.clone())?;
    for q in r["queries"].as_array().context("queries[]")? {
        let (ratio, share) = (q["ratio"].as_f64().unwrap(), q["share"].as_f64().unwrap());
        ensure((ratio - share).abs() <= 0.03, || format!("{}: ratio {ratio} share {share}", q["name"]))?;
        for field in ["name", "count", "errors", "qps"] {
            ensure(!q[field].is_null(), || format!("queries[].{field} missing"))?;
        }
        for field in ["mean", "p50", "p95", "p99", "max"] {
            ensure(q["latency_ms"][field].is_number(), || format!("latency_ms.{field} missing"))?;
        }
    }
    Ok(())
}

fn seed_queries_yml_runs_unchanged(ctx: &Ctx) -> Result<()> {
    // nodeIngestBench's README (seed 001), the one-query file, as it is.
    let dir = tempfile::tempdir()?;
    let file = write_file(&dir, "queries.yml", "---\n  - query: |\n      SELECT 1\n      ORDER BY 1\n    ratio: 1\n")?;
    let (code, stdout, stderr) =
        dbload_bin(&["workload", &file, "--url", &ctx.url, "--concurrency", "10", "--max-queries", "500"], &[]);
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    ensure(stdout.contains("total") && stdout.contains("500"), || stdout.clone())
}

fn bad_workload_files_exit_2_naming_file_and_line(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    // The seed's own two-query example, with its `ration` typo on line 9.
    let typo = write_file(
        &dir,
        "typo.yml",
        "---\n  - query: |\n      SELECT 1\n      ORDER BY 1\n    ratio: 0.4\n  - query: |\n      SELECT 2\n      ORDER BY 1\n    ration: 0.6\n",
    )?;
    let bad_sum = write_file(&dir, "sum.yml", "- query: select 1\n  ratio: 0.5\n- query: select 2\n  ratio: 0.4\n")?;
    for (file, needles) in [(&typo, vec!["typo.yml", ":9", "ratio"]), (&bad_sum, vec!["sum.yml", "0.9"])] {
        let (code, stdout, stderr) = dbload_bin(&["workload", file, "--url", &ctx.url, "--max-queries", "10"], &[]);
        ensure(code == 2 && stdout.is_empty(), || format!("{file}: exit {code}: {stderr}"))?;
        for n in needles {
            ensure(stderr.contains(n), || format!("{file}: message lacks {n:?}: {stderr}"))?;
        }
    }
    let (code, _, stderr) =
        dbload_bin(&["workload", "/nonexistent/q.yml", "--url", &ctx.url, "--max-queries", "1"], &[]);
    ensure(code == 2 && stderr.contains("/nonexistent/q.yml"), || format!("exit {code}: {stderr}"))
}

/// A query of several statements runs over the simple protocol, which
/// the server cannot prepare ("cannot insert multiple commands", told by
/// its code and the missing position, not its wording); a syntax error
/// in one of them is still refused before the run (exit 2), as are
/// several statements over the extended protocol.
fn several_statements_in_one_query_are_the_simple_protocols(ctx: &Ctx) -> Result<()> {
    let run = |protocol: &str, sql: &str| {
        dbload_bin(&["timeit", "--url", &ctx.url, "-M", protocol, "-t", "20", "-s", sql, "--quiet"], &[])
    };
    let (code, _, stderr) = run("simple", "select 1; select 2");
    ensure(code == 0, || format!("several statements, simple: exit {code}: {stderr}"))?;
    let (code, _, stderr) = run("simple", "select 1; selec 2");
    ensure(code == 2 && stderr.contains("SQLSTATE 42601"), || {
        format!("a syntax error, simple: exit {code}: {stderr}")
    })?;
    let (code, _, stderr) = run("prepared", "select 1; select 2");
    ensure(code == 2 && stderr.contains("SQLSTATE 42601"), || {
        format!("several statements, prepared: exit {code}: {stderr}")
    })
}

fn failing_query_is_counted_not_fatal(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let file = write_file(
        &dir,
        "failing.yml",
        "- name: ok\n  query: select 1\n  ratio: 0.5\n- name: broken\n  query: select 1 / 0\n  ratio: 0.5\n",
    )?;
    let (code, stdout, stderr) = dbload_bin(
        &["workload", &file, "--url", &ctx.url, "--max-queries", "200", "--protocol", "simple", "--output", "json"],
        &[],
    );
    let r = json(&stdout).with_context(|| stderr.clone())?;
    ensure(code == 1 && r["status"] == "failed", || format!("exit {code}: {stdout}"))?;
    let broken = &r["queries"][1];
    let ok = &r["queries"][0];
    ensure(broken["errors"].as_u64() > Some(50) && ok["count"].as_u64() > Some(50), || r["queries"].to_string())?;
    ensure(broken["error_classes"][0]["class"] == "SQLSTATE 22012", || broken.to_string())?;
    ensure(r["count"].as_u64().unwrap() + r["errors"].as_u64().unwrap() == 200, || "count + errors != 200".into())
}

/// Issue 13 item 5: a statement that prepares fine but fails at every
/// execution does not spin for the whole --duration: the run stops after
/// 1,000 failures in a row over 5 s, says why in every report, exits 1.
fn a_query_that_always_fails_stops_the_run_after_the_sustained_stretch(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (json_file, html_file) = (dir.path().join("r.json"), dir.path().join("r.html"));
    let started = std::time::Instant::now();
    // random() keeps the division from being folded at plan time: it fails when executed.
    let (code, stdout, stderr) = dbload_bin(
        &[
            "timeit",
            "--url",
            &ctx.url,
            "-s",
            "select 1 / (random() * 0)::int",
            "--duration",
            "30s",
            "--report",
            json_file.to_str().unwrap(),
            "--html",
            html_file.to_str().unwrap(),
        ],
        &[],
    );
    let took = started.elapsed();
    ensure(code == 1, || format!("exit {code}: {stdout}{stderr}"))?;
    ensure(took < std::time::Duration::from_secs(20), || format!("ran {took:?} of its 30 s: {stdout}"))?;
    let stopped = "operations over";
    ensure(stdout.starts_with("STOPPED: the last ") && stdout.contains(stopped), || stdout.clone())?;
    ensure(stdout.contains("all failed: SQLSTATE 22012: division by zero"), || stdout.clone())?;
    let r = json(&std::fs::read_to_string(&json_file)?)?;
    ensure(r["status"] == "failed" && r["exit_code"] == 1, || r.to_string())?;
    ensure(r["stopped"].as_str().is_some_and(|s| s.contains(stopped)), || r.to_string())?;
    let schema: serde_json::Value = serde_json::from_str(include_str!("../../schema/query-report.schema.json"))?;
    let validator = jsonschema::validator_for(&schema).context("compiling the schema")?;
    let errors: Vec<String> = validator.iter_errors(&r).map(|e| format!("{e} at {}", e.instance_path())).collect();
    ensure(errors.is_empty(), || format!("{errors:#?}"))?;
    let html = std::fs::read_to_string(&html_file)?;
    ensure(html.contains("Stopped: the last "), || "no banner in the HTML".into())
}

fn explain_captures_a_plan(ctx: &Ctx) -> Result<()> {
    for (mode, timed) in [("--explain", true), ("--explain=plan", false)] {
        let (code, stdout, stderr) = dbload_bin(
            &[
                "timeit",
                "--url",
                &ctx.url,
                "-s",
                "select count(*) from pg_class where relpages >= 0",
                "--repeat",
                "5",
                mode,
                "--output",
                "json",
            ],
            &[],
        );
        ensure(code == 0, || format!("{mode}: exit {code}: {stderr}"))?;
        let e = &json(&stdout)?["queries"][0]["explain"];
        ensure(e["top_node"] == "Aggregate" && e["plan"][0]["Plan"].is_object(), || format!("{mode}: {e}"))?;
        ensure(e["execution_ms"].is_number() == timed, || format!("{mode}: execution time {}", e["execution_ms"]))?;
    }
    // A write under ANALYZE is rolled back.
    ctx.query("CREATE TABLE IF NOT EXISTS explain_writes (x int)")?;
    let (code, _, stderr) = dbload_bin(
        &[
            "timeit",
            "--url",
            &ctx.url,
            "-s",
            "select 1",
            "-s",
            "insert into explain_writes values (1)",
            "--repeat",
            "1",
            "--explain",
        ],
        &[],
    );
    ensure(code == 0, || stderr.clone())?;
    let n = ctx.scalar("SELECT count(*) FROM explain_writes")?;
    ensure(n == "1", || format!("{n} rows: the EXPLAIN ANALYZE insert was not rolled back"))
}

fn fail_if_sets_the_exit_code(ctx: &Ctx) -> Result<()> {
    let base = ["timeit", "--url", ctx.url.as_str(), "-s", "select 1", "--repeat", "20", "--output", "json"];
    let run = |cond: &str| {
        let mut args = base.to_vec();
        args.extend(["--fail-if", cond]);
        dbload_bin(&args, &[])
    };
    let (code, stdout, _) = run("p99_ms > 100000");
    ensure(code == 0 && json(&stdout)?["fail_if"][0]["held"] == false, || stdout.clone())?;
    let (code, stdout, _) = run("count >= 20");
    ensure(code == 1 && json(&stdout)?["fail_if"][0]["held"] == true, || format!("exit {code}: {stdout}"))?;
    let (code, _, stderr) = run("p99_ms >> 5");
    ensure(code == 2 && stderr.contains("--fail-if"), || format!("exit {code}: {stderr}"))?;
    // Ingest takes it too.
    let (code, stdout, _) = dbload_bin(
        &[
            "ingest",
            "--url",
            &ctx.url,
            "--rows",
            "1000",
            "--table",
            "fail_if_ingest",
            "--drop-table",
            "--fail-if",
            "rows_per_sec < 1000000000",
            "--output",
            "json",
        ],
        &[],
    );
    ensure(code == 1 && json(&stdout)?["status"] == "failed", || format!("exit {code}: {stdout}"))
}

fn open_loop_holds_the_rate(ctx: &Ctx) -> Result<()> {
    let (code, stdout, stderr) = dbload_bin(
        &[
            "timeit",
            "--url",
            &ctx.url,
            "-s",
            "select 1",
            "--rate",
            "200",
            "--duration",
            "3s",
            "--concurrency",
            "2",
            "--output",
            "json",
        ],
        &[],
    );
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    let r = json(&stdout)?;
    let qps = r["qps"].as_f64().unwrap_or(0.0);
    ensure((qps - 200.0).abs() <= 20.0, || format!("{qps} queries/s at --rate 200"))?;
    ensure(r["schedule_lag_ms"].is_object() && r["service_time_ms"].is_object(), || stdout.clone())
}

fn query_reports_match_their_schema(ctx: &Ctx) -> Result<()> {
    let schema: serde_json::Value = serde_json::from_str(include_str!("../../schema/query-report.schema.json"))?;
    let validator = jsonschema::validator_for(&schema).context("compiling the schema")?;
    let dir = tempfile::tempdir()?;
    let file = write_file(&dir, "w.yml", "- query: select 1\n  ratio: 0.5\n- query: select 1 / 0\n  ratio: 0.5\n")?;
    let runs: [Vec<&str>; 3] = [
        vec!["timeit", "-s", "select 1", "--repeat", "20", "--warmup", "5", "--explain", "--fail-if", "p99_ms > 1000"],
        vec!["timeit", "-s", "select 1", "--rate", "100", "--duration", "1s"],
        vec!["workload", &file, "--max-queries", "50", "--explain=plan"],
    ];
    for args in runs {
        let mut argv = args.clone();
        argv.extend(["--url", &ctx.url, "--output", "json"]);
        let (_, stdout, stderr) = dbload_bin(&argv, &[]);
        let report = json(&stdout).with_context(|| stderr.clone())?;
        let errors: Vec<String> =
            validator.iter_errors(&report).map(|e| format!("{e} at {}", e.instance_path())).collect();
        ensure(errors.is_empty(), || format!("{args:?}: {errors:#?}"))?;
    }
    Ok(())
}

fn mixed_run_reports_ingest_and_queries_side_by_side(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    write_file(&dir, "reads.yml", "- name: recent\n  query: select count(*) from mixed_m where device_id = $1\n  ratio: 1\n  params: [{int: [1, 20]}]\n")?;
    let mixed = write_file(
        &dir,
        "mixed.yml",
        "duration: 2s\ningest:\n  table: mixed_m\n  drop_table: true\n  workers: 1\n  batch_size: 2000\n  rate: 10000\n\
         workloads:\n  - name: reads\n    file: reads.yml\n    concurrency: 2\n  - name: inline\n    concurrency: 1\n    rate: 50\n\
         \x20   queries:\n      - query: select 1\n        ratio: 1\n",
    )?;
    let (code, stdout, stderr) = dbload_bin(&["run", &mixed, "--url", &ctx.url, "--baseline", "--output", "json"], &[]);
    ensure(code == 0, || format!("exit {code}: {stderr}\n{stdout}"))?;
    let r = json(&stdout)?;
    ensure(r["command"] == "run" && r["ingest"]["rows"].as_u64() > Some(10_000), || {
        format!("ingest: {}", r["ingest"])
    })?;
    let w = r["workloads"].as_array().context("workloads[]")?;
    ensure(w.len() == 2 && w[0]["name"] == "reads", || r["workloads"].to_string())?;
    ensure(
        w[0]["under_load"]["count"].as_u64() > Some(10) && w[0]["alone_after"]["count"].as_u64() > Some(10),
        || w[0].to_string(),
    )?;
    // The text report puts the two measurements side by side.
    let (code, stdout, _) = dbload_bin(&["run", &mixed, "--url", &ctx.url, "--baseline"], &[]);
    ensure(code == 0 && stdout.contains("alone before, under load, alone after") && stdout.contains("Wrote"), || {
        stdout.clone()
    })
}

fn bad_mixed_files_exit_2_naming_file_and_line(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    for (name, yaml, needles) in [
        ("typo.yml", "duration: 1s\ningest:\n  batch_sise: 10\n", vec!["typo.yml:3:3", "ingest", "--batch-size"]),
        ("top.yml", "duraton: 1s\ningest: {}\n", vec!["top.yml:1", "did you mean `duration`"]),
        ("url.yml", "ingest:\n  url: postgres://x@y/z\n", vec!["url.yml", "command line"]),
        ("html.yml", "duration: 1s\ningest:\n  html: r.html\n", vec!["html.yml:3", "--html"]),
        ("noq.yml", "duration: 1s\nworkloads:\n  - concurrency: 2\n", vec!["noq.yml:3", "queries"]),
    ] {
        let file = write_file(&dir, name, yaml)?;
        let (code, stdout, stderr) = dbload_bin(&["run", &file, "--url", &ctx.url], &[]);
        ensure(code == 2 && stdout.is_empty(), || format!("{name}: exit {code}: {stderr}"))?;
        for n in needles {
            ensure(stderr.contains(n), || format!("{name}: message lacks {n:?}: {stderr}"))?;
        }
    }
    Ok(())
}
