//! `dbload http` against a real HTTP server that each test starts on
//! loopback: a small hyper server (plain or TLS with a self-signed
//! certificate) that counts the connections it accepted and records every
//! request it received, so the tests compare what dbload reports with what
//! the server saw.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use clap::Parser;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

use crate::support::{accounted, dbload_bin, ensure, interrupt, refused, Ctx};
use crate::Phase::{Parallel, Quiet};
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("http::requests_and_connections_are_counted", requests_and_connections_are_counted, Parallel),
        ("http::template_bodies_differ", template_bodies_differ, Parallel),
        ("http::failed_checks_are_counted", failed_checks_are_counted, Parallel),
        ("http::blocked_is_measured_when_every_check_failed", blocked_is_measured_when_every_check_failed, Parallel),
        ("http::open_loop_rate_is_held", open_loop_rate_is_held, Quiet),
        ("http::rate_stages_are_followed", rate_stages_are_followed, Quiet),
        ("http::rate_not_held_is_said", rate_not_held_is_said, Parallel),
        ("http::warmup_count_is_taken_out_of_iterations", warmup_count_is_taken_out_of_iterations, Parallel),
        ("http::no_keepalive_opens_a_connection_per_request", no_keepalive_opens_a_connection_per_request, Parallel),
        ("http::tls_is_verified_unless_insecure", tls_is_verified_unless_insecure, Parallel),
        ("http::bad_input_exits_2_naming_the_option", bad_input_exits_2_naming_the_option, Parallel),
        ("http::unreachable_target_exits_3", unreachable_target_exits_3, Parallel),
        ("http::observe_samples_the_database_behind_the_api", observe_samples_the_database_behind_the_api, Parallel),
        ("http::json_report_matches_its_schema", json_report_matches_its_schema, Parallel),
        ("http::secrets_are_never_printed", secrets_are_never_printed, Parallel),
        (
            "http::an_authorization_header_wins_over_url_userinfo",
            an_authorization_header_wins_over_url_userinfo,
            Parallel,
        ),
        ("http::requests_are_accounted_after_ctrl_c", requests_are_accounted_after_ctrl_c, Parallel),
        ("http::bodies_no_check_reads_are_dropped", bodies_no_check_reads_are_dropped, Parallel),
        (
            "http::a_body_over_64_mib_fails_the_check_that_reads_it",
            a_body_over_64_mib_fails_the_check_that_reads_it,
            Parallel,
        ),
    ]
}

/// Ctrl-C: the requests asked for (`--iterations`) = ok + failed +
/// unattempted, the ones never sent counted (issue 13, item 4).
fn requests_are_accounted_after_ctrl_c(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let url = format!("{}/flaky", server.url);
    let argv = ["http", &url, "--iterations", "100000000", "--vus", "2", "--output", "json", "--quiet"];
    let r = interrupt(&argv, None, std::time::Duration::from_secs(2))?;
    let a = &r["accounting"];
    ensure(accounted(a, Some(100_000_000))? > 0 && a["failed"].as_u64() > Some(0), || a.to_string())?;
    // Every request counted reached the server (one cut short by Ctrl-C may have too).
    let counted = a["ok"].as_u64().unwrap_or(0) + a["failed"].as_u64().unwrap_or(0);
    ensure(counted <= server.seen.requests(), || format!("{a}: the server saw {} requests", server.seen.requests()))
}

/// Issue 29, item 4: every response body was kept whole per VU (3 VUs ×
/// 1 GiB bodies = 3.16 GB). A body that no check reads is read and
/// dropped: 8 VUs fetching 16 MiB bodies (128 MiB in flight if kept) stay
/// under 64 MiB of peak RSS, the process's own (`VmHWM`, as the report
/// gives it). A status check reads no body either. `bench/http-memory.sh`
/// measures the issue's 50 VUs × 20 MB.
fn bodies_no_check_reads_are_dropped(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let url = format!("{}/bytes/{}", server.url, 16 << 20);
    let argv = ["http", &url, "--vus", "8", "-n", "32", "--check", "status=200", "--output", "json", "--no-results"];
    let (code, stdout, stderr) = dbload_bin(&[&argv[..], &["--quiet"]].concat(), &[]);
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    let r = crate::support::json(&stdout)?;
    ensure(r["data_received_bytes"].as_u64() >= Some(32 << 24), || format!("received {}", r["data_received_bytes"]))?;
    let rss = r["client_peak_rss_mib"].as_f64().context("client_peak_rss_mib")?;
    ensure(rss < 64.0, || format!("peak RSS {rss:.1} MiB for 8 VUs of 16 MiB bodies"))
}

