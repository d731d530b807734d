//! Per-engine SQL: DDL, the statements each ingest method sends, and how
//! identifiers are quoted. Every statement dbload sends is built here, so
//! snapshot tests can freeze them all. Each engine's module also owns its
//! limits: which methods and table options it can do.

pub mod activity;
pub mod citus;
pub mod cost;
pub mod cratedb;
pub mod cratedb_activity;
pub mod pgbench;
pub mod postgres;
pub mod results;
pub mod timescaledb;
pub mod tsbs;

use std::fmt;

use anyhow::Result;

use crate::error::usage;
use crate::ident::{quote_ident, TableName};
use crate::model::Schema;

/// The kind of database behind a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    Postgres,
    Timescaledb,
    Citus,
    Cratedb,
}

impl Engine {
    /// The ingest methods this engine can do, best first (the first is the default).
    pub fn methods(self, http: bool) -> &'static [Method] {
        match (self, http) {
            (Engine::Cratedb, true) => &[Method::Bulk, Method::Insert, Method::Unnest],
            (Engine::Cratedb, false) => &[Method::Insert, Method::Unnest],
            _ => &[Method::Copy, Method::CopyCsv, Method::Insert, Method::Unnest],
        }
    }

    /// Most values one statement may carry: PostgreSQL's protocol counts
    /// parameters in 16 bits; CrateDB also caps a statement's text
    /// (`statement_max_length`, 262,144 characters), which `$12345, `
    /// placeholders reach first.
    pub fn max_params(self) -> usize {
        match self {
            Engine::Cratedb => 25_000,
            _ => 65_535,
        }
    }

    /// Refuses a method the engine cannot do, listing those it can.
    pub fn check_method(self, method: Method, http: bool) -> Result<()> {
        let can = self.methods(http);
        if can.contains(&method) {
            return Ok(());
        }
        let list = can.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(", ");
        let why = match (self, method) {
            (Engine::Cratedb, Method::Copy | Method::CopyCsv) => ": CrateDB has no COPY FROM STDIN",
            (_, Method::Bulk) => ": bulk is CrateDB's HTTP bulk_args; give a cratedb:// URL",
            _ => "",
        };
        Err(usage(format!("--method {method}: {self} cannot do it{why}; use one of {list}")))
    }
}

impl Engine {
    /// The engine and its versions as people name them: `PostgreSQL 15.4`,
    /// `TimescaleDB 2.28.0 on PostgreSQL 15.4`, `CrateDB 6.4.1`.
    pub fn describe(self, engine_version: Option<&str>, server_version: Option<&str>) -> String {
        let with_version = |name: &str, v: Option<&str>| match v {
            Some(v) => format!("{name} {v}"),
            None => name.to_string(),
        };
        match self {
            Engine::Cratedb => with_version("CrateDB", engine_version),
            Engine::Postgres => with_version("PostgreSQL", server_version),
            e => {
                let name = if e == Engine::Citus { "Citus" } else { "TimescaleDB" };
                format!("{} on {}", with_version(name, engine_version), with_version("PostgreSQL", server_version))
            }
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use clap::ValueEnum;
        f.write_str(self.to_possible_value().expect("no skipped variants").get_name())
    }
}

/// How `--partitions` splits a PostgreSQL table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum PartitionBy {
    /// Hash of the series column (device_id; ts for the cpu model).
    #[value(alias = "hash")]
    Key,
    /// Equal ranges of the generated time span, plus a DEFAULT partition.
    #[value(alias = "range")]
    Time,
}

/// The table flags of the seeds' tools, as given; what each engine makes
/// of them (or refuses) is decided by [`TableOptions::check`].
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TableOptions {
    /// Citus shard count, CrateDB `CLUSTERED INTO n SHARDS`.
    pub shards: Option<u32>,
    /// CrateDB `number_of_replicas`: `N` or a range `N-M` / `N-all`.
    pub replicas: Option<String>,
    /// TimescaleDB chunk interval, seconds.
    pub chunk_interval: Option<u64>,
    /// `--no-hypertables`: a plain table on TimescaleDB.
    pub no_hypertables: bool,
    /// Citus distribution column (default: the series column).
    pub distribution_column: Option<String>,
    /// Citus reference table (a full copy on every node) instead of shards.
    pub reference_table: bool,
    /// PostgreSQL native partitions.
    pub partitions: Option<u32>,
    pub partition_by: Option<PartitionBy>,
    /// `CREATE UNLOGGED TABLE`: no WAL (staging tables loaded and then moved).
    pub unlogged: bool,
    /// TimescaleDB: compress every chunk after the load (`--compress`).
    pub compress: bool,
}

