//! pgbench's SQL: its four tables as `pgbench -i` makes them (PostgreSQL
//! 15's pgbench: same columns, fill factor, partitions of accounts,
//! unlogged or not, primary and foreign keys, rows made on the server for
//! its `G` step, vacuumed and analyzed), and its built-in scripts, word for word as
//! `pgbench --show-script` prints them.

/// The tables, in the order `pgbench -i` drops them.
pub const TABLES: [&str; 4] = ["pgbench_accounts", "pgbench_branches", "pgbench_history", "pgbench_tellers"];

/// pgbench's `-s` beyond which it makes `aid` a bigint; dbload's accounts are integers.
pub const MAX_SCALE: i64 = 19_999;

/// Drops the tables of an earlier init.
pub fn drop_tables() -> String {
    format!("DROP TABLE IF EXISTS {}", TABLES.join(", "))
}

/// How `--partitions` splits pgbench_accounts: pgbench's `--partition-method`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum PartitionMethod {
    // Equal ranges of `aid`, the first from MINVALUE and the last to MAXVALUE.
    #[default]
    Range,
    // `aid`'s hash, modulo the partitions.
    Hash,
}

/// `pgbench -i`'s table flags: `-F`, `--partitions`, `--partition-method`, `--unlogged-tables`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub fillfactor: u32,
    /// pgbench_accounts' partitions; 0: a plain table.
    pub partitions: u32,
    pub method: PartitionMethod,
    pub unlogged: bool,
}

impl Default for Layout {
    fn default() -> Layout {
        Layout { fillfactor: 100, partitions: 0, method: PartitionMethod::Range, unlogged: false }
    }
}

/// The tables, empty, as `pgbench -i` creates them with `layout`, in its
/// order: history, tellers, accounts, branches, then the partitions of
/// accounts (each with the fill factor, which a partitioned table cannot have).
pub fn create_tables(layout: &Layout, scale: i64) -> Vec<String> {
    let create = if layout.unlogged { "CREATE UNLOGGED TABLE" } else { "CREATE TABLE" };
    let fillfactor = format!(" WITH (fillfactor={})", layout.fillfactor);
    let accounts = match (layout.partitions, layout.method) {
        (0, _) => fillfactor.clone(),
        (_, PartitionMethod::Range) => " PARTITION BY RANGE (aid)".to_string(),
        (_, PartitionMethod::Hash) => " PARTITION BY HASH (aid)".to_string(),
    };
    let mut all = vec![
        format!("{create} pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22))"),
        format!("{create} pgbench_tellers (tid int not null, bid int, tbalance int, filler char(84)){fillfactor}"),
        format!("{create} pgbench_accounts (aid int not null, bid int, abalance int, filler char(84)){accounts}"),
        format!("{create} pgbench_branches (bid int not null, bbalance int, filler char(88)){fillfactor}"),
    ];
    let n = i64::from(layout.partitions);
    // pgbench's ranges: the accounts divided, rounded up, by the partitions.
    let part_size = (ACCOUNTS_PER_SCALE * scale + n - 1) / n.max(1);
    all.extend((1..=n).map(|p| {
        let bound = match layout.method {
            PartitionMethod::Range => {
                let from = if p == 1 { "MINVALUE".to_string() } else { ((p - 1) * part_size + 1).to_string() };
                let to = if p < n { (p * part_size + 1).to_string() } else { "MAXVALUE".to_string() };
                format!("FROM ({from}) TO ({to})")
            }
            PartitionMethod::Hash => format!("WITH (MODULUS {n}, REMAINDER {})", p - 1),
        };
        format!("{create} pgbench_accounts_{p} PARTITION OF pgbench_accounts FOR VALUES {bound}{fillfactor}")
    }));
    all
}

/// pgbench's accounts per unit of scale (`naccounts`).
const ACCOUNTS_PER_SCALE: i64 = 100_000;

/// Empties the tables before they are filled, as pgbench's `g` and `G` steps do first.
pub const TRUNCATE: &str = "TRUNCATE TABLE pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers";

/// pgbench's `G` step: the rows made by the server, in one transaction with the truncate.
pub fn generate_on_server(scale: i64) -> Vec<String> {
    vec![
        "BEGIN".to_string(),
        TRUNCATE.to_string(),
        format!("INSERT INTO pgbench_branches (bid, bbalance) SELECT bid, 0 FROM generate_series(1, {scale}) AS bid"),
        format!(
            "INSERT INTO pgbench_tellers (tid, bid, tbalance) SELECT tid, (tid - 1) / 10 + 1, 0 \
             FROM generate_series(1, {}) AS tid",
            10 * scale
        ),
        format!(
            "INSERT INTO pgbench_accounts (aid, bid, abalance, filler) SELECT aid, (aid - 1) / {ACCOUNTS_PER_SCALE} + 1, \
             0, '' FROM generate_series(1, {}) AS aid",
            ACCOUNTS_PER_SCALE * scale
        ),
        "COMMIT".to_string(),
    ]
}

/// pgbench's `v` step.
pub const VACUUM: [&str; 4] = [
    "VACUUM ANALYZE pgbench_branches",
    "VACUUM ANALYZE pgbench_tellers",
    "VACUUM ANALYZE pgbench_accounts",
    "VACUUM ANALYZE pgbench_history",
];

/// What pgbench does before a run of scripts unless `-n`, in its order.
pub const VACUUM_BEFORE_RUN: [&str; 3] =
    ["vacuum pgbench_branches", "vacuum pgbench_tellers", "truncate pgbench_history"];

/// What pgbench's `-v` adds before a run.
pub const VACUUM_ACCOUNTS: &str = "vacuum analyze pgbench_accounts";

/// pgbench's `p` step.
pub const PRIMARY_KEYS: [&str; 3] = [
    "ALTER TABLE pgbench_branches ADD PRIMARY KEY (bid)",
    "ALTER TABLE pgbench_tellers ADD PRIMARY KEY (tid)",
    "ALTER TABLE pgbench_accounts ADD PRIMARY KEY (aid)",
];

/// pgbench's `f` step (`--foreign-keys`), with its constraint names.
pub const FOREIGN_KEYS: [&str; 5] = [
    "ALTER TABLE pgbench_tellers ADD CONSTRAINT pgbench_tellers_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches",
    "ALTER TABLE pgbench_accounts ADD CONSTRAINT pgbench_accounts_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches",
    "ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches",
    "ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_tid_fkey FOREIGN KEY (tid) REFERENCES pgbench_tellers",
    "ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_aid_fkey FOREIGN KEY (aid) REFERENCES pgbench_accounts",
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
            .chain(create_tables(&Layout::default(), 1))
            .chain(generate_on_server(2))
            .chain(VACUUM.map(String::from))
            .chain(PRIMARY_KEYS.map(String::from))
            .chain(FOREIGN_KEYS.map(String::from))
            .chain([COUNT_SCALE.to_string()])
            .collect();
        insta::assert_snapshot!(all.join(";\n"));
    }

    /// Issue 32: pgbench 15's partitions of accounts, as `pgbench -i -s 2
    /// --partitions 3` makes them: ranges of 66,667 from MINVALUE to MAXVALUE.
    #[test]
    fn partitions_as_pgbench_makes_them() {
        let range = Layout { fillfactor: 80, partitions: 3, unlogged: true, ..Layout::default() };
        let hash = Layout { partitions: 2, method: PartitionMethod::Hash, ..Layout::default() };
        let all: Vec<String> = create_tables(&range, 2).into_iter().chain(create_tables(&hash, 1)).collect();
        insta::assert_snapshot!(all.join(";\n"));
    }
}
