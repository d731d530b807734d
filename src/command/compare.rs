//! `dbload compare`: the reports it is given gathered (files, or runs of
//! the results store named by their run_id or `--last`), then compared
//! side by side by [`crate::compare`], which reads reports only.

use std::io::Write;
use std::path::Path;

use anyhow::Result;

use crate::cli::{CompareArgs, OutputFormat};
use crate::compare::{self, Loaded, WorseLimit};
use crate::config::{self, results::Store};
use crate::results;

/// `dbload compare A B [C …]`: exit 1 when a `--fail-if-worse` limit is
/// breached, 2 for a report that cannot be read, an unknown run id or a
/// bad limit.
pub fn compare(args: CompareArgs, env: &dyn Fn(&str) -> Option<String>, out: &mut dyn Write) -> Result<u8> {
    let limits = args.fail_if_worse.iter().map(|s| WorseLimit::parse(s)).collect::<Result<Vec<_>>>()?;
    if let Some(path) = &args.html {
        config::check_writable("--html", path)?;
    }
    // The store is resolved only when a run of it is named: report files
    // alone need no data directory.
    let store = || Store::resolve(args.store.clone(), env);
    let mut reports = Vec::new();
    for given in &args.reports {
        let path = Path::new(given);
        reports.push(if path.exists() || !looks_like_run_id(given) {
            Loaded::from_file(path)?
        } else {
            Loaded::from_kept(results::fetch(&store()?, given, "compare")?)?
        });
    }
    if let Some(n) = args.last {
        for kept in results::last(&store()?, n as usize)? {
            reports.push(Loaded::from_kept(kept)?);
        }
    }
    compare::run(reports, &limits, args.html.as_deref(), args.output == OutputFormat::Json, out)
}

/// An argument of `compare` that is no file and reads as the start of a
/// run_id (hex digits and dashes) names a run of the results store.
fn looks_like_run_id(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}
