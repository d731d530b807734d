//! A worker's PostgreSQL-protocol connection for ingest: its statements
//! prepared once per set of columns and statement size, each batch sent in
//! a transaction of its own (COPY, multi-row INSERT or UNNEST), and a batch
//! left in doubt by a lost connection looked up once that connection's
//! server process is gone. The dispatch over the protocols (`driver/sink.rs`)
//! sends to it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use bytes::Bytes;
use futures_util::future::MaybeDone;
use futures_util::SinkExt;
use postgres_types::ToSql;
use tokio_postgres::{Client, CopyInSink, Statement};

use super::error::classify;
use super::{Canceller, PgTarget};
use crate::dialect::{cratedb, postgres as sql, Engine, Method};
use crate::driver::spec::SinkSpec;
use crate::encode::insert_values::params;
use crate::encode::unnest::ArrayParam;
use crate::encode::{CopyPieces, Payload, COPY_PIECE};
use crate::error::usage;
use crate::model::Schema;
use crate::op::{InDoubt, OpError, Waiting};

/// A worker's connection with its statements prepared.
pub struct PgSink {
    /// Shared with the COPY opened ahead ([`OpenCopy`]), which sends on it
    /// between two batches.
    client: Arc<Client>,
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
    /// Whether the next batch waits, where it follows this one at once
    /// ([`Executor::follow`](crate::op::Executor::follow)).
    waiting: Option<Waiting>,
    /// The next batch's COPY, opened behind the last batch's COMMIT, with
    /// the columns of the batch it was opened for ([`Batch::omitted`](crate::model::Batch)).
    /// A future, not `Sync`: so the sink's async methods take `&mut self`,
    /// which keeps their futures `Send`.
    next: Option<(Vec<usize>, OpenCopy)>,
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
            client: Arc::new(client),
            cancel,
            target: Box::new(target.clone()),
            spec: spec.clone(),
            prepared,
            backend,
            lost_backend: None,
            waiting: None,
            next: None,
        })
    }

    /// Cancels the statement running on the server, if any.
    pub(in crate::driver) async fn cancel(&mut self) {
        self.cancel.cancel().await
    }

    /// Replaces a lost connection with a new one, its statements prepared
    /// again; the worker's loop still says whether the next batch waits.
    pub(in crate::driver) async fn reconnect(&mut self) -> Result<()> {
        let (lost, waiting) = (self.backend, self.waiting.clone());
        *self = PgSink { lost_backend: lost, waiting, ..PgSink::open(&self.target, &self.spec).await? };
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

    async fn count_found(&mut self, old: i32, stmt: &str, p: &Payload) -> Result<u64> {
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

    /// Where to ask whether the next batch waits: if it does when a batch
    /// commits, its COPY is opened behind that COMMIT.
    pub(in crate::driver) fn follow(&mut self, waiting: Waiting) {
        self.waiting = Some(waiting);
    }

    /// The COPY opened ahead for this batch, if it was for its columns.
    /// One for other columns is ended first: nothing else goes out on the
    /// connection while a COPY is open.
    async fn opened_for(&mut self, omitted: &[usize]) -> Result<Option<OpenCopy>, tokio_postgres::Error> {
        match self.next.take() {
            Some((columns, open)) if columns == omitted => Ok(Some(open)),
            Some((_, open)) => {
                // Dropped, it sends CopyFail; its transaction is then failed.
                drop(open);
                self.client.batch_execute(sql::ROLLBACK).await?;
                Ok(None)
            }
            None => Ok(None),
        }
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
        let opened = self.opened_for(&p.batch.omitted).await?;
        let at = self.statements_for(&p.batch.omitted).await?;
        let Prepared { schema, statements, .. } = &mut self.prepared[at];
        let (copy, then) = match statements {
            Statements::Copy(copy) => (copy, None),
            Statements::CopyUpsert { copy, upsert } => (copy, Some(&*upsert)),
            Statements::Unnest(stmt) => {
                let b = &p.batch;
                let arrays = b.sent().map(|values| ArrayParam { values, len: b.len });
                return self.client.execute_raw(&*stmt, arrays).await;
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
                let client = &self.client;
                return committed(client, async {
                    let mut n = 0;
                    for start in (0..b.len).step_by(chunk) {
                        let end = (start + chunk).min(b.len);
                        n += client.execute_raw(stmt_for(end - start), params(b, start..end)).await?;
                    }
                    Ok(n)
                })
                .await;
            }
        };
        let pieces = CopyPieces::new(&p.batch, self.spec.method);
        let (waiting, client) = (&self.waiting, &self.client);
        let next = || waiting.as_ref().is_some_and(|w| w()).then(|| OpenCopy::new(client.clone(), copy.clone()));
        let (sent, next) = copy_committed(&self.client, copy, pieces, then, opened, next).await;
        self.next = next.map(|open| (p.batch.omitted.clone(), open));
        sent
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
///
/// Between two batches the server would wait twice for this client: for
/// the next BEGIN and COPY once it answered the COMMIT, and for the first
/// piece once it answered the COPY. `next` (asked as the COMMIT goes out,
/// when the next batch is likeliest to be ready) opens the next batch's
/// COPY: it goes out right behind the COMMIT, so the server answers the
/// COMMIT and the COPY together and waits once, and it is returned opened
/// (the server waiting in it) for the next batch, `opened` here. Not on a
/// connection that was lost, nor when the batch failed before its COMMIT
/// went out.
pub(super) async fn copy_committed(
    client: &Client,
    copy: &Statement,
    pieces: impl Iterator<Item = Bytes> + Send,
    then: Option<&Statement>,
    opened: Option<OpenCopy>,
    next: impl FnOnce() -> Option<OpenCopy>,
) -> (Result<u64, tokio_postgres::Error>, Option<OpenCopy>) {
    use futures_util::future::{try_join, try_join3};
    let mut committing = false;
    let mut opening = None;
    let sent = async {
        let mut pieces = pieces.peekable();
        // Polled in order: BEGIN and the COPY go out first (unless opened
        // ahead), then the first piece is encoded while the server answers.
        let first = async { Ok(pieces.peek().map(drop)) };
        let sink = match opened {
            Some(open) => try_join(open.sink(), first).await?.0,
            None => try_join3(client.batch_execute(sql::BEGIN), client.copy_in::<_, Bytes>(copy), first).await?.1,
        };
        futures_util::pin_mut!(sink);
        sink.send_all(&mut futures_util::stream::iter(pieces.map(Ok))).await?;
        let commit = client.batch_execute(sql::COMMIT);
        let ended = async {
            match then {
                None => Ok(try_join(sink.finish(), commit).await?.0),
                Some(then) => Ok(try_join3(sink.finish(), client.execute(then, &[]), commit).await?.1),
            }
        };
        committing = true;
        opening = next();
        behind(ended, opening.as_mut()).await
    }
    .await;
    if sent.is_err() && !committing {
        end_failed(client).await;
    }
    (sent, opening.filter(|_| !client.is_closed()))
}

/// Ends the transaction of a batch that failed, so that the next one
/// starts clean (after a COMMIT that rolled back or failed there is none
/// left, and ROLLBACK only warns).
async fn end_failed(client: &Client) {
    if !client.is_closed() {
        let _ = client.batch_execute(sql::ROLLBACK).await;
    }
}

/// Runs `work` in a transaction of its own, its BEGIN sent with its first
/// statement, and commits it.
async fn committed<T>(
    client: &Client,
    work: impl Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, tokio_postgres::Error> {
    let done = async {
        let ((), out) = futures_util::future::try_join(client.batch_execute(sql::BEGIN), work).await?;
        client.batch_execute(sql::COMMIT).await?;
        Ok(out)
    }
    .await;
    if done.is_err() {
        end_failed(client).await;
    }
    done
}

/// Awaits `first`, polling `then` right after it each time, so that what
/// `then` sends goes out behind what `first` sent.
async fn behind<T>(first: impl Future<Output = T>, mut then: Option<&mut OpenCopy>) -> T {
    let mut first = std::pin::pin!(first);
    std::future::poll_fn(|cx| {
        let done = first.as_mut().poll(cx);
        if let Some(then) = then.as_mut() {
            // Its end is kept in it, for [`OpenCopy::sink`].
            let _ = Pin::new(&mut then.0).poll(cx);
        }
        done
    })
    .await
}

/// A batch's COPY opened ahead of it: BEGIN and the COPY statement go out
/// when it is first polled, and it keeps the COPY's sink (or the error)
/// once the server answers.
pub(super) struct OpenCopy(MaybeDone<Opening>);

type Opening = Pin<Box<dyn Future<Output = Result<CopyInSink<Bytes>, tokio_postgres::Error>> + Send>>;

impl OpenCopy {
    fn new(client: Arc<Client>, copy: Statement) -> OpenCopy {
        OpenCopy(MaybeDone::Future(Box::pin(async move {
            let begin = client.batch_execute(sql::BEGIN);
            Ok(futures_util::future::try_join(begin, client.copy_in::<_, Bytes>(&copy)).await?.1)
        })))
    }

    /// The COPY's sink, once the server answered.
    async fn sink(mut self) -> Result<CopyInSink<Bytes>, tokio_postgres::Error> {
        (&mut self.0).await;
        Pin::new(&mut self.0).take_output().expect("polled to its end")
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

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

    /// The state of server process `backend` as `admin` sees it: `active
    /// COPY`, `idle COMM` ...
    async fn state_of(admin: &Client, backend: i32) -> String {
        let sql = "SELECT state || ' ' || left(query, 4) FROM pg_stat_activity WHERE pid = $1";
        admin.query_one(sql, &[&backend]).await.unwrap().get(0)
    }

    /// Whether `backend` is in a COPY within 5 s, and its state then.
    async fn copy_open(admin: &Client, backend: i32) -> (bool, String) {
        let mut state = String::new();
        for _ in 0..250 {
            state = state_of(admin, backend).await;
            if state == "active COPY" {
                return (true, state);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        (false, state)
    }

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

    /// Issue 18: between two batches, one COPY worker's server waited for
    /// the client twice (for the next BEGIN and COPY, then for the first
    /// piece), 1 to 2 ms each on 2 busy cores. With the next batch waiting,
    /// its COPY is open on the server when this one is acknowledged; and
    /// whatever the next batch is (a failure, other columns), every row is
    /// written once and the connection ends the run as it should.
    #[test]
    fn the_next_batch_s_copy_is_open_once_this_one_is_acknowledged() {
        on_a_server(|pg| async move {
            let (mut sink, admin) = sink_on(&pg, Method::Copy, 1).await;
            // Whether the next batch waits, as the worker's feed would say.
            let waits = Arc::new(AtomicBool::new(true));
            let asked = waits.clone();
            sink.follow(Arc::new(move || asked.load(Ordering::Relaxed)));
            let backend: i32 = sink.client.query_one(sql::BACKEND_PID, &[]).await.unwrap().get(0);

            assert_eq!(sink.send(&mut batch(&[1, 2, 3], true)).await.unwrap(), 3);
            let (open, state) = copy_open(&admin, backend).await;
            assert!(open, "the next COPY is open: {state}");
            // That COPY is the next batch's, which opens the one after it.
            assert_eq!(sink.send(&mut batch(&[4, 5], true)).await.unwrap(), 2);
            let (open, state) = copy_open(&admin, backend).await;
            assert!(open, "{state}");
            // A batch that fails at its COPY's end: its COMMIT rolls back, and
            // the next batch's COPY, sent behind it, opens all the same.
            let failed = sink.send(&mut batch(&[5, 6], true)).await.unwrap_err();
            assert_eq!(failed.class, "SQLSTATE 23505", "{failed:?}");
            let (open, state) = copy_open(&admin, backend).await;
            assert!(open, "{state}");
            // A batch of other columns cannot use it: it is ended, and the
            // batch sent by a statement of its own. None waits behind it:
            // nothing is left open on the connection.
            waits.store(false, Ordering::Relaxed);
            assert_eq!(sink.send(&mut batch(&[6, 7], false)).await.unwrap(), 2);
            let state = state_of(&admin, backend).await;
            assert!(state.starts_with("idle"), "{state}");
            let row = admin.query_one(WRITTEN, &[]).await.unwrap();
            assert_eq!((row.get::<_, i32>(0), row.get::<_, i32>(1)), (7, 150 + 14));

            // Dropped with a COPY open (a run stopped by Ctrl-C or its
            // deadline), the sink leaves no transaction behind.
            waits.store(true, Ordering::Relaxed);
            assert_eq!(sink.send(&mut batch(&[8], true)).await.unwrap(), 1);
            let (open, state) = copy_open(&admin, backend).await;
            assert!(open, "{state}");
            drop(sink);
            let gone = "SELECT count(*) FROM pg_stat_activity WHERE pid = $1";
            for _ in 0..250 {
                if admin.query_one(gone, &[&backend]).await.unwrap().get::<_, i64>(0) == 0 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            admin.batch_execute("BEGIN; LOCK TABLE pipelined IN ACCESS EXCLUSIVE MODE NOWAIT; COMMIT").await.unwrap();
            let row = admin.query_one(WRITTEN, &[]).await.unwrap();
            assert_eq!(row.get::<_, i32>(0), 8);
        });
    }

    /// `--reconnect` replaces a lost connection with a new sink: it still
    /// asks whether the next batch waits, and opens that batch's COPY.
    #[test]
    fn a_sink_connected_again_still_opens_the_next_copy() {
        on_a_server(|pg| async move {
            let (mut sink, admin) = sink_on(&pg, Method::Copy, 1).await;
            sink.follow(Arc::new(|| true));
            sink.reconnect().await.unwrap();
            let backend: i32 = sink.client.query_one(sql::BACKEND_PID, &[]).await.unwrap().get(0);
            assert_eq!(sink.send(&mut batch(&[1, 2], true)).await.unwrap(), 2);
            let (open, state) = copy_open(&admin, backend).await;
            assert!(open, "no COPY opened after reconnecting: {state}");
        });
    }

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
