//! SQL identifiers: how a name is quoted and what a `--table` name is.
//! The models name their key columns with them and the dialects build
//! statements with them, so they sit below both, in a leaf of their own.

use std::fmt;

use crate::error::usage;

/// Quotes an identifier for PostgreSQL-compatible engines: always quoted,
/// embedded quotes doubled, so any name (mixed case, spaces) is taken as is.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A table name as the user gave it: `name` or `schema.name`, case kept.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TableName {
    pub schema: Option<String>,
    pub name: String,
}

impl TableName {
    /// Parses `--table`: one dot separates schema and table; double quotes
    /// may protect a dot that is part of a name (`"my.schema".t`).
    pub fn parse(s: &str) -> anyhow::Result<TableName> {
        let mut parts = Vec::new();
        let mut cur = String::new();
        let mut quoted = false;
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' if quoted && chars.peek() == Some(&'"') => {
                    chars.next();
                    cur.push('"');
                }
                '"' => quoted = !quoted,
                '.' if !quoted => parts.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        parts.push(cur);
        let bad = |why: &str| usage(format!("--table {s:?}: {why}; give NAME or SCHEMA.NAME"));
        if quoted {
            return Err(bad("unbalanced double quote"));
        }
        if parts.iter().any(|p| p.is_empty()) {
            return Err(bad("empty name"));
        }
        match parts.len() {
            1 => Ok(TableName { schema: None, name: parts.remove(0) }),
            2 => Ok(TableName { name: parts.remove(1), schema: Some(parts.remove(0)) }),
            _ => Err(bad("too many dots")),
        }
    }

    /// The quoted, possibly schema-qualified name for SQL.
    pub fn sql(&self) -> String {
        match &self.schema {
            Some(s) => format!("{}.{}", quote_ident(s), quote_ident(&self.name)),
            None => quote_ident(&self.name),
        }
    }
}

impl fmt::Display for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.schema {
            Some(s) => write!(f, "{s}.{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_keeps_case_and_doubles_quotes() {
        assert_eq!(quote_ident("Measure\"ment"), "\"Measure\"\"ment\"");
    }

    #[test]
    fn table_names() {
        assert_eq!(TableName::parse("m").unwrap().sql(), "\"m\"");
        assert_eq!(TableName::parse("Bench.Cpu").unwrap().sql(), "\"Bench\".\"Cpu\"");
        assert_eq!(TableName::parse("\"a.b\".c").unwrap().sql(), "\"a.b\".\"c\"");
        for bad in ["", "a.", "a.b.c", "\"a"] {
            let err = TableName::parse(bad).unwrap_err().to_string();
            assert!(err.contains("--table"), "{err}");
        }
    }
}
