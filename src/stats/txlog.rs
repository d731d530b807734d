//! pgbench's transaction log (`-l`), for users who read it with their own
//! scripts: one line per transaction, or with `--aggregate-interval` one
//! line per interval, in pgbench 15's columns, each thread's file in the
//! order its transactions ended, each client's transactions numbered
//! across the whole run. The worker loop must not pay for it: a worker's
//! [`Logged`] recorders push a fixed-size [`Entry`] into its thread's
//! [`Chunk`], which the workers of that thread share (they run on its one
//! runtime, so they push in the order they end: no lock, no system call per
//! transaction), handed to the thread's [`ThreadLog`] every [`CHUNK`]
//! transactions and when a worker ends (Ctrl-C and errors end it too, so
//! the log holds every transaction that ran), so memory stays bounded
//! however long the run.

use std::cell::RefCell;
use std::io::{self, Write};
use std::path::Path;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rand::rngs::ChaCha8Rng;
use rand::RngExt;

use super::buffered::Record;
use super::recorder::{InDoubtBatch, Outage, Timing};

/// What the log holds, as `-l`, `--sampling-rate` and `--aggregate-interval` said.
#[derive(Debug, Clone, PartialEq)]
pub struct LogConfig {
    /// The file names' start: `pgbench_log`, or `--log-prefix`.
    pub prefix: String,
    /// `--sampling-rate`: the share of transactions logged, 0 < rate ≤ 1.
    pub sampling_rate: Option<f64>,
    /// `--aggregate-interval`: a line per interval of this many seconds.
    pub aggregate: Option<u64>,
    pub columns: Columns,
}

/// The optional columns, present as in pgbench 15.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Columns {
    /// `-R`: the schedule lag.
    pub lag: bool,
    /// `--failures-detailed`: failures by kind.
    pub detailed: bool,
    /// `--max-tries` other than 1: each transaction's retries.
    pub retries: bool,
}

/// How a transaction ended, in the log's words.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum End {
    Done,
    Failed,
    /// SQLSTATE 40001.
    Serialization,
    /// SQLSTATE 40P01.
    Deadlock,
    /// Not sent: its slot passed too long ago (`-L` with `-R`).
    Skipped,
}

/// One transaction, as a log line tells it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry {
    pub client: u32,
    /// The client's transactions up to this one, logged or not (from 1, as pgbench's).
    pub tx: u64,
    pub end: End,
    /// The script's place in the mix (pgbench's script_no).
    pub script: u32,
    /// When it ended, µs since the Unix epoch.
    pub at_us: i64,
    pub latency_us: u64,
    pub lag_us: u64,
    /// How many times it was run again (`--max-tries`).
    pub retries: u32,
}

impl Entry {
    /// pgbench's line: `client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]`.
    pub fn write(&self, columns: Columns, out: &mut impl Write) -> io::Result<()> {
        write!(out, "{} {} ", self.client, self.tx)?;
        match self.end {
            End::Done => write!(out, "{}", self.latency_us)?,
            End::Failed => out.write_all(b"failed")?,
            End::Serialization if columns.detailed => out.write_all(b"serialization")?,
            End::Deadlock if columns.detailed => out.write_all(b"deadlock")?,
            End::Serialization | End::Deadlock => out.write_all(b"failed")?,
            End::Skipped => out.write_all(b"skipped")?,
        }
        let (secs, us) = (self.at_us.div_euclid(1_000_000), self.at_us.rem_euclid(1_000_000));
        write!(out, " {} {secs} {us}", self.script)?;
        if columns.lag {
            write!(out, " {}", self.lag_us)?;
        }
        if columns.retries {
            write!(out, " {}", self.retries)?;
        }
        out.write_all(b"\n")
    }
}

/// Sum, sum of squares, min and max of µs values, as pgbench's aggregated log prints them.
#[derive(Debug, Clone, Copy, Default)]
struct Moments {
    sum: f64,
    sum2: f64,
    min: f64,
    max: f64,
}

