//! Query workloads: which query runs next (a weighted choice with fresh
//! parameters), as the one worker loop's [`Source`]; the mix's file, its
//! parameters and plans. How a query is sent is the drivers' (the
//! PostgreSQL protocol's `driver::pg::query`, CrateDB's HTTP executor).

pub mod explain;
pub mod expr;
pub mod file;
pub mod params;
pub mod script;
pub mod tsbs;

use std::sync::Arc;
use std::time::Duration;

use rand::rngs::ChaCha8Rng;
use rand::RngExt;

pub use file::QuerySpec;
use params::Value;

use crate::op::{Operation, Source};
use crate::sqltext::{self, Kind, Token};

/// How statements are sent (pgbench's -M).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// Simple query protocol: one message, parameters inlined as quoted literals.
    Simple,
    /// Extended protocol with an unnamed statement: parsed and planned every time.
    Extended,
    /// Extended protocol with statements prepared once per connection.
    Prepared,
}

/// One execution of one query of the mix, with its parameters drawn.
#[derive(Debug)]
pub struct QueryOp {
    pub label: usize,
    /// The query's parameters; a script's, of all its statements in order.
    pub params: Vec<Value>,
    /// A script's `\sleep`s, in order.
    pub sleeps: Vec<Duration>,
    /// With `-r`, how long each of a script's `\set`s took to draw, in order.
    pub sets: Vec<Duration>,
    /// Why a script's values could not be drawn (a division by zero, an
    /// empty random range): the run fails without sending anything.
    pub invalid: Option<String>,
    /// Set by its executor: how many times it was run again (pgbench's `--max-tries`).
    pub retries: u32,
    /// How long a script's values took to draw: its `\set`s, part of its latency.
    pub drawn: Duration,
}

impl QueryOp {
    /// An execution of a query (not a script) with these parameters.
    pub fn query(label: usize, params: Vec<Value>) -> QueryOp {
        QueryOp {
            label,
            params,
            sleeps: Vec::new(),
            sets: Vec::new(),
            invalid: None,
            retries: 0,
            drawn: Duration::ZERO,
        }
    }
}

impl Operation for QueryOp {
    fn units(&self) -> u64 {
        1
    }
    fn label(&self) -> usize {
        self.label
    }
    fn retries(&self) -> u32 {
        self.retries
    }
    fn drawn(&self) -> Duration {
        self.drawn
    }
}

impl QuerySpec {
    /// The placeholders (`$1` ...) the query's parameters fill, in all.
    pub fn placeholders(&self) -> usize {
        self.params.iter().map(|p| p.arity()).sum()
    }

    /// One execution's parameter values, in placeholder order.
    pub fn draw(&self, rng: &mut ChaCha8Rng, now_us: i64) -> Vec<Value> {
        let mut values = Vec::with_capacity(self.placeholders());
        for p in &self.params {
            p.draw(rng, now_us, &mut values);
        }
        values
    }
}

/// Picks the next query by ratio, draws its parameters, and stops after
/// `remaining` queries. One per worker, each with its own random stream.
pub struct Chooser {
    queries: Arc<[QuerySpec]>,
    /// Running sums of the ratios, for the weighted choice.
    cumulative: Vec<f64>,
    rng: ChaCha8Rng,
    remaining: u64,
    /// The values of a script's predefined variables ([`script::PREDEFINED`]).
    predefined: [i64; 3],
    /// `-r`: a script's `\set`s are timed as they are drawn.
    timed: bool,
}

impl Chooser {
    /// `client`: the worker, a script's `:client_id`; `scale`: its `:scale`;
    /// `seed`: its `:random_seed`.
    pub fn new(
        queries: Arc<[QuerySpec]>,
        rng: ChaCha8Rng,
        remaining: u64,
        client: usize,
        scale: i64,
        seed: u64,
    ) -> Self {
        let cumulative = queries
            .iter()
            .scan(0.0, |sum, q| {
                *sum += q.ratio;
                Some(*sum)
            })
            .collect();
        Chooser { queries, cumulative, rng, remaining, predefined: [scale, client as i64, seed as i64], timed: false }
    }

    /// Times each script's `\set`s as they are drawn (`-r`, pgbench's per-command latencies).
    pub fn timing_sets(self, timed: bool) -> Self {
        Chooser { timed, ..self }
    }

    fn choose(&mut self) -> usize {
        let total = *self.cumulative.last().expect("a workload has queries");
        let x = self.rng.random_range(0.0..total);
        self.cumulative.iter().position(|&c| x < c).unwrap_or(self.cumulative.len() - 1)
    }
}

impl Source for Chooser {
    type Op = QueryOp;

    async fn next(&mut self) -> Option<QueryOp> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let label = self.choose();
        let query = &self.queries[label];
        if let Some(script) = &query.script {
            let started = std::time::Instant::now();
            let mut op = match script.draw(&mut self.rng, self.predefined, self.timed) {
                Ok(d) => {
                    QueryOp { params: d.params, sleeps: d.sleeps, sets: d.sets, ..QueryOp::query(label, Vec::new()) }
                }
                Err(why) => QueryOp { invalid: Some(why), ..QueryOp::query(label, Vec::new()) },
            };
            op.drawn = started.elapsed();
            return Some(op);
        }
        // The clock is read for the parameters that draw times, not for a
        // query without any: at 100k queries/s a read per query shows.
        let now_us = if query.params.is_empty() { 0 } else { chrono::Utc::now().timestamp_micros() };
        let params = query.draw(&mut self.rng, now_us);
        Some(QueryOp::query(label, params))
    }
}

