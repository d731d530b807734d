//! CSV COPY (`COPY ... FROM STDIN (FORMAT csv)`): the text path that most
//! loaders use, kept exact (floats in shortest round-trip form, timestamps
//! to the microsecond in UTC).

use bytes::{BufMut, BytesMut};
use chrono::{DateTime, Datelike, Timelike};

use crate::model::{Batch, Values};

/// The CSV line of row `i` of a batch, of the columns it sends (COPY's CSV
/// format has no header or trailer).
pub fn row(batch: &Batch, i: usize, out: &mut BytesMut) {
    let mut ints = itoa::Buffer::new();
    let mut floats = ryu::Buffer::new();
    for (c, col) in batch.sent().enumerate() {
        if c > 0 {
            out.put_u8(b',');
        }
        match col {
            Values::Timestamptz(v) => write_timestamp(v[i], out),
            Values::Oid(v) => out.put_slice(ints.format(v[i]).as_bytes()),
            Values::Int4(v) => out.put_slice(ints.format(v[i]).as_bytes()),
            Values::Float8(v) => out.put_slice(floats.format(v[i]).as_bytes()),
            Values::Jsonb { .. } => write_quoted(col.json(i), out),
            // NULL is an empty unquoted field; an empty text is quoted.
            Values::Text { .. } if col.is_null(i) => {}
            Values::Text { .. } => write_quoted(col.json(i), out),
        }
    }
    out.put_u8(b'\n');
}

/// `YYYY-MM-DD HH:MM:SS.ffffff+00`, written without a format string parser.
fn write_timestamp(unix_us: i64, out: &mut BytesMut) {
    let t = DateTime::from_timestamp_micros(unix_us).expect("generated timestamps are in range").naive_utc();
    let mut put = |n: u32, width: usize, sep: u8| {
        let mut digits = itoa::Buffer::new();
        let s = digits.format(n);
        for _ in s.len()..width {
            out.put_u8(b'0');
        }
        out.put_slice(s.as_bytes());
        out.put_u8(sep);
    };
    put(t.year() as u32, 4, b'-');
    put(t.month(), 2, b'-');
    put(t.day(), 2, b' ');
    put(t.hour(), 2, b':');
    put(t.minute(), 2, b':');
    put(t.second(), 2, b'.');
    put(t.nanosecond() / 1000, 6, b'+');
    out.put_slice(b"00");
}

/// A CSV field in double quotes, with quotes doubled.
fn write_quoted(s: &str, out: &mut BytesMut) {
    out.put_u8(b'"');
    for part in s.split_inclusive('"') {
        out.put_slice(part.as_bytes());
        if part.ends_with('"') {
            out.put_u8(b'"');
        }
    }
    out.put_u8(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_with_microseconds() {
        let mut out = BytesMut::new();
        write_timestamp(1_700_000_000_123_456, &mut out);
        assert_eq!(&out[..], b"2023-11-14 22:13:20.123456+00");
    }

    #[test]
    fn json_is_quoted_with_doubled_quotes() {
        let mut out = BytesMut::new();
        write_quoted(r#"{"a": "b"}"#, &mut out);
        assert_eq!(&out[..], br#""{""a"": ""b""}""#);
    }
}
