//! What the server paid, against the real server: the table's and its
//! indexes' size as the server's own functions give them, WAL written
//! (and none to speak of for an unlogged table: measured, not guessed),
//! partitions summed, and `pg_stat_statements` deltas per statement on a
//! server that preloads the extension.

use anyhow::{Context, Result};

use dbload::report::meta::{RunStart, Stamped};
use dbload::throwaway::{LocalOptions, LocalPostgres};

use crate::engines::{crate_rows, crate_target, engine_url, CITUS, CRATEDB_HTTP, TIMESCALEDB};
use crate::support::{dbload_bin, ensure, ingest_args, json, Ctx};
use crate::Phase::{Parallel, Quiet};
use crate::{EngineTest, Registered};

pub fn tests() -> Vec<Registered> {
    vec![
        ("server_cost::ingest_reports_the_table_and_its_indexes", ingest_reports_the_table_and_its_indexes, Parallel),
        ("server_cost::a_partitioned_table_sums_its_partitions", a_partitioned_table_sums_its_partitions, Parallel),
        (
            "server_cost::wal_is_measured_and_an_unlogged_table_writes_almost_none",
            wal_is_measured_and_an_unlogged_table_writes_almost_none,
            Quiet,
        ),
        (
            "server_cost::statement_deltas_match_the_calls_dbload_made",
            statement_deltas_match_the_calls_dbload_made,
            Parallel,
        ),
        (
            "server_cost::without_pg_stat_statements_the_report_says_so",
            without_pg_stat_statements_the_report_says_so,
            Parallel,
        ),
        (
            "server_cost::export_and_insert_from_sql_report_their_table",
            export_and_insert_from_sql_report_their_table,
            Parallel,
        ),
        ("server_cost::one_server_has_no_per_node_section", one_server_has_no_per_node_section, Parallel),
    ]
}

/// Against the other engines' servers, when their URLs are set.
pub fn engine_tests() -> Vec<EngineTest> {
    vec![
        ("server_cost::timescaledb_compress_reports_the_ratio", &[TIMESCALEDB], timescaledb_compress_reports_the_ratio),
        ("server_cost::citus_sums_the_shards_on_its_workers", &[CITUS], citus_sums_the_shards_on_its_workers),
        ("server_cost::citus_shows_each_workers_shards_and_rows", &[CITUS], citus_shows_each_workers_shards_and_rows),
        ("server_cost::citus_reference_table_is_one_copy_per_row", &[CITUS], citus_reference_table_is_one_copy_per_row),
        ("server_cost::cratedb_counts_primaries_and_replicas", &[CRATEDB_HTTP], cratedb_counts_primaries_and_replicas),
        ("server_cost::cratedb_shows_each_nodes_shards", &[CRATEDB_HTTP], cratedb_shows_each_nodes_shards),
    ]
}

/// `report` (JSON) follows the schema `schema` (its text).
fn follows(schema: &str, report: &serde_json::Value) -> Result<()> {
    let schema: serde_json::Value = serde_json::from_str(schema).context("schema file")?;
    let validator = jsonschema::validator_for(&schema).context("compiling the schema")?;
    let errors: Vec<String> = validator.iter_errors(report).map(|e| format!("{}: {e}", e.instance_path())).collect();
    ensure(errors.is_empty(), || format!("report against the schema: {errors:?}"))
}

/// Ingests `args` into a new `table` and returns the report's server cost, checked against the schema.
fn ingest_cost(ctx: &Ctx, table: &str, args: &str) -> Result<serde_json::Value> {
    let out = ctx.ingest(&format!("{args} --table {table} --drop-table --verify"))?;
    ensure(out.exit_code == 0, || format!("{args}: exit {} {:?}", out.exit_code, out.report.error_classes))?;
    let run = RunStart::now("dbload ingest".into()).end();
    let report = serde_json::to_value(Stamped { report: &out.report, run: &run })?;
    follows(include_str!("../../schema/report.schema.json"), &report)?;
    let text = dbload::report::ingest::render(&out.report);
    ensure(text.contains("Server cost: table ") && text.contains("B/row"), || text.clone())?;
    let html = dbload::report::html::render(&out.report)?;
    ensure(html.contains("<h3>Server cost</h3>") && html.contains("B/row</b>"), || {
        "no server cost in the HTML".into()
    })?;
    Ok(report["server_cost"].clone())
}

