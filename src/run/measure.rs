//! The one scaffold around the worker loop that every command measures
//! with: start the clock (the [`Plan`] made from the command's [`Load`]),
//! the client's cost meter and the progress bar; spawn the workers under
//! the plan, wait for them all (a panic stops the run and says where),
//! merge their recorders label by label, take the wall time and the cost,
//! finish the progress bar, and hand back the [`Figures`] and the
//! executors (each command finishes its own: sinks, files, server
//! durations). What a command does before (its setup, its sources and
//! executors) and after (verify, its extras) stays in its own module; the
//! preamble of a measurement is made here, once, not in each of them.

use std::future::Future;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::client_load;
use super::cores;
use super::progress::Progress;
use super::sampler::{Sampler, Watching};
use super::stop;
use super::worker::{self, Plan};
use crate::config::{Load, ProgressDisplay};
use crate::op::{Executor, Source};
use crate::outcome::{Figures, Setup};
use crate::stats::cost::CostMeter;
use crate::stats::threads::Busiest;
use crate::stats::Recorder;

/// What a measurement counts: the units asked for (the progress bar's end,
/// and the most an open loop can have dropped), their name, and where the
/// progress bar goes.
pub struct Counted {
    limit: Option<u64>,
    unit: &'static str,
    display: ProgressDisplay,
    /// Rows read from input files: the bar follows the bytes read of their total.
    reading: Option<(Arc<AtomicU64>, u64)>,
    /// What is loaded and how, printed above the bar as it starts.
    header: Option<String>,
    /// The server's sampler (or why there is none), to run beside the workers.
    server: Option<Result<Sampler, String>>,
}

impl Counted {
    /// `limit` `unit`s (none: no count bounds the run).
    pub fn units(limit: Option<u64>, unit: &'static str, display: ProgressDisplay) -> Counted {
        Counted { limit, unit, display, reading: None, header: None, server: None }
    }

    /// With the live display's header: see [`header`].
    pub fn header(self, header: String) -> Counted {
        Counted { header: Some(header), ..self }
    }

    /// Rows, the bar following the bytes `read` of input files of `size` bytes.
    pub fn reading(self, read: Arc<AtomicU64>, size: u64) -> Counted {
        Counted { reading: Some((read, size)), ..self }
    }

    /// With the server sampled from the workers' start to their end by
    /// `sampler` (or, when it could not be opened, why not).
    pub fn sampled_by(self, sampler: Result<Sampler, String>) -> Counted {
        Counted { server: Some(sampler), ..self }
    }
}

/// The live display's header: the target, its engine and version, and
/// how it is loaded (`how`: the command's concurrency and method, then the
/// load's duration or rate), so that the user sees which server a long run
/// is loading at its start, not at its end. Shown on a terminal, above the
/// bar (progress lines and logs get the report's own header at the end).
pub fn header(target: &str, setup: Option<&Setup>, how: &str, load: &Load) -> String {
    let engine = setup.and_then(|s| {
        Some(format!(" ({})", s.engine?.describe(s.engine_version.as_deref(), s.server_version.as_deref())))
    });
    let mut how = how.to_string();
    if let Some(d) = load.duration {
        how += &format!(", for {}", humantime::format_duration(d));
    }
    if let Some(rate) = load.rate {
        how += &format!(", at {}/s", crate::format::group(rate.round() as u64));
    }
    if load.stages.is_some() {
        how += ", in stages";
    }
    format!("Target:   {target}{}\nLoad:     {how}", engine.unwrap_or_default())
}

