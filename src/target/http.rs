//! An HTTP endpoint as a target: the API in front of a time-series database
//! (QuantumLeap's `/v2/notify`, a CrateDB or a Prometheus write endpoint).
//!
//! Each VU owns one connection, reused for its next request (keep-alive) or
//! opened anew for every request (`--no-keepalive`), so "connections
//! opened" is exact and seed 003's connection-reuse question can be asked.
//! Every request is timed per phase as k6 does (connecting, TLS
//! handshaking, sending, waiting, receiving); see `wire` for why the HTTP/1.1
//! framing is done here rather than by a client crate.

pub mod check;
pub(super) mod conn;
pub mod wire;

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use hdrhistogram::Histogram;

use self::check::Check;
use self::conn::{Conn, ConnectError, Connector, Failure};
use self::wire::{ReadError, RequestHead};
use crate::config::Warmup;
use crate::error::usage;
use crate::run::worker::{warming_up, Executor, Operation};
use crate::stats::recorder::{new_histogram, record_us, MAX_US};
use crate::stats::OpError;

/// Query parameters and headers whose values are never printed.
const SECRET_WORDS: [&str; 7] = ["auth", "token", "key", "secret", "pass", "sig", "cookie"];

/// Whether a header or query parameter called `name` holds a secret.
pub fn is_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| name.contains(w))
}

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
            let shown = redact_userinfo(url);
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
        let redacted = format!("{}://{user}{host_port}{}", if tls { "https" } else { "http" }, redact_query(&path));
        Ok(Endpoint { tls, host, port, path, authority, userinfo, redacted })
    }
}

/// `url` with its password replaced by `***`, read the cautious way: the
/// user info is everything between `://` and the *last* `@`, so that a
/// password with an unescaped `/`, `?` or `@` is hidden too. For messages
/// about a URL as given (shared with the CrateDB URL), which must never
/// echo its password, whether the URL parsed or not.
pub(super) fn redact_userinfo(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").map_or(("", url), |(scheme, rest)| (scheme, rest));
    let separator = if scheme.is_empty() && !url.contains("://") { "" } else { "://" };
    match rest.rsplit_once('@') {
        Some((userinfo, host)) if userinfo.contains(':') => {
            let user = userinfo.split_once(':').map_or(userinfo, |(user, _)| user);
            format!("{scheme}{separator}{user}:***@{host}")
        }
        _ => url.to_owned(),
    }
}

/// `%XX` escapes of a URL's user info decoded (shared with the CrateDB URL).
pub(super) fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
}

fn redact_query(path: &str) -> String {
    let Some((p, q)) = path.split_once('?') else { return path.to_owned() };
    let params: Vec<String> = q
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some((k, _)) if is_secret(k) => format!("{k}=***"),
            _ => kv.to_owned(),
        })
        .collect();
    format!("{p}?{}", params.join("&"))
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
        Ok(HttpTarget { spec, connector, head, head_request, status_checked })
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

/// Pass and fail counts of one `--check`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckCount {
    pub passes: u64,
    pub fails: u64,
}

/// What the request loop itself does not know: the per-phase times of each
/// request (µs histograms), bytes, connections and checks. One per VU,
/// merged at the end; warm-up requests are left out, like everywhere else.
#[derive(Debug, Clone)]
pub struct HttpStats {
    /// Sending + waiting + receiving: k6's `http_req_duration`.
    pub duration: Histogram<u64>,
    pub connecting: Histogram<u64>,
    pub tls_handshaking: Histogram<u64>,
    pub sending: Histogram<u64>,
    pub waiting: Histogram<u64>,
    pub receiving: Histogram<u64>,
    /// Every connection opened, warm-up and setup included.
    pub connections_opened: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// One per `--check`, in order.
    pub checks: Vec<CheckCount>,
    /// Responses per status code.
    pub statuses: std::collections::BTreeMap<u16, u64>,
    /// Requests on a reused connection not yet recorded as 0 connecting.
    reused: u64,
    /// Phases not yet in the histograms: duration, sending, waiting, receiving (µs).
    pending: Vec<[u32; 4]>,
}

