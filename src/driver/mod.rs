//! Drivers: the code that speaks each protocol a target is reached by,
//! one folder each: PostgreSQL's wire protocol (`pg/`: PostgreSQL,
//! TimescaleDB, Citus, CrateDB's port 5432), CrateDB's HTTP `_sql` endpoint
//! (`cratedb_http/`), and plain HTTP (`http/`), plus the TLS they share.
//! The files beside the folders dispatch over either SQL protocol, so a
//! command is written once for every engine: `admin` (detection, DDL),
//! `sink` (ingest), `query` (query mixes), `export`. The statements they
//! send are built in [`crate::dialect`]. What a run points at is a
//! `Target` (in the `target` module, which names the drivers, not the other
//! way round).

pub mod admin;
pub mod cratedb_http;
pub mod export;
pub mod http;
pub mod pg;
pub mod query;
pub mod sink;
mod tls;

pub use admin::{Admin, EngineInfo};
pub use pg::{PgTarget, SslMode};
