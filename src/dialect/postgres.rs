//! PostgreSQL's DDL and ingest statements for a model's schema.

use super::{derived_name, literal, series_column, PartitionBy, TableOptions};

use crate::dialect::{ExportFormat, Method};
use crate::ident::{quote_ident, TableName};
use crate::model::{Column, Schema};

/// Name of the per-connection staging table used by COPY upserts.
pub const STAGE_TABLE: &str = "dbload_stage";

/// The column list of `CREATE TABLE`, one column per line.
pub(super) fn column_defs(schema: &Schema, type_name: impl Fn(&Column) -> String) -> String {
    schema
        .columns
        .iter()
        .map(|c| {
            let null = if c.not_null { " NOT NULL" } else { "" };
            format!("  {} {}{null}", quote_ident(&c.name), type_name(c))
        })
        .collect::<Vec<_>>()
        .join(",\n")
}

/// A column's type in PostgreSQL's DDL (jsonb declares no keys).
fn pg_type(c: &Column) -> String {
    c.ty.pg_name().to_string()
}

/// `CREATE [UNLOGGED] TABLE`, without indexes.
pub(super) fn create_plain(table: &TableName, schema: &Schema, unlogged: bool) -> String {
    let unlogged = if unlogged { "UNLOGGED " } else { "" };
    format!("CREATE {unlogged}TABLE {} (\n{}\n)", table.sql(), column_defs(schema, pg_type))
}

/// The unique key index (what upserts conflict on) and the time index.
pub(super) fn indexes(table: &TableName, schema: &Schema) -> Vec<String> {
    let (series, time) = schema.key.split_at(schema.key.len() - 1);
    let time = &time[0];
    let index = |suffix: &str| quote_ident(&derived_name(&table.name, suffix));
    vec![
        format!("CREATE UNIQUE INDEX {} ON {} ({}, {time} DESC)", index("key_idx"), table.sql(), series.join(", ")),
        format!("CREATE INDEX {} ON {} ({time} DESC)", index("time_idx"), table.sql()),
    ]
}

/// The statements that create the table and its indexes, in order: a plain
/// table, or with `--partitions` a partitioned one and its partitions.
/// `span_us` is the generated time range that `--partition-by time` splits.
pub fn create_table(table: &TableName, schema: &Schema, o: &TableOptions, span_us: Option<(i64, i64)>) -> Vec<String> {
    let Some(n) = o.partitions else {
        let mut ddl = vec![create_plain(table, schema, o.unlogged)];
        ddl.extend(indexes(table, schema));
        return ddl;
    };
    let by = o.partition_by.unwrap_or(PartitionBy::Key);
    let key = match by {
        PartitionBy::Key => format!("HASH ({})", quote_ident(series_column(schema))),
        PartitionBy::Time => format!("RANGE ({})", schema.key.last().expect("a time column")),
    };
    // A partitioned table cannot be unlogged; its partitions can.
    let mut ddl =
        vec![format!("CREATE TABLE {} (\n{}\n) PARTITION BY {key}", table.sql(), column_defs(schema, pg_type))];
    let unlogged = if o.unlogged { "UNLOGGED " } else { "" };
    let part =
        |i: String| TableName { schema: table.schema.clone(), name: derived_name(&table.name, &format!("p{i}")) }.sql();
    match (by, span_us) {
        (PartitionBy::Key, _) => ddl.extend((0..n).map(|i| {
            format!(
                "CREATE {unlogged}TABLE {} PARTITION OF {} FOR VALUES WITH (MODULUS {n}, REMAINDER {i})",
                part(i.to_string()),
                table.sql()
            )
        })),
        (PartitionBy::Time, span) => {
            let (from, to) = span.expect("config requires a bounded run for --partition-by time");
            let step = ((to - from) / n as i64).max(1);
            let ts = |us: i64| literal(&chrono::DateTime::from_timestamp_micros(us).expect("in range").to_rfc3339());
            ddl.extend((0..n as i64).map(|i| {
                let hi = if i + 1 == n as i64 { to } else { from + (i + 1) * step };
                format!(
                    "CREATE {unlogged}TABLE {} PARTITION OF {} FOR VALUES FROM ({}) TO ({})",
                    part(i.to_string()),
                    table.sql(),
                    ts(from + i * step),
                    ts(hi)
                )
            }));
            ddl.push(format!("CREATE {unlogged}TABLE {} PARTITION OF {} DEFAULT", part("default".into()), table.sql()));
        }
    }
    ddl.extend(indexes(table, schema));
    ddl
}

