//! The live progress bar on stderr: rows written and rows/s, with an ETA
//! when the total is known. It only reads the workers' atomic counters, so
//! it never slows them down; hidden when stderr is not a terminal.

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
        let target = if quiet { ProgressDrawTarget::hidden() } else { ProgressDrawTarget::stderr() };
        let (bar, template) = match total {
            Some(n) => (
                ProgressBar::with_draw_target(Some(n), target),
                format!("{{elapsed_precise}} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit}  {{rate}} {unit}/s  ETA {{eta}}  {{msg}}"),
            ),
            None => (
                ProgressBar::with_draw_target(None, target),
                format!("{{spinner}} {{elapsed_precise}} {{human_pos}} {unit}  {{rate}} {unit}/s  {{msg}}"),
            ),
        };
        let style = ProgressStyle::with_template(&template)
            .expect("static template")
            .with_key("rate", |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&group(state.per_sec() as u64));
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
                    bar.set_position(live.rows());
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
