//! The PostgreSQL protocol's query executor: a worker's connection sending
//! the mix's queries with the chosen protocol (pgbench's -M), reading every
//! row back, and cancelling on the server what the run gave up on; and,
//! before the run, the check that every query prepares and `--explain`'s plans.
//! A pgbench script is sent statement by statement, each timed (`-r`).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, Result};
use tokio_postgres::types::Type;
use tokio_postgres::{Client, SimpleQueryMessage};

use super::error::query_refused;
use super::wire::{Prepared, Wire};
use super::PgTarget;
use crate::clock::Clock;
use crate::dialect::postgres as sql;
use crate::error::usage;
use crate::op::{ErrorCode, Executor, OpError};
use crate::stats::query::{Connects, Retries, StatementRecord};
use crate::workload::explain::{self, Explain, ExplainMode};
use crate::workload::params::{ParamGen, Value};
use crate::workload::script::{Action, Pipeline, Script, Tries};
use crate::workload::{inline_params, Protocol, QueryOp, QuerySpec};

/// The statements a query sends, with how many parameters each binds: one
/// for a query, a script's in order.
fn statements(q: &QuerySpec) -> Vec<(&str, usize)> {
    match &q.script {
        Some(s) => s.statements.iter().enumerate().map(|(i, st)| (st.sql.as_str(), s.param_count(i))).collect(),
        None => vec![(q.query.as_str(), q.placeholders())],
    }
}

/// Prepares every query once, before the run: a query the server cannot
/// prepare (an unknown table or column, a syntax error) or whose `$n`
/// placeholders do not match its `params` would fail identically at every
/// execution, so it stops the run here with the server's reason (exit 2)
/// rather than filling the report with millions of failures.
pub async fn check(client: &Client, queries: &[QuerySpec], protocol: Protocol) -> Result<()> {
    for q in queries {
        for (i, (sql, given)) in statements(q).into_iter().enumerate() {
            let what = || match &q.script {
                Some(s) => format!("{} line {} (`{}`)", s.origin, s.statements[i].line, s.statements[i].text),
                None => format!("query {} (`{}`)", q.name, q.query),
            };
            let statement = match client.prepare(sql).await {
                Ok(statement) => statement,
                // Several statements in one query are the simple protocol's to
                // send; the server checks them only when they run.
                Err(e) if protocol == Protocol::Simple && several_statements(&e, sql) => continue,
                Err(e) => return Err(query_refused(e, &what())),
            };
            let wanted = statement.params().len();
            if wanted != given {
                return Err(crate::workload::placeholder_mismatch(&what(), wanted, given));
            }
            // The simple protocol splices literals, which the server casts.
            if protocol != Protocol::Simple {
                check_param_types(&q.params, statement.params()).map_err(|e| usage(format!("{}: {e}", what())))?;
                check_texts(client, &q.params, statement.params(), &what()).await?;
            }
        }
    }
    Ok(())
}

/// Whether the values `params` draw bind to the types the server inferred
/// for their placeholders, in order (a window and distinct values fill
/// several); the error names the placeholder, `$N`.
fn check_param_types(params: &[ParamGen], types: &[Type]) -> std::result::Result<(), String> {
    let mut first = 0;
    for g in params {
        let mine = types.get(first..first + g.arity()).unwrap_or_default();
        g.check_types(mine)
            .map_err(|(i, why)| format!("parameter ${}: {why}; change the parameter or the query", first + i + 1))?;
        first += g.arity();
    }
    Ok(())
}

/// Text values bound to a placeholder of another type travel in text
/// format and the server parses them: each is parsed here once, one
/// statement per placeholder, so a value its type cannot read (`abc` for an
/// int4) stops the run before it starts instead of failing its share of the
/// queries. `what`: the query, for messages.
async fn check_texts(client: &Client, params: &[ParamGen], types: &[Type], what: &str) -> Result<()> {
    let mut first = 0;
    for g in params {
        let texts = g.texts();
        for (i, ty) in types.iter().enumerate().skip(first).take(g.arity()) {
            if texts.is_empty() || matches!(*ty, Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN)
            {
                continue;
            }
            match client.query(&sql::texts_as(ty.schema(), ty.name()), &[&texts]).await {
                // A data exception (SQLSTATE class 22): a value the type cannot read.
                Err(e) if e.code().is_some_and(|c| c.code().starts_with("22")) => {
                    return Err(query_refused(e, &format!("{what}: parameter ${}", i + 1)));
                }
                // Anything else (an engine without this cast or unnest)
                // leaves the values to the run.
                _ => {}
            }
        }
        first += g.arity();
    }
    Ok(())
}

