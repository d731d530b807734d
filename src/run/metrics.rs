//! `--metrics-listen ADDR`: the run's figures served as Prometheus text
//! while it runs, so a dashboard shows a long run as it goes and the
//! instances of a distributed run side by side. The endpoint reads what the
//! run already produces, never the workers' own state: the progress
//! counters and the totals the workers publish every 10 ms
//! (`stats::tally`), the sampler's latest second (`stats::server::Latest`)
//! and the process's CPU time. It is bound before the first run (a port
//! already taken is bad usage, exit 2), serves on the command's runtime
//! for as long as the command runs, whatever stopped its runs (Ctrl-C
//! included), and ends with it.
//!
//! The endpoint spans the command's runs (`--runs`) while each run's
//! counters are made by the measuring scaffold deep inside the command's
//! run; the pipeline hands the scaffold the endpoint's [`Board`] as a
//! task-local around each run ([`Endpoint::during`]), rather than through
//! every command's run function. [`watch`] is the one reader.

use std::borrow::Cow;
use std::convert::Infallible;
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request, Response, StatusCode};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeCounterValue, EncodeGaugeValue, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};

use crate::config::metrics::MetricsListen;
use crate::error::usage;
use crate::stats::cost::process_cpu;
use crate::stats::server::{Latest, LatestSecond};
use crate::stats::tally::{Tally, Totals, BUCKETS_S};
use crate::stats::Live;

tokio::task_local! {
    /// The board of the command's endpoint, around each of its runs.
    static BOARD: Arc<Board>;
    /// The part of a mixed run (`ingest`, or a workload's name) around
    /// each of its parts: its figures are labelled `part`.
    static PART: String;
}

/// What every series of a command's endpoint is labelled with.
#[derive(Debug, Clone)]
pub struct Labels {
    /// The command: `ingest`, `timeit`, `http`, ...
    pub command: String,
    /// The distributed run's `--run-id`, else this run's own id.
    pub run_id: String,
    /// `--instance`'s index (0 without it).
    pub instance: u32,
    /// The sweep point the command runs as (its `point` tag), if any.
    pub point: Option<String>,
}

/// A command's endpoint: bound, and served once its runtime runs.
pub struct Endpoint {
    board: Arc<Board>,
    registry: Arc<Registry>,
    /// Taken by the first run, which starts serving it.
    listener: Mutex<Option<std::net::TcpListener>>,
}

impl Endpoint {
    /// Binds `listen` (exit 2 when it cannot) and says where on stderr.
    pub fn bind(listen: &MetricsListen, labels: Labels) -> Result<Endpoint> {
        let refuse = |e: std::io::Error| {
            let why = match e.kind() {
                std::io::ErrorKind::AddrInUse => "the address is in use".to_string(),
                _ => e.to_string(),
            };
            usage(format!(
                "--metrics-listen {}: cannot listen there ({why}); give another port, or 0 for a free one",
                listen.given
            ))
        };
        let listener = std::net::TcpListener::bind(listen.addr).map_err(refuse)?;
        listener.set_nonblocking(true).map_err(refuse)?;
        let addr = listener.local_addr().map_err(refuse)?;
        crate::console::line(format_args!("Metrics: http://{addr}/metrics"));
        let board = Arc::new(Board::default());
        let mut constant =
            vec![("command", labels.command), ("run_id", labels.run_id), ("instance", labels.instance.to_string())];
        constant.extend(labels.point.map(|p| ("point", p)));
        let constant = constant.into_iter().map(|(k, v)| (Cow::Borrowed(k), Cow::Owned(v)));
        let mut registry = Registry::with_prefix_and_labels("dbload", constant);
        registry.register_collector(Box::new(Exposed(board.clone())));
        Ok(Endpoint { board, registry: Arc::new(registry), listener: Mutex::new(Some(listener)) })
    }