/// A body a check reads is kept up to 64 MiB; beyond that the check fails
/// and says why, rather than the VU holding whatever the server sends.
fn a_body_over_64_mib_fails_the_check_that_reads_it(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let over = format!("{}/bytes/{}", server.url, (64 << 20) + 1);
    let out = http(&[&over, "-n", "1", "--check", "body~xxx"])?;
    let e = &out.report.error_classes;
    ensure(out.exit_code == 1 && out.report.checks[0].fails == 1, || format!("exit {}: {e:?}", out.exit_code))?;
    ensure(e.len() == 1 && e[0].class == "check body~xxx" && e[0].example.contains("64 MiB"), || format!("{e:?}"))?;
    // At the cap, it is read.
    let at = format!("{}/bytes/{}", server.url, 64 << 20);
    let out = http(&[&at, "-n", "1", "--check", "body~xxx"])?;
    ensure(out.exit_code == 0, || format!("{:?}", out.report.error_classes))
}

/// One request as the server got it: method, path, Authorization (the
/// first), body, and how many Authorization headers it had.
pub(crate) type Logged = (String, String, Option<String>, Vec<u8>, usize);

/// What the test server saw.
#[derive(Default)]
pub(crate) struct Seen {
    connections: AtomicU64,
    requests: AtomicU64,
    /// Method, path, Authorization header and body of every request.
    pub(crate) log: Mutex<Vec<Logged>>,
}

impl Seen {
    pub(crate) fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }
    fn connections(&self) -> u64 {
        self.connections.load(Ordering::SeqCst)
    }
    pub(crate) fn bodies(&self) -> Vec<Vec<u8>> {
        self.log.lock().unwrap().iter().map(|r| r.3.clone()).collect()
    }
}

/// A loopback HTTP server on its own thread and runtime, stopped on drop
/// (also the server of `html::http_page`).
/// `/flaky` answers 500 to every 4th request, `/status/N` answers N,
/// `/bytes/N` answers N bytes of `x`, `/echo` the request's body as JSON,
/// `/delay/MS` waits MS ms, and everything (but those) 200 with
/// `{"ok":true,"n":N}`.
pub(crate) struct Server {
    pub(crate) url: String,
    pub(crate) seen: Arc<Seen>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.stop.take().map(|s| s.send(()));
        let _ = self.thread.take().map(|t| t.join());
    }
}

async fn answer(seen: Arc<Seen>, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let n = seen.requests.fetch_add(1, Ordering::SeqCst) + 1;
    let method = req.method().to_string();
    let path = req.uri().path().to_string();
    let auth = req.headers().get("authorization").and_then(|v| v.to_str().ok()).map(str::to_string);
    let auths = req.headers().get_all("authorization").iter().count();
    let body = req.into_body().collect().await.map(|b| b.to_bytes().to_vec()).unwrap_or_default();
    seen.log.lock().unwrap().push((method, path.clone(), auth, body.clone(), auths));
    if let Some(ms) = path.strip_prefix("/delay/").and_then(|n| n.parse().ok()) {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
    if path == "/echo" {
        return Ok(Response::builder()
            .header("content-type", "application/json")
            .body(Full::new(body.into()))
            .unwrap());
    }
    if let Some(n) = path.strip_prefix("/bytes/").and_then(|n| n.parse::<usize>().ok()) {
        // One buffer for every such answer, sliced: the server itself stays small.
        static XS: std::sync::OnceLock<Bytes> = std::sync::OnceLock::new();
        let xs = XS.get_or_init(|| Bytes::from(vec![b'x'; MAX_BYTES]));
        return Ok(Response::new(Full::new(xs.slice(..n.min(MAX_BYTES)))));
    }
    let status = match path.strip_prefix("/status/").and_then(|s| s.parse().ok()) {
        Some(code) => code,
        None if path == "/flaky" && n.is_multiple_of(4) => 500,
        None => 200,
    };
    let text = format!(r#"{{"ok":{},"n":{n}}}"#, status < 400);
    Ok(Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(text.into()))
        .unwrap())
}

/// The largest answer of `/bytes/N`: a little over the 64 MiB a check reads.
const MAX_BYTES: usize = (64 << 20) + 1024;

/// A self-signed certificate for 127.0.0.1, as a rustls server config;
/// `ca`: a CA's certificate (basic constraints CA:TRUE) put on the server.
fn tls_config(ca: bool) -> Result<Arc<rustls::ServerConfig>> {
    let key = rcgen::KeyPair::generate()?;
    let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])?;
    if ca {
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    }
    let cert = params.self_signed(&key)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let der = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).map_err(anyhow::Error::msg)?;
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], der)?;
    Ok(Arc::new(config))
}

