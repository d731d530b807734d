//! Export's side of the server. On a PostgreSQL-family server: which rows
//! each worker reads (disjoint ctid block ranges of a table, which
//! PostgreSQL 14 and later scan as TID ranges, so each worker reads only its
//! own blocks), the COPY statement that turns them into JSON or CSV on the
//! server, and the worker that streams its rows into its file, one chunk per
//! operation. On CrateDB: pages of a cursor, one per operation, over its
//! PostgreSQL protocol ([`Cursor`]) or over HTTP ([`PageWorker`]).
//!
//! Nothing is collected: a chunk (at most `--chunk-rows` rows or
//! [`CHUNK_BYTES`] of a COPY stream, or one page) is read, written to the
//! file, and its buffer reused; the stream's own backpressure (or the next
//! page's request) holds the server back while the file is written.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::pin::Pin;

use anyhow::{Context, Result};
use flate2::write::DeflateEncoder;
use futures_util::StreamExt;
use tokio_postgres::{Client, CopyOutStream};

use super::cursor::{raw_values, Cursor, CURSOR};
use super::decode::binary_text::RowText;
use super::decode::copy_text::JsonLines;
use super::{classify, Canceller, PgTarget};
use crate::dialect::{literal, TableName};
use crate::driver::cratedb_http::{CrateConn, CrateTarget};
use crate::encode::ExportFormat;
use crate::op::{Executor, OpError, Operation, Source};

/// A chunk ends at this many bytes even before `--chunk-rows` rows.
pub const CHUNK_BYTES: usize = 1 << 20;

/// The relation's kind, its size in blocks (of its largest child for a
/// partitioned table or a hypertable, whose parent holds no rows) and the
/// planner's estimate of its rows (`reltuples`; none before the first
/// ANALYZE). No row when the table does not exist. `$1`: the quoted name.
pub const TABLE_FACTS: &str = "\
SELECT c.relkind::text,
       greatest(pg_relation_size(c.oid),
                coalesce((SELECT max(pg_relation_size(i.inhrelid)) FROM pg_inherits i WHERE i.inhparent = c.oid), 0))
         / current_setting('block_size')::int8,
       (SELECT sum(greatest(r.reltuples, 0))::int8 FROM pg_class r
         WHERE r.oid = c.oid OR r.oid IN (SELECT i.inhrelid FROM pg_inherits i WHERE i.inhparent = c.oid))
FROM pg_class c WHERE c.oid = to_regclass($1)";

/// Relation kinds whose rows have a ctid: tables, partitioned tables,
/// materialized views, TOAST tables.
pub fn has_ctid(relkind: &str) -> bool {
    matches!(relkind, "r" | "p" | "m" | "t")
}

/// One SELECT per worker, covering `table` together exactly once: block
/// ranges split evenly over its `blocks` blocks. The first range has no
/// lower bound and the last no upper bound, so rows in blocks added since
/// (or in a child table larger than the estimate) are read too; on a
/// partitioned table the condition applies to each partition's own blocks.
pub fn table_selects(table: &TableName, blocks: u64, workers: u32) -> Vec<String> {
    let n = workers as u64;
    let bound = |k: u64| (blocks as u128 * k as u128 / n as u128) as u64;
    (0..n)
        .map(|k| {
            let lower = (k > 0).then(|| format!("ctid >= '({},0)'::tid", bound(k)));
            let upper = (k + 1 < n).then(|| format!("ctid < '({},0)'::tid", bound(k + 1)));
            let conditions: Vec<String> = lower.into_iter().chain(upper).collect();
            match conditions.is_empty() {
                true => format!("SELECT * FROM {}", table.sql()),
                false => format!("SELECT * FROM {} WHERE {}", table.sql(), conditions.join(" AND ")),
            }
        })
        .collect()
}

