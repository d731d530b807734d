//! `dbload completions` and `dbload man`: shell completions and man pages,
//! made from the clap definitions so that they know every command and flag
//! of this build, in the same words as `--help`.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::cli::Cli;
use crate::error;

/// `dbload completions SHELL`: the script, made from the clap definitions
/// so that it knows every command and flag of this build.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn Write) -> Result<u8> {
    // Made in memory first: clap_complete panics on a failed write (a
    // closed pipe), where dbload reports it.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "dbload", &mut script);
    out.write_all(&script).context("writing to stdout")?;
    Ok(error::exit::OK)
}

/// `dbload man [DIR]`: dbload(1) on `out`, or every command's page into
/// `dir`, made from the clap definitions (the same text as `--help`).
pub fn man(dir: Option<&Path>, out: &mut dyn Write) -> Result<u8> {
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .and_then(|()| clap_mangen::generate_to(Cli::command(), dir))
                .with_context(|| format!("writing the man pages into {}", dir.display()))?;
        }
        None => clap_mangen::Man::new(Cli::command()).render(out).context("writing to stdout")?,
    }
    Ok(error::exit::OK)
}
