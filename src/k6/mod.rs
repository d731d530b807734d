//! k6 scripts, run unchanged by `dbload k6 run`: the script and its imports
//! (`script`), a VU's JavaScript in a coroutine on the worker thread (`vu`), the script's
//! options (`options`) and thresholds (`thresholds`), judged on k6's
//! metrics (`stats::k6`). Here a VU's iteration is one operation of the worker
//! loop (`run::worker`), run by the VU's [`VuExecutor`]: pacing, stages,
//! the deadline, Ctrl-C, warm-up, progress and the recorder are the ones
//! every command has.

pub mod options;
pub mod script;
pub mod thresholds;
pub mod vu;

use std::collections::HashSet;

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

/// A VU's iterations: as many as it was given, or until the run stops.
pub struct Iterations {
    pub left: u64,
}

impl Source for Iterations {
    type Op = Iteration;

    async fn next(&mut self) -> Option<Iteration> {
        self.left = self.left.checked_sub(1)?;
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
