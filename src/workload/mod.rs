//! Query workloads: which query runs next (a weighted choice with fresh
//! parameters), and how it is sent. Both plug into the one worker loop as
//! its [`Source`] and [`Executor`].

pub mod explain;
pub mod file;
pub mod params;

use std::sync::Arc;

use anyhow::{Context, Result};
use futures_util::{pin_mut, TryStreamExt};
use hdrhistogram::Histogram;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use tokio_postgres::{Client, SimpleQueryMessage, Statement};

pub use file::QuerySpec;
use params::Value;

use crate::driver::cratedb_http::CrateQueryExecutor;
use crate::driver::pg::classify;
use crate::driver::{Canceller, PgTarget};
use crate::op::{Executor, InDoubt, OpError, Operation, Source};
use crate::target::Target;

/// How statements are sent (pgbench's -M).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// Simple query protocol: one message, parameters inlined as quoted literals.
    Simple,
    /// Extended protocol with an unnamed statement: parsed and planned every time.
    Extended,
    /// Extended protocol with statements prepared once per connection.
    Prepared,
}

/// One execution of one query of the mix, with its parameters drawn.
#[derive(Debug)]
pub struct QueryOp {
    pub label: usize,
    pub params: Vec<Value>,
}

impl Operation for QueryOp {
    fn units(&self) -> u64 {
        1
    }
    fn label(&self) -> usize {
        self.label
    }
}

/// Picks the next query by ratio, draws its parameters, and stops after
/// `remaining` queries. One per worker, each with its own random stream.
pub struct Chooser {
    queries: Arc<[QuerySpec]>,
    /// Running sums of the ratios, for the weighted choice.
    cumulative: Vec<f64>,
    rng: ChaCha8Rng,
    remaining: u64,
}

impl Chooser {
    pub fn new(queries: Arc<[QuerySpec]>, rng: ChaCha8Rng, remaining: u64) -> Self {
        let cumulative = queries
            .iter()
            .scan(0.0, |sum, q| {
                *sum += q.ratio;
                Some(*sum)
            })
            .collect();
        Chooser { queries, cumulative, rng, remaining }
    }

    fn choose(&mut self) -> usize {
        let total = *self.cumulative.last().expect("a workload has queries");
        let x = self.rng.random_range(0.0..total);
        self.cumulative.iter().position(|&c| x < c).unwrap_or(self.cumulative.len() - 1)
    }
}

impl Source for Chooser {
    type Op = QueryOp;

    async fn next(&mut self) -> Option<QueryOp> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let label = self.choose();
        let now_us = chrono::Utc::now().timestamp_micros();
        let params = self.queries[label].params.iter().map(|p| p.sample(&mut self.rng, now_us)).collect();
        Some(QueryOp { label, params })
    }
}

/// Replaces `$1`, `$2` ... with SQL literals, for the simple protocol (which
/// has no bound parameters). Quoted strings and identifiers are left alone.
pub fn inline_params(sql: &str, params: &[Value]) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.char_indices().peekable();
    let mut quote: Option<char> = None;
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '$') => {
                let digits: String = sql[i + 1..].chars().take_while(|d| d.is_ascii_digit()).collect();
                if let Some(v) = digits.parse::<usize>().ok().and_then(|n| params.get(n.wrapping_sub(1))) {
                    out.push_str(&v.to_sql_literal());
                    for _ in 0..digits.len() {
                        chars.next();
                    }
                    continue;
                }
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

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
            Err(e) => return Err(crate::driver::pg::query_refused(e, &what())),
        };
        let (wanted, given) = (statement.params().len(), q.params.len());
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
    async fn reconnect(&mut self) -> Result<()> {
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

/// A worker's query connection over either protocol.
pub enum QueryRunner {
    Pg(QueryExecutor),
    Crate(CrateQueryExecutor),
}

impl QueryRunner {
    /// Opens worker `w`'s connection (CrateDB: to its round-robin host).
    pub async fn open(target: &Target, w: usize, queries: Arc<[QuerySpec]>, protocol: Protocol) -> Result<Self> {
        Ok(match target {
            Target::Pg { pg, .. } => QueryRunner::Pg(QueryExecutor::open(pg, queries, protocol).await?),
            Target::Crate(c) => QueryRunner::Crate(CrateQueryExecutor::open(c, w, queries).await?),
        })
    }
}

impl QueryRunner {
    /// CrateDB's own time per query, as it reported it; none over the PostgreSQL protocol.
    pub fn server_duration(&self) -> Option<&Histogram<u64>> {
        match self {
            QueryRunner::Crate(e) => Some(e.server_duration()),
            QueryRunner::Pg(_) => None,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{rng_for, Purpose};

    fn spec(name: &str, ratio: f64) -> QuerySpec {
        QuerySpec { name: name.into(), query: "select 1".into(), ratio, params: vec![], line: 1 }
    }

    #[test]
    fn weighted_choice_converges_to_the_ratios() {
        let queries: Arc<[QuerySpec]> = vec![spec("a", 0.7), spec("b", 0.2), spec("c", 0.1)].into();
        let mut chooser = Chooser::new(queries, rng_for(5, 0, Purpose::Choice), 0);
        let mut counts = [0u32; 3];
        for _ in 0..100_000 {
            counts[chooser.choose()] += 1;
        }
        for (count, want) in counts.iter().zip([0.7, 0.2, 0.1]) {
            let share = *count as f64 / 100_000.0;
            assert!((share - want).abs() < 0.01, "{counts:?}");
        }
    }

    #[test]
    fn inlines_parameters_outside_quotes() {
        let params = [Value::Int(3), Value::Text("O'Brien".into())];
        assert_eq!(
            inline_params("select '$1', \"$2\" from t where a = $1 and b = $2 and c = $3", &params),
            "select '$1', \"$2\" from t where a = 3 and b = 'O''Brien' and c = $3"
        );
        assert_eq!(inline_params("select $10", &params), "select $10");
    }
}
