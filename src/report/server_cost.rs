//! The report's "Server cost": what the server paid for the run, beside
//! what the client did. A run that wrote a table gets its size, bytes per
//! row and the WAL written; a query run gets the `pg_stat_statements`
//! counters of its statements. A figure the server could not give is null
//! with its reason, never a guess.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::format::{binary_size, group};
use crate::outcome::{NodeShare, SentStatement, ServerCost, TableSize};
use crate::workload::QuerySpec;

/// The cost of a run that wrote (or read) a table.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TableCost {
    /// The table's bytes after the run (heap, TOAST and maps, summed over
    /// partitions, chunks or shards; CrateDB: its primary shards).
    pub table_bytes: Option<u64>,
    /// Its indexes' bytes; null on CrateDB (a shard holds its own index).
    pub index_bytes: Option<u64>,
    /// CrateDB: every shard copy, replicas included; Citus: a reference
    /// table's copies on every node (`table_bytes` is one copy's).
    pub total_bytes_with_replicas: Option<u64>,
    /// Rows in the table when it was measured.
    pub table_rows: Option<u64>,
    /// `table_bytes / table_rows`.
    pub bytes_per_row: Option<f64>,
    /// `index_bytes / table_rows`.
    pub index_bytes_per_row: Option<f64>,
    /// Why there is no size.
    pub size_unavailable: Option<String>,
    /// WAL written by the whole server (other sessions' too) from the
    /// workers' start to their end, warm-up included.
    pub wal_bytes: Option<u64>,
    /// `wal_bytes` per row written in that window (warm-up included).
    pub wal_bytes_per_row: Option<f64>,
    /// Why there is no WAL figure (CrateDB, Citus, a standby).
    pub wal_unavailable: Option<String>,
    /// TimescaleDB `--compress`.
    pub compression: Option<CompressionReport>,
    /// Why `--compress` failed.
    pub compression_error: Option<String>,
    /// Citus and CrateDB: the table's part on each node; absent on the
    /// engines that keep a table on one server.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(with = "NodesReport"))] // absent or an object, never null
    pub nodes: Option<NodesReport>,
}

/// A node holding this many times the mean of a node (rows, else bytes)
/// or more is noted: with the hash placement of many shards, nodes differ
/// by a few percent; half as much again as its share means a hot node
/// (few distinct distribution values, an unbalanced cluster).
const SKEW: f64 = 1.5;

/// Where a cluster keeps the table, node by node. Read back from a kept
/// report too, for `dbload report --run-id`'s text.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct NodesReport {
    /// Each node that holds or may hold the table's shards, by name; on
    /// CrateDB also the unassigned shards (`node` null).
    pub nodes: Vec<NodeReport>,
    /// What `of_mean` and the skew note compare: `rows`, or `bytes` when
    /// some node's rows could not be counted.
    pub compared: String,
    /// The nodes holding `SKEW` (1.5) times the mean of a node or more, in
    /// words; null when no node does.
    pub skew: Option<String>,
    /// Why there are no per-node figures.
    pub unavailable: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct NodeReport {
    /// `host:port` (Citus) or the node's name (CrateDB); null for shards no node holds.
    pub node: Option<String>,
    /// Shard placements on the node (CrateDB: primary shards).
    pub shards: u64,
    /// CrateDB: replica shards on the node; null on Citus.
    pub replica_shards: Option<u64>,
    /// Rows on the node (CrateDB: documents, replicas' too); null when a shard could not be counted.
    pub rows: Option<u64>,
    /// Bytes of the node's shards.
    pub bytes: u64,
    /// The node's rows (or bytes, see `compared`) over the mean of a node.
    pub of_mean: Option<f64>,
}

