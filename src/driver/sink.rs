//! Sinks: where a worker's batches go. A PostgreSQL-protocol connection
//! ([`PgSink`], one per worker, statements prepared once), a CrateDB HTTP
//! connection ([`CrateSink`]), nothing at all (`--dry-run`, which still
//! encodes every value), or a binary COPY file for the benchmark. This file
//! is the dispatch over them; each protocol's sink lives in its folder.

use std::fs::File;
use std::io::{BufWriter, Write};

use anyhow::{Context, Result};
use bytes::BytesMut;
use hdrhistogram::Histogram;
use postgres_types::ToSql;

use super::cratedb_http::exec::CrateSink;
use super::pg::sink::PgSink;
use super::spec::SinkSpec;
use crate::dialect::Method;

use crate::encode::insert_values::params;
use crate::encode::unnest::ArrayParam;
use crate::encode::{copy_binary, pg_array_type, pg_type, CopyPieces, CrateBody, Framing, Payload};
use crate::op::{Executor, InDoubt, OpError};

/// Bytes of a CrateDB body written at a time, each sent as a chunk of its
/// request: what a worker holds of a body in flight. Large enough that the
/// chunks cost nothing (one write each, tens per batch of 20,000 rows),
/// small beside the body of a batch (several MiB).
const CRATE_PIECE: usize = 64 * 1024;

pub enum Sink {
    Postgres(PgSink),
    /// CrateDB's `_sql` endpoint: each batch's body written as it is sent.
    Crate {
        sink: CrateSink,
        body: CrateBody,
    },
    DryRun {
        spec: SinkSpec,
        scratch: BytesMut,
    },
    CopyFile {
        path: String,
        out: BufWriter<File>,
    },
}

impl Sink {
    pub fn crate_http(sink: CrateSink, spec: &SinkSpec) -> Sink {
        let body = CrateBody::new(spec.method, spec.table.clone(), spec.schema.clone(), spec.upsert, spec.batch_size);
        Sink::Crate { sink, body }
    }

    /// A sink that encodes like the real one but sends nothing.
    pub fn dry_run(spec: &SinkSpec) -> Sink {
        Sink::DryRun { spec: spec.clone(), scratch: BytesMut::new() }
    }

    /// A binary COPY file (header now, tuples per batch, trailer at finish).
    pub fn copy_file(path: String) -> Result<Sink> {
        let file = File::create(&path).with_context(|| format!("--copy-file: cannot create {path}"))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let mut header = BytesMut::new();
        copy_binary::header(&mut header);
        out.write_all(&header).with_context(|| format!("writing {path}"))?;
        Ok(Sink::CopyFile { path, out })
    }

    /// How producers must encode for this sink.
    pub fn framing(&self) -> Framing {
        match self {
            // Parameters are bound, COPY payloads and CrateDB bodies encoded, as they are sent.
            Sink::Postgres(_) | Sink::DryRun { .. } | Sink::Crate { .. } => Framing::None,
            Sink::CopyFile { .. } => Framing::CopyRows,
        }
    }

    /// Sends one batch; on success, the number of rows the target acknowledged.
    async fn send(&mut self, p: &mut Payload, warm: bool) -> Result<u64, OpError> {
        match self {
            Sink::Postgres(s) => s.send(p).await,
            Sink::Crate { sink, body } => {
                let mut body = body.body(&p.batch);
                sink.send(&mut |out| body.write_some(out, CRATE_PIECE), p.rows(), warm).await
            }
            Sink::DryRun { spec, scratch } => {
                dry_encode(spec, p, scratch);
                Ok(p.rows())
            }
            Sink::CopyFile { path, out } => out
                .write_all(&p.bytes)
                .map(|()| p.rows())
                .map_err(|e| OpError::fatal("write error", format!("{path}: {e}"))),
        }
    }

