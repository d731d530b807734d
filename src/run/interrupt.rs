//! A stop signal ends every phase that waits on the network, not only the
//! measured loop (which has its own grace, `worker::GRACE`). Before the
//! run, connecting and setting up are given up at once: nothing was
//! measured, and the command exits 130 saying so. After the run, what the
//! report waits for (the rows counted, the server's cost) is given a short
//! grace, then given up and its statement cancelled on the server: a count
//! waiting on a lock, or a server that stopped answering, must not hold the
//! report of the work done.

use std::future::Future;
use std::time::Duration;

use anyhow::Result;
use tokio_util::sync::CancellationToken;

use crate::driver::Admin;
use crate::error::interrupted;

/// How long what follows a run may go on after a stop signal (or after it
/// began, for a signal that came before): long enough for a count on a
/// server that answers, short enough that Ctrl-C is felt at once.
pub const AFTER_RUN_GRACE: Duration = Duration::from_secs(1);

/// Why a figure read after the run is missing from the report when
/// [`after_run`] gave it up.
pub const CUT_SHORT: &str = "interrupted (Ctrl-C, SIGTERM or SIGHUP) before the server answered";

/// Runs a command's setup (connecting, detecting the engine, DDL, opening
/// the workers' connections), ended by a stop signal with an interrupted
/// error (exit 130) naming `target`. A signal noted before the setup began
/// (while the throwaway server was starting) lets it finish: the run then
/// stops as it starts and reports, as it always did, on a local server
/// that answers.
pub async fn setting_up<T>(
    cancel: &CancellationToken,
    target: &str,
    setup: impl Future<Output = Result<T>>,
) -> Result<T> {
    if cancel.is_cancelled() {
        return setup.await;
    }
    tokio::select! {
        biased;
        done = setup => done,
        () = cancel.cancelled() => Err(interrupted(format!(
            "interrupted while connecting to {target} and setting up the run: nothing was measured"
        ))),
    }
}

/// `setup`'s result, from [`setting_up`], after cancelling on the server
/// what `admin` was running when the signal ended it: a DROP TABLE
/// waiting on another session's lock, left queued, would drop the table
/// once the lock is free, after the user stopped dbload.
pub async fn cancel_if_interrupted<T>(
    setup: Result<T>,
    cancel: &CancellationToken,
    admin: Option<&Admin>,
) -> Result<T> {
    if let (Err(_), true, Some(admin)) = (&setup, cancel.is_cancelled(), admin) {
        cancel_on_server(admin).await;
    }
    setup
}

/// Runs what follows a run, for its report: none when a stop signal
/// came and [`AFTER_RUN_GRACE`] passed before it finished. The caller then
/// makes the report with what was found by then, and cancels the statement
/// left running with [`cancel_on_server`].
pub async fn after_run<T>(cancel: &CancellationToken, work: impl Future<Output = T>) -> Option<T> {
    let given_up = async {
        cancel.cancelled().await;
        tokio::time::sleep(AFTER_RUN_GRACE).await;
    };
    tokio::select! {
        biased;
        done = work => Some(done),
        () = given_up => None,
    }
}

/// Cancels what `admin` was running when [`after_run`] gave it up, so
/// that it does not go on holding (or waiting for) locks on the server.
/// Over HTTP, CrateDB has no cancel request: nothing is sent.
pub async fn cancel_on_server(admin: &Admin) {
    // Bounded: the report is not held for a server that stopped answering.
    let _ = tokio::time::timeout(AFTER_RUN_GRACE, admin.cancel()).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn setup_ends_at_the_signal_and_says_so() {
        let cancel = CancellationToken::new();
        let stopper = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            stopper.cancel();
        });
        let forever = std::future::pending::<Result<()>>();
        let t = tokio::time::Instant::now();
        let err = setting_up(&cancel, "postgres://h/db", forever).await.unwrap_err();
        assert_eq!(t.elapsed(), Duration::from_secs(1));
        assert_eq!(crate::error::exit_code(&err), crate::error::exit::INTERRUPTED);
        assert!(err.to_string().contains("postgres://h/db"), "{err}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_signal_before_the_setup_lets_it_finish() {
        let cancel = CancellationToken::new();
        cancel.cancel();
        let slow = async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            Ok(7)
        };
        assert_eq!(setting_up(&cancel, "t", slow).await.unwrap(), 7);
    }

    #[tokio::test(start_paused = true)]
    async fn after_the_run_work_gets_the_grace_from_the_signal_or_from_its_start() {
        let work = |secs| tokio::time::sleep(Duration::from_secs(secs));
        let cancel = CancellationToken::new();
        // No signal: the work takes as long as it takes.
        assert!(after_run(&cancel, work(30)).await.is_some());
        // A signal 2 s into it: given up the grace later.
        let stopper = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(2)).await;
            stopper.cancel();
        });
        let t = tokio::time::Instant::now();
        assert!(after_run(&cancel, work(30)).await.is_none());
        assert_eq!(t.elapsed(), Duration::from_secs(2) + AFTER_RUN_GRACE);
        // A signal before it began: the grace counts from its start.
        let t = tokio::time::Instant::now();
        assert!(after_run(&cancel, work(30)).await.is_none());
        assert_eq!(t.elapsed(), AFTER_RUN_GRACE);
    }
}
