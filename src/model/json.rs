//! The `json` model (`insert-json`, cr8's command): rows read from JSON
//! input by one reader that every worker's producer shares (behind a
//! mutex: each takes a batch's worth of rows at a time), converted to the
//! text form of the table's column types and checked where that is cheap,
//! so a bad value is reported as `FILE:LINE: column "x": …` rather than
//! as a batch the database refused.
//!
//! Input: JSON lines, concatenated objects (a value may span lines), or
//! top-level arrays of objects, from an [`Input`] (files, stdin, gzip: see
//! `crate::input`; this model opens none). The input is cut into values
//! in one pass that keeps only the current one (the `reader` and `split`
//! modules: memory and time bounded, a value at most 64 MiB); a row's text
//! is then read with `serde_json`'s raw values and converted straight into
//! the batch's column buffers (the `convert` module): no JSON tree is built
//! per row.
//!
//! Keys are column names, case-sensitive. A key naming a generated column
//! is ignored (an export of the table has them); a missing key is NULL,
//! except for a column with a default (serial, identity, `now()`): a row
//! that names it sends its value, a row that does not leaves it to the
//! database. Each row decides for itself, whatever the rows before it
//! were: a batch holds rows that leave out the same columns, and a row
//! that leaves out others ends it and starts the next (see
//! [`Generator::fill`]), whose statement names only the columns it sends.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::io::{BufWriter, Write};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};

use anyhow::Result;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::catalog::{BindContext, Kind, TableColumn};
use super::{table, Batch, Schema};
use crate::error::usage;
use crate::hint::{did_you_mean, suggest};
use crate::input::{Input, Stats};

mod convert;
mod reader;
pub(crate) mod split;
use convert::{convert, serde_message};
use reader::{Item, Reader};

/// Where `--rejects` rows go: the file the configuration created (this
/// model opens none), or any writer in tests.
pub type RejectsOut = Box<dyn Write + Send>;

/// What to do with a row that cannot be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
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
    pub fn new(input: Input, on_error: OnError, rejects: Option<RejectsOut>, ignore_unknown: bool) -> Spec {
        let state = State {
            reader: Reader::new(input),
            on_error,
            rejects: rejects.map(BufWriter::new),
            stats: Stats::default(),
            stop: false,
            held: None,
            seen: Vec::new(),
            scratch: String::new(),
        };
        let columns = Columns { ignore_unknown, ..Columns::default() };
        Spec { input: Shared(Arc::new(Mutex::new(state))), columns: Arc::new(columns) }
    }

    /// Starts the input again from its first row, for another run of the
    /// same rows (`--runs`): the files opened again, what reading found so
    /// far forgotten (a run reports its own). Rejects keep going to the
    /// same `--rejects` file, after the earlier runs'.
    pub fn read_again(&self) -> Result<()> {
        let mut state = self.input.lock();
        let input = state.reader.input.reopen()?;
        state.reader = Reader::new(input);
        state.stats = Stats::default();
        state.stop = false;
        state.held = None;
        state.seen.iter_mut().for_each(|s| *s = false);
        Ok(())
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

struct State {
    reader: Reader,
    on_error: OnError,
    rejects: Option<BufWriter<RejectsOut>>,
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
                        state.stats.read_error.get_or_insert(format!("{e:#}"));
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

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;
    use crate::ident::TableName;
    use crate::model::{ModelSpec, Values};

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
            primary_key: false,
            cast: "\"pg_catalog\".\"text\"".into(),
            type_name: "text".into(),
            type_oid: None,
            always_identity: false,
        }
    }

    /// Reads all of `input` with `workers` batches of `batch` rows; returns the
    /// rows (`a|b`, NULL as `-`), the stats and the rejects file.
    fn read(input: &[u8], on_error: OnError) -> Result<(Vec<String>, Stats, String)> {
        let rejects = tempfile::NamedTempFile::new()?;
        let spec = Spec::new(
            Input::from_bytes("in.json", input.to_vec())?,
            on_error,
            Some(Box::new(rejects.reopen()?)),
            false,
        );
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
