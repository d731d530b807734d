//! pgbench and dbload side by side on the harness's server: the same
//! built-in scripts run by both, and dbload's text must carry the summary
//! lines that pgbench prints (the lines every script around pgbench greps),
//! in pgbench's order, with transaction counts that the server confirms.
//! Keys and counts are compared, never timings. Also the rest of pgbench's
//! habits that its users meet in the output: the last `-P` line under
//! `-R`, and `--builtin` on a database that `init` has not filled.
//!
//! pgbench itself must be on PATH (the CI installs PostgreSQL's client
//! programs): without it these tests fail saying so, they never pass silently.

use std::process::Command;

use anyhow::{Context, Result};

use crate::pgbench::own_database;
use crate::support::{dbload_bin, ensure, refused, Ctx};
use crate::Phase::Parallel;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("parity::summary_keys_and_counts_match_pgbench", summary_keys_and_counts_match_pgbench, Parallel),
        ("parity::a_weighted_mix_has_pgbench_script_sections", a_weighted_mix_has_pgbench_script_sections, Parallel),
        ("parity::the_last_progress_line_comes_under_rate", the_last_progress_line_comes_under_rate, Parallel),
        ("parity::builtin_without_tables_says_run_init_first", builtin_without_tables_says_run_init_first, Parallel),
    ]
}

/// Runs pgbench with `args` against `url`; its stdout.
fn pgbench(url: &str, args: &[&str]) -> Result<String> {
    let out = Command::new("pgbench").args(args).arg(url).output().map_err(|e| {
        anyhow::anyhow!(
            "pgbench could not be run ({e}): the parity tests need it on PATH; install PostgreSQL's client \
             programs (the CI does, see .ci/run)"
        )
    })?;
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    ensure(out.status.success(), || format!("pgbench {args:?}: {}: {stdout}{stderr}", out.status))?;
    Ok(stdout.into_owned())
}

/// Runs `dbload timeit --url url args`; its stdout.
fn dbload(url: &str, args: &[&str]) -> Result<String> {
    let argv = [&["timeit", "--url", url][..], args].concat();
    let (code, stdout, stderr) = dbload_bin(&argv, &[]);
    ensure(code == 0, || format!("dbload {argv:?}: exit {code}: {stdout}{stderr}"))?;
    Ok(stdout)
}

/// The keys of pgbench's summary lines (from `transaction type:` on): a
/// line's text before its first `:` or `=`, digits made `N` (a script's
/// count is part of its line's words); `-r`'s rows of figures are left
/// out (their statements differ: pgbench lists its `\set` lines too).
fn keys(text: &str) -> Vec<String> {
    let from = text.find("transaction type:").unwrap_or(text.len());
    text[from..]
        .lines()
        .filter(|l| !l.trim_start().starts_with(|c: char| c.is_ascii_digit()) && !l.trim().is_empty())
        .map(|l| {
            let key = l.split([':', '=']).next().unwrap_or(l);
            let mut out = String::new();
            for c in key.trim_end().chars() {
                match (c.is_ascii_digit(), out.ends_with('N')) {
                    (true, true) => {}
                    (true, false) => out.push('N'),
                    (false, _) => out.push(c),
                }
            }
            out
        })
        .collect()
}

/// Every one of pgbench's keys is among dbload's, in pgbench's order.
fn in_order(pgbench: &[String], dbload: &[String]) -> Result<()> {
    let mut rest = dbload.iter();
    for key in pgbench {
        ensure(rest.any(|k| k == key), || {
            format!("pgbench's line `{key}` is not in dbload's text in pgbench's order\npgbench: {pgbench:#?}\ndbload: {dbload:#?}")
        })?;
    }
    Ok(())
}

/// The figure after `key` on the line that starts with it: `N` of `key: N/M` or `key N`.
fn figure(text: &str, key: &str) -> Result<u64> {
    let line = text.lines().find(|l| l.starts_with(key)).with_context(|| format!("no line `{key}` in\n{text}"))?;
    let digits: String = line[key.len()..].trim_start().chars().take_while(char::is_ascii_digit).collect();
    digits.parse().with_context(|| format!("no count after `{key}`: {line}"))
}

fn history(db: &Ctx) -> Result<u64> {
    db.scalar("SELECT count(*) FROM pgbench_history")?.parse().context("pgbench_history count")
}

