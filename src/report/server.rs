//! The "Server" section of a report: what the server was doing while the
//! run ran (its sampler's timeline, `stats::server`), the wait events of
//! the run's sessions and of the others over the run, the events worth a
//! marker on the charts (checkpoints, vacuums, lock waits, temp files;
//! TimescaleDB's chunks created and background jobs), each Citus node's
//! share of the run's work, and for each dip in throughput (`stats::dips`) one sentence saying
//! what coincided with it, or that nothing observed did. Built once from
//! the run's figures, like the rest of a report; text, JSON and HTML read it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::format::{binary_size, human, Unit};
use crate::outcome::Figures;
use crate::stats::dips::{dips, Dip};
use crate::stats::server::{
    add_engine, rejected_by, ServerSecond, ServerTimeline, CHUNKS_CREATED, JOBS_RUNNING, JOBS_STARTED, LEVEL, NODE,
    NODE_SESSIONS, NO_WAIT,
};
use crate::stats::threads::{Busiest, SATURATED};

/// A wait event's part of the samples of a stretch of the run.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct WaitShare {
    /// `type:event` as the server names it, or "no wait event (on CPU or not instrumented)".
    pub wait: String,
    /// Sessions seen in it, summed over the samples.
    pub samples: u64,
    /// Its part of every session seen (0 to 1).
    pub share: f64,
}

/// Something the server did that a chart marks: a checkpoint, a vacuum of
/// the table, lock waits on it, temp files, work a CrateDB thread pool
/// rejected.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ServerEvent {
    /// The second it was seen in, since the run's start.
    pub second: u64,
    /// `checkpoint_timed`, `checkpoint_requested`, `vacuum`, `lock_waits`,
    /// `temp_files`, `chunks_created`, `jobs_started`, `jobs_running` or
    /// `rejected`.
    pub kind: super::Name,
    /// What was seen, in words.
    pub what: String,
}

/// A Citus node's share of the run's work: the run's sessions active on
/// it, summed over the samples, and their wait events there.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct NodeShare {
    /// `host:port`, as `pg_dist_node` names it.
    pub node: String,
    pub samples: u64,
    /// Its part of every node's samples (0 to 1).
    pub share: f64,
    pub waits: Vec<WaitShare>,
}

/// A dip in throughput and what coincided with it.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct DipReport {
    /// Its first and last second, since the run's start.
    pub start_s: u64,
    pub end_s: u64,
    /// How much throughput fell, in percent of the median before it.
    pub fell_pct: f64,
    /// The median per second of the 10 s before it, and its mean.
    pub before_per_sec: f64,
    pub during_per_sec: f64,
    /// The run's sessions' wait events in its seconds.
    pub waits: Vec<WaitShare>,
    /// What the server did in its seconds and the one before.
    pub events: Vec<String>,
    /// What was observed, in one sentence.
    pub sentence: String,
}

/// One second of the server, as sampled at its end.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ServerSecondReport {
    pub second: u64,
    #[serde(flatten)]
    pub sample: ServerSecond,
}

/// What sampling cost the server.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SamplerCostReport {
    /// Statements the sampler sent per second of the run.
    pub queries_per_sec: f64,
    /// The sampler's backend's CPU time, by the server machine's accounting.
    pub backend_cpu_s: Option<f64>,
    /// That over (wall time × the server machine's cores), 0 to 1.
    pub backend_cpu_share: Option<f64>,
    pub cores: usize,
    /// Why the backend's CPU is not known.
    pub backend_cpu_unknown: Option<String>,
}

/// The "Server" section.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ServerReport {
    pub sampled_every_s: f64,
    /// What the sampler could not see, each with what to do about it.
    pub unseen: Vec<String>,
    pub failed_samples: u64,
    pub first_failure: Option<String>,
    /// The run's sessions' wait events over the measured seconds, most seen first.
    pub waits: Vec<WaitShare>,
    /// The other sessions' and the background processes'.
    pub other_waits: Vec<WaitShare>,
    pub events: Vec<ServerEvent>,
    /// Citus: each node's share of the run's work over the measured seconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeShare>,
    pub dips: Vec<DipReport>,
    /// Each sampled second (not `timeline`: that name is the run's own
    /// per-second series, which the results store keeps as a part).
    pub seconds: Vec<ServerSecondReport>,
    pub sampler_cost: Option<SamplerCostReport>,
}