fn int(v: &serde_json::Value, key: &str) -> Result<u64> {
    v[key].as_u64().with_context(|| format!("{key} in {v}"))
}

fn float(v: &serde_json::Value, key: &str) -> Result<f64> {
    v[key].as_f64().with_context(|| format!("{key} in {v}"))
}

/// The report's `table_bytes` and `index_bytes` against the server's own
/// figures for the relations `relations` (a query) lists, asked now: the
/// report measured the table, it did not estimate it. The table's bytes are
/// at least its main forks' and at most its size now (autovacuum, which
/// may run between the report and this check, adds free-space and
/// visibility maps); its indexes' are theirs. Returns the index bytes.
fn sizes_are_the_servers(ctx: &Ctx, cost: &serde_json::Value, relations: &str) -> Result<u64> {
    let sql = format!(
        "SELECT sum(pg_relation_size(r))::text || ' ' || sum(pg_table_size(r))::text || ' ' || \
         sum(pg_indexes_size(r))::text FROM ({relations}) AS t(r)"
    );
    let found = ctx.scalar(&sql)?;
    let figures: Vec<u64> = found.split(' ').map(str::parse).collect::<Result<_, _>>()?;
    let (main, now, indexes) = (figures[0], figures[1], figures[2]);
    let table = int(cost, "table_bytes")?;
    ensure(main > 0 && main <= table && table <= now, || format!("{cost}: main forks {main}, now {now}"))?;
    ensure(int(cost, "index_bytes")? == indexes, || format!("{cost}: indexes {indexes}"))?;
    Ok(indexes)
}

fn ingest_reports_the_table_and_its_indexes(ctx: &Ctx) -> Result<()> {
    let cost = ingest_cost(ctx, "cost_plain", "--rows 20000 --workers 2")?;
    ensure(int(&cost, "table_rows")? == 20_000, || cost.to_string())?;
    let indexes = sizes_are_the_servers(ctx, &cost, "SELECT 'cost_plain'::regclass")?;
    ensure(indexes > 0, || format!("{cost}: the key's index has no size"))?;
    // time, device_id and 10 float8 metrics: ~100 B of row and ~24 B of tuple header.
    let per_row = float(&cost, "bytes_per_row")?;
    ensure((40.0..400.0).contains(&per_row), || format!("{per_row} B/row: {cost}"))?;
    ensure(cost["total_bytes_with_replicas"].is_null() && cost["size_unavailable"].is_null(), || cost.to_string())
}

fn a_partitioned_table_sums_its_partitions(ctx: &Ctx) -> Result<()> {
    let cost = ingest_cost(ctx, "cost_parts", "--rows 12000 --workers 2 --partitions 3")?;
    // The parent holds no rows: its own size is 0, so a report of it alone would be 0.
    let parent = ctx.scalar("SELECT pg_table_size('cost_parts')")?.parse::<u64>()?;
    ensure(parent == 0, || format!("the parent's size is {parent}"))?;
    let partitions = "SELECT inhrelid FROM pg_inherits WHERE inhparent = 'cost_parts'::regclass";
    let indexes = sizes_are_the_servers(ctx, &cost, partitions)?;
    ensure(indexes > 0, || format!("{cost}: the partitions' indexes have no size"))
}

/// In the quiet phase (TIMED): the WAL is the whole server's, and the
/// other tests' writes would be in it.
fn wal_is_measured_and_an_unlogged_table_writes_almost_none(ctx: &Ctx) -> Result<()> {
    let args = "--rows 100000 --workers 2 --batch-size 10000";
    let logged = ingest_cost(ctx, "cost_wal_logged", args)?;
    let unlogged = ingest_cost(ctx, "cost_wal_unlogged", &format!("{args} --unlogged"))?;
    let (wal, per_row) = (int(&logged, "wal_bytes")?, float(&logged, "wal_bytes_per_row")?);
    // Every row's tuple goes to the WAL, with a record header: more than the row itself.
    ensure((50.0..2000.0).contains(&per_row) && wal > 50 * 100_000, || format!("logged: {logged}"))?;
    // An unlogged table's rows write none (here ~0.04 B/row: commit records). The margin is
    // for autovacuum, which may be vacuuming earlier tests' tables meanwhile (WAL is server-wide).
    let unlogged_per_row = float(&unlogged, "wal_bytes_per_row")?;
    ensure(unlogged_per_row < per_row / 4.0, || format!("unlogged {unlogged_per_row} B/row, logged {per_row}"))
}

