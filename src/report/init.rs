//! `dbload init`'s report: one line, as `pgbench -i` prints its steps.

use crate::outcome::InitOutcome;

/// The init's figures as pgbench prints them: each step's time.
pub fn render(out: &InitOutcome) -> String {
    let steps: Vec<String> = out
        .steps
        .iter()
        .map(|s| match s.rows {
            Some(rows) if s.seconds > 0.0 => {
                format!("{} {:.2} s, {rows} rows, {:.0} rows/s", s.step, s.seconds, rows as f64 / s.seconds)
            }
            _ => format!("{} {:.2} s", s.step, s.seconds),
        })
        .collect();
    let status = if out.interrupted { "interrupted" } else { "done" };
    format!("dbload init --scale {}: {status} in {:.2} s ({}).\n", out.scale, out.seconds, steps.join(", "))
}
