//! The `json` model (`insert-json`, cr8's command): rows read from JSON
//! input by one reader that every worker's producer shares (behind a
//! mutex: each takes a batch's worth of rows at a time), converted to the
//! text form of the table's column types and checked where that is cheap,
//! so a bad value is reported as `FILE:LINE: column "x": …` rather than
//! as a batch the database refused.
//!
//! Input: JSON lines, concatenated objects (a value may span lines), or
//! top-level arrays of objects, from files or stdin; gzip is recognised by
//! its magic bytes, whatever the file's name. The input is cut into values
//! in one pass that keeps only the current one (see the `split` module: memory and
//! time bounded, a value at most 64 MiB); a row's text is then read with
//! `serde_json`'s raw values and converted straight into the batch's column
//! buffers: no JSON tree is built per row.
//!
//! Keys are column names, case-sensitive. A key naming a generated column
//! is ignored (an export of the table has them); a missing key is NULL,
//! except for a column with a default (serial, identity, `now()`): a row
//! that names it sends its value, a row that does not leaves it to the
//! database. Each row decides for itself, whatever the rows before it
//! were: a batch holds rows that leave out the same columns, and a row
//! that leaves out others ends it and starts the next (see
//! [`Generator::fill`]), whose statement names only the columns it sends.
//!
//! Values are kept exactly: integers are read as integers (never through
//! f64), numbers for float and numeric columns are sent as the input's own
//! text, and the server converts them.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use anyhow::{Context, Result};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::catalog::{BindContext, Kind, TableColumn};
use super::{table, Batch, Schema};
use crate::error::usage;
use crate::yaml::{did_you_mean, suggest};

pub(crate) mod split;
use split::{Found, Splitter};

/// What to do with a row that cannot be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// Stop reading at the first bad row; the batches already read are written.
    Abort,
    /// Write the bad row to `--rejects` and go on.
    Skip,
}

/// The model: the shared input, and once bound, the columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub input: Shared,
    pub columns: Arc<Columns>,
}

/// The written columns and how keys find them.
#[derive(Debug, Default, PartialEq)]
pub struct Columns {
    list: Vec<JsonColumn>,
    /// The columns of `list` with a default, which a row may leave out.
    defaulted: Vec<usize>,
    /// Key → what it writes.
    by_key: HashMap<String, Target>,
    /// Every column name, for suggestions.
    names: Vec<String>,
    table: String,
    cratedb: bool,
    ignore_unknown: bool,
}

/// What a key of a row writes.
#[derive(Debug, PartialEq)]
enum Target {
    /// This column of `Columns::list`.
    Column(usize),
    /// Nothing: a generated column (an export of the table has them).
    Generated,
}

#[derive(Debug, PartialEq)]
struct JsonColumn {
    column: super::Column,
    kind: Kind,
    array: bool,
    not_null: bool,
    /// A row without its key leaves it to the database (not NULL).
    has_default: bool,
}

impl Spec {
    pub fn new(input: Input, on_error: OnError, rejects: Option<File>, ignore_unknown: bool) -> Spec {
        let state = State {
            reader: Reader::new(input),
            on_error,
            rejects: rejects.map(std::io::BufWriter::new),
            stats: Stats::default(),
            stop: false,
            held: None,
            seen: Vec::new(),
            scratch: String::new(),
        };
        let columns = Columns { ignore_unknown, ..Columns::default() };
        Spec { input: Shared(Arc::new(Mutex::new(state))), columns: Arc::new(columns) }
    }

    /// The input's progress: bytes read and the files' size, if known.
    pub fn input_progress(&self) -> Option<(Arc<AtomicU64>, u64)> {
        self.input.lock().reader.input.progress()
    }

    pub fn schema(&self) -> Schema {
        Schema {
            columns: self.columns.list.iter().map(|c| c.column.clone()).collect(),
            key: Vec::new(),
            metrics_per_row: 0,
        }
    }