/// A second throwaway server with pg_stat_statements preloaded (the
/// harness's does not load it: `shared_preload_libraries` is read at start).
fn statement_deltas_match_the_calls_dbload_made(_: &Ctx) -> Result<()> {
    let settings = vec![("shared_preload_libraries".to_string(), "pg_stat_statements".to_string())];
    let server = LocalPostgres::start(&LocalOptions { extra_settings: settings, ..Default::default() })?;
    let ctx = Ctx::new(&server);
    ctx.query("CREATE EXTENSION pg_stat_statements")?;
    let dir = tempfile::tempdir()?;
    let (html_file, json_file) = (dir.path().join("timeit.html"), dir.path().join("timeit.json"));
    let (code, stdout, stderr) = dbload_bin(
        &[
            "timeit",
            "--url",
            &ctx.url,
            "-s",
            "select count(*) from pg_class where relpages >= 0",
            "-s",
            "select pg_sleep(0.001)",
            "--repeat",
            "60",
            "--concurrency",
            "2",
            "--report",
            json_file.to_str().context("a temporary path")?,
            "--html",
            html_file.to_str().context("a temporary path")?,
        ],
        &[],
    );
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    ensure(stdout.contains("Server cost (pg_stat_statements over the run):"), || stdout.clone())?;
    let report = json(&std::fs::read_to_string(&json_file)?)?;
    follows(include_str!("../../schema/query-report.schema.json"), &report)?;
    let html = std::fs::read_to_string(&html_file)?;
    ensure(html.contains("<h3>Server cost</h3>") && html.contains("<th>shared blocks hit</th>"), || html.clone())?;
    let cost = &report["server_cost"];
    let statements = cost["statements"].as_array().with_context(|| cost.to_string())?;
    ensure(cost["statements_unavailable"].is_null() && statements.len() == 2, || cost.to_string())?;
    for s in statements {
        // Each statement ran 60 times; each returns one row.
        ensure(int(s, "calls")? == 60 && int(s, "rows")? == 60, || s.to_string())?;
        ensure(float(s, "total_exec_ms")? > 0.0 && float(s, "mean_exec_ms")? > 0.0, || s.to_string())?;
    }
    // The catalog scan reads pg_class's pages: from shared buffers, or into them.
    let scan = &statements[0];
    ensure(int(scan, "shared_blks_hit")? + int(scan, "shared_blks_read")? >= 60, || scan.to_string())?;
    // Two queries that differ only in a constant are one statement to pg_stat_statements
    // (TSBS's single-groupby-1-1-1 and -1-1-12): one entry naming both, its calls counted once.
    let (one, two) =
        ("select count(*) from pg_class where relpages >= 0", "select count(*) from pg_class where relpages >= 1");
    let (code, stdout, stderr) =
        dbload_bin(&["timeit", "--url", &ctx.url, "-s", one, "-s", two, "--repeat", "30", "--output", "json"], &[]);
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    let report = json(&stdout)?;
    follows(include_str!("../../schema/query-report.schema.json"), &report)?;
    let statements = report["server_cost"]["statements"].as_array().with_context(|| report.to_string())?;
    ensure(statements.len() == 1, || format!("one statement shown as {}: {statements:?}", statements.len()))?;
    let shared = &statements[0];
    ensure(shared["name"] == "s1 + s2" && int(shared, "calls")? == 60, || shared.to_string())?;
    drop(server);
    Ok(())
}

fn without_pg_stat_statements_the_report_says_so(ctx: &Ctx) -> Result<()> {
    let (code, stdout, stderr) = dbload_bin(&["timeit", "--url", &ctx.url, "-s", "select 1", "--repeat", "5"], &[]);
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    ensure(stdout.contains("Server cost: pg_stat_statements is not installed in this database"), || stdout.clone())
}

