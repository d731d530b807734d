//! `--pipeline N` (issue 31) against the real server: N statements in
//! flight per connection, and every one of them counted once, as the
//! server holds it: the table a pipelined INSERT fills is the count.

use std::time::Duration;

use anyhow::{Context, Result};

use crate::support::{dbload_bin, ensure, interrupt, json, refused, terminate_one_running, write_file, Ctx};
use crate::Phase::Parallel;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        (
            "pipeline::pipelined_inserts_count_what_the_table_holds",
            pipelined_inserts_count_what_the_table_holds,
            Parallel,
        ),
        (
            "pipeline::an_error_inside_a_pipeline_is_counted_per_statement",
            an_error_inside_a_pipeline_is_counted_per_statement,
            Parallel,
        ),
        ("pipeline::a_pipeline_refuses_what_it_cannot_run", a_pipeline_refuses_what_it_cannot_run, Parallel),
        (
            "pipeline::a_full_window_stopped_by_ctrl_c_or_the_deadline_is_counted_once",
            a_full_window_stopped_by_ctrl_c_or_the_deadline_is_counted_once,
            Parallel,
        ),
        (
            "pipeline::a_terminated_backend_fails_each_statement_in_flight_once",
            a_terminated_backend_fails_each_statement_in_flight_once,
            Parallel,
        ),
        (
            "pipeline::a_terminated_backend_fails_each_statement_of_a_script_pipeline_once",
            a_terminated_backend_fails_each_statement_of_a_script_pipeline_once,
            Parallel,
        ),
    ]
}

/// A table of its own for one test, emptied.
fn table(ctx: &Ctx, name: &str) -> Result<()> {
    ctx.query(&format!("DROP TABLE IF EXISTS {name}; CREATE TABLE {name} (id int)"))?;
    Ok(())
}

fn rows(ctx: &Ctx, name: &str) -> Result<u64> {
    Ok(ctx.scalar(&format!("SELECT count(*) FROM {name}"))?.parse()?)
}

/// What a query report counts: (done, failed).
fn counted(r: &serde_json::Value) -> Result<(u64, u64)> {
    let n = |k: &str| r[k].as_u64().with_context(|| format!("no {k} in {r}"));
    Ok((n("count")?, n("errors")?))
}

/// (a) 16 in flight on each of 2 connections, 1,000 each: the report
/// counts 2,000 done, the table holds 2,000 rows, and the setup says so.
fn pipelined_inserts_count_what_the_table_holds(ctx: &Ctx) -> Result<()> {
    table(ctx, "pipe_a")?;
    let argv = ["timeit", "--url", &ctx.url, "-s", "insert into pipe_a values (1)", "--pipeline", "16"];
    let (code, stdout, stderr) = dbload_bin(&[&argv[..], &["-t", "1000", "-c", "2", "--output", "json"]].concat(), &[]);
    ensure(code == 0, || format!("exit {code}: {stderr}{stdout}"))?;
    let r = json(&stdout)?;
    ensure(counted(&r)? == (2000, 0), || r.to_string())?;
    ensure(rows(ctx, "pipe_a")? == 2000, || format!("the table holds {:?}", rows(ctx, "pipe_a")))?;
    ensure(r["setup"]["pipeline"] == 16, || format!("setup: {}", r["setup"]))
}

