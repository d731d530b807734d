//! CrateDB over its HTTP endpoint: `POST /_sql` with the statement and its
//! parameters as JSON (`args`, or `bulk_args` for one execution per row).
//!
//! Each worker keeps one HTTP/1.1 keep-alive connection to one node of the
//! URL's host list (`worker % hosts`, so the load spreads over the nodes as
//! CrateDB's own clients spread it), on the same transport as `dbload http`
//! (`driver::http::conn`): TCP without Nagle, TLS verified against the
//! system's CAs unless `--insecure`. Every request carries basic auth
//! (`crate` with no password unless the URL says otherwise; a node with
//! authentication off accepts it). Responses are read whole and parsed:
//! the client pays for a result as an application would.

pub mod exec;
pub mod export;
#[cfg(test)]
mod live;
mod response;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use anyhow::Result;
use base64::Engine as _;
use tokio::io::{AsyncRead, ReadBuf as TokioReadBuf};
use tokio_rustls::TlsConnector;

pub use self::response::{
    bulk_outcome, parse, rowcount_outcome, BulkResult, BulkResults, SqlError, SqlResponse, ROW_FAILED,
};
use super::http::conn::{self, Conn, Connector, Failure, Stream};
use super::http::percent_decode;
use super::http::wire::{self, ReadError, RequestHead};
use crate::error::{target, usage};
use crate::op::{OpError, Refused};
use crate::redact;

/// CrateDB's HTTP port, for `cratedb://` URLs without one.
pub const DEFAULT_PORT: u16 = 4200;
/// The user of a URL without one: CrateDB's superuser, which is also who
/// runs every statement on a node with authentication off.
pub const DEFAULT_USER: &str = "crate";

const EXAMPLE: &str =
    "give a URL like cratedb://crate@localhost:4200 or cratedb://user:pass@node1,node2:4201/?ssl=true";
/// How long a connection and its first request may take unless the URL's
/// `connect_timeout` says otherwise: as for a PostgreSQL target.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const REFUSED_ADVICE: &str =
    "is CrateDB running there? check the host and port (CrateDB's HTTP port is 4200 unless http.port says otherwise)";

/// A CrateDB cluster reached over HTTP: its nodes, the credentials and TLS.
/// Parsed once from the URL; each worker connects with [`CrateTarget::connect`].
#[derive(Clone)]
pub struct CrateTarget {
    /// Host (IPv6 without brackets) and port of each node, in URL order.
    hosts: Vec<(String, u16)>,
    /// The rustls client when the URL is https.
    tls: Option<TlsConnector>,
    insecure: bool,
    /// `Basic base64(user:password)`, sent with every request.
    authorization: String,
    redacted: String,
    /// The URL's `connect_timeout` (none: `connect_timeout=0`, no limit).
    connect_timeout: Option<Duration>,
}

impl fmt::Debug for CrateTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CrateTarget").field("url", &self.redacted).field("insecure", &self.insecure).finish()
    }
}

