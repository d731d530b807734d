//! The worker loop's vocabulary: what an operation is, where operations
//! come from, what runs them, how one fails, and what warm-up is. A leaf
//! module: the drivers, encoders and workloads implement these traits
//! without importing the loop that drives them (`run::worker`), and the
//! loop alone decides when an operation is warm-up.

use std::future::Future;
use std::time::{Duration, Instant};

/// Something a worker sends: a batch of rows, a query, a request.
pub trait Operation {
    /// What pacing and throughput count: rows in a batch, 1 for a query.
    fn units(&self) -> u64;
    /// Which of the run's labels (e.g. the query of a mix) it is recorded under.
    fn label(&self) -> usize {
        0
    }
    /// Whether it writes what its commit may have made durable unseen: a
    /// batch of rows lost with its connection is in doubt, not failed,
    /// until it is looked up (see [`Executor::resolve`]). Queries and
    /// requests are not looked up: lost, they fail.
    fn in_doubt_when_lost(&self) -> bool {
        false
    }
    /// How many times its executor ran it again before its outcome (pgbench's
    /// `--max-tries`, after a serialization failure or a deadlock), which
    /// pgbench's transaction log (`-l`) gives per transaction.
    fn retries(&self) -> u32 {
        0
    }
    /// Time spent making it before it was sent (a pgbench script's
    /// `\set`s, drawn by its source), which belongs to its latency as
    /// pgbench counts it: the loop moves the operation's start back by it.
    fn drawn(&self) -> Duration {
        Duration::ZERO
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
    /// Runs `op`; on success, the units the target acknowledged (fewer
    /// than the operation's are failed by the loop: see
    /// [`OpError::short`]). `warm`:
    /// it belongs to the warm-up, as the loop decided, so figures an
    /// executor keeps of its own (HTTP phases, CrateDB's server-side
    /// durations) leave it out as the recorder does.
    fn execute(&mut self, op: &mut Op, warm: bool) -> impl Future<Output = Result<u64, OpError>> + Send;

    /// Operations this executor keeps in flight on its connection at once
    /// (`--pipeline N`). Above 1, the loop sends each with [`Self::send`],
    /// sends what it buffered with [`Self::flush`] once the window is full
    /// (or before it waits for the schedule), and takes the answers, oldest
    /// first, with [`Self::receive`]; [`Self::execute`] then serves only a
    /// resend after a lost connection. 1 (the default): one at a time,
    /// through [`Self::execute`] alone.
    fn window(&self) -> usize {
        1
    }

    /// Pipelined ([`Self::window`] above 1): buffers `op`'s messages, with
    /// no wait. An error here is `op`'s alone: nothing of it was buffered.
    fn send(&mut self, _op: &mut Op, _warm: bool) -> Result<(), OpError> {
        unreachable!("the loop sends only to an executor whose window is above 1")
    }

    /// Pipelined: sends what [`Self::send`] buffered. An error is the
    /// oldest operation's in flight (a lost connection: all of theirs).
    fn flush(&mut self) -> impl Future<Output = Result<(), OpError>> + Send {
        std::future::ready(Ok(()))
    }

    /// Pipelined: the answer to the oldest operation in flight (as
    /// [`Self::execute`]'s: the units acknowledged, or its error).
    fn receive(&mut self) -> impl Future<Output = Result<u64, OpError>> + Send {
        async { unreachable!("the loop receives only from an executor whose window is above 1") }
    }

    /// Pipelined: whether the oldest answer is already read, so
    /// [`Self::receive`] returns it without waiting: the loop takes those
    /// before it sends more, so one write carries as many operations as
    /// came back in one read.
    fn received(&self) -> bool {
        false
    }

    /// Before each operation, outside its timing: what the executor does
    /// to be ready for it (pgbench's `-C`: a new connection). A failure
    /// here is the operation's, returned by [`Self::execute`].
    fn ready(&mut self) -> impl Future<Output = ()> + Send {
        async {}
    }

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

    /// When the run stops issuing operations (its deadline), told once as
    /// the loop starts: an executor that runs a failed operation again
    /// (pgbench's `--max-tries`) stops trying there, as pgbench does.
    fn ends_at(&mut self, _end: Option<Instant>) {}

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
    /// The code the database gave, when it gave one.
    pub code: Option<ErrorCode>,
}

/// The code a database gave with an error, kept typed: code that branches
/// on an error reads this, never the error's wording (which a server's
/// version or locale changes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorCode {
    /// A PostgreSQL-protocol server's SQLSTATE, e.g. `42601`.
    Sqlstate(String),
    /// CrateDB's HTTP error code: 4000 a syntax error, 4041 an unknown
    /// table, 4091 a duplicate key, ...
    CrateDb(i64),
}

