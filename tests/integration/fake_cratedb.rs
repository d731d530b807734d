//! A fake CrateDB node: a loopback TCP responder that answers `POST /_sql`
//! in the shapes CrateDB answers (as `src/driver/cratedb_http/response.rs`
//! parses them), and that goes away on cue.
//!
//! A fake, not a database: a CrateDB node cannot run in CI, and the case
//! its tests check is dbload's side of "a node goes away mid-run" (moving
//! to the next host of the URL, counting what was acknowledged), which
//! needs a node that leaves at a known request. It stores nothing: the
//! nodes of a [`Cluster`] count the rows of the bulk inserts they
//! acknowledged and answer `count(*)` with that number.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::{json, Value};

/// The statement the query tests run: an operation, like a bulk insert.
pub const QUERY: &str = "SELECT 42";

/// A select the nodes refuse as CrateDB refuses a syntax error (code 4000).
pub const SYNTAX_ERROR: &str = "SELEC 1";

/// What the nodes share: the rows acknowledged by any of them.
#[derive(Default)]
pub struct Cluster {
    rows: AtomicU64,
}

impl Cluster {
    pub fn rows(&self) -> u64 {
        self.rows.load(Ordering::SeqCst)
    }
}

/// How a node goes away at its operation number `at` (bulk inserts and
/// [`QUERY`]s count; dbload's own statements do not).
#[derive(Clone, Copy)]
pub enum Leaves {
    /// It reads that request and closes every connection without an
    /// answer (a crash mid-request: the request may or may not have run).
    MidRequest(u64),
    /// It answers that request, then closes every connection and stops
    /// listening (a node shut down between two requests).
    AfterAnswer(u64),
}

/// One node listening on 127.0.0.1; stopped on drop.
pub struct Node {
    /// `127.0.0.1:PORT`.
    pub addr: String,
    state: Arc<State>,
    acceptor: Option<std::thread::JoinHandle<()>>,
}

struct State {
    cluster: Arc<Cluster>,
    leaves: Option<Leaves>,
    /// Operations received (answered or not), and answered.
    received: AtomicU64,
    answered: AtomicU64,
    gone: AtomicBool,
    /// Every connection accepted, to close them all when the node goes away.
    streams: Mutex<Vec<TcpStream>>,
}

impl Node {
    pub fn start(cluster: &Arc<Cluster>, leaves: Option<Leaves>) -> Result<Node> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        // Polled, so the acceptor can notice that the node went away and
        // stop listening (new connections are then refused).
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?.to_string();
        let state = Arc::new(State {
            cluster: cluster.clone(),
            leaves,
            received: AtomicU64::new(0),
            answered: AtomicU64::new(0),
            gone: AtomicBool::new(false),
            streams: Mutex::new(Vec::new()),
        });
        let accepting = state.clone();
        let acceptor = std::thread::spawn(move || {
            while !accepting.gone.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let _ = stream.set_nonblocking(false);
                        if let Ok(clone) = stream.try_clone() {
                            accepting.streams.lock().unwrap().push(clone);
                        }
                        let serving = accepting.clone();
                        std::thread::spawn(move || serving.serve(stream));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Ok(Node { addr, state, acceptor: Some(acceptor) })
    }

    /// Operations it received, and those it answered.
    pub fn operations(&self) -> (u64, u64) {
        (self.state.received.load(Ordering::SeqCst), self.state.answered.load(Ordering::SeqCst))
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.state.leave();
        let _ = self.acceptor.take().map(|t| t.join());
    }
}

impl State {
    /// Answers the requests of one connection until it closes or the node goes away.
    fn serve(&self, stream: TcpStream) {
        let Ok(mut out) = stream.try_clone() else { return };
        let mut input = BufReader::new(stream);
        while let Ok(Some(body)) = read_request(&mut input) {
            let (answer, after) = self.answer(&body);
            let Some(answer) = answer else { return self.leave() };
            // In one write: head and body in two would wait on Nagle and delayed ACKs.
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
                answer.len()
            );
            if out.write_all(response.as_bytes()).is_err() {
                return;
            }
            if after {
                return self.leave();
            }
        }
    }

    /// The answer to one request body (`None`: none, the node goes away),
    /// and whether the node goes away once it is sent.
    fn answer(&self, body: &[u8]) -> (Option<String>, bool) {
        let request: Value = serde_json::from_slice(body).unwrap_or_default();
        let stmt = request["stmt"].as_str().unwrap_or_default();
        let bulk = request["bulk_args"].as_array().map(Vec::len);
        let mut after = false;
        if bulk.is_some() || stmt == QUERY {
            let n = self.received.fetch_add(1, Ordering::SeqCst) + 1;
            match self.leaves {
                Some(Leaves::MidRequest(at)) if at == n => return (None, true),
                Some(Leaves::AfterAnswer(at)) => after = at == n,
                _ => {}
            }
            self.answered.fetch_add(1, Ordering::SeqCst);
        }
        let rows = |rows: Value| json!({"cols": ["x"], "rows": rows, "rowcount": 1, "duration": 0.25});
        if stmt.contains(SYNTAX_ERROR) {
            let error = json!({"message": "SQLParseException[line 1:1: mismatched input 'SELEC']", "code": 4000});
            return (Some(json!({ "error": error }).to_string()), after);
        }
        let answer = match bulk {
            Some(n) => {
                self.cluster.rows.fetch_add(n as u64, Ordering::SeqCst);
                json!({"cols": [], "duration": 0.5, "results": vec![json!({"rowcount": 1}); n]})
            }
            None if stmt.starts_with("SELECT version") => rows(json!([["5.10.4"]])),
            None if stmt.starts_with("SELECT count(*) FROM information_schema") => rows(json!([[0]])),
            None if stmt.starts_with("SELECT count(*)") => rows(json!([[self.cluster.rows()]])),
            None if stmt == QUERY => rows(json!([[42]])),
            None if stmt.starts_with("SELECT") => json!({"cols": ["x"], "rows": [], "rowcount": 0, "duration": 0.25}),
            // DDL, REFRESH TABLE
            None => json!({"cols": [], "rows": [[]], "rowcount": 1, "duration": 0.25}),
        };
        (Some(answer.to_string()), after)
    }

    /// Closes every connection and stops listening.
    fn leave(&self) {
        self.gone.store(true, Ordering::SeqCst);
        for s in self.streams.lock().unwrap().iter() {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

/// Reads one request; returns its body, or `None` at the end of the connection.
/// A body comes with its length (dbload's own statements) or in chunks (batches).
fn read_request(input: &mut BufReader<TcpStream>) -> Result<Option<Vec<u8>>> {
    let mut length = 0;
    let mut chunked = false;
    let mut first = true;
    loop {
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        if line == "\r\n" && !first {
            break;
        }
        first = false;
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().context("Content-Length")?;
            }
            chunked |= name.eq_ignore_ascii_case("transfer-encoding") && value.trim() == "chunked";
        }
    }
    if !chunked {
        let mut body = vec![0; length];
        input.read_exact(&mut body)?;
        return Ok(Some(body));
    }
    let mut body = Vec::new();
    loop {
        let mut line = String::new();
        input.read_line(&mut line)?;
        let size = usize::from_str_radix(line.trim_end(), 16).context("chunk size")?;
        // The chunk's data and its CRLF; the last chunk (size 0) has no trailers here.
        let start = body.len();
        body.resize(start + size + 2, 0);
        input.read_exact(&mut body[start..])?;
        body.truncate(start + size);
        if size == 0 {
            return Ok(Some(body));
        }
    }
}
