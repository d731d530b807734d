//! The driver against a real CrateDB that `DBLOAD_TEST_CRATEDB_HTTP_URL`
//! names (e.g. `cratedb://crate@127.0.0.1:4200`). Ignored unless asked for
//! (`cargo test -- --ignored`), so a run without one does not count it passed.
//! Every body shape and every outcome the ingest counts on, end to end.

use std::sync::Arc;

use serde_json::json;

use super::exec::{CrateQueryExecutor, CrateSink};
use super::*;
use crate::encode::crate_bulk::{self, Body, Shape};
use crate::model::Batch;
use crate::op::Executor;
use crate::workload::params::Value;
use crate::workload::{QueryOp, QuerySpec};

const TABLE: &str = "doc.dbload_driver_test";

fn target() -> CrateTarget {
    let url = std::env::var("DBLOAD_TEST_CRATEDB_HTTP_URL").expect("set DBLOAD_TEST_CRATEDB_HTTP_URL to a CrateDB");
    CrateTarget::parse(&url, "DBLOAD_TEST_CRATEDB_HTTP_URL", false).unwrap()
}

/// `rows` rows with times `first..first + rows` seconds (and 999 µs,
/// which CrateDB's milliseconds drop), device 7.
fn batch(first: i64, rows: i64) -> Batch {
    let tags: Vec<String> =
        (first..first + rows).map(|s| json!({ "host": format!("h{s}"), "rack": s % 2 }).to_string()).collect();
    let rows: Vec<_> = (first..first + rows)
        .zip(&tags)
        .map(|(s, tags)| (1_700_000_000_000_000 + s * 1_000_000 + 999, 7, s as i32, s as f64 / 3.0, tags.as_str()))
        .collect();
    crate_bulk::tests::batch(&rows)
}

/// A batch's body as the sink sends it, in pieces of a few rows: CrateDB
/// reads the chunks of one request as one body.
fn pieces(shape: Shape, stmt: &str, batch: &Batch) -> impl FnMut(&mut Vec<u8>) -> bool + Send {
    let mut whole = Vec::new();
    Body::new(shape, stmt, batch).write_all(&mut whole);
    pieces_of(&whole)
}

/// `body` in pieces of 100 bytes.
fn pieces_of(body: &[u8]) -> impl FnMut(&mut Vec<u8>) -> bool + Send {
    let mut rest = body.to_vec();
    move |out| {
        let piece: Vec<u8> = rest.drain(..rest.len().min(100)).collect();
        out.extend_from_slice(&piece);
        !rest.is_empty()
    }
}

async fn count(c: &mut CrateConn) -> i64 {
    c.execute(&format!("REFRESH TABLE {TABLE}"), &[]).await.unwrap();
    let r = c.execute(&format!("SELECT count(*) FROM {TABLE} WHERE device_id = $1"), &[json!(7)]).await.unwrap();
    r.rows[0][0].as_i64().unwrap()
}

