//! TSBS's cpu-only query types (its devops use case) in each engine's SQL,
//! against the table `dbload ingest --model cpu` makes: the time in `ts`,
//! the host's tags in the `tags` object (`hostname` among them), and the
//! ten `usage_*` columns. TSBS writes its queries with the values inlined,
//! one generator per database; here the values are bound, so one statement
//! per query type is prepared once and its parameters drawn per execution.
//!
//! Placeholders come in one order for every query type: the hosts first
//! (`$1` ... `$n`), then the window's start and end, or only its end for
//! groupby-orderby-limit (see [`CpuQuery::window`]).

use super::Engine;
use crate::ident::{quote_ident, TableName};
use crate::model::cpu::USAGE;

/// The shape of one TSBS cpu query type: what it aggregates, over how many
/// hosts. Window lengths are the parameters' business, not the SQL's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuQuery {
    /// Per minute, the max of the first `metrics` usage columns of `hosts` hosts in a window.
    SingleGroupby { metrics: usize, hosts: usize },
    /// Per hour, the max of all ten usage columns of `hosts` hosts in a window.
    MaxAll { hosts: usize },
    /// Per hour and host, the mean of the first `metrics` usage columns in a window, all hosts.
    DoubleGroupby { metrics: usize },
    /// The readings whose `usage_user` is above 90 in a window, of `hosts` hosts (none: all).
    HighCpu { hosts: Option<usize> },
    /// Each host's last reading.
    Lastpoint,
    /// The max `usage_user` of the last 5 minutes before a point in time.
    GroupbyOrderbyLimit,
}

/// Which time values a query type binds after its hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// None: the query reads the whole table.
    Nothing,
    /// A window's start and end (`ts >= $a AND ts < $b`).
    Window,
    /// A point in time (`ts < $a`).
    End,
}

impl CpuQuery {
    /// The hosts bound, `$1` ... `$n` (0: the query covers every host).
    pub fn hosts(self) -> usize {
        match self {
            CpuQuery::SingleGroupby { hosts, .. } | CpuQuery::MaxAll { hosts } => hosts,
            CpuQuery::HighCpu { hosts } => hosts.unwrap_or(0),
            CpuQuery::DoubleGroupby { .. } | CpuQuery::Lastpoint | CpuQuery::GroupbyOrderbyLimit => 0,
        }
    }

    /// The time values bound after the hosts.
    pub fn window(self) -> Bound {
        match self {
            CpuQuery::Lastpoint => Bound::Nothing,
            CpuQuery::GroupbyOrderbyLimit => Bound::End,
            _ => Bound::Window,
        }
    }

    /// The statement on `engine` for `table`.
    pub fn sql(self, engine: Engine, table: &TableName) -> String {
        let t = table.sql();
        let ts = quote_ident("ts");
        let host = hostname(engine, "");
        let hosts = self.hosts();
        let in_hosts = format!("{host} IN ({})", placeholders(1, hosts));
        let window = format!("{ts} >= ${} AND {ts} < ${}", hosts + 1, hosts + 2);
        match self {
            CpuQuery::SingleGroupby { metrics, .. } => format!(
                "SELECT {} AS \"minute\", {} FROM {t} WHERE {in_hosts} AND {window} GROUP BY 1 ORDER BY 1",
                bucket(engine, "minute"),
                aggregates("max", &USAGE[..metrics]),
            ),
            CpuQuery::MaxAll { .. } => format!(
                "SELECT {} AS \"hour\", {} FROM {t} WHERE {in_hosts} AND {window} GROUP BY 1 ORDER BY 1",
                bucket(engine, "hour"),
                aggregates("max", &USAGE),
            ),
            CpuQuery::DoubleGroupby { metrics } => format!(
                "SELECT {} AS \"hour\", {host} AS \"hostname\", {} FROM {t} WHERE {window} \
                 GROUP BY 1, 2 ORDER BY 1, 2",
                bucket(engine, "hour"),
                aggregates("avg", &USAGE[..metrics]),
            ),
            CpuQuery::HighCpu { hosts: None } => {
                format!("SELECT * FROM {t} WHERE {} > 90 AND {window}", quote_ident("usage_user"))
            }
            CpuQuery::HighCpu { hosts: Some(_) } => {
                format!("SELECT * FROM {t} WHERE {in_hosts} AND {} > 90 AND {window}", quote_ident("usage_user"))
            }
            CpuQuery::Lastpoint => lastpoint(engine, &t),
            CpuQuery::GroupbyOrderbyLimit => format!(
                "SELECT {} AS \"minute\", {} FROM {t} WHERE {ts} < $1 GROUP BY 1 ORDER BY 1 DESC LIMIT 5",
                bucket(engine, "minute"),
                aggregates("max", &USAGE[..1]),
            ),
        }
    }
}

/// The columns the suite's statements read: the cpu model's time, tags and metrics.
pub fn columns() -> impl Iterator<Item = &'static str> {
    ["ts", "tags"].into_iter().chain(USAGE)
}

/// The hosts in `table`, one per row, sorted (so a seed draws the same
/// hosts from the same table).
pub fn hosts(engine: Engine, table: &TableName) -> String {
    format!("SELECT DISTINCT {} FROM {} ORDER BY 1", hostname(engine, ""), table.sql())
}

