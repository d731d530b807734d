//! `--check`: conditions every response must meet (k6's `check()`), so a
//! fast answer that is wrong counts as a failure, not as throughput. Parsed
//! once when the configuration is resolved; evaluated per response.

use std::sync::LazyLock;

use anyhow::Result;
use regex::Regex;
use serde_json::Value;

use crate::error::usage;

/// One `--check`, as the user wrote it and as it is evaluated.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// As given: how the check is named in the summary and error classes.
    pub text: String,
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// `status=200`, `status=2xx`.
    Status { code: u16, class_only: bool },
    /// `body~TEXT`.
    Contains(String),
    /// `json:$.a.b[0]=VALUE`.
    Json { path: Vec<Step>, expected: Value },
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

fn bad(text: &str, why: &str) -> anyhow::Error {
    usage(format!("--check {text:?}: {why}; give status=200 (or status=2xx), 'body~TEXT' or 'json:$.path=VALUE'"))
}

impl Check {
    pub fn parse(text: &str) -> Result<Check> {
        let kind = if let Some(v) = text.strip_prefix("status=") {
            let v = v.trim();
            match v.as_bytes() {
                [c @ b'1'..=b'5', b'x' | b'X', b'x' | b'X'] => {
                    Kind::Status { code: u16::from(c - b'0') * 100, class_only: true }
                }
                _ => match v.parse::<u16>() {
                    Ok(code) if (100..600).contains(&code) => Kind::Status { code, class_only: false },
                    _ => return Err(bad(text, "a status is a code from 100 to 599 or a class like 2xx")),
                },
            }
        } else if let Some(needle) = text.strip_prefix("body~") {
            if needle.is_empty() {
                return Err(bad(text, "give the text the body must contain"));
            }
            Kind::Contains(needle.to_owned())
        } else if let Some(rest) = text.strip_prefix("json:") {
            let (path, value) = rest.split_once('=').ok_or_else(|| bad(text, "a JSON check needs =VALUE"))?;
            let path = parse_path(path.trim()).map_err(|why| bad(text, &why))?;
            let value = value.trim();
            // A JSON literal (42, true, "x", null) or, failing that, a bare string.
            let expected = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_owned()));
            Kind::Json { path, expected }
        } else {
            return Err(bad(text, "unknown kind of check"));
        };
        Ok(Check { text: text.to_owned(), kind })
    }

    /// Whether evaluating it needs the response body.
    pub fn needs_body(&self) -> bool {
        !matches!(self.kind, Kind::Status { .. })
    }

    /// Whether it decides which statuses are acceptable (then a non-2xx
    /// status is not an error by itself).
    pub fn is_status(&self) -> bool {
        matches!(self.kind, Kind::Status { .. })
    }

    pub fn holds(&self, status: u16, body: &[u8]) -> bool {
        match &self.kind {
            Kind::Status { code, class_only: true } => status / 100 == code / 100,
            Kind::Status { code, class_only: false } => status == *code,
            Kind::Contains(needle) => body.windows(needle.len()).any(|w| w == needle.as_bytes()),
            Kind::Json { path, expected } => {
                let Ok(doc) = serde_json::from_slice::<Value>(body) else { return false };
                lookup(&doc, path).is_some_and(|found| json_equal(found, expected))
            }
        }
    }
}

/// How much of a failed response's body its error keeps: enough to see
/// what the server said, bounded however large the body. A VU whose checks
/// read no body keeps this much of each, and drops the rest as it comes.
pub const EXCERPT_BYTES: usize = 512;

/// The most of a body a check reads: a VU keeps each body up to this for
/// its checks; a check of a longer one fails, saying why.
pub const BODY_BYTES: usize = 64 << 20;

/// Words that make a key's value a secret (`api_key`, `X-Auth-Token`,
/// `session_id`, ...).
const SECRET_KEY: &str = r"[\w.-]*(?:pass|pwd|secret|token|key|auth|credential|session|cookie|sig)[\w.-]*";

