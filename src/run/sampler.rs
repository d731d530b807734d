//! The server's timeline of a run: a task on the run's runtime that asks
//! the server, once a second on a connection of its own, what it is doing
//! (`dialect::activity`), while the workers run. Its own connection, so
//! that sampling neither shares nor slows a worker's; stopped when the
//! workers end, or by Ctrl-C. A sample that fails leaves its second
//! unknown and the reason in the report: never a failed run. What the
//! sampler itself cost the server is measured too, from the server's own
//! accounting of its backend process when that process is on this machine.
//! CrateDB is asked what it counts itself instead (its jobs, operations and
//! thread pools: `dialect::cratedb_activity`), over the run's protocol.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::dialect::Engine;
use crate::driver::{ActivityConn, CrateActivity, Totals};
use crate::ident::TableName;
use crate::stats::cost::stat_cpu;
use crate::stats::server::{Latest, SamplerCost, ServerSecond, ServerTimeline};
use crate::target::Target;

/// How often the server is sampled by default (`--sample-interval`), and
/// how often the client's threads are read.
pub const EVERY: Duration = Duration::from_secs(1);

/// A connection ready to sample, before the run starts.
pub struct Sampler {
    conn: Conn,
    /// The sampler's backend process, when it runs on this machine; else
    /// why its CPU cannot be read.
    backend: Result<i32, String>,
    unseen: Vec<String>,
    /// `--sample-interval`.
    every: Duration,
}

/// What a sampler samples: a PostgreSQL-family server's activity, or
/// CrateDB's own counts.
enum Conn {
    Postgres(ActivityConn),
    Cratedb(CrateActivity),
}

impl Conn {
    async fn sample(&mut self) -> Result<(Totals, ServerSecond), String> {
        match self {
            Conn::Postgres(c) => c.sample().await,
            Conn::Cratedb(c) => c.sample().await,
        }
    }

    /// The statements one sample sends.
    fn statements(&self) -> u64 {
        match self {
            Conn::Postgres(c) => c.statements(),
            Conn::Cratedb(_) => 1,
        }
    }
}

/// A sampler at work: [`Watching::end`] stops it and takes its timeline.
pub enum Watching {
    Sampling {
        task: JoinHandle<ServerTimeline>,
        stop: CancellationToken,
    },
    /// No sampler: why.
    Unavailable(String),
}

impl Watching {
    /// Stops the sampler and returns what it saw.
    pub async fn end(self) -> ServerTimeline {
        match self {
            Watching::Sampling { task, stop } => {
                stop.cancel();
                task.await.unwrap_or_else(|e| ServerTimeline::none(format!("the server's sampler failed: {e}")))
            }
            Watching::Unavailable(why) => ServerTimeline::none(why),
        }
    }
}

impl Sampler {
    /// Opens the sampler's connection to `target`, a server of `engine`,
    /// and prepares its statement; `table`: the run's table, if it has
    /// one; sampled `every` so long (`--sample-interval`). Why not, when the
    /// server cannot be sampled.
    pub async fn open(
        target: &Target,
        engine: Engine,
        table: Option<&TableName>,
        every: Duration,
    ) -> Result<Sampler, String> {
        if engine == Engine::Cratedb {
            return Self::cratedb(target, table, every).await;
        }
        let (conn, who) = target.activity(engine, table).await?;
        let mut unseen = Vec::new();
        if !who.sees_all {
            let role = who.role;
            unseen.push(format!(
                "the other sessions' wait events and the server's background processes are hidden from role \
                 {role}: GRANT pg_read_all_stats TO {role} (or pg_monitor) to see them"
            ));
        }
        unseen.extend(who.engine_unseen);
        let backend = if on_this_machine(who.pid) {
            Ok(who.pid)
        } else {
            Err("the server is not on this machine: its processes' CPU cannot be read".into())
        };
        Ok(Sampler { conn: Conn::Postgres(conn), backend, unseen, every })
    }

