//! A JSON value (one key's value of a row) converted to the text input
//! form of its column's type, and checked where that is cheap, so a value
//! that does not fit is named with its column rather than left to the
//! database to refuse the whole batch.
//!
//! Values are kept exactly: integers are read as integers (never through
//! f64), numbers for float and numeric columns are sent as the input's own
//! text, and the server converts them.

use std::borrow::Cow;

use serde_json::value::RawValue;

use crate::model::catalog::Kind;
use crate::model::fake;

/// serde_json's message without its position (which is within the row, not the file).
pub(super) fn serde_message(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rsplit_once(" at line ") {
        Some((msg, _)) => msg.to_string(),
        None => s,
    }
}

/// A JSON value cut short for messages: `"abc"`, `12.5`, `{"a": …`.
fn shown(raw: &str) -> String {
    let cut: String = raw.chars().take(60).collect();
    if cut.len() < raw.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// The text of a JSON string token (borrowed unless it has escapes); an
/// escape that is not text (a lone surrogate such as `"\ud800"`) is an error.
fn unquote(raw: &str) -> Result<Cow<'_, str>, String> {
    if !raw.contains('\\') {
        return Ok(Cow::Borrowed(&raw[1..raw.len() - 1]));
    }
    serde_json::from_str::<String>(raw)
        .map(Cow::Owned)
        .map_err(|e| format!("value {} is not text: {}", shown(raw), serde_message(&e)))
}

/// What a number's text is as an integer, exactly (no f64 between).
#[derive(Debug, PartialEq)]
enum Integer {
    Exact(i64),
    /// Beyond i64.
    TooBig,
    /// Not a number, or one with a fraction.
    Not,
}

