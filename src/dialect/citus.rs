//! Citus: PostgreSQL's table distributed across worker nodes by hash of a
//! column (`create_distributed_table`), or copied to every node
//! (`create_reference_table`). COPY and INSERT both go through the
//! coordinator, so the ingest methods are PostgreSQL's.
//!
//! The models keep their series (tags) in the row itself, so there is no
//! separate tags table to co-locate.

use anyhow::Result;

use super::{literal, postgres, series_column, TableOptions};

use crate::error::usage;
use crate::ident::{quote_ident, TableName};
use crate::model::Schema;

/// Citus enforces a unique index only if it includes the distribution
/// column, so that column must be part of the model's key.
pub(super) fn check(o: &TableOptions, schema: &Schema) -> Result<()> {
    if o.reference_table && (o.shards.is_some() || o.distribution_column.is_some()) {
        return Err(usage(
            "--reference-table puts a full copy on every node: it has no --shards or --distribution-column",
        ));
    }
    if let Some(col) = &o.distribution_column {
        if !schema.columns.iter().any(|c| c.name == *col) {
            let names = schema.columns.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ");
            return Err(usage(format!("--distribution-column {col}: the table has no such column; it has {names}")));
        }
        if !schema.key.contains(&quote_ident(col)) {
            let key = schema.key.join(", ");
            return Err(usage(format!(
                "--distribution-column {col}: Citus needs the unique key ({key}) to include the distribution column; pick a plain column of it"
            )));
        }
    }
    Ok(())
}

/// PostgreSQL's table and indexes, then distributed (or replicated).
pub fn create_table(table: &TableName, schema: &Schema, o: &TableOptions) -> Vec<String> {
    let mut ddl = vec![postgres::create_plain(table, schema, o.unlogged)];
    ddl.extend(postgres::indexes(table, schema));
    let name = literal(&table.sql());
    if o.reference_table {
        ddl.push(format!("SELECT create_reference_table({name})"));
    } else {
        let column = o.distribution_column.as_deref().unwrap_or(series_column(schema));
        let shards = o.shards.map(|n| format!(", shard_count => {n}")).unwrap_or_default();
        ddl.push(format!("SELECT create_distributed_table({name}, {}{shards})", literal(column)));
    }
    ddl
}

/// The distribution, shards and worker nodes of the table.
pub(super) fn layout_queries(regclass: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "distribution column",
            format!("SELECT column_to_column_name(logicalrelid, partkey) FROM pg_dist_partition WHERE logicalrelid = {regclass}"),
        ),
        ("shards", format!("SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = {regclass}")),
        (
            "worker nodes",
            "SELECT string_agg(node_name || ':' || node_port, ', ' ORDER BY node_name, node_port) FROM citus_get_active_worker_nodes()".into(),
        ),
    ]
}

/// The settings of every worker node, which run the shards and so decide
/// how fast and how durably rows are written: per node (`host:port`),
/// whether the command ran there, and the settings as one JSON object (or
/// the node's error). Citus' `run_command_on_workers` returns one row per node.
pub fn worker_settings() -> String {
    format!(
        "SELECT nodename || ':' || nodeport, success, result FROM run_command_on_workers({}) ORDER BY nodename, nodeport",
        literal(&postgres::reported_settings_json())
    )
}

/// A worker node's settings, or why they could not be read there.
pub type NodeSettings = (String, Result<Vec<(String, String)>, String>);

/// The rows of [`worker_settings`], in their order: a node whose command
/// failed, or whose result is not the JSON object asked for, keeps its
/// error, so the report says so rather than leaving the node out.
pub fn parse_worker_settings(rows: &[Vec<Option<String>>]) -> Vec<NodeSettings> {
    rows.iter()
        .map(|row| {
            let field = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
            let (node, success, result) = (field(0), field(1), field(2));
            if success != "t" {
                return (node, Err(result));
            }
            let parsed = serde_json::from_str::<std::collections::BTreeMap<String, String>>(&result)
                .map(|m| m.into_iter().collect())
                .map_err(|e| format!("unexpected result {result:?}: {e}"));
            (node, parsed)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_settings_sql() {
        insta::assert_snapshot!(worker_settings());
    }

    #[test]
    fn worker_settings_are_parsed_per_node() {
        let row = |node: &str, ok: &str, result: &str| vec![Some(node.into()), Some(ok.into()), Some(result.into())];
        let rows = [
            row("w1:5432", "t", r#"{ "fsync" : "on", "shared_buffers" : "512MB", "synchronous_commit" : "off" }"#),
            row("w2:5432", "f", "connection to the remote node w2:5432 failed"),
            row("w3:5432", "t", "not json"),
        ];
        let parsed = parse_worker_settings(&rows);
        let pairs = |v: &[(&str, &str)]| v.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>();
        assert_eq!(parsed[0].0, "w1:5432");
        assert_eq!(
            parsed[0].1,
            Ok(pairs(&[("fsync", "on"), ("shared_buffers", "512MB"), ("synchronous_commit", "off")]))
        );
        assert_eq!(parsed[1], ("w2:5432".into(), Err("connection to the remote node w2:5432 failed".into())));
        assert!(parsed[2].1.as_ref().is_err_and(|e| e.contains("not json")), "{:?}", parsed[2]);
    }
}
