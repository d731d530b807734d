//! `--runs N`: the one loop that runs a command's measured part N times on
//! one runtime, with `--pause` between runs. Every command goes through it
//! (once, without `--runs`); what differs is only the run it is given.
//! Ctrl-C ends the loop: the runs done, the interrupted one included, are
//! what the report shows.

use std::time::Instant;

use anyhow::Result;
use tokio_util::sync::CancellationToken;

use crate::config::Repeat;

/// What the runs found, in order, and the error that kept a later run
/// from running (its server gone, say): the runs before it are kept.
#[derive(Debug)]
pub struct Runs<O> {
    pub done: Vec<O>,
    /// When each run of `done` began: the results store keeps each run's
    /// histograms as an interval of its own.
    pub began: Vec<Instant>,
    pub failed: Option<anyhow::Error>,
}

/// Runs `once` (given the 1-based run number and the cancellation token)
/// `plan.runs` times, waiting `plan.pause` between runs, and returns what
/// each run found. Stops after a run that Ctrl-C interrupted, or in a
/// pause. An error of the first run is the result; one of a later run ends
/// the loop and is returned beside the runs done.
pub async fn repeat<O>(
    plan: Repeat,
    quiet: bool,
    cancel: &CancellationToken,
    mut once: impl AsyncFnMut(u32, CancellationToken) -> Result<O>,
) -> Result<Runs<O>> {
    let mut done = Vec::with_capacity(plan.runs as usize);
    let mut began = Vec::with_capacity(plan.runs as usize);
    for run in 1..=plan.runs {
        if run > 1 {
            tokio::select! {
                _ = tokio::time::sleep(plan.pause) => {}
                _ = cancel.cancelled() => {}
            }
        }
        if cancel.is_cancelled() && run > 1 {
            break;
        }
        if plan.runs > 1 && !quiet {
            crate::console::line(format_args!("dbload: run {run} of {}", plan.runs));
        }
        let at = Instant::now();
        match once(run, cancel.clone()).await {
            Ok(found) => {
                done.push(found);
                began.push(at);
            }
            Err(e) if done.is_empty() => return Err(e),
            Err(e) => {
                let failed = Some(e.context(format!("run {run} of {}", plan.runs)));
                return Ok(Runs { done, began, failed });
            }
        }
    }
    Ok(Runs { done, began, failed: None })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn plan(runs: u32, pause_ms: u64) -> Repeat {
        Repeat { runs, pause: Duration::from_millis(pause_ms) }
    }

    #[tokio::test]
    async fn runs_n_times_in_order() {
        let cancel = CancellationToken::new();
        let runs = repeat(plan(3, 1), true, &cancel, async |run, _| Ok(run)).await.unwrap();
        assert_eq!(runs.done, [1, 2, 3]);
        assert!(runs.began.len() == 3 && runs.began.is_sorted());
        assert!(runs.failed.is_none());
    }

    #[tokio::test]
    async fn ctrl_c_keeps_the_runs_done_and_the_interrupted_one() {
        let cancel = CancellationToken::new();
        let runs = repeat(plan(5, 0), true, &cancel, async |run, c: CancellationToken| {
            if run == 2 {
                c.cancel();
            }
            Ok(run)
        })
        .await
        .unwrap();
        assert_eq!(runs.done, [1, 2]);
    }

    #[tokio::test]
    async fn a_later_run_that_cannot_run_keeps_the_runs_done() {
        let cancel = CancellationToken::new();
        let failing = async |run: u32, _| if run == 3 { anyhow::bail!("the server is gone") } else { Ok(run) };
        let runs = repeat(plan(5, 0), true, &cancel, failing).await.unwrap();
        assert_eq!(runs.done, [1, 2]);
        assert_eq!(format!("{:#}", runs.failed.unwrap()), "run 3 of 5: the server is gone");
        let first = async |_, _| -> Result<u32> { anyhow::bail!("refused") };
        assert!(repeat(plan(5, 0), true, &cancel, first).await.is_err());
    }

    #[tokio::test]
    async fn ctrl_c_in_a_pause_ends_the_loop_without_waiting() {
        let cancel = CancellationToken::new();
        let started = std::time::Instant::now();
        let runs = repeat(plan(3, 60_000), true, &cancel, async |run, c: CancellationToken| {
            c.cancel();
            Ok(run)
        })
        .await
        .unwrap();
        assert_eq!(runs.done, [1]);
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
