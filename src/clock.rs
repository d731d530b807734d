//! A precise sleep: wakes a task at its moment to within a few µs, where
//! tokio's timer fires on whole milliseconds, rounded up. A leaf, because
//! both the loop (an operation's intended start under `--rate`) and the
//! drivers (a pgbench script's `\sleep`) sleep with it.

use std::time::{Duration, Instant};

/// A wait this short is spent yielding to the runtime rather than asleep:
/// arming a timer and being woken costs about as much, and a thread that
/// sleeps gives its CPU away, which on a busy machine it may not get back
/// in time (at 5,000 operations/s the gaps are this short).
const YIELD_BELOW: Duration = Duration::from_micros(100);

/// Wakes a worker at the intended start of its next operation to within
/// a few µs. tokio's timer fires on whole milliseconds, rounded up (plus
/// the kernel's timer slack): that alone made every paced operation start
/// ~1.4 ms late. A timerfd is a high-resolution kernel timer without slack
/// whose expiry wakes tokio's own event loop, so the worker sleeps (no
/// spinning, no CPU at low rates) and other tasks run meanwhile. Where there
/// is no timerfd (not Linux, or it could not be made), tokio's timer.
#[derive(Default)]
pub struct Clock {
    /// Made at the first sleep (a closed loop never sleeps, and needs no
    /// file descriptor); `None` inside when it could not be made.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    timer: std::cell::OnceCell<Option<tokio::io::unix::AsyncFd<precise::Timer>>>,
}

impl Clock {
    /// Sleeps until `at`; inside the runtime (the timer registers with it).
    pub async fn sleep_until(&mut self, at: Instant) {
        if at.saturating_duration_since(Instant::now()) <= YIELD_BELOW {
            while Instant::now() < at {
                tokio::task::yield_now().await;
            }
            return;
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if let Some(timer) = self.timer.get_or_init(|| precise::Timer::new().and_then(precise::Timer::register).ok()) {
            if precise::sleep_until(timer, at).await.is_ok() {
                return;
            }
        }
        tokio::time::sleep_until(at.into()).await
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
mod precise {
    use std::io;
    use std::os::fd::{AsFd, AsRawFd, RawFd};
    use std::time::Instant;

    use nix::sys::time::TimeSpec;
    use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
    use tokio::io::unix::AsyncFd;

    /// A non-blocking monotonic timerfd, as tokio's `AsyncFd` takes it.
    pub struct Timer(TimerFd);

    impl Timer {
        pub fn new() -> io::Result<Timer> {
            let flags = TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC;
            Ok(Timer(TimerFd::new(ClockId::CLOCK_MONOTONIC, flags)?))
        }

        /// Registers the timer with tokio's event loop (inside the runtime).
        pub fn register(self) -> io::Result<AsyncFd<Timer>> {
            // SAFETY: the timer owns its file descriptor, which stays open
            // until the `AsyncFd` drops it, and `as_raw_fd` always returns it.
            Ok(unsafe { AsyncFd::register(self) }?)
        }
    }

    impl AsRawFd for Timer {
        fn as_raw_fd(&self) -> RawFd {
            self.0.as_fd().as_raw_fd()
        }
    }

    /// Arms the timer for `at` and waits for it to expire. Arming resets
    /// the count of expiries, so one left over by a cancelled sleep reads
    /// as "not yet" and the readiness it left is cleared.
    pub async fn sleep_until(timer: &AsyncFd<Timer>, at: Instant) -> io::Result<()> {
        let wait = at.saturating_duration_since(Instant::now());
        if wait.is_zero() {
            return Ok(()); // a zero expiry would disarm the timer, not fire it
        }
        timer.get_ref().0.set(Expiration::OneShot(TimeSpec::from_duration(wait)), TimerSetTimeFlags::empty())?;
        loop {
            let mut ready = timer.readable().await?;
            let expired = ready.try_io(|t| Ok(nix::unistd::read(t.get_ref().0.as_fd(), &mut [0u8; 8])?));
            if let Ok(done) = expired {
                return done.map(drop);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The clock's own lag: at 1,000 wake-ups per second, the median
    /// wake-up is within 0.1 ms of its moment on a quiet machine; on tokio's
    /// timer alone it is ~0.5 ms (rounded up to the next millisecond tick).
    /// A busy machine only adds lag, so the best median of five rounds is
    /// the clock's own; 0.25 ms is the bound with slack. A timing: ignored
    /// beside the other unit tests, `make test` runs it alone, last.
    #[test]
    #[ignore = "a timing: `make test` runs it alone, after the other tests"]
    fn wake_ups_are_on_time() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let median = || {
            rt.block_on(async {
                let mut clock = Clock::default();
                let t0 = Instant::now();
                let mut lags = Vec::new();
                for i in 1..=200u64 {
                    let at = t0 + Duration::from_millis(i);
                    clock.sleep_until(at).await;
                    lags.push(at.elapsed());
                }
                lags.sort();
                lags[lags.len() / 2]
            })
        };
        let best = (0..5).map(|_| median()).min().unwrap();
        assert!(best <= Duration::from_micros(250), "median wake-up lag {best:?}");
    }
}
