//! SQL text as PostgreSQL and psql read it: where a string, a quoted name,
//! a comment and a statement end. Everything that looks into a user's SQL
//! goes through this one lexer (timeit's statements from stdin, pgbench
//! scripts, the placeholders counted for CrateDB's HTTP endpoint and
//! inlined for the simple protocol, export's `--query`), so none of them
//! cuts `DO $$ ... ; ... $$` at its inner `;` or takes the `?` of a
//! `-- why?` comment for a placeholder. A leaf: it imports nothing of ours.
//!
//! It follows PostgreSQL's scanner (`scan.l`) and psql's (`psqlscan.l`,
//! which pgbench reads scripts with) on the questions asked here:
//! - `'...'` with `''` for a quote, backslashes as they are
//!   (`standard_conforming_strings` on: PostgreSQL's default since 9.1,
//!   and CrateDB's only way); `E'...'` also takes `\'` and `\\`;
//! - `"..."` names with `""` for a quote;
//! - `$tag$...$tag$` dollar quotes (the tag may be empty), while a `$` inside
//!   a name (`a$b`) is part of the name, and `$1` is a parameter;
//! - `--` comments to the end of the line, and `/* */` comments, nested;
//! - `:name`, a psql variable (pgbench's), and `::`, a cast.
//!
//! It does not check the SQL: text it cannot place (an unclosed quote, a
//! stray character) goes through as it is, for the server to refuse.

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Blanks. A run ends after a line end, so that each line's first
    /// token starts at the line's start.
    Space,
    /// `-- ...` up to its line end, which is left out.
    LineComment,
    /// `/* ... */`, with any comments nested inside it.
    BlockComment,
    /// A string constant: `'...'`, `E'...'` or `$tag$...$tag$`.
    String,
    /// A quoted name: `"..."`.
    QuotedName,
    /// A keyword, a name or a number.
    Word,
    /// A parameter: `$1`, `$2` ...
    Param,
    /// A psql variable, which pgbench replaces: `:name`.
    Variable,
    /// `;`, which ends a statement.
    Semicolon,
    /// Any other character (an operator, punctuation), and `::` as one.
    Other,
}

impl Kind {
    /// Whether the token is SQL rather than blanks or a comment.
    pub fn is_code(self) -> bool {
        !matches!(self, Kind::Space | Kind::LineComment | Kind::BlockComment)
    }
}

/// One token: its kind, where it starts (a byte offset) and its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'a> {
    pub kind: Kind,
    pub at: usize,
    pub text: &'a str,
}

/// The tokens of `sql`, in order; their texts put together are `sql`.
pub fn tokens(sql: &str) -> Tokens<'_> {
    Tokens { sql, at: 0 }
}

/// The tokens of a text, from a place in it.
#[derive(Debug, Clone)]
pub struct Tokens<'a> {
    sql: &'a str,
    at: usize,
}

impl Tokens<'_> {
    /// Where the next token starts.
    pub fn offset(&self) -> usize {
        self.at
    }

    /// Goes on from `at`, a place where a token may start (the start of a
    /// line, for a caller that read the lines before it itself).
    pub fn resume_at(&mut self, at: usize) {
        self.at = at.min(self.sql.len());
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let rest = &self.sql.as_bytes()[self.at..];
        if rest.is_empty() {
            return None;
        }
        let (kind, len) = lex(rest);
        // Every token ends before an ASCII byte or at the end: a char boundary.
        let token = Token { kind, at: self.at, text: &self.sql[self.at..self.at + len] };
        self.at += len;
        Some(token)
    }
}

/// The statements of a script: cut at each `;` that ends one (none inside
/// a string, a quoted name, a dollar quote or a comment), `--` comments
/// left out, each trimmed; a part that holds only blanks and comments is
/// no statement.
pub fn statements(sql: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current = String::new();
    let mut has_code = false;
    for t in tokens(sql) {
        match t.kind {
            Kind::Semicolon => {
                if std::mem::take(&mut has_code) {
                    found.push(current.trim().to_string());
                }
                current.clear();
            }
            Kind::LineComment => {}
            kind => {
                has_code |= kind.is_code();
                current.push_str(t.text);
            }
        }
    }
    if has_code {
        found.push(current.trim().to_string());
    }
    found
}

