//! pgbench's custom scripts (`timeit -f`, `script:` entries of a workload
//! file, `--builtin`): SQL statements ending in `;`, `\set name expr`,
//! `\sleep n [us|ms|s]`, and `:name` in SQL replaced by a bound parameter.
//!
//! A script is parsed and checked once (every variable set before it is
//! used, every expression well formed: `file:line:column` and what to do);
//! each run then draws its variables ([`Script::draw`], pure: a random
//! stream in, values out) and the executor sends its statements in order.
//! Nothing a statement returns feeds a variable (pgbench's `\gset` is not
//! supported), so a run's values can be drawn before it is sent.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::ChaCha8Rng;

use super::expr::{self, Expr, Num};
use super::params::Value;
use crate::error::usage;
use crate::sqltext::{self, Kind};
use anyhow::Result;

/// The variables every script has, as pgbench defines them: `scale` (the
/// scale factor), `client_id` (the worker, from 0) and `random_seed`.
pub const PREDEFINED: [&str; 3] = ["scale", "client_id", "random_seed"];

/// A parsed script.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// The file (or `builtin:NAME`), for messages.
    pub origin: String,
    pub statements: Vec<Statement>,
    steps: Vec<Step>,
    /// Each step as pgbench's `-r` lists it, in script order: its SQL
    /// statements and its `\` commands.
    pub commands: Vec<Command>,
    /// Variable names by slot, the predefined ones first.
    vars: Vec<String>,
    /// `-D`'s numbers by slot, set before each run's first step.
    defined: Vec<(usize, Num)>,
    /// While parsing, the slots that hold a `-D` text and the `-D` that set
    /// it: a statement binds the text itself, an expression may not read it.
    texts: Vec<(usize, Define)>,
    /// The line and column of the first `\startpipeline` (pipelines need
    /// the extended protocol), and the line of the one still open while parsing.
    pipeline: Option<(usize, usize)>,
    open_pipeline: Option<usize>,
}

/// A variable defined on the command line (pgbench's `-D NAME=VALUE`): every
/// script sees it from its first line, and a `\set` may overwrite it.
#[derive(Debug, Clone, PartialEq)]
pub struct Define {
    pub name: String,
    pub value: Defined,
}

/// A `-D` value: pgbench keeps it as text and reads it as a number where an
/// expression needs one, so a number is one here, and any other text stays
/// text (a statement's parameter, never an expression's operand).
#[derive(Debug, Clone, PartialEq)]
pub enum Defined {
    Num(Num),
    Text(Arc<str>),
}

impl Define {
    /// `-D NAME=VALUE` as given: an integer or a double, as pgbench's
    /// expressions read them, else text (exit 2 naming the option for a bad name).
    pub fn parse(given: &str) -> Result<Define> {
        let fail = |why: String| usage(format!("-D {given}: {why}"));
        let Some((name, value)) = given.split_once('=') else {
            return Err(fail("give NAME=VALUE, as pgbench's -D (e.g. -D nbranches=10)".into()));
        };
        if !is_name(name) {
            return Err(fail(format!(
                "`{name}` is not a variable name (letters, digits, _; not starting with a digit)"
            )));
        }
        if name == PREDEFINED[1] {
            return Err(fail("pgbench sets :client_id for each client, over any -D; use another name".into()));
        }
        let value = match (value.trim().parse::<i64>(), value.trim().parse::<f64>()) {
            (Ok(i), _) => Defined::Num(Num::Int(i)),
            (_, Ok(d)) if d.is_finite() => Defined::Num(Num::Double(d)),
            _ => Defined::Text(value.into()),
        };
        Ok(Define { name: name.to_string(), value })
    }
}

/// How often a script run that failed with a serialization failure or a
/// deadlock is tried again, as pgbench's `--max-tries` and `--latency-limit`
/// bound it: up to `max` tries in all (0: no count), not past the latency
/// limit since its first try began, and not past the run's end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tries {
    pub max: u32,
    pub latency_limit: Option<Duration>,
    /// The run's end, once its loop has started (`Executor::ends_at`).
    pub ends: Option<Instant>,
}

