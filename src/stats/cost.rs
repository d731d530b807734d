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
                peak_rss_bytes: own_peak_rss().unwrap_or(u.max_rss() as u64 * 1024),
            }
        }
        Err(_) => ClientCost::default(),
    }
}

/// The peak resident memory of this process image: `VmHWM` from
/// /proc/self/status. `ru_maxrss` is not that on Linux: it survives fork
/// and exec, so a dbload started by a large process (a test harness, a
/// script runner) would report its parent's peak instead of its own.
fn own_peak_rss() -> Option<u64> {
    vm_hwm(&std::fs::read_to_string("/proc/self/status").ok()?)
}

fn vm_hwm(status: &str) -> Option<u64> {
    let kib = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().strip_suffix("kB")?;
    Some(kib.trim().parse::<u64>().ok()? * 1024)
}

/// Started when the measured work starts; `read` gives the cost since then.
pub struct CostMeter(ClientCost);

impl CostMeter {
    pub fn start() -> CostMeter {
        CostMeter(rusage())
    }

    pub fn read(&self) -> ClientCost {
        let now = rusage();
        ClientCost {
            user: now.user.saturating_sub(self.0.user),
            system: now.system.saturating_sub(self.0.system),
            peak_rss_bytes: now.peak_rss_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_rss_is_read_from_vm_hwm() {
        assert_eq!(vm_hwm("Name:\tdbload\nVmPeak:\t  99999 kB\nVmHWM:\t   12345 kB\n"), Some(12345 * 1024));
        assert_eq!(vm_hwm("Name:\tdbload\n"), None);
        if cfg!(target_os = "linux") {
            assert!(own_peak_rss().is_some_and(|b| b > 0));
        }
    }
}