    /// The table's columns that rows are written to. Refuses an empty input
    /// here, before anything is written.
    pub fn bind(&self, columns: &[TableColumn], ctx: &BindContext) -> Result<Spec> {
        {
            let mut state = self.input.lock();
            if state.reader.is_empty()? {
                return Err(usage(format!("no rows in input ({}): nothing to insert", state.reader.input.names())));
            }
        }
        let mut bound = Columns {
            table: ctx.table.to_string(),
            cratedb: ctx.cratedb,
            ignore_unknown: self.columns.ignore_unknown,
            names: columns.iter().map(|c| c.name.clone()).collect(),
            ..Columns::default()
        };
        for c in columns {
            let target = if c.generated { Target::Generated } else { Target::Column(bound.list.len()) };
            bound.by_key.insert(c.name.clone(), target);
            if !c.generated {
                if c.has_default {
                    bound.defaulted.push(bound.list.len());
                }
                let mut column = table::text_column(c, ctx);
                if ctx.cratedb {
                    // CrateDB takes the JSON values as they are and converts them.
                    column.ty = super::SqlType::Text { json: true };
                }
                bound.list.push(JsonColumn {
                    column,
                    kind: c.kind.clone(),
                    array: c.array,
                    not_null: c.not_null,
                    has_default: c.has_default,
                });
            }
        }
        if bound.list.is_empty() {
            return Err(usage(format!("table {} has no column to write: every column is generated", ctx.table)));
        }
        self.input.lock().seen = vec![false; bound.list.len()];
        Ok(Spec { input: self.input.clone(), columns: Arc::new(bound) })
    }

    /// A worker's view of the shared input.
    pub fn reader(&self) -> Generator {
        Generator { input: self.input.clone(), columns: self.columns.clone() }
    }
}

/// The input and what reading it found, shared by every worker.
#[derive(Clone)]
pub struct Shared(Arc<Mutex<State>>);

impl PartialEq for Shared {
    fn eq(&self, other: &Shared) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Shared(JSON input)")
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A producer that panicked leaves the state as consistent as any
        // row boundary: go on reading from it.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What reading found so far (all of it, once the run is over).
    pub fn stats(&self) -> Stats {
        let mut state = self.lock();
        if let Some(w) = &mut state.rejects {
            if let Err(e) = w.flush() {
                state.stats.write_error.get_or_insert(format!("writing --rejects: {e}"));
            }
        }
        state.stats.clone()
    }
}

/// What reading the input found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Rows read (JSON values), good and bad.
    pub rows_read: u64,
    /// Rows that could not be written (malformed, or a value that does not fit).
    pub rejected: u64,
    /// With `--on-error abort`: where and why reading stopped.
    pub abort: Option<String>,
    /// The rejects file could not be written.
    pub write_error: Option<String>,
}

struct State {
    reader: Reader,
    on_error: OnError,
    rejects: Option<std::io::BufWriter<File>>,
    stats: Stats,
    /// Reading stopped (`--on-error abort`).
    stop: bool,
    /// The line of a row read (it is the reader's current value) and held
    /// back for the next batch: it leaves out other columns than the rows
    /// of the batch it was read for.
    held: Option<u64>,
    /// Which columns the row being converted has named.
    seen: Vec<bool>,
    scratch: String,
}

/// A worker's reader: takes rows from the shared input into its batches.
pub struct Generator {
    input: Shared,
    columns: Arc<Columns>,
}

impl Generator {
    /// Reads up to `max` rows into `batch` (cleared); returns how many (0: the input is done).
    ///
    /// The rows of a batch leave out the same columns with a default (the
    /// first row's set becomes [`Batch::omitted`]): a row that leaves out
    /// others is held back, ending the batch, and starts the next one,
    /// whichever worker reads it. So input that changes its set of keys
    /// row after row is written in batches of one row; input grouped by
    /// its keys (an export, a generator's output) in full batches. One
    /// open batch per set was the other way: it would keep rows waiting
    /// while other sets are read, and take a batch buffer per set.
    pub fn fill(&mut self, batch: &mut Batch, max: usize) -> usize {
        let mut guard = self.input.lock();
        let state = &mut *guard;
        let mut rows = 0;
        while rows < max && !state.stop {
            let item = match state.held.take() {
                Some(line) => Item::Row { line },
                None => match state.reader.next() {
                    Ok(Some(item)) => {
                        state.stats.rows_read += 1;
                        item
                    }
                    Ok(None) => break,
                    Err(e) => {
                        state.stats.abort.get_or_insert(format!("{e:#}"));
                        state.stop = true;
                        break;
                    }
                },
            };
            let (text, line) = match item {
                Item::Row { line } => (state.reader.current(), line),
                Item::Bad { line, text, error } => {
                    state.reject(line, &text, &error);
                    continue;
                }
            };
            state.seen.iter_mut().for_each(|s| *s = false);
            let mut error = None;
            let seed = RowSeed {
                columns: &self.columns,
                batch,
                seen: &mut state.seen,
                error: &mut error,
                scratch: &mut state.scratch,
            };
            let mut de = serde_json::Deserializer::from_str(text);
            let converted = seed.deserialize(&mut de).map_err(|e| error.take().unwrap_or_else(|| serde_message(&e)));
            let converted = converted.and_then(|()| self.columns.missing(&state.seen, batch));
            let fits = rows == 0 || self.columns.left_out(&state.seen).eq(batch.omitted.iter().copied());
            match converted {
                Ok(()) if fits => {
                    if rows == 0 {
                        batch.omitted.extend(self.columns.left_out(&state.seen));
                    }
                    rows += 1;
                }
                Ok(()) => {
                    batch.truncate(rows);
                    state.held = Some(line);
                    break;
                }
                Err(why) => {
                    batch.truncate(rows);
                    let text = text.to_string();
                    state.reject(line, &text, &why);
                }
            }
        }
        rows
    }
}

