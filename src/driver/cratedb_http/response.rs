//! What CrateDB answers on `_sql`, and what it means for the rows sent.
//!
//! Three shapes come back: a result (`cols`, `rows`, `rowcount`,
//! `duration`), a bulk result (`results`, one `rowcount` per row, `-2` for
//! a row that failed, with its error object since CrateDB 6; a one-row
//! bulk too), and an error object (`{"error": {"message", "code"}}`) for a
//! statement refused as a whole, which is also what a bulk gets when one of
//! its values cannot be cast (and then no row is written). Older CrateDB
//! answered a failed one-row bulk with the error object too; both are
//! handled. The parsing is kept apart from the connection so the recorded
//! bodies of `tests/fixtures/cratedb/` test it without a server.

use serde::Deserialize;
use serde_json::Value;

use crate::op::{ErrorCode, OpError};

/// CrateDB's answer to one `_sql` request that it did not refuse.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SqlResponse {
    /// Column names of a result; empty for DML and bulk requests.
    #[serde(default)]
    pub cols: Vec<String>,
    #[serde(default)]
    pub rows: Vec<Vec<Value>>,
    /// Rows returned or affected; `-1` when CrateDB cannot tell.
    pub rowcount: Option<i64>,
    /// How long CrateDB says it took, in ms: the server side of the client's
    /// round trip, recorded beside it.
    #[serde(rename = "duration")]
    pub duration_ms: Option<f64>,
    /// The per-row results of a `bulk_args` request, counted.
    pub results: Option<BulkResults>,
    /// A refusal; [`parse`] turns it into an error, so a response handed
    /// out never has one.
    #[serde(default)]
    pub(super) error: Option<SqlError>,
}

/// The outcome of one row of a bulk request.
#[derive(Debug, Clone, Deserialize)]
pub struct BulkResult {
    /// `1` for an inserted row, `0` for one an upsert left alone, `-2` for
    /// a row that failed.
    pub rowcount: i64,
    /// Why the row failed (CrateDB 6 and later).
    pub error: Option<SqlError>,
    /// Why the row failed (CrateDB before 6, which gave no code).
    pub error_message: Option<String>,
}

/// The per-row results of a bulk request, counted as they are read: a
/// batch of 20,000 rows is answered with 20,000 of them, which kept as a
/// list would cost each worker 64 bytes a row (1.3 MiB a request) for three
/// numbers and one error.
#[derive(Debug, Clone, Default)]
pub struct BulkResults {
    /// Results read: one per row sent.
    pub rows: u64,
    /// Rows written, by their rowcounts (see [`bulk_outcome`]).
    pub acked: u64,
    /// Rows that failed ([`ROW_FAILED`]), and the first of them.
    pub failed: u64,
    pub first_failed: Option<BulkResult>,
}

impl<'de> Deserialize<'de> for BulkResults {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Counting;
        impl<'de> serde::de::Visitor<'de> for Counting {
            type Value = BulkResults;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of per-row results")
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<BulkResults, A::Error> {
                let mut counted = BulkResults::default();
                while let Some(r) = seq.next_element::<BulkResult>()? {
                    counted.rows += 1;
                    match r.rowcount {
                        ROW_FAILED => {
                            counted.failed += 1;
                            counted.first_failed.get_or_insert(r);
                        }
                        n => counted.acked += known_count(n, 1),
                    }
                }
                Ok(counted)
            }
        }
        d.deserialize_seq(Counting)
    }
}

/// The rowcount CrateDB gives a failed row of a bulk request.
pub const ROW_FAILED: i64 = -2;

/// CrateDB's error object: its code (4091 duplicate key, 4000 syntax, 4041
/// unknown table, ...; see CrateDB's HTTP endpoint docs) and message.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SqlError {
    pub message: String,
    #[serde(default)]
    pub code: i64,
}

impl SqlError {
    /// The class a failed operation is counted under in the report.
    pub fn class(&self) -> String {
        format!("CrateDB {}", self.code)
    }
}

