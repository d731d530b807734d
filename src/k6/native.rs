//! What a VU's coroutine and the native functions it runs share: what the
//! coroutine hands out when it suspends ([`Out`]) and is resumed with
//! ([`In`]), the state its native functions read ([`State`], with the
//! built-in HTTP metrics found once per VU), and what the worker loop asks
//! of a VU and gets back. Apart from `vu` (the coroutine and its lifecycle)
//! and `http` (k6/http's native side), which both use it, so that neither
//! names the other's insides.

use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use corosensei::Yielder;
use rquickjs::{Object, Value};
use tokio_util::sync::CancellationToken;

use super::shared::{Holder, Opened, SharedArrays};
use crate::driver::http::client::{Answer, Request};
use crate::stats::k6::{Id, Metrics};

/// Renders k6's summary data as k6's text summary, each line after an indent.
pub type TextSummary = fn(&serde_json::Value, &str) -> String;

/// What a script's `handleSummary(data)` returned: each key (`stdout`,
/// `stderr` or a file's path) with its content.
pub type Outputs = Vec<(String, Vec<u8>)>;

/// What the script's init code left: its `options` (as JSON) and which of
/// its lifecycle functions it exports.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub options: Option<String>,
    pub setup: bool,
    pub teardown: bool,
    /// It exports `handleSummary`.
    pub handle_summary: bool,
}

/// What the worker loop asks of a VU.
#[derive(Debug)]
pub enum Call {
    /// One run of `export default function`; `warm`: in the warm-up, out of the metrics.
    Iterate { iteration: u64, warm: bool },
    /// `setup()`: its result, as JSON.
    Setup,
    /// `teardown(data)`.
    Teardown,
    /// `handleSummary(data)`, with k6's summary data as JSON.
    Summary(String),
}

/// What a VU's coroutine hands out when it suspends.
pub(super) enum Out {
    /// `http.*`: the request to make; resumed with [`In::Answer`].
    Request(Box<Request>),
    /// `http.batch`: the requests to make at once; resumed with [`In::Answers`].
    Batch(Vec<Request>),
    /// `sleep()`: resumed with [`In::Woke`] once the time is over.
    Sleep(Duration),
    /// The init code ran: what it left, or why it failed (exit 2).
    Loaded(Result<Loaded>),
    /// A call ended: setup's data as JSON, or the error the script threw.
    Done(Result<Option<String>, String>),
    /// `handleSummary` ended: its outputs, or the error it threw.
    Summarized(Result<Outputs, String>),
}

/// What a VU's coroutine is resumed with.
pub(super) enum In {
    /// The first resume: make the runtime, run the init code.
    Start,
    /// Run a call of the worker loop.
    Call(Call),
    /// The answer to the request it handed out, and that request back.
    Answer(Box<Answer>, Box<Request>),
    /// The answers to the batch it handed out, in order, and its requests back.
    Answers(Vec<Answer>, Vec<Request>),
    /// Its sleep is over.
    Woke,
    /// The run stopped: the request or sleep it waits for throws, and the
    /// coroutine returns instead of taking another call.
    Stopped,
}

/// What the VU's native functions share.
pub(super) struct State {
    pub(super) id: u32,
    /// The coroutine's own yielder, through which a native function
    /// suspends the VU: valid while the coroutine's body runs, which is whenever
    /// JavaScript (and so a native function) runs.
    pub(super) yielder: *const Yielder<In, Out>,
    /// k6's group path: `::outer::inner`, empty outside any group.
    pub(super) group: RefCell<String>,
    /// In the init context: `open()` is allowed, requests are not.
    pub(super) init: Cell<bool>,
    /// The iteration is warm-up: its samples stay out of the metrics.
    pub(super) warm: Cell<bool>,
    /// `options.discardResponseBodies`: a response's body is null unless
    /// its request's `params.responseType` asks for it.
    pub(super) discard: Cell<bool>,
    pub(super) stop: CancellationToken,
    pub(super) metrics: Arc<Mutex<Metrics>>,
    pub(super) http: HttpMetrics,
    pub(super) dir: PathBuf,
    /// The buffers of the request `http.*` hands out, reused: taken while
    /// it is made, given back with its answer.
    pub(super) request: Cell<Option<Box<Request>>>,
    /// `textSummary`'s renderer, in the VU that runs `handleSummary`.
    pub(super) text_summary: Option<TextSummary>,
    /// The run's `SharedArray`s, and those this VU opened.
    pub(super) shared: Arc<SharedArrays>,
    pub(super) opened: Opened,
}