/// The COPY that reads `select`'s rows as `format`: JSON through `to_json`
/// of each row (ISO timestamps with offset, exact numbers, arrays as arrays,
/// json and jsonb nested), CSV with a header line.
pub fn copy_statement(select: &str, format: ExportFormat) -> String {
    match format {
        // `OFFSET 0` keeps the subquery a subquery: Citus pushes a flattened one
        // down to the shards, where the row's record type loses its column
        // names (`{"f1": …}`); PostgreSQL plans the same scan inside it.
        ExportFormat::Json => format!(
            "COPY (SELECT to_json(dbload_row.*) FROM (SELECT * FROM ({select}) dbload_q OFFSET 0) dbload_row) TO STDOUT"
        ),
        ExportFormat::Csv => format!("COPY ({select}) TO STDOUT (FORMAT csv, HEADER)"),
    }
}

/// Hex digits of `md5(_id)` that [`crate_share`] reads: 16^3 = 4,096
/// values, so with up to 64 workers the largest share exceeds the smallest
/// by at most 1/4,096 of the rows, and more workers still all get rows.
const SPLIT_DIGITS: usize = 3;

/// The worker (0..`workers`) that reads a CrateDB row: the first
/// [`SPLIT_DIGITS`] hex digits of `md5(_id)` as a number, modulo
/// `workers`. A digit's value is `(ascii(d) - 48) % 39`: '0'-'9' (48-57)
/// become 0-9 and 'a'-'f' (97-102) become 10-15. (`ascii(md5(_id)) % n`
/// took the ASCII code itself, so with 16 workers 10-15 got no rows.)
fn crate_share(workers: u32) -> String {
    let digits = (1..=SPLIT_DIGITS)
        .map(|i| {
            let value = format!("(ascii(substr(md5(_id), {i}, 1)) - 48) % 39");
            match SPLIT_DIGITS - i {
                0 => value,
                power => format!("({value}) * {}", 16u32.pow(power as u32)),
            }
        })
        .collect::<Vec<_>>()
        .join(" + ");
    format!("({digits}) % {workers}")
}

/// The SELECT of worker `worker` of `workers` reading a CrateDB table
/// through a cursor: its share of the rows (`crate_share`).
pub fn crate_select(table: &TableName, worker: u32, workers: u32) -> String {
    match workers {
        1 => format!("SELECT * FROM {}", table.sql()),
        n => format!("SELECT * FROM {} WHERE {} = {worker}", table.sql(), crate_share(n)),
    }
}

/// Starts a worker's transaction in the snapshot the export took, so all
/// workers read the table as of one moment.
pub fn import_snapshot(snapshot: &str) -> String {
    format!("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT {}", literal(snapshot))
}

/// A chunk of decoded rows on its way to a file; its buffer is reused.
#[derive(Debug, Default)]
pub struct Chunk {
    bytes: Vec<u8>,
    rows: u64,
    /// The stream ended with this chunk.
    end: bool,
}

impl Operation for Chunk {
    /// Unknown until the chunk is read: the rows come back as acknowledged.
    fn units(&self) -> u64 {
        0
    }
}

/// A worker's chunks: the same one, again and again, until its stream ends.
#[derive(Debug)]
pub struct Chunks(Option<Chunk>);

impl Default for Chunks {
    fn default() -> Chunks {
        Chunks(Some(Chunk::default()))
    }
}

impl Source for Chunks {
    type Op = Chunk;

    async fn next(&mut self) -> Option<Chunk> {
        self.0.take()
    }

    fn recycle(&mut self, chunk: Chunk) {
        if !chunk.end {
            self.0 = Some(chunk);
        }
    }
}

/// A file an export writes, plain or gzip, a chunk of whole rows at a
/// time. It is whole after every chunk: its rows end with the chunk's last
/// one, and a gzip file is a complete stream (the chunk's compressed rows
/// end at a sync flush point, followed by an empty final block and the
/// trailer, which the next chunk overwrites). A write that fails (a full
/// disk) cuts the file back to the last whole chunk, so the file holds
/// exactly the rows counted, none torn.
pub struct ExportFile {
    path: PathBuf,
    file: File,
    gzip: Option<Gzip>,
    /// Where the next chunk goes: the file's length after its last whole
    /// chunk (for gzip, before that chunk's end of stream).
    whole: u64,
    /// Bytes of rows written (before compression).
    bytes: u64,
    rows: u64,
    /// Why the file ends early; nothing more is written to it then.
    error: Option<String>,
}