impl Tries {
    /// Whether try `n` (from 1) of a run whose first try began at `first`
    /// is followed by another if it fails retriably. Settled as the try
    /// starts: one begun before the end may still be followed by one.
    pub fn again(&self, n: u32, first: Instant) -> bool {
        let now = Instant::now();
        n != self.max
            && self.latency_limit.is_none_or(|limit| now.duration_since(first) <= limit)
            && self.ends.is_none_or(|end| now < end)
    }
}

/// A step of a script as pgbench's `-r` lists it: a SQL statement's text,
/// or a `\` command's line as written (`\set aid random(1, 100000)`).
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    pub text: String,
    /// 1-based line where it starts.
    pub line: usize,
}

/// One SQL statement of a script.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// As written (`--` comments and the final `;` left out), for the report.
    pub text: String,
    /// As sent: each `:name` replaced by `$1`, `$2` ... in order.
    pub sql: String,
    /// What is bound to each `$n`.
    args: Vec<Arg>,
    /// 1-based line where it starts.
    pub line: usize,
}

/// What a statement's `$n` is bound to: a variable's value at that point of
/// the run, or the `-D` text it holds all the run (no `\set` before it).
#[derive(Debug, Clone, PartialEq)]
enum Arg {
    Slot(usize),
    Text(Arc<str>),
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Set { slot: usize, expr: Expr, line: usize },
    Run(usize),
    Sleep { amount: Amount, unit_us: u64 },
    Pipeline(Pipeline),
}

/// pgbench's pipeline commands: the statements between `\startpipeline`
/// and `\endpipeline` are sent without waiting for each other's answers,
/// `\syncpipeline` ends a transaction inside (a Sync, not sent yet), and
/// `\endpipeline` sends the last Sync and reads every answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pipeline {
    Start,
    Sync,
    End,
}

#[derive(Debug, Clone, PartialEq)]
enum Amount {
    Const(i64),
    Var(usize),
}

/// What a script run does, in order, once its values are drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action {
    /// Send statement `i` with its share of the drawn parameters.
    Statement(usize),
    /// Sleep the next of the drawn sleeps.
    Sleep,
    Pipeline(Pipeline),
}

/// One run's values: the parameters of all its statements in order, its
/// sleeps, and (when timed, for `-r`) how long each `\set` took.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Drawn {
    pub params: Vec<Value>,
    pub sleeps: Vec<Duration>,
    pub sets: Vec<Duration>,
}

impl Script {
    /// Parses `text`; `origin` names it in errors (`origin:line:column: ...`, exit 2).
    /// Statements end at a `;` as psql reads them ([`sqltext`]); a `\`
    /// command starts a line that begins no statement's text.
    pub fn parse(text: &str, origin: &str) -> Result<Script> {
        Script::parse_defined(text, origin, &[])
    }

