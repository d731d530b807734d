//! pgbench's `\set` expressions: numbers, `:variables`, arithmetic
//! (`+ - * / %`, unary minus, parentheses) and pgbench's functions,
//! including its random distributions, evaluated per script run.
//!
//! The parser is a small Pratt parser written by hand, not a parser crate:
//! the grammar is three precedence levels and a call syntax (~100 lines),
//! and every error must name the column and say what to do (an unknown
//! function lists the known ones, a wrong argument count says how many).
//! winnow (already in the lock file) has a Pratt combinator, but its folds
//! are plain function pointers and its errors carry static labels, so those
//! messages would have needed a custom error type larger than this parser.
//! It emits a flat postfix program (see [`Expr`]), so that no length of
//! expression makes running it recurse.
//!
//! The distributions follow pgbench's documented definitions (see
//! [`Func`]); they are part of what dbload offers pgbench's users, so they
//! live here rather than in a crate whose streams and bounds differ.

use std::fmt;

use rand::rngs::ChaCha8Rng;
use rand::RngExt;

/// The digits of `i64::MIN` without its sign: one past the largest integer.
const MIN_INT_DIGITS: &str = "9223372036854775808";

/// A value of pgbench's expression language: integers stay integers (64-bit,
/// overflow is an error) until a double enters the computation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Int(i64),
    Double(f64),
}

impl Num {
    fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Double(d) => d,
        }
    }

    /// pgbench's conversion of a double to an integer: rounded to the
    /// nearest, ties to even, refused when out of range.
    fn as_int(self) -> Result<i64, String> {
        match self {
            Num::Int(i) => Ok(i),
            Num::Double(d) => {
                let r = d.round_ties_even();
                if r.is_nan() || r < i64::MIN as f64 || r >= i64::MAX as f64 {
                    Err(format!("double {d} is out of range for an integer"))
                } else {
                    Ok(r as i64)
                }
            }
        }
    }
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Num::Int(i) => write!(f, "{i}"),
            Num::Double(d) => write!(f, "{d}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

/// The functions dbload knows of pgbench's, with their definitions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Func {
    Abs,
    /// Converted to a double.
    Double,
    /// Converted to an integer (rounded to the nearest).
    Int,
    Least,
    Greatest,
    Sqrt,
    Ln,
    Exp,
    Pow,
    Mod,
    Pi,
    /// Uniform integer in `[lb, ub]`.
    Random,
    /// Integer in `[lb, ub]` with density `exp(-p (x - lb) / (ub - lb + 1)) / (1 - exp(-p))`, `p > 0`:
    /// the lowest values are the most frequent.
    RandomExponential,
    /// Integer in `[lb, ub]` from a standard normal truncated to `[-p, p)` and mapped onto the
    /// interval, `p >= 2`: the middle values are the most frequent.
    RandomGaussian,
    /// Bounded Zipfian integer in `[lb, ub]`, `1.001 <= p <= 1000`: value `lb + k - 1` is drawn
    /// `((k + 1) / k)^p` times as often as `lb + k` (Devroye's rejection method).
    RandomZipfian,
}

/// Each function's name and how many arguments it takes (`None`: one or more).
const FUNCS: &[(&str, Func, Option<usize>)] = &[
    ("abs", Func::Abs, Some(1)),
    ("double", Func::Double, Some(1)),
    ("exp", Func::Exp, Some(1)),
    ("greatest", Func::Greatest, None),
    ("int", Func::Int, Some(1)),
    ("least", Func::Least, None),
    ("ln", Func::Ln, Some(1)),
    ("mod", Func::Mod, Some(2)),
    ("pi", Func::Pi, Some(0)),
    ("pow", Func::Pow, Some(2)),
    ("power", Func::Pow, Some(2)),
    ("random", Func::Random, Some(2)),
    ("random_exponential", Func::RandomExponential, Some(3)),
    ("random_gaussian", Func::RandomGaussian, Some(3)),
    ("random_zipfian", Func::RandomZipfian, Some(3)),
    ("sqrt", Func::Sqrt, Some(1)),
];

/// A parsed expression as a program in postfix order (each operator after
/// its operands), run on a stack of values. Flat, not a tree: a `\set` of
/// 200,000 additions is a left-leaning chain 200,000 deep, which a tree
/// evaluates (and drops) by recursing once per term, past any thread's stack.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    code: Vec<Instr>,
    /// The most values on the stack at once, so that a run allocates once.
    stack: usize,
}

