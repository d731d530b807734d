//! HTTP/1.1 on the wire, client side: the request head is encoded once per
//! target and the response is parsed with `httparse` (hyper's parser) into
//! buffers that live as long as the connection.
//!
//! Why not a client crate: a load generator must time each phase of a
//! request (sending, waiting for the first byte, receiving), count the
//! bytes and connections, and cost next to nothing per request. Pooled
//! clients hide the phases. hyper's connection API does not have to, but it
//! costs more, as measured inside dbload (November 2026).
//! The A/B put `hyper::client::conn::http1` over the same stream, driven in
//! the VU's own task, with an I/O wrapper that stamped the phases and
//! counted the bytes. It ran on `bench/http-vs-wrk.sh` (30 VUs, 15 s, one
//! client thread, nginx on loopback), alternating the two builds, 3 rounds
//! each, twice. The medians:
//!
//! | load average | | this framing | hyper | hyper / this |
//! |---|---|---|---|---|
//! | 7-10 | requests/s | 89,066 | 41,820 | 0.47 |
//! | | CPU-s per 100k requests | 0.361 | 0.700 | 1.94 |
//! | 4.5-7 | requests/s | 90,885 | 69,512 | 0.76 |
//! | | CPU-s per 100k requests | 0.367 | 0.659 | 1.80 |
//!
//! `bench/memory.sh` (HTTP part, 1 to 2,000 VUs) gave 10 KiB per VU here
//! against 40 KiB with hyper for a fixed body, and 43 against 74 KiB with
//! `--body-template` (the target is 64 KiB). On a 2-core machine shared
//! with other builds, requests/s moved with the load, but CPU per request
//! did not. The extra ~3 µs per request pays for hyper's dispatcher, its
//! buffers and a request object per call (the A/B cloned a prebuilt header
//! map). So the framing stays here: one write per request, then a head
//! and a body delimited by Content-Length, chunked encoding or the end of
//! the connection.

use std::io;
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncReadExt};

/// Headers a response may carry before we give up on it.
const MAX_HEADERS: usize = 96;
/// A response head larger than this is refused (nginx's default is 8 KiB).
const MAX_HEAD: usize = 64 * 1024;
/// Read granularity: most responses of the APIs we load fit in one read.
const READ_CHUNK: usize = 16 * 1024;
/// A connection's reads until one fills the buffer: a load test holds
/// thousands of connections, most of them answered in a few hundred bytes,
/// and 16 KiB each would be most of a VU's memory.
const FIRST_READ: usize = 2 * 1024;

/// The request line and the fixed headers, encoded once; per request only
/// the body length and the body are added.
#[derive(Debug, Clone)]
pub struct RequestHead {
    prefix: Vec<u8>,
    /// Whether a `Content-Length` goes out even for an empty body: methods
    /// that carry a body (POST, PUT, PATCH) or when a body was given.
    length_always: bool,
}

impl RequestHead {
    /// `headers` are sent in order, after `Host` and a `User-Agent` unless
    /// one is given.
    pub fn new(method: &str, path: &str, host: &str, headers: &[(String, String)], close: bool, body: bool) -> Self {
        let mut p = Vec::with_capacity(256);
        p.extend_from_slice(method.as_bytes());
        p.push(b' ');
        p.extend_from_slice(path.as_bytes());
        p.extend_from_slice(b" HTTP/1.1\r\nHost: ");
        p.extend_from_slice(host.as_bytes());
        p.extend_from_slice(b"\r\n");
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("user-agent")) {
            p.extend_from_slice(concat!("User-Agent: dbload/", env!("CARGO_PKG_VERSION"), "\r\n").as_bytes());
        }
        for (name, value) in headers {
            p.extend_from_slice(name.as_bytes());
            p.extend_from_slice(b": ");
            p.extend_from_slice(value.as_bytes());
            p.extend_from_slice(b"\r\n");
        }
        if close {
            p.extend_from_slice(b"Connection: close\r\n");
        }
        let length_always = body || matches!(method, "POST" | "PUT" | "PATCH");
        RequestHead { prefix: p, length_always }
    }

    /// Appends the whole request for `body` to `out`.
    pub fn encode(&self, body: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(&self.prefix);
        if self.length_always || !body.is_empty() {
            out.extend_from_slice(b"Content-Length: ");
            out.extend_from_slice(itoa::Buffer::new().format(body.len()).as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(body);
    }

    /// Appends the head of a request whose body follows in chunks
    /// ([`chunk`]): one too large to hold whole, written as it is sent.
    pub fn encode_chunked(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.prefix);
        out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
    }
}

