//! Drivers: the code that speaks each protocol a target is reached by,
//! one folder each: PostgreSQL's wire protocol (`pg/`: PostgreSQL,
//! TimescaleDB, Citus, CrateDB's port 5432), CrateDB's HTTP `_sql` endpoint
//! (`cratedb_http/`), and plain HTTP (`http/`), plus the TLS they share.
//! The files beside the folders dispatch over either SQL protocol, so a
//! command is written once for every engine: `admin` (detection, DDL),
//! `sink` (ingest, with `spec`: what its sinks write), `query` (query
//! mixes), `export`, `source` (insert-from-sql's). The statements they send are built in
//! [`crate::dialect`]. What a run points at is a
//! `Target` (in the `target` module, which names the drivers, not the other
//! way round).

pub mod admin;
pub mod cratedb_activity;
pub mod cratedb_http;
pub mod export;
pub mod http;
pub mod pg;
pub mod query;
pub mod sink;
pub mod source;
pub mod spec;
mod tls;

/// A connection that could not be opened because this process has no file
/// descriptor left (`EMFILE`, or the system none: `ENFILE`): the limit is
/// this machine's setting, not the target's fault, so it is named (exit 2)
/// instead of the host name being blamed. `None` for any other error.
pub(crate) fn out_of_descriptors(url: &str, e: &std::io::Error) -> Option<anyhow::Error> {
    use nix::errno::Errno;
    use nix::sys::resource::{getrlimit, Resource};
    let errno = Errno::from_raw(e.raw_os_error()?);
    if errno != Errno::EMFILE && errno != Errno::ENFILE {
        return None;
    }
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap_or((0, 0));
    Some(crate::error::usage(format!(
        "cannot connect to {url}: {e}: this process may have {soft} files and connections open at once \
         (ulimit -n {soft}, at most {hard}): raise it (ulimit -n {hard}) or open fewer connections"
    )))
}

pub use admin::{Admin, EngineInfo};
pub use cratedb_activity::{CrateActivity, CrateWho};
pub use pg::activity::{ActivityConn, Totals, Who};
pub use pg::{PgTarget, SslMode};
