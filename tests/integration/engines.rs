//! Engines: what dbload makes of each engine's table flags. PostgreSQL's run
//! against the harness's server; TimescaleDB, Citus and CrateDB run against
//! a real server when `DBLOAD_TEST_TIMESCALEDB_URL`, `DBLOAD_TEST_CITUS_URL`,
//! `DBLOAD_TEST_CRATEDB_URL` (PostgreSQL protocol) or
//! `DBLOAD_TEST_CRATEDB_HTTP_URL` is set, and say that they were skipped
//! otherwise.

use anyhow::{Context, Result};

use dbload::dialect::Engine;
use dbload::driver::admin::Admin;
use dbload::error::exit_code;
use dbload::report::ingest::IngestReport;
use dbload::target::Target;
use dbload::Finished;

use crate::support::{config, dbload_bin, ensure, expected, found, ingest_args, Ctx};
use crate::Phase::Parallel;
use crate::{EngineTest, Registered};

pub fn tests() -> Vec<Registered> {
    vec![
        ("engines::postgres_is_detected_and_named", postgres_is_detected_and_named, Parallel),
        ("engines::postgres_hash_partitions", postgres_hash_partitions, Parallel),
        ("engines::postgres_time_partitions_unlogged", postgres_time_partitions_unlogged, Parallel),
        ("engines::postgres_unlogged_table", postgres_unlogged_table, Parallel),
        ("engines::flags_an_engine_lacks_are_refused", flags_an_engine_lacks_are_refused, Parallel),
    ]
}

pub fn engine_tests() -> Vec<EngineTest> {
    vec![
        ("engines::timescaledb_hypertable_chunks", &[TIMESCALEDB], timescaledb_hypertable_chunks),
        ("engines::citus_distributed_table", &[CITUS], citus_distributed_table),
        ("engines::cratedb_http_bulk", &[CRATEDB_HTTP], cratedb_http_bulk),
        ("engines::cratedb_postgres_protocol", &[CRATEDB_PG], cratedb_postgres_protocol),
    ]
}

/// The variables that name the engines' servers (`postgres://` URLs, and
/// `cratedb://` for CrateDB's HTTP endpoint).
pub(crate) const TIMESCALEDB: &str = "DBLOAD_TEST_TIMESCALEDB_URL";
pub(crate) const CITUS: &str = "DBLOAD_TEST_CITUS_URL";
pub(crate) const CRATEDB_HTTP: &str = "DBLOAD_TEST_CRATEDB_HTTP_URL";
pub(crate) const CRATEDB_PG: &str = "DBLOAD_TEST_CRATEDB_URL";

const START: &str = "--start 2024-01-01T00:00:00Z";

/// `dbload ingest --url URL --quiet ARGS` in process, for any target.
fn ingest(url: &str, args: &str) -> Result<Finished<IngestReport>> {
    let mut out = Vec::new();
    dbload::ingest(ingest_args(&format!("--url {url} --quiet {args}")), &|_| None, &mut out)
}

/// The URL of a real engine's server from `var`. Unset, the test is
/// ignored (see `EngineTest`), so this fails only when it is run anyway.
pub(crate) fn engine_url(var: &str) -> Result<String> {
    std::env::var(var).ok().filter(|u| !u.is_empty()).with_context(|| format!("set {var} to the URL of a real server"))
}

/// Ingests into `table` and checks the count and content against the generator.
fn exact(ctx: &Ctx, table: &str, args: &str) -> Result<IngestReport> {
    let args = format!("{args} {START} --table {table} --drop-table --verify");
    let out = ctx.ingest(&args)?;
    ensure(out.exit_code == 0, || format!("{args}: exit {} {:?}", out.exit_code, out.report.error_classes))?;
    let cfg = config(&args);
    let (want, got) = (expected(&cfg), found(ctx, &cfg, &cfg.table.sql())?);
    ensure(got == want, || format!("{args}: server has {got:?}, generator made {want:?}"))?;
    Ok(out.report)
}

fn postgres_is_detected_and_named(ctx: &Ctx) -> Result<()> {
    let r = exact(ctx, "engine_pg", "--rows 500")?;
    ensure(r.setup.server.engine == Some(Engine::Postgres), || format!("{:?}", r.setup.server.engine))?;
    let text = dbload::report::ingest::render(&r);
    ensure(text.contains("(server, PostgreSQL 1"), || text.clone())
}

