//! The server's timeline of a run, against the real server: what another
//! session does to it while the run runs (a CHECKPOINT, a lock held on the
//! run's table) shows in the seconds it did it, and a dip that coincided
//! with it is explained by it; a role that cannot see every session is
//! told what it could not see, and its run finishes. CrateDB's own figures
//! (jobs, operations, thread pools) against a real CrateDB when
//! `DBLOAD_TEST_CRATEDB_URL` or `DBLOAD_TEST_CRATEDB_HTTP_URL` is set.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::engines::{engine_url, CRATEDB_HTTP, CRATEDB_PG};
use crate::support::{ensure, ingest_args, Ctx};
use crate::Phase::{Parallel, Quiet};
use crate::{EngineTest, Registered};

pub fn tests() -> Vec<Registered> {
    vec![
        (
            "server::a_checkpoint_4_s_into_the_run_is_marked_at_about_4_s",
            a_checkpoint_4_s_into_the_run_is_marked_at_about_4_s,
            Quiet,
        ),
        (
            "server::a_lock_held_from_7_to_9_s_shows_lock_waits_and_the_dip_names_them",
            a_lock_held_from_7_to_9_s_shows_lock_waits_and_the_dip_names_them,
            Quiet,
        ),
        (
            "server::the_clients_busiest_thread_is_shown_each_second",
            the_clients_busiest_thread_is_shown_each_second,
            Quiet,
        ),
        (
            "server::sample_interval_sets_how_often_the_server_is_sampled",
            sample_interval_sets_how_often_the_server_is_sampled,
            Parallel,
        ),
        ("server::a_sample_interval_under_100_ms_is_bad_usage", a_sample_interval_under_100_ms_is_bad_usage, Parallel),
        (
            "server::a_role_without_pg_read_all_stats_is_told_what_it_could_not_see",
            a_role_without_pg_read_all_stats_is_told_what_it_could_not_see,
            Parallel,
        ),
    ]
}

pub fn engine_tests() -> Vec<EngineTest> {
    vec![
        ("server::cratedb_postgres_protocol_jobs_operations_and_pools", &[CRATEDB_PG], cratedb_over_postgres),
        ("server::cratedb_http_jobs_operations_and_pools", &[CRATEDB_HTTP], cratedb_over_http),
    ]
}

/// Issue 34, CrateDB: an ingest into a real CrateDB over `var`'s URL has
/// CrateDB's own figures in its report's server seconds, its jobs running
/// told apart from the others' in every second (by their statements naming
/// its table), and the text report's Engine line; nothing is said to be
/// unseen to CrateDB's superuser. Operations and queues are there only
/// when a sample caught some, so they are not asked for.
fn cratedb_sampled(var: &str, table: &str) -> Result<()> {
    let url = engine_url(var)?;
    let args = format!("--url {url} --quiet --duration 4 --workers 2 --batch-size 500 --table {table} --drop-table");
    let out = dbload::ingest(ingest_args(&args), &|_| None, &mut Vec::new())?;
    ensure(out.exit_code == 0, || format!("exit {}: {:?}", out.exit_code, out.report.error_classes))?;
    let report = serde_json::to_value(&out.report)?;
    let server = &report["server"];
    let seconds = server["seconds"].as_array().with_context(|| format!("no server seconds: {server:#}"))?;
    ensure(seconds.len() >= 3, || format!("{} seconds: {server:#}", seconds.len()))?;
    let jobs = |whose: &str| -> Vec<f64> {
        seconds.iter().filter_map(|s| s["engine"][format!("jobs running: {whose} (max)")].as_f64()).collect()
    };
    let (own, others) = (jobs("the run's"), jobs("others'"));
    ensure(own.len() == seconds.len() && others.len() == seconds.len() && own.iter().any(|n| *n >= 1.0), || {
        format!("the run's jobs {own:?}, others' {others:?}: {server:#}")
    })?;
    ensure(server["failed_samples"] == 0 && server["unseen"] == serde_json::json!([]), || format!("{server:#}"))?;
    let text = dbload::report::ingest::render(&out.report);
    let engine = text.lines().find(|l| l.starts_with("  Engine:   ")).unwrap_or_default();
    ensure(engine.contains("jobs running: the run's at most"), || text.clone())
}

fn cratedb_over_postgres(_: &Ctx) -> Result<()> {
    cratedb_sampled(CRATEDB_PG, "crate_server_pg")
}

fn cratedb_over_http(_: &Ctx) -> Result<()> {
    cratedb_sampled(CRATEDB_HTTP, "crate_server_http")
}

