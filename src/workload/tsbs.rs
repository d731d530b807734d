//! `--suite tsbs-cpu`: TSBS's cpu-only query types as a workload. Each type
//! is one query of the mix, named as TSBS names it (so one row of the
//! report), all with the same weight, its parameters drawn per execution as
//! TSBS draws them: distinct random hosts, and a random window of the
//! type's length inside the time the data covers. TSBS knows the hosts and
//! the time range from its generation flags (`--scale`, `--timestamp-start`,
//! `--timestamp-end`); dbload reads them from the table once before the
//! run ([`CpuData`]), so the suite runs on whatever `ingest --model cpu`
//! wrote. The SQL of each type, per engine, is in `dialect::tsbs`.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use super::params::{ParamGen, Value};
use super::QuerySpec;
use crate::dialect::tsbs::{Bound, CpuQuery};
use crate::dialect::Engine;
use crate::error::usage;
use crate::hint::{did_you_mean, suggest};
use crate::ident::TableName;

/// `--suite`: a built-in query mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Suite {
    /// TSBS's 15 cpu-only query types, on the table `dbload ingest --model cpu` makes.
    TsbsCpu,
}

const HOUR_US: i64 = 3_600_000_000;

/// One TSBS query type: its name, the shape of its SQL, and the length of
/// its window in hours (groupby-orderby-limit binds only the window's end;
/// lastpoint has none).
#[derive(Debug, PartialEq)]
pub struct QueryType {
    pub name: &'static str,
    pub query: CpuQuery,
    hours: i64,
}

const fn single_groupby(name: &'static str, metrics: usize, hosts: usize, hours: i64) -> QueryType {
    QueryType { name, query: CpuQuery::SingleGroupby { metrics, hosts }, hours }
}

/// TSBS's cpu-only query types (`tsbs_generate_queries --use-case cpu-only`),
/// with the windows of its devops use case: single-groupby-M-H-T over T
/// hours, cpu-max-all over 8 h, double-groupby and high-cpu over 12 h,
/// groupby-orderby-limit up to the end of a random hour.
pub const CPU: [QueryType; 15] = [
    single_groupby("single-groupby-1-1-1", 1, 1, 1),
    single_groupby("single-groupby-1-1-12", 1, 1, 12),
    single_groupby("single-groupby-1-8-1", 1, 8, 1),
    single_groupby("single-groupby-5-1-1", 5, 1, 1),
    single_groupby("single-groupby-5-1-12", 5, 1, 12),
    single_groupby("single-groupby-5-8-1", 5, 8, 1),
    QueryType { name: "cpu-max-all-1", query: CpuQuery::MaxAll { hosts: 1 }, hours: 8 },
    QueryType { name: "cpu-max-all-8", query: CpuQuery::MaxAll { hosts: 8 }, hours: 8 },
    QueryType { name: "double-groupby-1", query: CpuQuery::DoubleGroupby { metrics: 1 }, hours: 12 },
    QueryType { name: "double-groupby-5", query: CpuQuery::DoubleGroupby { metrics: 5 }, hours: 12 },
    QueryType { name: "double-groupby-all", query: CpuQuery::DoubleGroupby { metrics: 10 }, hours: 12 },
    QueryType { name: "high-cpu-1", query: CpuQuery::HighCpu { hosts: Some(1) }, hours: 12 },
    QueryType { name: "high-cpu-all", query: CpuQuery::HighCpu { hosts: None }, hours: 12 },
    QueryType { name: "lastpoint", query: CpuQuery::Lastpoint, hours: 0 },
    QueryType { name: "groupby-orderby-limit", query: CpuQuery::GroupbyOrderbyLimit, hours: 1 },
];

impl QueryType {
    /// The time the data must cover for this type's window to fit in it.
    fn span_us(&self) -> i64 {
        self.hours * HOUR_US
    }
}

/// The suite as configured: which query types, on which table.
#[derive(Debug, Clone)]
pub struct CpuSuite {
    pub table: TableName,
    pub types: Vec<&'static QueryType>,
}

/// What the parameters are drawn from, as read from the table before the
/// run: its hosts, and the time of its first and last reading.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuData {
    pub hosts: Vec<String>,
    pub first_us: i64,
    pub last_us: i64,
}

impl CpuSuite {
    /// The types named by `--suite-queries` (all when none is), in TSBS's
    /// order; an unknown name is refused with the names there are.
    pub fn new(table: TableName, names: &[String]) -> Result<CpuSuite> {
        let known: Vec<&str> = CPU.iter().map(|t| t.name).collect();
        // `lastpoint, high-cpu-1` as typed, with a space after the comma.
        let names: Vec<&str> = names.iter().map(|n| n.trim()).collect();
        for name in &names {
            if !known.contains(name) {
                return Err(usage(format!(
                    "--suite-queries {name}: tsbs-cpu has no such query type{}; its types: {}",
                    did_you_mean(suggest(name, &known)),
                    known.join(", ")
                )));
            }
        }
        let types = CPU.iter().filter(|t| names.is_empty() || names.contains(&t.name)).collect();
        Ok(CpuSuite { table, types })
    }

