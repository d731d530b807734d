//! The one worker loop that every command runs: take the next operation
//! from a [`Source`], pace it, run it through an [`Executor`], record what
//! happened. Stop (count, duration, Ctrl-C) × Pacer (open or closed loop)
//! × what an operation is (a batch of rows, a query, a request) are
//! composed here rather than written again per mode.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::pacer::{Schedule, Turn};
use super::stop::Stop;
use crate::clock::Clock;
use crate::config::{Load, LATE_AFTER};
use crate::op::{Executor, InDoubt, OpError, Operation, Source, Stages, Warmup};
use crate::stats::buffered::Record;
use crate::stats::recorder::{InDoubtBatch, Outage, Resolution, Timing};
use crate::stats::tally::Tally;
use crate::stats::{Live, Recorder};

/// How long in-flight operations may take to finish after Ctrl-C or the
/// deadline; then they are cancelled (see [`Executor::cancel`]).
pub const GRACE: Duration = Duration::from_secs(5);

/// Waits between connection attempts: from 50 ms, doubling up to 1 s, so a
/// server that is back is found within a second without a storm of
/// attempts while it is down.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// Everything a worker needs besides its source and executor.
#[derive(Clone)]
pub struct Plan {
    pub t0: Instant,
    /// Stop issuing operations after this point (since t0).
    pub deadline: Option<Duration>,
    /// The run's open-loop schedule (`--rate`), shared by its workers.
    pub schedule: Arc<Schedule>,
    pub warmup: Warmup,
    /// How many labels operations may carry (one recorder each).
    pub labels: usize,
    /// The workers stop on it: Ctrl-C, or the run's own [`Stop`].
    pub cancel: CancellationToken,
    /// Cancelled with `cancel` and at the deadline, by one timer on the
    /// runtime that made the plan: what starts the grace of an operation
    /// still in flight. The workers wait on it rather than on timers of
    /// their own, because a timer armed in a worker thread's runtime makes
    /// each park of that thread (an `epoll_wait` with a timeout) program
    /// the kernel's hrtimer: 0.16 times per `select 1`, a cost pgbench's
    /// `ppoll` without a timeout does not pay.
    pub over: CancellationToken,
    /// Ctrl-C alone (the token the plan was made with), to tell the two apart.
    pub interrupt: CancellationToken,
    pub live: Arc<Live>,
    /// The run's own reason to stop, shared by its workers.
    pub stop: Arc<Stop>,
    /// A lost connection is replaced (until the deadline or Ctrl-C) rather
    /// than ending the worker: `--reconnect`.
    pub reconnect: bool,
    /// pgbench's `-L` with `-R`: an operation whose slot passed more than
    /// this before it could start is skipped.
    pub skip_late: Option<Duration>,
}

impl Plan {
    /// A plan whose clock starts now, with `rate` units per second in total
    /// on one schedule that the workers share, stopped by `cancel` (Ctrl-C)
    /// or by the run itself. Made on a runtime with timers: the deadline's
    /// timer is a task of that runtime (see [`Plan::over`]).
    pub fn new(
        deadline: Option<Duration>,
        rate: Option<f64>,
        warmup: Warmup,
        labels: usize,
        cancel: CancellationToken,
    ) -> Plan {
        let (interrupt, cancel) = (cancel.clone(), cancel.child_token());
        let t0 = Instant::now();
        let over = cancel.child_token();
        if let Some(d) = deadline {
            let over = over.clone();
            tokio::spawn(async move {
                tokio::select! {
                    _ = tokio::time::sleep_until((t0 + d).into()) => over.cancel(),
                    _ = over.cancelled() => {}
                }
            });
        }
        Plan {
            t0,
            deadline,
            schedule: Arc::new(Schedule::new(rate)),
            warmup,
            labels,
            stop: Arc::new(Stop::new(cancel.clone())),
            cancel,
            over,
            interrupt,
            live: Arc::new(Live::default()),
            reconnect: false,
            skip_late: None,
        }
    }

    /// The plan of a run paced as `load` says (its duration, rate, stages,
    /// warm-up and reconnect), with `labels` recorders per worker: every
    /// command's plan is made from its config's one [`Load`] here.
    pub fn of(load: &Load, labels: usize, cancel: CancellationToken) -> Plan {
        let plan = Plan::new(load.duration, load.rate, load.warmup, labels, cancel).staged(load.stages.clone());
        Plan { reconnect: load.reconnect, skip_late: load.skip_late, ..plan }
    }

    /// The plan with `stages` (`--stages`, `--rate-stages`) as its
    /// schedule; the deadline is their end (see `config`).
    pub fn staged(self, stages: Option<Stages>) -> Plan {
        let schedule = Arc::new(Schedule::new(self.schedule.rate()).staged(stages));
        Plan { schedule, ..self }
    }

    /// The plan of worker `w` of `workers`: its share of a [`Warmup::Total`].
    pub fn for_worker(&self, w: usize, workers: usize) -> Plan {
        Plan { warmup: self.warmup.for_worker(w, workers), ..self.clone() }
    }

    /// Whether Ctrl-C stopped the run (not the run's own [`Stop`]).
    pub fn interrupted(&self) -> bool {
        self.interrupt.is_cancelled()
    }

    /// Open loop: units due before the run ended (its deadline, or `wall`
    /// if it ended first; at most `limit`) that never started. Those due in
    /// its last [`LATE_AFTER`] were not late yet: they are not counted.
    pub fn dropped(&self, wall: Duration, limit: Option<u64>) -> Option<u64> {
        let end = self.deadline.map_or(wall, |d| d.min(wall));
        self.schedule.dropped(end.saturating_sub(LATE_AFTER), limit)
    }
}

/// Runs until the source is exhausted, the deadline passes, Ctrl-C, the
/// executor reports a fatal error, or the run stops (operations that all
/// fail for a sustained stretch, see [`Stop`]); returns the executor (to
/// finish) and one recorder per label.
pub async fn run<S, E>(plan: Plan, source: S, executor: E) -> (E, Vec<Recorder>)
where
    S: Source,
    E: Executor<S::Op>,
{
    let recorders = vec![Recorder::default(); plan.labels];
    run_into(plan, source, executor, recorders).await
}