impl State {
    /// Counts a bad row, writes it to `--rejects`, and with `--on-error
    /// abort` stops reading.
    fn reject(&mut self, line: u64, text: &str, why: &str) {
        self.stats.rejected += 1;
        let file = self.reader.input.current_name();
        if let Some(w) = &mut self.rejects {
            let record = serde_json::json!({ "file": file, "line": line, "error": why, "input": text.trim_end() });
            if let Err(e) = writeln!(w, "{record}") {
                self.stats.write_error.get_or_insert(format!("writing --rejects: {e}"));
            }
        }
        if self.on_error == OnError::Abort {
            self.stats.abort = Some(format!("{file}:{line}: {why}"));
            self.stop = true;
        }
    }
}

impl Columns {
    /// Fills the columns a row did not name with NULL, refusing NOT NULL
    /// ones; those with a default are left to the database.
    fn missing(&self, seen: &[bool], batch: &mut Batch) -> Result<(), String> {
        for (i, c) in self.list.iter().enumerate() {
            if !seen[i] && !c.has_default {
                if c.not_null {
                    return Err(format!(
                        "column \"{}\" is NOT NULL but the row has no key \"{}\"",
                        c.column.name, c.column.name
                    ));
                }
                batch.columns[i].end_value(true);
            }
        }
        Ok(())
    }

    /// The columns with a default that a row left out (ascending), for the
    /// database to fill in.
    fn left_out<'a>(&'a self, seen: &'a [bool]) -> impl Iterator<Item = usize> + 'a {
        self.defaulted.iter().copied().filter(|&i| !seen[i])
    }

    fn unknown(&self, key: &str) -> String {
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        format!(
            "key \"{key}\" is not a column of table {}{} (keys are column names, case-sensitive; --ignore-unknown drops such keys)",
            self.table,
            did_you_mean(suggest(key, &names))
        )
    }
}

/// serde_json's message without its position (which is within the row, not the file).
fn serde_message(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rsplit_once(" at line ") {
        Some((msg, _)) => msg.to_string(),
        None => s,
    }
}

/// Deserializes one row (a JSON object) into the batch's columns.
struct RowSeed<'a> {
    columns: &'a Columns,
    batch: &'a mut Batch,
    seen: &'a mut [bool],
    /// Our own message, when a value does not fit its column.
    error: &'a mut Option<String>,
    scratch: &'a mut String,
}

impl<'de> DeserializeSeed<'de> for RowSeed<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RowSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object (one row: column name to value)")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        while let Some(Key(key)) = map.next_key()? {
            let at = match self.columns.by_key.get(key.as_ref()) {
                Some(Target::Column(i)) => *i,
                Some(Target::Generated) => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
                None if self.columns.ignore_unknown => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
                None => {
                    let msg = self.columns.unknown(&key);
                    return Err(self.fail(msg));
                }
            };
            if std::mem::replace(&mut self.seen[at], true) {
                return Err(self.fail(format!("key \"{key}\" appears twice")));
            }
            let raw: &RawValue = map.next_value()?;
            let c = &self.columns.list[at];
            let values = &mut self.batch.columns[at];
            let converted = if self.columns.cratedb {
                values.text_mut().push_str(raw.get());
                Ok(raw.get() == "null")
            } else {
                convert(raw.get(), &c.kind, c.array, values.text_mut(), self.scratch)
            };
            let why = match converted {
                Ok(true) if c.not_null => "value null, but the column is NOT NULL".to_string(),
                Ok(null) => {
                    values.end_value(null);
                    continue;
                }
                Err(why) => why,
            };
            let msg = format!("column \"{}\": {why}", c.column.name);
            return Err(self.fail(msg));
        }
        Ok(())
    }
}

