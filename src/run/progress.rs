//! The live progress on stderr: a bar on a terminal (rows written and
//! rows/s, with an ETA when the total is known: in rows, or in bytes of
//! input files when insert-json reads files), or pgbench's progress lines
//! (`-P`, and every 10 s when stderr is not a terminal). The bar reads only
//! atomic counters; the lines also merge the workers' interval latencies
//! (`stats::interval`), once per interval, so neither slows the workers.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::worker::Plan;
use crate::config::{ProgressDisplay, AUTO_PROGRESS_EVERY};
use crate::format::{group, human, Unit};
use crate::stats::interval::{Interval, IntervalLatency};

pub struct Progress {
    bar: ProgressBar,
    stop: CancellationToken,
    task: JoinHandle<()>,
    lines: Option<JoinHandle<()>>,
}

impl Progress {
    /// `unit` names what is counted: rows, queries, requests. A run of
    /// `total` units has a bar of them; a run of a duration (`--duration`,
    /// `-T`) a bar of its time, with the time left; else a spinner.
    pub fn start(plan: &Plan, total: Option<u64>, unit: &str, display: ProgressDisplay) -> Progress {
        let (len, template) = bar(total, plan.deadline, unit);
        let position: Box<dyn Fn() -> u64 + Send> = match (total, plan.deadline) {
            (None, Some(duration)) => {
                let t0 = plan.t0;
                Box::new(move || t0.elapsed().min(duration).as_millis() as u64)
            }
            _ => {
                let live = plan.live.clone();
                Box::new(move || live.rows())
            }
        };
        Progress::spawn(plan, len, &template, unit, display, position)
    }

    /// Rows read from input files of `total` bytes: the bar and its ETA
    /// follow the bytes `read` so far, the text the rows written.
    pub fn start_reading(plan: &Plan, read: Arc<AtomicU64>, total: u64, display: ProgressDisplay) -> Progress {
        let template =
            "{elapsed_precise} [{bar:30}] {percent}% of the input  {rows} rows  {rows_rate} rows/s  ETA {eta}  {msg}";
        let position = move || read.load(Ordering::Relaxed);
        Progress::spawn(plan, Some(total), template, "rows", display, position)
    }

    fn spawn(
        plan: &Plan,
        len: Option<u64>,
        template: &str,
        unit: &str,
        display: ProgressDisplay,
        position: impl Fn() -> u64 + Send + 'static,
    ) -> Progress {
        let every = match display {
            ProgressDisplay::Hidden => None,
            ProgressDisplay::Lines(every) => Some(every),
            ProgressDisplay::Auto => (!std::io::stderr().is_terminal()).then_some(AUTO_PROGRESS_EVERY),
        };
        let stop = CancellationToken::new();
        let lines = every.map(|every| print_lines(plan, every, unit, stop.clone()));
        let bar_shown = display == ProgressDisplay::Auto && lines.is_none();
        let target = if bar_shown { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let live = plan.live.clone();
        let bar = ProgressBar::with_draw_target(len, target);
        let rows = live.clone();
        let style = ProgressStyle::with_template(template)
            .expect("static template")
            .with_key("rate", |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&group(state.per_sec() as u64));
            })
            .with_key("rows", {
                let rows = rows.clone();
                move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(&group(rows.rows()));
                }
            })
            .with_key("rows_rate", move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let secs = state.elapsed().as_secs_f64();
                let rate = if secs > 0.0 { rows.rows() as f64 / secs } else { 0.0 };
                let _ = w.write_str(&group(rate as u64));
            })
            // A duration's bar counts milliseconds: what is left of them.
            .with_key("left", |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let left = state.len().unwrap_or(0).saturating_sub(state.pos());
                let _ = w.write_str(&format!("{}s", left.div_ceil(1000)));
            })
            .progress_chars("=> ");
        bar.set_style(style);
        // The bar's message: the last second's p99, from the workers'
        // interval latencies (as `-P`'s lines, which it never runs beside).
        if bar_shown {
            let _ = live.interval.set(Interval::default());
        }
        let task = tokio::spawn({
            let (bar, stop, unit) = (bar.clone(), stop.clone(), unit.to_string());
            async move {
                let mut tick = tokio::time::interval(Duration::from_millis(200));
                let mut p99 = None;
                for ticks in 1u64.. {
                    if stop.is_cancelled() {
                        break;
                    }
                    tokio::select! {
                        _ = tick.tick() => {}
                        _ = stop.cancelled() => {}
                    }
                    bar.set_position(position());
                    if ticks % 5 == 0 {
                        let last = live.interval.get().map(Interval::take).filter(|l| l.count > 0);
                        p99 = last.map(|l| l.p99_ms);
                    }
                    bar.set_message(message(p99, live.failed(), &unit));
                }
            }
        });
        Progress { bar, stop, task, lines }
    }

    /// Whether the bar is drawn (on a terminal, neither `-q` nor `-P`).
    pub fn bar_shown(&self) -> bool {
        !self.bar.is_hidden()
    }

    pub async fn finish(self) {
        self.stop.cancel();
        let _ = self.task.await;
        if let Some(lines) = self.lines {
            let _ = lines.await;
        }
        self.bar.finish_and_clear();
    }
}

