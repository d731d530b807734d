//! dbload's own PostgreSQL connection (`driver::pg::wire`) against the
//! harness's server: statements one by one and pipelined, errors by
//! SQLSTATE, a cancelled statement, COPY without the wait (and the waiting
//! form), a window of COPY batches whose counts are exactly what the
//! server acknowledged, the server's parameters and notices. Each test
//! writes a table of its own, named after it. TLS by libpq's sslmodes
//! against a real CrateDB whose PostgreSQL port has a test CA's
//! certificate, when `DBLOAD_TEST_CRATEDB_TLS_URL` names it.

use std::future::Future;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};
use postgres_types::Type;

use dbload::driver::pg::wire::{Wire, NO_VALUES};
use dbload::driver::PgTarget;
use dbload::op::{ErrorCode, OpError};

use crate::engines::engine_url;
use crate::support::{dbload_bin, Ctx};
use crate::Phase::Parallel;
use crate::{EngineTest, Registered};

pub fn tests() -> Vec<Registered> {
    vec![
        (
            "wire::statements_are_answered_one_by_one_and_in_a_pipeline",
            statements_are_answered_one_by_one_and_in_a_pipeline,
            Parallel,
        ),
        (
            "wire::an_error_in_a_pipeline_fails_its_statement_alone",
            an_error_in_a_pipeline_fails_its_statement_alone,
            Parallel,
        ),
        (
            "wire::a_pipeline_synced_once_answers_each_statement_and_skips_those_after_an_error",
            a_pipeline_synced_once_answers_each_statement_and_skips_those_after_an_error,
            Parallel,
        ),
        (
            "wire::a_pipeline_lost_with_its_backend_counts_what_the_table_holds",
            a_pipeline_lost_with_its_backend_counts_what_the_table_holds,
            Parallel,
        ),
        ("wire::a_terminated_backend_is_a_lost_connection", a_terminated_backend_is_a_lost_connection, Parallel),
        ("wire::a_cancelled_statement_answers_57014_at_once", a_cancelled_statement_answers_57014_at_once, Parallel),
        ("wire::copy_rows_land_with_and_without_the_wait", copy_rows_land_with_and_without_the_wait, Parallel),
        (
            "wire::a_refused_copy_says_its_sqlstate_and_the_connection_goes_on",
            a_refused_copy_says_its_sqlstate_and_the_connection_goes_on,
            Parallel,
        ),
        (
            "wire::a_copy_window_counts_exactly_the_batches_acknowledged",
            a_copy_window_counts_exactly_the_batches_acknowledged,
            Parallel,
        ),
        (
            "wire::a_copy_window_lost_with_its_backend_fails_every_batch_in_flight",
            a_copy_window_lost_with_its_backend_fails_every_batch_in_flight,
            Parallel,
        ),
        (
            "wire::a_set_updates_the_parameter_the_server_reports",
            a_set_updates_the_parameter_the_server_reports,
            Parallel,
        ),
        ("wire::a_notice_is_counted_not_an_error", a_notice_is_counted_not_an_error, Parallel),
        (
            "wire::a_value_that_cannot_be_sent_fails_its_statement_alone",
            a_value_that_cannot_be_sent_fails_its_statement_alone,
            Parallel,
        ),
        (
            "wire::a_described_statement_is_parsed_again_at_each_execution",
            a_described_statement_is_parsed_again_at_each_execution,
            Parallel,
        ),
        (
            "wire::sslmode_require_without_tls_on_the_server_is_refused",
            sslmode_require_without_tls_on_the_server_is_refused,
            Parallel,
        ),
    ]
}

/// A CrateDB whose PostgreSQL port speaks TLS (`ssl.psql.enabled`) with
/// a certificate for the URL's host, as
/// `postgres://crate@localhost:5432/doc?sslmode=verify-full&sslrootcert=CA.pem`.
pub(crate) const CRATEDB_TLS: &str = "DBLOAD_TEST_CRATEDB_TLS_URL";

pub fn engine_tests() -> Vec<EngineTest> {
    vec![("wire::cratedb_tls_by_sslmode", &[CRATEDB_TLS], cratedb_tls_by_sslmode)]
}

