//! The JSON report: `--output json` on stdout and `--report FILE`.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use serde::Serialize;

/// Any command's report: each is a JSON object with its own schema file.
pub fn write(report: &impl Serialize, out: &mut dyn Write) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, report).context("writing the JSON report")?;
    writeln!(out).context("writing the JSON report")
}

pub fn write_file(report: &impl Serialize, path: &Path) -> Result<()> {
    let file = std::fs::File::create(path).with_context(|| format!("--report: cannot create {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    write(report, &mut out)?;
    out.flush().with_context(|| format!("writing {}", path.display()))
}
