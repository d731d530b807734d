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
//!
//! CrateDB has no COPY TO STDOUT either: as the source it is read through a
//! cursor ([`Cursor`]), a batch per fetch, its binary values framed as COPY
//! tuples as they are (or written as JSON lines for a CrateDB target).

use std::io::{BufRead, Read};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use postgres_types::{Kind, Type};
use tokio_postgres::{Client, CopyOutStream};
use tokio_util::sync::CancellationToken;

use super::cursor::{raw_values, Cursor};
use super::decode::binary_text::RowText;
use super::decode::copy_text::JsonLines;
use super::wire::{Answered, Cancel, Wire};
use super::PgTarget;
use crate::dialect::{postgres as sql, ExportFormat};

use crate::encode::copy_binary::{self, TupleSplitter};
use crate::encode::COPY_PIECE;
use crate::error::usage;
use crate::ident::TableName;
use crate::model::catalog::TableColumn;
use crate::op::{Executor, OpError, Operation, Refused};

/// PostgreSQL's first OID for user-defined objects: types below it are
/// built in and have the same OID on every server.
const FIRST_USER_OID: u32 = 16_384;

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
            Some(t) if t.generated && !t.always_identity => {
                problems.push(format!("{col} is a generated column: leave it out of the query"))
            }
            Some(t) if !same_type(ty, t) => problems.push(format!(
                "column {col} is {} but the query gives {}: cast it in the query ({col}::{})",
                t.type_sql,
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

/// How a value from a cursor source is changed on its way into a COPY
/// tuple, for a column type CrateDB does not have.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Convert {
    /// As it came.
    Keep,
    /// `json` (CrateDB's objects) into `jsonb`: its version byte first.
    Jsonb,
    /// An array, its header rewritten with this element type (CrateDB's
    /// `varchar[]` into `text[]`, or its own) and every dimension's lower
    /// bound 1: CrateDB 6.4 sends each dimension's length as its lower
    /// bound too, which PostgreSQL would keep (`[3:5]={a,b,c}`).
    Array(u32),
}

/// What a cursor source does to each query column so that it fits its
/// table column (see [`Convert`]); the query's type of a converted column
/// becomes the column's.
pub fn conversions(query: &mut [(String, Type)], table: &[TableColumn]) -> Vec<Convert> {
    let text = |t: &Type| [Type::TEXT, Type::VARCHAR, Type::BPCHAR].contains(t);
    let convert = |ty: &mut Type, column: Option<Type>| match (ty.kind(), column) {
        (_, Some(column)) if *ty == Type::JSON && column == Type::JSONB => {
            *ty = column;
            Convert::Jsonb
        }
        (Kind::Array(from), Some(column)) => match column.kind() {
            Kind::Array(to) if from != to && text(from) && text(to) => {
                let element = to.oid();
                *ty = column;
                Convert::Array(element)
            }
            _ => Convert::Array(from.oid()),
        },
        (Kind::Array(from), None) => Convert::Array(from.oid()),
        _ => Convert::Keep,
    };
    query
        .iter_mut()
        .map(|(col, ty)| {
            let column = table.iter().find(|t| t.name == *col).and_then(|t| t.type_oid).and_then(Type::from_oid);
            convert(ty, column)
        })
        .collect()
}

/// Whether binary COPY output of `ty` is input the column takes: the same
/// type, or text types among themselves, or a user type of the same name
/// (another server's enum or domain has another OID).
fn same_type(ty: &Type, column: &TableColumn) -> bool {
    let Some(oid) = column.type_oid else { return false };
    let text = |oid: u32| [Type::TEXT.oid(), Type::VARCHAR.oid(), Type::BPCHAR.oid()].contains(&oid);
    ty.oid() == oid
        || (text(ty.oid()) && text(oid))
        || (ty.oid() >= FIRST_USER_OID && oid >= FIRST_USER_OID && ty.name() == column.type_name)
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
    feed: Feed,
    runtime: tokio::runtime::Handle,
    /// The run stopped (Ctrl-C, or every worker is done).
    stop: CancellationToken,
    batch_size: u64,
    ended: bool,
    /// Set if the source failed mid-stream: the rows after it never came.
    error: Arc<OnceLock<String>>,
}

/// Where the rows come from.
enum Feed {
    /// `COPY (query) TO STDOUT (FORMAT binary)`, cut at tuple boundaries.
    Copy {
        /// Holds the connection that the stream reads from.
        _client: Client,
        stream: Pin<Box<CopyOutStream>>,
        splitter: TupleSplitter,
    },
    /// A cursor's pages of a batch each, every row framed as a tuple, its
    /// values converted as `convert` says ([`conversions`]).
    Cursor { cursor: Cursor, convert: Vec<Convert> },
}

impl SourceRows {
    /// Starts the source's COPY. Call on the runtime, then move the rows
    /// to the producer thread.
    pub async fn copy(client: Client, query: &str, batch_size: usize, stop: CancellationToken) -> Result<SourceRows> {
        let copy = sql::copy_out_binary(query);
        let stream = client.copy_out(&copy).await.context("starting the source query")?;
        let feed = Feed::Copy { _client: client, stream: Box::pin(stream), splitter: TupleSplitter::default() };
        Ok(SourceRows::new(feed, batch_size, stop))
    }

    /// Declares the source's cursor, a batch per fetch, its values
    /// converted as `convert` says ([`conversions`]).
    pub async fn cursor(
        client: Client,
        query: &str,
        batch_size: usize,
        stop: CancellationToken,
        convert: Vec<Convert>,
    ) -> Result<SourceRows> {
        let cursor = Cursor::declare(client, query, batch_size).await.context("starting the source query")?;
        Ok(SourceRows::new(Feed::Cursor { cursor, convert }, batch_size, stop))
    }

    fn new(feed: Feed, batch_size: usize, stop: CancellationToken) -> SourceRows {
        SourceRows {
            feed,
            runtime: tokio::runtime::Handle::current(),
            stop,
            batch_size: batch_size as u64,
            ended: false,
            error: Arc::default(),
        }
    }

    /// Where a mid-stream failure of the source is told.
    pub fn error(&self) -> Arc<OnceLock<String>> {
        self.error.clone()
    }

    /// Fills `b` with the next batch; false when there are no more rows.
    /// Blocks the producer thread on the source, never a runtime thread.
    pub fn fill(&mut self, b: &mut CopyBatch) -> bool {
        b.bytes.clear();
        b.rows = 0;
        copy_binary::header(&mut b.bytes);
        match &mut self.feed {
            Feed::Copy { .. } => self.fill_from_copy(b),
            Feed::Cursor { .. } => self.fill_from_cursor(b),
        }
        copy_binary::trailer(&mut b.bytes);
        b.rows > 0
    }

    fn fill_from_copy(&mut self, b: &mut CopyBatch) {
        let Feed::Copy { stream, splitter, .. } = &mut self.feed else { unreachable!("called for COPY") };
        while b.rows < self.batch_size {
            match splitter.take_tuple(&mut b.bytes) {
                Ok(true) => {
                    b.rows += 1;
                    continue;
                }
                Ok(false) if self.ended || splitter.finished() => break,
                Ok(false) => {}
                Err(e) => {
                    fail(&mut self.ended, &self.error, e);
                    break;
                }
            }
            let next = block_on(&self.runtime, &self.stop, stream.next()).flatten();
            match next {
                Some(Ok(chunk)) => splitter.push(&chunk),
                Some(Err(e)) => fail(&mut self.ended, &self.error, super::error::error_text(&e)),
                None if self.stop.is_cancelled() || splitter.finished() => self.ended = true,
                None => fail(&mut self.ended, &self.error, "the stream ended before its end-of-data marker".into()),
            }
        }
    }

    fn fill_from_cursor(&mut self, b: &mut CopyBatch) {
        let Feed::Cursor { cursor, convert } = &mut self.feed else { unreachable!("called for a cursor") };
        if self.ended || cursor.ended() {
            return;
        }
        match block_on(&self.runtime, &self.stop, cursor.fetch()) {
            Some(Ok(rows)) => {
                for row in &rows {
                    tuple(row, convert, &mut b.bytes);
                    b.rows += 1;
                }
            }
            Some(Err(e)) => fail(&mut self.ended, &self.error, super::error::error_text(&e)),
            None => self.ended = true,
        }
    }
}

/// The source failed: no more rows, and the report says why.
fn fail(ended: &mut bool, error: &OnceLock<String>, e: String) {
    *ended = true;
    let _ = error.set(e);
}

/// An array value with the element type `element` and lower bounds of
/// 1 (see [`Convert::Array`]); one too short for its header goes as it came,
/// for the server to refuse.
fn array(v: &[u8], element: u32, out: &mut BytesMut) {
    use bytes::BufMut;
    let ndim = v.get(..4).map_or(0, |n| i32::from_be_bytes([n[0], n[1], n[2], n[3]]).max(0) as usize);
    let header = 12 + 8 * ndim;
    if v.len() < header {
        out.put_i32(v.len() as i32);
        out.put_slice(v);
        return;
    }
    out.put_i32(v.len() as i32);
    out.put_slice(&v[..8]);
    out.put_u32(element);
    for d in 0..ndim {
        out.put_slice(&v[12 + 8 * d..16 + 8 * d]);
        out.put_i32(1);
    }
    out.put_slice(&v[header..]);
}

/// A row framed as a binary COPY tuple: its values as the server sent
/// them, converted as `convert` says.
fn tuple(row: &tokio_postgres::Row, convert: &[Convert], out: &mut BytesMut) {
    use bytes::BufMut;
    out.put_i16(row.len() as i16);
    for (value, &c) in raw_values(row).zip(convert) {
        match (value, c) {
            (None, _) => out.put_i32(-1),
            (Some(v), Convert::Jsonb) => {
                out.put_i32(v.len() as i32 + 1);
                out.put_u8(1);
                out.put_slice(v);
            }
            (Some(v), Convert::Array(element)) => array(v, element, out),
            (Some(v), _) => {
                out.put_i32(v.len() as i32);
                out.put_slice(v);
            }
        }
    }
}

/// The source query's rows as JSON lines, read from its COPY stream (or
/// its cursor) as the JSON model's input (on its producer threads, and once
/// on the runtime when the model peeks at the first row).
pub struct SourceJson {
    feed: JsonFeed,
    runtime: tokio::runtime::Handle,
    stop: CancellationToken,
    /// Decoded rows not yet read, from `pos`.
    buf: Vec<u8>,
    pos: usize,
    /// Bytes of JSON read from the source.
    bytes: Arc<AtomicU64>,
}

enum JsonFeed {
    /// A COPY of one JSON value per row, a row per message.
    Copy {
        /// Holds the connection that the stream reads from.
        _client: Client,
        stream: Pin<Box<CopyOutStream>>,
        decode: JsonLines,
    },
    /// A cursor's pages, written as JSON lines.
    Cursor { cursor: Cursor, text: RowText },
}

impl SourceJson {
    /// Starts the source's COPY of `query` as JSON (what export writes).
    pub async fn copy(client: Client, query: &str, stop: CancellationToken) -> Result<SourceJson> {
        let copy = sql::copy_out(query, ExportFormat::Json);
        let stream = client.copy_out(&copy).await.context("starting the source query")?;
        let feed = JsonFeed::Copy { _client: client, stream: Box::pin(stream), decode: JsonLines::default() };
        Ok(SourceJson::new(feed, stop))
    }

    /// Declares the source's cursor over `query`, `page` rows per fetch; a
    /// column type it cannot write as JSON is refused with the cast to use.
    pub async fn cursor(client: Client, query: &str, page: usize, stop: CancellationToken) -> Result<SourceJson> {
        let cursor = Cursor::declare(client, query, page).await.context("starting the source query")?;
        let text = RowText::new(&cursor.columns()).map_err(|e| crate::error::usage(format!("--query: {e}")))?;
        Ok(SourceJson::new(JsonFeed::Cursor { cursor, text }, stop))
    }

    fn new(feed: JsonFeed, stop: CancellationToken) -> SourceJson {
        let runtime = tokio::runtime::Handle::current();
        SourceJson { feed, runtime, stop, buf: Vec::new(), pos: 0, bytes: Arc::default() }
    }

    /// Where the bytes read so far are counted.
    pub fn bytes(&self) -> Arc<AtomicU64> {
        self.bytes.clone()
    }

    /// Reads the next row (COPY) or page (cursor) into `buf`; nothing at
    /// the end, or when the run stops.
    fn refill(&mut self) -> std::io::Result<()> {
        let stop = &self.stop;
        let failed = |e: &tokio_postgres::Error| std::io::Error::other(super::error::error_text(e));
        match &mut self.feed {
            JsonFeed::Copy { stream, decode, .. } => {
                let next = block_on(&self.runtime, stop, stream.next());
                match next.flatten() {
                    Some(Ok(row)) => decode.decode(&row, &mut self.buf),
                    Some(Err(e)) => return Err(failed(&e)),
                    None => {}
                }
            }
            JsonFeed::Cursor { cursor, text } => {
                if cursor.ended() {
                    return Ok(());
                }
                let rows = match block_on(&self.runtime, stop, cursor.fetch()) {
                    Some(page) => page.map_err(|e| failed(&e))?,
                    None => return Ok(()),
                };
                for row in &rows {
                    text.json(raw_values(row), &mut self.buf).map_err(std::io::Error::other)?;
                }
            }
        }
        self.bytes.fetch_add(self.buf.len() as u64, Ordering::Relaxed);
        Ok(())
    }
}

/// Waits for `f` on `runtime` from a thread that may be one of its own;
/// `None` once `stop` is cancelled.
fn block_on<F: std::future::Future>(
    runtime: &tokio::runtime::Handle,
    stop: &CancellationToken,
    f: F,
) -> Option<F::Output> {
    tokio::task::block_in_place(|| {
        runtime.block_on(async {
            tokio::select! {
                biased;
                _ = stop.cancelled() => None,
                out = f => Some(out),
            }
        })
    })
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
    /// The next rows when the last ones are read; empty at the end (or when
    /// the run stops). A source that fails mid-stream is an error, which
    /// stops the reading as a bad input does.
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
            self.refill()?;
        }
        Ok(&self.buf[self.pos..])
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.buf.len());
    }
}