/// `url` with its parameter `name` set to `value` (added when it has none).
fn with_param(url: &str, name: &str, value: &str) -> String {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut params: Vec<String> =
        query.split('&').filter(|p| !p.is_empty() && !p.starts_with(&format!("{name}="))).map(String::from).collect();
    params.push(format!("{name}={value}"));
    format!("{base}?{}", params.join("&"))
}

/// Issue 31 against a real CrateDB with TLS on its PostgreSQL port: each of
/// `require`, `verify-ca` and `verify-full` gets an encrypted session on
/// both of dbload's connections (the measured path's own and
/// tokio-postgres's), which CrateDB's `sys.sessions` confirms; a CA that
/// did not sign the server's certificate is refused on both, exit 3, with
/// the certificate's problem named and what to do.
fn cratedb_tls_by_sslmode(_: &Ctx) -> Result<()> {
    let url = engine_url(CRATEDB_TLS)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let plain = PgTarget::from_url(&with_param(&url, "sslmode", "disable"), "--url", &|_| None)?;
    for mode in ["require", "verify-ca", "verify-full"] {
        let pg = PgTarget::from_url(&with_param(&url, "sslmode", mode), "--url", &|_| None)?;
        // CrateDB keeps no application_name given at startup: each session
        // is found by its last statement, read on a plain connection.
        let marker = format!("dbload tls {mode}");
        runtime.block_on(async {
            let mut wire = Wire::connect(&pg).await.with_context(|| format!("sslmode={mode}: dbload's own"))?;
            ensure!(wire.simple(&format!("SELECT '{marker}: dbload'")).await.op()? == 1, "sslmode={mode}");
            let client = pg.connect().await.with_context(|| format!("sslmode={mode}: tokio-postgres"))?;
            client.simple_query(&format!("SELECT '{marker}: tokio-postgres'")).await?;
            let sql = "SELECT last_statement, ssl FROM sys.sessions WHERE strpos(last_statement, $1) > 0 ORDER BY 1";
            let rows = plain.connect().await?.query(sql, &[&marker]).await?;
            let seen: Vec<(String, bool)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
            let want =
                [(format!("SELECT '{marker}: dbload'"), true), (format!("SELECT '{marker}: tokio-postgres'"), true)];
            ensure!(seen == want, "sslmode={mode}: sys.sessions says {seen:?}");
            Ok(())
        })?;
    }
    let dir = tempfile::tempdir()?;
    let wrong = dir.path().join("wrong-ca.pem");
    let key = rcgen::KeyPair::generate()?;
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new())?;
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    std::fs::write(&wrong, params.self_signed(&key)?.pem())?;
    let wrong = with_param(&url, "sslrootcert", &wrong.display().to_string());
    for mode in ["verify-ca", "verify-full"] {
        let wrong = with_param(&wrong, "sslmode", mode);
        let pg = PgTarget::from_url(&wrong, "--url", &|_| None)?;
        let err = runtime.block_on(Wire::connect(&pg)).err().with_context(|| format!("{mode}: a wrong CA taken"))?;
        ensure!(dbload::error::exit_code(&err) == dbload::error::exit::TARGET, "{err:#}");
        ensure!(err.to_string().contains("not signed by a trusted CA"), "{mode}: {err:#}");
        let (code, _, stderr) =
            dbload_bin(&["timeit", "--url", &wrong, "-s", "select 1", "-t", "2", "--no-results"], &[]);
        ensure!(code == 3 && stderr.contains("not signed by a trusted CA"), "{mode}: exit {code}: {stderr}");
    }
    Ok(())
}

/// Runs `test` on a current-thread runtime (as a worker's) with the two
/// ways to the harness's server: its Unix socket (trusted) and TCP (SCRAM,
/// the password from the harness's password file).
fn both<F: Future<Output = Result<()>>>(ctx: &Ctx, test: impl Fn(PgTarget) -> F) -> Result<()> {
    let tcp = PgTarget::from_url(&ctx.url, "--url", &|_| None)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    for pg in [ctx.target().clone(), tcp] {
        let name = pg.redacted().to_owned();
        runtime.block_on(test(pg)).with_context(|| name)?;
    }
    Ok(())
}