impl ErrorCode {
    /// The code of the statement `e` says the database refused, anywhere
    /// in its chain; none for any other error.
    pub fn of(e: &anyhow::Error) -> Option<ErrorCode> {
        e.chain().find_map(|c| c.downcast_ref::<Refused>()).and_then(|r| r.error.code.clone())
    }
}

/// A statement the database refused, as an error whose code a caller can
/// read ([`ErrorCode::of`]) through `anyhow`'s chain.
#[derive(Debug, thiserror::Error)]
#[error("{statement}: {}: {}", error.class, error.message)]
pub struct Refused {
    pub statement: String,
    pub error: OpError,
}

impl OpError {
    /// An operation that failed as a whole; the worker may go on.
    pub fn new(class: impl Into<String>, message: impl Into<String>) -> OpError {
        OpError { class: class.into(), message: message.into(), fatal: false, acked: 0, code: None }
    }

    /// An operation that failed and left the worker unable to go on.
    pub fn fatal(class: impl Into<String>, message: impl Into<String>) -> OpError {
        OpError { fatal: true, ..OpError::new(class, message) }
    }

    /// A batch the target took without an error but wrote `acked` of its
    /// `units` rows: a trigger or rule skipped the rest, or CrateDB, which
    /// skips a row whose primary key exists. The rest are failed, not
    /// written nor "not attempted": they were sent, and the exit code says so.
    pub fn short(acked: u64, units: u64) -> OpError {
        let message = format!(
            "the server took the batch without an error but wrote {acked} of its {units} rows: a trigger or rule \
             skipped the others, or, on CrateDB, their primary key was already in the table"
        );
        OpError { acked, ..OpError::new("not written", message) }
    }
}

/// Warm-up, excluded from the measured figures.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Warmup {
    None,
    Duration(
        #[serde(serialize_with = "secs", deserialize_with = "from_secs")]
        #[cfg_attr(test, schemars(with = "f64"))]
        Duration,
    ),
    /// Units (rows, queries) per worker.
    Count(u64),
    /// Units in all, split across the workers as evenly as whole units
    /// allow (cr8's `-w`: exactly that many warm-up queries, however many
    /// connections); each worker's share becomes its [`Warmup::Count`]
    /// before it runs (`run::worker::Plan::for_worker`).
    Total(u64),
}

impl Warmup {
    /// Worker `w`'s warm-up, of `workers`: a [`Warmup::Total`] shared out,
    /// the first `total % workers` workers taking one more unit.
    pub fn for_worker(self, w: usize, workers: usize) -> Warmup {
        match self {
            Warmup::Total(n) => {
                let workers = workers.max(1) as u64;
                Warmup::Count(n / workers + u64::from((w as u64) < n % workers))
            }
            other => other,
        }
    }
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// [`secs`] read back, from a kept report.
fn from_secs<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let s = <f64 as serde::Deserialize>::deserialize(d)?;
    Duration::try_from_secs_f64(s).map_err(serde::de::Error::custom)
}

