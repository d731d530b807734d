//! CrateDB `_sql` request bodies, written straight from a batch's column
//! buffers, a piece at a time, by the worker that sends them: each piece
//! goes out as a chunk of the request as soon as it is written, so a body
//! of 20,000 rows is never whole in memory (bodies made ahead of time,
//! several per worker, held 151 MiB at batch 20,000 and 4 workers), and no
//! JSON tree is built per row.
//!
//! Three shapes, one per ingest method (the statement, with `?`
//! placeholders, comes from `dialect::cratedb`):
//! - [`Shape::Bulk`]: `{"stmt":…,"bulk_args":[[row 0],[row 1],…]}`, one
//!   statement executed per row, each row acknowledged on its own;
//! - [`Shape::Values`]: `{"stmt":…,"args":[row 0…, row 1…]}`, one multi-row
//!   `INSERT … VALUES (…), (…)`;
//! - [`Shape::Unnest`]: `{"stmt":…,"args":[[column 0],[column 1],…]}`, one
//!   `INSERT … SELECT * FROM UNNEST(?, ?, …)`.
//!
//! Values take the JSON forms CrateDB itself answers with: timestamps as
//! integer milliseconds since the epoch, numbers as JSON numbers, JSON
//! columns embedded as they are (they are JSON text already).

use std::borrow::Cow;

use bytes::BufMut;

use crate::model::{Batch, Values};

/// How a body carries a batch's rows: one shape per ingest method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `"bulk_args":[[r0c0,r0c1,…],[r1c0,…],…]`.
    Bulk,
    /// `"args":[r0c0,r0c1,…,r1c0,…]`: the parameters of a multi-row
    /// `VALUES` statement, row after row.
    Values,
    /// `"args":[[c0r0,c0r1,…],[c1r0,…],…]`: one array per column, for
    /// `UNNEST(?, ?, …)`.
    Unnest,
}

/// The request body of one batch, written in pieces ([`Body::write_some`])
/// as the request is sent. A piece is the head (`{"stmt":…,"<key>":[`), a
/// row (bulk, values) or a part of a column's array (unnest: its `[`, each
/// value, its `]`), or the end (`]}`).
pub struct Body<'a> {
    shape: Shape,
    stmt: Cow<'a, str>,
    batch: &'a Batch,
    /// The next piece to write, counted from the head (0).
    next: usize,
}

impl<'a> Body<'a> {
    pub fn new(shape: Shape, stmt: impl Into<Cow<'a, str>>, batch: &'a Batch) -> Body<'a> {
        Body { shape, stmt: stmt.into(), batch, next: 0 }
    }

    /// Appends the next pieces to `out` until it grew by `at_least` bytes
    /// or the body is complete; returns whether more follows.
    pub fn write_some(&mut self, out: &mut Vec<u8>, at_least: usize) -> bool {
        let (until, pieces) = (out.len().saturating_add(at_least), self.pieces());
        while self.next < pieces && out.len() < until {
            self.piece(self.next, pieces, out);
            self.next += 1;
        }
        self.next < pieces
    }

    /// Appends the rest of the body to `out`, whole.
    pub fn write_all(mut self, out: &mut Vec<u8>) {
        self.write_some(out, usize::MAX);
    }

    /// How many pieces the body has, head and end included.
    fn pieces(&self) -> usize {
        let len = self.batch.len;
        2 + match self.shape {
            Shape::Bulk | Shape::Values => len,
            Shape::Unnest => self.batch.sent_len() * (len + 2),
        }
    }

    fn piece(&self, k: usize, pieces: usize, out: &mut Vec<u8>) {
        let (batch, len) = (self.batch, self.batch.len);
        if k == 0 {
            let key = if self.shape == Shape::Bulk { "bulk_args" } else { "args" };
            return head(&self.stmt, key, out);
        }
        if k == pieces - 1 {
            return out.put_slice(b"]}");
        }
        let j = k - 1;
        match self.shape {
            Shape::Bulk => {
                if j > 0 {
                    out.put_u8(b',');
                }
                out.put_u8(b'[');
                row(batch, j, out);
                out.put_u8(b']');
            }
            Shape::Values => {
                if j > 0 {
                    out.put_u8(b',');
                }
                row(batch, j, out);
            }
            Shape::Unnest => match (j / (len + 2), j % (len + 2)) {
                (0, 0) => out.put_u8(b'['),
                (_, 0) => out.put_slice(b",["),
                (_, p) if p == len + 1 => out.put_u8(b']'),
                (c, p) => {
                    if p > 1 {
                        out.put_u8(b',');
                    }
                    value(batch.sent_column(c), p - 1, out);
                }
            },
        }
    }
}

