//! A worker's query connection over either SQL protocol: the dispatch
//! between the PostgreSQL protocol's executor and CrateDB's HTTP one, as
//! the one worker loop's [`Executor`] of the mix's queries.

use anyhow::Result;
use hdrhistogram::Histogram;

use super::cratedb_http::exec::CrateQueryExecutor;
use super::pg::query::QueryExecutor;
use crate::op::{Executor, InDoubt, OpError};
use crate::stats::query::{Connects, Retries, StatementRecord};
use crate::workload::QueryOp;

/// A worker's query connection over either protocol.
pub enum QueryRunner {
    Pg(QueryExecutor),
    Crate(CrateQueryExecutor),
}

impl QueryRunner {
    /// CrateDB's own time per query, as it reported it; none over the PostgreSQL protocol.
    pub fn server_duration(&self) -> Option<&Histogram<u64>> {
        match self {
            QueryRunner::Crate(e) => Some(e.server_duration()),
            QueryRunner::Pg(_) => None,
        }
    }

    /// The measured script runs this worker tried more than once (scripts
    /// run over the PostgreSQL protocol only).
    pub fn retries(&self) -> Retries {
        match self {
            QueryRunner::Pg(e) => e.retries(),
            QueryRunner::Crate(_) => Retries::default(),
        }
    }

    /// The connections this worker made for each run (`-C`; PostgreSQL protocol only).
    pub fn connects(&self) -> Connects {
        match self {
            QueryRunner::Pg(e) => e.connects(),
            QueryRunner::Crate(_) => Connects::default(),
        }
    }

    /// Per query, its script's statements as this worker measured them
    /// (scripts run over the PostgreSQL protocol only).
    pub fn statement_records(&self) -> &[Vec<StatementRecord>] {
        match self {
            QueryRunner::Pg(e) => e.statement_records(),
            QueryRunner::Crate(_) => &[],
        }
    }
}

impl Executor<QueryOp> for QueryRunner {
    async fn execute(&mut self, op: &mut QueryOp, warm: bool) -> Result<u64, OpError> {
        match self {
            QueryRunner::Pg(e) => e.execute(op, warm).await,
            QueryRunner::Crate(e) => e.execute(op, warm).await,
        }
    }

    fn ends_at(&mut self, end: Option<std::time::Instant>) {
        if let QueryRunner::Pg(e) = self {
            e.ends_at(end)
        }
    }

    fn window(&self) -> usize {
        match self {
            QueryRunner::Pg(e) => e.window(),
            QueryRunner::Crate(_) => 1,
        }
    }

    /// Pipelined: over the PostgreSQL protocol only (the config refuses
    /// `--pipeline` over CrateDB's HTTP endpoint, whose window is 1).
    fn send(&mut self, op: &mut QueryOp, warm: bool) -> Result<(), OpError> {
        match self {
            QueryRunner::Pg(e) => e.send(op, warm),
            QueryRunner::Crate(_) => unreachable!("a window of 1 is never sent to"),
        }
    }

    async fn flush(&mut self) -> Result<(), OpError> {
        match self {
            QueryRunner::Pg(e) => e.flush().await,
            QueryRunner::Crate(_) => Ok(()),
        }
    }

    async fn receive(&mut self) -> Result<u64, OpError> {
        match self {
            QueryRunner::Pg(e) => e.receive().await,
            QueryRunner::Crate(_) => unreachable!("a window of 1 is never received from"),
        }
    }

    fn received(&self) -> bool {
        matches!(self, QueryRunner::Pg(e) if e.received())
    }

    async fn ready(&mut self) {
        if let QueryRunner::Pg(e) = self {
            e.ready().await
        }
    }

    /// A new connection (CrateDB: to the next node of the list).
    async fn reconnect(&mut self) -> Option<Result<()>> {
        Some(match self {
            QueryRunner::Pg(e) => e.reconnect().await,
            QueryRunner::Crate(e) => e.reconnect().await,
        })
    }

    /// A query in flight when its connection was lost counts as failed and
    /// is not run again: it wrote nothing, or it was a statement of its own
    /// that the mix runs again anyway.
    async fn resolve(&mut self, _op: &mut QueryOp) -> InDoubt {
        InDoubt::Failed
    }

    async fn cancel(&mut self) {
        if let QueryRunner::Pg(e) = self {
            e.cancel().await
        }
    }
}