/// [`run`], recording into `recorders` (one per label) rather than into
/// recorders of its own: `dbload http`'s VUs share theirs (see [`Buffered`]).
///
/// [`Buffered`]: crate::stats::buffered::Buffered
pub async fn run_into<S, E, R>(plan: Plan, mut source: S, mut executor: E, recorders: Vec<R>) -> (E, Vec<R>)
where
    S: Source,
    E: Executor<S::Op>,
    R: Record,
{
    let mut attempted = 0u64;
    // Whether the loop ended at the deadline (not at Ctrl-C, a stop or
    // the source's end).
    let mut ran_out = false;
    let mut clock = Clock::default();
    let slot = plan.live.join();
    // The worker's own child of the run's token: `is_cancelled`, read once
    // per operation, locks the token's node, and one node shared by the
    // workers of every thread passed its lock's cache line between them.
    let cancel = &plan.cancel.child_token();
    // Waiting for Ctrl-C registers with the token: done once per worker,
    // not once per operation (at 100k requests/s that lock would show).
    let cancelled = cancel.cancelled();
    tokio::pin!(cancelled);
    // Once per worker too: what an operation in flight gets after Ctrl-C
    // or the deadline before it is given up.
    // Polled whenever an operation waits: the worker's own child too.
    let over = plan.over.child_token();
    let grace = async {
        over.cancelled().await;
        let why = match (cancel.is_cancelled(), plan.stop.reason().is_some()) {
            (false, _) => "the deadline",
            (true, true) => "the run stopped",
            (true, false) => "Ctrl-C",
        };
        tokio::time::sleep(GRACE).await;
        why
    };
    tokio::pin!(grace);
    let turn = plan.schedule.join();
    let has_turns = plan.schedule.has_turns();
    let mut books = Books { plan: &plan, recorders, pending: Pending::of(&plan.live), slot };
    // Pipelined (`--pipeline`): the operations sent and not answered yet,
    // oldest first; nothing is allocated for a window of 1.
    executor.ends_at(plan.deadline.map(|d| plan.t0 + d));
    let window = executor.window();
    let mut flight = VecDeque::with_capacity(if window > 1 { window } else { 0 });
    loop {
        // Ctrl-C and a stop, once per operation: the waits below race them
        // only when they wait (the work is polled first), so an operation
        // that is ready at once costs no registration with the token.
        if cancel.is_cancelled() {
            break;
        }
        // VU stages: a worker beyond the current target waits until the
        // ramp passes it (the operation of one that was working finishes).
        match if has_turns { plan.schedule.turn(turn, plan.t0.elapsed()) } else { Turn::Now } {
            Turn::Now => {}
            Turn::Never => break,
            Turn::At(at) => {
                // Pipelined: what was sent is answered before the wait.
                if !flight.is_empty()
                    && answer(&mut executor, &mut source, &mut flight, &mut books, grace.as_mut(), true).await
                {
                    break;
                }
                tokio::select! {
                    biased;
                    _ = &mut cancelled => break,
                    _ = clock.sleep_until(plan.t0 + at) => continue,
                }
            }
        }
        let mut op = tokio::select! {
            biased;
            op = source.next() => match op { Some(op) => op, None => break },
            _ = &mut cancelled => break,
        };
        tokio::select! {
            biased;
            _ = executor.ready() => {}
            _ = &mut cancelled => break,
        }
        let units = op.units();
        // One clock read serves the schedule, the lateness check and, where
        // no sleep comes between, the start: a closed loop reads the clock
        // twice per operation, at its start and its end.
        let now = plan.t0.elapsed();
        let intended = plan.schedule.take(units, now);
        if plan.deadline.is_some_and(|d| intended >= d) {
            ran_out = true;
            break;
        }
        // pgbench's -L with -R: a slot already more than the limit behind is
        // skipped rather than started late (its latency would be over it anyway).
        if plan.skip_late.is_some_and(|limit| now > intended + limit) {
            plan.schedule.started(units);
            books.recorders[op.label()].skipped(warming_up(plan.warmup, intended, attempted));
            source.recycle(op);
            continue;
        }
        // Only sleep when ahead of the schedule (a closed loop never is).
        // (Ctrl-C was just checked above, before taking the operation.)
        let started = if intended > now {
            // Pipelined: what was sent is answered before the wait, which
            // is then no part of its latency.
            if !flight.is_empty()
                && answer(&mut executor, &mut source, &mut flight, &mut books, grace.as_mut(), true).await
            {
                break;
            }
            tokio::select! {
                biased;
                _ = &mut cancelled => break,
                _ = clock.sleep_until(plan.t0 + intended) => {}
            }
            plan.t0.elapsed()
        } else {
            now
        };
        if plan.deadline.is_some_and(|d| started >= d) {
            ran_out = true;
            break;
        }
        plan.schedule.started(units);
        let warmup = warming_up(plan.warmup, started, attempted);
        attempted += units;
        if window > 1 {
            match executor.send(&mut op, warmup) {
                Ok(()) => flight.push_back(Sent { op, intended, started, warm: warmup }),
                Err(e) => {
                    let stop =
                        books.record(op.label(), warmup, units, timing(&plan, intended, started, &op), false, Err(e));
                    source.recycle(op);
                    if stop {
                        break;
                    }
                }
            }
            if flight.len() == window
                && answer(&mut executor, &mut source, &mut flight, &mut books, grace.as_mut(), false).await
            {
                break;
            }
            continue;
        }
        let mut outcome = tokio::select! {
            // The operation first: the grace is polled only when it waits.
            biased;
            r = executor.execute(&mut op, warmup) => Ok(r),
            why = &mut grace => Err(why),
        };
        let label = op.label();
        // Only a lost connection has anything to settle: the hot path
        // (an answered operation) makes no future for it.
        let lost = matches!(&outcome, Ok(Err(e)) if e.fatal);
        let in_doubt = lost
            && settle_lost(
                &plan,
                &mut executor,
                &mut op,
                Attempt { started, warm: warmup },
                &mut outcome,
                &mut books.recorders[label],
                grace.as_mut(),
            )
            .await;
        let t = timing(&plan, intended, started, &op);
        let stop = match outcome {
            Ok(result) => books.record(label, warmup, units, t, in_doubt, result),
            Err(why) => {
                // Recorded before the cancel is awaited, at its end: a -l
                // log's lines are in the order they are recorded.
                books.interrupted(label, warmup, units, t, why);
                executor.cancel().await;
                true
            }
        };
        if stop {
            break;
        }
        source.recycle(op);
    }
    // Pipelined: what is still in flight when the loop ends (the source's
    // end, Ctrl-C, the deadline) is answered within the grace and counted.
    if !flight.is_empty() {
        answer(&mut executor, &mut source, &mut flight, &mut books, grace.as_mut(), true).await;
    }
    let Books { mut recorders, mut pending, .. } = books;
    pending.publish(&plan.live);
    // An open loop whose schedule ran out at the deadline was measured
    // over the whole run: its last operation was due before the deadline,
    // and the time after it is the rate's too (a closed loop's window ends
    // with its last operation; one that stopped early, with its stop).
    if let (true, Some(deadline), false) = (ran_out, plan.deadline, plan.schedule.back_to_back()) {
        recorders.iter_mut().for_each(|rec| rec.ran_until(deadline));
    }
    (executor, recorders)
}

