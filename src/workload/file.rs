//! The workload file: a YAML list of weighted queries, nodeIngestBench's
//! `queries.yml` format extended with optional names and parameters.
//!
//! ```yaml
//! - name: recent
//!   query: SELECT max(m1) FROM measurement WHERE device_id = $1 AND time > $2
//!   ratio: 0.7
//!   params: [{int: [1, 80]}, {time_ago: 1h}]
//! - query: SELECT count(*) FROM measurement
//!   ratio: 0.3
//! ```
//!
//! The file is first read into a tree of YAML nodes that keep their line and
//! column, then checked here, so that every mistake (a misspelt key, ratios
//! that do not add up, a malformed generator) is reported in dbload's words
//! with `file:line:column` and what to do, rather than as a serde message.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use super::params::{ParamGen, Value};
use super::script::{Define, Script};
use crate::file_cap::{self, Cap};
use crate::hint::{did_you_mean, suggest};
use crate::yaml::{self, fail, key_list, show, Node, Yaml};
use anyhow::Result;

/// One query of a workload, as read from the file.
#[derive(Debug, Clone, PartialEq)]
pub struct QuerySpec {
    pub name: String,
    pub query: String,
    pub ratio: f64,
    pub params: Vec<ParamGen>,
    /// 1-based line where this entry starts
    pub line: usize,
    /// A pgbench script run as one operation (`query` is then its
    /// statements, for the report).
    pub script: Option<Arc<Script>>,
    /// pgbench's `@weight` of a `-f` or `--builtin` script, of which `ratio`
    /// is the share; none in a workload file, whose ratios are fractions.
    pub weight: Option<u64>,
}

impl QuerySpec {
    /// A pgbench script as a query of the mix: `ratio` is its share (pgbench's `@weight`).
    pub fn of_script(name: String, script: Script, ratio: f64) -> QuerySpec {
        let query = script.statements.iter().map(|s| s.text.as_str()).collect::<Vec<_>>().join("; ");
        QuerySpec { name, query, ratio, params: Vec::new(), line: 0, script: Some(Arc::new(script)), weight: None }
    }
}

/// Ratios are fractions typed by people: 0.7 + 0.2 + 0.1 is 0.9999999999999999
/// in binary floating point, and must count as 1 (nodeIngestBench compares
/// exactly and rejects it).
const RATIO_TOLERANCE: f64 = 1e-6;

const KEYS: [&str; 5] = ["name", "query", "ratio", "params", "script"];

/// What users of other tools write for our keys (pgbench weighs scripts with
/// `@weight`; others call the query a statement).
const KEY_SYNONYMS: [(&str, &str); 5] =
    [("weight", "ratio"), ("share", "ratio"), ("sql", "query"), ("stmt", "query"), ("statement", "query")];

const GENERATORS: [&str; 4] = ["int", "float", "choice", "time_ago"];

const PARAM_FORMS: &str =
    "a constant (42, 3.5, abc, true), {int: [lo, hi]}, {float: [lo, hi]}, {choice: [a, b, c]} or {time_ago: 1h}";

/// Reads a workload file (YAML list of {query, ratio, name?, params?}); nodeIngestBench's queries.yml is valid input.
pub fn load(path: &Path) -> Result<Vec<QuerySpec>> {
    let origin = path.display().to_string();
    let text = file_cap::read_text(path, &origin, Cap::config("the workload file"))?;
    queries(&yaml::read(&text, &origin)?, &origin, path.parent().unwrap_or(Path::new(".")))
}

/// Same from text; `origin` names the file in errors, `script:` paths are
/// relative to the current directory.
pub fn parse(text: &str, origin: &str) -> Result<Vec<QuerySpec>> {
    queries(&yaml::read(text, origin)?, origin, Path::new("."))
}

/// Reads and parses a pgbench script file, `defines` set before its first
/// line; errors name it with line and column.
pub fn load_script(path: &Path, defines: &[Define]) -> Result<Script> {
    let origin = path.display().to_string();
    let text = file_cap::read_text(path, &origin, Cap::config("the script"))?;
    Script::parse_defined(&text, &origin, defines)
}

