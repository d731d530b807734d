//! COPY's text format read back, for `dbload export` to JSON lines.
//!
//! `COPY (SELECT to_json(r.*) ...) TO STDOUT` sends one JSON value per row,
//! but in COPY's text format: every backslash doubled, and newline, carriage
//! return, tab, backspace, form feed and vertical tab written as `\n`, `\r`,
//! `\t`, `\b`, `\f`, `\v`; a raw newline ends the row. Undoing that gives the
//! JSON back. A decoded newline or carriage return can only be whitespace
//! between JSON tokens (inside a JSON string they are escaped by JSON itself;
//! they come from a `json` column kept as written), so it becomes a space:
//! the value is unchanged and each row stays on its own line.

/// Decodes one-column COPY text rows of JSON values into JSON lines. Rows
/// may arrive split anywhere: an escape cut in two is finished by the next call.
#[derive(Debug, Default)]
pub struct JsonLines {
    /// The previous input ended with the backslash of an escape.
    escape: bool,
}

impl JsonLines {
    /// Appends the decoded form of `input` to `out`.
    pub fn decode(&mut self, mut input: &[u8], out: &mut Vec<u8>) {
        if self.escape && !input.is_empty() {
            out.push(unescape(input[0]));
            input = &input[1..];
            self.escape = false;
        }
        while let Some(at) = input.iter().position(|&b| b == b'\\') {
            out.extend_from_slice(&input[..at]);
            match input.get(at + 1) {
                Some(&c) => {
                    out.push(unescape(c));
                    input = &input[at + 2..];
                }
                None => {
                    self.escape = true;
                    return;
                }
            }
        }
        out.extend_from_slice(input);
    }
}

/// The byte an escape `\c` of COPY's text output stands for.
fn unescape(c: u8) -> u8 {
    match c {
        // Whitespace between JSON tokens: a space keeps one row per line.
        b'n' | b'r' => b' ',
        b't' => b'\t',
        b'b' => 0x08,
        b'f' => 0x0c,
        b'v' => 0x0b,
        // `\\`, and a backslash before any other byte, stand for that byte.
        c => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_split(input: &[u8], at: usize) -> Vec<u8> {
        let mut d = JsonLines::default();
        let mut out = Vec::new();
        d.decode(&input[..at], &mut out);
        d.decode(&input[at..], &mut out);
        out
    }

    /// What PostgreSQL sends for `to_json` of a row whose text holds a
    /// backslash, a tab, a newline, a quote and unicode, and whose `json`
    /// column holds a raw newline and tab between tokens, split anywhere.
    #[test]
    fn undoes_copy_escapes() {
        let input = b"{\"t\":\"a\\\\\\\\b\\\\tc\\\\nd\\\\\"e\xc3\xa9\",\"j\":{\\n\\t\"k\": 1}}\n";
        let want = "{\"t\":\"a\\\\b\\tc\\nd\\\"e\u{e9}\",\"j\":{ \t\"k\": 1}}\n";
        for at in 0..=input.len() {
            let out = decode_split(input, at);
            assert_eq!(String::from_utf8(out).unwrap(), want, "split at {at}");
        }
        let v: serde_json::Value = serde_json::from_str(want).unwrap();
        assert_eq!(v["t"], "a\\b\tc\nd\"e\u{e9}");
        assert_eq!(v["j"]["k"], 1);
    }

    #[test]
    fn control_escapes_and_plain_rows() {
        let mut out = Vec::new();
        JsonLines::default().decode(b"\\b\\f\\v\\r\\x{}\n{}\n", &mut out);
        assert_eq!(out, b"\x08\x0c\x0b x{}\n{}\n");
    }
}
