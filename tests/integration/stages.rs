//! k6's stages against the real server: `--rate-stages` holds each stage's
//! rate (k6's ramping arrival rate), `--stages` keeps as many workers busy
//! as each stage's target (k6's ramping VUs), the reports' per-stage
//! figures follow their schemas, and a bad stage string is refused naming
//! the option and the part.

use anyhow::{Context, Result};

use crate::support::{dbload_bin, ensure, follows, json, refused, Ctx};
use crate::Phase::{Parallel, Quiet};
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("stages::rate_stages_hold_each_stage_within_10_percent", rate_stages_hold_each_stage_within_10_percent, Quiet),
        ("stages::busy_workers_follow_the_vu_stages", busy_workers_follow_the_vu_stages, Quiet),
        ("stages::ingest_rate_stages_count_rows", ingest_rate_stages_count_rows, Quiet),
        (
            "stages::bad_stages_are_refused_naming_the_option_and_the_part",
            bad_stages_are_refused_naming_the_option_and_the_part,
            Parallel,
        ),
    ]
}

/// Runs the binary with `argv` and `--output json`; the report, which
/// must follow `schema` and have exited 0.
fn run_json(argv: &[&str], schema: &str) -> Result<serde_json::Value> {
    let (code, stdout, stderr) = dbload_bin(&[argv, &["--output", "json"]].concat(), &[]);
    let r = json(&stdout).with_context(|| stderr.clone())?;
    ensure(code == 0, || format!("exit {code}: {stderr}\n{stdout}"))?;
    follows(schema, &r)?;
    Ok(r)
}

/// Each stage's `per_sec` within `share` of `want` (`None`: not checked).
fn reached(r: &serde_json::Value, want: &[Option<f64>], share: f64) -> Result<()> {
    let stages = r["stages"].as_array().context("no stages[]")?;
    ensure(stages.len() == want.len(), || format!("{} stages, want {}", stages.len(), want.len()))?;
    for (s, want) in stages.iter().zip(want) {
        let Some(want) = want else { continue };
        let got = s["per_sec"].as_f64().unwrap_or(-1.0);
        ensure((got - want).abs() <= share * want, || {
            format!("stage {}: {got:.1}/s, want {want} ± {:.0} %: {}", s["stage"], share * 100.0, r["stages"])
        })?;
    }
    Ok(())
}

/// k6's ramping arrival rate from 0: 0 → 100/s (50/s on average), 100 →
/// 300/s (200/s), then 300/s held, each within 10 %, with every unit the
/// stages called for started and latency measured from the intended start.
fn rate_stages_hold_each_stage_within_10_percent(ctx: &Ctx) -> Result<()> {
    let argv =
        ["timeit", "--url", &ctx.url, "-s", "select 1", "--rate-stages", "2s:100,2s:300,2s:300", "--concurrency", "4"];
    let r = run_json(&argv, include_str!("../../schema/query-report.schema.json"))?;
    let stages = &r["stages"];
    let targets: Vec<Option<f64>> = (0..3).map(|i| stages[i]["target_per_sec"].as_f64()).collect();
    ensure(targets == [Some(50.0), Some(200.0), Some(300.0)], || format!("targets {targets:?}"))?;
    reached(&r, &targets, 0.10)?;
    ensure(r["count"].as_u64().is_some_and(|n| (1_000..=1_100).contains(&n)), || {
        format!("{} queries, want 1,100", r["count"])
    })?;
    ensure(r["dropped"] == 0 && r["service_time_ms"].is_object(), || {
        format!("dropped {}, paced {}", r["dropped"], r["service_time_ms"])
    })?;
    ensure(r["setup"]["stages"] == "--rate-stages 2s:100,2s:300,2s:300", || format!("setup {}", r["setup"]["stages"]))?;
    let l = &stages[2]["latency_ms"];
    ensure(l["p50"].as_f64().is_some() && l["p99"].as_f64() >= l["p50"].as_f64(), || format!("stage 3 latency {l}"))
}

