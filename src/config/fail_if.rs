//! `--fail-if`: pass/fail thresholds for CI, such as `p99_ms > 50` or
//! `rows_per_sec < 100000`, parsed and checked against the command's
//! report contract when the options are resolved. They are configuration:
//! a typo is refused before anything runs. `report::fail_if` evaluates
//! them against the finished report.
//!
//! Conditions name the report in its JSON form, so any number the JSON
//! contract has can be checked, by the names users see in `--output json`,
//! and a field added to the report is checkable without touching this file.
//! The grammar is one comparison (`FIELD OP NUMBER`), parsed by hand: CI
//! files are not a place to evaluate code.

use std::fmt;

use anyhow::Result;
use serde_json::Value as Json;

use crate::error::usage;
use crate::stats::bound::Op;

const OPS: &str = "< <= > >= == !=";
const FORM: &str = "FIELD OP NUMBER, e.g. `p99_ms > 50`, `rows_per_sec < 100_000` or `errors >= 1`";

/// One `--fail-if` condition: when it holds, the run fails (exit 1).
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// The field as written: a dotted path, possibly a shorthand.
    field: String,
    op: Op,
    threshold: f64,
    text: String,
    /// The option it was given with (`--fail-if`; `dbload sweep`'s
    /// `--where` and `--slo`), which its errors name.
    flag: &'static str,
}

impl Condition {
    /// Parses `p99_ms > 50`, `rows_per_sec < 100000`, `errors >= 1`,
    /// `latency_ms.p99 > 50`, `queries.q1.p95_ms > 20`. Operators:
    /// `< <= > >= == !=`. Threshold: a number (underscores allowed:
    /// `100_000`). Bad syntax is a usage error naming `--fail-if`, the text
    /// and the accepted form. Fields are checked against the report's
    /// contract by [`Condition::check`], and whether they hold a value only
    /// when the report is evaluated.
    pub fn parse(s: &str) -> Result<Condition> {
        Condition::parse_as("--fail-if", s)
    }

    /// [`Condition::parse`] for a condition given with another option
    /// (`flag`, e.g. `--where`), which its errors name.
    pub fn parse_as(flag: &'static str, s: &str) -> Result<Condition> {
        let bad = |why: &str| usage(format!("{flag} `{s}`: {why}; expected {FORM} (OP: {OPS})"));
        let text = s.trim();
        let Some(at) = text.find(['<', '>', '=', '!']) else {
            return Err(bad("no comparison operator"));
        };
        let field = text[..at].trim();
        let rest = &text[at..];
        let op_len = rest.find(|c| !matches!(c, '<' | '>' | '=' | '!')).unwrap_or(rest.len());
        let (op_text, number) = (&rest[..op_len], rest[op_len..].trim());
        let op = Op::parse(op_text).ok_or_else(|| {
            if op_text == "=" {
                bad("`=` is not an operator, write `==`")
            } else {
                bad(&format!("unknown operator `{op_text}`"))
            }
        })?;
        if field.is_empty() {
            return Err(bad("the field is missing before the operator"));
        }
        if field.contains(char::is_whitespace) || field.split('.').any(str::is_empty) {
            return Err(bad(&format!("`{field}` is not a field name (a dotted path like `latency_ms.p99`)")));
        }
        if number.is_empty() {
            return Err(bad("the number is missing after the operator"));
        }
        let threshold = parse_number(number).ok_or_else(|| bad(&format!("`{number}` is not a number")))?;
        Ok(Condition { field: field.to_string(), op, threshold, text: text.to_string(), flag })
    }

    /// The field as written: a dotted path, possibly a shorthand.
    pub fn field(&self) -> &str {
        &self.field
    }

    /// Whether the report's `value` of the field meets the condition.
    pub fn holds_for(&self, value: f64) -> bool {
        self.op.compare(value, self.threshold)
    }

    /// Checks the field against the report `contract` of the command, so
    /// that a misspelt field is found when the options are resolved, not
    /// after the run: a usage error naming the field and the closest valid
    /// one. Whether it has a value (a paced run's `service_time_ms`, a
    /// query's name) can only be known at the end, when the report is evaluated
    /// (`report::fail_if::holds`).
    pub fn check(&self, contract: Contract) -> Result<()> {
        contract.check_field(&self.field).map_err(|why| self.error(why))
    }

    /// The condition as written (trimmed), for the report and messages.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// A usage error about this condition: `--fail-if `TEXT`: why`.
    pub fn error(&self, why: impl fmt::Display) -> anyhow::Error {
        usage(format!("{} `{}`: {why}", self.flag, self.text))
    }
}

/// A command's report contract, as its JSON schema file states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contract {
    /// ingest, insert-fake-data, insert-json.
    Ingest,
    /// timeit, workload.
    Query,
    /// export, insert-from-sql.
    Transfer,
    Http,
    /// `k6 run`.
    K6,
    /// `run`: the ingest report under `ingest.`.
    Mixed,
}