/// Waits until `table` exists (the run made it, just before its workers
/// started), then `after`, then runs `then` on a connection of its own.
fn at(ctx: &Ctx, table: &str, after: Duration, then: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while ctx.scalar(&format!("SELECT to_regclass('{table}') IS NOT NULL"))? != "t" {
        ensure(Instant::now() < deadline, || format!("{table} was never made"))?;
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(after);
    ctx.query(then).map(drop)
}

/// A 12 s ingest into `table` with `args`, while another session runs
/// `sql` `after` the table exists; the report's text, JSON and HTML.
fn ingest_while(ctx: &Ctx, table: &str, after: Duration, sql: &str) -> Result<(String, serde_json::Value, String)> {
    let args = format!("--duration 12 --workers 2 --batch-size 500 --table {table} --drop-table");
    let (ingested, other) = std::thread::scope(|s| {
        let other = s.spawn(|| at(ctx, table, after, sql));
        (ctx.ingest(&args), other.join())
    });
    other.map_err(|_| anyhow::anyhow!("the other session panicked"))??;
    let out = ingested?;
    ensure(out.exit_code == 0, || format!("exit {}: {:?}", out.exit_code, out.report.error_classes))?;
    let html = dbload::report::html::render(&out.report)?;
    Ok((dbload::report::ingest::render(&out.report), serde_json::to_value(&out.report)?, html))
}

/// The seconds of the server's section where `field` is above 0.
fn seconds_with(server: &serde_json::Value, field: &str) -> Vec<u64> {
    let seconds = server["seconds"].as_array().map(Vec::as_slice).unwrap_or_default();
    seconds.iter().filter(|s| s[field].as_u64().unwrap_or(0) > 0).filter_map(|s| s["second"].as_u64()).collect()
}

fn a_checkpoint_4_s_into_the_run_is_marked_at_about_4_s(ctx: &Ctx) -> Result<()> {
    let (text, report, _) = ingest_while(ctx, "server_checkpoint", Duration::from_secs(4), "CHECKPOINT")?;
    let server = &report["server"];
    let at = seconds_with(server, "checkpoints_requested");
    ensure(at.len() == 1 && (3..=5).contains(&at[0]), || format!("requested checkpoints at {at:?}: {server:#}"))?;
    let events = server["events"].as_array().context("no server events")?;
    ensure(events.iter().any(|e| e["kind"] == "checkpoint_requested" && e["second"] == at[0]), || {
        format!("no checkpoint marker: {events:?}")
    })?;
    // What sampling cost: about one statement a second, and the backend's CPU read on the harness's own server.
    let cost = &server["sampler_cost"];
    let qps = cost["queries_per_sec"].as_f64().unwrap_or_default();
    ensure((0.8..1.3).contains(&qps), || format!("sampler cost: {cost}"))?;
    ensure(cost["backend_cpu_share"].is_number(), || format!("sampler cost: {cost}"))?;
    ensure(text.contains(&format!("requested checkpoint at {} s", at[0])), || text.clone())
}

fn a_lock_held_from_7_to_9_s_shows_lock_waits_and_the_dip_names_them(ctx: &Ctx) -> Result<()> {
    let table = "server_locked";
    let hold = format!("BEGIN; LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(2); COMMIT");
    let (text, report, html) = ingest_while(ctx, table, Duration::from_secs(7), &hold)?;
    let server = &report["server"];
    let waited = seconds_with(server, "lock_waits");
    // Seconds since the workers' start, which come a little after the table is made: 6 to 9 s.
    ensure(waited.len() >= 2 && waited.contains(&7) && waited.iter().all(|s| (6..=9).contains(s)), || {
        format!("lock waits at {waited:?}: {server:#}")
    })?;
    let dips = server["dips"].as_array().context("no dips")?;
    let covers = |d: &&serde_json::Value| d["start_s"].as_u64() <= Some(7) && d["end_s"].as_u64() >= Some(7);
    let dip = dips.iter().find(covers);
    let sentence = dip.and_then(|d| d["sentence"].as_str()).unwrap_or_default();
    ensure(sentence.contains("Lock:relation") && sentence.contains("lock waits on the table"), || {
        format!("the dip's sentence: {sentence:?}; dips: {dips:#?}")
    })?;
    ensure(text.contains(sentence), || text.clone())?;
    // The page marks the lock waits on the time charts and stacks the waits under the throughput.
    ensure(
        html.contains("the run&#x27;s sessions&#x27; wait events per second")
            || html.contains("the run's sessions' wait events per second"),
        || "no wait band".into(),
    )?;
    ensure(html.contains("lock waits on the table"), || "no lock marker in the legend".into())
}

fn a_role_without_pg_read_all_stats_is_told_what_it_could_not_see(ctx: &Ctx) -> Result<()> {
    ctx.query(
        "DO $$ BEGIN CREATE ROLE s34_unseeing LOGIN PASSWORD 's34-unseeing'; \
         EXCEPTION WHEN duplicate_object THEN NULL; END $$; GRANT CREATE ON SCHEMA public TO s34_unseeing",
    )?;
    let as_role = Ctx::from_url(&ctx.url.replace("postgres@", "s34_unseeing:s34-unseeing@"))?;
    let out = as_role.ingest("--duration 3 --workers 2 --table server_unseeing --drop-table")?;
    ensure(out.exit_code == 0, || format!("exit {}: {:?}", out.exit_code, out.report.error_classes))?;
    let report = serde_json::to_value(&out.report)?;
    let unseen = report["server"]["unseen"].to_string();
    ensure(unseen.contains("hidden from role s34_unseeing") && unseen.contains("GRANT pg_read_all_stats"), || {
        format!("unseen: {unseen}")
    })?;
    let text = dbload::report::ingest::render(&out.report);
    ensure(text.contains("GRANT pg_read_all_stats TO s34_unseeing"), || text)
}

/// A dry run keeps its producer threads as busy as they can be: each
/// second names the client's busiest thread and how busy it was, and the
/// seconds over 90 % are the ones called saturated, in JSON and in text.
fn the_clients_busiest_thread_is_shown_each_second(_: &Ctx) -> Result<()> {
    let a = crate::support::ingest_args("--dry-run --duration 3 --workers 1 --quiet");
    let out = dbload::ingest(a, &|_| None, &mut Vec::new())?;
    let report = serde_json::to_value(&out.report)?;
    let load = &report["client_saturation"];
    let seconds = load["per_second"].as_array().context("no client_saturation.per_second")?;
    ensure(seconds.len() >= 2, || format!("{load:#}"))?;
    let busy: Vec<f64> = seconds.iter().filter_map(|s| s["busy"].as_f64()).collect();
    ensure(busy.len() == seconds.len() && busy.iter().all(|b| *b > 0.2), || format!("{load:#}"))?;
    ensure(seconds.iter().all(|s| s["thread"].as_str().is_some_and(|t| !t.is_empty())), || format!("{load:#}"))?;
    let over: Vec<u64> = (0..).zip(&busy).filter(|(_, b)| **b > 0.9).map(|(s, _)| s).collect();
    ensure(load["saturated_seconds"] == serde_json::json!(over), || format!("{load:#}"))?;
    let text = dbload::report::ingest::render(&out.report);
    let said =
        if over.is_empty() { "no thread of the client was busy over 90 %" } else { "the client was the bottleneck" };
    ensure(text.contains(said), || text.clone())
}

/// Issue 34, item 3: `--sample-interval 250ms` samples the server four
/// times a second: the report says so, the sampler's statements per second
/// are about 4, and the samples of a second add up into that second.
fn sample_interval_sets_how_often_the_server_is_sampled(ctx: &Ctx) -> Result<()> {
    let out = ctx.ingest("--duration 3 --workers 1 --table server_interval --drop-table --sample-interval 250ms")?;
    ensure(out.exit_code == 0, || format!("exit {}: {:?}", out.exit_code, out.report.error_classes))?;
    let report = serde_json::to_value(&out.report)?;
    let server = &report["server"];
    ensure(server["sampled_every_s"].as_f64() == Some(0.25), || format!("{server:#}"))?;
    let rate = server["sampler_cost"]["queries_per_sec"].as_f64().context("no sampler_cost.queries_per_sec")?;
    ensure((3.0..=5.0).contains(&rate), || format!("{rate} samples/s: {server:#}"))?;
    let seconds = server["seconds"].as_array().context("no server.seconds")?;
    ensure((2..=4).contains(&seconds.len()), || format!("{} seconds: {server:#}", seconds.len()))?;
    // The run's own session, seen in each of a whole second's 4 samples.
    let own =
        |s: &serde_json::Value| s["own_waits"].as_object().map_or(0, |w| w.values().filter_map(|n| n.as_u64()).sum());
    ensure(seconds.iter().any(|s| own(s) > 1), || format!("no second holds several samples: {server:#}"))
}

/// Under 100 ms the sampler would load the server it measures: refused
/// before the run, naming the option and the value.
fn a_sample_interval_under_100_ms_is_bad_usage(ctx: &Ctx) -> Result<()> {
    crate::support::refused(
        &["timeit", "--url", &ctx.url, "-s", "select 1", "--repeat", "10", "--sample-interval", "50ms"],
        "--sample-interval 50ms",
    )
}
