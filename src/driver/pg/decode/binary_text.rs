//! Rows of values in the PostgreSQL protocol's binary format, written out
//! as JSON objects or CSV lines. Rows arrive this way from a cursor (the
//! PostgreSQL driver's `cursor.rs`, which writes them out with this file)
//! on a server whose PostgreSQL protocol has no `COPY ... TO STDOUT` to
//! format them itself: CrateDB.
//!
//! The JSON is what CrateDB's HTTP endpoint gives for the same row, so an
//! export reads the same over either protocol and insert-json reads it
//! back: timestamps and dates in milliseconds since 1970 (an ISO string
//! for a value finer than a millisecond, which CrateDB never has),
//! `geo_point` as `[lon, lat]`, objects nested, arrays as arrays. A CSV
//! cell is the value's text form that CrateDB's `COPY FROM` reads, which
//! for everything but points is also PostgreSQL's: ISO timestamps, `{…}`
//! array literals, objects as JSON, points as `[lon, lat]`.

use std::fmt::Write as _;
use std::io::Write as _;

use chrono::{DateTime, NaiveDate, NaiveTime};
use fallible_iterator::FallibleIterator;
use postgres_protocol::types as wire;
use postgres_types::{Kind, Type};

type WireError = Box<dyn std::error::Error + Sync + Send>;

/// Microseconds from 1970-01-01 to 2000-01-01, the protocol's epoch.
const EPOCH_2000_US: i64 = 946_684_800_000_000;

/// A value's type, as far as writing it goes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scalar {
    Bool,
    /// `"char"`: CrateDB's `byte`, a number.
    Char,
    Int2,
    Int4,
    Int8,
    Oid,
    Float4,
    Float8,
    Numeric,
    Text,
    Json,
    Jsonb,
    Timestamp,
    Timestamptz,
    Date,
    Time,
    Interval,
    Uuid,
    Point,
    Bit,
    /// `bytea`: PostgreSQL's hex form, `\x…`.
    Bytea,
}

impl Scalar {
    fn of(ty: &Type) -> Option<Scalar> {
        let known = [
            (Type::BOOL, Scalar::Bool),
            (Type::CHAR, Scalar::Char),
            (Type::INT2, Scalar::Int2),
            (Type::INT4, Scalar::Int4),
            (Type::INT8, Scalar::Int8),
            (Type::OID, Scalar::Oid),
            (Type::FLOAT4, Scalar::Float4),
            (Type::FLOAT8, Scalar::Float8),
            (Type::NUMERIC, Scalar::Numeric),
            (Type::TEXT, Scalar::Text),
            (Type::VARCHAR, Scalar::Text),
            (Type::BPCHAR, Scalar::Text),
            (Type::NAME, Scalar::Text),
            (Type::JSON, Scalar::Json),
            (Type::JSONB, Scalar::Jsonb),
            (Type::TIMESTAMP, Scalar::Timestamp),
            (Type::TIMESTAMPTZ, Scalar::Timestamptz),
            (Type::DATE, Scalar::Date),
            (Type::TIME, Scalar::Time),
            (Type::INTERVAL, Scalar::Interval),
            (Type::UUID, Scalar::Uuid),
            (Type::POINT, Scalar::Point),
            (Type::BIT, Scalar::Bit),
            (Type::VARBIT, Scalar::Bit),
            (Type::BYTEA, Scalar::Bytea),
        ];
        known.into_iter().find(|(t, _)| t == ty).map(|(_, s)| s)
    }
}

/// How a value is spelled: in a JSON document, or as a CSV cell's text.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Style {
    Json,
    Text,
}

#[derive(Debug)]
struct Column {
    name: String,
    /// `"name":`, written before each value.
    key: Vec<u8>,
    scalar: Scalar,
    array: bool,
}

/// The columns of a result, resolved once, and the rows written with them.
#[derive(Debug)]
pub struct RowText {
    columns: Vec<Column>,
    /// A CSV cell before it is quoted.
    cell: Vec<u8>,
}

