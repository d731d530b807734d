//! nodeIngestBench's command lines, typed as its users type them: on the
//! harness's PostgreSQL (the rows counted in the table) and on a fake
//! CrateDB node reached through its `CRATE_*` variables (see
//! `fake_cratedb`: no CrateDB runs in CI).

use std::sync::Arc;

use anyhow::Result;

use crate::fake_cratedb::{Cluster, Node};
use crate::support::{dbload_bin, ensure, Ctx};
use crate::Phase::Parallel;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("node_ingest::max_rows_is_per_process_and_exact", max_rows_is_per_process_and_exact, Parallel),
        (
            "node_ingest::crate_variables_reach_the_node_and_global_results_print",
            crate_variables_reach_the_node_and_global_results_print,
            Parallel,
        ),
        (
            "node_ingest::shards_on_postgres_run_and_say_they_were_not_applied",
            shards_on_postgres_run_and_say_they_were_not_applied,
            Parallel,
        ),
        (
            "node_ingest::the_analytical_command_line_runs_its_queries",
            the_analytical_command_line_runs_its_queries,
            Parallel,
        ),
    ]
}

/// `parts` appear in `text` in this order (issue 32: nodeIngestBench's
/// Options and Global Results blocks first, in its words, then dbload's report).
fn in_order(text: &str, parts: &[&str]) -> Result<()> {
    let at: Vec<Option<usize>> = parts.iter().map(|p| text.find(p)).collect();
    let ordered = at.iter().all(Option::is_some) && at.windows(2).all(|w| w[0] < w[1]);
    ensure(ordered, || format!("{parts:?} not in this order (at {at:?}):\n{text}"))
}

/// `--processes 2 --max_rows 1000 --batch_size 300`: 2,000 rows exactly
/// (nodeIngestBench itself writes whole batches: 2 × 1,200); the table is
/// recreated each time, as its `--drop_table` defaults to true, and added
/// to with `--drop_table false` (rows of another time: the table's unique
/// key, host and time, refuses the same rows twice).
fn max_rows_is_per_process_and_exact(ctx: &Ctx) -> Result<()> {
    let run = |extra: &[&str]| {
        let args = [
            &["ingest", "--url", &ctx.url, "--table", "node_cpu", "--batch_size", "300", "--max_rows", "1000"][..],
            &["--processes", "2", "--concurrent_requests", "2", "--quiet"],
            extra,
        ]
        .concat();
        dbload_bin(&args, &[])
    };
    for (extra, want) in
        [(&[][..], 2_000), (&[][..], 2_000), (&["--drop_table", "false", "--start", "2030-01-01T00:00:00Z"][..], 4_000)]
    {
        let (code, stdout, stderr) = run(extra);
        ensure(code == 0, || format!("{extra:?}: exit {code}: {stderr}"))?;
        let rows = ctx.scalar("SELECT count(*) FROM node_cpu")?;
        ensure(rows == want.to_string(), || format!("{extra:?}: the table holds {rows} rows, not {want}"))?;
        ensure(stdout.contains("Rows\t 2,000 records\n"), || format!("{extra:?}: no Global Results:\n{stdout}"))?;
        let drop = if extra.is_empty() { "true" } else { "false" };
        let options = format!(
            "-------- Options ---------\n{{\n  dropTable: {drop},\n  processes: 2,\n  batchSize: 300,\n  \
             maxRows: 1000,\n  table: 'node_cpu',\n  shards: undefined,\n  concurrentRequests: 2,\n  \
             extraTagsLength: 0,\n  replicas: undefined\n}}\n--------------------------\n"
        );
        ensure(stdout.starts_with(&options), || format!("{extra:?}: not its Options block first:\n{stdout}"))?;
        in_order(&stdout, &["-------- Options", "-------- Global Results", "dbload "])?;
    }
    let tags = ctx.scalar(
        "SELECT count(*) FROM information_schema.columns WHERE table_name = 'node_cpu' AND column_name = 'tags'",
    )?;
    ensure(tags == "1", || "the cpu model (tags jsonb), nodeIngestBench's rows".into())
}