/// The queries of a list node (a workload file, or a list inside another
/// file); `dir` is where its `script:` paths are relative to.
pub(crate) fn queries(root: &Node, origin: &str, dir: &Path) -> Result<Vec<QuerySpec>> {
    let items = match &root.value {
        Yaml::Seq(items) if items.is_empty() => {
            return Err(fail(origin, &root.referenced, "the list of queries is empty; add at least one `- query: ...`"))
        }
        Yaml::Seq(items) => items,
        Yaml::Null => {
            return Err(fail(
                origin,
                &root.referenced,
                "the workload file is empty; it should be a list of queries, e.g. `- {query: SELECT 1, ratio: 1}`",
            ))
        }
        other => {
            let hint = match other {
                Yaml::Map(pairs) if pairs.iter().any(|(k, _)| k.value.as_str() == Some("query")) => {
                    "; start each query with `- ` to make a list"
                }
                _ => "",
            };
            return Err(fail(
                origin,
                &root.referenced,
                format!("a workload file is a list of queries (`- query: ...`), found {other}{hint}"),
            ));
        }
    };

    let several = items.len() > 1;
    let mut specs: Vec<QuerySpec> = Vec::with_capacity(items.len());
    // Whether each entry's name was written, or is its default `qN`.
    let mut named: Vec<bool> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let (spec, has_name) = entry(origin, dir, i + 1, item, several)?;
        if let Some(j) = specs.iter().position(|s| s.name == spec.name) {
            let default = |has_name: bool| if has_name { "" } else { " (its default name)" };
            return Err(fail(
                origin,
                &item.referenced,
                format!(
                    "query {} is named `{}`{}, like query {} at line {}{}; names must be unique: \
                     set a different `name`",
                    i + 1,
                    spec.name,
                    default(has_name),
                    j + 1,
                    specs[j].line,
                    default(named[j]),
                ),
            ));
        }
        specs.push(spec);
        named.push(has_name);
    }

    let sum: f64 = specs.iter().map(|s| s.ratio).sum();
    if (sum - 1.0).abs() > RATIO_TOLERANCE {
        let each: Vec<String> =
            specs.iter().map(|s| format!("{} {} (line {})", s.name, show(s.ratio), s.line)).collect();
        return Err(fail(
            origin,
            &root.referenced,
            format!(
                "the ratios add up to {}, not 1: {}; each ratio is the share of the queries that run that entry, \
                 so change them to add up to 1 (e.g. divide each by {})",
                show(sum),
                each.join(", "),
                show(sum),
            ),
        ));
    }
    Ok(specs)
}

