//! Where rows come from before a model reads them: files in order, stdin
//! (`-`), or any reader (a query's rows in `insert-from-sql`), each plain or
//! gzip, recognised by its magic bytes whatever the file's name.
//!
//! Reading bytes is not a data model: a model gets an [`Input`] (or text)
//! and never opens a file itself, so the models stay pure and testable from
//! memory, and a command that reads files finds them opened, counted and
//! refused (a missing file, exit 2) in one place, before anything runs.
//! Here too is what reading found ([`Stats`]), which the reports show.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::Result;

use crate::error::usage;

/// One input: its name for messages and its bytes (gzip already undone).
type Named = (String, Box<dyn BufRead + Send>);

/// Where the rows come from: files in order (`-` is stdin), each plain or
/// gzip, opened up front so a missing file is refused before anything runs.
pub struct Input {
    pending: VecDeque<Named>,
    current: Option<Named>,
    all: Vec<String>,
    /// Bytes read from the files so far (as stored: gzip compressed).
    read: Arc<AtomicU64>,
    /// The files' sizes together; none when stdin or a stream is read.
    size: Option<u64>,
    /// Each input's name and identity (device, inode), where it has one.
    ids: Vec<(String, (u64, u64))>,
}

impl Input {
    /// Opens `files` (none: stdin).
    pub fn open(files: &[String]) -> Result<Input> {
        let files: Vec<String> = if files.is_empty() { vec!["-".into()] } else { files.to_vec() };
        let mut pending = VecDeque::new();
        let read = Arc::new(AtomicU64::new(0));
        let mut size = Some(0);
        let mut ids = Vec::new();
        for f in &files {
            let raw: Box<dyn Read + Send> = if f == "-" {
                size = None;
                // What stdin was redirected from, if a file.
                ids.extend(identity(Path::new("/dev/stdin")).map(|id| ("stdin".to_string(), id)));
                Box::new(std::io::stdin())
            } else {
                let file = File::open(f).map_err(|e| {
                    usage(format!("{f}: cannot open it: {e}; give a readable JSON file, or - for stdin"))
                })?;
                let meta = file.metadata().ok();
                if meta.as_ref().is_some_and(|m| m.is_dir()) {
                    return Err(usage(format!(
                        "{f}: is a directory; give the JSON files in it (e.g. {}/*.json), or - for stdin",
                        f.trim_end_matches('/')
                    )));
                }
                ids.extend(meta.as_ref().map(|m| (f.clone(), (m.dev(), m.ino()))));
                let len = meta.filter(|m| m.is_file()).map(|m| m.len());
                size = size.zip(len).map(|(a, b)| a + b);
                Box::new(Counted { inner: file, read: read.clone() })
            };
            let name = if f == "-" { "stdin".to_string() } else { f.clone() };
            let reader = decode(&name, BufReader::with_capacity(1 << 16, raw))?;
            pending.push_back((name, reader));
        }
        let all = pending.iter().map(|(n, _)| n.clone()).collect();
        Ok(Input { pending, current: None, all, read, size, ids })
    }

    /// The input that `path` is (the same file by device and inode, whatever
    /// the path's spelling or symlinks), if any: a file written while it is
    /// read loses its rows.
    pub fn same_file_as(&self, path: &Path) -> Option<&str> {
        let id = identity(path)?;
        self.ids.iter().find(|(_, i)| *i == id).map(|(name, _)| name.as_str())
    }

    /// Input from one reader of JSON text (not gzip), named `name` in messages.
    pub fn from_reader(name: &str, reader: Box<dyn BufRead + Send>) -> Input {
        Input {
            pending: VecDeque::from([(name.to_string(), reader)]),
            current: None,
            all: vec![name.to_string()],
            read: Arc::default(),
            size: None,
            ids: Vec::new(),
        }
    }

    /// For the progress bar's ETA: the bytes read so far and the files'
    /// size; none when the size is unknown (stdin, a stream).
    pub fn progress(&self) -> Option<(Arc<AtomicU64>, u64)> {
        self.size.map(|size| (self.read.clone(), size))
    }

