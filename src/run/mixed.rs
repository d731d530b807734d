//! A mixed run (`dbload run FILE`): the ingest part and every workload at
//! the same time against one target, so query latency is measured under
//! write load; then, with `--baseline`, each workload alone for comparison.
//! Each part is the ordinary run of its command, not a variant of it.

use anyhow::Result;
use futures_util::future::try_join_all;
use tokio_util::sync::CancellationToken;

use super::queries::{queries, QueryOutcome};
use super::{ingest, IngestOutcome};
use crate::config::MixedConfig;
use crate::target::Target;

pub struct MixedOutcome {
    pub ingest: Option<IngestOutcome>,
    /// Per workload: under load, and alone (with `--baseline`).
    pub workloads: Vec<(QueryOutcome, Option<QueryOutcome>)>,
}

pub async fn mixed(cfg: &MixedConfig, target: &Target, cancel: CancellationToken) -> Result<MixedOutcome> {
    let (started_tx, started_rx) = tokio::sync::oneshot::channel();
    let ingesting = async {
        match &cfg.ingest {
            Some(i) => ingest(i, Some(target), cancel.clone(), Some(started_tx)).await.map(Some),
            None => Ok(None),
        }
    };
    let querying = async {
        // Queries start once the ingest's table exists and its workers run.
        if cfg.ingest.is_some() && started_rx.await.is_err() {
            return Ok(Vec::new()); // the ingest failed before starting; its error is reported
        }
        try_join_all(cfg.workloads.iter().map(|(_, w)| queries(w, target, cancel.clone()))).await
    };
    let (ingest, under_load) = tokio::try_join!(ingesting, querying)?;
    let mut workloads = Vec::with_capacity(under_load.len());
    for (loaded, (_, w)) in under_load.into_iter().zip(&cfg.workloads) {
        let alone =
            if cfg.baseline && !cancel.is_cancelled() { Some(queries(w, target, cancel.clone()).await?) } else { None };
        workloads.push((loaded, alone));
    }
    Ok(MixedOutcome { ingest, workloads })
}