/// A worker's connection to the target table (dbload's own, the measured
/// path), its COPY checked by the server.
pub struct TableCopy {
    wire: Wire,
    cancel: Cancel,
    /// The `COPY ... FROM STDIN (FORMAT binary)` each batch is sent by.
    copy: String,
    /// Bytes of the batches the target took.
    pub bytes: u64,
}

impl TableCopy {
    pub async fn open(pg: &PgTarget, copy: &str) -> Result<TableCopy> {
        let mut wire = Wire::connect(pg).await?;
        // Sent as a simple Query per batch; parsed here only so that a COPY
        // the server refuses is found before the first batch.
        wire.prepare("", copy).await.map_err(|error| Refused { statement: copy.to_owned(), error })?;
        Ok(TableCopy { cancel: wire.canceller(), wire, copy: copy.to_owned(), bytes: 0 })
    }
}

impl Executor<CopyBatch> for TableCopy {
    /// One batch, one Query: its own transaction, committed when answered.
    async fn execute(&mut self, b: &mut CopyBatch, _warm: bool) -> Result<u64, OpError> {
        let bytes = b.bytes.split().freeze();
        let len = bytes.len() as u64;
        let rows = self.wire.copy_pieces(&self.copy, slices(bytes), Answered::NotAwaited).await?;
        self.bytes += len;
        Ok(rows)
    }