/// An operation's error as a test's.
trait Op<T> {
    fn op(self) -> Result<T>;
}

impl<T> Op<T> for Result<T, OpError> {
    fn op(self) -> Result<T> {
        self.map_err(|e| anyhow::anyhow!("{}: {}", e.class, e.message))
    }
}

fn sqlstate(result: Result<u64, OpError>) -> Result<String> {
    match result {
        Ok(rows) => anyhow::bail!("expected an error, got {rows} rows"),
        Err(e) => Ok(e.class),
    }
}

fn statements_are_answered_one_by_one_and_in_a_pipeline(ctx: &Ctx) -> Result<()> {
    both(ctx, |pg| async move {
        let mut wire = Wire::connect(&pg).await?;
        ensure!(wire.cancel_key() != (0, 0));
        let s = wire.prepare("s1", "SELECT g FROM generate_series(1, $1::int4) g").await.op()?;
        ensure!(s.params() == [Type::INT4]);
        wire.push(&s, &[&3i32]).op()?;
        wire.flush().await.op()?;
        ensure!(wire.answer().await.op()? == 3);
        // 16 in flight, answered in order.
        for n in 1..=16i32 {
            wire.push(&s, &[&n]).op()?;
        }
        ensure!(wire.in_flight() == 16);
        wire.flush().await.op()?;
        for n in 1..=16u64 {
            ensure!(wire.answer().await.op()? == n);
        }
        ensure!(wire.in_flight() == 0);
        Ok(())
    })
}

/// A value its parameter's type cannot take (an int8 for an int4, text
/// that is not a number) fails its statement before anything is sent, naming
/// the parameter, and leaves nothing half-written behind: the statements
/// before and after it on the same connection are answered.
fn a_value_that_cannot_be_sent_fails_its_statement_alone(ctx: &Ctx) -> Result<()> {
    both(ctx, |pg| async move {
        let mut wire = Wire::connect(&pg).await?;
        let s = wire.prepare("pair", "SELECT $1::int4 + $2::int4").await.op()?;
        wire.push(&s, &[&1i32, &2i32]).op()?;
        let e = wire.push(&s, &[&3i64, &4i64]).unwrap_err();
        ensure!(e.class == "client error" && e.message.starts_with("parameter $1: "), "{e:?}");
        wire.push(&s, &[&5i32, &6i32]).op()?;
        ensure!(wire.in_flight() == 2);
        wire.flush().await.op()?;
        ensure!(wire.answer().await.op()? == 1);
        ensure!(wire.answer().await.op()? == 1);
        ensure!(wire.simple("SELECT 1").await.op()? == 1);
        Ok(())
    })
}

/// pgbench's `-M extended`: a statement described once for its parameters'
/// types, then parsed by the server at each execution (the unnamed
/// statement, in the same write as its Bind), so a named statement
/// prepared beside it is not disturbed.
fn a_described_statement_is_parsed_again_at_each_execution(ctx: &Ctx) -> Result<()> {
    both(ctx, |pg| async move {
        let mut wire = Wire::connect(&pg).await?;
        let described = wire.describe("SELECT g FROM generate_series(1, $1::int4) g").await.op()?;
        ensure!(described.params() == [Type::INT4]);
        let prepared = wire.prepare("named", "SELECT 10 / $1::int4").await.op()?;
        for n in 1..=3i32 {
            wire.push(&described, &[&n]).op()?;
            wire.push(&prepared, &[&n]).op()?;
        }
        wire.flush().await.op()?;
        for n in 1..=3u64 {
            ensure!(wire.answer().await.op()? == n);
            ensure!(wire.answer().await.op()? == 1);
        }
        let parsed = "SELECT name FROM pg_prepared_statements";
        ensure!(wire.simple(parsed).await.op()? == 1);
        Ok(())
    })
}

