//! A figure compared with a bound: `--fail-if`, `--where` and `--slo`
//! (`config::fail_if`) and k6's thresholds (`k6::thresholds`) judge with
//! the same six operators, so they read and apply them here, once.

/// A comparison of a figure with a bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Op {
    /// `<`, `<=`, `>`, `>=`, `==` or `!=`; `None` for anything else.
    pub fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            "==" => Op::Eq,
            "!=" => Op::Ne,
            _ => return None,
        })
    }

    /// Whether `a OP b` holds.
    pub fn compare(self, a: f64, b: f64) -> bool {
        match self {
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Gt => a > b,
            Op::Ge => a >= b,
            Op::Eq => a == b,
            Op::Ne => a != b,
        }
    }
}