/// Waits named in a dip's sentence: at most this many, each of at least
/// [`NAMED_SHARE`] of its samples.
const NAMED_WAITS: usize = 2;
const NAMED_SHARE: f64 = 0.2;

impl ServerReport {
    /// The section of a run's `f`igures, whose operations carry `unit`s;
    /// none when the server was not sampled.
    pub fn of(f: &Figures) -> Option<ServerReport> {
        let t = f.server.as_ref()?;
        let per_second = per_second(f);
        // Judged: after warm-up, whole seconds only.
        let warm_end = f.recorders.iter().filter_map(|r| r.warmup.last_end).max();
        let first = warm_end.map_or(0, |e| e.as_secs_f64().ceil() as usize);
        let whole = f.wall.as_secs() as usize;
        let measured = t.seconds.get(first..).unwrap_or_default();
        let found = dips(&per_second, first, whole);
        let run_waits = shares(measured.iter().flatten().map(|s| &s.own_waits));
        Some(ServerReport {
            sampled_every_s: t.every.as_secs_f64(),
            unseen: t.unseen.clone(),
            failed_samples: t.failed,
            first_failure: t.first_failure.clone(),
            other_waits: shares(measured.iter().flatten().map(|s| &s.other_waits)),
            events: events(t),
            nodes: nodes(measured.iter().flatten()),
            dips: found.iter().map(|d| explain(d, t, &run_waits, &f.client_load)).collect(),
            waits: run_waits,
            seconds: seconds_of(t),
            sampler_cost: cost(t),
        })
    }
}

/// The units done in each second of the run, over every label.
fn per_second(f: &Figures) -> Vec<u64> {
    let len = f.recorders.iter().map(|r| r.timeline.len()).max().unwrap_or(0);
    (0..len).map(|s| f.recorders.iter().filter_map(|r| r.timeline.get(s)).map(|sec| sec.rows).sum()).collect()
}

/// The wait events of `seconds`, summed, as shares, most seen first.
fn shares<'a>(seconds: impl Iterator<Item = &'a BTreeMap<String, u32>>) -> Vec<WaitShare> {
    let mut summed: BTreeMap<&str, u64> = BTreeMap::new();
    for waits in seconds {
        for (wait, n) in waits {
            *summed.entry(wait).or_default() += u64::from(*n);
        }
    }
    shares_of(summed)
}

/// Each Citus node's share of the run's sessions in `seconds`, most first:
/// the engine's figures named `node H:P active sessions` and `node H:P wait W`.
fn nodes<'a>(seconds: impl Iterator<Item = &'a ServerSecond>) -> Vec<NodeShare> {
    let mut sessions: BTreeMap<&str, u64> = BTreeMap::new();
    let mut waits: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
    for (name, n) in seconds.flat_map(|s| &s.engine) {
        let Some(figure) = name.strip_prefix(NODE) else { continue };
        if let Some(node) = figure.strip_suffix(NODE_SESSIONS) {
            *sessions.entry(node).or_default() += *n as u64;
        } else if let Some((node, wait)) = figure.split_once(" wait ") {
            *waits.entry(node).or_default().entry(wait).or_default() += *n as u64;
        }
    }
    let mut all: Vec<NodeShare> = shares_of(sessions)
        .into_iter()
        .map(|s| NodeShare {
            waits: waits.remove(s.wait.as_str()).map(shares_of).unwrap_or_default(),
            node: s.wait,
            samples: s.samples,
            share: s.share,
        })
        .collect();
    all.sort_by(|a, b| a.node.cmp(&b.node));
    all
}

/// Samples by name as shares of their sum, most seen first.
fn shares_of(summed: BTreeMap<&str, u64>) -> Vec<WaitShare> {
    let total: u64 = summed.values().sum();
    let mut all: Vec<WaitShare> = summed
        .into_iter()
        .map(|(wait, samples)| WaitShare { wait: wait.to_string(), samples, share: samples as f64 / total as f64 })
        .collect();
    all.sort_by(|a, b| b.samples.cmp(&a.samples).then_with(|| a.wait.cmp(&b.wait)));
    all
}

