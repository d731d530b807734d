//! `--fail-if`, evaluated: each condition that `config::fail_if` parsed
//! and checked against the command's report contract is looked up in the
//! finished report, in its JSON form, by the names users see in
//! `--output json`.

use anyhow::Result;
use serde_json::Value as Json;

use crate::config::fail_if::Condition;

/// Evaluates `condition` against a report as JSON. Field lookup: a dotted
/// path into the JSON (`latency_ms.p99`); shorthands `pNN_ms` / `mean_ms` /
/// `max_ms` → `latency_ms.pNN` etc. (`p99_9_ms` → `latency_ms.p99_9`);
/// `queries.NAME.FIELD` looks up the element of the `queries` array whose
/// `name` is NAME (FIELD may itself be a shorthand). A field that does not
/// exist (or is null, or not a number) is a usage error listing the
/// numeric fields available there.
pub fn holds(condition: &Condition, report: &Json) -> Result<bool> {
    let value = value(condition.field(), report).map_err(|why| condition.error(why))?;
    Ok(condition.holds_for(value))
}

/// The number a condition's `field` names in a report as JSON (see
/// [`holds`] for the lookup); if there is none, why, with the numeric
/// fields that are there.
pub fn value(field: &str, report: &Json) -> Result<f64, String> {
    let (scope, field, within) = match field.strip_prefix("queries.") {
        Some(rest) => {
            let (query, field) = find_query(report, rest)?;
            (query, field, Some(query_name(query)))
        }
        None => (report, field, None),
    };
    lookup(scope, field).map_err(|why| {
        let place = within.map(|n| format!(" in query `{n}`")).unwrap_or_default();
        format!("{why}{place}; {}", available(scope))
    })
}

/// How many samples the percentile a condition's `field` names rests on
/// (the `count` of its histogram: `latency_ms.count` for `p99_ms`), or
/// `None` when the field is not a percentile (`p50`, `p99_9_ms`, ...) or
/// the report has no count for it. A p99 of 11 samples is their maximum,
/// not a percentile: a judge of one must know how many it has.
pub fn samples_behind(field: &str, report: &Json) -> Option<f64> {
    let (parent, last) = field.rsplit_once('.').map_or(("", field), |(p, l)| (p, l));
    let stem = last.strip_suffix("_ms").unwrap_or(last);
    let percentile = stem.strip_prefix('p').is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    if !percentile {
        return None;
    }
    let prefix = if parent.is_empty() { String::new() } else { format!("{parent}.") };
    // The shorthand's histogram (`p99_ms`: `latency_ms`), else the field's own parent's.
    let shorthand = (stem != last).then(|| format!("{prefix}latency_ms.count"));
    shorthand.into_iter().chain([format!("{prefix}count")]).find_map(|count| value(&count, report).ok())
}

/// The element of `queries` whose name starts `rest` (followed by a dot),
/// and the field after it. Names may contain dots, so the longest matching
/// name wins: with `a` and `a.b`, `queries.a.b.p99_ms` is `a.b`'s p99.
fn find_query<'a, 'r>(report: &'r Json, rest: &'a str) -> Result<(&'r Json, &'a str), String> {
    let Some(queries) = report.get("queries").and_then(Json::as_array) else {
        return Err("this report has no per-query figures (`queries`)".into());
    };
    let found = queries
        .iter()
        .filter_map(|q| {
            let name = q.get("name")?.as_str()?;
            let field = rest.strip_prefix(name)?.strip_prefix('.')?;
            Some((name.len(), q, field))
        })
        .max_by_key(|(len, _, _)| *len);
    match found {
        Some((_, q, field)) if !field.is_empty() => Ok((q, field)),
        _ => {
            let names: Vec<String> =
                queries.iter().filter_map(|q| q.get("name")?.as_str()).map(|n| format!("`{n}`")).collect();
            Err(format!(
                "`queries.{rest}` names no query and field; write queries.NAME.FIELD with NAME one of {}",
                names.join(", ")
            ))
        }
    }
}