/// The kind and length of the token `b` starts with (`b` is not empty).
fn lex(b: &[u8]) -> (Kind, usize) {
    let next = b.get(1).copied();
    match b[0] {
        c if is_space(c) => {
            let len = b.iter().position(|&c| !is_space(c)).unwrap_or(b.len());
            // Up to and with the first line end.
            let len = b[..len].iter().position(|&c| c == b'\n').map_or(len, |i| i + 1);
            (Kind::Space, len)
        }
        b'-' if next == Some(b'-') => (Kind::LineComment, b.iter().position(|&c| c == b'\n').unwrap_or(b.len())),
        b'/' if next == Some(b'*') => (Kind::BlockComment, block_comment(b)),
        b'\'' => (Kind::String, quoted(b, false)),
        b'e' | b'E' if next == Some(b'\'') => (Kind::String, 1 + quoted(&b[1..], true)),
        b'"' => (Kind::QuotedName, quoted(b, false)),
        b'$' => dollar(b),
        b';' => (Kind::Semicolon, 1),
        b':' if next == Some(b':') => (Kind::Other, 2),
        b':' if next.is_some_and(|c| c.is_ascii_alphabetic() || c == b'_') => {
            (Kind::Variable, 1 + b[1..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count())
        }
        c if c.is_ascii_digit() => (Kind::Word, b.iter().take_while(|c| c.is_ascii_digit()).count()),
        c if is_name_start(c) => (Kind::Word, 1 + b[1..].iter().take_while(|&&c| is_name_part(c) || c == b'$').count()),
        _ => (Kind::Other, 1),
    }
}

/// PostgreSQL's blanks.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c')
}

/// A name's first byte: a letter, `_`, or any byte of a non-ASCII character.
fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

/// A byte of a name or of a dollar quote's tag after its first (a name
/// also takes `$`, a tag does not).
fn is_name_part(c: u8) -> bool {
    is_name_start(c) || c.is_ascii_digit()
}

