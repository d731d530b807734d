//! dbload's own PostgreSQL connection, for the measured path: statements
//! (prepared, pipelined) sent and answered on the worker's own task, with
//! one read and one write buffer reused for every message, no channel and
//! no allocation per statement. tokio-postgres stays for the control path
//! (admin, catalog, DDL, server cost, export cursors), where a query's cost
//! does not matter; both reach the server through the one [`PgTarget`].
//!
//! Why its own: tokio-postgres sends every query through a channel into its
//! connection task and answers it on a channel of its own, and the wake-ups
//! between the two tasks cost the client more CPU per `select 1` than
//! pgbench spends in all; and it cannot have several statements in flight
//! on one connection, which pgbench's pipelines do. The messages and the
//! SCRAM exchange are `postgres-protocol`'s (the rust-postgres project's
//! codec); what is written here is the connection's state, its buffers and
//! its pipeline. Its parts: the login (`auth`), the socket and TLS
//! (`stream`), the cancel request (`cancel`), COPY without the wait (`copy`).
//!
//! Measured (release build, one connection over loopback TCP to the
//! throwaway server, `select 1` prepared, 6 alternating rounds against
//! pgbench `-M prepared -c 1 -j 1`, load average 7-8 from other builds;
//! client CPU from getrusage / `/usr/bin/time`, whole process): one at a
//! time, median 1.34 µs user + 4.66 µs sys per query against pgbench's
//! 1.87 + 5.08 (rate ratio median 1.19, 0.99-1.23); 16 piped with one Sync
//! ([`Wire::pipe`], [`Wire::sync`]) against pgbench's `\startpipeline` script
//! of 16, median 0.32 + 0.46 µs against 0.69 + 0.42 (rate ratio median
//! 1.13, 0.69-2.15 under that load). With a Sync per statement and a refill
//! per answer, 16 in flight cost 4-5.5 µs per query: the server sends each
//! answer on its own, and the client paid a write and a read for each.

mod auth;
mod cancel;
mod copy;
mod stream;

use std::collections::{HashMap, VecDeque};
use std::io;
use std::time::Duration;

use bytes::{Buf, BytesMut};
use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::{self, Header, Message};
use postgres_protocol::message::frontend;
use postgres_types::{BorrowToSql, ToSql, Type};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub use self::cancel::Cancel;
use self::stream::{Endpoint, Session, Stream, Tls};
use super::{PgTarget, SslMode};
use crate::error::target;
use crate::op::{ErrorCode, OpError};

/// The largest message the server may send: PostgreSQL's own limit on a
/// message (1 GiB). A longer length is a broken stream, not a message to
/// make room for.
const MAX_MESSAGE: usize = 1 << 30;

/// The values of a statement without parameters (`BEGIN`, `COMMIT`).
pub const NO_VALUES: &[i32] = &[];

/// A connection of dbload's own, logged in and idle between statements.
pub struct Wire {
    stream: Stream,
    /// What the server sent and was not read yet.
    read: BytesMut,
    /// What is to be sent: statements wait here until [`Wire::flush`].
    write: BytesMut,
    /// Statements sent (or buffered) whose answer was not read yet, oldest
    /// first, each with whether a Sync follows it (it ends its pipeline:
    /// its answer ends with ReadyForQuery). Kept, not reallocated, between
    /// statements.
    in_flight: VecDeque<bool>,
    /// Statements piped since the last Sync ([`Wire::pipe`]).
    unsynced: usize,
    /// The error that aborted the oldest pipeline in flight: the server
    /// skips its statements up to the Sync, and each answers it.
    aborted: Option<String>,
    /// How to cancel what this connection runs: where it went, in TLS or
    /// not, and the key its backend gave ([`Wire::canceller`]).
    cancel: Cancel,
    /// The server's parameters as it last reported them (ParameterStatus:
    /// at login, and whenever a `SET` changes one it reports).
    parameters: HashMap<String, String>,
    /// Notices the server sent (warnings, `RAISE NOTICE`): counted, never
    /// an error of the statement they came with.
    notices: u64,
    /// Whether the login was bound to the TLS session (SCRAM-SHA-256-PLUS).
    channel_bound: bool,
}

/// A statement prepared on one connection, by name, with the types of its
/// parameters as the server inferred them; or, unnamed ([`Wire::describe`]),
/// a statement parsed again at each execution.
#[derive(Debug, Clone)]
pub struct Prepared {
    name: String,
    params: Vec<Type>,
    /// For an unnamed statement, its text: sent in a Parse before each Bind.
    parse: Option<Box<str>>,
}

