//! Binary COPY framing (`COPY ... FROM STDIN (FORMAT binary)`): a header,
//! one tuple per row (field count, then length-prefixed fields), a trailer.

use bytes::{BufMut, BytesMut};

use super::write_field;
use crate::model::Batch;

const SIGNATURE: &[u8; 11] = b"PGCOPY\n\xff\r\n\0";

/// The file header: signature, flags (no OIDs), no header extension.
pub fn header(out: &mut BytesMut) {
    out.put_slice(SIGNATURE);
    out.put_i32(0);
    out.put_i32(0);
}

/// The tuples of a batch, without header or trailer.
pub fn rows(batch: &Batch, out: &mut BytesMut) {
    let fields = batch.columns.len() as i16;
    for i in 0..batch.len {
        out.put_i16(fields);
        for col in &batch.columns {
            write_field(col, i, out);
        }
    }
}

/// The end-of-data marker.
pub fn trailer(out: &mut BytesMut) {
    out.put_i16(-1);
}

/// A whole COPY payload for one batch.
pub fn encode(batch: &Batch, out: &mut BytesMut) {
    header(out);
    rows(batch, out);
    trailer(out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{measurement, ModelSpec, Values};
    use bytes::Buf;

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
}
