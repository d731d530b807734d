//! What the server paid for a run, read on the run's admin connection: the
//! table's size after it, the WAL written while the workers ran, and the
//! `pg_stat_statements` counters of the statements a query run sent. Each
//! is best effort: a figure the server cannot give becomes the reason in
//! the report, never a failed run.

use std::collections::HashMap;

use crate::dialect::{cost as sql, count_rows, cratedb, Engine};
use crate::driver::Admin;
use crate::ident::TableName;
use crate::outcome::{Compression, NodeShare, SentStatement, StatementCost, TableSize};

/// The table's size by the engine's own functions, and its rows (`rows`
/// when the run has just counted them, else counted now).
pub(crate) async fn table_size(
    admin: &mut Admin,
    engine: Engine,
    table: &TableName,
    rows: Option<u64>,
) -> Result<TableSize, String> {
    let failed = |e: anyhow::Error| format!("{e:#}");
    if engine == Engine::Cratedb {
        // CrateDB's shard sizes and counts include only refreshed segments.
        admin.execute(&cratedb::refresh(table)).await.map_err(failed)?;
    }
    let rows = match rows {
        Some(n) => n,
        None => admin.count(&count_rows(table)).await.map_err(failed)?,
    };
    let found = admin.rows(&sql::table_size(engine, table)).await.map_err(failed)?;
    let row = found.into_iter().next().unwrap_or_default();
    let number = |i: usize| row.get(i).cloned().flatten().and_then(|v| v.parse::<u64>().ok());
    let table_bytes = number(0).ok_or_else(|| format!("the server gave no size for {table}"))?;
    Ok(TableSize { table_bytes, index_bytes: number(1), with_replicas_bytes: number(2), rows })
}

/// The table's part on each node (Citus, CrateDB), by the engine's own
/// views; none on the engines that keep a table on one server. On CrateDB,
/// after [`table_size`] has refreshed the table.
pub(crate) async fn node_shares(
    admin: &mut Admin,
    engine: Engine,
    table: &TableName,
) -> Option<Result<Vec<NodeShare>, String>> {
    let query = sql::node_shares(engine, table)?;
    Some(admin.rows(&query).await.map_err(|e| format!("{e:#}")).and_then(|rows| parse_node_shares(&rows)))
}

/// The rows of [`sql::node_shares`]: node, shards, replica shards, rows,
/// bytes. A NULL node is an unassigned shard; a NULL row count, a shard
/// that could not be counted.
fn parse_node_shares(rows: &[Vec<Option<String>>]) -> Result<Vec<NodeShare>, String> {
    rows.iter()
        .map(|row| {
            let field = |i: usize| row.get(i).cloned().flatten();
            let number = |i: usize| -> Result<Option<u64>, String> {
                field(i).map(|v| v.parse::<u64>().map_err(|e| format!("per-node figures: {v:?}: {e}"))).transpose()
            };
            Ok(NodeShare {
                node: field(0),
                shards: number(1)?.unwrap_or(0),
                replica_shards: number(2)?,
                rows: number(3)?,
                bytes: number(4)?.unwrap_or(0),
            })
        })
        .collect()
}

/// TimescaleDB `--compress`: every chunk compressed, the hypertable
/// measured before and after (`before`: as loaded).
pub(crate) async fn compress(
    admin: &mut Admin,
    table: &TableName,
    schema: &crate::model::Schema,
    before: TableSize,
) -> Result<Compression, String> {
    let mut chunks = None;
    for stmt in sql::compress(table, schema) {
        chunks = admin.scalar(&stmt).await.map_err(|e| format!("{stmt}: {e:#}"))?;
    }
    let chunks = chunks.and_then(|n| n.parse().ok()).unwrap_or_default();
    let after = table_size(admin, Engine::Timescaledb, table, Some(before.rows)).await?;
    Ok(Compression { chunks, before, after })
}

/// The server's WAL position before the workers start, or why none is read.
pub(crate) async fn wal_position(admin: &mut Admin, engine: Engine) -> Result<String, String> {
    match engine {
        Engine::Cratedb => return Err("CrateDB writes no WAL of PostgreSQL's kind".into()),
        Engine::Citus => {
            return Err("Citus writes the rows' WAL on its worker nodes; the coordinator's alone would mislead".into())
        }
        Engine::Postgres | Engine::Timescaledb => {}
    }
    match admin.scalar(sql::WAL_POSITION).await {
        Ok(Some(lsn)) => Ok(lsn),
        Ok(None) => Err("the server is a standby (in recovery): it writes no WAL of its own".into()),
        Err(e) => Err(format!("reading the WAL position: {e:#}")),
    }
}

