//! The SQL of the results store in a database (`--results-url`): the two
//! tables dbload creates if missing, and how runs go in and come out. Any
//! PostgreSQL-family engine (PostgreSQL, TimescaleDB, Citus) takes it. The
//! tables are documented in docs/results.md; their version is in each row
//! (`schema_version`) and in the table's comment, which [`version_check`]
//! reads before a run is written.

use super::{literal, quote_ident};

/// Bumped when a column is removed, renamed or changes meaning; adding a
/// column is not (dbload adds it with `ADD COLUMN IF NOT EXISTS`, see
/// `ADDED`), so that an older dbload still writes the rest.
/// Version 2 added `dbload_instances`; a store of version 1 is upgraded
/// in place ([`upgrade_from_1`]).
pub const SCHEMA_VERSION: i32 = 2;

pub const RUNS: &str = "dbload_runs";
pub const TIMELINE: &str = "dbload_timeline";
/// The server's seconds, as the run's sampler saw them.
pub const SERVER_TIMELINE: &str = "dbload_server_timeline";
/// The registration rows of distributed runs (`--instance`).
pub const INSTANCES: &str = "dbload_instances";

/// The comment on `dbload_runs` that names the version of its layout.
pub fn comment() -> String {
    comment_of(SCHEMA_VERSION)
}

fn comment_of(version: i32) -> String {
    format!("dbload results store, schema version {version} (docs/results.md)")
}

/// The comment of a version-1 store, which [`upgrade_from_1`] upgrades.
pub fn comment_v1() -> String {
    comment_of(1)
}

/// Serialises dbload's changes to the store's tables within a transaction:
/// `CREATE TABLE IF NOT EXISTS` run by several instances at once can fail
/// on the catalog's unique index.
pub fn lock_tables() -> String {
    format!("SELECT pg_advisory_xact_lock(hashtext({}))", literal(RUNS))
}

/// The columns added to version 2's layout after it was first made, as
/// `(table, column, type)`: a store made before one lacks it, and gets it
/// at its next write ([`columns_missing`], [`add_columns`]).
const ADDED: [(&str, &str, &str); 3] = [
    (TIMELINE, "latency_p50_ms", "double precision"),
    (TIMELINE, "latency_p99_ms", "double precision"),
    (SERVER_TIMELINE, "engine", "jsonb"),
];

/// Whether the store lacks one of the `ADDED` columns: a look at the
/// catalog, so that a store that has them all takes no table lock.
pub fn columns_missing() -> String {
    let wanted: Vec<String> = ADDED
        .iter()
        .map(|(table, column, _)| format!("(to_regclass({}), {})", literal(table), literal(column)))
        .collect();
    format!(
        "SELECT count(*) < {} FROM pg_attribute WHERE (attrelid, attname) IN ({}) AND NOT attisdropped",
        ADDED.len(),
        wanted.join(", ")
    )
}

/// Adds the `ADDED` columns a store lacks; its rows keep null there.
pub fn add_columns() -> String {
    ADDED
        .iter()
        .map(|(table, column, kind)| {
            format!("ALTER TABLE {} ADD COLUMN IF NOT EXISTS {} {kind}", quote_ident(table), quote_ident(column))
        })
        .collect::<Vec<_>>()
        .join(";\n")
}

/// Whether the store lacks `dbload_server_timeline` (made after version 2
/// was): a look at the catalog, as [`columns_missing`].
pub fn server_timeline_missing() -> String {
    format!("SELECT to_regclass({}) IS NULL", literal(SERVER_TIMELINE))
}

