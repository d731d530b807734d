//! Encoders: how a [`Batch`] becomes bytes on the wire
//! for each ingest method. The COPY encoders write whole payloads ahead of
//! time (off the send path); INSERT and UNNEST bind parameters whose binary
//! form is written by the driver through `ToSql`.

pub mod copy_binary;
pub mod copy_csv;
pub mod crate_bulk;
pub mod insert_values;
pub mod unnest;

use std::borrow::Cow;

use bytes::{BufMut, BytesMut};
use postgres_types::Type;

use crate::dialect::{cratedb, Method};

use crate::ident::TableName;
use crate::model::{Batch, Schema, SqlType, Values};

/// What travels from a worker's producer thread to its sender: a batch and,
/// for the COPY methods, its encoded bytes. Payloads circulate between the
/// two and are reused, so the hot path does not allocate.
#[derive(Debug)]
pub struct Payload {
    pub batch: Batch,
    pub bytes: BytesMut,
}

impl Payload {
    pub fn new(schema: &Schema) -> Self {
        Payload { batch: Batch::new(schema), bytes: BytesMut::new() }
    }

    pub fn rows(&self) -> u64 {
        self.batch.len as u64
    }
}

impl crate::op::Operation for Payload {
    fn units(&self) -> u64 {
        self.rows()
    }
    fn in_doubt_when_lost(&self) -> bool {
        true
    }
}

/// How the producer frames a batch's bytes.
#[derive(Debug, Clone)]
pub enum Framing {
    /// Nothing to encode ahead: parameters are bound at send time, and a
    /// COPY payload is encoded in [`CopyPieces`] as it is sent.
    None,
    /// Binary COPY tuples only: one stream spans all batches (a COPY file).
    CopyRows,
}

impl Framing {
    /// Encodes `payload.batch` into `payload.bytes`.
    pub fn encode(&self, payload: &mut Payload) {
        payload.bytes.clear();
        let (batch, out) = (&payload.batch, &mut payload.bytes);
        match self {
            Framing::None => {}
            Framing::CopyRows => copy_binary::rows(batch, out),
        }
    }
}

/// A batch's COPY payload (binary: header, tuples, trailer; CSV: lines)
/// in pieces of about [`COPY_PIECE`] bytes, each encoded when it is asked
/// for. A sender thus holds the batch's values and a piece or two, never
/// the whole payload encoded beside them (10,000 rows of 10 metrics:
/// 1.4 MB), and encoding a piece overlaps with the server reading the
/// pieces before it.
#[derive(Debug)]
pub struct CopyPieces<'a> {
    batch: &'a Batch,
    csv: bool,
    /// The next row to encode.
    next: usize,
    /// Whether the first piece (with the binary header) was made.
    started: bool,
    /// Whether the last piece (with the binary trailer) was made.
    done: bool,
}

/// About how many bytes a piece of a COPY payload holds (one row more at
/// most). Small, so that the pieces in flight (the one being encoded, one
/// in the driver's channel, one in its write buffer) stay a small part of
/// a worker's memory; large beside the 5 bytes of its CopyData message.
pub const COPY_PIECE: usize = 64 * 1024;

impl<'a> CopyPieces<'a> {
    /// The pieces of `batch`'s payload for `method` (`copy` or `copy-csv`).
    pub fn new(batch: &'a Batch, method: Method) -> Self {
        CopyPieces { batch, csv: method == Method::CopyCsv, next: 0, started: false, done: false }
    }
}