/// What a second of the server shows worth a marker, in words, by kind.
fn second_events(s: &ServerSecond) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let counted = |n: u64, what: &str| match n {
        1 => format!("a {what}"),
        n => format!("{n} {what}s"),
    };
    if s.checkpoints_requested > 0 {
        out.push(("checkpoint_requested", counted(s.checkpoints_requested, "requested checkpoint")));
    }
    if s.checkpoints_timed > 0 {
        out.push(("checkpoint_timed", counted(s.checkpoints_timed, "timed checkpoint")));
    }
    if let Some(phase) = &s.vacuum {
        out.push(("vacuum", format!("a vacuum of the table ({phase})")));
    }
    if s.lock_waits > 0 {
        out.push(("lock_waits", format!("{} lock waits on the table", s.lock_waits)));
    }
    if s.temp_files > 0 {
        out.push(("temp_files", format!("{} temp files ({})", s.temp_files, binary_size(s.temp_bytes as f64))));
    }
    for (pool, n) in s.engine.iter().filter_map(|(name, n)| Some((rejected_by(name)?, *n))).filter(|(_, n)| *n > 0.0) {
        out.push(("rejected", rejected(n as u64, pool)));
    }
    out
}

/// What the engine counted worth a marker, in words, by kind, from its
/// figures of a second (or of a dip's seconds, added up): TimescaleDB's
/// chunks created (`3 chunks created`) and its background jobs started
/// and running, by kind (`a compression job started`).
fn engine_events(figures: &BTreeMap<String, f64>) -> Vec<(&'static str, String)> {
    let counted = |n: f64, one: &str, many: &str| match n.round() as u64 {
        1 => format!("a {one}"),
        n => format!("{n} {many}"),
    };
    let mut out = Vec::new();
    for (name, n) in figures.iter().filter(|(_, n)| **n >= 0.5) {
        if name == CHUNKS_CREATED {
            out.push(("chunks_created", counted(*n, "chunk created", CHUNKS_CREATED)));
        } else if let Some(kind) = name.strip_suffix(JOBS_STARTED) {
            out.push(("jobs_started", counted(*n, &format!("{kind} job started"), &format!("{kind} jobs started"))));
        } else if let Some(kind) = name.strip_suffix(JOBS_RUNNING) {
            out.push(("jobs_running", counted(*n, &format!("{kind} job running"), &format!("{kind} jobs running"))));
        }
    }
    out
}

/// What tells a CrateDB thread pool's rejected work in words from the pool.
const REJECTED_BY: &str = " rejected by thread pool ";

/// `n` tasks rejected by thread `pool`, in words.
fn rejected(n: u64, pool: &str) -> String {
    let tasks = if n == 1 { "task" } else { "tasks" };
    format!("{n} {tasks}{REJECTED_BY}{pool}")
}

/// Every second's markers, in order.
fn events(t: &ServerTimeline) -> Vec<ServerEvent> {
    let sampled = t.seconds.iter().enumerate().filter_map(|(i, s)| Some((i as u64, s.as_ref()?)));
    sampled
        .flat_map(|(second, s)| {
            let marked = second_events(s).into_iter().chain(engine_events(&s.engine));
            marked.map(move |(kind, what)| ServerEvent { second, kind: kind.into(), what })
        })
        .collect()
}