/// One step of an [`Expr`]'s program; variables are slots of the script's variables.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Instr {
    Const(Num),
    Var(usize),
    /// Negates the top value.
    Neg,
    /// Replaces the top two values by their result.
    Bin(Op),
    /// Replaces the top `n` values, its arguments in order, by its result.
    Call(Func, usize),
}

impl Expr {
    fn new(code: Vec<Instr>) -> Expr {
        let (mut depth, mut stack) = (0usize, 0usize);
        for instr in &code {
            match instr {
                Instr::Const(_) | Instr::Var(_) => depth += 1,
                Instr::Neg => {}
                Instr::Bin(_) => depth -= 1,
                Instr::Call(_, n) => depth = depth + 1 - n,
            }
            stack = stack.max(depth);
        }
        Expr { code, stack }
    }
}

/// A parse error at a byte offset of the expression's text.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub at: usize,
    pub message: String,
}

fn err<T>(at: usize, message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError { at, message: message.into() })
}

/// Parses `text`; `var` gives the slot of a variable name, or why it cannot
/// be read there (not defined, or a `-D` text that is no number).
pub fn parse(text: &str, var: &mut dyn FnMut(&str) -> Result<usize, String>) -> Result<Expr, ParseError> {
    let mut p = Parser { text, at: 0, var, depth: 0, code: Vec::new() };
    p.expr(0)?;
    p.skip_space();
    match p.peek() {
        None => Ok(Expr::new(p.code)),
        Some(')') => err(p.at, "unmatched `)`"),
        Some(c) if "<>=!&|#~".contains(c) => err(
            p.at,
            format!("operator `{c}` is not supported: dbload's pgbench expressions have + - * / % and functions"),
        ),
        Some(_) => err(p.at, "expected an operator (+ - * / %) or the end of the expression"),
    }
}

struct Parser<'a, 'v> {
    text: &'a str,
    at: usize,
    var: &'v mut dyn FnMut(&str) -> Result<usize, String>,
    /// Nesting of sub-expressions, bounded so that no input exhausts the stack.
    depth: usize,
    /// The program so far: each parsed operand and operator appended in postfix order.
    code: Vec<Instr>,
}

/// Deeper than any script needs; well within a thread's stack.
const MAX_DEPTH: usize = 100;

impl Parser<'_, '_> {
    fn peek(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }

    fn skip_space(&mut self) {
        while let Some(c) = self.peek().filter(|c| c.is_whitespace()) {
            self.at += c.len_utf8();
        }
    }

