//! Cuts JSON input into values in one pass over its bytes, keeping only the
//! value being read: memory is bounded by the largest value (at most
//! [`MAX_VALUE`]), not by the input, and time is linear in the input, also
//! for values over many lines (re-parsing a value from its start at every
//! new line was quadratic).
//!
//! The splitter follows JSON's structure (brackets, strings, escapes) to find
//! where a value ends and where the text stops being JSON; serde_json then
//! parses each complete value once. A top-level array is read element by
//! element, as if its elements were JSON lines.
//!
//! After a syntax error the rest of that line is the bad row, and reading
//! goes on after it; when the error is at the start of a later line (the
//! value before it was left open) that line starts the next value instead.
//! A line that ends right after a key's `:` is a row cut short (formatters
//! never break a line there), so `{"id": 3, "v": ` is a bad row by itself
//! rather than the start of a value that swallows the next line.

/// The most bytes one value (one row) may have. Above it reading stops: the
/// input is not JSON rows (a device such as /dev/zero, a bracket never
/// closed) or rows too big to be worth a batch.
pub const MAX_VALUE: usize = 64 << 20;

/// What [`Splitter::feed`] found.
#[derive(Debug, PartialEq)]
pub enum Found {
    /// A value, in [`Splitter::buf`], starting on `line`.
    Value { line: u64 },
    /// Text that is not JSON, in [`Splitter::buf`], starting on `line`.
    Bad { line: u64, error: String },
    /// A value or a bad line longer than the limit, starting on `line`.
    TooLong { line: u64 },
}

/// Where the splitter is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// Between values: blanks, and in a top-level array its commas and brackets.
    Between,
    /// Inside a value.
    Value(Lex),
    /// After an error: up to the end of this line is the bad row.
    SkipLine,
}

/// Where inside a value.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Lex {
    /// Between tokens, expecting this.
    Expect(Expect),
    /// In a string; a key's is followed by `:`.
    Str { key: bool, escaped: bool },
    /// In a number or `true`/`false`/`null` (serde_json checks their spelling).
    Word,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    Value,
    /// After `[`.
    ValueOrClose,
    /// After `{`.
    KeyOrClose,
    /// After `,` in an object.
    Key,
    Colon,
    /// After `:`, on the same line (no formatter breaks a line there, a row
    /// cut short does).
    Member,
    CommaOrClose,
}

pub struct Splitter {
    /// The value being read, or the bad text.
    pub buf: Vec<u8>,
    limit: usize,
    mode: Mode,
    /// The open brackets of the value: `{` or `[`.
    stack: Vec<u8>,
    /// The line of the next byte.
    line: u64,
    /// The line the value (or bad text) in `buf` starts on.
    start: u64,
    /// Only blanks since the line began.
    line_blank: bool,
    /// Inside a top-level array.
    in_array: bool,
    /// The message of the error a skipped line is rejected with.
    error: String,
    /// Bytes looked at, some twice (a test counts it to show linear work).
    pub work: u64,
}

impl Splitter {
    pub fn new(limit: usize) -> Splitter {
        Splitter {
            buf: Vec::new(),
            limit,
            mode: Mode::Between,
            stack: Vec::new(),
            line: 1,
            start: 1,
            line_blank: true,
            in_array: false,
            error: String::new(),
            work: 0,
        }
    }

    /// Starts a new file: line 1, outside any array.
    pub fn new_file(&mut self) {
        self.mode = Mode::Between;
        self.stack.clear();
        self.line = 1;
        self.line_blank = true;
        self.in_array = false;
    }

