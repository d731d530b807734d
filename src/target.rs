//! Where the load goes, as the user names it: a PostgreSQL-protocol server
//! given by URL or `PG*` variables, CrateDB's HTTP endpoint, or a throwaway
//! local PostgreSQL that dbload starts and removes. [`Started`] holds a
//! command's target for as long as the command runs: the throwaway server
//! lives as long as it does, and one kept with `--keep` is said when it
//! ends. The code that speaks to each target is in [`crate::driver`].

use anyhow::Result;

use std::sync::Arc;

use crate::config::TargetChoice;
use crate::dialect::Engine;
use crate::driver::admin::Admin;
use crate::driver::cratedb_http::exec::CrateQueryExecutor;
use crate::driver::cratedb_http::CrateTarget;
use crate::driver::pg::query::QueryExecutor;
use crate::driver::pg::PgTarget;
use crate::driver::query::QueryRunner;
use crate::throwaway::LocalPostgres;
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

/// A started target: a throwaway server (kept alive by this value) or a
/// remote one; none for a dry run.
pub struct Started {
    local: Option<LocalPostgres>,
    target: Option<Target>,
    keep: bool,
}

impl Started {
    /// Starts a throwaway server if that is the choice, calling
    /// `before_server` first: the caller notes stop signals there
    /// (`run::signals`, which a target does not name), so that one that
    /// comes while the server starts is not fatal. Call it before the
    /// runtime, on a thread that outlives the server (see `throwaway`).
    pub fn new(choice: &TargetChoice, before_server: fn()) -> Result<Started> {
        let local = match choice {
            TargetChoice::Local(opts) => {
                before_server();
                Some(LocalPostgres::start(opts)?)
            }
            _ => None,
        };
        let target = match (choice, &local) {
            (_, Some(l)) => Some(Target::Pg { pg: Box::new(l.target()), engine: Some(Engine::Postgres) }),
            (TargetChoice::Remote(t, engine), None) => Some(Target::Pg { pg: t.clone(), engine: *engine }),
            (TargetChoice::Crate(c), None) => Some(Target::Crate((**c).clone())),
            _ => None,
        };
        let keep = matches!(choice, TargetChoice::Local(o) if o.keep);
        Ok(Started { local, target, keep })
    }

    /// The target; none for a dry run.
    pub fn target(&self) -> Option<&Target> {
        self.target.as_ref()
    }

    /// The target of a command that cannot run without one: any but an
    /// ingest, the only command with a dry run.
    pub fn server(&self) -> &Target {
        self.target.as_ref().expect("only an ingest runs without a target (--dry-run)")
    }

    /// The target's URL, its password replaced, for reports.
    pub fn url(&self) -> Option<String> {
        self.target.as_ref().map(Target::redacted)
    }

    /// Whether the target is a throwaway server dbload started.
    pub fn throwaway(&self) -> bool {
        self.local.is_some()
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        if let (Some(l), true) = (&self.local, self.keep) {
            crate::console::text(&l.keep_recipe());
        }
    }
}
