//! A mixed run (`dbload run FILE`): the ingest part and every workload at
//! the same time against one target, so query latency is measured under
//! write load. With `--baseline`, each workload also runs alone just before
//! the mixed phase and again just after it: the table grows during the
//! mixed phase, so one baseline alone would compare a query on one table
//! size with the same query on another. Each part is the ordinary run of
//! its command, not a variant of it.

use anyhow::Result;
use futures_util::future::try_join_all;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::ingest::{ingest, table_rows};
use super::metrics::part;
use super::queries::queries;
use super::Gate;
use crate::config::MixedConfig;
use crate::outcome::{MixedOutcome, QueryOutcome, WorkloadOutcome};
use crate::target::Target;

pub async fn mixed(cfg: &MixedConfig, target: &Target, cancel: CancellationToken) -> Result<MixedOutcome> {
    // A part that stops on its own (a panic, failures without end) stops the
    // others too, rather than leaving them to run their whole duration: the
    // run has failed, and the stopped part's report says why.
    let parts = cancel.child_token();
    let stops_the_others = |stopped: bool| {
        if stopped {
            parts.cancel();
        }
    };
    let (ready, ready_rx) = oneshot::channel();
    let (go_tx, go) = oneshot::channel();
    let ingesting = async {
        match &cfg.ingest {
            Some(i) => {
                let gate = Some(Gate { ready, go });
                let out = part("ingest", ingest(i, Some(target), parts.clone(), gate)).await?;
                stops_the_others(out.figures.stopped.is_some());
                anyhow::Ok(Some(out))
            }
            None => Ok(None),
        }
    };
    let querying = async {
        // Queries start once the ingest's table exists.
        if cfg.ingest.is_some() && ready_rx.await.is_err() {
            return Ok((Vec::new(), None, Vec::new())); // the ingest failed before starting; its error is reported
        }
        let rows_before = match &cfg.ingest {
            Some(i) if cfg.baseline => table_rows(i, target, &cancel).await?,
            _ => None,
        };
        let before = alone(cfg, target, &parts).await?;
        let _ = go_tx.send(());
        let under_load = try_join_all(cfg.workloads.iter().map(|(name, w)| async {
            let out = part(name, queries(w, target, parts.clone(), None)).await?;
            stops_the_others(out.figures.stopped.is_some());
            anyhow::Ok(out)
        }))
        .await?;
        Ok((before, rows_before, under_load))
    };
    let (ingest, (mut before, rows_before, under_load)) = tokio::try_join!(ingesting, querying)?;
    let table_rows = match (&cfg.ingest, rows_before) {
        (Some(i), Some(rows_before)) => table_rows(i, target, &cancel).await?.map(|after| (rows_before, after)),
        _ => None,
    };
    let mut after = alone(cfg, target, &parts).await?;
    before.resize_with(under_load.len(), || None);
    after.resize_with(under_load.len(), || None);
    let workloads = under_load
        .into_iter()
        .zip(before.into_iter().zip(after))
        .map(|(under_load, (alone_before, alone_after))| WorkloadOutcome { under_load, alone_before, alone_after })
        .collect();
    Ok(MixedOutcome { ingest, workloads, table_rows })
}

/// With `--baseline`: each workload alone, one after another (none once
/// Ctrl-C was pressed or a part stopped the run).
async fn alone(cfg: &MixedConfig, target: &Target, cancel: &CancellationToken) -> Result<Vec<Option<QueryOutcome>>> {
    let mut out = Vec::with_capacity(cfg.workloads.len());
    for (name, w) in &cfg.workloads {
        let run = cfg.baseline && !cancel.is_cancelled();
        out.push(if run { Some(part(name, queries(w, target, cancel.clone(), None)).await?) } else { None });
    }
    Ok(out)
}
