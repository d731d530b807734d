//! Client saturation in a report: the client's busiest thread in each
//! second of the run (`stats::threads`), and the seconds when one was busy
//! over 90 %: then the client, not the server, set the pace, and the
//! report says so rather than pass its limit off as the server's.

use std::fmt::Write as _;

use serde::Serialize;

use crate::stats::threads::{saturated, Busiest, SATURATED};

/// The busiest thread of one second.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct BusiestSecond {
    pub second: u64,
    /// Its name and thread id.
    pub thread: String,
    /// Its CPU time over the second (0 to 1).
    pub busy: f64,
}

/// The client's load over the run.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ClientSaturation {
    /// The seconds when a thread of the client was busy over 90 %.
    pub saturated_seconds: Vec<u64>,
    pub per_second: Vec<BusiestSecond>,
}

impl ClientSaturation {
    /// From the busiest thread of each second; none when none was measured.
    pub fn of(seconds: &[Busiest]) -> Option<ClientSaturation> {
        if seconds.is_empty() {
            return None;
        }
        let per_second = (0u64..)
            .zip(seconds)
            .map(|(second, b)| BusiestSecond { second, thread: b.thread.clone(), busy: b.busy })
            .collect();
        Some(ClientSaturation { saturated_seconds: saturated(seconds), per_second })
    }
}

/// Seconds as runs: `3–5 s, 9 s`.
pub(super) fn runs(seconds: &[u64]) -> String {
    let mut said: Vec<String> = Vec::new();
    let mut i = 0;
    while i < seconds.len() {
        let mut j = i;
        while j + 1 < seconds.len() && seconds[j + 1] == seconds[j] + 1 {
            j += 1;
        }
        said.push(if i == j { format!("{} s", seconds[i]) } else { format!("{}–{} s", seconds[i], seconds[j]) });
        i = j + 1;
    }
    said.join(", ")
}

/// The report's line on the client's load; nothing when it was not measured.
pub fn client_load_line(out: &mut String, c: Option<&ClientSaturation>) {
    let Some(c) = c else { return };
    let Some(top) = c.per_second.iter().max_by(|a, b| a.busy.total_cmp(&b.busy)) else { return };
    let busiest = format!("the busiest: {} at {:.0} % of second {}", top.thread, top.busy * 100.0, top.second);
    let over = SATURATED * 100.0;
    if c.saturated_seconds.is_empty() {
        let _ =
            writeln!(out, "Client load: no thread of the client was busy over {over:.0} % of any second ({busiest})");
    } else {
        let _ = writeln!(
            out,
            "Client load: the client was the bottleneck (a thread busy over {over:.0} %) at {} ({busiest})",
            runs(&c.saturated_seconds)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturated_seconds_are_said_as_runs() {
        assert_eq!(runs(&[3, 4, 5, 9, 11, 12]), "3–5 s, 9 s, 11–12 s");
        let second = |busy| Busiest { thread: "dbload-producer 7".into(), busy };
        let c = ClientSaturation::of(&[second(0.5), second(0.97), second(0.95)]).unwrap();
        let mut out = String::new();
        client_load_line(&mut out, Some(&c));
        assert_eq!(
            out,
            "Client load: the client was the bottleneck (a thread busy over 90 %) at 1–2 s (the busiest: \
             dbload-producer 7 at 97 % of second 1)\n"
        );
    }
}
