//! An HTTP endpoint as a target: the API in front of a time-series database
//! (QuantumLeap's `/v2/notify`, a CrateDB or a Prometheus write endpoint).
//!
//! Each VU owns one connection, reused for its next request (keep-alive) or
//! opened anew for every request (`--no-keepalive`), so "connections
//! opened" is exact and an API's connection reuse can be measured.
//! Every request is timed per phase as k6 does (connecting, TLS
//! handshaking, sending, waiting, receiving); see `wire` for why the HTTP/1.1
//! framing is done here rather than by a client crate.

pub mod check;
pub mod client;
pub(super) mod conn;
pub mod template;
mod watchdog;
pub mod wire;

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;

use self::check::Check;
use self::conn::{Conn, ConnectError, Connector, Failure};
use self::watchdog::Watchdog;
use self::wire::{Body, ReadError, RequestHead};
use crate::error::usage;
use crate::op::{Executor, OpError, Operation};
use crate::redact;
use crate::stats::buffered::lock;
use crate::stats::hist::{record_us, MAX_US};
use crate::stats::http::{add_checks, CheckCount, HttpStats};

/// A parsed `http://` or `https://` URL.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    pub tls: bool,
    /// Host name or IP address (IPv6 without brackets), for DNS and TLS.
    pub host: String,
    pub port: u16,
    /// Path and query, as sent in the request line.
    pub path: String,
    /// The `Host` header: host, and the port when it is not the default.
    pub authority: String,
    /// `user` and `password` from the URL, sent as basic auth.
    pub userinfo: Option<(String, String)>,
    /// The URL with its password and secret-looking query values replaced by `***`.
    pub redacted: String,
}

impl Endpoint {
    /// `option` names where the URL came from, for messages.
    pub fn parse(url: &str, option: &str) -> Result<Endpoint> {
        let bad = |why: &str| {
            let shown = redact::userinfo(url);
            usage(format!("{option} {shown:?}: {why}; give a URL like http://host:8668/v2/notify"))
        };
        let uri: http::Uri = url.parse().map_err(|e| bad(&format!("not a URL ({e})")))?;
        let tls = match uri.scheme_str() {
            Some("http") => false,
            Some("https") => true,
            Some(other) => return Err(bad(&format!("scheme {other}: dbload http speaks http and https"))),
            None => return Err(bad("no scheme")),
        };
        let auth = uri.authority().ok_or_else(|| bad("no host"))?;
        let host = auth.host().trim_start_matches('[').trim_end_matches(']').to_owned();
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let port = auth.port_u16().unwrap_or(if tls { 443 } else { 80 });
        let host_port = auth.as_str().rsplit_once('@').map_or(auth.as_str(), |(_, h)| h);
        let userinfo = auth.as_str().rsplit_once('@').map(|(ui, _)| {
            let (user, pass) = ui.split_once(':').unwrap_or((ui, ""));
            (percent_decode(user), percent_decode(pass))
        });
        let after_host = host_port.strip_prefix(auth.host()).unwrap_or("");
        if !after_host.is_empty() && auth.port_u16().is_none_or(|p| p == 0) {
            return Err(bad("the port is not a number from 1 to 65535"));
        }
        let first_segment = uri.path().trim_start_matches('/').split('/').next().unwrap_or("");
        if userinfo.is_none() && !after_host.is_empty() && first_segment.contains('@') {
            // `http://u:123/x@h/`: a password with an unescaped `/`, which
            // would otherwise pass for a port and a path, and be shown.
            return Err(bad("an `@` in the first part of the path: write a `/` in a password as %2F, and an `@` in \
                 the path as %40"));
        }
        let path = match uri.path_and_query().map(|p| p.as_str()).unwrap_or("/") {
            p if p.starts_with('/') => p.to_owned(),
            p => format!("/{p}"),
        };
        let default_port = auth.port_u16().is_none_or(|p| p == if tls { 443 } else { 80 });
        let authority = if default_port { auth.host().to_owned() } else { host_port.to_owned() };
        let user = match &userinfo {
            Some((u, p)) if !p.is_empty() => format!("{u}:***@"),
            Some((u, _)) => format!("{u}@"),
            None => String::new(),
        };
        let redacted = format!("{}://{user}{host_port}{}", if tls { "https" } else { "http" }, redact::query(&path));
        Ok(Endpoint { tls, host, port, path, authority, userinfo, redacted })
    }
}

/// `%XX` escapes of a URL's user info decoded (shared with the CrateDB URL).
pub(super) fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
}