    /// Runs `run`, run number `n` of `--runs` (1-based), with its figures
    /// on the endpoint; the first run starts serving it on the current
    /// runtime, until that runtime ends with the command.
    pub async fn during<T>(&self, n: u32, run: impl Future<Output = T>) -> T {
        self.board.begin(n);
        let listener = self.listener.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
        if let Some(listener) = listener.and_then(|l| tokio::net::TcpListener::from_std(l).ok()) {
            tokio::spawn(serve(listener, self.registry.clone()));
        }
        BOARD.scope(self.board.clone(), run).await
    }
}

/// The figures the endpoint shows: those of the current run's
/// measurements (a mixed run has several, some after others: each stays
/// until the next run, so that its counters never go back).
#[derive(Debug, Default)]
pub struct Board {
    run: AtomicU32,
    parts: Mutex<Vec<Part>>,
}

/// One measurement of the current run.
#[derive(Debug)]
struct Part {
    /// The mixed run's part it measures (see [`part`]); none outside a mixed run.
    name: Option<String>,
    /// Whether its units are rows (ingest, export, ...): they count in `rows_total`.
    rows: bool,
    live: Arc<Live>,
    server: Arc<Latest>,
}

impl Board {
    fn begin(&self, run: u32) {
        self.run.store(run, Ordering::Relaxed);
        self.parts.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clear();
    }
}

/// For the measuring scaffold, before its workers start: when the command
/// serves metrics, the measurement counting `unit`s into `live` is shown
/// on its endpoint (its workers count their totals from now on), and the
/// server's sampler is handed the returned slot for its latest second.
pub fn watch(live: &Arc<Live>, unit: &str) -> Option<Arc<Latest>> {
    BOARD
        .try_with(|board| {
            let _ = live.tally.set(Totals::default());
            let server = Arc::new(Latest::default());
            let name = PART.try_with(String::clone).ok();
            let part = Part { name, rows: unit == "rows", live: live.clone(), server: server.clone() };
            board.parts.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(part);
            server
        })
        .ok()
}

/// Runs `run`, the part `name` of a mixed run (`ingest`, or a workload's
/// name): the measurements it starts are labelled `part="name"` on the
/// endpoint, so that the ingest's operations and each workload's latency
/// are told apart rather than added up.
pub async fn part<T>(name: &str, run: impl Future<Output = T>) -> T {
    PART.scope(name.to_string(), run).await
}

/// Accepts scrapes until the runtime ends.
async fn serve(listener: tokio::net::TcpListener, registry: Arc<Registry>) {
    use hyper::server::conn::http1;
    use hyper_util::rt::TokioIo;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // Out of file descriptors, say: the run goes on, scrapes wait.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let registry = registry.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let response = respond(&registry, &request);
                async move { Ok::<_, Infallible>(response) }
            });
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

/// `GET /metrics`: the registry in Prometheus's text format.
fn respond<B>(registry: &Registry, request: &Request<B>) -> Response<Full<Bytes>> {
    use prometheus_client::encoding::prometheus_text::{encode, CONTENT_TYPE};
    let plain = |status: StatusCode, text: &'static str| {
        let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
        *r.status_mut() = status;
        r
    };
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "GET /metrics\n");
    }
    if request.uri().path() != "/metrics" {
        return plain(StatusCode::NOT_FOUND, "dbload serves its metrics at /metrics\n");
    }
    let mut text = String::new();
    if encode(&mut text, registry).is_err() {
        return plain(StatusCode::INTERNAL_SERVER_ERROR, "the metrics could not be written\n");
    }
    let mut response = Response::new(Full::new(Bytes::from(text)));
    response.headers_mut().insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static(CONTENT_TYPE));
    response
}

/// The board as the registry's one collector: read at each scrape.
#[derive(Debug)]
struct Exposed(Arc<Board>);