impl RowSeed<'_> {
    /// Keeps our message aside (serde_json would add a position within the row).
    fn fail<E: de::Error>(&mut self, msg: String) -> E {
        *self.error = Some(msg);
        E::custom("bad value")
    }
}

/// A key, borrowed from the input unless it has escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_str(V)
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
pub(crate) fn convert(
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
        super::fake::quote_element(scratch, out);
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

/// Where the rows come from: files in order (`-` is stdin), each plain or
/// gzip, opened up front so a missing file is refused before anything runs.
pub struct Input {
    pending: VecDeque<(String, Box<dyn BufRead + Send>)>,
    current: Option<(String, Box<dyn BufRead + Send>)>,
    all: Vec<String>,
    /// Bytes read from the files so far (as stored: gzip compressed).
    read: Arc<AtomicU64>,
    /// The files' sizes together; none when stdin or a stream is read.
    size: Option<u64>,
    /// Each input's name and identity (device, inode), where it has one.
    ids: Vec<(String, (u64, u64))>,
}

impl Input {
    /// Opens `files` (none: stdin).
    pub fn open(files: &[String]) -> Result<Input> {
        let files: Vec<String> = if files.is_empty() { vec!["-".into()] } else { files.to_vec() };
        let mut pending = VecDeque::new();
        let read = Arc::new(AtomicU64::new(0));
        let mut size = Some(0);
        let mut ids = Vec::new();
        for f in &files {
            let raw: Box<dyn Read + Send> = if f == "-" {
                size = None;
                // What stdin was redirected from, if a file.
                ids.extend(identity(Path::new("/dev/stdin")).map(|id| ("stdin".to_string(), id)));
                Box::new(std::io::stdin())
            } else {
                let file = File::open(f).map_err(|e| {
                    usage(format!("{f}: cannot open it: {e}; give a readable JSON file, or - for stdin"))
                })?;
                let meta = file.metadata().ok();
                ids.extend(meta.as_ref().map(|m| (f.clone(), (m.dev(), m.ino()))));
                let len = meta.filter(|m| m.is_file()).map(|m| m.len());
                size = size.zip(len).map(|(a, b)| a + b);
                Box::new(Counted { inner: file, read: read.clone() })
            };
            let name = if f == "-" { "stdin".to_string() } else { f.clone() };
            let reader =
                gunzip_if_gzip(BufReader::with_capacity(1 << 16, raw)).with_context(|| format!("reading {name}"))?;
            pending.push_back((name, reader));
        }
        let all = pending.iter().map(|(n, _)| n.clone()).collect();
        Ok(Input { pending, current: None, all, read, size, ids })
    }

    /// The input that `path` is (the same file by device and inode, whatever
    /// the path's spelling or symlinks), if any: a file written while it is
    /// read loses its rows.
    pub fn same_file_as(&self, path: &Path) -> Option<&str> {
        let id = identity(path)?;
        self.ids.iter().find(|(_, i)| *i == id).map(|(name, _)| name.as_str())
    }

    /// Input from one reader of JSON text (not gzip), named `name` in messages.
    pub fn from_reader(name: &str, reader: Box<dyn BufRead + Send>) -> Input {
        Input {
            pending: VecDeque::from([(name.to_string(), reader)]),
            current: None,
            all: vec![name.to_string()],
            read: Arc::default(),
            size: None,
            ids: Vec::new(),
        }
    }

    /// For the progress bar's ETA: the bytes read so far and the files'
    /// size; none when the size is unknown (stdin, a stream).
    pub fn progress(&self) -> Option<(Arc<AtomicU64>, u64)> {
        self.size.map(|size| (self.read.clone(), size))
    }

    /// Input from memory (tests).
    pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Result<Input> {
        Ok(Input::from_reader(name, gunzip_if_gzip(BufReader::new(std::io::Cursor::new(bytes)))?))
    }

    fn names(&self) -> String {
        self.all.join(", ")
    }

    fn current_name(&self) -> &str {
        self.current.as_ref().map_or("input", |(n, _)| n.as_str())
    }

    /// Opens the next file; false when there is none.
    fn advance(&mut self) -> bool {
        self.current = self.pending.pop_front();
        self.current.is_some()
    }
}

/// A file's device and inode (following symlinks); none if it does not exist.
fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// A file whose bytes read are counted, for the progress bar.
struct Counted<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Wraps gzip input in a decoder, recognised by the magic bytes 1f 8b.
fn gunzip_if_gzip<R: BufRead + Send + 'static>(mut r: R) -> std::io::Result<Box<dyn BufRead + Send>> {
    let head = r.fill_buf()?;
    if head.starts_with(&[0x1f, 0x8b]) {
        Ok(Box::new(BufReader::with_capacity(1 << 16, flate2::bufread::MultiGzDecoder::new(r))))
    } else {
        Ok(Box::new(r))
    }
}

