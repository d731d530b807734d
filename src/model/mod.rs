//! Data models: the shape of the rows (a [`Schema`]) and seeded generators
//! that fill reusable column-major [`Batch`]es.
//!
//! Generators are pure: `(seed, worker, start) → rows`, no clocks, no I/O,
//! portable RNGs, so a run is reproducible across runs and platforms and
//! tests can recompute exactly what was written.

pub mod cpu;
pub mod measurement;
pub mod template;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The SQL type of a generated column, as the encoders need to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlType {
    /// `timestamptz`, carried as microseconds since the Unix epoch.
    Timestamptz,
    /// `oid` (tsdbperf's device id type).
    Oid,
    /// `integer`.
    Int4,
    /// `double precision`.
    Float8,
    /// `jsonb`, carried as JSON text.
    Jsonb,
}

impl SqlType {
    /// The PostgreSQL type name used in DDL and casts.
    pub fn pg_name(self) -> &'static str {
        match self {
            SqlType::Timestamptz => "timestamptz",
            SqlType::Oid => "oid",
            SqlType::Int4 => "integer",
            SqlType::Float8 => "double precision",
            SqlType::Jsonb => "jsonb",
        }
    }
}

/// One column of a model's table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub ty: SqlType,
    pub not_null: bool,
}

impl Column {
    fn new(name: impl Into<String>, ty: SqlType, not_null: bool) -> Self {
        Column { name: name.into(), ty, not_null }
    }
}

/// The table a model writes: its columns, the unique key that upserts
/// conflict on (SQL expressions over the columns) and its secondary indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    pub columns: Vec<Column>,
    /// The unique key that `--upsert` conflicts on, as quoted SQL: the series
    /// identity first, the time column last.
    pub key: Vec<String>,
    /// How many of the columns are metrics (for metrics/s).
    pub metrics_per_row: u32,
}

/// Column-major values of one column for a batch. Buffers are kept and
/// cleared between batches so the hot path does not allocate.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    Timestamptz(Vec<i64>),
    Oid(Vec<u32>),
    Int4(Vec<i32>),
    Float8(Vec<f64>),
    /// JSON texts stored back to back; `ends[i]` is where row i's text ends.
    Jsonb {
        text: String,
        ends: Vec<usize>,
    },
}

impl Values {
    fn for_type(ty: SqlType) -> Self {
        match ty {
            SqlType::Timestamptz => Values::Timestamptz(Vec::new()),
            SqlType::Oid => Values::Oid(Vec::new()),
            SqlType::Int4 => Values::Int4(Vec::new()),
            SqlType::Float8 => Values::Float8(Vec::new()),
            SqlType::Jsonb => Values::Jsonb { text: String::new(), ends: Vec::new() },
        }
    }

    fn clear(&mut self) {
        match self {
            Values::Timestamptz(v) => v.clear(),
            Values::Oid(v) => v.clear(),
            Values::Int4(v) => v.clear(),
            Values::Float8(v) => v.clear(),
            Values::Jsonb { text, ends } => {
                text.clear();
                ends.clear();
            }
        }
    }

    /// Row `i` of a JSON column.
    pub fn json(&self, i: usize) -> &str {
        match self {
            Values::Jsonb { text, ends } => {
                let start = if i == 0 { 0 } else { ends[i - 1] };
                &text[start..ends[i]]
            }
            _ => panic!("json() on a non-JSON column"),
        }
    }

    pub fn sql_type(&self) -> SqlType {
        match self {
            Values::Timestamptz(_) => SqlType::Timestamptz,
            Values::Oid(_) => SqlType::Oid,
            Values::Int4(_) => SqlType::Int4,
            Values::Float8(_) => SqlType::Float8,
            Values::Jsonb { .. } => SqlType::Jsonb,
        }
    }
}

/// A batch of generated rows in column-major order.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub len: usize,
    pub columns: Vec<Values>,
}

impl Batch {
    pub fn new(schema: &Schema) -> Self {
        Batch { len: 0, columns: schema.columns.iter().map(|c| Values::for_type(c.ty)).collect() }
    }

    pub fn clear(&mut self) {
        self.len = 0;
        for c in &mut self.columns {
            c.clear();
        }
    }
}

/// Which model, with its own options, as resolved from the flags.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelSpec {
    Measurement(measurement::Options),
    Cpu(cpu::Options),
}

