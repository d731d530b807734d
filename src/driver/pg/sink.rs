//! A worker's PostgreSQL-protocol connection for ingest: its statements
//! prepared once per set of columns and statement size, each batch sent in
//! a transaction of its own (COPY, multi-row INSERT or UNNEST), and a batch
//! left in doubt by a lost connection looked up once that connection's
//! server process is gone. [`Sink`](crate::driver::sink::Sink) dispatches to it.

use std::time::Instant;

use anyhow::Result;
use bytes::Bytes;
use futures_util::SinkExt;
use postgres_types::ToSql;
use tokio_postgres::{Client, Statement};

use super::{classify, Canceller, PgTarget};
use crate::dialect::{cratedb, postgres as sql, Engine, Method};
use crate::driver::sink::SinkSpec;
use crate::encode::insert_values::params;
use crate::encode::unnest::ArrayParam;
use crate::encode::{CopyPieces, Payload, COPY_PIECE};
use crate::error::usage;
use crate::model::Schema;
use crate::op::{InDoubt, OpError};

/// A worker's connection with its statements prepared.
pub struct PgSink {
    client: Client,
    /// Where to connect again after the connection was lost (boxed: a
    /// libpq config is large, and the sink is moved around by value).
    target: Box<PgTarget>,
    cancel: Canceller,
    spec: SinkSpec,
    /// The statements of each set of columns that batches sent, the full
    /// set first: insert-json's batches may leave columns with a default
    /// to the database (see [`Batch::omitted`](crate::model::Batch)), a
    /// handful of sets in practice, at most [`COLUMN_SETS`].
    prepared: Vec<Prepared>,
    /// The server process of this connection, when a batch left in doubt
    /// by its loss can be looked up (see [`PgSink::resolve`]).
    backend: Option<i32>,
    /// That of the connection lost before this one was opened.
    lost_backend: Option<i32>,
}

/// How long [`PgSink::resolve`] waits for the server process of a lost
/// connection to end (and its transaction with it) before giving up.
const BACKEND_GONE: std::time::Duration = std::time::Duration::from_secs(5);

/// How many sets of columns a connection keeps statements prepared for.
/// Past it, the set prepared longest ago (never the full set) is closed on
/// the server to make room, and prepared again if a batch needs it again:
/// input whose rows name ever other columns costs a PREPARE per such batch,
/// and the server's memory for prepared statements stays bounded.
const COLUMN_SETS: usize = 16;

/// How many sizes of short chunk a set of columns keeps an INSERT prepared
/// for, besides the full one. The last batch of a run is short, and so are
/// insert-json's batches that end where the rows' columns change, at any
/// length: past it, the size prepared longest ago is closed, so a connection
/// holds at most `COLUMN_SETS × (SHORT_SIZES + 1)` INSERT statements.
const SHORT_SIZES: usize = 8;

/// The statements for the batches that send one set of columns.
struct Prepared {
    /// The columns these batches leave out ([`Batch::omitted`](crate::model::Batch)).
    omitted: Vec<usize>,
    /// The columns they send.
    schema: Schema,
    statements: Statements,
}

enum Statements {
    Copy(Statement),
    /// COPY into the staging table, then upsert from it.
    CopyUpsert {
        copy: Statement,
        upsert: Statement,
    },
    /// Prepared per statement size (full chunks, then the remainder).
    Insert(Vec<(usize, Statement)>),
    Unnest(Statement),
}

impl PgSink {
    pub async fn open(target: &PgTarget, spec: &SinkSpec) -> Result<PgSink> {
        if spec.method == Method::Bulk {
            return Err(usage("--method bulk needs CrateDB's HTTP endpoint: give a cratedb:// URL"));
        }
        let client = target.connect().await?;
        let t = &spec.table;
        let s = &spec.schema;
        if spec.method.is_copy() && spec.upsert {
            client.batch_execute(&sql::create_stage(t)).await?;
        }
        let statements = Statements::prepare(&client, spec, s).await?;
        let prepared = vec![Prepared { omitted: Vec::new(), schema: s.clone(), statements }];
        // Only where a batch can be looked up: CrateDB has no pg_backend_pid().
        let backend = match sql::batch_rows_found(t, s) {
            Some(_) if spec.engine != Engine::Cratedb => Some(client.query_one(sql::BACKEND_PID, &[]).await?.get(0)),
            _ => None,
        };
        let cancel = target.canceller(&client);
        Ok(PgSink {
            client,
            cancel,
            target: Box::new(target.clone()),
            spec: spec.clone(),
            prepared,
            backend,
            lost_backend: None,
        })
    }

    /// Cancels the statement running on the server, if any.
    pub(in crate::driver) async fn cancel(&self) {
        self.cancel.cancel().await
    }

