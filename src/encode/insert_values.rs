//! Bound parameters for multi-row `INSERT ... VALUES`: one parameter per
//! value, written in binary straight from the batch's columns.

use bytes::BytesMut;
use postgres_types::{Format, IsNull, ToSql, Type};

use super::{matches_type, write_binary, write_text};
use crate::model::{Batch, Values};

/// One value of a batch (`row` of `values`) as a bound parameter.
#[derive(Debug)]
pub struct Param<'a> {
    pub values: &'a Values,
    pub row: usize,
}

impl ToSql for Param<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        if self.values.is_null(self.row) {
            return Ok(IsNull::Yes);
        }
        match self.encode_format(ty) {
            Format::Binary => write_binary(self.values, self.row, out),
            Format::Text => write_text(self.values, self.row, out),
        }
        Ok(IsNull::No)
    }

    /// Our binary form where the column has our type; else the text form,
    /// which the server reads with the column's own input function (text
    /// values always: they are in that form already; other engines' types,
    /// e.g. CrateDB's bigint ids and json objects), or refuses with a
    /// message, counted as a failed batch.
    fn encode_format(&self, ty: &Type) -> Format {
        match self.values {
            Values::Text { .. } => Format::Text,
            _ if matches_type(self.values.sql_type(), ty) => Format::Binary,
            _ => Format::Text,
        }
    }

    fn accepts(_: &Type) -> bool {
        // Checked per value in to_sql, where the column is known.
        true
    }

    postgres_types::to_sql_checked!();
}

/// The parameters of rows `rows` of a batch (the columns it sends),
/// row-major as `VALUES` lists them.
pub fn params(batch: &Batch, rows: std::ops::Range<usize>) -> impl ExactSizeIterator<Item = Param<'_>> + Clone {
    let width = batch.sent_len();
    let first = rows.start;
    (0..rows.len() * width).map(move |k| Param { values: batch.sent_column(k % width), row: first + k / width })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_column_types_get_the_text_form() {
        let ts = Values::Timestamptz(vec![1_704_067_200_000_001]);
        let p = Param { values: &ts, row: 0 };
        assert!(matches!(p.encode_format(&Type::TIMESTAMPTZ), Format::Binary));
        let mut out = BytesMut::new();
        p.to_sql(&Type::TEXT, &mut out).unwrap();
        assert_eq!(&out[..], b"2024-01-01T00:00:00.000001Z");
        let f = Values::Float8(vec![0.1]);
        let mut out = BytesMut::new();
        Param { values: &f, row: 0 }.to_sql(&Type::NUMERIC, &mut out).unwrap();
        assert_eq!(&out[..], b"0.1");
    }
}