impl RowText {
    /// Resolves each column's type; a type it cannot read is refused,
    /// naming the column and the cast that makes it readable.
    pub fn new(columns: &[(String, Type)]) -> Result<RowText, String> {
        let resolve = |(name, ty): &(String, Type)| {
            let (scalar, array) = match ty.kind() {
                Kind::Array(element) => (Scalar::of(element), true),
                _ => (Scalar::of(ty), false),
            };
            let Some(scalar) = scalar else {
                return Err(format!(
                    "column {name} is of type {}, which dbload does not read over this protocol; cast it in the \
                     query ({name}::text)",
                    ty.name()
                ));
            };
            let mut key = serde_json::to_vec(name).expect("strings serialize");
            key.push(b':');
            Ok(Column { name: name.clone(), key, scalar, array })
        };
        let columns = columns.iter().map(resolve).collect::<Result<_, _>>()?;
        Ok(RowText { columns, cell: Vec::new() })
    }

    /// The CSV header line: the column names.
    pub fn csv_header(&mut self, out: &mut Vec<u8>) {
        for (i, c) in self.columns.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            csv_cell(c.name.as_bytes(), out);
        }
        out.push(b'\n');
    }

    /// Appends `{"column": value, ...}` and a newline. `values` are the
    /// row's values in column order, `None` for NULL.
    pub fn json<'a>(
        &mut self,
        values: impl IntoIterator<Item = Option<&'a [u8]>>,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        let start = out.len();
        out.push(b'{');
        for (i, (c, v)) in self.columns.iter().zip(values).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(&c.key);
            let written = match v {
                None => {
                    out.extend_from_slice(b"null");
                    Ok(())
                }
                Some(raw) => value(c, raw, Style::Json, out),
            };
            if let Err(e) = written {
                out.truncate(start);
                return Err(format!("column {}: {e}", c.name));
            }
        }
        out.extend_from_slice(b"}\n");
        Ok(())
    }

    /// Appends the row as a CSV line: NULL an empty cell, an empty string
    /// `""`, cells quoted where CSV needs it.
    pub fn csv<'a>(
        &mut self,
        values: impl IntoIterator<Item = Option<&'a [u8]>>,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        let start = out.len();
        for (i, (c, v)) in self.columns.iter().zip(values).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let Some(raw) = v else { continue };
            self.cell.clear();
            if let Err(e) = value(c, raw, Style::Text, &mut self.cell) {
                out.truncate(start);
                return Err(format!("column {}: {e}", c.name));
            }
            csv_cell(&self.cell, out);
        }
        out.push(b'\n');
        Ok(())
    }
}

fn value(c: &Column, raw: &[u8], style: Style, out: &mut Vec<u8>) -> Result<(), WireError> {
    match c.array {
        false => scalar(c.scalar, raw, style, out),
        true => array(c.scalar, raw, style, out),
    }
}

/// An array: nested JSON arrays, or a `{…}` literal with its elements
/// quoted (PostgreSQL's and CrateDB's array input).
fn array(s: Scalar, raw: &[u8], style: Style, out: &mut Vec<u8>) -> Result<(), WireError> {
    let a = wire::array_from_sql(raw)?;
    let dims: Vec<i32> = a.dimensions().map(|d| Ok(d.len)).collect()?;
    let mut values = a.values();
    if dims.is_empty() {
        out.extend_from_slice(if style == Style::Json { b"[]" } else { b"{}" });
        return Ok(());
    }
    let mut element = Vec::new();
    array_level(s, &dims, &mut values, style, out, &mut element)
}