fn postgres_hash_partitions(ctx: &Ctx) -> Result<()> {
    for (table, model) in [("hash_parts_m", "--metrics 2"), ("hash_parts_c", "--model cpu")] {
        let r = exact(ctx, table, &format!("{model} --partitions 4 --workers 2 --rows 3000"))?;
        let parts = ctx.scalar(&format!("SELECT count(*) FROM pg_inherits WHERE inhparent = '{table}'::regclass"))?;
        ensure(parts == "4", || format!("{table}: {parts} partitions"))?;
        ensure(r.setup.layout.get("partitions").map(String::as_str) == Some("4"), || format!("{:?}", r.setup.layout))?;
        // Rows spread over the partitions, not all in one.
        let used = ctx.scalar(&format!("SELECT count(DISTINCT tableoid) FROM {table}"))?;
        ensure(used.parse::<u32>()? >= 2, || format!("{table}: rows in {used} partition(s)"))?;
    }
    Ok(())
}

fn postgres_time_partitions_unlogged(ctx: &Ctx) -> Result<()> {
    let table = "time_parts";
    exact(ctx, table, "--partitions 3 --partition-by time --unlogged --workers 2 --devices 2 --rows 6000")?;
    let rows = ctx.query(&format!(
        "SELECT c.relname, c.relpersistence, (SELECT count(*) FROM {table} t WHERE t.tableoid = c.oid) \
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '{table}'::regclass ORDER BY 1"
    ))?;
    ensure(rows.len() == 4, || format!("{rows:?}"))?;
    for r in &rows {
        ensure(r[1].as_deref() == Some("u"), || format!("partition not unlogged: {r:?}"))?;
        let n: u64 = r[2].as_deref().unwrap_or("0").parse()?;
        let default = r[0].as_deref() == Some("time_parts_pdefault");
        ensure(if default { n == 0 } else { n > 0 }, || format!("time ranges do not cover the data: {rows:?}"))?;
    }
    Ok(())
}

fn postgres_unlogged_table(ctx: &Ctx) -> Result<()> {
    exact(ctx, "unlogged_t", "--unlogged --rows 100")?;
    let p = ctx.scalar("SELECT relpersistence FROM pg_class WHERE oid = 'unlogged_t'::regclass")?;
    ensure(p == "u", || format!("relpersistence {p}"))
}

fn flags_an_engine_lacks_are_refused(ctx: &Ctx) -> Result<()> {
    // Issue 32: `--shards` is accepted on PostgreSQL and said not applied
    // (node_ingest::shards_on_postgres_run_and_say_they_were_not_applied).
    let cases = [
        ("--replicas 1", "--replicas"),
        ("--chunk-interval 3600", "TimescaleDB"),
        ("--distribution-column device_id", "Citus"),
        ("--engine timescaledb", "CREATE EXTENSION timescaledb"),
        ("--engine citus", "CREATE EXTENSION citus"),
        ("--engine cratedb", "not CrateDB"),
        ("--method bulk", "cratedb://"),
    ];
    for (args, culprit) in cases {
        let e = match ctx.ingest(&format!("--rows 10 --table refused_t --drop-table {args}")) {
            Ok(o) => anyhow::bail!("{args}: ran, exit {}", o.exit_code),
            Err(e) => e,
        };
        ensure(exit_code(&e) == 2, || format!("{args}: exit {} ({e})", exit_code(&e)))?;
        ensure(e.to_string().contains(culprit), || format!("{args}: {e}"))?;
    }
    // Refused before any DDL ran.
    ensure(ctx.scalar("SELECT to_regclass('refused_t') IS NULL")? == "t", || "refused_t was created".into())
}

fn timescaledb_hypertable_chunks(_: &Ctx) -> Result<()> {
    let url = engine_url(TIMESCALEDB)?;
    let ts = Ctx::from_url(&url)?;
    // Seed 004: one-day chunks over two days of data give two chunks: 100,000
    // readings one second apart from midnight end on the second day.
    let r = exact(&ts, "tsdb_m", "--workers 1 --devices 1 --measurements 100000 --chunk-interval 86400")?;
    ensure(r.setup.server.engine == Some(Engine::Timescaledb), || format!("{:?}", r.setup.server.engine))?;
    let chunks = ts.scalar("SELECT count(*) FROM show_chunks('tsdb_m')")?;
    ensure(chunks == "2", || format!("{chunks} chunks"))?;
    ensure(r.setup.layout.get("chunks").map(String::as_str) == Some("2"), || format!("{:?}", r.setup.layout))?;
    // The cpu model and the upsert path on a hypertable.
    exact(&ts, "tsdb_c", "--model cpu --rows 2000 --method insert --upsert")?;
    // --no-hypertables: a plain table on the same server.
    exact(&ts, "tsdb_plain", "--rows 1000 --no-hypertables")?;
    let n =
        ts.scalar("SELECT count(*) FROM timescaledb_information.hypertables WHERE hypertable_name = 'tsdb_plain'")?;
    ensure(n == "0", || "--no-hypertables made a hypertable".into())
}

