//! The input cut into rows: the [`Splitter`] driven over an [`Input`]'s
//! files one after another, each value checked to be UTF-8 and named by
//! its file and line, so the model reads rows and never bytes.

use anyhow::Result;

use super::split::{self, Found, Splitter};
use crate::error::usage;
use crate::input::{read_error, Input};

/// What the reader found next.
pub(super) enum Item {
    /// A value, now [`Reader::current`], starting on `line`.
    Row { line: u64 },
    /// Text that is not JSON, up to the end of its line.
    Bad { line: u64, text: String, error: String },
}

/// The input cut into values (see the `split` module), each checked to be UTF-8.
pub(super) struct Reader {
    pub(super) input: Input,
    pub(super) split: Splitter,
    /// The value last returned; its buffer goes back to `split` on the next call.
    text: String,
    /// The value [`Reader::is_empty`] read, not yet returned.
    peeked: Option<Item>,
    started: bool,
}

impl Reader {
    pub(super) fn new(input: Input) -> Reader {
        Reader::with_limit(input, split::MAX_VALUE)
    }

    fn with_limit(input: Input, limit: usize) -> Reader {
        Reader { input, split: Splitter::new(limit), text: String::new(), peeked: None, started: false }
    }

    pub(super) fn current(&self) -> &str {
        &self.text
    }

    /// Whether the input holds no value at all (read ahead by one value).
    pub(super) fn is_empty(&mut self) -> Result<bool> {
        if self.peeked.is_none() {
            self.peeked = self.read()?;
        }
        Ok(self.peeked.is_none())
    }

    /// Opens the next file (skipping a UTF-8 byte order mark); false when there is none.
    fn next_file(&mut self) -> Result<bool> {
        if !self.input.advance() {
            return Ok(false);
        }
        self.split.new_file();
        if let Some((name, r)) = self.input.current() {
            if r.fill_buf().map_err(|e| read_error(name, e))?.starts_with(b"\xef\xbb\xbf") {
                r.consume(3);
            }
        }
        Ok(true)
    }

    pub(super) fn next(&mut self) -> Result<Option<Item>> {
        match self.peeked.take() {
            Some(item) => Ok(Some(item)),
            None => self.read(),
        }
    }

    /// The next value of the input.
    fn read(&mut self) -> Result<Option<Item>> {
        // The last value's buffer, for the next one.
        self.split.buf = std::mem::take(&mut self.text).into_bytes();
        if !self.started {
            self.started = true;
            if !self.next_file()? {
                return Ok(None);
            }
        }
        loop {
            let Some((name, r)) = self.input.current() else { return Ok(None) };
            let chunk = r.fill_buf().map_err(|e| read_error(name, e))?;
            let found = if chunk.is_empty() {
                match self.split.end_of_file() {
                    Some(found) => found,
                    None if self.next_file()? => continue,
                    None => return Ok(None),
                }
            } else {
                let (used, found) = self.split.feed(chunk);
                r.consume(used);
                match found {
                    Some(found) => found,
                    None => continue,
                }
            };
            return self.item(found).map(Some);
        }
    }

    /// What the splitter found, as an item; a value too long ends the reading.
    fn item(&mut self, found: Found) -> Result<Item> {
        let lossy = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        Ok(match found {
            Found::Value { line } => match String::from_utf8(std::mem::take(&mut self.split.buf)) {
                Ok(text) => {
                    self.text = text;
                    Item::Row { line }
                }
                Err(e) => Item::Bad { line, text: lossy(e.as_bytes()), error: "not valid UTF-8".into() },
            },
            Found::Bad { line, error } => Item::Bad { line, text: lossy(&self.split.buf), error },
            Found::TooLong { line } => {
                return Err(usage(format!(
                    "{}:{line}: a value longer than {} MiB, the most one row may hold (a bracket or quote never closed? not JSON?); reading stopped",
                    self.input.current_name(),
                    split::MAX_VALUE >> 20
                )))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufReader, Read};

    use super::*;

    /// Issue 14 item 3: a value longer than the limit stops the reading with
    /// its file and line (`/dev/zero` aborted the process, out of memory).
    #[test]
    fn a_value_over_the_limit_stops_the_reading_with_its_line() {
        let long = format!("{{\"a\": 1}}\n\n{{\"b\": \"{}\"}}\n", "x".repeat(100));
        let mut r = Reader::with_limit(Input::from_bytes("in.json", long.into_bytes()).unwrap(), 64);
        assert!(matches!(r.next(), Ok(Some(Item::Row { line: 1 }))));
        let e = r.next().err().expect("refused").to_string();
        assert!(e.starts_with("in.json:3: a value longer than 64 MiB"), "{e}");
        let mut r = Reader::with_limit(Input::open(&["/dev/zero".into()]).unwrap(), 1 << 20);
        let e = r.next().err().expect("refused").to_string();
        assert!(e.starts_with("/dev/zero:1: a value longer than"), "{e}");
        assert!(r.split.buf.len() <= (1 << 20) + (64 << 10), "read {} bytes", r.split.buf.len());
    }

    /// Issue 14 item 3: a one-line top-level array is read element by
    /// element: what the reader holds stays the size of one row (it held the
    /// whole line: a 96 MB array peaked at 217 MB).
    #[test]
    fn a_top_level_array_is_streamed() {
        struct Array(u64);
        impl Read for Array {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let text = match self.0 {
                    0 => "[".to_string(),
                    200_000 => "{\"a\": 200000}]".to_string(),
                    n if n > 200_000 => return Ok(0),
                    n => format!("{{\"a\": {n}, \"b\": \"row {n}\"}},"),
                };
                self.0 += 1;
                buf[..text.len()].copy_from_slice(text.as_bytes());
                Ok(text.len())
            }
        }
        let input = Input::from_reader("big.json", Box::new(BufReader::new(Array(0))));
        let mut r = Reader::new(input);
        let (mut rows, mut held) = (0u64, 0);
        while let Some(item) = r.next().unwrap() {
            assert!(matches!(item, Item::Row { .. }));
            rows += 1;
            held = held.max(r.text.capacity() + r.split.buf.capacity());
        }
        assert_eq!(rows, 200_000);
        assert!(held < 1024, "the reader held {held} bytes");
        assert!(r.split.work <= 2 * 6_000_000, "{} bytes looked at", r.split.work);
    }
}