/// Width of a chunk's size: 8 hex digits, leading zeros allowed (RFC 9112
/// §7.1), so the size is written in place after the data it counts.
const CHUNK_SIZE_DIGITS: usize = 8;

/// Appends one chunk of a chunked body, its data written by `fill`
/// (returns whether more data follows), and the last chunk once it is the
/// end: a body's bytes go out as they are written, never held whole.
/// Returns what `fill` returned.
pub fn chunk(out: &mut Vec<u8>, fill: impl FnOnce(&mut Vec<u8>) -> bool) -> bool {
    let at = out.len();
    out.extend_from_slice(b"00000000\r\n");
    let more = fill(out);
    let size = out.len() - at - CHUNK_SIZE_DIGITS - 2;
    if size == 0 {
        // A chunk of size 0 would end the body.
        out.truncate(at);
    } else {
        let size = u32::try_from(size).expect("a chunk of less than 4 GiB");
        for (i, digit) in out[at..at + CHUNK_SIZE_DIGITS].iter_mut().enumerate() {
            *digit = b"0123456789abcdef"[(size >> (4 * (CHUNK_SIZE_DIGITS - 1 - i)) & 0xf) as usize];
        }
        out.extend_from_slice(b"\r\n");
    }
    if !more {
        out.extend_from_slice(b"0\r\n\r\n");
    }
    more
}

/// What a response was, once read to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// The connection may carry another request.
    pub keep_alive: bool,
    /// Head and body bytes as they came off the wire.
    pub wire_bytes: u64,
    /// When the first byte of the response arrived.
    pub first_byte: Instant,
}

/// A response that could not be read.
#[derive(Debug)]
pub enum ReadError {
    Io(io::Error),
    /// The peer closed the connection before the response was complete.
    Closed {
        partial: bool,
    },
    /// Not HTTP/1.x, or a malformed head or chunk.
    Malformed(String),
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        ReadError::Io(e)
    }
}

/// Bytes read from one connection and not consumed yet. A response may
/// arrive in pieces, and (rarely) a read may hold more than one response.
#[derive(Debug)]
pub struct ReadBuf {
    buf: Vec<u8>,
    pos: usize,
    /// Room made for each read: [`FIRST_READ`], until a read fills it.
    chunk: usize,
}

impl Default for ReadBuf {
    fn default() -> Self {
        ReadBuf { buf: Vec::new(), pos: 0, chunk: FIRST_READ }
    }
}

impl ReadBuf {
    fn unread(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    fn consume(&mut self, n: usize) {
        self.pos += n;
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
    }

    /// Reads more bytes; 0 at the end of the stream.
    async fn fill<S: AsyncRead + Unpin>(&mut self, s: &mut S) -> io::Result<usize> {
        if self.pos > 0 && self.buf.len() + READ_CHUNK > self.buf.capacity() {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.reserve(self.chunk);
        let room = self.buf.capacity() - self.buf.len();
        let n = s.read_buf(&mut self.buf).await?;
        // Full: larger responses come on this connection; read them in larger pieces.
        if n == room {
            self.chunk = READ_CHUNK;
        }
        Ok(n)
    }

    /// Forgets what a closed connection left.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.pos = 0;
    }
}

/// A response's body as its reader keeps it: the first `keep` bytes, and
/// how many came. The rest is read off the wire and dropped, so what a
/// connection holds is bounded by its reader's need, not by what the
/// server sends (3 VUs of 1 GiB answers held 3.16 GB when bodies were kept whole).
#[derive(Debug, Default)]
pub struct Body {
    kept: Vec<u8>,
    keep: usize,
    len: u64,
}

impl Body {
    /// A body of which the first `keep` bytes are kept (0: only counted).
    pub fn keeping(keep: usize) -> Body {
        Body { kept: Vec::new(), keep, len: 0 }
    }

