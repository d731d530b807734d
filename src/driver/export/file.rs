//! A worker's chunks of an export and the file it writes them to, plain
//! or gzip, whole after every chunk. Each protocol's reader fills the
//! chunks; the dispatch over the readers (`driver/export.rs`) and the
//! readers share this file, so they need not name each other.
//!
//! Nothing is collected: a chunk (at most `--chunk-rows` rows or
//! [`CHUNK_BYTES`] of a COPY stream, or one page) is read, written to the
//! file, and its buffer reused.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use anyhow::{Context, Result};
use flate2::write::DeflateEncoder;

use crate::op::{OpError, Operation, Source};
use crate::outcome::ExportedFile;

/// A chunk ends at this many bytes even before `--chunk-rows` rows.
pub const CHUNK_BYTES: usize = 1 << 20;

/// Refuses a query whose columns share a name: a row is written as one
/// JSON object (or under one CSV header) keyed by the names, and readers
/// keep one value of a key given twice (`{"x":1,"x":2}` reads as `{"x":2}`).
pub fn distinct_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    match names.into_iter().find(|name| !seen.insert(*name)) {
        Some(name) => Err(format!(
            "--query: two columns are named `{name}`, and each row is written as one object keyed by the names: \
             alias them (`select a.x, b.x as x2`)"
        )),
        None => Ok(()),
    }
}

/// A chunk of decoded rows on its way to a file; its buffer is reused.
#[derive(Debug, Default)]
pub struct Chunk {
    pub(in crate::driver) bytes: Vec<u8>,
    pub(in crate::driver) rows: u64,
    /// The stream ended with this chunk.
    pub(in crate::driver) end: bool,
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

impl ExportFile {
    /// Creates (or truncates) `path`; a gzip file starts as an empty stream.
    /// gzip at the fastest level: export is measured, and level 6 would make
    /// the client the bottleneck.
    pub fn create(path: PathBuf, gzip: bool) -> Result<ExportFile> {
        let file = File::create(&path).map_err(|e| {
            crate::error::usage(format!(
                "--out: cannot create {}: {e}; give a directory you can write in",
                path.display()
            ))
        })?;
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

    /// Writes a chunk's whole rows; returns how many. Blocking: the
    /// worker's thread (`run::cores`) waits for the file, and the other
    /// workers on it with it, as a pgbench thread's clients wait for its
    /// log. A file that cannot be written ends the worker, cut back to its
    /// last whole chunk.
    pub(in crate::driver) fn write(&mut self, chunk: &Chunk) -> Result<u64, OpError> {
        if let Some(e) = &self.error {
            return Err(OpError::fatal("write error", e.clone()));
        }
        if let Err(e) = self.append(&chunk.bytes) {
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
    pub(in crate::driver) fn finish(mut self, complete: bool) -> ExportedFile {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