/// (b) A statement that fails on some of its values (a division by
/// zero), 8 in flight: the server runs the statements between two Syncs
/// as one transaction, so one that fails rolls back those before it and
/// skips those after it. Each is counted failed, by what the server did;
/// the run goes on; what is counted done is what the table holds.
fn an_error_inside_a_pipeline_is_counted_per_statement(ctx: &Ctx) -> Result<()> {
    table(ctx, "pipe_b")?;
    let dir = tempfile::tempdir()?;
    let file = write_file(
        &dir,
        "divide.yml",
        "- name: divide\n  query: insert into pipe_b values (10 / $1)\n  ratio: 1\n  params: [{int: [0, 9]}]\n",
    )?;
    let (code, stdout, stderr) =
        dbload_bin(&["workload", &file, "--url", &ctx.url, "--pipeline", "8", "-t", "400", "--output", "json"], &[]);
    let r = json(&stdout).with_context(|| stderr.clone())?;
    ensure(code == 1, || format!("exit {code}: {stderr}{stdout}"))?;
    let (done, failed) = counted(&r)?;
    ensure(done + failed == 400 && done > 0 && failed > 0, || r.to_string())?;
    ensure(rows(ctx, "pipe_b")? == done, || format!("the table holds {:?}: {r}", rows(ctx, "pipe_b")))?;
    let classes = r["queries"][0]["error_classes"].as_array().context("error_classes")?;
    let count =
        |class: &str| classes.iter().filter(|c| c["class"] == class).filter_map(|c| c["count"].as_u64()).sum::<u64>();
    let zero = count("SQLSTATE 22012");
    ensure(zero > 0 && zero < failed, || format!("one failure each, the rest rolled back or skipped: {classes:?}"))?;
    ensure(count("pipeline aborted") + count("pipeline rolled back") + zero == failed, || format!("{classes:?}"))
}

/// (c) What a pipeline cannot run exits 2 naming the options: the simple
/// protocol (as pgbench refuses it), a pgbench script (which pipelines
/// its own statements), and `--pipeline 0`.
fn a_pipeline_refuses_what_it_cannot_run(ctx: &Ctx) -> Result<()> {
    let base = ["timeit", "--url", ctx.url.as_str(), "-t", "10"];
    let simple = [&base[..], &["-s", "select 1", "-M", "simple", "--pipeline", "4"]].concat();
    refused(&simple, "--pipeline 4")?;
    refused(&simple, "-M simple")?;
    let dir = tempfile::tempdir()?;
    let file = write_file(&dir, "one.sql", "select 1;\n")?;
    refused(&[&base[..], &["-f", &file, "--pipeline", "4"]].concat(), "\\startpipeline")?;
    refused(&[&base[..], &["-s", "select 1", "--pipeline", "0"]].concat(), "--pipeline 0")
}

/// (d) Ctrl-C, then the deadline, with the windows full (statements
/// that take 1 ms, 16 in flight on each of 2 connections): the statements
/// in flight are answered within the grace and counted; the report counts
/// what the table holds, nothing twice.
fn a_full_window_stopped_by_ctrl_c_or_the_deadline_is_counted_once(ctx: &Ctx) -> Result<()> {
    let insert = |t: &str| format!("insert into {t} select 1 from pg_sleep(0.001)");
    table(ctx, "pipe_d_int")?;
    let stmt = insert("pipe_d_int");
    let argv =
        ["timeit", "--url", &ctx.url, "-s", &stmt, "--pipeline", "16", "-c", "2", "-T", "60", "--output", "json"];
    let r = interrupt(&argv, None, Duration::from_secs(2))?;
    let (done, failed) = counted(&r)?;
    ensure(done > 32 && failed == 0, || r.to_string())?;
    ensure(rows(ctx, "pipe_d_int")? == done, || format!("Ctrl-C: the table holds {:?}: {r}", rows(ctx, "pipe_d_int")))?;

    table(ctx, "pipe_d_end")?;
    let stmt = insert("pipe_d_end");
    let argv = ["timeit", "--url", &ctx.url, "-s", &stmt, "--pipeline", "16", "-c", "2", "-T", "2", "--output", "json"];
    let (code, stdout, stderr) = dbload_bin(&argv, &[]);
    ensure(code == 0, || format!("exit {code}: {stderr}{stdout}"))?;
    let r = json(&stdout)?;
    let (done, failed) = counted(&r)?;
    ensure(done > 32 && failed == 0, || r.to_string())?;
    ensure(rows(ctx, "pipe_d_end")? == done, || format!("deadline: the table holds {:?}: {r}", rows(ctx, "pipe_d_end")))
}