/// The numeric fields a condition may name: dotted paths from the top of the
/// report (with the `pNN_ms` shorthands), and within one of its `queries`.
struct Fields {
    top: Vec<String>,
    queries: Vec<String>,
}

impl Contract {
    /// Whether the command's report has a numeric `field` (a dotted path,
    /// a `pNN_ms` shorthand, or `queries.NAME.FIELD`); if not, why, naming
    /// the closest valid field and the schema file.
    pub fn check_field(self, field: &str) -> Result<(), String> {
        let fields = self.numeric_fields();
        let (names, field): (&[String], &str) = match field.strip_prefix("queries.") {
            Some(rest) if !fields.queries.is_empty() => {
                // Query names may hold dots: any split whose tail is a query field will do.
                let mut tails = rest.match_indices('.').map(|(i, _)| &rest[i + 1..]);
                if tails.clone().any(|f| fields.queries.iter().any(|n| n == f)) {
                    return Ok(());
                }
                (&fields.queries, tails.next_back().unwrap_or(rest))
            }
            _ if fields.top.iter().any(|f| f == field) => return Ok(()),
            _ => (&fields.top, field),
        };
        let guess = crate::hint::suggest(field, names).map(|g| format!(" (did you mean `{g}`?)")).unwrap_or_default();
        Err(format!(
            "the {} report has no numeric field `{field}`{guess}; see {} for its fields",
            self.commands(),
            self.schema_file()
        ))
    }

    fn schema_file(self) -> &'static str {
        match self {
            Contract::Ingest | Contract::Mixed => "schema/report.schema.json",
            Contract::Query => "schema/query-report.schema.json",
            Contract::Transfer => "schema/transfer-report.schema.json",
            Contract::Http => "schema/http-report.schema.json",
            Contract::K6 => "schema/k6-report.schema.json",
        }
    }

    fn commands(self) -> &'static str {
        match self {
            Contract::Ingest => "ingest",
            Contract::Query => "query",
            Contract::Transfer => "transfer",
            Contract::Http => "http",
            Contract::K6 => "k6 run",
            Contract::Mixed => "run",
        }
    }

    fn schema(self) -> Json {
        let text = match self {
            Contract::Ingest | Contract::Mixed => include_str!("../../schema/report.schema.json"),
            Contract::Query => include_str!("../../schema/query-report.schema.json"),
            Contract::Transfer => include_str!("../../schema/transfer-report.schema.json"),
            Contract::Http => include_str!("../../schema/http-report.schema.json"),
            Contract::K6 => include_str!("../../schema/k6-report.schema.json"),
        };
        serde_json::from_str(text).expect("the schema files are valid JSON (tested)")
    }

    fn numeric_fields(self) -> Fields {
        let schema = self.schema();
        let mut top = Vec::new();
        let prefix = if self == Contract::Mixed { "ingest." } else { "" };
        numeric_paths(&schema, &schema, prefix, &mut top);
        if self == Contract::Mixed {
            top.extend(["schema_version".to_string(), "exit_code".to_string()]);
        }
        let mut queries = Vec::new();
        if let Some(items) = schema.pointer("/properties/queries/items") {
            numeric_paths(&schema, items, "", &mut queries);
        }
        Fields { top: with_shorthands(top), queries: with_shorthands(queries) }
    }
}

/// Adds `pNN_ms` for every `latency_ms.pNN` (what [`lookup`] accepts).
fn with_shorthands(mut names: Vec<String>) -> Vec<String> {
    let short: Vec<String> =
        names.iter().filter_map(|n| n.strip_prefix("latency_ms.")).map(|stem| format!("{stem}_ms")).collect();
    names.extend(short);
    names
}

/// The dotted paths under `node` whose value may be a number, following
/// `$ref`s into `root` and every alternative of `oneOf`/`anyOf`; arrays
/// are not entered (a condition cannot index them).
fn numeric_paths(root: &Json, node: &Json, prefix: &str, out: &mut Vec<String>) {
    if let Some(r) = node.get("$ref").and_then(Json::as_str) {
        if let Some(target) = r.strip_prefix('#').and_then(|p| root.pointer(p)) {
            numeric_paths(root, target, prefix, out);
        }
    }
    for alternatives in ["oneOf", "anyOf"] {
        for alt in node.get(alternatives).and_then(Json::as_array).into_iter().flatten() {
            numeric_paths(root, alt, prefix, out);
        }
    }
    let types = match node.get("type") {
        Some(Json::String(t)) => vec![t.as_str()],
        Some(Json::Array(ts)) => ts.iter().filter_map(Json::as_str).collect(),
        _ => Vec::new(),
    };
    let path = prefix.strip_suffix('.').unwrap_or(prefix);
    if !path.is_empty() && types.iter().any(|t| matches!(*t, "number" | "integer")) && !out.iter().any(|p| p == path) {
        out.push(path.to_string());
    }
    for (key, sub) in node.get("properties").and_then(Json::as_object).into_iter().flatten() {
        numeric_paths(root, sub, &format!("{prefix}{key}."), out);
    }
}