impl Iterator for CopyPieces<'_> {
    type Item = bytes::Bytes;

    fn next(&mut self) -> Option<bytes::Bytes> {
        if self.done {
            return None;
        }
        // Room for the row that crosses the mark, so the piece is not grown
        // (doubled) for it: a piece is allocated once, and freed by the
        // driver once it is written to the socket.
        let mut piece = BytesMut::with_capacity(COPY_PIECE + COPY_PIECE / 4);
        if !self.started && !self.csv {
            copy_binary::header(&mut piece);
        }
        self.started = true;
        while self.next < self.batch.len && piece.len() < COPY_PIECE {
            match self.csv {
                true => copy_csv::row(self.batch, self.next, &mut piece),
                false => copy_binary::row(self.batch, self.next, &mut piece),
            }
            self.next += 1;
        }
        if self.next == self.batch.len {
            if !self.csv {
                copy_binary::trailer(&mut piece);
            }
            self.done = true;
        }
        Some(piece.freeze()).filter(|piece| !piece.is_empty())
    }
}

/// What a CrateDB request body needs besides the rows: the statement, made
/// once. The sender writes each batch's body as it sends it
/// ([`crate_bulk::Body`]), so no body waits, encoded, in a pool. It is made again for a batch it does not fit: a short batch of a
/// multi-row `VALUES` statement, and a batch that leaves columns to their
/// defaults (insert-json), whose statement names only the others. Nothing
/// is prepared over HTTP, so that costs a few hundred bytes of text beside
/// a body of rows, and only for such batches.
#[derive(Debug)]
pub struct CrateBody {
    method: Method,
    table: TableName,
    schema: Schema,
    upsert: bool,
    /// The statement for a full batch.
    stmt: String,
    batch_size: usize,
}

impl CrateBody {
    pub fn new(method: Method, table: TableName, schema: Schema, upsert: bool, batch_size: usize) -> CrateBody {
        let mut body = CrateBody { method, table, schema, upsert, stmt: String::new(), batch_size };
        body.stmt = body.statement(&body.schema, batch_size);
        body
    }

    /// The statement for `rows` rows of the columns of `schema`.
    fn statement(&self, schema: &Schema, rows: usize) -> String {
        match self.method {
            Method::Bulk => cratedb::insert_bulk(&self.table, schema, self.upsert),
            Method::Unnest => cratedb::insert_unnest(&self.table, schema, self.upsert, false),
            _ => cratedb::insert_values(&self.table, schema, rows, self.upsert),
        }
    }

    /// The body of `batch`'s request, to be written as it is sent.
    pub fn body<'a>(&'a self, batch: &'a Batch) -> crate_bulk::Body<'a> {
        let shape = match self.method {
            Method::Bulk => crate_bulk::Shape::Bulk,
            Method::Unnest => crate_bulk::Shape::Unnest,
            _ => crate_bulk::Shape::Values,
        };
        let per_row = shape != crate_bulk::Shape::Values;
        let stmt = if batch.omitted.is_empty() && (per_row || batch.len == self.batch_size) {
            Cow::Borrowed(self.stmt.as_str())
        } else {
            Cow::Owned(self.statement(&self.schema.without(&batch.omitted), batch.len))
        };
        crate_bulk::Body::new(shape, stmt, batch)
    }
}

/// Microseconds between the Unix epoch and PostgreSQL's (2000-01-01).
const PG_EPOCH_OFFSET_US: i64 = 946_684_800_000_000;

/// The binary wire form (PostgreSQL `*send`) of row `i`, without a length.
/// Shared by binary COPY fields, bound parameters and array elements.
pub(crate) fn write_binary(values: &Values, i: usize, out: &mut BytesMut) {
    match values {
        Values::Timestamptz(v) => out.put_i64(v[i] - PG_EPOCH_OFFSET_US),
        Values::Oid(v) => out.put_u32(v[i]),
        Values::Int4(v) => out.put_i32(v[i]),
        Values::Float8(v) => out.put_f64(v[i]),
        Values::Jsonb { .. } => {
            out.put_u8(1); // jsonb binary format version
            out.put_slice(values.json(i).as_bytes());
        }
        // The binary form of `text` (and of a parameter sent in text format);
        // binary COPY is refused for text-form columns of other types.
        Values::Text { .. } => out.put_slice(values.json(i).as_bytes()),
    }
}