/// Checks one list item; `n` is its 1-based position. Also says whether the
/// entry has a `name` of its own.
fn entry(origin: &str, dir: &Path, n: usize, item: &Node, several: bool) -> Result<(QuerySpec, bool)> {
    let Yaml::Map(pairs) = &item.value else {
        let hint = if matches!(item.value, Yaml::Str(_)) { "; write `- query: SELECT ...`" } else { "" };
        return Err(fail(
            origin,
            &item.referenced,
            format!("query {n} is {}, expected a mapping with `query` and `ratio`{hint}", item.value),
        ));
    };
    let field = |key: &str| pairs.iter().find(|(k, _)| k.value.as_str() == Some(key)).map(|(_, v)| v);
    let name = match field("name") {
        None => format!("q{n}"),
        Some(v) => match &v.value {
            Yaml::Str(s) if !s.trim().is_empty() && !s.contains(['\n', '\r']) => s.trim().to_string(),
            Yaml::Int(i) => i.to_string(),
            other => {
                return Err(fail(
                    origin,
                    &v.referenced,
                    format!("the name of query {n} must be one line of text, found {other}"),
                ))
            }
        },
    };
    let label = if field("name").is_some() { format!("query {n} (`{name}`)") } else { format!("query {n}") };

    for (k, _) in pairs {
        let key = match &k.value {
            Yaml::Str(s) => s.as_str(),
            other => {
                return Err(fail(
                    origin,
                    &k.referenced,
                    format!("unknown key {other} in {label} (keys: {})", KEYS.join(", ")),
                ))
            }
        };
        if !KEYS.contains(&key) {
            let synonym = KEY_SYNONYMS.iter().find(|(alias, _)| key.eq_ignore_ascii_case(alias)).map(|(_, k)| *k);
            return Err(fail(
                origin,
                &k.referenced,
                format!(
                    "unknown key `{key}` in {label}{} (keys: {})",
                    did_you_mean(synonym.or_else(|| suggest(key, &KEYS))),
                    KEYS.join(", ")
                ),
            ));
        }
    }

    let script = match (field("script"), field("query").or(field("params"))) {
        (Some(v), None) => match v.value.as_str() {
            Some(path) if !path.trim().is_empty() => Some(load_script(&dir.join(path.trim()), &[])?),
            _ => {
                return Err(fail(
                    origin,
                    &v.referenced,
                    format!("the script of {label} is a file path, found {}", v.value),
                ))
            }
        },
        (Some(v), Some(_)) => {
            return Err(fail(
                origin,
                &v.referenced,
                format!("{label} has a `script` and a `query` or `params`: a script sets its own values; keep one"),
            ))
        }
        (None, _) => None,
    };
    let query = match field("query") {
        None if script.is_some() => String::new(),
        None => {
            return Err(fail(
                origin,
                &item.referenced,
                format!("{label} has no `query` (its keys: {}); add `query: SELECT ...`", key_list(pairs)),
            ));
        }
        Some(v) => match &v.value {
            Yaml::Str(s) if !s.trim().is_empty() => s.trim().to_string(),
            Yaml::Str(_) | Yaml::Null => {
                return Err(fail(origin, &v.referenced, format!("the query of {label} is empty; write the SQL to run")))
            }
            other => {
                return Err(fail(
                    origin,
                    &v.referenced,
                    format!("the query of {label} must be SQL text, found {other}; quote it if it is meant as SQL"),
                ))
            }
        },
    };

    let ratio = match field("ratio") {
        None if several => {
            return Err(fail(
                origin,
                &item.referenced,
                format!("{label} has no `ratio`; with several queries each needs one, and they add up to 1"),
            ))
        }
        None => 1.0,
        Some(v) => match v.value.as_f64() {
            Some(r) if r > 0.0 => r,
            Some(r) => {
                return Err(fail(
                    origin,
                    &v.referenced,
                    format!(
                        "the ratio of {label} is {}; a ratio is the share of the queries that run it, above 0 \
                         (remove the entry to leave it out)",
                        show(r)
                    ),
                ))
            }
            None => {
                return Err(fail(
                    origin,
                    &v.referenced,
                    format!("the ratio of {label} must be a number above 0 such as 0.25, found {}", v.value),
                ))
            }
        },
    };

    let params = match field("params") {
        None => Vec::new(),
        Some(v) => match &v.value {
            // `params:` left empty, e.g. after commenting its items out.
            Yaml::Null => Vec::new(),
            Yaml::Seq(items) => items
                .iter()
                .zip(1..)
                .map(|(p, k)| {
                    param(p).map_err(|why| fail(origin, &p.referenced, format!("param {k} (${k}) of {label}: {why}")))
                })
                .collect::<Result<_>>()?,
            other => {
                let msg = format!(
                    "the params of {label} must be a list, one item per $1, $2 ..., found {other}; \
                     e.g. `params: [{{int: [1, 80]}}]`"
                );
                return Err(fail(origin, &v.referenced, msg));
            }
        },
    };

    let line = item.referenced.line() as usize;
    let spec = match script {
        Some(script) => QuerySpec { line, ..QuerySpec::of_script(name, script, ratio) },
        None => QuerySpec { name, query, ratio, params, line, script: None, weight: None },
    };
    Ok((spec, field("name").is_some()))
}