/// A worker's rows and failures not yet added to the progress counters
/// ([`Live`]), and with `--metrics-listen` its operations not yet added to
/// the run's [`Totals`]: added every [`PUBLISH`] of run time, not at every
/// operation, because workers on other threads adding to the same counters
/// at 100k operations/s pass their cache line back and forth.
///
/// [`Totals`]: crate::stats::tally::Totals
#[derive(Default)]
struct Pending {
    rows: u64,
    failed: u64,
    /// When to add them next, since the run's start.
    due: Duration,
    /// Counted only when the run's [`Live::tally`] is set.
    tally: Option<Tally>,
}

/// How often a worker adds to the progress counters: far below what a
/// progress line or bar shows.
const PUBLISH: Duration = Duration::from_millis(10);

impl Pending {
    /// A worker's, counting for the metrics endpoint when `live` has one.
    fn of(live: &Live) -> Pending {
        Pending { tally: live.tally.get().map(|_| Tally::default()), ..Pending::default() }
    }

    /// An operation answered, `rows` of it acknowledged.
    fn answered(&mut self, live: &Live, rows: u64, t: &Timing) {
        if let Some(tally) = &mut self.tally {
            tally.answered(rows, t.latency(), t.lag());
        }
        self.add(live, rows, 0, t.ended);
    }

    /// An operation that failed with an error of `class`: `rows` of it
    /// acknowledged, `failed` not.
    fn failed(&mut self, live: &Live, rows: u64, failed: u64, t: &Timing, class: &str) {
        if let Some(tally) = &mut self.tally {
            tally.failed(rows, class);
        }
        self.add(live, rows, failed, t.ended);
    }

    fn add(&mut self, live: &Live, rows: u64, failed: u64, now: Duration) {
        self.rows += rows;
        self.failed += failed;
        if now >= self.due {
            self.publish(live);
            self.due = now + PUBLISH;
        }
    }

    fn publish(&mut self, live: &Live) {
        live.rows.fetch_add(std::mem::take(&mut self.rows), Ordering::Relaxed);
        live.failed.fetch_add(std::mem::take(&mut self.failed), Ordering::Relaxed);
        if let (Some(tally), Some(totals)) = (&mut self.tally, live.tally.get()) {
            totals.publish(tally);
        }
    }
}

/// What a worker records into: a recorder per label, and what it has yet
/// to add to the progress counters. One place for both ways an operation
/// ends: answered alone ([`Executor::execute`]) or in a pipeline ([`answer`]).
struct Books<'a, R> {
    plan: &'a Plan,
    recorders: Vec<R>,
    pending: Pending,
    /// The worker's slot in the progress interval ([`Live::join`]).
    slot: usize,
}

impl<R: Record> Books<'_, R> {
    /// Records how an operation of `units` under `label` ended: `in_doubt`
    /// (lost with its connection, and not settled), done (fewer units
    /// acknowledged than sent: the rest failed, see [`OpError::short`]), or
    /// failed. Returns whether its worker stops: a lost connection it
    /// cannot go on from, or the run's own [`Stop`].
    fn record(
        &mut self,
        label: usize,
        warm: bool,
        units: u64,
        t: Timing,
        in_doubt: bool,
        result: Result<u64, OpError>,
    ) -> bool {
        let plan = self.plan;
        let rec = &mut self.recorders[label];
        let result = match result {
            Ok(acked) if acked < units => Err(OpError::short(acked, units)),
            result => result,
        };
        match result {
            _ if in_doubt => {
                rec.in_doubt(warm, units, t);
                // Lost, and not connected again (--reconnect is off).
                !plan.reconnect
            }
            Ok(acked) => {
                self.pending.answered(&plan.live, acked, &t);
                rec.ok(warm, acked, t);
                plan.live.succeeded(self.slot, &t);
                plan.stop.succeeded();
                false
            }
            Err(e) => {
                let acked = e.acked.min(units);
                let stopped = plan.stop.failed(t.ended, &e);
                self.pending.failed(&plan.live, acked, units - acked, &t, &e.class);
                rec.failed(warm, acked, units - acked, t, e.class, e.message);
                e.fatal || stopped
            }
        }
    }

    /// An operation still in flight [`GRACE`] after `why` (Ctrl-C, the
    /// deadline, the run's stop): cancelled on the target, failed.
    fn interrupted(&mut self, label: usize, warm: bool, units: u64, t: Timing, why: &str) {
        let msg = format!("still in flight {} s after {why}: cancelled", GRACE.as_secs());
        self.recorders[label].failed(warm, 0, units, t, "interrupted".into(), msg);
    }
}

/// An operation's timing, ended now, after `retries` runs again.
/// An operation's times; its start (and intended start) moved back by the
/// time its source took to draw it ([`Operation::drawn`]), which pgbench
/// counts in a transaction. Its end stays the clock's: `-l`'s lines are in
/// the order transactions ended.
fn timing(plan: &Plan, intended: Duration, started: Duration, op: &impl Operation) -> Timing {
    let drawn = op.drawn();
    let (intended, started) = (intended.saturating_sub(drawn), started.saturating_sub(drawn));
    Timing {
        intended,
        started,
        ended: plan.t0.elapsed(),
        stage: plan.schedule.stage_at(started),
        retries: op.retries(),
    }
}

/// An operation sent in a pipeline ([`Executor::window`] above 1), waiting
/// for its answer: when it was due and when it was sent, which its latency
/// is measured from, and whether it is warm-up.
struct Sent<Op> {
    op: Op,
    intended: Duration,
    started: Duration,
    warm: bool,
}

