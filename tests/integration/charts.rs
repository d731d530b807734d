//! The HTML report's charts from real runs against the harness's server:
//! the latency spectrum and the warm-up band of an open loop, a workload's
//! per-query lines and its EXPLAIN plans as a tree, the banner of a rate
//! not held.

use anyhow::Result;

use crate::support::{dbload_bin, ensure, follows, json, write_file, Ctx};
use crate::Phase::{Parallel, Quiet};
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        (
            "charts::an_open_loop_page_has_the_spectrum_and_the_warm_up_band",
            an_open_loop_page_has_the_spectrum_and_the_warm_up_band,
            Quiet,
        ),
        (
            "charts::a_workload_page_has_lines_per_query_and_plan_trees",
            a_workload_page_has_lines_per_query_and_plan_trees,
            Parallel,
        ),
        ("charts::a_rate_not_held_opens_the_page", a_rate_not_held_opens_the_page, Parallel),
    ]
}

/// Runs dbload with `--report` and `--html` in a temporary directory;
/// returns the exit code, the report and the page.
fn run_with_page(args: &[&str]) -> Result<(i32, serde_json::Value, String, String)> {
    let dir = tempfile::tempdir()?;
    let (report, page) = (dir.path().join("r.json"), dir.path().join("r.html"));
    let files = ["--report", report.to_str().unwrap(), "--html", page.to_str().unwrap()];
    let (code, stdout, stderr) = dbload_bin(&[args, &files[..]].concat(), &[]);
    let r = json(&std::fs::read_to_string(&report).unwrap_or_default()).unwrap_or_default();
    let html = std::fs::read_to_string(&page).unwrap_or_default();
    Ok((code, r, html, format!("{stdout}{stderr}")))
}

/// The `<text>` element plotters writes for a tick or an axis' unit.
fn svg_text(text: &str) -> String {
    format!(">\n{text}\n</text>")
}

fn an_open_loop_page_has_the_spectrum_and_the_warm_up_band(ctx: &Ctx) -> Result<()> {
    let (code, r, html, out) = run_with_page(&[
        "timeit",
        "--url",
        &ctx.url,
        "-s",
        "select 1",
        "--rate",
        "50",
        "--duration",
        "3s",
        "--warmup",
        "1s",
    ])?;
    ensure(code == 0, || format!("exit {code}: {out}"))?;
    follows(include_str!("../../schema/query-report.schema.json"), &r)?;
    let spectrum = r["latency_spectrum"].as_array().map(Vec::len);
    ensure(spectrum == Some(42) && r["service_time_spectrum"].is_array(), || format!("{spectrum:?}: {r}"))?;
    let end = r["warmup"]["end_s"].as_f64().unwrap_or(0.0);
    // Its last operation started before 1 s (at 0.98 s on the schedule) and ended soon after.
    ensure((0.95..1.5).contains(&end), || format!("the warm-up ended at {end} s"))?;
    ensure(html.contains("<h3>Latency by percentile</h3>"), || "no spectrum chart".into())?;
    for tick in ["90%", "99%", "99.9%", "99.99%", "max"] {
        ensure(html.contains(&svg_text(tick)), || format!("no tick {tick}"))?;
    }
    ensure(html.contains("service time (from the actual start)"), || "no service-time line".into())?;
    ensure(!html.contains("Latency percentiles"), || "the old bar chart is still there".into())?;
    // The band on both time charts (throughput, latency per second), and its key in their legends.
    let bands = html.to_uppercase().matches("FILL=\"#E2E2E2\"").count();
    ensure(bands == 2, || format!("{bands} warm-up bands"))?;
    ensure(html.matches("warm-up (left out of the figures)").count() == 2, || "no warm-up legend".into())
}

fn a_workload_page_has_lines_per_query_and_plan_trees(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let file = write_file(
        &dir,
        "mix.yml",
        "- name: join\n  query: select count(*) from pg_class c join pg_namespace n on n.oid = c.relnamespace\n  \
         ratio: 0.5\n\
         - name: one\n  query: select 1\n  ratio: 0.5\n",
    )?;
    let (code, r, html, out) = run_with_page(&["workload", &file, "--url", &ctx.url, "--duration", "2s", "--explain"])?;
    ensure(code == 0, || format!("exit {code}: {out}"))?;
    follows(include_str!("../../schema/query-report.schema.json"), &r)?;
    let seconds = r["queries"][0]["timeline_latency_mean_ms"].as_array().map_or(0, Vec::len);
    ensure(seconds >= 2, || format!("{seconds} seconds of the join's latency: {r}"))?;
    ensure(html.contains("<h3>Latency per second, per query</h3>"), || "no per-query chart".into())?;
    // The server's real plan, nested: the join under the aggregate, the scans under the join.
    let tree = html.find("<details class=\"plan\">").map(|at| &html[at..]).unwrap_or_default();
    let at = |node: &str| tree.find(&format!("<b>{node}")).unwrap_or(usize::MAX);
    let (agg, join, scan) = (at("Aggregate"), at("Hash Join"), at("Seq Scan on pg_class c"));
    ensure(agg < join && join < scan && scan != usize::MAX, || format!("no nested plan: {tree:.3000}"))?;
    ensure(tree.matches("<details open>").count() >= 2, || format!("the plan's nodes are not nested: {tree:.3000}"))?;
    ensure(tree.contains("rows ") && tree.contains(" estimated"), || format!("no figures: {tree:.3000}"))
}

fn a_rate_not_held_opens_the_page(ctx: &Ctx) -> Result<()> {
    // One connection of 10 ms queries cannot do 1,000/s.
    let (code, r, html, out) = run_with_page(&[
        "timeit",
        "--url",
        &ctx.url,
        "-s",
        "select pg_sleep(0.01)",
        "--rate",
        "1000",
        "--concurrency",
        "1",
        "--duration",
        "2s",
    ])?;
    ensure(code == 1, || format!("exit {code}: {out}"))?;
    let warning = r["rate_warning"].as_str().unwrap_or_default();
    ensure(warning.starts_with("could not hold 1000/s"), || format!("no rate warning: {r}"))?;
    let banner = html.find("<b>Rate not held</b>: could not hold 1000&#x2f;s");
    let figures = html.find("<div class=\"figures\">");
    ensure(banner.is_some() && banner < figures, || "no banner before the figures".into())
}