/// The compressor of a gzip file and the CRC-32 of its rows so far.
struct Gzip {
    /// Raw deflate into a buffer that each chunk empties into the file.
    deflate: DeflateEncoder<Vec<u8>>,
    crc: crc32fast::Hasher,
}

/// A gzip member's header (RFC 1952): deflate, no name, no time, the
/// fastest level, unknown OS.
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 0xff];

/// What ends a gzip file after a sync flush point: an empty final block
/// (fixed Huffman codes, end-of-block only: `03 00`), then the trailer,
/// the CRC-32 and the length modulo 2^32 of the rows so far.
fn gzip_end(crc: &crc32fast::Hasher, len: u64) -> [u8; 10] {
    let mut end = [0x03, 0x00, 0, 0, 0, 0, 0, 0, 0, 0];
    end[2..6].copy_from_slice(&crc.clone().finalize().to_le_bytes());
    end[6..].copy_from_slice(&(len as u32).to_le_bytes());
    end
}

/// What became of one file.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ExportedFile {
    pub path: PathBuf,
    pub rows: u64,
    /// Bytes of rows, before compression.
    pub bytes: u64,
    /// The file's size on disk.
    pub file_bytes: u64,
    /// False when the export stopped (Ctrl-C, an error) before its last row.
    pub complete: bool,
    /// Why the file ends early: the error writing it (naming the file and
    /// the OS error) and whether it could be cut back to its last whole row.
    pub error: Option<String>,
}

impl ExportFile {
    /// Creates (or truncates) `path`; a gzip file starts as an empty stream.
    /// gzip at the fastest level: export is measured, and level 6 would make
    /// the client the bottleneck.
    pub fn create(path: PathBuf, gzip: bool) -> Result<ExportFile> {
        let file = File::create(&path).with_context(|| format!("--out: cannot create {}", path.display()))?;
        let gzip = gzip.then(|| Gzip {
            deflate: DeflateEncoder::new(Vec::with_capacity(1 << 16), flate2::Compression::fast()),
            crc: crc32fast::Hasher::new(),
        });
        let mut f = ExportFile { path, file, gzip, whole: 0, bytes: 0, rows: 0, error: None };
        if f.gzip.is_some() {
            let empty = [&GZIP_HEADER[..], &gzip_end(&crc32fast::Hasher::new(), 0)].concat();
            f.file.write_all(&empty).with_context(|| format!("--out: cannot write {}", f.path.display()))?;
            f.whole = GZIP_HEADER.len() as u64;
        }
        Ok(f)
    }

    /// Writes a chunk's whole rows; returns how many. Blocking, so off the
    /// runtime's async threads. A file that cannot be written ends the
    /// worker, cut back to its last whole chunk.
    fn write(&mut self, chunk: &Chunk) -> Result<u64, OpError> {
        if let Some(e) = &self.error {
            return Err(OpError::fatal("write error", e.clone()));
        }
        if let Err(e) = tokio::task::block_in_place(|| self.append(&chunk.bytes)) {
            return Err(OpError::fatal("write error", self.cut_back(e)));
        }
        self.bytes += chunk.bytes.len() as u64;
        self.rows += chunk.rows;
        Ok(chunk.rows)
    }

    /// Appends `rows` at the end of the last whole chunk: as they are, or
    /// compressed to a sync flush point and followed by the end of stream.
    fn append(&mut self, rows: &[u8]) -> std::io::Result<()> {
        let Some(gz) = &mut self.gzip else {
            self.file.write_all_at(rows, self.whole)?;
            self.whole += rows.len() as u64;
            return Ok(());
        };
        gz.deflate.write_all(rows)?;
        gz.deflate.flush()?;
        let mut crc = gz.crc.clone();
        crc.update(rows);
        let compressed = gz.deflate.get_ref().len() as u64;
        gz.deflate.get_mut().extend_from_slice(&gzip_end(&crc, self.bytes + rows.len() as u64));
        let written = self.file.write_all_at(gz.deflate.get_ref(), self.whole);
        gz.deflate.get_mut().clear();
        written?;
        gz.crc = crc;
        self.whole += compressed;
        Ok(())
    }