/// Reads a JSON number (`-12`, `1e3`, `12.0`, `1.5e1`) as the integer it
/// is, if it is one.
fn integer(text: &str) -> Integer {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (mantissa, exp) = match rest.split_once(['e', 'E']) {
        Some((m, e)) => (m, e),
        None => (rest, "0"),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits_ok = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let exp_digits = exp.strip_prefix(['-', '+']).unwrap_or(exp);
    if int.is_empty() || !digits_ok(int) || !digits_ok(frac) || exp_digits.is_empty() || !digits_ok(exp_digits) {
        return Integer::Not;
    }
    // The digits, and the power of ten they are multiplied by.
    let all = format!("{int}{frac}");
    let significant = all.trim_start_matches('0');
    let digits = significant.trim_end_matches('0');
    if digits.is_empty() {
        return Integer::Exact(0);
    }
    // Capped: beyond it the number is far outside i64 either way.
    let magnitude: i64 = exp_digits.parse::<i64>().unwrap_or(i64::MAX).min(1000);
    let exp = if exp.starts_with('-') { -magnitude } else { magnitude };
    let power = exp - frac.len() as i64 + (significant.len() - digits.len()) as i64;
    if power < 0 {
        return Integer::Not;
    }
    if digits.len() as i64 + power > 19 {
        return Integer::TooBig;
    }
    let n = digits.parse::<i128>().expect("at most 19 digits") * 10i128.pow(power as u32);
    i64::try_from(if negative { -n } else { n }).map_or(Integer::TooBig, Integer::Exact)
}

/// Writes a JSON value (`raw`, one token or structure) in the text input
/// form of a column of `kind` (an array of it if `array`); returns whether
/// it is NULL, or why it does not fit.
pub(super) fn convert(
    raw: &str,
    kind: &Kind,
    array: bool,
    out: &mut String,
    scratch: &mut String,
) -> Result<bool, String> {
    if raw == "null" {
        return Ok(true);
    }
    if array {
        return convert_array(raw, kind, out, scratch).map(|()| false);
    }
    let is_string = raw.starts_with('"');
    let not = |what: &str| Err(format!("value {} is not {what}", shown(raw)));
    let text = if is_string { unquote(raw)? } else { Cow::Borrowed(raw) };
    let number = raw.starts_with(|c: char| c == '-' || c.is_ascii_digit());
    match kind {
        Kind::Int { min, max } => match integer(text.trim()) {
            Integer::Exact(n) if (*min..=*max).contains(&n) => out.push_str(itoa::Buffer::new().format(n)),
            Integer::Exact(_) | Integer::TooBig => {
                return Err(format!("value {} is out of range ({min} to {max})", shown(raw)))
            }
            Integer::Not => return not("an integer"),
        },
        Kind::Float { .. } | Kind::Numeric { .. } => {
            let t = text.trim();
            let special = ["NaN", "Infinity", "-Infinity", "inf", "-inf"].iter().any(|s| t.eq_ignore_ascii_case(s));
            if !(number || is_string) || (t.parse::<f64>().is_err() && !special) {
                return not("a number");
            }
            if let (Kind::Numeric { precision: Some(p), scale }, false) = (kind, special || t.contains(['e', 'E'])) {
                let int = t.trim_start_matches(['-', '+']).split('.').next().unwrap_or("");
                if int.trim_start_matches('0').len() as u32 > p.saturating_sub(*scale) {
                    return Err(format!("value {} does not fit numeric({p},{scale})", shown(raw)));
                }
            }
            out.push_str(t);
        }
        Kind::Bool => match text.to_ascii_lowercase().as_str() {
            "true" | "t" | "yes" | "y" | "on" | "1" => out.push_str("true"),
            "false" | "f" | "no" | "n" | "off" | "0" => out.push_str("false"),
            _ => return not("a boolean"),
        },
        Kind::Text { max_chars } => {
            if let Some(m) = max_chars {
                let n = text.chars().count();
                if n > *m as usize {
                    return Err(format!("value {} has {n} characters, more than the column's {m}", shown(raw)));
                }
            }
            out.push_str(&text);
        }
        Kind::Date | Kind::Timestamp | Kind::Timestamptz if number => {
            // Milliseconds since the epoch, as CrateDB exports timestamps.
            let ms: i64 =
                text.parse().map_err(|_| format!("value {} is not a time (milliseconds since 1970)", shown(raw)))?;
            let t = chrono::DateTime::from_timestamp_millis(ms)
                .ok_or_else(|| format!("value {} is out of range", shown(raw)))?;
            let form = match kind {
                Kind::Date => "%Y-%m-%d",
                Kind::Timestamp => "%Y-%m-%d %H:%M:%S%.3f",
                _ => "%Y-%m-%d %H:%M:%S%.3f+00",
            };
            use std::fmt::Write as _;
            let _ = write!(out, "{}", t.format(form));
        }
        Kind::Date if !is_date(&text) => return not("a date"),
        Kind::Timestamp | Kind::Timestamptz if !is_timestamp(&text) => return not("a timestamp"),
        Kind::Time if !is_time(&text) => return not("a time of day"),
        Kind::Uuid if uuid::Uuid::parse_str(text.trim()).is_err() => return not("a uuid"),
        Kind::Inet | Kind::Cidr if !is_inet(&text) => return not("an IP address"),
        Kind::Json => out.push_str(raw),
        // CrateDB's `[lon, lat]` in the point syntax its PostgreSQL protocol reads.
        Kind::GeoPoint if raw.starts_with('[') => {
            out.push('(');
            out.push_str(raw.trim_matches(['[', ']']));
            out.push(')');
        }
        Kind::GeoPoint | Kind::GeoShape if is_string => out.push_str(&text),
        Kind::GeoPoint | Kind::GeoShape => out.push_str(raw),
        // Dates, times, uuids, addresses checked above; intervals, bytea and
        // other types as their text, which the server checks.
        _ if is_string => out.push_str(&text),
        _ => out.push_str(raw),
    }
    Ok(false)
}

/// A JSON array as a PostgreSQL array literal `{…}`, elements quoted.
fn convert_array(raw: &str, kind: &Kind, out: &mut String, scratch: &mut String) -> Result<(), String> {
    let items: Vec<&RawValue> =
        serde_json::from_str(raw).map_err(|_| format!("value {} is not an array", shown(raw)))?;
    out.push('{');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if item.get().starts_with('[') {
            convert_array(item.get(), kind, out, scratch)?;
            continue;
        }
        scratch.clear();
        // A scalar element needs no scratch of its own (String::new does not allocate).
        if convert(item.get(), kind, false, scratch, &mut String::new())
            .map_err(|e| format!("element {}: {e}", i + 1))?
        {
            out.push_str("NULL");
            continue;
        }
        fake::quote_element(scratch, out);
    }
    out.push('}');
    Ok(())
}

