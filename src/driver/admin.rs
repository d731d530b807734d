//! The one connection a run uses besides its workers': to find out which
//! engine it talks to, create the table, count rows, check a mix's
//! queries, plan an export. It speaks either protocol behind one type
//! whose protocol is private, so the run's setup is written once for every
//! engine and `run/` cannot branch on the protocol: what only one protocol
//! can do is a method here that says so for the other.

use anyhow::{Context, Result};
use tokio_postgres::{Client, SimpleQueryMessage};

use super::cratedb_http::CrateConn;
use super::pg::{query, Canceller};
use crate::dialect::{cratedb, postgres, Engine};
use crate::error::usage;
use crate::workload::explain::{Explain, ExplainMode};
use crate::workload::params::Value;
use crate::workload::{Protocol, QuerySpec};

/// What detection found: the engine, its own version (the extension's for
/// TimescaleDB and Citus) and the server's.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineInfo {
    pub engine: Engine,
    pub version: Option<String>,
    pub server_version: String,
}

/// dbload's own connection to a target, over either protocol.
pub struct Admin(Conn);

enum Conn {
    /// With what cancels its statement: a signal that ends a phase cancels
    /// what this connection left running (a DDL waiting on a lock).
    Pg {
        client: Client,
        canceller: Canceller,
    },
    Crate(CrateConn),
}

impl Admin {
    pub(crate) fn pg(client: Client, canceller: Canceller) -> Admin {
        Admin(Conn::Pg { client, canceller })
    }

    pub(crate) fn crate_http(conn: CrateConn) -> Admin {
        Admin(Conn::Crate(conn))
    }

    /// The PostgreSQL-protocol client, for what only that protocol does
    /// (an export's plan, insert-from-sql's source); `what` names the
    /// command that needs it when the connection is CrateDB's HTTP one.
    pub(crate) fn into_client(self, what: &str) -> Result<Client> {
        match self.0 {
            Conn::Pg { client, .. } => Ok(client),
            Conn::Crate(_) => Err(usage(what.to_string())),
        }
    }

    /// The PostgreSQL-protocol client, borrowed; see [`Admin::into_client`].
    pub(crate) fn client(&self, what: &str) -> Result<&Client> {
        match &self.0 {
            Conn::Pg { client, .. } => Ok(client),
            Conn::Crate(_) => Err(usage(what.to_string())),
        }
    }

    /// Asks the server to cancel what this connection is running. Over
    /// HTTP, CrateDB has no cancel request: nothing is sent.
    pub async fn cancel(&self) {
        if let Conn::Pg { canceller, .. } = &self.0 {
            canceller.cancel().await;
        }
    }

    /// Runs statements that return nothing to read (DDL).
    pub async fn execute(&mut self, sql: &str) -> Result<()> {
        match &mut self.0 {
            Conn::Pg { client, .. } => client.batch_execute(sql).await.map_err(Into::into),
            Conn::Crate(c) => c.execute(sql, &[]).await.map(drop),
        }
    }

    /// Checks a mix's queries before the run: over the PostgreSQL protocol
    /// the server prepares each (see [`query::check`]); CrateDB's HTTP
    /// endpoint runs no pgbench scripts and has its placeholders counted.
    pub async fn check_queries(&self, queries: &[QuerySpec], protocol: Protocol) -> Result<()> {
        match &self.0 {
            Conn::Pg { client, .. } => query::check(client, queries, protocol).await,
            Conn::Crate(_) if queries.iter().any(|q| q.script.is_some()) => {
                Err(usage("pgbench scripts run over the PostgreSQL protocol: give CrateDB's postgres:// URL"))
            }
            Conn::Crate(_) => crate::workload::check_placeholders(queries),
        }
    }

    /// The scale of pgbench's tables, which `:scale` reads; 1 over HTTP,
    /// where no pgbench script runs.
    pub async fn pgbench_scale(&self) -> Result<i64> {
        match &self.0 {
            Conn::Pg { client, .. } => query::pgbench_scale(client).await,
            Conn::Crate(_) => Ok(1),
        }
    }

