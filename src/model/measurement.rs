//! tsdbperf's `measurement` model: `time`, `device_id`, `m1..mN` (or one
//! `metrics jsonb`), a random walk per device and metric, one row per
//! device per simulated second.

use rand::rngs::ChaCha8Rng;
use rand::RngExt;

use super::{push_json_f64, Batch, Column, Schema, SqlType, Values};
use crate::ident::quote_ident;

/// Microseconds between two readings of the same device.
pub const STEP_US: i64 = 1_000_000;

#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Devices per worker.
    pub devices: u32,
    /// Metric columns per row (1..=100).
    pub metrics: u32,
    /// Store the metrics as one `metrics jsonb` column instead of `m1..mN`.
    pub jsonb: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { devices: 10, metrics: 10, jsonb: false }
    }
}

pub fn schema(o: &Options) -> Schema {
    let mut columns =
        vec![Column::new("time", SqlType::Timestamptz, true), Column::new("device_id", SqlType::Oid, false)];
    if o.jsonb {
        let metrics = (1..=o.metrics).map(|m| (format!("m{m}"), SqlType::Float8)).collect();
        columns.push(Column::object("metrics", false, metrics));
    } else {
        columns.extend((1..=o.metrics).map(|m| Column::new(format!("m{m}"), SqlType::Float8, false)));
    }
    Schema { columns, key: vec![quote_ident("device_id"), quote_ident("time")], metrics_per_row: o.metrics }
}

pub struct Generator {
    opts: Options,
    /// Global id of this worker's first device (ids are unique across workers).
    first_device: u32,
    /// Current value of each (device, metric), device-major.
    walk: Vec<f64>,
    rng: ChaCha8Rng,
}

impl Generator {
    pub fn new(opts: Options, worker: u32, mut rng: ChaCha8Rng) -> Self {
        let walk = (0..opts.devices * opts.metrics).map(|_| rng.random_range(0.0..1000.0)).collect();
        Generator { first_device: worker * opts.devices + 1, opts, walk, rng }
    }

    /// Appends rows `first..first + n` of this worker's sequence to `batch`.
    pub fn fill(&mut self, batch: &mut Batch, first: u64, n: usize, start_us: i64) {
        let devices = self.opts.devices as u64;
        let metrics = self.opts.metrics as usize;
        let (head, rest) = batch.columns.split_at_mut(2);
        let [Values::Timestamptz(time), Values::Oid(device)] = head else { unreachable!("measurement batch layout") };
        for r in first..first + n as u64 {
            let d = (r % devices) as usize;
            time.push(start_us + (r / devices) as i64 * STEP_US);
            device.push(self.first_device + d as u32);
            let walk = &mut self.walk[d * metrics..(d + 1) * metrics];
            for v in walk.iter_mut() {
                *v += self.rng.random_range(-0.5..0.5);
            }
            if self.opts.jsonb {
                let Values::Jsonb { text, ends } = &mut rest[0] else { unreachable!() };
                text.push('{');
                for (m, v) in walk.iter().enumerate() {
                    if m > 0 {
                        text.push_str(", ");
                    }
                    text.push_str("\"m");
                    text.push_str(itoa::Buffer::new().format(m + 1));
                    text.push_str("\": ");
                    push_json_f64(text, *v);
                }
                text.push('}');
                ends.push(text.len());
            } else {
                for (col, v) in rest.iter_mut().zip(walk.iter()) {
                    let Values::Float8(col) = col else { unreachable!() };
                    col.push(*v);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Batch, ModelSpec};

    #[test]
    fn one_row_per_device_per_second() {
        let spec = ModelSpec::Measurement(Options { devices: 3, metrics: 2, jsonb: false });
        let mut b = Batch::new(&spec.schema());
        spec.generator(1, 2, 1_000, 7).next_batch(&mut b, 100);
        let Values::Timestamptz(t) = &b.columns[0] else { panic!() };
        let Values::Oid(d) = &b.columns[1] else { panic!() };
        assert_eq!(d, &[7, 8, 9, 7, 8, 9, 7]);
        assert_eq!(t[0], 1_000);
        assert_eq!(t[3], 1_000 + STEP_US);
        assert_eq!(t[6], 1_000 + 2 * STEP_US);
    }

    #[test]
    fn jsonb_holds_every_metric_as_exact_json() {
        let spec = ModelSpec::Measurement(Options { devices: 1, metrics: 3, jsonb: true });
        let mut b = Batch::new(&spec.schema());
        spec.generator(1, 0, 0, 2).next_batch(&mut b, 2);
        let v: serde_json::Value = serde_json::from_str(b.columns[2].json(1)).unwrap();
        assert_eq!(v.as_object().unwrap().len(), 3);
        assert!(v["m3"].as_f64().unwrap() > -1.0);
    }
}