impl NodesReport {
    fn of(nodes: &Result<Vec<NodeShare>, String>) -> NodesReport {
        let nodes = match nodes {
            Ok(n) => n,
            Err(why) => {
                let unavailable = Some(why.clone());
                return NodesReport { nodes: Vec::new(), compared: "rows".into(), skew: None, unavailable };
            }
        };
        let assigned: Vec<&NodeShare> = nodes.iter().filter(|n| n.node.is_some()).collect();
        let by_rows = assigned.iter().all(|n| n.rows.is_some());
        let measure = |n: &NodeShare| if by_rows { n.rows.unwrap_or(0) } else { n.bytes } as f64;
        let mean = assigned.iter().map(|n| measure(n)).sum::<f64>() / assigned.len().max(1) as f64;
        let compared = if by_rows { "rows" } else { "bytes" };
        let of_mean = |n: &NodeShare| (n.node.is_some() && mean > 0.0).then(|| measure(n) / mean);
        let hot: Vec<String> = assigned
            .iter()
            .filter_map(|n| Some((n.node.as_deref()?, of_mean(n)?)))
            .filter(|(_, r)| assigned.len() > 1 && *r >= SKEW)
            .map(|(name, r)| format!("{name} holds {r:.2}× the mean {compared} of a node"))
            .collect();
        NodesReport {
            nodes: nodes
                .iter()
                .map(|n| NodeReport {
                    node: n.node.clone(),
                    shards: n.shards,
                    replica_shards: n.replica_shards,
                    rows: n.rows,
                    bytes: n.bytes,
                    of_mean: of_mean(n),
                })
                .collect(),
            compared: compared.into(),
            skew: (!hot.is_empty()).then(|| format!("skewed placement: {}", hot.join("; "))),
            unavailable: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CompressionReport {
    pub chunks: u64,
    /// Table and index bytes before compression.
    pub before_bytes: u64,
    pub after_bytes: u64,
    /// `before_bytes / after_bytes`.
    pub ratio: Option<f64>,
}

/// Table and index bytes together.
fn total(s: &TableSize) -> u64 {
    s.table_bytes + s.index_bytes.unwrap_or(0)
}

/// Bytes per unit; none for no units.
fn per(bytes: u64, n: u64) -> Option<f64> {
    (n > 0).then(|| bytes as f64 / n as f64)
}

impl TableCost {
    /// `rows_written`: the rows acknowledged while the WAL was measured.
    pub(crate) fn of(c: &ServerCost, rows_written: u64) -> Option<TableCost> {
        if c.size.is_none() && c.wal_bytes.is_none() {
            return None; // a dry run: no server
        }
        let size = c.size.as_ref().and_then(|s| s.as_ref().ok());
        let wal = c.wal_bytes.as_ref().and_then(|w| w.as_ref().ok()).copied();
        let compression = c.compression.as_ref().and_then(|r| r.as_ref().ok()).map(|x| CompressionReport {
            chunks: x.chunks,
            before_bytes: total(&x.before),
            after_bytes: total(&x.after),
            ratio: (total(&x.after) > 0).then(|| total(&x.before) as f64 / total(&x.after) as f64),
        });
        Some(TableCost {
            table_bytes: size.map(|s| s.table_bytes),
            index_bytes: size.and_then(|s| s.index_bytes),
            total_bytes_with_replicas: size.and_then(|s| s.with_replicas_bytes),
            table_rows: size.map(|s| s.rows),
            bytes_per_row: size.and_then(|s| per(s.table_bytes, s.rows)),
            index_bytes_per_row: size.and_then(|s| per(s.index_bytes?, s.rows)),
            size_unavailable: c.size.as_ref().and_then(|s| s.as_ref().err()).cloned(),
            wal_bytes: wal,
            wal_bytes_per_row: wal.and_then(|w| per(w, rows_written)),
            wal_unavailable: c.wal_bytes.as_ref().and_then(|w| w.as_ref().err()).cloned(),
            compression,
            compression_error: c.compression.as_ref().and_then(|r| r.as_ref().err()).cloned(),
            nodes: c.nodes.as_ref().map(NodesReport::of),
        })
    }
}

/// The cost of a query run: `pg_stat_statements` over the run.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct QueryCost {
    /// Why there are no counters (the extension not installed, CrateDB).
    pub statements_unavailable: Option<String>,
    /// One per statement that pg_stat_statements saw run in the run's window
    /// (warm-up and any other session's runs of the same statement included).
    pub statements: Vec<StatementReport>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct StatementReport {
    /// The query's name in the run; queries that differ only in their
    /// constants are one statement to pg_stat_statements: their names joined by ` + `.
    pub name: String,
    pub calls: u64,
    pub total_exec_ms: f64,
    pub mean_exec_ms: f64,
    pub rows: u64,
    pub shared_blks_hit: u64,
    pub shared_blks_read: u64,
}

impl QueryCost {
    /// `queries`: the run's, in the order the statements' indexes count.
    pub(crate) fn of<'a>(
        statements: &Result<Vec<SentStatement>, String>,
        queries: impl Iterator<Item = &'a QuerySpec>,
    ) -> QueryCost {
        match statements {
            Err(why) => QueryCost { statements_unavailable: Some(why.clone()), statements: Vec::new() },
            Ok(sent) => {
                let names: Vec<&str> = queries.map(|q| q.name.as_str()).collect();
                let statements = sent.iter().map(|s| {
                    let (name, c) = (s.queries.iter().map(|&i| names[i]).collect::<Vec<_>>().join(" + "), &s.cost);
                    StatementReport {
                        name,
                        calls: c.calls,
                        total_exec_ms: c.total_exec_ms,
                        mean_exec_ms: c.total_exec_ms / c.calls.max(1) as f64,
                        rows: c.rows,
                        shared_blks_hit: c.shared_blks_hit,
                        shared_blks_read: c.shared_blks_read,
                    }
                });
                QueryCost { statements_unavailable: None, statements: statements.collect() }
            }
        }
    }
}

/// The text report's "Server cost" lines of a run that wrote a table.
pub(crate) fn table_lines(out: &mut String, c: &TableCost) {
    let size = |b: u64| binary_size(b as f64);
    match (c.table_bytes, c.table_rows) {
        (Some(table), Some(rows)) => {
            let per_row = c.bytes_per_row.map(|b| format!(" = {}/row", binary_size(b))).unwrap_or_default();
            let index = match (c.index_bytes, c.index_bytes_per_row) {
                (Some(i), Some(per)) => format!("; indexes {} = {}/row", size(i), binary_size(per)),
                (Some(i), None) => format!("; indexes {}", size(i)),
                _ => String::new(),
            };
            let replicas =
                c.total_bytes_with_replicas.map(|b| format!("; {} with replicas", size(b))).unwrap_or_default();
            let _ =
                writeln!(out, "Server cost: table {} for {} rows{per_row}{index}{replicas}", size(table), group(rows));
        }
        _ => {
            let why = c.size_unavailable.as_deref().unwrap_or("unknown");
            let _ = writeln!(out, "Server cost: table size unavailable ({why})");
        }
    }
    match (c.wal_bytes, &c.wal_unavailable) {
        (Some(wal), _) => {
            let per_row =
                c.wal_bytes_per_row.map(|b| format!(" = {} per row written", binary_size(b))).unwrap_or_default();
            let _ = writeln!(out, "             WAL {} while the workers ran{per_row} (server-wide)", size(wal));
        }
        (None, Some(why)) => {
            let _ = writeln!(out, "             WAL unavailable ({why})");
        }
        (None, None) => {}
    }
    if let Some(x) = &c.compression {
        let ratio = x.ratio.map(|r| format!(" ({r:.1}×)")).unwrap_or_default();
        let _ = writeln!(
            out,
            "             compressed {} chunks: {} → {}{ratio}",
            group(x.chunks),
            size(x.before_bytes),
            size(x.after_bytes)
        );
    }
    if let Some(e) = &c.compression_error {
        let _ = writeln!(out, "             --compress failed: {e}");
    }
    if let Some(n) = &c.nodes {
        node_lines(out, n);
    }
}

/// The text report's table of the nodes' parts.
pub fn node_lines(out: &mut String, n: &NodesReport) {
    if let Some(why) = &n.unavailable {
        let _ = writeln!(out, "Per node: unavailable ({why})");
        return;
    }
    let _ = writeln!(out, "Per node:");
    let dash = || "-".to_string();
    let mut rows = vec![["node", "shards", "replicas", "rows", "size", "of mean"].map(String::from).to_vec()];
    for node in &n.nodes {
        rows.push(vec![
            node.node.clone().unwrap_or_else(|| "(unassigned)".into()),
            group(node.shards),
            node.replica_shards.map_or_else(dash, group),
            node.rows.map_or_else(dash, group),
            binary_size(node.bytes as f64),
            node.of_mean.map_or_else(dash, |r| format!("{r:.2}×")),
        ]);
    }
    out.push_str(&super::table::columns(&rows, "    ", |c| c > 0));
    if let Some(skew) = &n.skew {
        let _ = writeln!(out, "    {skew}");
    }
}

/// The text report's "Server cost" lines of a query run.
pub(crate) fn query_lines(out: &mut String, c: &QueryCost) {
    if let Some(why) = &c.statements_unavailable {
        let _ = writeln!(out, "Server cost: {why}");
        return;
    }
    if c.statements.is_empty() {
        out.push_str("Server cost: pg_stat_statements saw none of the run's statements\n");
        return;
    }
    let width = c.statements.iter().map(|s| s.name.len()).max().unwrap_or(0).max(5);
    let _ = writeln!(out, "Server cost (pg_stat_statements over the run):");
    let _ = writeln!(
        out,
        "    {:<width$}  {:>9}  {:>11}  {:>9}  {:>11}  {:>11}  {:>11}",
        "query", "calls", "total ms", "mean ms", "rows", "blks hit", "blks read"
    );
    for s in &c.statements {
        let _ = writeln!(
            out,
            "    {:<width$}  {:>9}  {:>11.1}  {:>9.3}  {:>11}  {:>11}  {:>11}",
            s.name,
            group(s.calls),
            s.total_exec_ms,
            s.mean_exec_ms,
            group(s.rows),
            group(s.shared_blks_hit),
            group(s.shared_blks_read)
        );
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn the_text_names_each_figure_or_why_it_is_missing() {
        let size =
            TableSize { table_bytes: 8 << 20, index_bytes: Some(2 << 20), with_replicas_bytes: None, rows: 100_000 };
        let cost = ServerCost {
            size: Some(Ok(size)),
            wal_bytes: Some(Err("the server is a standby".into())),
            compression: Some(Ok(crate::outcome::Compression {
                chunks: 3,
                before: size,
                after: TableSize { table_bytes: 1 << 20, index_bytes: Some(0), ..size },
            })),
            nodes: None,
        };
        let mut out = String::new();
        table_lines(&mut out, &TableCost::of(&cost, 100_000).unwrap());
        insta::assert_snapshot!(out, @r"
        Server cost: table 8.0 MiB for 100,000 rows = 84 B/row; indexes 2.0 MiB = 21 B/row
                     WAL unavailable (the server is a standby)
                     compressed 3 chunks: 10.0 MiB → 1.0 MiB (10.0×)
        ");
        assert!(TableCost::of(&ServerCost::default(), 0).is_none(), "a dry run has no server cost");
    }

    pub(crate) fn share(node: Option<&str>, shards: u64, rows: Option<u64>, bytes: u64) -> NodeShare {
        NodeShare { node: node.map(String::from), shards, replica_shards: None, rows, bytes }
    }

    pub(crate) fn cost_with(nodes: Result<Vec<NodeShare>, String>) -> TableCost {
        let size =
            TableSize { table_bytes: 8 << 20, index_bytes: Some(2 << 20), with_replicas_bytes: None, rows: 4000 };
        TableCost::of(&ServerCost { size: Some(Ok(size)), nodes: Some(nodes), ..Default::default() }, 4000).unwrap()
    }

    #[test]
    fn each_node_is_shown_and_a_hot_one_is_noted() {
        let even = cost_with(Ok(vec![
            share(Some("10.0.0.1:5432"), 16, Some(2010), 5 << 20),
            share(Some("10.0.0.2:5432"), 16, Some(1990), 5 << 20),
        ]));
        let n = even.nodes.as_ref().unwrap();
        assert_eq!((n.compared.as_str(), &n.skew), ("rows", &None));
        assert!((n.nodes[0].of_mean.unwrap() - 1.005).abs() < 1e-9);
        // One node given all the rows: 3 nodes, 3× the mean.
        let hot = cost_with(Ok(vec![
            share(Some("w1:5432"), 11, Some(4000), 7 << 20),
            share(Some("w2:5432"), 11, Some(0), 1 << 20),
            share(Some("w3:5432"), 10, Some(0), 1 << 20),
        ]));
        let mut out = String::new();
        node_lines(&mut out, hot.nodes.as_ref().unwrap());
        insta::assert_snapshot!(out, @r"
        Per node:
            node     shards  replicas   rows     size  of mean
            w1:5432      11         -  4,000  7.0 MiB    3.00×
            w2:5432      11         -      0  1.0 MiB    0.00×
            w3:5432      10         -      0  1.0 MiB    0.00×
            skewed placement: w1:5432 holds 3.00× the mean rows of a node
        ");
        // A shard that could not be counted: compared by bytes; unassigned shards are no node.
        let by_bytes = cost_with(Ok(vec![
            share(Some("a"), 2, Some(10), 3 << 20),
            share(Some("b"), 2, None, 1 << 20),
            share(None, 0, Some(0), 0),
        ]));
        let n = by_bytes.nodes.as_ref().unwrap();
        assert_eq!(n.compared, "bytes");
        assert_eq!(n.nodes[0].of_mean, Some(1.5));
        assert_eq!(n.nodes[2].of_mean, None);
        assert!(n.skew.as_deref().is_some_and(|s| s.contains("a holds 1.50× the mean bytes")), "{:?}", n.skew);
        let failed = cost_with(Err("permission denied for function run_command_on_shards".into()));
        let mut out = String::new();
        table_lines(&mut out, &failed);
        assert!(
            out.ends_with("Per node: unavailable (permission denied for function run_command_on_shards)\n"),
            "{out}"
        );
        let json = serde_json::to_value(TableCost::of(&ServerCost::default(), 0)).unwrap();
        assert!(json.is_null());
        let single = TableCost { nodes: None, ..even };
        assert!(serde_json::to_value(&single).unwrap().get("nodes").is_none(), "absent on one server");
    }
}