fn summary_keys_and_counts_match_pgbench(ctx: &Ctx) -> Result<()> {
    let db = own_database(ctx, "dbload_parity_summary", Some(1))?;
    let args = ["-n", "-c", "2", "-j", "2", "-t", "40", "-M", "prepared", "-b", "tpcb-like", "-r"];
    let before = history(&db)?;
    let theirs = pgbench(&db.url, &args)?;
    let after = history(&db)?;
    let processed = "number of transactions actually processed:";
    ensure(figure(&theirs, processed)? == after - before, || {
        format!("pgbench's count is not the server's:\n{theirs}")
    })?;
    // -n: no truncated history, in both.
    let ours = dbload(&db.url, &args)?;
    let gained = history(&db)? - after;
    ensure(figure(&ours, processed)? == gained, || {
        format!("dbload counted otherwise than the server ({gained}):\n{ours}")
    })?;
    ensure(ours.contains(&format!("{processed} 80/80\n")), || ours.clone())?;
    in_order(&keys(&theirs), &keys(&ours))?;
    // -r: pgbench's block, a row per SQL statement in pgbench's layout.
    let row = "           0  UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;\n";
    ensure(theirs.contains(row) && ours.contains(row), || format!("no `{row}` row in both:\n{theirs}\n{ours}"))?;
    // cr8's `-r N` beside pgbench's `-t N`: two counts, refused.
    refused(&["timeit", "--url", &db.url, "-b", "select-only", "-t", "5", "-r", "3"], "give one")?;
    // With a duration, pgbench's `duration:` line.
    let args = ["-n", "-c", "2", "-j", "2", "-T", "2", "-b", "select-only", "-P", "1"];
    let theirs = pgbench(&db.url, &args)?;
    in_order(&keys(&theirs), &keys(&dbload(&db.url, &args)?))
}

fn a_weighted_mix_has_pgbench_script_sections(ctx: &Ctx) -> Result<()> {
    let db = own_database(ctx, "dbload_parity_mix", Some(1))?;
    let args = ["-n", "-c", "2", "-j", "2", "-t", "50", "-b", "tpcb-like@5", "-b", "select-only@5", "-r"];
    let theirs = pgbench(&db.url, &args)?;
    let before = history(&db)?;
    let ours = dbload(&db.url, &args)?;
    let gained = history(&db)? - before;
    in_order(&keys(&theirs), &keys(&ours))?;
    for text in [&theirs, &ours] {
        ensure(text.contains("transaction type: multiple scripts\n"), || text.to_string())?;
        ensure(
            text.contains("SQL script 1: <builtin: TPC-B (sort of)>\n - weight: 5 (targets 50.0% of total)\n"),
            || text.to_string(),
        )?;
        ensure(text.contains("SQL script 2: <builtin: select only>\n - weight: 5 (targets 50.0% of total)\n"), || {
            text.to_string()
        })?;
    }
    // Only tpcb-like inserts into pgbench_history: its section's count is the server's.
    let section = ours.split("SQL script 1:").nth(1).context("script 1's section")?;
    let tpcb = figure(section.lines().nth(2).context("its count line")?, " - ")?;
    ensure(tpcb == gained, || format!("script 1 counted {tpcb}, the server {gained} history rows:\n{ours}"))?;
    ensure(figure(&ours, "number of transactions actually processed:")? == 100, || ours.clone())
}

fn the_last_progress_line_comes_under_rate(ctx: &Ctx) -> Result<()> {
    let argv = ["timeit", "--url", &ctx.url, "-s", "select 1", "-T", "3", "-R", "50", "-P", "1"];
    let (code, stdout, stderr) = dbload_bin(&argv, &[]);
    ensure(code == 0, || format!("exit {code}: {stdout}{stderr}"))?;
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("progress: ")).collect();
    // A line per second of the 3, the last one at the run's end.
    ensure(lines.len() == 3 && lines[2].starts_with("progress: 3.0 s, "), || format!("{lines:#?}"))
}

fn builtin_without_tables_says_run_init_first(ctx: &Ctx) -> Result<()> {
    let db = own_database(ctx, "dbload_parity_no_tables", None)?;
    refused(&["timeit", "--url", &db.url, "--builtin", "select-only", "-t", "1"], "run `dbload init --scale N` first")
}