/// One item of `params`; the error says what is wrong, the caller says where.
fn param(node: &Node) -> Result<ParamGen, String> {
    if let Some(v) = constant(&node.value) {
        return Ok(ParamGen::Const(v));
    }
    let shape = |found: &dyn fmt::Display| format!("found {found}; accepted: {PARAM_FORMS}");
    let Yaml::Map(pairs) = &node.value else {
        let hint = match &node.value {
            Yaml::Seq(_) => " (for a range write {int: [lo, hi]})",
            _ => "",
        };
        return Err(format!("{}{hint}", shape(&node.value)));
    };
    let [(key, arg)] = pairs.as_slice() else {
        return Err(shape(&format_args!("{}, while a generator has exactly one key", node.value)));
    };
    let Some(kind) = key.value.as_str().filter(|k| GENERATORS.contains(k)) else {
        let word = key.value.to_string();
        let guess = key.value.as_str().and_then(|k| suggest(k, &GENERATORS));
        return Err(format!("unknown generator {word}{}; accepted: {PARAM_FORMS}", did_you_mean(guess)));
    };
    match kind {
        "int" => match pair(arg) {
            Some((Yaml::Int(lo), Yaml::Int(hi))) if lo <= hi => Ok(ParamGen::IntRange { lo: *lo, hi: *hi }),
            Some((Yaml::Int(lo), Yaml::Int(hi))) => {
                Err(format!("{{int: [{lo}, {hi}]}} has lo above hi; write [{hi}, {lo}]"))
            }
            _ => Err(format!("int takes two whole numbers [lo, hi] (both included), found {}", arg.value)),
        },
        "float" => match pair(arg).map(|(a, b)| (a.as_f64(), b.as_f64())) {
            Some((Some(lo), Some(hi))) if lo < hi => Ok(ParamGen::FloatRange { lo, hi }),
            Some((Some(lo), Some(hi))) => {
                Err(format!("{{float: [{}, {}]}} is an empty range; lo must be below hi", show(lo), show(hi)))
            }
            _ => Err(format!("float takes two numbers [lo, hi) (hi excluded), found {}", arg.value)),
        },
        "choice" => match &arg.value {
            Yaml::Seq(items) if !items.is_empty() => items
                .iter()
                .map(|v| {
                    constant(&v.value)
                        .ok_or_else(|| format!("choice takes constants (42, 3.5, abc, true), found {}", v.value))
                })
                .collect::<Result<_, _>>()
                .map(ParamGen::Choice),
            _ => Err(format!(
                "choice takes a non-empty list of constants, e.g. {{choice: [eu, us]}}, found {}",
                arg.value
            )),
        },
        // time_ago
        _ => match &arg.value {
            Yaml::Str(s) => {
                let d = humantime::parse_duration(s)
                    .map_err(|e| format!("time_ago `{s}` is not a duration ({e}); e.g. 90s, 15m, 1h, 7days"))?;
                let max_us = i64::try_from(d.as_micros()).map_err(|_| format!("time_ago `{s}` is too long"))?;
                Ok(ParamGen::TimeAgo { max_us })
            }
            other => Err(format!("time_ago takes a duration with its unit, e.g. 1h or 30m, found {other}")),
        },
    }
}

/// A scalar as a parameter value; `None` for null and collections.
fn constant(y: &Yaml) -> Option<Value> {
    Some(match y {
        Yaml::Bool(b) => Value::Bool(*b),
        Yaml::Int(i) => Value::Int(*i),
        Yaml::Float(f) => Value::Float(*f),
        Yaml::Str(s) => Value::Text(s.clone()),
        Yaml::Null | Yaml::Seq(_) | Yaml::Map(_) => return None,
    })
}