/// `n` of `what`: `1 worker`, `4 workers`.
pub fn count(n: u32, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// A measurement under way: its clock, its cost meter and its progress
/// bar started together by [`Measurement::start`]; the workers run under
/// [`Measurement::plan`] and are measured by [`Measurement::of`] or
/// [`Measurement::of_tasks`].
pub struct Measurement {
    plan: Plan,
    meter: CostMeter,
    progress: Progress,
    limit: Option<u64>,
    /// The server's sampler, from the workers' start to their end.
    server: Option<Watching>,
    /// The client's threads' load, over the same time.
    client_load: (JoinHandle<Vec<Busiest>>, CancellationToken),
}

impl Measurement {
    /// Starts the clock now: the plan `load` paces (with `labels` recorders
    /// per worker, stopped by `cancel`), the client's cost, the progress
    /// bar of what is `counted`.
    pub fn start(load: &Load, labels: usize, cancel: CancellationToken, counted: Counted) -> Measurement {
        let meter = CostMeter::start();
        let plan = Plan::of(load, labels, cancel);
        let progress = match counted.reading {
            Some((read, size)) => Progress::start_reading(&plan, read, size, counted.display),
            None => Progress::start(&plan, counted.limit, counted.unit, counted.display),
        };
        if let Some(header) = counted.header.filter(|_| progress.bar_shown()) {
            crate::console::line(format_args!("{header}"));
        }
        let latest = super::metrics::watch(&plan.live, counted.unit);
        let server = counted.server.map(|sampler| match sampler {
            Ok(s) => s.spawn(plan.t0, plan.cancel.child_token(), latest),
            Err(why) => Watching::Unavailable(why),
        });
        let stop = plan.cancel.child_token();
        let client_load = (client_load::spawn(plan.t0, stop.clone()), stop);
        Measurement { plan, meter, progress, limit: counted.limit, server, client_load }
    }

    /// The plan the workers run under (for a command that spawns its own tasks).
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Runs one worker per (source, executor) pair under the plan, all
    /// starting together, and measures them: see [`Measurement::of_tasks`].
    /// Worker `w` (the pair's place) runs on `cores`' thread `w`, where
    /// [`cores::open_each`] opened its executor.
    pub async fn of<S, E>(self, pairs: Vec<(S, E)>) -> (Figures, Vec<E>)
    where
        S: Source + Send + 'static,
        S::Op: Send,
        E: Executor<S::Op> + Send + 'static,
    {
        let workers = pairs.len();
        let tasks = pairs.into_iter().enumerate().map(|(w, (source, executor))| {
            let plan = self.plan.for_worker(w, workers);
            cores::spawn(w, move || worker::run(plan, source, executor))
        });
        let tasks = tasks.collect();
        self.of_tasks(tasks).await
    }

    /// Waits for the workers' `tasks` (each leaves its executor and one
    /// recorder per label, or none when it records into a shared one, as
    /// `dbload http`'s VUs do), merges their recorders, and returns the
    /// figures with the executors of the workers that ended. What an open
    /// loop dropped is counted up to the limit asked for. A worker that
    /// panicked leaves neither executor nor recorder: see `join_workers`.
    pub async fn of_tasks<E>(self, tasks: Vec<JoinHandle<(E, Vec<Recorder>)>>) -> (Figures, Vec<E>) {
        let Measurement { plan, meter, progress, limit, server, client_load } = self;
        let mut recorders = vec![Recorder::default(); plan.labels];
        let mut executors = Vec::new();
        for (executor, recorded) in join_workers(&plan, tasks).await.into_iter().flatten() {
            for (m, r) in recorders.iter_mut().zip(&recorded) {
                m.merge(r);
            }
            executors.push(executor);
        }
        let wall = plan.t0.elapsed();
        let cost = meter.read();
        client_load.1.cancel();
        let client_load = client_load.0.await.unwrap_or_default();
        let server = match server {
            Some(watching) => Some(watching.end().await),
            None => None,
        };
        progress.finish().await;
        let figures = Figures {
            recorders,
            wall,
            cost,
            interrupted: plan.interrupted(),
            stopped: plan.stop.reason(),
            dropped: plan.dropped(wall, limit),
            server,
            client_load,
        };
        (figures, executors)
    }
}

/// A whole measurement in one call: [`Measurement::start`], then
/// [`Measurement::of`] the `pairs`.
pub async fn measure<S, E>(
    load: &Load,
    labels: usize,
    cancel: CancellationToken,
    counted: Counted,
    pairs: Vec<(S, E)>,
) -> (Figures, Vec<E>)
where
    S: Source + Send + 'static,
    S::Op: Send,
    E: Executor<S::Op> + Send + 'static,
{
    Measurement::start(load, labels, cancel, counted).of(pairs).await
}

/// Waits for the workers' tasks; returns what each left, in order, or
/// `None` for one that panicked. The first panic stops the run: the other
/// workers are cancelled (not left to run for the whole duration), and
/// `plan.stop` names the worker or producer and its message, which fails
/// the run with the report of what the others did.
async fn join_workers<T>(plan: &Plan, tasks: Vec<JoinHandle<T>>) -> Vec<Option<T>> {
    use futures_util::stream::{FuturesUnordered, StreamExt};
    let mut ended: Vec<_> = tasks.iter().map(|_| None).collect();
    let mut running: FuturesUnordered<_> =
        tasks.into_iter().enumerate().map(|(w, t)| async move { (w, t.await) }).collect();
    while let Some((w, joined)) = running.next().await {
        match joined {
            Ok(end) => ended[w] = Some(end),
            Err(e) => plan.stop.stop(match e.try_into_panic() {
                Ok(payload) => stop::panicked(w, payload.as_ref()),
                Err(e) => format!("worker {w} did not finish: {e}"),
            }),
        }
    }
    ended
}

/// Worker `w`'s task, on `cores`' thread `w`, when it records into
/// recorders it does not own: it hands back its executor and no recorder.
/// `work` is the worker loop's [`worker::run_into`].
pub fn spawn_sharing<E, R>(
    w: usize,
    work: impl Future<Output = (E, Vec<R>)> + Send + 'static,
) -> JoinHandle<(E, Vec<Recorder>)>
where
    E: Send + 'static,
    R: Send + 'static,
{
    cores::spawn(w, move || async move {
        // The worker's own recorders hold what they have not yet moved into
        // the shared ones: dropped here, they move it.
        let (executor, _own) = work.await;
        (executor, Vec::new())
    })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::op::{OpError, Operation};
    use crate::run::producer;

    /// Issue 35: the target and the setup were printed only at the end, so
    /// for a 30 s run the user could not see which server was being loaded.
    #[test]
    fn the_header_names_the_target_its_engine_and_the_load() {
        let setup = Setup {
            engine: Some(crate::dialect::Engine::Timescaledb),
            engine_version: Some("2.28.0".into()),
            server_version: Some("15.4".into()),
            ..Setup::default()
        };
        let load = Load { duration: Some(Duration::from_secs(30)), rate: Some(1000.0), ..Load::default() };
        assert_eq!(
            header("postgres://app:***@db/bench", Some(&setup), &count(4, "worker"), &load),
            "Target:   postgres://app:***@db/bench (TimescaleDB 2.28.0 on PostgreSQL 15.4)\n\
             Load:     4 workers, for 30s, at 1,000/s"
        );
        assert_eq!(
            header("http://api/x", None, &count(1, "VU"), &Load::default()),
            "Target:   http://api/x\nLoad:     1 VU"
        );
    }

    /// An operation of one unit.
    struct Unit;

    impl Operation for Unit {
        fn units(&self) -> u64 {
            1
        }
    }

    /// `left` operations (u64::MAX: until the run is stopped).
    struct Units {
        left: u64,
    }

    impl Source for Units {
        type Op = Unit;

        async fn next(&mut self) -> Option<Unit> {
            self.left = self.left.checked_sub(1)?;
            Some(Unit)
        }
    }

    /// Acknowledges each operation after a little while, or panics at the
    /// `panic_at`th one; counts what it acknowledged.
    struct Counting {
        acked: u64,
        panic_at: Option<u64>,
        fail: bool,
    }

    impl Executor<Unit> for Counting {
        async fn execute(&mut self, _: &mut Unit, _warm: bool) -> Result<u64, OpError> {
            tokio::time::sleep(Duration::from_millis(1)).await;
            if self.panic_at == Some(self.acked) {
                panic!("boom at {}", self.acked);
            }
            if self.fail {
                return Err(OpError::new("SQLSTATE 22012", "division by zero"));
            }
            self.acked += 1;
            Ok(1)
        }
    }

    fn counting(panic_at: Option<u64>) -> Counting {
        Counting { acked: 0, panic_at, fail: false }
    }

    /// A measurement with no progress bar to see.
    fn measurement(cancel: &CancellationToken) -> Measurement {
        let hidden = Counted::units(None, "rows", crate::config::ProgressDisplay::Hidden);
        Measurement::start(&Load::default(), 1, cancel.clone(), hidden)
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_time().build().unwrap()
    }

    fn rows(r: &Recorder) -> u64 {
        r.warmup.rows + r.measured.rows
    }

    #[test]
    fn a_worker_that_panics_stops_the_run_and_the_others_keep_their_counts() {
        runtime().block_on(async {
            let ctrl_c = CancellationToken::new();
            let measurement = measurement(&ctrl_c);
            // Without the stop, workers 0 and 2 would run for ever.
            let pairs = vec![
                (Units { left: u64::MAX }, counting(None)),
                (Units { left: u64::MAX }, counting(Some(20))),
                (Units { left: u64::MAX }, counting(None)),
            ];
            let started = Instant::now();
            let (figures, executors) = measurement.of(pairs).await;
            assert!(started.elapsed() < Duration::from_secs(10), "the other workers were not stopped");
            assert_eq!(figures.stopped.as_deref(), Some("worker 1 panicked: boom at 20"));
            assert!(!ctrl_c.is_cancelled(), "a stop is not Ctrl-C: the run is failed, not interrupted");
            assert!(!figures.interrupted);
            assert_eq!(executors.len(), 2, "the executors of the workers that ended");
            let acked: u64 = executors.iter().map(|e| e.acked).sum();
            assert!(
                acked > 0 && rows(figures.recorder()) == acked,
                "{} rows recorded, {acked} acknowledged",
                rows(figures.recorder())
            );
        });
    }

    /// Counts the operations it ran on a thread other than the one it was
    /// opened on.
    struct OnItsThread {
        opened_on: std::thread::ThreadId,
        elsewhere: u64,
    }

    impl Executor<Unit> for OnItsThread {
        async fn execute(&mut self, _: &mut Unit, _warm: bool) -> Result<u64, OpError> {
            tokio::task::yield_now().await;
            if std::thread::current().id() != self.opened_on {
                self.elsewhere += 1;
            }
            Ok(1)
        }
    }

    #[test]
    fn a_worker_runs_on_the_thread_its_executor_was_opened_on() {
        runtime().block_on(async {
            let measurement = measurement(&CancellationToken::new());
            let n = cores::threads() * 2 + 1;
            let opened = cores::open_each(0..n, |_, _| async {
                Ok(OnItsThread { opened_on: std::thread::current().id(), elsewhere: 0 })
            })
            .await
            .unwrap();
            let threads: std::collections::HashSet<_> = opened.iter().map(|e| e.opened_on).collect();
            assert_eq!(threads.len(), cores::threads());
            let pairs = opened.into_iter().map(|e| (Units { left: 200 }, e)).collect();
            let (figures, executors) = measurement.of(pairs).await;
            assert_eq!(rows(figures.recorder()), 200 * n as u64);
            assert_eq!(executors.iter().map(|e| e.elsewhere).collect::<Vec<_>>(), vec![0; n]);
        });
    }

    #[test]
    fn a_producer_that_panics_is_not_the_end_of_its_input() {
        runtime().block_on(async {
            let ctrl_c = CancellationToken::new();
            let measurement = measurement(&ctrl_c);
            let pool = || (0..producer::POOL).map(|_| Unit).collect();
            let mut filled = 0;
            let failing = producer::spawn(pool(), move |_: &mut Unit| {
                filled += 1;
                assert!(filled < 10, "bad row {filled}");
                true
            })
            .unwrap();
            let endless = producer::spawn(pool(), |_: &mut Unit| true).unwrap();
            let pairs = vec![(endless, counting(None)), (failing, counting(None))];
            let (figures, executors) = measurement.of(pairs).await;
            let why = figures.stopped.unwrap_or_default();
            assert!(why.starts_with("the producer of worker 1 panicked: bad row 10"), "{why}");
            assert_eq!(executors.len(), 1);
            assert!(executors[0].acked > 0 && rows(&figures.recorders[0]) == executors[0].acked);
        });
    }

    #[test]
    fn operations_that_all_fail_stop_the_run_after_the_sustained_stretch() {
        runtime().block_on(async {
            let measurement = measurement(&CancellationToken::new());
            let failing = || Counting { acked: 0, panic_at: None, fail: true };
            let pairs = vec![(Units { left: u64::MAX }, failing()), (Units { left: u64::MAX }, failing())];
            let started = Instant::now();
            let (figures, _) = measurement.of(pairs).await;
            let took = started.elapsed();
            assert!((stop::SUSTAINED_FOR..stop::SUSTAINED_FOR * 3).contains(&took), "{took:?}");
            let why = figures.stopped.clone().unwrap_or_default();
            assert!(
                why.starts_with("the last ") && why.ends_with("all failed: SQLSTATE 22012: division by zero"),
                "{why}"
            );
            assert!(figures.recorder().measured.failed_batches >= stop::SUSTAINED_FAILURES);
        });
    }

    #[test]
    fn ctrl_c_is_told_from_the_runs_own_stop() {
        runtime().block_on(async {
            let ctrl_c = CancellationToken::new();
            let measurement = measurement(&ctrl_c);
            let pairs = vec![(Units { left: u64::MAX }, counting(None))];
            let pressing = ctrl_c.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                pressing.cancel();
            });
            let (figures, _) = measurement.of(pairs).await;
            assert!(figures.interrupted && figures.stopped.is_none());
            assert!(rows(figures.recorder()) > 0);
        });
    }
}