/// export reports the size of the table it read (no WAL: it writes
/// none); insert-from-sql the size of the table it filled and the WAL.
fn export_and_insert_from_sql_report_their_table(ctx: &Ctx) -> Result<()> {
    ingest_cost(ctx, "cost_src", "--rows 5000 --workers 1")?;
    let dir = tempfile::tempdir()?;
    let out = dir.path().to_str().context("a temporary path")?;
    let (code, stdout, stderr) =
        dbload_bin(&["export", "--url", &ctx.url, "--table", "cost_src", "--out", out, "--output", "json"], &[]);
    ensure(code == 0, || format!("export: exit {code}: {stderr}"))?;
    let report = json(&stdout)?;
    follows(include_str!("../../schema/transfer-report.schema.json"), &report)?;
    let cost = &report["server_cost"];
    sizes_are_the_servers(ctx, cost, "SELECT 'cost_src'::regclass")?;
    ensure(int(cost, "table_rows")? == 5000, || cost.to_string())?;
    ensure(cost["wal_bytes"].is_null() && cost["wal_unavailable"].is_null(), || cost.to_string())?;

    ctx.query("DROP TABLE IF EXISTS cost_dst; CREATE TABLE cost_dst (LIKE cost_src)")?;
    let argv = ["insert-from-sql", "--url", &ctx.url, "--src-url", &ctx.url, "--query", "select * from cost_src"];
    let (code, stdout, stderr) = dbload_bin(&[&argv[..], &["--table", "cost_dst", "--output", "json"]].concat(), &[]);
    ensure(code == 0, || format!("insert-from-sql: exit {code}: {stderr}"))?;
    let report = json(&stdout)?;
    follows(include_str!("../../schema/transfer-report.schema.json"), &report)?;
    let cost = &report["server_cost"];
    sizes_are_the_servers(ctx, cost, "SELECT 'cost_dst'::regclass")?;
    ensure(int(cost, "table_rows")? == 5000, || cost.to_string())?;
    ensure(int(cost, "wal_bytes")? > 0 && float(cost, "wal_bytes_per_row")? > 0.0, || cost.to_string())
}

const START: &str = "--start 2024-01-01T00:00:00Z";

/// Two one-day chunks of 100,000 readings, compressed after the load.
fn timescaledb_compress_reports_the_ratio(_: &Ctx) -> Result<()> {
    let ts = Ctx::from_url(&engine_url(TIMESCALEDB)?)?;
    let args = format!("--workers 1 --devices 1 --measurements 100000 --chunk-interval 86400 --compress {START}");
    let cost = ingest_cost(&ts, "tsdb_cost", &args)?;
    let x = &cost["compression"];
    ensure(int(x, "chunks")? == 2 && int(x, "after_bytes")? < int(x, "before_bytes")?, || cost.to_string())?;
    ensure(float(x, "ratio")? > 1.0, || cost.to_string())?;
    // The size as loaded: the chunks' heap and TOAST, and their indexes.
    let loaded = int(&cost, "table_bytes")? + int(&cost, "index_bytes")?;
    ensure(int(x, "before_bytes")? == loaded && int(&cost, "table_rows")? == 100_000, || cost.to_string())?;
    let now = ts.scalar("SELECT sum(total_bytes) FROM hypertable_detailed_size('tsdb_cost')")?.parse::<u64>()?;
    ensure(int(x, "after_bytes")? <= now, || format!("{cost} vs {now} now"))?;
    ensure(int(&cost, "wal_bytes")? > 0, || cost.to_string())?;
    // The cpu model's chunks are segmented by its tags (one segment per host), as TSBS
    // segments by tags_id, so a query of a few hosts decompresses only theirs.
    let args =
        format!("--model cpu --workers 1 --devices 10 --measurements 4400 --chunk-interval 3600 --compress {START}");
    let cost = ingest_cost(&ts, "tsdb_cost_cpu", &args)?;
    ensure(int(&cost["compression"], "chunks")? == 13, || cost.to_string())?;
    let segments = ts.scalar(
        "SELECT coalesce(string_agg(DISTINCT coalesce(segmentby, 'none'), ','), 'no chunk') \
         FROM timescaledb_information.chunk_compression_settings WHERE hypertable = 'tsdb_cost_cpu'::regclass",
    )?;
    ensure(segments == "tags", || format!("chunks segmented by {segments}"))
}

