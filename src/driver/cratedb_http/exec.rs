//! The two executors a worker runs against CrateDB over HTTP: ingest
//! ([`CrateSink`]: posts each batch's body as it writes it) and queries
//! ([`CrateQueryExecutor`]: `dbload timeit` and `workload`). Both keep, next
//! to the client's round trip that the worker loop records, the time CrateDB
//! itself reports per request, so a report can tell the server's share of
//! the latency from the network's and the client's.

use std::sync::Arc;

use anyhow::Result;
use bytes::BufMut;
use hdrhistogram::Histogram;

use super::{bulk_outcome, rowcount_outcome, CrateConn, CrateTarget, SqlResponse, NOT_SENT};
use crate::encode::crate_bulk;
use crate::op::{Executor, InDoubt, OpError};
use crate::stats::hist::{new_histogram, record_us};
use crate::workload::params::Value;
use crate::workload::{QueryOp, QuerySpec};

/// CrateDB's `duration` of each answered request, in µs, warm-up left out
/// as the worker loop leaves it out of its own figures.
struct ServerDuration {
    /// Boxed for the reason [`CrateConn`]'s connection is.
    histogram: Box<Histogram<u64>>,
}

impl ServerDuration {
    fn new() -> Self {
        ServerDuration { histogram: Box::new(new_histogram()) }
    }

    fn record(&mut self, warm: bool, resp: &Result<SqlResponse, OpError>) {
        if let (false, Ok(SqlResponse { duration_ms: Some(ms), .. })) = (warm, resp) {
            // At least 1 µs, as every latency dbload records.
            record_us(&mut self.histogram, ((ms * 1000.0).round() as u64).max(1));
        }
    }
}

/// One worker's ingest over HTTP: each batch is one `_sql` request whose
/// body (`encode::crate_bulk`) is written a piece at a time as it is sent,
/// so a worker holds one piece of a body, not bodies: encoding a batch
/// costs a fraction of its round trip (see docs/engines/cratedb.md).
pub struct CrateSink {
    conn: CrateConn,
    /// Bodies carry `bulk_args` (rows counted from per-row results) rather
    /// than one statement (rows counted from its rowcount).
    bulk: bool,
    /// The last batch failed before any of it was sent: its node refused
    /// the connection ([`NOT_SENT`]).
    unsent: bool,
    server: ServerDuration,
}

impl CrateSink {
    /// Opens worker `worker`'s connection (see [`CrateTarget::connect`]);
    /// `bulk`: the bodies will be `crate_bulk::bulk` ones.
    pub async fn open(target: &CrateTarget, worker: usize, bulk: bool) -> Result<CrateSink> {
        let conn = target.connect(worker).await?;
        Ok(CrateSink { conn, bulk, unsent: false, server: ServerDuration::new() })
    }

    /// Replaces a lost connection with one to the next node of the list
    /// (see [`CrateConn::next_node`]).
    pub async fn reconnect(&mut self) -> Result<()> {
        self.conn.next_node().await
    }

    /// Whether the batch in flight when the connection was lost was
    /// written: not when it was never sent (it may be sent again, to the
    /// next node); otherwise nobody can tell, as CrateDB's HTTP answers
    /// carry no types to look a batch's keys up by.
    pub fn resolve(&self) -> InDoubt {
        if self.unsent {
            InDoubt::NotWritten
        } else {
            InDoubt::Unknown
        }
    }

    /// Posts one batch of `rows` rows, its body written by `write` a piece
    /// at a time (see [`CrateConn::post_chunked`]); the rows CrateDB
    /// acknowledged (see [`bulk_outcome`]: a bulk request may fail in part).
    /// `warm`: a warm-up batch, whose server-side duration is left out.
    pub async fn send(
        &mut self,
        write: &mut (dyn FnMut(&mut Vec<u8>) -> bool + Send),
        rows: u64,
        warm: bool,
    ) -> Result<u64, OpError> {
        let resp = self.conn.post_chunked(write).await;
        self.unsent = resp.as_ref().is_err_and(|e| e.class == NOT_SENT);
        self.server.record(warm, &resp);
        if self.bulk {
            bulk_outcome(resp, rows)
        } else {
            rowcount_outcome(resp, rows)
        }
    }

    /// CrateDB's own time per request (µs), for the report to merge over
    /// workers and show beside the client's round trip.
    pub fn server_duration(&self) -> &Histogram<u64> {
        &self.server.histogram
    }
}

