//! `--suite tsbs-cpu`: TSBS's cpu-only query types on a table that
//! `ingest --model cpu` wrote. On the harness's PostgreSQL every type runs
//! and returns rows, and some results are recomputed here from the raw
//! readings; TimescaleDB, Citus and CrateDB run the suite when their
//! servers are configured (`DBLOAD_TEST_*_URL`, see `engines.rs`).

use anyhow::{Context, Result};
use futures_util::TryStreamExt;

use dbload::dialect::{tsbs, Engine};
use dbload::driver::PgTarget;
use dbload::ident::TableName;
use dbload::model::{rng_for, Purpose};
use dbload::workload::params::Value;
use dbload::workload::tsbs::{CpuData, CpuSuite};
use dbload::workload::QuerySpec;

use crate::engines::{engine_url, CITUS, CRATEDB_HTTP, CRATEDB_PG, TIMESCALEDB};
use crate::support::{dbload_bin, ensure, json, write_file, Ctx};
use crate::Phase::Parallel;
use crate::{EngineTest, Registered};

pub fn tests() -> Vec<Registered> {
    vec![
        ("tsbs::every_query_type_returns_rows_on_postgres", every_query_type_returns_rows_on_postgres, Parallel),
        ("tsbs::results_agree_with_the_raw_readings", results_agree_with_the_raw_readings, Parallel),
        (
            "tsbs::buckets_are_utc_hours_whatever_the_session_time_zone",
            buckets_are_utc_hours_whatever_the_session_time_zone,
            Parallel,
        ),
        ("tsbs::suite_queries_pick_a_subset", suite_queries_pick_a_subset, Parallel),
        ("tsbs::bad_suite_use_exits_2_saying_what_to_do", bad_suite_use_exits_2_saying_what_to_do, Parallel),
        ("tsbs::suite_runs_as_a_workload_of_a_mixed_run", suite_runs_as_a_workload_of_a_mixed_run, Parallel),
    ]
}

pub fn engine_tests() -> Vec<EngineTest> {
    vec![
        ("tsbs::suite_on_timescaledb", &[TIMESCALEDB], suite_on_timescaledb),
        ("tsbs::suite_on_citus", &[CITUS], suite_on_citus),
        ("tsbs::suite_on_cratedb_http", &[CRATEDB_HTTP], suite_on_cratedb_http),
        ("tsbs::suite_on_cratedb_postgres_protocol", &[CRATEDB_PG], suite_on_cratedb_postgres_protocol),
    ]
}

/// Enough for every type: 10 hosts, 4,400 readings each 10 s apart (12.2 h).
const DATA: &str = "--model cpu --workers 1 --devices 10 --measurements 4400 --start 2024-01-01T00:00:00Z --drop-table";
const FIRST_US: i64 = 1_704_067_200_000_000;
const LAST_US: i64 = FIRST_US + 4399 * 10_000_000;
const HOUR_US: i64 = 3_600_000_000;

/// TSBS's names, in its order: the report's rows.
const TYPES: [&str; 15] = [
    "single-groupby-1-1-1",
    "single-groupby-1-1-12",
    "single-groupby-1-8-1",
    "single-groupby-5-1-1",
    "single-groupby-5-1-12",
    "single-groupby-5-8-1",
    "cpu-max-all-1",
    "cpu-max-all-8",
    "double-groupby-1",
    "double-groupby-5",
    "double-groupby-all",
    "high-cpu-1",
    "high-cpu-all",
    "lastpoint",
    "groupby-orderby-limit",
];

/// `dbload ingest DATA --table TABLE` against `url`, as the binary.
fn load(url: &str, table: &str) -> Result<()> {
    load_with(url, table, &[])
}

/// [`load`] with more arguments (TimescaleDB's `--chunk-interval`, `--compress`).
fn load_with(url: &str, table: &str, args: &[&str]) -> Result<()> {
    let mut argv = vec!["ingest", "--url", url, "--table", table, "--quiet"];
    argv.extend(DATA.split_whitespace());
    argv.extend(args);
    let (code, _, stderr) = dbload_bin(&argv, &[]);
    ensure(code == 0, || format!("ingest into {table}: exit {code}: {stderr}"))
}

