//! Error kinds that decide dbload's exit code.
//!
//! Most code returns `anyhow::Error` with short context; where the exit code
//! depends on what went wrong, the root cause is one of the typed errors below
//! and `exit_code` finds it anywhere in the chain.

/// Exit codes promised to scripts (the table of docs/reference.md).
pub mod exit {
    /// The run finished and every operation succeeded.
    pub const OK: u8 = 0;
    /// The run finished, but some operations failed or verification failed.
    pub const FAILED_OPERATIONS: u8 = 1;
    /// Bad usage or bad input: nothing was run.
    pub const USAGE: u8 = 2;
    /// The target could not be reached, refused the connection or the login.
    pub const TARGET: u8 = 3;
    /// Interrupted by Ctrl-C (128 + SIGINT), SIGTERM or SIGHUP, after printing a
    /// partial report (or, before the run began, saying so).
    pub const INTERRUPTED: u8 = 130;
    /// `dbload k6 run`: a threshold of the script failed (k6's own code).
    pub const THRESHOLDS: u8 = 99;
}

/// Bad usage or input: an option, a value or a file the user must change.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The target is unreachable, refused us, or rejected the credentials.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TargetError(pub String);

/// A stop signal (Ctrl-C, SIGTERM, SIGHUP) ended the command before it
/// had anything to report: it was still connecting or setting up.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InterruptedError(pub String);

/// Shorthand for returning a [`UsageError`] as an `anyhow::Error`.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

/// Shorthand for returning a [`TargetError`] as an `anyhow::Error`.
pub fn target(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(TargetError(msg.into()))
}

/// Shorthand for returning an [`InterruptedError`] as an `anyhow::Error`.
pub fn interrupted(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(InterruptedError(msg.into()))
}

/// The exit code for an error that ended the run before it could report.
pub fn exit_code(err: &anyhow::Error) -> u8 {
    for cause in err.chain() {
        if cause.is::<UsageError>() {
            return exit::USAGE;
        }
        if cause.is::<TargetError>() {
            return exit::TARGET;
        }
        if cause.is::<InterruptedError>() {
            return exit::INTERRUPTED;
        }
    }
    // Anything else that stopped setup (e.g. DDL refused by the server) is a
    // failed operation, not a usage problem.
    exit::FAILED_OPERATIONS
}
