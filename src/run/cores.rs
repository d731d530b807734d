//! Thread per core: the workers run on a pool of threads, each driving its
//! own single-threaded runtime, and worker `w` lives on thread
//! `w % threads` from the moment its connection opens to its last
//! operation. A worker and its connection's task (tokio-postgres drives
//! each connection in a task of its own) then always wake each other on
//! one thread, as pgbench's clients share a `-j` thread: on a multi-thread
//! runtime they wake each other across threads (a futex and often an idle
//! CPU woken per query), which made `select 1` cost the client twice
//! pgbench's CPU and the server a third more per query (issue 18).
//!
//! The pool is [`tokio_util::task::LocalPoolHandle`], one per process,
//! made on first use with one thread per CPU, or as many as
//! [`use_threads`] said before (`dbload http --threads`); each thread is
//! kept to a CPU of its own when there are enough. The command's own
//! work (setup, the admin connection, the progress bar, signals) stays on
//! the process's runtime. A connection must be opened on the thread that
//! will drive it (its socket is registered with that thread's runtime):
//! commands open their workers' connections with [`open_each`], and
//! `run::measure` starts worker `w` on the same thread with [`spawn`].
//! An executor may still be used after its worker ended, from any thread
//! (a sink's last acknowledgements): its connection's task goes on running
//! on its own thread, which lives as long as the process.

use std::future::Future;
use std::sync::OnceLock;

use anyhow::Result;
use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;
use tokio::task::JoinHandle;
use tokio_util::task::LocalPoolHandle;

static POOL: OnceLock<LocalPoolHandle> = OnceLock::new();
static THREADS: OnceLock<usize> = OnceLock::new();

/// Asks for `n` worker threads rather than one per CPU; a pool already
/// made keeps its size (in-process callers, such as the tests, share one).
pub fn use_threads(n: usize) {
    let _ = THREADS.set(n.max(1));
}

fn pool() -> &'static LocalPoolHandle {
    POOL.get_or_init(|| {
        let cpus = || std::thread::available_parallelism().map_or(1, |n| n.get());
        LocalPoolHandle::new(*THREADS.get_or_init(cpus))
    })
}

/// How many worker threads there are: worker `w` runs on `w % threads()`.
pub fn threads() -> usize {
    pool().num_threads()
}

/// Runs the future `task` makes on worker `w`'s thread; a panic in it is
/// the JoinHandle's error, as for `tokio::spawn`.
pub fn spawn<F, Fut>(w: usize, task: F) -> JoinHandle<Fut::Output>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future + 'static,
    Fut::Output: Send + 'static,
{
    let pool = pool();
    let thread = w % pool.num_threads();
    pool.spawn_pinned_by_idx(
        move || {
            keep_to_cpu(thread);
            task()
        },
        thread,
    )
}

thread_local! {
    /// Whether this worker thread was kept to its CPU already.
    static KEPT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Keeps worker thread `thread` to the `thread`th CPU the process may
/// run on, once, when there are no more threads than CPUs. Left free, the
/// scheduler moved the threads between the CPUs under the server's
/// processes and `select 1` varied from 72k to 109k queries/s between
/// runs on this 2-core machine; kept, each thread and the server
/// processes it wakes settle on one CPU, as a pgbench thread and its
/// clients' servers do (83k to 94k).
fn keep_to_cpu(thread: usize) {
    if KEPT.replace(true) {
        return;
    }
    let cpus = allowed_cpus();
    if threads() > cpus.len() {
        return;
    }
    let mut one = CpuSet::new();
    if one.set(cpus[thread]).is_ok() {
        // Not kept is only slower: nothing to tell the user.
        let _ = sched_setaffinity(Pid::from_raw(0), &one);
    }
}

/// The CPUs the calling thread may run on.
fn allowed_cpus() -> Vec<usize> {
    match sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..CpuSet::count()).filter(|&c| set.is_set(c).unwrap_or(false)).collect(),
        Err(_) => Vec::new(),
    }
}

/// Opens one worker's executor per item of `each`, all at once: worker
/// `w`'s with `open(item, w)` (the item: what it opens from), on the
/// thread that will run it. The first error is the result.
pub async fn open_each<T, E, F, Fut>(each: impl IntoIterator<Item = T>, open: F) -> Result<Vec<E>>
where
    T: Send + 'static,
    E: Send + 'static,
    F: FnOnce(T, usize) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<E>> + 'static,
{
    let opening = each.into_iter().enumerate().map(|(w, item)| {
        let open = open.clone();
        let task = spawn(w, move || open(item, w));
        async move {
            match task.await {
                Ok(opened) => opened,
                Err(e) => match e.try_into_panic() {
                    Ok(payload) => std::panic::resume_unwind(payload),
                    Err(e) => Err(anyhow::anyhow!("opening worker {w}'s connection did not finish: {e}")),
                },
            }
        }
    });
    futures_util::future::try_join_all(opening).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread_name() -> std::thread::ThreadId {
        std::thread::current().id()
    }

    #[tokio::test]
    async fn a_worker_runs_on_the_thread_its_connection_was_opened_on() {
        let n = threads() * 2 + 1;
        let opened = open_each(0..n, |i, w| async move { Ok((i, w, thread_name())) }).await.unwrap();
        for (w, (item, opened_w, opened_on)) in opened.into_iter().enumerate() {
            assert_eq!((item, opened_w), (w, w));
            let ran_on = spawn(w, || async { thread_name() }).await.unwrap();
            assert_eq!(ran_on, opened_on, "worker {w}");
            assert_ne!(ran_on, thread_name(), "worker {w} on the caller's own thread");
        }
    }

    #[tokio::test]
    async fn the_workers_are_spread_over_every_thread() {
        let n = threads();
        let on: std::collections::HashSet<_> =
            open_each(0..n, |_, _| async { Ok(thread_name()) }).await.unwrap().into_iter().collect();
        assert_eq!(on.len(), n);
    }

    #[tokio::test]
    async fn each_thread_is_kept_to_a_cpu_of_its_own_when_there_are_enough() {
        let allowed = allowed_cpus();
        let mut kept = std::collections::HashSet::new();
        for w in 0..threads() {
            let on = spawn(w, || async { allowed_cpus() }).await.unwrap();
            if threads() <= allowed.len() {
                assert_eq!(on.len(), 1, "thread {w} may run on {on:?}");
                kept.insert(on[0]);
            } else {
                assert_eq!(on, allowed, "thread {w} of {}, more than the CPUs", threads());
            }
        }
        if threads() <= allowed.len() {
            assert_eq!(kept.len(), threads(), "{kept:?}");
        }
    }

    #[tokio::test]
    async fn the_first_failure_to_open_is_the_error() {
        let err = open_each(0..4, |_, w| async move {
            match w {
                2 => Err(anyhow::anyhow!("worker 2 refused")),
                _ => Ok(w),
            }
        })
        .await
        .unwrap_err();
        assert_eq!(err.to_string(), "worker 2 refused");
    }

    #[tokio::test]
    #[should_panic(expected = "boom in open")]
    async fn a_panic_while_opening_is_a_panic_of_the_caller() {
        let _ = open_each([()], |(), _| async { panic!("boom in open") as Result<()> }).await;
    }
}