/// tsdbperf's default chunk interval: one day.
pub const DEFAULT_CHUNK_INTERVAL_S: u64 = 86_400;

impl TableOptions {
    /// Checks the values themselves, before the engine is known.
    pub fn validate(&self) -> Result<()> {
        if self.shards == Some(0) {
            return Err(usage("--shards 0: give at least 1 shard"));
        }
        if self.partitions == Some(0) {
            return Err(usage("--partitions 0: give at least 1 partition, or leave the flag out"));
        }
        if self.chunk_interval == Some(0) {
            return Err(usage("--chunk-interval 0: give the chunk width in seconds, e.g. 86400 for one day"));
        }
        if self.partition_by.is_some() && self.partitions.is_none() {
            return Err(usage("--partition-by needs --partitions N"));
        }
        if let Some(r) = &self.replicas {
            let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            let ok = match r.split_once('-') {
                None => number(r),
                Some((lo, hi)) => number(lo) && (number(hi) || hi == "all"),
            };
            if !ok {
                return Err(usage(format!("--replicas {r:?}: give a number (1) or a range (0-1, 0-all)")));
            }
        }
        Ok(())
    }

    /// Refuses what `engine` has no such thing for, saying what it has instead.
    /// What a flag given for another engine leaves undone on `engine`, to
    /// be said on stderr and in the report's table line: `--shards` on
    /// PostgreSQL or TimescaleDB, accepted (nodeIngestBench's command line
    /// carries `--shards 12`, and its users' habit runs there too) but not applied.
    pub fn not_applied(&self, engine: Engine) -> Option<(&'static str, String)> {
        let n = self.shards.filter(|_| !matches!(engine, Engine::Citus | Engine::Cratedb))?;
        let name = if engine == Engine::Timescaledb { "TimescaleDB" } else { "PostgreSQL" };
        Some(("shards", format!("{n} not applied: {name} has no shards (--partitions N gives hash partitions)")))
    }

    pub fn check(&self, engine: Engine, schema: &Schema, upsert: bool) -> Result<()> {
        let refuse = |flag: &str, instead: &str| Err(usage(format!("{flag}: {engine} has no such thing; {instead}")));
        if self.replicas.is_some() && engine != Engine::Cratedb {
            return refuse("--replicas", "replicas are a CrateDB table setting");
        }
        if self.chunk_interval.is_some() && engine != Engine::Timescaledb {
            return refuse(
                "--chunk-interval",
                "it is TimescaleDB's hypertable chunk width (use --partitions on PostgreSQL)",
            );
        }
        // --no-hypertables asks for a plain table: on an engine without
        // hypertables it holds already, and a tsdbperf script runs unchanged.
        if (self.distribution_column.is_some() || self.reference_table) && engine != Engine::Citus {
            let flag = if self.reference_table { "--reference-table" } else { "--distribution-column" };
            return refuse(flag, "it is a Citus table setting");
        }
        if self.partitions.is_some() && engine != Engine::Postgres {
            let instead = match engine {
                Engine::Timescaledb => "hypertables partition by time: use --chunk-interval",
                _ => "use --shards",
            };
            return refuse("--partitions", instead);
        }
        if self.compress && engine != Engine::Timescaledb {
            return refuse("--compress", "it compresses a TimescaleDB hypertable's chunks");
        }
        if self.unlogged && engine == Engine::Cratedb {
            return refuse("--unlogged", "CrateDB writes no WAL of PostgreSQL's kind");
        }
        match engine {
            Engine::Timescaledb => timescaledb::check(self),
            Engine::Citus => citus::check(self, schema),
            Engine::Cratedb => cratedb::check(self, schema, upsert),
            Engine::Postgres => Ok(()),
        }
    }
}

/// What a run needs to write a table on one engine: the engine and the
/// table flags, checked. Every DDL statement comes from here.
#[derive(Debug, Clone)]
pub struct Dialect {
    pub engine: Engine,
    pub options: TableOptions,
}

