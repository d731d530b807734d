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
fn scrape(addr: &str) -> Result<Scrape> {
    let mut stream = TcpStream::connect(addr).with_context(|| format!("connecting to {addr}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(stream, "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let (head, body) = response.split_once("\r\n\r\n").context("no end of headers")?;
    ensure(head.starts_with("HTTP/1.1 200"), || format!("status: {head}"))?;
    ensure(head.to_ascii_lowercase().contains("content-type: text/plain; version=0.0.4"), || head.to_string())?;
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

/// Two scrapes a second apart, once the run has done something: the
/// operations, `units` counter and histogram grow, the labels name the
/// command and its run; then the run ends as it would have (exit 0).
fn scraped_twice(argv: &[&str], command: &str, units: &str) -> Result<()> {
    let (mut child, addr, _stderr) = started(argv)?;
    let result = (|| -> Result<()> {
        let mut first = scrape(&addr)?;
        for _ in 0..100 {
            if counter(&first, "dbload_operations_total")? > 0.0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
            first = scrape(&addr)?;
        }
        std::thread::sleep(Duration::from_millis(1500));
        let second = scrape(&addr)?;
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
        ensure(samples(&second, "dbload_pacer_lag_seconds").count() == 1, || "no pacer lag".into())?;
        Ok(())
    })();
    if result.is_err() {
        let _ = child.kill();
    }
    let status = child.wait()?;
    result?;
    ensure(status.code() == Some(0), || format!("exit {status:?}"))
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