fn an_error_in_a_pipeline_fails_its_statement_alone(ctx: &Ctx) -> Result<()> {
    both(ctx, |pg| async move {
        let mut wire = Wire::connect(&pg).await?;
        let s = wire.prepare("div", "SELECT 10 / $1::int4").await.op()?;
        for d in [1i32, 0, 2] {
            wire.push(&s, &[&d]).op()?;
        }
        wire.flush().await.op()?;
        ensure!(wire.answer().await.op()? == 1);
        let e = wire.answer().await.unwrap_err();
        ensure!((e.class.as_str(), e.fatal) == ("SQLSTATE 22012", false), "{e:?}");
        // Kept typed, for code that branches on it (op::ErrorCode).
        ensure!(e.code == Some(ErrorCode::Sqlstate("22012".into())), "{e:?}");
        ensure!(e.message.contains("division by zero"), "{}", e.message);
        ensure!(wire.answer().await.op()? == 1);
        // A statement that does not prepare says why, and the connection goes on.
        ensure!(wire.prepare("bad", "SELEC 1").await.unwrap_err().class == "SQLSTATE 42601");
        ensure!(wire.simple("SELECT 1; SELECT 2, 3").await.op()? == 1);
        Ok(())
    })
}

/// pgbench's `\startpipeline` ... `\endpipeline`: statements piped with one
/// Sync for them all. Each is answered on its own; after an error the
/// server skips the rest up to the Sync, and each of those is counted not
/// executed. The statements up to a Sync are one transaction: an error
/// rolls back the writes before it.
fn a_pipeline_synced_once_answers_each_statement_and_skips_those_after_an_error(ctx: &Ctx) -> Result<()> {
    both(ctx, |pg| async move {
        let mut wire = Wire::connect(&pg).await?;
        let div = wire.prepare("div", "SELECT 10 / $1::int4").await.op()?;
        for _ in 0..2 {
            for d in [1i32, 2, 0, 5, 10] {
                wire.pipe(&div, &[&d]).op()?;
            }
            wire.sync();
            ensure!(wire.in_flight() == 5);
            wire.flush().await.op()?;
            let mut answers = Vec::new();
            for _ in 0..5 {
                answers.push(wire.answer().await.map_err(|e| e.class));
            }
            let skipped = Err("pipeline aborted".to_owned());
            ensure!(
                answers == [Ok(1), Ok(1), Err("SQLSTATE 22012".to_owned()), skipped.clone(), skipped],
                "{answers:?}"
            );
            ensure!(wire.in_flight() == 0);
        }
        // 16 in one pipeline, then one statement synced alone behind it.
        for _ in 0..16 {
            wire.pipe(&div, &[&1i32]).op()?;
        }
        wire.sync();
        wire.push(&div, &[&2i32]).op()?;
        wire.flush().await.op()?;
        for _ in 0..17 {
            ensure!(wire.answer().await.op()? == 1);
        }
        // One transaction up to the Sync.
        wire.simple("DROP TABLE IF EXISTS wire_pipeline_tx; CREATE TABLE wire_pipeline_tx (v int)").await.op()?;
        let insert = wire.prepare("insert", "INSERT INTO wire_pipeline_tx VALUES (10 / $1::int4)").await.op()?;
        for d in [1i32, 1, 0] {
            wire.pipe(&insert, &[&d]).op()?;
        }
        wire.sync();
        wire.flush().await.op()?;
        ensure!(wire.answer().await.op()? == 1 && wire.answer().await.op()? == 1);
        ensure!(wire.answer().await.is_err());
        ensure!(wire.simple("SELECT FROM wire_pipeline_tx").await.op()? == 0);
        Ok(())
    })
}

