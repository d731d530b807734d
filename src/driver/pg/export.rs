//! Export's readers over the PostgreSQL protocol: a PostgreSQL-family
//! server's COPY stream, which formats the rows as JSON or CSV itself
//! ([`CopyWorker`]), and a cursor's pages on CrateDB, whose PostgreSQL
//! protocol has no `COPY ... TO STDOUT` ([`CursorWorker`]).

use std::pin::Pin;

use anyhow::{Context, Result};
use futures_util::StreamExt;
use tokio_postgres::{Client, CopyOutStream};

use super::cursor::{raw_values, Cursor};
use super::decode::binary_text::RowText;
use super::decode::copy_text::JsonLines;
use super::error::classify;
use super::error::query_refused;
use super::{Canceller, PgTarget};
use crate::dialect::{literal, postgres as sql, timescaledb, Engine, ExportFormat};
use crate::driver::export::file::{distinct_names, Chunk, ExportFile, CHUNK_BYTES};
use crate::error::usage;
use crate::ident::TableName;
use crate::op::OpError;
use crate::outcome::ExportedFile;

/// How COPY's output becomes file content.
enum Decode {
    /// COPY text of one JSON value per row: unescaped into JSON lines.
    Json(JsonLines),
    /// CSV as is; the first message is the header line, not a row.
    Csv { header_pending: bool },
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
    ) -> Result<CopyWorker> {
        let client = pg.connect().await?;
        if let Some(s) = snapshot {
            client.batch_execute(&sql::import_snapshot(s)).await.context("joining the export's snapshot")?;
        }
        let decode = match format {
            ExportFormat::Json => Decode::Json(JsonLines::default()),
            ExportFormat::Csv => Decode::Csv { header_pending: true },
        };
        let cancel = pg.canceller(&client);
        let chunk_rows = chunk_rows as u64;
        let w = CopyWorker { client, cancel, copy, stream: None, decode, file, chunk_rows, ended: false };
        Ok(w)
    }

    /// Reads the next chunk and writes it. A broken stream or file ends the
    /// worker (its file is then incomplete); rows of a chunk cut short by
    /// an error are not written, so a file holds exactly the rows counted.
    pub(in crate::driver) async fn transfer(&mut self, chunk: &mut Chunk) -> Result<u64, OpError> {
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

    /// Makes the file durable and says what it holds.
    pub(in crate::driver) fn finish(self) -> ExportedFile {
        self.file.finish(self.ended)
    }

    /// Cancels the COPY on the server.
    pub(in crate::driver) async fn cancel(&self) {
        self.cancel.cancel().await
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
    pub fn open(cursor: Cursor, format: ExportFormat, file: ExportFile) -> Result<CursorWorker, String> {
        let columns = cursor.columns();
        distinct_names(columns.iter().map(|(name, _)| name.as_str()))?;
        let text = RowText::new(&columns)?;
        let header_pending = format == ExportFormat::Csv;
        Ok(CursorWorker { cursor, text, format, header_pending, file })
    }

    /// Fetches the next page and writes it. A broken cursor or a value
    /// that cannot be written ends the worker, its file incomplete.
    pub(in crate::driver) async fn transfer(&mut self, chunk: &mut Chunk) -> Result<u64, OpError> {
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

    /// Makes the file durable and says what it holds.
    pub(in crate::driver) fn finish(self) -> ExportedFile {
        let ended = self.cursor.ended();
        self.file.finish(ended)
    }
}

/// One SELECT per worker over the table's block ranges (a hypertable's
/// time ranges), and the planner's estimate of its rows.
pub async fn split_table(
    client: &Client,
    table: &TableName,
    workers: u32,
    engine: Engine,
    target: &str,
) -> Result<(Vec<String>, Option<u64>)> {
    let row = client.query_opt(sql::TABLE_FACTS, &[&table.sql()]).await.context("reading the table's size")?;
    let Some(row) = row else {
        return Err(usage(format!("--table {table}: no such table on {target}")));
    };
    let (relkind, blocks, estimate): (String, i64, Option<i64>) = (row.get(0), row.get(1), row.get(2));
    if workers > 1 && !sql::has_ctid(&relkind) {
        return Err(usage(format!(
            "--table {table} is not a table (a view or a foreign table): its rows have no block ranges to split \
             between workers; use --workers 1"
        )));
    }
    if workers > 1 && engine == Engine::Citus {
        return Err(usage(format!(
            "--workers {workers} on Citus: block ranges do not split a distributed table (its rows are on the \
             workers' shards); use --workers 1, Citus reads the shards in parallel itself"
        )));
    }
    let estimate = estimate.filter(|&n| n > 0).map(|n| n as u64);
    if workers > 1 && engine == Engine::Timescaledb {
        let slices = client.query(timescaledb::TIME_SLICES, &[&table.sql()]).await.context("reading the chunks")?;
        if let Some(first) = slices.first() {
            let starts: Vec<String> = slices.iter().map(|r| r.get(1)).collect();
            return Ok((timescaledb::time_selects(table, first.get(0), &starts, workers), estimate));
        }
    }
    Ok((sql::table_selects(table, blocks.max(0) as u64, workers), estimate))
}

/// A query that does not parse, returns no columns or two of one name is
/// the user's to fix.
pub async fn check_query(client: &Client, query: &str) -> Result<()> {
    match client.prepare(query).await {
        Ok(s) if s.columns().is_empty() => {
            Err(usage(format!("--query {}: returns no rows to export; give a SELECT", literal(query))))
        }
        Ok(s) => distinct_names(s.columns().iter().map(|c| c.name())).map_err(usage),
        Err(e) => Err(query_refused(e, "--query")),
    }
}
