//! What the server was doing, second by second, while a run ran: the
//! samples the run's sampler (`run::sampler`) took on a connection of its
//! own, as plain data beside the run's own per-second timeline (both count
//! seconds from the workers' common start), and what sampling cost. Every
//! figure the server could not give is a reason, not a zero.

use std::collections::BTreeMap;
use std::time::Duration;

/// A session seen running with no wait event: on CPU, or in code the
/// server does not instrument. Said so, never guessed at.
pub const NO_WAIT: &str = "no wait event (on CPU or not instrumented)";

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
}

/// What sampling cost the server.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplerCost {
    /// Statements the sampler sent (one per sample, the first included).
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
    /// The last second sampled (none yet, or its sample failed).
    pub second: Option<ServerSecond>,
    /// Checkpoints the server counted since the sampler started, timed and requested.
    pub checkpoints: u64,
}

impl Latest {
    /// Second `second` was sampled (`None`: its sample failed).
    pub fn set(&self, second: Option<&ServerSecond>) {
        let mut latest = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(s) = second {
            latest.checkpoints += s.checkpoints_timed + s.checkpoints_requested;
        }
        latest.second = second.cloned();
    }

    pub fn read(&self) -> LatestSecond {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}
