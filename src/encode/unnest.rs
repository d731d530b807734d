//! Array parameters for `INSERT ... SELECT * FROM unnest($1::t[], ...)`:
//! one binary array per column, so a whole batch is a handful of parameters
//! whatever its size (no 65,535-parameter limit).

use bytes::{BufMut, BytesMut};
use postgres_types::{IsNull, Kind, ToSql, Type};

use super::{pg_type, type_mismatch, write_field};
use crate::model::Values;

/// A whole column of a batch as one one-dimensional array parameter.
#[derive(Debug)]
pub struct ArrayParam<'a> {
    pub values: &'a Values,
    pub len: usize,
}

impl ToSql for ArrayParam<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        let element = match ty.kind() {
            Kind::Array(element) if *element == pg_type(self.values.sql_type()) => element,
            _ => return Err(type_mismatch(self.values.sql_type(), ty)),
        };
        out.put_i32(1); // dimensions
        out.put_i32((0..self.len).any(|i| self.values.is_null(i)) as i32); // has NULLs
        out.put_u32(element.oid());
        out.put_i32(self.len as i32);
        out.put_i32(1); // lower bound
        for i in 0..self.len {
            write_field(self.values, i, out);
        }
        Ok(IsNull::No)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    postgres_types::to_sql_checked!();
}