/// Reads a response body: CrateDB's error object becomes class
/// `CrateDB <code>`, another status than 2xx without one `status Nxx`, and
/// a 2xx body that is not CrateDB's JSON `bad response`.
pub fn parse(status: u16, body: &[u8]) -> Result<SqlResponse, OpError> {
    let success = (200..300).contains(&status);
    match serde_json::from_slice::<SqlResponse>(body) {
        Ok(SqlResponse { error: Some(e), .. }) => {
            Err(OpError { code: Some(ErrorCode::CrateDb(e.code)), ..OpError::new(e.class(), e.message) })
        }
        Ok(r) if success => Ok(r),
        Err(e) if success => Err(OpError::new(
            "bad response",
            format!("status {status} but not the JSON CrateDB answers with ({e}): {}", excerpt(body)),
        )),
        _ => Err(OpError::new(format!("status {}xx", status / 100), format!("status {status}: {}", excerpt(body)))),
    }
}

/// The start of a body, on one line, for messages.
pub(super) fn excerpt(body: &[u8]) -> String {
    String::from_utf8_lossy(&body[..body.len().min(200)]).replace(['\n', '\r'], " ")
}

/// The rows a bulk request of `rows` rows wrote: the sum of the per-row
/// rowcounts. When some rows failed (`-2`), the request failed in part:
/// the error counts those rows as failed, says how many and why (the
/// first failed row's error, under its code), and acknowledges the rows
/// that were written. A request refused as a whole (a value CrateDB cannot
/// cast fails every row of the bulk) acknowledges nothing. Rows that were
/// neither written nor failed are counted as [`rowcount_outcome`] counts them.
pub fn bulk_outcome(resp: Result<SqlResponse, OpError>, rows: u64) -> Result<u64, OpError> {
    let resp = resp?;
    let Some(BulkResults { rows: results, acked, failed, first_failed }) = &resp.results else {
        return rowcount_outcome(Ok(resp), rows);
    };
    let Some(first) = first_failed else { return written(*acked, rows) };
    let (class, why) = match (&first.error, &first.error_message) {
        (Some(e), _) => (e.class(), e.message.as_str()),
        (None, Some(m)) => ("CrateDB bulk row failed".to_owned(), m.as_str()),
        (None, None) => ("CrateDB bulk row failed".to_owned(), "CrateDB gave no reason"),
    };
    let message = format!("{failed} of {results} rows failed; the first: {why}");
    Err(OpError { acked: *acked, ..OpError::new(class, message) })
}

/// The rows a statement that is not a bulk request wrote (a multi-row
/// `VALUES` or an `UNNEST` insert of `rows` rows): its rowcount, or all of
/// them when CrateDB cannot tell (`-1`). Fewer than `rows` is an error
/// that acknowledges the rowcount: CrateDB skips a row whose primary key
/// exists without a word (status 200, rowcount 2 of 3), and a row is
/// never dropped from the counts silently.
pub fn rowcount_outcome(resp: Result<SqlResponse, OpError>, rows: u64) -> Result<u64, OpError> {
    written(known_count(resp?.rowcount.unwrap_or(-1), rows), rows)
}

/// `n` when it is a count, `unknown` for CrateDB's "cannot tell" (`-1`).
fn known_count(n: i64, unknown: u64) -> u64 {
    u64::try_from(n).unwrap_or(unknown)
}

/// `acked` of the `rows` sent were written: all of them, or an error for
/// the rest (which CrateDB did not report as failed).
fn written(acked: u64, rows: u64) -> Result<u64, OpError> {
    if acked >= rows {
        return Ok(rows);
    }
    let message = format!(
        "CrateDB wrote {acked} of {rows} rows and gave no error for the others (it skips rows whose primary key \
         exists)"
    );
    Err(OpError { acked, ..OpError::new("CrateDB rows skipped", message) })
}

#[cfg(test)]
pub(super) mod tests {
    use serde_json::json;

    use super::*;

    /// A recorded response of `tests/fixtures/cratedb/` (see its README):
    /// `fixture!(name)` is its body, `fixture!(name, wire)` head and body.
    macro_rules! fixture {
        ($name:literal) => {
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/cratedb/", $name, ".json")).as_slice()
        };
        ($name:literal, wire) => {
            [
                include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/cratedb/", $name, ".headers"))
                    .as_slice(),
                fixture!($name),
            ]
            .concat()
        };
    }
    pub(in crate::driver::cratedb_http) use fixture;

