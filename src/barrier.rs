//! The start barrier of a distributed run (`--instance I/N` with
//! `--results-url`): each instance registers a row in `dbload_instances`,
//! instance 0 marks when its table is made (the others wait for it before
//! they touch the table), and once all N say they are ready, each asks the
//! server for the common start: the last one's readiness plus
//! `START_LEAD` (2 s), on the server's clock, so the clients' clocks do not
//! matter. No coordinator runs anywhere but in these rows.
//!
//! The rows live in the results database, whose tables it makes if missing
//! (`results::schema`), but the barrier is not the store of finished runs:
//! the loop (`run::scale`) waits at it and names nothing of the store.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use tokio_postgres::Client;

use crate::config::scale::Instance;
use crate::dialect::results as sql;
use crate::driver::PgTarget;
use crate::error::{target, usage};
use crate::results::schema::{ensure_tables, Registered};

/// From the last instance ready to the common start: time for every
/// instance to see it (they ask every [`POLL`]) and sleep until it.
const START_LEAD: Duration = Duration::from_secs(2);
/// How often a waiting instance asks.
const POLL: Duration = Duration::from_millis(50);

/// This instance, registered, with the connection it waits on.
pub struct Registration {
    client: Client,
    run_id: String,
    index: u32,
    count: u32,
    timeout: Duration,
}

impl Registration {
    /// Registers `inst` in the store at `store` (its tables made if
    /// missing). An instance registered already (a run id used before),
    /// or a run id whose instances count otherwise, is refused (exit 2).
    pub async fn register(store: &PgTarget, inst: &Instance, timeout: Duration) -> Result<Registration> {
        let mut client = store.connect().await.context("--results-url: registering the instance")?;
        let tx = client.transaction().await?;
        ensure_tables(&tx).await?;
        tx.commit().await.context("creating the results tables")?;
        let host = nix::unistd::gethostname().map_or_else(|_| "unknown".into(), |h| h.to_string_lossy().into_owned());
        let (index, count) = (inst.index as i32, inst.count as i32);
        let pid = std::process::id() as i32;
        let added = client.execute(&sql::register(), &[&inst.run_id, &index, &count, &host, &pid]).await?;
        let me = Registration { client, run_id: inst.run_id.clone(), index: inst.index, count: inst.count, timeout };
        let rows = me.rows().await?;
        if added == 0 {
            let r = rows.iter().find(|r| r.instance == inst.index).context("the registration vanished")?;
            return Err(usage(format!(
                "--run-id {}: instance {} is registered already (host {}, pid {}, {}): each instance of a run \
                 starts once; give the run a new --run-id",
                inst.run_id, inst.index, r.host, r.pid, r.status
            )));
        }
        if let Some(other) = rows.iter().find(|r| r.count != inst.count) {
            let why = format!(
                "--instance {}/{}: instance {} of run {} was started as one of {}; give every instance the same N",
                inst.index, inst.count, other.instance, inst.run_id, other.count
            );
            me.fail(&why).await;
            return Err(usage(why));
        }
        Ok(me)
    }

    async fn rows(&self) -> Result<Vec<Registered>> {
        let rows = self.client.query(&sql::instances(), &[&self.run_id]).await.context("reading dbload_instances")?;
        Ok(rows.iter().map(Registered::of).collect())
    }

    /// Waits until `done` holds of the run's rows (asking every [`POLL`]),
    /// at most `--start-timeout`: then, or as soon as an instance failed,
    /// the error (exit 3) names the instances `late` names, and why.
    async fn wait_for(
        &self,
        what: &str,
        done: impl Fn(&[Registered]) -> bool,
        late: impl Fn(&Registered) -> bool,
    ) -> Result<()> {
        let deadline = Instant::now() + self.timeout;
        loop {
            let rows = self.rows().await?;
            if done(&rows) {
                return Ok(());
            }
            if let Some(f) = rows.iter().find(|r| r.status == "failed" && r.instance != self.index) {
                let why = f.note.as_deref().unwrap_or("no reason given");
                return Err(target(format!(
                    "--run-id {}: instance {} (host {}) failed before the start ({why}); this instance gives up too",
                    self.run_id, f.instance, f.host
                )));
            }
            if Instant::now() >= deadline {
                let missing: Vec<String> = (0..self.count)
                    .filter_map(|i| match rows.iter().find(|r| r.instance == i) {
                        None => Some(format!("{i} (not registered)")),
                        Some(r) if late(r) => Some(format!("{i} (host {}, {})", r.host, r.status)),
                        Some(_) => None,
                    })
                    .collect();
                return Err(target(format!(
                    "--run-id {}: after {} (--start-timeout), {what}: instance{} {} of {}; start the missing \
                     instances with the same --run-id, or give a longer --start-timeout",
                    self.run_id,
                    humantime::format_duration(self.timeout),
                    if missing.len() == 1 { "" } else { "s" },
                    missing.join(", "),
                    self.count
                )));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The others wait for instance 0's table before they touch it.
    pub async fn wait_for_table(&self) -> Result<()> {
        let made = |r: &Registered| r.instance == 0 && r.table_ready;
        self.wait_for("instance 0 has not made the table", |rows| rows.iter().any(made), |r| !made(r)).await
    }

    /// Instance 0 says its table is made.
    pub async fn table_made(&self) -> Result<()> {
        self.client.execute(&sql::table_ready(), &[&self.run_id, &(self.index as i32)]).await?;
        Ok(())
    }

    /// Says this instance is ready, waits for the others, and returns the
    /// common start (RFC 3339, the server's) and how long until it.
    pub async fn ready_and_wait(&self) -> Result<(String, Duration)> {
        self.client.execute(&sql::ready(), &[&self.run_id, &(self.index as i32)]).await?;
        let all_ready = |rows: &[Registered]| rows.iter().filter(|r| r.ready).count() as u32 >= self.count;
        self.wait_for("not every instance is ready to start", all_ready, |r| !r.ready).await?;
        let lead_ms = START_LEAD.as_secs_f64() * 1e3;
        let row = self
            .client
            .query_one(&sql::start(), &[&self.run_id, &(self.count as i64), &lead_ms])
            .await
            .context("asking for the common start")?;
        let (at, until): (String, f64) = (row.get(0), row.get(1));
        Ok((at, Duration::from_secs_f64(until.max(0.0))))
    }

    /// This instance's workers started at `at` (RFC 3339).
    pub async fn started(&self, at: &str) -> Result<()> {
        self.client.execute(&sql::started(), &[&self.run_id, &(self.index as i32), &at]).await?;
        Ok(())
    }

    /// This instance failed before its run was kept (`why`), so that the
    /// others stop waiting for it and `dbload report` names it. A store
    /// that cannot be told is not worth a second error.
    pub async fn fail(&self, why: &str) {
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
            [&self.run_id, &(self.index as i32), &"failed", &why, &None::<String>];
        let _ = self.client.execute(&sql::finish(), &params).await;
    }
}
