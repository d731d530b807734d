//! k6's `handleSummary(data)`: once the run ends, a script that exports it
//! is given k6's summary data on a VU of its own (as k6 makes one), and
//! what it returns goes where its keys say: `stdout` in place of the k6
//! summary, `stderr` to stderr, any other key a file written with that
//! content. A `handleSummary` that throws is reported and the default
//! summary printed, as k6 does; the run's exit code stays its own.

use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::script::Script;
use super::vu::{CallError, TextSummary, Vu, VuSpec};
use crate::driver::http::client::Client;
use crate::stats::http::HttpStats;
use crate::stats::k6::Metrics;

/// Runs `script`'s `handleSummary` on `data` (k6's summary data), with
/// `env` as its `__ENV`, `insecure` as the run's TLS choice and `text` as
/// its `textSummary`: what it returned as `stdout` (none:
/// it threw, print the default summary). Its `stderr` and files are
/// written here; a file that cannot be written is said on stderr.
pub fn handle(
    script: &Script,
    env: &[(String, String)],
    insecure: bool,
    data: &serde_json::Value,
    text: TextSummary,
) -> Option<String> {
    let spec = VuSpec {
        id: 0,
        script: script.clone(),
        env: env.to_vec(),
        stop: CancellationToken::new(),
        metrics: Arc::new(Mutex::new(Metrics::new(&[]))),
        data: None,
        text_summary: Some(text),
        shared: Arc::default(),
    };
    let mut client = Client::new(Arc::new(Mutex::new(HttpStats::new(0))), insecure);
    let summarized = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string());
    let summarized = summarized.and_then(|rt| {
        rt.block_on(async {
            let (mut vu, _) = Vu::start(spec).await.map_err(|e| format!("{e:#}"))?;
            vu.summarize(data.to_string(), &mut client).await.map_err(|e| match e {
                CallError::Thrown(e) => e,
                CallError::Gone => "the VU running it ended".into(),
            })
        })
    });
    let outputs = match summarized {
        Ok(outputs) => outputs,
        Err(e) => {
            crate::console::line(format_args!("ERRO handleSummary() failed: {e}; the default summary follows"));
            return None;
        }
    };
    let mut stdout = String::new();
    for (key, content) in outputs {
        match key.as_str() {
            "stdout" => stdout.push_str(&String::from_utf8_lossy(&content)),
            "stderr" => crate::console::text(&String::from_utf8_lossy(&content)),
            path => {
                if let Err(e) = std::fs::write(path, &content) {
                    crate::console::line(format_args!("ERRO handleSummary(): cannot write {path}: {e}"));
                }
            }
        }
    }
    Some(stdout)
}