/// Whether the server refused to prepare `sql` for holding several
/// statements: a syntax error (42601) with no position in the text (a
/// parse error has one), for a text that dbload's lexer cuts in several.
/// Told by code and field, not by the message, which the server translates.
fn several_statements(e: &tokio_postgres::Error, sql: &str) -> bool {
    let refused = e
        .as_db_error()
        .is_some_and(|db| *db.code() == tokio_postgres::error::SqlState::SYNTAX_ERROR && db.position().is_none());
    refused && crate::sqltext::statements(sql).len() > 1
}

/// A worker's connection of dbload's own ([`Wire`]), sending queries with
/// the chosen protocol.
pub struct QueryExecutor {
    wire: Wire,
    /// Where to connect again after the connection was lost (boxed: a
    /// libpq config is large, and the executor is moved around by value).
    target: Box<PgTarget>,
    protocol: Protocol,
    queries: Arc<[QuerySpec]>,
    /// Per query, its statements (a script has several), each checked by
    /// [`check`] before: prepared at open with `Protocol::Prepared`,
    /// described at open and parsed again at each execution with
    /// `Protocol::Extended`; none with `Protocol::Simple`.
    statements: Vec<Vec<Prepared>>,
    /// Per query, its script's commands ([`Script::commands`]: statements
    /// and `\` commands) as this worker measured them (none for a query);
    /// kept across reconnects.
    records: Vec<Vec<StatementRecord>>,
    /// Tries a script run gets (pgbench's `--max-tries`, `--latency-limit`,
    /// the run's end): boxed, as few runs retry and the runner enum stays small.
    tries: Box<Tries>,
    /// The measured runs that needed them; kept across reconnects.
    retries: Retries,
    /// pgbench's `-C`: a new connection before each run but the first.
    connect_each: bool,
    /// Whether a run was sent on this connection (with `-C`, the next needs another).
    used: bool,
    /// With `-C`, why the connection for the next run could not be made:
    /// that run fails with it, unsent (boxed: rare, and an error is large).
    not_ready: Option<Box<OpError>>,
    /// The connections made for each run (`-C`); kept across them.
    connects: Connects,
    /// The statements of the script's pipeline under way, by index, each
    /// with its command's: kept between runs, so a pipeline allocates nothing.
    piped: Vec<(usize, usize)>,
    /// `--pipeline`: queries in flight at once (1: one at a time).
    window: usize,
    /// `--pipeline`: the answers of the pipeline in flight, read whole
    /// before the first is given to the loop (see [`Self::read_pipeline`]).
    answers: VecDeque<Result<u64, OpError>>,
    /// A script's `\sleep`: to the µs, as pgbench's (tokio's timer rounds
    /// up to the next millisecond: `\sleep 1 ms` took 2.2 ms). Boxed: few
    /// scripts sleep, and the runner enum stays small.
    clock: Box<Clock>,
}

/// The SQLSTATEs after which pgbench's `--max-tries` runs a script again:
/// a serialization failure and a deadlock, which the same transaction,
/// run again, may pass.
const RETRIED: [&str; 2] = ["40001", "40P01"];

/// Whether a script run that failed with `e` may be run again.
fn retriable(e: &OpError) -> bool {
    !e.fatal && matches!(&e.code, Some(ErrorCode::Sqlstate(code)) if RETRIED.contains(&code.as_str()))
}

impl QueryExecutor {
    pub async fn open(
        target: &PgTarget,
        queries: Arc<[QuerySpec]>,
        protocol: Protocol,
        tries: Tries,
        connect_each: bool,
        window: usize,
    ) -> Result<Self> {
        let mut wire = Wire::connect(target).await?;
        let mut statements = Vec::new();
        if protocol != Protocol::Simple {
            for (label, q) in queries.iter().enumerate() {
                let mut each = Vec::new();
                for (i, (sql, _)) in self::statements(q).into_iter().enumerate() {
                    let statement = match protocol {
                        Protocol::Prepared => wire.prepare(&format!("q{label}_{i}"), sql).await,
                        _ => wire.describe(sql).await,
                    };
                    each.push(
                        statement.map_err(|e| anyhow!("preparing query {}: {}: {}", q.name, e.class, e.message))?,
                    );
                }
                statements.push(each);
            }
        }
        let records = queries
            .iter()
            .map(|q| q.script.as_ref().map_or(Vec::new(), |s| vec![StatementRecord::default(); s.commands.len()]))
            .collect();
        let target = Box::new(target.clone());
        Ok(QueryExecutor {
            wire,
            target,
            protocol,
            queries,
            statements,
            records,
            tries: Box::new(tries),
            retries: Retries::default(),
            connect_each,
            used: false,
            not_ready: None,
            connects: Connects::default(),
            piped: Vec::new(),
            window,
            answers: VecDeque::with_capacity(window),
            clock: Box::default(),
        })
    }

