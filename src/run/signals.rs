//! Stop signals and the runtime a command runs on. Ctrl-C (SIGINT), `kill`
//! (SIGTERM) and a closed terminal (SIGHUP) all stop a command the same
//! way, through one cancellation token: no new work, a report of what was
//! done, and the throwaway server removed, rather than a dead process and a
//! server left behind. A signal that comes before the runtime is there to
//! handle it (while the throwaway server starts) is noted, not lost.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

/// A stop signal that came while the throwaway server was starting, before
/// the runtime was there to handle it.
static EARLY_SIGNAL: std::sync::LazyLock<Arc<AtomicBool>> = std::sync::LazyLock::new(Arc::default);

/// Until the runtime handles them, SIGINT, SIGTERM and SIGHUP are noted
/// rather than fatal: the throwaway server takes seconds to start (more on a
/// loaded machine), and a signal then would kill dbload with its data
/// directory left behind. The run then stops as soon as it starts.
pub fn note_early_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    for signal in [SIGINT, SIGTERM, SIGHUP] {
        // Fails only for a signal that cannot be caught; these three can.
        let _ = signal_hook::flag::register(signal, EARLY_SIGNAL.clone());
    }
}

/// Whether a stop signal was noted (see [`note_early_signals`]).
pub fn noted() -> bool {
    EARLY_SIGNAL.load(Ordering::SeqCst)
}

/// Cancels `cancel` on the first of Ctrl-C, SIGTERM or SIGHUP (at once if
/// one was noted before).
async fn cancel_on_signals(cancel: CancellationToken) {
    use tokio::signal::unix::{signal, SignalKind};
    let handled = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()), signal(SignalKind::hangup()));
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) = handled else {
        let _ = tokio::signal::ctrl_c().await;
        return cancel.cancel();
    };
    // Handled from here on; one that came before is not lost.
    if !noted() {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
            _ = hup.recv() => {}
        }
    }
    cancel.cancel();
}

/// Runs `body` on a runtime where Ctrl-C, SIGTERM or SIGHUP cancel its
/// token: the run stops issuing work and still reports what it did. Its
/// workers run on `threads` threads of their own (default: one per CPU;
/// see [`super::cores`]), and so does the runtime.
pub fn with_threads<T>(threads: Option<usize>, body: impl AsyncFnOnce(CancellationToken) -> Result<T>) -> Result<T> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = threads {
        builder.worker_threads(n);
        super::cores::use_threads(n);
    }
    let runtime = builder.enable_all().build().context("starting the runtime")?;
    let cancel = CancellationToken::new();
    if noted() {
        // Before the body starts, so that it sees the signal from its first
        // step (a setup lets the run start and report; see `run::interrupt`).
        cancel.cancel();
    }
    runtime.block_on(async {
        let signal = tokio::spawn(cancel_on_signals(cancel.clone()));
        let result = body(cancel).await;
        signal.abort();
        result
    })
}
