//! Citus's part of a run's server sample: the run's work on each node of
//! the cluster, from `citus_stat_activity` (Citus 11 and later: every
//! node's `pg_stat_activity`, gathered by the coordinator, with the node
//! of each row and the global process id that ties a worker node's backend
//! to the coordinator session it works for). The run's sessions on a node
//! are the backends working for one of the run's coordinator sessions
//! (told apart there by their `application_name`); each node's active
//! sessions per sample are its share of the work, and their wait events
//! say what that work waited on there.

use crate::stats::server::{NODE, NODE_SESSIONS, NO_WAIT};

/// The statement, in [`super::engine_sample`]'s shape: per node, as
/// `host:port`, the run's active sessions there and their wait events
/// (`node 10.0.0.2:5432 wait IO:WALWrite`), as seen at the sample. The
/// run's global process ids come from the coordinator's own sessions
/// (`get_all_active_transactions`), so that a coordinator not itself in
/// `pg_dist_node` is no matter.
pub fn sample() -> String {
    format!(
        "WITH own AS ( \
  SELECT t.global_pid FROM get_all_active_transactions() t JOIN pg_stat_activity a ON a.pid = t.process_id \
   WHERE a.application_name = $1), \
work AS ( \
  SELECT nodeid, coalesce(wait_event_type || ':' || wait_event, '{NO_WAIT}') AS wait \
    FROM citus_stat_activity \
   WHERE is_worker_query AND state = 'active' AND global_pid IN (SELECT global_pid FROM own)) \
SELECT '{NODE}' || n.nodename || ':' || n.nodeport || w.what, w.sessions::float8, false \
  FROM (SELECT nodeid, '{NODE_SESSIONS}' AS what, count(*) AS sessions FROM work GROUP BY nodeid \
        UNION ALL \
        SELECT nodeid, ' wait ' || wait, count(*) FROM work GROUP BY nodeid, wait) AS w \
  JOIN pg_dist_node n USING (nodeid)"
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn citus_sample_sql() {
        insta::assert_snapshot!(super::sample());
    }
}
