//! YAML files read into a tree that keeps each node's line and column, so
//! that every mistake in a user's file is reported in dbload's words as
//! `file:line:column: what is wrong and what to do`, not as a serde message.
//! Workload files and mixed-run files are both read this way.

use std::fmt;

use anyhow::Result;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{Location, MessageFormatter, Spanned, UserMessageFormatter};

use crate::error::usage;

/// Parses `text`; `origin` names the file in errors.
pub(crate) fn read(text: &str, origin: &str) -> Result<Node> {
    // YAML 1.2 booleans only: `choice: [yes, no]` means the words, not true/false.
    let options = serde_saphyr::options! { strict_booleans: true, with_snippet: false };
    serde_saphyr::from_str_with_options(text, options).map_err(|e| {
        let msg = UserMessageFormatter.format_message(e.without_snippet());
        let msg: String = msg.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        fail(origin, &e.location().unwrap_or(Location::UNKNOWN), format!("invalid YAML: {msg}"))
    })
}

/// `file:line:column: message` (just `file: message` when the position is
/// unknown). A message that quotes the file (a key, a value found) has its
/// secrets hidden: a line may hold a URL with its password.
pub(crate) fn fail(origin: &str, at: &Location, msg: impl fmt::Display) -> anyhow::Error {
    let msg = crate::redact::text(&msg.to_string());
    if at.line() == 0 {
        usage(format!("{origin}: {msg}"))
    } else {
        usage(format!("{origin}:{}:{}: {msg}", at.line(), at.column()))
    }
}

/// A number as people write it: `0.9`, not `0.8999999999999999`.
pub(crate) fn show(x: f64) -> String {
    let s = format!("{x:.9}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A YAML node with where it starts in the file.
pub(crate) type Node = Spanned<Yaml>;

/// Any YAML value. Reading into this tree rather than straight into the
/// final types keeps every node's position for the messages above.
#[derive(Debug)]
pub(crate) enum Yaml {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

impl Yaml {
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Yaml::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_f64(&self) -> Option<f64> {
        match self {
            Yaml::Int(i) => Some(*i as f64),
            Yaml::Float(f) => Some(*f),
            _ => None,
        }
    }
}

/// How a node is named in messages: the value itself for scalars (long text
/// cut short), the shape for collections.
impl fmt::Display for Yaml {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Yaml::Null => f.write_str("nothing (null)"),
            Yaml::Bool(b) => write!(f, "`{b}`"),
            Yaml::Int(i) => write!(f, "`{i}`"),
            Yaml::Float(x) => write!(f, "`{}`", show(*x)),
            Yaml::Str(s) => {
                let line = s.lines().next().unwrap_or("");
                let cut: String = line.chars().take(40).collect();
                let more = if cut.len() < s.len() { "..." } else { "" };
                write!(f, "`{cut}{more}`")
            }
            Yaml::Seq(_) => f.write_str("a list"),
            Yaml::Map(pairs) => write!(f, "a mapping (keys: {})", key_list(pairs)),
        }
    }
}

/// `query, ratio`: the keys of a mapping as written (non-text keys as values).
pub(crate) fn key_list(pairs: &[(Node, Node)]) -> String {
    let keys: Vec<String> =
        pairs.iter().map(|(k, _)| k.value.as_str().map_or_else(|| k.value.to_string(), str::to_string)).collect();
    keys.join(", ")
}

impl<'de> Deserialize<'de> for Yaml {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(YamlVisitor)
    }
}

struct YamlVisitor;

impl<'de> Visitor<'de> for YamlVisitor {
    type Value = Yaml;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_unit<E>(self) -> Result<Yaml, E> {
        Ok(Yaml::Null)
    }

    fn visit_none<E>(self) -> Result<Yaml, E> {
        Ok(Yaml::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Yaml, E> {
        Ok(Yaml::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Yaml, E> {
        Ok(Yaml::Int(v))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Yaml, E> {
        i64::try_from(v)
            .map(Yaml::Int)
            .map_err(|_| E::custom(format!("integer {v} is too large (at most {})", i64::MAX)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Yaml, E> {
        Ok(Yaml::Float(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Yaml, E> {
        Ok(Yaml::Str(v.to_string()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Yaml, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Yaml::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Yaml, A::Error> {
        let mut pairs = Vec::new();
        while let Some(pair) = map.next_entry()? {
            pairs.push(pair);
        }
        Ok(Yaml::Map(pairs))
    }
}
