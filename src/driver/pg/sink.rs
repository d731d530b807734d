//! A worker's PostgreSQL-protocol connection for ingest: each batch sent
//! on dbload's own connection ([`Wire`], the measured path) in a
//! transaction of its own, by COPY, multi-row INSERT or UNNEST, with the
//! statements prepared once per set of columns and statement size; and a
//! batch left in doubt by a lost connection looked up, on a control
//! connection of tokio-postgres's, once that connection's server process
//! is gone. The dispatch over the protocols (`driver/sink.rs`) sends to it.
//!
//! A COPY batch goes out in one write (statement, rows, end), so the server
//! waits for the client once per batch, between its answer and the next
//! batch's Query; the next batch's COPY is not opened ahead behind this
//! one's commit, as it was with tokio-postgres (whose `copy_in` waited for
//! CopyInResponse, which made two waits per batch of which that saved one).
//! Measured (issue 31, release builds, `bench/ingest-vs-copy.sh` with
//! `MEASURED=` the build before, 1 worker, 3,000,000 rows in batches of
//! 10,000, 8 alternating rounds, load average 3.3-4.4): rows/s 1.06 × the
//! build before as a median (0.93-1.39, ahead in 5 rounds of 8), 0.89 × the
//! server's own single COPY (0.77-1.13) against 0.87 × (0.67-0.96); client
//! CPU per row (user + sys, `/usr/bin/time`) 0.285 µs (0.253 + 0.033)
//! against 0.323 µs (0.262 + 0.052); peak RSS unchanged (12.9-13.3 MiB).

use std::time::Instant;

use anyhow::Result;
use postgres_types::ToSql;
use tokio_postgres::Client;

use super::wire::{self, Answered, Wire, NO_VALUES};
use super::PgTarget;
use crate::dialect::{cratedb, postgres as sql, Engine, Method};
use crate::driver::spec::SinkSpec;
use crate::encode::insert_values::params;
use crate::encode::unnest::ArrayParam;
use crate::encode::CopyPieces;
use crate::encode::Payload;
use crate::error::usage;
use crate::model::Schema;
use crate::op::{InDoubt, OpError, Refused};

/// A worker's connection with its statements prepared.
pub struct PgSink {
    wire: Wire,
    /// Where to connect again after the connection was lost, and where a
    /// batch left in doubt is looked up (boxed: a libpq config is large,
    /// and the sink is moved around by value).
    target: Box<PgTarget>,
    spec: SinkSpec,
    /// The statements of each set of columns that batches sent, the full
    /// set first: insert-json's batches may leave columns with a default
    /// to the database (see [`Batch::omitted`](crate::model::Batch)), a
    /// handful of sets in practice, at most [`COLUMN_SETS`].
    prepared: Vec<ColumnSet>,
    /// BEGIN and COMMIT, prepared where a batch can take several INSERT
    /// statements: they go out in the batch's pipeline.
    transaction: Option<(wire::Prepared, wire::Prepared)>,
    /// How many statements this connection prepared: each is named after
    /// its number, so that none replaces another.
    named: u64,
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
struct ColumnSet {
    /// The columns these batches leave out ([`Batch::omitted`](crate::model::Batch)).
    omitted: Vec<usize>,
    /// The columns they send.
    schema: Schema,
    statements: Statements,
}

enum Statements {
    /// The Query that carries a batch's COPY: with `--upsert`, a COPY into
    /// the staging table and the upsert from it, one transaction.
    Copy(String),
    /// Prepared per statement size (full chunks, then the remainder).
    Insert(Vec<(usize, wire::Prepared)>),
    Unnest(wire::Prepared),
}

impl PgSink {
    pub async fn open(target: &PgTarget, spec: &SinkSpec) -> Result<PgSink> {
        if spec.method == Method::Bulk {
            return Err(usage("--method bulk needs CrateDB's HTTP endpoint: give a cratedb:// URL"));
        }
        let mut wire = Wire::connect(target).await?;
        let t = &spec.table;
        if spec.method.is_copy() && spec.upsert {
            let stage = sql::create_stage(t);
            wire.simple(&stage).await.map_err(|error| Refused { statement: stage, error })?;
        }
        let mut named = 0;
        let statements = Statements::prepare(&mut wire, &mut named, spec, &spec.schema).await?;
        let prepared = vec![ColumnSet { omitted: Vec::new(), schema: spec.schema.clone(), statements }];
        let transaction = match spec.method {
            Method::Insert => Some((
                prepare(&mut wire, &next_name(&mut named), sql::BEGIN).await?,
                prepare(&mut wire, &next_name(&mut named), sql::COMMIT).await?,
            )),
            _ => None,
        };
        // Only where a batch can be looked up: CrateDB has no pg_backend_pid().
        let backend = match sql::batch_rows_found(t, &spec.schema) {
            Some(_) if spec.engine != Engine::Cratedb => Some(wire.cancel_key().0),
            _ => None,
        };
        Ok(PgSink {
            wire,
            target: Box::new(target.clone()),
            spec: spec.clone(),
            prepared,
            transaction,
            named,
            backend,
            lost_backend: None,
        })
    }