impl Server {
    pub(crate) fn start(tls: bool) -> Result<Server> {
        Server::start_with(if tls { Some(tls_config(false)?) } else { None })
    }

    /// A server speaking https with `tls`, or plain http.
    fn start_with(tls: Option<Arc<rustls::ServerConfig>>) -> Result<Server> {
        let seen = Arc::new(Seen::default());
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        std_listener.set_nonblocking(true)?;
        let port = std_listener.local_addr()?.port();
        let https = tls.is_some();
        let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let seen2 = seen.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
                loop {
                    let (tcp, _) = tokio::select! {
                        _ = &mut stopped => break,
                        r = listener.accept() => match r { Ok(c) => c, Err(_) => continue },
                    };
                    seen2.connections.fetch_add(1, Ordering::SeqCst);
                    let seen = seen2.clone();
                    let acceptor = acceptor.clone();
                    tokio::spawn(async move {
                        let service = hyper::service::service_fn(move |req| answer(seen.clone(), req));
                        let http = hyper::server::conn::http1::Builder::new();
                        match acceptor {
                            Some(a) => {
                                if let Ok(s) = a.accept(tcp).await {
                                    let _ = http.serve_connection(TokioIo::new(s), service).await;
                                }
                            }
                            None => {
                                let _ = http.serve_connection(TokioIo::new(tcp), service).await;
                            }
                        }
                    });
                }
            });
        });
        let scheme = if https { "https" } else { "http" };
        Ok(Server { url: format!("{scheme}://127.0.0.1:{port}"), seen, stop: Some(stop), thread: Some(thread) })
    }
}

/// `dbload http ARGS --quiet`, in process, with no environment.
fn http(args: &[&str]) -> Result<dbload::Finished<dbload::report::http::HttpReport>> {
    let argv = ["dbload", "http", "--quiet"].iter().chain(args);
    let dbload::cli::Command::Http(a) = dbload::cli::Cli::try_parse_from(argv)?.command else { unreachable!() };
    let mut out = Vec::new();
    dbload::http(a, &|_| None, &mut out)
}

const NOTIFY: &str = r#"{"data":[{"id":"Room:1","type":"Room","temperature":{"value":23.3,"type":"Number"},"pressure":{"value":720,"type":"Integer"}}]}"#;

fn requests_and_connections_are_counted(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("notify.json");
    std::fs::write(&file, NOTIFY)?;
    let url = format!("{}/v2/notify", server.url);
    let out = http(&["POST", &url, "--body-file", file.to_str().unwrap(), "--vus", "4", "--iterations", "203"])?;
    let r = &out.report;
    ensure(out.exit_code == 0, || format!("exit {}: {:?}", out.exit_code, r.error_classes))?;
    ensure(r.http_reqs == 203 && r.requests_ok == 203, || format!("reported {} requests", r.http_reqs))?;
    ensure(server.seen.requests() == 203, || format!("server saw {}", server.seen.requests()))?;
    ensure(server.seen.connections() == 4 && r.connections_opened == 4, || {
        format!("connections: server {}, report {}", server.seen.connections(), r.connections_opened)
    })?;
    ensure(server.seen.bodies().iter().all(|b| b == NOTIFY.as_bytes()), || "a body differs from the file".into())?;
    let log = server.seen.log.lock().unwrap();
    ensure(log.iter().all(|(m, p, _, _, _)| m == "POST" && p == "/v2/notify"), || format!("{:?}", log[0]))?;
    ensure(r.statuses.get("200") == Some(&203), || format!("{:?}", r.statuses))?;
    ensure(r.data_sent_bytes > 203 * NOTIFY.len() as u64, || format!("data sent {}", r.data_sent_bytes))?;
    let d = r.http_req_duration_ms.as_ref().context("no duration")?;
    ensure(d.count == 203 && d.max < 5000.0, || format!("{d:?}"))
}