impl Prepared {
    /// The types of its `$1`, `$2`, ... as the server inferred them.
    pub fn params(&self) -> &[Type] {
        &self.params
    }
}

/// Whether a COPY's data waits for the server's CopyInResponse
/// ([`Wire::copy_pieces`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answered {
    /// Sent right behind the statement: PostgreSQL takes it.
    NotAwaited,
    /// Sent once the server answered the statement: for servers that do
    /// not take data before (a pooler, a wire-compatible engine).
    Awaited,
}

/// What a statement failed with, in the loop's terms: the server's error
/// (by SQLSTATE, as pgbench counts them) or a lost connection.
fn db_error(body: &backend::ErrorResponseBody) -> OpError {
    let mut code = String::new();
    let mut message = String::new();
    let mut fatal = false;
    let mut fields = body.fields();
    while let Ok(Some(field)) = fields.next() {
        let value = String::from_utf8_lossy(field.value_bytes());
        match field.type_() {
            b'C' => code = value.into_owned(),
            b'M' => message = value.into_owned(),
            // The non-localized severity: FATAL and PANIC end the session.
            b'V' => fatal = matches!(&*value, "FATAL" | "PANIC"),
            _ => {}
        }
    }
    let class = format!("SQLSTATE {code}");
    OpError { fatal, code: Some(ErrorCode::Sqlstate(code)), ..OpError::new(class, message) }
}

fn lost(e: io::Error) -> OpError {
    OpError::fatal("connection lost", e.to_string())
}

fn broken(what: impl std::fmt::Display) -> OpError {
    OpError::fatal("protocol error", what.to_string())
}

impl Wire {
    /// Connects to `target`'s first host that answers and logs in, within
    /// its `connect_timeout` per host (the whole of it: the TCP connect, the
    /// TLS handshake, the startup and the login, as [`PgTarget::connect`]
    /// bounds it). TLS as its `sslmode` says (libpq's meanings).
    pub async fn connect(pg: &PgTarget) -> anyhow::Result<Wire> {
        let config = pg.config();
        let per_host = config.get_connect_timeout().copied().unwrap_or(Duration::from_secs(10));
        let tls = match (pg.tls_config(), pg.ssl_mode()) {
            (None, _) => Tls::Off,
            (Some(config), SslMode::Prefer) => Tls::Prefer(config.clone()),
            (Some(config), mode) => Tls::Require(config.clone(), mode),
        };
        let ports = config.get_ports();
        let addrs = config.get_hostaddrs();
        let mut last = None;
        for (i, host) in config.get_hosts().iter().enumerate() {
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            let to = Endpoint { host: host.clone(), addr: addrs.get(i).copied(), port };
            match tokio::time::timeout(per_host, Wire::connect_to(pg, to, &tls, per_host)).await {
                Ok(Ok(wire)) => return Ok(wire),
                Ok(Err(e)) => last = Some(e),
                Err(_) => {
                    last = Some(target(format!(
                        "cannot connect to {}: no answer to the startup and login within connect_timeout ({} s): \
                         is a PostgreSQL server listening there? check the host and port, or raise \
                         connect_timeout (in the URL, or PGCONNECT_TIMEOUT)",
                        pg.redacted(),
                        per_host.as_secs_f64()
                    )))
                }
            }
        }
        Err(last.unwrap_or_else(|| target(format!("cannot connect to {}: no host to connect to", pg.redacted()))))
    }

    async fn connect_to(pg: &PgTarget, to: Endpoint, tls: &Tls, timeout: Duration) -> anyhow::Result<Wire> {
        let opened = stream::open(&to, tls, pg.redacted()).await?;
        // The cancel request goes where this connection went, encrypted if
        // this one is (libpq's rule), whatever the server says then.
        let tls = match (tls, &opened.session) {
            (Tls::Prefer(config), Session::Tls(_)) => Tls::Require(config.clone(), SslMode::Require),
            (Tls::Prefer(_), Session::Plain) => Tls::Off,
            (tls, _) => tls.clone(),
        };
        let cancel = Cancel::new(to, tls, timeout, pg.redacted());
        let mut wire = Wire::over(opened.stream, cancel);
        auth::start(&mut wire, pg, opened.session).await?;
        Ok(wire)
    }

