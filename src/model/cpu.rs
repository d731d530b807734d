//! The TSBS cpu-only model that nodeIngestBench uses: ten string tags per
//! host stored as one JSON object, `ts`, and ten `usage_*` integers that walk
//! within [0, 100]. Unlike nodeIngestBench every row is distinct.

use rand::rngs::ChaCha8Rng;
use rand::RngExt;

use super::{Batch, Column, Schema, SqlType, Values};
use crate::ident::quote_ident;

/// Seconds between two readings of the same host (TSBS's default interval).
pub const STEP_US: i64 = 10_000_000;

pub const USAGE: [&str; 10] = [
    "usage_user",
    "usage_system",
    "usage_idle",
    "usage_nice",
    "usage_iowait",
    "usage_irq",
    "usage_softirq",
    "usage_steal",
    "usage_guest",
    "usage_guest_nice",
];

/// Regions and their datacenters, so a host's datacenter matches its region.
const REGIONS: [(&str, &[&str]); 9] = [
    ("us-east-1", &["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1e"]),
    ("us-west-1", &["us-west-1a", "us-west-1b"]),
    ("us-west-2", &["us-west-2a", "us-west-2b", "us-west-2c"]),
    ("eu-west-1", &["eu-west-1a", "eu-west-1b", "eu-west-1c"]),
    ("eu-central-1", &["eu-central-1a", "eu-central-1b"]),
    ("ap-southeast-1", &["ap-southeast-1a", "ap-southeast-1b"]),
    ("ap-southeast-2", &["ap-southeast-2a", "ap-southeast-2b"]),
    ("ap-northeast-1", &["ap-northeast-1a", "ap-northeast-1c"]),
    ("sa-east-1", &["sa-east-1a", "sa-east-1b", "sa-east-1c"]),
];
const OS: [&str; 3] = ["Ubuntu16.10", "Ubuntu16.04LTS", "Ubuntu15.10"];
const ARCH: [&str; 2] = ["x64", "x86"];
const TEAM: [&str; 4] = ["SF", "NYC", "LON", "CHI"];
const ENVIRONMENT: [&str; 3] = ["production", "staging", "test"];

#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Hosts per worker.
    pub hosts: u32,
    /// Extra `tag_N` string tags beyond TSBS's ten, for wider rows.
    pub extra_tags: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options { hosts: 10, extra_tags: 0 }
    }
}

/// The tags of every host, as [`host_tags`] writes them: all strings.
const TAGS: [&str; 10] = [
    "hostname",
    "region",
    "datacenter",
    "rack",
    "os",
    "arch",
    "team",
    "service",
    "service_version",
    "service_environment",
];

pub fn schema(o: &Options) -> Schema {
    let text = SqlType::Text { json: false };
    let extra = (0..o.extra_tags).map(|t| format!("tag_{t}"));
    let tags = TAGS.iter().map(|t| t.to_string()).chain(extra).map(|t| (t, text)).collect();
    let mut columns = vec![Column::new("ts", SqlType::Timestamptz, true), Column::object("tags", true, tags)];
    columns.extend(USAGE.iter().map(|u| Column::new(*u, SqlType::Int4, false)));
    Schema {
        columns,
        key: vec![format!("({}->>'hostname')", quote_ident("tags")), quote_ident("ts")],
        metrics_per_row: USAGE.len() as u32,
    }
}

pub struct Generator {
    /// Each host's tags as JSON text, made once: tags never change.
    tags: Vec<String>,
    /// Current usage of each (host, metric), host-major.
    walk: Vec<i32>,
    rng: ChaCha8Rng,
}

impl Generator {
    pub fn new(opts: Options, worker: u32, mut rng: ChaCha8Rng) -> Self {
        let tags = (0..opts.hosts).map(|h| host_tags(worker * opts.hosts + h, opts.extra_tags, &mut rng)).collect();
        let walk = (0..opts.hosts as usize * USAGE.len()).map(|_| rng.random_range(0..=100)).collect();
        Generator { tags, walk, rng }
    }

    /// Appends rows `first..first + n` of this worker's sequence to `batch`.
    pub fn fill(&mut self, batch: &mut Batch, first: u64, n: usize, start_us: i64) {
        let hosts = self.tags.len() as u64;
        let (head, usage) = batch.columns.split_at_mut(2);
        let [Values::Timestamptz(ts), Values::Jsonb { text, ends }] = head else { unreachable!("cpu batch layout") };
        for r in first..first + n as u64 {
            let h = (r % hosts) as usize;
            ts.push(start_us + (r / hosts) as i64 * STEP_US);
            text.push_str(&self.tags[h]);
            ends.push(text.len());
            let walk = &mut self.walk[h * USAGE.len()..(h + 1) * USAGE.len()];
            for (col, v) in usage.iter_mut().zip(walk.iter_mut()) {
                *v = (*v + self.rng.random_range(-3..=3)).clamp(0, 100);
                let Values::Int4(col) = col else { unreachable!() };
                col.push(*v);
            }
        }
    }
}

fn host_tags(id: u32, extra: u32, rng: &mut ChaCha8Rng) -> String {
    let (region, datacenters) = REGIONS[rng.random_range(0..REGIONS.len())];
    let pick = |rng: &mut ChaCha8Rng, xs: &[&'static str]| xs[rng.random_range(0..xs.len())];
    let mut tags = serde_json::Map::new();
    let mut put = |k: String, v: String| tags.insert(k, serde_json::Value::String(v));
    put("hostname".into(), format!("host_{id}"));
    put("region".into(), region.into());
    put("datacenter".into(), pick(rng, datacenters).into());
    put("rack".into(), rng.random_range(0..100).to_string());
    put("os".into(), pick(rng, &OS).into());
    put("arch".into(), pick(rng, &ARCH).into());
    put("team".into(), pick(rng, &TEAM).into());
    put("service".into(), rng.random_range(0..20).to_string());
    put("service_version".into(), rng.random_range(0..2).to_string());
    put("service_environment".into(), pick(rng, &ENVIRONMENT).into());
    for t in 0..extra {
        put(format!("tag_{t}"), format!("value_{}", rng.random_range(0..1000)));
    }
    serde_json::Value::Object(tags).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelSpec;

    #[test]
    fn tags_are_consistent_and_usage_stays_in_range() {
        let spec = ModelSpec::Cpu(Options { hosts: 5, extra_tags: 2 });
        let mut b = Batch::new(&spec.schema());
        spec.generator(3, 1, 0, 5000).next_batch(&mut b, 5000);
        let tags: serde_json::Value = serde_json::from_str(b.columns[1].json(0)).unwrap();
        assert_eq!(tags["hostname"], "host_5");
        let keys: Vec<&String> = tags.as_object().unwrap().keys().collect();
        let declared = &spec.schema().columns[1].fields;
        assert_eq!(keys.len(), declared.len(), "{keys:?} {declared:?}");
        assert!(declared.iter().all(|(k, _)| tags[k].is_string()), "{declared:?}");
        let region = tags["region"].as_str().unwrap();
        assert!(tags["datacenter"].as_str().unwrap().starts_with(region));
        for col in &b.columns[2..] {
            let Values::Int4(v) = col else { panic!() };
            assert!(v.iter().all(|x| (0..=100).contains(x)));
        }
    }
}
