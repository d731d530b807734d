//! TimescaleDB: PostgreSQL's table made a hypertable partitioned by time.
//!
//! Uses the dimension API of TimescaleDB 2.13 and later
//! (`create_hypertable(relation, by_range(column, interval))`): the older
//! positional form is deprecated, and TSBS broke on arguments that 2.x
//! removed. Unique indexes must include the time column; the model's key
//! index does (series, time).

use anyhow::Result;

use super::{literal, postgres, TableOptions, DEFAULT_CHUNK_INTERVAL_S};

use crate::error::usage;
use crate::ident::{quote_ident, TableName};
use crate::model::Schema;

pub(super) fn check(o: &TableOptions) -> Result<()> {
    if o.no_hypertables && o.chunk_interval.is_some() {
        return Err(usage("--chunk-interval sets the hypertable chunk width; it conflicts with --no-hypertables"));
    }
    if o.compress && o.no_hypertables {
        return Err(usage("--compress compresses a hypertable's chunks; it conflicts with --no-hypertables"));
    }
    if o.unlogged && !o.no_hypertables {
        return Err(usage("--unlogged: TimescaleDB cannot make a hypertable unlogged; add --no-hypertables for an unlogged plain table"));
    }
    Ok(())
}

/// The time column: the key's last column, unquoted for `by_range`.
fn time_column(schema: &Schema) -> &str {
    let key = schema.key.last().expect("a time column");
    let c = schema.columns.iter().find(|c| crate::ident::quote_ident(&c.name) == *key);
    c.expect("the time key is a plain column").name.as_str()
}

/// The plain table, made a hypertable before its indexes are created (so
/// they are created on every chunk); TimescaleDB's default time index is
/// skipped because the model creates its own.
pub fn create_table(table: &TableName, schema: &Schema, o: &TableOptions) -> Vec<String> {
    let mut ddl = vec![postgres::create_plain(table, schema, o.unlogged)];
    if !o.no_hypertables {
        let interval = o.chunk_interval.unwrap_or(DEFAULT_CHUNK_INTERVAL_S);
        ddl.push(format!(
            "SELECT create_hypertable({}, by_range({}, INTERVAL '{interval} seconds'), create_default_indexes => false)",
            literal(&table.sql()),
            literal(time_column(schema)),
        ));
    }
    ddl.extend(postgres::indexes(table, schema));
    ddl
}

/// The time slices of hypertable `$1` (its quoted name), in time order:
/// the primary dimension's column and each slice's start as text, which
/// an untyped literal turns back into the column's type (timestamptz,
/// timestamp, date or an integer) exactly. Chunks of other dimensions
/// that share a slice are one row. No row for a plain table or an empty
/// hypertable.
pub const TIME_SLICES: &str = "\
SELECT primary_dimension::text, coalesce(range_start::text, range_start_integer::text)
FROM timescaledb_information.chunks
WHERE format('%I.%I', hypertable_schema, hypertable_name)::regclass = to_regclass($1)
GROUP BY primary_dimension, range_start, range_start_integer
ORDER BY range_start, range_start_integer";

/// One SELECT per worker, covering hypertable `table` together exactly
/// once: its time slices (`starts`, from [`TIME_SLICES`]) split into
/// runs of about as many slices each, one run per worker, as a range of
/// `column`. A compressed chunk has no `ctid` to split by block ranges
/// (TimescaleDB refuses the condition), whereas a time range lets each
/// worker's scan exclude the other workers' chunks. The first range has no
/// lower bound and the last no upper bound, so rows of chunks made since
/// are read too. `starts` is not empty.
pub fn time_selects(table: &TableName, column: &str, starts: &[String], workers: u32) -> Vec<String> {
    let (n, slices) = (workers as usize, starts.len());
    let column = quote_ident(column);
    let cut = |k: usize| literal(&starts[slices * k / n]);
    (0..n)
        .map(|k| {
            let lower = (k > 0).then(|| format!("{column} >= {}", cut(k)));
            let upper = (k + 1 < n).then(|| format!("{column} < {}", cut(k + 1)));
            let conditions: Vec<String> = lower.into_iter().chain(upper).collect();
            match conditions.is_empty() {
                true => format!("SELECT * FROM {}", table.sql()),
                false => format!("SELECT * FROM {} WHERE {}", table.sql(), conditions.join(" AND ")),
            }
        })
        .collect()
}

/// The chunk width and how many chunks the rows made.
pub(super) fn layout_queries(regclass: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "chunk interval",
            format!(
                "SELECT time_interval::text FROM timescaledb_information.dimensions \
                 WHERE format('%I.%I', hypertable_schema, hypertable_name)::regclass = {regclass}"
            ),
        ),
        ("chunks", format!("SELECT count(*) FROM show_chunks({regclass})")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Six slices over three workers: two each, the ends open; fewer slices
    /// than workers: empty ranges, still no gap and no overlap.
    #[test]
    fn time_ranges_cover_the_hypertable_once() {
        let table = TableName::parse("m").unwrap();
        let starts: Vec<String> = (0..6).map(|h| format!("2024-01-01 0{h}:00:00+00")).collect();
        let s = time_selects(&table, "time", &starts, 3);
        assert_eq!(
            s,
            [
                r#"SELECT * FROM "m" WHERE "time" < '2024-01-01 02:00:00+00'"#,
                r#"SELECT * FROM "m" WHERE "time" >= '2024-01-01 02:00:00+00' AND "time" < '2024-01-01 04:00:00+00'"#,
                r#"SELECT * FROM "m" WHERE "time" >= '2024-01-01 04:00:00+00'"#,
            ]
        );
        let s = time_selects(&table, "ts", &starts[..1], 2);
        assert_eq!(
            s,
            [
                r#"SELECT * FROM "m" WHERE "ts" < '2024-01-01 00:00:00+00'"#,
                r#"SELECT * FROM "m" WHERE "ts" >= '2024-01-01 00:00:00+00'"#
            ]
        );
        assert_eq!(time_selects(&table, "ts", &starts, 1), [r#"SELECT * FROM "m""#]);
    }
}
