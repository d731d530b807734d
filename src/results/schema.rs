//! The results database's tables (`--results-url`): made when missing,
//! upgraded from version 1, given the tables (`dbload_server_timeline`) and
//! the columns added since they were made (the timeline's p50 and p99, the
//! server timeline's engine figures), refused when another version of
//! dbload made them, and the row of `dbload_instances` as dbload reads it. The kept
//! runs (`db.rs`) and a distributed run's start barrier (`src/barrier.rs`)
//! both stand on them, so they live in neither.

use anyhow::{bail, Context, Result};
use tokio_postgres::Row;

use crate::dialect::results as sql;

/// Creates the tables if they are missing, or upgrades those of version 1,
/// and adds the columns an older store lacks; refuses those of another
/// version. Within `tx`, one instance at a time.
pub async fn ensure_tables(tx: &tokio_postgres::Transaction<'_>) -> Result<()> {
    tx.execute(&sql::lock_tables(), &[]).await.context("locking the results tables")?;
    let comment: Option<String> = tx.query_one(&sql::version_check(), &[]).await?.get(0);
    match comment {
        None => tx.batch_execute(&sql::create_tables()).await.context("creating the results tables")?,
        Some(c) if c == sql::comment() => {}
        Some(c) if c == sql::comment_v1() => {
            tx.batch_execute(&sql::upgrade_from_1()).await.context("upgrading the results tables to version 2")?
        }
        Some(c) => bail!(
            "{} says \"{c}\", not \"{}\": it was made by another version of dbload; \
             use another database (or schema) for this one",
            sql::RUNS,
            sql::comment()
        ),
    }
    // The table first: the columns added since may be in it.
    let missing: bool = tx.query_one(&sql::server_timeline_missing(), &[]).await?.get(0);
    if missing {
        tx.batch_execute(&sql::create_server_timeline()).await.context("creating dbload_server_timeline")?;
    }
    let missing: bool = tx.query_one(&sql::columns_missing(), &[]).await?.get(0);
    if missing {
        tx.batch_execute(&sql::add_columns()).await.context("adding the columns made since the store was")?;
    }
    Ok(())
}

/// One row of `dbload_instances`.
#[derive(Debug, Clone)]
pub struct Registered {
    pub instance: u32,
    pub count: u32,
    pub host: String,
    pub pid: i32,
    pub status: String,
    pub note: Option<String>,
    pub table_ready: bool,
    pub ready: bool,
}

impl Registered {
    pub fn of(r: &Row) -> Registered {
        Registered {
            instance: r.get::<_, i32>(0) as u32,
            count: r.get::<_, i32>(1) as u32,
            host: r.get(2),
            pid: r.get(3),
            status: r.get(4),
            note: r.get(5),
            table_ready: r.get(6),
            ready: r.get(7),
        }
    }
}