impl Collector for Exposed {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let run = self.0.run.load(Ordering::Relaxed).to_string();
        // One set of figures per part of a mixed run (a workload run alone
        // before and after adds into its part), one without a part else.
        let mut parts: Vec<(Option<String>, Tally, Option<u64>)> = Vec::new();
        let mut server = LatestSecond::default();
        for part in self.0.parts.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).iter() {
            let read = part.live.tally.get().map(Totals::read).unwrap_or_default();
            let at = match parts.iter().position(|(name, ..)| *name == part.name) {
                Some(at) => at,
                None => {
                    parts.push((part.name.clone(), Tally::default(), None));
                    parts.len() - 1
                }
            };
            let (_, all, rows) = &mut parts[at];
            // Rows only from measurements that count rows (a query is no row).
            if part.rows {
                *rows.get_or_insert(0) += read.units;
            }
            all.add(&read);
            all.lag = all.lag.max(read.lag);
            // Each part of a mixed run samples the one server: its figures
            // are the longest-sampling part's, never their sum.
            let latest = part.server.read();
            server.checkpoints = server.checkpoints.max(latest.checkpoints);
            server.second = server.second.or(latest.second);
        }
        // Before the first measurement starts: its counters, at zero.
        if parts.is_empty() {
            parts.push((None, Tally::default(), None));
        }
        let e = &mut encoder;
        let labelled: Vec<Vec<(&str, &str)>> = parts
            .iter()
            .map(|(name, ..)| {
                let mut l = vec![("run", run.as_str())];
                l.extend(name.as_deref().map(|n| ("part", n)));
                l
            })
            .collect();
        let help = "Operations that ended, answered or failed (warm-up included)";
        let mut m = e.encode_descriptor("operations", help, None, MetricType::Counter)?;
        for ((_, all, _), labels) in parts.iter().zip(&labelled) {
            m.encode_family(labels)?.encode_counter::<NoLabelSet, _, u64>(&all.operations, None)?;
        }
        if parts.iter().any(|(_, _, rows)| rows.is_some()) {
            let mut m = e.encode_descriptor("rows", "Rows the target acknowledged", None, MetricType::Counter)?;
            for ((_, _, rows), labels) in parts.iter().zip(&labelled) {
                if let Some(rows) = rows {
                    m.encode_family(labels)?.encode_counter::<NoLabelSet, _, u64>(rows, None)?;
                }
            }
        }
        let help = "Failed operations by error class, as the report names them (SQLSTATE 40001, timeout, connection lost, ...)";
        let mut errors = e.encode_descriptor("errors", help, None, MetricType::Counter)?;
        for ((_, all, _), labels) in parts.iter().zip(&labelled) {
            for (class, n) in &all.errors {
                let mut labels = labels.clone();
                labels.push(("class", class.as_str()));
                errors.encode_family(&labels)?.encode_counter::<NoLabelSet, _, u64>(n, None)?;
            }
        }
        let help = "Answered operations' latency, from the intended start under --rate";
        let mut latency = e.encode_descriptor("latency", help, Some(&Unit::Seconds), MetricType::Histogram)?;
        for ((_, all, _), labels) in parts.iter().zip(&labelled) {
            let bounds = BUCKETS_S.iter().copied().chain([f64::INFINITY]);
            let buckets: Vec<(f64, u64)> = bounds.zip(all.buckets).collect();
            let count = all.buckets.iter().sum();
            latency.encode_family(labels)?.encode_histogram::<NoLabelSet>(
                all.latency_sum_s(),
                count,
                &buckets,
                None,
            )?;
        }
        let help = "How far behind the --rate schedule the latest operations started (0 for a closed loop)";
        let mut lag = e.encode_descriptor("pacer_lag", help, Some(&Unit::Seconds), MetricType::Gauge)?;
        for ((_, all, _), labels) in parts.iter().zip(&labelled) {
            lag.encode_family(labels)?.encode_gauge(&all.lag.as_secs_f64())?;
        }
        counter(
            e,
            "client_cpu",
            "CPU time dbload's process used",
            Some(Unit::Seconds),
            &[],
            &process_cpu().as_secs_f64(),
        )?;
        let run = [("run", run.as_str())];
        let help = "Checkpoints the server counted since the run's sampler started";
        counter(e, "server_checkpoints", help, None, &run, &server.checkpoints)?;
        let Some(second) = server.second else { return Ok(()) };
        let help = "Sessions by wait event (type:event) in the server's latest sample: own (the run's) or other";
        let mut waits = e.encode_descriptor("server_wait_sessions", help, None, MetricType::Gauge)?;
        for (sessions, by_wait) in [("own", &second.own_waits), ("other", &second.other_waits)] {
            for (wait, n) in by_wait {
                let labels = [run[0], ("sessions", sessions), ("wait", wait.as_str())];
                waits.encode_family(&labels)?.encode_gauge(&(*n as u64))?;
            }
        }
        if let Some(wal) = second.wal_bytes {
            let help = "WAL the server wrote per second over its latest sample's interval";
            gauge(e, "server_wal_bytes_per_second", help, None, &run, &wal)?;
        }
        if !second.engine.is_empty() {
            let help = "What the engine itself counted in the server's latest sample, by figure (docs/server.md)";
            let mut engine = e.encode_descriptor("server_engine", help, None, MetricType::Gauge)?;
            for (figure, n) in &second.engine {
                engine.encode_family(&[run[0], ("figure", figure.as_str())])?.encode_gauge(n)?;
            }
        }
        Ok(())
    }
}

