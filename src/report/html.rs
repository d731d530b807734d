//! The HTML report (`--html FILE`): one page to share that opens offline,
//! with no stylesheet, script or font to fetch. It is built from the
//! report's JSON form, not from the report types, so one template serves
//! every command: the template shows the fields a report has and skips the
//! ones it lacks. Its charts are inline SVG (`charts.rs`); EXPLAIN plans
//! become nested `<details>`, which open without a script.

use std::path::Path;

use anyhow::{Context, Result};
use minijinja::context;
use minijinja::value::Serde;
use serde::Serialize;
use serde_json::Value as Json;

use super::charts::{charts, last_second};
use super::page::{environment, Header, SetupRows};
use super::plot::tick;
use super::server::ServerReport;
use crate::format::{group, human, Unit};

/// Compiled into the binary so that `--html` works wherever dbload was copied.
const TEMPLATE: &str = include_str!("../../templates/report.html.j2");
/// The `.html.j2` name turns minijinja's HTML autoescaping on (its default
/// callback strips `.j2`): query texts, URLs and error messages are data.
const TEMPLATE_NAME: &str = "report.html.j2";

/// Writes the HTML report of any command's report to `path`.
pub fn write_file<R: Serialize>(report: &R, path: &Path) -> Result<()> {
    let html = render(report)?;
    std::fs::write(path, html).with_context(|| format!("--html: cannot create {}", path.display()))
}

