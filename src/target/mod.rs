//! Where the load goes: a PostgreSQL-protocol target given by URL or `PG*`
//! variables, or a throwaway local PostgreSQL that dbload starts and removes.

pub mod admin;
mod conninfo;
pub mod cratedb_http;
pub mod cursor;
pub mod export;
pub mod from_sql;
pub mod http;
pub mod local;
mod pgpass;
pub mod postgres;
pub mod sink;
mod tls;

pub use admin::{Admin, EngineInfo, Target};
pub use local::{LocalOptions, LocalPostgres};
pub use postgres::{Canceller, PgTarget, SslMode};