    /// Input from memory (tests).
    pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Result<Input> {
        Ok(Input::from_reader(name, decode(name, BufReader::new(std::io::Cursor::new(bytes)))?))
    }

    /// Whether every input is a file that [`Input::reopen`] can read again
    /// from its start: not stdin, a pipe or a stream (whose size is unknown).
    pub fn rereadable(&self) -> bool {
        self.size.is_some()
    }

    /// The same files opened again from their start, for another run of
    /// the same input (`--runs`); see [`Input::rereadable`].
    pub fn reopen(&self) -> Result<Input> {
        anyhow::ensure!(self.rereadable(), "{}: read once (stdin or a stream), it cannot be read again", self.names());
        Input::open(&self.all)
    }

    /// Every input's name, for messages about all of them.
    pub fn names(&self) -> String {
        self.all.join(", ")
    }

    /// The name of the input being read, for messages about a row of it.
    pub fn current_name(&self) -> &str {
        self.current.as_ref().map_or("input", |(n, _)| n.as_str())
    }

    /// The input being read (none before [`Input::advance`] or after the
    /// last one): its name and its bytes.
    pub fn current(&mut self) -> Option<(&str, &mut (dyn BufRead + Send + 'static))> {
        self.current.as_mut().map(|(name, r)| (name.as_str(), r.as_mut()))
    }

    /// Moves on to the next input; false when there is none.
    pub fn advance(&mut self) -> bool {
        self.current = self.pending.pop_front();
        self.current.is_some()
    }
}

/// A file's device and inode (following symlinks); none if it does not exist.
fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// A file whose bytes read are counted, for the progress bar.
struct Counted<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// The text of input `name`: gzip undone (recognised by the magic bytes
/// 1f 8b), and refused when it is UTF-16, which JSON input never is here
/// (its bytes would be reported one by one as bad rows: "byte 0xff").
fn decode<R: BufRead + Send + 'static>(name: &str, mut r: R) -> Result<Box<dyn BufRead + Send>> {
    let head = r.fill_buf().map_err(|e| read_error(name, e))?;
    let mut text: Box<dyn BufRead + Send> = if head.starts_with(&[0x1f, 0x8b]) {
        let gzip = Gunzip(flate2::bufread::MultiGzDecoder::new(r));
        Box::new(BufReader::with_capacity(1 << 16, gzip))
    } else {
        Box::new(r)
    };
    if let Some(form) = utf16(text.fill_buf().map_err(|e| read_error(name, e))?) {
        return Err(usage(format!(
            "{name}: the text is UTF-16 ({form}); JSON input is read as UTF-8: convert it first, e.g. \
             iconv -f UTF-16 -t UTF-8"
        )));
    }
    Ok(text)
}

/// Which UTF-16 `head` (the first bytes of a text) is written in, if it is:
/// by its byte-order mark, or by JSON's first character being ASCII, whose
/// other byte is then 0 (RFC 8259's way of telling encodings apart).
fn utf16(head: &[u8]) -> Option<&'static str> {
    match head {
        [0xff, 0xfe, ..] => Some("little-endian, with a byte-order mark"),
        [0xfe, 0xff, ..] => Some("big-endian, with a byte-order mark"),
        [a, 0, b, 0, ..] if a.is_ascii() && *a != 0 && b.is_ascii() => Some("little-endian"),
        [0, a, 0, b, ..] if a.is_ascii() && *a != 0 && b.is_ascii() => Some("big-endian"),
        _ => None,
    }
}

/// gzip input whose decoding errors say they are the data's, not the
/// device's: a file cut short or corrupt is bad input (exit 2).
struct Gunzip<R>(flate2::bufread::MultiGzDecoder<R>);

/// A decoding error of gzip input (see [`read_error`]).
#[derive(Debug, thiserror::Error)]
#[error("the gzip data is corrupt or ends early (a file cut short?): {0}")]
struct CorruptGzip(std::io::Error);

