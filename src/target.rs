//! Where the load goes, as the user names it: a PostgreSQL-protocol server
//! given by URL or `PG*` variables, CrateDB's HTTP endpoint, or a throwaway
//! local PostgreSQL that dbload starts and removes. The code that speaks to
//! each is in [`crate::driver`].

use anyhow::Result;

use std::sync::Arc;

use crate::dialect::Engine;
use crate::driver::admin::Admin;
use crate::driver::cratedb_http::exec::CrateQueryExecutor;
use crate::driver::cratedb_http::CrateTarget;
use crate::driver::pg::query::QueryExecutor;
use crate::driver::pg::PgTarget;
use crate::driver::query::QueryRunner;
use crate::workload::{Protocol, QuerySpec};

/// A target as a run holds it once started.
#[derive(Debug, Clone)]
pub enum Target {
    /// A server speaking the PostgreSQL protocol (CrateDB's port 5432 too),
    /// with the engine `--engine` named, if it named one.
    Pg { pg: Box<PgTarget>, engine: Option<Engine> },
    /// CrateDB's HTTP `_sql` endpoint.
    Crate(CrateTarget),
}

impl Target {
    /// The URL with its password replaced, for reports.
    pub fn redacted(&self) -> String {
        match self {
            Target::Pg { pg, .. } => pg.redacted().to_string(),
            Target::Crate(c) => c.redacted().to_string(),
        }
    }

    pub async fn admin(&self) -> Result<Admin> {
        Ok(match self {
            Target::Pg { pg, .. } => Admin::Pg(pg.connect().await?),
            Target::Crate(c) => Admin::Crate(c.connect_any().await?),
        })
    }

    /// Opens worker `w`'s query connection (CrateDB: to its round-robin host).
    pub async fn query_runner(&self, w: usize, queries: Arc<[QuerySpec]>, protocol: Protocol) -> Result<QueryRunner> {
        Ok(match self {
            Target::Pg { pg, .. } => QueryRunner::Pg(QueryExecutor::open(pg, queries, protocol).await?),
            Target::Crate(c) => QueryRunner::Crate(CrateQueryExecutor::open(c, w, queries).await?),
        })
    }
}