fn citus_distributed_table(_: &Ctx) -> Result<()> {
    let url = engine_url(CITUS)?;
    let c = Ctx::from_url(&url)?;
    for method in ["copy", "insert"] {
        let table = format!("citus_m_{method}");
        let r = exact(
            &c,
            &table,
            &format!("--shards 8 --distribution-column device_id --method {method} --workers 2 --rows 4000"),
        )?;
        ensure(r.setup.server.engine == Some(Engine::Citus), || format!("{:?}", r.setup.server.engine))?;
        ensure(r.setup.layout.get("shards").map(String::as_str) == Some("8"), || format!("{:?}", r.setup.layout))?;
        // Shards are placed on more than one node.
        let nodes = c.scalar(&format!(
            "SELECT count(DISTINCT (nodename, nodeport)) FROM citus_shards WHERE table_name = '{table}'::regclass"
        ))?;
        ensure(nodes.parse::<u32>()? >= 2, || format!("{table}: shards on {nodes} node(s)"))?;
    }
    // EXPLAIN capture shows the distributed plan: 8 tasks, one task's plan.
    let argv = ["timeit", "--url", &url, "-s", "select count(*) from citus_m_copy", "--repeat", "3", "--explain"];
    let (code, stdout, stderr) = dbload_bin(&[&argv[..], &["--output", "json", "--quiet"]].concat(), &[]);
    ensure(code == 0, || format!("timeit --explain: exit {code}: {stderr}"))?;
    let report: serde_json::Value = serde_json::from_str(&stdout)?;
    let d = &report["queries"][0]["explain"]["distributed"];
    ensure(d["task_count"] == 8 && d["task_top_node"] == "Aggregate", || format!("distributed plan: {d}"))?;
    // export from a distributed table keeps the column names (a pushed-down
    // subquery's record would make them f1, f2, ...).
    let dir = tempfile::tempdir()?;
    let out = dir.path().to_str().unwrap_or_default();
    // Without --workers: one worker on Citus (block ranges do not split its tables).
    let argv = ["export", "--url", &url, "--table", "citus_m_copy", "--out", out, "--quiet"];
    let (code, _, stderr) = dbload_bin(&argv, &[]);
    ensure(code == 0, || format!("export: exit {code}: {stderr}"))?;
    let lines = std::fs::read_to_string(dir.path().join("citus_m_copy_0.json"))?;
    ensure(lines.lines().count() == 4000, || format!("{} lines exported", lines.lines().count()))?;
    let first: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap_or_default())?;
    ensure(first.get("device_id").is_some() && first.get("f1").is_none(), || format!("exported row {first}"))?;
    exact(&c, "citus_ref", "--reference-table --rows 500")?;
    let kind = c.scalar("SELECT partmethod FROM pg_dist_partition WHERE logicalrelid = 'citus_ref'::regclass")?;
    ensure(kind == "n", || format!("reference table partmethod {kind}"))
}

/// Runs `sql` through dbload's own admin connection, for CrateDB over either protocol.
pub(crate) fn crate_rows(target: &Target, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async {
        let mut admin: Admin = target.admin().await?;
        admin.rows(sql).await
    })
}

pub(crate) fn crate_target(url: &str) -> Result<Target> {
    Ok(match url.starts_with("cratedb://") {
        true => Target::Crate(dbload::driver::cratedb_http::CrateTarget::parse(url, "test URL", false)?),
        false => {
            Target::Pg { pg: Box::new(dbload::driver::PgTarget::from_url(url, "test URL", &|_| None)?), engine: None }
        }
    })
}

pub(crate) fn crate_count(target: &Target, table: &str) -> Result<u64> {
    crate_rows(target, &format!("REFRESH TABLE {table}"))?;
    let rows = crate_rows(target, &format!("SELECT count(*) FROM {table}"))?;
    Ok(rows[0][0].as_deref().unwrap_or("0").parse()?)
}

