//! CrateDB: its own DDL (`CLUSTERED INTO n SHARDS`, replicas, `OBJECT`
//! columns, a primary key instead of a unique index) and the `_sql` HTTP
//! statements with `?` placeholders. CrateDB has no COPY FROM STDIN; rows
//! become visible to a count after `REFRESH TABLE`.

use anyhow::Result;

use super::{postgres, quote_ident, TableName, TableOptions};
use crate::error::usage;
use crate::model::{Column, Schema, SqlType};

/// CrateDB's name for the type of a model's column. Device ids (`oid` on
/// PostgreSQL, unsigned 32-bit) need `BIGINT`.
pub fn type_name(ty: SqlType) -> &'static str {
    match ty {
        SqlType::Timestamptz => "TIMESTAMP WITH TIME ZONE",
        SqlType::Oid => "BIGINT",
        SqlType::Int4 => "INTEGER",
        SqlType::Float8 => "DOUBLE PRECISION",
        SqlType::Jsonb => "OBJECT(DYNAMIC)",
        SqlType::Text { .. } => "TEXT",
    }
}

/// A column's type in CrateDB's DDL. An object column declares the keys
/// the model writes, `OBJECT(DYNAMIC) AS ("arch" TEXT, ...)` (as
/// nodeIngestBench does): left to dynamic mapping, the first batches add
/// them on every shard at once, and CrateDB fails some of those rows
/// (2-5 % on a 3-node 6.4 cluster). Other keys may still come.
fn column_type(c: &Column) -> String {
    let ty = type_name(c.ty);
    if c.fields.is_empty() {
        return ty.to_string();
    }
    let fields = c.fields.iter().map(|(k, t)| format!("{} {}", quote_ident(k), type_name(*t)));
    format!("{ty} AS ({})", fields.collect::<Vec<_>>().join(", "))
}

/// The model's key as a primary key, when every part of it is a plain
/// column (the cpu model's key reads a field of the tags object: none).
fn primary_key(schema: &Schema) -> Option<String> {
    let plain = schema.key.iter().all(|k| schema.columns.iter().any(|c| quote_ident(&c.name) == *k));
    plain.then(|| schema.key.join(", "))
}

pub(super) fn check(_: &TableOptions, schema: &Schema, upsert: bool) -> Result<()> {
    if upsert && primary_key(schema).is_none() {
        return Err(usage(
            "--upsert on CrateDB needs a primary key, and the cpu model's key is a field of its tags object; \
             use the measurement model, or drop --upsert",
        ));
    }
    Ok(())
}

/// One `CREATE TABLE`: CrateDB indexes every column by itself.
pub fn create_table(table: &TableName, schema: &Schema, o: &TableOptions) -> Vec<String> {
    let mut columns = postgres::column_defs(schema, column_type);
    if let Some(pk) = primary_key(schema) {
        columns.push_str(&format!(",\n  PRIMARY KEY ({pk})"));
    }
    let mut sql = format!("CREATE TABLE {} (\n{columns}\n)", table.sql());
    if let Some(n) = o.shards {
        sql.push_str(&format!(" CLUSTERED INTO {n} SHARDS"));
    }
    if let Some(r) = &o.replicas {
        sql.push_str(&format!(" WITH (number_of_replicas = {})", super::literal(r)));
    }
    vec![sql]
}

pub fn refresh(table: &TableName) -> String {
    format!("REFRESH TABLE {}", table.sql())
}

/// `table_schema = ... AND table_name = ...` for `information_schema`; an
/// unqualified name is in the session's schema (`doc` by default).
fn where_table(table: &TableName) -> String {
    let schema = table.schema.as_deref().map_or("CURRENT_SCHEMA".into(), super::literal);
    format!("table_schema = {schema} AND table_name = {}", super::literal(&table.name))
}

pub fn table_exists(table: &TableName) -> String {
    format!("SELECT count(*) FROM information_schema.tables WHERE {}", where_table(table))
}

pub(super) fn columns(table: &TableName) -> String {
    format!("SELECT column_name FROM information_schema.columns WHERE {}", where_table(table))
}

/// Shards, replicas and the nodes of the cluster.
pub(super) fn layout_queries(table: &TableName) -> Vec<(&'static str, String)> {
    let w = where_table(table);
    vec![
        ("shards", format!("SELECT number_of_shards FROM information_schema.tables WHERE {w}")),
        ("replicas", format!("SELECT number_of_replicas FROM information_schema.tables WHERE {w}")),
        ("nodes", "SELECT count(*) FROM sys.nodes".into()),
    ]
}

fn insert_into(table: &TableName, schema: &Schema) -> String {
    format!("INSERT INTO {} ({})", table.sql(), postgres::column_list(schema))
}

fn upsert(sql: &mut String, schema: &Schema, on: bool) {
    if on {
        sql.push_str(&postgres::upsert_clause(schema));
    }
}

/// The statement of a `bulk_args` request: one row of `?`, run once per row.
pub fn insert_bulk(table: &TableName, schema: &Schema, on_conflict: bool) -> String {
    let row = vec!["?"; schema.columns.len()].join(", ");
    let mut sql = format!("{} VALUES ({row})", insert_into(table, schema));
    upsert(&mut sql, schema, on_conflict);
    sql
}

/// A multi-row `VALUES` statement for `rows` rows of `?`.
pub fn insert_values(table: &TableName, schema: &Schema, rows: usize, on_conflict: bool) -> String {
    let row = format!("({})", vec!["?"; schema.columns.len()].join(", "));
    let mut sql = format!("{} VALUES {}", insert_into(table, schema), vec![row.as_str(); rows].join(", "));
    upsert(&mut sql, schema, on_conflict);
    sql
}

/// `INSERT ... SELECT * FROM unnest(?, ...)`: one array per column. Over
/// HTTP the arrays' types come from the JSON; over the PostgreSQL protocol
/// (`dollar`) each parameter is cast to the column's array type.
pub fn insert_unnest(table: &TableName, schema: &Schema, on_conflict: bool, dollar: bool) -> String {
    let arrays = schema
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| if dollar { format!("${}::array({})", i + 1, type_name(c.ty)) } else { "?".into() })
        .collect::<Vec<_>>()
        .join(", ");
    let mut sql = format!("{} SELECT * FROM unnest({arrays})", insert_into(table, schema));
    upsert(&mut sql, schema, on_conflict);
    sql
}

/// An existing table's columns for `model::catalog::from_crate`: name, data
/// type, nullable, default, generated, maximum length.
pub fn catalog_columns(table: &TableName) -> String {
    format!(
        "SELECT column_name, data_type, is_nullable, column_default, is_generated, character_maximum_length \
         FROM information_schema.columns WHERE {} ORDER BY ordinal_position",
        where_table(table)
    )
}

/// The columns of a table's primary key.
pub fn primary_key_columns(table: &TableName) -> String {
    format!(
        "SELECT column_name FROM information_schema.key_column_usage WHERE {} ORDER BY ordinal_position",
        where_table(table)
    )
}
