//! A request's timeout that costs no timer operation per request: a
//! `tokio::time::timeout` around each request registers a timer in the
//! runtime's wheel and removes it again, which showed in the profiles at
//! 100k requests/s. One sleep per connection is armed instead, and moved
//! only when it fires before the request's deadline (once per timeout
//! period while requests go) or when a request's deadline comes before it
//! (a k6 request with a shorter `params.timeout`).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tokio::time::{Instant, Sleep};

/// The sleep one VU's requests share: made by the first request, on the
/// runtime that runs them (a client may be made on another thread's).
#[derive(Default)]
pub(super) struct Watchdog {
    sleep: Option<Pin<Box<Sleep>>>,
}

impl Watchdog {
    /// What `work` gives if it completes within `timeout` from now; none
    /// if it does not (it is then dropped).
    pub(super) async fn limit<F: Future>(&mut self, timeout: Duration, work: F) -> Option<F::Output> {
        let deadline = Instant::now() + timeout;
        let sleep = match &mut self.sleep {
            Some(sleep) => {
                if sleep.deadline() > deadline {
                    sleep.as_mut().reset(deadline);
                }
                sleep
            }
            None => self.sleep.insert(Box::pin(tokio::time::sleep_until(deadline))),
        };
        tokio::pin!(work);
        loop {
            tokio::select! {
                biased;
                r = &mut work => return Some(r),
                _ = sleep.as_mut() => {
                    if Instant::now() >= deadline {
                        return None;
                    }
                    sleep.as_mut().reset(deadline);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request given less time than the one before it still times out
    /// at its own deadline, not at the sleep's older, later one.
    #[tokio::test(start_paused = true)]
    async fn a_shorter_timeout_than_the_last_one_is_kept() {
        let mut w = Watchdog::default();
        assert_eq!(w.limit(Duration::from_secs(60), async {}).await, Some(()));
        let started = Instant::now();
        let r = w.limit(Duration::from_secs(1), std::future::pending::<()>()).await;
        assert_eq!(r, None);
        assert_eq!(started.elapsed(), Duration::from_secs(1));
    }

    /// A sleep armed long ago that fires first is moved to the request's
    /// own deadline: the request is not cut short.
    #[tokio::test(start_paused = true)]
    async fn an_old_sleep_does_not_cut_a_request_short() {
        let mut w = Watchdog::default();
        assert_eq!(w.limit(Duration::from_secs(2), async {}).await, Some(()));
        tokio::time::sleep(Duration::from_secs(1)).await;
        let started = Instant::now();
        let work = tokio::time::sleep(Duration::from_millis(1500));
        assert_eq!(w.limit(Duration::from_secs(2), work).await, Some(()));
        let r = w.limit(Duration::from_secs(2), std::future::pending::<()>()).await;
        assert_eq!(r, None);
        assert_eq!(started.elapsed(), Duration::from_millis(3500));
    }
}