fn cratedb_http_bulk(_: &Ctx) -> Result<()> {
    let url = engine_url(CRATEDB_HTTP)?;
    let target = crate_target(&url)?;
    // Seed 001's shape: cpu model, shards and replicas, bulk requests.
    let out = ingest(&url, &format!("--model cpu --shards 3 --replicas 0 --table crate_cpu --drop-table --rows 3000 --batch-size 500 --workers 2 --verify {START}"))?;
    ensure(out.exit_code == 0, || format!("exit {} {:?}", out.exit_code, out.report.error_classes))?;
    let s = &out.report.setup;
    ensure(s.server.engine == Some(Engine::Cratedb), || format!("{:?}", s.server.engine))?;
    // Every node's address, as the nodes publish it.
    let nodes = s.server.server_address.as_deref().unwrap_or("");
    ensure(nodes.split(", ").all(|a| a.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok())), || {
        format!("server_address {nodes:?}")
    })?;
    ensure(
        !nodes.is_empty() && s.layout.get("nodes").map(String::as_str) == Some(&*nodes.split(", ").count().to_string()),
        || format!("server_address {nodes:?}, layout {:?}", s.layout),
    )?;
    ensure(s.layout.get("shards").map(String::as_str) == Some("3"), || format!("{:?}", s.layout))?;
    ensure(out.report.latencies.server_duration_ms.is_some(), || "no server-side durations".into())?;
    ensure(crate_count(&target, "crate_cpu")? == 3000, || "count after REFRESH".into())?;
    for method in ["insert", "unnest"] {
        let out = ingest(
            &url,
            &format!(
                "--method {method} --table crate_m_{method} --drop-table --rows 1200 --batch-size 500 --verify {START}"
            ),
        )?;
        ensure(out.exit_code == 0, || format!("{method}: exit {} {:?}", out.exit_code, out.report.error_classes))?;
        ensure(crate_count(&target, &format!("crate_m_{method}"))? == 1200, || format!("{method}: count"))?;
    }
    // A failed row is counted as failed: the first 1,000 rows again collide
    // on the primary key, the next 1,000 are new.
    let base = format!("--table crate_dup --workers 1 --batch-size 400 {START}");
    let first = ingest(&url, &format!("{base} --drop-table --rows 1000"))?;
    ensure(first.exit_code == 0, || format!("first: {:?}", first.report.error_classes))?;
    let again = ingest(&url, &format!("{base} --append --rows 2000"))?;
    ensure(again.exit_code == 1, || format!("duplicates: exit {}", again.exit_code))?;
    let (rows, failed) = (again.report.throughput.rows, again.report.throughput.failed_rows);
    ensure(rows == 1000 && failed == 1000, || format!("written {rows}, failed {failed}"))?;
    ensure(crate_count(&target, "crate_dup")? == 2000, || "count after duplicates".into())?;
    // A query whose placeholders its params do not fill is refused before
    // the run (exit 2), as over the PostgreSQL protocol, in both of
    // CrateDB's forms ($1 and ?); a placeholder inside quotes is text.
    for sql in ["select count(*) from crate_dup where device_id = $1", "select ? + ?"] {
        let (code, _, stderr) = dbload_bin(&["timeit", "--url", &url, "-s", sql, "-t", "3", "--no-results"], &[]);
        ensure(code == 2 && stderr.contains("placeholder"), || format!("{sql}: exit {code}: {stderr}"))?;
    }
    let (code, _, stderr) =
        dbload_bin(&["timeit", "--url", &url, "-s", "select '$1?'", "-t", "3", "--no-results"], &[]);
    ensure(code == 0, || format!("a quoted $1: exit {code}: {stderr}"))
}