/// `dbload workload --suite tsbs-cpu --table TABLE --output json ARGS`: the JSON report, after checking exit 0.
fn suite(url: &str, table: &str, args: &[&str]) -> Result<serde_json::Value> {
    let mut argv = vec!["workload", "--suite", "tsbs-cpu", "--url", url, "--table", table, "--output", "json"];
    argv.extend(args);
    let (code, stdout, stderr) = dbload_bin(&argv, &[]);
    ensure(code == 0, || format!("{argv:?}: exit {code}: {stderr}\n{stdout}"))?;
    json(&stdout)
}

/// A full suite run on `url`: one row per type, in TSBS's order, each run without an error.
fn every_type_ran(url: &str, table: &str) -> Result<()> {
    // 150 queries, 10 per type: enough to see each run, light beside the timing tests.
    let r = suite(url, table, &["--max-queries", "150", "--concurrency", "2", "--seed", "5"])?;
    let names: Vec<&str> =
        r["queries"].as_array().context("queries[]")?.iter().filter_map(|q| q["name"].as_str()).collect();
    ensure(names == TYPES, || format!("rows {names:?}"))?;
    ensure(r["errors"] == 0 && r["count"] == 150, || format!("{}", r["error_classes"]))?;
    for q in r["queries"].as_array().unwrap() {
        ensure(q["count"].as_u64() > Some(0) && q["errors"] == 0, || format!("{q}"))?;
        ensure((q["ratio"].as_f64().unwrap() - 1.0 / 15.0).abs() < 1e-9, || format!("{q}"))?;
    }
    Ok(())
}

/// The suite's queries as dbload makes them for `engine` (of the
/// PostgreSQL family), with the data they are drawn from read as the run
/// reads it.
fn specs(ctx: &Ctx, table: &str, engine: Engine) -> Result<(Vec<QuerySpec>, CpuData)> {
    let name = TableName::parse(table)?;
    let hosts: Vec<String> = ctx.query(&tsbs::hosts(engine, &name))?.into_iter().filter_map(|r| r[0].clone()).collect();
    let range = &ctx.query(&tsbs::time_range(engine, &name))?[0];
    let us = |i: usize| range[i].as_deref().unwrap_or_default().parse::<i64>();
    let data = CpuData { hosts, first_us: us(0)?, last_us: us(1)? };
    let want: Vec<String> = {
        let mut h: Vec<String> = (0..10).map(|h| format!("host_{h}")).collect();
        h.sort();
        h
    };
    ensure(data == CpuData { hosts: want, first_us: FIRST_US, last_us: LAST_US }, || format!("{data:?}"))?;
    Ok((CpuSuite::new(name, &[])?.specs(engine, &data)?, data))
}

/// Runs `sql` with `params` bound (as the prepared protocol binds them); every row's values as text.
async fn rows(client: &tokio_postgres::Client, sql: &str, params: &[Value]) -> Result<Vec<Vec<String>>> {
    let stream = client.query_raw(sql, params).await.with_context(|| sql.to_string())?;
    let rows: Vec<tokio_postgres::Row> = stream.try_collect().await?;
    Ok(rows
        .iter()
        .map(|r| {
            (0..r.len())
                .map(|i| {
                    r.try_get::<_, i64>(i)
                        .map(|v| v.to_string())
                        .or_else(|_| r.try_get::<_, i32>(i).map(|v| v.to_string()))
                        .or_else(|_| r.try_get::<_, String>(i))
                        .unwrap_or_default()
                })
                .collect()
        })
        .collect())
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread().enable_all().build()?)
}

fn every_query_type_returns_rows_on_postgres(ctx: &Ctx) -> Result<()> {
    load(&ctx.url, "tsbs_rows")?;
    every_type_ran(&ctx.url, "tsbs_rows")?;
    every_type_returns_rows(ctx, "tsbs_rows", Engine::Postgres)
}