fn template_bodies_differ(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("notify.j2");
    std::fs::write(
        &file,
        r#"{"data":[{"id":"{{ entity('Room:', 50) }}","n":{{ iteration }},"vu":{{ vu }},"t":{{ walk('t', 23.3, 0.5) | round(2) }},"at":"{{ now() }}"}]}"#,
    )?;
    let out = http(&[&server.url, "--body-template", file.to_str().unwrap(), "--vus", "3", "--iterations", "300"])?;
    ensure(out.exit_code == 0, || format!("exit {}: {:?}", out.exit_code, out.report.error_classes))?;
    let bodies = server.seen.bodies();
    ensure(bodies.len() == 300, || format!("{} bodies", bodies.len()))?;
    let mut keys = std::collections::HashSet::new();
    let mut ids = std::collections::HashSet::new();
    for b in &bodies {
        let v: serde_json::Value =
            serde_json::from_slice(b).with_context(|| String::from_utf8_lossy(b).into_owned())?;
        let d = &v["data"][0];
        keys.insert((d["vu"].as_u64(), d["n"].as_u64()));
        ids.insert(d["id"].as_str().unwrap_or_default().to_string());
    }
    // Every VU sent its iterations 0..100 once; ids spread over the range.
    ensure(keys.len() == 300, || format!("{} distinct (vu, iteration) pairs", keys.len()))?;
    ensure(ids.len() > 30 && ids.iter().all(|i| i.starts_with("Room:")), || format!("{} ids", ids.len()))?;
    // POST without a method given, since there is a body.
    let all_post = server.seen.log.lock().unwrap().iter().all(|r| r.0 == "POST");
    ensure(all_post, || "not POST".into())
}

/// Issue 35: `http_req_blocked` read "-" when every check failed: the
/// time a request waited to start is measured on every request, whatever
/// its checks say, so it has a figure.
fn blocked_is_measured_when_every_check_failed(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let url = format!("{}/flaky", server.url);
    let out = http(&[&url, "--iterations", "20", "--vus", "2", "--check", "status=418"])?;
    let r = &out.report;
    ensure(out.exit_code == 1 && r.requests_ok == 0 && r.errors == 20, || format!("exit {}: {r:?}", out.exit_code))?;
    let blocked = r.http_req_blocked_ms.as_ref().map(|l| l.count);
    ensure(blocked == Some(20), || format!("http_req_blocked over {blocked:?} requests, want 20"))?;
    let text = dbload::report::http::render(r);
    let line = text.lines().find(|l| l.contains("http_req_blocked")).unwrap_or_default();
    ensure(line.contains("avg="), || text.clone())
}