/// `--stages` (k6's ramping VUs) or `--rate-stages` (k6's ramping arrival
/// rate): targets reached linearly, each from the one before, over each
/// stage's duration. Plain data here, checked by `config/`; the loop's
/// pacer reads it as the run's schedule, the reports as its stages.
#[derive(Debug, Clone, PartialEq)]
pub struct Stages {
    pub ramps: Ramps,
    /// The target the first stage starts from: k6's `startVUs` (1 unless
    /// the connections flag says otherwise) or `startRate` (0).
    pub start: f64,
    pub stages: Vec<Stage>,
}

/// What stages ramp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Ramps {
    /// Workers (connections, VUs) busy at once: a closed loop.
    Vus,
    /// Units (rows, queries, requests) started per second: an open loop.
    Rate,
}

/// One stage as given: `30s:10`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stage {
    pub duration: Duration,
    pub target: f64,
}

/// A stage placed on the run's clock: from `start` to `end` (since the
/// run's start), its target going linearly from `from` to `to`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub start: Duration,
    pub end: Duration,
    pub from: f64,
    pub to: f64,
}

impl Span {
    /// The target at `t`, inside the span.
    pub fn target_at(&self, t: Duration) -> f64 {
        let length = (self.end - self.start).as_secs_f64();
        if length == 0.0 {
            return self.to;
        }
        let along = (t.saturating_sub(self.start).as_secs_f64() / length).min(1.0);
        self.from + (self.to - self.from) * along
    }

    /// The integral of the target over the span's first `into` of time:
    /// with rate stages, the units the schedule calls for in it.
    pub fn units_in(&self, into: Duration) -> f64 {
        let length = (self.end - self.start).as_secs_f64();
        if length == 0.0 {
            return 0.0;
        }
        let t = into.as_secs_f64().min(length);
        self.from * t + (self.to - self.from) * t * t / (2.0 * length)
    }
}

impl Stages {
    /// The stages on the run's clock, in order.
    pub fn spans(&self) -> impl Iterator<Item = Span> + '_ {
        let mut at = Duration::ZERO;
        let mut from = self.start;
        self.stages.iter().map(move |s| {
            let span = Span { start: at, end: at + s.duration, from, to: s.target };
            (at, from) = (span.end, s.target);
            span
        })
    }

    /// The mean of the target over the whole run: for rate stages, the
    /// units they call for in all per second of their total time.
    pub fn mean(&self) -> f64 {
        let total: f64 = self.spans().map(|s| s.units_in(s.end - s.start)).sum();
        total / self.duration().as_secs_f64().max(f64::MIN_POSITIVE)
    }

    /// The flag that gives stages of this kind.
    pub fn flag(&self) -> &'static str {
        match self.ramps {
            Ramps::Vus => "--stages",
            Ramps::Rate => "--rate-stages",
        }
    }

    /// How long the stages take together: the run's duration.
    pub fn duration(&self) -> Duration {
        self.stages.iter().map(|s| s.duration).sum()
    }

    /// The highest target, the start included: how many workers a run of
    /// VU stages starts, or the rate that sizes the operations in flight.
    pub fn peak(&self) -> f64 {
        self.stages.iter().map(|s| s.target).fold(self.start, f64::max)
    }

    /// The stage (0-based) that `t` falls in; `None` past the end. A stage
    /// of no duration holds no time: a jump from one target to the next.
    pub fn index_at(&self, t: Duration) -> Option<usize> {
        self.spans().position(|s| t >= s.start && t < s.end)
    }

    /// The target at `t`: the last one once the stages are over.
    pub fn target_at(&self, t: Duration) -> f64 {
        self.spans()
            .find(|s| t < s.end)
            .map_or_else(|| self.stages.last().map_or(self.start, |s| s.target), |s| s.target_at(t))
    }
}

/// As the flag was written: `--rate-stages 30s:100,1m:1000`.
impl std::fmt::Display for Stages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let flag = self.flag();
        let parts: Vec<String> =
            self.stages.iter().map(|s| format!("{}:{}", humantime::format_duration(s.duration), s.target)).collect();
        write!(f, "{flag} {}", parts.join(","))
    }
}