/// The server's seconds of each run: one row per part and second, the wait
/// events as JSON objects (`{"IO:WALWrite": 3}`), counters of the second,
/// the engine's own figures as a JSON object (`{"chunks created": 3}`).
pub fn create_server_timeline() -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {} (\n\
        \x20   run_id uuid NOT NULL REFERENCES {} (run_id) ON DELETE CASCADE,\n\
        \x20   part text NOT NULL,\n\
        \x20   second integer NOT NULL,\n\
        \x20   at timestamptz NOT NULL,\n\
        \x20   own_waits jsonb NOT NULL,\n\
        \x20   other_waits jsonb NOT NULL,\n\
        \x20   wal_bytes bigint,\n\
        \x20   checkpoints_timed bigint NOT NULL,\n\
        \x20   checkpoints_requested bigint NOT NULL,\n\
        \x20   engine jsonb,\n\
        \x20   PRIMARY KEY (run_id, part, second)\n\
        )",
        quote_ident(SERVER_TIMELINE),
        quote_ident(RUNS)
    )
}

/// A run's server seconds: one array per column, bound ($1: run id, $2: its start).
pub fn insert_server_timeline() -> String {
    format!(
        "INSERT INTO {} (run_id, part, second, at, own_waits, other_waits, wal_bytes, checkpoints_timed, \
         checkpoints_requested, engine) \
         SELECT $1::text::uuid, part, second, $2::text::timestamptz + second * interval '1 second', \
         own_waits::jsonb, other_waits::jsonb, wal_bytes, checkpoints_timed, checkpoints_requested, engine::jsonb \
         FROM unnest($3::text[], $4::int4[], $5::text[], $6::text[], $7::int8[], $8::int8[], $9::int8[], \
         $10::text[]) \
         AS t(part, second, own_waits, other_waits, wal_bytes, checkpoints_timed, checkpoints_requested, engine)",
        quote_ident(SERVER_TIMELINE)
    )
}

/// Version 1 to 2: the instances' table added, nothing else changed.
pub fn upgrade_from_1() -> String {
    format!("{};\nCOMMENT ON TABLE {} IS {}", create_instances(), quote_ident(RUNS), literal(&comment()))
}

fn create_instances() -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {} (\n\
        \x20   run_id text NOT NULL,\n\
        \x20   instance integer NOT NULL,\n\
        \x20   instances integer NOT NULL,\n\
        \x20   host text NOT NULL,\n\
        \x20   pid integer NOT NULL,\n\
        \x20   registered_at timestamptz NOT NULL,\n\
        \x20   table_ready_at timestamptz,\n\
        \x20   ready_at timestamptz,\n\
        \x20   started_at timestamptz,\n\
        \x20   finished_at timestamptz,\n\
        \x20   status text NOT NULL,\n\
        \x20   note text,\n\
        \x20   kept_run_id uuid,\n\
        \x20   PRIMARY KEY (run_id, instance)\n\
        )",
        quote_ident(INSTANCES)
    )
}

/// Creates the tables if they are missing (in one transaction, with the
/// comment that versions them).
pub fn create_tables() -> String {
    let (runs, timeline) = (quote_ident(RUNS), quote_ident(TIMELINE));
    format!(
        "CREATE TABLE IF NOT EXISTS {runs} (\n\
        \x20   run_id uuid PRIMARY KEY,\n\
        \x20   schema_version integer NOT NULL,\n\
        \x20   started_at timestamptz NOT NULL,\n\
        \x20   ended_at timestamptz NOT NULL,\n\
        \x20   command text NOT NULL,\n\
        \x20   command_line text NOT NULL,\n\
        \x20   dbload_version text NOT NULL,\n\
        \x20   git_commit text NOT NULL,\n\
        \x20   client_host text NOT NULL,\n\
        \x20   target text,\n\
        \x20   engine text,\n\
        \x20   server_version text,\n\
        \x20   status text NOT NULL,\n\
        \x20   exit_code integer NOT NULL,\n\
        \x20   throughput double precision,\n\
        \x20   throughput_unit text,\n\
        \x20   p50_ms double precision,\n\
        \x20   p95_ms double precision,\n\
        \x20   p99_ms double precision,\n\
        \x20   p99_9_ms double precision,\n\
        \x20   errors bigint,\n\
        \x20   client_cpu_s double precision,\n\
        \x20   setup jsonb,\n\
        \x20   report jsonb NOT NULL,\n\
        \x20   histograms text NOT NULL\n\
        );\n\
        CREATE TABLE IF NOT EXISTS {timeline} (\n\
        \x20   run_id uuid NOT NULL REFERENCES {runs} (run_id) ON DELETE CASCADE,\n\
        \x20   part text NOT NULL,\n\
        \x20   second integer NOT NULL,\n\
        \x20   at timestamptz NOT NULL,\n\
        \x20   rows bigint NOT NULL,\n\
        \x20   operations bigint NOT NULL,\n\
        \x20   errors bigint NOT NULL,\n\
        \x20   latency_mean_ms double precision,\n\
        \x20   latency_max_ms double precision,\n\
        \x20   latency_p50_ms double precision,\n\
        \x20   latency_p99_ms double precision,\n\
        \x20   PRIMARY KEY (run_id, part, second)\n\
        );\n\
        {instances};\n\
        {server_timeline};\n\
        COMMENT ON TABLE {runs} IS {comment}",
        instances = create_instances(),
        server_timeline = create_server_timeline(),
        comment = literal(&comment()),
    )
}

