//! insert-from-sql's two ends on PostgreSQL-family servers. The source runs
//! `COPY (query) TO STDOUT (FORMAT binary)` once; its stream is cut at tuple
//! boundaries into batches, each framed as a COPY payload of its own
//! (header, tuples, trailer), and the workers send them with `COPY table
//! (columns) FROM STDIN (FORMAT binary)`. No value is decoded on the way,
//! which is why the query's column types must be the table's.
//!
//! CrateDB has no COPY FROM STDIN: for it the source runs `COPY (SELECT
//! to_json(r.*) FROM (query) r) TO STDOUT` instead, and [`SourceJson`] reads
//! the rows as JSON lines for insert-json's model to convert and send.

use std::io::{BufRead, Read};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};
use bytes::BytesMut;
use futures_util::StreamExt;
use postgres_types::Type;
use tokio_postgres::{Client, CopyOutStream, Statement};
use tokio_util::sync::CancellationToken;

use super::sink::{classify, send_copy};
use super::PgTarget;
use crate::cli::ExportFormat;
use crate::dialect::{quote_ident, TableName};
use crate::encode::copy_binary::{self, TupleSplitter};
use crate::encode::copy_text::JsonLines;
use crate::error::usage;
use crate::run::worker::{Executor, Operation};
use crate::stats::OpError;

/// PostgreSQL's first OID for user-defined objects: types below it are
/// built in and have the same OID on every server.
const FIRST_USER_OID: u32 = 16_384;

/// The target table's columns: name, type OID, type name, the type as
/// declared, and whether it is generated. No row when the table does not
/// exist. `$1`: the quoted table name.
pub const TABLE_COLUMNS: &str = "\
SELECT a.attname::text, a.atttypid::int8, t.typname::text, format_type(a.atttypid, a.atttypmod),
       a.attgenerated::text <> ''
FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum";

/// A column of the target table, as [`TABLE_COLUMNS`] reads it.
#[derive(Debug, Clone)]
pub struct TableColumn {
    pub name: String,
    pub oid: u32,
    pub type_name: String,
    pub declared: String,
    pub generated: bool,
}

/// The table's columns that the query's columns (name and type, in order)
/// fill, by name. Every column that does not fit is named at once, with
/// what to do about it.
pub fn match_columns(query: &[(String, Type)], table: &[TableColumn], name: &TableName) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    for (i, (col, ty)) in query.iter().enumerate() {
        if query[..i].iter().any(|(c, _)| c == col) {
            problems.push(format!("the query has two columns named {col}: give one of them another name (AS ...)"));
            continue;
        }
        match table.iter().find(|t| t.name == *col) {
            None => {
                problems.push(format!("no column {col}: name the query's column after one of the table's (AS ...)"))
            }
            Some(t) if t.generated => problems.push(format!("{col} is a generated column: leave it out of the query")),
            Some(t) if !same_type(ty, t) => problems.push(format!(
                "column {col} is {} but the query gives {}: cast it in the query ({col}::{})",
                t.declared,
                ty.name(),
                t.type_name
            )),
            Some(_) => {}
        }
    }
    if problems.is_empty() {
        return Ok(query.iter().map(|(c, _)| c.clone()).collect());
    }
    Err(usage(format!("--table {name}: {}", problems.join("; "))))
}

/// Whether binary COPY output of `ty` is input the column takes: the same
/// type, or text types among themselves, or a user type of the same name
/// (another server's enum or domain has another OID).
fn same_type(ty: &Type, column: &TableColumn) -> bool {
    let text = |oid: u32| [Type::TEXT.oid(), Type::VARCHAR.oid(), Type::BPCHAR.oid()].contains(&oid);
    ty.oid() == column.oid
        || (text(ty.oid()) && text(column.oid))
        || (ty.oid() >= FIRST_USER_OID && column.oid >= FIRST_USER_OID && ty.name() == column.type_name)
}

/// `COPY table (columns) FROM STDIN (FORMAT binary)`.
pub fn copy_in(table: &TableName, columns: &[String]) -> String {
    let columns: Vec<String> = columns.iter().map(|c| quote_ident(c)).collect();
    format!("COPY {} ({}) FROM STDIN (FORMAT binary)", table.sql(), columns.join(", "))
}