    /// [`Script::parse`], with variables defined before its first line (`-D`).
    pub fn parse_defined(text: &str, origin: &str, defines: &[Define]) -> Result<Script> {
        let mut script = Script {
            origin: origin.to_string(),
            statements: Vec::new(),
            steps: Vec::new(),
            commands: Vec::new(),
            vars: PREDEFINED.iter().map(|v| v.to_string()).collect(),
            defined: Vec::new(),
            texts: Vec::new(),
            pipeline: None,
            open_pipeline: None,
        };
        for d in defines {
            let slot = script.slot(&d.name);
            script.texts.retain(|(s, _)| *s != slot);
            match d.value {
                Defined::Num(n) => script.defined.push((slot, n)),
                Defined::Text(_) => script.texts.push((slot, d.clone())),
            }
        }
        let fail = |line: usize, col: usize, msg: String| usage(format!("{origin}:{line}:{col}: {msg}"));
        let mut pending = Pending::default();
        let mut tokens = sqltext::tokens(text);
        // The 1-based line of the next token, and the offset where that line starts.
        let (mut n, mut line_start) = (1, 0);
        loop {
            if tokens.offset() == line_start && !pending.has_code {
                if let Some((command, lines, next)) = meta_command(text, line_start) {
                    script.meta(&command, n).map_err(|(col, msg)| fail(n, col, msg))?;
                    script.commands.push(Command { text: command.trim().to_string(), line: n });
                    // A comment before the command belongs to no statement.
                    pending = Pending::default();
                    (n, line_start) = (n + lines, next);
                    tokens.resume_at(next);
                    continue;
                }
            }
            let Some(t) = tokens.next() else { break };
            match t.kind {
                Kind::Semicolon => script.run(pending.finish()),
                Kind::LineComment => {}
                Kind::Variable => {
                    let name = &t.text[1..];
                    let Some(slot) = script.vars.iter().position(|v| v == name) else {
                        return Err(fail(n, t.at - line_start + 1, undefined(name)));
                    };
                    pending.args.push(match script.text(slot) {
                        Some(Defined::Text(text)) => Arg::Text(text.clone()),
                        _ => Arg::Slot(slot),
                    });
                    pending.push(t.kind, t.text, &format!("${}", pending.args.len()), n);
                }
                kind => pending.push(kind, t.text, t.text, n),
            }
            if let Some(last) = t.text.rfind('\n') {
                n += t.text.matches('\n').count();
                line_start = t.at + last + 1;
            }
        }
        script.run(pending.finish());
        if let Some(line) = script.open_pipeline {
            return Err(fail(
                line,
                1,
                "\\startpipeline has no \\endpipeline: end the pipeline before the script ends".into(),
            ));
        }
        if script.statements.is_empty() {
            return Err(usage(format!("{origin}: the script has no SQL statement; write at least one, ending in `;`")));
        }
        Ok(script)
    }

    /// Adds a statement read whole, if there is one.
    fn run(&mut self, statement: Option<Statement>) {
        if let Some(statement) = statement {
            self.steps.push(Step::Run(self.statements.len()));
            self.commands.push(Command { text: statement.text.clone(), line: statement.line });
            self.statements.push(statement);
        }
    }

