//! What a CrateDB cluster is doing while a run runs: the one statement the
//! run's sampler (`run::sampler`) sends once a sample on a connection of
//! its own, over the run's protocol, and what its rows mean. CrateDB has
//! no wait events and no WAL; what it counts itself is its jobs
//! (`sys.jobs`), the operations they run on each node (`sys.operations`)
//! and its thread pools' queues and rejected work (`sys.nodes`), which is
//! where a cluster that cannot keep up shows it. One statement, so that
//! sampling costs one round trip a sample.
//!
//! Its two parameters are bound: `$1` the run's table as its statements
//! name it (NULL when the run has none), `$2` this very statement, whose
//! own job and operations are left out. CrateDB keeps no `application_name`
//! a client gives at startup (6.4 applies only `options=-c` and `SET`) and
//! none over HTTP, so the run's jobs are told apart from the others' by
//! their statement naming its table: another client's statements on that
//! table count as the run's.

use std::collections::BTreeMap;

use crate::stats::server::{LEVEL, POOL, REJECTED};

/// Who the sampler is: its user, and whether CrateDB keeps its jobs and
/// operations at all (`stats.enabled`).
pub const WHO: &str = "SELECT current_user, settings['stats']['enabled'] FROM sys.cluster";

/// Whether the sampler's user sees every user's jobs: a superuser does;
/// others see their own, or all with the `AL` privilege. Asked apart from
/// [`WHO`]: a user that may not read `sys.users` is still sampled.
pub const SUPERUSER: &str = "SELECT superuser FROM sys.users WHERE name = current_user";

/// One sample: rows of `(kind, name, n)`: `job` by `own` (its statement
/// names the run's table) or `other`, jobs running; `operation` by its name, operations running; `queue` and
/// `rejected` by thread pool, tasks queued now and rejected since the node
/// started, summed over the nodes.
pub const SAMPLE: &str = "\
SELECT 'job' AS kind, CASE WHEN strpos(stmt, $1) > 0 THEN 'own' ELSE 'other' END AS name, count(*)::bigint AS n \
  FROM sys.jobs WHERE stmt <> $2 \
 GROUP BY 1, 2 \
UNION ALL \
SELECT 'operation', name, count(*)::bigint FROM sys.operations \
 WHERE job_id NOT IN (SELECT id FROM sys.jobs WHERE stmt = $2) \
 GROUP BY 1, 2 \
UNION ALL \
SELECT 'queue', p['name'], sum(p['queue'])::bigint FROM (SELECT unnest(thread_pools) AS p FROM sys.nodes) AS q \
 GROUP BY 1, 2 \
UNION ALL \
SELECT 'rejected', p['name'], sum(p['rejected'])::bigint FROM (SELECT unnest(thread_pools) AS p FROM sys.nodes) AS r \
 GROUP BY 1, 2";

/// A sample's figures, by the name a report shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// What was so at the sample (jobs and operations running, tasks
    /// queued), each named with [`LEVEL`]. Jobs are always there (0 when
    /// none ran); an operation or a queue only when there was some.
    pub levels: BTreeMap<String, f64>,
    /// Each thread pool's rejected work since its node started: totals,
    /// of which the sampler keeps the differences.
    pub totals: BTreeMap<String, f64>,
}

/// The figures of [`SAMPLE`]'s `rows`; `told_apart`: whether the run has
/// a table its statements name (`$1`), so that its jobs are apart from
/// the others'.
pub fn figures(rows: impl IntoIterator<Item = (String, String, i64)>, told_apart: bool) -> Figures {
    let jobs = |whose: &str| match (told_apart, whose) {
        (false, _) => format!("jobs running{LEVEL}"),
        (true, "own") => format!("jobs running: the run's{LEVEL}"),
        (true, _) => format!("jobs running: others'{LEVEL}"),
    };
    let mut f = Figures::default();
    for whose in ["own", "other"] {
        f.levels.insert(jobs(whose), 0.0);
    }
    for (kind, name, n) in rows {
        let n = n.max(0);
        match kind.as_str() {
            "job" => *f.levels.entry(jobs(&name)).or_default() += n as f64,
            "operation" if n > 0 => {
                f.levels.insert(format!("operations running: {name}{LEVEL}"), n as f64);
            }
            "queue" if n > 0 => {
                f.levels.insert(format!("{POOL}{name} queue{LEVEL}"), n as f64);
            }
            "rejected" => {
                f.totals.insert(format!("{POOL}{name}{REJECTED}"), n as f64);
            }
            _ => {}
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_sql() {
        insta::assert_snapshot!([WHO, SUPERUSER, SAMPLE].join(";\n\n"));
    }

    fn row(kind: &str, name: &str, n: i64) -> (String, String, i64) {
        (kind.into(), name.into(), n)
    }

    /// Issue 34: each row becomes a figure named as a report shows it;
    /// jobs are always there, split by whose they are when the run's
    /// sessions can be told apart; pools' rejected work are totals.
    #[test]
    fn rows_become_named_figures() {
        let rows = [
            row("job", "own", 3),
            row("operation", "collect", 2),
            row("operation", "fetch", 0),
            row("queue", "write", 5),
            row("queue", "search", 0),
            row("rejected", "write", 7),
            row("rejected", "search", 0),
        ];
        let f = figures(rows.clone(), true);
        let levels: Vec<(&str, f64)> = f.levels.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            levels,
            [
                ("jobs running: others' (max)", 0.0),
                ("jobs running: the run's (max)", 3.0),
                ("operations running: collect (max)", 2.0),
                ("thread pool write queue (max)", 5.0),
            ]
        );
        let totals: Vec<(&str, f64)> = f.totals.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(totals, [("thread pool search rejected", 0.0), ("thread pool write rejected", 7.0)]);
        let rows = [row("job", "other", 2), row("job", "own", 1)];
        let levels: Vec<(String, f64)> = figures(rows, false).levels.into_iter().collect();
        assert_eq!(levels, [("jobs running (max)".to_string(), 3.0)]);
    }
}
