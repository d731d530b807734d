//! `--runs N` and `dbload compare` against the real server (issue 16,
//! items 2 and 4): each run reported with the median and its interval, a
//! fresh table per ingest run, Ctrl-C keeping the runs done; a run against
//! itself within noise, a run at half the rate worse beyond noise, and the
//! exit codes of `--fail-if-worse` and of bad input.

use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::Value as Json;

use crate::support::{dbload_bin, ensure, interrupt, json, refused, write_file, Ctx};
use crate::Phase::{Parallel, Quiet};
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        (
            "repeat::three_runs_are_each_reported_with_their_median",
            three_runs_are_each_reported_with_their_median,
            Parallel,
        ),
        ("repeat::every_command_repeats", every_command_repeats, Parallel),
        ("repeat::fail_if_judges_the_median", fail_if_judges_the_median, Parallel),
        ("repeat::ctrl_c_keeps_the_runs_done", ctrl_c_keeps_the_runs_done, Parallel),
        ("repeat::a_run_that_cannot_run_keeps_the_runs_done", a_run_that_cannot_run_keeps_the_runs_done, Parallel),
        ("repeat::compare_a_run_with_itself_is_within_noise", compare_a_run_with_itself_is_within_noise, Parallel),
        ("repeat::compare_half_the_rate_is_worse_beyond_noise", compare_half_the_rate_is_worse_beyond_noise, Quiet),
        ("repeat::compare_refuses_bad_input", compare_refuses_bad_input, Parallel),
        ("repeat::compare_the_last_two_runs_of_the_store", compare_the_last_two_runs_of_the_store, Parallel),
        ("repeat::compare_reads_runs_from_a_results_database", compare_reads_runs_from_a_results_database, Parallel),
    ]
}

const JSON: [&str; 3] = ["--output", "json", "--quiet"];

/// Runs the binary, expecting `code`; returns the JSON report it printed.
fn report(argv: &[&str], code: i32) -> Result<Json> {
    let (got, stdout, stderr) = dbload_bin(&[argv, &JSON].concat(), &[]);
    ensure(got == code, || format!("{argv:?}: exit {got}, want {code}: {stderr}"))?;
    json(&stdout)
}

fn validate(report: &Json, schema: &str) -> Result<()> {
    let schema: Json = serde_json::from_str(schema).context("schema file")?;
    let validator = jsonschema::validator_for(&schema).context("compiling the schema")?;
    let errors: Vec<String> =
        validator.iter_errors(report).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    ensure(errors.is_empty(), || format!("{errors:?}"))
}

/// Every figure's median lies between its min and max, the interval too.
fn medians_within_range(repeat: &Json) -> Result<()> {
    let figures = repeat["figures"].as_object().context("repeat.figures")?;
    ensure(figures.contains_key("rows_per_sec") || figures.contains_key("qps"), || repeat.to_string())?;
    for (name, f) in figures {
        let v = |k: &str| f[k].as_f64().unwrap_or(f64::NAN);
        let ordered = v("min") <= v("ci95_low")
            && v("ci95_low") <= v("median")
            && v("median") <= v("ci95_high")
            && v("ci95_high") <= v("max");
        ensure(ordered, || format!("{name}: {f}"))?;
    }
    Ok(())
}