fn failed_checks_are_counted(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let flaky = format!("{}/flaky", server.url);
    let out = http(&[&flaky, "--iterations", "100", "--vus", "2", "--check", "status=200", "--check", "body~\"ok\""])?;
    let r = &out.report;
    ensure(out.exit_code == 1, || format!("exit {}", out.exit_code))?;
    ensure(r.requests_ok == 75 && r.errors == 25 && r.http_reqs == 100, || {
        format!("{} ok, {} errors", r.requests_ok, r.errors)
    })?;
    ensure(r.checks[0].passes == 75 && r.checks[0].fails == 25, || format!("{:?}", r.checks))?;
    ensure(r.checks[1].passes == 100, || format!("{:?}", r.checks))?;
    let e = &r.error_classes;
    ensure(e.len() == 1 && e[0].class == "check status=200" && e[0].count == 25, || format!("{e:?}"))?;
    ensure(e[0].example.starts_with("500"), || e[0].example.clone())?;
    ensure((r.http_req_failed_rate - 0.25).abs() < 1e-9, || format!("{}", r.http_req_failed_rate))?;
    let text = dbload::report::http::render(r);
    ensure(text.contains("✗ status=200") && text.contains("✓ 75 / ✗ 25") && text.contains("✓ body~"), || {
        text.clone()
    })?;

    // No status check: a non-2xx status is an error by its class.
    let out = http(&[&format!("{}/status/503", server.url), "--iterations", "10"])?;
    let e = &out.report.error_classes;
    ensure(out.exit_code == 1 && e[0].class == "status 5xx" && e[0].count == 10, || format!("{e:?}"))?;
    // A status check that expects it makes it a success; a JSON check reads the body.
    let out = http(&[
        &format!("{}/status/404", server.url),
        "-n",
        "10",
        "--check",
        "status=4xx",
        "--check",
        "json:$.ok=false",
    ])?;
    ensure(out.exit_code == 0, || format!("{:?}", out.report.error_classes))
}

fn open_loop_rate_is_held(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let out = http(&[&server.url, "--rate", "300", "--duration", "3s", "--vus", "10"])?;
    let r = &out.report;
    ensure(out.exit_code == 0, || format!("exit {}: {:?}", out.exit_code, r.error_classes))?;
    let rate = r.http_reqs_per_sec;
    ensure((rate - 300.0).abs() <= 30.0, || format!("{rate:.1} requests/s, want 300 ± 10%"))?;
    let seen = server.seen.requests() as f64;
    ensure((seen - 900.0).abs() <= 90.0, || format!("server saw {seen}, want 900 ± 10%"))?;
    let p = &r.pacing;
    ensure(p.dropped == Some(0) && p.late.is_some(), || format!("dropped {:?}, late {:?}", p.dropped, p.late))?;
    ensure(r.latency_ms.is_some() && r.http_req_blocked_ms.is_some(), || "no response time".into())
}

/// `--rate-stages`: 100 then 200 requests/s, each stage within 10 % of its
/// rate, and `--stages` keeps the VUs of each stage; both reports follow
/// `schema/http-report.schema.json`.
fn rate_stages_are_followed(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let out = http(&[&server.url, "--rate-stages", "0s:100,2s:100,0s:200,2s:200", "--vus", "10"])?;
    let r = &out.report;
    ensure(out.exit_code == 0, || format!("exit {}: {:?}", out.exit_code, r.error_classes))?;
    for (stage, want) in [(1, 100.0), (3, 200.0)] {
        let got = r.stages[stage].per_sec;
        ensure((got - want).abs() <= 0.1 * want, || format!("stage {}: {got:.1}/s, want {want} ± 10%", stage + 1))?;
    }
    ensure(r.pacing.dropped == Some(0), || format!("dropped {:?}", r.pacing.dropped))?;
    let seen = server.seen.requests() as f64;
    ensure((seen - 600.0).abs() <= 60.0, || format!("server saw {seen}, want 600 ± 10%"))?;
    let run = dbload::report::meta::RunStart::now("dbload http".into()).end();
    let stamped = dbload::report::meta::Stamped { report: r, run: &run };
    crate::support::follows(include_str!("../../schema/http-report.schema.json"), &serde_json::to_value(stamped)?)?;
    // VU stages: 2 VUs, then 1; as many connect as the highest target.
    let out = http(&[&server.url, "--stages", "1s:2,0s:1,1s:1"])?;
    let r = &out.report;
    ensure(out.exit_code == 0 && r.setup.vus == 2 && r.stages.len() == 3, || format!("{:?}", r.stages))?;
    ensure(r.stages[0].ok > 0 && r.stages[2].ok > 0, || format!("{:?}", r.stages))
}