/// 10 inserts of 100 ms each in flight, each its own transaction, and
/// the backend terminated after 350 ms: those answered are what the table
/// holds, and every answer is fatal from the first error on (the server's
/// FATAL 57P01, or the lost connection: over TCP, a server that closes
/// with statements unread resets the connection, and its last message
/// can be lost with it).
fn a_pipeline_lost_with_its_backend_counts_what_the_table_holds(ctx: &Ctx) -> Result<()> {
    both(ctx, |pg| async move {
        let mut admin = Wire::connect(&pg).await?;
        admin.simple("DROP TABLE IF EXISTS wire_pipeline_lost; CREATE TABLE wire_pipeline_lost (v int)").await.op()?;
        let mut wire = Wire::connect(&pg).await?;
        let insert =
            wire.prepare("insert", "INSERT INTO wire_pipeline_lost SELECT $1::int4 FROM pg_sleep(0.1)").await.op()?;
        for v in 0..10i32 {
            wire.push(&insert, &[&v]).op()?;
        }
        wire.flush().await.op()?;
        let backend = wire.cancel_key().0;
        let terminating = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(350)).await;
            admin.simple(&format!("SELECT pg_terminate_backend({backend})")).await.op()?;
            Ok::<_, anyhow::Error>(admin)
        });
        let mut answers = Vec::new();
        for _ in 0..10 {
            answers.push(wire.answer().await.map_err(|e| (e.class, e.fatal)));
        }
        let mut admin = terminating.await??;
        let written = answers.iter().take_while(|a| a.is_ok()).count();
        ensure!((1..10).contains(&written), "{answers:?}");
        ensure!(answers[..written].iter().all(|a| *a == Ok(1)), "{answers:?}");
        ensure!(answers[written..].iter().all(|a| matches!(a, Err((_, true)))), "{answers:?}");
        ensure!(admin.simple("SELECT FROM wire_pipeline_lost").await.op()? == written as u64, "{answers:?}");
        Ok(())
    })
}

fn a_terminated_backend_is_a_lost_connection(ctx: &Ctx) -> Result<()> {
    both(ctx, |pg| async move {
        let mut wire = Wire::connect(&pg).await?;
        let mut admin = Wire::connect(&pg).await?;
        admin.simple(&format!("SELECT pg_terminate_backend({})", wire.cancel_key().0)).await.op()?;
        let e = wire.simple("SELECT 1").await.unwrap_err();
        ensure!(e.fatal, "{e:?}");
        Ok(())
    })
}

/// A statement of 30 s, cancelled from a handle (as the deadline or
/// Ctrl-C cancels) once it runs: it answers 57014 at once, and the
/// connection goes on.
fn a_cancelled_statement_answers_57014_at_once(ctx: &Ctx) -> Result<()> {
    both(ctx, |pg| async move {
        let mut wire = Wire::connect(&pg).await?;
        let cancel = wire.canceller();
        let sleep = wire.prepare("sleep", "SELECT pg_sleep(30)").await.op()?;
        wire.push(&sleep, NO_VALUES).op()?;
        wire.flush().await.op()?;
        let sent = Instant::now();
        // From another task, as a deadline would: the handle is Send.
        let cancelling = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            cancel.cancel().await
        });
        let answer = wire.answer().await;
        cancelling.await??;
        let took = sent.elapsed();
        ensure!(sqlstate(answer)? == "SQLSTATE 57014");
        ensure!(took < Duration::from_secs(3), "cancelled after {took:?}");
        ensure!(wire.simple("SELECT 1").await.op()? == 1);
        Ok(())
    })
}

/// Rows of `n` (id, name) in COPY's text format, ids from `first`.
fn rows(first: u32, n: u32) -> Vec<u8> {
    (first..first + n).map(|i| format!("{i}\tname {i}\n")).collect::<String>().into_bytes()
}

fn copy_rows_land_with_and_without_the_wait(ctx: &Ctx) -> Result<()> {
    both(ctx, |pg| async move {
        let mut wire = Wire::connect(&pg).await?;
        wire.simple("DROP TABLE IF EXISTS wire_copy_lands; CREATE TABLE wire_copy_lands (id int, name text)")
            .await
            .op()?;
        let copy = "COPY wire_copy_lands (id, name) FROM STDIN";
        ensure!(wire.copy_in(copy, &rows(0, 1000)).await.op()? == 1000);
        ensure!(wire.copy_in_waiting(copy, &rows(1000, 500)).await.op()? == 500);
        // Not a COPY: the waiting form says so.
        ensure!(wire.copy_in_waiting("SELECT 1", &rows(0, 1)).await.unwrap_err().class == "client error");
        ensure!(wire.simple("SELECT FROM wire_copy_lands").await.op()? == 1500);
        ensure!(wire.simple("SELECT DISTINCT id FROM wire_copy_lands").await.op()? == 1500);
        Ok(())
    })
}

