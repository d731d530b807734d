//! A query's rows read through a cursor, a page at a time: how rows leave
//! a server whose PostgreSQL protocol has no `COPY ... TO STDOUT`, which is
//! CrateDB. The cursor is declared in a transaction (on CrateDB a
//! formality: the cursor lives in the session), `FETCH n` is prepared once,
//! and each page is one round trip whose rows come in the binary format:
//! written out by [`RowText`](super::decode::binary_text::RowText), or
//! passed on as binary COPY tuples. The server keeps the cursor's place,
//! so each page costs the same whatever the offset, unlike `LIMIT`/`OFFSET`
//! or keyset paging (CrateDB 6.4 on one node: 200,000 rows in about 1 s).

use postgres_types::{FromSql, Type};
use tokio_postgres::{Client, Row, Statement};

use crate::dialect::cratedb;

/// A declared cursor and its connection.
pub struct Cursor {
    client: Client,
    fetch: Statement,
    page: usize,
    ended: bool,
}

impl Cursor {
    /// Declares the cursor for `query` on `client`; `page` rows per fetch.
    /// An error here is the query's: it does not parse, or names what is not there.
    pub async fn declare(client: Client, query: &str, page: usize) -> Result<Cursor, tokio_postgres::Error> {
        client.batch_execute(&cratedb::declare_cursor(query)).await?;
        let fetch = client.prepare(&cratedb::fetch(page)).await?;
        Ok(Cursor { client, fetch, page, ended: false })
    }

    /// The result's columns: name and type.
    pub fn columns(&self) -> Vec<(String, Type)> {
        self.fetch.columns().iter().map(|c| (c.name().to_string(), c.type_().clone())).collect()
    }

    /// The next page of at most `page` rows; a short page is the last.
    pub async fn fetch(&mut self) -> Result<Vec<Row>, tokio_postgres::Error> {
        if self.ended {
            return Ok(Vec::new());
        }
        let rows = self.client.query(&self.fetch, &[]).await?;
        self.ended = rows.len() < self.page;
        Ok(rows)
    }

    /// Whether the last page has been read.
    pub fn ended(&self) -> bool {
        self.ended
    }

    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }
}

/// A row's values as the server sent them (binary), `None` for NULL.
pub fn raw_values(row: &Row) -> impl Iterator<Item = Option<&[u8]>> {
    (0..row.len()).map(|i| row.get::<_, Option<Raw<'_>>>(i).map(|r| r.0))
}

/// Any value, undecoded.
struct Raw<'a>(&'a [u8]);

impl<'a> FromSql<'a> for Raw<'a> {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Raw<'a>, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(raw))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}