/// `dip`, with what the server did in its seconds (and the one before,
/// whose end may have started it); `run_waits`: the run's wait events over
/// the whole run, which a dip's are put beside; `client`: the client's
/// busiest thread each second, saturated or not.
fn explain(dip: &Dip, t: &ServerTimeline, run_waits: &[WaitShare], client: &[Busiest]) -> DipReport {
    let window = t.seconds.get(dip.start.saturating_sub(1)..=dip.end.min(t.seconds.len().saturating_sub(1)));
    let window = window.unwrap_or_default();
    let inside = t.seconds.get(dip.start..=dip.end.min(t.seconds.len().saturating_sub(1))).unwrap_or_default();
    let waits = shares(inside.iter().flatten().map(|s| &s.own_waits));
    let mut events: Vec<String> = Vec::new();
    let number = |e: &str| e.split(' ').next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(1);
    let pool = |e: &str| e.split_once(REJECTED_BY).map(|(_, pool)| pool.to_string());
    for (kind, what) in window.iter().flatten().flat_map(second_events) {
        match kind {
            // A lock wait lasting seconds is one thing seen, at its most.
            "lock_waits" => match events.iter_mut().find(|e| e.ends_with("lock waits on the table")) {
                Some(seen) if number(&what) > number(seen) => *seen = what,
                Some(_) => {}
                None => events.push(what),
            },
            // A pool's work rejected in several seconds, added up.
            "rejected" => match events.iter_mut().find(|e| pool(e).is_some() && pool(e) == pool(&what)) {
                Some(seen) => *seen = rejected(number(seen) + number(&what), &pool(&what).unwrap_or_default()),
                None => events.push(what),
            },
            _ => events.push(what),
        }
    }
    // The engine's counts over the dip's seconds, added up: "3 chunks created".
    let mut engine = BTreeMap::new();
    for s in window.iter().flatten() {
        add_engine(&mut engine, &s.engine);
    }
    events.extend(engine_events(&engine).into_iter().map(|(_, what)| what));
    let saturated = client.get(dip.start..=dip.end.min(client.len().saturating_sub(1))).unwrap_or_default();
    if let Some(top) = saturated.iter().filter(|b| b.busy > SATURATED).max_by(|a, b| a.busy.total_cmp(&b.busy)) {
        events.push(format!("a saturated client (its thread {} busy {:.0} %)", top.thread, top.busy * 100.0));
    }
    let unsampled = inside.iter().filter(|s| s.is_none()).count();
    let sentence = sentence(dip, &waits, run_waits, &events, (inside.len(), unsampled));
    DipReport {
        start_s: dip.start as u64,
        end_s: dip.end as u64,
        fell_pct: (dip.fell() * 100.0).round(),
        before_per_sec: dip.before,
        during_per_sec: dip.during,
        waits,
        events,
        sentence,
    }
}

/// One sentence: how much throughput fell and when, and what coincided
/// with it: the server's events, the wait events that held at least
/// [`NAMED_SHARE`] of the run's sessions' samples in it (beside their part
/// over the run); or that nothing observed did. `(seconds, unsampled)`:
/// the dip's seconds the sampler covered, and those whose sample failed.
fn sentence(dip: &Dip, waits: &[WaitShare], run: &[WaitShare], events: &[String], covered: (usize, usize)) -> String {
    let head = format!("throughput fell {:.0} % at {}", dip.fell() * 100.0, seconds(dip.start as u64, dip.end as u64));
    let (length, unsampled) = covered;
    if unsampled >= length && events.is_empty() {
        return format!("{head}; no sample of the server covers it (its samples failed)");
    }
    let pct = |share: f64| format!("{:.0} %", share * 100.0);
    let over_run = |w: &WaitShare| pct(run.iter().find(|r| r.wait == w.wait).map_or(0.0, |r| r.share));
    let named: Vec<&WaitShare> = waits.iter().filter(|w| w.share >= NAMED_SHARE).take(NAMED_WAITS).collect();
    let unsampled = match unsampled {
        0 => String::new(),
        n => format!(" ({n} s unsampled)"),
    };
    if events.is_empty() && named.iter().all(|w| w.wait == NO_WAIT) {
        let seen = match named.first() {
            Some(w) if over_run(w) == pct(w.share) => {
                format!(" (the run's sessions: {NO_WAIT} in {} of samples, as over the run)", pct(w.share))
            }
            Some(w) => {
                format!(" (the run's sessions: {NO_WAIT} in {} of samples, {} over the run)", pct(w.share), over_run(w))
            }
            None => String::new(),
        };
        return format!("{head}; nothing observed on the server coincided with it{seen}{unsampled}");
    }
    let mut said: Vec<String> = events.to_vec();
    for (i, w) in named.iter().enumerate() {
        let what = if w.wait == NO_WAIT { NO_WAIT.to_string() } else { format!("{} waits", w.wait) };
        let of = if i == 0 { " of the run's samples" } else { "" };
        said.push(format!("{what} in {}{of} ({} over the run)", pct(w.share), over_run(w)));
    }
    let listed = match said.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    format!("{head}; coincided with {listed}{unsampled}")
}

