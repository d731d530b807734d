//! k6 scripts, run unchanged by `dbload k6 run`: the script and its imports
//! (`script`), a VU's JavaScript in a coroutine on the worker thread (`vu`),
//! its `k6/http` requests and responses (`http`), `k6/data`'s arrays made
//! once for every VU (`shared`), `handleSummary` at the
//! run's end (`summary`), the script's
//! options (`options`) and thresholds (`thresholds`), judged on k6's
//! metrics (`stats::k6`). Here a VU's iteration is one operation of the worker
//! loop (`run::worker`), run by the VU's [`VuExecutor`]: pacing, stages,
//! the deadline, Ctrl-C, warm-up, progress and the recorder are the ones
//! every command has.

mod http;
mod native;
pub mod options;
pub mod script;
pub mod shared;
pub mod summary;
pub mod thresholds;
pub mod vu;

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::driver::http::client::Client;
use crate::op::{Executor, OpError, Operation, Source};
use vu::{Call, CallError, Vu};

/// One run of the script's default function.
#[derive(Debug)]
pub struct Iteration;

impl Operation for Iteration {
    fn units(&self) -> u64 {
        1
    }
}

/// How a run's iterations are handed to its VUs.
#[derive(Debug, Clone, PartialEq)]
pub enum Handout {
    /// Until the duration or the stages end.
    Endless,
    /// k6's `shared-iterations` (and `-i`): this many in all, each taken by
    /// whichever VU is free first, so a slow VU does fewer.
    Shared(u64),
    /// k6's `per-vu-iterations`: this many for each VU.
    PerVu(u64),
}

impl Handout {
    /// The iterations of `vus` VUs in all (none: no count ends the run).
    pub fn total(&self, vus: u32) -> Option<u64> {
        match *self {
            Handout::Endless => None,
            Handout::Shared(n) => Some(n),
            Handout::PerVu(n) => Some(n.saturating_mul(u64::from(vus))),
        }
    }
}

/// A VU's iterations: taken from its own count, or from the count its VUs
/// share, until none are left or the run stops.
pub struct Iterations {
    left: Arc<AtomicU64>,
}

impl Iterations {
    /// The sources of `vus` VUs, as `handout` says.
    pub fn handed(handout: &Handout, vus: u32) -> Vec<Iterations> {
        let own = |n| (0..vus).map(|_| Iterations { left: Arc::new(AtomicU64::new(n)) }).collect();
        match *handout {
            Handout::Endless => own(u64::MAX),
            Handout::PerVu(n) => own(n),
            Handout::Shared(n) => {
                let left = Arc::new(AtomicU64::new(n));
                (0..vus).map(|_| Iterations { left: left.clone() }).collect()
            }
        }
    }
}

impl Source for Iterations {
    type Op = Iteration;

    async fn next(&mut self) -> Option<Iteration> {
        self.left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1)).ok()?;
        Some(Iteration)
    }
}

/// Runs a VU's iterations: each is a call of the VU's coroutine, whose
/// requests this executor makes with the VU's own HTTP client.
pub struct VuExecutor {
    vu: Vu,
    client: Client,
    /// k6's `__ITER`: this VU's iterations so far.
    iteration: u64,
    /// The exceptions this VU printed: each is printed once (k6 prints
    /// every one; a script that throws in every iteration would flood the
    /// terminal), and all are counted in the report.
    said: HashSet<String>,
}

impl VuExecutor {
    pub fn new(vu: Vu, client: Client) -> VuExecutor {
        VuExecutor { vu, client, iteration: 0, said: HashSet::new() }
    }
}

impl Executor<Iteration> for VuExecutor {
    /// A script that throws fails its iteration (k6 prints the error and
    /// goes on with the next one).
    async fn execute(&mut self, _: &mut Iteration, warm: bool) -> Result<u64, OpError> {
        let iteration = self.iteration;
        self.iteration += 1;
        match self.vu.call(Call::Iterate { iteration, warm }, &mut self.client, !warm).await {
            Ok(_) => Ok(1),
            Err(CallError::Thrown(message)) => {
                let class = message.split('\n').next().unwrap_or("").to_owned();
                if self.said.insert(class.clone()) {
                    crate::console::line(format_args!("ERRO {message}"));
                }
                Err(OpError::new(format!("script error: {class}"), message))
            }
            Err(CallError::Gone) => Err(OpError::fatal("VU ended", "the VU's JavaScript ended")),
        }
    }
}