    /// Completes what the sink needs completed (a COPY file's trailer);
    /// returns the server-reported durations a CrateDB sink recorded.
    pub fn finish(self) -> Result<Option<Histogram<u64>>> {
        match self {
            Sink::CopyFile { path, mut out } => {
                let mut trailer = BytesMut::new();
                copy_binary::trailer(&mut trailer);
                out.write_all(&trailer).and_then(|()| out.flush()).with_context(|| format!("writing {path}"))?;
                Ok(None)
            }
            Sink::Crate { sink, .. } => Ok(Some(sink.server_duration().clone())),
            _ => Ok(None),
        }
    }
}

impl Executor<Payload> for Sink {
    fn execute(
        &mut self,
        p: &mut Payload,
        warm: bool,
    ) -> impl std::future::Future<Output = Result<u64, OpError>> + Send {
        self.send(p, warm)
    }

    async fn reconnect(&mut self) -> Option<Result<()>> {
        match self {
            Sink::Postgres(s) => Some(s.reconnect().await),
            Sink::Crate { sink, .. } => Some(sink.reconnect().await),
            Sink::DryRun { .. } | Sink::CopyFile { .. } => None,
        }
    }

    async fn resolve(&mut self, p: &mut Payload) -> InDoubt {
        match self {
            Sink::Postgres(s) => s.resolve(p).await,
            Sink::Crate { sink, .. } => sink.resolve(),
            _ => InDoubt::Unknown,
        }
    }

    async fn cancel(&mut self) {
        if let Sink::Postgres(s) = self {
            s.cancel().await;
        }
    }
}

