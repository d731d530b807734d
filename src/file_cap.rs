//! Files that dbload reads whole (configuration, workloads, mappings, run
//! files, pgbench scripts, SQL on stdin, request bodies, password, service
//! and CA files, reports), each kind under a cap, through this one reader.
//!
//! Why: a file read whole with no bound takes whatever it holds into
//! memory, and a device or a pipe holds no end (`compare a.json /dev/zero`
//! drew the kernel's OOM killer at 20 GB). A file over its
//! kind's cap is bad input (exit 2) that names the file and the cap. A
//! regular file is refused on its size before a byte is read; what has no
//! size (stdin, a pipe, a device) is read to one byte past the cap at most.
//! Data inputs (insert-json's rows, export's files) stream instead, and
//! keep their own limits in `input.rs` and the drivers.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use anyhow::Result;

use crate::error::usage;

/// The most dbload reads of a configuration file, a workload, a mapping, a
/// run file, a pgbench script, SQL from stdin or a request body.
pub const CONFIG_BYTES: u64 = 64 << 20;
/// The most dbload reads of a report (`compare`, `results`, the results
/// store's files): a report holds histograms and timelines, so more.
pub const REPORT_BYTES: u64 = 256 << 20;

/// One kind of file and how much of it dbload reads.
#[derive(Debug, Clone, Copy)]
pub struct Cap {
    bytes: u64,
    /// What the file is, for messages: "the workload file".
    kind: &'static str,
}

impl Cap {
    /// A file of configuration (see [`CONFIG_BYTES`]).
    pub const fn config(kind: &'static str) -> Cap {
        Cap { bytes: CONFIG_BYTES, kind }
    }

    /// A report (see [`REPORT_BYTES`]).
    pub const fn report(kind: &'static str) -> Cap {
        Cap { bytes: REPORT_BYTES, kind }
    }

    /// The bad-input error (exit 2) for `failure`, naming the file as `name`.
    pub fn refuse(self, name: &str, failure: Failure) -> anyhow::Error {
        let kind = self.kind;
        match failure {
            Failure::Io(e) => usage(format!("{name}: cannot read {kind}: {e}")),
            Failure::OverCap => usage(format!(
                "{name}: {kind} is larger than {} MiB, the most dbload reads of it: give a smaller file",
                self.bytes >> 20
            )),
            Failure::NotText(at) => {
                usage(format!("{name}: {kind} is not UTF-8 text (byte {at} is not): save it as UTF-8"))
            }
        }
    }
}

/// Why a file was not read.
#[derive(Debug)]
pub enum Failure {
    /// It could not be opened or read.
    Io(io::Error),
    /// It holds more than its cap.
    OverCap,
    /// Text was expected; the byte at this offset does not start UTF-8.
    NotText(usize),
}

/// The bytes of `path`, at most `cap`'s; `name` (the path, or the option
/// and the path) names it in errors.
pub fn read(path: &Path, name: &str, cap: Cap) -> Result<Vec<u8>> {
    bytes_of(path, cap).map_err(|f| cap.refuse(name, f))
}

/// [`read`] for text.
pub fn read_text(path: &Path, name: &str, cap: Cap) -> Result<String> {
    text_of(path, cap).map_err(|f| cap.refuse(name, f))
}

/// The text of `path`, or why not: for a file that may be missing (a
/// password or service file), where only some failures are errors.
pub fn text_of(path: &Path, cap: Cap) -> Result<String, Failure> {
    text(bytes_of(path, cap)?)
}

/// What `reader` gives (stdin, a pipe) up to `cap`, as text; `name` names
/// it in errors.
pub fn read_text_from(reader: &mut dyn Read, name: &str, cap: Cap) -> Result<String> {
    taken(reader, cap).and_then(text).map_err(|f| cap.refuse(name, f))
}

/// The bytes of `path`, or why not (see [`text_of`]).
pub fn bytes_of(path: &Path, cap: Cap) -> Result<Vec<u8>, Failure> {
    let mut file = File::open(path).map_err(Failure::Io)?;
    // A regular file says its size: refused without reading it.
    if file.metadata().is_ok_and(|m| m.is_file() && m.len() > cap.bytes) {
        return Err(Failure::OverCap);
    }
    taken(&mut file, cap)
}

/// Reads at most one byte past the cap, so an endless source ends the reading.
fn taken(reader: &mut dyn Read, cap: Cap) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    reader.take(cap.bytes + 1).read_to_end(&mut bytes).map_err(Failure::Io)?;
    if bytes.len() as u64 > cap.bytes {
        return Err(Failure::OverCap);
    }
    Ok(bytes)
}

fn text(bytes: Vec<u8>) -> Result<String, Failure> {
    String::from_utf8(bytes).map_err(|e| Failure::NotText(e.utf8_error().valid_up_to()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEST: Cap = Cap::config("the test file");

    fn message(e: anyhow::Error) -> String {
        assert_eq!(crate::error::exit_code(&e), 2, "{e}");
        e.to_string()
    }

    /// A sparse file one byte over the cap is refused on its size: nothing is read.
    #[test]
    fn a_file_over_its_cap_is_refused_by_its_size() {
        let file = tempfile::NamedTempFile::new().unwrap();
        file.as_file().set_len(CONFIG_BYTES + 1).unwrap();
        let e = message(read(file.path(), "big.yml", TEST).unwrap_err());
        assert_eq!(e, "big.yml: the test file is larger than 64 MiB, the most dbload reads of it: give a smaller file");
        file.as_file().set_len(CONFIG_BYTES).unwrap();
        assert_eq!(read(file.path(), "big.yml", TEST).unwrap().len() as u64, CONFIG_BYTES);
    }

    /// What has no size (a device, a pipe) is read to one byte past the cap.
    #[test]
    fn an_endless_source_is_read_to_its_cap_and_refused() {
        let e = message(read_text(Path::new("/dev/zero"), "/dev/zero", Cap::report("the report")).unwrap_err());
        assert!(e.starts_with("/dev/zero: the report is larger than 256 MiB"), "{e}");
        let mut endless = io::repeat(b'x');
        let e = message(read_text_from(&mut endless, "stdin", TEST).unwrap_err());
        assert!(e.starts_with("stdin: the test file is larger than 64 MiB"), "{e}");
        let mut short = &b"select 1;"[..];
        assert_eq!(read_text_from(&mut short, "stdin", TEST).unwrap(), "select 1;");
    }

    #[test]
    fn unreadable_and_binary_files_are_named() {
        let e = message(read(Path::new("/no/such.yml"), "--file /no/such.yml", TEST).unwrap_err());
        assert!(e.starts_with("--file /no/such.yml: cannot read the test file: "), "{e}");
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), b"ok\xff").unwrap();
        let e = message(read_text(file.path(), "x.sql", TEST).unwrap_err());
        assert_eq!(e, "x.sql: the test file is not UTF-8 text (byte 2 is not): save it as UTF-8");
        assert!(matches!(text_of(Path::new("/no/such"), TEST), Err(Failure::Io(_))));
    }
}
