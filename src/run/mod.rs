//! The runs of the commands that measure, one module each (`ingest`,
//! `queries`, `http`, `export`, `from_sql`, `init`, `mixed`), and the parts
//! they share: the worker loop and its pacing (`worker`, `pacer`, `stop`),
//! the one measuring scaffold (`measure`), connecting to a target
//! (`setup`), the producers, the progress bar, the live metrics endpoint
//! (`metrics`), signals and server cost.
//! This file holds only what the runs share that has no module of its own.

pub mod client_load;
pub mod cores;
pub mod export;
pub mod from_sql;
pub mod http;
pub mod ingest;
pub mod init;
pub mod interrupt;
pub mod k6;
pub mod measure;
pub mod metrics;
pub mod mixed;
pub mod pacer;
pub mod producer;
pub mod progress;
pub mod queries;
pub mod repeat;
pub mod sampler;
pub mod scale;
pub mod server_cost;
pub mod setup;
pub mod signals;
pub mod stop;
pub mod txlog;
pub mod worker;

use hdrhistogram::Histogram;

/// A mixed run's hold on its ingest: `ready` is told when the table is
/// ready, and the workers start only once `go` is told (or dropped), so the
/// workloads can first be measured alone on the table as it is then.
/// A distributed run (`--instance`) holds every command's workers the same
/// way, until all its instances start together.
pub struct Gate {
    pub ready: tokio::sync::oneshot::Sender<()>,
    pub go: tokio::sync::oneshot::Receiver<()>,
}

impl Gate {
    /// Says the setup is done, then waits for the word to start.
    pub async fn pass(self) {
        let _ = self.ready.send(());
        let _ = self.go.await;
    }
}

/// Merges per-worker histograms; none if there are none (not CrateDB over HTTP).
pub(crate) fn merge_histograms<'a>(all: impl Iterator<Item = &'a Histogram<u64>>) -> Option<Histogram<u64>> {
    all.fold(None, |merged, h| {
        let mut m = merged.unwrap_or_else(crate::stats::hist::new_histogram);
        m.add(h).expect("auto-resizing histograms");
        Some(m)
    })
}