    /// A `\` command of line `n`; an error gives its 1-based column.
    fn meta(&mut self, command: &str, n: usize) -> Result<(), (usize, String)> {
        let indent = command.len() - command.trim_start().len();
        let Some(body) = command.trim_start().strip_prefix('\\') else {
            return Err((indent + 1, "expected a meta command starting with \\".into()));
        };
        let word_len = body.find(char::is_whitespace).unwrap_or(body.len());
        let (word, rest) = body.split_at(word_len);
        // Columns of `rest`'s text, 1-based.
        let rest_col = indent + 2 + word_len;
        let args = rest.trim_start();
        let args_col = rest_col + rest.len() - args.len();
        match word {
            "set" => {
                let name_len = args.find(char::is_whitespace).unwrap_or(args.len());
                let (name, expr_text) = args.split_at(name_len);
                if name.is_empty() || !is_name(name) {
                    return Err((
                        args_col,
                        format!("\\set needs a variable name (letters, digits, _), found `{name}`"),
                    ));
                }
                if expr_text.trim().is_empty() {
                    return Err((args_col + name_len, format!("\\set {name}: the expression is missing")));
                }
                let expr = expr::parse(expr_text, &mut |v| self.number(v))
                    .map_err(|e| (args_col + name_len + e.at, format!("\\set {name}: {}", e.message)))?;
                let slot = self.slot(name);
                self.texts.retain(|(s, _)| *s != slot);
                self.steps.push(Step::Set { slot, expr, line: n });
                Ok(())
            }
            "sleep" => {
                let mut parts = args.split_whitespace();
                let (amount, unit) = (parts.next(), parts.next());
                let amount = match amount {
                    None => {
                        return Err((args_col, "\\sleep needs a duration: \\sleep 10 ms (units: us, ms, s)".into()))
                    }
                    Some(v) if v.starts_with(':') => match self.number(&v[1..]) {
                        Ok(slot) => Amount::Var(slot),
                        Err(why) => return Err((args_col, format!("\\sleep: {why}"))),
                    },
                    Some(v) => match v.parse::<i64>() {
                        Ok(i) if i >= 0 => Amount::Const(i),
                        _ => {
                            return Err((
                                args_col,
                                format!("\\sleep: `{v}` is not a whole number of at least 0 or a :variable"),
                            ))
                        }
                    },
                };
                let unit_us = match unit {
                    None | Some("s") => 1_000_000,
                    Some("ms") => 1_000,
                    Some("us") => 1,
                    Some(u) => return Err((args_col, format!("\\sleep: unknown unit `{u}` (us, ms or s)"))),
                };
                if parts.next().is_some() {
                    return Err((args_col, "\\sleep takes a duration and a unit, nothing more".into()));
                }
                self.steps.push(Step::Sleep { amount, unit_us });
                Ok(())
            }
            "startpipeline" | "syncpipeline" | "endpipeline" => {
                if !args.is_empty() {
                    return Err((args_col, format!("\\{word} takes no argument")));
                }
                let mark = match (word, self.open_pipeline) {
                    ("startpipeline", None) => {
                        self.open_pipeline = Some(n);
                        self.pipeline.get_or_insert((n, indent + 1));
                        Pipeline::Start
                    }
                    ("startpipeline", Some(open)) => {
                        return Err((indent + 1, format!("\\startpipeline inside the pipeline of line {open}")))
                    }
                    (_, None) => {
                        return Err((indent + 1, format!("\\{word} outside a pipeline: begin it with \\startpipeline")))
                    }
                    ("syncpipeline", Some(_)) => Pipeline::Sync,
                    _ => {
                        self.open_pipeline = None;
                        Pipeline::End
                    }
                };
                self.steps.push(Step::Pipeline(mark));
                Ok(())
            }
            other => Err((
                indent + 1,
                format!(
                    "\\{other} is not supported: dbload runs pgbench's \\set, \\sleep and pipelines \\startpipeline, \\syncpipeline, \\endpipeline; remove or rewrite it"
                ),
            )),
        }
    }

    /// The `-D` text variable `slot` holds at this point of the script, if any.
    fn text(&self, slot: usize) -> Option<&Defined> {
        self.texts.iter().find(|(s, _)| *s == slot).map(|(_, d)| &d.value)
    }

    /// The slot of variable `name` where a number is read (an expression, a
    /// `\sleep`), or why it cannot be: not defined, or holding a `-D` text
    /// (pgbench fails that command: `malformed variable "NAME" value`).
    fn number(&self, name: &str) -> Result<usize, String> {
        let slot = self.vars.iter().position(|v| v == name).ok_or_else(|| undefined(name))?;
        match self.texts.iter().find(|(s, _)| *s == slot) {
            Some((_, Define { value: Defined::Text(text), .. })) => Err(format!(
                "variable `{name}` holds the text `{text}` (-D {name}={text}), not a number (pgbench: malformed \
                 variable \"{name}\" value): give -D {name} a number, or read :{name} only in SQL"
            )),
            _ => Ok(slot),
        }
    }

    /// The slot of variable `name`, made if it is new.
    fn slot(&mut self, name: &str) -> usize {
        self.vars.iter().position(|v| v == name).unwrap_or_else(|| {
            self.vars.push(name.to_string());
            self.vars.len() - 1
        })
    }