pub fn drop_table(table: &TableName) -> String {
    format!("DROP TABLE IF EXISTS {}", table.sql())
}

pub(super) fn column_list(schema: &Schema) -> String {
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

/// `COPY ... FROM STDIN` into the staging table of COPY upserts.
pub fn copy_in_stage(schema: &Schema, method: Method) -> String {
    copy_in(&quote_ident(STAGE_TABLE), schema, method)
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

/// `INSERT ... SELECT * FROM unnest($1::t1[], $2::t2[], ...)`. Columns in
/// text form travel as `text[]` and are cast to their type in the select
/// list: `SELECT u1::"pg_catalog"."inet", u2 FROM unnest(...) AS u(u1, u2)`.
pub fn insert_unnest(table: &TableName, schema: &Schema, upsert: bool) -> String {
    let mut sql = format!("INSERT INTO {} ({}) {}", table.sql(), column_list(schema), select_unnest(schema));
    if upsert {
        sql.push_str(&upsert_clause(schema));
    }
    sql
}

/// Counts the rows of `table` whose key is that of a row of a batch bound
/// as one array per column (as for [`insert_unnest`]): after a lost
/// connection, whether the batch in flight was written. None: the table
/// has no key to look rows up by.
pub fn batch_rows_found(table: &TableName, schema: &Schema) -> Option<String> {
    if schema.key.is_empty() {
        return None;
    }
    let key = schema.key.join(", ");
    Some(format!(
        "SELECT count(*) FROM {} WHERE ({key}) IN (SELECT {key} FROM ({}) AS b ({}))",
        table.sql(),
        select_unnest(schema),
        column_list(schema)
    ))
}

/// `SELECT` of a batch's rows from one array parameter per column, each
/// value cast to its column's type where it travels in another.
fn select_unnest(schema: &Schema) -> String {
    let arrays = schema
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| format!("${}::{}[]", i + 1, c.ty.pg_name()))
        .collect::<Vec<_>>()
        .join(", ");
    let select = if schema.columns.iter().all(|c| c.cast.is_none()) {
        format!("* FROM unnest({arrays})")
    } else {
        let list = schema.columns.iter().enumerate().map(|(i, c)| match &c.cast {
            Some(cast) => format!("u{}::{cast}", i + 1),
            None => format!("u{}", i + 1),
        });
        let names = (1..=schema.columns.len()).map(|i| format!("u{i}"));
        format!(
            "{} FROM unnest({arrays}) AS u({})",
            list.collect::<Vec<_>>().join(", "),
            names.collect::<Vec<_>>().join(", ")
        )
    };
    format!("SELECT {select}")
}

/// An existing table's columns in table order, for `model::catalog::from_pg`:
/// attnum, name, type as printed, base type (an array's element, a
/// domain's base), is array, type modifier, not null, has a default (or is
/// an identity BY DEFAULT), is generated (or an identity ALWAYS), the
/// type's schema and name for casts, the type's OID and whether the column
/// is an identity ALWAYS (insert-from-sql's binary COPY writes one).
pub fn catalog_columns(table: &TableName) -> String {
    format!(
        "SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), \
         coalesce(et.typname, bt.typname, t.typname), t.typcategory = 'A' AND et.oid IS NOT NULL, a.atttypmod, \
         a.attnotnull, a.atthasdef OR a.attidentity = 'd', a.attgenerated <> '' OR a.attidentity = 'a', \
         n.nspname, t.typname, a.atttypid, a.attidentity = 'a' \
         FROM pg_attribute a \
         JOIN pg_type t ON t.oid = a.atttypid \
         JOIN pg_namespace n ON n.oid = t.typnamespace \
         LEFT JOIN pg_type et ON t.typcategory = 'A' AND et.oid = t.typelem \
         LEFT JOIN pg_type bt ON t.typtype = 'd' AND bt.oid = t.typbasetype \
         WHERE a.attrelid = to_regclass({}) AND a.attnum > 0 AND NOT a.attisdropped \
         ORDER BY a.attnum",
        literal(&table.sql())
    )
}

/// Reads text values (one `text[]` parameter) as the type `schema.name`:
/// whether a workload's text parameters are values its statement's
/// parameter type takes, asked of the server once before the run.
pub fn texts_as(schema: &str, name: &str) -> String {
    format!("SELECT v::{}.{} FROM unnest($1::text[]) AS v", quote_ident(schema), quote_ident(name))
}

/// The column numbers of each unique index of a table (`1 3`), primary key first.
pub fn unique_keys(table: &TableName) -> String {
    format!(
        "SELECT i.indkey::text, i.indisprimary FROM pg_index i WHERE i.indrelid = to_regclass({}) AND i.indisunique \
         ORDER BY i.indisprimary DESC, i.indexrelid",
        literal(&table.sql())
    )
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

/// Settings that, when `off`, let a server acknowledge writes it may lose
/// in a crash: figures measured so are not those of a durable server.
pub const NOT_DURABLE_WHEN_OFF: &[&str] = &["fsync", "synchronous_commit", "full_page_writes"];

/// The rows of [`REPORTED_SETTINGS`] in the session that runs it, each as
/// PostgreSQL shows it (`current_setting`: `512MB`, where `setting` and
/// `unit` of `pg_settings` would give `65536` of `8kB`).
pub fn reported_settings() -> String {
    format!("SELECT name, current_setting(name) FROM pg_settings WHERE name IN ({}) ORDER BY name", setting_names())
}

/// The address and port the session's server answered on, as the server
/// sees them (`10.0.0.5:5432`; the address behind a proxy or a NAT, not the
/// name the client dialled; an IPv6 address in brackets); NULL over a Unix socket.
pub fn server_address() -> &'static str {
    "SELECT CASE family(inet_server_addr()) WHEN 6 THEN '[' || host(inet_server_addr()) || ']' \
     ELSE host(inet_server_addr()) END || ':' || inet_server_port()"
}

/// [`reported_settings`] as one JSON object (`{"fsync": "on", ...}`): the
/// form Citus' `run_command_on_workers` can return (one row, one column).
pub fn reported_settings_json() -> String {
    format!(
        "SELECT json_object_agg(name, current_setting(name) ORDER BY name) FROM pg_settings WHERE name IN ({})",
        setting_names()
    )
}

fn setting_names() -> String {
    REPORTED_SETTINGS.iter().map(|s| literal(s)).collect::<Vec<_>>().join(", ")
}

/// Detection: the server's own description (CrateDB's names CrateDB).
/// Transaction control. A COPY batch runs inside a transaction so that its
/// rows count as written only once COMMIT is acknowledged; `--explain
/// analyze` runs inside one that is rolled back, so its writes never land.
pub const BEGIN: &str = "BEGIN";
pub const COMMIT: &str = "COMMIT";
pub const ROLLBACK: &str = "ROLLBACK";

pub const VERSION: &str = "SELECT version()";

/// Detection: the server's version number.
pub const SERVER_VERSION: &str = "SHOW server_version";

/// Detection: the engines that come as extensions, with their versions.
pub const ENGINE_EXTENSIONS: &str =
    "SELECT extname::text, extversion FROM pg_extension WHERE extname IN ('citus', 'timescaledb')";

/// The server process of this connection: the one to wait for after the
/// connection is lost, before a batch in doubt is looked up.
pub const BACKEND_PID: &str = "SELECT pg_backend_pid()";

/// Whether the server process `$1` has ended (and its transaction with it).
pub const BACKEND_ENDED: &str = "SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)";

/// The plan of `query` (parameters already inlined) as JSON; with
/// `analyze`, run for its actual times and buffers.
pub fn explain(query: &str, analyze: bool) -> String {
    let options = match analyze {
        true => "ANALYZE, VERBOSE, BUFFERS, FORMAT JSON",
        false => "VERBOSE, FORMAT JSON",
    };
    format!("EXPLAIN ({options}) {query}")
}

/// The relation's kind, its size in blocks (of its largest child for a
/// partitioned table or a hypertable, whose parent holds no rows) and the
/// planner's estimate of its rows (`reltuples`; none before the first
/// ANALYZE). No row when the table does not exist. `$1`: the quoted name.
pub const TABLE_FACTS: &str = "\
SELECT c.relkind::text,
       greatest(pg_relation_size(c.oid),
                coalesce((SELECT max(pg_relation_size(i.inhrelid)) FROM pg_inherits i WHERE i.inhparent = c.oid), 0))
         / current_setting('block_size')::int8,
       (SELECT sum(greatest(r.reltuples, 0))::int8 FROM pg_class r
         WHERE r.oid = c.oid OR r.oid IN (SELECT i.inhrelid FROM pg_inherits i WHERE i.inhparent = c.oid))
FROM pg_class c WHERE c.oid = to_regclass($1)";

/// Relation kinds (of [`TABLE_FACTS`]) whose rows have a ctid: tables,
/// partitioned tables, materialized views, TOAST tables.
pub fn has_ctid(relkind: &str) -> bool {
    matches!(relkind, "r" | "p" | "m" | "t")
}

/// One SELECT per worker, covering `table` together exactly once: block
/// ranges split evenly over its `blocks` blocks, which PostgreSQL 14 and
/// later scan as TID ranges, so each worker reads only its own blocks. The
/// first range has no lower bound and the last no upper bound, so rows in
/// blocks added since (or in a child table larger than the estimate) are
/// read too; on a partitioned table the condition applies to each
/// partition's own blocks.
pub fn table_selects(table: &TableName, blocks: u64, workers: u32) -> Vec<String> {
    let n = workers as u64;
    let bound = |k: u64| (blocks as u128 * k as u128 / n as u128) as u64;
    (0..n)
        .map(|k| {
            let lower = (k > 0).then(|| format!("ctid >= '({},0)'::tid", bound(k)));
            let upper = (k + 1 < n).then(|| format!("ctid < '({},0)'::tid", bound(k + 1)));
            let conditions: Vec<String> = lower.into_iter().chain(upper).collect();
            match conditions.is_empty() {
                true => format!("SELECT * FROM {}", table.sql()),
                false => format!("SELECT * FROM {} WHERE {}", table.sql(), conditions.join(" AND ")),
            }
        })
        .collect()
}

/// The COPY that reads `select`'s rows as `format`: JSON through `to_json`
/// of each row (ISO timestamps with offset, exact numbers, arrays as arrays,
/// json and jsonb nested), CSV with a header line.
pub fn copy_out(select: &str, format: ExportFormat) -> String {
    match format {
        // `OFFSET 0` keeps the subquery a subquery: Citus pushes a flattened one
        // down to the shards, where the row's record type loses its column
        // names (`{"f1": …}`); PostgreSQL plans the same scan inside it.
        ExportFormat::Json => format!(
            "COPY (SELECT to_json(dbload_row.*) FROM (SELECT * FROM ({select}) dbload_q OFFSET 0) dbload_row) TO STDOUT"
        ),
        ExportFormat::Csv => format!("COPY ({select}) TO STDOUT (FORMAT csv, HEADER)"),
    }
}

/// The COPY that reads `query`'s rows in the binary format, values as the
/// server holds them (insert-from-sql's source).
pub fn copy_out_binary(query: &str) -> String {
    format!("COPY ({query}) TO STDOUT (FORMAT binary)")
}

/// Opens the transaction whose snapshot an export's workers share.
pub const BEGIN_EXPORT: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ";

/// Names the open transaction's snapshot for [`import_snapshot`].
pub const EXPORT_SNAPSHOT: &str = "SELECT pg_export_snapshot()";

/// Starts a worker's transaction in the snapshot the export took, so all
/// workers read the table as of one moment.
pub fn import_snapshot(snapshot: &str) -> String {
    format!("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT {}", literal(snapshot))
}

/// `COPY table (columns) FROM STDIN (FORMAT binary)`, for columns named by
/// the source query rather than a model.
pub fn copy_in_binary(table: &TableName, columns: &[String]) -> String {
    let columns: Vec<String> = columns.iter().map(|c| quote_ident(c)).collect();
    format!("COPY {} ({}) FROM STDIN (FORMAT binary)", table.sql(), columns.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_read_as_a_quoted_type() {
        assert_eq!(texts_as("pg_catalog", "int4"), "SELECT v::\"pg_catalog\".\"int4\" FROM unnest($1::text[]) AS v");
    }
    use crate::model::{cpu, measurement, ModelSpec};

    fn all_sql(spec: &ModelSpec) -> String {
        let t = TableName::parse("bench.Measurement").unwrap();
        let s = spec.schema();
        let mut out = create_table(&t, &s, &TableOptions::default(), None);
        out.push(drop_table(&t));
        out.push(copy_in(&t.sql(), &s, Method::Copy));
        out.push(copy_in(&t.sql(), &s, Method::CopyCsv));
        out.push(create_stage(&t));
        out.push(copy_in_stage(&s, Method::Copy));
        out.push(upsert_from_stage(&t, &s));
        out.push(insert_values(&t, &s, 2, false));
        out.push(insert_values(&t, &s, 1, true));
        out.push(insert_unnest(&t, &s, false));
        out.push(insert_unnest(&t, &s, true));
        out.extend(batch_rows_found(&t, &s));
        out.join(";\n\n")
    }

    /// Statements for an existing table whose columns travel as text.
    #[test]
    fn text_form_columns_sql() {
        let t = TableName::parse("public.Fake").unwrap();
        let column = |name: &str, cast: &str| crate::model::Column {
            name: name.into(),
            ty: crate::model::SqlType::Text { json: false },
            not_null: false,
            cast: Some(cast.into()),
            fields: Vec::new(),
        };
        let s = Schema {
            columns: vec![column("id", "\"pg_catalog\".\"int4\""), column("addr", "\"pg_catalog\".\"inet\"")],
            key: Vec::new(),
            metrics_per_row: 0,
        };
        let sql = [
            copy_in(&t.sql(), &s, Method::CopyCsv),
            insert_values(&t, &s, 2, false),
            insert_unnest(&t, &s, false),
            catalog_columns(&t),
            unique_keys(&t),
        ];
        insta::assert_snapshot!(sql.join(";\n\n"));
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

    #[test]
    fn settings_sql() {
        insta::assert_snapshot!([reported_settings(), reported_settings_json()].join(";\n\n"));
    }

    /// What `dbload export` sends to a PostgreSQL-family server: the
    /// table's size, one block range per worker, the COPY of each format,
    /// the shared snapshot.
    #[test]
    fn export_sql() {
        let t = TableName::parse("app.Events").unwrap();
        let mut sql = vec![TABLE_FACTS.to_string()];
        sql.extend(table_selects(&t, 1000, 3));
        sql.extend(table_selects(&t, 5, 1));
        sql.push(copy_out("SELECT 1", ExportFormat::Json));
        sql.push(copy_out("SELECT 1", ExportFormat::Csv));
        sql.extend([BEGIN_EXPORT.into(), EXPORT_SNAPSHOT.into(), import_snapshot("0A-1")]);
        insta::assert_snapshot!(sql.join(";\n\n"));
    }

    #[test]
    fn block_ranges_cover_the_table_once() {
        let t = TableName::parse("app.Events").unwrap();
        assert_eq!(table_selects(&t, 5, 1), [r#"SELECT * FROM "app"."Events""#]);
        // Fewer blocks than workers: empty ranges, still no gap.
        let s = table_selects(&t, 1, 3);
        assert!(s[0].ends_with("ctid < '(0,0)'::tid") && s[2].ends_with("ctid >= '(0,0)'::tid"), "{s:?}");
    }

    /// What insert-from-sql sends: the target's columns, the source's
    /// binary COPY, the target's COPY (every name quoted).
    #[test]
    fn from_sql_sql() {
        let t = TableName::parse("s.Dst").unwrap();
        let sql = [copy_out_binary("SELECT 1"), copy_in_binary(&t, &["id".into(), "Na\"me".into()])];
        insta::assert_snapshot!(sql.join(";\n\n"));
    }

    /// Detection, the lookup of a batch in doubt, and `--explain`.
    #[test]
    fn session_sql() {
        let sql = [
            VERSION.to_string(),
            SERVER_VERSION.into(),
            ENGINE_EXTENSIONS.into(),
            BACKEND_PID.into(),
            BACKEND_ENDED.into(),
            explain("SELECT 1", false),
            explain("SELECT 1", true),
        ];
        insta::assert_snapshot!(sql.join(";\n\n"));
    }
}