fn citus_sums_the_shards_on_its_workers(_: &Ctx) -> Result<()> {
    let c = Ctx::from_url(&engine_url(CITUS)?)?;
    let cost = ingest_cost(&c, "citus_cost", &format!("--rows 20000 --shards 4 {START}"))?;
    let total = c.scalar("SELECT citus_total_relation_size('citus_cost')")?.parse::<u64>()?;
    let (table, index) = (int(&cost, "table_bytes")?, int(&cost, "index_bytes")?);
    ensure(table > 0 && index > 0 && table + index == total, || format!("{cost} vs {total}"))?;
    let why = cost["wal_unavailable"].as_str().unwrap_or_default();
    ensure(cost["wal_bytes"].is_null() && why.contains("worker nodes"), || cost.to_string())
}

/// A reference table has a full copy on every node, and Citus' size
/// functions add them all: its bytes per row are one copy's, and every
/// copy's bytes are said as the bytes with replicas (as CrateDB's are).
fn citus_reference_table_is_one_copy_per_row(_: &Ctx) -> Result<()> {
    let c = Ctx::from_url(&engine_url(CITUS)?)?;
    let cost = ingest_cost(&c, "citus_ref_cost", &format!("--rows 5000 --reference-table {START}"))?;
    let copies = c.scalar(
        "SELECT count(*) FROM pg_dist_placement JOIN pg_dist_shard USING (shardid) \
         WHERE logicalrelid = 'citus_ref_cost'::regclass",
    )?;
    let copies = copies.parse::<u64>()?;
    let all = c.scalar("SELECT citus_total_relation_size('citus_ref_cost')")?.parse::<u64>()?;
    let table = c.scalar("SELECT citus_table_size('citus_ref_cost')")?.parse::<u64>()?;
    ensure(copies >= 2, || format!("{copies} copies of a reference table"))?;
    ensure(int(&cost, "table_bytes")? == table / copies && int(&cost, "total_bytes_with_replicas")? == all, || {
        format!("{cost} vs {table} table bytes, {all} in all, {copies} copies")
    })
}

/// PostgreSQL keeps a table on one server: no per-node figures in any form.
fn one_server_has_no_per_node_section(ctx: &Ctx) -> Result<()> {
    let out = ctx.ingest("--rows 1000 --table cost_one_node --drop-table")?;
    ensure(out.exit_code == 0, || format!("exit {}", out.exit_code))?;
    let cost = serde_json::to_value(&out.report.server_cost)?;
    ensure(cost["table_bytes"].is_u64() && cost.get("nodes").is_none(), || cost.to_string())?;
    let text = dbload::report::ingest::render(&out.report);
    ensure(!text.contains("Per node"), || text.clone())?;
    let html = dbload::report::html::render(&out.report)?;
    ensure(!html.contains("of mean"), || "a per-node table in the HTML".into())
}

/// Each worker's shards, rows and bytes as Citus places them, against the
/// placements counted by another of its functions (`run_command_on_placements`);
/// and rows of one device, all in one shard, noted as skewed.
fn citus_shows_each_workers_shards_and_rows(_: &Ctx) -> Result<()> {
    let c = Ctx::from_url(&engine_url(CITUS)?)?;
    let cost = ingest_cost(&c, "citus_per_node", &format!("--rows 20000 --shards 8 --workers 2 {START}"))?;
    let nodes = cost["nodes"]["nodes"].as_array().with_context(|| cost.to_string())?;
    let placed = c.query(
        "SELECT nodename || ':' || nodeport, count(*), sum(result::bigint) FROM \
         run_command_on_placements('citus_per_node', 'SELECT count(*) FROM %s') GROUP BY 1 ORDER BY 1",
    )?;
    let workers = c.query("SELECT count(*) FROM citus_get_active_worker_nodes()")?;
    ensure(
        nodes.len() == placed.len() && placed.len().to_string() == workers[0][0].clone().unwrap_or_default(),
        || format!("{cost} vs placements {placed:?}"),
    )?;
    for (n, p) in nodes.iter().zip(&placed) {
        let same = n["node"].as_str() == p[0].as_deref()
            && n["shards"].as_u64() == p[1].as_deref().and_then(|v| v.parse().ok())
            && n["rows"].as_u64() == p[2].as_deref().and_then(|v| v.parse().ok());
        ensure(same, || format!("{n} vs {p:?}"))?;
    }
    let rows: u64 = nodes.iter().filter_map(|n| n["rows"].as_u64()).sum();
    let bytes: u64 = nodes.iter().filter_map(|n| n["bytes"].as_u64()).sum();
    let total = c.scalar("SELECT citus_total_relation_size('citus_per_node')")?.parse::<u64>()?;
    ensure(rows == 20_000 && bytes == total, || format!("{rows} rows, {bytes} bytes vs {total}: {cost}"))?;
    ensure(cost["nodes"]["skew"].is_null() && cost["nodes"]["compared"] == "rows", || cost.to_string())?;
    // One device's rows hash to one shard, on one node: skewed.
    let one = ingest_cost(&c, "citus_skew", &format!("--rows 2000 --workers 1 --devices 1 --shards 4 {START}"))?;
    let skew = one["nodes"]["skew"].as_str().unwrap_or_default();
    ensure(skew.starts_with("skewed placement: ") && skew.contains("× the mean rows of a node"), || one.to_string())
}

