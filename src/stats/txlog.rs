//! pgbench's transaction log (`-l`), for users who read it with their own
//! scripts: one line per transaction, or with `--aggregate-interval` one
//! line per interval, in pgbench 15's columns. The worker loop must not pay
//! for it: a worker's [`Logged`] recorders push a fixed-size [`Entry`] into
//! the worker's own chunk (no lock, no system call per transaction), handed
//! to its thread's [`ThreadLog`] every [`CHUNK`] transactions and when the
//! worker ends (Ctrl-C and errors end it too, so the log holds every
//! transaction that ran), so memory stays bounded however long the run.

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

/// Entries a client keeps before it hands them to its thread's log, whose
/// lock it takes once per this many transactions (and the file's write
/// system call about once per 20 of these chunks).
pub const CHUNK: usize = 4096;

/// A thread's log file, `prefix.PID` for thread 0 and `prefix.PID.n` for
/// thread n (as pgbench names them, in the current directory), shared by
/// the clients that run on that thread: each hands it [`CHUNK`] entries at
/// a time. Its lines are in the order of those chunks; an aggregated log
/// is kept in memory (a few numbers per interval) and written at the end.
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

/// What a worker's [`Logged`] recorders share: its client id, its count
/// of transactions, the chunk not yet handed to its thread's log, and the
/// sampling stream.
#[derive(Debug)]
pub struct ClientLog {
    client: u32,
    next_tx: u64,
    entries: Vec<Entry>,
    thread: Arc<ThreadLog>,
    sampling: Option<(f64, ChaCha8Rng)>,
    /// The run's start, `t0`, and when that was in µs since the Unix epoch.
    t0: Instant,
    t0_us: i64,
}

impl ClientLog {
    /// The log of client `client` of a run that started at `t0`, into
    /// its `thread`'s log; `sampling`: the share logged and its random stream.
    pub fn new(client: u32, t0: Instant, thread: Arc<ThreadLog>, sampling: Option<(f64, ChaCha8Rng)>) -> ClientLog {
        let now_us = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64);
        let t0_us = now_us - t0.elapsed().as_micros() as i64;
        ClientLog { client, next_tx: 0, entries: Vec::with_capacity(CHUNK), thread, sampling, t0, t0_us }
    }

    /// Hands what is left to the thread's log (the worker ended).
    pub fn finish(mut self) {
        self.thread.take(&mut self.entries);
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
        self.entries.push(Entry {
            client: self.client,
            tx,
            end,
            script,
            at_us: self.t0_us + at.as_micros() as i64,
            latency_us: latency.as_micros() as u64,
            lag_us: lag.as_micros() as u64,
            retries,
        });
        if self.entries.len() == CHUNK {
            self.thread.take(&mut self.entries);
        }
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

    /// A log of one thread in a temporary directory, as `-l` with `aggregate` makes it.
    fn thread_log(dir: &tempfile::TempDir, aggregate: Option<u64>) -> Arc<ThreadLog> {
        let cfg = LogConfig { prefix: "p".into(), sampling_rate: None, aggregate, columns: Columns::default() };
        Arc::new(ThreadLog::create(&cfg, dir.path(), 0, UNIX_EPOCH + Duration::from_secs(100)).unwrap())
    }

    /// pgbench numbers a client's transactions from 1 (seen in pgbench
    /// 15.18's log), the sampled-out ones counted too; the file has every
    /// transaction logged, across chunks.
    #[test]
    fn a_client_s_transactions_are_numbered_from_1_as_pgbench_s() {
        use rand::SeedableRng;
        let dir = tempfile::tempdir().unwrap();
        let t0 = Instant::now();
        let read = |name: String| -> Vec<(u32, u64)> {
            let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
            text.lines()
                .map(|l| l.split(' ').collect::<Vec<_>>())
                .map(|c| (c[0].parse().unwrap(), c[1].parse().unwrap()))
                .collect()
        };
        let thread = thread_log(&dir, None);
        let mut log = ClientLog::new(3, t0, thread.clone(), None);
        (0..CHUNK + 2)
            .for_each(|_| log.push(0, End::Done, Duration::ZERO, Duration::from_micros(10), Duration::ZERO, 0));
        log.finish();
        let numbers = read(Arc::into_inner(thread).unwrap().finish().unwrap());
        assert_eq!(numbers.len(), CHUNK + 2);
        assert_eq!((numbers[0], numbers[CHUNK + 1]), ((3, 1), (3, CHUNK as u64 + 2)));
        let thread = thread_log(&dir, None);
        let mut sampled = ClientLog::new(0, t0, thread.clone(), Some((0.5, ChaCha8Rng::seed_from_u64(1))));
        (0..1000).for_each(|_| sampled.push(0, End::Done, Duration::ZERO, Duration::ZERO, Duration::ZERO, 0));
        sampled.finish();
        let numbers = read(Arc::into_inner(thread).unwrap().finish().unwrap());
        assert!((400..600).contains(&numbers.len()), "{}", numbers.len());
        assert!(numbers.windows(2).all(|w| w[0].1 < w[1].1) && numbers.last().unwrap().1 <= 1000);
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