    /// A connection over `stream`, before its startup.
    fn over(stream: Stream, cancel: Cancel) -> Wire {
        Wire {
            stream,
            read: BytesMut::with_capacity(8192),
            write: BytesMut::with_capacity(8192),
            in_flight: VecDeque::with_capacity(64),
            unsynced: 0,
            aborted: None,
            cancel,
            parameters: HashMap::new(),
            notices: 0,
            channel_bound: false,
        }
    }

    /// What cancels the statement this connection runs: cheap to clone and
    /// `Send`, so a deadline or Ctrl-C elsewhere can use it while this
    /// connection waits for the answer.
    pub fn canceller(&self) -> Cancel {
        self.cancel.clone()
    }

    /// The server's parameter `name` as it last reported it
    /// (`server_version`, `application_name`, `TimeZone`, ...).
    pub fn parameter(&self, name: &str) -> Option<&str> {
        self.parameters.get(name).map(String::as_str)
    }

    /// How many notices the server sent on this connection.
    pub fn notices(&self) -> u64 {
        self.notices
    }

    /// Whether the login was bound to the TLS session: SCRAM-SHA-256-PLUS
    /// with the server certificate's hash (tls-server-end-point), so a man
    /// in the middle with another certificate could not have logged in.
    pub fn channel_bound(&self) -> bool {
        self.channel_bound
    }

    /// The backend's process id and secret key, for a cancel request.
    pub fn cancel_key(&self) -> (i32, i32) {
        self.cancel.key
    }

    /// Prepares `sql` as statement `name` (Parse, Describe, Sync), the
    /// parameters' types left to the server to infer.
    pub async fn prepare(&mut self, name: &str, sql: &str) -> Result<Prepared, OpError> {
        frontend::parse(name, sql, std::iter::empty(), &mut self.write).map_err(broken)?;
        frontend::describe(b'S', name, &mut self.write).map_err(broken)?;
        frontend::sync(&mut self.write);
        self.flush().await?;
        let mut params = Vec::new();
        let mut failed = None;
        loop {
            match self.message().await? {
                Message::ParameterDescription(body) => {
                    let mut oids = body.parameters();
                    while let Some(oid) = oids.next().map_err(broken)? {
                        params.push(Type::from_oid(oid).unwrap_or(Type::UNKNOWN));
                    }
                }
                Message::ErrorResponse(body) => failed = Some(db_error(&body)),
                Message::ReadyForQuery(_) => break,
                _ => {}
            }
        }
        match failed {
            Some(e) => Err(e),
            None => Ok(Prepared { name: name.to_string(), params, parse: None }),
        }
    }

    /// Learns the types of `sql`'s parameters (as [`Wire::prepare`] does, on
    /// the unnamed statement) for a statement parsed again at each execution:
    /// the extended protocol unprepared (pgbench's `-M extended`), where the
    /// server parses and plans every execution, in the same write as its
    /// Bind and Execute.
    pub async fn describe(&mut self, sql: &str) -> Result<Prepared, OpError> {
        let described = self.prepare("", sql).await?;
        Ok(Prepared { parse: Some(sql.into()), ..described })
    }

    /// Adds one execution of `statement` with `values` to what is to be sent
    /// (Bind, Execute, Sync: each its own transaction, so an error fails
    /// this statement alone); [`Wire::flush`] sends it, [`Wire::answer`]
    /// reads its answer. Results come back in binary and are not decoded:
    /// the measured path counts rows, it does not read them.
    pub fn push<T: ToSql>(&mut self, statement: &Prepared, values: &[T]) -> Result<(), OpError> {
        self.pipe(statement, values)?;
        self.sync();
        Ok(())
    }

    /// Adds one execution of `statement` with `values` to the pipeline,
    /// without a Sync (Bind, Execute): pgbench's statements between
    /// `\startpipeline` and `\syncpipeline` or `\endpipeline`. The server
    /// answers each at once; they are one transaction up to the next
    /// [`Wire::sync`], and after an error it skips the rest up to it (each
    /// answers "pipeline aborted"). The server sends its answers only at
    /// the Sync: one write and one read for the whole pipeline, and no
    /// answer to wait for before it.
    pub fn pipe<T: ToSql>(&mut self, statement: &Prepared, values: &[T]) -> Result<(), OpError> {
        self.pipe_values(statement, values.iter())
    }

