//! CrateDB `_sql` request bodies (work in progress).
