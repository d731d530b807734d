//! The `dbload` binary: parse, run, map the result to an exit code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // clap prints help/version (exit 0) and usage errors (exit 2) itself.
    let cli = dbload::cli::Cli::parse();
    let stdout = std::io::stdout();
    match dbload::run(cli, &mut stdout.lock()) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("dbload: {err:#}");
            ExitCode::from(dbload::error::exit_code(&err))
        }
    }
}