#[tokio::test]
#[ignore = "needs a real CrateDB: set DBLOAD_TEST_CRATEDB_HTTP_URL"]
async fn ingest_and_queries_against_a_real_cratedb() {
    let t = target();
    let mut admin = t.connect(0).await.unwrap();
    let version = admin.server_version().await.unwrap();
    println!("CrateDB {version} at {}", t.redacted());
    admin.execute(&format!("DROP TABLE IF EXISTS {TABLE}"), &[]).await.unwrap();
    let ddl = format!(
        "CREATE TABLE {TABLE} (time TIMESTAMP WITH TIME ZONE NOT NULL, device_id BIGINT NOT NULL, n INTEGER, \
         m1 DOUBLE PRECISION, tags OBJECT(DYNAMIC), PRIMARY KEY (time, device_id)) \
         CLUSTERED INTO 2 SHARDS WITH (number_of_replicas = 0)"
    );
    admin.execute(&ddl, &[]).await.unwrap();
    let cols = "(time, device_id, n, m1, tags)";
    let insert = format!("INSERT INTO {TABLE} {cols} VALUES (?, ?, ?, ?, ?)");

    // bulk_args: every row acknowledged, and CrateDB's own time recorded.
    let mut bulk = CrateSink::open(&t, 1, true).await.unwrap();
    assert_eq!(bulk.send(&mut pieces(Shape::Bulk, &insert, &batch(0, 3)), 3, false).await.unwrap(), 3);
    assert_eq!(bulk.server_duration().len(), 1);
    // A duplicate among new rows fails that row only.
    let e = bulk.send(&mut pieces(Shape::Bulk, &insert, &batch(2, 3)), 3, false).await.unwrap_err();
    assert_eq!((e.class.as_str(), e.acked, e.fatal), ("CrateDB 4091", 2, false), "{}", e.message);
    assert!(e.message.starts_with("1 of 3 rows failed"), "{}", e.message);
    // A one-row bulk whose row fails: a per-row result too.
    let e = bulk.send(&mut pieces(Shape::Bulk, &insert, &batch(0, 1)), 1, false).await.unwrap_err();
    assert_eq!((e.class.as_str(), e.acked), ("CrateDB 4091", 0), "{}", e.message);
    // A value CrateDB cannot cast refuses the whole bulk.
    let cast_fails = json!({
        "stmt": format!("INSERT INTO {TABLE} (time, device_id) VALUES (?, ?)"),
        "bulk_args": [[1, 7], [2, "x"]],
    });
    let e = bulk.send(&mut pieces_of(cast_fails.to_string().as_bytes()), 2, false).await.unwrap_err();
    assert_eq!((e.class.as_str(), e.acked), ("CrateDB 4000", 0), "{}", e.message);

    // Multi-row VALUES and UNNEST: one statement, its rowcount.
    let mut sink = CrateSink::open(&t, 2, false).await.unwrap();
    let values = format!("INSERT INTO {TABLE} {cols} VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?)");
    assert_eq!(sink.send(&mut pieces(Shape::Values, &values, &batch(10, 2)), 2, false).await.unwrap(), 2);
    let unnest = format!("INSERT INTO {TABLE} {cols} SELECT * FROM UNNEST(?, ?, ?, ?, ?)");
    assert_eq!(sink.send(&mut pieces(Shape::Unnest, &unnest, &batch(20, 4)), 4, false).await.unwrap(), 4);
    assert_eq!(count(&mut admin).await, 3 + 2 + 2 + 4);
    // A duplicate in a multi-row VALUES is skipped without an error: counted.
    let e = sink.send(&mut pieces(Shape::Values, &values, &batch(11, 2)), 2, false).await.unwrap_err();
    assert_eq!((e.class.as_str(), e.acked), ("CrateDB rows skipped", 1), "{}", e.message);

    // Values read back as written: ms timestamps, floats, objects.
    let r = admin.execute(&format!("SELECT time, n, m1, tags FROM {TABLE} WHERE n = ?"), &[json!(21)]).await.unwrap();
    assert_eq!(r.cols, ["time", "n", "m1", "tags"]);
    assert_eq!(r.rows, [vec![json!(1_700_000_021_000i64), json!(21), json!(7.0), json!({"host": "h21", "rack": 1})]]);

    // Queries with $n parameters; a refused one is classed by its code.
    let queries: Arc<[QuerySpec]> = vec![
        QuerySpec {
            name: "by_time".into(),
            query: format!("SELECT max(m1) FROM {TABLE} WHERE device_id = $1 AND time >= $2"),
            ratio: 0.5,
            params: vec![],
            line: 1,
            script: None,
            weight: None,
        },
        QuerySpec {
            name: "bad".into(),
            query: "SELEC 1".into(),
            ratio: 0.5,
            params: vec![],
            line: 2,
            script: None,
            weight: None,
        },
    ]
    .into();
    let mut q = CrateQueryExecutor::open(&t, 3, queries).await.unwrap();
    let mut op = QueryOp::query(0, vec![Value::Int(7), Value::Timestamp(1_700_000_000_000_000)]);
    assert_eq!(q.execute(&mut op, false).await.unwrap(), 1);
    let e = q.execute(&mut QueryOp::query(1, vec![]), false).await.unwrap_err();
    assert_eq!((e.class.as_str(), e.fatal), ("CrateDB 4000", false), "{}", e.message);
    assert_eq!(q.server_duration().len(), 1);

    // Admin errors name the statement and CrateDB's message.
    let e = admin.execute("SELECT * FROM doc.dbload_no_such_table", &[]).await.unwrap_err().to_string();
    assert!(e.contains("dbload_no_such_table") && e.contains("CrateDB 4041"), "{e}");
    admin.execute(&format!("DROP TABLE {TABLE}"), &[]).await.unwrap();

    // A user CrateDB does not know: a target error, the password not shown.
    let stranger = format!("cratedb://dbload_nobody:s3cret@{}", t.hosts()[0]);
    let mut c = CrateTarget::parse(&stranger, "--url", false).unwrap().connect(0).await.unwrap();
    let e = c.server_version().await.unwrap_err();
    assert_eq!(crate::error::exit_code(&e), 3, "{e}");
    assert!(e.to_string().contains("refused the login") && !e.to_string().contains("s3cret"), "{e}");
}
