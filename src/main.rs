//! The `dbload` binary: parse, run, map the result to an exit code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // clap prints help/version (exit 0) and usage errors (exit 2) itself.
    let cli = dbload::cli::Cli::parse();
    let stdout = std::io::stdout();
    match dbload::run(cli, &mut stdout.lock()) {
        Ok(code) => ExitCode::from(code),
        // Output to a reader that has gone (`dbload results list | head`):
        // what was wanted was read; a run's own report never ends here,
        // as it is printed last and its exit code kept (see `command::output`).
        Err(err) if dbload::console::broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            dbload::console::line(format_args!("dbload: {err:#}"));
            ExitCode::from(dbload::error::exit_code(&err))
        }
    }
}