    /// [`Wire::pipe`] for values given as an iterator (ingest's rows, a
    /// batch's columns as arrays), so a batch's parameters are bound as
    /// they are encoded, with no list of them made per statement. Each
    /// value in the format it asks for (`ToSql::encode_format`): text
    /// where its type is not the column's, as tokio-postgres binds it. A
    /// value that cannot be converted fails this statement alone, naming
    /// its parameter: nothing of it is left to send.
    pub fn pipe_values<P: BorrowToSql>(
        &mut self,
        statement: &Prepared,
        values: impl ExactSizeIterator<Item = P> + Clone,
    ) -> Result<(), OpError> {
        if values.len() != statement.params.len() {
            return Err(OpError::new(
                "client error",
                format!("{} values for {} parameters", values.len(), statement.params.len()),
            ));
        }
        let unsent = self.write.len();
        if let Some(sql) = &statement.parse {
            frontend::parse("", sql, std::iter::empty(), &mut self.write).map_err(broken)?;
        }
        let formats = values.clone().zip(&statement.params).map(|(v, ty)| v.borrow_to_sql().encode_format(ty) as i16);
        let mut at = 0;
        let bound = frontend::bind(
            "",
            &statement.name,
            formats,
            values.zip(&statement.params),
            |(value, ty), out| {
                at += 1;
                match value.borrow_to_sql().to_sql_checked(ty, out)? {
                    postgres_types::IsNull::Yes => Ok(postgres_protocol::IsNull::Yes),
                    postgres_types::IsNull::No => Ok(postgres_protocol::IsNull::No),
                }
            },
            Some(1),
            &mut self.write,
        );
        if let Err(e) = bound {
            self.write.truncate(unsent);
            return Err(match e {
                frontend::BindError::Conversion(e) => OpError::new("client error", format!("parameter ${at}: {e}")),
                frontend::BindError::Serialization(e) => broken(e),
            });
        }
        frontend::execute("", 0, &mut self.write).map_err(broken)?;
        self.in_flight.push_back(false);
        self.unsynced += 1;
        Ok(())
    }

    /// Closes `statement` on the server (Close, Sync), freeing what it
    /// holds there: for a connection that keeps a bounded set of prepared
    /// statements and replaces the oldest. Call it with nothing in flight.
    pub async fn close(&mut self, statement: Prepared) -> Result<(), OpError> {
        frontend::close(b'S', &statement.name, &mut self.write).map_err(broken)?;
        frontend::sync(&mut self.write);
        self.sent_whole();
        self.flush().await?;
        self.answer().await.map(drop)
    }

    /// Ends the pipeline of statements piped since the last Sync (none: a
    /// no-op).
    pub fn sync(&mut self) {
        if self.unsynced == 0 {
            return;
        }
        frontend::sync(&mut self.write);
        if let Some(last) = self.in_flight.back_mut() {
            *last = true;
        }
        self.unsynced = 0;
    }

    /// Counts a statement sent with its own end (a simple Query, a COPY),
    /// answered up to its ReadyForQuery.
    fn sent_whole(&mut self) {
        self.in_flight.push_back(true);
    }

    /// Sends what [`Wire::push`] buffered.
    pub async fn flush(&mut self) -> Result<(), OpError> {
        self.stream.write_all(&self.write).await.map_err(lost)?;
        self.write.clear();
        Ok(())
    }

    /// Statements pushed whose answer was not read yet.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Whether the oldest statement in flight is the last of its pipeline
    /// (a Sync follows it): its answer ends the pipeline's transaction.
    pub fn ends_pipeline(&self) -> bool {
        self.in_flight.front() == Some(&true)
    }

    /// Whether the oldest answer in flight is already read whole (up to its
    /// ReadyForQuery), so [`Wire::answer`] returns it without waiting. A
    /// pipeline reads these before it refills: one write then carries as
    /// many statements as answers came in one read, as pgbench's pipelines
    /// do, where refilling after each answer costs a write per statement.
    pub fn answer_buffered(&self) -> bool {
        let Some(&synced) = self.in_flight.front() else { return false };
        if self.aborted.is_some() && !synced {
            return true;
        }
        let mut rest = &self.read[..];
        while let Ok(Some(header)) = Header::parse(rest) {
            let len = header.len() as usize + 1;
            if rest.len() < len {
                return false;
            }
            match header.tag() {
                backend::READY_FOR_QUERY_TAG => return true,
                b'C' | backend::ERROR_RESPONSE_TAG if !synced => return true,
                _ => rest = &rest[len..],
            }
        }
        false
    }