/// Pipelined: sends what was buffered ([`Executor::flush`]), then records
/// the answers of the operations in flight, each timed from its own start
/// (its intended one in an open loop) to its answer: the oldest, waited
/// for, then those already read ([`Executor::received`]), or (`all`) every
/// one. A lost connection fails each in flight once: the one it was
/// answering is settled as [`settle_lost`] settles an operation alone, and
/// the others share its fate unanswered (in doubt with it, else failed).
/// Past the grace (Ctrl-C, the deadline), what is in flight is cancelled
/// and each is counted interrupted. Returns whether the worker stops.
async fn answer<S: Source, E: Executor<S::Op>, R: Record>(
    executor: &mut E,
    source: &mut S,
    flight: &mut VecDeque<Sent<S::Op>>,
    books: &mut Books<'_, R>,
    mut grace: Pin<&mut impl Future<Output = &'static str>>,
    all: bool,
) -> bool {
    let plan = books.plan;
    let mut unsent = tokio::select! {
        biased;
        r = executor.flush() => r.err().map(Ok),
        why = &mut grace => Some(Err(why)),
    };
    let mut stop = false;
    let mut first = true;
    while !flight.is_empty() && (first || all || stop || executor.received()) {
        first = false;
        let mut outcome = match unsent.take() {
            Some(Ok(e)) => Ok(Err(e)),
            Some(Err(why)) => Err(why),
            None => tokio::select! {
                biased;
                r = executor.receive() => Ok(r),
                why = &mut grace => Err(why),
            },
        };
        let Sent { mut op, intended, started, warm } = flight.pop_front().expect("one in flight");
        let (label, units) = (op.label(), op.units());
        let lost = match &outcome {
            Ok(Err(e)) if e.fatal => Some((e.class.clone(), e.message.clone())),
            _ => None,
        };
        let in_doubt = match lost {
            Some(_) => {
                let attempt = Attempt { started, warm };
                let rec = &mut books.recorders[label];
                settle_lost(plan, executor, &mut op, attempt, &mut outcome, rec, grace.as_mut()).await
            }
            None => false,
        };
        let t = timing(plan, intended, started, &op);
        source.recycle(op);
        let why = match outcome {
            Ok(result) => {
                stop |= books.record(label, warm, units, t, in_doubt, result);
                None
            }
            Err(why) => Some(why),
        };
        if let Some(why) = why {
            // Recorded before the cancel is awaited, as the loop records one alone.
            books.interrupted(label, warm, units, t, why);
            for Sent { op, intended, started, warm } in flight.drain(..) {
                books.interrupted(op.label(), warm, op.units(), timing(plan, intended, started, &op), why);
                source.recycle(op);
            }
            executor.cancel().await;
            return true;
        }
        if let Some((class, message)) = lost {
            for Sent { op, intended, started, warm } in flight.drain(..) {
                let message = format!("{message} (in flight in the same pipeline)");
                let in_doubt = in_doubt && op.in_doubt_when_lost();
                let e = OpError::new(class.clone(), message);
                books.record(op.label(), warm, op.units(), timing(plan, intended, started, &op), in_doubt, Err(e));
                source.recycle(op);
            }
        }
    }
    stop
}

/// When an operation started, and whether it is warm-up: a resend after
/// reconnecting keeps both.
struct Attempt {
    started: Duration,
    warm: bool,
}

/// When `outcome` is a lost connection: settles the operation it left in
/// doubt. With `--reconnect`, connects again and finds it written
/// (`outcome` becomes that success), unwritten (resent: `outcome` becomes
/// the resend's), or unknown (returns true: neither written nor failed);
/// each is recorded as settled, each outage as an outage. An operation with
/// nothing to settle (a query) stays the failure it was, no longer fatal.
/// A connection that cannot be made before the run ends leaves an
/// operation that may have been written in doubt, any other the failure it
/// was. Without `--reconnect`, see [`look_up`].
async fn settle_lost<Op: Operation, E: Executor<Op>>(
    plan: &Plan,
    executor: &mut E,
    op: &mut Op,
    Attempt { started, warm }: Attempt,
    outcome: &mut Result<Result<u64, OpError>, &'static str>,
    rec: &mut impl Record,
    mut grace: Pin<&mut impl Future<Output = &'static str>>,
) -> bool {
    while let Ok(Err(e)) = &*outcome {
        if !e.fatal {
            return false;
        }
        if !plan.reconnect {
            return look_up(plan, executor, op, started, outcome, rec).await;
        }
        let Some(outage) = reconnect(plan, executor, e).await else { return false };
        let back = outage.reconnected;
        rec.outage(outage);
        if !back {
            // The run ended first: nobody could look it up.
            return op.in_doubt_when_lost();
        }
        let resolution = match executor.resolve(op).await {
            InDoubt::Written(acked) => {
                *outcome = Ok(Ok(acked));
                Resolution::Written
            }
            InDoubt::NotWritten if plan.deadline.is_some_and(|d| plan.t0.elapsed() >= d) => {
                let msg = "not written when the connection was lost, and the run ended before it could be resent";
                *outcome = Ok(Err(OpError::new("connection lost", msg)));
                Resolution::NotWritten
            }
            InDoubt::NotWritten => Resolution::Resent,
            InDoubt::Unknown => return true,
            InDoubt::Failed => {
                // Connected again: the failure no longer ends the worker.
                if let Ok(Err(e)) = outcome {
                    e.fatal = false;
                }
                return false;
            }
        };
        rec.settled(InDoubtBatch { at: started, rows: op.units(), resolution });
        if resolution == Resolution::Resent {
            *outcome = tokio::select! {
                r = executor.execute(op, warm) => Ok(r),
                why = &mut grace => Err(why),
            };
        }
    }
    false
}

/// Without `--reconnect`, an operation lost with its connection that may
/// have been written ([`Operation::in_doubt_when_lost`]) is looked up once,
/// on a connection made for that alone; its worker stops all the same.
/// Found written, its units count as written and the lost connection as
/// its error (`outcome` keeps failing, with them acknowledged); found
/// unwritten, it stays the failure it was; else (the server is gone, the
/// table has no key, Ctrl-C) it is in doubt: returns true.
async fn look_up<Op: Operation, E: Executor<Op>>(
    plan: &Plan,
    executor: &mut E,
    op: &mut Op,
    started: Duration,
    outcome: &mut Result<Result<u64, OpError>, &'static str>,
    rec: &mut impl Record,
) -> bool {
    if !op.in_doubt_when_lost() {
        return false;
    }
    let found = tokio::select! {
        biased;
        _ = plan.cancel.cancelled() => Some(InDoubt::Unknown),
        found = async {
            match executor.reconnect().await? {
                Ok(()) => Some(executor.resolve(op).await),
                Err(_) => Some(InDoubt::Unknown),
            }
        } => found,
    };
    let resolution = match found {
        // Nothing to connect again to (a COPY file): it failed as it was.
        None | Some(InDoubt::Failed) => return false,
        Some(InDoubt::Unknown) => return true,
        Some(InDoubt::NotWritten) => Resolution::NotWritten,
        Some(InDoubt::Written(acked)) => {
            if let Ok(Err(e)) = outcome {
                e.acked = acked;
                e.message = format!(
                    "{}; the batch was committed all the same (its rows were found on a connection made once more \
                     to look them up), and its worker stopped: --reconnect goes on through lost connections",
                    e.message
                );
            }
            Resolution::Written
        }
    };
    rec.settled(InDoubtBatch { at: started, rows: op.units(), resolution });
    false
}