/// Each node's primaries, documents and bytes as `sys.shards` has them, and
/// replicas that no node holds (one replica on a one-node cluster) as the
/// unassigned shards, not a node.
fn cratedb_shows_each_nodes_shards(_: &Ctx) -> Result<()> {
    let url = engine_url(CRATEDB_HTTP)?;
    let args =
        format!("--url {url} --quiet --table crate_nodes --drop-table --rows 3000 --shards 3 --replicas 1 {START}");
    let out = dbload::ingest(ingest_args(&args), &|_| None, &mut Vec::new())?;
    ensure(out.exit_code == 0, || format!("exit {} {:?}", out.exit_code, out.report.error_classes))?;
    let cost = serde_json::to_value(&out.report.server_cost)?;
    let nodes = cost["nodes"]["nodes"].as_array().with_context(|| cost.to_string())?;
    let target = crate_target(&url)?;
    let sql = "SELECT node['name'], count(*), sum(num_docs) FROM sys.shards \
               WHERE table_name = 'crate_nodes' AND \"primary\" GROUP BY 1 ORDER BY 1";
    let primaries = crate_rows(&target, sql)?;
    let assigned: Vec<&serde_json::Value> = nodes.iter().filter(|n| !n["node"].is_null()).collect();
    ensure(assigned.len() == primaries.len(), || format!("{cost} vs {primaries:?}"))?;
    for (n, p) in assigned.iter().zip(&primaries) {
        let number = |i: usize| p[i].as_deref().and_then(|v| v.parse::<u64>().ok());
        let same = n["node"].as_str() == p[0].as_deref() && n["shards"].as_u64() == number(1);
        ensure(same && n["bytes"].as_u64().is_some_and(|b| b > 0), || format!("{n} vs {p:?}"))?;
    }
    let docs: u64 = assigned.iter().filter_map(|n| n["rows"].as_u64()).sum();
    let replicas: u64 = nodes.iter().filter_map(|n| n["replica_shards"].as_u64()).sum();
    ensure(docs >= 3000 && replicas == 3, || cost.to_string())?;
    let text = dbload::report::ingest::render(&out.report);
    let unassigned = nodes.iter().any(|n| n["node"].is_null());
    ensure(text.contains("Per node:") && (!unassigned || text.contains("(unassigned)")), || text.clone())
}

fn cratedb_counts_primaries_and_replicas(_: &Ctx) -> Result<()> {
    let url = engine_url(CRATEDB_HTTP)?;
    let args = format!("--url {url} --quiet --table crate_cost --drop-table --rows 5000 --replicas 1 --verify {START}");
    let out = dbload::ingest(ingest_args(&args), &|_| None, &mut Vec::new())?;
    ensure(out.exit_code == 0, || format!("exit {} {:?}", out.exit_code, out.report.error_classes))?;
    let cost = serde_json::to_value(&out.report.server_cost)?;
    let target = crate_target(&url)?;
    let sql = "SELECT sum(size) FROM sys.shards WHERE table_name = 'crate_cost' AND \"primary\"";
    let primaries: u64 = crate_rows(&target, sql)?[0][0].as_deref().unwrap_or_default().parse()?;
    ensure(int(&cost, "table_bytes")? == primaries && int(&cost, "table_rows")? == 5000, || cost.to_string())?;
    // One replica on a cluster of one node is not allocated: at least the primaries.
    ensure(int(&cost, "total_bytes_with_replicas")? >= primaries && cost["index_bytes"].is_null(), || {
        cost.to_string()
    })?;
    ensure(cost["wal_bytes"].is_null() && cost["wal_unavailable"].is_string(), || cost.to_string())
}