    /// What a run does, in order, each with its place in [`Script::commands`]
    /// (a `\set` is done by [`Script::draw`], before the run).
    pub fn actions(&self) -> impl Iterator<Item = (usize, Action)> + '_ {
        self.steps.iter().enumerate().filter_map(|(c, s)| match s {
            Step::Run(i) => Some((c, Action::Statement(*i))),
            Step::Sleep { .. } => Some((c, Action::Sleep)),
            Step::Pipeline(mark) => Some((c, Action::Pipeline(*mark))),
            Step::Set { .. } => None,
        })
    }

    /// The places in [`Script::commands`] of its `\set`s, in order: those
    /// of a timed draw's [`Drawn::sets`].
    pub fn sets(&self) -> impl Iterator<Item = usize> + '_ {
        self.steps.iter().enumerate().filter_map(|(c, s)| matches!(s, Step::Set { .. }).then_some(c))
    }

    /// The line and column of its first `\startpipeline`, if it has one:
    /// pipelines need the extended protocol (`-M extended` or `-M prepared`).
    pub fn pipeline(&self) -> Option<(usize, usize)> {
        self.pipeline
    }

    /// How many parameters statement `i` binds.
    pub fn param_count(&self, i: usize) -> usize {
        self.statements[i].args.len()
    }

    /// Draws one run's values: the `\set`s in order, with `predefined` the
    /// values of [`PREDEFINED`] (a `-D` of the same name wins, as in pgbench). An error says which line failed and why.
    /// `timed` (`-r`): each `\set`'s time goes to [`Drawn::sets`], as pgbench times its commands.
    pub fn draw(&self, rng: &mut ChaCha8Rng, predefined: [i64; 3], timed: bool) -> Result<Drawn, String> {
        let mut vars: Vec<Num> = predefined.iter().map(|v| Num::Int(*v)).collect();
        vars.resize(self.vars.len(), Num::Int(0));
        for &(slot, value) in &self.defined {
            vars[slot] = value;
        }
        let mut drawn = Drawn::default();
        for step in &self.steps {
            match step {
                Step::Set { slot, expr, line } => {
                    let started = timed.then(std::time::Instant::now);
                    vars[*slot] = expr
                        .eval(&vars, rng)
                        .map_err(|e| format!("{} line {line}: \\set {}: {e}", self.origin, self.vars[*slot]))?;
                    drawn.sets.extend(started.map(|s| s.elapsed()));
                }
                Step::Run(i) => drawn.params.extend(self.statements[*i].args.iter().map(|arg| match arg {
                    Arg::Slot(slot) => match vars[*slot] {
                        Num::Int(i) => Value::Int(i),
                        Num::Double(d) => Value::Float(d),
                    },
                    Arg::Text(text) => Value::Verbatim(text.clone()),
                })),
                Step::Sleep { amount, unit_us } => {
                    let n = match amount {
                        Amount::Const(n) => *n,
                        Amount::Var(slot) => vars[*slot].as_int_lossy(),
                    };
                    drawn.sleeps.push(Duration::from_micros((n.max(0) as u64).saturating_mul(*unit_us)));
                }
                Step::Pipeline(_) => {}
            }
        }
        Ok(drawn)
    }
}

impl Num {
    /// A sleep's amount: a double is rounded, as pgbench reads it.
    fn as_int_lossy(self) -> i64 {
        match self {
            Num::Int(i) => i,
            Num::Double(d) => d.round() as i64,
        }
    }
}

/// Why `:name` cannot be read: no `\set` gave it a value before.
fn undefined(name: &str) -> String {
    format!(
        "variable `{name}` is not defined: set it with `\\set {name} ...` on an earlier line (predefined: {})",
        PREDEFINED.join(", ")
    )
}

