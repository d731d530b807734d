//! Connecting to a run's target: dbload's own connection (the admin one,
//! outside the measured path), the engine detected and checked against
//! `--engine`, and what the report states about the server. Every command
//! that measures a database starts with these three together; one call
//! here keeps them together, and keeps what the report says of the server
//! the same for every command.

use anyhow::{Context, Result};

use crate::dialect::{self, postgres as sql, Engine};
use crate::driver::{Admin, EngineInfo};
use crate::outcome::Setup;
use crate::target::Target;

/// Connects to `target` and describes its server: the connection, the
/// engine it runs, and the report's setup with the server filled in.
pub async fn connect(target: &Target) -> Result<(Admin, EngineInfo, Setup)> {
    let mut admin = target.admin().await?;
    let (info, setup) = describe_server(&mut admin, target).await?;
    Ok((admin, info, setup))
}

/// [`connect`], the connection held in `held` as soon as it is open: a
/// caller that cancels what the server is running when a signal ends its
/// setup (`interrupt::cancel_on_server`) has it even when the signal comes
/// while the server is being described.
pub async fn connect_into<'a>(
    target: &Target,
    held: &'a mut Option<Admin>,
) -> Result<(&'a mut Admin, EngineInfo, Setup)> {
    let admin = held.insert(target.admin().await?);
    let (info, setup) = describe_server(admin, target).await?;
    Ok((admin, info, setup))
}

/// Detects the engine (checked against `--engine`) and reads what the
/// report states about the server.
async fn describe_server(admin: &mut Admin, target: &Target) -> Result<(EngineInfo, Setup)> {
    let mut setup = Setup::default();
    let info = admin.detect(target.named_engine()).await?;
    setup.engine = Some(info.engine);
    setup.engine_version = info.version.clone();
    setup.server_version = Some(info.server_version.clone());
    if info.engine != Engine::Cratedb {
        let rows = admin.rows(&sql::reported_settings()).await.context("reading server settings")?;
        setup.server_settings = rows.into_iter().map(|r| (text(&r[0]), text(&r[1]))).collect();
        let rows = admin.rows(sql::server_address()).await.context("reading the server's address")?;
        setup.server_address = rows.into_iter().next().and_then(|r| r.into_iter().next().flatten());
    } else {
        let postgres = !target.over_http();
        let rows =
            admin.rows(dialect::cratedb::node_addresses(postgres)).await.context("reading the nodes' addresses")?;
        let nodes: Vec<String> = rows.into_iter().filter_map(|r| r.into_iter().next().flatten()).collect();
        setup.server_address = Some(nodes.join(", ")).filter(|a| !a.is_empty());
    }
    if info.engine == Engine::Citus {
        // The report says when the workers could not be asked, rather than failing the run.
        setup.worker_settings = match admin.rows(&dialect::citus::worker_settings()).await {
            Ok(rows) => dialect::citus::parse_worker_settings(&rows),
            Err(e) => vec![("workers".into(), Err(format!("{e:#}")))],
        };
    }
    Ok((info, setup))
}

/// A text column's value; NULL reads as empty.
pub(super) fn text(v: &Option<String>) -> String {
    v.clone().unwrap_or_default()
}