    /// Reads `chunk` up to the end of the next value (or bad text); returns
    /// how many bytes it used and what it found, if it found the end.
    pub fn feed(&mut self, chunk: &[u8]) -> (usize, Option<Found>) {
        // `chunk[kept..i]` belongs to `buf`; copied in at the end.
        let mut kept = 0;
        let mut i = 0;
        let found = loop {
            if self.mode != Mode::Between && self.buf.len() + (i - kept) > self.limit {
                break Some(Found::TooLong { line: self.start });
            }
            let Some(&b) = chunk.get(i) else { break None };
            self.work += 1;
            match self.mode {
                Mode::Between => match b {
                    b' ' | b'\t' | b'\r' | b'\n' => {
                        i += 1;
                        if b == b'\n' {
                            self.end_line();
                        }
                    }
                    b',' | b']' if self.in_array => {
                        self.in_array = b == b',';
                        i += 1;
                    }
                    b'[' if !self.in_array => {
                        self.in_array = true;
                        i += 1;
                    }
                    _ => {
                        self.buf.clear();
                        self.start = self.line;
                        kept = i;
                        self.mode = match b {
                            b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                                Mode::Value(Lex::Expect(Expect::Value))
                            }
                            _ => self.skip_line(format!("expected a JSON value, found {}", shown_byte(b))),
                        };
                    }
                },
                Mode::SkipLine => {
                    i += 1;
                    if b == b'\n' {
                        self.end_line();
                        self.buf.extend_from_slice(&chunk[kept..i]);
                        self.mode = Mode::Between;
                        return (i, Some(Found::Bad { line: self.start, error: std::mem::take(&mut self.error) }));
                    }
                    continue;
                }
                Mode::Value(Lex::Str { key, escaped }) => {
                    if escaped {
                        self.mode = Mode::Value(Lex::Str { key, escaped: false });
                        i += 1;
                        continue;
                    }
                    // The bulk of most input: run to the next quote, backslash or control character.
                    let run = chunk[i..].iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20);
                    let Some(run) = run else {
                        self.work += (chunk.len() - i - 1) as u64;
                        i = chunk.len();
                        continue;
                    };
                    self.work += run as u64;
                    i += run;
                    match chunk[i] {
                        b'"' => {
                            i += 1;
                            if key {
                                self.mode = Mode::Value(Lex::Expect(Expect::Colon));
                            } else if let Some(done) = self.after_value() {
                                break Some(done);
                            }
                        }
                        b'\\' => {
                            i += 1;
                            self.mode = Mode::Value(Lex::Str { key, escaped: true });
                        }
                        c => self.mode = self.error_at(c, "a line break or control character inside a string"),
                    }
                }
                Mode::Value(Lex::Word) => {
                    if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.') {
                        i += 1;
                    } else if let Some(done) = self.after_value() {
                        break Some(done);
                    }
                }
                Mode::Value(Lex::Expect(Expect::Member)) if b == b'\n' => {
                    self.mode =
                        self.skip_line("the line ends where a value should follow `:` (a row cut short?)".into());
                }
                Mode::Value(Lex::Expect(expect)) => {
                    if matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
                        i += 1;
                        if b == b'\n' {
                            self.end_line();
                        }
                        continue;
                    }
                    let top = self.stack.last().copied();
                    // The first byte of a later line than the value's first.
                    let starts_line = self.line_blank && self.line > self.start;
                    let next = match (expect, b) {
                        (Expect::Value | Expect::ValueOrClose | Expect::Member, b'{') => {
                            Some(Lex::Expect(Expect::KeyOrClose))
                        }
                        (Expect::Value | Expect::ValueOrClose | Expect::Member, b'[') => {
                            Some(Lex::Expect(Expect::ValueOrClose))
                        }
                        (Expect::Value | Expect::ValueOrClose | Expect::Member, b'"') => {
                            Some(Lex::Str { key: false, escaped: false })
                        }
                        (
                            Expect::Value | Expect::ValueOrClose | Expect::Member,
                            b'-' | b'0'..=b'9' | b't' | b'f' | b'n',
                        ) => Some(Lex::Word),
                        (Expect::KeyOrClose | Expect::Key, b'"') => Some(Lex::Str { key: true, escaped: false }),
                        (Expect::Colon, b':') => Some(Lex::Expect(Expect::Member)),
                        (Expect::CommaOrClose, b',') if top == Some(b'{') => Some(Lex::Expect(Expect::Key)),
                        (Expect::CommaOrClose, b',') => Some(Lex::Expect(Expect::Value)),
                        _ => None,
                    };
                    self.line_blank = false;
                    if let Some(lex) = next {
                        if matches!(b, b'{' | b'[') {
                            self.stack.push(b);
                        }
                        self.mode = Mode::Value(lex);
                        i += 1;
                        continue;
                    }
                    let closes = match (expect, b) {
                        (Expect::ValueOrClose | Expect::CommaOrClose, b']') => top == Some(b'['),
                        (Expect::KeyOrClose | Expect::CommaOrClose, b'}') => top == Some(b'{'),
                        _ => false,
                    };
                    if closes {
                        i += 1;
                        self.stack.pop();
                        if let Some(done) = self.after_value() {
                            break Some(done);
                        }
                        continue;
                    }
                    let wanted = match expect {
                        Expect::Value | Expect::Member => "a value",
                        Expect::ValueOrClose => "a value or `]`",
                        Expect::KeyOrClose => "a key (a string) or `}`",
                        Expect::Key => "a key (a string)",
                        Expect::Colon => "`:`",
                        Expect::CommaOrClose if top == Some(b'{') => "`,` or `}`",
                        Expect::CommaOrClose => "`,` or `]`",
                    };
                    let why = format!("expected {wanted}, found {}", shown_byte(b));
                    if starts_line {
                        // The value was left open; this line starts the next one.
                        self.buf.extend_from_slice(&chunk[kept..i]);
                        self.mode = Mode::Between;
                        self.stack.clear();
                        return (i, Some(Found::Bad { line: self.start, error: why }));
                    }
                    self.mode = self.skip_line(why);
                }
            }
        };
        // What ends on the byte that takes it over the limit is too long as
        // well (the check above counts the bytes before each one, and a
        // string's run is taken at once): the same finds however the input
        // is cut into reads.
        let found = match found {
            Some(Found::Value { .. } | Found::Bad { .. }) if self.buf.len() + (i - kept) > self.limit => {
                Some(Found::TooLong { line: self.start })
            }
            found => found,
        };
        self.buf.extend_from_slice(&chunk[kept..i]);
        (i, found)
    }

    /// The end of the current file: a value cut short is bad text.
    pub fn end_of_file(&mut self) -> Option<Found> {
        let found = match self.mode {
            Mode::Between => None,
            Mode::Value(Lex::Word) if self.stack.is_empty() => Some(Found::Value { line: self.start }),
            Mode::Value(_) => Some(Found::Bad { line: self.start, error: "the input ends inside this value".into() }),
            Mode::SkipLine => Some(Found::Bad { line: self.start, error: std::mem::take(&mut self.error) }),
        };
        self.new_file();
        found
    }

    /// A value ended (at `]`, `}`, a string's quote or a word's end): the
    /// whole value if no bracket is left open.
    fn after_value(&mut self) -> Option<Found> {
        if self.stack.is_empty() {
            self.mode = Mode::Between;
            return Some(Found::Value { line: self.start });
        }
        self.mode = Mode::Value(Lex::Expect(Expect::CommaOrClose));
        None
    }

    fn end_line(&mut self) {
        self.line += 1;
        self.line_blank = true;
    }

    fn skip_line(&mut self, error: String) -> Mode {
        self.error = error;
        self.stack.clear();
        Mode::SkipLine
    }

    fn error_at(&mut self, c: u8, what: &str) -> Mode {
        self.skip_line(format!("{what} ({})", shown_byte(c)))
    }
}

/// A byte for messages: the character, or its code.
fn shown_byte(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("`{}`", char::from(b))
    } else {
        format!("byte 0x{b:02x}")
    }
}
