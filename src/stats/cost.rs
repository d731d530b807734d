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

/// The CPU time (user + system) a process or thread has used, from the
/// kernel's accounting of it: `stat` is the text of a `/proc/PID/stat` or
/// `/proc/PID/task/TID/stat` file. Two fields of one line: no crate for it.
pub fn stat_cpu(stat: &str) -> Option<Duration> {
    // The command name, in parentheses, may hold spaces: the fields follow its last `)`.
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
    // utime and stime are the 14th and 15th fields, the 12th and 13th after the name.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).ok().flatten().filter(|&t| t > 0)?;
    Some(Duration::from_secs_f64((utime + stime) as f64 / ticks as f64))
}

/// The CPU time (user + system) this process has used since it started.
pub fn process_cpu() -> Duration {
    rusage().cpu()
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
    }

    #[test]
    fn cpu_time_is_read_past_a_name_with_spaces() {
        let ticks = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).unwrap().unwrap() as f64;
        let stat = "4242 (postgres: a) b) S 1 4242 4242 0 -1 4194560 210 0 0 0 150 50 0 0 20 0 1 0 99 0 0";
        assert_eq!(stat_cpu(stat), Some(Duration::from_secs_f64(200.0 / ticks)));
        assert_eq!(stat_cpu("4242 (x) S 1"), None);
        if cfg!(target_os = "linux") {
            assert!(stat_cpu(&std::fs::read_to_string("/proc/self/stat").unwrap()).is_some());
        }
        if cfg!(target_os = "linux") {
            assert!(own_peak_rss().is_some_and(|b| b > 0));
        }
    }
}
