//! The one connection a run uses besides its workers': to find out which
//! engine it talks to, create the table, count rows. It speaks either
//! protocol, so the run's setup is written once for every engine.

use anyhow::{Context, Result};
use tokio_postgres::SimpleQueryMessage;

use super::cratedb_http::CrateConn;
use crate::dialect::{cratedb, postgres, Engine};
use crate::error::usage;

/// What detection found: the engine, its own version (the extension's for
/// TimescaleDB and Citus) and the server's.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineInfo {
    pub engine: Engine,
    pub version: Option<String>,
    pub server_version: String,
}

pub enum Admin {
    Pg(tokio_postgres::Client),
    Crate(CrateConn),
}

impl Admin {
    /// Runs statements that return nothing to read (DDL).
    pub async fn execute(&mut self, sql: &str) -> Result<()> {
        match self {
            Admin::Pg(c) => c.batch_execute(sql).await.map_err(Into::into),
            Admin::Crate(c) => c.execute(sql, &[]).await.map(drop),
        }
    }

    /// Runs a query and returns its rows as text (NULL as None), as the
    /// simple protocol gives them on PostgreSQL.
    pub async fn rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        match self {
            Admin::Pg(c) => {
                let messages = c.simple_query(sql).await?;
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
            Admin::Crate(c) => {
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
        if let Admin::Crate(_) = self {
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
