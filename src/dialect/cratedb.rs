//! CrateDB: its own DDL (`CLUSTERED INTO n SHARDS`, replicas, `OBJECT`
//! columns, a primary key instead of a unique index) and the `_sql` HTTP
//! statements with `?` placeholders. CrateDB has no COPY FROM STDIN; rows
//! become visible to a count after `REFRESH TABLE`.

use anyhow::Result;

use super::{postgres, TableOptions};

use crate::error::usage;
use crate::ident::{quote_ident, TableName};
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

/// Every node's address as the node publishes it (from `rest_url`:
/// `10.0.0.5:4200`, the address behind a proxy or NAT), by node name, with
/// the port of the protocol the run uses: HTTP's, or with `postgres` the
/// PostgreSQL protocol's (`port['psql']`; a report that gave 4200 for a run
/// on 5432 named a port it never used). CrateDB does not say which node
/// took a statement, so the report lists the cluster's nodes; on one node
/// this is its address.
pub fn node_addresses(postgres: bool) -> &'static str {
    match postgres {
        false => "SELECT rest_url FROM sys.nodes ORDER BY name",
        true => {
            "SELECT regexp_replace(rest_url, ':[0-9]+$', ':' || CAST(port['psql'] AS TEXT)) FROM sys.nodes \
                 ORDER BY name"
        }
    }
}

/// Detection: the version of the cluster's first node.
pub const NODE_VERSION: &str = "SELECT version['number'] FROM sys.nodes LIMIT 1";

/// Hex digits of `md5(_id)` that [`share`] reads: 16^3 = 4,096 values, so
/// with up to 64 workers the largest share exceeds the smallest by at most
/// 1/4,096 of the rows, and more workers still all get rows.
const SPLIT_DIGITS: usize = 3;

/// The worker (0..`workers`) that reads a row: the first [`SPLIT_DIGITS`]
/// hex digits of `md5(_id)` as a number, modulo `workers`. A digit's value
/// is `(ascii(d) - 48) % 39`: '0'-'9' (48-57) become 0-9 and 'a'-'f'
/// (97-102) become 10-15. (`ascii(md5(_id)) % n` took the ASCII code
/// itself, so with 16 workers 10-15 got no rows.)
fn share(workers: u32) -> String {
    let digits = (1..=SPLIT_DIGITS)
        .map(|i| {
            let value = format!("(ascii(substr(md5(_id), {i}, 1)) - 48) % 39");
            match SPLIT_DIGITS - i {
                0 => value,
                power => format!("({value}) * {}", 16u32.pow(power as u32)),
            }
        })
        .collect::<Vec<_>>()
        .join(" + ");
    format!("({digits}) % {workers}")
}

/// The SELECT of worker `worker` of `workers` exporting a table through a
/// cursor: its share of the rows (`share`).
pub fn export_select(table: &TableName, worker: u32, workers: u32) -> String {
    match workers {
        1 => format!("SELECT * FROM {}", table.sql()),
        n => format!("SELECT * FROM {} WHERE {} = {worker}", table.sql(), share(n)),
    }
}

/// The name of the cursor rows are read through (CrateDB has no `COPY ...
/// TO STDOUT`); one per connection or HTTP session.
pub const CURSOR: &str = "dbload_rows";

/// Declares [`CURSOR`] over `query` on a PostgreSQL-protocol connection, in
/// a transaction (on CrateDB a formality: the cursor lives in the session).
pub fn declare_cursor(query: &str) -> String {
    format!("BEGIN; DECLARE {CURSOR} NO SCROLL CURSOR FOR {query}")
}

/// Declares [`CURSOR`] over `query` in an HTTP session, which has no
/// transaction to hold it: `WITH HOLD` keeps it past the statement.
pub fn declare_held_cursor(query: &str) -> String {
    format!("DECLARE {CURSOR} NO SCROLL CURSOR WITH HOLD FOR {query}")
}

/// The next `page` rows of [`CURSOR`].
pub fn fetch(page: usize) -> String {
    format!("FETCH {page} FROM {CURSOR}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What an export or insert-from-sql sends to CrateDB: each worker's
    /// share of a table (`md5(_id)` split, also for 16 workers), the
    /// cursors over either protocol, the count for the progress bar, and
    /// detection.
    #[test]
    fn export_sql() {
        let t = TableName::parse("doc.T").unwrap();
        let mut sql = vec![export_select(&t, 0, 1), export_select(&t, 1, 2), export_select(&t, 15, 16)];
        sql.extend([declare_cursor("SELECT 1"), declare_held_cursor("SELECT 1"), fetch(1000)]);
        sql.extend([crate::dialect::count_rows(&t), NODE_VERSION.into()]);
        insta::assert_snapshot!(sql.join(";\n\n"));
    }

    /// The nodes' addresses the report names, over HTTP and over the PostgreSQL protocol.
    #[test]
    fn node_addresses_sql() {
        insta::assert_snapshot!(node_addresses(false), @"SELECT rest_url FROM sys.nodes ORDER BY name");
        insta::assert_snapshot!(
            node_addresses(true),
            @"SELECT regexp_replace(rest_url, ':[0-9]+$', ':' || CAST(port['psql'] AS TEXT)) FROM sys.nodes ORDER BY name"
        );
    }

    /// What `insert-json`/`insert-fake-data` read of an existing table.
    #[test]
    fn catalog_sql() {
        let sql = [TableName::parse("doc.T").unwrap(), TableName::parse("T").unwrap()]
            .iter()
            .flat_map(|t| [catalog_columns(t), primary_key_columns(t)])
            .collect::<Vec<_>>();
        insta::assert_snapshot!(sql.join(";\n\n"));
    }

    /// The arithmetic of [`share`] (frozen above) applied to every possible
    /// prefix of `md5(_id)`: each lands on exactly one worker in range, and
    /// shares differ by at most one prefix, for 1 to 64 workers.
    #[test]
    fn export_split_gives_every_worker_an_even_share() {
        let hex = b"0123456789abcdef";
        let digit = |c: u8| (c as u32 - 48) % 39;
        for (i, &c) in hex.iter().enumerate() {
            assert_eq!(digit(c), i as u32, "{}", c as char);
        }
        let values = 16u32.pow(SPLIT_DIGITS as u32);
        let prefixes = || (0..values).map(|v| format!("{v:0SPLIT_DIGITS$x}"));
        for n in 1..=64u32 {
            let mut shares = vec![0u32; n as usize];
            for p in prefixes() {
                let value = p.bytes().fold(0, |acc, c| acc * 16 + digit(c));
                shares[(value % n) as usize] += 1;
            }
            let (min, max) = (shares.iter().min().unwrap(), shares.iter().max().unwrap());
            assert!(max - min <= 1 && *min > 0, "{n} workers: shares {shares:?}");
            assert_eq!(shares.iter().sum::<u32>(), values);
        }
    }
}