/// One worker's queries over HTTP: `{"stmt": <query>, "args": [<params>]}`
/// per execution. CrateDB takes `$1`-style placeholders (and `?`), so a
/// workload file written for PostgreSQL runs unchanged.
pub struct CrateQueryExecutor {
    conn: CrateConn,
    /// Per query of the mix, its body up to the parameters (`{"stmt":"…","args":[`),
    /// escaped once at open.
    heads: Vec<Vec<u8>>,
    body: Vec<u8>,
    server: ServerDuration,
}

impl CrateQueryExecutor {
    /// Opens worker `worker`'s connection (see [`CrateTarget::connect`]) for
    /// the queries of a mix.
    pub async fn open(target: &CrateTarget, worker: usize, queries: Arc<[QuerySpec]>) -> Result<CrateQueryExecutor> {
        let heads = queries.iter().map(|q| query_head(&q.query)).collect();
        let conn = target.connect(worker).await?;
        Ok(CrateQueryExecutor { conn, heads, body: Vec::new(), server: ServerDuration::new() })
    }

    /// Replaces a lost connection with one to the next node of the list
    /// (see [`CrateConn::next_node`]).
    pub async fn reconnect(&mut self) -> Result<()> {
        self.conn.next_node().await
    }

    /// CrateDB's own time per query (µs), for the report to merge over
    /// workers and show beside the client's round trip.
    pub fn server_duration(&self) -> &Histogram<u64> {
        &self.server.histogram
    }
}

/// A query's body up to its parameters: `{"stmt":"<query>","args":[`.
fn query_head(query: &str) -> Vec<u8> {
    let mut head = Vec::new();
    crate_bulk::head(query, "args", &mut head);
    head
}

/// The whole body of one execution: its query's head, then its parameters.
fn query_body(head: &[u8], params: &[Value], out: &mut Vec<u8>) {
    out.clear();
    out.put_slice(head);
    for (i, p) in params.iter().enumerate() {
        if i > 0 {
            out.put_u8(b',');
        }
        param(p, out);
    }
    out.put_slice(b"]}");
}

/// A drawn parameter as JSON; timestamps as epoch milliseconds, the form
/// CrateDB compares with its `TIMESTAMP` columns.
fn param(p: &Value, out: &mut Vec<u8>) {
    match p {
        Value::Int(n) => crate_bulk::integer(*n, out),
        Value::Float(x) => crate_bulk::float(*x, out),
        Value::Text(s) => crate_bulk::string(s, out),
        Value::Verbatim(s) => crate_bulk::string(s, out),
        Value::Bool(b) => out.put_slice(if *b { b"true" } else { b"false" }),
        Value::Timestamp(us) => crate_bulk::timestamp(*us, out),
    }
}

impl Executor<QueryOp> for CrateQueryExecutor {
    /// Runs one query and reads its whole result: 1 query on success.
    async fn execute(&mut self, op: &mut QueryOp, warm: bool) -> Result<u64, OpError> {
        query_body(&self.heads[op.label], &op.params, &mut self.body);
        let resp = self.conn.post(&self.body).await;
        self.server.record(warm, &resp);
        resp.map(|_| 1)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn query_bodies() {
        let query = "select max(m1) from t where d = $1 and time > $2 and s = $3";
        let params = [
            Value::Int(3),
            Value::Timestamp(1_700_000_000_123_999),
            Value::Text("O'Brien \"x\"".into()),
            Value::Float(0.5),
            Value::Bool(true),
        ];
        let mut body = Vec::new();
        query_body(&query_head(query), &params, &mut body);
        let got: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(got, json!({"stmt": query, "args": [3, 1_700_000_000_123i64, "O'Brien \"x\"", 0.5, true]}));
        query_body(&query_head("select \"x\"\n"), &[], &mut body);
        let got: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(got, json!({"stmt": "select \"x\"\n", "args": []}));
    }

    #[test]
    fn server_durations_skip_warmup_and_failures() {
        let mut s = ServerDuration::new();
        let ok = |ms: f64| Ok(SqlResponse { duration_ms: Some(ms), ..Default::default() });
        s.record(true, &ok(5.0));
        s.record(false, &ok(2.5));
        s.record(false, &Err(OpError::new("CrateDB 4000", "syntax")));
        s.record(false, &ok(0.0001));
        assert_eq!(s.histogram.len(), 2);
        assert_eq!(s.histogram.min(), 1);
        assert!(s.histogram.equivalent(s.histogram.max(), 2500), "{}", s.histogram.max());
    }
}