/// What the reader found next.
enum Item {
    /// A value, now [`Reader::current`], starting on `line`.
    Row { line: u64 },
    /// Text that is not JSON, up to the end of its line.
    Bad { line: u64, text: String, error: String },
}

/// The input cut into values (see the `split` module), each checked to be UTF-8.
struct Reader {
    input: Input,
    split: Splitter,
    /// The value last returned; its buffer goes back to `split` on the next call.
    text: String,
    /// The value [`Reader::is_empty`] read, not yet returned.
    peeked: Option<Item>,
    started: bool,
}

impl Reader {
    fn new(input: Input) -> Reader {
        Reader::with_limit(input, split::MAX_VALUE)
    }

    fn with_limit(input: Input, limit: usize) -> Reader {
        Reader { input, split: Splitter::new(limit), text: String::new(), peeked: None, started: false }
    }

    fn current(&self) -> &str {
        &self.text
    }

    /// Whether the input holds no value at all (read ahead by one value).
    fn is_empty(&mut self) -> Result<bool> {
        if self.peeked.is_none() {
            self.peeked = self.read()?;
        }
        Ok(self.peeked.is_none())
    }

    /// Opens the next file (skipping a UTF-8 byte order mark); false when there is none.
    fn next_file(&mut self) -> Result<bool> {
        if !self.input.advance() {
            return Ok(false);
        }
        self.split.new_file();
        if let Some((name, r)) = &mut self.input.current {
            if r.fill_buf().with_context(|| format!("reading {name}"))?.starts_with(b"\xef\xbb\xbf") {
                r.consume(3);
            }
        }
        Ok(true)
    }

    fn next(&mut self) -> Result<Option<Item>> {
        match self.peeked.take() {
            Some(item) => Ok(Some(item)),
            None => self.read(),
        }
    }

    /// The next value of the input.
    fn read(&mut self) -> Result<Option<Item>> {
        // The last value's buffer, for the next one.
        self.split.buf = std::mem::take(&mut self.text).into_bytes();
        if !self.started {
            self.started = true;
            if !self.next_file()? {
                return Ok(None);
            }
        }
        loop {
            let Some((name, r)) = &mut self.input.current else { return Ok(None) };
            let chunk = r.fill_buf().with_context(|| format!("reading {name}"))?;
            let found = if chunk.is_empty() {
                match self.split.end_of_file() {
                    Some(found) => found,
                    None if self.next_file()? => continue,
                    None => return Ok(None),
                }
            } else {
                let (used, found) = self.split.feed(chunk);
                r.consume(used);
                match found {
                    Some(found) => found,
                    None => continue,
                }
            };
            return self.item(found).map(Some);
        }
    }

