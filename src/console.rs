//! What dbload says on the console: messages on stderr (errors, warnings,
//! progress lines) and a command's report on stdout, written so that a
//! stream nobody reads any more (`dbload ... 2>&1 | head`) costs the lines,
//! never the run. `eprintln!` panics when stderr cannot
//! be written, which turned an unreachable target's exit 3 into a panic's
//! 101; a report printed first and refused by a closed stdout lost the
//! `--html` page, the `--report` file and the kept run, and exited 1. So a
//! command writes its files and keeps its run first, prints last, and a
//! reader that has gone is no failure.

use std::fmt;
use std::io::{self, Write as _};

/// Writes `args` and a newline to stderr; a failure to write is ignored.
pub fn line(args: fmt::Arguments<'_>) {
    let _ = writeln!(io::stderr().lock(), "{args}");
}

/// Writes `text` to stderr as it is; a failure to write is ignored.
pub fn text(text: &str) {
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

/// What printing a report to `out` gave, flushed: a reader that has gone
/// is no failure, as the report was printed last and the command's exit
/// code stands.
pub fn printed(out: &mut dyn io::Write, printing: anyhow::Result<()>) -> anyhow::Result<()> {
    use anyhow::Context as _;
    match printing.and_then(|()| out.flush().context("writing the report")) {
        Err(e) if broken_pipe(&e) => Ok(()),
        done => done,
    }
}

/// Whether `err` comes from writing to a pipe whose reader has gone
/// (`dbload ... | head`): the output was not wanted any more, which is no
/// failure of the work (ripgrep's rule).
pub fn broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        let kind = match cause.downcast_ref::<serde_json::Error>() {
            // A JSON report written to the pipe: serde_json keeps the io::Error's kind only.
            Some(json) => json.io_error_kind(),
            None => cause.downcast_ref::<io::Error>().map(io::Error::kind),
        };
        kind == Some(io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context as _;

    #[test]
    fn a_broken_pipe_is_found_anywhere_in_the_chain() {
        let pipe = || Err::<(), _>(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(broken_pipe(&pipe().context("writing the report").context("emit").unwrap_err()));
        let other = Err::<(), _>(io::Error::from(io::ErrorKind::StorageFull)).context("writing the report");
        assert!(!broken_pipe(&other.unwrap_err()));
        assert!(!broken_pipe(&anyhow::anyhow!("broken pipe, as text only")));
        let json = serde_json::to_writer(&mut BrokenPipe, &[1, 2]).context("writing the JSON report");
        assert!(broken_pipe(&json.unwrap_err()));
        let mut gone = BrokenPipe;
        let text = io::Write::write_all(&mut gone, b"report").context("writing the report");
        printed(&mut gone, text).unwrap();
        assert!(printed(&mut gone, Err(anyhow::anyhow!("disk full"))).is_err());
    }

    struct BrokenPipe;

    impl io::Write for BrokenPipe {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
}
