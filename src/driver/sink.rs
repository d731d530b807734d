//! Sinks: where a worker's batches go. A PostgreSQL-protocol connection
//! ([`PgSink`], one per worker, statements prepared once), a CrateDB HTTP
//! connection ([`CrateSink`]), nothing at all (`--dry-run`, which still
//! encodes every value), or a binary COPY file for the benchmark. This file
//! is the dispatch over them; each protocol's sink lives in its folder.

use std::fs::File;
use std::io::{BufWriter, Write};

use std::sync::Arc;

use anyhow::{Context, Result};
use bytes::BytesMut;
use hdrhistogram::Histogram;
use postgres_types::ToSql;

use super::cratedb_http::CrateSink;
use super::pg::sink::PgSink;
use crate::dialect::{Engine, Method};

use crate::encode::insert_values::params;
use crate::encode::unnest::ArrayParam;
use crate::encode::{copy_binary, pg_array_type, pg_type, CopyPieces, CrateBody, Framing, Payload};
use crate::ident::TableName;
use crate::model::Schema;
use crate::op::{Executor, InDoubt, OpError};

/// What the sinks of one run write, and how.
#[derive(Debug, Clone)]
pub struct SinkSpec {
    pub table: TableName,
    pub schema: Schema,
    pub method: Method,
    pub upsert: bool,
    /// Rows per INSERT ... VALUES statement.
    pub insert_rows: usize,
    pub batch_size: usize,
    /// Whose SQL the statements are written in.
    pub engine: Engine,
}

pub enum Sink {
    Postgres(PgSink),
    /// CrateDB's `_sql` endpoint: bodies encoded by the producer.
    Crate {
        sink: CrateSink,
        framing: Framing,
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
        Sink::Crate { sink, framing: Framing::Crate(Arc::new(body)) }
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
            // Parameters are bound, and COPY payloads encoded, as they are sent.
            Sink::Postgres(_) | Sink::DryRun { .. } => Framing::None,
            Sink::Crate { framing, .. } => framing.clone(),
            Sink::CopyFile { .. } => Framing::CopyRows,
        }
    }

    /// Sends one batch; on success, the number of rows the target acknowledged.
    async fn send(&mut self, p: &mut Payload, warm: bool) -> Result<u64, OpError> {
        match self {
            Sink::Postgres(s) => s.send(p).await,
            Sink::Crate { sink, .. } => sink.send(&p.bytes, p.rows(), warm).await,
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
    use super::*;
    use crate::model::{measurement, ModelSpec};

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
}
