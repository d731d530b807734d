//! The client's own threads, second by second: how busy each was (its CPU
//! time over the second, from the kernel's accounting of the process's
//! threads, `/proc/self/task/*/stat`), so that a run whose client was the
//! bottleneck says so, with the seconds when, rather than passing the
//! client's limit off as the server's.

use std::collections::BTreeMap;
use std::time::Duration;

use super::cost::stat_cpu;

/// A thread busy more than this share of a second saturated it.
pub const SATURATED: f64 = 0.9;

/// The busiest thread of one second.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Busiest {
    /// Its name and id (`dbload-producer 4242`).
    pub thread: String,
    /// Its CPU time over the second's length (0 to 1, a little over when the clock ticked late).
    pub busy: f64,
}

/// The client's threads' CPU time so far, by thread id, with their names.
pub type Threads = BTreeMap<u32, (String, Duration)>;

/// Every thread of this process now: its name and CPU time so far.
pub fn read() -> Threads {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return Threads::new() };
    tasks
        .flatten()
        .filter_map(|task| {
            let tid: u32 = task.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
            Some((tid, (name(&stat)?, stat_cpu(&stat)?)))
        })
        .collect()
}

/// The thread's name: the `stat` line's field in parentheses.
fn name(stat: &str) -> Option<String> {
    Some(stat.get(stat.find('(')? + 1..stat.rfind(')')?)?.to_string())
}

/// The busiest thread between the readings `before` and `now`, `length` apart.
pub fn busiest(before: &Threads, now: &Threads, length: Duration) -> Busiest {
    let used = now.iter().map(|(tid, (name, cpu))| {
        let then = before.get(tid).map_or(Duration::ZERO, |(_, cpu)| *cpu);
        (cpu.saturating_sub(then), tid, name)
    });
    match used.max_by_key(|(cpu, _, _)| *cpu) {
        Some((cpu, tid, name)) if !length.is_zero() => {
            Busiest { thread: format!("{name} {tid}"), busy: cpu.as_secs_f64() / length.as_secs_f64() }
        }
        _ => Busiest::default(),
    }
}

/// The seconds (since the start) whose busiest thread was saturated.
pub fn saturated(seconds: &[Busiest]) -> Vec<u64> {
    (0u64..).zip(seconds).filter(|(_, b)| b.busy > SATURATED).map(|(s, _)| s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn threads(all: &[(u32, &str, u64)]) -> Threads {
        all.iter().map(|&(tid, name, ms)| (tid, (name.to_string(), Duration::from_millis(ms)))).collect()
    }

    #[test]
    fn the_busiest_thread_is_the_one_that_used_most_cpu_in_the_second() {
        let before = threads(&[(10, "dbload", 500), (11, "dbload-producer", 1000)]);
        // Thread 12 started in the second: all its time is the second's.
        let now = threads(&[(10, "dbload", 600), (11, "dbload-producer", 1950), (12, "tokio-runtime-w", 300)]);
        let b = busiest(&before, &now, Duration::from_secs(1));
        assert_eq!(b.thread, "dbload-producer 11");
        assert!((b.busy - 0.95).abs() < 1e-9, "{b:?}");
        let b = busiest(&before, &now, Duration::from_millis(500));
        assert!((b.busy - 1.9).abs() < 1e-9, "a half second: {b:?}");
    }

    #[test]
    fn a_second_with_a_thread_over_90_percent_is_saturated() {
        let second = |busy| Busiest { thread: "t 1".into(), busy };
        assert_eq!(saturated(&[second(0.5), second(0.95), second(0.91), second(0.9), second(1.02)]), [1, 2, 4]);
    }

    #[test]
    fn this_process_has_a_named_thread_with_cpu_time() {
        if cfg!(target_os = "linux") {
            let all = read();
            assert!(all.values().any(|(name, _)| !name.is_empty()), "{all:?}");
        }
    }
}