/// Each type's own SQL on `engine`, with parameters drawn as the run draws them, returns rows.
fn every_type_returns_rows(ctx: &Ctx, table: &str, engine: Engine) -> Result<()> {
    let (specs, _) = specs(ctx, table, engine)?;
    // The connection lives on the runtime that made it.
    let rt = runtime()?;
    let client = rt.block_on(PgTarget::from_url(&ctx.url, "test URL", &|_| None)?.connect())?;
    let mut rng = rng_for(11, 0, Purpose::Choice);
    for q in &specs {
        // high-cpu-1 depends on whether the one host drawn went above 90: up to 20 draws.
        let mut found = 0;
        for _ in 0..20 {
            found = rt.block_on(rows(&client, &q.query, &q.draw(&mut rng, 0)))?.len();
            if found > 0 {
                break;
            }
        }
        ensure(found > 0, || format!("{} returned no rows: {}", q.name, q.query))?;
    }
    Ok(())
}

fn results_agree_with_the_raw_readings(ctx: &Ctx) -> Result<()> {
    load(&ctx.url, "tsbs_check")?;
    agree_with_the_raw_readings(ctx, "tsbs_check", Engine::Postgres)
}

/// TSBS buckets by UTC hours (`time_bucket`, or epoch arithmetic without
/// it). A session whose time zone is 5:30 off UTC (the server's
/// `timezone`, or the user's `options`) still gets UTC hours.
fn buckets_are_utc_hours_whatever_the_session_time_zone(ctx: &Ctx) -> Result<()> {
    let kolkata = Ctx::from_url(&ctx.url_with("options=-c%20TimeZone%3DAsia/Kolkata"))?;
    ensure(kolkata.scalar("SHOW TimeZone")? == "Asia/Kolkata", || "the session's time zone was not set".into())?;
    load(&kolkata.url, "tsbs_kolkata")?;
    agree_with_the_raw_readings(&kolkata, "tsbs_kolkata", Engine::Postgres)
}

/// Three types on `engine` recomputed from the raw readings of `table`:
/// per-minute maxima of one host (single-groupby-1-1-1), the rows above
/// 90 % (high-cpu-1), and each host's last reading (lastpoint).
fn agree_with_the_raw_readings(ctx: &Ctx, table: &str, engine: Engine) -> Result<()> {
    let (specs, data) = specs(ctx, table, engine)?;
    let spec = |name: &str| specs.iter().find(|q| q.name == name).context("a type of the suite");
    // The connection lives on the runtime that made it.
    let rt = runtime()?;
    let client = rt.block_on(PgTarget::from_url(&ctx.url, "test URL", &|_| None)?.connect())?;
    let epoch = |col: &str| format!("(extract(epoch FROM {col}) * 1000000)::bigint");
    let raw = |params: &[Value]| -> Result<Vec<(i64, i64)>> {
        let [Value::Text(host), Value::Timestamp(start), Value::Timestamp(end)] = params else {
            anyhow::bail!("host, start, end: {params:?}")
        };
        let sql = format!(
            "SELECT {}, usage_user FROM {table} WHERE tags->>'hostname' = '{host}' \
             AND ts >= to_timestamp({start} / 1e6) AND ts < to_timestamp({end} / 1e6)",
            epoch("ts")
        );
        Ok(ctx
            .query(&sql)?
            .iter()
            .map(|r| (r[0].as_deref().unwrap().parse().unwrap(), r[1].as_deref().unwrap().parse().unwrap()))
            .collect())
    };
    let mut rng = rng_for(2, 0, Purpose::Choice);

    // Per-minute maxima of one host over an hour, per-hour maxima over 8 h: buckets of UTC minutes and hours.
    for (name, bucket, unit_us, buckets) in
        [("single-groupby-1-1-1", "minute", 60_000_000, 60), ("cpu-max-all-1", "hour", HOUR_US, 8)]
    {
        let q = spec(name)?;
        for _ in 0..5 {
            let params = q.draw(&mut rng, 0);
            let wrapped = format!("SELECT {}, max_usage_user FROM ({}) AS q ORDER BY 1", epoch(bucket), q.query);
            let got: Vec<(i64, i64)> = rt
                .block_on(rows(&client, &wrapped, &params))?
                .iter()
                .map(|r| (r[0].parse().unwrap(), r[1].parse().unwrap()))
                .collect();
            let mut want = std::collections::BTreeMap::new();
            for (ts, usage) in raw(&params)? {
                let max = want.entry(ts.div_euclid(unit_us) * unit_us).or_insert(usage);
                *max = (*max).max(usage);
            }
            let want: Vec<(i64, i64)> = want.into_iter().collect();
            ensure(got == want && got.len() >= buckets, || format!("{name} {params:?}: {got:?} != {want:?}"))?;
        }
    }

    let high = spec("high-cpu-1")?;
    let mut above = 0;
    for _ in 0..20 {
        let params = high.draw(&mut rng, 0);
        let got = rt.block_on(rows(&client, &high.query, &params))?.len();
        let want = raw(&params)?.iter().filter(|(_, usage)| *usage > 90).count();
        ensure(got == want, || format!("high-cpu-1 {params:?}: {got} rows, the readings have {want}"))?;
        above += got;
    }
    ensure(above > 0, || "no draw of high-cpu-1 found a reading above 90".into())?;

    let last = spec("lastpoint")?;
    let wrapped = format!("SELECT tags->>'hostname', {} FROM ({}) AS q ORDER BY 1", epoch("ts"), last.query);
    let got = rt.block_on(rows(&client, &wrapped, &[]))?;
    let want: Vec<Vec<String>> = data.hosts.iter().map(|h| vec![h.clone(), LAST_US.to_string()]).collect();
    ensure(got == want, || format!("lastpoint {got:?}"))
}