impl CrateTarget {
    /// Parses `cratedb://[user[:pass]@]host[:port][,host[:port]...][/][?ssl=true]`
    /// (port 4200 by default; `ssl=true` or `sslmode=require` for https), or
    /// the same host list after `http://` or `https://` (ports 80 and 443 by
    /// default, as for any URL of those schemes). `connect_timeout=SECONDS`
    /// (any scheme; libpq's word, 10 by default, 0 for no limit) bounds a
    /// connection and, for dbload's own, its first request. `option` names where the
    /// URL came from, for messages; `insecure` skips verifying an https
    /// server's certificate.
    pub fn parse(url: &str, option: &str, insecure: bool) -> Result<CrateTarget> {
        let bad = |why: String| usage(format!("{option} {}: {why}; {EXAMPLE}", redact::userinfo(url)));
        let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("no scheme".into()))?;
        let scheme = scheme.to_ascii_lowercase();
        let (mut tls, default_port) = match scheme.as_str() {
            "cratedb" | "crate" => (false, DEFAULT_PORT),
            "http" => (false, 80),
            "https" => (true, 443),
            other => return Err(bad(format!("scheme {other}: CrateDB over HTTP takes cratedb, http or https"))),
        };
        // The user info ends at the last `@`: nothing after it may hold one,
        // and a password may then hold an unescaped `/`, `?` or `@`.
        let (userinfo, rest) = match rest.rsplit_once('@') {
            Some((ui, rest)) => (Some(ui), rest),
            None => (None, rest),
        };
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (host_list, tail) = rest.split_at(end);
        let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
        if !path.is_empty() && path != "/" {
            return Err(bad(format!(
                "path {path}: the _sql endpoint is at the root; give a schema with the table name instead"
            )));
        }
        let mut connect_timeout = Some(DEFAULT_CONNECT_TIMEOUT);
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            if let Some(secs) = pair.strip_prefix("connect_timeout=") {
                let secs: u64 =
                    secs.parse().map_err(|_| bad(format!("{pair}: give whole seconds, e.g. connect_timeout=10")))?;
                connect_timeout = (secs > 0).then(|| Duration::from_secs(secs));
                continue;
            }
            if scheme != "cratedb" && scheme != "crate" {
                return Err(bad(format!("{pair}: the scheme {scheme} already says whether TLS is used")));
            }
            tls = match pair.split_once('=').unwrap_or((pair, "")) {
                ("ssl", "true" | "1") => true,
                ("ssl", "false" | "0") => false,
                ("sslmode", "disable") => false,
                ("sslmode", "require" | "verify-ca" | "verify-full") => true,
                _ => {
                    return Err(bad(format!(
                        "{pair}: the parameters known are ssl=true|false, sslmode=disable|require and connect_timeout=SECONDS"
                    )))
                }
            };
        }
        let (user, password) = match userinfo.map(|ui| ui.split_once(':').unwrap_or((ui, ""))) {
            Some(("", _)) => return Err(bad("an empty user name".into())),
            Some((u, p)) => (percent_decode(u), percent_decode(p)),
            None => (DEFAULT_USER.to_owned(), String::new()),
        };
        let hosts = host_list
            .split(',')
            .map(|h| parse_host(h, default_port).map_err(|why| bad(format!("host {h:?}: {why}"))))
            .collect::<Result<Vec<_>>>()?;
        let redacted = redact::userinfo(url);
        let tls = if tls { Some(conn::tls_connector(insecure, &redacted)?) } else { None };
        let credentials = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        let authorization = format!("Basic {credentials}");
        Ok(CrateTarget { hosts, tls, insecure, authorization, redacted, connect_timeout })
    }

    /// The URL as given, its password replaced by `***`: for messages and reports.
    pub fn redacted(&self) -> &str {
        &self.redacted
    }

    /// `host:port` of each node, in URL order (IPv6 in brackets).
    pub fn hosts(&self) -> Vec<String> {
        self.hosts.iter().map(|(h, p)| host_port(h, *p)).collect()
    }

    /// Whether requests go over TLS (https).
    pub fn tls(&self) -> bool {
        self.tls.is_some()
    }

    /// Whether the server's certificate goes unverified (`--insecure`), which
    /// the report says.
    pub fn insecure(&self) -> bool {
        self.insecure
    }

    /// Opens worker `worker`'s connection, to node `worker % hosts` (workers
    /// spread round-robin over the nodes), within `connect_timeout`. An
    /// unreachable node is a target error (exit code 3) that says what to
    /// check.
    pub async fn connect(&self, worker: usize) -> Result<CrateConn> {
        self.within_connect_timeout(worker, self.open(worker)).await
    }

    /// [`CrateTarget::connect`] without its time limit.
    async fn open(&self, worker: usize) -> Result<CrateConn> {
        let (host, port) = &self.hosts[worker % self.hosts.len()];
        let authority = host_port(host, *port);
        let url = self.node_url(worker);
        let connector = Connector::resolve(host, *port, self.tls.clone(), &url, REFUSED_ADVICE).await?;
        let (stream, _, _) = connector.connect().await.map_err(|e| connector.connect_error(e))?;
        let headers = [
            ("Content-Type".to_owned(), "application/json".to_owned()),
            ("Authorization".to_owned(), self.authorization.clone()),
        ];
        let head = RequestHead::new("POST", "/_sql", &authority, &headers, false, true);
        // CrateDB's answers are parsed whole (rows, counts, errors).
        let mut conn = Box::new(Conn { body: wire::Body::keeping(usize::MAX), ..Default::default() });
        conn.open(stream);
        Ok(CrateConn { connector, url, head, conn, body: Vec::new(), target: self.clone(), node: worker })
    }

    /// Node `worker % hosts` as messages name it: the URL, or the node and the URL.
    fn node_url(&self, worker: usize) -> String {
        let (host, port) = &self.hosts[worker % self.hosts.len()];
        match self.hosts.len() {
            1 => self.redacted.clone(),
            _ => format!("{} (of {})", host_port(host, *port), self.redacted),
        }
    }

    /// `connecting` to node `worker % hosts`, given up at `connect_timeout`
    /// with a target error (exit 3) naming it and the node.
    async fn within_connect_timeout<T>(&self, worker: usize, connecting: impl Future<Output = Result<T>>) -> Result<T> {
        let Some(limit) = self.connect_timeout else { return connecting.await };
        tokio::time::timeout(limit, connecting).await.unwrap_or_else(|_| {
            Err(target(format!(
                "cannot connect to {}: no answer within connect_timeout ({} s): is CrateDB serving HTTP \
                 there? check the host and port, or raise connect_timeout in the URL",
                self.node_url(worker),
                limit.as_secs_f64()
            )))
        })
    }

    /// Opens a connection to the first node of the list that takes one and
    /// answers a first request within `connect_timeout` (HTTP has no startup
    /// of its own: the login is checked there): dbload's own connection,
    /// which must not fail for one node that is down (e.g. to verify after
    /// a run during which it went away). When none does, the first node's
    /// error.
    pub async fn connect_any(&self) -> Result<CrateConn> {
        let mut first = None;
        for node in 0..self.hosts.len() {
            let answering = async {
                let mut conn = self.open(node).await?;
                conn.server_version().await?;
                Ok(conn)
            };
            match self.within_connect_timeout(node, answering).await {
                Ok(conn) => return Ok(conn),
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        Err(first.expect("a URL has at least one host"))
    }
}

/// `host` or `[v6]`, then `:port` (default `default_port`).
fn parse_host(h: &str, default_port: u16) -> Result<(String, u16), String> {
    let (host, port) = match h.strip_prefix('[') {
        Some(v6) => {
            let (host, after) = v6.split_once(']').ok_or("an IPv6 address without its closing ]")?;
            (host, after.strip_prefix(':').map(Some).or(after.is_empty().then_some(None)).ok_or("junk after ]")?)
        }
        None => match h.split_once(':') {
            Some((_, p)) if p.contains(':') => return Err("an IPv6 address goes in brackets: [::1]:4200".into()),
            Some((host, port)) => (host, Some(port)),
            None => (h, None),
        },
    };
    if host.is_empty() {
        return Err("no host name".into());
    }
    let port = match port {
        None => default_port,
        Some(p) => p.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(|| format!("port {p:?} is not 1 to 65535"))?,
    };
    Ok((host.to_owned(), port))
}

fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// One worker's keep-alive connection to one CrateDB node.
pub struct CrateConn {
    connector: Connector,
    /// The node's URL, redacted, for messages.
    url: String,
    head: RequestHead,
    /// Boxed, as the bulk of a worker's state: executors travel in enums
    /// beside smaller ones (clippy's `large_enum_variant`).
    conn: Box<Conn>,
    /// The body of [`CrateConn::execute`]'s requests, reused.
    body: Vec<u8>,
    /// Where [`CrateConn::next_node`] connects: the target, and the node
    /// this connection is to, as [`CrateTarget::connect`] counts them.
    target: CrateTarget,
    node: usize,
}

/// The class of a request that failed because its node refused the
/// connection: none of it was sent.
pub const NOT_SENT: &str = "cannot connect";

impl CrateConn {
    /// Replaces this connection with one to the next node of the URL's list
    /// (`--reconnect`): a node that restarts or fails over leaves the
    /// others to work with.
    pub async fn next_node(&mut self) -> Result<()> {
        *self = self.target.connect(self.node + 1).await?;
        Ok(())
    }

    /// Posts one `_sql` request body and parses the answer. A connection
    /// the server closed since the last request is replaced first. Both
    /// failures of the connection are fatal (the worker connects again, see
    /// [`CrateConn::next_node`], or stops): one lost during the request
    /// (`connection lost`: it may or may not have been executed, so it is
    /// not sent again blindly), and a node that refuses the connection
    /// ([`NOT_SENT`]: nothing was sent).
    pub async fn post(&mut self, body: &[u8]) -> Result<SqlResponse, OpError> {
        self.answer(Body::Whole(body)).await
    }

    /// [`CrateConn::post`] for a body that `write` writes a piece at a
    /// time (returns whether more follows), each piece sent as a chunk
    /// as soon as it is written: a batch's body is never whole in memory.
    pub async fn post_chunked(
        &mut self,
        write: &mut (dyn FnMut(&mut Vec<u8>) -> bool + Send),
    ) -> Result<SqlResponse, OpError> {
        self.answer(Body::Chunked(write)).await
    }

    /// Sends one request and parses the answer, for [`CrateConn::post`].
    async fn answer(&mut self, body: Body<'_>) -> Result<SqlResponse, OpError> {
        match self.exchange(body).await {
            Ok(status) => parse(status, self.conn.body.kept()),
            Err(Failure::Connect(e)) => Err(OpError::fatal(NOT_SENT, format!("{}: {e}", self.url))),
            Err(f) => Err(OpError::fatal("connection lost", format!("{}: {}", self.url, describe(&f)))),
        }
    }

    /// Runs one statement for dbload itself (DDL, `REFRESH TABLE`, counts,
    /// the server version) with `args` for its `?` or `$n` placeholders.
    /// A refusal is an error naming the statement and CrateDB's message; a
    /// lost connection or a login CrateDB refuses is a target error (exit 3).
    pub async fn execute(&mut self, stmt: &str, args: &[serde_json::Value]) -> Result<SqlResponse> {
        let mut body = std::mem::take(&mut self.body);
        body.clear();
        serde_json::to_writer(&mut body, &serde_json::json!({ "stmt": stmt, "args": args }))?;
        let exchanged = self.exchange(Body::Whole(&body)).await;
        self.body = body;
        let status = exchanged.map_err(|f| {
            target(format!(
                "{}: {stmt}: {}: is CrateDB serving HTTP on this port (https needs https:// or ?ssl=true)?",
                self.url,
                describe(&f)
            ))
        })?;
        if status == 401 && serde_json::from_slice::<SqlResponse>(self.conn.body.kept()).is_err() {
            return Err(target(format!(
                "{}: CrateDB refused the login: {}: check the user and password in the URL",
                self.url,
                response::excerpt(self.conn.body.kept()).trim_end()
            )));
        }
        parse(status, self.conn.body.kept()).map_err(|error| Refused { statement: stmt.to_string(), error }.into())
    }

    /// The CrateDB version of the node this connection reaches, e.g. `6.4.3`.
    pub async fn server_version(&mut self) -> Result<String> {
        let stmt = crate::dialect::cratedb::NODE_VERSION;
        let r = self.execute(stmt, &[]).await?;
        match r.rows.first().and_then(|row| row.first()) {
            Some(serde_json::Value::String(v)) => Ok(v.clone()),
            _ => Err(anyhow::anyhow!("{stmt}: no version in CrateDB's answer")),
        }
    }

    /// Sends one request and reads its response into `self.conn.body`;
    /// returns its status. Reconnects first when the server has closed the
    /// kept-alive connection; after a failure the connection is dropped,
    /// so the next request opens a new one.
    async fn exchange(&mut self, body: Body<'_>) -> Result<u16, Failure> {
        if self.conn.stream.as_mut().is_some_and(closed_by_peer) {
            self.conn.stream = None;
        }
        if self.conn.stream.is_none() {
            let (stream, _, _) = self.connector.connect().await.map_err(Failure::Connect)?;
            self.conn.open(stream);
        }
        let exchanged = match body {
            Body::Whole(bytes) => self.conn.round_trip(&self.head, bytes, false).await,
            Body::Chunked(write) => self.conn.round_trip_chunked(&self.head, write).await,
        };
        match exchanged {
            Ok((r, _)) => {
                if !r.keep_alive {
                    self.conn.stream = None;
                }
                Ok(r.status)
            }
            Err(f) => {
                self.conn.stream = None;
                Err(f)
            }
        }
    }
}

/// A request's body: bytes at hand (dbload's own statements, queries), or
/// a batch's, written as it is sent.
enum Body<'a> {
    Whole(&'a [u8]),
    Chunked(&'a mut (dyn FnMut(&mut Vec<u8>) -> bool + Send)),
}

/// Whether an idle kept-alive connection can no longer carry a request:
/// the server closed it (idle timeout, restart, or a 401 it answered and
/// closed) or sent something unasked. One read that must not wait: without
/// it, the next request would be written into a closed connection and
/// lost, and a worker would stop for nothing.
fn closed_by_peer(stream: &mut Stream) -> bool {
    let mut byte = [0u8; 1];
    let mut buf = TokioReadBuf::new(&mut byte);
    let mut cx = Context::from_waker(Waker::noop());
    !matches!(Pin::new(stream).poll_read(&mut cx, &mut buf), Poll::Pending)
}

/// A transport failure in words, for messages.
fn describe(f: &Failure) -> String {
    match f {
        Failure::Connect(e) => format!("cannot connect: {e}"),
        Failure::Write(e) => format!("sending the request: {e}"),
        Failure::Read(ReadError::Io(e)) => format!("reading the response: {e}"),
        Failure::Read(ReadError::Closed { partial: false }) => "the server closed the connection".to_owned(),
        Failure::Read(ReadError::Closed { partial: true }) => "the server closed the connection mid-response".into(),
        Failure::Read(ReadError::Malformed(m)) => format!("not an HTTP response: {m}"),
    }
}

#[cfg(test)]
mod tests {
    use super::response::tests::fixture;
    use super::*;
    use crate::error::exit_code;

    fn parsed(url: &str) -> CrateTarget {
        CrateTarget::parse(url, "--url", false).unwrap_or_else(|e| panic!("{url}: {e}"))
    }

    fn basic(user_pass: &str) -> String {
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(user_pass))
    }

    #[test]
    fn urls() {
        let t = parsed("cratedb://localhost");
        assert_eq!(
            (t.hosts(), t.tls(), t.authorization.as_str()),
            (vec!["localhost:4200".into()], false, &*basic("crate:"))
        );
        let t = parsed("cratedb://bob:s%3Acr%40t@n1,n2:4201,[::1]/?ssl=true");
        assert_eq!(t.hosts(), ["n1:4200", "n2:4201", "[::1]:4200"]);
        assert!(t.tls() && !t.insecure());
        assert_eq!(t.authorization, basic("bob:s:cr@t"));
        assert_eq!(t.redacted(), "cratedb://bob:***@n1,n2:4201,[::1]/?ssl=true");
        assert!(!format!("{t:?}").contains("cr%40t"));
        let t = parsed("cratedb://alice@h:1?sslmode=require");
        assert_eq!(
            (t.hosts(), t.tls(), t.redacted()),
            (vec!["h:1".into()], true, "cratedb://alice@h:1?sslmode=require")
        );
        assert_eq!(t.authorization, basic("alice:"));
        assert_eq!(parsed("http://h").hosts(), ["h:80"]);
        let t = CrateTarget::parse("https://u:p@h,g:4200", "--url", true).unwrap();
        assert_eq!((t.hosts(), t.tls(), t.insecure()), (vec!["h:443".into(), "g:4200".into()], true, true));
        assert_eq!(t.redacted(), "https://u:***@h,g:4200");
        // A password with unescaped `/`, `?` or `@`: the user info ends at the last `@`.
        let t = parsed("cratedb://u:S3/cr?3t@Pw@h:4201");
        assert_eq!((t.hosts(), t.authorization.as_str()), (vec!["h:4201".into()], &*basic("u:S3/cr?3t@Pw")));
        assert_eq!(t.redacted(), "cratedb://u:***@h:4201");
        // libpq's word for the time a connection may take; 0: no limit.
        let timeout = |url| parsed(url).connect_timeout;
        assert_eq!(timeout("cratedb://h"), Some(Duration::from_secs(10)));
        assert_eq!(timeout("https://h/?connect_timeout=3"), Some(Duration::from_secs(3)));
        assert_eq!(timeout("cratedb://h?ssl=true&connect_timeout=0"), None);
    }

    #[test]
    fn bad_urls_are_usage_errors_without_the_password() {
        for (url, why) in [
            ("localhost:4200", "no scheme"),
            ("postgres://h", "scheme postgres"),
            ("cratedb://u:secret@h/doc", "path /doc"),
            ("cratedb://u:secret@h:99999", "not 1 to 65535"),
            ("cratedb://h,,g", "no host name"),
            ("cratedb://::1", "brackets"),
            ("cratedb://h?ssl=maybe", "ssl=maybe"),
            ("https://h?ssl=true", "already says"),
            ("cratedb://h?connect_timeout=soon", "connect_timeout=soon: give whole seconds"),
            ("cratedb://:pw@h", "empty user"),
            ("cratedb://u:secret/x@h:99999", "not 1 to 65535"),
            ("cratedb://u:secret?x@h/doc", "path /doc"),
            ("ftp://u:secret/x@h", "scheme ftp"),
        ] {
            let e = CrateTarget::parse(url, "--url", false).unwrap_err();
            let msg = e.to_string();
            assert_eq!(exit_code(&e), 2, "{url}: {msg}");
            assert!(msg.starts_with("--url ") && msg.contains(why) && msg.contains("cratedb://crate@"), "{url}: {msg}");
            assert!(!msg.contains("secret"), "{msg}");
        }
    }

    /// A node that answers the first request of each connection with the
    /// next of `replies` (raw HTTP; `None`: no answer), then closes it.
    /// Returns the target and, at the end, the requests it received.
    async fn serve(replies: Vec<Option<Vec<u8>>>) -> (CrateTarget, tokio::task::JoinHandle<Vec<String>>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("cratedb://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let server = tokio::spawn(async move {
            let mut requests = Vec::new();
            for reply in replies {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut buf = vec![0; 4096];
                let n = s.read(&mut buf).await.unwrap();
                requests.push(String::from_utf8_lossy(&buf[..n]).into_owned());
                if let Some(reply) = reply {
                    s.write_all(&reply).await.unwrap();
                }
            }
            requests
        });
        (parsed(&url), server)
    }

    #[tokio::test]
    async fn a_connection_the_server_closed_is_replaced() {
        // CrateDB answers a refused login and closes, without `Connection: close`.
        let ok = fixture!("05_bulk_insert_3_ok", wire);
        let (t, server) = serve(vec![Some(fixture!("15b_basic_auth_unknown_user", wire)), Some(ok)]).await;
        let mut c = t.connect(0).await.unwrap();
        let e = c.execute("SELECT current_user", &[]).await.unwrap_err();
        assert_eq!(exit_code(&e), 3, "{e}");
        assert!(e.to_string().contains("refused the login: trust authentication failed"), "{e}");
        // Let the server's close arrive before the next request.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert_eq!(bulk_outcome(c.post(br#"{"stmt":"x"}"#).await, 3).unwrap(), 3);
        let requests = server.await.unwrap();
        let r = &requests[1];
        assert!(r.starts_with("POST /_sql HTTP/1.1\r\nHost: 127.0.0.1:"), "{r}");
        assert!(r.contains(&format!("Authorization: {}\r\n", basic("crate:"))), "{r}");
        assert!(r.contains("Content-Type: application/json\r\n") && r.ends_with(r#"{"stmt":"x"}"#), "{r}");
    }

    #[tokio::test]
    async fn a_request_lost_with_its_connection_is_fatal_and_not_resent() {
        let (t, server) = serve(vec![None, None]).await;
        let mut c = t.connect(0).await.unwrap();
        let e = c.post(b"{}").await.unwrap_err();
        assert_eq!((e.class.as_str(), e.fatal), ("connection lost", true));
        assert!(e.message.contains("closed the connection"), "{}", e.message);
        let e = c.execute("REFRESH TABLE t", &[]).await.unwrap_err();
        assert_eq!(exit_code(&e), 3, "{e}");
        assert!(e.to_string().contains("REFRESH TABLE t"), "{e}");
        assert_eq!(server.await.unwrap().len(), 2);
    }

    #[tokio::test]
    async fn dbloads_own_connection_takes_the_first_node_that_answers() {
        // A port nothing listens on: bind one, then free it.
        let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        // A fake node that takes connections and never answers (a half-dead
        // node), and one that answers the version asked for.
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let silent = silent.local_addr().unwrap().port();
        let (alive, server) = serve(vec![Some(fixture!("02_sys_nodes_version", wire))]).await;
        let alive = &alive.hosts()[0];
        let url = format!("cratedb://127.0.0.1:{dead},127.0.0.1:{silent},{alive}/?connect_timeout=1");
        let c = parsed(&url).connect_any().await.unwrap();
        assert_eq!((c.node, c.url.starts_with(&format!("{alive} (of "))), (2, true), "{}", c.url);
        assert_eq!(server.await.unwrap().len(), 1, "the node was asked its version once");
        let e = parsed(&format!("cratedb://127.0.0.1:{dead},localhost:{dead}")).connect_any().await.err().unwrap();
        assert_eq!(exit_code(&e), 3, "{e}");
        assert!(
            e.to_string().starts_with(&format!("cannot connect to 127.0.0.1:{dead} (of ")),
            "the first node's: {e}"
        );
    }

    #[tokio::test]
    async fn an_unreachable_node_is_a_target_error() {
        // A port nothing listens on: bind one, then free it.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let t = parsed(&format!("cratedb://u:pw@127.0.0.1:{port},localhost:{port}"));
        for (worker, node) in [(0, "127.0.0.1"), (1, "localhost"), (2, "127.0.0.1")] {
            let e = t.connect(worker).await.err().expect("nothing listens");
            let msg = e.to_string();
            assert_eq!(exit_code(&e), 3, "{msg}");
            assert!(msg.starts_with(&format!("cannot connect to {node}:{port} (of cratedb://u:***@")), "{msg}");
            assert!(msg.contains("is CrateDB running") && !msg.contains("pw"), "{msg}");
        }
    }
}