    /// The bytes kept: the whole body when [`Body::whole`].
    pub fn kept(&self) -> &[u8] {
        &self.kept
    }

    /// The body's size as it came.
    pub fn size(&self) -> u64 {
        self.len
    }

    /// Whether every byte of it was kept.
    pub fn whole(&self) -> bool {
        self.len == self.kept.len() as u64
    }

    fn clear(&mut self) {
        self.kept.clear();
        self.len = 0;
    }

    fn take(&mut self, data: &[u8]) {
        let room = self.keep - self.kept.len();
        self.kept.extend_from_slice(&data[..data.len().min(room)]);
        self.len += data.len() as u64;
    }
}

/// How the body of a response ends.
enum Framing {
    None,
    Length(u64),
    Chunked,
    UntilClose,
}

/// What a reader keeps of a response's head beside its status: the reason
/// phrase (for messages), and its headers when asked (a k6 script's
/// `res.headers`; `dbload http` reads none, and allocates none).
#[derive(Debug, Default)]
pub struct Kept {
    pub reason: String,
    /// Whether [`Kept::headers`] is filled.
    pub keep_headers: bool,
    /// The headers as they came, one `name:value` line each: one string
    /// rather than two per header, since a script rarely reads them
    /// (k6's `res.headers` is made of them on its first read).
    pub headers: String,
}

/// Reads one response from `s`. Its body goes to `body` (for checks and
/// error messages) as far as that keeps it; its reason phrase (and headers,
/// if asked) go to `kept` (buffers reused: no allocation per response).
/// `head_request`: the response to HEAD has no body whatever its headers say.
pub async fn read_response<S: AsyncRead + Unpin>(
    s: &mut S,
    rb: &mut ReadBuf,
    body: &mut Body,
    kept: &mut Kept,
    head_request: bool,
) -> Result<Response, ReadError> {
    body.clear();
    let mut first_byte = None;
    let mut wire_bytes = 0u64;
    // The head, skipping interim (1xx) responses.
    let (status, keep_alive, framing) = loop {
        let parsed = {
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut r = httparse::Response::new(&mut headers);
            match r.parse(rb.unread()) {
                Ok(httparse::Status::Complete(len)) => {
                    kept.reason.clear();
                    kept.reason.push_str(r.reason.unwrap_or(""));
                    if kept.keep_headers {
                        kept.headers.clear();
                        for h in r.headers.iter() {
                            kept.headers.push_str(h.name);
                            kept.headers.push(':');
                            kept.headers.push_str(&String::from_utf8_lossy(h.value));
                            kept.headers.push('\n');
                        }
                    }
                    Some((len, head_of(&r)?))
                }
                Ok(httparse::Status::Partial) => None,
                Err(e) => return Err(ReadError::Malformed(format!("bad response head: {e}"))),
            }
        };
        if let Some((len, head)) = parsed {
            rb.consume(len);
            wire_bytes += len as u64;
            let (status, keep_alive, framing) = head;
            if (100..200).contains(&status) && status != 101 {
                continue;
            }
            let framing = if head_request || status == 204 || status == 304 { Framing::None } else { framing };
            break (status, keep_alive, framing);
        }
        if rb.unread().len() > MAX_HEAD {
            return Err(ReadError::Malformed(format!("response head larger than {} KiB", MAX_HEAD / 1024)));
        }
        let n = rb.fill(s).await?;
        first_byte.get_or_insert_with(Instant::now);
        if n == 0 {
            return Err(ReadError::Closed { partial: !rb.unread().is_empty() || wire_bytes > 0 });
        }
    };
    let first_byte = first_byte.unwrap_or_else(Instant::now);
    let mut keep_alive = keep_alive;
    match framing {
        Framing::None => {}
        Framing::Length(mut left) => {
            while left > 0 {
                if rb.unread().is_empty() && rb.fill(s).await? == 0 {
                    return Err(ReadError::Closed { partial: true });
                }
                let take = (rb.unread().len() as u64).min(left) as usize;
                body.take(&rb.unread()[..take]);
                rb.consume(take);
                left -= take as u64;
                wire_bytes += take as u64;
            }
        }
        Framing::UntilClose => {
            keep_alive = false;
            loop {
                let data = rb.unread();
                body.take(data);
                wire_bytes += data.len() as u64;
                let n = data.len();
                rb.consume(n);
                if rb.fill(s).await? == 0 {
                    break;
                }
            }
        }
        Framing::Chunked => wire_bytes += read_chunked(s, rb, body).await?,
    }
    Ok(Response { status, keep_alive, wire_bytes, first_byte })
}

type Head = (u16, bool, Framing);

fn head_of(r: &httparse::Response<'_, '_>) -> Result<Head, ReadError> {
    let status = r.code.unwrap_or(0);
    let http11 = r.version == Some(1);
    let mut keep_alive = http11;
    let mut chunked = false;
    let mut length = None;
    for h in r.headers.iter() {
        if h.name.eq_ignore_ascii_case("connection") {
            for token in h.value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    keep_alive = true;
                }
            }
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = h.value.split(|&b| b == b',').any(|t| t.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if h.name.eq_ignore_ascii_case("content-length") {
            let n = std::str::from_utf8(h.value).ok().and_then(|v| v.trim().parse::<u64>().ok());
            length = Some(n.ok_or_else(|| ReadError::Malformed("bad Content-Length".into()))?);
        }
    }
    // RFC 9112 §6.3: chunked wins over a length; no length means "until close".
    let framing = match (chunked, length) {
        (true, _) => Framing::Chunked,
        (false, Some(n)) => Framing::Length(n),
        (false, None) => Framing::UntilClose,
    };
    Ok((status, keep_alive, framing))
}

/// Reads a chunked body through its last chunk and trailers; returns the
/// bytes it took off the wire.
async fn read_chunked<S: AsyncRead + Unpin>(s: &mut S, rb: &mut ReadBuf, body: &mut Body) -> Result<u64, ReadError> {
    let mut wire = 0u64;
    loop {
        // The chunk-size line.
        let size = loop {
            match httparse::parse_chunk_size(rb.unread()) {
                Ok(httparse::Status::Complete((len, size))) => {
                    rb.consume(len);
                    wire += len as u64;
                    break size;
                }
                Ok(httparse::Status::Partial) => {
                    if rb.fill(s).await? == 0 {
                        return Err(ReadError::Closed { partial: true });
                    }
                }
                Err(_) => return Err(ReadError::Malformed("bad chunk size".into())),
            }
        };
        if size == 0 {
            break;
        }
        // The data, then its CRLF. A size near u64::MAX is no real body: refused, not wrapped.
        let mut left =
            size.checked_add(2).ok_or_else(|| ReadError::Malformed(format!("chunk size {size:x} too large")))?;
        while left > 0 {
            if rb.unread().is_empty() && rb.fill(s).await? == 0 {
                return Err(ReadError::Closed { partial: true });
            }
            let take = (rb.unread().len() as u64).min(left) as usize;
            let data_part = (take as u64).min(left.saturating_sub(2)) as usize;
            body.take(&rb.unread()[..data_part]);
            rb.consume(take);
            left -= take as u64;
            wire += take as u64;
        }
    }
    // Trailers: header lines up to an empty line.
    loop {
        match rb.unread().windows(2).position(|w| w == b"\r\n") {
            Some(end) => {
                rb.consume(end + 2);
                wire += end as u64 + 2;
                if end == 0 {
                    return Ok(wire);
                }
            }
            None => {
                if rb.fill(s).await? == 0 {
                    return Err(ReadError::Closed { partial: true });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `wire` in pieces of `step` bytes, as a slow network would.
    struct Pieces {
        data: Vec<u8>,
        at: usize,
        step: usize,
    }

    impl AsyncRead for Pieces {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            let end = (self.at + self.step).min(self.data.len()).min(self.at + buf.remaining());
            buf.put_slice(&self.data[self.at..end]);
            self.at = end;
            std::task::Poll::Ready(Ok(()))
        }
    }

    fn read_all(wire: &str, step: usize, head: bool) -> Vec<Result<(Response, String), String>> {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let mut s = Pieces { data: wire.as_bytes().to_vec(), at: 0, step };
            let mut rb = ReadBuf::default();
            let mut out = Vec::new();
            loop {
                let mut body = Body::keeping(usize::MAX);
                match read_response(&mut s, &mut rb, &mut body, &mut Kept::default(), head).await {
                    Ok(r) => {
                        let ka = r.keep_alive;
                        out.push(Ok((r, String::from_utf8(body.kept).unwrap())));
                        if !ka {
                            break;
                        }
                    }
                    Err(ReadError::Closed { partial: false }) => break,
                    Err(e) => {
                        out.push(Err(format!("{e:?}")));
                        break;
                    }
                }
            }
            out
        })
    }

    /// A connection answered in small responses keeps a small read buffer
    /// (thousands of VUs hold one each); a larger response grows it.
    #[test]
    fn the_read_buffer_starts_small_and_grows_for_large_responses() {
        let small = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        let large = format!("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n{}", "x".repeat(100_000));
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let mut s = Pieces { data: small.repeat(100).into_bytes(), at: 0, step: small.len() };
            let mut rb = ReadBuf::default();
            for _ in 0..100 {
                read_response(&mut s, &mut rb, &mut Body::default(), &mut Kept::default(), false).await.unwrap();
            }
            assert!(rb.buf.capacity() <= 4 * 1024, "{} bytes held for 40-byte responses", rb.buf.capacity());
            let mut s = Pieces { data: large.into_bytes(), at: 0, step: 1 << 20 };
            let mut body = Body::keeping(usize::MAX);
            read_response(&mut s, &mut rb, &mut body, &mut Kept::default(), false).await.unwrap();
            assert_eq!(body.kept().len(), 100_000);
            assert_eq!(rb.chunk, READ_CHUNK, "reads of a large response are not 2 KiB each");
        });
    }