fn suite_queries_pick_a_subset(ctx: &Ctx) -> Result<()> {
    load(&ctx.url, "tsbs_subset")?;
    let r = suite(&ctx.url, "tsbs_subset", &["--suite-queries", "lastpoint,high-cpu-1", "--max-queries", "40"])?;
    let picked: Vec<(&str, f64)> = r["queries"]
        .as_array()
        .context("queries[]")?
        .iter()
        .map(|q| (q["name"].as_str().unwrap_or_default(), q["ratio"].as_f64().unwrap_or_default()))
        .collect();
    ensure(picked == [("high-cpu-1", 0.5), ("lastpoint", 0.5)], || format!("{picked:?}"))?;
    ensure(r["count"] == 40 && r["errors"] == 0, || r.to_string())?;
    // The report says what the parameters were drawn from.
    let drawn = serde_json::json!({
        "name": "tsbs-cpu", "table": "tsbs_subset", "hosts": 10,
        "first_reading": "2024-01-01T00:00:00Z", "last_reading": "2024-01-01T12:13:10Z",
    });
    ensure(r["setup"]["suite"] == drawn, || r["setup"].to_string())?;
    // Its report still matches the schema.
    let schema: serde_json::Value = serde_json::from_str(include_str!("../../schema/query-report.schema.json"))?;
    let validator = jsonschema::validator_for(&schema).context("compiling the schema")?;
    let errors: Vec<String> = validator.iter_errors(&r).map(|e| format!("{e} at {}", e.instance_path())).collect();
    ensure(errors.is_empty(), || format!("{errors:#?}"))
}

fn bad_suite_use_exits_2_saying_what_to_do(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let file = write_file(&dir, "w.yml", "- query: select 1\n  ratio: 1\n")?;
    // A table of 100 readings (10 hosts, 90 s): too short for any window of an hour.
    let (code, _, stderr) = dbload_bin(
        &[
            "ingest",
            "--url",
            &ctx.url,
            "--model",
            "cpu",
            "--workers",
            "1",
            "--rows",
            "100",
            "--table",
            "tsbs_short",
            "--drop-table",
            "--quiet",
        ],
        &[],
    );
    ensure(code == 0, || stderr.clone())?;
    // A table of another model.
    let (code, _, stderr) = dbload_bin(
        &["ingest", "--url", &ctx.url, "--rows", "10", "--table", "tsbs_not_cpu", "--drop-table", "--quiet"],
        &[],
    );
    ensure(code == 0, || stderr.clone())?;
    let base = ["workload", "--url", &ctx.url, "--max-queries", "10"];
    let cases: [(Vec<&str>, &[&str]); 6] = [
        (
            vec!["--suite", "tsbs-cpu", "--table", "tsbs_not_cpu"],
            &["table tsbs_not_cpu has no column ts, tags, usage_user", "ingest --model cpu"],
        ),
        (
            vec!["--suite", "tsbs-cpu", "--table", "tsbs_short", "--suite-queries", "lastpoint,high-cpu-2"],
            &["high-cpu-2", "did you mean `high-cpu-1`"],
        ),
        (vec![&file, "--suite", "tsbs-cpu"], &["w.yml", "not both", "dbload run"]),
        (
            vec!["--suite", "tsbs-cpu", "--table", "tsbs_nowhere"],
            &["tsbs_nowhere does not exist", "ingest --model cpu"],
        ),
        (
            vec!["--suite", "tsbs-cpu", "--table", "tsbs_short"],
            &["10 host(s)", "single-groupby-1-1-12 needs 12 h", "--suite-queries"],
        ),
        (vec![&file, "--suite-queries", "lastpoint"], &["--suite"]),
    ];
    for (args, needles) in cases {
        let argv = [&base[..], &args].concat();
        let (code, stdout, stderr) = dbload_bin(&argv, &[]);
        ensure(code == 2 && stdout.is_empty(), || format!("{args:?}: exit {code}: {stderr}"))?;
        for n in needles {
            ensure(stderr.contains(n), || format!("{args:?}: message lacks {n:?}: {stderr}"))?;
        }
    }
    // What the short table does hold, lastpoint runs on.
    let r = suite(&ctx.url, "tsbs_short", &["--suite-queries", "lastpoint", "--max-queries", "5"])?;
    ensure(r["count"] == 5, || r.to_string())
}