/// The first and last reading's time in `table`, µs since the Unix epoch
/// (NULL when it is empty).
pub fn time_range(engine: Engine, table: &TableName) -> String {
    let ts = quote_ident("ts");
    match engine {
        // CrateDB's timestamps are epoch milliseconds.
        Engine::Cratedb => {
            format!("SELECT CAST(min({ts}) AS BIGINT) * 1000, CAST(max({ts}) AS BIGINT) * 1000 FROM {}", table.sql())
        }
        _ => format!(
            "SELECT (extract(epoch FROM min({ts})) * 1000000)::bigint, \
             (extract(epoch FROM max({ts})) * 1000000)::bigint FROM {}",
            table.sql()
        ),
    }
}

/// The host's name, read from the tags object of the row of `alias` (or
/// of the only table, with `""`).
fn hostname(engine: Engine, alias: &str) -> String {
    let tags = format!("{alias}{}", quote_ident("tags"));
    match engine {
        Engine::Cratedb => format!("{tags}['hostname']"),
        _ => format!("({tags}->>'hostname')"),
    }
}

/// The start of the UTC minute or hour of `ts`: TimescaleDB's
/// `time_bucket` (what TSBS uses there), `date_trunc` elsewhere; both
/// buckets TSBS asks for are whole units, so CrateDB needs no `date_bin`.
/// PostgreSQL's `date_trunc` of a timestamptz truncates in the session's
/// time zone (hours at :30 in India), so it is told UTC, as TSBS's buckets
/// are; CrateDB's truncates in UTC.
fn bucket(engine: Engine, unit: &str) -> String {
    let ts = quote_ident("ts");
    match engine {
        Engine::Timescaledb => format!("time_bucket(INTERVAL '1 {unit}', {ts})"),
        Engine::Postgres | Engine::Citus => format!("date_trunc('{unit}', {ts}, 'UTC')"),
        Engine::Cratedb => format!("date_trunc('{unit}', {ts})"),
    }
}

/// `$from, ..., $(from + n - 1)`.
fn placeholders(from: usize, n: usize) -> String {
    (from..from + n).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ")
}

/// `max("usage_user") AS "max_usage_user", ...`
fn aggregates(function: &str, metrics: &[&str]) -> String {
    let each = metrics
        .iter()
        .map(|m| format!("{function}({}) AS {}", quote_ident(m), quote_ident(&format!("{function}_{m}"))));
    each.collect::<Vec<_>>().join(", ")
}

/// Each host's last reading. `DISTINCT ON` where the engine is PostgreSQL
/// on one node; on Citus and CrateDB, whose tables are spread over nodes,
/// the join of every host's latest time with its row (TSBS's CrateDB form),
/// which each node can answer for its shards.
fn lastpoint(engine: Engine, t: &str) -> String {
    let ts = quote_ident("ts");
    match engine {
        Engine::Postgres | Engine::Timescaledb => {
            let host = hostname(engine, "");
            format!("SELECT DISTINCT ON ({host}) * FROM {t} ORDER BY {host}, {ts} DESC")
        }
        Engine::Citus | Engine::Cratedb => format!(
            "SELECT c.* FROM (SELECT {} AS \"host\", max({ts}) AS \"last\" FROM {t} GROUP BY 1) AS l, {t} AS c \
             WHERE c.{ts} = l.\"last\" AND {} = l.\"host\"",
            hostname(engine, ""),
            hostname(engine, "c."),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every query type's statement on every engine, frozen.
    #[test]
    fn cpu_queries_sql() {
        let table = TableName::parse("bench.cpu").unwrap();
        let queries = [
            CpuQuery::SingleGroupby { metrics: 5, hosts: 8 },
            CpuQuery::MaxAll { hosts: 1 },
            CpuQuery::DoubleGroupby { metrics: 1 },
            CpuQuery::HighCpu { hosts: Some(1) },
            CpuQuery::HighCpu { hosts: None },
            CpuQuery::Lastpoint,
            CpuQuery::GroupbyOrderbyLimit,
        ];
        for engine in [Engine::Postgres, Engine::Timescaledb, Engine::Citus, Engine::Cratedb] {
            let mut sql: Vec<String> = queries.iter().map(|q| format!("-- {q:?}\n{}", q.sql(engine, &table))).collect();
            sql.push(format!("-- hosts\n{}", hosts(engine, &table)));
            sql.push(format!("-- time range\n{}", time_range(engine, &table)));
            insta::assert_snapshot!(format!("tsbs_cpu_{engine}"), sql.join(";\n\n"));
        }
    }

    /// The placeholders each statement holds are those its hosts and window bind, numbered from 1.
    #[test]
    fn placeholders_follow_the_hosts_then_the_window() {
        let table = TableName::parse("cpu").unwrap();
        for q in [
            CpuQuery::SingleGroupby { metrics: 1, hosts: 8 },
            CpuQuery::HighCpu { hosts: None },
            CpuQuery::Lastpoint,
            CpuQuery::GroupbyOrderbyLimit,
        ] {
            let times = match q.window() {
                Bound::Nothing => 0,
                Bound::End => 1,
                Bound::Window => 2,
            };
            let n = q.hosts() + times;
            let sql = q.sql(Engine::Postgres, &table);
            assert!((1..=n).all(|i| sql.contains(&format!("${i}"))) && !sql.contains(&format!("${}", n + 1)), "{sql}");
        }
    }
}