    /// After a failed write: cuts the file back to its last whole chunk
    /// (for gzip, puts that chunk's end of stream back, over bytes the file
    /// already had, so it needs no space), and says so in the message.
    fn cut_back(&mut self, e: std::io::Error) -> String {
        let cut = match self.gzip.take() {
            None => self.file.set_len(self.whole),
            Some(gz) => {
                let end = gzip_end(&gz.crc, self.bytes);
                let ended = self.file.write_all_at(&end, self.whole);
                ended.and_then(|()| self.file.set_len(self.whole + end.len() as u64))
            }
        };
        let rows = self.rows;
        let message = match cut {
            Ok(()) => format!("{}: {e}; the file ends at its last whole row ({rows} rows)", self.path.display()),
            Err(cut) => format!(
                "{}: {e}; cutting it back to its last whole row ({rows} rows) failed too ({cut}): its end is torn",
                self.path.display()
            ),
        };
        self.error = Some(message.clone());
        message
    }

    /// Makes the file durable and says what it holds. Never fails: a file
    /// that could not be synced is reported incomplete, with the reason.
    fn finish(mut self, complete: bool) -> ExportedFile {
        if self.error.is_none() {
            if let Err(e) = self.file.sync_all() {
                self.error = Some(format!("{}: {e} while syncing it: rows may be missing", self.path.display()));
            }
        }
        let file_bytes = self.file.metadata().map_or(self.whole, |m| m.len());
        let complete = complete && self.error.is_none();
        ExportedFile { path: self.path, rows: self.rows, bytes: self.bytes, file_bytes, complete, error: self.error }
    }
}

/// How COPY's output becomes file content.
enum Decode {
    /// COPY text of one JSON value per row: unescaped into JSON lines.
    Json(JsonLines),
    /// CSV as is; the first message is the header line, not a row.
    Csv { header_pending: bool },
}

/// One worker of an export: its connection, what it reads, its file.
pub enum ExportWorker {
    /// A PostgreSQL-family server's COPY stream.
    Copy(Box<CopyWorker>),
    /// CrateDB's pages over HTTP.
    Pages(Box<PageWorker>),
    /// A cursor's pages: CrateDB over its PostgreSQL protocol.
    Cursor(Box<CursorWorker>),
}

impl ExportWorker {
    /// Flushes and closes the file (a gzip file gets its trailer), also
    /// after Ctrl-C: whatever was written is readable.
    pub fn finish(self) -> ExportedFile {
        match self {
            ExportWorker::Copy(w) => w.file.finish(w.ended),
            ExportWorker::Pages(w) => w.file.finish(w.ended),
            ExportWorker::Cursor(w) => {
                let ended = w.cursor.ended();
                w.file.finish(ended)
            }
        }
    }
}

impl Executor<Chunk> for ExportWorker {
    async fn execute(&mut self, chunk: &mut Chunk, _warm: bool) -> Result<u64, OpError> {
        chunk.bytes.clear();
        chunk.rows = 0;
        match self {
            ExportWorker::Copy(w) => w.transfer(chunk).await,
            ExportWorker::Pages(w) => w.transfer(chunk).await,
            ExportWorker::Cursor(w) => w.transfer(chunk).await,
        }
    }

    /// A COPY still streaming when the run gave up on it (Ctrl-C or the
    /// deadline, and the grace after it) is cancelled on the server, which
    /// would otherwise produce the rest of its rows for nobody.
    async fn cancel(&mut self) {
        if let ExportWorker::Copy(w) = self {
            w.cancel.cancel().await;
        }
    }
}

/// A worker reading a COPY stream.
pub struct CopyWorker {
    client: Client,
    /// Stops the COPY on the server when the run gives up on a chunk.
    cancel: Canceller,
    copy: String,
    /// Started by the first chunk, so the server's work is measured.
    stream: Option<Pin<Box<CopyOutStream>>>,
    decode: Decode,
    file: ExportFile,
    chunk_rows: u64,
    ended: bool,
}

