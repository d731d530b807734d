//! Export's reader over CrateDB's HTTP endpoint: a cursor held in the
//! connection's session, a page per chunk, each row written as a JSON object.

use anyhow::Result;

use super::{CrateConn, CrateTarget};
use crate::dialect::cratedb;
use crate::driver::export::file::{Chunk, ExportFile};
use crate::op::OpError;
use crate::outcome::ExportedFile;

/// A worker reading a cursor over CrateDB's HTTP endpoint, which keeps a
/// session (and its cursors) per connection: `DECLARE ... WITH HOLD` once,
/// then `FETCH n` a page per chunk. Each page's rows become JSON objects,
/// `{"column": value, ...}` in the result's column order, values as CrateDB
/// gives them (timestamps in epoch milliseconds, which insert-json reads
/// back). The cursor keeps its place on the server, so every page costs
/// the same; paging with `WHERE key > ? ORDER BY key LIMIT n` would sort
/// the rest of the table for each page.
pub struct PageWorker {
    conn: CrateConn,
    /// The request body of `FETCH n`.
    fetch: Vec<u8>,
    page: usize,
    file: ExportFile,
    ended: bool,
}

impl PageWorker {
    /// Connects worker `worker` to its node and declares its cursor over
    /// `select`. An error here is the query's (it does not parse, names a
    /// table that is not there), told as CrateDB tells it.
    pub async fn open(
        target: &CrateTarget,
        worker: u32,
        select: &str,
        page: usize,
        file: ExportFile,
    ) -> Result<PageWorker> {
        let mut conn = target.connect(worker as usize).await?;
        conn.execute(&cratedb::declare_held_cursor(select), &[]).await?;
        let fetch =
            serde_json::to_vec(&serde_json::json!({ "stmt": cratedb::fetch(page) })).expect("JSON values serialize");
        let w = PageWorker { conn, fetch, page, file, ended: false };
        Ok(w)
    }

    /// Fetches the next page and writes it. A page CrateDB refuses ends the
    /// worker: its cursor may have moved past rows not written.
    pub(in crate::driver) async fn transfer(&mut self, chunk: &mut Chunk) -> Result<u64, OpError> {
        let page = self.conn.post(&self.fetch).await.map_err(|e| OpError { fatal: true, ..e })?;
        for row in &page.rows {
            json_object(&page.cols, row, &mut chunk.bytes);
            chunk.rows += 1;
        }
        if page.rows.len() < self.page {
            self.ended = true;
            chunk.end = true;
        }
        self.file.write(chunk)
    }

    /// Makes the file durable and says what it holds.
    pub(in crate::driver) fn finish(self) -> ExportedFile {
        self.file.finish(self.ended)
    }
}

/// Appends `{"column": value, ...}` and a newline.
fn json_object(columns: &[String], values: &[serde_json::Value], out: &mut Vec<u8>) {
    out.push(b'{');
    for (i, (column, value)) in columns.iter().zip(values).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, column).expect("strings serialize");
        out.push(b':');
        serde_json::to_writer(&mut *out, value).expect("JSON values serialize");
    }
    out.extend_from_slice(b"}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_json_objects_in_column_order() {
        let mut out = Vec::new();
        let values = [serde_json::json!(1_700_000_000_123i64), serde_json::json!({"a": [1, "x\n"]})];
        json_object(&["ts".into(), "o\"".into()], &values, &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "{\"ts\":1700000000123,\"o\\\"\":{\"a\":[1,\"x\\n\"]}}\n");
    }
}
