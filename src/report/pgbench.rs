//! pgbench's summary of a script run, in its words, order and number
//! formats (PostgreSQL 15's `printResults`): the lines that every script
//! around pgbench greps (`transaction type:`, `tps = …`, `-r`'s block, a
//! section per script of a weighted mix), so that `dbload timeit -f` or
//! `--builtin` answers a pgbench user as pgbench does. dbload's own
//! figures (percentiles, p99 per statement, server cost) follow it, in
//! `query.rs`.

use std::fmt::Write as _;

use super::query::{
    failure_lines, footer, header, latency_limit_lines, query_blocks, retry_lines, QueryEntry, QueryReport,
    StatementEntry,
};

/// `100 × part / whole`, 0 where there is no whole (pgbench would print nan).
fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// timeit of pgbench scripts: dbload's header, pgbench's summary, then
/// dbload's block per script and its footer.
pub fn render(r: &QueryReport) -> String {
    let mut out = String::new();
    header(&mut out, r);
    summary(&mut out, r);
    out.push('\n');
    query_blocks(&mut out, r);
    footer(&mut out, r);
    out
}

/// The summary, from `transaction type:` to the last per-script line.
fn summary(out: &mut String, r: &QueryReport) {
    let s = &r.setup;
    let kind = match r.queries.as_slice() {
        [one] => one.transaction_type.as_deref().unwrap_or(&one.name),
        _ => "multiple scripts",
    };
    let _ = writeln!(out, "transaction type: {kind}");
    let _ = writeln!(out, "scaling factor: {}", s.scale.unwrap_or(1));
    if let Some(mode) = s.protocol.as_ref().and_then(clap::ValueEnum::to_possible_value) {
        let _ = writeln!(out, "query mode: {}", mode.get_name());
    }
    let _ = writeln!(out, "number of clients: {}", s.concurrency);
    let _ = writeln!(out, "number of threads: {}", s.threads);
    // pgbench leaves the line out for --max-tries 0 (unlimited).
    if s.max_tries != 0 {
        let _ = writeln!(out, "maximum number of tries: {}", s.max_tries);
    }
    let processed = "number of transactions actually processed";
    match (s.duration_limit_s, r.accounting.requested) {
        (None, Some(requested)) => {
            // pgbench's -t is per client; dbload's --repeat is in all, and may not split evenly.
            if requested % u64::from(s.concurrency.max(1)) == 0 {
                let _ = writeln!(out, "number of transactions per client: {}", requested / u64::from(s.concurrency));
            }
            let _ = writeln!(out, "{processed}: {}/{requested}", r.count);
        }
        (duration, _) => {
            if let Some(d) = duration {
                let _ = writeln!(out, "duration: {d} s");
            }
            let _ = writeln!(out, "{processed}: {}", r.count);
        }
    }
    let _ =
        writeln!(out, "number of failed transactions: {} ({:.3}%)", r.errors, percent(r.errors, r.count + r.errors));
    // Then, in pgbench's order, the lines its flags add.
    failure_lines(out, r);
    retry_lines(out, r);
    latency_limit_lines(out, r);
    // pgbench stops here when nothing succeeded: the rest would be meaningless.
    let Some(latency) = &r.latencies.latency_ms else { return };
    // pgbench times each transaction only under -P, -R or -L; without them
    // its average is the run's time × clients / transactions done, with no
    // stddev (dbload's own section below has the measured figures).
    if s.progress_s.is_some() || s.rate_queries_per_sec.is_some() || s.latency_limit_ms.is_some() {
        let _ = writeln!(out, "latency average = {:.3} ms", latency.mean);
        let _ = writeln!(out, "latency stddev = {:.3} ms", latency.stdev);
    } else {
        let average = 1000.0 * r.duration_s * f64::from(s.concurrency) / r.count.max(1) as f64;
        let failures = if r.errors > 0 { " (including failures)" } else { "" };
        let _ = writeln!(out, "latency average = {average:.3} ms{failures}");
    }
    if let Some(lag) = &r.latencies.schedule_lag_ms {
        let _ = writeln!(out, "rate limit schedule lag: avg {:.3} (max {:.3}) ms", lag.mean, lag.max);
    }
    match r.average_connection_ms {
        // -C: the window the rate is counted over holds each run's new connection.
        Some(ms) => {
            let _ = writeln!(out, "average connection time = {ms:.3} ms");
            let _ = writeln!(out, "tps = {:.6} (including reconnection times)", r.qps);
        }
        None => {
            let _ = writeln!(out, "initial connection time = {:.3} ms", r.initial_connection_ms);
            let _ = writeln!(out, "tps = {:.6} (without initial connection time)", r.qps);
        }
    }
    let retried = s.max_tries != 1;
    if let [one] = r.queries.as_slice() {
        statement_rows(out, "", one, retried);
        return;
    }
    for (i, q) in r.queries.iter().enumerate() {
        script_section(out, i + 1, q, r.count, retried);
    }
}

/// A weighted mix's section for one script: its weight beside the share
/// it got, its count, failures and latency, and `-r`'s rows.
fn script_section(out: &mut String, n: usize, q: &QueryEntry, total: u64, retried: bool) {
    let _ = writeln!(out, "SQL script {n}: {}", q.transaction_type.as_deref().unwrap_or(&q.name));
    if let Some(weight) = q.weight {
        let _ = writeln!(out, " - weight: {weight} (targets {:.1}% of total)", 100.0 * q.ratio);
    }
    let _ = writeln!(out, " - {} transactions ({:.1}% of total, tps = {:.6})", q.count, percent(q.count, total), q.qps);
    let _ =
        writeln!(out, " - number of failed transactions: {} ({:.3}%)", q.errors, percent(q.errors, q.count + q.errors));
    if let Some(l) = &q.latency_ms {
        let _ = writeln!(out, " - latency average = {:.3} ms", l.mean);
        let _ = writeln!(out, " - latency stddev = {:.3} ms", l.stdev);
    }
    statement_rows(out, " - ", q, retried);
}