/// The bar's length and layout: `total` units, else the milliseconds of
/// the run's `duration` with the time left, else a spinner.
fn bar(total: Option<u64>, duration: Option<Duration>, unit: &str) -> (Option<u64>, String) {
    match (total, duration) {
        (Some(_), _) => (
            total,
            format!("{{elapsed_precise}} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit}  {{rate}} {unit}/s  ETA {{eta}}  {{msg}}"),
        ),
        (None, Some(d)) => (
            Some(d.as_millis() as u64),
            format!("{{elapsed_precise}} [{{bar:30}}] {{left}} left  {{rows}} {unit}  {{rows_rate}} {unit}/s  {{msg}}"),
        ),
        (None, None) => (None, format!("{{spinner}} {{elapsed_precise}} {{human_pos}} {unit}  {{rate}} {unit}/s  {{msg}}")),
    }
}

/// The bar's message: the last second's p99 and the failures so far.
fn message(p99_ms: Option<f64>, failed: u64, unit: &str) -> String {
    let p99 = p99_ms.map(|p| format!("p99 {} (last second)", human(Some(p), Unit::Ms)));
    let failed = (failed > 0).then(|| format!("{} {unit} failed", group(failed)));
    p99.into_iter().chain(failed).collect::<Vec<_>>().join("  ")
}

/// Prints a progress line every `every` since the run's start, and one for
/// the run's last stretch when `stop` comes at least half an interval after
/// the last line: a run that ends on time (`-T` under `-R`, where no
/// operation runs over the deadline) ends just before its last tick, whose
/// line would otherwise be lost (pgbench loses it). Turns on the workers'
/// interval latencies: called before they start.
fn print_lines(plan: &Plan, every: Duration, unit: &str, stop: CancellationToken) -> JoinHandle<()> {
    let live = plan.live.clone();
    let _ = live.interval.set(Interval::default());
    let (t0, open_loop) = (plan.t0, plan.schedule.open());
    // Queries are pgbench's transactions; rows and requests keep their name.
    let rate_unit = if unit == "queries" { "tps".to_string() } else { format!("{unit}/s") };
    tokio::spawn(async move {
        let mut tick = tokio::time::interval_at((t0 + every).into(), every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let (mut last, mut rows, mut failed) = (t0, 0, 0);
        loop {
            let last_one = tokio::select! {
                _ = tick.tick() => false,
                _ = stop.cancelled() => true,
            };
            let now = Instant::now();
            if last_one && now.duration_since(last) < every / 2 {
                return;
            }
            let latency = live.interval.get().map(Interval::take).unwrap_or_default();
            let (rows_now, failed_now) = (live.rows(), live.failed());
            let secs = now.duration_since(last).as_secs_f64();
            let rate = (rows_now - rows) as f64 / secs.max(f64::EPSILON);
            let at = now.duration_since(t0);
            crate::console::line(format_args!(
                "{}",
                line(at, rate, &rate_unit, &latency, failed_now - failed, open_loop)
            ));
            if last_one {
                return;
            }
            (last, rows, failed) = (now, rows_now, failed_now);
        }
    })
}

/// One progress line, in pgbench's words and order (`progress: 5.0 s,
/// 1234.5 tps, lat 0.812 ms stddev 0.105, 0 failed`, then `, lag 0.020 ms`
/// for an open loop), and dbload's p99 after them, so a script that reads
/// pgbench's lines reads these.
fn line(at: Duration, rate: f64, rate_unit: &str, l: &IntervalLatency, failed: u64, open_loop: bool) -> String {
    let mut line = format!(
        "progress: {:.1} s, {rate:.1} {rate_unit}, lat {:.3} ms stddev {:.3}, {failed} failed",
        at.as_secs_f64(),
        l.mean_ms,
        l.stddev_ms
    );
    if open_loop {
        line.push_str(&format!(", lag {:.3} ms", l.lag_ms));
    }
    line.push_str(&format!(", p99 {:.3} ms", l.p99_ms));
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35: a `--duration` run showed a spinner: no bar, no time left.
    #[test]
    fn a_run_of_a_duration_has_a_bar_of_its_time() {
        let (len, template) = bar(None, Some(Duration::from_secs(30)), "queries");
        assert_eq!(len, Some(30_000));
        assert!(template.contains("[{bar:30}] {left} left  {rows} queries"), "{template}");
        assert!(bar(Some(1000), Some(Duration::from_secs(30)), "rows").1.contains("/{human_len} rows"));
        assert!(bar(None, None, "rows").1.starts_with("{spinner}"));
    }

    /// Issue 35: the bar showed no latency, and its errors only as a
    /// count: now the last second's p99 and the failures, as words.
    #[test]
    fn the_bar_shows_the_last_second_s_p99_and_the_failures() {
        assert_eq!(message(None, 0, "rows"), "");
        assert_eq!(message(Some(1.2345), 0, "queries"), "p99 1.23 ms (last second)");
        assert_eq!(message(Some(0.042), 1234, "rows"), "p99 42.0 µs (last second)  1,234 rows failed");
        assert_eq!(message(None, 3, "requests"), "3 requests failed");
    }

    #[test]
    fn a_line_reads_like_pgbench_then_p99() {
        let l = IntervalLatency { count: 10, mean_ms: 0.8123, stddev_ms: 0.1049, p99_ms: 1.2345, lag_ms: 0.02 };
        let at = Duration::from_millis(5_003);
        assert_eq!(
            line(at, 1234.54, "tps", &l, 0, false),
            "progress: 5.0 s, 1234.5 tps, lat 0.812 ms stddev 0.105, 0 failed, p99 1.234 ms"
        );
        assert_eq!(
            line(at, 20000.0, "rows/s", &l, 3, true),
            "progress: 5.0 s, 20000.0 rows/s, lat 0.812 ms stddev 0.105, 3 failed, lag 0.020 ms, p99 1.234 ms"
        );
    }
}
