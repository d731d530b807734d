//! What the server was doing, second by second, while a run ran: the
//! samples the run's sampler (`run::sampler`) took on a connection of its
//! own, as plain data beside the run's own per-second timeline (both count
//! seconds from the workers' common start), and what sampling cost. Every
//! figure the server could not give is a reason, not a zero.

use std::collections::BTreeMap;
use std::time::Duration;

/// The start and end of the name of a CrateDB thread pool's rejected work
/// (`thread pool write rejected`): a count, and a marker on the charts.
pub const POOL: &str = "thread pool ";
pub const REJECTED: &str = " rejected";

/// The pool a figure named [`POOL`]` NAME `[`REJECTED`] counts the
/// rejected work of.
pub fn rejected_by(figure: &str) -> Option<&str> {
    figure.strip_prefix(POOL)?.strip_suffix(REJECTED)
}

/// A session seen running with no wait event: on CPU, or in code the
/// server does not instrument. Said so, never guessed at.
pub const NO_WAIT: &str = "no wait event (on CPU or not instrumented)";

/// The end of an engine figure's name ([`ServerSecond::engine`]) that is a
/// level seen at a sample (jobs running, a queue's length), not a count of
/// what happened: the samples of one second keep its most, not its sum.
pub const LEVEL: &str = " (max)";

/// TimescaleDB's chunks of the run's hypertable made in a second.
pub const CHUNKS_CREATED: &str = "chunks created";

/// The end of the name of TimescaleDB's background jobs of one kind
/// started in a second (`compression jobs started`), and of those running
/// at a sample (a level).
pub const JOBS_STARTED: &str = " jobs started";
pub const JOBS_RUNNING: &str = " jobs running (max)";

/// The name of a Citus node's figure: `node 10.0.0.2:5432 active sessions`,
/// the run's sessions working on it, as samples (each session seen at a
/// sample counts once, as wait events do), and `node 10.0.0.2:5432
/// IO:WALWrite` for their wait events there.
pub const NODE: &str = "node ";
pub const NODE_SESSIONS: &str = " active sessions";

/// One second of the server, from the sample taken at its end; as the
/// report writes it too (`report::server`'s seconds flatten it).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ServerSecond {
    /// The run's own active sessions by wait event (`type:event`, or
    /// [`NO_WAIT`]).
    pub own_waits: BTreeMap<String, u32>,
    /// The other sessions' and the server's background processes'.
    pub other_waits: BTreeMap<String, u32>,
    /// Checkpoints the server counted in this second: on its timer, and requested.
    pub checkpoints_timed: u64,
    pub checkpoints_requested: u64,
    /// WAL written in this second (the whole server's); none on a standby.
    pub wal_bytes: Option<u64>,
    pub temp_files: u64,
    pub temp_bytes: u64,
    /// A vacuum of the run's table was under way: its phase.
    pub vacuum: Option<String>,
    /// Lock requests waiting on the run's table.
    pub lock_waits: u64,
    /// The largest replay lag of a replica, in seconds; none without replicas.
    pub replica_lag_s: Option<f64>,
    /// What the engine itself counted in this second, by name (TimescaleDB's
    /// chunks created and compression jobs, Citus's work per worker node,
    /// CrateDB's jobs, operations and thread pools): each its own figure,
    /// none guessed; empty on plain PostgreSQL.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub engine: BTreeMap<String, f64>,
}

impl ServerSecond {
    /// Adds a later sample `o` of the same second: its wait events (as
    /// samples) and counters added, the vacuum's latest phase, the most
    /// lock waits and replica lag seen; the engine's figures added, but
    /// those named as levels ([`LEVEL`]) at their most.
    pub fn add(&mut self, o: &ServerSecond) {
        for (mine, theirs) in [(&mut self.own_waits, &o.own_waits), (&mut self.other_waits, &o.other_waits)] {
            for (wait, n) in theirs {
                *mine.entry(wait.clone()).or_default() += n;
            }
        }
        self.checkpoints_timed += o.checkpoints_timed;
        self.checkpoints_requested += o.checkpoints_requested;
        self.wal_bytes = match (self.wal_bytes, o.wal_bytes) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        self.temp_files += o.temp_files;
        self.temp_bytes += o.temp_bytes;
        self.vacuum = o.vacuum.clone().or(self.vacuum.take());
        self.lock_waits = self.lock_waits.max(o.lock_waits);
        self.replica_lag_s = match (self.replica_lag_s, o.replica_lag_s) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        add_engine(&mut self.engine, &o.engine);
    }
}