/// `100_000`, `0.5`, `-3`, `1e6`: Rust's float syntax with digit-group
/// underscores; not `inf` or `NaN`, which no threshold means.
fn parse_number(s: &str) -> Option<f64> {
    let bytes = s.as_bytes();
    let grouped = bytes.iter().enumerate().all(|(i, &b)| {
        b != b'_' || (i > 0 && i + 1 < bytes.len() && bytes[i - 1].is_ascii_digit() && bytes[i + 1].is_ascii_digit())
    });
    if !grouped || !s.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    s.replace('_', "").parse::<f64>().ok().filter(|x| x.is_finite())
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{exit, exit_code};

    /// The message of a usage error (exit 2).
    fn usage_msg(e: anyhow::Error) -> String {
        assert_eq!(exit_code(&e), exit::USAGE, "{e}");
        e.to_string()
    }

    fn parse_err(cond: &str) -> String {
        usage_msg(Condition::parse(cond).unwrap_err())
    }

    #[test]
    fn bad_syntax_names_the_option_text_and_form() {
        for (cond, why) in [
            ("p99_ms 50", "no comparison operator"),
            ("p99_ms = 50", "write `==`"),
            ("p99_ms => 50", "unknown operator `=>`"),
            ("p99_ms <> 50", "unknown operator `<>`"),
            ("> 50", "the field is missing"),
            ("p99 ms > 50", "not a field name"),
            ("latency_ms..p99 > 50", "not a field name"),
            ("p99_ms >", "the number is missing"),
            ("p99_ms > fifty", "`fifty` is not a number"),
            ("p99_ms > 50ms", "`50ms` is not a number"),
            ("p99_ms > inf", "`inf` is not a number"),
            ("p99_ms > _50", "`_50` is not a number"),
            ("p99_ms > 1__0", "`1__0` is not a number"),
            ("p99_ms > 50 < 60", "`50 < 60` is not a number"),
        ] {
            let msg = parse_err(cond);
            assert!(msg.starts_with(&format!("--fail-if `{cond}`: ")), "{msg}");
            for part in [why, "FIELD OP NUMBER", OPS] {
                assert!(msg.contains(part), "`{part}` missing from: {msg}");
            }
        }
    }

    /// Issue 13, item 9: a misspelt field is refused when the options are
    /// resolved, naming it and the closest valid one; valid ones pass.
    #[test]
    fn fail_if_fields_are_checked_against_the_report_contract() {
        let check = |cond: &str, c: Contract| Condition::parse(cond).unwrap().check(c);
        for (cond, contract) in [
            ("p99_ms > 50", Contract::Ingest),
            ("latency_ms.p99_9 > 50", Contract::Ingest),
            ("rows_per_sec < 10", Contract::Ingest),
            ("setup.workers > 1", Contract::Ingest),
            ("warmup.rows > 1", Contract::Ingest),
            ("errors > 0", Contract::Query),
            ("service_time_ms.p99 > 5", Contract::Query),
            ("queries.q1.p95_ms > 20", Contract::Query),
            ("queries.a.b.count > 20", Contract::Query),
            ("http_req_duration_ms.p95 > 5", Contract::Http),
            ("mb_per_sec < 5", Contract::Transfer),
            ("ingest.rows_per_sec < 5", Contract::Mixed),
            ("exit_code != 0", Contract::Mixed),
        ] {
            check(cond, contract).unwrap_or_else(|e| panic!("{cond}: {e}"));
        }
        for (cond, contract, field, guess) in [
            ("p99 > 50", Contract::Ingest, "p99", "p99_ms"),
            ("row_per_sec < 5", Contract::Ingest, "row_per_sec", "rows_per_sec"),
            ("queries.q1.p95 > 20", Contract::Query, "p95", "p95_ms"),
            ("http_req_duraton_ms.p95 > 5", Contract::Http, "http_req_duraton_ms.p95", "http_req_duration_ms.p95"),
            ("rows_per_sec < 5", Contract::Mixed, "rows_per_sec", "ingest.rows_per_sec"),
        ] {
            let msg = usage_msg(check(cond, contract).unwrap_err());
            assert!(msg.starts_with(&format!("--fail-if `{cond}`: ")), "{msg}");
            assert!(msg.contains(&format!("no numeric field `{field}` (did you mean `{guess}")), "{msg}");
            assert!(msg.contains(contract.schema_file()), "{msg}");
        }
        // Nothing close enough to be meant (the one "did you mean" rule,
        // `hint::suggest`): no guess, the schema file to look in.
        let msg = usage_msg(check("qps < 5", Contract::Ingest).unwrap_err());
        assert!(msg.contains("no numeric field `qps`; see schema/report.schema.json"), "{msg}");
    }
}