    /// Issue 29, item 4: a reader keeps what it asked for, whatever the
    /// framing, and the body is counted whole.
    #[test]
    fn a_body_is_kept_as_far_as_its_reader_keeps_it_and_counted_whole() {
        let wire = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789\
                    HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n012345\r\n4\r\n6789\r\n0\r\n\r\n\
                    HTTP/1.0 200 OK\r\n\r\n0123456789";
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        for keep in [0, 4, 10, 100] {
            let mut s = Pieces { data: wire.as_bytes().to_vec(), at: 0, step: 3 };
            let mut rb = ReadBuf::default();
            let mut body = Body::keeping(keep);
            for framing in ["length", "chunked", "until close"] {
                rt.block_on(read_response(&mut s, &mut rb, &mut body, &mut Kept::default(), false)).unwrap();
                assert_eq!(body.kept(), &b"0123456789"[..keep.min(10)], "{framing}, keep {keep}");
                assert_eq!((body.size(), body.whole()), (10, keep >= 10), "{framing}, keep {keep}");
            }
        }
    }

    #[test]
    fn framings() {
        let wire = "HTTP/1.1 100 Continue\r\n\r\n\
                    HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello\
                    HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nT: v\r\n\r\n\
                    HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n\
                    HTTP/1.0 200 OK\r\n\r\nuntil the end";
        for step in [1, 3, 7, 1000] {
            let got = read_all(wire, step, false);
            let summary: Vec<(u16, String, bool)> =
                got.into_iter().map(|r| r.map(|(r, b)| (r.status, b, r.keep_alive)).unwrap()).collect();
            assert_eq!(
                summary,
                vec![
                    (200, "hello".into(), true),
                    (201, "abc0123456789abcdef".into(), true),
                    (204, "".into(), true),
                    (200, "until the end".into(), false),
                ],
                "step {step}"
            );
        }
    }