    /// Replaces a lost connection with a new one, its statements prepared
    /// again (a cancel then reaches the server process running the query
    /// now, not the one that was lost).
    pub(in crate::driver) async fn reconnect(&mut self) -> Result<()> {
        let (records, retries, connects) = (std::mem::take(&mut self.records), self.retries, self.connects);
        let (protocol, tries) = (self.protocol, *self.tries);
        let (connect_each, window) = (self.connect_each, self.window);
        let opened = QueryExecutor::open(&self.target, self.queries.clone(), protocol, tries, connect_each, window);
        *self = QueryExecutor { records, retries, connects, ..opened.await? };
        Ok(())
    }

    /// Per query, its script's commands as this worker measured them.
    pub fn statement_records(&self) -> &[Vec<StatementRecord>] {
        &self.records
    }

    /// pgbench's `-C`: a new connection for the next run, once this one has
    /// served one, timed apart from the run (outside its latency).
    pub(in crate::driver) async fn ready(&mut self) {
        if !(self.connect_each && self.used) {
            return;
        }
        let started = Instant::now();
        match self.reconnect().await {
            Ok(()) => {
                self.connects.made += 1;
                self.connects.total += started.elapsed();
            }
            Err(e) => {
                let why = format!("-C: connecting for the next run: {e:#}");
                self.not_ready = Some(Box::new(OpError::fatal("connection lost", why)));
            }
        }
    }

    /// The connections made for each run (`-C`).
    pub fn connects(&self) -> Connects {
        self.connects
    }

    /// The measured script runs this worker tried more than once.
    pub fn retries(&self) -> Retries {
        self.retries
    }

    /// Sends statement `i` of query `label` with `params` and reads its
    /// answer: the simple protocol's text with the values spliced in, or
    /// the statement bound to them, in one write.
    async fn send(&mut self, label: usize, i: usize, params: &[Value]) -> Result<u64, OpError> {
        if self.protocol == Protocol::Simple {
            let query = &self.queries[label];
            let sql = query.script.as_ref().map_or(&query.query, |s| &s.statements[i].sql);
            return self.wire.simple(&inline_params(sql, params)).await;
        }
        self.wire.push(&self.statements[label][i], params)?;
        self.wire.flush().await?;
        self.wire.answer().await
    }

    async fn run(&mut self, op: &mut QueryOp, warm: bool) -> Result<u64, OpError> {
        if let Some(e) = self.not_ready.take() {
            return Err(*e);
        }
        self.used = true;
        op.retries = 0;
        match self.queries[op.label].script.clone() {
            Some(script) => self.run_script(op, &script, warm).await,
            None => self.send(op.label, 0, &op.params).await,
        }
    }

    /// One run of a script, tried again from its start with the same values
    /// after a serialization failure or a deadlock while [`Tries`] allows
    /// (pgbench's `--max-tries`): the run counts once, on its last try.
    async fn run_script(&mut self, op: &mut QueryOp, script: &Script, warm: bool) -> Result<u64, OpError> {
        if let Some(why) = &op.invalid {
            return Err(OpError::new("script error", why.clone()));
        }
        let (mut tries, first) = (1, Instant::now());
        loop {
            let again = self.tries.again(tries, first);
            match self.try_script(op, script, warm, !again).await {
                Err(e) if again && retriable(&e) => tries += 1,
                result => {
                    op.retries = tries - 1;
                    if !warm {
                        self.retries.ran(tries);
                        // `-r`: the `\set`s, drawn (and timed) before the run.
                        let sets = script.sets().zip(&op.sets);
                        sets.for_each(|(c, took)| self.records[op.label][c].ok(*took));
                    }
                    return result;
                }
            }
        }
    }

