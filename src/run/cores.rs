//! Thread per core: the workers run on a pool of threads, each driving its
//! own single-threaded runtime, and worker `w` lives on thread
//! `w % threads` from the moment its connection opens to its last
//! operation. A worker and its connection's task (tokio-postgres drives
//! each connection in a task of its own) then always wake each other on
//! one thread, as pgbench's clients share a `-j` thread: on a multi-thread
//! runtime they wake each other across threads (a futex and often an idle
//! CPU woken per query), which made `select 1` cost the client twice
//! pgbench's CPU and the server a third more per query.
//!
//! The pool is [`tokio_util::task::LocalPoolHandle`], one per process,
//! made on first use with one thread per CPU, or as many as
//! [`use_threads`] said before (`--threads`, `-j`). The command's own
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
    pool.spawn_pinned_by_idx(task, w % pool.num_threads())
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

    fn thread_id() -> std::thread::ThreadId {
        std::thread::current().id()
    }

    #[tokio::test]
    async fn a_worker_runs_on_the_thread_its_connection_was_opened_on() {
        let n = threads() * 2 + 1;
        let opened = open_each(0..n, |i, w| async move { Ok((i, w, thread_id())) }).await.unwrap();
        for (w, (item, opened_w, opened_on)) in opened.into_iter().enumerate() {
            assert_eq!((item, opened_w), (w, w));
            let ran_on = spawn(w, || async { thread_id() }).await.unwrap();
            assert_eq!(ran_on, opened_on, "worker {w}");
            assert_ne!(ran_on, thread_id(), "worker {w} on the caller's own thread");
        }
    }

    #[tokio::test]
    async fn the_workers_are_spread_over_every_thread() {
        let n = threads();
        let on: std::collections::HashSet<_> =
            open_each(0..n, |_, _| async { Ok(thread_id()) }).await.unwrap().into_iter().collect();
        assert_eq!(on.len(), n);
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