fn seconds_of(t: &ServerTimeline) -> Vec<ServerSecondReport> {
    let sampled = t.seconds.iter().enumerate().filter_map(|(i, s)| Some((i as u64, s.as_ref()?)));
    sampled.map(|(second, s)| ServerSecondReport { second, sample: s.clone() }).collect()
}

fn cost(t: &ServerTimeline) -> Option<SamplerCostReport> {
    let c = t.cost.as_ref()?;
    let wall = c.wall.as_secs_f64();
    let cpu = c.backend_cpu.as_ref().ok().map(|d| d.as_secs_f64());
    Some(SamplerCostReport {
        queries_per_sec: if wall > 0.0 { c.queries as f64 / wall } else { 0.0 },
        backend_cpu_s: cpu,
        backend_cpu_share: cpu.filter(|_| wall > 0.0).map(|cpu| cpu / (wall * c.cores.max(1) as f64)),
        cores: c.cores,
        backend_cpu_unknown: c.backend_cpu.as_ref().err().cloned(),
    })
}

/// Seconds `a`..`b` as a report says them: `7 s`, `31–37 s`.
fn seconds(a: u64, b: u64) -> String {
    if a == b {
        format!("{a} s")
    } else {
        format!("{a}–{b} s")
    }
}

/// The waits as a list: `IO:WALWrite 62 %, Lock:relation 8 %`.
fn wait_list(waits: &[WaitShare], most: usize) -> String {
    let listed: Vec<String> = waits.iter().take(most).map(|w| format!("{} {:.0} %", w.wait, w.share * 100.0)).collect();
    listed.join(", ")
}

/// The section's lines in a text report; nothing when the server was not sampled.
pub fn server_lines(out: &mut String, r: Option<&ServerReport>) {
    let Some(r) = r else { return };
    let _ = writeln!(out, "Server:     {}", sampled(r));
    for (label, text) in server_rows(r) {
        let _ = writeln!(out, "  {:<10}{text}", format!("{label}:"));
    }
}

/// How the server was sampled, and what that cost it.
pub fn sampled(r: &ServerReport) -> String {
    let mut said = format!("sampled every {} on a connection of its own", human(Some(r.sampled_every_s), Unit::S));
    if let Some(c) = &r.sampler_cost {
        let _ = write!(said, " ({:.2} statements/s", c.queries_per_sec);
        match c.backend_cpu_share {
            Some(share) => {
                let _ = write!(said, ", its backend {:.3} % of {} cores' time)", share * 100.0, c.cores);
            }
            None => said.push(')'),
        }
    }
    said
}

/// The section's rows after [`sampled`], each a label and its text: the
/// text report's lines and the HTML page's, said once.
pub fn server_rows(r: &ServerReport) -> Vec<(&'static str, String)> {
    let mut rows = Vec::new();
    if !r.waits.is_empty() {
        rows.push(("Waits", format!("the run's sessions: {}", wait_list(&r.waits, 4))));
    }
    if !r.other_waits.is_empty() {
        rows.push(("Others", wait_list(&r.other_waits, 4)));
    }
    let marked: Vec<String> = r
        .events
        .iter()
        .map(|e| format!("{} at {}", e.what.trim_start_matches("a "), seconds(e.second, e.second)))
        .collect();
    if !marked.is_empty() {
        rows.push(("Events", marked.join("; ")));
    }
    if !r.nodes.is_empty() {
        let each: Vec<String> = r
            .nodes
            .iter()
            .map(|n| match n.waits.first() {
                Some(w) => format!("{} {:.0} % (mostly {} {:.0} %)", n.node, n.share * 100.0, w.wait, w.share * 100.0),
                None => format!("{} {:.0} %", n.node, n.share * 100.0),
            })
            .collect();
        rows.push(("Nodes", format!("the run's active sessions on each node: {}", each.join(", "))));
    }
    if let Some(engine) = engine_row(&r.seconds) {
        rows.push(("Engine", engine));
    }
    rows.extend(r.dips.iter().map(|d| ("Dip", d.sentence.clone())));
    rows.extend(r.unseen.iter().map(|why| ("Not seen", why.clone())));
    if let Some(first) = &r.first_failure {
        rows.push(("Failed", format!("{} samples; the first: {first}", r.failed_samples)));
    }
    rows
}