fn array_level<'a>(
    s: Scalar,
    dims: &[i32],
    values: &mut wire::ArrayValues<'a>,
    style: Style,
    out: &mut Vec<u8>,
    element: &mut Vec<u8>,
) -> Result<(), WireError> {
    let (open, close) = if style == Style::Json { (b'[', b']') } else { (b'{', b'}') };
    out.push(open);
    for i in 0..dims[0] {
        if i > 0 {
            out.push(b',');
        }
        if dims.len() > 1 {
            array_level(s, &dims[1..], values, style, out, element)?;
            continue;
        }
        match (values.next()?.ok_or("fewer array elements than its dimensions")?, style) {
            (None, Style::Json) => out.extend_from_slice(b"null"),
            (None, Style::Text) => out.extend_from_slice(b"NULL"),
            (Some(v), Style::Json) => scalar(s, v, style, out)?,
            (Some(v), Style::Text) => {
                element.clear();
                scalar(s, v, style, element)?;
                crate::encode::quote_array_element(element, out);
            }
        }
    }
    out.push(close);
    Ok(())
}

/// One value of `s` in `style`.
fn scalar(s: Scalar, raw: &[u8], style: Style, out: &mut Vec<u8>) -> Result<(), WireError> {
    let json = style == Style::Json;
    match s {
        Scalar::Bool => out.extend_from_slice(if wire::bool_from_sql(raw)? { b"true" } else { b"false" }),
        Scalar::Char => out.extend_from_slice(itoa::Buffer::new().format(wire::char_from_sql(raw)?).as_bytes()),
        Scalar::Int2 => out.extend_from_slice(itoa::Buffer::new().format(wire::int2_from_sql(raw)?).as_bytes()),
        Scalar::Int4 => out.extend_from_slice(itoa::Buffer::new().format(wire::int4_from_sql(raw)?).as_bytes()),
        Scalar::Int8 => out.extend_from_slice(itoa::Buffer::new().format(wire::int8_from_sql(raw)?).as_bytes()),
        Scalar::Oid => out.extend_from_slice(itoa::Buffer::new().format(wire::oid_from_sql(raw)?).as_bytes()),
        Scalar::Float4 => float(f64::from(wire::float4_from_sql(raw)?), Some(wire::float4_from_sql(raw)?), json, out),
        Scalar::Float8 => float(wire::float8_from_sql(raw)?, None, json, out),
        Scalar::Numeric => numeric(raw, json, out)?,
        Scalar::Text => string(wire::text_from_sql(raw)?, json, out),
        Scalar::Json => json_text(wire::text_from_sql(raw)?, json, out)?,
        Scalar::Jsonb => match raw.split_first() {
            Some((1, text)) => json_text(std::str::from_utf8(text)?, json, out)?,
            _ => return Err("jsonb of an unknown version".into()),
        },
        Scalar::Timestamp | Scalar::Timestamptz => timestamp(wire::timestamp_from_sql(raw)?, s, json, out)?,
        Scalar::Date => date(wire::date_from_sql(raw)?, json, out)?,
        Scalar::Time => {
            let us = wire::time_from_sql(raw)?;
            let t =
                NaiveTime::from_num_seconds_from_midnight_opt((us / 1_000_000) as u32, (us % 1_000_000) as u32 * 1000)
                    .ok_or("a time of day out of range")?;
            string(&t.format("%H:%M:%S%.f").to_string(), json, out)
        }
        Scalar::Interval => string(&interval(raw)?, json, out),
        Scalar::Uuid => string(&uuid::Uuid::from_bytes(wire::uuid_from_sql(raw)?).to_string(), json, out),
        Scalar::Point => {
            let p = wire::point_from_sql(raw)?;
            out.push(b'[');
            float(p.x(), None, json, out);
            out.push(b',');
            float(p.y(), None, json, out);
            out.push(b']');
        }
        Scalar::Bit => {
            let bits = wire::varbit_from_sql(raw)?;
            let text: String =
                (0..bits.len()).map(|i| if bits.bytes()[i / 8] & (0x80 >> (i % 8)) != 0 { '1' } else { '0' }).collect();
            string(&text, json, out)
        }
        Scalar::Bytea => {
            let mut hex = String::with_capacity(2 + 2 * raw.len());
            hex.push_str("\\x");
            for b in raw {
                let _ = write!(hex, "{b:02x}");
            }
            string(&hex, json, out)
        }
    }
    Ok(())
}

