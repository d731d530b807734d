//! What `dbload http` records beside the worker loop's [`Recorder`]: each
//! request's time per phase (k6's definitions), bytes, connections, status
//! codes and `--check` counts. The HTTP executor records into it; the
//! report reads it from the run's outcome.
//!
//! [`Recorder`]: super::Recorder

use hdrhistogram::Histogram;

use super::hist::new_histogram;

/// Pass and fail counts of one `--check`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckCount {
    pub passes: u64,
    pub fails: u64,
}

/// What the request loop itself does not know: the per-phase times of each
/// request (µs histograms), bytes, connections and checks. VUs share one per
/// runtime thread (through the HTTP executor's `Tally`), merged at the end; warm-up
/// requests are left out, like everywhere else.
#[derive(Debug, Clone)]
pub struct HttpStats {
    /// Sending + waiting + receiving: k6's `http_req_duration`.
    pub duration: Histogram<u64>,
    pub connecting: Histogram<u64>,
    pub tls_handshaking: Histogram<u64>,
    pub sending: Histogram<u64>,
    pub waiting: Histogram<u64>,
    pub receiving: Histogram<u64>,
    /// Every connection opened, warm-up and setup included.
    pub connections_opened: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// One per `--check`, in order.
    pub checks: Vec<CheckCount>,
    /// Responses per status code.
    pub statuses: std::collections::BTreeMap<u16, u64>,
}

impl HttpStats {
    pub fn new(checks: usize) -> HttpStats {
        HttpStats {
            duration: new_histogram(),
            connecting: new_histogram(),
            tls_handshaking: new_histogram(),
            sending: new_histogram(),
            waiting: new_histogram(),
            receiving: new_histogram(),
            connections_opened: 0,
            bytes_sent: 0,
            bytes_received: 0,
            checks: vec![CheckCount::default(); checks],
            statuses: Default::default(),
        }
    }

    fn histograms(&mut self) -> [&mut Histogram<u64>; 6] {
        [
            &mut self.duration,
            &mut self.connecting,
            &mut self.tls_handshaking,
            &mut self.sending,
            &mut self.waiting,
            &mut self.receiving,
        ]
    }

    pub fn merge(&mut self, mut o: HttpStats) {
        for (a, b) in self.histograms().into_iter().zip(o.histograms()) {
            a.add(&*b).expect("same bounds");
        }
        self.connections_opened += o.connections_opened;
        self.bytes_sent += o.bytes_sent;
        self.bytes_received += o.bytes_received;
        add_checks(&mut self.checks, &o.checks);
        for (status, n) in o.statuses {
            *self.statuses.entry(status).or_default() += n;
        }
    }
}

/// Adds `from`'s counts to `into`'s, check by check.
pub fn add_checks(into: &mut [CheckCount], from: &[CheckCount]) {
    for (a, b) in into.iter_mut().zip(from) {
        a.passes += b.passes;
        a.fails += b.fails;
    }
}
