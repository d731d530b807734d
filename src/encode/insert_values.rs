//! Bound parameters for multi-row `INSERT ... VALUES`: one parameter per
//! value, written in binary straight from the batch's columns.

use bytes::BytesMut;
use postgres_types::{Format, IsNull, ToSql, Type};

use super::{matches_type, type_mismatch, write_binary};
use crate::model::{Batch, Values};

/// One value of a batch (`row` of `values`) as a bound parameter.
#[derive(Debug)]
pub struct Param<'a> {
    pub values: &'a Values,
    pub row: usize,
}

impl ToSql for Param<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        if !matches_type(self.values.sql_type(), ty) {
            return Err(type_mismatch(self.values.sql_type(), ty));
        }
        if self.values.is_null(self.row) {
            return Ok(IsNull::Yes);
        }
        write_binary(self.values, self.row, out);
        Ok(IsNull::No)
    }

    /// Text values go in text format: the server reads them with the
    /// column's own input function, whatever its type (no cast needed).
    fn encode_format(&self, _ty: &Type) -> Format {
        match self.values {
            Values::Text { .. } => Format::Text,
            _ => Format::Binary,
        }
    }

    fn accepts(_: &Type) -> bool {
        // Checked per value in to_sql, where the column is known.
        true
    }

    postgres_types::to_sql_checked!();
}

/// The parameters of rows `rows` of a batch, row-major as `VALUES` lists them.
pub fn params(batch: &Batch, rows: std::ops::Range<usize>) -> impl ExactSizeIterator<Item = Param<'_>> {
    let width = batch.columns.len();
    let first = rows.start;
    (0..rows.len() * width).map(move |k| Param { values: &batch.columns[k % width], row: first + k / width })
}
