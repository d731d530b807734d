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
//! its pipeline.

mod auth;

use std::io;
use std::time::Duration;

use bytes::{Buf, BytesMut};
use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::{self, Header, Message};
use postgres_protocol::message::frontend;
use postgres_types::{ToSql, Type};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};
use tokio_postgres::config::Host;
use tokio_util::either::Either;

use super::PgTarget;
use crate::error::target;
use crate::op::OpError;

/// The largest message the server may send: PostgreSQL's own limit on a
/// message (1 GiB). A longer length is a broken stream, not a message to
/// make room for.
const MAX_MESSAGE: usize = 1 << 30;

/// The stream a connection reads and writes: TCP or a Unix socket.
type Stream = Either<TcpStream, UnixStream>;

/// A connection of dbload's own, logged in and idle between statements.
pub struct Wire {
    stream: Stream,
    /// What the server sent and was not read yet.
    read: BytesMut,
    /// What is to be sent: statements wait here until [`Wire::flush`].
    write: BytesMut,
    /// The key a cancel request names this connection's backend with.
    key: (i32, i32),
    /// Statements sent (or buffered) whose answer was not read yet.
    in_flight: usize,
}

/// A statement prepared on one connection, by name, with the types of its
/// parameters as the server inferred them.
#[derive(Debug, Clone)]
pub struct Prepared {
    name: String,
    params: Vec<Type>,
}

impl Prepared {
    /// The types of its `$1`, `$2`, ... as the server inferred them.
    pub fn params(&self) -> &[Type] {
        &self.params
    }
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
    OpError { fatal, ..OpError::new(format!("SQLSTATE {code}"), message) }
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
    /// startup and the login, as [`PgTarget::connect`] bounds it).
    pub async fn connect(pg: &PgTarget) -> anyhow::Result<Wire> {
        let config = pg.config();
        if pg.uses_tls() {
            return Err(target(format!(
                "{}: dbload's own connection does not speak TLS yet; use sslmode=disable or a Unix socket",
                pg.redacted()
            )));
        }
        let per_host = config.get_connect_timeout().copied().unwrap_or(Duration::from_secs(10));
        let ports = config.get_ports();
        let mut last = None;
        for (i, host) in config.get_hosts().iter().enumerate() {
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            match tokio::time::timeout(per_host, Wire::connect_to(pg, host, port)).await {
                Ok(Ok(wire)) => return Ok(wire),
                Ok(Err(e)) => last = Some(e),
                Err(_) => {
                    last = Some(target(format!(
                        "cannot connect to {}: no answer to the startup and login within connect_timeout ({} s)",
                        pg.redacted(),
                        per_host.as_secs_f64()
                    )))
                }
            }
        }
        Err(last.unwrap_or_else(|| target(format!("cannot connect to {}: no host to connect to", pg.redacted()))))
    }

    async fn connect_to(pg: &PgTarget, host: &Host, port: u16) -> anyhow::Result<Wire> {
        let refused = |e: io::Error| target(format!("cannot connect to {}: {e}", pg.redacted()));
        let stream = match host {
            Host::Tcp(name) => {
                let tcp = TcpStream::connect((name.as_str(), port)).await.map_err(refused)?;
                // Statements are small and answered one by one: no Nagle delay.
                tcp.set_nodelay(true).map_err(refused)?;
                Either::Left(tcp)
            }
            Host::Unix(dir) => {
                Either::Right(UnixStream::connect(dir.join(format!(".s.PGSQL.{port}"))).await.map_err(refused)?)
            }
        };
        let mut wire = Wire {
            stream,
            read: BytesMut::with_capacity(8192),
            write: BytesMut::with_capacity(8192),
            key: (0, 0),
            in_flight: 0,
        };
        auth::start(&mut wire, pg).await?;
        Ok(wire)
    }

