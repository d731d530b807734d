//! When, what and where a run was: the `run` object of every report. One
//! type for every command, taken when the command starts and finished when
//! its report is made, so that a report read months later (or from the
//! results store) still says which dbload, on which machine, with which
//! command line produced it. The server's side (its address, version and
//! settings) is in each report's setup, as the server itself gave it.

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

use crate::outcome::{rfc3339, InstanceMeta};

/// The commit dbload was built from (`build.rs`), or `unknown` (a build
/// from a source tarball).
pub const GIT_COMMIT: &str = env!("DBLOAD_GIT_COMMIT");

/// The `run` object of a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RunMeta {
    /// A UUID v7: unique, and ordered by the time the run started. Names
    /// the run in the results store.
    pub run_id: String,
    /// UTC, RFC 3339 (`2026-11-24T08:20:41.123Z`).
    pub started_at: String,
    pub ended_at: String,
    /// The command line as typed, with passwords and secret header values
    /// replaced by `***`.
    pub command_line: String,
    pub dbload_version: String,
    /// The git commit dbload was built from, or `unknown`.
    pub git_commit: String,
    pub client: ClientHost,
    /// `--tag KEY=VALUE`: what the user (or `dbload sweep`) names the run by.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// `--instance`: this run's part in a distributed run; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(with = "InstanceMeta"))] // absent or an object, never null
    pub instance: Option<InstanceMeta>,
}

/// The machine dbload ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ClientHost {
    pub host_name: String,
    /// The OS and its kernel release (`linux 6.1.0`).
    pub os: String,
    /// As `/proc/cpuinfo` names it, or `unknown`.
    pub cpu_model: String,
    /// The CPUs this process may run on.
    pub cpus: usize,
    /// Physical memory (`/proc/meminfo`'s `MemTotal`); null where unknown.
    pub memory_bytes: Option<u64>,
}

/// A run that has started: its id and start time, taken before anything
/// connects, and the command line it was given.
#[derive(Debug, Clone)]
pub struct RunStart {
    run_id: uuid::Uuid,
    at: SystemTime,
    /// `at` on the monotonic clock, for offsets within the run.
    clock: Instant,
    command_line: String,
    /// Set once a distributed run's instance has started.
    pub instance: Option<InstanceMeta>,
}

impl RunStart {
    /// `command_line`: already redacted (see `config::command_line`).
    pub fn now(command_line: String) -> RunStart {
        RunStart {
            run_id: uuid::Uuid::now_v7(),
            at: SystemTime::now(),
            clock: Instant::now(),
            command_line,
            instance: None,
        }
    }

    /// How long after the start `at` was (zero for a time before it).
    pub fn since(&self, at: Instant) -> Duration {
        at.saturating_duration_since(self.clock)
    }

    /// The run's id: known from the start, so that what the run starts
    /// (a sweep's points) can be tagged with it.
    pub fn run_id(&self) -> String {
        self.run_id.to_string()
    }

    /// The run's metadata, ended now (no tags: the command adds its own).
    pub fn end(&self) -> RunMeta {
        RunMeta {
            run_id: self.run_id.to_string(),
            started_at: rfc3339(self.at),
            ended_at: rfc3339(SystemTime::now()),
            command_line: self.command_line.clone(),
            dbload_version: env!("CARGO_PKG_VERSION").into(),
            git_commit: GIT_COMMIT.into(),
            client: ClientHost::this(),
            tags: BTreeMap::new(),
            instance: self.instance.clone(),
        }
    }
}

impl ClientHost {
    /// This machine. Linux details come from `/proc`; elsewhere, what std knows.
    pub fn this() -> ClientHost {
        let uname = nix::sys::utsname::uname().ok();
        let release = uname.as_ref().map(|u| u.release().to_string_lossy().into_owned());
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        ClientHost {
            host_name: nix::unistd::gethostname().map_or_else(|_| "unknown".into(), |h| h.to_string_lossy().into()),
            os: [Some(std::env::consts::OS.to_string()), release].into_iter().flatten().collect::<Vec<_>>().join(" "),
            cpu_model: cpu_model(&cpuinfo).unwrap_or("unknown").to_string(),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes: mem_total(&meminfo),
        }
    }
}