/// `select pg_sleep(0.05)` keeps a worker busy for 50 ms: ~20 queries/s per
/// busy worker. From k6's start of 1 VU: 1 worker for 2 s, a jump to 4 for
/// 2 s, down to 2 for 2 s. The throughput of each stage says how many were
/// busy (generous bounds: the server and its clock share two cores).
fn busy_workers_follow_the_vu_stages(ctx: &Ctx) -> Result<()> {
    let argv = ["timeit", "--url", &ctx.url, "-s", "select pg_sleep(0.05)", "--stages", "2s:1,0s:4,2s:4,0s:2,2s:2"];
    let r = run_json(&argv, include_str!("../../schema/query-report.schema.json"))?;
    ensure(r["setup"]["concurrency"] == 4, || {
        format!("{} workers, want the highest target, 4", r["setup"]["concurrency"])
    })?;
    // The jumps (0s stages) hold no time and no query.
    reached(&r, &[Some(19.0), None, Some(76.0), None, Some(38.0)], 0.35)?;
    let per_sec = |i: usize| r["stages"][i]["per_sec"].as_f64().unwrap_or(0.0);
    ensure(per_sec(2) > 1.6 * per_sec(4) && per_sec(4) > 1.4 * per_sec(0), || format!("{}", r["stages"]))?;
    ensure(r["stages"][1]["ok"] == 0 && r["stages"][1]["latency_ms"].is_null(), || format!("{}", r["stages"][1]))
}

/// Ingest's rate is rows per second: batches of 100 rows at 1,000 and then
/// 3,000 rows/s, each stage's rows within 10 %, in a report that follows its schema.
fn ingest_rate_stages_count_rows(ctx: &Ctx) -> Result<()> {
    let table = format!("stages_{}", std::process::id());
    let argv = ["ingest", "--url", &ctx.url, "--table", &table, "--batch-size", "100", "--workers", "2"];
    let argv = [&argv[..], &["--rate-stages", "0s:1000,2s:1000,0s:3000,2s:3000"]].concat();
    let r = run_json(&argv, include_str!("../../schema/report.schema.json"))?;
    ctx.query(&format!("drop table {table}"))?;
    reached(&r, &[None, Some(1000.0), None, Some(3000.0)], 0.10)?;
    let rows: Vec<u64> = (0..4).filter_map(|i| r["stages"][i]["units"].as_u64()).collect();
    ensure(rows.iter().sum::<u64>() == r["rows"].as_u64().unwrap_or(0), || {
        format!("stage rows {rows:?}, run {}", r["rows"])
    })
}

/// Bad stage strings exit 2 naming the option and the part that is wrong,
/// in every command that takes stages; so do stages with the flags they replace.
fn bad_stages_are_refused_naming_the_option_and_the_part(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let w = crate::support::write_file(&dir, "w.yml", "- query: select 1\n  ratio: 1\n")?;
    let commands: [Vec<&str>; 4] = [
        vec!["timeit", "--url", &ctx.url, "-s", "select 1"],
        vec!["workload", &w, "--url", &ctx.url],
        vec!["http", "http://127.0.0.1:9/"],
        vec!["ingest", "--url", &ctx.url],
    ];
    let cases: [(&[&str], &str); 9] = [
        (&["--stages", "30s"], r#"--stages 30s: stage 1 "30s": no target"#),
        (&["--rate-stages", "10s:5,x:10"], r#"--rate-stages 10s:5,x:10: stage 2 "x:10": "x" is not a time"#),
        (&["--stages", "30s:-1"], r#"--stages 30s:-1: stage 1 "30s:-1": target "-1" is not a whole number"#),
        (&["--stages", "30s:2.5"], r#"stage 1 "30s:2.5": target "2.5" is not a whole number"#),
        (&["--stages", ""], r#"--stages "": no stage given"#),
        (&["--rate-stages", "10s:0"], "--rate-stages 10s:0: every target is 0"),
        (&["--stages", "1m:5", "--duration", "1m"], "--stages and --duration"),
        (&["--rate-stages", "1m:5", "--rate", "5"], "--rate-stages and --rate"),
        (&["--stages", "1m:5", "--rate-stages", "1m:5"], "cannot be used with"),
    ];
    for command in &commands {
        for (flags, culprit) in cases {
            refused(&[&command[..], flags].concat(), culprit)?;
        }
    }
    Ok(())
}
