//! `--mapping FILE`: per column, the generator `insert-fake-data` uses
//! instead of the one chosen by type and name. A YAML mapping of column
//! names to a generator name or a one-key mapping with its arguments:
//!
//! ```yaml
//! age: {int: [18, 99]}
//! plan: {choice: [free, pro, team], null_ratio: 0.1}
//! code: {pattern: "user-####"}
//! email: email
//! note: null          # always NULL
//! id: default         # left to the column's default (serial, identity)
//! ```
//!
//! Every mistake is reported as `file:line:column` (see `crate::yaml`);
//! column names are checked against the table once its columns are known.

use anyhow::Result;
use serde_saphyr::Location;

use super::fake::Fake;
use crate::hint::{did_you_mean, suggest};
use crate::yaml::{self, fail, Node, Yaml};

/// Generators that take no arguments, by the name a mapping gives them.
const NAMED: &[&str] = &[
    "null",
    "default",
    "bool",
    "uuid",
    "email",
    "first_name",
    "last_name",
    "name",
    "country",
    "city",
    "url",
    "phone",
    "ip",
    "date",
    "time",
    "timestamp",
    "timestamptz",
    "recent",
    "interval",
    "json",
    "words",
    "geo_point",
    "geo_shape",
];
/// Generators that take arguments.
const WITH_ARGS: &[&str] = &["int", "float", "choice", "pattern", "const", "sequence"];

/// A mapping file, read and checked except for its column names.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapping {
    /// The file, for messages.
    pub origin: String,
    pub entries: Vec<Entry>,
}

/// One column's generator.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub column: String,
    pub at: Location,
    /// `None`: leave the column to its default (`default`).
    pub fake: Option<Fake>,
    pub null_ratio: f64,
}