/// The first `model name` of `/proc/cpuinfo` (x86), or its `Model` (ARM
/// boards) or `cpu model` (MIPS) line.
fn cpu_model(cpuinfo: &str) -> Option<&str> {
    ["model name", "Model", "cpu model"].iter().find_map(|key| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim())
        })
    })
}

/// `MemTotal: 16318412 kB` of `/proc/meminfo`, in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find_map(|l| l.strip_prefix("MemTotal:"))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kib * 1024)
}

/// The lines the text report ends with (before where the run was kept).
pub fn render(m: &RunMeta) -> String {
    let c = &m.client;
    let memory = c.memory_bytes.map(|b| format!(", {:.1} GiB", b as f64 / (1u64 << 30) as f64)).unwrap_or_default();
    let tags = if m.tags.is_empty() { String::new() } else { format!("Tags:     {}\n", tags_text(&m.tags)) };
    format!(
        "Run:      {} from {} to {}\n\
         Command:  {}\n\
         dbload:   {} (commit {})\n\
         Host:     {}, {}, {} × {} CPUs{memory}\n\
         {tags}",
        m.run_id,
        m.started_at,
        m.ended_at,
        m.command_line,
        m.dbload_version,
        m.git_commit,
        c.host_name,
        c.os,
        c.cpu_model,
        c.cpus,
    ) + &m.instance.as_ref().map_or_else(String::new, |i| {
        format!("Instance: {} of {} of run {}, started {}\n", i.index, i.count, i.run_id, i.started_at)
    })
}

/// Tags as one line: `key=value key=value`, in key order.
pub fn tags_text(tags: &BTreeMap<String, String>) -> String {
    tags.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

/// A report with its `run` object: what every report form (JSON, HTML, the
/// results store) is written from, so that no report type needs a field
/// the run fills in only at the end.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Stamped<'a, R> {
    #[serde(flatten)]
    pub report: &'a R,
    pub run: &'a RunMeta,
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;

    use super::*;

    #[test]
    fn cpu_model_and_memory_are_read_from_proc() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(cpu_model(cpuinfo), Some("Intel(R) Xeon(R) CPU @ 2.20GHz"));
        assert_eq!(
            cpu_model("processor : 0\nModel : Raspberry Pi 4 Model B Rev 1.4\n"),
            Some("Raspberry Pi 4 Model B Rev 1.4")
        );
        assert_eq!(cpu_model(""), None);
        assert_eq!(mem_total("MemTotal:       16318412 kB\nMemFree: 1 kB\n"), Some(16318412 * 1024));
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn run_ids_are_time_ordered_and_times_are_utc() {
        let (a, b) = (RunStart::now("dbload".into()).end(), RunStart::now("dbload".into()).end());
        assert!(a.run_id < b.run_id, "{} then {}", a.run_id, b.run_id);
        assert_eq!(uuid::Uuid::parse_str(&a.run_id).unwrap().get_version_num(), 7);
        assert!(a.started_at.ends_with('Z') && DateTime::parse_from_rfc3339(&a.ended_at).is_ok(), "{a:?}");
        assert!(a.client.cpus >= 1 && !a.client.host_name.is_empty());
    }

    #[test]
    fn text_lines() {
        let meta = RunMeta {
            run_id: "0193a1b2-0000-7000-8000-000000000000".into(),
            started_at: "2026-11-24T08:20:41.123Z".into(),
            ended_at: "2026-11-24T08:20:51.456Z".into(),
            command_line: "dbload ingest --url postgres://app:***@db:5432/bench --rows 1000".into(),
            dbload_version: "0.1.0".into(),
            git_commit: "0b932b7".into(),
            client: ClientHost {
                host_name: "loadgen".into(),
                os: "linux 6.1.0".into(),
                cpu_model: "Intel(R) Xeon(R) CPU @ 2.20GHz".into(),
                cpus: 2,
                memory_bytes: Some(8 << 30),
            },
            tags: BTreeMap::new(),
            instance: None,
        };
        insta::assert_snapshot!(render(&meta));
    }
}
