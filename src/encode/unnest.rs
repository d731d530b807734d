//! Array parameters for `INSERT ... SELECT * FROM unnest($1::t[], ...)`:
//! one binary array per column, so a whole batch is a handful of parameters
//! whatever its size (no 65,535-parameter limit).

use bytes::{BufMut, BytesMut};
use postgres_types::{Format, IsNull, Kind, ToSql, Type};

use super::{pg_type, type_mismatch, write_field, write_text};
use crate::model::Values;

/// A whole column of a batch as one one-dimensional array parameter.
#[derive(Debug)]
pub struct ArrayParam<'a> {
    pub values: &'a Values,
    pub len: usize,
}

impl ArrayParam<'_> {
    /// `{"v1","v2",...}`: every element quoted, `"` and `\` escaped.
    fn text_array(&self, out: &mut BytesMut) -> IsNull {
        let mut element = BytesMut::new();
        out.put_u8(b'{');
        for i in 0..self.len {
            if i > 0 {
                out.put_u8(b',');
            }
            if self.values.is_null(i) {
                out.put_slice(b"NULL");
                continue;
            }
            element.clear();
            write_text(self.values, i, &mut element);
            super::quote_array_element(&element, out);
        }
        out.put_u8(b'}');
        IsNull::No
    }
}

impl ToSql for ArrayParam<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        let element = match ty.kind() {
            Kind::Array(element) if *element == pg_type(self.values.sql_type()) => element,
            Kind::Array(_) => return Ok(self.text_array(out)),
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

    /// Binary where the array's elements have our type; else an array
    /// literal of text forms, parsed by the server as its element type.
    fn encode_format(&self, ty: &Type) -> Format {
        match ty.kind() {
            Kind::Array(element) if *element != pg_type(self.values.sql_type()) => Format::Text,
            _ => Format::Binary,
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    postgres_types::to_sql_checked!();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A column the server declares with another type (CrateDB's `json`
    /// for our jsonb, `bigint` for our oid) goes as a quoted text array.
    #[test]
    fn other_element_types_go_as_text_arrays() {
        let values = Values::Jsonb { text: r#"{"a":"x\"y"}{}"#.into(), ends: vec![12, 14] };
        let param = ArrayParam { values: &values, len: 2 };
        assert!(matches!(param.encode_format(&Type::JSON_ARRAY), Format::Text));
        assert!(matches!(param.encode_format(&Type::JSONB_ARRAY), Format::Binary));
        let mut out = BytesMut::new();
        param.to_sql(&Type::JSON_ARRAY, &mut out).unwrap();
        assert_eq!(&out[..], br#"{"{\"a\":\"x\\\"y\"}","{}"}"#);
        let ids = Values::Oid(vec![7, 4_000_000_000]);
        let mut out = BytesMut::new();
        ArrayParam { values: &ids, len: 2 }.to_sql(&Type::INT8_ARRAY, &mut out).unwrap();
        assert_eq!(&out[..], br#"{"7","4000000000"}"#);
    }
}
