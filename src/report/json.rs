//! The JSON report: `--output json` on stdout and `--report FILE`.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use serde::Serialize;

/// Any command's report: each is a JSON object with its own schema file.
/// Written with a newline in one piece: serialized straight into a
/// line-buffered stdout, it went out one `write` per line.
pub fn write(report: &impl Serialize, out: &mut dyn Write) -> Result<()> {
    let mut json = serde_json::to_vec_pretty(report).context("the JSON report")?;
    json.push(b'\n');
    out.write_all(&json).context("writing the JSON report")
}

pub fn write_file(report: &impl Serialize, path: &Path) -> Result<()> {
    let file = std::fs::File::create(path).with_context(|| format!("--report: cannot create {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    write(report, &mut out)?;
    out.flush().with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the writes it is given, as stdout's line buffer would make
    /// each one a system call.
    #[derive(Default)]
    struct Writes(Vec<usize>);

    impl Write for Writes {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.push(buf.len());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// stdout is line-buffered: a report serialized into it piece by piece
    /// went out in one `write` per line (457 for a timeit report).
    #[test]
    fn a_report_is_written_in_one_piece() {
        let report = serde_json::json!({"count": 1, "latency": {"p50": 1.0, "p99": 2.0}});
        let mut out = Writes::default();
        write(&report, &mut out).unwrap();
        assert_eq!(out.0.len(), 1, "{:?}", out.0);
    }
}