/// A string: quoted and escaped in JSON, as is in text.
fn string(s: &str, json: bool, out: &mut Vec<u8>) {
    match json {
        true => serde_json::to_writer(&mut *out, s).expect("strings serialize"),
        false => out.extend_from_slice(s.as_bytes()),
    }
}

/// A float as the shortest text that reads back as the same value
/// (`f32` values as `f32`, not widened); NaN and the infinities, which
/// JSON has no number for, as PostgreSQL spells them.
fn float(x: f64, narrow: Option<f32>, json: bool, out: &mut Vec<u8>) {
    if !x.is_finite() {
        let name = if x.is_nan() {
            "NaN"
        } else if x > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        };
        return string(name, json, out);
    }
    let mut b = ryu::Buffer::new();
    out.extend_from_slice(
        match narrow {
            Some(f) => b.format_finite(f),
            None => b.format_finite(x),
        }
        .as_bytes(),
    );
}

/// A JSON document kept as the server wrote it, unless it spans lines: a
/// JSON line must not.
fn json_text(text: &str, json: bool, out: &mut Vec<u8>) -> Result<(), WireError> {
    if json && text.contains(['\n', '\r']) {
        let v: serde_json::Value = serde_json::from_str(text)?;
        serde_json::to_writer(&mut *out, &v)?;
    } else {
        out.extend_from_slice(text.as_bytes());
    }
    Ok(())
}

/// A timestamp: milliseconds since 1970 in JSON when it is a whole
/// millisecond (CrateDB's form), else ISO 8601; `Z` marks `timestamptz`.
fn timestamp(us_2000: i64, s: Scalar, json: bool, out: &mut Vec<u8>) -> Result<(), WireError> {
    if us_2000 == i64::MAX || us_2000 == i64::MIN {
        return infinity(us_2000 > 0, json, out);
    }
    let us = us_2000.checked_add(EPOCH_2000_US).ok_or("a timestamp out of range")?;
    if json && us % 1000 == 0 {
        out.extend_from_slice(itoa::Buffer::new().format(us / 1000).as_bytes());
        return Ok(());
    }
    let t = DateTime::from_timestamp_micros(us).ok_or("a timestamp out of range")?;
    let zone = if s == Scalar::Timestamptz { "Z" } else { "" };
    string(&format!("{}{zone}", t.format("%Y-%m-%dT%H:%M:%S%.f")), json, out);
    Ok(())
}

/// PostgreSQL's infinite timestamp or date (its largest and smallest values).
fn infinity(positive: bool, json: bool, out: &mut Vec<u8>) -> Result<(), WireError> {
    string(if positive { "infinity" } else { "-infinity" }, json, out);
    Ok(())
}

/// A date: milliseconds since 1970 in JSON (CrateDB's form), `YYYY-MM-DD` in text.
fn date(days_2000: i32, json: bool, out: &mut Vec<u8>) -> Result<(), WireError> {
    if days_2000 == i32::MAX || days_2000 == i32::MIN {
        return infinity(days_2000 > 0, json, out);
    }
    let days = i64::from(days_2000) + EPOCH_2000_US / 86_400_000_000;
    if json {
        out.extend_from_slice(itoa::Buffer::new().format(days * 86_400_000).as_bytes());
        return Ok(());
    }
    let d = NaiveDate::from_num_days_from_ce_opt((days + 719_163) as i32).ok_or("a date out of range")?;
    let _ = write!(out, "{}", d.format("%Y-%m-%d"));
    Ok(())
}