    /// Reads the answer to the oldest statement in flight: the rows it
    /// returned or affected, or its error. A statement that ends its
    /// pipeline is read up to the ReadyForQuery of its Sync.
    pub async fn answer(&mut self) -> Result<u64, OpError> {
        let Some(&synced) = self.in_flight.front() else {
            return Err(OpError::new("client error", "no statement in flight to answer"));
        };
        if let Some(cause) = &self.aborted {
            let skipped = OpError::new(
                "pipeline aborted",
                format!("not executed: an earlier statement of its pipeline failed ({cause})"),
            );
            if synced {
                self.ready().await?;
                self.aborted = None;
            }
            self.in_flight.pop_front();
            return Err(skipped);
        }
        let mut rows = 0;
        let mut failed: Option<OpError> = None;
        loop {
            let (tag, len) = match self.header().await {
                Ok(header) => header,
                // A server that ends the session says why first (FATAL
                // 57P01 when terminated): that is the statement's error.
                Err(lost) => return Err(failed.map_or(lost, |e| OpError { fatal: true, ..e })),
            };
            match tag {
                // Skipped without being parsed: the hot path's messages.
                backend::DATA_ROW_TAG | b'2' | b'1' | backend::NO_DATA_TAG | backend::EMPTY_QUERY_RESPONSE_TAG => {
                    self.read.advance(len)
                }
                // Read in place: parsing it as a Message splits the buffer
                // off, which makes it shared and costs two atomic counts.
                backend::COMMAND_COMPLETE_TAG => {
                    rows = affected(&self.read[5..len]);
                    self.read.advance(len);
                    if !synced {
                        self.in_flight.pop_front();
                        return Ok(rows);
                    }
                }
                backend::READY_FOR_QUERY_TAG => {
                    self.read.advance(len);
                    self.in_flight.pop_front();
                    return failed.map_or(Ok(rows), Err);
                }
                // Notices, parameter changes and notifications are not the statement's answer.
                _ => match self.parse()? {
                    Message::ErrorResponse(body) if !synced => {
                        let e = db_error(&body);
                        self.aborted = Some(e.class.clone());
                        self.in_flight.pop_front();
                        return Err(e);
                    }
                    Message::ErrorResponse(body) => failed = Some(db_error(&body)),
                    other => self.aside(other),
                },
            }
        }
    }

    /// Reads up to the next ReadyForQuery: the end of a pipeline whose
    /// statements the server skipped after an error.
    async fn ready(&mut self) -> Result<(), OpError> {
        loop {
            let (tag, len) = self.header().await?;
            if tag == backend::READY_FOR_QUERY_TAG {
                self.read.advance(len);
                return Ok(());
            }
            let message = self.parse()?;
            self.aside(message);
        }
    }

    /// Keeps what the server says beside the answers: its parameters as
    /// they change, and a count of its notices. Anything else is dropped.
    fn aside(&mut self, message: Message) {
        match message {
            Message::ParameterStatus(body) => {
                if let (Ok(name), Ok(value)) = (body.name(), body.value()) {
                    self.parameters.insert(name.to_owned(), value.to_owned());
                }
            }
            Message::NoticeResponse(_) => self.notices += 1,
            _ => {}
        }
    }

    /// Sends `sql` with the simple protocol (one or several statements) and
    /// reads its answer: the rows of its last statement, or its error.
    pub async fn simple(&mut self, sql: &str) -> Result<u64, OpError> {
        frontend::query(sql, &mut self.write).map_err(broken)?;
        self.sent_whole();
        self.flush().await?;
        self.answer().await
    }

    /// The next whole message's tag and length (with its tag), read into
    /// the buffer; the message stays there. It reads what the socket holds
    /// before it waits on the runtime ([`stream::read_now`]): most answers
    /// are there by the time they are asked for.
    async fn header(&mut self) -> Result<(u8, usize), OpError> {
        loop {
            if let Some(header) = Header::parse(&self.read).map_err(broken)? {
                let len = header.len() as usize + 1;
                if len > MAX_MESSAGE {
                    return Err(broken(format!("a message of {len} bytes, past PostgreSQL's 1 GiB")));
                }
                if self.read.len() >= len {
                    return Ok((header.tag(), len));
                }
                self.read.reserve(len - self.read.len());
            }
            let read = match stream::read_now(&self.stream, &mut self.read) {
                // Interrupted too: a non-blocking recv should not be, but
                // the runtime's read is the one that knows what to do.
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {
                    self.stream.read_buf(&mut self.read).await
                }
                now => now,
            };
            if read.map_err(lost)? == 0 {
                return Err(OpError::fatal("connection lost", "the server closed the connection"));
            }
        }
    }

    /// The next whole message, parsed (it is in the buffer: see [`Wire::header`]).
    fn parse(&mut self) -> Result<Message, OpError> {
        Message::parse(&mut self.read).map_err(broken)?.ok_or_else(|| broken("a message cut short"))
    }

