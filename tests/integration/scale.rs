//! Scale-out (issue 19): N processes with `--instance I/N` and one
//! `--run-id` do together what one process does, start together through
//! the `--results-url` store (here the harness's server, a schema of its
//! own per test), and `dbload report --run-id` merges them exactly.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::Value as Json;

use crate::support::{dbload_bin, ensure, json, refused, Ctx};
use crate::Phase::{Parallel, Quiet};
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("scale::four_instances_write_the_rows_of_one_process", four_instances_write_the_rows_of_one_process, Parallel),
        (
            "scale::a_missing_instance_stops_the_others_naming_it",
            a_missing_instance_stops_the_others_naming_it,
            Parallel,
        ),
        (
            "scale::a_failed_or_missing_instance_fails_the_merged_report",
            a_failed_or_missing_instance_fails_the_merged_report,
            Parallel,
        ),
        ("scale::commands_that_cannot_split_refuse_instance", commands_that_cannot_split_refuse_instance, Parallel),
        ("scale::instances_start_together", instances_start_together, Quiet),
        ("scale::a_version_1_store_is_upgraded", a_version_1_store_is_upgraded, Parallel),
    ]
}

/// A results store of its own: a fresh schema first on the search path.
fn store(ctx: &Ctx, schema: &str) -> Result<String> {
    ctx.query(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"))?;
    Ok(ctx.url_with(&format!("options=-csearch_path%3D{schema}")))
}

/// The dbload binary with `args`, started (not waited for).
fn spawn(args: &[String]) -> Result<Child> {
    Ok(Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(args)
        .env_remove("DATABASE_URL")
        .env_remove("PGHOST")
        .env_remove("PGPORT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?)
}

/// Waits for `child`: its exit code, stdout and stderr.
fn finish(child: Child) -> Result<(i32, String, String)> {
    let out = child.wait_with_output()?;
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    Ok((out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr)))
}

/// `dbload ingest` of `table` with the options every process of the
/// comparison shares, and `extra`.
fn ingest(ctx: &Ctx, table: &str, extra: &[&str]) -> Vec<String> {
    let common = [
        "ingest",
        "--url",
        &ctx.url,
        "--table",
        table,
        "--drop-table",
        "--rows",
        "10001",
        "--devices",
        "3",
        "--batch-size",
        "500",
        "--seed",
        "7",
        "--start",
        "2026-01-01T00:00:00Z",
        "--no-results",
        "--quiet",
        "--output",
        "json",
    ];
    common.iter().chain(extra).map(|s| s.to_string()).collect()
}

/// `count` instances of run `run_id`, each with `--workers workers`,
/// started together; their exit codes, reports (JSON) and stderr.
fn instances(
    ctx: &Ctx,
    table: &str,
    (run_id, count, workers): (&str, u32, u32),
    store: &str,
    extra: &[&str],
) -> Result<Vec<(i32, String, String)>> {
    let children: Vec<Child> = (0..count)
        .map(|i| {
            let instance = format!("{i}/{count}");
            let workers = workers.to_string();
            let args = [
                &["--instance", &instance, "--run-id", run_id, "--results-url", store, "--workers", &workers][..],
                extra,
            ]
            .concat();
            spawn(&ingest(ctx, table, &args))
        })
        .collect::<Result<_>>()?;
    children.into_iter().map(finish).collect()
}

/// Every row of `table` in one text: count and digest, the same for the
/// same rows whatever order they were written in.
fn digest(ctx: &Ctx, table: &str) -> Result<String> {
    ctx.scalar(&format!(
        "SELECT count(*) || ' rows, ' || count(DISTINCT (time, device_id)) || ' keys, ' || \
         md5(string_agg(t::text, ',' ORDER BY time, device_id)) FROM {table} t"
    ))
}

/// The schema a report of `command` follows.
fn validate(report: &Json) -> Result<()> {
    let schema: Json = serde_json::from_str(include_str!("../../schema/report.schema.json"))?;
    let validator = jsonschema::validator_for(&schema).context("compiling the schema")?;
    let errors: Vec<String> = validator.iter_errors(report).map(|e| format!("{e} at {}", e.instance_path())).collect();
    ensure(errors.is_empty(), || format!("not the schema's: {errors:?}"))
}

/// `--instance i/4` with 2 workers each writes exactly what one process
/// with 8 workers writes (the same keys, the same values: the work is cut
/// along the workers, numbered across the instances), and the merged
/// report adds their counts and histograms.
fn four_instances_write_the_rows_of_one_process(ctx: &Ctx) -> Result<()> {
    let store = store(ctx, "scale_four")?;
    let run_id = format!("four-{}", std::process::id());
    let ran = instances(ctx, "scale_parts", (&run_id, 4, 2), &store, &[])?;
    let mut reports = Vec::new();
    for (i, (code, stdout, stderr)) in ran.iter().enumerate() {
        ensure(*code == 0, || format!("instance {i}: exit {code}: {stderr}"))?;
        let report = json(stdout)?;
        validate(&report)?;
        ensure(report["run"]["instance"]["index"] == i && report["run"]["instance"]["count"] == 4, || {
            format!("instance {i}: {}", report["run"])
        })?;
        reports.push(report);
    }
    let (code, stdout, stderr) = finish(spawn(&ingest(ctx, "scale_whole", &["--workers", "8"]))?)?;
    ensure(code == 0, || format!("one process: exit {code}: {stderr}{stdout}"))?;
    let (parts, whole) = (digest(ctx, "scale_parts")?, digest(ctx, "scale_whole")?);
    ensure(parts == whole, || format!("4 instances wrote {parts}, one process {whole}"))?;
    ensure(whole.starts_with("10001 rows, 10001 keys"), || whole.clone())?;
    let rows: Vec<u64> = reports.iter().map(|r| r["rows"].as_u64().unwrap_or(0)).collect();
    // 10001 rows over 8 workers: the first takes one more, so instance 0 does.
    ensure(rows == [2501, 2500, 2500, 2500], || format!("rows per instance {rows:?}"))?;

    let registered = ctx.scalar(&format!(
        "SELECT string_agg(instance || ':' || status || ':' || (kept_run_id IS NOT NULL), ' ' ORDER BY instance) \
         FROM scale_four.dbload_instances WHERE run_id = '{run_id}'"
    ))?;
    ensure(registered == "0:ok:true 1:ok:true 2:ok:true 3:ok:true", || registered.clone())?;

    let (code, stdout, stderr) =
        dbload_bin(&["report", "--run-id", &run_id, "--results-url", &store, "--output", "json"], &[]);
    ensure(code == 0, || format!("report: exit {code}: {stderr}{stdout}"))?;
    let merged = json(&stdout)?;
    validate(&merged)?;
    ensure(merged["status"] == "ok" && merged["rows"] == 10001 && merged["accounting"]["ok"] == 10001, || {
        format!("merged: {} {} {}", merged["status"], merged["rows"], merged["accounting"])
    })?;
    let batches: u64 = reports.iter().map(|r| r["batches"].as_u64().unwrap_or(0)).sum();
    ensure(merged["batches"] == batches, || format!("{} batches merged, {batches} in all", merged["batches"]))?;
    let timeline_rows: u64 =
        merged["timeline"].as_array().into_iter().flatten().map(|e| e["rows"].as_u64().unwrap_or(0)).sum();
    ensure(timeline_rows == 10001, || format!("{timeline_rows} rows in the merged timeline"))?;

    // The p99 of the instances' kept histograms added, computed here.
    let logs = ctx.query(&format!(
        "SELECT histograms FROM scale_four.dbload_runs WHERE report #>> '{{run,instance,run_id}}' = '{run_id}'"
    ))?;
    ensure(logs.len() == 4, || format!("{} runs kept", logs.len()))?;
    let mut added: Option<hdrhistogram::Histogram<u64>> = None;
    for log in logs {
        let found = dbload::results::hlog::read(log[0].as_deref().unwrap_or(""))?;
        let (_, latency) = found.into_iter().find(|(tag, _)| tag.as_deref() == Some("latency")).context("latency")?;
        match &mut added {
            None => added = Some(latency),
            Some(sum) => sum.add(&latency)?,
        }
    }
    let added = added.context("no histogram")?;
    let p99 = added.value_at_quantile(0.99) as f64 / 1000.0;
    ensure(merged["latency_ms"]["p99"].as_f64() == Some(p99) && merged["latency_ms"]["count"] == added.len(), || {
        format!(
            "merged p99 {} of {}, the added histograms' {p99} of {}",
            merged["latency_ms"]["p99"],
            merged["latency_ms"]["count"],
            added.len()
        )
    })?;
    ensure(added.len() == batches, || format!("{} latencies, {batches} batches", added.len()))?;

    let html = tempfile::tempdir()?;
    let page = html.path().join("merged.html");
    let page = page.to_str().context("path")?;
    let (code, text, _) = dbload_bin(&["report", "--run-id", &run_id, "--results-url", &store, "--html", page], &[]);
    let drawn = std::fs::read_to_string(page)?;
    ensure(drawn.contains("<svg") && drawn.contains("10,001"), || format!("the merged page: {} bytes", drawn.len()))?;
    ensure(code == 0 && text.contains("4 of 4 instances kept, status ok") && text.contains("instance 3"), || {
        text.clone()
    })?;
    ensure(
        text.lines().any(|l| l.trim_start().starts_with("rows ") && l.contains("10,001") && l.contains("2,501")),
        || text.clone(),
    )
}

/// Three instances of four: after `--start-timeout`, each gives up with
/// exit 3 naming instance 3.
fn a_missing_instance_stops_the_others_naming_it(ctx: &Ctx) -> Result<()> {
    let store = store(ctx, "scale_missing")?;
    let run_id = format!("missing-{}", std::process::id());
    let children: Vec<Child> = (0..3)
        .map(|i| {
            let instance = format!("{i}/4");
            let extra =
                ["--instance", &instance, "--run-id", &run_id, "--results-url", &store, "--start-timeout", "3s"];
            spawn(&ingest(ctx, "scale_missing_rows", &extra))
        })
        .collect::<Result<_>>()?;
    for (i, child) in children.into_iter().enumerate() {
        let (code, stdout, stderr) = finish(child)?;
        ensure(code == 3 && stdout.is_empty(), || format!("instance {i}: exit {code}: {stdout}{stderr}"))?;
        ensure(stderr.contains("instance 3 (not registered) of 4") && stderr.contains("--start-timeout"), || {
            format!("instance {i}: {stderr}")
        })?;
    }
    // No instance kept a run: `dbload report` says who registered, and how they ended.
    let (code, text, stderr) = dbload_bin(&["report", "--run-id", &run_id, "--results-url", &store], &[]);
    ensure(code == 1 && text.is_empty() && stderr.contains("no instance kept a run; registered: 0 on "), || {
        format!("report: exit {code}: {text}{stderr}")
    })?;
    ensure(stderr.contains(" failed (") && stderr.contains("2 on "), || stderr.clone())
}

/// A run whose instance 1 failed (its --fail-if held) and whose instance 2
/// never ran: the merged report names both and fails, exit 1. `timeit`,
/// started at a given time (`--start-at`), as with a store that cannot
/// coordinate; its --repeat is split across the instances.
fn a_failed_or_missing_instance_fails_the_merged_report(ctx: &Ctx) -> Result<()> {
    let store = store(ctx, "scale_failed")?;
    let run_id = format!("failed-{}", std::process::id());
    let at = (chrono::Utc::now() + chrono::Duration::seconds(1)).to_rfc3339();
    let children: Vec<Child> = (0..2)
        .map(|i| {
            let mut args: Vec<String> =
                ["timeit", "--url", &ctx.url, "-s", "select 1", "--repeat", "100", "--quiet"].map(String::from).into();
            args.extend(["--instance".into(), format!("{i}/3"), "--run-id".into(), run_id.clone()]);
            args.extend(["--results-url".into(), store.clone(), "--start-at".into(), at.clone()]);
            args.extend(["--no-results".into(), "--output".into(), "json".into()]);
            if i == 1 {
                args.extend(["--fail-if".into(), "qps > 0".into()]);
            }
            spawn(&args)
        })
        .collect::<Result<_>>()?;
    let mut counts = Vec::new();
    for (i, child) in children.into_iter().enumerate() {
        let (code, stdout, stderr) = finish(child)?;
        ensure(code == i as i32, || format!("instance {i}: exit {code}: {stderr}"))?;
        counts.push(json(&stdout)?["count"].as_u64());
    }
    ensure(counts == [Some(34), Some(33)], || format!("queries per instance {counts:?}"))?;
    let (code, text, stderr) = dbload_bin(&["report", "--run-id", &run_id, "--results-url", &store], &[]);
    ensure(code == 1, || format!("report: exit {code}: {text}{stderr}"))?;
    ensure(text.contains("2 of 3 instances kept, status failed"), || text.clone())?;
    ensure(text.contains("instance 2: no kept run (not registered)"), || text.clone())?;
    ensure(text.lines().any(|l| l.trim_start().starts_with("queries ") && l.contains("67")), || text.clone())?;
    ensure(text.lines().any(|l| l.trim_start().starts_with("instance 1 (") && l.contains("failed, exit 1")), || {
        text.clone()
    })
}

/// What cannot be split across instances refuses --instance (exit 2, said
/// why) before it connects; so do repeats of a distributed run.
fn commands_that_cannot_split_refuse_instance(ctx: &Ctx) -> Result<()> {
    let given = ["--instance", "0/2", "--run-id", "r", "--results-url", &ctx.url];
    let with = |argv: &[&'static str]| [argv, &given[..]].concat();
    refused(
        &with(&["insert-fake-data", "--url", "postgres://u@127.0.0.1:1/d", "--table", "t"]),
        "insert-fake-data does not split",
    )?;
    refused(
        &with(&["export", "--url", "postgres://u@127.0.0.1:1/d", "--table", "t", "--out", "/tmp"]),
        "export reads one table",
    )?;
    refused(&with(&["ingest", "--url", "postgres://u@127.0.0.1:1/d", "--runs", "2"]), "distributed runs of their own")?;
    refused(&["ingest", "--url", "postgres://u@127.0.0.1:1/d", "--instance", "0/2", "--run-id", "r"], "--start-at")?;
    refused(
        &["ingest", "--instance", "2/2", "--run-id", "r", "--start-at", "2026-01-01T00:00:00Z"],
        "--instance \"2/2\"",
    )
}

/// The start barrier holds: instances started 300 ms apart let their
/// workers go within 100 ms of each other (the common start is set by the
/// server's clock once all are ready).
fn instances_start_together(ctx: &Ctx) -> Result<()> {
    let store = store(ctx, "scale_start")?;
    let run_id = format!("start-{}", std::process::id());
    let mut children = Vec::new();
    for i in 0..4 {
        let instance = format!("{i}/4");
        let extra = ["--instance", &instance, "--run-id", &run_id, "--results-url", &store, "--workers", "1"];
        children.push(spawn(&ingest(ctx, "scale_start_rows", &extra))?);
        std::thread::sleep(Duration::from_millis(300));
    }
    let mut starts = Vec::new();
    for (i, child) in children.into_iter().enumerate() {
        let (code, stdout, stderr) = finish(child)?;
        ensure(code == 0, || format!("instance {i}: exit {code}: {stderr}"))?;
        let report = json(&stdout)?;
        let at = report["run"]["instance"]["started_at"].as_str().context("run.instance.started_at")?.to_string();
        starts.push(chrono::DateTime::parse_from_rfc3339(&at)?.timestamp_millis());
    }
    let spread = starts.iter().max().unwrap_or(&0) - starts.iter().min().unwrap_or(&0);
    eprintln!("scale::instances_start_together: the 4 instances started within {spread} ms");
    ensure(spread <= 100, || format!("the instances started {spread} ms apart: {starts:?}"))
}

/// A store of schema version 1 (no `dbload_instances`) takes runs again:
/// the table is added and the comment says version 2.
fn a_version_1_store_is_upgraded(ctx: &Ctx) -> Result<()> {
    let store = store(ctx, "scale_v1")?;
    let timeit =
        ["timeit", "--url", &ctx.url, "-s", "select 1", "--repeat", "5", "--no-results", "--results-url", &store];
    let (code, _, stderr) = dbload_bin(&timeit, &[]);
    ensure(code == 0 && !stderr.contains("warning"), || format!("exit {code}: {stderr}"))?;
    ctx.query(
        "DROP TABLE scale_v1.dbload_instances; \
         COMMENT ON TABLE scale_v1.dbload_runs IS 'dbload results store, schema version 1 (docs/results.md)'",
    )?;
    let (code, _, stderr) = dbload_bin(&timeit, &[]);
    ensure(code == 0 && !stderr.contains("warning"), || format!("exit {code}: {stderr}"))?;
    let found = ctx.scalar(
        "SELECT obj_description('scale_v1.dbload_runs'::regclass, 'pg_class') || ', ' || \
         (to_regclass('scale_v1.dbload_instances') IS NOT NULL) || ', ' || (SELECT count(*) FROM scale_v1.dbload_runs)",
    )?;
    ensure(found == "dbload results store, schema version 2 (docs/results.md), true, 2", || found.clone())
}