/// The engine's own figures over the run: the most of each level
/// (`jobs running at most 4`), the sum of each count (`thread pool write
/// rejected 12`), those that stayed at 0 left out (the JSON has them);
/// none when the engine counted nothing of its own.
fn engine_row(seconds: &[ServerSecondReport]) -> Option<String> {
    let mut over_run = BTreeMap::new();
    for s in seconds {
        add_engine(&mut over_run, &s.sample.engine);
    }
    let said: Vec<String> = over_run
        .iter()
        // Each Citus node's figures are the Nodes row's.
        .filter(|(name, n)| **n > 0.0 && !name.starts_with(NODE))
        .map(|(name, n)| match name.strip_suffix(LEVEL) {
            Some(level) => format!("{level} at most {}", human(Some(*n), Unit::Count)),
            None => format!("{name} {}", human(Some(*n), Unit::Count)),
        })
        .collect();
    (!said.is_empty()).then(|| said.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(wait: &str, share: f64) -> WaitShare {
        WaitShare { wait: wait.into(), samples: (share * 100.0) as u64, share }
    }

    fn dip(start: usize, end: usize) -> Dip {
        Dip { start, end, before: 1000.0, during: 550.0 }
    }

    #[test]
    fn a_dip_names_the_events_and_the_waits_that_coincided() {
        let waits = [share("IO:WALWrite", 0.62), share(NO_WAIT, 0.3), share("Lock:relation", 0.08)];
        let run = [share(NO_WAIT, 0.8), share("IO:WALWrite", 0.15)];
        let said = sentence(&dip(31, 37), &waits, &run, &["a requested checkpoint".into()], (7, 0));
        assert_eq!(
            said,
            "throughput fell 45 % at 31–37 s; coincided with a requested checkpoint, IO:WALWrite waits in 62 % of \
             the run's samples (15 % over the run) and no wait event (on CPU or not instrumented) in 30 % (80 % over \
             the run)"
        );
    }

    fn write_rejected(write: f64) -> Option<ServerSecond> {
        let engine = [("thread pool write rejected".to_string(), write), ("jobs running (max)".to_string(), 4.0)];
        Some(ServerSecond { engine: engine.into(), ..ServerSecond::default() })
    }

    /// Issue 34, CrateDB: work a thread pool rejected is a marker in its
    /// second, and a dip over several such seconds names it once, added up;
    /// the engine's row gives each figure over the run.
    #[test]
    fn rejected_work_is_an_event_and_named_in_a_dip() {
        let t = ServerTimeline {
            seconds: vec![None, write_rejected(1.0), write_rejected(5.0), write_rejected(0.0)],
            ..ServerTimeline::default()
        };
        let marked: Vec<(u64, String)> = events(&t).into_iter().map(|e| (e.second, e.what)).collect();
        assert_eq!(
            marked,
            [(1, "1 task rejected by thread pool write".into()), (2, "5 tasks rejected by thread pool write".into())]
        );
        let said = explain(&dip(2, 3), &t, &[], &[]);
        assert_eq!(said.events, ["6 tasks rejected by thread pool write"]);
        assert_eq!(
            said.sentence,
            "throughput fell 45 % at 2–3 s; coincided with 6 tasks rejected by thread pool write"
        );
        let mut seconds = seconds_of(&t);
        seconds[0].sample.engine.insert("jobs running: others' (max)".into(), 0.0);
        assert_eq!(engine_row(&seconds).as_deref(), Some("jobs running at most 4; thread pool write rejected 6"));
        assert_eq!(engine_row(&[]), None);
    }

    #[test]
    fn a_dip_with_nothing_observed_says_so() {
        let waits = [share(NO_WAIT, 0.9), share("IO:DataFileRead", 0.1)];
        let said = sentence(&dip(10, 10), &waits, &waits, &[], (1, 0));
        assert_eq!(
            said,
            "throughput fell 45 % at 10 s; nothing observed on the server coincided with it (the run's sessions: no \
             wait event (on CPU or not instrumented) in 90 % of samples, as over the run)"
        );
        let said = sentence(&dip(10, 12), &[], &[], &[], (3, 3));
        assert_eq!(said, "throughput fell 45 % at 10–12 s; no sample of the server covers it (its samples failed)");
        let said = sentence(&dip(10, 12), &[], &[], &["2 lock waits on the table".into()], (3, 1));
        assert_eq!(said, "throughput fell 45 % at 10–12 s; coincided with 2 lock waits on the table (1 s unsampled)");
    }

    fn engine(figures: &[(&str, f64)]) -> ServerSecond {
        let engine = figures.iter().map(|(name, n)| (name.to_string(), *n)).collect();
        ServerSecond { engine, ..ServerSecond::default() }
    }

    /// Issue 34: TimescaleDB's chunks created and jobs are marked in their
    /// second, and a dip's sentence names them added up over its seconds
    /// and the one before: "coincided with 3 chunks created".
    #[test]
    fn chunks_created_and_jobs_are_marked_and_a_dip_names_them() {
        let t = ServerTimeline {
            seconds: vec![
                Some(engine(&[(CHUNKS_CREATED, 5.0)])),
                None,
                Some(engine(&[(CHUNKS_CREATED, 1.0)])),
                Some(engine(&[(CHUNKS_CREATED, 2.0), ("compression jobs started", 1.0)])),
                Some(engine(&[("compression jobs running (max)", 1.0), ("node a:1 active sessions", 4.0)])),
            ],
            ..ServerTimeline::default()
        };
        let events = events(&t);
        let marked: Vec<(u64, &str, &str)> = events.iter().map(|e| (e.second, &*e.kind, e.what.as_str())).collect();
        assert_eq!(
            marked,
            [
                (0, "chunks_created", "5 chunks created"),
                (2, "chunks_created", "a chunk created"),
                (3, "chunks_created", "2 chunks created"),
                (3, "jobs_started", "a compression job started"),
                (4, "jobs_running", "a compression job running"),
            ]
        );
        let explained = explain(&dip(3, 4), &t, &[], &[]);
        assert_eq!(explained.events, ["3 chunks created", "a compression job running", "a compression job started"]);
        assert_eq!(
            explained.sentence,
            "throughput fell 45 % at 3–4 s; coincided with 3 chunks created, a compression job running and a \
             compression job started"
        );
    }

    /// Issue 34: each Citus node's share of the run's sessions over the
    /// seconds, with the wait events seen there, most first.
    #[test]
    fn each_node_s_share_of_the_run_s_sessions() {
        let seconds = [
            engine(&[
                ("node b:2 active sessions", 1.0),
                ("node b:2 wait IO:WALWrite", 1.0),
                ("node a:1 active sessions", 2.0),
                ("node a:1 wait Lock:relation", 2.0),
            ]),
            engine(&[
                ("node a:1 active sessions", 1.0),
                ("node a:1 wait no wait event (on CPU or not instrumented)", 1.0),
                (CHUNKS_CREATED, 1.0),
            ]),
        ];
        let shares = nodes(seconds.iter());
        let seen: Vec<(&str, u64, String, Vec<&str>)> = shares
            .iter()
            .map(|n| {
                (
                    n.node.as_str(),
                    n.samples,
                    format!("{:.2}", n.share),
                    n.waits.iter().map(|w| w.wait.as_str()).collect(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [("a:1", 3, "0.75".into(), vec!["Lock:relation", NO_WAIT]), ("b:2", 1, "0.25".into(), vec!["IO:WALWrite"]),]
        );
    }
}
