//! Query workloads: which query runs next (a weighted choice with fresh
//! parameters), as the one worker loop's [`Source`]; the mix's file, its
//! parameters and plans. How a query is sent is the drivers' (the
//! PostgreSQL protocol's `driver::pg::query`, CrateDB's HTTP executor).

pub mod explain;
pub mod file;
pub mod params;
pub mod tsbs;

use std::sync::Arc;

use rand::rngs::ChaCha8Rng;
use rand::RngExt;

pub use file::QuerySpec;
use params::Value;

use crate::op::{Operation, Source};

/// How statements are sent (pgbench's -M).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
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
    pub params: Vec<Value>,
}

impl Operation for QueryOp {
    fn units(&self) -> u64 {
        1
    }
    fn label(&self) -> usize {
        self.label
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
}

impl Chooser {
    pub fn new(queries: Arc<[QuerySpec]>, rng: ChaCha8Rng, remaining: u64) -> Self {
        let cumulative = queries
            .iter()
            .scan(0.0, |sum, q| {
                *sum += q.ratio;
                Some(*sum)
            })
            .collect();
        Chooser { queries, cumulative, rng, remaining }
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
        let params = self.queries[label].draw(&mut self.rng, chrono::Utc::now().timestamp_micros());
        Some(QueryOp { label, params })
    }
}

/// Replaces `$1`, `$2` ... with SQL literals, for the simple protocol (which
/// has no bound parameters). Quoted strings and identifiers are left alone.
pub fn inline_params(sql: &str, params: &[Value]) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.char_indices().peekable();
    let mut quote: Option<char> = None;
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '$') => {
                let digits: String = sql[i + 1..].chars().take_while(|d| d.is_ascii_digit()).collect();
                if let Some(v) = digits.parse::<usize>().ok().and_then(|n| params.get(n.wrapping_sub(1))) {
                    out.push_str(&v.to_sql_literal());
                    for _ in 0..digits.len() {
                        chars.next();
                    }
                    continue;
                }
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{rng_for, Purpose};

    fn spec(name: &str, ratio: f64) -> QuerySpec {
        QuerySpec { name: name.into(), query: "select 1".into(), ratio, params: vec![], line: 1 }
    }

    #[test]
    fn weighted_choice_converges_to_the_ratios() {
        let queries: Arc<[QuerySpec]> = vec![spec("a", 0.7), spec("b", 0.2), spec("c", 0.1)].into();
        let mut chooser = Chooser::new(queries, rng_for(5, 0, Purpose::Choice), 0);
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
    }
}