    /// Each type as a query of the mix on `engine`, with equal ratios. A
    /// type that needs more hosts, or a longer time, than the table holds
    /// is refused with what it needs, rather than drawing windows that
    /// stick out of the data (TSBS's generator stops there too).
    pub fn specs(&self, engine: Engine, data: &CpuData) -> Result<Vec<QuerySpec>> {
        let span = data.last_us - data.first_us;
        let short: Vec<String> = self
            .types
            .iter()
            .filter(|t| t.query.hosts() > data.hosts.len() || t.span_us() > span)
            .map(|t| match t.query.hosts() > data.hosts.len() {
                true => format!("{} needs {} hosts", t.name, t.query.hosts()),
                false => format!("{} needs {} h", t.name, t.hours),
            })
            .collect();
        if !short.is_empty() {
            let covers = humantime::format_duration(Duration::from_secs((span / 1_000_000).max(0) as u64));
            return Err(usage(format!(
                "--suite tsbs-cpu: table {} holds {} host(s) and {covers} of readings, too little for {}: \
                 ingest more (the cpu model writes one reading per host every 10 s, so 12 h is \
                 --measurements 4321; --devices sets the hosts per worker), or leave those out with --suite-queries",
                self.table,
                data.hosts.len(),
                short.join(", "),
            )));
        }
        let hosts: Arc<[Value]> = data.hosts.iter().map(|h| Value::Text(h.clone())).collect();
        let ratio = 1.0 / self.types.len() as f64;
        Ok(self
            .types
            .iter()
            .map(|t| {
                let mut params = Vec::new();
                if t.query.hosts() > 0 {
                    params.push(ParamGen::Distinct { from: hosts.clone(), n: t.query.hosts() });
                }
                match t.query.window() {
                    Bound::Nothing => {}
                    Bound::Window => {
                        params.push(ParamGen::Window { lo_us: data.first_us, hi_us: data.last_us, len_us: t.span_us() })
                    }
                    Bound::End => {
                        params.push(ParamGen::TimeIn { lo_us: data.first_us + t.span_us(), hi_us: data.last_us })
                    }
                }
                QuerySpec {
                    name: t.name.into(),
                    query: t.query.sql(engine, &self.table),
                    ratio,
                    params,
                    line: 0,
                    script: None,
                    weight: None,
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{rng_for, Purpose};

    fn suite(names: &[&str]) -> Result<CpuSuite> {
        CpuSuite::new(TableName::parse("cpu").unwrap(), &names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
    }

    fn data(hosts: usize, hours: i64) -> CpuData {
        let first_us = 1_704_067_200_000_000;
        CpuData {
            hosts: (0..hosts).map(|h| format!("host_{h}")).collect(),
            first_us,
            last_us: first_us + hours * HOUR_US,
        }
    }

    #[test]
    fn picks_the_types_named_in_tsbs_order() {
        let all = suite(&[]).unwrap();
        assert_eq!(all.types.len(), 15);
        let some = suite(&["lastpoint", " high-cpu-1", "lastpoint"]).unwrap();
        assert_eq!(some.types.iter().map(|t| t.name).collect::<Vec<_>>(), ["high-cpu-1", "lastpoint"]);
        let e = suite(&["lastpoint", "high-cpu-2"]).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        let e = e.to_string();
        assert!(e.starts_with("--suite-queries high-cpu-2: tsbs-cpu has no such query type; did you mean"), "{e}");
        assert!(e.contains("groupby-orderby-limit"), "{e}");
    }

    /// Every query's parameters fill its placeholders, and are drawn inside the data.
    #[test]
    fn parameters_fill_the_placeholders_inside_the_data() {
        let data = data(10, 24);
        let specs = suite(&[]).unwrap().specs(Engine::Postgres, &data).unwrap();
        let mut rng = rng_for(1, 0, Purpose::Choice);
        for q in &specs {
            assert!((q.ratio - 1.0 / 15.0).abs() < 1e-12);
            let n = q.placeholders();
            assert!(q.query.contains(&format!("${n}")) || n == 0, "{}: {}", q.name, q.query);
            assert!(!q.query.contains(&format!("${}", n + 1)), "{}: {}", q.name, q.query);
            for _ in 0..100 {
                for v in q.draw(&mut rng, 0) {
                    match v {
                        Value::Timestamp(t) => assert!((data.first_us..=data.last_us).contains(&t), "{}", q.name),
                        Value::Text(h) => assert!(data.hosts.contains(&h)),
                        other => panic!("{}: {other:?}", q.name),
                    }
                }
            }
        }
    }

    /// `--suite-queries`' help lists the types by hand: it names every one.
    #[test]
    fn the_help_names_every_type() {
        use clap::CommandFactory;
        let mut cli = crate::cli::Cli::command();
        let help = cli.find_subcommand_mut("workload").expect("workload").render_long_help().to_string();
        for t in &CPU {
            let name = t.name.strip_prefix("single-groupby-").unwrap_or(t.name);
            assert!(help.contains(name), "{name} missing from {help}");
        }
    }

    #[test]
    fn too_little_data_is_refused_with_what_each_type_needs() {
        let e = suite(&[]).unwrap().specs(Engine::Postgres, &data(5, 2)).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        let e = e.to_string();
        assert!(e.contains("table cpu holds 5 host(s) and 2h of readings"), "{e}");
        assert!(e.contains("single-groupby-1-1-12 needs 12 h") && e.contains("cpu-max-all-8 needs 8 hosts"), "{e}");
        assert!(!e.contains("lastpoint") && !e.contains("single-groupby-1-1-1 "), "{e}");
        suite(&["single-groupby-1-1-1", "lastpoint", "groupby-orderby-limit"])
            .unwrap()
            .specs(Engine::Postgres, &data(1, 1))
            .unwrap();
    }
}
