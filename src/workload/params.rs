//! Query parameters: constants and seeded generators, so the queries of a
//! workload are not all identical (a server that sees one statement with one
//! set of values answers from warm caches and flatters itself).
//!
//! A [`ParamGen`] is sampled once per execution into a [`Value`], which goes
//! to the server either bound to a prepared statement (through `ToSql`,
//! adapting to the type the server inferred) or spliced into the SQL text as
//! a literal for the simple protocol. Sampling is pure: the caller passes the
//! RNG and the clock, so a run is reproducible from its seed.

use std::error::Error;
use std::sync::Arc;

use bytes::{BufMut, BytesMut};
use postgres_types::{to_sql_checked, Format, IsNull, ToSql, Type};
use rand::rngs::ChaCha8Rng;
use rand::RngExt;

use crate::model::fake::uniform_float;

/// PostgreSQL's binary timestamps count µs from 2000-01-01, not 1970-01-01.
const PG_EPOCH_OFFSET_US: i64 = 946_684_800_000_000;

/// A value bound to a query parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Float(f64),
    Text(String),
    /// A pgbench script's `-D NAME=text`: bound as text like [`Value::Text`],
    /// but spliced into the SQL as written for the simple protocol, as
    /// pgbench substitutes `:name` (so `-D "v='a' || 'b'"` is SQL there).
    Verbatim(Arc<str>),
    Bool(bool),
    /// µs since the Unix epoch
    Timestamp(i64),
}

/// How a parameter gets its value for each execution. Ranges and choices are
/// validated when the workload file is read (`lo <= hi`, `lo < hi` for
/// floats, a non-empty choice, `max_us >= 0`); `sample` relies on that.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamGen {
    Const(Value),
    /// Uniform, inclusive.
    IntRange {
        lo: i64,
        hi: i64,
    },
    /// Uniform in `[lo, hi)`.
    FloatRange {
        lo: f64,
        hi: f64,
    },
    /// Uniform pick.
    Choice(Vec<Value>),
    /// A timestamp uniformly in `[now - max, now]`: a sliding "recent" window
    /// for time-series queries, whatever the day the benchmark runs.
    TimeAgo {
        max_us: i64,
    },
    /// A timestamp uniformly in `[lo_us, hi_us]`: a point inside the time
    /// range the data really covers (TSBS's random end of an interval).
    TimeIn {
        lo_us: i64,
        hi_us: i64,
    },
    /// Two values, the start and the end of a window `len_us` long whose
    /// start is uniform in `[lo_us, hi_us - len_us]`: TSBS's random window
    /// inside the data's time range. Drawn together so the end always
    /// follows its own start.
    Window {
        lo_us: i64,
        hi_us: i64,
        len_us: i64,
    },
    /// `n` distinct values of `from`, in the order drawn (TSBS's random
    /// hosts: `hostname IN ($1, ..., $n)` never names one host twice).
    Distinct {
        from: Arc<[Value]>,
        n: usize,
    },
}

impl ParamGen {
    /// How many placeholders one draw fills: 2 for a window, `n` for
    /// distinct values, else 1.
    pub fn arity(&self) -> usize {
        match self {
            ParamGen::Window { .. } => 2,
            ParamGen::Distinct { n, .. } => *n,
            _ => 1,
        }
    }

