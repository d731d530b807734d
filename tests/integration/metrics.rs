//! Issue 34: `--metrics-listen ADDR` serves a run's figures as Prometheus
//! text while it runs. The binary runs against the harness's PostgreSQL,
//! is scraped twice mid-run over plain HTTP, and each scrape is parsed by a
//! Prometheus text parser (`prometheus-parse`), so what a Prometheus server
//! would read is what is checked: counters that grow, a histogram whose
//! buckets are cumulative and whose `_count` is its `+Inf` bucket.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use prometheus_parse::{Sample, Scrape, Value};

use crate::support::{ensure, refused, Ctx};
use crate::Phase::Parallel;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        (
            "metrics::an_ingest_is_scraped_mid_run_and_its_counters_grow",
            an_ingest_is_scraped_mid_run_and_its_counters_grow,
            Parallel,
        ),
        (
            "metrics::a_timeit_is_scraped_mid_run_and_its_counters_grow",
            a_timeit_is_scraped_mid_run_and_its_counters_grow,
            Parallel,
        ),
        ("metrics::a_port_already_taken_is_bad_usage", a_port_already_taken_is_bad_usage, Parallel),
        ("metrics::a_mixed_run_s_parts_are_labelled_apart", a_mixed_run_s_parts_are_labelled_apart, Parallel),
        (
            "metrics::an_init_is_scraped_while_it_fills_the_tables",
            an_init_is_scraped_while_it_fills_the_tables,
            Parallel,
        ),
        (
            "metrics::a_sweep_s_points_are_served_each_with_its_point",
            a_sweep_s_points_are_served_each_with_its_point,
            Parallel,
        ),
        (
            "metrics::ctrl_c_ends_the_run_and_the_endpoint_with_a_scraper_connected",
            ctrl_c_ends_the_run_and_the_endpoint_with_a_scraper_connected,
            Parallel,
        ),
    ]
}

/// The binary, started with `argv`; its stderr read on a thread until it
/// says where its metrics are served, which is returned (`host:port`).
fn started(argv: &[&str]) -> Result<(Child, String, mpsc::Receiver<String>)> {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(argv)
        .env_remove("DATABASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let stderr = child.stderr.take().context("stderr")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut said = Vec::new();
    loop {
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => match line.strip_prefix("Metrics: http://").and_then(|l| l.strip_suffix("/metrics")) {
                Some(addr) => return Ok((child, addr.to_string(), rx)),
                None => said.push(line),
            },
            Err(_) => {
                let _ = child.kill();
                bail!("no 'Metrics: http://ADDR/metrics' line on stderr; it said:\n{}", said.join("\n"))
            }
        }
    }
}

