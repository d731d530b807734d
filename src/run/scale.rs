//! A distributed run's start (`--instance I/N`): this process registers
//! in the `--results-url` database (or waits for `--start-at`), instance 0 makes the
//! table before the others touch it, and every command's workers are held
//! at their [`Gate`] until all instances start together. The barrier it
//! waits at is `crate::barrier`; the split of the work is `config::scale`.

use anyhow::Result;
use tokio_util::sync::CancellationToken;

use super::Gate;
use crate::barrier::Registration;
use crate::config::scale::StartRule;
use crate::config::OutputConfig;
use crate::outcome::InstanceMeta;

/// Runs `body` as this process's part of a distributed run (`--instance`),
/// or as it is without one. Registered in the `--results-url` store (or
/// starting at `--start-at`), `body` sets up; where instance 0 makes a
/// table (`table`), the others first wait until it has. Its workers are
/// then held at its gate until every instance is ready and the common
/// start has come. Returns `body`'s outcome and this instance's
/// `run.instance`. An instance that gives up (another failed, or one is
/// missing after `--start-timeout`: exit 3) says so in its row, so the
/// others stop waiting too.
pub async fn together<O>(
    output: &OutputConfig,
    table: bool,
    cancel: &CancellationToken,
    body: impl AsyncFnOnce(Option<Gate>) -> Result<O>,
) -> Result<(O, Option<InstanceMeta>)> {
    let Some(inst) = &output.instance else { return Ok((body(None).await?, None)) };
    let registration = match (&inst.start, &output.results.url) {
        (StartRule::Register { timeout }, Some(store)) => Some(Registration::register(store, inst, *timeout).await?),
        _ => None,
    };
    let (ready, ready_rx) = tokio::sync::oneshot::channel();
    let (go_tx, go) = tokio::sync::oneshot::channel();
    let released = std::cell::Cell::new(None);
    if let (Some(r), true, true) = (&registration, table, inst.index > 0) {
        // Before this instance touches the table at all; Ctrl-C ends the wait.
        let waited = tokio::select! {
            waited = r.wait_for_table() => waited,
            _ = cancel.cancelled() => Err(anyhow::anyhow!("interrupted while waiting for instance 0's table")),
        };
        if let Err(e) = waited {
            r.fail(&format!("{e:#}")).await;
            return Err(e);
        }
    }
    let coordinate = async {
        // A body that failed in its setup drops its gate: its error is the result.
        if ready_rx.await.is_err() {
            return std::future::pending().await;
        }
        let wait = async {
            match (&registration, &inst.start) {
                (Some(r), _) => {
                    if table && inst.index == 0 {
                        r.table_made().await?;
                    }
                    let (_, until) = r.ready_and_wait().await?;
                    tokio::time::sleep(until).await;
                }
                (None, StartRule::At(at)) => {
                    let until = (*at - chrono::Utc::now()).to_std().unwrap_or_default();
                    tokio::time::sleep(until).await;
                }
                (None, StartRule::Register { .. }) => unreachable!("--instance without a store is refused"),
            }
            anyhow::Ok(())
        };
        // Ctrl-C while waiting lets the workers go, to stop at once and report.
        tokio::select! {
            waited = wait => waited?,
            _ = cancel.cancelled() => {}
        }
        let now = std::time::SystemTime::now();
        released.set(Some(now));
        let _ = go_tx.send(());
        if let Some(r) = &registration {
            let at = chrono::DateTime::<chrono::Utc>::from(now).to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            r.started(&at).await?;
        }
        std::future::pending::<Result<std::convert::Infallible>>().await
    };
    let gate = Gate { ready, go };
    let result = tokio::select! {
        done = body(Some(gate)) => done,
        gave_up = coordinate => gave_up.map(|never| match never {}),
    };
    match (result, &registration) {
        (Ok(o), _) => {
            let started = released.get().unwrap_or_else(std::time::SystemTime::now);
            Ok((o, Some(InstanceMeta::new(inst.run_id.clone(), inst.index, inst.count, started))))
        }
        (Err(e), Some(r)) => {
            r.fail(&format!("{e:#}")).await;
            Err(e)
        }
        (Err(e), None) => Err(e),
    }
}