/// The comment on `dbload_runs` (null when the table is missing): another
/// version's tables are not written to.
pub fn version_check() -> String {
    format!("SELECT obj_description(to_regclass({})::oid, 'pg_class')", literal(RUNS))
}

/// One run: every value bound ($1 … $24), in the order of the columns.
pub fn insert_run() -> String {
    format!(
        "INSERT INTO {} (run_id, schema_version, started_at, ended_at, command, command_line, dbload_version, \
         git_commit, client_host, target, engine, server_version, status, exit_code, throughput, throughput_unit, \
         p50_ms, p95_ms, p99_ms, p99_9_ms, errors, client_cpu_s, setup, report, histograms) \
         VALUES ($1::text::uuid, {SCHEMA_VERSION}, $2::text::timestamptz, $3::text::timestamptz, $4, $5, $6, $7, \
         $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22::text::jsonb, $23::text::jsonb, $24)",
        quote_ident(RUNS)
    )
}

/// A run's per-second series: one array per column, bound ($1: run id, $2: its start).
pub fn insert_timeline() -> String {
    format!(
        "INSERT INTO {} (run_id, part, second, at, rows, operations, errors, latency_mean_ms, latency_max_ms, \
         latency_p50_ms, latency_p99_ms) \
         SELECT $1::text::uuid, part, second, $2::text::timestamptz + second * interval '1 second', \
         rows, operations, errors, latency_mean_ms, latency_max_ms, latency_p50_ms, latency_p99_ms \
         FROM unnest($3::text[], $4::int4[], $5::int8[], $6::int8[], $7::int8[], $8::float8[], $9::float8[], \
         $10::float8[], $11::float8[]) \
         AS t(part, second, rows, operations, errors, latency_mean_ms, latency_max_ms, latency_p50_ms, latency_p99_ms)",
        quote_ident(TIMELINE)
    )
}

/// The newest runs first, at most $1 of them, with their reports: those of
/// the command $2, started at or after $3, tagged with all of $4 (each when
/// not null), as `results list` shows them.
pub fn list() -> String {
    format!(
        "SELECT run_id::text, report::text FROM {} WHERE ($2::text IS NULL OR command = $2) \
         AND ($3::text IS NULL OR started_at >= $3::text::timestamptz) AND coalesce(report -> 'run' -> 'tags', '{{}}') @> $4::text::jsonb \
         ORDER BY started_at DESC, run_id DESC LIMIT $1",
        quote_ident(RUNS)
    )
}

/// The runs whose id starts with $1: their id, report and histograms.
pub fn show() -> String {
    format!(
        "SELECT run_id::text, report::text, histograms FROM {} WHERE run_id::text LIKE $1 || '%' ORDER BY run_id LIMIT 2",
        quote_ident(RUNS)
    )
}