/// The text form of row `i` (the type's input syntax), for a server whose
/// column has another type than ours: it reads the text with that type's
/// own input function (CrateDB: `bigint` device ids, `json` objects).
pub(crate) fn write_text(values: &Values, i: usize, out: &mut BytesMut) {
    match values {
        Values::Timestamptz(v) => {
            use std::fmt::Write as _;
            let t = chrono::DateTime::from_timestamp_micros(v[i]).expect("generated times are in range");
            // Formatted straight into the buffer: no string per value.
            let _ = write!(out, "{}", t.format("%Y-%m-%dT%H:%M:%S%.fZ"));
        }
        Values::Oid(v) => out.put_slice(itoa::Buffer::new().format(v[i]).as_bytes()),
        Values::Int4(v) => out.put_slice(itoa::Buffer::new().format(v[i]).as_bytes()),
        Values::Float8(v) => out.put_slice(ryu::Buffer::new().format(v[i]).as_bytes()),
        Values::Jsonb { .. } | Values::Text { .. } => out.put_slice(values.json(i).as_bytes()),
    }
}

/// Byte length of [`write_binary`]'s output, for length-prefixed framing.
pub(crate) fn binary_len(values: &Values, i: usize) -> usize {
    match values {
        Values::Timestamptz(_) | Values::Float8(_) => 8,
        Values::Oid(_) | Values::Int4(_) => 4,
        Values::Jsonb { .. } => 1 + values.json(i).len(),
        Values::Text { .. } => values.json(i).len(),
    }
}

/// A length-prefixed binary field, as COPY rows and array elements use
/// (length -1: NULL).
pub(crate) fn write_field(values: &Values, i: usize, out: &mut BytesMut) {
    if values.is_null(i) {
        out.put_i32(-1);
        return;
    }
    out.put_i32(binary_len(values, i) as i32);
    write_binary(values, i, out);
}

/// An element of a PostgreSQL array literal (`{…}`): double-quoted, with
/// `"` and `\` escaped, so that any text is one element.
pub fn quote_array_element(element: &[u8], out: &mut impl BufMut) {
    out.put_u8(b'"');
    for &b in element {
        if b == b'"' || b == b'\\' {
            out.put_u8(b'\\');
        }
        out.put_u8(b);
    }
    out.put_u8(b'"');
}

/// The server type our values of `ty` are encoded as.
pub fn pg_type(ty: SqlType) -> Type {
    match ty {
        SqlType::Timestamptz => Type::TIMESTAMPTZ,
        SqlType::Oid => Type::OID,
        SqlType::Int4 => Type::INT4,
        SqlType::Float8 => Type::FLOAT8,
        SqlType::Jsonb => Type::JSONB,
        SqlType::Text { .. } => Type::TEXT,
    }
}

/// The array type of [`pg_type`], for UNNEST parameters.
pub fn pg_array_type(ty: SqlType) -> Type {
    match ty {
        SqlType::Timestamptz => Type::TIMESTAMPTZ_ARRAY,
        SqlType::Oid => Type::OID_ARRAY,
        SqlType::Int4 => Type::INT4_ARRAY,
        SqlType::Float8 => Type::FLOAT8_ARRAY,
        SqlType::Jsonb => Type::JSONB_ARRAY,
        SqlType::Text { .. } => Type::TEXT_ARRAY,
    }
}

/// Whether a server-side type is the one our values are encoded as. Text
/// values go as text, which the server reads as the column's type.
pub(crate) fn matches_type(ty: SqlType, pg: &Type) -> bool {
    *pg == pg_type(ty) || matches!(ty, SqlType::Text { .. })
}

