//! Any request to any URL, as a k6 script makes them (`http.post(url, body,
//! params)`): the method, URL, headers and body differ from one request to
//! the next, where `dbload http`'s executor sends one request over and
//! over. The framing, the connection and the per-phase timing are the same
//! ones (`conn`, `wire`, the VU's `Tally` into the run's [`HttpStats`]), so
//! `http_req_*` mean what they mean for `dbload http`.
//!
//! A client keeps one connection per origin (scheme, host, port) and
//! reuses it, as a k6 VU does; a host name is resolved once per client.
//! A script mostly sends the same request over and over: the last
//! request's parsed URL and encoded head are kept, and made again only
//! when its method, URL or headers differ.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::conn::{self, Conn, Connector, Failure};
use super::watchdog::Watchdog;
use super::wire::{Body, Kept, RequestHead};
use super::{classify, Endpoint, Phases, Tally};
use crate::stats::http::HttpStats;

/// The largest response body a script sees (k6 keeps bodies whole; a
/// larger one is cut here, and the answer says so).
pub const BODY_CAP: usize = 64 << 20;

/// One request as a script made it.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Whether a body goes out (`Content-Length` even when it is empty).
    pub has_body: bool,
    pub timeout: Duration,
}

/// The phases of one request, k6's `res.timings`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timings {
    pub connecting: Duration,
    pub tls_handshaking: Duration,
    pub sending: Duration,
    pub waiting: Duration,
    pub receiving: Duration,
}

impl Timings {
    /// k6's `http_req_duration`: sending + waiting + receiving.
    pub fn duration(&self) -> Duration {
        self.sending + self.waiting + self.receiving
    }
}

/// What came back: a response, or the error that took its place (status
/// 0, as k6 reports it).
#[derive(Debug, Clone, Default)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
    /// The body was larger than [`BODY_CAP`]: `body` is its start.
    pub cut: bool,
    /// As they came, in order: one `name:value` line each.
    pub headers: String,
    pub timings: Timings,
    /// `class: message` of a request that got no response.
    pub error: Option<String>,
}

/// One origin's resolved addresses and its connection.
struct Origin {
    key: (bool, String, u16),
    connector: Connector,
    conn: Conn,
}

/// The last request's head, with what it was made of.
struct Made {
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    has_body: bool,
    /// Its origin's place in [`Client::origins`].
    origin: usize,
    head: RequestHead,
}

impl Made {
    fn of(&self, r: &Request) -> bool {
        self.url == r.url && self.method == r.method && self.has_body == r.has_body && self.headers == r.headers
    }
}

/// One VU's HTTP client: its connections and its tally of the run's
/// figures.
pub struct Client {
    origins: Vec<Origin>,
    insecure: bool,
    tally: Tally,
    last: Option<Made>,
    /// `params.timeout`, with no timer operation per request.
    watchdog: Watchdog,
}

impl Client {
    /// `insecure`: https without verifying the server's certificate.
    pub fn new(stats: Arc<Mutex<HttpStats>>, insecure: bool) -> Client {
        Client { origins: Vec::new(), insecure, tally: Tally::new(stats), last: None, watchdog: Watchdog::default() }
    }

    /// Another client into the same figures, with connections of its own:
    /// for requests made at once with this one's (a k6 `http.batch`).
    pub fn sibling(&self) -> Client {
        Client::new(self.tally.into.clone(), self.insecure)
    }