    #[test]
    fn query_results() {
        let r = parse(200, fixture!("13b_select_with_args_after_refresh")).unwrap();
        assert_eq!(r.cols, ["id", "name"]);
        assert_eq!((r.rows.len(), &r.rows[0]), (8, &vec![json!(1), json!("a")]));
        assert_eq!(r.rowcount, Some(8));
        assert_eq!(r.duration_ms, Some(12.414995));
        assert!(r.results.is_none());
        // Objects and timestamps (ms) as CrateDB sends them; `col_types` ignored.
        let r = parse(200, fixture!("14_select_types")).unwrap();
        assert_eq!(r.rows[0], [json!(1), json!("a"), json!({"k": "v"}), json!(1_700_000_000_000i64)]);
        let r = parse(200, fixture!("02_sys_nodes_version")).unwrap();
        assert_eq!(r.rows, [[json!("6.4.3")]]);
        // DDL and REFRESH TABLE answer `rows: [[]]`, rowcount 1.
        for body in [fixture!("04_create_table"), fixture!("12_refresh_table")] {
            assert_eq!(parse(200, body).unwrap().rowcount, Some(1));
        }
    }

    #[test]
    fn bulk_all_rows_written() {
        let r = parse(200, fixture!("05_bulk_insert_3_ok"));
        assert_eq!(r.as_ref().unwrap().duration_ms, Some(37.037712));
        assert_eq!(bulk_outcome(r, 3).unwrap(), 3);
        assert_eq!(bulk_outcome(parse(200, fixture!("08c_bulk_insert_1_row_ok")), 1).unwrap(), 1);
    }

    #[test]
    fn bulk_failed_rows_are_counted_beside_the_written_ones() {
        for (body, rows, acked, counted) in [
            (fixture!("06_bulk_insert_3_middle_dup_key"), 3, 2, "1 of 3"),
            (fixture!("14b_bulk_insert_types"), 2, 1, "1 of 2"),
            // One row: still a per-row result, not a top-level error (6.4).
            (fixture!("08_bulk_insert_1_row_dup_key"), 1, 0, "1 of 1"),
            (fixture!("08d_bulk_insert_all_3_dup"), 3, 0, "3 of 3"),
        ] {
            let e = bulk_outcome(parse(200, body), rows).unwrap_err();
            assert_eq!((e.class.as_str(), e.acked, e.fatal), ("CrateDB 4091", acked, false), "{}", e.message);
            assert_eq!(
                e.message,
                format!(
                    "{counted} rows failed; the first: DuplicateKeyException[A document with the same primary key \
                     exists already]"
                )
            );
        }
    }

    #[test]
    fn a_bulk_refused_as_a_whole_writes_nothing() {
        for body in [
            fixture!("07_bulk_insert_3_middle_cast_fail"),
            fixture!("07b_bulk_insert_3_first_cast_fail"),
            fixture!("07c_bulk_insert_3_bad_timestamp"),
            fixture!("08b_bulk_insert_1_row_cast_fail"),
        ] {
            let e = bulk_outcome(parse(400, body), 3).unwrap_err();
            assert_eq!((e.class.as_str(), e.acked, e.fatal), ("CrateDB 4000", 0, false));
            assert!(e.message.starts_with("SQLParseException[Cannot cast value"), "{}", e.message);
        }
        let e = bulk_outcome(parse(404, fixture!("08g_bulk_missing_table")), 3).unwrap_err();
        assert_eq!((e.class.as_str(), e.acked), ("CrateDB 4041", 0));
    }