/// An interval in ISO 8601 (`P1M2DT3.5S`), which PostgreSQL and CrateDB read.
fn interval(raw: &[u8]) -> Result<String, WireError> {
    let [t0, t1, t2, t3, t4, t5, t6, t7, d0, d1, d2, d3, m0, m1, m2, m3] = raw else {
        return Err("an interval of another size".into());
    };
    let us = i64::from_be_bytes([*t0, *t1, *t2, *t3, *t4, *t5, *t6, *t7]);
    let days = i32::from_be_bytes([*d0, *d1, *d2, *d3]);
    let months = i32::from_be_bytes([*m0, *m1, *m2, *m3]);
    let sign = if us < 0 { "-" } else { "" };
    let (whole, fraction) = (us.unsigned_abs() / 1_000_000, us.unsigned_abs() % 1_000_000);
    let mut s = format!("P{months}M{days}DT{sign}{whole}");
    if fraction > 0 {
        let digits = format!("{fraction:06}");
        s.push('.');
        s.push_str(digits.trim_end_matches('0'));
    }
    s.push('S');
    Ok(s)
}

/// A `numeric` in decimal notation with its scale's digits; NaN and the
/// infinities as PostgreSQL spells them.
fn numeric(raw: &[u8], json: bool, out: &mut Vec<u8>) -> Result<(), WireError> {
    let word = |i: usize| raw.get(2 * i..2 * i + 2).map(|w| u16::from_be_bytes([w[0], w[1]]));
    let header = (word(0), word(1), word(2), word(3));
    let (Some(ndigits), Some(weight), Some(sign), Some(dscale)) = header else {
        return Err("a numeric shorter than its header".into());
    };
    let weight = weight as i16 as i64;
    let special = match sign {
        0x0000 | 0x4000 => None,
        0xC000 => Some("NaN"),
        0xD000 => Some("Infinity"),
        0xF000 => Some("-Infinity"),
        _ => return Err("a numeric with an unknown sign".into()),
    };
    if let Some(name) = special {
        string(name, json, out);
        return Ok(());
    }
    let digits = (0..ndigits as usize)
        .map(|i| word(4 + i).ok_or("a numeric shorter than its digits"))
        .collect::<Result<Vec<u16>, _>>()?;
    // Digit i (base 10,000) stands for 10000^(weight - i).
    let digit = |i: i64| if i < 0 { 0 } else { digits.get(i as usize).copied().unwrap_or(0) };
    if sign == 0x4000 {
        out.push(b'-');
    }
    if weight < 0 {
        out.push(b'0');
    }
    for i in 0..=weight {
        match i {
            0 => write!(out, "{}", digit(0))?,
            _ => write!(out, "{:04}", digit(i))?,
        }
    }
    if dscale > 0 {
        out.push(b'.');
        let start = out.len();
        let mut i = weight + 1;
        while out.len() - start < dscale as usize {
            write!(out, "{:04}", digit(i))?;
            i += 1;
        }
        out.truncate(start + dscale as usize);
    }
    Ok(())
}

