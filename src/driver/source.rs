//! insert-from-sql's source: a query's rows, read where its types come
//! with them, over the PostgreSQL protocol: by `COPY ... TO STDOUT`, or
//! through a cursor on CrateDB, which has no COPY out. CrateDB's HTTP
//! endpoint gives JSON values without their types and is not a source.
//! This is the one door `run/` uses; what reads the rows is in
//! [`pg::from_sql`](super::pg::from_sql).

use anyhow::Result;
use postgres_types::Type;
use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

use super::admin::Admin;
use super::pg::error::query_refused;
use super::pg::from_sql::Convert;
pub use super::pg::from_sql::{conversions, match_columns, CopyBatch, SourceJson, SourceRows};
use crate::dialect::Engine;

/// The source's connection, and how its rows are read.
pub struct Source {
    client: Client,
    cursor: bool,
}

impl Source {
    /// The source on `admin`'s connection to a server running `engine`;
    /// `refused` says why when that connection is CrateDB's HTTP one.
    pub fn new(admin: Admin, engine: Engine, refused: &str) -> Result<Source> {
        Ok(Source { client: admin.into_client(refused)?, cursor: engine == Engine::Cratedb })
    }

    /// Whether the rows are read through a cursor (CrateDB), whose values
    /// may need converting ([`conversions`]), rather than by COPY.
    pub fn cursor(&self) -> bool {
        self.cursor
    }

    /// The names and types of `query`'s columns, as the server prepares
    /// it; a query it refuses is the user's `--query` to fix.
    pub async fn columns(&self, query: &str) -> Result<Vec<(String, Type)>> {
        match self.client.prepare(query).await {
            Ok(stmt) => Ok(stmt.columns().iter().map(|c| (c.name().to_string(), c.type_().clone())).collect()),
            Err(e) => Err(query_refused(e, "--query")),
        }
    }

    /// Starts reading `query`'s rows as COPY tuples, `batch_size` a batch.
    pub async fn rows(
        self,
        query: &str,
        batch_size: usize,
        stop: CancellationToken,
        convert: Vec<Convert>,
    ) -> Result<SourceRows> {
        match self.cursor {
            true => SourceRows::cursor(self.client, query, batch_size, stop, convert).await,
            false => SourceRows::copy(self.client, query, batch_size, stop).await,
        }
    }

    /// Starts reading `query`'s rows as JSON lines.
    pub async fn json(self, query: &str, batch_size: usize, stop: CancellationToken) -> Result<SourceJson> {
        match self.cursor {
            true => SourceJson::cursor(self.client, query, batch_size, stop).await,
            false => SourceJson::copy(self.client, query, stop).await,
        }
    }
}