/// Replaces `$1`, `$2` ... with SQL literals, for the simple protocol (which
/// has no bound parameters). Strings, quoted names and comments are left alone.
pub fn inline_params(sql: &str, params: &[Value]) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut at = 0;
    for (t, n) in dollar_placeholders(sql) {
        if let Some(v) = params.get(n - 1) {
            out.push_str(&sql[at..t.at]);
            out.push_str(&v.to_sql_literal());
            at = t.at + t.text.len();
        }
    }
    out.push_str(&sql[at..]);
    out
}

/// Checks that each query's `params` fill its placeholders as counted in
/// its text ([`placeholders_in`]), for a target that cannot prepare a
/// statement (CrateDB's HTTP endpoint): a mismatch would fail every
/// execution alike, so it is an input error before the run (exit 2).
pub fn check_placeholders(queries: &[QuerySpec]) -> anyhow::Result<()> {
    for q in queries {
        let wanted = placeholders_in(&q.query);
        if wanted != q.placeholders() {
            return Err(placeholder_mismatch(&format!("query {} (`{}`)", q.name, q.query), wanted, q.placeholders()));
        }
    }
    Ok(())
}

/// A query's placeholders that its parameters do not fill (exit 2).
pub fn placeholder_mismatch(what: &str, wanted: usize, given: usize) -> anyhow::Error {
    crate::error::usage(format!(
        "{what}: it has {wanted} placeholder(s) ($1 ...) but {given} parameter(s) are given: give one `params` entry \
         per placeholder, in order, in a workload file (`dbload workload FILE`)"
    ))
}

/// The placeholders `sql` holds outside strings, quoted names and
/// comments: its highest `$n`, else its count of `?` (CrateDB's HTTP
/// endpoint takes both). For a target that cannot prepare a statement to
/// say so itself.
pub fn placeholders_in(sql: &str) -> usize {
    match dollar_placeholders(sql).map(|(_, n)| n).max() {
        Some(n) => n,
        None => sqltext::tokens(sql).filter(|t| t.kind == Kind::Other && t.text == "?").count(),
    }
}

/// Each `$n` (n ≥ 1) of `sql`, and its n.
fn dollar_placeholders(sql: &str) -> impl Iterator<Item = (Token<'_>, usize)> {
    sqltext::tokens(sql)
        .filter(|t| t.kind == Kind::Param)
        .filter_map(|t| t.text[1..].parse::<usize>().ok().filter(|&n| n >= 1).map(|n| (t, n)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{rng_for, Purpose};

    fn spec(name: &str, ratio: f64) -> QuerySpec {
        QuerySpec {
            name: name.into(),
            query: "select 1".into(),
            ratio,
            params: vec![],
            line: 1,
            script: None,
            weight: None,
        }
    }

    #[test]
    fn weighted_choice_converges_to_the_ratios() {
        let queries: Arc<[QuerySpec]> = vec![spec("a", 0.7), spec("b", 0.2), spec("c", 0.1)].into();
        let mut chooser = Chooser::new(queries, rng_for(5, 0, Purpose::Choice), 0, 0, 1, 5);
        let mut counts = [0u32; 3];
        for _ in 0..100_000 {
            counts[chooser.choose()] += 1;
        }
        for (count, want) in counts.iter().zip([0.7, 0.2, 0.1]) {
            let share = *count as f64 / 100_000.0;
            assert!((share - want).abs() < 0.01, "{counts:?}");
        }
    }

    #[test]
    fn inlines_parameters_outside_quotes() {
        let params = [Value::Int(3), Value::Text("O'Brien".into())];
        assert_eq!(
            inline_params("select '$1', \"$2\" from t where a = $1 and b = $2 and c = $3", &params),
            "select '$1', \"$2\" from t where a = 3 and b = 'O''Brien' and c = $3"
        );
        assert_eq!(inline_params("select $10", &params), "select $10");
        assert_eq!(inline_params("select $0, $, $2$1", &params), "select $0, $, 'O''Brien'3");
    }

    #[test]
    fn placeholders_are_counted_outside_quotes_in_either_form() {
        assert_eq!(placeholders_in("select $2, $1, '$3', \"$4\""), 2);
        assert_eq!(placeholders_in("select ? + ?, '?'"), 2);
        assert_eq!(placeholders_in("select 'it''s $1', $$, 1"), 0);
        assert_eq!(placeholders_in("select ?, $1"), 1, "a $n means the ? are not placeholders");
    }

    /// Issue 29, item 8: a `?` in a comment was counted, so a valid
    /// CrateDB HTTP query was refused (exit 2); a `$1` in a comment, a
    /// dollar quote or a name (`a$1`) is no placeholder either.
    #[test]
    fn comments_dollar_quotes_and_names_hold_no_placeholders() {
        assert_eq!(placeholders_in("select ? -- why?\n/* or ? */"), 1);
        assert_eq!(placeholders_in("select $$ $2 ? $$, $fn$ $3 $fn$, a$4, E'\\' $1' -- $5"), 0);
        let params = [Value::Int(3)];
        assert_eq!(inline_params("select $1 /* $1 */, $$$1$$, b$1", &params), "select 3 /* $1 */, $$$1$$, b$1");
    }
}
