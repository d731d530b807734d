//! PostgreSQL's DDL and ingest statements for a model's schema.

use super::{quote_ident, TableName};
use crate::encode::Method;
use crate::model::Schema;

/// Name of the per-connection staging table used by COPY upserts.
pub const STAGE_TABLE: &str = "dbload_stage";

/// The statements that create the table and its indexes, in order.
pub fn create_table(table: &TableName, schema: &Schema) -> Vec<String> {
    let columns = schema
        .columns
        .iter()
        .map(|c| {
            let null = if c.not_null { " NOT NULL" } else { "" };
            format!("  {} {}{null}", quote_ident(&c.name), c.ty.pg_name())
        })
        .collect::<Vec<_>>()
        .join(",\n");
    let (series, time) = schema.key.split_at(schema.key.len() - 1);
    let time = &time[0];
    let index = |suffix: &str| quote_ident(&format!("{}_{suffix}", table.name));
    vec![
        format!("CREATE TABLE {} (\n{columns}\n)", table.sql()),
        format!("CREATE UNIQUE INDEX {} ON {} ({}, {time} DESC)", index("key_idx"), table.sql(), series.join(", ")),
        format!("CREATE INDEX {} ON {} ({time} DESC)", index("time_idx"), table.sql()),
    ]
}

pub fn drop_table(table: &TableName) -> String {
    format!("DROP TABLE IF EXISTS {}", table.sql())
}

fn column_list(schema: &Schema) -> String {
    schema.columns.iter().map(|c| quote_ident(&c.name)).collect::<Vec<_>>().join(", ")
}

/// `ON CONFLICT (key) DO UPDATE SET` every column that is not a plain key column.
pub fn upsert_clause(schema: &Schema) -> String {
    let set = schema
        .columns
        .iter()
        .map(|c| quote_ident(&c.name))
        .filter(|c| !schema.key.iter().any(|k| k.contains(c.as_str())))
        .map(|c| format!("{c} = EXCLUDED.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(" ON CONFLICT ({}) DO UPDATE SET {set}", schema.key.join(", "))
}

/// `COPY ... FROM STDIN` for a COPY method, into `table`.
pub fn copy_in(table: &str, schema: &Schema, method: Method) -> String {
    let format = match method {
        Method::CopyCsv => "csv",
        _ => "binary",
    };
    format!("COPY {table} ({}) FROM STDIN (FORMAT {format})", column_list(schema))
}

/// The staging table for COPY upserts: rows land there, then move with
/// `INSERT ... ON CONFLICT`; emptied at every commit.
pub fn create_stage(table: &TableName) -> String {
    format!(
        "CREATE TEMP TABLE IF NOT EXISTS {} (LIKE {} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS",
        quote_ident(STAGE_TABLE),
        table.sql()
    )
}

/// Moves the staged rows into the table, upserting.
pub fn upsert_from_stage(table: &TableName, schema: &Schema) -> String {
    let cols = column_list(schema);
    format!(
        "INSERT INTO {} ({cols}) SELECT {cols} FROM {}{}",
        table.sql(),
        quote_ident(STAGE_TABLE),
        upsert_clause(schema)
    )
}

/// A multi-row `INSERT ... VALUES` for `rows` rows with numbered parameters.
pub fn insert_values(table: &TableName, schema: &Schema, rows: usize, upsert: bool) -> String {
    let width = schema.columns.len();
    let mut sql = format!("INSERT INTO {} ({}) VALUES ", table.sql(), column_list(schema));
    for r in 0..rows {
        sql.push_str(if r == 0 { "(" } else { ", (" });
        for c in 0..width {
            if c > 0 {
                sql.push_str(", ");
            }
            sql.push('$');
            sql.push_str(itoa::Buffer::new().format(r * width + c + 1));
        }
        sql.push(')');
    }
    if upsert {
        sql.push_str(&upsert_clause(schema));
    }
    sql
}

/// `INSERT ... SELECT * FROM unnest($1::t1[], $2::t2[], ...)`.
pub fn insert_unnest(table: &TableName, schema: &Schema, upsert: bool) -> String {
    let arrays = schema
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| format!("${}::{}[]", i + 1, c.ty.pg_name()))
        .collect::<Vec<_>>()
        .join(", ");
    let mut sql = format!("INSERT INTO {} ({}) SELECT * FROM unnest({arrays})", table.sql(), column_list(schema));
    if upsert {
        sql.push_str(&upsert_clause(schema));
    }
    sql
}

/// Server settings that change ingest speed, listed in every report.
pub const REPORTED_SETTINGS: &[&str] = &[
    "shared_buffers",
    "synchronous_commit",
    "fsync",
    "full_page_writes",
    "wal_level",
    "wal_compression",
    "max_wal_size",
    "checkpoint_timeout",
    "work_mem",
    "maintenance_work_mem",
    "autovacuum",
    "max_connections",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{cpu, measurement, ModelSpec};

    fn all_sql(spec: &ModelSpec) -> String {
        let t = TableName::parse("bench.Measurement").unwrap();
        let s = spec.schema();
        let mut out = create_table(&t, &s);
        out.push(drop_table(&t));
        out.push(copy_in(&t.sql(), &s, Method::Copy));
        out.push(copy_in(&t.sql(), &s, Method::CopyCsv));
        out.push(create_stage(&t));
        out.push(upsert_from_stage(&t, &s));
        out.push(insert_values(&t, &s, 2, false));
        out.push(insert_values(&t, &s, 1, true));
        out.push(insert_unnest(&t, &s, false));
        out.push(insert_unnest(&t, &s, true));
        out.join(";\n\n")
    }

    #[test]
    fn measurement_sql() {
        let spec = ModelSpec::Measurement(measurement::Options { devices: 10, metrics: 3, jsonb: false });
        insta::assert_snapshot!(all_sql(&spec));
    }

    #[test]
    fn measurement_jsonb_sql() {
        let spec = ModelSpec::Measurement(measurement::Options { devices: 10, metrics: 3, jsonb: true });
        insta::assert_snapshot!(all_sql(&spec));
    }

    #[test]
    fn cpu_sql() {
        insta::assert_snapshot!(all_sql(&ModelSpec::Cpu(cpu::Options::default())));
    }
}
