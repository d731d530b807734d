//! What the sinks of one run write, and how: the one description of an
//! ingest's statements that the dispatch (`sink.rs`) and each protocol's
//! sink read. A leaf of `driver/`, so that the dispatch and the sinks it
//! dispatches to do not name each other.

use crate::dialect::{Engine, Method};
use crate::ident::TableName;
use crate::model::Schema;

/// What the sinks of one run write, and how.
#[derive(Debug, Clone)]
pub struct SinkSpec {
    pub table: TableName,
    pub schema: Schema,
    pub method: Method,
    pub upsert: bool,
    /// Rows per INSERT ... VALUES statement.
    pub insert_rows: usize,
    pub batch_size: usize,
    /// Whose SQL the statements are written in.
    pub engine: Engine,
}