/// The HTML page of a report.
pub fn render<R: Serialize>(report: &R) -> Result<String> {
    let json = serde_json::to_value(report).context("the HTML report")?;
    let layout = parts(&json);
    // Where an open loop fell behind, the page opens saying so.
    let rate_banners: Vec<String> = layout
        .iter()
        .filter_map(|p| {
            let warning = rate_not_held(json.pointer(&p.pointer)?)?;
            Some(p.title.as_ref().map_or_else(|| warning.to_string(), |t| format!("{t}: {warning}")))
        })
        .collect();
    let parts = layout
        .into_iter()
        .map(|p| {
            let data = json.pointer(&p.pointer).unwrap_or(&Json::Null);
            let plans: Vec<Option<PlanNode>> =
                data["queries"].as_array().into_iter().flatten().map(|q| plan_tree(&q["explain"]["plan"])).collect();
            // The Server section's words, as the text report says them.
            let server = serde_json::from_value::<ServerReport>(data["server"].clone()).ok();
            let server_rows = server.as_ref().map(|r| (super::server::sampled(r), super::server::server_rows(r)));
            Ok(context! {
                title => p.title,
                report => Serde(data),
                server_rows => Serde(server_rows),
                alone_vs_load => p.compare_with.and_then(|c| json.pointer(&c)).map(Serde),
                charts => Serde(charts(data, p.span)?),
                plans => Serde(plans),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut env = environment(TEMPLATE_NAME, TEMPLATE)?;
    env.add_filter("number", |v: f64| tick(&v));
    let template = env.get_template(TEMPLATE_NAME).context("the HTML report template")?;
    let command = json["command"].as_str().unwrap_or("report");
    let header = Header::of(&json, format!("dbload {command}"));
    // The settings and DDL of the server the load went to, shown once.
    let server = ["/setup", "/ingest/setup", "/workloads/0/under_load/setup"]
        .into_iter()
        .filter_map(|p| json.pointer(p))
        .find(|s| s["server_settings"].is_object());
    template
        .render(context! {
            r => Serde(&json), parts, rate_banners, header => Serde(header), setups => Serde(setups(&json)),
            server => server.map(Serde),
        })
        .context("rendering the HTML report")
}

/// The setup, shown once at the top: the command's, or on `dbload run`'s
/// page its ingest's and each workload's (the same whether under load or
/// alone).
fn setups(json: &Json) -> Vec<SetupRows> {
    if json["command"] != "run" {
        return vec![SetupRows::of(None, &json["setup"])];
    }
    let ingest = json["ingest"].is_object().then(|| SetupRows::of(Some("Ingest".into()), &json["ingest"]["setup"]));
    let workloads = json["workloads"].as_array().into_iter().flatten().map(|w| {
        SetupRows::of(Some(format!("Workload {}", w["name"].as_str().unwrap_or("?"))), &w["under_load"]["setup"])
    });
    ingest.into_iter().chain(workloads).collect()
}

/// A section of the page: the whole report, or one part of `dbload run`'s
/// (its ingest, each workload under load and alone), by JSON pointer.
struct Part {
    title: Option<String>,
    pointer: String,
    /// For a workload alone (`--baseline`): the same workload under load.
    compare_with: Option<String>,
    /// The last second of the time axis that the part shares with the
    /// parts that ran at the same time (`dbload run`'s ingest and its
    /// workloads under load); `None`: its own.
    span: Option<f64>,
}

/// `dbload run`'s report holds several reports (each with its own setup,
/// figures and timeline); every other command's is one.
fn parts(json: &Json) -> Vec<Part> {
    if json["command"] != "run" {
        return vec![Part { title: None, pointer: String::new(), compare_with: None, span: None }];
    }
    // The mixed phase: the ingest and every workload under load, one time axis.
    let together = json["workloads"].as_array().into_iter().flatten().map(|w| &w["under_load"]);
    let span = [&json["ingest"]].into_iter().chain(together).filter_map(last_second).reduce(f64::max);
    let mut parts = Vec::new();
    if json["ingest"].is_object() {
        parts.push(Part {
            title: Some("Ingest, while the workloads ran".into()),
            pointer: "/ingest".into(),
            compare_with: None,
            span,
        });
    }
    for (i, w) in json["workloads"].as_array().into_iter().flatten().enumerate() {
        let name = w["name"].as_str().unwrap_or("?");
        let loaded = format!("/workloads/{i}/under_load");
        parts.push(Part {
            title: Some(format!("Workload {name}, under the ingest load")),
            pointer: loaded.clone(),
            compare_with: None,
            span,
        });
        for (key, when, rows) in
            [("alone_before", "before", "table_rows_before"), ("alone_after", "after", "table_rows_after")]
        {
            if w[key].is_object() {
                let at = json[rows].as_u64().map(|n| format!(", table at {} rows", group(n))).unwrap_or_default();
                parts.push(Part {
                    title: Some(format!("Workload {name}, alone just {when} the mixed phase (--baseline{at})")),
                    pointer: format!("/workloads/{i}/{key}"),
                    compare_with: Some(loaded.clone()),
                    span: None,
                });
            }
        }
    }
    parts
}

/// Why a part's open loop did not hold its rate, when it did not: the
/// `rate_warning` that the text report prints (`Pacing::of` decides it
/// once, from the late starts and the units dropped). The page opens with it.
fn rate_not_held(part: &Json) -> Option<&str> {
    part["rate_warning"].as_str()
}

/// A node of an EXPLAIN plan as the page nests it: what it does, its key
/// figures, and the nodes under it.
#[derive(Debug, Serialize, serde::Deserialize)]
struct PlanNode {
    /// The node type with what it reads: `Index Scan using pk on accounts a`.
    node: String,
    /// Rows (actual of estimated under ANALYZE), loops and time.
    figures: String,
    children: Vec<PlanNode>,
}

/// The tree of a plan that `--explain` captured (PostgreSQL's `FORMAT
/// JSON`, `[{"Plan": {...}}]`); `None` without a plan.
fn plan_tree(plan: &Json) -> Option<PlanNode> {
    plan.get(0)?.get("Plan").filter(|n| n.is_object()).map(plan_node)
}

fn plan_node(n: &Json) -> PlanNode {
    let text = |key: &str| n[key].as_str();
    let mut node = text("Node Type").unwrap_or("?").to_string();
    if let Some(how) = text("Strategy").filter(|s| *s != "Plain") {
        node = format!("{how} {node}");
    }
    if let Some(index) = text("Index Name") {
        node += &format!(" using {index}");
    }
    if let Some(relation) = text("Relation Name") {
        node += &format!(" on {relation}");
        if let Some(alias) = text("Alias").filter(|a| *a != relation) {
            node += &format!(" {alias}");
        }
    }
    let estimated = n["Plan Rows"].as_f64().map(|r| group(r as u64));
    let mut figures = match (n["Actual Rows"].as_f64(), estimated) {
        (Some(actual), Some(est)) => vec![format!("rows {} of {est} estimated", group(actual as u64))],
        (None, Some(est)) => vec![format!("rows {est} estimated")],
        _ => Vec::new(),
    };
    // PostgreSQL gives a node's time per loop: it says so when there are several.
    let loops = n["Actual Loops"].as_u64().filter(|l| *l > 1);
    if let Some(loops) = loops {
        figures.push(format!("{} loops", group(loops)));
    }
    if let Some(ms) = n["Actual Total Time"].as_f64() {
        figures.push(format!("{}{}", human(Some(ms), Unit::Ms), if loops.is_some() { " per loop" } else { "" }));
    }
    let children = n["Plans"].as_array().into_iter().flatten().map(plan_node).collect();
    PlanNode { node, figures: figures.join(" · "), children }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::charts::charts;
    use super::super::charts::tests::{latency, seconds, timeline, workload, x_ticks};
    use super::super::plot::LegendKey;
    use super::super::plot::SECONDS;
    use super::*;

    /// Anything the page would fetch: it must fetch nothing.
    fn assert_offline(html: &str) {
        for needle in ["http://", "https://", "src=", "href=", "url(", "@import", "<link", "<script"] {
            assert!(!html.contains(needle), "the page holds {needle:?}");
        }
    }

    #[test]
    fn ingest_report_is_one_offline_page_with_charts() {
        let report = crate::report::ingest::tests::report("");
        let html = render(&report).unwrap();
        assert!(html.starts_with("<!doctype html>"), "{}", &html[..80]);
        assert!(html.trim_end().ends_with("</html>"));
        assert!(html.matches("<svg").count() >= 1, "the percentile chart at least");
        assert!(html.contains("Latency by percentile"));
        assert!(html.contains("10,000"), "the rows figure");
        assert!(html.contains("SQLSTATE 23505"), "the error class");
        assert!(html.contains("<pre>CREATE TABLE &quot;measurement&quot;"), "the DDL, escaped, in a <pre>");
        assert!(!html.contains("secret"), "the password is redacted as in the JSON");
        assert_offline(&html);
    }

    /// Issue 34: the page drew the server's events and waits on its charts
    /// but had no "Server" section: the dip's sentence, the top waits and
    /// what could not be seen were only in the text and the JSON.
    #[test]
    fn the_page_says_what_the_server_did_in_words() {
        let report = crate::report::ingest::tests::report("");
        let mut json = serde_json::to_value(&report).unwrap();
        json["server"] = serde_json::json!({
            "sampled_every_s": 1.0, "unseen": ["other sessions' queries: grant pg_read_all_stats"],
            "failed_samples": 0, "first_failure": null,
            "waits": [{"wait": "Lock:relation", "samples": 4, "share": 0.5}],
            "other_waits": [{"wait": "Timeout:PgSleep", "samples": 2, "share": 1.0}],
            "events": [{"second": 2, "kind": "checkpoint_requested", "what": "a requested checkpoint"}],
            "dips": [{"start_s": 4, "end_s": 5, "fell_pct": 90.0, "before_per_sec": 20000.0, "during_per_sec": 2000.0,
                      "waits": [], "events": [],
                      "sentence": "throughput fell 90 % at 4–5 s; coincided with Lock:relation waits in 100 % of samples"}],
            "seconds": [],
            "sampler_cost": {"queries_per_sec": 3.1, "backend_cpu_s": 0.01, "backend_cpu_share": 0.0005, "cores": 2,
                             "backend_cpu_unknown": null}
        });
        let html = render(&json).unwrap();
        assert!(html.contains("<h3>Server</h3>"), "a Server section");
        for said in [
            "throughput fell 90 % at 4–5 s; coincided with Lock:relation waits in 100 % of samples",
            "Lock:relation",
            "Timeout:PgSleep",
            "requested checkpoint at 2 s",
            "grant pg_read_all_stats",
            "(3.10 statements",
        ] {
            assert!(html.contains(said), "the page says {said:?}");
        }
        json["server"] = serde_json::Value::Null;
        assert!(!render(&json).unwrap().contains("<h3>Server</h3>"), "none when the server was not sampled");
    }

    /// Found by the Citus engine tests: the page of a run on a cluster
    /// failed to render ("unknown filter: filter grouped is unknown"), its
    /// per-node table calling filters the page no longer had once every
    /// figure went through `unit`.
    #[test]
    fn a_cluster_s_page_shows_each_node_s_part_of_the_table() {
        use crate::report::server_cost::tests::{cost_with, share};
        let mut report = crate::report::ingest::tests::report("");
        report.server_cost = Some(cost_with(Ok(vec![
            share(Some("w1:5432"), 11, Some(6000), 7 << 20),
            share(Some("w2:5432"), 11, Some(2000), 1 << 20),
        ])));
        let html = render(&report).unwrap();
        let w1 = "<td>w1:5432</td><td>11</td><td>–</td><td>6,000</td><td>7.0 MiB</td><td>1.50×</td>";
        assert!(html.contains(w1), "{}", &html[html.find("<th>node</th>").unwrap_or(0)..][..600]);
        assert_offline(&html);
    }

    /// Issue 35: at 390 px the charts were scaled to the screen, and their
    /// text to about 5 px. A chart keeps its own width (its SVG's, whose
    /// text is 11 px or more: see `tick_labels_stay_inside_the_chart`) and
    /// its box scrolls, on the report's page and on compare's and sweep's.
    #[test]
    fn charts_keep_their_width_and_scroll_on_a_phone() {
        let width = format!("min-width: {}px", super::super::plot::SIZE.0);
        let compare = super::super::compare_html::TEMPLATE;
        for (page, css) in [("report", render(&workload(timeline(), latency())).unwrap()), ("compare", compare.into())]
        {
            let rule = |selector: &str| {
                css.split(&format!("\n{selector} {{")).nth(1).and_then(|r| r.split('}').next()).map(str::to_string)
            };
            let svg = rule(".chart svg").unwrap_or_default();
            assert!(svg.contains(&width) && svg.contains("max-width: none"), "{page}: .chart svg {{{svg}}}");
            assert!(rule(".chart").unwrap_or_default().contains("overflow-x: auto"), "{page}: the box scrolls");
        }
    }

    #[test]
    fn report_text_is_escaped() {
        let html = render(&workload(timeline(), latency())).unwrap();
        assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"), "the query name, escaped");
        assert!(html.contains("select &#x27;&lt;b&gt;&#x27; &amp; 1"), "the query text, escaped");
        assert!(html.contains("column &quot;&lt;nosuch&gt;&quot; does not exist"), "the error example, escaped");
        assert_offline(&html);
    }

    #[test]
    fn stage_boundaries_are_lines_on_the_timeline_charts_and_stages_a_table() {
        let mut report = workload(timeline(), latency());
        let stage = |n: u64, start: f64, end: f64| {
            json!({"stage": n, "ramps": "rate", "start_s": start, "end_s": end, "from": 0.0, "to": 100.0,
                   "target_per_sec": 50.0, "ok": 100, "units": 100, "errors": 0, "per_sec": 50.0, "latency_ms": null})
        };
        report["stages"] = json!([stage(1, 0.0, 1.0), stage(2, 1.0, 2.0)]);
        let boundary = "#6B7280";
        let plain = charts(&workload(timeline(), latency()), None).unwrap();
        assert!(!plain[0].svg.to_uppercase().contains(boundary), "no stages, no boundary");
        let charts = charts(&report, None).unwrap();
        for c in &charts[..2] {
            let lines = c.svg.to_uppercase().matches(&format!("STROKE=\"{boundary}\"")).count();
            assert_eq!(lines, 1, "{}: one boundary, between the two stages", c.title);
            assert_eq!(c.legend.last().unwrap().label, "stage boundary");
        }
        let html = render(&report).unwrap();
        assert!(html.contains("<h3>Stages</h3>") && html.contains("0 → 100/s"), "the stages' table");
    }

    #[test]
    fn charts_are_skipped_without_data() {
        let html = render(&workload(json!([]), Json::Null)).unwrap();
        assert!(!html.contains("<svg"), "no timeline and no latency: no chart");
        assert!(html.contains("<h3>Queries</h3>"), "the rest of the page is there");
        let one_second =
            json!([{"second": 0, "rows": 5, "batches": 5, "errors": 0, "latency_mean_ms": 1.0, "latency_max_ms": 2.0}]);
        let titles: Vec<String> =
            charts(&workload(one_second, latency()), None).unwrap().into_iter().map(|c| c.title).collect();
        assert_eq!(titles, ["Latency by percentile"], "one second is one point, not a line");
        // A dry run: no target, no server fields.
        let mut dry = serde_json::to_value(crate::report::ingest::tests::report("")).unwrap();
        dry["setup"].as_object_mut().unwrap().extend([
            ("target_kind".into(), json!("none")),
            ("target".into(), Json::Null),
            ("engine".into(), Json::Null),
            ("server_version".into(), Json::Null),
            ("server_settings".into(), json!({})),
            ("ddl".into(), json!([])),
        ]);
        let html = render(&dry).unwrap();
        assert!(html.contains("dry run: generated and encoded, nothing sent"));
    }

    #[test]
    fn a_mixed_run_has_a_section_per_part() {
        let w = workload(timeline(), latency());
        let run = json!({
            "schema_version": 2, "dbload_version": "0.1.0", "command": "run", "status": "failed", "exit_code": 1,
            "fail_if": [{"condition": "errors > 0", "held": true}],
            "ingest": serde_json::to_value(crate::report::ingest::tests::report("")).unwrap(),
            "workloads": [{"name": "dashboards", "under_load": w, "alone_before": w, "alone_after": w}],
            "table_rows_before": 0, "table_rows_after": 120000, "comparison": "each workload alone ..."
        });
        let html = render(&run).unwrap();
        for title in [
            "Ingest, while the workloads ran",
            "Workload dashboards, under the ingest load",
            "Workload dashboards, alone just before the mixed phase (--baseline, table at 0 rows)",
            "Workload dashboards, alone just after the mixed phase (--baseline, table at 120,000 rows)",
            "each workload alone ...",
            "Alone vs under the ingest load",
        ] {
            assert!(html.contains(title), "{title}");
        }
        assert!(html.contains("held: the run fails"));
        assert_offline(&html);
    }

    /// Issue 35: `dbload run`'s page drew the writes and the reads, which
    /// ran at the same time, each on a time axis of its own (the ingest's
    /// 2 s as wide as the queries' 5 s). Every time chart of the mixed
    /// phase has the same ticks at the same places.
    #[test]
    fn a_mixed_run_draws_writes_and_reads_on_one_time_axis() {
        let mut ingest = serde_json::to_value(crate::report::ingest::tests::report("")).unwrap();
        ingest["timeline"] = seconds(3);
        ingest["wall_s"] = json!(3.0);
        let mut reads = workload(seconds(6), latency());
        reads["wall_s"] = json!(6.0);
        let run = json!({
            "schema_version": 2, "dbload_version": "0.1.0", "command": "run", "status": "ok", "exit_code": 0,
            "fail_if": [], "ingest": ingest,
            "workloads": [{"name": "dashboards", "under_load": reads, "alone_before": null, "alone_after": null}],
            "table_rows_before": null, "table_rows_after": null, "comparison": null
        });
        let html = render(&run).unwrap();
        let svgs: Vec<&str> = html
            .split("<svg")
            .skip(1)
            .filter_map(|s| s.split("</svg>").next())
            .filter(|s| s.contains(SECONDS.desc))
            .collect();
        assert!(svgs.len() >= 4, "the throughput and latency of each: {} time charts", svgs.len());
        let axis = x_ticks(svgs[0], &SECONDS);
        assert_eq!(axis.last().map(|t| t.1.as_str()), Some("5"), "{axis:?}");
        for svg in &svgs[1..] {
            assert_eq!(x_ticks(svg, &SECONDS), axis);
        }
    }

    #[test]
    fn the_warm_up_is_shaded_on_the_time_charts() {
        let shade = "#E2E2E2";
        let plain = charts(&workload(timeline(), latency()), None).unwrap();
        assert!(plain.iter().all(|c| !c.svg.to_uppercase().contains(shade)), "no warm-up, no band");
        let mut warm = workload(timeline(), latency());
        warm["warmup"] = json!({"count": 20, "errors": 0, "duration_s": 0.9, "end_s": 1.0});
        let charts = charts(&warm, None).unwrap();
        let (time, spectrum) = charts.split_at(2);
        for c in time {
            assert!(c.svg.to_uppercase().contains(&format!("FILL=\"{shade}\"")), "{}: the band", c.title);
            let keys: Vec<&LegendKey> = c.legend.iter().filter(|k| k.label.starts_with("warm-up")).collect();
            assert!(keys.len() == 1 && keys[0].band, "{}: keyed by a block", c.title);
        }
        assert!(!spectrum[0].svg.to_uppercase().contains(shade), "the spectrum has no time axis");
        let html = render(&warm).unwrap();
        assert!(html.contains("<i class=\"band\" style=\"background: #e2e2e2\"></i>warm-up"), "the page's key");
    }

    #[test]
    fn a_rate_not_held_opens_the_page_with_a_banner() {
        let held = render(&workload(timeline(), latency())).unwrap();
        assert!(!held.contains("Rate not held"));
        let mut behind = workload(timeline(), latency());
        behind["rate_warning"] = json!("could not hold 500/s: 40 of 120 operations started more than 5 ms late");
        let html = render(&behind).unwrap();
        // minijinja escapes `/` too.
        let banner = html.find("<b>Rate not held</b>: could not hold 500&#x2f;s: 40 of 120").expect("the banner");
        assert!(banner < html.find("<div class=\"figures\">").unwrap(), "before the figures");
        assert_eq!(html.matches("could not hold 500&#x2f;s").count(), 1, "said once");
        let run = json!({
            "schema_version": 2, "dbload_version": "0.1.0", "command": "run", "status": "failed", "exit_code": 1,
            "fail_if": [], "workloads": [{"name": "dashboards", "under_load": behind}]
        });
        let html = render(&run).unwrap();
        assert!(
            html.contains("Rate not held</b>: Workload dashboards, under the ingest load: could not hold 500&#x2f;s")
        );
    }

    /// A real plan of the harness's PostgreSQL 15 (`EXPLAIN (ANALYZE, VERBOSE,
    /// BUFFERS, FORMAT JSON)` of a join), trimmed to the keys the tree reads.
    const PLAN: &str = r#"[{"Plan": {"Node Type": "Aggregate", "Strategy": "Plain", "Plan Rows": 1,
        "Actual Total Time": 0.412, "Actual Rows": 1, "Actual Loops": 1, "Plans": [
          {"Node Type": "Hash Join", "Plan Rows": 415, "Actual Total Time": 0.398, "Actual Rows": 415,
           "Actual Loops": 1, "Plans": [
             {"Node Type": "Seq Scan", "Relation Name": "pg_class", "Alias": "c", "Plan Rows": 415,
              "Actual Total Time": 0.051, "Actual Rows": 415, "Actual Loops": 1},
             {"Node Type": "Hash", "Plan Rows": 5, "Actual Total Time": 0.02, "Actual Rows": 5,
              "Actual Loops": 1, "Plans": [
                {"Node Type": "Index Scan", "Index Name": "pg_namespace_oid_index",
                 "Relation Name": "pg_namespace", "Alias": "pg_namespace", "Plan Rows": 5,
                 "Actual Total Time": 0.011, "Actual Rows": 5, "Actual Loops": 3}]}]}]},
        "Planning Time": 0.3, "Execution Time": 0.5}]"#;

    #[test]
    fn an_explain_plan_is_a_tree_of_details() {
        let plan: Json = serde_json::from_str(PLAN).unwrap();
        let tree = plan_tree(&plan).unwrap();
        assert_eq!((tree.node.as_str(), tree.figures.as_str()), ("Aggregate", "rows 1 of 1 estimated · 412 µs"));
        let join = &tree.children[0];
        let kids: Vec<&str> = join.children.iter().map(|n| n.node.as_str()).collect();
        assert_eq!(kids, ["Seq Scan on pg_class c", "Hash"]);
        let index = &join.children[1].children[0];
        assert_eq!(index.node, "Index Scan using pg_namespace_oid_index on pg_namespace");
        assert_eq!(index.figures, "rows 5 of 5 estimated · 3 loops · 11.0 µs per loop");
        assert!(plan_tree(&Json::Null).is_none());

        let mut report = workload(timeline(), latency());
        report["queries"][0]["explain"] = json!({"mode": "analyze", "top_node": "Aggregate", "top_node_ms": 0.412,
            "planning_ms": 0.3, "execution_ms": 0.5, "distributed": null, "plan": plan});
        let html = render(&report).unwrap();
        let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("{needle} not in the page"));
        // Nested: each node's <details> holds the nodes under it, in order.
        let (agg, join, seq, hash, index) = (
            at("<b>Aggregate</b>"),
            at("<b>Hash Join</b>"),
            at("<b>Seq Scan on pg_class c</b>"),
            at("<b>Hash</b>"),
            at("<b>Index Scan using"),
        );
        assert!(agg < join && join < seq && seq < hash && hash < index);
        assert_eq!(html.matches("<details open>").count(), 3, "Aggregate, Hash Join and Hash have children");
        let closing = html[index..].find("</details></li></ul></details></li></ul></details></li></ul></details>");
        assert!(closing.is_some(), "the index scan is three levels down, inside the plan's <details>");
        assert_offline(&html);
    }

    #[test]
    fn an_unwritable_path_is_named() {
        let err = write_file(&workload(json!([]), Json::Null), Path::new("/nonexistent/dir/r.html")).unwrap_err();
        assert!(format!("{err:#}").starts_with("--html: cannot create /nonexistent/dir/r.html"), "{err:#}");
    }
}