fn is_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The `\` command whose line starts at `at`, if that line holds one: its
/// text (a `\` at the end of a line continues it on the next), how many
/// lines it takes, and where the line after it starts.
fn meta_command(text: &str, at: usize) -> Option<(String, usize, usize)> {
    let line_end = |from: usize| text[from..].find('\n').map_or(text.len(), |i| from + i);
    let line = |from: usize, to: usize| text[from..to].strip_suffix('\r').unwrap_or(&text[from..to]);
    let mut end = line_end(at);
    if !line(at, end).trim_start().starts_with('\\') {
        return None;
    }
    let mut command = line(at, end).to_string();
    let mut lines = 1;
    while command.trim().len() > 1 && command.trim_end().ends_with('\\') && end < text.len() {
        let cut = command.trim_end().len() - 1;
        command.truncate(cut);
        command.push(' ');
        let next = end + 1;
        end = line_end(next);
        command.push_str(line(next, end));
        lines += 1;
    }
    Some((command, lines, (end + 1).min(text.len())))
}

/// A statement being read: as written, as sent (each `:name` a `$n`), and
/// the variable slot bound to each `$n`.
#[derive(Default)]
struct Pending {
    text: String,
    sql: String,
    args: Vec<Arg>,
    /// The line of its first token that is not blank.
    line: usize,
    /// Whether it holds SQL, not only blanks and comments.
    has_code: bool,
}

impl Pending {
    /// Adds a token of line `n`: `written` to the text, `sent` to the SQL.
    fn push(&mut self, kind: Kind, written: &str, sent: &str, n: usize) {
        if kind != Kind::Space && self.text.trim().is_empty() {
            self.line = n;
        }
        self.has_code |= kind.is_code();
        self.text.push_str(written);
        self.sql.push_str(sent);
    }

    /// The statement read so far, if it holds any SQL; the next starts empty.
    fn finish(&mut self) -> Option<Statement> {
        let Pending { text, sql, args, line, has_code } = std::mem::take(self);
        has_code.then(|| Statement { text: text.trim().to_string(), sql: sql.trim().to_string(), args, line })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    const TPCB: &str = "\\set aid random(1, 100000 * :scale)\n\
                        \\set delta random(-5000, 5000)\n\
                        BEGIN;\n\
                        UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
                        SELECT abalance::int FROM pgbench_accounts\n  WHERE aid = :aid; -- the balance\n\
                        \\sleep 2 ms\n\
                        END;\n";

    fn error(text: &str) -> String {
        let e = Script::parse(text, "t.sql").unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        e.to_string()
    }

    #[test]
    fn statements_bind_variables_as_parameters() {
        let s = Script::parse(TPCB, "t.sql").unwrap();
        let sql: Vec<&str> = s.statements.iter().map(|s| s.sql.as_str()).collect();
        assert_eq!(
            sql,
            [
                "BEGIN",
                "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2",
                "SELECT abalance::int FROM pgbench_accounts\n  WHERE aid = $1",
                "END"
            ]
        );
        assert_eq!(s.statements[1].text, "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid");
        assert_eq!(s.statements.iter().map(|s| s.line).collect::<Vec<_>>(), [3, 4, 5, 8]);
        let actions: Vec<(usize, Action)> = s.actions().collect();
        use Action::*;
        assert_eq!(actions, [(2, Statement(0)), (3, Statement(1)), (4, Statement(2)), (5, Sleep), (6, Statement(3))]);
        // Issue 32, item 4: -r lists every command in script order, as pgbench does.
        let commands: Vec<(&str, usize)> = s.commands.iter().map(|c| (c.text.as_str(), c.line)).collect();
        assert_eq!(
            commands[..2],
            [("\\set aid random(1, 100000 * :scale)", 1), ("\\set delta random(-5000, 5000)", 2)]
        );
        assert_eq!((commands.len(), commands[5], commands[6].0), (7, ("\\sleep 2 ms", 7), "END"));
        assert_eq!(s.sets().collect::<Vec<_>>(), [0, 1]);

        let drawn = s.draw(&mut ChaCha8Rng::seed_from_u64(1), [2, 0, 1], false).unwrap();
        assert_eq!(drawn.sleeps, [Duration::from_millis(2)]);
        assert!(drawn.sets.is_empty());
        let timed = s.draw(&mut ChaCha8Rng::seed_from_u64(1), [2, 0, 1], true).unwrap();
        assert_eq!((timed.params, timed.sets.len()), (drawn.params.clone(), 2));
        let [Value::Int(delta), Value::Int(aid), Value::Int(aid_again)] = drawn.params[..] else { panic!("{drawn:?}") };
        assert!((1..=200_000).contains(&aid) && (-5000..=5000).contains(&delta), "scale 2: {drawn:?}");
        assert_eq!(aid, aid_again);
    }

    /// pgbench's pipeline commands, in the order of the script; each
    /// misuse is refused at its line and column, as pgbench refuses it.
    #[test]
    fn pipelines_are_read_and_their_misuse_refused() {
        let text = "select 0;\n\\startpipeline\nselect 1;\n\\syncpipeline\nselect 2;\n\\endpipeline\n";
        let s = Script::parse(text, "p.sql").unwrap();
        use Action::*;
        let actions: Vec<Action> = s.actions().map(|(_, a)| a).collect();
        assert_eq!(
            actions,
            [
                Statement(0),
                Pipeline(super::Pipeline::Start),
                Statement(1),
                Pipeline(super::Pipeline::Sync),
                Statement(2),
                Pipeline(super::Pipeline::End)
            ]
        );
        assert_eq!(s.pipeline(), Some((2, 1)));
        assert_eq!(
            Script::parse("select 1;\n  \\startpipeline\n\\endpipeline\n", "p.sql").unwrap().pipeline(),
            Some((2, 3))
        );
        assert_eq!(Script::parse("select 1;\n", "p.sql").unwrap().pipeline(), None);
        for (text, expected) in [
            ("\\startpipeline\nselect 1;\n", "p.sql:1:1: \\startpipeline has no \\endpipeline"),
            ("\\startpipeline\n\\startpipeline\n", "p.sql:2:1: \\startpipeline inside the pipeline of line 1"),
            ("select 1;\n\\endpipeline\n", "p.sql:2:1: \\endpipeline outside a pipeline"),
            ("select 1;\n  \\syncpipeline\n", "p.sql:2:3: \\syncpipeline outside a pipeline"),
            ("\\startpipeline now\n", "p.sql:1:16: \\startpipeline takes no argument"),
        ] {
            let e = Script::parse(text, "p.sql").unwrap_err().to_string();
            assert!(e.starts_with(expected), "{text:?}: {e}");
        }
    }

    #[test]
    fn quotes_comments_and_casts_are_left_alone() {
        let s = Script::parse("\\set x 1\nselect ':x', \":x\", now()::date, :x -- :y\n", "t.sql").unwrap();
        assert_eq!(s.statements[0].sql, "select ':x', \":x\", now()::date, $1");
        assert_eq!(s.param_count(0), 1);
        let s = Script::parse("select 'a;b'; select 2", "t.sql").unwrap();
        assert_eq!(s.statements.len(), 2, "a last statement needs no `;`");
    }

    /// Issue 29, item 8: a `;` inside a dollar quote, an `E''` string or a
    /// block comment cut the statement there, as did a `:name` inside one
    /// become a parameter; pgbench (psqlscan) reads them whole.
    #[test]
    fn dollar_quotes_and_block_comments_are_read_whole() {
        let text = "\\set x 1\nDO $$ BEGIN PERFORM ':x'; END $$;\nselect E'\\';:x' /* a; /* :x; */ */, :x;\n";
        let s = Script::parse(text, "t.sql").unwrap();
        let sql: Vec<&str> = s.statements.iter().map(|s| s.sql.as_str()).collect();
        assert_eq!(sql, ["DO $$ BEGIN PERFORM ':x'; END $$", "select E'\\';:x' /* a; /* :x; */ */, $1"]);
        assert_eq!(s.statements.iter().map(|s| s.line).collect::<Vec<_>>(), [2, 3]);
        let s = Script::parse("select 1 /* a\n\\set x 1\n*/;\n", "t.sql").unwrap();
        assert_eq!(s.statements[0].sql, "select 1 /* a\n\\set x 1\n*/", "a comment's lines are no commands");
    }

    #[test]
    fn predefined_variables_and_continued_lines() {
        let s = Script::parse("\\set x :client_id * 10 + \\\n  :scale\nselect :x, :random_seed", "t.sql").unwrap();
        let drawn = s.draw(&mut ChaCha8Rng::seed_from_u64(1), [5, 3, 77], false).unwrap();
        assert_eq!(drawn.params, [Value::Int(35), Value::Int(77)]);
    }

    #[test]
    fn errors_name_the_file_line_and_column() {
        assert_eq!(
            error("select 1;\n\\set aid random(1, 10\n"),
            "t.sql:2:22: \\set aid: expected `,` or `)` in the arguments of random()"
        );
        let e = error("select 1;\nupdate t set a = :aid;\n");
        assert!(e.starts_with("t.sql:2:18: variable `aid` is not defined"), "{e}");
        let e = error("\\set n 1 +* 2\nselect :n");
        assert!(e.starts_with("t.sql:1:11: \\set n: unexpected `*`"), "{e}");
        let e = error("\\setshell x echo 1\nselect 1");
        assert!(e.starts_with("t.sql:1:1: \\setshell is not supported"), "{e}");
        assert!(error("\\sleep 1 minutes\nselect 1").contains("unknown unit `minutes`"));
        assert!(error("\\sleep :t\nselect 1").contains("`t` is not defined"));
        assert!(error("\\set 1x 2\nselect 1").contains("needs a variable name"));
        assert!(error("-- nothing\n\\set x 1\n").contains("no SQL statement"));
    }

    /// Issue 32: a `-D` text is bound as written until a `\\set` replaces
    /// it; a `\\sleep` or an expression cannot read it as a number.
    #[test]
    fn defined_texts_bind_as_written_and_are_no_numbers() {
        let define = |v: &str| Define::parse(&format!("t={v}")).unwrap();
        let s = Script::parse_defined("select :t;\n\\set t 2\nselect :t;\n", "t.sql", &[define("a b")]).unwrap();
        let drawn = s.draw(&mut ChaCha8Rng::seed_from_u64(1), [1, 0, 0], false).unwrap();
        assert_eq!(drawn.params, [Value::Verbatim("a b".into()), Value::Int(2)]);
        let e = Script::parse_defined("\\sleep :t ms\nselect 1;\n", "t.sql", &[define("x")]).unwrap_err();
        assert!(e.to_string().starts_with("t.sql:1:8: \\sleep: variable `t` holds the text `x`"), "{e}");
        assert!(Script::parse_defined("\\sleep :t ms\nselect 1;\n", "t.sql", &[define("3")]).is_ok());
    }

    /// Issue 32: pgbench's retry bounds: the count (0: none), the latency
    /// limit since the first try, the run's end.
    #[test]
    fn tries_stop_at_their_count_the_limit_or_the_end() {
        let now = Instant::now();
        let (hour, ms) = (Duration::from_secs(3600), Duration::from_millis(1));
        let tries = |max, latency_limit| Tries { max, latency_limit, ends: None };
        assert!(tries(3, None).again(2, now) && !tries(3, None).again(3, now));
        assert!(!tries(1, None).again(1, now));
        assert!(Tries { ends: Some(now + hour), ..tries(0, None) }.again(1_000_000, now));
        assert!(!Tries { ends: now.checked_sub(ms), ..tries(0, None) }.again(1, now));
        let long_ago = now.checked_sub(hour).unwrap();
        assert!(!tries(0, Some(ms)).again(1, long_ago) && tries(0, Some(hour + hour)).again(1, long_ago));
    }

    #[test]
    fn evaluation_errors_name_the_line() {
        let s = Script::parse("select 1;\n\\set x 1 / (:scale - 1)\nselect :x", "t.sql").unwrap();
        let e = s.draw(&mut ChaCha8Rng::seed_from_u64(1), [1, 0, 0], false).unwrap_err();
        assert_eq!(e, "t.sql line 2: \\set x: division by zero");
    }
}
