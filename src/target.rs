//! Where the load goes, as the user names it: a PostgreSQL-protocol server
//! given by URL or `PG*` variables, CrateDB's HTTP endpoint, or a throwaway
//! local PostgreSQL that dbload starts and removes. [`Started`] holds a
//! command's target for as long as the command runs: the throwaway server
//! lives as long as it does, and one kept with `--keep` is said when it
//! ends. The code that speaks to each target is in [`crate::driver`].

use anyhow::Result;

use std::sync::Arc;

use crate::config::TargetChoice;
use crate::dialect::{Engine, ExportFormat, Method};
use crate::driver::admin::Admin;
use crate::driver::cratedb_activity::{CrateActivity, CrateWho};
use crate::driver::cratedb_http::exec::{CrateQueryExecutor, CrateSink};
use crate::driver::cratedb_http::CrateTarget;
use crate::driver::export::file::ExportFile;
use crate::driver::export::ExportWorker;
use crate::driver::pg::activity::{ActivityConn, Who};
use crate::driver::pg::from_sql::TableCopy;
use crate::driver::pg::query::QueryExecutor;
use crate::driver::pg::sink::PgSink;
use crate::driver::pg::PgTarget;
use crate::driver::query::QueryRunner;
use crate::driver::sink::Sink;
use crate::driver::spec::SinkSpec;
use crate::error::usage;
use crate::ident::TableName;
use crate::throwaway::LocalPostgres;
use crate::workload::script::Tries;
use crate::workload::{Protocol, QuerySpec};

/// A target as a run holds it once started. It hands out the connections a
/// run needs (admin, sinks, query runners, export workers, COPY-in), each
/// from the driver of its protocol: `run/` asks for them and never names a
/// protocol, so a new way to reach a server is a variant and its arms here.
#[derive(Debug, Clone)]
pub enum Target {
    /// A server speaking the PostgreSQL protocol (CrateDB's port 5432 too),
    /// with the engine `--engine` named, if it named one.
    Pg { pg: Box<PgTarget>, engine: Option<Engine> },
    /// CrateDB's HTTP `_sql` endpoint.
    Crate(CrateTarget),
}

impl Target {
    /// The server `choice` names when it is one already running (a URL, the
    /// environment's, CrateDB's endpoint); none for a throwaway server (see
    /// [`Started::new`]) or a dry run.
    pub fn given(choice: &TargetChoice) -> Option<Target> {
        match choice {
            TargetChoice::Remote(t, engine) => Some(Target::Pg { pg: t.clone(), engine: *engine }),
            TargetChoice::Crate(c) => Some(Target::Crate((**c).clone())),
            TargetChoice::Local(_) | TargetChoice::DryRun { .. } => None,
        }
    }

    /// The target whose connections name run `run_id` to the server (see
    /// [`PgTarget::for_run`]); CrateDB's HTTP endpoint names none.
    pub fn for_run(self, run_id: &str) -> Target {
        match self {
            Target::Pg { pg, engine } => Target::Pg { pg: Box::new(pg.for_run(run_id)), engine },
            crate_http => crate_http,
        }
    }

    /// The URL with its password replaced, for reports.
    pub fn redacted(&self) -> String {
        match self {
            Target::Pg { pg, .. } => pg.redacted().to_string(),
            Target::Crate(c) => c.redacted().to_string(),
        }
    }

    /// The engine the run may assume before asking the server: `--engine`'s,
    /// and CrateDB for its HTTP endpoint, which no other engine serves.
    pub fn named_engine(&self) -> Option<Engine> {
        match self {
            Target::Pg { engine, .. } => *engine,
            Target::Crate(_) => Some(Engine::Cratedb),
        }
    }

    /// The name its PostgreSQL-protocol connections give the server (see
    /// [`PgTarget::for_run`]); none over CrateDB's HTTP endpoint.
    pub fn session_name(&self) -> Option<&str> {
        match self {
            Target::Pg { pg, .. } => pg.application_name(),
            Target::Crate(_) => None,
        }
    }

    /// The connection of the run's server sampler on a PostgreSQL-family
    /// server, and who it is there; `table`: the run's. Why not, when
    /// there is none.
    pub async fn activity(&self, engine: Engine, table: Option<&TableName>) -> Result<(ActivityConn, Who), String> {
        match self {
            Target::Pg { pg, .. } => ActivityConn::open(pg, engine, table.map(TableName::sql)).await,
            Target::Crate(_) => Err("CrateDB's HTTP endpoint has no pg_stat_activity: see cratedb_activity".into()),
        }
    }

    /// The connection of the run's server sampler on CrateDB, over the
    /// target's protocol, and who it is there; `table`: the run's.
    pub async fn cratedb_activity(&self, table: Option<&TableName>) -> Result<(CrateActivity, CrateWho), String> {
        let table = table.map(TableName::sql);
        match self {
            Target::Pg { pg, .. } => CrateActivity::pg(pg, table).await,
            Target::Crate(c) => CrateActivity::http(c, table).await,
        }
    }