impl Holder for State {
    fn in_init(&self) -> bool {
        self.init.get()
    }

    fn arrays(&self) -> &SharedArrays {
        &self.shared
    }

    fn opened(&self) -> &Opened {
        &self.opened
    }
}

impl State {
    /// A sample's tags: the script's, then the group's.
    pub(super) fn tags(&self, given: Option<&Object<'_>>) -> Vec<(String, String)> {
        let mut tags = given.map(object_strings).unwrap_or_default();
        tags.push(("group".into(), self.group.borrow().clone()));
        tags
    }

    pub(super) fn stopped(&self) -> bool {
        self.stop.is_cancelled()
    }

    /// Suspends the VU with `out`; what it is resumed with.
    pub(super) fn suspend(&self, out: Out) -> In {
        // SAFETY: `yielder` is the running coroutine's (see the field):
        // a native function runs only inside `body`, on the coroutine.
        unsafe { &*self.yielder }.suspend(out)
    }
}

/// A JavaScript object's own properties as strings (tags).
pub(super) fn object_strings(o: &Object<'_>) -> Vec<(String, String)> {
    let mut strings = Vec::new();
    // A property that cannot be read as a string is left out, as before.
    let _ = strings_into(o, &mut strings);
    strings
}

/// A JavaScript object's own properties as strings, into `to` (its
/// strings reused: a request's headers, converted on every request).
pub(super) fn strings_into(o: &Object<'_>, to: &mut Vec<(String, String)>) -> rquickjs::Result<()> {
    let mut n = 0;
    for p in o.props::<Value, Value>() {
        let (k, v) = p?;
        if n == to.len() {
            to.push(Default::default());
        }
        let (name, value) = &mut to[n];
        with_text(&k, |t| t.clone_into(name))?;
        with_text(&v, |t| t.clone_into(value))?;
        n += 1;
    }
    to.truncate(n);
    Ok(())
}

/// Calls `f` with `v` as text: a string's own bytes (no copy made for an
/// ASCII one), anything else as JavaScript's `String(v)`.
pub(super) fn with_text<R>(v: &Value<'_>, f: impl FnOnce(&str) -> R) -> rquickjs::Result<R> {
    let s = match v.as_string() {
        Some(s) => s.clone(),
        None => v.get::<rquickjs::Coerced<rquickjs::String>>()?.0,
    };
    Ok(f(s.to_cstring()?.as_str()))
}

/// The built-in metrics each request or iteration adds a sample to,
/// found once per VU.
pub(super) struct HttpMetrics {
    pub(super) iterations: Id,
    pub(super) iteration_duration: Id,
    pub(super) reqs: Id,
    pub(super) failed: Id,
    pub(super) duration: Id,
    pub(super) blocked: Id,
    pub(super) connecting: Id,
    pub(super) tls_handshaking: Id,
    pub(super) sending: Id,
    pub(super) waiting: Id,
    pub(super) receiving: Id,
}

impl HttpMetrics {
    pub(super) fn new() -> HttpMetrics {
        HttpMetrics {
            iterations: Id::builtin("iterations"),
            iteration_duration: Id::builtin("iteration_duration"),
            reqs: Id::builtin("http_reqs"),
            failed: Id::builtin("http_req_failed"),
            duration: Id::builtin("http_req_duration"),
            blocked: Id::builtin("http_req_blocked"),
            connecting: Id::builtin("http_req_connecting"),
            tls_handshaking: Id::builtin("http_req_tls_handshaking"),
            sending: Id::builtin("http_req_sending"),
            waiting: Id::builtin("http_req_waiting"),
            receiving: Id::builtin("http_req_receiving"),
        }
    }
}