    /// What the splitter found, as an item; a value too long ends the reading.
    fn item(&mut self, found: Found) -> Result<Item> {
        let lossy = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        Ok(match found {
            Found::Value { line } => match String::from_utf8(std::mem::take(&mut self.split.buf)) {
                Ok(text) => {
                    self.text = text;
                    Item::Row { line }
                }
                Err(e) => Item::Bad { line, text: lossy(e.as_bytes()), error: "not valid UTF-8".into() },
            },
            Found::Bad { line, error } => Item::Bad { line, text: lossy(&self.split.buf), error },
            Found::TooLong { line } => {
                return Err(usage(format!(
                    "{}:{line}: a value longer than {} MiB, the most one row may hold (a bracket or quote never closed? not JSON?); reading stopped",
                    self.input.current_name(),
                    split::MAX_VALUE >> 20
                )))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;
    use crate::dialect::TableName;
    use crate::model::{ModelSpec, Values};

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

    fn column(name: &str, kind: Kind, not_null: bool) -> TableColumn {
        TableColumn {
            name: name.into(),
            type_sql: "t".into(),
            kind,
            array: false,
            not_null,
            has_default: false,
            generated: false,
            unique: false,
            cast: "\"pg_catalog\".\"text\"".into(),
        }
    }

    /// Reads all of `input` with `workers` batches of `batch` rows; returns the
    /// rows (`a|b`, NULL as `-`), the stats and the rejects file.
    fn read(input: &[u8], on_error: OnError) -> Result<(Vec<String>, Stats, String)> {
        let rejects = tempfile::NamedTempFile::new()?;
        let spec = Spec::new(Input::from_bytes("in.json", input.to_vec())?, on_error, Some(rejects.reopen()?), false);
        let mut generated = column("g", Kind::Int { min: 0, max: 9 }, false);
        generated.generated = true;
        let columns = [
            column("a", Kind::from_pg("int4", -1), true),
            column("b", Kind::Text { max_chars: None }, false),
            generated,
        ];
        let ctx = BindContext { table: TableName::parse("t").unwrap(), cratedb: false, rows: None, workers: 2 };
        let model = ModelSpec::Json(spec.clone()).bind(&columns, &ctx)?;
        let mut rows = Vec::new();
        let mut batch = Batch::new(&model.schema());
        let mut gens = [model.generator(1, 0, 0, u64::MAX), model.generator(1, 1, 0, u64::MAX)];
        'outer: loop {
            for g in &mut gens {
                if !g.next_batch(&mut batch, 2) {
                    break 'outer;
                }
                for i in 0..batch.len {
                    let v = |c: usize| {
                        if batch.columns[c].is_null(i) {
                            "-".to_string()
                        } else {
                            batch.columns[c].json(i).to_string()
                        }
                    };
                    rows.push(format!("{}|{}", v(0), v(1)));
                }
            }
        }
        let stats = spec.input.stats();
        Ok((rows, stats, std::fs::read_to_string(rejects.path())?))
    }

    #[test]
    fn lines_arrays_and_concatenated_objects() {
        let want = vec!["1|x".to_string(), "2|-".into(), "3|y".into()];
        let lines = b"{\"a\": 1, \"b\": \"x\"}\n\n{\"a\": 2, \"g\": 5}\n{\"b\": \"y\", \"a\": 3}\n";
        let array = b"[\n  {\"a\": 1, \"b\": \"x\"},\n  {\"a\": 2},\n  {\"a\": 3, \"b\": \"y\"}\n]\n";
        let pretty = b"{\n  \"a\": 1,\n  \"b\": \"x\"\n}\n{\n  \"a\": 2\n}{\"a\": 3, \"b\": \"y\"}";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(lines).unwrap();
        for input in [&lines[..], array, pretty, &gz.finish().unwrap()] {
            let (rows, stats, _) = read(input, OnError::Abort).unwrap();
            assert_eq!(rows, want, "{}", String::from_utf8_lossy(input));
            assert_eq!((stats.rows_read, stats.rejected, stats.abort), (3, 0, None));
        }
    }

    #[test]
    fn bad_rows_are_named_by_line_and_skipped_or_stop_the_reading() {
        // Line 2 is cut short after a key; line 4's object is not closed.
        let input =
            b"{\"a\": 1}\n{\"a\": 2, \"b\": \n{\"a\": \"x\"}\n{\"a\": 4, \"c\": 1\n{\"b\": \"no a\"}\n{\"a\": 6}\n";
        let (rows, stats, rejects) = read(input, OnError::Skip).unwrap();
        assert_eq!(rows, ["1|-", "6|-"]);
        assert_eq!((stats.rows_read, stats.rejected), (6, 4));
        let rejects: Vec<serde_json::Value> = rejects.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let lines: Vec<u64> = rejects.iter().map(|r| r["line"].as_u64().unwrap()).collect();
        assert_eq!(lines, [2, 3, 4, 5]);
        assert_eq!(rejects[0]["input"], "{\"a\": 2, \"b\":");
        assert_eq!(rejects[1]["input"], "{\"a\": \"x\"}");
        assert_eq!(rejects[1]["error"], "column \"a\": value \"x\" is not an integer");
        assert_eq!(rejects[2]["input"], "{\"a\": 4, \"c\": 1");
        assert_eq!(rejects[2]["error"], "expected `,` or `}`, found `{`");
        assert!(rejects[3]["error"].as_str().unwrap().contains("NOT NULL"), "{}", rejects[3]);

        let (rows, stats, _) = read(input, OnError::Abort).unwrap();
        assert_eq!(rows, ["1|-"]);
        assert_eq!((stats.rows_read, stats.rejected), (2, 1));
        assert!(stats.abort.as_deref().unwrap().starts_with("in.json:2: "), "{:?}", stats.abort);
    }

    /// Issue 13 item 2: a lone surrogate (`"\ud800"`) panicked the producer;
    /// it is a rejected row with its line. A syntax error mid-line rejects
    /// the rest of that line; a byte order mark is skipped.
    #[test]
    fn lone_surrogates_and_garbage_are_rejected_rows() {
        let input = "\u{feff}{\"a\": 1, \"b\": \"\\ud800\"}\n{\"a\": 2}\n{\"a\": 3} x y\n\0\0\n{\"a\": 5, \"b\": \"\\ud83d\\ude00\"}\n";
        let (rows, stats, rejects) = read(input.as_bytes(), OnError::Skip).unwrap();
        assert_eq!(rows, ["2|-", "3|-", "5|😀"]);
        assert_eq!((stats.rows_read, stats.rejected), (6, 3));
        let rejects: Vec<serde_json::Value> = rejects.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let lines: Vec<u64> = rejects.iter().map(|r| r["line"].as_u64().unwrap()).collect();
        assert_eq!(lines, [1, 3, 4]);
        // Bad rows before the first object are rejected in order too.
        let (rows, stats, _) = read(b"x\n42\n{\"a\": 3}\n", OnError::Skip).unwrap();
        assert_eq!((rows, stats.rows_read, stats.rejected), (vec!["3|-".to_string()], 3, 2));
        assert!(
            rejects[0]["error"].as_str().unwrap().contains("column \"b\": value \"\\ud800\" is not text"),
            "{}",
            rejects[0]
        );
        assert_eq!(rejects[1]["input"], "x y");
        assert_eq!(rejects[2]["error"], "expected a JSON value, found byte 0x00");
    }

    /// Issue 14 item 3: a value longer than the limit stops the reading with
    /// its file and line (`/dev/zero` aborted the process, out of memory).
    #[test]
    fn a_value_over_the_limit_stops_the_reading_with_its_line() {
        let long = format!("{{\"a\": 1}}\n\n{{\"b\": \"{}\"}}\n", "x".repeat(100));
        let mut r = Reader::with_limit(Input::from_bytes("in.json", long.into_bytes()).unwrap(), 64);
        assert!(matches!(r.next(), Ok(Some(Item::Row { line: 1 }))));
        let e = r.next().err().expect("refused").to_string();
        assert!(e.starts_with("in.json:3: a value longer than 64 MiB"), "{e}");
        let mut r = Reader::with_limit(Input::open(&["/dev/zero".into()]).unwrap(), 1 << 20);
        let e = r.next().err().expect("refused").to_string();
        assert!(e.starts_with("/dev/zero:1: a value longer than"), "{e}");
        assert!(r.split.buf.len() <= (1 << 20) + (64 << 10), "read {} bytes", r.split.buf.len());
    }

    /// Issue 14 item 3: a one-line top-level array is read element by
    /// element: what the reader holds stays the size of one row (it held the
    /// whole line: a 96 MB array peaked at 217 MB).
    #[test]
    fn a_top_level_array_is_streamed() {
        struct Array(u64);
        impl Read for Array {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let text = match self.0 {
                    0 => "[".to_string(),
                    200_000 => "{\"a\": 200000}]".to_string(),
                    n if n > 200_000 => return Ok(0),
                    n => format!("{{\"a\": {n}, \"b\": \"row {n}\"}},"),
                };
                self.0 += 1;
                buf[..text.len()].copy_from_slice(text.as_bytes());
                Ok(text.len())
            }
        }
        let input = Input::from_reader("big.json", Box::new(BufReader::new(Array(0))));
        let mut r = Reader::new(input);
        let (mut rows, mut held) = (0u64, 0);
        while let Some(item) = r.next().unwrap() {
            assert!(matches!(item, Item::Row { .. }));
            rows += 1;
            held = held.max(r.text.capacity() + r.split.buf.capacity());
        }
        assert_eq!(rows, 200_000);
        assert!(held < 1024, "the reader held {held} bytes");
        assert!(r.split.work <= 2 * 6_000_000, "{} bytes looked at", r.split.work);
    }

    #[test]
    fn files_report_their_progress_in_bytes_read() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.json");
        std::fs::write(&plain, "{\"a\": 1}\n{\"a\": 2}\n").unwrap();
        let gz = dir.path().join("b.json.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"{\"a\": 3}\n").unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        let files = [plain.display().to_string(), gz.display().to_string()];
        let size: u64 = files.iter().map(|f| std::fs::metadata(f).unwrap().len()).sum();
        let mut input = Input::open(&files).unwrap();
        let (read, total) = input.progress().expect("files have a size");
        assert_eq!(total, size);
        let mut lines = Vec::new();
        while input.advance() {
            input.current.as_mut().unwrap().1.read_to_end(&mut lines).unwrap();
        }
        assert_eq!(String::from_utf8(lines).unwrap().lines().count(), 3);
        assert_eq!(read.load(Ordering::Relaxed), size, "every byte of both files, the gzip one as stored");
        assert!(Input::open(&["-".into()]).unwrap().progress().is_none(), "stdin has no size");
    }

    /// Issue 14 item 3: a pretty-printed file (a top-level array of a few
    /// thousand objects over many lines each) took time quadratic in its size.
    #[test]
    fn pretty_printed_input_is_read_in_linear_time() {
        let mut rows: Vec<serde_json::Value> =
            (0..4000).map(|i| serde_json::json!({"a": i, "b": format!("row {i}")})).collect();
        // And one row of 20,000 lines.
        rows.push(serde_json::json!({"a": 4000, "b": (0..20_000).collect::<Vec<u32>>()}));
        let started = std::time::Instant::now();
        let (read_rows, stats, _) =
            read(serde_json::to_string_pretty(&rows).unwrap().as_bytes(), OnError::Abort).unwrap();
        assert_eq!((read_rows.len(), stats.rejected), (4001, 0));
        assert_eq!(read_rows[3999], "3999|row 3999");
        let pretty = serde_json::to_string_pretty(&rows).unwrap();
        let mut r = Reader::new(Input::from_bytes("pretty.json", pretty.clone().into_bytes()).unwrap());
        while r.next().unwrap().is_some() {}
        assert!(r.split.work <= 2 * pretty.len() as u64, "{} bytes looked at for {}", r.split.work, pretty.len());
        let took = started.elapsed();
        assert!(took < std::time::Duration::from_secs(5), "4,001 pretty rows took {took:?}");
    }

    /// Issue 13 item 3: a row's columns do not depend on the rows before it.
    /// A batch holds rows that leave out the same columns with a default
    /// (and sends only the others); a row that leaves out others ends it and
    /// starts the next batch, whichever worker reads on. A bad first row
    /// that named `id` decides nothing.
    #[test]
    fn a_batch_ends_where_rows_leave_out_other_default_columns() {
        let input = concat!(
            "x\n{\"id\": \"bad\", \"v\": 0}\n{\"v\": 1}\n{\"v\": 2}\n{\"id\": 3, \"v\": 3}\n",
            "{\"id\": 4, \"v\": 4, \"at\": \"2024-01-01\"}\n{\"v\": 5, \"at\": null}\n{\"v\": 6}\n{\"v\": 7}\n"
        );
        let spec = Spec::new(Input::from_bytes("in.json", input.into()).unwrap(), OnError::Skip, None, false);
        let defaulted = |name, kind| TableColumn { has_default: true, ..column(name, kind, true) };
        let columns = [
            defaulted("id", Kind::from_pg("int8", -1)),
            column("v", Kind::from_pg("int4", -1), true),
            TableColumn { not_null: false, ..defaulted("at", Kind::Timestamptz) },
        ];
        let ctx = BindContext { table: TableName::parse("t").unwrap(), cratedb: false, rows: None, workers: 2 };
        let model = ModelSpec::Json(spec.clone()).bind(&columns, &ctx).unwrap();
        assert_eq!(model.schema().columns.len(), 3, "every column that is not generated may be sent");
        let mut batch = Batch::new(&model.schema());
        let mut gens = [model.generator(1, 0, 0, u64::MAX), model.generator(1, 1, 0, u64::MAX)];
        let mut batches = Vec::new();
        while gens[batches.len() % 2].next_batch(&mut batch, 10) {
            let rows = (0..batch.len).map(|i| {
                let value = |v: &Values| if v.is_null(i) { "-".to_string() } else { v.json(i).to_string() };
                batch.sent().map(value).collect::<Vec<_>>().join(",")
            });
            batches.push(format!("{:?} {}", batch.omitted, rows.collect::<Vec<_>>().join(" ")));
        }
        assert_eq!(batches, ["[0, 2] 1 2", "[2] 3,3", "[] 4,4,2024-01-01", "[0] 5,-", "[0, 2] 6 7"]);
        let stats = spec.input.stats();
        assert_eq!((stats.rows_read, stats.rejected), (9, 2), "a row held back is read once");
    }

    #[test]
    fn empty_input_is_refused_before_anything_runs() {
        let e = read(b"  \n\n", OnError::Abort).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("no rows in input (in.json)"), "{e}");
    }
}