    /// An identifier at the current position (pgbench's: letters, digits, `_`, not starting with a digit).
    fn ident(&mut self) -> &str {
        let start = self.at;
        let len = self.text[start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(self.text.len() - start);
        self.at += len;
        &self.text[start..start + len]
    }

    /// Binary operators and their binding power; all are left-associative.
    fn infix(c: char) -> Option<(Op, u8)> {
        match c {
            '+' => Some((Op::Add, 1)),
            '-' => Some((Op::Sub, 1)),
            '*' => Some((Op::Mul, 2)),
            '/' => Some((Op::Div, 2)),
            '%' => Some((Op::Mod, 2)),
            _ => None,
        }
    }

    fn expr(&mut self, min_power: u8) -> Result<(), ParseError> {
        if self.depth == MAX_DEPTH {
            return err(self.at, format!("the expression is nested more than {MAX_DEPTH} deep"));
        }
        self.depth += 1;
        let e = self.binary(min_power);
        self.depth -= 1;
        e
    }

    /// An operand and the operators binding tighter than `min_power` after
    /// it; a chain of operators of one power is a loop, not a recursion.
    fn binary(&mut self, min_power: u8) -> Result<(), ParseError> {
        self.operand()?;
        loop {
            self.skip_space();
            let Some((op, power)) = self.peek().and_then(Self::infix) else { break };
            if power <= min_power {
                break;
            }
            self.at += 1;
            self.expr(power)?;
            self.code.push(Instr::Bin(op));
        }
        Ok(())
    }

    fn operand(&mut self) -> Result<(), ParseError> {
        self.skip_space();
        let start = self.at;
        match self.peek() {
            Some('-') => {
                self.at += 1;
                // pgbench's one exception: the smallest integer, whose
                // digits alone are past the largest, is a literal after a minus.
                self.skip_space();
                let rest = &self.text[self.at..];
                if let Some(after) = rest.strip_prefix(MIN_INT_DIGITS) {
                    if !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '.' || c == '_') {
                        self.at += MIN_INT_DIGITS.len();
                        self.code.push(Instr::Const(Num::Int(i64::MIN)));
                        return Ok(());
                    }
                }
                // Unary minus binds tighter than any binary operator.
                let inner = self.code.len();
                self.expr(2)?;
                // A negative literal is a constant; `-(-9223372036854775808)` stays an overflow, found when run.
                let folded = match &self.code[inner..] {
                    [Instr::Const(Num::Int(i))] => i.checked_neg().map(Num::Int),
                    [Instr::Const(Num::Double(d))] => Some(Num::Double(-d)),
                    _ => None,
                };
                match folded {
                    Some(n) => self.code[inner] = Instr::Const(n),
                    None => self.code.push(Instr::Neg),
                }
                Ok(())
            }
            Some('+') => {
                self.at += 1;
                self.expr(2)
            }
            Some('(') => {
                self.at += 1;
                self.expr(0)?;
                self.skip_space();
                if self.peek() != Some(')') {
                    return err(self.at, format!("expected `)` to close the `(` at column {}", start + 1));
                }
                self.at += 1;
                Ok(())
            }
            Some(':') => {
                self.at += 1;
                let name = self.ident().to_string();
                if name.is_empty() {
                    return err(start, "expected a variable name after `:`");
                }
                match (self.var)(&name) {
                    Ok(slot) => {
                        self.code.push(Instr::Var(slot));
                        Ok(())
                    }
                    Err(why) => err(start, why),
                }
            }
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == '_' => self.call(start),
            Some(c) => err(start, format!("unexpected `{c}`: expected a number, a :variable, a function or `(`")),
            None => err(start, "the expression ends too early: expected a number, a :variable, a function or `(`"),
        }
    }

    fn number(&mut self) -> Result<(), ParseError> {
        let start = self.at;
        let rest = &self.text[start..];
        let mut len = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        let mut double = false;
        if rest[len..].starts_with('.') {
            double = true;
            len += 1;
            len += rest[len..].find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len() - len);
        }
        if rest[len..].starts_with(['e', 'E']) {
            let exp = &rest[len + 1..];
            let sign = usize::from(exp.starts_with(['+', '-']));
            let digits = exp[sign..].find(|c: char| !c.is_ascii_digit()).unwrap_or(exp.len() - sign);
            if digits > 0 {
                double = true;
                len += 1 + sign + digits;
            }
        }
        let token = &rest[..len];
        self.at += len;
        let n = if double {
            match token.parse::<f64>() {
                Ok(d) => Num::Double(d),
                Err(_) => return err(start, format!("`{token}` is not a number")),
            }
        } else {
            match token.parse::<i64>() {
                Ok(i) => Num::Int(i),
                Err(_) => return err(start, format!("integer {token} is out of range (at most {})", i64::MAX)),
            }
        };
        self.code.push(Instr::Const(n));
        Ok(())
    }

    fn call(&mut self, start: usize) -> Result<(), ParseError> {
        let name = self.ident().to_ascii_lowercase();
        self.skip_space();
        if self.peek() != Some('(') {
            return err(start, format!("`{name}` is not a number or a function call; a variable is written `:{name}`"));
        }
        let Some(&(_, func, arity)) = FUNCS.iter().find(|(n, _, _)| *n == name) else {
            let known: Vec<&str> = FUNCS.iter().map(|(n, _, _)| *n).collect();
            return err(start, format!("unknown function `{name}` (functions: {})", known.join(", ")));
        };
        self.at += 1;
        let mut args = 0;
        self.skip_space();
        if self.peek() == Some(')') {
            self.at += 1;
        } else {
            loop {
                self.expr(0)?;
                args += 1;
                self.skip_space();
                match self.peek() {
                    Some(',') => self.at += 1,
                    Some(')') => {
                        self.at += 1;
                        break;
                    }
                    _ => return err(self.at, format!("expected `,` or `)` in the arguments of {name}()")),
                }
            }
        }
        match arity {
            Some(n) if args != n => {
                err(start, format!("{name}() takes {n} argument{}, {args} given", if n == 1 { "" } else { "s" }))
            }
            None if args == 0 => err(start, format!("{name}() takes at least one argument")),
            _ => {
                self.code.push(Instr::Call(func, args));
                Ok(())
            }
        }
    }
}