/// One VU cannot send 200,000 requests a second: late, dropped, the
/// warning, and `--fail-if 'dropped > 0'` holds.
fn rate_not_held_is_said(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let argv = [&server.url, "--rate", "200000", "--vus", "1", "--duration", "1s", "--fail-if", "dropped > 0"];
    let out = http(&argv)?;
    let (r, p) = (&out.report, &out.report.pacing);
    ensure(p.late > Some(0) && p.dropped > Some(0), || format!("late {:?}, dropped {:?}", p.late, p.dropped))?;
    let warning = p.rate_warning.as_deref().unwrap_or("");
    ensure(warning.starts_with("could not hold 200000/s:") && warning.contains("--vus"), || warning.into())?;
    ensure(out.exit_code == 1 && r.verdict.fail_if[0].held, || format!("exit {}", out.exit_code))
}

fn warmup_count_is_taken_out_of_iterations(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let out = http(&[&server.url, "--iterations", "100", "--warmup", "10"])?;
    let r = &out.report;
    let warm = r.warmup.as_ref().map(|w| w.requests);
    ensure(r.http_reqs == 90 && warm == Some(10), || format!("{} measured, warm-up {warm:?}", r.http_reqs))?;
    ensure(server.seen.requests() == 100, || format!("server saw {}", server.seen.requests()))
}

fn no_keepalive_opens_a_connection_per_request(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let out = http(&[&server.url, "--vus", "2", "--iterations", "40", "--no-keepalive"])?;
    ensure(out.exit_code == 0, || format!("{:?}", out.report.error_classes))?;
    ensure(server.seen.connections() == 40 && out.report.connections_opened == 40, || {
        format!("server accepted {}, report {}", server.seen.connections(), out.report.connections_opened)
    })?;
    let c = out.report.http_req_connecting_ms.as_ref().context("no connecting times")?;
    // The first request of each VU uses the connection opened at setup.
    ensure(c.count == 40 && c.max > 0.0, || format!("{c:?}"))?;

    let again = Server::start(false)?;
    let out = http(&[&again.url, "--vus", "2", "--iterations", "40", "--keepalive"])?;
    ensure(again.seen.connections() == 2 && out.report.connections_opened == 2, || {
        format!("keep-alive: server accepted {}", again.seen.connections())
    })
}

fn tls_is_verified_unless_insecure(_: &Ctx) -> Result<()> {
    let server = Server::start(true)?;
    let url = format!("{}/v2/notify", server.url);
    // The self-signed certificate is in no trust store: refused, exit 3, with advice.
    let (code, stdout, stderr) = dbload_bin(&["http", &url, "-n", "5", "--quiet"], &[]);
    ensure(code == 3 && stdout.is_empty(), || format!("exit {code}: {stderr}"))?;
    ensure(stderr.contains("certificate") && stderr.contains("--insecure"), || stderr.clone())?;
    let out = http(&[&url, "-n", "5", "--insecure", "-d", "{}"])?;
    let r = &out.report;
    ensure(out.exit_code == 0 && server.seen.requests() == 5, || format!("{:?}", r.error_classes))?;
    ensure(r.setup.tls && !r.setup.tls_verified, || "the report must say the server was not verified".into())?;
    let t = r.http_req_tls_handshaking_ms.as_ref().context("no TLS times")?;
    ensure(t.count == 5, || format!("{t:?}"))?;
    ensure(dbload::report::http::render(r).contains("NOT verified"), || "text does not warn".into())?;
    // Issue 29, item 7: a self-signed CA certificate on the server was "expired or not yet valid?".
    let ca = Server::start_with(Some(tls_config(true)?))?;
    let (code, _, stderr) = dbload_bin(&["http", &ca.url, "-n", "1", "--quiet"], &[]);
    ensure(code == 3 && stderr.contains("a CA certificate as its own") && !stderr.contains("expired"), || {
        format!("exit {code}: {stderr}")
    })
}