    async fn cancel(&mut self) {
        self.cancel.cancel_or_say().await
    }
}

/// An encoded COPY payload (the tuples as the source sent them) cut into
/// pieces of at most [`COPY_PIECE`] (views of it, not copies): the
/// connection copies each into its write buffer and sends what it holds
/// every so often, so the buffer never grows to a whole batch.
fn slices(bytes: Bytes) -> impl Iterator<Item = Bytes> + Send {
    (0..bytes.len()).step_by(COPY_PIECE).map(move |at| bytes.slice(at..(at + COPY_PIECE).min(bytes.len())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(name: &str, ty: &Type, declared: &str) -> TableColumn {
        TableColumn {
            name: name.into(),
            type_sql: declared.into(),
            kind: crate::model::catalog::Kind::Other(ty.name().into()),
            array: false,
            not_null: false,
            has_default: false,
            generated: false,
            unique: false,
            primary_key: false,
            cast: String::new(),
            type_name: ty.name().into(),
            type_oid: Some(ty.oid()),
            always_identity: false,
        }
    }

    #[test]
    fn a_copy_payload_is_sent_in_slices_that_together_are_the_payload() {
        let payload: Bytes = (0..=255u8).cycle().take(2 * COPY_PIECE + 1).collect::<Vec<_>>().into();
        let cut: Vec<Bytes> = slices(payload.clone()).collect();
        assert_eq!(cut.len(), 3);
        assert!(cut.iter().all(|s| s.len() <= COPY_PIECE));
        assert_eq!(cut.concat(), payload.to_vec());
        assert_eq!(slices(Bytes::new()).count(), 0);
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
    fn a_cursor_source_converts_what_crate_has_no_type_for() {
        let table = [
            column("o", &Type::JSONB, "jsonb"),
            column("tags", &Type::TEXT_ARRAY, "text[]"),
            column("ns", &Type::INT4_ARRAY, "integer[]"),
            column("j", &Type::JSON, "json"),
        ];
        let mut query: Vec<(String, Type)> = [
            ("o", Type::JSON),
            ("tags", Type::VARCHAR_ARRAY),
            ("ns", Type::INT4_ARRAY),
            ("j", Type::JSON),
            ("extra", Type::INT8_ARRAY),
        ]
        .into_iter()
        .map(|(n, t)| (n.to_string(), t))
        .collect();
        let c = conversions(&mut query, &table);
        let oid = |t: &Type| t.oid();
        assert_eq!(
            c,
            [
                Convert::Jsonb,
                Convert::Array(oid(&Type::TEXT)),
                Convert::Array(oid(&Type::INT4)),
                Convert::Keep,
                Convert::Array(oid(&Type::INT8))
            ]
        );
        let types: Vec<&Type> = query.iter().map(|(_, t)| t).collect();
        assert_eq!(types, [&Type::JSONB, &Type::TEXT_ARRAY, &Type::INT4_ARRAY, &Type::JSON, &Type::INT8_ARRAY]);

        // CrateDB 6.4's header of ['a', 'b']: element varchar, lower bound 2 (its length).
        let mut v = Vec::new();
        for w in [1i32, 1, Type::VARCHAR.oid() as i32, 2, 2, 1] {
            v.extend_from_slice(&w.to_be_bytes());
        }
        v.extend_from_slice(b"a");
        let mut out = BytesMut::new();
        array(&v, Type::TEXT.oid(), &mut out);
        let words: Vec<i32> = out[4..28].chunks(4).map(|w| i32::from_be_bytes(w.try_into().unwrap())).collect();
        assert_eq!(words, [1, 1, Type::TEXT.oid() as i32, 2, 1, 1], "ndim, flags, element, length, lower bound, …");
        assert_eq!((&out[..4], &out[28..]), (&(v.len() as i32).to_be_bytes()[..], &b"a"[..]));
    }
}
