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
use crate::ident::TableName;
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