impl<R: BufRead> Read for Gunzip<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf).map_err(|e| match e.raw_os_error() {
            Some(_) => e,
            None => std::io::Error::new(std::io::ErrorKind::InvalidData, CorruptGzip(e)),
        })
    }
}

/// An error reading input `name`: bad input (exit 2) when the data is at
/// fault (gzip cut short or corrupt), else the device's error.
pub fn read_error(name: &str, e: std::io::Error) -> anyhow::Error {
    if e.get_ref().is_some_and(|inner| inner.is::<CorruptGzip>()) {
        return usage(format!("{name}: {e}; give the whole file, or a plain JSON one"));
    }
    anyhow::Error::new(e).context(format!("reading {name}"))
}

/// What reading rows from the input found (all of it, once the run is
/// over): the model that reads them counts here, the reports show it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Rows read (JSON values), good and bad.
    pub rows_read: u64,
    /// Rows that could not be written (malformed, or a value that does not fit).
    pub rejected: u64,
    /// With `--on-error abort`: the bad row where reading stopped, and why.
    pub abort: Option<String>,
    /// Why the input could not be read on (a gzip file cut short, a value
    /// past the limit, the source query failing): not a row that
    /// `--on-error skip` could pass.
    pub read_error: Option<String>,
    /// The rejects file could not be written.
    pub write_error: Option<String>,
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    #[test]
    fn files_report_their_progress_in_bytes_read() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.json");
        std::fs::write(&plain, "{\"a\": 1}\n{\"a\": 2}\n").unwrap();
        let gz = dir.path().join("b.json.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"{\"a\": 3}\n").unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        let files = [plain.display().to_string(), gz.display().to_string()];
        let size: u64 = files.iter().map(|f| std::fs::metadata(f).unwrap().len()).sum();
        let mut input = Input::open(&files).unwrap();
        let (read, total) = input.progress().expect("files have a size");
        assert_eq!(total, size);
        let mut lines = Vec::new();
        while input.advance() {
            input.current.as_mut().unwrap().1.read_to_end(&mut lines).unwrap();
        }
        assert_eq!(String::from_utf8(lines).unwrap().lines().count(), 3);
        assert_eq!(read.load(Ordering::Relaxed), size, "every byte of both files, the gzip one as stored");
        assert!(Input::open(&["-".into()]).unwrap().progress().is_none(), "stdin has no size");
    }

    /// A file that cannot be opened is bad usage naming it (exit 2), found
    /// when the input is opened, before anything runs, even after files
    /// that open.
    #[test]
    fn a_file_that_cannot_be_opened_is_refused_up_front() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("a.json");
        std::fs::write(&good, "{\"a\": 1}\n").unwrap();
        let missing = dir.path().join("missing.json").display().to_string();
        let e = Input::open(&[good.display().to_string(), missing.clone()]).err().expect("refused");
        assert_eq!(crate::error::exit_code(&e), 2);
        let msg = e.to_string();
        assert!(msg.starts_with(&format!("{missing}: cannot open it: ")) && msg.contains("or - for stdin"), "{msg}");
    }

    /// Issue 29, item 7: UTF-16 input was reported as a bad row, "byte
    /// 0xff"; it is refused by name, with a byte-order mark or without.
    #[test]
    fn utf16_text_is_refused_by_name() {
        let le: Vec<u8> = "{\"a\": 1}".encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = "[1]".encode_utf16().flat_map(u16::to_be_bytes).collect();
        for (bytes, form) in [(le, "UTF-16 (little-endian)"), (be, "UTF-16 (big-endian)")] {
            let e = Input::from_bytes("in.json", bytes).err().expect("refused");
            assert_eq!(crate::error::exit_code(&e), 2);
            assert!(e.to_string().starts_with(&format!("in.json: the text is {form}")), "{e}");
        }
        for text in ["{\"a\": 1}", "1", "", "\u{feff}[1]"] {
            Input::from_bytes("in.json", text.as_bytes().to_vec()).unwrap();
        }
    }
}
