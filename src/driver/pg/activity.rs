//! The connection of a run's server sampler (`run::sampler`): its own
//! tokio-postgres connection, never a worker's, with the sampling
//! statement (`dialect::activity`) prepared once and its parameters (the
//! run's `application_name` and table) bound at every sample.

use std::collections::BTreeMap;

use tokio_postgres::{Client, Statement};

use super::PgTarget;
use crate::dialect::activity as sql;
use crate::stats::server::{ServerSecond, NO_WAIT};

/// A sampling connection, ready.
pub struct ActivityConn {
    client: Client,
    statement: Statement,
    session: String,
    table: Option<String>,
}

/// Who the sampling connection is on the server.
pub struct Who {
    /// Whether its role sees every session's wait events (`pg_read_all_stats`).
    pub sees_all: bool,
    pub role: String,
    /// Its backend process.
    pub pid: i32,
}

/// The server's counters at one sample, as totals since it started.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    pub checkpoints_timed: u64,
    pub checkpoints_requested: u64,
    /// None on a standby.
    pub wal: Option<u64>,
    pub temp_files: u64,
    pub temp_bytes: u64,
    /// The engine's own counters by the name a report shows (CrateDB's
    /// thread pools' rejected work): the sampler keeps their differences
    /// in [`ServerSecond::engine`].
    pub engine: BTreeMap<String, u64>,
}

impl ActivityConn {
    /// Connects to `pg` and prepares the sample of the server's version;
    /// `table`: the run's table as SQL, if it has one.
    pub async fn open(pg: &PgTarget, table: Option<String>) -> Result<(ActivityConn, Who), String> {
        // A name of its own: the sampler is none of the run's sessions, and
        // what looks for those (or ends one) must not find it.
        let session = pg.application_name().unwrap_or_default().to_string();
        let own = pg.named(&format!("dbload sampler ({session})"));
        let client = own.connect().await.map_err(|e| format!("the server's sampler could not connect: {e:#}"))?;
        let who = client.query_one(sql::WHO, &[]).await.map_err(|e| format!("the server's sampler: {e}"))?;
        let version: i32 = who.get(3);
        let statement = client
            .prepare(&sql::sample(version))
            .await
            .map_err(|e| format!("the server's sampler could not prepare its statement: {e}"))?;
        let who = Who { sees_all: who.get(0), role: who.get(1), pid: who.get(2) };
        Ok((ActivityConn { client, statement, session, table }, who))
    }

    /// One sample: the counters' totals, and the rest of the second it ends.
    pub async fn sample(&self) -> Result<(Totals, ServerSecond), String> {
        let row = self
            .client
            .query_one(&self.statement, &[&self.session, &self.table])
            .await
            .map_err(|e| format!("a sample of the server failed: {e}"))?;
        let count = |i: usize| row.get::<_, Option<i64>>(i).unwrap_or(0).max(0) as u64;
        let totals = Totals {
            checkpoints_timed: count(1),
            checkpoints_requested: count(2),
            wal: row.get::<_, Option<i64>>(3).map(|b| b.max(0) as u64),
            temp_files: count(4),
            temp_bytes: count(5),
            engine: BTreeMap::new(),
        };
        let mut second = ServerSecond {
            vacuum: row.get(6),
            lock_waits: count(7),
            replica_lag_s: row.get(8),
            ..ServerSecond::default()
        };
        let waits: Vec<(bool, String, u32)> = serde_json::from_str(row.get::<_, &str>(0))
            .map_err(|e| format!("a sample of the server: its wait events: {e}"))?;
        for (own, wait, n) in waits {
            let wait = if wait.is_empty() { NO_WAIT.to_string() } else { wait };
            let into = if own { &mut second.own_waits } else { &mut second.other_waits };
            *into.entry(wait).or_default() += n;
        }
        Ok((totals, second))
    }
}
