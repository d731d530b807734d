//! The live progress bar on stderr: rows written and rows/s, with an ETA
//! when the total is known: in rows, or in bytes of input files (insert-json
//! reading files). It only reads atomic counters, so it never slows the
//! workers down; hidden when stderr is not a terminal.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::report::text::group;
use crate::stats::Live;

pub struct Progress {
    bar: ProgressBar,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Progress {
    /// `unit` names what is counted: rows, queries, requests.
    pub fn start(live: Arc<Live>, total: Option<u64>, unit: &str, quiet: bool) -> Progress {
        let (len, template) = match total {
            Some(_) => (
                total,
                format!("{{elapsed_precise}} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit}  {{rate}} {unit}/s  ETA {{eta}}  {{msg}}"),
            ),
            None => (None, format!("{{spinner}} {{elapsed_precise}} {{human_pos}} {unit}  {{rate}} {unit}/s  {{msg}}")),
        };
        let position = {
            let live = live.clone();
            move || live.rows()
        };
        Progress::spawn(live, len, &template, unit, quiet, position)
    }

    /// Rows read from input files of `total` bytes: the bar and its ETA
    /// follow the bytes `read` so far, the text the rows written.
    pub fn start_reading(live: Arc<Live>, read: Arc<AtomicU64>, total: u64, quiet: bool) -> Progress {
        let template =
            "{elapsed_precise} [{bar:30}] {percent}% of the input  {rows} rows  {rows_rate} rows/s  ETA {eta}  {msg}";
        let position = move || read.load(Ordering::Relaxed);
        Progress::spawn(live, Some(total), template, "rows", quiet, position)
    }

    fn spawn(
        live: Arc<Live>,
        len: Option<u64>,
        template: &str,
        unit: &str,
        quiet: bool,
        position: impl Fn() -> u64 + Send + 'static,
    ) -> Progress {
        let target = if quiet { ProgressDrawTarget::hidden() } else { ProgressDrawTarget::stderr() };
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
            .progress_chars("=> ");
        bar.set_style(style);
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let (bar, stop, unit) = (bar.clone(), stop.clone(), unit.to_string());
            async move {
                let mut tick = tokio::time::interval(Duration::from_millis(200));
                while !stop.is_cancelled() {
                    tokio::select! {
                        _ = tick.tick() => {}
                        _ = stop.cancelled() => {}
                    }
                    bar.set_position(position());
                    let failed = live.failed();
                    if failed > 0 {
                        bar.set_message(format!("{failed} {unit} failed"));
                    }
                }
            }
        });
        Progress { bar, stop, task }
    }

    pub async fn finish(self) {
        self.stop.cancel();
        let _ = self.task.await;
        self.bar.finish_and_clear();
    }
}