    /// One try of a script: its statements in order with their share of the
    /// drawn parameters, its sleeps between them, its pipelines sent whole.
    /// The first statement that fails ends the try, rolling back a
    /// transaction the script opened; it counts as the statement's failure
    /// unless the run is to be tried again.
    async fn try_script(&mut self, op: &QueryOp, script: &Script, warm: bool, last: bool) -> Result<u64, OpError> {
        let (mut params, mut sleeps) = (&op.params[..], op.sleeps.iter());
        let mut piped = std::mem::take(&mut self.piped);
        piped.clear();
        let mut in_pipeline = false;
        let mut failed = None;
        for (c, action) in script.actions() {
            // `\` commands are timed as pgbench times them for `-r`.
            let started = Instant::now();
            let i = match action {
                Action::Sleep => {
                    self.clock.sleep_until(started + *sleeps.next().expect("one drawn per sleep")).await;
                    self.took(op.label, c, started, warm);
                    continue;
                }
                Action::Pipeline(Pipeline::Start) => {
                    in_pipeline = true;
                    self.took(op.label, c, started, warm);
                    continue;
                }
                Action::Pipeline(Pipeline::Sync) => {
                    self.wire.sync();
                    self.took(op.label, c, started, warm);
                    continue;
                }
                Action::Pipeline(Pipeline::End) => {
                    in_pipeline = false;
                    failed = self.end_pipeline(op.label, &piped, warm, last).await;
                    piped.clear();
                    if failed.is_some() {
                        break;
                    }
                    self.took(op.label, c, started, warm);
                    continue;
                }
                Action::Statement(i) => i,
            };
            let (own, rest) = params.split_at(script.param_count(i));
            params = rest;
            if in_pipeline {
                match self.wire.pipe(&self.statements[op.label][i], own) {
                    Ok(()) => piped.push((c, i)),
                    Err(e) => {
                        // Not sent: what was piped before it is, and answered.
                        self.count(op.label, c, &e, warm, last);
                        let before = self.end_pipeline(op.label, &piped, warm, last).await;
                        failed = Some((i, before.map_or(e, |(_, e)| e)));
                        break;
                    }
                }
                continue;
            }
            match self.send(op.label, i, own).await {
                Ok(_) => self.took(op.label, c, started, warm),
                Err(e) => {
                    self.count(op.label, c, &e, warm, last);
                    failed = Some((i, e));
                    break;
                }
            }
        }
        self.piped = piped;
        let Some((i, mut e)) = failed else { return Ok(1) };
        if !e.fatal {
            // A statement that fails inside BEGIN ... END leaves the
            // transaction aborted; outside one this is a no-op.
            let _ = self.wire.simple(sql::ROLLBACK).await;
        }
        e.message = format!("{} line {}: {}", script.origin, script.statements[i].line, e.message);
        Err(e)
    }

    /// Records command `c` of query `label` as done, `started` then, unless it is warm-up.
    fn took(&mut self, label: usize, c: usize, started: Instant, warm: bool) {
        if !warm {
            self.records[label][c].ok(started.elapsed());
        }
    }

    /// Counts command `c`'s failure, unless it is warm-up; a failure whose
    /// run is to be tried again counts as the command's retry, as pgbench's `-r`.
    fn count(&mut self, label: usize, c: usize, e: &OpError, warm: bool, last: bool) {
        match (warm, last || !retriable(e)) {
            (true, _) => {}
            (false, true) => self.records[label][c].failed += 1,
            (false, false) => self.records[label][c].retries += 1,
        }
    }

    /// Ends a pipeline of `piped` statements: its last Sync, one write, and
    /// every answer read in order, each statement timed from that write
    /// (when the server got it). After an error the server skips the rest
    /// of its transaction up to the next Sync: each of those counts as
    /// failed too, not executed. A lost connection (a write that fails, a
    /// FATAL) answers none of the statements still in flight: each of them
    /// counts as failed once, as the `--pipeline` window counts its own.
    /// Returns the first error, with its statement.
    async fn end_pipeline(
        &mut self,
        label: usize,
        piped: &[(usize, usize)],
        warm: bool,
        last: bool,
    ) -> Option<(usize, OpError)> {
        self.wire.sync();
        if let Err(e) = self.wire.flush().await {
            piped.iter().for_each(|&(c, _)| self.count(label, c, &e, warm, last));
            return piped.first().map(|&(_, i)| (i, e));
        }
        let sent = Instant::now();
        let mut first = None;
        for (n, &(c, i)) in piped.iter().enumerate() {
            match self.wire.answer().await {
                Ok(_) => self.took(label, c, sent, warm),
                Err(e) => {
                    self.count(label, c, &e, warm, last);
                    if e.fatal {
                        piped[n + 1..].iter().for_each(|&(c, _)| self.count(label, c, &e, warm, last));
                        return Some(first.unwrap_or((i, e)));
                    }
                    first.get_or_insert((i, e));
                }
            }
        }
        first
    }
}