    /// [`Sampler::open`] on CrateDB: what it could not see is said, each
    /// with what to do about it.
    async fn cratedb(target: &Target, table: Option<&TableName>, every: Duration) -> Result<Sampler, String> {
        let (conn, who) = target.cratedb_activity(table).await?;
        let mut unseen = Vec::new();
        if !who.stats_enabled {
            unseen.push(
                "CrateDB keeps no jobs or operations with stats.enabled false: SET GLOBAL TRANSIENT \
                 stats.enabled = true to see them"
                    .into(),
            );
        }
        if who.superuser != Some(true) {
            let user = who.user;
            unseen.push(format!(
                "CrateDB shows user {user} its own jobs only: GRANT AL TO {user} (or sample as a superuser) to see \
                 the others'"
            ));
        }
        if let Err(why) = who.told_apart {
            unseen.push(why.into());
        }
        let backend = Err("CrateDB runs every session in one JVM: the sampler's own CPU is not told apart".into());
        Ok(Sampler { conn: Conn::Cratedb(conn), backend, unseen, every })
    }

    /// Samples from `t0` once every `--sample-interval` until `stop`, on the
    /// current runtime; each sample is also handed to `latest`, when given
    /// (the metrics endpoint's).
    pub fn spawn(self, t0: Instant, stop: CancellationToken, latest: Option<Arc<Latest>>) -> Watching {
        let task = tokio::spawn(self.run(t0, stop.clone(), latest));
        Watching::Sampling { task, stop }
    }

    async fn run(mut self, t0: Instant, stop: CancellationToken, latest: Option<Arc<Latest>>) -> ServerTimeline {
        let cpu_before = self.backend_cpu();
        let every = self.every;
        let mut timeline = ServerTimeline { unseen: self.unseen.clone(), every, ..ServerTimeline::default() };
        let mut queries = 0;
        let mut last = None;
        for k in 0u32.. {
            let at = t0 + every * k;
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep_until(at.into()) => {}
            }
            queries += self.conn.statements();
            let sampled = self.conn.sample().await;
            let second = match (sampled, last.take()) {
                (Ok((now, second)), before) => {
                    let counted = before.map(|before| counted(second, &before, &now));
                    last = Some(now);
                    counted
                }
                (Err(e), _) => {
                    timeline.failed += 1;
                    timeline.first_failure.get_or_insert(e);
                    None
                }
            };
            if k > 0 {
                if let Some(latest) = &latest {
                    latest.set(second.as_ref(), every);
                }
                into_second(&mut timeline.seconds, every * k, second);
            }
        }
        let wall = t0.elapsed();
        let backend_cpu = match (cpu_before, self.backend_cpu()) {
            (Ok(before), Ok(after)) => Ok(after.saturating_sub(before)),
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        timeline.cost = Some(SamplerCost { queries, wall, backend_cpu, cores });
        timeline
    }

    /// The CPU time of the sampler's backend so far, by the server
    /// machine's accounting of its process.
    fn backend_cpu(&self) -> Result<Duration, String> {
        let pid = *self.backend.as_ref()?;
        let stat =
            std::fs::read_to_string(format!("/proc/{pid}/stat")).map_err(|e| format!("/proc/{pid}/stat: {e}"))?;
        stat_cpu(&stat).ok_or_else(|| format!("/proc/{pid}/stat: no CPU times in it"))
    }
}

/// Sample `sample`, taken `at` since the start, into the second it ends:
/// sample k of an interval of 1 s is the end of second k - 1; faster
/// samples of one second add up in it (wait events as samples, counters
/// as their sum); with a slower interval, the seconds between two samples
/// are unknown and the interval's counters are in the second it ended. A
/// sample that failed (`None`) leaves its second as it was.
fn into_second(seconds: &mut Vec<Option<ServerSecond>>, at: Duration, sample: Option<ServerSecond>) {
    let s = (at.as_nanos().saturating_sub(1) / 1_000_000_000) as usize;
    if seconds.len() <= s {
        seconds.resize(s + 1, None);
    }
    match (&mut seconds[s], sample) {
        (Some(second), Some(sample)) => second.add(&sample),
        (slot @ None, sample) => *slot = sample,
        (Some(_), None) => {}
    }
}