fn bad_input_exits_2_naming_the_option(_: &Ctx) -> Result<()> {
    for (args, culprit) in [
        ("http://127.0.0.1:1/ --vus 0", "--vus"),
        ("http://127.0.0.1:1/ --rate 0", "--rate"),
        ("http://127.0.0.1:1/ --duration forever", "--duration"),
        ("http://127.0.0.1:1/ --check latency<5", "--check"),
        ("http://127.0.0.1:1/ --body-file /no/such/file", "--body-file"),
        ("http://127.0.0.1:1/ --body-file /etc/hostname --body x", "--body"),
        ("http://127.0.0.1:1/ -H NoColon", "--header"),
        ("ftp://127.0.0.1/", "URL"),
        ("http://127.0.0.1:1/ --rate 10 --sleep 1s", "--sleep"),
    ] {
        let mut argv = vec!["http"];
        argv.extend(args.split_whitespace());
        refused(&argv, culprit)?;
    }
    // A template mistake names the file and line.
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("bad.j2");
    std::fs::write(&file, "{\n  \"id\": {{ nosuch_function(1) }}\n}")?;
    let (code, _, stderr) =
        dbload_bin(&["http", "http://127.0.0.1:1/", "--body-template", file.to_str().unwrap()], &[]);
    ensure(code == 2 && stderr.contains("bad.j2, line 2"), || format!("exit {code}: {stderr}"))
}

fn unreachable_target_exits_3(_: &Ctx) -> Result<()> {
    let (code, stdout, stderr) = dbload_bin(&["http", "http://app:hunter2@127.0.0.1:1/x", "-n", "3"], &[]);
    ensure(code == 3 && stdout.is_empty(), || format!("exit {code}: {stderr}"))?;
    ensure(stderr.contains("127.0.0.1:1") && !stderr.contains("hunter2"), || stderr.clone())
}

/// Issue 34: `--observe URL` samples the database behind the API while the
/// VUs run (here the harness's PostgreSQL, busy with a session of its own
/// that sleeps): the report has the Server section, in text and in JSON
/// (its schema), and the other session's wait is seen. An HTTP URL given
/// to `--observe` is a usage error naming it; a database that does not
/// answer is exit 3 before any request is sent.
fn observe_samples_the_database_behind_the_api(ctx: &Ctx) -> Result<()> {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../schema/http-report.schema.json")).context("schema file")?;
    let validator = jsonschema::validator_for(&schema).context("compiling the schema")?;
    let server = Server::start(false)?;
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("report.json");
    let sleeper = {
        let url = ctx.url.clone();
        std::thread::spawn(move || Ctx::from_url(&url)?.query("select pg_sleep(3.5)").map(drop))
    };
    let argv = ["http", &server.url, "--duration", "3s", "--observe", &ctx.url, "--report", file.to_str().unwrap()];
    let (code, stdout, stderr) = dbload_bin(&argv, &[]);
    sleeper.join().expect("the sleeping session")?;
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    ensure(stdout.contains("\nServer:     sampled every 1.00 s on a connection of its own"), || stdout.clone())?;
    ensure(stdout.contains("\nObserved: postgres://"), || format!("the database observed is not named:\n{stdout}"))?;
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file)?)?;
    let errors: Vec<String> = validator.iter_errors(&report).map(|e| format!("{e} at {}", e.instance_path())).collect();
    ensure(errors.is_empty(), || format!("{errors:#?}"))?;
    let seconds = report["server"]["seconds"].as_array().context("server.seconds")?;
    ensure(seconds.len() >= 2, || format!("{} seconds sampled: {}", seconds.len(), report["server"]))?;
    let others = report["server"]["other_waits"].to_string();
    ensure(others.contains("Timeout:PgSleep"), || {
        format!("the sleeping session's wait not seen: {}", report["server"])
    })?;

    let (code, _, stderr) = dbload_bin(&["http", &server.url, "-n", "1", "--observe", &server.url], &[]);
    ensure(code == 2 && stderr.contains("--observe"), || format!("an HTTP URL: exit {code}: {stderr}"))?;
    let nowhere = "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=2";
    let before = server.seen.requests();
    let (code, _, stderr) = dbload_bin(&["http", &server.url, "-n", "1", "--observe", nowhere], &[]);
    ensure(code == 3 && server.seen.requests() == before, || format!("no database: exit {code}: {stderr}"))
}