fn suite_runs_as_a_workload_of_a_mixed_run(ctx: &Ctx) -> Result<()> {
    load(&ctx.url, "tsbs_mixed")?;
    let dir = tempfile::tempdir()?;
    let mixed = write_file(
        &dir,
        "mixed.yml",
        "workloads:\n  - name: tsbs\n    suite: tsbs-cpu\n    table: tsbs_mixed\n    suite_queries: lastpoint,single-groupby-5-8-1\n    max_queries: 30\n",
    )?;
    let (code, stdout, stderr) = dbload_bin(&["run", &mixed, "--url", &ctx.url, "--output", "json"], &[]);
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    let r = json(&stdout)?;
    let queries = &r["workloads"][0]["under_load"]["queries"];
    let names: Vec<&str> = queries.as_array().context("queries[]")?.iter().filter_map(|q| q["name"].as_str()).collect();
    ensure(names == ["single-groupby-5-8-1", "lastpoint"], || format!("{names:?} in {stdout}"))?;
    let both = write_file(
        &dir,
        "both.yml",
        "workloads:\n  - name: tsbs\n    suite: tsbs-cpu\n    queries:\n      - query: select 1\n    max_queries: 3\n",
    )?;
    let (code, _, stderr) = dbload_bin(&["run", &both, "--url", &ctx.url], &[]);
    ensure(code == 2 && stderr.contains("both.yml") && stderr.contains("suite: tsbs-cpu"), || {
        format!("exit {code}: {stderr}")
    })
}

/// Loads the suite's table `table` on a real engine's server and runs every
/// type there. Each test has its own table: CrateDB's two URLs name one
/// cluster, and its two tests run at the same time (one dropped the
/// table the other was loading).
fn on_engine(var: &str, table: &str) -> Result<()> {
    let url = engine_url(var)?;
    load(&url, table)?;
    every_type_ran(&url, table)
}

/// On hypertables of one-hour chunks, as loaded and compressed: every type
/// runs, returns rows, and `time_bucket`'s results agree with the readings.
fn suite_on_timescaledb(_: &Ctx) -> Result<()> {
    let url = engine_url(TIMESCALEDB)?;
    let ts = Ctx::from_url(&url)?;
    for (table, compress) in [("tsbs_cpu", &[][..]), ("tsbs_cpu_compressed", &["--compress"][..])] {
        load_with(&url, table, &[&["--chunk-interval", "3600"], compress].concat())?;
        every_type_ran(&url, table)?;
        every_type_returns_rows(&ts, table, Engine::Timescaledb)?;
        agree_with_the_raw_readings(&ts, table, Engine::Timescaledb)?;
    }
    Ok(())
}

fn suite_on_citus(_: &Ctx) -> Result<()> {
    on_engine(CITUS, "tsbs_cpu")
}

fn suite_on_cratedb_http(_: &Ctx) -> Result<()> {
    on_engine(CRATEDB_HTTP, "tsbs_cpu_http")
}

fn suite_on_cratedb_postgres_protocol(_: &Ctx) -> Result<()> {
    on_engine(CRATEDB_PG, "tsbs_cpu_pg")
}