/// `--runs 3` on ingest: three runs, each ok and with the same rows
/// acknowledged, the median between min and max, the report valid against
/// its schema, and a fresh table each run (the table holds one run's rows).
fn three_runs_are_each_reported_with_their_median(ctx: &Ctx) -> Result<()> {
    let argv = ["ingest", "--url", &ctx.url, "--table", "rep_three", "--drop-table", "--rows", "20000", "--runs", "3"];
    let r = report(&[&argv[..], &["--workers", "2", "--batch-size", "1000"]].concat(), 0)?;
    validate(&r, include_str!("../../schema/report.schema.json"))?;
    let repeat = &r["repeat"];
    let runs = repeat["runs"].as_array().context("repeat.runs")?;
    ensure(runs.len() == 3 && repeat["runs_done"] == 3 && repeat["runs_in_figures"] == 3, || repeat.to_string())?;
    for run in runs {
        ensure(run["status"] == "ok" && run["acknowledged"] == 20000, || run.to_string())?;
    }
    medians_within_range(repeat)?;
    ensure(ctx.scalar("SELECT count(*) FROM rep_three")? == "20000", || "the table is not one run's".into())?;
    // Without --drop-table too: the first run makes the table, the next ones make it afresh.
    ctx.query("DROP TABLE IF EXISTS rep_fresh")?;
    // A fixed start, so that every run writes the same rows (the default ends them now).
    let start = ["--start", "2020-01-01T00:00:00Z"];
    let argv = ["ingest", "--url", &ctx.url, "--table", "rep_fresh", "--rows", "5000", "--runs", "2"];
    let r = report(&[&argv[..], &start].concat(), 0)?;
    ensure(r["repeat"]["runs"][1]["acknowledged"] == 5000, || r["repeat"].to_string())?;
    ensure(ctx.scalar("SELECT count(*) FROM rep_fresh")? == "5000", || "the second run appended".into())?;
    // With --append the table is kept: the same seed writes the same keys,
    // so the runs upsert them, and a row of another's stays.
    ctx.query("INSERT INTO rep_fresh (time, device_id) VALUES ('2000-01-01', -1)")?;
    let argv = ["ingest", "--url", &ctx.url, "--table", "rep_fresh", "--rows", "5000", "--runs", "2", "--append"];
    let r = report(&[&argv[..], &start, &["--upsert"]].concat(), 0)?;
    ensure(r["repeat"]["runs"][1]["acknowledged"] == 5000, || r["repeat"].to_string())?;
    ensure(ctx.scalar("SELECT count(*) FROM rep_fresh")? == "5001", || "--append did not keep the table".into())
}

/// The loop is the same for every command: timeit and export repeat, with
/// the same count each run, and the text report shows the runs' table; the
/// store keeps every run's histograms, each an interval at its own start.
fn every_command_repeats(ctx: &Ctx) -> Result<()> {
    let r = report(&["timeit", "--url", &ctx.url, "-s", "select 1", "--repeat", "50", "--runs", "2"], 0)?;
    validate(&r, include_str!("../../schema/query-report.schema.json"))?;
    let runs = r["repeat"]["runs"].as_array().context("repeat.runs")?;
    ensure(runs.len() == 2 && runs.iter().all(|run| run["acknowledged"] == 50), || r["repeat"].to_string())?;
    medians_within_range(&r["repeat"])?;

    ctx.query(
        "DROP TABLE IF EXISTS rep_export; CREATE TABLE rep_export AS SELECT g AS id FROM generate_series(1, 3000) g",
    )?;
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("out");
    let out = out.to_str().context("a temporary path")?;
    let r = report(&["export", "--url", &ctx.url, "--table", "rep_export", "--out", out, "--runs", "2"], 0)?;
    validate(&r, include_str!("../../schema/transfer-report.schema.json"))?;
    let runs = r["repeat"]["runs"].as_array().context("repeat.runs")?;
    ensure(runs.len() == 2 && runs.iter().all(|run| run["acknowledged"] == 3000), || r["repeat"].to_string())?;

    let home = tempfile::tempdir()?;
    let data_home = home.path().to_str().context("a temporary path")?;
    let argv = ["timeit", "--url", &ctx.url, "-s", "select 1", "-r", "20", "--runs", "2"];
    let stdout = in_store(&argv, 0, &[("XDG_DATA_HOME", data_home)])?;
    ensure(stdout.contains("Runs: 2 of 2 done") && stdout.contains("95% CI of median"), || stdout.clone())?;
    let dir = home.path().join("dbload/results");
    let log = std::fs::read_dir(&dir)?.filter_map(|e| e.ok()).find(|e| e.path().extension() == Some("hlog".as_ref()));
    let log = std::fs::read_to_string(log.context("no .hlog kept")?.path())?;
    let intervals = log.lines().filter(|l| l.starts_with("Tag=latency,")).count();
    ensure(intervals == 2, || format!("{intervals} latency intervals, want one per run:\n{log}"))?;
    let histograms = dbload::results::hlog::read(&log)?;
    let latency = histograms.iter().find(|(t, _)| t.as_deref() == Some("latency")).context("no latency tag")?;
    ensure(latency.1.len() == 40, || format!("{} latencies read, want 2 runs × 20", latency.1.len()))
}