    /// A caller that branches on CrateDB's error (export's `--query`
    /// refused as a syntax error) reads its code through `anyhow`'s chain,
    /// where `CrateConn::execute` puts it, not the message.
    #[test]
    fn crates_error_code_is_kept_typed() {
        let error = parse(400, fixture!("07_bulk_insert_3_middle_cast_fail")).unwrap_err();
        assert_eq!(error.code, Some(ErrorCode::CrateDb(4000)));
        let e = anyhow::Error::new(crate::op::Refused { statement: "select".into(), error });
        let e = e.context("opening the workers' connections");
        assert_eq!(ErrorCode::of(&e), Some(ErrorCode::CrateDb(4000)));
        assert!(format!("{e:#}").contains("select: CrateDB 4000: SQLParseException"), "{e:#}");
        assert_eq!(ErrorCode::of(&anyhow::anyhow!("CrateDB 4000")), None);
    }

    #[test]
    fn errors_are_classed_by_crate_code() {
        for (status, body, code, words) in [
            (400, fixture!("10_syntax_error"), "CrateDB 4000", "mismatched input 'SELEC'"),
            (400, fixture!("10b_syntax_error_error_trace"), "CrateDB 4000", "mismatched input 'SELEC'"),
            (400, fixture!("11c_invalid_json_body"), "CrateDB 4000", "Can't parse"),
            (404, fixture!("11_missing_table"), "CrateDB 4041", "Relation 'doc.does_not_exist' unknown"),
            (404, fixture!("11b_missing_column"), "CrateDB 4043", "Column nope unknown"),
            (409, fixture!("08e_args_insert_dup_key_non_bulk"), "CrateDB 4091", "same primary key"),
            (409, fixture!("04b_create_table_again_exists"), "CrateDB 4093", "already exists"),
        ] {
            let e = parse(status, body).unwrap_err();
            assert_eq!(e.class, code);
            assert!(e.message.contains(words), "{}", e.message);
            assert!(!e.message.contains("at io.crate"), "no stack trace: {}", e.message);
            assert!(!e.fatal && e.acked == 0);
        }
    }

    #[test]
    fn a_multi_row_insert_that_skipped_a_duplicate_fails_in_part() {
        let e = rowcount_outcome(parse(200, fixture!("08f_multi_values_insert_one_dup")), 3).unwrap_err();
        assert_eq!((e.class.as_str(), e.acked, e.fatal), ("CrateDB rows skipped", 2, false));
        assert!(e.message.starts_with("CrateDB wrote 2 of 3 rows"), "{}", e.message);
    }

    #[test]
    fn older_bulk_errors_have_a_message_only() {
        let body = br#"{"cols":[],"duration":1.5,"results":[{"rowcount":-2,"error_message":"boom"},{"rowcount":1}]}"#;
        let e = bulk_outcome(parse(200, body), 2).unwrap_err();
        assert_eq!(
            (e.class.as_str(), e.message.as_str(), e.acked),
            ("CrateDB bulk row failed", "1 of 2 rows failed; the first: boom", 1)
        );
    }

    #[test]
    fn rowcounts_of_statements() {
        let ok = |rowcount: i64| {
            parse(200, json!({"cols": [], "rowcount": rowcount, "duration": 2.0}).to_string().as_bytes())
        };
        assert_eq!(rowcount_outcome(ok(500), 500).unwrap(), 500);
        assert_eq!(rowcount_outcome(ok(-1), 500).unwrap(), 500);
        // A bulk body answered without per-row results: its rowcount counts.
        assert_eq!(bulk_outcome(ok(9), 9).unwrap(), 9);
        assert_eq!(bulk_outcome(ok(7), 9).unwrap_err().acked, 7);
    }

    #[test]
    fn not_crate_json() {
        let e = parse(200, fixture!("01_root_banner")).map(|r| r.rowcount);
        assert_eq!(e.unwrap(), None, "the root banner is JSON, but not a result");
        let e = parse(200, b"<html>proxy</html>").unwrap_err();
        assert_eq!(e.class, "bad response");
        let e = parse(502, b"<html>Bad Gateway</html>").unwrap_err();
        assert_eq!((e.class.as_str(), e.message.as_str()), ("status 5xx", "status 502: <html>Bad Gateway</html>"));
        let e = parse(401, fixture!("15b_basic_auth_unknown_user")).unwrap_err();
        assert_eq!(
            (e.class.as_str(), e.message.as_str()),
            ("status 4xx", "status 401: trust authentication failed for user \"nobody\" ")
        );
    }
}
