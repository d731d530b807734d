//! Export's side of the drivers: the dispatch over each protocol's
//! reader: a PostgreSQL-family server's COPY stream and CrateDB's cursor
//! over its PostgreSQL protocol ([`pg::export`](super::pg::export)), or
//! CrateDB's cursor over HTTP ([`cratedb_http::export`](super::cratedb_http::export)).
//! The chunks they read and the files they write are in [`file`](mod@file). Which
//! rows each worker reads is SQL, in [`crate::dialect`].
//!
//! Nothing is collected: a chunk is read, written to the file, and its
//! buffer reused; the stream's own backpressure (or the next page's
//! request) holds the server back while the file is written.

pub mod file;

use anyhow::Result;

use self::file::{Chunk, ExportFile};
use super::admin::Admin;
use super::cratedb_http::export::PageWorker;
use super::cratedb_http::CrateTarget;
use super::pg::cursor::Cursor;
use super::pg::error::query_refused;
use super::pg::export::{CopyWorker, CursorWorker};
use super::pg::PgTarget;
use crate::dialect::{Engine, ExportFormat};
use crate::error::usage;
use crate::ident::TableName;
use crate::op::{ErrorCode, Executor, OpError};
use crate::outcome::ExportedFile;

/// What only a PostgreSQL-family server's export does (CrateDB's reads
/// cursors), asked of an HTTP connection.
const COPY_ONLY: &str = "a COPY export runs over the PostgreSQL protocol: give a postgres:// URL";

/// One SELECT per worker over `table`'s block ranges (a hypertable's time
/// ranges), and the planner's estimate of its rows; `target` names the
/// server in an error.
pub async fn split_table(
    admin: &Admin,
    table: &TableName,
    workers: u32,
    engine: Engine,
    target: &str,
) -> Result<(Vec<String>, Option<u64>)> {
    super::pg::export::split_table(admin.client(COPY_ONLY)?, table, workers, engine, target).await
}

/// A `--query` that does not parse, returns no columns or two of one name
/// is the user's to fix.
pub async fn check_query(admin: &Admin, query: &str) -> Result<()> {
    super::pg::export::check_query(admin.client(COPY_ONLY)?, query).await
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
    /// Connects and streams `copy` (`COPY ... TO STDOUT`), in `snapshot`
    /// when the export has one.
    pub async fn copy(
        pg: &PgTarget,
        snapshot: Option<&str>,
        copy: String,
        format: ExportFormat,
        file: ExportFile,
        chunk_rows: usize,
    ) -> Result<ExportWorker> {
        let opened = CopyWorker::open(pg, snapshot, copy, format, file, chunk_rows).await;
        opened.map(|c| ExportWorker::Copy(Box::new(c)))
    }

    /// Worker `w`'s cursor over `select` on CrateDB's HTTP endpoint, a page
    /// of `page` rows per fetch. A select CrateDB refuses as a syntax error
    /// (its code 4000) is the user's `option` to fix (exit 2).
    pub async fn pages(
        c: &CrateTarget,
        w: u32,
        select: &str,
        page: usize,
        file: ExportFile,
        option: &str,
    ) -> Result<ExportWorker> {
        match PageWorker::open(c, w, select, page, file).await {
            Ok(p) => Ok(ExportWorker::Pages(Box::new(p))),
            Err(e) if option == "--query" && ErrorCode::of(&e) == Some(ErrorCode::CrateDb(4000)) => {
                Err(usage(format!("--query: {e}")))
            }
            Err(e) => Err(e.context("opening the workers' connections")),
        }
    }

    /// A cursor over `select` on a PostgreSQL-protocol connection of its
    /// own (CrateDB's, which has no `COPY TO STDOUT`), a page of `page` rows.
    pub async fn cursor(
        pg: &PgTarget,
        select: &str,
        format: ExportFormat,
        file: ExportFile,
        page: usize,
        option: &str,
    ) -> Result<ExportWorker> {
        let client = pg.connect().await?;
        let cursor = Cursor::declare(client, select, page).await.map_err(|e| query_refused(e, option))?;
        CursorWorker::open(cursor, format, file).map(|c| ExportWorker::Cursor(Box::new(c))).map_err(usage)
    }

    /// Flushes and closes the file (a gzip file gets its trailer), also
    /// after Ctrl-C: whatever was written is readable.
    pub fn finish(self) -> ExportedFile {
        match self {
            ExportWorker::Copy(w) => w.finish(),
            ExportWorker::Pages(w) => w.finish(),
            ExportWorker::Cursor(w) => w.finish(),
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
            w.cancel().await;
        }
    }
}
