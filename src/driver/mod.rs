//! Drivers: the code that speaks each protocol a target is reached by,
//! PostgreSQL's wire protocol (PostgreSQL, TimescaleDB, Citus, CrateDB's
//! port 5432), CrateDB's HTTP `_sql` endpoint, and plain HTTP, plus the
//! TLS they share. What a run points at is a [`crate::target::Target`].

pub mod admin;
pub mod cratedb_http;
pub mod export;
pub mod http;
pub mod pg;
pub mod query;
pub mod sink;
mod tls;

pub use admin::{Admin, EngineInfo};
pub use pg::{Canceller, PgTarget, SslMode};
