//! The worker loop's vocabulary: what an operation is, where operations
//! come from, what runs them, how one fails, and what warm-up is. A leaf
//! module: the drivers, encoders and workloads implement these traits
//! without importing the loop that drives them (`run::worker`), and the
//! loop alone decides when an operation is warm-up.

use std::future::Future;
use std::time::Duration;

/// Something a worker sends: a batch of rows, a query, a request.
pub trait Operation {
    /// What pacing and throughput count: rows in a batch, 1 for a query.
    fn units(&self) -> u64;
    /// Which of the run's labels (e.g. the query of a mix) it is recorded under.
    fn label(&self) -> usize {
        0
    }
}

/// Where a worker's operations come from.
pub trait Source {
    type Op: Operation;
    /// The next operation; `None` when there are no more.
    fn next(&mut self) -> impl Future<Output = Option<Self::Op>> + Send;
    /// Gives a sent operation back, so its buffers can be reused.
    fn recycle(&mut self, _op: Self::Op) {}
}

/// Runs operations against the target.
pub trait Executor<Op> {
    /// Runs `op`; on success, the units the target acknowledged. `warm`:
    /// it belongs to the warm-up, as the loop decided, so figures an
    /// executor keeps of its own (HTTP phases, CrateDB's server-side
    /// durations) leave it out as the recorder does.
    fn execute(&mut self, op: &mut Op, warm: bool) -> impl Future<Output = Result<u64, OpError>> + Send;

    /// Replaces a lost connection with a new one (`--reconnect`); a CrateDB
    /// HTTP worker moves on to the next node. `None`: this executor cannot,
    /// and its worker stops at the first lost connection.
    fn reconnect(&mut self) -> impl Future<Output = Option<anyhow::Result<()>>> + Send {
        std::future::ready(None)
    }

    /// Once connected again: whether `op`, in flight when the connection
    /// was lost, was written (its commit may or may not have happened).
    fn resolve(&mut self, _op: &mut Op) -> impl Future<Output = InDoubt> + Send {
        std::future::ready(InDoubt::Unknown)
    }

    /// Stops, on the target, an operation the loop gave up on (still in
    /// flight for the loop's grace after Ctrl-C or the deadline) once its future is
    /// dropped. Nothing to do where dropping the future ends it (HTTP).
    fn cancel(&mut self) -> impl Future<Output = ()> + Send {
        std::future::ready(())
    }
}

/// What the target holds of an operation that was in flight when its
/// connection was lost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InDoubt {
    /// All of it, these units: it counts as written.
    Written(u64),
    /// None of it: it may be sent again.
    NotWritten,
    /// No way to tell (a table without a key, or the check failed).
    Unknown,
    /// Nothing to settle: it counts as failed and is not sent again (a
    /// query, which wrote nothing or was a statement of its own).
    Failed,
}

/// A failed operation, classified for the report.
#[derive(Debug)]
pub struct OpError {
    /// `SQLSTATE 23505`, `connection lost`, ...
    pub class: String,
    pub message: String,
    /// The connection is gone: this worker cannot run more.
    pub fatal: bool,
    /// Units the target acknowledged although the operation failed: the
    /// rows of a CrateDB bulk request that succeeded beside those that did not.
    pub acked: u64,
}

impl OpError {
    /// An operation that failed as a whole; the worker may go on.
    pub fn new(class: impl Into<String>, message: impl Into<String>) -> OpError {
        OpError { class: class.into(), message: message.into(), fatal: false, acked: 0 }
    }

    /// An operation that failed and left the worker unable to go on.
    pub fn fatal(class: impl Into<String>, message: impl Into<String>) -> OpError {
        OpError { fatal: true, ..OpError::new(class, message) }
    }
}

/// Warm-up, excluded from the measured figures.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Warmup {
    None,
    Duration(#[serde(serialize_with = "secs")] Duration),
    /// Units (rows, queries) per worker.
    Count(u64),
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}