/// `GET /metrics` from `addr`: the body, after checking the status and
/// the content type of Prometheus's text format.
fn scrape_text(addr: &str) -> Result<String> {
    let mut stream = TcpStream::connect(addr).with_context(|| format!("connecting to {addr}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(stream, "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let (head, body) = response.split_once("\r\n\r\n").context("no end of headers")?;
    ensure(head.starts_with("HTTP/1.1 200"), || format!("status: {head}"))?;
    ensure(head.to_ascii_lowercase().contains("content-type: text/plain; version=0.0.4"), || head.to_string())?;
    Ok(body.to_string())
}

/// [`scrape_text`], parsed.
fn scrape(addr: &str) -> Result<Scrape> {
    let body = scrape_text(addr)?;
    Ok(Scrape::parse(body.lines().map(|l| Ok(l.to_string())))?)
}

/// The value of the counter `name` (its one sample, or the sum of its
/// samples across label sets).
fn counter(scrape: &Scrape, name: &str) -> Result<f64> {
    let values: Vec<f64> = samples(scrape, name)
        .map(|s| match s.value {
            Value::Counter(v) | Value::Untyped(v) => Ok(v),
            ref other => bail!("{name} is not a counter: {other:?}"),
        })
        .collect::<Result<_>>()?;
    ensure(!values.is_empty(), || format!("no {name} in the scrape"))?;
    Ok(values.iter().sum())
}

fn samples<'a>(scrape: &'a Scrape, name: &'a str) -> impl Iterator<Item = &'a Sample> {
    scrape.samples.iter().filter(move |s| s.metric == name)
}

/// The latency histogram: cumulative buckets from 0.0001 s up to +Inf,
/// `_count` equal to the `+Inf` bucket; returns its count.
fn histogram(scrape: &Scrape) -> Result<f64> {
    let h = samples(scrape, "dbload_latency_seconds").next().context("no dbload_latency_seconds histogram")?;
    let Value::Histogram(buckets) = &h.value else { bail!("dbload_latency_seconds: {:?}", h.value) };
    ensure(buckets.first().map(|b| b.less_than) == Some(0.0001), || format!("first bucket: {buckets:?}"))?;
    ensure(buckets.iter().any(|b| b.less_than == 10.0), || format!("no 10 s bucket: {buckets:?}"))?;
    ensure(buckets.last().map(|b| b.less_than) == Some(f64::INFINITY), || format!("last bucket: {buckets:?}"))?;
    ensure(buckets.windows(2).all(|w| w[0].less_than < w[1].less_than && w[0].count <= w[1].count), || {
        format!("buckets not cumulative: {buckets:?}")
    })?;
    let count = counter(scrape, "dbload_latency_seconds_count")?;
    let inf = buckets.last().map_or(0.0, |b| b.count);
    ensure(count == inf, || format!("_count {count} but the +Inf bucket {inf}"))?;
    ensure(counter(scrape, "dbload_latency_seconds_sum")? > 0.0 || count == 0.0, || "a zero _sum".into())?;
    Ok(count)
}

/// The binary started with `argv`, `check`ed at its metrics address
/// while it runs (killed when the check fails); then it must end as it
/// would have, exit 0.
fn checked_while_running(argv: &[&str], check: impl FnOnce(&str) -> Result<()>) -> Result<()> {
    let (mut child, addr, _stderr) = started(argv)?;
    let result = check(&addr);
    if result.is_err() {
        let _ = child.kill();
    }
    let status = child.wait()?;
    result?;
    ensure(status.code() == Some(0), || format!("exit {status:?}"))
}

/// Two scrapes a second apart, once the run has done something: the
/// operations, `units` counter and histogram grow, the labels name the
/// command and its run; then the run ends as it would have (exit 0).
fn scraped_twice(argv: &[&str], command: &str, units: &str) -> Result<()> {
    checked_while_running(argv, |addr| {
        let mut first = scrape(addr)?;
        for _ in 0..100 {
            if counter(&first, "dbload_operations_total")? > 0.0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
            first = scrape(addr)?;
        }
        std::thread::sleep(Duration::from_millis(1500));
        let second = scrape(addr)?;
        for name in ["dbload_operations_total", units] {
            let (a, b) = (counter(&first, name)?, counter(&second, name)?);
            ensure(a > 0.0 && b > a, || format!("{name}: {a} then {b}"))?;
        }
        let (a, b) = (histogram(&first)?, histogram(&second)?);
        ensure(b > a, || format!("the histogram's count: {a} then {b}"))?;
        let ops = samples(&second, "dbload_operations_total").next().context("operations")?;
        ensure(ops.labels.get("command") == Some(command), || format!("labels: {:?}", ops.labels))?;
        ensure(ops.labels.get("run") == Some("1"), || format!("labels: {:?}", ops.labels))?;
        ensure(ops.labels.get("instance") == Some("0"), || format!("labels: {:?}", ops.labels))?;
        ensure(ops.labels.get("run_id").is_some_and(|id| !id.is_empty()), || format!("labels: {:?}", ops.labels))?;
        ensure(samples(&second, "dbload_client_cpu_seconds_total").count() == 1, || "no client CPU".into())?;
        ensure(samples(&second, "dbload_pacer_lag_seconds").count() == 1, || "no pacer lag".into())
    })
}

fn an_ingest_is_scraped_mid_run_and_its_counters_grow(ctx: &Ctx) -> Result<()> {
    let argv = [
        "ingest",
        "--url",
        &ctx.url,
        "--table",
        "metrics_ingest",
        "--batch-size",
        "100",
        "--rate",
        "5000",
        "--duration",
        "5s",
        "--metrics-listen",
        "127.0.0.1:0",
        "--output",
        "json",
    ];
    scraped_twice(&argv, "ingest", "dbload_rows_total")
}

fn a_timeit_is_scraped_mid_run_and_its_counters_grow(ctx: &Ctx) -> Result<()> {
    let argv = [
        "timeit",
        "--url",
        &ctx.url,
        "-s",
        "select 1",
        "--rate",
        "500",
        "--duration",
        "5s",
        "--metrics-listen",
        "127.0.0.1:0",
        "--output",
        "json",
    ];
    scraped_twice(&argv, "timeit", "dbload_operations_total")
}

/// The values of label `label` on the series `name` of a scrape.
fn label_values(scrape: &Scrape, name: &str, label: &str) -> Vec<String> {
    let mut values: Vec<String> =
        samples(scrape, name).filter_map(|s| s.labels.get(label).map(str::to_string)).collect();
    values.sort();
    values.dedup();
    values
}

/// `dbload run FILE`: the ingest and a workload at once, scraped mid-run:
/// each part has its own series (`part="ingest"`, `part="recent"`), rows
/// are the ingest's alone, and both parts' operations grow.
fn a_mixed_run_s_parts_are_labelled_apart(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mixed = dir.path().join("mixed.yml");
    std::fs::write(
        &mixed,
        "duration: 5s\ningest:\n  table: metrics_mixed\n  drop_table: true\n  batch_size: 100\n  rate: 5000\n\
         workloads:\n  - name: recent\n    concurrency: 1\n    rate: 200\n    queries:\n      - query: select 1\n        ratio: 1\n",
    )?;
    let mixed = mixed.to_str().context("a temporary path")?;
    let argv = ["run", mixed, "--url", &ctx.url, "--metrics-listen", "127.0.0.1:0", "--output", "json"];
    checked_while_running(&argv, |addr| {
        let mut last = String::new();
        for _ in 0..100 {
            let scrape = scrape(addr)?;
            let parts = label_values(&scrape, "dbload_operations_total", "part");
            let grown =
                samples(&scrape, "dbload_operations_total").all(|s| matches!(s.value, Value::Counter(v) if v > 0.0));
            if parts == ["ingest", "recent"] && grown {
                let rows = label_values(&scrape, "dbload_rows_total", "part");
                ensure(rows == ["ingest"], || format!("rows_total's parts: {rows:?}"))?;
                let latency = label_values(&scrape, "dbload_latency_seconds_count", "part");
                return ensure(latency == ["ingest", "recent"], || format!("latency's parts: {latency:?}"));
            }
            last = format!("parts {parts:?}, grown {grown}");
            std::thread::sleep(Duration::from_millis(100));
        }
        bail!("never both parts with operations: {last}")
    })
}

/// `dbload init --metrics-listen`: scraped while it fills pgbench's
/// tables, its rows counted and labelled `command="init"`; exit 0.
fn an_init_is_scraped_while_it_fills_the_tables(ctx: &Ctx) -> Result<()> {
    let db = crate::pgbench::own_database(ctx, "metrics_init", None)?;
    let argv = ["init", "--url", &db.url, "--scale", "5", "--quiet", "--metrics-listen", "127.0.0.1:0"];
    checked_while_running(&argv, |addr| {
        let mut last = None;
        for _ in 0..200 {
            let Ok(scrape) = scrape(addr) else { break };
            if let Some(rows) = samples(&scrape, "dbload_rows_total").next() {
                ensure(rows.labels.get("command") == Some("init"), || format!("labels: {:?}", rows.labels))?;
                if counter(&scrape, "dbload_rows_total")? > 0.0 {
                    return Ok(());
                }
            }
            last = Some(scrape.samples.len());
            std::thread::sleep(Duration::from_millis(20));
        }
        bail!("no dbload_rows_total while init ran ({last:?} samples in the last scrape)")
    })
}

/// `dbload sweep ... -- timeit ... --metrics-listen ADDR`: each point
/// serves on the same address in turn, labelled with its point.
fn a_sweep_s_points_are_served_each_with_its_point(ctx: &Ctx) -> Result<()> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let addr = format!("127.0.0.1:{port}");
    let argv = [
        "sweep",
        "--vary",
        "concurrency=1,2",
        "--no-results",
        "--output",
        "json",
        "--",
        "timeit",
        "--url",
        &ctx.url,
        "-s",
        "select 1",
        "--rate",
        "200",
        "--duration",
        "3s",
        "--metrics-listen",
        &addr,
    ];
    let (mut child, _, _stderr) = started(&argv)?;
    let (mut points, mut failed) = (Vec::new(), None);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while points.len() < 2 && std::time::Instant::now() < deadline && child.try_wait()?.is_none() {
        // Read from the text: the parser drops a label whose value holds
        // a `=`, as a point's does (`concurrency=2`); Prometheus does not.
        match scrape_text(&addr).and_then(|text| {
            Scrape::parse(text.lines().map(|l| Ok(l.to_string())))?;
            Ok(text)
        }) {
            Ok(text) => points.extend(
                text.lines()
                    .filter(|l| l.starts_with("dbload_operations_total{"))
                    .filter_map(|l| l.split("point=\"").nth(1)?.split('"').next().map(str::to_string)),
            ),
            Err(e) => failed = Some(e),
        }
        points.sort();
        points.dedup();
        std::thread::sleep(Duration::from_millis(200));
    }
    let status = child.wait()?;
    // The sweep runs its points in a shuffled order.
    ensure(points == ["concurrency=1", "concurrency=2"], || {
        format!("points served: {points:?}, exit {status:?}, last failed scrape: {failed:?}")
    })?;
    ensure(status.code() == Some(0), || format!("exit {status:?}"))
}

/// A port another process listens on: exit 2, naming the option and the
/// address, before anything runs.
fn a_port_already_taken_is_bad_usage(ctx: &Ctx) -> Result<()> {
    let taken = std::net::TcpListener::bind("127.0.0.1:0")?;
    let addr = taken.local_addr()?.to_string();
    refused(
        &["ingest", "--url", &ctx.url, "--table", "metrics_taken", "--rows", "1000", "--metrics-listen", &addr],
        &format!("--metrics-listen {addr}"),
    )
}

/// Ctrl-C mid-run, with a scraper that keeps its connection open (as
/// Prometheus does): the run stops with its partial report (exit 130)
/// within the usual time, and the endpoint ends with it, its connection
/// closed rather than keeping the process alive.
fn ctrl_c_ends_the_run_and_the_endpoint_with_a_scraper_connected(ctx: &Ctx) -> Result<()> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let addr = format!("127.0.0.1:{port}");
    let scraper = std::thread::spawn({
        let addr = addr.clone();
        move || -> Result<String> {
            let mut stream = (0..200)
                .find_map(|_| {
                    TcpStream::connect(&addr).ok().or_else(|| {
                        std::thread::sleep(Duration::from_millis(50));
                        None
                    })
                })
                .context("the endpoint never listened")?;
            stream.set_read_timeout(Some(Duration::from_secs(30)))?;
            write!(stream, "GET /metrics HTTP/1.1\r\nHost: {addr}\r\n\r\n")?;
            // Kept alive: read until the server closes it.
            let mut all = Vec::new();
            stream.read_to_end(&mut all)?;
            Ok(String::from_utf8_lossy(&all).into_owned())
        }
    });
    let argv = [
        "ingest",
        "--url",
        &ctx.url,
        "--table",
        "metrics_interrupted",
        "--batch-size",
        "100",
        "--rate",
        "2000",
        "--duration",
        "60s",
        "--metrics-listen",
        &addr,
        "--output",
        "json",
    ];
    crate::support::interrupted(&argv, None, Duration::from_secs(3))?;
    let scraped = scraper.join().map_err(|_| anyhow::anyhow!("the scraper panicked"))??;
    ensure(scraped.starts_with("HTTP/1.1 200") && scraped.contains("dbload_operations_total"), || scraped.clone())
}
