//! nodeIngestBench's blocks, printed when its flags were given, word for
//! word as it prints them, so that its users (and the scripts that read
//! its output) find its answer in its words first, then dbload's report:
//! its "Options" block when the run starts (Node's `console.log` of its
//! options) and its "Global Results" block (tab, then Node's number
//! format: `format::js_locale`). The figures are dbload's measured ones.

use std::fmt::Write as _;

use super::query::{render_workload as workload, QueryReport};
use crate::config::node_ingest::{OptionValue, Options};
use crate::format::js_locale;

/// The Options block: the ingest script's rules, or the analytical one's.
pub fn options(o: &Options) -> String {
    let (open, close) = match o.queries {
        true => ("----------- Options -------------", "---------------------------------"),
        false => ("-------- Options ---------", "--------------------------"),
    };
    let fields: Vec<String> = o.fields.iter().map(|(name, value)| format!("  {name}: {}", js_value(value))).collect();
    format!("{open}\n{{\n{}\n}}\n{close}\n", fields.join(",\n"))
}

/// A value as Node's `console.log` writes it inside an object.
fn js_value(v: &OptionValue) -> String {
    match v {
        OptionValue::Bool(b) => b.to_string(),
        OptionValue::Number(n) => n.to_string(),
        OptionValue::Text(t) => js_string(t),
        OptionValue::Undefined => "undefined".to_string(),
        OptionValue::Queries(qs) => {
            let entries: Vec<String> =
                qs.iter().map(|(q, ratio)| format!("    {{ query: {}, ratio: {ratio} }}", js_string(q))).collect();
            format!("[\n{}\n  ]", entries.join(",\n"))
        }
    }
}

/// A string in single quotes, its quotes, backslashes and line breaks escaped.
fn js_string(s: &str) -> String {
    let escaped = s.replace('\\', "\\\\").replace('\'', "\\'").replace('\n', "\\n").replace('\t', "\\t");
    format!("'{escaped}'")
}

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

/// The Global Results block (the queries that succeeded over the measured
/// time), then `dbload workload`'s report.
pub fn render_workload(r: &QueryReport) -> String {
    let mut out = String::new();
    global_results(&mut out, QUERIES, r.count, r.duration_s);
    out.push('\n');
    out.push_str(&workload(r));
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

    /// Issue 32: the seed's Options blocks, in Node's `console.log` form.
    #[test]
    fn the_options_blocks_are_nodeingestbenchs() {
        let n = OptionValue::Number;
        let fields = vec![
            ("dropTable", OptionValue::Bool(true)),
            ("processes", n(1.0)),
            ("maxRows", n(6e6)),
            ("table", OptionValue::Text("doc.cpu".into())),
            ("replicas", OptionValue::Undefined),
        ];
        assert_eq!(
            options(&Options { queries: false, fields }),
            "-------- Options ---------\n{\n  dropTable: true,\n  processes: 1,\n  maxRows: 6000000,\n  \
             table: 'doc.cpu',\n  replicas: undefined\n}\n--------------------------\n"
        );
        let queries = vec![("SELECT 1\nORDER BY 1\n".into(), 0.4), ("SELECT 'a\\b'".into(), 1.0)];
        let fields = vec![("maxQueries", n(500.0)), ("queries", OptionValue::Queries(queries))];
        assert_eq!(
            options(&Options { queries: true, fields }),
            "----------- Options -------------\n{\n  maxQueries: 500,\n  queries: [\n    \
             { query: 'SELECT 1\\nORDER BY 1\\n', ratio: 0.4 },\n    { query: 'SELECT \\'a\\\\b\\'', ratio: 1 }\n  \
             ]\n}\n---------------------------------\n"
        );
    }
}
