//! What a PostgreSQL-family server is doing while a run runs: the one
//! statement the run's sampler (`run::sampler`) sends once a second on a
//! connection of its own. One statement, prepared once, so that sampling
//! costs the server one round trip and one plan a second: the sessions'
//! wait events (the run's own apart from the others, told apart by their
//! `application_name`), the checkpoint counters, the WAL position, temp
//! files, a vacuum of the run's table and lock waits on it, replicas' lag.
//! Its two parameters are bound: `$1` the run's `application_name`, `$2`
//! the run's table (NULL when the run has none). An engine with figures of
//! its own has a second statement ([`engine_sample`]), sent beside it.

pub mod citus;
pub mod timescaledb;

use super::Engine;

/// Who the sampler is: whether it sees every session's wait events, its
/// role, its backend's PID, and the server's version number.
pub const WHO: &str = "SELECT pg_has_role(current_user, 'pg_read_all_stats', 'USAGE'), current_user::text, \
                       pg_backend_pid(), current_setting('server_version_num')::int4";

/// The first server version whose checkpoint counters are in
/// `pg_stat_checkpointer` rather than `pg_stat_bgwriter`.
const CHECKPOINTER_VIEW_FROM: i32 = 170_000;

/// One sample, for the server of version number `version` (as
/// `server_version_num`). Its columns: the wait events (JSON text, an
/// array of `[own, "type:event" or "", sessions]`), checkpoints timed and requested so far, the
/// WAL position in bytes (NULL on a standby), temp files and their bytes
/// so far, the phases of a vacuum of the table, the lock requests waiting
/// on it, and the largest replay lag of a replica in seconds (NULL without
/// replicas). Counters are totals: the sampler keeps their differences.
pub fn sample(version: i32) -> String {
    let checkpoints = if version >= CHECKPOINTER_VIEW_FROM {
        "SELECT num_timed AS timed, num_requested AS requested FROM pg_stat_checkpointer"
    } else {
        "SELECT checkpoints_timed AS timed, checkpoints_req AS requested FROM pg_stat_bgwriter"
    };
    // Background processes have no state: they count when they wait on
    // anything but their own idle loop (`Activity`), or run.
    format!(
        "SELECT \
  (SELECT coalesce(json_agg(json_build_array(w.own, w.wait, w.n)), '[]')::text FROM ( \
     SELECT coalesce(application_name = $1, false) AS own, \
            coalesce(wait_event_type || ':' || wait_event, '') AS wait, count(*) AS n \
       FROM pg_stat_activity \
      WHERE pid <> pg_backend_pid() \
        AND (state = 'active' OR (state IS NULL AND backend_type <> 'client backend' \
                                  AND wait_event_type IS DISTINCT FROM 'Activity')) \
      GROUP BY 1, 2) AS w) AS waits, \
  c.timed::int8, c.requested::int8, \
  CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::int8 END AS wal, \
  d.temp_files::int8, d.temp_bytes::int8, \
  (SELECT string_agg(DISTINCT phase, ', ') FROM pg_stat_progress_vacuum WHERE relid = to_regclass($2)) AS vacuum, \
  (SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = to_regclass($2))::int8 AS lock_waits, \
  (SELECT extract(epoch FROM max(replay_lag))::float8 FROM pg_stat_replication) AS replica_lag_s \
FROM ({checkpoints}) AS c, \
     (SELECT temp_files, temp_bytes FROM pg_stat_database WHERE datname = current_database()) AS d"
    )
}

/// The engine's own statement, sent with each sample, for an engine that
/// counts things of its own; none for PostgreSQL. Its parameters are the
/// sample's (`$1` and `$2`, both text, either unused); its rows are figures
/// `(name, value, total)`: `total` when the value is a counter since the
/// server started, whose growth between samples is the figure.
pub fn engine_sample(engine: Engine) -> Option<String> {
    match engine {
        Engine::Timescaledb => Some(timescaledb::sample()),
        Engine::Citus => Some(citus::sample()),
        Engine::Postgres | Engine::Cratedb => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample before and from PostgreSQL 17, whose checkpoint counters moved.
    #[test]
    fn sample_sql() {
        insta::assert_snapshot!([WHO.to_string(), sample(160_004), sample(170_000)].join(";\n\n"));
    }
}