fn a_refused_copy_says_its_sqlstate_and_the_connection_goes_on(ctx: &Ctx) -> Result<()> {
    both(ctx, |pg| async move {
        let mut wire = Wire::connect(&pg).await?;
        wire.simple("DROP TABLE IF EXISTS wire_copy_refused; CREATE TABLE wire_copy_refused (id int, name text)")
            .await
            .op()?;
        let copy = "COPY wire_copy_refused (id, name) FROM STDIN";
        // No such table: refused before any row, the rows sent behind it discarded.
        let no_table = wire.copy_in("COPY wire_no_such_table FROM STDIN", &rows(0, 100)).await;
        ensure!(sqlstate(no_table)? == "SQLSTATE 42P01");
        ensure!(wire.simple("SELECT 1").await.op()? == 1);
        // A bad value in the middle: nothing of the batch is written.
        let mut bad = rows(0, 10);
        bad.extend_from_slice(b"eleven\tname\n");
        bad.extend(rows(11, 10));
        ensure!(sqlstate(wire.copy_in(copy, &bad).await)? == "SQLSTATE 22P02");
        ensure!(sqlstate(wire.copy_in_waiting(copy, &bad).await)? == "SQLSTATE 22P02");
        ensure!(sqlstate(wire.copy_in_waiting("COPY wire_no_such_table FROM STDIN", &bad).await)? == "SQLSTATE 42P01");
        ensure!(wire.copy_in(copy, &rows(0, 5)).await.op()? == 5);
        ensure!(wire.simple("SELECT FROM wire_copy_refused").await.op()? == 5);
        Ok(())
    })
}

/// Batch 3 of 8 is refused. The batches behind it in flight commit all
/// the same; the window stops sending at the error it read, and what it
/// reports acknowledged is exactly what the table holds, at every depth.
fn a_copy_window_counts_exactly_the_batches_acknowledged(ctx: &Ctx) -> Result<()> {
    both(ctx, |pg| async move {
        let mut wire = Wire::connect(&pg).await?;
        let batches: Vec<Vec<u8>> =
            (0..8).map(|k| if k == 3 { b"x\ty\n".to_vec() } else { rows(k * 100, 100) }).collect();
        // depth: (batches sent, those acknowledged)
        for (depth, sent, acked) in [(1, 4, 3), (2, 5, 4), (8, 8, 7)] {
            wire.simple("DROP TABLE IF EXISTS wire_copy_window; CREATE TABLE wire_copy_window (id int, name text)")
                .await
                .op()?;
            let mut answers = Vec::new();
            let reported = wire
                .copy_window(
                    "COPY wire_copy_window FROM STDIN",
                    batches.iter().map(Vec::as_slice),
                    depth,
                    |i, answer| answers.push((i, answer.map_err(|e| e.class))),
                )
                .await;
            ensure!(reported == sent, "depth {depth}: {reported} sent: {answers:?}");
            ensure!(answers.iter().map(|(i, _)| *i).eq(0..sent), "depth {depth}: {answers:?}");
            ensure!(answers[3].1 == Err("SQLSTATE 22P02".into()), "depth {depth}: {answers:?}");
            let written: u64 = answers.iter().filter_map(|(_, a)| a.as_ref().ok()).sum();
            ensure!(answers.iter().filter(|(_, a)| a.is_ok()).count() == acked, "depth {depth}: {answers:?}");
            let in_table = wire.simple("SELECT FROM wire_copy_window").await.op()?;
            ensure!(written == in_table && written == acked as u64 * 100, "depth {depth}: {written} vs {in_table}");
        }
        Ok(())
    })
}

