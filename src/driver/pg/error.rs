//! How a PostgreSQL-protocol error is told and sorted: its whole chain in
//! one line (tokio-postgres's own message is only the kind of failure), a
//! query the server refused as the user's to fix, and a failed operation
//! classified for the loop. A leaf of `pg/`: the connection's setup
//! (`conninfo.rs`) and the sinks, queries and exports all tell errors the
//! same way without naming the target that uses them.

use crate::op::{ErrorCode, OpError};

/// tokio-postgres's own message is only the kind of failure ("error
/// connecting to server"); the reason is further down the chain.
pub(super) fn error_text(err: &(dyn std::error::Error + 'static)) -> String {
    let texts: Vec<String> = error_chain(err).iter().map(ToString::to_string).collect();
    texts.join(": ")
}

/// A query the server refused is the user's to fix (exit 2, with the
/// server's reason); anything else (a lost connection) is not.
pub fn query_refused(e: tokio_postgres::Error, option: &str) -> anyhow::Error {
    match e.as_db_error() {
        Some(db) => crate::error::usage(format!("{option}: {} (SQLSTATE {})", db.message(), db.code().code())),
        None => anyhow::Error::new(e).context(format!("checking {option}")),
    }
}

/// Classifies a failed operation: by SQLSTATE, or as a lost connection.
/// A FATAL error (e.g. 57P01, `pg_terminate_backend`) ends the session
/// even if the client has not seen the connection close yet.
pub(super) fn classify(e: &tokio_postgres::Error, closed: bool) -> OpError {
    match e.as_db_error() {
        Some(db) => {
            let ends_session = closed || matches!(db.severity(), "FATAL" | "PANIC");
            let code = Some(ErrorCode::Sqlstate(db.code().code().to_string()));
            OpError {
                fatal: ends_session,
                code,
                ..OpError::new(format!("SQLSTATE {}", db.code().code()), db.message())
            }
        }
        None if closed || e.is_closed() => OpError::fatal("connection lost", e.to_string()),
        None => OpError::new("client error", e.to_string()),
    }
}

/// `err` and its sources, outermost first.
pub(super) fn error_chain<'a>(
    err: &'a (dyn std::error::Error + 'static),
) -> Vec<&'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(err), |e| (*e).source()).collect()
}