/// (e) The backend of a connection with 8 statements in flight is
/// terminated (`pg_terminate_backend`): each of the 8 fails once, none of
/// them is in the table, and the worker stops (no --reconnect): exit 1.
fn a_terminated_backend_fails_each_statement_in_flight_once(ctx: &Ctx) -> Result<()> {
    table(ctx, "pipe_e")?;
    let app = "pipe31_terminated";
    let url = ctx.url_with(&format!("application_name={app}"));
    let stmt = "insert into pipe_e select 1 from pg_sleep(0.002)";
    let argv =
        ["timeit", "--url", &url, "-s", stmt, "--pipeline", "8", "-T", "30", "--no-reconnect", "--output", "json"];
    let out = terminate_one_running(ctx, app, "query LIKE 'insert into pipe_e%'", || Ok(dbload_bin(&argv, &[])))?;
    let (code, stdout, stderr) = out;
    ensure(code == 1, || format!("exit {code}: {stderr}{stdout}"))?;
    let r = json(&stdout)?;
    let (done, failed) = counted(&r)?;
    ensure(failed == 8 && done > 0, || format!("the 8 in flight failed once each: {r}"))?;
    ensure(rows(ctx, "pipe_e")? == done, || format!("the table holds {:?}: {r}", rows(ctx, "pipe_e")))
}

/// (f) The same fault under a pgbench script's `\startpipeline` ... 16
/// statements ... `\endpipeline`: the run in flight fails once, and `-r`
/// counts each of its statements once: done if its answer came before the
/// server's FATAL (as pgbench's `-r` times each answer it reads), failed if
/// not, the FATAL's and every one after it, not only the first; the table
/// holds the runs counted done.
fn a_terminated_backend_fails_each_statement_of_a_script_pipeline_once(ctx: &Ctx) -> Result<()> {
    table(ctx, "pipe_f")?;
    let dir = tempfile::tempdir()?;
    let insert = "insert into pipe_f select 1 from pg_sleep(0.001);\n".repeat(16);
    let script = write_file(&dir, "piped.sql", &format!("\\startpipeline\n{insert}\\endpipeline\n"))?;
    let app = "pipe31_script_terminated";
    let url = ctx.url_with(&format!("application_name={app}"));
    let argv = [
        "timeit",
        "--url",
        &url,
        "-f",
        &script,
        "-M",
        "prepared",
        "-r",
        "-T",
        "30",
        "--no-reconnect",
        "--output",
        "json",
    ];
    let out = terminate_one_running(ctx, app, "query LIKE 'insert into pipe_f%'", || Ok(dbload_bin(&argv, &[])))?;
    let (code, stdout, stderr) = out;
    ensure(code == 1, || format!("exit {code}: {stderr}{stdout}"))?;
    let r = json(&stdout)?;
    let (done, failed) = counted(&r)?;
    ensure(failed == 1 && done > 0, || format!("the run in flight failed once: {r}"))?;
    let statements = r["queries"][0]["statements"].as_array().context("statements with -r")?;
    let inserts: Vec<(u64, u64)> = statements
        .iter()
        .filter(|s| s["statement"].as_str().is_some_and(|t| t.starts_with("insert")))
        .map(|s| (s["count"].as_u64().unwrap_or(u64::MAX), s["errors"].as_u64().unwrap_or(u64::MAX)))
        .collect();
    let each_once = inserts.iter().all(|&(count, errors)| count + errors == done + failed);
    let from_the_fatal_on = inserts.iter().skip_while(|&&(_, errors)| errors == 0).all(|&(_, errors)| errors == 1);
    ensure(inserts.len() == 16 && each_once && from_the_fatal_on && inserts[15].1 == 1, || {
        format!("each of the 16 statements counted once, failed from the FATAL on: {inserts:?}")
    })?;
    ensure(rows(ctx, "pipe_f")? == done * 16, || format!("the table holds {:?}: {r}", rows(ctx, "pipe_f")))
}