/// Requests whose phases are recorded together (see [`HttpStats::flush`]).
const PENDING: usize = 64;

impl HttpStats {
    pub fn new(checks: usize) -> HttpStats {
        HttpStats {
            duration: new_histogram(),
            connecting: new_histogram(),
            tls_handshaking: new_histogram(),
            sending: new_histogram(),
            waiting: new_histogram(),
            receiving: new_histogram(),
            connections_opened: 0,
            bytes_sent: 0,
            bytes_received: 0,
            checks: vec![CheckCount::default(); checks],
            statuses: Default::default(),
            reused: 0,
            pending: Vec::with_capacity(PENDING),
        }
    }

    fn histograms(&mut self) -> [&mut Histogram<u64>; 6] {
        [
            &mut self.duration,
            &mut self.connecting,
            &mut self.tls_handshaking,
            &mut self.sending,
            &mut self.waiting,
            &mut self.receiving,
        ]
    }

    pub fn merge(&mut self, mut o: HttpStats) {
        o.flush();
        for (a, b) in self.histograms().into_iter().zip(o.histograms()) {
            a.add(&*b).expect("same bounds");
        }
        self.connections_opened += o.connections_opened;
        self.bytes_sent += o.bytes_sent;
        self.bytes_received += o.bytes_received;
        for (a, b) in self.checks.iter_mut().zip(&o.checks) {
            a.passes += b.passes;
            a.fails += b.fails;
        }
        for (status, n) in o.statuses {
            *self.statuses.entry(status).or_default() += n;
        }
    }

    /// Records the phases of a request; `connected`: it opened its own
    /// connection (a reused one is counted, and recorded as 0 at the end).
    fn record(&mut self, p: &Phases, connected: bool) {
        // Not `micros`: a phase that took no time is 0 here, as in k6.
        let us = |d: Duration| (d.as_micros() as u64).min(MAX_US) as u32;
        self.pending.push([us(p.sending + p.waiting + p.receiving), us(p.sending), us(p.waiting), us(p.receiving)]);
        if self.pending.len() == PENDING {
            self.flush();
        }
        if connected {
            record_us(&mut self.connecting, us(p.connecting).into());
            record_us(&mut self.tls_handshaking, us(p.tls).into());
        } else {
            self.reused += 1;
        }
    }

    /// Moves the pending phases into the histograms, histogram by
    /// histogram: between two requests of a VU the network stack and the
    /// other VUs push its histograms out of the CPU caches, and a record
    /// per phase per request was a cache miss each.
    fn flush(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for (i, h) in
            [&mut self.duration, &mut self.sending, &mut self.waiting, &mut self.receiving].into_iter().enumerate()
        {
            for values in &pending {
                record_us(h, values[i].into());
            }
        }
        self.pending = pending;
        self.pending.clear();
        // Requests on reused connections took no connecting: 0 each, as in k6.
        let n = std::mem::take(&mut self.reused);
        if n > 0 {
            self.connecting.saturating_record_n(0, n);
            self.tls_handshaking.saturating_record_n(0, n);
        }
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
    stats: HttpStats,
    /// `--timeout`, armed lazily: it is set to a request's deadline only
    /// when it fires before that deadline, so a request costs no timer
    /// operation of its own (they would show at 100k requests/s).
    watchdog: Pin<Box<tokio::time::Sleep>>,
    t0: Instant,
    warmup: Warmup,
    attempted: u64,
}

impl HttpExecutor {
    /// Opens the VU's first connection, so that an unreachable target is
    /// found before the run starts (and reported with exit code 3).
    pub async fn open(target: Arc<HttpTarget>) -> Result<HttpExecutor> {
        let connector = &target.connector;
        let (stream, _, _) = connector.connect().await.map_err(|e| connector.connect_error(e))?;
        let mut stats = HttpStats::new(target.spec.checks.len());
        stats.connections_opened = 1;
        let conn = Conn { stream: Some(stream), ..Default::default() };
        let watchdog = Box::pin(tokio::time::sleep(target.spec.timeout));
        Ok(HttpExecutor { target, conn, stats, watchdog, t0: Instant::now(), warmup: Warmup::None, attempted: 0 })
    }