    /// The backend's process id and secret key, for a cancel request.
    pub fn cancel_key(&self) -> (i32, i32) {
        self.key
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
            None => Ok(Prepared { name: name.to_string(), params }),
        }
    }

    /// Adds one execution of `statement` with `values` to what is to be sent
    /// (Bind, Execute, Sync: each its own transaction, so an error fails
    /// this statement alone); [`Wire::flush`] sends it, [`Wire::answer`]
    /// reads its answer. Results come back in binary and are not decoded:
    /// the measured path counts rows, it does not read them.
    pub fn push(&mut self, statement: &Prepared, values: &[&(dyn ToSql + Sync)]) -> Result<(), OpError> {
        if values.len() != statement.params.len() {
            return Err(OpError::new(
                "client error",
                format!("{} values for {} parameters", values.len(), statement.params.len()),
            ));
        }
        let bound = frontend::bind(
            "",
            &statement.name,
            Some(1),
            values.iter().zip(&statement.params),
            |(value, ty), out| match value.to_sql_checked(ty, out)? {
                postgres_types::IsNull::Yes => Ok(postgres_protocol::IsNull::Yes),
                postgres_types::IsNull::No => Ok(postgres_protocol::IsNull::No),
            },
            Some(1),
            &mut self.write,
        );
        match bound {
            Ok(()) => {}
            Err(frontend::BindError::Conversion(e)) => return Err(OpError::new("client error", e.to_string())),
            Err(frontend::BindError::Serialization(e)) => return Err(broken(e)),
        }
        frontend::execute("", 0, &mut self.write).map_err(broken)?;
        frontend::sync(&mut self.write);
        self.in_flight += 1;
        Ok(())
    }

    /// Sends what [`Wire::push`] buffered.
    pub async fn flush(&mut self) -> Result<(), OpError> {
        self.stream.write_all(&self.write).await.map_err(lost)?;
        self.write.clear();
        Ok(())
    }

    /// Statements pushed whose answer was not read yet.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Reads the answer to the oldest statement in flight, up to its
    /// ReadyForQuery: the rows it returned or affected, or its error.
    pub async fn answer(&mut self) -> Result<u64, OpError> {
        let mut rows = 0;
        let mut failed = None;
        loop {
            let (tag, len) = self.header().await?;
            match tag {
                // Skipped without being parsed: the hot path's messages.
                backend::DATA_ROW_TAG | b'2' | b'1' | backend::NO_DATA_TAG | backend::EMPTY_QUERY_RESPONSE_TAG => {
                    self.read.advance(len)
                }
                b'C' => match self.parse()? {
                    Message::CommandComplete(body) => rows = affected(body.tag().map_err(broken)?),
                    _ => unreachable!("a CommandComplete tag"),
                },
                backend::READY_FOR_QUERY_TAG => {
                    self.read.advance(len);
                    self.in_flight = self.in_flight.saturating_sub(1);
                    return failed.map_or(Ok(rows), Err);
                }
                // Notices, parameter changes and notifications are not the statement's answer.
                _ => {
                    if let Message::ErrorResponse(body) = self.parse()? {
                        failed = Some(db_error(&body));
                    }
                }
            }
        }
    }

    /// Sends `sql` with the simple protocol (one or several statements) and
    /// reads its answer: the rows of its last statement, or its error.
    pub async fn simple(&mut self, sql: &str) -> Result<u64, OpError> {
        frontend::query(sql, &mut self.write).map_err(broken)?;
        self.in_flight += 1;
        self.flush().await?;
        self.answer().await
    }

    /// The next whole message's tag and length (with its tag), read into
    /// the buffer; the message stays there.
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
            if self.stream.read_buf(&mut self.read).await.map_err(lost)? == 0 {
                return Err(OpError::fatal("connection lost", "the server closed the connection"));
            }
        }
    }

    /// The next whole message, parsed (it is in the buffer: see [`Wire::header`]).
    fn parse(&mut self) -> Result<Message, OpError> {
        Message::parse(&mut self.read).map_err(broken)?.ok_or_else(|| broken("a message cut short"))
    }

    /// The next message, read and parsed.
    async fn message(&mut self) -> Result<Message, OpError> {
        self.header().await?;
        self.parse()
    }
}