    /// Sends `r` and reads its answer; `record`: its phases, bytes and
    /// status go into the run's figures (not a warm-up request).
    pub async fn request(&mut self, r: &Request, record: bool) -> Answer {
        if !self.last.as_ref().is_some_and(|m| m.of(r)) {
            match self.made(r).await {
                Ok(made) => self.last = Some(made),
                Err(error) => return Answer { error: Some(error), ..Answer::default() },
            }
        }
        let made = self.last.as_ref().expect("made above");
        let origin = &mut self.origins[made.origin];
        let head = &made.head;
        let head_request = r.method == "HEAD";
        let mut ph = Phases::default();
        let had_connection = origin.conn.stream.is_some();
        let exchange = exchange(&origin.connector, &mut origin.conn, head, &r.body, head_request, &mut ph);
        let outcome = self.watchdog.limit(r.timeout, exchange).await;
        let connected = !had_connection && origin.conn.stream.is_some();
        if connected {
            self.tally.connections_opened += 1;
        }
        let timings = Timings {
            connecting: ph.connecting,
            tls_handshaking: ph.tls,
            sending: ph.sending,
            waiting: ph.waiting,
            receiving: ph.receiving,
        };
        let error = match outcome {
            Some(Ok(resp)) => {
                if record {
                    self.tally.record(&ph, connected, resp.status, origin.conn.write.len() as u64, resp.wire_bytes);
                }
                if !resp.keep_alive {
                    origin.conn.stream = None;
                }
                let body = &origin.conn.body;
                return Answer {
                    status: resp.status,
                    body: body.kept().to_vec(),
                    cut: !body.whole(),
                    headers: std::mem::take(&mut origin.conn.head.headers),
                    timings,
                    error: None,
                };
            }
            Some(Err(f)) => {
                let e = classify(f);
                format!("{}: {}", e.class, e.message)
            }
            None => format!("timeout: no complete response within {:?} (params.timeout)", r.timeout),
        };
        // Whatever state the connection is in, it cannot carry the next request.
        origin.conn.stream = None;
        Answer { timings, error: Some(error), ..Answer::default() }
    }
}

impl Client {
    /// The head of `r`, and its origin's place (resolved on its first
    /// request); or why there is none, as the answer's error.
    async fn made(&mut self, r: &Request) -> Result<Made, String> {
        let endpoint = Endpoint::parse(&r.url, "url").map_err(|e| format!("invalid URL: {e}"))?;
        let origin = origin(&mut self.origins, self.insecure, &endpoint).await.map_err(|e| format!("{e:#}"))?;
        let head = RequestHead::new(&r.method, &endpoint.path, &endpoint.authority, &r.headers, false, r.has_body);
        Ok(Made {
            method: r.method.clone(),
            url: r.url.clone(),
            headers: r.headers.clone(),
            has_body: r.has_body,
            origin,
            head,
        })
    }
}

/// The place of the origin of `e` among `origins`, resolved on its first request.
async fn origin(origins: &mut Vec<Origin>, insecure: bool, e: &Endpoint) -> anyhow::Result<usize> {
    let key = (e.tls, e.host.clone(), e.port);
    if let Some(i) = origins.iter().position(|o| o.key == key) {
        return Ok(i);
    }
    let tls = if e.tls { Some(conn::tls_connector(insecure, &e.redacted)?) } else { None };
    let refused = "is the server running? check the host and port in the URL";
    let connector = Connector::resolve(&e.host, e.port, tls, &e.redacted, refused).await?;
    let head = Kept { keep_headers: true, ..Kept::default() };
    let conn = Conn { body: Body::keeping(BODY_CAP), head, ..Default::default() };
    origins.push(Origin { key, connector, conn });
    Ok(origins.len() - 1)
}

/// One request and its response on `c` (a connection opened first if it
/// has none), each phase timed into `ph`.
pub(super) async fn exchange(
    connector: &Connector,
    c: &mut Conn,
    head: &RequestHead,
    body: &[u8],
    head_request: bool,
    ph: &mut Phases,
) -> Result<super::wire::Response, Failure> {
    if c.stream.is_none() {
        let (s, connecting, tls) = connector.connect().await.map_err(Failure::Connect)?;
        ph.connecting = connecting;
        ph.tls = tls;
        c.open(s);
    }
    let (r, (sending, sent)) = c.round_trip(head, body, head_request).await?;
    let done = Instant::now();
    ph.sending = sent - sending;
    ph.waiting = r.first_byte.saturating_duration_since(sent);
    ph.receiving = done.saturating_duration_since(r.first_byte.max(sent));
    Ok(r)
}