/// `{"stmt":"<stmt, JSON-escaped>","<key>":[`: the part of every body
/// before its parameters. Shared with the query executor, whose statements
/// are typed by users and may hold quotes, backslashes and newlines.
pub(crate) fn head(stmt: &str, key: &str, out: &mut Vec<u8>) {
    out.put_slice(b"{\"stmt\":");
    string(stmt, out);
    out.put_slice(b",\"");
    out.put_slice(key.as_bytes());
    out.put_slice(b"\":[");
}

/// `s` as a JSON string (serde_json's escaping: quotes, backslashes and
/// control characters).
pub(crate) fn string(s: &str, out: &mut Vec<u8>) {
    serde_json::to_writer(out, s).expect("writing to memory cannot fail");
}

/// Row `i`'s values (of the columns the batch sends), comma-separated.
fn row(batch: &Batch, i: usize, out: &mut Vec<u8>) {
    for (c, values) in batch.sent().enumerate() {
        if c > 0 {
            out.put_u8(b',');
        }
        value(values, i, out);
    }
}

/// Row `i` of one column as a JSON value.
fn value(values: &Values, i: usize, out: &mut Vec<u8>) {
    match values {
        Values::Timestamptz(v) => timestamp(v[i], out),
        Values::Oid(v) => integer(v[i], out),
        Values::Int4(v) => integer(v[i], out),
        Values::Float8(v) => float(v[i], out),
        Values::Jsonb { .. } => out.put_slice(values.json(i).as_bytes()),
        Values::Text { .. } if values.is_null(i) => out.put_slice(b"null"),
        Values::Text { json: true, .. } => out.put_slice(values.json(i).as_bytes()),
        // CrateDB converts a string to the column's type.
        Values::Text { .. } => string(values.json(i), out),
    }
}