/// The second that ends with the sample `now`: its own figures, and the
/// counters' differences from the sample `before`.
fn counted(mut second: ServerSecond, before: &Totals, now: &Totals) -> ServerSecond {
    second.checkpoints_timed = now.checkpoints_timed.saturating_sub(before.checkpoints_timed);
    second.checkpoints_requested = now.checkpoints_requested.saturating_sub(before.checkpoints_requested);
    second.wal_bytes = now.wal.zip(before.wal).map(|(n, b)| n.saturating_sub(b));
    second.temp_files = now.temp_files.saturating_sub(before.temp_files);
    second.temp_bytes = now.temp_bytes.saturating_sub(before.temp_bytes);
    // A counter first seen now counted from 0: a job's first run.
    for (name, n) in &now.engine {
        let grown = n - before.engine.get(name).copied().unwrap_or(0.0);
        if grown > 0.0 {
            second.engine.insert(name.clone(), grown);
        }
    }
    second
}

/// Whether backend `pid` is a PostgreSQL process on this machine: the
/// process of that number here is a `postgres` one.
fn on_this_machine(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|name| name.trim() == "postgres")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waited(n: u32, wal: u64) -> Option<ServerSecond> {
        let own_waits = [("IO:WALWrite".to_string(), n)].into();
        Some(ServerSecond { own_waits, wal_bytes: Some(wal), checkpoints_timed: 1, ..ServerSecond::default() })
    }

    /// Issue 34, CrateDB: a pool's rejected work is the difference of its
    /// totals, one that rejected nothing is left out, and the levels of the
    /// sample are kept as they are.
    #[test]
    fn an_engine_s_counters_are_differences() {
        let totals = |pairs: &[(&str, f64)]| Totals {
            engine: pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..Totals::default()
        };
        let before = totals(&[("thread pool write rejected", 10.0), ("thread pool search rejected", 4.0)]);
        let now = totals(&[("thread pool write rejected", 13.0), ("thread pool search rejected", 4.0)]);
        let levels = [("jobs running (max)".to_string(), 2.0)];
        let second = counted(ServerSecond { engine: levels.into(), ..ServerSecond::default() }, &before, &now);
        let engine: Vec<(&str, f64)> = second.engine.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(engine, [("jobs running (max)", 2.0), ("thread pool write rejected", 3.0)]);
    }

    /// Issue 34, item 3: at 1 s each sample is its own second, as before;
    /// at 250 ms four samples add up into each second; at 2 s every other
    /// second is unknown; a failed sample leaves its second alone.
    #[test]
    fn samples_go_into_the_second_they_end() {
        let ms = Duration::from_millis;
        let mut seconds = Vec::new();
        for k in 1..=2 {
            into_second(&mut seconds, ms(1000) * k, waited(1, 10));
        }
        assert_eq!(seconds, [waited(1, 10), waited(1, 10)]);
        let mut seconds = Vec::new();
        for k in 1..=8 {
            into_second(&mut seconds, ms(250) * k, if k == 3 { None } else { waited(2, 10) });
        }
        let mut three = waited(6, 30).unwrap();
        three.checkpoints_timed = 3;
        let mut four = waited(8, 40).unwrap();
        four.checkpoints_timed = 4;
        assert_eq!(seconds, [Some(three), Some(four)]);
        let mut seconds = Vec::new();
        for k in 1..=2 {
            into_second(&mut seconds, ms(2000) * k, waited(1, 10));
        }
        assert_eq!(seconds, [None, waited(1, 10), None, waited(1, 10)]);
    }

    /// Issue 34: the engine's counters become what they grew by in the
    /// second (a counter first seen counts from 0, one that did not grow is
    /// no figure), beside the figures the sample gave for itself.
    #[test]
    fn the_engine_s_counters_are_counted_by_their_growth() {
        let totals = |figures: &[(&str, f64)]| Totals {
            engine: figures.iter().map(|(name, n)| (name.to_string(), *n)).collect(),
            ..Totals::default()
        };
        let before = totals(&[("chunks created", 10.0), ("telemetry jobs started", 4.0)]);
        let now =
            totals(&[("chunks created", 13.0), ("telemetry jobs started", 4.0), ("compression jobs started", 1.0)]);
        let sampled =
            ServerSecond { engine: [("node a:1 active sessions".to_string(), 2.0)].into(), ..ServerSecond::default() };
        let second = counted(sampled, &before, &now);
        let want = [("chunks created", 3.0), ("compression jobs started", 1.0), ("node a:1 active sessions", 2.0)];
        let want: std::collections::BTreeMap<String, f64> =
            want.iter().map(|(name, n)| (name.to_string(), *n)).collect();
        assert_eq!(second.engine, want);
    }
}
