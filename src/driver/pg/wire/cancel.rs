//! Cancelling what a connection of dbload's own runs: a statement given up
//! at the deadline or at Ctrl-C would otherwise go on running on the
//! server (and hold its locks) to its end. PostgreSQL takes the request on
//! a connection of its own, which names the backend by the key it gave at
//! login (BackendKeyData) and is answered by nothing but its closing.

use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use postgres_protocol::message::frontend;
use tokio::io::AsyncWriteExt;

use super::stream::{self, Endpoint, Tls};
use crate::error::target;

/// What cancels the statement a `Wire` runs: where that
/// connection went, encrypted as it is, and its backend's key. Cheap to
/// clone and `Send`, for a deadline or a signal handler elsewhere.
#[derive(Clone)]
pub struct Cancel {
    to: Endpoint,
    tls: Tls,
    /// The backend's process id and secret key.
    pub(super) key: (i32, i32),
    /// `connect_timeout`: a server that never answers must not hold the
    /// one who cancels.
    timeout: Duration,
    /// The target, for errors (free of secrets).
    url: Arc<str>,
}

impl Cancel {
    pub(super) fn new(to: Endpoint, tls: Tls, timeout: Duration, url: &str) -> Cancel {
        Cancel { to, tls, key: (0, 0), timeout, url: url.into() }
    }

    /// Asks the server to cancel the connection's current statement, within
    /// `connect_timeout`. The server does not say whether it did: the
    /// statement answers SQLSTATE 57014 if it was cancelled, and the request
    /// is a no-op if it had ended already.
    pub async fn cancel(&self) -> anyhow::Result<()> {
        let sending = async {
            let mut opened = stream::open(&self.to, &self.tls, &self.url).await?;
            let mut request = BytesMut::with_capacity(16);
            frontend::cancel_request(self.key.0, self.key.1, &mut request);
            let unsent = |e: std::io::Error| target(format!("cannot cancel on {}: {e}", self.url));
            opened.stream.write_all(&request).await.map_err(unsent)?;
            opened.stream.shutdown().await.map_err(unsent)
        };
        tokio::time::timeout(self.timeout, sending).await.unwrap_or_else(|_| {
            Err(target(format!(
                "cannot cancel on {}: no answer within connect_timeout ({} s)",
                self.url,
                self.timeout.as_secs_f64()
            )))
        })
    }

    /// [`Cancel::cancel`] for a worker at the deadline or at Ctrl-C, which
    /// goes on with its report whatever came of it: a request that cannot
    /// be sent is said on stderr, as the statement may still be running.
    pub async fn cancel_or_say(&self) {
        if let Err(e) = self.cancel().await {
            crate::console::line(format_args!(
                "dbload: could not cancel a statement still running on the server: {e:#}"
            ));
        }
    }
}