/// Encodes the batch as the driver would: the COPY pieces, dropped as they
/// are made, or every parameter bound into a scratch buffer. So a dry run
/// measures encoding too.
fn dry_encode(spec: &SinkSpec, p: &Payload, scratch: &mut BytesMut) {
    if spec.method.is_copy() {
        CopyPieces::new(&p.batch, spec.method).for_each(drop);
        return;
    }
    scratch.clear();
    let b = &p.batch;
    let bound = match spec.method {
        Method::Insert => params(b, 0..b.len).try_for_each(|param| {
            let ty = pg_type(param.values.sql_type());
            param.to_sql_checked(&ty, scratch).map(drop)
        }),
        _ => b.sent().try_for_each(|values| {
            let ty = pg_array_type(values.sql_type());
            ArrayParam { values, len: b.len }.to_sql_checked(&ty, scratch).map(drop)
        }),
    };
    bound.expect("our values match our own types");
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read, Write};

    use super::*;
    use crate::counting_alloc;
    use crate::dialect::Engine;
    use crate::driver::cratedb_http::CrateTarget;
    use crate::encode::crate_bulk;
    use crate::ident::TableName;
    use crate::model::{measurement, Column, ModelSpec, Schema, SqlType};

    /// Issue 18 item 3: a worker sending a COPY batch held it twice, its
    /// values and its whole encoding (10,000 rows of 10 metrics: 0.9 MB and
    /// 1.4 MB), on top of the driver's copy of a message. The batch handed to
    /// a PostgreSQL-protocol sink is its values only: the sink encodes it in
    /// pieces as it sends them ([`CopyPieces`]).
    #[test]
    fn a_batch_for_a_copy_sink_holds_its_values_not_also_its_encoding() {
        let model = ModelSpec::Measurement(measurement::Options { devices: 10, metrics: 10, jsonb: false });
        for method in [Method::Copy, Method::CopyCsv] {
            let spec = SinkSpec {
                table: TableName::parse("t").unwrap(),
                schema: model.schema(),
                method,
                upsert: false,
                insert_rows: 1,
                batch_size: 10_000,
                engine: Engine::Postgres,
            };
            let mut p = Payload::new(&spec.schema);
            model.generator(1, 0, 1_700_000_000_000_000, 10_000).next_batch(&mut p.batch, 10_000);
            Sink::dry_run(&spec).framing().encode(&mut p);
            assert_eq!(p.bytes.capacity(), 0, "{method}: the producer encoded {} bytes ahead", p.bytes.len());
        }
    }

    /// A CrateDB node for one `_sql` request (its body sent whole or in
    /// chunks) that acknowledges each of its `bulk_args` rows; returns the
    /// body it read.
    fn one_bulk_node() -> (String, std::thread::JoinHandle<Vec<u8>>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("cratedb://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let node = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut out = stream.try_clone().unwrap();
            let mut input = BufReader::new(stream);
            let (mut length, mut chunked, mut line) = (0, false, String::new());
            while input.read_line(&mut line).unwrap() > 2 {
                let lower = line.to_ascii_lowercase();
                if let Some(n) = lower.strip_prefix("content-length:") {
                    length = n.trim().parse().unwrap();
                }
                chunked |= lower.starts_with("transfer-encoding:") && lower.contains("chunked");
                line.clear();
            }
            let mut body = Vec::new();
            if chunked {
                loop {
                    line.clear();
                    input.read_line(&mut line).unwrap();
                    let size = usize::from_str_radix(line.trim_end(), 16).unwrap();
                    let mut chunk = vec![0; size + 2];
                    input.read_exact(&mut chunk).unwrap();
                    body.extend_from_slice(&chunk[..size]);
                    if size == 0 {
                        break;
                    }
                }
            } else {
                body.resize(length, 0);
                input.read_exact(&mut body).unwrap();
            }
            let request: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let rows = request["bulk_args"].as_array().unwrap().len();
            let results = vec![r#"{"rowcount":1}"#; rows].join(",");
            let answer = format!(r#"{{"cols":[],"duration":1.5,"results":[{results}]}}"#);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                answer.len()
            );
            out.write_all(head.as_bytes()).and_then(|()| out.write_all(answer.as_bytes())).unwrap();
            body
        });
        (url, node)
    }

    /// Issue 18 item 3: a CrateDB ingest of batch 20,000 and 4 workers held
    /// 151 MiB, each body encoded whole ahead of its request (and copied
    /// once more into the connection's buffer). Encoding and sending one
    /// batch must hold much less than its body: the body is written a piece
    /// at a time as it is sent.
    #[tokio::test]
    async fn a_crate_batch_is_sent_without_its_whole_body_in_memory() {
        let column = |name: &str, ty| Column { name: name.into(), ty, not_null: false, cast: None, fields: Vec::new() };
        let types = [SqlType::Timestamptz, SqlType::Oid, SqlType::Int4, SqlType::Float8, SqlType::Jsonb];
        let columns = ["time", "device_id", "n", "m1", "tags"].iter().zip(types).map(|(n, ty)| column(n, ty));
        let schema = Schema { columns: columns.collect(), key: Vec::new(), metrics_per_row: 1 };
        let rows = 20_000;
        let tags: Vec<String> = (0..rows)
            .map(|i| {
                format!(
                    r#"{{"host":"host_{i:06}","rack":"r{}","os":"Ubuntu 22.04 LTS","region":"eu-central-1"}}"#,
                    i % 40
                )
            })
            .collect();
        let values: Vec<_> = (0..rows)
            .map(|i| {
                (1_700_000_000_000_000 + i as i64 * 1000, i as u32 % 1000, i as i32, i as f64 / 7.0, tags[i].as_str())
            })
            .collect();
        let mut payload = Payload { batch: crate_bulk::tests::batch(&values), bytes: BytesMut::new() };
        let spec = SinkSpec {
            table: TableName::parse("t").unwrap(),
            schema,
            method: Method::Bulk,
            upsert: false,
            insert_rows: rows,
            batch_size: rows,
            engine: Engine::Cratedb,
        };
        let (url, node) = one_bulk_node();
        let target = CrateTarget::parse(&url, "--url", false).unwrap();
        let mut sink = Sink::crate_http(CrateSink::open(&target, 0, true).await.unwrap(), &spec);
        let framing = sink.framing();

        counting_alloc::start();
        framing.encode(&mut payload);
        let acked = sink.execute(&mut payload, false).await;
        let held = counting_alloc::stop();

        assert_eq!(acked.unwrap(), rows as u64);
        let body = node.join().unwrap();
        // What is held is a piece of the body, the answer (15 bytes a row)
        // and the connection's buffers: not half of the body (2.5 MB).
        assert!(held < body.len() / 2, "{held} bytes held at most to send a body of {} bytes", body.len());
    }
}
