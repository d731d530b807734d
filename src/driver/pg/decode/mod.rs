//! Rows as a PostgreSQL-protocol server sends them, turned into file
//! content for `dbload export` and insert-from-sql: COPY's text format of
//! one JSON value per row into JSON lines ([`copy_text`]), and a cursor's
//! binary values into JSON objects or CSV lines ([`binary_text`]). They
//! read the protocol's formats, so they live with the driver that speaks
//! it; the encoders in [`crate::encode`] go the other way.

pub mod binary_text;
pub mod copy_text;
