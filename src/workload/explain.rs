//! `--explain`: each query's plan, captured once before the measured run
//! (measure before you tune) by the PostgreSQL driver
//! (`driver::pg::query::explain`), and read here from the server's JSON:
//! the top node, the times, and how Citus split the query.

use serde::Serialize;

/// What `--explain` captures before the measured run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ExplainMode {
    /// EXPLAIN (ANALYZE, VERBOSE, BUFFERS, FORMAT JSON), rolled back.
    Analyze,
    /// EXPLAIN (VERBOSE, FORMAT JSON): the plan only, nothing executed.
    Plan,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Explain {
    pub mode: ExplainMode,
    /// The top plan node, e.g. `Aggregate` or `Custom Scan (Citus Adaptive)`.
    pub top_node: String,
    /// The top node's actual total time (ANALYZE only).
    pub top_node_ms: Option<f64>,
    pub planning_ms: Option<f64>,
    pub execution_ms: Option<f64>,
    /// Citus: how the query was split across the shards.
    pub distributed: Option<Distributed>,
    /// The server's JSON plan, as it gave it.
    pub plan: serde_json::Value,
}

/// A Citus distributed plan: the coordinator's `Distributed Query` job.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Distributed {
    pub task_count: Option<u64>,
    /// e.g. `One of 32` or `All`.
    pub tasks_shown: Option<String>,
    /// Where the task Citus shows ran (`host=... port=...`).
    pub task_node: Option<String>,
    /// That task's top plan node on its shard.
    pub task_top_node: Option<String>,
}

/// Finds the first `Distributed Query` job anywhere in a plan tree.
fn distributed(node: &serde_json::Value) -> Option<Distributed> {
    if let Some(job) = node.get("Distributed Query").and_then(|d| d.get("Job")) {
        let task = job.get("Tasks").and_then(|t| t.get(0));
        let remote = task.and_then(|t| t.get("Remote Plan"));
        // The remote plan is the worker's EXPLAIN output: [{"Plan": ...}], sometimes nested once more.
        let remote_top = remote.and_then(|r| {
            let first = r.get(0)?;
            let first = if first.is_array() { first.get(0)? } else { first };
            first.get("Plan")?.get("Node Type")?.as_str().map(str::to_string)
        });
        return Some(Distributed {
            task_count: job.get("Task Count").and_then(|n| n.as_u64()),
            tasks_shown: job.get("Tasks Shown").and_then(|n| n.as_str()).map(str::to_string),
            task_node: task.and_then(|t| t.get("Node")).and_then(|n| n.as_str()).map(str::to_string),
            task_top_node: remote_top,
        });
    }
    let children = node.as_array().into_iter().flatten().chain(node.as_object().into_iter().flat_map(|o| o.values()));
    children.filter(|c| c.is_object() || c.is_array()).find_map(distributed)
}

/// Reads PostgreSQL's `FORMAT JSON` output: `[{"Plan": {...}, "Planning Time": ..., ...}]`.
pub fn parse(mode: ExplainMode, text: &str) -> Result<Explain, String> {
    let plan: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("the plan is not JSON: {e}"))?;
    let root = &plan[0];
    let top = &root["Plan"];
    Ok(Explain {
        mode,
        top_node: top["Node Type"].as_str().unwrap_or("?").to_string(),
        top_node_ms: top["Actual Total Time"].as_f64(),
        planning_ms: root["Planning Time"].as_f64(),
        execution_ms: root["Execution Time"].as_f64(),
        distributed: distributed(top),
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
        assert_eq!(e.distributed, None);
    }

    #[test]
    fn reads_a_citus_distributed_plan() {
        let text = r#"[{"Plan": {"Node Type": "Custom Scan", "Custom Plan Provider": "Citus Adaptive",
            "Distributed Query": {"Job": {"Task Count": 32, "Tasks Shown": "One of 32",
              "Tasks": [{"Node": "host=10.0.0.2 port=5432 dbname=postgres",
                         "Remote Plan": [[{"Plan": {"Node Type": "Aggregate"}}]]}]}}},
            "Planning Time": 0.2, "Execution Time": 9.0}]"#;
        let d = parse(ExplainMode::Analyze, text).unwrap().distributed.unwrap();
        assert_eq!(d.task_count, Some(32));
        assert_eq!(d.tasks_shown.as_deref(), Some("One of 32"));
        assert_eq!(d.task_node.as_deref(), Some("host=10.0.0.2 port=5432 dbname=postgres"));
        assert_eq!(d.task_top_node.as_deref(), Some("Aggregate"));
    }
}