/// Everything about the request that is the same for every request.
#[derive(Debug, Clone)]
pub struct RequestSpec {
    pub method: String,
    pub endpoint: Endpoint,
    /// Sent as given (auth included); the report shows secret ones redacted.
    pub headers: Vec<(String, String)>,
    /// The body of every request unless a template renders one per request.
    pub body: Vec<u8>,
    /// Whether a body goes out (`Content-Length` even when empty).
    pub has_body: bool,
    pub keepalive: bool,
    pub insecure: bool,
    pub timeout: Duration,
    pub checks: Vec<Check>,
}

/// A resolved endpoint, ready to connect: addresses, TLS client, request head.
pub struct HttpTarget {
    spec: RequestSpec,
    connector: Connector,
    head: RequestHead,
    head_request: bool,
    /// A status check decides which statuses pass; without one, non-2xx fails.
    status_checked: bool,
    /// How much of each response body a VU keeps: what its checks read (up
    /// to [`check::BODY_BYTES`]), else the start an error message shows.
    body_kept: usize,
}

impl HttpTarget {
    /// Resolves the host name (once: like k6, DNS is not part of each request).
    pub async fn resolve(spec: RequestSpec) -> Result<HttpTarget> {
        let ep = &spec.endpoint;
        let tls = if ep.tls { Some(conn::tls_connector(spec.insecure, &ep.redacted)?) } else { None };
        let refused = "is the server running? check the host and port in the URL";
        let connector = Connector::resolve(&ep.host, ep.port, tls, &ep.redacted, refused).await?;
        let head =
            RequestHead::new(&spec.method, &ep.path, &ep.authority, &spec.headers, !spec.keepalive, spec.has_body);
        let head_request = spec.method == "HEAD";
        let status_checked = spec.checks.iter().any(Check::is_status);
        let body_kept =
            if spec.checks.iter().any(Check::needs_body) { check::BODY_BYTES } else { check::EXCERPT_BYTES };
        Ok(HttpTarget { spec, connector, head, head_request, status_checked, body_kept })
    }

    pub fn spec(&self) -> &RequestSpec {
        &self.spec
    }
}

/// One request of a VU: the fixed body, or one rendered for it.
#[derive(Debug)]
pub enum HttpOp {
    /// The target's fixed body (`--body`, `--body-file`, or none).
    Fixed,
    /// A body rendered from `--body-template`.
    Rendered(Vec<u8>),
    /// The template failed to render: the VU stops, and says why.
    RenderFailed(String),
}

impl Operation for HttpOp {
    fn units(&self) -> u64 {
        1
    }
}

/// One measured request, as a VU holds it until its [`Tally`] is recorded.
#[derive(Debug, Clone, Copy)]
struct Sample {
    /// Duration, sending, waiting, receiving (µs).
    phases: [u32; 4],
    /// Connecting and TLS handshaking (µs), if it opened its own connection;
    /// a request on a reused connection is recorded as 0 for both, as in k6.
    connect: Option<[u32; 2]>,
    status: u16,
    sent: u64,
    received: u64,
}

/// Requests a VU holds before it records them (see [`Tally::flush`]).
const PENDING: usize = 32;

/// A VU's figures on their way to the [`HttpStats`] it shares with the
/// other VUs of its runtime thread: a few requests, counted together once
/// per `PENDING` requests (one lock), and whatever is left when the VU
/// ends. A VU of its own histograms would weigh ~0.2 MiB.
pub struct Tally {
    pending: Vec<Sample>,
    /// One per `--check`, in order.
    checks: Vec<CheckCount>,
    connections_opened: u64,
    into: Arc<Mutex<HttpStats>>,
}

impl Tally {
    pub fn new(into: Arc<Mutex<HttpStats>>) -> Tally {
        let checks = lock(&into).checks.len();
        Tally {
            pending: Vec::with_capacity(PENDING),
            checks: vec![CheckCount::default(); checks],
            connections_opened: 0,
            into,
        }
    }

    /// Records the phases of a request; `connected`: it opened its own connection.
    fn record(&mut self, p: &Phases, connected: bool, status: u16, sent: u64, received: u64) {
        // Not `micros`: a phase that took no time is 0 here, as in k6.
        let us = |d: Duration| (d.as_micros() as u64).min(MAX_US) as u32;
        let phases = [us(p.sending + p.waiting + p.receiving), us(p.sending), us(p.waiting), us(p.receiving)];
        let connect = connected.then(|| [us(p.connecting), us(p.tls)]);
        self.pending.push(Sample { phases, connect, status, sent, received });
        if self.pending.len() == PENDING {
            self.flush();
        }
    }