    /// Cancels the statement running on the server, if any.
    pub(in crate::driver) async fn cancel(&mut self) {
        self.wire.canceller().cancel_or_say().await
    }

    /// Replaces a lost connection with a new one, its statements prepared
    /// again.
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

    /// On a control connection of its own: a lookup's cost is not measured,
    /// and it reads values, which the measured connection does not decode.
    async fn count_found(&mut self, old: i32, stmt: &str, p: &Payload) -> Result<u64> {
        let client: Client = self.target.connect().await?;
        let gone = client.prepare(sql::BACKEND_ENDED).await?;
        let waited = Instant::now();
        while !client.query_one(&gone, &[&old]).await?.get::<_, bool>(0) {
            anyhow::ensure!(
                waited.elapsed() < BACKEND_GONE,
                "server process {old} of the lost connection is still there"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let b = &p.batch;
        let arrays: Vec<ArrayParam> = b.columns.iter().map(|values| ArrayParam { values, len: b.len }).collect();
        let params: Vec<&(dyn ToSql + Sync)> = arrays.iter().map(|a| a as &(dyn ToSql + Sync)).collect();
        let found: i64 = client.query_one(stmt, &params).await?.get(0);
        Ok(found as u64)
    }

    /// Where in `prepared` the statements for batches that leave out
    /// `omitted` are, preparing them the first time (see [`COLUMN_SETS`]).
    async fn statements_for(&mut self, omitted: &[usize]) -> Result<usize, OpError> {
        if let Some(at) = self.prepared.iter().position(|p| p.omitted == omitted) {
            return Ok(at);
        }
        if self.prepared.len() == COLUMN_SETS {
            let oldest = self.prepared.remove(1);
            oldest.statements.close(&mut self.wire).await?;
        }
        let schema = self.spec.schema.without(omitted);
        let statements =
            Statements::prepare(&mut self.wire, &mut self.named, &self.spec, &schema).await.map_err(|r| r.error)?;
        self.prepared.push(ColumnSet { omitted: omitted.to_vec(), schema, statements });
        Ok(self.prepared.len() - 1)
    }

    /// Sends one batch and returns the rows the server wrote, once their
    /// transaction committed. Its values stay in `p` until it is
    /// acknowledged, so that a batch found unwritten after a reconnect can
    /// be sent again.
    pub(in crate::driver) async fn send(&mut self, p: &mut Payload) -> Result<u64, OpError> {
        let at = self.statements_for(&p.batch.omitted).await?;
        let ColumnSet { schema, statements, .. } = &mut self.prepared[at];
        let (wire, spec, b) = (&mut self.wire, &self.spec, &p.batch);
        match statements {
            Statements::Copy(query) => {
                // CrateDB takes no data before it answered the COPY.
                let answered = match spec.engine {
                    Engine::Cratedb => Answered::Awaited,
                    _ => Answered::NotAwaited,
                };
                wire.copy_pieces(query, CopyPieces::new(b, spec.method), answered).await
            }
            Statements::Unnest(stmt) => {
                wire.pipe_values(stmt, b.sent().map(|values| ArrayParam { values, len: b.len }))?;
                wire.sync();
                wire.flush().await?;
                wire.answer().await
            }
            Statements::Insert(prepared) => {
                let chunk = spec.insert_rows;
                // Prepare the statement for a short last chunk once per size.
                let tail = b.len % chunk;
                if tail != 0 && !prepared.iter().any(|(n, _)| *n == tail) {
                    if prepared.len() > SHORT_SIZES {
                        wire.close(prepared.remove(1).1).await?;
                    }
                    let s = sql::insert_values(&spec.table, schema, tail, spec.upsert);
                    let stmt = prepare(wire, &next_name(&mut self.named), &s).await.map_err(|r| r.error)?;
                    prepared.push((tail, stmt));
                }
                let stmt_for = |n: usize| &prepared.iter().find(|(k, _)| *k == n).expect("prepared above").1;
                if b.len <= chunk {
                    wire.pipe_values(stmt_for(b.len), params(b, 0..b.len))?;
                    wire.sync();
                    wire.flush().await?;
                    return wire.answer().await;
                }
                let (begin, commit) = self.transaction.as_ref().expect("prepared with the INSERTs");
                let chunks = (0..b.len).step_by(chunk).map(|start| start..(start + chunk).min(b.len));
                whole(wire, begin, commit, chunks.map(|rows| (stmt_for(rows.len()), params(b, rows)))).await
            }
        }
    }
}

/// Sends `statements` (each with its values) as one transaction in one
/// pipeline: BEGIN, each statement, COMMIT, one Sync, so a batch of
/// several statements is written whole or not at all, in one round trip.
/// Returns the rows they wrote, or the first error: the server skips the
/// rest of the pipeline after it, and the transaction that it leaves
/// failed is then rolled back, so the next batch starts clean. A value
/// that cannot be bound ends the pipeline there, without its COMMIT.
async fn whole<'a, P: postgres_types::BorrowToSql>(
    wire: &mut Wire,
    begin: &wire::Prepared,
    commit: &wire::Prepared,
    statements: impl Iterator<Item = (&'a wire::Prepared, impl ExactSizeIterator<Item = P> + Clone)>,
) -> Result<u64, OpError> {
    wire.pipe(begin, NO_VALUES)?;
    let mut failed = None;
    for (statement, values) in statements {
        if let Err(e) = wire.pipe_values(statement, values) {
            failed = Some(e);
            break;
        }
    }
    if failed.is_none() {
        wire.pipe(commit, NO_VALUES)?;
    }
    wire.sync();
    wire.flush().await?;
    let mut rows = 0;
    while wire.in_flight() > 0 {
        match wire.answer().await {
            Ok(n) => rows += n,
            Err(e) if e.fatal => return Err(e),
            Err(e) => {
                failed.get_or_insert(e);
            }
        }
    }
    match failed {
        None => Ok(rows),
        Some(e) => {
            // After a COMMIT that rolled back there is no transaction left,
            // and ROLLBACK only warns.
            wire.simple(sql::ROLLBACK).await?;
            Err(e)
        }
    }
}

/// Prepares `sql` on `wire` as `name` (unnamed: `""`); a statement the
/// server refuses is said with the server's reason.
async fn prepare(wire: &mut Wire, name: &str, sql: &str) -> Result<wire::Prepared, Refused> {
    wire.prepare(name, sql).await.map_err(|error| Refused { statement: sql.to_owned(), error })
}

/// The name of the connection's next prepared statement: its number, so
/// that none replaces another.
fn next_name(named: &mut u64) -> String {
    *named += 1;
    format!("dbload_sink_{named}")
}

impl Statements {
    /// Prepares the statements that write the columns of `s` (all of the
    /// spec's, or those a batch sends) by the spec's method. A COPY is
    /// sent as a simple Query (each batch its own): it is parsed here,
    /// unnamed, only so that a COPY the server refuses is found now.
    async fn prepare(wire: &mut Wire, named: &mut u64, spec: &SinkSpec, s: &Schema) -> Result<Statements, Refused> {
        let t = &spec.table;
        Ok(match (spec.method, spec.upsert) {
            (Method::Copy | Method::CopyCsv, false) => {
                let copy = sql::copy_in(&t.sql(), s, spec.method);
                prepare(wire, "", &copy).await?;
                Statements::Copy(copy)
            }
            (Method::Copy | Method::CopyCsv, true) => {
                let (copy, upsert) = (sql::copy_in_stage(s, spec.method), sql::upsert_from_stage(t, s));
                prepare(wire, "", &copy).await?;
                prepare(wire, "", &upsert).await?;
                Statements::Copy(format!("{copy}; {upsert}"))
            }
            (Method::Unnest, upsert) => {
                let stmt = match spec.engine {
                    Engine::Cratedb => cratedb::insert_unnest(t, s, upsert, true),
                    _ => sql::insert_unnest(t, s, upsert),
                };
                Statements::Unnest(prepare(wire, &next_name(named), &stmt).await?)
            }
            // Bulk is refused by `PgSink::open`: it has no statement here.
            (Method::Insert | Method::Bulk, upsert) => {
                let full =
                    prepare(wire, &next_name(named), &sql::insert_values(t, s, spec.insert_rows, upsert)).await?;
                Statements::Insert(vec![(spec.insert_rows, full)])
            }
        })
    }

    /// Closes the statements on the server, to make room for others.
    async fn close(self, wire: &mut Wire) -> Result<(), OpError> {
        match self {
            Statements::Copy(_) => Ok(()),
            Statements::Unnest(stmt) => wire.close(stmt).await,
            Statements::Insert(sized) => {
                for (_, stmt) in sized {
                    wire.close(stmt).await?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;

    use bytes::BytesMut;

    use super::*;
    use crate::ident::TableName;
    use crate::model::{Batch, Column, SqlType, Values};
    use crate::throwaway::{LocalOptions, LocalPostgres};

    /// Runs `test` on a runtime of its own against a throwaway server.
    fn on_a_server<F: Future<Output = ()>>(test: impl FnOnce(PgTarget) -> F) {
        let server = LocalPostgres::start(&LocalOptions { max_connections: 10, ..LocalOptions::default() }).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(test(server.target()));
    }

    /// A sink writing `pipelined (id int4 PRIMARY KEY, v int4 DEFAULT 7)`
    /// by `method`, on `pg`, with an admin connection beside it.
    async fn sink_on(pg: &PgTarget, method: Method, insert_rows: usize) -> (PgSink, Client) {
        let admin = pg.connect().await.unwrap();
        admin.batch_execute("CREATE TABLE pipelined (id int4 PRIMARY KEY, v int4 DEFAULT 7)").await.unwrap();
        let int4 =
            |name: &str| Column { name: name.into(), ty: SqlType::Int4, not_null: false, cast: None, fields: vec![] };
        let schema = Schema { columns: vec![int4("id"), int4("v")], key: vec![], metrics_per_row: 0 };
        let table = TableName::parse("pipelined").unwrap();
        let engine = Engine::Postgres;
        let spec = SinkSpec { table, schema, method, upsert: false, insert_rows, batch_size: 5, engine };
        (PgSink::open(pg, &spec).await.unwrap(), admin)
    }

    /// A batch of ids, with v (ten times the id) or leaving it to its default.
    fn batch(ids: &[i32], with_v: bool) -> Payload {
        let v = if with_v { ids.iter().map(|i| i * 10).collect() } else { Vec::new() };
        let columns = vec![Values::Int4(ids.to_vec()), Values::Int4(v)];
        let omitted = if with_v { vec![] } else { vec![1] };
        Payload { batch: Batch { len: ids.len(), columns, omitted }, bytes: BytesMut::new() }
    }

    const WRITTEN: &str = "SELECT count(*)::int4, coalesce(sum(v), 0)::int4 FROM pipelined";

    /// A batch of more rows than one INSERT takes is one transaction: a
    /// statement that fails leaves none of its rows, and the next batch
    /// starts clean.
    #[test]
    fn an_insert_batch_of_several_statements_is_written_whole_or_not_at_all() {
        on_a_server(|pg| async move {
            let (mut sink, admin) = sink_on(&pg, Method::Insert, 2).await;
            assert_eq!(sink.send(&mut batch(&[1, 2, 3, 4, 5], true)).await.unwrap(), 5);
            let failed = sink.send(&mut batch(&[6, 7, 8, 1, 9], true)).await.unwrap_err();
            assert_eq!(failed.class, "SQLSTATE 23505", "{failed:?}");
            assert_eq!(sink.send(&mut batch(&[6, 7, 8], true)).await.unwrap(), 3);
            let row = admin.query_one(WRITTEN, &[]).await.unwrap();
            assert_eq!((row.get::<_, i32>(0), row.get::<_, i32>(1)), (8, 360));
        });
    }

    /// Each method writes whole batches, those that leave a column to its
    /// default too, and a refused batch leaves nothing and the connection
    /// usable.
    #[test]
    fn every_method_writes_its_batches_on_the_wire() {
        for method in [Method::Copy, Method::CopyCsv, Method::Unnest, Method::Insert] {
            on_a_server(|pg| async move {
                let (mut sink, admin) = sink_on(&pg, method, 2).await;
                assert_eq!(sink.send(&mut batch(&[1, 2, 3], true)).await.unwrap(), 3, "{method:?}");
                assert_eq!(sink.send(&mut batch(&[4, 5], false)).await.unwrap(), 2, "{method:?}");
                let failed = sink.send(&mut batch(&[6, 1], true)).await.unwrap_err();
                assert_eq!(failed.class, "SQLSTATE 23505", "{method:?}: {failed:?}");
                assert_eq!(sink.send(&mut batch(&[6], true)).await.unwrap(), 1, "{method:?}");
                let row = admin.query_one(WRITTEN, &[]).await.unwrap();
                assert_eq!((row.get::<_, i32>(0), row.get::<_, i32>(1)), (6, 60 + 14 + 60), "{method:?}");
            });
        }
    }

    /// Statements replaced in the connection's cache are closed on the
    /// server: a run of batches of ever other lengths leaves at most
    /// `SHORT_SIZES + 1` INSERTs prepared (and BEGIN and COMMIT).
    #[test]
    fn statements_replaced_in_the_cache_are_closed_on_the_server() {
        on_a_server(|pg| async move {
            let (mut sink, _admin) = sink_on(&pg, Method::Insert, 20).await;
            for (n, len) in (21..40).enumerate() {
                let ids: Vec<i32> = (0..len).map(|i| (n * 100) as i32 + i).collect();
                assert_eq!(sink.send(&mut batch(&ids, true)).await.unwrap(), len as u64);
            }
            let held = sink.wire.simple("SELECT FROM pg_prepared_statements").await.unwrap();
            assert_eq!(held, (SHORT_SIZES + 1 + 2) as u64);
        });
    }
}
