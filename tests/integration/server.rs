//! The server's timeline of a run, against the real server: what another
//! session does to it while the run runs (a CHECKPOINT, a lock held on the
//! run's table) shows in the seconds it did it, and a dip that coincided
//! with it is explained by it; a role that cannot see every session is
//! told what it could not see, and its run finishes. The engines' own
//! parts run against a real TimescaleDB, Citus and CrateDB when their URLs
//! are set (`DBLOAD_TEST_TIMESCALEDB_URL`, `DBLOAD_TEST_CITUS_URL`,
//! `DBLOAD_TEST_CRATEDB_URL`, `DBLOAD_TEST_CRATEDB_HTTP_URL`).

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::engines::{engine_url, CITUS, CRATEDB_HTTP, CRATEDB_PG, TIMESCALEDB};
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
        (
            "server::timescaledb_chunks_created_are_in_the_seconds_they_were_made",
            &[TIMESCALEDB],
            timescaledb_chunks_created_are_in_the_seconds_they_were_made,
        ),
        ("server::citus_shows_each_worker_nodes_share", &[CITUS], citus_shows_each_worker_nodes_share),
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

/// The engine's figure `name` in each sampled second where it is above 0, as (second, figure).
fn engine_seconds(server: &serde_json::Value, name: &str) -> Vec<(u64, f64)> {
    let seconds = server["seconds"].as_array().map(Vec::as_slice).unwrap_or_default();
    let figure = |s: &serde_json::Value| Some((s["second"].as_u64()?, s["engine"][name].as_f64()?));
    seconds.iter().filter_map(figure).filter(|(_, n)| *n > 0.0).collect()
}

/// Issue 34: a 10 s ingest into a hypertable of 15-minute chunks, whose
/// data runs hours ahead each second, makes chunks all through the run:
/// the seconds that made them say how many, their sum is at most the
/// chunks the table has, and each is marked on the charts. A compression
/// policy added 3 s in starts a compression job that the seconds show too.
fn timescaledb_chunks_created_are_in_the_seconds_they_were_made(_: &Ctx) -> Result<()> {
    let ts = Ctx::from_url(&engine_url(TIMESCALEDB)?)?;
    let table = "server_tsdb_chunks";
    // `at` waits for the table this run makes, not an earlier run's.
    ts.query(&format!("DROP TABLE IF EXISTS {table}"))?;
    let policy = format!(
        "ALTER TABLE {table} SET (timescaledb.compress, timescaledb.compress_segmentby = 'device_id'); \
         SELECT add_compression_policy('{table}', INTERVAL '1 hour')"
    );
    let args = format!(
        "--duration 10 --workers 2 --devices 10 --chunk-interval 900 --table {table} --drop-table \
         --start 2024-01-01T00:00:00Z"
    );
    let (out, other) = std::thread::scope(|s| {
        let other = s.spawn(|| at(&ts, table, Duration::from_secs(3), &policy));
        (ts.ingest(&args), other.join())
    });
    other.map_err(|_| anyhow::anyhow!("the other session panicked"))??;
    let out = out?;
    ensure(out.exit_code == 0, || format!("exit {}: {:?}", out.exit_code, out.report.error_classes))?;
    let report = serde_json::to_value(&out.report)?;
    let server = &report["server"];
    let made = engine_seconds(server, "chunks created");
    ensure(made.len() >= 4, || format!("chunks created in {made:?}: {server:#}"))?;
    let chunks: f64 = ts.scalar(&format!("SELECT count(*) FROM show_chunks('{table}')"))?.parse()?;
    let counted: f64 = made.iter().map(|(_, n)| n).sum();
    ensure(counted <= chunks && counted >= chunks / 2.0, || format!("{counted} chunks counted of {chunks}: {made:?}"))?;
    let events = server["events"].as_array().context("no server events")?;
    let marked: Vec<u64> =
        events.iter().filter(|e| e["kind"] == "chunks_created").filter_map(|e| e["second"].as_u64()).collect();
    ensure(marked == made.iter().map(|(s, _)| *s).collect::<Vec<_>>(), || {
        format!("markers at {marked:?}: {events:?}")
    })?;
    let started = engine_seconds(server, "compression jobs started");
    ensure(started.iter().any(|(s, _)| *s >= 2), || format!("compression jobs started in {started:?}: {server:#}"))?;
    ensure(events.iter().any(|e| e["kind"] == "jobs_started" && e["what"] == "a compression job started"), || {
        format!("no compression job marked: {events:?}")
    })?;
    let unseen = server["unseen"].to_string();
    ensure(!unseen.contains("own figures"), || format!("unseen: {unseen}"))?;
    let text = dbload::report::ingest::render(&out.report);
    ensure(text.contains(" chunks created at ") && text.contains("compression job started at "), || text.clone())
}

/// Issue 34: a Citus ingest into a table distributed over the cluster's
/// worker nodes shows each node's share of the run's active sessions, the
/// shares adding up to the whole, in JSON and in text; the coordinator is
/// no longer said to be sampled alone.
fn citus_shows_each_worker_nodes_share(_: &Ctx) -> Result<()> {
    let c = Ctx::from_url(&engine_url(CITUS)?)?;
    let out = c.ingest(
        "--duration 6 --workers 4 --shards 8 --distribution-column device_id --method insert --sample-interval 250ms \
         --table server_citus_nodes --drop-table --start 2024-01-01T00:00:00Z",
    )?;
    ensure(out.exit_code == 0, || format!("exit {}: {:?}", out.exit_code, out.report.error_classes))?;
    let report = serde_json::to_value(&out.report)?;
    let server = &report["server"];
    let nodes = server["nodes"].as_array().context("no server.nodes")?;
    let workers: u64 = c
        .scalar("SELECT count(*) FROM pg_dist_node WHERE isactive AND noderole = 'primary' AND shouldhaveshards AND groupid <> 0")?
        .parse()?;
    ensure(nodes.len() as u64 == workers && workers >= 2, || format!("{workers} worker nodes, shares: {nodes:#?}"))?;
    let shares: Vec<f64> = nodes.iter().filter_map(|n| n["share"].as_f64()).collect();
    ensure(shares.iter().all(|s| *s > 0.1) && (shares.iter().sum::<f64>() - 1.0).abs() < 1e-6, || {
        format!("shares {shares:?}: {nodes:#?}")
    })?;
    let node = nodes[0]["node"].as_str().unwrap_or_default();
    let per_second = engine_seconds(server, &format!("node {node} active sessions"));
    ensure(per_second.len() >= 3, || format!("{node} active in {per_second:?}: {server:#}"))?;
    let unseen = server["unseen"].to_string();
    ensure(!unseen.contains("coordinator alone") && !unseen.contains("own figures"), || format!("unseen: {unseen}"))?;
    let text = dbload::report::ingest::render(&out.report);
    ensure(text.contains("Nodes:") && text.contains(node), || text.clone())
}