/// What looks like a credential in a response, and what it becomes: URLs
/// with a password, then `"secret_key": "value"`, then schemes such as
/// `Bearer ...`, then `secret_key=value` or `Secret-Header: value`. A value
/// cut off by the excerpt's end is redacted too.
static CREDENTIALS: LazyLock<[(Regex, &str); 4]> = LazyLock::new(|| {
    let re = |pattern: &str| Regex::new(pattern).expect("a valid pattern");
    [
        (re(r#"([a-zA-Z][\w+.-]*://[^\s:/@"'<>]*):[^\s@"'<>]*@"#), "$1:***@"),
        (re(&format!(r#"(?i)("{SECRET_KEY}"\s*:\s*)"(?:[^"\\]|\\.)*"?"#)), r#"$1"***""#),
        (re(r"(?i)\b(basic|bearer|digest|token)\s+[\w.~+/=-]+"), "$1 ***"),
        (re(&format!(r#"(?i)\b({SECRET_KEY}\s*[=:]\s*)[^\s&,;"'<>]+"#)), "$1***"),
    ]
});

/// The start of a response body for an error message: at most
/// [`EXCERPT_BYTES`] of `body`, its first bytes of `len`, on one line, with
/// anything that looks like a credential replaced by `***` (error reports
/// are shared; a response may echo a token or a connection string).
pub fn excerpt(body: &[u8], len: u64) -> String {
    let start = &body[..body.len().min(EXCERPT_BYTES)];
    let mut text = String::from_utf8_lossy(start).replace(['\n', '\r'], " ");
    for (pattern, replacement) in CREDENTIALS.iter() {
        text = pattern.replace_all(&text, *replacement).into_owned();
    }
    if len > start.len() as u64 {
        text.push_str(&format!("… ({len} bytes in all)"));
    }
    text
}

/// `$.data[0].id`, `$.length`, `$[2]`: keys and indexes, nothing more.
fn parse_path(p: &str) -> Result<Vec<Step>, String> {
    let rest = p.strip_prefix('$').ok_or("a JSON path starts with $")?;
    let mut steps = Vec::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                let mut key = String::new();
                while let Some(&c) = chars.peek() {
                    if c == '.' || c == '[' {
                        break;
                    }
                    key.push(c);
                    chars.next();
                }
                if key.is_empty() {
                    return Err(format!("empty key in JSON path {p}"));
                }
                steps.push(Step::Key(key));
            }
            '[' => {
                let inner: String = chars.by_ref().take_while(|&c| c != ']').collect();
                let quoted = inner.strip_prefix(['"', '\'']).and_then(|s| s.strip_suffix(['"', '\'']));
                match (quoted, inner.parse::<usize>()) {
                    (Some(key), _) => steps.push(Step::Key(key.to_owned())),
                    (None, Ok(i)) => steps.push(Step::Index(i)),
                    _ => return Err(format!("[{inner}] in JSON path {p}: give an index or a quoted key")),
                }
            }
            _ => return Err(format!("unexpected {c:?} in JSON path {p}")),
        }
    }
    Ok(steps)
}

fn lookup<'a>(doc: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(doc, |v, step| match step {
        Step::Key(k) => v.get(k.as_str()),
        Step::Index(i) => v.get(*i),
    })
}

/// Numbers compare by value (1 = 1.0), the rest structurally.
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_checks() {
        let c = Check::parse("status=200").unwrap();
        assert!(c.holds(200, b"") && !c.holds(201, b"") && !c.needs_body() && c.is_status());
        let c = Check::parse("status=2xx").unwrap();
        assert!(c.holds(204, b"") && !c.holds(301, b""));
    }

    #[test]
    fn body_checks() {
        let c = Check::parse("body~\"ok\":true").unwrap();
        assert!(c.holds(200, br#"{"ok":true}"#) && !c.holds(200, br#"{"ok":false}"#) && c.needs_body());
        let doc = br#"{"data":[{"id":"Room:1","t":23.0}],"n":3,"s.k":"v"}"#;
        for (check, want) in [
            ("json:$.data[0].id=Room:1", true),
            ("json:$.data[0].id=\"Room:1\"", true),
            ("json:$.data[0].t=23", true),
            ("json:$.n=3", true),
            ("json:$.n=4", false),
            ("json:$.missing=1", false),
            ("json:$['s.k']=v", true),
        ] {
            assert_eq!(Check::parse(check).unwrap().holds(200, doc), want, "{check}");
        }
        assert!(!Check::parse("json:$.n=3").unwrap().holds(200, b"not json"));
    }

    #[test]
    fn excerpts_are_bounded_and_hide_credentials() {
        let body = br#"{"error":"denied","password": "hunter2", "api_key":"k3y"x", "db":"postgres://app:pw1@db:5432/x",
            "hint":"retry with token=t0k3n&user=bob", "headers":"Authorization: Bearer b3arer; Cookie: sid=c00kie"}"#;
        let text = excerpt(body, body.len() as u64);
        for secret in ["hunter2", "k3y", "pw1", "t0k3n", "b3arer", "c00kie"] {
            assert!(!text.contains(secret), "{secret}: {text}");
        }
        for kept in ["denied", r#""password": "***""#, "postgres://app:***@db:5432/x", "user=bob", "Authorization: ***"]
        {
            assert!(text.contains(kept), "{kept}: {text}");
        }
        // Bounded however large the body, and a secret cut off at the end is hidden too.
        let mut big = vec![b'x'; EXCERPT_BYTES - 16];
        big.extend_from_slice(br#"{"token": "0123456789abcdef0123456789"}"#);
        let text = excerpt(&big, big.len() as u64);
        assert!(text.len() < EXCERPT_BYTES + 40 && text.ends_with(&format!("({} bytes in all)", big.len())), "{text}");
        assert!(!text.contains("0123"), "{text}");
        assert_eq!(excerpt(b"plain\nerror", 11), "plain error");
        // Only the start of a body may be kept: its length is said.
        assert_eq!(excerpt(b"plain", 1 << 30), format!("plain… ({} bytes in all)", 1 << 30));
    }

    #[test]
    fn bad_checks_name_the_option() {
        for text in ["status=abc", "status=700", "body~", "json:$.n", "json:n=1", "json:$.a[x]=1", "latency<5"] {
            let err = Check::parse(text).unwrap_err();
            assert_eq!(crate::error::exit_code(&err), 2);
            assert!(err.to_string().starts_with("--check"), "{err}");
        }
    }
}