impl Dialect {
    /// The statements that create `table` for `schema`, in order. `span_us`
    /// is the generated time range (for `--partition-by time`).
    pub fn create_table(&self, table: &TableName, schema: &Schema, span_us: Option<(i64, i64)>) -> Vec<String> {
        let o = &self.options;
        match self.engine {
            Engine::Postgres => postgres::create_table(table, schema, o, span_us),
            Engine::Timescaledb => timescaledb::create_table(table, schema, o),
            Engine::Citus => citus::create_table(table, schema, o),
            Engine::Cratedb => cratedb::create_table(table, schema, o),
        }
    }

    pub fn drop_table(&self, table: &TableName) -> String {
        postgres::drop_table(table)
    }

    /// A query counting 1 if `table` exists, else 0.
    pub fn table_exists(&self, table: &TableName) -> String {
        match self.engine {
            Engine::Cratedb => cratedb::table_exists(table),
            _ => format!("SELECT CASE WHEN to_regclass({}) IS NULL THEN 0 ELSE 1 END", literal(&table.sql())),
        }
    }

    /// A query listing the names of `table`'s columns.
    pub fn columns(&self, table: &TableName) -> String {
        match self.engine {
            Engine::Cratedb => cratedb::columns(table),
            _ => format!(
                "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass({}) AND attnum > 0 AND NOT attisdropped",
                literal(&table.sql())
            ),
        }
    }

    /// Queries for what the engine made of the table, each giving one value
    /// for the report: chunks, shards, nodes, partitions.
    pub fn layout_queries(&self, table: &TableName) -> Vec<(&'static str, String)> {
        let regclass = format!("{}::regclass", literal(&table.sql()));
        match self.engine {
            Engine::Postgres if self.options.partitions.is_some() => {
                vec![("partitions", format!("SELECT count(*) FROM pg_inherits WHERE inhparent = {regclass}"))]
            }
            Engine::Postgres => Vec::new(),
            Engine::Timescaledb => timescaledb::layout_queries(&regclass),
            Engine::Citus => citus::layout_queries(&regclass),
            Engine::Cratedb => cratedb::layout_queries(table),
        }
    }

    /// What makes written rows visible to a count (CrateDB refreshes periodically).
    pub fn refresh(&self, table: &TableName) -> Option<String> {
        (self.engine == Engine::Cratedb).then(|| cratedb::refresh(table))
    }
}

/// Counts the rows of `table` (on every engine).
pub fn count_rows(table: &TableName) -> String {
    format!("SELECT count(*) FROM {}", table.sql())
}

/// The first key column that is a plain column (not an expression): the
/// series column that hash partitions and Citus distribute by.
pub fn series_column(schema: &Schema) -> &str {
    schema
        .key
        .iter()
        .find_map(|k| schema.columns.iter().find(|c| quote_ident(&c.name) == *k))
        .map(|c| c.name.as_str())
        .expect("every model's key has a plain column")
}

/// The most bytes of a PostgreSQL name (`NAMEDATALEN - 1`): the server
/// cuts a longer one there, silently.
pub const MAX_NAME_BYTES: usize = 63;

/// The name of an object made for table `table` (an index, a partition):
/// `TABLE_SUFFIX`, or when that is longer than [`MAX_NAME_BYTES`], the
/// table's name cut short (at a character boundary) + `_` + 8 hex digits
/// of the CRC-32 of its full name + `_SUFFIX`. The server would cut
/// `TABLE_key_idx` and `TABLE_time_idx` of a 62-byte name to one name; this
/// way the suffix survives, and two long names sharing a prefix still
/// differ by their hash.
pub fn derived_name(table: &str, suffix: &str) -> String {
    let whole = format!("{table}_{suffix}");
    if whole.len() <= MAX_NAME_BYTES {
        return whole;
    }
    let hash = format!("_{:08x}_{suffix}", crc32fast::hash(table.as_bytes()));
    let mut cut = MAX_NAME_BYTES.saturating_sub(hash.len());
    while !table.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{hash}", &table[..cut])
}

