//! pgbench's SQL: its four tables as `pgbench -i` makes them (PostgreSQL
//! 15's pgbench: same columns, fill factor and primary keys, vacuumed and
//! analyzed), and its built-in scripts, word for word as
//! `pgbench --show-script` prints them.

/// The tables, in the order `pgbench -i` drops them.
pub const TABLES: [&str; 4] = ["pgbench_accounts", "pgbench_branches", "pgbench_history", "pgbench_tellers"];

/// pgbench's `-s` beyond which it makes `aid` a bigint; dbload's accounts are integers.
pub const MAX_SCALE: i64 = 19_999;

/// Drops the tables of an earlier init.
pub fn drop_tables() -> String {
    format!("DROP TABLE IF EXISTS {}", TABLES.join(", "))
}

/// The tables, empty, as `pgbench -i` creates them.
pub const CREATE_TABLES: [&str; 4] = [
    "CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22))",
    "CREATE TABLE pgbench_tellers (tid int not null, bid int, tbalance int, filler char(84)) WITH (fillfactor=100)",
    "CREATE TABLE pgbench_accounts (aid int not null, bid int, abalance int, filler char(84)) WITH (fillfactor=100)",
    "CREATE TABLE pgbench_branches (bid int not null, bbalance int, filler char(88)) WITH (fillfactor=100)",
];

/// pgbench's default `v` step, after the data is in.
pub const VACUUM: [&str; 4] = [
    "VACUUM ANALYZE pgbench_branches",
    "VACUUM ANALYZE pgbench_tellers",
    "VACUUM ANALYZE pgbench_accounts",
    "VACUUM ANALYZE pgbench_history",
];

/// pgbench's default `p` step, last.
pub const PRIMARY_KEYS: [&str; 3] = [
    "ALTER TABLE pgbench_branches ADD PRIMARY KEY (bid)",
    "ALTER TABLE pgbench_tellers ADD PRIMARY KEY (tid)",
    "ALTER TABLE pgbench_accounts ADD PRIMARY KEY (aid)",
];

/// The scale of tables made by `init` (or `pgbench -i`), as pgbench reads it when it runs a built-in script.
pub const COUNT_SCALE: &str = "SELECT count(*) FROM pgbench_branches";

/// pgbench's built-in scripts: name, pgbench's description, text.
pub const BUILTINS: [(&str, &str, &str); 3] = [
    ("tpcb-like", "TPC-B (sort of)", TPCB_LIKE),
    ("simple-update", "simple update", SIMPLE_UPDATE),
    ("select-only", "select only", SELECT_ONLY),
];

const TPCB_LIKE: &str = "\
\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
";

const SIMPLE_UPDATE: &str = "\
\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
";

const SELECT_ONLY: &str = "\
\\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_statements() {
        let all: Vec<String> = [drop_tables()]
            .into_iter()
            .chain(CREATE_TABLES.map(String::from))
            .chain(VACUUM.map(String::from))
            .chain(PRIMARY_KEYS.map(String::from))
            .chain([COUNT_SCALE.to_string()])
            .collect();
        insta::assert_snapshot!(all.join(";\n"));
    }
}