/// An integer, without a `fmt` round.
pub(crate) fn integer(n: impl itoa::Integer, out: &mut Vec<u8>) {
    out.put_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// A timestamp given in µs since the Unix epoch, written as integer
/// milliseconds since the epoch: CrateDB's `TIMESTAMP` holds milliseconds,
/// so the sub-millisecond part is dropped here (rounded down, also before
/// 1970) rather than by the server, and the number is what CrateDB answers
/// when the row is read back.
pub(crate) fn timestamp(us: i64, out: &mut Vec<u8>) {
    integer(us.div_euclid(1000), out);
}

/// A double in the shortest form that reads back to the same value (ryu).
/// JSON has no NaN or infinity: those are written `null`, which CrateDB
/// stores as NULL (the models never generate them).
pub(crate) fn float(x: f64, out: &mut Vec<u8>) {
    if x.is_finite() {
        out.put_slice(ryu::Buffer::new().format_finite(x).as_bytes());
    } else {
        out.put_slice(b"null");
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use super::*;

    /// A batch of one column of every type: (time µs, device oid, int4,
    /// float8, JSON text) per row. Shared with the driver's live test.
    pub(crate) fn batch(rows: &[(i64, u32, i32, f64, &str)]) -> Batch {
        let json_ends = rows.iter().scan(0, |end, r| {
            *end += r.4.len();
            Some(*end)
        });
        Batch {
            len: rows.len(),
            columns: vec![
                Values::Timestamptz(rows.iter().map(|r| r.0).collect()),
                Values::Oid(rows.iter().map(|r| r.1).collect()),
                Values::Int4(rows.iter().map(|r| r.2).collect()),
                Values::Float8(rows.iter().map(|r| r.3).collect()),
                Values::Jsonb { text: rows.iter().map(|r| r.4).collect(), ends: json_ends.collect() },
            ],
            omitted: Vec::new(),
        }
    }

    fn encoded(shape: Shape, stmt: &str, b: &Batch) -> Value {
        let mut out = Vec::new();
        Body::new(shape, stmt, b).write_all(&mut out);
        serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out)))
    }

    const STMT: &str = "INSERT INTO \"doc\".\"t\" (\"time\", \"device_id\") VALUES (?, ?)\n-- it's \\ \"quoted\"";

    fn sample() -> Batch {
        batch(&[
            (1_700_000_000_123_456, 7, -3, 0.1, r#"{"host":"h1","n":[1,2]}"#),
            (-1_500, u32::MAX, i32::MIN, -1e300, "{}"),
            (0, 0, 0, f64::NAN, r#"{"s":"\"q\"\n"}"#),
        ])
    }

    #[test]
    fn bulk_is_one_array_per_row() {
        let got = encoded(Shape::Bulk, STMT, &sample());
        assert_eq!(
            got,
            json!({
                "stmt": STMT,
                "bulk_args": [
                    [1_700_000_000_123i64, 7, -3, 0.1, {"host": "h1", "n": [1, 2]}],
                    [-2, u32::MAX, i32::MIN, -1e300, {}],
                    [0, 0, 0, null, {"s": "\"q\"\n"}],
                ]
            })
        );
    }

    #[test]
    fn values_is_every_row_flat() {
        let got = encoded(Shape::Values, STMT, &sample());
        assert_eq!(
            got,
            json!({
                "stmt": STMT,
                "args": [
                    1_700_000_000_123i64, 7, -3, 0.1, {"host": "h1", "n": [1, 2]},
                    -2, u32::MAX, i32::MIN, -1e300, {},
                    0, 0, 0, null, {"s": "\"q\"\n"},
                ]
            })
        );
    }

    #[test]
    fn unnest_is_one_array_per_column() {
        let got = encoded(Shape::Unnest, STMT, &sample());
        assert_eq!(
            got,
            json!({
                "stmt": STMT,
                "args": [
                    [1_700_000_000_123i64, -2, 0],
                    [7, u32::MAX, 0],
                    [-3, i32::MIN, 0],
                    [0.1, -1e300, null],
                    [{"host": "h1", "n": [1, 2]}, {}, {"s": "\"q\"\n"}],
                ]
            })
        );
    }

    #[test]
    fn empty_batches_are_valid_json() {
        let b = batch(&[]);
        assert_eq!(encoded(Shape::Bulk, "s", &b), json!({"stmt": "s", "bulk_args": []}));
        assert_eq!(encoded(Shape::Values, "s", &b), json!({"stmt": "s", "args": []}));
        assert_eq!(encoded(Shape::Unnest, "s", &b), json!({"stmt": "s", "args": [[], [], [], [], []]}));
    }

    /// A body written in pieces of any size is the body written whole:
    /// each piece ends where the last stopped, however small the pieces.
    #[test]
    fn bodies_written_in_pieces_are_the_whole_body() {
        let b = sample();
        for shape in [Shape::Bulk, Shape::Values, Shape::Unnest] {
            let mut whole = Vec::new();
            Body::new(shape, STMT, &b).write_all(&mut whole);
            for at_least in [1, 7, 40, 1 << 20] {
                let (mut body, mut out, mut pieces) = (Body::new(shape, STMT, &b), Vec::new(), 0);
                while body.write_some(&mut out, at_least) {
                    pieces += 1;
                }
                assert_eq!(out, whole, "{shape:?} in pieces of {at_least}");
                assert!(at_least > whole.len() || pieces > 1, "{shape:?}: {pieces} pieces of {at_least}");
            }
        }
    }

    proptest! {
        /// Whatever the values, the body parses, and each value reads back
        /// as written (timestamps in ms, floats exactly: ryu is shortest
        /// round-trip).
        #[test]
        fn bulk_round_trips(rows in prop::collection::vec(
            (any::<i64>(), any::<u32>(), any::<i32>(), any::<f64>().prop_filter("finite", |x| x.is_finite()), "\\PC*"),
            0..20,
        )) {
            let texts: Vec<String> = rows.iter().map(|r| json!({ "k": r.4 }).to_string()).collect();
            let tuples: Vec<_> = rows.iter().zip(&texts).map(|(r, j)| (r.0, r.1, r.2, r.3, j.as_str())).collect();
            let got = encoded(Shape::Bulk, "stmt", &batch(&tuples));
            let args = got["bulk_args"].as_array().unwrap();
            prop_assert_eq!(args.len(), rows.len());
            for (arg, r) in args.iter().zip(&rows) {
                prop_assert_eq!(arg[0].as_i64(), Some(r.0.div_euclid(1000)));
                prop_assert_eq!(arg[1].as_u64(), Some(r.1 as u64));
                prop_assert_eq!(arg[2].as_i64(), Some(r.2 as i64));
                prop_assert_eq!(arg[3].as_f64(), Some(r.3));
                prop_assert_eq!(arg[4]["k"].as_str(), Some(r.4.as_str()));
            }
        }
    }
}
