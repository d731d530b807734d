//! Binary COPY framing (`COPY ... FROM STDIN (FORMAT binary)`): a header,
//! one tuple per row (field count, then length-prefixed fields), a trailer.
//! Written for ingest; read back ([`TupleSplitter`]) to cut a source's
//! `COPY ... TO STDOUT (FORMAT binary)` into batches for `insert-from-sql`.

use bytes::{Buf, BufMut, BytesMut};

use super::write_field;
use crate::model::Batch;

const SIGNATURE: &[u8; 11] = b"PGCOPY\n\xff\r\n\0";

/// The file header: signature, flags (no OIDs), no header extension.
pub fn header(out: &mut BytesMut) {
    out.put_slice(SIGNATURE);
    out.put_i32(0);
    out.put_i32(0);
}

/// The tuples of a batch (the columns it sends), without header or trailer.
pub fn rows(batch: &Batch, out: &mut BytesMut) {
    for i in 0..batch.len {
        row(batch, i, out);
    }
}

/// The tuple of row `i` of a batch (the columns it sends).
pub fn row(batch: &Batch, i: usize, out: &mut BytesMut) {
    out.put_i16(batch.sent_len() as i16);
    for col in batch.sent() {
        write_field(col, i, out);
    }
}

/// The end-of-data marker.
pub fn trailer(out: &mut BytesMut) {
    out.put_i16(-1);
}

/// Cuts a binary COPY stream, arriving in chunks of any size, into whole
/// tuples, so each batch can be sent as a COPY payload of its own. Tuples are
/// passed on as they are: no value is decoded.
#[derive(Debug, Default)]
pub struct TupleSplitter {
    /// Input not yet passed on: at most a partial tuple and one chunk.
    pending: BytesMut,
    header_read: bool,
    trailer_read: bool,
}

impl TupleSplitter {
    pub fn push(&mut self, chunk: &[u8]) {
        self.pending.extend_from_slice(chunk);
    }

    /// Whether the end-of-data marker was read.
    pub fn finished(&self) -> bool {
        self.trailer_read
    }

    /// Moves the next whole tuple to `out`; false when more input is needed
    /// or the stream is finished.
    pub fn take_tuple(&mut self, out: &mut BytesMut) -> Result<bool, String> {
        if !self.header_read {
            let Some(len) = self.header_len()? else { return Ok(false) };
            self.pending.advance(len);
            self.header_read = true;
        }
        if self.trailer_read {
            return Ok(false);
        }
        match tuple_len(&self.pending) {
            Some(None) => {
                self.pending.advance(2);
                self.trailer_read = true;
                Ok(false)
            }
            Some(Some(len)) => {
                out.extend_from_slice(&self.pending[..len]);
                self.pending.advance(len);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// The header's length once it is all here: signature, flags, extension.
    fn header_len(&self) -> Result<Option<usize>, String> {
        let p = &self.pending[..];
        if p.len() < 19 {
            return Ok(None);
        }
        if &p[..11] != SIGNATURE {
            return Err("not a binary COPY stream (bad signature)".into());
        }
        let flags = u32::from_be_bytes(p[11..15].try_into().expect("4 bytes"));
        if flags & (1 << 16) != 0 {
            return Err("binary COPY stream with OIDs, which COPY FROM cannot take".into());
        }
        let extension = u32::from_be_bytes(p[15..19].try_into().expect("4 bytes")) as usize;
        Ok((p.len() >= 19 + extension).then_some(19 + extension))
    }
}

/// The length of the tuple `p` starts with: `None` if it is not all here,
/// `Some(None)` for the trailer.
fn tuple_len(p: &[u8]) -> Option<Option<usize>> {
    let fields = i16::from_be_bytes(p.get(..2)?.try_into().expect("2 bytes"));
    if fields == -1 {
        return Some(None);
    }
    let mut at = 2;
    for _ in 0..fields {
        let len = i32::from_be_bytes(p.get(at..at + 4)?.try_into().expect("4 bytes"));
        at += 4 + len.max(0) as usize;
    }
    (p.len() >= at).then_some(Some(at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Method;
    use crate::encode::CopyPieces;
    use crate::model::{measurement, ModelSpec, Values};

    /// A whole COPY payload for one batch, as a sink sends it in pieces.
    fn encode(batch: &Batch, out: &mut BytesMut) {
        CopyPieces::new(batch, Method::Copy).for_each(|piece| out.extend_from_slice(&piece));
    }

    /// Decodes our own output back into values: the encoder round-trips.
    #[test]
    fn round_trips_a_batch() {
        let spec = ModelSpec::Measurement(measurement::Options { devices: 2, metrics: 3, jsonb: false });
        let mut batch = Batch::new(&spec.schema());
        spec.generator(9, 0, 1_700_000_000_000_000, 5).next_batch(&mut batch, 5);
        let mut buf = BytesMut::new();
        encode(&batch, &mut buf);
        let mut b = buf.freeze();
        assert_eq!(&b[..11], SIGNATURE);
        b.advance(19);
        for i in 0..5 {
            assert_eq!(b.get_i16(), 5);
            assert_eq!(b.get_i32(), 8);
            let Values::Timestamptz(t) = &batch.columns[0] else { panic!() };
            assert_eq!(b.get_i64(), t[i] - 946_684_800_000_000);
            assert_eq!(b.get_i32(), 4);
            let Values::Oid(d) = &batch.columns[1] else { panic!() };
            assert_eq!(b.get_u32(), d[i]);
            for m in 2..5 {
                assert_eq!(b.get_i32(), 8);
                let Values::Float8(v) = &batch.columns[m] else { panic!() };
                assert_eq!(b.get_f64().to_bits(), v[i].to_bits());
            }
        }
        assert_eq!(b.get_i16(), -1);
        assert!(b.is_empty());
    }

    /// Whatever the chunking, the splitter gives back exactly the tuples
    /// that were framed.
    #[test]
    fn splitter_gives_back_the_tuples() {
        let spec = ModelSpec::Measurement(measurement::Options { devices: 2, metrics: 3, jsonb: true });
        let mut batch = Batch::new(&spec.schema());
        spec.generator(9, 0, 1_700_000_000_000_000, 7).next_batch(&mut batch, 7);
        let mut stream = BytesMut::new();
        encode(&batch, &mut stream);
        let mut tuples = BytesMut::new();
        rows(&batch, &mut tuples);
        for step in [1, 3, 5, 19, 20, 33, stream.len() - 1, stream.len()] {
            let mut s = TupleSplitter::default();
            let mut out = BytesMut::new();
            let mut n = 0;
            for chunk in stream.chunks(step) {
                s.push(chunk);
                while s.take_tuple(&mut out).unwrap() {
                    n += 1;
                }
            }
            assert!(s.finished(), "chunks of {step}");
            assert_eq!((n, &out[..]), (7, &tuples[..]), "chunks of {step}");
        }
        let mut s = TupleSplitter::default();
        s.push(b"PGCOPY\n\xff\r\n\x01\0\0\0\0\0\0\0\0");
        assert!(s.take_tuple(&mut BytesMut::new()).unwrap_err().contains("signature"));
    }
}