    #[test]
    fn wire_bytes_count_everything() {
        let wire = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
        let got = read_all(wire, 4, false);
        assert_eq!(got[0].as_ref().unwrap().0.wire_bytes, wire.len() as u64);
    }

    #[test]
    fn close_and_head() {
        let got = read_all("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", 5, false);
        assert!(!got[0].as_ref().unwrap().0.keep_alive);
        let got = read_all("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", 5, true);
        assert_eq!(got[0].as_ref().unwrap().1, "");
    }

    #[test]
    fn truncated_and_malformed() {
        let got = read_all("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", 3, false);
        assert!(got[0].as_ref().unwrap_err().contains("Closed { partial: true }"), "{got:?}");
        let got = read_all("SSH-2.0-OpenSSH\r\n\r\n", 100, false);
        assert!(got[0].as_ref().unwrap_err().contains("Malformed"), "{got:?}");
    }

    #[test]
    fn a_chunk_size_too_large_to_read_is_malformed_not_a_panic() {
        let got = read_all("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nabc", 100, false);
        assert!(got[0].as_ref().unwrap_err().contains("Malformed"), "{got:?}");
    }

    #[test]
    fn request_encoding() {
        let h = [("Content-Type".to_string(), "application/json".to_string())];
        let head = RequestHead::new("POST", "/v2/notify?x=1", "ql:8668", &h, false, true);
        let mut out = Vec::new();
        head.encode(b"{}", &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("POST /v2/notify?x=1 HTTP/1.1\r\nHost: ql:8668\r\nUser-Agent: dbload/"), "{text}");
        assert!(text.ends_with("Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"), "{text}");
        let get = RequestHead::new("GET", "/", "h", &[], true, false);
        let mut out = Vec::new();
        get.encode(b"", &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(text.ends_with("Connection: close\r\n\r\n") && !text.contains("Content-Length"), "{text}");
    }

    #[test]
    fn chunked_request_encoding() {
        let head = RequestHead::new("POST", "/_sql", "h", &[], false, true);
        let mut out = Vec::new();
        head.encode_chunked(&mut out);
        let pieces: [&[u8]; 4] = [b"{\"a\":", b"", &[b'1'; 300], b"}"];
        for (i, piece) in pieces.iter().enumerate() {
            let more = chunk(&mut out, |o| {
                o.extend_from_slice(piece);
                i < pieces.len() - 1
            });
            assert_eq!(more, i < pieces.len() - 1);
        }
        let text = String::from_utf8(out).unwrap();
        let ones = "1".repeat(300);
        let body = format!("00000005\r\n{{\"a\":\r\n0000012c\r\n{ones}\r\n00000001\r\n}}\r\n0\r\n\r\n");
        assert!(text.ends_with(&format!("Transfer-Encoding: chunked\r\n\r\n{body}")), "{text}");
        assert!(!text.contains("Content-Length"), "{text}");
        // What this side reads back, as a server would.
        let wire = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{body}");
        assert_eq!(read_all(&wire, 7, false)[0].as_ref().unwrap().1, format!("{{\"a\":{ones}}}"));
    }
}