impl Expr {
    /// The value of the expression with `vars` (the script's variables by
    /// slot) and `rng` for the random functions; an error says what failed.
    pub fn eval(&self, vars: &[Num], rng: &mut ChaCha8Rng) -> Result<Num, String> {
        let mut stack: Vec<Num> = Vec::with_capacity(self.stack);
        for instr in &self.code {
            let value = match *instr {
                Instr::Const(n) => n,
                Instr::Var(slot) => vars[slot],
                Instr::Neg => match stack.pop().expect("an operand, as parsed") {
                    Num::Int(i) => Num::Int(i.checked_neg().ok_or("integer out of range")?),
                    Num::Double(d) => Num::Double(-d),
                },
                Instr::Bin(op) => {
                    let b = stack.pop().expect("a right operand, as parsed");
                    let a = stack.pop().expect("a left operand, as parsed");
                    arith(op, a, b)?
                }
                Instr::Call(func, n) => {
                    let first = stack.len() - n;
                    let value = call(func, &stack[first..], rng)?;
                    stack.truncate(first);
                    value
                }
            };
            stack.push(value);
        }
        Ok(stack.pop().expect("a value, as parsed"))
    }
}

fn arith(op: Op, a: Num, b: Num) -> Result<Num, String> {
    let overflow = || "integer out of range".to_string();
    match (op, a, b) {
        (Op::Mod, a, b) => {
            let (a, b) = (a.as_int()?, b.as_int()?);
            if b == 0 {
                return Err("division by zero".into());
            }
            // i64::MIN % -1 overflows in Rust; its remainder is 0.
            Ok(Num::Int(a.checked_rem(b).unwrap_or(0)))
        }
        (op, Num::Int(a), Num::Int(b)) => {
            let r = match op {
                Op::Add => a.checked_add(b),
                Op::Sub => a.checked_sub(b),
                Op::Mul => a.checked_mul(b),
                Op::Div if b == 0 => return Err("division by zero".into()),
                Op::Div => a.checked_div(b),
                Op::Mod => unreachable!("handled above"),
            };
            r.map(Num::Int).ok_or_else(overflow)
        }
        (op, a, b) => {
            let (a, b) = (a.as_f64(), b.as_f64());
            Ok(Num::Double(match op {
                Op::Add => a + b,
                Op::Sub => a - b,
                Op::Mul => a * b,
                Op::Div if b == 0.0 => return Err("division by zero".into()),
                Op::Div => a / b,
                Op::Mod => unreachable!("handled above"),
            }))
        }
    }
}

fn call(func: Func, args: &[Num], rng: &mut ChaCha8Rng) -> Result<Num, String> {
    let f = |i: usize| args[i].as_f64();
    let any_double = args.iter().any(|a| matches!(a, Num::Double(_)));
    Ok(match func {
        Func::Abs => match args[0] {
            Num::Int(i) => Num::Int(i.checked_abs().ok_or("integer out of range")?),
            Num::Double(d) => Num::Double(d.abs()),
        },
        Func::Double => Num::Double(f(0)),
        Func::Int => Num::Int(args[0].as_int()?),
        Func::Least | Func::Greatest => {
            let pick_first = |a: f64, b: f64| if func == Func::Least { a <= b } else { a >= b };
            let best = args.iter().copied().reduce(|a, b| if pick_first(a.as_f64(), b.as_f64()) { a } else { b });
            let best = best.expect("at least one argument, checked when parsed");
            if any_double {
                Num::Double(best.as_f64())
            } else {
                best
            }
        }
        Func::Sqrt => Num::Double(f(0).sqrt()),
        Func::Ln => Num::Double(f(0).ln()),
        Func::Exp => Num::Double(f(0).exp()),
        Func::Pow => Num::Double(f(0).powf(f(1))),
        Func::Mod => arith(Op::Mod, args[0], args[1])?,
        Func::Pi => Num::Double(std::f64::consts::PI),
        Func::Random | Func::RandomExponential | Func::RandomGaussian | Func::RandomZipfian => {
            let (lb, ub) = (args[0].as_int()?, args[1].as_int()?);
            if ub < lb {
                return Err(format!("empty range given to random: [{lb}, {ub}]"));
            }
            // The number of values, as pgbench counts them; beyond i64 it cannot draw uniformly.
            let n = ub.checked_sub(lb).and_then(|d| d.checked_add(1)).ok_or("random range is too large")?;
            Num::Int(match func {
                Func::Random => rng.random_range(lb..=ub),
                Func::RandomExponential => lb + scaled(n, exponential01(rng, f(2))?),
                Func::RandomGaussian => lb + scaled(n, gaussian01(rng, f(2))?),
                _ => lb + zipfian(rng, n, f(2))? - 1,
            })
        }
    })
}