fn query_name(q: &Json) -> &str {
    q.get("name").and_then(Json::as_str).unwrap_or("")
}

/// The number at a dotted `path` in `scope`, trying the latency shorthand
/// (`p99_ms` for `latency_ms.p99`) when the path itself is not there.
fn lookup(scope: &Json, path: &str) -> Result<f64, String> {
    let at = |p: &str| p.split('.').try_fold(scope, |v, key| v.get(key));
    let (found, spelled) = match at(path) {
        Some(v) => (Some(v), path.to_string()),
        None => match path.strip_suffix("_ms").filter(|stem| !stem.contains('.')) {
            Some(stem) => {
                let long = format!("latency_ms.{stem}");
                (at(&long), long)
            }
            None => (None, path.to_string()),
        },
    };
    match found {
        Some(Json::Number(n)) => n.as_f64().ok_or_else(|| format!("`{spelled}` is not a number")),
        Some(Json::Null) => Err(format!("`{spelled}` is empty (null) in this report: nothing was measured for it")),
        Some(_) => Err(format!("`{spelled}` is not a number")),
        None => {
            let names = numeric_names(scope);
            let guess = crate::hint::suggest(path, &names);
            Err(format!("no field `{path}`{}", guess.map(|g| format!(" (did you mean `{g}`?)")).unwrap_or_default()))
        }
    }
}

/// Every name a condition could use at the top of `scope`: its numbers, and
/// the `_ms` shorthands of its latency figures.
fn numeric_names(scope: &Json) -> Vec<String> {
    let Some(obj) = scope.as_object() else { return Vec::new() };
    let mut names = numeric_keys(obj, "");
    if let Some(lat) = obj.get("latency_ms").and_then(Json::as_object) {
        names.extend(numeric_keys(lat, "_ms"));
    }
    names
}

/// The keys of `obj` that hold numbers, sorted, each followed by `suffix`.
fn numeric_keys(obj: &serde_json::Map<String, Json>, suffix: &str) -> Vec<String> {
    let mut keys: Vec<String> =
        obj.iter().filter(|(_, v)| v.is_number()).map(|(k, _)| format!("{k}{suffix}")).collect();
    keys.sort();
    keys
}

