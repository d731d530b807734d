//! `dbload init`: pgbench's tables made and filled on the target, outside
//! the measured pipeline (nothing is measured for a report of figures).

use std::io::Write;

use anyhow::{Context, Result};

use crate::cli::InitArgs;
use crate::config::init::InitConfig;
use crate::run::metrics::{Endpoint, Labels};
use crate::run::signals::{note_early_signals, with_threads};
use crate::target::Started;
use crate::{console, error, report, run};

/// `dbload init`: pgbench's tables on the target; exit 130 when
/// interrupted while filling them.
pub fn init(args: InitArgs, env: &dyn Fn(&str) -> Option<String>, out: &mut dyn Write) -> Result<u8> {
    let cfg = InitConfig::resolve(args, env)?;
    // Bound before anything connects: a port taken is bad usage.
    let endpoint = match &cfg.metrics {
        Some(listen) => {
            let labels =
                Labels { command: "init".into(), run_id: super::output::start().run_id(), instance: 0, point: None };
            Some(Endpoint::bind(listen, labels)?)
        }
        None => None,
    };
    let started = Started::new(&cfg.target, None, note_early_signals)?;
    let done = with_threads(None, async |cancel| {
        let init = run::init::init(&cfg, started.server(), cancel);
        match &endpoint {
            Some(endpoint) => endpoint.during(1, init).await,
            None => init.await,
        }
    })?;
    let printed = out.write_all(report::init::render(&done).as_bytes()).context("writing the report");
    console::printed(out, printed)?;
    if started.removed_at_exit() {
        // Tables made to be used by a later command, in a server about to go.
        console::line(format_args!(
            "dbload init: these tables were made in a throwaway PostgreSQL, which is removed now, and \
             they with it. To run scripts on them (dbload timeit --builtin tpcb-like), give --keep, \
             which leaves the server running and prints its URL, or --url for a server of yours."
        ));
    }
    Ok(if done.interrupted { error::exit::INTERRUPTED } else { error::exit::OK })
}