fn json_report_matches_its_schema(_: &Ctx) -> Result<()> {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../schema/http-report.schema.json")).context("schema file")?;
    let validator = jsonschema::validator_for(&schema).context("compiling the schema")?;
    let server = Server::start(false)?;
    let dir = tempfile::tempdir()?;
    let template = dir.path().join("t.j2");
    std::fs::write(&template, r#"{"v":{{ randint(1, 9) }}}"#)?;
    let file = dir.path().join("report.json");
    let flaky = format!("{}/flaky", server.url);
    for args in [
        vec![server.url.as_str(), "-n", "20", "--fail-if", "p99_ms > 100000", "--fail-if", "errors > 0"],
        vec![&flaky, "--rate", "100", "--duration", "1s", "--check", "status=200", "--warmup", "5"],
        vec![&flaky, "--body-template", template.to_str().unwrap(), "--vus", "2", "-n", "30", "--sleep", "1ms"],
    ] {
        let mut argv = vec!["http", "--output", "json", "--quiet", "--report", file.to_str().unwrap()];
        argv.extend(args.iter().copied());
        let (code, stdout, stderr) = dbload_bin(&argv, &[]);
        ensure(code == 0 || code == 1, || format!("{args:?}: exit {code}: {stderr}"))?;
        let report: serde_json::Value = serde_json::from_str(&stdout).with_context(|| stdout.clone())?;
        let errors: Vec<String> =
            validator.iter_errors(&report).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        ensure(errors.is_empty(), || format!("{args:?}: {errors:#?}"))?;
        ensure(report["exit_code"] == code && report["command"] == "http", || stdout.clone())?;
        if args.contains(&"--fail-if") {
            ensure(code == 0 && report["fail_if"].as_array().is_some_and(|f| f.len() == 2), || stdout.clone())?;
        }
        let from_file: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file)?)?;
        ensure(from_file["http_reqs"] == report["http_reqs"], || "--report file differs from stdout".into())?;
    }
    Ok(())
}

fn secrets_are_never_printed(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let with_password = server.url.replace("http://", "http://app:hunter2@") + "/x?apikey=sesame&limit=3";
    let bearer_url = format!("{}/y", server.url);
    for (args, secret) in [
        (vec!["http", &with_password, "-n", "3"], "hunter2"),
        (vec!["http", &bearer_url, "-n", "3", "--bearer", "tok3n", "-H", "X-Api-Key: k3y"], "tok3n"),
    ] {
        for format in ["text", "json"] {
            let mut argv = args.clone();
            argv.extend(["--output", format, "--quiet"]);
            let (code, stdout, stderr) = dbload_bin(&argv, &[]);
            ensure(code == 0, || format!("exit {code}: {stderr}"))?;
            for s in [secret, "sesame", "k3y", "YXBwOmh1bnRlcjI"] {
                ensure(!stdout.contains(s) && !stderr.contains(s), || format!("{s} printed: {stdout}"))?;
            }
            ensure(stdout.contains("***"), || format!("nothing shown redacted: {stdout}"))?;
        }
    }
    // The secrets were sent all the same.
    let log = server.seen.log.lock().unwrap();
    ensure(log.iter().any(|r| r.2.as_deref() == Some("Basic YXBwOmh1bnRlcjI=")), || "no basic auth sent".into())?;
    ensure(log.iter().any(|r| r.2.as_deref() == Some("Bearer tok3n")), || "no bearer sent".into())?;
    Ok(())
}

/// Issue 29, item 8: `-H Authorization` with `user:password@` in the URL
/// sent both, two Authorization headers. The header given wins (curl's
/// rule), once; the URL's userinfo still serves when no header is given.
fn an_authorization_header_wins_over_url_userinfo(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let with_password = server.url.replace("http://", "http://app:hunter2@") + "/x";
    let outcome = http(&[&with_password, "-n", "2", "-H", "Authorization: Bearer g1ven"])?;
    ensure(outcome.exit_code == 0, || format!("exit {}", outcome.exit_code))?;
    let outcome = http(&[&with_password, "-n", "1"])?;
    ensure(outcome.exit_code == 0, || format!("exit {}", outcome.exit_code))?;
    let log = server.seen.log.lock().unwrap();
    let sent: Vec<(Option<&str>, usize)> = log.iter().map(|r| (r.2.as_deref(), r.4)).collect();
    let want = [(Some("Bearer g1ven"), 1), (Some("Bearer g1ven"), 1), (Some("Basic YXBwOmh1bnRlcjI="), 1)];
    ensure(sent == want, || format!("Authorization (first, count) per request: {sent:?}"))
}