/// No `--url`: `CRATE_HOST` and `CRATE_PORT` name the node, as
/// nodeIngestBench reads them; its Global Results block follows the report.
fn crate_variables_reach_the_node_and_global_results_print(_: &Ctx) -> Result<()> {
    let cluster = Arc::new(Cluster::default());
    let node = Node::start(&cluster, None)?;
    let (host, port) = node.addr.split_once(':').expect("host:port");
    let args =
        ["ingest", "--batch_size", "500", "--max_rows", "1500", "--processes", "1", "--concurrent_requests", "2"];
    let (code, stdout, stderr) =
        dbload_bin(&args, &[("CRATE_HOST", host), ("CRATE_PORT", port), ("PGHOST", ""), ("DATABASE_URL", "")]);
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    ensure(cluster.rows() == 1_500, || format!("the node took {} rows, not 1,500", cluster.rows()))?;
    let block = stdout.split_once("-------- Global Results ---------\n").map(|(_, b)| b).unwrap_or_default();
    ensure(block.starts_with("Time\t ") && block.contains("\nRows\t 1,500 records\nSpeed\t "), || stdout.clone())?;
    ensure(stdout.contains(&format!("cratedb://crate@{host}:{port}")), || format!("the target line:\n{stdout}"))
}

/// `appClusterAnalytical.js`'s flags on `dbload workload`: its queries
/// file, `--max_queries` per process, `--concurrent_queries` per process;
/// its Global Results block counts the queries.
fn the_analytical_command_line_runs_its_queries(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("queries.yml");
    std::fs::write(&file, "---\n  - query: |\n      SELECT 1\n      ORDER BY 1\n    ratio: 0.4\n  - query: |\n      SELECT 2\n      ORDER BY 1\n    ratio: 0.6\n")?;
    let file = file.to_str().expect("a UTF-8 path");
    let args = ["workload", "--url", &ctx.url, "--queries_config", file, "--max_queries", "50", "--processes", "2"];
    let (code, stdout, stderr) = dbload_bin(&[&args[..], &["--concurrent_queries", "2", "--quiet"]].concat(), &[]);
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    ensure(stdout.contains("\nQueries\t 100 queries\nSpeed\t "), || format!("2 × 50 queries:\n{stdout}"))?;
    let options =
        "----------- Options -------------\n{\n  processes: 2,\n  maxQueries: 50,\n  concurrentRequests: 2,\n  \
                   queries: [\n    { query: 'SELECT 1\\nORDER BY 1', ratio: 0.4 },\n    \
                   { query: 'SELECT 2\\nORDER BY 1', ratio: 0.6 }\n  ]\n}\n---------------------------------\n";
    // dbload's file loader trims a query's last line break, which nodeIngestBench shows.
    ensure(stdout.starts_with(options), || format!("not its Options block first:\n{stdout}"))?;
    in_order(&stdout, &["----------- Options", "-------- Global Results", "dbload "])?;
    ensure(stdout.contains("concurrency 4") || stdout.contains("4 connections"), || {
        format!("2 × 2 in flight:\n{stdout}")
    })
}

/// Issue 32: the seed's command line carries `--shards 12`; on PostgreSQL
/// it was refused (exit 2, "use --partitions N ... or target Citus or
/// CrateDB"), so the habit broke there. It runs: a plain table with its
/// rows, and one line on stderr and in the report's table line saying that
/// PostgreSQL has no shards and it was not applied.
fn shards_on_postgres_run_and_say_they_were_not_applied(ctx: &Ctx) -> Result<()> {
    let args = [
        &["ingest", "--url", &ctx.url, "--table", "node_shards", "--batch_size", "500", "--max_rows", "1000"][..],
        &["--shards", "12", "--concurrent_requests", "2", "--processes", "1", "--quiet"],
    ]
    .concat();
    let (code, stdout, stderr) = dbload_bin(&args, &[]);
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    let said = "--shards 12 not applied: PostgreSQL has no shards (--partitions N gives hash partitions)";
    ensure(stderr.matches(said).count() == 1, || format!("not said once on stderr: {stderr}"))?;
    ensure(stdout.contains("shards 12 not applied: PostgreSQL has no shards"), || format!("the report:\n{stdout}"))?;
    ensure(stdout.contains("  shards: 12,\n"), || format!("the Options block says what was asked:\n{stdout}"))?;
    let rows = ctx.scalar("SELECT count(*) FROM node_shards")?;
    let kind = ctx.scalar("SELECT relkind::text FROM pg_class WHERE relname = 'node_shards'")?;
    ensure(rows == "1000" && kind == "r", || format!("{rows} rows, relkind {kind}: a plain table"))
}