/// Connects `executor` again after `lost`, with capped exponential backoff,
/// until it succeeds, the deadline passes or Ctrl-C. `None` if the executor
/// cannot reconnect at all. Attempts are not failed operations: they are
/// counted in the outage, apart from the run's errors.
async fn reconnect<Op, E: Executor<Op>>(plan: &Plan, executor: &mut E, lost: &OpError) -> Option<Outage> {
    let start = plan.t0.elapsed();
    let mut attempts = 0;
    let deadline = async {
        match plan.deadline {
            Some(d) => tokio::time::sleep_until((plan.t0 + d).into()).await,
            None => std::future::pending().await,
        }
    };
    let reconnected = tokio::select! {
        biased;
        _ = plan.cancel.cancelled() => false,
        _ = deadline => false,
        back = async {
            let mut wait = FIRST_BACKOFF;
            loop {
                attempts += 1;
                if executor.reconnect().await?.is_ok() {
                    return Some(true);
                }
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(MAX_BACKOFF);
            }
        } => back?,
    };
    let error = format!("{}: {}", lost.class, lost.message);
    Some(Outage { start, end: plan.t0.elapsed(), reconnected, error, attempts })
}

/// Whether an operation that starts `started` after t0, with `attempted`
/// units before it on this worker, belongs to the warm-up. Decided here
/// alone and passed to the executor, so figures it keeps of its own (HTTP
/// phases, CrateDB's server-side durations) agree with the recorder's.
fn warming_up(warmup: Warmup, started: Duration, attempted: u64) -> bool {
    match warmup {
        Warmup::None => false,
        Warmup::Duration(d) => started < d,
        Warmup::Count(n) => attempted < n,
        // Shared out by `Plan::for_worker` before the loop; unshared, the whole is this worker's.
        Warmup::Total(n) => attempted < n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An operation of 10 units.
    /// A batch of ten rows.
    struct Ten;
    impl Operation for Ten {
        fn units(&self) -> u64 {
            10
        }
        fn in_doubt_when_lost(&self) -> bool {
            true
        }
    }

    /// `n` operations.
    struct Ops(u32);
    impl Source for Ops {
        type Op = Ten;
        fn next(&mut self) -> impl Future<Output = Option<Ten>> + Send {
            let more = self.0 > 0;
            self.0 = self.0.saturating_sub(1);
            std::future::ready(more.then_some(Ten))
        }
    }

    /// Writes 7 of each operation's 10 units, without an error.
    struct Short;
    impl Executor<Ten> for Short {
        async fn execute(&mut self, _op: &mut Ten, _warm: bool) -> Result<u64, OpError> {
            Ok(7)
        }
    }

    /// Units the target took without an error but did not write (rows a
    /// trigger skipped, CrateDB's rows whose key exists) are failed: before,
    /// they were neither written nor failed, and the run exited 0.
    #[tokio::test]
    async fn units_acknowledged_short_of_the_operation_s_are_failed() {
        let plan = Plan::new(None, None, Warmup::None, 1, CancellationToken::new());
        let (_, recorders) = run(plan, Ops(2), Short).await;
        let m = &recorders[0].measured;
        assert_eq!((m.rows, m.failed_rows, m.failed_batches), (14, 6, 2));
        let e = &recorders[0].errors["not written"];
        assert!(e.count == 2 && e.example.contains("wrote 7 of its 10 rows"), "{e:?}");
    }

    /// The loop's side of a lost connection, scripted: which call loses
    /// it, how many connection attempts fail, what the lookup finds.
    struct Script {
        lose_at: u32,
        refused: u32,
        found: InDoubt,
        calls: u32,
        attempts: u32,
    }

    impl Script {
        fn new(found: InDoubt) -> Script {
            Script { lose_at: 2, refused: 2, found, calls: 0, attempts: 0 }
        }
    }

    impl Executor<Ten> for Script {
        fn execute(&mut self, op: &mut Ten, _warm: bool) -> impl Future<Output = Result<u64, OpError>> + Send {
            self.calls += 1;
            let lost = self.calls == self.lose_at;
            std::future::ready(if lost { Err(OpError::fatal("connection lost", "gone")) } else { Ok(op.units()) })
        }
        async fn reconnect(&mut self) -> Option<anyhow::Result<()>> {
            self.attempts += 1;
            Some(if self.attempts <= self.refused { Err(anyhow::anyhow!("refused")) } else { Ok(()) })
        }
        async fn resolve(&mut self, _op: &mut Ten) -> InDoubt {
            self.found
        }
    }

    async fn run_script(found: InDoubt, reconnect: bool) -> (Script, Recorder) {
        let mut plan = Plan::new(None, None, Warmup::None, 1, CancellationToken::new());
        plan.reconnect = reconnect;
        let (script, mut recorders) = run(plan, Ops(3), Script::new(found)).await;
        (script, recorders.remove(0))
    }

    #[tokio::test]
    async fn a_batch_found_unwritten_is_resent_once_after_reconnecting() {
        let (script, rec) = run_script(InDoubt::NotWritten, true).await;
        assert_eq!((script.calls, script.attempts), (4, 3), "3 operations and one resend; 2 refused attempts");
        assert_eq!((rec.measured.rows, rec.measured.batches, rec.measured.failed_batches), (30, 3, 0));
        assert_eq!(rec.outages.len(), 1);
        let o = &rec.outages[0];
        assert!(o.reconnected && o.attempts == 3 && o.error == "connection lost: gone", "{o:?}");
        assert!(o.end - o.start >= FIRST_BACKOFF * 3, "backoff of 50 then 100 ms: {o:?}");
        assert_eq!(rec.in_doubt[0].resolution, Resolution::Resent);
        assert!(rec.errors.is_empty(), "a resent batch is no failure: {:?}", rec.errors);
    }

    #[tokio::test]
    async fn a_batch_found_written_is_counted_once_and_not_resent() {
        let (script, rec) = run_script(InDoubt::Written(10), true).await;
        assert_eq!(script.calls, 3);
        assert_eq!((rec.measured.rows, rec.measured.batches), (30, 3));
        assert_eq!(rec.in_doubt[0].resolution, Resolution::Written);
    }

    #[tokio::test]
    async fn a_batch_nothing_can_settle_is_in_doubt_not_written_nor_failed() {
        let (script, rec) = run_script(InDoubt::Unknown, true).await;
        assert_eq!(script.calls, 3, "never resent blindly");
        assert_eq!((rec.measured.rows, rec.measured.in_doubt_rows, rec.measured.failed_rows), (20, 10, 0));
        assert_eq!(rec.in_doubt[0].resolution, Resolution::InDoubt);
    }

    #[tokio::test]
    async fn an_operation_with_nothing_to_settle_fails_once_and_the_worker_goes_on() {
        let (script, rec) = run_script(InDoubt::Failed, true).await;
        assert_eq!((script.calls, script.attempts), (3, 3), "not resent; the third operation ran after reconnecting");
        assert_eq!((rec.measured.rows, rec.measured.failed_rows, rec.measured.in_doubt_rows), (20, 10, 0));
        assert!(rec.outages.len() == 1 && rec.outages[0].reconnected, "{:?}", rec.outages);
        assert!(rec.in_doubt.is_empty(), "{:?}", rec.in_doubt);
        assert_eq!(rec.errors["connection lost"].count, 1);
    }

    /// Without --reconnect, the batch lost with its connection is looked up
    /// once, on a connection made for that, and its worker stops all the same.
    #[tokio::test]
    async fn without_reconnect_a_lost_batch_is_looked_up_once_and_ends_the_worker() {
        let lost_once = |found| Script { refused: 0, ..Script::new(found) };
        let run_once = |script: Script| async {
            let (script, mut recorders) =
                run(Plan::new(None, None, Warmup::None, 1, CancellationToken::new()), Ops(3), script).await;
            (script, recorders.remove(0))
        };
        let (script, rec) = run_once(lost_once(InDoubt::Written(10))).await;
        assert_eq!((script.calls, script.attempts), (2, 1), "one look-up; the third batch never sent");
        assert_eq!((rec.measured.rows, rec.measured.failed_rows, rec.measured.in_doubt_rows), (20, 0, 0));
        assert_eq!(rec.errors["connection lost"].count, 1, "the worker stopped on it: the run failed");
        assert!(rec.outages.is_empty() && rec.in_doubt[0].resolution == Resolution::Written, "{:?}", rec.in_doubt);

        let (_, rec) = run_once(lost_once(InDoubt::NotWritten)).await;
        assert_eq!((rec.measured.rows, rec.measured.failed_rows, rec.measured.in_doubt_rows), (10, 10, 0));
        assert_eq!(rec.in_doubt[0].resolution, Resolution::NotWritten);

        // The server is gone: nobody can tell, so neither written nor failed.
        let (script, rec) = run_once(Script::new(InDoubt::Written(10))).await;
        assert_eq!((script.calls, script.attempts), (2, 1), "one attempt, refused");
        assert_eq!((rec.measured.rows, rec.measured.failed_rows, rec.measured.in_doubt_rows), (10, 0, 10));
        assert_eq!(rec.in_doubt[0].resolution, Resolution::InDoubt);
    }

    #[tokio::test]
    async fn reconnecting_gives_up_at_the_deadline_and_leaves_the_lost_batch_in_doubt() {
        let mut plan = Plan::new(Some(Duration::from_millis(300)), None, Warmup::None, 1, CancellationToken::new());
        plan.reconnect = true;
        let script = Script { refused: u32::MAX, ..Script::new(InDoubt::NotWritten) };
        let (_, recorders) = run(plan, Ops(3), script).await;
        let rec = &recorders[0];
        assert!(!rec.outages[0].reconnected);
        let m = &rec.measured;
        assert_eq!((m.rows, m.failed_rows, m.in_doubt_rows), (10, 0, 10), "sent, and nobody could look it up");
    }

    /// The loop itself, with an in-memory source and executor: what each
    /// stop condition, warm-up and a stuck operation do to the figures.
    mod the_loop {
        use super::*;

        /// Answers each operation after `takes` (forever if `None`); the
        /// `fail_at`-th call fails (fatally or not), `cancel_at` presses Ctrl-C.
        #[derive(Default)]
        struct Scripted {
            takes: Option<Duration>,
            fail_at: Option<(u32, bool)>,
            cancel_at: Option<(u32, CancellationToken)>,
            calls: u32,
            cancelled: bool,
        }

        impl Executor<Ten> for Scripted {
            async fn execute(&mut self, op: &mut Ten, _warm: bool) -> Result<u64, OpError> {
                self.calls += 1;
                if let Some((at, token)) = &self.cancel_at {
                    if *at == self.calls {
                        token.cancel();
                    }
                }
                match self.takes {
                    Some(d) => tokio::time::sleep(d).await,
                    None => std::future::pending().await,
                }
                match self.fail_at {
                    Some((at, fatal)) if at == self.calls => Err(match fatal {
                        true => OpError::fatal("connection lost", "gone"),
                        false => OpError::new("SQLSTATE 23505", "duplicate key"),
                    }),
                    _ => Ok(op.units()),
                }
            }
            async fn cancel(&mut self) {
                self.cancelled = true;
            }
        }

        fn plan(deadline: Option<Duration>, rate: Option<f64>, warmup: Warmup) -> Plan {
            Plan::new(deadline, rate, warmup, 1, CancellationToken::new())
        }

        fn quick() -> Scripted {
            Scripted { takes: Some(Duration::ZERO), ..Scripted::default() }
        }

        #[tokio::test]
        async fn every_operation_of_the_source_is_run_and_recorded() {
            let (exec, recs) = run(plan(None, None, Warmup::None), Ops(5), quick()).await;
            let m = &recs[0].measured;
            assert_eq!((exec.calls, m.rows, m.batches, m.failed_batches), (5, 50, 5, 0));
            assert_eq!(m.latency.len(), 5);
        }

        #[tokio::test]
        async fn ctrl_c_stops_before_the_next_operation() {
            let p = plan(None, None, Warmup::None);
            let exec = Scripted { cancel_at: Some((2, p.cancel.clone())), ..quick() };
            let (exec, recs) = run(p, Ops(100), exec).await;
            assert_eq!(exec.calls, 2, "the operation in flight finishes, no other starts");
            assert_eq!(recs[0].measured.rows, 20);
        }

        #[tokio::test]
        async fn no_operation_starts_after_the_deadline() {
            let deadline = Duration::from_millis(200);
            let exec = Scripted { takes: Some(Duration::from_millis(20)), ..Scripted::default() };
            let (exec, recs) = run(plan(Some(deadline), None, Warmup::None), Ops(u32::MAX), exec).await;
            let m = &recs[0].measured;
            assert!(exec.calls >= 2 && m.batches == u64::from(exec.calls), "{} calls", exec.calls);
            assert!(m.first_start.is_some_and(|s| s < deadline));
            assert!(m.last_end.is_some_and(|e| e < deadline + GRACE), "{:?}", m.last_end);
        }

        /// The deadline reaches a worker through the plan, not through a
        /// timer of the worker's own: a timer armed in the worker thread's
        /// runtime made each of its parks (an `epoll_wait` with a timeout)
        /// program the kernel's hrtimer, 0.16 times per `select 1`, where
        /// pgbench's `ppoll` waits without one. Here the worker runs on a
        /// runtime that has no timers at all: arming one panics.
        #[test]
        fn a_worker_waits_for_the_deadline_without_a_timer_of_its_own() {
            struct Yields(u32);
            impl Executor<Ten> for Yields {
                async fn execute(&mut self, op: &mut Ten, _warm: bool) -> Result<u64, OpError> {
                    self.0 += 1;
                    tokio::task::yield_now().await;
                    Ok(op.units())
                }
            }
            let timers = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
            let p = timers.block_on(async { plan(Some(Duration::from_millis(100)), None, Warmup::None) });
            let worker = std::thread::spawn(move || {
                let no_timers = tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap();
                no_timers.block_on(run(p, Ops(u32::MAX), Yields(0)))
            });
            // The plan's runtime keeps time while the worker runs.
            let (exec, recs) = timers.block_on(async {
                while !worker.is_finished() {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                worker.join().expect("the worker armed a timer of its own")
            });
            assert!(exec.0 > 1 && recs[0].measured.batches == u64::from(exec.0), "{} calls", exec.0);
        }

        #[tokio::test]
        async fn warm_up_by_count_is_recorded_apart_and_taken_out_of_the_total() {
            let (exec, recs) = run(plan(None, None, Warmup::Count(20)), Ops(5), quick()).await;
            let r = &recs[0];
            assert_eq!(exec.calls, 5);
            assert_eq!((r.warmup.rows, r.warmup.batches), (20, 2));
            assert_eq!((r.measured.rows, r.measured.batches), (30, 3));
        }

        /// The executor is told which operations are warm-up, as the loop
        /// records them, so figures of its own leave out the same ones.
        #[tokio::test]
        async fn the_executor_is_told_which_operations_are_warm_up() {
            struct Told(Vec<bool>);
            impl Executor<Ten> for Told {
                async fn execute(&mut self, op: &mut Ten, warm: bool) -> Result<u64, OpError> {
                    self.0.push(warm);
                    Ok(op.units())
                }
            }
            let (told, _) = run(plan(None, None, Warmup::Count(20)), Ops(5), Told(Vec::new())).await;
            assert_eq!(told.0, [true, true, false, false, false]);
        }

        #[tokio::test]
        async fn warm_up_by_time_is_recorded_apart() {
            let exec = Scripted { takes: Some(Duration::from_millis(100)), ..Scripted::default() };
            let p = plan(None, None, Warmup::Duration(Duration::from_millis(150)));
            let (_, recs) = run(p, Ops(4), exec).await;
            let r = &recs[0];
            // Starts at about 0, 100, 200 and 300 ms. How many fall before
            // 150 ms depends on the machine's load (a late start moves one
            // across): what holds under any load is that each side has
            // some, all are counted once, and none measured began before.
            assert_eq!(r.warmup.batches + r.measured.batches, 4);
            assert!(r.warmup.batches >= 1 && r.measured.batches >= 1, "{:?}", (r.warmup.batches, r.measured.batches));
            assert!(r.measured.first_start >= Some(Duration::from_millis(150)), "{:?}", r.measured.first_start);
        }

        #[tokio::test]
        async fn a_failure_is_counted_and_the_worker_goes_on_unless_it_is_fatal() {
            let exec = Scripted { fail_at: Some((2, false)), ..quick() };
            let (exec, recs) = run(plan(None, None, Warmup::None), Ops(4), exec).await;
            let m = &recs[0].measured;
            assert_eq!((exec.calls, m.rows, m.failed_batches, m.failed_rows), (4, 30, 1, 10));
            assert_eq!(recs[0].errors["SQLSTATE 23505"].count, 1);

            let exec = Scripted { fail_at: Some((2, true)), ..quick() };
            let (exec, recs) = run(plan(None, None, Warmup::None), Ops(4), exec).await;
            let m = &recs[0].measured;
            assert_eq!((exec.calls, m.rows, m.failed_batches), (2, 10, 1), "a lost connection ends the worker");
        }

        #[tokio::test]
        async fn an_open_loop_keeps_to_its_schedule() {
            // 10 units each at 200 units/s: one every 50 ms, the first at once.
            let started = Instant::now();
            let (_, recs) = run(plan(None, Some(200.0), Warmup::None), Ops(5), quick()).await;
            let elapsed = started.elapsed();
            assert!(elapsed >= Duration::from_millis(200), "5 operations 50 ms apart took {elapsed:?}");
            assert_eq!(recs[0].measured.batches, 5);
        }

        /// An open loop's measured window runs to its deadline: its last
        /// operation was due before it, and the time after is the rate's
        /// too. Before, the window ended with the last operation, so N
        /// operations over (N-1)/R read as R·N/(N-1): `--rate 2
        /// --duration 1s` reported 3.99/s.
        #[tokio::test]
        async fn an_open_loop_is_measured_to_its_deadline() {
            // One operation of 10 units every 100 ms: at 0, 100 and 200 ms.
            let deadline = Duration::from_millis(300);
            let (_, recs) = run(plan(Some(deadline), Some(100.0), Warmup::None), Ops(u32::MAX), quick()).await;
            let m = &recs[0].measured;
            assert_eq!(m.batches, 3);
            assert!(m.last_end >= Some(deadline), "the window ends at {:?}", m.last_end);
        }

        /// A pipelining executor (`--pipeline`): keeps what it is sent,
        /// answers all of it, in order, at each flush (after `takes`);
        /// the `lose_at`-th answer loses the connection; with `takes`
        /// `None`, answers never come.
        #[derive(Default)]
        struct Piped {
            window: usize,
            takes: Option<Duration>,
            lose_at: Option<u32>,
            /// Sent, oldest first (their units), and how many of them are answered.
            sent: std::collections::VecDeque<u64>,
            answered: usize,
            /// The most in flight at once, the flushes, the answers taken.
            most: usize,
            flushes: u32,
            answers: u32,
            cancelled: bool,
        }

        impl Piped {
            fn new(window: usize) -> Piped {
                Piped { window, takes: Some(Duration::ZERO), ..Piped::default() }
            }
        }

        impl Executor<Ten> for Piped {
            async fn execute(&mut self, op: &mut Ten, _warm: bool) -> Result<u64, OpError> {
                Ok(op.units())
            }
            fn window(&self) -> usize {
                self.window
            }
            fn send(&mut self, op: &mut Ten, _warm: bool) -> Result<(), OpError> {
                self.sent.push_back(op.units());
                self.most = self.most.max(self.sent.len());
                Ok(())
            }
            async fn flush(&mut self) -> Result<(), OpError> {
                self.flushes += 1;
                Ok(())
            }
            async fn receive(&mut self) -> Result<u64, OpError> {
                if self.answered == 0 {
                    match self.takes {
                        Some(d) => tokio::time::sleep(d).await,
                        None => std::future::pending().await,
                    }
                    self.answered = self.sent.len();
                }
                self.answers += 1;
                self.answered -= 1;
                let units = self.sent.pop_front().expect("an operation in flight");
                match self.lose_at {
                    Some(at) if at == self.answers => Err(OpError::fatal("connection lost", "gone")),
                    _ => Ok(units),
                }
            }
            fn received(&self) -> bool {
                self.answered > 0
            }
            async fn cancel(&mut self) {
                self.cancelled = true;
            }
        }

        #[tokio::test]
        async fn a_pipeline_keeps_its_window_in_flight_and_records_each_operation_once() {
            let (exec, recs) = run(plan(None, None, Warmup::None), Ops(10), Piped::new(4)).await;
            let m = &recs[0].measured;
            assert_eq!((exec.most, exec.flushes, exec.answers), (4, 3, 10), "windows of 4, 4 and 2");
            assert_eq!((m.rows, m.batches, m.failed_batches, m.latency.len()), (100, 10, 0, 10));
        }

        /// An open loop sends what is due and, before it waits for the
        /// next slot, has what it sent answered: a statement's latency is
        /// not the wait for the next one's slot. Behind its schedule, the
        /// window fills.
        #[tokio::test]
        async fn an_open_loop_answers_what_it_sent_before_it_waits() {
            // 10 units each at 200 units/s: one every 50 ms.
            let (exec, recs) = run(plan(None, Some(200.0), Warmup::None), Ops(3), Piped::new(4)).await;
            assert_eq!((exec.most, exec.flushes), (1, 3));
            let m = &recs[0].measured;
            assert!(m.batches == 3 && m.latency.max() < 40_000, "{} µs", m.latency.max());
            let (exec, _) = run(plan(None, Some(1e9), Warmup::None), Ops(8), Piped::new(4)).await;
            assert_eq!((exec.most, exec.flushes), (4, 2));
        }

        /// A connection lost with 4 in flight: the one whose answer lost it
        /// and the 2 behind it are failed once each; the worker stops (no
        /// --reconnect) and sends nothing more.
        #[tokio::test]
        async fn a_connection_lost_in_a_pipeline_fails_each_operation_in_flight_once() {
            let exec = Piped { lose_at: Some(2), ..Piped::new(4) };
            let (exec, recs) = run(plan(None, None, Warmup::None), Ops(10), exec).await;
            let m = &recs[0].measured;
            assert_eq!((exec.most, exec.answers), (4, 2), "nothing received after the loss");
            assert_eq!((m.rows, m.failed_rows, m.failed_batches, m.in_doubt_rows), (10, 30, 3, 0));
            assert_eq!(recs[0].errors["connection lost"].count, 3);
        }

        #[tokio::test(start_paused = true)]
        async fn a_window_still_in_flight_after_the_grace_is_cancelled_and_each_counted_interrupted() {
            let exec = Piped { takes: None, ..Piped::new(4) };
            let (exec, recs) = run(plan(Some(Duration::from_secs(1)), None, Warmup::None), Ops(10), exec).await;
            let r = &recs[0];
            assert!(exec.cancelled, "cancelled on the target");
            assert_eq!((exec.most, r.measured.rows, r.measured.failed_batches), (4, 0, 4));
            assert_eq!(r.errors["interrupted"].count, 4, "{:?}", r.errors);
        }

        /// Ctrl-C with a window in flight: no more is sent, and what was
        /// is answered and counted, once.
        #[tokio::test]
        async fn ctrl_c_answers_the_window_in_flight() {
            let p = plan(None, None, Warmup::None);
            let (token, exec) = (p.cancel.clone(), Piped { takes: Some(Duration::from_millis(50)), ..Piped::new(4) });
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(75)).await;
                token.cancel();
            });
            let (exec, recs) = run(p, Ops(u32::MAX), exec).await;
            let m = &recs[0].measured;
            assert_eq!(exec.answers, 8, "the second window, in flight at Ctrl-C, answered");
            assert_eq!((m.batches, m.failed_batches, m.latency.len()), (8, 0, 8));
        }

        #[tokio::test(start_paused = true)]
        async fn an_operation_still_running_after_the_grace_is_cancelled_and_counted_interrupted() {
            let exec = Scripted { takes: None, ..Scripted::default() };
            let (exec, recs) = run(plan(Some(Duration::from_secs(1)), None, Warmup::None), Ops(3), exec).await;
            let r = &recs[0];
            assert!(exec.cancelled, "cancelled on the target");
            assert_eq!((exec.calls, r.measured.rows, r.measured.failed_batches), (1, 0, 1));
            assert!(r.errors["interrupted"].example.contains("after the deadline: cancelled"), "{:?}", r.errors);
        }
    }
}
