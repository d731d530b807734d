//! The PostgreSQL protocol's query executor: a worker's connection sending
//! the mix's queries with the chosen protocol (pgbench's -M), reading every
//! row back, and cancelling on the server what the run gave up on; and,
//! before the run, the check that every query prepares and `--explain`'s plans.

use std::sync::Arc;

use anyhow::{Context, Result};
use futures_util::{pin_mut, TryStreamExt};
use tokio_postgres::{Client, SimpleQueryMessage, Statement};

use super::{classify, query_refused, Canceller, PgTarget};
use crate::dialect::postgres as sql;
use crate::op::{Executor, OpError};
use crate::workload::explain::{self, Explain, ExplainMode};
use crate::workload::params::Value;
use crate::workload::{inline_params, Protocol, QueryOp, QuerySpec};

/// Prepares every query once, before the run: a query the server cannot
/// prepare (an unknown table or column, a syntax error) or whose `$n`
/// placeholders do not match its `params` would fail identically at every
/// execution, so it stops the run here with the server's reason (exit 2)
/// rather than filling the report with millions of failures.
pub async fn check(client: &Client, queries: &[QuerySpec], protocol: Protocol) -> Result<()> {
    for q in queries {
        let what = || format!("query {} (`{}`)", q.name, q.query);
        let statement = match client.prepare(&q.query).await {
            Ok(statement) => statement,
            // Several statements in one query are the simple protocol's to
            // send; the server checks them only when they run.
            Err(e) if protocol == Protocol::Simple && several_statements(&e) => continue,
            Err(e) => return Err(query_refused(e, &what())),
        };
        let (wanted, given) = (statement.params().len(), q.placeholders());
        if wanted != given {
            return Err(crate::error::usage(format!(
                "{}: it has {wanted} placeholder(s) ($1 ...) but {given} parameter(s) are given: \
                 give one `params` entry per placeholder, in order",
                what()
            )));
        }
    }
    Ok(())
}

/// Whether the server refused to prepare a query for holding several statements.
fn several_statements(e: &tokio_postgres::Error) -> bool {
    e.as_db_error().is_some_and(|db| db.message().contains("multiple commands"))
}

/// A worker's connection, sending queries with the chosen protocol.
pub struct QueryExecutor {
    client: Client,
    /// Where to connect again after the connection was lost (boxed: a
    /// libpq config is large, and the executor is moved around by value).
    target: Box<PgTarget>,
    cancel: Canceller,
    protocol: Protocol,
    queries: Arc<[QuerySpec]>,
    /// With `Protocol::Prepared`: one statement per query, prepared at open
    /// (each checked by [`check`] before).
    prepared: Vec<Statement>,
}

impl QueryExecutor {
    pub async fn open(target: &PgTarget, queries: Arc<[QuerySpec]>, protocol: Protocol) -> Result<Self> {
        let client = target.connect().await?;
        let mut prepared = Vec::new();
        if protocol == Protocol::Prepared {
            for q in queries.iter() {
                prepared.push(client.prepare(&q.query).await.with_context(|| format!("preparing query {}", q.name))?);
            }
        }
        let cancel = target.canceller(&client);
        Ok(QueryExecutor { client, target: Box::new(target.clone()), cancel, protocol, queries, prepared })
    }

    /// Replaces a lost connection with a new one, its statements prepared
    /// again and its canceller with it (a cancel must reach the server
    /// process running the query now, not the one that was lost).
    pub(in crate::driver) async fn reconnect(&mut self) -> Result<()> {
        *self = QueryExecutor::open(&self.target, self.queries.clone(), self.protocol).await?;
        Ok(())
    }

    async fn run(&self, op: &QueryOp) -> Result<u64, OpError> {
        let closed = || self.client.is_closed();
        let query = &self.queries[op.label];
        let result = match self.protocol {
            Protocol::Simple => {
                let sql = inline_params(&query.query, &op.params);
                let messages = self.client.simple_query(&sql).await;
                messages.map(|m| m.iter().filter(|m| matches!(m, SimpleQueryMessage::Row(_))).count() as u64)
            }
            Protocol::Extended => drain(&self.client, query.query.as_str(), &op.params).await,
            Protocol::Prepared => drain(&self.client, &self.prepared[op.label], &op.params).await,
        };
        result.map_err(|e| classify(&e, closed()))
    }
}

/// Runs a query and reads every row it returns (the client must pay for
/// the result, as an application would); returns how many there were.
async fn drain<T>(client: &Client, statement: &T, params: &[Value]) -> Result<u64, tokio_postgres::Error>
where
    T: ?Sized + tokio_postgres::ToStatement,
{
    let rows = client.query_raw(statement, params).await?;
    pin_mut!(rows);
    let mut n = 0;
    while rows.try_next().await?.is_some() {
        n += 1;
    }
    Ok(n)
}

impl Executor<QueryOp> for QueryExecutor {
    async fn execute(&mut self, op: &mut QueryOp, _warm: bool) -> Result<u64, OpError> {
        self.run(op).await.map(|_rows| 1)
    }

    async fn cancel(&mut self) {
        self.cancel.cancel().await
    }
}

/// The plan of `query` with `params` (drawn as for a real execution). With
/// ANALYZE the query really runs, inside a transaction that is rolled back,
/// so a write leaves no trace.
pub async fn explain(
    client: &Client,
    query: &QuerySpec,
    params: &[Value],
    mode: ExplainMode,
) -> Result<Explain, String> {
    let statement = sql::explain(&inline_params(&query.query, params), mode == ExplainMode::Analyze);
    client.batch_execute(sql::BEGIN).await.map_err(|e| e.to_string())?;
    let result = client.simple_query(&statement).await;
    let _ = client.batch_execute(sql::ROLLBACK).await;
    let messages = result.map_err(|e| match e.as_db_error() {
        Some(db) => format!("the plan could not be taken: SQLSTATE {}: {}", db.code().code(), db.message()),
        None => format!("the plan could not be taken: {e}"),
    })?;
    let text: String = messages
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    explain::parse(mode, &text)
}