    /// Whether the target is CrateDB's HTTP endpoint: rows go as JSON, there
    /// is no COPY, no cancel request and no PostgreSQL-protocol statement.
    pub fn over_http(&self) -> bool {
        matches!(self, Target::Crate(_))
    }

    /// dbload's own connection (outside the measured path).
    pub async fn admin(&self) -> Result<Admin> {
        Ok(match self {
            Target::Pg { pg, .. } => {
                let client = pg.connect().await?;
                let canceller = pg.canceller(&client);
                Admin::pg(client, canceller)
            }
            Target::Crate(c) => Admin::crate_http(c.connect_any().await?),
        })
    }

    /// Opens worker `w`'s query connection (CrateDB: to its round-robin host).
    pub async fn query_runner(
        &self,
        w: usize,
        queries: Arc<[QuerySpec]>,
        protocol: Protocol,
        tries: Tries,
        connect_each: bool,
        window: usize,
    ) -> Result<QueryRunner> {
        Ok(match self {
            Target::Pg { pg, .. } => {
                QueryRunner::Pg(QueryExecutor::open(pg, queries, protocol, tries, connect_each, window).await?)
            }
            Target::Crate(c) => QueryRunner::Crate(CrateQueryExecutor::open(c, w, queries).await?),
        })
    }

    /// Opens worker `w`'s ingest sink for `spec` (CrateDB: to its round-robin host).
    pub async fn sink(&self, w: usize, spec: &SinkSpec) -> Result<Sink> {
        Ok(match self {
            Target::Pg { pg, .. } => Sink::Postgres(PgSink::open(pg, spec).await?),
            Target::Crate(c) => Sink::crate_http(CrateSink::open(c, w, spec.method == Method::Bulk).await?, spec),
        })
    }

    /// Opens a worker's binary COPY into a table (`copy`: its statement),
    /// for rows that come as COPY tuples (insert-from-sql's).
    pub async fn table_copy(&self, copy: &str) -> Result<TableCopy> {
        match self {
            Target::Pg { pg, .. } => TableCopy::open(pg, copy).await,
            Target::Crate(_) => Err(usage("a binary copy runs over the PostgreSQL protocol: give a postgres:// URL")),
        }
    }

    /// Opens an export worker that streams `copy` (a `COPY ... TO STDOUT`)
    /// into `file`, in `snapshot` when the export has one; a
    /// PostgreSQL-family server's.
    pub async fn copy_export(
        &self,
        snapshot: Option<&str>,
        copy: String,
        format: ExportFormat,
        file: ExportFile,
        chunk_rows: usize,
    ) -> Result<ExportWorker> {
        match self {
            Target::Pg { pg, .. } => ExportWorker::copy(pg, snapshot, copy, format, file, chunk_rows).await,
            Target::Crate(_) => Err(usage("a binary copy runs over the PostgreSQL protocol: give a postgres:// URL")),
        }
    }

    /// Opens worker `w`'s export through a cursor over `select` (CrateDB,
    /// over either protocol), `chunk_rows` a page; `option` names what the
    /// user gave the select with, for an error that is theirs to fix.
    pub async fn cursor_export(
        &self,
        w: u32,
        select: &str,
        file: ExportFile,
        (format, chunk_rows): (ExportFormat, usize),
        option: &str,
    ) -> Result<ExportWorker> {
        match self {
            Target::Crate(c) => ExportWorker::pages(c, w, select, chunk_rows, file, option).await,
            Target::Pg { pg, .. } => ExportWorker::cursor(pg, select, format, file, chunk_rows, option).await,
        }
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
    /// `run_id`: the run its connections name (see [`PgTarget::for_run`]).
    pub fn new(choice: &TargetChoice, run_id: Option<&str>, before_server: fn()) -> Result<Started> {
        let local = match choice {
            TargetChoice::Local(opts) => {
                before_server();
                Some(LocalPostgres::start(opts)?)
            }
            _ => None,
        };
        let target = match &local {
            Some(l) => Some(Target::Pg { pg: Box::new(l.target()), engine: Some(Engine::Postgres) }),
            None => Target::given(choice),
        };
        let target = match run_id {
            Some(run) => target.map(|t| t.for_run(run)),
            None => target,
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

    /// Whether the target is a throwaway server removed at exit (no
    /// `--keep`), and with it whatever the command left in it.
    pub fn removed_at_exit(&self) -> bool {
        self.local.is_some() && !self.keep
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        if let (Some(l), true) = (&self.local, self.keep) {
            crate::console::text(&l.keep_recipe());
        }
    }
}