    /// The plan of `q` with `params`, captured over the PostgreSQL protocol.
    pub async fn explain(&self, q: &QuerySpec, params: &[Value], mode: ExplainMode) -> Result<Explain, String> {
        match &self.0 {
            Conn::Pg { client, .. } => query::explain(client, q, params, mode).await,
            Conn::Crate(_) => {
                Err("plans are captured over the PostgreSQL protocol: give CrateDB's postgres:// URL".into())
            }
        }
    }

    /// Runs a query and returns its rows as text (NULL as None), as the
    /// simple protocol gives them on PostgreSQL.
    pub async fn rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        match &mut self.0 {
            Conn::Pg { client, .. } => {
                let messages = client.simple_query(sql).await?;
                Ok(messages
                    .iter()
                    .filter_map(|m| match m {
                        SimpleQueryMessage::Row(r) => {
                            Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
                        }
                        _ => None,
                    })
                    .collect())
            }
            Conn::Crate(c) => {
                let r = c.execute(sql, &[]).await?;
                Ok(r.rows
                    .iter()
                    .map(|row| {
                        row.iter()
                            .map(|v| match v {
                                serde_json::Value::Null => None,
                                serde_json::Value::String(s) => Some(s.clone()),
                                v => Some(v.to_string()),
                            })
                            .collect()
                    })
                    .collect())
            }
        }
    }

    /// The first column of the first row.
    pub async fn scalar(&mut self, sql: &str) -> Result<Option<String>> {
        let rows = self.rows(sql).await?;
        Ok(rows.into_iter().next().and_then(|r| r.into_iter().next()).flatten())
    }

    /// A count (`SELECT count(*) ...`).
    pub async fn count(&mut self, sql: &str) -> Result<u64> {
        let n = self.scalar(sql).await?.unwrap_or_default();
        n.parse().with_context(|| format!("{sql}: expected a count, got {n:?}"))
    }

    /// Finds out which engine this is, and checks it against `--engine`.
    pub async fn detect(&mut self, named: Option<Engine>) -> Result<EngineInfo> {
        if let Conn::Crate(_) = self.0 {
            let version = self.scalar(cratedb::NODE_VERSION).await?;
            let version = version.unwrap_or_default();
            return Ok(EngineInfo { engine: Engine::Cratedb, version: Some(version.clone()), server_version: version });
        }
        let server = self.scalar(postgres::VERSION).await.context("asking the server its version")?;
        let server = server.unwrap_or_default();
        if server.contains("CrateDB") {
            let version = self.scalar(cratedb::NODE_VERSION).await?;
            return named_ok(named, EngineInfo { engine: Engine::Cratedb, version, server_version: server });
        }
        let server_version = self.scalar(postgres::SERVER_VERSION).await?.unwrap_or_default();
        let extensions = self.rows(postgres::ENGINE_EXTENSIONS).await?;
        let ext = |name: &str| extensions.iter().find(|r| r[0].as_deref() == Some(name)).and_then(|r| r[1].clone());
        let found = match named {
            Some(Engine::Postgres) => EngineInfo { engine: Engine::Postgres, version: None, server_version },
            Some(e @ (Engine::Citus | Engine::Timescaledb)) => match ext(&e.to_string()) {
                Some(v) => EngineInfo { engine: e, version: Some(v), server_version },
                None => {
                    return Err(usage(format!(
                        "--engine {e}: this database has no {e} extension; run CREATE EXTENSION {e}; in it, or leave --engine out"
                    )))
                }
            },
            Some(Engine::Cratedb) => {
                return Err(usage(format!(
                    "--engine cratedb: the server is not CrateDB (it says {server:?}); leave --engine out"
                )))
            }
            None => match (ext("citus"), ext("timescaledb")) {
                (Some(v), _) => EngineInfo { engine: Engine::Citus, version: Some(v), server_version },
                (None, Some(v)) => EngineInfo { engine: Engine::Timescaledb, version: Some(v), server_version },
                (None, None) => EngineInfo { engine: Engine::Postgres, version: None, server_version },
            },
        };
        Ok(found)
    }
}

fn named_ok(named: Option<Engine>, found: EngineInfo) -> Result<EngineInfo> {
    match named {
        Some(e) if e != found.engine => Err(usage(format!(
            "--engine {e}: the server is {} {}; leave --engine out or name that engine",
            found.engine,
            found.version.as_deref().unwrap_or_default()
        ))),
        _ => Ok(found),
    }
}