    /// Moves the pending requests into the shared figures, histogram by
    /// histogram: between two requests of a VU the network stack and the
    /// other VUs push the histograms out of the CPU caches, and a record
    /// per phase per request was a cache miss each.
    fn flush(&mut self) {
        let mut shared = lock(&self.into);
        let s = &mut *shared;
        let pending = &self.pending;
        for (i, h) in [&mut s.duration, &mut s.sending, &mut s.waiting, &mut s.receiving].into_iter().enumerate() {
            for p in pending {
                record_us(h, p.phases[i].into());
            }
        }
        let mut reused = 0;
        for p in pending {
            match p.connect {
                Some([connecting, tls]) => {
                    record_us(&mut s.connecting, connecting.into());
                    record_us(&mut s.tls_handshaking, tls.into());
                }
                None => reused += 1,
            }
            s.bytes_sent += p.sent;
            s.bytes_received += p.received;
            *s.statuses.entry(p.status).or_default() += 1;
        }
        if reused > 0 {
            s.connecting.saturating_record_n(0, reused);
            s.tls_handshaking.saturating_record_n(0, reused);
        }
        add_checks(&mut s.checks, &self.checks);
        self.checks.iter_mut().for_each(|c| *c = CheckCount::default());
        s.connections_opened += std::mem::take(&mut self.connections_opened);
        drop(shared);
        self.pending.clear();
    }
}

/// Recorded when the VU ends, however it ends.
impl Drop for Tally {
    fn drop(&mut self) {
        self.flush();
    }
}

/// The phases of one request (k6's definitions).
#[derive(Debug, Default)]
struct Phases {
    connecting: Duration,
    tls: Duration,
    sending: Duration,
    waiting: Duration,
    receiving: Duration,
}

/// Runs one VU's requests on its own connection.
pub struct HttpExecutor {
    target: Arc<HttpTarget>,
    conn: Conn,
    stats: Tally,
    /// `--timeout`, with no timer operation per request.
    watchdog: Watchdog,
}

impl HttpExecutor {
    /// Opens the VU's first connection, so that an unreachable target is
    /// found before the run starts (and reported with exit code 3). Its
    /// figures go to `stats`, which other VUs may share.
    pub async fn open(target: Arc<HttpTarget>, stats: Arc<Mutex<HttpStats>>) -> Result<HttpExecutor> {
        let connector = &target.connector;
        let (stream, _, _) = connector.connect().await.map_err(|e| connector.connect_error(e))?;
        let mut stats = Tally::new(stats);
        stats.connections_opened = 1;
        let conn = Conn { stream: Some(stream), body: Body::keeping(target.body_kept), ..Default::default() };
        Ok(HttpExecutor { target, conn, stats, watchdog: Watchdog::default() })
    }

    /// Counts the checks of a response; the first that fails, or a
    /// non-2xx status when no check decides on statuses, fails the request.
    fn judge(&mut self, r: &wire::Response, record: bool) -> Result<u64, OpError> {
        let body = &self.conn.body;
        // A check cannot read a body cut at the cap: it fails, and says so below.
        let unread = |check: &Check| check.needs_body() && !body.whole();
        let mut failed: Option<&Check> = None;
        for (i, check) in self.target.spec.checks.iter().enumerate() {
            let holds = !unread(check) && check.holds(r.status, body.kept());
            if record {
                let count = &mut self.stats.checks[i];
                if holds {
                    count.passes += 1;
                } else {
                    count.fails += 1;
                }
            }
            if !holds && failed.is_none() {
                failed = Some(check);
            }
        }
        let reason = &self.conn.head.reason;
        let excerpt = || {
            let text = check::excerpt(body.kept(), body.size());
            format!("{} {reason}{}{text}", r.status, if text.is_empty() { "" } else { ": " })
        };
        if let Some(check) = failed {
            let why = if unread(check) {
                format!(
                    "{} {reason}: a body of {} bytes, over the {} MiB a check reads: check a smaller answer, or \
                     its status only",
                    r.status,
                    body.size(),
                    check::BODY_BYTES >> 20
                )
            } else {
                excerpt()
            };
            return Err(OpError::new(format!("check {}", check.text), why));
        }
        if !self.target.status_checked && !(200..300).contains(&r.status) {
            return Err(OpError::new(format!("status {}xx", r.status / 100), excerpt()));
        }
        Ok(1)
    }
}