/// Index `[0, n)` for a draw `r` in `[0, 1)`.
fn scaled(n: i64, r: f64) -> i64 {
    ((n as f64 * r) as i64).min(n - 1)
}

/// A double in `(0, 1]`, for logarithms.
fn open_low(rng: &mut ChaCha8Rng) -> f64 {
    1.0 - rng.random::<f64>()
}

/// `[0, 1)` with density `p exp(-p r) / (1 - exp(-p))`: the inverse of its distribution function.
fn exponential01(rng: &mut ChaCha8Rng, p: f64) -> Result<f64, String> {
    if p.is_nan() || p <= 0.0 {
        return Err(format!("random_exponential: the parameter must be greater than 0, got {p}"));
    }
    let cut = (-p).exp();
    Ok(-(cut + (1.0 - cut) * open_low(rng)).ln() / p)
}

/// The smallest parameter pgbench accepts for random_gaussian.
const MIN_GAUSSIAN: f64 = 2.0;

/// `[0, 1)` from a standard normal (Box–Muller) truncated to `[-p, p)`.
fn gaussian01(rng: &mut ChaCha8Rng, p: f64) -> Result<f64, String> {
    if p.is_nan() || p < MIN_GAUSSIAN {
        return Err(format!("random_gaussian: the parameter must be at least {MIN_GAUSSIAN}, got {p}"));
    }
    loop {
        let z = (-2.0 * open_low(rng).ln()).sqrt() * (std::f64::consts::TAU * rng.random::<f64>()).cos();
        if (-p..p).contains(&z) {
            return Ok((z + p) / (2.0 * p));
        }
    }
}

/// pgbench's bounds for random_zipfian's parameter.
const ZIPFIAN: std::ops::RangeInclusive<f64> = 1.001..=1000.0;

