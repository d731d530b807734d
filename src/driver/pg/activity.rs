//! The connection of a run's server sampler (`run::sampler`): its own
//! tokio-postgres connection, never a worker's, with the sampling
//! statement (`dialect::activity`) prepared once and its parameters (the
//! run's `application_name` and table) bound at every sample; the engine's
//! own statement, when it has one, is sent with it in the same round trip.

use std::collections::BTreeMap;

use tokio_postgres::types::Type;
use tokio_postgres::{Client, Statement};

use super::PgTarget;
use crate::dialect::activity as sql;
use crate::dialect::Engine;
use crate::stats::server::{ServerSecond, NO_WAIT};

/// A sampling connection, ready.
pub struct ActivityConn {
    client: Client,
    statement: Statement,
    /// The engine's own statement (`dialect::activity::engine_sample`).
    engine: Option<Statement>,
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
    /// Why the engine's own figures are not read, when it has some and
    /// its statement could not be prepared (an older version, a view the
    /// role may not read).
    pub engine_unseen: Option<String>,
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
    /// The engine's counters, by name.
    pub engine: BTreeMap<String, f64>,
}

impl ActivityConn {
    /// Connects to `pg`, a server of `engine`, and prepares the sample of
    /// the server's version and the engine's; `table`: the run's table as
    /// SQL, if it has one.
    pub async fn open(pg: &PgTarget, engine: Engine, table: Option<String>) -> Result<(ActivityConn, Who), String> {
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
        let (engine, engine_unseen) = match sql::engine_sample(engine) {
            // Typed, as both statements are bound the same two texts, which
            // an engine's statement need not both use.
            Some(own) => match client.prepare_typed(&own, &[Type::TEXT, Type::TEXT]).await {
                Ok(statement) => (Some(statement), None),
                Err(e) => {
                    (None, Some(format!("{engine}: its own figures are not read, as their statement failed: {e}")))
                }
            },
            None => (None, None),
        };
        let who = Who { sees_all: who.get(0), role: who.get(1), pid: who.get(2), engine_unseen };
        Ok((ActivityConn { client, statement, engine, session, table }, who))
    }

    /// The statements one sample sends: the server's, and the engine's when it has one.
    pub fn statements(&self) -> u64 {
        1 + u64::from(self.engine.is_some())
    }

    /// One sample: the counters' totals, and the rest of the second it ends.
    pub async fn sample(&self) -> Result<(Totals, ServerSecond), String> {
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&self.session, &self.table];
        let engine = async {
            match &self.engine {
                Some(statement) => self.client.query(statement, &params).await.map(Some),
                None => Ok(None),
            }
        };
        // Sent together: one round trip.
        let (row, engine) = tokio::join!(self.client.query_one(&self.statement, &params), engine);
        let row = row.map_err(|e| format!("a sample of the server failed: {e}"))?;
        let engine = engine.map_err(|e| format!("a sample of the engine's own figures failed: {e}"))?;
        let count = |i: usize| row.get::<_, Option<i64>>(i).unwrap_or(0).max(0) as u64;
        let mut totals = Totals {
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
        for figure in engine.into_iter().flatten() {
            let (name, value, total): (String, Option<f64>, bool) = (figure.get(0), figure.get(1), figure.get(2));
            let into = if total { &mut totals.engine } else { &mut second.engine };
            // Zero is no figure: a name absent from a second is 0 in it.
            if let Some(v) = value.filter(|v| *v != 0.0 || total) {
                into.insert(name, v);
            }
        }
        Ok((totals, second))
    }
}
