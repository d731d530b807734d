//! The commands that read the results store: `dbload results list|show`
//! (the runs kept) and `dbload report --run-id` (a distributed run's
//! instances merged into one report).

use std::io::Write;

use anyhow::{Context, Result};

use crate::cli::{OutputFormat, ReportArgs, ResultsAction, ResultsCommandArgs};
use crate::config::{self, results::Store};
use crate::{console, error, report, results};

/// `dbload report --run-id ID`: the instances of a distributed run merged
/// into one report; exit 1 when one is missing or failed.
pub fn merged_report(args: ReportArgs, env: &dyn Fn(&str) -> Option<String>, out: &mut dyn Write) -> Result<u8> {
    if let Some(path) = &args.html {
        config::check_writable("--html", path)?;
    }
    let store = Store::resolve(args.store, env)?;
    let (merged, exit_code) = results::merged(&store, &args.run_id)?;
    if let Some(path) = &args.html {
        report::html::write_file(&merged, path)?;
    }
    let printed = match args.output {
        OutputFormat::Text => out.write_all(results::merge::render(&merged).as_bytes()).context("writing the report"),
        OutputFormat::Json => report::json::write(&merged, out),
    };
    console::printed(out, printed)?;
    Ok(exit_code)
}

/// `dbload results list|show`: reads the store the flags name.
pub fn results_command(
    args: ResultsCommandArgs,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<u8> {
    let text = match args.action {
        ResultsAction::List { store, limit, tag, command, since } => {
            let filter = results::Filter::new(&tag, command, since.as_deref(), chrono::Utc::now())?;
            results::list(&Store::resolve(store, env)?, &filter, limit)?
        }
        ResultsAction::Show { id, store, histograms, output, html } => {
            if let Some(path) = &html {
                config::check_writable("--html", path)?;
            }
            results::show(&Store::resolve(store, env)?, &id, histograms, output == OutputFormat::Json, html.as_deref())?
        }
    };
    out.write_all(text.as_bytes()).context("writing to stdout")?;
    Ok(error::exit::OK)
}