fn cratedb_postgres_protocol(_: &Ctx) -> Result<()> {
    let url = engine_url(CRATEDB_PG)?;
    let target = crate_target(&url)?;
    for method in ["insert", "unnest"] {
        let table = format!("crate_pg_{method}");
        let out = ingest(&url, &format!("--model cpu --method {method} --table {table} --drop-table --rows 1500 --batch-size 400 --verify {START}"))?;
        ensure(out.exit_code == 0, || format!("{method}: exit {} {:?}", out.exit_code, out.report.error_classes))?;
        ensure(out.report.setup.server.engine == Some(Engine::Cratedb), || {
            format!("{:?}", out.report.setup.server.engine)
        })?;
        // The node's address as this run reached it: its PostgreSQL port, not its HTTP one.
        let port = url.rsplit('@').next().and_then(|a| a.split('/').next()).and_then(|a| a.rsplit_once(':'));
        let address = out.report.setup.server.server_address.as_deref().unwrap_or_default();
        ensure(port.is_some_and(|(_, p)| address.ends_with(&format!(":{p}"))), || {
            format!("server_address {address:?} for {url}")
        })?;
        ensure(crate_count(&target, &table)? == 1500, || format!("{method}: count"))?;
    }
    // The default batch (10,000 rows × 12 columns) is split into statements
    // within CrateDB's statement length.
    let out = ingest(&url, &format!("--table crate_pg_big --drop-table --rows 12000 --workers 1 --verify {START}"))?;
    ensure(out.exit_code == 0, || format!("big batches: exit {} {:?}", out.exit_code, out.report.error_classes))?;
    ensure(crate_count(&target, "crate_pg_big")? == 12_000, || "big batches: count".into())?;
    // insert-fake-data over the PostgreSQL protocol: CrateDB's own types in text form.
    crate_rows(&target, "DROP TABLE IF EXISTS doc.crate_pg_fake")?;
    let ddl = "CREATE TABLE doc.crate_pg_fake (id int PRIMARY KEY, name text, at timestamp with time zone, \
               tags array(text), attrs object(dynamic), loc geo_point, shape geo_shape, ok boolean)";
    crate_rows(&target, ddl)?;
    let (code, _, stderr) = dbload_bin(
        &["insert-fake-data", "--url", &url, "--table", "crate_pg_fake", "--num-records", "1000", "--quiet"],
        &[],
    );
    ensure(code == 0, || format!("insert-fake-data: exit {code}: {stderr}"))?;
    ensure(crate_count(&target, "doc.crate_pg_fake")? == 1000, || "insert-fake-data: count".into())?;
    // geo_shape is json to this protocol, which reads GeoJSON (WKT failed every row).
    let shapes = crate_rows(&target, "SELECT count(*) FROM doc.crate_pg_fake WHERE shape IS NOT NULL")?;
    ensure(shapes[0][0].as_deref() == Some("1000"), || format!("geo_shape values: {shapes:?}"))?;
    // The same rows again into a table with a primary key: CrateDB takes a
    // multi-row INSERT without an error and writes none of them (its
    // "INSERT 0 0"). They are failed, not "not attempted". Small batches:
    // CrateDB 6.4.3 does not answer such an INSERT of 50 rows or more.
    crate_rows(&target, "DROP TABLE IF EXISTS doc.crate_pg_dup")?;
    crate_rows(&target, "CREATE TABLE doc.crate_pg_dup (id int PRIMARY KEY, name text)")?;
    let dup =
        ["insert-fake-data", "--url", &url, "--table", "crate_pg_dup", "--num-records", "20", "--bulk-size", "10"];
    let dup = [&dup[..], &["--concurrency", "1", "--quiet", "--no-results", "--output", "json"]].concat();
    let (code, _, stderr) = dbload_bin(&dup, &[]);
    ensure(code == 0, || format!("insert-fake-data: exit {code}: {stderr}"))?;
    crate_rows(&target, "REFRESH TABLE doc.crate_pg_dup")?;
    let (code, again, stderr) = dbload_bin(&dup, &[]);
    let again: serde_json::Value = serde_json::from_str(&again).with_context(|| format!("exit {code}: {stderr}"))?;
    let accounting = &again["accounting"];
    ensure(code == 1 && accounting["ok"] == 0 && accounting["failed"] == 20 && accounting["unattempted"] == 0, || {
        format!("the same rows again: exit {code}, {again}")
    })?;
    ensure(again["error_classes"][0]["class"] == "not written", || again["error_classes"].to_string())?;
    // A query run names why there are no pg_stat_statements counters.
    let (code, timed, stderr) =
        dbload_bin(&["timeit", "--url", &url, "-s", "select 1", "-t", "3", "--no-results", "--output", "json"], &[]);
    let timed: serde_json::Value = serde_json::from_str(&timed).with_context(|| format!("exit {code}: {stderr}"))?;
    let why = &timed["server_cost"]["statements_unavailable"];
    ensure(code == 0 && why == "CrateDB has no pg_stat_statements", || format!("timeit: exit {code}, {timed}"))?;
    let e = ingest(&url, "--method copy --table crate_pg_copy --drop-table --rows 10").unwrap_err();
    ensure(exit_code(&e) == 2 && e.to_string().contains("COPY"), || format!("copy on CrateDB: {e}"))
}