impl ModelSpec {
    pub fn name(&self) -> &'static str {
        match self {
            ModelSpec::Measurement(_) => "measurement",
            ModelSpec::Cpu(_) => "cpu",
        }
    }

    pub fn schema(&self) -> Schema {
        match self {
            ModelSpec::Measurement(o) => measurement::schema(o),
            ModelSpec::Cpu(o) => cpu::schema(o),
        }
    }

    /// Devices (measurement) or hosts (cpu) per worker.
    pub fn devices(&self) -> u32 {
        match self {
            ModelSpec::Measurement(o) => o.devices,
            ModelSpec::Cpu(o) => o.hosts,
        }
    }

    /// The generator of worker `worker`, producing at most `rows` rows.
    pub fn generator(&self, seed: u64, worker: u32, start_us: i64, rows: u64) -> Generator {
        let rng = rng_for(seed, worker, Purpose::Data);
        let kind = match self {
            ModelSpec::Measurement(o) => GenKind::Measurement(measurement::Generator::new(o.clone(), worker, rng)),
            ModelSpec::Cpu(o) => GenKind::Cpu(cpu::Generator::new(o.clone(), worker, rng)),
        };
        Generator { kind, start_us, remaining: rows, step: 0 }
    }
}

/// One random stream per purpose per worker (pgbench's rule), so adding a new
/// use of randomness never shifts the data of an existing one.
#[derive(Debug, Clone, Copy)]
pub enum Purpose {
    Data = 1,
    /// Which query of a workload runs next, and its parameters.
    Choice = 2,
}

/// A ChaCha8 stream derived from (seed, worker, purpose).
pub fn rng_for(seed: u64, worker: u32, purpose: Purpose) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(((worker as u64) << 8) | purpose as u64);
    rng
}

enum GenKind {
    Measurement(measurement::Generator),
    Cpu(cpu::Generator),
}

/// A worker's row source: one reading per device per simulated step, going
/// forward in time from `start_us`, until `remaining` rows have been made.
pub struct Generator {
    kind: GenKind,
    start_us: i64,
    remaining: u64,
    /// Rows generated so far; row r is device `r % devices` at step `r / devices`.
    step: u64,
}

impl Generator {
    /// Fill `batch` with up to `max` rows; returns false when nothing is left.
    pub fn next_batch(&mut self, batch: &mut Batch, max: usize) -> bool {
        batch.clear();
        let n = (max as u64).min(self.remaining) as usize;
        if n == 0 {
            return false;
        }
        match &mut self.kind {
            GenKind::Measurement(g) => g.fill(batch, self.step, n, self.start_us),
            GenKind::Cpu(g) => g.fill(batch, self.step, n, self.start_us),
        }
        batch.len = n;
        self.step += n as u64;
        self.remaining -= n as u64;
        true
    }
}

/// Appends `v` to a JSON text with the shortest representation that reads
/// back to the same `f64` (so databases store exactly what was generated).
pub(crate) fn push_json_f64(out: &mut String, v: f64) {
    let mut buf = ryu::Buffer::new();
    out.push_str(buf.format_finite(v));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_rows(spec: &ModelSpec, rows: u64, batch: usize) -> Vec<Batch> {
        let mut g = spec.generator(7, 1, 1_600_000_000_000_000, rows);
        let mut out = Vec::new();
        let mut b = Batch::new(&spec.schema());
        while g.next_batch(&mut b, batch) {
            out.push(b.clone());
        }
        out
    }

    #[test]
    fn every_row_lands_in_exactly_one_batch() {
        let spec = ModelSpec::Measurement(measurement::Options::default());
        for (rows, batch) in [(0, 10), (1, 10), (10, 10), (95, 10), (1000, 7)] {
            let batches = all_rows(&spec, rows, batch);
            assert_eq!(batches.iter().map(|b| b.len as u64).sum::<u64>(), rows);
            assert!(batches.iter().all(|b| b.len <= batch && b.len > 0));
        }
    }

    #[test]
    fn batching_does_not_change_the_rows() {
        // The data must not depend on the batch size, only on (seed, worker).
        let spec = ModelSpec::Cpu(cpu::Options::default());
        let flat = |bs: Vec<Batch>| {
            bs.iter()
                .map(|b| match &b.columns[2] {
                    Values::Int4(v) => v.clone(),
                    _ => unreachable!(),
                })
                .collect::<Vec<_>>()
                .concat()
        };
        assert_eq!(flat(all_rows(&spec, 500, 500)), flat(all_rows(&spec, 500, 33)));
    }

    #[test]
    fn same_seed_same_rows_other_worker_other_rows() {
        let spec = ModelSpec::Measurement(measurement::Options::default());
        let mut a = Batch::new(&spec.schema());
        let mut b = Batch::new(&spec.schema());
        spec.generator(1, 0, 0, 100).next_batch(&mut a, 100);
        spec.generator(1, 0, 0, 100).next_batch(&mut b, 100);
        assert_eq!(a, b);
        spec.generator(1, 1, 0, 100).next_batch(&mut b, 100);
        assert_ne!(a.columns[2], b.columns[2]);
    }
}