    /// The run's start and warm-up, as the worker loop has them, so that
    /// warm-up requests stay out of these figures too.
    pub fn plan(&mut self, t0: Instant, warmup: Warmup) {
        self.t0 = t0;
        self.warmup = warmup;
    }

    /// What this VU recorded.
    pub fn into_stats(mut self) -> HttpStats {
        self.stats.flush();
        self.stats
    }

    /// One request and its response, each phase timed.
    async fn exchange(t: &HttpTarget, c: &mut Conn, body: &[u8], ph: &mut Phases) -> Result<wire::Response, Failure> {
        if c.stream.is_none() {
            let (s, connecting, tls) = t.connector.connect().await.map_err(Failure::Connect)?;
            ph.connecting = connecting;
            ph.tls = tls;
            c.open(s);
        }
        let (r, (sending, sent)) = c.round_trip(&t.head, body, t.head_request).await?;
        let done = Instant::now();
        ph.sending = sent - sending;
        ph.waiting = r.first_byte.saturating_duration_since(sent);
        ph.receiving = done.saturating_duration_since(r.first_byte.max(sent));
        Ok(r)
    }

    /// Counts the checks of a response; the first that fails, or a
    /// non-2xx status when no check decides on statuses, fails the request.
    fn judge(&mut self, r: &wire::Response, record: bool) -> Result<u64, OpError> {
        let body = &self.conn.body;
        let mut failed: Option<&Check> = None;
        for (i, check) in self.target.spec.checks.iter().enumerate() {
            let holds = check.holds(r.status, body);
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
        let excerpt = || {
            let text = check::excerpt(body);
            let reason = &self.conn.reason;
            format!("{} {reason}{}{text}", r.status, if text.is_empty() { "" } else { ": " })
        };
        if let Some(check) = failed {
            return Err(OpError::new(format!("check {}", check.text), excerpt()));
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
    async fn execute(&mut self, op: &mut HttpOp) -> Result<u64, OpError> {
        let warm = warming_up(self.warmup, self.t0.elapsed(), self.attempted);
        self.attempted += 1;
        let HttpExecutor { target, conn, stats, watchdog, .. } = self;
        let target = &**target;
        let body: &[u8] = match op {
            HttpOp::Fixed => &target.spec.body,
            HttpOp::Rendered(b) => b,
            HttpOp::RenderFailed(msg) => return Err(OpError::fatal("body template", msg.clone())),
        };
        let mut ph = Phases::default();
        let had_connection = conn.stream.is_some();
        let deadline = tokio::time::Instant::now() + target.spec.timeout;
        let outcome = {
            let exchange = Self::exchange(target, conn, body, &mut ph);
            tokio::pin!(exchange);
            loop {
                tokio::select! {
                    biased;
                    r = &mut exchange => break Some(r),
                    _ = watchdog.as_mut() => {
                        if tokio::time::Instant::now() >= deadline {
                            break None;
                        }
                        watchdog.as_mut().reset(deadline);
                    }
                }
            }
        };
        let connected = !had_connection && conn.stream.is_some();
        if connected {
            stats.connections_opened += 1;
        }
        let failure = match outcome {
            Some(Ok(r)) => {
                if !warm {
                    stats.record(&ph, connected);
                    stats.bytes_sent += conn.write.len() as u64;
                    stats.bytes_received += r.wire_bytes;
                    *stats.statuses.entry(r.status).or_default() += 1;
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
        assert_eq!(redact_userinfo("cratedb://u:pw/x@h"), "cratedb://u:***@h");
        assert_eq!(redact_userinfo("http://h/a@b"), "http://h/a@b");
    }

    #[test]
    fn secrets() {
        for name in ["Authorization", "X-Api-Key", "Cookie", "X-Auth-Token", "password"] {
            assert!(is_secret(name), "{name}");
        }
        assert!(!is_secret("Content-Type") && !is_secret("Fiware-Service"));
    }
}
