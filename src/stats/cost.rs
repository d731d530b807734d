//! What the client itself cost: CPU time (user + system) over a run and the
//! process's peak resident memory, so users see that dbload was not the
//! bottleneck.

use std::time::Duration;

#[derive(Debug, Clone, Copy, Default)]
pub struct ClientCost {
    pub user: Duration,
    pub system: Duration,
    pub peak_rss_bytes: u64,
}

impl ClientCost {
    pub fn cpu(&self) -> Duration {
        self.user + self.system
    }
}

fn rusage() -> ClientCost {
    use nix::sys::resource::{getrusage, UsageWho};
    match getrusage(UsageWho::RUSAGE_SELF) {
        Ok(u) => {
            let tv = |t: nix::sys::time::TimeVal| Duration::new(t.tv_sec() as u64, t.tv_usec() as u32 * 1000);
            // ru_maxrss is in KiB on Linux.
            ClientCost {
                user: tv(u.user_time()),
                system: tv(u.system_time()),
                peak_rss_bytes: u.max_rss() as u64 * 1024,
            }
        }
        Err(_) => ClientCost::default(),
    }
}

/// Started when the measured work starts; `stop` gives the cost since then.
pub struct CostMeter(ClientCost);

impl CostMeter {
    pub fn start() -> CostMeter {
        CostMeter(rusage())
    }

    pub fn stop(self) -> ClientCost {
        let now = rusage();
        ClientCost {
            user: now.user.saturating_sub(self.0.user),
            system: now.system.saturating_sub(self.0.system),
            peak_rss_bytes: now.peak_rss_bytes,
        }
    }
}