impl QueryExecutor {
    /// Reads the answers of the oldest pipeline in flight, up to its Sync,
    /// into `answers`. The server runs a pipeline's statements as one
    /// transaction (as pgbench's `\startpipeline` ... `\endpipeline`): after
    /// an error it skips the rest ([`Wire::answer`] counts each "pipeline
    /// aborted"), and it rolls back those answered before it, which are
    /// failed here ("pipeline rolled back"), so what counts as done is what
    /// the server kept. The server sends a pipeline's answers at its Sync,
    /// all at once: reading them whole delays none. A lost connection took
    /// the transaction with it: its error alone is kept, for the loop to
    /// fail each statement in flight once.
    async fn read_pipeline(&mut self) {
        let mut failed = None;
        loop {
            let ends = self.wire.ends_pipeline();
            let answer = self.wire.answer().await;
            match &answer {
                Err(e) if e.fatal => {
                    self.answers.clear();
                    self.answers.push_back(answer);
                    return;
                }
                Err(e) => {
                    failed.get_or_insert_with(|| (self.answers.len(), format!("{}: {}", e.class, e.message)));
                }
                Ok(_) => {}
            }
            self.answers.push_back(answer);
            if ends {
                break;
            }
        }
        if let Some((at, cause)) = failed {
            for answer in self.answers.range_mut(..at) {
                let why = format!("executed, then rolled back with its pipeline: a later statement failed ({cause})");
                *answer = Err(OpError::new("pipeline rolled back", why));
            }
        }
    }
}

impl Executor<QueryOp> for QueryExecutor {
    async fn execute(&mut self, op: &mut QueryOp, warm: bool) -> Result<u64, OpError> {
        self.run(op, warm).await.map(|_rows| 1)
    }

    fn ends_at(&mut self, end: Option<Instant>) {
        self.tries.ends = end;
    }

    fn window(&self) -> usize {
        self.window
    }

    /// Pipelined: a query's Bind and Execute, buffered (the config
    /// refuses `--pipeline` with scripts, `-M simple` and `-C`).
    fn send(&mut self, op: &mut QueryOp, _warm: bool) -> Result<(), OpError> {
        self.wire.pipe(&self.statements[op.label][0], &op.params)
    }

    /// One Sync for all that was sent since the last: one write, and the
    /// server answers them all at once (read whole: see `read_pipeline`).
    /// Measured (`bench/pipeline-vs-pgbench.sh`, release build, `select 1`
    /// 16 in flight, -M prepared -c 8 -j 2, 3 alternating rounds of 3 s on
    /// 2 shared cores, load average 4-7): a Sync per flush ran at 1.28×
    /// pgbench's `\startpipeline` script (IQR 1.12-1.34), 1.23 µs of client
    /// CPU per query against its 1.50; a Sync per statement (each its own
    /// transaction, so an error would fail it alone) at 0.55× (0.51-0.56),
    /// 2.24 µs against 1.34: the server then sends each answer on its own
    /// and the client reads and writes far more often.
    async fn flush(&mut self) -> Result<(), OpError> {
        self.wire.sync();
        self.wire.flush().await
    }

    async fn receive(&mut self) -> Result<u64, OpError> {
        if self.answers.is_empty() {
            self.read_pipeline().await;
        }
        let answer = self.answers.pop_front().expect("read_pipeline reads at least one answer");
        answer.map(|_rows| 1)
    }

    fn received(&self) -> bool {
        !self.answers.is_empty()
    }

    async fn cancel(&mut self) {
        self.wire.canceller().cancel_or_say().await
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

/// The scale of pgbench's tables (`dbload init`, `pgbench -i`): its branches.
pub async fn pgbench_scale(client: &Client) -> Result<i64> {
    let row = client.query_one(crate::dialect::pgbench::COUNT_SCALE, &[]).await.map_err(|e| {
        crate::error::usage(format!(
            "--builtin needs pgbench's tables, which could not be read ({}): run `dbload init --scale N` first \
             (pgbench -i makes the same tables)",
            super::error::error_text(&e)
        ))
    })?;
    Ok(row.get::<_, i64>(0).max(1))
}
