//! What CrateDB answers on `_sql`, and what it means for the rows sent.
//!
//! Three shapes come back: a result (`cols`, `rows`, `rowcount`,
//! `duration`), a bulk result (`results`, one `rowcount` per row, `-2`
//! for a row that failed, with its error since CrateDB 6), and an error
//! object (`{"error": {"message", "code"}}`) for a statement refused as a
//! whole, which is also what a bulk request of ONE row gets when that row
//! fails. The parsing is kept apart from the connection so recorded bodies
//! can test it without a server.

use serde::Deserialize;
use serde_json::Value;

use crate::stats::OpError;

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
    /// One entry per row of a `bulk_args` request, in order.
    pub results: Option<Vec<BulkResult>>,
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
        Ok(SqlResponse { error: Some(e), .. }) => Err(OpError::new(e.class(), e.message)),
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

/// The rows a bulk request of `rows` rows wrote: the sum of the rowcounts
/// when no row failed. When some did (`-2`), the request failed in part:
/// the error counts those rows as failed, says how many and why (the first
/// failed row's error, under its code when CrateDB gives one), and
/// acknowledges the rows that were written. A request refused as a whole
/// (among them a one-row bulk whose row failed) acknowledges nothing.
pub fn bulk_outcome(resp: Result<SqlResponse, OpError>, rows: u64) -> Result<u64, OpError> {
    let resp = resp?;
    let Some(results) = &resp.results else { return rowcount_outcome(Ok(resp), rows) };
    let mut acked = 0u64;
    let mut failed = 0u64;
    let mut first: Option<&BulkResult> = None;
    for r in results {
        match r.rowcount {
            ROW_FAILED => {
                failed += 1;
                first.get_or_insert(r);
            }
            n => acked += known_count(n, 1),
        }
    }
    let Some(first) = first else { return Ok(acked) };
    let (class, why) = match (&first.error, &first.error_message) {
        (Some(e), _) => (e.class(), e.message.as_str()),
        (None, Some(m)) => ("CrateDB bulk row failed".to_owned(), m.as_str()),
        (None, None) => ("CrateDB bulk row failed".to_owned(), "CrateDB gave no reason"),
    };
    let message = format!("{failed} of {} rows failed; the first: {why}", results.len());
    Err(OpError { acked, ..OpError::new(class, message) })
}

/// The rows a statement that is not a bulk request wrote (a multi-row
/// `VALUES` or an `UNNEST` insert of `rows` rows): its rowcount, or all of
/// them when CrateDB cannot tell (`-1`).
pub fn rowcount_outcome(resp: Result<SqlResponse, OpError>, rows: u64) -> Result<u64, OpError> {
    resp.map(|r| known_count(r.rowcount.unwrap_or(-1), rows))
}

/// `n` when it is a count, `unknown` for CrateDB's "cannot tell" (`-1`).
fn known_count(n: i64, unknown: u64) -> u64 {
    u64::try_from(n).unwrap_or(unknown)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A recorded response body of `tests/fixtures/cratedb/` (see its README).
    macro_rules! fixture {
        ($name:literal) => {
            include_str!(concat!("../../../tests/fixtures/cratedb/", $name, ".json")).as_bytes()
        };
    }

    #[test]
    fn query_result() {
        let r = parse(200, fixture!("select")).unwrap();
        assert_eq!(r.cols, ["id", "name"]);
        assert_eq!(r.rows, [vec![json!(1), json!("one")], vec![json!(2), json!("two")]]);
        assert_eq!(r.rowcount, Some(2));
        assert!(r.duration_ms.is_some_and(|d| d > 0.0), "{r:?}");
        assert!(r.results.is_none());
    }

    #[test]
    fn bulk_all_rows_written() {
        let r = parse(200, fixture!("bulk_ok"));
        assert!(r.as_ref().unwrap().duration_ms.is_some());
        assert_eq!(bulk_outcome(r, 3).unwrap(), 3);
    }

    #[test]
    fn bulk_with_a_failed_row_counts_the_others() {
        let e = bulk_outcome(parse(200, fixture!("bulk_row_failed")), 3).unwrap_err();
        assert_eq!((e.acked, e.fatal), (2, false));
        assert_eq!(e.class, "CrateDB 4091");
        assert!(e.message.starts_with("1 of 3 rows failed; the first: "), "{}", e.message);
        assert!(e.message.contains("same primary key"), "{}", e.message);
    }

    #[test]
    fn one_row_bulk_failure_is_a_top_level_error() {
        let e = bulk_outcome(parse(409, fixture!("bulk_one_row_failed")), 1).unwrap_err();
        assert_eq!((e.class.as_str(), e.acked, e.fatal), ("CrateDB 4091", 0, false));
        assert!(e.message.contains("same primary key"), "{}", e.message);
    }

    #[test]
    fn errors_are_classed_by_crate_code() {
        for (status, body, code, words) in [
            (400, fixture!("error_syntax"), "CrateDB 4000", "mismatched input"),
            (404, fixture!("error_unknown_table"), "CrateDB 4041", "unknown"),
            (409, fixture!("error_duplicate_key"), "CrateDB 4091", "same primary key"),
        ] {
            let e = parse(status, body).unwrap_err();
            assert_eq!(e.class, code);
            assert!(e.message.to_lowercase().contains(words), "{}", e.message);
            assert!(!e.fatal && e.acked == 0);
        }
    }

    #[test]
    fn older_bulk_errors_have_a_message_only() {
        let body = br#"{"cols":[],"duration":1.5,"results":[{"rowcount":-2,"error_message":"boom"},{"rowcount":0}]}"#;
        let e = bulk_outcome(parse(200, body), 2).unwrap_err();
        assert_eq!(
            (e.class.as_str(), e.message.as_str(), e.acked),
            ("CrateDB bulk row failed", "1 of 2 rows failed; the first: boom", 0)
        );
    }

    #[test]
    fn rowcounts_of_statements() {
        let ok = |rowcount: i64| {
            parse(200, json!({"cols": [], "rowcount": rowcount, "duration": 2.0}).to_string().as_bytes())
        };
        assert_eq!(rowcount_outcome(ok(500), 500).unwrap(), 500);
        assert_eq!(rowcount_outcome(ok(-1), 500).unwrap(), 500);
        // A bulk body was answered without per-row results: the rowcount counts.
        assert_eq!(bulk_outcome(ok(7), 9).unwrap(), 7);
    }

    #[test]
    fn not_crate_json() {
        let e = parse(200, b"<html>proxy</html>").unwrap_err();
        assert_eq!(e.class, "bad response");
        let e = parse(502, b"<html>Bad Gateway</html>").unwrap_err();
        assert_eq!((e.class.as_str(), e.message.as_str()), ("status 5xx", "status 502: <html>Bad Gateway</html>"));
        let e = parse(503, b"{}").unwrap_err();
        assert_eq!(e.class, "status 5xx");
    }
}
