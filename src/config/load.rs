//! `Load`: how a measured command paces its workers, the same settings for
//! every command that drives load (ingest, queries, http). They were
//! resolved into three copies of the same seven fields; one struct lets the
//! loop's plan be made from it in one place (`run::worker::Plan::of`), and a
//! new pacing setting be added once.

use std::time::Duration;

use crate::op::{Stages, Warmup};

/// The pacing of a run: how long, how fast, in which stages, after which
/// warm-up, with which random streams, and whether a lost connection is
/// replaced. Resolved once by each command's config.
#[derive(Debug, Clone, PartialEq)]
pub struct Load {
    /// The run's length; none: until the counts are done.
    pub duration: Option<Duration>,
    /// Total units per second, open loop; none: closed loop.
    pub rate: Option<f64>,
    /// `--stages` or `--rate-stages`; `duration` is their total.
    pub stages: Option<Stages>,
    pub warmup: Warmup,
    pub seed: u64,
    /// The number of the first worker (or VU) among the whole run's
    /// (`--instance`: each instance's workers have their own random streams).
    pub first_worker: u32,
    /// A lost connection is replaced rather than ending its worker
    /// (`--reconnect`; `dbload http` has no such option: false).
    pub reconnect: bool,
    /// pgbench's `-L` with `-R`: an operation that would start more than
    /// this after its slot is skipped, not sent (counted as skipped).
    pub skip_late: Option<Duration>,
}

impl Default for Load {
    /// A run bounded by its work alone: no deadline, no rate, no warm-up
    /// (export, insert-from-sql, init's data).
    fn default() -> Load {
        Load {
            duration: None,
            rate: None,
            stages: None,
            warmup: Warmup::None,
            seed: 0,
            first_worker: 0,
            reconnect: false,
            skip_late: None,
        }
    }
}
