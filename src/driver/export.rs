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

use self::file::Chunk;
use super::cratedb_http::export::PageWorker;
use super::pg::export::{CopyWorker, CursorWorker};
use crate::op::{Executor, OpError};
use crate::outcome::ExportedFile;

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
