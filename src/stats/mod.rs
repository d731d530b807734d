//! Statistics that can be trusted: HDR histograms per worker, merged once
//! at the end; percentiles always come from the merged histogram.

pub mod bound;
pub mod buffered;
pub mod coarse;
pub mod cost;
pub mod dips;
pub mod hist;
pub mod http;
pub mod interval;
pub mod k6;
pub mod query;
pub mod recorder;
pub mod repeat;
pub mod server;
pub mod summary;
pub mod tally;
pub mod threads;
pub mod txlog;

pub use query::{PhaseSummary, QuerySummary};
pub use recorder::{Live, Recorder};
pub use summary::LatencySummary;