    /// Replaces a lost connection with a new one, its statements prepared again.
    pub(in crate::driver) async fn reconnect(&mut self) -> Result<()> {
        let lost = self.backend;
        *self = PgSink { lost_backend: lost, ..PgSink::open(&self.target, &self.spec).await? };
        Ok(())
    }

    /// Whether batch `p`, in flight when the previous connection was lost,
    /// is in the table: its rows are looked up by the model's key, once the
    /// server process of that connection is gone (so its transaction has
    /// either committed or rolled back). Needs a key; only whole batches
    /// are written (one transaction each), so all or none of them is found.
    pub(in crate::driver) async fn resolve(&mut self, p: &Payload) -> InDoubt {
        let (Some(old), Some(stmt)) = (self.lost_backend, sql::batch_rows_found(&self.spec.table, &self.spec.schema))
        else {
            return InDoubt::Unknown;
        };
        match self.count_found(old, &stmt, p).await {
            Ok(n) if n == p.rows() => InDoubt::Written(n),
            Ok(0) => InDoubt::NotWritten,
            _ => InDoubt::Unknown,
        }
    }

    async fn count_found(&self, old: i32, stmt: &str, p: &Payload) -> Result<u64> {
        let gone = self.client.prepare(sql::BACKEND_ENDED).await?;
        let waited = Instant::now();
        while !self.client.query_one(&gone, &[&old]).await?.get::<_, bool>(0) {
            anyhow::ensure!(
                waited.elapsed() < BACKEND_GONE,
                "server process {old} of the lost connection is still there"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let b = &p.batch;
        let arrays: Vec<ArrayParam> = b.columns.iter().map(|values| ArrayParam { values, len: b.len }).collect();
        let params: Vec<&(dyn ToSql + Sync)> = arrays.iter().map(|a| a as &(dyn ToSql + Sync)).collect();
        let found: i64 = self.client.query_one(stmt, &params).await?.get(0);
        Ok(found as u64)
    }

    /// Sends one batch. Its values stay in `p` until it is acknowledged,
    /// so that a batch found unwritten after a reconnect can be sent again.
    pub(in crate::driver) async fn send(&mut self, p: &mut Payload) -> Result<u64, OpError> {
        let result = self.try_send(p).await;
        result.map_err(|e| classify(&e, self.client.is_closed()))
    }

    /// Where in `prepared` the statements for batches that leave out
    /// `omitted` are, preparing them the first time (see [`COLUMN_SETS`]).
    async fn statements_for(&mut self, omitted: &[usize]) -> Result<usize, tokio_postgres::Error> {
        if let Some(at) = self.prepared.iter().position(|p| p.omitted == omitted) {
            return Ok(at);
        }
        if self.prepared.len() == COLUMN_SETS {
            self.prepared.remove(1);
        }
        let schema = self.spec.schema.without(omitted);
        let statements = Statements::prepare(&self.client, &self.spec, &schema).await?;
        self.prepared.push(Prepared { omitted: omitted.to_vec(), schema, statements });
        Ok(self.prepared.len() - 1)
    }

    async fn try_send(&mut self, p: &mut Payload) -> Result<u64, tokio_postgres::Error> {
        let at = self.statements_for(&p.batch.omitted).await?;
        let Prepared { schema, statements, .. } = &mut self.prepared[at];
        let pieces = || CopyPieces::new(&p.batch, self.spec.method);
        match statements {
            Statements::Copy(stmt) => copy_committed(&self.client, stmt, pieces(), None).await,
            Statements::CopyUpsert { copy, upsert } => copy_committed(&self.client, copy, pieces(), Some(upsert)).await,
            Statements::Unnest(stmt) => {
                let b = &p.batch;
                let arrays = b.sent().map(|values| ArrayParam { values, len: b.len });
                self.client.execute_raw(&*stmt, arrays).await
            }
            Statements::Insert(prepared) => {
                let b = &p.batch;
                let chunk = self.spec.insert_rows;
                // Prepare the statement for a short last chunk once per size.
                let tail = b.len % chunk;
                if tail != 0 && !prepared.iter().any(|(n, _)| *n == tail) {
                    if prepared.len() > SHORT_SIZES {
                        prepared.remove(1);
                    }
                    let s = sql::insert_values(&self.spec.table, schema, tail, self.spec.upsert);
                    prepared.push((tail, self.client.prepare(&s).await?));
                }
                let stmt_for = |n: usize| &prepared.iter().find(|(k, _)| *k == n).expect("prepared above").1;
                if b.len <= chunk {
                    return self.client.execute_raw(stmt_for(b.len), params(b, 0..b.len)).await;
                }
                let tx = self.client.transaction().await?;
                let mut n = 0;
                for start in (0..b.len).step_by(chunk) {
                    let end = (start + chunk).min(b.len);
                    n += tx.execute_raw(stmt_for(end - start), params(b, start..end)).await?;
                }
                tx.commit().await?;
                Ok(n)
            }
        }
    }
}

impl Statements {
    /// Prepares the statements that write the columns of `s` (all of the
    /// spec's, or those a batch sends) by the spec's method.
    async fn prepare(client: &Client, spec: &SinkSpec, s: &Schema) -> Result<Statements, tokio_postgres::Error> {
        let t = &spec.table;
        Ok(match (spec.method, spec.upsert) {
            (Method::Copy | Method::CopyCsv, false) => {
                Statements::Copy(client.prepare(&sql::copy_in(&t.sql(), s, spec.method)).await?)
            }
            (Method::Copy | Method::CopyCsv, true) => Statements::CopyUpsert {
                copy: client.prepare(&sql::copy_in_stage(s, spec.method)).await?,
                upsert: client.prepare(&sql::upsert_from_stage(t, s)).await?,
            },
            (Method::Unnest, upsert) => {
                let stmt = match spec.engine {
                    Engine::Cratedb => cratedb::insert_unnest(t, s, upsert, true),
                    _ => sql::insert_unnest(t, s, upsert),
                };
                Statements::Unnest(client.prepare(&stmt).await?)
            }
            // Bulk is refused by `PgSink::open`: it has no statement here.
            (Method::Insert | Method::Bulk, upsert) => {
                let full = client.prepare(&sql::insert_values(t, s, spec.insert_rows, upsert)).await?;
                Statements::Insert(vec![(spec.insert_rows, full)])
            }
        })
    }
}

/// An encoded COPY payload (insert-from-sql's tuples, passed on as the
/// source sent them) cut into pieces of at most [`COPY_PIECE`] (views of
/// it, not copies): the driver copies each message into its connection's
/// write buffer, which keeps the largest size it had, so a whole batch per
/// message would leave a batch-sized buffer on every connection.
pub(super) fn slices(bytes: Bytes) -> impl Iterator<Item = Bytes> + Send {
    (0..bytes.len()).step_by(COPY_PIECE).map(move |at| bytes.slice(at..(at + COPY_PIECE).min(bytes.len())))
}

/// Sends one complete COPY payload (header to trailer), given in pieces
/// that are made as the connection takes them, in a transaction of its
/// own, and returns the rows the server counted, once its COMMIT is
/// acknowledged. `then` (the staging table's upsert) runs in the same
/// transaction, and its count is returned instead.
///
/// Not COPY's implicit transaction: `CopyInSink::finish` returns at COPY's
/// CommandComplete, before that transaction commits at Sync, so a commit
/// that fails (a deferred constraint, a server gone) would go unnoticed
/// and the batch be counted as written. The transaction costs no round
/// trip of its own: BEGIN goes out with the COPY, the first piece is
/// encoded while the server answers it, and `then` and COMMIT go out right
/// behind the COPY's end. The connection writes requests in order, so the
/// server sees them in order; if the COPY (or `then`) fails, the COMMIT
/// that follows in the failed transaction rolls it back, and the error of
/// the statement that failed is what this returns. The COMMIT's answer is
/// awaited, so a batch's latency includes its commit.
pub(super) async fn copy_committed(
    client: &Client,
    copy: &Statement,
    pieces: impl Iterator<Item = Bytes> + Send,
    then: Option<&Statement>,
) -> Result<u64, tokio_postgres::Error> {
    use futures_util::future::{try_join, try_join3};
    let sent = async {
        let mut pieces = pieces.peekable();
        // `try_join3` polls (so sends) BEGIN first, then the COPY behind it,
        // then encodes the first piece while the server answers them.
        let begin = client.batch_execute(sql::BEGIN);
        let first = async { Ok(pieces.peek().map(drop)) };
        let ((), sink, _) = try_join3(begin, client.copy_in::<_, Bytes>(copy), first).await?;
        futures_util::pin_mut!(sink);
        sink.send_all(&mut futures_util::stream::iter(pieces.map(Ok))).await?;
        let commit = client.batch_execute(sql::COMMIT);
        match then {
            None => Ok(try_join(sink.finish(), commit).await?.0),
            Some(then) => Ok(try_join3(sink.finish(), client.execute(then, &[]), commit).await?.1),
        }
    }
    .await;
    if sent.is_err() && !client.is_closed() {
        // Ends the failed transaction so the next batch starts clean (after
        // a COMMIT that rolled back or failed there is none left, and
        // ROLLBACK only warns).
        let _ = client.batch_execute(sql::ROLLBACK).await;
    }
    sent
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_payload_is_sent_in_slices_that_together_are_the_payload() {
        let payload: Bytes = (0..=255u8).cycle().take(2 * COPY_PIECE + 1).collect::<Vec<_>>().into();
        let cut: Vec<Bytes> = slices(payload.clone()).collect();
        assert_eq!(cut.len(), 3);
        assert!(cut.iter().all(|s| s.len() <= COPY_PIECE));
        assert_eq!(cut.concat(), payload.to_vec());
        assert_eq!(slices(Bytes::new()).count(), 0);
    }
}
