//! nodeIngestBench's "Global Results" block, printed after dbload's own
//! report when its flags were given, word for word as it prints it
//! (tab, then Node's number format: `format::js_locale`), so the scripts
//! that read it keep working. The figures are dbload's measured ones.

use std::fmt::Write as _;

use super::query::{render_workload as workload, QueryReport};
use crate::format::js_locale;

/// The block for `count` units (`Rows`/`records`/`rows per sec`, or
/// `Queries`/`queries`/`queries per sec`) over `seconds`; nodeIngestBench's
/// own line when nothing was done.
pub fn global_results(out: &mut String, (label, noun, rate): (&str, &str, &str), count: u64, seconds: f64) {
    let _ = writeln!(out, "\n-------- Global Results ---------");
    if count > 0 && seconds > 0.0 {
        let _ = writeln!(out, "Time\t {} s", js_locale(seconds));
        let _ = writeln!(out, "{label}\t {} {noun}", js_locale(count as f64));
        let _ = writeln!(out, "Speed\t {} {rate}", js_locale(count as f64 / seconds));
    } else if label == "Rows" {
        let _ = writeln!(out, "No rows inserted");
    } else {
        let _ = writeln!(out, "No queries ran");
    }
    let _ = writeln!(out, "---------------------------------");
}

/// `dbload workload`'s report, then the block: the queries that succeeded
/// over the measured time.
pub fn render_workload(r: &QueryReport) -> String {
    let mut out = workload(r);
    global_results(&mut out, QUERIES, r.count, r.duration_s);
    out
}

/// What an ingest's block counts.
pub const ROWS: (&str, &str, &str) = ("Rows", "records", "rows per sec");
/// What a query run's block counts.
pub const QUERIES: (&str, &str, &str) = ("Queries", "queries", "queries per sec");

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed's block, byte for byte (its figures).
    #[test]
    fn the_block_is_nodeingestbenchs() {
        let mut out = String::new();
        global_results(&mut out, ROWS, 6_020_000, 25.179);
        assert_eq!(
            out,
            "\n-------- Global Results ---------\nTime\t 25.179 s\nRows\t 6,020,000 records\n\
             Speed\t 239,088.129 rows per sec\n---------------------------------\n"
        );
        let mut out = String::new();
        global_results(&mut out, QUERIES, 0, 0.0);
        assert!(out.contains("\nNo queries ran\n"), "{out}");
    }
}