/// With `--runs`, `--fail-if` is judged on the medians: a condition every
/// run meets holds (exit 1) and one none meets does not (exit 0).
fn fail_if_judges_the_median(ctx: &Ctx) -> Result<()> {
    let base = ["timeit", "--url", &ctx.url, "-s", "select 1", "--repeat", "30", "--runs", "3"];
    let r = report(&[&base[..], &["--fail-if", "qps > 0"]].concat(), 1)?;
    ensure(r["status"] == "failed" && r["fail_if"][0]["held"] == true, || r["fail_if"].to_string())?;
    let r = report(&[&base[..], &["--fail-if", "count != 30"]].concat(), 0)?;
    ensure(r["status"] == "ok" && r["fail_if"][0]["held"] == false, || r["fail_if"].to_string())
}

/// Ctrl-C during a later run: exit 130, the runs before it reported ok,
/// the interrupted one listed as such and left out of the statistics.
fn ctrl_c_keeps_the_runs_done(ctx: &Ctx) -> Result<()> {
    let argv = ["timeit", "--url", &ctx.url, "-s", "select 1", "--duration", "1s", "--runs", "100"];
    let r = interrupt(&[&argv[..], &JSON].concat(), None, Duration::from_secs(5))?;
    let repeat = &r["repeat"];
    let runs = repeat["runs"].as_array().context("repeat.runs")?;
    let done = runs.len();
    ensure((2..100).contains(&done) && repeat["runs_done"] == done, || repeat.to_string())?;
    ensure(runs[..done - 1].iter().all(|run| run["status"] == "ok"), || repeat.to_string())?;
    let last_interrupted = runs[done - 1]["status"] == "interrupted";
    let counted = if last_interrupted { done - 1 } else { done };
    ensure(repeat["runs_in_figures"] == counted, || repeat.to_string())?;
    medians_within_range(repeat)
}

/// A later run that cannot run (its table dropped during the pause): the
/// report of the runs done is printed, says which run could not and why,
/// and the exit code is that error's (2: the table is missing).
fn a_run_that_cannot_run_keeps_the_runs_done(ctx: &Ctx) -> Result<()> {
    ctx.query("DROP TABLE IF EXISTS rep_gone; CREATE TABLE rep_gone (id int8, name text)")?;
    let argv = ["insert-fake-data", "--url", &ctx.url, "--table", "rep_gone", "--num-records", "1000"];
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args([&argv[..], &["--runs", "3", "--pause", "5s"], &JSON].concat())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let started = std::time::Instant::now();
    while ctx.scalar("SELECT count(*) FROM rep_gone")? != "1000" {
        ensure(started.elapsed() < Duration::from_secs(30), || "the first run wrote nothing in 30 s".into())?;
        std::thread::sleep(Duration::from_millis(50));
    }
    ctx.query("DROP TABLE rep_gone")?;
    let out = child.wait_with_output()?;
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    ensure(out.status.code() == Some(2), || format!("exit {:?}: {stderr}", out.status))?;
    ensure(stderr.contains("run 2 of 3") && stderr.contains("does not exist"), || stderr.to_string())?;
    let r = json(&stdout)?;
    ensure(r["status"] == "failed" && r["exit_code"] == 2, || stdout.to_string())?;
    ensure(r["stopped"].as_str().is_some_and(|s| s.starts_with("run 2 of 3: table")), || stdout.to_string())?;
    let runs = r["repeat"]["runs"].as_array().context("repeat.runs")?;
    ensure(runs.len() == 1 && runs[0]["status"] == "ok" && runs[0]["acknowledged"] == 1000, || stdout.to_string())
}

/// `dbload compare` of the text printed, exit code expected.
fn compare(argv: &[&str], code: i32) -> Result<String> {
    let (got, stdout, stderr) = dbload_bin(&[&["compare"], argv].concat(), &[]);
    ensure(got == code, || format!("compare {argv:?}: exit {got}, want {code}: {stdout}{stderr}"))?;
    Ok(stdout)
}

/// The verdict column of a figure's row (`rows/s`, `p99 ms` ...).
fn verdict<'a>(table: &'a str, label: &str) -> Option<&'a str> {
    table.lines().find(|l| l.starts_with(&format!("{label} ")))
}

/// A report compared with itself: every figure within noise, exit 0 even
/// with a strict `--fail-if-worse`.
fn compare_a_run_with_itself_is_within_noise(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let a = dir.path().join("a.json");
    let a = a.to_str().context("a temporary path")?;
    let argv = ["ingest", "--url", &ctx.url, "--table", "rep_self", "--drop-table", "--rows", "10000", "--runs", "4"];
    report(&[&argv[..], &["--report", a]].concat(), 0)?;
    let table = compare(&[a, a, "--fail-if-worse", "rows_per_sec:0%", "--fail-if-worse", "p99_ms:0%"], 0)?;
    let rows: Vec<&str> = table.lines().skip_while(|l| !l.starts_with("figure")).skip(1).collect();
    ensure(rows.len() >= 5, || table.clone())?;
    ensure(rows.iter().all(|l| l.contains("within noise") && l.contains("1.000")), || table.clone())
}