impl CopyWorker {
    /// Connects and, with `snapshot`, enters the export's snapshot.
    pub async fn open(
        pg: &PgTarget,
        snapshot: Option<&str>,
        copy: String,
        format: ExportFormat,
        file: ExportFile,
        chunk_rows: usize,
    ) -> Result<ExportWorker> {
        let client = pg.connect().await?;
        if let Some(s) = snapshot {
            client.batch_execute(&import_snapshot(s)).await.context("joining the export's snapshot")?;
        }
        let decode = match format {
            ExportFormat::Json => Decode::Json(JsonLines::default()),
            ExportFormat::Csv => Decode::Csv { header_pending: true },
        };
        let cancel = pg.canceller(&client);
        let chunk_rows = chunk_rows as u64;
        let w = CopyWorker { client, cancel, copy, stream: None, decode, file, chunk_rows, ended: false };
        Ok(ExportWorker::Copy(Box::new(w)))
    }

    /// Reads the next chunk and writes it. A broken stream or file ends the
    /// worker (its file is then incomplete); rows of a chunk cut short by
    /// an error are not written, so a file holds exactly the rows counted.
    async fn transfer(&mut self, chunk: &mut Chunk) -> Result<u64, OpError> {
        // Whatever broke, this stream cannot go on.
        let fatal = |e: tokio_postgres::Error, closed: bool| OpError { fatal: true, ..classify(&e, closed) };
        if self.stream.is_none() {
            let started = self.client.copy_out(&self.copy).await;
            self.stream = Some(Box::pin(started.map_err(|e| fatal(e, self.client.is_closed()))?));
        }
        let stream = self.stream.as_mut().expect("started above");
        while chunk.rows < self.chunk_rows && chunk.bytes.len() < CHUNK_BYTES {
            // The server sends each row in a message of its own (protocol docs, COPY).
            match stream.next().await {
                Some(Ok(row)) => match &mut self.decode {
                    Decode::Json(d) => {
                        d.decode(&row, &mut chunk.bytes);
                        chunk.rows += 1;
                    }
                    Decode::Csv { header_pending } => {
                        chunk.bytes.extend_from_slice(&row);
                        chunk.rows += u64::from(!std::mem::take(header_pending));
                    }
                },
                Some(Err(e)) => return Err(fatal(e, self.client.is_closed())),
                None => {
                    self.ended = true;
                    chunk.end = true;
                    break;
                }
            }
        }
        self.file.write(chunk)
    }
}

/// A worker reading a cursor over CrateDB's HTTP endpoint, which keeps a
/// session (and its cursors) per connection: `DECLARE ... WITH HOLD` once,
/// then `FETCH n` a page per chunk. Each page's rows become JSON objects,
/// `{"column": value, ...}` in the result's column order, values as CrateDB
/// gives them (timestamps in epoch milliseconds, which insert-json reads
/// back). The cursor keeps its place on the server, so every page costs
/// the same; paging with `WHERE key > ? ORDER BY key LIMIT n` would sort
/// the rest of the table for each page.
pub struct PageWorker {
    conn: CrateConn,
    /// The request body of `FETCH n`.
    fetch: Vec<u8>,
    page: usize,
    file: ExportFile,
    ended: bool,
}

impl PageWorker {
    /// Connects worker `worker` to its node and declares its cursor over
    /// `select`. An error here is the query's (it does not parse, names a
    /// table that is not there), told as CrateDB tells it.
    pub async fn open(
        target: &CrateTarget,
        worker: u32,
        select: &str,
        page: usize,
        file: ExportFile,
    ) -> Result<ExportWorker> {
        let mut conn = target.connect(worker as usize).await?;
        conn.execute(&format!("DECLARE {CURSOR} NO SCROLL CURSOR WITH HOLD FOR {select}"), &[]).await?;
        let fetch = serde_json::to_vec(&serde_json::json!({ "stmt": format!("FETCH {page} FROM {CURSOR}") }))
            .expect("JSON values serialize");
        let w = PageWorker { conn, fetch, page, file, ended: false };
        Ok(ExportWorker::Pages(Box::new(w)))
    }