/// The backend of a window of 4 batches, waiting on a lock, is
/// terminated (`pg_terminate_backend`): every batch in flight is reported
/// failed with a fatal error, none acknowledged, and the table holds none.
fn a_copy_window_lost_with_its_backend_fails_every_batch_in_flight(ctx: &Ctx) -> Result<()> {
    both(ctx, |pg| async move {
        let mut admin = Wire::connect(&pg).await?;
        admin
            .simple("DROP TABLE IF EXISTS wire_copy_lost; CREATE TABLE wire_copy_lost (id int, name text)")
            .await
            .op()?;
        admin.simple("BEGIN; LOCK TABLE wire_copy_lost IN ACCESS EXCLUSIVE MODE").await.op()?;
        let mut wire = Wire::connect(&pg).await?;
        let backend = wire.cancel_key().0;
        let mut killer = Wire::connect(&pg).await?;
        let terminating = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            killer.simple(&format!("SELECT pg_terminate_backend({backend})")).await.op()
        });
        let batches: Vec<Vec<u8>> = (0..4).map(|k| rows(k * 10, 10)).collect();
        let mut answers = Vec::new();
        let reported = wire
            .copy_window("COPY wire_copy_lost FROM STDIN", batches.iter().map(Vec::as_slice), 4, |i, answer| {
                answers.push((i, answer.map_err(|e| e.fatal)))
            })
            .await;
        terminating.await??;
        admin.simple("ROLLBACK").await.op()?;
        ensure!(reported == 4, "{answers:?}");
        ensure!(answers == (0..4).map(|i| (i, Err(true))).collect::<Vec<_>>(), "{answers:?}");
        ensure!(admin.simple("SELECT FROM wire_copy_lost").await.op()? == 0);
        Ok(())
    })
}

fn a_set_updates_the_parameter_the_server_reports(ctx: &Ctx) -> Result<()> {
    both(ctx, |pg| async move {
        let mut wire = Wire::connect(&pg).await?;
        ensure!(wire.parameter("server_version").is_some_and(|v| !v.is_empty()));
        wire.simple("SET application_name = 'x'").await.op()?;
        ensure!(wire.parameter("application_name") == Some("x"), "set: {:?}", wire.parameter("application_name"));
        // Also when the SET is one statement of a pipeline.
        let set = wire.prepare("set", "SELECT set_config('application_name', 'y', false)").await.op()?;
        wire.push(&set, NO_VALUES).op()?;
        wire.flush().await.op()?;
        wire.answer().await.op()?;
        ensure!(wire.parameter("application_name") == Some("y"), "{:?}", wire.parameter("application_name"));
        Ok(())
    })?;
    // The name the URL gives is the one the server reports at login.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let named = PgTarget::from_url(&ctx.url_with("application_name=loader"), "--url", &|_| None)?;
    let wire = runtime.block_on(Wire::connect(&named))?;
    ensure!(wire.parameter("application_name") == Some("loader"), "login: {:?}", wire.parameter("application_name"));
    Ok(())
}

fn a_notice_is_counted_not_an_error(ctx: &Ctx) -> Result<()> {
    both(ctx, |pg| async move {
        let mut wire = Wire::connect(&pg).await?;
        wire.simple("DO $$ BEGIN RAISE NOTICE 'n'; END $$").await.op()?;
        ensure!(wire.notices() == 1);
        let s = wire.prepare("notice", "SELECT 1 FROM (SELECT pg_notify('c', 'x')) n").await.op()?;
        wire.push(&s, NO_VALUES).op()?;
        wire.flush().await.op()?;
        ensure!(wire.answer().await.op()? == 1);
        ensure!(wire.simple("DO $$ BEGIN RAISE WARNING 'w'; END $$").await.op()? == 0);
        ensure!(wire.notices() == 2);
        Ok(())
    })
}

/// The harness's server has no TLS: `require` refuses it, `prefer` goes on
/// in plain text.
fn sslmode_require_without_tls_on_the_server_is_refused(ctx: &Ctx) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let require = PgTarget::from_url(&ctx.url_with("sslmode=require"), "--url", &|_| None)?;
        let err = Wire::connect(&require).await.err().context("connected with sslmode=require")?;
        ensure!(dbload::error::exit_code(&err) == dbload::error::exit::TARGET, "{err:#}");
        ensure!(err.to_string().contains("sslmode=require needs TLS, which this server does not offer"), "{err:#}");
        let prefer = PgTarget::from_url(&ctx.url_with("sslmode=prefer"), "--url", &|_| None)?;
        ensure!(Wire::connect(&prefer).await?.simple("SELECT 1").await.op()? == 1);
        Ok(())
    })
}