impl Moments {
    fn add(&mut self, n: u64, us: u64) {
        let v = us as f64;
        (self.min, self.max) = if n == 0 { (v, v) } else { (self.min.min(v), self.max.max(v)) };
        self.sum += v;
        self.sum2 += v * v;
    }
}

/// One interval of the aggregated log.
#[derive(Debug, Clone, Copy, Default)]
struct Interval {
    start_s: i64,
    /// Transactions done (failed and skipped ones have columns of their own).
    count: u64,
    latency: Moments,
    lag: Moments,
    skipped: u64,
    /// Transactions run again at least once, and how many times in all.
    retried: u64,
    retries: u64,
    serialization: u64,
    deadlock: u64,
}

impl Interval {
    fn add(&mut self, e: &Entry) {
        // As pgbench counts them: of every transaction sent, done or failed.
        if e.retries > 0 {
            self.retried += 1;
            self.retries += u64::from(e.retries);
        }
        match e.end {
            End::Done => {
                self.latency.add(self.count, e.latency_us);
                self.lag.add(self.count, e.lag_us);
                self.count += 1;
            }
            End::Skipped => self.skipped += 1,
            End::Serialization => self.serialization += 1,
            End::Deadlock => self.deadlock += 1,
            // Not in pgbench 15's columns: its clients stop at any other error.
            End::Failed => {}
        }
    }

    /// pgbench 15's line, every column present (zero where its flag is not given):
    /// `interval_start num_transactions sum_latency sum_latency_2 min_latency max_latency sum_lag
    /// sum_lag_2 min_lag max_lag skipped retried retries serialization_failures deadlock_failures`.
    fn write(&self, columns: Columns, out: &mut impl Write) -> io::Result<()> {
        let (l, g) = (&self.latency, &self.lag);
        write!(out, "{} {} {:.0} {:.0} {:.0} {:.0}", self.start_s, self.count, l.sum, l.sum2, l.min, l.max)?;
        if columns.lag {
            write!(out, " {:.0} {:.0} {:.0} {:.0}", g.sum, g.sum2, g.min, g.max)?;
        } else {
            out.write_all(b" 0 0 0 0")?;
        }
        let (serialization, deadlock) = if columns.detailed { (self.serialization, self.deadlock) } else { (0, 0) };
        writeln!(out, " {} {} {} {serialization} {deadlock}", self.skipped, self.retried, self.retries)
    }
}

/// pgbench's aggregated log: a line per `step` seconds from `start_s` (the
/// run's start), empty intervals included, up to the last transaction's.
/// Unlike pgbench 15's, the last interval is written even when the run
/// ended within it, so the log counts every transaction.
#[derive(Debug)]
struct Intervals {
    start_s: i64,
    step: u64,
    list: Vec<Interval>,
}

impl Intervals {
    fn add(&mut self, e: &Entry) {
        let k = (e.at_us.div_euclid(1_000_000) - self.start_s).max(0) as u64 / self.step;
        while self.list.len() as u64 <= k {
            let start_s = self.start_s + (self.list.len() as u64 * self.step) as i64;
            self.list.push(Interval { start_s, ..Interval::default() });
        }
        self.list[k as usize].add(e);
    }

    fn write(&self, columns: Columns, out: &mut impl Write) -> io::Result<()> {
        self.list.iter().try_for_each(|i| i.write(columns, out))
    }
}

/// Entries a thread's clients keep before they hand them to its log, whose
/// lock is taken once per this many transactions (and the file's write
/// system call about once per 20 of these chunks).
pub const CHUNK: usize = 4096;

/// A run's transaction log: a file per worker thread, and each client's
/// count of transactions, which goes on from one phase of the run (a
/// `-s` statement of timeit) to the next, as pgbench numbers a client's
/// transactions across its whole run.
#[derive(Debug)]
pub struct TxLog {
    threads: Vec<Arc<ThreadLog>>,
    counts: Counts,
}