fn classify(f: Failure) -> OpError {
    let io_class = |e: &io::Error| match e.kind() {
        io::ErrorKind::ConnectionRefused => "connection refused".to_owned(),
        io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionAborted => {
            "connection reset".to_owned()
        }
        io::ErrorKind::TimedOut => "timeout".to_owned(),
        kind => format!("io: {kind}"),
    };
    let (class, message) = match f {
        Failure::Connect(ConnectError::Tcp(e)) => (format!("connect: {}", io_class(&e)), e.to_string()),
        Failure::Connect(ConnectError::Tls(e)) => ("tls".to_owned(), e.to_string()),
        Failure::Write(e) => (io_class(&e), format!("sending the request: {e}")),
        Failure::Read(ReadError::Io(e)) => (io_class(&e), format!("reading the response: {e}")),
        Failure::Read(ReadError::Closed { partial }) => (
            "connection closed".to_owned(),
            if partial { "the server closed the connection mid-response" } else { "the server closed the connection" }
                .to_owned(),
        ),
        Failure::Read(ReadError::Malformed(m)) => ("bad response".to_owned(), m),
    };
    OpError::new(class, message)
}

impl Executor<HttpOp> for HttpExecutor {
    /// A warm-up request stays out of the phase figures too.
    async fn execute(&mut self, op: &mut HttpOp, warm: bool) -> Result<u64, OpError> {
        let HttpExecutor { target, conn, stats, watchdog, .. } = self;
        let target = &**target;
        let body: &[u8] = match op {
            HttpOp::Fixed => &target.spec.body,
            HttpOp::Rendered(b) => b,
            HttpOp::RenderFailed(msg) => return Err(OpError::fatal("body template", msg.clone())),
        };
        let mut ph = Phases::default();
        let had_connection = conn.stream.is_some();
        let exchange = client::exchange(&target.connector, conn, &target.head, body, target.head_request, &mut ph);
        let outcome = watchdog.limit(target.spec.timeout, exchange).await;
        let connected = !had_connection && conn.stream.is_some();
        if connected {
            stats.connections_opened += 1;
        }
        let failure = match outcome {
            Some(Ok(r)) => {
                if !warm {
                    stats.record(&ph, connected, r.status, conn.write.len() as u64, r.wire_bytes);
                }
                if !(r.keep_alive && target.spec.keepalive) {
                    conn.stream = None;
                }
                return self.judge(&r, !warm);
            }
            Some(Err(f)) => classify(f),
            None => {
                OpError::new("timeout", format!("no complete response within {:?} (--timeout)", target.spec.timeout))
            }
        };
        // Whatever state the connection is in, it cannot carry the next request.
        conn.stream = None;
        Err(failure)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        let e = Endpoint::parse("http://ql:8668/v2/notify", "URL").unwrap();
        assert_eq!((e.tls, e.host.as_str(), e.port, e.path.as_str()), (false, "ql", 8668, "/v2/notify"));
        assert_eq!(e.authority, "ql:8668");
        let e = Endpoint::parse("https://u:p%40ss@[::1]/x?apikey=s3cret&limit=10", "URL").unwrap();
        assert_eq!((e.tls, e.host.as_str(), e.port), (true, "::1", 443));
        assert_eq!(e.authority, "[::1]");
        assert_eq!(e.userinfo, Some(("u".into(), "p@ss".into())));
        assert_eq!(e.redacted, "https://u:***@[::1]/x?apikey=***&limit=10");
        let e = Endpoint::parse("http://h:80?x=1", "URL").unwrap();
        assert_eq!((e.path.as_str(), e.authority.as_str()), ("/?x=1", "h"));
        for bad in ["ftp://h/", "h:80", "/path", "http://", "http://h:8080/a@b"] {
            let err = Endpoint::parse(bad, "URL").unwrap_err();
            assert_eq!(crate::error::exit_code(&err), 2, "{bad}");
            assert!(err.to_string().starts_with("URL"), "{err}");
        }
    }

    /// No form of URL echoes its password, whether it parses or not.
    #[test]
    fn url_errors_never_show_the_password() {
        for url in [
            "ftp://u:S3cr3tPw@h",
            "http://u:S3cr3tPw@/x",
            "http://u:S3cr3tPw/x@h/y",
            "http://u:123/S3cr3tPw@h/y",
            "http://u:S3cr3tPw?x@h/",
            "u:S3cr3tPw@h",
        ] {
            let err = Endpoint::parse(url, "URL").unwrap_err();
            assert_eq!(crate::error::exit_code(&err), 2, "{url}");
            assert!(!format!("{err:#}").contains("S3cr3tPw"), "{url}: {err:#}");
        }
    }

    /// A VU's own figures are a few requests, not histograms (the shared
    /// ones are 16 KiB each at least, and thousands of VUs would hold them).
    #[test]
    fn a_vus_tally_is_small() {
        let tally = Tally::new(Arc::new(Mutex::new(HttpStats::new(1))));
        let bytes = std::mem::size_of::<Tally>() + tally.pending.capacity() * std::mem::size_of::<Sample>();
        assert!(bytes <= 2 * 1024, "{bytes} bytes");
    }
}
