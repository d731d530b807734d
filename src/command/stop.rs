//! `dbload stop DIR`: the end of a throwaway server that `--keep` left
//! running, said on stdout with the space it freed.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use crate::{error, throwaway};

/// `dbload stop DIR`: stops a server that `--keep` left running and removes
/// its directory.
pub fn stop(dir: &Path, out: &mut dyn Write) -> Result<u8> {
    let freed = throwaway::stop_kept(dir)?;
    let freed = crate::format::human_size(freed);
    writeln!(out, "dbload: stopped the throwaway PostgreSQL in {} and removed it ({freed} freed)", dir.display())
        .context("writing to stdout")?;
    Ok(error::exit::OK)
}