    /// Draws this generator's values (see [`ParamGen::arity`]) onto `out`.
    /// `now_us` (µs since the Unix epoch) is passed in rather than read
    /// here, so drawing stays a pure function of the RNG stream. Windows
    /// and distinct values are built valid (`lo + len <= hi`, `n <= len`).
    pub fn draw(&self, rng: &mut ChaCha8Rng, now_us: i64, out: &mut Vec<Value>) {
        match self {
            ParamGen::Const(v) => out.push(v.clone()),
            ParamGen::IntRange { lo, hi } => out.push(Value::Int(rng.random_range(*lo..=*hi))),
            ParamGen::FloatRange { lo, hi } => out.push(Value::Float(uniform_float(rng, *lo, *hi))),
            ParamGen::Choice(values) => out.push(values[rng.random_range(0..values.len())].clone()),
            ParamGen::TimeAgo { max_us } => {
                out.push(Value::Timestamp(now_us.saturating_sub(rng.random_range(0..=*max_us))))
            }
            ParamGen::TimeIn { lo_us, hi_us } => out.push(Value::Timestamp(rng.random_range(*lo_us..=*hi_us))),
            ParamGen::Window { lo_us, hi_us, len_us } => {
                let start = rng.random_range(*lo_us..=hi_us - len_us);
                out.extend([Value::Timestamp(start), Value::Timestamp(start + len_us)]);
            }
            ParamGen::Distinct { from, n } => {
                out.extend(rand::seq::index::sample(rng, from.len(), *n).into_iter().map(|i| from[i].clone()))
            }
        }
    }
}

impl ParamGen {
    /// Checks, before the run, that every value a draw can give binds to
    /// `types`: the types the server inferred for this generator's
    /// placeholders ([`ParamGen::arity`] of them). Ranges are tried at both
    /// ends and every constant and choice as it is, through the encoding the
    /// run uses, so a parameter the statement cannot take (a float for an
    /// int4, a range past an int2) stops the run before it starts instead of
    /// failing queries in it. The error gives the placeholder (0-based,
    /// among this generator's) and why.
    pub fn check_types(&self, types: &[Type]) -> Result<(), (usize, String)> {
        let values: Vec<Value> = match self {
            ParamGen::Const(v) => vec![v.clone()],
            ParamGen::IntRange { lo, hi } => vec![Value::Int(*lo), Value::Int(*hi)],
            ParamGen::FloatRange { lo, hi } => vec![Value::Float(*lo), Value::Float(*hi)],
            ParamGen::Choice(values) => values.clone(),
            ParamGen::TimeAgo { .. } => vec![Value::Timestamp(0)],
            ParamGen::TimeIn { lo_us, hi_us } | ParamGen::Window { lo_us, hi_us, .. } => {
                vec![Value::Timestamp(*lo_us), Value::Timestamp(*hi_us)]
            }
            ParamGen::Distinct { from, .. } => from.to_vec(),
        };
        let mut out = BytesMut::new();
        for (i, ty) in types.iter().enumerate() {
            for v in &values {
                out.clear();
                v.to_sql_checked(ty, &mut out).map_err(|e| (i, e.to_string()))?;
            }
        }
        Ok(())
    }
}

impl ParamGen {
    /// The text values a draw can give (constants, choices, distinct
    /// values): they travel in text format, for the server to parse as the
    /// placeholder's type, so only the server can check them before the run.
    pub fn texts(&self) -> Vec<&str> {
        let values: &[Value] = match self {
            ParamGen::Const(v) => std::slice::from_ref(v),
            ParamGen::Choice(values) => values,
            ParamGen::Distinct { from, .. } => from,
            _ => &[],
        };
        values
            .iter()
            .filter_map(|v| match v {
                Value::Text(s) => Some(s.as_str()),
                _ => None,
            })
            .collect()
    }
}

impl Value {
    /// SQL literal for the simple protocol (no bound parameters): numbers as
    /// is, text single-quoted with quotes doubled (`E''` is never needed as
    /// `standard_conforming_strings` is on since PostgreSQL 9.1), bool
    /// `true`/`false`, timestamp as `'...+00'::timestamptz`.
    ///
    /// Negative numbers are parenthesised: spliced after a minus sign,
    /// `a-$1` would otherwise become `a--5`, which starts a comment.
    pub fn to_sql_literal(&self) -> String {
        match self {
            Value::Int(i) if *i < 0 => format!("({i})"),
            Value::Int(i) => i.to_string(),
            Value::Float(f) if !f.is_finite() => format!("'{}'::float8", float_text(*f)),
            Value::Float(f) if f.is_sign_negative() => format!("({})", float_text(*f)),
            Value::Float(f) => float_text(*f),
            Value::Text(s) => quote(s),
            Value::Verbatim(s) => s.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Timestamp(us) => format!("{}::timestamptz", quote(&timestamp_text(*us))),
        }
    }