/// Adds the engine's figures `o` to `mine`, of the same stretch of time:
/// counts summed, levels ([`LEVEL`]) at their most.
pub fn add_engine(mine: &mut BTreeMap<String, f64>, o: &BTreeMap<String, f64>) {
    for (name, v) in o {
        let mine = mine.entry(name.clone()).or_default();
        *mine = if name.ends_with(LEVEL) { mine.max(*v) } else { *mine + v };
    }
}

/// What sampling cost the server.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplerCost {
    /// Statements the sampler sent (one per sample, the first included; two
    /// on an engine with figures of its own).
    pub queries: u64,
    /// From its first sample to its last.
    pub wall: Duration,
    /// The sampler's backend's CPU time, from the server's own accounting
    /// of its process, or why it is not known.
    pub backend_cpu: Result<Duration, String>,
    /// The server machine's cores, when `backend_cpu` is known.
    pub cores: usize,
}

/// The server's timeline of a run, or why there is none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerTimeline {
    /// Second `s` since the workers' start; a second whose sample failed is
    /// `None`.
    pub seconds: Vec<Option<ServerSecond>>,
    /// How often it was sampled.
    pub every: Duration,
    /// What the sampler could not see, each with what to do about it.
    pub unseen: Vec<String>,
    /// Samples that failed, and the first failure.
    pub failed: u64,
    pub first_failure: Option<String>,
    pub cost: Option<SamplerCost>,
}

impl ServerTimeline {
    /// A timeline with no sample, and why.
    pub fn none(why: String) -> ServerTimeline {
        ServerTimeline { unseen: vec![why], ..ServerTimeline::default() }
    }
}

/// The server's latest second as the sampler saw it, for `--metrics-listen`:
/// set once a second by the sampler, read by a scrape.
#[derive(Debug, Default)]
pub struct Latest(std::sync::Mutex<LatestSecond>);

/// What [`Latest`] holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LatestSecond {
    /// The latest sample (none yet, or it failed), its WAL per second.
    pub second: Option<ServerSecond>,
    /// Checkpoints the server counted since the sampler started, timed and requested.
    pub checkpoints: u64,
}

impl Latest {
    /// A sample of the last `every` was taken (`None`: it failed); its WAL
    /// is kept as bytes per second.
    pub fn set(&self, sample: Option<&ServerSecond>, every: Duration) {
        let mut latest = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(s) = sample {
            latest.checkpoints += s.checkpoints_timed + s.checkpoints_requested;
        }
        latest.second = sample.map(|s| ServerSecond {
            wal_bytes: s.wal_bytes.map(|w| (w as f64 / every.as_secs_f64().max(f64::EPSILON)) as u64),
            ..s.clone()
        });
    }

    pub fn read(&self) -> LatestSecond {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(figures: &[(&str, f64)]) -> ServerSecond {
        let engine = figures.iter().map(|(name, n)| (name.to_string(), *n)).collect();
        ServerSecond { engine, ..ServerSecond::default() }
    }

    /// Issue 34: two samples of one second add their counts (chunks
    /// created, a node's sessions as samples) and keep a level's most
    /// (jobs running), and a figure only one of them has is kept.
    #[test]
    fn add_sums_the_engine_s_counts_and_keeps_its_levels_at_their_most() {
        let running = format!("compression{JOBS_RUNNING}");
        let mut second = engine(&[(CHUNKS_CREATED, 2.0), (&running, 1.0), ("node 10.0.0.2:5432 active sessions", 3.0)]);
        second.add(&engine(&[(CHUNKS_CREATED, 1.0), (&running, 2.0), ("compression jobs started", 1.0)]));
        second.add(&engine(&[(&running, 1.0)]));
        let want = engine(&[
            (CHUNKS_CREATED, 3.0),
            (&running, 2.0),
            ("node 10.0.0.2:5432 active sessions", 3.0),
            ("compression jobs started", 1.0),
        ]);
        assert_eq!(second, want);
    }

    /// Issue 34: samples of one second add up the engine's counts and keep
    /// the most of its levels (named with [`LEVEL`]).
    #[test]
    fn an_engine_s_counts_add_up_and_its_levels_keep_their_most() {
        let mut second = engine(&[("thread pool write rejected", 2.0), ("thread pool write queue (max)", 7.0)]);
        second.add(&engine(&[("thread pool write rejected", 3.0), ("thread pool write queue (max)", 4.0)]));
        second.add(&engine(&[("jobs running (max)", 1.0)]));
        assert_eq!(
            second,
            engine(&[
                ("jobs running (max)", 1.0),
                ("thread pool write queue (max)", 7.0),
                ("thread pool write rejected", 5.0)
            ])
        );
        assert_eq!(rejected_by("thread pool write rejected"), Some("write"));
        assert_eq!(rejected_by("thread pool write queue (max)"), None);
    }
}