/// The two items of a `[lo, hi]` list.
fn pair(node: &Node) -> Option<(&Yaml, &Yaml)> {
    match &node.value {
        Yaml::Seq(items) => match items.as_slice() {
            [a, b] => Some((&a.value, &b.value)),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{exit, exit_code};

    const FILE: &str = "queries.yml";

    /// The error message, after checking it is a usage error (exit 2).
    fn err(text: &str) -> String {
        let e = parse(text, FILE).unwrap_err();
        assert_eq!(exit_code(&e), exit::USAGE, "{e}");
        e.to_string()
    }

    fn has_all(msg: &str, parts: &[&str]) {
        for p in parts {
            assert!(msg.contains(p), "`{p}` missing from: {msg}");
        }
    }

    /// Issue 29, item 6: a line echoed in a message (a key, a value found)
    /// showed a URL's password.
    #[test]
    fn a_line_echoed_hides_its_secrets() {
        for text in ["postgres://u:S3cr3tPW@h/db\n", "- query: a\n  postgres://u:S3cr3tPW@h/db: 1\n"] {
            let e = err(text);
            assert!(!e.contains("S3cr3tPW") && e.contains("postgres://u:***@h/db"), "{e}");
        }
    }

    /// nodeIngestBench's README, first example, indentation and all.
    const SEED_SINGLE: &str = "---
  - query: |
      SELECT 1
      ORDER BY 1
    ratio: 1
";

    /// nodeIngestBench's README, second example, with its typo `ration`.
    const SEED_TWO: &str = "---
  - query: |
      SELECT 1
      ORDER BY 1
    ratio: 0.4
  - query: |
      SELECT 2
      ORDER BY 1
    ration: 0.6
";

    #[test]
    fn reads_the_seed_single_query() {
        let specs = parse(SEED_SINGLE, FILE).unwrap();
        assert_eq!(
            specs,
            [QuerySpec {
                name: "q1".into(),
                query: "SELECT 1\nORDER BY 1".into(),
                ratio: 1.0,
                params: vec![],
                line: 2,
                script: None,
                weight: None,
            }]
        );
    }

    #[test]
    fn seed_typo_ration_is_caught_with_a_suggestion() {
        let msg = err(SEED_TWO);
        assert!(msg.starts_with("queries.yml:9:5: unknown key `ration` in query 2; did you mean `ratio`?"), "{msg}");
        has_all(&msg, &["keys: name, query, ratio, params"]);
    }

    #[test]
    fn reads_the_corrected_seed_pair() {
        let specs = parse(&SEED_TWO.replace("ration", "ratio"), FILE).unwrap();
        let got: Vec<_> = specs.iter().map(|s| (s.name.as_str(), s.query.as_str(), s.ratio, s.line)).collect();
        assert_eq!(got, [("q1", "SELECT 1\nORDER BY 1", 0.4, 2), ("q2", "SELECT 2\nORDER BY 1", 0.6, 6)]);
    }

    #[test]
    fn names_params_of_every_form() {
        let text = "\
- name: recent
  query: SELECT * FROM m WHERE device_id = $1 AND v > $2 AND region = $3 AND time > $4 AND x = $5
  ratio: 0.75
  params:
    - {int: [1, 80]}
    - {float: [0, 100.5]}
    - {choice: [eu, us, 3, true]}
    - {time_ago: 1h 30m}
    - 42
- query: SELECT $1, $2, $3, $4, $5, $6
  ratio: 0.25
  params: [3.5, abc, true, '42', yes, 2024-05-01]
";
        let specs = parse(text, FILE).unwrap();
        assert_eq!(specs[0].name, "recent");
        assert_eq!(specs[1].name, "q2");
        assert_eq!((specs[0].line, specs[1].line), (1, 10));
        assert_eq!(
            specs[0].params,
            [
                ParamGen::IntRange { lo: 1, hi: 80 },
                ParamGen::FloatRange { lo: 0.0, hi: 100.5 },
                ParamGen::Choice(vec![
                    Value::Text("eu".into()),
                    Value::Text("us".into()),
                    Value::Int(3),
                    Value::Bool(true)
                ]),
                ParamGen::TimeAgo { max_us: 5_400_000_000 },
                ParamGen::Const(Value::Int(42)),
            ]
        );
        let texts = |s: &str| ParamGen::Const(Value::Text(s.into()));
        assert_eq!(
            specs[1].params,
            [
                ParamGen::Const(Value::Float(3.5)),
                texts("abc"),
                ParamGen::Const(Value::Bool(true)),
                texts("42"),
                texts("yes"),
                texts("2024-05-01"),
            ]
        );
    }

    #[test]
    fn a_single_query_needs_no_ratio_and_empty_params_are_none() {
        let specs = parse("- query: SELECT 1\n  params:\n", FILE).unwrap();
        assert_eq!((specs[0].ratio, specs[0].params.len()), (1.0, 0));
    }

    #[test]
    fn ratios_within_tolerance_add_up_to_one() {
        let text = "- {query: a, ratio: 0.7}\n- {query: b, ratio: 0.2}\n- {query: c, ratio: 0.1}\n";
        assert_eq!(parse(text, FILE).unwrap().len(), 3);
    }

    #[test]
    fn ratios_that_do_not_add_up_are_listed() {
        let msg = err("- {query: a, ratio: 0.5}\n- name: big\n  query: b\n  ratio: 0.4\n");
        has_all(
            &msg,
            &["queries.yml:1:1:", "add up to 0.9, not 1", "q1 0.5 (line 1)", "big 0.4 (line 2)", "divide each by 0.9"],
        );
        let msg = err("- {query: a, ratio: 0.5}\n");
        has_all(&msg, &["queries.yml:1:1:", "add up to 0.5, not 1"]);
    }

    #[test]
    fn not_a_list() {
        let msg = err("query: SELECT 1\nratio: 1\n");
        has_all(
            &msg,
            &[
                "queries.yml:1:1:",
                "is a list of queries",
                "a mapping (keys: query, ratio)",
                "start each query with `- `",
            ],
        );
        has_all(&err("SELECT 1\n"), &["queries.yml:1:1:", "found `SELECT 1`"]);
    }

    #[test]
    fn empty_file_and_empty_list() {
        has_all(&err(""), &["queries.yml:1:1:", "is empty"]);
        has_all(&err("# nothing yet\n---\n"), &["queries.yml:", "is empty"]);
        has_all(&err("---\n[]\n"), &["queries.yml:2:1:", "list of queries is empty"]);
    }

    #[test]
    fn entry_that_is_not_a_mapping() {
        let msg = err("- {query: a, ratio: 0.5}\n- SELECT 2\n");
        has_all(&msg, &["queries.yml:2:3:", "query 2 is `SELECT 2`", "write `- query: SELECT ...`"]);
    }

    #[test]
    fn missing_query() {
        let msg = err("- query: a\n  ratio: 0.5\n- ratio: 0.5\n  name: b\n");
        has_all(&msg, &["queries.yml:3:3:", "query 2 (`b`) has no `query` (its keys: ratio, name)"]);
    }

    #[test]
    fn empty_query() {
        has_all(&err("- query: '  '\n"), &["queries.yml:1:10:", "query of query 1 is empty"]);
        has_all(&err("- query:\n  ratio: 1\n"), &["queries.yml:1:", "query of query 1 is empty"]);
        has_all(&err("- query: [a]\n"), &["queries.yml:1:10:", "must be SQL text, found a list"]);
    }

    #[test]
    fn missing_ratio_among_several() {
        let msg = err("- {query: a, ratio: 0.5}\n- query: b\n");
        has_all(&msg, &["queries.yml:2:3:", "query 2 has no `ratio`", "add up to 1"]);
    }

    #[test]
    fn negative_zero_and_non_numeric_ratios() {
        has_all(&err("- query: a\n  ratio: -0.5\n"), &["queries.yml:2:10:", "ratio of query 1 is -0.5", "above 0"]);
        has_all(&err("- query: a\n  ratio: 0\n"), &["queries.yml:2:10:", "ratio of query 1 is 0"]);
        has_all(&err("- query: a\n  ratio: 40%\n"), &["queries.yml:2:10:", "must be a number", "found `40%`"]);
        has_all(&err("- query: a\n  ratio: '0.5'\n"), &["queries.yml:2:10:", "found `0.5`"]);
    }

    #[test]
    fn duplicate_names_including_default_ones() {
        let msg = err("- {name: top, query: a, ratio: 0.5}\n- {name: top, query: b, ratio: 0.5}\n");
        has_all(
            &msg,
            &["queries.yml:2:3:", "query 2 is named `top`, like query 1 at line 1", "set a different `name`"],
        );
        let msg = err("- {query: a, ratio: 0.5}\n- {name: q1, query: b, ratio: 0.5}\n");
        has_all(&msg, &["queries.yml:2:3:", "named `q1`, like query 1 at line 1 (its default name)"]);
        let msg = err("- {name: q1, query: a, ratio: 0.5}\n- {name: q1, query: b, ratio: 0.5}\n");
        assert!(!msg.contains("default"), "{msg}");
    }

    #[test]
    fn unknown_keys() {
        let msg = err("- query: a\n  weight: 1\n");
        has_all(&msg, &["queries.yml:2:3:", "unknown key `weight` in query 1; did you mean `ratio`?"]);
        let msg = err("- name: top\n  querry: a\n");
        has_all(&msg, &["queries.yml:2:3:", "unknown key `querry` in query 1 (`top`); did you mean `query`?"]);
        let msg = err("- query: a\n  colour: red\n");
        has_all(
            &msg,
            &["queries.yml:2:3:", "unknown key `colour` in query 1 (keys: name, query, ratio, params, script)"],
        );
        assert!(!msg.contains("did you mean"), "{msg}");
    }

    #[test]
    fn bad_names() {
        has_all(&err("- {name: '', query: a}\n"), &["queries.yml:1:10:", "name of query 1 must be one line of text"]);
        has_all(&err("- {name: [a], query: a}\n"), &["queries.yml:1:10:", "found a list"]);
    }

    #[test]
    fn bad_params() {
        let at = |params: &str| err(&format!("- name: top\n  query: a\n  params: {params}\n"));
        has_all(
            &at("{int: [1, 2]}"),
            &["queries.yml:3:11:", "params of query 1 (`top`) must be a list", "found a mapping"],
        );
        has_all(
            &at("[~]"),
            &["queries.yml:3:12:", "param 1 ($1) of query 1 (`top`)", "found nothing (null)", PARAM_FORMS],
        );
        has_all(&at("[1, [1, 80]]"), &["queries.yml:3:15:", "param 2 ($2)", "found a list", "{int: [lo, hi]})"]);
        has_all(
            &at("[{ints: [1, 2]}]"),
            &["queries.yml:3:12:", "param 1", "unknown generator `ints`; did you mean `int`?", PARAM_FORMS],
        );
        has_all(&at("[{int: [1, 2], float: [1, 2]}]"), &["param 1", "a mapping (keys: int, float)", "exactly one key"]);
        has_all(&at("[{int: [5, 1]}]"), &["queries.yml:3:12:", "lo above hi; write [1, 5]"]);
        has_all(&at("[{int: [1.5, 3]}]"), &["int takes two whole numbers", "found a list"]);
        has_all(&at("[{int: 80}]"), &["int takes two whole numbers", "found `80`"]);
        has_all(&at("[{float: [2, 2]}]"), &["{float: [2, 2]} is an empty range"]);
        has_all(&at("[{float: [a, 2]}]"), &["float takes two numbers"]);
        has_all(&at("[{float: [-.inf, 2]}]"), &["queries.yml:3:", "not a finite number"]);
        has_all(&at("[{choice: []}]"), &["choice takes a non-empty list"]);
        has_all(&at("[{choice: [a, [b]]}]"), &["choice takes constants", "found a list"]);
        has_all(&at("[{time_ago: 3600}]"), &["time_ago takes a duration with its unit", "found `3600`"]);
        has_all(&at("[{time_ago: soon}]"), &["time_ago `soon` is not a duration"]);
        has_all(&at("[{time: 1h}]"), &["unknown generator `time`; did you mean `time_ago`?"]);
    }

    #[test]
    fn invalid_yaml_reports_the_parser_position() {
        let msg = err("- query: a\n  ratio: [1\n- query: b\n");
        has_all(&msg, &["queries.yml:3:", "invalid YAML"]);
        let msg = err("- query: \"a\n");
        has_all(&msg, &["queries.yml:1:10:", "invalid YAML", "quote"]);
        let msg = err("- query: a\n  query: b\n");
        has_all(&msg, &["queries.yml:2:3:", "invalid YAML", "duplicate", "query"]);
    }

    #[test]
    fn load_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mix.yml");
        let e = load(&path).unwrap_err();
        assert_eq!(exit_code(&e), exit::USAGE);
        has_all(&e.to_string(), &["mix.yml: cannot read the workload file"]);
        std::fs::write(&path, SEED_TWO).unwrap();
        has_all(&load(&path).unwrap_err().to_string(), &["mix.yml:9:5: unknown key `ration`"]);
        std::fs::write(&path, SEED_SINGLE).unwrap();
        assert_eq!(load(&path).unwrap().len(), 1);
    }

    #[test]
    fn script_entries_are_read_relative_to_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("move.sql"),
            "\\set aid random(1, 10)\nUPDATE t SET a = a + 1 WHERE id = :aid;\n",
        )
        .unwrap();
        let path = dir.path().join("mix.yml");
        std::fs::write(&path, "- script: move.sql\n  ratio: 0.25\n- query: SELECT 1\n  ratio: 0.75\n").unwrap();
        let specs = load(&path).unwrap();
        let script = specs[0].script.as_ref().expect("a script entry");
        assert_eq!((specs[0].name.as_str(), specs[0].ratio, specs[0].line), ("q1", 0.25, 1));
        assert_eq!(script.statements[0].sql, "UPDATE t SET a = a + 1 WHERE id = $1");
        assert_eq!(specs[0].query, "UPDATE t SET a = a + 1 WHERE id = :aid");
        assert!(specs[1].script.is_none());

        std::fs::write(&path, "- script: move.sql\n  query: SELECT 1\n").unwrap();
        has_all(&load(&path).unwrap_err().to_string(), &["mix.yml:1:11:", "a `script` and a `query`"]);
        std::fs::write(&path, "- script: missing.sql\n").unwrap();
        has_all(&load(&path).unwrap_err().to_string(), &["missing.sql: cannot read the script"]);
    }
}