/// Bytes of WAL the server wrote since `start` (from [`wal_position`]).
pub(crate) async fn wal_since(admin: &mut Admin, start: Result<String, String>) -> Result<u64, String> {
    let start = start?;
    let bytes = admin.scalar(&sql::wal_since(&start)).await.map_err(|e| format!("reading the WAL position: {e:#}"))?;
    bytes.and_then(|b| b.parse().ok()).ok_or_else(|| "the server gave no WAL position".into())
}

/// `pg_stat_statements` at one moment: each statement's text and counters, by user and queryid.
pub(crate) struct Snapshot(HashMap<String, (String, StatementCost)>);

/// The counters of every statement of the target's database now, or why
/// there are none. `engine`: as detected, since CrateDB answers over the
/// PostgreSQL protocol too.
pub(crate) async fn statements(admin: &mut Admin, engine: Engine) -> Result<Snapshot, String> {
    if engine == Engine::Cratedb {
        return Err("CrateDB has no pg_stat_statements".into());
    }
    let not_installed = "pg_stat_statements is not installed in this database (CREATE EXTENSION \
                         pg_stat_statements, with it in shared_preload_libraries, to see the server's counters per query)";
    let found = admin.rows(sql::STATEMENTS_EXTENSION).await.map_err(|e| format!("{e:#}"))?;
    let schema = found.into_iter().next().and_then(|r| r.get(1).cloned().flatten()).ok_or(not_installed)?;
    let rows = admin.rows(&sql::statements(&schema)).await.map_err(|e| format!("pg_stat_statements: {e:#}"))?;
    let mut all = HashMap::with_capacity(rows.len());
    for row in rows {
        let text = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
        let int = |i: usize| text(i).parse::<u64>().unwrap_or_default();
        let cost = StatementCost {
            calls: int(2),
            total_exec_ms: text(3).parse().unwrap_or_default(),
            rows: int(4),
            shared_blks_hit: int(5),
            shared_blks_read: int(6),
        };
        all.insert(text(0), (text(1), cost));
    }
    Ok(Snapshot(all))
}

/// What each statement of `queries` cost between `before` and `after`:
/// the counters of every statement that ran in between whose text has the
/// query's shape (pg_stat_statements shows constants as `$1`, as a
/// prepared statement's parameters; both count as one placeholder),
/// summed (a statement run by two users is two entries). Queries of one
/// shape share one entry; a shape that did not run has none.
pub(crate) fn deltas<'a>(
    before: &Snapshot,
    after: &Snapshot,
    queries: impl Iterator<Item = &'a str>,
) -> Vec<SentStatement> {
    let ran: Vec<(String, StatementCost)> = after
        .0
        .iter()
        .filter_map(|(key, (text, now))| {
            let then = before.0.get(key).map(|(_, c)| *c).unwrap_or_default();
            let d = StatementCost {
                calls: now.calls.saturating_sub(then.calls),
                total_exec_ms: (now.total_exec_ms - then.total_exec_ms).max(0.0),
                rows: now.rows.saturating_sub(then.rows),
                shared_blks_hit: now.shared_blks_hit.saturating_sub(then.shared_blks_hit),
                shared_blks_read: now.shared_blks_read.saturating_sub(then.shared_blks_read),
            };
            (d.calls > 0).then(|| (shape(text), d))
        })
        .collect();
    let mut shapes: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, q) in queries.enumerate() {
        let want = shape(q);
        match shapes.iter_mut().find(|(s, _)| *s == want) {
            Some((_, same)) => same.push(i),
            None => shapes.push((want, vec![i])),
        }
    }
    shapes
        .into_iter()
        .filter_map(|(want, queries)| {
            let cost = ran.iter().filter(|(s, _)| *s == want).map(|(_, d)| *d).reduce(|a, b| StatementCost {
                calls: a.calls + b.calls,
                total_exec_ms: a.total_exec_ms + b.total_exec_ms,
                rows: a.rows + b.rows,
                shared_blks_hit: a.shared_blks_hit + b.shared_blks_hit,
                shared_blks_read: a.shared_blks_read + b.shared_blks_read,
            })?;
            Some(SentStatement { queries, cost })
        })
        .collect()
}