/// How rows travel to the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Binary COPY FROM STDIN, one COPY per batch (the fastest).
    Copy,
    /// CSV COPY FROM STDIN, one COPY per batch.
    CopyCsv,
    /// Prepared multi-row INSERT ... VALUES with bound parameters.
    Insert,
    /// One prepared INSERT ... SELECT FROM unnest($1::type[], ...) per batch.
    Unnest,
    /// CrateDB over HTTP: one `_sql` request with `bulk_args` per batch.
    Bulk,
}

impl Method {
    /// Whether the producer encodes the payload into bytes ahead of sending.
    pub fn is_copy(self) -> bool {
        matches!(self, Method::Copy | Method::CopyCsv)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use clap::ValueEnum;
        f.write_str(self.to_possible_value().expect("no skipped variants").get_name())
    }
}

/// What an export writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// JSON lines: one object per row, keys = column names (what insert-json reads).
    Json,
    /// CSV with a header line, in PostgreSQL's text forms (COPY ... FROM (FORMAT csv, HEADER) reads it).
    Csv,
}

impl ExportFormat {
    /// The files' extension, without gzip's.
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Json => "json",
            ExportFormat::Csv => "csv",
        }
    }
}

/// A SQL string literal: single quotes doubled.
pub fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{cpu, measurement, ModelSpec};

    fn models() -> [(&'static str, Schema); 3] {
        let m = |jsonb| ModelSpec::Measurement(measurement::Options { devices: 10, metrics: 3, jsonb }).schema();
        [
            ("measurement", m(false)),
            ("measurement_jsonb", m(true)),
            ("cpu", ModelSpec::Cpu(cpu::Options::default()).schema()),
        ]
    }

    /// Every engine's DDL for every model, with the table flags that engine takes.
    #[test]
    fn ddl_of_every_engine_and_model() {
        let table = TableName::parse("Bench.Measurement").unwrap();
        let day = Some((1_704_067_200_000_000, 1_704_153_600_000_000));
        let cases: [(&str, Engine, TableOptions); 9] = [
            ("postgres", Engine::Postgres, TableOptions::default()),
            ("postgres_unlogged", Engine::Postgres, TableOptions { unlogged: true, ..Default::default() }),
            ("postgres_hash_partitions", Engine::Postgres, TableOptions { partitions: Some(4), ..Default::default() }),
            (
                "postgres_time_partitions",
                Engine::Postgres,
                TableOptions {
                    partitions: Some(3),
                    partition_by: Some(PartitionBy::Time),
                    unlogged: true,
                    ..Default::default()
                },
            ),
            ("timescaledb", Engine::Timescaledb, TableOptions { chunk_interval: Some(3600), ..Default::default() }),
            ("timescaledb_plain", Engine::Timescaledb, TableOptions { no_hypertables: true, ..Default::default() }),
            ("citus", Engine::Citus, TableOptions { shards: Some(32), ..Default::default() }),
            ("citus_reference", Engine::Citus, TableOptions { reference_table: true, ..Default::default() }),
            (
                "cratedb",
                Engine::Cratedb,
                TableOptions { shards: Some(12), replicas: Some("0-1".into()), ..Default::default() },
            ),
        ];
        for (name, engine, options) in cases {
            for (model, schema) in models() {
                options.check(engine, &schema, false).unwrap();
                let d = Dialect { engine, options: options.clone() };
                let mut sql = d.create_table(&table, &schema, day);
                sql.push(d.table_exists(&table));
                sql.push(d.columns(&table));
                sql.extend(d.layout_queries(&table).into_iter().map(|(k, q)| format!("-- {k}\n{q}")));
                sql.extend(d.refresh(&table));
                insta::assert_snapshot!(format!("{name}_{model}"), sql.join(";\n\n"));
            }
        }
    }

    /// CrateDB's statements over HTTP (`?`) and over the PostgreSQL protocol (`$n`).
    #[test]
    fn cratedb_inserts() {
        let table = TableName::parse("doc.cpu").unwrap();
        for (model, schema) in models() {
            let sql = [
                cratedb::insert_bulk(&table, &schema, false),
                cratedb::insert_values(&table, &schema, 2, false),
                cratedb::insert_unnest(&table, &schema, false, false),
                cratedb::insert_unnest(&table, &schema, false, true),
            ];
            insta::assert_snapshot!(format!("cratedb_inserts_{model}"), sql.join(";\n\n"));
        }
        let m = &models()[0].1;
        insta::assert_snapshot!("cratedb_upsert", cratedb::insert_bulk(&table, m, true));
    }

    /// Every key the generators write into a JSON object column is declared
    /// in CrateDB's DDL with its type: left to dynamic mapping, the first
    /// batches add the keys concurrently on every shard, and CrateDB fails
    /// some of them (2-5 % of the rows on a 3-node cluster).
    #[test]
    fn cratedb_declares_every_object_key_written() {
        use crate::model::Batch;
        let specs = [
            ModelSpec::Cpu(cpu::Options { hosts: 3, extra_tags: 4 }),
            ModelSpec::Cpu(cpu::Options::default()),
            ModelSpec::Measurement(measurement::Options { devices: 2, metrics: 5, jsonb: true }),
        ];
        let table = TableName::parse("doc.t").unwrap();
        for spec in specs {
            let schema = spec.schema();
            let ddl = Dialect { engine: Engine::Cratedb, options: TableOptions::default() }
                .create_table(&table, &schema, None);
            let (object, rest) = ddl[0].split_once("OBJECT(DYNAMIC) AS (").expect("a declared object");
            let declared = rest.split_once(")").expect("closed").0;
            let mut batch = Batch::new(&schema);
            spec.generator(1, 0, 0, 10).next_batch(&mut batch, 10);
            let column = schema.columns.iter().position(|c| c.ty == crate::model::SqlType::Jsonb).unwrap();
            for row in 0..10 {
                let value: serde_json::Value = serde_json::from_str(batch.columns[column].json(row)).unwrap();
                for (key, v) in value.as_object().unwrap() {
                    let ty = if v.is_string() { "TEXT" } else { "DOUBLE PRECISION" };
                    let field = format!("{} {ty}", quote_ident(key));
                    assert!(declared.contains(&field), "{object}: {field} not declared in ({declared})");
                }
            }
        }
    }

    /// `--extra-tags`: declared after TSBS's ten tags.
    #[test]
    fn cratedb_cpu_extra_tags() {
        let schema = ModelSpec::Cpu(cpu::Options { hosts: 1, extra_tags: 3 }).schema();
        let d = Dialect { engine: Engine::Cratedb, options: TableOptions::default() };
        insta::assert_snapshot!(d.create_table(&TableName::parse("doc.cpu").unwrap(), &schema, None).join(";\n\n"));
    }

    /// Issue 32: nodeIngestBench's `--shards 12` on PostgreSQL was refused
    /// (exit 2), so its users' command line did not run there: it runs, and
    /// says that PostgreSQL has no shards; Citus and CrateDB apply it.
    #[test]
    fn shards_are_applied_where_an_engine_has_them_and_said_not_applied_elsewhere() {
        let schema = &models()[0].1;
        let o = TableOptions { shards: Some(12), ..TableOptions::default() };
        for engine in [Engine::Postgres, Engine::Timescaledb, Engine::Citus, Engine::Cratedb] {
            o.check(engine, schema, false).unwrap_or_else(|e| panic!("{engine}: {e}"));
        }
        let said = o.not_applied(Engine::Postgres).expect("said");
        assert_eq!(
            said,
            ("shards", "12 not applied: PostgreSQL has no shards (--partitions N gives hash partitions)".into())
        );
        assert!(o.not_applied(Engine::Timescaledb).is_some_and(|(_, s)| s.contains("TimescaleDB has no shards")));
        assert_eq!((o.not_applied(Engine::Citus), o.not_applied(Engine::Cratedb)), (None, None));
        assert_eq!(TableOptions::default().not_applied(Engine::Postgres), None);
    }

    fn refused(engine: Engine, o: TableOptions) -> String {
        let schema = &models()[0].1;
        let e = o.validate().and_then(|()| o.check(engine, schema, false)).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        e.to_string()
    }

    #[test]
    fn flags_an_engine_has_no_such_thing_for_are_refused() {
        let o = TableOptions::default;
        assert!(refused(Engine::Postgres, TableOptions { replicas: Some("1".into()), ..o() }).contains("--replicas"));
        assert!(refused(Engine::Citus, TableOptions { chunk_interval: Some(60), ..o() }).contains("--chunk-interval"));
        assert!(refused(Engine::Cratedb, TableOptions { partitions: Some(2), ..o() }).contains("--shards"));
        assert!(refused(Engine::Cratedb, TableOptions { unlogged: true, ..o() }).contains("--unlogged"));
        assert!(refused(Engine::Timescaledb, TableOptions { unlogged: true, ..o() }).contains("--no-hypertables"));
        assert!(refused(Engine::Postgres, TableOptions { compress: true, ..o() }).contains("TimescaleDB"));
        let plain = TableOptions { compress: true, no_hypertables: true, ..o() };
        assert!(refused(Engine::Timescaledb, plain).contains("--no-hypertables"));
        // Issue 32: what --no-hypertables asks holds already where there are no hypertables.
        let schema = &models()[0].1;
        for engine in [Engine::Postgres, Engine::Citus, Engine::Cratedb] {
            TableOptions { no_hypertables: true, ..o() }.check(engine, schema, false).unwrap();
        }
        assert!(refused(Engine::Postgres, TableOptions { reference_table: true, ..o() }).contains("Citus"));
        let dist = |c: &str| TableOptions { distribution_column: Some(c.into()), ..o() };
        assert!(refused(Engine::Citus, dist("m1")).contains("unique key"));
        assert!(refused(Engine::Citus, dist("nope")).contains("no such column"));
        assert!(refused(Engine::Cratedb, TableOptions { replicas: Some("one".into()), ..o() }).contains("--replicas"));
        for ok in ["0", "1", "0-1", "0-all"] {
            TableOptions { replicas: Some(ok.into()), ..o() }.validate().unwrap();
        }
        let cpu = &models()[2].1;
        let e = TableOptions::default().check(Engine::Cratedb, cpu, true).unwrap_err().to_string();
        assert!(e.contains("--upsert"), "{e}");
    }

    #[test]
    fn methods_per_engine() {
        Engine::Postgres.check_method(Method::Copy, false).unwrap();
        Engine::Cratedb.check_method(Method::Bulk, true).unwrap();
        let e = Engine::Cratedb.check_method(Method::Copy, false).unwrap_err().to_string();
        assert!(e.contains("no COPY FROM STDIN") && e.contains("insert, unnest"), "{e}");
        let e = Engine::Postgres.check_method(Method::Bulk, false).unwrap_err().to_string();
        assert!(e.contains("cratedb://"), "{e}");
        assert_eq!(Engine::Cratedb.methods(true)[0], Method::Bulk);
    }

    /// Names made from a table's name fit in 63 bytes and stay distinct:
    /// short ones unchanged, long ones (also of multi-byte characters) cut
    /// at a character boundary with the hash of the full name.
    #[test]
    fn derived_names_fit_and_stay_distinct() {
        assert_eq!(derived_name("measurement", "key_idx"), "measurement_key_idx");
        let long = "x".repeat(62);
        let (key, time) = (derived_name(&long, "key_idx"), derived_name(&long, "time_idx"));
        insta::assert_snapshot!(format!("{key}\n{time}"), @r"
        xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_4575b78c_key_idx
        xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_4575b78c_time_idx
        ");
        let other = format!("{}y", "x".repeat(61));
        for table in [long.clone(), other.clone(), "é".repeat(40), format!("a{}", "€".repeat(30))] {
            for suffix in ["key_idx", "time_idx", "p0", "p12", "pdefault"] {
                let name = derived_name(&table, suffix);
                assert!(name.len() <= MAX_NAME_BYTES && name.ends_with(&format!("_{suffix}")), "{name}");
            }
        }
        assert_ne!(derived_name(&long, "p0"), derived_name(&other, "p0"));
        assert_eq!(derived_name(&"x".repeat(51), "key_idx").len(), 59, "fits: kept as is");
    }

    /// The DDL of a 63-byte table name: its indexes and partitions named within 63 bytes.
    #[test]
    fn ddl_of_a_long_table_name() {
        let table = TableName { schema: None, name: format!("t{}", "x".repeat(62)) };
        let o = TableOptions { partitions: Some(2), ..Default::default() };
        let d = Dialect { engine: Engine::Postgres, options: o };
        insta::assert_snapshot!(d.create_table(&table, &models()[0].1, None).join(";\n\n"));
    }
}