/// The length of the quoted text `b` starts with, up to its closing quote
/// (the same character as its opening one; doubled, it stands for itself),
/// or all of `b` when it is not closed. With `backslash`, a `\` takes the
/// character after it too (`E'...'`).
fn quoted(b: &[u8], backslash: bool) -> usize {
    let quote = b[0];
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'\\' if backslash => i += 2,
            c if c == quote && b.get(i + 1) == Some(&quote) => i += 2,
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The length of the `/* */` comment `b` starts with, comments nested in
/// it included, or all of `b` when it is not closed.
fn block_comment(b: &[u8]) -> usize {
    let (mut depth, mut i) = (1, 2);
    while i < b.len() {
        if b[i..].starts_with(b"/*") {
            depth += 1;
            i += 2;
        } else if b[i..].starts_with(b"*/") {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// What `b`, starting with `$`, starts with: a parameter (`$1`), a dollar
/// quote up to its closing tag (or all of `b` when it is not closed), or a
/// lone `$`.
fn dollar(b: &[u8]) -> (Kind, usize) {
    let digits = b[1..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 {
        return (Kind::Param, 1 + digits);
    }
    let tag = match b.get(1) {
        Some(&c) if is_name_start(c) => 1 + b[2..].iter().take_while(|&&c| is_name_part(c)).count(),
        _ => 0,
    };
    if b.get(1 + tag) != Some(&b'$') {
        return (Kind::Other, 1);
    }
    let delimiter = &b[..tag + 2];
    let body = &b[delimiter.len()..];
    let close = body.windows(delimiter.len()).position(|w| w == delimiter);
    (Kind::String, close.map_or(b.len(), |at| delimiter.len() + at + delimiter.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `sql`'s tokens as (kind, text).
    fn lexed(sql: &str) -> Vec<(Kind, &str)> {
        tokens(sql).map(|t| (t.kind, t.text)).collect()
    }

    #[test]
    fn strings_end_where_postgresql_ends_them() {
        use Kind::*;
        assert_eq!(lexed("'it''s;'"), [(String, "'it''s;'")]);
        assert_eq!(lexed(r"'a\';'"), [(String, r"'a\'"), (Semicolon, ";"), (String, "'")], "a standard string");
        assert_eq!(lexed(r"E'a\';' e'\\'"), [(String, r"E'a\';'"), (Space, " "), (String, r"e'\\'")]);
        assert_eq!(lexed("xe'a'"), [(Word, "xe"), (String, "'a'")], "only E alone starts an escape string");
        assert_eq!(lexed(r#""a"";b""#), [(QuotedName, r#""a"";b""#)]);
        assert_eq!(lexed("'open; to the end"), [(String, "'open; to the end")]);
    }

    #[test]
    fn dollar_quotes_parameters_and_names() {
        use Kind::*;
        assert_eq!(lexed("$$a;$b$$"), [(String, "$$a;$b$$")]);
        assert_eq!(lexed("$fn$ $$; $fn$;"), [(String, "$fn$ $$; $fn$"), (Semicolon, ";")]);
        assert_eq!(lexed("$1+$23"), [(Param, "$1"), (Other, "+"), (Param, "$23")]);
        assert_eq!(lexed("a$b$c"), [(Word, "a$b$c")], "a $ inside a name is the name's");
        assert_eq!(lexed("é$$"), [(Word, "é$$")]);
        assert_eq!(lexed("$a b$"), [(Other, "$"), (Word, "a"), (Space, " "), (Word, "b$")]);
        assert_eq!(lexed("1$$x$$"), [(Word, "1"), (String, "$$x$$")]);
        assert_eq!(lexed("$t$ never closed; $"), [(String, "$t$ never closed; $")]);
    }

    #[test]
    fn comments_blanks_variables_and_casts() {
        use Kind::*;
        assert_eq!(
            lexed("a -- b;\n c"),
            [(Word, "a"), (Space, " "), (LineComment, "-- b;"), (Space, "\n"), (Space, " "), (Word, "c")]
        );
        assert_eq!(lexed("/* a /* b; */ c; */;"), [(BlockComment, "/* a /* b; */ c; */"), (Semicolon, ";")]);
        assert_eq!(lexed("1+--x"), [(Word, "1"), (Other, "+"), (LineComment, "--x")]);
        assert_eq!(
            lexed(":x::int :'y'"),
            [(Variable, ":x"), (Other, "::"), (Word, "int"), (Space, " "), (Other, ":"), (String, "'y'")]
        );
        assert_eq!(lexed(" \t\n\n"), [(Space, " \t\n"), (Space, "\n")]);
    }

    #[test]
    fn statements_are_cut_at_the_semicolons_that_end_them() {
        let script = "-- a comment\nselect 1; select ';' -- trailing\n;\n\nselect \"a;b\" from t";
        assert_eq!(statements(script), ["select 1", "select ';'", "select \"a;b\" from t"]);
        let script = "DO $$ BEGIN PERFORM 1; END $$;\nselect E'\\';' /* ; */;\n/* only a comment */;-- end";
        assert_eq!(statements(script), ["DO $$ BEGIN PERFORM 1; END $$", "select E'\\';' /* ; */"]);
    }

    /// A piece of SQL that holds `;` (or the start of a comment) only
    /// inside a literal, a quoted name or a comment, as it is written.
    fn literal() -> impl Strategy<Value = String> {
        let text = "[a-z;'\"$\\\\ \n*/-]{0,12}";
        prop_oneof![
            text.prop_map(|s| format!("'{}'", s.replace('\'', "''"))),
            text.prop_map(|s| format!("E'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))),
            text.prop_map(|s| format!("\"{}\"", s.replace('"', "\"\""))),
            ("[a-z_]{0,3}", text).prop_filter_map("the body closes the quote", |(tag, s)| {
                let d = format!("${tag}$");
                (!format!("{s}$").contains(&d)).then(|| format!("{d}{s}{d}"))
            }),
            text.prop_filter_map("the text ends the comment", |s| {
                (!s.contains("*/") && !s.contains("/*") && !s.ends_with('/') && !s.starts_with('*'))
                    .then(|| format!("/* {s} */"))
            }),
        ]
    }

    /// A statement: words, operators and literals between blanks.
    fn statement() -> impl Strategy<Value = (String, Vec<String>)> {
        let piece = prop_oneof![
            "[a-z_][a-z0-9_$]{0,5}".prop_map(|w| (w, false)),
            "[0-9]{1,3}|[+*<>=(),.:]|\\$[1-9]".prop_map(|w| (w, false)),
            literal().prop_map(|l| (l, true)),
        ];
        ("[a-z]{1,6}", prop::collection::vec(piece, 0..6)).prop_map(|(verb, pieces)| {
            let literals = pieces.iter().filter(|(_, l)| *l).map(|(p, _)| p.clone()).collect();
            let text = std::iter::once(verb).chain(pieces.into_iter().map(|(p, _)| p)).collect::<Vec<_>>().join(" ");
            (text, literals)
        })
    }

    proptest! {
        /// Any text at all: no panic, tokens on char boundaries, nothing lost or added.
        #[test]
        fn any_text_lexes_back_to_itself(sql in "(.|\n){0,40}|[$'\"E\\;/*\n-]{0,20}") {
            let all: String = tokens(&sql).map(|t| t.text).collect();
            prop_assert_eq!(all, sql);
        }

        /// Statements joined by `;` come back as they were, whatever their
        /// literals hold: the lexer never cuts inside one. Each literal is
        /// one token, and the tokens put back together are the text.
        #[test]
        fn never_splits_inside_a_literal(stmts in prop::collection::vec(statement(), 1..5), sep in "[ \n]{0,2}") {
            let texts: Vec<String> = stmts.iter().map(|(t, _)| t.clone()).collect();
            let script = texts.join(&format!(";{sep}"));
            prop_assert_eq!(statements(&script), texts);
            let all: String = tokens(&script).map(|t| t.text).collect();
            prop_assert_eq!(&all, &script);
            let whole: Vec<&str> = tokens(&script)
                .filter(|t| matches!(t.kind, Kind::String | Kind::QuotedName | Kind::BlockComment))
                .map(|t| t.text)
                .collect();
            let literals: Vec<String> = stmts.into_iter().flat_map(|(_, l)| l).collect();
            prop_assert_eq!(whole, literals);
        }
    }
}
