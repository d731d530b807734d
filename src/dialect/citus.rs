//! Citus: PostgreSQL's table distributed across worker nodes by hash of a
//! column (`create_distributed_table`), or copied to every node
//! (`create_reference_table`). COPY and INSERT both go through the
//! coordinator, so the ingest methods are PostgreSQL's.
//!
//! The models keep their series (tags) in the row itself, so there is no
//! separate tags table to co-locate.

use anyhow::Result;

use super::{literal, postgres, quote_ident, series_column, TableName, TableOptions};
use crate::error::usage;
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
