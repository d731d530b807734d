//! What the server paid for a run, asked of each engine by its own
//! functions: the table's and its indexes' size, the WAL written, the
//! `pg_stat_statements` counters of the statements a run sent, and
//! TimescaleDB's compression. One module for the one concern (the engines'
//! variants side by side, frozen by one snapshot), beside the engines'
//! DDL modules rather than spread through them.

use super::{literal, Engine};
use crate::ident::{quote_ident, TableName};
use crate::model::Schema;

/// One row: the table's bytes (heap, TOAST and maps; CrateDB: its primary
/// shards; Citus: one copy of each shard), its indexes' bytes (NULL on
/// CrateDB, whose index is the shard), and the bytes with replicas
/// (CrateDB; Citus' reference tables, a copy on every node; NULL elsewhere).
pub fn table_size(engine: Engine, table: &TableName) -> String {
    let regclass = format!("{}::regclass", literal(&table.sql()));
    match engine {
        // A hypertable's rows are in its chunks, which inherit from it: hypertable_detailed_size
        // sums them (one row per data node on a distributed hypertable of 2.x before 2.14). It
        // gives no row for a plain table (--no-hypertables, insert-from-sql's own): PostgreSQL's then.
        Engine::Timescaledb => format!(
            "SELECT coalesce(h.table_bytes, p.table_bytes), coalesce(h.index_bytes, p.index_bytes), NULL \
             FROM (SELECT sum(table_bytes + coalesce(toast_bytes, 0))::bigint AS table_bytes, \
             sum(index_bytes)::bigint AS index_bytes FROM hypertable_detailed_size({regclass})) AS h, ({}) AS p",
            partitions_size(&regclass)
        ),
        // The shards live on the workers; the coordinator's own table is empty. Citus' sizes add
        // every placement: a reference table's full copy on each node counts once per node, so
        // one copy's bytes are the sizes over the copies (placements per shard), and every copy's
        // are the bytes with replicas (as CrateDB's).
        Engine::Citus => format!(
            "SELECT citus_table_size(t) / copies, (citus_total_relation_size(t) - citus_table_size(t)) / copies, \
             CASE WHEN copies > 1 THEN citus_total_relation_size(t) END \
             FROM (SELECT t, greatest((SELECT count(*) FROM pg_dist_placement JOIN pg_dist_shard USING (shardid) \
             WHERE logicalrelid = t) / greatest((SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = t), 1), 1) \
             AS copies FROM (SELECT {regclass} AS t) AS r) AS relation"
        ),
        Engine::Cratedb => {
            let schema = table.schema.as_deref().map_or("CURRENT_SCHEMA".into(), literal);
            format!(
                "SELECT sum(CASE WHEN \"primary\" THEN size ELSE 0 END), NULL, sum(size) FROM sys.shards \
                 WHERE schema_name = {schema} AND table_name = {}",
                literal(&table.name)
            )
        }
        Engine::Postgres => format!("SELECT table_bytes, index_bytes, NULL FROM ({}) AS p", partitions_size(&regclass)),
    }
}

/// The table's part on each node of a cluster, one row per node: the
/// node, its shards (CrateDB: primaries), its replica shards (NULL on
/// Citus), its rows (NULL when a shard could not be counted) and its
/// shards' bytes. None for the engines that keep a table on one server.
///
/// Citus: `citus_shards` (one row per shard placement, with its size from
/// `citus_shard_sizes`) on every active primary node that may hold shards
/// or holds some of this table (a node given no shard shows as 0, which is
/// the skew worth seeing), and each shard's rows counted where it lives by
/// `run_command_on_shards`. CrateDB: `sys.shards` grouped by the node that
/// holds each copy; an unassigned shard has no node (NULL).
pub fn node_shares(engine: Engine, table: &TableName) -> Option<String> {
    let regclass = format!("{}::regclass", literal(&table.sql()));
    match engine {
        Engine::Citus => Some(format!(
            "SELECT n.nodename || ':' || n.nodeport, count(s.shardid), NULL, \
             CASE WHEN bool_and(c.success) IS NOT FALSE THEN coalesce(sum(CASE WHEN c.success THEN c.result::bigint END), 0) END, \
             coalesce(sum(s.shard_size), 0)::bigint \
             FROM pg_dist_node n \
             LEFT JOIN citus_shards s ON s.nodename = n.nodename AND s.nodeport = n.nodeport AND s.table_name = {regclass} \
             LEFT JOIN run_command_on_shards({regclass}, 'SELECT count(*) FROM %s') c ON c.shardid = s.shardid \
             WHERE n.isactive AND n.noderole = 'primary' AND (n.shouldhaveshards OR s.shardid IS NOT NULL) \
             GROUP BY n.nodename, n.nodeport ORDER BY n.nodename, n.nodeport"
        )),
        Engine::Cratedb => {
            let schema = table.schema.as_deref().map_or("CURRENT_SCHEMA".into(), literal);
            Some(format!(
                "SELECT node['name'], sum(CASE WHEN \"primary\" THEN 1 ELSE 0 END), \
                 sum(CASE WHEN \"primary\" THEN 0 ELSE 1 END), sum(num_docs), sum(size) FROM sys.shards \
                 WHERE schema_name = {schema} AND table_name = {} GROUP BY node['name'] ORDER BY node['name']",
                literal(&table.name)
            ))
        }
        Engine::Postgres | Engine::Timescaledb => None,
    }
}