/// A CSV cell: quoted when it is empty (unquoted empty is NULL), holds a
/// delimiter, quote or line break, or is `\.` (COPY's end-of-data line).
fn csv_cell(cell: &[u8], out: &mut Vec<u8>) {
    let quote = cell.is_empty() || cell == b"\\." || cell.iter().any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'));
    if !quote {
        out.extend_from_slice(cell);
        return;
    }
    out.push(b'"');
    for &b in cell {
        if b == b'"' {
            out.push(b'"');
        }
        out.push(b);
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use postgres_types::ToSql;

    /// The binary form PostgreSQL's own encoder gives `v` as `ty`.
    fn bin<T: ToSql>(v: T, ty: &Type) -> Vec<u8> {
        let mut b = BytesMut::new();
        v.to_sql(ty, &mut b).unwrap();
        b.to_vec()
    }

    fn row(cols: &[(&str, Type)], values: &[Option<Vec<u8>>]) -> (String, String) {
        let cols: Vec<(String, Type)> = cols.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
        let mut r = RowText::new(&cols).unwrap();
        let (mut json, mut csv) = (Vec::new(), Vec::new());
        r.json(values.iter().map(|v| v.as_deref()), &mut json).unwrap();
        r.csv(values.iter().map(|v| v.as_deref()), &mut csv).unwrap();
        (String::from_utf8(json).unwrap(), String::from_utf8(csv).unwrap())
    }

    /// numeric's binary form: digits in base 10,000.
    fn numeric_bin(ndigits: u16, weight: i16, sign: u16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut v = Vec::new();
        for w in [ndigits, weight as u16, sign, dscale].iter().chain(digits) {
            v.extend_from_slice(&w.to_be_bytes());
        }
        v
    }

    #[test]
    fn scalars_as_crate_http_gives_them_and_as_csv_text() {
        let ts = 1_704_067_200_123_000i64 - EPOCH_2000_US;
        let cols = [
            ("id", Type::INT4),
            ("name", Type::VARCHAR),
            ("ok", Type::BOOL),
            ("ts", Type::TIMESTAMPTZ),
            ("o", Type::JSON),
            ("p", Type::POINT),
            ("x", Type::FLOAT4),
            ("d", Type::DATE),
        ];
        let values = [
            Some(bin(7i32, &Type::INT4)),
            Some(bin("a,\"b\"\n", &Type::VARCHAR)),
            Some(bin(true, &Type::BOOL)),
            Some(ts.to_be_bytes().to_vec()),
            Some(b"{\n\"a\": [1, \"x\"]}".to_vec()),
            Some([1.5f64.to_be_bytes(), (-2f64).to_be_bytes()].concat()),
            Some(bin(0.1f32, &Type::FLOAT4)),
            Some(1i32.to_be_bytes().to_vec()),
        ];
        let (json, csv) = row(&cols, &values);
        assert_eq!(
            json,
            "{\"id\":7,\"name\":\"a,\\\"b\\\"\\n\",\"ok\":true,\"ts\":1704067200123,\"o\":{\"a\":[1,\"x\"]},\
             \"p\":[1.5,-2.0],\"x\":0.1,\"d\":946771200000}\n"
        );
        assert_eq!(
            csv,
            "7,\"a,\"\"b\"\"\n\",true,2024-01-01T00:00:00.123Z,\"{\n\"\"a\"\": [1, \"\"x\"\"]}\",\"[1.5,-2.0]\",0.1,2000-01-02\n"
        );
    }

    #[test]
    fn nulls_empty_strings_and_special_values() {
        let cols = [("a", Type::TEXT), ("b", Type::TEXT), ("c", Type::FLOAT8), ("t", Type::TIMESTAMP)];
        let values =
            [None, Some(Vec::new()), Some(bin(f64::NAN, &Type::FLOAT8)), Some(i64::MAX.to_be_bytes().to_vec())];
        let (json, csv) = row(&cols, &values);
        assert_eq!(json, "{\"a\":null,\"b\":\"\",\"c\":\"NaN\",\"t\":\"infinity\"}\n");
        assert_eq!(csv, ",\"\",NaN,infinity\n");
        // Finer than a millisecond: ISO, no zone for a timestamp without one.
        let (json, _) = row(&[("t", Type::TIMESTAMP)], &[Some(1_500i64.to_be_bytes().to_vec())]);
        assert_eq!(json, "{\"t\":\"2000-01-01T00:00:00.001500\"}\n");
    }

    #[test]
    fn numerics_keep_every_digit_of_their_scale() {
        let cases = [
            (numeric_bin(2, 0, 0, 2, &[12, 3400]), "12.34"),
            (numeric_bin(1, -1, 0x4000, 1, &[5000]), "-0.5"),
            (numeric_bin(1, 5, 0, 0, &[1]), "100000000000000000000"),
            (numeric_bin(1, -2, 0, 8, &[12]), "0.00000012"),
            (numeric_bin(0, 0, 0, 3, &[]), "0.000"),
            (numeric_bin(3, 1, 0, 4, &[1, 2, 3]), "10002.0003"),
        ];
        for (raw, want) in cases {
            let mut out = Vec::new();
            numeric(&raw, true, &mut out).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
        let mut out = Vec::new();
        numeric(&numeric_bin(0, 0, 0xC000, 0, &[]), true, &mut out).unwrap();
        assert_eq!(out, b"\"NaN\"");
    }

    #[test]
    fn arrays_nest_in_json_and_are_literals_in_csv() {
        let texts = bin(vec![Some("a\"b"), None, Some("c")], &Type::VARCHAR_ARRAY);
        let ints = bin(Vec::<i64>::new(), &Type::INT8_ARRAY);
        let cols = [("t", Type::VARCHAR_ARRAY), ("i", Type::INT8_ARRAY)];
        let (json, csv) = row(&cols, &[Some(texts), Some(ints)]);
        assert_eq!(json, "{\"t\":[\"a\\\"b\",null,\"c\"],\"i\":[]}\n");
        assert_eq!(csv, "\"{\"\"a\\\"\"b\"\",NULL,\"\"c\"\"}\",{}\n");
        // Two dimensions, built by hand: {{1,2},{3,4}}.
        let mut raw = Vec::new();
        for w in [2i32, 0, 23, 2, 1, 2, 1] {
            raw.extend_from_slice(&w.to_be_bytes());
        }
        for v in 1..=4i32 {
            raw.extend_from_slice(&4i32.to_be_bytes());
            raw.extend_from_slice(&v.to_be_bytes());
        }
        let (json, csv) = row(&[("m", Type::INT4_ARRAY)], &[Some(raw)]);
        assert_eq!(
            (json.as_str(), csv.as_str()),
            ("{\"m\":[[1,2],[3,4]]}\n", "\"{{\"\"1\"\",\"\"2\"\"},{\"\"3\"\",\"\"4\"\"}}\"\n")
        );
    }

    #[test]
    fn intervals_times_uuids_and_bits() {
        let mut iv = (-3_500_000i64).to_be_bytes().to_vec();
        iv.extend_from_slice(&2i32.to_be_bytes());
        iv.extend_from_slice(&14i32.to_be_bytes());
        assert_eq!(interval(&iv).unwrap(), "P14M2DT-3.5S");
        let u = uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef);
        let cols = [("u", Type::UUID), ("t", Type::TIME), ("b", Type::VARBIT), ("x", Type::BYTEA)];
        let bits = [5i32.to_be_bytes().to_vec(), vec![0b1010_1000]].concat();
        let time = 3_723_000_001i64.to_be_bytes().to_vec();
        let values = [Some(u.as_bytes().to_vec()), Some(time), Some(bits), Some(vec![0, 0xff, b'\\'])];
        let (json, csv) = row(&cols, &values);
        assert_eq!(
            json,
            "{\"u\":\"01234567-89ab-cdef-0123-456789abcdef\",\"t\":\"01:02:03.000001\",\"b\":\"10101\",\"x\":\"\\\\x00ff5c\"}\n"
        );
        assert_eq!(csv, "01234567-89ab-cdef-0123-456789abcdef,01:02:03.000001,10101,\\x00ff5c\n");
    }

    #[test]
    fn a_type_it_cannot_read_is_named_with_the_cast() {
        let e = RowText::new(&[("addr".into(), Type::INET)]).unwrap_err();
        assert_eq!(e, "column addr is of type inet, which dbload does not read over this protocol; cast it in the query (addr::text)");
        let mut r = RowText::new(&[("h".into(), Type::TEXT)]).unwrap();
        let mut out = Vec::new();
        r.csv_header(&mut out);
        assert_eq!(out, b"h\n");
        let bad = r.json([Some(&[0xff][..])], &mut out).unwrap_err();
        assert!(bad.starts_with("column h: "), "{bad}");
        assert_eq!(out, b"h\n", "a row that fails leaves nothing behind");
    }
}