/// The rows a command tag says (`SELECT 3`, `INSERT 0 5`, `COPY 100`), 0
/// for those without (`BEGIN`).
fn affected(tag: &str) -> u64 {
    tag.rsplit(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use std::future::Future;

    use super::*;
    use crate::throwaway::{LocalOptions, LocalPostgres};

    /// Runs `test` on a runtime of its own against a throwaway server,
    /// reached over its Unix socket and over TCP with SCRAM-SHA-256.
    fn on_a_server<F: Future<Output = ()>>(test: impl FnOnce(PgTarget, PgTarget) -> F) {
        let server = LocalPostgres::start(&LocalOptions { max_connections: 10, ..LocalOptions::default() }).unwrap();
        let tcp = format!("{}?sslmode=disable&passfile={}", server.url(), server.passfile().display());
        let tcp = PgTarget::from_url(&tcp, "--url", &|_| None).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(test(server.target(), tcp));
    }

    #[test]
    fn command_tags_give_their_rows() {
        assert_eq!(affected("SELECT 3"), 3);
        assert_eq!(affected("INSERT 0 5"), 5);
        assert_eq!(affected("COPY 100"), 100);
        assert_eq!(affected("BEGIN"), 0);
    }

    #[test]
    fn statements_are_answered_one_by_one_and_in_a_pipeline() {
        on_a_server(|socket, tcp| async move {
            for pg in [socket, tcp] {
                let mut wire = Wire::connect(&pg).await.unwrap();
                assert_ne!(wire.cancel_key(), (0, 0));
                let s = wire.prepare("s1", "SELECT g FROM generate_series(1, $1::int4) g").await.unwrap();
                assert_eq!(s.params(), [Type::INT4]);
                wire.push(&s, &[&3i32]).unwrap();
                wire.flush().await.unwrap();
                assert_eq!(wire.answer().await.unwrap(), 3);
                // 16 in flight, answered in order.
                for n in 1..=16i32 {
                    wire.push(&s, &[&n]).unwrap();
                }
                assert_eq!(wire.in_flight(), 16);
                wire.flush().await.unwrap();
                for n in 1..=16u64 {
                    assert_eq!(wire.answer().await.unwrap(), n);
                }
                assert_eq!(wire.in_flight(), 0);
            }
        });
    }

    #[test]
    fn an_error_in_a_pipeline_fails_its_statement_alone() {
        on_a_server(|pg, _| async move {
            let mut wire = Wire::connect(&pg).await.unwrap();
            let s = wire.prepare("div", "SELECT 10 / $1::int4").await.unwrap();
            for d in [1i32, 0, 2] {
                wire.push(&s, &[&d]).unwrap();
            }
            wire.flush().await.unwrap();
            assert_eq!(wire.answer().await.unwrap(), 1);
            let e = wire.answer().await.unwrap_err();
            assert_eq!((e.class.as_str(), e.fatal), ("SQLSTATE 22012", false), "{}", e.message);
            assert!(e.message.contains("division by zero"), "{}", e.message);
            assert_eq!(wire.answer().await.unwrap(), 1);
            // A statement that does not prepare says why, and the connection goes on.
            let e = wire.prepare("bad", "SELEC 1").await.unwrap_err();
            assert_eq!(e.class, "SQLSTATE 42601");
            assert_eq!(wire.simple("SELECT 1; SELECT 2, 3").await.unwrap(), 1);
        });
    }

    #[test]
    fn notices_and_parameter_changes_are_not_answers() {
        on_a_server(|pg, _| async move {
            let mut wire = Wire::connect(&pg).await.unwrap();
            // A notice, then a ParameterStatus (TimeZone), each before their statement's answer.
            wire.simple("DO $$ BEGIN RAISE NOTICE 'hello'; END $$").await.unwrap();
            wire.simple("SET TimeZone = 'UTC'").await.unwrap();
            assert_eq!(wire.simple("SELECT 1").await.unwrap(), 1);
        });
    }

    #[test]
    fn a_terminated_backend_is_a_lost_connection() {
        on_a_server(|pg, _| async move {
            let mut wire = Wire::connect(&pg).await.unwrap();
            let mut admin = Wire::connect(&pg).await.unwrap();
            admin.simple(&format!("SELECT pg_terminate_backend({})", wire.cancel_key().0)).await.unwrap();
            let e = wire.simple("SELECT 1").await.unwrap_err();
            assert!(e.fatal, "{e:?}");
        });
    }
}
