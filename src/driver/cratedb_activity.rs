//! The connection of a run's server sampler on CrateDB (`run::sampler`),
//! over the protocol the run's target speaks: a tokio-postgres connection
//! of its own to CrateDB's PostgreSQL port (its statement prepared once),
//! or a keep-alive connection of its own to its HTTP endpoint. Either way it sends `dialect::cratedb_activity`'s
//! one statement and reads its rows into the same figures, so a sample
//! means the same whichever way it came.

use serde_json::Value;
use tokio_postgres::{Client, Statement};

use super::cratedb_http::{CrateConn, CrateTarget};
use super::pg::activity::Totals;
use super::pg::PgTarget;
use crate::dialect::cratedb_activity::{self as sql, figures};
use crate::stats::server::ServerSecond;

/// A CrateDB sampling connection, ready.
pub struct CrateActivity {
    conn: Conn,
    /// The run's table as its statements name it, if it has one.
    table: Option<String>,
}

enum Conn {
    Pg { client: Client, statement: Statement },
    Http(Box<CrateConn>),
}

/// Why the run's jobs are counted with the others'.
const NOT_TOLD_APART: &str = "the run has no table, and CrateDB keeps no application_name given at startup: \
                              the run's jobs are counted with the others'";

/// Who the sampling connection is on CrateDB.
pub struct CrateWho {
    pub user: String,
    /// Whether the user sees every user's jobs (a superuser); unknown
    /// (none) when `sys.users` does not say.
    pub superuser: Option<bool>,
    /// CrateDB's `stats.enabled`: without it, no job or operation is kept.
    pub stats_enabled: bool,
    /// Whether the run's jobs are told apart from the others' (by their
    /// statement naming its table), or why not.
    pub told_apart: Result<(), &'static str>,
}

impl CrateActivity {
    /// Connects to CrateDB's PostgreSQL port as `pg` says, under a name of
    /// its own, and prepares the sample; `table`: the run's, as its
    /// statements name it.
    pub async fn pg(pg: &PgTarget, table: Option<String>) -> Result<(CrateActivity, CrateWho), String> {
        let own = pg.named(&format!("dbload sampler ({})", pg.application_name().unwrap_or_default()));
        let client = own.connect().await.map_err(|e| format!("the server's sampler could not connect: {e:#}"))?;
        let who = client.query_one(sql::WHO, &[]).await.map_err(|e| format!("the server's sampler: {e}"))?;
        let superuser = client.query_opt(sql::SUPERUSER, &[]).await.ok().flatten().and_then(|r| r.get(0));
        let who = CrateWho {
            user: who.get(0),
            superuser,
            stats_enabled: who.get::<_, Option<bool>>(1).unwrap_or(false),
            told_apart: table.as_ref().map(drop).ok_or(NOT_TOLD_APART),
        };
        let statement = client
            .prepare(sql::SAMPLE)
            .await
            .map_err(|e| format!("the server's sampler could not prepare its statement: {e}"))?;
        Ok((CrateActivity { conn: Conn::Pg { client, statement }, table }, who))
    }

    /// Connects to CrateDB's HTTP endpoint (the first node of the URL that
    /// answers); `table`: the run's, as its statements name it.
    pub async fn http(c: &CrateTarget, table: Option<String>) -> Result<(CrateActivity, CrateWho), String> {
        let mut conn = c.connect_any().await.map_err(|e| format!("the server's sampler could not connect: {e:#}"))?;
        let who = conn.execute(sql::WHO, &[]).await.map_err(|e| format!("the server's sampler: {e:#}"))?;
        let row = who.rows.first().ok_or("the server's sampler: CrateDB said nothing of its user")?;
        let superuser = conn.execute(sql::SUPERUSER, &[]).await.ok();
        let superuser = superuser.and_then(|r| r.rows.first()?.first()?.as_bool());
        let who = CrateWho {
            user: row.first().and_then(Value::as_str).unwrap_or_default().to_string(),
            superuser,
            stats_enabled: row.get(1).and_then(Value::as_bool).unwrap_or(false),
            told_apart: table.as_ref().map(drop).ok_or(NOT_TOLD_APART),
        };
        Ok((CrateActivity { conn: Conn::Http(Box::new(conn)), table }, who))
    }

    /// One sample: the thread pools' rejected work as totals, and the
    /// rest of the second it ends.
    pub async fn sample(&mut self) -> Result<(Totals, ServerSecond), String> {
        let failed = |e: String| format!("a sample of the server failed: {e}");
        let rows: Vec<(String, String, i64)> = match &mut self.conn {
            Conn::Pg { client, statement } => {
                let rows = client.query(&*statement, &[&self.table, &sql::SAMPLE]).await;
                let rows = rows.map_err(|e| failed(e.to_string()))?;
                let text = |r: &tokio_postgres::Row, i| r.get::<_, Option<String>>(i).unwrap_or_default();
                rows.iter().map(|r| (text(r, 0), text(r, 1), r.get::<_, Option<i64>>(2).unwrap_or(0))).collect()
            }
            Conn::Http(conn) => {
                let args = [self.table.clone().map_or(Value::Null, Value::String), sql::SAMPLE.into()];
                let answer = conn.execute(sql::SAMPLE, &args).await.map_err(|e| failed(format!("{e:#}")))?;
                let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_string();
                let n = |v: Option<&Value>| v.and_then(Value::as_i64).unwrap_or(0);
                answer.rows.iter().map(|r| (text(r.first()), text(r.get(1)), n(r.get(2)))).collect()
            }
        };
        let f = figures(rows, self.table.is_some());
        let totals = Totals { engine: f.totals, ..Totals::default() };
        Ok((totals, ServerSecond { engine: f.levels, ..ServerSecond::default() }))
    }
}