/// Half the rate: rows/s worse beyond noise with runs on both sides;
/// `--fail-if-worse rows_per_sec:5%` exits 1, a 70 % allowance exits 0;
/// single runs get no verdict; `--html` writes the page.
fn compare_half_the_rate_is_worse_beyond_noise(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = |name: &str| dir.path().join(name).to_str().map(str::to_string).context("a temporary path");
    let (fast, slow, single, html) = (path("fast.json")?, path("slow.json")?, path("single.json")?, path("c.html")?);
    let ingest = |rate: &str, runs: &str, file: &str| -> Result<Json> {
        let argv = ["ingest", "--url", &ctx.url, "--table", "rep_rate", "--drop-table", "--duration", "2s"];
        report(&[&argv[..], &["--rate", rate, "--runs", runs, "--batch-size", "500", "--report", file]].concat(), 0)
    };
    // 4 runs a side: the fewest the rank test can call a difference with.
    ingest("20000", "4", &fast)?;
    ingest("10000", "4", &slow)?;
    ingest("10000", "1", &single)?;
    let table = compare(&[&fast, &slow, "--fail-if-worse", "rows_per_sec:5%", "--html", &html], 1)?;
    let rows = verdict(&table, "rows/s").context("no rows/s row")?;
    ensure(rows.contains("worse [") && rows.contains(" 0.5"), || table.clone())?;
    ensure(table.contains("--fail-if-worse: ") && table.contains("rows_per_sec worse by"), || table.clone())?;
    compare(&[&fast, &slow, "--fail-if-worse", "rows_per_sec:70%"], 0)?;
    let page = std::fs::read_to_string(&html)?;
    // The ratios with their intervals, the percentiles, the throughput.
    let charts = page.matches("<svg").count();
    ensure(charts == 3 && page.contains("slow.json") && page.contains("<h3>Ratio to A"), || {
        format!("the page lacks its charts: {charts} drawn")
    })?;
    let table = compare(&[&fast, &single, "--fail-if-worse", "rows_per_sec:5%"], 0)?;
    let rows = verdict(&table, "rows/s").context("no rows/s row")?;
    ensure(rows.contains("single runs: no noise estimate"), || table.clone())
}