/// One counter, `name` in `unit`, with `labels`.
fn counter(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<Unit>,
    labels: &[(&str, &str)],
    value: &impl EncodeCounterValue,
) -> Result<(), std::fmt::Error> {
    let mut m = e.encode_descriptor(name, help, unit.as_ref(), MetricType::Counter)?;
    m.encode_family(&labels)?.encode_counter::<NoLabelSet, _, u64>(value, None)
}

/// One gauge, `name` in `unit`, with `labels`.
fn gauge(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<Unit>,
    labels: &[(&str, &str)],
    value: &impl EncodeGaugeValue,
) -> Result<(), std::fmt::Error> {
    let mut m = e.encode_descriptor(name, help, unit.as_ref(), MetricType::Gauge)?;
    m.encode_family(&labels)?.encode_gauge(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::server::ServerSecond;

    /// A scrape of a board with one measurement: the constant labels and
    /// the run's on every series, an error class with a quote, a backslash
    /// and a line feed escaped as the text format says, the histogram's
    /// buckets cumulative with `_count` equal to `+Inf`.
    #[test]
    fn a_scrape_is_prometheus_text_with_escaped_labels() {
        let labels = Labels {
            command: "ingest".into(),
            run_id: "r1".into(),
            instance: 2,
            point: Some("batch-size=500,method=\"copy\"".into()),
        };
        let listen = MetricsListen { given: "127.0.0.1:0".into(), addr: "127.0.0.1:0".parse().unwrap() };
        let endpoint = Endpoint::bind(&listen, labels).unwrap();
        endpoint.board.begin(3);
        let live = Arc::new(Live::default());
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(BOARD.scope(endpoint.board.clone(), async { watch(&live, "rows") })).expect("watched");
        let mut tally = Tally::default();
        tally.answered(100, Duration::from_micros(300), Duration::ZERO);
        tally.answered(100, Duration::from_millis(20), Duration::from_millis(2));
        tally.failed(0, "XX000 a \"quoted\" \\ class\nnext");
        live.tally.get().unwrap().publish(&mut tally);
        let request = Request::get("/metrics").body(()).unwrap();
        let response = respond(&endpoint.registry, &request);
        assert_eq!(response.headers()[hyper::header::CONTENT_TYPE], "text/plain; version=0.0.4; charset=utf-8");
        let text = rt.block_on(http_body_util::BodyExt::collect(response.into_body())).unwrap().to_bytes();
        let text = String::from_utf8(text.to_vec()).unwrap();
        let on = r#"command="ingest",run_id="r1",instance="2",point="batch-size=500,method=\"copy\"",run="3""#;
        for line in [
            format!("dbload_operations_total{{{on}}} 3"),
            format!("dbload_rows_total{{{on}}} 200"),
            format!(r#"dbload_errors_total{{{on},class="XX000 a \"quoted\" \\ class\nnext"}} 1"#),
            format!(r#"dbload_latency_seconds_bucket{{{on},le="0.00025"}} 0"#),
            format!(r#"dbload_latency_seconds_bucket{{{on},le="0.0005"}} 1"#),
            format!(r#"dbload_latency_seconds_bucket{{{on},le="0.025"}} 2"#),
            format!(r#"dbload_latency_seconds_bucket{{{on},le="+Inf"}} 2"#),
            format!("dbload_latency_seconds_count{{{on}}} 2"),
            format!("dbload_latency_seconds_sum{{{on}}} 0.0203"),
            format!("dbload_pacer_lag_seconds{{{on}}} 0.002"),
        ] {
            assert!(text.lines().any(|l| l == line), "no line {line} in:\n{text}");
        }
        assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), 25, "{text}");
        let not_found = respond(&endpoint.registry, &Request::get("/").body(()).unwrap());
        assert_eq!(not_found.status(), StatusCode::NOT_FOUND);
    }

    /// A mixed run's parts each have their own series, labelled with the
    /// part (rows only the ingest's), and the server both parts sample is
    /// counted once: the checkpoints are not the sum of the parts' samplers.
    #[test]
    fn a_mixed_runs_parts_are_labelled_apart_and_the_server_counted_once() {
        let labels = Labels { command: "run".into(), run_id: "r2".into(), instance: 0, point: None };
        let listen = MetricsListen { given: "127.0.0.1:0".into(), addr: "127.0.0.1:0".parse().unwrap() };
        let endpoint = Endpoint::bind(&listen, labels).unwrap();
        endpoint.board.begin(1);
        let (ingest, query) = (Arc::new(Live::default()), Arc::new(Live::default()));
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let slots = rt.block_on(BOARD.scope(endpoint.board.clone(), async {
            let a = part("ingest", async { watch(&ingest, "rows") }).await;
            let b = part("recent", async { watch(&query, "queries") }).await;
            [a.expect("watched"), b.expect("watched")]
        }));
        for (live, n, units) in [(&ingest, 3, 1000), (&query, 5, 1)] {
            let mut tally = Tally::default();
            for _ in 0..n {
                tally.answered(units, Duration::from_millis(1), Duration::ZERO);
            }
            live.tally.get().unwrap().publish(&mut tally);
        }
        let checkpoint = ServerSecond { checkpoints_requested: 1, ..ServerSecond::default() };
        for slot in &slots {
            slot.set(Some(&checkpoint), Duration::from_secs(1));
        }
        let response = respond(&endpoint.registry, &Request::get("/metrics").body(()).unwrap());
        let text = rt.block_on(http_body_util::BodyExt::collect(response.into_body())).unwrap().to_bytes();
        let text = String::from_utf8(text.to_vec()).unwrap();
        let on = r#"command="run",run_id="r2",instance="0",run="1""#;
        for line in [
            format!(r#"dbload_operations_total{{{on},part="ingest"}} 3"#),
            format!(r#"dbload_operations_total{{{on},part="recent"}} 5"#),
            format!(r#"dbload_rows_total{{{on},part="ingest"}} 3000"#),
            format!(r#"dbload_latency_seconds_count{{{on},part="recent"}} 5"#),
            format!("dbload_server_checkpoints_total{{{on}}} 1"),
        ] {
            assert!(text.lines().any(|l| l == line), "no line {line} in:\n{text}");
        }
        assert!(!text.contains(r#"dbload_rows_total{command="run",run_id="r2",instance="0",run="1",part="recent"}"#));
    }
}