/// The error a bound parameter gives when the table's column has another type
/// than the model writes (an `--append` table created by someone else).
pub(crate) fn type_mismatch(ty: SqlType, pg: &Type) -> Box<dyn std::error::Error + Sync + Send> {
    format!("the model writes {} but the column is {pg}", ty.pg_name()).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{measurement, Column, ModelSpec};

    /// Issue 18 item 3: a COPY payload is made a piece at a time, each no
    /// bigger than a piece and one row, so a sender never holds a batch's
    /// whole encoding; together the pieces are the payload, in order.
    #[test]
    fn a_copy_payload_is_made_in_bounded_pieces_that_together_are_the_payload() {
        let model = ModelSpec::Measurement(measurement::Options { devices: 10, metrics: 10, jsonb: false });
        let mut batch = Batch::new(&model.schema());
        model.generator(1, 0, 1_700_000_000_000_000, 10_000).next_batch(&mut batch, 10_000);
        for method in [Method::Copy, Method::CopyCsv] {
            let row = |i| {
                let mut out = BytesMut::new();
                match method {
                    Method::CopyCsv => copy_csv::row(&batch, i, &mut out),
                    _ => copy_binary::row(&batch, i, &mut out),
                }
                out
            };
            let mut whole = BytesMut::new();
            if method == Method::Copy {
                copy_binary::header(&mut whole);
            }
            (0..batch.len).for_each(|i| whole.extend_from_slice(&row(i)));
            if method == Method::Copy {
                copy_binary::trailer(&mut whole);
            }
            let pieces: Vec<_> = CopyPieces::new(&batch, method).collect();
            let biggest = pieces.iter().map(|p| p.len()).max().unwrap();
            assert!(biggest <= COPY_PIECE + row(0).len() + 2, "{method}: a piece of {biggest} bytes");
            assert!(pieces.len() > 10, "{method}: {} pieces for {} bytes", pieces.len(), whole.len());
            assert_eq!(pieces.concat(), whole.to_vec(), "{method}");
        }
        let empty = Batch::new(&model.schema());
        assert_eq!(CopyPieces::new(&empty, Method::Copy).count(), 1, "header and trailer");
        assert_eq!(CopyPieces::new(&empty, Method::CopyCsv).count(), 0);
    }

    /// Issue 13 item 3: a CrateDB body for a batch that leaves columns to
    /// their defaults names only the columns it sends, in its statement and
    /// in each row.
    #[test]
    fn crate_bodies_name_the_columns_a_batch_sends() {
        let column = |name: &str, ty| Column { name: name.into(), ty, not_null: false, cast: None, fields: Vec::new() };
        let types = [SqlType::Timestamptz, SqlType::Oid, SqlType::Int4, SqlType::Float8, SqlType::Jsonb];
        let names = ["t", "id", "n", "x", "doc"];
        let columns = names.iter().zip(types).map(|(n, ty)| column(n, ty)).collect();
        let schema = Schema { columns, key: Vec::new(), metrics_per_row: 0 };
        let table = TableName::parse("t").unwrap();
        let mut batch = crate_bulk::tests::batch(&[(0, 7, 1, 0.5, "{}"), (1000, 8, 2, 1.5, "{}")]);
        for method in [Method::Bulk, Method::Unnest, Method::Insert] {
            let body = CrateBody::new(method, table.clone(), schema.clone(), false, 2);
            for omitted in [vec![], vec![1], vec![1, 4]] {
                batch.omitted = omitted.clone();
                let mut out = Vec::new();
                body.body(&batch).write_all(&mut out);
                let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
                let stmt = json["stmt"].as_str().unwrap();
                let sent = schema.without(&omitted);
                assert_eq!(stmt, body.statement(&sent, 2), "{method} {omitted:?}");
                assert!(omitted.iter().all(|&c| !stmt.contains(&format!("\"{}\"", names[c]))), "{stmt}");
                let values = match method {
                    Method::Bulk => json["bulk_args"][0].as_array().unwrap().len(),
                    Method::Unnest => json["args"].as_array().unwrap().len(),
                    _ => json["args"].as_array().unwrap().len() / 2,
                };
                assert_eq!(values, sent.columns.len(), "{method} {omitted:?}: {json}");
            }
        }
    }
}
