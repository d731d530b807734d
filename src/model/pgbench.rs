//! pgbench's tables as `pgbench -i -s N` fills them (PostgreSQL 15's
//! client-side generation): per unit of scale 1 branch, 10 tellers and
//! 100,000 accounts, balances 0; accounts have an empty filler (the server
//! pads its `char(84)`), branches and tellers none (NULL). `pgbench_history`
//! starts empty. Rows are numbered from 0 so that workers can fill disjoint
//! ranges of one table.

use super::{Batch, Column, Schema, SqlType, Values};

/// A pgbench table that `init` fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Branches,
    Tellers,
    Accounts,
}

impl Table {
    /// In the order pgbench fills them.
    pub const ALL: [Table; 3] = [Table::Branches, Table::Tellers, Table::Accounts];

    pub fn name(self) -> &'static str {
        match self {
            Table::Branches => "pgbench_branches",
            Table::Tellers => "pgbench_tellers",
            Table::Accounts => "pgbench_accounts",
        }
    }

    /// Rows per unit of scale (pgbench's `nbranches`, `ntellers`, `naccounts`).
    pub fn per_scale(self) -> u64 {
        match self {
            Table::Branches => 1,
            Table::Tellers => 10,
            Table::Accounts => 100_000,
        }
    }

    /// The columns written: an id, the branch (but for branches), the balance, the filler.
    pub fn schema(self) -> Schema {
        let int = |name: &str| Column::new(name, SqlType::Int4, false);
        let columns = match self {
            Table::Branches => vec![int("bid"), int("bbalance")],
            Table::Tellers => vec![int("tid"), int("bid"), int("tbalance")],
            Table::Accounts => vec![int("aid"), int("bid"), int("abalance")],
        };
        let filler = Column::new("filler", SqlType::Text { json: false }, false);
        Schema { columns: columns.into_iter().chain([filler]).collect(), key: Vec::new(), metrics_per_row: 0 }
    }

    /// Fills `batch` (of [`Table::schema`]) with rows `range` (from 0).
    pub fn fill(self, batch: &mut Batch, range: std::ops::Range<u64>) {
        batch.clear();
        let per_branch = self.per_scale();
        for i in range {
            let mut columns = batch.columns.iter_mut();
            let mut push = |v: u64| match columns.next() {
                // pgbench's ids are integers up to its MAX_SCALE; config checks the scale.
                Some(Values::Int4(values)) => values.push(v as i32),
                _ => unreachable!("the schema's integer columns"),
            };
            push(i + 1);
            if self != Table::Branches {
                push(i / per_branch + 1);
            }
            push(0);
            let filler = columns.next().expect("the filler column");
            // pgbench writes '' for accounts, and leaves the others' NULL.
            filler.end_value(self != Table::Accounts);
            batch.len += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_numbered_like_pgbench() {
        let mut batch = Batch::new(&Table::Accounts.schema());
        Table::Accounts.fill(&mut batch, 99_999..100_002);
        assert_eq!(batch.len, 3);
        assert_eq!(batch.columns[0], Values::Int4(vec![100_000, 100_001, 100_002]));
        assert_eq!(batch.columns[1], Values::Int4(vec![1, 2, 2]), "100,000 accounts per branch");
        assert_eq!(batch.columns[2], Values::Int4(vec![0, 0, 0]));
        assert!(!batch.columns[3].is_null(0) && batch.columns[3].json(0).is_empty());

        let mut batch = Batch::new(&Table::Tellers.schema());
        Table::Tellers.fill(&mut batch, 9..11);
        assert_eq!(batch.columns[0], Values::Int4(vec![10, 11]));
        assert_eq!(batch.columns[1], Values::Int4(vec![1, 2]), "10 tellers per branch");
        assert!(batch.columns[3].is_null(1));
    }
}