/// `-r`: each command of the script in its order (SQL statements and `\`
/// commands, as pgbench 15 lists them), with its mean latency, failures and,
/// with `--max-tries` other than 1 (`retried`), retries; a statement's first
/// line as pgbench shows it (with its `;` when the statement is one line).
fn statement_rows(out: &mut String, prefix: &str, q: &QueryEntry, retried: bool) {
    let Some(statements) = &q.statements else { return };
    let what = if retried { ", failures and retries" } else { " and failures" };
    let _ = writeln!(out, "{prefix}statement latencies in milliseconds{what}:");
    for st in statements {
        let mean = st.latency_ms.as_ref().map_or(0.0, |l| l.mean);
        let _ = write!(out, "   {mean:>11.3}  {:>10}", st.errors);
        if retried {
            let _ = write!(out, "  {:>10}", st.retries);
        }
        let _ = writeln!(out, "  {}", first_line(st));
    }
}

fn first_line(st: &StatementEntry) -> String {
    match st.statement.split_once('\n') {
        Some((first, _)) => first.to_string(),
        None if st.statement.starts_with('\\') => st.statement.clone(),
        None => format!("{};", st.statement),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;

    /// pgbench's `-b tpcb-like -T 3 -M prepared -r`: its summary lines
    /// first, in its words and formats, then dbload's figures.
    #[test]
    fn pgbench_builtin_text() {
        let r = fixtures::timeit(&["--builtin", "tpcb-like", "-c", "2", "-j", "2", "-T", "3", "-M", "prepared", "-r"]);
        insta::assert_snapshot!(render(&r));
    }

    /// A weighted mix: pgbench's total lines, then a section per script
    /// with its weight beside the share it got.
    #[test]
    fn pgbench_weighted_mix_text() {
        let r = fixtures::timeit(&["-b", "tpcb-like@5", "-b", "select-only@5", "-c", "2", "-t", "11", "-r"]);
        insta::assert_snapshot!(render(&r));
    }

    /// A script file under -R: pgbench's schedule lag line, and the file named as given.
    #[test]
    fn pgbench_script_under_rate_text() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("update.sql");
        std::fs::write(&file, "\\set aid random(1, 10)\nUPDATE t\n   SET n = n + 1 WHERE id = :aid;\n").unwrap();
        let r = fixtures::timeit(&["-f", file.to_str().unwrap(), "-R", "10", "-T", "1", "-r"]);
        let text = render(&r).replace(file.to_str().unwrap(), "update.sql");
        insta::assert_snapshot!(text);
    }

    /// The JSON names a script run's figures in pgbench's words too, beside
    /// the keys scripts already read; a run of statements has no transactions.
    #[test]
    fn script_runs_have_tps_and_transactions_in_json() {
        let json = serde_json::to_value(fixtures::timeit(&["-b", "select-only", "-t", "10"])).unwrap();
        assert_eq!((&json["transactions"], &json["count"]), (&serde_json::json!(10), &serde_json::json!(10)));
        assert_eq!(json["tps"], json["qps"]);
        assert!(json["tps"].as_f64().unwrap() > 0.0, "{json}");
        assert_eq!(json["initial_connection_ms"], 12.345);
        assert_eq!(json["queries"][0]["weight"], 1);
        assert_eq!(json["queries"][0]["transaction_type"], "<builtin: select only>");
        let json = serde_json::to_value(fixtures::timeit(&["-s", "select 1"])).unwrap();
        assert!(json["tps"].is_null() && json["transactions"].is_null(), "{json}");
        assert!(json["queries"][0]["weight"].is_null() && json["queries"][0]["transaction_type"].is_null());
    }

    /// The lines pgbench's flags add (`--failures-detailed`, `--max-tries`,
    /// `-L`, `-C`) come inside its summary, in its order, and once: before,
    /// they came after dbload's block, and "maximum number of tries" said 1.
    #[test]
    fn the_lines_flags_add_are_in_pgbench_s_order() {
        let mut r = fixtures::timeit(&["-b", "select-only", "-T", "3", "-R", "100", "-L", "5"]);
        r.setup.failures_detailed = true;
        r.setup.max_tries = 3;
        r.above_latency_limit = Some(2);
        r.average_connection_ms = Some(1.5);
        let text = render(&r);
        let order = [
            "maximum number of tries: 3\n",
            "number of failed transactions:",
            "number of serialization failures:",
            "number of deadlock failures:",
            "number of transactions retried:",
            "total number of retries:",
            "number of transactions skipped:",
            "number of transactions above the 5.0 ms latency limit:",
            "latency average =",
            "rate limit schedule lag:",
            "average connection time = 1.500 ms\n",
            "(including reconnection times)\n",
        ];
        let at: Vec<usize> = order.iter().map(|line| text.find(line).unwrap_or(usize::MAX)).collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "pgbench's order {order:?}, found at {at:?}:\n{text}");
        for line in &order[..8] {
            assert_eq!(text.matches(line).count(), 1, "{line} once:\n{text}");
        }
        assert!(!text.contains("initial connection time"), "-C says the average connection time instead");
    }
}