/// Per worker of a run, what its client's log carries from one phase to
/// the next: the transactions it ran so far, and its sampling stream
/// (pgbench draws one over the whole run). Locked at a phase's start and end only.
#[derive(Debug, Clone)]
pub struct Counts(Arc<[Mutex<Carried>]>);

#[derive(Debug, Default)]
struct Carried {
    tx: u64,
    sampling: Option<ChaCha8Rng>,
}

impl Counts {
    /// The log of worker `w` of this run, client `client`, writing into
    /// `chunk` (its thread's) from the phase's `t0`: its transactions are
    /// numbered on from those it ran in the phases before, and sampled
    /// (`sampling`: the rate, and the stream of the run's first phase) on
    /// the stream the phase before left.
    pub fn client(
        &self,
        w: usize,
        client: u32,
        t0: Instant,
        chunk: Rc<RefCell<Chunk>>,
        sampling: Option<(f64, ChaCha8Rng)>,
    ) -> ClientLog {
        let mut carried = self.0[w].lock().unwrap_or_else(|e| e.into_inner());
        let sampling = sampling.map(|(rate, first)| (rate, carried.sampling.take().unwrap_or(first)));
        ClientLog { client, w, counts: self.clone(), next_tx: carried.tx, chunk, sampling, t0 }
    }
}

impl TxLog {
    /// The files of `threads` threads in `dir`, for `clients` clients, of
    /// a run that started at `start` (see [`ThreadLog::create`]).
    pub fn create(cfg: &LogConfig, dir: &Path, threads: usize, clients: usize, start: SystemTime) -> io::Result<TxLog> {
        let threads =
            (0..threads).map(|n| ThreadLog::create(cfg, dir, n, start).map(Arc::new)).collect::<io::Result<_>>()?;
        Ok(TxLog { threads, counts: Counts((0..clients).map(|_| Mutex::default()).collect()) })
    }

    /// Thread `n`'s file, which the clients that run on thread `n` share.
    pub fn thread(&self, n: usize) -> Arc<ThreadLog> {
        self.threads[n].clone()
    }

    /// Its clients' counts, from which each worker's [`ClientLog`] is made.
    pub fn counts(&self) -> Counts {
        self.counts.clone()
    }

    /// Writes every file to its end (see [`ThreadLog::finish`]): the first error, if any.
    pub fn finish(self) -> io::Result<()> {
        for thread in self.threads.into_iter().filter_map(Arc::into_inner) {
            thread.finish()?;
        }
        Ok(())
    }
}

/// A thread's log file, `prefix.PID` for thread 0 and `prefix.PID.n` for
/// thread n (as pgbench names them, in the current directory), shared by
/// the clients that run on that thread: their [`Chunk`] hands it [`CHUNK`]
/// entries at a time, in the order they ended. An aggregated log is kept
/// in memory (a few numbers per interval) and written at the end.
#[derive(Debug)]
pub struct ThreadLog {
    name: String,
    columns: Columns,
    inner: Mutex<ThreadLogInner>,
}

#[derive(Debug)]
struct ThreadLogInner {
    out: io::BufWriter<std::fs::File>,
    intervals: Option<Intervals>,
    /// The first write that failed: reported when the log is finished.
    error: Option<io::Error>,
}

impl ThreadLog {
    /// Creates thread `thread`'s file in `dir` (pgbench's: the current
    /// directory); `start`: the run's start, where the first interval of an
    /// aggregated log begins.
    pub fn create(cfg: &LogConfig, dir: &Path, thread: usize, start: SystemTime) -> io::Result<ThreadLog> {
        let pid = std::process::id();
        let name = match thread {
            0 => format!("{}.{pid}", cfg.prefix),
            n => format!("{}.{pid}.{n}", cfg.prefix),
        };
        let out = io::BufWriter::with_capacity(1 << 17, std::fs::File::create(dir.join(&name))?);
        let start_s = start.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
        let intervals = cfg.aggregate.map(|step| Intervals { start_s, step, list: Vec::new() });
        let inner = Mutex::new(ThreadLogInner { out, intervals, error: None });
        Ok(ThreadLog { name, columns: cfg.columns, inner })
    }