/// What the user can write instead, for the error message.
fn available(scope: &Json) -> String {
    let names = numeric_names(scope);
    if names.is_empty() {
        "this report has no numeric fields here".into()
    } else {
        format!("numeric fields: {}", names.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::error::{exit, exit_code};

    fn report() -> Json {
        json!({
            "count": 500,
            "errors": 0,
            "qps": 1133.7,
            "rows_per_sec": 250_000.0,
            "status": "ok",
            "service_time_ms": null,
            "latency_ms": {"mean": 8.0, "p50": 7.0, "p95": 15.0, "p99": 42.5, "p99_9": 60.0, "max": 75.0},
            "queries": [
                {"name": "q1", "count": 200, "errors": 0, "latency_ms": {"mean": 3.0, "p95": 21.0, "p99": 30.0}},
                {"name": "a.b", "count": 300, "errors": 2, "latency_ms": {"p95": 9.0}},
                {"name": "a", "count": 1, "errors": 0, "latency_ms": null},
            ],
        })
    }

    fn holds(cond: &str) -> bool {
        super::holds(&Condition::parse(cond).unwrap(), &report()).unwrap()
    }

    /// The message of a usage error (exit 2).
    fn usage_msg(e: anyhow::Error) -> String {
        assert_eq!(exit_code(&e), exit::USAGE, "{e}");
        e.to_string()
    }

    fn eval_err(cond: &str) -> String {
        usage_msg(super::holds(&Condition::parse(cond).unwrap(), &report()).unwrap_err())
    }

    #[test]
    fn samples_behind_a_percentile_are_its_histograms_count() {
        let r = json!({
            "count": 7, "latency_ms": {"count": 11, "p99": 3.0, "mean": 1.0},
            "queries": [{"name": "a", "count": 5, "latency_ms": {"count": 5, "p99": 2.0}}]
        });
        assert_eq!(samples_behind("p99_ms", &r), Some(11.0));
        assert_eq!(samples_behind("p99_9_ms", &r), Some(11.0));
        assert_eq!(samples_behind("latency_ms.p99", &r), Some(11.0));
        assert_eq!(samples_behind("queries.a.p99_ms", &r), Some(5.0));
        assert_eq!(samples_behind("mean_ms", &r), None);
        assert_eq!(samples_behind("qps", &r), None);
        assert_eq!(samples_behind("p99_ms", &json!({"qps": 1})), None);
    }

    #[test]
    fn each_operator() {
        assert!(holds("p99_ms > 42") && !holds("p99_ms > 42.5"));
        assert!(holds("p99_ms >= 42.5") && !holds("p99_ms >= 43"));
        assert!(holds("p99_ms < 43") && !holds("p99_ms < 42.5"));
        assert!(holds("p99_ms <= 42.5") && !holds("p99_ms <= 42"));
        assert!(holds("errors == 0") && !holds("errors == 1"));
        assert!(holds("errors != 1") && !holds("errors != 0"));
    }

    #[test]
    fn spacing_and_number_forms() {
        assert!(holds("p99_ms>42"));
        assert!(holds("  rows_per_sec < 300_000 "));
        assert!(holds("rows_per_sec > 2.4e5"));
        assert!(holds("count > -1"));
        assert_eq!(Condition::parse("  errors >= 1 ").unwrap().text(), "errors >= 1");
    }

    #[test]
    fn latency_shorthands() {
        assert!(holds("mean_ms == 8"));
        assert!(holds("max_ms == 75"));
        assert!(holds("p50_ms == 7"));
        assert!(holds("p99_9_ms == 60"));
    }

    #[test]
    fn nested_paths() {
        assert!(holds("latency_ms.p99 == 42.5"));
        assert!(holds("latency_ms.p99_9 > 59"));
    }

    #[test]
    fn per_query_fields_by_name() {
        assert!(holds("queries.q1.p95_ms > 20"));
        assert!(holds("queries.q1.latency_ms.p99 == 30"));
        assert!(holds("queries.q1.count == 200"));
        // The longest name wins, so names may contain dots.
        assert!(holds("queries.a.b.errors == 2"));
        assert!(holds("queries.a.count == 1"));
    }

    #[test]
    fn unknown_field_lists_what_is_there() {
        let msg = eval_err("p98_ms > 50");
        assert!(msg.starts_with("--fail-if `p98_ms > 50`: no field `p98_ms`"), "{msg}");
        assert!(
            msg.contains("numeric fields: count, errors, qps, rows_per_sec, max_ms, mean_ms, p50_ms, p95_ms"),
            "{msg}"
        );
        let msg = eval_err("row_per_sec < 5");
        assert!(msg.contains("did you mean `rows_per_sec`?"), "{msg}");
    }

    #[test]
    fn null_and_non_numeric_fields() {
        let msg = eval_err("service_time_ms > 5");
        assert!(msg.contains("`service_time_ms` is empty (null)") && msg.contains("numeric fields:"), "{msg}");
        assert!(eval_err("status == 1").contains("`status` is not a number"));
        assert!(eval_err("latency_ms > 1").contains("`latency_ms` is not a number"));
        let msg = eval_err("queries.a.p99_ms > 1");
        assert!(msg.contains("no field `p99_ms` in query `a`; numeric fields: count, errors"), "{msg}");
    }

    #[test]
    fn unknown_query_lists_the_names() {
        let msg = eval_err("queries.q9.p95_ms > 1");
        assert!(msg.contains("`queries.q9.p95_ms` names no query") && msg.contains("`q1`, `a.b`, `a`"), "{msg}");
        assert!(eval_err("queries.q1 > 1").contains("names no query and field"));
        let no_queries = super::holds(&Condition::parse("queries.q1.p95_ms > 1").unwrap(), &json!({"rows": 1}));
        let msg = usage_msg(no_queries.unwrap_err());
        assert!(msg.contains("no per-query figures"), "{msg}");
    }
}