/// A statement's text with every constant and parameter (`'text'`, `42`,
/// `1.5e3`, `$1`) as `?`, runs of white space as one space, no trailing
/// `;`, in lower case outside quoted identifiers: what a query sent and
/// its pg_stat_statements entry have in common.
fn shape(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.trim().trim_end_matches(';').trim_end().chars().peekable();
    let mut word = false; // inside an identifier or keyword, where digits are part of the name
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                while let Some(q) = chars.next() {
                    if q == '\'' && chars.next_if_eq(&'\'').is_none() {
                        break;
                    }
                }
                out.push('?');
            }
            '"' => {
                out.push('"');
                for q in chars.by_ref() {
                    out.push(q);
                    if q == '"' {
                        break;
                    }
                }
            }
            '$' if chars.peek().is_some_and(char::is_ascii_digit) => {
                while chars.next_if(char::is_ascii_digit).is_some() {}
                out.push('?');
            }
            c if c.is_ascii_digit() && !word => {
                while chars.next_if(|d| d.is_ascii_alphanumeric() || *d == '.').is_some() {}
                out.push('?');
            }
            c if c.is_whitespace() => {
                while chars.next_if(|w| w.is_whitespace()).is_some() {}
                out.push(' ');
            }
            c => out.extend(c.to_lowercase()),
        }
        word = c.is_alphanumeric() || c == '_' || c == '$';
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_shares_are_read_per_node() {
        let row = |v: [Option<&str>; 5]| v.iter().map(|f| f.map(String::from)).collect::<Vec<_>>();
        // Citus: no replica count; a node whose shard could not be counted has no rows.
        let citus = [
            row([Some("10.0.0.1:5432"), Some("16"), None, Some("500123"), Some("41943040")]),
            row([Some("10.0.0.2:5432"), Some("16"), None, None, Some("40960")]),
        ];
        let got = parse_node_shares(&citus).unwrap();
        assert_eq!(
            got[0],
            NodeShare {
                node: Some("10.0.0.1:5432".into()),
                shards: 16,
                replica_shards: None,
                rows: Some(500_123),
                bytes: 41_943_040
            }
        );
        assert_eq!((got[1].rows, got[1].bytes), (None, 40_960));
        // CrateDB: primaries and replicas; an unassigned shard has no node (and no size).
        let crate_rows = [
            row([Some("crate-1"), Some("3"), Some("1"), Some("4000"), Some("1048576")]),
            row([None, Some("0"), Some("2"), Some("0"), None]),
        ];
        let got = parse_node_shares(&crate_rows).unwrap();
        assert_eq!((got[0].node.as_deref(), got[0].shards, got[0].replica_shards), (Some("crate-1"), 3, Some(1)));
        assert_eq!((got[1].node.as_deref(), got[1].replica_shards, got[1].bytes), (None, Some(2), 0));
        let bad = [row([Some("n"), Some("many"), None, None, Some("0")])];
        assert!(parse_node_shares(&bad).unwrap_err().contains("\"many\""));
    }

    #[test]
    fn a_query_and_its_statement_entry_have_one_shape() {
        let sent =
            "SELECT avg(m1) FROM \"Bench\".m WHERE device_id = $1 AND ts > now() - '1 hour'::interval\n  LIMIT 10;";
        let entry = "SELECT avg(m1) FROM \"Bench\".m WHERE device_id = $1 AND ts > now() - $2::interval\n  LIMIT $3";
        assert_eq!(shape(sent), shape(entry));
        assert_eq!(
            shape(sent),
            "select avg(m1) from \"Bench\".m where device_id = ? and ts > now() - ?::interval limit ?"
        );
        assert_eq!(shape("select 'it''s', 1.5e3, x2"), "select ?, ?, x2");
        assert_ne!(shape("SELECT m1 FROM t"), shape("SELECT m2 FROM t"));
    }

    #[test]
    fn deltas_are_the_difference_summed_over_entries_of_one_shape() {
        let snap = |entries: &[(&str, &str, u64, f64)]| {
            Snapshot(
                entries
                    .iter()
                    .map(|&(key, text, calls, ms)| {
                        let cost = StatementCost { calls, total_exec_ms: ms, rows: calls, ..Default::default() };
                        (key.to_string(), (text.to_string(), cost))
                    })
                    .collect(),
            )
        };
        let before = snap(&[("10/1", "SELECT $1", 5, 1.0), ("10/2", "SELECT x FROM t", 2, 1.0)]);
        let after =
            snap(&[("10/1", "SELECT $1", 8, 4.0), ("11/1", "SELECT $1", 1, 0.5), ("10/2", "SELECT x FROM t", 2, 1.0)]);
        let got = deltas(&before, &after, ["select 1", "SELECT x FROM t", "SELECT y", "select 2"].into_iter());
        // "SELECT x FROM t" did not run in between, "SELECT y" never ran.
        assert_eq!(got.len(), 1, "{got:?}");
        let one = got[0].cost;
        assert_eq!((one.calls, one.total_exec_ms, one.rows), (4, 3.5, 4));
        // "select 1" and "select 2" are one statement to pg_stat_statements: one entry for both.
        assert_eq!(got[0].queries, [0, 3]);
    }
}