    /// Writes (or aggregates) `entries` and empties it.
    fn take(&self, entries: &mut Vec<Entry>) {
        let mut inner = super::buffered::lock(&self.inner);
        let ThreadLogInner { out, intervals, error } = &mut *inner;
        if error.is_none() {
            let written = match intervals {
                Some(intervals) => {
                    entries.iter().for_each(|e| intervals.add(e));
                    Ok(())
                }
                None => entries.iter().try_for_each(|e| e.write(self.columns, out)),
            };
            *error = written.err();
        }
        entries.clear();
    }

    /// Writes the aggregated intervals, if any, and flushes: the file is
    /// complete. Returns its name, or the first error writing it.
    pub fn finish(self) -> io::Result<String> {
        let inner = self.inner.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
        let ThreadLogInner { mut out, intervals, error } = inner;
        if let Some(e) = error {
            return Err(e);
        }
        if let Some(intervals) = intervals {
            intervals.write(self.columns, &mut out)?;
        }
        out.flush()?;
        Ok(self.name)
    }
}

/// The entries of one thread's clients not yet handed to its log, in the
/// order they ended: made once per thread and phase on that thread, and
/// shared (not sent) by its clients.
#[derive(Debug)]
pub struct Chunk {
    entries: Vec<Entry>,
    thread: Arc<ThreadLog>,
    /// When the phase's `t0` was, in µs since the Unix epoch: read once for
    /// the thread, so its clients' times share one origin.
    t0_us: i64,
}

impl Chunk {
    /// The chunk of a thread's clients, into its `thread`'s log, for a phase that started at `t0`.
    pub fn new(thread: Arc<ThreadLog>, t0: Instant) -> Rc<RefCell<Chunk>> {
        let now_us = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64);
        let t0_us = now_us - t0.elapsed().as_micros() as i64;
        Rc::new(RefCell::new(Chunk { entries: Vec::with_capacity(CHUNK), thread, t0_us }))
    }

    fn push(&mut self, entry: Entry) {
        self.entries.push(entry);
        if self.entries.len() == CHUNK {
            self.flush();
        }
    }

    /// Hands the entries to the thread's log. Any time will do: those that
    /// end later are pushed after them.
    fn flush(&mut self) {
        self.thread.take(&mut self.entries);
    }
}

/// What a worker's [`Logged`] recorders share: its client id, its count
/// of transactions, its thread's chunk, and the sampling stream.
#[derive(Debug)]
pub struct ClientLog {
    client: u32,
    /// Its place in [`TxLog`]'s counts, where its count is kept for the next phase.
    w: usize,
    counts: Counts,
    next_tx: u64,
    chunk: Rc<RefCell<Chunk>>,
    sampling: Option<(f64, ChaCha8Rng)>,
    /// The phase's start.
    t0: Instant,
}

impl ClientLog {
    /// Keeps the count and the sampling stream for the next phase and hands the thread's chunk to
    /// its log (the worker ended).
    pub fn finish(self) {
        let mut carried = self.counts.0[self.w].lock().unwrap_or_else(|e| e.into_inner());
        *carried = Carried { tx: self.next_tx, sampling: self.sampling.map(|(_, rng)| rng) };
        self.chunk.borrow_mut().flush();
    }

    fn push(&mut self, script: u32, end: End, at: Duration, latency: Duration, lag: Duration, retries: u32) {
        // Numbered from 1, as pgbench's.
        self.next_tx += 1;
        let tx = self.next_tx;
        if let Some((rate, rng)) = &mut self.sampling {
            if rng.random::<f64>() >= *rate {
                return;
            }
        }
        let mut chunk = self.chunk.borrow_mut();
        let at_us = chunk.t0_us + at.as_micros() as i64;
        chunk.push(Entry {
            client: self.client,
            tx,
            end,
            script,
            at_us,
            latency_us: latency.as_micros() as u64,
            lag_us: lag.as_micros() as u64,
            retries,
        });
    }
}

