//! `--explain`: each query's plan, captured once before the measured run
//! (seed 002: measure before you tune). With ANALYZE the query really runs,
//! inside a transaction that is rolled back, so a write leaves no trace.

use serde::Serialize;
use tokio_postgres::{Client, SimpleQueryMessage};

use super::{inline_params, params::Value, QuerySpec};
use crate::cli::ExplainMode;

#[derive(Debug, Clone, Serialize)]
pub struct Explain {
    pub mode: ExplainMode,
    /// The top plan node, e.g. `Aggregate` or `Custom Scan (Citus Adaptive)`.
    pub top_node: String,
    /// The top node's actual total time (ANALYZE only).
    pub top_node_ms: Option<f64>,
    pub planning_ms: Option<f64>,
    pub execution_ms: Option<f64>,
    /// The server's JSON plan, as it gave it.
    pub plan: serde_json::Value,
}

/// The plan of `query` with `params` (drawn as for a real execution).
pub async fn capture(
    client: &Client,
    query: &QuerySpec,
    params: &[Value],
    mode: ExplainMode,
) -> Result<Explain, String> {
    let options = match mode {
        ExplainMode::Analyze => "ANALYZE, VERBOSE, BUFFERS, FORMAT JSON",
        ExplainMode::Plan => "VERBOSE, FORMAT JSON",
    };
    let sql = format!("EXPLAIN ({options}) {}", inline_params(&query.query, params));
    client.batch_execute("BEGIN").await.map_err(|e| e.to_string())?;
    let result = client.simple_query(&sql).await;
    let _ = client.batch_execute("ROLLBACK").await;
    let messages = result.map_err(|e| match e.as_db_error() {
        Some(db) => format!("EXPLAIN failed: SQLSTATE {}: {}", db.code().code(), db.message()),
        None => format!("EXPLAIN failed: {e}"),
    })?;
    let text: String = messages
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    parse(mode, &text)
}

/// Reads PostgreSQL's `FORMAT JSON` output: `[{"Plan": {...}, "Planning Time": ..., ...}]`.
fn parse(mode: ExplainMode, text: &str) -> Result<Explain, String> {
    let plan: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("EXPLAIN output is not JSON: {e}"))?;
    let root = &plan[0];
    let top = &root["Plan"];
    Ok(Explain {
        mode,
        top_node: top["Node Type"].as_str().unwrap_or("?").to_string(),
        top_node_ms: top["Actual Total Time"].as_f64(),
        planning_ms: root["Planning Time"].as_f64(),
        execution_ms: root["Execution Time"].as_f64(),
        plan,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_top_node_and_times() {
        let text = r#"[{"Plan": {"Node Type": "Aggregate", "Actual Total Time": 1.5, "Plans": []},
                        "Planning Time": 0.1, "Execution Time": 1.6}]"#;
        let e = parse(ExplainMode::Analyze, text).unwrap();
        assert_eq!((e.top_node.as_str(), e.top_node_ms, e.execution_ms), ("Aggregate", Some(1.5), Some(1.6)));
        assert!(parse(ExplainMode::Plan, "not json").unwrap_err().contains("not JSON"));
    }
}