impl Mapping {
    /// Parses a mapping's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Mapping> {
        let root = yaml::read(text, origin)?;
        let pairs = match root.value {
            Yaml::Map(pairs) => pairs,
            Yaml::Null => Vec::new(),
            other => {
                return Err(fail(
                    origin,
                    &root.referenced,
                    format!(
                    "expected a mapping of column names to generators (e.g. `age: {{int: [18, 99]}}`), found {other}"
                ),
                ))
            }
        };
        let mut entries: Vec<Entry> = Vec::new();
        for (k, v) in pairs {
            let Some(column) = k.value.as_str() else {
                return Err(fail(origin, &k.referenced, format!("a column name must be text, found {}", k.value)));
            };
            if entries.iter().any(|e| e.column == column) {
                return Err(fail(origin, &k.referenced, format!("column \"{column}\" is mapped twice")));
            }
            let (fake, null_ratio) = generator(&v, origin)?;
            entries.push(Entry { column: column.to_string(), at: k.referenced, fake, null_ratio });
        }
        Ok(Mapping { origin: origin.to_string(), entries })
    }

    pub fn get(&self, column: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.column == column)
    }

    /// An error about `entry`, at its place in the file.
    pub fn fail(&self, entry: &Entry, msg: impl std::fmt::Display) -> anyhow::Error {
        fail(&self.origin, &entry.at, msg)
    }

    /// Refuses a `{sequence: start}` that would pass the largest integer
    /// before the run's last row (`last_row`: the highest global row number;
    /// `rows`: the flag that asks for the rows, for the message). Past it the
    /// values would repeat, or wrap, rather than stay distinct.
    pub fn check_sequences(&self, last_row: u64, rows: &str) -> Result<()> {
        for e in &self.entries {
            if let Some(Fake::Sequence { start }) = e.fake {
                let fits = i64::try_from(last_row).ok().and_then(|r| start.checked_add(r)).is_some();
                if !fits {
                    return Err(self.fail(
                        e,
                        format!(
                            "column \"{}\": {{sequence: {start}}} passes {} before the last of {rows} rows; give a \
                             smaller start or fewer rows",
                            e.column,
                            i64::MAX
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Refuses a mapped column the table does not have (case-sensitive,
    /// as the columns are quoted), suggesting the closest.
    pub fn check_columns(&self, names: &[&str], table: &str) -> Result<()> {
        for e in &self.entries {
            if !names.contains(&e.column.as_str()) {
                let guess = suggest(&e.column, names);
                return Err(
                    self.fail(e, format!("table {table} has no column \"{}\"{}", e.column, did_you_mean(guess)))
                );
            }
        }
        Ok(())
    }
}

/// A generator: a name, null, or `{name: args, null_ratio: x}`.
fn generator(v: &Node, origin: &str) -> Result<(Option<Fake>, f64)> {
    match &v.value {
        Yaml::Null => Ok((Some(Fake::Null), 0.0)),
        Yaml::Str(name) => Ok((named(name, v, origin)?, 0.0)),
        Yaml::Map(pairs) => {
            let mut null_ratio = 0.0;
            let mut fake = None;
            for (k, arg) in pairs {
                let key = k.value.as_str().unwrap_or_default();
                if key == "null_ratio" {
                    null_ratio = match arg.value.as_f64() {
                        Some(r) if (0.0..=1.0).contains(&r) => r,
                        _ => {
                            return Err(fail(
                                origin,
                                &arg.referenced,
                                format!("null_ratio must be a number from 0 to 1, found {}", arg.value),
                            ))
                        }
                    };
                    continue;
                }
                if fake.is_some() {
                    return Err(fail(origin, &k.referenced, "one generator per column: this mapping names two"));
                }
                fake = Some(with_args(key, k, arg, origin)?);
            }
            match fake {
                Some(f) => Ok((f, null_ratio)),
                None => Err(fail(origin, &v.referenced, "no generator: add one, e.g. `{int: [1, 100]}`")),
            }
        }
        other => Err(fail(
            origin,
            &v.referenced,
            format!("expected a generator name (e.g. email) or `{{int: [1, 100]}}`, found {other}"),
        )),
    }
}

fn unknown(key: &str, at: &Node, origin: &str) -> anyhow::Error {
    let all: Vec<&str> = NAMED.iter().chain(WITH_ARGS).copied().collect();
    fail(
        origin,
        &at.referenced,
        format!("unknown generator `{key}`{}; known: {}", did_you_mean(suggest(key, &all)), all.join(", ")),
    )
}

/// A generator without arguments; `None` for `default`.
fn named(name: &str, at: &Node, origin: &str) -> Result<Option<Fake>> {
    Ok(Some(match name {
        "null" => Fake::Null,
        "default" => return Ok(None),
        "bool" => Fake::Bool,
        "uuid" => Fake::Uuid { unique: false },
        "email" => Fake::Email { unique: false },
        "first_name" => Fake::FirstName,
        "last_name" => Fake::LastName,
        "name" => Fake::FullName,
        "country" => Fake::Country,
        "city" => Fake::City,
        "url" => Fake::Url,
        "phone" => Fake::Phone,
        "ip" => Fake::Inet { cidr: false, unique: false },
        "date" => Fake::Date { unique: false },
        "time" => Fake::Time { unique: false },
        "timestamp" => Fake::Timestamp { tz: false, unique: false },
        "timestamptz" => Fake::Timestamp { tz: true, unique: false },
        "recent" => Fake::Recent { tz: true },
        "interval" => Fake::Interval { unique: false },
        "json" => Fake::Json { unique: false },
        "words" => Fake::Words { max: 60 },
        "geo_point" => Fake::GeoPoint,
        "geo_shape" => Fake::GeoShape,
        "sequence" => Fake::Sequence { start: 1 },
        _ if WITH_ARGS.contains(&name) => {
            return Err(fail(origin, &at.referenced, format!("`{name}` needs arguments, e.g. `{{{name}: ...}}`")))
        }
        _ => return Err(unknown(name, at, origin)),
    }))
}

/// `{key: arg}`: a generator with its arguments (or a named one, whose
/// argument must be empty).
fn with_args(key: &str, k: &Node, arg: &Node, origin: &str) -> Result<Option<Fake>> {
    let bad = |what: &str| fail(origin, &arg.referenced, format!("{key}: expected {what}, found {}", arg.value));
    let scalar = |n: &Node| match &n.value {
        Yaml::Str(s) => Some(s.clone()),
        Yaml::Int(i) => Some(i.to_string()),
        Yaml::Float(x) => Some(yaml::show(*x)),
        Yaml::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    let pair = || match &arg.value {
        Yaml::Seq(items) if items.len() == 2 => Some((&items[0].value, &items[1].value)),
        _ => None,
    };
    Ok(Some(match key {
        "int" => match pair() {
            Some((Yaml::Int(lo), Yaml::Int(hi))) if lo <= hi => Fake::Int { lo: *lo, hi: *hi },
            _ => return Err(bad("[low, high], two integers with low <= high")),
        },
        "float" => match pair().and_then(|(a, b)| Some((a.as_f64()?, b.as_f64()?))) {
            Some((lo, hi)) if lo < hi => Fake::Float { lo, hi },
            _ => return Err(bad("[low, high], two numbers with low < high")),
        },
        "choice" => match &arg.value {
            Yaml::Seq(items) if !items.is_empty() => {
                let values: Option<Vec<String>> = items.iter().map(scalar).collect();
                Fake::Choice(values.ok_or_else(|| bad("a list of values (text or numbers)"))?)
            }
            _ => return Err(bad("a non-empty list of values")),
        },
        "pattern" => Fake::Pattern(arg.value.as_str().ok_or_else(|| bad("text such as \"user-####\""))?.to_string()),
        "const" => Fake::Const(scalar(arg).ok_or_else(|| bad("a value"))?),
        "sequence" => match arg.value {
            Yaml::Int(start) => Fake::Sequence { start },
            Yaml::Null => Fake::Sequence { start: 1 },
            _ => return Err(bad("the first value, an integer")),
        },
        _ if NAMED.contains(&key) => {
            if !matches!(arg.value, Yaml::Null) {
                return Err(fail(origin, &arg.referenced, format!("`{key}` takes no arguments; write `{key}: ~`")));
            }
            return named(key, k, origin);
        }
        _ => return Err(unknown(key, k, origin)),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        let e = Mapping::parse(text, "map.yml").unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        e.to_string()
    }

    /// Issue 29, item 6: a line echoed in a message showed a URL's password.
    #[test]
    fn a_line_echoed_hides_its_secrets() {
        let e = err("postgres://u:S3cr3tPW@h/db\n");
        assert!(!e.contains("S3cr3tPW") && e.contains("postgres://u:***@h/db"), "{e}");
        let e = err("c: {int: [1, 2], password=S3cr3tPW: 1}\n");
        assert!(!e.contains("S3cr3tPW"), "{e}");
    }

    #[test]
    fn generators_with_and_without_arguments() {
        let m = Mapping::parse(
            "age: {int: [18, 99]}\nplan: {choice: [free, 2], null_ratio: 0.25}\ncode: {pattern: \"u-##\"}\nmail: email\nnote: null\nid: default\n",
            "map.yml",
        )
        .unwrap();
        assert_eq!(m.get("age").unwrap().fake, Some(Fake::Int { lo: 18, hi: 99 }));
        let plan = m.get("plan").unwrap();
        assert_eq!((plan.fake.clone(), plan.null_ratio), (Some(Fake::Choice(vec!["free".into(), "2".into()])), 0.25));
        assert_eq!(m.get("mail").unwrap().fake, Some(Fake::Email { unique: false }));
        assert_eq!(m.get("note").unwrap().fake, Some(Fake::Null));
        assert_eq!(m.get("id").unwrap().fake, None);
    }

    #[test]
    fn mistakes_name_file_line_and_column() {
        assert!(err("age: {int: [9, 1]}").starts_with("map.yml:1:"), "{}", err("age: {int: [9, 1]}"));
        let e = err("a: email\nb: {intt: [1, 2]}");
        assert!(e.starts_with("map.yml:2:") && e.contains("did you mean `int`"), "{e}");
        let e = err("a: emial");
        assert!(e.contains("did you mean `email`"), "{e}");
        assert!(err("a: {choice: []}").contains("non-empty"));
        assert!(err("a: {int: [1, 2], null_ratio: 2}").contains("null_ratio"));
        assert!(err("- a").contains("mapping of column names"));
        assert!(err("a: int").contains("needs arguments"));
    }

    /// Issue 13 item 2: the widest finite range is taken; a bound that is not
    /// finite is refused when the mapping is read.
    #[test]
    fn float_ranges_take_any_finite_bounds() {
        let m = Mapping::parse("f: {float: [-1e308, 1e308]}", "map.yml").unwrap();
        assert_eq!(m.get("f").unwrap().fake, Some(Fake::Float { lo: -1e308, hi: 1e308 }));
        let e = err("f: {float: [0, .inf]}");
        assert!(e.starts_with("map.yml:1:") && e.contains("finite"), "{e}");
    }

    #[test]
    fn unknown_columns_are_refused_with_a_suggestion() {
        let m = Mapping::parse("\nemial: email", "map.yml").unwrap();
        let e = m.check_columns(&["id", "email"], "users").unwrap_err().to_string();
        assert!(e.starts_with("map.yml:2:1:") && e.contains("did you mean `email`"), "{e}");
    }
}