/// A batch of whole tuples framed as one binary COPY payload.
#[derive(Debug, Default)]
pub struct CopyBatch {
    bytes: BytesMut,
    rows: u64,
}

impl Operation for CopyBatch {
    fn units(&self) -> u64 {
        self.rows
    }
}

/// The source query's rows, cut into batches on the producer thread.
pub struct SourceRows {
    /// Holds the connection that the stream reads from.
    _client: Client,
    stream: Pin<Box<CopyOutStream>>,
    splitter: TupleSplitter,
    runtime: tokio::runtime::Handle,
    /// The run stopped (Ctrl-C, or every worker is done).
    stop: CancellationToken,
    batch_size: u64,
    ended: bool,
    /// Set if the source failed mid-stream: the rows after it never came.
    error: Arc<OnceLock<String>>,
}

impl SourceRows {
    /// Starts the source's COPY. Call on the runtime, then move the rows
    /// to the producer thread.
    pub async fn start(client: Client, query: &str, batch_size: usize, stop: CancellationToken) -> Result<SourceRows> {
        let copy = format!("COPY ({query}) TO STDOUT (FORMAT binary)");
        let stream = client.copy_out(&copy).await.context("starting the source query")?;
        Ok(SourceRows {
            _client: client,
            stream: Box::pin(stream),
            splitter: TupleSplitter::default(),
            runtime: tokio::runtime::Handle::current(),
            stop,
            batch_size: batch_size as u64,
            ended: false,
            error: Arc::default(),
        })
    }

    /// Where a mid-stream failure of the source is told.
    pub fn error(&self) -> Arc<OnceLock<String>> {
        self.error.clone()
    }

    /// Fills `b` with the next batch; false when there are no more rows.
    /// Blocks the producer thread on the stream, never a runtime thread.
    pub fn fill(&mut self, b: &mut CopyBatch) -> bool {
        b.bytes.clear();
        b.rows = 0;
        copy_binary::header(&mut b.bytes);
        while b.rows < self.batch_size {
            match self.splitter.take_tuple(&mut b.bytes) {
                Ok(true) => {
                    b.rows += 1;
                    continue;
                }
                Ok(false) if self.ended || self.splitter.finished() => break,
                Ok(false) => {}
                Err(e) => {
                    self.fail(e);
                    break;
                }
            }
            let (stream, stop) = (&mut self.stream, &self.stop);
            let next = self.runtime.block_on(async {
                tokio::select! {
                    biased;
                    _ = stop.cancelled() => None,
                    next = stream.next() => next,
                }
            });
            match next {
                Some(Ok(chunk)) => self.splitter.push(&chunk),
                Some(Err(e)) => self.fail(crate::target::postgres::error_text(&e)),
                None if self.stop.is_cancelled() || self.splitter.finished() => self.ended = true,
                None => self.fail("the stream ended before its end-of-data marker".into()),
            }
        }
        copy_binary::trailer(&mut b.bytes);
        b.rows > 0
    }

    fn fail(&mut self, e: String) {
        self.ended = true;
        let _ = self.error.set(e);
    }
}

/// The source query's rows as JSON lines, read from its COPY stream as the
/// JSON model's input (on its producer threads, and once on the runtime
/// when the model peeks at the first row).
pub struct SourceJson {
    /// Holds the connection that the stream reads from.
    _client: Client,
    stream: Pin<Box<CopyOutStream>>,
    decode: JsonLines,
    runtime: tokio::runtime::Handle,
    stop: CancellationToken,
    /// Decoded rows not yet read, from `pos`.
    buf: Vec<u8>,
    pos: usize,
    /// Bytes of JSON read from the source.
    bytes: Arc<AtomicU64>,
}

impl SourceJson {
    /// Starts the source's COPY of `query` as JSON (what export writes).
    pub async fn start(client: Client, query: &str, stop: CancellationToken) -> Result<SourceJson> {
        let copy = crate::target::export::copy_statement(query, ExportFormat::Json);
        let stream = client.copy_out(&copy).await.context("starting the source query")?;
        Ok(SourceJson {
            _client: client,
            stream: Box::pin(stream),
            decode: JsonLines::default(),
            runtime: tokio::runtime::Handle::current(),
            stop,
            buf: Vec::new(),
            pos: 0,
            bytes: Arc::default(),
        })
    }

