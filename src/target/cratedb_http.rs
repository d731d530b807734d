//! CrateDB over its HTTP `_sql` endpoint (work in progress).