/// Bad input is exit 2, naming the file or the option: a missing file, one
/// that is not JSON, JSON that is not a report, a limit on no figure.
fn compare_refuses_bad_input(_: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let report = r#"{"schema_version": 2, "command": "ingest", "rows_per_sec": 10.0}"#;
    let good = write_file(&dir, "good.json", report)?;
    let text = write_file(&dir, "notes.txt", "rows/s: 10")?;
    let other = write_file(&dir, "other.json", r#"{"rows": 1}"#)?;
    let missing = dir.path().join("missing.json").to_str().context("a temporary path")?.to_string();
    refused(&["compare", &good, &missing], "missing.json")?;
    refused(&["compare", &good, &text], "notes.txt")?;
    refused(&["compare", &other, &good], "other.json")?;
    refused(&["compare", &good, &good, "--fail-if-worse", "rows_per_second:5%"], "--fail-if-worse")?;
    refused(&["compare", &good, &good, "--fail-if-worse", "qps:5%"], "qps")?;
    refused(&["compare", &good], "two reports")
}

/// Runs the binary with its default results store under `env`'s
/// `XDG_DATA_HOME`, expecting `code`; returns what it printed.
fn in_store(argv: &[&str], code: i32, env: &[(&str, &str)]) -> Result<String> {
    let (got, stdout, stderr) = dbload_bin(argv, env);
    ensure(got == code, || format!("{argv:?}: exit {got}, want {code}: {stdout}{stderr}"))?;
    Ok(stdout)
}

/// `compare` reads runs of the results store: `--last 2` after two runs
/// (oldest first), the same runs by unique id prefixes, `--output json`
/// that follows its schema, the HTML page's percentiles to 99.99 % from
/// the kept histograms; an unknown id is exit 2 naming it.
fn compare_the_last_two_runs_of_the_store(ctx: &Ctx) -> Result<()> {
    let home = tempfile::tempdir()?;
    let data_home = home.path().to_str().context("a temporary path")?;
    let env = [("XDG_DATA_HOME", data_home)];
    let run = |argv: &[&str], code: i32| in_store(argv, code, &env);
    let ingest = ["ingest", "--url", &ctx.url, "--table", "rep_store", "--drop-table", "--rows", "2000", "--quiet"];
    run(&ingest, 0)?;
    run(&ingest, 0)?;
    let html = home.path().join("c.html");
    let html = html.to_str().context("a temporary path")?;
    let compared = json(&run(&["compare", "--last", "2", "--output", "json", "--html", html], 0)?)?;
    validate(&compared, include_str!("../../schema/compare.schema.json"))?;
    let ids: Vec<&str> =
        compared["reports"].as_array().context("reports")?.iter().filter_map(|r| r["run_id"].as_str()).collect();
    ensure(ids.len() == 2 && ids[0] < ids[1], || format!("not the two runs, oldest first: {compared}"))?;
    ensure(compared["reports"][0]["name"] == ids[0], || compared.to_string())?;
    let rows = &compared["figures"][0];
    ensure(rows["figure"] == "rows_per_sec" && rows["cells"][1]["verdict"] == "single_runs", || compared.to_string())?;
    let page = std::fs::read_to_string(html)?;
    ensure(page.contains("99.99%"), || "the page's percentiles do not reach 99.99%".into())?;
    let prefixes: Vec<&str> = ids.iter().map(|id| &id[..id.len() - 4]).collect();
    let table = run(&["compare", prefixes[0], prefixes[1]], 0)?;
    ensure(table.contains(&format!("A: {}", ids[0])) && table.contains(&format!("B: {}", ids[1])), || table.clone())?;
    let (code, stdout, stderr) = dbload_bin(&["compare", ids[0], "0123abcd"], &env);
    ensure(code == 2 && stdout.is_empty() && stderr.contains("0123abcd"), || format!("exit {code}: {stderr}"))
}

/// `compare` finds runs in a `--results-url` database as it finds them in
/// the directory: `--last 2` (oldest first), id prefixes, and an unknown
/// id refused naming it.
fn compare_reads_runs_from_a_results_database(ctx: &Ctx) -> Result<()> {
    // Its own schema, first on the search path: no other test's runs are in it.
    ctx.query("DROP SCHEMA IF EXISTS results_cmp CASCADE; CREATE SCHEMA results_cmp")?;
    let store = ctx.url_with("options=-csearch_path%3Dresults_cmp");
    let home = tempfile::tempdir()?;
    let data_home = home.path().to_str().context("a temporary path")?;
    let env = [("XDG_DATA_HOME", data_home)];
    let run = |argv: &[&str], code: i32| in_store(argv, code, &env);
    let ingest = [
        "ingest",
        "--url",
        &ctx.url,
        "--table",
        "rep_db_store",
        "--drop-table",
        "--rows",
        "2000",
        "--quiet",
        "--no-results",
        "--results-url",
        &store,
    ];
    run(&ingest, 0)?;
    run(&ingest, 0)?;
    let compared = json(&run(&["compare", "--results-url", &store, "--last", "2", "--output", "json"], 0)?)?;
    validate(&compared, include_str!("../../schema/compare.schema.json"))?;
    let ids: Vec<&str> =
        compared["reports"].as_array().context("reports")?.iter().filter_map(|r| r["run_id"].as_str()).collect();
    ensure(ids.len() == 2 && ids[0] < ids[1], || format!("not the two runs, oldest first: {compared}"))?;
    let in_db = ctx.scalar("SELECT string_agg(run_id::text, ',' ORDER BY run_id) FROM results_cmp.dbload_runs")?;
    ensure(in_db == ids.join(","), || format!("compared {ids:?}, the database holds {in_db}"))?;
    let prefixes: Vec<&str> = ids.iter().map(|id| &id[..id.len() - 4]).collect();
    let table = run(&["compare", "--results-url", &store, prefixes[0], prefixes[1]], 0)?;
    ensure(table.contains(&format!("A: {}", ids[0])) && table.contains(&format!("B: {}", ids[1])), || table.clone())?;
    let (code, stdout, stderr) = dbload_bin(&["compare", "--results-url", &store, ids[0], "0123abcd"], &env);
    ensure(code == 2 && stdout.is_empty() && stderr.contains("0123abcd"), || format!("exit {code}: {stderr}"))
}