    /// Where the bytes read so far are counted.
    pub fn bytes(&self) -> Arc<AtomicU64> {
        self.bytes.clone()
    }
}

impl Read for SourceJson {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.fill_buf()?.len().min(out.len());
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for SourceJson {
    /// The next row when the last one is read; empty at the end (or when
    /// the run stops). A source that fails mid-stream is an error, which
    /// stops the reading as a bad input does.
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
            let (stream, stop) = (&mut self.stream, &self.stop);
            let next = tokio::task::block_in_place(|| {
                self.runtime.block_on(async {
                    tokio::select! {
                        biased;
                        _ = stop.cancelled() => None,
                        next = stream.next() => next,
                    }
                })
            });
            match next {
                Some(Ok(row)) => {
                    self.decode.decode(&row, &mut self.buf);
                    self.bytes.fetch_add(self.buf.len() as u64, Ordering::Relaxed);
                }
                Some(Err(e)) => return Err(std::io::Error::other(crate::target::postgres::error_text(&e))),
                None => {}
            }
        }
        Ok(&self.buf[self.pos..])
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.buf.len());
    }
}

/// A worker's connection to the target table, its COPY prepared.
pub struct TableCopy {
    client: Client,
    statement: Statement,
    /// Bytes of the batches the target took.
    pub bytes: u64,
}

impl TableCopy {
    pub async fn open(pg: &PgTarget, copy: &str) -> Result<TableCopy> {
        let client = pg.connect().await?;
        let statement = client.prepare(copy).await.with_context(|| format!("preparing {copy}"))?;
        Ok(TableCopy { client, statement, bytes: 0 })
    }
}

impl Executor<CopyBatch> for TableCopy {
    async fn execute(&mut self, b: &mut CopyBatch) -> Result<u64, OpError> {
        let bytes = b.bytes.split().freeze();
        let len = bytes.len() as u64;
        let sent = match self.client.copy_in(&self.statement).await {
            Ok(sink) => send_copy(sink, bytes).await,
            Err(e) => Err(e),
        };
        let rows = sent.map_err(|e| classify(&e, self.client.is_closed()))?;
        self.bytes += len;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(name: &str, ty: &Type, declared: &str) -> TableColumn {
        TableColumn {
            name: name.into(),
            oid: ty.oid(),
            type_name: ty.name().into(),
            declared: declared.into(),
            generated: false,
        }
    }

    #[test]
    fn columns_match_by_name_and_type() {
        let t = TableName::parse("Dst").unwrap();
        let table = [
            column("id", &Type::INT8, "bigint"),
            column("Name", &Type::VARCHAR, "character varying(20)"),
            TableColumn { generated: true, ..column("g", &Type::INT4, "integer") },
        ];
        let q = |cols: &[(&str, Type)]| cols.iter().map(|(n, t)| (n.to_string(), t.clone())).collect::<Vec<_>>();
        let ok = match_columns(&q(&[("Name", Type::TEXT), ("id", Type::INT8)]), &table, &t).unwrap();
        assert_eq!(ok, ["Name", "id"]);
        let e = match_columns(&q(&[("id", Type::INT4), ("name", Type::TEXT), ("g", Type::INT4)]), &table, &t);
        let e = e.unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert_eq!(
            e.to_string(),
            "--table Dst: column id is bigint but the query gives int4: cast it in the query (id::int8); \
             no column name: name the query's column after one of the table's (AS ...); \
             g is a generated column: leave it out of the query"
        );
        let e = match_columns(&q(&[("id", Type::INT8), ("id", Type::INT8)]), &table, &t).unwrap_err();
        assert!(e.to_string().contains("two columns named id"), "{e}");
    }

    #[test]
    fn copy_in_quotes_every_name() {
        let t = TableName::parse("s.Dst").unwrap();
        insta::assert_snapshot!(copy_in(&t, &["id".into(), "Na\"me".into()]), @r#"COPY "s"."Dst" ("id", "Na""me") FROM STDIN (FORMAT binary)"#);
    }
}