/// An instance's registration ($1 run id, $2 instance, $3 instances, $4
/// host, $5 pid), on the server's clock; none if the instance is there.
pub fn register() -> String {
    format!(
        "INSERT INTO {} (run_id, instance, instances, host, pid, registered_at, status) \
         VALUES ($1, $2, $3, $4, $5, clock_timestamp(), 'registered') ON CONFLICT (run_id, instance) DO NOTHING",
        quote_ident(INSTANCES)
    )
}

/// The run's instances ($1) as registered: number, count, host, pid, status,
/// note, and whether its table is ready and it is ready to start.
pub fn instances() -> String {
    format!(
        "SELECT instance, instances, host, pid, status, note, table_ready_at IS NOT NULL, ready_at IS NOT NULL \
         FROM {} WHERE run_id = $1 ORDER BY instance",
        quote_ident(INSTANCES)
    )
}

/// Instance $2 (0) of run $1 has made the table.
pub fn table_ready() -> String {
    format!(
        "UPDATE {} SET table_ready_at = clock_timestamp() WHERE run_id = $1 AND instance = $2",
        quote_ident(INSTANCES)
    )
}

/// Instance $2 of run $1 is ready to start: connected, its work prepared.
pub fn ready() -> String {
    format!(
        "UPDATE {} SET ready_at = clock_timestamp(), status = 'ready' WHERE run_id = $1 AND instance = $2",
        quote_ident(INSTANCES)
    )
}

/// The common start of run $1 once its $2 instances are ready: the last
/// one's readiness plus $3 ms, on the server's clock; and how far from now
/// it is (s). Each instance asks, and all get the same time.
pub fn start() -> String {
    format!(
        "SELECT to_char(s AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), \
         extract(epoch FROM s - clock_timestamp())::float8 \
         FROM (SELECT max(ready_at) + $3::float8 * interval '1 millisecond' AS s FROM {} WHERE run_id = $1 \
         HAVING count(ready_at) = $2::int8) AS t",
        quote_ident(INSTANCES)
    )
}

/// Instance $2 of run $1 started at $3 (its status `running`).
pub fn started() -> String {
    format!(
        "UPDATE {} SET started_at = $3::text::timestamptz, status = 'running' WHERE run_id = $1 AND instance = $2",
        quote_ident(INSTANCES)
    )
}

/// Instance $2 of run $1 ended with status $3 ($4: why, or null; $5: its
/// kept run's run_id, or null).
pub fn finish() -> String {
    format!(
        "UPDATE {} SET finished_at = clock_timestamp(), status = $3, note = $4, kept_run_id = $5::text::uuid \
         WHERE run_id = $1 AND instance = $2",
        quote_ident(INSTANCES)
    )
}

/// The kept runs of the instances of distributed run $1 (their reports'
/// `run.instance.run_id`): id, report and histograms.
pub fn kept_instances() -> String {
    format!(
        "SELECT run_id::text, report::text, histograms FROM {} WHERE report #>> '{{run,instance,run_id}}' = $1 \
         ORDER BY (report #>> '{{run,instance,index}}')::int, started_at",
        quote_ident(RUNS)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_store_sql() {
        let all = [
            create_tables(),
            version_check(),
            insert_run(),
            insert_timeline(),
            insert_server_timeline(),
            list(),
            show(),
            lock_tables(),
            upgrade_from_1(),
            columns_missing(),
            add_columns(),
            server_timeline_missing(),
            register(),
            instances(),
            table_ready(),
            ready(),
            start(),
            started(),
            finish(),
            kept_instances(),
        ];
        insta::assert_snapshot!(all.join(";\n\n"));
    }

    #[test]
    fn every_run_column_is_bound_once() {
        let sql = insert_run();
        let columns = sql.split_once('(').unwrap().1.split_once(')').unwrap().0.split(',').count();
        assert_eq!(columns, 25);
        assert!(sql.contains("$24") && !sql.contains("$25"));
    }
}