    /// The value as PostgreSQL's text input would read it.
    fn text_form(&self) -> String {
        match self {
            Value::Int(i) => i.to_string(),
            Value::Float(f) => float_text(*f),
            Value::Text(s) => s.clone(),
            Value::Verbatim(s) => s.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Timestamp(us) => timestamp_text(*us),
        }
    }

    /// Whether this value has a binary encoding for `ty` (else it travels in
    /// text format, or is refused).
    fn binary_for(&self, ty: &Type) -> bool {
        match self {
            Value::Int(_) => is_integer(ty) || is_float(ty),
            Value::Float(_) => is_float(ty),
            Value::Bool(_) => *ty == Type::BOOL,
            Value::Timestamp(_) => is_timestamp(ty),
            Value::Text(_) | Value::Verbatim(_) => false,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Value::Int(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Text(_) | Value::Verbatim(_) => "text",
            Value::Bool(_) => "a boolean",
            Value::Timestamp(_) => "a timestamp",
        }
    }
}

fn is_integer(ty: &Type) -> bool {
    matches!(*ty, Type::INT2 | Type::INT4 | Type::INT8 | Type::OID)
}

fn is_float(ty: &Type) -> bool {
    matches!(*ty, Type::FLOAT4 | Type::FLOAT8)
}

fn is_timestamp(ty: &Type) -> bool {
    matches!(*ty, Type::TIMESTAMPTZ | Type::TIMESTAMP)
}

/// Types whose values dbload encodes itself: a value of the wrong kind for
/// them (a float for an int4, say) is refused before it is sent, with a
/// message, rather than silently converted.
fn is_checked(ty: &Type) -> bool {
    is_integer(ty) || is_float(ty) || is_timestamp(ty) || *ty == Type::BOOL
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Shortest text that reads back to the same float, in PostgreSQL's spelling
/// of the special values. `{:?}` keeps the `.0` of integral values, so `3.0`
/// stays a float in SQL (`x / 3` and `x / 3.0` differ).
fn float_text(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        format!("{f:?}")
    }
}

/// `2024-05-01 12:00:00.000001+00`. Beyond chrono's range (±262,000 years,
/// far past PostgreSQL's own) the value can only mean ±infinity.
fn timestamp_text(us: i64) -> String {
    match chrono::DateTime::from_timestamp_micros(us) {
        Some(t) => t.format("%Y-%m-%d %H:%M:%S%.6f+00").to_string(),
        None if us < 0 => "-infinity".into(),
        None => "infinity".into(),
    }
}

type BoxError = Box<dyn Error + Sync + Send>;

fn int_in<T: TryFrom<i64>>(i: i64, ty: &Type, lo: i64, hi: i64) -> Result<T, BoxError> {
    T::try_from(i).map_err(|_| format!("value {i} is out of range for {ty} ({lo} to {hi})").into())
}

/// Binds a sampled value to a prepared statement's parameter, whatever type
/// the server inferred for it: a workload file cannot say which type `$1` is,
/// only the server knows (`device_id = $1` makes it an int4 or an oid).
///
/// Integers, floats, booleans and timestamps go in binary to the matching
/// numeric, bool and timestamp types; a value of the wrong kind for those
/// types is an error that says which. Text values, and any value for any
/// other type (`text`, `json`, `numeric`, `interval`, `date`, `uuid`, ...),
/// go in text format and the server parses them as it would a quoted literal.
/// (Refusing those types and asking for `$1::text::interval` in the query
/// was considered: sending the text form makes `$1::interval` with `1 hour`
/// just work, and a bad value still fails with the server's own message.)
///
/// Errors do not name the parameter: the caller adds which query and `$N`.
impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        if !self.binary_for(ty) {
            if is_checked(ty) && !matches!(self, Value::Text(_) | Value::Verbatim(_)) {
                let hint = if is_integer(ty) {
                    "use an integer param ({int: [lo, hi]} or a whole number)"
                } else if is_float(ty) {
                    "use a number"
                } else if is_timestamp(ty) {
                    "use {time_ago: 1h} or a quoted timestamp such as '2024-05-01 12:00:00+00'"
                } else {
                    "use true or false"
                };
                return Err(format!(
                    "cannot send {} ({}) as {ty}: {hint}, or cast the parameter in the query (e.g. `$1::text::{ty}`)",
                    self.to_sql_literal(),
                    self.kind(),
                )
                .into());
            }
            out.put_slice(self.text_form().as_bytes());
            return Ok(IsNull::No);
        }
        match (self, ty) {
            (Value::Int(i), &Type::INT2) => out.put_i16(int_in(*i, ty, i16::MIN.into(), i16::MAX.into())?),
            (Value::Int(i), &Type::INT4) => out.put_i32(int_in(*i, ty, i32::MIN.into(), i32::MAX.into())?),
            (Value::Int(i), &Type::INT8) => out.put_i64(*i),
            (Value::Int(i), &Type::OID) => out.put_u32(int_in(*i, ty, 0, u32::MAX.into())?),
            (Value::Int(i), &Type::FLOAT4) => out.put_f32(*i as f32),
            (Value::Int(i), _) => out.put_f64(*i as f64),
            (Value::Float(f), &Type::FLOAT4) => {
                let narrow = *f as f32;
                if f.is_finite() && !narrow.is_finite() {
                    return Err(format!("value {f} is out of range for float4; cast the parameter to float8").into());
                }
                out.put_f32(narrow)
            }
            (Value::Float(f), _) => out.put_f64(*f),
            (Value::Bool(b), _) => out.put_u8(u8::from(*b)),
            // Out of i64 range only near i64::MIN, which is -infinity anyway.
            (Value::Timestamp(us), _) => out.put_i64(us.checked_sub(PG_EPOCH_OFFSET_US).unwrap_or(i64::MIN)),
            (Value::Text(_) | Value::Verbatim(_), _) => unreachable!("text is never sent in binary"),
        }
        Ok(IsNull::No)
    }

    /// Every type is accepted here; `to_sql` decides, with a message.
    fn accepts(_: &Type) -> bool {
        true
    }

    fn encode_format(&self, ty: &Type) -> Format {
        if self.binary_for(ty) {
            Format::Binary
        } else {
            Format::Text
        }
    }

    to_sql_checked!();
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    fn rng(seed: u64) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(seed)
    }

    /// The values of one draw.
    fn draw(g: &ParamGen, r: &mut ChaCha8Rng) -> Vec<Value> {
        let mut out = Vec::new();
        g.draw(r, NOW, &mut out);
        assert_eq!(out.len(), g.arity(), "{g:?}");
        out
    }

    /// The value of a generator that draws one.
    fn one(g: &ParamGen, r: &mut ChaCha8Rng) -> Value {
        let [v] = draw(g, r).try_into().expect("one value");
        v
    }

    fn bytes(v: &Value, ty: &Type) -> Vec<u8> {
        let mut out = BytesMut::new();
        assert!(matches!(v.to_sql_checked(ty, &mut out).unwrap(), IsNull::No));
        out.to_vec()
    }

    fn refused(v: &Value, ty: &Type) -> String {
        match v.to_sql_checked(ty, &mut BytesMut::new()) {
            Ok(_) => panic!("{v:?} was sent as {ty}"),
            Err(e) => e.to_string(),
        }
    }

    const NOW: i64 = 1_714_564_800_000_000; // 2024-05-01 12:00:00 UTC

    #[test]
    fn samples_stay_in_range() {
        let mut r = rng(1);
        let (mut saw_lo, mut saw_hi) = (false, false);
        for _ in 0..2_000 {
            let Value::Int(i) = one(&ParamGen::IntRange { lo: 1, hi: 5 }, &mut r) else { panic!() };
            assert!((1..=5).contains(&i));
            saw_lo |= i == 1;
            saw_hi |= i == 5;
            let Value::Float(f) = one(&ParamGen::FloatRange { lo: -1.0, hi: 1.0 }, &mut r) else { panic!() };
            assert!((-1.0..1.0).contains(&f));
            let Value::Timestamp(t) = one(&ParamGen::TimeAgo { max_us: 3_600_000_000 }, &mut r) else { panic!() };
            assert!((NOW - 3_600_000_000..=NOW).contains(&t));
        }
        assert!(saw_lo && saw_hi, "both ends of an inclusive range are drawn");
        // Issue 13 item 2: a range wider than f64 can hold (rand panicked on it).
        for _ in 0..2_000 {
            let Value::Float(f) = one(&ParamGen::FloatRange { lo: -1e308, hi: 1e308 }, &mut r) else { panic!() };
            assert!(f.is_finite() && (-1e308..1e308).contains(&f), "{f}");
        }
        let choice = ParamGen::Choice(vec![Value::Text("a".into()), Value::Int(2)]);
        for _ in 0..100 {
            assert!(matches!(one(&choice, &mut r), Value::Text(_) | Value::Int(2)));
        }
        let c = ParamGen::Const(Value::Bool(true));
        assert_eq!(one(&c, &mut r), Value::Bool(true));
        assert_eq!(one(&ParamGen::TimeAgo { max_us: 0 }, &mut r), Value::Timestamp(NOW));
    }

    #[test]
    fn sampling_is_reproducible_with_a_seed() {
        let gens = [
            ParamGen::IntRange { lo: 0, hi: 1_000_000 },
            ParamGen::FloatRange { lo: 0.0, hi: 1.0 },
            ParamGen::Choice((0..50).map(Value::Int).collect()),
            ParamGen::TimeAgo { max_us: 86_400_000_000 },
            ParamGen::TimeIn { lo_us: 0, hi_us: NOW },
            ParamGen::Window { lo_us: 0, hi_us: NOW, len_us: 3_600_000_000 },
            ParamGen::Distinct { from: (0..50).map(Value::Int).collect(), n: 5 },
        ];
        let values = |seed| {
            let mut r = rng(seed);
            (0..100).flat_map(|_| gens.iter().flat_map(|g| draw(g, &mut r)).collect::<Vec<_>>()).collect::<Vec<_>>()
        };
        assert_eq!(values(7), values(7));
        assert_ne!(values(7), values(8));
    }

    /// TSBS's parameters: windows of their whole length inside the range
    /// (both extremes reachable), and hosts never named twice in one draw.
    #[test]
    fn windows_stay_inside_the_range_and_distinct_values_differ() {
        let mut r = rng(3);
        let (lo, hi, len) = (1_000, 1_010, 4);
        let window = ParamGen::Window { lo_us: lo, hi_us: hi, len_us: len };
        let mut starts = std::collections::BTreeSet::new();
        for _ in 0..2_000 {
            let [Value::Timestamp(start), Value::Timestamp(end)] = draw(&window, &mut r)[..] else { panic!() };
            assert!(start >= lo && end <= hi && end - start == len, "{start}..{end}");
            starts.insert(start);
            let Value::Timestamp(t) = one(&ParamGen::TimeIn { lo_us: lo, hi_us: hi }, &mut r) else { panic!() };
            assert!((lo..=hi).contains(&t));
        }
        assert_eq!(starts.into_iter().collect::<Vec<_>>(), (lo..=hi - len).collect::<Vec<_>>());
        let from: Arc<[Value]> = (0..8).map(|h| Value::Text(format!("host_{h}"))).collect();
        for n in [1, 5, 8] {
            let hosts = ParamGen::Distinct { from: from.clone(), n };
            for _ in 0..200 {
                let mut got = draw(&hosts, &mut r);
                assert!(got.iter().all(|v| from.contains(v)));
                got.sort_by_key(|v| v.to_sql_literal());
                got.dedup();
                assert_eq!(got.len(), n);
            }
        }
    }

    #[test]
    fn literals_are_escaped_and_typed() {
        assert_eq!(Value::Text("O'Brien".into()).to_sql_literal(), "'O''Brien'");
        assert_eq!(Value::Text(r"a\b".into()).to_sql_literal(), r"'a\b'");
        assert_eq!(Value::Int(42).to_sql_literal(), "42");
        assert_eq!(Value::Int(-5).to_sql_literal(), "(-5)");
        assert_eq!(Value::Float(3.0).to_sql_literal(), "3.0");
        assert_eq!(Value::Float(-0.25).to_sql_literal(), "(-0.25)");
        assert_eq!(Value::Float(f64::NAN).to_sql_literal(), "'NaN'::float8");
        assert_eq!(Value::Float(f64::NEG_INFINITY).to_sql_literal(), "'-Infinity'::float8");
        assert_eq!(Value::Bool(false).to_sql_literal(), "false");
        assert_eq!(Value::Timestamp(NOW + 1).to_sql_literal(), "'2024-05-01 12:00:00.000001+00'::timestamptz");
        assert_eq!(Value::Timestamp(i64::MAX).to_sql_literal(), "'infinity'::timestamptz");
    }

    #[test]
    fn binds_integers_in_the_inferred_width() {
        assert_eq!(bytes(&Value::Int(-2), &Type::INT4), (-2i32).to_be_bytes());
        assert_eq!(bytes(&Value::Int(1 << 40), &Type::INT8), (1i64 << 40).to_be_bytes());
        assert_eq!(bytes(&Value::Int(7), &Type::INT2), 7i16.to_be_bytes());
        assert_eq!(bytes(&Value::Int(4_000_000_000), &Type::OID), 4_000_000_000u32.to_be_bytes());
        assert_eq!(Value::Int(1).encode_format(&Type::INT4) as i16, Format::Binary as i16);
    }

    #[test]
    fn out_of_range_integers_say_which() {
        let e = refused(&Value::Int(40_000), &Type::INT2);
        assert!(e.contains("40000") && e.contains("int2") && e.contains("-32768 to 32767"), "{e}");
        let e = refused(&Value::Int(-1), &Type::OID);
        assert!(e.contains("-1") && e.contains("oid"), "{e}");
        let e = refused(&Value::Int(1 << 31), &Type::INT4);
        assert!(e.contains("2147483648") && e.contains("int4"), "{e}");
    }

    #[test]
    fn binds_floats_from_floats_and_integers() {
        assert_eq!(bytes(&Value::Float(2.5), &Type::FLOAT8), 2.5f64.to_be_bytes());
        assert_eq!(bytes(&Value::Int(3), &Type::FLOAT8), 3.0f64.to_be_bytes());
        assert_eq!(bytes(&Value::Float(2.5), &Type::FLOAT4), 2.5f32.to_be_bytes());
        assert!(refused(&Value::Float(1e300), &Type::FLOAT4).contains("float4"));
    }

    #[test]
    fn binds_text_as_is_for_text_and_json() {
        for ty in [Type::TEXT, Type::VARCHAR, Type::BPCHAR, Type::NAME, Type::JSON, Type::JSONB] {
            assert_eq!(bytes(&Value::Text("O'Brien é".into()), &ty), "O'Brien é".as_bytes());
            assert_eq!(Value::Text(String::new()).encode_format(&ty) as i16, Format::Text as i16);
        }
        // Any value reads as text: a device id compared with a text column.
        assert_eq!(bytes(&Value::Int(42), &Type::TEXT), b"42");
        assert_eq!(bytes(&Value::Float(0.5), &Type::VARCHAR), b"0.5");
        assert_eq!(bytes(&Value::Timestamp(NOW), &Type::TEXT), b"2024-05-01 12:00:00.000000+00");
    }

    #[test]
    fn binds_timestamps_as_microseconds_since_2000() {
        let ts = Value::Timestamp(PG_EPOCH_OFFSET_US + 1_500_000);
        assert_eq!(bytes(&ts, &Type::TIMESTAMPTZ), 1_500_000i64.to_be_bytes());
        assert_eq!(bytes(&ts, &Type::TIMESTAMP), 1_500_000i64.to_be_bytes());
        assert_eq!(bytes(&Value::Timestamp(0), &Type::TIMESTAMPTZ), (-PG_EPOCH_OFFSET_US).to_be_bytes());
    }

    #[test]
    fn binds_booleans() {
        assert_eq!(bytes(&Value::Bool(true), &Type::BOOL), [1]);
        assert_eq!(bytes(&Value::Bool(false), &Type::BOOL), [0]);
    }

    #[test]
    fn other_types_get_the_text_form_for_the_server_to_parse() {
        let text = Value::Text("1 hour".into());
        assert_eq!(bytes(&text, &Type::INTERVAL), b"1 hour");
        assert_eq!(text.encode_format(&Type::INTERVAL) as i16, Format::Text as i16);
        assert_eq!(bytes(&Value::Float(1.25), &Type::NUMERIC), b"1.25");
        assert_eq!(Value::Float(1.25).encode_format(&Type::NUMERIC) as i16, Format::Text as i16);
        // A quoted timestamp goes to a timestamptz parameter as text too.
        let quoted = Value::Text("2024-05-01 12:00:00+00".into());
        assert_eq!(bytes(&quoted, &Type::TIMESTAMPTZ), b"2024-05-01 12:00:00+00");
        assert_eq!(quoted.encode_format(&Type::TIMESTAMPTZ) as i16, Format::Text as i16);
    }

    #[test]
    fn wrong_kinds_for_checked_types_are_refused_with_a_cast_hint() {
        let e = refused(&Value::Float(3.5), &Type::INT4);
        assert!(
            e.contains("3.5") && e.contains("a float") && e.contains("int4") && e.contains("$1::text::int4"),
            "{e}"
        );
        let e = refused(&Value::Int(1), &Type::BOOL);
        assert!(e.contains("as bool") && e.contains("true or false"), "{e}");
        let e = refused(&Value::Int(1), &Type::TIMESTAMPTZ);
        assert!(e.contains("timestamptz") && e.contains("time_ago"), "{e}");
        let e = refused(&Value::Bool(true), &Type::FLOAT8);
        assert!(e.contains("float8"), "{e}");
    }

    /// Issue 29, item 7: the check before the run tries a range at both
    /// ends and names the placeholder, among the generator's, that refuses.
    #[test]
    fn types_a_draw_cannot_bind_to_are_found_before_the_run() {
        assert!(ParamGen::IntRange { lo: 1, hi: 32767 }.check_types(&[Type::INT2]).is_ok());
        let (i, why) = ParamGen::IntRange { lo: 1, hi: 32768 }.check_types(&[Type::INT2]).unwrap_err();
        assert!(i == 0 && why.contains("32768") && why.contains("int2"), "{why}");
        let window = ParamGen::Window { lo_us: 0, hi_us: 10, len_us: 1 };
        let (i, why) = window.check_types(&[Type::TIMESTAMPTZ, Type::INT4]).unwrap_err();
        assert!(i == 1 && why.contains("a timestamp") && why.contains("int4"), "{why}");
        assert!(
            ParamGen::Const(Value::Text("x".into())).check_types(&[Type::INT4]).is_ok(),
            "text: the server parses it"
        );
    }
}