/// `k` in `[1, n]` with probability proportional to `k^-s`: Devroye's
/// rejection method for the Zipf distribution ("Non-Uniform Random Variate
/// Generation", p. 550-551), drawn until the value is within the bound.
fn zipfian(rng: &mut ChaCha8Rng, n: i64, s: f64) -> Result<i64, String> {
    if !ZIPFIAN.contains(&s) {
        return Err(format!(
            "random_zipfian: the parameter must be between {} and {}, got {s}",
            ZIPFIAN.start(),
            ZIPFIAN.end()
        ));
    }
    let b = 2f64.powf(s - 1.0);
    loop {
        let x = open_low(rng).powf(-1.0 / (s - 1.0)).floor();
        let t = (1.0 + 1.0 / x).powf(s - 1.0);
        let v: f64 = rng.random();
        if x <= n as f64 && v * x * (t - 1.0) / (b - 1.0) <= t / b {
            return Ok(x as i64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn vars(name: &str) -> Result<usize, String> {
        ["scale", "client_id", "aid"].iter().position(|v| *v == name).ok_or(format!("`{name}` is not defined"))
    }

    fn value(text: &str) -> Num {
        let e = parse(text, &mut vars).unwrap_or_else(|e| panic!("{text}: {e:?}"));
        e.eval(&[Num::Int(10), Num::Int(3), Num::Double(2.5)], &mut ChaCha8Rng::seed_from_u64(1)).unwrap()
    }

    fn error(text: &str) -> ParseError {
        parse(text, &mut vars).expect_err(text)
    }

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(value("1 + 2 * 3"), Num::Int(7));
        assert_eq!(value("(1 + 2) * 3"), Num::Int(9));
        assert_eq!(value("10 - 4 - 3"), Num::Int(3));
        assert_eq!(value("100 / 10 / 5"), Num::Int(2));
        assert_eq!(value("7 % 4 * 2"), Num::Int(6));
        assert_eq!(value("-2 * -3"), Num::Int(6));
        assert_eq!(value("- (1 + 2) * 2"), Num::Int(-6));
        assert_eq!(value("100000 * :scale"), Num::Int(1_000_000));
        assert_eq!(value(":client_id % 2 + :aid"), Num::Double(3.5));
        assert_eq!(value("7 / 2"), Num::Int(3), "integer division truncates, as in pgbench");
        assert_eq!(value("7 / 2.0"), Num::Double(3.5));
        assert_eq!(value("1.5e2 + .5"), Num::Double(150.5));
    }

    #[test]
    fn functions() {
        assert_eq!(value("abs(-5)"), Num::Int(5));
        assert_eq!(value("least(3, 1, 2)"), Num::Int(1));
        assert_eq!(value("greatest(3, 1.5, 2)"), Num::Double(3.0));
        assert_eq!(value("int(5.4 + 3.8)"), Num::Int(9));
        assert_eq!(value("double(3) / 2"), Num::Double(1.5));
        assert_eq!(value("mod(-7, 3)"), Num::Int(-1));
        assert_eq!(value("sqrt(16) + pow(2, 3)"), Num::Double(12.0));
        assert_eq!(value("random(5, 5)"), Num::Int(5));
        assert_eq!(value("RANDOM(1, 1)"), Num::Int(1), "function names are case-insensitive");
    }

    #[test]
    fn errors_say_where_and_what() {
        let e = error("random(1, 10");
        assert_eq!(e.at, 12);
        assert!(e.message.contains("expected `,` or `)`"), "{e:?}");
        let e = error("1 + random_uniform(1, 2)");
        assert_eq!(e.at, 4);
        assert!(e.message.contains("unknown function `random_uniform`") && e.message.contains("random_zipfian"));
        let e = error("random(1)");
        assert_eq!((e.at, e.message.as_str()), (0, "random() takes 2 arguments, 1 given"));
        let e = error("1 + :naid");
        assert_eq!(e.at, 4);
        assert!(e.message.contains("`naid` is not defined"), "{e:?}");
        assert!(error("1 +").message.contains("ends too early"));
        assert!(error("(1 + 2").message.contains("expected `)`"));
        assert!(error("1 2").message.contains("expected an operator"));
        assert!(error("1 < 2").message.contains("operator `<` is not supported"));
        assert!(error("aid + 1").message.contains("written `:aid`"));
        assert!(error("99999999999999999999").message.contains("out of range"));
        assert!(error(&"(".repeat(5000)).message.contains("nested more than 100 deep"));
        assert!(error(&"-".repeat(5000)).message.contains("nested more than 100 deep"));
    }

    #[test]
    fn evaluation_errors() {
        let eval = |text: &str| {
            parse(text, &mut vars).unwrap().eval(&[Num::Int(0); 3], &mut ChaCha8Rng::seed_from_u64(1)).unwrap_err()
        };
        assert_eq!(eval("1 / :scale"), "division by zero");
        assert_eq!(eval("9223372036854775807 + 1"), "integer out of range");
        assert!(eval("random(10, 1)").contains("empty range"));
        assert!(eval("random_exponential(1, 10, 0)").contains("greater than 0"));
        assert!(eval("random_gaussian(1, 10, 1.5)").contains("at least 2"));
        assert!(eval("random_zipfian(1, 10, 1.0)").contains("between 1.001 and 1000"));
    }

    /// Draws of `func(lb, ub, p)` with a fixed seed: all in range, and their mean.
    fn draws(func: &str, lb: i64, ub: i64, p: f64) -> (f64, Vec<u64>) {
        let text = format!("{func}({lb}, {ub}, {p})").replace(", NaN)", ")");
        let e = parse(&text, &mut vars).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        let mut counts = vec![0u64; (ub - lb + 1) as usize];
        let n = 200_000;
        for _ in 0..n {
            let Num::Int(v) = e.eval(&[], &mut rng).unwrap() else { panic!("an integer") };
            assert!((lb..=ub).contains(&v), "{text}: {v}");
            counts[(v - lb) as usize] += 1;
        }
        let mean = counts.iter().enumerate().map(|(i, c)| (lb + i as i64) as f64 * *c as f64).sum::<f64>() / n as f64;
        (mean, counts)
    }

    /// The exact mean of a distribution over `lb..=ub` with weights `w(k)`, k from 0.
    fn exact_mean(lb: i64, ub: i64, w: impl Fn(f64) -> f64) -> f64 {
        let ks = 0..=(ub - lb);
        let total: f64 = ks.clone().map(|k| w(k as f64)).sum();
        ks.map(|k| (lb + k) as f64 * w(k as f64)).sum::<f64>() / total
    }

    #[test]
    fn uniform_covers_its_range_evenly() {
        let (mean, counts) = draws("random", 1, 100, f64::NAN);
        assert!((mean - 50.5).abs() < 0.3, "{mean}");
        assert!(counts.iter().all(|&c| (1700..2300).contains(&c)), "{counts:?}");
    }

    #[test]
    fn exponential_matches_pgbench_density() {
        let (lb, ub, p) = (1, 100, 5.0);
        let n = (ub - lb + 1) as f64;
        // The probability of index k: the density integrated over [k/n, (k+1)/n).
        let cdf = |x: f64| (1.0 - (-p * x).exp()) / (1.0 - (-p).exp());
        let (mean, counts) = draws("random_exponential", lb, ub, p);
        let want = exact_mean(lb, ub, |k| cdf((k + 1.0) / n) - cdf(k / n));
        assert!((mean - want).abs() < 0.3, "{mean} vs {want}");
        assert!(counts[0] > counts[50] && counts[50] > counts[99], "decreasing");
    }

    #[test]
    fn gaussian_is_centred_and_truncated() {
        let (lb, ub, p) = (1, 100, 2.5);
        let (mean, counts) = draws("random_gaussian", lb, ub, p);
        assert!((mean - 50.5).abs() < 0.3, "{mean}");
        // The middle tenth holds about Φ(0.25)-Φ(-0.25) / (2Φ(2.5)-1) ≈ 19.99 % of the draws.
        let middle: u64 = counts[45..55].iter().sum();
        let share = middle as f64 / 200_000.0;
        assert!((share - 0.1999).abs() < 0.005, "{share}");
        assert!(counts[0] > 0 && counts[99] > 0, "both ends reached");
    }

    #[test]
    fn zipfian_follows_its_power_law() {
        let (lb, ub, s) = (1, 100, 1.5);
        let (mean, counts) = draws("random_zipfian", lb, ub, s);
        let want = exact_mean(lb, ub, |k| (k + 1.0).powf(-s));
        assert!((mean - want).abs() < 0.3, "{mean} vs {want}");
        // pgbench's statement of it: 1 is drawn (2/1)^s times as often as 2.
        let ratio = counts[0] as f64 / counts[1] as f64;
        assert!((ratio - 2f64.powf(s)).abs() < 0.1, "{ratio}");
    }

    #[test]
    fn draws_are_reproducible_with_a_seed() {
        let e = parse("random_zipfian(1, 1000, 1.2) + random_gaussian(1, 10, 3)", &mut vars).unwrap();
        let run = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            (0..50).map(|_| e.eval(&[], &mut rng).unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
    }

    /// Issue 32: a chain of 200,000 additions is a program, not a tree 200,000
    /// deep: it is parsed, run and dropped without recursing once per term.
    /// (As a tree it overflowed the stack: see the integration test
    /// `pgbench::a_long_set_is_evaluated_not_a_crash`, which runs it in a child.)
    #[test]
    fn a_long_chain_runs_in_constant_stack() {
        let text = format!("1{}", " + 1".repeat(199_999));
        assert_eq!(value(&text), Num::Int(200_000));
        assert_eq!(value(&format!("{} 0", "2 * 3 + ".repeat(100_000))), Num::Int(600_000));
    }

    /// Folding `-` into a literal cannot overflow: the negated smallest integer is an error when run, as in pgbench.
    #[test]
    fn negating_the_smallest_integer_is_out_of_range() {
        let e = parse("-(-9223372036854775808)", &mut vars).unwrap();
        assert_eq!(e.eval(&[], &mut ChaCha8Rng::seed_from_u64(1)), Err("integer out of range".to_string()));
    }

    /// Issue 29, item 7: pgbench takes the smallest integer written as a
    /// literal after a minus (its lexer's one exception); dbload refused it.
    #[test]
    fn the_smallest_integer_is_taken_as_pgbench_takes_it() {
        assert_eq!(value("-9223372036854775808"), Num::Int(i64::MIN));
        assert_eq!(value("- 9223372036854775808 + 1"), Num::Int(i64::MIN + 1));
        assert_eq!(value("-9223372036854775808.0"), Num::Double(-9223372036854775808.0));
        assert!(error("9223372036854775808").message.contains("out of range"));
        assert!(error("-9223372036854775809").message.contains("out of range"));
    }
}
