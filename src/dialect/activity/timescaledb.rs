//! TimescaleDB's part of a run's server sample: the chunks of the run's
//! hypertable (their count, whose growth is the chunks created in a
//! second) and the background jobs by kind (runs started, and running at
//! the sample). The jobs are read from `timescaledb_information.job_stats`
//! rather than from the background workers in `pg_stat_activity`: its
//! `total_runs` counts every run started, also one that began and ended
//! between two samples, which a look at the running workers would miss;
//! its `job_status` says which are running, from those same workers.
//! Every job of the server counts, not only the run's table's: another
//! hypertable's compression competes for the same disk and CPU.

use crate::stats::server::{CHUNKS_CREATED, JOBS_RUNNING, JOBS_STARTED};

/// The statement, in [`super::engine_sample`]'s shape. The chunks are read
/// from TimescaleDB's catalog (readable by every role), not from
/// `timescaledb_information.chunks`, whose dimension joins a sample need not
/// pay for; a job's kind is its procedure's name in words
/// (`policy_compression`: `compression`).
pub fn sample() -> String {
    format!(
        "SELECT '{CHUNKS_CREATED}'::text, count(*)::float8, true \
   FROM _timescaledb_catalog.chunk c JOIN _timescaledb_catalog.hypertable h ON h.id = c.hypertable_id \
  WHERE to_regclass(format('%I.%I', h.schema_name, h.table_name)) = to_regclass($2) \
UNION ALL \
SELECT j.kind || n.what, CASE WHEN n.total THEN sum(j.runs) ELSE count(*) FILTER (WHERE j.running) END::float8, n.total \
  FROM (SELECT replace(replace(jobs.proc_name, 'policy_', ''), '_', ' ') AS kind, \
               coalesce(s.total_runs, 0) AS runs, s.job_status = 'Running' AS running \
          FROM timescaledb_information.jobs JOIN timescaledb_information.job_stats s USING (job_id)) AS j, \
       (VALUES ('{JOBS_STARTED}', true), ('{JOBS_RUNNING}', false)) AS n (what, total) \
 GROUP BY j.kind, n.what, n.total"
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn timescaledb_sample_sql() {
        insta::assert_snapshot!(super::sample());
    }
}