fn is_date(s: &str) -> bool {
    let s = s.trim();
    matches!(s, "infinity" | "-infinity" | "epoch")
        || s.get(..10).is_some_and(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").is_ok())
}

fn is_time(s: &str) -> bool {
    let s = s.trim();
    let s = s.split(['+', 'Z']).next().unwrap_or(s);
    ["%H:%M:%S%.f", "%H:%M"].iter().any(|f| chrono::NaiveTime::parse_from_str(s, f).is_ok())
}

fn is_timestamp(s: &str) -> bool {
    let s = s.trim();
    if matches!(s, "infinity" | "-infinity" | "epoch") || chrono::DateTime::parse_from_rfc3339(s).is_ok() {
        return true;
    }
    // PostgreSQL's own forms: a space or T, a fraction, an offset like +00 or +05:30.
    let Some((date, rest)) = s.split_at_checked(10) else { return false };
    if !is_date(date) {
        return false;
    }
    let rest = rest.trim_start_matches([' ', 'T']);
    let time = rest.split(['+', 'Z', ' ']).next().unwrap_or(rest);
    let time = match time.rsplit_once('-') {
        Some((t, _)) if t.contains(':') => t,
        _ => time,
    };
    rest.is_empty() || is_time(time)
}

fn is_inet(s: &str) -> bool {
    let s = s.trim();
    let (addr, prefix) = match s.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (s, None),
    };
    match addr.parse::<std::net::IpAddr>() {
        Ok(ip) => prefix.is_none_or(|p| p.parse::<u8>().is_ok_and(|p| p <= if ip.is_ipv4() { 32 } else { 128 })),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to_text(raw: &str, kind: Kind, array: bool) -> Result<Option<String>, String> {
        let mut out = String::new();
        let null = convert(raw, &kind, array, &mut out, &mut String::new())?;
        Ok((!null).then_some(out))
    }

    #[test]
    fn values_become_the_text_form_of_their_column() {
        let int4 = || Kind::from_pg("int4", -1);
        assert_eq!(to_text("42", int4(), false), Ok(Some("42".into())));
        assert_eq!(to_text("\"7\"", int4(), false), Ok(Some("7".into())));
        assert_eq!(to_text("1e3", int4(), false), Ok(Some("1000".into())));
        assert_eq!(to_text("null", int4(), false), Ok(None));
        assert_eq!(to_text("\"abc\"", int4(), false), Err("value \"abc\" is not an integer".into()));
        assert!(to_text("40000", Kind::from_pg("int2", -1), false).unwrap_err().contains("out of range"));
        // Issue 13 item 3: integers exactly, never through f64.
        let int8 = || Kind::from_pg("int8", -1);
        assert_eq!(to_text("9223372036854775807", int8(), false), Ok(Some("9223372036854775807".into())));
        assert_eq!(to_text("-9223372036854775808", int8(), false), Ok(Some("-9223372036854775808".into())));
        for out in ["9223372036854775808", "-9223372036854775809", "1e19", "1e400", "\"99999999999999999999\""] {
            assert!(to_text(out, int8(), false).unwrap_err().contains("out of range"), "{out}");
        }
        assert_eq!(to_text("922337203685477580.7e1", int8(), false), Ok(Some("9223372036854775807".into())));
        assert_eq!(to_text("12.50e1", int4(), false), Ok(Some("125".into())));
        assert_eq!(to_text("-0.0", int4(), false), Ok(Some("0".into())));
        assert!(to_text("1.0000000000000001", int8(), false).unwrap_err().contains("not an integer"));
        assert!(to_text("1e-400", int8(), false).unwrap_err().contains("not an integer"));
        assert!(to_text("1.5", int4(), false).is_err());
        assert_eq!(to_text("2.5e1", Kind::Float { bits: 64 }, false), Ok(Some("2.5e1".into())));
        assert!(to_text("true", Kind::Float { bits: 64 }, false).is_err());
        let money = Kind::Numeric { precision: Some(6), scale: 2 };
        assert_eq!(to_text("1234.5", money.clone(), false), Ok(Some("1234.5".into())));
        assert!(to_text("12345.5", money, false).unwrap_err().contains("numeric(6,2)"));
        assert_eq!(to_text("\"t\"", Kind::Bool, false), Ok(Some("true".into())));
        assert!(to_text("\"maybe\"", Kind::Bool, false).is_err());
        let v5 = Kind::Text { max_chars: Some(5) };
        assert_eq!(to_text(r#""a\"b""#, v5.clone(), false), Ok(Some("a\"b".into())));
        assert!(to_text("\"abcdef\"", v5, false).unwrap_err().contains("6 characters"));
        assert_eq!(to_text("{\"a\": [1]}", Kind::Json, false), Ok(Some("{\"a\": [1]}".into())));
        assert_eq!(to_text("\"x\"", Kind::Json, false), Ok(Some("\"x\"".into())));
        for ok in ["\"2024-01-02 03:04:05.678+00\"", "\"2024-01-02T03:04:05Z\"", "\"2024-01-02\"", "\"infinity\""] {
            assert!(to_text(ok, Kind::Timestamptz, false).is_ok(), "{ok}");
        }
        assert_eq!(to_text("0", Kind::Timestamptz, false), Ok(Some("1970-01-01 00:00:00.000+00".into())));
        assert!(to_text("\"yesterday-ish\"", Kind::Timestamptz, false).unwrap_err().contains("not a timestamp"));
        assert!(to_text("\"2024-02-30\"", Kind::Date, false).is_err());
        assert!(to_text("\"25:00\"", Kind::Time, false).is_err());
        assert!(to_text("\"not-a-uuid\"", Kind::Uuid, false).unwrap_err().contains("uuid"));
        assert!(to_text("\"10.0.0.1/8\"", Kind::Cidr, false).is_ok());
        assert!(to_text("\"10.0.0.300\"", Kind::Inet, false).is_err());
        assert_eq!(
            to_text(r#"[1, null, "x\"y"]"#, Kind::Text { max_chars: None }, true),
            Ok(Some(r#"{"1",NULL,"x\"y"}"#.into()))
        );
        assert_eq!(to_text("[[1, 2], [3, 4]]", int4(), true), Ok(Some(r#"{{"1","2"},{"3","4"}}"#.into())));
        assert!(to_text("[1, \"a\"]", int4(), true).unwrap_err().contains("element 2"));
        assert!(to_text("5", int4(), true).unwrap_err().contains("not an array"));
        // CrateDB's geo_point as exported ([lon, lat]) in the point syntax of its PostgreSQL protocol.
        assert_eq!(to_text("[9.5, 47.25]", Kind::GeoPoint, false), Ok(Some("(9.5, 47.25)".into())));
        assert_eq!(to_text("\"POINT (1 2)\"", Kind::GeoPoint, false), Ok(Some("POINT (1 2)".into())));
    }
}