    /// Fetches the next page and writes it. A page CrateDB refuses ends the
    /// worker: its cursor may have moved past rows not written.
    async fn transfer(&mut self, chunk: &mut Chunk) -> Result<u64, OpError> {
        let page = self.conn.post(&self.fetch).await.map_err(|e| OpError { fatal: true, ..e })?;
        for row in &page.rows {
            json_object(&page.cols, row, &mut chunk.bytes);
            chunk.rows += 1;
        }
        if page.rows.len() < self.page {
            self.ended = true;
            chunk.end = true;
        }
        self.file.write(chunk)
    }
}

/// A worker reading a cursor, a page per chunk, and writing its rows as
/// JSON lines or CSV ([`RowText`]).
pub struct CursorWorker {
    cursor: Cursor,
    text: RowText,
    format: ExportFormat,
    /// CSV: the header line is still to be written.
    header_pending: bool,
    file: ExportFile,
}

impl CursorWorker {
    /// A worker for a declared cursor; a column type it cannot write is
    /// refused, with the cast that makes it writable.
    pub fn open(cursor: Cursor, format: ExportFormat, file: ExportFile) -> Result<ExportWorker, String> {
        let text = RowText::new(&cursor.columns())?;
        let header_pending = format == ExportFormat::Csv;
        Ok(ExportWorker::Cursor(Box::new(CursorWorker { cursor, text, format, header_pending, file })))
    }

    /// Fetches the next page and writes it. A broken cursor or a value
    /// that cannot be written ends the worker, its file incomplete.
    async fn transfer(&mut self, chunk: &mut Chunk) -> Result<u64, OpError> {
        if std::mem::take(&mut self.header_pending) {
            self.text.csv_header(&mut chunk.bytes);
        }
        let page = self.cursor.fetch().await;
        let rows = page.map_err(|e| OpError { fatal: true, ..classify(&e, self.cursor.is_closed()) })?;
        for row in &rows {
            let written = match self.format {
                ExportFormat::Json => self.text.json(raw_values(row), &mut chunk.bytes),
                ExportFormat::Csv => self.text.csv(raw_values(row), &mut chunk.bytes),
            };
            written.map_err(|e| OpError::fatal("bad value", e))?;
            chunk.rows += 1;
        }
        chunk.end = self.cursor.ended();
        self.file.write(chunk)
    }
}