/// PostgreSQL's `table_bytes` and `index_bytes` of `regclass`. A
/// partitioned table holds no rows itself (its size and its partitioned
/// indexes' are 0): its partitions do. A plain table has no partition
/// tree, so it is named on its own.
fn partitions_size(regclass: &str) -> String {
    format!(
        "SELECT sum(pg_table_size(relid))::bigint AS table_bytes, sum(pg_indexes_size(relid))::bigint AS index_bytes \
         FROM (SELECT {regclass} AS relid UNION SELECT relid FROM pg_partition_tree({regclass})) AS parts"
    )
}

/// The current WAL position, or NULL on a standby (which writes none of its own).
pub const WAL_POSITION: &str = "SELECT CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_current_wal_lsn()::text END";

/// Bytes of WAL the whole server wrote since `position` (from [`WAL_POSITION`]).
pub fn wal_since(position: &str) -> String {
    format!("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), {}::pg_lsn)::bigint", literal(position))
}

/// `pg_stat_statements` in the connected database: its version and schema; no row when not installed.
pub const STATEMENTS_EXTENSION: &str = "SELECT e.extversion, n.nspname::text FROM pg_extension e \
     JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_stat_statements'";

/// The counters of every statement of the connected database, one row per
/// statement (`queryid`) and user: queryid, text, calls, total execution
/// time (ms), rows, shared blocks hit and read. `schema`: where the
/// extension was installed. Needs the extension's 1.8 (PostgreSQL 13) names.
pub fn statements(schema: &str) -> String {
    format!(
        "SELECT userid::text || '/' || queryid::text, min(query), sum(calls)::bigint, sum(total_exec_time), \
         sum(rows)::bigint, sum(shared_blks_hit)::bigint, sum(shared_blks_read)::bigint \
         FROM {}.pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) \
         GROUP BY userid, queryid",
        quote_ident(schema)
    )
}

/// TimescaleDB `--compress`: compression enabled on the hypertable, then
/// every chunk compressed; the last statement counts them. Segmented by the
/// columns the key reads before time (TimescaleDB's advice, the columns
/// queries filter on, and a unique index must include them): measurement's
/// device_id, and the cpu model's tags, whose hostname is its series, as
/// TSBS segments by its tags' id. Left to choose, TimescaleDB 2.28 segments
/// the cpu model by nothing: a query of one host then decompresses every
/// host's rows (4 times slower for TSBS's 12-hour single-host queries).
pub fn compress(table: &TableName, schema: &Schema) -> Vec<String> {
    let regclass = format!("{}::regclass", literal(&table.sql()));
    let series = &schema.key[..schema.key.len().saturating_sub(1)];
    // A key entry is a quoted column or an expression of quoted columns.
    let plain: Vec<&str> = schema
        .columns
        .iter()
        .filter(|c| series.iter().any(|k| k.contains(&quote_ident(&c.name))))
        .map(|c| c.name.as_str())
        .collect();
    let segment = match plain.len() {
        0 => String::new(),
        _ => {
            let columns = plain.iter().map(|c| quote_ident(c)).collect::<Vec<_>>().join(", ");
            format!(", timescaledb.compress_segmentby = {}", literal(&columns))
        }
    };
    vec![
        format!("ALTER TABLE {} SET (timescaledb.compress{segment})", table.sql()),
        format!("SELECT count(compress_chunk(c, if_not_compressed => true)) FROM show_chunks({regclass}) AS c"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{measurement, ModelSpec};

    /// Every engine's size query, the WAL and statement counters, and TimescaleDB's compression.
    #[test]
    fn server_cost_sql() {
        let table = TableName::parse("Bench.Measurement").unwrap();
        let schema = ModelSpec::Measurement(measurement::Options { devices: 1, metrics: 2, jsonb: false }).schema();
        let mut sql = Vec::new();
        for engine in [Engine::Postgres, Engine::Timescaledb, Engine::Citus, Engine::Cratedb] {
            sql.push(format!("-- size, {engine}\n{}", table_size(engine, &table)));
        }
        let unqualified = TableName::parse("cpu").unwrap();
        sql.push(format!("-- size, cratedb, session schema\n{}", table_size(Engine::Cratedb, &unqualified)));
        sql.extend([WAL_POSITION.to_string(), wal_since("0/1A2B3C4"), STATEMENTS_EXTENSION.into(), statements("ext")]);
        sql.extend(compress(&table, &schema));
        sql.extend(compress(&table, &ModelSpec::Cpu(crate::model::cpu::Options::default()).schema()));
        insta::assert_snapshot!(sql.join(";\n\n"));
    }

    /// Citus' and CrateDB's per-node queries; none on the single-server engines.
    #[test]
    fn node_shares_sql() {
        let table = TableName::parse("Bench.Measurement").unwrap();
        let mut sql = Vec::new();
        for engine in [Engine::Citus, Engine::Cratedb] {
            sql.push(format!("-- nodes, {engine}\n{}", node_shares(engine, &table).unwrap()));
        }
        let unqualified = TableName::parse("cpu").unwrap();
        sql.push(format!("-- nodes, cratedb, session schema\n{}", node_shares(Engine::Cratedb, &unqualified).unwrap()));
        insta::assert_snapshot!(sql.join(";\n\n"));
        assert_eq!(node_shares(Engine::Postgres, &table), None);
        assert_eq!(node_shares(Engine::Timescaledb, &table), None);
    }
}