/// A recorder that also logs each measured transaction into its worker's
/// [`ClientLog`] (warm-up is not logged, as it is not reported): only made
/// with `-l`, so a run without it records as before.
pub struct Logged<R> {
    pub inner: R,
    script: u32,
    log: Rc<RefCell<ClientLog>>,
}

impl<R> Logged<R> {
    /// `inner`, the recorder of label `script`, logging into `log`.
    pub fn new(inner: R, script: u32, log: Rc<RefCell<ClientLog>>) -> Logged<R> {
        Logged { inner, script, log }
    }

    fn push(&self, warmup: bool, end: End, t: &Timing) {
        if !warmup {
            self.log.borrow_mut().push(self.script, end, t.ended, t.latency(), t.lag(), t.retries);
        }
    }
}

/// The kind of failure an error class is, in the log's words.
fn failure(class: &str) -> End {
    match class {
        "SQLSTATE 40001" => End::Serialization,
        "SQLSTATE 40P01" => End::Deadlock,
        _ => End::Failed,
    }
}

impl<R: Record> Record for Logged<R> {
    fn ok(&mut self, warmup: bool, units: u64, t: Timing) {
        self.push(warmup, End::Done, &t);
        self.inner.ok(warmup, units, t)
    }
    fn failed(&mut self, warmup: bool, acked: u64, units: u64, t: Timing, class: String, message: String) {
        self.push(warmup, failure(&class), &t);
        self.inner.failed(warmup, acked, units, t, class, message)
    }
    fn in_doubt(&mut self, warmup: bool, units: u64, t: Timing) {
        self.push(warmup, End::Failed, &t);
        self.inner.in_doubt(warmup, units, t)
    }
    fn outage(&mut self, outage: Outage) {
        self.inner.outage(outage)
    }
    fn settled(&mut self, batch: InDoubtBatch) {
        self.inner.settled(batch)
    }
    fn ran_until(&mut self, end: Duration) {
        self.inner.ran_until(end)
    }
    fn skipped(&mut self, warmup: bool) {
        if !warmup {
            let mut log = self.log.borrow_mut();
            let at = log.t0.elapsed();
            log.push(self.script, End::Skipped, at, Duration::ZERO, Duration::ZERO, 0);
        }
        self.inner.skipped(warmup)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(end: End) -> Entry {
        Entry {
            client: 1,
            tx: 7,
            end,
            script: 0,
            at_us: 1_700_000_000_123_456,
            latency_us: 1500,
            lag_us: 42,
            retries: 2,
        }
    }

    fn line(e: Entry, columns: Columns) -> String {
        let mut out = Vec::new();
        e.write(columns, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_transaction_line_has_pgbench_s_columns() {
        let plain = Columns::default();
        assert_eq!(line(entry(End::Done), plain), "1 7 1500 0 1700000000 123456\n");
        let rated = Columns { lag: true, ..plain };
        assert_eq!(line(entry(End::Done), rated), "1 7 1500 0 1700000000 123456 42\n");
        assert_eq!(line(entry(End::Skipped), rated), "1 7 skipped 0 1700000000 123456 42\n");
        assert_eq!(line(entry(End::Serialization), plain), "1 7 failed 0 1700000000 123456\n");
        let detailed = Columns { detailed: true, ..plain };
        assert_eq!(line(entry(End::Serialization), detailed), "1 7 serialization 0 1700000000 123456\n");
        assert_eq!(line(entry(End::Deadlock), detailed), "1 7 deadlock 0 1700000000 123456\n");
        assert_eq!(line(entry(End::Failed), detailed), "1 7 failed 0 1700000000 123456\n");
        // --max-tries other than 1: pgbench 15's retries column, after the lag.
        let tried = Columns { retries: true, ..rated };
        assert_eq!(line(entry(End::Done), tried), "1 7 1500 0 1700000000 123456 42 2\n");
        assert_eq!(
            line(entry(End::Serialization), Columns { retries: true, ..plain }),
            "1 7 failed 0 1700000000 123456 2\n"
        );
    }

    /// A run's log of one thread and `clients` clients in a temporary directory, as `-l` makes it.
    fn tx_log(dir: &tempfile::TempDir, clients: usize) -> TxLog {
        let cfg = LogConfig { prefix: "p".into(), sampling_rate: None, aggregate: None, columns: Columns::default() };
        TxLog::create(&cfg, dir.path(), 1, clients, UNIX_EPOCH + Duration::from_secs(100)).unwrap()
    }

    /// The (client, transaction, time_us) of each line of `dir`'s one file.
    fn lines(dir: &tempfile::TempDir) -> Vec<(u32, u64, i64)> {
        let file = std::fs::read_dir(dir.path()).unwrap().next().unwrap().unwrap().path();
        let text = std::fs::read_to_string(file).unwrap();
        text.lines()
            .map(|l| l.split(' ').collect::<Vec<_>>())
            .map(|c| {
                (
                    c[0].parse().unwrap(),
                    c[1].parse().unwrap(),
                    c[4].parse::<i64>().unwrap() * 1_000_000 + c[5].parse::<i64>().unwrap(),
                )
            })
            .collect()
    }

    fn done(log: &mut ClientLog, at: Duration) {
        log.push(0, End::Done, at, Duration::from_micros(10), Duration::ZERO, 0);
    }

    /// pgbench numbers a client's transactions from 1 (seen in pgbench
    /// 15.18's log), the sampled-out ones counted too; the file has every
    /// transaction logged, across chunks.
    #[test]
    fn a_client_s_transactions_are_numbered_from_1_as_pgbench_s() {
        use rand::SeedableRng;
        let t0 = Instant::now();
        let dir = tempfile::tempdir().unwrap();
        let run = tx_log(&dir, 4);
        let mut log = run.counts().client(0, 3, t0, Chunk::new(run.thread(0), t0), None);
        (0..CHUNK + 2).for_each(|_| done(&mut log, Duration::ZERO));
        log.finish();
        run.finish().unwrap();
        let numbers = lines(&dir);
        assert_eq!(numbers.len(), CHUNK + 2);
        assert_eq!((numbers[0].0, numbers[0].1), (3, 1));
        assert_eq!((numbers[CHUNK + 1].0, numbers[CHUNK + 1].1), (3, CHUNK as u64 + 2));
        let dir = tempfile::tempdir().unwrap();
        let run = tx_log(&dir, 1);
        let sampling = Some((0.5, ChaCha8Rng::seed_from_u64(1)));
        let mut sampled = run.counts().client(0, 0, t0, Chunk::new(run.thread(0), t0), sampling);
        (0..1000).for_each(|_| done(&mut sampled, Duration::ZERO));
        sampled.finish();
        run.finish().unwrap();
        let numbers = lines(&dir);
        assert!((400..600).contains(&numbers.len()), "{}", numbers.len());
        assert!(numbers.windows(2).all(|w| w[0].1 < w[1].1) && numbers.last().unwrap().1 <= 1000);
    }

    /// Issue 32: with several phases (timeit's `-s` statements) the
    /// sampling stream started again at each: phase 2 sampled the same
    /// transactions of its own as phase 1. pgbench draws one stream over
    /// the whole run: a client's stream goes on from phase to phase.
    #[test]
    fn sampling_goes_on_across_phases() {
        use rand::SeedableRng;
        let t0 = Instant::now();
        let dir = tempfile::tempdir().unwrap();
        let run = tx_log(&dir, 1);
        for _phase in 0..2 {
            let sampling = Some((0.5, ChaCha8Rng::seed_from_u64(1)));
            let mut log = run.counts().client(0, 0, t0, Chunk::new(run.thread(0), t0), sampling);
            (0..100).for_each(|_| done(&mut log, Duration::ZERO));
            log.finish();
        }
        run.finish().unwrap();
        let numbers: Vec<u64> = lines(&dir).iter().map(|l| l.1).collect();
        let first: Vec<u64> = numbers.iter().copied().filter(|&n| n <= 100).collect();
        let second: Vec<u64> = numbers.iter().filter(|&&n| n > 100).map(|n| n - 100).collect();
        assert_ne!(first, second, "phase 2 sampled phase 1's pattern again");
    }

    /// Issue 32, item 2: the clients of a thread share its chunk, so its
    /// file is in the order their transactions ended, across chunks and
    /// the ends of workers (each client kept a chunk of its own before).
    #[test]
    fn a_thread_s_file_is_in_the_order_its_transactions_ended() {
        let t0 = Instant::now();
        let dir = tempfile::tempdir().unwrap();
        let run = tx_log(&dir, 2);
        let chunk = Chunk::new(run.thread(0), t0);
        let (mut a, mut b) =
            (run.counts().client(0, 0, t0, chunk.clone(), None), run.counts().client(1, 1, t0, chunk, None));
        for i in 0..CHUNK as u64 + 10 {
            done(if i % 3 == 0 { &mut a } else { &mut b }, Duration::from_micros(i));
        }
        a.finish();
        done(&mut b, Duration::from_secs(1));
        b.finish();
        run.finish().unwrap();
        let times: Vec<i64> = lines(&dir).iter().map(|l| l.2).collect();
        assert_eq!(times.len(), CHUNK + 11);
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "a line ended before the one above it");
    }

    /// Issue 32, item 3: a client's transactions are numbered across the
    /// run's phases (timeit's `-s` statements), not from 1 again in each.
    #[test]
    fn a_client_s_numbers_go_on_in_the_next_phase() {
        let dir = tempfile::tempdir().unwrap();
        let run = tx_log(&dir, 2);
        for _phase in 0..2 {
            let t0 = Instant::now();
            let chunk = Chunk::new(run.thread(0), t0);
            for w in 0..2 {
                let mut log = run.counts().client(w, w as u32, t0, chunk.clone(), None);
                (0..3).for_each(|_| done(&mut log, Duration::ZERO));
                log.finish();
            }
        }
        run.finish().unwrap();
        let mut numbers: Vec<(u32, u64)> = lines(&dir).iter().map(|l| (l.0, l.1)).collect();
        numbers.sort_unstable();
        let want: Vec<(u32, u64)> = (0..2).flat_map(|c| (1..=6).map(move |n| (c, n))).collect();
        assert_eq!(numbers, want);
    }

    #[test]
    fn an_aggregated_line_per_interval_has_pgbench_15_s_columns() {
        let at = |s: i64, latency_us, end| Entry {
            at_us: s * 1_000_000 + 5,
            latency_us,
            end,
            retries: 0,
            ..entry(End::Done)
        };
        let entries = [
            at(100, 10, End::Done),
            at(100, 30, End::Done),
            Entry { retries: 3, ..at(101, 0, End::Serialization) },
            at(101, 0, End::Skipped),
            Entry { retries: 1, ..at(103, 20, End::Done) },
        ];
        let aggregated = |entries: &[Entry], step, columns| {
            let mut intervals = Intervals { start_s: 100, step, list: Vec::new() };
            entries.iter().for_each(|e| intervals.add(e));
            let mut out = Vec::new();
            intervals.write(columns, &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(
            aggregated(&entries, 1, Columns::default()),
            "100 2 40 1000 10 30 0 0 0 0 0 0 0 0 0\n\
             101 0 0 0 0 0 0 0 0 0 1 1 3 0 0\n\
             102 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n\
             103 1 20 400 20 20 0 0 0 0 0 1 1 0 0\n"
        );
        let all = Columns { lag: true, detailed: true, retries: true };
        assert_eq!(
            aggregated(&entries, 2, all),
            "100 2 40 1000 10 30 84 3528 42 42 1 1 3 1 0\n102 1 20 400 20 20 42 1764 42 42 0 1 1 0 0\n"
        );
    }
}