/// Appends `{"column": value, ...}` and a newline.
fn json_object(columns: &[String], values: &[serde_json::Value], out: &mut Vec<u8>) {
    out.push(b'{');
    for (i, (column, value)) in columns.iter().zip(values).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, column).expect("strings serialize");
        out.push(b':');
        serde_json::to_writer(&mut *out, value).expect("JSON values serialize");
    }
    out.extend_from_slice(b"}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_ranges_cover_the_table_once() {
        let t = TableName::parse("app.Events").unwrap();
        insta::assert_snapshot!(table_selects(&t, 1000, 3).join("\n"), @r#"
        SELECT * FROM "app"."Events" WHERE ctid < '(333,0)'::tid
        SELECT * FROM "app"."Events" WHERE ctid >= '(333,0)'::tid AND ctid < '(666,0)'::tid
        SELECT * FROM "app"."Events" WHERE ctid >= '(666,0)'::tid
        "#);
        assert_eq!(table_selects(&t, 5, 1), [r#"SELECT * FROM "app"."Events""#]);
        // Fewer blocks than workers: empty ranges, still no gap.
        let s = table_selects(&t, 1, 3);
        assert!(s[0].ends_with("ctid < '(0,0)'::tid") && s[2].ends_with("ctid >= '(0,0)'::tid"), "{s:?}");
    }

    #[test]
    fn crate_workers_split_by_md5() {
        let t = TableName::parse("doc.T").unwrap();
        insta::assert_snapshot!(crate_select(&t, 1, 2), @r#"SELECT * FROM "doc"."T" WHERE (((ascii(substr(md5(_id), 1, 1)) - 48) % 39) * 256 + ((ascii(substr(md5(_id), 2, 1)) - 48) % 39) * 16 + (ascii(substr(md5(_id), 3, 1)) - 48) % 39) % 2 = 1"#);
        assert_eq!(crate_select(&t, 0, 1), r#"SELECT * FROM "doc"."T""#);
        let mut out = Vec::new();
        let values = [serde_json::json!(1_700_000_000_123i64), serde_json::json!({"a": [1, "x\n"]})];
        json_object(&["ts".into(), "o\"".into()], &values, &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "{\"ts\":1700000000123,\"o\\\"\":{\"a\":[1,\"x\\n\"]}}\n");
    }

    /// The arithmetic of [`crate_share`] (frozen above) applied to every
    /// possible prefix of `md5(_id)`: each lands on exactly one worker in
    /// range, and shares differ by at most one prefix, for 1 to 64 workers.
    #[test]
    fn crate_split_gives_every_worker_an_even_share() {
        let hex = b"0123456789abcdef";
        let digit = |c: u8| (c as u32 - 48) % 39;
        for (i, &c) in hex.iter().enumerate() {
            assert_eq!(digit(c), i as u32, "{}", c as char);
        }
        let values = 16u32.pow(SPLIT_DIGITS as u32);
        let prefixes = || (0..values).map(|v| format!("{v:0SPLIT_DIGITS$x}"));
        for n in 1..=64u32 {
            let mut shares = vec![0u32; n as usize];
            for p in prefixes() {
                let value = p.bytes().fold(0, |acc, c| acc * 16 + digit(c));
                shares[(value % n) as usize] += 1;
            }
            let (min, max) = (shares.iter().min().unwrap(), shares.iter().max().unwrap());
            assert!(max - min <= 1 && *min > 0, "{n} workers: shares {shares:?}");
            assert_eq!(shares.iter().sum::<u32>(), values);
        }
    }

    /// A gzip export file is a whole stream after every chunk, and after a
    /// failed write (here: garbage where the next chunk began) it is cut
    /// back to one holding exactly the rows counted.
    #[test]
    fn gzip_file_is_whole_after_every_chunk_and_after_a_failure() {
        use std::io::Read;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json.gz");
        let read = || {
            let mut s = String::new();
            flate2::read::GzDecoder::new(File::open(&path).unwrap()).read_to_string(&mut s).map(|_| s)
        };
        let mut f = ExportFile::create(path.clone(), true).unwrap();
        assert_eq!(read().unwrap(), "");
        let mut want = String::new();
        for i in 0..3 {
            let rows: String = (0..1000).map(|r| format!("{{\"chunk\":{i},\"row\":{r}}}\n")).collect();
            f.append(rows.as_bytes()).unwrap();
            f.bytes += rows.len() as u64;
            want.push_str(&rows);
            assert_eq!(read().unwrap(), want, "after chunk {i}");
        }
        f.file.write_all_at(b"torn", f.whole).unwrap();
        let message = f.cut_back(std::io::Error::other("No space left on device"));
        assert!(
            message.contains("t.json.gz: No space left on device; the file ends at its last whole row"),
            "{message}"
        );
        assert_eq!(read().unwrap(), want);
        assert!(f.write(&Chunk::default()).is_err(), "nothing more is written after a failure");
    }

    #[test]
    fn copy_statements() {
        insta::assert_snapshot!(copy_statement("SELECT 1", ExportFormat::Json), @"COPY (SELECT to_json(dbload_row.*) FROM (SELECT * FROM (SELECT 1) dbload_q OFFSET 0) dbload_row) TO STDOUT");
        insta::assert_snapshot!(copy_statement("SELECT 1", ExportFormat::Csv), @"COPY (SELECT 1) TO STDOUT (FORMAT csv, HEADER)");
        assert_eq!(
            import_snapshot("0A-1"),
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '0A-1'"
        );
    }
}