    /// The next message, read and parsed, past the server's parameters
    /// and notices (kept by [`Wire::aside`]).
    async fn message(&mut self) -> Result<Message, OpError> {
        loop {
            self.header().await?;
            match self.parse()? {
                message @ (Message::ParameterStatus(_) | Message::NoticeResponse(_)) => self.aside(message),
                message => return Ok(message),
            }
        }
    }
}

/// The rows a CommandComplete's tag says (`SELECT 3`, `INSERT 0 5`, `COPY
/// 100`, ending in its NUL), 0 for those without (`BEGIN`).
fn affected(tag: &[u8]) -> u64 {
    let tag = tag.strip_suffix(b"\0").unwrap_or(tag);
    let count = tag.rsplit(|&b| b == b' ').next().unwrap_or_default();
    std::str::from_utf8(count).ok().and_then(|n| n.parse().ok()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use proptest::prelude::*;
    use tokio::net::UnixStream;
    use tokio_postgres::config::Host;
    use tokio_util::either::Either;

    use super::*;
    use crate::driver::pg::tests::{block_on, no_env};

    use crate::driver::tls::tests::{write_for_server, TlsServer};
    use crate::error::{exit, exit_code};
    use crate::throwaway::{LocalOptions, LocalPostgres};

    #[test]
    fn command_tags_give_their_rows() {
        assert_eq!(affected(b"SELECT 3\0"), 3);
        assert_eq!(affected(b"INSERT 0 5\0"), 5);
        assert_eq!(affected(b"COPY 100\0"), 100);
        assert_eq!(affected(b"BEGIN\0"), 0);
        assert_eq!(affected(b"SELECT 3"), 3, "a tag without its NUL");
        assert_eq!(affected(b""), 0);
    }

    /// A connection over one end of a Unix socket pair (its cancel goes
    /// nowhere), and the other end, which plays the server.
    fn over_a_socket_pair() -> (Wire, UnixStream) {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let nowhere = Endpoint { host: Host::Unix(PathBuf::from("/nonexistent")), addr: None, port: 0 };
        let cancel = Cancel::new(nowhere, Tls::Off, Duration::from_secs(1), "test");
        (Wire::over(Either::Left(Either::Right(ours)), cancel), theirs)
    }

    /// Reads `bytes` as a server's answers, with both readers (the hot
    /// path's, which skips rows unparsed, and the parsing one), until the
    /// stream ends: every step is a message or an error.
    async fn read_all(bytes: &[u8]) {
        for parsing in [false, true] {
            let (mut wire, mut theirs) = over_a_socket_pair();
            theirs.write_all(bytes).await.unwrap();
            drop(theirs);
            let reading = async {
                loop {
                    let step = if parsing { wire.message().await.map(drop) } else { wire.answer().await.map(drop) };
                    if step.is_err() {
                        return;
                    }
                }
            };
            tokio::time::timeout(Duration::from_secs(5), reading).await.expect("the reader hung");
        }
    }

    /// Frames of a tag and a body, as the server sends them.
    fn frames(messages: &[(u8, Vec<u8>)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (tag, body) in messages {
            out.push(*tag);
            out.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
            out.extend_from_slice(body);
        }
        out
    }

    /// An answer is buffered once its end is read: ReadyForQuery for a
    /// statement synced alone, CommandComplete for one inside a pipeline.
    #[test]
    fn an_answer_is_buffered_once_its_end_is_read() {
        block_on(async {
            let (mut wire, theirs) = over_a_socket_pair();
            // Two statements in one pipeline, then one synced alone.
            wire.in_flight.extend([false, true, true]);
            let row = frames(&[(b'2', vec![]), (b'D', vec![0, 1, 0, 0, 0, 1, b'1']), (b'C', b"SELECT 1\0".to_vec())]);
            let ready = frames(&[(b'Z', b"I".to_vec())]);
            let send = |bytes: &[u8]| theirs.try_write(bytes).unwrap();
            send(&row);
            assert!(!wire.answer_buffered(), "nothing read yet");
            wire.stream.read_buf(&mut wire.read).await.unwrap();
            assert!(wire.answer_buffered(), "inside a pipeline: CommandComplete ends it");
            assert_eq!(wire.answer().await.unwrap(), 1);
            send(&[row.as_slice(), ready.as_slice()].concat());
            wire.stream.read_buf(&mut wire.read).await.unwrap();
            assert!(wire.answer_buffered());
            assert_eq!(wire.answer().await.unwrap(), 1);
            send(&row);
            wire.stream.read_buf(&mut wire.read).await.unwrap();
            assert!(!wire.answer_buffered(), "synced alone: no ReadyForQuery yet");
            send(&ready);
            wire.stream.read_buf(&mut wire.read).await.unwrap();
            assert!(wire.answer_buffered());
            assert_eq!(wire.answer().await.unwrap(), 1);
            assert!(!wire.answer_buffered(), "nothing in flight");
        });
    }

    /// An answer that is already in the socket when the statement is
    /// answered is read at once, without waiting for the runtime to say the
    /// socket is readable: that wait is what made `select 1` cost more
    /// client CPU than pgbench's (see [`Wire::header`]). The first poll of
    /// `answer` must finish it, though the runtime has not turned since the
    /// server's bytes arrived.
    #[test]
    fn an_answer_already_in_the_socket_is_read_without_waiting_for_the_runtime() {
        block_on(async {
            let (mut wire, theirs) = over_a_socket_pair();
            let answer = frames(&[
                (b'2', vec![]),
                (b'D', vec![0, 1, 0, 0, 0, 1, b'1']),
                (b'C', b"SELECT 1\0".to_vec()),
                (b'Z', b"I".to_vec()),
            ]);
            for round in 0..3 {
                wire.in_flight.push_back(true);
                theirs.try_write(&answer).unwrap();
                let first_poll = futures_util::poll!(std::pin::pin!(wire.answer()));
                assert!(matches!(first_poll, std::task::Poll::Ready(Ok(1))), "round {round}: {first_poll:?}");
            }
        });
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Any bytes at all: a message or an error, never a panic or a hang.
        #[test]
        fn arbitrary_bytes_are_a_message_or_an_error(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
            block_on(read_all(&bytes));
        }

        /// Well-framed messages of the tags a server sends, with arbitrary
        /// bodies, then arbitrary bytes: each body reaches its parser.
        #[test]
        fn arbitrary_bodies_are_a_message_or_an_error(
            messages in proptest::collection::vec(
                (prop::sample::select(b"123ACDEGHIKNRSTZcdnst".to_vec()), proptest::collection::vec(any::<u8>(), 0..64)),
                0..16,
            ),
            tail in proptest::collection::vec(any::<u8>(), 0..16),
        ) {
            let mut bytes = frames(&messages);
            bytes.extend(tail);
            block_on(read_all(&bytes));
        }
    }

    /// Each login method the server can ask for, by a role of its own and
    /// the pg_hba.conf line that makes the server ask for it: the right
    /// password logs in, a wrong one or none is refused, saying what to check.
    #[test]
    fn each_login_method_logs_in_and_checks_the_password() {
        let files = tempfile::TempDir::new().unwrap();
        // The server account must be able to enter the directory.
        std::fs::set_permissions(files.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let hba = write_for_server(
            files.path(),
            "pg_hba.conf",
            "local all all trust\n\
             host all trusted 127.0.0.1/32 trust\n\
             host all cleartext 127.0.0.1/32 password\n\
             host all hashed 127.0.0.1/32 md5\n\
             host all salted 127.0.0.1/32 scram-sha-256\n\
             host all all 127.0.0.1/32 reject\n",
        );
        let options = LocalOptions {
            extra_settings: vec![("hba_file".into(), hba.display().to_string())],
            ..LocalOptions::default()
        };
        let server = LocalPostgres::start(&options).unwrap();
        let port = server.url().rsplit(':').next().unwrap().split('/').next().unwrap().to_owned();
        let url = |userinfo: &str| format!("postgres://{userinfo}@127.0.0.1:{port}/postgres?sslmode=disable");
        let connect = |url: String| async move { Wire::connect(&PgTarget::from_url(&url, "--url", &no_env)?).await };
        block_on(async {
            let admin = server.target().connect().await.unwrap();
            // md5's role keeps an MD5 hash: with a SCRAM secret the server
            // would answer an md5 line with SCRAM.
            admin
                .batch_execute(
                    "CREATE ROLE trusted LOGIN; CREATE ROLE cleartext LOGIN PASSWORD 'pw-c'; \
                     SET password_encryption = 'md5'; CREATE ROLE hashed LOGIN PASSWORD 'pw-h'; \
                     RESET password_encryption; CREATE ROLE salted LOGIN PASSWORD 'pw-s'",
                )
                .await
                .unwrap();
            let secret = "SELECT left(rolpassword, 3) FROM pg_authid WHERE rolname = 'hashed'";
            assert_eq!(admin.query_one(secret, &[]).await.unwrap().get::<_, String>(0), "md5");
            for (user, password) in
                [("trusted", None), ("cleartext", Some("pw-c")), ("hashed", Some("pw-h")), ("salted", Some("pw-s"))]
            {
                let userinfo = password.map_or(user.to_owned(), |p| format!("{user}:{p}"));
                let mut wire = connect(url(&userinfo)).await.unwrap_or_else(|e| panic!("{user}: {e:#}"));
                assert_eq!(wire.simple("SELECT 1").await.unwrap(), 1, "{user}");
                assert!(!wire.channel_bound(), "{user}: no TLS to bind to");
                if password.is_none() {
                    continue;
                }
                for (userinfo, expected) in [
                    (format!("{user}:wrong"), "(SQLSTATE 28P01): check the password"),
                    (user.to_owned(), "the server asks for a password"),
                ] {
                    let err = connect(url(&userinfo)).await.err().unwrap_or_else(|| panic!("{userinfo} logged in"));
                    assert_eq!(exit_code(&err), exit::TARGET, "{err:#}");
                    let message = err.to_string();
                    assert!(message.contains(expected) && !message.contains("wrong"), "{user}: {message}");
                }
            }
            let err = connect(url("stranger")).await.err().unwrap();
            assert!(err.to_string().contains("(SQLSTATE 28000): check the user name `stranger`"), "{err:#}");
        });
    }

    /// TLS as `sslmode` says, SCRAM-SHA-256-PLUS bound to the session where
    /// there is one, and the cancel request sent the way the connection went.
    #[test]
    fn tls_as_sslmode_says_with_the_login_bound_to_it() {
        let tls = TlsServer::start();
        let ca = tls.ca.display().to_string();
        let verified = format!("sslmode=verify-full&sslrootcert={ca}");
        let url = |query: &str| tls.url("bench:right", "postgres", query);
        // The certificate names 127.0.0.1 only; `localhost` reaches the
        // same address under a name it does not list.
        let by_name = |query: &str| format!("{}&host=localhost&hostaddr=127.0.0.1", url(query));
        let connect = |url: String| async move { Wire::connect(&PgTarget::from_url(&url, "--url", &no_env)?).await };
        block_on(async {
            let admin = tls.server.target().connect().await.unwrap();
            admin.batch_execute("CREATE ROLE bench LOGIN PASSWORD 'right'").await.unwrap();
            for (query, encrypted) in [
                (verified.clone(), true),
                (format!("sslmode=verify-ca&sslrootcert={ca}"), true),
                ("sslmode=require".to_owned(), true),
                ("sslmode=prefer".to_owned(), true),
                ("sslmode=disable".to_owned(), false),
            ] {
                let mut wire = connect(url(&query)).await.unwrap_or_else(|e| panic!("{query}: {e:#}"));
                let ssl = wire.simple("SELECT FROM pg_stat_ssl WHERE pid = pg_backend_pid() AND ssl").await.unwrap();
                assert_eq!((ssl, wire.channel_bound()), (u64::from(encrypted), encrypted), "{query}");
                let sleep = wire.prepare("sleep", "SELECT pg_sleep(30)").await.unwrap();
                wire.push(&sleep, NO_VALUES).unwrap();
                wire.flush().await.unwrap();
                let cancel = wire.canceller();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    cancel.cancel().await.unwrap();
                });
                let e = tokio::time::timeout(Duration::from_secs(5), wire.answer()).await.unwrap().unwrap_err();
                assert_eq!(e.class, "SQLSTATE 57014", "{query}: {e:?}");
            }
            assert!(connect(by_name(&format!("sslmode=verify-ca&sslrootcert={ca}"))).await.is_ok());

            for (url, expected) in [
                (by_name(&verified), "not issued for this host name"),
                (tls.url("bench:wrong", "postgres", "sslmode=require"), "(SQLSTATE 28P01): check the password"),
                (tls.url("bench", "postgres", "sslmode=require"), "the server asks for a password"),
                (tls.url("stranger", "postgres", "sslmode=require"), "(SQLSTATE 28000): check the user name"),
            ] {
                let err = connect(url).await.err().unwrap();
                assert_eq!(exit_code(&err), exit::TARGET, "{err:#}");
                let message = err.to_string();
                assert!(message.contains(expected), "{message}");
                assert!(!message.contains("wrong"), "{message}");
            }
        });
    }
}
